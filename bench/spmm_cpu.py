#!/usr/bin/env python3
"""SpMM on the CPU: `hisp spmv A --x X.mtx` (k columns, hisp_spmm on the
chosen backend) against scipy's A @ X on the same files, in one run.

    python3 bench/spmm_cpu.py --hisp build/bin/hisp [--backend opencl]
        [--specs poisson3d:48,banded:200000,rmat:16] [--columns 4,16] [--repeat 10]

hisp: the CLI's wall time per call with a synchronize (median of --repeat,
after a warm-up call), from --json; scipy: the median of --repeat A @ X
(X C-ordered for row, Fortran-ordered for col, as the CLI's file reads:
column-major). Prints a markdown table; exit 1 when a result differs from
scipy's by more than 1e-12 (relative, f64)."""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import scipy.io
import scipy.sparse


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), r.stderr))
    return r.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hisp", default="build/bin/hisp")
    ap.add_argument("--backend", default="opencl")
    ap.add_argument("--specs", default="poisson3d:48,banded:200000,rmat:16")
    ap.add_argument("--columns", default="4,16")
    ap.add_argument("--repeat", type=int, default=10)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="spmm-cpu-")
    print("| matrix | rows | nnz | k | hisp ms | scipy ms | **scipy / hisp** | rel. diff |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|")
    bad = 0
    for spec in a.specs.split(","):
        kind, n = spec.split(":")
        path = os.path.join(tmp, kind + ".mtx")
        args = [a.hisp, "gen", kind, "-o", path]
        args += ["--scale", n] if kind == "rmat" else ["--n", n]
        run(args)
        A = scipy.sparse.csr_matrix(scipy.io.mmread(path))
        for k in [int(c) for c in a.columns.split(",")]:
            rng = np.random.default_rng(k)
            X = rng.uniform(-1, 1, (A.shape[1], k))
            xp, yp = os.path.join(tmp, "x.mtx"), os.path.join(tmp, "y.mtx")
            scipy.io.mmwrite(xp, X)
            out = run([a.hisp, "spmv", path, "--x", xp, "-o", yp, "--backend", a.backend,
                       "--repeat", str(a.repeat), "--json"])
            hj = json.loads(out)
            hms = hj["timing"]["median_ms"]
            Y = scipy.io.mmread(yp)
            Xf = np.asfortranarray(X)
            ts = []
            for _ in range(a.repeat + 1):
                t0 = time.perf_counter()
                R = A @ Xf
                ts.append((time.perf_counter() - t0) * 1e3)
            sms = float(np.median(ts[1:]))
            diff = np.linalg.norm(Y - R) / max(np.linalg.norm(R), 1e-300)
            bad += diff > 1e-12
            print("| %s %s | %d | %d | %d | %.3f | %.3f | **%.2f** | %.1e |"
                  % (kind, n, A.shape[0], A.nnz, k, hms, sms, sms / hms, diff))
            sys.stdout.flush()
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
