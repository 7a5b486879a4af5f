// How a page is kept in the store: its JSONL line as read, compressed per page with brotli at
// quality 0 and a 64 KiB window. Measured on synthetic KILT pages (docs/decisions.md): 0.47 of the
// input size at ~170 MB/s per core, and ~40 µs to decompress a page, so a lookup stays well under 1 ms.

import { brotliCompressSync, brotliDecompressSync, constants } from "node:zlib";
import type { KiltPage } from "../records/types.js";
import { readTopLevelFields } from "./page-fields.js";

export const COMPRESSION = "brotli-q0-w16";

const PARAMS = {
  params: {
    [constants.BROTLI_PARAM_QUALITY]: 0,
    [constants.BROTLI_PARAM_LGWIN]: 16,
    [constants.BROTLI_PARAM_SIZE_HINT]: 8192,
  },
};

/** Compresses one page's JSON text (UTF-8 bytes or a string). */
export function compressPage(json: Uint8Array | string): Buffer {
  return brotliCompressSync(json, PARAMS);
}

/** The JSON text of a stored page. */
export function decompressPage(blob: Uint8Array): string {
  return brotliDecompressSync(blob).toString("utf8");
}

/** A stored page as a KiltPage; a numeric wikipedia_id (as in KILT's README example) comes back as a string. */
export function decodePage(blob: Uint8Array): KiltPage {
  const page = JSON.parse(decompressPage(blob)) as KiltPage;
  if (typeof page.wikipedia_id !== "string") page.wikipedia_id = String(page.wikipedia_id);
  return page;
}

/** What a reader of a page's text alone needs: its id (a string, as from decodePage) and its `text` as stored. */
export interface PageText {
  wikipedia_id: string;
  text: unknown;
}

/**
 * A stored page's id and text only, equal to decodePage's `wikipedia_id` and `text`, without decoding
 * or parsing its other fields (./page-fields.ts): what a BM25 build reads of every page.
 */
export function decodePageText(blob: Uint8Array): PageText {
  const [id, text] = readTopLevelFields(brotliDecompressSync(blob), PAGE_TEXT_FIELDS);
  return { wikipedia_id: typeof id === "string" ? id : String(id), text };
}

const PAGE_TEXT_FIELDS = ["wikipedia_id", "text"] as const;
