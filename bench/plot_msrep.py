#!/usr/bin/env python3
"""Speedup plots of the MSREP benchmark (bench_msrep_cuda CSV files, as
written by bench/msrep_suite.sh): one PNG per matrix and size, per-SpMV
speedup over one GPU against the GPU count, one line per kind and variant
(same kind and variant on one GPU as the base), with the ideal line.

  python3 bench/plot_msrep.py a.csv [b.csv ...] [-o DIR] [--prefix NAME]

Needs matplotlib (Debian: apt-get install -y python3-matplotlib).
"""
import argparse
import collections
import csv
import os
import sys

NEEDED = ['matrix', 'nnz', 'kind', 'variant', 'gpus', 'call_ms']


def read(paths):
    rows = []
    for p in paths:
        with open(p, newline='') as f:
            r = csv.DictReader(f)
            missing = [c for c in NEEDED if c not in (r.fieldnames or [])]
            if missing:
                sys.exit('%s: missing column(s) %s (bench_msrep_cuda --csv)' % (p, ', '.join(missing)))
            rows.extend(r)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('csv', nargs='+')
    ap.add_argument('-o', '--out', default='.')
    ap.add_argument('--prefix', default='msrep')
    a = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit('plot_msrep.py needs matplotlib (apt-get install -y python3-matplotlib)')
    rows = read(a.csv)
    by_matrix = collections.OrderedDict()
    for r in rows:
        key = (r['matrix'], int(r['nnz']))
        line = (r['kind'], r['variant'])
        by_matrix.setdefault(key, collections.OrderedDict()).setdefault(line, {})[int(r['gpus'])] = float(r['call_ms'])
    os.makedirs(a.out, exist_ok=True)
    for (matrix, nnz), lines in by_matrix.items():
        fig, ax = plt.subplots(figsize=(7, 4.5))
        gmax = 1
        for (kind, variant), t in lines.items():
            if 1 not in t:
                continue
            g = sorted(t)
            gmax = max(gmax, g[-1])
            ax.plot(g, [t[1] / t[x] for x in g], marker='o', label='%s %s' % (kind, variant),
                    linestyle='--' if kind in ('rowblock', 'colblock') else '-')
        ax.plot([1, gmax], [1, gmax], color='grey', linewidth=0.8, label='ideal')
        ax.set_xlabel('GPUs')
        ax.set_ylabel('per-SpMV speedup over 1 GPU')
        ax.set_title('%s, %.2f billion nonzeros' % (matrix, nnz / 1e9))
        ax.set_xticks(sorted({x for t in lines.values() for x in t}))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, ncol=2)
        path = os.path.join(a.out, '%s-%s-%d.png' % (a.prefix, matrix, nnz))
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
        print(path)


if __name__ == '__main__':
    main()
