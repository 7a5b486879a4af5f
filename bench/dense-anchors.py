# The FAISS anchor of bench:dense-anchors (bench/dense-anchors.mjs runs it, one child process per step so
# that each peak RSS is its own): FAISS from Debian (python3-faiss 1.7.3, a generic build without AVX2) with
# refinement, at the candidate depths tartan rescores.
#   build  one coarse quantizer (spherical k-means on FAISS_SAMPLE rows, 65,536 by default; both cores) shared
#          by IVF-PQ (dim/8 sub-quantizers of 8 bits) and IVF-PQ 4-bit fast scan (dim/4 sub-quantizers of
#          4 bits, FAISS's IVFx,PQmx4fs), and an SQ8 copy of the vectors; each written to WORK; the flat
#          refinement reads the vectors themselves (vectors.npy, its bytes on disk), so nothing is copied.
#   search BASE REFINE: IndexRefine(base, refine) with k_factor = candidates / 100, one thread
#          (omp_set_num_threads(1)), one query at a time, over every (nprobe, k_factor) of the grid;
#          recall@10 and recall@100 against the exact top-100 of truth.json.
# FAISS_SAMPLE (rows for the coarse k-means and SQ8), FAISS_PQ_SAMPLE (rows for the PQ codebooks, default
# FAISS_SAMPLE) and FAISS_NITER (k-means iterations, default 25, FAISS's own) trade build time for quality.
# Prints one line "RESULT {json}" on stdout.
# Usage: python3 bench/dense-anchors.py build DIR WORK LISTS
#        python3 bench/dense-anchors.py search DIR WORK BASE REFINE QUERIES GRID_JSON

import json
import os
import resource
import sys
import time

import numpy as np
import faiss

BUILD = "Debian python3-faiss (generic build, no AVX2)"


def peak_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def clock():
    return time.perf_counter(), time.process_time()


def since(t):
    return {"wallS": time.perf_counter() - t[0], "cpuS": time.process_time() - t[1]}


def build(d, work, lists):
    faiss.omp_set_num_threads(2)
    os.makedirs(work, exist_ok=True)
    xb = np.load(os.path.join(d, "vectors.npy"), mmap_mode="r")
    n, dim = xb.shape
    take = min(n, int(os.environ.get("FAISS_SAMPLE", "65536")))
    sample = np.ascontiguousarray(xb[np.linspace(0, n - 1, take).astype(np.int64)], dtype=np.float32)
    niter = int(os.environ.get("FAISS_NITER", "25"))
    pq_take = min(take, int(os.environ.get("FAISS_PQ_SAMPLE", str(take))))
    pq_sample = sample[np.linspace(0, take - 1, pq_take).astype(np.int64)]
    out = {"faiss": faiss.__version__, "build": BUILD, "n": n, "dim": dim, "lists": lists, "sample": take, "pqSample": pq_take, "niter": niter, "threads": 2, "parts": {}}

    t = clock()
    km = faiss.Kmeans(dim, lists, niter=niter, spherical=True, seed=1234)
    km.train(sample)
    out["parts"]["coarse"] = since(t)

    def quantizer():
        q = faiss.IndexFlatIP(dim)
        q.add(km.centroids)
        return q

    def fill(index, name):
        for s in range(0, n, 65536):
            index.add(np.ascontiguousarray(xb[s : s + 65536], dtype=np.float32))
        path = os.path.join(work, name)
        faiss.write_index(index, path + ".tmp")
        os.replace(path + ".tmp", path)
        return os.path.getsize(path)

    # the quantizers hold the centroids already, so train() skips the coarse k-means and trains PQ only
    def part(key, name, index, train_on, file):
        """Trains `index` on `train_on`, fills and writes it; its time, bytes and name under out["parts"][key]."""
        t = clock()
        index.train(train_on)
        size = fill(index, file)
        out["parts"][key] = {**since(t), "bytes": size, "name": name}

    part("ivfpq", f"IVF{lists},PQ{dim // 8}", faiss.IndexIVFPQ(quantizer(), dim, lists, dim // 8, 8, faiss.METRIC_INNER_PRODUCT), pq_sample, "ivfpq.index")
    part("ivfpq4fs", f"IVF{lists},PQ{dim // 4}x4fs", faiss.IndexIVFPQFastScan(quantizer(), dim, lists, dim // 4, 4, faiss.METRIC_INNER_PRODUCT), pq_sample, "ivfpq4fs.index")
    t = clock()
    sq = faiss.IndexScalarQuantizer(dim, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT)
    sq.train(sample)
    size = fill(sq, "sq8.index")
    out["parts"]["sq8"] = {**since(t), "bytes": size, "name": "SQ8"}
    out["parts"]["flat"] = {"wallS": 0.0, "cpuS": 0.0, "bytes": os.path.getsize(os.path.join(d, "vectors.npy")), "name": "Flat (vectors.npy)"}
    out["peakRssMiB"] = peak_rss_mib()
    return out


def search(d, work, base_name, refine_name, nq, grid):
    faiss.omp_set_num_threads(1)
    xq = np.ascontiguousarray(np.load(os.path.join(d, "queries.npy"))[:nq], dtype=np.float32)
    truth = json.load(open(os.path.join(d, "truth.json")))
    ids = np.array(truth["ids"], dtype=np.int64).reshape(truth["queries"], 100)[:nq]
    t = clock()
    base = faiss.read_index(os.path.join(work, base_name + ".index"))
    if refine_name == "flat":
        xb = np.load(os.path.join(d, "vectors.npy"), mmap_mode="r")
        refine = faiss.IndexFlatIP(xb.shape[1])
        for s in range(0, xb.shape[0], 65536):
            refine.add(np.ascontiguousarray(xb[s : s + 65536], dtype=np.float32))
        ram = xb.shape[0] * xb.shape[1] * 4
    else:
        refine = faiss.read_index(os.path.join(work, refine_name + ".index"))
        ram = os.path.getsize(os.path.join(work, refine_name + ".index"))
    index = faiss.IndexRefine(base, refine)
    load = since(t)
    ivf = faiss.extract_index_ivf(base)
    truth_sets = [set(ids[i].tolist()) for i in range(nq)]
    truth10 = [set(ids[i, :10].tolist()) for i in range(nq)]
    rows = []
    for nprobe, k_factor in grid:
        ivf.nprobe = nprobe
        index.k_factor = k_factor
        for i in range(min(nq, 20)):  # warm
            index.search(xq[i : i + 1], 100)
        lat = []
        found = np.zeros((nq, 100), dtype=np.int64)
        t0, c0 = time.perf_counter(), time.process_time()
        for i in range(nq):
            s = time.perf_counter()
            _, I = index.search(xq[i : i + 1], 100)
            lat.append((time.perf_counter() - s) * 1000)
            found[i] = I[0]
        wall = time.perf_counter() - t0
        cpu = time.process_time() - c0
        lat.sort()
        r100 = sum(len(truth_sets[i].intersection(found[i].tolist())) for i in range(nq)) / (100 * nq)
        r10 = sum(len(truth10[i].intersection(found[i, :10].tolist())) for i in range(nq)) / (10 * nq)
        rows.append({"nprobe": nprobe, "kFactor": k_factor, "candidates": 100 * k_factor, "recall10": r10, "recall100": r100,
                     "qps": nq / wall, "cores": cpu / wall, "p50ms": lat[len(lat) // 2], "p99ms": lat[min(nq - 1, int(nq * 0.99))]})
        print(f"faiss {base_name}+{refine_name} nprobe {nprobe} k_factor {k_factor}: recall@100 {r100:.4f}, {nq / wall:.1f} q/s", file=sys.stderr)
    base_bytes = os.path.getsize(os.path.join(work, base_name + ".index"))
    return {"faiss": faiss.__version__, "build": BUILD, "threads": 1, "load": load, "ramBytes": base_bytes + ram, "rows": rows, "peakRssMiB": peak_rss_mib()}


if __name__ == "__main__":
    step = sys.argv[1]
    if step == "build":
        res = build(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif step == "search":
        res = search(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6]), json.loads(sys.argv[7]))
    else:
        raise SystemExit(f"dense-anchors.py: unknown step {step!r} (build or search)")
    print("RESULT " + json.dumps(res))
