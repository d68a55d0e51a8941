"use strict";
// Stands in for node:child_process in the CLI bundles (see tsup.config.ts): commander and the cass
// adapter import it at start-up, but most commands never start a process. The real module (with
// net, dgram and streams behind it) is loaded on the first use of any of its exports.
let real;
const load = () => (real ??= require("child_process"));
for (const key of ["_forkChild", "ChildProcess", "exec", "execFile", "execFileSync", "execSync", "fork", "spawn", "spawnSync"]) {
  Object.defineProperty(exports, key, { enumerable: true, get: () => load()[key] });
}
