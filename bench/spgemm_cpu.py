#!/usr/bin/env python3
"""SpGEMM on the CPU: `hisp multiply` (the default backend: OpenCL on PoCL's
CPU device, where the product runs on the host's threads) against scipy's
`A @ B` (one core) and MKL's mkl_sparse_spmm (sparse_dot_mkl, all cores)
on the same Matrix Market files, in one run. Every time is the median wall
time of --repeat calls; hisp's includes the transposes it forms and C's
allocation, as scipy's and MKL's do. Cases: A*A of generated and real
matrices, A*A^T, and P^T*A*P with pyamg's smoothed-aggregation P of
poisson3d. Writes a Markdown table to stdout and the raw rows (JSON) to
--json.

    python3 bench/spgemm_cpu.py [--hisp build/bin/hisp] [--matrices ../shared/matrices]
                                [--repeat 5] [--json OUT.json] [--quick]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import scipy.io
import scipy.sparse as sp

try:
    from sparse_dot_mkl import dot_product_mkl
except Exception:  # MKL is optional
    dot_product_mkl = None


def med_ms(f, repeat):
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        ts.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ts)


def gen(hisp, tmp, kind, args):
    path = os.path.join(tmp, kind + "_" + "_".join(a.strip("-") for a in args) + ".mtx")
    if not os.path.exists(path):
        subprocess.run([hisp, "gen", kind, *args, "-o", path], check=True,
                       stdout=subprocess.DEVNULL)
    return path


def sa_prolongator(a_path, tmp):
    """pyamg's smoothed-aggregation P of the first level, written as P.mtx."""
    import pyamg
    A = scipy.io.mmread(a_path).tocsr()
    ml = pyamg.smoothed_aggregation_solver(A, max_levels=2, max_coarse=10)
    P = ml.levels[0].P.tocsr()
    path = os.path.join(tmp, "P_" + os.path.basename(a_path))
    scipy.io.mmwrite(path, P)
    return path


def hisp_row(hisp, a, b, trans_b, ptap, repeat):
    cmd = [hisp, "multiply"] + (["--ptap"] if ptap else []) + [a] + ([b] if b else [])
    cmd += ["-o", "/dev/null", "--repeat", str(repeat), "--json"]
    if trans_b:
        cmd.append("--transpose-b")
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        sys.exit("%s failed (%d): %s" % (" ".join(cmd), r.returncode, r.stderr.strip()))
    return json.loads(r.stdout)


def peers(a_path, b_path, trans_b, ptap, repeat):
    A = scipy.io.mmread(a_path).tocsr().astype(np.float64)  # pattern files: ones, as hisp reads
    B = scipy.io.mmread(b_path).tocsr().astype(np.float64) if b_path else A
    if ptap:  # P, A given as (a, b)
        P, M = A, B
        f = lambda: P.T @ (M @ P)
        Pt = P.T.tocsr()
        g = (lambda: dot_product_mkl(Pt, dot_product_mkl(M, P))) if dot_product_mkl else None
        AP, Pc = (M @ P).tocsr(), P.tocsc()  # products of A*P, then of P^T*(AP)
        prod = int(np.diff(P.indptr)[M.indices].sum() + np.diff(AP.indptr)[Pc.indices].sum())
    else:
        Bop = B.T if trans_b else B
        f = lambda: A @ Bop
        Bc = Bop.tocsr()
        g = (lambda: dot_product_mkl(A, Bc)) if dot_product_mkl else None
        prod = int(np.diff(Bc.indptr)[A.indices].sum())
    C = f()
    r = {"scipy_ms": med_ms(f, repeat), "scipy_nnz": int(C.nnz), "products": prod}
    if g:
        g()  # MKL's first call loads its threads
        r["mkl_ms"] = med_ms(g, repeat)
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hisp", default="build/bin/hisp")
    ap.add_argument("--matrices", default=os.environ.get("HISP_MATRICES", "../shared/matrices"))
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", default=None)
    ap.add_argument("--quick", action="store_true", help="small cases only (a smoke run)")
    o = ap.parse_args()
    tmp = tempfile.mkdtemp()
    big = not o.quick
    M = o.matrices
    p3 = gen(o.hisp, tmp, "poisson3d", ["--n", "100" if big else "20"])
    cases = [
        ("poisson3d 100^3" if big else "poisson3d 20^3", p3, None, False, False),
        ("banded", gen(o.hisp, tmp, "banded", ["--n", "300000" if big else "3000",
                                               "--bandwidth", "8", "--seed", "42"]),
         None, False, False),
        ("rmat 16 (ef 16)" if big else "rmat 10", gen(o.hisp, tmp, "rmat", [
            "--scale", "16" if big else "10", "--edge-factor", "16", "--seed", "42"]),
         None, False, False),
        ("circuit", gen(o.hisp, tmp, "circuit", ["--n", "10000" if big else "3000",
                                                 "--seed", "42"]), None, False, False),
    ]
    for f in (["bcsstk33", "CA-HepPh", "ca-CondMat", "bayer10", "luxembourg", "fidapex6"]
              if big else ["bcsstk13"]):
        cases.append((f, os.path.join(M, f + ".mtx"), None, False, False))
    cases.append((cases[2][0] + " A*A^T", cases[2][1], None, True, False))
    if big:
        cases.append(("CA-HepPh A*A^T", os.path.join(M, "CA-HepPh.mtx"), None, True, False))
        cases.append(("Groebner_id2003_aug A*A^T",
                      os.path.join(M, "Groebner_id2003_aug.mtx"), None, True, False))
    cases.append(("P^T A P, " + cases[0][0] + " (pyamg SA)", sa_prolongator(p3, tmp), p3,
                  False, True))
    rows = []
    print("| product | nnz(C) | products | hisp ms | numeric ms | scipy ms | MKL ms "
          "| scipy / hisp | MKL / hisp |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|")
    for name, a, b, tb, ptap in cases:
        print("running " + name, file=sys.stderr)
        h = hisp_row(o.hisp, a, b, tb, ptap, o.repeat)
        p = peers(a, b, tb, ptap, o.repeat)
        r = {"case": name, "hisp": h, **p}
        rows.append(r)
        num = h["numeric_ms"]
        mkl = p.get("mkl_ms")
        print("| %s | %d%s | %.3g | %.1f | %s | %.1f | %s | %.2f | %s |" % (
            name, h["nnz"], "" if h["nnz"] == p["scipy_nnz"] else " (scipy %d)" % p["scipy_nnz"],
            p["products"], h["wall_ms"], "-" if num is None else "%.1f" % num, p["scipy_ms"],
            "-" if mkl is None else "%.1f" % mkl, p["scipy_ms"] / h["wall_ms"],
            "-" if mkl is None else "%.2f" % (mkl / h["wall_ms"])), flush=True)
    if o.json:
        with open(o.json, "w") as f:
            json.dump({"device": rows[0]["hisp"]["device"], "repeat": o.repeat,
                       "rows": rows}, f, indent=1)
    vals = [r["scipy_ms"] / r["hisp"]["wall_ms"] for r in rows]
    print("\ngeometric mean scipy / hisp: %.2f" % float(np.exp(np.mean(np.log(vals)))))
    mk = [r["mkl_ms"] / r["hisp"]["wall_ms"] for r in rows if "mkl_ms" in r]
    if mk:
        print("geometric mean MKL / hisp: %.2f" % float(np.exp(np.mean(np.log(mk)))))


if __name__ == "__main__":
    main()
