// The evaluator's record reader: a JSONL file (plain, .gz, .parquet or stdin) or records in memory,
// turned line by line into RecordViews (./scan.ts) for a callback; malformed lines and invalid UTF-8
// become problems naming file and line, with the strict reader's message.

import { NESTING_REASON, OBJECTS_REASON } from "../records/record-limits.js";
import { invalidUtf8At, parseJsonObject, type ScanStats } from "../records/jsonl.js";
import type { KiltRecord } from "../records/types.js";
import { forEachLine } from "./lines.js";
import type { Problems } from "./problems.js";
import { prepareSpec, scanFailure, scanRecord, scanSawNonAscii, viewOfValue, type RecordView, type ScanSpec } from "./scan.js";

/** A source of records: a JSONL path, or records in memory. */
export type RecordSource = string | readonly KiltRecord[];

/** Scans a JSONL file (or converts records in memory) into RecordViews; malformed lines become problems. */
export async function readViews(
  source: RecordSource,
  name: string,
  spec: ScanSpec,
  onRecord: (rec: RecordView, line: number) => void,
  problems: Problems,
  onProgress?: (records: number, bytes: number) => void,
): Promise<ScanStats> {
  if (typeof source !== "string") {
    source.forEach((r, i) => onRecord(viewOfValue(r, spec), i + 1));
    return { records: source.length, blankLines: 0, badLines: 0, bytes: 0 };
  }
  const stats: ScanStats = { records: 0, blankLines: 0, badLines: 0, bytes: 0 };
  prepareSpec(spec);
  const progress = onProgress ? (bytes: number) => onProgress(stats.records, bytes) : undefined;
  await forEachLine(
    source,
    (buf, start, end, line) => {
      const view = scanRecord(buf, start, end, spec);
      // A line the scanner took without a non-ASCII string is ASCII, hence valid UTF-8.
      const badByte = scanSawNonAscii ? invalidUtf8At(buf, start, end) : -1;
      if (badByte >= 0)
        problems.add(
          "invalid-utf8",
          "warning",
          "input",
          "invalid UTF-8, decoded as U+FFFD (the official code raises UnicodeDecodeError)",
          { file: source, line, detail: `at byte ${badByte} of the line` },
        );
      if (view === null) {
        // The strict reader says what is wrong (the scanner only knows that something is).
        const reason = scanFailure === NESTING_REASON || scanFailure === OBJECTS_REASON ? scanFailure : strictReason(buf.toString("utf8", start, end));
        if (reason === undefined) {
          // Never expected: the scanner refused a line JSON.parse takes. Use the parsed value (numbers lose their spelling).
          problems.add("scanner-fallback", "note", "input", "line read with JSON.parse (please report)", { file: source, line });
          stats.records++;
          onRecord(viewOfValue(JSON.parse(buf.toString("utf8", start, end)), spec), line);
          return;
        }
        stats.badLines++;
        problems.add("invalid-json", "error", "input", "malformed line", { file: source, line, detail: reason });
        return;
      }
      stats.records++;
      onRecord(view, line);
    },
    stats,
    progress,
  );
  return stats;
}

/** JSON.parse's reason for refusing a line, or undefined when it parses as an object. */
function strictReason(text: string): string | undefined {
  const r = parseJsonObject(text);
  return "reason" in r ? r.reason : undefined;
}
