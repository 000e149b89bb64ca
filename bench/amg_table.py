#!/usr/bin/env python3
"""The AMG-CG against Jacobi-CG table from amg_gpu.sh's JSON files: per
system the iterations and the time as the user waits (setup_ms + solve_ms;
prepare_ms, the matrix's upload and kernel builds, apart), the V-cycle's
cost per iteration against one SpMV.

  python3 bench/amg_table.py DIR
  python3 bench/amg_table.py --reuse DIR   (the --solves 5 runs: AMG's setup
      once, its median solve and update (--update) against
      Jacobi-CG's median solve, setup in)
"""
import glob
import json
import os
import sys


def load(d):
    runs = {}
    for f in sorted(glob.glob(os.path.join(d, "*.json"))):
        kind, n, pc = os.path.basename(f)[:-5].rsplit("_", 2)
        try:
            with open(f) as fh:
                runs[(kind, int(n), pc)] = json.load(fh)
        except (ValueError, OSError):
            pass
    return runs


def reuse(d):
    runs = load(d)
    print()
    print("| system | rows | Jacobi-CG ms per solve | AMG setup once ms | AMG-CG ms per solve "
          "| 5 solves: Jacobi-CG / AMG-CG ms | speed-up | AMG update ms |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|")
    for kind, n in sorted({(k, n) for k, n, _ in runs}, key=lambda t: (t[1], t[0])):
        j, a = runs.get((kind, n, "jacobi")), runs.get((kind, n, "amg"))
        if not j or not a:
            continue
        jt = 5 * j["median_solve_ms"]
        at = a["precond_setup_ms"] + 5 * a["median_solve_ms"]
        upd = "%.1f" % a["median_update_ms"] if "median_update_ms" in a else "-"
        print("| %s %d^3 | %d | %.1f | %.1f | %.1f | %.0f / %.0f | %.2f | %s |" %
              (kind, n, a["rows"] * block(a), j["median_solve_ms"], a["precond_setup_ms"],
               a["median_solve_ms"], jt, at, jt / at, upd))


def main():
    if sys.argv[1] == "--reuse":
        return reuse(sys.argv[2])
    runs = load(sys.argv[1])
    print("| system | rows | Jacobi-CG it / ms | AMG-CG it / setup ms / solve ms / total ms "
          "| AMG iteration / SpMV | speed-up |")
    print("|---|--:|--:|--:|--:|--:|")
    for kind, n in sorted({(k, n) for k, n, _ in runs}, key=lambda t: (t[1], t[0])):
        j, a = runs.get((kind, n, "jacobi")), runs.get((kind, n, "amg"))
        jt = j["setup_ms"] + j["solve_ms"] if j else None
        at = a["setup_ms"] + a["solve_ms"] if a else None
        jc = "%d / %.1f" % (j["iterations"], jt) if j else "-"
        ac = ("%d / %.1f / %.1f / %.1f" % (a["iterations"], a["setup_ms"], a["solve_ms"], at)
              if a else "-")
        ratio = "%.1f" % (a["ms_per_iteration"] / a["spmv_ms"]) if a and a["spmv_ms"] else "-"
        sp = "%.2f" % (jt / at) if jt and at else "-"
        conv = "" if not a or a["converged"] else " (not converged)"
        print("| %s %d^3 | %d | %s | %s%s | %s | %s |" %
              (kind, n, (a or j)["rows"] * block(a or j), jc, ac, conv, ratio, sp))
    single = sorted({(k, n) for k, n, pc in runs if pc == "amg1"}, key=lambda t: (t[1], t[0]))
    if single:
        print()
        print("| system | AMG-CG, nodes of 3: it / total ms | AMG-CG, single rows: it / total ms |")
        print("|---|--:|--:|")
    for kind, n in single:
        cols = []
        for pc in ("amg", "amg1"):
            r = runs.get((kind, n, pc))
            cols.append("%d / %.1f%s" % (r["iterations"], r["setup_ms"] + r["solve_ms"],
                                         "" if r["converged"] else " (not converged)")
                        if r else "-")
        print("| %s %d^3 | %s | %s |" % (kind, n, cols[0], cols[1]))


def block(r):
    """scalar rows per row of the report (3 for 3x3 blocks)"""
    return 3 if r["type"].startswith("b3x3") else 1


if __name__ == "__main__":
    sys.exit(main())
