import { AppError } from "../errors.js";
import { diffForJournal, snapshotBullets } from "../domain/journal.js";
import { mergePlaybooks } from "../domain/merge.js";
import type { Layer, MutationScope, MutationTx, OperationDeps } from "../ports.js";
import type { Bullet, Playbook } from "../schemas/playbook.js";
import type { JournalOperation } from "../schemas/records.js";

/** Helpers shared by the operations: reading the merged view, locating a bullet's layer, input checks. */

/** The merged playbook of reference §4.3: global + repo (repo wins on id), with the blocked-log filter. */
export async function loadMergedPlaybook(deps: OperationDeps): Promise<Playbook> {
  const hasRepo = deps.store.locations.repoDir !== null;
  const [global, repo, blockedGlobal, blockedRepo] = await Promise.all([
    deps.store.readPlaybook("global"),
    hasRepo ? deps.store.readPlaybook("repo") : Promise.resolve(null),
    deps.store.readBlocked("global"),
    hasRepo ? deps.store.readBlocked("repo") : Promise.resolve([]),
  ]);
  return mergePlaybooks(global, repo, [...blockedGlobal, ...blockedRepo], deps.clock.now().toISOString());
}

export interface LocatedBullet {
  layer: Layer;
  bullet: Bullet;
  path: string;
}

/**
 * Finds the layer that holds a bullet: the repo playbook when it has the id, else the global one
 * (reference §1.5.4: the layer files, not the merged view). Returns null when neither has it.
 */
export async function locateBullet(deps: OperationDeps, id: string): Promise<LocatedBullet | null> {
  const { repoPlaybook, globalPlaybook } = deps.store.locations;
  // A store that can read just that bullet (an index, a known file layout) does, not whole playbooks.
  const { store } = deps;
  const read = (layer: Layer) => (store.readBullets !== undefined ? store.readBullets(layer, [id]) : store.readPlaybook(layer));
  if (repoPlaybook !== null) {
    const repo = await read("repo");
    const found = repo?.bullets.find((b) => b.id === id);
    if (found) return { layer: "repo", bullet: found, path: repoPlaybook };
  }
  const global = await read("global");
  const found = global?.bullets.find((b) => b.id === id);
  return found ? { layer: "global", bullet: found, path: globalPlaybook } : null;
}

export function layerPath(deps: OperationDeps, layer: Layer): string {
  const { repoPlaybook, globalPlaybook } = deps.store.locations;
  return layer === "repo" ? (repoPlaybook ?? "<no repository>") : globalPlaybook;
}

/** Index of a bullet inside a playbook being mutated; throws BULLET_NOT_FOUND when it vanished meanwhile. */
export function requireBulletIndex(playbook: Playbook, id: string, message: string): number {
  const index = playbook.bullets.findIndex((b) => b.id === id);
  if (index < 0) throw new AppError("BULLET_NOT_FOUND", message, { details: { bulletId: id } });
  return index;
}

export function requireNonEmpty(name: string, value: string | undefined, hint?: string): string {
  const trimmed = value?.trim() ?? "";
  if (trimmed === "") {
    throw new AppError("INVALID_INPUT", `${name} must be a non-empty string.`, {
      ...(hint ? { hint } : {}),
      details: { field: name, received: value ?? null },
    });
  }
  return trimmed;
}

/** The original's positive-integer check and messages (reference §1.4.5). */
export function requirePositiveInt(name: string, value: number | undefined, fallback: number, min = 1, hint?: string): number {
  if (value === undefined) return fallback;
  const withHint = hint !== undefined ? { hint } : {};
  if (!Number.isInteger(value)) {
    throw new AppError("INVALID_INPUT", `${name} must be an integer.`, { ...withHint, details: { field: name, received: value } });
  }
  if (value < min) {
    throw new AppError("INVALID_INPUT", `${name} must be >= ${min}.`, { ...withHint, details: { field: name, received: value, min } });
  }
  return value;
}

/** First `max` characters of a text on one line, with "..." when cut. */
export function preview(text: string, max = 100): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max)}...` : flat;
}

export interface MutationMeta {
  operation: JournalOperation;
  /** A session path, imported file or run id the change came from. */
  source?: string;
  /** The reflection run making the change (recorded on each journal event). */
  runId?: string;
  reason?: string;
}

/**
 * Every playbook mutation of every operation goes through here: the store's locked
 * read-modify-write, plus one audit-journal event per bullet the mutation changed, written under
 * the same lock.
 */
export function mutatePlaybookJournaled<T>(
  deps: OperationDeps,
  layer: Layer,
  meta: MutationMeta,
  fn: (playbook: Playbook, tx: MutationTx) => T | Promise<T>,
  scope?: MutationScope,
): Promise<T> {
  return deps.store.mutatePlaybook(layer, async (playbook, tx) => {
    const before = snapshotBullets(playbook);
    const result = await fn(playbook, tx);
    tx.journal(
      diffForJournal(before, playbook, {
        ...meta,
        layer,
        actor: deps.actor ?? deps.cliName,
        timestamp: deps.clock.now().toISOString(),
        nextId: () => `${deps.clock.now().getTime().toString(36)}-${deps.ids.hex(8)}`,
      }),
    );
    return result;
  }, scope);
}
