/* The distributed Krylov solvers' scaling runs (bench_solve_cuda --parts
 * dist), their SPD graph matrix, and the selftest of both
 * (bench_solve_cuda --parts selftest).
 *
 * Per matrix, method and device count: ms per iteration (median of `repeat`
 * fixed-iteration solves after a 2-iteration warm-up, x0 = 0, b_i =
 * bs_uniform(7, i)), the speedup over the one-context solve on device 0,
 * the solve's breakdown per iteration (hisp_solve_info product_ms,
 * vector_ms, reduce_ms of the median solve; "other" = the rest of the wall:
 * setup, checks, host bookkeeping) and x's relative difference to the
 * one-context solution. Device count 1 is the one-context solve
 * (hisp_solver_solve on device 0, the baseline; its breakdown is 0 on device
 * backends, where its calls are queued); "1p" is a plan over device 0
 * alone (the distributed space on one device); k > 1 a pcsr plan over
 * devices 0..k-1 (hisp_solver_solve_dist). The plans run first and the
 * one-context solves last, so device 0 never holds A twice. */
#ifndef HISP_BENCH_COMMON_DIST_H
#define HISP_BENCH_COMMON_DIST_H

#include "common_solve.h"

/* B = |A| + |A|^T off the diagonal (A's diagonal dropped), B_ii = 1 + sum
 * of row i's off-diagonal B_ij: symmetric, strictly diagonally dominant
 * with a positive diagonal, so SPD. A: square n x n CSR (int64 pointers,
 * distinct columns per row, any order). B: sorted CSR arrays the caller
 * frees, *nnz entries. Deterministic (independent of the thread count).
 * Memory: A plus about 2 nnz(A) + n entries of B (12 bytes each) at the
 * peak; OpenMP over rows. Returns 0, or -1 when out of host memory. */
int bs_spd_graph(int64_t n, const int64_t *ap, const int32_t *ac, const double *av, int64_t **bp,
                 int32_t **bc, double **bv, int64_t *nnz);

/* A scaling matrix (f64 CSR on ctx): "poisson3d" of side `side`, or "rmat"
 * (hisp_matrix_generate, 2^scale vertices, edge_factor, seed 1) turned into
 * its SPD graph. name gets e.g. "poisson3d-560" or "rmat-26-16-spd". NULL
 * with a message on stderr on failure. */
hisp_matrix bs_dist_matrix(hisp_context ctx, const char *kind, int64_t side, int scale,
                           int edge_factor, char *name, size_t name_size);

typedef struct {
    hisp_backend_kind backend;
    unsigned plan_flags; /* HISP_MPLAN_SUBDEVICES: k parts on device 0's sub-devices */
    const char *devices; /* "1,2,4" ("1p": a plan over device 0 alone) */
    const char *methods; /* "cg,bicgstab" */
    int64_t iters;
    int repeat; /* 1..64 */
} bs_dist_opts;

typedef struct {
    char matrix[40], method[16], devices[8], status[64];
    int ndev, plan; /* plan: solved over an MSREP plan */
    int64_t rows, nnz, asked, iters;
    double ms_it, speedup, product_it, vector_it, reduce_it, other_it, x_diff, plan_ms;
} bs_dist_row;

#define BS_DIST_MAX_ROWS 64

typedef struct {
    bs_dist_row v[BS_DIST_MAX_ROWS];
    int n;
    int failed; /* a solve failed or a solution differs from the baseline by > 1e-6 */
} bs_dist_rows;

/* Every method on every device count of o over A (square f64; ctx on
 * o->backend device 0, A's context); rows appended. Prints progress. A
 * solution farther than xtol (relative) from the one-context one sets
 * R->failed: BS_DIST_XTOL, or BS_DIST_XTOL_GRAPH for the SPD graph of rmat,
 * whose fixed-iteration iterates are sensitive to rounding (20 CG
 * iterations on rmat-11-8: the reference and PoCL one-context solutions
 * differ by 2.6e-4, converged ones by 1e-14; BiCGSTAB more). */
#define BS_DIST_XTOL 1e-6
#define BS_DIST_XTOL_GRAPH 1e-2
void bs_dist_run(hisp_context ctx, hisp_matrix A, const char *name, double xtol,
                 const bs_dist_opts *o, bs_dist_rows *R);
/* Markdown: one table per matrix. */
void bs_dist_tables(FILE *f, const bs_dist_rows *R);
/* Row i as a JSON object (no separator). */
void bs_dist_json(FILE *f, const bs_dist_row *r);

/* Checks what the scaling runs use, at small sizes on ctx (device 0 of
 * backend): bs_spd_graph of rmat 7/8 and 9/16 against a dense construction,
 * the SPD graph of rmat 12/8 symmetric and CG converging on it (the true
 * residual within 1e-8), then bs_dist_run on poisson3d 24 and that graph of
 * rmat 11/8 with CG and BiCGSTAB over 1, 1p, 2 and 4 parts of the one device
 * (HISP_MPLAN_SUBDEVICES: PoCL's sub-devices, else parts sharing it): 16
 * rows of 20 iterations with their breakdowns, solutions that agree. Prints
 * each check; returns 0 when all hold. */
int bs_dist_selftest(hisp_context ctx, hisp_backend_kind backend);

#endif
