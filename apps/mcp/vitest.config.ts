import { defineProject } from "vitest/config";

// Tests spawn the built `cm-mcp` (stdio) and start HTTP servers on 127.0.0.1.
export default defineProject({
  test: { name: "mcp", include: ["src/**/*.test.ts", "test/**/*.test.ts"], testTimeout: 60_000 },
});
