#!/usr/bin/env python3
"""Grouped bar charts of bench results: GFLOP/s per matrix, one bar per
implementation, one PNG per (precision, op).

Reads one or more CSV files in the schema of bench/README.md (the CPU bench
and the CUDA bench write the same columns); rows from several files are
merged. An implementation measured on several devices (hisp-opencl on a GPU
and on a CPU) gets one bar per device.

  python3 bench/plot.py results.csv [gpu.csv ...] [-o DIR] [--prefix NAME]
                        [--metric gflops|gbs|bw_fraction|median_ms] [--log]

Needs matplotlib (Debian: apt-get install -y python3-matplotlib).
"""
import argparse
import csv
import os
import sys

COLUMNS = ['matrix', 'precision', 'op', 'impl', 'device', 'rows', 'cols', 'nnz', 'median_ms',
           'min_ms', 'gflops', 'gbs', 'bw_fraction', 'rel_error']
LABELS = {'gflops': 'GFLOP/s (2 nnz / median time)', 'gbs': 'GB/s (byte model / median time)',
          'bw_fraction': 'fraction of measured copy bandwidth',
          'median_ms': 'median time (ms)'}


def read_rows(paths):
    rows = []
    for p in paths:
        with open(p, newline='') as f:
            r = csv.DictReader(f)
            missing = [c for c in COLUMNS if c not in (r.fieldnames or [])]
            if missing:
                sys.exit('%s: missing column(s) %s (schema: bench/README.md)' % (p, ', '.join(missing)))
            for row in r:
                rows.append(row)
    return rows


def bar_labels(rows):
    """impl, or 'impl (device)' where an impl appears on several devices."""
    devices = {}
    for r in rows:
        devices.setdefault(r['impl'], set()).add(r['device'])
    return lambda r: r['impl'] if len(devices[r['impl']]) == 1 else '%s (%s)' % (
        r['impl'], short_device(r['device']))


def short_device(d):
    d = d.replace('pthread-', '').replace('(R)', '').replace('(TM)', '')
    return d if len(d) <= 28 else d[:26] + '..'


def ordered(seq):
    seen = []
    for s in seq:
        if s not in seen:
            seen.append(s)
    return seen


def plot_group(plt, rows, metric, title, path, log):
    label = bar_labels(rows)
    matrices = ordered(r['matrix'] for r in rows)
    impls = ordered(label(r) for r in rows)
    val = {(r['matrix'], label(r)): float(r[metric]) for r in rows}
    n = len(impls)
    width = 0.8 / max(n, 1)
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(matrices) * max(1, n / 3)), 4.5))
    for k, impl in enumerate(impls):
        xs = [i + (k - (n - 1) / 2) * width for i in range(len(matrices))]
        ys = [val.get((m, impl), 0.0) for m in matrices]
        ax.bar(xs, ys, width, label=impl)
    ax.set_xticks(range(len(matrices)))
    ax.set_xticklabels(matrices, rotation=20, ha='right')
    ax.set_ylabel(LABELS[metric])
    ax.set_title(title)
    if log:
        ax.set_yscale('log')
    ax.grid(axis='y', alpha=0.3)
    ax.legend(fontsize='small', ncol=2 if n > 4 else 1)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('csv', nargs='+', help='result CSV file(s)')
    ap.add_argument('-o', '--outdir', default='.', help='folder for the PNGs (default .)')
    ap.add_argument('--prefix', default='spmv', help='file name prefix (default spmv)')
    ap.add_argument('--metric', default='gflops', choices=sorted(LABELS))
    ap.add_argument('--log', action='store_true', help='logarithmic y axis')
    ap.add_argument('--title', default='CSR SpMV', help='what the charts show (default CSR SpMV)')
    a = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit('matplotlib is missing: apt-get install -y python3-matplotlib '
                 '(or pip install matplotlib)')
    rows = read_rows(a.csv)
    if not rows:
        sys.exit('no results in %s' % ', '.join(a.csv))
    os.makedirs(a.outdir, exist_ok=True)
    for prec in ordered(r['precision'] for r in rows):
        for op in ordered(r['op'] for r in rows):
            g = [r for r in rows if r['precision'] == prec and r['op'] == op]
            if not g:
                continue
            path = os.path.join(a.outdir, '%s-%s-%s-%s.png' % (a.prefix, prec, op, a.metric))
            title = '%s %s, %s (op = %s)' % (a.title, LABELS[a.metric].split(' (')[0], prec, op)
            plot_group(plt, g, a.metric, title, path, a.log)
            print(path)


if __name__ == '__main__':
    main()
