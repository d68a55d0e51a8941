import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { contextOperation, lexicalFingerprint, runOperation } from "@cass-memory/core";
import { createMemoryLogger } from "@cass-memory/core/testing";
import { INDEX_FILES, createLexicalCache, lexicalCachePath, lexicalIndexPath } from "../src/lexical-cache.js";
import { createRuntime } from "../src/runtime.js";
import { tempDir, writeFile } from "./helpers.js";

let root: string;
let cleanup: () => void;
beforeEach(() => {
  const t = tempDir("cm-lexical-cache-");
  root = t.path;
  cleanup = t.cleanup;
});
afterEach(() => cleanup());

describe("lexical cache files", () => {
  it("reads nothing (and creates nothing) before a write; reads a value back under its fingerprint only", async () => {
    const globalDir = join(root, "g");
    const logger = createMemoryLogger();
    const cache = createLexicalCache({ globalDir, logger, salt: "1.2.3" });
    expect(await cache.read("documents", "fp-1")).toBeNull();
    expect(existsSync(join(globalDir, ".cache"))).toBe(false);

    await cache.write("documents", "fp-1", ["k", "a||||"]);
    expect(await cache.read("documents", "fp-1")).toEqual(["k", "a||||"]);
    expect(await cache.read("documents", "fp-2")).toBeNull();
    // Another program version never reads it.
    expect(await createLexicalCache({ globalDir, logger, salt: "1.2.4" }).read("documents", "fp-1")).toBeNull();
    const file = JSON.parse(readFileSync(lexicalCachePath(globalDir, "documents"), "utf8"));
    expect(file).toEqual({ fingerprint: "fp-1@1.2.3", value: ["k", "a||||"] });
  });

  it("digests texts as SHA-256 hex, short ones in JavaScript and long ones natively, the same digest", () => {
    const cache = createLexicalCache({ globalDir: join(root, "g"), logger: createMemoryLogger() });
    for (const text of ["", "a", "\u0003sha:abc\u00041\u00049\n", "é😀 ünïcode", "x".repeat(4096), "y".repeat(4097), "z😀".repeat(3000)]) {
      expect(cache.digest?.(text)).toBe(createHash("sha256").update(text, "utf8").digest("hex"));
    }
  });

  it("keeps the index's bytes under their fingerprint, starting at a multiple of 8 in the file", async () => {
    const globalDir = join(root, "g");
    const logger = createMemoryLogger();
    const cache = createLexicalCache({ globalDir, logger, salt: "1.2.3" });
    expect(await cache.readIndex!("fp-1")).toBeNull();
    const bytes = Uint8Array.from({ length: 100 }, (_, i) => (i * 7) & 255);
    await cache.writeIndex!("fp-1", bytes);
    const back = await cache.readIndex!("fp-1");
    expect(back === null ? null : [...back]).toEqual([...bytes]);
    expect(back!.byteOffset % 8).toBe(0);
    expect(await cache.readIndex!("fp-2")).toBeNull();
    expect(await createLexicalCache({ globalDir, logger, salt: "1.2.4" }).readIndex!("fp-1")).toBeNull();
    const file = readFileSync(lexicalIndexPath(globalDir, "fp-1@1.2.3"));
    expect(file.subarray(0, file.length - bytes.length).toString("utf8").trimEnd()).toBe("fp-1@1.2.3");
    expect((file.length - bytes.length) % 8).toBe(0);
    // A fingerprint that is a prefix of the saved one is another fingerprint.
    expect(await createLexicalCache({ globalDir, logger, salt: "1.2" }).readIndex!("fp-1")).toBeNull();
  });

  it("keeps the indexes of the few rule sets used most recently, and removes retired files", async () => {
    const globalDir = join(root, "g");
    const cache = createLexicalCache({ globalDir, logger: createMemoryLogger() });
    const indexFiles = () => readdirSync(join(globalDir, ".cache")).filter((n) => n.startsWith("lexical-index-")).length;
    const write = async (i: number) => {
      await cache.writeIndex!(`set-${i}`, Uint8Array.of(i));
      // Older and older files (modification times a minute apart), as separate calls would leave them.
      const then = new Date(Date.now() - (10 - i) * 60_000);
      utimesSync(lexicalIndexPath(globalDir, `set-${i}`), then, then);
    };
    // An earlier version's concept plan, no longer read: removed with the first index saved.
    const retired = join(globalDir, ".cache", "lexical-concepts.json");
    await cache.write("documents", "fp", []);
    writeFileSync(retired, "{}");
    for (let i = 0; i < INDEX_FILES; i++) await write(i);
    expect(existsSync(retired)).toBe(false);
    expect(indexFiles()).toBe(INDEX_FILES);
    // Reading the oldest marks it as used: the next write removes the second oldest instead.
    expect([...((await cache.readIndex!("set-0")) ?? [])]).toEqual([0]);
    await write(INDEX_FILES);
    expect(indexFiles()).toBe(INDEX_FILES);
    expect(await cache.readIndex!("set-1")).toBeNull();
    for (const i of [0, 2, INDEX_FILES]) expect([...((await cache.readIndex!(`set-${i}`)) ?? [])]).toEqual([i]);
  });

  it("a damaged file reads as empty and the next write replaces it", async () => {
    const globalDir = join(root, "g");
    const logger = createMemoryLogger();
    const cache = createLexicalCache({ globalDir, logger });
    writeFile(lexicalCachePath(globalDir, "documents"), '{"fingerprint": "fp", "value": [');
    expect(await cache.read("documents", "fp")).toBeNull();
    expect(logger.lines.some((e) => e.level === "debug" && e.message.includes("Ignoring"))).toBe(true);
    await cache.write("documents", "fp", ["k", "|||||"]);
    expect(await cache.read("documents", "fp")).toEqual(["k", "|||||"]);
  });

  it("a write that cannot happen resolves and is only logged", async () => {
    const blocker = join(root, "not-a-dir");
    writeFileSync(blocker, "x");
    const logger = createMemoryLogger();
    const cache = createLexicalCache({ globalDir: blocker, logger });
    await expect(cache.write("documents", "fp", ["k", "|||||"])).resolves.toBeUndefined();
    expect(logger.lines.some((e) => e.level === "debug" && e.message.includes("Could not save"))).toBe(true);
    expect(await cache.read("documents", "fp")).toBeNull();
  });
});

describe("the runtime's lexical cache", () => {
  const playbook = (rules: string[]) =>
    [
      'schema_version: 2',
      'name: playbook',
      'description: test',
      'metadata:',
      '  createdAt: "2026-01-01T00:00:00.000Z"',
      '  totalReflections: 0',
      '  totalSessionsProcessed: 0',
      'deprecatedPatterns: []',
      'bullets:',
      ...rules.flatMap((content, i) => [
        `  - id: b-${i}`,
        '    category: general',
        `    content: ${JSON.stringify(content)}`,
        '    createdAt: "2026-01-01T00:00:00.000Z"',
        '    updatedAt: "2026-01-01T00:00:00.000Z"',
      ]),
    ].join("\n") + "\n";

  it("context saves the concept map and the analysed rules under the global directory; lexicalCache: false saves nothing", async () => {
    const rules = ["Runtime cache test: rotate the signing secret with a grace period.", "Runtime cache test: pin actions to a commit SHA."];
    for (const enabled of [true, false]) {
      const home = join(root, enabled ? "on" : "off");
      const globalDir = join(home, ".cass-memory");
      writeFile(join(globalDir, "playbook.yaml"), playbook(rules.map((r) => `${r} (${enabled})`)));
      const runtime = await createRuntime({ env: { HOME: home, CASS_MEMORY_LLM: "none" }, cwd: home, version: "9.9.9", lexicalCache: enabled });
      try {
        expect(runtime.deps.lexicalCache !== undefined).toBe(enabled);
        const result = await runOperation(contextOperation, runtime.deps, { task: "users logged out after the signing secret changed", noHistory: true });
        expect(result.relevantBullets.map((b) => b.id)).toContain("b-0");
      } finally {
        runtime.close();
      }
      const documents = lexicalCachePath(globalDir, "documents");
      expect(existsSync(documents)).toBe(enabled);
      if (enabled) {
        const saved = JSON.parse(readFileSync(documents, "utf8"));
        expect(saved.fingerprint).toBe(`${lexicalFingerprint()}@9.9.9`);
        expect(saved.value).toHaveLength(2 * rules.length);
        expect(readdirSync(join(globalDir, ".cache")).filter((n) => n.startsWith("lexical-index-"))).toHaveLength(1);
      } else {
        expect(existsSync(join(globalDir, ".cache"))).toBe(false);
      }
    }
  });
});
