import { chmod, copyFile, mkdir, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { Layer, StorageBackend } from "@cass-memory/core";
import type { StoreDirs } from "./backend.js";
import { layerFiles } from "./layout.js";

/**
 * Copies every data file of the store (both layers) to `<layer dir>/backups/<reason>-<timestamp>/`
 * (mode 0600, directories 0700) before a rewrite such as `cm doctor --fix` redacting stored
 * secrets. A SQLite database is copied with its `-wal` file. Returns the paths of the copies.
 */
export async function backupStoreFiles(backend: StorageBackend, dirs: StoreDirs, reason: string, now: Date): Promise<string[]> {
  const stamp = now.toISOString().replace(/[:.]/g, "-");
  const copies: string[] = [];
  for (const layer of ["global", "repo"] as Layer[]) {
    const base = layer === "global" ? dirs.globalDir : dirs.repoDir;
    if (base === null) continue;
    const files = await layerFiles(backend, dirs, layer);
    if (files.length === 0) continue;
    let target = join(base, "backups", `${reason}-${stamp}`);
    for (let n = 2; await exists(target); n++) target = join(base, "backups", `${reason}-${stamp}-${n}`);
    for (const file of files) {
      const to = join(target, file.name);
      await mkdir(dirname(to), { recursive: true, mode: 0o700 });
      await copyFile(file.path, to);
      await chmod(to, 0o600);
      copies.push(to);
    }
  }
  return copies;
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
