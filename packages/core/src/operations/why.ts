import * as z from "zod";
import { AppError } from "../errors.js";
import { DAY_MS, getEffectiveScore } from "../domain/scoring.js";
import { defineOperation } from "../operation.js";
import type { Layer, OperationDeps } from "../ports.js";
import { EvidenceSchema, VerificationSchema, type Bullet, type Playbook } from "../schemas/playbook.js";
import type { DiaryEntry } from "../schemas/records.js";
import { loadMergedPlaybook } from "./shared.js";
import { round2 } from "./top.js";
import { lazySchema } from "../schemas/lazy.js";

export const WhyInputSchema = lazySchema(() => z.object({
  bulletId: z.string(),
  /** More sources (10 instead of 5), feedback and journal events (20 instead of 8). */
  verbose: z.boolean().optional(),
}));
export type WhyInput = z.input<typeof WhyInputSchema>;

const FeedbackItemSchema = lazySchema(() => z.object({
  type: z.enum(["helpful", "harmful"]),
  timestamp: z.string(),
  sessionPath: z.string().optional(),
  reason: z.string().optional(),
  context: z.string().optional(),
}));

const JournalItemSchema = lazySchema(() => z.object({
  timestamp: z.string(),
  operation: z.string(),
  change: z.string(),
  actor: z.string(),
  layer: z.enum(["global", "repo"]),
  reason: z.string().optional(),
  source: z.string().optional(),
}));

export const WhyResultSchema = lazySchema(() => z.object({
  bullet: z.object({
    id: z.string(),
    content: z.string(),
    category: z.string(),
    maturity: z.string(),
    score: z.number(),
    createdAt: z.string(),
    daysAgo: z.number(),
  }),
  reasoning: z.string().nullable(),
  /** The bullet's source sessions (≤5, ≤10 verbose). `date`/`snippet` come from diaries: null until core can read them. */
  sourceSessions: z.array(z.object({ path: z.string(), date: z.string().nullable(), snippet: z.string().nullable() })),
  /** Double-quoted phrases of `reasoning` (the original's field). */
  evidence: z.array(z.string()),
  /** Up to 5 of the 50 newest diary entries written within 7 days of the bullet's creation. */
  diaryEntries: z.array(z.object({ date: z.string(), content: z.string() })),
  feedbackHistory: z.array(FeedbackItemSchema),
  currentStatus: z.object({
    helpfulCount: z.number(),
    harmfulCount: z.number(),
    effectiveness: z.enum(["Very high", "High", "Moderate", "Low", "Negative"]),
  }),
  /** Structured provenance (beyond the original): evidence items, verification check, validity window. */
  provenance: z.object({
    evidence: z.array(EvidenceSchema),
    verification: VerificationSchema.nullable(),
    validFrom: z.string().nullable(),
    validTo: z.string().nullable(),
    /** Where `now` lies relative to the validity window ("current" when there is none). */
    validity: z.enum(["current", "expired", "not_yet_valid"]),
  }),
  /** Audit-journal events of this bullet from both layers, newest first (≤8, ≤20 verbose). */
  journal: z.array(JournalItemSchema),
}));
export type WhyResult = z.output<typeof WhyResultSchema>;

type Effectiveness = WhyResult["currentStatus"]["effectiveness"];

export function effectivenessLabel(score: number, helpfulCount: number): Effectiveness {
  if (score >= 10 && helpfulCount >= 10) return "Very high";
  if (score >= 5 && helpfulCount >= 5) return "High";
  if (score >= 1) return "Moderate";
  if (score >= 0) return "Low";
  return "Negative";
}

/**
 * The bullet an id designates: the exact id, else the best fuzzy match over all ids
 * (case-insensitive: equal 3, prefix 2, substring 1). Several best matches → INVALID_INPUT
 * "Ambiguous bullet id"; none → BULLET_NOT_FOUND.
 */
export function resolveBulletId(playbook: Playbook, needle: string): Bullet {
  const exact = playbook.bullets.find((b) => b.id === needle);
  if (exact) return exact;
  const lower = needle.toLowerCase();
  let best = 0;
  let matches: Bullet[] = [];
  for (const b of playbook.bullets) {
    const id = b.id.toLowerCase();
    const score = id === lower ? 3 : id.startsWith(lower) ? 2 : id.includes(lower) ? 1 : 0;
    if (score === 0 || score < best) continue;
    if (score > best) {
      best = score;
      matches = [];
    }
    matches.push(b);
  }
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) {
    throw new AppError("BULLET_NOT_FOUND", `Bullet not found: ${needle}`, { details: { bulletId: needle } });
  }
  const ids = matches.map((b) => b.id);
  throw new AppError("INVALID_INPUT", `Ambiguous bullet id: ${needle}`, {
    hint: `Matches: ${ids.slice(0, 8).join(", ")}${ids.length > 8 ? ` … (+${ids.length - 8} more)` : ""}`,
    details: { bulletId: needle, matchCount: ids.length, matches: ids.slice(0, 50) },
  });
}

function timeOf(iso: string): number {
  const at = Date.parse(iso);
  return Number.isFinite(at) ? at : Number.NEGATIVE_INFINITY;
}

async function journalFor(deps: OperationDeps, bulletId: string, max: number): Promise<WhyResult["journal"]> {
  const layers: Layer[] = deps.store.locations.repoDir !== null ? ["global", "repo"] : ["global"];
  const perLayer = await Promise.all(layers.map((layer) => deps.store.readJournal(layer)));
  const events = perLayer.flat().filter((e) => e.bulletId === bulletId);
  // Newest first; the journal is appended in order, so for equal timestamps the later line wins.
  const indexed = events.map((event, index) => ({ event, index }));
  indexed.sort((a, b) => timeOf(b.event.timestamp) - timeOf(a.event.timestamp) || b.index - a.index);
  return indexed.slice(0, max).map(({ event }) => ({
    timestamp: event.timestamp,
    operation: event.operation,
    change: event.change,
    actor: event.actor,
    layer: event.layer,
    ...(event.reason !== undefined ? { reason: event.reason } : {}),
    ...(event.source !== undefined ? { source: event.source } : {}),
  }));
}

function validityOf(bullet: Bullet, nowMs: number): WhyResult["provenance"]["validity"] {
  const to = bullet.validTo !== undefined ? Date.parse(bullet.validTo) : Number.NaN;
  if (Number.isFinite(to) && nowMs > to) return "expired";
  const from = bullet.validFrom !== undefined ? Date.parse(bullet.validFrom) : Number.NaN;
  if (Number.isFinite(from) && nowMs < from) return "not_yet_valid";
  return "current";
}

/**
 * `cm why <bulletId>`: where a rule comes from and how it has fared (reference §1.5.9): its
 * reasoning, source sessions, quoted evidence, feedback history, plus its structured provenance
 * (evidence items, verification, validity window) and its audit-journal events. Looks in the merged
 * playbook, deprecated rules included.
 */
/** Diaries within this distance of a bullet's creation are "related" (reference §1.5.9). */
const DIARY_WINDOW_MS = 7 * DAY_MS;

/** One line for a diary entry: its learnings, else its accomplishments. */
function diarySummary(d: DiaryEntry): string {
  const parts = d.keyLearnings.length > 0 ? d.keyLearnings : d.accomplishments;
  return parts.slice(0, 3).join("; ");
}

export const whyOperation = defineOperation({
  name: "why",
  command: "why",
  description: "Explain where a playbook rule comes from: reasoning, sources, evidence, feedback and change history.",
  input: WhyInputSchema,
  output: WhyResultSchema,
  async run(deps, input): Promise<WhyResult> {
    const needle = input.bulletId.trim();
    if (needle === "") {
      throw new AppError("MISSING_REQUIRED", "Bullet ID is required", {
        details: { missing: "bulletId", usage: `${deps.cliName} why <bulletId>` },
      });
    }
    const verbose = input.verbose === true;
    const playbook = await loadMergedPlaybook(deps);
    const bullet = resolveBulletId(playbook, needle);

    const now = deps.clock.now();
    const score = getEffectiveScore(bullet, now, deps.config);
    const created = Date.parse(bullet.createdAt);
    const helpfulCount = bullet.helpfulCount || 0;

    const feedbackHistory = bullet.feedbackEvents
      .map((event, index) => ({ event, index }))
      .sort((a, b) => timeOf(b.event.timestamp) - timeOf(a.event.timestamp) || b.index - a.index)
      .slice(0, verbose ? 20 : 8)
      .map(({ event }) => ({
        type: event.type,
        timestamp: event.timestamp,
        ...(event.sessionPath !== undefined ? { sessionPath: event.sessionPath } : {}),
        ...(event.reason !== undefined ? { reason: event.reason } : {}),
        ...(event.context !== undefined ? { context: event.context } : {}),
      }));

    const quoted = bullet.reasoning?.match(/"[^"]+"/g) ?? [];
    const diaries = await deps.store.listDiaries({ limit: 50 });
    const diaryBySession = new Map<string, DiaryEntry>();
    for (const d of diaries) if (!diaryBySession.has(d.sessionPath)) diaryBySession.set(d.sessionPath, d);
    const nearCreation = Number.isFinite(created)
      ? diaries.filter((d) => Math.abs(Date.parse(d.timestamp) - created) <= DIARY_WINDOW_MS).slice(0, 5)
      : [];

    return {
      bullet: {
        id: bullet.id,
        content: bullet.content,
        category: bullet.category || "uncategorized",
        maturity: bullet.maturity || "candidate",
        score: round2(score),
        createdAt: bullet.createdAt,
        daysAgo: Number.isFinite(created) ? Math.floor((now.getTime() - created) / DAY_MS) : 0,
      },
      reasoning: bullet.reasoning ? bullet.reasoning : null,
      sourceSessions: bullet.sourceSessions
        .slice(0, verbose ? 10 : 5)
        .map((path) => {
          const diary = diaryBySession.get(path);
          return diary === undefined
            ? { path, date: null, snippet: null }
            : { path, date: diary.timestamp.slice(0, 10), snippet: diarySummary(diary) || null };
        }),
      evidence: quoted.map((q) => q.replace(/"/g, "")),
      diaryEntries: nearCreation.map((d) => ({ date: d.timestamp.slice(0, 10), content: diarySummary(d) })),
      feedbackHistory,
      currentStatus: {
        helpfulCount,
        harmfulCount: bullet.harmfulCount || 0,
        effectiveness: effectivenessLabel(score, helpfulCount),
      },
      provenance: {
        evidence: bullet.evidence ?? [],
        verification: bullet.verification ?? null,
        validFrom: bullet.validFrom ?? null,
        validTo: bullet.validTo ?? null,
        validity: validityOf(bullet, now.getTime()),
      },
      journal: await journalFor(deps, bullet.id, verbose ? 20 : 8),
    };
  },
});
