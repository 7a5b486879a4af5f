// Public API of the datasets (`tartan/datasets`): the catalogue of KILT, Mintaka and WikiReading files,
// the readers and KILT converters of Mintaka and WikiReading, and KILT's downloads (catalogue and
// the resumable, verified downloader).
export * from "./catalogue.js";
export * from "./mintaka.js";
export * from "./wikireading.js";
export * from "./downloads.js";
export { downloadFile, sha256File, DownloadError, MAX_REDIRECTS, type DownloadOptions, type DownloadResult } from "../util/download.js";
export type { DownloadFormat } from "../util/download-checks.js";
