// The deterministic (no-LLM) learning components and the evidence gate.

export {
  OUTCOME_TAIL_MESSAGES,
  createDeterministicDiaryWriter,
  draftDiary,
  mentionedFiles,
  parseTranscript,
  proseLines,
  searchAnchors,
  sessionOutcome,
  sessionStatus,
  splitSentences,
} from "./deterministic-diary.js";
export type { TranscriptLine, TranscriptMessage, TranscriptRole } from "./deterministic-diary.js";
export {
  LESSON_DUPLICATE_SIMILARITY,
  MAX_LESSON_LINE_CHARS,
  MAX_LESSONS_PER_SESSION,
  MIN_LESSON_CHARS,
  REDUNDANT_COVERAGE,
  cleanLessonLine,
  createDeterministicReflector,
  findLessons,
  guessCategory,
  lessonFromListItem,
  lessonFromSentence,
  lessonsInLine,
  looksLikeCode,
  reflectDeterministically,
  tagsMentioned,
} from "./deterministic-reflector.js";
export type { Lesson } from "./deterministic-reflector.js";
export {
  CAUTION_MAX_CONFIDENCE,
  CAUTION_MIN_CONFIDENCE,
  REJECT_MAX_CONFIDENCE,
  REJECT_MIN_CONFIDENCE,
  createDeterministicValidator,
  judgeByCounts,
} from "./deterministic-validator.js";
export {
  EVIDENCE_SEARCH_LIMIT,
  FAILURE_PATTERNS,
  GATE_AMBIGUOUS_REASON,
  GATE_NO_EVIDENCE_REASON,
  GATE_NO_KEYWORDS_REASON,
  GROUNDING_MIN_SHARE,
  MIN_VALIDATED_CONTENT_CHARS,
  STRONG_FAILURE_SESSIONS,
  STRONG_SUCCESS_SESSIONS,
  SUCCESS_PATTERNS,
  classifySnippetOutcome,
  groundedKeywords,
  isGrounded,
  runEvidenceGate,
  validateDelta,
} from "./evidence-gate.js";
export type { DeltaValidation, EvidenceGateDeps, EvidenceGateOptions } from "./evidence-gate.js";
