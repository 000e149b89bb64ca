#!/usr/bin/env python3
"""CuPy as the peer of hisp's SpGEMM on the GPU (bench_spgemm_cuda): the same
items (FILE.mtx: A*A, aat:FILE.mtx: A*A^T, ptap:P.mtx:A.mtx: P^T*(A*P)),
the operands in cupyx.scipy.sparse CSR on the device before the timing;
wall ms per product as a CuPy user waits for it (a stream synchronize before
and after; median of --repeat after --warmup), nnz(C) and, where CuPy's C
differs from scipy's on the host in its number of entries, a note (CuPy has
returned empty products past 2^31 intermediate products).

  python3 spgemm_cupy.py --items LIST [--precision f64|f32] [--repeat 5]
                         [--warmup 1] [--json FILE]
"""
import argparse
import json
import statistics
import sys
import time

import numpy as np
import scipy.io

try:
    import cupy as cp
    import cupyx.scipy.sparse as csp
except ImportError:
    sys.exit("spgemm_cupy: CuPy is not installed")


def timed(f, warmup, repeat):
    for _ in range(warmup):
        f()
    ts = []
    for _ in range(repeat):
        cp.cuda.Stream.null.synchronize()
        t0 = time.perf_counter()
        C = f()
        cp.cuda.Stream.null.synchronize()
        ts.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ts), C


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--items", required=True)
    ap.add_argument("--precision", default="f64", choices=["f64", "f32"])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--json")
    o = ap.parse_args()
    dt = np.float64 if o.precision == "f64" else np.float32
    rows = []
    print("| product | file | nnz(C) | CuPy ms |")
    print("|---|---|--:|--:|")
    for it in o.items.split(","):
        kind, p = "A*A", None
        if it.startswith("aat:"):
            kind, a = "A*A^T", it[4:]
        elif it.startswith("ptap:"):
            kind, (p, a) = "P^T*A*P", it[5:].split(":", 1)
        else:
            a = it
        A = csp.csr_matrix(scipy.io.mmread(a).tocsr().astype(dt))
        try:
            if kind == "A*A":
                ms, C = timed(lambda: A @ A, o.warmup, o.repeat)
            elif kind == "A*A^T":
                ms, C = timed(lambda: A @ A.T, o.warmup, o.repeat)
            else:
                P = csp.csr_matrix(scipy.io.mmread(p).tocsr().astype(dt))
                ms, C = timed(lambda: P.T @ (A @ P), o.warmup, o.repeat)
            nnz, err = int(C.nnz), None
        except Exception as e:  # out of memory and the like: the row says so
            ms, nnz, err = None, None, "%s: %s" % (type(e).__name__, e)
        name = a.rsplit("/", 1)[-1]
        print("| %s | %s | %s | %s |" % (kind, name, nnz if nnz is not None else "-",
                                         "%.3f" % ms if ms is not None else err), flush=True)
        rows.append({"product": kind, "a": a, "p": p, "nnz": nnz, "cupy_ms": ms, "error": err})
        cp.get_default_memory_pool().free_all_blocks()
    if o.json:
        with open(o.json, "w") as f:
            json.dump({"precision": o.precision, "repeat": o.repeat, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
