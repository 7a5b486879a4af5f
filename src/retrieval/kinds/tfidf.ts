// The TF-IDF kind (DrQA's hashed unigram and bigram TF-IDF, ../tfidf/): page level by default, built
// from units, opened with the manifest the registry read.

import { formatCount as fmt } from "../../util/progress.js";
import type { IndexKind } from "./kind.js";
import { TFIDF_FORMAT_VERSION } from "../tfidf/format.js";

export const tfidfKind: IndexKind = {
  name: "tfidf",
  version: TFIDF_FORMAT_VERSION,
  defaultUnit: "page",
  resumes: false,
  stripMarkers: true,
  async build(b) {
    const { buildTfidfIndex } = await import("../tfidf/build.js");
    const report = b.onProgress ?? (() => {});
    try {
      const s = await buildTfidfIndex(b.units(), b.dir, { ...b.params, unit: b.unit, source: b.source }, (n) => report({ label: "index tfidf", status: () => `${fmt(n)} ${b.unit} units` }));
      return { units: s.units, detail: `${fmt(s.buckets)} buckets used, ${fmt(s.postings)} postings` };
    } finally {
      report({ label: "index tfidf", status: () => "", done: true });
    }
  },
  async open(dir, manifest) {
    const { TfidfRetriever } = await import("../tfidf/search.js");
    return new TfidfRetriever(dir, manifest);
  },
};
