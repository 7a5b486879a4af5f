// Topic (query) files in the formats Pyserini and TREC use, read as (id, text) pairs with their line
// numbers: TSV (`qid<TAB>text`, Pyserini's and MS MARCO's), TREC topic files (`<top> <num> Number: 301
// <title> … <desc> Description: … <narr> Narrative: … </top>`, the field chosen, title by default), and
// JSONL with a chosen text field (BEIR's queries.jsonl: `_id`, `text`). A bad line is refused naming the
// file, the line and the field; a topic id given twice is refused too (a run's queries are its ids).

import { assertReadableFile, lineBatches, readJsonl } from "./jsonl.js";
import { LineError } from "./lines.js";

/** The topic file formats. */
export const TOPIC_FORMATS = ["tsv", "trec", "jsonl"] as const;
/** A topic file format. */
export type TopicsFormat = (typeof TOPIC_FORMATS)[number];

/** One topic: its id, its query text and the line it starts on. */
export interface Topic {
  id: string;
  text: string;
  line: number;
}

/** How to read a topic file. */
export interface TopicsOptions {
  format: TopicsFormat;
  /** trec: title (default), desc or narr; jsonl: the text field (default `text`); tsv: none. */
  field?: string;
}

const TREC_FIELDS: Record<string, "title" | "desc" | "narr"> = { title: "title", desc: "desc", description: "desc", narr: "narr", narrative: "narr" };
/** The label TREC puts at the start of each field's text. */
const TREC_LABELS: Record<string, RegExp> = { num: /^Number:\s*/iu, title: /^Topic:\s*/iu, desc: /^Description:\s*/iu, narr: /^Narrative:\s*/iu };

/** The topics of `file`, in order; throws a LineError naming the file, line and field of the first bad one. */
export async function* readTopics(file: string, options: TopicsOptions): AsyncGenerator<Topic> {
  assertReadableFile(file);
  const seen = new Map<string, number>();
  const once = (t: Topic): Topic => {
    const first = seen.get(t.id);
    if (first !== undefined) throw new LineError(file, t.line, `topic id ${JSON.stringify(t.id)} given again (first at line ${first})`);
    seen.set(t.id, t.line);
    return t;
  };
  if (options.format === "tsv") {
    if (options.field !== undefined) throw new Error(`--topics-field goes with trec or jsonl topics; a TSV topic is qid<TAB>text`);
    for await (const batch of lineBatches(file))
      for (const { text, line } of batch) {
        const parts = text.split("\t");
        if (parts.length < 2) throw new LineError(file, line, "no tab: a TSV topic is qid<TAB>text");
        if (parts.length > 2) throw new LineError(file, line, `${parts.length} fields: a TSV topic is qid<TAB>text (the query holds a tab?)`);
        const [id, query] = [parts[0].trim(), parts[1].trim()];
        if (id === "") throw new LineError(file, line, "field qid (1) is empty");
        if (query === "") throw new LineError(file, line, `field text (2) of topic ${id} is empty`);
        yield once({ id, text: query, line });
      }
    return;
  }
  if (options.format === "jsonl") {
    const field = options.field ?? "text";
    for await (const { value, line } of readJsonl(file)) {
      const idField = ["id", "qid", "_id"].find((k) => value[k] !== undefined && value[k] !== null);
      if (idField === undefined) throw new LineError(file, line, "topic without id (field id, qid or _id)");
      const id = value[idField];
      if ((typeof id !== "string" && typeof id !== "number") || String(id).trim() === "") throw new LineError(file, line, `field ${idField} must be a non-empty string or a number`);
      const text = value[field];
      if (text === undefined) throw new LineError(file, line, `topic ${String(id)} has no field ${JSON.stringify(field)} (--topics-field)`);
      if (typeof text !== "string") throw new LineError(file, line, `field ${JSON.stringify(field)} of topic ${String(id)} is not a string`);
      yield once({ id: String(id).trim(), text, line });
    }
    return;
  }
  if (options.format !== "trec") throw new Error(`--topics-format: unknown format ${JSON.stringify(options.format)} (known: ${TOPIC_FORMATS.join(", ")})`);
  const want = TREC_FIELDS[(options.field ?? "title").toLowerCase()];
  if (want === undefined) throw new Error(`--topics-field: a TREC topic's fields are title, desc, narr; not ${JSON.stringify(options.field)}`);
  yield* readTrecTopics(file, want, once);
}

/** TREC topics, one state machine over the lines: tags may share lines with text, closing field tags are optional. */
async function* readTrecTopics(file: string, want: "title" | "desc" | "narr", once: (t: Topic) => Topic): AsyncGenerator<Topic> {
  const tag = /<(\/?)(top|num|title|desc|narr)>/giu;
  let top: { line: number; fields: Map<string, string> } | null = null;
  let field: string | null = null;
  const finish = (): Topic => {
    const t = top!;
    const clean = (name: string) => (t.fields.get(name) ?? "").replace(/\s+/gu, " ").trim().replace(TREC_LABELS[name], "").trim();
    const id = clean("num");
    if (id === "") throw new LineError(file, t.line, "topic without <num>");
    const text = clean(want);
    if (text === "") throw new LineError(file, t.line, `topic ${id} has no <${want}> text (--topics-field)`);
    return once({ id, text, line: t.line });
  };
  for await (const batch of lineBatches(file))
    for (const { text, line } of batch) {
      let at = 0;
      const take = (chunk: string) => {
        if (chunk.trim() === "") return;
        if (top === null) throw new LineError(file, line, `text outside <top>…</top>: ${JSON.stringify(chunk.trim().slice(0, 40))}`);
        if (field === null) throw new LineError(file, line, `text outside a field (<num>, <title>, <desc>, <narr>): ${JSON.stringify(chunk.trim().slice(0, 40))}`);
        top.fields.set(field, `${top.fields.get(field) ?? ""} ${chunk}`);
      };
      const out: Topic[] = [];
      for (const m of text.matchAll(tag)) {
        take(text.slice(at, m.index));
        at = m.index + m[0].length;
        const [closing, name] = [m[1] === "/", m[2].toLowerCase()];
        if (name === "top") {
          if (!closing) {
            if (top !== null) throw new LineError(file, line, `<top> inside the topic of line ${top.line} (no </top> before it)`);
            top = { line, fields: new Map() };
          } else {
            if (top === null) throw new LineError(file, line, "</top> without <top>");
            out.push(finish());
            top = null;
          }
          field = null;
        } else if (closing) field = null;
        else {
          if (top === null) throw new LineError(file, line, `<${name}> outside <top>…</top>`);
          if (top.fields.has(name)) throw new LineError(file, line, `<${name}> given twice in the topic of line ${top.line}`);
          field = name;
          top.fields.set(name, "");
        }
      }
      take(text.slice(at));
      yield* out;
    }
  if (top !== null) throw new LineError(file, (top as { line: number }).line, "topic without </top> at the end of the file");
}
