#!/usr/bin/env python3
"""Preconditioned Krylov solvers: `hisp solve` (PoCL OpenCL, the reference
backend, or CUDA on a GPU machine) against scipy on the CPU on SuiteSparse
matrices.

Per square matrix A: b = A @ ones (ones where that is zero), solve A x = b to
a relative residual ||b - A x|| / ||b|| <= 1e-8 (recomputed from x for scipy,
hisp recomputes it itself), at most --maxit iterations in total.
  scipy: GMRES(30) (and CG where A is Hermitian with a positive diagonal)
         with no preconditioner; a plain ILU(0) written below, the same rule
         as hisp's core/ilu/ilu_factor.c (for CG the same factors: ILU(0) of
         a Hermitian A is its IC(0) as L D L^H); spilu(A) with its defaults.
  hisp:  --precond none, jacobi, ilu0 (gmres) or none, jacobi, ic0,
         chebyshev (cg), each preconditioner with its defaults.
hisp gets the same b: written to a Matrix Market array file, passed as
--rhs FILE, and its rhs_norm checked against ||b||.
Cells are "iterations / total ms" (setup + solve; hisp: setup_ms + solve_ms,
the matrix's upload and kernel builds before the solve not included).

  python3 bench/ilu_cpu.py [--quick] [--matrices A.mtx,...] [--shared DIR]
                           [--backends opencl,reference,cuda] [--maxit N] [--out FILE]
"""
import argparse, datetime, glob, json, math, os, re, shutil, subprocess, sys, tempfile, time, warnings

import numpy as np
import scipy.io
import scipy.sparse as sp
import scipy.sparse.linalg as sla

RTOL = 1e-8
OK = RTOL * (1 + 1e-6)     # slack for the last digit of hisp's printed residual
PIVOT_TOL, PIVOT_SET = 1e-8, 1e-3   # hisp's ILU pivot rule (ilu_factor.c)
MAX_NNZ, MAX_ROWS = 200000, 10**7   # MAX_ROWS: a dense b must fit in memory
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def load(path):
    """A as CSR f64/c128 with duplicates summed, or (None, why skipped)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            M = scipy.io.mmread(path)
    except Exception as e:  # malformed on purpose in mm_ext
        return None, "unreadable: " + (str(e).splitlines()[0][:60] if str(e) else type(e).__name__)
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        return None, "not square"
    n = M.shape[0]
    if n < 2 or n > MAX_ROWS:
        return None, "%d rows" % n
    if isinstance(M, np.ndarray):  # array file: every entry is stored, zeros too
        r, c = np.indices(M.shape)
        M = sp.coo_matrix((M.ravel(), (r.ravel(), c.ravel())), shape=M.shape)
    dt = np.complex128 if np.iscomplexobj(M.data) else np.float64
    A = sp.csr_matrix(M, dtype=dt)  # sums duplicates, keeps explicit zeros
    A.sort_indices()
    if A.nnz > MAX_NNZ:
        return None, "%d nonzeros" % A.nnz
    if not np.all(np.isfinite(A.data)):
        return None, "non-finite entries"
    return A, ""


def hermitian_posdiag(A):
    """CG's precondition: A = A^H (to rounding) and a positive real diagonal."""
    d = A.diagonal()
    if np.any(np.abs(d.imag) > 0) or np.any(d.real <= 0):
        return False
    D = (A - A.conj().T).tocsr()
    return D.nnz == 0 or np.abs(D.data).max() <= 1e-13 * np.abs(A.data).max()


def ilu0(A):
    """Plain ILU(0), IKJ over A's pattern S (rows sorted, a missing diagonal
    added as 0). A pivot |u_ii| <= 1e-8 r_i (r_i = max_j |s_ij|, 1 for an
    empty row) is replaced by 1e-3 r_i with the pivot's sign/phase, as hisp
    does. Returns L (unit lower, CSR), U (upper, CSR), the pivots shifted,
    the diagonals filled and the pivots with real part <= 0 (where A is
    Hermitian: an indefinite IC(0), which hisp's ic0 shifts away)."""
    n = A.shape[0]
    C = A.tocoo()
    has = np.zeros(n, bool)
    has[C.row[C.row == C.col]] = True
    miss = np.flatnonzero(~has)
    S = sp.csr_matrix((np.r_[C.data, np.zeros(len(miss), A.dtype)],
                       (np.r_[C.row, miss], np.r_[C.col, miss])), shape=A.shape)
    S.sort_indices()
    ip, ix, v = S.indptr, S.indices, S.data.copy()
    r = np.maximum.reduceat(np.abs(v), ip[:-1])  # every row has its diagonal
    r[~(np.isfinite(r) & (r > 0))] = 1.0
    dpos = np.array([ip[i] + np.searchsorted(ix[ip[i]:ip[i + 1]], i) for i in range(n)])
    pos = np.full(n, -1)
    shifted = 0
    for i in range(n):
        a, e = ip[i], ip[i + 1]
        pos[ix[a:e]] = np.arange(a, e)
        for k in range(a, dpos[i]):           # l_ik = a_ik / u_kk, row_i -= l_ik row_k
            j = ix[k]
            v[k] /= v[dpos[j]]
            s, t = dpos[j] + 1, ip[j + 1]
            if s < t:
                p = pos[ix[s:t]]
                m = p >= 0                    # fill-in outside S is dropped
                v[p[m]] -= v[k] * v[s:t][m]
        u = v[dpos[i]]
        mag = abs(u)
        if not (mag > PIVOT_TOL * r[i] and np.isfinite(mag)):
            v[dpos[i]] = PIVOT_SET * r[i] * (u / mag if 0 < mag < np.inf else 1)
            shifted += 1
        pos[ix[a:e]] = -1
    F = sp.csr_matrix((v, ix, ip), shape=A.shape)
    L = (sp.tril(F, -1) + sp.eye(n, dtype=A.dtype)).tocsr()
    U = sp.triu(F).tocsr()
    L.sort_indices(), U.sort_indices()
    return L, U, shifted, len(miss), int(np.sum(U.diagonal().real <= 0))


def scipy_run(A, b, method, pc, maxit):
    """One scipy solve: dict(conv, it, relres, setup_ms, total_ms, note)."""
    n, note, extra = A.shape[0], "", {}
    t0 = time.perf_counter()
    M = None
    if pc == "ilu0":
        L, U, sh, fi, npos = ilu0(A)
        extra = {"shifted": sh, "filled": fi, "nonpos": npos}
        M = sla.LinearOperator(A.shape, dtype=A.dtype, matvec=lambda x: sla.spsolve_triangular(
            U, sla.spsolve_triangular(L, x, lower=True, unit_diagonal=True), lower=False))
    elif pc == "spilu":
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                M = sla.LinearOperator(A.shape, dtype=A.dtype, matvec=sla.spilu(A.tocsc()).solve)
        except RuntimeError as e:
            return dict(conv=False, it=0, relres=float("nan"), setup_ms=0, total_ms=0,
                        note="spilu failed: " + re.sub(r"\s*at line \d+ in file \S+", "", str(e)).strip())
    setup = time.perf_counter() - t0
    its = [0]

    def count(_):
        its[0] += 1
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if method == "gmres":
                # 'legacy' passes the same per-inner-iteration residual as
                # 'pr_norm' and makes maxiter count inner iterations (hisp's
                # --maxit), not restart cycles
                x, info = sla.gmres(A, b, rtol=RTOL, restart=30, maxiter=maxit, M=M,
                                    callback=count, callback_type="legacy")
            else:
                x, info = sla.cg(A, b, rtol=RTOL, maxiter=maxit, M=M, callback=count)
    except Exception as e:
        x, info, note = np.zeros_like(b), -1, "%s: %s" % (type(e).__name__, e)
    total = time.perf_counter() - t0
    rel = float(np.linalg.norm(b - A @ x) / np.linalg.norm(b))
    conv = bool(rel <= OK)
    if not note and not conv:
        note = "no convergence" if np.isfinite(rel) else "NaN/Inf"
        if info == 0:
            note = "scipy info=0 but true residual above rtol"
    return dict(conv=conv, it=its[0], relres=rel, setup_ms=setup * 1e3, total_ms=total * 1e3,
                note=note, **extra)


def hisp_run(hisp, path, rhs, bnorm, method, pc, backend, maxit):
    cmd = [hisp, "solve", path, "--method", method, "--precond", pc, "--backend", backend,
           "--maxit", str(maxit), "--rtol", str(RTOL), "--rhs", rhs, "--json"]
    for attempt in range(4):  # the binary may be being rebuilt: missing, busy or dying on start
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
            if p.returncode not in (126, 127) and p.returncode >= 0:
                break
        except subprocess.TimeoutExpired:
            return dict(conv=False, it=0, relres=float("nan"), note="hisp timeout (120 s)")
        except OSError as e:
            p = subprocess.CompletedProcess(cmd, 127, "", str(e))
        if attempt < 3:
            log("  hisp did not start (%s), retrying in 30 s" % (p.stderr.strip()[-80:] or p.returncode))
            time.sleep(30)
    try:
        d = json.loads(p.stdout)
    except ValueError:
        msg = (p.stderr.strip().splitlines() or ["?"])[-1].replace(path, os.path.basename(path))[:120]
        return dict(conv=False, it=0, relres=float("nan"), note="hisp exit %d: %s" % (p.returncode, msg))
    rel = d.get("relative_residual", float("nan"))
    r = dict(conv=bool(d.get("converged")) and rel <= OK, it=d.get("iterations", 0), relres=rel,
             setup_ms=d.get("setup_ms", 0), total_ms=d.get("setup_ms", 0) + d.get("solve_ms", 0),
             shifted=d.get("precond_shifted"), filled=d.get("precond_filled"), note="",
             used=d.get("precond_used"), reason=d.get("reason", ""),
             diag_shift=d.get("precond_diag_shift"))
    if abs(d.get("rhs_norm", bnorm) - bnorm) > 1e-6 * bnorm:
        r["note"] = "hisp rhs_norm %.6g differs from ||b|| %.6g" % (d["rhs_norm"], bnorm)
    elif not r["conv"]:
        r["note"] = "hisp: " + r["reason"]
    return r


def matrix_list(o):
    if o.matrices:
        return [m for m in o.matrices.split(",") if m]
    files = sorted(glob.glob(os.path.join(o.shared, "matrices", "*.mtx")))
    if not o.quick:
        files += sorted(glob.glob(os.path.join(o.shared, "mm_ext", "**", "*.mtx"), recursive=True))
    return files


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--matrices", default="", help="comma list of .mtx paths (default: all)")
    ap.add_argument("--shared", default=os.path.join(REPO, "..", "shared"))
    ap.add_argument("--backends", default="opencl", help="comma list: opencl, reference, cuda")
    ap.add_argument("--hisp", default=os.path.join(REPO, "build", "bin", "hisp"))
    ap.add_argument("--maxit", type=int, default=5000)
    ap.add_argument("--out", help="also write the Markdown report here")
    ap.add_argument("--quick", action="store_true", help="only SHARED/matrices, not mm_ext")
    o = ap.parse_args()
    backends = [b for b in o.backends.split(",") if b]
    shared = os.path.realpath(o.shared)
    notes = {}  # footnote text -> letter

    def cell(r):
        if r is None:
            return "n/a"
        if r.get("conv"):  # three digits below 10 ms: the smallest solves take microseconds
            t = r["total_ms"]
            return "%d / %s" % (r["it"], "%.1f" % t if t >= 10 else "%.3g" % t)
        # one footnote per kind: hisp's error messages name the file, cut them
        key = r["note"].split(":")[0] if r["note"].startswith("hisp exit") else r["note"]
        letter = notes.setdefault(key, "abcdefghijklmnopqrstuvwxyz"[len(notes) % 26])
        rr = r.get("relres", float("nan"))
        return "— [%s]" % letter + (" %.1e" % rr if np.isfinite(rr) else "")

    rows, skipped, tmp = [], [], tempfile.mkdtemp(prefix="ilu_cpu_")
    for path in matrix_list(o):
        real = os.path.realpath(path)
        name = os.path.relpath(real, shared) if real.startswith(shared + os.sep) else path
        name = name[len("matrices/"):] if name.startswith("matrices/") else name
        A, why = load(path)
        if A is None:
            skipped.append("%s (%s)" % (name, why))
            continue
        n = A.shape[0]
        b = A @ np.ones(n, A.dtype)
        if not np.any(b):
            b = np.ones(n, A.dtype)
        bnorm = float(np.linalg.norm(b))
        rhs = os.path.join(tmp, "b.mtx")
        scipy.io.mmwrite(rhs, b.reshape(-1, 1), precision=17)
        methods = ["gmres"] + (["cg"] if hermitian_posdiag(A) else [])
        for m in methods:
            log("%s (%d rows, %d nnz) %s" % (name, n, A.nnz, m))
            res = {}
            for pc in ("none", "ilu0", "spilu"):
                res["scipy " + pc] = r = scipy_run(A, b, m, pc, o.maxit)
                log("  scipy %-6s %s" % (pc, cell(r)))
            for be in backends:
                for pc in ("none", "jacobi") + (("ilu0",) if m == "gmres" else ("ic0", "chebyshev")):
                    res["%s %s" % (be, pc)] = r = hisp_run(o.hisp, path, rhs, bnorm, m, pc, be, o.maxit)
                    log("  %s %-6s %s" % (be, pc, cell(r)))
            rows.append(dict(name=name, n=n, nnz=A.nnz, method=m, res=res))
    shutil.rmtree(tmp, ignore_errors=True)

    # ---- the report
    out = []
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    out.append("# hisp vs scipy, preconditioned Krylov\n")
    out.append("%s; %d CPUs (nproc), %s; scipy %s, numpy %s; backends: %s\n" % (
        datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), len(os.sched_getaffinity(0)), cpu,
        scipy.__version__, np.__version__, ", ".join(backends)))
    out.append("rhs: b = A @ ones (ones where that is 0) for both: scipy uses it directly, hisp reads it "
               "with --rhs FILE (a Matrix Market array written by this script; its rhs_norm is checked). "
               "rtol %g on the true relative residual, at most %d iterations (GMRES(30): inner "
               "iterations). Cells: iterations / total ms (setup + solve); — = not converged, "
               "[letter] the reason, then the final relative residual. For cg rows the ILU(0) column "
               "is ILU(0) = IC(0) (L D L^H) and hisp's is ic0; chebyshev runs on cg rows only.\n" % (RTOL, o.maxit))
    hcols = ["%s %s" % (be, pc) for be in backends for pc in ("none", "jacobi", "ilu0", "chebyshev")]
    cols = ["scipy none", "scipy ilu0", "scipy spilu"] + hcols
    out.append("| matrix | rows | nnz | method | " + " | ".join(cols) + " |")
    out.append("|---|---:|---:|---|" + "---:|" * len(cols))
    for R in rows:
        cells = []
        for c in cols:
            k = c if R["method"] == "gmres" else c.replace(" ilu0", " ic0") if not c.startswith("scipy") else c
            cells.append(cell(R["res"].get(k)))
        out.append("| %s | %d | %d | %s | %s |" % (R["name"], R["n"], R["nnz"], R["method"], " | ".join(cells)))
    out.append("")
    for text, letter in notes.items():
        out.append("[%s] %s  " % (letter, text))
    # the factorisations: setup ms and what each rule did to the pivots
    out.append("\nFactorisations (setup ms; plain: pivots shifted / diagonals filled / pivots <= 0; "
               "hisp: shifted / filled / IC(0) diagonal shift; the last of each on cg rows only):\n")
    for R in rows:
        r, pc = R["res"], "ilu0" if R["method"] == "gmres" else "ic0"
        p = r["scipy ilu0"]
        cg = R["method"] == "cg"  # pivots <= 0 and the diagonal shift: IC(0) only
        line = "- %s %s: plain %.1f ms (%d/%d%s), spilu %.1f ms" % (
            R["name"], R["method"], p["setup_ms"], p["shifted"], p["filled"],
            "/%d" % p["nonpos"] if cg else "", r["scipy spilu"]["setup_ms"])
        for be in backends:
            h = r["%s %s" % (be, pc)]
            line += ", hisp %s %s %.1f ms (%s/%s%s)" % (be, pc, h.get("setup_ms", float("nan")), h.get("shifted"),
                                                       h.get("filled"), "/%s" % h.get("diag_shift") if cg else "")
        out.append(line)

    # ---- summary: ILU(0) against ILU(0) on the gmres rows, IC(0) on the cg rows
    for meth, pc, label in (("gmres", "ilu0", "ILU(0)"), ("cg", "ic0", "IC(0)")):
        g = [R for R in rows if R["method"] == meth]
        if not g:
            continue
        solves = lambda k: [R["name"] for R in g if R["res"][k]["conv"]]
        out.append("\n## Summary: %s, %s (%d matrices)\n" % (meth, label, len(g)))
        for who, k in [("plain " + label, "scipy ilu0"), ("spilu", "scipy spilu")] + \
                      [("hisp %s %s" % (be, pc), "%s %s" % (be, pc)) for be in backends]:
            out.append("- %s solves %d: %s" % (who, len(solves(k)), ", ".join(solves(k))))
        for be in backends:
            k = "%s %s" % (be, pc)
            miss = [R for R in g if R["res"]["scipy ilu0"]["conv"] and not R["res"][k]["conv"]]

            def not_counted(R):  # a miss that says nothing about hisp's factorisation (listed below)
                if R["res"]["%s none" % be]["note"].startswith("hisp exit 2"):
                    return "hisp's reader refuses the file (every hisp run exits 2)"
                if meth == "cg" and R["res"]["scipy ilu0"]["nonpos"]:
                    return "the plain IC(0) has pivots <= 0 (A or its IC(0) indefinite): hisp's ic0 shifts by design"
                return ""
            target = [R for R in miss if not not_counted(R)]
            out.append("\n**Plain %s solves, hisp %s %s does not (target: none): %d**" % (label, be, pc, len(target)))
            for R in target:
                p, h = R["res"]["scipy ilu0"], R["res"][k]
                out.append("- %s: plain %d it, relres %.2e, shifted %d, filled %d, pivots <= 0: %d; "
                           "hisp %d it, relres %.3e, %s, shifted %s, filled %s, diag shift %s" % (
                               R["name"], p["it"], p["relres"], p["shifted"], p["filled"], p["nonpos"],
                               h["it"], h["relres"], h["note"], h.get("shifted"), h.get("filled"),
                               h.get("diag_shift")))
            if len(miss) > len(target):
                out.append("\nNot counted (%d):" % (len(miss) - len(target)))
                out += ["- %s: %s; hisp: %s" % (R["name"], not_counted(R), R["res"][k]["note"])
                        for R in miss if not_counted(R)]
            both = [R for R in g if R["res"]["scipy spilu"]["conv"] and R["res"][k]["conv"]]
            if both:
                gm = math.exp(np.mean([math.log(R["res"]["scipy spilu"]["total_ms"] /
                                                max(R["res"][k]["total_ms"], 1e-6)) for R in both]))
                out.append("\nGeometric mean of (scipy spilu+%s total) / (hisp %s %s total) over the %d "
                           "matrices both solve: %.2f (> 1: hisp faster)" % (meth, be, pc, len(both), gm))
    out.append("\nSkipped (%d): %s" % (len(skipped), "; ".join(skipped) or "none"))
    text = "\n".join(out) + "\n"
    print(text)
    if o.out:
        with open(o.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
