#!/usr/bin/env python3
"""The CLI tests' oracle for the diffusion generators (tests/check_cli.c):
a file `hisp gen` wrote against an independent construction.

  gen_scipy.py aniso3d FILE.mtx N EPSILON
  gen_scipy.py jump3d FILE.mtx N BLOCK CONTRAST

aniso3d: equal (within 1e-15 relative) to epsilon*Tz + Ty + Tx, the Kronecker
sums of the 1D Dirichlet Laplacian tridiag(-1, 2, -1) on N points.
jump3d: symmetric; its coefficients are constant on cubes of BLOCK^3
cells, each 1 or CONTRAST, and both occur (when there are cubes enough);
every coupling is the harmonic mean of its cells' coefficients; each row
sums to its missing neighbours' couplings (k of the cell per grid face);
positive definite (a Cholesky factorisation of the dense matrix).
Exit 0 when it holds, 77 when scipy is missing, 1 with the reason.
"""
import sys

try:
    import numpy as np
    import scipy.io
    import scipy.sparse as sp
except ImportError as e:
    print("scipy is not installed (%s)" % e)
    sys.exit(77)


def fail(msg):
    print(msg)
    sys.exit(1)


def lap1(n):
    return sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1])


def aniso(A, n, eps):
    I = sp.identity(n)
    T = lap1(n)
    want = eps * sp.kron(sp.kron(T, I), I) + sp.kron(sp.kron(I, T), I) + sp.kron(sp.kron(I, I), T)
    d = abs(A - want).max()
    if d > 1e-15 * abs(want).max():
        fail("aniso3d differs from eps*Tz + Ty + Tx by %g" % d)


def jump(A, n, b, c):
    if abs(A - A.T).max() != 0:
        fail("jump3d is not symmetric")
    D = A.toarray()
    idx = lambda x, y, z: (z * n + y) * n + x
    # each cell's k from a coupling to a neighbour in the same cube, else
    # from the diagonal of a cell whose neighbours all share its cube
    k = np.zeros(n ** 3)
    for z in range(n):
        for y in range(n):
            for x in range(n):
                i = idx(x, y, z)
                for (a, bb, cc) in ((x + 1, y, z), (x - 1, y, z), (x, y + 1, z), (x, y - 1, z),
                                    (x, y, z + 1), (x, y, z - 1)):
                    if 0 <= a < n and 0 <= bb < n and 0 <= cc < n and \
                            (a // b, bb // b, cc // b) == (x // b, y // b, z // b):
                        k[i] = -D[i, idx(a, bb, cc)]
                        break
    if b == 1:
        fail("jump3d: use BLOCK > 1 in this oracle")
    if not np.all((k == 1) | (k == c)):
        fail("jump3d: coefficients outside {1, %g}: %s" % (c, sorted(set(k))))
    nb = (n + b - 1) // b
    cubes = {}
    for z in range(n):
        for y in range(n):
            for x in range(n):
                key = (x // b, y // b, z // b)
                if cubes.setdefault(key, k[idx(x, y, z)]) != k[idx(x, y, z)]:
                    fail("jump3d: cube %s has two coefficients" % (key,))
    if nb ** 3 >= 8 and len(set(cubes.values())) < 2:
        fail("jump3d: one coefficient in all %d cubes" % nb ** 3)
    hm = lambda p, q: 2 * p * q / (p + q)
    for z in range(n):
        for y in range(n):
            for x in range(n):
                i = idx(x, y, z)
                diag = 0.0
                for (a, bb, cc) in ((x, y, z - 1), (x, y - 1, z), (x - 1, y, z), (x + 1, y, z),
                                    (x, y + 1, z), (x, y, z + 1)):
                    if 0 <= a < n and 0 <= bb < n and 0 <= cc < n:
                        j = idx(a, bb, cc)
                        w = hm(k[i], k[j])
                        if abs(D[i, j] + w) > 1e-13 * w:
                            fail("jump3d: coupling (%d, %d) is %r, not -%r" % (i, j, D[i, j], w))
                        diag += w
                    else:
                        diag += k[i]
                if abs(D[i, i] - diag) > 1e-13 * diag:
                    fail("jump3d: diagonal %d is %r, not %r" % (i, D[i, i], diag))
    if np.count_nonzero(D) != A.nnz:
        fail("jump3d: explicit zeros")
    try:
        np.linalg.cholesky(D)
    except np.linalg.LinAlgError:
        fail("jump3d: not positive definite")


def main():
    kind, path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    A = scipy.io.mmread(path).tocsr()
    if A.shape != (n ** 3, n ** 3):
        fail("shape %s, not %d^3 square" % (A.shape, n))
    if kind == "aniso3d":
        aniso(A, n, float(sys.argv[4]))
    else:
        jump(A, n, int(sys.argv[4]), float(sys.argv[5]))


if __name__ == "__main__":
    main()
