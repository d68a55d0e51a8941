import { defineProject } from "vitest/config";

// Tests spawn a fake `cass` executable and scan fixture trees: allow for a loaded CI machine.
export default defineProject({
  test: { name: "cass", include: ["src/**/*.test.ts", "test/**/*.test.ts"], testTimeout: 60_000 },
});
