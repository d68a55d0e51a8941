/**
 * The learning evaluation set, written down before any tuning of the deterministic learners.
 *
 * Each entry is one realistic agent session (the conversation as the agent saw it) plus what a
 * careful human reading it would take away: the session's outcome and the lessons worth keeping as
 * playbook rules. `build-sessions.mjs` renders every conversation in its agent's own on-disk format
 * (Claude Code JSONL, Codex rollout JSONL, Gemini CLI chat JSON, Aider chat history, Cline task
 * history) under `sessions/`, and writes `expected.json`.
 *
 * Message kinds: ["user", text], ["assistant", text], ["tool", text] (a tool's output, rendered the
 * way the agent stores tool results). Lessons are written the way a human would phrase the rule, not
 * copied from the transcript; `negative: true` marks an anti-pattern ("never …", "avoid …").
 *
 * Deliberate traps: "never"/"always" lines inside code blocks and tool output, chatter ("never
 * mind", "don't worry"), questions ("should we always …?"), descriptions of code ("it never
 * returns null"), failures that are fixed later (success), and successes that end broken.
 */

const FENCE = "```";

/** A long stretch of routine tool traffic (reading files, running tests) around the real content. */
function routine(n, topic) {
  const out = [];
  for (let i = 1; i <= n; i++) {
    out.push(["assistant", `Reading part ${i} of the ${topic} code to see how it is wired.`]);
    out.push([
      "tool",
      `src/${topic}/part${i}.ts\n${FENCE}ts\nexport function step${i}(input: string): string {\n  // never mutate input here; always copy first\n  return input.trim();\n}\n${FENCE}`,
    ]);
  }
  return out;
}

export const sessions = [
  // ---------------------------------------------------------------------------------------------
  {
    id: "cc-01-flaky-test-timezone",
    agent: "claude_code",
    workspace: "/home/dev/work/billing",
    status: "success",
    messages: [
      ["user", "The invoice date test fails on CI but passes on my laptop. Can you find out why?"],
      ["assistant", "Let me run the test with the CI's timezone."],
      ["tool", "$ TZ=UTC pnpm vitest run test/invoice-date.test.ts\nFAIL test/invoice-date.test.ts > formats the due date\nAssertionError: expected '2026-03-01' to be '2026-02-28'"],
      ["assistant", "It fails under UTC. The formatter uses `new Date(year, month, day)` which is local time, and the test builds the expected value in UTC.\n\nThe fix was to build dates with `Date.UTC` in the formatter and pin `TZ=UTC` in the vitest config so every machine runs the same way."],
      ["tool", "$ pnpm vitest run test/invoice-date.test.ts\n✓ test/invoice-date.test.ts (4 tests) 12ms\nTest Files  1 passed (1)"],
      ["assistant", "All 4 tests pass now, locally and under `TZ=UTC`.\n\nLessons learned:\n- Pin the timezone (TZ=UTC) in the test config so date tests behave the same on CI and laptops.\n- Build calendar dates with Date.UTC, never with the local-time Date constructor, when the value is compared across machines."],
      ["user", "great, thanks"],
    ],
    lessons: [
      { text: "Pin TZ=UTC in the test config so date tests behave the same on CI and on laptops" },
      { text: "Never build calendar dates with the local-time Date constructor; use Date.UTC when values are compared across machines", negative: true },
    ],
  },
  // ---------------------------------------------------------------------------------------------
  {
    id: "cc-02-migration-lock",
    agent: "claude_code",
    workspace: "/home/dev/work/api",
    status: "success",
    messages: [
      ["user", "Add a NOT NULL column `region` to the orders table. Production has 40M rows."],
      ["assistant", "Adding a NOT NULL column with a default rewrites the table on older Postgres and holds an ACCESS EXCLUSIVE lock. I'll do it in three steps instead."],
      ["assistant", `Migration plan:\n${FENCE}sql\nALTER TABLE orders ADD COLUMN region text; -- never add NOT NULL here on a big table\nUPDATE orders SET region = 'eu' WHERE region IS NULL; -- in batches\nALTER TABLE orders ALTER COLUMN region SET NOT NULL;\n${FENCE}`],
      ["tool", "$ pnpm db:migrate --dry-run\nmigration 0042_orders_region: 3 statements, estimated lock time 0.2s per batch"],
      ["assistant", "The dry run is clean. I wrote the backfill as a batched job of 10k rows.\n\nFor big tables, always add the column as nullable, backfill in batches, then add the NOT NULL constraint; adding it in one statement locks the table for the whole rewrite."],
      ["user", "Looks good, merged."],
    ],
    lessons: [
      { text: "On big tables add a new column as nullable, backfill in batches, then add the NOT NULL constraint instead of one locking statement" },
    ],
  },
  // ---------------------------------------------------------------------------------------------
  {
    id: "cc-03-esm-import-failure",
    agent: "claude_code",
    workspace: "/home/dev/work/cli",
    status: "failure",
    messages: [
      ["user", "Upgrade chalk to v5 and make the build pass."],
      ["tool", "$ pnpm build\nsrc/log.ts(1,19): error TS1479: The current file is a CommonJS module whose imports will produce 'require' calls; however, the referenced file is an ECMAScript module and cannot be imported with 'require'."],
      ["assistant", "chalk 5 is ESM-only and this package still compiles to CommonJS. I tried a dynamic `import()` wrapper."],
      ["tool", "$ pnpm test\nError [ERR_REQUIRE_ESM]: require() of ES Module node_modules/chalk/source/index.js not supported.\n    at Object.<anonymous> (dist/log.js:4:15)"],
      ["assistant", "Jest still loads it through `require`. Converting the whole package to ESM is a larger change than this task. I could not get the build and the tests green with chalk 5, so I reverted to chalk 4.1.2."],
      ["user", "ok, leave it, we'll plan the ESM move separately. Note for later: check whether a dependency is ESM-only before upgrading it in a CommonJS package."],
    ],
    lessons: [
      { text: "Check whether a dependency is ESM-only before upgrading it in a CommonJS package" },
    ],
  },
  // ---------------------------------------------------------------------------------------------
  {
    id: "cc-04-decoy-code-only",
    agent: "claude_code",
    workspace: "/home/dev/work/web",
    status: "success",
    messages: [
      ["user", "Write a debounce helper for the search box."],
      ["assistant", `Here it is:\n${FENCE}ts\n// Always clear the previous timer before starting a new one.\n// Never call fn synchronously: callers rely on the delay.\nexport function debounce<T extends unknown[]>(fn: (...a: T) => void, ms: number) {\n  let timer: ReturnType<typeof setTimeout> | undefined;\n  return (...args: T) => {\n    clearTimeout(timer);\n    timer = setTimeout(() => fn(...args), ms);\n  };\n}\n${FENCE}`],
      ["tool", "$ pnpm vitest run src/debounce.test.ts\n✓ src/debounce.test.ts (3 tests) 8ms"],
      ["assistant", "The three tests pass. The helper never calls `fn` more than once per quiet period."],
      ["user", "Never mind the leading-edge option, this is fine. Thanks!"],
    ],
    lessons: [],
  },
  // ---------------------------------------------------------------------------------------------
  {
    id: "cc-05-long-refactor",
    agent: "claude_code",
    workspace: "/home/dev/work/payments",
    status: "success",
    messages: [
      ["user", "Split the 2,000-line payments/service.ts into modules without changing behaviour."],
      ["assistant", "I'll start by reading the file section by section."],
      ...routine(30, "payments"),
      ["assistant", "Halfway through I broke the retry logic: moving `retryPolicy` into its own module changed the import order and the default policy was read before it was set."],
      ["tool", "$ pnpm vitest run\nFAIL test/retry.test.ts > retries a declined card twice\nTypeError: Cannot read properties of undefined (reading 'maxAttempts')"],
      ["assistant", "Fixed by exporting a function `defaultRetryPolicy()` instead of a module-level constant that depended on another module's side effect."],
      ...routine(20, "payments"),
      ["tool", "$ pnpm vitest run\nTest Files  48 passed (48)\nTests  612 passed (612)"],
      ["assistant", "Done: service.ts is now 9 modules, all 612 tests pass.\n\nTakeaways:\n1. Run the full test suite after every moved module, not at the end; the retry break was found 15 moves late.\n2. Avoid module-level constants that depend on another module's import side effects; export a function that builds the value."],
    ],
    lessons: [
      { text: "Run the full test suite after every moved module during a refactor, not only at the end" },
      { text: "Avoid module-level constants that depend on another module's import side effects; export a function that builds the value", negative: true },
    ],
  },
  // ---------------------------------------------------------------------------------------------
  {
    id: "codex-01-docker-cache",
    agent: "codex",
    workspace: "/srv/projects/shop",
    status: "success",
    messages: [
      ["user", "Docker builds take 9 minutes on every commit. Make them faster."],
      ["assistant", "The Dockerfile copies the whole repository before `npm ci`, so any source change invalidates the dependency layer."],
      ["tool", `${FENCE}dockerfile\nCOPY . .\nRUN npm ci\n${FENCE}`],
      ["assistant", "I changed it to copy package.json and package-lock.json first, run `npm ci`, then copy the rest. I also added node_modules and .git to .dockerignore."],
      ["tool", "$ docker build -t shop .\n => CACHED [3/6] RUN npm ci\n => [5/6] RUN npm run build  41.2s\nSuccessfully built 3f2a9c1d"],
      ["assistant", "A source-only change now builds in 48 seconds instead of 9 minutes, because the npm ci layer is cached. Going forward, copy the lockfile and install dependencies before copying the source in Dockerfiles."],
    ],
    lessons: [
      { text: "In Dockerfiles copy the lockfile and install dependencies before copying the source so the dependency layer stays cached" },
      { text: "Add node_modules and .git to .dockerignore" },
    ],
  },
  // ---------------------------------------------------------------------------------------------
  {
    id: "codex-02-regex-catastrophic",
    agent: "codex",
    workspace: "/srv/projects/logs",
    status: "success",
    messages: [
      ["user", "The log parser hangs on some lines. Find out why."],
      ["tool", "$ node scripts/parse.js sample.log\n^C (killed after 120s)"],
      ["assistant", "The pattern `^(\\w+\\s?)*$` backtracks exponentially on a long line that does not match. That is catastrophic backtracking."],
      ["assistant", "I rewrote it without the nested quantifier and added a 4 KB cap on the line length before matching."],
      ["tool", "$ node scripts/parse.js sample.log\nparsed 120000 lines in 0.8s"],
      ["assistant", "Parsed in under a second. Lesson: never use nested quantifiers like (a+)* in patterns that run on untrusted input; cap the input length before matching."],
    ],
    lessons: [
      { text: "Never use nested quantifiers like (a+)* in regexes that run on untrusted input", negative: true },
      { text: "Cap the input length before running a regex on untrusted text" },
    ],
  },
  // ---------------------------------------------------------------------------------------------
  {
    id: "codex-03-failed-deploy",
    agent: "codex",
    workspace: "/srv/projects/shop",
    status: "failure",
    messages: [
      ["user", "Deploy the release branch to staging."],
      ["tool", "$ ./deploy.sh staging\nError: kubectl: context \"staging\" not found in kubeconfig\ndeploy failed"],
      ["assistant", "The kubeconfig on this machine has no staging context. I tried the context from the team wiki."],
      ["tool", "$ kubectl --context stg-eu get pods\nerror: You must be logged in to the server (Unauthorized)"],
      ["assistant", "The token is expired and I cannot refresh it from here. The deploy did not happen; staging is still on the previous release."],
      ["user", "Right, my credentials expired. I'll do it tomorrow."],
    ],
    lessons: [],
  },
  // ---------------------------------------------------------------------------------------------
  {
    id: "codex-04-prose-lessons",
    agent: "codex",
    workspace: "/srv/projects/etl",
    status: "success",
    messages: [
      ["user", "The nightly CSV import silently drops rows with accented names."],
      ["assistant", "The reader opens the file as latin1 but the vendor switched to UTF-8 with a BOM. Names with accents fail the validation regex and are skipped without a log line."],
      ["assistant", "I now detect the BOM, decode as UTF-8, and count skipped rows in the job summary."],
      ["tool", "$ python -m etl.import vendor-2026-11.csv\nimported 18204 rows, skipped 0"],
      ["user", "Nice. From now on please always log the number of skipped rows in import jobs, a silent skip cost us a week here."],
      ["assistant", "Will do. I learned that vendors change encodings without notice, so detect the encoding (BOM) instead of hard-coding latin1."],
    ],
    lessons: [
      { text: "Always log the number of skipped rows in import jobs" },
      { text: "Detect a file's encoding (BOM) instead of hard-coding latin1 in importers" },
    ],
  },
  // ---------------------------------------------------------------------------------------------
  {
    id: "gemini-01-react-keys",
    agent: "gemini",
    workspace: "/home/ana/code/dashboard",
    status: "success",
    messages: [
      ["user", "The todo list shows the wrong checkbox state after deleting an item."],
      ["assistant", "The list uses the array index as `key`. After a delete the indexes shift and React reuses the wrong component state."],
      ["assistant", `Changed:\n${FENCE}tsx\n{todos.map((t, i) => <Todo key={i} {...t} />)} // don't do this\n{todos.map((t) => <Todo key={t.id} {...t} />)}\n${FENCE}`],
      ["user", "That fixed it. So the rule is: never use the array index as a React key for lists that can be reordered or deleted from."],
      ["assistant", "Exactly. Use a stable id from the data instead."],
    ],
    lessons: [
      { text: "Never use the array index as a React key for lists that can be reordered or have items deleted; use a stable id", negative: true },
    ],
  },
  // ---------------------------------------------------------------------------------------------
  {
    id: "gemini-02-question-not-rule",
    agent: "gemini",
    workspace: "/home/ana/code/dashboard",
    status: "success",
    messages: [
      ["user", "Should we always use server components for the settings page?"],
      ["assistant", "Not necessarily. The settings page has a lot of form state, so a client component is simpler there. Server components help for pages that mostly render data."],
      ["user", "ok let's keep it client-side then. Can you add the dark mode toggle?"],
      ["assistant", "Added the toggle in `SettingsForm.tsx`; it stores the choice in localStorage and reads `prefers-color-scheme` as the default."],
      ["tool", "$ pnpm test --filter dashboard\nTests: 22 passed, 22 total"],
      ["assistant", "Tests pass."],
    ],
    lessons: [],
  },
  // ---------------------------------------------------------------------------------------------
  {
    id: "gemini-03-mixed-outcome",
    agent: "gemini",
    workspace: "/home/ana/code/maps",
    status: "mixed",
    messages: [
      ["user", "Speed up the tile server and fix the memory leak."],
      ["assistant", "Profiling shows every request creates a new image decoder pool. I moved the pool to module scope."],
      ["tool", "$ npm run bench\np50 38ms (was 210ms)"],
      ["assistant", "Requests are 5x faster. The leak is still there: RSS grows by 40 MB an hour under load, and I could not find the source in the heap snapshots today."],
      ["user", "Good progress on speed. Let's pick the leak up next week."],
      ["assistant", "Takeaway: reuse expensive decoder pools across requests instead of creating one per request."],
    ],
    lessons: [
      { text: "Reuse expensive decoder pools across requests instead of creating one per request" },
    ],
  },
  // ---------------------------------------------------------------------------------------------
  {
    id: "gemini-04-secrets-in-git",
    agent: "gemini",
    workspace: "/home/ana/code/infra",
    status: "success",
    messages: [
      ["user", "I accidentally committed .env with the Stripe test key. Clean it up."],
      ["assistant", "Removing the file in a new commit is not enough: the key stays in history. I rotated the key in the dashboard first, then rewrote history with git filter-repo and force-pushed after the team agreed."],
      ["tool", "$ git filter-repo --path .env --invert-paths\nParsed 412 commits\nNew history written in 1.21 seconds"],
      ["assistant", "Done. I also added `.env` to .gitignore and a pre-commit secret scan.\n\n**Lessons**\n- Rotate a leaked key first; rewriting git history does not un-leak it.\n- Keep .env files in .gitignore from the first commit."],
    ],
    lessons: [
      { text: "Rotate a leaked key first; rewriting git history does not un-leak it" },
      { text: "Keep .env files in .gitignore from the first commit" },
    ],
  },
  // ---------------------------------------------------------------------------------------------
  {
    id: "aider-01-python-venv",
    agent: "aider",
    workspace: "/home/sam/proj/scraper",
    status: "success",
    messages: [
      ["user", "pytest says ModuleNotFoundError: No module named 'httpx' but I installed it"],
      ["assistant", "`pip` and `pytest` come from different interpreters: pip installed into the system Python 3.11 while pytest runs from the project's .venv with 3.12."],
      ["tool", "$ .venv/bin/python -m pip install httpx\nSuccessfully installed httpx-0.27.2"],
      ["assistant", "Installed into the venv; the tests pass now.\n\nTip: run `python -m pip` and `python -m pytest` from the venv's interpreter so both use the same environment."],
      ["user", "thanks, works"],
    ],
    lessons: [
      { text: "Run python -m pip and python -m pytest with the venv's interpreter so both use the same environment" },
    ],
  },
  // ---------------------------------------------------------------------------------------------
  {
    id: "aider-02-failed-flaky",
    agent: "aider",
    workspace: "/home/sam/proj/queue",
    status: "failure",
    messages: [
      ["user", "test_consumer_retries is flaky, make it deterministic"],
      ["assistant", "The test sleeps 0.1s and expects the retry to have happened. I replaced the sleep with an event the consumer sets."],
      ["tool", "$ pytest tests/test_consumer.py -x --count 50\nFAILED tests/test_consumer.py::test_consumer_retries - TimeoutError: event not set after 5s\n1 failed, 49 passed"],
      ["assistant", "Still fails 1 in 50. The consumer thread sometimes starts after the message is published, so the first delivery is lost. I did not find a way to make the broker stub wait for the subscription."],
      ["user", "ugh. leave it marked flaky for now"],
    ],
    lessons: [],
  },
  // ---------------------------------------------------------------------------------------------
  {
    id: "aider-03-user-preferences",
    agent: "aider",
    workspace: "/home/sam/proj/scraper",
    status: "success",
    messages: [
      ["user", "add retries to the fetcher. I prefer tenacity over hand-written retry loops. And please never retry on 4xx responses, only 5xx and timeouts."],
      ["assistant", "Added a tenacity decorator: 3 attempts, exponential backoff from 1s, retrying on `httpx.TimeoutException` and 5xx status codes only."],
      ["tool", "$ pytest -q\n14 passed in 2.31s"],
      ["assistant", "All 14 tests pass, including a new one that checks a 404 is not retried."],
    ],
    lessons: [
      { text: "Use tenacity for retries instead of hand-written retry loops" },
      { text: "Never retry on 4xx responses; retry only on 5xx and timeouts", negative: true },
    ],
  },
  // ---------------------------------------------------------------------------------------------
  {
    id: "cline-01-api-pagination",
    agent: "cline",
    workspace: "/Users/kim/dev/crm",
    status: "success",
    messages: [
      ["user", "The contacts export only returns 100 contacts but we have 3,400."],
      ["assistant", "The export calls GET /contacts once. The API is paginated with a `next_cursor` field and returns 100 items per page."],
      ["tool", "[execute_command Result:] node scripts/export.js > out.json && jq length out.json\n3400"],
      ["assistant", "The loop now follows `next_cursor` until it is null; all 3,400 contacts are exported.\n\nThe real lesson here: always check whether a list endpoint is paginated before assuming one call returns everything."],
    ],
    lessons: [
      { text: "Always check whether a list endpoint is paginated before assuming one call returns everything" },
    ],
  },
  // ---------------------------------------------------------------------------------------------
  {
    id: "cline-02-decoy-tool-output",
    agent: "cline",
    workspace: "/Users/kim/dev/crm",
    status: "success",
    messages: [
      ["user", "Run the linter and fix what it reports."],
      ["tool", "[execute_command Result:] pnpm lint\nsrc/sync.ts\n  12:5  error  Never use `any` as a type  @typescript-eslint/no-explicit-any\n  40:1  warning  Always add a return type  explicit-function-return-type\n\n✖ 2 problems (1 error, 1 warning)"],
      ["assistant", "Replaced the `any` with `unknown` plus a type guard and added the return type."],
      ["tool", "[execute_command Result:] pnpm lint\n✔ No problems"],
      ["assistant", "The linter is clean."],
    ],
    lessons: [],
  },
  // ---------------------------------------------------------------------------------------------
  {
    id: "cline-03-fixed-later",
    agent: "cline",
    workspace: "/Users/kim/dev/mobile",
    status: "success",
    messages: [
      ["user", "The iOS build fails after upgrading React Native."],
      ["tool", "[execute_command Result:] npx react-native run-ios\nerror: Build input file cannot be found: 'ios/Pods/Target Support Files/Pods-App/Pods-App.debug.xcconfig'\n** BUILD FAILED **"],
      ["assistant", "The Pods are stale after the upgrade. I ran pod install again after clearing the cache."],
      ["tool", "[execute_command Result:] cd ios && pod deintegrate && pod install\nPod installation complete! There are 71 dependencies from the Podfile and 84 total pods installed."],
      ["tool", "[execute_command Result:] npx react-native run-ios\n** BUILD SUCCEEDED **\nSuccessfully launched the app on the simulator"],
      ["assistant", "The app builds and launches. Next time, run pod deintegrate and pod install after every React Native upgrade before debugging build errors."],
    ],
    lessons: [
      { text: "Run pod deintegrate and pod install after every React Native upgrade before debugging iOS build errors" },
    ],
  },
  // ---------------------------------------------------------------------------------------------
  {
    id: "cc-06-git-rebase",
    agent: "claude_code",
    workspace: "/home/dev/work/monorepo",
    status: "success",
    messages: [
      ["user", "My feature branch has 30 commits and conflicts with main. Help me get it merged."],
      ["assistant", "I'd rather not rebase 30 commits one by one: each would need the same conflict resolved. I squashed the branch locally, then rebased the single commit onto main."],
      ["tool", "$ git rebase main\nAuto-merging packages/ui/Button.tsx\nCONFLICT (content): Merge conflict in packages/ui/Button.tsx"],
      ["assistant", "Resolved the Button conflict by keeping main's new size prop and our new variant."],
      ["tool", "$ git rebase --continue && pnpm test\nSuccessfully rebased and updated refs/heads/feature/buttons.\nTests 311 passed"],
      ["assistant", "Rebased and green. I used `git push --force-with-lease` rather than `--force`, so a teammate's push to the branch would not be overwritten.\n\nRule of thumb: use --force-with-lease instead of --force when pushing a rewritten branch."],
    ],
    lessons: [
      { text: "Use git push --force-with-lease instead of --force when pushing a rewritten branch" },
      { text: "Squash a long branch before rebasing it onto main so each conflict is resolved once" },
    ],
  },
  // ---------------------------------------------------------------------------------------------
  {
    id: "cc-07-chatter-only",
    agent: "claude_code",
    workspace: "/home/dev/work/notes",
    status: "success",
    messages: [
      ["user", "Rename the `utils` folder to `lib` and update the imports."],
      ["assistant", "Don't worry, I'll update every import. I always double-check with the type checker afterwards."],
      ["tool", "$ pnpm tsc --noEmit\n(no output)"],
      ["assistant", "Renamed and type-checked: 37 imports updated, no errors."],
      ["user", "perfect"],
    ],
    lessons: [],
  },
  // ---------------------------------------------------------------------------------------------
  {
    id: "codex-05-long-perf",
    agent: "codex",
    workspace: "/srv/projects/search",
    status: "success",
    messages: [
      ["user", "Search latency jumped from 40ms to 900ms after yesterday's deploy."],
      ...routine(25, "search"),
      ["assistant", "Found it: the new relevance filter runs one SQL query per hit (an N+1) instead of one query for the page."],
      ["tool", "$ EXPLAIN ANALYZE ...\nExecution Time: 1.912 ms (x 480 calls)"],
      ["assistant", "I batched the filter into a single `WHERE id = ANY($1)` query."],
      ...routine(15, "search"),
      ["tool", "$ k6 run load.js\nhttp_req_duration p(95)=52ms"],
      ["assistant", "p95 is back to 52 ms.\n\nWhat I learned: add a query-count assertion to the search endpoint tests so an N+1 is caught before deploy. Also, never run per-row queries inside a result loop; fetch the page's rows in one query."],
    ],
    lessons: [
      { text: "Add a query-count assertion to endpoint tests so an N+1 query is caught before deploy" },
      { text: "Never run per-row queries inside a result loop; fetch all rows of a page in one query", negative: true },
    ],
  },
  // ---------------------------------------------------------------------------------------------
  {
    id: "gemini-05-implicit-lesson",
    agent: "gemini",
    workspace: "/home/ana/code/api-gateway",
    status: "success",
    messages: [
      ["user", "Requests to the billing service time out after exactly 30 seconds under load."],
      ["assistant", "The HTTP client has no keep-alive agent, so every request opens a new TCP and TLS connection and the service's connection limit is reached."],
      ["assistant", "I configured a shared keep-alive agent with maxSockets 50 for the billing client."],
      ["tool", "$ npm run load -- --target billing\n0 timeouts in 10000 requests, p99 210ms"],
      ["assistant", "No timeouts any more. Reusing connections through a keep-alive agent fixed it."],
    ],
    lessons: [
      { text: "Use a shared keep-alive HTTP agent for service clients so connections are reused under load" },
    ],
  },
  // ---------------------------------------------------------------------------------------------
  {
    id: "aider-04-note-to-self",
    agent: "aider",
    workspace: "/home/sam/proj/cli",
    status: "success",
    messages: [
      ["user", "the --verbose flag prints to stdout and breaks piping into jq"],
      ["assistant", "Moved all diagnostics to stderr; stdout now carries only the JSON result."],
      ["tool", "$ ./cli list --verbose | jq length\n12"],
      ["assistant", "jq parses the output now.\n\nNote to self: diagnostics and progress go to stderr, data goes to stdout, so output stays pipeable."],
      ["user", "👍"],
    ],
    lessons: [
      { text: "Send diagnostics and progress to stderr and only data to stdout so output stays pipeable" },
    ],
  },
];
