#!/usr/bin/env python3
"""fast_matrix_market's side of bench/mm_speed.sh: wall time per call of
read_coo / write_coo with the given parallelism; prints one line per call
and the median. `mm_speed.py hisp read|write CONVERT.json` prints hisp's
side (`hisp convert --repeat N --json`) in the same format."""
import json
import statistics
import sys
import time

import fast_matrix_market as fmm

if sys.argv[1] == "hisp":
    op, path = sys.argv[2], sys.argv[3]
    with open(path) as f:
        c = json.load(f)
    t = [ms / 1e3 for ms in c["timing"][op + "_calls_ms"]]
    for s in t:
        print("hisp %s %.4f" % (op, s))
    print("hisp %s median %.4f s (%d calls, %d threads, %d x %d, %d entries)"
          % (op, statistics.median(t), len(t), c["timing"]["threads"], c["rows"], c["cols"],
             c["nnz"]))
    sys.exit(0)
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
