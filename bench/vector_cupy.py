#!/usr/bin/env python3
"""CuPy as the peer of hisp's vector algebra (bench_vector): axpby, dot, nrm2
and a device-to-device copy on n-entry vectors, in the way a CuPy user writes
them. Two times per operation, medians of --repeat runs after --warmup:

  wall   ms per call, host clock, with a stream synchronize after each call
  device ms per call from CUDA events around the call

GB/s counts the bytes each operation must move (axpby: x, y read and y
written; dot: x, y read; nrm2: x read; copy: read + write) and the last
column is the fraction of the copy's bandwidth measured here.

  python3 vector_cupy.py [--n 33554432] [--type f64|f32|c64|c32] [--repeat 50]
                         [--warmup 5] [--json FILE]
"""
import argparse
import json
import statistics
import sys
import time

try:
    import cupy as cp
except ImportError:
    print("vector_cupy: CuPy is not installed", file=sys.stderr)
    sys.exit(3)

TYPES = {"f64": cp.float64, "f32": cp.float32, "c64": cp.complex128, "c32": cp.complex64}


def timed(fn, warmup, repeat):
    stream = cp.cuda.get_current_stream()
    for _ in range(warmup):
        fn()
    stream.synchronize()
    wall, dev = [], []
    e0, e1 = cp.cuda.Event(), cp.cuda.Event()
    for _ in range(repeat):
        t0 = time.perf_counter()
        e0.record(stream)
        fn()
        e1.record(stream)
        stream.synchronize()
        wall.append((time.perf_counter() - t0) * 1e3)
        dev.append(cp.cuda.get_elapsed_time(e0, e1))
    return statistics.median(wall), statistics.median(dev)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--n", type=int, default=1 << 25)
    ap.add_argument("--type", default="f64", choices=sorted(TYPES))
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--json")
    a = ap.parse_args()
    dt = TYPES[a.type]
    es = cp.dtype(dt).itemsize
    n = a.n
    rng = cp.random.default_rng(1)
    x = rng.uniform(-1, 1, n).astype(dt)
    y = rng.uniform(-1, 1, n).astype(dt)
    z = cp.empty_like(x)
    alpha, beta = dt(0.75), dt(-0.5)
    # y = alpha*x + beta*y in one pass, as a CuPy user writes a fused update
    axpby = cp.ElementwiseKernel("T a, T x, T b", "T y", "y = a * x + b * y", "hisp_axpby")
    ops = {
        "copy": (lambda: z.__setitem__(slice(None), x), 2 * n * es),
        "axpby": (lambda: axpby(alpha, x, beta, y), 3 * n * es),
        "dot": (lambda: cp.vdot(x, y), 2 * n * es),
        "nrm2": (lambda: cp.linalg.norm(x), n * es),
    }
    rows = {}
    for name, (fn, nbytes) in ops.items():
        w, d = timed(fn, a.warmup, a.repeat)
        rows[name] = {"wall_ms": w, "device_ms": d, "bytes": nbytes, "gbs": nbytes / d * 1e-6}
    copy_gbs = rows["copy"]["gbs"]
    dev = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    print(f"CuPy {cp.__version__} on {dev}: n = {n}, {a.type}")
    print(f"{'op':8} {'wall ms':>10} {'device ms':>10} {'GB/s':>8} {'of copy':>8}")
    for name, r in rows.items():
        r["of_copy"] = r["gbs"] / copy_gbs
        print(f"{name:8} {r['wall_ms']:10.4f} {r['device_ms']:10.4f} {r['gbs']:8.0f} "
              f"{100 * r['of_copy']:7.1f}%")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"cupy": cp.__version__, "device": dev, "n": n, "type": a.type,
                       "ops": rows}, f, indent=1)


if __name__ == "__main__":
    main()
