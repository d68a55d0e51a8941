import { spawn } from "node:child_process";
import { appendFile, mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runStoreContract } from "@cass-memory/store-contract";
import type { StoreContractContext } from "@cass-memory/store-contract";
import type { Layer } from "@cass-memory/core";
import { createYamlStore } from "../src/index.js";
import { testLogger } from "./helpers.js";

const WORKER = fileURLToPath(new URL("./fixtures/mutate-worker.mjs", import.meta.url));
const LEARNING_WORKER = fileURLToPath(new URL("./fixtures/learning-worker.mjs", import.meta.url));

function playbookFile(ctx: StoreContractContext, layer: Layer): string {
  const dir = layer === "global" ? ctx.globalDir : ctx.repoDir;
  if (dir === null) throw new Error("no repo dir");
  return join(dir, "playbook.yaml");
}

const LOG_FILE = {
  blocked: "blocked.log",
  outcomes: "outcomes.jsonl",
  "context-log": "context-log.jsonl",
  traumas: "traumas.jsonl",
  usage: "usage.jsonl",
  "privacy-audit": "privacy-audit.jsonl",
  "reflection-runs": "reflection-runs.jsonl",
} as const;

function runWorker(globalDir: string, index: number, perProcess: number): Promise<void> {
  return runScript(WORKER, [globalDir, String(index), String(perProcess)], String(index));
}

function runScript(script: string, args: string[], index: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`worker ${index} exited ${code}: ${stderr}`))));
  });
}

runStoreContract(
  "yaml store",
  (ctx) => createYamlStore({ globalDir: ctx.globalDir, repoDir: ctx.repoDir, logger: testLogger(), lock: { timeoutMs: 30_000 }, now: ctx.now }),
  {
    corrupt: async (ctx, layer) => {
      await writeFile(playbookFile(ctx, layer), "schema_version: 2\nbullets:\n  - id: b-1\n    content: [unclosed\n");
    },
    snapshot: async (ctx, layer) => (await readFile(playbookFile(ctx, layer))).toString("base64"),
    appendRaw: async (ctx, layer, log, text) => {
      const dir = layer === "global" ? ctx.globalDir : ctx.repoDir;
      if (dir === null) throw new Error("no repo dir");
      await appendFile(join(dir, LOG_FILE[log]), text);
    },
    writeRawGlobalFile: async (ctx, name, text) => {
      await mkdir(dirname(join(ctx.globalDir, name)), { recursive: true });
      await writeFile(join(ctx.globalDir, name), text);
    },
    readRawGlobalFile: async (ctx, name) => readFile(join(ctx.globalDir, name), "utf8").catch(() => null),
    concurrentProcesses: async (ctx, plan) => {
      await Promise.all(Array.from({ length: plan.processes }, (_, p) => runWorker(ctx.globalDir, p, plan.perProcess)));
    },
    concurrentPlan: { processes: 8, perProcess: 20 },
    concurrentCostProcesses: async (ctx, entries) => {
      await Promise.all(entries.map((list, p) => runScript(LEARNING_WORKER, ["costs", ctx.globalDir, JSON.stringify(list)], `costs ${p}`)));
    },
    concurrentCostPlan: { processes: 8, perProcess: 25 },
    concurrentExclusiveProcesses: async (ctx, plan) => {
      await Promise.all(
        Array.from({ length: plan.processes }, (_, p) =>
          runScript(LEARNING_WORKER, ["exclusive", ctx.globalDir, JSON.stringify({ ...plan, index: p })], `exclusive ${p}`),
        ),
      );
    },
    slowTimeoutMs: 120_000,
  },
);
