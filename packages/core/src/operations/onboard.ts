import * as z from "zod";
import {
  PlaybookGapAnalysisSchema,
  RULE_CATEGORIES,
  analyzePlaybookGaps,
  detectCategories,
  gapSearchQueries,
  scoreSessionForGaps,
  type PlaybookGapAnalysis,
  type RuleCategory,
} from "../domain/gap-analysis.js";
import { compileSanitizer } from "../domain/sanitize.js";
import { STOP_WORDS, tokenize } from "../domain/text.js";
import { agentFromSessionPath } from "../domain/curator.js";
import { AppError } from "../errors.js";
import { defineOperation } from "../operation.js";
import type { DegradedInfo, EpisodicHealth, HistoryHit, OperationDeps } from "../ports.js";
import { isActiveBullet, type Bullet } from "../schemas/playbook.js";
import type { OnboardingState } from "../schemas/records.js";
import { DegradedSchema, OlderHistorySchema, type OlderHistory } from "./context.js";
import { cassAvailableFrom } from "../episodic/availability.js";
import { GLOBAL_PROCESSED_LOG, normalizeSessionPath } from "./onboard-records.js";
import { EXAMPLE_RULES, extractionPrompt } from "./onboard-prompt.js";
import { loadMergedPlaybook, requireNonEmpty, requirePositiveInt } from "./shared.js";
import { lazySchema } from "../schemas/lazy.js";

/**
 * `cm onboard …` (reference §1.5.24): agent-native onboarding. The agent itself reads its past
 * sessions (through whatever EpisodicSource is configured) and turns them into playbook rules; these
 * operations tell it where the playbook is thin, which sessions to read, and how to extract rules,
 * and they remember which sessions were already done (`onboarding-state.json`).
 */

/** Fewer active rules than this means the playbook still needs onboarding. */
export const ONBOARDING_RULE_TARGET = 20;
export const SAMPLE_DEFAULT_LIMIT = 10;
export const SAMPLE_DEFAULT_DAYS = 90;
/** Hits asked of the source per sampling query. */
export const SAMPLE_HITS_PER_QUERY = 5;
/** Sampling queries run this many at a time. */
export const SAMPLE_CONCURRENCY = 3;
/** Session counts in the status cover this many days. */
export const STATUS_SESSION_DAYS = 365;

/** The broad queries `onboard sample` uses to find diverse sessions. */
export const DEFAULT_SAMPLE_QUERIES: readonly string[] = [
  "fix bug error",
  "implement feature",
  "refactor",
  "test",
  "documentation",
  "authentication",
  "database",
  "API",
  "performance",
  "debugging",
];
/** With `--fill-gaps` and nothing missing, the first five of the default queries are used. */
const FILL_GAPS_FALLBACK_QUERIES = DEFAULT_SAMPLE_QUERIES.slice(0, 5);

/** How much of a session is scanned for topic hints (the original's 5 000 characters). */
const TOPIC_SCAN_CHARS = 5_000;
/** How much of a session is compared with the playbook's rules for `relatedRules`. */
const RELATED_SCAN_CHARS = 100_000;
const RELATED_MAX = 5;
const RELATED_MIN_COVERAGE = 0.6;

// ---------------------------------------------------------------------------------------------
// Shapes

export const OnboardStatusSchema = lazySchema(() => z.object({
  /** Whether the `cass` CLI is installed and runs (the original's field; false without cass even when native readers answer). */
  cassAvailable: z.boolean(),
  /** Which EpisodicSource answers (`cass`, `native`, `auto`, `none`, …). */
  historySource: z.string(),
  /** Whether that source can answer (cass or the native session readers). */
  historyAvailable: z.boolean(),
  totalConversations: z.number(),
  totalMessages: z.number(),
  /** Active rules of the merged playbook. */
  playbookRules: z.number(),
  needsOnboarding: z.boolean(),
  /** Rules per 100 conversations (0 when no conversations are known). */
  onboardingRatio: z.number(),
  recommendation: z.string(),
}));
export type OnboardStatus = z.output<typeof OnboardStatusSchema>;

export const OnboardProgressSchema = lazySchema(() => z.object({
  sessionsProcessed: z.number(),
  rulesExtracted: z.number(),
  startedAt: z.string().nullable(),
  lastActivity: z.string().nullable(),
  hasStarted: z.boolean(),
}));
export type OnboardProgress = z.output<typeof OnboardProgressSchema>;

export const OnboardOverviewSchema = lazySchema(() => z.object({
  status: OnboardStatusSchema,
  progress: OnboardProgressSchema,
  gapAnalysis: PlaybookGapAnalysisSchema,
}));
export type OnboardOverview = z.output<typeof OnboardOverviewSchema>;

const ExampleRuleSchema = lazySchema(() => z.object({ rule: z.string(), category: z.string() }));

export const SessionSampleSchema = lazySchema(() => z.object({
  path: z.string(),
  agent: z.string(),
  workspace: z.string(),
  /** Sanitised: secrets are redacted. */
  snippet: z.string(),
  score: z.number(),
  gapScore: z.number().optional(),
  matchedCategories: z.array(z.string()).optional(),
  gapReason: z.string().optional(),
}));
export type SessionSample = z.output<typeof SessionSampleSchema>;

export const OnboardSampleResultSchema = lazySchema(() => z.object({
  status: OnboardStatusSchema,
  progress: OnboardProgressSchema,
  step: z.literal("sample"),
  sessions: z.array(SessionSampleSchema),
  totalFound: z.number(),
  filtered: z.number(),
  sessionsRemaining: z.number(),
  gapAnalysis: PlaybookGapAnalysisSchema.optional(),
  /** Present when the history source could not answer (the sessions are then empty or partial). */
  degraded: z.object({ cass: DegradedSchema.optional() }).optional(),
  /** No session found inside the window, but older unprocessed sessions exist: how many, and the flag that includes them. */
  olderSessions: OlderHistorySchema.optional(),
}));
export type OnboardSampleResult = z.output<typeof OnboardSampleResultSchema>;

export const OnboardReadResultSchema = lazySchema(() => z.object({
  status: OnboardStatusSchema,
  step: z.literal("read"),
  sessionPath: z.string(),
  /** The session as markdown, sanitised; null when the source could not read it. */
  sessionContent: z.string().nullable(),
  extractionPrompt: z.string(),
}));
export type OnboardReadResult = z.output<typeof OnboardReadResultSchema>;

export const RelatedRuleSchema = lazySchema(() => z.object({ id: z.string(), content: z.string(), similarity: z.number() }));

export const OnboardReadTemplateSchema = lazySchema(() => z.object({
  metadata: z.object({
    path: z.string(),
    agent: z.string(),
    workspace: z.string(),
    workspaceName: z.string(),
    /** Approximate: the number of non-empty lines of the exported session. */
    messageCount: z.number(),
    topicHints: z.array(z.string()),
  }),
  context: z.object({
    relatedRules: z.array(RelatedRuleSchema),
    playbookGaps: z.object({ critical: z.array(z.string()), underrepresented: z.array(z.string()) }),
    suggestedFocus: z.string(),
  }),
  extractionFormat: z.object({
    schema: z.object({ content: z.literal("string"), category: z.literal("string") }),
    categories: z.array(z.string()),
    examples: z.array(ExampleRuleSchema),
  }),
  sessionContent: z.string(),
}));
export type OnboardReadTemplate = z.output<typeof OnboardReadTemplateSchema>;

export const OnboardPromptResultSchema = lazySchema(() => z.object({
  status: OnboardStatusSchema,
  step: z.literal("prompt"),
  extractionPrompt: z.string(),
  categories: z.array(z.string()),
  examples: z.array(ExampleRuleSchema),
}));
export type OnboardPromptResult = z.output<typeof OnboardPromptResultSchema>;

export const OnboardGuidedResultSchema = lazySchema(() => z.object({
  status: OnboardStatusSchema,
  step: z.literal("guided"),
  categories: z.array(z.string()),
  examples: z.array(ExampleRuleSchema),
  extractionPrompt: z.string(),
}));
export type OnboardGuidedResult = z.output<typeof OnboardGuidedResultSchema>;

export const OnboardMarkDoneResultSchema = lazySchema(() => z.object({
  message: z.string(),
  sessionPath: z.string(),
  rulesExtracted: z.number(),
  skipped: z.boolean(),
}));
export type OnboardMarkDoneResult = z.output<typeof OnboardMarkDoneResultSchema>;

export const OnboardResetResultSchema = lazySchema(() => z.object({ message: z.string() }));

// ---------------------------------------------------------------------------------------------
// Shared reads

interface OnboardSnapshot {
  status: OnboardStatus;
  progress: OnboardProgress;
  gapAnalysis: PlaybookGapAnalysis;
  health: EpisodicHealth;
  active: Bullet[];
  state: OnboardingState | null;
}

async function sourceHealth(deps: OperationDeps): Promise<EpisodicHealth> {
  try {
    return await deps.episodic.health();
  } catch (error) {
    deps.logger.debug(`History source health check failed: ${error instanceof Error ? error.message : String(error)}`);
    return {
      available: false,
      name: deps.episodic.name,
      degraded: { available: false, reason: "OTHER", message: `History source '${deps.episodic.name}' failed its health check.` },
    };
  }
}

/** Conversations and messages of the last year, summed from the source's session list. */
async function sessionCounts(deps: OperationDeps, available: boolean): Promise<{ conversations: number; messages: number }> {
  if (!available) return { conversations: 0, messages: 0 };
  try {
    const sessions = await deps.episodic.listSessions({ days: STATUS_SESSION_DAYS });
    let messages = 0;
    for (const s of sessions) if (typeof s.messageCount === "number" && Number.isFinite(s.messageCount)) messages += s.messageCount;
    return { conversations: sessions.length, messages };
  } catch (error) {
    deps.logger.debug(`Listing sessions failed; counts are unknown: ${error instanceof Error ? error.message : String(error)}`);
    return { conversations: 0, messages: 0 };
  }
}

function recommendationFor(cli: string, source: string, health: EpisodicHealth, rules: number): string {
  if (!health.available) {
    // A source without a degraded report was switched off on purpose (`episodic: none`).
    if (!health.degraded) return `Session history is switched off (history source '${source}'); enable it in the configuration to analyse past sessions`;
    // The original only knew `cass`; other sources point at the diagnosis instead.
    return source === "cass" || source === "none"
      ? "Install cass first to enable historical session analysis"
      : `Session history is not available from the '${source}' source; run \`${cli} doctor\` to see why`;
  }
  if (rules === 0) return `Your playbook is empty! Run \`${cli} onboard guided\` to start extracting rules`;
  if (rules < 10) return `Your playbook has few rules. Run \`${cli} onboard guided\` to add more`;
  if (rules < 50) return `Consider running \`${cli} onboard sample\` to find more patterns`;
  return `Your playbook looks healthy. Use \`${cli} context\` for task-specific rules`;
}

export function progressOf(state: OnboardingState | null): OnboardProgress {
  const hasStarted = state !== null && state.processedSessions.length > 0;
  return {
    sessionsProcessed: state?.stats.totalSessionsProcessed ?? 0,
    rulesExtracted: state?.stats.totalRulesExtracted ?? 0,
    startedAt: hasStarted ? state.startedAt : null,
    lastActivity: hasStarted ? state.lastUpdatedAt : null,
    hasStarted,
  };
}

async function snapshot(deps: OperationDeps): Promise<OnboardSnapshot> {
  const [health, playbook, state] = await Promise.all([sourceHealth(deps), loadMergedPlaybook(deps), deps.store.readOnboardingState()]);
  const counts = await sessionCounts(deps, health.available);
  const active = playbook.bullets.filter((b) => isActiveBullet(b));
  const rules = active.length;
  const status: OnboardStatus = {
    cassAvailable: cassAvailableFrom(health),
    historySource: deps.episodic.name,
    historyAvailable: health.available,
    totalConversations: counts.conversations,
    totalMessages: counts.messages,
    playbookRules: rules,
    needsOnboarding: rules < ONBOARDING_RULE_TARGET,
    onboardingRatio: counts.conversations > 0 ? Math.round((rules / counts.conversations) * 10_000) / 100 : 0,
    recommendation: recommendationFor(deps.cliName, deps.episodic.name, health, rules),
  };
  return { status, progress: progressOf(state), gapAnalysis: analyzePlaybookGaps(active), health, active, state };
}

/** The agent whose reader read the session (the source knows it), or null when the source cannot tell. */
async function describeSession(deps: OperationDeps, sessionPath: string): Promise<string | null> {
  try {
    const info = await deps.episodic.describe?.(sessionPath);
    return info?.agent !== undefined && info.agent !== "" ? info.agent : null;
  } catch {
    return null;
  }
}

/** A dirname that works on the paths sources report (POSIX or Windows separators). */
function dirnameOf(path: string): string {
  const trimmed = path.replace(/[\\/]+$/, "");
  const cut = Math.max(trimmed.lastIndexOf("/"), trimmed.lastIndexOf("\\"));
  if (cut < 0) return ".";
  if (cut === 0) return trimmed.slice(0, 1);
  return trimmed.slice(0, cut);
}

function basenameOf(path: string): string {
  const trimmed = path.replace(/[\\/]+$/, "");
  const cut = Math.max(trimmed.lastIndexOf("/"), trimmed.lastIndexOf("\\"));
  return cut < 0 ? trimmed : trimmed.slice(cut + 1);
}

// ---------------------------------------------------------------------------------------------
// status / gaps

const EmptyInputSchema = lazySchema(() => z.object({}));

export const onboardStatusOperation = defineOperation({
  name: "onboard_status",
  command: "onboard:status",
  description: "Onboarding status: history availability, playbook size, progress so far and the playbook's category gaps.",
  input: EmptyInputSchema,
  output: OnboardOverviewSchema,
  async run(deps): Promise<OnboardOverview> {
    const { status, progress, gapAnalysis } = await snapshot(deps);
    return { status, progress, gapAnalysis };
  },
});

export const onboardGapsOperation = defineOperation({
  name: "onboard_gaps",
  command: "onboard:gaps",
  description: "Playbook gap analysis: active rules per standard category, the empty and thin categories, and what to add.",
  input: EmptyInputSchema,
  output: OnboardOverviewSchema,
  async run(deps): Promise<OnboardOverview> {
    const { status, progress, gapAnalysis } = await snapshot(deps);
    return { status, progress, gapAnalysis };
  },
});

// ---------------------------------------------------------------------------------------------
// sample

export const OnboardSampleInputSchema = lazySchema(() => z.object({
  limit: z.number().optional(),
  /** Search for sessions about the playbook's empty and thin categories, best candidates first. */
  fillGaps: z.boolean().optional(),
  /** Also offer sessions already processed (marked done or mined with `playbook add --session`). */
  includeProcessed: z.boolean().optional(),
  workspace: z.string().optional(),
  agent: z.string().optional(),
  days: z.number().optional(),
}));
export type OnboardSampleInput = z.input<typeof OnboardSampleInputSchema>;

function processedPaths(state: OnboardingState | null): Set<string> {
  const out = new Set<string>();
  for (const s of state?.processedSessions ?? []) {
    const p = normalizeSessionPath(s.path);
    if (p !== "") out.add(p);
  }
  return out;
}

export const onboardSampleOperation = defineOperation({
  name: "onboard_sample",
  command: "onboard:sample",
  description:
    "Sample diverse past sessions to mine for playbook rules (optionally those that fill category gaps), skipping sessions already processed.",
  input: OnboardSampleInputSchema,
  output: OnboardSampleResultSchema,
  async run(deps, input): Promise<OnboardSampleResult> {
    const cli = deps.cliName;
    const limit = requirePositiveInt("limit", input.limit, SAMPLE_DEFAULT_LIMIT, 1, `Example: ${cli} onboard sample --limit 5 --json`);
    const days = requirePositiveInt("days", input.days, SAMPLE_DEFAULT_DAYS, 1, `Example: ${cli} onboard sample --days 14 --json`);
    const workspace = input.workspace === undefined ? undefined : requireNonEmpty("workspace", input.workspace, `Example: ${cli} onboard sample --workspace . --json`);
    const agent = input.agent === undefined ? undefined : requireNonEmpty("agent", input.agent, `Example: ${cli} onboard sample --agent claude --json`);
    const fillGaps = Boolean(input.fillGaps);

    const { status, progress, gapAnalysis, health, state } = await snapshot(deps);
    const sanitizer = compileSanitizer(deps.config.sanitization);
    const gapQueries = fillGaps ? gapSearchQueries(gapAnalysis) : [];
    const queries = fillGaps ? (gapQueries.length > 0 ? gapQueries : FILL_GAPS_FALLBACK_QUERIES) : DEFAULT_SAMPLE_QUERIES;

    const found = new Map<string, SessionSample>();
    let degraded: DegradedInfo | undefined;
    if (!health.available) {
      // No searches: the source said it cannot answer (and why, unless history is switched off).
      degraded = health.degraded;
    } else {
      const wanted = limit * 2;
      for (let i = 0; i < queries.length && found.size < wanted; i += SAMPLE_CONCURRENCY) {
        const batch = queries.slice(i, i + SAMPLE_CONCURRENCY);
        const results = await Promise.all(
          batch.map(async (query) => {
            try {
              return await deps.episodic.search(query, {
                limit: SAMPLE_HITS_PER_QUERY,
                days,
                ...(workspace !== undefined ? { workspace } : {}),
                ...(agent !== undefined ? { agents: [agent] } : {}),
              });
            } catch (error) {
              deps.logger.debug(`Sampling query '${query}' failed: ${error instanceof Error ? error.message : String(error)}`);
              return { hits: [] as HistoryHit[] };
            }
          }),
        );
        for (const result of results) {
          if (result.degraded && degraded === undefined) degraded = result.degraded;
          for (const hit of result.hits) {
            if (!hit.source_path || found.has(hit.source_path)) continue;
            const snippet = sanitizer.sanitize(hit.snippet ?? "");
            const sample: SessionSample = {
              path: hit.source_path,
              agent: hit.agent,
              workspace: hit.workspace || dirnameOf(hit.source_path),
              snippet,
              score: typeof hit.score === "number" && Number.isFinite(hit.score) ? hit.score : 0,
            };
            if (fillGaps) {
              const gap = scoreSessionForGaps(snippet, gapAnalysis);
              sample.gapScore = gap.score;
              sample.matchedCategories = gap.matchedCategories;
              sample.gapReason = gap.reason;
            }
            found.set(hit.source_path, sample);
          }
        }
      }
    }

    const all = [...found.values()];
    const done = input.includeProcessed ? new Set<string>() : processedPaths(state);
    const fresh = all.filter((s) => !done.has(normalizeSessionPath(s.path)));
    // Array.prototype.sort is stable: equal gap scores keep the order the searches found them in.
    if (fillGaps) fresh.sort((a, b) => (b.gapScore ?? 0) - (a.gapScore ?? 0));
    const sessions = fresh.slice(0, limit);
    const olderSessions =
      sessions.length === 0 && health.available && degraded === undefined
        ? await olderUnprocessedSessions(deps, days, done, workspace, agent)
        : undefined;
    return {
      status,
      progress,
      step: "sample",
      sessions,
      totalFound: all.length,
      filtered: all.length - fresh.length,
      sessionsRemaining: sessions.length,
      ...(fillGaps ? { gapAnalysis } : {}),
      ...(degraded ? { degraded: { cass: degraded } } : {}),
      ...(olderSessions ? { olderSessions } : {}),
    };
  },
});

/**
 * Unprocessed sessions that end before the sampling window: counted when the window held none, so
 * that "nothing found" can say that older sessions exist and which `--days` includes them.
 */
async function olderUnprocessedSessions(
  deps: OperationDeps,
  days: number,
  done: ReadonlySet<string>,
  workspace: string | undefined,
  agent: string | undefined,
): Promise<OlderHistory | undefined> {
  const filters = { ...(workspace !== undefined ? { workspace } : {}), ...(agent !== undefined ? { agents: [agent] } : {}) };
  let all;
  let recent;
  try {
    [all, recent] = await Promise.all([deps.episodic.listSessions(filters), deps.episodic.listSessions({ ...filters, days })]);
  } catch (error) {
    deps.logger.debug(`Listing older sessions failed: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
  // The source decides what lies inside the window (a session without times counts by its file's age).
  const inWindow = new Set(recent.map((s) => normalizeSessionPath(s.path)));
  const now = deps.clock.now().getTime();
  let count = 0;
  let oldest = Number.POSITIVE_INFINITY;
  let undated = false;
  for (const s of all) {
    const path = normalizeSessionPath(s.path);
    if (done.has(path) || inWindow.has(path)) continue;
    count++;
    const at = Date.parse(s.endTime ?? s.startTime ?? "");
    if (Number.isFinite(at)) oldest = Math.min(oldest, at);
    else undated = true;
  }
  if (count === 0) return undefined;
  // Undated sessions: a year is the widest window the status counts over.
  const needed = Math.max(days + 1, Number.isFinite(oldest) ? Math.ceil((now - oldest) / 86_400_000) : 0, undated ? Math.max(days + 1, 365) : 0);
  const flag = `--days ${needed}`;
  return {
    sessions: count,
    days,
    flag,
    message: `No unprocessed sessions in the last ${days} days, but ${count} older unprocessed session(s) exist; use ${flag} to include them.`,
  };
}

// ---------------------------------------------------------------------------------------------
// read

export const OnboardReadInputSchema = lazySchema(() => z.object({
  /** The session file (absolute; front ends resolve `~` and relative paths). */
  path: z.string(),
}));
export type OnboardReadInput = z.input<typeof OnboardReadInputSchema>;

/** The session's text from the source (markdown), sanitised; null when it cannot be read. */
async function readSession(deps: OperationDeps, sessionPath: string): Promise<string | null> {
  let content: string | null;
  try {
    content = await deps.episodic.export(sessionPath, "markdown");
  } catch (error) {
    deps.logger.debug(`Export of ${sessionPath} failed: ${error instanceof Error ? error.message : String(error)}`);
    return null;
  }
  if (content === null || content.trim() === "") return null;
  return compileSanitizer(deps.config.sanitization).sanitize(content);
}

function requireSessionPath(deps: OperationDeps, raw: string, name: string, example: string): string {
  requireNonEmpty(name, raw, `Example: ${deps.cliName} ${example}`);
  return normalizeSessionPath(raw);
}

export const onboardReadOperation = defineOperation({
  name: "onboard_read",
  command: "onboard:read",
  description: "Read one past session (sanitised markdown) together with the rule-extraction instructions.",
  input: OnboardReadInputSchema,
  output: OnboardReadResultSchema,
  async run(deps, input): Promise<OnboardReadResult> {
    const sessionPath = requireSessionPath(deps, input.path, "read", "onboard read <path> --json");
    const [{ status }, sessionContent] = await Promise.all([snapshot(deps), readSession(deps, sessionPath)]);
    return { status, step: "read", sessionPath, sessionContent, extractionPrompt: extractionPrompt(deps.cliName) };
  },
});

/**
 * Active rules that a session already seems to cover: the share of a rule's words (stop words
 * left out) that occur in the session. Rules of fewer than two such words are not compared.
 */
export function relatedRulesFor(text: string, bullets: readonly Bullet[]): Array<{ id: string; content: string; similarity: number }> {
  const sessionTokens = new Set(tokenize(text.slice(0, RELATED_SCAN_CHARS)));
  const scored: Array<{ id: string; content: string; similarity: number }> = [];
  for (const b of bullets) {
    const words = new Set(tokenize(b.content).filter((t) => !STOP_WORDS.has(t)));
    if (words.size < 2) continue;
    let shared = 0;
    for (const w of words) if (sessionTokens.has(w)) shared++;
    const coverage = shared / words.size;
    if (shared >= 2 && coverage >= RELATED_MIN_COVERAGE) scored.push({ id: b.id, content: b.content, similarity: Math.round(coverage * 100) / 100 });
  }
  return scored.sort((a, b) => b.similarity - a.similarity).slice(0, RELATED_MAX);
}

/** One or two sentences on what to look for in this session, given its topics and the playbook's gaps. */
export function suggestedFocus(analysis: PlaybookGapAnalysis, topics: readonly RuleCategory[]): string {
  const critical = topics.filter((t) => analysis.gaps.critical.includes(t));
  const thin = topics.filter((t) => analysis.gaps.underrepresented.includes(t));
  const parts: string[] = [];
  if (critical.length > 0) parts.push(`This session touches ${critical.join(", ")}, where the playbook has no rules yet: extract those first.`);
  if (thin.length > 0) parts.push(`${critical.length > 0 ? "It also covers" : "This session covers"} ${thin.join(", ")}, which have only one or two rules: look for more.`);
  if (parts.length === 0) {
    parts.push(
      topics.length > 0
        ? `Extract ${topics.slice(0, 2).join(" and ")} rules from this session.`
        : "Look for debugging approaches, workflow habits, and tool or API gotchas worth keeping.",
    );
  }
  if (critical.length === 0 && analysis.gaps.critical.length > 0) {
    parts.push(`The playbook has no ${analysis.gaps.critical.slice(0, 3).join(", ")} rules at all, so note any you see.`);
  }
  return parts.join(" ");
}

export const onboardReadTemplateOperation = defineOperation({
  name: "onboard_read_template",
  command: "onboard:read-template",
  description:
    "Read one past session as an extraction template: metadata, topic hints, related rules, the playbook's gaps, the rule format, and the sanitised session.",
  input: OnboardReadInputSchema,
  output: OnboardReadTemplateSchema,
  async run(deps, input): Promise<OnboardReadTemplate> {
    const sessionPath = requireSessionPath(deps, input.path, "read", "onboard read <path> --template --json");
    const content = await readSession(deps, sessionPath);
    if (content === null) {
      throw new AppError("SESSION_NOT_FOUND", "Failed to read session", {
        hint: `Check the path; sessions to read are listed by '${deps.cliName} onboard sample --json'.`,
        details: { sessionPath },
      });
    }
    const playbook = await loadMergedPlaybook(deps);
    const active = playbook.bullets.filter((b) => isActiveBullet(b));
    const gapAnalysis = analyzePlaybookGaps(active);
    const topicHints = detectCategories(content.slice(0, TOPIC_SCAN_CHARS));
    const workspace = dirnameOf(sessionPath);
    return {
      metadata: {
        path: sessionPath,
        agent: (await describeSession(deps, sessionPath)) ?? agentFromSessionPath(sessionPath),
        workspace,
        workspaceName: basenameOf(workspace),
        messageCount: content.split("\n").filter((l) => l.trim() !== "").length,
        topicHints,
      },
      context: {
        relatedRules: relatedRulesFor(content, active),
        playbookGaps: { critical: gapAnalysis.gaps.critical, underrepresented: gapAnalysis.gaps.underrepresented },
        suggestedFocus: suggestedFocus(gapAnalysis, topicHints),
      },
      extractionFormat: {
        schema: { content: "string", category: "string" },
        categories: [...RULE_CATEGORIES],
        examples: EXAMPLE_RULES.map((e) => ({ ...e })),
      },
      sessionContent: content,
    };
  },
});

// ---------------------------------------------------------------------------------------------
// prompt / guided

export const onboardPromptOperation = defineOperation({
  name: "onboard_prompt",
  command: "onboard:prompt",
  description: "The instructions for extracting playbook rules from a session, with the categories and example rules.",
  input: EmptyInputSchema,
  output: OnboardPromptResultSchema,
  async run(deps): Promise<OnboardPromptResult> {
    const { status } = await snapshot(deps);
    return {
      status,
      step: "prompt",
      extractionPrompt: extractionPrompt(deps.cliName),
      categories: [...RULE_CATEGORIES],
      examples: EXAMPLE_RULES.map((e) => ({ ...e })),
    };
  },
});

export const onboardGuidedOperation = defineOperation({
  name: "onboard_guided",
  command: "onboard:guided",
  description: "The agent-native onboarding guide: status, categories, example rules and the extraction instructions.",
  input: EmptyInputSchema,
  output: OnboardGuidedResultSchema,
  async run(deps): Promise<OnboardGuidedResult> {
    const { status } = await snapshot(deps);
    return {
      status,
      step: "guided",
      categories: [...RULE_CATEGORIES],
      examples: EXAMPLE_RULES.map((e) => ({ ...e })),
      extractionPrompt: extractionPrompt(deps.cliName),
    };
  },
});

// ---------------------------------------------------------------------------------------------
// mark-done / reset / recording from `playbook add --session`

/**
 * Records that `rulesAdded` rules were taken from a session (`playbook add --session`): adds to
 * the session's count (one session can yield rules over several calls) and clears `skipped`.
 */
export async function recordSessionRules(deps: OperationDeps, sessionPath: string, rulesAdded: number): Promise<void> {
  const path = normalizeSessionPath(sessionPath);
  if (path === "" || rulesAdded <= 0) return;
  const nowIso = deps.clock.now().toISOString();
  await deps.store.mutateOnboardingState((state) => {
    const existing = state.processedSessions.find((s) => normalizeSessionPath(s.path) === path);
    if (existing) {
      existing.path = path;
      existing.processedAt = nowIso;
      existing.rulesExtracted += rulesAdded;
      delete existing.skipped;
    } else {
      state.processedSessions.push({ path, processedAt: nowIso, rulesExtracted: rulesAdded });
    }
    state.lastUpdatedAt = nowIso;
  }, { nowIso });
}

type ProcessedEntry = OnboardingState["processedSessions"][number];

export const OnboardMarkDoneInputSchema = lazySchema(() => z.object({
  /** The session file (absolute; front ends resolve `~` and relative paths). */
  path: z.string(),
}));

export const onboardMarkDoneOperation = defineOperation({
  name: "onboard_mark_done",
  command: "onboard:mark-done",
  description: "Mark a session as processed without extracting rules, so sampling no longer offers it.",
  input: OnboardMarkDoneInputSchema,
  output: OnboardMarkDoneResultSchema,
  async run(deps, input): Promise<OnboardMarkDoneResult> {
    const sessionPath = requireSessionPath(deps, input.path, "mark-done", "onboard mark-done <path> --json");
    const nowIso = deps.clock.now().toISOString();
    const entry = await deps.store.mutateOnboardingState((state) => {
      const index = state.processedSessions.findIndex((s) => normalizeSessionPath(s.path) === sessionPath);
      const previous = index >= 0 ? state.processedSessions[index] : undefined;
      // Rules already taken from the session (playbook add --session) stay counted.
      const kept = previous?.rulesExtracted ?? 0;
      const base: ProcessedEntry = { ...(previous ?? { path: sessionPath, processedAt: nowIso, rulesExtracted: 0 }) };
      delete base.skipped;
      const next: ProcessedEntry = { ...base, path: sessionPath, processedAt: nowIso, rulesExtracted: kept, ...(kept > 0 ? {} : { skipped: true }) };
      if (index >= 0) state.processedSessions[index] = next;
      else state.processedSessions.push(next);
      state.lastUpdatedAt = nowIso;
      return next;
    }, { nowIso });
    // The reflection log too, so that `reflect` does not pick the session up either.
    await deps.store.appendProcessedSessions(GLOBAL_PROCESSED_LOG, [{ sessionPath, processedAt: nowIso, deltasGenerated: 0 }]);
    return {
      message: "Session marked as processed",
      sessionPath,
      rulesExtracted: entry.rulesExtracted,
      skipped: entry.skipped === true,
    };
  },
});

export const OnboardResetInputSchema = lazySchema(() => z.object({
  /** Confirmation; without it the operation refuses (MISSING_REQUIRED). */
  yes: z.boolean().optional(),
}));

export const onboardResetOperation = defineOperation({
  name: "onboard_reset",
  command: "onboard:reset",
  description: "Forget onboarding progress (which sessions were processed). Requires yes: true.",
  input: OnboardResetInputSchema,
  output: OnboardResetResultSchema,
  async run(deps, input): Promise<{ message: string }> {
    if (!input.yes) {
      throw new AppError("MISSING_REQUIRED", "Confirmation required to reset onboarding progress", {
        hint: "Re-run with --yes",
        details: { missing: "confirmation" },
      });
    }
    const nowIso = deps.clock.now().toISOString();
    await deps.store.mutateOnboardingState((state) => {
      for (const key of Object.keys(state)) {
        if (key !== "version") delete (state as Record<string, unknown>)[key];
      }
      Object.assign(state, {
        startedAt: nowIso,
        lastUpdatedAt: nowIso,
        processedSessions: [],
        stats: { totalSessionsProcessed: 0, totalRulesExtracted: 0 },
      });
    }, { nowIso });
    return { message: "Onboarding progress reset" };
  },
});
