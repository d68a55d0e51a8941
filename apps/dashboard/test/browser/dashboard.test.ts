// The dashboard page in a real Chromium against the real `cm dashboard` on a YAML home seeded through
// the CLI: every view shows the numbers the store holds (computed here from `cm playbook list`),
// a mark, an undo and an undo of a reflection run go through the page's confirmation dialog and
// land in the store, and the API refuses requests without the token or from a foreign origin.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allBullets, browserAvailability, chromiumPath, getBullet, launchChromium, seed, startDashboard, tempHome, type Dashboard, type Home, type Seed } from "../../scripts/harness.mjs";

const availability = browserAvailability();

// In CI a missing Chromium is a failed test, not a skipped one (.ci/run installs Debian's package).
it.runIf(process.env.CI === "true" || process.env.CI === "1")("Chromium is installed (required in CI)", () => {
  expect(chromiumPath(), availability.reason).not.toBeNull();
});

function countBy(bullets: Array<Record<string, any>>, key: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const b of bullets) out[b[key]] = (out[b[key]] ?? 0) + 1;
  return out;
}
const isActive = (b: Record<string, any>): boolean => b.state !== "retired" && b.maturity !== "deprecated" && !b.deprecated;

describe.runIf(availability.run)("dashboard page in Chromium (YAML store)", () => {
  let h: Home;
  let s: Seed;
  let dash: Dashboard;
  let browser: Browser;
  let closeBrowser: () => Promise<void>;
  let page: Page;
  let profile: string;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    profile = mkdtempSync(join(tmpdir(), "cm-dash-chromium-"));
    ({ browser, close: closeBrowser } = await launchChromium(profile));
    h = tempHome();
    s = seed(h);
    dash = await startDashboard(h);
    page = await browser.newPage({ viewport: { width: 1366, height: 768 } });
    page.on("pageerror", (e) => pageErrors.push(e.message));
    page.on("console", (m) => {
      // The refused requests of the security test log "Failed to load resource"; anything else is a bug (CSP included).
      if (m.type() === "error" && !/Failed to load resource/.test(m.text())) pageErrors.push(m.text());
    });
    await page.goto(dash.url);
    await view("overview");
  }, 180_000);

  afterAll(async () => {
    await closeBrowser?.();
    await dash?.stop();
    h?.cleanup();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  const renderCount = (): Promise<number> => page.evaluate(() => Number(document.querySelector("main")?.dataset.render ?? 0));
  /** Waits for a render of the page that finished after render number `after`. */
  async function renderedAfter(after: number): Promise<void> {
    await page.waitForFunction((n) => {
      const main = document.querySelector("main");
      return Number(main?.dataset.render ?? 0) > n && !main?.hasAttribute("aria-busy");
    }, after, { timeout: 30_000 });
  }
  /** Navigates by hash (inside the page, so the token stays in sessionStorage) and waits for that view's render. */
  async function view(hash: string): Promise<void> {
    const before = await renderCount();
    const changed = await page.evaluate((x) => {
      if (window.location.hash === `#/${x}`) return false;
      window.location.hash = `#/${x}`;
      return true;
    }, hash);
    if (changed) await renderedAfter(before);
    const name = hash.split(/[/?]/)[0];
    await page.waitForSelector(`main[data-view="${name}"]:not([aria-busy])`, { timeout: 30_000 });
  }
  const text = (selector: string): Promise<string> => page.locator(selector).first().innerText();
  const num = async (selector: string): Promise<number> => Number((await text(selector)).replace(/,/g, ""));

  it("takes the token from the fragment and removes it from the address bar", async () => {
    expect(page.url()).not.toContain("token=");
    expect(await page.evaluate(() => sessionStorage.getItem("cm-dashboard-token"))).toBe(dash.token);
  });

  it("overview: the counts of the store", async () => {
    await view("overview");
    const bullets = allBullets(h);
    const active = bullets.filter(isActive);
    expect(await num('[data-stat="total"]')).toBe(bullets.length);
    expect(await num('[data-stat="active"]')).toBe(active.length);
    for (const key of ["state", "maturity", "kind", "scope", "category"]) {
      const group = `by${key[0]!.toUpperCase()}${key.slice(1)}`;
      const expected = countBy(bullets, key);
      const shown: Record<string, number> = {};
      for (const cell of await page.locator(`[data-count^="${group}."]`).all()) {
        shown[(await cell.getAttribute("data-count"))!.slice(group.length + 1)] = Number((await cell.innerText()).replace(/,/g, ""));
      }
      expect(shown, group).toEqual(expected);
    }
    const events = bullets.flatMap((b) => b.feedbackEvents ?? []);
    const helpful = events.filter((e: any) => e.type === "helpful").length;
    const harmful = events.filter((e: any) => e.type === "harmful").length;
    expect(helpful).toBe(3);
    expect(harmful).toBe(3);
    expect(await num('[data-stat="helpful"]')).toBe(helpful);
    expect(await num('[data-stat="harmful"]')).toBe(harmful);
    expect(await num('[data-stat="helpful7"]')).toBe(helpful);
    expect(await num('[data-stat="harmful7"]')).toBe(harmful);
    // Every active rule is in exactly one histogram bin; the chart itself is drawn.
    let binned = 0;
    for (const cell of await page.locator("[data-bin]").all()) binned += Number(await cell.textContent());
    expect(binned).toBe(active.length);
    expect(await page.locator(".chart canvas").count()).toBeGreaterThan(0);
  });

  it("rules: server-side pages, search and filters", async () => {
    const bullets = allBullets(h);
    await view("rules");
    expect(await text('[data-testid="pager-text"]')).toBe(`1–${bullets.length} of ${bullets.length} rules`);
    expect(await page.locator("tr[data-rule]").count()).toBe(bullets.length);

    const linter = bullets.filter((b) => /linter/i.test(`${b.content} ${b.category} ${(b.tags ?? []).join(" ")}`)).map((b) => b.id).sort();
    expect(linter).toEqual([s.ids.lint, s.ids.lintDup].sort());
    let before = await renderCount();
    await page.getByLabel("Search").fill("linter");
    await page.getByLabel("Search").press("Enter");
    await renderedAfter(before);
    expect(new URL(page.url()).hash).toBe("#/rules?q=linter");
    const shown = await page.locator("tr[data-rule]").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-rule")));
    expect(shown.sort()).toEqual(linter);

    // Every control of the view has an accessible name (a <label>, aria-label or its text).
    const unnamed = await page.evaluate(() =>
      [...document.querySelectorAll("main input, main select, main button, main a")]
        .filter((el) => !((el as HTMLInputElement).labels?.length || el.getAttribute("aria-label") || el.textContent?.trim()))
        .map((el) => el.outerHTML.slice(0, 80)),
    );
    expect(unnamed).toEqual([]);

    const testing = bullets.filter((b) => b.category === "testing").length;
    await view("rules?category=testing");
    expect(await page.locator("tr[data-rule]").count()).toBe(testing);
    before = await renderCount();
    await page.getByLabel("State").selectOption("retired");
    await renderedAfter(before);
    const params = new URLSearchParams(new URL(page.url()).hash.split("?")[1]);
    expect([params.get("category"), params.get("state")]).toEqual(["testing", "retired"]);
    expect(await page.locator("tr[data-rule]").count()).toBe(bullets.filter((b) => b.category === "testing" && b.state === "retired").length);
  });

  it("rule detail: fields, score chart, feedback events and journal", async () => {
    const b = getBullet(h, s.ids.typecheck);
    await view(`rule/${s.ids.typecheck}`);
    expect(await text("blockquote.rule-content")).toBe(b.content);
    expect(await num('[data-field="helpfulCount"]')).toBe(2);
    expect(await num('[data-field="harmfulCount"]')).toBe(0);
    expect(await page.locator('[data-testid="events"] tr[data-type="helpful"]').count()).toBe(2);
    expect(await page.locator('[data-testid="journal"] tbody tr').count()).toBeGreaterThanOrEqual(1);
    expect(await page.locator(".chart canvas").count()).toBeGreaterThan(0);
  });

  it("at risk, stale and expiring", async () => {
    await view("risk");
    const atRisk = await page.locator('[data-testid="risk-atRisk"] tr[data-rule]').evaluateAll((rows) => rows.map((r) => r.getAttribute("data-rule")));
    // At risk = active with a negative effective score (as `cm playbook get` computes it).
    const expected = [s.ids.risky, s.ids.harmful, s.ids.typecheck].filter((id) => {
      const b = getBullet(h, id);
      return isActive(b) && b.effectiveScore < 0;
    });
    expect(expected).toEqual([s.ids.risky]); // `harmful` was retired by the reflection run
    expect(atRisk.sort()).toEqual(expected);
    expect(await text('[data-total="atRisk"]')).toBe(String(expected.length));
    expect(await text('[data-total="expiring"]')).toBe("1");
    const expiring = page.locator(`[data-testid="risk-expiring"] tr[data-rule="${s.ids.expiring}"]`);
    expect(await expiring.count()).toBe(1);
    expect(["9", "10"]).toContain((await expiring.locator("td").last().innerText()).trim());
    expect(await page.locator('[data-testid="risk-expiring"] tr[data-rule]').count()).toBe(1);
  });

  it("near-duplicates side by side", async () => {
    await view("duplicates");
    const pairs = await page.locator('[data-testid="pairs"] .pair').evaluateAll((items) =>
      items.map((li) => [...li.querySelectorAll("article[data-rule]")].map((a) => a.getAttribute("data-rule")).sort()),
    );
    expect(pairs).toContainEqual([s.ids.lint, s.ids.lintDup].sort());
  });

  it("traumas", async () => {
    await view("traumas");
    const rows = page.locator('[data-testid="traumas"] tbody tr[data-trauma]');
    expect(await rows.count()).toBe(1);
    expect(await rows.first().innerText()).toContain("git\\s+push\\s+.*--force");
    expect(await rows.first().innerText()).toContain("FATAL");
  });

  it("context log: the task, the rules returned and the mark that followed", async () => {
    await view("context-log");
    const entry = page.locator(".ctx-entry").filter({ hasText: s.task });
    expect(await entry.count()).toBe(1);
    const returned = await entry.locator("[data-returned]").evaluateAll((els) => els.map((e) => e.getAttribute("data-returned")));
    expect(returned.sort()).toEqual([...s.returned].sort());
    expect(s.returned).toContain(s.markedAfterTask);
    expect(await entry.locator(`[data-returned="${s.markedAfterTask}"] [data-marked]`).getAttribute("data-marked")).toBe("helpful");
  });

  it("reflection runs: what the run added", async () => {
    await view("runs");
    const run = page.locator(`li[data-run="${s.runId}"]`);
    expect(await run.count()).toBe(1);
    const seeded = new Set(Object.values(s.ids));
    const learned = allBullets(h).filter((b) => !seeded.has(b.id)).map((b) => b.id).sort();
    expect(learned.length).toBeGreaterThan(0);
    const added = await run.locator('[data-list="added"] a').evaluateAll((as) => as.map((a) => a.textContent));
    expect(added.sort()).toEqual(learned);
    // The run retired the rule whose score had gone negative.
    expect(getBullet(h, s.ids.harmful).deprecated).toBe(true);
    const removed = await run.locator('[data-list="removed"] a').evaluateAll((as) => as.map((a) => a.textContent));
    expect(removed).toEqual([s.ids.harmful]);
  });

  it("refuses API requests without the token, with a wrong one, and from a foreign origin", async () => {
    const api = `${dash.origin}/dashboard/api/overview`;
    expect((await fetch(api)).status).toBe(401);
    expect((await fetch(api, { headers: { Authorization: "Bearer wrong-token" } })).status).toBe(401);
    const foreign = await fetch(api, { headers: { Authorization: `Bearer ${dash.token}`, Origin: "http://evil.example" } });
    expect(foreign.status).toBe(403);
    expect((await foreign.json()).ok).toBe(false);
    expect((await fetch(api, { headers: { Authorization: `Bearer ${dash.token}` } })).status).toBe(200);
    // From the page itself: without the header the same-origin request is refused too.
    expect(await page.evaluate(() => fetch("/dashboard/api/overview").then((r) => r.status))).toBe(401);
    // An action without "confirm": true is refused and changes nothing.
    const before = getBullet(h, s.ids.timersNo).helpfulCount;
    const unconfirmed = await fetch(`${dash.origin}/dashboard/api/actions/mark`, {
      method: "POST",
      headers: { Authorization: `Bearer ${dash.token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ id: s.ids.timersNo, type: "helpful" }),
    });
    expect(unconfirmed.status).toBe(400);
    expect(getBullet(h, s.ids.timersNo).helpfulCount).toBe(before);
  });

  it("shows the error and its hint when the page has no token", async () => {
    const other = await browser.newPage();
    await other.goto(dash.url.replace(/#token=.*/, "#/overview"));
    const error = other.locator('[data-testid="error"]');
    await error.waitFor({ timeout: 30_000 });
    expect(await error.innerText()).toMatch(/Hint: /);
    await other.close();
  });

  it("text contrast meets WCAG AA on the overview, rules, rule and runs views", async () => {
    for (const hash of ["overview", "rules", `rule/${s.ids.typecheck}`, "runs"]) {
      await view(hash);
      const failures = await page.evaluate(() => {
        const rgba = (c: string): number[] => (c.match(/[\d.]+/g) ?? []).map(Number);
        const lum = ([r, g, b]: number[]): number => {
          const f = (v: number) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
          return 0.2126 * f(r!) + 0.7152 * f(g!) + 0.0722 * f(b!);
        };
        const background = (el: Element | null): number[] => {
          for (let e = el; e; e = e.parentElement) {
            const c = rgba(getComputedStyle(e).backgroundColor);
            if (c.length === 3 || (c.length === 4 && c[3]! > 0.9)) return c.slice(0, 3);
          }
          return [255, 255, 255];
        };
        const out: string[] = [];
        const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
        for (let n = walker.nextNode(); n; n = walker.nextNode()) {
          const el = n.parentElement;
          if (!el || !n.textContent?.trim() || el.closest("details:not([open]), .uplot, dialog, .sr-only, .skip")) continue;
          const style = getComputedStyle(el);
          if (style.visibility === "hidden" || style.display === "none") continue;
          const fg = lum(rgba(style.color));
          const bg = lum(background(el));
          const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
          const size = parseFloat(style.fontSize);
          const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
          if (ratio < (large ? 3 : 4.5)) out.push(`${ratio.toFixed(2)} "${n.textContent.trim().slice(0, 30)}" ${style.color} on ${getComputedStyle(el).backgroundColor}`);
        }
        return out;
      });
      expect(failures, hash).toEqual([]);
    }
  });

  it("keyboard: Tab reaches the rule actions, Enter opens the dialog, Escape cancels", async () => {
    await view(`rule/${s.ids.timersNo}`);
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    let reached = false;
    for (let i = 0; i < 40 && !reached; i++) {
      await page.keyboard.press("Tab");
      reached = await page.evaluate(() => document.activeElement?.getAttribute("data-action") === "mark-helpful");
    }
    expect(reached).toBe(true);
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
    expect(outline).not.toBe("none");
    await page.keyboard.press("Enter");
    await page.waitForSelector("dialog.confirm[open]");
    await page.keyboard.press("Escape");
    await page.waitForSelector("dialog.confirm", { state: "detached" });
    expect(getBullet(h, s.ids.timersNo).helpfulCount).toBe(0);
  });

  it("mark helpful and undo it through the confirmation dialog; the store follows", async () => {
    const id = s.ids.timersYes;
    await view(`rule/${id}`);
    // Cancel first: nothing changes.
    await page.click('[data-action="mark-helpful"]');
    await page.click('dialog.confirm [data-action="cancel"]');
    expect(getBullet(h, id).helpfulCount).toBe(0);

    await page.click('[data-action="mark-helpful"]');
    await page.click('dialog.confirm [data-action="confirm"]');
    await page.waitForFunction(() => document.querySelector('[data-field="helpfulCount"]')?.textContent === "1", null, { timeout: 30_000 });
    // The re-rendered view gives the focus back to the button that was used.
    expect(await page.evaluate(() => document.activeElement?.getAttribute("data-action"))).toBe("mark-helpful");
    const marked = getBullet(h, id);
    expect(marked.helpfulCount).toBe(1);
    expect(marked.feedbackEvents.map((e: any) => e.type)).toEqual(["helpful"]);

    await page.click('[data-action="undo-feedback"]');
    await page.click('dialog.confirm [data-action="confirm"]');
    await page.waitForFunction(() => document.querySelector('[data-field="helpfulCount"]')?.textContent === "0", null, { timeout: 30_000 });
    const undone = getBullet(h, id);
    expect(undone.helpfulCount).toBe(0);
    expect(undone.feedbackEvents ?? []).toEqual([]);
  });

  it("pin, edit category, forget and restore through the dialog; the store follows", async () => {
    const id = s.ids.timersNo;
    await view(`rule/${id}`);
    const confirm = async (action: string, fill?: { label: string; value: string }): Promise<void> => {
      await page.click(`[data-action="${action}"]`);
      await page.waitForSelector("dialog.confirm[open]");
      if (fill) await page.locator("dialog.confirm").getByLabel(fill.label).fill(fill.value);
      await page.click('dialog.confirm [data-action="confirm"]');
      await page.waitForSelector("dialog.confirm", { state: "detached" });
    };
    await confirm("pin", { label: "Reason (optional)", value: "team decision" });
    await page.waitForSelector('[data-action="unpin"]', { timeout: 30_000 });
    expect(getBullet(h, id)).toMatchObject({ pinned: true, pinnedReason: "team decision" });

    await confirm("category", { label: "Category", value: "react-testing" });
    await page.waitForFunction(() => document.querySelector("dl.fields")?.textContent?.includes("react-testing"), null, { timeout: 30_000 });
    expect(getBullet(h, id).category).toBe("react-testing");

    await confirm("unpin");
    await page.waitForSelector('[data-action="pin"]', { timeout: 30_000 });
    expect(getBullet(h, id).pinned).toBe(false);

    await confirm("forget", { label: "Reason", value: "contradicts the testing guide" });
    await page.waitForSelector('[data-action="restore"]', { timeout: 30_000 });
    const forgotten = getBullet(h, id);
    expect(forgotten.deprecated).toBe(true);
    expect(isActive(forgotten)).toBe(false);

    await confirm("restore");
    await page.waitForSelector('[data-action="forget"]', { timeout: 30_000 });
    expect(isActive(getBullet(h, id))).toBe(true);
  });

  it("undo a reflection run from the runs view", async () => {
    await view("runs");
    await page.click(`li[data-run="${s.runId}"] [data-action="undo-run"]`);
    await page.click('dialog.confirm [data-action="confirm"]');
    await page.waitForSelector(`li[data-run="${s.runId}"] [data-testid="reverted"]`, { timeout: 30_000 });
    const ids = allBullets(h).map((b) => b.id).sort();
    expect(ids).toEqual(Object.values(s.ids).sort());
    expect(getBullet(h, s.ids.harmful).deprecated).toBe(false);
    expect(pageErrors).toEqual([]);
  });
});
