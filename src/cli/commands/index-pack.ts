// `tartan index pack DIR --out FILE`: an index directory (any kind) or a knowledge-source store as one
// verified archive (src/artefacts/pack.ts); prints its size and sha256 and the catalogue entry that
// publishes it, and with --catalogue adds that entry to a catalogue file.

import type { Command } from "commander";
import { subcommand } from "../subcommand.js";
import { packArtefact } from "../../artefacts/pack.js";
import { addToCatalogue, type CatalogueEntry } from "../../artefacts/catalogue.js";
import { Progress } from "../../util/progress.js";
import { basename } from "node:path";

const log = (s: string) => process.stderr.write(`${s}\n`);

export function registerIndexPack(program: Command): void {
  subcommand(program, "index", "retrieval indexes: build them from KILT pages")
    .command("pack")
    .description("pack an index directory (any kind) or a knowledge-source store into one archive with a manifest (files' sizes and sha256, the versions that built it)")
    .argument("<dir>", "index directory or knowledge-source store directory")
    .requiredOption("--out <file>", "archive to write (.tar)")
    .option("--name <name>", "artefact name for the catalogue entry (default: the archive's file name without .tar)")
    .option("--url <url>", "where the archive will be published (default: its file name, relative to the catalogue)")
    .option("--description <text>", "description for the catalogue entry")
    .option("--catalogue <file>", "add (or replace) the entry in this catalogue file (created if missing)")
    .action(async (dir: string, o: { out: string; name?: string; url?: string; description?: string; catalogue?: string }) => {
      let bar: Progress | null = null;
      const r = await packArtefact(dir, {
        out: o.out,
        log,
        onProgress: (done, total, files) => {
          bar ??= new Progress({ label: `pack ${dir}`, unit: "files", totalBytes: total });
          bar.update(files, done);
        },
      });
      (bar as Progress | null)?.done();
      const m = r.manifest;
      const kind = m.index ? `${m.index.kind} ${m.index.unit} index` : "knowledge-source";
      const entry: CatalogueEntry = {
        name: o.name ?? basename(o.out).replace(/\.tar$/u, ""),
        url: o.url ?? basename(o.out),
        bytes: r.bytes,
        sha256: r.sha256,
        kind,
        ...(o.description ? { description: o.description } : {}),
      };
      log(`${dir} (${kind}, ${m.files.length} files) → ${r.file}: ${r.bytes.toLocaleString("en-US")} bytes, sha256 ${r.sha256}`);
      if (o.catalogue) {
        addToCatalogue(o.catalogue, entry);
        log(`${o.catalogue}: entry ${JSON.stringify(entry.name)} written`);
      }
      process.stdout.write(`${JSON.stringify(entry, null, 2)}\n`);
    });
}
