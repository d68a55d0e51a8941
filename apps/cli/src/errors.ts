import { defaultRecovery, describeCause, docsFor, toAppError } from "@cass-memory/core";
import { encodeToon } from "./formats.js";
import { errorEnvelope, printJson, writeStderr, writeStdout, type ErrorBody } from "./output.js";

/**
 * The one place where any error becomes output and an exit code: the JSON error envelope on stdout
 * in JSON mode, otherwise `cm: error: <message>` and its Cause/Recovery/Docs/Hint lines on stderr.
 * Returns the exit code of the error's category (reference §1.4).
 */

export interface ErrorReportOptions {
  /** Envelope command id (`playbook:add`), or the CLI name when unknown. */
  command: string;
  json: boolean;
  /** With `json`: print the error envelope as TOON. */
  toon?: boolean;
  cliName: string;
  startedAt: number;
  verbose?: boolean;
}

export function errorBody(error: unknown, cliName: string, command: string): ErrorBody {
  const err = toAppError(error);
  const helpCommand = command === cliName ? undefined : command.replace(/:/g, " ");
  const body: ErrorBody = {
    message: err.message,
    code: err.code,
    exitCode: err.exitCode,
    recovery: err.recovery && err.recovery.length > 0 ? err.recovery : defaultRecovery(err.code, cliName, helpCommand),
  };
  const cause = describeCause((err as { cause?: unknown }).cause);
  if (cause !== undefined && cause !== err.message) body.cause = cause;
  const docs = docsFor(err.code);
  if (docs !== undefined) body.docs = docs;
  if (err.hint !== undefined) body.hint = err.hint;
  if (err.retryable !== undefined) body.retryable = err.retryable;
  if (err.details !== undefined) body.details = err.details;
  return body;
}

export function reportError(error: unknown, options: ErrorReportOptions): number {
  const body = errorBody(error, options.cliName, options.command);
  if (options.json && options.toon) {
    const envelope = errorEnvelope(options.command, body, options.startedAt);
    let text: string | undefined;
    try {
      text = encodeToon(envelope);
    } catch {
      // No encoder: the envelope still goes out, as JSON.
    }
    if (text !== undefined) writeStdout(`${text}\n`);
    else printJson(envelope);
  } else if (options.json) {
    printJson(errorEnvelope(options.command, body, options.startedAt));
  } else {
    const lines = [`${options.cliName}: error: ${body.message}`];
    if (body.cause !== undefined) lines.push(`Cause: ${body.cause}`);
    lines.push("Recovery:", ...body.recovery.map((step) => `  - ${step}`));
    if (body.docs !== undefined) lines.push(`Docs: ${body.docs}`);
    if (body.hint !== undefined) lines.push(`Hint: ${body.hint}`);
    writeStderr(lines.join("\n"));
  }
  if (options.verbose && body.exitCode === 1 && error instanceof Error && error.stack) {
    writeStderr(`[cm] ${error.stack}`);
  }
  return body.exitCode;
}
