// Cheap integrity checks of a BM25 index at open: the manifest's format version, and every BM25 file's
// header (magic, format version, which file, and the build id the manifest names). Sizes and checksums
// of all files are the manifest's job (../manifest.ts).

import type { IndexManifest } from "../types.js";
import { FILES, FORMAT_VERSION, checkFileHeader, type Bm25File } from "./format.js";

/** Throws, naming the file, unless `dir`'s BM25 files belong to the build `manifest` describes. */
export function checkBm25Files(dir: string, manifest: IndexManifest): void {
  if (manifest.formatVersion !== FORMAT_VERSION) throw new Error(`${dir}: BM25 index format ${manifest.formatVersion}, this tartan reads ${FORMAT_VERSION} (rebuild the index)`);
  const buildId = manifest.params.buildId;
  if (typeof buildId !== "string" || !/^[0-9a-f]{32}$/.test(buildId)) throw new Error(`${dir}/manifest.json: params.buildId missing or malformed`);
  for (const which of Object.keys(FILES) as Bm25File[]) checkFileHeader(dir, which, buildId);
}
