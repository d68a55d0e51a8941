// A writer process for the durability tests (concurrency.test.ts, crash.test.ts).
//
// It builds one store (YAML or SQLite) over a global directory exactly as the runtime does, and runs
// a seeded stream of real operations through `runOperation` (mark helpful/harmful, playbook add —
// single and batch — and forget). Every mutation is announced on stdout as a JSON line before it
// starts ({"type":"start",…}) and after it resolved ({"type":"done",…}); the lines are written with
// writeSync, so a line the parent has read was on the pipe before the next step began.
//
// Usage: node worker.mjs '<json spec>' — see `Spec` below. With `waitForGo`, the worker builds its
// store, prints {"type":"ready"} and waits for a line on stdin before the first mutation, so that
// the parent can start all workers together.
import { randomBytes, randomInt } from "node:crypto";
import { writeSync } from "node:fs";
import { access, open } from "node:fs/promises";
import { isAbsolute, resolve as resolvePath } from "node:path";
import {
  createNullEpisodicSource,
  defaultConfig,
  forgetOperation,
  markOperation,
  playbookAddOperation,
  runOperation,
} from "@cass-memory/core";
import { createYamlStore, fromYaml } from "@cass-memory/store-yaml";
import { createSqliteStore } from "@cass-memory/store-sqlite";
import { prng } from "./prng.mjs";

/**
 * @typedef {object} Spec
 * @property {"yaml"|"sqlite"} backend
 * @property {string} dir            the global directory (`~/.cass-memory`)
 * @property {number} worker         this worker's number (part of every tag)
 * @property {number} count          mutations to run (the crash test gives a large number and kills)
 * @property {number} seed           PRNG seed of the mutation stream
 * @property {string[]} targets      ids of existing bullets that marks may hit (shared by all workers)
 * @property {boolean} [waitForGo]   print "ready" and wait for a stdin line before starting
 * @property {{mark:number, add:number, batch:number, forget:number}} [mix]  relative weights
 * @property {number} [batchSize]    bullets per batch add (default 20)
 * @property {number} [lockTimeoutMs] lock waits (default 120 s: eight writers queue on one file)
 * @property {number} [staleMs]      age after which a lock directory of no live process is taken over
 * @property {string} [tagPrefix]    prefix of the tags (default "w<worker>"), unique per run
 * @property {string[]} [forgettable] ids of existing bullets this worker may forget (besides its own)
 */

/** @type {Spec} */
const spec = JSON.parse(process.argv[2] ?? "{}");
const prefix = spec.tagPrefix ?? `w${spec.worker}`;

const random = prng(spec.seed);
const pick = (items) => items[Math.floor(random() * items.length)];

const RULES = [
  "Run the failing test alone before changing code",
  "Check JWT expiry and clock skew before debugging 401 responses",
  "Batch database writes inside one transaction",
  "Validate redirect URLs against an allowlist",
  "Use parameterised queries for every SQL statement",
  "Keep generated files out of commits",
  "Narrow unknown errors with instanceof before reading the message",
  "Include every referenced value in useEffect dependency arrays",
  "Pin dependencies with a lock file and review lock file diffs",
  "Measure with a benchmark before optimising a hot path",
];
const PLACES = ["in the auth service", "for the billing API", "in the CLI entry point", "for database migrations", "when running in CI"];
const CATEGORIES = ["testing", "debugging", "performance", "security", "git", "react"];

/** A realistic rule text carrying a unique token (letters then digits: one FTS token, no stemming). */
const ruleText = (token) => `${pick(RULES)} ${pick(PLACES)} (${token})`;

function emit(record) {
  writeSync(1, `${JSON.stringify(record)}\n`);
}

// The small ports as the runtime's node-ports.ts builds them (not imported from the runtime's
// bundle, which would load every adapter into each writer): system clock, the original's bullet
// ids (`b-<ms base36>-<6 random base36>`), diagnostics on stderr.
const BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz";
const systemClock = { now: () => new Date() };
const ids = {
  bulletId() {
    let suffix = "";
    for (let i = 0; i < 6; i++) suffix += BASE36[randomInt(36)];
    return `b-${Date.now().toString(36)}-${suffix}`;
  },
  hex(count) {
    if (!Number.isInteger(count) || count <= 0) return "";
    return randomBytes(Math.ceil(count / 2)).toString("hex").slice(0, count);
  },
};
const logger = {
  debug() {},
  info: (message) => void process.stderr.write(`[cm] ${message}\n`),
  warn: (message) => void process.stderr.write(`[cm] WARNING: ${message}\n`),
  error: (message) => void process.stderr.write(`[cm] ERROR: ${message}\n`),
};
const lockTimeoutMs = spec.lockTimeoutMs ?? 120_000;
const lock = { timeoutMs: lockTimeoutMs, ...(spec.staleMs !== undefined ? { staleMs: spec.staleMs } : {}) };
const store =
  spec.backend === "sqlite"
    ? createSqliteStore({ globalDir: spec.dir, repoDir: null, logger, parseYaml: fromYaml, lock, busyTimeoutMs: lockTimeoutMs })
    : createYamlStore({ globalDir: spec.dir, repoDir: null, logger, lock });

/** Read-only workspace access (the operations used here never verify files, but the port is real). */
const files = {
  async exists(base, path) {
    try {
      await access(isAbsolute(path) ? path : resolvePath(base, path));
      return true;
    } catch {
      return false;
    }
  },
  async readText(base, path, maxBytes) {
    let handle;
    try {
      handle = await open(isAbsolute(path) ? path : resolvePath(base, path), "r");
      const buffer = Buffer.alloc(Math.max(0, maxBytes));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
      return buffer.subarray(0, bytesRead).toString("utf8");
    } catch {
      return null;
    } finally {
      await handle?.close();
    }
  },
};

const deps = {
  store,
  episodic: createNullEpisodicSource(null),
  clock: systemClock,
  ids,
  logger,
  config: defaultConfig(),
  cliName: "cm",
  files,
  actor: `durability-${prefix}`,
};

const mix = spec.mix ?? { mark: 5, add: 3, batch: 0, forget: 2 };
const batchSize = spec.batchSize ?? 20;
const targets = [...spec.targets];
/** Bullets this worker added and has not forgotten (forget targets). */
const mine = [...(spec.forgettable ?? [])];

function chooseKind() {
  const weights = [
    ["mark", targets.length > 0 ? mix.mark : 0],
    ["add", mix.add],
    ["batch", mix.batch],
    ["forget", mine.length > 0 ? mix.forget : 0],
  ];
  const total = weights.reduce((sum, [, w]) => sum + w, 0);
  let roll = random() * total;
  for (const [kind, weight] of weights) {
    if (roll < weight) return kind;
    roll -= weight;
  }
  return "add";
}

async function waitForGo() {
  await new Promise((resolveGo) => {
    process.stdin.once("data", () => resolveGo());
  });
  process.stdin.pause();
}

async function main() {
  // Open the store before announcing readiness (SQLite: opens and migrates; YAML: a first read).
  await store.readPlaybook("global");
  emit({ type: "ready", pid: process.pid });
  if (spec.waitForGo) await waitForGo();

  let failures = 0;
  for (let seq = 0; seq < spec.count; seq++) {
    const tag = `${prefix}s${seq}`;
    const kind = chooseKind();
    try {
      if (kind === "mark") {
        const bulletId = pick(targets);
        const helpful = random() < 0.7;
        const session = `/durability/sessions/${tag}.jsonl`;
        emit({ type: "start", seq, op: "mark", tag, bulletId, helpful, session });
        const result = await runOperation(markOperation, deps, { bulletId, ...(helpful ? { helpful: true } : { harmful: true }), reason: tag, session });
        emit({ type: "done", seq, op: "mark", tag, bulletId, helpful, session, state: result.newState });
      } else if (kind === "add") {
        const content = ruleText(tag);
        const category = pick(CATEGORIES);
        emit({ type: "start", seq, op: "add", tag, contents: [content] });
        const result = await runOperation(playbookAddOperation, deps, { content, category });
        const id = result.bullet.id;
        mine.push(id);
        targets.push(id);
        emit({ type: "done", seq, op: "add", tag, contents: [content], ids: [id] });
      } else if (kind === "batch") {
        const items = Array.from({ length: batchSize }, (_, i) => ({ content: ruleText(`${tag}b${i}`), category: pick(CATEGORIES) }));
        const contents = items.map((item) => item.content);
        emit({ type: "start", seq, op: "add", tag, contents });
        const result = await runOperation(playbookAddOperation, deps, { batch: { source: `durability:${tag}`, text: JSON.stringify(items) } });
        if (!result.success || result.added.length !== items.length) throw new Error(`batch add reported ${JSON.stringify(result.summary)}`);
        const ids = result.added.map((a) => a.id);
        mine.push(...ids);
        targets.push(...ids);
        emit({ type: "done", seq, op: "add", tag, contents, ids });
      } else {
        const index = Math.floor(random() * mine.length);
        const bulletId = mine.splice(index, 1)[0];
        const reason = `forgotten by ${tag}`;
        emit({ type: "start", seq, op: "forget", tag, bulletId, reason });
        const result = await runOperation(forgetOperation, deps, { bulletId, reason });
        emit({ type: "done", seq, op: "forget", tag, bulletId, reason, action: result.action });
      }
    } catch (error) {
      failures += 1;
      emit({ type: "error", seq, op: kind, tag, code: error?.code ?? null, message: error instanceof Error ? error.message : String(error) });
    }
  }
  emit({ type: "finished", failures });
  if ("close" in store) store.close();
  process.exitCode = failures > 0 ? 1 : 0;
}

main().catch((error) => {
  emit({ type: "fatal", code: error?.code ?? null, message: error instanceof Error ? error.stack ?? error.message : String(error) });
  process.exitCode = 2;
});
