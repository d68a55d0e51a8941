import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createNodeWorkspaceFiles } from "../src/node-ports.js";

/** The host's WorkspaceFiles read inside the workspace only, whatever path a rule names. */

let root: string;
let workspace: string;
beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "cm-ws-")));
  workspace = join(root, "ws");
  mkdirSync(join(workspace, "src"), { recursive: true });
  writeFileSync(join(workspace, "src", "a.ts"), "export const a = 1;\n");
  writeFileSync(join(root, "secret.env"), "API_TOKEN=hunter2\n");
  symlinkSync(join(root, "secret.env"), join(workspace, "leak.env"));
  symlinkSync(root, join(workspace, "up"));
  symlinkSync(join(workspace, "src", "a.ts"), join(workspace, "inner-link.ts"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe("createNodeWorkspaceFiles", () => {
  const files = createNodeWorkspaceFiles();

  it("reads files and directories inside the workspace, through links that stay inside", async () => {
    expect(await files.exists(workspace, "src/a.ts")).toBe(true);
    expect(await files.exists(workspace, "src")).toBe(true);
    expect(await files.exists(workspace, "src/missing.ts")).toBe(false);
    expect(await files.readText(workspace, "inner-link.ts", 1024)).toBe("export const a = 1;\n");
    expect(await files.readText(workspace, "src/a.ts", 6)).toBe("export");
  });

  it("treats absolute paths, .. and links leading outside as missing", async () => {
    for (const path of [join(root, "secret.env"), "../secret.env", "src/../../secret.env", "leak.env", "up/secret.env"]) {
      expect(await files.exists(workspace, path), path).toBe(false);
      expect(await files.readText(workspace, path, 1024), path).toBeNull();
    }
  });
});
