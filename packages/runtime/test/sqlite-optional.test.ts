import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { exitCodeOf, isAppError, type AppError } from "@cass-memory/core";
import { createMemoryLogger } from "@cass-memory/core/testing";
import { openStore, type LoadSqliteModule, type StoreDirs } from "../src/storage/backend.js";
import { tempDir } from "./helpers.js";

// better-sqlite3 is optional: a missing package or a missing/broken native binding is a
// configuration error (exit 3) that says how to install or rebuild it, never a raw loader message.

const temps: Array<{ cleanup: () => void }> = [];
afterEach(() => {
  for (const t of temps.splice(0)) t.cleanup();
});

function dirs(): StoreDirs {
  const temp = tempDir();
  temps.push(temp);
  const root = temp.path;
  return { globalDir: root, repoDir: null, playbookPath: join(root, "playbook.yaml"), diaryDir: join(root, "diary"), sqlitePath: join(root, "cass-memory.sqlite") };
}

async function openWith(loadSqlite: LoadSqliteModule): Promise<AppError> {
  const error = await openStore("sqlite", dirs(), { logger: createMemoryLogger(), loadSqlite }).then(
    () => null,
    (e: unknown) => e,
  );
  if (!isAppError(error)) throw new Error(`expected an AppError, got ${String(error)}`);
  return error;
}

describe("SQLite backend without better-sqlite3", () => {
  it("a missing package: CONFIG_INVALID (exit 3), with the npm command that installs it", async () => {
    const error = await openWith(async () => {
      throw Object.assign(new Error("Cannot find module 'better-sqlite3'\nRequire stack:\n- /usr/lib/node_modules/cass-memory/dist/cm-main.cjs"), { code: "MODULE_NOT_FOUND" });
    });
    expect(error.code).toBe("CONFIG_INVALID");
    expect(exitCodeOf(error.code)).toBe(3);
    expect(error.message).toContain("needs better-sqlite3, which is not installed");
    expect(error.hint).toContain("npm install -g better-sqlite3");
    expect(error.hint).toContain("CASS_MEMORY_STORAGE=yaml");
    expect(error.message).not.toContain("Require stack");
  });

  it("a missing native binding: CONFIG_INVALID (exit 3), with how to rebuild it, found before the store is used", async () => {
    let created = false;
    const error = await openWith(async () => ({
      DATABASE_FILE: "cass-memory.sqlite",
      SCHEMA_VERSION: 1,
      createSqliteStore: (() => {
        created = true;
        throw new Error("not reached");
      }) as never,
      probeNativeModule: () => {
        throw new Error("Could not locate the bindings file. Tried:\n → /x/build/better_sqlite3.node\n → /x/build/Release/better_sqlite3.node");
      },
    }));
    expect(created).toBe(false);
    expect(error.code).toBe("CONFIG_INVALID");
    expect(exitCodeOf(error.code)).toBe(3);
    expect(error.message).toContain("could not load better-sqlite3's native binding");
    expect(error.message).not.toContain("/x/build");
    expect(error.hint).toContain("npm rebuild better-sqlite3");
    expect(error.hint).not.toMatch(/file a bug|report/i);
  });

  it("with the real store-sqlite installed, the probe passes and the store opens", async () => {
    const opened = await openStore("sqlite", dirs(), { logger: createMemoryLogger() });
    try {
      expect(opened.backend).toBe("sqlite");
      expect(await opened.store.readPlaybook("global")).toBeNull();
    } finally {
      opened.close();
    }
  });
});
