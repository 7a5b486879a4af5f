// Which files the MCP tools may read (`evaluate`'s predictions and gold, a dataset's gold file): only
// regular files inside the directories the server was given (`tartan mcp --files DIR`, and --data),
// after resolving links; never `-` (standard input is the MCP connection), nor a /dev, /proc or /sys
// path (/dev/stdin, /proc/self/fd/0, … alias the transport). Each refusal names the argument and why.

import { lstatSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, resolve, sep } from "node:path";

const SYSTEM = ["/dev", "/proc", "/sys"];

function inside(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep);
}

const isSystem = (path: string) => SYSTEM.some((d) => inside(path, d));

/**
 * The real path of `abs`, following its links one at a time (a link to /dev/stdin is seen as that,
 * not as the pipe it resolves to); throws `refused` naming a /dev, /proc or /sys step, ENOENT when gone.
 */
function follow(abs: string, refused: (step: string) => Error): string {
  let p = abs;
  for (let hops = 0; hops < 40; hops++) {
    const real = resolve(realpathSync(dirname(p)), basename(p));
    if (isSystem(real)) throw refused(real);
    if (!lstatSync(real).isSymbolicLink()) return real;
    p = resolve(dirname(real), readlinkSync(real));
    if (isSystem(p)) throw refused(p);
  }
  throw Object.assign(new Error(`${abs}: too many levels of symbolic links`), { code: "ELOOP" });
}

/** The directories tools may read files from, and the check every path argument goes through. */
export class ToolFiles {
  /** Each directory as given (absolute) and as its real path. */
  private readonly dirs: { given: string; real: string }[];

  /** `dirs` must exist and be directories. */
  constructor(dirs: readonly string[]) {
    this.dirs = dirs.map((d) => {
      const given = resolve(d);
      let real: string;
      try {
        real = realpathSync(given);
      } catch {
        throw new Error(`${d}: no such directory`);
      }
      if (!statSync(real).isDirectory()) throw new Error(`${d}: not a directory`);
      if (isSystem(real)) throw new Error(`${d}: a /dev, /proc or /sys directory cannot be opened to the tools`);
      return { given, real };
    });
  }

  /** The directories (real paths). */
  get roots(): string[] {
    return this.dirs.map((d) => d.real);
  }

  /** The real path of the regular file `path` names for the tool argument `arg`; an error saying why when it is refused. */
  check(arg: string, path: string): string {
    const refuse = (why: string) => new Error(`${arg}: ${JSON.stringify(path.slice(0, 500))} refused: ${why}`);
    if (path.trim() === "-") throw refuse("\"-\" is standard input, which is the MCP connection; give a file's path");
    const abs = resolve(path);
    if (isSystem(abs)) throw refuse("a /dev, /proc or /sys path (it may be the server's own standard input or output)");
    if (this.dirs.length === 0) throw refuse("no directory is open to the tools (start tartan mcp with --files DIR, or --data DIR)");
    const listed = () => this.dirs.map((d) => d.given).join(", ");
    if (!this.dirs.some((d) => inside(abs, d.given) || inside(abs, d.real))) throw refuse(`outside the directories open to the tools (${listed()})`);
    let real: string;
    try {
      real = follow(abs, (step) => refuse(`it resolves to ${step}, a /dev, /proc or /sys path`));
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR") throw new Error(`${path}: no such file or directory`);
      throw code ? refuse((e as Error).message) : e;
    }
    if (!this.dirs.some((d) => inside(real, d.real))) throw refuse(`it resolves to ${real}, outside the directories open to the tools (${listed()})`);
    if (!statSync(real).isFile()) throw refuse("not a regular file");
    return real;
  }
}
