import { defineProject } from "vitest/config";

// Property tests (thousands of fast-check runs) and multi-process lock tests need more than the
// default 5 s on a loaded 2-core CI machine.
export default defineProject({
  test: { name: "store-yaml", include: ["src/**/*.test.ts", "test/**/*.test.ts"], testTimeout: 60_000 },
});
