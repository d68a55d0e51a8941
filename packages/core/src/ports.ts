import type { Config } from "./schemas/config.js";
import type { BlockedEntry, Playbook } from "./schemas/playbook.js";
import type { StoreTransfer } from "./storage/transfer.js";
import type { Delta, DiaryEntry, JournalEvent, OnboardingState, ProcessedSession } from "./schemas/records.js";

/**
 * Ports: the interfaces every adapter implements. Core is written against these only; the
 * in-memory fakes in `@cass-memory/core/testing` implement each of them.
 */

/** The two layers of a playbook: the user's global one and a repository's `.cass/`. */
export type Layer = "global" | "repo";

export interface Clock {
  now(): Date;
}

export interface IdGenerator {
  /** A new bullet id, `b-<base36 ms>-<6 base36 chars>` in the original's format. */
  bulletId(): string;
  /** `count` random lowercase hex characters (trauma ids, temp names). */
  hex(count: number): string;
}

export interface Logger {
  /** Only shown with --verbose. */
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

// ---------------------------------------------------------------------------------------------
// Store

export interface StoreLocations {
  /** The global data directory (default `~/.cass-memory`). */
  globalDir: string;
  /** Path of the global playbook (config `playbookPath`). */
  globalPlaybook: string;
  /** `<git root>/.cass`, or null when the working directory is not inside a git repository. */
  repoDir: string | null;
  /** `<git root>/.cass/playbook.yaml`, or null outside a git repository. */
  repoPlaybook: string | null;
}

/** Files of a layer that `init` manages, relative names as the original reports them. */
export interface LayerStatus {
  /** Names of the layer's files that exist (e.g. `config.json`, `playbook.yaml`). */
  present: string[];
  /** Names of the files a complete layer has. */
  expected: string[];
}

export interface InitializeOptions {
  /** Back up and rewrite files that exist; otherwise existing files are left untouched. */
  overwrite: boolean;
  /** Global layer: the configuration written to `config.json`. */
  config?: Config;
  /** Creation time recorded in the new playbook's metadata. */
  nowIso: string;
}

export interface InitializeResult {
  created: string[];
  existed: string[];
  overwritten: string[];
  backups: Array<{ file: string; backup: string }>;
}

/** Append-only JSONL logs kept per layer (reference §4.7). */
export type LogName = "outcomes" | "context-log" | "traumas" | "usage" | "privacy-audit" | "reflection-runs";

export interface LogReadResult {
  records: unknown[];
  /** Lines that were not valid JSON (skipped, never rewritten). */
  malformed: number;
}

/**
 * Decides the fate of one record of a log being rewritten (`Store.updateLog`): return the record
 * itself (or undefined) to keep its line as it is, another object to replace it, or null to delete
 * it. Changing the record in place is not noticed; return a new object.
 */
export type LogRecordUpdate = (record: unknown) => unknown;

export interface LogUpdateResult {
  /** Records replaced by another object. */
  replaced: number;
  /** Records deleted. */
  removed: number;
}

/**
 * A caller's promise that a playbook mutation reads and changes only the bullets with these ids
 * (which it may also remove) and may append new bullets; it does not reorder bullets. A store may
 * then hand `fn` a playbook holding only those bullets and write only them — one rule's feedback
 * on a 100,000-rule SQLite playbook touches one row. Stores that read the whole file ignore it.
 */
export interface MutationScope {
  bulletIds?: readonly string[];
}

/** Handed to a playbook mutation alongside the playbook. */
export interface MutationTx {
  /**
   * Queues audit-journal events. The store appends them to the layer's journal after the playbook
   * is written and before the lock is released, so the journal and the playbook never disagree.
   * Nothing is appended when the mutation throws.
   */
  journal(events: readonly JournalEvent[]): void;
  /**
   * Rewrites the journal's events of one bullet with `map` (the queued events included), under the
   * same lock, after the playbook and the queued events are written: `playbook remove --hard` uses
   * it to drop the deleted rule's text from its history. Optional for stores: without it the
   * journal keeps the events as they are.
   */
  rewriteJournal?(bulletId: string, map: (event: JournalEvent) => JournalEvent): void;
}

/** A custom starter file found in `<globalDir>/starters/` (reference §1.5.18). */
export interface StarterFile {
  path: string;
  /** The parsed document, or undefined when the file could not be parsed (`error` says why). */
  data?: unknown;
  error?: string;
}

export type HealthStatus = "pass" | "warn" | "fail";

export interface HealthCheck {
  category: string;
  item: string;
  status: HealthStatus;
  message: string;
  details?: unknown;
}

export interface FixableIssue {
  id: string;
  description: string;
  category: string;
  severity: "warn" | "fail";
  safety: "safe" | "cautious" | "manual";
  /** Steps for a manual fix (safe and cautious fixes get the doctor command added by core). */
  howToFix?: string[];
}

export interface FixResult {
  id: string;
  success: boolean;
  message: string;
  /** Backups `<file>.backup.<epoch-ms>` made before files were rewritten. */
  backups?: string[];
}

export interface StoreDiagnosis {
  checks: HealthCheck[];
  fixableIssues: FixableIssue[];
}

export interface Store {
  readonly locations: StoreLocations;

  /**
   * Reads one layer's playbook, validated and with defaults filled. Returns null when the file
   * does not exist (or, for `repo`, when there is no repository). Throws AppError
   * `PLAYBOOK_CORRUPT` (with the path and a hint) when the file cannot be parsed or validated.
   * Optionally, a store that knows what determines the returned bullets' texts (e.g. the hash of
   * the file's bytes) passes it to `noteTextSource` (ranking), so that a saved lexical index is
   * found without hashing every text.
   */
  readPlaybook(layer: Layer): Promise<Playbook | null>;

  /**
   * Optional: readPlaybook(layer) with only the bullets whose id is in `ids` (in file order, every
   * copy of a duplicated id), for a store that can read a few bullets without decoding the rest
   * (locating the rule a command names). Null when the playbook does not exist.
   */
  readBullets?(layer: Layer, ids: readonly string[]): Promise<Playbook | null>;

  /**
   * Read-modify-write of one layer's playbook under a cross-process lock. `fn` receives the current
   * playbook (a new empty one when the file does not exist) and may change it in place; when `fn`
   * resolves, the playbook is written atomically and `fn`'s result returned. When `fn` throws,
   * nothing is written and the error propagates. A corrupt file is never overwritten.
   * `repo` outside a repository throws `CONFIG_INVALID`.
   */
  mutatePlaybook<T>(layer: Layer, fn: (playbook: Playbook, tx: MutationTx) => T | Promise<T>, options?: MutationScope): Promise<T>;

  /** The layer's audit journal, oldest first. Malformed lines are skipped. Empty when absent. */
  readJournal(layer: Layer): Promise<JournalEvent[]>;

  /** Entries of the layer's blocked log plus its legacy toxic log. Malformed lines are skipped. */
  readBlocked(layer: Layer): Promise<BlockedEntry[]>;
  /** Appends entries to the layer's blocked log under its lock. */
  appendBlocked(layer: Layer, entries: BlockedEntry[]): Promise<void>;
  /**
   * Rewrites the layer's blocked log without the entries of these ids (under its lock; lines that
   * are not valid JSON are kept). Returns how many entries were removed.
   */
  removeBlocked(layer: Layer, ids: readonly string[]): Promise<number>;

  appendLog(layer: Layer, log: LogName, records: unknown[]): Promise<void>;
  readLog(layer: Layer, log: LogName): Promise<LogReadResult>;
  /**
   * Rewrites a log under its lock (trauma heal/remove): `fn` sees every record in order and keeps,
   * replaces or deletes it (LogRecordUpdate). Lines that are not valid JSON are kept as they are and
   * not shown to `fn`; blank lines are dropped. The log is written (atomically) only when something
   * changed. A missing log, or the repo layer outside a repository, changes nothing.
   */
  updateLog(layer: Layer, log: LogName, fn: LogRecordUpdate): Promise<LogUpdateResult>;

  /** Custom starter playbooks in `<globalDir>/starters/` and `starters/custom/`, sorted by path. */
  readStarterFiles(): Promise<StarterFile[]>;

  /**
   * Read-modify-write of the global configuration file (`config.json`) under its lock. `fn` gets
   * the file's object (empty when the file is missing) and changes it in place. A file that is not
   * a JSON object is never overwritten: CONFIG_INVALID. Returns the written object.
   */
  mutateConfigFile(fn: (raw: Record<string, unknown>) => void): Promise<Record<string, unknown>>;

  /**
   * The onboarding state (`<globalDir>/onboarding-state.json`, reference §4.8), or null when the
   * file is missing, unreadable as JSON, invalid, or not version 1 (never throws for those).
   */
  readOnboardingState(): Promise<OnboardingState | null>;
  /**
   * Read-modify-write of the onboarding state under the file's lock. `fn` gets the stored state (a
   * fresh empty one when the file is missing or invalid; an invalid file is backed up first) and
   * changes it in place; the stats are recomputed and the state validated and written atomically.
   * When `fn` throws, nothing is written. `options.nowIso` dates a fresh state (default: the
   * store's clock).
   */
  mutateOnboardingState<T>(fn: (state: OnboardingState) => T | Promise<T>, options?: { nowIso?: string }): Promise<T>;
  /**
   * Appends records to the processed-sessions log `<globalDir>/reflections/<log>.processed.log`
   * (reference §4.5; `log` is `global` or `ws-<8 hex>`), under its lock. A new file starts with the
   * original's `# JSONL format…` header line. Invalid records: VALIDATION_FAILED, nothing written.
   */
  appendProcessedSessions(log: string, records: ProcessedSession[]): Promise<void>;
  /** The records of a processed log in file order (JSON and legacy tab-separated lines); empty when absent. */
  readProcessedSessions(log: string): Promise<ProcessedSession[]>;

  /**
   * Saves a diary entry as `<diaryDir>/<id>.json` (pretty JSON, atomic; reference §4.4), replacing
   * an entry with the same id. Returns the file's path.
   */
  writeDiary(entry: DiaryEntry): Promise<string>;
  /** The diary entry with this id, or null when it is missing or invalid. */
  readDiary(id: string): Promise<DiaryEntry | null>;
  /**
   * Diary entries, newest first (file mtime, then timestamp); invalid files are skipped. With
   * `sessionPath`, only that session's entries.
   */
  listDiaries(options?: { sessionPath?: string; limit?: number }): Promise<DiaryEntry[]>;

  /** LLM spending records (`<globalDir>/cost/`, reference §4.9). */
  readonly costs: CostLedger;

  /**
   * Runs `fn` holding a named cross-process lock (e.g. one reflection per processed log at a
   * time). Waits up to `waitMs` (default: the store's lock timeout) for a holder to finish, then
   * throws LOCK_ACQUISITION_FAILED naming the lock.
   */
  exclusive<T>(name: string, fn: () => Promise<T>, options?: { waitMs?: number }): Promise<T>;

  /** Section-wise reading and writing of everything the store holds (`cm storage migrate`). */
  readonly transfer?: StoreTransfer;

  /**
   * Candidate retrieval through an index (SQLite's full-text index): lets `context` rank a few
   * hundred likely bullets instead of reading a huge playbook. Absent on stores that read the whole
   * file anyway.
   */
  readonly candidates?: BulletCandidateIndex;

  /** Storage health for `cm doctor` (optional: a store without it is reported as such). */
  diagnose?(): Promise<StoreDiagnosis>;
  /** Applies one fix from `diagnose().fixableIssues`, backing files up first. */
  applyFix?(id: string): Promise<FixResult>;

  layerStatus(layer: Layer): Promise<LayerStatus>;
  /** Creates the layer's directory and files (`cm init`); see InitializeOptions. */
  initialize(layer: Layer, options: InitializeOptions): Promise<InitializeResult>;
}

/** See `Store.candidates`. */
export interface BulletCandidateIndex {
  /** How many bullets the layer's playbook holds (0 when it has none); cheap. */
  countBullets(layer: Layer): Promise<number>;
  /**
   * The layer's playbook (null when it has none) whose `bullets` are only candidates for a task:
   * active bullets sharing at least one of `terms` or holding a phrasing of one of `concepts` (any
   * field the index covers), best index match first, at most `limit`, then — whatever their state —
   * the bullets whose id is in `ids`. See CandidateSearch.
   */
  readCandidates(layer: Layer, query: CandidateSearch): Promise<Playbook | null>;
}

/**
 * A candidate search (core's `candidateQuery` makes one from a task). `terms` are the task's own
 * words. `concepts`, when given, are the phrasings of each concept the task mentions: a rule holding
 * any phrasing of a concept matches it once, weighted `conceptWeight` (default 0.8) of a word, as
 * the ranker scores concepts. An index that cannot match phrases may use their words as terms.
 */
export interface CandidateSearch {
  terms: readonly string[];
  concepts?: readonly (readonly string[])[];
  conceptWeight?: number;
  limit: number;
  ids?: readonly string[];
}

// ---------------------------------------------------------------------------------------------
// LLM spending (reference §4.9, §5.15)

/** One LLM call that reported token usage (the prompt is never recorded). */
export interface CostEntry {
  provider: string;
  model: string;
  tokensIn: number;
  tokensOut: number;
  /** USD. */
  cost: number;
  timestamp: string;
}

/** `cost/total.json`: running totals; the day and month buckets restart when the date changes. */
export interface CostTotals {
  allTime: number;
  lastUpdated: string;
  /** `YYYY-MM` of the UTC date. */
  currentMonth: { month: string; cost: number };
  /** `YYYY-MM-DD` of the local date. */
  currentDay: { day: string; cost: number };
}

export interface CostLedger {
  /**
   * The totals as of now: zeros when the file is missing or unreadable, and a bucket whose day or
   * month is not the current one counts as 0.
   */
  totals(): Promise<CostTotals>;
  /** Appends the entry to `cost/monthly-<YYYY-MM>.jsonl` and updates the totals, under a lock. */
  record(entry: CostEntry): Promise<CostTotals>;
}

// ---------------------------------------------------------------------------------------------
// Learning: diary writer, reflector, validator, auditor (each LLM-backed or deterministic)

export type LearningKind = "llm" | "deterministic";

/** A session as the learning components see it; `text` is sanitised (and may be truncated). */
export interface SessionTranscript {
  path: string;
  agent: string;
  workspace?: string;
  text: string;
}

/** What a diary writer extracts from a session; the pipeline adds id, path, agent and time. */
export interface DiaryDraft {
  status: DiaryEntry["status"];
  accomplishments: string[];
  decisions: string[];
  challenges: string[];
  preferences: string[];
  keyLearnings: string[];
  tags: string[];
  searchAnchors?: string[];
  workspace?: string;
  duration?: number | null;
}

export interface DiaryWriter {
  readonly kind: LearningKind;
  write(session: SessionTranscript): Promise<DiaryDraft>;
}

export interface ReflectionInput {
  session: SessionTranscript;
  diary: DiaryEntry;
  /** The merged playbook at the start of the run (for reference; never modified). */
  playbook: Playbook;
  /** Snippets of related sessions found in episodic history. */
  history: HistoryHit[];
  /** 1-based iteration number, up to `maxIterations`. */
  iteration: number;
  maxIterations: number;
  /** Deltas proposed by earlier iterations for this session. */
  previous: readonly Delta[];
}

export interface Reflector {
  readonly kind: LearningKind;
  /** Proposed playbook changes; add deltas' `sourceSession` is set by the pipeline. */
  reflect(input: ReflectionInput): Promise<Delta[]>;
}

export type ValidationVerdict = "ACCEPT" | "REJECT" | "REFINE" | "ACCEPT_WITH_CAUTION";

/** A history snippet classified by the evidence gate's success/failure patterns (reference §5.8). */
export interface EvidenceItem {
  session: string;
  snippet: string;
  outcome: "success" | "failure" | "unknown";
}

/** Result of the evidence-count gate (reference §5.8). */
export interface EvidenceGateResult {
  passed: boolean;
  suggestedState: "draft" | "active";
  reason: string;
  sessionCount: number;
  successCount: number;
  failureCount: number;
  evidence: EvidenceItem[];
  /** Set when the history could not be searched (the gate then behaves as if nothing was found). */
  degraded?: DegradedInfo;
}

export interface ValidationInput {
  rule: string;
  gate: EvidenceGateResult;
}

export interface ValidatorJudgement {
  verdict: ValidationVerdict;
  /** 0..1 */
  confidence: number;
  reason: string;
  supporting: string[];
  contradicting: string[];
  /** A better wording of the rule (verdict REFINE, or an accepted rule with a refinement). */
  refinedRule?: string;
}

export interface Validator {
  readonly kind: LearningKind;
  /** Called only when the gate is not conclusive on its own (ambiguous evidence). */
  judge(input: ValidationInput): Promise<ValidatorJudgement>;
}

export interface AuditFinding {
  ruleId: string;
  status: "followed" | "violated" | "not_applicable";
  evidence: string;
}

export interface Auditor {
  readonly kind: LearningKind;
  audit(input: { session: SessionTranscript; rules: Array<{ id: string; content: string }> }): Promise<{ findings: AuditFinding[]; summary?: string }>;
}

/**
 * The learning components an operation uses, chosen by the composition root: LLM-backed ones when
 * a model is configured and allowed, else the deterministic ones (`CASS_MEMORY_LLM=none`, no
 * model). When `fallback` is present, a failing LLM call (budget, network, malformed replies after
 * retries) is answered by the deterministic component instead, and reported.
 */
export interface LearningComponents {
  mode: LearningKind;
  /** Why this mode was chosen, e.g. "CASS_MEMORY_LLM=none" or "no API key for openai". */
  reason?: string;
  /** The model in use (mode llm). */
  model?: { provider: string; model: string };
  diaryWriter: DiaryWriter;
  reflector: Reflector;
  validator: Validator;
  /** Absent when no LLM is available (audit needs one). */
  auditor?: Auditor;
  fallback?: Pick<LearningComponents, "diaryWriter" | "reflector" | "validator">;
}

// ---------------------------------------------------------------------------------------------
// Episodic memory (session history)

export type DegradedReason = "NOT_FOUND" | "INDEX_MISSING" | "FTS_TABLE_MISSING" | "TIMEOUT" | "OTHER";

export interface DegradedInfo {
  available: false;
  reason: DegradedReason;
  message: string;
  suggestedFix?: string[];
  /**
   * Set when another source answered in this one's place (e.g. `native` while cass failed): the
   * results are that source's, and this report says why the preferred one could not answer.
   */
  answeredBy?: string;
}

export interface HistoryHit {
  source_path: string;
  line_number: number;
  agent: string;
  workspace?: string;
  title?: string;
  snippet: string;
  score?: number;
  created_at?: string | number | null;
  origin: { kind: "local" | "remote"; host?: string };
}

export interface EpisodicSearchOptions {
  limit: number;
  days?: number;
  agents?: string[];
  workspace?: string;
  timeoutMs?: number;
}

export interface EpisodicSearchResult {
  hits: HistoryHit[];
  /** Present when the source could not answer; the hits are then empty or partial. */
  degraded?: DegradedInfo;
}

export interface EpisodicHealth {
  available: boolean;
  name: string;
  version?: string;
  degraded?: DegradedInfo;
  /** Session files found, per agent (native sources). */
  sessions?: number;
  agents?: Record<string, number>;
  /** Directories searched for session files (native sources). */
  roots?: string[];
  /** A source combining others (`auto`) reports each of them here, in order of preference. */
  components?: EpisodicHealth[];
  /** Session files found (native sources); `sessions` counts only what could be read from them. */
  files?: number;
  /**
   * Session files that were found but could not be read (native sources): how many, per agent,
   * and the first few with the reason.
   */
  unreadable?: UnreadableSessions;
  /** Session files found but not read yet (the check's time budget ran out); not in `sessions`. */
  pending?: number;
}

/** Session files a source found but could not read. */
export interface UnreadableSessions {
  count: number;
  byAgent: Record<string, number>;
  /** The first few files (bounded), each with why it could not be read. */
  files: Array<{ path: string; agent: string; reason: string }>;
}

/** What a source knows about one session file: the agent whose reader read it, and its workspace. */
export interface SessionInfo {
  agent: string;
  workspace?: string;
}

export interface SessionSummary {
  path: string;
  agent: string;
  workspace?: string;
  startTime?: string;
  endTime?: string;
  messageCount?: number;
}

export interface EpisodicSource {
  readonly name: string;
  health(): Promise<EpisodicHealth>;
  search(query: string, options: EpisodicSearchOptions): Promise<EpisodicSearchResult>;
  listSessions(options: { days?: number; workspace?: string; agents?: string[] }): Promise<SessionSummary[]>;
  /** The session as text, or null when it cannot be read. */
  export(sessionPath: string, format: "markdown" | "text" | "json"): Promise<string | null>;
  expand(sessionPath: string, line: number, context: number): Promise<string | null>;
  /**
   * Which agent wrote a session file, as the reader that reads it says (never guessed from the
   * path); null when the source cannot read it. Optional: callers fall back to path hints.
   */
  describe?(sessionPath: string): Promise<SessionInfo | null>;
}

// ---------------------------------------------------------------------------------------------
// The user's workspace (read-only): used to run bullets' verification checks.

export interface WorkspaceFiles {
  // Both methods confine reads to the workspace `base`: a path that leads outside it (absolute,
  // `..`, a symbolic link pointing elsewhere) is reported as missing / unreadable.
  /** True when `path` (relative to `base`) exists inside it as a file or directory. */
  exists(base: string, path: string): Promise<boolean>;
  /** The file's text (at most `maxBytes`), or null when it is missing or unreadable. */
  readText(base: string, path: string, maxBytes: number): Promise<string | null>;
}

// ---------------------------------------------------------------------------------------------
// Semantic search (optional): text embeddings and their cache.

/** Turns texts into vectors (an embeddings endpoint, a local model, or the test embedder). */
export interface Embedder {
  /** The model's name; cached vectors are kept per model. */
  readonly model: string;
  /**
   * One vector per text, in order, all of the same length. Rejects (never hangs) when the model
   * cannot answer; implementations enforce their own deadlines.
   */
  embed(texts: readonly string[]): Promise<number[][]>;
}

/** A cached bullet vector: the bullet's id and the content hash (`hashContent`) it was computed from. */
export interface EmbeddingCacheEntry {
  id: string;
  contentHash: string;
  embedding: number[];
}

/** Vectors already computed, reused while a bullet's content (its hash) is unchanged. */
export interface EmbeddingCache {
  /** Stored vectors of `model` for these content hashes; hashes without one are absent from the map. */
  get(model: string, hashes: readonly string[]): Promise<Map<string, number[]>>;
  /** Stores vectors of `model` (vectors of another model are discarded). */
  put(model: string, entries: readonly EmbeddingCacheEntry[]): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// Ranking (optional): what the ranker derives from text, kept between processes.

/**
 * `documents`: analysed rule texts. (The analysed concept map, once the part `concepts`, is built
 * from a plan kept in core's sources.)
 */
export type LexicalCachePart = "documents";

/**
 * Disposable derived data of the ranker (see domain/lexical-cache.ts). Values are plain JSON, or
 * bytes for the built index, that core validates itself; anything missing, stale or damaged is
 * simply computed again.
 */
export interface LexicalCache {
  /** The value saved under `part` with this fingerprint; null when there is none (or it cannot be read). */
  read(part: LexicalCachePart, fingerprint: string): Promise<unknown>;
  /** Replaces the value saved under `part`. Never rejects: a cache that cannot be written is only slower. */
  write(part: LexicalCachePart, fingerprint: string, value: unknown): Promise<void>;
  /**
   * The built index saved with this fingerprint (which names the exact rule texts), as bytes; null
   * when there is none. Optional: without it the index is rebuilt from the saved analyses.
   */
  readIndex?(fingerprint: string): Promise<Uint8Array | null>;
  /** Replaces the saved index. Never rejects. */
  writeIndex?(fingerprint: string, bytes: Uint8Array): Promise<void>;
  /**
   * A collision-resistant digest of `text` (hex), computed by the host (natively for long texts). Optional: when
   * present, the saved index is keyed by one digest of all rule texts instead of per-rule hashes
   * computed in JavaScript (which dominate a short process at 10,000 rules).
   */
  digest?(text: string): string;
}

// ---------------------------------------------------------------------------------------------
// Everything an operation may use.

export interface OperationDeps {
  store: Store;
  episodic: EpisodicSource;
  clock: Clock;
  ids: IdGenerator;
  logger: Logger;
  config: Config;
  /** The program name used in hints and commands (`cm`). */
  cliName: string;
  /** Read access to the workspace for verification checks. */
  files: WorkspaceFiles;
  /** Who is acting, recorded in the audit journal (default: the program name). */
  actor?: string;
  /** What the composition root found about its environment (reported by `cm doctor`). */
  runtimeReport?: RuntimeReport;
  /** Diary writer, reflector, validator and auditor (reflect, diary, validate, audit). */
  learning?: LearningComponents;
  /**
   * Loads the embedder for semantic search. Called only when the configuration enables semantic
   * search (`semanticSearchEnabled`, `embeddingModel` not "none"), so hosts pay for loading a
   * model or an HTTP client only then. A rejection makes the operation fall back to keywords.
   */
  embedder?: () => Promise<Embedder>;
  /** Where bullet vectors are kept between runs (without it every run embeds every bullet). */
  embeddingCache?: EmbeddingCache;
  /** Where the ranker keeps analysed rule texts between runs (without it every process analyses them). */
  lexicalCache?: LexicalCache;
}

/** Facts only the host knows (core reads no environment), for diagnostics. All optional. */
export interface RuntimeReport {
  /** Version of the program running the operations. */
  version?: string;
  /** Configuration problems found while loading; the affected settings fell back to defaults. */
  configProblems?: string[];
  /** Loads the configuration again and returns its problems now (doctor re-checks after fixes). */
  recheckConfig?: () => Promise<string[]>;
  /** Names (never values) of the LLM credential sources that are set, e.g. `ANTHROPIC_API_KEY`. */
  llmCredentials?: string[];
  /** True when LLM use is switched off (`CASS_MEMORY_LLM=none`). */
  llmDisabled?: boolean;
  /**
   * The configured LLM command (`cliCommand`) and whether it exists as an executable (on PATH or
   * as a path). A command that does not exist is not a usable credential.
   */
  llmCommand?: { command: string; found: boolean };
  /** Whether the configured model can be used, as the learning commands will decide it. */
  llmStatus?: () => Promise<LlmStatus>;
  /**
   * Checks of things only the host can see (e.g. the Claude Code trauma guard installed in the
   * working directory); `cm doctor` appends them to its own. Must not reject.
   */
  hostChecks?: () => Promise<HealthCheck[]>;
  /**
   * Copies every data file of the store (both layers) aside before a rewrite such as the doctor's
   * secret redaction; returns the backup paths. `reason` names the backup directory.
   */
  backupStore?: (reason: string) => Promise<string[]>;
}

/** The outcome of resolving the configured model (never contacts it). */
export type LlmStatus =
  | { available: true; provider: string; model: string; local: boolean; baseUrl?: string }
  | { available: false; reason: string; hint: string };
