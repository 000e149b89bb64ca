/* hisp bench: shared by the command (cmd_bench.c: options, rows, input),
 * the operations on one context (bench_ops.c: timing, results, errors) and
 * the output (bench_report.c: table, JSON, SVG chart). */
#ifndef HISP_CLI_BENCH_H
#define HISP_CLI_BENCH_H

#include "cli.h"

typedef enum {
    OP_SPMV,
    OP_SPMVT,
    OP_ADD,
    OP_SOLVE,
    OP_SPMV_DOT,
    OP_MULTIPLY,
    OP_SPMM,
    OP_COUNT
} bench_op;

enum { K_REFERENCE, K_OPENCL, K_CUDA, K_CUSPARSE, K_COUNT };

typedef struct {
    int kind; /* K_* */
    hisp_device_info dev;
    bool have_dev;
    bool oracle;        /* the reference run whose result the others are compared with */
    const char *status; /* "ok", "skipped", "failed" */
    char reason[300];
    double ms, device_ms, gbps, copy_gbps, fraction, rel_error;
    int calls;           /* timed calls made (repeat, or fewer past the row's time budget) */
    int64_t iterations;  /* solve */
    double rel_residual; /* solve: the method's relative residual at the end */
    /* spmv-dot: ms per call of hisp_spmv alone and of hisp_spmv then
     * hisp_vector_dot (row->ms: the fused call); the fused dot p.q (real
     * part), the two calls' one, and the dot's error against the oracle's */
    double spmv_ms, unfused_ms, dot, dot_unfused, dot_error;
    int64_t c_nnz;            /* multiply: the entries of this row's C = A A */
    hisp_transfer_stats xfer; /* over the timed calls, this row's context only */
} bench_row;

/* What a cuSPARSE row's "transfers" leaves out. */
#define BENCH_VENDOR_COVERS                                                                        \
    "the row's context only: the cuSPARSE plan's device context (A's part, x and y with spmvt) "   \
    "is not visible"

/* A result on the host: a vector (ptr NULL) or a CSR matrix, values in double. */
typedef struct {
    int64_t n; /* entries (a vector's: scalar components) */
    int comp;  /* a matrix's scalar components per entry (v holds n * comp) */
    double *v;
    int64_t *ptr;
    int32_t *cols;
} bench_result;

typedef enum { CHECK_RESULT, CHECK_RESIDUAL, CHECK_NONE } bench_check;

typedef struct {
    bench_op op;
    hisp_format format; /* hisp's rows run on A in this format (--format) */
    hisp_type t;        /* A's entries */
    hisp_type vt;       /* the vectors' entries: t, or f32/f64 for b3x3 */
    int per;            /* vector entries per row / column of A: 1, or 3 for b3x3 */
    int repeat, warmup, iterations;
    int64_t columns;   /* spmm: X's columns (column-major) */
    int64_t m, n, nnz; /* A */
    const int64_t *ptr;
    const int32_t *cols;
    const void *vals;
    const int64_t *bptr; /* add: B */
    const int32_t *bcols;
    const void *bvals;
    int64_t bnnz;
    void *x;                   /* spmv, spmvt, spmv-dot: x; spmm: X; solve: b */
    hisp_solver_method method; /* solve */
    uint64_t bytes;            /* minimum traffic per call (solve: per iteration) */
    double tolerance;
    /* How a row is checked against the oracle: the result within tolerance
     * (x for CG, whose iterates are stable); solve with BiCGSTAB: the
     * relative residual within 10x the reference's (a non-symmetric
     * method's iterates depend on rounding); none where the method diverged
     * on the reference (relative residual >= 1 at the end). */
    bench_check check;
    double ref_residual;
    double ref_dot; /* spmv-dot: the oracle's fused dot */
} bench_in;

/* GMRES's Krylov space between restarts in --op solve (the library's default). */
#define BENCH_RESTART 30

const char *bench_op_name(bench_op op); /* "spmv", ..., NULL past the last */
const char *bench_kind_name(int kind);  /* "reference", ..., NULL past the last */

/* ---- bench_ops.c --------------------------------------------------------- */

void bench_result_free(bench_result *r);
/* Is t's scalar component 4 bytes? Scalar component i of an array of t. */
bool bench_single(hisp_type t);
double bench_load(hisp_type t, const void *p, int64_t i);
/* ||a - b|| / ||b||; matrices (rows rows) merge row by row. */
double bench_rel_error(const bench_result *a, const bench_result *b, int64_t rows);
/* multiply: are a's and b's CSR structures equal (then the relative error
 * over their values in *err, else *err is left as it was)? */
bool bench_same_matrix(const bench_result *a, const bench_result *b, int64_t rows, double *err);
/* Runs in's operation on ctx (its backend set); vendor: through a
 * one-device cuSPARSE plan. Fills the row's times and *res. */
hisp_status bench_run_op(hisp_context ctx, const bench_in *in, bool vendor, bench_row *row,
                         bench_result *res);

/* ---- bench_report.c ------------------------------------------------------ */

/* Does a row that ran pass in's check? */
bool bench_row_ok(const bench_in *in, const bench_row *r);
void bench_print_json(const char *spec, const bench_in *in, const bench_row *rows, int n);
void bench_print_table(const char *spec, const bench_in *in, const bench_row *rows, int n);
int bench_plot(const char *path, const char *spec, const bench_in *in, const bench_row *rows, int n,
               bool gbps);

#endif
