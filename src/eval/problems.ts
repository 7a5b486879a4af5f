// Problems found while evaluating, grouped by kind with a count and the first few places
// (file, line, id), so a 50,000-record run with one systematic mistake prints one line, not 50,000.

/** How bad a problem is: an error leaves a section null, a warning or note does not. */
export type Severity = "error" | "warning" | "note";
/** Which result a problem affects: the whole run (`input`), or one evaluator's section. */
export type Section = "input" | "downstream" | "retrieval";

/** Where a problem occurred: file, line and record id. */
export interface ProblemPlace {
  file: string;
  line: number;
  id?: string;
  /** What exactly is wrong at this place, when the kind's message is not enough. */
  detail?: string;
}

/** One kind of problem found in the inputs: its code, severity, section, message, how often it occurred and examples with file, line and id. */
export interface Problem {
  code: string;
  severity: Severity;
  section: Section;
  message: string;
  count: number;
  examples: ProblemPlace[];
}

export class Problems {
  private readonly byCode = new Map<string, Problem>();
  constructor(private readonly maxExamples = 5) {}

  add(code: string, severity: Severity, section: Section, message: string, place?: ProblemPlace): void {
    let p = this.byCode.get(code);
    if (!p) {
      p = { code, severity, section, message, count: 0, examples: [] };
      this.byCode.set(code, p);
    }
    p.count++;
    if (place && p.examples.length < this.maxExamples) p.examples.push(place);
  }

  has(code: string): boolean {
    return this.byCode.has(code);
  }

  get(code: string): Problem | undefined {
    return this.byCode.get(code);
  }

  remove(code: string): Problem | undefined {
    const p = this.byCode.get(code);
    this.byCode.delete(code);
    return p;
  }

  list(): Problem[] {
    const order: Record<Severity, number> = { error: 0, warning: 1, note: 2 };
    // A swapped pair of files explains every other problem: it comes first.
    const rank = (p: Problem) => (p.code === "swapped-files" ? -1 : order[p.severity]);
    return [...this.byCode.values()].sort((a, b) => rank(a) - rank(b));
  }

  errors(section?: Section): Problem[] {
    return this.list().filter((p) => p.severity === "error" && (section === undefined || p.section === section));
  }
}

/** `file:line (id X), file:line …` for the examples of a problem. */
export function formatPlaces(p: Problem): string {
  const shown = p.examples.map((e) => `${e.file}:${e.line}${e.id !== undefined ? ` (id ${JSON.stringify(e.id)})` : ""}${e.detail ? ` ${e.detail}` : ""}`);
  const more = p.count > p.examples.length ? `, … ${p.count - p.examples.length} more` : "";
  return shown.join(", ") + more;
}

/** One line per problem: `error  [retrieval] message (N records): places`. */
export function formatProblem(p: Problem): string {
  const places = p.examples.length > 0 ? `: ${formatPlaces(p)}` : "";
  const count = p.count > 1 || p.examples.length > 0 ? ` (${p.count} record${p.count === 1 ? "" : "s"})` : "";
  return `${p.severity.padEnd(7)} [${p.section}] ${p.message}${count}${places}`;
}
