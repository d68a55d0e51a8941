/**
 * Replies of a recorded fake model for the LLM mode of the learning benchmark.
 *
 * No LLM API is reachable from our machines, so these replies were written by hand, per session,
 * to read like what a capable model returns for our diary and reflector prompts — including the
 * usual ways such a model goes wrong: generic advice that no session supports ("Write tests for
 * new code"), a rule lifted from a code comment, an implicit lesson stated, a lesson merged into
 * another, and one reply that is not valid JSON (the pipeline retries, then the run falls back).
 * LLM-mode scores therefore measure our pipeline around a model (prompt → reply parsing → delta
 * conversion → de-duplication), not the quality of any real model.
 *
 * Per session id: `diary` (the DiaryReply fields) and `rules` ([content, negative?]).
 * `malformed: true` makes every reply for that session unparseable text.
 */
export const recorded = {
  "cc-01-flaky-test-timezone": {
    diary: { status: "success", accomplishments: ["Fixed the invoice date test failing under UTC on CI"], keyLearnings: ["Local-time Date construction differs between CI (UTC) and laptops"] },
    rules: [
      ["Pin TZ=UTC in the vitest config so date-dependent tests behave identically on CI and developer machines"],
      ["Use Date.UTC rather than the local-time Date constructor when building calendar dates that are compared across machines"],
      ["Write tests for new code"],
    ],
  },
  "cc-02-migration-lock": {
    diary: { status: "success", accomplishments: ["Added the orders.region column in three migration steps"], keyLearnings: [] },
    rules: [["When adding a NOT NULL column to a large Postgres table, add it nullable, backfill in batches, then set NOT NULL"]],
  },
  "cc-03-esm-import-failure": {
    diary: { status: "failure", accomplishments: [], keyLearnings: ["chalk 5 is ESM-only"] },
    rules: [["Check if a dependency has become ESM-only before upgrading it in a CommonJS package"], ["Keep dependencies up to date"]],
  },
  "cc-04-decoy-code-only": {
    diary: { status: "success", accomplishments: ["Wrote a debounce helper"], keyLearnings: [] },
    rules: [["Always clear the previous timer before starting a new one in debounce helpers"]],
  },
  "cc-05-long-refactor": {
    diary: { status: "success", accomplishments: ["Split payments/service.ts into 9 modules"], keyLearnings: [] },
    rules: [
      ["Run the whole test suite after each module move during a large refactor instead of only at the end"],
      ["Avoid module-level constants that rely on import side effects of other modules; export a factory function instead", true],
    ],
  },
  "codex-01-docker-cache": {
    diary: { status: "success", accomplishments: ["Cut Docker build time from 9 minutes to 48 seconds"], keyLearnings: [] },
    rules: [["Copy package.json and the lockfile and run npm ci before copying the source so Docker caches the dependency layer"], ["Exclude node_modules and .git via .dockerignore"]],
  },
  "codex-02-regex-catastrophic": {
    diary: { status: "success", accomplishments: ["Fixed a hanging log parser"], keyLearnings: [] },
    rules: [["Never use nested quantifiers such as (a+)* in regexes applied to untrusted input", true], ["Limit input length before applying regexes to untrusted text"]],
  },
  "codex-03-failed-deploy": {
    diary: { status: "failure", accomplishments: [], keyLearnings: [] },
    rules: [["Verify kubeconfig contexts and credentials before starting a deploy"]],
  },
  "codex-04-prose-lessons": {
    diary: { status: "success", accomplishments: ["Fixed the CSV import dropping accented names"], keyLearnings: [] },
    rules: [["Always log the count of skipped rows in import jobs"], ["Detect the file encoding (e.g. a UTF-8 BOM) instead of hard-coding latin1"]],
  },
  "gemini-01-react-keys": {
    diary: { status: "success", accomplishments: [], keyLearnings: [] },
    rules: [["Never use array indexes as React keys for lists whose items can be deleted or reordered; use stable ids", true]],
  },
  "gemini-02-question-not-rule": {
    diary: { status: "success", accomplishments: ["Added a dark mode toggle"], keyLearnings: [] },
    rules: [["Use client components for form-heavy pages such as settings"]],
  },
  "gemini-03-mixed-outcome": {
    diary: { status: "mixed", accomplishments: ["Made tile requests 5x faster"], keyLearnings: [] },
    rules: [["Reuse expensive decoder pools across requests rather than creating one per request"]],
  },
  "gemini-04-secrets-in-git": {
    malformed: true,
  },
  "aider-01-python-venv": {
    diary: { status: "success", accomplishments: ["Installed httpx into the project venv"], keyLearnings: [] },
    rules: [["Use python -m pip and python -m pytest from the venv interpreter so installs and tests share one environment"]],
  },
  "aider-02-failed-flaky": {
    diary: { status: "failure", accomplishments: [], keyLearnings: [] },
    rules: [["Replace sleeps in tests with explicit synchronization events"]],
  },
  "aider-03-user-preferences": {
    diary: { status: "success", accomplishments: ["Added retries to the fetcher"], keyLearnings: [] },
    rules: [["Use tenacity for retries rather than hand-written loops"], ["Do not retry 4xx responses; retry only 5xx errors and timeouts", true]],
  },
  "cline-01-api-pagination": {
    diary: { status: "success", accomplishments: ["Exported all 3,400 contacts"], keyLearnings: [] },
    rules: [["Always check if a list endpoint is paginated (e.g. next_cursor) before assuming a single call returns all items"]],
  },
  "cline-02-decoy-tool-output": {
    diary: { status: "success", accomplishments: ["Fixed lint errors"], keyLearnings: [] },
    rules: [["Never use any as a type; prefer unknown with a type guard", true]],
  },
  "cline-03-fixed-later": {
    diary: { status: "success", accomplishments: ["Fixed the iOS build after the React Native upgrade"], keyLearnings: [] },
    rules: [["After upgrading React Native, run pod deintegrate and pod install before debugging iOS build errors"]],
  },
  "cc-06-git-rebase": {
    diary: { status: "success", accomplishments: ["Rebased the feature branch onto main"], keyLearnings: [] },
    rules: [["Use git push --force-with-lease instead of --force for rewritten branches"], ["Communicate with your team before force-pushing"]],
  },
  "cc-07-chatter-only": {
    diary: { status: "success", accomplishments: ["Renamed utils to lib"], keyLearnings: [] },
    rules: [],
  },
  "codex-05-long-perf": {
    diary: { status: "success", accomplishments: ["Brought search p95 back to 52 ms"], keyLearnings: [] },
    rules: [["Add query-count assertions to endpoint tests to catch N+1 queries before deploying"], ["Never issue per-row queries inside a result loop; fetch the page in one query", true]],
  },
  "gemini-05-implicit-lesson": {
    diary: { status: "success", accomplishments: ["Fixed billing timeouts under load"], keyLearnings: [] },
    rules: [["Use a shared keep-alive HTTP agent for service clients so connections are reused under load"]],
  },
  "aider-04-note-to-self": {
    diary: { status: "success", accomplishments: ["Moved diagnostics to stderr"], keyLearnings: [] },
    rules: [["Write diagnostics and progress to stderr and only data to stdout so output stays pipeable"]],
  },
};
