import {
  AppError,
  DeltaSchema,
  createDeterministicComponents,
  formatZodIssues,
  lazyValue,
  type Clock,
  type Config,
  type CostLedger,
  type Delta,
  type LearningComponents,
  type LlmStatus,
  type Logger,
  type Reflector,
} from "@cass-memory/core";
import * as z from "zod";

/**
 * Chooses the learning components (diary writer, reflector, validator, auditor):
 * - `CASS_MEMORY_LLM=none`, or no usable model (no key, unsupported provider): deterministic;
 * - otherwise the LLM-backed ones from `@cass-memory/llm`, loaded only here (the AI SDK is large,
 *   and `cm context` never needs it), with the deterministic ones as fallback unless config
 *   `llmFallback` is `"none"`;
 * - `CM_REFLECTOR_STUBS` (the original's test seam): a reflector that returns the given deltas.
 */

/** The part of `@cass-memory/llm` the runtime uses. */
export type LlmModule = Pick<typeof import("@cass-memory/llm"), "createLlmLearning" | "resolveLlmSettings">;

export interface LearningWiring {
  /**
   * Loads the LLM layer (default: `import("@cass-memory/llm")`). A bundled front end passes its
   * own loader (the CLI ships the layer as a separate file so that `cm context` never parses it).
   */
  loadLlm?: () => Promise<LlmModule>;
  config: Config;
  env: Readonly<Record<string, string | undefined>>;
  ledger: CostLedger;
  clock: Clock;
  logger: Logger;
}

const deterministic = createDeterministicComponents;

export async function createLearning(wiring: LearningWiring): Promise<LearningComponents> {
  const stubs = parseReflectorStubs(wiring.env.CM_REFLECTOR_STUBS);
  if (stubs !== null) {
    return { mode: "deterministic", reason: "CM_REFLECTOR_STUBS", ...deterministic(), reflector: stubReflector(stubs) };
  }
  if (wiring.env.CASS_MEMORY_LLM?.trim().toLowerCase() === "none") {
    return { mode: "deterministic", reason: "LLM disabled by CASS_MEMORY_LLM=none", ...deterministic() };
  }
  const llm = await (wiring.loadLlm ?? (() => import("@cass-memory/llm")))();
  const created = await llm.createLlmLearning({
    config: wiring.config,
    env: wiring.env,
    ledger: wiring.ledger,
    clock: wiring.clock,
    logger: wiring.logger,
  });
  const fallbackAllowed = wiring.config.llmFallback !== "none";
  if (!created.available) {
    if (!fallbackAllowed && created.code !== "disabled") {
      // llmFallback "none" asks for the LLM or nothing: every learning stage fails with the reason.
      wiring.logger.debug(`No usable LLM and llmFallback is "none": ${created.reason}`);
      return { mode: "llm", reason: created.reason, ...unavailableComponents(created.code, created.reason, created.hint) };
    }
    wiring.logger.debug(`Using deterministic learning: ${created.reason}`);
    return { mode: "deterministic", reason: created.reason, ...deterministic() };
  }
  return {
    mode: "llm",
    model: { provider: created.provider, model: created.model },
    ...created.components,
    ...(fallbackAllowed ? { fallback: deterministic() } : {}),
  };
}

/** Learning components that fail with why no model can be used (`llmFallback: "none"`). */
function unavailableComponents(code: string, reason: string, hint: string): Pick<LearningComponents, "diaryWriter" | "reflector" | "validator"> {
  const fail = (): never => {
    throw new AppError(code === "missing_key" ? "MISSING_API_KEY" : "CONFIG_INVALID", `No usable LLM: ${reason}`, { hint, details: { llmFallback: "none" } });
  };
  return {
    diaryWriter: { kind: "llm", write: async () => fail() },
    reflector: { kind: "llm", reflect: async () => fail() },
    validator: { kind: "llm", judge: async () => fail() },
  };
}

/** Whether the configured model is usable, resolved as `createLearning` will (the model is not contacted). */
export async function resolveLlmStatus(wiring: Pick<LearningWiring, "config" | "env" | "loadLlm">): Promise<LlmStatus> {
  if (wiring.env.CASS_MEMORY_LLM?.trim().toLowerCase() === "none") {
    return { available: false, reason: "LLM disabled by CASS_MEMORY_LLM=none", hint: "Unset CASS_MEMORY_LLM to use the configured model." };
  }
  const llm = await (wiring.loadLlm ?? (() => import("@cass-memory/llm")))();
  const settings = llm.resolveLlmSettings(wiring.config, wiring.env);
  if (!settings.available) return { available: false, reason: settings.reason, hint: settings.hint };
  return {
    available: true,
    provider: settings.provider,
    model: settings.model,
    local: settings.local,
    ...(settings.baseUrl !== undefined ? { baseUrl: settings.baseUrl } : {}),
  };
}

// Built on first use (issue 18: no zod schema is constructed while the CLI loads).
const stubsSchema = lazyValue(() => z.array(z.looseObject({ deltas: z.array(z.unknown()).default([]) })));

/** `CM_REFLECTOR_STUBS='[{"deltas":[…]}, …]'`; null when unset. Invalid JSON is a configuration error. */
export function parseReflectorStubs(raw: string | undefined): Delta[] | null {
  if (raw === undefined || raw.trim() === "") return null;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    throw new AppError("CONFIG_INVALID", "CM_REFLECTOR_STUBS is not valid JSON.", {
      hint: `Expected '[{"deltas":[{"type":"add","bullet":{"content":"…","category":"…"}}]}]'.`,
      cause: error,
    });
  }
  const parsed = stubsSchema().safeParse(value);
  if (!parsed.success) {
    throw new AppError("CONFIG_INVALID", `CM_REFLECTOR_STUBS: ${formatZodIssues(parsed.error)}`, {
      hint: `Expected an array of {"deltas": [...]} objects.`,
    });
  }
  const deltas: Delta[] = [];
  for (const stub of parsed.data) {
    for (const candidate of stub.deltas) {
      const delta = DeltaSchema.safeParse(candidate);
      if (delta.success) deltas.push(delta.data);
    }
  }
  return deltas;
}

/** All stub deltas on the first iteration, none after (so reflection stops). */
function stubReflector(deltas: readonly Delta[]): Reflector {
  return {
    kind: "deterministic",
    async reflect(input) {
      return input.iteration === 1 ? deltas.map((d) => structuredClone(d)) : [];
    },
  };
}
