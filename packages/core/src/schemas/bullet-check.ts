import {
  BULLET_KINDS,
  BULLET_KEYS,
  BULLET_SCOPES,
  BULLET_SOURCES,
  BULLET_STATES,
  BULLET_TYPES,
  EVIDENCE_TYPES,
  FEEDBACK_TYPES,
  MATURITIES,
  METADATA_KEYS,
  PATTERN_KEYS,
  VERIFICATION_MODES,
  VERIFICATION_TYPES,
} from "./playbook.js";
import type { Bullet } from "./playbook.js";
import { JOURNAL_EVENT_KEYS, type JournalEvent } from "./records.js";

/**
 * A fast path for decoding the bullet rows of database-backed stores (SQLite, PostgreSQL). The store writes a bullet's body as the JSON of the
 * bullet BulletSchema produced (every mutation validates the playbook first), so such a body,
 * parsed, is already what BulletSchema would return: every defaulted field present, every value
 * of its type. `isCanonicalBullet` recognises exactly such values with plain checks, ~20 times
 * cheaper than the schema (whose first use in a process also costs tens of milliseconds).
 *
 * It is conservative: true only when BulletSchema would accept the value and return an equal one
 * (no default to fill, no snake_case key to rename, no timestamp to convert). Anything else — a
 * damaged or hand-edited row, a key it does not know — returns false, and the caller validates
 * with the schema as before, so such rows fail (or pass) exactly as they always did.
 */

type Check = (value: unknown) => boolean;

const isString: Check = (v) => typeof v === "string";
const nonEmptyString: Check = (v) => typeof v === "string" && v.length > 0;
const isNumber: Check = (v) => typeof v === "number" && Number.isFinite(v);
const isBoolean: Check = (v) => typeof v === "boolean";
const oneOf = (values: readonly string[]): Check => {
  const set = new Set(values);
  return (v) => typeof v === "string" && set.has(v);
};
const arrayOf = (item: Check): Check => (v) => Array.isArray(v) && v.every(item);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * An object with the `required` keys (and their checks), maybe the `optional` ones, and any other
 * key (loose objects keep them) except those the schema would treat specially: `reserved` (keys
 * the schema knows that are not checked here) and, with `noUnderscoreKeys`, snake_case keys
 * (which the schema may rename).
 */
function objectOf(
  required: Record<string, Check>,
  optional: Record<string, Check>,
  options: { noUnderscoreKeys?: boolean; reserved?: ReadonlySet<string>; order?: ReadonlySet<string> } = {},
): Check {
  const requiredKeys = Object.keys(required);
  // With `order` (the schema's keys in its order): the schema returns its own keys in that order,
  // then the others in the value's order; a value whose keys are otherwise ordered is not returned as is.
  const rank = options.order === undefined ? undefined : new Map([...options.order].map((key, i) => [key, i]));
  return (value) => {
    if (!isPlainObject(value)) return false;
    for (const key of requiredKeys) if (!Object.hasOwn(value, key) || !(required[key] as Check)(value[key])) return false;
    let lastRank = -1;
    let sawOther = false;
    for (const key of Object.keys(value)) {
      if (rank !== undefined) {
        const r = rank.get(key);
        if (r === undefined) sawOther = true;
        else if (sawOther || r < lastRank) return false;
        else lastRank = r;
      }
      if (Object.hasOwn(required, key)) continue;
      if (Object.hasOwn(optional, key)) {
        const check = optional[key] as Check;
        if (!check(value[key])) return false;
        continue;
      }
      // A key the schema knows but this check does not, a key the schema would rename, or a key
      // that is special to objects: let the schema decide.
      if (key === "__proto__" || options.reserved?.has(key) === true) return false;
      if (options.noUnderscoreKeys === true && key.includes("_")) return false;
    }
    return true;
  };
}

const FEEDBACK_KEYS = new Set(["type", "timestamp", "sessionPath", "reason", "context", "decayedValue"]);

const isFeedbackEvent = objectOf(
  { type: oneOf(FEEDBACK_TYPES), timestamp: nonEmptyString },
  { sessionPath: isString, reason: isString, context: isString, decayedValue: isNumber },
  { noUnderscoreKeys: true, reserved: FEEDBACK_KEYS },
);

const isEvidence = objectOf({ type: oneOf(EVIDENCE_TYPES), uri: nonEmptyString }, { note: isString }, { reserved: new Set(["type", "uri", "note"]) });

const isVerification = objectOf(
  { type: oneOf(VERIFICATION_TYPES), pattern: nonEmptyString, mode: oneOf(VERIFICATION_MODES) },
  { path: isString },
  { reserved: new Set(["type", "pattern", "path", "mode"]) },
);

/** Fields with a default: a value as BulletSchema returns it always has them. */
export const BULLET_REQUIRED_CHECKS: Readonly<Record<string, Check>> = {
  id: nonEmptyString,
  scope: oneOf(BULLET_SCOPES),
  category: isString,
  content: isString,
  source: oneOf(BULLET_SOURCES),
  type: oneOf(BULLET_TYPES),
  isNegative: isBoolean,
  kind: oneOf(BULLET_KINDS),
  state: oneOf(BULLET_STATES),
  maturity: oneOf(MATURITIES),
  helpfulCount: isNumber,
  harmfulCount: isNumber,
  feedbackEvents: arrayOf(isFeedbackEvent),
  confidenceDecayHalfLifeDays: isNumber,
  createdAt: nonEmptyString,
  updatedAt: nonEmptyString,
  pinned: isBoolean,
  deprecated: isBoolean,
  sourceSessions: arrayOf(isString),
  sourceAgents: arrayOf(isString),
  tags: arrayOf(isString),
};

export const BULLET_OPTIONAL_CHECKS: Readonly<Record<string, Check>> = {
  scopeKey: isString,
  workspace: isString,
  searchPointer: isString,
  promotedAt: isString,
  lastValidatedAt: isString,
  pinnedReason: isString,
  deprecatedAt: isString,
  deprecationReason: isString,
  replacedBy: isString,
  reasoning: isString,
  embedding: arrayOf(isNumber),
  effectiveScore: isNumber,
  evidence: arrayOf(isEvidence),
  verification: isVerification,
  validFrom: isString,
  validTo: isString,
};

const isBullet = objectOf(BULLET_REQUIRED_CHECKS, BULLET_OPTIONAL_CHECKS, { noUnderscoreKeys: true, reserved: BULLET_KEYS });

/** True when BulletSchema would return `value` unchanged (see the module comment). */
export function isCanonicalBullet(value: unknown): value is Bullet {
  return isBullet(value);
}

const EVIDENCE_KEYS = new Set(["type", "uri", "note"]);
const VERIFICATION_KEYS = new Set(["type", "pattern", "path", "mode"]);
const isBulletInOrder = objectOf(
  {
    ...BULLET_REQUIRED_CHECKS,
    feedbackEvents: arrayOf(
      objectOf(
        { type: oneOf(FEEDBACK_TYPES), timestamp: nonEmptyString },
        { sessionPath: isString, reason: isString, context: isString, decayedValue: isNumber },
        { noUnderscoreKeys: true, reserved: FEEDBACK_KEYS, order: FEEDBACK_KEYS },
      ),
    ),
  },
  {
    ...BULLET_OPTIONAL_CHECKS,
    evidence: arrayOf(objectOf({ type: oneOf(EVIDENCE_TYPES), uri: nonEmptyString }, { note: isString }, { reserved: EVIDENCE_KEYS, order: EVIDENCE_KEYS })),
    verification: objectOf(
      { type: oneOf(VERIFICATION_TYPES), pattern: nonEmptyString, mode: oneOf(VERIFICATION_MODES) },
      { path: isString },
      { reserved: VERIFICATION_KEYS, order: VERIFICATION_KEYS },
    ),
  },
  { noUnderscoreKeys: true, reserved: BULLET_KEYS, order: BULLET_KEYS },
);

/**
 * isCanonicalBullet, and the keys of the value and of the objects in it are in the order BulletSchema
 * returns them (its own keys in its order, then any others): BulletSchema would return a value that
 * is equal to it and serialises to the same text. Writers use it to skip re-validating rules a
 * change did not make non-canonical.
 */
export function isCanonicalBulletInOrder(value: unknown): value is Bullet {
  return isBulletInOrder(value);
}

/** PlaybookSchema's keys in the order it returns them. */
const PLAYBOOK_HEAD_KEYS: ReadonlySet<string> = new Set(["schema_version", "name", "description", "metadata", "deprecatedPatterns", "bullets"]);

const isPlaybookHeadInOrder = objectOf(
  {
    schema_version: isNumber,
    name: isString,
    description: isString,
    metadata: objectOf(
      { createdAt: nonEmptyString, totalReflections: isNumber, totalSessionsProcessed: isNumber },
      { lastReflection: isString },
      { noUnderscoreKeys: true, reserved: METADATA_KEYS, order: METADATA_KEYS },
    ),
    deprecatedPatterns: arrayOf(
      objectOf({ pattern: isString, deprecatedAt: nonEmptyString, reason: isString }, { replacement: isString }, { noUnderscoreKeys: true, reserved: PATTERN_KEYS, order: PATTERN_KEYS }),
    ),
    bullets: Array.isArray,
  },
  {},
  { noUnderscoreKeys: true, reserved: PLAYBOOK_HEAD_KEYS, order: PLAYBOOK_HEAD_KEYS },
);

/**
 * isCanonicalBulletInOrder for everything of a playbook but its bullets (which must be an array,
 * checked apart): every field PlaybookSchema defaults present, every value of its type, and keys
 * in the order the schema returns them, so that the schema would return an equal value that
 * serialises to the same text. The playbooks this store's writers produce are such values.
 */
export function isCanonicalPlaybookHeadInOrder(value: unknown): value is Record<string, unknown> & { bullets: unknown[] } {
  return isPlaybookHeadInOrder(value);
}

const stringOrNull: Check = (v) => v === null || typeof v === "string";
/** A `z.record(z.string(), z.unknown())` value the schema would return as an equal copy. */
const isPlainRecordValue: Check = (v) => isPlainObject(v) && !Object.hasOwn(v, "__proto__");

const isJournalEventInOrder = objectOf(
  {
    id: nonEmptyString,
    timestamp: nonEmptyString,
    operation: nonEmptyString,
    change: nonEmptyString,
    bulletId: nonEmptyString,
    layer: oneOf(["global", "repo"]),
    actor: isString,
    hashBefore: stringOrNull,
    hashAfter: stringOrNull,
  },
  { source: isString, runId: isString, reason: isString, before: isPlainRecordValue, after: isPlainRecordValue },
  { reserved: JOURNAL_EVENT_KEYS, order: JOURNAL_EVENT_KEYS },
);

/**
 * True when JournalEventSchema would return an equal copy of `value` that serialises to the same
 * text: every field it defaults present, values of their types, keys in its order (the events
 * operations queue are built so).
 */
export function isCanonicalJournalEventInOrder(value: unknown): value is JournalEvent {
  return isJournalEventInOrder(value);
}

