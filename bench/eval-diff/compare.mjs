// Classifies tartan's results on one case against the official evaluator's (bench/eval-diff/run.mjs and
// test/eval/differential.test.ts). Per section (eval_downstream, eval_retrieval):
//  - official computed it: tartan must print the same JSON (keys, order, doubles), or refuse it with a
//    problem that docs/eval.md lists as a deliberate refusal (REFUSALS);
//  - official raised: tartan must not compute it either, unless it warns with a code docs/eval.md lists
//    as "evaluates where the official code crashes" (EVALUATES_WHEN_OFFICIAL_RAISES).
// Modes: the section must be the same whether tartan runs both evaluators or only that one.

/** tartan error codes that stand for a deliberate refusal of input the official code accepts (docs/eval.md). */
export const REFUSALS = new Set([
  "invalid-json", // NaN / Infinity literals (Python's json accepts them), nesting deeper than the limit
  "gold-bad-output",
  "gold-bad-output-item",
  "bad-provenance",
  "value-not-scalar",
  "guess-answer-not-scalar",
]);

/** tartan warning codes under which it scores a section where the official code raises. */
export const EVALUATES_WHEN_OFFICIAL_RAISES = new Set([
  "rouge-recursion", // RecursionError in pltrdy's recursive backtrack
  "gold-no-input", // KeyError: 'input'
  "gold-answer-not-string", // AttributeError: .strip() of a non-string answer
  "gold-title-not-string", // AttributeError: .strip() of a non-string title
  "gold-input-not-string", // AttributeError: .lower() of a non-string input
]);

const SECTIONS = ["eval_downstream", "eval_retrieval"];
const MODE_OF = { eval_downstream: "downstream", eval_retrieval: "retrieval" };

/** Problems as codes by severity, for one section (its own and the input-level ones). */
function codes(result, section, severity) {
  const want = section === "eval_downstream" ? "downstream" : "retrieval";
  return result.problems.filter((p) => p.severity === severity && (p.section === want || p.section === "input")).map((p) => p.code);
}

/**
 * `official`: { eval_downstream, eval_retrieval } as ../shared/tools/official-eval/run prints them.
 * `runs`: { all, downstream, retrieval } tartan EvalResults. Returns a list of findings
 * { section, kind, ok, detail }; a case is clean when every finding is ok.
 */
export function classify(official, runs) {
  const findings = [];
  for (const section of SECTIONS) {
    const o = official[section];
    const t = runs.all[section];
    const single = runs[MODE_OF[section]][section];
    if (JSON.stringify(single) !== JSON.stringify(t))
      findings.push({ section, kind: "mode-mismatch", ok: false, detail: `--mode all gives ${JSON.stringify(t)}, --mode ${MODE_OF[section]} ${JSON.stringify(single)}` });
    const errors = codes(runs.all, section, "error");
    const warnings = runs.all.problems.filter((p) => p.severity === "warning").map((p) => p.code);
    if (o && o.error === undefined) {
      if (t === null) {
        const unexpected = errors.filter((c) => !REFUSALS.has(c));
        findings.push({
          section,
          kind: unexpected.length === 0 && errors.length > 0 ? "refused" : "refused-unexpectedly",
          ok: unexpected.length === 0 && errors.length > 0,
          detail: errors.join(","),
        });
      } else if (JSON.stringify(t) === JSON.stringify(o)) findings.push({ section, kind: "equal", ok: true });
      else findings.push({ section, kind: "value-difference", ok: false, detail: diffKeys(o, t) });
    } else {
      const why = o ? o.error.slice(0, 60) : "missing";
      if (t === null) findings.push({ section, kind: "both-refuse", ok: true, detail: `${why} / ${errors.join(",")}` });
      else {
        const excused = warnings.filter((c) => EVALUATES_WHEN_OFFICIAL_RAISES.has(c));
        findings.push({
          section,
          kind: excused.length > 0 ? "scored-where-official-raises" : "scored-unexpectedly",
          ok: excused.length > 0,
          detail: `${o?.error} / ${warnings.join(",")}`,
        });
      }
    }
  }
  return findings;
}

/** The keys whose values differ, with both values. */
function diffKeys(o, t) {
  const out = [];
  const walk = (a, b, path) => {
    if (typeof a === "object" && a !== null && typeof b === "object" && b !== null) {
      const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
      if (JSON.stringify(Object.keys(a)) !== JSON.stringify(Object.keys(b))) out.push(`${path || "."} keys ${JSON.stringify(Object.keys(a))} vs ${JSON.stringify(Object.keys(b))}`);
      for (const k of keys) walk(a[k], b[k], `${path}.${k}`);
    } else if (a !== b) out.push(`${path} official ${a} tartan ${b}`);
  };
  walk(o, t, "");
  return out.slice(0, 8).join("; ");
}
