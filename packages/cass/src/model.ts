/**
 * The normalised session model every native reader produces (after cass's own model, see
 * reference/cass-contract.md §8), and the reader interface the native source drives.
 */

/** Agent identifiers as cass reports them in `agent` (hits) and `agent_slug` (conversations). */
export const AGENT_SLUGS = [
  "claude_code",
  "codex",
  "gemini",
  "aider",
  "cline",
  "opencode",
  "pi_agent",
  "chatgpt",
  "copilot",
  "amp",
  "generic",
] as const;
export type AgentSlug = (typeof AGENT_SLUGS)[number];

export interface NormalizedMessage {
  /** 0-based position among the conversation's kept messages. */
  idx: number;
  /** "user" | "assistant" | "system" | "tool" | … (lower case). */
  role: string;
  /** Model name, "reasoning", or null. */
  author: string | null;
  /** Milliseconds since the epoch, or null when the source has no time. */
  createdAt: number | null;
  /** Flattened text (tool calls and results rendered as text). */
  content: string;
  /** 1-based line of the source file where the message starts (1 for single-document JSON files). */
  lineNumber: number;
}

export interface NormalizedConversation {
  /**
   * The agent that wrote the session: the reader's slug, or for generic transcripts the agent the
   * file names itself (`agent` / `agentSlug` fields), normalised to a slug.
   */
  agent: AgentSlug | (string & {});
  /** The session's own id when it has one. */
  externalId: string | null;
  title: string | null;
  /** Absolute project directory the session worked in, when known. */
  workspace: string | null;
  /** The file a hit points to (the session file; for OpenCode the session JSON). */
  sourcePath: string;
  startedAt: number | null;
  endedAt: number | null;
  messages: NormalizedMessage[];
}

/** One session file (or session directory) found under a root. */
export interface SessionFileRef {
  agent: AgentSlug;
  path: string;
  /** Modification time and size, for index invalidation. */
  mtimeMs: number;
  size: number;
}

export interface DiscoveryEnv {
  home: string;
  env: Readonly<Record<string, string | undefined>>;
  platform: NodeJS.Platform;
}

/**
 * A reader of one agent's session format. Readers never throw on bad data: malformed lines and
 * records are skipped, and a file that is not a session reads as an empty list.
 */
export interface SessionReader {
  readonly agent: AgentSlug;
  /** Default discovery roots for this agent (env overrides first, then the usual locations). */
  defaultRoots(ctx: DiscoveryEnv): string[];
  /** The agent's session files under a root (missing roots yield nothing). */
  discover(root: string): Promise<SessionFileRef[]>;
  /** Parses one session file. */
  read(ref: SessionFileRef): Promise<NormalizedConversation[]>;
}
