import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CONFIG_FIELDS, type Field, checkConfig } from "../src/schemas/config-check.js";
import { ConfigSchema } from "../src/schemas/config.js";

// checkConfig against ConfigSchema: the table has the schema's keys, in its order, at every level,
// with the same defaults; on any input checkConfig either gives exactly the schema's result (values
// and key order) or leaves the input to the schema.

type Spec = Field["spec"];
interface ZodLike {
  _zod: { def: { type: string; innerType?: ZodLike; defaultValue?: unknown; shape?: Record<string, ZodLike>; element?: ZodLike; valueType?: ZodLike; entries?: Record<string, string> } };
}

/** The leaf kind of a zod schema, and the wrappers it sits in. */
function unwrap(schema: ZodLike): { schema: ZodLike; presence: "required" | "optional" | "default"; defaultValue?: unknown } {
  const def = schema._zod.def;
  if (def.type === "default") return { schema: def.innerType!, presence: "default", defaultValue: def.defaultValue };
  if (def.type === "optional") return { schema: def.innerType!, presence: "optional" };
  return { schema, presence: "required" };
}

/** Compares one table spec with one zod schema; returns the differences as paths. */
function compare(spec: Spec, schema: ZodLike, path: string): string[] {
  const def = schema._zod.def;
  switch (spec.kind) {
    case "object": {
      if (def.type !== "object") return [`${path}: object vs ${def.type}`];
      return compareFields(spec.fields, def.shape!, path);
    }
    case "nullable":
      return def.type === "nullable" ? compare(spec.inner, def.innerType!, path) : [`${path}: nullable vs ${def.type}`];
    case "array":
      return def.type === "array" ? compare(spec.item, def.element!, `${path}[]`) : [`${path}: array vs ${def.type}`];
    case "record":
      return def.type === "record" ? compare(spec.value, def.valueType!, `${path}{}`) : [`${path}: record vs ${def.type}`];
    case "enum":
      if (def.type !== "enum") return [`${path}: enum vs ${def.type}`];
      return JSON.stringify(Object.values(def.entries!)) === JSON.stringify(spec.values) ? [] : [`${path}: enum values`];
    default:
      return def.type === spec.kind ? [] : [`${path}: ${spec.kind} vs ${def.type}`];
  }
}

function compareFields(fields: readonly Field[], shape: Record<string, ZodLike>, path: string): string[] {
  const problems: string[] = [];
  const keys = fields.map((f) => f.key);
  if (JSON.stringify(keys) !== JSON.stringify(Object.keys(shape))) problems.push(`${path}: keys ${keys.join(",")} vs ${Object.keys(shape).join(",")}`);
  for (const field of fields) {
    const zod = shape[field.key];
    if (zod === undefined) continue;
    const inner = unwrap(zod);
    const presence = typeof field.presence === "object" ? "default" : field.presence;
    if (presence !== inner.presence) problems.push(`${path}.${field.key}: ${presence} vs ${inner.presence}`);
    if (typeof field.presence === "object" && JSON.stringify(field.presence.default()) !== JSON.stringify(inner.defaultValue)) {
      problems.push(`${path}.${field.key}: default ${JSON.stringify(field.presence.default())} vs ${JSON.stringify(inner.defaultValue)}`);
    }
    problems.push(...compare(field.spec, inner.schema, `${path}.${field.key}`));
  }
  return problems;
}

const odd = fc.constantFrom<unknown>(null, 0, -1, "x", "", true, [], {}, [1], { a: 1 }, Number.NaN, Number.POSITIVE_INFINITY);

/** Inputs around a spec: valid values, values at and past its bounds, and values of other types. */
function valueFor(spec: Spec): fc.Arbitrary<unknown> {
  let near: fc.Arbitrary<unknown>;
  switch (spec.kind) {
    case "number":
      near = fc.oneof(
        fc.constantFrom(0, -0, 1, -1, 0.5, 1.5, 2, 1.0000001, 0.9999999, 2 ** 53, 2 ** 53 - 1, -(2 ** 53), 1e308),
        fc.integer({ min: -10, max: 100_000 }),
        fc.double({ noDefaultInfinity: false }),
      );
      break;
    case "string":
      near = fc.oneof(
        fc.constantFrom("", "a", "cass_memory", "_x", "Bad-Name", "9lives", "a".repeat(63), "a".repeat(64), "x".repeat(256), "x".repeat(257), "x".repeat(512), "x".repeat(513), "y".repeat(4096), "y".repeat(4097)),
        fc.string({ maxLength: 12 }),
      );
      break;
    case "boolean":
      near = fc.boolean();
      break;
    case "enum":
      near = fc.oneof(fc.constantFrom(...spec.values), fc.constantFrom("", "other", spec.values[0]!.toUpperCase()));
      break;
    case "nullable":
      near = fc.oneof(fc.constant(null), valueFor(spec.inner));
      break;
    case "array":
      near = fc.array(valueFor(spec.item), { maxLength: 3 });
      break;
    case "record":
      near = fc.dictionary(fc.constantFrom("claude_code", "codex", "x", "constructor", "toString"), valueFor(spec.value), { maxKeys: 3 });
      break;
    case "object":
      near = objectFor(spec.fields);
      break;
  }
  return fc.oneof({ weight: 6, arbitrary: near }, { weight: 1, arbitrary: odd });
}

/** An object of a few of the table's keys (in any order), each mostly near a valid value, and maybe unknown keys. */
function objectFor(fields: readonly Field[]): fc.Arbitrary<Record<string, unknown>> {
  const known = fc
    .shuffledSubarray([...fields], { maxLength: Math.min(4, fields.length) })
    .chain((chosen) => fc.tuple(...chosen.map((f) => valueFor(f.spec).map((v) => [f.key, v] as const))))
    .map((entries) => Object.fromEntries(entries));
  const unknown = fc.dictionary(fc.constantFrom("futureSetting", "zzz", "x-y", "toString"), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 2 });
  return fc.tuple(known, unknown, fc.boolean()).map(([k, u, unknownFirst]) => (unknownFirst ? { ...u, ...k } : { ...k, ...u }));
}

/** Configurations: a few keys set, on an empty file or on the full file cm init writes. */
const config = fc
  .tuple(objectFor(CONFIG_FIELDS), fc.boolean())
  .map(([set, onFull]) => (onFull ? { ...(JSON.parse(JSON.stringify(ConfigSchema.parse({}))) as Record<string, unknown>), ...set } : set));

describe("checkConfig", () => {
  it("has ConfigSchema's keys, order, wrappers, kinds and defaults at every level", () => {
    expect(compareFields(CONFIG_FIELDS, (ConfigSchema as unknown as ZodLike)._zod.def.shape!, "config")).toEqual([]);
  });

  it("gives the schema's defaults for an empty configuration, and a fresh copy each time", () => {
    const a = checkConfig({});
    expect(JSON.stringify(a)).toBe(JSON.stringify(ConfigSchema.parse({})));
    a!.storage.path = "/elsewhere";
    a!.sessionExcludePatterns.push("changed");
    const b = checkConfig({});
    expect(b!.storage.path).toBeUndefined();
    expect(b!.sessionExcludePatterns).not.toContain("changed");
  });

  it("accepts the configuration cm init writes and the earlier cm's, with the schema's result", () => {
    const written = JSON.parse(JSON.stringify(ConfigSchema.parse({}))) as unknown;
    const earlier = JSON.parse(readFileSync(new URL("../../../fixtures/original-home/home/.cass-memory/config.json", import.meta.url), "utf8")) as unknown;
    for (const input of [written, earlier]) {
      const fast = checkConfig(input);
      expect(fast).toBeDefined();
      expect(JSON.stringify(fast)).toBe(JSON.stringify(ConfigSchema.parse(input)));
    }
  });

  it("on generated inputs: exactly the schema's result, or undefined", () => {
    let accepted = 0;
    let valid = 0;
    fc.assert(
      fc.property(config, (input) => {
        const fast = checkConfig(input);
        const slow = ConfigSchema.safeParse(input);
        if (slow.success) valid += 1;
        if (fast === undefined) return;
        accepted += 1;
        expect(slow.success, JSON.stringify(input)).toBe(true);
        if (slow.success) expect(JSON.stringify(fast)).toBe(JSON.stringify(slow.data));
      }),
      { numRuns: 3000 },
    );
    // The fast path answers for most valid inputs (it is not a check that always steps aside).
    expect(valid).toBeGreaterThan(300);
    expect(accepted).toBeGreaterThan(valid * 0.9);
  }, 120_000);

  it("leaves what it does not plainly accept to the schema", () => {
    for (const input of [
      null,
      [],
      "config",
      { model: undefined },
      { maxBulletsInContext: Number.POSITIVE_INFINITY },
      { llmTimeoutMs: 2 ** 53 },
      { semanticWeight: 1.5 },
      { storage: { backend: "mysql" } },
      { storage: { postgres: { schema: "Bad-Schema" } } },
      { remoteCass: { hosts: [{ label: "no host" }] } },
      { cliCommand: "x".repeat(257) },
      { sessionRoots: { codex: "not a list" } },
      JSON.parse('{"__proto__": {"polluted": true}}') as unknown,
      Object.assign(Object.create({ inherited: 1 }) as object, { model: "m" }),
    ]) {
      expect(checkConfig(input), JSON.stringify(input)).toBeUndefined();
    }
  });
});
