// The same page over the SQLite store: the overview's counts and a mark through the confirmation
// dialog, checked against `cm playbook list/get` on the migrated home.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allBullets, browserAvailability, cm, getBullet, launchChromium, seed, startDashboard, startServe, tempHome, type Dashboard, type Home, type Seed } from "../../scripts/harness.mjs";

const availability = browserAvailability();

describe.runIf(availability.run)("dashboard page in Chromium (SQLite store)", () => {
  let h: Home;
  let s: Seed;
  let dash: Dashboard;
  let browser: Browser;
  let closeBrowser: () => Promise<void>;
  let page: Page;
  let profile: string;

  beforeAll(async () => {
    profile = mkdtempSync(join(tmpdir(), "cm-dash-chromium-"));
    ({ browser, close: closeBrowser } = await launchChromium(profile));
    h = tempHome();
    s = seed(h, { reflect: false });
    const migrated = cm(h, ["storage", "migrate", "--to", "sqlite", "--json"]);
    expect(migrated.to).toBe("sqlite");
    expect(cm(h, ["storage", "status", "--json"]).backend).toBe("sqlite");
    dash = await startDashboard(h);
    page = await browser.newPage({ viewport: { width: 1366, height: 768 } });
    await page.goto(dash.url);
    await page.waitForSelector('main[data-view="overview"]:not([aria-busy])', { timeout: 30_000 });
  }, 180_000);

  afterAll(async () => {
    await closeBrowser?.();
    await dash?.stop();
    h?.cleanup();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  const num = async (selector: string): Promise<number> => Number((await page.locator(selector).first().innerText()).replace(/,/g, ""));

  it("overview: the SQLite store's counts", async () => {
    const bullets = allBullets(h);
    expect(bullets.length).toBe(Object.keys(s.ids).length);
    expect(await page.locator("main p.muted").first().innerText()).toMatch(/Store: sqlite/);
    expect(await num('[data-stat="total"]')).toBe(bullets.length);
    const byCategory: Record<string, number> = {};
    for (const b of bullets) byCategory[b.category] = (byCategory[b.category] ?? 0) + 1;
    for (const [category, count] of Object.entries(byCategory)) expect(await num(`[data-count="byCategory.${category}"]`), category).toBe(count);
    expect(await num('[data-stat="helpful"]')).toBe(3);
    expect(await num('[data-stat="harmful"]')).toBe(3);
  });

  it("mark harmful with a reason through the dialog; the SQLite store has it", async () => {
    const id = s.ids.timersNo;
    await page.evaluate((x) => (window.location.hash = `#/rule/${x}`), id);
    await page.waitForSelector('main[data-view="rule"]:not([aria-busy])', { timeout: 30_000 });
    await page.click('[data-action="mark-harmful"]');
    await page.getByLabel("Reason").selectOption("outdated");
    await page.click('dialog.confirm [data-action="confirm"]');
    await page.waitForFunction(() => document.querySelector('[data-field="harmfulCount"]')?.textContent === "1", null, { timeout: 30_000 });
    const b = getBullet(h, id);
    expect(b.harmfulCount).toBe(1);
    expect(b.feedbackEvents.map((e: any) => [e.type, e.reason])).toEqual([["harmful", "outdated"]]);
  });

  it("the same page under `cm serve` at /dashboard, with its MCP_HTTP_TOKEN", async () => {
    await dash.stop(); // one server on the store at a time
    const serve = await startServe(h, "serve-token-for-the-browser-test");
    const other = await browser.newPage({ viewport: { width: 1366, height: 768 } });
    try {
      expect((await fetch(`${serve.origin}/dashboard/api/overview`)).status).toBe(401);
      await other.goto(serve.url);
      await other.waitForSelector('main[data-view="overview"]:not([aria-busy])', { timeout: 30_000 });
      expect(Number((await other.locator('[data-stat="total"]').innerText()).replace(/,/g, ""))).toBe(allBullets(h).length);
      expect(await other.locator('[data-testid="error"]').count()).toBe(0);
    } finally {
      await other.close();
      await serve.stop();
    }
  });
});
