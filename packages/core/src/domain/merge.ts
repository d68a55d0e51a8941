import {
  createEmptyPlaybook,
  type BlockedEntry,
  type Bullet,
  type DeprecatedPattern,
  type Playbook,
} from "../schemas/playbook.js";
import { deprecateBullet } from "./curator.js";
import { normalizeForHash, tokenSet } from "./text.js";

/** The merged view of the global and repo playbooks with the blocked-log filter (reference §4.3). */

export const MERGED_PLAYBOOK_NAME = "merged-playbook";
export const BLOCKED_CONTENT_REASON = "BLOCKED_CONTENT";
/** Token-Jaccard above which a bullet counts as blocked content (strictly greater). */
export const BLOCKED_SIMILARITY_THRESHOLD = 0.85;

interface BlockedMeta {
  tokens: ReadonlySet<string>;
  tokenList: readonly string[];
}

/**
 * Global + repo layers, bullets keyed by id (repo wins; order = global bullets, then new repo ids),
 * deprecated patterns de-duplicated by pattern (global first), metadata from global; named
 * "merged-playbook" when a repo layer exists. Then every non-deprecated bullet whose content matches
 * a blocked entry (same content hash, or token-Jaccard > 0.85) is deprecated in the returned view.
 * Inputs are never mutated; bullets that are not blocked are shared with the inputs.
 */
export function mergePlaybooks(
  global: Playbook | null,
  repo: Playbook | null,
  blocked: readonly BlockedEntry[],
  nowIso: string,
): Playbook {
  const base = global ?? createEmptyPlaybook(nowIso);
  let merged: Playbook;
  if (repo === null) {
    merged = { ...base, bullets: [...base.bullets], deprecatedPatterns: [...base.deprecatedPatterns] };
  } else {
    const byId = new Map<string, Bullet>();
    for (const b of base.bullets) byId.set(b.id, b);
    for (const b of repo.bullets) byId.set(b.id, b);
    const seen = new Set<string>();
    const patterns: DeprecatedPattern[] = [];
    for (const p of [...base.deprecatedPatterns, ...repo.deprecatedPatterns]) {
      if (seen.has(p.pattern)) continue;
      seen.add(p.pattern);
      patterns.push(p);
    }
    const empty = createEmptyPlaybook(nowIso);
    merged = {
      ...empty,
      name: MERGED_PLAYBOOK_NAME,
      metadata: { ...base.metadata },
      deprecatedPatterns: patterns,
      bullets: [...byId.values()],
    };
  }
  if (blocked.length > 0) merged.bullets = applyBlockFilter(merged.bullets, blocked, nowIso);
  return merged;
}

/**
 * Returns `bullets` with blocked ones replaced by deprecated copies. Hash equality is tested as
 * equality of the normalised text the hash is taken of (equivalent, and avoids hashing every bullet).
 */
export function applyBlockFilter(
  bullets: readonly Bullet[],
  blocked: readonly BlockedEntry[],
  nowIso: string,
): Bullet[] {
  // De-duplicate the blocked entries by (normalised) content, computing their token sets once.
  const blockedTexts = new Set<string>();
  const metas: BlockedMeta[] = [];
  for (const entry of blocked) {
    if (typeof entry?.content !== "string") continue;
    const normalized = normalizeForHash(entry.content);
    if (blockedTexts.has(normalized)) continue;
    blockedTexts.add(normalized);
    const tokens = tokenSet(entry.content);
    if (tokens.size > 0) metas.push({ tokens, tokenList: [...tokens] });
  }
  if (blockedTexts.size === 0) return [...bullets];

  return bullets.map((bullet) => {
    if (bullet.deprecated) return bullet;
    return isBlockedContent(bullet.content, blockedTexts, metas) ? deprecateBullet(bullet, BLOCKED_CONTENT_REASON, nowIso) : bullet;
  });
}

function isBlockedContent(content: string, blockedTexts: ReadonlySet<string>, metas: readonly BlockedMeta[]): boolean {
  const lower = content.toLowerCase();
  // Hash equality ⇔ equal normalised text. Normalising is the costly part, so only do it when the
  // content contains the first word of some blocked text (which equality requires).
  let normalized: string | undefined;
  for (const text of blockedTexts) {
    const space = text.indexOf(" ");
    if (lower.includes(space === -1 ? text : text.slice(0, space))) {
      normalized = normalizeForHash(content);
      break;
    }
  }
  if (normalized !== undefined && blockedTexts.has(normalized)) return true;

  let tokens: Set<string> | undefined;
  for (const meta of metas) {
    // Every shared token is a substring of the content, so J ≤ hits / |blocked|: stop as soon as
    // too many blocked tokens are missing for J to exceed the threshold.
    const allowedMisses = Math.floor(meta.tokenList.length * (1 - BLOCKED_SIMILARITY_THRESHOLD) + 1e-9);
    let misses = 0;
    for (const t of meta.tokenList) {
      if (!lower.includes(t) && ++misses > allowedMisses) break;
    }
    if (misses > allowedMisses) continue;
    tokens ??= tokenSet(content);
    if (tokens.size === 0) return false;
    const small = tokens.size <= meta.tokens.size ? tokens : meta.tokens;
    const large = small === tokens ? meta.tokens : tokens;
    // Jaccard ≤ |small| / |large|: skip entries that cannot exceed the threshold.
    if (small.size / large.size <= BLOCKED_SIMILARITY_THRESHOLD) continue;
    let intersection = 0;
    for (const t of small) if (large.has(t)) intersection++;
    const union = tokens.size + meta.tokens.size - intersection;
    if (union > 0 && intersection / union > BLOCKED_SIMILARITY_THRESHOLD) return true;
  }
  return false;
}
