// Wikipedia page titles: the display form KILT stores as `wikipedia_title` (spaces, first letter upper
// case) and the article URL built from it, shared by the SQuAD and MediaWiki-dump converters.

/** The default wiki URL prefix (English Wikipedia article path). */
export const ENWIKI_ARTICLE_PREFIX = "https://en.wikipedia.org/wiki/";

/**
 * MediaWiki's canonical display title: `_` → space, runs of spaces collapsed, trimmed, first character
 * upper-cased (namespace-0 titles on Wikipedia are first-letter case-insensitive), `%XX` escapes decoded.
 */
export function displayTitle(raw: string): string {
  let t = raw;
  if (/%[0-9A-Fa-f]{2}/.test(t)) {
    try {
      t = decodeURIComponent(t);
    } catch {
      /* not an escape sequence after all: keep the text */
    }
  }
  t = t.replace(/_/g, " ").replace(/\s+/g, " ").trim();
  if (t.length === 0) return t;
  const first = t.codePointAt(0)!;
  const head = String.fromCodePoint(first);
  return head.toUpperCase().length === head.length ? head.toUpperCase() + t.slice(head.length) : t;
}

/** The article URL of a title, Wikipedia style: spaces as `_`, other unsafe characters percent-encoded. */
export function articleUrl(title: string, prefix = ENWIKI_ARTICLE_PREFIX): string {
  const path = encodeURIComponent(displayTitle(title).replace(/ /g, "_"))
    .replace(/%2C/g, ",")
    .replace(/%3A/g, ":")
    .replace(/%2F/g, "/")
    .replace(/%40/g, "@")
    .replace(/%24/g, "$")
    .replace(/%3B/g, ";");
  return prefix + path;
}
