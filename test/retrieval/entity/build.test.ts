// The entity alias table in bounded memory: built in hundreds of sorted runs it equals the in-memory
// build byte for byte, and both equal format 1's aliases.jsonl (the SQuAD source, a synthetic source
// with anchors, and one with unresolved, title-only, duplicated and malformed targets); a build killed
// with SIGKILL leaves the old index whole and resumes from its finished runs; truncated, zeroed, corrupt
// and mixed alias files are refused naming the file (at open: header and key index; at lookup: the lines
// read; in the full check, `tartan index verify`: checksum, every line, key index); lookups through the
// key index find every alias and no other key, and give the rankings the in-memory open of format 2 gave.
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { fromSquad } from "../../../src/knowledge/build.js";
import { syntheticPages, writeSyntheticKnowledgeSource } from "../../../src/knowledge/synthetic.js";
import type { KiltPage } from "../../../src/records/types.js";
import { buildEntityIndex, type EntityBuildOptions } from "../../../src/retrieval/entity/build.js";
import { ALIASES_FILE, ALIASES_HEADER_BYTES, BLOCK_BYTES, KeyIndexBuilder, type AliasLine } from "../../../src/retrieval/entity/format.js";
import { checkEntityIndex, openEntity } from "../../../src/retrieval/entity/search.js";
import { findMentions, keyOfTokens, markedMention, mentionTokens } from "../../../src/retrieval/entity/mentions.js";
import { sealIndex, verifyIndex } from "../../../src/retrieval/manifest.js";
import { verifyIndexDir } from "../../../src/retrieval/verify.js";
import { openIndex } from "../../../src/retrieval/open.js";
import { pagesFromFile } from "../../../src/retrieval/sources.js";

const V11 = new URL("../../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url).pathname;
const CLI = new URL("../../../dist/src/cli/main.js", import.meta.url).pathname;
const tmp = () => mkdtempSync(join(tmpdir(), "tartan-entity-build-"));
const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
const aliases = (dir: string) => readFileSync(join(dir, ALIASES_FILE));
/** The JSON lines of an alias file (the header gives their length at byte 56; the key index follows). */
const bodyOf = (file: Buffer) => file.subarray(ALIASES_HEADER_BYTES, ALIASES_HEADER_BYTES + file.readDoubleLE(56));

/** Synthetic pages with anchors by title, by href, to no page, with lone surrogates, and pages repeating an earlier id or title. */
function* tricky(n: number): Generator<KiltPage> {
  let g = 0;
  let prev: KiltPage | undefined;
  let i = 0;
  for (const page of syntheticPages({ pages: n, seed: 7 })) {
    const p: KiltPage = { ...page, anchors: (page.anchors ?? []).map((a) => ({ ...a })) };
    for (const a of p.anchors!) {
      if (g % 7 === 0) delete a.wikipedia_id;
      else if (g % 7 === 1) {
        delete a.wikipedia_id;
        delete a.wikipedia_title;
      } else if (g % 11 === 0) a.wikipedia_id = "999999999";
      if (g % 13 === 0) a.text += "\ud800";
      g++;
    }
    if (prev && i % 17 === 5) p.wikipedia_id = prev.wikipedia_id;
    if (prev && i % 19 === 3) p.wikipedia_title = prev.wikipedia_title;
    prev = p;
    i++;
    yield p;
  }
}

describe("alias table in sorted runs", () => {
  let squadPages: string;
  beforeAll(async () => {
    squadPages = join(tmp(), "pages.jsonl");
    await fromSquad(V11, squadPages, () => {});
  });
  // SHA-256 of aliases.jsonl as tartan 0.1.0's in-memory build (format 1) wrote it, before this format
  // replaced it; format 2's body (after its 64-byte header) must be the same bytes.
  const cases: { name: string; pages: () => AsyncIterable<KiltPage> | Iterable<KiltPage>; params?: { titleCount: number }; stats: { units: number; aliases: number; anchors: number; unresolvedAnchors: number }; format1: string }[] = [
    { name: "SQuAD", pages: () => pagesFromFile(squadPages), stats: { units: 48, aliases: 52, anchors: 0, unresolvedAnchors: 0 }, format1: "14954a84ff54d764c0f365ac2f405e05df45a3d5c72a181aea02a580bf9894de" },
    { name: "synthetic", pages: () => syntheticPages({ pages: 3000, seed: 7 }), stats: { units: 3000, aliases: 5754, anchors: 46853, unresolvedAnchors: 0 }, format1: "636ee0ab0b9d0e51f0fb222260d50c9cbee826b1f1696c72c7ccd179e00452ff" },
    { name: "synthetic, titleCount 0", pages: () => syntheticPages({ pages: 3000, seed: 7 }), params: { titleCount: 0 }, stats: { units: 3000, aliases: 2717, anchors: 46853, unresolvedAnchors: 0 }, format1: "674ce8d1e8f0c48310d31b4b00adfb55a3733c610d8bb7acd7367eae70dd1206" },
    { name: "synthetic with odd targets", pages: () => tricky(3000), stats: { units: 3000, aliases: 5744, anchors: 46853, unresolvedAnchors: 5529 }, format1: "4b3040c8aaa1787d35a0a10988208fd31a63c116cd3c3d78faaab86d83595c25" },
  ];
  for (const c of cases) {
    it(`${c.name}: hundreds of runs give the same bytes as one pass in memory, and format 1's aliases`, async () => {
      const one = tmp();
      const many = tmp();
      const build = (dir: string, o: EntityBuildOptions) => buildEntityIndex(c.pages(), dir, { source: "s", ...c.params }, undefined, o);
      expect(await build(one, {})).toEqual({ ...c.stats, runs: 0, resumedPages: 0 });
      const b = await build(many, { runBytes: c.name === "SQuAD" ? 512 : 64 << 10 });
      expect(b).toMatchObject(c.stats);
      // More runs than one merge opens (64): the merges cascade.
      expect(b.runs).toBeGreaterThan(c.name === "SQuAD" ? 30 : 150);
      expect(aliases(many).equals(aliases(one))).toBe(true);
      expect(sha256(bodyOf(aliases(one)))).toBe(c.format1);
      expect(readdirSync(many).sort()).toEqual([ALIASES_FILE, "manifest.json", "units.jsonl", "units.offsets"]);
      const r = await openEntity(many);
      expect(r.units.count).toBe(c.stats.units);
      // Lookups go through the key index (blocks, Bloom filter) and one block read: every line's key
      // finds that line's candidates, and keys beside them that are no alias find nothing.
      const lines = bodyOf(aliases(many)).toString("utf8").split("\n").slice(0, -1).map((l) => JSON.parse(l) as AliasLine);
      const expected = lines.map(({ c: cs }) => {
        const total = cs.reduce((sum, [, n]) => sum + n, 0);
        return { units: cs.map(([u]) => u), probs: cs.map(([, n]) => n / total) };
      });
      expect(lines.map(({ m }) => r.candidates(m)).map((g) => g && { units: [...g.units], probs: [...g.probs] })).toEqual(expected);
      const keys = new Set(lines.map((l) => l.m));
      const absent = lines.flatMap(({ m }) => [`${m} x`, m.slice(0, -1), `${m}\u0000`]).filter((k) => !keys.has(k));
      expect(absent.length).toBeGreaterThan(lines.length);
      if (c.name !== "SQuAD") expect(bodyOf(aliases(many)).length).toBeGreaterThan(20 * BLOCK_BYTES);
      expect(absent.filter((k) => r.candidates(k) !== undefined)).toEqual([]);
      // Mentions (through both Bloom filters) as longest match against the keys held in memory.
      for (const m of [...keys].slice(0, 2000)) {
        const input = `${m} of ${[...m].reverse().join("")} ${m}`;
        expect(r.mentions(input)).toEqual(findMentions(mentionTokens(input), (k) => keys.has(k), r.params.maxMentionTokens));
      }
      expect(checkEntityIndex(many)).toEqual({ aliases: c.stats.aliases });
      await r.close();
    }, 120_000);
  }
  it("a few runs (fewer than one merge opens) leave no run file behind, the last spill's included", async () => {
    const one = tmp();
    const few = tmp();
    await buildEntityIndex(syntheticPages({ pages: 3000, seed: 7 }), one, { source: "s" });
    expect((await buildEntityIndex(syntheticPages({ pages: 3000, seed: 7 }), few, { source: "s" }, undefined, { runBytes: 1 << 20 })).runs).toBe(9);
    expect(readdirSync(few).sort()).toEqual([ALIASES_FILE, "manifest.json", "units.jsonl", "units.offsets"]);
    expect(aliases(few).equals(aliases(one))).toBe(true);
  }, 60_000);
});

describe("lazy open on the SQuAD source", () => {
  it("gives the rankings format 2's in-memory open gave, and the mentions an in-memory key set finds", async () => {
    const dir = tmp();
    const pages = join(dir, "pages.jsonl");
    await fromSquad(V11, pages, () => {});
    await buildEntityIndex(pagesFromFile(pages), join(dir, "idx"), { source: "s" });
    const r = await openEntity(join(dir, "idx"));
    // Every paragraph, every question, and every question with its first answer marked as the mention.
    const inputs: string[] = [];
    for (const a of (JSON.parse(readFileSync(V11, "utf8")) as { data: { paragraphs: { context: string; qas: { question: string; answers: { text: string }[] }[] }[] }[] }).data) {
      for (const p of a.paragraphs) {
        inputs.push(p.context);
        for (const q of p.qas) inputs.push(q.question, `[START_ENT] ${q.answers[0].text} [END_ENT] ${q.question}`);
      }
    }
    expect(inputs.length).toBe(23207);
    const hash = createHash("sha256");
    let hits = 0;
    inputs.forEach((q, i) => {
      for (const h of r.searchSync(q, 10)) {
        hash.update(`${i}\t${h.unit}\t${h.score}\n`);
        hits++;
      }
    });
    // Recorded with the entity retriever before this format (d826bea: the whole alias body read and
    // hashed at open, keys in an in-memory hash table), on the same inputs, k = 10.
    expect([hits, hash.digest("hex")]).toEqual([3875, "2038b9f12d7bcede448fc76e2bdf9c60cc19771959a7208585b5125e47a6b6ff"]);
    // The same mentions as longest match against every key held in memory, without the Bloom filters.
    const keys = new Set(bodyOf(aliases(join(dir, "idx"))).toString("utf8").split("\n").slice(0, -1).map((l) => (JSON.parse(l) as AliasLine).m));
    expect(keys.size).toBe(52);
    let found = 0;
    for (const q of inputs) {
      const marked = markedMention(q);
      const tokens = mentionTokens(marked ?? q);
      const whole = marked === null ? null : keyOfTokens(tokens);
      const expected = whole !== null && keys.has(whole) ? [{ key: whole, start: 0, end: tokens.length, weight: 1 }] : findMentions(tokens, (k) => keys.has(k), r.params.maxMentionTokens);
      expect(r.mentions(q)).toEqual(expected);
      found += expected.length;
    }
    expect(found).toBeGreaterThan(3000);
    await r.close();
  }, 120_000);
});

describe("kill and resume", () => {
  it("a build killed with SIGKILL leaves the old index whole and resumes from its finished runs to the same bytes", async () => {
    const root = tmp();
    const pages = join(root, "pages.jsonl");
    await writeSyntheticKnowledgeSource(pages, { pages: 3000, seed: 7 });
    const args = (out: string, src = pages, memory = "1M") => [CLI, "index", "build", "--kind", "entity", "--pages", src, "--out", out, "--memory", memory];
    const whole = join(root, "whole");
    const r0 = spawnSync(process.execPath, args(whole, pages, "3G"), { encoding: "utf8" });
    expect(r0.status, r0.stderr).toBe(0);
    // Piped: no progress line, only the summary.
    expect(r0.stderr).toMatch(/^entity index of 3,000 page units \(5,754 aliases, 46,853 anchors \(0 to pages not in the source\)\) from .* in [\d.]+ s\n$/);

    // The old index at `out`: the SQuAD source's.
    const out = join(root, "out");
    const squad = join(root, "squad.jsonl");
    await fromSquad(V11, squad, () => {});
    expect(spawnSync(process.execPath, args(out, squad), { encoding: "utf8" }).status).toBe(0);
    const oldManifest = readFileSync(join(out, "manifest.json"), "utf8");

    const state = join(root, ".out.building", "entity.build.json");
    const child = spawn(process.execPath, args(out), { stdio: "ignore" });
    const exited = new Promise((resolve) => child.on("exit", resolve));
    for (;;) {
      await new Promise((r) => setTimeout(r, 5));
      if (existsSync(state) && (JSON.parse(readFileSync(state, "utf8")) as { runs: unknown[] }).runs.length >= 6) break;
    }
    child.kill("SIGKILL");
    await exited;
    expect(readFileSync(join(out, "manifest.json"), "utf8")).toBe(oldManifest);
    expect(verifyIndex(out).problems).toEqual([]);

    const r1 = spawnSync(process.execPath, args(out), { encoding: "utf8" });
    expect(r1.status, r1.stderr).toBe(0);
    expect(r1.stderr).toMatch(/resumed after [\d,]+ pages/);
    expect(aliases(out).equals(aliases(whole))).toBe(true);
    expect(readFileSync(join(out, "units.jsonl")).equals(readFileSync(join(whole, "units.jsonl")))).toBe(true);
    expect(existsSync(join(root, ".out.building"))).toBe(false);
    expect(verifyIndex(out).problems).toEqual([]);
  }, 300_000);
});

describe("integrity", () => {
  const pages = (town: string): KiltPage[] => [
    { wikipedia_id: "10", wikipedia_title: "Paris", text: ["Paris\n", "Capital of France.\n"] },
    { wikipedia_id: "11", wikipedia_title: town, text: [`${town}\n`, "A town.\n"] },
    { wikipedia_id: "12", wikipedia_title: "Travel", text: ["Travel\n", "To Paris.\n"], anchors: [{ text: "Paris", href: "Paris", paragraph_id: 1, start: 3, end: 8 }] },
  ];
  async function built(town = "Lyon", seal = true): Promise<string> {
    const dir = tmp();
    await buildEntityIndex(pages(town), dir, { source: "test" });
    if (seal) sealIndex(dir);
    return dir;
  }
  const copy = (dir: string) => {
    const c = tmp();
    cpSync(dir, c, { recursive: true });
    return c;
  };
  const file = (dir: string) => join(dir, ALIASES_FILE);

  it("opens and verifies an intact index", async () => {
    const dir = await built();
    expect(verifyIndex(dir).problems).toEqual([]);
    const r = await openIndex(dir);
    expect(await r.search("[START_ENT] Paris [END_ENT]", 5)).toEqual([{ unit: 0, score: 1 }]);
    await r.close();
  });

  it("refuses a truncated alias file, naming it (at open with or without the manifest's sizes, and in verify)", async () => {
    const good = await built();
    const size = aliases(good).length;
    for (const cut of [size - 1, ALIASES_HEADER_BYTES + 3, 10]) {
      const dir = copy(good);
      truncateSync(file(dir), cut);
      await expect(openIndex(dir)).rejects.toThrow(`${file(dir)}: ${cut} bytes, manifest.json says ${size}`);
      expect(verifyIndex(dir).problems).toEqual([`${file(dir)}: ${cut} bytes, manifest.json says ${size}`]);
    }
    const unsealed = await built("Lyon", false);
    truncateSync(file(unsealed), size - 1);
    await expect(openEntity(unsealed)).rejects.toThrow(`${file(unsealed)}: ${size - 1} bytes, its header says ${size} (truncated`);
    truncateSync(file(unsealed), 10);
    await expect(openEntity(unsealed)).rejects.toThrow(`${file(unsealed)}: truncated (10 bytes, less than its 64-byte header)`);
  });

  it("refuses a zeroed header and a corrupt key index at open, a corrupt body block at the lookup that reads it and in the full check, naming the file", async () => {
    const good = await built("Lyon", false);
    const zeroed = copy(good);
    const bytes = aliases(zeroed);
    bytes.fill(0, 0, 8);
    writeFileSync(file(zeroed), bytes);
    await expect(openEntity(zeroed)).rejects.toThrow(`${file(zeroed)}: not a tartan entity alias file`);
    // The alias file's header naming another format version (a file left by another tartan).
    const version = copy(good);
    const v2 = aliases(version);
    v2.writeUInt32LE(2, 8);
    writeFileSync(file(version), v2);
    await expect(openEntity(version)).rejects.toThrow(`${file(version)}: entity alias format 2, this tartan reads 3 (rebuild the index)`);
    // A digit changed in a link count: still valid JSON, header and key index intact. Opening reads no
    // body, so it opens; the first lookup reading that block finds it by the block's CRC-32, and the full
    // check (`tartan index verify`) by the file's checksum.
    const body = aliases(good);
    const bodyBytes = bodyOf(body).length;
    const at = body.indexOf("]]}", ALIASES_HEADER_BYTES) - 1;
    const corrupt = copy(good);
    const changed = Buffer.from(body);
    changed[at] = changed[at] === 0x31 ? 0x32 : 0x31;
    writeFileSync(file(corrupt), changed);
    const opened = await openEntity(corrupt);
    await expect(opened.search("[START_ENT] Paris [END_ENT]", 5)).rejects.toThrow(`${file(corrupt)}: the block at body byte 0 differs from its CRC-32 (corrupt; rebuild the index)`);
    await opened.close();
    expect(() => checkEntityIndex(corrupt)).toThrow(`${file(corrupt)}: contents differ from its checksum (corrupt`);
    // One byte changed in the key index (its last, in a Bloom filter): refused at open by its CRC-32.
    const flipped = copy(good);
    const f2 = Buffer.from(body);
    f2[f2.length - 1] ^= 0x10;
    writeFileSync(file(flipped), f2);
    await expect(openEntity(flipped)).rejects.toThrow(`${file(flipped)}: key index: contents differ from its CRC-32 (corrupt; rebuild the index)`);
    // Random bytes over body and key index: refused at open, never loaded.
    const noise = copy(good);
    const random = Buffer.from(body);
    for (let i = ALIASES_HEADER_BYTES; i < random.length; i++) random[i] = (i * 7919) & 0xff;
    writeFileSync(file(noise), random);
    await expect(openEntity(noise)).rejects.toThrow(`${file(noise)}: key index: contents differ from its CRC-32`);
    expect(() => checkEntityIndex(noise)).toThrow(`${file(noise)}: alias 1: the last line has no newline (corrupt`);
    // Bodies whose header, key index and manifest were rewritten to match (as a faulty writer would
    // leave them): the full check still checks every line and the key index against the lines.
    const tail = body.subarray(ALIASES_HEADER_BYTES + bodyBytes);
    /** The key index a writer would give `text` (lines of valid JSON). */
    const keyIndexOf = (text: string) => {
      const k = new KeyIndexBuilder();
      for (const line of text.split(/(?<=\n)/)) k.add((JSON.parse(line) as AliasLine).m, Buffer.from(line, "utf8"));
      return k.finish();
    };
    expect(keyIndexOf(bodyOf(body).toString("utf8")).equals(tail)).toBe(true);
    const forge = (text: string, keyIndex: Buffer = tail) => {
      const dir = copy(good);
      const b = Buffer.from(text, "utf8");
      const id = sha256(Buffer.concat([b, keyIndex])).slice(0, 32);
      const h = Buffer.from(body.subarray(0, ALIASES_HEADER_BYTES));
      h.writeDoubleLE(ALIASES_HEADER_BYTES + b.length + keyIndex.length, 16);
      Buffer.from(id, "hex").copy(h, 40);
      h.writeDoubleLE(b.length, 56);
      writeFileSync(file(dir), Buffer.concat([h, b, keyIndex]));
      const m = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
      writeFileSync(join(dir, "manifest.json"), JSON.stringify({ ...m, params: { ...m.params, buildId: id } }));
      return dir;
    };
    const forged = (text: string, message: string) => {
      const dir = forge(text);
      expect(() => checkEntityIndex(dir)).toThrow(`${file(dir)}: ${message}`);
    };
    const text = bodyOf(body).toString("utf8");
    expect(text).toBe('{"m":"lyon","c":[[1,1]]}\n{"m":"pari","c":[[0,2]]}\n{"m":"travel","c":[[2,1]]}\n');
    forged(text.replace("[[1,1]]", "[[7,1]]"), "alias 1: bad candidate [7,1] (units 0..2)");
    forged(text.replace('"lyon"', '"zzzz"'), "alias 2: keys out of order");
    forged(text.replace('{"m":"lyon","c":[[1,1]]}', '{"c":[[1,1]],"m":"lyon"}'), 'alias 1: does not start {"m":"lyon","c":');
    forged(text.replace("[[1,1]]}\n", "[[1,1]\n"), "alias 1: not valid JSON");
    forged(text.slice(0, -1), "alias 3: the last line has no newline");
    forged(text.replace('{"m":"pari","c":[[0,2]]}\n', ""), "3 aliases in 52 bytes (corrupt");
    // With a key index that matches: the lines pass their block's CRC-32, and a bad candidate is
    // refused when a lookup parses its line.
    const badUnit = await openEntity(forge(text.replace("[[0,2]]", "[[9,2]]"), keyIndexOf(text.replace("[[0,2]]", "[[9,2]]"))));
    await expect(badUnit.search("[START_ENT] Paris [END_ENT]", 5)).rejects.toThrow("alias 2: bad candidate [9,2] (units 0..2)");
    await badUnit.close();
    // A key index from another body of the same size (a key changed): opening cannot tell; the lookup
    // that reads the block can (its CRC-32), and so can the full check.
    const other = aliases(await built("Nice", false));
    const mixedIndex = forge(text, other.subarray(ALIASES_HEADER_BYTES + bodyOf(other).length));
    const mixedOpen = await openEntity(mixedIndex);
    await expect(mixedOpen.search("[START_ENT] Paris [END_ENT]", 5)).rejects.toThrow(`${file(mixedIndex)}: the block at body byte 0 differs from its CRC-32`);
    await mixedOpen.close();
    expect(() => checkEntityIndex(mixedIndex)).toThrow(`${file(mixedIndex)}: key index does not match the lines (corrupt`);
    // Truncated after it was opened: the lookup that reads past the end says so.
    const shrunk = copy(good);
    const shrunkOpen = await openEntity(shrunk);
    truncateSync(file(shrunk), ALIASES_HEADER_BYTES + 10);
    await expect(shrunkOpen.search("[START_ENT] Paris [END_ENT]", 5)).rejects.toThrow(`${file(shrunk)}: ends inside its body (truncated since it was opened; rebuild the index)`);
    await shrunkOpen.close();
    // In a sealed index, verify names the file whose CRC-32 changed; resealed (the manifest's CRC-32s
    // recomputed over the corrupt file), verify still finds it by the alias file's own checksum.
    const sealed = await built();
    copyFileSync(file(corrupt), file(sealed));
    expect(verifyIndex(sealed).problems).toEqual([expect.stringMatching(new RegExp(`^${file(sealed)}: (checksum \\w+, manifest.json says \\w+ \\(corrupt\\)|\\d+ bytes, manifest.json says \\d+)$`))]);
    sealIndex(sealed);
    expect((await verifyIndexDir(sealed)).problems).toEqual([`${file(sealed)}: contents differ from its checksum (corrupt; rebuild the index)`]);
    expect((await verifyIndexDir(good)).problems).toHaveLength(1); // unsealed: lists no checksums
    sealIndex(good);
    expect(await verifyIndexDir(good)).toMatchObject({ problems: [] });
  });

  it("refuses an alias file from another build of the same size, and units from another build", async () => {
    const a = await built("Lyon");
    const b = await built("Nice");
    expect(aliases(b).length).toBe(aliases(a).length);
    const mixed = copy(a);
    copyFileSync(file(b), file(mixed));
    await expect(openIndex(mixed)).rejects.toThrow(`${file(mixed)}: from another build (build id `);
    expect(verifyIndex(mixed).problems).toEqual([expect.stringContaining(`${file(mixed)}: checksum`)]);
    const fewer = tmp();
    await buildEntityIndex(pages("Lyon").slice(0, 2), fewer, { source: "test" });
    const units = copy(await built("Lyon", false));
    for (const f of ["units.jsonl", "units.offsets"]) copyFileSync(join(fewer, f), join(units, f));
    await expect(openEntity(units)).rejects.toThrow(`${units}: 2 units in its unit store, manifest.json says 3 (mixed or corrupt`);
  });

  it("refuses a format-1 index with a rebuild hint", async () => {
    const dir = await built("Lyon", false);
    const m = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
    writeFileSync(join(dir, "manifest.json"), JSON.stringify({ ...m, formatVersion: 1 }));
    await expect(openEntity(dir)).rejects.toThrow(`${dir}: entity format 1, this tartan reads 3: rebuild the index`);
    writeFileSync(join(dir, "manifest.json"), JSON.stringify({ ...m, formatVersion: 2 }));
    await expect(openEntity(dir)).rejects.toThrow(`${dir}: entity format 2, this tartan reads 3: rebuild the index`);
  });
});
