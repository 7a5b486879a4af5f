// An analysis is a function of its text only: wink's lexicon learns words as it reads them, and what it
// learnt from earlier texts must not change later analyses (or a resumed or sharded `tartan run` would
// answer differently from one uninterrupted process).

import { describe, expect, test } from "vitest";
import { readFileSync } from "node:fs";
import { analyze } from "../../../src/readers/extractive/text.js";
import { SQUAD_FILE } from "../helpers.js";

interface Squad {
  data: { paragraphs: { context: string }[] }[];
}

function paragraph(containing: string): string {
  const squad = JSON.parse(readFileSync(SQUAD_FILE, "utf8")) as Squad;
  for (const a of squad.data) for (const p of a.paragraphs) if (p.context.includes(containing)) return p.context;
  throw new Error(`no SQuAD paragraph holds ${containing}`);
}

describe("analyze is independent of what was analysed before", () => {
  test('"750" read first inside "c.750" (Victoria and Albert Museum) does not turn "750 MEPs" into a proper noun', () => {
    const museum = paragraph("c.750 AD");
    const parliament = paragraph("There are 750 MEPs");
    analyze(museum);
    const a = analyze(parliament);
    const i = a.tokens.findIndex((t) => t.text === "750");
    // What a fresh process gives for this paragraph.
    expect([a.tokens[i].pos, a.tokens[i].ent, a.tokens[i + 1].text]).toEqual(["NUM", "CARDINAL", "MEPs"]);
  });
});
