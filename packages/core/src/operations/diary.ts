import * as z from "zod";
import { AppError, isAppError } from "../errors.js";
import { effectiveMode, resolveLearning } from "../learning/fallback.js";
import { loadTranscript, writeDiaryEntry } from "../learning/session.js";
import { defineOperation } from "../operation.js";
import { DiaryEntrySchema } from "../schemas/records.js";
import { normalizeSessionPath } from "./onboard-records.js";
import { requirePositiveInt } from "./shared.js";
import { lazySchema } from "../schemas/lazy.js";

/**
 * `cm diary <session>`: the working-memory layer on its own — summarise one session into a diary
 * entry (LLM or deterministic writer) and save it; `--list` shows saved entries, newest first.
 */

export const DiaryInputSchema = lazySchema(() => z.object({
  /** Absolute session path (front ends resolve relative ones). */
  session: z.string().optional(),
  /** List saved entries instead of writing one. */
  list: z.boolean().optional(),
  limit: z.number().optional(),
  /** Write nothing; only show the entry. */
  dryRun: z.boolean().optional(),
}));

export const DiaryResultSchema = lazySchema(() => z.looseObject({
  entry: DiaryEntrySchema.optional(),
  /** Where the entry was saved (absent on a dry run). */
  path: z.string().optional(),
  entries: z.array(DiaryEntrySchema).optional(),
  /** What answered: "llm", or "deterministic" (no LLM, or the LLM failed and the fallback wrote it). */
  mode: z.enum(["llm", "mixed", "deterministic"]).optional(),
  fallbacks: z.array(z.object({ component: z.string(), reason: z.string(), code: z.string().optional() })).optional(),
}));
export type DiaryResult = z.output<typeof DiaryResultSchema>;

export const diaryOperation = defineOperation({
  name: "memory_diary",
  command: "diary",
  description: "Summarise a session into a diary entry (what was done, decided, hard, learned), or list saved entries.",
  input: DiaryInputSchema,
  output: DiaryResultSchema,
  async run(deps, input): Promise<DiaryResult> {
    if (input.list) {
      const limit = requirePositiveInt("limit", input.limit, 20);
      const sessionPath = input.session?.trim() ? normalizeSessionPath(input.session) : undefined;
      return { entries: await deps.store.listDiaries({ limit, ...(sessionPath !== undefined ? { sessionPath } : {}) }) };
    }
    const raw = input.session?.trim() ?? "";
    if (raw === "") {
      throw new AppError("MISSING_REQUIRED", "A session path is required.", {
        hint: `${deps.cliName} diary ~/.claude/projects/<project>/<session>.jsonl   (or '${deps.cliName} diary --list')`,
        details: { missing: "session" },
      });
    }
    const learning = resolveLearning(deps);
    const transcript = await loadTranscript(deps, normalizeSessionPath(raw));
    const entry = await writeDiaryEntry(deps, learning.diaryWriter, transcript).catch((error: unknown) => {
      // llmFallback "none": say why there is no deterministic diary instead.
      const failed = learning.failures[0];
      if (failed === undefined) throw error;
      throw new AppError(isAppError(error) ? error.code : "LLM_API_ERROR", `The LLM diary writer failed (${failed.reason}); llmFallback is "none", so nothing was written.`, {
        hint: `Check the model with '${deps.cliName} doctor', or set "llmFallback": "deterministic" in config.json to write the diary without the LLM.`,
        details: { component: "diaryWriter", llmFallback: "none", ...(failed.code !== undefined ? { llmCode: failed.code } : {}) },
        cause: error,
      });
    });
    const path = input.dryRun ? undefined : await deps.store.writeDiary(entry);
    return {
      entry,
      ...(path !== undefined ? { path } : {}),
      mode: effectiveMode(learning),
      fallbacks: learning.fallbacks,
    };
  },
});
