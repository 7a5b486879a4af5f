// The quick start's main job end to end on the real SQuAD knowledge source, cut down (300 training
// questions, 100 held-out ones) so it runs in seconds: the store, the index, the trained reader, the
// predictions and the evaluation are all real, and the results are deterministic.

import { afterAll, describe, expect, it } from "vitest";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { quickstart } from "../../src/pipeline/quickstart.js";
import { headline } from "../../src/pipeline/report.js";
import { validateFile } from "../../src/records/validate.js";

const SQUAD = fileURLToPath(new URL("../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url));
const work = mkdtempSync(join(tmpdir(), "tartan-quickstart-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("quickstart", () => {
  it("builds, indexes, trains, answers held-out articles, evaluates and reports", async () => {
    const log: string[] = [];
    const r = await quickstart({ squad: SQUAD, work, limit: 100, trainLimit: 300, log: (l) => log.push(l) });
    expect(log.filter((l) => /^\d\/6 /.test(l)).length).toBe(6);
    const lines = readFileSync(r.predictions, "utf8").trim().split("\n");
    expect(lines.length).toBe(100);
    const first = JSON.parse(lines[0]);
    expect(first.output.length).toBe(1);
    expect(first.output[0].provenance.length).toBe(20);
    expect((await validateFile(r.predictions)).problems.filter((p) => p.severity === "error")).toEqual([]);
    const h = headline(r.systems[0].result);
    expect(h).toMatchInlineSnapshot(`
      {
        "KILT-em": 0.26,
        "KILT-f1": 0.3849761904761905,
        "Rprec": 0.98,
        "em": 0.26,
        "f1": 0.3849761904761905,
        "recall@5": 1,
      }
    `);
    expect(r.paragraphLevel.eval_retrieval!.Rprec).toMatchInlineSnapshot(`0.82`);
    // The context metrics count every retrieved passage's text (the file keeps the cited ones' only):
    // answer_in_context grows with k, as tartan run --text full gives (issue 27).
    const ret = r.systems[0].result.eval_retrieval!;
    expect([ret["answer_in_context@1"], ret["answer_in_context@5"], ret["answer_in_context@20"]]).toMatchInlineSnapshot(`
      [
        0.84,
        0.97,
        0.98,
      ]
    `);
    expect(existsSync(r.reportHtml) && readFileSync(r.reportHtml, "utf8").includes("<svg")).toBe(true);
    expect(readFileSync(r.reportMd, "utf8")).toContain("| BM25 + extractive reader |");
    // BM25 alone against BM25 + reader with the significance of the difference, and the run recorded
    expect(readFileSync(r.reportMd, "utf8")).toMatch(/BM25 alone → BM25 \+ reader, paragraph level .*: Rprec \d+\.\d\d → 82\.00 \(Δ -?\d+\.\d\d, p \d\.\d{3}/);
    const { openRunsStore } = await import("../../src/runs/open.js");
    const store = await openRunsStore(join(work, "runs"));
    const rec = await store.get("quickstart");
    await store.close();
    expect(rec?.dataset).toBe("squad");
    expect(rec?.queries).toBe(100);
  });

  it("shows items, rate and ETA for retrieval, features, training and answering when progress is on; nothing when off", async () => {
    const writes: string[] = [];
    const stream = { isTTY: true, write: (t: string) => writes.push(t) };
    const work2 = join(work, "progress");
    await quickstart({ squad: SQUAD, work: work2, limit: 30, trainLimit: 60, progress: { stream } });
    const finals = writes.filter((w) => w.endsWith("\n")).map((w) => w.replace(/\r|\x1b\[K|\n/g, ""));
    expect(finals.map((l) => l.replace(/ {2}(?:[\d.,]+|-) questions\/s {2}ETA .*$/, ""))).toEqual([
      "    retrieving  60 / 60 questions (100%)",
      "    candidates and features  60 / 60 questions (100%)",
      `    training (10 epochs)  ${finals[2].match(/(\d+) \//)![1]} / ${finals[2].match(/(\d+) \//)![1]} questions (100%)`,
      "    answering  30 / 30 questions (100%)",
    ]);
    // a step done in under half a second shows no rate ("-"), not millions of questions a second
    for (const l of finals) expect(l).toMatch(/ {2}(?:[\d.,]+|-) questions\/s {2}ETA 0s$/);
    // piped (the stream is not a terminal): not a character
    const piped: string[] = [];
    await quickstart({ squad: SQUAD, work: join(work, "piped"), limit: 5, trainLimit: 10, progress: { stream: { isTTY: false, write: (t: string) => piped.push(t) } } });
    expect(piped).toEqual([]);
  });
});
