import { randomBytes } from "node:crypto";
import { mkdir, open, rename, unlink } from "node:fs/promises";
import { dirname } from "node:path";
import { AppError } from "@cass-memory/core";

/** Mode of every file this store writes (reference §4.11). */
export const FILE_MODE = 0o600;

/** `<file>.tmp.<16 hex>` next to the target, as the original names its temp files. */
export function tempPathFor(path: string): string {
  return `${path}.tmp.${randomBytes(8).toString("hex")}`;
}

function writeError(path: string, error: unknown): AppError {
  const errno = (error as { code?: unknown } | null)?.code;
  const reason = error instanceof Error ? error.message : String(error);
  const code = errno === "EACCES" || errno === "EPERM" || errno === "EROFS" ? "FILE_PERMISSION_DENIED" : "FILE_WRITE_FAILED";
  return new AppError(code, `Failed to atomic write to ${path}: ${reason}`, {
    hint: `Check that ${dirname(path)} exists and is writable, and that the disk is not full.`,
    details: { path, ...(typeof errno === "string" ? { errno } : {}) },
    cause: error,
  });
}

/**
 * Writes a file atomically: a temp file `<file>.tmp.<16 hex>` (mode 0600) in the same directory is
 * written, fsync'd and renamed over the target, so readers see the old or the new content, never a
 * mix. Parent directories are created. The temp file is removed when anything fails.
 */
export async function atomicWriteFile(path: string, data: string | Uint8Array): Promise<void> {
  const tmp = tempPathFor(path);
  try {
    await mkdir(dirname(path), { recursive: true });
    const handle = await open(tmp, "wx", FILE_MODE);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, path);
  } catch (error) {
    await unlink(tmp).catch(() => undefined);
    throw writeError(path, error);
  }
}
