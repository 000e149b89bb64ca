#!/usr/bin/env python3
"""Complex ILU(0) / IC(0) on one GPU as a user waits: hisp's `hisp solve`
against CuPy's spilu(fill_factor=1) (cuSPARSE's csrilu02 on the device, its
solves by SpSV) with CuPy's Krylov solvers, in the same run.

Matrices (c64, built here with scipy from seed 42, written as Matrix Market
into --dir), per side n of --sides:
  magnetic-n  the 3D 7-point magnetic Laplacian of a uniform field along z
              (Landau gauge: the y-edge (i, j) at x carries a_ij = -exp(i t),
              a_ji = -exp(-i t), t = 2 pi 0.002 x; the other edges -1),
              diagonal 6: Hermitian positive definite (magnetic Schroedinger
              operators, lattice gauge fields, connection Laplacians). hisp:
              IC(0)-CG; CuPy: ILU(0)-CG (without pivoting csrilu02 of a
              Hermitian matrix is its L D L^H).
  cshift-n    3D upwind convection-diffusion with a complex shift (time-
              harmonic, damped): diagonal 6 + beta + 0.5 i, the x-minus
              neighbour -1 - beta, the others -1, beta = 2: complex
              nonsymmetric. ILU(0)-GMRES(30) both.
b = ones, x0 = 0, rtol 1e-8, at most --max-iters iterations.

hisp: `hisp solve F --backend cuda --method cg|gmres --precond ic0|ilu0
--rtol 1e-8 --json` as a user runs it, three ways: its default (from
100 000 rows on a GPU: 3 fixed-point sweeps of the factorisation on the
device, 2 Jacobi sweeps per triangle), --factor-sweeps 0 (the host's exact
factorisation, uploaded; sweeps for the solves) and --factor-sweeps 0
--solve-sweeps 0 (exact factorisation and level-scheduled exact solves).
prepare ms (the matrix's upload and the solver's preparation), setup ms
(the preconditioner), solve ms and the residual recomputed from x come from
its --json. One warm-up run per matrix fills the kernel cache first.

CuPy: A uploaded as cupyx csr (untimed, like hisp's file read); setup ms =
spilu(A, fill_factor=1) (the factorisation and both SpSV analyses), wall
from a synchronize to the synchronize after it; solve ms = cg / gmres(30)
with M = LinearOperator(ilu.solve), likewise; its = applications of M;
||b - A x|| / ||b|| recomputed on the GPU in double. Median of --repeat
after a warm-up.

  python3 ilu_complex_gpu.py --hisp .gpu/bin/hisp [--sides 64,100]
                             [--repeat 3] [--max-iters 5000] [--dir /tmp/icx]
                             [--json FILE]
"""
import argparse
import inspect
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import scipy.io
import scipy.sparse as sp

BETA, SHIFT, FLUX, MAG_DIAG = 2.0, 0.5, 0.002, 6.0
BACKEND = os.environ.get("HISP_BENCH_BACKEND", "cuda")  # opencl: a smoke test without a GPU


def grid_edges(n):
    """The 7-point grid's edges (i < j) along x, y, z of the n^3 grid."""
    idx = np.arange(n**3).reshape(n, n, n)  # [z, y, x]
    out = []
    for axis in (2, 1, 0):
        a = np.take(idx, np.arange(n - 1), axis=axis).ravel()
        b = np.take(idx, np.arange(1, n), axis=axis).ravel()
        out.append((a, b, axis))
    return out


def magnetic(n):
    N = n**3
    x = np.arange(N) % n
    rows, cols, vals = [np.arange(N)], [np.arange(N)], [np.full(N, MAG_DIAG, complex)]
    for a, b, axis in grid_edges(n):
        w = -np.exp(2j * np.pi * FLUX * x[a] * (axis == 1))  # Landau gauge
        rows += [a, b]
        cols += [b, a]
        vals += [w, np.conj(w)]
    return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(N, N))


def cshift(n):
    N = n**3
    rows, cols, vals = [np.arange(N)], [np.arange(N)], [np.full(N, 6 + BETA + SHIFT * 1j)]
    for a, b, axis in grid_edges(n):  # a is b's minus neighbour along axis
        rows += [b, a]
        cols += [a, b]
        vals += [np.full(a.size, -1 - BETA if axis == 2 else -1, complex),
                 np.full(a.size, -1, complex)]
    return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(N, N))


def hisp_run(hisp, path, method, pc, extra, max_iters):
    cmd = [hisp, "solve", path, "--backend", BACKEND, "--method", method, "--precond", pc,
           "--rtol", "1e-8", "--maxit", str(max_iters), "--json"] + extra
    p = subprocess.run(cmd, capture_output=True, text=True)
    try:
        d = json.loads(p.stdout)
    except json.JSONDecodeError:
        print(f"hisp failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr[-2000:]}", file=sys.stderr)
        return None
    return d


def cupy_run(A, method, repeat, max_iters):
    import cupy as cp
    import cupyx.scipy.sparse as csp
    import cupyx.scipy.sparse.linalg as cla
    dA = csp.csr_matrix(A.astype(np.complex128))
    n = A.shape[0]
    b = cp.ones(n, dtype=cp.complex128)
    stream = cp.cuda.get_current_stream()
    solver = cla.cg if method == "cg" else cla.gmres
    tol = {"rtol": 1e-8} if "rtol" in inspect.signature(solver).parameters else {"tol": 1e-8}
    extra = {} if method == "cg" else {"restart": 30}
    setups, solves, its, x = [], [], 0, None
    for rep in range(repeat + 1):
        stream.synchronize()
        t0 = time.perf_counter()
        ilu = cla.spilu(dA, fill_factor=1)
        stream.synchronize()
        t1 = time.perf_counter()
        count = [0]

        def apply(r):
            count[0] += 1
            return ilu.solve(r)

        M = cla.LinearOperator((n, n), matvec=apply, dtype=cp.complex128)
        stream.synchronize()
        t2 = time.perf_counter()
        x, _ = solver(dA, b, x0=cp.zeros(n, dtype=cp.complex128), M=M, maxiter=max_iters,
                      atol=0.0, **tol, **extra)
        stream.synchronize()
        t3 = time.perf_counter()
        if rep:  # the first: the warm-up
            setups.append((t1 - t0) * 1e3)
            solves.append((t3 - t2) * 1e3)
        its = count[0]
    res = float(cp.linalg.norm(b - dA @ x) / cp.linalg.norm(b))
    return {"setup_ms": statistics.median(setups), "solve_ms": statistics.median(solves),
            "iterations": its, "relres": res}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hisp", required=True)
    ap.add_argument("--sides", default="64,100")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--max-iters", type=int, default=5000)
    ap.add_argument("--dir", default="/tmp/icx")
    ap.add_argument("--json")
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    try:
        import cupy as cp
        dev = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
        print(f"# ilu_complex_gpu: CuPy {cp.__version__}, scipy {scipy.__version__} on {dev}")
    except ImportError:
        cp, dev = None, "?"
        print("# ilu_complex_gpu: CuPy is not installed: hisp's rows only")
    variants = [("default", []), ("host factorisation", ["--factor-sweeps", "0"]),
                ("exact", ["--factor-sweeps", "0", "--solve-sweeps", "0"])]
    rows = []
    for s in [int(x) for x in a.sides.split(",")]:
        for kind, make, method, pc in (("magnetic", magnetic, "cg", "ic0"),
                                       ("cshift", cshift, "gmres", "ilu0")):
            name = f"{kind}-{s}"
            t0 = time.perf_counter()
            A = make(s)
            path = os.path.join(a.dir, name + ".mtx")
            scipy.io.mmwrite(path, A)
            print(f"{name}: {A.shape[0]} rows, {A.nnz} nonzeros, built and written in "
                  f"{time.perf_counter() - t0:.1f} s", flush=True)
            hisp_run(a.hisp, path, method, pc, [], 20)  # the kernel cache
            for label, extra in variants:
                d = hisp_run(a.hisp, path, method, pc, extra, a.max_iters)
                if d is None:
                    continue
                r = {"matrix": name, "impl": f"hisp {pc}-{method} ({label})",
                     "prepare_ms": d["prepare_ms"], "setup_ms": d["setup_ms"],
                     "solve_ms": d["solve_ms"], "iterations": d["iterations"],
                     "converged": d["converged"], "relres": d["relative_residual"],
                     "factor_sweeps": d["factor_sweeps"], "solve_sweeps": d["solve_sweeps"]}
                rows.append(r)
                print(json.dumps(r), flush=True)
            if cp is not None:
                r = cupy_run(A, method, a.repeat, a.max_iters)
                r.update({"matrix": name, "impl": f"CuPy spilu(fill_factor=1)-{method}"})
                r["converged"] = r["relres"] <= 1e-8 * 1.0001
                rows.append(r)
                print(json.dumps(r), flush=True)
                cp.get_default_memory_pool().free_all_blocks()
            os.remove(path)
    print(f"\n| matrix | implementation | iterations | prepare ms | setup ms | solve ms | "
          f"setup + solve ms | true relres |\n|---|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        p = r.get("prepare_ms")
        print(f"| {r['matrix']} | {r['impl']} | {r['iterations']} | "
              f"{'' if p is None else f'{p:.1f}'} | {r['setup_ms']:.1f} | {r['solve_ms']:.1f} | "
              f"{r['setup_ms'] + r['solve_ms']:.1f} | {r['relres']:.2e} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"device": dev, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
