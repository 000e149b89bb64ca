#!/usr/bin/env python3
"""Time per iteration of small solves: hisp (`hisp solve`, the default
backend and the reference backend) against PETSc's KSP (Debian's
python3-petsc4py, one process) on the same systems, b = A*1, x0 = 0, rtol
1e-8 on the unpreconditioned residual, GMRES(30). PETSc's ILU is its
ILU(0) (`-pc_type ilu`, levels 0), its Jacobi `-pc_type jacobi`; IC(0) is
`-pc_type icc`. Per row: iterations and ms per iteration (the solve's time
over its iterations; setup not counted) of each, the median of --repeat
solves; hisp's `on_host` says whether its solve ran on the host's loops.

  PYTHONPATH=$(ls -d /usr/lib/petscdir/petsc*/*real/lib/python3/dist-packages) \\
    /usr/bin/python3 -s bench/solve_petsc.py [--hisp build/bin/hisp] [--repeat 5] [--json F]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

import numpy as np
import scipy.io

HERE = os.path.dirname(os.path.abspath(__file__))
MATS = os.path.join(HERE, "..", "..", "shared", "matrices")
# (system, method, preconditioner): the systems of fewer than 10^4 rows that
# both solve, and a generated one at 8000 rows
CASES = [("494_bus", "cg", "none"), ("494_bus", "cg", "jacobi"), ("494_bus", "cg", "ic0"),
         ("bcsstk13", "cg", "jacobi"), ("cage8", "gmres", "none"), ("cage8", "gmres", "ilu0"),
         ("Pd", "gmres", "ilu0"), ("adder_dcop_05", "gmres", "ilu0"),
         ("gen:poisson3d:20", "cg", "none"), ("gen:poisson3d:20", "cg", "jacobi"),
         ("gen:poisson3d:20", "bicgstab", "none")]
PETSC_PC = {"none": "none", "jacobi": "jacobi", "ilu0": "ilu", "ic0": "icc"}
PETSC_KSP = {"cg": "cg", "gmres": "gmres", "bicgstab": "bcgs"}


def path_of(hisp, tmp, name):
    if not name.startswith("gen:"):
        return os.path.join(MATS, name + ".mtx")
    _, kind, n = name.split(":")
    p = os.path.join(tmp, "%s%s.mtx" % (kind, n))
    if not os.path.exists(p):
        subprocess.run([hisp, "gen", kind, "--n", n, "-o", p], check=True, capture_output=True)
    return p


def hisp_run(hisp, path, rhs, method, pc, backend, repeat):
    its, per, host = [], [], False
    for _ in range(repeat):
        out = subprocess.run([hisp, "solve", path, "--method", method, "--precond", pc,
                              "--backend", backend, "--rhs", rhs, "--rtol", "1e-8", "--json"],
                             check=True, capture_output=True, text=True).stdout
        d = json.loads(out)
        its.append(d["iterations"])
        per.append(d["ms_per_iteration"])
        host = d.get("on_host", False)
    return statistics.median(its), statistics.median(per), host


def petsc_run(PETSc, A, method, pc, repeat):
    M = PETSc.Mat().createAIJ(size=A.shape, csr=(A.indptr, A.indices, A.data))
    b = M.createVecLeft()
    M.mult(_ones(M), b)
    its, per = [], []
    for _ in range(repeat):
        x = M.createVecRight()
        ksp = PETSc.KSP().create()
        ksp.setOperators(M)
        ksp.setType(PETSC_KSP[method])
        if method == "gmres":
            ksp.setGMRESRestart(30)
        ksp.getPC().setType(PETSC_PC[pc])
        ksp.setTolerances(rtol=1e-8, atol=0, max_it=10000)
        ksp.setFromOptions()
        ksp.setUp()
        t0 = time.perf_counter()
        ksp.solve(b, x)
        ms = (time.perf_counter() - t0) * 1e3
        n = max(ksp.getIterationNumber(), 1)
        its.append(ksp.getIterationNumber())
        per.append(ms / n)
    return statistics.median(its), statistics.median(per)


def _ones(M):
    v = M.createVecRight()
    v.set(1.0)
    return v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hisp", default=os.path.join(HERE, "..", "build", "bin", "hisp"))
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json")
    o = ap.parse_args()
    import petsc4py
    petsc4py.init(["-ksp_norm_type", "unpreconditioned"])
    from petsc4py import PETSc
    rows = []
    print("| system | rows | method | PETSc it / ms per it | hisp default it / ms per it (on host) "
          "| hisp reference ms per it | hisp default / PETSc |")
    print("|---|--:|---|--:|--:|--:|--:|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, method, pc in CASES:
            path = path_of(o.hisp, tmp, name)
            A = scipy.io.mmread(path).tocsr().astype(np.float64)
            rhs = os.path.join(tmp, "b.mtx")
            scipy.io.mmwrite(rhs, (A @ np.ones(A.shape[1])).reshape(-1, 1))
            try:
                pit, pms = petsc_run(PETSc, A, method, pc, o.repeat)
                pcell = "%d / %.4f" % (pit, pms)
            except PETSc.Error as e:  # e.g. its ILU on a missing diagonal entry
                pit, pms, pcell = None, None, "refused (error %d)" % e.ierr
            hit, hms, host = hisp_run(o.hisp, path, rhs, method, pc, "auto", o.repeat)
            _, rms, _ = hisp_run(o.hisp, path, rhs, method, pc, "reference", o.repeat)
            row = dict(system=name, rows=A.shape[0], method=method, precond=pc, petsc_iterations=pit,
                       petsc_ms_per_iteration=pms, hisp_iterations=hit, hisp_ms_per_iteration=hms,
                       hisp_on_host=host, hisp_reference_ms_per_iteration=rms)
            rows.append(row)
            print("| %s | %d | %s, %s | %s | %d / %.4f (%s) | %.4f | %s |" %
                  (name, A.shape[0], method, pc, pcell, hit, hms, "yes" if host else "no", rms,
                   "%.2f" % (hms / pms) if pms else "-"), flush=True)
    if o.json:
        with open(o.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
