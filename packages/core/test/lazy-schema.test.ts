import { describe, expect, expectTypeOf, it, vi } from "vitest";
import * as z from "zod";
import { lazySchema, lazyValue } from "../src/schemas/lazy.js";

// The exported schemas of core are built on first use behind lazySchema's stand-in (issue 18).
// These tests hold the stand-in to the zod behaviours the CLI, the MCP server and npm users rely on,
// each time comparing it with the same schema built eagerly.

const shapeOf = () => ({
  id: z.string().min(1),
  count: z.number().int().default(0),
  tags: z.array(z.string()).optional(),
});

function counted<T>(build: () => T): { build: () => T; calls: () => number } {
  let calls = 0;
  return {
    build: () => {
      calls++;
      return build();
    },
    calls: () => calls,
  };
}

describe("lazySchema", () => {
  it("builds nothing until first use, then builds once", () => {
    const probe = counted(() => z.object(shapeOf()));
    const Schema = lazySchema(probe.build);
    expect(probe.calls()).toBe(0);
    expect(Schema.parse({ id: "a" })).toEqual({ id: "a", count: 0 });
    expect(Schema.safeParse({ id: "" }).success).toBe(false);
    Schema.parse({ id: "b", count: 2 });
    expect(probe.calls()).toBe(1);
  });

  it("parses and reports errors like the schema it stands for", async () => {
    const eager = z.object(shapeOf());
    const Schema = lazySchema(() => z.object(shapeOf()));
    for (const input of [{ id: "x", count: 3, tags: ["t"] }, { id: "" }, { count: "1" }, null, "text"]) {
      const a = eager.safeParse(input);
      const b = Schema.safeParse(input);
      expect(b.success).toBe(a.success);
      expect(b.success ? b.data : b.error.issues).toEqual(a.success ? a.data : a.error.issues);
    }
    expect(() => Schema.parse({ id: 1 })).toThrow(z.ZodError);
    await expect(Schema.parseAsync({ id: "y" })).resolves.toEqual({ id: "y", count: 0 });
    expect((await Schema.safeParseAsync({})).success).toBe(false);
  });

  it("is an instance of the zod classes and exposes shape, def and keys", () => {
    const Schema = lazySchema(() => z.object(shapeOf()));
    expect(Schema instanceof z.ZodObject).toBe(true);
    expect(Schema instanceof z.ZodType).toBe(true);
    expect(Schema instanceof z.ZodString).toBe(false);
    expect(Object.keys(Schema.shape)).toEqual(["id", "count", "tags"]);
    expect(Schema.def.type).toBe("object");
    expect(Object.keys(Schema)).toEqual(Object.keys(z.object(shapeOf())));
    expect("parse" in Schema).toBe(true);
    expect(Object.getPrototypeOf(Schema)).toBe(Object.getPrototypeOf(z.object(shapeOf())));
  });

  it("derives schemas with extend, pick, omit, partial, optional, array and default", () => {
    const Schema = lazySchema(() => z.object(shapeOf()));
    const extended = Schema.extend({ extra: z.boolean() });
    expect(extended.parse({ id: "a", extra: true })).toEqual({ id: "a", count: 0, extra: true });
    expect(() => extended.parse({ id: "a" })).toThrow();
    expect(Schema.pick({ id: true }).parse({ id: "a", count: 5 })).toEqual({ id: "a" });
    expect(Schema.omit({ id: true }).parse({})).toEqual({ count: 0 });
    expect(Schema.partial().parse({})).toEqual(z.object(shapeOf()).partial().parse({}));
    expect(Schema.optional().parse(undefined)).toBeUndefined();
    expect(Schema.array().parse([{ id: "a" }])).toEqual([{ id: "a", count: 0 }]);
    expect(Schema.nullable().parse(null)).toBeNull();
    expect(Schema.default({ id: "d", count: 1 }).parse(undefined)).toEqual({ id: "d", count: 1 });
  });

  it("nests in objects, arrays, unions, discriminated unions, records and pipes", () => {
    const Item = lazySchema(() => z.object(shapeOf()));
    const Add = lazySchema(() => z.object({ type: z.literal("add"), item: Item }));
    const Remove = lazySchema(() => z.object({ type: z.literal("remove"), id: z.string() }));
    const Change = lazySchema(() => z.discriminatedUnion("type", [Add, Remove]));
    const Doc = z.object({ items: z.array(Item), change: Change, either: z.union([Item, z.string()]), byId: z.record(z.string(), Item) });
    const parsed = Doc.parse({
      items: [{ id: "a" }],
      change: { type: "add", item: { id: "b", count: 1 } },
      either: "s",
      byId: { k: { id: "c" } },
    });
    expect(parsed).toEqual({
      items: [{ id: "a", count: 0 }],
      change: { type: "add", item: { id: "b", count: 1 } },
      either: "s",
      byId: { k: { id: "c", count: 0 } },
    });
    expect(Change.parse({ type: "remove", id: "x" })).toEqual({ type: "remove", id: "x" });
    expect(Change.safeParse({ type: "move" }).success).toBe(false);
    expect(Doc.safeParse({ items: [{ id: "" }], change: { type: "remove", id: "x" }, either: 1, byId: {} }).success).toBe(false);
    const Trimmed = lazySchema(() => z.preprocess((v) => (typeof v === "string" ? v.trim() : v), z.string().min(1)));
    expect(z.object({ name: Trimmed }).parse({ name: "  n " })).toEqual({ name: "n" });
    expect(z.array(Trimmed).safeParse(["  "]).success).toBe(false);
  });

  it("keeps descriptions and metadata, and gives z.toJSONSchema the same document as the eager schema", () => {
    const build = () =>
      z
        .object({ query: z.string().describe("Text to look for."), limit: z.number().optional(), mode: z.enum(["a", "b"]).default("a") })
        .describe("A search.");
    const eager = build();
    const Schema = lazySchema(build);
    expect(z.toJSONSchema(Schema)).toEqual(z.toJSONSchema(eager));
    expect(z.toJSONSchema(z.object({ nested: Schema }))).toEqual(z.toJSONSchema(z.object({ nested: eager })));
    expect(z.toJSONSchema(Schema, { io: "input" })).toEqual(z.toJSONSchema(eager, { io: "input" }));
    expect(Schema.description).toBe("A search.");
    expect(Schema.describe("Other.").description).toBe("Other.");
    expect(Schema.meta({ title: "T" }).meta()).toMatchObject({ title: "T" });
    // The MCP server builds tool input schemas from an operation input's fields this way.
    // Wrappers (optional, default, nullable, pipes), each as a nested stand-in and at the top.
    const wrappers: Array<() => z.ZodType> = [
      () => z.string().min(1).optional(),
      () => z.number().default(3),
      () => z.preprocess((v) => v, z.string().min(1)),
      () => z.object({ a: z.string() }).nullable().describe("Maybe."),
      () => z.array(z.object({ a: z.string().optional() })).default([]),
      () => z.enum(["x", "y"]).meta({ title: "XY" }),
    ];
    for (const make of wrappers) {
      const lazy = lazySchema(make);
      for (const io of ["input", "output"] as const) {
        expect(z.toJSONSchema(lazy, { io })).toEqual(z.toJSONSchema(make(), { io }));
        expect(z.toJSONSchema(z.object({ f: lazy, g: lazy }), { io })).toEqual(z.toJSONSchema(z.object({ f: make(), g: make() }), { io }));
      }
    }
    const advertised = z.object(Object.fromEntries(Object.entries(Schema.shape).map(([k, v]) => [k, v.describe(`field ${k}`)])));
    expect(z.toJSONSchema(advertised)).toMatchObject({ properties: { query: { type: "string", description: "field query" } } });
  });

  it("infers the same types as the schema it stands for", () => {
    const Schema = lazySchema(() => z.object(shapeOf()));
    expectTypeOf<z.infer<typeof Schema>>().toEqualTypeOf<{ id: string; count: number; tags?: string[] | undefined }>();
    expectTypeOf<z.input<typeof Schema>>().toEqualTypeOf<{ id: string; count?: number | undefined; tags?: string[] | undefined }>();
  });
});

describe("lazyValue", () => {
  it("builds on the first call and returns the same value afterwards", () => {
    const probe = counted(() => ({ made: true }));
    const get = lazyValue(probe.build);
    expect(probe.calls()).toBe(0);
    const first = get();
    expect(get()).toBe(first);
    expect(probe.calls()).toBe(1);
  });
});

describe("loading core", () => {
  // zod calls globalThis.__zod_globalConfig.postProcessor (an internal hook, used by "zod/compile")
  // with every schema it constructs: counting its calls while core's modules load finds any schema
  // still built at module level.
  it("constructs no zod schema until one is used", async () => {
    const config = (globalThis as { __zod_globalConfig?: { postProcessor?: (schema: unknown) => void } }).__zod_globalConfig;
    expect(config).toBeDefined();
    const built: string[] = [];
    const previous = config!.postProcessor;
    config!.postProcessor = () => {
      const frame = (new Error().stack ?? "").split("\n").find((line) => /packages\/core\/src\/(?!schemas\/lazy)/.test(line));
      built.push((frame ?? "(unknown)").replace(/^.*packages\/core\/src\//, "").replace(/:\d+\)?$/, ""));
    };
    try {
      vi.resetModules();
      const core = await import("../src/index.js");
      await import("../src/testing.js");
      // Where schemas were built at load time (file:line): wrap them in lazySchema (schemas/lazy.ts).
      expect([...new Set(built)]).toEqual([]);
      // The first use builds the schema (and the ones it is made of), once.
      expect(core.BulletSchema.safeParse({}).success).toBe(false);
      expect(built.length).toBeGreaterThan(0);
    } finally {
      config!.postProcessor = previous;
    }
  });
});
