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

/** What a run's learning really was: all LLM, some stages switched to the fallback, or none LLM. */
export type EffectiveLearningMode = "llm" | "mixed" | "deterministic";

export interface ResolvedLearning extends Omit<LearningComponents, "fallback"> {
  /**
   * Stages that switched to the deterministic component in this run, each once: the one whose LLM
   * call failed, and every other stage that was then sent straight to its fallback.
   */
  readonly fallbacks: FallbackRecord[];
  /** LLM stages that failed with no fallback allowed (`llmFallback: "none"`): the run must fail. */
  readonly failures: FallbackRecord[];
  /** No fallback allowed: a failing LLM stage fails the run. */
  readonly strict: boolean;
  /** Calls the LLM components answered. */
  readonly llmCalls: () => number;
}

/** The mode to report for a run: "mixed" once any stage fell back after the LLM answered. */
export function effectiveMode(learning: Pick<ResolvedLearning, "mode" | "fallbacks" | "llmCalls">): EffectiveLearningMode {
  if (learning.mode !== "llm") return "deterministic";
  if (learning.fallbacks.length === 0) return "llm";
  return learning.llmCalls() > 0 ? "mixed" : "deterministic";
}

function describeError(component: FallbackRecord["component"], error: unknown): FallbackRecord {
  return {
    component,
    reason: error instanceof Error ? error.message : String(error),
    ...(isAppError(error) ? { code: error.code } : {}),
  };
}

/** The components of `deps.learning` wrapped with the fallback policy; deterministic ones without it. */
export function resolveLearning(deps: Pick<OperationDeps, "learning" | "logger">): ResolvedLearning {
  const learning: LearningComponents | undefined = deps.learning;
  const none = () => 0;
  if (learning === undefined) {
    return { mode: "deterministic", reason: "no LLM configured", ...createDeterministicComponents(), fallbacks: [], failures: [], strict: false, llmCalls: none };
  }
  const fallbacks: FallbackRecord[] = [];
  const failures: FallbackRecord[] = [];
  let answered = 0;
  const fallback = learning.fallback;
  const strict = learning.mode === "llm" && fallback === undefined;
  const base = {
    mode: learning.mode,
    ...(learning.reason !== undefined ? { reason: learning.reason } : {}),
    ...(learning.model !== undefined ? { model: learning.model } : {}),
    ...(learning.auditor !== undefined ? { auditor: learning.auditor } : {}),
    fallbacks,
    failures,
    strict,
    llmCalls: () => answered,
  };
  if (learning.mode === "deterministic") {
    return { ...base, diaryWriter: learning.diaryWriter, reflector: learning.reflector, validator: learning.validator };
  }
  let broken: FallbackRecord | undefined;
  async function guarded<T>(component: FallbackRecord["component"], primary: () => Promise<T>, secondary: (() => Promise<T>) | undefined): Promise<T> {
    if (secondary === undefined) {
      // No fallback allowed: record the failure (the operation fails the run) and rethrow.
      try {
        const out = await primary();
        answered++;
        return out;
      } catch (error) {
        failures.push(describeError(component, error));
        throw error;
      }
    }
    if (broken !== undefined) {
      if (!fallbacks.some((f) => f.component === component)) {
        fallbacks.push({
          component,
          reason: `not tried: the LLM ${broken.component} failed earlier in this run (${broken.reason})`,
          ...(broken.code !== undefined ? { code: broken.code } : {}),
        });
      }
      return secondary();
    }
    try {
      const out = await primary();
      answered++;
      return out;
    } catch (error) {
      const record = describeError(component, error);
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
      write: (session) => guarded("diaryWriter", () => learning.diaryWriter.write(session), fallback && (() => fallback.diaryWriter.write(session))),
    },
    reflector: {
      kind: learning.reflector.kind,
      reflect: (input) => guarded("reflector", () => learning.reflector.reflect(input), fallback && (() => fallback.reflector.reflect(input))),
    },
    validator: {
      kind: learning.validator.kind,
      judge: (input) => guarded("validator", () => learning.validator.judge(input), fallback && (() => fallback.validator.judge(input))),
    },
  };
}

function warnOnce(logger: Logger, record: FallbackRecord): void {
  logger.warn(`LLM call failed (${record.code ?? "error"}): ${record.reason} — using the deterministic components for the rest of this run.`);
}
