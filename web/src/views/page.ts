// The page viewer: a knowledge-source page paragraph by paragraph (section headers as headings), its
// anchors as links within the store, and the selected provenance span (paragraph and character range,
// characters counted in code points as KILT does) highlighted and scrolled into view.

import { api, seg } from "../api.js";
import { h } from "../dom.js";
import type { Route } from "../router.js";
import type { PageView, ProvenanceTextAnswer } from "tartan-server-api";

/** UTF-16 offset of code point `cp` in `s`. */
function utf16(s: string, cp: number): number {
  let i = 0;
  for (let n = 0; n < cp && i < s.length; n++) i += s.codePointAt(i)! > 0xffff ? 2 : 1;
  return i;
}

function intParam(p: URLSearchParams, name: string): number | undefined {
  const v = p.get(name);
  return v !== null && /^\d+$/.test(v) ? Number(v) : undefined;
}

/** One paragraph's text cut at the span's and the anchors' ends: span parts in <mark>, anchors as links. */
function paragraphNodes(text: string, span: [number, number] | null, anchors: { s: number; e: number; href: string }[]): Node[] {
  const cuts = new Set<number>([0, text.length]);
  if (span) span.forEach((c) => cuts.add(c));
  for (const a of anchors) (cuts.add(a.s), cuts.add(a.e));
  const points = [...cuts].filter((c) => c >= 0 && c <= text.length).sort((a, b) => a - b);
  const out: Node[] = [];
  for (let i = 0; i + 1 < points.length; i++) {
    const [a, b] = [points[i], points[i + 1]];
    if (a === b) continue;
    let node: Node = document.createTextNode(text.slice(a, b));
    const anchor = anchors.find((x) => a >= x.s && b <= x.e);
    if (anchor) node = h("a", { href: anchor.href }, node);
    if (span && a >= span[0] && b <= span[1]) node = h("mark", { class: "span" }, node);
    out.push(node);
  }
  return out;
}

export async function pageView(app: HTMLElement, route: Route): Promise<void> {
  const id = route.path[1];
  const title = route.params.get("title");
  const page = id !== undefined ? await api<PageView>(`/api/pages/${seg(id)}`) : await api<PageView>("/api/pages", { title: title ?? "" });
  const sp = intParam(route.params, "p");
  const ep = intParam(route.params, "ep") ?? sp;
  const sc = intParam(route.params, "s") ?? 0;
  const ec = intParam(route.params, "e");
  const byParagraph = new Map<number, { s: number; e: number; href: string }[]>();
  for (const a of page.anchors) {
    const target = a.wikipedia_id ? `#/page/${seg(a.wikipedia_id)}` : a.wikipedia_title ? `#/page?title=${encodeURIComponent(a.wikipedia_title)}` : null;
    const par = page.text[a.paragraph_id];
    if (!target || par === undefined) continue;
    const list = byParagraph.get(a.paragraph_id) ?? [];
    list.push({ s: utf16(par, a.start), e: utf16(par, a.end), href: target });
    byParagraph.set(a.paragraph_id, list);
  }
  const spanOf = (i: number, text: string): [number, number] | null => {
    if (sp === undefined || ep === undefined || i < sp || i > ep) return null;
    const s = i === sp ? utf16(text, sc) : 0;
    const e = i === ep && ec !== undefined ? utf16(text, ec) : text.length;
    return [s, e];
  };
  const body = h("article", { class: "page", "aria-label": page.wikipedia_title });
  let list: HTMLUListElement | null = null;
  page.text.forEach((raw, i) => {
    if (i === 0) return;
    const text = raw.replace(/\n$/, "");
    const span = spanOf(i, text);
    const pid = h("span", { class: "pid", "aria-hidden": "true" }, String(i));
    if (text.startsWith("Section::::")) {
      list = null;
      body.append(h("h2", { id: `p${i}`, class: span ? "in-span" : null }, pid, text.replace(/^Section::::/, "").replace(/\.$/, "").replace(/:/g, " › ")));
    } else if (text.startsWith("BULLET::::")) {
      if (!list) body.append((list = h("ul", {})));
      const prefix = /^BULLET::::-?\s?/.exec(text)![0].length;
      const shift = (x: number) => Math.max(0, x - prefix);
      const anchors = (byParagraph.get(i) ?? []).map((a) => ({ ...a, s: shift(a.s), e: shift(a.e) }));
      list.append(h("li", { id: `p${i}`, class: span ? "in-span" : null, "data-pid": i }, pid, ...paragraphNodes(text.slice(prefix), span ? [shift(span[0]), shift(span[1])] : null, anchors)));
    } else {
      list = null;
      body.append(h("p", { id: `p${i}`, class: span ? "in-span" : null, "data-pid": i }, pid, ...paragraphNodes(text, span, byParagraph.get(i) ?? [])));
    }
  });
  const head: Node[] = [h("h1", {}, page.wikipedia_title), h("p", { class: "muted" }, `wikipedia_id ${page.wikipedia_id} · ${page.text.length - 1} paragraphs`, page.url ? " · " : "", page.url ? h("a", { href: page.url, rel: "noreferrer" }, "source") : "")];
  if (sp !== undefined) {
    const span = await api<ProvenanceTextAnswer>("/api/provenance", { wikipedia_id: page.wikipedia_id, start_paragraph_id: sp, end_paragraph_id: ep, start_character: intParam(route.params, "s"), end_character: ec });
    head.push(h("section", { class: "span-box", "aria-label": "Selected span" }, h("strong", {}, `Selected span ¶${sp}${ep !== sp ? `–${ep}` : ""}${ec !== undefined || sc ? ` characters ${sc}–${ec ?? "end"}` : ""}: `), h("span", { class: "span-text" }, span.text)));
  }
  app.replaceChildren(...head, body);
  const first = sp !== undefined ? document.getElementById(`p${sp}`) : null;
  if (first) first.scrollIntoView({ block: "center" });
}
