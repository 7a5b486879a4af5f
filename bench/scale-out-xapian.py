#!/usr/bin/python3
# bench:scale-out's Xapian anchor (Debian's xapian-tools and python3-xapian, Xapian 1.4): builds Glass
# databases from passages already analysed by tartan (so the terms are tartan's, and only the weighting
# differs: Xapian's BM25, whose idf and length normalisation are not Lucene's), and searches them one
# query at a time, from one local database or from remote shards served by xapian-tcpsrv (which the
# caller, bench/scale-out.mjs, starts and stops by pid).
#
#   scale-out-xapian.py build  --passages FILE --out DIR --shards N
#       FILE: one passage a line, its terms separated by spaces, line i = unit i. Unit u goes to shard
#       u mod N as document u div N + 1, so that N shards opened together (Xapian interleaves the
#       docids of the databases it combines) number unit u as docid u + 1. Writes DIR/shard<i>,
#       compacted (xapian-compact).
#   scale-out-xapian.py search --queries FILE --k K (--db DIR | --remote HOST:PORT,...) --out FILE.json
#       FILE: one query a line, its terms separated by spaces (a term repeated = its count in the
#       query, Xapian's wqf). Writes each query's top K as [unit, weight] pairs, the wall seconds, this
#       process's CPU seconds and the bytes it read (/proc/self/io rchar: a local database's reads), and
#       with --server-pids the CPU seconds and bytes read of the servers' connection processes.
import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time

import xapian

# tartan's bench parameters: k1 0.9, b 0.4 (Xapian: k1, k2, k3, b, min_normlen; k2 0 = no extra
# length correction, k3 1 = wqf as a factor, as Lucene's boost by count)
BM25 = (0.9, 0.0, 1.0, 0.4, 0.5)


def rchar():
    with open("/proc/self/io") as f:
        for line in f:
            if line.startswith("rchar:"):
                return int(line.split()[1])
    return 0


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def servers(pids):
    """CPU seconds and bytes read (rchar) of the connections' processes: xapian-tcpsrv forks one per
    connection, and its children are not accounted to it when they exit, so they are read while open."""
    ticks = os.sysconf("SC_CLK_TCK")
    total_cpu, total_read = 0.0, 0
    for pid in pids:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            children = [int(c) for c in f.read().split()]
        for c in children:
            with open(f"/proc/{c}/stat") as f:
                fields = f.read().rsplit(") ", 1)[1].split()
            total_cpu += (int(fields[11]) + int(fields[12])) / ticks
            with open(f"/proc/{c}/io") as f:
                total_read += next(int(line.split()[1]) for line in f if line.startswith("rchar:"))
    return total_cpu, total_read


def build(args):
    n = args.shards
    os.makedirs(args.out, exist_ok=True)
    tmp = [os.path.join(args.out, f"tmp{i}") for i in range(n)]
    dbs = [xapian.WritableDatabase(p, xapian.DB_CREATE_OR_OVERWRITE | xapian.DB_BACKEND_GLASS) for p in tmp]
    with open(args.passages, encoding="utf-8") as f:
        for u, line in enumerate(f):
            doc = xapian.Document()
            for t in line.split():
                doc.add_term(t)
            dbs[u % n].replace_document(u // n + 1, doc)
    for db in dbs:
        db.commit()
        db.close()
    for i, p in enumerate(tmp):
        final = os.path.join(args.out, f"shard{i}")
        shutil.rmtree(final, ignore_errors=True)
        subprocess.run(["xapian-compact", "--no-renumber", "--quiet", p, final], check=True)
        shutil.rmtree(p)


def search(args):
    if args.db:
        db = xapian.Database(args.db)
    else:
        db = xapian.Database()
        for hp in args.remote.split(","):
            host, port = hp.rsplit(":", 1)
            db.add_database(xapian.remote_open(host, int(port)))
    queries = []
    with open(args.queries, encoding="utf-8") as f:
        for line in f:
            counts = {}
            for t in line.split():
                counts[t] = counts.get(t, 0) + 1
            queries.append(xapian.Query(xapian.Query.OP_OR, [xapian.Query(t, c) for t, c in counts.items()]))
    enq = xapian.Enquire(db)
    enq.set_weighting_scheme(xapian.BM25Weight(*BM25))
    enq.set_query(queries[0])
    enq.get_mset(0, args.k)  # warm-up (the remote connection, the tables' first blocks)
    pids = [int(p) for p in args.server_pids.split(",")] if args.server_pids else []
    hits = []
    sc0, sr0 = servers(pids)
    r0, c0, t0 = rchar(), cpu(), time.perf_counter()
    for q in queries:
        enq.set_query(q)
        m = enq.get_mset(0, args.k)
        hits.append([[it.docid - 1, it.weight] for it in m])
    seconds = time.perf_counter() - t0
    client_cpu, client_read = cpu() - c0, rchar() - r0
    sc1, sr1 = servers(pids)
    out = {"queries": len(queries), "k": args.k, "seconds": seconds, "cpuSeconds": client_cpu, "rcharBytes": client_read,
           "serverCpuSeconds": sc1 - sc0, "serverRcharBytes": sr1 - sr0,
           "docCount": db.get_doccount(), "xapian": xapian.version_string(), "hits": hits}
    with open(args.out, "w") as f:
        json.dump(out, f)


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("--passages", required=True)
    b.add_argument("--out", required=True)
    b.add_argument("--shards", type=int, default=1)
    s = sub.add_parser("search")
    s.add_argument("--queries", required=True)
    s.add_argument("--k", type=int, default=100)
    s.add_argument("--db")
    s.add_argument("--remote")
    s.add_argument("--server-pids", help="the xapian-tcpsrv pids behind --remote (their CPU and reads are measured)")
    s.add_argument("--out", required=True)
    args = p.parse_args()
    if args.cmd == "search" and bool(args.db) == bool(args.remote):
        sys.exit("search: give --db or --remote")
    (build if args.cmd == "build" else search)(args)


if __name__ == "__main__":
    main()
