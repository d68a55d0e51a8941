import { afterEach } from "vitest";
import { runStoreContract } from "@cass-memory/store-contract";
import { appendRawLines, closeStores, layerSpace, makeStore, readRawGlobalRecord, runWorker, spaceOf, withSql, writeRawGlobalRecord } from "./helpers.js";

afterEach(() => closeStores());

runStoreContract(
  "postgres store",
  (ctx) => makeStore({ globalDir: ctx.globalDir, repoDir: ctx.repoDir, now: ctx.now }),
  {
    // A bullet row whose JSON is cut off: the playbook cannot be decoded, the rest of the layer is fine.
    corrupt: (ctx, layer) =>
      withSql(async (c) => {
        await c.query("UPDATE cm_bullets SET body = $2 WHERE space = $1 AND id = 'b-before'", [layerSpace(ctx.globalDir, ctx.repoDir, layer), '{"id": "b-before", "content": [unclosed']);
      }),
    snapshot: (ctx, layer) =>
      withSql(async (c) => {
        const space = layerSpace(ctx.globalDir, ctx.repoDir, layer);
        return {
          space: (await c.query("SELECT playbook, revision FROM cm_spaces WHERE space = $1", [space])).rows,
          bullets: (await c.query("SELECT row, pos, id, body FROM cm_bullets WHERE space = $1 ORDER BY row", [space])).rows,
          journal: (await c.query("SELECT seq, event FROM cm_journal WHERE space = $1 ORDER BY seq", [space])).rows,
        };
      }),
    appendRaw: (ctx, layer, log, text) => appendRawLines(layerSpace(ctx.globalDir, ctx.repoDir, layer), log, text),
    writeRawGlobalFile: (ctx, name, text) => writeRawGlobalRecord(ctx.globalDir, name, text),
    readRawGlobalFile: (ctx, name) => readRawGlobalRecord(ctx.globalDir, name),
    concurrentProcesses: async (ctx, plan) => {
      await Promise.all(
        Array.from({ length: plan.processes }, (_, p) => runWorker(["mutate", ctx.globalDir, spaceOf(ctx.globalDir), JSON.stringify({ index: p, perProcess: plan.perProcess })], `mutate ${p}`)),
      );
    },
    concurrentPlan: { processes: 8, perProcess: 25 },
    concurrentCostProcesses: async (ctx, entries) => {
      await Promise.all(entries.map((list, p) => runWorker(["costs", ctx.globalDir, spaceOf(ctx.globalDir), JSON.stringify(list)], `costs ${p}`)));
    },
    concurrentCostPlan: { processes: 8, perProcess: 25 },
    concurrentExclusiveProcesses: async (ctx, plan) => {
      await Promise.all(
        Array.from({ length: plan.processes }, (_, p) => runWorker(["exclusive", ctx.globalDir, spaceOf(ctx.globalDir), JSON.stringify({ ...plan, index: p })], `exclusive ${p}`)),
      );
    },
    slowTimeoutMs: 180_000,
  },
);
