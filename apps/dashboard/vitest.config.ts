import { defineProject } from "vitest/config";

// Server tests start real HTTP servers on 127.0.0.1 over a real store in a temp home.
// Browser tests (test/browser) drive Chromium through playwright-core.
export default defineProject({
  test: { name: "dashboard", include: ["test/**/*.test.ts"], testTimeout: 120_000, hookTimeout: 120_000 },
});
