// The units an index retrieves, at their usual import path: the folder ./units/ holds them (unit.ts: what a
// unit is; store.ts: the inline layout and the opener of either layout; table.ts: the store-backed layout).

export { checkUnitNumber, pageUnit, unitProvenance, type Unit, type UnitInfo, type UnitRef, type UnitSource } from "./units/unit.js";
export { OFFSETS_FILE, UNITS_FILE, UnitStore, UnitWriter } from "./units/store.js";
