// The slot-filling reader (T-REx, Zero-Shot RE): "subject [SEP] relation" becomes a natural question
// through a relation → template table (relations seen in the KILT samples plus frequent Wikidata
// ones; zsRE's own template questions guided the wording), which the extractive reader answers from
// the passages. Unknown relations get "What is the <relation> of <subject>?".

import type { KiltRecord } from "../../records/types.js";
import { ExtractiveReader } from "../extractive/reader.js";
import type { Reader, ReaderAnswer, ReaderDescriptor, ReaderPassage } from "../types.js";

/** Question templates by relation label; `{s}` is the subject. */
export const RELATION_TEMPLATES: Readonly<Record<string, string>> = {
  // Seen in the KILT T-REx / zsRE samples.
  "time of spacecraft launch": "When was {s} launched?",
  "military rank": "What was the military rank of {s}?",
  spouse: "Who was the spouse of {s}?",
  "mouth of the watercourse": "What does {s} flow into?",
  "participant of": "Which event did {s} participate in?",
  instrument: "What instrument does {s} play?",
  author: "Who was the author of {s}?",
  "connecting line": "On which railway line is {s}?",
  "languages spoken or written": "What language did {s} speak or write?",
  "IUCN conservation status": "What is the conservation status of {s}?",
  genre: "What genre is {s}?",
  country: "In which country is {s}?",
  "country of origin": "What country is {s} from?",
  "instance of": "What is {s}?",
  occupation: "What was the occupation of {s}?",
  "taxon rank": "What is the taxon rank of {s}?",
  "parent taxon": "What is the parent taxon of {s}?",
  "located in the administrative territorial entity": "In which region is {s} located?",
  performer: "Who performed {s}?",
  "located on terrain feature": "On which terrain feature is {s} located?",
  // Frequent Wikidata relations of T-REx and zsRE.
  "date of birth": "When was {s} born?",
  "place of birth": "Where was {s} born?",
  "date of death": "When did {s} die?",
  "place of death": "Where did {s} die?",
  "country of citizenship": "What is the nationality of {s}?",
  "educated at": "Where was {s} educated?",
  employer: "Who was the employer of {s}?",
  "member of sports team": "Which team did {s} play for?",
  "position played on team / speciality": "What position did {s} play?",
  "position held": "What position did {s} hold?",
  "member of political party": "Which political party was {s} a member of?",
  father: "Who was the father of {s}?",
  mother: "Who was the mother of {s}?",
  child: "Who was the child of {s}?",
  sibling: "Who was the sibling of {s}?",
  capital: "What is the capital of {s}?",
  "capital of": "What is {s} the capital of?",
  "founded by": "Who founded {s}?",
  inception: "When was {s} founded?",
  "headquarters location": "Where is the headquarters of {s}?",
  "located in or next to body of water": "Which body of water is {s} next to?",
  continent: "Which continent is {s} on?",
  director: "Who directed {s}?",
  "cast member": "Who starred in {s}?",
  "screenwriter": "Who wrote the screenplay of {s}?",
  "producer": "Who produced {s}?",
  composer: "Who composed {s}?",
  "record label": "What record label released {s}?",
  publisher: "Who published {s}?",
  developer: "Who developed {s}?",
  manufacturer: "Who manufactured {s}?",
  "original network": "Which network originally broadcast {s}?",
  "original language of film or TV show": "What is the original language of {s}?",
  "publication date": "When was {s} published?",
  "part of": "What is {s} part of?",
  "follows": "What did {s} follow?",
  "followed by": "What followed {s}?",
  "native language": "What is the native language of {s}?",
  "official language": "What is the official language of {s}?",
  religion: "What is the religion of {s}?",
  "sex or gender": "What is the gender of {s}?",
  "conflict": "Which war did {s} fight in?",
  "award received": "What award did {s} receive?",
  "notable work": "What is a notable work of {s}?",
  "field of work": "What field did {s} work in?",
  "named after": "Who or what is {s} named after?",
  "architect": "Who was the architect of {s}?",
  "owned by": "Who owns {s}?",
  "operator": "Who operates {s}?",
  "start time": "When did {s} start?",
  "end time": "When did {s} end?",
  "point in time": "When did {s} happen?",
  "service entry": "When did {s} enter service?",
  "date of official opening": "When did {s} open?",
  "vessel class": "What class of ship is {s}?",
  "constellation": "In which constellation is {s}?",
  "league": "Which league does {s} play in?",
  "home venue": "What is the home venue of {s}?",
};

/** Splits a slot-filling input into subject and relation (`relation` is "" when there is no [SEP]). */
export function parseSlotInput(input: string): { subject: string; relation: string } {
  const at = input.indexOf("[SEP]");
  if (at < 0) return { subject: input.trim(), relation: "" };
  return { subject: input.slice(0, at).trim(), relation: input.slice(at + 5).trim() };
}

/** The question asked for a slot-filling input. */
export function slotQuestion(input: string): string {
  const { subject, relation } = parseSlotInput(input);
  if (relation === "") return `What is ${subject}?`;
  const template = RELATION_TEMPLATES[relation] ?? RELATION_TEMPLATES[relation.toLowerCase()];
  return template !== undefined ? template.replaceAll("{s}", subject) : `What is the ${relation} of ${subject}?`;
}

/** The slot-filling reader (T-REx, zsRE): the `subject [SEP] relation` input as a question for the extractive reader. */
export class SlotFillingReader implements Reader {
  readonly name = "slot-filling";
  constructor(readonly extractive: ExtractiveReader) {}

  async read(record: KiltRecord, passages: readonly ReaderPassage[]): Promise<ReaderAnswer> {
    const question = slotQuestion(record.input ?? "");
    const a = this.extractive.readSync(question, passages);
    return { ...a, meta: { ...a.meta, question } };
  }
}

/** `--reader slot-filling`: template questions answered by the extractive model `--model` names. */
export const slotFillingReaderKind: ReaderDescriptor = {
  name: "slot-filling",
  version: 1,
  summary: "subject [SEP] relation as a template question for the extractive reader",
  needs: [{ option: "model", flag: "--model", what: "an extractive model file" }],
  open: (o) => new SlotFillingReader(ExtractiveReader.load(o.model!)),
};
