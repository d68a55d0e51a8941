import { createRequire } from "node:module";

// Generates a playbook in the original cm's on-disk format (schema_version 2, the full bullet
// record as `cm playbook add` + `cm mark` write it) with varied, realistic rule texts.

const TOPICS = [
  ["typescript", ["Narrow unknown errors with instanceof before reading .message", "Enable strict null checks in tsconfig and fix the fallout", "Prefer discriminated unions over optional flags for state", "Type API responses with zod schemas at the boundary"]],
  ["testing", ["Run the failing test alone before changing code", "Use real temp directories instead of mocking fs", "Assert on error codes, not on error message text", "Keep fixtures small and next to the tests that use them"]],
  ["debugging", ["Check JWT expiry and clock skew before debugging 401s", "Reproduce the bug with a failing test before fixing it", "Read the full stack trace including the cause chain", "Bisect with git when a regression has no obvious cause"]],
  ["git", ["Rebase feature branches on main before opening a pull request", "Never force push to shared branches", "Write commit messages that say why, not what", "Keep generated files out of commits"]],
  ["performance", ["Measure with a benchmark before optimising", "Batch database writes inside one transaction", "Avoid N+1 queries by loading relations eagerly", "Cache parsed configuration instead of re-reading files"]],
  ["security", ["Never log access tokens or session cookies", "Validate redirect URLs against an allowlist", "Rotate signing secrets through the secret manager", "Use parameterised queries for every SQL statement"]],
  ["react", ["Include every referenced value in useEffect dependency arrays", "Use stable keys for list items", "Guard browser-only APIs for server rendering", "Lift state up only when two siblings need it"]],
  ["python", ["Pin dependencies with a lock file", "Use pathlib instead of os.path string joins", "Run mypy in CI on every package", "Prefer dataclasses over ad-hoc dicts for records"]],
];
const CONTEXTS = ["in the auth service", "for the billing API", "when touching the build scripts", "in the CLI entry point", "for database migrations", "in the web dashboard", "when running in CI", "for the worker queue"];

// The original cm writes playbooks with the `yaml` package's stringify; so do we here, so that the
// files are byte-for-byte what its users have (long lines folded, block sequences).
const require = createRequire(new URL("../packages/store-yaml/package.json", import.meta.url));
const YAML = require("yaml");

export function generatePlaybook(count, createdAt = "2026-11-22T11:57:09.200Z") {
  const bullets = [];
  for (let i = 0; i < count; i++) {
    const [category, rules] = TOPICS[i % TOPICS.length];
    const rule = rules[Math.floor(i / TOPICS.length) % rules.length];
    const context = CONTEXTS[Math.floor(i / (TOPICS.length * 4)) % CONTEXTS.length];
    const helpful = i % 7;
    bullets.push({
      id: `b-bench${i.toString(36).padStart(5, "0")}-${((i * 7919) % 46656).toString(36).padStart(3, "0")}abc`,
      scope: "global",
      category,
      content: `${rule} ${context} (rule ${i})`,
      source: "learned",
      type: "rule",
      isNegative: false,
      kind: "workflow_rule",
      state: "draft",
      maturity: helpful >= 3 ? "established" : "candidate",
      helpfulCount: helpful,
      harmfulCount: 0,
      feedbackEvents: Array.from({ length: helpful }, (_, h) => ({
        type: "helpful",
        timestamp: `2026-11-${String(10 + h).padStart(2, "0")}T10:00:00.000Z`,
        sessionPath: `/home/dev/.claude/projects/app/s${h}.jsonl`,
      })),
      confidenceDecayHalfLifeDays: 90,
      createdAt,
      updatedAt: createdAt,
      pinned: false,
      deprecated: false,
      sourceSessions: ["manual-cli"],
      sourceAgents: ["unknown"],
      tags: [category],
    });
  }
  return {
    schema_version: 2,
    name: "playbook",
    description: "Auto-generated from cass-memory reflections",
    metadata: { createdAt, totalReflections: 0, totalSessionsProcessed: 0 },
    deprecatedPatterns: [],
    bullets,
  };
}

/** The playbook as the original cm writes it (`yaml.stringify`). */
export function generatePlaybookYaml(count, createdAt) {
  return YAML.stringify(generatePlaybook(count, createdAt));
}
