import { CASS_NOT_FOUND_DEGRADED, type DegradedInfo, type EpisodicHealth, type EpisodicSearchResult, type EpisodicSource } from "@cass-memory/core";

/**
 * What `auto` reports when there is no history at all: no cass, and no session files for the
 * native readers. The reason stays the original's NOT_FOUND (agents match on it).
 */
function noHistoryAnywhere(native: DegradedInfo | undefined): DegradedInfo {
  return {
    available: false,
    reason: "NOT_FOUND",
    message: `No session history: cass is not installed and no agent session files were found. ${native?.message ?? ""}`.trim(),
    suggestedFix: [...(CASS_NOT_FOUND_DEGRADED.suggestedFix ?? []), ...(native?.suggestedFix ?? [])],
  };
}

/** cass's failure, with what answered in its place (and that source's own partial-answer note). */
function answeredInstead(cass: DegradedInfo, by: string, partial: DegradedInfo | undefined): DegradedInfo {
  const from = by === "native" ? "the native session readers" : `the '${by}' source`;
  return {
    ...cass,
    message: `${cass.message} History came from ${from} instead.${partial !== undefined ? ` ${partial.message}` : ""}`,
    answeredBy: by,
  };
}

export interface AutoSourceOptions {
  /** The cass CLI source, or null when no `cass` executable was found (no process is spawned then). */
  cass: EpisodicSource | null;
  /** The native readers' source: used when cass is missing or cannot answer. */
  native: EpisodicSource;
}

/**
 * `episodic: auto`: cass when it is installed and answers, else the native readers. Each call
 * falls back on its own: a cass search that comes back degraded (index missing, timeout, …) is
 * answered by the native source instead, and cass's problem is reported only when the native
 * source cannot answer either. Health is checked once per instance.
 */
export function createAutoSource(options: AutoSourceOptions): EpisodicSource {
  const { cass, native } = options;
  let cassHealth: Promise<EpisodicHealth> | null = null;
  const cassHealthy = async (): Promise<boolean> => {
    if (cass === null) return false;
    cassHealth ??= cass.health();
    return (await cassHealth).available;
  };
  /** The source that answers sessions, exports and expansions: cass when healthy, else native. */
  const active = async (): Promise<EpisodicSource> => ((await cassHealthy()) ? cass! : native);

  return {
    name: "auto",
    async health() {
      // Both are reported (doctor shows each); the first available one is the answer.
      const cassPart: EpisodicHealth =
        cass !== null ? await (cassHealth ??= cass.health()) : { available: false, name: "cass", degraded: { ...CASS_NOT_FOUND_DEGRADED } };
      const nativePart = await native.health();
      const components = [cassPart, nativePart];
      if (cassPart.available) return { ...cassPart, components };
      if (nativePart.available) return { ...nativePart, components };
      return { ...(cass !== null ? cassPart : { ...nativePart, degraded: noHistoryAnywhere(nativePart.degraded) }), available: false, components };
    },
    async search(query, opts): Promise<EpisodicSearchResult> {
      if (cass !== null) {
        const fromCass = await cass.search(query, opts);
        if (fromCass.degraded === undefined) return fromCass;
        const fromNative = await native.search(query, opts);
        // Native's answer wins when it is complete, or partial but with hits (a cut-short build).
        // cass's failure is still reported (as the original did): installed but failing is
        // something to fix, and the report names the source that answered instead.
        if (fromNative.degraded === undefined || fromNative.hits.length > 0) {
          return { hits: fromNative.hits, degraded: answeredInstead(fromCass.degraded, native.name, fromNative.degraded) };
        }
        return fromCass;
      }
      const result = await native.search(query, opts);
      if (result.hits.length > 0 || result.degraded !== undefined) return result;
      // No hits: say so when that is because there is no history anywhere (not just no match).
      const health = await native.health();
      return health.available ? result : { hits: [], degraded: noHistoryAnywhere(health.degraded) };
    },
    async listSessions(opts) {
      // An installed cass is asked first (`sessions`, else `timeline`), as the original did; its
      // empty answer is trusted only while cass is healthy, else the native readers answer.
      if (cass !== null) {
        const fromCass = await cass.listSessions(opts);
        if (fromCass.length > 0 || (await cassHealthy())) return fromCass;
      }
      return native.listSessions(opts);
    },
    async describe(path) {
      // The readers know which agent wrote a file whichever source answers searches.
      return (await native.describe?.(path)) ?? null;
    },
    async export(path, format) {
      const source = await active();
      const first = await source.export(path, format);
      // A path cass does not know may still be a file the native readers understand.
      return first !== null || source === native ? first : native.export(path, format);
    },
    async expand(path, line, context) {
      const source = await active();
      const first = await source.expand(path, line, context);
      return first !== null || source === native ? first : native.expand(path, line, context);
    },
  };
}
