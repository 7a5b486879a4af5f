// The optional native kernels (native/kernels.c, built at install by scripts/build-native.mjs with
// node-gyp): the fast scan of 4-bit codes and RaBitQ's whole first pass, with AVX-512BW, AVX2 and portable C
// paths picked at run time. Each computes exactly what the WebAssembly/TypeScript path computes (tested
// position for position), only faster; where the addon is not built, cannot load, or TARTAN_NATIVE=0 is
// set, `nativeKernels()` is null and the portable WebAssembly kernels run. docs/decisions.md has the
// measurement that justifies it.

import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The addon's functions (native/kernels.c documents each argument). */
export interface NativeKernels {
  /** The fast-scan sums of `blocks` blocks from byte `at` of `codes` (as the WebAssembly `scan`). */
  scan(codes: Uint8Array, at: number, blocks: number, pairs: number, lut: Uint8Array, out: Uint16Array): void;
  /** RaBitQ's first pass over the probed lists; writes the kept positions to `outPos`, returns how many. */
  rabitq(
    codes: Uint8Array,
    factors: Float32Array,
    starts: Float64Array,
    offsets: Float64Array,
    lists: Int32Array,
    bases: Float64Array,
    table: Uint8Array,
    params: Float64Array,
    outPos: Float64Array,
  ): number;
  /** The int32 sums Σ_d w[d] · row[d] of the rows `at[from … from + n − 1]` (row r at byte r × dim), as the WebAssembly `dotAt`. */
  int8At(rows: Int8Array, at: Float64Array, from: number, n: number, dim: number, w: Int16Array, out: Int32Array): void;
  /** Asks Linux for transparent huge pages under the view (before it is filled); whether the advice was taken. */
  adviseHugePages(view: Uint8Array): boolean;
  /** The path this machine runs: "avx512", "avx2" or "c". */
  path(): string;
  /** Runs `name` from now on where the CPU has it (tests compare every path); returns the path in use. */
  usePath(name: "avx512" | "avx2" | "c"): string;
}

/** Where the addon is built: native/build/Release under the package root (found from this file, in src/ or dist/src/). */
function addonPath(): string | null {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const p = join(dir, "native", "build", "Release", "tartan_kernels.node");
    if (existsSync(join(dir, "native", "kernels.c"))) return existsSync(p) ? p : null;
    dir = dirname(dir);
  }
  return null;
}

let loaded: NativeKernels | null | undefined;
let why = "";

/** The native kernels, or null where they are not built or TARTAN_NATIVE=0 (then the WebAssembly kernels run). */
export function nativeKernels(): NativeKernels | null {
  if (loaded !== undefined) return loaded;
  loaded = null;
  if (process.env.TARTAN_NATIVE === "0") {
    why = "TARTAN_NATIVE=0";
    return null;
  }
  const p = addonPath();
  if (p === null) {
    why = "not built (npm install builds it: scripts/build-native.mjs)";
    return null;
  }
  try {
    loaded = createRequire(import.meta.url)(p) as NativeKernels;
  } catch (e) {
    why = `did not load: ${(e as Error).message}`;
  }
  return loaded;
}

/** Which dense kernels run in this process, for benchmarks and `tartan index info`: e.g. "native avx512" or "wasm (TARTAN_NATIVE=0)". */
export function denseKernelsInUse(): string {
  const n = nativeKernels();
  return n !== null ? `native ${n.path()}` : `wasm (${why})`;
}

/** Turns the native kernels off (false) or back on (true) in this process, for tests that compare the two paths. */
export function useNativeKernels(on: boolean): void {
  loaded = undefined;
  if (!on) {
    loaded = null;
    why = "turned off";
  }
}

/** Asks for huge pages under a kernel memory about to be filled with codes or rows, where the native kernels load (a no-op elsewhere, and with TARTAN_HUGE_PAGES=0). */
export function adviseHugePages(buffer: ArrayBufferLike): void {
  if (process.env.TARTAN_HUGE_PAGES === "0") return;
  nativeKernels()?.adviseHugePages(new Uint8Array(buffer));
}
