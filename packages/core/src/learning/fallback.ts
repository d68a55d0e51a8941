import { isAppError } from "../errors.js";
import type { LearningComponents, Logger, OperationDeps } from "../ports.js";
import { createDeterministicDiaryWriter } from "./deterministic-diary.js";
import { createDeterministicReflector } from "./deterministic-reflector.js";
import { createDeterministicValidator } from "./deterministic-validator.js";

/**
 * Picks the learning components of one operation run and applies the fallback policy: when the
 * composition root supplied deterministic fallbacks, a failing LLM call (budget, network, a reply
 * that stayed malformed after retries) is answered by the deterministic component instead. After
 * the first failure every later call of the run goes straight to the fallback, so a spent budget
 * or a dead server costs one failed call per run, not one per session.
 */

export type DeterministicComponents = Pick<LearningComponents, "diaryWriter" | "reflector" | "validator">;

/** The offline diary writer, reflector and validator. */
export function createDeterministicComponents(): DeterministicComponents {
  return {
    diaryWriter: createDeterministicDiaryWriter(),
    reflector: createDeterministicReflector(),
    validator: createDeterministicValidator(),
  };
}

export interface FallbackRecord {
  component: "diaryWriter" | "reflector" | "validator";
  reason: string;
  code?: string;
}

export interface ResolvedLearning extends Omit<LearningComponents, "fallback"> {
  /** Fallbacks taken so far in this run (the LLM failed and the deterministic component answered). */
  readonly fallbacks: FallbackRecord[];
}

/** The components of `deps.learning` wrapped with the fallback policy; deterministic ones without it. */
export function resolveLearning(deps: Pick<OperationDeps, "learning" | "logger">): ResolvedLearning {
  const learning: LearningComponents | undefined = deps.learning;
  if (learning === undefined) {
    return { mode: "deterministic", reason: "no LLM configured", ...createDeterministicComponents(), fallbacks: [] };
  }
  const fallbacks: FallbackRecord[] = [];
  const base = {
    mode: learning.mode,
    ...(learning.reason !== undefined ? { reason: learning.reason } : {}),
    ...(learning.model !== undefined ? { model: learning.model } : {}),
    ...(learning.auditor !== undefined ? { auditor: learning.auditor } : {}),
    fallbacks,
  };
  const fallback = learning.fallback;
  if (fallback === undefined || learning.mode === "deterministic") {
    return { ...base, diaryWriter: learning.diaryWriter, reflector: learning.reflector, validator: learning.validator };
  }
  let broken: FallbackRecord | undefined;
  async function guarded<T>(component: FallbackRecord["component"], primary: () => Promise<T>, secondary: () => Promise<T>): Promise<T> {
    if (broken !== undefined) return secondary();
    try {
      return await primary();
    } catch (error) {
      const record: FallbackRecord = {
        component,
        reason: error instanceof Error ? error.message : String(error),
        ...(isAppError(error) ? { code: error.code } : {}),
      };
      broken = record;
      fallbacks.push(record);
      warnOnce(deps.logger, record);
      return secondary();
    }
  }
  return {
    ...base,
    diaryWriter: {
      kind: learning.diaryWriter.kind,
      write: (session) => guarded("diaryWriter", () => learning.diaryWriter.write(session), () => fallback.diaryWriter.write(session)),
    },
    reflector: {
      kind: learning.reflector.kind,
      reflect: (input) => guarded("reflector", () => learning.reflector.reflect(input), () => fallback.reflector.reflect(input)),
    },
    validator: {
      kind: learning.validator.kind,
      judge: (input) => guarded("validator", () => learning.validator.judge(input), () => fallback.validator.judge(input)),
    },
  };
}

function warnOnce(logger: Logger, record: FallbackRecord): void {
  logger.warn(`LLM call failed (${record.code ?? "error"}): ${record.reason} — using the deterministic ${record.component} for the rest of this run.`);
}
