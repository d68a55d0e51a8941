// Types of the parts of rankers.mjs that TypeScript tests use.

export interface BenchRule {
  id: string;
  content: string;
  category: string;
  tags: string[];
  kind?: string;
  isNegative?: boolean;
}

export declare function porterStem(word: string): string;
export declare function analyze(text: string, options?: { stem?: boolean }): string[];
export declare function createBm25(rules: readonly BenchRule[], options?: { stem?: boolean; k1?: number; b?: number }): { search(query: string): string[] };
export declare function originalKeywords(task: string): string[];
export declare function originalRank(
  rules: readonly BenchRule[],
  task: string,
  options?: { effectiveScore?: (rule: BenchRule) => number; minRelevance?: number },
): string[];
export declare const BENCH_NOW: Date;
