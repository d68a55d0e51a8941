import { z } from "zod";
import { AppError } from "../errors.js";
import { agentFromSessionPath, newBullet } from "../domain/curator.js";
import { defineOperation } from "../operation.js";
import type { OperationDeps } from "../ports.js";
import type { Bullet } from "../schemas/playbook.js";
import { BulletOutputSchema } from "./playbook-list.js";
import { mutatePlaybookJournaled } from "./shared.js";

export const PlaybookAddInputSchema = z.object({
  content: z.string().optional(),
  /** Default category (`general` when absent); batch items may carry their own. */
  category: z.string().optional(),
  session: z.string().optional(),
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
});
export type PlaybookAddInput = z.input<typeof PlaybookAddInputSchema>;

const SingleResultSchema = z.object({
  bullet: BulletOutputSchema,
  target: z.literal("global"),
  targetPath: z.string(),
});

const BatchResultSchema = z.object({
  success: z.boolean(),
  added: z.array(z.object({ id: z.string(), content: z.string(), category: z.string() })),
  skipped: z.array(z.object({ content: z.string(), reason: z.string() })),
  failed: z.array(z.object({ content: z.string(), error: z.string() })),
  summary: z.object({ total: z.number(), succeeded: z.number(), skipped: z.number(), failed: z.number() }),
  target: z.literal("global"),
  targetPath: z.string(),
});

export const PlaybookAddResultSchema = z.union([SingleResultSchema, BatchResultSchema]);
export type PlaybookAddSingleResult = z.output<typeof SingleResultSchema>;
export type PlaybookAddBatchResult = z.output<typeof BatchResultSchema>;

const BatchItemSchema = z.object({
  content: z.string().trim().min(1, "content must be a non-empty string"),
  category: z.string().trim().min(1).optional(),
});

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
  async run(deps, input): Promise<PlaybookAddSingleResult | PlaybookAddBatchResult> {
    const targetPath = deps.store.locations.globalPlaybook;
    if (input.batch) return addBatch(deps, input.batch, input.category, input.session, targetPath);

    const content = input.content?.trim() ?? "";
    if (content === "") {
      throw new AppError("MISSING_REQUIRED", "Content argument required unless using --file", {
        hint: `${deps.cliName} playbook add "<rule>" --category <category>`,
        details: { missing: "content", usage: `${deps.cliName} playbook add <content> [--file <path>]` },
      });
    }
    const bullet = makeManualBullet(deps, content, input.category, input.session);
    await mutatePlaybookJournaled(deps, "global", { operation: "add" }, (playbook) => {
      playbook.bullets.push(bullet);
    });
    return { bullet, target: "global", targetPath };
  },
});

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

async function addBatch(
  deps: OperationDeps,
  batch: { source: string; text: string | null; readError?: string | undefined },
  defaultCategory: string | undefined,
  session: string | undefined,
  targetPath: string,
): Promise<PlaybookAddBatchResult> {
  const result: PlaybookAddBatchResult = {
    success: true,
    added: [],
    skipped: [],
    failed: [],
    summary: { total: 0, succeeded: 0, skipped: 0, failed: 0 },
    target: "global",
    targetPath,
  };
  const fail = (content: string, error: string) => {
    result.failed.push({ content, error });
  };

  let items: unknown[] | null = null;
  if (batch.readError !== undefined || batch.text === null) {
    fail(`[file: ${batch.source}]`, `Failed to read input: ${batch.readError ?? "no input"}`);
  } else {
    try {
      const parsed: unknown = JSON.parse(batch.text);
      if (Array.isArray(parsed)) items = parsed;
      else fail("[input]", "Input must be a JSON array of {content, category?} objects");
    } catch (error) {
      fail("[input]", `Invalid JSON: ${(error as Error).message}`);
    }
  }

  const bullets: Bullet[] = [];
  for (const item of items ?? []) {
    const parsed = BatchItemSchema.safeParse(item);
    if (!parsed.success) {
      const content = typeof (item as { content?: unknown })?.content === "string" ? (item as { content: string }).content : JSON.stringify(item);
      fail(content ?? "[item]", parsed.error.issues.map((i) => (i.path.length ? `${i.path.join(".")}: ${i.message}` : i.message)).join("; "));
      continue;
    }
    bullets.push(makeManualBullet(deps, parsed.data.content, parsed.data.category ?? defaultCategory, session));
  }
  if (bullets.length > 0) {
    await mutatePlaybookJournaled(deps, "global", { operation: "add" }, (playbook) => {
      playbook.bullets.push(...bullets);
    });
  }
  result.added = bullets.map((b) => ({ id: b.id, content: b.content, category: b.category }));
  result.summary = {
    total: items === null ? result.failed.length : items.length,
    succeeded: result.added.length,
    skipped: result.skipped.length,
    failed: result.failed.length,
  };
  result.success = result.failed.length === 0;
  return result;
}
