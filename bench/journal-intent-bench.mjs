// What the journal intent (docs/adr/0012-journal-crash-safety.md) costs a journaled YAML mutation:
// the median time of a whole mutation (read, change one bullet, intent, playbook, journal append)
// next to the median time of the intent's own steps measured alone in the same directory (SHA-256
// of the new playbook text, atomic write of the intent with its fsync, unlink). Sizes by
// BENCH_SIZES (default 1000,10000), runs by BENCH_RUNS (default 20). Writes its table to
// docs/benchmarks.md. Run after building store-yaml: `node bench/journal-intent-bench.mjs`.
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { unlink } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { generatePlaybookYaml } from "./generate-playbook.mjs";
import { updateBenchmarkDoc } from "./update-doc.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const { createYamlStore } = await import(pathToFileURL(join(root, "packages/store-yaml/dist/index.js")).href);
const { atomicWriteFile } = await import(pathToFileURL(join(root, "packages/node-files/dist/index.js")).href);
const SIZES = (process.env.BENCH_SIZES ?? "1000,10000").split(",").map(Number);
const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const rows = [];
for (const size of SIZES) {
  const dir = mkdtempSync(join(tmpdir(), "cm-intent-bench-"));
  try {
    writeFileSync(join(dir, "playbook.yaml"), generatePlaybookYaml(size));
    const store = createYamlStore({ globalDir: dir, repoDir: null, logger: quiet });
    let n = 0;
    let lastText = "";
    const mutate = () =>
      store.mutatePlaybook("global", (playbook, tx) => {
        const bullet = playbook.bullets[n % playbook.bullets.length];
        bullet.helpfulCount += 1;
        n += 1;
        tx.journal([{ id: `ev-bench-${n}`, timestamp: new Date().toISOString(), operation: "feedback", change: "feedback", bulletId: bullet.id, layer: "global", actor: "bench", hashBefore: null, hashAfter: null, before: { helpfulCount: bullet.helpfulCount - 1 }, after: { helpfulCount: bullet.helpfulCount } }]);
      });
    for (let i = 0; i < 3; i++) await mutate();
    const whole = [];
    for (let i = 0; i < RUNS; i++) {
      const t = performance.now();
      await mutate();
      whole.push(performance.now() - t);
    }
    const { readFileSync } = await import("node:fs");
    lastText = readFileSync(join(dir, "playbook.yaml"), "utf8");
    const intentPath = join(dir, "events.pending.json");
    const event = { id: "ev-x", timestamp: new Date().toISOString(), operation: "feedback", change: "feedback", bulletId: "b-x", layer: "global", actor: "bench", hashBefore: null, hashAfter: null };
    const steps = [];
    for (let i = 0; i < RUNS; i++) {
      const t = performance.now();
      const after = createHash("sha256").update(lastText).digest("hex");
      await atomicWriteFile(intentPath, JSON.stringify({ format: 1, createdAt: event.timestamp, playbook: join(dir, "playbook.yaml"), before: after, after, events: [event] }));
      await unlink(intentPath);
      steps.push(performance.now() - t);
    }
    const w = median(whole);
    const s = median(steps);
    rows.push(`| ${size.toLocaleString("en-US")} | ${(Buffer.byteLength(lastText) / 1024).toFixed(0)} KiB | ${w.toFixed(1)} ms | ${s.toFixed(2)} ms | ${((100 * s) / w).toFixed(1)} % |`);
    console.log(rows.at(-1));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
const table = [
  `Machine: ${cpus()[0]?.model ?? "unknown"} × ${cpus().length}, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}; median of ${RUNS} runs (\`node bench/journal-intent-bench.mjs\`).`,
  "",
  "| bullets | playbook | journaled mutation (whole) | intent steps alone (hash + write + fsync + unlink) | share |",
  "| ---: | ---: | ---: | ---: | ---: |",
  ...rows,
].join("\n");
updateBenchmarkDoc("journal-intent", "Journal crash safety: cost of the intent and targeted crash trials", table);
