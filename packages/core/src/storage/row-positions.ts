/**
 * Ordering of playbook rows in database-backed stores (SQLite, PostgreSQL): each bullet row has a
 * sparse integer position, so a mutation moves or inserts a few rows without renumbering the rest.
 */

/** Distance between the positions of consecutive bullets when they are (re)numbered. */
export const POSITION_STEP = 1024;

/** Indexes of one longest strictly increasing subsequence of `positions` (O(n log n)). */
export function longestIncreasing(positions: readonly number[]): Set<number> {
  const tails: number[] = [];
  const tailIndex: number[] = [];
  const previous: number[] = new Array<number>(positions.length).fill(-1);
  for (let i = 0; i < positions.length; i += 1) {
    const value = positions[i] as number;
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((tails[mid] as number) < value) lo = mid + 1;
      else hi = mid;
    }
    tails[lo] = value;
    tailIndex[lo] = i;
    previous[i] = lo > 0 ? (tailIndex[lo - 1] as number) : -1;
  }
  const keep = new Set<number>();
  for (let i = tails.length > 0 ? (tailIndex[tails.length - 1] as number) : -1; i >= 0; i = previous[i] as number) keep.add(i);
  return keep;
}

/**
 * The rows that keep their position when the list becomes `matched` (for each new item, the
 * position of the old row it was paired with, or undefined for a new item): the largest set of
 * paired rows already in order. Returns the indexes into `matched`.
 */
export function keptRows(matched: ReadonlyArray<number | undefined>): Set<number> {
  const indexes: number[] = [];
  for (let i = 0; i < matched.length; i += 1) if (matched[i] !== undefined) indexes.push(i);
  const keepAt = longestIncreasing(indexes.map((i) => matched[i] as number));
  const kept = new Set<number>();
  indexes.forEach((index, k) => {
    if (keepAt.has(k)) kept.add(index);
  });
  return kept;
}

/**
 * Positions for every item of the new list: kept rows stay where they are, the others are spread
 * over the gaps between kept neighbours; when a gap is too small, everything is renumbered
 * (`i * POSITION_STEP`).
 */
export function spreadPositions(matched: ReadonlyArray<number | undefined>, kept: ReadonlySet<number>): number[] {
  const length = matched.length;
  const positions = new Array<number>(length);
  let renumber = false;
  for (let i = 0; i < length; ) {
    if (kept.has(i)) {
      positions[i] = matched[i] as number;
      i += 1;
      continue;
    }
    let j = i;
    while (j < length && !kept.has(j)) j += 1;
    const count = j - i;
    const lo = i > 0 ? (positions[i - 1] as number) : undefined;
    const hi = j < length ? (matched[j] as number) : undefined;
    for (let k = 0; k < count; k += 1) {
      if (lo === undefined && hi === undefined) positions[i + k] = k * POSITION_STEP;
      else if (hi === undefined) positions[i + k] = (lo as number) + (k + 1) * POSITION_STEP;
      else if (lo === undefined) positions[i + k] = hi - (count - k) * POSITION_STEP;
      else {
        if (hi - lo - 1 < count) renumber = true;
        positions[i + k] = lo + Math.floor(((k + 1) * (hi - lo)) / (count + 1));
      }
    }
    i = j;
  }
  if (renumber) for (let i = 0; i < length; i += 1) positions[i] = i * POSITION_STEP;
  return positions;
}
