#!/usr/bin/env python3
"""The prolongator of the SpGEMM benchmark's P^T*A*P (bench/spgemm_gpu.sh):
for hisp's poisson3d n^3 (the 7-point Laplacian, rows in x-fastest order),
smoothed aggregation with aggregates of 3x3x3 grid points: P0 has one 1 per
row in its aggregate's column, P = (I - omega D^-1 A) P0 with omega = 2/3
(4/3 over the bound 2 of D^-1 A's spectral radius for this stencil).
Writes P.mtx.

  python3 spgemm_inputs.py A.mtx N P.mtx
"""
import sys

import numpy as np
import scipy.io
import scipy.sparse as sp


def main():
    a_path, n, p_path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    A = scipy.io.mmread(a_path).tocsr()
    g = (n + 2) // 3
    i = np.arange(n ** 3)
    x, y, z = i % n, (i // n) % n, i // (n * n)
    agg = (x // 3) + g * ((y // 3) + g * (z // 3))
    P0 = sp.csr_matrix((np.ones(n ** 3), (i, agg)), shape=(n ** 3, g ** 3))
    Dinv = sp.diags(1.0 / A.diagonal())
    P = (P0 - (2.0 / 3.0) * (Dinv @ (A @ P0))).tocsr()
    P.eliminate_zeros()
    scipy.io.mmwrite(p_path, P)


if __name__ == "__main__":
    main()
