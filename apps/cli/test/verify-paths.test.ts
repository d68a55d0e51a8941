import { existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { assertBuilt, cm, tempHome } from "./helpers.js";

/** `--verify-file` / `--verify-regex` cannot be used to learn about files outside the workspace. */

let home: string;
let cleanup: () => void;
let ws: string;
beforeAll(assertBuilt);
beforeEach(() => {
  ({ home, cleanup } = tempHome());
  ws = join(home, "ws");
  mkdirSync(ws, { recursive: true });
  writeFileSync(join(home, "private.txt"), "password=hunter2\n");
});
afterEach(() => cleanup());

describe("verification paths on the command line", () => {
  it("refuses absolute and climbing paths with exit 2, writing nothing", () => {
    for (const args of [["--verify-file", "/etc/passwd"], ["--verify-regex", "../private.txt:hunter"], ["--verify-file", "src/../../private.txt", "--verify-absent"]]) {
      const r = cm(["remember", "Probe rule for the private file", ...args, "--json"], { home, cwd: ws });
      expect(r.code, args.join(" ")).toBe(2);
      const error = r.json().error;
      expect(error.code).toBe("INVALID_INPUT");
      expect(error.message).toContain("inside the workspace only");
      expect(error.hint).toContain("relative to the workspace root");
    }
    expect(existsSync(join(home, ".cass-memory", "playbook.yaml"))).toBe(false);
  });

  it("a link inside the workspace that leads outside gives the same answer whatever the target holds", () => {
    symlinkSync(join(home, "private.txt"), join(ws, "notes.txt"));
    const add = (pattern: string) => {
      const r = cm(["remember", `Probe rule ${pattern} notes file`, "--verify-regex", `notes.txt:${pattern}`, "--json"], { home, cwd: ws });
      expect(r.code).toBe(0);
      return r.json().data.bullet.id as string;
    };
    const right = add("hunter2");
    const wrong = add("swordfish");
    const ctx = cm(["context", "probe rule notes file", "--json", "--no-history"], { home, cwd: ws }).json().data;
    const stale = (id: string) => ctx.relevantBullets.find((b: { id: string }) => b.id === id)?.stale?.reason;
    expect(stale(right)).toBeDefined();
    expect(stale(right)).toBe(stale(wrong)?.replace("swordfish", "hunter2"));
  });
});
