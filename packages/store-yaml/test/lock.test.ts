import { spawnSync, spawn } from "node:child_process";
import { mkdir, readFile, readdir, stat, utimes, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { acquireLock, releaseAllLocks, withLock } from "../src/index.js";
import { tempDir, testLogger } from "./helpers.js";

let dir = "";
let cleanup: () => Promise<void> = async () => undefined;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir("cm-lock-"));
});
afterEach(async () => {
  await cleanup();
});

function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", ""]);
  if (typeof child.pid !== "number") throw new Error("no pid");
  return child.pid;
}

async function plantLock(target: string, pid: string | null, owner: string | null, ageMs = 0): Promise<string> {
  const lockDir = `${target}.lock.d`;
  await mkdir(lockDir, { recursive: true });
  if (pid !== null) await writeFile(join(lockDir, "pid"), pid);
  if (owner !== null) await writeFile(join(lockDir, "owner"), owner);
  if (ageMs > 0) {
    const then = new Date(Date.now() - ageMs);
    await utimes(lockDir, then, then);
  }
  return lockDir;
}

describe("lock directory format (compatible with the original cm)", () => {
  it("creates <file>.lock.d with pid and owner while held, and removes it on release", async () => {
    const target = join(dir, "sub", "playbook.yaml");
    const handle = await acquireLock(target);
    expect(handle.lockDir).toBe(`${target}.lock.d`);
    expect((await readFile(join(handle.lockDir, "pid"), "utf8")).trim()).toBe(String(process.pid));
    expect((await readFile(join(handle.lockDir, "owner"), "utf8")).trim()).toBe(handle.owner);
    expect(handle.owner).toMatch(/^[0-9a-f]{32}$/);
    await handle.release();
    expect(existsSync(handle.lockDir)).toBe(false);
    await handle.release(); // idempotent
  });

  it("release leaves a lock that is no longer ours", async () => {
    const logger = testLogger();
    const handle = await acquireLock(join(dir, "f"), { logger });
    await writeFile(join(handle.lockDir, "owner"), "someone-else");
    await handle.release();
    expect(existsSync(handle.lockDir)).toBe(true);
    expect(logger.lines.some((l) => l.level === "warn" && l.message.includes(handle.lockDir))).toBe(true);
  });

  it("withLock releases the lock when fn throws", async () => {
    const target = join(dir, "f");
    await expect(withLock(target, () => Promise.reject(new Error("inner")))).rejects.toThrow("inner");
    expect(existsSync(`${target}.lock.d`)).toBe(false);
  });

  it("excludes concurrent holders in the same process", async () => {
    const target = join(dir, "f");
    let inside = 0;
    let maxInside = 0;
    await Promise.all(
      Array.from({ length: 20 }, () =>
        withLock(target, async () => {
          inside += 1;
          maxInside = Math.max(maxInside, inside);
          await new Promise((r) => setTimeout(r, 2));
          inside -= 1;
        }),
      ),
    );
    expect(maxInside).toBe(1);
  });

  it("releaseAllLocks removes the locks this process holds", async () => {
    const a = await acquireLock(join(dir, "a"));
    const b = await acquireLock(join(dir, "b"));
    expect(releaseAllLocks()).toBe(2);
    expect(existsSync(a.lockDir)).toBe(false);
    expect(existsSync(b.lockDir)).toBe(false);
    await a.release();
  });
});

describe("contention, abandoned and stale locks", () => {
  it("removes an abandoned lock whose pid is dead", async () => {
    const target = join(dir, "f");
    const lockDir = await plantLock(target, String(deadPid()), "dead-owner");
    const started = Date.now();
    const handle = await acquireLock(target, { timeoutMs: 2000 });
    expect(Date.now() - started).toBeLessThan(1500);
    expect((await readFile(join(lockDir, "owner"), "utf8")).trim()).toBe(handle.owner);
    await handle.release();
    expect((await readdir(dir)).filter((n) => n.includes(".lock.d"))).toEqual([]);
  });

  it("removes a stale lock (old mtime, no pid file)", async () => {
    const target = join(dir, "f");
    await plantLock(target, null, null, 60_000);
    const handle = await acquireLock(target, { timeoutMs: 2000, staleMs: 30_000 });
    await handle.release();
    expect((await readdir(dir)).filter((n) => n.includes(".lock.d"))).toEqual([]);
  });

  it("takes over a lock directory left empty a few seconds ago (its creator died before writing its pid)", async () => {
    const target = join(dir, "f");
    await plantLock(target, null, null, 5_000);
    const handle = await acquireLock(target, { timeoutMs: 500, staleMs: 30_000 });
    await handle.release();
    expect((await readdir(dir)).filter((n) => n.includes(".lock.d"))).toEqual([]);
  });

  it("takes over a lock directory whose creator died after writing its owner but before its pid", async () => {
    const target = join(dir, "f");
    await plantLock(target, null, "dead-owner", 5_000);
    const handle = await acquireLock(target, { timeoutMs: 500, staleMs: 30_000 });
    expect(handle.owner).not.toBe("dead-owner");
    await handle.release();
  });

  it("does not remove a fresh lock without pid (it may be being created)", async () => {
    const target = join(dir, "f");
    await plantLock(target, null, null);
    await expect(acquireLock(target, { timeoutMs: 150, staleMs: 30_000 })).rejects.toMatchObject({ code: "LOCK_ACQUISITION_FAILED" });
  });

  it("waits for a lock held by a live process and fails with LOCK_ACQUISITION_FAILED after the timeout", async () => {
    const target = join(dir, "f");
    const sleeper = spawn(process.execPath, ["-e", "setTimeout(() => {}, 30000)"], { stdio: "ignore" });
    try {
      const lockDir = await plantLock(target, String(sleeper.pid), "live-owner", 120_000);
      const started = Date.now();
      const error = await acquireLock(target, { timeoutMs: 300, staleMs: 1000 }).catch((e: unknown) => e);
      const elapsed = Date.now() - started;
      expect(error).toMatchObject({ code: "LOCK_ACQUISITION_FAILED" });
      expect((error as Error).message).toMatch(new RegExp(`^Could not acquire lock for ${target.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} after \\d+ ms$`));
      expect((error as { hint?: string }).hint).toContain(lockDir);
      expect(elapsed).toBeGreaterThanOrEqual(290);
      // old mtime but a live holder: the lock is left alone
      expect((await readFile(join(lockDir, "owner"), "utf8")).trim()).toBe("live-owner");
    } finally {
      sleeper.kill();
    }
  });

  it("acquires as soon as a live holder releases", async () => {
    const target = join(dir, "f");
    const first = await acquireLock(target);
    setTimeout(() => void first.release(), 100);
    const started = Date.now();
    const second = await acquireLock(target, { timeoutMs: 5000 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
    await second.release();
  });

  it("removes a lock left by an earlier process that had our pid", async () => {
    const target = join(dir, "f");
    await plantLock(target, String(process.pid), "not-one-of-ours");
    const handle = await acquireLock(target, { timeoutMs: 1000 });
    await handle.release();
    expect(existsSync(`${target}.lock.d`)).toBe(false);
  });

  it("heartbeat touches the lock directory", async () => {
    const target = join(dir, "f");
    const handle = await acquireLock(target, { heartbeatMs: 20 });
    const old = new Date(Date.now() - 60_000);
    await utimes(handle.lockDir, old, old);
    await new Promise((r) => setTimeout(r, 120));
    expect(Date.now() - (await stat(handle.lockDir)).mtimeMs).toBeLessThan(10_000);
    await handle.release();
  });
});
