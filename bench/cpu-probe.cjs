// Preloaded with `node -r` by bench/startup-bench.mjs: writes the process's CPU time (user + system,
// microseconds) at exit to $BENCH_CPU_FILE. CPU time is less distorted than wall time when other
// processes compete for the machine's cores.
"use strict";
const { writeFileSync } = require("node:fs");
process.on("exit", () => {
  const { user, system } = process.cpuUsage();
  try {
    writeFileSync(process.env.BENCH_CPU_FILE, String(user + system));
  } catch {}
});
