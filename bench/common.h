/* Shared helpers of the bench programs (bench/bench_*.c): the generator
 * suite, statistics, the CSR SpMV flop/byte models, error checks, and the
 * result table (markdown), CSV and JSON output in one schema for every
 * program, so that bench/plot.py reads CPU and GPU results alike.
 *
 * CSV schema (header line, one row per measurement; see bench/README.md):
 *   matrix,precision,op,impl,device,rows,cols,nnz,median_ms,min_ms,gflops,gbs,bw_fraction,rel_error
 */
#ifndef HISP_BENCH_COMMON_H
#define HISP_BENCH_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "hisp.h"
#include "opts.h" /* the option parser of the CLI (cli/opts/) */

/* ---- suite ---------------------------------------------------------------- */

typedef enum { BENCH_SCALE_SMALL = 0, BENCH_SCALE_MEDIUM, BENCH_SCALE_GPU } bench_scale;

/* One suite matrix: a name used in tables and on the command line, and the
 * generator parameters (every field set; hisp_gen_defaults is not relied on). */
typedef struct {
    char name[48];
    hisp_gen_params gen;
} bench_matrix_def;

#define BENCH_SUITE_MAX 16

/* "small" (quick check, ~0.1-1M nnz), "medium" (CPU: 1-10M nnz each), "gpu"
 * (the GPU sizes: poisson3d 160^3, banded 2M x 16, rmat 22/8, dense
 * 4096^2, circuit, blockdiag). Returns -1 for an unknown name. */
int bench_scale_from_name(const char *name, bench_scale *scale);
const char *bench_scale_name(bench_scale scale);
/* Fills defs (at most BENCH_SUITE_MAX) and returns the count. */
int bench_suite(bench_scale scale, bench_matrix_def *defs);
/* Keeps only the entries named in a comma-separated list (NULL or "" or
 * "all": keep all). Returns the new count, or -1 (with a message on stderr)
 * when a name is not in the suite. */
int bench_suite_filter(bench_matrix_def *defs, int n, const char *list);

/* ---- command line -----------------------------------------------------------
 * Each program has a static option table and help text for opts_parse;
 * these are the pieces several programs share. */

/* The suite options: first in a table (indexes BENCH_O_*), read by
 * bench_suite_args; BENCH_SUITE_HELP describes them, with the program's
 * defaults (string literals). */
// clang-format off
#define BENCH_SUITE_OPTS                                                                           \
    {"--scale", true}, {"--matrices", true}, {"--precision", true}, {"--repeat", true},           \
    {"--warmup", true}
// clang-format on
enum {
    BENCH_O_SCALE,
    BENCH_O_MATRICES,
    BENCH_O_PRECISION,
    BENCH_O_REPEAT,
    BENCH_O_WARMUP,
    BENCH_O_NEXT
};
#define BENCH_SUITE_HELP(scale, repeat, warmup)                                                    \
    "  --scale S            suite size: small, medium or gpu (default " scale ")\n"                \
    "  --matrices a,b,...   only these suite matrices (default all)\n"                             \
    "  --precision P        f64, f32 or both (default both)\n"                                     \
    "  --repeat N           timed runs per measurement (default " repeat ")\n"                     \
    "  --warmup N           untimed runs first (default " warmup ")\n"
typedef struct {
    bench_scale scale;
    const char *matrices; /* NULL: all */
    bool f64, f32;        /* --precision */
    int repeat, warmup;
} bench_suite_opts;
/* Reads the suite options of val (opts_parse's) into o, which holds the
 * program's defaults; OPTS_OK, or OPTS_INPUT after a message. */
int bench_suite_args(const char *prog, const char *const *val, bench_suite_opts *o);
/* opts_parse, then bench_suite_args: OPTS_OK, OPTS_HELP_SHOWN, or an error
 * (printed). */
int bench_suite_parse(const char *prog, int argc, char **argv, const opts_def *opts,
                      const char *help, const char **val, bench_suite_opts *o);
/* Fills defs with the suite of o->scale, only o->matrices; returns the
 * count, or -1 (with a message) when a name is not in the suite. */
int bench_suite_select(const bench_suite_opts *o, bench_matrix_def *defs);
/* Does --precision take type t (f32 or f64)? */
bool bench_suite_has_type(const bench_suite_opts *o, hisp_type t);

/* --backend reference|opencl|cuda into *out (s NULL: unchanged); OPTS_OK or
 * OPTS_INPUT after a message. */
int bench_backend_arg(const char *prog, const char *s, hisp_backend_kind *out);

/* Whether s is HISP_SUCCESS; else prints "prog: what: status: the context's
 * message" to stderr. */
bool bench_ok(const char *prog, hisp_context ctx, hisp_status s, const char *what);
/* A context on backend's device (-1: the first) and its info; NULL, the
 * reason printed, where that fails. */
hisp_context bench_context(const char *prog, hisp_backend_kind backend, int device,
                           hisp_device_info *info);
/* A comma-separated list of grid sides (each >= 2, at most max) into
 * sides[0 .. *n - 1]; 0, or 1 after saying what is wrong. */
int bench_sides(const char *prog, const char *list, int64_t *sides, int max, int *n);

/* ---- time and statistics -------------------------------------------------- */

double bench_now_ms(void); /* monotonic clock, milliseconds */
/* Median (mean of the two middle values for even n) and minimum; v is not
 * modified. n >= 1. */
double bench_median(const double *v, int n);
double bench_min(const double *v, int n);

/* Times fn(arg) `repeat` times after `warmup` untimed calls, host clock;
 * ms[i] gets call i's time. */
void bench_time_host(void (*fn)(void *), void *arg, int warmup, int repeat, double *ms);

/* Host copy bandwidth (bytes read + written per second) of a memcpy of
 * `bytes` between two buffers, median of `repeat`; 0 when allocation fails. */
double bench_host_copy_bandwidth(size_t bytes, int repeat);

/* ---- CSR SpMV models ------------------------------------------------------ */

/* 2 * nnz flops (one multiply and one add per entry). */
double bench_csr_spmv_flops(int64_t nnz);
/* Minimum bytes moved by one CSR SpMV y = alpha*op(A)*x + beta*y:
 *   row pointers (nrows+1) * ptr_bytes + column indices nnz * 4 + values
 *   nnz * val_bytes + x read once + y written once (+ read once when
 *   beta != 0); x and y lengths follow op (op = T: x has nrows, y ncols).
 * Each array is counted once: x gathers that miss the cache are not counted,
 * so GB/s is a lower bound of the traffic. */
double bench_csr_spmv_bytes(int64_t nrows, int64_t ncols, int64_t nnz, size_t ptr_bytes,
                            size_t val_bytes, hisp_op op, int beta_nonzero);

/* ---- checks --------------------------------------------------------------- */

/* ||y - ref||_2 / ||ref||_2 over n entries of f32 or f64 (accumulated in
 * double); ||y - ref||_2 when ref is all zero. NaN anywhere gives NaN. */
double bench_rel_error(hisp_type type, const void *y, const void *ref, int64_t n);

/* ---- results -------------------------------------------------------------- */

typedef struct {
    char matrix[48];
    char precision[8]; /* f32, f64 */
    char op[4];        /* N, T */
    char impl[48];     /* serial-c, openmp-c, hisp-opencl, hisp-cuda, cusparse-alg1, ... */
    char device[96];   /* e.g. "cpu 2 cores", "pocl cpu", "H100" */
    int64_t rows, cols, nnz;
    double median_ms, min_ms;
    double gflops;      /* from the median */
    double gbs;         /* byte model / median */
    double bw_fraction; /* gbs / measured copy bandwidth (0 when unknown) */
    double rel_error;   /* against the program's reference result */
} bench_result;

/* Fills gflops, gbs and bw_fraction from the times and the models.
 * copy_bw in bytes/s (0: unknown). */
void bench_result_finish(bench_result *r, const double *ms, int repeat, size_t ptr_bytes,
                         size_t val_bytes, int beta_nonzero, double copy_bw);

/* A growable list of results. */
typedef struct {
    bench_result *v;
    int n, cap;
} bench_results;
/* Appends a copy; returns 0, or -1 when out of memory. */
int bench_results_add(bench_results *rs, const bench_result *r);
void bench_results_free(bench_results *rs);

/* Markdown table of all results; speed-up column relative to the row with
 * impl == base_impl for the same (matrix, precision, op) when base_impl is
 * not NULL. */
void bench_print_table(FILE *f, const bench_results *rs, const char *base_impl);
/* Writes the CSV header when `header` and then every row. */
void bench_write_csv(FILE *f, const bench_results *rs, int header);
/* A JSON object {"machine": {...key/values given}, "results": [...]}.
 * meta is a NULL-terminated list of key, value string pairs (may be NULL). */
void bench_write_json(FILE *f, const bench_results *rs, const char *const *meta);

/* Opens path for writing ("-" is stdout); NULL with a message on failure. */
FILE *bench_open_out(const char *path);
void bench_close_out(FILE *f);

#endif
