import { AppError } from "@cass-memory/core";
import type { PlanAction } from "./json-config.js";

/**
 * The short pointer block `cm setup --agents-md` keeps in a repository's AGENTS.md (or CLAUDE.md):
 * a few lines telling agents to ask cm for context and to give feedback, between marker comments so
 * that re-running replaces the block instead of adding another one. Nothing outside the markers is
 * touched.
 */

export const AGENTS_MD_BEGIN = "<!-- cass-memory:begin";
export const AGENTS_MD_END = "<!-- cass-memory:end -->";

/** The block (without a final line break), for the program name `cli`. */
export function agentsMdBlock(cli = "cm", eol = "\n"): string {
  return [
    `${AGENTS_MD_BEGIN} (managed by \`${cli} setup --agents-md\`; re-running replaces this block) -->`,
    "## Procedural memory (cass-memory)",
    "",
    `- Before starting a task, run \`${cli} context "<task>" --json\` (MCP tool \`cm_context\`) and follow the rules and anti-patterns it returns.`,
    `- Give feedback on rules you used: \`${cli} mark <id> --helpful\` or \`${cli} mark <id> --harmful --reason <why>\`, or leave an inline comment \`// [cass: helpful <id>] - why\` / \`// [cass: harmful <id>] - why\`.`,
    `- Rules live in the playbook: global \`~/.cass-memory/playbook.yaml\` and this repository's \`.cass/playbook.yaml\`; see them with \`${cli} playbook list\`.`,
    AGENTS_MD_END,
  ].join(eol);
}

export interface AgentsMdPlan {
  action: PlanAction;
  content: string;
}

function occurrences(text: string, needle: string): number[] {
  const found: number[] = [];
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) found.push(i);
  return found;
}

/** Plans the instruction file's new content (`text` null when it does not exist). */
export function planAgentsMd(text: string | null, path: string, cli = "cm"): AgentsMdPlan {
  const original = text ?? "";
  const eol = original.includes("\r\n") ? "\r\n" : "\n";
  const block = agentsMdBlock(cli, eol);
  const begins = occurrences(original, AGENTS_MD_BEGIN);
  const ends = occurrences(original, AGENTS_MD_END);
  let content: string;
  if (begins.length === 0 && ends.length === 0) {
    let prefix = original;
    if (prefix.length > 0 && !prefix.endsWith("\n")) prefix += eol;
    if (prefix.trim().length > 0) prefix += eol;
    else prefix = "";
    content = `${prefix}${block}${eol}`;
  } else if (begins.length === 1 && ends.length === 1 && begins[0]! < ends[0]!) {
    content = original.slice(0, begins[0]!) + block + original.slice(ends[0]! + AGENTS_MD_END.length);
  } else {
    throw new AppError("CONFIG_INVALID", `${path} has unbalanced or repeated cass-memory markers; cm will not edit it.`, {
      hint: `Keep exactly one "${AGENTS_MD_BEGIN} … -->" … "${AGENTS_MD_END}" pair (or remove both), then re-run.`,
      details: { path, beginMarkers: begins.length, endMarkers: ends.length },
    });
  }
  if (text !== null && content === text) return { action: "unchanged", content: text };
  return { action: text === null ? "created" : "updated", content };
}
