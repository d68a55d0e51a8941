// Shapes of the /dashboard/api responses the page reads (apps/dashboard/API.md). Fields the page
// does not use are left out; unknown extra fields are ignored.

export type Counts = Record<string, number>;

export interface Overview {
  store: { backend: string; playbookPath?: string };
  generatedAt: string;
  counts: {
    total: number;
    active: number;
    byState: Counts;
    byMaturity: Counts;
    byKind: Counts;
    byScope: Counts;
    byCategory: Counts;
  };
  scoreHistogram: { from: number | null; to: number | null; count: number }[];
  feedback: { helpful: number; harmful: number; last7Days: { helpful: number; harmful: number } };
}

export interface RuleSummary {
  id: string;
  content: string;
  category: string;
  kind: string;
  scope: string;
  state: string;
  maturity: string;
  score: number;
  helpfulCount: number;
  harmfulCount: number;
  pinned: boolean;
  createdAt: string;
  updatedAt: string;
  deprecated?: boolean;
}

export interface RuleDetail {
  rule: RuleSummary & Record<string, unknown> & { active?: boolean; tags?: string[]; deprecated?: boolean; pinnedReason?: string; deprecationReason?: string };
  scoreSeries: { at: string; score: number }[];
  events: { at: string; type: "helpful" | "harmful"; sessionPath?: string; reason?: string }[];
  journal: { at: string; op: string; summary: string; runId?: string }[];
}

export interface Risk {
  atRisk: (RuleSummary & { reason?: string })[];
  stale: (RuleSummary & { daysSinceFeedback?: number | null })[];
  expiring: (RuleSummary & { expiresInDays?: number })[];
  /** Counts before the lists were capped at `limit`. */
  totals?: { atRisk: number; stale: number; expiring: number };
  limit?: number;
  staleThresholdDays?: number;
  expiringWithinDays?: number;
}

export interface Duplicates {
  pairs: { a: RuleSummary; b: RuleSummary; similarity: number }[];
  conflicts: { a: RuleSummary; b: RuleSummary; reason: string }[];
}

export interface Run {
  runId: string;
  at: string;
  mode?: string;
  sessions?: number | string[];
  added: string[];
  updated: string[];
  removed: string[];
  reverted: boolean;
}

/** A trauma record as stored (traumas.jsonl, the original's snake_case fields). */
export interface Trauma {
  id?: string;
  pattern: string;
  severity?: string;
  scope?: string;
  projectPath?: string;
  status?: string;
  created_at?: string;
  trigger_event?: { session_path?: string; timestamp?: string; human_message?: string };
}

export interface ContextEntry {
  at: string;
  task: string;
  returned: { id: string; content?: string | null; antiPattern?: boolean }[];
  markedAfter: { id: string; type: string; at: string }[];
}
