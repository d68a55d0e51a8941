import { AppError } from "../errors.js";
import { defaultConfig } from "../schemas/config.js";
import { decodeBlockedEntries, parseJsonLines, validateBlockedEntries, validatePlaybookForWrite } from "../schemas/codec.js";
import { PlaybookSchema, createEmptyPlaybook } from "../schemas/playbook.js";
import type { BlockedEntry, Playbook } from "../schemas/playbook.js";
import { JournalEventSchema, type JournalEvent } from "../schemas/records.js";
import type {
  InitializeOptions,
  InitializeResult,
  Layer,
  LayerStatus,
  LogName,
  LogReadResult,
  StarterFile,
  Store,
  StoreLocations,
} from "../ports.js";

/**
 * An in-memory Store that behaves like the file store: every layer is a set of "files" (text),
 * playbooks are stored encoded (JSON) so callers never alias stored state, logs are JSONL text, a
 * corrupt playbook is reported as PLAYBOOK_CORRUPT and never overwritten, and mutations of a
 * playbook are serialised through a promise queue. Two stores created on the same
 * {@link MemoryStoreBacking} and directories see each other's data, like two processes on one disk.
 */

export interface MemoryStoreBacking {
  /** Absolute "path" → file text. */
  readonly files: Map<string, string>;
  /** Per-path tail of the mutation queue. */
  readonly queues: Map<string, Promise<unknown>>;
}

export function createMemoryStoreBacking(): MemoryStoreBacking {
  return { files: new Map(), queues: new Map() };
}

export interface MemoryStoreOptions {
  /** Whether the store is "inside a repository" (has a repo layer). Default true. */
  repo?: boolean;
  globalDir?: string;
  repoDir?: string;
  /** Share state between store instances (default: a new private backing). */
  backing?: MemoryStoreBacking;
  /** Creation time of playbooks created implicitly by a mutation (default: the real clock). */
  now?: () => string;
}

export type MemoryLogTarget = LogName | "blocked" | "events";

export interface MemoryStore extends Store {
  readonly backing: MemoryStoreBacking;
  /** Replaces the layer's playbook "file" with text that does not decode (default `{ not json`). */
  corrupt(layer: Layer, raw?: string): void;
  /** The raw text of the layer's playbook "file" (null when absent). */
  rawPlaybook(layer: Layer): string | null;
  /** Appends a raw line (no newline added) to a log, to simulate damaged or torn lines. */
  appendRawLogLine(layer: Layer, log: MemoryLogTarget, text: string): void;
}

export const MEMORY_GLOBAL_DIR = "/memory/.cass-memory";
export const MEMORY_REPO_DIR = "/memory/repo/.cass";

const GLOBAL_FILES = ["config.json", "playbook.yaml", "blocked.log", "usage.jsonl"];
const REPO_FILES = ["playbook.yaml", "blocked.log"];

const LOG_FILES: Readonly<Record<MemoryLogTarget, string>> = {
  outcomes: "outcomes.jsonl",
  "context-log": "context-log.jsonl",
  traumas: "traumas.jsonl",
  usage: "usage.jsonl",
  "privacy-audit": "privacy-audit.jsonl",
  blocked: "blocked.log",
  events: "events.jsonl",
};

function join(dir: string, name: string): string {
  return dir.endsWith("/") ? `${dir}${name}` : `${dir}/${name}`;
}

function notInRepo(): AppError {
  return new AppError("CONFIG_INVALID", "Not in a git repository. Run from within a git repo.", {
    hint: "cd into a git repository first",
  });
}

function corruptError(path: string, problem: string, cause?: unknown): AppError {
  return new AppError("PLAYBOOK_CORRUPT", `Playbook at ${path} is invalid: ${problem}`, {
    hint: `Fix ${path} by hand (it was left untouched), or restore it from a backup (${path}.backup.<timestamp>).`,
    details: { path },
    ...(cause !== undefined ? { cause } : {}),
  });
}

export function createMemoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  const backing = options.backing ?? createMemoryStoreBacking();
  const { files, queues } = backing;
  const now = options.now ?? (() => new Date().toISOString());
  const globalDir = options.globalDir ?? MEMORY_GLOBAL_DIR;
  const repoDir = options.repo === false ? null : (options.repoDir ?? MEMORY_REPO_DIR);
  const locations: StoreLocations = {
    globalDir,
    globalPlaybook: join(globalDir, "playbook.yaml"),
    repoDir,
    repoPlaybook: repoDir === null ? null : join(repoDir, "playbook.yaml"),
  };

  const dirOf = (layer: Layer): string | null => (layer === "global" ? globalDir : repoDir);
  const requireDir = (layer: Layer): string => {
    const dir = dirOf(layer);
    if (dir === null) throw notInRepo();
    return dir;
  };
  const playbookPath = (layer: Layer): string | null => (layer === "global" ? locations.globalPlaybook : locations.repoPlaybook);

  function decode(path: string, layer: Layer): Playbook | null {
    const text = files.get(path);
    if (text === undefined) return null;
    if (text.trim() === "") return createEmptyPlaybook(now(), layer);
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (error) {
      throw corruptError(path, `syntax error: ${error instanceof Error ? error.message : String(error)}`, error);
    }
    const parsed = PlaybookSchema.safeParse(data);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw corruptError(path, `${issue?.path.map(String).join(".") ?? ""}: ${issue?.message ?? "invalid"}`, parsed.error);
    }
    return parsed.data;
  }

  /** Runs `task` after every earlier task queued on `key` (across stores sharing the backing). */
  function enqueue<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = queues.get(key) ?? Promise.resolve();
    const run = previous.then(task, task);
    const tail = run.catch(() => undefined);
    queues.set(key, tail);
    void tail.then(() => {
      if (queues.get(key) === tail) queues.delete(key);
    });
    return run;
  }

  function appendText(path: string, text: string): void {
    const current = files.get(path) ?? "";
    const glue = current.length > 0 && !current.endsWith("\n") ? "\n" : "";
    files.set(path, current + glue + text);
  }

  const store: MemoryStore = {
    locations,
    backing,

    async readPlaybook(layer) {
      const path = playbookPath(layer);
      return path === null ? null : decode(path, layer);
    },

    mutatePlaybook(layer, fn) {
      const path = playbookPath(layer);
      if (path === null) return Promise.reject(notInRepo());
      const journalPath = join(requireDir(layer), LOG_FILES.events);
      return enqueue(path, async () => {
        const playbook = decode(path, layer) ?? createEmptyPlaybook(now(), layer);
        const queued: JournalEvent[] = [];
        const result = await fn(playbook, { journal: (events) => void queued.push(...events) });
        const encoded = JSON.stringify(validatePlaybookForWrite(playbook, path));
        const lines = queued.map((event) => JSON.stringify(JournalEventSchema.parse(event)));
        files.set(path, encoded);
        if (lines.length > 0) appendText(journalPath, lines.join("\n") + "\n");
        return result;
      });
    },

    async readJournal(layer) {
      const dir = dirOf(layer);
      if (dir === null) return [];
      const events: JournalEvent[] = [];
      for (const value of parseJsonLines(files.get(join(dir, LOG_FILES.events))).values) {
        const parsed = JournalEventSchema.safeParse(value);
        if (parsed.success) events.push(parsed.data);
      }
      return events;
    },

    async readBlocked(layer) {
      const dir = dirOf(layer);
      if (dir === null) return [];
      const legacy = layer === "global" ? "toxic_bullets.log" : "toxic.log";
      const entries: BlockedEntry[] = [];
      for (const name of ["blocked.log", legacy]) {
        entries.push(...decodeBlockedEntries(parseJsonLines(files.get(join(dir, name))).values).entries);
      }
      return entries;
    },

    async appendBlocked(layer, entries) {
      const dir = requireDir(layer);
      const lines = validateBlockedEntries(entries).map((entry) => JSON.stringify(entry));
      if (lines.length > 0) appendText(join(dir, "blocked.log"), lines.join("\n") + "\n");
    },

    async removeBlocked(layer, ids) {
      const dir = dirOf(layer);
      if (dir === null || ids.length === 0) return 0;
      const path = join(dir, "blocked.log");
      return enqueue(path, async () => {
        const text = files.get(path);
        if (text === undefined) return 0;
        const drop = new Set(ids);
        let removed = 0;
        const kept = text.split("\n").filter((line) => {
          if (line.trim() === "") return false;
          try {
            const value = JSON.parse(line) as { id?: unknown };
            if (typeof value.id === "string" && drop.has(value.id)) {
              removed++;
              return false;
            }
          } catch {
            // not JSON: kept as it is
          }
          return true;
        });
        if (removed > 0) files.set(path, kept.length > 0 ? kept.join("\n") + "\n" : "");
        return removed;
      });
    },

    async readStarterFiles(): Promise<StarterFile[]> {
      const prefixes = [join(globalDir, "starters/"), join(globalDir, "starters/custom/")];
      const found: StarterFile[] = [];
      for (const [path, text] of files) {
        const prefix = prefixes.find((p) => path.startsWith(p) && !path.slice(p.length).includes("/"));
        if (prefix === undefined || !/\.(ya?ml|json)$/i.test(path)) continue;
        try {
          // The memory store keeps every document as JSON text, whatever the file's extension.
          found.push({ path, data: JSON.parse(text) as unknown });
        } catch (error) {
          found.push({ path, error: error instanceof Error ? error.message : String(error) });
        }
      }
      return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    },

    mutateConfigFile(fn) {
      const path = join(globalDir, "config.json");
      return enqueue(path, async () => {
        const text = files.get(path);
        let raw: Record<string, unknown> = {};
        if (text !== undefined && text.trim() !== "") {
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch (error) {
            throw new AppError("CONFIG_INVALID", `Config file ${path} is not valid JSON`, {
              hint: `Fix ${path} by hand or run 'cm doctor --fix --force'.`,
              details: { path },
              cause: error,
            });
          }
          if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
            throw new AppError("CONFIG_INVALID", `Config file ${path} is not a JSON object`, { details: { path } });
          }
          raw = parsed as Record<string, unknown>;
        }
        fn(raw);
        files.set(path, JSON.stringify(raw, null, 2));
        return raw;
      });
    },

    async appendLog(layer, log, records) {
      const dir = requireDir(layer);
      if (records.length === 0) return;
      appendText(join(dir, LOG_FILES[log]), records.map((r) => JSON.stringify(r)).join("\n") + "\n");
    },

    async readLog(layer, log): Promise<LogReadResult> {
      const dir = dirOf(layer);
      if (dir === null) return { records: [], malformed: 0 };
      const { values, malformed } = parseJsonLines(files.get(join(dir, LOG_FILES[log])));
      return { records: values, malformed };
    },

    async layerStatus(layer): Promise<LayerStatus> {
      const expected = [...(layer === "global" ? GLOBAL_FILES : REPO_FILES)];
      const dir = dirOf(layer);
      if (dir === null) return { present: [], expected };
      return { present: expected.filter((name) => files.has(join(dir, name))), expected };
    },

    async initialize(layer, init: InitializeOptions): Promise<InitializeResult> {
      const dir = requireDir(layer);
      const plan: Array<{ name: string; content: () => string; rewrite: boolean }> =
        layer === "global"
          ? [
              { name: "config.json", content: () => JSON.stringify(init.config ?? defaultConfig(), null, 2), rewrite: true },
              { name: "playbook.yaml", content: () => JSON.stringify(createEmptyPlaybook(init.nowIso, "global")), rewrite: true },
              { name: "blocked.log", content: () => "", rewrite: false },
              { name: "usage.jsonl", content: () => "", rewrite: false },
            ]
          : [
              { name: "playbook.yaml", content: () => JSON.stringify(createEmptyPlaybook(init.nowIso, "repo")), rewrite: true },
              { name: "blocked.log", content: () => "", rewrite: true },
            ];
      const result: InitializeResult = { created: [], existed: [], overwritten: [], backups: [] };
      for (const file of plan) {
        const path = join(dir, file.name);
        const current = files.get(path);
        if (current === undefined) {
          files.set(path, file.content());
          result.created.push(file.name);
        } else if (init.overwrite && file.rewrite) {
          let ms = Date.now();
          while (files.has(`${path}.backup.${ms}`)) ms += 1;
          const backup = `${path}.backup.${ms}`;
          files.set(backup, current);
          files.set(path, file.content());
          result.backups.push({ file: path, backup });
          result.overwritten.push(file.name);
        } else {
          result.existed.push(file.name);
        }
      }
      return result;
    },

    corrupt(layer, raw = "{ not json") {
      const path = playbookPath(layer);
      if (path === null) throw notInRepo();
      files.set(path, raw);
    },

    rawPlaybook(layer) {
      const path = playbookPath(layer);
      return path === null ? null : (files.get(path) ?? null);
    },

    appendRawLogLine(layer, log, text) {
      const path = join(requireDir(layer), LOG_FILES[log]);
      files.set(path, (files.get(path) ?? "") + text);
    },
  };
  return store;
}
