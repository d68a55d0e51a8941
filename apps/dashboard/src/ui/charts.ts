// Charts drawn with uPlot (canvas). Each chart also gets a text equivalent (a table inside a
// <details>) so the numbers are reachable by keyboard and screen readers.
import uPlot from "uplot";
import { fmtDate, fmtNumber, h } from "./dom.js";

const INK = "#1f2933";
const GRID = "#d9dee3";
const BLUE = "#1a56b0";
const GREEN = "#1b7a3a";
const RED = "#b3261e";

const live = new Set<uPlot>();

/** Charts of the previous view are destroyed before the next one renders. */
export function destroyCharts(): void {
  for (const chart of live) chart.destroy();
  live.clear();
}

function widthOf(el: HTMLElement): number {
  return Math.max(280, Math.min(960, (el.parentElement?.clientWidth ?? 640) - 8));
}

function axis(label?: string): uPlot.Axis {
  return { stroke: INK, grid: { stroke: GRID, width: 1 }, ticks: { stroke: GRID, width: 1 }, label, labelSize: label ? 20 : 0 };
}

export interface Bin {
  /** null = open end (below the first edge / from the last edge up). */
  from: number | null;
  to: number | null;
  count: number;
}

export function binLabel(b: Bin): string {
  if (b.from === null && b.to === null) return "any";
  if (b.from === null) return `below ${fmtNumber(b.to)}`;
  if (b.to === null) return `${fmtNumber(b.from)} and up`;
  return `${fmtNumber(b.from)} to ${fmtNumber(b.to)}`;
}

export function histogramChart(bins: readonly Bin[]): HTMLElement {
  const labels = bins.map(binLabel);
  const target = h("div", { class: "chart", role: "img", "aria-label": `Score histogram: ${bins.map((b, i) => `${labels[i]}: ${b.count}`).join("; ")}` });
  const table = h(
    "table",
    { class: "data", "data-testid": "histogram-table" },
    h("caption", null, "Active rules per effective-score bin"),
    h("thead", null, h("tr", null, h("th", { scope: "col" }, "Score"), h("th", { scope: "col" }, "Rules"))),
    h(
      "tbody",
      null,
      bins.map((b, i) => h("tr", null, h("td", null, labels[i]), h("td", { class: "num", "data-bin": i }, fmtNumber(b.count)))),
    ),
  );
  const wrap = h("figure", { class: "figure" }, target, h("details", null, h("summary", null, "Show the numbers"), table));
  requestAnimationFrame(() => {
    if (!target.isConnected || bins.length === 0) return;
    // Bins are drawn at equal widths (x = bin index) since the outer ones are open-ended.
    const xs = bins.map((_b, i) => i);
    const ys = bins.map((b) => b.count);
    const chart = new uPlot(
      {
        width: widthOf(target),
        height: 220,
        legend: { show: false },
        cursor: { show: true, drag: { x: false, y: false } },
        scales: {
          x: { time: false, range: () => [-0.6, bins.length - 0.4] },
          y: { range: (_u, _min, max) => [0, Math.max(1, Math.ceil(max * 1.1))] },
        },
        axes: [
          { ...axis("effective score"), splits: () => xs, values: (_u, splits) => splits.map((i) => labels[i] ?? "") },
          axis("active rules"),
        ],
        series: [
          {},
          {
            label: "rules",
            stroke: BLUE,
            fill: "rgba(26, 86, 176, 0.55)",
            width: 1,
            paths: uPlot.paths.bars?.({ size: [0.85, Infinity], align: 0 }),
            points: { show: false },
          },
        ],
      },
      [xs, ys],
      target,
    );
    live.add(chart);
  });
  return wrap;
}

export interface ScorePoint {
  at: string;
  score: number;
}
export interface FeedbackPoint {
  at: string;
  type: "helpful" | "harmful";
}

function scoreAt(series: readonly ScorePoint[], atMs: number): number {
  let best = series[0]?.score ?? 0;
  let bestGap = Infinity;
  for (const p of series) {
    const gap = Math.abs(Date.parse(p.at) - atMs);
    if (gap < bestGap) {
      bestGap = gap;
      best = p.score;
    }
  }
  return best;
}

export function scoreChart(series: readonly ScorePoint[], events: readonly FeedbackPoint[]): HTMLElement {
  const target = h("div", { class: "chart", role: "img", "aria-label": `Effective score over time, ${series.length} points, ${events.length} feedback events` });
  const table = h(
    "table",
    { class: "data" },
    h("caption", null, "Effective score over time"),
    h("thead", null, h("tr", null, h("th", { scope: "col" }, "When"), h("th", { scope: "col" }, "Score"))),
    h("tbody", null, series.map((p) => h("tr", null, h("td", null, fmtDate(p.at)), h("td", { class: "num" }, fmtNumber(p.score))))),
  );
  const wrap = h(
    "figure",
    { class: "figure" },
    target,
    h("figcaption", { class: "legend" }, h("span", { class: "key key-score" }, "score"), h("span", { class: "key key-helpful" }, "helpful"), h("span", { class: "key key-harmful" }, "harmful")),
    h("details", null, h("summary", null, "Show the numbers"), table),
  );
  requestAnimationFrame(() => {
    if (!target.isConnected || series.length === 0) return;
    // One x axis for the line and the event markers: the union of all timestamps, sorted.
    const times = new Map<number, { score: number | null; helpful: number | null; harmful: number | null }>();
    for (const p of series) times.set(Math.floor(Date.parse(p.at) / 1000), { score: p.score, helpful: null, harmful: null });
    for (const e of events) {
      const t = Math.floor(Date.parse(e.at) / 1000);
      const row = times.get(t) ?? { score: null, helpful: null, harmful: null };
      row[e.type] = scoreAt(series, Date.parse(e.at));
      times.set(t, row);
    }
    const xs = [...times.keys()].sort((a, b) => a - b);
    const data: uPlot.AlignedData = [
      xs,
      xs.map((x) => times.get(x)?.score ?? null),
      xs.map((x) => times.get(x)?.helpful ?? null),
      xs.map((x) => times.get(x)?.harmful ?? null),
    ];
    const marker = (color: string): uPlot.Series => ({
      stroke: color,
      fill: color,
      width: 0,
      paths: () => null,
      points: { show: true, size: 10, stroke: color, fill: color },
    });
    const chart = new uPlot(
      {
        width: widthOf(target),
        height: 240,
        legend: { show: false },
        scales: {
          // A flat series (no feedback yet, or a retired rule) gets a ±1 band instead of uPlot's 0–100.
          y: { range: (_u, min, max) => (min === max ? [min - 1, max + 1] : [min - (max - min) * 0.1, max + (max - min) * 0.1]) },
        },
        axes: [axis(), axis("score")],
        series: [{}, { label: "score", stroke: BLUE, width: 2, spanGaps: true, points: { show: false } }, { label: "helpful", ...marker(GREEN) }, { label: "harmful", ...marker(RED) }],
      },
      data,
      target,
    );
    live.add(chart);
  });
  return wrap;
}
