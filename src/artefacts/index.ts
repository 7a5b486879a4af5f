// Public API of prebuilt artefacts (`tartan/artefacts`): an index or a knowledge-source store packed
// into one verified archive (`packArtefact`), pulled back from a file or URL into place
// (`pullArtefact`), the catalogue format labs publish them with, and the small tar reader and writer.
export { packArtefact, type PackOptions, type PackResult } from "./pack.js";
export { pullArtefact, archiveCachePath, archiveRecordPath, cleanStalePulls, type PullOptions, type PullResult } from "./pull.js";
export { readCatalogue, loadCatalogue, checkCatalogue, findArtefact, addToCatalogue, resolveUrl, CATALOGUE_FORMAT, CATALOGUE_VERSION, type ArtefactCatalogue, type CatalogueEntry } from "./catalogue.js";
export { ARTEFACT_MANIFEST, ARTEFACT_FORMAT_VERSION, checkArtefactManifest, checkEntryPath, type ArtefactManifest, type ArtefactFile } from "./manifest.js";
export { TarReader, tarHeader, tarPadding, parseTarHeader, TAR_END, BLOCK, type TarEntry } from "./tar.js";
