#!/usr/bin/env python3
"""The CLI tests' second oracle for `hisp multiply` (tests/check_cli.c): C as
hisp wrote it against scipy's product of the same files.

  spgemm_scipy.py C.mtx A.mtx [B.mtx] [--ta n|t|h] [--tb n|t|h] [--ptap]

Without B, B = A; --ptap: C = A^T B A (A the P). Passes (exit 0) when every
entry of scipy's C is in hisp's at the same place, hisp's other entries are
0 (products that cancel stay entries in hisp and not in scipy), and the
values agree within 1e-12 of the largest |entry| (f64, c64). Exit 77 when
scipy is missing; 1 with the reason otherwise.
"""
import sys

try:
    import numpy as np
    import scipy.io
except ImportError as e:
    print("scipy is not installed (%s)" % e)
    sys.exit(77)


def op(X, o):
    return X.T if o == "t" else X.conj().T if o == "h" else X


def main():
    args, ta, tb, ptap = [], "n", "n", False
    it = iter(sys.argv[1:])
    for a in it:
        if a == "--ta":
            ta = next(it)
        elif a == "--tb":
            tb = next(it)
        elif a == "--ptap":
            ptap = True
        else:
            args.append(a)
    C = scipy.io.mmread(args[0]).tocsr()
    A = scipy.io.mmread(args[1]).tocsr()
    B = scipy.io.mmread(args[2]).tocsr() if len(args) > 2 else A
    R = (A.T @ (B @ A)) if ptap else (op(A, ta) @ op(B, tb))
    R = R.tocsr()
    if C.shape != R.shape:
        sys.exit("shape %s, scipy %s" % (C.shape, R.shape))
    D = (C - R).tocsr()
    scale = max(abs(R).max() if R.nnz else 0.0, 1e-300)
    err = abs(D).max() / scale if D.nnz else 0.0
    Rp, Cp = R.copy(), C.copy()
    Rp.data[:] = 1
    Cp.data[:] = 1
    missing = (Rp - Rp.multiply(Cp)).count_nonzero()  # scipy's entries hisp lacks
    if missing:
        sys.exit("%d of scipy's %d entries are not in hisp's C" % (missing, R.nnz))
    if err > 1e-12:
        sys.exit("max |hisp - scipy| / max |scipy| = %.3g" % err)
    print("ok: %d entries (scipy %d), relative difference %.2g" % (C.nnz, R.nnz, err))


if __name__ == "__main__":
    main()
