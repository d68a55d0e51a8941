import { existsSync } from "node:fs";
import { join } from "node:path";
import { isActiveBullet, toAppError, type Layer, type Store } from "@cass-memory/core";
import { emit, type CliContext } from "../cli-context.js";
import { bold, dim, tildify, yellow } from "../human.js";
import { VERSION } from "../version.js";

/**
 * `cm --info` (reference §1.1): versions, paths, playbook sizes and the history source, for bug
 * reports and for checking which files a run would use. Intercepted before commander, wherever
 * the flag appears. A broken configuration or playbook is reported in the data, not raised.
 */

export interface PlaybookInfo {
  path: string;
  exists: boolean;
  bullets: number;
  active: number;
  error?: string;
}

export interface InfoData {
  version: string;
  cliName: string;
  node: string;
  platform: string;
  arch: string;
  globalDir: string;
  configPath: string;
  configExists: boolean;
  repoRoot: string | null;
  repoDir: string | null;
  playbooks: { global: PlaybookInfo | null; repo: PlaybookInfo | null };
  episodic: { source: string | null };
  configError?: string;
}

async function playbookInfo(store: Store, layer: Layer, path: string): Promise<PlaybookInfo> {
  try {
    const playbook = await store.readPlaybook(layer);
    if (playbook === null) return { path, exists: existsSync(path), bullets: 0, active: 0 };
    return { path, exists: true, bullets: playbook.bullets.length, active: playbook.bullets.filter(isActiveBullet).length };
  } catch (error) {
    return { path, exists: existsSync(path), bullets: 0, active: 0, error: toAppError(error).message };
  }
}

export async function collectInfo(ctx: CliContext): Promise<InfoData> {
  const base = {
    version: VERSION,
    cliName: ctx.cliName,
    node: process.version,
    platform: process.platform,
    arch: process.arch,
  };
  const mod = await import("@cass-memory/runtime");
  try {
    const rt = await ctx.runtime();
    const { store } = rt.deps;
    const repoPlaybook = rt.paths.repoDir !== null ? join(rt.paths.repoDir, "playbook.yaml") : null;
    return {
      ...base,
      globalDir: rt.paths.globalDir,
      configPath: rt.paths.configPath,
      configExists: existsSync(rt.paths.configPath),
      repoRoot: rt.paths.repoRoot,
      repoDir: rt.paths.repoDir,
      playbooks: {
        global: await playbookInfo(store, "global", rt.paths.globalPlaybook),
        repo: repoPlaybook !== null ? await playbookInfo(store, "repo", repoPlaybook) : null,
      },
      episodic: { source: rt.deps.episodic.name },
    };
  } catch (error) {
    // The configuration could not be loaded: report the paths we can still work out.
    const globalDir = mod.resolveGlobalDir();
    const repoRoot = mod.findGitRoot(process.cwd());
    const configPath = join(globalDir, "config.json");
    return {
      ...base,
      globalDir,
      configPath,
      configExists: existsSync(configPath),
      repoRoot,
      repoDir: repoRoot !== null ? join(repoRoot, ".cass") : null,
      playbooks: { global: null, repo: null },
      episodic: { source: null },
      configError: toAppError(error).message,
    };
  }
}

function describePlaybook(label: string, p: PlaybookInfo | null): string {
  if (p === null) return `  ${label.padEnd(7)} ${dim("(unknown)")}`;
  const state = p.error !== undefined ? yellow(`error: ${p.error}`) : p.exists ? `${p.bullets} rules (${p.active} active)` : dim("not created yet");
  return `  ${label.padEnd(7)} ${tildify(p.path)}  ${state}`;
}

export async function runInfo(ctx: CliContext, json: boolean): Promise<void> {
  ctx.begin("info", json);
  const data = await collectInfo(ctx);
  emit(ctx, data, () => {
    const lines = [
      bold(`cass-memory (${data.cliName}) ${data.version}`),
      "",
      `Node:        ${data.node} (${data.platform} ${data.arch})`,
      `Global dir:  ${tildify(data.globalDir)}`,
      `Config:      ${tildify(data.configPath)}${data.configExists ? "" : dim(" (not created yet)")}`,
      `Repository:  ${data.repoRoot !== null ? `${tildify(data.repoRoot)} (.cass: ${data.repoDir !== null && existsSync(data.repoDir) ? "present" : "not created"})` : dim("not in a git repository")}`,
      "Playbooks:",
      describePlaybook("global", data.playbooks.global),
    ];
    if (data.repoRoot !== null) lines.push(describePlaybook("repo", data.playbooks.repo));
    lines.push(`History:     ${data.episodic.source ?? dim("(unknown)")}`);
    if (data.configError !== undefined) lines.push("", yellow(`Configuration error: ${data.configError}`));
    if (!data.configExists) lines.push("", `Get started: ${data.cliName} init`);
    return lines;
  });
}
