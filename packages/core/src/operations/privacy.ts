import * as z from "zod";
import { AppError } from "../errors.js";
import { defineOperation, formatZodIssues } from "../operation.js";
import type { OperationDeps } from "../ports.js";
import { ConfigSchema } from "../schemas/config.js";
import { requirePositiveInt } from "./shared.js";
import { cassAvailableFrom } from "../episodic/availability.js";
import { lazySchema } from "../schemas/lazy.js";

/**
 * `cm privacy status|enable|disable|allow|deny` (reference §1.5.20): consent and the agent
 * allowlist for cross-agent enrichment (`crossAgent` in the global `config.json`).
 *
 * Deliberate differences from the original: `status` writes nothing (the original created the
 * global directory, a default config and a playbook as a side effect), and the mutations change
 * only the `crossAgent` key of `config.json`, under its lock, keeping every other key exactly as
 * the user wrote it (the original saved the whole resolved configuration).
 */

/** The allowlist `enable` uses when no agents are given and the history source knows of none. */
export const DEFAULT_CROSS_AGENT_AGENTS: readonly string[] = ["claude", "cursor", "codex", "aider", "pi_agent"];
export const PRIVACY_STATUS_DEFAULT_DAYS = 365;

const CrossAgentFileSchema = lazySchema(() => ConfigSchema.shape.crossAgent);

export const CrossAgentSchema = lazySchema(() => z.object({
  enabled: z.boolean(),
  consentGiven: z.boolean(),
  consentDate: z.string().nullable().optional(),
  agents: z.array(z.string()),
  auditLog: z.boolean(),
}));
export type CrossAgentSettings = z.output<typeof CrossAgentSchema>;

export const PrivacyStatusInputSchema = lazySchema(() => z.object({ days: z.number().optional() }));
export const PrivacyStatusSchema = lazySchema(() => z.object({
  crossAgent: CrossAgentSchema,
  cass: z.object({
    available: z.boolean(),
    timelineDays: z.number(),
    sessionCountsByAgent: z.record(z.string(), z.number()).nullable(),
  }),
  notes: z.object({ enable: z.string(), disable: z.string(), allow: z.string(), deny: z.string() }),
}));
export type PrivacyStatus = z.output<typeof PrivacyStatusSchema>;

export const PrivacyMutationSchema = lazySchema(() => z.object({ crossAgent: CrossAgentSchema }));
export type PrivacyMutationResult = z.output<typeof PrivacyMutationSchema>;

type FileCrossAgent = z.output<typeof CrossAgentFileSchema>;

function view(settings: FileCrossAgent): CrossAgentSettings {
  return {
    enabled: settings.enabled,
    consentGiven: settings.consentGiven,
    ...(settings.consentDate !== undefined ? { consentDate: settings.consentDate } : {}),
    agents: [...settings.agents],
    auditLog: settings.auditLog,
  };
}

function normalizeAgents(agents: readonly string[]): string[] {
  return [...new Set(agents.map((a) => a.trim().toLowerCase()).filter((a) => a !== ""))].sort();
}

/** Agents seen by the history source in the window, sorted; null when it cannot answer. */
async function sessionCounts(deps: OperationDeps, days: number): Promise<{ available: boolean; counts: Record<string, number> | null }> {
  let available = false;
  try {
    const health = await deps.episodic.health();
    // An installed cass is asked (its `timeline`) even when its health check fails, as the original did.
    available = health.available || cassAvailableFrom(health);
  } catch {
    available = false;
  }
  if (!available) return { available, counts: null };
  try {
    const counts: Record<string, number> = {};
    for (const session of await deps.episodic.listSessions({ days })) {
      const agent = session.agent || "unknown";
      counts[agent] = (counts[agent] ?? 0) + 1;
    }
    return { available, counts: Object.fromEntries(Object.entries(counts).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) };
  } catch (error) {
    deps.logger.warn(`Could not list sessions: ${error instanceof Error ? error.message : String(error)}`);
    return { available, counts: null };
  }
}

/**
 * Read-modify-write of `crossAgent` in the global config file. A `crossAgent` value that does not
 * validate is refused (CONFIG_INVALID) rather than silently replaced.
 */
async function updateCrossAgent(deps: OperationDeps, change: (current: FileCrossAgent) => void): Promise<PrivacyMutationResult> {
  const written = await deps.store.mutateConfigFile((raw) => {
    const parsed = CrossAgentFileSchema.safeParse(raw.crossAgent);
    if (!parsed.success) {
      throw new AppError("CONFIG_INVALID", `crossAgent in ${deps.store.locations.globalDir}/config.json is invalid: ${formatZodIssues(parsed.error)}`, {
        hint: `Fix or remove the crossAgent object in config.json, then re-run '${deps.cliName} privacy'.`,
        details: { key: "crossAgent" },
      });
    }
    change(parsed.data);
    raw.crossAgent = parsed.data;
  });
  return { crossAgent: view(CrossAgentFileSchema.parse(written.crossAgent)) };
}

function requireAgent(deps: OperationDeps, sub: "allow" | "deny", agent: string | undefined): string {
  const value = agent?.trim().toLowerCase() ?? "";
  if (value === "") {
    throw new AppError("MISSING_REQUIRED", `privacy ${sub} requires <agent>`, {
      hint: `${deps.cliName} privacy ${sub} claude`,
      details: { missing: "agent", usage: `${deps.cliName} privacy ${sub} <agent>` },
    });
  }
  return value;
}

export const privacyStatusOperation = defineOperation({
  name: "privacy_status",
  command: "privacy:status",
  description: "Show cross-agent enrichment consent, the agent allowlist, and session counts per agent.",
  input: PrivacyStatusInputSchema,
  output: PrivacyStatusSchema,
  async run(deps, input): Promise<PrivacyStatus> {
    const days = requirePositiveInt("days", input.days, PRIVACY_STATUS_DEFAULT_DAYS);
    const { available, counts } = await sessionCounts(deps, days);
    const cli = deps.cliName;
    return {
      crossAgent: view(deps.config.crossAgent),
      cass: { available, timelineDays: days, sessionCountsByAgent: counts },
      notes: {
        enable: `${cli} privacy enable [agents...]`,
        disable: `${cli} privacy disable`,
        allow: `${cli} privacy allow <agent>`,
        deny: `${cli} privacy deny <agent>`,
      },
    };
  },
});

export const privacyEnableOperation = defineOperation({
  name: "privacy_enable",
  command: "privacy:enable",
  description: "Enable cross-agent enrichment (records consent) for the given agents, or for the agents seen in history.",
  input: lazySchema(() => z.object({ agents: z.array(z.string()).optional() })),
  output: PrivacyMutationSchema,
  async run(deps, input): Promise<PrivacyMutationResult> {
    let agents = normalizeAgents(input.agents ?? []);
    if (agents.length === 0) {
      const { counts } = await sessionCounts(deps, PRIVACY_STATUS_DEFAULT_DAYS);
      agents = counts !== null ? normalizeAgents(Object.keys(counts)) : [];
      if (agents.length === 0) agents = [...DEFAULT_CROSS_AGENT_AGENTS];
    }
    const now = deps.clock.now().toISOString();
    return updateCrossAgent(deps, (current) => {
      current.enabled = true;
      current.consentGiven = true;
      if (typeof current.consentDate !== "string" || current.consentDate === "") current.consentDate = now;
      current.agents = agents;
    });
  },
});

export const privacyDisableOperation = defineOperation({
  name: "privacy_disable",
  command: "privacy:disable",
  description: "Disable cross-agent enrichment (the allowlist is kept).",
  input: lazySchema(() => z.object({})),
  output: PrivacyMutationSchema,
  async run(deps): Promise<PrivacyMutationResult> {
    return updateCrossAgent(deps, (current) => {
      current.enabled = false;
    });
  },
});

export const privacyAllowOperation = defineOperation({
  name: "privacy_allow",
  command: "privacy:allow",
  description: "Add an agent to the cross-agent allowlist.",
  input: lazySchema(() => z.object({ agent: z.string().optional() })),
  output: PrivacyMutationSchema,
  async run(deps, input): Promise<PrivacyMutationResult> {
    const agent = requireAgent(deps, "allow", input.agent);
    return updateCrossAgent(deps, (current) => {
      current.agents = normalizeAgents([...current.agents, agent]);
    });
  },
});

export const privacyDenyOperation = defineOperation({
  name: "privacy_deny",
  command: "privacy:deny",
  description: "Remove an agent from the cross-agent allowlist.",
  input: lazySchema(() => z.object({ agent: z.string().optional() })),
  output: PrivacyMutationSchema,
  async run(deps, input): Promise<PrivacyMutationResult> {
    const agent = requireAgent(deps, "deny", input.agent);
    return updateCrossAgent(deps, (current) => {
      current.agents = normalizeAgents(current.agents.filter((a) => a.trim().toLowerCase() !== agent));
    });
  },
});
