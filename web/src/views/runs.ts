// Run browser: the recorded runs, and one run's records: input, gold answers and evidence, the
// prediction and its provenance, the per-query scores (F1 beside EM), right/wrong/no-evidence filters,
// a search within the run and a jump to any page, and the retrieved passages beside the gold evidence
// (gold passages marked, the gold answers highlighted inside them), each passage's text collapsible.

import { api, seg } from "../api.js";
import { fmt, h, marked } from "../dom.js";
import { go, href, type Route } from "../router.js";
import type { Passage, RecordFilter, RecordsAnswer, RunAnswer, RunRecordView, RunsAnswer } from "tartan-server-api";
import { spanHref, where } from "./search.js";

/** The server's filters (api-types.ts), in the order the links show them. */
export const FILTERS: readonly RecordFilter[] = ["all", "right", "wrong", "no-evidence"];

export async function runsView(app: HTMLElement): Promise<void> {
  const { runs } = await api<RunsAnswer>("/api/runs");
  if (runs.length === 0) {
    app.replaceChildren(h("h1", {}, "Runs"), h("p", { class: "muted" }, "No runs recorded yet: tartan runs add, or tartan quickstart, then start the server with --runs DIR."));
    return;
  }
  const metrics = [...new Set(runs.flatMap((r) => r.metrics))];
  app.replaceChildren(
    h("h1", {}, "Runs"),
    h(
      "div",
      { class: "table-wrap" },
      h(
        "table",
        {},
        h("thead", {}, h("tr", {}, h("th", {}, "run"), h("th", {}, "dataset"), h("th", { class: "num" }, "queries"), ...metrics.map((m) => h("th", { class: "num" }, m)), h("th", {}, "recorded"))),
        h(
          "tbody",
          {},
          ...runs.map((r) =>
            h(
              "tr",
              {},
              h("td", {}, h("a", { href: href(`runs/${encodeURIComponent(r.name)}`) }, r.name)),
              h("td", {}, r.dataset ?? "–"),
              h("td", { class: "num" }, r.queries.toLocaleString("en-US")),
              ...metrics.map((m) => h("td", { class: "num" }, fmt(r.summary[m]))),
              h("td", {}, r.created.slice(0, 16).replace("T", " ")),
            ),
          ),
        ),
      ),
    ),
    runs.length >= 2 ? h("p", {}, h("a", { href: href("compare", { runs: `${runs[0].name},${runs[1].name}` }) }, `Compare ${runs[0].name} with ${runs[1].name}`)) : "",
  );
}

/** Titles by page id from the gold evidence, for passages that carry none (no knowledge source loaded). */
function goldTitles(r: RunRecordView): Map<string, string> {
  const titles = new Map<string, string>();
  for (const p of r.gold.provenance) if (p.title) titles.set(String(p.wikipedia_id), p.title);
  return titles;
}

/** Some gold evidence retrieved at some cut-off (R-precision counts the top R only). */
function evidenceRetrieved(r: RunRecordView): boolean {
  return r.evidence === true || Object.entries(r.scores).some(([m, v]) => /^(recall|success_rate)@\d+$/.test(m) && v > 0);
}

/** `[start, end)` UTF-16 ranges of every gold answer in `text`, ignoring case; longest first where two start together. */
export function answerRanges(text: string, answers: readonly string[]): [number, number][] {
  const out: [number, number][] = [];
  for (const a of answers) {
    const needle = a.trim();
    if (!needle) continue;
    const re = new RegExp(needle.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "giu");
    for (const m of text.matchAll(re)) out.push([m.index, m.index + m[0].length]);
  }
  return out.sort((x, y) => x[0] - y[0] || y[1] - x[1]);
}

/**
 * A list of passages: each one's title (linked to its span), paragraph and tags on a line that opens
 * and closes the passage's text (collapsed unless `open`), the gold answers marked in the text.
 */
function passageList(items: Passage[], label: string, answers: readonly string[], open: boolean, titles: Map<string, string> = new Map()): HTMLElement {
  if (items.length === 0) return h("p", { class: "muted" }, "none");
  return h(
    "ol",
    { class: "passages", "aria-label": label },
    ...items.map((p) => {
      const text = typeof p.text === "string" ? p.text : "";
      const ranges = answerRanges(text, answers);
      const head = [
        h("a", { href: spanHref(p) }, p.title ?? titles.get(String(p.wikipedia_id)) ?? p.wikipedia_id),
        " ",
        h("span", { class: "muted" }, where(p)),
        p.gold ? " " : null,
        p.gold ? h("span", { class: "tag right" }, "gold evidence") : null,
        ranges.length > 0 ? " " : null,
        ranges.length > 0 ? h("span", { class: "tag answer" }, "holds the answer") : null,
      ];
      if (!text) return h("li", { class: p.gold ? "gold" : null }, ...head);
      return h("li", { class: p.gold ? "gold" : null }, h("details", { open }, h("summary", {}, ...head), h("div", { class: "passage" }, ...marked(text, ranges, "answer"))));
    }),
  );
}

/** The scores shown for a record: the run's columns, with F1 beside EM where the run has it. */
export function shownScores(metrics: readonly string[], scores: Record<string, number>): string[] {
  const shown = metrics.filter((m) => m in scores);
  if ("f1" in scores && !shown.includes("f1")) {
    const at = shown.indexOf("em");
    shown.splice(at < 0 ? 0 : at + 1, 0, "f1");
  }
  return shown;
}

function recordCard(r: RunRecordView, metrics: string[]): HTMLElement {
  const answers = r.gold.answers;
  return h(
    "article",
    { class: "record", id: `record-${r.index + 1}`, "aria-label": `record ${r.id}` },
    h(
      "h3",
      {},
      `${r.index + 1}. ${r.input}`,
      " ",
      r.right === null ? null : h("span", { class: `tag ${r.right ? "right" : "wrong"}` }, r.right ? "right" : "wrong"),
      " ",
      r.evidence === false ? h("span", { class: "tag wrong" }, evidenceRetrieved(r) ? "evidence below the top R" : "evidence missing") : null,
    ),
    h(
      "dl",
      { class: "kv" },
      h("dt", {}, "id"),
      h("dd", {}, r.id),
      h("dt", {}, "gold"),
      h("dd", { class: "gold-answers" }, answers.join(" | ") || "–"),
      h("dt", {}, "prediction"),
      h("dd", { class: "prediction" }, r.prediction.answer ?? "–"),
      h("dt", {}, "scores"),
      h("dd", { class: "scores" }, shownScores(metrics, r.scores).map((m) => `${m} ${fmt(r.scores[m], 1)}`).join(" · ")),
    ),
    h(
      "div",
      { class: "cols" },
      h("section", {}, h("h4", {}, "Gold evidence"), passageList(r.gold.provenance, "gold evidence", answers, true)),
      h("section", {}, h("h4", {}, "Retrieved (prediction's provenance)"), passageList(r.prediction.provenance, "retrieved passages", answers, false, goldTitles(r))),
    ),
  );
}

/** Records per page of the run browser. */
const PAGE = 20;

export async function runView(app: HTMLElement, route: Route): Promise<void> {
  const name = route.path[1];
  const filter = route.params.get("filter") ?? "all";
  const q = route.params.get("q") ?? "";
  const offset = Number(route.params.get("offset") ?? "0") || 0;
  const { run } = await api<RunAnswer>(`/api/runs/${seg(name)}`);
  const recs = await api<RecordsAnswer>(`/api/runs/${seg(name)}/records`, { filter, q: q || undefined, offset, limit: PAGE });
  const link = (params: Record<string, string | number>) => href(`runs/${encodeURIComponent(name)}`, { filter, q: q || undefined, ...params });
  const pages = Math.max(1, Math.ceil(recs.total / recs.limit));
  const page = Math.floor(recs.offset / recs.limit) + 1;
  const searchInput = h("input", { type: "search", id: "run-q", name: "q", value: q, placeholder: "Question, id or answer", autocomplete: "off" });
  const pageInput = h("input", { type: "number", id: "run-page", name: "page", min: 1, max: pages, value: page, inputmode: "numeric" });
  const search = h(
    "form",
    {
      class: "bar",
      role: "search",
      "aria-label": "Search within the run",
      onsubmit: (e: Event) => {
        e.preventDefault();
        go(`runs/${encodeURIComponent(name)}`, { filter, q: searchInput.value.trim(), offset: 0 });
      },
    },
    h("label", { for: "run-q", class: "grow" }, "Search within the run", searchInput),
    h("button", { type: "submit" }, "Search"),
  );
  const jump = h(
    "form",
    {
      class: "bar jump",
      "aria-label": "Go to a page",
      onsubmit: (e: Event) => {
        e.preventDefault();
        const n = Math.min(pages, Math.max(1, Math.trunc(Number(pageInput.value)) || 1));
        go(`runs/${encodeURIComponent(name)}`, { filter, q: q || undefined, offset: (n - 1) * recs.limit });
      },
    },
    h("label", { for: "run-page" }, `Page (of ${pages})`, pageInput),
    h("button", { type: "submit", class: "secondary" }, "Go"),
  );
  const toggle = (open: boolean) => () => {
    for (const d of app.querySelectorAll<HTMLDetailsElement>("article.record details")) d.open = open;
  };
  app.replaceChildren(
    h("h1", {}, run.name),
    h("p", { class: "muted" }, [run.dataset, `${run.queries.toLocaleString("en-US")} queries`, `recorded ${run.created.slice(0, 16).replace("T", " ")}`, run.notes].filter(Boolean).join(" · ")),
    h("p", {}, run.metrics.map((m) => `${m} ${fmt(run.summary[m])}`).join(" · ")),
    ...recs.warnings.map((w) => h("p", { class: "error", role: "status" }, w)),
    search,
    h(
      "nav",
      { class: "filters", "aria-label": "Filter records" },
      ...FILTERS.map((f) => h("a", { href: link({ filter: f, offset: 0 }), "aria-current": f === filter ? "true" : "false", "data-filter": f }, `${f} (${(recs.counts[f] ?? 0).toLocaleString("en-US")})`)),
    ),
    h(
      "p",
      { class: "muted", "aria-live": "polite" },
      recs.total === 0 ? (q ? `No records hold “${q}”.` : "No records.") : `Records ${recs.offset + 1}–${recs.offset + recs.records.length} of ${recs.total.toLocaleString("en-US")}${q ? ` holding “${q}”` : ""}`,
    ),
    ...(pages > 1 ? [jump] : []),
    ...(recs.records.length > 0
      ? [h("div", { class: "bar" }, h("button", { type: "button", class: "secondary", onclick: toggle(true) }, "Expand all passages"), h("button", { type: "button", class: "secondary", onclick: toggle(false) }, "Collapse all passages"))]
      : []),
    ...recs.records.map((r) => recordCard(r, run.metrics)),
    h(
      "div",
      { class: "pager" },
      recs.offset > 0 ? h("a", { href: link({ offset: Math.max(0, recs.offset - recs.limit) }) }, "← previous") : null,
      recs.total > 0 ? h("span", { class: "muted" }, `page ${page} of ${pages}`) : null,
      recs.offset + recs.limit < recs.total ? h("a", { href: link({ offset: recs.offset + recs.limit }) }, "next →") : null,
    ),
  );
}
