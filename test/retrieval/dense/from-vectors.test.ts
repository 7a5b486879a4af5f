// Dense indexes from precomputed vectors: an ids file (both line forms, and its refusals), KILT's DPR
// passage file in its exact layout (id, text, title; a header line) placed through a knowledge source of
// the real SQuAD pages, and `quantize: "none"` searched exactly as today's dense indexes are.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readSquadFile, squadToPages } from "../../../src/knowledge/squad.js";
import type { KiltPage } from "../../../src/records/types.js";
import type { KnowledgeSourceReader } from "../../../src/knowledge/source.js";
import { buildDenseFromVectors } from "../../../src/retrieval/dense/from-vectors.js";
import { openDense } from "../../../src/retrieval/dense/index.js";
import { ExactIndex } from "../../../src/retrieval/dense/exact.js";
import { npyBytes } from "./npy.js";
import { unitVectors as vectors } from "./clustered.js";

const tmp = mkdtempSync(join(tmpdir(), "tartan-fromvec-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const npy = (rows: number, dim: number, v: Float32Array): Buffer => npyBytes(rows, dim, v);


describe("ids files", () => {
  it("reads both line forms into KILT provenance and searches exactly with quantize none", async () => {
    const dim = 16;
    const v = vectors(5, dim, 3);
    writeFileSync(join(tmp, "v.npy"), npy(5, dim, v));
    writeFileSync(join(tmp, "ids.txt"), "290\n290\t3\t4\n12\t1\t1\n7\n12\t2\t5\n");
    const dir = join(tmp, "exact");
    const { manifest } = await buildDenseFromVectors({ vectors: join(tmp, "v.npy"), ids: join(tmp, "ids.txt"), quantize: "none" }, dir);
    expect(manifest).toMatchObject({ kind: "dense", units: 5, params: { dim, search: "exact", encoder: null, quantize: "none" } });
    const r = await openDense(dir, { threads: 0 });
    const got = await r.searchVectors(v.slice(4 * dim, 5 * dim), 5);
    const e = new ExactIndex(v, dim, { threads: 0 });
    expect(got).toEqual(await e.search(v.slice(4 * dim, 5 * dim), 5));
    await e.close();
    expect(got[0][0].unit).toBe(4);
    expect([0, 1, 2, 3, 4].map((i) => r.units.get(i))).toEqual([
      { wikipedia_id: "290", wikipedia_title: "", text: "" },
      { wikipedia_id: "290", wikipedia_title: "", start_paragraph_id: 3, end_paragraph_id: 4, text: "" },
      { wikipedia_id: "12", wikipedia_title: "", start_paragraph_id: 1, end_paragraph_id: 1, text: "" },
      { wikipedia_id: "7", wikipedia_title: "", text: "" },
      { wikipedia_id: "12", wikipedia_title: "", start_paragraph_id: 2, end_paragraph_id: 5, text: "" },
    ]);
    await r.close();
  });

  it("builds exact below 20,000 × 768 values, and PQ codes when asked, with a depth measured to recall@100 0.95", async () => {
    const dim = 16;
    const n = 3000;
    const v = vectors(n, dim, 11);
    writeFileSync(join(tmp, "v-default.npy"), npy(n, dim, v));
    writeFileSync(join(tmp, "ids-default.txt"), Array.from({ length: n }, (_, i) => `${i}\n`).join(""));
    const exact = await buildDenseFromVectors({ vectors: join(tmp, "v-default.npy"), ids: join(tmp, "ids-default.txt") }, join(tmp, "default-exact"));
    expect(exact.manifest.params).toMatchObject({ quantize: "none", search: "exact" });
    const dir = join(tmp, "default");
    const { manifest } = await buildDenseFromVectors({ vectors: join(tmp, "v-default.npy"), ids: join(tmp, "ids-default.txt"), quantize: "pq", k1: 16, k2: 16 }, dir);
    // 256 lists: the start probes 21 (8% of them), every vector a candidate; PQ of dim/8 = 2 sub-spaces (2 bytes a code)
    const p = manifest.params as { nprobe: number; refine: number; defaultRecall: { recallAt100: number; queries: number } };
    expect(manifest.params).toMatchObject({ quantize: "pq", lists: 256, refine: 3000, pqM: 2, codeBytes: 2 });
    expect(p.nprobe).toBeGreaterThanOrEqual(21);
    expect(p.defaultRecall.queries).toBe(100);
    expect(p.defaultRecall.recallAt100).toBeGreaterThanOrEqual(0.95);
    const r = await openDense(dir, { threads: 0 });
    const got = await r.searchVectors(v.slice(7 * dim, 8 * dim), 1);
    expect(got[0][0].unit).toBe(7);
    await r.close();
  });

  it("refuses bad lines naming file, line and field, and counts that differ from the rows", async () => {
    writeFileSync(join(tmp, "v3.npy"), npy(3, 16, vectors(3, 16, 5)));
    const bad: [string, string][] = [
      ["1\n2\t1\n3\n", "ids.txt:2: 2 fields; expected wikipedia_id, or wikipedia_id<TAB>start_paragraph_id<TAB>end_paragraph_id"],
      ["1\n\n3\n", "ids.txt:2: empty line"],
      ["1\n2\tx\t3\n3\n", 'ids.txt:2: start_paragraph_id "x" is not a paragraph number'],
      ["1\n2\t4\t3\n3\n", 'ids.txt:2: end_paragraph_id "3" is not a paragraph number at or after 4'],
      ["1\n2\n", "v3.npy has 3 rows, the units 2: row i must be unit i"],
      ["1\n2\n3\n4\n", "v3.npy has 3 rows, the units go on past that (unit 4: 4)"],
    ];
    for (const [ids, message] of bad) {
      writeFileSync(join(tmp, "ids.txt"), ids);
      for (const quantize of ["none", "binary"] as const) await expect(buildDenseFromVectors({ vectors: join(tmp, "v3.npy"), ids: join(tmp, "ids.txt"), quantize }, join(tmp, `bad-${quantize}`))).rejects.toThrow(message);
    }
    await expect(buildDenseFromVectors({ vectors: join(tmp, "v3.npy") }, join(tmp, "none"))).rejects.toThrow("say what each vector is with one of: --ids FILE, --units TABLE, --dpr-passages FILE (with --ks DIR)");
  });
});

describe("KILT's DPR passage file", () => {
  const pages = squadToPages(readSquadFile(join(process.cwd(), "..", "shared", "data", "squad", "dev-v1.1.reconstructed.json"))).slice(0, 6);
  const ks: KnowledgeSourceReader = {
    location: "squad-pages",
    getPageById: (id: string) => pages.find((p) => p.wikipedia_id === id) ?? null,
    getPageByTitle: (t: string) => pages.find((p) => p.wikipedia_title === t) ?? null,
    getPageFromUrl: () => null,
  } as unknown as KnowledgeSourceReader;

  /** The page's paragraphs (1…) cut into 100-word passages as DPR cut KILT's pages, with the span each covers. */
  function passages(page: KiltPage): { text: string; start: number; end: number }[] {
    const words: { w: string; p: number }[] = [];
    for (let p = 1; p < page.text.length; p++) for (const w of page.text[p].split(/\s+/).filter((x) => x)) words.push({ w, p });
    const out = [];
    for (let i = 0; i < words.length; i += 100) {
      const chunk = words.slice(i, i + 100);
      out.push({ text: chunk.map((x) => x.w).join(" "), start: chunk[0].p, end: chunk[chunk.length - 1].p });
    }
    return out;
  }

  it("maps every passage to its page and paragraph span", async () => {
    const rows: string[] = ["id\ttext\ttitle"];
    const expected: { wikipedia_id: string; start_paragraph_id: number; end_paragraph_id: number }[] = [];
    for (const page of pages)
      for (const p of passages(page)) {
        rows.push(`${rows.length}\t${p.text.includes('"') ? `"${p.text.replace(/"/g, '""')}"` : p.text}\t${page.wikipedia_title}`);
        expected.push({ wikipedia_id: page.wikipedia_id, start_paragraph_id: p.start, end_paragraph_id: p.end });
      }
    const n = rows.length - 1;
    expect(n).toBe(346);
    writeFileSync(join(tmp, "kilt_w100_title.tsv"), `${rows.join("\n")}\n`);
    const dim = 32;
    writeFileSync(join(tmp, "dpr.npy"), npy(n, dim, vectors(n, dim, 11)));
    const dir = join(tmp, "dpr");
    const res = await buildDenseFromVectors({ vectors: join(tmp, "dpr.npy"), dprPassages: join(tmp, "kilt_w100_title.tsv"), ks, quantize: "int8", k1: 4, k2: 4 }, dir);
    expect(res.dpr).toEqual({ passages: 346, pageOnly: 0 });
    const r = await openDense(dir);
    const got = Array.from({ length: n }, (_, i) => {
      const u = r.units.get(i);
      return { wikipedia_id: u.wikipedia_id, start_paragraph_id: u.start_paragraph_id, end_paragraph_id: u.end_paragraph_id };
    });
    expect(got).toEqual(expected);
    expect(r.units.get(0).wikipedia_title).toBe(pages[0].wikipedia_title);
    await r.close();
  });

  it("refuses a title that is not in the knowledge source and a line without three fields", async () => {
    writeFileSync(join(tmp, "v2.npy"), npy(2, 16, vectors(2, 16, 1)));
    writeFileSync(join(tmp, "t.tsv"), `id\ttext\ttitle\n1\tsome words here\t${pages[0].wikipedia_title}\n2\tmore words\tNo Such Page\n`);
    await expect(buildDenseFromVectors({ vectors: join(tmp, "v2.npy"), dprPassages: join(tmp, "t.tsv"), ks }, join(tmp, "t1"))).rejects.toThrow(`t.tsv:3: title "No Such Page" is not in the knowledge source squad-pages`);
    writeFileSync(join(tmp, "t.tsv"), `id\ttext\ttitle\n1\tno title\n`);
    await expect(buildDenseFromVectors({ vectors: join(tmp, "v2.npy"), dprPassages: join(tmp, "t.tsv"), ks }, join(tmp, "t2"))).rejects.toThrow("t.tsv:2: 2 fields; a DPR passage line is id<TAB>text<TAB>title");
    await expect(buildDenseFromVectors({ vectors: join(tmp, "v2.npy"), dprPassages: join(tmp, "t.tsv") }, join(tmp, "t3"))).rejects.toThrow("--dpr-passages needs the knowledge source its titles are looked up in (--ks DIR)");
  });
});
