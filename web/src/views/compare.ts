// Two runs side by side: each metric's means with confidence intervals, the difference and its
// significance (paired randomization test, Holm-corrected, as `tartan compare`), a chart of the
// per-query differences, and the records where the two runs disagree.

import { api } from "../api.js";
import { fmt, h, svg } from "../dom.js";
import { go, href, type Route } from "../router.js";
import type { CompareAnswer, RunsAnswer } from "tartan-server-api";

/** Per-query differences (b − a) sorted, as bars around a zero line. */
function differenceChart(diffs: number[], a: string, b: string): SVGElement {
  const sorted = [...diffs].sort((x, y) => x - y);
  const W = 800;
  const H = 220;
  const pad = 30;
  const max = Math.max(1e-9, ...sorted.map(Math.abs));
  const y0 = H / 2;
  const scale = (H / 2 - pad) / max;
  const bw = (W - 2 * pad) / Math.max(1, sorted.length);
  let path = "";
  sorted.forEach((d, i) => {
    if (d === 0) return;
    const x = pad + i * bw;
    path += `M${x.toFixed(2)},${y0}V${(y0 - d * scale).toFixed(2)}`;
  });
  const better = sorted.filter((d) => d > 0).length;
  const worse = sorted.filter((d) => d < 0).length;
  return svg(
    "svg",
    { class: "chart", viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": `Per-query differences ${b} minus ${a}: ${better} better, ${worse} worse, ${sorted.length - better - worse} equal` },
    svg("line", { x1: pad, x2: W - pad, y1: y0, y2: y0, stroke: "#888", "stroke-width": 1 }),
    svg("path", { d: path, stroke: "#1a56c4", "stroke-width": Math.max(0.5, Math.min(4, bw)), fill: "none" }),
    svg("text", { x: pad, y: 16, "font-size": 13, fill: "#333" }, `+${fmt(max, 0)}: ${b} better (${better})`),
    svg("text", { x: pad, y: H - 6, "font-size": 13, fill: "#333" }, `−${fmt(max, 0)}: ${b} worse (${worse})`),
    svg("text", { x: W - pad, y: H - 6, "font-size": 12, fill: "#666", "text-anchor": "end" }, `${sorted.length} queries, sorted by difference`),
  );
}

export async function compareView(app: HTMLElement, route: Route): Promise<void> {
  const { runs } = await api<RunsAnswer>("/api/runs");
  const chosen = (route.params.get("runs") ?? "").split(",").filter(Boolean);
  const [a, b] = chosen.length === 2 ? chosen : [runs[0]?.name, runs[1]?.name];
  const metric = route.params.get("metric") ?? "";
  const pick = (id: string, label: string, value: string | undefined) =>
    h("label", { for: id }, label, h("select", { id, name: id }, ...runs.map((r) => h("option", { value: r.name, selected: r.name === value }, r.name))));
  const form = h(
    "form",
    {
      class: "bar",
      onsubmit: (e: Event) => {
        e.preventDefault();
        const fa = (document.getElementById("run-a") as HTMLSelectElement).value;
        const fb = (document.getElementById("run-b") as HTMLSelectElement).value;
        const fm = (document.getElementById("metric") as HTMLSelectElement | null)?.value;
        go("compare", { runs: `${fa},${fb}`, metric: fm });
      },
    },
    pick("run-a", "Baseline", a),
    pick("run-b", "Run", b),
  );
  app.replaceChildren(h("h1", {}, "Compare two runs"), form);
  if (runs.length < 2 || !a || !b) {
    app.append(h("p", { class: "muted" }, "Two recorded runs of the same dataset are needed."));
    form.append(h("button", { type: "submit" }, "Compare"));
    return;
  }
  const r = await api<CompareAnswer>("/api/compare", { runs: `${a},${b}`, metric: metric || undefined });
  form.append(h("label", { for: "metric" }, "Metric", h("select", { id: "metric", name: "metric" }, ...r.metrics.map((m) => h("option", { value: m, selected: m === r.metric }, m)))), h("button", { type: "submit" }, "Compare"));
  const c = r.comparison;
  const rowB = c.runs[1];
  app.append(
    h("h2", {}, `${b} against ${a}`),
    h(
      "div",
      { class: "table-wrap" },
      h(
        "table",
        { class: "compare" },
        h("thead", {}, h("tr", {}, h("th", {}, "metric"), h("th", { class: "num" }, a), h("th", { class: "num" }, b), h("th", { class: "num" }, "difference"), h("th", { class: "num" }, "p (adjusted)"), h("th", { class: "num" }, "wins / ties / losses"))),
        h(
          "tbody",
          {},
          ...c.metrics.map((m) => {
            const cmp = rowB.comparisons?.[m];
            const cell = (i: number) => `${fmt(c.runs[i].cells[m].mean)} [${fmt(c.runs[i].cells[m].interval.low)}, ${fmt(c.runs[i].cells[m].interval.high)}]`;
            return h(
              "tr",
              {},
              h("th", { scope: "row" }, m),
              h("td", { class: "num" }, cell(0)),
              h("td", { class: "num" }, cell(1)),
              h("td", { class: "num" }, cmp ? `${cmp.difference >= 0 ? "+" : ""}${fmt(cmp.difference)}${cmp.significant ? " †" : ""}` : "–"),
              h("td", { class: "num" }, cmp ? cmp.adjusted.toPrecision(3) : "–"),
              h("td", { class: "num" }, cmp ? `${cmp.wins} / ${cmp.ties} / ${cmp.losses}` : "–"),
            );
          }),
        ),
      ),
    ),
    h("p", { class: "muted" }, `${c.queries.toLocaleString("en-US")} queries; ${c.settings.test} test, ${c.settings.correction} correction; † significant at ${c.settings.alpha}; intervals ${Math.round(c.settings.level * 100)}% bootstrap.`),
    h("h2", {}, `Per-query differences in ${r.metric}`),
    differenceChart(r.differences, a, b),
    h("h2", {}, `Where they disagree on ${r.metric} (${r.disagreements.total.toLocaleString("en-US")})`),
    h(
      "div",
      { class: "table-wrap" },
      h(
        "table",
        { class: "disagreements" },
        h("thead", {}, h("tr", {}, h("th", {}, "question"), h("th", {}, a), h("th", {}, b))),
        h(
          "tbody",
          {},
          ...r.disagreements.records.map((d) =>
            h("tr", {}, h("td", {}, d.input), h("td", {}, `${d.a.answer ?? "–"} (${fmt(d.a.score, 0)})`), h("td", {}, `${d.b.answer ?? "–"} (${fmt(d.b.score, 0)})`)),
          ),
        ),
      ),
    ),
    h("p", {}, h("a", { href: href(`runs/${encodeURIComponent(b)}`, { filter: "wrong" }) }, `${b}: wrong answers`), " · ", h("a", { href: href(`runs/${encodeURIComponent(a)}`, { filter: "wrong" }) }, `${a}: wrong answers`)),
  );
}
