import { AppError } from "../errors.js";
import type { WorkspaceFiles } from "../ports.js";
import { EVIDENCE_TYPES, type Evidence, type EvidenceType, type Verification } from "../schemas/playbook.js";
import { userRegexProblem } from "./sanitize.js";

/**
 * Provenance and verification of rules (beyond the original): parsing the CLI's compact forms,
 * and running a rule's check against the workspace. Checks never change the playbook; a failing
 * check makes `cm context` mark the rule `stale` and rank it lower.
 */

const EVIDENCE_SET: ReadonlySet<string> = new Set(EVIDENCE_TYPES);

/**
 * Parses `<type>:<uri>[:<note>]`. URIs contain colons (`https://…`, `src/a.ts:42`), so the text
 * after the last colon is taken as the note only when it is not a URI continuation: it must not
 * start with `//` and must not be a bare line number.
 */
export function parseEvidenceSpec(spec: string): Evidence {
  const text = spec.trim();
  const colon = text.indexOf(":");
  const type = (colon > 0 ? text.slice(0, colon) : "").trim().toLowerCase();
  const rest = colon > 0 ? text.slice(colon + 1).trim() : "";
  if (!EVIDENCE_SET.has(type) || rest === "") {
    throw new AppError("INVALID_INPUT", `Invalid evidence "${spec}": expected <type>:<uri>[:<note>]`, {
      hint: `Types: ${EVIDENCE_TYPES.join(", ")}. Example: --evidence "ticket:JIRA-123:login loop after deploy"`,
      details: { field: "evidence", received: spec, types: [...EVIDENCE_TYPES] },
    });
  }
  const last = rest.lastIndexOf(":");
  if (last > 0) {
    const tail = rest.slice(last + 1);
    if (tail.trim() !== "" && !tail.startsWith("//") && !/^\d+(-\d+)?$/.test(tail.trim())) {
      return { type: type as EvidenceType, uri: rest.slice(0, last).trim(), note: tail.trim() };
    }
  }
  return { type: type as EvidenceType, uri: rest };
}

export interface VerificationFlags {
  /** `--verify-file <path>`. */
  file?: string;
  /** `--verify-regex <path>:<pattern>`. */
  regex?: string;
  /** `--verify-absent`: the check passes when the file / pattern is absent. */
  absent?: boolean;
}

/** Builds (and validates) a verification from the CLI flags; undefined when none was given. */
export function verificationFromFlags(flags: VerificationFlags): Verification | undefined {
  const file = flags.file?.trim();
  const regex = flags.regex?.trim();
  if (file && regex) {
    throw new AppError("INVALID_INPUT", "Use only one of --verify-file and --verify-regex", {
      hint: "A rule carries one verification check.",
      details: { field: "verification" },
    });
  }
  const mode = flags.absent ? "absent" : "exists";
  if (flags.absent && !file && !regex) {
    throw new AppError("INVALID_INPUT", "--verify-absent needs --verify-file or --verify-regex", {
      hint: '--verify-file src/legacy/auth.ts --verify-absent',
      details: { field: "verification" },
    });
  }
  if (file !== undefined && flags.file !== undefined) {
    if (file === "") throw new AppError("INVALID_INPUT", "--verify-file needs a path", { details: { field: "verifyFile" } });
    return validateVerification({ type: "file_exists", pattern: file, mode });
  }
  if (regex !== undefined && flags.regex !== undefined) {
    const colon = regex.indexOf(":");
    const path = colon > 0 ? regex.slice(0, colon).trim() : "";
    const pattern = colon > 0 ? regex.slice(colon + 1) : "";
    if (path === "" || pattern === "") {
      throw new AppError("INVALID_INPUT", `Invalid --verify-regex "${regex}": expected <path>:<pattern>`, {
        hint: '--verify-regex "package.json:\\"vitest\\""',
        details: { field: "verifyRegex", received: regex },
      });
    }
    return validateVerification({ type: "regex", pattern, path, mode });
  }
  return undefined;
}

/**
 * Why a verification path may not be used, or null. Checks read files inside the workspace only:
 * a rule that could test `/etc/shadow` or `../../.ssh/id_rsa` would let whoever writes rules (a
 * shared repo playbook, an MCP client) learn about files by watching the rule turn stale. So the
 * path must be relative, and must not climb above the workspace root. (Symbolic links that lead
 * outside are refused where files are read, by the host's WorkspaceFiles.)
 */
export function workspacePathProblem(path: string): string | null {
  if (path.trim() === "") return "empty";
  if (path.includes("\0")) return "not a file name";
  if (/^[/\\~]/.test(path) || /^[a-z]:/i.test(path)) return "not relative to the workspace";
  let depth = 0;
  for (const segment of path.split(/[/\\]+/)) {
    if (segment === "..") depth--;
    else if (segment !== "." && segment !== "") depth++;
    if (depth < 0) return "outside the workspace";
  }
  return null;
}

function requireWorkspacePath(field: string, path: string): void {
  const problem = workspacePathProblem(path);
  if (problem === null) return;
  throw new AppError("INVALID_INPUT", `Verification path "${path}" is ${problem}: checks read files inside the workspace only.`, {
    hint: "Give a path relative to the workspace root, e.g. --verify-file src/auth/session.ts or --verify-regex 'package.json:\"vitest\"'.",
    details: { field, received: path },
  });
}

/** Refuses paths outside the workspace and regular expressions that are invalid or could backtrack catastrophically. */
export function validateVerification(verification: Verification): Verification {
  if (verification.type === "file_exists") requireWorkspacePath("verification.pattern", verification.pattern);
  if (verification.type === "regex") {
    const problem = userRegexProblem(verification.pattern, "m");
    if (problem !== null) {
      throw new AppError("INVALID_INPUT", `Verification pattern is ${problem}: ${verification.pattern}`, {
        hint: "Use a simpler regular expression (no nested quantifiers such as (a+)+).",
        details: { field: "verification.pattern", received: verification.pattern },
      });
    }
    if (verification.path === undefined || verification.path.trim() === "") {
      throw new AppError("INVALID_INPUT", "A regex verification needs the path of the file to search", {
        details: { field: "verification.path" },
      });
    }
    requireWorkspacePath("verification.path", verification.path);
  }
  return verification;
}

/** Files larger than this are searched in their first MAX_VERIFY_BYTES only. */
export const MAX_VERIFY_BYTES = 1024 * 1024;

export interface VerificationOutcome {
  ok: boolean;
  /** Why the check failed (only when !ok). */
  reason?: string;
  checkedAt: string;
}

/**
 * Runs one check against the workspace (`base`; relative paths are resolved against it).
 * Never throws: an unusable check is reported as failed with its reason.
 */
export async function runVerification(
  verification: Verification,
  files: WorkspaceFiles,
  base: string,
  nowIso: string,
): Promise<VerificationOutcome> {
  const expectPresent = verification.mode !== "absent";
  // Rules written by hand or by another tool may name any path: never look outside the workspace,
  // and answer the same whatever is there.
  const checkedPath = verification.type === "file_exists" ? verification.pattern : (verification.path ?? "");
  const pathProblem = workspacePathProblem(checkedPath);
  if (pathProblem !== null) {
    return { ok: false, reason: `path ${checkedPath} is ${pathProblem}; checks read files inside the workspace only`, checkedAt: nowIso };
  }
  if (verification.type === "file_exists") {
    const present = await files.exists(base, verification.pattern);
    if (present === expectPresent) return { ok: true, checkedAt: nowIso };
    return {
      ok: false,
      reason: present
        ? `file ${verification.pattern} exists, but the rule expects it to be absent`
        : `file ${verification.pattern} no longer exists`,
      checkedAt: nowIso,
    };
  }
  const path = verification.path ?? "";
  if (userRegexProblem(verification.pattern, "m") !== null) {
    return { ok: false, reason: `verification pattern is unusable: ${verification.pattern}`, checkedAt: nowIso };
  }
  const text = await files.readText(base, path, MAX_VERIFY_BYTES);
  const found = text !== null && new RegExp(verification.pattern, "m").test(text);
  if (found === expectPresent) return { ok: true, checkedAt: nowIso };
  return {
    ok: false,
    reason:
      text === null
        ? `file ${path} no longer exists (pattern /${verification.pattern}/ cannot be found)`
        : found
          ? `pattern /${verification.pattern}/ is present in ${path}, but the rule expects it to be absent`
          : `pattern /${verification.pattern}/ no longer matches ${path}`,
    checkedAt: nowIso,
  };
}

const DAY_MS = 86_400_000;

/**
 * A validity bound: an ISO date/time, `YYYY-MM-DD`, or a relative `<n>d` (days from now).
 * Returns the ISO string.
 */
export function parseValidityDate(field: string, raw: string, now: Date): string {
  const text = raw.trim();
  const relative = /^(\d+)d$/i.exec(text);
  if (relative) return new Date(now.getTime() + Number(relative[1]) * DAY_MS).toISOString();
  const ms = Date.parse(text);
  if (text === "" || !Number.isFinite(ms)) {
    throw new AppError("INVALID_INPUT", `${field} must be a date (YYYY-MM-DD or ISO-8601) or a number of days like 90d`, {
      hint: `--valid-to 2027-06-30  or  --valid-to 90d`,
      details: { field, received: raw },
    });
  }
  return new Date(ms).toISOString();
}
