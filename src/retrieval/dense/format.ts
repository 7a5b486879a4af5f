// The dense index's format version, apart from the modules that build and search it (they load native
// code), so the kind's descriptor and the artefact checks can read it without loading them.

/** The format version of dense index directories (flat vectors and IVF alike) this tartan reads and writes. */
export const DENSE_FORMAT_VERSION = 1;
