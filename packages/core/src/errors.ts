/**
 * The one error type of cass-memory. Codes, categories and exit codes are those of the original
 * `cm` (reference §1.4) so that agents parsing `error.code` / exit codes keep working.
 */

export const ERROR_CODES = [
  "INVALID_INPUT",
  "MISSING_REQUIRED",
  "MISSING_API_KEY",
  "BULLET_NOT_FOUND",
  "TRAUMA_NOT_FOUND",
  "SESSION_NOT_FOUND",
  "PLAYBOOK_NOT_FOUND",
  "PLAYBOOK_CORRUPT",
  "CONFIG_INVALID",
  "NETWORK_ERROR",
  "CASS_NOT_FOUND",
  "CASS_INDEX_STALE",
  "CASS_SEARCH_FAILED",
  "SEMANTIC_SEARCH_UNAVAILABLE",
  "LLM_API_ERROR",
  "LLM_RATE_LIMITED",
  "LLM_BUDGET_EXCEEDED",
  "FILE_NOT_FOUND",
  "FILE_PERMISSION_DENIED",
  "FILE_WRITE_FAILED",
  "LOCK_ACQUISITION_FAILED",
  "ALREADY_EXISTS",
  "SANITIZATION_FAILED",
  "SECRET_DETECTED",
  "VALIDATION_FAILED",
  "REFLECTION_FAILED",
  "AUDIT_FAILED",
  "INTERNAL_ERROR",
  "UNKNOWN_ERROR",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export type ErrorCategory =
  | "internal"
  | "user_input"
  | "configuration"
  | "filesystem"
  | "network"
  | "cass"
  | "llm";

export const CATEGORY_EXIT_CODES: Readonly<Record<ErrorCategory, number>> = {
  internal: 1,
  user_input: 2,
  configuration: 3,
  filesystem: 4,
  network: 5,
  cass: 6,
  llm: 7,
};

const CODE_CATEGORY: Readonly<Record<ErrorCode, ErrorCategory>> = {
  INVALID_INPUT: "user_input",
  MISSING_REQUIRED: "user_input",
  MISSING_API_KEY: "llm",
  BULLET_NOT_FOUND: "user_input",
  // The original left these two unmapped (they fell through to message heuristics, usually exit 1);
  // a missing trauma is plainly a user-input problem, and an unknown error is internal.
  TRAUMA_NOT_FOUND: "user_input",
  SESSION_NOT_FOUND: "user_input",
  PLAYBOOK_NOT_FOUND: "configuration",
  PLAYBOOK_CORRUPT: "configuration",
  CONFIG_INVALID: "configuration",
  NETWORK_ERROR: "network",
  CASS_NOT_FOUND: "cass",
  CASS_INDEX_STALE: "cass",
  CASS_SEARCH_FAILED: "cass",
  SEMANTIC_SEARCH_UNAVAILABLE: "configuration",
  LLM_API_ERROR: "llm",
  LLM_RATE_LIMITED: "llm",
  LLM_BUDGET_EXCEEDED: "llm",
  FILE_NOT_FOUND: "filesystem",
  FILE_PERMISSION_DENIED: "filesystem",
  FILE_WRITE_FAILED: "filesystem",
  LOCK_ACQUISITION_FAILED: "filesystem",
  ALREADY_EXISTS: "user_input",
  SANITIZATION_FAILED: "configuration",
  // Not in the original: input that contains a secret (issue 21) is refused as bad input.
  SECRET_DETECTED: "user_input",
  VALIDATION_FAILED: "user_input",
  REFLECTION_FAILED: "internal",
  AUDIT_FAILED: "internal",
  INTERNAL_ERROR: "internal",
  UNKNOWN_ERROR: "internal",
};

/** Codes whose error envelope carries `docs` (reference §1.4.2). */
const CODES_WITH_DOCS: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  "MISSING_API_KEY",
  "PLAYBOOK_NOT_FOUND",
  "PLAYBOOK_CORRUPT",
  "CONFIG_INVALID",
  "SEMANTIC_SEARCH_UNAVAILABLE",
  "NETWORK_ERROR",
  "CASS_NOT_FOUND",
  "CASS_INDEX_STALE",
  "CASS_SEARCH_FAILED",
  "LLM_API_ERROR",
  "LLM_RATE_LIMITED",
  "LLM_BUDGET_EXCEEDED",
]);

export const TROUBLESHOOTING_DOCS = "README.md#-troubleshooting";

export function categoryOf(code: ErrorCode): ErrorCategory {
  return CODE_CATEGORY[code] ?? "internal";
}

export function exitCodeOf(code: ErrorCode): number {
  return CATEGORY_EXIT_CODES[categoryOf(code)];
}

export function docsFor(code: ErrorCode): string | undefined {
  return CODES_WITH_DOCS.has(code) ? TROUBLESHOOTING_DOCS : undefined;
}

/** Default recovery steps per code; `cli` is the program name used in messages (`cm`). */
export function defaultRecovery(code: ErrorCode, cli = "cm", command?: string): string[] {
  const helpFor = command ? `${cli} ${command} --help` : `${cli} --help`;
  switch (code) {
    case "INVALID_INPUT":
    case "MISSING_REQUIRED":
    case "ALREADY_EXISTS":
    case "VALIDATION_FAILED":
    case "TRAUMA_NOT_FOUND":
      return [`Run '${helpFor}' to see valid arguments and examples.`, "Fix the input and re-run the command."];
    case "SECRET_DETECTED":
      return [
        "Replace the secret with a placeholder such as <API_KEY> and re-run.",
        "If the value is not a secret, add it to sanitization.allowlist in config.json.",
      ];
    case "BULLET_NOT_FOUND":
      return [
        `Run '${cli} playbook list' to see available bullet ids.`,
        `Use '${cli} similar "<query>"' to find a rule by its content.`,
        "Double-check the bullet id (ids look like b-xxxxxxx-xxxxxx).",
      ];
    case "SESSION_NOT_FOUND":
      return ["Verify the session path exists and is readable.", "Use 'cass search <query>' to find the session."];
    case "MISSING_API_KEY":
      return [
        "Set the API key of your provider (ANTHROPIC_API_KEY, OPENAI_API_KEY or GOOGLE_GENERATIVE_AI_API_KEY).",
        "Or point baseUrl at a local OpenAI-compatible server (Ollama, llama.cpp, vLLM).",
        "Or run without an LLM: CASS_MEMORY_LLM=none.",
      ];
    case "PLAYBOOK_NOT_FOUND":
      return [`Run '${cli} init' to create the playbook.`, "Or set playbookPath in config."];
    case "PLAYBOOK_CORRUPT":
      return [
        "Fix the file by hand: the error above names the file and the problem.",
        `Run '${cli} doctor' to inspect it.`,
        "Or restore it from a backup (<file>.backup.<timestamp>) or from git.",
      ];
    case "CONFIG_INVALID":
    case "SANITIZATION_FAILED":
    case "SEMANTIC_SEARCH_UNAVAILABLE":
      return [`Run '${cli} doctor' to check your configuration.`, "Fix the configuration file named above and re-run."];
    case "NETWORK_ERROR":
      return ["Check your network connection.", "Retry the command."];
    case "CASS_NOT_FOUND":
      return ["Install cass: cargo install coding-agent-search", "Then run 'cass index'.", "Or set CASS_PATH / cassPath in config."];
    case "CASS_INDEX_STALE":
      return ["Run 'cass index' to rebuild the index.", "Then 'cass health'."];
    case "CASS_SEARCH_FAILED":
      return ["Run 'cass health' to check cass.", "Run 'cass doctor --fix' if the index is damaged."];
    case "LLM_API_ERROR":
    case "LLM_RATE_LIMITED":
    case "LLM_BUDGET_EXCEEDED":
      return ["Check your provider credentials and budget settings.", "Wait a moment and retry."];
    case "FILE_NOT_FOUND":
    case "FILE_PERMISSION_DENIED":
    case "FILE_WRITE_FAILED":
      return ["Check that the path exists and that you may read and write it.", "Then re-run the command."];
    case "LOCK_ACQUISITION_FAILED":
      return [
        "Another cm process holds the lock: wait a moment and retry.",
        `If no cm is running, run '${cli} doctor' to clear stale lock directories (*.lock.d).`,
      ];
    default:
      return [`Re-run with '--verbose' for details.`, "If it persists, file a bug with the command and its output."];
  }
}

export interface AppErrorOptions {
  hint?: string;
  details?: Record<string, unknown>;
  cause?: unknown;
  retryable?: boolean;
  recovery?: string[];
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly hint: string | undefined;
  readonly details: Record<string, unknown> | undefined;
  readonly retryable: boolean | undefined;
  readonly recovery: string[] | undefined;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "AppError";
    this.code = code;
    this.hint = options.hint;
    this.details = options.details;
    this.retryable = options.retryable;
    this.recovery = options.recovery;
  }

  get category(): ErrorCategory {
    return categoryOf(this.code);
  }

  get exitCode(): number {
    return exitCodeOf(this.code);
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError || (typeof value === "object" && value !== null && (value as { name?: unknown }).name === "AppError" && typeof (value as { code?: unknown }).code === "string");
}

/** A short text for an error's cause, as the envelope's `cause` field wants. */
export function describeCause(cause: unknown): string | undefined {
  if (cause === undefined || cause === null) return undefined;
  if (cause instanceof Error) return cause.message;
  if (typeof cause === "string") return cause;
  try {
    return JSON.stringify(cause);
  } catch {
    return String(cause);
  }
}

/**
 * Wraps anything thrown into an AppError. AppErrors pass through; Node errno errors and other
 * well-known shapes are classified like the original's heuristics (reference §1.4.4); the raw error
 * is kept as `cause`.
 */
export function toAppError(error: unknown): AppError {
  if (isAppError(error)) return error;
  const err = error instanceof Error ? error : new Error(String(error));
  const errno = (err as { code?: unknown }).code;
  if (typeof errno === "string") {
    if (errno === "ENOENT" || errno === "ENOTDIR") return new AppError("FILE_NOT_FOUND", err.message, { cause: err });
    if (errno === "EACCES" || errno === "EPERM" || errno === "EROFS") {
      return new AppError("FILE_PERMISSION_DENIED", err.message, { cause: err });
    }
    if (["EEXIST", "EISDIR", "EMFILE", "ENOSPC"].includes(errno)) {
      return new AppError("FILE_WRITE_FAILED", err.message, { cause: err });
    }
    if (["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "EADDRINUSE"].includes(errno)) {
      return new AppError("NETWORK_ERROR", err.message, { cause: err, retryable: true });
    }
  }
  if (err.name === "ZodError") return new AppError("CONFIG_INVALID", err.message, { cause: err });
  return new AppError("INTERNAL_ERROR", err.message || "Unexpected error", { cause: err });
}
