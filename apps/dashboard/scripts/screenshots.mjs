// `node apps/dashboard/scripts/screenshots.mjs`: a screenshot of each dashboard view, taken in
// Chromium at 1366×768 over a home seeded through the real CLI (the browser tests' seed), written
// to docs/dashboard/<view>.png. Needs the built CLI (`pnpm turbo run build --filter=cass-memory...`)
// and Chromium (/usr/bin/chromium or CHROMIUM_PATH).
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO, launchChromium, seed, startDashboard, tempHome } from "./harness.mjs";

const out = join(REPO, "docs/dashboard");
mkdirSync(out, { recursive: true });
const home = tempHome();
const profile = mkdtempSync(join(tmpdir(), "cm-dash-chromium-"));
let dash;
let chromium;
try {
  const s = seed(home);
  dash = await startDashboard(home);
  chromium = await launchChromium(profile);
  const page = await chromium.browser.newPage({ viewport: { width: 1366, height: 768 } });
  await page.goto(dash.url);
  const views = [
    ["overview", "overview"],
    ["rules", "rules"],
    ["rule", `rule/${s.ids.typecheck}`],
    ["risk", "risk"],
    ["duplicates", "duplicates"],
    ["runs", "runs"],
    ["traumas", "traumas"],
    ["context-log", "context-log"],
  ];
  // Navigates by hash and waits for the render of that navigation (main[data-render] counts renders).
  const show = async (hash) => {
    const before = await page.evaluate(() => Number(document.querySelector("main")?.dataset.render ?? 0));
    await page.evaluate((x) => (window.location.hash = `#/${x}`), hash);
    await page.waitForFunction((n) => {
      const main = document.querySelector("main");
      return Number(main?.dataset.render ?? 0) > n && !main?.hasAttribute("aria-busy");
    }, before, { timeout: 30_000 });
  };
  await page.waitForSelector('main[data-view="overview"]:not([aria-busy])', { timeout: 30_000 });
  for (const [name, hash] of views) {
    if (name !== "overview") await show(hash);
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(out, `${name}.png`) });
    console.error(`docs/dashboard/${name}.png`);
  }
  // The confirmation dialog of an action.
  await show(`rule/${s.ids.harmful}`);
  await page.click('[data-action="mark-harmful"]');
  await page.waitForSelector("dialog.confirm[open]");
  await page.screenshot({ path: join(out, "confirm.png") });
  console.error("docs/dashboard/confirm.png");
} finally {
  await chromium?.close();
  await dash?.stop();
  home.cleanup();
  rmSync(profile, { recursive: true, force: true });
}
