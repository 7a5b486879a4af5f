// Pseudo-relevance feedback's parameters: RM3 (fbDocs, fbTerms, originalQueryWeight, filterTerms) and
// Rocchio (topFbTerms, topFbDocs, bottomFbTerms, bottomFbDocs, alpha, beta, gamma, useNegative, depth),
// with Anserini's defaults, as plain data (a search option and a stage's options travel to the search
// workers), and their text form `key=value,…` (`tartan retrieve --rm3 fbDocs=5,fbTerms=20`, a request's `rm3`).

/** RM3's parameters (Anserini's `-rm3.*`); an unset one takes {@link RM3_DEFAULTS}'. */
export interface Rm3Params {
  /** Feedback documents: the first-stage top fbDocs (default 10). */
  fbDocs?: number;
  /** Expansion terms kept, per feedback document and in the relevance model (default 10). */
  fbTerms?: number;
  /** The original query's weight in the interpolation, 0 to 1 (default 0.5). */
  originalQueryWeight?: number;
  /** Keep only feedback terms of `[a-z0-9]` (Anserini's English term filter; default true, `-rm3.noTermFilter` turns it off). */
  filterTerms?: boolean;
}

/** Rocchio's parameters (Anserini's `-rocchio.*`); an unset one takes {@link ROCCHIO_DEFAULTS}'. */
export interface RocchioParams {
  /** Terms kept of the mean relevant document vector (default 10). */
  topFbTerms?: number;
  /** Relevant documents: the first-stage top topFbDocs (default 10). */
  topFbDocs?: number;
  /** Terms kept of the mean non-relevant document vector (default 10). */
  bottomFbTerms?: number;
  /** Non-relevant documents: the last bottomFbDocs of the first-stage list of `depth` (default 10). */
  bottomFbDocs?: number;
  /** The original query's weight (default 1). */
  alpha?: number;
  /** The relevant documents' weight (default 0.75). */
  beta?: number;
  /** The non-relevant documents' weight, with useNegative (default 0.15). */
  gamma?: number;
  /** Subtract the non-relevant documents (default false). */
  useNegative?: boolean;
  /** The first-stage list whose tail the non-relevant documents come from (Anserini's `-hits`; default 1000). */
  depth?: number;
}

/** Which feedback, and its parameters: the `feedback` search option and the `rm3`/`rocchio` stages'. */
export type FeedbackSpec = ({ method: "rm3" } & Rm3Params) | ({ method: "rocchio" } & RocchioParams);

/** The feedback methods. */
export const FEEDBACK_METHODS = ["rm3", "rocchio"] as const;

/** Anserini's RM3 defaults. */
export const RM3_DEFAULTS: Required<Rm3Params> = { fbDocs: 10, fbTerms: 10, originalQueryWeight: 0.5, filterTerms: true };

/** Anserini's Rocchio defaults (gamma counts only with useNegative, as in Anserini). */
export const ROCCHIO_DEFAULTS: Required<RocchioParams> = { topFbTerms: 10, topFbDocs: 10, bottomFbTerms: 10, bottomFbDocs: 10, alpha: 1, beta: 0.75, gamma: 0.15, useNegative: false, depth: 1000 };

type Kind = "int" | "weight" | "unit" | "bool";
const RM3_KEYS: Record<keyof Rm3Params, Kind> = { fbDocs: "int", fbTerms: "int", originalQueryWeight: "unit", filterTerms: "bool" };
const ROCCHIO_KEYS: Record<keyof RocchioParams, Kind> = { topFbTerms: "int", topFbDocs: "int", bottomFbTerms: "int", bottomFbDocs: "int", alpha: "weight", beta: "weight", gamma: "weight", useNegative: "bool", depth: "int" };

function keysOf(method: FeedbackSpec["method"]): Record<string, Kind> {
  return method === "rm3" ? RM3_KEYS : ROCCHIO_KEYS;
}

function checkValue(where: string, key: string, kind: Kind, v: unknown): void {
  const bad = (what: string) => new Error(`${where}: ${key} must be ${what}, got ${JSON.stringify(v)}`);
  if (kind === "bool") {
    if (typeof v !== "boolean") throw bad("true or false");
  } else if (kind === "int") {
    if (!(typeof v === "number" && Number.isInteger(v) && v >= 1 && v <= 100_000)) throw bad("a whole number from 1 to 100000");
  } else if (kind === "unit") {
    if (!(typeof v === "number" && Number.isFinite(v) && v >= 0 && v <= 1)) throw bad("a number from 0 to 1");
  } else if (!(typeof v === "number" && Number.isFinite(v) && v >= 0)) throw bad("a number of at least 0");
}

/** Throws naming the bad field unless `spec` is a feedback spec: a known method, known keys, values in range. */
export function checkFeedback(spec: unknown, where = "feedback"): FeedbackSpec {
  if (typeof spec !== "object" || spec === null || Array.isArray(spec)) throw new Error(`${where}: expected an object {method, …}, got ${JSON.stringify(spec)}`);
  const s = spec as Record<string, unknown>;
  if (!FEEDBACK_METHODS.includes(s.method as FeedbackSpec["method"])) throw new Error(`${where}: method must be ${FEEDBACK_METHODS.join(" or ")}, got ${JSON.stringify(s.method)}`);
  const keys = keysOf(s.method as FeedbackSpec["method"]);
  for (const [key, v] of Object.entries(s)) {
    if (key === "method" || v === undefined) continue;
    const kind = keys[key];
    if (kind === undefined) throw new Error(`${where}: ${s.method as string} has no parameter ${JSON.stringify(key)} (known: ${Object.keys(keys).join(", ")})`);
    checkValue(where, key, kind, v);
  }
  return s as unknown as FeedbackSpec;
}

/**
 * `fbDocs=5,fbTerms=20,originalQueryWeight=0.3` (any of them; "" or `true`: the defaults) as the `method`'s
 * spec; a boolean parameter may be given bare (`useNegative`) or `=true`/`=false`. Throws naming the bad part.
 */
export function parseFeedback(method: FeedbackSpec["method"], text: string | true, where = `--${method}`): FeedbackSpec {
  const keys = keysOf(method);
  const out: Record<string, unknown> = { method };
  if (text === true || text.trim() === "" || text.trim() === "true") return checkFeedback(out, where);
  for (const raw of text.split(",")) {
    const part = raw.trim();
    const m = /^([A-Za-z]+)\s*(?:=\s*(\S+))?$/u.exec(part);
    if (!m) throw new Error(`${where}: ${JSON.stringify(part)} is not key=value (known: ${Object.keys(keys).join(", ")})`);
    const [, key, value] = m;
    const kind = keys[key];
    if (kind === undefined) throw new Error(`${where}: ${method} has no parameter ${JSON.stringify(key)} (known: ${Object.keys(keys).join(", ")})`);
    if (kind === "bool") {
      if (value !== undefined && value !== "true" && value !== "false") throw new Error(`${where}: ${key} must be true or false, got ${JSON.stringify(value)}`);
      out[key] = value !== "false";
    } else {
      if (value === undefined) throw new Error(`${where}: ${key} needs a value (${key}=N)`);
      const n = /^[-+0-9.eE]+$/u.test(value) ? Number(value) : NaN;
      if (Number.isNaN(n)) throw new Error(`${where}: ${key} must be a number, got ${JSON.stringify(value)}`);
      out[key] = n;
    }
  }
  return checkFeedback(out, where);
}

/** The RM3 spec with every parameter set. */
export function rm3Params(spec: Rm3Params): Required<Rm3Params> {
  return { fbDocs: spec.fbDocs ?? RM3_DEFAULTS.fbDocs, fbTerms: spec.fbTerms ?? RM3_DEFAULTS.fbTerms, originalQueryWeight: spec.originalQueryWeight ?? RM3_DEFAULTS.originalQueryWeight, filterTerms: spec.filterTerms ?? RM3_DEFAULTS.filterTerms };
}

/** The Rocchio spec with every parameter set. */
export function rocchioParams(spec: RocchioParams): Required<RocchioParams> {
  const d = ROCCHIO_DEFAULTS;
  return {
    topFbTerms: spec.topFbTerms ?? d.topFbTerms,
    topFbDocs: spec.topFbDocs ?? d.topFbDocs,
    bottomFbTerms: spec.bottomFbTerms ?? d.bottomFbTerms,
    bottomFbDocs: spec.bottomFbDocs ?? d.bottomFbDocs,
    alpha: spec.alpha ?? d.alpha,
    beta: spec.beta ?? d.beta,
    gamma: spec.gamma ?? d.gamma,
    useNegative: spec.useNegative ?? d.useNegative,
    depth: spec.depth ?? d.depth,
  };
}
