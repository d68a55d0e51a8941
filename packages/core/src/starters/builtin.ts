import type { StarterDocument } from "./starter.js";

/**
 * The built-in starter playbooks: short, concrete rules an agent can act on from day one. Each is
 * a document in the same format as a custom starter file in `<globalDir>/starters/` (name,
 * description, bullets). Ids are stable (`starter-<name>-<slug>`), so applying a starter twice, or
 * after a newer cm added rules to it, only adds what is missing. Rules whose content starts with
 * "AVOID:" are anti-patterns (`type: anti-pattern`, `isNegative: true`, `kind: anti_pattern`).
 */

type StarterBullet = StarterDocument["bullets"][number];

function rule(name: string, slug: string, category: string, content: string, tags: string[] = [name]): StarterBullet {
  return { id: `starter-${name}-${slug}`, category, content, tags, kind: name === "general" ? "workflow_rule" : "stack_pattern" };
}

function avoid(name: string, slug: string, category: string, content: string, tags: string[] = [name]): StarterBullet {
  return { id: `starter-${name}-${slug}`, category, content, tags, kind: "anti_pattern", type: "anti-pattern", isNegative: true };
}

const general: StarterDocument = {
  name: "general",
  description: "Working habits for any codebase: reproduce, read before editing, verify, keep diffs small.",
  bullets: [
    rule("general", "reproduce-first", "debugging", "Before changing code to fix a bug, reproduce it with a failing test or a minimal command, and keep that reproduction as the regression test; a fix without a reproduction is a guess.", ["debugging"]),
    rule("general", "first-error-first", "debugging", "When a command fails, start from the first error in its output, not the last, and search for its exact text; later errors are usually consequences of the first one.", ["debugging"]),
    rule("general", "read-callers", "workflow", "Before editing a function, read all of it and grep for its callers; most regressions come from a caller that relied on behaviour the edit changed.", ["workflow"]),
    rule("general", "run-project-checks", "testing", "Before declaring a task done, run the project's own checks (the test, lint and typecheck scripts in package.json, Makefile, pyproject.toml or the CI config) and say which ones you ran and what they reported.", ["testing", "workflow"]),
    rule("general", "focused-diffs", "workflow", "Keep each change focused on its task: no drive-by reformatting, renames or dependency upgrades in the same diff; they hide the real change from review and from git bisect.", ["workflow", "git"]),
    rule("general", "git-status-before-after", "git", "Run `git status` and `git diff` before and after editing, so you know which changes are yours and never overwrite or discard work you did not create.", ["git"]),
    rule("general", "verify-api-version", "workflow", "Check that an API, CLI flag or config key exists in the version the project actually uses (lockfile, `--help`, the installed source) before relying on it; documentation for a newer release is a common source of wrong code.", ["dependencies", "workflow"]),
    rule("general", "secrets-out-of-repo", "security", "Keep secrets out of code, logs, commits and test fixtures: read them from the environment or a secret store, and make sure files that hold them (.env, *.pem, credentials.json) are in .gitignore.", ["security"]),
    avoid("general", "silencing-failures", "testing", "AVOID: Making a failing test or check pass by skipping it, loosening its assertion or catching and ignoring the error. Fix the cause, or report the failure plainly.", ["testing"]),
    avoid("general", "destructive-git", "git", "AVOID: Reaching for `git reset --hard`, `git clean -fd`, `git checkout -- .` or `git push --force` to get out of a mess; they destroy uncommitted or shared work. Use `git stash` or a new branch, and ask first.", ["git"]),
    avoid("general", "needless-dependency", "dependencies", "AVOID: Adding a dependency for something the standard library or an existing dependency already does; each one adds install time, attack surface and upgrade work.", ["dependencies"]),
  ],
};

const typescript: StarterDocument = {
  name: "typescript",
  description: "TypeScript: strict compiler settings, honest types at the boundaries, ESM import rules.",
  bullets: [
    rule("typescript", "keep-strict", "config", "Keep `\"strict\": true` in tsconfig.json (and turn on `noUncheckedIndexedAccess` in new projects); fix the type errors instead of loosening compiler options."),
    rule("typescript", "typecheck-separately", "tooling", "Run `tsc --noEmit` (or the project's typecheck script) after editing: esbuild, tsup, Vite, SWC and tsx strip types without checking them, so a green build or test run says nothing about type errors."),
    rule("typescript", "unknown-at-boundaries", "types", "Type data from outside the program (JSON.parse, fetch responses, process.env, catch clauses) as `unknown` and narrow it with a schema (zod, valibot) or a type guard before using it."),
    rule("typescript", "discriminated-unions", "types", "Model mutually exclusive states as a discriminated union with a literal `kind` field, and end the `switch` over it with an exhaustiveness check (`const unreachable: never = value`) so a new variant fails to compile until it is handled."),
    rule("typescript", "satisfies", "types", "Use `satisfies` to check an object literal against a type while keeping its precise inferred type (`const routes = { ... } satisfies Record<string, Route>`), instead of an annotation that widens it."),
    rule("typescript", "esm-import-extensions", "modules", "With `\"module\": \"nodenext\"` (or node16), write relative imports with the `.js` extension (`import { x } from \"./util.js\"`) even in .ts files; TypeScript does not rewrite import paths."),
    rule("typescript", "import-type", "modules", "Use `import type` for imports that are only types (enforced by `verbatimModuleSyntax`), so they are always erased and cannot create runtime import cycles."),
    rule("typescript", "floating-promises", "async", "Await every promise or mark fire-and-forget calls with `void` plus a `.catch()`; enable `@typescript-eslint/no-floating-promises` to catch the ones you miss, since an un-awaited rejection is lost."),
    avoid("typescript", "any-and-casts", "types", "AVOID: Silencing a type error with `any` or a cast (especially `as unknown as T`); it hides the bug the compiler found. Fix the declaration, narrow the value, or use `unknown`."),
    avoid("typescript", "non-null-assertions", "types", "AVOID: Non-null assertions (`value!`) on values that really can be undefined, such as `Map.get`, array indexing and optional properties; check for the missing case and handle it."),
    avoid("typescript", "ts-ignore", "types", "AVOID: `// @ts-ignore`. When a suppression is unavoidable, use `// @ts-expect-error` with a reason, so it fails as soon as the error it hides goes away."),
  ],
};

const react: StarterDocument = {
  name: "react",
  description: "React: hook rules, effects that clean up, derived state, stable keys, user-facing tests.",
  bullets: [
    rule("react", "rules-of-hooks", "hooks", "Call hooks only at the top level of components and custom hooks, never inside conditions, loops or after an early return, and keep `eslint-plugin-react-hooks` enabled to enforce it."),
    rule("react", "exhaustive-deps", "hooks", "List every reactive value an effect, `useMemo` or `useCallback` reads in its dependency array; if that causes a loop, restructure (move the value inside the effect, use an updater function) instead of leaving dependencies out."),
    rule("react", "derive-during-render", "state", "Compute values derived from props or state during render (with `useMemo` only if it is expensive) instead of copying them into more state with `useEffect`; effects are for synchronising with things outside React."),
    rule("react", "updater-function", "state", "When the next state depends on the previous one, use the updater form (`setCount(c => c + 1)`); the value captured by a handler, timeout or promise callback may be stale."),
    rule("react", "immutable-updates", "state", "Update state immutably (spread, `map`, `filter`, `toSorted`); mutating an object or array in place and setting the same reference does not re-render."),
    rule("react", "stable-keys", "rendering", "Give list items keys from the data (ids), not array indexes or `Math.random()`; index keys attach state and input values to the wrong rows when items are inserted, removed or reordered."),
    rule("react", "effect-cleanup", "effects", "Return a cleanup from every effect that subscribes, starts a timer or fetches (remove the listener, clear the timer, abort the request); StrictMode runs effects twice in development precisely to expose missing cleanups."),
    rule("react", "testing-library", "testing", "Test components through what the user sees with React Testing Library: query by role and accessible name (`getByRole(\"button\", { name: /save/i })`), drive them with `userEvent`, and wait for async updates with `findBy*`."),
    avoid("react", "unguarded-fetch-effect", "effects", "AVOID: Fetching in `useEffect` without handling races: a slow response for an old query can overwrite a newer one. Abort or ignore stale responses, or use a data library (TanStack Query, SWR, the framework's loaders)."),
    avoid("react", "nested-component-definitions", "rendering", "AVOID: Defining a component inside another component's body; it is a new component type on every render, so React remounts it and its state and focus are lost. Define it at module level and pass props."),
    avoid("react", "unsafe-inner-html", "security", "AVOID: `dangerouslySetInnerHTML` with content a user can influence; it is an XSS hole. Render text normally, or sanitise with DOMPurify when HTML is unavoidable.", ["react", "security"]),
  ],
};

const python: StarterDocument = {
  name: "python",
  description: "Python: isolated environments, pytest, type checking, explicit encodings and exceptions.",
  bullets: [
    rule("python", "use-project-env", "environment", "Work inside the project's environment (the `.venv`, or `uv run` / `poetry run` when the project uses them) and install with `python -m pip`, never into the system Python."),
    rule("python", "pytest-loop", "testing", "Run tests with `python -m pytest -x -q`; narrow with `-k <expr>` or `path::test_name`, rerun failures with `--lf`, and use the `tmp_path` and `monkeypatch` fixtures instead of real paths and global state."),
    rule("python", "types-and-lint", "tooling", "Annotate function signatures and run the project's checkers (`mypy` or `pyright`, and `ruff check`) before finishing; they catch None handling and attribute errors that tests often miss."),
    rule("python", "pathlib-utf8", "io", "Use `pathlib.Path` for paths and pass `encoding=\"utf-8\"` when opening text files; the default encoding depends on the platform (cp1252 on many Windows machines)."),
    rule("python", "with-blocks", "resources", "Acquire files, locks, connections and temporary directories with `with` (`open`, `tempfile.TemporaryDirectory()`, `contextlib.ExitStack`) so they are released when an exception is raised."),
    rule("python", "specific-exceptions", "errors", "Catch the specific exception you expect, keep the `try` block to the lines that raise it, and chain with `raise ConfigError(...) from err` so the original traceback is kept."),
    rule("python", "aware-datetimes", "time", "Use timezone-aware datetimes (`datetime.now(timezone.utc)`); `datetime.utcnow()` returns a naive value (deprecated since 3.12) that compares and serialises wrongly."),
    rule("python", "logging-not-print", "logging", "In library code use `logger = logging.getLogger(__name__)` with lazy arguments (`logger.info(\"loaded %s\", path)`) instead of `print`, and configure handlers only in the application's entry point."),
    avoid("python", "mutable-defaults", "functions", "AVOID: Mutable default arguments (`def f(items=[])` or `={}`); the default is created once and shared by every call. Default to `None` and create the object inside the function."),
    avoid("python", "bare-except", "errors", "AVOID: Bare `except:` or `except Exception: pass`; it swallows real bugs (a bare except even catches KeyboardInterrupt and SystemExit). Catch specific exceptions and log or re-raise."),
    avoid("python", "shell-true", "security", "AVOID: `subprocess.run(..., shell=True)` or `os.system` with interpolated strings; pass an argument list (`subprocess.run([\"git\", \"log\", path], check=True)`) to avoid shell injection and quoting bugs.", ["python", "security"]),
  ],
};

const node: StarterDocument = {
  name: "node",
  description: "Node.js: the right package manager and Node version, handled promises, safe child processes and streams.",
  bullets: [
    rule("node", "lockfile-package-manager", "dependencies", "Use the package manager that owns the lockfile (package-lock.json: npm, pnpm-lock.yaml: pnpm, yarn.lock: yarn, bun.lock or bun.lockb: bun) and install in CI in frozen mode (`npm ci`, `pnpm install --frozen-lockfile`)."),
    rule("node", "check-node-version", "runtime", "Check the supported Node version (`engines` in package.json, `.nvmrc`, `.node-version`) before using newer APIs such as global `fetch`, `node:test`, `fs.glob` or `import.meta.dirname`."),
    rule("node", "node-prefix-promises", "modules", "Import built-ins with the `node:` prefix (`import { readFile } from \"node:fs/promises\"`) and use the promise APIs in servers; keep the *Sync variants for start-up code and CLIs."),
    rule("node", "esm-vs-cjs", "modules", "Know the module system: `\"type\": \"module\"` makes .js files ESM (.cjs stays CommonJS). ESM has no `require`, `__dirname` or `__filename`; use `import.meta.url` (or `import.meta.dirname` on Node 20.11+) and `createRequire`."),
    rule("node", "handle-rejections", "async", "Await or handle every promise: an unhandled rejection terminates the process (Node 15+). Give fire-and-forget work a `.catch()`, and use `Promise.allSettled` when one failure must not abandon the others."),
    rule("node", "spawn-with-args", "processes", "Run external programs with `execFile` or `spawn` and an argument array rather than `exec` with an interpolated string; set a `timeout` and check the exit code and stderr."),
    rule("node", "stream-pipeline", "streams", "Connect streams with `pipeline()` from `node:stream/promises`; it forwards errors and closes every stream, whereas `.pipe()` leaks file descriptors when one side fails."),
    rule("node", "exit-code-not-exit", "cli", "In CLIs, set `process.exitCode` and let the process end instead of calling `process.exit()` right after writing; exiting immediately can cut off output that is still buffered for a pipe."),
    avoid("node", "blocking-event-loop", "performance", "AVOID: Synchronous work on a server's request path (`fs.readFileSync`, `execSync`, parsing huge JSON, CPU-heavy loops); it stalls every other request. Use async APIs or a worker thread."),
    avoid("node", "editing-node-modules", "dependencies", "AVOID: Editing files under `node_modules` or a build output directory to fix a bug; the change is lost on the next install or build. Fix the source, or patch the dependency with `pnpm patch` or `patch-package`."),
    avoid("node", "global-tools", "dependencies", "AVOID: `npm install -g` (or sudo) for tools a project needs; add them as devDependencies and run them with `npx` or `pnpm exec`, so everyone uses the locked version."),
  ],
};

const go: StarterDocument = {
  name: "go",
  description: "Go: gofmt and vet, wrapped errors, context-aware concurrency, table-driven tests.",
  bullets: [
    rule("go", "fmt-and-vet", "tooling", "Run `gofmt -w` (or `goimports -w`) and `go vet ./...` on what you changed; Go code is expected to be gofmt'd, and vet catches printf, struct tag and lock-copy mistakes."),
    rule("go", "test-flags", "testing", "Run `go test ./...`; add `-race` for concurrent code, `-run '^TestName$'` to focus, and `-count=1` to bypass the test cache when a result looks stale."),
    rule("go", "table-driven-tests", "testing", "Write table-driven tests with `t.Run(tc.name, ...)` subtests, call `t.Helper()` in helpers, and use `t.TempDir()` and `t.Setenv()` instead of hand-written cleanup."),
    rule("go", "wrap-errors", "errors", "Add context when returning errors (`fmt.Errorf(\"read config %s: %w\", path, err)`) and inspect them with `errors.Is` / `errors.As`, never by comparing error strings."),
    rule("go", "context-first", "concurrency", "Take `ctx context.Context` as the first parameter of anything that does I/O or may block, stop when `ctx.Done()` is closed, and never store a context in a struct."),
    rule("go", "goroutine-lifetimes", "concurrency", "Give every goroutine a way to stop (a context, a closed channel, `errgroup.WithContext`) and wait for it to finish; a goroutine blocked forever on a channel is a leak."),
    rule("go", "defer-after-error-check", "resources", "Check the error before deferring `Close` (`f, err := os.Open(p); if err != nil { return err }; defer f.Close()`), and check the error of `Close` on files you wrote to."),
    rule("go", "mod-tidy", "dependencies", "After changing imports run `go mod tidy`, and commit go.mod and go.sum together."),
    avoid("go", "ignored-errors", "errors", "AVOID: Discarding errors with `_ =` or by not reading them (`json.Unmarshal(data, &v)` on its own line); handle, wrap or return every error."),
    avoid("go", "unsynchronised-maps", "concurrency", "AVOID: Reading and writing a map from several goroutines without a `sync.Mutex`/`sync.RWMutex` (or `sync.Map`); concurrent map writes kill the program with a fatal error that `recover` cannot catch."),
    avoid("go", "panic-for-errors", "errors", "AVOID: `panic` for expected failures (bad input, missing files, network errors) in library code; return an error and let the caller decide."),
  ],
};

const rust: StarterDocument = {
  name: "rust",
  description: "Rust: clippy-clean code, `?` with context, borrowing over cloning, async without blocking.",
  bullets: [
    rule("rust", "fmt-clippy-test", "tooling", "Before finishing run `cargo fmt`, `cargo clippy --all-targets -- -D warnings` and `cargo test`; use `cargo check` for the fast edit-compile loop."),
    rule("rust", "errors-with-context", "errors", "Propagate errors with `?` and say what was being done: `anyhow::Context` (`.with_context(|| format!(\"reading {path:?}\"))`) in applications, a `thiserror` enum in libraries."),
    rule("rust", "borrow-parameters", "ownership", "Take `&str`, `&[T]` and `&Path` parameters when a function only reads, and fix borrow-checker errors by narrowing scopes or splitting borrows rather than cloning by reflex."),
    rule("rust", "exhaustive-match", "types", "Model alternatives as enums and match them without a `_ =>` catch-all where you can, so adding a variant makes the compiler list every place that must handle it."),
    rule("rust", "test-layout", "testing", "Put unit tests in a `#[cfg(test)] mod tests` beside the code and integration tests in `tests/`; run one with `cargo test <name> -- --nocapture` to see its output."),
    rule("rust", "msrv-and-features", "dependencies", "Check `edition` and `rust-version` in Cargo.toml before using newer language or std features, and enable only the dependency features you need (`default-features = false, features = [...]`)."),
    rule("rust", "no-blocking-in-async", "async", "In async code (tokio), do not call blocking functions (`std::fs`, `std::thread::sleep`, heavy computation) on the runtime; use `tokio::fs`, `tokio::time::sleep` or `tokio::task::spawn_blocking`."),
    avoid("rust", "unwrap-in-fallible-paths", "errors", "AVOID: `.unwrap()` or `.expect()` on operations that can fail at runtime (I/O, parsing, user input) outside tests; return a `Result` and use `?`."),
    avoid("rust", "std-mutex-across-await", "async", "AVOID: Holding a `std::sync::Mutex` guard across an `.await`; the future stops being `Send` and can deadlock the runtime. Drop the guard before awaiting, or use `tokio::sync::Mutex`."),
    avoid("rust", "unsafe-to-silence-borrowck", "ownership", "AVOID: Writing `unsafe` to get past the borrow checker; restructure ownership (indices, split borrows, `Rc<RefCell<_>>` or `Arc<Mutex<_>>`) and, when `unsafe` is truly required, document the invariant in a `// SAFETY:` comment."),
  ],
};

/** Built-in starters, sorted by name. */
export const BUILTIN_STARTERS: readonly StarterDocument[] = [general, go, node, python, react, rust, typescript];
