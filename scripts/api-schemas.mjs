// Generates src/server/api-schemas.ts, the JSON Schemas (draft 2020-12, as OpenAPI 3.1 uses them) of
// the server's answers, from the TypeScript types the routes build them with (src/server/api-types.ts,
// whose answers each route builds `satisfies` one of them): every type api-types.ts exports, and every
// named type those refer to, becomes one schema; a named type inside another is a `$ref`. So the
// OpenAPI document (src/server/openapi.ts) has one source for the API's shape, the types.
// `npm run api-schemas` rewrites the file; test/server/openapi-live.test.ts fails when it is stale
// (`node scripts/api-schemas.mjs --check`).
//
// The mapping: string, number, boolean and null as themselves; a union of string literals as an enum;
// optional properties (or ones that may be undefined, which JSON leaves out) as not required; an object
// without an index signature allows no other properties; `unknown` is any value; JSDoc comments become
// descriptions.

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const SOURCE = join(ROOT, "src", "server", "api-types.ts");
export const TARGET = join(ROOT, "src", "server", "api-schemas.ts");

/** The schemas of the types src/server/api-types.ts exports and of the named types they use, by name. */
export function apiSchemas() {
  const config = ts.readConfigFile(join(ROOT, "tsconfig.json"), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  const program = ts.createProgram([SOURCE], { ...parsed.options, noEmit: true });
  const checker = program.getTypeChecker();
  const file = program.getSourceFile(SOURCE);
  if (!file) throw new Error(`${SOURCE}: not found`);
  const diagnostics = ts.getPreEmitDiagnostics(program, file);
  if (diagnostics.length > 0) throw new Error(ts.formatDiagnostics(diagnostics, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => ROOT, getNewLine: () => "\n" }));

  /** Named types seen: name → type, and the type → name. */
  const byName = new Map();
  const nameOf = new Map();
  const inLib = (decl) => program.isSourceFileDefaultLibrary(decl.getSourceFile()) || decl.getSourceFile().fileName.includes("/node_modules/");

  /** The name a type is known by in schemas: a non-generic interface or type alias declared in the project. */
  function named(type) {
    if (nameOf.has(type)) return nameOf.get(type);
    const sym = type.aliasSymbol && !type.aliasTypeArguments ? type.aliasSymbol : type.symbol && type.symbol.flags & ts.SymbolFlags.Interface ? type.symbol : null;
    if (!sym || !sym.declarations?.length || sym.declarations.some(inLib)) return null;
    if (type.aliasSymbol === undefined && (checker.isArrayType(type) || checker.isTupleType(type))) return null;
    return register(sym.getName(), type);
  }

  function register(name, type) {
    const prior = byName.get(name);
    if (prior !== undefined && prior !== type) throw new Error(`two types are called ${name}: rename one (schemas are named by type)`);
    byName.set(name, type);
    nameOf.set(type, name);
    return name;
  }

  const describe = (sym) => ts.displayPartsToString(sym.getDocumentationComment(checker)).trim();

  /** The JSON Schema of `type`; a named type is a reference unless `inline`. */
  function schema(type, inline = false) {
    if (!inline) {
      const name = named(type);
      if (name) return { $ref: `#/components/schemas/${name}` };
    }
    const f = type.flags;
    if (f & (ts.TypeFlags.Unknown | ts.TypeFlags.Any)) return {};
    if (f & ts.TypeFlags.String) return { type: "string" };
    if (f & ts.TypeFlags.Number) return { type: "number" };
    if (f & ts.TypeFlags.Boolean) return { type: "boolean" };
    if (f & ts.TypeFlags.Null) return { type: "null" };
    if (f & ts.TypeFlags.StringLiteral) return { const: type.value };
    if (f & ts.TypeFlags.NumberLiteral) return { const: type.value };
    if (f & ts.TypeFlags.BooleanLiteral) return { const: checker.typeToString(type) === "true" };
    if (f & ts.TypeFlags.Union) return union(type.types);
    if (checker.isTupleType(type)) {
      const items = checker.getTypeArguments(type).map((t) => schema(t));
      return { type: "array", prefixItems: items, minItems: items.length, maxItems: items.length };
    }
    if (checker.isArrayType(type)) return { type: "array", items: schema(checker.getTypeArguments(type)[0]) };
    if (f & (ts.TypeFlags.Object | ts.TypeFlags.Intersection)) return object(type);
    throw new Error(`no JSON Schema for the type ${checker.typeToString(type)}`);
  }

  function union(members) {
    const kept = members.filter((t) => !(t.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Void)));
    // true | false is boolean
    const bools = kept.filter((t) => t.flags & ts.TypeFlags.BooleanLiteral);
    const rest = kept.filter((t) => !(t.flags & ts.TypeFlags.BooleanLiteral));
    const parts = [...(bools.length === 2 ? [{ type: "boolean" }] : bools.map((t) => schema(t))), ...rest.map((t) => schema(t))];
    if (parts.length === 1) return parts[0];
    // String literals together as one enum
    if (parts.every((p) => "const" in p && typeof p.const === "string")) return { type: "string", enum: parts.map((p) => p.const) };
    // Primitives (and null) as one list of types
    if (parts.every((p) => Object.keys(p).length === 1 && typeof p.type === "string")) return { type: parts.map((p) => p.type) };
    // A schema or null
    const nonNull = parts.filter((p) => p.type !== "null");
    if (nonNull.length === 1 && parts.length === 2) return { anyOf: [nonNull[0], { type: "null" }] };
    return { anyOf: parts };
  }

  function object(type) {
    if (checker.getSignaturesOfType(type, ts.SignatureKind.Call).length > 0) throw new Error(`a function type has no JSON form: ${checker.typeToString(type)}`);
    const out = { type: "object" };
    const properties = {};
    const required = [];
    for (const prop of checker.getPropertiesOfType(type)) {
      const t = checker.getTypeOfSymbol(prop);
      const s = { ...schema(t) };
      const text = describe(prop);
      properties[prop.getName()] = text && !s.$ref ? { description: text, ...s } : s;
      const mayBeUndefined = t.flags & ts.TypeFlags.Undefined || (t.flags & ts.TypeFlags.Union && t.types.some((m) => m.flags & ts.TypeFlags.Undefined));
      if (!(prop.flags & ts.SymbolFlags.Optional) && !mayBeUndefined) required.push(prop.getName());
    }
    if (Object.keys(properties).length > 0) out.properties = properties;
    if (required.length > 0) out.required = required;
    const index = checker.getIndexInfosOfType(type).find((i) => i.keyType.flags & ts.TypeFlags.String);
    out.additionalProperties = index ? schema(index.type) : false;
    return out;
  }

  // Every type the module exports (values such as FILTERS are left out), then the named types they use.
  const moduleSymbol = checker.getSymbolAtLocation(file);
  for (let sym of checker.getExportsOfModule(moduleSymbol)) {
    const name = sym.getName();
    if (sym.flags & ts.SymbolFlags.Alias) sym = checker.getAliasedSymbol(sym);
    if (!(sym.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias))) continue;
    register(name, checker.getDeclaredTypeOfSymbol(sym));
  }
  const out = {};
  const done = new Set();
  for (let more = true; more; ) {
    more = false;
    for (const [name, type] of [...byName]) {
      if (done.has(name)) continue;
      done.add(name);
      more = true;
      const s = schema(type, true);
      const sym = type.aliasSymbol ?? type.symbol;
      const text = sym ? describe(sym) : "";
      out[name] = text ? { description: text, ...s } : s;
    }
  }
  return Object.fromEntries(Object.keys(out).sort().map((k) => [k, out[k]]));
}

/** The text of src/server/api-schemas.ts for `schemas`: one schema per block, each property on one line. */
export function schemasSource(schemas) {
  const lines = [
    "// GENERATED by scripts/api-schemas.mjs (npm run api-schemas) from the types of src/server/api-types.ts: do",
    "// not edit. The JSON Schemas (draft 2020-12) of the server's answers, by type name, for the OpenAPI",
    "// document's components (src/server/openapi.ts); test/server/openapi-live.test.ts fails when this file is",
    "// stale and validates live answers against them.",
    "",
    "/** JSON Schemas of the API's answer types, by type name (references are `#/components/schemas/NAME`). */",
    "export const API_SCHEMAS: Record<string, Record<string, unknown>> = {",
  ];
  for (const [name, s] of Object.entries(schemas)) {
    const { properties, ...rest } = s;
    if (!properties) {
      lines.push(`  ${name}: ${JSON.stringify(s)},`);
      continue;
    }
    lines.push(`  ${name}: {`);
    for (const [k, v] of Object.entries(rest)) if (k !== "required" && k !== "additionalProperties") lines.push(`    ${JSON.stringify(k)}: ${JSON.stringify(v)},`);
    lines.push('    "properties": {');
    for (const [k, v] of Object.entries(properties)) lines.push(`      ${JSON.stringify(k)}: ${JSON.stringify(v)},`);
    lines.push("    },");
    if (rest.required) lines.push(`    "required": ${JSON.stringify(rest.required)},`);
    lines.push(`    "additionalProperties": ${JSON.stringify(rest.additionalProperties)},`);
    lines.push("  },");
  }
  lines.push("};", "");
  return lines.join("\n");
}

// `node scripts/api-schemas.mjs` writes the file; with --check it only says whether the file is current
// (exit 1 when stale).
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const text = schemasSource(apiSchemas());
  if (process.argv.includes("--check")) {
    const current = existsSync(TARGET) ? readFileSync(TARGET, "utf8") : "";
    if (current !== text) {
      process.stderr.write(`${TARGET} is stale: the types of src/server/api-types.ts changed; run npm run api-schemas\n`);
      process.exit(1);
    }
    process.stdout.write(`${TARGET} is current\n`);
  } else {
    writeFileSync(TARGET, text);
    process.stdout.write(`wrote ${TARGET}\n`);
  }
}
