// Test helper: writes KILT records and pages as the Hugging Face datasets `facebook/kilt_tasks` and
// `facebook/kilt_wikipedia` store them in Parquet. The rows are made as their loading scripts make them
// (absent fields filled with "", -1, -1.0, {"score": -1}, []; annotation ids as str(int); the knowledge
// source's `text`, `anchors` and `aliases` as Sequence features, i.e. structs of parallel lists), and the
// schema is Arrow's (features → pyarrow): list<struct> as LIST/list/element groups, struct as a group,
// int32, float32, bool and UTF-8 strings, every field nullable. Written with hyparquet-writer (snappy).

import { parquetWriteFile } from "hyparquet-writer";

type Node = { name: string; leaf?: "STRING" | "INT32" | "FLOAT" | "BOOLEAN"; struct?: Node[]; list?: Node };
type Element = Record<string, unknown>;

const s = (name: string): Node => ({ name, leaf: "STRING" });
const i32 = (name: string): Node => ({ name, leaf: "INT32" });
const f32 = (name: string): Node => ({ name, leaf: "FLOAT" });
const bool = (name: string): Node => ({ name, leaf: "BOOLEAN" });
const struct = (name: string, fields: Node[]): Node => ({ name, struct: fields });
const list = (name: string, element: Node): Node => ({ name, list: element });

/** `facebook/kilt_tasks` features (kilt_tasks.py, datasets ≥ 1.2; the Hub's dataset_info). */
export const KILT_TASKS_FEATURES: Node[] = [
  s("id"),
  s("input"),
  struct("meta", [
    s("left_context"),
    s("mention"),
    s("right_context"),
    list(
      "partial_evidence",
      struct("element", [i32("start_paragraph_id"), i32("end_paragraph_id"), s("title"), s("section"), s("wikipedia_id"), struct("meta", [list("evidence_span", s("element"))])]),
    ),
    list("obj_surface", s("element")),
    list("sub_surface", s("element")),
    list("subj_aliases", s("element")),
    list("template_questions", s("element")),
  ]),
  list(
    "output",
    struct("element", [
      s("answer"),
      struct("meta", [i32("score")]),
      list(
        "provenance",
        struct("element", [
          f32("bleu_score"),
          i32("start_character"),
          i32("start_paragraph_id"),
          i32("end_character"),
          i32("end_paragraph_id"),
          struct("meta", [s("fever_page_id"), i32("fever_sentence_id"), s("annotation_id"), s("yes_no_answer"), list("evidence_span", s("element"))]),
          s("section"),
          s("title"),
          s("wikipedia_id"),
        ]),
      ),
    ]),
  ),
];

/** `facebook/kilt_wikipedia` features (kilt_wikipedia.py): `Sequence({...})` is a struct of lists. */
export const KILT_WIKIPEDIA_FEATURES: Node[] = [
  s("kilt_id"),
  s("wikipedia_id"),
  s("wikipedia_title"),
  struct("text", [list("paragraph", s("element"))]),
  struct("anchors", [
    list("paragraph_id", i32("element")),
    list("start", i32("element")),
    list("end", i32("element")),
    list("text", s("element")),
    list("href", s("element")),
    list("wikipedia_title", s("element")),
    list("wikipedia_id", s("element")),
  ]),
  s("categories"),
  struct("wikidata_info", [s("description"), s("enwikiquote_title"), s("wikidata_id"), s("wikidata_label"), s("wikipedia_title"), struct("aliases", [list("alias", s("element"))])]),
  struct("history", [i32("pageid"), i32("parentid"), i32("revid"), bool("pre_dump"), s("timestamp"), s("url")]),
];

/** The Parquet schema elements of `nodes` (depth first, as the format lists them). */
export function parquetSchemaOf(nodes: Node[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [{ name: "root", num_children: nodes.length }];
  const walk = (n: Node, name = n.name) => {
    if (n.leaf === "STRING") out.push({ name, type: "BYTE_ARRAY", converted_type: "UTF8", repetition_type: "OPTIONAL" });
    else if (n.leaf) out.push({ name, type: n.leaf, repetition_type: "OPTIONAL" });
    else if (n.struct) {
      out.push({ name, repetition_type: "OPTIONAL", num_children: n.struct.length });
      for (const c of n.struct) walk(c);
    } else if (n.list) {
      out.push({ name, repetition_type: "OPTIONAL", converted_type: "LIST", num_children: 1 });
      out.push({ name: "list", repetition_type: "REPEATED", num_children: 1 });
      walk(n.list, "element");
    }
  };
  nodes.forEach((n) => walk(n));
  return out;
}

function writeRows(file: string, features: Node[], rows: Element[], rowGroupSize: number): void {
  parquetWriteFile({
    filename: file,
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    schema: parquetSchemaOf(features) as any,
    columnData: features.map((f) => ({ name: f.name, data: rows.map((r) => r[f.name] ?? null) })),
    rowGroupSize,
  });
}

const get = (o: unknown, k: string, d: unknown): unknown => {
  const v = o !== null && typeof o === "object" ? (o as Element)[k] : undefined;
  return v === undefined ? d : v;
};

/** One KILT record as a `kilt_tasks` row, as `_generate_examples` makes it. `annotationIds` keeps 64-bit ids exact. */
export function kiltTasksRow(r: Element): Element {
  const meta = (r.meta ?? {}) as Element;
  return {
    id: String(r.id),
    input: r.input ?? "",
    meta: {
      left_context: meta.left_context ?? "",
      mention: meta.mention ?? "",
      right_context: meta.right_context ?? "",
      partial_evidence: ((meta.partial_evidence ?? []) as Element[]).map((p) => ({
        start_paragraph_id: p.start_paragraph_id ?? -1,
        end_paragraph_id: p.end_paragraph_id ?? -1,
        title: p.title ?? "",
        section: p.section ?? "",
        wikipedia_id: p.wikipedia_id ?? "",
        meta: { evidence_span: get(p.meta, "evidence_span", []) },
      })),
      obj_surface: meta.obj_surface ?? [],
      sub_surface: meta.sub_surface ?? [],
      subj_aliases: meta.subj_aliases ?? [],
      template_questions: meta.template_questions ?? [],
    },
    output: ((r.output ?? []) as Element[]).map((o) => ({
      answer: o.answer ?? "",
      meta: { score: get(o.meta ?? { score: -1 }, "score", null) },
      provenance: ((o.provenance ?? []) as Element[]).map((p) => ({
        bleu_score: p.bleu_score ?? -1.0,
        start_character: p.start_character ?? -1,
        start_paragraph_id: p.start_paragraph_id ?? -1,
        end_character: p.end_character ?? -1,
        end_paragraph_id: p.end_paragraph_id ?? -1,
        meta: {
          fever_page_id: get(p.meta, "fever_page_id", ""),
          fever_sentence_id: get(p.meta, "fever_sentence_id", -1),
          annotation_id: String(get(p.meta, "annotation_id", -1)),
          yes_no_answer: get(p.meta, "yes_no_answer", ""),
          evidence_span: get(p.meta, "evidence_span", []),
        },
        section: p.section ?? "",
        title: p.title ?? "",
        wikipedia_id: p.wikipedia_id ?? "",
      })),
    })),
  };
}

/** One knowledge-source page as a `kilt_wikipedia` row, as `_generate_examples` makes it. */
export function kiltWikipediaRow(p: Element): Element {
  const w = (p.wikidata_info ?? {}) as Element;
  const h = (p.history ?? {}) as Element;
  const anchors = (p.anchors ?? []) as Element[];
  const col = (k: string) => anchors.map((a) => a[k] ?? "");
  return {
    kilt_id: p._id ?? p.wikipedia_id,
    wikipedia_id: p.wikipedia_id,
    wikipedia_title: p.wikipedia_title,
    categories: p.categories ?? "",
    wikidata_info: {
      description: w.description ?? "",
      enwikiquote_title: w.enwikiquote_title ?? "",
      wikidata_id: w.wikidata_id ?? "",
      wikidata_label: w.wikidata_label ?? "",
      wikipedia_title: w.wikipedia_title ?? "",
      aliases: { alias: w.aliases ?? [] },
    },
    history: {
      pre_dump: h.pre_dump ?? false,
      pageid: h.pageid ?? -1,
      parentid: h.parentid ?? -1,
      revid: h.revid ?? -1,
      timestamp: h.timestamp ?? "",
      url: h.url ?? "",
    },
    text: { paragraph: p.text },
    anchors: {
      paragraph_id: col("paragraph_id"),
      start: col("start"),
      end: col("end"),
      text: col("text"),
      href: col("href"),
      wikipedia_title: col("wikipedia_title"),
      wikipedia_id: col("wikipedia_id"),
    },
  };
}

/** Parses KILT JSONL text keeping 64-bit `annotation_id`s exact (as strings, the loader's str(int)). */
export function parseKiltLines(text: string): Element[] {
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l.replace(/"annotation_id":\s*(\d+)/g, '"annotation_id": "$1"')) as Element);
}

/** Writes records as a `kilt_tasks` Parquet file (row groups of `rowGroupSize` rows). */
export function writeKiltTasksParquet(file: string, records: Element[], rowGroupSize = 1000): void {
  writeRows(file, KILT_TASKS_FEATURES, records.map(kiltTasksRow), rowGroupSize);
}

/** Writes pages as a `kilt_wikipedia` Parquet file. */
export function writeKiltWikipediaParquet(file: string, pages: Element[], rowGroupSize = 1000): void {
  writeRows(file, KILT_WIKIPEDIA_FEATURES, pages.map(kiltWikipediaRow), rowGroupSize);
}

/** Writes rows already in the Hugging Face shape (for malformed-row tests) with the given features. */
export function writeParquetRows(file: string, features: Node[], rows: Element[]): void {
  writeRows(file, features, rows, 1000);
}

export { s as stringFeature, i32 as int32Feature, struct as structFeature, list as listFeature };
