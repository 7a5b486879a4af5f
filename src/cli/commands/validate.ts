// `tartan validate FILE...`: checks KILT task files or knowledge-source pages and prints the problems
// grouped by kind with a verdict per file. Exit code 1 if any file has an error, 2 if a file cannot be read.
import { Option, type Command } from "commander";
import { DEFAULT_MAX_EXAMPLES, formatReport, validateFile, type FileKind, type ValidationReport } from "../../records/validate.js";
import { nonNegativeInt } from "../options.js";
import { failureMessage } from "../../util/failure.js";

interface ValidateCliOptions {
  kind?: FileKind;
  json?: boolean;
  maxExamples: number;
}

export function registerValidate(program: Command): void {
  program
    .command("validate")
    .description("check KILT files (task records or knowledge-source pages) against the format rules")
    .argument("<files...>", "JSONL files, plain or .gz, or Hugging Face kilt_tasks/kilt_wikipedia .parquet files (counted in rows)")
    .addOption(new Option("--kind <kind>", "what the files hold (default: guessed from the first record)").choices(["task", "page"]))
    .option("--json", "print the reports as JSON")
    .option("--max-examples <n>", "line (Parquet: row) numbers shown per problem kind", nonNegativeInt, DEFAULT_MAX_EXAMPLES)
    .action(async (files: string[], opts: ValidateCliOptions) => {
      const reports: ValidationReport[] = [];
      const unreadable: { file: string; reason: string }[] = [];
      for (const file of files) {
        try {
          const report = await validateFile(file, { kind: opts.kind, maxExamples: opts.maxExamples });
          reports.push(report);
          if (!opts.json) process.stdout.write(`${formatReport(report)}\n`);
        } catch (err) {
          const reason = failureMessage(err);
          unreadable.push({ file, reason });
          process.stderr.write(`tartan validate: cannot read ${reason.startsWith(`${file}: `) ? reason : `${file}: ${reason}`}\n`);
        }
      }
      const valid = reports.every((r) => r.valid);
      if (opts.json) {
        process.stdout.write(`${JSON.stringify({ valid: valid && unreadable.length === 0, files: reports, unreadable }, null, 2)}\n`);
      } else if (files.length > 1) {
        const invalid = reports.filter((r) => !r.valid).length;
        const unread = unreadable.length > 0 ? `, ${unreadable.length} unreadable` : "";
        process.stdout.write(`${files.length} files: ${reports.length - invalid} valid, ${invalid} invalid${unread}\n`);
      }
      process.exitCode = unreadable.length > 0 ? 2 : valid ? 0 : 1;
    });
}
