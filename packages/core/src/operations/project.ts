import * as z from "zod";
import { redactDeep } from "../domain/secrets.js";
import { redactFor } from "./secret-guard.js";
import { AppError } from "../errors.js";
import { getEffectiveScore, scoreBucket } from "../domain/scoring.js";
import { defineOperation } from "../operation.js";
import type { Config } from "../schemas/config.js";
import { isActiveBullet, isAntiPattern, isOutsideValidity, type Bullet, type Playbook } from "../schemas/playbook.js";
import { loadMergedPlaybook, requirePositiveInt } from "./shared.js";
import { lazySchema } from "../schemas/lazy.js";

/**
 * `cm project` (reference §1.5.17): the merged playbook projected into a file an agent reads at
 * start-up: AGENTS.md, a CLAUDE.md `<project_rules>` block, or the raw playbook (JSON, YAML).
 * Rendering is pure; writing a file is the front end's job.
 */

export const PROJECT_FORMATS = ["agents.md", "claude.md", "raw", "json", "yaml"] as const;
export type ProjectFormat = (typeof PROJECT_FORMATS)[number];

/** Every accepted spelling (case-insensitive), as the original accepts them. */
export const PROJECT_FORMAT_NAMES = ["agents.md", "agents", "claude.md", "claude", "raw", "json", "yaml"] as const;

const FORMAT_ALIASES: Readonly<Record<string, ProjectFormat>> = {
  "agents.md": "agents.md",
  agents: "agents.md",
  "claude.md": "claude.md",
  claude: "claude.md",
  raw: "raw",
  json: "json",
  yaml: "yaml",
};

/** The canonical format for a user-supplied name, or INVALID_INPUT naming the field. */
export function parseProjectFormat(raw: string | undefined): ProjectFormat {
  if (raw === undefined) return "agents.md";
  const format = FORMAT_ALIASES[raw.trim().toLowerCase()];
  if (format === undefined) {
    throw new AppError("INVALID_INPUT", `format must be one of: ${PROJECT_FORMAT_NAMES.join(", ")}.`, {
      details: { field: "format", received: raw, allowed: [...PROJECT_FORMAT_NAMES] },
    });
  }
  return format;
}

export const ProjectInputSchema = lazySchema(() => z.object({
  /** agents.md (default), agents, claude.md, claude, raw, json or yaml; case-insensitive. */
  format: z.string().optional(),
  /** At most this many rules per category (best effective score first). Default: all. */
  perCategory: z.number().optional(),
  /** Show `[helpful+/harmful-]` feedback counts next to rules (default true). */
  showCounts: z.boolean().optional(),
}));
export type ProjectInput = z.input<typeof ProjectInputSchema>;

export const ProjectResultSchema = lazySchema(() => z.union([
  z.object({ format: z.enum(["agents.md", "claude.md", "raw", "json"]), content: z.string() }),
  /**
   * yaml: core has no YAML serialiser, so the document to serialise is returned as is and the
   * front end turns it into `content`.
   */
  z.object({ format: z.literal("yaml"), document: z.looseObject({}) }),
]));
export type ProjectResult = { format: Exclude<ProjectFormat, "yaml">; content: string } | { format: "yaml"; document: Playbook };

export interface ProjectRenderOptions {
  now: Date;
  config: Pick<Config, "scoring" | "defaultDecayHalfLife">;
  /** Undefined: every rule. */
  perCategory?: number;
  showCounts: boolean;
  /** Program name used in the "no rules yet" hint. */
  cliName: string;
}

interface Ranked {
  bullet: Bullet;
  score: number;
}

/** Active rules valid at `now`, split into rules and anti-patterns, grouped by category (sorted), best score first. */
function rankForProjection(playbook: Playbook, options: ProjectRenderOptions) {
  const included: Ranked[] = playbook.bullets
    .filter((b) => isActiveBullet(b) && !isOutsideValidity(b, options.now))
    .map((bullet) => ({ bullet, score: getEffectiveScore(bullet, options.now, options.config) }));
  const group = (items: Ranked[]): Array<[string, Ranked[]]> => {
    const byCategory = new Map<string, Ranked[]>();
    for (const item of items) {
      const key = item.bullet.category.trim() || "general";
      const list = byCategory.get(key) ?? [];
      list.push(item);
      byCategory.set(key, list);
    }
    return [...byCategory.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([category, list]) => {
        // Best first; ties keep the playbook's order (Array.prototype.sort is stable).
        const sorted = [...list].sort((x, y) => y.score - x.score);
        return [category, options.perCategory !== undefined ? sorted.slice(0, options.perCategory) : sorted];
      });
  };
  return {
    included,
    rules: group(included.filter((r) => !isAntiPattern(r.bullet))),
    antiPatterns: group(included.filter((r) => isAntiPattern(r.bullet))),
  };
}

const oneLine = (text: string): string => text.replace(/\s+/g, " ").trim();
/** Anti-pattern sections already say "avoid", so a leading "AVOID:" of the rule text is dropped. */
const withoutAvoid = (text: string): string => oneLine(text).replace(/^AVOID:\s*/i, "");
const scoreText = (n: number): string => {
  const s = n.toFixed(1);
  return s === "-0.0" ? "0.0" : s;
};

const MATURITY_ICON: Readonly<Record<string, string>> = { proven: "★", established: "✓" };

function counts(b: Bullet, show: boolean): string {
  if (!show || b.helpfulCount + b.harmfulCount === 0) return "";
  return ` [${b.helpfulCount}+/${b.harmfulCount}-]`;
}

/** AGENTS.md: summary, rules by category with scores, then the anti-patterns. */
export function renderAgentsMd(playbook: Playbook, options: ProjectRenderOptions): string {
  const { included, rules, antiPatterns } = rankForProjection(playbook, options);
  const countAnti = included.filter((r) => isAntiPattern(r.bullet)).length;
  const maturity = { proven: 0, established: 0, candidate: 0 };
  const buckets = { excellent: 0, good: 0, neutral: 0, atRisk: 0 };
  for (const { bullet, score } of included) {
    if (bullet.maturity === "proven" || bullet.maturity === "established" || bullet.maturity === "candidate") maturity[bullet.maturity]++;
    buckets[scoreBucket(score)]++;
  }
  const lines = [
    "# AGENTS.md",
    "",
    "> Auto-generated playbook for AI coding assistants.",
    `> Last updated: ${options.now.toISOString().slice(0, 10)}`,
    "",
    "## Summary",
    "",
    `- Total rules: ${included.length} (${plural(included.length - countAnti, "rule")}, ${plural(countAnti, "anti-pattern")})`,
    `- Maturity: ${maturity.proven} proven, ${maturity.established} established, ${maturity.candidate} candidate`,
    `- Scores: ${buckets.excellent} excellent (>= 10), ${buckets.good} good (>= 5), ${buckets.neutral} neutral, ${buckets.atRisk} at risk (< 0)`,
    "",
    "## Rules",
    "",
  ];
  if (included.length === 0) {
    lines.push(`_No rules yet. Add one with \`${options.cliName} playbook add "<rule>" --category <category>\`._`, "");
  } else if (rules.length === 0) {
    lines.push("_Only anti-patterns so far (below)._", "");
  }
  for (const [category, items] of rules) {
    lines.push(`### ${category}`, "");
    for (const { bullet, score } of items) {
      const icon = MATURITY_ICON[bullet.maturity];
      lines.push(`- ${icon ? `${icon} ` : ""}${oneLine(bullet.content)}${counts(bullet, options.showCounts)} _(score: ${scoreText(score)})_`);
    }
    lines.push("");
  }
  if (antiPatterns.length > 0) {
    lines.push("## Anti-Patterns (AVOID)", "");
    for (const [category, items] of antiPatterns) {
      for (const { bullet } of items) lines.push(`- **${category}**: ${withoutAvoid(bullet.content)}${counts(bullet, options.showCounts)}`);
    }
    lines.push("");
  }
  return `${lines.join("\n").trimEnd()}\n`;
}

/** CLAUDE.md block: `<project_rules>` with rules by category and a "do not" list. */
export function renderClaudeMd(playbook: Playbook, options: ProjectRenderOptions): string {
  const { rules, antiPatterns } = rankForProjection(playbook, options);
  const lines = [
    "<project_rules>",
    "# Project Rules",
    "",
    `> Generated from the cass-memory playbook on ${options.now.toISOString().slice(0, 10)}. Rules are ordered by how well they have held up.`,
    "",
  ];
  if (rules.length === 0 && antiPatterns.length === 0) lines.push("_No rules yet._", "");
  for (const [category, items] of rules) {
    lines.push(`## ${category}`, "");
    for (const { bullet } of items) lines.push(`- ${oneLine(bullet.content)}${counts(bullet, options.showCounts)}`);
    lines.push("");
  }
  if (antiPatterns.length > 0) {
    lines.push("## IMPORTANT: Avoid These Patterns", "");
    for (const [, items] of antiPatterns) {
      for (const { bullet } of items) lines.push(`- DO NOT: ${withoutAvoid(bullet.content)}${counts(bullet, options.showCounts)}`);
    }
    lines.push("");
  }
  lines.push("</project_rules>");
  return `${lines.join("\n")}\n`;
}

function plural(n: number, unit: string): string {
  return `${n} ${unit}${n === 1 ? "" : "s"}`;
}

export const projectOperation = defineOperation({
  name: "project",
  command: "project",
  description: "Render the merged playbook as AGENTS.md, a CLAUDE.md rules block, or raw JSON/YAML.",
  input: ProjectInputSchema,
  output: ProjectResultSchema,
  async run(deps, input): Promise<ProjectResult> {
    const format = parseProjectFormat(input.format);
    const perCategory = input.perCategory !== undefined ? requirePositiveInt("per-category", input.perCategory, 0) : undefined;
    // What is projected into AGENTS.md / CLAUDE.md / a file leaves cm: secrets stored by an older
    // version are redacted on the way out (issue 21).
    const playbook = redactDeep(await loadMergedPlaybook(deps), (text) => redactFor(deps.config, text));
    if (format === "yaml") return { format, document: playbook };
    if (format === "raw" || format === "json") return { format, content: `${JSON.stringify(playbook, null, 2)}\n` };
    const options: ProjectRenderOptions = {
      now: deps.clock.now(),
      config: deps.config,
      showCounts: input.showCounts !== false,
      cliName: deps.cliName,
      ...(perCategory !== undefined ? { perCategory } : {}),
    };
    return { format, content: format === "agents.md" ? renderAgentsMd(playbook, options) : renderClaudeMd(playbook, options) };
  },
});
