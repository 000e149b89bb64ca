#!/usr/bin/env python3
"""PETSc's GAMG (Debian's python3-petsc4py) on the systems of amg_cpu.py:
`-ksp_type cg -pc_type gamg` with PETSc's defaults, b = ones, rtol 1e-8,
one process. PETSc's CG stops on the preconditioned residual by default;
-ksp_norm_type unpreconditioned makes it stop on ||b - A x|| / ||b|| as
hisp and pyamg do. Per row: iterations,
the relative residual recomputed from x, setup and solve ms (KSPSetUp, then
KSPSolve) and their sum.

  python3 bench/amg_petsc.py [--hisp build/bin/hisp] [--sides 32,48] [--json FILE]
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hisp", default=os.path.join(os.path.dirname(__file__), "..", "build", "bin", "hisp"))
    ap.add_argument("--sides", default="32,48")
    ap.add_argument("--json")
    o = ap.parse_args()
    import petsc4py
    petsc4py.init(["-ksp_norm_type", "unpreconditioned"])
    from petsc4py import PETSc
    rows = []
    print("| system | rows | PETSc GAMG-CG it | setup ms | solve ms | total ms |")
    print("|---|--:|--:|--:|--:|--:|")
    with tempfile.TemporaryDirectory() as tmp:
        for side in [int(s) for s in o.sides.split(",")]:
            for kind in ("poisson3d", "aniso3d", "jump3d"):
                path = os.path.join(tmp, "%s%d.mtx" % (kind, side))
                subprocess.run([o.hisp, "gen", kind, "--n", str(side), "-o", path], check=True,
                               capture_output=True)
                A = scipy.io.mmread(path).tocsr()
                n = A.shape[0]
                M = PETSc.Mat().createAIJ(size=A.shape, csr=(A.indptr, A.indices, A.data))
                b = M.createVecLeft()
                b.set(1.0)
                x = M.createVecRight()
                ksp = PETSc.KSP().create()
                ksp.setOperators(M)
                ksp.setType("cg")
                ksp.getPC().setType("gamg")
                ksp.setTolerances(rtol=1e-8, atol=0, max_it=10000)
                ksp.setFromOptions()
                t0 = time.perf_counter()
                ksp.setUp()
                t1 = time.perf_counter()
                ksp.solve(b, x)
                t2 = time.perf_counter()
                xa = x.getArray()
                rel = float(np.linalg.norm(np.ones(n) - A @ xa) / np.sqrt(n))
                it = ksp.getIterationNumber()
                conv = ksp.getConvergedReason() > 0
                su, so = (t1 - t0) * 1e3, (t2 - t1) * 1e3
                name = "%s %d^3" % (kind, side)
                print("| %s | %d | %d%s | %.0f | %.0f | %.0f |" %
                      (name, n, it, "" if conv else " (not converged)", su, so, su + so), flush=True)
                rows.append({"system": name, "rows": n, "iterations": it, "converged": conv,
                             "relative_residual": rel, "setup_ms": su, "solve_ms": so})
                ksp.destroy(), M.destroy(), b.destroy(), x.destroy()
    if o.json:
        with open(o.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
