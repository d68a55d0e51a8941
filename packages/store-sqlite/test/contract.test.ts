import { afterEach } from "vitest";
import { runStoreContract } from "@cass-memory/store-contract";
import { appendRawLines, closeStores, databasePath, makeStore, readRawGlobalRecord, runWorker, withDb, writeRawGlobalRecord } from "./helpers.js";

afterEach(() => closeStores());

runStoreContract(
  "sqlite store",
  (ctx) => makeStore({ globalDir: ctx.globalDir, repoDir: ctx.repoDir, now: ctx.now }),
  {
    // A bullet row whose JSON is cut off: the playbook cannot be decoded, the rest of the database is fine.
    corrupt: (ctx, layer) => {
      withDb(databasePath(ctx.globalDir, ctx.repoDir, layer), layer, (db) => db.prepare("UPDATE bullets SET body = ? WHERE id = 'b-before'").run('{"id": "b-before", "content": [unclosed'));
    },
    snapshot: (ctx, layer) =>
      withDb(databasePath(ctx.globalDir, ctx.repoDir, layer), layer, (db) => ({
        playbook: db.prepare("SELECT * FROM playbook").all(),
        bullets: db.prepare("SELECT * FROM bullets ORDER BY row").all(),
        journal: db.prepare("SELECT * FROM journal ORDER BY seq").all(),
      })),
    appendRaw: (ctx, layer, log, text) => appendRawLines(databasePath(ctx.globalDir, ctx.repoDir, layer), layer, log, text),
    writeRawGlobalFile: (ctx, name, text) => writeRawGlobalRecord(ctx.globalDir, name, text),
    readRawGlobalFile: (ctx, name) => readRawGlobalRecord(ctx.globalDir, name),
    concurrentProcesses: async (ctx, plan) => {
      await Promise.all(Array.from({ length: plan.processes }, (_, p) => runWorker(["mutate", ctx.globalDir, JSON.stringify({ index: p, perProcess: plan.perProcess })], `mutate ${p}`)));
    },
    concurrentPlan: { processes: 8, perProcess: 25 },
    concurrentCostProcesses: async (ctx, entries) => {
      await Promise.all(entries.map((list, p) => runWorker(["costs", ctx.globalDir, JSON.stringify(list)], `costs ${p}`)));
    },
    concurrentCostPlan: { processes: 8, perProcess: 25 },
    concurrentExclusiveProcesses: async (ctx, plan) => {
      await Promise.all(Array.from({ length: plan.processes }, (_, p) => runWorker(["exclusive", ctx.globalDir, JSON.stringify({ ...plan, index: p })], `exclusive ${p}`)));
    },
    slowTimeoutMs: 120_000,
  },
);
