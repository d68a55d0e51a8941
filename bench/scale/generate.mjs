// Seeded, realistic playbooks for the scale benchmark: the 295 hand-written rules of
// bench/relevance/rules.json as templates, varied by service, component and circumstance, with
// feedback histories (helpful and some harmful marks over the last months), maturities computed by
// core's own rules, a few deprecated rules and anti-patterns, and session provenance.
import { readFileSync } from "node:fs";
import { prng } from "../prng.mjs";

const TEMPLATES = JSON.parse(readFileSync(new URL("../relevance/rules.json", import.meta.url), "utf8"));

const SERVICES = [
  "auth service", "billing API", "checkout flow", "search indexer", "notification worker", "admin dashboard",
  "mobile backend", "data pipeline", "reporting jobs", "payments gateway", "user profile service", "inventory service",
  "CLI tool", "build scripts", "CI pipeline", "web frontend", "GraphQL gateway", "recommendation engine",
  "email sender", "file upload service",
];
const COMPONENTS = [
  "session handling", "retry logic", "migration runner", "cache layer", "request router", "queue consumer",
  "config loader", "test harness", "deploy manifest", "rate limiter", "schema validation", "logging setup",
];
const CIRCUMSTANCES = [
  "after the March outage", "during a failed rollout", "while on call", "in code review", "after a flaky CI run",
  "during the load test", "after a customer escalation", "during the database migration",
];
const AGENTS = [".claude/projects/app", ".codex/sessions/2026/10", ".cursor/chats", ".aider/history"];


const BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz";
const DAY = 86_400_000;

function vary(template, random) {
  const pick = (items) => items[Math.floor(random() * items.length)];
  const content = template.content;
  const lowerFirst = content.charAt(0).toLowerCase() + content.slice(1);
  switch (Math.floor(random() * 4)) {
    case 0:
      return `${content} This bit the ${pick(SERVICES)} ${pick(CIRCUMSTANCES)}.`;
    case 1:
      return `In the ${pick(SERVICES)} (${pick(COMPONENTS)}): ${lowerFirst}`;
    case 2:
      return `${content} Applies to the ${pick(COMPONENTS)} of the ${pick(SERVICES)}.`;
    default:
      return `When changing the ${pick(COMPONENTS)}, ${lowerFirst}`;
  }
}

/**
 * `count` valid bullets (built with core's `newBullet`, maturity from `calculateMaturityState`),
 * deterministic for a seed. `core` is the loaded @cass-memory/core module.
 */
export function generateBullets(core, count, { seed = 7, now = new Date("2026-11-23T00:00:00Z") } = {}) {
  const random = prng(seed);
  const config = core.defaultConfig();
  const nowMs = now.getTime();
  const usedIds = new Set();
  const bullets = [];
  for (let i = 0; i < count; i++) {
    const template = TEMPLATES[Math.floor(random() * TEMPLATES.length)];
    const createdMs = nowMs - Math.floor((30 + random() * 370) * DAY);
    let id;
    do {
      let suffix = "";
      for (let k = 0; k < 6; k++) suffix += BASE36[Math.floor(random() * 36)];
      id = `b-${createdMs.toString(36)}-${suffix}`;
    } while (usedIds.has(id));
    usedIds.add(id);
    const session = `/home/dev/${AGENTS[Math.floor(random() * AGENTS.length)]}/${Math.floor(random() * 2 ** 32).toString(16)}.jsonl`;
    const negative = template.isNegative === true;
    const bullet = core.newBullet(
      {
        id,
        content: vary(template, random),
        category: template.category,
        tags: [...(template.tags ?? [])],
        kind: template.kind ?? "workflow_rule",
        ...(negative ? { isNegative: true, type: "anti-pattern" } : {}),
        sourceSession: session,
      },
      { config, now: new Date(createdMs), ids: { bulletId: () => id, hex: () => "" } },
    );
    // Feedback: about half the rules were marked helpful a few times; some also harmful once.
    const events = [];
    if (random() < 0.5) {
      const helpful = 1 + Math.floor(random() ** 2 * 12);
      for (let h = 0; h < helpful; h++) {
        const at = createdMs + Math.floor(random() * (nowMs - createdMs));
        events.push({ type: "helpful", timestamp: new Date(at).toISOString(), sessionPath: session });
      }
      if (helpful >= 4 && random() < 0.15) {
        events.push({ type: "harmful", timestamp: new Date(nowMs - Math.floor(random() * 60 * DAY)).toISOString(), reason: "outdated", sessionPath: session });
      }
    }
    events.sort((a, b) => a.timestamp.localeCompare(b.timestamp));
    bullet.feedbackEvents = events;
    bullet.helpfulCount = events.filter((e) => e.type === "helpful").length;
    bullet.harmfulCount = events.length - bullet.helpfulCount;
    bullet.updatedAt = events.length > 0 ? events[events.length - 1].timestamp : bullet.createdAt;
    bullet.maturity = core.calculateMaturityState(bullet, now, config);
    if (bullet.maturity !== "candidate") bullet.state = "active";
    if (random() < 0.03) {
      Object.assign(bullet, {
        deprecated: true,
        deprecatedAt: new Date(nowMs - Math.floor(random() * 90 * DAY)).toISOString(),
        deprecationReason: "Superseded by a more precise rule",
        state: "retired",
        maturity: "deprecated",
      });
    }
    bullets.push(bullet);
  }
  return bullets;
}

/** Tasks for `cm context`: a mix of short, paraphrased and long (log excerpt) tasks from the relevance set. */
export function benchTasks(count = 7) {
  const tasks = JSON.parse(readFileSync(new URL("../relevance/tasks.json", import.meta.url), "utf8"));
  const byGroup = new Map();
  for (const t of tasks) byGroup.set(t.group, [...(byGroup.get(t.group) ?? []), t.task]);
  const groups = ["direct", "paraphrase", "long", "ambiguous"];
  const out = [];
  for (let i = 0; out.length < count; i++) {
    const list = byGroup.get(groups[i % groups.length]) ?? [];
    const task = list[Math.floor(i / groups.length) * 3];
    if (task !== undefined) out.push(task);
    if (i > 400) break;
  }
  return out;
}
