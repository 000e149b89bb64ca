#!/usr/bin/env python3
"""The CLI tests' second oracle for `hisp spmv --x X.mtx` with X of several
columns (tests/check_cli.c): Y as hisp wrote it against scipy's product of
the same files (X and Y0 arrays; a coordinate file is read as scipy reads it,
repeated entries summed, where hisp keeps the last).

  spmm_scipy.py Y.mtx A.mtx X.mtx [--y0 Y0.mtx] [--alpha a] [--beta b] [--op n|t|h]

Y = alpha op(A) @ X + beta Y0 (Y0 = 0 when absent; alpha 1, beta 0 by
default). Passes (exit 0) when Y has scipy's shape and its entries agree
within 1e-12 of the largest |entry| of scipy's. Exit 77 when scipy is
missing; 1 with the reason otherwise.
"""
import sys

try:
    import numpy as np
    import scipy.io
    import scipy.sparse as sp
except ImportError as e:
    print("scipy is not installed (%s)" % e)
    sys.exit(77)


def dense(path):
    M = scipy.io.mmread(path)
    return M.toarray() if sp.issparse(M) else np.asarray(M)


def main():
    args, y0, alpha, beta, op = [], None, 1.0, 0.0, "n"
    it = iter(sys.argv[1:])
    for a in it:
        if a == "--y0":
            y0 = next(it)
        elif a == "--alpha":
            alpha = float(next(it))
        elif a == "--beta":
            beta = float(next(it))
        elif a == "--op":
            op = next(it)
        else:
            args.append(a)
    Y = dense(args[0])
    A = scipy.io.mmread(args[1]).tocsr()
    X = dense(args[2])
    A = A.T if op == "t" else A.conj().T if op == "h" else A
    R = alpha * (A @ X)
    if y0 is not None:
        R = R + beta * dense(y0)
    if Y.shape != R.shape:
        sys.exit("shape %s, scipy %s" % (Y.shape, R.shape))
    scale = max(np.abs(R).max() if R.size else 0.0, 1e-300)
    err = np.abs(Y - R).max() / scale if R.size else 0.0
    if err > 1e-12:
        sys.exit("max |hisp - scipy| / max |scipy| = %.3g" % err)
    print("ok: %d x %d, relative difference %.2g" % (R.shape[0], R.shape[1], err))


if __name__ == "__main__":
    main()
