import * as z from "zod";
import { redactDeep } from "../domain/secrets.js";
import { redactFor } from "./secret-guard.js";
import { AppError, isAppError } from "../errors.js";
import { curatePlaybook, type CurationResult } from "../domain/curator.js";
import { parseInlineFeedback } from "../domain/inline-feedback.js";
import { mergePlaybooks } from "../domain/merge.js";
import { compileSanitizer } from "../domain/sanitize.js";
import { semanticDedupVectors } from "../domain/semantic.js";
import { sha256Hex } from "../domain/sha256.js";
import { hashContent, normalizeForHash } from "../domain/text.js";
import { validateDelta } from "../learning/evidence-gate.js";
import { effectiveMode, resolveLearning, type ResolvedLearning } from "../learning/fallback.js";
import { classifySessionOutcome, type OutcomeInput } from "../learning/outcomes.js";
import { MIN_TRANSCRIPT_CHARS, loadTranscript, writeDiaryEntry } from "../learning/session.js";
import { defineOperation } from "../operation.js";
import type { HistoryHit, Layer, OperationDeps, SessionSummary, SessionTranscript } from "../ports.js";
import { isActiveBullet, type Playbook } from "../schemas/playbook.js";
import { DeltaSchema, type Delta, type DiaryEntry, type ProcessedSession, type ReflectionRun } from "../schemas/records.js";
import { normalizeSessionPath, processedLogNameFor } from "./onboard-records.js";
import { recordOutcomes } from "./outcome.js";
import { loadMergedPlaybook, mutatePlaybookJournaled, requirePositiveInt } from "./shared.js";
import { lazySchema } from "../schemas/lazy.js";

/**
 * `cm reflect` (reference §1.5.14, §7.5): turns recent sessions into playbook changes.
 * For each unprocessed session: diary (working memory) → reflector deltas over a few iterations →
 * evidence-gated validation → inline `[cass: helpful|harmful <id>]` comments and the session's
 * implicit outcome. Then the deterministic curator applies the validated deltas to each layer
 * under its lock, the sessions are recorded as processed, and the run is logged with an id so
 * `cm undo --run <id>` can take back exactly its changes.
 */

export const DEFAULT_MAX_SESSIONS = 5;
/** Reflection stops proposing for a session once this many deltas were collected (reference §7.5). */
export const MAX_DELTAS_PER_SESSION = 50;
/** Category and provenance of a bullet created from a merge delta (reference §7.5 step 7). */
export const MERGED_CATEGORY = "merged";
export const MERGE_OPERATION_SESSION = "merged-operation";

export const ReflectInputSchema = lazySchema(() => z.object({
  days: z.number().optional(),
  maxSessions: z.number().optional(),
  agent: z.string().optional(),
  /** Absolute workspace path: sessions of that workspace, and its own processed log. */
  workspace: z.string().optional(),
  /** One session file (absolute path; front ends resolve relative paths). */
  session: z.string().optional(),
  dryRun: z.boolean().optional(),
}));
export type ReflectInput = z.output<typeof ReflectInputSchema>;

const CurationSummarySchema = lazySchema(() => z.looseObject({
  applied: z.number(),
  skipped: z.number(),
  bullets: z.number(),
  conflicts: z.array(z.object({ newBulletContent: z.string(), conflictingBulletId: z.string(), conflictingContent: z.string(), reason: z.string() })),
  promotions: z.array(z.looseObject({ bulletId: z.string(), from: z.string(), to: z.string(), reason: z.string() })),
  inversions: z.array(z.looseObject({ originalId: z.string(), antiPatternId: z.string(), reason: z.string() })),
  pruned: z.number(),
  decisionLog: z.array(
    z.looseObject({
      timestamp: z.string(),
      phase: z.string(),
      action: z.string(),
      bulletId: z.string().optional(),
      content: z.string().optional(),
      reason: z.string(),
    }),
  ),
}));
export type CurationSummary = z.output<typeof CurationSummarySchema>;

const SessionReportSchema = lazySchema(() => z.looseObject({
  path: z.string(),
  agent: z.string(),
  status: z.enum(["processed", "skipped", "failed"]),
  reason: z.string().optional(),
  diaryId: z.string().optional(),
  deltas: z.number(),
  rejected: z.number(),
}));

const ValidationReportSchema = lazySchema(() => z.looseObject({
  content: z.string(),
  valid: z.boolean(),
  verdict: z.string().optional(),
  reason: z.string(),
  sessionPath: z.string(),
  /** Kept without validation (no history to check it against): added as a draft candidate. */
  unvalidated: z.boolean().optional(),
}));

export const ReflectResultSchema = lazySchema(() => z.looseObject({
  global: CurationSummarySchema.optional(),
  repo: CurationSummarySchema.optional(),
  errors: z.array(z.string()),
  autoOutcome: z
    .looseObject({
      outcomesRecorded: z.number(),
      feedbackApplied: z.number(),
      missingRules: z.array(z.string()),
      inlineFeedbackDeltas: z.number(),
    })
    .optional(),
  /** Dry run: the validated deltas that would be curated. */
  deltas: z.array(DeltaSchema).optional(),
  // Beyond the original:
  runId: z.string().optional(),
  dryRun: z.boolean(),
  /**
   * What the run really used: "llm", "mixed" (an LLM stage failed and the deterministic component
   * answered from then on; `fallbacks` lists every stage that switched) or "deterministic".
   */
  mode: z.enum(["llm", "mixed", "deterministic"]),
  model: z.looseObject({ provider: z.string(), model: z.string() }).optional(),
  sessionsProcessed: z.number(),
  deltasGenerated: z.number(),
  /** Deltas the curator applied over both layers (the original MCP tool's field). */
  deltasApplied: z.number(),
  /** One-line summary, e.g. "Applied 4 changes from 2 sessions". */
  message: z.string(),
  sessions: z.array(SessionReportSchema),
  validation: z.array(ValidationReportSchema),
  fallbacks: z.array(z.object({ component: z.string(), reason: z.string(), code: z.string().optional() })),
  processedLog: z.string(),
}));
export type ReflectResult = z.output<typeof ReflectResultSchema>;

/** The key the reflector's deltas are de-duplicated by (reference §5.5). */
export function deltaKey(delta: Delta): string {
  switch (delta.type) {
    case "add":
      return `add:${hashContent(delta.bullet.content)}`;
    case "replace":
      return `replace:${delta.bulletId}:${normalizeForHash(delta.newContent)}`;
    case "merge":
      return `merge:${[...delta.bulletIds].sort().join(",")}`;
    default:
      return `${delta.type}:${delta.bulletId}`;
  }
}

interface SessionWork {
  summary: SessionSummary;
  transcript?: SessionTranscript;
  diary?: DiaryEntry;
  /** Other agents' sessions the diary was enriched with (audited when the diary is written). */
  others: HistoryHit[];
  deltas: Delta[];
  outcome?: OutcomeInput;
  inline: number;
}

export const reflectOperation = defineOperation({
  name: "memory_reflect",
  command: "reflect",
  description: "Learn from recent agent sessions: write diaries, propose and validate rules, and curate them into the playbook.",
  input: ReflectInputSchema,
  output: ReflectResultSchema,
  async run(deps, input): Promise<ReflectResult> {
    const days = requirePositiveInt("days", input.days, deps.config.sessionLookbackDays, 1, `${deps.cliName} reflect --days 7`);
    const maxSessions = requirePositiveInt("maxSessions", input.maxSessions, DEFAULT_MAX_SESSIONS, 1, `${deps.cliName} reflect --max-sessions 5`);
    const workspace = input.workspace?.trim() || undefined;
    const log = processedLogNameFor(workspace);
    const dryRun = Boolean(input.dryRun);
    const learning = resolveLearning(deps);

    // The mode is reported as it turned out (fallbacks happen during the run).
    const body = () => reflect(deps, learning, { ...input, days, maxSessions, workspace, log, dryRun }).then((r) => ({ ...r, mode: effectiveMode(learning) }));
    if (dryRun) return body();
    const lock = `${log}.processed.log.orchestrator`;
    return deps.store.exclusive(lock, body, { waitMs: 2_000 }).catch((error: unknown) => {
      if (isAppError(error) && error.code === "LOCK_ACQUISITION_FAILED" && (error.details as { lock?: unknown } | undefined)?.lock === lock) {
        throw new AppError("LOCK_ACQUISITION_FAILED", `Another reflection is already running on the ${log} log.`, {
          hint: `Wait for it to finish, then run '${deps.cliName} reflect' again (sessions it processes are skipped).`,
          details: { log },
          cause: error,
        });
      }
      throw error;
    });
  },
});

interface Resolved {
  days: number;
  maxSessions: number;
  agent?: string;
  workspace: string | undefined;
  session?: string;
  log: string;
  dryRun: boolean;
}

async function reflect(deps: OperationDeps, learning: ResolvedLearning, input: Resolved): Promise<ReflectResult> {
  const startedAt = deps.clock.now().toISOString();
  const errors: string[] = [];
  const result: ReflectResult = {
    errors,
    dryRun: input.dryRun,
    mode: learning.mode,
    ...(learning.model !== undefined ? { model: learning.model } : {}),
    sessionsProcessed: 0,
    deltasGenerated: 0,
    deltasApplied: 0,
    message: "No new sessions to reflect on",
    sessions: [],
    validation: [],
    fallbacks: learning.fallbacks,
    processedLog: input.log,
  };

  const processed = new Set((await deps.store.readProcessedSessions(input.log)).map((r) => normalizeSessionPath(r.sessionPath)));
  let candidates: SessionSummary[];
  try {
    candidates = await discoverSessions(deps, input, processed, result);
  } catch (error) {
    errors.push(`Session discovery failed: ${error instanceof Error ? error.message : String(error)}`);
    return result;
  }
  if (candidates.length === 0) {
    deps.logger.debug("No new sessions to reflect on.");
    return result;
  }

  const merged = await loadMergedPlaybook(deps);
  const works: SessionWork[] = [];
  const pending: ProcessedSession[] = [];
  for (const [index, summary] of candidates.entries()) {
    if (candidates.length > 1) deps.logger.info(`Reflecting on session ${index + 1}/${candidates.length}: ${summary.path}`);
    try {
      const work = await processSession(deps, learning, merged, summary, input, result);
      works.push(work);
      pending.push({
        sessionPath: summary.path,
        processedAt: deps.clock.now().toISOString(),
        ...(work.diary !== undefined ? { diaryId: work.diary.id } : {}),
        deltasGenerated: work.deltas.length,
      });
    } catch (error) {
      // llmFallback "none": a failed LLM stage fails the whole run before anything is written.
      if (learning.failures.length > 0) throw strictFailure(deps, learning, summary.path, error);
      const message = error instanceof Error ? error.message : String(error);
      errors.push(`Failed to process ${summary.path}: ${message}`);
      result.sessions.push({ path: summary.path, agent: summary.agent, status: "failed", reason: message, deltas: 0, rejected: 0 });
    }
  }

  // Learned rules come from redacted session text; a reflector may still echo a secret: redact.
  const deltas = works.flatMap((w) => w.deltas).map((d) => redactDeep(d, (text) => redactFor(deps.config, text)));
  result.sessionsProcessed = works.length;
  result.deltasGenerated = deltas.length;
  const outcomes = works.flatMap((w) => (w.outcome !== undefined ? [w.outcome] : []));
  const inlineCount = works.reduce((sum, w) => sum + w.inline, 0);

  const unvalidated = result.validation.filter((v) => v.valid && v.unvalidated === true).length;
  if (unvalidated > 0) {
    deps.logger.info(`${unvalidated} proposed rule(s) had no history to be validated against; they are added unvalidated, as draft candidates.`);
  }

  if (input.dryRun) {
    if (works.length > 0) result.deltas = deltas;
    result.message = `Would apply ${deltas.length} changes from ${works.length} sessions`;
    return result;
  }

  // Diaries are written only once every session went through (nothing half-written on failure).
  for (const work of works) {
    if (work.diary === undefined || work.transcript === undefined) continue;
    await deps.store.writeDiary(work.diary);
    if (work.others.length > 0 && deps.config.crossAgent.auditLog) await auditCrossAgent(deps, work.transcript, work.others);
  }

  const runId = `run-${deps.clock.now().getTime().toString(36)}-${deps.ids.hex(6)}`;
  const touched = new Set<string>();
  if (deltas.length > 0) {
    await curateIntoLayers(deps, deltas, runId, works.length, result, touched);
  }
  if (pending.length > 0) await deps.store.appendProcessedSessions(input.log, pending);
  result.deltasApplied = (result.global?.applied ?? 0) + (result.repo?.applied ?? 0);
  result.message = result.deltasApplied > 0 ? `Applied ${result.deltasApplied} changes from ${works.length} sessions` : "No new insights found";

  if (outcomes.length > 0 || inlineCount > 0) {
    let applied = 0;
    const missing: string[] = [];
    if (outcomes.length > 0) {
      try {
        const recorded = await recordOutcomes(deps, outcomes, { runId });
        applied = recorded.applied;
        missing.push(...recorded.missing);
        for (const id of recorded.touched) touched.add(id);
      } catch (error) {
        errors.push(`Auto-outcome recording failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    result.autoOutcome = { outcomesRecorded: outcomes.length, feedbackApplied: applied, missingRules: missing, inlineFeedbackDeltas: inlineCount };
  }

  if (touched.size > 0) {
    result.runId = runId;
    const run: ReflectionRun = {
      type: "run",
      runId,
      startedAt,
      finishedAt: deps.clock.now().toISOString(),
      mode: effectiveMode(learning),
      ...(learning.model !== undefined ? { model: learning.model } : {}),
      inputs: {
        days: input.days,
        maxSessions: input.maxSessions,
        ...(input.agent !== undefined ? { agent: input.agent } : {}),
        ...(input.workspace !== undefined ? { workspace: input.workspace } : {}),
        ...(input.session !== undefined ? { session: input.session } : {}),
      },
      sessions: works.map((w) => w.summary.path),
      deltasGenerated: deltas.length,
      applied: { global: result.global?.applied ?? 0, repo: result.repo?.applied ?? 0 },
      bulletIds: [...touched],
      errors: [...errors],
    };
    await deps.store.appendLog("global", "reflection-runs", [run]);
  }
  return result;
}

/** Sessions to reflect on: the one given, or the source's recent sessions minus processed and excluded ones. */
async function discoverSessions(deps: OperationDeps, input: Resolved, processed: ReadonlySet<string>, result: ReflectResult): Promise<SessionSummary[]> {
  if (input.session !== undefined && input.session.trim() !== "") {
    const path = normalizeSessionPath(input.session);
    if (processed.has(path)) {
      result.sessions.push({ path, agent: "unknown", status: "skipped", reason: "already processed", deltas: 0, rejected: 0 });
      return [];
    }
    return [{ path, agent: "" }];
  }
  const agentFilter = input.agent?.trim().toLowerCase();
  const sessions = await deps.episodic.listSessions({
    days: input.days,
    ...(input.workspace !== undefined ? { workspace: input.workspace } : {}),
    ...(agentFilter ? { agents: [agentFilter] } : {}),
  });
  const excluded = deps.config.sessionIncludeAll ? [] : deps.config.sessionExcludePatterns.map((p) => p.toLowerCase());
  const seen = new Set<string>();
  const picked: SessionSummary[] = [];
  const ordered = [...sessions].sort((a, b) => recency(b).localeCompare(recency(a)));
  for (const session of ordered) {
    const path = normalizeSessionPath(session.path);
    if (path === "" || seen.has(path) || processed.has(path)) continue;
    seen.add(path);
    if (agentFilter && session.agent.trim().toLowerCase() !== agentFilter) continue;
    const lower = path.toLowerCase();
    if (excluded.some((pattern) => pattern !== "" && lower.includes(pattern))) continue;
    picked.push({ ...session, path });
    if (picked.length >= input.maxSessions) break;
  }
  return picked;
}

function recency(s: SessionSummary): string {
  return s.endTime ?? s.startTime ?? "";
}

async function processSession(
  deps: OperationDeps,
  learning: ResolvedLearning,
  merged: Playbook,
  summary: SessionSummary,
  input: Resolved,
  result: ReflectResult,
): Promise<SessionWork> {
  const transcript = await loadTranscript(deps, summary.path, {
    ...(summary.agent !== "" ? { agent: summary.agent } : {}),
    ...(summary.workspace !== undefined ? { workspace: summary.workspace } : {}),
  });
  const work: SessionWork = { summary: { ...summary, agent: transcript.agent }, transcript, others: [], deltas: [], inline: 0 };
  if (transcript.text.trim().length < MIN_TRANSCRIPT_CHARS) {
    result.sessions.push({ path: summary.path, agent: transcript.agent, status: "processed", reason: "Session content too short", deltas: 0, rejected: 0 });
    return work;
  }

  const drafted = await writeDiaryEntry(deps, learning.diaryWriter, transcript);
  const history = await relatedHistory(deps, drafted, transcript);
  // Other agents' sessions (only with cross-agent consent) are recorded on the diary and audited.
  const others = history.filter((hit) => agentKey(hit.agent) !== agentKey(transcript.agent));
  const diary: DiaryEntry =
    others.length === 0
      ? drafted
      : {
          ...drafted,
          relatedSessions: others.map((hit) => ({
            sessionPath: hit.source_path,
            agent: hit.agent,
            relevanceScore: hit.score ?? 0,
            snippet: compileSanitizer(deps.config.sanitization).sanitize(hit.snippet).slice(0, 500),
          })),
        };
  work.diary = diary;
  work.others = others;
  const proposed: Delta[] = [];
  const keys = new Set<string>();
  const maxIterations = Math.max(1, Math.floor(deps.config.maxReflectorIterations));
  for (let iteration = 1; iteration <= maxIterations; iteration++) {
    const raw = await learning.reflector.reflect({ session: transcript, diary, playbook: merged, history, iteration, maxIterations, previous: proposed });
    let fresh = 0;
    for (const candidate of raw) {
      const parsed = DeltaSchema.safeParse(withSession(candidate, transcript.path, transcript.agent));
      if (!parsed.success) continue;
      const key = deltaKey(parsed.data);
      if (keys.has(key)) continue;
      keys.add(key);
      proposed.push(parsed.data);
      fresh++;
      if (proposed.length >= MAX_DELTAS_PER_SESSION) break;
    }
    if (fresh === 0 || proposed.length >= MAX_DELTAS_PER_SESSION) break;
  }

  let rejected = 0;
  for (const delta of proposed) {
    const verdict = await validateDelta(deps, delta, learning.validator, { excludeSessions: [transcript.path], sourceText: transcript.text });
    if (delta.type === "add") {
      result.validation.push({
        content: delta.bullet.content,
        valid: verdict.valid,
        ...(verdict.verdict !== undefined ? { verdict: verdict.verdict } : {}),
        reason: verdict.reason,
        sessionPath: transcript.path,
        ...(verdict.unvalidated === true ? { unvalidated: true } : {}),
      });
    }
    if (verdict.valid) work.deltas.push(verdict.delta);
    else rejected++;
  }

  const inlineIds = new Set<string>();
  for (const feedback of parseInlineFeedback(transcript.text)) {
    const key = `${feedback.type}:${feedback.bulletId}`;
    if (keys.has(key)) continue;
    keys.add(key);
    inlineIds.add(feedback.bulletId.toLowerCase());
    work.inline++;
    work.deltas.push(
      feedback.type === "helpful"
        ? { type: "helpful", bulletId: feedback.bulletId, sourceSession: transcript.path, ...(feedback.reason ? { context: feedback.reason } : {}) }
        : { type: "harmful", bulletId: feedback.bulletId, sourceSession: transcript.path, reason: "other", ...(feedback.reason ? { context: feedback.reason } : {}) },
    );
  }

  const outcome = classifySessionOutcome({
    text: transcript.text,
    status: diary.status,
    sessionPath: transcript.path,
    excludeIds: inlineIds,
    nowIso: deps.clock.now().toISOString(),
  });
  if (outcome !== null) work.outcome = outcome;

  result.sessions.push({
    path: summary.path,
    agent: transcript.agent,
    status: "processed",
    diaryId: diary.id,
    deltas: work.deltas.length,
    rejected,
  });
  return work;
}

/** The error of a run whose LLM stage failed while `llmFallback` is "none". */
function strictFailure(deps: OperationDeps, learning: ResolvedLearning, sessionPath: string, error: unknown): AppError {
  const failed = learning.failures[0]!;
  const code = isAppError(error) ? error.code : (failed.code ?? "LLM_API_ERROR");
  return new AppError(code as AppError["code"], `The LLM ${failed.component} failed on ${sessionPath} (${failed.reason}); llmFallback is "none", so the run stopped and nothing was written.`, {
    hint: `Check the model with '${deps.cliName} doctor', or set "llmFallback": "deterministic" in config.json to finish without the LLM.`,
    details: { component: failed.component, sessionPath, llmFallback: "none", ...(failed.code !== undefined ? { llmCode: failed.code } : {}) },
    cause: error,
  });
}

/** Add deltas carry the session they came from; helpful/harmful default to it (reference §7.3). */
function withSession(candidate: unknown, sessionPath: string, agent: string): unknown {
  if (candidate === null || typeof candidate !== "object") return candidate;
  const delta = candidate as Record<string, unknown>;
  // The agent is the one the history source read the session as (not a guess from the path).
  if (delta.type === "add") return { ...delta, sourceSession: sessionPath, ...(agent !== "" && agent !== "unknown" ? { sourceAgent: agent } : {}) };
  if ((delta.type === "helpful" || delta.type === "harmful") && (typeof delta.sourceSession !== "string" || delta.sourceSession === "")) {
    return { ...delta, sourceSession: sessionPath };
  }
  return delta;
}

/**
 * An agent name to compare: history sources say `claude_code` where a name guessed from a path
 * (the original's convention) says `claude`.
 */
function agentKey(agent: string): string {
  return agent.trim().toLowerCase().replace(/_code$/, "");
}

/**
 * Snippets of other sessions about the same things, for the reflector. Sessions of other agents
 * are included only with cross-agent consent (config `crossAgent`), as in the original.
 */
async function relatedHistory(deps: OperationDeps, diary: DiaryEntry, transcript: SessionTranscript): Promise<HistoryHit[]> {
  const query = diary.searchAnchors.slice(0, 5).join(" ").trim();
  if (query === "" || deps.config.maxRelatedSessions <= 0) return [];
  const cross = deps.config.crossAgent;
  const allowOthers = cross.enabled && cross.consentGiven;
  const allowList = new Set(cross.agents.map((a) => a.toLowerCase()));
  try {
    const found = await deps.episodic.search(query, { limit: deps.config.maxRelatedSessions * 3, days: deps.config.relatedSessionsDays, timeoutMs: 5_000 });
    return found.hits
      .filter((hit) => normalizeSessionPath(hit.source_path) !== transcript.path)
      .filter((hit) => {
        if (agentKey(hit.agent) === agentKey(transcript.agent)) return true;
        return allowOthers && (allowList.size === 0 || allowList.has(hit.agent.toLowerCase()));
      })
      .slice(0, deps.config.maxRelatedSessions);
  } catch (error) {
    deps.logger.debug(`Related history search failed: ${error instanceof Error ? error.message : String(error)}`);
    return [];
  }
}

/**
 * One privacy-audit record per session enriched with other agents' history (reference §4.7): in
 * the repository's `.cass/` when there is one, else the global directory. The session path is
 * recorded only as a hash.
 */
async function auditCrossAgent(deps: OperationDeps, transcript: SessionTranscript, others: readonly HistoryHit[]): Promise<void> {
  const layer = deps.store.locations.repoDir !== null ? "repo" : "global";
  await deps.store.appendLog(layer, "privacy-audit", [
    {
      timestamp: deps.clock.now().toISOString(),
      event: "cross_agent_enrichment",
      sourceAgent: transcript.agent,
      sourceSessionHash: sha256Hex(transcript.path).slice(0, 16),
      relatedSessionCount: others.length,
      relatedAgents: [...new Set(others.map((hit) => hit.agent))].sort(),
      allowlistAgents: [...deps.config.crossAgent.agents],
    },
  ]);
}

/**
 * Applies the run's deltas: merges decomposed, each delta routed to the layer that holds its bullet
 * (repo first), new bullets to the global playbook; each layer curated under its lock against a
 * fresh merged view.
 */
async function curateIntoLayers(
  deps: OperationDeps,
  deltas: readonly Delta[],
  runId: string,
  sessions: number,
  result: ReflectResult,
  touched: Set<string>,
): Promise<void> {
  const hasRepo = deps.store.locations.repoDir !== null;
  const [global, repo] = await Promise.all([deps.store.readPlaybook("global"), hasRepo ? deps.store.readPlaybook("repo") : Promise.resolve(null)]);
  const repoIds = new Set((repo?.bullets ?? []).map((b) => b.id));
  const view = mergePlaybooks(global, repo, [], deps.clock.now().toISOString());
  const expanded = decomposeMerges(deps, deltas, view);
  // Semantic de-duplication (semantic search enabled): embed before taking the locks.
  const addContents = expanded.flatMap((d) => (d.type === "add" && typeof d.bullet?.content === "string" ? [d.bullet.content] : []));
  const semantic = await semanticDedupVectors(deps, view.bullets, addContents, compileSanitizer(deps.config.sanitization).sanitize);
  const routed: Record<Layer, Delta[]> = { global: [], repo: [] };
  for (const delta of expanded) {
    const target = "bulletId" in delta && typeof delta.bulletId === "string" && repoIds.has(delta.bulletId) ? "repo" : "global";
    routed[target].push(delta);
  }
  const nowIso = deps.clock.now().toISOString();
  for (const layer of ["global", "repo"] as const) {
    if (routed[layer].length === 0) continue;
    const curation = await mutatePlaybookJournaled(deps, layer, { operation: "curate", runId, source: runId }, async (playbook) => {
      const other = hasRepo ? await deps.store.readPlaybook(layer === "global" ? "repo" : "global") : null;
      const reference = layer === "global" ? mergePlaybooks(playbook, other, [], nowIso) : mergePlaybooks(other, playbook, [], nowIso);
      const curated = curatePlaybook(playbook, routed[layer], {
        config: deps.config,
        now: deps.clock.now(),
        ids: deps.ids,
        reference,
        ...(semantic !== undefined ? { semantic } : {}),
      });
      const before = new Map(playbook.bullets.map((b) => [b.id, b]));
      playbook.bullets = curated.playbook.bullets;
      playbook.metadata = {
        ...playbook.metadata,
        lastReflection: nowIso,
        ...(layer === "global"
          ? { totalReflections: (playbook.metadata.totalReflections ?? 0) + 1, totalSessionsProcessed: (playbook.metadata.totalSessionsProcessed ?? 0) + sessions }
          : {}),
      };
      for (const bullet of playbook.bullets) if (before.get(bullet.id) !== bullet) touched.add(bullet.id);
      return curated;
    });
    result[layer] = summarize(curation, nowIso);
  }
}

/**
 * Merge deltas become plain adds and deprecations (reference §7.5 step 7): when the merged text
 * already exists as an active rule the others are deprecated into it; when it matches a deprecated
 * rule the merge is dropped; otherwise a new rule is added and the sources deprecated into it.
 */
function decomposeMerges(deps: OperationDeps, deltas: readonly Delta[], view: Playbook): Delta[] {
  const out: Delta[] = [];
  const byHash = new Map<string, { id: string; active: boolean }>();
  for (const b of view.bullets) {
    const hash = hashContent(b.content);
    const existing = byHash.get(hash);
    if (existing === undefined || (!existing.active && isActiveBullet(b))) byHash.set(hash, { id: b.id, active: isActiveBullet(b) });
  }
  for (const delta of deltas) {
    if (delta.type !== "merge") {
      out.push(delta);
      continue;
    }
    const ids = [...new Set(delta.bulletIds)];
    if (ids.length < 2) continue;
    const match = byHash.get(hashContent(delta.mergedContent));
    if (match !== undefined && !match.active) continue;
    let targetId: string;
    if (match !== undefined) {
      targetId = match.id;
    } else {
      const first = view.bullets.find((b) => b.id === ids[0]);
      targetId = deps.ids.bulletId();
      out.push({
        type: "add",
        bullet: { id: targetId, content: delta.mergedContent, category: first?.category ?? MERGED_CATEGORY },
        reason: delta.reason ?? `Merged ${ids.join(", ")}`,
        sourceSession: MERGE_OPERATION_SESSION,
      });
    }
    for (const id of ids) {
      if (id === targetId) continue;
      out.push({ type: "deprecate", bulletId: id, reason: `Merged into ${targetId}`, replacedBy: targetId });
    }
  }
  return out;
}

function summarize(curation: CurationResult, nowIso: string): CurationSummary {
  return {
    applied: curation.applied,
    skipped: curation.skipped,
    bullets: curation.playbook.bullets.length,
    conflicts: curation.conflicts,
    promotions: curation.promotions.map((p) => ({ ...p, reason: `Promoted from ${p.from} to ${p.to} by feedback` })),
    inversions: curation.inversions.map((i) => ({ ...i, reason: "Marked harmful repeatedly; inverted to an anti-pattern" })),
    pruned: curation.pruned,
    decisionLog: curation.decisions.map((d) => ({
      timestamp: nowIso,
      phase: "curation",
      action: d.action,
      ...(d.bulletId !== undefined ? { bulletId: d.bulletId } : {}),
      ...(d.delta.type === "add" ? { content: d.delta.bullet.content } : {}),
      reason: d.reason,
    })),
  };
}
