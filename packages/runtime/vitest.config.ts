import { defineProject } from "vitest/config";

export default defineProject({
  test: { name: "runtime", include: ["src/**/*.test.ts", "test/**/*.test.ts"] },
});
