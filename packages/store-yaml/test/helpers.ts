import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Logger } from "@cass-memory/core";

export interface TestLogger extends Logger {
  readonly lines: Array<{ level: string; message: string }>;
}

export function testLogger(): TestLogger {
  const lines: Array<{ level: string; message: string }> = [];
  return {
    lines,
    debug: (message) => void lines.push({ level: "debug", message }),
    info: (message) => void lines.push({ level: "info", message }),
    warn: (message) => void lines.push({ level: "warn", message }),
    error: (message) => void lines.push({ level: "error", message }),
  };
}

export async function tempDir(prefix = "cm-store-yaml-"): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export const FIXTURE_HOME = "/work/shared/fixtures/original-home";
