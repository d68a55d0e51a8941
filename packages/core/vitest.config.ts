import { defineProject } from "vitest/config";

// fast-check property tests need more than the default 5 s on a loaded 2-core CI machine.
export default defineProject({
  test: { name: "core", include: ["src/**/*.test.ts", "test/**/*.test.ts"], testTimeout: 30_000 },
});
