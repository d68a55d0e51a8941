/**
 * Aider: `<project>/.aider.chat.history.md` (found up to depth 5 under the roots) and
 * `~/.aider.chat.history.md`; `CASS_AIDER_DATA_ROOT` replaces the home directory as the root.
 *
 * Roles follow what Aider itself writes (its `io.py`), not cass's parser: `#### ` lines are the
 * user's prompts, `> ` lines are tool/command output and confirmations (role "tool"), and other
 * text is the assistant's reply. Each `# aider chat started at <time>` header starts a new
 * conversation. The file has no per-message times: a session's start comes from its header and
 * the last session ends at the file's mtime (a file without headers uses the mtime for both).
 */
import path from "node:path";

import type { DiscoveryEnv, NormalizedConversation, SessionFileRef } from "../../model.js";
import type { CachedWalkReader } from "../discovery-cache.js";
import { ConversationBuilder, envValue, readLines, toRefs, uniquePaths, walkFiles } from "./util.js";

const AGENT = "aider" as const;
const FILE_NAME = ".aider.chat.history.md";
const SESSION_HEADER = /^# aider chat started at (.+)$/;
/**
 * Names of directories the home walk never enters. Each holds installed dependencies, build
 * output, caches or OS/application data — never the project folder a user ran aider in — and
 * most are large enough to eat the walk's time and its 20,000-directory budget. Every walk also
 * skips `node_modules`, `.git`, `.hg` and `.svn`; this walk skips every dot directory too (`.cache`,
 * `.venv`, `.cargo`, `.npm`, `.m2`, …). Plausible project names (`vendor`, `env`, `lib`, `src`,
 * `out`, `tmp`) are not listed: those trees are recognised by their contents (see below).
 */
const SKIPPED_DIRS = new Set([
  // OS and application data: macOS `~/Library`, Windows `AppData`, app bundles, Snap packages.
  "Library",
  "AppData",
  "Applications",
  "snap",
  // Build output (Rust/Maven `target`, JS `dist`, generic `build`) and Python bytecode.
  "target",
  "dist",
  "build",
  "__pycache__",
  // Python: the usual virtualenv name, and installed packages of any interpreter or environment.
  "venv",
  "site-packages",
  "dist-packages",
  // JavaScript dependencies besides `node_modules` (Bower, jspm).
  "bower_components",
  "jspm_packages",
  // CocoaPods dependencies of iOS/macOS projects.
  "Pods",
]);

/**
 * Top-level system trees, met only when the walked root is `/` (the HOME of some service
 * accounts and containers): kernel pseudo-filesystems (`/proc`, `/sys`, `/dev`, `/run`) and the
 * operating system's own files (`/usr`, `/lib*`, `/bin`, `/sbin`, `/etc`, `/boot`), which never
 * hold a user's project. `/home`, `/root`, `/srv`, `/opt`, `/var` and `/tmp` are still walked.
 */
const SYSTEM_TREES = new Set(["/proc", "/sys", "/dev", "/run", "/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc", "/boot"]);

/** Whether the walk enters a directory (by name and path). */
function enterDir(name: string, full: string): boolean {
  if (name.startsWith(".") || SKIPPED_DIRS.has(name)) return false;
  // Go's module cache, `$GOPATH/pkg/mod` (`~/go/pkg/mod`): read-only copies of dependencies.
  if (name === "mod" && path.basename(path.dirname(full)) === "pkg") return false;
  return !SYSTEM_TREES.has(full);
}

/**
 * Whether the walk enters the subdirectories of a directory it has listed: not when the listing
 * marks a dependency or cache tree, whatever the directory is called. Files directly inside are
 * still looked at.
 * - `pyvenv.cfg`: a Python virtualenv (`env/`, `myenv/`, …).
 * - `conda-meta`: a conda installation or environment (`~/miniconda3`, `~/anaconda3`, `envs/x`),
 *   whose `pkgs/` and `lib/` trees are huge.
 * - `CACHEDIR.TAG`: a directory tagged as a cache (the Cache Directory Tagging spec; Cargo's
 *   `target/`, many tool caches).
 * - a directory named `vendor` holding Go's `modules.txt` or Composer's `autoload.php`: vendored
 *   dependencies (a `vendor` folder without them may be anything, and is entered).
 */
function enterChildren(names: ReadonlySet<string>, dir: string): boolean {
  if (names.has("pyvenv.cfg") || names.has("conda-meta") || names.has("CACHEDIR.TAG")) return false;
  if (path.basename(dir) === "vendor" && (names.has("modules.txt") || names.has("autoload.php"))) return false;
  return true;
}

/**
 * Names this walk's rules for the discovery cache (see ../discovery-cache.ts): a persisted walk
 * result made under another key is not reused. Change it whenever the walk's rules change.
 */
const WALK_CACHE_KEY = "aider/2";

type Kind = "user" | "tool" | "assistant";

/** Local wall-clock header time (`2024-05-01 10:00:00`) → ms. */
function headerTime(text: string): number | null {
  const parsed = Date.parse(text.trim().replace(" ", "T"));
  return Number.isNaN(parsed) ? null : parsed;
}

/**
 * The Aider reader. Its walk of the home directory is the one broad walk among the readers, so it
 * declares a `walkCacheKey`: the native source then reuses a walk's result for a while (ten minutes
 * by default) instead of walking HOME on every search. Known history files are still stat-ed on
 * every search; a history file in a new place is found by the next walk, up to that long later.
 */
export function createAiderReader(): CachedWalkReader {
  return {
    agent: AGENT,
    walkCacheKey: WALK_CACHE_KEY,
    defaultRoots(ctx: DiscoveryEnv): string[] {
      return uniquePaths([envValue(ctx.env, "CASS_AIDER_DATA_ROOT") ?? ctx.home]);
    },
    async discover(root: string): Promise<SessionFileRef[]> {
      const files = await walkFiles(root, {
        maxDepth: 5,
        maxDirs: 20_000,
        acceptFile: (name) => name === FILE_NAME,
        enterDir,
        enterChildren,
      });
      return toRefs(AGENT, files);
    },
    async read(ref: SessionFileRef): Promise<NormalizedConversation[]> {
      const workspace = path.dirname(ref.path);
      const title = `Aider Chat: ${path.basename(workspace)}`;
      const sessions: Array<{ builder: ConversationBuilder; startedAt: number | null; header: string | null }> = [];
      let current = { builder: new ConversationBuilder(), startedAt: null as number | null, header: null as string | null };
      let kind: Kind | null = null;
      let block: string[] = [];
      let blockLine = 0;

      const flush = (): void => {
        if (kind !== null) current.builder.add({ role: kind, content: block.join("\n"), lineNumber: blockLine });
        kind = null;
        block = [];
      };

      // Any file can be handed to the readers (`cm onboard read <file>`): a file not named like
      // Aider's history is taken as one only when it starts like one (`# aider chat started at`);
      // JSON, JSONL and other text are left to the readers that know them.
      const named = path.basename(ref.path) === FILE_NAME;
      let sawText = false;
      for await (const { text, lineNumber } of readLines(ref.path)) {
        // A NUL byte means this is not a Markdown history.
        if (text.includes("\u0000")) return [];
        if (!sawText && text.trim() !== "") {
          sawText = true;
          if (!named && !SESSION_HEADER.test(text.trim())) return [];
        }
        const header = SESSION_HEADER.exec(text);
        if (header !== null) {
          flush();
          if (current.builder.messages.length > 0) sessions.push(current);
          current = { builder: new ConversationBuilder(), startedAt: headerTime(header[1]!), header: header[1]!.trim() };
          continue;
        }
        if (current.builder.full) continue;
        let lineKind: Kind | null;
        let body = text;
        if (text.startsWith("####")) {
          lineKind = "user";
          body = text.replace(/^####\s?/, "");
        } else if (text.startsWith(">")) {
          lineKind = "tool";
          body = text.replace(/^>\s?/, "");
        } else if (text.trim() === "") {
          lineKind = null;
        } else {
          lineKind = "assistant";
        }
        if (lineKind === null) {
          if (kind !== null) block.push("");
          continue;
        }
        if (lineKind !== kind) {
          flush();
          kind = lineKind;
          blockLine = lineNumber;
        }
        block.push(body);
      }
      flush();
      if (current.builder.messages.length > 0) sessions.push(current);

      const out: NormalizedConversation[] = [];
      sessions.forEach((session, i) => {
        const isLast = i === sessions.length - 1;
        const startedAt = session.startedAt ?? (session.header === null ? Math.round(ref.mtimeMs) : null);
        const endedAt = isLast ? Math.round(ref.mtimeMs) : (sessions[i + 1]!.startedAt ?? startedAt);
        const conversation = session.builder.build({
          agent: AGENT,
          sourcePath: ref.path,
          externalId: session.header,
          title,
          workspace,
          startedAt,
          endedAt,
        });
        if (conversation !== null) out.push(conversation);
      });
      return out;
    },
  };
}
