// `POST /api/eval`: scores uploaded predictions with the KILT evaluator (`tartan eval`'s library call),
// against uploaded gold records or a dataset's gold file from the server's data directory. A
// multipart body (parts `gold` and `predictions`, fields `dataset`, `split`, `ks`, `rank_keys`, `mode`)
// streamed to a temporary directory under the size limit; the answer holds the official JSON, the
// counts, the problems (files named `gold` and `predictions`) and per-query scores (`per_query=false`
// leaves them out).

import { existsSync } from "node:fs";
import type { Hono } from "hono";
import { findDataset, localPath, SPLITS, type Split } from "../../datasets/catalogue.js";
import { evaluate, type EvalMode, type PerQueryRow } from "../../eval/evaluate.js";
import { officialJson } from "../../eval/report.js";
import type { Problem } from "../../eval/problems.js";
import { ApiError } from "../errors.js";
import { withDeadline } from "../limits.js";
import { choice, intList, nameList, str } from "../params.js";
import { receiveForm } from "../upload.js";
import type { EvalAnswer, EvalRefusal } from "../api-types.js";
import type { ServerEnv } from "../context.js";

const FIELDS = ["dataset", "split", "ks", "rank_keys", "mode", "per_query"] as const;
const MODES: readonly EvalMode[] = ["all", "downstream", "retrieval"];

/** `text` with the server's temporary paths replaced by the part names ("gold", "predictions"). */
function partNames(text: string, names: Record<string, string>, dir: string): string {
  for (const [path, name] of Object.entries(names)) text = text.split(path).join(name);
  return text.split(dir).join("upload");
}

/** Problems with the server's temporary paths replaced by the part names, in the examples and the messages. */
function renamed(problems: Problem[], names: Record<string, string>, dir: string): Problem[] {
  return problems.map((p) => ({ ...p, message: partNames(p.message, names, dir), examples: p.examples.map((x) => ({ ...x, file: names[x.file] ?? x.file })) }));
}

export function registerEval(app: Hono<ServerEnv>): void {
  app.post("/api/eval", async (c) => {
    const { settings, limits, resources } = c.var;
    // The upload is read whole (under its deadline and least rate, at most 8 at once) before an
    // evaluation slot is taken: a slow client holds an upload slot for seconds, never an evaluation slot.
    const upload = await limits.upload.run(() =>
      receiveForm(c.req.raw, {
        maxBytes: settings.maxUpload,
        fileParts: ["gold", "predictions"],
        fieldNames: FIELDS,
        deadlineMs: settings.uploadTimeoutMs,
        minRate: settings.minUploadRate,
        windowMs: settings.uploadRateWindowMs,
      }),
    );
    try {
      return await limits.eval.run(async () => {
        const f = upload.fields;
        const predictions = upload.files.predictions;
        if (!predictions) throw new ApiError(400, "a predictions file part is required");
        let gold = upload.files.gold;
        const names: Record<string, string> = { [predictions]: "predictions" };
        const datasetName = str(f, "dataset", { max: 100 });
        if (gold && datasetName) throw new ApiError(400, "give either a gold file part or a dataset, not both");
        if (gold) names[gold] = "gold";
        else {
          if (!datasetName) throw new ApiError(400, "a gold file part or a dataset is required");
          const dataset = findDataset(datasetName);
          if (!dataset) throw new ApiError(404, `unknown dataset ${JSON.stringify(datasetName)}`);
          const split = choice<Split>(f, "split", SPLITS, "dev");
          if (!resources.data) throw new ApiError(404, "no data directory is loaded (start the server with --data DIR)");
          if (!dataset.splits[split]) throw new ApiError(404, `${dataset.name} has no ${split} split`);
          gold = localPath(dataset, split, resources.data);
          if (!existsSync(gold)) throw new ApiError(404, `the ${split} file of ${dataset.name} is not in the server's data directory`);
          names[gold] = `${dataset.name}-${split}`;
        }
        const options = {
          ks: intList(f, "ks", { min: 1, max: 10_000, maxItems: 20 }),
          rankKeys: nameList(f, "rank_keys", 10),
          mode: choice(f, "mode", MODES, "all"),
        };
        const rows: PerQueryRow[] = [];
        const perQuery = choice(f, "per_query", ["true", "false"], "true") === "true" ? (row: PerQueryRow) => rows.push(row) : undefined;
        const result = await withDeadline(evaluate(gold, predictions, { ...options, perQuery }), settings.evalTimeoutMs, "the evaluation").catch((e: unknown) => {
          if (e instanceof ApiError) throw e;
          // A file the evaluator cannot read (not JSONL, bad gzip): the client's input, named by part.
          throw new ApiError(422, partNames(e instanceof Error ? e.message : String(e), names, upload.dir));
        });
        const problems = renamed(result.problems, names, upload.dir);
        // Nothing scored (malformed, swapped or empty inputs): the client's to fix, with every problem.
        const inputErrors = problems.filter((p) => p.severity === "error" && p.section === "input");
        if (inputErrors.length > 0) return c.json({ status: 422, error: `nothing scored: ${inputErrors.map((p) => p.message).join("; ")}`, problems } satisfies EvalRefusal, 422);
        return c.json({ result: officialJson(result), counts: result.counts, options: result.options, problems, per_query: perQuery ? rows : null } satisfies EvalAnswer);
      });
    } finally {
      upload.cleanup();
    }
  });
}
