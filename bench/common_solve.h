/* Helpers of the solver benchmark (bench_solve_cuda):
 * inputs every program (and solve_cupy.py / solve_scipy.py) makes
 * identically from counter-based hashes, and a fixed-iteration solve timed
 * as the user waits for it.
 *
 * Inputs: entry i of a vector with seed s is bs_uniform(s, i) (a complex or
 * quaternion entry takes 2 or 4 consecutive draws); the least-squares matrix
 * of bs_lsq_matrix has row i's entry k in column band k: column
 * k*band + mix(seed, i*npr + k) % band with band = ncols / npr, value
 * bs_uniform(seed + 1, i*npr + k), so its columns are distinct and sorted
 * without a search, and numpy reproduces it in a few vector operations. */
#ifndef HISP_BENCH_COMMON_SOLVE_H
#define HISP_BENCH_COMMON_SOLVE_H

#include "common.h"

/* splitmix64 of (seed, i), and a double in [-1, 1) from it. */
uint64_t bs_mix(uint64_t seed, uint64_t i);
double bs_uniform(uint64_t seed, uint64_t i);
/* a[i] = bs_uniform(seed, i) for n doubles. */
void bs_fill_uniform(double *a, int64_t n, uint64_t seed);
/* The m x ncols least-squares matrix above (npr entries per row, npr <=
 * ncols) as CSR arrays the caller frees; exits on a lack of memory. */
void bs_lsq_matrix(int64_t m, int64_t ncols, int npr, uint64_t seed, int64_t **rowptr,
                   int32_t **colind, double **vals);

/* Tolerances that no run meets (rtol 0, atol 1e-300), so that a solve runs
 * its iteration limit unless it breaks down. */
#define BS_RTOL 0.0
#define BS_ATOL 1e-300

/* One method on one matrix, `iters` iterations, timed as the user waits. */
typedef struct {
    hisp_status status;            /* HISP_SUCCESS, else why a solve did not run */
    char message[256];             /* the context's message for a failed status */
    hisp_solve_info info;          /* of the last timed solve */
    double first_ms;               /* wall of the warm-up solve (upload, kernel builds) */
    double wall_ms;                /* median wall of the timed solves (a synchronize after) */
    double ms_per_it;              /* wall_ms / info.iterations */
    double setup_ms;               /* info.setup_ms of the last timed solve */
    uint64_t h2d_bytes, d2h_bytes; /* moved during the last timed solve */
} bs_solve;

/* Solves A x = b with x0 = 0: first one warm-up solve of warm_iters
 * iterations (the matrix's upload, kernel builds and first-call schedules
 * happen there), then `repeat` solves of `iters` iterations with rtol,
 * atol = BS_RTOL, BS_ATOL, each timed with the host clock from a
 * synchronize to the synchronize after hisp_solver_solve. restart: GMRES's
 * (0: the default). x holds the last solve's result. Returns o->status;
 * never exits. */
hisp_status bs_solve_fixed(hisp_context ctx, hisp_solver_method method, hisp_matrix A,
                           hisp_vector b, hisp_vector x, int64_t iters, int restart, int warm_iters,
                           int repeat, bs_solve *o);

/* Median wall time (ms) of `repeat` calls y = op(A) x, each followed by a
 * synchronize, after 2 warm-up calls; A of a double component type (f64,
 * c64, q64). NaN when a call fails (the status in *st when st is not NULL). */
double bs_spmv_wall(hisp_context ctx, hisp_op op, hisp_matrix A, hisp_vector x, hisp_vector y,
                    int repeat, hisp_status *st);

/* malloc that exits (status 3) when the host is out of memory; n doubles. */
void *bs_alloc(size_t bytes);
double *bs_doubles(int64_t n);
/* v printed with fmt into s (32 bytes), "-" for NaN and Inf (table cells). */
const char *bs_fx(double v, char *s, const char *fmt);

/* ||a - b|| / ||b|| over n doubles (NaN anywhere: NaN). */
double bs_rel_diff(const double *a, const double *b, int64_t n);

/* "unsupported" for HISP_ERR_UNSUPPORTED, else the status string. */
const char *bs_status_word(hisp_status s);

/* Per CG iteration (core/solver/cg.c, no preconditioner) the vector
 * entries read or written besides the matrix: SpMV q = A p with p.q reads
 * p, writes q (2); r -= alpha q with ||r||^2 reads 2, writes 1 (3); x +=
 * alpha p and p = r + beta p in one pass read x, p, r and write x, p (5):
 * 10. (The checkpoint copy of x at each check, 2 entries every few
 * iterations, is left out.) On backends without the fused SpMV + dot
 * (OpenCL) the dot reads 2 more: 12, the floor bench/solve_scipy.py takes
 * for hisp on PoCL. */
#define BS_CG_VECTOR_STREAMS 10

#endif
