import { RULE_CATEGORIES, type RuleCategory } from "../domain/gap-analysis.js";

/**
 * What `cm onboard` hands an agent that mines its own past sessions for playbook rules: the
 * extraction instructions, the categories, and example rules. Written for the agent, not for a
 * human: concrete about what makes a rule worth keeping.
 */

export interface ExampleRule {
  rule: string;
  category: RuleCategory;
}

/** Six example rules: specific, actionable, each with the situation it applies to. */
export const EXAMPLE_RULES: readonly ExampleRule[] = [
  {
    rule: "Before changing code for a reported bug, reproduce it with a failing test or command so the fix can be proven",
    category: "debugging",
  },
  {
    rule: "Run the changed package's own test command after each edit, and the full suite once before committing",
    category: "testing",
  },
  {
    rule: "When parsing JSON printed by an external CLI, accept both a bare array and an object that wraps the array",
    category: "integration",
  },
  {
    rule: "Check an issue's current status in the tracker before starting on it - another agent may already own it",
    category: "workflow",
  },
  {
    rule: "Keep file-system and network access out of the core package; pass adapters in through its ports",
    category: "architecture",
  },
  {
    rule: "AVOID: mocking whole modules in tests - stub only the boundary call the test actually needs",
    category: "testing",
  },
];

/** Pairs of a vague rule and the specific rule it should have been, for the prompt. */
const GOOD_VS_BAD: ReadonlyArray<{ bad: string; good: string }> = [
  {
    bad: "Write good tests",
    good: "When a bug is fixed, add a regression test that fails on the old code before merging the fix",
  },
  {
    bad: "Be careful with the database",
    good: "Run schema migrations inside a transaction and check `migrate status` before deploying",
  },
  {
    bad: "Handle errors properly",
    good: "When `fetch` to the billing API fails with 429, retry with backoff instead of surfacing the error",
  },
];

/**
 * The extraction instructions (markdown). Starts with "# Session Analysis Instructions", as the
 * original's did, so agents that look for that heading keep working.
 */
export function extractionPrompt(cli: string): string {
  const lines = [
    "# Session Analysis Instructions",
    "",
    "You are reading one of your own past coding sessions. Turn what it teaches into a few rules",
    "for the playbook, so that future sessions start with that knowledge instead of relearning it.",
    "",
    "## What to look for",
    "",
    "1. **What worked**: approaches, commands or checks that got the task done, especially after",
    "   earlier attempts failed.",
    "2. **What went wrong**: mistakes, dead ends, wrong assumptions, time lost and why.",
    "3. **How the work was run**: ordering of steps, verification before claiming success,",
    "   coordination with the user or other agents.",
    "4. **Tool and project facts**: CLI flags and quirks, API formats, configuration, project",
    "   conventions that were not obvious.",
    "",
    "## What makes a good rule",
    "",
    "- **Specific and actionable**: another agent can follow it without having seen this session.",
    "- **Scoped**: say when it applies (\"When X, do Y\"; \"Before Z, check W\").",
    "- **Imperative**: \"Always…\", \"Never…\", \"Prefer…\", \"Run…\".",
    "- **Short**: one sentence, at most two.",
    "- **Earned**: supported by what actually happened in the session, not general advice.",
    "- **Pitfalls** are rules too: start them with \"AVOID:\" or \"PITFALL:\".",
    "",
    "Skip one-off details (a typo, a single file's content) and anything already in the playbook",
    "(check with `" + cli + " similar \"<rule>\"`). Extracting nothing from a session is fine.",
    "",
    "### Vague versus useful",
    "",
    ...GOOD_VS_BAD.flatMap((p) => [`- Vague: "${p.bad}"`, `  Useful: "${p.good}"`]),
    "",
    "## Categories",
    "",
    ...RULE_CATEGORIES.map((c) => `- ${c}`),
    "",
    "## Example rules",
    "",
    ...EXAMPLE_RULES.map((e) => `- [${e.category}] "${e.rule}"`),
    "",
    "## Adding the rules",
    "",
    "Several rules at once (recommended): write a JSON array and add it in one call:",
    "",
    "```bash",
    '# rules.json: [{"content": "First rule…", "category": "debugging"}, {"content": "Second rule…", "category": "testing"}]',
    `${cli} playbook add --file rules.json --session <session-path>`,
    "```",
    "",
    "One rule:",
    "",
    "```bash",
    `${cli} playbook add "Your rule" --category debugging --session <session-path>`,
    "```",
    "",
    "`--session` records the session as processed (with the number of rules taken from it). If a",
    `session holds nothing worth keeping, run`,
    `\`${cli} onboard mark-done <session-path>\` so it is not offered again.`,
  ];
  return lines.join("\n");
}
