#!/usr/bin/env python3
"""PETSc's KSP on hisp's poisson3d (the 7-point Laplacian of gen:poisson3d:N,
diagonal 6, off-diagonals -1, rows x-fastest), one or more MPI processes:
time per iteration of a fixed-iteration CG / BiCGSTAB without a
preconditioner, b = ones, x0 = 0 (rtol 1e-30, so every solve runs --iters
iterations; `-ksp_norm_type unpreconditioned`), the median of --repeat
solves after a warm-up solve. Each process assembles its own rows (AIJ).
Prints one JSON line per method on rank 0.

  mpiexec -n 2 env PYTHONPATH=$(ls -d /usr/lib/petscdir/petsc*/*real/lib/python3/dist-packages) \\
    /usr/bin/python3 -s bench/petsc_poisson.py --n 100 [--iters 100] [--repeat 3]
"""
import argparse
import json
import statistics
import sys
import time

import petsc4py

petsc4py.init(sys.argv[:1])
from petsc4py import PETSc  # noqa: E402


def poisson3d(n):
    N = n**3
    A = PETSc.Mat().createAIJ([N, N], nnz=(7, 6))
    lo, hi = A.getOwnershipRange()
    for r in range(lo, hi):
        x, y, z = r % n, (r // n) % n, r // (n * n)
        cols, vals = [], []
        for dz, dy, dx in ((-1, 0, 0), (0, -1, 0), (0, 0, -1), (0, 0, 0), (0, 0, 1), (0, 1, 0),
                           (1, 0, 0)):
            if 0 <= x + dx < n and 0 <= y + dy < n and 0 <= z + dz < n:
                cols.append(r + dx + dy * n + dz * n * n)
                vals.append(6.0 if (dx, dy, dz) == (0, 0, 0) else -1.0)
        A.setValues([r], cols, vals)
    A.assemble()
    return A


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    comm = PETSc.COMM_WORLD
    A = poisson3d(a.n)
    b = A.createVecLeft()
    b.set(1.0)
    x = A.createVecRight()
    for method in ("cg", "bcgs"):
        ksp = PETSc.KSP().create(comm)
        ksp.setOperators(A)
        ksp.setType(method)
        ksp.getPC().setType("none")
        ksp.setNormType(PETSc.KSP.NormType.UNPRECONDITIONED)
        ksp.setTolerances(rtol=1e-30, atol=1e-300, max_it=a.iters)
        ksp.setUp()
        times = []
        for rep in range(a.repeat + 1):
            x.set(0.0)
            comm.barrier()
            t0 = time.perf_counter()
            ksp.solve(b, x)
            comm.barrier()
            if rep:
                times.append((time.perf_counter() - t0) * 1e3 / ksp.getIterationNumber())
        if comm.rank == 0:
            print(json.dumps({"n": a.n, "rows": a.n**3, "procs": comm.size,
                              "method": "cg" if method == "cg" else "bicgstab",
                              "iterations": ksp.getIterationNumber(),
                              "ms_per_it": statistics.median(times),
                              "petsc": ".".join(map(str, PETSc.Sys.getVersion()))}), flush=True)
        ksp.destroy()


if __name__ == "__main__":
    main()
