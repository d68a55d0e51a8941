import * as z from "zod";
import { AppError } from "../errors.js";
import { defineOperation } from "../operation.js";
import type { Layer, OperationDeps } from "../ports.js";
import type { Bullet, FeedbackEvent, Playbook } from "../schemas/playbook.js";
import { ReflectionRevertSchema, ReflectionRunSchema, type JournalEvent, type ReflectionRun } from "../schemas/records.js";
import { mutatePlaybookJournaled, requireNonEmpty } from "./shared.js";
import { lazySchema } from "../schemas/lazy.js";

/**
 * `cm undo --run <runId>` (beyond the original): takes back exactly what one reflection run did,
 * from the audit journal events stamped with its run id — bullets it created are removed, feedback
 * events it added are removed (counters follow), and fields it changed are set back — while later,
 * unrelated edits stay. A field that was changed again after the run is left alone and reported as
 * a conflict: the later edit wins.
 */

export const UndoRunInputSchema = lazySchema(() => z.object({
  runId: z.string(),
  dryRun: z.boolean().optional(),
}));

const ConflictSchema = lazySchema(() => z.looseObject({ bulletId: z.string(), field: z.string(), reason: z.string() }));

export const UndoRunResultSchema = lazySchema(() => z.looseObject({
  runId: z.string(),
  action: z.literal("revert-run"),
  dryRun: z.boolean(),
  /** Bullets the run created, now removed. */
  removed: z.array(z.string()),
  /** Bullets the run changed, now set back (fully or partly; see conflicts). */
  restored: z.array(z.string()),
  /** Feedback events removed. */
  feedbackRemoved: z.number(),
  conflicts: z.array(ConflictSchema),
  layers: z.array(z.enum(["global", "repo"])),
  message: z.string(),
}));
export type UndoRunResult = z.output<typeof UndoRunResultSchema>;

/** Fields whose values the revert restores (counters follow the removed feedback events instead). */
const SKIPPED_FIELDS = new Set(["helpfulCount", "harmfulCount", "feedbackEvents", "feedback"]);

export const undoRunOperation = defineOperation({
  name: "memory_undo_run",
  command: "undo",
  description: "Revert every playbook change made by one reflection run, keeping later unrelated edits.",
  input: UndoRunInputSchema,
  output: UndoRunResultSchema,
  async run(deps, input): Promise<UndoRunResult> {
    const runId = requireNonEmpty("runId", input.runId, `${deps.cliName} undo --run <runId>   (run ids are printed by '${deps.cliName} reflect')`);
    const { run, reverted } = await findRun(deps, runId);
    if (run === undefined) {
      throw new AppError("INVALID_INPUT", `Reflection run not found: ${runId}`, {
        hint: `Run ids are printed by '${deps.cliName} reflect' (data.runId) and kept in ${deps.store.locations.globalDir}/reflection-runs.jsonl.`,
        details: { runId },
      });
    }
    if (reverted) {
      throw new AppError("INVALID_INPUT", `Reflection run ${runId} was already reverted.`, {
        hint: `'${deps.cliName} history <bulletId>' shows what happened to a rule since.`,
        details: { runId },
      });
    }
    const dryRun = Boolean(input.dryRun);
    const result: UndoRunResult = {
      runId,
      action: "revert-run",
      dryRun,
      removed: [],
      restored: [],
      feedbackRemoved: 0,
      conflicts: [],
      layers: [],
      message: "",
    };
    const layers: Layer[] = deps.store.locations.repoDir !== null ? ["global", "repo"] : ["global"];
    for (const layer of layers) {
      const journal = await deps.store.readJournal(layer);
      const events = journal.filter((e) => e.runId === runId);
      if (events.length === 0) continue;
      result.layers.push(layer);
      const later = laterEdits(journal, runId);
      if (dryRun) {
        const current = await deps.store.readPlaybook(layer);
        if (current !== null) revertEvents(structuredClone(current), events, result, deps.clock.now().toISOString(), later);
        continue;
      }
      await mutatePlaybookJournaled(deps, layer, { operation: "undo", source: runId, reason: `Revert reflection run ${runId}` }, (playbook) => {
        revertEvents(playbook, events, result, deps.clock.now().toISOString(), later);
      });
    }
    const touched = [...result.removed, ...result.restored];
    if (!dryRun) {
      await deps.store.appendLog("global", "reflection-runs", [
        ReflectionRevertSchema.parse({ type: "revert", runId, revertedAt: deps.clock.now().toISOString(), bulletIds: touched }),
      ]);
    }
    const verb = dryRun ? "Would revert" : "Reverted";
    result.message =
      `${verb} reflection run ${runId}: ${result.removed.length} rule(s) removed, ${result.restored.length} restored, ` +
      `${result.feedbackRemoved} feedback event(s) removed` +
      (result.conflicts.length > 0 ? `; ${result.conflicts.length} field(s) kept because they changed after the run` : "");
    return result;
  },
});

async function findRun(deps: OperationDeps, runId: string): Promise<{ run?: ReflectionRun; reverted: boolean }> {
  const { records } = await deps.store.readLog("global", "reflection-runs");
  let run: ReflectionRun | undefined;
  let reverted = false;
  for (const record of records) {
    const asRun = ReflectionRunSchema.safeParse(record);
    if (asRun.success && asRun.data.runId === runId) run = asRun.data;
    const asRevert = ReflectionRevertSchema.safeParse(record);
    if (asRevert.success && asRevert.data.runId === runId) reverted = true;
  }
  return { ...(run !== undefined ? { run } : {}), reverted };
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * Per bullet the run touched, the operations recorded on it later by anything else (feedback,
 * edits, pins, …), in journal order.
 */
function laterEdits(journal: readonly JournalEvent[], runId: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const touched = new Set<string>();
  for (const event of journal) {
    if (event.runId === runId) {
      touched.add(event.bulletId);
      continue;
    }
    if (!touched.has(event.bulletId)) continue;
    const list = out.get(event.bulletId) ?? [];
    list.push(event.operation === event.change ? event.operation : `${event.operation} (${event.change})`);
    out.set(event.bulletId, list);
  }
  return out;
}

/** The tracked fields of a rule the run created that differ now from what the run wrote. */
function changedSinceCreated(record: Record<string, unknown>, after: Record<string, unknown>): string[] {
  const changed: string[] = [];
  for (const [field, value] of Object.entries(after)) {
    if (field === "updatedAt" || field === "feedback") continue;
    if (!same(record[field], value)) changed.push(field);
  }
  const feedback = Array.isArray(record["feedbackEvents"]) ? record["feedbackEvents"].length : 0;
  const feedbackThen = Array.isArray(after["feedbackEvents"]) ? after["feedbackEvents"].length : 0;
  if (feedback > feedbackThen && !changed.includes("feedbackEvents")) changed.push("feedbackEvents");
  return changed;
}

/** Applies the inverse of the run's events to `playbook` in place, newest event first. */
function revertEvents(
  playbook: Playbook,
  events: readonly JournalEvent[],
  result: UndoRunResult,
  nowIso: string,
  later: ReadonlyMap<string, readonly string[]> = new Map(),
): void {
  const removed = new Set<string>();
  const restored = new Set<string>();
  for (const event of [...events].reverse()) {
    const index = playbook.bullets.findIndex((b) => b.id === event.bulletId);
    if (index < 0) continue; // deleted since: nothing left to revert
    if (event.change === "created") {
      // A rule changed after the run (marked helpful, edited, pinned, …) is kept: the later edit
      // wins, and the conflict says so.
      const since = later.get(event.bulletId) ?? [];
      const fields = changedSinceCreated(playbook.bullets[index] as Record<string, unknown>, event.after ?? {});
      if (since.length > 0 || fields.length > 0) {
        result.conflicts.push({
          bulletId: event.bulletId,
          field: fields.length > 0 ? fields.join(",") : "bullet",
          reason: `created by the run but changed after it${since.length > 0 ? ` (${[...new Set(since)].join(", ")})` : ""}; the rule was kept`,
        });
        continue;
      }
      playbook.bullets.splice(index, 1);
      removed.add(event.bulletId);
      restored.delete(event.bulletId);
      continue;
    }
    const bullet = playbook.bullets[index]!;
    const record = bullet as Record<string, unknown>;
    const before = event.before ?? {};
    const after = event.after ?? {};
    let changed = removeAddedFeedback(bullet, after.feedback, result);
    for (const [field, value] of Object.entries(after)) {
      if (SKIPPED_FIELDS.has(field)) continue;
      if (!same(record[field], value)) {
        result.conflicts.push({ bulletId: bullet.id, field, reason: "changed again after the run; the later value was kept" });
        continue;
      }
      const prior = before[field];
      if (prior === null || prior === undefined) delete record[field];
      else record[field] = structuredClone(prior);
      changed = true;
    }
    if (changed) {
      bullet.updatedAt = nowIso;
      restored.add(bullet.id);
    }
  }
  for (const id of removed) if (!result.removed.includes(id)) result.removed.push(id);
  for (const id of restored) if (!removed.has(id) && !result.restored.includes(id)) result.restored.push(id);
}

/** Removes the feedback events an event recorded as added; counters go down with them. */
function removeAddedFeedback(bullet: Bullet, added: unknown, result: UndoRunResult): boolean {
  if (!Array.isArray(added) || added.length === 0) return false;
  let removedAny = false;
  for (const target of added as FeedbackEvent[]) {
    const at = findLastIndex(bullet.feedbackEvents, (e) => same(e, target));
    if (at < 0) continue;
    bullet.feedbackEvents.splice(at, 1);
    if (target.type === "helpful") bullet.helpfulCount = Math.max(0, (bullet.helpfulCount ?? 0) - 1);
    else bullet.harmfulCount = Math.max(0, (bullet.harmfulCount ?? 0) - 1);
    result.feedbackRemoved++;
    removedAny = true;
  }
  return removedAny;
}

function findLastIndex<T>(items: readonly T[], predicate: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (predicate(items[i]!)) return i;
  return -1;
}
