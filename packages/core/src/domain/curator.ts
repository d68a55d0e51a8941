import type { IdGenerator } from "../ports.js";
import type { Config } from "../schemas/config.js";
import { isActiveBullet } from "./bullet-state.js";
import type { Bullet, FeedbackEvent, Maturity, Playbook } from "../schemas/playbook.js";
import type { Delta } from "../schemas/records.js";
import { buildConflictIndex, conflictMetaOf, detectConflictsIndexed, type ConflictMeta } from "./conflicts.js";
import { normalizeHarmfulReason } from "./feedback.js";
import { checkForDemotion, checkForPromotion, getDecayedCounts } from "./scoring.js";
import { cosineSimilarity } from "./semantic.js";
import { hashContent, tokenSet } from "./text.js";
import type { OmitKnown } from "./types.js";

/**
 * The deterministic curator (reference §5.4, §5.5, §5.17): applies reflector deltas to one playbook
 * layer, then inverts harmful rules into anti-patterns, then promotes/demotes. No LLM, no clock:
 * time and ids come from the context, and the target playbook is never mutated.
 */

export interface NewBulletContext {
  config: Config;
  now: Date;
  ids: IdGenerator;
}

export interface CurateContext extends NewBulletContext {
  /** The view used for de-duplication (normally the merged global + repo playbook). */
  reference: Playbook;
  /**
   * Semantic de-duplication, when semantic search is enabled: vectors by content hash, computed by
   * the caller before curation (curation itself stays synchronous and pure). After the exact and
   * keyword checks, an add whose vector has cosine ≥ `threshold` with a reference bullet's counts
   * as a similar duplicate. Contents without a vector are compared by keywords only.
   */
  semantic?: { vectors: ReadonlyMap<string, readonly number[]>; threshold: number };
}

export interface CurationConflict {
  newBulletContent: string;
  conflictingBulletId: string;
  conflictingContent: string;
  reason: string;
}

export interface CurationDecision {
  delta: Delta;
  action: "applied" | "skipped";
  reason: string;
  /** The bullet the delta touched or created, when there is one. */
  bulletId?: string;
}

export interface CurationResult {
  playbook: Playbook;
  applied: number;
  skipped: number;
  conflicts: CurationConflict[];
  promotions: Array<{ bulletId: string; from: Maturity; to: Maturity }>;
  inversions: Array<{ originalId: string; antiPatternId: string }>;
  pruned: number;
  decisions: CurationDecision[];
}

export const REINFORCED_EXACT = "Reinforced by exact duplicate insight";
export const REINFORCED_SIMILAR = "Reinforced by similar insight";
export const AUTO_DEPRECATE_REASON = "Auto-deprecated due to negative score";
export const NEGATIVE_RULE_HARMFUL_REASON = "Negative rule marked harmful (likely incorrect restriction)";
export const MERGED_SOURCE_SESSION = "merged";

/** Agent name guessed from a session path (reference §4.2). */
export function agentFromSessionPath(path: string): string {
  const lower = (path ?? "").toLowerCase().replace(/\\/g, "/");
  // Cline (and Roo) keep tasks under a VS Code extension folder whose name contains "claude".
  if (lower.includes("saoudrizwan.claude-dev") || lower.includes("rooveterinaryinc.roo-cline")) return "cline";
  if (lower.includes(".claude")) return "claude";
  if (lower.includes(".cursor")) return "cursor";
  if (lower.includes(".codex")) return "codex";
  if (lower.includes(".aider")) return "aider";
  if (lower.includes(".pi/agent/sessions")) return "pi_agent";
  return "unknown";
}

export type NewBulletFields = Pick<Bullet, "content" | "category"> &
  Partial<OmitKnown<Bullet, "content" | "category">> & {
    /** Provenance: becomes `sourceSessions: [s]` and `sourceAgents: [agent of s]` unless those are given. */
    sourceSession?: string;
  };

/**
 * A new bullet with the defaults of `playbook add` / reflect adds (reference §4.2): kind
 * workflow_rule, state draft, maturity candidate, source learned, zero feedback, decay half-life
 * from the config. Any field given (and not undefined) overrides its default.
 */
export function newBullet(fields: NewBulletFields, ctx: NewBulletContext): Bullet {
  const nowIso = ctx.now.toISOString();
  const { sourceSession, ...rest } = fields;
  const bullet: Bullet = {
    id: fields.id !== undefined && fields.id.trim() !== "" ? fields.id.trim() : ctx.ids.bulletId(),
    scope: "global",
    category: fields.category,
    content: fields.content,
    source: "learned",
    type: "rule",
    isNegative: false,
    kind: "workflow_rule",
    state: "draft",
    maturity: "candidate",
    helpfulCount: 0,
    harmfulCount: 0,
    feedbackEvents: [],
    confidenceDecayHalfLifeDays: ctx.config.scoring.decayHalfLifeDays,
    createdAt: nowIso,
    updatedAt: nowIso,
    pinned: false,
    deprecated: false,
    sourceSessions: sourceSession !== undefined && sourceSession !== "" ? [sourceSession] : [],
    sourceAgents: [agentFromSessionPath(sourceSession ?? "")],
    tags: [],
  };
  for (const [key, value] of Object.entries(rest)) {
    if (key === "id" || value === undefined) continue;
    (bullet as Record<string, unknown>)[key] = Array.isArray(value) ? [...value] : value;
  }
  return bullet;
}

/** A deprecated copy of `bullet` (state retired, maturity deprecated); `replacedBy` only when given. */
export function deprecateBullet(bullet: Bullet, reason: string, nowIso: string, replacedBy?: string): Bullet {
  const { replacedBy: _previous, ...rest } = bullet;
  return {
    ...rest,
    deprecated: true,
    deprecatedAt: nowIso,
    deprecationReason: reason,
    ...(replacedBy !== undefined ? { replacedBy } : {}),
    state: "retired",
    maturity: "deprecated",
    updatedAt: nowIso,
  };
}

const LEADING_DIRECTIVE = /^(always |prefer |use |try |consider |ensure )/i;

/** The anti-pattern that replaces a rule that proved harmful (reference §5.4). */
export function invertToAntiPattern(bullet: Bullet, ctx: NewBulletContext): Bullet {
  const nowIso = ctx.now.toISOString();
  const cleaned = bullet.content.replace(LEADING_DIRECTIVE, "").trim();
  return newBullet(
    {
      content: `AVOID: ${cleaned}. Marked harmful ${bullet.harmfulCount} times`,
      category: bullet.category,
      scope: bullet.scope,
      workspace: bullet.workspace,
      type: "anti-pattern",
      isNegative: true,
      kind: "anti_pattern",
      state: "active",
      sourceSessions: bullet.sourceSessions ?? [],
      sourceAgents: bullet.sourceAgents ?? [],
      tags: [...(bullet.tags ?? []), "inverted", "anti-pattern"],
    },
    ctx,
  );
}

/** A bullet of the dedup reference (merged view or added earlier in this batch). */
interface RefEntry {
  id: string;
  hash: string;
  tokens: ReadonlySet<string>;
  deprecated: boolean;
}

function isDeprecatedLike(b: Pick<Bullet, "deprecated" | "maturity" | "state">): boolean {
  return !isActiveBullet(b);
}

/** Applies `deltas` to a copy of `target` and runs the post-processing passes. */
interface DuplicateOutcome {
  deprecated: string;
  otherLayer: string;
  deprecatedInTarget: string;
  reinforced: string;
  eventContext: string;
}

const DUPLICATE_OUTCOMES: Readonly<Record<"exact" | "similar" | "semantic", DuplicateOutcome>> = {
  exact: {
    deprecated: "Exact duplicate exists but is deprecated",
    otherLayer: "Exact duplicate exists in other playbook layer",
    deprecatedInTarget: "Exact duplicate is deprecated in target; not reinforcing",
    reinforced: "Reinforced existing exact duplicate",
    eventContext: REINFORCED_EXACT,
  },
  similar: {
    deprecated: "Similar bullet exists but is deprecated; skipping to avoid resurrecting it",
    otherLayer: "Similar bullet exists in other playbook layer",
    deprecatedInTarget: "Similar bullet is deprecated in target; not reinforcing",
    reinforced: "Reinforced existing similar bullet",
    eventContext: REINFORCED_SIMILAR,
  },
  semantic: {
    deprecated: "Semantically similar bullet exists but is deprecated; skipping to avoid resurrecting it",
    otherLayer: "Semantically similar bullet exists in other playbook layer",
    deprecatedInTarget: "Semantically similar bullet is deprecated in target; not reinforcing",
    reinforced: "Reinforced existing semantically similar bullet",
    eventContext: REINFORCED_SIMILAR,
  },
};

export function curatePlaybook(target: Playbook, deltas: readonly Delta[], ctx: CurateContext): CurationResult {
  const { config, now } = ctx;
  const nowIso = now.toISOString();
  const threshold = config.dedupSimilarityThreshold;

  // Copy-on-write working set: bullets are cloned the first time they change.
  const bullets: Bullet[] = [...target.bullets];
  const indexById = new Map<string, number>();
  bullets.forEach((b, i) => {
    if (!indexById.has(b.id)) indexById.set(b.id, i);
  });
  const owned = new Set<Bullet>();
  const get = (id: string): Bullet | undefined => {
    const i = indexById.get(id);
    return i === undefined ? undefined : bullets[i];
  };
  const own = (id: string): Bullet => {
    const i = indexById.get(id)!;
    let b = bullets[i]!;
    if (!owned.has(b)) {
      b = structuredClone(b);
      bullets[i] = b;
      owned.add(b);
    }
    return b;
  };
  const replace = (id: string, next: Bullet): void => {
    bullets[indexById.get(id)!] = next;
    owned.add(next);
  };
  const append = (b: Bullet): void => {
    indexById.set(b.id, bullets.length);
    bullets.push(b);
    owned.add(b);
  };

  // Dedup reference, extended with each bullet this batch adds.
  const refEntries: RefEntry[] = ctx.reference.bullets.map((b) => ({
    id: b.id,
    hash: hashContent(b.content),
    tokens: tokenSet(b.content),
    deprecated: isDeprecatedLike(b),
  }));
  const firstByHash = new Map<string, RefEntry>();
  for (const e of refEntries) if (!firstByHash.has(e.hash)) firstByHash.set(e.hash, e);
  const conflictIndex: ConflictMeta[] = buildConflictIndex(ctx.reference.bullets);

  const result: CurationResult = {
    playbook: target,
    applied: 0,
    skipped: 0,
    conflicts: [],
    promotions: [],
    inversions: [],
    pruned: 0,
    decisions: [],
  };
  const decide = (delta: Delta, applied: boolean, reason: string, bulletId?: string): void => {
    if (applied) result.applied++;
    else result.skipped++;
    result.decisions.push({ delta, action: applied ? "applied" : "skipped", reason, ...(bulletId !== undefined ? { bulletId } : {}) });
  };

  const reinforce = (id: string, sourceSession: string | undefined, context: string): void => {
    const b = own(id);
    const event: FeedbackEvent = { type: "helpful", timestamp: nowIso, context };
    if (sourceSession !== undefined && sourceSession !== "") event.sessionPath = sourceSession;
    b.feedbackEvents.push(event);
    b.helpfulCount = (b.helpfulCount ?? 0) + 1;
    b.updatedAt = nowIso;
  };

  /** An add that duplicates an existing bullet reinforces it, unless that would revive a deprecated rule. */
  const settleDuplicate = (delta: Delta, match: { id: string; deprecated: boolean }, outcome: DuplicateOutcome): void => {
    const inTarget = get(match.id);
    if (match.deprecated) decide(delta, false, outcome.deprecated, match.id);
    else if (inTarget === undefined) decide(delta, false, outcome.otherLayer, match.id);
    else if (isDeprecatedLike(inTarget)) decide(delta, false, outcome.deprecatedInTarget, match.id);
    else {
      reinforce(match.id, delta.type === "add" ? delta.sourceSession : undefined, outcome.eventContext);
      decide(delta, true, outcome.reinforced, match.id);
    }
  };

  const alreadyRecorded = (b: Bullet, type: "helpful" | "harmful", session: string | undefined): boolean =>
    session !== undefined &&
    session !== "" &&
    b.feedbackEvents.some((e) => e.type === type && e.sessionPath !== undefined && e.sessionPath === session);

  for (const delta of deltas) {
    switch (delta.type) {
      case "add": {
        const content = delta.bullet?.content;
        const category = delta.bullet?.category;
        if (!content || !category) {
          decide(delta, false, "Missing required content or category");
          break;
        }
        for (const c of detectConflictsIndexed(content, conflictIndex)) {
          result.conflicts.push({
            newBulletContent: content,
            conflictingBulletId: c.bulletId,
            conflictingContent: c.content,
            reason: c.reason,
          });
        }

        const hash = hashContent(content);
        const exact = firstByHash.get(hash);
        if (exact !== undefined) {
          settleDuplicate(delta, exact, DUPLICATE_OUTCOMES.exact);
          break;
        }

        const tokens = tokenSet(content);
        const similar = findSimilar(tokens, refEntries, threshold);
        if (similar !== undefined) {
          settleDuplicate(delta, similar, DUPLICATE_OUTCOMES.similar);
          break;
        }
        const close = ctx.semantic !== undefined ? findSemanticDuplicate(hash, refEntries, ctx.semantic) : undefined;
        if (close !== undefined) {
          settleDuplicate(delta, close, DUPLICATE_OUTCOMES.semantic);
          break;
        }

        const requestedId = delta.bullet.id?.trim();
        if (requestedId && indexById.has(requestedId)) {
          decide(delta, false, `Bullet id already exists: ${requestedId}`, requestedId);
          break;
        }
        const fields: NewBulletFields = {
          content,
          category,
          ...(requestedId ? { id: requestedId } : {}),
          ...(delta.bullet.scope !== undefined ? { scope: delta.bullet.scope } : {}),
          ...(delta.bullet.workspace !== undefined ? { workspace: delta.bullet.workspace } : {}),
          ...(delta.bullet.kind !== undefined ? { kind: delta.bullet.kind } : {}),
          ...(delta.bullet.type !== undefined ? { type: delta.bullet.type } : {}),
          ...(delta.bullet.isNegative !== undefined ? { isNegative: delta.bullet.isNegative } : {}),
          ...(delta.bullet.searchPointer !== undefined ? { searchPointer: delta.bullet.searchPointer } : {}),
          ...(delta.bullet.tags !== undefined ? { tags: delta.bullet.tags } : {}),
          ...(delta.reason.trim() !== "" ? { reasoning: delta.reason.trim() } : {}),
          sourceSession: delta.sourceSession,
          // The agent the session was read as, when the delta carries it (reflect sets it).
          ...(typeof delta.sourceAgent === "string" && delta.sourceAgent.trim() !== "" ? { sourceAgents: [delta.sourceAgent.trim()] } : {}),
        };
        const created = newBullet(fields, ctx);
        append(created);
        const entry: RefEntry = { id: created.id, hash, tokens, deprecated: false };
        refEntries.push(entry);
        if (!firstByHash.has(hash)) firstByHash.set(hash, entry);
        conflictIndex.push(conflictMetaOf(created.id, created.content));
        decide(delta, true, "New bullet added to playbook", created.id);
        break;
      }

      case "helpful":
      case "harmful": {
        const current = get(delta.bulletId);
        if (current === undefined) {
          decide(delta, false, `Bullet not found for ${delta.type} feedback`, delta.bulletId);
          break;
        }
        if (alreadyRecorded(current, delta.type, delta.sourceSession)) {
          decide(delta, false, `${delta.type === "helpful" ? "Helpful" : "Harmful"} feedback already recorded for this session`, delta.bulletId);
          break;
        }
        const b = own(delta.bulletId);
        const event: FeedbackEvent = { type: delta.type, timestamp: nowIso };
        if (delta.sourceSession !== undefined && delta.sourceSession !== "") event.sessionPath = delta.sourceSession;
        if (delta.type === "harmful") {
          if (delta.reason !== undefined) {
            const normalized = normalizeHarmfulReason(delta.reason);
            event.reason = normalized.reason;
            const context = delta.context ?? normalized.context;
            if (context !== undefined) event.context = context;
          } else if (delta.context !== undefined) {
            event.context = delta.context;
          }
          b.harmfulCount = (b.harmfulCount ?? 0) + 1;
        } else {
          if (delta.context !== undefined) event.context = delta.context;
          b.helpfulCount = (b.helpfulCount ?? 0) + 1;
          b.lastValidatedAt = nowIso;
        }
        b.feedbackEvents.push(event);
        b.updatedAt = nowIso;
        decide(delta, true, `${delta.type === "helpful" ? "Helpful" : "Harmful"} feedback recorded`, delta.bulletId);
        break;
      }

      case "replace": {
        if (get(delta.bulletId) === undefined) {
          decide(delta, false, "Bullet not found for replacement", delta.bulletId);
          break;
        }
        const b = own(delta.bulletId);
        b.content = delta.newContent;
        b.updatedAt = nowIso;
        decide(delta, true, "Bullet content replaced", delta.bulletId);
        break;
      }

      case "deprecate": {
        const current = get(delta.bulletId);
        if (current === undefined) {
          decide(delta, false, "Bullet not found for deprecation", delta.bulletId);
          break;
        }
        replace(delta.bulletId, deprecateBullet(current, delta.reason, nowIso, delta.replacedBy));
        decide(delta, true, "Bullet deprecated", delta.bulletId);
        break;
      }

      case "merge": {
        const ids = [...new Set(delta.bulletIds)];
        const sources = ids.map((id) => get(id)).filter((b): b is Bullet => b !== undefined);
        if (sources.length !== ids.length || sources.length < 2) {
          decide(delta, false, "Cannot merge: missing bullets or fewer than two");
          break;
        }
        const merged = newBullet(
          {
            content: delta.mergedContent,
            category: sources[0]!.category,
            tags: [...new Set(sources.flatMap((b) => b.tags ?? []))],
            sourceSession: MERGED_SOURCE_SESSION,
          },
          ctx,
        );
        append(merged);
        for (const s of sources) replace(s.id, deprecateBullet(s, `Merged into ${merged.id}`, nowIso, merged.id));
        const entry: RefEntry = { id: merged.id, hash: hashContent(merged.content), tokens: tokenSet(merged.content), deprecated: false };
        refEntries.push(entry);
        if (!firstByHash.has(entry.hash)) firstByHash.set(entry.hash, entry);
        conflictIndex.push(conflictMetaOf(merged.id, merged.content));
        decide(delta, true, "Bullets merged into new combined bullet", merged.id);
        break;
      }

      default: {
        const unknown: { type?: unknown } = delta;
        decide(delta, false, `Unknown delta type: ${String(unknown.type)}`);
      }
    }
  }

  // 1. Anti-pattern inversion (before demotion so a harmful rule is inverted, not just pruned).
  const pruneThreshold = config.pruneHarmfulThreshold ?? 3;
  const inverted = new Set<string>();
  for (const bullet of [...bullets]) {
    if (!isActiveBullet(bullet) || bullet.pinned || bullet.kind === "anti_pattern") continue;
    const { decayedHelpful, decayedHarmful } = getDecayedCounts(bullet, now, config);
    if (!(decayedHarmful >= pruneThreshold - 0.01 && decayedHarmful > 2 * decayedHelpful)) continue;
    if (bullet.isNegative) {
      replace(bullet.id, deprecateBullet(bullet, NEGATIVE_RULE_HARMFUL_REASON, nowIso));
      result.pruned++;
    } else {
      const anti = invertToAntiPattern(bullet, ctx);
      append(anti);
      replace(bullet.id, deprecateBullet(bullet, `Inverted to anti-pattern: ${anti.id}`, nowIso, anti.id));
      inverted.add(bullet.id);
      result.inversions.push({ originalId: bullet.id, antiPatternId: anti.id });
    }
  }

  // 2. Promotion, then demotion / auto-deprecation, over every remaining bullet.
  for (const snapshot of [...bullets]) {
    if (snapshot.deprecated || inverted.has(snapshot.id)) continue;
    let bullet = snapshot;
    const promoted = checkForPromotion(bullet, now, config);
    if (promoted !== bullet.maturity) {
      const b = own(bullet.id);
      result.promotions.push({ bulletId: b.id, from: b.maturity, to: promoted });
      b.maturity = promoted;
      b.promotedAt = nowIso;
      bullet = b;
    }
    const demotion = checkForDemotion(bullet, now, config);
    if (demotion === "auto-deprecate") {
      replace(bullet.id, deprecateBullet(bullet, AUTO_DEPRECATE_REASON, nowIso));
      result.pruned++;
    } else if (demotion !== bullet.maturity) {
      own(bullet.id).maturity = demotion;
    }
  }

  result.playbook = { ...target, bullets };
  return result;
}

/**
 * The best-scoring entry with a score ≥ threshold, active entries first, then deprecated ones;
 * ties keep the first. `scoreOf` returns undefined for entries that cannot be compared.
 */
function bestMatch(entries: readonly RefEntry[], threshold: number, scoreOf: (e: RefEntry) => number | undefined): RefEntry | undefined {
  let bestActive: RefEntry | undefined;
  let bestActiveScore = -Infinity;
  let bestDeprecated: RefEntry | undefined;
  let bestDeprecatedScore = -Infinity;
  for (const e of entries) {
    const score = scoreOf(e);
    if (score === undefined || score < threshold) continue;
    if (!e.deprecated && score > bestActiveScore) {
      bestActive = e;
      bestActiveScore = score;
    } else if (e.deprecated && score > bestDeprecatedScore) {
      bestDeprecated = e;
      bestDeprecatedScore = score;
    }
  }
  return bestActive ?? bestDeprecated;
}

/** Best Jaccard match ≥ threshold (see bestMatch). */
function findSimilar(tokens: ReadonlySet<string>, entries: readonly RefEntry[], threshold: number): RefEntry | undefined {
  return bestMatch(entries, threshold, (e) => jaccard(tokens, e.tokens, threshold));
}

/** Best cosine match ≥ threshold by vectors of content hashes (see bestMatch). */
function findSemanticDuplicate(
  hash: string,
  entries: readonly RefEntry[],
  semantic: NonNullable<CurateContext["semantic"]>,
): RefEntry | undefined {
  const vector = semantic.vectors.get(hash);
  if (vector === undefined) return undefined;
  return bestMatch(entries, semantic.threshold, (e) => {
    const other = semantic.vectors.get(e.hash);
    return other === undefined ? undefined : cosineSimilarity(vector, other);
  });
}

/** Jaccard of two token sets; returns -1 early when it cannot reach `min`. */
function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>, min: number): number {
  if (a.size === 0 && b.size === 0) return 1;
  if (a.size === 0 || b.size === 0) return 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  if (small.size / large.size < min) return -1;
  let intersection = 0;
  for (const t of small) if (large.has(t)) intersection++;
  return intersection / (a.size + b.size - intersection);
}
