#!/usr/bin/env python3
"""fast_matrix_market's side of bench/mm_speed.sh: wall time per call of
read_coo / write_coo with the given parallelism; prints one line per call
and the median, in the format of bench_mm."""
import statistics
import sys
import time

import fast_matrix_market as fmm

op, path, threads, reps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
t = []
if op == "read":
    for _ in range(reps):
        t0 = time.perf_counter()
        (data, (i, j)), shape = fmm.read_coo(path, parallelism=threads)
        t.append(time.perf_counter() - t0)
        print("fmm read %.4f" % t[-1], flush=True)
        nnz = len(data)
        del data, i, j
else:
    out = sys.argv[5]
    (data, (i, j)), shape = fmm.read_coo(path, parallelism=threads)
    nnz = len(data)
    for _ in range(reps):
        t0 = time.perf_counter()
        fmm.write_coo(out, (data, (i, j)), shape=shape, parallelism=threads)
        t.append(time.perf_counter() - t0)
        print("fmm write %.4f" % t[-1], flush=True)
print("fmm %s median %.4f s (%d calls, %d threads, %d entries)"
      % (op, statistics.median(t), reps, threads, nnz))
