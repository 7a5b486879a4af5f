# The FAISS anchor of bench:dense-scale: FAISS 1.7.3 from Debian (python3-faiss, a generic build
# without AVX2) on the same vectors and queries (.npy written by the export stage) at the same memory per
# vector as tartan's binary index (96 bytes at 768 dimensions):
#   - IVF-PQ: the same number of coarse lists as tartan's index, PQ with dim/8 sub-quantizers of 8 bits;
#   - binary flat: sign bits of (x - mean), Hamming distance over every code (IndexBinaryFlat);
#   - IVF-PQ fast scan (the anchor of tartan's pq4): the same lists, PQ with dim/4 sub-quantizers of 4 bits
#     (IVFx,PQmx4fs, 96 bytes at 768 dimensions), FAISS's SIMD look-up kernel, here without AVX2.
# FAISS_CONFIGS (comma-separated: pq, binary, pq4fs; default all three) picks which run.
# Trained on 65,536 sample rows (FAISS_SAMPLE) with both cores (with OpenBLAS when bench/dense-scale.mjs
# finds Debian's libopenblas0-pthread: the reference BLAS takes over an hour for thousands of lists); searched on one thread, queries one at a time as tartan's search stage does; recall@10
# and recall@100 against the exact top-100 of truth.json. Prints one line "RESULT {json}".
# Usage: python3 bench/dense-faiss.py DIR QUERIES GRID_JSON [LISTS]

import json
import os
import resource
import sys
import time

import numpy as np
import faiss

d = sys.argv[1]
nq = int(sys.argv[2])
grid = json.loads(sys.argv[3])
faiss.omp_set_num_threads(2)  # training and adding on both cores; searches on one (below)
xb = np.load(os.path.join(d, "vectors.npy"), mmap_mode="r")
xq = np.ascontiguousarray(np.load(os.path.join(d, "queries.npy"))[:nq])
truth = json.load(open(os.path.join(d, "truth.json")))
ids = np.array(truth["ids"], dtype=np.int64).reshape(truth["queries"], 100)[:nq]
n, dim = xb.shape
k = int(round((4 * n ** 0.5) ** 0.5))
lists = int(sys.argv[4]) if len(sys.argv) > 4 else k * k
sample = xb[np.linspace(0, n - 1, min(n, int(os.environ.get("FAISS_SAMPLE", "65536")))).astype(np.int64)]
sample = np.ascontiguousarray(sample, dtype=np.float32)


def recall(found, kk):
    r = 0.0
    for i in range(nq):
        t = set(ids[i, :kk].tolist())
        r += len(t.intersection(found[i, :kk].tolist())) / kk
    return r / nq


def timed_search(index, queries, kk, nprobe=None):
    faiss.omp_set_num_threads(1)
    if nprobe is not None:
        faiss.extract_index_ivf(index).nprobe = nprobe
    lat = []
    out = np.zeros((nq, kk), dtype=np.int64)
    t0 = time.perf_counter()
    c0 = time.process_time()
    for i in range(nq):
        s = time.perf_counter()
        _, I = index.search(queries[i : i + 1], kk)
        lat.append((time.perf_counter() - s) * 1000)
        out[i] = I[0]
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    lat.sort()
    return out, {"qps": nq / wall, "qpsPerCpu": nq / cpu, "p50ms": lat[len(lat) // 2], "p99ms": lat[int(len(lat) * 0.99)]}


wanted = set(os.environ.get("FAISS_CONFIGS", "pq,binary,pq4fs").split(","))
blas = "OpenBLAS (Debian libopenblas0-pthread)" if "openblas" in os.environ.get("LD_LIBRARY_PATH", "") else "the system's libblas.so.3"
results = {"stage": "faiss", "faiss": faiss.__version__, "build": "Debian python3-faiss (generic, no AVX2)", "blas": blas, "lists": lists, "configs": []}

def ivf(factory, bytes_per_vector):
    """Trains and fills an IVF index of the FAISS factory string, then searches it at each nprobe of the grid."""
    t0, c0 = time.perf_counter(), time.process_time()
    faiss.omp_set_num_threads(2)
    index = faiss.index_factory(dim, factory, faiss.METRIC_INNER_PRODUCT)
    index.train(sample)
    for s in range(0, n, 65536):
        index.add(np.ascontiguousarray(xb[s : s + 65536], dtype=np.float32))
    build = {"wallS": time.perf_counter() - t0, "cpuS": time.process_time() - c0}
    rows = []
    for nprobe, _ in grid:
        found, t = timed_search(index, xq, 100, nprobe)
        rows.append({"nprobe": nprobe, "recall10": recall(found, 10), "recall100": recall(found, 100), **t})
        print(f"faiss {factory} nprobe {nprobe}: recall@100 {rows[-1]['recall100']:.4f}, {t['qps']:.1f} q/s", file=sys.stderr)
    results["configs"].append({"name": factory, "bytesPerVector": bytes_per_vector, **build, "rows": rows})


# IVF-PQ, 96 bytes a vector at 768 dimensions (and 8 bytes of id)
if "pq" in wanted:
    ivf(f"IVF{lists},PQ{dim // 8}", dim // 8 + 8)

# IVF-PQ with 4-bit codes and FAISS's fast-scan kernel, the same bytes
if "pq4fs" in wanted:
    ivf(f"IVF{lists},PQ{dim // 4}x4fs", dim // 8 + 8)

# binary flat over sign bits of (x - mean)
if "binary" in wanted:
    mean = sample.mean(axis=0)
    faiss.omp_set_num_threads(2)
    t0, c0 = time.perf_counter(), time.process_time()
    bflat = faiss.IndexBinaryFlat(dim)
    for s in range(0, n, 65536):
        part = np.asarray(xb[s : s + 65536], dtype=np.float32) - mean
        bflat.add(np.packbits(part > 0, axis=1, bitorder="little"))
    build = {"wallS": time.perf_counter() - t0, "cpuS": time.process_time() - c0}
    qb = np.packbits((xq - mean) > 0, axis=1, bitorder="little")
    found, t = timed_search(bflat, qb, 100)
    results["configs"].append({"name": "BinaryFlat", "bytesPerVector": dim // 8, **build, "rows": [{"recall10": recall(found, 10), "recall100": recall(found, 100), **t}]})
    print(f"faiss BinaryFlat: recall@100 {recall(found, 100):.4f}, {t['qps']:.1f} q/s", file=sys.stderr)
results["peakRssMiB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print("RESULT " + json.dumps(results))
