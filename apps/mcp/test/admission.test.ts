import { defaultConfig } from "@cass-memory/core";
import { describe, expect, it } from "vitest";
import { ADMISSION_TIMEOUT_MESSAGE, createAdmissionController, resolveAdmissionLimits } from "../src/admission.js";

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe("admission control", () => {
  it("reads config serve.* and lets valid MCP_CASS_* variables override it", () => {
    const config = defaultConfig();
    expect(resolveAdmissionLimits(config, {})).toEqual({ maxConcurrent: 2, maxQueue: 32, queueTimeoutMs: 20000 });
    expect(resolveAdmissionLimits(config, { MCP_CASS_MAX_CONCURRENCY: "4", MCP_CASS_MAX_QUEUE: "0", MCP_CASS_QUEUE_TIMEOUT_MS: "0" })).toEqual({
      maxConcurrent: 4,
      maxQueue: 0,
      queueTimeoutMs: 0,
    });
    expect(resolveAdmissionLimits(config, { MCP_CASS_MAX_CONCURRENCY: "many", MCP_CASS_MAX_QUEUE: "-1", MCP_CASS_QUEUE_TIMEOUT_MS: "1.5" })).toEqual({
      maxConcurrent: 2,
      maxQueue: 32,
      queueTimeoutMs: 20000,
    });
  });

  it("runs at most `maxConcurrent` calls at once and queues the rest in order", async () => {
    const admission = createAdmissionController({ maxConcurrent: 2, maxQueue: 0, queueTimeoutMs: 0 });
    const gates = Array.from({ length: 5 }, deferred);
    const started: number[] = [];
    const runs = gates.map((gate, i) =>
      admission.run(async () => {
        started.push(i);
        await gate.promise;
        return i;
      }),
    );
    await new Promise((r) => setTimeout(r, 10));
    expect(started).toEqual([0, 1]);
    expect(admission.metrics()).toMatchObject({ enabled: true, inFlight: 2, queued: 3 });
    gates[1]!.resolve();
    await runs[1];
    await new Promise((r) => setTimeout(r, 0));
    expect(started).toEqual([0, 1, 2]);
    for (const gate of gates) gate.resolve();
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3, 4]);
    expect(admission.metrics()).toMatchObject({ inFlight: 0, queued: 0, totalAdmitted: 5, maxObservedInFlight: 2, maxObservedQueued: 3 });
  });

  it("releases the slot when a call fails", async () => {
    const admission = createAdmissionController({ maxConcurrent: 1, maxQueue: 0, queueTimeoutMs: 0 });
    await expect(admission.run(async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    await expect(admission.run(async () => "next")).resolves.toBe("next");
  });

  it("refuses at once when the queue is full, and after the timeout when no slot frees up", async () => {
    const admission = createAdmissionController({ maxConcurrent: 1, maxQueue: 1, queueTimeoutMs: 30 });
    const gate = deferred();
    const first = admission.run(() => gate.promise);
    const waiting = admission.run(async () => "never");
    await expect(admission.run(async () => "x")).rejects.toMatchObject({ code: "CASS_SEARCH_FAILED", retryable: true, details: { reason: "queue_full", inFlight: 1, queued: 1 } });
    const timedOut = await waiting.then(
      () => null,
      (e: unknown) => e as { message: string; details: { reason: string } },
    );
    expect(timedOut?.message).toBe(ADMISSION_TIMEOUT_MESSAGE);
    expect(timedOut?.details.reason).toBe("queue_timeout");
    gate.resolve();
    await first;
    expect(admission.metrics()).toMatchObject({ totalAdmitted: 1, totalRejectedQueueFull: 1, totalRejectedTimeout: 1, inFlight: 0, queued: 0 });
  });

  it("is disabled by a concurrency of 0: everything runs, metrics are zero", async () => {
    const admission = createAdmissionController({ maxConcurrent: 0, maxQueue: 1, queueTimeoutMs: 1 });
    const gates = [deferred(), deferred(), deferred()];
    const runs = gates.map((g) => admission.run(() => g.promise));
    for (const g of gates) g.resolve();
    await Promise.all(runs);
    expect(admission.metrics()).toEqual({
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
    });
  });
});
