import type * as z from "zod";
import { AppError } from "./errors.js";
import type { OperationDeps } from "./ports.js";
import { checkFlatObject, type FlatFields } from "./schemas/flat-object.js";

/**
 * One use case, defined once and shared by the CLI and the MCP server: a name, zod schemas for
 * input and output, and `run`. Front ends only translate their arguments into `input` and render
 * the output.
 */
export interface Operation<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  /** Stable operation name (also the MCP tool name when exposed). */
  readonly name: string;
  /** The command id used in the CLI's JSON envelope (`context`, `playbook:add`, …). */
  readonly command: string;
  readonly description: string;
  readonly input: I;
  /**
   * Optional, for a flat `input` of primitives: its fields as a table, so that plainly valid input
   * is checked without building the schema (checkFlatObject; a core test checks the table against
   * `input`).
   */
  readonly inputFields?: FlatFields;
  readonly output: O;
  run(deps: OperationDeps, input: z.output<I>): Promise<z.output<O>>;
}

export function defineOperation<I extends z.ZodType, O extends z.ZodType>(op: Operation<I, O>): Operation<I, O> {
  return op;
}

/** Formats zod issues as `field: message; …` for an error message. */
export function formatZodIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.map(String).join(".");
      return path ? `${path}: ${issue.message}` : issue.message;
    })
    .join("; ");
}

/** Validates `rawInput` against the operation's schema, then runs it. */
export async function runOperation<I extends z.ZodType, O extends z.ZodType>(
  op: Operation<I, O>,
  deps: OperationDeps,
  rawInput: z.input<I>,
): Promise<z.output<O>> {
  const checked = op.inputFields === undefined ? undefined : checkFlatObject<z.output<I>>(op.inputFields, rawInput);
  if (checked !== undefined) return op.run(deps, checked);
  const parsed = op.input.safeParse(rawInput);
  if (!parsed.success) {
    throw new AppError("INVALID_INPUT", formatZodIssues(parsed.error), {
      hint: `Run '${deps.cliName} ${op.command.replace(/:/g, " ")} --help' for usage.`,
      details: { issues: parsed.error.issues.map((i) => ({ path: i.path.map(String), message: i.message })) },
    });
  }
  return op.run(deps, parsed.data);
}
