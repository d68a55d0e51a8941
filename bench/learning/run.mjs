#!/usr/bin/env node
/**
 * Learning quality benchmark (`pnpm bench:learning`): precision and recall of the rules learned
 * from the sessions in bench/learning/ against the lessons a careful reader would keep
 * (expected.json; matching rule in README.md), and how often the diary's outcome is right.
 *   - deterministic: the offline diary writer and reflector (CASS_MEMORY_LLM=none);
 *   - llm: the LLM-backed components of @cass-memory/llm over a recorded fake model
 *     (recorded-llm.mjs), with the deterministic components as the fallback, as `cm reflect` runs.
 * Transcripts are sanitised as in `cm reflect`. Prints a table and updates docs/benchmarks.md
 * (BENCH_NO_DOC=1 to skip); `--verbose` lists every proposed rule and missed lesson.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { updateBenchmarkDoc } from "../update-doc.mjs";
import { evaluate, loadExpected } from "./evaluate.mjs";
import { recorded } from "./recorded-llm.mjs";

const root = fileURLToPath(new URL("../..", import.meta.url));
for (const pkg of ["core", "cass", "llm"]) {
  if (!existsSync(join(root, `packages/${pkg}/dist/index.js`))) {
    console.error(`packages/${pkg}/dist/index.js is missing: run \`pnpm build\` first.`);
    process.exit(1);
  }
}
const load = (pkg) => import(pathToFileURL(join(root, `packages/${pkg}/dist/index.js`)).href);
const [core, cass, llm] = await Promise.all([load("core"), load("cass"), load("llm")]);
const requireFromLlm = createRequire(join(root, "packages/llm/package.json"));
const { MockLanguageModelV3 } = await import(pathToFileURL(requireFromLlm.resolve("ai/test")).href);

const verbose = process.argv.includes("--verbose");
const sanitizer = core.compileSanitizer(core.defaultConfig().sanitization);
const sanitize = (text) => sanitizer.sanitize(text);
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

// ---------------------------------------------------------------------------------------------
// The recorded fake model

const expected = loadExpected();
const taskOf = (options) => {
  const props = Object.keys(options.responseFormat?.schema?.properties ?? {});
  const prompt = JSON.stringify(options.prompt);
  if (props.includes("deltas") || (props.length === 0 && prompt.includes("deltas"))) return "reflect";
  if (props.includes("verdict")) return "validate";
  return "diary";
};
const sessionOf = (options) => {
  const prompt = JSON.stringify(options.prompt);
  return expected.sessions.find((s) => prompt.includes(s.file.replace(/^sessions\//, "")));
};
const reply = (text) => ({
  content: [{ type: "text", text }],
  finishReason: { unified: "stop", raw: undefined },
  usage: { inputTokens: { total: 1000, noCache: 1000, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 200, text: 200, reasoning: undefined } },
  warnings: [],
});
function recordedModel() {
  const reflectCalls = new Map();
  return new MockLanguageModelV3({
    provider: "recorded",
    modelId: "recorded-replies",
    doGenerate: async (options) => {
      const session = sessionOf(options);
      const rec = session ? recorded[session.id] : undefined;
      if (rec === undefined) throw new Error("the recording has no reply for this prompt");
      if (rec.malformed) return reply("Sure! Here are the lessons I found:\n- rotate keys\n- use gitignore");
      const task = taskOf(options);
      if (task === "diary") {
        return reply(JSON.stringify({ status: "success", accomplishments: [], decisions: [], challenges: [], preferences: [], keyLearnings: [], tags: [], ...rec.diary }));
      }
      if (task === "reflect") {
        const n = (reflectCalls.get(session.id) ?? 0) + 1;
        reflectCalls.set(session.id, n);
        const deltas = n > 1 ? [] : rec.rules.map(([content, negative]) => ({
          type: "add",
          bullet: { content, category: "general", kind: negative ? "anti_pattern" : null, type: negative ? "anti-pattern" : null, isNegative: negative ? true : null, scope: null, workspace: null, searchPointer: null, tags: null },
          reason: "stated in the session",
          sourceSession: null,
        }));
        return reply(JSON.stringify({ deltas }));
      }
      return reply(JSON.stringify({ verdict: "ACCEPT", confidence: 0.8, reason: "recorded", supporting: [], contradicting: [], suggestedRefinement: null }));
    },
  });
}

const zeroTotals = () => ({ allTime: 0, lastUpdated: new Date(0).toISOString(), currentMonth: { month: "2026-11", cost: 0 }, currentDay: { day: "2026-11-27", cost: 0 } });
const ledger = { totals: async () => zeroTotals(), record: async () => zeroTotals() };
const clock = { now: () => new Date("2026-11-27T12:00:00Z") };

function llmComponents() {
  const created = llm.createLlmLearning({
    config: { ...core.defaultConfig(), provider: "openai", model: "recorded-replies" },
    env: {},
    ledger,
    clock,
    logger: quiet,
    model: recordedModel(),
    maxAttempts: 2,
    sleep: async () => undefined,
  });
  if (!created.available) throw new Error(`LLM components unavailable: ${created.reason}`);
  // One resolved run per session, as `cm reflect --session <file>` would do it.
  return () =>
    core.resolveLearning({
      learning: { mode: "llm", ...created.components, fallback: core.createDeterministicComponents() },
      logger: quiet,
    });
}

// ---------------------------------------------------------------------------------------------

const deterministic = await evaluate({ core, cass, components: core.createDeterministicComponents(), sanitize });
const viaLlm = await evaluate({ core, cass, components: llmComponents(), sanitize });
const heldOut = await evaluate({ core, cass, components: core.createDeterministicComponents(), sanitize, set: "expected-holdout.json" });

function show(name, r) {
  if (!verbose) return;
  console.log(`\n### ${name}`);
  for (const s of r.perSession) {
    console.log(`${s.id} [${s.agent}] status expected ${s.status.expected}, got ${s.status.got}${s.fallbacks?.length ? ` (fallback: ${s.fallbacks.join(", ")})` : ""}`);
    for (const rule of s.rules) console.log(`  ${rule.matched ? "+" : "-"} ${rule.negative ? "[anti-pattern] " : ""}${rule.text}`);
    for (const m of s.missed) console.log(`  missed: ${m}`);
  }
}
show("deterministic", deterministic);
show("llm (recorded fake model)", viaLlm);
show("deterministic, held-out set", heldOut);

const pct = (x) => `${(x * 100).toFixed(0)} %`;
const fallbackSessions = viaLlm.perSession.filter((s) => s.fallbacks.length > 0).length;
const row = (name, r, note) =>
  `| ${name} | ${r.proposed} | ${r.matched} / ${r.expectedLessons} | ${pct(r.precision)} | ${pct(r.recall)} | ${r.f1.toFixed(2)} | ${r.statusRight} / ${r.sessions} | ${r.placeholders} | ${note} |`;
const table = [
  `Tuning set: ${expected.sessions.length} sessions (Claude Code, Codex, Gemini CLI, Aider, Cline; ${expected.sessions.filter((s) => s.status !== "success").length} not successful), ${deterministic.expectedLessons} expected lessons. Held-out set: ${heldOut.sessions} sessions, ${heldOut.expectedLessons} lessons. Machine-independent (no timings). Run: \`pnpm bench:learning\`.`,
  "",
  "| Mode | Rules proposed | Lessons matched | Precision | Recall | F1 | Diary outcome right | Placeholder diary fields | Notes |",
  "|---|---:|---:|---:|---:|---:|---:|---:|---|",
  row("deterministic", deterministic, "offline diary writer + reflector; tuned on this set"),
  row("llm (recorded fake model)", viaLlm, `hand-written replies; ${fallbackSessions} session fell back to deterministic (malformed reply)`),
  row("deterministic, held-out set", heldOut, `${heldOut.sessions} sessions written after tuning (corpus-holdout.mjs)`),
].join("\n");
console.log(table);
if (process.env.BENCH_NO_DOC !== "1") updateBenchmarkDoc("learning", "Learning quality", table);
