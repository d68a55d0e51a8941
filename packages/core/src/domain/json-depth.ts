/**
 * Nesting depth of JSON text, measured without parsing it. `JSON.parse` copes with very deep
 * input, but everything after it (validation, `JSON.stringify`, error messages) recurses and can
 * overflow the stack: inputs from users and clients are checked against MAX_JSON_DEPTH first.
 */

/** Deepest nesting of arrays/objects accepted in any JSON input (rules files, imports, MCP bodies). */
export const MAX_JSON_DEPTH = 64;

/** True when `text` nests arrays/objects deeper than `max` (strings are skipped; stops at the first excess). */
export function jsonNestedDeeperThan(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      if (++depth > max) return true;
    } else if (c === 93 || c === 125) depth--;
  }
  return false;
}
