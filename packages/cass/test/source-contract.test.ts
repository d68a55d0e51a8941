// Both episodic sources against one contract (./source-contract.ts) over the same corpus: the
// native source in process, and the cass CLI adapter driving ./fake-cass/corpus-cass.mjs, a fake
// `cass` that answers from that corpus through the BUILT native source (run `pnpm build` first).
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { createCassCliSource } from "../src/cass-cli/source.js";
import { createSessionReaders, discoverSessions } from "../src/native/discovery.js";
import { createNativeSource } from "../src/native/native-source.js";
import { ALL_DAYS, buildCorpus, runSourceContract } from "./source-contract.js";

const CORPUS_CASS = fileURLToPath(new URL("./fake-cass/corpus-cass.mjs", import.meta.url));
const DIST = fileURLToPath(new URL("../dist/index.js", import.meta.url));

if (!existsSync(DIST)) {
  throw new Error(`${DIST} is missing: the cass adapter's contract run drives the built package. Run \`pnpm build\` (or \`pnpm --filter @cass-memory/cass build\`) first.`);
}

runSourceContract("native", async ({ home, env }) =>
  createNativeSource({
    readers: createSessionReaders(),
    discover: discoverSessions,
    discoveryEnv: { home, env, platform: process.platform },
    indexDir: path.join(home, ".cache", "native-contract-index"),
  }),
);

runSourceContract("cass CLI adapter over corpus-cass", async ({ env }) => {
  chmodSync(CORPUS_CASS, 0o755);
  return createCassCliSource({
    cassPath: CORPUS_CASS,
    env: { ...process.env, ...env },
    fallbackPaths: [],
  });
});

// The fake's own argv handling, which the adapter's mapping hides (it trims hits to the limit itself).
describe("corpus-cass answers cass's argv", () => {
  let corpus: Awaited<ReturnType<typeof buildCorpus>>;
  beforeAll(async () => {
    chmodSync(CORPUS_CASS, 0o755);
    corpus = await buildCorpus();
  });
  afterAll(async () => {
    await rm(corpus.home, { recursive: true, force: true });
  });

  const cass = (...args: string[]) => {
    const run = spawnSync(CORPUS_CASS, args, { env: { ...process.env, ...corpus.env }, encoding: "utf8" });
    return { code: run.status, stdout: run.stdout, stderr: run.stderr, json: () => JSON.parse(run.stdout) as Record<string, unknown> };
  };

  it("honours --limit, --agent and the query after --", () => {
    const base = ["search", "--robot", "--days", String(ALL_DAYS)];
    const all = cass(...base, "--limit", "0", "--color=never", "--", "matrix completion").json();
    expect((all.hits as unknown[]).length).toBeGreaterThan(2);
    const one = cass(...base, "--limit", "1", "--color=never", "--", "matrix completion");
    expect(one.code).toBe(0);
    expect(one.json()).toMatchObject({ query: "matrix completion", limit: 1, count: 1 });
    const codex = cass(...base, "--limit", "0", "--agent", "codex", "--", "matrix").json();
    expect((codex.hits as Array<{ agent: string }>).every((h) => h.agent === "codex")).toBe(true);
    // A query that looks like a flag stays a query after `--`.
    expect(cass("search", "--robot", "--limit", "3", "--", "--limit").code).toBe(0);
  });

  it("rejects argv cass would reject", () => {
    const unknown = cass("search", "--robot", "--bogus", "--", "matrix");
    expect(unknown.code).toBe(2);
    expect(JSON.parse(unknown.stderr)).toMatchObject({ status: "error", kind: "argument_parsing" });
    expect(cass("frobnicate", "--json").code).toBe(2);
    const missing = cass("expand", "-n", "1", "--json", "--", path.join(corpus.home, "missing.jsonl"));
    expect(missing.code).toBe(3);
    expect(JSON.parse(missing.stderr)).toMatchObject({ error: { kind: "file-not-found" } });
  });
});
