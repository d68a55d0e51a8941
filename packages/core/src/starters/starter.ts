import * as z from "zod";
import { newBullet, type NewBulletContext } from "../domain/curator.js";
import { hashContent } from "../domain/text.js";
import {
  BULLET_KINDS,
  BULLET_SCOPES,
  BULLET_TYPES,
  type BlockedEntry,
  type Bullet,
  type BulletKind,
  type BulletScope,
  type BulletType,
  type Playbook,
} from "../schemas/playbook.js";
import { camelizeKnownKeys, isPlainObject } from "../schemas/tolerant.js";
import { lazySchema } from "../schemas/lazy.js";

/**
 * Starter playbooks (reference §1.5.18): named sets of rules that seed an empty playbook. A starter
 * is a document `{name, description, bullets: [{id?, category, content, tags?, kind?, type?,
 * isNegative?}]}`; the built-ins live in `builtin.ts`, custom ones are YAML or JSON files in
 * `<globalDir>/starters/` (and `starters/custom/`). Applying a starter adds the rules a playbook
 * does not have yet and skips the rest; it never changes an existing rule.
 */

export interface StarterBulletSpec {
  /** Stable id; derived from the starter name and the content when absent. */
  id?: string;
  category: string;
  content: string;
  tags?: string[];
  kind?: BulletKind;
  type?: BulletType;
  isNegative?: boolean;
  scope?: BulletScope;
  scopeKey?: string;
}

export interface StarterDocument {
  name: string;
  description: string;
  bullets: StarterBulletSpec[];
}

export type StarterSource = "builtin" | "custom";

export interface ResolvedStarter extends StarterDocument {
  source: StarterSource;
  /** File of a custom starter. */
  path?: string;
}

const SPEC_KEYS = new Set(["id", "category", "content", "tags", "kind", "type", "isNegative", "scope", "scopeKey"]);

const nonEmpty = lazySchema(() => z.string().trim().min(1));

export const StarterBulletSpecSchema = lazySchema(() => z.preprocess(
  (v) => camelizeKnownKeys(v, SPEC_KEYS),
  z.looseObject({
    id: nonEmpty.optional(),
    category: nonEmpty.default("general"),
    content: nonEmpty,
    tags: z.array(z.string()).optional(),
    kind: z.enum(BULLET_KINDS).optional(),
    type: z.enum(BULLET_TYPES).optional(),
    isNegative: z.boolean().optional(),
    scope: z.enum(BULLET_SCOPES).optional(),
    scopeKey: z.string().optional(),
  }),
));

/** A custom starter file: `name` defaults to the file name, `description` to "". */
export const StarterFileSchema = lazySchema(() => z.looseObject({
  name: nonEmpty.optional(),
  description: z.string().optional(),
  bullets: z.array(StarterBulletSpecSchema),
}));

/** The file name without directories and extension (`/x/starters/team.yaml` → `team`). */
export function starterNameFromPath(path: string): string {
  const base = path.split(/[\\/]/).pop() ?? path;
  return base.replace(/\.(ya?ml|json)$/i, "");
}

/**
 * Parses one custom starter file's document. Returns the starter, or the reason it is not one
 * (such files are ignored by listing and lookup).
 */
export function parseStarterFile(path: string, data: unknown): { starter: ResolvedStarter } | { error: string } {
  if (!isPlainObject(data)) return { error: "expected an object with a 'bullets' array" };
  const parsed = StarterFileSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.map(String).join(".") ?? "";
    return { error: `${where ? `${where}: ` : ""}${issue?.message ?? "invalid"}` };
  }
  const name = parsed.data.name ?? starterNameFromPath(path);
  if (name.trim() === "") return { error: "the starter has no name" };
  const bullets: StarterBulletSpec[] = parsed.data.bullets.map((b) => ({
    ...(b.id !== undefined ? { id: b.id } : {}),
    category: b.category,
    content: b.content,
    ...(b.tags !== undefined ? { tags: b.tags } : {}),
    ...(b.kind !== undefined ? { kind: b.kind } : {}),
    ...(b.type !== undefined ? { type: b.type } : {}),
    ...(b.isNegative !== undefined ? { isNegative: b.isNegative } : {}),
    ...(b.scope !== undefined ? { scope: b.scope } : {}),
    ...(b.scopeKey !== undefined ? { scopeKey: b.scopeKey } : {}),
  }));
  return { starter: { name, description: parsed.data.description ?? "", bullets, source: "custom", path } };
}

function slugify(text: string, maxWords: number): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, " ")
    .trim()
    .split(" ")
    .filter(Boolean)
    .slice(0, maxWords)
    .join("-");
}

/** The id a starter rule gets: its own, else `starter-<name>-<first words>-<content hash>`. */
export function starterBulletId(starterName: string, spec: Pick<StarterBulletSpec, "id" | "content">): string {
  if (spec.id !== undefined && spec.id.trim() !== "") return spec.id.trim();
  const name = slugify(starterName, 6) || "custom";
  const words = slugify(spec.content, 5);
  const hash = hashContent(spec.content).slice(0, 6);
  return `starter-${name}-${words ? `${words}-` : ""}${hash}`;
}

/** Anti-pattern flags kept consistent: any of the three markers implies all of them. */
function antiPatternFields(spec: StarterBulletSpec): Pick<Bullet, "type" | "isNegative" | "kind"> {
  const negative = spec.isNegative === true || spec.type === "anti-pattern" || spec.kind === "anti_pattern";
  if (negative) return { type: "anti-pattern", isNegative: true, kind: "anti_pattern" };
  return { type: spec.type ?? "rule", isNegative: false, kind: spec.kind ?? "stack_pattern" };
}

/** The playbook bullet a starter rule becomes: source community, candidate, no feedback yet. */
export function starterBullet(starter: Pick<StarterDocument, "name">, spec: StarterBulletSpec, ctx: NewBulletContext): Bullet {
  return newBullet(
    {
      id: starterBulletId(starter.name, spec),
      category: spec.category,
      content: spec.content,
      source: "community",
      ...antiPatternFields(spec),
      tags: [...(spec.tags ?? [])],
      ...(spec.scope !== undefined ? { scope: spec.scope } : {}),
      ...(spec.scopeKey !== undefined ? { scopeKey: spec.scopeKey } : {}),
      sourceAgents: [],
      reasoning: `Seeded from the "${starter.name}" starter playbook`,
    },
    ctx,
  );
}

export type StarterSkipReason = "id_exists" | "duplicate_content" | "blocked";

export interface StarterPlan {
  add: Bullet[];
  skipped: Array<{ id: string; content: string; reason: StarterSkipReason }>;
}

/**
 * Which of a starter's rules `playbook` is missing. A rule is skipped when the playbook already has
 * its id (even a deprecated bullet: a removed starter rule does not come back), when a bullet with
 * the same normalised content exists, or when its content is on a blocked log (it was forgotten).
 * Rules repeated inside the starter are only added once.
 */
export function planStarter(
  playbook: Pick<Playbook, "bullets">,
  starter: StarterDocument,
  blocked: readonly BlockedEntry[],
  ctx: NewBulletContext,
): StarterPlan {
  const ids = new Set(playbook.bullets.map((b) => b.id));
  const hashes = new Set(playbook.bullets.map((b) => hashContent(b.content)).filter((h) => h !== ""));
  const blockedHashes = new Set(blocked.map((e) => hashContent(e.content)).filter((h) => h !== ""));
  const plan: StarterPlan = { add: [], skipped: [] };
  for (const spec of starter.bullets) {
    const bullet = starterBullet(starter, spec, ctx);
    const hash = hashContent(bullet.content);
    const reason: StarterSkipReason | null = ids.has(bullet.id)
      ? "id_exists"
      : hashes.has(hash)
        ? "duplicate_content"
        : blockedHashes.has(hash)
          ? "blocked"
          : null;
    if (reason !== null) {
      plan.skipped.push({ id: bullet.id, content: bullet.content, reason });
      continue;
    }
    ids.add(bullet.id);
    hashes.add(hash);
    plan.add.push(bullet);
  }
  return plan;
}
