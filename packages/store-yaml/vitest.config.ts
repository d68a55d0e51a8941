import { defineProject } from "vitest/config";

export default defineProject({
  test: { name: "store-yaml", include: ["src/**/*.test.ts", "test/**/*.test.ts"] },
});
