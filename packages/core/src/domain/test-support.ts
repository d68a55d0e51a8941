import { BulletSchema, type Bullet } from "../schemas/playbook.js";
import type { IdGenerator } from "../ports.js";
import { createTestBullet } from "../testing/fakes.js";

/** Helpers for the domain tests (not exported from the package). */

export const T0 = new Date("2026-01-01T00:00:00.000Z");
export const DAY = 86_400_000;

export function daysBefore(now: Date, days: number): string {
  return new Date(now.getTime() - days * DAY).toISOString();
}

export type BulletOverrides = { [K in keyof Bullet]?: unknown } & Record<string, unknown>;

/** A schema-valid bullet with defaults filled; any field may be overridden. */
export function makeBullet(overrides: BulletOverrides = {}): Bullet {
  return BulletSchema.parse(createTestBullet({ createdAt: T0.toISOString(), updatedAt: T0.toISOString(), ...(overrides as Partial<Bullet>) }));
}

/** `n` feedback events of one type, `ageDays` old relative to `now`. */
export function events(type: "helpful" | "harmful", n: number, now: Date = T0, ageDays = 0) {
  return Array.from({ length: n }, () => ({ type, timestamp: daysBefore(now, ageDays) }));
}

/** Deterministic ids: b-test-1, b-test-2, … */
export function sequentialIds(prefix = "b-new"): IdGenerator {
  let n = 0;
  return {
    bulletId: () => `${prefix}-${++n}`,
    hex: (count: number) => "0".repeat(count),
  };
}
