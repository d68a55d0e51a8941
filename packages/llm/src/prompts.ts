import {
  isActiveBullet,
  type Delta,
  type DiaryEntry,
  type EvidenceGateResult,
  type HistoryHit,
  type Playbook,
  type SessionTranscript,
} from "@cass-memory/core";

/**
 * Prompt texts and the size limits of their parts. Everything taken from sessions, diaries and
 * history goes through `clean` (secret redaction) BEFORE it is cut to size, so that a secret is
 * never split into a piece the patterns no longer recognise.
 */

export const DIARY_TRANSCRIPT_MAX_CHARS = 50_000;
export const REFLECTOR_PLAYBOOK_MAX_CHARS = 20_000;
export const REFLECTOR_HISTORY_MAX_CHARS = 20_000;
export const REFLECTOR_EXCERPT_MAX_CHARS = 12_000;
export const REFLECTOR_MAX_DELTAS = 20;
export const VALIDATOR_EVIDENCE_MAX_CHARS = 30_000;
export const AUDIT_BUDGET_CHARS = 30_000;
export const AUDIT_MIN_SESSION_CHARS = 5_000;

type Clean = (text: string) => string;

/** Keeps the beginning and the end of `text` within `max` characters, marking the cut. */
export function truncateMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  const omitted = text.length - max;
  const marker = `\n\n[… ${omitted} characters omitted …]\n\n`;
  const room = Math.max(0, max - marker.length);
  const head = Math.ceil(room / 2);
  const tail = room - head;
  return text.slice(0, head) + marker + (tail > 0 ? text.slice(text.length - tail) : "");
}

/** Keeps whole lines of `lines` while they fit in `max` characters; reports how many were left out. */
function fitLines(lines: readonly string[], max: number): { text: string; omitted: number } {
  const kept: string[] = [];
  let size = 0;
  for (const line of lines) {
    if (size + line.length + 1 > max) break;
    kept.push(line);
    size += line.length + 1;
  }
  return { text: kept.join("\n"), omitted: lines.length - kept.length };
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function bulletList(items: readonly string[], clean: Clean): string {
  return items.length === 0 ? "  (none)" : items.map((item) => `  - ${oneLine(clean(item))}`).join("\n");
}

function sessionHeader(session: SessionTranscript, clean: Clean): string {
  const lines = [`Session: ${clean(session.path)}`, `Agent: ${session.agent}`];
  if (session.workspace) lines.push(`Workspace: ${clean(session.workspace)}`);
  return lines.join("\n");
}

const SPECIFICITY = [
  "Be specific: name the files, functions, commands, flags, config keys, libraries and exact error messages involved.",
  'Leave out generic advice that would fit any project ("write tests", "be careful", "read the docs").',
  "Never include secrets, tokens, passwords or personal data, even if the text shows some.",
].join("\n");

// ---------------------------------------------------------------------------------------------
// Diary

export const DIARY_SYSTEM = `You write the diary entry of one AI coding-agent session: a short, factual record that a later session can learn from.
Use only what the transcript shows; never invent. Each list item is one self-contained sentence. Use an empty list when the transcript has nothing for a field.
${SPECIFICITY}

Fields:
- status: "success" if the task was completed, "failure" if it was not, "mixed" if partly.
- accomplishments: what was achieved, e.g. "Fixed the stale-lock race in src/lock.ts by re-reading the owner pid before removal".
- decisions: choices that were made and why.
- challenges: problems met, quoting the error message or failing command when there is one.
- preferences: preferences the user stated about style, tools or workflow.
- keyLearnings: lessons that would save time in a future session on this code base, phrased as reusable, actionable advice.
- tags: 3 to 8 lowercase keywords (languages, tools, subsystems).`;

export function diaryPrompt(session: SessionTranscript, clean: Clean): string {
  const transcript = truncateMiddle(clean(session.text), DIARY_TRANSCRIPT_MAX_CHARS);
  return `${sessionHeader(session, clean)}

Transcript (secrets redacted; long transcripts are cut in the middle):
<transcript>
${transcript}
</transcript>

Write the diary entry for this session.`;
}

// ---------------------------------------------------------------------------------------------
// Reflector

export const REFLECTOR_SYSTEM = `You curate a playbook of rules that AI coding agents read before they start work. From one session, propose changes to the playbook ("deltas").

A good rule is specific, reusable and actionable: it says what to do or avoid and when, and names the concrete file, command, API, config key or error message, e.g. "Run 'pnpm build' before 'vitest run': tests import the packages' dist/ output" or "Never call openai('id') for local servers; use createOpenAI({baseURL}).chat('id') (the Responses API is not served)".
Do not propose generic advice, one-off facts about this session, or a rule that an existing rule already covers (give that rule a "helpful" delta instead).

Delta types (fill every field; use null where a field does not apply):
- add: a new rule. bullet.content: one imperative sentence. bullet.category: a short lowercase topic (e.g. testing, git, build, typescript, debugging, tooling). bullet.kind: project_convention (this repository's conventions), stack_pattern (a library or language), workflow_rule (how to work), anti_pattern (what to avoid). For "never/avoid" rules set isNegative true, type "anti-pattern" and kind anti_pattern. bullet.scope: "global", or "workspace" when the rule only holds in this repository. reason: the evidence in the session.
- helpful: an existing rule (by its id) that the session shows was useful.
- harmful: an existing rule the session shows was wrong or misleading; reason is one of caused_bug, wasted_time, contradicted_requirements, wrong_context, outdated, other.
- replace: a clearer or corrected wording of an existing rule (newContent).
- deprecate: an existing rule that is no longer true (reason; replacedBy is the id of a rule that supersedes it, or null).
- merge: two or more existing rules that say the same thing (bulletIds, mergedContent).
Refer only to ids that appear in the playbook below. Set sourceSession to null.
Propose at most ${REFLECTOR_MAX_DELTAS} deltas; fewer, better ones are preferred. Reply {"deltas": []} when nothing is worth recording.
${SPECIFICITY}`;

/** The active rules grouped by category, `- [id] content (h+ / x-)`, within REFLECTOR_PLAYBOOK_MAX_CHARS. */
export function formatPlaybook(playbook: Playbook, maxChars = REFLECTOR_PLAYBOOK_MAX_CHARS): { text: string; count: number } {
  const active = playbook.bullets.filter((b) => isActiveBullet(b));
  if (active.length === 0) return { text: "(the playbook is empty)", count: 0 };
  const byCategory = new Map<string, typeof active>();
  for (const bullet of active) {
    const key = bullet.category.trim() || "general";
    const list = byCategory.get(key) ?? [];
    list.push(bullet);
    byCategory.set(key, list);
  }
  const lines: string[] = [];
  for (const category of [...byCategory.keys()].sort()) {
    lines.push(`### ${category}`);
    const bullets = [...(byCategory.get(category) ?? [])].sort((a, b) => b.helpfulCount - a.helpfulCount || a.id.localeCompare(b.id));
    for (const b of bullets) lines.push(`- [${b.id}] ${oneLine(b.content)} (${b.helpfulCount}+ / ${b.harmfulCount}-)`);
  }
  const fitted = fitLines(lines, maxChars);
  const more = fitted.omitted > 0 ? `\n(… ${fitted.omitted} more lines not shown)` : "";
  return { text: fitted.text + more, count: active.length };
}

function formatDiary(diary: DiaryEntry, clean: Clean): string {
  return [
    `Status: ${diary.status}`,
    "Accomplishments:",
    bulletList(diary.accomplishments, clean),
    "Decisions:",
    bulletList(diary.decisions, clean),
    "Challenges:",
    bulletList(diary.challenges, clean),
    "Preferences:",
    bulletList(diary.preferences, clean),
    "Key learnings:",
    bulletList(diary.keyLearnings, clean),
    `Tags: ${diary.tags.length === 0 ? "(none)" : diary.tags.map((t) => clean(t)).join(", ")}`,
  ].join("\n");
}

function formatHistory(history: readonly HistoryHit[], clean: Clean, maxChars: number): string {
  if (history.length === 0) return "(no related sessions found)";
  const lines = history.map((hit) => `- [${hit.agent}] ${clean(hit.source_path)}: ${oneLine(clean(hit.snippet)).slice(0, 1_500)}`);
  const fitted = fitLines(lines, maxChars);
  return fitted.text + (fitted.omitted > 0 ? `\n(… ${fitted.omitted} more snippets not shown)` : "");
}

/** One line per delta, to show the model what earlier iterations already proposed. */
export function describeDelta(delta: Delta): string {
  switch (delta.type) {
    case "add":
      return `add [${delta.bullet.category}] ${oneLine(delta.bullet.content)}`;
    case "helpful":
    case "harmful":
    case "deprecate":
      return `${delta.type} ${delta.bulletId}`;
    case "replace":
      return `replace ${delta.bulletId} → ${oneLine(delta.newContent)}`;
    case "merge":
      return `merge ${delta.bulletIds.join(", ")} → ${oneLine(delta.mergedContent)}`;
  }
}

export interface ReflectorPromptInput {
  session: SessionTranscript;
  diary: DiaryEntry;
  playbook: Playbook;
  history: readonly HistoryHit[];
  iteration: number;
  maxIterations: number;
  previous: readonly Delta[];
}

export function reflectorPrompt(input: ReflectorPromptInput, clean: Clean): string {
  const playbook = formatPlaybook(input.playbook);
  const excerpt = truncateMiddle(clean(input.session.text), REFLECTOR_EXCERPT_MAX_CHARS);
  const iterationNote =
    input.previous.length === 0
      ? `This is pass ${input.iteration} of ${input.maxIterations}.`
      : `This is pass ${input.iteration} of ${input.maxIterations}. Earlier passes already proposed the deltas below: do not repeat them or restate them in other words; propose only what they missed, or {"deltas": []}.\n` +
        input.previous.map((d) => `- ${describeDelta(d)}`).join("\n");
  return `## Playbook (${playbook.count} active rules)
${playbook.text}

## Diary of the session
${sessionHeader(input.session, clean)}
${formatDiary(input.diary, clean)}

## Session excerpt (secrets redacted; cut in the middle when long)
<transcript>
${excerpt}
</transcript>

## Related history from other sessions
${formatHistory(input.history, clean, REFLECTOR_HISTORY_MAX_CHARS)}

## Iteration
${iterationNote}

Propose the deltas for this session.`;
}

// ---------------------------------------------------------------------------------------------
// Validator

export const VALIDATOR_SYSTEM = `You check a proposed rule for AI coding agents against evidence from past sessions, like a careful scientist.
Count the sessions that support the rule and those that contradict it, look for edge cases where it would mislead, and judge whether it is specific and broadly useful.
Verdicts:
- ACCEPT: well supported and specific.
- ACCEPT_WITH_CAUTION: some support, but thin evidence or a known edge case.
- REFINE: the idea holds but the wording is too broad, too narrow or unclear; give the better wording in suggestedRefinement.
- REJECT: contradicted by the evidence, unsupported, or generic advice.
confidence: a number from 0 to 1. supporting / contradicting: short summaries of individual pieces of evidence, each naming its session. suggestedRefinement: the improved rule (one imperative sentence, specific) or null.`;

export function validatorPrompt(rule: string, gate: EvidenceGateResult, clean: Clean): string {
  const lines = gate.evidence.map((item) => `- [${item.outcome}] ${clean(item.session)}: ${oneLine(clean(item.snippet))}`);
  const fitted = fitLines(lines, VALIDATOR_EVIDENCE_MAX_CHARS);
  const evidence =
    lines.length === 0 ? "(no evidence found)" : fitted.text + (fitted.omitted > 0 ? `\n(… ${fitted.omitted} more snippets not shown)` : "");
  return `## Proposed rule
${clean(rule)}

## What the evidence search found
Sessions: ${gate.sessionCount}; with success signals: ${gate.successCount}; with failure signals: ${gate.failureCount}.
Gate note: ${gate.reason}

## Evidence snippets (secrets redacted)
${evidence}

Judge the rule.`;
}

// ---------------------------------------------------------------------------------------------
// Audit

export const AUDIT_SYSTEM = `You audit one AI coding-agent session against playbook rules.
Report a rule only when the session clearly followed it or clearly violated it, and give the evidence (a short quote or a precise summary naming the file, command or message). Rules the session does not touch may be left out or marked not_applicable.
Use only the rule ids listed. summary: one or two sentences on how well the session kept to the rules, or null.`;

export function auditPrompt(session: SessionTranscript, rules: ReadonlyArray<{ id: string; content: string }>, clean: Clean): string {
  const ruleText = rules.map((r) => `- [${r.id}] ${oneLine(r.content)}`).join("\n");
  const sessionBudget = Math.max(AUDIT_MIN_SESSION_CHARS, AUDIT_BUDGET_CHARS - ruleText.length);
  const transcript = truncateMiddle(clean(session.text), sessionBudget);
  return `## Rules
${ruleText === "" ? "(no rules)" : ruleText}

## Session
${sessionHeader(session, clean)}
<transcript>
${transcript}
</transcript>

Report which rules this session followed or violated.`;
}
