import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Runtime } from "@cass-memory/runtime";
import { startDashboardServer, type DashboardServerHandle } from "../src/server/index.js";
import { DAY, expectedScore, fakeUiDir, raw, seed, tempDir, testRuntime, type Seed } from "./helpers.js";

const TOKEN = "test-token-0123456789abcdef";
const AUTH = { authorization: `Bearer ${TOKEN}` };

for (const backend of ["yaml", "sqlite"] as const) {
  describe(`dashboard API over the ${backend} store`, () => {
    let tmp: ReturnType<typeof tempDir>;
    let rt: Runtime;
    let data: Seed;
    let server: DashboardServerHandle;
    let port: number;

    const get = async (path: string) => {
      const res = await raw(port, "GET", `/dashboard/api/${path}`, AUTH);
      expect(res.headers["content-type"]).toBe("application/json; charset=utf-8");
      expect(res.headers["cache-control"]).toBe("no-store");
      return res;
    };
    const data200 = async (path: string) => {
      const res = await get(path);
      expect(res.status, res.text).toBe(200);
      const body = res.json();
      expect(body.ok).toBe(true);
      return body.data;
    };
    const post = (action: string, body: unknown) =>
      raw(port, "POST", `/dashboard/api/actions/${action}`, { ...AUTH, "content-type": "application/json" }, JSON.stringify(body));

    beforeAll(async () => {
      tmp = tempDir("cm-dash-");
      rt = await testRuntime(tmp.dir, backend);
      data = await seed(rt);
      server = await startDashboardServer({
        deps: rt.deps,
        uiDir: fakeUiDir(tmp.dir),
        token: TOKEN,
        store: { backend: rt.storage.backend },
        log: () => undefined,
      });
      port = server.port;
    });
    afterAll(async () => {
      await server?.close();
      rt?.close();
      tmp?.cleanup();
    });

    it("overview: counts, score histogram and feedback totals", async () => {
      const o = await data200("overview");
      expect(o.store.backend).toBe(backend);
      const all = data.bullets;
      const active = all.filter((b) => !b.deprecated && b.maturity !== "deprecated" && b.state !== "retired");
      expect(o.counts.total).toBe(all.length);
      expect(o.counts.active).toBe(active.length);
      expect(o.counts.byMaturity).toEqual({ proven: 1, established: 1, candidate: 7, deprecated: 1 });
      expect(o.counts.byCategory).toEqual({ testing: 1, git: 1, build: 1, tooling: 3, ops: 1, database: 2, ci: 1 });
      // Each active rule in the bin its independently computed score falls into.
      const expectedBins = new Map<string, number>();
      for (const b of active) {
        const s = expectedScore(b, Date.now());
        const bin = (o.scoreHistogram as Array<{ from: number | null; to: number | null }>).find((x) => (x.from === null || s >= x.from) && (x.to === null || s < x.to))!;
        const key = `${bin.from}`;
        expectedBins.set(key, (expectedBins.get(key) ?? 0) + 1);
      }
      for (const bin of o.scoreHistogram) expect(bin.count).toBe(expectedBins.get(`${bin.from}`) ?? 0);
      expect(o.scoreHistogram.find((b: { from: number }) => b.from === 2).count).toBe(1);
      expect(o.scoreHistogram.find((b: { from: number }) => b.from === -5).count).toBe(1);
      expect(o.feedback).toEqual({ helpful: 5, harmful: 1, last7Days: { helpful: 2, harmful: 1 } });
    });

    it("rules: sorted by score, searchable, filterable, paginated", async () => {
      const list = await data200("rules?limit=500");
      expect(list).toMatchObject({ total: 10, offset: 0, limit: 500 });
      expect(list.items[0].id).toBe("r-good");
      expect(list.items[0].score).toBeCloseTo(expectedScore(data.bullets[0]!, Date.now()), 1);
      expect(list.items.at(-1).id).toBe("r-bad");
      const scores = list.items.map((r: { score: number }) => r.score);
      expect(scores).toEqual([...scores].sort((a, b) => b - a));
      expect((await data200("rules?q=PNPM")).items.map((r: { id: string }) => r.id).sort()).toEqual(["r-dup1", "r-dup2", "r-run"]);
      expect((await data200("rules?q=ci")).items.map((r: { id: string }) => r.id).sort()).toEqual(["r-good", "r-run"]); // tag, category
      expect((await data200("rules?state=deprecated")).items.map((r: { id: string }) => r.id)).toEqual(["r-old"]);
      expect((await data200("rules?category=tooling&sort=created&order=asc")).items.map((r: { id: string }) => r.id)).toEqual(["r-old", "r-dup1", "r-dup2"]);
      const page = await data200("rules?offset=8&limit=5&sort=harmful");
      expect(page).toMatchObject({ total: 10, offset: 8, limit: 5 });
      expect(page.items).toHaveLength(2);
      for (const q of ["limit=501", "limit=0", "offset=-1", "limit=abc", "sort=bogus", "order=up"]) {
        const res = await get(`rules?${q}`);
        expect(res.status, q).toBe(400);
        expect(res.json().error.code).toBe("INVALID_INPUT");
      }
    });

    it("rule detail: score series, events and journal; 404 for an unknown id", async () => {
      const d = await data200("rules/r-good");
      expect(d.rule.id).toBe("r-good");
      expect(d.events.map((e: { type: string }) => e.type)).toEqual(["helpful", "helpful", "helpful"]);
      expect(d.scoreSeries.length).toBeLessThanOrEqual(200);
      expect(d.scoreSeries.at(-1).score).toBeCloseTo(expectedScore(data.bullets[0]!, Date.now()), 1);
      // At the oldest event only that event counts: 1 × proven 1.5.
      expect(d.scoreSeries.find((p: { at: string }) => p.at === d.events[0].at).score).toBe(1.5);
      const run = await data200("rules/r-run");
      expect(run.journal).toEqual([expect.objectContaining({ op: "curate", change: "created", runId: "run-1" })]);
      const missing = await get("rules/nope");
      expect(missing.status).toBe(404);
      expect(missing.json()).toMatchObject({ ok: false, error: { code: "BULLET_NOT_FOUND" } });
    });

    it("risk, duplicates, runs, traumas and context log", async () => {
      const risk = await data200("risk");
      expect(risk.atRisk.map((r: { id: string }) => r.id)).toEqual(["r-bad"]);
      expect(risk.stale.map((r: { id: string; daysSinceFeedback: number }) => [r.id, r.daysSinceFeedback])).toEqual([["r-stale", 200]]);
      expect(risk.expiring.map((r: { id: string; expiresInDays: number }) => [r.id, r.expiresInDays])).toEqual([["r-exp", 10]]);
      expect(risk.totals).toEqual({ atRisk: 1, stale: 1, expiring: 1 });
      expect(risk.limit).toBe(200);
      expect((await get("risk?limit=0")).status).toBe(400);

      const dup = await data200("duplicates");
      expect(dup.pairs.map((p: { a: { id: string }; b: { id: string } }) => [p.a.id, p.b.id].sort())).toEqual([["r-dup1", "r-dup2"]]);
      // The curator's heuristics (term overlap + opposite directives) find the always/never pair among others.
      const conflictPairs = dup.conflicts.map((p: { a: { id: string }; b: { id: string } }) => [p.a.id, p.b.id].sort().join("+"));
      expect(conflictPairs).toContain("r-c1+r-c2");
      expect(dup.conflicts.find((p: { a: { id: string }; b: { id: string } }) => [p.a.id, p.b.id].sort().join("+") === "r-c1+r-c2").reason).toMatch(/negation/);

      const runs = await data200("runs");
      expect(runs.total).toBe(1);
      expect(runs.items[0]).toMatchObject({ runId: "run-1", mode: "deterministic", sessions: ["/s/one.jsonl"], added: ["r-run"], updated: [], removed: [], reverted: false });

      const traumas = await data200("traumas");
      expect(traumas.total).toBe(1);
      expect(traumas.items[0]).toMatchObject({ pattern: String.raw`rm\s+-rf\s+/`, status: "active", severity: "CRITICAL" });

      const log = await data200("context-log");
      expect(log.items.map((e: { task: string }) => e.task)).toEqual(["rebase my branch", "fix the flaky test"]);
      expect(log.items[0].returned.map((r: { id: string }) => r.id)).toEqual(["r-good", "r-bad"]);
      expect(log.items[0].markedAfter.map((m: { id: string; type: string }) => [m.id, m.type])).toEqual([["r-bad", "harmful"], ["r-good", "helpful"]]);
      expect(log.items[1].markedAfter.map((m: { id: string; type: string }) => [m.id, m.type])).toEqual([["r-good", "helpful"]]);
    });

    it("actions go through the operations and the journal (actor 'dashboard')", async () => {
      const mark = await post("mark", { id: "r-dup1", type: "helpful", reason: "saved time", confirm: true });
      expect(mark.status, mark.text).toBe(200);
      expect(mark.json().data).toMatchObject({ bulletId: "r-dup1", type: "helpful" });
      const fresh = await testRuntime(tmp.dir, backend);
      try {
        const pb = await fresh.deps.store.readPlaybook("global");
        const b = pb!.bullets.find((x) => x.id === "r-dup1")!;
        expect(b.helpfulCount).toBe(1);
        expect(b.feedbackEvents.map((e) => [e.type, e.context])).toEqual([["helpful", "saved time"]]); // helpful reasons are kept as context
        const journal = await fresh.deps.store.readJournal("global");
        expect(journal.at(-1)).toMatchObject({ bulletId: "r-dup1", operation: "feedback", actor: "dashboard" });
      } finally {
        fresh.close();
      }

      expect((await post("pin", { id: "r-dup2", pinned: true, reason: "team rule", confirm: true })).json().data).toMatchObject({ pinned: true, changed: true });
      expect((await post("category", { id: "r-dup2", category: "pnpm", confirm: true })).json().data).toMatchObject({ previousCategory: "tooling", category: "pnpm" });
      const detail = await data200("rules/r-dup2");
      expect([detail.rule.pinned, detail.rule.pinnedReason, detail.rule.category]).toEqual([true, "team rule", "pnpm"]);
      expect(detail.journal.map((j: { op: string; actor: string }) => [j.op, j.actor])).toEqual([["update", "dashboard"], ["update", "dashboard"]]);

      const forget = await post("forget", { id: "r-stale", reason: "no makefiles any more", confirm: true });
      expect(forget.status, forget.text).toBe(200);
      expect((await data200("rules/r-stale")).rule).toMatchObject({ deprecated: true, active: false, deprecationReason: "no makefiles any more" });
      const undoForget = await post("undo", { id: "r-stale", confirm: true });
      expect(undoForget.status, undoForget.text).toBe(200);
      expect((await data200("rules/r-stale")).rule).toMatchObject({ deprecated: false, active: true });
      const noReason = await post("forget", { id: "r-c1", confirm: true });
      expect(noReason.status).toBe(400);
      expect(noReason.json().error.code).toBe("MISSING_REQUIRED");

      const undoMark = await post("undo", { id: "r-dup1", feedback: true, confirm: true });
      expect(undoMark.status, undoMark.text).toBe(200);
      expect((await data200("rules/r-dup1")).rule.helpfulCount).toBe(0);

      const unknown = await post("mark", { id: "nope", type: "helpful", confirm: true });
      expect(unknown.status).toBe(404);
      const badType = await post("mark", { id: "r-dup1", type: "meh", confirm: true });
      expect(badType.status).toBe(400);
    });

    it("undo-run via the API removes what the run added and marks it reverted", async () => {
      const res = await post("undo-run", { runId: "run-1", confirm: true });
      expect(res.status, res.text).toBe(200);
      expect(res.json().data).toMatchObject({ runId: "run-1", removed: ["r-run"] });
      const runs = await data200("runs");
      expect(runs.items[0]).toMatchObject({ runId: "run-1", reverted: true });
      expect((await get("rules/r-run")).status).toBe(404);
      const again = await post("undo-run", { runId: "run-1", confirm: true });
      expect(again.status).toBe(400);
    });
  });
}

describe("dashboard security and static files", () => {
  let tmp: ReturnType<typeof tempDir>;
  let rt: Runtime;
  let server: DashboardServerHandle;
  let port: number;

  beforeAll(async () => {
    tmp = tempDir("cm-dash-sec-");
    rt = await testRuntime(tmp.dir, "yaml");
    await seed(rt);
    server = await startDashboardServer({ deps: rt.deps, uiDir: fakeUiDir(tmp.dir), token: TOKEN, log: () => undefined });
    port = server.port;
  });
  afterAll(async () => {
    await server?.close();
    rt?.close();
    tmp?.cleanup();
  });

  it("prints a URL carrying the token in the fragment, on 127.0.0.1", () => {
    expect(server.url).toBe(`http://127.0.0.1:${port}/dashboard/#token=${TOKEN}`);
  });

  it("401 without a token or with a wrong one, on every API path", async () => {
    for (const path of ["overview", "rules", "rules/r-good", "risk", "actions/mark"]) {
      const none = await raw(port, "GET", `/dashboard/api/${path}`);
      expect(none.status, path).toBe(401);
      expect(none.json()).toMatchObject({ ok: false, error: { code: "UNAUTHORIZED" } });
      const wrong = await raw(port, "GET", `/dashboard/api/${path}`, { authorization: "Bearer nope" });
      expect(wrong.status).toBe(401);
    }
    expect((await raw(port, "GET", "/dashboard/api/overview", { "x-mcp-token": TOKEN })).status).toBe(200);
  });

  it("403 for a foreign Host or Origin, also with the token", async () => {
    const host = await raw(port, "GET", "/dashboard/api/overview", { ...AUTH, host: `evil.example:${port}` });
    expect(host.status).toBe(403);
    expect(host.json().error.code).toBe("FORBIDDEN");
    expect((await raw(port, "GET", "/dashboard/api/overview", { ...AUTH, host: "127.0.0.1:1" })).status).toBe(403);
    const origin = await raw(port, "POST", "/dashboard/api/actions/mark", { ...AUTH, origin: "http://evil.example", "content-type": "application/json" }, JSON.stringify({ id: "r-good", type: "harmful", confirm: true }));
    expect(origin.status).toBe(403);
    expect((await raw(port, "GET", "/dashboard/", { host: `evil.example:${port}` })).status).toBe(403);
    expect((await raw(port, "GET", "/dashboard/api/overview", { ...AUTH, origin: `http://localhost:${port}`, host: `localhost:${port}` })).status).toBe(200);
  });

  it("mutations need POST, a JSON content type, confirm: true and a small body", async () => {
    const body = JSON.stringify({ id: "r-good", type: "harmful" });
    const noConfirm = await raw(port, "POST", "/dashboard/api/actions/mark", { ...AUTH, "content-type": "application/json" }, body);
    expect(noConfirm.status).toBe(400);
    expect(noConfirm.json().error.code).toBe("CONFIRMATION_REQUIRED");
    const falseConfirm = await raw(port, "POST", "/dashboard/api/actions/mark", { ...AUTH, "content-type": "application/json" }, JSON.stringify({ id: "r-good", type: "harmful", confirm: "true" }));
    expect(falseConfirm.status).toBe(400);
    const form = await raw(port, "POST", "/dashboard/api/actions/mark", { ...AUTH, "content-type": "text/plain" }, JSON.stringify({ id: "r-good", type: "harmful", confirm: true }));
    expect(form.status).toBe(415);
    const none = await raw(port, "POST", "/dashboard/api/actions/mark", AUTH, JSON.stringify({ id: "r-good", type: "harmful", confirm: true }));
    expect(none.status).toBe(415);
    const get = await raw(port, "GET", "/dashboard/api/actions/mark", AUTH);
    expect(get.status).toBe(405);
    const big = await raw(port, "POST", "/dashboard/api/actions/mark", { ...AUTH, "content-type": "application/json" }, JSON.stringify({ id: "r-good", type: "harmful", reason: "x".repeat(70_000), confirm: true }));
    expect(big.status).toBe(413);
    const notJson = await raw(port, "POST", "/dashboard/api/actions/mark", { ...AUTH, "content-type": "application/json" }, "{nope");
    expect(notJson.status).toBe(400);
    const deep = await raw(port, "POST", "/dashboard/api/actions/mark", { ...AUTH, "content-type": "application/json" }, "[".repeat(100) + "]".repeat(100));
    expect(deep.status).toBe(400);
    // None of these changed anything.
    const pb = await rt.deps.store.readPlaybook("global");
    expect(pb!.bullets.find((b) => b.id === "r-good")!.harmfulCount).toBe(0);
    expect((await raw(port, "GET", "/dashboard/api/nope", AUTH)).status).toBe(404);
    expect((await raw(port, "POST", "/dashboard/api/actions/nope", { ...AUTH, "content-type": "application/json" }, '{"confirm":true}')).status).toBe(404);
  });

  it("serves the page without a token, with security headers; redirects /dashboard", async () => {
    const page = await raw(port, "GET", "/dashboard/");
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(page.headers["content-security-policy"]).toContain("default-src 'self'");
    expect(page.headers["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(page.headers["x-content-type-options"]).toBe("nosniff");
    expect(page.headers["referrer-policy"]).toBe("no-referrer");
    expect(page.text).toContain("<title>dash</title>");
    const js = await raw(port, "GET", "/dashboard/assets/app.js");
    expect([js.status, js.headers["content-type"]]).toEqual([200, "text/javascript; charset=utf-8"]);
    const css = await raw(port, "GET", "/dashboard/assets/app.css");
    expect([css.status, css.headers["content-type"]]).toEqual([200, "text/css; charset=utf-8"]);
    const redirect = await raw(port, "GET", "/dashboard?x=1");
    expect([redirect.status, redirect.headers.location]).toEqual([308, "/dashboard/?x=1"]);
    expect((await raw(port, "POST", "/dashboard/")).status).toBe(405);
    expect((await raw(port, "GET", "/elsewhere")).status).toBe(404);
  });

  it("path traversal cannot reach files outside the ui directory", async () => {
    for (const path of [
      "/dashboard/assets/../../secret.txt",
      "/dashboard/assets/..%2f..%2fsecret.txt",
      "/dashboard/assets/%2e%2e/%2e%2e/secret.txt",
      "/dashboard/../secret.txt",
      "/dashboard/assets/../index.html",
      "/dashboard//etc/passwd",
      "/dashboard/assets/..\\..\\secret.txt",
      "/dashboard/assets/nope.js",
    ]) {
      const res = await raw(port, "GET", path);
      expect(res.status, path).toBe(404);
      expect(res.text).not.toContain("do not serve me");
    }
  });
});

describe("page not built yet", () => {
  it("404 with a hint until the ui directory has files, then serves them without a restart", async () => {
    const tmp = tempDir("cm-dash-noui-");
    const rt = await testRuntime(tmp.dir, "yaml");
    const server = await startDashboardServer({ deps: rt.deps, uiDir: `${tmp.dir}/ui`, token: TOKEN, log: () => undefined });
    try {
      const before = await raw(server.port, "GET", "/dashboard/");
      expect(before.status).toBe(404);
      expect(before.json().error.hint).toMatch(/build/);
      fakeUiDir(tmp.dir);
      expect((await raw(server.port, "GET", "/dashboard/")).status).toBe(200);
    } finally {
      await server.close();
      rt.close();
      tmp.cleanup();
    }
  });
});

describe("score series sampling", () => {
  it("has at most 200 points for a rule with many events", async () => {
    const tmp = tempDir("cm-dash-series-");
    const rt = await testRuntime(tmp.dir, "yaml");
    const { createTestBullet } = await import("@cass-memory/core/testing");
    const now = Date.now();
    const events = Array.from({ length: 600 }, (_, i) => ({ type: (i % 5 === 0 ? "harmful" : "helpful") as "helpful" | "harmful", timestamp: new Date(now - (i + 1) * DAY / 4).toISOString() }));
    await rt.deps.store.mutatePlaybook("global", (pb) => void pb.bullets.push(createTestBullet({ id: "r-many", feedbackEvents: events, createdAt: new Date(now - 200 * DAY).toISOString() })));
    const server = await startDashboardServer({ deps: rt.deps, uiDir: fakeUiDir(tmp.dir), token: TOKEN, log: () => undefined });
    try {
      const res = await raw(server.port, "GET", "/dashboard/api/rules/r-many", AUTH);
      const d = res.json().data;
      expect(d.events).toHaveLength(600);
      expect(d.scoreSeries.length).toBeLessThanOrEqual(200);
      expect(d.scoreSeries.length).toBeGreaterThan(100);
      const times = d.scoreSeries.map((p: { at: string }) => Date.parse(p.at));
      expect(times).toEqual([...times].sort((a, b) => a - b));
    } finally {
      await server.close();
      rt.close();
      tmp.cleanup();
    }
  });
});
