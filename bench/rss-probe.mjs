// Preloaded with `node --import` by the benchmark: writes the process's peak RSS (KiB) on exit.
import { writeFileSync } from "node:fs";

const out = process.env.BENCH_RSS_FILE;
if (out) process.on("exit", () => writeFileSync(out, String(process.resourceUsage().maxRSS)));
