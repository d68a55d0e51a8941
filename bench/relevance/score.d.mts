// Types of score.mjs (so TypeScript tests can import the scorer).

/** Rule id → graded relevance 0..3; unlisted ids count as 0. */
export type Labels = Readonly<Record<string, number>>;

export interface TaskScores {
  ndcg10: number;
  recall5: number;
  mrr: number;
}

export interface GroupSummary extends TaskScores {
  n: number;
}

export declare const RELEVANT_GRADE: number;
export declare const METRICS: readonly ["ndcg10", "recall5", "mrr"];
export declare function dcg(grades: readonly number[], k: number): number;
export declare function ndcgAt(ranking: readonly string[], labels: Labels, k?: number): number;
export declare function recallAt(ranking: readonly string[], labels: Labels, k?: number, minGrade?: number): number;
export declare function reciprocalRank(ranking: readonly string[], labels: Labels, minGrade?: number): number;
export declare function scoreTask(ranking: readonly string[], labels: Labels): TaskScores;
export declare function summarize(results: ReadonlyArray<{ group: string; scores: TaskScores }>): Record<string, GroupSummary>;
export declare function averageSummaries(summaries: ReadonlyArray<Record<string, GroupSummary>>): Record<string, GroupSummary>;
