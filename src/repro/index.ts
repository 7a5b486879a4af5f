// Public API of the reproducibility matrices (`tartan/repro`): `reproSquad` and `reproKilt` (cells of
// retrieve → eval compared with published reference figures, resumable cell by cell), the matrix
// machinery for other cells, the reference figures with their sources, and the Markdown, HTML and
// text renderings.
export { reproSquad, squadCells, squadPipelineCell, DEFAULT_SQUAD, type ReproSquadOptions } from "./squad.js";
export { reproKilt, kiltCells, devFile, KILT_SYSTEMS, type ReproKiltOptions } from "./kilt.js";
export { runMatrix, checkFigure, cellChecksum, cellCommands, inputChecksum, indexDir, tally, type CellSpec, type CellResult, type StoredCell, type FigureSpec, type FigureResult, type IndexSpec, type MatrixOptions, type MatrixResult } from "./matrix.js";
export { SOURCES, KILT_COLUMNS, PYSERINI_RPREC, PYSERINI_RECALL100, KILT_PAPER_TFIDF_TEST, SQUAD_REFERENCES, QUICKSTART_REFERENCES, DPR_CONTEXT, type Reference, type Source, type KiltSystem, type PyseriniSystem } from "./references.js";
export { matrixMarkdown, matrixHtml, textTable, figureRows, writeReports, fmtFigure, fmtDifference } from "./render.js";
