import { AppError, type Config } from "@cass-memory/core";

/**
 * Admission control for the calls that search session history (reference §2.5): at most
 * `maxConcurrent` run at once, up to `maxQueue` wait (0 = no bound), each for at most
 * `queueTimeoutMs` (0 = no limit). A call that cannot get a slot fails at once with a retryable
 * "busy" error instead of piling up cass processes.
 */

export interface AdmissionLimits {
  /** Calls running at once; 0 or less disables admission control. */
  maxConcurrent: number;
  /** Calls waiting for a slot; 0 = unbounded. */
  maxQueue: number;
  /** How long a call may wait for a slot, ms; 0 = forever. */
  queueTimeoutMs: number;
}

export interface AdmissionMetrics {
  enabled: boolean;
  inFlight: number;
  queued: number;
  limit: number;
  maxQueue: number;
  queueTimeoutMs: number;
  totalAdmitted: number;
  totalRejectedQueueFull: number;
  totalRejectedTimeout: number;
  maxObservedInFlight: number;
  maxObservedQueued: number;
  maxObservedWaitMs: number;
}

export interface AdmissionController {
  readonly limits: AdmissionLimits;
  /** Runs `fn` once a slot is free; throws a retryable busy AppError when none can be had. */
  run<T>(fn: () => Promise<T>): Promise<T>;
  metrics(): AdmissionMetrics;
}

export const ADMISSION_QUEUE_FULL_MESSAGE = "cass search server busy: admission queue is full; retry shortly";
export const ADMISSION_TIMEOUT_MESSAGE = "cass search server busy: timed out waiting for an admission slot; retry shortly";

function envInt(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name]?.trim();
  if (raw === undefined || !/^-?\d+$/.test(raw)) return undefined;
  const value = Number(raw);
  return Number.isSafeInteger(value) ? value : undefined;
}

/** The limits of config `serve.*`, overridden by MCP_CASS_MAX_CONCURRENCY / _MAX_QUEUE / _QUEUE_TIMEOUT_MS (invalid values are ignored). */
export function resolveAdmissionLimits(config: Pick<Config, "serve">, env: NodeJS.ProcessEnv = process.env): AdmissionLimits {
  const maxQueue = envInt(env, "MCP_CASS_MAX_QUEUE");
  const timeout = envInt(env, "MCP_CASS_QUEUE_TIMEOUT_MS");
  return {
    maxConcurrent: envInt(env, "MCP_CASS_MAX_CONCURRENCY") ?? config.serve.maxConcurrentCassCalls,
    maxQueue: maxQueue !== undefined && maxQueue >= 0 ? maxQueue : config.serve.maxQueuedCassCalls,
    queueTimeoutMs: timeout !== undefined && timeout >= 0 ? timeout : config.serve.cassQueueTimeoutMs,
  };
}

interface Waiter {
  admit: () => void;
  enqueuedAt: number;
}

export function createAdmissionController(limits: AdmissionLimits, now: () => number = Date.now): AdmissionController {
  const enabled = limits.maxConcurrent > 0;
  const queue: Waiter[] = [];
  let inFlight = 0;
  const totals = { admitted: 0, queueFull: 0, timeout: 0, maxInFlight: 0, maxQueued: 0, maxWaitMs: 0 };

  const busy = (reason: "queue_full" | "queue_timeout"): AppError =>
    new AppError("CASS_SEARCH_FAILED", reason === "queue_full" ? ADMISSION_QUEUE_FULL_MESSAGE : ADMISSION_TIMEOUT_MESSAGE, {
      retryable: true,
      hint: "Retry in a moment, or raise serve.maxConcurrentCassCalls / MCP_CASS_MAX_CONCURRENCY.",
      details: { retryable: true, reason, inFlight, queued: queue.length, limit: limits.maxConcurrent, maxQueue: limits.maxQueue },
    });

  const start = (): void => {
    inFlight++;
    totals.admitted++;
    totals.maxInFlight = Math.max(totals.maxInFlight, inFlight);
  };
  const release = (): void => {
    inFlight--;
    const next = queue.shift();
    if (next) next.admit();
  };

  function acquire(): Promise<void> {
    if (inFlight < limits.maxConcurrent) {
      start();
      return Promise.resolve();
    }
    if (limits.maxQueue > 0 && queue.length >= limits.maxQueue) {
      totals.queueFull++;
      return Promise.reject(busy("queue_full"));
    }
    return new Promise<void>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const waiter: Waiter = {
        enqueuedAt: now(),
        admit: () => {
          if (timer !== undefined) clearTimeout(timer);
          totals.maxWaitMs = Math.max(totals.maxWaitMs, now() - waiter.enqueuedAt);
          start();
          resolve();
        },
      };
      queue.push(waiter);
      totals.maxQueued = Math.max(totals.maxQueued, queue.length);
      if (limits.queueTimeoutMs > 0) {
        timer = setTimeout(() => {
          const index = queue.indexOf(waiter);
          if (index < 0) return;
          queue.splice(index, 1);
          totals.timeout++;
          totals.maxWaitMs = Math.max(totals.maxWaitMs, now() - waiter.enqueuedAt);
          reject(busy("queue_timeout"));
        }, limits.queueTimeoutMs);
      }
    });
  }

  return {
    limits,
    async run<T>(fn: () => Promise<T>): Promise<T> {
      if (!enabled) return fn();
      await acquire();
      try {
        return await fn();
      } finally {
        release();
      }
    },
    metrics(): AdmissionMetrics {
      if (!enabled) {
        return {
          enabled: false,
          inFlight: 0,
          queued: 0,
          limit: 0,
          maxQueue: 0,
          queueTimeoutMs: 0,
          totalAdmitted: 0,
          totalRejectedQueueFull: 0,
          totalRejectedTimeout: 0,
          maxObservedInFlight: 0,
          maxObservedQueued: 0,
          maxObservedWaitMs: 0,
        };
      }
      return {
        enabled: true,
        inFlight,
        queued: queue.length,
        limit: limits.maxConcurrent,
        maxQueue: limits.maxQueue,
        queueTimeoutMs: limits.queueTimeoutMs,
        totalAdmitted: totals.admitted,
        totalRejectedQueueFull: totals.queueFull,
        totalRejectedTimeout: totals.timeout,
        maxObservedInFlight: totals.maxInFlight,
        maxObservedQueued: totals.maxQueued,
        maxObservedWaitMs: totals.maxWaitMs,
      };
    },
  };
}
