// Reading chosen top-level fields of a page's JSON without parsing the rest: the same values as
// JSON.parse gives, whatever the layout; broken structure is an error.
import { describe, expect, it } from "vitest";
import { decodePage, decodePageText, compressPage } from "../../src/knowledge/codec.js";
import { readTopLevelFields } from "../../src/knowledge/page-fields.js";

const bytes = (s: string) => Buffer.from(s, "utf8");
const KEYS = ["wikipedia_id", "text"] as const;

describe("readTopLevelFields", () => {
  it("gives the values JSON.parse gives, skipping nested keys of the same name, escapes and odd spacing", () => {
    const json =
      ' { "_id" : "1", "wikipedia_id":12,"anchors":[{"text":"no","wikipedia_id":"9"},{"a":[1,{"b":"]}\\"\\\\"}]}],\n' +
      '\t"te\\u0078t" : ["Title\\n", "naïve \\"quoted\\" 😀 \\ud800", ""], "history": {"text": "x"}, "n": -1.5e3, "t": true, "z": null } ';
    const want = JSON.parse(json) as { wikipedia_id: number; text: string[] };
    expect(readTopLevelFields(bytes(json), KEYS)).toEqual([want.wikipedia_id, want.text]);
    expect(readTopLevelFields(bytes(json), ["n", "t", "z", "missing"])).toEqual([-1500, true, null, undefined]);
  });

  it("takes the last of duplicate keys, as JSON.parse does", () => {
    const json = '{"text":["first"],"x":{},"text":["second"]}';
    expect(readTopLevelFields(bytes(json), ["text", "x"])).toEqual([["second"], {}]);
    expect(readTopLevelFields(bytes("{}"), KEYS)).toEqual([undefined, undefined]);
  });

  it("refuses bytes that are not one whole object", () => {
    expect(() => readTopLevelFields(bytes('["text"]'), KEYS)).toThrow("page JSON: not an object at byte 0");
    expect(() => readTopLevelFields(bytes('{"text":["a]}'), KEYS)).toThrow("page JSON: unterminated string at byte 10");
    expect(() => readTopLevelFields(bytes('{"text":["a"]'), KEYS)).toThrow("page JSON: expected ',' or '}' at byte 13");
    expect(() => readTopLevelFields(bytes('{"text" ["a"]}'), KEYS)).toThrow("page JSON: expected ':' at byte 8");
    expect(() => readTopLevelFields(bytes('{"a":1} x'), KEYS)).toThrow("page JSON: bytes after the object at byte 8");
  });
});

describe("decodePageText", () => {
  it("equals decodePage's id (as a string) and text", () => {
    const page = { _id: "7", wikipedia_id: 7, wikipedia_title: "T", text: ["T\n", "Body 😀."], anchors: [{ text: "Body", paragraph_id: 1 }] };
    const blob = compressPage(JSON.stringify(page));
    const full = decodePage(blob);
    expect(decodePageText(blob)).toEqual({ wikipedia_id: full.wikipedia_id, text: full.text });
    expect(decodePageText(blob).wikipedia_id).toBe("7");
  });
});
