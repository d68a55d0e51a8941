/**
 * Test-only crash points. When the environment variable `CM_TEST_CRASH_AT` names a point (a
 * comma-separated list is accepted), the process kills itself with SIGKILL when it reaches it —
 * exactly as a crash or `kill -9` at that instant would. Unset (the default), a crash point is one
 * environment lookup and does nothing. The durability tests use it to stop a writer between two
 * named steps of a write (docs/adr/0012-journal-crash-safety.md lists the points).
 */
export const CRASH_POINT_ENV = "CM_TEST_CRASH_AT";

export function crashPoint(name: string): void {
  const wanted = process.env[CRASH_POINT_ENV];
  if (wanted === undefined || wanted === "") return;
  if (!wanted.split(",").some((point) => point.trim() === name)) return;
  // POSIX delivers a signal a process sends to itself before kill() returns.
  process.kill(process.pid, "SIGKILL");
}
