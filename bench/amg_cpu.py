#!/usr/bin/env python3
"""AMG-preconditioned CG on the CPU: `hisp solve --precond amg` against
`--precond jacobi` and pyamg's smoothed aggregation (its defaults,
`pyamg.smoothed_aggregation_solver(A).solve(b, accel='cg')`), b = ones, to
rtol 1e-8, on generated systems (poisson3d, aniso3d, jump3d at the sides
given). Per row: iterations, the relative residual recomputed from x, and
the wall time of the whole solve as the user waits (hisp: the CLI's
setup_ms + solve_ms, AMG's host setup included, the matrix's upload and
kernel builds before it not; pyamg: setup + solve in this process).

  python3 bench/amg_cpu.py [--hisp build/bin/hisp] [--sides 32,48] [--files A.mtx,...]
                           [--json FILE]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import scipy.io


def median_run(f, repeat):
    runs = sorted((f() for _ in range(repeat)), key=lambda r: r[2])
    return runs[len(runs) // 2]


def hisp_solve(hisp, path, pc):
    out = subprocess.run([hisp, "solve", path, "--method", "cg", "--precond", pc, "--json"],
                         capture_output=True, text=True)
    d = json.loads(out.stdout)
    # the solve as the caller waits for it: the preconditioner's setup (AMG's
    # hierarchy, built on the host) and the iterations; not prepare_ms (the
    # matrix's upload and kernel builds before the solve)
    return d["iterations"], d["relative_residual"], d["setup_ms"] + d["solve_ms"]


def pyamg_solve(pyamg, A):
    b = np.ones(A.shape[0])
    t0 = time.perf_counter()
    ml = pyamg.smoothed_aggregation_solver(A)
    res = []
    x = ml.solve(b, tol=1e-8, maxiter=10000, accel="cg", residuals=res)
    ms = (time.perf_counter() - t0) * 1e3
    return len(res) - 1, float(np.linalg.norm(b - A @ x) / np.linalg.norm(b)), ms


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hisp", default=os.path.join(os.path.dirname(__file__), "..", "build", "bin", "hisp"))
    ap.add_argument("--sides", default="32,48")
    ap.add_argument("--files", default="", help="Matrix Market files to solve too (comma-separated)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per solver; the median is shown")
    ap.add_argument("--json")
    o = ap.parse_args()
    try:
        import pyamg
    except ImportError:
        pyamg = None
    rows = []
    print("| system | rows | Jacobi-CG it / ms | AMG-CG it / ms | pyamg SA-CG it / ms |")
    print("|---|--:|--:|--:|--:|")
    with tempfile.TemporaryDirectory() as tmp:
        items = []
        for side in [int(s) for s in o.sides.split(",") if s]:
            for kind in ("poisson3d", "aniso3d", "jump3d"):
                path = os.path.join(tmp, "%s%d.mtx" % (kind, side))
                subprocess.run([o.hisp, "gen", kind, "--n", str(side), "-o", path], check=True,
                               capture_output=True)
                items.append(("%s %d^3" % (kind, side), path))
        for path in [f for f in o.files.split(",") if f]:
            items.append((os.path.basename(path), path))
        for name, path in items:
            jac = median_run(lambda: hisp_solve(o.hisp, path, "jacobi"), o.repeat)
            amg = median_run(lambda: hisp_solve(o.hisp, path, "amg"), o.repeat)
            A = scipy.io.mmread(path).tocsr()
            pa = median_run(lambda: pyamg_solve(pyamg, A), o.repeat) if pyamg else None
            cell = lambda r: "%d / %.0f" % (r[0], r[2]) if r else "-"
            print("| %s | %d | %s | %s | %s |" % (name, A.shape[0], cell(jac), cell(amg), cell(pa)),
                  flush=True)
            rows.append({"system": name, "rows": A.shape[0], "jacobi": jac, "amg": amg, "pyamg": pa})
    if o.json:
        with open(o.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
