// The registry every seam uses (src/util/registry.ts): lookup by name, errors that name the known
// descriptors, refused duplicates and versions.

import { describe, expect, it } from "vitest";
import { Registry, type Descriptor } from "../../src/util/registry.js";

interface Thing extends Descriptor {
  make(): string;
}

const a: Thing = { name: "a", version: 1, make: () => "A" };
const b: Thing = { name: "b", version: 3, make: () => "B" };

describe("Registry", () => {
  it("finds descriptors by name, in registration order", () => {
    const r = new Registry<Thing>("thing", [a, b]);
    expect(r.names()).toEqual(["a", "b"]);
    expect(r.get("b").make()).toBe("B");
    expect(r.find("c")).toBeUndefined();
    expect(r.has("a")).toBe(true);
    expect(r.all().map((d) => d.version)).toEqual([1, 3]);
  });

  it("names the place and the known names for an unknown one", () => {
    const r = new Registry<Thing>("thing", [a, b]);
    expect(() => r.get("c", "--thing")).toThrow('--thing: unknown thing "c" (known: a, b)');
    expect(() => r.get("c")).toThrow('unknown thing "c" (known: a, b)');
  });

  it("refuses a name registered twice and a version that is not a positive integer", () => {
    const r = new Registry<Thing>("thing", [a]);
    expect(() => r.register({ ...a })).toThrow('thing "a" is registered twice');
    expect(() => r.register({ ...b, version: 0 })).toThrow('thing "b": version must be a positive integer, got 0');
    expect(r.names()).toEqual(["a"]);
  });
});
