// The reciting probe on SQuAD v1.1 dev: masks, files, markers, QA/QA-bridge targets, and the strict
// scoring rule on recitations derived from the real passages (perfect, the masked input copied, every
// other span wrong, the word after each span dropped).

import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readSquadFile } from "../../src/knowledge/squad.js";
import {
  buildReciteFiles,
  loadRecitations,
  scoreRecitationFiles,
  answerSpans,
  checkedSpan,
  checkedText,
  containsTokens,
  extractBridgeAnswer,
  markers,
  maskPassage,
  oneLine,
  probeItem,
  qaSplitCounts,
  recitePassages,
  scoreRecitation,
  scoreRecitations,
  writeReciteFiles,
  type ProbeItem,
} from "../../src/analysis/recite.js";

const V11 = new URL("../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url).pathname;
const passages = recitePassages(readSquadFile(V11));
const items = passages.map((p) => probeItem(p, markers(false)));
const tmp = mkdtempSync(join(tmpdir(), "tartan-recite-"));
const lines = (f: string) => readFileSync(f, "utf8").split("\n").slice(0, -1);

describe("the probe", () => {
  it("masks the merged answer spans of every question of a passage", () => {
    expect(passages.length).toBe(2067);
    expect(passages[0].id).toBe("squad:Super_Bowl_50#1");
    // "Super Bowl" (0–10), "the 2015 season" (112–127), …, "Super Bowl L" (693–705); the annotators' "2015"
    // and "the 2015 season" merge into one span.
    expect(items[0].masks).toEqual([[0, 10], [112, 127], [133, 161], [177, 191], [249, 266], [267, 272], [334, 350], [355, 427], [487, 507], [521, 532], [693, 705]]);
    expect(items[0].source.slice(0, 141)).toBe(
      "<mask> 50 was an American football game to determine the champion of the National Football League (NFL) for <mask>. The <mask> (AFC) champion",
    );
    expect(items.reduce((s, i) => s + i.masks.length, 0)).toBe(10452);
  });

  it("merges overlapping and touching spans and skips answers whose offset does not hold their text", () => {
    const p = { id: "x", article: 0, paragraph: 0, text: "In 2015 Denver won.", questions: [{ id: "q", question: "?", answers: [{ text: "2015", start: 3 }, { text: "In 2015", start: 0 }, { text: "Denver", start: 8 }, { text: "won", start: 0 }] }] };
    expect(answerSpans(p)).toEqual([[0, 7], [8, 14]]);
    expect(maskPassage(p.text, answerSpans(p))).toBe("<mask> <mask> won.");
  });

  it("adds the paper's markers on request", () => {
    const m = probeItem(passages[0], markers(true));
    expect(m.source.startsWith("<passage> <mask> 50 was an American football game")).toBe(true);
    expect(m.target.endsWith("feature the Arabic numerals 50. </passage>")).toBe(true);
    expect(markers(true).bridgeOut("P", "A")).toBe("P </passage> <answer> A </answer>");
    expect(markers(false).bridgeOut("P", "A")).toBe("P <answer> A");
    expect(markers(true).questionIn("Q?")).toBe("<question> Q? </question>");
  });

  it("reads the answer out of a QA-bridge output", () => {
    expect(extractBridgeAnswer("Southern California, often abbreviated SoCal, is ... <answer> SoCal")).toBe("SoCal");
    expect(extractBridgeAnswer("p </passage> <answer> 10th century </answer>")).toBe("10th century");
    expect(extractBridgeAnswer("no marker")).toBe("no marker");
  });
});

describe("the fine-tuning files", () => {
  it("splits QA by passage: the paper's 16/2/2, 128/16/16, or fractions", () => {
    expect(qaSplitCounts(20, [0.8, 0.1, 0.1])).toEqual([16, 2, 2]);
    expect(qaSplitCounts(160, [0.8, 0.1, 0.1])).toEqual([128, 16, 16]);
    expect(qaSplitCounts(547, [442, 53, 52])).toEqual([442, 53, 52]);
    expect(() => qaSplitCounts(20, [16, 4, 4])).toThrow("needs 24 passages; there are 20");
  });

  it("writes LM, reciting, QA and QA-bridge files for the first 20 passages", () => {
    const dir = join(tmp, "p20");
    const st = writeReciteFiles(dir, passages.slice(0, 20), { markers: true });
    expect(st).toEqual({
      passages: 20,
      masks: 183,
      questions: 378,
      qa: { train: { passages: 16, questions: 318 }, valid: { passages: 2, questions: 28 }, test: { passages: 2, questions: 32 } },
    });
    expect(lines(join(dir, "lm", "train.source")).length).toBe(20);
    expect(lines(join(dir, "lm", "valid.source"))[0].startsWith("<passage> <mask> 50 was")).toBe(true);
    expect(lines(join(dir, "lm", "test.target"))).toEqual(lines(join(dir, "lm", "valid.target")));
    expect(lines(join(dir, "qa", "train.source"))[0]).toBe("<question> Which NFL team represented the AFC at Super Bowl 50? </question>");
    expect(lines(join(dir, "qa", "train.target"))[0]).toBe("Denver Broncos </answer>");
    // valid/test targets list every distinct answer, tab-separated
    expect(lines(join(dir, "qa", "valid.target")).length).toBe(28);
    expect(lines(join(dir, "qa", "valid.target")).some((l) => l.includes("\t"))).toBe(true);
    const bridge = lines(join(dir, "qa-bridge", "train.target"))[0];
    expect(bridge.startsWith("Super Bowl 50 was an American football game")).toBe(true);
    expect(bridge.endsWith("numerals 50. </passage> <answer> Denver Broncos </answer>")).toBe(true);
    expect(JSON.parse(lines(join(dir, "qa", "test.jsonl"))[0]).passage).toBe(passages[18].id);
    const probe = lines(join(dir, "recite.jsonl")).map((l) => JSON.parse(l) as ProbeItem);
    expect(probe.length).toBe(20);
    expect(probe[0].masks).toEqual(items[0].masks);
    // written again over a link planted where a file goes: the link is replaced, its target untouched
    const victim = join(tmp, "victim.txt");
    writeFileSync(victim, "keep");
    rmSync(join(dir, "qa", "train.source"));
    symlinkSync(victim, join(dir, "qa", "train.source"));
    writeReciteFiles(dir, passages.slice(0, 20), { markers: true });
    expect(readFileSync(victim, "utf8")).toBe("keep");
    expect(lines(join(dir, "qa", "train.source")).length).toBe(318);
  });
});

describe("strict scoring", () => {
  it("checks each span with the words after it, up to the next mask or 10 tokens", () => {
    const it0 = items[0];
    expect(checkedText(it0.passage, it0.masks, 0)).toBe("Super Bowl 50 was an American football game to determine the champion");
    expect(checkedText(it0.passage, it0.masks, 1)).toBe("the 2015 season. The ");
    expect(checkedText(it0.passage, it0.masks, 4)).toBe("Carolina Panthers "); // the next mask follows at once
    expect(checkedText(it0.passage, it0.masks, 0, 2)).toBe("Super Bowl 50 was");
  });

  it("lets the first expected token end an output token only where the span starts inside a word, and the last begin one only where the text stops inside one", () => {
    expect(containsTokens(["the", '"golden', "anniversary"], ['"golden', "anniversary"])).toBe(true);
    expect(containsTokens(["the", '"golden', "anniversary"], ["golden", "anniversary"])).toBe(false);
    expect(containsTokens(["the", '"golden', "anniversary"], ["golden", "anniversary"], true)).toBe(true);
    expect(containsTokens(["in", "1970s,", "the"], ["1970"], false, true)).toBe(true);
    expect(containsTokens(["in", "1970s,", "the"], ["970"], true, true)).toBe(true);
    expect(containsTokens(["in", "1950", "the"], ["50"])).toBe(false);
    expect(containsTokens(["a", "b", "c"], ["a", "x", "c"])).toBe(false);
    expect(containsTokens(["a", "b", "c"], ["b", "c", "d"])).toBe(false);
    // SQuAD: a span "8" annotated inside "20–18" starts inside a word; "Super Bowl L" follows a quote.
    expect(checkedSpan(items[1].passage, items[1].masks, 7)).toEqual({ text: "8 in the AFC Championship Game. They joined the Patriots, Dallas", openStart: true, openEnd: false });
    expect(checkedSpan(items[0].passage, items[0].masks, 10)).toMatchObject({ text: 'Super Bowl L"), so that the logo could prominently feature the Arabic', openStart: true });
    // "the 50th Super Bowl " stops at a mask that starts after a quote, inside the word '"spectacular"'.
    expect(checkedSpan(items[4].passage, items[4].masks, 2)).toEqual({ text: 'the 50th Super Bowl "', openStart: false, openEnd: true });
  });

  it("counts a span only with its context: a right answer followed by a wrong word fails", () => {
    const item = { passage: "The Broncos beat the Panthers in 2016 at Levi's Stadium.", masks: [[4, 11], [32, 36]] as [number, number][] };
    expect(scoreRecitation(item, "The Broncos beat the Panthers in 2016 at Levi's Stadium.")).toEqual([true, true]);
    expect(scoreRecitation(item, "The Broncos defeated the Panthers in 2016 at Levi's Stadium.")).toEqual([false, true]);
    expect(scoreRecitation(item, "<passage> The Broncos beat the Panthers in 2015 at Levi's Stadium. </passage>")).toEqual([true, false]);
    expect(scoreRecitation(item, "The Broncos defeated the Panthers", 0)).toEqual([true, false]);
  });

  it("scores recitations of all 2,067 SQuAD dev passages derived from the text", () => {
    const perfect = scoreRecitations(items, items.map((i) => i.passage)).score;
    expect(perfect).toEqual({ passages: 2067, missing: 0, spans: 10452, correct: 10452, accuracy: 1, passageMean: 1 });
    // Copying the masked input: only spans whose text and following words recur elsewhere in the passage.
    expect(scoreRecitations(items, items.map((i) => i.source)).score.correct).toBe(11);
    expect(scoreRecitations(items, items.map((i) => i.source), 0).score.correct).toBe(706);
    // Every other span (1st, 3rd, …) replaced by XXX: 5,839 spans are left intact, 4 replaced ones recur elsewhere.
    const odd = items.map((it) => maskPassage(it.passage, it.masks.filter((_, i) => i % 2 === 1)).replaceAll("<mask>", "XXX"));
    expect(items.reduce((s, it) => s + Math.ceil(it.masks.length / 2), 0)).toBe(5839);
    const o = scoreRecitations(items, odd).score;
    expect([o.correct, o.accuracy, o.passageMean]).toEqual([5843, 5843 / 10452, 0.5650131194398272]);
    // The word right after each span deleted (unless another mask starts there): the span text is
    // intact, but the strict rule fails all spans except 232; without the window, 10,415 pass.
    const cut = items.map((it) => {
      const c = Array.from(it.passage);
      const drop = new Set<number>();
      for (const [, e] of it.masks) {
        let a = e;
        while (a < c.length && /\s/.test(c[a])) a++;
        if (a < c.length && !it.masks.some(([s2]) => s2 === a)) for (; a < c.length && !/\s/.test(c[a]); a++) drop.add(a);
      }
      return c.filter((_, k) => !drop.has(k)).join("");
    });
    expect(scoreRecitations(items, cut).score.correct).toBe(232);
    expect(scoreRecitations(items, cut, 0).score.correct).toBe(10415);
    // One recitation missing: left out of both averages.
    const some = scoreRecitations(items, items.map((i, k) => (k === 0 ? null : i.passage))).score;
    expect([some.missing, some.spans, some.correct]).toEqual([1, 10441, 10441]);
  });

  it("scores recitation files: plain lines in probe order, or JSONL by id; a wrong line count is named", async () => {
    const dir = join(tmp, "files");
    const st = buildReciteFiles(V11, dir, { passages: 20 });
    expect(st.passages).toBe(20);
    const probe = join(dir, "recite.jsonl");
    const first20 = items.slice(0, 20);
    const plain = join(tmp, "recitations.txt");
    writeFileSync(plain, `${first20.map((i) => oneLine(i.passage)).join("\n")}\n`);
    const details = join(tmp, "details.jsonl");
    const score = await scoreRecitationFiles({ probe, predictions: plain, details });
    expect([score.passages, score.missing, score.correct === score.spans]).toEqual([20, 0, true]);
    expect(lines(details).length).toBe(20);
    const byId = join(tmp, "recitations.jsonl");
    writeFileSync(byId, `${first20.slice(1).map((i) => JSON.stringify({ id: i.id, prediction: i.passage })).join("\n")}\n`);
    expect((await loadRecitations(byId, first20))[0]).toBe(null);
    expect((await scoreRecitationFiles({ probe, predictions: byId })).missing).toBe(1);
    writeFileSync(plain, "one line\n");
    await expect(scoreRecitationFiles({ probe, predictions: plain })).rejects.toThrow(`${plain}: 1 lines for 20 probe passages (one recitation per line, in probe order)`);
    await expect(scoreRecitationFiles({ probe, predictions: plain, details: probe })).rejects.toThrow(probe);
  });
});
