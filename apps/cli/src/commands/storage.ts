import type { Command } from "commander";
import { AppError } from "@cass-memory/core";
import type { MigrateProgressEvent, MigrateStorageResult, StorageStatus } from "@cass-memory/runtime";
import { emit, type CliContext } from "../cli-context.js";
import { bold, dim, green, icon, tildify, wrap, yellow } from "../human.js";
import { oneOf } from "../options.js";
import { writeStderr } from "../output.js";

/**
 * `cm storage status` and `cm storage migrate --to yaml|sqlite|postgres`: which store holds the memory,
 * and moving it from one backend to another (copy, verify, switch; see @cass-memory/runtime).
 */

/** Progress lines start once a migration has run this long (or at once with --verbose). */
const PROGRESS_AFTER_MS = 1000;

export function registerStorage(program: Command, ctx: CliContext): void {
  const cli = ctx.cliName;
  const group = program
    .command("storage")
    .description("Storage backend (yaml, sqlite or postgres): status, and migrating the memory between them")
    .addHelpText(
      "after",
      `\nExamples:\n  ${cli} storage status\n  ${cli} storage migrate --to sqlite --dry-run\n  ${cli} storage migrate --to sqlite\n  ${cli} storage migrate --to yaml --json\n\nThe backend is storage.backend in config.json (default yaml), or CASS_MEMORY_STORAGE.\nPostgreSQL takes its URL from CASS_MEMORY_DATABASE_URL or storage.postgres.url.\n`,
    );

  group
    .command("status")
    .description("The backend in use and why, and what each backend holds per layer")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText("after", `\nExamples:\n  ${cli} storage status\n  ${cli} storage status --json\n`)
    .action(async (flags: { json?: boolean }) => {
      ctx.begin("storage:status", Boolean(flags.json));
      const rt = await ctx.runtime();
      const { storageStatus } = await import("@cass-memory/runtime");
      const status = await storageStatus(rt);
      emit(ctx, status, () => renderStatus(status));
    });

  group
    .command("migrate")
    .description("Copy the memory to another backend, verify it, and switch storage.backend to it")
    .option("--to <backend>", "the backend to move to: sqlite, yaml or postgres (required)")
    .option("--dry-run", "show what would be copied and moved, change nothing")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText(
      "after",
      [
        "",
        "Examples:",
        `  ${cli} storage migrate --to sqlite --dry-run`,
        `  ${cli} storage migrate --to sqlite`,
        `  ${cli} storage migrate --to yaml --json`,
        "",
        "The source is only read. The copy is built in .migrate-<backend>/ staging directories,",
        "verified section by section, then installed; the target's earlier files are moved to",
        "backups/storage-<timestamp>/ and storage.backend is written to config.json. An interrupted",
        "run continues where it stopped when started again. Stop other cm processes (agents,",
        `'${cli} serve') first: a process started before the switch keeps using the old backend.`,
        "",
      ].join("\n"),
    )
    .action(async (flags: { to?: string; dryRun?: boolean; json?: boolean }) => {
      ctx.begin("storage:migrate", Boolean(flags.json));
      if (flags.to === undefined || flags.to.trim() === "") {
        throw new AppError("MISSING_REQUIRED", "--to <backend> is required: sqlite, yaml or postgres.", {
          hint: `${cli} storage migrate --to sqlite --dry-run`,
          details: { field: "to", allowed: ["sqlite", "yaml", "postgres"] },
        });
      }
      const to = oneOf("to", flags.to, ["sqlite", "yaml", "postgres"] as const);
      const rt = await ctx.runtime();
      const { migrateStorage } = await import("@cass-memory/runtime");
      const result = await migrateStorage(rt, { to, dryRun: Boolean(flags.dryRun), onProgress: progressPrinter(ctx.verbose) });
      emit(ctx, result, () => renderMigrate(result, cli));
    });
}

/**
 * Progress on stderr: quiet for short runs, one line per section once the run takes a while. The
 * test hook CASS_MEMORY_TEST_MIGRATE_KILL_AFTER=<n> kills the process (SIGKILL) after its n-th
 * copied section, to prove that an interrupted migration resumes.
 */
function progressPrinter(verbose: boolean): (event: MigrateProgressEvent) => void {
  const started = Date.now();
  const killAfter = Number.parseInt(process.env.CASS_MEMORY_TEST_MIGRATE_KILL_AFTER ?? "", 10);
  let copied = 0;
  return (event) => {
    const show = verbose || Date.now() - started >= PROGRESS_AFTER_MS;
    if (event.phase === "copy") {
      copied += 1;
      if (show) writeStderr(`[cm] storage migrate: copied ${event.index}/${event.total} ${event.key} (${event.records} record${event.records === 1 ? "" : "s"})`);
      if (Number.isInteger(killAfter) && killAfter > 0 && copied >= killAfter) process.kill(process.pid, "SIGKILL");
    } else if (event.phase === "verify") {
      if (show) writeStderr(`[cm] storage migrate: verified ${event.index}/${event.total} ${event.key}${event.equal ? "" : " — DIFFERS"}`);
    } else if (show) {
      writeStderr(`[cm] storage migrate: ${event.message}`);
    }
  };
}

function layerLine(name: string, present: boolean, detail: string, inUse: boolean): string {
  const mark = inUse ? bold("in use") : present ? yellow("not used") : dim("none");
  return `    ${name.padEnd(7)} ${mark.padEnd(8)} ${detail}`;
}

function renderStatus(s: StorageStatus): string[] {
  const lines = [bold("Storage"), "", `  Backend: ${bold(s.backend)} (${s.reason})`, `  Config:  ${tildify(s.configPath)}`, ""];
  for (const layer of s.layers) {
    lines.push(`  ${bold(layer.layer === "global" ? "Global layer" : "Repository layer")} ${dim(tildify(layer.dir))}`);
    const y = layer.yaml;
    const q = layer.sqlite;
    const yDetail = y.present
      ? `${y.files.length} file(s)${y.bullets !== null ? `, ${y.bullets} bullet(s)` : ""}${y.error ? ` — ${y.error}` : ""}`
      : dim(`no files (${tildify(y.path ?? "")})`);
    const qDetail = q.present
      ? `${tildify(q.path ?? "")}${q.schemaVersion != null ? `, schema v${q.schemaVersion}` : ""}${q.bullets !== null ? `, ${q.bullets} bullet(s)` : ""}${q.error ? ` — ${q.error}` : ""}`
      : dim(`no database (${tildify(q.path ?? "")})`);
    lines.push(layerLine("yaml", y.present, yDetail, s.backend === "yaml"));
    lines.push(layerLine("sqlite", q.present, qDetail, s.backend === "sqlite"));
    const p = layer.postgres;
    if (p !== undefined) {
      const pDetail = p.present ? `${p.path ?? ""}${p.bullets !== null ? `, ${p.bullets} bullet(s)` : ""}` : dim(`no data (${p.path ?? ""})`);
      lines.push(layerLine("postgres", p.present, pDetail, s.backend === "postgres"));
    }
    lines.push("");
  }
  if (s.postgres !== null) {
    const pg = s.postgres;
    const state = pg.reachable ? `reachable, schema v${pg.schemaVersion ?? "?"}` : yellow(`unreachable${pg.error !== undefined ? ` — ${pg.error}` : ""}`);
    lines.push(`  PostgreSQL: ${pg.url} (${pg.urlSource === "env" ? "CASS_MEMORY_DATABASE_URL" : "storage.postgres.url"}; schema ${pg.schema}): ${state}`, "");
  }
  if (s.migration.last !== null) {
    const last = s.migration.last;
    lines.push(`  Last migration: ${last.from} → ${last.to} at ${last.at}${last.sourceChangedSince ? yellow(` (the ${last.from} data changed since)`) : ""}`);
    lines.push("");
  }
  for (const hint of s.hints) lines.push(...wrap(`${icon.tip()}${hint}`, undefined, "  "));
  return lines;
}

function renderMigrate(r: MigrateStorageResult, cli: string): string[] {
  if (r.status === "unchanged") return [`${icon.success()} ${r.message}`];
  const lines: string[] = [];
  if (r.status === "planned") {
    lines.push(bold(`Dry run: ${r.from} → ${r.to}`), "");
    for (const s of r.plan ?? []) lines.push(`  ${s.key.padEnd(32)} ${String(s.records).padStart(7)} record(s)${s.skipped > 0 ? yellow(`, ${s.skipped} unreadable line(s) not copied`) : ""}`);
    for (const b of r.backups) lines.push("", `  The ${b.layer} layer's ${r.to} files would be moved to ${tildify(b.dir)}: ${b.files.join(", ")}`);
    lines.push("", ...wrap(r.message), "", dim(`Run '${cli} storage migrate --to ${r.to}' to migrate.`));
    return lines;
  }
  lines.push(green(`${icon.success()} ${r.message}`));
  lines.push(
    `  ${r.sections.copied} section(s) copied${r.sections.alreadyCompleted > 0 ? `, ${r.sections.alreadyCompleted} copied by the interrupted run` : ""}, ${r.sections.records} record(s)`,
  );
  if (r.restarted !== undefined) lines.push(dim(`  Started over: ${r.restarted}.`));
  for (const i of r.installed) if (i.files.length > 0) lines.push(`  ${i.layer}: ${i.files.map(tildify).join(", ")}`);
  for (const b of r.backups) lines.push(`  Earlier ${r.to} files of the ${b.layer} layer moved to ${tildify(b.dir)}`);
  for (const w of r.warnings) lines.push(yellow(`${icon.warning()} ${w}`));
  return lines;
}
