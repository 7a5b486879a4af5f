// Parquet files that lie about their sizes or are cut short: "truncated or corrupt Parquet file" with
// the row group, the column chunk and its offsets, never a JavaScript internal ("Cannot read properties
// of undefined", "Invalid typed array length") or thousands of "id: missing" rows.

import { mkdtempSync, readFileSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { asyncBufferFromFile, parquetMetadataAsync } from "hyparquet";
import { describe, expect, it } from "vitest";
import { readJsonlAll } from "../../src/records/jsonl.js";
import { checkRowGroup } from "../../src/records/parquet.js";
import { writeKiltTasksParquet } from "./hf-parquet.js";

const dir = mkdtempSync(join(tmpdir(), "tartan-parquet-corrupt-"));
const records = Array.from({ length: 300 }, (_, i) => ({ id: `q${i}`, input: `question ${i}`, output: [{ answer: `answer ${i}` }] }));
const good = join(dir, "good.parquet");
writeKiltTasksParquet(good, records, 150);

describe("a Parquet file that lies about its sizes", () => {
  it("a column chunk past the end of the data: named with its row group, chunk and offsets", async () => {
    const size = readFileSync(good).length;
    const metadata = await parquetMetadataAsync(await asyncBufferFromFile(good));
    expect(() => checkRowGroup(good, metadata, 1, size)).not.toThrow();
    const m = metadata.row_groups[1].columns[0].meta_data!;
    const start = Number(m.dictionary_page_offset ?? m.data_page_offset);
    m.total_compressed_size = BigInt(size);
    const dataEnd = size - 8 - metadata.metadata_length;
    expect(() => checkRowGroup(good, metadata, 1, size)).toThrow(
      `${good}: truncated or corrupt Parquet file: row group 1, column chunk 0 (id): pages at bytes ${start}–${start + size} (${size} bytes), but the data ends at byte ${dataEnd} of ${size}`,
    );
    m.total_compressed_size = -8195n;
    expect(() => checkRowGroup(good, metadata, 1, size)).toThrow(`${good}: truncated or corrupt Parquet file: row group 1, column chunk 0 (id): pages at bytes ${start}–${start - 8195} (-8195 bytes)`);
  });

  it("cut short or its footer damaged: one error naming the file, not a JavaScript internal", async () => {
    expect((await readJsonlAll(good)).length).toBe(300);
    const bytes = readFileSync(good);
    const cut = join(dir, "cut.parquet");
    writeFileSync(cut, bytes);
    truncateSync(cut, Math.floor(bytes.length / 2));
    const e1 = await readJsonlAll(cut).catch((e: Error) => e);
    expect(String(e1)).toMatch(new RegExp(`^Error: ${cut}: truncated or corrupt Parquet file: its footer \\(metadata\\) cannot be read \\(.+\\); ${Math.floor(bytes.length / 2)} bytes$`));
    // Footer bytes overwritten (its length kept): whatever the decoder trips on, the message says what it is.
    const damaged = join(dir, "damaged.parquet");
    const d = Buffer.from(bytes);
    const footerLength = d.readUInt32LE(d.length - 8);
    d.fill(0xff, d.length - 8 - footerLength, d.length - 8 - Math.floor(footerLength / 2));
    writeFileSync(damaged, d);
    const e2 = await readJsonlAll(damaged).catch((e: Error) => e);
    expect(String(e2)).toMatch(new RegExp(`^Error: ${damaged}: truncated or corrupt Parquet file: `));
    expect(String(e2)).not.toMatch(/row \d+: id: missing/);
  });
});
