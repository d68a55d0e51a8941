/**
 * Plain human formatting: width, optional ANSI colour, emoji or plain tokens. Colour is off with
 * NO_COLOR, FORCE_COLOR=0, --no-color, or when stdout is not a terminal. `--no-emoji` (env
 * CASS_MEMORY_NO_EMOJI) swaps icons for plain tokens.
 */

const env = (): NodeJS.ProcessEnv => process.env;

export function outputWidth(): number {
  const raw = env().CASS_MEMORY_WIDTH?.trim();
  if (raw && /^\d+$/.test(raw) && Number(raw) > 0) return Number(raw);
  const cols = process.stdout.columns;
  return typeof cols === "number" && cols > 0 ? cols : 80;
}

/** Width for most layouts: the output width capped at 84 columns. */
export function layoutWidth(): number {
  return Math.max(20, Math.min(84, outputWidth()));
}

export function useColor(): boolean {
  const e = env();
  if (e.NO_COLOR !== undefined && e.NO_COLOR !== "") return false;
  if (e.FORCE_COLOR === "0") return false;
  if (e.FORCE_COLOR !== undefined && e.FORCE_COLOR !== "") return true;
  return process.stdout.isTTY === true;
}

function style(open: number, close: number) {
  return (text: string): string => (useColor() ? `\u001b[${open}m${text}\u001b[${close}m` : text);
}
export const bold = style(1, 22);
export const dim = style(2, 22);
export const red = style(31, 39);
export const green = style(32, 39);
export const yellow = style(33, 39);
export const cyan = style(36, 39);

export function noEmoji(): boolean {
  const v = env().CASS_MEMORY_NO_EMOJI;
  return v !== undefined && v !== "" && v !== "0" && v.toLowerCase() !== "false";
}

export const icon = {
  success: (): string => (noEmoji() ? "[OK]" : "✓"),
  failure: (): string => (noEmoji() ? "[FAIL]" : "✗"),
  warning: (): string => (noEmoji() ? "[!]" : "⚠️"),
  tip: (): string => (noEmoji() ? "Tip: " : "💡 "),
  bullet: (): string => (noEmoji() ? "-" : "•"),
  pin: (): string => (noEmoji() ? "[PINNED]" : "📌PINNED"),
};

export function divider(width = layoutWidth()): string {
  return (noEmoji() ? "-" : "─").repeat(Math.min(width, 84));
}

/** Greedy word wrap; every line is prefixed by `indent`. */
export function wrap(text: string, width = layoutWidth(), indent = ""): string[] {
  const room = Math.max(10, width - indent.length);
  const lines: string[] = [];
  for (const paragraph of text.split(/\r?\n/)) {
    let line = "";
    for (const word of paragraph.split(/\s+/).filter(Boolean)) {
      if (line === "") line = word;
      else if (line.length + 1 + word.length <= room) line += ` ${word}`;
      else {
        lines.push(indent + line);
        line = word;
      }
    }
    lines.push(indent + line);
  }
  return lines;
}

/** `n` with `digits` decimals, without negative zero. */
export function fixed(n: number, digits: number): string {
  const s = n.toFixed(digits);
  return /^-0(\.0+)?$/.test(s) ? s.slice(1) : s;
}

/** Replaces the home directory prefix of a path by `~` for display. */
export function tildify(path: string): string {
  const home = env().HOME;
  if (home && home !== "/" && (path === home || path.startsWith(`${home}/`))) return `~${path.slice(home.length)}`;
  return path;
}
