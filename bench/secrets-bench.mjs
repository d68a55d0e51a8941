// Secret detector benchmark (issue 21; run after `pnpm --filter @cass-memory/core build`).
//
// 1. Detection: the seeded corpus of bench/secrets/corpus.mjs over 10 seeds (fake secrets of 19
//    kinds, each in a realistic context). A sample counts as detected when one finding covers the
//    whole secret; redaction counts as complete when no 10-character piece of it is left.
// 2. False positives: the seeded look-alikes (git SHAs, UUIDs, base64 test data, long identifiers,
//    lockfile hashes, URLs without credentials, code, placeholders, prose) over 10 seeds, and real
//    text no one wrote for this test: the session fixtures in fixtures/ and the Markdown files of the
//    installed packages (node_modules/.pnpm). Findings there are counted per MB and by kind; some may
//    be true positives (documentation does show example keys), so this is an upper bound.
// 3. Throughput of detectSecrets on a generated YAML playbook and on the fixture sessions.
// Prints Markdown and updates docs/benchmarks.md.
import { existsSync, lstatSync, readFileSync, readdirSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { lookAlikes, secretSamples } from "./secrets/corpus.mjs";
import { updateBenchmarkDoc } from "./update-doc.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const core = await import(join(root, "packages/core/dist/index.js"));
const { detectSecrets, redactSecrets } = core;
const SEEDS = 10;

function pieces(secret) {
  const out = [];
  for (let i = 0; i + 10 <= secret.length; i++) out.push(secret.slice(i, i + 10));
  return out.length > 0 ? out : [secret];
}

// 1. Detection per kind.
const perKind = new Map();
let samples = 0;
let detected = 0;
let complete = 0;
for (let s = 0; s < SEEDS; s++) {
  for (const sample of secretSamples(2101 + 1000 * s)) {
    samples++;
    const row = perKind.get(sample.kind) ?? { n: 0, found: 0, clean: 0 };
    row.n++;
    const at = sample.text.indexOf(sample.secret);
    const hit = detectSecrets(sample.text).some((f) => f.start <= at && f.end >= at + sample.secret.length);
    if (hit) {
      detected++;
      row.found++;
    }
    const out = redactSecrets(sample.text).text;
    if (!pieces(sample.secret).some((p) => out.includes(p))) {
      complete++;
      row.clean++;
    }
    perKind.set(sample.kind, row);
  }
}

// 2. False positives.
let benign = 0;
let flagged = 0;
const fpKinds = new Map();
for (let s = 0; s < SEEDS; s++) {
  for (const item of lookAlikes(2102 + 1000 * s)) {
    benign++;
    const found = detectSecrets(item.text);
    if (found.length > 0) {
      flagged++;
      for (const f of found) fpKinds.set(`${item.kind}→${f.kind}`, (fpKinds.get(`${item.kind}→${f.kind}`) ?? 0) + 1);
    }
  }
}

function walk(dir, accept, out = [], depth = 0) {
  if (depth > 12 || !existsSync(dir)) return out;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    let st;
    try {
      // lstat: symbolic links (pnpm's links to this repository's own packages) are not followed.
      st = lstatSync(path);
    } catch {
      continue;
    }
    if (st.isDirectory()) walk(path, accept, out, depth + 1);
    else if (st.isFile() && accept(path, st)) out.push(path);
  }
  return out;
}

function scanCorpus(files) {
  let bytes = 0;
  let findings = 0;
  let ms = 0;
  const kinds = new Map();
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    bytes += Buffer.byteLength(text);
    const t0 = performance.now();
    const found = detectSecrets(text);
    ms += performance.now() - t0;
    findings += found.length;
    for (const f of found) kinds.set(f.kind, (kinds.get(f.kind) ?? 0) + 1);
  }
  return { files: files.length, bytes, findings, kinds, ms };
}

const sessions = scanCorpus(walk(join(root, "fixtures"), (p) => /\.(jsonl?|md|txt|yaml)$/.test(p)));
// Markdown files of the installed packages (real files only; pnpm's links to this repository's own
// packages are not followed). While the rules were written, one README (fast-uri's `user:pass`
// example) and a fixture (a Rust `jsonwebtoken::` path) produced findings that were then fixed; no
// other file of this set was looked at.
const docs = scanCorpus(walk(join(root, "node_modules/.pnpm"), (p, st) => /\.md$/i.test(p) && st.size > 1024 && st.size < 512 * 1024).sort());

// 3. Throughput on a generated playbook.
const playbook = Array.from({ length: 5000 }, (_, i) =>
  `  - id: b-${i.toString(36)}-q7w2e1\n    content: "Run the ${i % 7 === 0 ? "database migrations" : "unit tests"} before pushing; rule ${i} about TypeScript strict mode and API design"\n    category: testing\n    helpfulCount: ${i % 5}\n    createdAt: "2026-01-0${(i % 9) + 1}T10:00:00.000Z"\n`,
).join("");
detectSecrets(playbook); // warm-up
const t0 = performance.now();
const rounds = 5;
for (let i = 0; i < rounds; i++) detectSecrets(playbook);
const playbookMBs = (Buffer.byteLength(playbook) * rounds) / 1e6 / ((performance.now() - t0) / 1000);

// …and on session text as the history index sees it: the fixture sessions repeated to 8 MB, in
// 2 KB pieces (one message at a time).
const sessionText = walk(join(root, "fixtures/cass/sessions"), (p) => /\.jsonl?$/.test(p)).map((f) => readFileSync(f, "utf8")).join("\n");
const sessionBig = sessionText.repeat(Math.ceil(8e6 / sessionText.length));
const t1 = performance.now();
for (let i = 0; i < sessionBig.length; i += 2000) detectSecrets(sessionBig.slice(i, i + 2000));
const sessionMBs = sessionBig.length / 1e6 / ((performance.now() - t1) / 1000);

const pct = (a, b) => `${((100 * a) / b).toFixed(1)} %`;
const mb = (n) => (n / 1e6).toFixed(2);
const kindsText = (m) => ([...m].length === 0 ? "–" : [...m].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${n}`).join(", "));

const lines = [
  `Measured ${new Date().toISOString().slice(0, 10)} on ${cpus().length} × ${cpus()[0]?.model.trim() ?? "CPU"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}. Run: \`node bench/secrets-bench.mjs\` (after building core). The seeded corpus is ours (bench/secrets/corpus.mjs), so its rates say that the detector does what it was built for, not how it fares on text it never saw; the real-text rows are the better guide to false positives.`,
  "",
  "| Measure | Result |",
  "|---|---|",
  `| Secrets detected (seeded corpus, ${SEEDS} seeds, ${perKind.size} kinds) | ${detected} / ${samples} (${pct(detected, samples)}) |`,
  `| Redaction complete (no 10-character piece of the secret left) | ${complete} / ${samples} (${pct(complete, samples)}) |`,
  `| Look-alikes reported as secrets (seeded, ${SEEDS} seeds) | ${flagged} / ${benign} (${pct(flagged, benign)})${flagged > 0 ? `: ${kindsText(fpKinds)}` : ""} |`,
  `| Findings in the repository's fixtures (${sessions.files} files, ${mb(sessions.bytes)} MB of sessions, playbooks, configs; looked at while tuning) | ${sessions.findings}${sessions.findings > 0 ? ` (${kindsText(sessions.kinds)})` : ""} |`,
  `| Findings in Markdown files of installed packages (${docs.files} files, ${mb(docs.bytes)} MB; docs may hold example keys, so an upper bound on false positives) | ${docs.findings} = ${(docs.findings / (docs.bytes / 1e6)).toFixed(1)} per MB (${kindsText(docs.kinds)}) |`,
  `| Throughput, generated YAML playbook (${mb(Buffer.byteLength(playbook))} MB, 5,000 rules) | ${playbookMBs.toFixed(1)} MB/s |`,
  `| Throughput, session JSONL in 2 KB messages (fixture sessions repeated to ${mb(sessionBig.length)} MB) | ${sessionMBs.toFixed(1)} MB/s |`,
  `| Throughput, package Markdown | ${(docs.bytes / 1e6 / (docs.ms / 1000)).toFixed(1)} MB/s |`,
  "",
  "| Kind | Samples | Detected | Fully redacted |",
  "|---|---|---|---|",
  ...[...perKind].sort((a, b) => a[0].localeCompare(b[0])).map(([kind, r]) => `| ${kind} | ${r.n} | ${r.found} | ${r.clean} |`),
];
const table = lines.join("\n");
console.log(table);
updateBenchmarkDoc("secrets", "Secret detection (issue 21)", table);
