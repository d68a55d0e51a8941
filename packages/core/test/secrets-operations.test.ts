import { describe, expect, it } from "vitest";
import { runOperation } from "../src/operation.js";
import { forgetOperation } from "../src/operations/forget.js";
import { initOperation } from "../src/operations/init.js";
import { markOperation } from "../src/operations/mark.js";
import { playbookAddOperation, rememberOperation } from "../src/operations/playbook-add.js";
import { playbookImportOperation } from "../src/operations/playbook-import.js";
import { playbookRemoveOperation } from "../src/operations/playbook-remove.js";
import { createTestDeps } from "../src/testing/fakes.js";
import { createMemoryStore } from "../src/testing/memory-store.js";
import { redactingTransfer } from "../src/storage/redact-transfer.js";
import { expectAppError } from "./support.js";

// Refusal on the way in (issue 21), at the operation level with the in-memory store: the error
// names the kind, never the value, and nothing is written (playbook and journal alike).
const j = (...parts: string[]) => parts.join("");
const GH = j("gh", "p_", "Q7w2E1r4T6y8U0i2O4p6A8s0D2f4G6h8J0k2");
const AWS_SECRET = j("wJalrXUtnFEMI/K7MDENG/", "bPxRfiCYzq8KEYv4Ab1X");

async function setup() {
  const store = createMemoryStore({ repo: false, now: () => "2026-01-01T00:00:00.000Z" });
  const deps = createTestDeps(store);
  await runOperation(initOperation, deps, {});
  return { deps, store };
}

describe("secrets refused on the way in", () => {
  it("refuses rule content, tags, evidence and batch items; writes nothing; never echoes the value", async () => {
    const { deps, store } = await setup();
    const journal = async () => JSON.stringify(await store.readJournal("global"));
    const before = { playbook: JSON.stringify(await store.readPlaybook("global")), journal: await journal() };
    const attempts = [
      runOperation(playbookAddOperation, deps, { content: `clone with ${GH}` }),
      runOperation(rememberOperation, deps, { content: "Rotate keys", tags: ["ops", AWS_SECRET] }),
      runOperation(rememberOperation, deps, { content: "Rotate keys", evidence: [`log:deploy.log:aws_secret_access_key=${AWS_SECRET}`] }),
      runOperation(playbookAddOperation, deps, { batch: { source: "rules.json", text: JSON.stringify([{ content: "fine" }, { content: `token ${GH}` }]) } }),
    ];
    for (const attempt of attempts) {
      const error = await expectAppError(attempt, "SECRET_DETECTED");
      expect(error.exitCode).toBe(2);
      expect(error.hint).toMatch(/placeholder such as <API_KEY>/);
      const shown = JSON.stringify({ message: error.message, hint: error.hint, details: error.details });
      expect(shown).not.toContain(GH);
      expect(shown).not.toContain(AWS_SECRET);
    }
    expect(JSON.stringify(await store.readPlaybook("global"))).toBe(before.playbook);
    expect(await journal()).toBe(before.journal);
  });

  it("refuses secrets in mark, forget and remove reasons; respects sanitization.enabled and the allowlist", async () => {
    const { deps } = await setup();
    const added = (await runOperation(playbookAddOperation, deps, { content: "Run the linter before pushing" })) as { bullet: { id: string } };
    const id = added.bullet.id;
    const bad = `POSTGRES_PASSWORD=Pg9x!Tq7Lm2Vw`;
    const e1 = await expectAppError(runOperation(markOperation, deps, { bulletId: id, harmful: true, reason: bad }), "SECRET_DETECTED");
    expect(e1.details).toEqual({ field: "reason", kinds: ["secret_assignment"] });
    await expectAppError(runOperation(forgetOperation, deps, { bulletId: id, reason: bad }), "SECRET_DETECTED");
    await expectAppError(runOperation(playbookRemoveOperation, deps, { id, reason: bad }), "SECRET_DETECTED");
    // The allowlist makes a known-harmless value acceptable.
    const allowed = { ...deps, config: { ...deps.config, sanitization: { ...deps.config.sanitization, allowlist: ["Pg9x!Tq7Lm2Vw"] } } };
    await expect(runOperation(markOperation, allowed, { bulletId: id, harmful: true, reason: bad })).resolves.toMatchObject({ type: "harmful" });
  });

  it("imports redact and count instead of failing; a migration source reads redacted", async () => {
    const { deps, store } = await setup();
    const result = await runOperation(playbookImportOperation, deps, { file: "/in.json", data: [{ content: `Deploy with ${GH}`, category: "ops" }] });
    expect(result.added).toBe(1);
    expect(result.secretsRedacted).toEqual({ total: 1, byKind: { github_pat: 1 } });
    const stored = JSON.stringify(await store.readPlaybook("global"));
    expect(stored).not.toContain(GH);
    expect(stored).toContain("[GITHUB_PAT]");
    // A source holding a secret (written with sanitization off) reads redacted through redactingTransfer.
    const off = { ...deps, config: { ...deps.config, sanitization: { ...deps.config.sanitization, enabled: false } } };
    await runOperation(playbookAddOperation, off, { content: `Use ${GH} in CI` });
    const transfer = redactingTransfer(store.transfer!, deps.config);
    const section = await transfer.readSection("global/playbook");
    expect(JSON.stringify(section)).not.toContain(GH);
    expect(transfer.tally().byKind.github_pat).toBe(1);
  });
});
