import Database from "better-sqlite3";

/**
 * Loads better-sqlite3's native binding now (it is otherwise loaded by the first connection), by
 * opening and closing an in-memory database. Throws what better-sqlite3 throws when the binding is
 * missing or was built for another Node version, so that the caller can explain how to fix it
 * before any store is used.
 */
export function probeNativeModule(): void {
  new Database(":memory:").close();
}
