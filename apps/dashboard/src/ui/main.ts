// The dashboard page: hash routes, one view at a time, all data from /dashboard/api (see API.md).
import "uplot/dist/uPlot.min.css";
import "./styles.css";
import { ApiError, captureToken, get, hasToken, post, type Page } from "./api.js";
import { destroyCharts, histogramChart, scoreChart } from "./charts.js";
import { confirmAction } from "./dialog.js";
import { clear, fmtDate, fmtNumber, h, preview, type Child } from "./dom.js";
import type { ContextEntry, Counts, Duplicates, Overview, Risk, RuleDetail, RuleSummary, Run, Trauma } from "./types.js";

const PAGE_SIZE = 50;
const STATES = ["draft", "active", "retired", "deprecated"];
const MATURITIES = ["candidate", "established", "proven", "deprecated"];
const KINDS = ["project_convention", "stack_pattern", "workflow_rule", "anti_pattern"];
const SCOPES = ["global", "workspace", "language", "framework", "task"];
const HARMFUL_REASONS = ["caused_bug", "wasted_time", "contradicted_requirements", "wrong_context", "outdated", "other"];

interface Route {
  name: string;
  arg?: string;
  params: URLSearchParams;
}

const NAV: readonly { name: string; label: string }[] = [
  { name: "overview", label: "Overview" },
  { name: "rules", label: "Rules" },
  { name: "risk", label: "At risk" },
  { name: "duplicates", label: "Duplicates" },
  { name: "runs", label: "Reflection runs" },
  { name: "traumas", label: "Traumas" },
  { name: "context-log", label: "Context log" },
];

function parseRoute(): Route {
  const raw = window.location.hash.replace(/^#\/?/, "");
  const [path = "", query = ""] = raw.split("?", 2);
  const [name = "", ...rest] = path.split("/");
  const arg = rest.length ? decodeURIComponent(rest.join("/")) : undefined;
  return { name: name || "overview", arg, params: new URLSearchParams(query) };
}

function href(name: string, arg?: string, params?: Record<string, string | number | undefined>): string {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params ?? {})) if (v !== undefined && v !== "") query.set(k, String(v));
  const qs = query.toString();
  return `#/${name}${arg ? `/${encodeURIComponent(arg)}` : ""}${qs ? `?${qs}` : ""}`;
}

function ruleLink(id: string, text?: string): HTMLAnchorElement {
  return h("a", { href: href("rule", id), class: "rule-link" }, text ?? id);
}

// ---------- shell ----------

const main = h("main", { id: "main", tabindex: "-1" });
const status = h("p", { class: "status", role: "status", "aria-live": "polite" });
const navLinks = new Map<string, HTMLAnchorElement>();

function shell(): void {
  const nav = h(
    "nav",
    { "aria-label": "Dashboard views" },
    h(
      "ul",
      null,
      NAV.map((item) => {
        const link = h("a", { href: href(item.name), "data-nav": item.name }, item.label);
        navLinks.set(item.name, link);
        return h("li", null, link);
      }),
    ),
  );
  const root = document.getElementById("app") ?? document.body;
  clear(root);
  root.append(
    h("a", { href: "#main", class: "skip", onclick: (e: Event) => { e.preventDefault(); main.focus(); } }, "Skip to content"),
    h("header", { class: "top" }, h("h1", null, h("span", { class: "brand" }, "cass-memory"), " dashboard"), status),
    h("div", { class: "layout" }, nav, main),
  );
}

function announce(text: string): void {
  status.textContent = text;
}

function errorPanel(error: unknown): HTMLElement {
  const err = error instanceof ApiError ? error : new ApiError(0, { code: "INTERNAL", message: String((error as Error)?.message ?? error) });
  return h(
    "div",
    { class: "error", role: "alert", "data-testid": "error" },
    h("p", null, h("strong", null, err.code), ": ", err.message),
    err.hint ? h("p", { class: "hint" }, "Hint: ", err.hint) : null,
  );
}

let renderSeq = 0;

async function render(): Promise<void> {
  const route = parseRoute();
  const seq = ++renderSeq;
  destroyCharts();
  for (const [name, link] of navLinks) {
    const current = name === route.name || (name === "rules" && route.name === "rule");
    if (current) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  main.setAttribute("aria-busy", "true");
  let view: HTMLElement;
  try {
    view = await VIEWS[route.name]?.(route) ?? notFound(route);
  } catch (error) {
    view = h("section", null, h("h2", null, "Could not load this view"), errorPanel(error));
  }
  if (seq !== renderSeq) return; // a newer navigation won
  // Re-rendering the same view (a filter changed, an action finished) keeps the keyboard focus on
  // the same control: by id, or by its data-action.
  const active = document.activeElement;
  const focusKey = active && main.contains(active) && main.dataset.view === route.name ? (active.id ? `#${CSS.escape(active.id)}` : active.getAttribute("data-action") ? `[data-action="${active.getAttribute("data-action")}"]` : null) : null;
  clear(main);
  main.append(view);
  main.removeAttribute("aria-busy");
  main.dataset.view = route.name;
  main.dataset.render = String(seq); // lets tests and the benchmark wait for a given navigation's render
  if (focusKey) (main.querySelector(focusKey) as HTMLElement | null)?.focus();
  const title = view.querySelector("h2")?.textContent;
  document.title = title ? `${title} · cass-memory dashboard` : "cass-memory dashboard";
  performance.mark(`cm:view:${route.name}`);
}

function notFound(route: Route): HTMLElement {
  return h("section", null, h("h2", null, "Not found"), h("p", null, `There is no view called “${route.name}”. `, h("a", { href: href("overview") }, "Go to the overview"), "."));
}

// ---------- helpers ----------

function countsTable(caption: string, counts: Counts, key: string, link?: (k: string) => string): HTMLElement {
  const entries = Object.entries(counts).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return h(
    "table",
    { class: "data counts", "data-testid": `counts-${key}` },
    h("caption", null, caption),
    h("thead", null, h("tr", null, h("th", { scope: "col" }, "Value"), h("th", { scope: "col" }, "Rules"))),
    h(
      "tbody",
      null,
      entries.length === 0 ? h("tr", null, h("td", { colspan: 2 }, "none")) : null,
      entries.map(([k, v]) =>
        h("tr", { "data-key": k }, h("th", { scope: "row" }, link ? h("a", { href: link(k) }, k) : k), h("td", { class: "num", "data-count": `${key}.${k}` }, fmtNumber(v))),
      ),
    ),
  );
}

function stat(label: string, value: number, key: string): HTMLElement {
  return h("div", { class: "stat" }, h("span", { class: "stat-value", "data-stat": key }, fmtNumber(value)), h("span", { class: "stat-label" }, label));
}

function pager(page: Page<unknown>, to: (offset: number) => string, what: string): HTMLElement {
  const first = page.total === 0 ? 0 : page.offset + 1;
  const last = Math.min(page.total, page.offset + page.items.length);
  const prev = Math.max(0, page.offset - page.limit);
  const next = page.offset + page.limit;
  return h(
    "nav",
    { class: "pager", "aria-label": `${what} pages` },
    h("span", { "data-testid": "pager-text" }, `${fmtNumber(first)}–${fmtNumber(last)} of ${fmtNumber(page.total)} ${what}`),
    page.offset > 0 ? h("a", { class: "btn", href: to(prev), rel: "prev" }, "Previous") : h("span", { class: "btn disabled", "aria-disabled": "true" }, "Previous"),
    next < page.total ? h("a", { class: "btn", href: to(next), rel: "next" }, "Next") : h("span", { class: "btn disabled", "aria-disabled": "true" }, "Next"),
  );
}

function offsetOf(route: Route): number {
  const n = Number(route.params.get("offset") ?? 0);
  return Number.isInteger(n) && n > 0 ? n : 0;
}

function ruleTable(rules: readonly RuleSummary[], caption: string, extra?: { label: string; cell: (r: RuleSummary) => Child }): HTMLElement {
  return h(
    "table",
    { class: "data rules" },
    h("caption", null, caption),
    h(
      "thead",
      null,
      h(
        "tr",
        null,
        ["Rule", "Category", "State", "Maturity", "Score", "Helpful", "Harmful"].map((c) => h("th", { scope: "col" }, c)),
        extra ? h("th", { scope: "col" }, extra.label) : null,
      ),
    ),
    h(
      "tbody",
      null,
      rules.length === 0 ? h("tr", null, h("td", { colspan: extra ? 8 : 7 }, "No rules.")) : null,
      rules.map((r) =>
        h(
          "tr",
          { "data-rule": r.id },
          h("td", { class: "content" }, ruleLink(r.id, preview(r.content, 110)), r.pinned ? h("span", { class: "badge" }, "pinned") : null, h("div", { class: "muted id" }, r.id)),
          h("td", null, r.category),
          h("td", null, r.state),
          h("td", null, r.maturity),
          h("td", { class: "num" }, fmtNumber(r.score)),
          h("td", { class: "num", "data-helpful": r.id }, fmtNumber(r.helpfulCount)),
          h("td", { class: "num", "data-harmful": r.id }, fmtNumber(r.harmfulCount)),
          extra ? h("td", null, extra.cell(r)) : null,
        ),
      ),
    ),
  );
}

// ---------- views ----------

async function overviewView(): Promise<HTMLElement> {
  const o = await get<Overview>("overview");
  const rulesBy = (param: string) => (value: string) => href("rules", undefined, { [param]: value });
  const section = h(
    "section",
    { "aria-labelledby": "h-overview" },
    h("h2", { id: "h-overview" }, "Playbook health"),
    h("p", { class: "muted" }, `Store: ${o.store.backend}${o.store.playbookPath ? ` (${o.store.playbookPath})` : ""} · generated ${fmtDate(o.generatedAt)}`),
    h(
      "div",
      { class: "stats" },
      stat("rules", o.counts.total, "total"),
      stat("active", o.counts.active, "active"),
      stat("helpful marks", o.feedback.helpful, "helpful"),
      stat("harmful marks", o.feedback.harmful, "harmful"),
      stat("helpful, last 7 days", o.feedback.last7Days.helpful, "helpful7"),
      stat("harmful, last 7 days", o.feedback.last7Days.harmful, "harmful7"),
    ),
    h(
      "div",
      { class: "grid" },
      countsTable("By state", o.counts.byState, "byState", rulesBy("state")),
      countsTable("By maturity", o.counts.byMaturity, "byMaturity", rulesBy("maturity")),
      countsTable("By kind", o.counts.byKind, "byKind", rulesBy("kind")),
      countsTable("By scope", o.counts.byScope, "byScope", rulesBy("scope")),
      countsTable("By category", o.counts.byCategory, "byCategory", rulesBy("category")),
    ),
    h("h3", null, "Score distribution"),
    histogramChart(o.scoreHistogram),
  );
  performance.mark("cm:overview-ready");
  return section;
}

function select(name: string, label: string, values: readonly string[], current: string, blank = "any"): HTMLElement {
  const id = `f-${name}`;
  return h(
    "div",
    { class: "field" },
    h("label", { for: id }, label),
    h("select", { id, name }, blank ? h("option", { value: "" }, blank) : null, values.map((v) => h("option", { value: v, selected: v === current }, v))),
  );
}

async function rulesView(route: Route): Promise<HTMLElement> {
  const p = route.params;
  const filters = {
    q: p.get("q") ?? "",
    state: p.get("state") ?? "",
    maturity: p.get("maturity") ?? "",
    kind: p.get("kind") ?? "",
    scope: p.get("scope") ?? "",
    category: p.get("category") ?? "",
    sort: p.get("sort") ?? "",
    order: p.get("order") ?? "",
  };
  const offset = offsetOf(route);
  const page = await get<Page<RuleSummary>>("rules", { ...filters, offset, limit: PAGE_SIZE });
  const search = h("input", { id: "f-q", name: "q", type: "search", value: filters.q, placeholder: "words in content, category or tags", maxlength: 200, autocomplete: "off" });
  const form = h(
    "form",
    { class: "filters", role: "search", "aria-label": "Filter rules" },
    h("div", { class: "field grow" }, h("label", { for: "f-q" }, "Search"), search),
    select("state", "State", STATES, filters.state),
    select("maturity", "Maturity", MATURITIES, filters.maturity),
    select("kind", "Kind", KINDS, filters.kind),
    select("scope", "Scope", SCOPES, filters.scope),
    h("div", { class: "field" }, h("label", { for: "f-category" }, "Category"), h("input", { id: "f-category", name: "category", type: "text", value: filters.category, maxlength: 100, autocomplete: "off" })),
    select("sort", "Sort by", ["score", "updated", "helpful", "harmful", "created"], filters.sort, "default"),
    select("order", "Order", ["desc", "asc"], filters.order, "default"),
    h("div", { class: "field actions" }, h("button", { type: "submit", class: "btn btn-primary" }, "Apply"), h("a", { class: "btn", href: href("rules") }, "Reset")),
  );
  const apply = (): void => {
    const data = new FormData(form);
    const params: Record<string, string> = {};
    for (const [k, v] of data.entries()) if (typeof v === "string" && v.trim()) params[k] = v.trim();
    window.location.hash = href("rules", undefined, params);
  };
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    apply();
  });
  for (const sel of form.querySelectorAll("select")) sel.addEventListener("change", apply);
  const params = { ...filters };
  const section = h(
    "section",
    { "aria-labelledby": "h-rules" },
    h("h2", { id: "h-rules" }, "Rules"),
    form,
    pager(page, (o) => href("rules", undefined, { ...params, offset: o }), "rules"),
    ruleTable(page.items, `Rules${filters.q ? ` matching “${filters.q}”` : ""}`),
  );
  performance.mark("cm:rules-ready");
  return section;
}

async function act(label: string, path: string, body: Record<string, unknown>): Promise<void> {
  try {
    await post(path, body);
    announce(`${label}: done.`);
    await render();
  } catch (error) {
    announce(`${label} failed.`);
    const panel = errorPanel(error);
    panel.classList.add("action-error");
    main.querySelector(".action-error")?.remove();
    main.prepend(panel);
    panel.setAttribute("tabindex", "-1");
    panel.focus();
  }
}

function ruleActions(d: RuleDetail): HTMLElement {
  const r = d.rule;
  const short = `“${preview(r.content, 80)}”`;
  const id = r.id;
  const button = (label: string, action: string, onclick: () => void, cls = "btn"): HTMLButtonElement => h("button", { type: "button", class: cls, "data-action": action, onclick }, label);
  const retired = r.active === false || r.state === "retired" || r.deprecated === true;
  return h(
    "div",
    { class: "toolbar", role: "group", "aria-label": "Actions on this rule" },
    button("Mark helpful", "mark-helpful", async () => {
      const ok = await confirmAction({ title: "Mark as helpful?", body: `Records helpful feedback on ${short}.`, confirmLabel: "Mark helpful" });
      if (ok) await act("Mark helpful", "actions/mark", { id, type: "helpful" });
    }),
    button("Mark harmful", "mark-harmful", async () => {
      const ok = await confirmAction({
        title: "Mark as harmful?",
        body: `Records harmful feedback on ${short}.`,
        confirmLabel: "Mark harmful",
        danger: true,
        fields: [{ name: "reason", label: "Reason", value: "other", options: HARMFUL_REASONS.map((v) => ({ value: v, label: v.replace(/_/g, " ") })) }],
      });
      if (ok) await act("Mark harmful", "actions/mark", { id, type: "harmful", reason: ok.reason });
    }),
    d.events.length > 0
      ? button("Undo last feedback", "undo-feedback", async () => {
          const last = d.events[d.events.length - 1];
          const ok = await confirmAction({ title: "Undo the last feedback?", body: `Removes the last feedback event (${last?.type ?? "?"}, ${fmtDate(last?.at)}) from ${short}.`, confirmLabel: "Undo feedback" });
          if (ok) await act("Undo feedback", "actions/undo", { id, feedback: true });
        })
      : null,
    r.pinned
      ? button("Unpin", "unpin", async () => {
          const ok = await confirmAction({ title: "Unpin this rule?", body: `${short} will decay and can be retired like any other rule again.`, confirmLabel: "Unpin" });
          if (ok) await act("Unpin", "actions/pin", { id, pinned: false });
        })
      : button("Pin", "pin", async () => {
          const ok = await confirmAction({ title: "Pin this rule?", body: `A pinned rule is kept and never retired automatically.`, confirmLabel: "Pin", fields: [{ name: "reason", label: "Reason (optional)" }] });
          if (ok) await act("Pin", "actions/pin", { id, pinned: true, ...(ok.reason ? { reason: ok.reason } : {}) });
        }),
    button("Edit category", "category", async () => {
      const ok = await confirmAction({ title: "Change the category", body: `New category for ${short}.`, confirmLabel: "Save category", fields: [{ name: "category", label: "Category", value: r.category, required: true }] });
      if (ok) await act("Edit category", "actions/category", { id, category: ok.category });
    }),
    retired
      ? button("Restore", "restore", async () => {
          const ok = await confirmAction({ title: "Restore this rule?", body: `Un-deprecates ${short} (cm undo ${id}).`, confirmLabel: "Restore" });
          if (ok) await act("Restore", "actions/undo", { id });
        })
      : button(
          "Forget",
          "forget",
          async () => {
            const ok = await confirmAction({ title: "Forget this rule?", body: `${short} is deprecated and stops being returned to agents. It can be restored with Undo.`, confirmLabel: "Forget", danger: true, fields: [{ name: "reason", label: "Reason", required: true }] });
            if (ok) await act("Forget", "actions/forget", { id, reason: ok.reason });
          },
          "btn btn-danger",
        ),
  );
}

async function ruleView(route: Route): Promise<HTMLElement> {
  if (!route.arg) return notFound(route);
  const d = await get<RuleDetail>(`rules/${encodeURIComponent(route.arg)}`);
  const r = d.rule;
  const fields: [string, Child][] = [
    ["Id", r.id],
    ["Category", r.category],
    ["State", r.state],
    ["Maturity", r.maturity],
    ["Kind", r.kind],
    ["Scope", r.scope],
    ["Effective score", h("span", { "data-field": "score" }, fmtNumber(r.score))],
    ["Helpful", h("span", { "data-field": "helpfulCount" }, fmtNumber(r.helpfulCount))],
    ["Harmful", h("span", { "data-field": "harmfulCount" }, fmtNumber(r.harmfulCount))],
    ["Pinned", r.pinned ? `yes${r.pinnedReason ? ` (${r.pinnedReason})` : ""}` : "no"],
    ["Tags", (r.tags ?? []).join(", ") || "–"],
    ["Created", fmtDate(r.createdAt)],
    ["Updated", fmtDate(r.updatedAt)],
  ];
  if (r.deprecationReason) fields.push(["Deprecated because", r.deprecationReason]);
  return h(
    "section",
    { "aria-labelledby": "h-rule", "data-rule-id": r.id },
    h("p", null, h("a", { href: href("rules") }, "← All rules")),
    h("h2", { id: "h-rule" }, "Rule ", h("code", null, r.id)),
    h("blockquote", { class: "rule-content" }, r.content),
    ruleActions(d),
    h("dl", { class: "fields" }, fields.map(([k, v]) => [h("dt", null, k), h("dd", null, v)])),
    h("h3", null, "Score over time"),
    d.scoreSeries.length ? scoreChart(d.scoreSeries, d.events) : h("p", null, "No score history yet."),
    h("h3", null, `Feedback events (${d.events.length})`),
    h(
      "table",
      { class: "data", "data-testid": "events" },
      h("caption", { class: "sr-only" }, "Feedback events"),
      h("thead", null, h("tr", null, ["When", "Type", "Reason", "Session"].map((c) => h("th", { scope: "col" }, c)))),
      h(
        "tbody",
        null,
        d.events.length === 0 ? h("tr", null, h("td", { colspan: 4 }, "No feedback yet.")) : null,
        [...d.events].reverse().map((e) => h("tr", { "data-type": e.type }, h("td", null, fmtDate(e.at)), h("td", null, h("span", { class: `tag tag-${e.type}` }, e.type)), h("td", null, e.reason ?? "–"), h("td", { class: "path" }, e.sessionPath ?? "–"))),
      ),
    ),
    h("h3", null, `Journal (${d.journal.length})`),
    h(
      "table",
      { class: "data", "data-testid": "journal" },
      h("caption", { class: "sr-only" }, "Journal history"),
      h("thead", null, h("tr", null, ["When", "Operation", "Summary", "Run"].map((c) => h("th", { scope: "col" }, c)))),
      h(
        "tbody",
        null,
        d.journal.length === 0 ? h("tr", null, h("td", { colspan: 4 }, "No journal entries.")) : null,
        [...d.journal].reverse().map((j) => h("tr", null, h("td", null, fmtDate(j.at)), h("td", null, j.op), h("td", null, j.summary), h("td", null, j.runId ? h("code", null, j.runId) : "–"))),
      ),
    ),
  );
}

async function riskView(): Promise<HTMLElement> {
  const r = await get<Risk>("risk");
  const heading = (label: string, key: "atRisk" | "stale" | "expiring"): HTMLElement => {
    const shown = r[key].length;
    const total = r.totals?.[key] ?? shown;
    return h("h3", null, `${label} (`, h("span", { "data-total": key }, fmtNumber(total)), ")", total > shown ? h("span", { class: "muted" }, ` — the first ${fmtNumber(shown)} shown`) : null);
  };
  return h(
    "section",
    { "aria-labelledby": "h-risk" },
    h("h2", { id: "h-risk" }, "At risk, stale and expiring"),
    h("div", { "data-testid": "risk-atRisk" }, heading("At risk: negative effective score", "atRisk"), ruleTable(r.atRisk, "Active rules with a negative effective score, lowest first", { label: "Why", cell: (x) => (x as Risk["atRisk"][number]).reason ?? "–" })),
    h(
      "div",
      { "data-testid": "risk-stale" },
      heading(`Stale: no feedback for more than ${r.staleThresholdDays ?? "the half-life in"} days`, "stale"),
      ruleTable(r.stale, "Active rules without recent feedback, most stale first", { label: "Days since feedback", cell: (x) => fmtNumber((x as Risk["stale"][number]).daysSinceFeedback ?? null) }),
    ),
    h(
      "div",
      { "data-testid": "risk-expiring" },
      heading(`Expiring within ${r.expiringWithinDays ?? 30} days`, "expiring"),
      ruleTable(r.expiring, "Active rules that expire soon, soonest first", { label: "Expires in (days)", cell: (x) => fmtNumber((x as Risk["expiring"][number]).expiresInDays ?? null) }),
    ),
  );
}

function ruleCard(r: RuleSummary): HTMLElement {
  return h(
    "article",
    { class: "card", "data-rule": r.id },
    h("p", { class: "card-content" }, r.content),
    h("p", { class: "muted" }, ruleLink(r.id), ` · ${r.category} · ${r.state}/${r.maturity} · score ${fmtNumber(r.score)} · +${r.helpfulCount}/−${r.harmfulCount}`),
  );
}

async function duplicatesView(): Promise<HTMLElement> {
  const d = await get<Duplicates>("duplicates");
  return h(
    "section",
    { "aria-labelledby": "h-dups" },
    h("h2", { id: "h-dups" }, "Near-duplicates and conflicts"),
    h("h3", null, `Near-duplicates (${d.pairs.length})`),
    d.pairs.length === 0 ? h("p", null, "No near-duplicate rules.") : null,
    h("ul", { class: "pairs", "data-testid": "pairs" }, d.pairs.map((p) => h("li", { class: "pair" }, h("p", { class: "pair-why" }, `Similarity ${Math.round(p.similarity * 100)}%`), h("div", { class: "side-by-side" }, ruleCard(p.a), ruleCard(p.b))))),
    h("h3", null, `Conflicts (${d.conflicts.length})`),
    d.conflicts.length === 0 ? h("p", null, "No conflicting rules.") : null,
    h("ul", { class: "pairs", "data-testid": "conflicts" }, d.conflicts.map((c) => h("li", { class: "pair" }, h("p", { class: "pair-why" }, c.reason), h("div", { class: "side-by-side" }, ruleCard(c.a), ruleCard(c.b))))),
  );
}

function idList(label: string, ids: readonly string[]): HTMLElement {
  return h("div", { class: "idlist", "data-list": label }, h("strong", null, `${label} (${ids.length}): `), ids.length === 0 ? "none" : ids.map((id, i) => [i ? ", " : "", ruleLink(id)]));
}

async function runsView(route: Route): Promise<HTMLElement> {
  const offset = offsetOf(route);
  const page = await get<Page<Run>>("runs", { offset, limit: PAGE_SIZE });
  return h(
    "section",
    { "aria-labelledby": "h-runs" },
    h("h2", { id: "h-runs" }, "Reflection runs"),
    pager(page, (o) => href("runs", undefined, { offset: o }), "runs"),
    page.items.length === 0 ? h("p", null, "No reflection runs recorded.") : null,
    h(
      "ol",
      { class: "runs", "data-testid": "runs" },
      page.items.map((run) =>
        h(
          "li",
          { class: "run", "data-run": run.runId },
          h(
            "div",
            { class: "run-head" },
            h("h3", null, h("code", null, run.runId)),
            h("span", { class: "muted" }, `${fmtDate(run.at)}${run.mode ? ` · ${run.mode}` : ""}${run.sessions !== undefined ? ` · ${Array.isArray(run.sessions) ? run.sessions.length : run.sessions} sessions` : ""}`),
            run.reverted
              ? h("span", { class: "badge", "data-testid": "reverted" }, "reverted")
              : h(
                  "button",
                  {
                    type: "button",
                    class: "btn btn-danger",
                    "data-action": "undo-run",
                    onclick: async () => {
                      const ok = await confirmAction({
                        title: "Undo this reflection run?",
                        body: `Reverts every change run ${run.runId} made: removes ${run.added.length} added rule(s), restores ${run.updated.length} updated and ${run.removed.length} removed rule(s).`,
                        confirmLabel: "Undo run",
                        danger: true,
                      });
                      if (ok) await act("Undo run", "actions/undo-run", { runId: run.runId });
                    },
                  },
                  "Undo run",
                ),
          ),
          idList("added", run.added),
          idList("updated", run.updated),
          idList("removed", run.removed),
        ),
      ),
    ),
  );
}

async function traumasView(route: Route): Promise<HTMLElement> {
  const offset = offsetOf(route);
  const page = await get<Page<Trauma>>("traumas", { offset, limit: PAGE_SIZE });
  return h(
    "section",
    { "aria-labelledby": "h-traumas" },
    h("h2", { id: "h-traumas" }, "Traumas"),
    h("p", { class: "muted" }, "Patterns that caused serious harm before; agents are warned when a task matches one."),
    pager(page, (o) => href("traumas", undefined, { offset: o }), "traumas"),
    h(
      "table",
      { class: "data", "data-testid": "traumas" },
      h("caption", { class: "sr-only" }, "Traumas"),
      h("thead", null, h("tr", null, ["Pattern", "Why", "Severity", "Scope", "Created", "Status"].map((c) => h("th", { scope: "col" }, c)))),
      h(
        "tbody",
        null,
        page.items.length === 0 ? h("tr", null, h("td", { colspan: 6 }, "No traumas recorded.")) : null,
        page.items.map((t) =>
          h(
            "tr",
            { "data-trauma": t.id ?? t.pattern },
            h("td", null, h("code", null, t.pattern)),
            h("td", null, t.trigger_event?.human_message ?? "–"),
            h("td", null, t.severity ?? "–"),
            h("td", null, t.scope === "project" && t.projectPath ? `project (${t.projectPath})` : (t.scope ?? "–")),
            h("td", null, fmtDate(t.created_at)),
            h("td", null, t.status ?? "active"),
          ),
        ),
      ),
    ),
  );
}

async function contextLogView(route: Route): Promise<HTMLElement> {
  const offset = offsetOf(route);
  const page = await get<Page<ContextEntry>>("context-log", { offset, limit: PAGE_SIZE });
  return h(
    "section",
    { "aria-labelledby": "h-ctx" },
    h("h2", { id: "h-ctx" }, "Context log"),
    h("p", { class: "muted" }, "What agents asked for, which rules they got, and which of those they marked afterwards. Newest first."),
    pager(page, (o) => href("context-log", undefined, { offset: o }), "requests"),
    h(
      "ol",
      { class: "ctx", "data-testid": "context-log" },
      page.items.map((e) => {
        const marks = new Map(e.markedAfter.map((m) => [m.id, m]));
        return h(
          "li",
          { class: "ctx-entry" },
          h("p", null, h("span", { class: "muted" }, fmtDate(e.at)), " ", h("strong", { class: "task" }, e.task)),
          h(
            "ul",
            { class: "returned" },
            e.returned.length === 0 ? h("li", null, "no rules returned") : null,
            e.returned.map((r) => {
              const m = marks.get(r.id);
              return h("li", { "data-returned": r.id }, ruleLink(r.id), r.content ? ` ${preview(r.content, 90)}` : "", m ? h("span", { class: `tag tag-${m.type}`, "data-marked": m.type }, `marked ${m.type}`) : null);
            }),
          ),
          e.markedAfter.filter((m) => !e.returned.some((r) => r.id === m.id)).map((m) => h("p", { class: "muted" }, `Also marked: `, ruleLink(m.id), ` ${m.type}`)),
        );
      }),
    ),
  );
}

const VIEWS: Record<string, (route: Route) => Promise<HTMLElement>> = {
  overview: overviewView,
  rules: rulesView,
  rule: ruleView,
  risk: riskView,
  duplicates: duplicatesView,
  runs: runsView,
  traumas: traumasView,
  "context-log": contextLogView,
};

// ---------- start ----------

captureToken();
shell();
if (!hasToken()) announce("No access token in this tab: open the address printed by `cm dashboard` if the views fail to load.");
let lastView = parseRoute().name;
window.addEventListener("hashchange", () => {
  const name = parseRoute().name;
  const moved = name !== lastView;
  lastView = name;
  // Focus moves to the new view only when the view changes (not while filtering the rules list).
  void render().then(() => {
    if (!moved) return;
    main.focus({ preventScroll: true });
    window.scrollTo(0, 0);
  });
});
void render();
