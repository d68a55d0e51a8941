// `pnpm bench:dashboard`: how fast the dashboard page shows a 10,000-rule playbook, in Debian's
// Chromium (playwright-core), against the real `cm dashboard` (YAML, then the same home migrated to
// SQLite). Per backend, RUNS fresh browser contexts (cold cache) each load:
//   - /dashboard/#token=… (the overview): first paint and first contentful paint (Paint Timing), and
//     the page's `cm:overview-ready` mark (the counts and the histogram data in the DOM);
//   - /dashboard/#token=…&/rules (the rules list, first page of 50): the page's `cm:rules-ready` mark;
//   - then, in the loaded page, a search (hash change → `cm:rules-ready` of the filtered list).
// All times are milliseconds from navigation start (performance.timeOrigin), medians and maxima.
// Target: first paint ≤ 1 s. Results are printed and written to docs/benchmarks.md ("Dashboard").
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CM, chromiumPath, cm, launchChromium, startDashboard, tempHome } from "../apps/dashboard/scripts/harness.mjs";
import { generatePlaybookYaml } from "./generate-playbook.mjs";
import { updateBenchmarkDoc } from "./update-doc.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const RULES = Number(process.env.DASHBOARD_BENCH_RULES ?? 10_000);
const RUNS = Number(process.env.DASHBOARD_BENCH_RUNS ?? 5);
const noDoc = process.argv.includes("--no-doc");
const log = (line) => console.error(`[dashboard] ${line}`);

if (!existsSync(CM) || !existsSync(join(root, "apps/dashboard/dist/ui/assets/app.js"))) {
  console.error("the built CLI or dashboard page is missing: run `pnpm build` first (pnpm bench:dashboard does).");
  process.exit(1);
}
if (!chromiumPath()) {
  console.error("Chromium not found: install Debian's chromium (`apt-get install -y chromium`) or set CHROMIUM_PATH.");
  process.exit(1);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmt = (xs) => `${Math.round(median(xs))} (max ${Math.round(Math.max(...xs))})`;

/** Waits for a performance mark of the page and returns its time since navigation start. */
async function markTime(page, name, after = 0) {
  const handle = await page.waitForFunction(
    ([n, t]) => {
      const e = performance.getEntriesByName(n).filter((x) => x.startTime >= t);
      return e.length ? e[e.length - 1].startTime : false;
    },
    [name, after],
    { timeout: 60_000, polling: 10 },
  );
  return handle.jsonValue();
}

async function measure(browser, dash) {
  const out = { firstPaint: [], fcp: [], overview: [], rules: [], search: [] };
  for (let i = 0; i < RUNS; i++) {
    const context = await browser.newContext({ viewport: { width: 1366, height: 768 } });
    const page = await context.newPage();
    await page.goto(dash.url);
    out.overview.push(await markTime(page, "cm:overview-ready"));
    const paints = await page.evaluate(() => Object.fromEntries(performance.getEntriesByType("paint").map((p) => [p.name, p.startTime])));
    out.firstPaint.push(paints["first-paint"]);
    out.fcp.push(paints["first-contentful-paint"]);
    const shown = await page.locator('[data-stat="total"]').innerText();
    if (Number(shown.replace(/,/g, "")) !== RULES) throw new Error(`the overview shows ${shown} rules, expected ${RULES}`);
    await context.close();

    const context2 = await browser.newContext({ viewport: { width: 1366, height: 768 } });
    const page2 = await context2.newPage();
    await page2.goto(`${dash.url}&/rules`);
    out.rules.push(await markTime(page2, "cm:rules-ready"));
    const pager = await page2.locator('[data-testid="pager-text"]').innerText();
    if (!pager.endsWith(`of ${RULES.toLocaleString("en-US")} rules`)) throw new Error(`unexpected rules pager: ${pager}`);
    const start = await page2.evaluate(() => {
      const t = performance.now();
      window.location.hash = "#/rules?q=transaction";
      return t;
    });
    out.search.push((await markTime(page2, "cm:rules-ready", start)) - start);
    await context2.close();
  }
  return out;
}

const results = [];
const home = tempHome();
const profile = mkdtempSync(join(tmpdir(), "cm-dash-bench-"));
let chromium;
try {
  cm(home, ["init", "--json"]);
  writeFileSync(join(home.home, ".cass-memory", "playbook.yaml"), generatePlaybookYaml(RULES));
  chromium = await launchChromium(profile);
  for (const backend of ["yaml", "sqlite"]) {
    if (backend === "sqlite") cm(home, ["storage", "migrate", "--to", "sqlite", "--json"]);
    const dash = await startDashboard(home);
    try {
      log(`${backend}: ${RULES} rules, ${RUNS} runs`);
      // One warm-up load (the server's first read of the store).
      const warm = await chromium.browser.newPage();
      await warm.goto(dash.url);
      await markTime(warm, "cm:overview-ready");
      await warm.close();
      const r = await measure(chromium.browser, dash);
      results.push({ backend, ...r });
      log(`${backend}: first paint ${fmt(r.firstPaint)} ms, overview ${fmt(r.overview)} ms, rules ${fmt(r.rules)} ms, search ${fmt(r.search)} ms`);
    } finally {
      await dash.stop();
    }
  }
} finally {
  await chromium?.close();
  home.cleanup();
  rmSync(profile, { recursive: true, force: true });
}

const machine = `${cpus()[0]?.model.trim() ?? "unknown CPU"}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB RAM, Node ${process.version}`;
const worstFirstPaint = Math.max(...results.flatMap((r) => r.firstPaint));
const table = [
  `Measured ${new Date().toISOString().slice(0, 10)} on ${machine}, Chromium headless (${chromiumPath()}); load average ${loadavg().map((l) => l.toFixed(1)).join(" / ")} at the end. ` +
    `${RULES.toLocaleString("en-US")} rules, ${RUNS} cold loads per backend (fresh browser context each), after one warm-up load. Milliseconds from navigation start: median (max).`,
  "",
  "| store | first paint | first contentful paint | overview numbers shown | rules list (page 1 of 50) shown | search in the list (from the hash change) |",
  "| --- | ---: | ---: | ---: | ---: | ---: |",
  ...results.map((r) => `| ${r.backend} | ${fmt(r.firstPaint)} | ${fmt(r.fcp)} | ${fmt(r.overview)} | ${fmt(r.rules)} | ${fmt(r.search)} |`),
  "",
  `Target first paint ≤ 1,000 ms: ${worstFirstPaint <= 1000 ? "met" : "NOT met"} (worst ${Math.round(worstFirstPaint)} ms).`,
].join("\n");
console.log(table);
if (!noDoc) updateBenchmarkDoc("dashboard", "Dashboard", table);
