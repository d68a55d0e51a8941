import * as z from "zod";

/**
 * Deferred construction of module-level values (issue 18). Building a zod 4 schema costs real time
 * (tens of microseconds per node, more while zod's own code is still cold), and a `cm` process
 * that runs one command uses a handful of the hundreds of schemas core defines. The helpers here
 * build a value when it is first used, so that loading a module costs almost nothing.
 */

/** Returns a function that builds the value on its first call and returns that same value afterwards. */
/* @__NO_SIDE_EFFECTS__ */
export function lazyValue<T>(build: () => T): () => T {
  let built = false;
  let value: T;
  return () => {
    if (!built) {
      value = build();
      built = true;
    }
    return value;
  };
}

/**
 * A schema that is built on first use. The value returned stands for the schema `build()` makes:
 * on the first operation on it (reading `parse`, `safeParse`, `shape`, `_zod`, …, `instanceof`,
 * `Object.keys`), the schema is built and then constructed a second time, by its own zod
 * constructor, into the stand-in itself (from the same definition, so sharing all its parts). From
 * then on the stand-in *is* that zod schema: its methods, its internals and the closures zod keeps
 * refer to the stand-in, so it parses, composes into other schemas (`z.object({ b: BulletSchema })`,
 * arrays, unions, discriminated unions), derives (`.extend`, `.pick`, `.optional`, `.describe`)
 * and converts with `z.toJSONSchema` exactly like the schema itself.
 *
 * Use it for exported schemas (public API) and schemas used inside other ones; plain values or
 * object shapes can use `lazyValue`.
 *
 * Marked free of side effects, so that bundlers drop the schemas a bundle never uses.
 */
/* @__NO_SIDE_EFFECTS__ */
export function lazySchema<T extends z.core.$ZodType>(build: () => T): T {
  // 0: not built; 1: being constructed (operations go straight to the target); 2: built.
  let state = 0;
  let failure: { error: unknown } | undefined;
  const target = {} as T;
  const ready = (): void => {
    if (state !== 0) return;
    if (failure !== undefined) throw failure.error;
    state = 1;
    try {
      const schema = build();
      const internals = schema._zod;
      Object.setPrototypeOf(target, Object.getPrototypeOf(schema));
      // zod's constructors are plain functions that initialise `this` (its clone() uses `new`).
      (internals.constr as unknown as (this: T, def: unknown) => T).call(stand, internals.def);
      // What zod sets on a schema after constructing it: the parent of a clone (`.describe()`,
      // `.meta()`) and registry metadata, keyed by identity.
      if (internals.parent !== undefined) stand._zod.parent = internals.parent;
      const meta = z.globalRegistry.get(schema);
      if (meta !== undefined) z.globalRegistry.add(stand, meta);
      state = 2;
    } catch (error) {
      failure = { error };
      state = 0;
      throw error;
    }
  };
  // Every trap builds the schema first, then does what a proxy without traps would do.
  const stand: T = new Proxy(target, {
    get: (t, key, receiver) => (ready(), Reflect.get(t, key, receiver)),
    set: (t, key, value, receiver) => (ready(), Reflect.set(t, key, value, receiver)),
    has: (t, key) => (ready(), Reflect.has(t, key)),
    deleteProperty: (t, key) => (ready(), Reflect.deleteProperty(t, key)),
    ownKeys: (t) => (ready(), Reflect.ownKeys(t)),
    getOwnPropertyDescriptor: (t, key) => (ready(), Reflect.getOwnPropertyDescriptor(t, key)),
    defineProperty: (t, key, descriptor) => (ready(), Reflect.defineProperty(t, key, descriptor)),
    getPrototypeOf: (t) => (ready(), Reflect.getPrototypeOf(t)),
    setPrototypeOf: (t, proto) => (ready(), Reflect.setPrototypeOf(t, proto)),
    isExtensible: (t) => (ready(), Reflect.isExtensible(t)),
    preventExtensions: (t) => (ready(), Reflect.preventExtensions(t)),
  });
  return stand;
}
