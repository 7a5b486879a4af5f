// KILT ↔ TREC on real SQuAD runs: qrels from the gold file are the ones `tartan retrieve --qrels`
// writes; a TREC run turned back into KILT guesses scores exactly as the KILT guesses retrieved
// directly (every metric that does not read passage text); trec_eval's R-precision of a
// one-relevant-unit query equals KILT's.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { retrieve } from "../../src/pipeline/retrieve.js";
import { trecRunToGuesses } from "../../src/trec/guesses.js";
import { evaluate } from "../../src/eval/evaluate.js";
import { qrelsFromGold, runToKilt, provenanceOf } from "../../src/trec/convert.js";
import { readJsonlAll } from "../../src/records/jsonl.js";
import type { KiltRecord, Provenance } from "../../src/records/types.js";
import { compareBytes, readQrels, readRun } from "../../src/trec/files.js";
import { parseMeasures, trecEval } from "../../src/trec/measures.js";
import { PARAGRAPH, squadRuns, type SquadRuns } from "../compare/squad-runs.js";

let data: SquadRuns;
beforeAll(async () => {
  data = await squadRuns({ trec: true });
}, 600_000);

describe("KILT gold → qrels", () => {
  it("equals what tartan retrieve --qrels writes", async () => {
    const written = join(data.dir, "retrieve.qrels");
    await retrieve({ indexes: [join(data.dir, "idx-bm25-paragraph")], input: data.gold, out: join(data.dir, "x.trec"), topK: 1, format: "trec", qrels: written, threads: 1 }, () => {});
    const { lines, stats } = await qrelsFromGold(data.gold, PARAGRAPH);
    expect(lines).toEqual(readFileSync(written, "utf8").trim().split("\n"));
    expect(stats).toEqual({ records: 1057, judged: 1057, lines: 1057, incomplete: 0 });
  });
});

describe("TREC run → KILT guesses", () => {
  it("scores as the directly retrieved guesses in trec_eval's order (ties by docno)", async () => {
    for (const r of ["bm25-paragraph", "tfidf-paragraph", "rrf"] as const) {
      const guesses = await runToKilt(readRun(data.trec[r]), { keys: PARAGRAPH, gold: data.gold });
      expect(guesses.length).toBe(1057);
      const viaTrec = (await evaluate(data.gold, guesses, { rankKeys: PARAGRAPH, mode: "retrieval" })).eval_retrieval!;
      // the retriever's own guesses, re-ordered as trec_eval orders a run: score descending, then docno descending
      const doc = (p: Provenance) => `${p.wikipedia_id}+${p.start_paragraph_id}`;
      const reordered = (await readJsonlAll<KiltRecord>(data.kilt[r])).map((g) => ({
        ...g,
        output: [{ provenance: g.output![0].provenance!.slice().sort((a, b) => b.score! - a.score! || compareBytes(doc(b), doc(a))) }],
      }));
      const direct = (await evaluate(data.gold, reordered, { rankKeys: PARAGRAPH, mode: "retrieval" })).eval_retrieval!;
      for (const k of Object.keys(direct)) if (!/context/.test(k)) expect(viaTrec[k], `${r} ${k}`).toBe(direct[k]);
    }
  });
  it("trec_eval's Rprec and recall_5 equal KILT's where every query has one relevant unit", async () => {
    const { lines } = await qrelsFromGold(data.gold, PARAGRAPH);
    const qrelsFile = join(data.dir, "p.qrels");
    const { writeFileSync } = await import("node:fs");
    writeFileSync(qrelsFile, `${lines.join("\n")}\n`);
    const te = trecEval(readQrels(qrelsFile), readRun(data.trec["bm25-paragraph"]), parseMeasures(["Rprec", "recall.5"]), { complete: true });
    const kilt = (await evaluate(data.gold, data.kilt["bm25-paragraph"], { rankKeys: PARAGRAPH, mode: "retrieval" })).eval_retrieval!;
    const mean = (v: Float64Array) => v.reduce((s, x) => s + x, 0) / v.length;
    expect(mean(te.columns.values.Rprec)).toBeCloseTo(kilt.Rprec, 14);
    expect(mean(te.columns.values.recall_5)).toBeCloseTo(kilt["recall@5"], 14);
  });
  it("docids split back into provenance fields; a wrong number of parts is an error", () => {
    expect(provenanceOf("squad:Super_Bowl_50+23", PARAGRAPH)).toEqual({ wikipedia_id: "squad:Super_Bowl_50", start_paragraph_id: 23 });
    expect(() => provenanceOf("123", PARAGRAPH)).toThrow(/has 1 part\(s\) for 2 key\(s\)/);
  });

  it("retrieve --from-trec with keys that do not fit the docids names the run file, the query and --trec-keys", async () => {
    // The paragraph-level BM25 run read with the default key (wikipedia_id alone).
    const first = readFileSync(data.trec["bm25-paragraph"], "utf8").split("\n")[0].split(/\s+/);
    const out = join(data.dir, "from-trec-wrong-keys.jsonl");
    await expect(trecRunToGuesses(data.trec["bm25-paragraph"], out, {}, () => {})).rejects.toThrow(
      `${data.trec["bm25-paragraph"]}: query ${first[0]}: document id "${first[2]}" has 2 part(s) for 1 key(s) (wikipedia_id); give --trec-keys with one field per "+"-separated part (e.g. --trec-keys wikipedia_id,start_paragraph_id)`,
    );
    expect(existsSync(out)).toBe(false);
  });
});
