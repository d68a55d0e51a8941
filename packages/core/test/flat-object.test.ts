// checkFlatObject (schemas/flat-object.ts) stands in for the zod input schemas of the operations
// that declare `inputFields`: its tables must describe those schemas, and whatever it answers must
// be exactly what the schema's parse gives.
import fc from "fast-check";
import * as z from "zod";
import { describe, expect, it } from "vitest";
import { operations } from "../src/operations/index.js";
import { checkFlatObject, type FlatFields } from "../src/schemas/flat-object.js";

interface ZodLike {
  _zod: { def: { type: string; innerType?: ZodLike; shape?: Record<string, ZodLike>; checks?: unknown[] } };
}

/** The table a flat z.object of primitives corresponds to (throws for anything else). */
function fieldsOf(schema: ZodLike): Record<string, [string, boolean]> {
  const def = schema._zod.def;
  if (def.type !== "object" || def.shape === undefined) throw new Error(`not an object schema: ${def.type}`);
  const out: Record<string, [string, boolean]> = {};
  for (const [key, field] of Object.entries(def.shape)) {
    const optional = field._zod.def.type === "optional";
    const inner = optional ? field._zod.def.innerType! : field;
    if (!["string", "number", "boolean"].includes(inner._zod.def.type)) throw new Error(`${key}: ${inner._zod.def.type}`);
    // A check (.min(), .int(), .regex(), …) would be one the table cannot express.
    expect(inner._zod.def.checks ?? [], key).toEqual([]);
    out[key] = [inner._zod.def.type, optional];
  }
  return out;
}

const withFields = operations.filter((op) => op.inputFields !== undefined);

/** Values of every kind a field may be given, valid or not. */
const anyValue = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.double(),
  fc.constantFrom(NaN, Infinity, -Infinity, -0, 0, 3),
  fc.boolean(),
  fc.constant(undefined),
  fc.constant(null),
  fc.constant([]),
  fc.constant({}),
);

/** Inputs built from an operation's own fields (some absent, some of another type) and a few others. */
function inputs(fields: FlatFields): fc.Arbitrary<unknown> {
  const keys = Object.keys(fields);
  const valid = (key: string): fc.Arbitrary<unknown> => {
    const [kind, optional] = fields[key]!;
    const value: fc.Arbitrary<unknown> = kind === "string" ? fc.string({ maxLength: 8 }) : kind === "number" ? fc.double({ noNaN: true, noDefaultInfinity: true }) : fc.boolean();
    return optional ? fc.option(value, { nil: undefined }) : value;
  };
  const record = fc
    .tuple(
      fc.shuffledSubarray(keys),
      fc.array(fc.tuple(fc.constantFrom(...keys), anyValue), { maxLength: 2 }),
      fc.array(fc.tuple(fc.constantFrom("extra", "__proto__", "constructor", "toString"), anyValue), { maxLength: 1 }),
    )
    .chain(([present, wrong, extra]) =>
      fc.tuple(fc.tuple(...present.map((key) => valid(key).map((value) => [key, value] as const))), fc.constant(wrong), fc.constant(extra)),
    )
    .map(([present, wrong, extra]) => {
      const input: Record<string, unknown> = {};
      for (const [key, value] of [...present, ...wrong, ...extra]) Object.defineProperty(input, key, { value, enumerable: true, configurable: true, writable: true });
      return input;
    });
  return fc.oneof({ weight: 8, arbitrary: record }, { weight: 1, arbitrary: fc.constantFrom(null, undefined, "task", 3, [], Object.create({ bulletId: "b-1", task: "t" })) });
}

describe("checkFlatObject", () => {
  it("is declared by the hot operations, with tables that describe their input schemas", () => {
    expect(withFields.map((op) => op.command).sort()).toEqual(["context", "mark"]);
    for (const op of withFields) expect(fieldsOf(op.input as unknown as ZodLike), op.command).toEqual(op.inputFields);
  });

  it("answers exactly what the schema's parse gives, or leaves the input to the schema", () => {
    for (const op of withFields) {
      const fields = op.inputFields!;
      const schema = op.input as z.ZodType;
      let answered = 0;
      fc.assert(
        fc.property(inputs(fields), (input) => {
          const checked = checkFlatObject(fields, input);
          const parsed = schema.safeParse(input);
          if (checked === undefined) return;
          answered++;
          expect(parsed.success).toBe(true);
          expect(checked).toStrictEqual(parsed.data);
          expect(Object.keys(checked as object)).toEqual(Object.keys(parsed.data as object));
        }),
        { numRuns: 1500 },
      );
      // It answers for the plainly valid inputs a front end builds, not only for none.
      expect(answered, op.command).toBeGreaterThan(100);
    }
  });

  it("answers for the inputs the CLI builds, keeping a present undefined as zod does", () => {
    const context = { task: "fix the login bug", workspace: undefined, limit: 5, noHistory: true, minScore: 0.2 };
    expect(checkFlatObject(withFields.find((op) => op.command === "context")!.inputFields!, context)).toStrictEqual(context);
    const mark = { bulletId: "b-1", helpful: true, harmful: undefined, reason: undefined, session: undefined };
    expect(checkFlatObject(withFields.find((op) => op.command === "mark")!.inputFields!, mark)).toStrictEqual(mark);
  });

  it("leaves to the schema: missing or mistyped required fields, non-finite numbers, unknown keys, other prototypes", () => {
    const fields: FlatFields = { task: ["string", false], limit: ["number", true] };
    for (const input of [{}, { task: 3 }, { task: "t", limit: NaN }, { task: "t", limit: Infinity }, { task: "t", extra: 1 }, { task: undefined }, Object.create({ task: "t" }), ["t"], null, "t"]) {
      expect(checkFlatObject(fields, input)).toBeUndefined();
    }
    const bare = Object.create(null) as Record<string, unknown>;
    bare.task = "t";
    expect(checkFlatObject(fields, bare)).toStrictEqual({ task: "t" });
  });
});
