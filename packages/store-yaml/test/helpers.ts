import { fileURLToPath } from "node:url";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMemoryLogger, type MemoryLogger } from "@cass-memory/core/testing";

export type TestLogger = MemoryLogger;

/** A logger that keeps its lines, for assertions. */
export const testLogger = (): TestLogger => createMemoryLogger();

export async function tempDir(prefix = "cm-store-yaml-"): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** A real `~/.cass-memory` and repo `.cass/` written by the original cm (see fixtures/original-home/README.md). */
export const FIXTURE_HOME = fileURLToPath(new URL("../../../fixtures/original-home", import.meta.url));
