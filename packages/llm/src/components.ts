import type { LanguageModel } from "ai";
import type * as z from "zod";
import {
  compileSanitizer,
  DeltaSchema,
  type AuditFinding,
  type Auditor,
  type Clock,
  type CostLedger,
  type Delta,
  type DiaryDraft,
  type DiaryWriter,
  type Logger,
  type ReflectionInput,
  type Reflector,
  type SessionTranscript,
  type ValidationInput,
  type Validator,
  type ValidatorJudgement,
} from "@cass-memory/core";
import { generateStructured, type ModelCapabilities, type Sleep } from "./generate.js";
import {
  AUDIT_SYSTEM,
  auditPrompt,
  DIARY_SYSTEM,
  diaryPrompt,
  REFLECTOR_MAX_DELTAS,
  REFLECTOR_SYSTEM,
  reflectorPrompt,
  VALIDATOR_SYSTEM,
  validatorPrompt,
} from "./prompts.js";
import {
  AuditReplySchema,
  DiaryReplySchema,
  ReflectorReplySchema,
  ValidatorReplySchema,
  type DeltaReply,
} from "./schemas.js";
import type { LlmSettings } from "./settings.js";

/** What every LLM-backed component needs. */
export interface LlmComponentDeps {
  model: LanguageModel;
  settings: LlmSettings;
  ledger: CostLedger;
  clock: Clock;
  logger: Logger;
  /** Secret redaction for everything sent (default: the built-in patterns). */
  sanitizer?: { sanitize(text: string): string };
  sleep?: Sleep;
  /** Attempts against malformed replies (default 3). */
  maxAttempts?: number;
  /** Shared between components so a server without JSON-schema support is detected once. */
  capabilities?: ModelCapabilities;
}

abstract class LlmComponent {
  readonly kind = "llm" as const;
  protected readonly deps: LlmComponentDeps;
  protected readonly clean: (text: string) => string;
  private readonly capabilities: ModelCapabilities;

  constructor(deps: LlmComponentDeps) {
    this.deps = deps;
    const sanitizer = deps.sanitizer ?? compileSanitizer();
    this.clean = (text) => sanitizer.sanitize(text);
    this.capabilities = deps.capabilities ?? { structuredOutputs: deps.settings.structuredOutputs };
  }

  protected async ask<S extends z.ZodType>(task: string, schema: S, system: string, prompt: string): Promise<z.output<S>> {
    const { model, settings, ledger, clock, logger, sleep, maxAttempts } = this.deps;
    const result = await generateStructured({
      model,
      schema,
      system,
      prompt,
      settings,
      ledger,
      clock,
      logger,
      sanitize: this.clean,
      capabilities: this.capabilities,
      task,
      schemaName: task,
      ...(sleep === undefined ? {} : { sleep }),
      ...(maxAttempts === undefined ? {} : { maxAttempts }),
    });
    return result.object;
  }

  /** Trimmed, redacted, non-empty, de-duplicated strings. */
  protected texts(items: readonly string[]): string[] {
    const out: string[] = [];
    for (const item of items) {
      const text = this.clean(item).trim();
      if (text !== "" && !out.includes(text)) out.push(text);
    }
    return out;
  }
}

// ---------------------------------------------------------------------------------------------

/** Session transcript → diary draft. */
export class LlmDiaryWriter extends LlmComponent implements DiaryWriter {
  async write(session: SessionTranscript): Promise<DiaryDraft> {
    this.deps.logger.debug(`LLM diary for ${session.path}`);
    const reply = await this.ask("diary", DiaryReplySchema, DIARY_SYSTEM, diaryPrompt(session, this.clean));
    const tags = this.texts(reply.tags.map((t) => t.toLowerCase()));
    return {
      status: reply.status,
      accomplishments: this.texts(reply.accomplishments),
      decisions: this.texts(reply.decisions),
      challenges: this.texts(reply.challenges),
      preferences: this.texts(reply.preferences),
      keyLearnings: this.texts(reply.keyLearnings),
      tags,
      ...(session.workspace === undefined ? {} : { workspace: session.workspace }),
    };
  }
}

// ---------------------------------------------------------------------------------------------

/** Identity of a delta for de-duplication (same change proposed twice). */
function deltaKey(delta: Delta): string {
  const norm = (text: string) => text.toLowerCase().replace(/\s+/g, " ").trim();
  switch (delta.type) {
    case "add":
      return `add:${norm(delta.bullet.content)}`;
    case "replace":
      return `replace:${delta.bulletId}:${norm(delta.newContent)}`;
    case "merge":
      return `merge:${[...delta.bulletIds].sort().join(",")}`;
    default:
      return `${delta.type}:${delta.bulletId}`;
  }
}

/** Diary + playbook + history → proposed deltas (at most 20, none repeating earlier passes). */
export class LlmReflector extends LlmComponent implements Reflector {
  async reflect(input: ReflectionInput): Promise<Delta[]> {
    const { logger } = this.deps;
    logger.debug(`LLM reflection pass ${input.iteration}/${input.maxIterations} for ${input.session.path}`);
    const reply = await this.ask("reflect", ReflectorReplySchema, REFLECTOR_SYSTEM, reflectorPrompt(input, this.clean));

    const known = new Set(input.playbook.bullets.map((b) => b.id));
    const seen = new Set(input.previous.map(deltaKey));
    const out: Delta[] = [];
    for (const raw of reply.deltas) {
      const delta = this.toDelta(raw, input.session.path, known);
      if (delta === undefined) continue;
      const key = deltaKey(delta);
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(delta);
      if (out.length >= REFLECTOR_MAX_DELTAS) break;
    }
    if (reply.deltas.length > out.length) {
      logger.debug(`LLM reflection: kept ${out.length} of ${reply.deltas.length} proposed deltas (unknown ids, repeats, invalid or over ${REFLECTOR_MAX_DELTAS})`);
    }
    return out;
  }

  /** Drops nulls, redacts texts, fixes the session, checks ids; undefined when unusable. */
  private toDelta(raw: DeltaReply, sessionPath: string, known: ReadonlySet<string>): Delta | undefined {
    const text = (value: string | null | undefined): string | undefined => {
      if (value === null || value === undefined) return undefined;
      const cleaned = this.clean(value).trim();
      return cleaned === "" ? undefined : cleaned;
    };
    const compact = (record: Record<string, unknown>): Record<string, unknown> =>
      Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined && v !== null));
    const knownId = (id: string) => known.has(id.trim());

    let candidate: Record<string, unknown>;
    switch (raw.type) {
      case "add": {
        const b = raw.bullet;
        const tags = b.tags === null ? undefined : this.texts(b.tags.map((t) => t.toLowerCase()));
        candidate = {
          type: "add",
          bullet: compact({
            content: text(b.content),
            category: text(b.category)?.toLowerCase() ?? "general",
            kind: b.kind,
            type: b.type,
            isNegative: b.isNegative,
            scope: b.scope,
            workspace: text(b.workspace),
            searchPointer: text(b.searchPointer),
            tags: tags && tags.length > 0 ? tags : undefined,
          }),
          reason: text(raw.reason) ?? "",
          sourceSession: sessionPath,
        };
        break;
      }
      case "helpful":
        if (!knownId(raw.bulletId)) return undefined;
        candidate = compact({ type: "helpful", bulletId: raw.bulletId.trim(), sourceSession: sessionPath, context: text(raw.context) });
        break;
      case "harmful":
        if (!knownId(raw.bulletId)) return undefined;
        candidate = compact({
          type: "harmful",
          bulletId: raw.bulletId.trim(),
          sourceSession: sessionPath,
          reason: raw.reason,
          context: text(raw.context),
        });
        break;
      case "replace":
        if (!knownId(raw.bulletId)) return undefined;
        candidate = compact({ type: "replace", bulletId: raw.bulletId.trim(), newContent: text(raw.newContent), reason: text(raw.reason) });
        break;
      case "deprecate": {
        if (!knownId(raw.bulletId)) return undefined;
        const replacedBy = raw.replacedBy !== null && knownId(raw.replacedBy) ? raw.replacedBy.trim() : undefined;
        candidate = compact({ type: "deprecate", bulletId: raw.bulletId.trim(), reason: text(raw.reason) ?? "", replacedBy });
        break;
      }
      case "merge": {
        const ids = [...new Set(raw.bulletIds.map((id) => id.trim()).filter((id) => known.has(id)))];
        if (ids.length < 2) return undefined;
        candidate = compact({ type: "merge", bulletIds: ids, mergedContent: text(raw.mergedContent), reason: text(raw.reason) });
        break;
      }
    }
    const parsed = DeltaSchema.safeParse(candidate);
    return parsed.success ? parsed.data : undefined;
  }
}

// ---------------------------------------------------------------------------------------------

/** A rule and the evidence gate's snippets → verdict, confidence and possibly a better wording. */
export class LlmValidator extends LlmComponent implements Validator {
  async judge(input: ValidationInput): Promise<ValidatorJudgement> {
    this.deps.logger.debug(`LLM validation of: ${input.rule.slice(0, 80)}`);
    const reply = await this.ask("validate", ValidatorReplySchema, VALIDATOR_SYSTEM, validatorPrompt(input.rule, input.gate, this.clean));
    const confidence = Number.isFinite(reply.confidence) ? Math.min(1, Math.max(0, reply.confidence)) : 0;
    const refined = reply.suggestedRefinement === null ? "" : this.clean(reply.suggestedRefinement).trim();
    return {
      verdict: reply.verdict,
      confidence,
      reason: this.clean(reply.reason).trim(),
      supporting: this.texts(reply.supporting),
      contradicting: this.texts(reply.contradicting),
      ...(refined !== "" && refined !== input.rule.trim() ? { refinedRule: refined } : {}),
    };
  }
}

// ---------------------------------------------------------------------------------------------

/** A session and playbook rules → which rules it followed or violated. */
export class LlmAuditor extends LlmComponent implements Auditor {
  async audit(input: {
    session: SessionTranscript;
    rules: Array<{ id: string; content: string }>;
  }): Promise<{ findings: AuditFinding[]; summary?: string }> {
    this.deps.logger.debug(`LLM audit of ${input.session.path} against ${input.rules.length} rules`);
    const reply = await this.ask("audit", AuditReplySchema, AUDIT_SYSTEM, auditPrompt(input.session, input.rules, this.clean));
    const known = new Set(input.rules.map((r) => r.id));
    const findings: AuditFinding[] = [];
    const seen = new Set<string>();
    for (const result of reply.results) {
      const ruleId = result.ruleId.trim();
      if (result.status === null || !known.has(ruleId) || seen.has(ruleId)) continue;
      seen.add(ruleId);
      findings.push({ ruleId, status: result.status, evidence: this.clean(result.evidence).trim() });
    }
    const summary = reply.summary === null ? "" : this.clean(reply.summary).trim();
    return summary === "" ? { findings } : { findings, summary };
  }
}
