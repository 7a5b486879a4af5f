// A deterministic synthetic knowledge source in KILT's page format (kilt-spec.md §1.3), for the
// ingest benchmark and tests: real page shapes (heavy-tailed page sizes, title line, prose,
// `Section::::` headers, `BULLET::::-` items, anchors with code-point offsets, categories, history,
// wikidata_info) with a Zipfian vocabulary that holds accented, CJK and astral characters.

import type { Anchor, KiltPage } from "../records/types.js";
import { JsonlWriter } from "../records/jsonl.js";
import { cpLength } from "./codepoints.js";
import { seededRandom } from "../util/random.js";

/** Options of the synthetic KILT-like knowledge source. */
export interface SyntheticOptions {
  /** Number of pages. */
  pages: number;
  /** PRNG seed; the same seed and options give the same file byte for byte. */
  seed?: number;
  /** Multiplies the number of paragraphs per page (1 = pages of ~6 KB on average, like KILT's 34.8 GiB / 5.9 M). */
  scale?: number;
  /** Probability that a word of prose is a link to another page (default 0.03). */
  anchorRate?: number;
}

/**
 * Options that give KILT's knowledge source its real proportions: 5,903,530 pages of these make ~22M
 * 100-word passages (22.5M) and 37.8 GB of JSON (KILT: ~22.2M, 34.8 GiB = 37.4 GB); the default pages hold
 * twice the prose and fewer links.
 */
export const KILT_SHAPE = { scale: 0.4, anchorRate: 0.12 } as const;


const SYLLABLES = [
  "an", "ber", "ca", "do", "el", "fra", "gi", "ho", "in", "ja", "ka", "lo", "ma", "ne", "or", "pe", "qui", "ra",
  "si", "to", "ul", "ve", "wa", "xi", "yo", "za", "ton", "ster", "mont", "land", "burg", "ville", "son", "ley",
];
const ACCENTED = ["é", "ü", "ñ", "ø", "ç", "å", "ł", "ő"];
const CJK = ["東京", "北京", "大学", "王", "山"];
const ASTRAL = ["𝔸", "𠀋", "😀"];
const FUNCTION_WORDS = ["the", "of", "and", "in", "to", "a", "was", "is", "for", "on", "as", "by", "with", "his", "at", "from", "that", "it", "an", "which"];
const SECTIONS = ["History", "Early life", "Career", "Geography", "Demographics", "Economy", "Reception", "Plot", "References", "External links", "Legacy", "Personal life"];

const VOCAB_SIZE = 60_000;
const LOG_VOCAB = Math.log(VOCAB_SIZE + 1);

/** Generator state shared by all pages of one file. */
class Vocabulary {
  readonly words: string[] = [];
  /** Code-point length of each word. */
  readonly cps: number[] = [];

  constructor(rand: () => number) {
    const seen = new Set<string>(FUNCTION_WORDS);
    this.words.push(...FUNCTION_WORDS);
    while (this.words.length < VOCAB_SIZE) {
      const n = 1 + Math.floor(rand() * 3.2);
      let w = "";
      for (let i = 0; i < n; i++) w += SYLLABLES[Math.floor(rand() * SYLLABLES.length)];
      const r = rand();
      if (r < 0.03) w += ACCENTED[Math.floor(rand() * ACCENTED.length)];
      else if (r < 0.034) w = CJK[Math.floor(rand() * CJK.length)] + w;
      else if (r < 0.0345) w += ASTRAL[Math.floor(rand() * ASTRAL.length)];
      if (!seen.has(w)) {
        seen.add(w);
        this.words.push(w);
      }
    }
    for (const w of this.words) this.cps.push(cpLength(w));
  }

  /**
   * A word index drawn from Zipf's law (s = 1) by inverting its continuous approximation:
   * P(i) = ln((i + 2) / (i + 1)) / ln(N + 1) ≈ 1 / ((i + 1.5) ln N). Arithmetic only, no table to miss in cache.
   */
  index(rand: () => number): number {
    return Math.min(VOCAB_SIZE - 1, Math.floor(Math.exp(rand() * LOG_VOCAB)) - 1);
  }

  word(rand: () => number): string {
    return this.words[this.index(rand)];
  }
}

function capitalize(w: string): string {
  return w.charAt(0).toUpperCase() + w.slice(1);
}

/** A log-normal draw with the given median, clamped to [min, max]. */
function logNormal(rand: () => number, median: number, sigma: number, min: number, max: number): number {
  const u = Math.max(rand(), 1e-12);
  const v = rand();
  const z = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  return Math.max(min, Math.min(max, Math.round(median * Math.exp(sigma * z))));
}

/**
 * The pages of a synthetic knowledge source, in file order. Ids grow with random gaps (like
 * Wikipedia page ids); titles are unique, though a few differ only in case (as "Red Dwarf" and
 * "Red dwarf" do); anchors point at other pages of the same file.
 */
export function* syntheticPages(options: SyntheticOptions): Generator<KiltPage> {
  const rand = seededRandom(options.seed ?? 1);
  const scale = options.scale ?? 1;
  const anchorRate = options.anchorRate ?? 0.03;
  const vocab = new Vocabulary(rand);
  const titles = new Set<string>();
  // Targets of anchors: a ring of recent pages (id, title), so links name real pages of the file.
  const ring: { id: string; title: string; href: string; cp: number }[] = [];
  let id = 10 + Math.floor(rand() * 1000);

  const phrase = (n: number): string => {
    const parts: string[] = [];
    for (let i = 0; i < n; i++) parts.push(vocab.word(rand));
    return parts.join(" ");
  };

  for (let p = 0; p < options.pages; p++) {
    id += 1 + Math.floor(rand() * rand() * 12);
    const wid = String(id);
    let title = "";
    for (let attempt = 0; ; attempt++) {
      const n = 1 + Math.floor(rand() * rand() * 4);
      const words: string[] = [];
      for (let i = 0; i < n; i++) {
        const w = vocab.word(rand);
        words.push(i === 0 || rand() < 0.45 ? capitalize(w) : w);
      }
      title = words.join(" ");
      if (attempt > 2) title += ` (${SECTIONS[Math.floor(rand() * SECTIONS.length)].toLowerCase()} ${attempt})`;
      if (!titles.has(title)) break;
    }
    titles.add(title);

    const text: string[] = [`${title}\n`];
    const anchors: Anchor[] = [];
    const paragraphs = logNormal(rand, 5 * scale, 1.0, 1, 4000);
    for (let k = 0; k < paragraphs; k++) {
      const kind = rand();
      if (k > 1 && kind < 0.12) {
        const s = SECTIONS[Math.floor(rand() * SECTIONS.length)];
        text.push(rand() < 0.2 ? `Section::::${s}:${capitalize(phrase(2))}.\n` : `Section::::${s}.\n`);
        continue;
      }
      const bullet = k > 1 && kind < 0.27;
      const parts: string[] = [];
      let cp = bullet ? 12 : 0; // "BULLET::::- " is 12 code points
      const sentences = bullet ? 1 : logNormal(rand, 3, 0.6, 1, 40);
      for (let s = 0; s < sentences; s++) {
        const words = logNormal(rand, bullet ? 8 : 20, 0.45, 2, 90);
        for (let w = 0; w < words; w++) {
          if (parts.length > 0) cp++; // the space before this word
          // A word starts a link to another page of the file with probability anchorRate.
          if (ring.length > 0 && rand() < anchorRate) {
            const target = ring[Math.floor(rand() * ring.length)];
            anchors.push({
              paragraph_id: text.length,
              start: cp,
              end: cp + target.cp,
              text: target.title,
              href: target.href,
              wikipedia_title: target.title,
              wikipedia_id: target.id,
            });
            parts.push(w === words - 1 ? `${target.title}.` : target.title);
            cp += target.cp + (w === words - 1 ? 1 : 0);
            continue;
          }
          const i = vocab.index(rand);
          const word = w === 0 ? capitalize(vocab.words[i]) : vocab.words[i];
          parts.push(w === words - 1 ? `${word}.` : word);
          cp += vocab.cps[i] + (w === words - 1 ? 1 : 0);
        }
      }
      const body = parts.join(" ");
      text.push(bullet ? `BULLET::::- ${body}\n` : `${body}\n`);
    }

    const categories: string[] = [];
    const nc = 1 + Math.floor(rand() * 6);
    for (let c = 0; c < nc; c++) categories.push(capitalize(phrase(1 + Math.floor(rand() * 3))));
    const revid = 900_000_000 + Math.floor(rand() * 10_000_000);
    const page: KiltPage = {
      _id: wid,
      wikipedia_id: wid,
      wikipedia_title: title,
      text,
      anchors,
      categories: categories.join(","),
      history: {
        revid,
        timestamp: `2019-0${1 + Math.floor(rand() * 7)}-${String(1 + Math.floor(rand() * 28)).padStart(2, "0")}T12:00:00Z`,
        parentid: revid - 1 - Math.floor(rand() * 100_000),
        pre_dump: true,
        pageid: id,
        url: `https://en.wikipedia.org/w/index.php?title=${encodeURIComponent(title.replace(/ /g, "_"))}&oldid=${revid}`,
      },
    };
    if (rand() < 0.7) {
      page.wikidata_info = {
        description: phrase(3 + Math.floor(rand() * 6)),
        wikidata_id: `Q${1000 + id}`,
        wikidata_label: title,
        wikipedia_title: title,
        aliases: { alias: [phrase(1), phrase(2)] },
      };
    }
    yield page;

    const target = { id: wid, title, href: encodeURIComponent(title), cp: cpLength(title) };
    if (ring.length < 4096) ring.push(target);
    else ring[Math.floor(rand() * ring.length)] = target;
  }
}

/** Writes a synthetic knowledge source as JSONL (gzip when `path` ends in `.gz`); returns the number of pages. */
export async function writeSyntheticKnowledgeSource(path: string, options: SyntheticOptions): Promise<{ pages: number }> {
  const w = new JsonlWriter(path);
  try {
    for (const page of syntheticPages(options)) await w.write(page);
  } catch (e) {
    await w.abort();
    throw e;
  }
  await w.close();
  return { pages: w.count };
}
