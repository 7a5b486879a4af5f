// Public API of the datasets (`tartan/datasets`): the catalogue of KILT, Mintaka and WikiReading files,
// and the readers and KILT converters of Mintaka and WikiReading.
export * from "./catalogue.js";
export * from "./mintaka.js";
export * from "./wikireading.js";
