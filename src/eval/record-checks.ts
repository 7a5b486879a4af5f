// Shape checks shared by the gold table and the guess scorer: values that must be scalars, and
// provenance that must be a list of objects. Each reports its problem and says whether it found one.

import { pyStrip } from "../records/python-str.js";
import { Kind, type PyValue } from "./json-scanner.js";
import type { Problems, ProblemPlace } from "./problems.js";
import type { OutputView, RecordView } from "./scan.js";

/** A list or an object (Python would use its repr, which tartan does not reproduce). */
export const isComposite = (v: PyValue) => v.kind === Kind.Array || v.kind === Kind.Object;

/** The checks, reporting into one problem list. */
export class RecordChecks {
  constructor(private readonly problems: Problems) {}

  /** Reports a list or object where a scalar is needed (its Python repr is not reproduced); true if one was found. */
  composite(v: PyValue | undefined, what: string, place: ProblemPlace): boolean {
    if (v === undefined || !isComposite(v)) return false;
    this.problems.add(
      "value-not-scalar",
      "error",
      "input",
      "a list or object where the metrics need a string or number (tartan does not imitate Python's repr of it)",
      { ...place, detail: what },
    );
    return true;
  }

  /** The record's stripped id, or null after reporting a missing one (`missing`: its problem code and message) or a list or object. */
  id(rec: RecordView, file: string, line: number, missing: { code: string; message: string }): string | null {
    if (!rec.hasId) {
      this.problems.add(missing.code, "error", "input", missing.message, { file, line });
      return null;
    }
    if (this.composite(rec.id, "id", { file, line })) return null;
    return pyStrip(rec.id!.str);
  }

  /** Reports provenance that is not a list of objects (the official code iterates it anyway, with odd results or a crash). */
  badProvenance(o: OutputView, place: ProblemPlace): boolean {
    if (!o.hasProvenance) return false;
    if (o.provenanceList && o.provenance.every((p) => p.object)) return false;
    this.problems.add("bad-provenance", "error", "input", "provenance must be a list of objects", place);
    return true;
  }

  /** Rank-key values must be scalars. */
  compositeKeys(outputs: readonly OutputView[], place: ProblemPlace): boolean {
    for (const o of outputs)
      for (const p of o.provenance)
        for (const v of p.vals)
          if (v !== undefined && isComposite(v)) {
            this.composite(v, "provenance key value", place);
            return true;
          }
    return false;
  }
}
