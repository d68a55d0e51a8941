import { AppError } from "@cass-memory/core";
import { detectJsonLayout, formatJson, isPlainObject, jsonEqual, scanJson, type PlanAction } from "../setup/json-config.js";
import type { HookClient, HookClientSpec, HookEventSpec } from "./clients.js";

/**
 * Merging cm's hook entries into a client's hook configuration (JSON). Pure: text in, text out.
 * Everything that is not ours is kept as it is (other hooks, other keys, key order, layout). Our
 * entries are recognised by their command (`… hook <client> <event>` run by cm), so a re-install
 * replaces them in place of adding more, and `--uninstall` removes exactly them.
 */

export type HookEntryStatus = "added" | "updated" | "unchanged" | "removed" | "skipped";

export interface HookEntryReport {
  event: string;
  matcher?: string;
  command: string;
  status: HookEntryStatus;
  /** Why an entry was skipped. */
  reason?: string;
}

export interface HookConfigPlan {
  action: PlanAction | "removed";
  /** The full file content after the change (the original text when unchanged). */
  content: string;
  entries: HookEntryReport[];
}

export interface HookPlanOptions {
  spec: HookClientSpec;
  /** The command string cm writes for an event. */
  commandFor: (event: HookEventSpec) => string;
  /** The file's current text (null when it does not exist). */
  text: string | null;
  path: string;
  uninstall?: boolean;
}

/** The program names a hook command of ours runs (the `cm` shim, the `cm.cjs`/`cm.js` loader, the bundle). */
const CM_PROGRAM = String.raw`(?:cm|cass-memory|cm\.c?js|cm-main\.cjs)`;

/** True when `command` is one `cm setup --hooks` wrote for `client`. */
export function isCmHookCommand(command: unknown, client: HookClient): boolean {
  if (typeof command !== "string") return false;
  const escaped = client.replace(/[-]/g, "\\-");
  return new RegExp(String.raw`(?:^|[\s'"/\\])${CM_PROGRAM}['"]?\s+hook\s+${escaped}\s+[A-Za-z_-]+['"]?\s*$`).test(command);
}

/** Parses the file into its top-level object; refuses (CONFIG_INVALID) anything cm cannot rewrite losslessly. */
export function parseHookFile(text: string, path: string): Record<string, unknown> {
  const body = text.startsWith("\uFEFF") ? text.slice(1) : text;
  if (body.trim() === "") return {};
  const scan = scanJson(body);
  if (scan.comments > 0 || scan.trailingCommas > 0) {
    throw new AppError("CONFIG_INVALID", `${path} contains comments or trailing commas; cm will not rewrite it because they would be lost.`, {
      hint: "Remove them (or add cm's hooks by hand, see docs/hooks.md), then re-run.",
      details: { path },
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (error) {
    throw new AppError("CONFIG_INVALID", `${path} is not valid JSON (${error instanceof Error ? error.message : String(error)}); cm will not overwrite it.`, {
      hint: "Fix or move the file, then re-run.",
      details: { path },
      cause: error,
    });
  }
  if (!isPlainObject(value)) {
    throw new AppError("CONFIG_INVALID", `${path} must hold a JSON object at the top level; cm will not overwrite it.`, {
      hint: "Fix or move the file, then re-run.",
      details: { path },
    });
  }
  if (scan.unsafeIntegers.length > 0) {
    throw new AppError("CONFIG_INVALID", `${path} holds integers too large to rewrite exactly; cm will not rewrite it.`, { details: { path } });
  }
  return value;
}

function invalid(path: string, what: string): AppError {
  return new AppError("CONFIG_INVALID", `${what} in ${path} is not in the expected shape; cm will not overwrite it.`, {
    hint: "Fix that key by hand (see docs/hooks.md for the shape), then re-run.",
    details: { path, key: what },
  });
}

/** The handler object cm writes for an event. */
export function hookHandler(spec: HookClientSpec, event: HookEventSpec, command: string): Record<string, unknown> {
  switch (spec.format) {
    case "grouped": {
      const handler: Record<string, unknown> = {};
      if (spec.client === "gemini") handler.name = `cass-memory-${event.arg}`;
      handler.type = "command";
      handler.command = command;
      if (spec.timeout !== undefined) handler.timeout = spec.timeout.value;
      if (spec.client === "gemini") handler.description = describe(event);
      return handler;
    }
    case "cursor":
      return { command };
    case "windsurf":
      return { command, show_output: false };
  }
}

function describe(event: HookEventSpec): string {
  switch (event.action) {
    case "prompt":
      return "cass-memory: playbook rules relevant to the prompt";
    case "session-start":
      return "cass-memory: the playbook's most effective rules";
    case "session-end":
      return "cass-memory: learn from this session in the background";
    case "shell-guard":
      return "cass-memory: HOT STOVE guard for shell commands";
  }
}

interface Found {
  /** Index of the group (grouped format) or of the handler (flat formats) in the event's array. */
  index: number;
  /** Index of the handler inside the group (grouped format only). */
  inner: number;
  handler: Record<string, unknown>;
  matcher: unknown;
}

/** Our handlers in one event's array. */
function findOurs(spec: HookClientSpec, list: unknown[], path: string, event: string): Found[] {
  const found: Found[] = [];
  list.forEach((item, index) => {
    if (!isPlainObject(item)) return;
    if (spec.format === "grouped") {
      const inner = item.hooks;
      if (inner === undefined) return;
      if (!Array.isArray(inner)) throw invalid(path, `hooks.${event}[${index}].hooks`);
      inner.forEach((handler, innerIndex) => {
        if (isPlainObject(handler) && isCmHookCommand(handler.command, spec.client)) found.push({ index, inner: innerIndex, handler, matcher: item.matcher });
      });
    } else if (isCmHookCommand(item.command, spec.client)) {
      found.push({ index, inner: -1, handler: item, matcher: undefined });
    }
  });
  return found;
}

/** Removes the found handlers; groups emptied by the removal go too (a user's own empty group stays). */
function removeOurs(spec: HookClientSpec, list: unknown[], found: Found[]): unknown[] {
  if (found.length === 0) return list;
  if (spec.format !== "grouped") {
    const drop = new Set(found.map((f) => f.index));
    return list.filter((_, i) => !drop.has(i));
  }
  const byGroup = new Map<number, Set<number>>();
  for (const f of found) {
    const set = byGroup.get(f.index) ?? new Set<number>();
    set.add(f.inner);
    byGroup.set(f.index, set);
  }
  const out: unknown[] = [];
  list.forEach((group, index) => {
    const drop = byGroup.get(index);
    if (drop === undefined) {
      out.push(group);
      return;
    }
    const g = group as Record<string, unknown>;
    const kept = (g.hooks as unknown[]).filter((_, i) => !drop.has(i));
    if (kept.length > 0) out.push({ ...g, hooks: kept });
  });
  return out;
}

/** True when a Claude Code PreToolUse list already runs the python guard of `cm guard --install`. */
export function runsPythonGuard(list: unknown[]): boolean {
  return list.some((group) => JSON.stringify(group).includes("trauma_guard.py"));
}

/** Plans the new content of a client's hook file. */
export function planHookConfig(options: HookPlanOptions): HookConfigPlan {
  const { spec, text, path } = options;
  const uninstall = Boolean(options.uninstall);
  const root = text === null ? {} : parseHookFile(text, path);
  const hooksValue = root.hooks;
  if (hooksValue !== undefined && !isPlainObject(hooksValue)) throw invalid(path, "hooks");
  const hooks: Record<string, unknown> = { ...(hooksValue ?? {}) };
  const entries: HookEntryReport[] = [];
  let changed = false;

  const wanted = uninstall ? [] : spec.events;
  const wantedEvents = new Set(wanted.map((e) => e.event));

  // Our entries under events cm no longer installs (or all of them, for --uninstall).
  for (const [event, value] of Object.entries(hooks)) {
    if (wantedEvents.has(event) || !Array.isArray(value)) continue;
    const found = findOurs(spec, value, path, event);
    if (found.length === 0) continue;
    const kept = removeOurs(spec, value, found);
    if (kept.length > 0) hooks[event] = kept;
    else delete hooks[event];
    changed = true;
    for (const f of found) entries.push({ event, ...(typeof f.matcher === "string" ? { matcher: f.matcher } : {}), command: String(f.handler.command), status: "removed" });
  }

  for (const event of wanted) {
    const command = options.commandFor(event);
    const value = hooks[event.event];
    if (value !== undefined && !Array.isArray(value)) throw invalid(path, `hooks.${event.event}`);
    const list = (value as unknown[] | undefined) ?? [];
    const found = findOurs(spec, list, path, event.event);
    const report: HookEntryReport = { event: event.event, ...(event.matcher !== undefined ? { matcher: event.matcher } : {}), command, status: "added" };

    if (spec.client === "claude-code" && event.action === "shell-guard" && runsPythonGuard(removeOurs(spec, list, found))) {
      // `cm guard --install` put trauma_guard.py here: it stays the guard, ours is not added (or is taken out).
      if (found.length > 0) {
        const kept = removeOurs(spec, list, found);
        if (kept.length > 0) hooks[event.event] = kept;
        else delete hooks[event.event];
        changed = true;
      }
      entries.push({ ...report, status: found.length > 0 ? "removed" : "skipped", reason: "trauma_guard.py (cm guard --install) already guards Bash commands here" });
      continue;
    }

    const handler = hookHandler(spec, event, command);
    if (found.length === 1) {
      const f = found[0]!;
      const sameMatcher = spec.format !== "grouped" || (event.matcher === undefined ? f.matcher === undefined || f.matcher === "" : f.matcher === event.matcher);
      if (sameMatcher && jsonEqual(f.handler, handler)) {
        entries.push({ ...report, status: "unchanged" });
        continue;
      }
    }
    const kept = removeOurs(spec, list, found);
    const item = spec.format === "grouped" ? { ...(event.matcher !== undefined ? { matcher: event.matcher } : {}), hooks: [handler] } : handler;
    hooks[event.event] = [...kept, item];
    changed = true;
    entries.push({ ...report, status: found.length > 0 ? "updated" : "added" });
  }

  if (!changed) return { action: "unchanged", content: text ?? "", entries };
  const next: Record<string, unknown> = { ...root };
  if (spec.format === "cursor" && next.version === undefined && !uninstall) next.version = 1;
  if (Object.keys(hooks).length === 0 && uninstall) delete next.hooks;
  else next.hooks = hooks;
  const content = formatJson(next, detectJsonLayout(text));
  if (text !== null && content === text) return { action: "unchanged", content: text, entries };
  return { action: uninstall ? "removed" : text === null ? "created" : "updated", content, entries };
}
