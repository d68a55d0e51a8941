import { createMemoryStore, createMemoryStoreBacking } from "@cass-memory/core/testing";
import type { MemoryStore, MemoryStoreBacking } from "@cass-memory/core/testing";
import { runStoreContract } from "../src/index.js";

const backings = new Map<string, MemoryStoreBacking>();

function backingFor(globalDir: string): MemoryStoreBacking {
  let backing = backings.get(globalDir);
  if (!backing) {
    backing = createMemoryStoreBacking();
    backings.set(globalDir, backing);
  }
  return backing;
}

runStoreContract<MemoryStore>(
  "memory store",
  (ctx) =>
    createMemoryStore({
      globalDir: ctx.globalDir,
      ...(ctx.repoDir !== null ? { repoDir: ctx.repoDir } : {}),
      repo: ctx.repoDir !== null,
      backing: backingFor(ctx.globalDir),
      now: () => ctx.now().toISOString(),
    }),
  {
    corrupt: (_ctx, layer, store) => store.corrupt(layer, "bullets: [unclosed"),
    snapshot: (_ctx, layer, store) => store.rawPlaybook(layer),
    appendRaw: (_ctx, layer, log, text, store) => store.appendRawLogLine(layer, log, text),
    writeRawGlobalFile: (_ctx, name, text, store) => store.writeRawGlobalFile(name, text),
    readRawGlobalFile: (_ctx, name, store) => store.readRawGlobalFile(name),
  },
);
