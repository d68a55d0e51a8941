/**
 * The held-out part of the learning evaluation set: 10 more sessions written after the
 * deterministic learners were tuned on corpus.mjs, and committed before the learners were run on
 * them. Nothing was tuned against these; their scores are the honest estimate for new sessions.
 * Same format as corpus.mjs. Phrasing deliberately differs from the tuning set.
 */

const FENCE = "```";

export const sessions = [
  {
    id: "ho-cc-01-cors",
    agent: "claude_code",
    workspace: "/home/lee/src/portal",
    status: "success",
    messages: [
      ["user", "Browser says the /api/profile call is blocked by CORS, but curl works fine."],
      ["assistant", "curl does not enforce CORS. The API answers the preflight OPTIONS request with 404 because the router only registers GET."],
      ["tool", "$ curl -i -X OPTIONS https://localhost:8443/api/profile\nHTTP/1.1 404 Not Found"],
      ["assistant", "Registered the cors middleware before the router so OPTIONS gets a 204 with the allow headers."],
      ["tool", "$ curl -i -X OPTIONS https://localhost:8443/api/profile\nHTTP/1.1 204 No Content\naccess-control-allow-origin: https://portal.local"],
      ["assistant", "The profile page loads now.\n\nKey insight: when only the browser fails, check the preflight OPTIONS response first; curl never sends one."],
      ["user", "nice one"],
    ],
    lessons: [{ text: "When a request fails only in the browser, check the CORS preflight OPTIONS response first" }],
  },
  {
    id: "ho-cc-02-memory-leak-fail",
    agent: "claude_code",
    workspace: "/home/lee/src/worker",
    status: "failure",
    messages: [
      ["user", "The worker gets OOM-killed after about six hours. Find the leak."],
      ["assistant", "I took two heap snapshots an hour apart. Retained size grows in `Map` instances owned by the metrics module."],
      ["tool", "$ node --inspect dist/worker.js\nFATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory"],
      ["assistant", "I capped the metrics map at 10k label sets, but the heap still grows at the same rate, so the metrics map is not the main leak. I have not found the real owner yet."],
      ["user", "ok we'll restart it nightly for now and keep digging tomorrow"],
    ],
    lessons: [],
  },
  {
    id: "ho-codex-01-terraform",
    agent: "codex",
    workspace: "/srv/infra",
    status: "success",
    messages: [
      ["user", "terraform apply wants to destroy and recreate the production database. Why?"],
      ["tool", "$ terraform plan\n  # aws_db_instance.main must be replaced\n-/+ resource \"aws_db_instance\" \"main\" {\n      ~ engine_version = \"15.4\" -> \"15\" # forces replacement"],
      ["assistant", "The module pins `engine_version = \"15\"` while AWS auto-upgraded the instance to 15.4; Terraform reads the difference as a change that forces replacement."],
      ["assistant", "I set engine_version to 15.4 and added `lifecycle { prevent_destroy = true }` to the database resource."],
      ["tool", "$ terraform plan\nNo changes. Your infrastructure matches the configuration."],
      ["assistant", "The plan is clean now. Moral of the story: put prevent_destroy on stateful resources like databases, and always read the plan for \"forces replacement\" before applying."],
    ],
    lessons: [
      { text: "Put lifecycle prevent_destroy on stateful Terraform resources such as databases" },
      { text: "Always read the terraform plan for forces replacement before applying" },
    ],
  },
  {
    id: "ho-codex-02-decoy-config",
    agent: "codex",
    workspace: "/srv/app",
    status: "success",
    messages: [
      ["user", "Add a healthcheck to the compose file for the api service."],
      ["assistant", `Added:\n${FENCE}yaml\n# never remove this healthcheck, the load balancer depends on it\nhealthcheck:\n  test: ["CMD", "curl", "-f", "http://localhost:3000/health"]\n  interval: 10s\n${FENCE}`],
      ["tool", "$ docker compose up -d && docker compose ps\napi   running (healthy)"],
      ["assistant", "The api container reports healthy."],
      ["user", "Should we always add healthchecks to every service? Anyway, thanks."],
    ],
    lessons: [],
  },
  {
    id: "ho-gemini-01-i18n",
    agent: "gemini",
    workspace: "/home/ana/code/shop-web",
    status: "success",
    messages: [
      ["user", "Prices show as 1,234.50 for German users; they should see 1.234,50 €."],
      ["assistant", "The price component formats with `toFixed(2)` and adds a dollar sign. I switched it to `Intl.NumberFormat` with the user's locale and the order currency."],
      ["tool", "$ pnpm test price\n✓ formats EUR for de-DE\n✓ formats USD for en-US\nTests: 6 passed"],
      ["assistant", "German users now see 1.234,50 €. Going forward we should format money with Intl.NumberFormat and the user's locale instead of building strings by hand."],
    ],
    lessons: [{ text: "Format money with Intl.NumberFormat and the user's locale instead of building strings by hand" }],
  },
  {
    id: "ho-gemini-02-mixed",
    agent: "gemini",
    workspace: "/home/ana/code/search",
    status: "mixed",
    messages: [
      ["user", "Upgrade elasticsearch client to v8 and fix the reindex script."],
      ["assistant", "The client upgrade is done and the app's queries pass their tests."],
      ["tool", "$ npm test\nTests: 41 passed"],
      ["tool", "$ node scripts/reindex.js\nResponseError: illegal_argument_exception: [type] is not supported in v8 mappings"],
      ["assistant", "The reindex script still fails: its mappings use the removed `_type` field and rewriting them needs the data team's sign-off. I left the script unchanged."],
      ["user", "fine, I'll ask them"],
    ],
    lessons: [],
  },
  {
    id: "ho-aider-01-sql-injection",
    agent: "aider",
    workspace: "/home/sam/proj/reports",
    status: "success",
    messages: [
      ["user", "the report filter breaks when the customer name has an apostrophe like O'Brien"],
      ["assistant", "The query is built with an f-string, so the apostrophe ends the SQL string. That is also an SQL injection hole."],
      ["assistant", "Changed the query to use parameters: `cursor.execute(sql, (name,))`."],
      ["tool", "$ pytest tests/test_reports.py -q\n9 passed in 0.41s"],
      ["assistant", "Fixed, and a test with O'Brien passes.\n\nImportant: never build SQL with f-strings or string concatenation; always pass values as query parameters."],
    ],
    lessons: [
      { text: "Never build SQL with f-strings or string concatenation; pass values as query parameters", negative: true },
    ],
  },
  {
    id: "ho-aider-02-preference",
    agent: "aider",
    workspace: "/home/sam/proj/reports",
    status: "success",
    messages: [
      ["user", "write the csv export. we use polars here, not pandas, and keep functions small please"],
      ["assistant", "Wrote `export_csv()` with polars: it selects the columns, casts dates to ISO strings and writes with `write_csv`. Split the column selection into its own helper."],
      ["tool", "$ pytest -q\n11 passed"],
      ["assistant", "All tests pass."],
      ["user", "good"],
    ],
    lessons: [{ text: "Use polars instead of pandas in this project" }],
  },
  {
    id: "ho-cline-01-env-validation",
    agent: "cline",
    workspace: "/Users/kim/dev/api",
    status: "success",
    messages: [
      ["user", "The app starts but crashes on the first request with 'Cannot read properties of undefined (reading split)'."],
      ["assistant", "REDIS_URL is unset in this environment, and the code only reads it inside the first request handler."],
      ["assistant", "I added a zod schema that validates process.env at startup, so a missing REDIS_URL stops the app immediately with a clear message."],
      ["tool", "[execute_command Result:] REDIS_URL=redis://localhost:6379 npm start\nlistening on :3000"],
      ["assistant", "Starts and serves requests. A good habit to keep: validate required environment variables at startup rather than on first use."],
    ],
    lessons: [{ text: "Validate required environment variables at startup rather than on first use" }],
  },
  {
    id: "ho-cline-02-long-upgrade",
    agent: "cline",
    workspace: "/Users/kim/dev/web",
    status: "success",
    messages: [
      ["user", "Upgrade the app from Next 13 to Next 15."],
      ...Array.from({ length: 25 }, (_, i) => [
        ["assistant", `Checking route ${i + 1} for the async request APIs.`],
        ["tool", `[execute_command Result:] grep -n "cookies()" app/route${i + 1}/page.tsx\n${i + 3}: const c = cookies(); // never call synchronously in Next 15`],
      ]).flat(),
      ["assistant", "All 25 routes now await `cookies()` and `headers()`. I ran the codemod first and fixed the 4 places it missed by hand."],
      ["tool", "[execute_command Result:] npm run build\n✓ Compiled successfully\n✓ Generating static pages (48/48)"],
      ["assistant", "The build succeeds.\n\nWhat worked well:\n- Run the official codemod first, then fix what it misses by hand.\n- Build after every batch of routes instead of once at the end."],
    ],
    lessons: [
      { text: "Run the official codemod first when upgrading a framework, then fix what it misses by hand" },
      { text: "Build after every batch of upgraded routes instead of once at the end" },
    ],
  },
];
