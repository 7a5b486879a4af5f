// Run browser: the recorded runs, and one run's records: input, gold answers and evidence, the
// prediction and its provenance, the per-query scores, right/wrong/no-evidence filters, and the
// retrieved passages beside the gold evidence (gold passages marked).

import { api, seg } from "../api.js";
import { fmt, h } from "../dom.js";
import { href, type Route } from "../router.js";
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

function passageList(items: Passage[], label: string, titles: Map<string, string> = new Map()): HTMLElement {
  if (items.length === 0) return h("p", { class: "muted" }, "none");
  return h(
    "ol",
    { class: "passages", "aria-label": label },
    ...items.map((p) =>
      h(
        "li",
        { class: p.gold ? "gold" : null },
        h("a", { href: spanHref(p) }, p.title ?? titles.get(String(p.wikipedia_id)) ?? p.wikipedia_id),
        " ",
        h("span", { class: "muted" }, where(p)),
        p.gold ? " " : null,
        p.gold ? h("span", { class: "tag right" }, "gold evidence") : null,
        p.text ? h("div", { class: "passage" }, p.text.length > 400 ? `${p.text.slice(0, 400)}…` : p.text) : null,
      ),
    ),
  );
}

function recordCard(r: RunRecordView, shown: string[]): HTMLElement {
  return h(
    "article",
    { class: "record", "aria-label": `record ${r.id}` },
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
      h("dd", { class: "gold-answers" }, r.gold.answers.join(" | ") || "–"),
      h("dt", {}, "prediction"),
      h("dd", { class: "prediction" }, r.prediction.answer ?? "–"),
      h("dt", {}, "scores"),
      h("dd", {}, shown.filter((m) => m in r.scores).map((m) => `${m} ${fmt(r.scores[m], 1)}`).join(" · ")),
    ),
    h(
      "div",
      { class: "cols" },
      h("section", {}, h("h4", {}, "Gold evidence"), passageList(r.gold.provenance, "gold evidence")),
      h("section", {}, h("h4", {}, "Retrieved (prediction's provenance)"), passageList(r.prediction.provenance, "retrieved passages", goldTitles(r))),
    ),
  );
}

export async function runView(app: HTMLElement, route: Route): Promise<void> {
  const name = route.path[1];
  const filter = route.params.get("filter") ?? "all";
  const offset = Number(route.params.get("offset") ?? "0") || 0;
  const { run } = await api<RunAnswer>(`/api/runs/${seg(name)}`);
  const recs = await api<RecordsAnswer>(`/api/runs/${seg(name)}/records`, { filter, offset, limit: 20 });
  const link = (params: Record<string, string | number>) => href(`runs/${encodeURIComponent(name)}`, { filter, ...params });
  app.replaceChildren(
    h("h1", {}, run.name),
    h("p", { class: "muted" }, [run.dataset, `${run.queries.toLocaleString("en-US")} queries`, `recorded ${run.created.slice(0, 16).replace("T", " ")}`, run.notes].filter(Boolean).join(" · ")),
    h("p", {}, run.metrics.map((m) => `${m} ${fmt(run.summary[m])}`).join(" · ")),
    ...recs.warnings.map((w) => h("p", { class: "error", role: "status" }, w)),
    h(
      "nav",
      { class: "filters", "aria-label": "Filter records" },
      ...FILTERS.map((f) => h("a", { href: link({ filter: f, offset: 0 }), "aria-current": f === filter ? "true" : "false", "data-filter": f }, `${f} (${(recs.counts[f] ?? 0).toLocaleString("en-US")})`)),
    ),
    h("p", { class: "muted", "aria-live": "polite" }, recs.total === 0 ? "No records." : `Records ${recs.offset + 1}–${recs.offset + recs.records.length} of ${recs.total.toLocaleString("en-US")}`),
    ...recs.records.map((r) => recordCard(r, run.metrics)),
    h(
      "div",
      { class: "pager" },
      recs.offset > 0 ? h("a", { href: link({ offset: Math.max(0, recs.offset - recs.limit) }) }, "← previous") : null,
      recs.offset + recs.limit < recs.total ? h("a", { href: link({ offset: recs.offset + recs.limit }) }, "next →") : null,
    ),
  );
}
