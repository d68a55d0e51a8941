// Fakes for the native source tests: a small JSONL session format read by a spy reader, and a
// discovery function over the readers' roots. Independent of the real readers.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

import type { AgentSlug, DiscoveryEnv, NormalizedConversation, SessionFileRef, SessionReader } from "../src/model.js";
import type { FoundSession } from "../src/native/index-store.js";

/**
 * A fake session file: line 1 `{"meta":{workspace,title}}`, then one message per line
 * `{"role","content","ts"}` (ts in ms). Lines that are not JSON are skipped.
 */
export interface FakeMessage {
  role: string;
  content: string;
  ts?: number;
}

export interface FakeSession {
  workspace?: string;
  title?: string;
  messages: FakeMessage[];
}

export function sessionText(session: FakeSession): string {
  const lines = [JSON.stringify({ meta: { workspace: session.workspace ?? null, title: session.title ?? null } })];
  for (const m of session.messages) lines.push(JSON.stringify(m));
  return `${lines.join("\n")}\n`;
}

/** Writes a session file; `mtimeMs` pins the file time (so a rewrite is seen as a change). */
export function writeSession(path: string, session: FakeSession, mtimeMs?: number): void {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, sessionText(session));
  if (mtimeMs !== undefined) utimesSync(path, mtimeMs / 1000, mtimeMs / 1000);
}

export interface SpyReader extends SessionReader {
  /** Paths passed to `read`, in order. */
  reads: string[];
}

export function fakeReader(agent: AgentSlug, root: string, options: { delayMs?: number } = {}): SpyReader {
  const reads: string[] = [];
  return {
    agent,
    reads,
    defaultRoots: () => [root],
    async discover(dir: string): Promise<SessionFileRef[]> {
      const out: SessionFileRef[] = [];
      const walk = (d: string): void => {
        let names: string[];
        try {
          names = readdirSync(d);
        } catch {
          return;
        }
        for (const name of names.sort()) {
          const p = join(d, name);
          const info = statSync(p);
          if (info.isDirectory()) walk(p);
          else if (name.endsWith(".jsonl")) out.push({ agent, path: p, mtimeMs: info.mtimeMs, size: info.size });
        }
      };
      walk(dir);
      return out;
    },
    async read(ref: SessionFileRef): Promise<NormalizedConversation[]> {
      reads.push(ref.path);
      if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs));
      const text = await readFile(ref.path, "utf8");
      let workspace: string | null = null;
      let title: string | null = null;
      const messages: NormalizedConversation["messages"] = [];
      text.split("\n").forEach((line, i) => {
        let rec: Record<string, unknown>;
        try {
          rec = JSON.parse(line) as Record<string, unknown>;
        } catch {
          return;
        }
        if (rec.meta && typeof rec.meta === "object") {
          const meta = rec.meta as { workspace?: string | null; title?: string | null };
          workspace = meta.workspace ?? null;
          title = meta.title ?? null;
          return;
        }
        messages.push({
          idx: messages.length,
          role: String(rec.role),
          author: null,
          createdAt: typeof rec.ts === "number" ? rec.ts : null,
          content: String(rec.content),
          lineNumber: i + 1,
        });
      });
      if (messages.length === 0) return [];
      const times = messages.map((m) => m.createdAt).filter((t): t is number => t !== null);
      return [
        {
          agent,
          externalId: null,
          title,
          workspace,
          sourcePath: ref.path,
          startedAt: times.length > 0 ? Math.min(...times) : null,
          endedAt: times.length > 0 ? Math.max(...times) : null,
          messages,
        },
      ];
    },
  };
}

/** Discovery over each reader's default roots (what `discoverSessions` does, minus the extras). */
export async function fakeDiscover(readers: SessionReader[], ctx: DiscoveryEnv): Promise<FoundSession[]> {
  const out: FoundSession[] = [];
  const seen = new Set<string>();
  for (const reader of readers) {
    for (const root of reader.defaultRoots(ctx)) {
      for (const ref of await reader.discover(root)) {
        if (seen.has(ref.path)) continue;
        seen.add(ref.path);
        out.push({ reader, ref });
      }
    }
  }
  return out;
}

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export const discoveryEnv = (home: string): DiscoveryEnv => ({ home, env: {}, platform: "linux" });
