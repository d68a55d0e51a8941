// Files written by the original cm (copied from the repository's fixtures/original-home, where a
// test keeps them equal), embedded so that the published suite needs no file of this repository.

/** `~/.cass-memory/onboarding-state.json` as the original cm wrote it. */
export const ORIGINAL_ONBOARDING_STATE = "{\n  \"version\": 1,\n  \"startedAt\": \"2026-11-22T11:57:12.497Z\",\n  \"lastUpdatedAt\": \"2026-11-22T11:57:12.497Z\",\n  \"processedSessions\": [\n    {\n      \"path\": \"/home/dev/.claude/projects/app/s1.jsonl\",\n      \"processedAt\": \"2026-11-22T11:57:12.497Z\",\n      \"rulesExtracted\": 0,\n      \"skipped\": true\n    }\n  ],\n  \"stats\": {\n    \"totalSessionsProcessed\": 1,\n    \"totalRulesExtracted\": 0\n  }\n}";

/** `~/.cass-memory/reflections/global.processed.log` as the original cm wrote it. */
export const ORIGINAL_GLOBAL_PROCESSED_LOG = "# JSONL format: {\"sessionPath\":..., \"processedAt\":...}\n{\"sessionPath\":\"/home/dev/.claude/projects/app/s1.jsonl\",\"processedAt\":\"2026-11-22T11:57:12.500Z\",\"deltasGenerated\":0}\n";
