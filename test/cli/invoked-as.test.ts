// The commands tartan prints for the user to run next (the quick start's `serve` line) repeat how tartan
// was run: `tartan` when it was run as the linked or installed command, else `node PATH` as it was given.
import { describe, expect, it } from "vitest";
import { invokedAs } from "../../src/cli/commands/run.js";

describe("invokedAs", () => {
  it("names tartan when run as tartan, and the script path otherwise", () => {
    expect(invokedAs("/usr/local/bin/tartan", "/home/u")).toBe("tartan");
    expect(invokedAs("/work/main/node_modules/.bin/tartan", "/work/main")).toBe("tartan");
    expect(invokedAs("/work/main/dist/src/cli/main.js", "/work/main")).toBe("node dist/src/cli/main.js");
    expect(invokedAs("/work/main/dist/src/cli/main.js", "/elsewhere")).toBe("node /work/main/dist/src/cli/main.js");
  });
});
