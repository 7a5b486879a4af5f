// Tests for the titles tried for a Wikipedia URL: KILT's two rules (Python parse_qs semantics for the
// title parameter, raw last path piece) and tartan's percent-decoded extra try.

import { describe, expect, it } from "vitest";
import { pyQueryParam, pyUnquote, titlesFromUrl } from "../../src/knowledge/url.js";

describe("pyUnquote (Python urllib.parse.unquote)", () => {
  it("decodes runs of %XX as UTF-8", () => {
    expect(pyUnquote("AT%26T")).toBe("AT&T");
    expect(pyUnquote("%E2%82%AC5")).toBe("€5");
    expect(pyUnquote("Caf%c3%a9")).toBe("Café");
  });
  it("keeps malformed escapes and replaces invalid UTF-8", () => {
    expect(pyUnquote("100%zz")).toBe("100%zz");
    expect(pyUnquote("a%FFb")).toBe("a\uFFFDb");
    expect(pyUnquote("no escapes")).toBe("no escapes");
  });
});

describe("pyQueryParam (parse_qs(query)[name][0])", () => {
  it("returns the first non-empty value, + as space, decoded", () => {
    expect(pyQueryParam("title=Foo_bar&oldid=1", "title")).toBe("Foo_bar");
    expect(pyQueryParam("title=&title=Second", "title")).toBe("Second");
    expect(pyQueryParam("title=A+B%2BC", "title")).toBe("A B+C");
    expect(pyQueryParam("ti%74le=X", "title")).toBe("X");
  });
  it("skips pairs without a value", () => {
    expect(pyQueryParam("title&oldid=3", "title")).toBeUndefined();
    expect(pyQueryParam("", "title")).toBeUndefined();
  });
});

describe("titlesFromUrl", () => {
  it("uses the last path piece with _ as space (and its display form only when different)", () => {
    expect(titlesFromUrl("https://en.wikipedia.org/wiki/Email_marketing")).toEqual(["Email marketing"]);
    expect(titlesFromUrl("https://en.wikipedia.org/wiki/red_dwarf")).toEqual(["red dwarf", "Red dwarf"]);
  });
  it("tries the title parameter first and adds no display form then", () => {
    expect(titlesFromUrl("https://en.wikipedia.org/w/index.php?title=Red_dwarf&oldid=42")).toEqual([
      "Red dwarf",
      "index.php?title=Red dwarf&oldid=42",
    ]);
  });
  it("percent-decodes and drops a fragment only in the extra try", () => {
    expect(titlesFromUrl("https://en.wikipedia.org/wiki/AT%26T")).toEqual(["AT%26T", "AT&T"]);
    expect(titlesFromUrl("https://en.wikipedia.org/wiki/Email_marketing#History")).toEqual(["Email marketing#History", "Email marketing"]);
  });
  it("has no candidates for a URL ending in /", () => {
    expect(titlesFromUrl("https://en.wikipedia.org/wiki/")).toEqual([]);
  });
});
