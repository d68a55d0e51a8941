import * as z from "zod";
import { AppError } from "../errors.js";
import { deprecateBullet } from "../domain/curator.js";
import { AUTO_DEPRECATION_REASON } from "../domain/feedback.js";
import { calculateMaturityState } from "../domain/scoring.js";
import { defineOperation } from "../operation.js";
import type { Layer, OperationDeps } from "../ports.js";
import { MATURITIES, type Bullet, type FeedbackEvent } from "../schemas/playbook.js";
import type { JournalEvent } from "../schemas/records.js";
import { FORGET_SOURCE_SESSION } from "./forget.js";
import { locateBullet, mutatePlaybookJournaled, preview, requireBulletIndex, requireNonEmpty } from "./shared.js";
import { lazySchema } from "../schemas/lazy.js";

export const UndoInputSchema = lazySchema(() => z.object({
  bulletId: z.string(),
  feedback: z.boolean().optional(),
  hard: z.boolean().optional(),
  yes: z.boolean().optional(),
  dryRun: z.boolean().optional(),
}));

const maturity = lazySchema(() => z.enum(MATURITIES));
const LastFeedbackSchema = lazySchema(() => z.looseObject({ type: z.enum(["helpful", "harmful"]), timestamp: z.string() }));

const PlanSchema = lazySchema(() => z.object({
  plan: z.object({
    dryRun: z.literal(true),
    action: z.enum(["un-deprecate", "undo-feedback", "hard-delete"]),
    bulletId: z.string(),
    path: z.string(),
    location: z.enum(["global", "repo"]),
    preview: z.string(),
    category: z.string(),
    before: z.looseObject({
      deprecated: z.boolean(),
      state: z.string(),
      maturity,
      helpfulCount: z.number(),
      harmfulCount: z.number(),
      lastFeedback: LastFeedbackSchema.optional(),
    }),
    wouldChange: z.string(),
    applyCommand: z.string(),
  }),
}));

const UndeprecateSchema = lazySchema(() => z.object({
  bulletId: z.string(),
  action: z.literal("un-deprecate"),
  before: z.object({
    deprecated: z.boolean(),
    deprecatedAt: z.string().optional(),
    deprecationReason: z.string().optional(),
    state: z.string(),
    maturity,
  }),
  after: z.object({ deprecated: z.literal(false), state: z.string(), maturity }),
  /** True when the prior state came from the audit journal (else the original's defaults). */
  restoredFromJournal: z.boolean(),
  /** Blocked-log entries removed (global and repo). */
  unblocked: z.number(),
  /** The anti-pattern `forget --invert` had created, deprecated again by this undo. */
  antiPatternDeprecated: z.string().optional(),
  message: z.string(),
}));

const UndoFeedbackSchema = lazySchema(() => z.object({
  bulletId: z.string(),
  action: z.literal("undo-feedback"),
  before: z.object({ helpfulCount: z.number(), harmfulCount: z.number(), lastFeedback: LastFeedbackSchema }),
  after: z.object({ helpfulCount: z.number(), harmfulCount: z.number(), feedbackEventsCount: z.number() }),
  message: z.string(),
}));

const HardDeleteSchema = lazySchema(() => z.object({
  bulletId: z.string(),
  action: z.literal("hard-delete"),
  path: z.string(),
  preview: z.string(),
  before: z.looseObject({ deprecated: z.boolean(), state: z.string(), maturity }),
  after: z.object({ deleted: z.literal(true) }),
  message: z.string(),
}));

export const UndoResultSchema = lazySchema(() => z.union([PlanSchema, UndeprecateSchema, UndoFeedbackSchema, HardDeleteSchema]));
export type UndoResult = z.output<typeof UndoResultSchema>;

/** Fields a deprecation changes; the journal's `before` values of these are what undo restores. */
const DEPRECATION_FIELDS = ["deprecated", "deprecatedAt", "deprecationReason", "replacedBy", "state", "maturity"] as const;

/**
 * `cm undo <id>`: restores a deprecated or forgotten rule (to exactly its state before, when the
 * audit journal has it), removes the last feedback event (`feedback`), or deletes the rule for
 * good (`hard` + `yes`). Reference §1.5.10.
 */
export const undoOperation = defineOperation({
  name: "memory_undo",
  command: "undo",
  description: "Undo a deprecation or forget, remove the last feedback event, or hard-delete a rule.",
  input: UndoInputSchema,
  output: UndoResultSchema,
  async run(deps, input): Promise<UndoResult> {
    const bulletId = requireNonEmpty("bulletId", input.bulletId);
    const cli = deps.cliName;
    if (input.feedback && input.hard) {
      throw new AppError("INVALID_INPUT", "Use only one of --feedback and --hard", {
        hint: `${cli} undo ${bulletId} --feedback  or  ${cli} undo ${bulletId} --hard --yes`,
        details: { bulletId },
      });
    }
    const located = await locateBullet(deps, bulletId);
    if (!located) throw new AppError("BULLET_NOT_FOUND", `Bullet not found: ${bulletId}`, { details: { bulletId } });
    const { layer, bullet, path } = located;
    const action = input.hard ? "hard-delete" : input.feedback ? "undo-feedback" : "un-deprecate";
    const lastFeedback = bullet.feedbackEvents.at(-1);

    if (action === "un-deprecate" && !bullet.deprecated && !input.dryRun && (await isBlocked(deps, bulletId))) {
      // Hidden only by a blocked-log entry (e.g. written by another tool): unblocking restores it.
      const unblocked = await unblock(deps, bulletId);
      const state = { deprecated: false, state: bullet.state, maturity: bullet.maturity };
      return {
        bulletId,
        action: "un-deprecate",
        before: state,
        after: { ...state, deprecated: false },
        restoredFromJournal: false,
        unblocked,
        message: `Removed bullet ${bulletId} from the blocked log`,
      };
    }
    if (action === "un-deprecate" && !bullet.deprecated) {
      throw new AppError("INVALID_INPUT", `Bullet ${bulletId} is not deprecated`, {
        hint: `Use --feedback to remove its last feedback, or --hard --yes to delete it: ${cli} undo ${bulletId} --feedback`,
        details: { bulletId },
      });
    }
    if (action === "undo-feedback" && lastFeedback === undefined) {
      throw new AppError("INVALID_INPUT", `No feedback events to undo for bullet ${bulletId}`, {
        hint: `See its history: ${cli} history ${bulletId}`,
        details: { bulletId },
      });
    }

    if (input.dryRun) {
      return {
        plan: {
          dryRun: true,
          action,
          bulletId,
          path,
          location: layer,
          preview: preview(bullet.content),
          category: bullet.category,
          before: {
            deprecated: bullet.deprecated,
            state: bullet.state,
            maturity: bullet.maturity,
            helpfulCount: bullet.helpfulCount,
            harmfulCount: bullet.harmfulCount,
            ...(lastFeedback ? { lastFeedback } : {}),
          },
          wouldChange:
            action === "hard-delete"
              ? "Bullet would be permanently removed from playbook"
              : action === "undo-feedback"
                ? `Last ${lastFeedback!.type} feedback would be removed`
                : "Bullet would be restored from deprecated state",
          applyCommand:
            action === "hard-delete"
              ? `${cli} undo ${bulletId} --hard --yes`
              : action === "undo-feedback"
                ? `${cli} undo ${bulletId} --feedback`
                : `${cli} undo ${bulletId}`,
        },
      };
    }

    if (action === "hard-delete") {
      if (!input.yes) {
        throw new AppError("MISSING_REQUIRED", "Confirmation required for --hard deletion", {
          hint: "Re-run with --yes in non-interactive mode",
          details: { confirmPhrase: "DELETE", bulletId },
        });
      }
      const removed = await mutatePlaybookJournaled(deps, layer, { operation: "undo", reason: "hard delete" }, (playbook) => {
        const index = requireBulletIndex(playbook, bulletId, `Bullet not found: ${bulletId}`);
        return playbook.bullets.splice(index, 1)[0]!;
      });
      return {
        bulletId,
        action: "hard-delete",
        path,
        preview: preview(removed.content),
        before: { deprecated: removed.deprecated, state: removed.state, maturity: removed.maturity },
        after: { deleted: true },
        message: `Permanently deleted bullet ${bulletId} from ${layer} playbook`,
      };
    }

    if (action === "undo-feedback") return undoFeedback(deps, layer, bulletId);
    return undeprecate(deps, layer, bulletId);
  },
});

async function undoFeedback(deps: OperationDeps, layer: Layer, bulletId: string): Promise<UndoResult> {
  const now = deps.clock.now();
  return mutatePlaybookJournaled(deps, layer, { operation: "undo", reason: "undo last feedback" }, (playbook) => {
    const index = requireBulletIndex(playbook, bulletId, `Bullet not found: ${bulletId}`);
    const current = playbook.bullets[index]!;
    const last = current.feedbackEvents.at(-1);
    if (last === undefined) {
      throw new AppError("INVALID_INPUT", `No feedback events to undo for bullet ${bulletId}`, { details: { bulletId } });
    }
    const next: Bullet = {
      ...current,
      feedbackEvents: current.feedbackEvents.slice(0, -1),
      helpfulCount: Math.max(0, current.helpfulCount - (last.type === "helpful" ? 1 : 0)),
      harmfulCount: Math.max(0, current.harmfulCount - (last.type === "harmful" ? 1 : 0)),
      updatedAt: now.toISOString(),
    };
    if (!next.pinned) next.maturity = calculateMaturityState(next, now, deps.config);
    // A rule that feedback alone had deprecated comes back when that feedback is withdrawn.
    if (current.deprecated && current.deprecationReason === AUTO_DEPRECATION_REASON && next.maturity !== "deprecated") {
      next.deprecated = false;
      next.state = "active";
      delete next.deprecatedAt;
      delete next.deprecationReason;
    }
    playbook.bullets[index] = next;
    return {
      bulletId,
      action: "undo-feedback" as const,
      before: {
        helpfulCount: current.helpfulCount,
        harmfulCount: current.harmfulCount,
        lastFeedback: last as FeedbackEvent,
      },
      after: { helpfulCount: next.helpfulCount, harmfulCount: next.harmfulCount, feedbackEventsCount: next.feedbackEvents.length },
      message: `Removed last ${last.type} feedback from ${bulletId}`,
    };
  });
}

async function isBlocked(deps: OperationDeps, bulletId: string): Promise<boolean> {
  const layers: Layer[] = deps.store.locations.repoDir !== null ? ["global", "repo"] : ["global"];
  for (const layer of layers) {
    if ((await deps.store.readBlocked(layer)).some((entry) => entry.id === bulletId)) return true;
  }
  return false;
}

/** Removes the id from the global and repo blocked logs, so the merged view stops hiding it. */
async function unblock(deps: OperationDeps, bulletId: string): Promise<number> {
  const global = await deps.store.removeBlocked("global", [bulletId]);
  const repo = deps.store.locations.repoDir !== null ? await deps.store.removeBlocked("repo", [bulletId]) : 0;
  return global + repo;
}

/** The newest journal event that deprecated this bullet, if the journal has one. */
async function lastDeprecation(deps: OperationDeps, layer: Layer, bulletId: string): Promise<JournalEvent | undefined> {
  const events = await deps.store.readJournal(layer);
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]!;
    if (event.bulletId === bulletId && event.change === "deprecated") return event;
  }
  return undefined;
}

async function undeprecate(deps: OperationDeps, layer: Layer, bulletId: string): Promise<UndoResult> {
  const deprecation = await lastDeprecation(deps, layer, bulletId);
  const nowIso = deps.clock.now().toISOString();
  const result = await mutatePlaybookJournaled(deps, layer, { operation: "undo" }, (playbook) => {
    const index = requireBulletIndex(playbook, bulletId, `Bullet not found: ${bulletId}`);
    const current = playbook.bullets[index]!;
    if (!current.deprecated) {
      throw new AppError("INVALID_INPUT", `Bullet ${bulletId} is not deprecated`, { details: { bulletId } });
    }
    const next: Record<string, unknown> = { ...current, updatedAt: nowIso };
    const prior = deprecation?.before;
    const fromJournal = prior !== undefined && prior.deprecated === false;
    if (fromJournal) {
      for (const field of DEPRECATION_FIELDS) {
        if (!(field in prior)) continue;
        const value = prior[field];
        if (value === null || value === undefined) delete next[field];
        else next[field] = value;
      }
    } else {
      // The original's behaviour when there is no record of the earlier state.
      next.deprecated = false;
      next.state = "active";
      delete next.deprecatedAt;
      delete next.deprecationReason;
      delete next.replacedBy;
    }
    if (next.maturity === "deprecated" || next.maturity === undefined) next.maturity = "candidate";
    if (next.state === "retired") next.state = "active";
    const restored = next as Bullet;
    playbook.bullets[index] = restored;

    // Undoing `forget --invert` also retires the anti-pattern it created, unless it has a life of its own.
    let antiPatternDeprecated: string | undefined;
    const antiId = current.replacedBy;
    const antiIndex = antiId !== undefined ? playbook.bullets.findIndex((b) => b.id === antiId) : -1;
    const anti = antiIndex >= 0 ? playbook.bullets[antiIndex]! : undefined;
    if (anti && !anti.deprecated && anti.sourceSessions.includes(FORGET_SOURCE_SESSION) && anti.feedbackEvents.length === 0) {
      playbook.bullets[antiIndex] = deprecateBullet(anti, `Undone: ${bulletId} was restored`, nowIso);
      antiPatternDeprecated = anti.id;
    }
    return {
      before: {
        deprecated: current.deprecated,
        ...(current.deprecatedAt !== undefined ? { deprecatedAt: current.deprecatedAt } : {}),
        ...(current.deprecationReason !== undefined ? { deprecationReason: current.deprecationReason } : {}),
        state: current.state,
        maturity: current.maturity,
      },
      after: { deprecated: false as const, state: restored.state, maturity: restored.maturity },
      restoredFromJournal: fromJournal,
      antiPatternDeprecated,
    };
  });
  const unblocked = await unblock(deps, bulletId);
  return {
    bulletId,
    action: "un-deprecate",
    before: result.before,
    after: result.after,
    restoredFromJournal: result.restoredFromJournal,
    unblocked,
    ...(result.antiPatternDeprecated !== undefined ? { antiPatternDeprecated: result.antiPatternDeprecated } : {}),
    message: `Restored bullet ${bulletId} from deprecated state`,
  };
}
