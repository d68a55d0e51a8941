import { mergePlaybooks } from "../domain/merge.js";
import { candidateQuery } from "../domain/lexical/query.js";
import type { CandidateSearch, OperationDeps } from "../ports.js";
import type { Playbook } from "../schemas/playbook.js";
import { loadMergedPlaybook } from "./shared.js";

/**
 * The playbook `context` ranks. Small playbooks are read whole. When the store has a candidate
 * index and the layers together hold at least CANDIDATE_RETRIEVAL_MIN_BULLETS bullets, only the
 * index's best CANDIDATE_LIMIT active matches per layer are read, so the time and memory of a call
 * follow the candidates, not the playbook. The merged view keeps its rules: a repo bullet overrides
 * the global bullet with its id even when only the global one was a candidate, and the blocked log
 * applies to the candidates.
 *
 * Below the threshold both paths give the same result; above it the ranking sees only candidates,
 * so a rule sharing no indexed word with the task cannot be found (it could not score either).
 */
export const CANDIDATE_RETRIEVAL_MIN_BULLETS = 5_000;
export const CANDIDATE_LIMIT = 500;

export interface ContextPlaybook {
  playbook: Playbook;
  /** How many bullets the layers hold, when candidates were read instead of everything. */
  candidatesFrom?: number;
}

export async function loadContextPlaybook(deps: OperationDeps, task: string): Promise<ContextPlaybook> {
  const index = deps.store.candidates;
  if (index === undefined) return { playbook: await loadMergedPlaybook(deps) };
  const hasRepo = deps.store.locations.repoDir !== null;
  const [globalCount, repoCount] = await Promise.all([index.countBullets("global"), hasRepo ? index.countBullets("repo") : Promise.resolve(0)]);
  const total = globalCount + repoCount;
  if (total < CANDIDATE_RETRIEVAL_MIN_BULLETS) return { playbook: await loadMergedPlaybook(deps) };

  const query: CandidateSearch = { ...candidateQuery(task), limit: CANDIDATE_LIMIT };
  const [global, repo, blockedGlobal, blockedRepo] = await Promise.all([
    index.readCandidates("global", query),
    hasRepo ? index.readCandidates("repo", query) : Promise.resolve(null),
    deps.store.readBlocked("global"),
    hasRepo ? deps.store.readBlocked("repo") : Promise.resolve([]),
  ]);
  let repoView = repo;
  if (hasRepo && repo !== null && global !== null && global.bullets.length > 0) {
    // Global candidates the repo layer overrides with a bullet that was not itself a candidate.
    const repoIds = new Set(repo.bullets.map((b) => b.id));
    const missing = global.bullets.map((b) => b.id).filter((id) => !repoIds.has(id));
    if (missing.length > 0) {
      const overrides = await index.readCandidates("repo", { terms: [], limit: 0, ids: missing });
      if (overrides !== null && overrides.bullets.length > 0) repoView = { ...repo, bullets: [...repo.bullets, ...overrides.bullets] };
    }
  }
  const playbook = mergePlaybooks(global, repoView, [...blockedGlobal, ...blockedRepo], deps.clock.now().toISOString());
  return { playbook, candidatesFrom: total };
}
