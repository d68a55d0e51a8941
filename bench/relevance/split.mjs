// The dev / held-out split of the relevance benchmark's tasks. Deterministic and independent of the
// data's order: a task is held out when the FNV-1a hash (32 bit) of its id is odd. Ranker tuning
// may look at dev tasks only; the held-out numbers are the honest ones.

/** FNV-1a, 32 bit, over the UTF-16 code units of `text`. */
export function fnv1a(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** "heldout" or "dev". */
export function splitOf(taskId) {
  return fnv1a(taskId) % 2 === 1 ? "heldout" : "dev";
}
