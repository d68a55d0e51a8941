import { fileURLToPath } from "node:url";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMemoryLogger, type MemoryLogger } from "@cass-memory/core/testing";
import { afterEach, beforeEach } from "vitest";

export type TestLogger = MemoryLogger;

/** A logger that keeps its lines, for assertions. */
export const testLogger = (): TestLogger => createMemoryLogger();

export async function tempDir(prefix = "cm-store-yaml-"): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Paths of a test's own home (see useTempHome). */
export interface TempHome {
  /** The temporary directory holding everything. */
  dir: string;
  /** `<dir>/.cass-memory`, created before each test. */
  globalDir: string;
  cacheDir: string;
  playbookPath: string;
}

/** A fresh home for every test of the file (`.cass-memory` created), removed after it. */
export function useTempHome(prefix: string): Readonly<TempHome> {
  const home: TempHome = { dir: "", globalDir: "", cacheDir: "", playbookPath: "" };
  let cleanup: () => Promise<void> = async () => undefined;
  beforeEach(async () => {
    ({ dir: home.dir, cleanup } = await tempDir(prefix));
    home.globalDir = join(home.dir, ".cass-memory");
    home.cacheDir = join(home.globalDir, ".cache");
    home.playbookPath = join(home.globalDir, "playbook.yaml");
    await mkdir(home.globalDir, { recursive: true });
  });
  afterEach(async () => {
    await cleanup();
  });
  return home;
}

/** A real `~/.cass-memory` and repo `.cass/` written by the original cm (see fixtures/original-home/README.md). */
export const FIXTURE_HOME = fileURLToPath(new URL("../../../fixtures/original-home", import.meta.url));
