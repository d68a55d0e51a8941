import { AppError } from "../errors.js";
import type { Config } from "../schemas/config.js";

/**
 * The largest inputs the operations accept, in bytes of UTF-8 (config `inputLimits`). A task or a
 * rule is a sentence or a paragraph; megabytes of text are a mistake (a whole file passed as the
 * task) or abuse, and would be ranked, logged and stored as they are. Beyond a limit the
 * operation fails with INVALID_INPUT naming the limit, before anything is read or written.
 */
export interface InputLimits {
  /** `cm context` / `cm_context` task (also the hook prompt it is given). */
  taskBytes: number;
  /** A rule's text (`playbook add`, `remember`, `memory_remember`). */
  ruleBytes: number;
  /** A rule's category. */
  categoryBytes: number;
  /** A feedback reason (`mark --reason`, `cm_feedback`). */
  reasonBytes: number;
  /** A search query (`memory_search`). */
  queryBytes: number;
  /** A file or stdin read as input (`playbook add --file`, `playbook import`, a task on stdin). */
  fileBytes: number;
}

export const DEFAULT_INPUT_LIMITS: Readonly<InputLimits> = {
  taskBytes: 8 * 1024,
  ruleBytes: 4 * 1024,
  categoryBytes: 128,
  reasonBytes: 2 * 1024,
  queryBytes: 2 * 1024,
  fileBytes: 64 * 1024 * 1024,
};

/** The configured limits, each falling back to its default when absent or not a positive integer. */
export function inputLimitsOf(config: Pick<Config, "inputLimits"> | undefined): InputLimits {
  const raw = (config?.inputLimits ?? {}) as Partial<Record<keyof InputLimits, unknown>>;
  const out = { ...DEFAULT_INPUT_LIMITS };
  for (const key of Object.keys(out) as (keyof InputLimits)[]) {
    const v = raw[key];
    if (typeof v === "number" && Number.isInteger(v) && v > 0) out[key] = v;
  }
  return out;
}

/** Bytes of `text` in UTF-8 (no Buffer: core runs anywhere). */
export function utf8Bytes(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

function size(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(bytes % (1024 * 1024) === 0 ? 0 : 1)} MiB`;
  return bytes >= 1024 ? `${(bytes / 1024).toFixed(bytes % 1024 === 0 ? 0 : 1)} KiB` : `${bytes} bytes`;
}

/** The message of a limit error, shared by the operations and the batch reports. */
export function overLimitMessage(field: string, bytes: number, limit: number): string {
  return `${field} is ${size(bytes)}, over the limit of ${size(limit)}.`;
}

/**
 * Throws INVALID_INPUT when `value` is longer than the `key` limit; `undefined` passes. The hint
 * says how to shorten it and which config key raises the limit.
 */
export function requireWithinLimit(
  field: string,
  value: string | undefined,
  key: keyof InputLimits,
  config: Pick<Config, "inputLimits"> | undefined,
  hint?: string,
): void {
  if (value === undefined) return;
  const limit = inputLimitsOf(config)[key];
  // UTF-8 never has fewer bytes than UTF-16 code units: skip the count for short strings.
  if (value.length * 3 <= limit) return;
  const bytes = utf8Bytes(value);
  if (bytes <= limit) return;
  throw new AppError("INVALID_INPUT", overLimitMessage(field, bytes, limit), {
    hint: `${hint ?? `Shorten the ${field}.`} The limit is the config key inputLimits.${key}.`,
    details: { field, bytes, limit, configKey: `inputLimits.${key}` },
  });
}
