#!/usr/bin/env python3
"""The plots of docs/BENCHMARKS.md, drawn from the raw results it cites.

  python3 bench/plots.py [-o docs/plots]

One SVG per chart; every value comes from a file under bench/results/ (the
path is in each function). Needs matplotlib (pip install matplotlib).
"""
import argparse
import csv
import glob
import json
import math
import os
import re

import matplotlib

matplotlib.use('Agg')
matplotlib.rcParams['svg.hashsalt'] = 'hisp'  # stable ids: reruns give the same file
import matplotlib.pyplot as plt  # noqa: E402

R = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'results')


def rows(path):
    with open(os.path.join(R, path), newline='') as f:
        return list(csv.DictReader(f))


def med(rs, matrix, prec, op, impl):
    for r in rs:
        if (r['matrix'], r['precision'], r['op'], r['impl']) == (matrix, prec, op, impl):
            return float(r['median_ms'])
    return None


def bars(ax, labels, series, ylabel, ref=None):
    """Grouped bars: series = [(name, values)]."""
    n = len(series)
    w = 0.8 / n
    for i, (name, vals) in enumerate(series):
        xs = [j + (i - (n - 1) / 2) * w for j in range(len(labels))]
        ax.bar(xs, vals, w, label=name)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=30, ha='right', fontsize=8)
    ax.set_ylabel(ylabel)
    if ref is not None:
        ax.axhline(ref, color='black', lw=0.8, ls='--')
    ax.legend(fontsize=8)


def save(fig, out, name):
    fig.tight_layout()
    fig.savefig(os.path.join(out, name), metadata={'Date': None})
    plt.close(fig)


SUITE = ['poisson3d', 'banded', 'rmat', 'dense', 'circuit', 'blockdiag']
LABELS = [f'{m} {p}' for m in SUITE for p in ('f64', 'f32')]
KEYS = [(m, p) for m in SUITE for p in ('f64', 'f32')]


def csr_h100(out):
    rs = rows('gpu-final-2026-11-22.csv')
    n, t = [], []
    for m, p in KEYS:
        best = min(med(rs, m, p, 'N', 'cusparse-alg1'), med(rs, m, p, 'N', 'cusparse-alg2'))
        n.append(best / med(rs, m, p, 'N', 'hisp-cuda'))
        t.append(med(rs, m, p, 'T', 'cusparse') / med(rs, m, p, 'T', 'hisp-cuda'))
    fig, ax = plt.subplots(figsize=(8, 4))
    bars(ax, LABELS, [('A x: cuSPARSE best / hisp', n), ('Aᵀ x: cuSPARSE opA=T / hisp', t)],
         'speedup over cuSPARSE (>1: hisp faster)', ref=1)
    ax.set_title('CSR SpMV on an NVIDIA H100 (device time)')
    save(fig, out, 'csr-spmv-h100.svg')


def csr_cpu(out):
    rs = rows('cpu-2026-11-22-0903.csv')
    mats = []
    for r in rs:
        if r['matrix'] not in mats:
            mats.append(r['matrix'])
    series = []
    for p in ('f64', 'f32'):
        series.append((f'{p}: serial C / hisp PoCL',
                       [med(rs, m, p, 'N', 'serial-c') / med(rs, m, p, 'N', 'hisp-opencl')
                        for m in mats]))
    fig, ax = plt.subplots(figsize=(8, 4))
    bars(ax, mats, series, 'speedup over one-thread C loop (>1: hisp faster)', ref=1)
    ax.set_title('CSR SpMV on PoCL, 2-core CPU')
    save(fig, out, 'csr-spmv-cpu.svg')


def hisparse_h100(out):
    rs = rows('runtime-h100-2026-11-26/spmv.csv')
    n, t = [], []
    for m, p in KEYS:
        best = min(med(rs, m, p, 'N', i) for i in
                   ('cusparse-default-wall', 'cusparse-alg1-wall', 'cusparse-alg2-wall'))
        n.append(best / med(rs, m, p, 'N', 'hisparse-wall'))
        t.append(med(rs, m, p, 'T', 'cusparse-t-wall') / med(rs, m, p, 'T', 'hisparse-wall'))
    fig, ax = plt.subplots(figsize=(8, 4))
    bars(ax, LABELS, [('A x: cuSPARSE best / HiSparse', n), ('Aᵀ x: cuSPARSE opA=T / HiSparse', t)],
         'speedup over cuSPARSE (>1: hisp faster)', ref=1)
    ax.set_title('HiSparse SpMV on an NVIDIA H100 (wall time per call)')
    save(fig, out, 'hisparse-spmv-h100.svg')


def add_h100(out):
    rs = rows('runtime-h100-2026-11-26/bench_add.csv')
    n, t = [], []
    for m, p in KEYS:
        n.append(med(rs, m, p, 'N', 'cusparse-geam-alloc-wall') / med(rs, m, p, 'N', 'hisp-cuda-wall'))
        t.append(med(rs, m, p, 'T', 'cusparse-geam-alloc-wall') / med(rs, m, p, 'T', 'hisp-cuda-wall'))
    fig, ax = plt.subplots(figsize=(8, 4))
    bars(ax, LABELS, [('A + B', n), ('Aᵀ + Bᵀ', t)],
         'csrgeam2 + alloc / hisp (wall; >1: hisp faster)', ref=1)
    ax.set_yscale('log')
    ax.set_title('HiSparse addition on an NVIDIA H100')
    save(fig, out, 'add-h100.svg')


def compound_h100(out):
    types, vs, lay = [], [], []
    for t in ('c32', 'c64', 'b3x3_f32', 'b3x3_f64', 'q32', 'q64'):
        r = rows(f'compound-search-h100-2026-11-22/run2/both-{t}.csv')[0]
        types.append(t)
        vs.append(float(r['cusparse_ms']) / float(r['ms']))
        lay.append(float(r['csr_sched_ms']) / float(r['ms']))
    fig, ax = plt.subplots(figsize=(7, 4))
    bars(ax, types, [('cuSPARSE / hisp', vs), ('CSR-AoS-AoS tuned / best layout', lay)],
         'speedup', ref=1)
    ax.set_title('Compound entries on an NVIDIA H100 (full search pick)')
    save(fig, out, 'compound-h100.svg')


def tune_cpu(out):
    labels, csr, hs, var = [], [], [], []
    for path in sorted(glob.glob(os.path.join(R, 'tune-cpu-2026-11-26/run1/*.json'))):
        d = json.load(open(path))
        f = {x['format']: x['ms'] for x in reversed(d['formats'])}  # first variant wins
        if 'csr' not in f:
            continue
        name = os.path.basename(path)[:-5]
        labels.append(name)
        csr.append(1.0)
        hs.append(f['hisparse'] / f['csr'] if 'hisparse' in f else float('nan'))
        var.append(f['variant'] / f['csr'] if 'variant' in f else float('nan'))
    fig, ax = plt.subplots(figsize=(10, 4))
    bars(ax, labels, [('HiSparse', hs), ('fastest compound variant', var)],
         'time / CSR time (>1: CSR faster)', ref=1)
    ax.set_title('hisp tune on PoCL, 2-core CPU (run 1)')
    save(fig, out, 'tune-cpu.svg')


def msrep_h200x4(out):
    fig, axes = plt.subplots(1, 2, figsize=(9, 4), sharey=True)
    for ax, (path, title) in zip(axes, [('run-align/rmat-5e8.csv', 'rmat, 0.53 G entries'),
                                       ('run-align/poisson3d-5e8.csv', 'poisson3d, 0.50 G entries')]):
        rs = rows('msrep-h200x4-dist-2026-11-22/' + path)
        lines = {}
        for r in rs:
            lines.setdefault(f"{r['kind']} {r['variant']}", []).append(
                (int(r['gpus']), float(r['speedup_call'])))
        for k, pts in sorted(lines.items()):
            pts.sort()
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker='o', label=k)
        ax.plot([1, 4], [1, 4], color='gray', ls=':', lw=0.8)
        ax.set_xticks([1, 2, 4])
        ax.set_xlabel('GPUs')
        ax.set_title(title)
        ax.legend(fontsize=7)
    axes[0].set_ylabel('speedup per SpMV call')
    fig.suptitle('MSREP SpMV, distributed vectors, NVIDIA H200s')
    save(fig, out, 'msrep-h200x4.svg')


def vector_h100(out):
    text = open(os.path.join(R, 'runtime-h100-2026-11-26/vector.txt')).read()
    labels, hisp, cupy = [], [], []
    for block in re.split(r'(?=# bench_vector)', text)[1:]:
        ty = re.search(r'n = \d+, (\w+);', block).group(1)
        mine, _, peer = block.partition('\nCuPy ')  # hisp's table, then CuPy's
        h = dict(re.findall(r'^(\w+)\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+([\d.]+)%', mine, re.M))
        c = dict(re.findall(r'^(\w+)\s+[\d.]+\s+[\d.]+\s+\d+\s+([\d.]+)%', peer, re.M))
        for op in ('axpby', 'dot', 'nrm2'):
            if op in h and op in c:
                labels.append(f'{ty} {op}')
                hisp.append(float(h[op]))
                cupy.append(float(c[op]))
    fig, ax = plt.subplots(figsize=(8, 4))
    bars(ax, labels, [('hisp', hisp), ('CuPy', cupy)], '% of copy bandwidth', ref=100)
    ax.set_title('Vector algebra on an NVIDIA H100, 32M entries (dashed: the copy rate)')
    save(fig, out, 'vector-h100.svg')


def solve_h100(out):
    d = json.load(open(os.path.join(R, 'solve-h100-2026-11-26/solve.json')))
    cp = json.load(open(os.path.join(R, 'solve-h100-2026-11-26/cupy.json')))
    cupy = {r['matrix']: r['ms_per_it'] for r in cp['results']}
    labels, h, e, c, fl = [], [], [], [], []
    for r in d['results']:
        if r['part'] != 'cg':
            continue
        labels.append(r['matrix'])
        h.append(r['ms_per_it'])
        e.append(r['expert_ms_per_it'])
        c.append(cupy.get(r['matrix'], float('nan')))
        fl.append(r['floor_ms'])
    fig, ax = plt.subplots(figsize=(6, 4))
    bars(ax, labels, [('hisp', h), ('cuSPARSE + cuBLAS loop', e), ('CuPy cg', c),
                      ('bytes floor', fl)], 'ms per iteration')
    ax.set_title('CG f64 on an NVIDIA H100')
    save(fig, out, 'cg-h100.svg')


def scale_h100(out):
    fig, ax = plt.subplots(figsize=(6, 4))
    for name in ('solve-poisson-760', 'solve-rmat'):
        d = json.load(open(os.path.join(R, f'scale-h100x4-2026-11-26/{name}.json')))
        lines = {}
        for r in d['results']:
            if r.get('status') != 'ok' or 'speedup' not in r or r['devices'] == '1p':
                continue
            lines.setdefault((r['matrix'], r['method']), []).append(
                (int(r['devices']), float(r['speedup'])))
        for (m, meth), pts in sorted(lines.items()):
            pts = sorted(set([(1, 1.0)] + pts))
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker='o', label=f'{m} {meth}')
    ax.plot([1, 4], [1, 4], color='gray', ls=':', lw=0.8)
    ax.set_xticks([1, 2, 4])
    ax.set_xlabel('GPUs')
    ax.set_ylabel('speedup per iteration over 1 GPU')
    ax.set_title('Distributed Krylov solvers, NVIDIA H100s (dotted: linear)')
    ax.legend(fontsize=8)
    save(fig, out, 'solve-scaling-h100.svg')


def solve_cpu(out):
    labels, h, s = [], [], []
    for line in open(os.path.join(R, 'solve-cpu-2026-11-26/summary.md')):
        c = [x.strip() for x in line.split('|')]
        if len(c) > 7 and c[1].startswith('poisson3d'):
            labels.append(c[1])
            h.append(float(c[5]))
            s.append(float(c[6]))
    fig, ax = plt.subplots(figsize=(6, 4))
    bars(ax, labels, [('hisp (PoCL)', h), ('scipy cg', s)], 'ms per iteration')
    ax.set_title('CG f64 on the 2-core CPU')
    save(fig, out, 'cg-cpu.svg')


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('-o', '--out', default=os.path.join(os.path.dirname(R), '..', 'docs', 'plots'))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for f in (csr_h100, csr_cpu, hisparse_h100, add_h100, compound_h100, tune_cpu, msrep_h200x4,
              vector_h100, solve_h100, scale_h100, solve_cpu):
        f(a.out)
        print(f.__name__)


if __name__ == '__main__':
    main()
