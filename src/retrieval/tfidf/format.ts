// The TF-IDF index's format version, apart from its build and search modules, so the kind's descriptor
// and the artefact checks read it without loading them.

/** The format version of TF-IDF index directories this tartan reads and writes. */
export const TFIDF_FORMAT_VERSION = 1;
