import * as z from "zod";
import { AppError } from "../errors.js";
import { resolveLearning } from "../learning/fallback.js";
import { loadTranscript } from "../learning/session.js";
import { defineOperation } from "../operation.js";
import { isActiveBullet } from "../schemas/playbook.js";
import { loadMergedPlaybook, requirePositiveInt } from "./shared.js";
import { lazySchema } from "../schemas/lazy.js";

/**
 * `cm audit` (reference §1.5.16): asks the LLM auditor which active rules recent sessions violated.
 * Violations of proven rules are `high`, of others `medium`. Needs an LLM; without one it fails
 * with MISSING_API_KEY and says how to configure one.
 */

export const AUDIT_CONCURRENCY = 3;
export const DEFAULT_AUDIT_SESSIONS = 20;

export const AuditInputSchema = lazySchema(() => z.object({
  days: z.number().optional(),
  /** At most this many sessions (newest first) are audited; bounds the LLM spend. */
  limit: z.number().optional(),
}));

const ViolationSchema = lazySchema(() => z.looseObject({
  bulletId: z.string(),
  bulletContent: z.string(),
  sessionPath: z.string(),
  evidence: z.string(),
  severity: z.enum(["high", "medium", "low"]),
  timestamp: z.string(),
}));

export const AuditResultSchema = lazySchema(() => z.looseObject({
  violations: z.array(ViolationSchema),
  stats: z.looseObject({
    sessionsScanned: z.number(),
    rulesChecked: z.number(),
    violationsFound: z.number(),
    bySeverity: z.looseObject({ high: z.number(), medium: z.number(), low: z.number() }),
  }),
  scannedAt: z.string(),
  errors: z.array(z.string()),
}));
export type AuditResult = z.output<typeof AuditResultSchema>;

export const auditOperation = defineOperation({
  name: "memory_audit",
  command: "audit",
  description: "Check recent sessions for violations of the playbook's rules (needs an LLM).",
  input: AuditInputSchema,
  output: AuditResultSchema,
  async run(deps, input): Promise<AuditResult> {
    const days = requirePositiveInt("days", input.days, 7, 1, `${deps.cliName} audit --days 7`);
    const limit = requirePositiveInt("limit", input.limit, DEFAULT_AUDIT_SESSIONS, 1, `${deps.cliName} audit --limit 20`);
    const learning = resolveLearning(deps);
    const auditor = learning.auditor;
    if (auditor === undefined) {
      throw new AppError("MISSING_API_KEY", `Audit requires LLM access${learning.reason ? ` (${learning.reason})` : ""}.`, {
        hint: "Set ANTHROPIC_API_KEY, OPENAI_API_KEY or GOOGLE_GENERATIVE_AI_API_KEY, or point provider/baseUrl at a local OpenAI-compatible server (Ollama, llama.cpp, vLLM).",
        details: { command: "audit" },
      });
    }
    const scannedAt = deps.clock.now().toISOString();
    const result: AuditResult = {
      violations: [],
      stats: { sessionsScanned: 0, rulesChecked: 0, violationsFound: 0, bySeverity: { high: 0, medium: 0, low: 0 } },
      scannedAt,
      errors: [],
    };
    const sessions = (await deps.episodic.listSessions({ days }))
      .sort((a, b) => (b.endTime ?? b.startTime ?? "").localeCompare(a.endTime ?? a.startTime ?? ""))
      .slice(0, limit);
    if (sessions.length === 0) return result;

    const rules = (await loadMergedPlaybook(deps)).bullets.filter(isActiveBullet);
    result.stats.rulesChecked = rules.length;
    if (rules.length === 0) return result;
    const byId = new Map(rules.map((b) => [b.id, b]));
    const ruleList = rules.map((b) => ({ id: b.id, content: b.content }));

    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < sessions.length) {
        const session = sessions[next++]!;
        try {
          const transcript = await loadTranscript(deps, session.path, { agent: session.agent });
          const { findings } = await auditor.audit({ session: transcript, rules: ruleList });
          result.stats.sessionsScanned++;
          for (const finding of findings) {
            if (finding.status !== "violated") continue;
            const rule = byId.get(finding.ruleId);
            if (rule === undefined) continue;
            const severity = rule.maturity === "proven" ? "high" : "medium";
            result.violations.push({
              bulletId: rule.id,
              bulletContent: rule.content,
              sessionPath: session.path,
              evidence: finding.evidence,
              severity,
              timestamp: session.endTime ?? session.startTime ?? scannedAt,
            });
            result.stats.bySeverity[severity]++;
          }
        } catch (error) {
          result.errors.push(`Failed to audit ${session.path}: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
    };
    if (sessions.length > 1) deps.logger.info(`Auditing ${sessions.length} session(s) against ${rules.length} rule(s)…`);
    await Promise.all(Array.from({ length: Math.min(AUDIT_CONCURRENCY, sessions.length) }, worker));
    result.violations.sort((a, b) => a.sessionPath.localeCompare(b.sessionPath) || a.bulletId.localeCompare(b.bulletId));
    result.stats.violationsFound = result.violations.length;
    return result;
  },
});
