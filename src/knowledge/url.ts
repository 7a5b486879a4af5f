// The titles KILT's `KnowledgeSource.get_page_from_url` tries for a Wikipedia URL (kilt-spec.md §1.4),
// without its live-network step: (1) the `title` query parameter as Python's `parse_qs` decodes it
// (`+` → space, %XX as UTF-8), `_` → space; (2) the last `/`-separated piece of the raw URL, `_` → space,
// not decoded. tartan adds a third, last try: that piece without `?query`/`#fragment`, percent-decoded,
// in MediaWiki's display form (wiki-title.ts).

import { displayTitle } from "./wiki-title.js";

const utf8 = new TextDecoder("utf-8", { fatal: false });

/** Python `urllib.parse.unquote(s)` (UTF-8, errors="replace"): runs of %XX become bytes, then text. */
export function pyUnquote(s: string): string {
  if (!s.includes("%")) return s;
  return s.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
    const bytes = new Uint8Array(run.length / 3);
    for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(run.slice(3 * i + 1, 3 * i + 3), 16);
    return utf8.decode(bytes);
  });
}

/**
 * The first value of `name` in a query string, as Python's `parse_qs(query)[name][0]`: pairs split on
 * `&`, pairs without `=` and pairs with an empty value dropped, `+` → space, then percent-decoded.
 */
export function pyQueryParam(query: string, name: string): string | undefined {
  for (const pair of query.split("&")) {
    const eq = pair.indexOf("=");
    if (eq < 0 || eq === pair.length - 1) continue;
    if (pyUnquote(pair.slice(0, eq).replace(/\+/g, " ")) !== name) continue;
    return pyUnquote(pair.slice(eq + 1).replace(/\+/g, " "));
  }
  return undefined;
}

/** The query of a URL as Python's `urlparse` splits it: after the first `?`, before the first `#`. */
function queryOf(url: string): string {
  const hash = url.indexOf("#");
  const noFragment = hash < 0 ? url : url.slice(0, hash);
  const q = noFragment.indexOf("?");
  return q < 0 ? "" : noFragment.slice(q + 1);
}

/**
 * The titles to look up for `url`, in order: first KILT's own candidates, then tartan's extra one
 * (only for URLs without a title parameter). Empty and repeated candidates are left out.
 */
export function titlesFromUrl(url: string): string[] {
  const out: string[] = [];
  const add = (t: string | undefined) => {
    if (t !== undefined && t.length > 0 && !out.includes(t)) out.push(t);
  };
  const param = pyQueryParam(queryOf(url), "title");
  add(param?.replace(/_/g, " "));
  const last = url.split("/").at(-1) ?? "";
  add(last.replace(/_/g, " "));
  // With a title parameter the last piece is a script name (index.php), not a title: no extra try.
  if (param === undefined) add(displayTitle(last.replace(/[?#].*$/s, "")));
  return out;
}
