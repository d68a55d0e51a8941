// @cass-memory/core/scoring: the scoring model: decay, effective score, maturity and its transitions; no zod.
// A subpath entry point: importing from here loads only these modules (see docs/benchmarks.md, "Bundle size").

export {
  DAY_MS,
  MATURITY_MULTIPLIER,
  calculateMaturityState,
  checkForDemotion,
  checkForPromotion,
  eventWeight,
  formatLastHelpful,
  getDecayedCounts,
  getEffectiveScore,
  getHalfLifeDays,
  getHarmfulMultiplier,
  isStale,
  scoreBucket,
} from "./domain/scoring.js";
export type { ScoreBucket } from "./domain/scoring.js";
