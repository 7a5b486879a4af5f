// `tartan map` through the compiled CLI: SQuAD v1.1 dev answers (page title only) mapped onto a store
// built by `tartan ks ingest`, and perturbed evidence texts with their exact BLEU, dropped in dev and
// kept in train.

import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { KiltRecord } from "../../src/records/types.js";

const CLI = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));
const V11 = fileURLToPath(new URL("../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "tartan-map-cli-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function tartan(...args: string[]) {
  const r = spawnSync("node", [CLI, ...args], { encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
const readLines = (f: string) => readFileSync(f, "utf8").trim().split("\n").map((l) => JSON.parse(l) as KiltRecord);

const pagesFile = join(tmp, "pages.jsonl");
const goldFile = join(tmp, "squad-gold.jsonl");
const store = join(tmp, "store");

describe("tartan map", () => {
  it("maps SQuAD dev answers given only their page title onto a knowledge-source store", () => {
    expect(tartan("ks", "from-squad", V11, "--out", pagesFile).code).toBe(0);
    expect(tartan("datasets", "convert", "squad", V11, "--out", goldFile, "--pages", pagesFile).code).toBe(0);
    expect(tartan("ks", "ingest", pagesFile, "--out", store).code).toBe(0);
    const gold = readLines(goldFile);
    const input = join(tmp, "squad-answers-dev.jsonl");
    writeFileSync(
      input,
      gold.map((r) => JSON.stringify({ id: r.id, input: r.input, output: r.output.map((o) => ({ answer: o.answer, provenance: [{ title: o.provenance![0].title }] })) })).join("\n"),
    );
    const out = join(tmp, "mapped.jsonl");
    const reportFile = join(tmp, "report.json");
    const r = tartan("map", "--ks", store, "--input", input, "--out", out, "--report", reportFile);
    expect(r.code).toBe(0);
    expect(r.stdout.split("\n").slice(0, 6)).toEqual([
      `10570 records → 10570 written (0 dropped) → ${out}`,
      "outputs: 18015 read, 18012 written, 3 dropped (dev, BLEU threshold 0.5), 0 without provenance passed through",
      "provenance: 18015 read, 18012 mapped (substring 17749, token 229, in-word substring 34, BLEU 0), 0 kept as given",
      "BLEU = 1: 18012 (100.0%); below 0.5: 0",
      "not placed: empty-text 3",
      `  empty-text: id 5725bad5271a42140099d0c1 (line 3738, output 2) page squad:1973_oil_crisis: "."`,
    ]);
    const report = JSON.parse(readFileSync(reportFile, "utf8"));
    expect(report.split).toBe("dev"); // from the file name
    expect(report.bleuHistogram).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 18012]);

    // Without context, each answer goes to its first occurrence on the page: the gold paragraph for
    // 14,849 of 18,012 and the gold characters for 14,324.
    const mapped = readLines(out);
    let paragraph = 0;
    let exact = 0;
    mapped.forEach((rec, i) => {
      const golds = new Map(gold[i].output.map((o) => [o.answer, o.provenance![0]]));
      for (const o of rec.output) {
        const a = o.provenance![0];
        const g = golds.get(o.answer)!;
        if (a.start_paragraph_id === g.start_paragraph_id) {
          paragraph++;
          if (a.start_character === g.start_character && a.end_character === g.end_character) exact++;
        }
      }
    });
    expect([paragraph, exact]).toEqual([14849, 14324]);
  });

  const sentence = "Super Bowl 50 was an American football game to determine the champion of the National Football League (NFL) for the 2015 season.";
  const w = sentence.split(" ");
  const records = [
    { id: "replaced-1", output: [{ answer: "a", provenance: [{ title: "Super Bowl 50", text: w.map((x, i) => (i === 6 ? "soccer" : x)).join(" ") }] }] },
    { id: "replaced-4", output: [{ answer: "b", provenance: [{ title: "Super Bowl 50", text: w.map((x, i) => ([3, 8, 13, 18].includes(i) ? "xyz" : x)).join(" ") }] }] },
    { id: "recased", output: [{ answer: "c", provenance: [{ url: "https://en.wikipedia.org/wiki/Super_Bowl_50", text: sentence.toUpperCase().replace(/[().]/g, "") }] }] },
    { id: "missing", output: [{ answer: "d", provenance: [{ title: "Super Bowl 51", text: sentence }] }] },
  ];

  it("drops perturbed dev evidence below 0.5 and reports why", () => {
    const input = join(tmp, "perturbed-dev.jsonl");
    writeFileSync(input, records.map((r) => JSON.stringify(r)).join("\n"));
    const out = join(tmp, "perturbed-mapped-dev.jsonl");
    const reportFile = join(tmp, "perturbed-report.json");
    const r = tartan("map", "--pages", pagesFile, "--input", input, "--out", out, "--report", reportFile);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("4 records → 2 written (2 dropped)");
    const mapped = readLines(out);
    expect(mapped.map((m) => [m.id, m.output[0].provenance![0].bleu_score, m.output[0].provenance![0].start_character, m.output[0].provenance![0].end_character])).toEqual([
      ["replaced-1", 0.8725129388059689, 0, 127],
      ["recased", 1, 0, 127],
    ]);
    const report = JSON.parse(readFileSync(reportFile, "utf8"));
    expect(report.dropped).toEqual([
      { id: "replaced-4", line: 2, output: 0, reason: "below-threshold", page: "squad:Super_Bowl_50", text: records[1].output[0].provenance[0].text, bleu: 0.42291236365358204, span: [1, 0, 127] },
      { id: "missing", line: 4, output: 0, reason: "page-not-found", page: "title:Super Bowl 51", text: sentence },
    ]);
    expect(report.provenance.byMethod).toEqual({ substring: 0, token: 1, "substring-in-word": 0, bleu: 2 });
  });

  it("keeps the low-BLEU span in train, and a lower threshold keeps it in dev", () => {
    const input = join(tmp, "perturbed.jsonl");
    writeFileSync(input, records.map((r) => JSON.stringify(r)).join("\n"));
    const train = join(tmp, "perturbed-train.jsonl");
    expect(tartan("map", "--pages", pagesFile, "--input", input, "--out", train, "--split", "train").code).toBe(0);
    // the answer whose page is missing stays, without provenance
    expect(readLines(train).map((m) => m.output[0].provenance?.[0]?.bleu_score)).toEqual([0.8725129388059689, 0.42291236365358204, 1, undefined]);
    const dev = join(tmp, "perturbed-dev-0.4.jsonl");
    expect(tartan("map", "--pages", pagesFile, "--input", input, "--out", dev, "--split", "dev", "--threshold", "0.4").code).toBe(0);
    expect(readLines(dev).map((m) => m.id)).toEqual(["replaced-1", "replaced-4", "recased"]);
  });

  it("refuses to guess the split or the page source", () => {
    const input = join(tmp, "perturbed.jsonl");
    const r = tartan("map", "--pages", pagesFile, "--input", input, "--out", join(tmp, "x.jsonl"));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("cannot tell the split");
    const both = tartan("map", "--pages", pagesFile, "--ks", store, "--input", input, "--out", join(tmp, "x.jsonl"), "--split", "dev");
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("give exactly one of --ks DIR and --pages PAGES.jsonl");
  });
});
