import { defaultConfig, type Config } from "../schemas/config.js";
import type { Bullet } from "../schemas/playbook.js";
import { newBullet } from "../domain/curator.js";
import type {
  Clock,
  DegradedInfo,
  EpisodicSource,
  HistoryHit,
  IdGenerator,
  Logger,
  OperationDeps,
  SessionSummary,
  Store,
  WorkspaceFiles,
} from "../ports.js";

/** In-memory fakes of the small ports, for deterministic tests of core and of adapters. */

export interface FakeClock extends Clock {
  set(date: Date | string): void;
  advance(ms: number): void;
}

export function createFakeClock(start: Date | string = "2026-01-01T00:00:00.000Z"): FakeClock {
  let current = new Date(start).getTime();
  return {
    now: () => new Date(current),
    set: (date) => {
      current = new Date(date).getTime();
    },
    advance: (ms) => {
      current += ms;
    },
  };
}

/** Ids `b-test-000001`, `b-test-000002`, … (and hex from a counter), never random. */
export function createSequentialIds(prefix = "b-test"): IdGenerator & { count(): number } {
  let n = 0;
  let h = 0;
  return {
    bulletId: () => `${prefix}-${String(++n).padStart(6, "0")}`,
    hex: (count) => (++h).toString(16).padStart(count, "0").slice(-count),
    count: () => n,
  };
}

export interface MemoryLogger extends Logger {
  readonly lines: Array<{ level: "debug" | "info" | "warn" | "error"; message: string }>;
}

export function createMemoryLogger(): MemoryLogger {
  const lines: MemoryLogger["lines"] = [];
  return {
    lines,
    debug: (message) => void lines.push({ level: "debug", message }),
    info: (message) => void lines.push({ level: "info", message }),
    warn: (message) => void lines.push({ level: "warn", message }),
    error: (message) => void lines.push({ level: "error", message }),
  };
}

export interface FakeEpisodicOptions {
  hits?: HistoryHit[];
  sessions?: SessionSummary[];
  exports?: Record<string, string>;
  degraded?: DegradedInfo;
}

/**
 * An episodic source answering from a fixed list: `search` returns the hits whose snippet or title
 * contains any word of the query (case-insensitive), and records every call for assertions.
 */
export function createFakeEpisodicSource(options: FakeEpisodicOptions = {}): EpisodicSource & {
  calls: Array<{ query: string; limit: number; days?: number | undefined; workspace?: string | undefined }>;
} {
  const calls: Array<{ query: string; limit: number; days?: number | undefined; workspace?: string | undefined }> = [];
  return {
    name: "fake",
    calls,
    async health() {
      return options.degraded
        ? { available: false, name: "fake", degraded: options.degraded }
        : { available: true, name: "fake", version: "test" };
    },
    async search(query, opts) {
      calls.push({ query, limit: opts.limit, days: opts.days, workspace: opts.workspace });
      if (options.degraded) return { hits: [], degraded: options.degraded };
      const words = query
        .toLowerCase()
        .split(/\s+or\s+|\s+/)
        .filter(Boolean);
      const hits = (options.hits ?? []).filter((h) => {
        const text = `${h.title ?? ""} ${h.snippet}`.toLowerCase();
        return words.some((w) => text.includes(w));
      });
      return { hits: hits.slice(0, opts.limit) };
    },
    async listSessions() {
      return options.sessions ?? [];
    },
    async export(sessionPath) {
      return options.exports?.[sessionPath] ?? null;
    },
    async expand(sessionPath) {
      return options.exports?.[sessionPath] ?? null;
    },
  };
}

export interface MemoryFiles extends WorkspaceFiles {
  /** Absolute path → text. Directories exist implicitly when a file lies below them. */
  readonly files: Map<string, string>;
}

/** Workspace files held in a map; relative paths are resolved against the base with "/". */
export function createMemoryFiles(initial: Record<string, string> = {}): MemoryFiles {
  const files = new Map(Object.entries(initial));
  const resolve = (base: string, path: string): string =>
    path.startsWith("/") ? path : `${base.replace(/\/+$/, "")}/${path.replace(/^\.\//, "")}`;
  return {
    files,
    async exists(base, path) {
      const full = resolve(base, path);
      if (files.has(full)) return true;
      const dir = `${full.replace(/\/+$/, "")}/`;
      for (const key of files.keys()) if (key.startsWith(dir)) return true;
      return false;
    },
    async readText(base, path, maxBytes) {
      const text = files.get(resolve(base, path));
      return text === undefined ? null : text.slice(0, maxBytes);
    },
  };
}

/** OperationDeps from fakes; pass a store (e.g. `createMemoryStore()`), override anything else. */
export function createTestDeps(store: Store, overrides: Partial<OperationDeps> = {}): OperationDeps & {
  clock: FakeClock;
  logger: MemoryLogger;
} {
  const clock = (overrides.clock as FakeClock | undefined) ?? createFakeClock();
  const logger = (overrides.logger as MemoryLogger | undefined) ?? createMemoryLogger();
  const config: Config = overrides.config ?? defaultConfig();
  return {
    store,
    episodic: overrides.episodic ?? createFakeEpisodicSource(),
    ids: overrides.ids ?? createSequentialIds(),
    cliName: overrides.cliName ?? "cm",
    files: overrides.files ?? createMemoryFiles(),
    ...overrides,
    clock,
    logger,
    config,
  };
}

export const TEST_BULLET_TIME = "2026-01-01T00:00:00.000Z";

/**
 * A complete bullet record as `cm playbook add` writes it (every field, in the original's order);
 * any field may be overridden, including unknown ones.
 */
export function createTestBullet(overrides: Partial<Bullet> & Record<string, unknown> = {}): Bullet {
  const base = newBullet(
    { id: "b-test", category: "general", content: "Use pnpm for installs" },
    { config: defaultConfig(), now: new Date(TEST_BULLET_TIME), ids: createSequentialIds() },
  );
  return { ...base, sourceAgents: [], ...overrides } as Bullet;
}
