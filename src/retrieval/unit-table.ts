// The store-backed unit layout, at its usual import path: ./units/table.ts.

export * from "./units/table.js";
