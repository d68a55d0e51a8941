import { AppError } from "@cass-memory/core";
import type { Db } from "./database.js";

/** Small row helpers shared by the store and its transfer (same transaction as the caller). */

export function notInRepo(): AppError {
  return new AppError("CONFIG_INVALID", "Not in a git repository. Run from within a git repo.", {
    hint: "cd into a git repository first",
  });
}

/** Records that the layer holds the content of one of the original's files (what layerStatus reports). */
export function markFile(db: Db, name: string, nowIso: string): void {
  db.prepare("INSERT OR IGNORE INTO layer_files (name, created_at) VALUES (?, ?)").run(name, nowIso);
}

export function getDocument(db: Db, name: string): string | null {
  return (db.prepare("SELECT text FROM documents WHERE name = ?").pluck().get(name) as string | undefined) ?? null;
}

export function putDocument(db: Db, name: string, text: string, nowIso: string): void {
  db.prepare("INSERT INTO documents (name, text, updated_at) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET text = excluded.text, updated_at = excluded.updated_at").run(
    name,
    text,
    nowIso,
  );
}

/** The rows of a one-column query joined with newlines (a log's text). */
export function linesOf(db: Db, sql: string, ...params: unknown[]): string {
  return (db.prepare(sql).pluck().all(...params) as string[]).join("\n");
}
