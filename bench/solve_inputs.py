"""Inputs of the solver benchmarks in numpy/scipy, identical to the C side
(bench/common_solve.c, hisp's generators and `hisp bench`'s vectors), so
that solve_scipy.py and solve_cupy.py solve the same systems as `hisp bench
--op solve` (its b is uniform(7, n)) / bench_solve_cuda:

  uniform(seed, n)        entry i = bs_uniform(seed, i) (splitmix64 -> [-1, 1))
  poisson3d(s)            hisp_matrix_generate poisson3d: 7-point Laplacian on
                          an s^3 grid, natural order (x fastest), 6 on the
                          diagonal, -1 off it (core/gen/gen.c)
  lsq_matrix(m, n, npr)   bs_lsq_matrix: row i's entry k in column band k
"""
import numpy as np
import scipy.sparse as sp

_U = np.uint64


def mix(seed, i):
    """splitmix64 of (seed, i) for a uint64 array i (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        z = _U(seed) + (i + _U(1)) * _U(0x9E3779B97F4A7C15)
        z = (z ^ (z >> _U(30))) * _U(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> _U(27))) * _U(0x94D049BB133111EB)
        return z ^ (z >> _U(31))


def uniform(seed, n):
    i = np.arange(n, dtype=np.uint64)
    return (mix(seed, i) >> _U(11)).astype(np.float64) * (2.0 / 9007199254740992.0) - 1.0


def poisson3d(s):
    n = s ** 3
    i = np.arange(n, dtype=np.int64)
    x, y, z = i % s, (i // s) % s, i // (s * s)
    rows, cols, vals = [], [], []
    for off, mask, v in ((-s * s, z > 0, -1.0), (-s, y > 0, -1.0), (-1, x > 0, -1.0),
                         (0, None, 6.0), (1, x < s - 1, -1.0), (s, y < s - 1, -1.0),
                         (s * s, z < s - 1, -1.0)):
        r = i if mask is None else i[mask]
        rows.append(r)
        cols.append(r + off)
        vals.append(np.full(r.size, v))
    del x, y, z
    A = sp.coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(n, n)).tocsr()
    A.sort_indices()
    return A


def lsq_matrix(m, ncols, npr, seed=11):
    band = ncols // npr
    e = np.arange(m * npr, dtype=np.uint64)
    k = (e % _U(npr)).astype(np.int64)
    col = k * band + (mix(seed, e) % _U(band)).astype(np.int64)
    val = (mix(seed + 1, e) >> _U(11)).astype(np.float64) * (2.0 / 9007199254740992.0) - 1.0
    indptr = np.arange(0, m * npr + 1, npr, dtype=np.int64)
    return sp.csr_matrix((val, col.astype(np.int32), indptr), shape=(m, ncols))


def same_as_mtx(A, path):
    """True when A equals the Matrix Market file (hisp gen's output)."""
    import scipy.io
    B = scipy.io.mmread(path).tocsr()
    B.sort_indices()
    return A.shape == B.shape and A.nnz == B.nnz and abs(A - B).max() == 0
