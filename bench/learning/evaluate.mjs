/**
 * Scoring of the learning benchmark (see README.md for the matching rule). No imports of our
 * packages: the caller passes the modules, so the runner (built dist) and the test share this code.
 */
import { readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const HERE = dirname(fileURLToPath(import.meta.url));

const STOP = new Set(
  ("a an the and or but of to in on at by for from with without into onto over under so that this these those it its is are was were be been being " +
    "do does did not no only than then when while before after every each all any one same as if use using instead rather first also there here " +
    "your you we i they them their our should must can could would will just more most very").split(" "),
);

function stem(word) {
  if (word.length > 5 && word.endsWith("ing")) return word.slice(0, -3);
  if (word.length > 4 && word.endsWith("ed")) return word.slice(0, -2);
  if (word.length > 4 && word.endsWith("es")) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith("s") && !word.endsWith("ss")) return word.slice(0, -1);
  return word;
}

/** The content stems of a text. */
export function stems(text) {
  const words = text.toLowerCase().replace(/[’']/g, "").match(/[a-z0-9][a-z0-9.+-]*/g) ?? [];
  return new Set(words.map((w) => w.replace(/[.+-]+$/, "")).filter((w) => w.length > 1 && !STOP.has(w)).map(stem));
}

export const MATCH_OVERLAP = 0.5;
export const MATCH_MIN_SHARED = 3;

/** Overlap of a rule with a lesson, 0 when the rule cannot match it. */
export function similarity(rule, lesson) {
  if (lesson.negative !== undefined && rule.negative !== undefined && Boolean(lesson.negative) !== Boolean(rule.negative)) return 0;
  const a = stems(rule.text);
  const b = stems(lesson.text);
  let shared = 0;
  for (const s of a) if (b.has(s)) shared++;
  if (shared < MATCH_MIN_SHARED) return 0;
  const overlap = shared / Math.min(a.size, b.size);
  return overlap >= MATCH_OVERLAP ? overlap : 0;
}

/** Greedy one-to-one matching of rules to lessons, best overlap first. */
export function matchRules(rules, lessons) {
  const pairs = [];
  rules.forEach((r, i) => lessons.forEach((l, j) => {
    const s = similarity(r, l);
    if (s > 0) pairs.push({ i, j, s });
  }));
  pairs.sort((x, y) => y.s - x.s || x.i - y.i || x.j - y.j);
  const usedR = new Set();
  const usedL = new Set();
  const matches = [];
  for (const p of pairs) {
    if (usedR.has(p.i) || usedL.has(p.j)) continue;
    usedR.add(p.i);
    usedL.add(p.j);
    matches.push(p);
  }
  return matches;
}

/** `expected.json` (the tuning set) or `expected-holdout.json` (the held-out set). */
export function loadExpected(file = "expected.json") {
  return JSON.parse(readFileSync(join(HERE, file), "utf8"));
}

/**
 * The session's transcript as the reflect pipeline sees it: read by the agent's own native reader
 * (the history index knows which agent wrote a file) and rendered like `export --format text`.
 */
export async function transcriptOf(cass, entry) {
  const path = join(HERE, entry.file);
  const reader = cass.createSessionReaders().find((r) => r.agent === entry.agent);
  if (!reader) throw new Error(`no native reader for ${entry.agent}`);
  const info = statSync(path);
  const conversations = await reader.read({ agent: reader.agent, path, mtimeMs: info.mtimeMs, size: info.size });
  const text = conversations
    .flatMap((c) => c.messages.map((m) => `=== ${(m.role || "unknown").toUpperCase()} ===\n\n${m.content}\n\n`))
    .join("");
  return { path, agent: entry.agent, workspace: conversations[0]?.workspace ?? undefined, text };
}

const PLACEHOLDER = /^(?:session:|coding session$)/i;

/**
 * Runs `components` (diaryWriter + reflector) over every session and scores the proposed add
 * deltas against the expected lessons. `prepare(session)` may adjust the transcript (sanitising).
 */
export async function evaluate({ core, cass, components, sanitize = (t) => t, set = "expected.json" }) {
  const componentsFor = typeof components === "function" ? components : () => components;
  const expected = loadExpected(set);
  const perSession = [];
  let proposed = 0;
  let matchedRules = 0;
  let expectedTotal = 0;
  let matchedLessons = 0;
  let statusRight = 0;
  let placeholders = 0;
  for (const entry of expected.sessions) {
    const raw = await transcriptOf(cass, entry);
    const session = { ...raw, text: sanitize(raw.text) };
    const used = componentsFor(entry);
    const draft = await used.diaryWriter.write(session);
    const diary = core.diaryEntryFromDraft(session, draft, "2026-11-27T00:00:00.000Z");
    const deltas = [];
    for (let iteration = 1; iteration <= 3; iteration++) {
      const out = await used.reflector.reflect({ session, diary, playbook: core.createEmptyPlaybook(), history: [], iteration, maxIterations: 3, previous: deltas });
      if (out.length === 0) break;
      deltas.push(...out);
    }
    const rules = deltas.filter((d) => d.type === "add").map((d) => ({ text: d.bullet.content, negative: Boolean(d.bullet.isNegative || d.bullet.kind === "anti_pattern") }));
    const matches = matchRules(rules, entry.lessons);
    proposed += rules.length;
    matchedRules += matches.length;
    expectedTotal += entry.lessons.length;
    matchedLessons += matches.length;
    if (diary.status === entry.status) statusRight++;
    const fields = [...diary.accomplishments, ...diary.keyLearnings, ...diary.challenges, ...diary.decisions, ...diary.preferences];
    const fake = fields.filter((f) => PLACEHOLDER.test(f.trim())).length;
    placeholders += fake;
    perSession.push({
      id: entry.id,
      agent: entry.agent,
      status: { expected: entry.status, got: diary.status },
      rules: rules.map((r, i) => ({ ...r, matched: matches.some((m) => m.i === i) })),
      missed: entry.lessons.filter((_, j) => !matches.some((m) => m.j === j)).map((l) => l.text),
      diary: { accomplishments: diary.accomplishments, keyLearnings: diary.keyLearnings, challenges: diary.challenges },
      fallbacks: (used.fallbacks ?? []).map((f) => f.component),
    });
  }
  const precision = proposed === 0 ? 0 : matchedRules / proposed;
  const recall = expectedTotal === 0 ? 0 : matchedLessons / expectedTotal;
  return {
    sessions: expected.sessions.length,
    expectedLessons: expectedTotal,
    proposed,
    matched: matchedLessons,
    precision,
    recall,
    f1: precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall),
    statusAccuracy: statusRight / expected.sessions.length,
    statusRight,
    placeholders,
    perSession,
  };
}
