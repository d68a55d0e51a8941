import { defineProject } from "vitest/config";

// Multi-process contract cases (several writers on one database) need more than the default 5 s
// on a loaded 2-core CI machine.
export default defineProject({
  test: { name: "store-sqlite", include: ["src/**/*.test.ts", "test/**/*.test.ts"], testTimeout: 60_000 },
});
