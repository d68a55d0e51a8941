import { defineProject } from "vitest/config";

export default defineProject({
  test: { name: "store-contract", include: ["src/**/*.test.ts", "test/**/*.test.ts"] },
});
