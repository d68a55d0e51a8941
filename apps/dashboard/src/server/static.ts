import { readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { extname, join, relative, sep } from "node:path";

/**
 * The built page's files, indexed once: only names found by walking the ui directory are ever
 * served, so no request path (`..`, encoded slashes, symlinks out of the directory, absolute
 * paths) can reach another file.
 */

export const CONTENT_TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8",
};

/** Files larger than this are not served (the built page is far smaller). */
const MAX_FILE_BYTES = 16 * 1024 * 1024;
/** At most this many files are indexed. */
const MAX_FILES = 2000;

export interface StaticFile {
  /** Absolute path of the file (inside the ui directory). */
  path: string;
  contentType: string;
  size: number;
}

/** `relative/name` (forward slashes) → file, for every regular file with a known type under `uiDir`. */
export function indexUiDir(uiDir: string): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  let root: string;
  try {
    root = realpathSync(uiDir);
  } catch {
    return files;
  }
  const walk = (dir: string, depth: number): void => {
    if (depth > 8 || files.size >= MAX_FILES) return;
    let entries: import("node:fs").Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) {
        walk(full, depth + 1);
        continue;
      }
      // Symbolic links and other special files are never served.
      if (!entry.isFile()) continue;
      const type = CONTENT_TYPES[extname(entry.name).toLowerCase()];
      if (type === undefined) continue;
      const size = statSync(full).size;
      if (size > MAX_FILE_BYTES) continue;
      const name = relative(root, full).split(sep).join("/");
      files.set(name, { path: full, contentType: type, size });
      if (files.size >= MAX_FILES) return;
    }
  };
  walk(root, 0);
  return files;
}

export function readStaticFile(file: StaticFile): Buffer {
  return readFileSync(file.path);
}
