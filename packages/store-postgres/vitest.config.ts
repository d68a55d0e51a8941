import { defineProject } from "vitest/config";

// One real PostgreSQL server per run (test/global-setup.ts); multi-process cases need generous
// timeouts on a loaded 2-core CI machine.
export default defineProject({
  test: {
    name: "store-postgres",
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
