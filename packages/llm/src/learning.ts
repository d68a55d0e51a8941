import type { LanguageModel } from "ai";
import {
  compileSanitizer,
  type Auditor,
  type Clock,
  type Config,
  type CostLedger,
  type DiaryWriter,
  type Logger,
  type Reflector,
  type Validator,
} from "@cass-memory/core";
import { LlmAuditor, LlmDiaryWriter, LlmReflector, LlmValidator, type LlmComponentDeps } from "./components.js";
import type { Sleep } from "./generate.js";
import { createLanguageModel } from "./model.js";
import { resolveLlmSettings, settingsForInjectedModel, type Env, type LlmProviderName, type LlmUnavailableCode } from "./settings.js";

export interface CreateLlmLearningOptions {
  config: Config;
  env: Env;
  /** Where call costs are recorded and budgets read from (the store's `costs`). */
  ledger: CostLedger;
  clock: Clock;
  logger: Logger;
  /** A ready model (tests, embedders); the configured provider's key is then not required. */
  model?: LanguageModel;
  sleep?: Sleep;
  /** Attempts against malformed replies (default 3). */
  maxAttempts?: number;
}

export interface LlmLearningComponents {
  diaryWriter: DiaryWriter;
  reflector: Reflector;
  validator: Validator;
  auditor: Auditor;
}

export type LlmLearning =
  | {
      available: true;
      components: LlmLearningComponents;
      provider: LlmProviderName;
      model: string;
      /** The model runs locally (Ollama, a baseUrl on this machine or network): calls cost nothing. */
      local: boolean;
    }
  | { available: false; reason: string; hint: string; code: LlmUnavailableCode };

/**
 * The LLM-backed learning components for a configuration, or why there are none. The components
 * share one sanitizer (config.sanitization), one budget/ledger and what is learned about the
 * server (JSON-schema support).
 */
export function createLlmLearning(options: CreateLlmLearningOptions): LlmLearning {
  const { config, env, logger } = options;
  const resolved = options.model === undefined ? resolveLlmSettings(config, env) : settingsForInjectedModel(config, env);
  if (!resolved.available) return { available: false, reason: resolved.reason, hint: resolved.hint, code: resolved.code };

  const sanitizer = compileSanitizer({
    enabled: config.sanitization?.enabled ?? true,
    extraPatterns: config.sanitization?.extraPatterns ?? [],
    allowlist: config.sanitization?.allowlist ?? [],
  });
  for (const warning of sanitizer.warnings) logger.warn(warning);

  const model = options.model ?? createLanguageModel(resolved);
  const deps: LlmComponentDeps = {
    model,
    settings: resolved,
    ledger: options.ledger,
    clock: options.clock,
    logger,
    sanitizer,
    capabilities: { structuredOutputs: resolved.structuredOutputs },
    ...(options.sleep === undefined ? {} : { sleep: options.sleep }),
    ...(options.maxAttempts === undefined ? {} : { maxAttempts: options.maxAttempts }),
  };
  return {
    available: true,
    components: {
      diaryWriter: new LlmDiaryWriter(deps),
      reflector: new LlmReflector(deps),
      validator: new LlmValidator(deps),
      auditor: new LlmAuditor(deps),
    },
    provider: resolved.provider,
    model: resolved.model,
    local: resolved.local,
  };
}
