import * as z from "zod";

/**
 * Reading JSON out of a model's text reply, for servers without JSON-schema output and for
 * replies that wrap the JSON in prose or Markdown fences.
 */

export type ParseOutcome<T> = { ok: true; value: T } | { ok: false; problem: string };

/** Removes `<think>…</think>` blocks that reasoning models put before their answer. */
function withoutThinking(text: string): string {
  return text.replace(/<think>[\s\S]*?<\/think>/gi, "");
}

function tryParse(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** The balanced `{…}` starting at `start`, respecting strings and escapes; undefined when unbalanced. */
function balancedObjectAt(text: string, start: number): string | undefined {
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === "\\") escaped = true;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === "{") depth++;
    else if (ch === "}") {
      depth--;
      if (depth === 0) return text.slice(start, i + 1);
    }
  }
  return undefined;
}

const MAX_OBJECT_STARTS = 25;

/**
 * The first JSON value found in `text`: the whole text, then each fenced ```json block, then the
 * first balanced `{…}` that parses.
 */
export function extractJson(text: string): ParseOutcome<unknown> {
  const cleaned = withoutThinking(text).trim();
  if (cleaned === "") return { ok: false, problem: "the reply was empty" };
  const whole = tryParse(cleaned);
  if (whole.ok) return whole;

  for (const match of cleaned.matchAll(/```[a-zA-Z]*[ \t]*\r?\n?([\s\S]*?)```/g)) {
    const fenced = tryParse((match[1] ?? "").trim());
    if (fenced.ok) return fenced;
  }

  let from = 0;
  for (let n = 0; n < MAX_OBJECT_STARTS; n++) {
    const start = cleaned.indexOf("{", from);
    if (start < 0) break;
    const candidate = balancedObjectAt(cleaned, start);
    if (candidate !== undefined) {
      const parsed = tryParse(candidate);
      if (parsed.ok) return parsed;
    }
    from = start + 1;
  }
  return { ok: false, problem: "the reply did not contain valid JSON" };
}

/** A short description of what failed validation: up to three `path: message` items. */
export function describeIssues(error: z.ZodError): string {
  const parts = error.issues.slice(0, 3).map((issue) => {
    const path = issue.path.map(String).join(".");
    return `${path === "" ? "(root)" : path}: ${issue.message}`;
  });
  const more = error.issues.length > 3 ? ` (+${error.issues.length - 3} more)` : "";
  return `the JSON did not match the schema (${parts.join("; ")}${more})`;
}

/** Extracts JSON from `text` and validates it with `schema`. */
export function parseStructured<S extends z.ZodType>(text: string, schema: S): ParseOutcome<z.output<S>> {
  const extracted = extractJson(text);
  if (!extracted.ok) return extracted;
  const validated = schema.safeParse(extracted.value);
  return validated.success ? { ok: true, value: validated.data } : { ok: false, problem: describeIssues(validated.error) };
}

/** The JSON Schema of `schema` as compact text, for prompts that describe the expected reply. */
export function schemaAsText(schema: z.ZodType): string {
  try {
    const json = z.toJSONSchema(schema, { io: "output", unrepresentable: "any" }) as Record<string, unknown>;
    delete json.$schema;
    return JSON.stringify(json);
  } catch {
    return "(a JSON object)";
  }
}
