import { extname, resolve } from "node:path";
import type { Command } from "commander";
import {
  AppError,
  playbookAddOperation,
  playbookExportOperation,
  playbookGetOperation,
  playbookImportOperation,
  playbookListOperation,
  playbookRemoveOperation,
  inputLimitsOf,
  type PlaybookAddBatchResult,
  type PlaybookAddSingleResult,
  type PlaybookGetResult,
  type PlaybookRemoveResult,
} from "@cass-memory/core";
import { emit, run, type CliContext } from "../cli-context.js";
import { beginWithFormat, reportTokenStats } from "../formats.js";
import { registerBootstrap } from "./bootstrap.js";
import { registerPlaybookPin } from "./playbook-pin.js";
import { bold, dim, fixed, green, icon, layoutWidth, tildify, wrap, yellow } from "../human.js";
import { ask, isInteractive, readInputFile, readStdin } from "../options.js";
import { writeStderr, writeStdout } from "../output.js";

/**
 * `cm playbook list|get|add|remove|export|import` and the top-level aliases `ls`, `add`, `rm`
 * (reference §1.5.5). Each subcommand is defined once by a `define*` function that both the group
 * and the alias use.
 */

type Bullet = { id: string; content: string; category: string } & Record<string, unknown>;

export function registerPlaybook(program: Command, ctx: CliContext): void {
  const cli = ctx.cliName;
  const group = program
    .command("playbook")
    .description("Manage the playbook: list, get, add, remove, export, import, pin, unpin, category")
    .addHelpText(
      "after",
      `\nExamples:\n  ${cli} playbook list --json\n  ${cli} playbook add "Run tests before committing" --category workflow\n  ${cli} playbook remove b-abc123 --dry-run\n  ${cli} playbook export > playbook.yaml\n`,
    );
  defineList(group.command("list").alias("ls"), ctx, true);
  defineGet(group.command("get"), ctx);
  defineAdd(group.command("add"), ctx);
  defineRemove(group.command("remove"), ctx);
  defineExport(group.command("export"), ctx);
  defineImport(group.command("import"), ctx);
  registerBootstrap(group, ctx);
  registerPlaybookPin(group, ctx);

  defineList(program.command("ls"), ctx, false);
  defineAdd(program.command("add"), ctx);
  defineRemove(program.command("rm"), ctx);
}

// ---------------------------------------------------------------------------------------------- list

function defineList(cmd: Command, ctx: CliContext, full: boolean): void {
  cmd
    .description("List active playbook rules")
    .option("--category <cat>", "only rules of this category (exact match)")
    .option("--all", "include deprecated rules and rules outside their validity window")
    .option("-j, --json", "output a JSON envelope");
  if (full) cmd.option("--format <format>", "output format: json or toon (default from CM_OUTPUT_FORMAT=toon)").option("--stats", "print the JSON and TOON token counts of the output on stderr");
  cmd
    .addHelpText("after", `\nExamples:\n  ${ctx.cliName} playbook list\n  ${ctx.cliName} ls --category testing --json\n`)
    .action(async (flags: { category?: string; all?: boolean; json?: boolean; format?: string; stats?: boolean }) => {
      beginWithFormat(ctx, playbookListOperation.command, full ? flags : { ...(flags.json ? { json: true } : {}) });
      const result = await run(ctx, playbookListOperation, {
        ...(flags.category !== undefined ? { category: flags.category } : {}),
        ...(flags.all ? { all: true } : {}),
      });
      reportTokenStats(ctx, flags, result);
      emit(ctx, result, () => renderList(result.bullets as Bullet[], ctx.cliName));
    });
}

function renderList(bullets: Bullet[], cli: string): string[] {
  const width = layoutWidth();
  if (bullets.length === 0) {
    return ["PLAYBOOK RULES (0):", "  (No active rules found)", dim(`  ${icon.tip()}Add one: ${cli} playbook add "<rule>" --category <category>`)];
  }
  const lines = [bold(`PLAYBOOK RULES (${bullets.length}):`)];
  for (const b of bullets) {
    const helpful = Number(b.helpfulCount ?? 0);
    const harmful = Number(b.harmfulCount ?? 0);
    const pinned = b.pinned === true ? ` ${icon.pin()}` : "";
    lines.push(
      `[${b.id}] ${b.category}/${String(b.scope ?? "global")} ${icon.bullet()} ${String(b.kind ?? "rule")} ${icon.bullet()} ${String(b.maturity ?? "candidate")} ${icon.bullet()} +${helpful}/-${harmful}${pinned}`,
    );
    const body = wrap(b.content, width, "    ");
    lines.push(...body.slice(0, 2));
    if (body.length > 2) lines[lines.length - 1] += " …";
  }
  return lines;
}

// ----------------------------------------------------------------------------------------------- get

function defineGet(cmd: Command, ctx: CliContext): void {
  cmd
    .description("Show one rule with its scores")
    .argument("<id>", "the rule's id")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText("after", `\nExamples:\n  ${ctx.cliName} playbook get b-abc123 --json\n`)
    .action(async (id: string, flags: { json?: boolean }) => {
      ctx.begin(playbookGetOperation.command, Boolean(flags.json));
      const result = await run(ctx, playbookGetOperation, { id });
      emit(ctx, result, () => renderGet(result, ctx.cliName));
    });
}

function renderGet(result: PlaybookGetResult, cli: string): string[] {
  const b = result.bullet as PlaybookGetResult["bullet"] & Record<string, unknown>;
  const helpful = Number(b.helpfulCount ?? 0);
  const harmful = Number(b.harmfulCount ?? 0);
  const list = (v: unknown) => (Array.isArray(v) && v.length > 0 ? v.join(", ") : "(none)");
  const lines = [bold(`BULLET: ${b.id}`), "", "Content:", ...wrap(b.content, layoutWidth(), "  "), "", "Details:"];
  lines.push(`  Category: ${b.category}`, `  Kind: ${String(b.kind ?? "-")}`, `  Scope: ${String(b.scope ?? "-")}`);
  lines.push(`  Maturity: ${String(b.maturity ?? "-")}`, `  State: ${String(b.state ?? "-")}`, `  Created: ${String(b.createdAt ?? "-")} (${b.ageDays} days ago)`);
  lines.push("", "Scores:", `  Effective: ${fixed(b.effectiveScore, 2)}`, `  Raw: ${helpful - 4 * harmful}`);
  lines.push(`  Helpful: ${helpful} (decayed ${fixed(b.decayedHelpful, 2)})`, `  Harmful: ${harmful} (decayed ${fixed(b.decayedHarmful, 2)})`);
  lines.push("", `Sources: ${list(b.sourceSessions)}`, `Agents: ${list(b.sourceAgents)}`, `Tags: ${list(b.tags)}`);
  const evidence = Array.isArray(b.evidence) ? (b.evidence as Array<{ type: string; uri: string; note?: string }>) : [];
  for (const e of evidence) lines.push(`Evidence: ${e.type}:${e.uri}${e.note ? ` (${e.note})` : ""}`);
  const v = b.verification as { type: string; pattern: string; path?: string; mode?: string } | undefined;
  if (v) lines.push(`Verification: ${v.type === "regex" ? `/${v.pattern}/ in ${v.path ?? "?"}` : `file ${v.pattern}`}${v.mode === "absent" ? " must be absent" : " must exist"}`);
  if (typeof b.validFrom === "string" || typeof b.validTo === "string") {
    lines.push(`Valid: ${typeof b.validFrom === "string" ? b.validFrom : "-"} → ${typeof b.validTo === "string" ? b.validTo : "-"}`);
  }
  if (b.deprecated === true) lines.push("", yellow(`Status: DEPRECATED${typeof b.deprecationReason === "string" ? ` (${b.deprecationReason})` : ""}`));
  lines.push("", dim(`${icon.tip()}See provenance: ${cli} why ${b.id}`));
  return lines;
}

// ----------------------------------------------------------------------------------------------- add

interface AddFlags {
  category?: string;
  file?: string;
  session?: string;
  tag?: string[];
  evidence?: string[];
  verifyFile?: string;
  verifyRegex?: string;
  verifyAbsent?: boolean;
  validFrom?: string;
  validTo?: string;
  repo?: boolean;
  json?: boolean;
}

const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

/**
 * `playbook add` / `add`, and `remember` (same flags and result; `remember` is the verb other
 * memory tools use). Provenance flags (evidence, verification, validity) are ours.
 */
export function defineAdd(cmd: Command, ctx: CliContext, op: typeof playbookAddOperation = playbookAddOperation): void {
  const cli = ctx.cliName;
  const verb = op.command === "remember" ? "remember" : "playbook add";
  cmd
    .description(
      op.command === "remember"
        ? "Remember a rule, with optional evidence, a verification check and a validity window"
        : "Add a rule to the global playbook (or many with --file)",
    )
    .argument("[content]", "the rule")
    .option("--category <cat>", "category (default: general)")
    .option("--file <path>", "JSON array of {content, category?} to add ('-' = stdin)")
    .option("--session <path>", "session the rule comes from")
    .option("--tag <tag>", "tag the rule (repeatable)", collect)
    .option("--evidence <type:uri[:note]>", "where the rule comes from: session|code|artifact|log|ticket|doc|assumption (repeatable)", collect)
    .option("--verify-file <path>", "check in context that this file exists (relative to the workspace)")
    .option("--verify-regex <path:pattern>", "check in context that the file matches the regular expression")
    .option("--verify-absent", "the verification passes when the file / pattern is absent instead")
    .option("--valid-from <date>", "the rule applies from this date (YYYY-MM-DD, ISO, or Nd from now)")
    .option("--valid-to <date>", "the rule expires after this date (YYYY-MM-DD, ISO, or Nd from now)")
    .option("--repo", "add to the repository's .cass/playbook.yaml instead of the global playbook")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText(
      "after",
      `\nExamples:\n  ${cli} ${verb} "Run the linter before pushing" --category workflow\n  ${cli} ${verb} "Sessions use the rotating signing key in src/auth/keys.ts" --evidence ticket:SEC-12 --verify-file src/auth/keys.ts\n  ${cli} ${verb} "Node 20 is the CI image" --valid-to 2027-04-30 --json\n  echo '[{"content":"Prefer pnpm scripts"}]' | ${cli} ${verb} --file - --json\n`,
    )
    .action(async (content: string | undefined, flags: AddFlags) => {
      ctx.begin(op.command, Boolean(flags.json));
      const common = {
        ...(flags.category !== undefined ? { category: flags.category } : {}),
        ...(flags.session !== undefined ? { session: flags.session } : {}),
        ...(flags.repo ? { repo: true } : {}),
      };
      if (flags.file !== undefined) {
        const batch = await readBatch(flags.file, await fileLimit(ctx));
        const result = (await run(ctx, op, { ...common, batch })) as PlaybookAddBatchResult;
        emit(ctx, result, () => renderBatch(result));
        return;
      }
      const result = (await run(ctx, op, {
        ...common,
        ...(content !== undefined ? { content } : {}),
        ...(flags.tag !== undefined ? { tags: flags.tag } : {}),
        ...(flags.evidence !== undefined ? { evidence: flags.evidence } : {}),
        ...(flags.verifyFile !== undefined ? { verifyFile: flags.verifyFile } : {}),
        ...(flags.verifyRegex !== undefined ? { verifyRegex: flags.verifyRegex } : {}),
        ...(flags.verifyAbsent ? { verifyAbsent: true } : {}),
        ...(flags.validFrom !== undefined ? { validFrom: flags.validFrom } : {}),
        ...(flags.validTo !== undefined ? { validTo: flags.validTo } : {}),
      })) as PlaybookAddSingleResult;
      emit(ctx, result, () => {
        const b = result.bullet as PlaybookAddSingleResult["bullet"] & Record<string, unknown>;
        const lines = [green(`${icon.success()} Added bullet ${b.id}`), dim(`  ${b.category}: ${b.content}`)];
        if (result.target === "repo") lines.push(dim(`  in ${tildify(result.targetPath)}`));
        const evidence = Array.isArray(b.evidence) ? (b.evidence as Array<{ type: string; uri: string }>) : [];
        if (evidence.length > 0) lines.push(dim(`  Evidence: ${evidence.map((e) => `${e.type}:${e.uri}`).join(", ")}`));
        const v = b.verification as { type: string; pattern: string; path?: string; mode?: string } | undefined;
        if (v) lines.push(dim(`  Verified in context: ${v.type === "regex" ? `/${v.pattern}/ in ${v.path}` : v.pattern}${v.mode === "absent" ? " (must be absent)" : ""}`));
        if (typeof b.validTo === "string") lines.push(dim(`  Valid until: ${b.validTo}`));
        return lines;
      });
    });
}

/** inputLimits.fileBytes of the configuration. */
async function fileLimit(ctx: CliContext): Promise<number> {
  return inputLimitsOf((await ctx.runtime()).config).fileBytes;
}

/** The batch text (stdin for `-`), bounded by inputLimits.fileBytes; a missing file is FILE_NOT_FOUND. */
async function readBatch(file: string, maxBytes: number): Promise<{ source: string; text: string }> {
  return { source: file, text: file === "-" ? await readStdin(maxBytes) : await readInputFile(resolve(file), maxBytes) };
}

function renderBatch(r: PlaybookAddBatchResult): string[] {
  const lines = [bold(`BATCH ADD RESULTS (${r.target} playbook)`)];
  if (r.added.length > 0) {
    lines.push(green(`${icon.success()} Added ${r.added.length} rule${r.added.length === 1 ? "" : "s"}:`));
    for (const a of r.added) lines.push(`  [${a.id}] ${a.category}: ${a.content}`);
  }
  if (r.skipped.length > 0) {
    lines.push(yellow(`${icon.warning()} Skipped ${r.skipped.length}:`));
    for (const s of r.skipped) lines.push(`  ${s.content} (${s.reason})`);
  }
  if (r.failed.length > 0) {
    lines.push(`${icon.failure()} Failed ${r.failed.length}:`);
    for (const f of r.failed) lines.push(`  ${f.content}: ${f.error}`);
  }
  const s = r.summary;
  lines.push(`Summary: ${s.succeeded} added, ${s.skipped} skipped, ${s.failed} failed (${s.total} total)`);
  return lines;
}

// -------------------------------------------------------------------------------------------- remove

interface RemoveFlags {
  hard?: boolean;
  yes?: boolean;
  dryRun?: boolean;
  reason?: string;
  json?: boolean;
}

function defineRemove(cmd: Command, ctx: CliContext): void {
  const cli = ctx.cliName;
  cmd
    .description("Deprecate a rule (or delete it permanently with --hard)")
    .argument("<id>", "the rule's id")
    .option("--hard", "delete permanently instead of deprecating")
    .option("-y, --yes", "confirm --hard without prompting")
    .option("--dry-run", "show what would change without changing anything")
    .option("--reason <text>", "why the rule is removed")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText(
      "after",
      `\nExamples:\n  ${cli} playbook remove b-abc123 --reason "outdated"\n  ${cli} rm b-abc123 --dry-run --json\n  ${cli} playbook remove b-abc123 --hard --yes\n`,
    )
    .action(async (id: string, flags: RemoveFlags) => {
      const json = Boolean(flags.json);
      ctx.begin(playbookRemoveOperation.command, json);
      let yes = Boolean(flags.yes);
      if (flags.hard && !yes && !flags.dryRun && !json && isInteractive()) {
        // Make sure the bullet exists before asking (the dry run raises BULLET_NOT_FOUND otherwise).
        await run(ctx, playbookRemoveOperation, { id, hard: true, dryRun: true });
        yes = (await ask(`Type DELETE to permanently remove ${id}: `)) === "DELETE";
      }
      const result = await run(ctx, playbookRemoveOperation, {
        id,
        hard: Boolean(flags.hard),
        yes,
        dryRun: Boolean(flags.dryRun),
        ...(flags.reason !== undefined ? { reason: flags.reason } : {}),
      });
      emit(ctx, result, () => renderRemove(result));
    });
}

function renderRemove(r: PlaybookRemoveResult): string[] {
  if ("plan" in r) {
    const p = r.plan;
    return [
      yellow(bold("DRY RUN - No changes will be made")),
      `Action: ${p.action.toUpperCase()} bullet`,
      `Bullet: ${p.bulletId} (${p.category}, +${p.helpfulCount}/-${p.harmfulCount})`,
      `File: ${tildify(p.path)}`,
      `Preview: ${p.preview}`,
      `Would: ${p.wouldChange}`,
      `To apply: ${p.applyCommand}`,
    ];
  }
  if (r.action === "deleted") return [green(`${icon.success()} Deleted bullet ${r.id} from ${tildify(r.path)}`), dim(`  ${r.preview}`)];
  return [green(`${icon.success()} Deprecated bullet ${r.id}`)];
}

// -------------------------------------------------------------------------------------------- export

function defineExport(cmd: Command, ctx: CliContext): void {
  cmd
    .description("Export the merged playbook (YAML by default)")
    .option("-j, --json", "output a JSON envelope")
    .option("--yaml", "output YAML (the default)")
    .option("--all", "include deprecated rules")
    .addHelpText("after", `\nExamples:\n  ${ctx.cliName} playbook export > team-playbook.yaml\n  ${ctx.cliName} playbook export --all --json\n`)
    .action(async (flags: { json?: boolean; yaml?: boolean; all?: boolean }) => {
      ctx.begin(playbookExportOperation.command, Boolean(flags.json));
      const result = await run(ctx, playbookExportOperation, { all: Boolean(flags.all) });
      if (ctx.current.json) {
        emit(ctx, result, () => null);
        return;
      }
      const { toYaml } = await import("@cass-memory/runtime");
      const text = toYaml(result);
      writeStdout(text.endsWith("\n") ? text : `${text}\n`);
    });
}

// -------------------------------------------------------------------------------------------- import

function defineImport(cmd: Command, ctx: CliContext): void {
  cmd
    .description("Import rules from a file written by export (JSON or YAML)")
    .argument("<file>", "the file to import")
    .option("--replace", "replace rules whose id already exists")
    .option("--repo", "import into <git root>/.cass/playbook.yaml")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText("after", `\nExamples:\n  ${ctx.cliName} playbook import team-playbook.yaml\n  ${ctx.cliName} playbook import rules.json --repo --json\n`)
    .action(async (file: string, flags: { replace?: boolean; repo?: boolean; json?: boolean }) => {
      ctx.begin(playbookImportOperation.command, Boolean(flags.json));
      const path = resolve(file);
      const data = await readStructured(path, await fileLimit(ctx));
      const result = await run(ctx, playbookImportOperation, {
        file: path,
        data,
        replace: Boolean(flags.replace),
        repo: Boolean(flags.repo),
      });
      if (!ctx.current.json && result.validationWarnings) {
        for (const w of result.validationWarnings) writeStderr(`${icon.warning()} ${w}`);
      }
      emit(ctx, result, () => [
        green(`${icon.success()} Imported ${tildify(result.file)} into the ${result.target} playbook`),
        `  ${result.added} added, ${result.skipped} skipped, ${result.updated} updated`,
      ]);
    });
}

/** Reads and parses a JSON or YAML file (by extension, else by sniffing the first character). */
async function readStructured(path: string, maxBytes: number): Promise<unknown> {
  const text = await readInputFile(path, maxBytes);
  const ext = extname(path).toLowerCase();
  const asJson = ext === ".json" || (ext !== ".yaml" && ext !== ".yml" && /^\s*[[{]/.test(text));
  try {
    if (asJson) return JSON.parse(text) as unknown;
    const { fromYaml } = await import("@cass-memory/runtime");
    return fromYaml(text, path);
  } catch (error) {
    throw new AppError("INVALID_INPUT", `Parse error: ${(error as Error).message}`, {
      hint: "Import a JSON or YAML file written by 'cm playbook export'.",
      details: { path },
      cause: error,
    });
  }
}
