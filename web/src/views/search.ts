// Search: a query box over the loaded indexes; each hit shows its title, section, paragraph, score and
// text with the matched query words marked, and links to its page with the hit's span highlighted.

import { api } from "../api.js";
import { h, marked } from "../dom.js";
import { go, type Route } from "../router.js";
import type { HealthAnswer, Provenance, SearchAnswer } from "tartan-server-api";

/** The explorer link that opens a provenance span in the page viewer. */
export function spanHref(p: Provenance): string {
  const qs = new URLSearchParams();
  if (p.start_paragraph_id !== undefined) qs.set("p", String(p.start_paragraph_id));
  if (p.end_paragraph_id !== undefined) qs.set("ep", String(p.end_paragraph_id));
  if (p.start_character !== undefined) qs.set("s", String(p.start_character));
  if (p.end_character !== undefined) qs.set("e", String(p.end_character));
  return `#/page/${encodeURIComponent(String(p.wikipedia_id))}${qs.size ? `?${qs}` : ""}`;
}

export function where(p: Provenance): string {
  const sp = p.start_paragraph_id;
  if (sp === undefined) return "";
  const ep = p.end_paragraph_id;
  return ep !== undefined && ep !== sp ? `¶${sp}–${ep}` : `¶${sp}`;
}

export async function searchView(app: HTMLElement, route: Route): Promise<void> {
  const health = await api<HealthAnswer>("/api/health");
  const q = route.params.get("q") ?? "";
  const index = route.params.get("index") ?? health.indexes[0]?.name ?? "";
  const k = route.params.get("k") ?? "10";
  const input = h("input", { type: "search", id: "q", name: "q", value: q, placeholder: "Ask a question or type keywords", required: true, autocomplete: "off" });
  const indexSelect = h("select", { id: "index", name: "index" }, ...health.indexes.map((i) => h("option", { value: i.name, selected: i.name === index }, `${i.name} (${i.kind}, ${i.units.toLocaleString("en-US")} ${i.unit}s${i.text ? "" : "; query vectors only, no text search"})`)));
  const kSelect = h("select", { id: "k", name: "k" }, ...["5", "10", "20", "50"].map((v) => h("option", { value: v, selected: v === k }, v)));
  const form = h(
    "form",
    {
      class: "bar",
      role: "search",
      onsubmit: (e: Event) => {
        e.preventDefault();
        go("search", { q: input.value.trim(), index: indexSelect.value, k: kSelect.value });
      },
    },
    h("label", { for: "q", class: "grow" }, "Query", input),
    h("label", { for: "index" }, "Index", indexSelect),
    h("label", { for: "k" }, "Hits", kSelect),
    h("button", { type: "submit" }, "Search"),
  );
  // Where the hits go, or an API error (the form above stays as the user left it).
  const results = h("section", { "aria-live": "polite", "aria-label": "Results", "data-results": true });
  app.replaceChildren(h("h1", {}, "Search"), form, results);
  if (health.indexes.length === 0) {
    results.append(h("p", { class: "muted" }, "No index is loaded: start the server with --index DIR."));
    return;
  }
  if (!q) {
    results.append(h("p", { class: "muted" }, health.ks ? `${health.ks.pages.toLocaleString("en-US")} pages in the knowledge source.` : "No knowledge source loaded: pages cannot be opened (start the server with --ks DIR)."));
    input.focus();
    return;
  }
  results.append(h("p", { class: "muted" }, "Searching…"));
  const t0 = performance.now();
  const r = await api<SearchAnswer>("/api/search", { q, index, k });
  const ms = performance.now() - t0;
  results.replaceChildren(
    h("p", { class: "muted" }, `${r.hits.length} hits (${r.kind}, ${ms.toFixed(0)} ms)`),
    h(
      "ol",
      { class: "hits" },
      ...r.hits.map((hit) =>
        h(
          "li",
          {},
          h(
            "div",
            { class: "hit-head" },
            h("span", { class: "score" }, `${hit.rank}.`),
            h("a", { href: spanHref(hit.provenance), class: "hit-title" }, hit.provenance.title ?? hit.provenance.wikipedia_id),
            h("span", { class: "muted" }, [hit.provenance.section?.replace(/^Section::::/, "").replace(/\.$/, ""), where(hit.provenance)].filter(Boolean).join(" ")),
            h("span", { class: "score" }, `score ${hit.score.toFixed(4)}`),
          ),
          h("p", { class: "passage" }, ...marked(hit.text, hit.highlights)),
        ),
      ),
    ),
  );
}
