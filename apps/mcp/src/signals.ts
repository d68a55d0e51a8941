import { releaseAllLocks } from "@cass-memory/runtime";

/** How long shutting down waits for requests in flight (stdio and HTTP) before cutting them off. */
export const SHUTDOWN_GRACE_MS = 10_000;

/**
 * SIGINT/SIGTERM: close the server, release the store's locks held by interrupted mutations, and
 * exit 130/143 (the original's codes). A second signal exits at once.
 */
export function exitOnSignals(close: () => Promise<void>, log: (line: string) => void): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals, exitCode: number): void => {
    if (stopping) {
      releaseAllLocks();
      process.exit(exitCode);
    }
    stopping = true;
    log(`Received ${signal}, shutting down.`);
    void close()
      .catch(() => undefined)
      .finally(() => {
        releaseAllLocks();
        process.exit(exitCode);
      });
  };
  process.on("SIGINT", () => onSignal("SIGINT", 130));
  process.on("SIGTERM", () => onSignal("SIGTERM", 143));
}
