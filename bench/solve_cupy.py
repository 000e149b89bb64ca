#!/usr/bin/env python3
"""CuPy as the peer of hisp's Krylov solvers on the GPU (bench_solve_cuda):
the same systems (solve_inputs.py: hisp's poisson3d, the least-squares
matrix of bs_lsq_matrix, the same right sides), x0 = 0, fixed iterations,
wall per iteration as a CuPy user waits for it (host clock from a stream
synchronize to the one after the call; median of --repeat after a warm-up).

  cg    cupyx.scipy.sparse.linalg.cg, rtol = atol = 0 (it runs maxiter; the
        tolerance keyword is rtol in recent CuPy, tol before: both handled)
  gmres cupyx.scipy.sparse.linalg.gmres(restart) on the poisson3d systems
        (--gmres-iters inner iterations rounded up to whole cycles; atol = 0,
        so every cycle runs): CuPy's Arnoldi step is classical Gram-Schmidt
        without re-orthogonalisation (two gemv over the basis) and reads the
        new column's norm on the host.
  lsmr  cupyx.scipy.sparse.linalg.lsmr (Fong and Saunders) for the least-squares
        row: CuPy's lsqr is not LSQR but a direct sparse QR (cuSOLVER) of a
        square system, so it cannot take the rectangular matrix. atol = btol
        = 0; LSMR also stops when its normal-equation residual reaches
        machine precision (istop 5), so its iteration count is printed.

  python3 solve_cupy.py [--sizes 160,200] [--iters 500] [--lsqr-rows 4000000]
                        [--lsqr-cols 1000000] [--lsqr-npr 10] [--lsqr-iters 200]
                        [--gmres-iters 0] [--gmres-restart 30]
                        [--repeat 3] [--json FILE] [--hisp-json FILE]
--hisp-json: bench_solve_cuda's --json, for a hisp / expert / CuPy table.
"""
import argparse
import inspect
import json
import statistics
import sys
import time

try:
    import cupy as cp
    import cupyx.scipy.sparse as csp
    import cupyx.scipy.sparse.linalg as cla
except ImportError:
    print("solve_cupy: CuPy is not installed", file=sys.stderr)
    sys.exit(3)

import solve_inputs as si


def timed(fn, repeat):
    stream = cp.cuda.get_current_stream()
    fn()  # warm-up (kernel compiles, cuSPARSE handles)
    walls, out = [], None
    for _ in range(repeat):
        stream.synchronize()
        t0 = time.perf_counter()
        out = fn()
        stream.synchronize()
        walls.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(walls), out


def cg_row(s, iters, repeat):
    A_h = si.poisson3d(s)
    n = A_h.shape[0]
    A = csp.csr_matrix(A_h)
    b = cp.asarray(si.uniform(7, n))
    tol = {"rtol": 0.0} if "rtol" in inspect.signature(cla.cg).parameters else {"tol": 0.0}
    count = [0]

    def cb(_):
        count[0] += 1

    def run():
        count[0] = 0
        return cla.cg(A, b, x0=cp.zeros(n), maxiter=iters, atol=0.0, callback=cb, **tol)[0]

    wall, x = timed(run, repeat)
    its = count[0]
    spmv, _ = timed(lambda: A @ b, 20)
    res = float(cp.linalg.norm(b - A @ x) / cp.linalg.norm(b))
    r = {"matrix": f"poisson3d-{s}", "method": "cg", "rows": n, "nnz": int(A.nnz),
         "iterations_asked": iters, "iterations": its, "ms_per_it": wall / max(its, 1),
         "spmv_ms": spmv, "relative_residual": res}
    r["spmv_share"] = spmv / r["ms_per_it"]
    print(f"{r['matrix']}: cg {its} of {iters} iterations, {r['ms_per_it']:.4f} ms/it, SpMV "
          f"{spmv:.4f} ms (share {100 * r['spmv_share']:.0f}%), relative residual {res:.3e}",
          flush=True)
    return r


def lsmr_row(m, ncols, npr, iters, repeat):
    A_h = si.lsq_matrix(m, ncols, npr)
    A = csp.csr_matrix(A_h)
    del A_h
    b = cp.asarray(si.uniform(13, m))
    if not hasattr(cla, "lsmr"):
        print("lsq-random: this CuPy has no lsmr", flush=True)
        return {"matrix": "lsq-random", "method": "lsmr", "status": "unsupported"}
    out = {}

    def run():
        res = cla.lsmr(A, b, atol=0.0, btol=0.0, conlim=1e300, maxiter=iters)
        out["istop"], out["itn"] = int(res[1]), int(res[2])
        return res[0]

    wall, x = timed(run, repeat)
    its = out["itn"]
    r = {"matrix": "lsq-random", "method": "lsmr", "rows": m, "cols": ncols, "nnz": int(A.nnz),
         "iterations_asked": iters, "iterations": its, "istop": out["istop"],
         "ms_per_it": wall / max(its, 1), "status": "ok",
         "normal_residual": float(cp.linalg.norm(A.T @ (b - A @ x)) /
                                  cp.linalg.norm(A.T @ b))}
    print(f"lsq-random {m} x {ncols}: lsmr {its} of {iters} iterations (istop {out['istop']}), "
          f"{r['ms_per_it']:.4f} ms/it, ||A^T r|| / ||A^T b|| {r['normal_residual']:.3e}",
          flush=True)
    return r


def gmres_row(s, iters, restart, repeat):
    A_h = si.poisson3d(s)
    n = A_h.shape[0]
    A = csp.csr_matrix(A_h)
    b = cp.asarray(si.uniform(7, n))
    cycles = max((iters + restart - 1) // restart, 1)
    tol = {"rtol": 0.0} if "rtol" in inspect.signature(cla.gmres).parameters else {"tol": 0.0}

    def run():  # CuPy's maxiter counts inner iterations, a whole cycle at a time
        return cla.gmres(A, b, x0=cp.zeros(n), restart=restart, maxiter=cycles * restart,
                         atol=0.0, **tol)[0]

    wall, x = timed(run, repeat)
    its = cycles * restart
    res = float(cp.linalg.norm(b - A @ x) / cp.linalg.norm(b))
    r = {"matrix": f"poisson3d-{s}", "method": f"gmres({restart})", "rows": n,
         "nnz": int(A.nnz), "iterations_asked": iters, "iterations": its,
         "ms_per_it": wall / its, "relative_residual": res}
    print(f"{r['matrix']}: gmres({restart}) {its} inner iterations, {r['ms_per_it']:.4f} ms/it, "
          f"relative residual {res:.3e}", flush=True)
    return r


def fmt(v, f="{:.4f}"):
    return "-" if v is None else f.format(v)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", default="160,200")
    ap.add_argument("--iters", type=int, default=500)
    ap.add_argument("--lsqr-rows", type=int, default=4000000)
    ap.add_argument("--lsqr-cols", type=int, default=1000000)
    ap.add_argument("--lsqr-npr", type=int, default=10)
    ap.add_argument("--lsqr-iters", type=int, default=200)
    ap.add_argument("--gmres-iters", type=int, default=0)
    ap.add_argument("--gmres-restart", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--hisp-json")
    a = ap.parse_args()
    dev = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    print(f"# solve_cupy: CuPy {cp.__version__} on {dev}")
    rows = [cg_row(int(s), a.iters, a.repeat) for s in a.sizes.split(",") if s]
    if a.gmres_iters > 0:
        rows += [gmres_row(int(s), a.gmres_iters, a.gmres_restart, a.repeat)
                 for s in a.sizes.split(",") if s]
    if a.lsqr_rows > 0:
        rows.append(lsmr_row(a.lsqr_rows, a.lsqr_cols, a.lsqr_npr, a.lsqr_iters, a.repeat))
    hisp = {}
    if a.hisp_json:
        with open(a.hisp_json) as f:
            for r in json.load(f)["results"]:
                hisp.setdefault((r["matrix"], r["method"], r["format"]), r)  # part cg first
    print("\n| matrix | method | iterations | CuPy ms/it | hisp ms/it | expert ms/it | "
          "CuPy / hisp |")
    print("|---|---|--:|--:|--:|--:|--:|")
    for r in rows:
        if r.get("status", "ok") != "ok":
            print(f"| {r['matrix']} | {r['method']} | {r['status']} | - | - | - | - |")
            continue
        m = r["method"] if r["method"] == "cg" or r["method"].startswith("gmres") else "lsqr"
        h = hisp.get((r["matrix"], m, "csr"), {})
        hm, em = h.get("ms_per_it"), h.get("expert_ms_per_it")
        ratio = r["ms_per_it"] / hm if hm else None
        print(f"| {r['matrix']} | {r['method']} | {r['iterations']}/{r['iterations_asked']} | "
              f"{fmt(r['ms_per_it'])} | {fmt(hm)} | {fmt(em)} | {fmt(ratio, '{:.2f}')} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"cupy": cp.__version__, "device": dev, "repeat": a.repeat, "results": rows},
                      f, indent=1)


if __name__ == "__main__":
    main()
