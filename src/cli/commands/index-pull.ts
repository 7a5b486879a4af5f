// `tartan index pull FILE|URL|NAME --out DIR [--sha256 H] [--catalogue FILE]`: a packed artefact
// (src/artefacts/pull.ts) downloaded resumably when it is a URL, verified file by file and moved into
// place only when everything matches; NAME is looked up in a catalogue (a file or an http(s) URL).

import type { Command } from "commander";
import { subcommand } from "../subcommand.js";
import { pullArtefact } from "../../artefacts/pull.js";
import { findArtefact, loadCatalogue } from "../../artefacts/catalogue.js";
import { Progress } from "../../util/progress.js";
import { positiveInt } from "../options.js";

const log = (s: string) => process.stderr.write(`${s}\n`);

interface Flags {
  out: string;
  sha256?: string;
  catalogue?: string;
  force?: boolean;
  keepArchive?: boolean;
  retries: number;
}

export function registerIndexPull(program: Command): void {
  subcommand(program, "index", "retrieval indexes: build them from KILT pages")
    .command("pull")
    .description("unpack an artefact from `tartan index pack` (a file, a URL: downloaded resumably, or a name in --catalogue): every file verified before the directory is moved into place")
    .argument("<source>", "archive file, http(s):// or file:// URL, or an artefact name with --catalogue")
    .requiredOption("--out <dir>", "directory to create")
    .option("--sha256 <hex>", "expected sha256 of the archive")
    .option("--catalogue <file|url>", "look SOURCE up by name in this catalogue file or http(s) URL (its URL, size and sha256; relative URLs are next to the catalogue)")
    .option("--force", "replace an existing --out directory (only once the artefact is verified)")
    .option("--keep-archive", "keep a downloaded archive beside --out (used again only for the same URL and checksum)")
    .option("--retries <n>", "network failures retried (each resumes)", positiveInt, 3)
    .action(async (source: string, o: Flags) => {
      let url = source;
      let sha256 = o.sha256;
      let bytes: number | undefined;
      if (o.catalogue) {
        const e = findArtefact(await loadCatalogue(o.catalogue, { retries: o.retries }), source, o.catalogue);
        url = e.url;
        bytes = e.bytes;
        if (sha256 !== undefined && sha256.toLowerCase() !== e.sha256) throw new Error(`--sha256 ${sha256} differs from the catalogue's ${e.sha256} for ${source}`);
        sha256 = e.sha256;
      }
      let bar: Progress | null = null;
      let phase = "";
      const r = await pullArtefact(url, {
        out: o.out,
        sha256,
        bytes,
        force: o.force,
        keepArchive: o.keepArchive,
        retries: o.retries,
        log: (l) => {
          bar?.clear();
          log(l);
        },
        onProgress: (p, done, total, start) => {
          if (p !== phase) {
            bar?.done();
            phase = p;
            bar = new Progress({ label: p === "download" ? `download ${url}` : `unpack → ${o.out}`, unit: "bytes", totalBytes: total, startBytes: start });
          }
          bar!.update(0, done);
        },
      });
      (bar as Progress | null)?.done();
      const m = r.manifest;
      const what = m.index ? `${m.index.kind} ${m.index.unit} index of ${m.index.units.toLocaleString("en-US")} units` : `knowledge-source store of ${m.store!.pages.toLocaleString("en-US")} pages`;
      log(
        `${url}${r.archive.redirectedTo ? ` (redirected to ${r.archive.redirectedTo})` : ""} → ${r.dir}: ${what}, ${r.files} files, ${r.bytes.toLocaleString("en-US")} bytes, every file's sha256 verified` +
          `${r.archive.sha256 && sha256 ? "; archive sha256 verified" : ""}${r.archive.resumedFrom > 0 ? `; download resumed after ${r.archive.resumedFrom.toLocaleString("en-US")} bytes` : ""} (built by tartan ${m.builtBy.tartan})`,
      );
    });
}
