import { defineProject } from "vitest/config";

// Tests run a fake OpenAI-compatible HTTP server: allow for a loaded CI machine.
export default defineProject({
  test: { name: "llm", include: ["src/**/*.test.ts", "test/**/*.test.ts"], testTimeout: 60_000 },
});
