#!/usr/bin/env python3
"""scipy.sparse.linalg.cg as the CPU peer of hisp's CG (`hisp bench --op solve
--method cg`, run by solve_cpu.sh): the same poisson3d matrices and right
sides (solve_inputs.py: hisp bench's b is uniform(7, n)), x0 = 0, a fixed
count of iterations (rtol = atol = 0: cg runs maxiter), wall per iteration
(host clock around the call, median of --repeat after one warm-up), and one
SpMV (A @ x) alone for the SpMV's share. scipy's SpMV runs on one thread;
numpy's dot products may use BLAS threads: the thread settings are printed.

  python3 solve_scipy.py [--sizes 64,80,100] [--iters 100] [--repeat 3] [--json FILE]
  python3 solve_scipy.py --check-mtx FILE --check-n N   (poisson3d N equals the file?)
  python3 solve_scipy.py --hisp SOLVE.json SPMV.json   (hisp bench's OpenCL row, one line)
  python3 solve_scipy.py --merge DIR     (hisp-solve-R-N.json, hisp-spmv-R-N.json and
                                          scipy-R.json of several rounds: medians over
                                          the rounds, a hisp / scipy table)

hisp's floor: the CSR bytes + 12 vector streams of n doubles (CG's 10 and
the dot that PoCL does not fuse into the SpMV) over hisp bench's copy
bandwidth; the CSR bytes are hisp bench's "bytes" less its 8 CG vectors.
"""
import glob
import argparse
import inspect
import json
import os
import statistics
import sys
import time

import numpy as np
import scipy
import scipy.sparse.linalg as spla

import solve_inputs as si


def threads():
    info = {k: os.environ.get(k, "") for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                               "MKL_NUM_THREADS")}
    info["cpu_count"] = os.cpu_count()
    try:
        from threadpoolctl import threadpool_info
        info["threadpools"] = [{"api": p.get("internal_api"), "threads": p.get("num_threads")}
                               for p in threadpool_info()]
    except ImportError:
        info["threadpools"] = "threadpoolctl not installed"
    return info


def tol_kwargs():
    """rtol in scipy >= 1.12, tol before."""
    params = inspect.signature(spla.cg).parameters
    return {"rtol": 0.0, "atol": 0.0} if "rtol" in params else {"tol": 0.0, "atol": 0.0}


def run_cg(A, b, iters):
    count = [0]

    def cb(_):
        count[0] += 1

    x0 = np.zeros_like(b)
    t0 = time.perf_counter()
    x, info = spla.cg(A, b, x0=x0, maxiter=iters, callback=cb, **tol_kwargs())
    return (time.perf_counter() - t0) * 1e3, count[0], x


def hisp_row(solve_path, spmv_path):
    """hisp bench's OpenCL rows of one size (--op solve, --op spmv) as a row
    of this script's tables; None when the OpenCL row did not run."""
    with open(solve_path) as f:
        so = json.load(f)
    with open(spmv_path) as f:
        sp = json.load(f)
    pick = lambda j: next((r for r in j["results"]
                           if r["backend"] == "opencl" and r["status"] == "ok"), None)
    h, m = pick(so), pick(sp)
    if not h or not m or so["method"] != "cg" or so["type"] != "f64":
        return None
    n = so["rows"]
    csr = so["bytes"] - 8 * 8 * n
    return {"matrix": "poisson3d-" + so["generator"].split(":")[2], "rows": n, "nnz": so["nnz"],
            "iterations_asked": so["iterations"], "iterations": h["iterations"],
            "ms_per_it": h["ms"], "floor_ms": (csr + 12 * 8 * n) / (h["copy_gbps"] * 1e9) * 1e3,
            "spmv_ms": m["ms"], "spmv_share": m["ms"] / h["ms"],
            "relative_residual": h["relative_residual"], "device": h["device"]["name"]}


def merge(d):
    """Medians over rounds (solve_cpu.sh alternates hisp and scipy runs, so a
    change of load on the shared machine hits both)."""
    h, s = {}, {}
    for path in sorted(glob.glob(os.path.join(d, "hisp-solve-*.json"))):
        r = hisp_row(path, path.replace("hisp-solve-", "hisp-spmv-"))
        if r:
            h.setdefault(r["matrix"], []).append(r)
    for path in sorted(glob.glob(os.path.join(d, "scipy-*.json"))):
        with open(path) as f:
            for r in json.load(f)["results"]:
                s.setdefault(r["matrix"], []).append(r)
    med = lambda rs, k: statistics.median(r[k] for r in rs)
    print("| matrix | rows | nnz | rounds | hisp ms/it | scipy ms/it | **hisp / scipy** | hisp / "
          "floor | hisp SpMV share | scipy SpMV share |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for m in sorted(set(h) & set(s), key=lambda m: s[m][0]["rows"]):
        hm, sm = med(h[m], "ms_per_it"), med(s[m], "ms_per_it")
        print(f"| {m} | {s[m][0]['rows']} | {s[m][0]['nnz']} | {len(h[m])}/{len(s[m])} | "
              f"{hm:.3f} | {sm:.3f} | **{hm / sm:.2f}** | {hm / med(h[m], 'floor_ms'):.2f} | "
              f"{100 * med(h[m], 'spmv_share'):.0f}% | {100 * med(s[m], 'spmv_share'):.0f}% |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", default="64,80,100")
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--hisp", nargs=2, metavar=("SOLVE_JSON", "SPMV_JSON"))
    ap.add_argument("--check-mtx")
    ap.add_argument("--check-n", type=int, default=6)
    ap.add_argument("--merge")
    a = ap.parse_args()
    if a.merge:
        merge(a.merge)
        return
    if a.hisp:
        r = hisp_row(*a.hisp)
        if not r:
            sys.exit(f"{a.hisp[0]}: no OpenCL CG row in f64")
        print(f"{r['matrix']} on {r['device']}: {r['iterations']} of {r['iterations_asked']} "
              f"iterations, {r['ms_per_it']:.3f} ms/it (floor {r['floor_ms']:.3f}), SpMV "
              f"{r['spmv_ms']:.3f} ms (share {100 * r['spmv_share']:.0f}%), relative residual "
              f"{r['relative_residual']:.3e}", flush=True)
        return
    if a.check_mtx:
        ok = si.same_as_mtx(si.poisson3d(a.check_n), a.check_mtx)
        print(f"poisson3d {a.check_n}: solve_inputs.py and {a.check_mtx} "
              f"{'are identical' if ok else 'DIFFER'}")
        sys.exit(0 if ok else 2)
    th = threads()
    print(f"# solve_scipy: scipy {scipy.__version__}, numpy {np.__version__}, threads {th}")
    rows = []
    for s in [int(v) for v in a.sizes.split(",") if v]:
        A = si.poisson3d(s)
        n = A.shape[0]
        b = si.uniform(7, n)
        run_cg(A, b, 3)  # warm-up
        walls, its = [], 0
        for _ in range(a.repeat):
            w, its, x = run_cg(A, b, a.iters)
            walls.append(w)
        xr = si.uniform(19, n)
        sp_ms = []
        for _ in range(10):
            t0 = time.perf_counter()
            A @ xr
            sp_ms.append((time.perf_counter() - t0) * 1e3)
        wall = statistics.median(walls)
        r = {"matrix": f"poisson3d-{s}", "rows": n, "nnz": int(A.nnz), "iterations_asked": a.iters,
             "iterations": its, "ms_per_it": wall / max(its, 1), "wall_ms": wall,
             "spmv_ms": statistics.median(sp_ms),
             "relative_residual": float(np.linalg.norm(b - A @ x) / np.linalg.norm(b))}
        r["spmv_share"] = r["spmv_ms"] / r["ms_per_it"]
        rows.append(r)
        print(f"{r['matrix']}: {its} of {a.iters} iterations, {r['ms_per_it']:.3f} ms/it, "
              f"SpMV {r['spmv_ms']:.3f} ms (share {100 * r['spmv_share']:.0f}%), relative "
              f"residual {r['relative_residual']:.3e}", flush=True)
    print("\n| matrix | rows | nnz | iterations | scipy ms/it | SpMV ms | SpMV share |")
    print("|---|--:|--:|--:|--:|--:|--:|")
    for r in rows:
        print(f"| {r['matrix']} | {r['rows']} | {r['nnz']} | {r['iterations']}/"
              f"{r['iterations_asked']} | {r['ms_per_it']:.3f} | {r['spmv_ms']:.3f} | "
              f"{100 * r['spmv_share']:.0f}% |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"scipy": scipy.__version__, "numpy": np.__version__, "threads": th,
                       "repeat": a.repeat, "results": rows}, f, indent=1)


if __name__ == "__main__":
    main()
