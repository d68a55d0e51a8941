import * as z from "zod";
import { AppError } from "../errors.js";
import { agentFromSessionPath, newBullet } from "../domain/curator.js";
import { defineOperation } from "../operation.js";
import { parseEvidenceSpec, parseValidityDate, validateVerification, verificationFromFlags } from "../domain/verification.js";
import type { Layer, OperationDeps } from "../ports.js";
import { EvidenceSchema, VerificationSchema, type Bullet, type Evidence, type Verification } from "../schemas/playbook.js";
import { BulletOutputSchema } from "./playbook-list.js";
import { mutatePlaybookJournaled } from "./shared.js";
import { recordSessionRules } from "./onboard.js";
import { refuseRandomLabels, refuseSecrets } from "./secret-guard.js";
import { inputLimitsOf, overLimitMessage, requireWithinLimit, utf8Bytes } from "../domain/input-limits.js";
import { MAX_JSON_DEPTH, jsonNestedDeeperThan } from "../domain/json-depth.js";
import { lazySchema } from "../schemas/lazy.js";

export const PlaybookAddInputSchema = lazySchema(() => z.object({
  content: z.string().optional(),
  /** Default category (`general` when absent); batch items may carry their own. */
  category: z.string().optional(),
  session: z.string().optional(),
  tags: z.array(z.string()).optional(),
  /** Evidence as `<type>:<uri>[:<note>]` strings (CLI) or objects. */
  evidence: z.array(z.union([z.string(), EvidenceSchema])).optional(),
  /** A structured verification check, or the CLI's flags below (not both). */
  verification: VerificationSchema.optional(),
  verifyFile: z.string().optional(),
  verifyRegex: z.string().optional(),
  verifyAbsent: z.boolean().optional(),
  /** Validity window: ISO date/time, YYYY-MM-DD, or `<n>d` from now. */
  validFrom: z.string().optional(),
  validTo: z.string().optional(),
  /** Add to the repository's `.cass/playbook.yaml` instead of the global playbook. */
  repo: z.boolean().optional(),
  /**
   * Batch mode (`--file <path|->`): the front end reads the file or stdin and passes its text, or
   * the read error. Parsing and per-item validation happen here.
   */
  batch: z
    .object({
      source: z.string(),
      text: z.string().nullable(),
      readError: z.string().optional(),
    })
    .optional(),
}));
export type PlaybookAddInput = z.input<typeof PlaybookAddInputSchema>;

const TargetSchema = lazySchema(() => z.enum(["global", "repo"]));

const SingleResultSchema = lazySchema(() => z.object({
  bullet: BulletOutputSchema,
  target: TargetSchema,
  targetPath: z.string(),
}));

const BatchResultSchema = lazySchema(() => z.object({
  success: z.boolean(),
  added: z.array(z.object({ id: z.string(), content: z.string(), category: z.string() })),
  skipped: z.array(z.object({ content: z.string(), reason: z.string() })),
  failed: z.array(z.object({ content: z.string(), error: z.string() })),
  summary: z.object({ total: z.number(), succeeded: z.number(), skipped: z.number(), failed: z.number() }),
  target: TargetSchema,
  targetPath: z.string(),
}));

export const PlaybookAddResultSchema = lazySchema(() => z.union([SingleResultSchema, BatchResultSchema]));
export type PlaybookAddSingleResult = z.output<typeof SingleResultSchema>;
export type PlaybookAddBatchResult = z.output<typeof BatchResultSchema>;

const BatchItemSchema = lazySchema(() => z.object({
  content: z.string().trim().min(1, "content must be a non-empty string"),
  category: z.string().trim().min(1).optional(),
}));

/**
 * `cm playbook add "<rule>"` / `--file`: adds rules to the global playbook (reference §1.5.5).
 * A batch is written in one locked read-modify-write, so it lands whole or not at all.
 */
export const playbookAddOperation = defineOperation({
  name: "playbook_add",
  command: "playbook:add",
  description: "Add a rule to the global playbook.",
  input: PlaybookAddInputSchema,
  output: PlaybookAddResultSchema,
  run: (deps, input) => addRules(deps, input, "playbook add"),
});

/**
 * `cm remember "<rule>"`: the verb other memory tools use for adding a rule, with its evidence,
 * verification check and validity window. Same behaviour and result as `playbook add`.
 */
export const rememberOperation = defineOperation({
  name: "memory_remember",
  command: "remember",
  description:
    "Remember a rule in the playbook, optionally with evidence (where it comes from), a verification check against the workspace, and a validity window.",
  input: PlaybookAddInputSchema,
  output: PlaybookAddResultSchema,
  run: (deps, input) => addRules(deps, input, "remember"),
});

/** Provenance fields of a single add, validated once for both verbs. */
interface Provenance {
  tags?: string[];
  evidence?: Evidence[];
  verification?: Verification;
  validFrom?: string;
  validTo?: string;
}

function provenanceOf(deps: OperationDeps, input: PlaybookAddInput): Provenance {
  const now = deps.clock.now();
  const out: Provenance = {};
  const tags = (input.tags ?? []).map((t) => t.trim()).filter((t) => t !== "");
  if (tags.length > 0) out.tags = [...new Set(tags)];
  if (input.evidence && input.evidence.length > 0) {
    out.evidence = input.evidence.map((e) => (typeof e === "string" ? parseEvidenceSpec(e) : e));
  }
  const fromFlags = verificationFromFlags({
    ...(input.verifyFile !== undefined ? { file: input.verifyFile } : {}),
    ...(input.verifyRegex !== undefined ? { regex: input.verifyRegex } : {}),
    ...(input.verifyAbsent ? { absent: true } : {}),
  });
  if (fromFlags && input.verification) {
    throw new AppError("INVALID_INPUT", "Give the verification either as an object or with the --verify-* flags, not both", {
      details: { field: "verification" },
    });
  }
  const verification = fromFlags ?? (input.verification ? validateVerification(VerificationSchema.parse(input.verification)) : undefined);
  if (verification) out.verification = verification;
  if (input.validFrom !== undefined) out.validFrom = parseValidityDate("validFrom", input.validFrom, now);
  if (input.validTo !== undefined) out.validTo = parseValidityDate("validTo", input.validTo, now);
  if (out.validFrom !== undefined && out.validTo !== undefined && Date.parse(out.validTo) <= Date.parse(out.validFrom)) {
    throw new AppError("INVALID_INPUT", "validTo must be later than validFrom", {
      details: { validFrom: out.validFrom, validTo: out.validTo },
    });
  }
  return out;
}

async function addRules(
  deps: OperationDeps,
  input: PlaybookAddInput,
  verb: "playbook add" | "remember",
): Promise<PlaybookAddSingleResult | PlaybookAddBatchResult> {
  const layer: Layer = input.repo ? "repo" : "global";
  const targetPath = layer === "repo" ? deps.store.locations.repoPlaybook : deps.store.locations.globalPlaybook;
  if (targetPath === null) {
    throw new AppError("CONFIG_INVALID", "Not in a git repository. Run from within a git repo.", {
      hint: `cd into a git repository, or drop --repo to add to the global playbook`,
    });
  }
  requireWithinLimit("category", input.category, "categoryBytes", deps.config, "Use a short category name (testing, git, security).");
  if (input.batch) return addBatch(deps, input.batch, input.category, input.session, layer, targetPath);

  const content = input.content?.trim() ?? "";
  if (content === "") {
    throw new AppError("MISSING_REQUIRED", "Content argument required unless using --file", {
      hint: `${deps.cliName} ${verb} "<rule>" --category <category>`,
      details: { missing: "content", usage: `${deps.cliName} ${verb} <content> [--file <path>]` },
    });
  }
  requireWithinLimit("content", content, "ruleBytes", deps.config, "A rule is one imperative sentence or a short paragraph; split longer advice into several rules.");
  refuseSecrets(deps.config, "rule", { content, category: input.category, tags: input.tags, evidence: input.evidence });
  refuseRandomLabels(deps.config, "tags or category", [input.category, ...(input.tags ?? [])]);
  const bullet = { ...makeManualBullet(deps, content, input.category, input.session), ...provenanceOf(deps, input) };
  await mutatePlaybookJournaled(deps, layer, { operation: "add", ...(input.session ? { source: input.session } : {}) }, (playbook) => {
    playbook.bullets.push(bullet);
  });
  await recordOnboardingSession(deps, input.session, 1);
  return { bullet, target: layer, targetPath };
}

/**
 * `--session`: the session counts as mined for onboarding (reference §1.5.5). The rules are
 * already saved, so a failure here is reported as a warning, not as a failed add.
 */
async function recordOnboardingSession(deps: OperationDeps, session: string | undefined, added: number): Promise<void> {
  if (session === undefined || session.trim() === "" || added <= 0) return;
  try {
    await recordSessionRules(deps, session, added);
  } catch (error) {
    deps.logger.warn(`Rule added, but the session could not be recorded in the onboarding state: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * A rule added by hand. Its provenance is `manual-cli`, as in the original; with `--session` the
 * session it came from is recorded too (and its agent, read from the path), so `why` can show it.
 */
function makeManualBullet(deps: OperationDeps, content: string, category: string | undefined, session?: string): Bullet {
  const sessionPath = session?.trim();
  return newBullet(
    {
      content,
      category: category?.trim() || "general",
      scope: "global",
      kind: "workflow_rule",
      sourceSessions: sessionPath ? ["manual-cli", sessionPath] : ["manual-cli"],
      sourceAgents: [sessionPath ? agentFromSessionPath(sessionPath) : "unknown"],
    },
    { config: deps.config, now: deps.clock.now(), ids: deps.ids },
  );
}

/** A batch item over the content or category limit: the failure text, else null. */
function overLimitFailure(deps: OperationDeps, content: string, category: string | undefined): string | null {
  const limits = inputLimitsOf(deps.config);
  const contentBytes = utf8Bytes(content);
  if (contentBytes > limits.ruleBytes) return `${overLimitMessage("content", contentBytes, limits.ruleBytes)} (config inputLimits.ruleBytes)`;
  const categoryBytes = category === undefined ? 0 : utf8Bytes(category);
  if (categoryBytes > limits.categoryBytes) return `${overLimitMessage("category", categoryBytes, limits.categoryBytes)} (config inputLimits.categoryBytes)`;
  return null;
}

async function addBatch(
  deps: OperationDeps,
  batch: { source: string; text: string | null; readError?: string | undefined },
  defaultCategory: string | undefined,
  session: string | undefined,
  layer: Layer,
  targetPath: string,
): Promise<PlaybookAddBatchResult> {
  const result: PlaybookAddBatchResult = {
    success: true,
    added: [],
    skipped: [],
    failed: [],
    summary: { total: 0, succeeded: 0, skipped: 0, failed: 0 },
    target: layer,
    targetPath,
  };
  const fail = (content: string, error: string) => {
    result.failed.push({ content, error });
  };

  // A batch is all or nothing: an unreadable file, text that is not a JSON array, or any invalid
  // item stops it before anything is written.
  const example = `[{"content": "Run the linter before pushing", "category": "workflow"}]`;
  if (batch.readError !== undefined || batch.text === null) {
    throw new AppError("FILE_NOT_FOUND", `Could not read ${batch.source}: ${batch.readError ?? "no input"}`, {
      hint: `Pass a readable file (or '-' for stdin) holding a JSON array such as ${example}`,
      details: { file: batch.source },
    });
  }
  const invalidBatch = (message: string) =>
    new AppError("INVALID_INPUT", `${batch.source === "-" ? "stdin" : batch.source}: ${message}. Nothing was added.`, {
      hint: `The input must be a JSON array such as ${example}`,
      details: { file: batch.source },
    });
  if (jsonNestedDeeperThan(batch.text)) throw invalidBatch(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
  let items: unknown[];
  try {
    const parsed: unknown = JSON.parse(batch.text);
    if (!Array.isArray(parsed)) throw invalidBatch("expected a JSON array of {content, category?} objects");
    items = parsed;
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw invalidBatch(`invalid JSON (${(error as Error).message})`);
  }

  const bullets: Bullet[] = [];
  items.forEach((item, index) => {
    const parsed = BatchItemSchema.safeParse(item);
    if (!parsed.success) {
      const content = typeof (item as { content?: unknown })?.content === "string" ? (item as { content: string }).content.slice(0, 200) : `[item ${index + 1}]`;
      fail(content, parsed.error.issues.map((i) => (i.path.length ? `${i.path.join(".")}: ${i.message}` : i.message)).join("; "));
      return;
    }
    // A secret stops the whole batch at once; the failure list would otherwise echo it.
    refuseSecrets(deps.config, `rule in ${batch.source === "-" ? "stdin" : batch.source}`, parsed.data);
    const over = overLimitFailure(deps, parsed.data.content, parsed.data.category);
    if (over !== null) {
      fail(parsed.data.content.slice(0, 200), over);
      return;
    }
    bullets.push(makeManualBullet(deps, parsed.data.content, parsed.data.category ?? defaultCategory, session));
  });
  if (result.failed.length > 0) {
    throw new AppError("INVALID_INPUT", `${result.failed.length} of ${items.length} rules in ${batch.source === "-" ? "stdin" : batch.source} are invalid. Nothing was added.`, {
      hint: `Fix the listed items (each needs a non-empty "content" string; "category" is optional), then re-run.`,
      details: { file: batch.source, failed: result.failed },
    });
  }
  if (bullets.length > 0) {
    await mutatePlaybookJournaled(deps, layer, { operation: "add", source: batch.source }, (playbook) => {
      playbook.bullets.push(...bullets);
    });
  }
  result.added = bullets.map((b) => ({ id: b.id, content: b.content, category: b.category }));
  await recordOnboardingSession(deps, session, bullets.length);
  result.summary = {
    total: items.length,
    succeeded: result.added.length,
    skipped: result.skipped.length,
    failed: result.failed.length,
  };
  result.success = result.failed.length === 0;
  return result;
}
