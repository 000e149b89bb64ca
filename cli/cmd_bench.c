/* hisp bench: one operation on every backend and device found (and cuSPARSE
 * through the MSREP vendor kernel), one table: wall and device ms per call,
 * GB/s, fraction of the device's measured copy bandwidth, error against the
 * reference backend. */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char help[] =
    "usage: hisp bench FILE.mtx|FILE.hisp|gen:KIND:N[:SEED] [options]\n"
    "\n"
    "Runs one operation on every backend and device this machine has (CUDA\n"
    "devices, each OpenCL device, the reference) and on cuSPARSE where a CUDA\n"
    "device is present, and prints one table: ms per call, GB/s, the fraction\n"
    "of the device's measured copy bandwidth and the error against the\n"
    "reference backend. Backends and devices that are absent are listed as\n"
    "skipped, with the reason.\n"
    "\n"
    "  --op OP              spmv (y = A x, default), spmvt (y = A^T x), add\n"
    "                       (C = A + B, B = A perturbed: hisp_matrix_perturb with\n"
    "                       sigma 10; HiSparse addition), solve (CG when A is\n"
    "                       real and symmetric with a positive diagonal, and for\n"
    "                       quaternions, else BiCGSTAB;\n"
    "                       --iterations iterations on every backend)\n"
    "  --backends LIST      all (default) or a comma-separated list of reference,\n"
    "                       opencl, cuda, cusparse (cuSPARSE's CSR SpMV on each CUDA\n"
    "                       device through a one-device MSREP plan with\n"
    "                       HISP_MPLAN_CUSPARSE: spmv with x and y on the plan's\n"
    "                       device (hisp_mspmv_dist); spmvt with x and y copied\n"
    "                       device to device each call (hisp_mspmv_vec; its device\n"
    "                       ms is the kernel's); solve as hisp's Krylov loop with\n"
    "                       cuSPARSE's products (hisp_solver_solve_dist); add:\n"
    "                       skipped, the library calls no vendor addition)\n"
    "  --type T             entry type: f32, f64 (all ops), c32, c64, q32, q64,\n"
    "                       b3x3_f32, b3x3_f64 (spmv and solve: the compound\n"
    "                       kernels; default: the file's field, f64 for real files,\n"
    "                       the generator's family)\n"
    "  --repeat N           timed calls after warm-up (default 20; add 5; solve 3)\n"
    "  --iterations K       solve: iterations per solve (default 100)\n"
    "  --plot OUT.svg       bar chart of the rows (no Python needed)\n"
    "  --plot-value ms|gbps the chart's value (default ms)\n"
    "  --json               one object per row under \"results\"\n"
    "  --help               this text\n"
    "\n"
    "ms: wall time per call through the public API with a synchronize after each\n"
    "call, median (solve: per iteration). device_ms: the device's own time where\n"
    "the backend measures it (spmv/spmvt: hisp_spmv_timed's events; cuSPARSE: the\n"
    "plan's kernel time; add: the traversal's device time). GB/s: the\n"
    "operation's minimum traffic per median wall time: spmv/spmvt the CSR arrays\n"
    "+ x + y; add the HiSparse trees of A, B and C; solve per iteration the CSR\n"
    "arrays + 8 vectors (CG: x, r, p, q read and written) or twice the CSR arrays\n"
    "+ 12 vectors (BiCGSTAB). copy: a vector copy y = x of a large vector through\n"
    "hisp_vector_copy, timed the same way (bytes read + written). error:\n"
    "||r - r_ref|| / ||r_ref|| in the 2-norm over y, the entries of C, or x. Solve:\n"
    "CG's x is checked; BiCGSTAB's iterates depend on rounding, so its relative\n"
    "residual is checked to be within 10x the reference's; nothing is checked\n"
    "where the method diverges on the reference (relative residual >= 1).\n"
    "\n"
    "exit status: 0 ok, 1 usage, 2 invalid input, 3 a row failed on its device,\n"
    "5 an error above the tolerance (1e-4 f32, 1e-10 f64; solve 1e-2 / 1e-6).\n";

typedef enum { OP_SPMV, OP_SPMVT, OP_ADD, OP_SOLVE } bench_op;
static const char *const op_names[] = {"spmv", "spmvt", "add", "solve"};

enum { K_REFERENCE, K_OPENCL, K_CUDA, K_CUSPARSE, K_COUNT };
static const char *const kind_names[] = {"reference", "opencl", "cuda", "cusparse"};

typedef struct {
    int kind; /* K_* */
    hisp_device_info dev;
    bool have_dev;
    bool oracle;        /* the reference run whose result the others are compared with */
    const char *status; /* "ok", "skipped", "failed" */
    char reason[300];
    double ms, device_ms, gbps, copy_gbps, fraction, rel_error;
    int64_t iterations;  /* solve */
    double rel_residual; /* solve: the method's relative residual at the end */
} bench_row;

/* A result on the host: a vector (ptr NULL) or a CSR matrix, values in double. */
typedef struct {
    int64_t n; /* entries */
    double *v;
    int64_t *ptr;
    int32_t *cols;
} bench_result;

typedef struct {
    bench_op op;
    hisp_type t;  /* A's entries */
    hisp_type vt; /* the vectors' entries: t, or f32/f64 for b3x3 */
    int per;      /* vector entries per row / column of A: 1, or 3 for b3x3 */
    int repeat, warmup, iterations;
    int64_t m, n, nnz; /* A */
    const int64_t *ptr;
    const int32_t *cols;
    const void *vals;
    const int64_t *bptr; /* add: B */
    const int32_t *bcols;
    const void *bvals;
    int64_t bnnz;
    void *x;        /* spmv, spmvt: x; solve: b */
    bool cg;        /* solve: CG, else BiCGSTAB */
    uint64_t bytes; /* minimum traffic per call (solve: per iteration) */
    double tolerance;
    /* How a row is checked against the oracle: the result within tolerance
     * (x for CG, whose iterates are stable); solve with BiCGSTAB: the
     * relative residual within 10x the reference's (a non-symmetric
     * method's iterates depend on rounding); none where the method diverged
     * on the reference (relative residual >= 1 at the end). */
    enum { CHECK_RESULT, CHECK_RESIDUAL, CHECK_NONE } check;
    double ref_residual;
} bench_in;

static void result_free(bench_result *r)
{
    free(r->v);
    free(r->ptr);
    free(r->cols);
    memset(r, 0, sizeof *r);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    if (n <= 0) return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The median of the finite values (NaN when none). */
static double median_finite(double *v, int n)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(v[i])) v[k++] = v[i];
    return k ? median(v, k) : NAN;
}

static bool single(hisp_type t)
{
    return hisp_type_size(t) / (size_t)hisp_type_components(t) == 4;
}

/* Scalar component i of an array of type t. */
static double load(hisp_type t, const void *p, int64_t i)
{
    return single(t) ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

/* The entry type, in one place: --type or the input's own. */
static int bench_type(const char *opt, const char *spec, hisp_type *t)
{
    if (opt) {
        if (hisp_type_from_name(opt, t) != HISP_SUCCESS)
            return cli_value_error("--type: unknown type '%s' (f32, f64, c32, c64, q32, q64, "
                                   "b3x3_f32, b3x3_f64)",
                                   opt);
    } else if (cli_is_gen_spec(spec)) {
        *t = cli_gen_default_type(spec);
    } else if (cli_mtx_default_type(spec, t) != 0) {
        *t = HISP_F64; /* unreadable: the read names the problem */
    }
    return CLI_OK;
}

/* What the operations' kernels take: spmvt and add real entries only (the
 * compound SpMV has no op = T; the addition is real). */
static int check_type(bench_op op, hisp_type t)
{
    bool real = t == HISP_F32 || t == HISP_F64;
    if (!real && (op == OP_SPMVT || op == OP_ADD))
        return cli_value_error("bench --op %s: type %s is not supported (f32, f64; spmv and solve "
                               "take every type)",
                               op == OP_SPMVT ? "spmvt" : "add", hisp_type_name(t));
    return CLI_OK;
}

/* ---- timing ------------------------------------------------------------- */

typedef hisp_status (*call_fn)(void *user, int i);

/* Wall ms of each call f with a synchronize after it; median of `repeat`
 * after `warmup`; i is the call's index (negative: warm-up). prep (may be
 * NULL) runs before each call, untimed. */
static hisp_status time_calls(hisp_context ctx, call_fn f, call_fn prep, void *u, int warmup,
                              int repeat, double *ms)
{
    double *t = malloc((size_t)repeat * sizeof *t);
    if (!t) return HISP_ERR_OUT_OF_HOST_MEMORY;
    hisp_status s = HISP_SUCCESS;
    for (int i = -warmup; i < repeat && !s; i++) {
        if (prep) s = prep(u, i);
        if (!s) s = hisp_context_synchronize(ctx);
        if (s) break;
        double t0 = cli_now_ms();
        s = f(u, i);
        if (!s) s = hisp_context_synchronize(ctx);
        if (i >= 0) t[i] = cli_now_ms() - t0;
    }
    if (!s) *ms = median(t, repeat);
    free(t);
    return s;
}

/* ---- the operations on one context ------------------------------------- */

typedef struct {
    const bench_in *in;
    hisp_context ctx;
    hisp_matrix A, B;
    hisp_vector x, y;
    hisp_mplan plan;     /* cuSPARSE: a one-device plan of the vendor kernel */
    hisp_mvector xm, ym; /* its vectors (spmv: x, y; solve: b, x) */
    void *zeros;         /* solve: x0 for the plan's vectors */
    double *dev_ms;      /* per timed call, where the device reports it */
    hisp_solver solver;
    hisp_solve_info info;
    hisp_matrix C;
    double one_f64, zero_f64;
    float one_f32, zero_f32;
    double zero_entry[4]; /* one vector entry of zeros (quaternions: 4 doubles) */
} op_job;

static const void *scalar(const op_job *j, bool one)
{
    if (single(j->in->t)) return one ? (const void *)&j->one_f32 : (const void *)&j->zero_f32;
    return one ? (const void *)&j->one_f64 : (const void *)&j->zero_f64;
}

static hisp_op op_of(const bench_in *in)
{
    return in->op == OP_SPMVT ? HISP_OP_T : HISP_OP_N;
}

static hisp_status spmv_call(void *u, int i)
{
    op_job *j = u;
    (void)i;
    return hisp_spmv(j->ctx, op_of(j->in), scalar(j, true), j->A, j->x, scalar(j, false), j->y);
}

/* The plan's kernel time of the last call (timed calls only). */
static void plan_device_ms(op_job *j, int i)
{
    hisp_mplan_breakdown bd;
    if (i >= 0 && hisp_mplan_get_breakdown(j->plan, &bd) == HISP_SUCCESS &&
        bd.dev[0].compute_ms > 0)
        j->dev_ms[i] = bd.dev[0].compute_ms;
}

/* y = A x with x and y on the plan's device (nothing copied per call). */
static hisp_status vendor_spmv_call(void *u, int i)
{
    op_job *j = u;
    hisp_status s = hisp_mspmv_dist(j->plan, scalar(j, true), j->xm, scalar(j, false), j->ym);
    if (!s) plan_device_ms(j, i);
    return s;
}

/* y = A^T x: distributed vectors take op = N only, so x and y are vectors
 * of ctx on the same device, copied device to device to the plan's context
 * and back (the device time is the kernel's alone). */
static hisp_status vendor_spmvt_call(void *u, int i)
{
    op_job *j = u;
    hisp_status s =
        hisp_mspmv_vec(j->plan, op_of(j->in), scalar(j, true), j->x, scalar(j, false), j->y);
    if (!s) plan_device_ms(j, i);
    return s;
}

static hisp_status vendor_solve_prep(void *u, int i)
{
    (void)i;
    op_job *j = u;
    return hisp_mvector_write(j->ym, j->zeros);
}

static hisp_status vendor_solve_call(void *u, int i)
{
    (void)i;
    op_job *j = u;
    return hisp_solver_solve_dist(j->solver, j->plan, j->xm, j->ym, &j->info);
}

static hisp_status add_prep(void *u, int i)
{
    (void)i;
    hisp_matrix_destroy(&((op_job *)u)->C); /* the previous call's result */
    return HISP_SUCCESS;
}

static hisp_status add_call(void *u, int i)
{
    op_job *j = u;
    hisp_status s = hisp_matrix_add(HISP_OP_N, j->A, HISP_OP_N, j->B, &j->C);
    hisp_add_stats st;
    if (!s && i >= 0 && hisp_context_add_stats(j->ctx, &st) == HISP_SUCCESS)
        j->dev_ms[i] = st.device_ms > 0 ? st.device_ms : NAN;
    return s;
}

static hisp_status solve_prep(void *u, int i)
{
    op_job *j = u;
    (void)i;
    return hisp_vector_fill(j->y, hisp_scalar_host(j->zero_entry)); /* x0 = 0 */
}

static hisp_status solve_call(void *u, int i)
{
    op_job *j = u;
    (void)i;
    return hisp_solver_solve(j->solver, j->A, j->x, j->y, &j->info);
}

/* r gets the vector v (or the plan's vector vm when v is NULL) of n entries
 * of type t, as its scalar components in double. */
static hisp_status read_vector(hisp_vector v, hisp_mvector vm, hisp_type t, int64_t n,
                               bench_result *r)
{
    int64_t c = n * hisp_type_components(t);
    void *h = malloc((size_t)(n > 0 ? n : 1) * hisp_type_size(t));
    r->v = malloc((size_t)(c > 0 ? c : 1) * sizeof(double));
    hisp_status s = !h || !r->v ? HISP_ERR_OUT_OF_HOST_MEMORY
                    : v         ? hisp_vector_read(v, h)
                                : hisp_mvector_read(vm, h);
    for (int64_t i = 0; !s && i < c; i++)
        r->v[i] = load(t, h, i);
    r->n = c;
    free(h);
    return s;
}

/* The one-device cuSPARSE plan of A on CUDA device dev. */
static hisp_status vendor_plan(op_job *j, int dev)
{
    hisp_device_ref d = {HISP_BACKEND_CUDA, dev};
    return hisp_mplan_create(j->A, 1, &d, HISP_PART_PCSR, HISP_MPLAN_CUSPARSE | HISP_MPLAN_NO_NUMA,
                             &j->plan);
}

/* r gets C's CSR form in double (C is converted). */
static hisp_status read_matrix(hisp_matrix C, hisp_type t, int64_t rows, bench_result *r)
{
    const int64_t *ptr = NULL;
    const int32_t *cols = NULL, *rws = NULL;
    const void *vals = NULL;
    hisp_status s = hisp_matrix_convert(C, HISP_FORMAT_CSR);
    if (!s) s = hisp_matrix_host_arrays(C, &ptr, &rws, &cols, &vals);
    if (s) return s;
    int64_t nnz = ptr[rows];
    r->n = nnz;
    r->ptr = malloc((size_t)(rows + 1) * sizeof *r->ptr);
    r->cols = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *r->cols);
    r->v = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *r->v);
    if (!r->ptr || !r->cols || !r->v) return HISP_ERR_OUT_OF_HOST_MEMORY;
    memcpy(r->ptr, ptr, (size_t)(rows + 1) * sizeof *ptr);
    if (nnz) memcpy(r->cols, cols, (size_t)nnz * sizeof *cols);
    for (int64_t k = 0; k < nnz; k++)
        r->v[k] = vals ? load(t, vals, k) : 1.0;
    return HISP_SUCCESS;
}

/* ||a - b|| / ||b||; matrices merge row by row (an entry one lacks is 0). */
static double rel_error(const bench_result *a, const bench_result *b, int64_t rows)
{
    double num = 0, den = 0;
    if (!a->ptr) {
        for (int64_t i = 0; i < a->n && i < b->n; i++)
            cli_error_add(a->v[i], b->v[i], &num, &den);
        if (a->n != b->n) return INFINITY;
    } else {
        for (int64_t i = 0; i < rows; i++) {
            int64_t p = a->ptr[i], q = b->ptr[i];
            while (p < a->ptr[i + 1] || q < b->ptr[i + 1]) {
                bool ha = p < a->ptr[i + 1], hb = q < b->ptr[i + 1];
                if (ha && hb && a->cols[p] == b->cols[q])
                    cli_error_add(a->v[p++], b->v[q++], &num, &den);
                else if (ha && (!hb || a->cols[p] < b->cols[q]))
                    cli_error_add(a->v[p++], 0, &num, &den);
                else
                    cli_error_add(0, b->v[q++], &num, &den);
            }
        }
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* Runs the operation on ctx (its backend set); vendor: through a one-device
 * cuSPARSE plan. Fills the row's times and *res. */
static hisp_status run_op(hisp_context ctx, const bench_in *in, bool vendor, bench_row *row,
                          bench_result *res)
{
    op_job j = {.in = in, .ctx = ctx, .one_f64 = 1, .one_f32 = 1};
    hisp_status s =
        hisp_matrix_create_csr(ctx, in->t, in->m, in->n, in->ptr, in->cols, in->vals, &j.A);
    int calls = in->repeat;
    j.dev_ms = malloc((size_t)calls * sizeof *j.dev_ms);
    if (!s && !j.dev_ms) s = HISP_ERR_OUT_OF_HOST_MEMORY;
    for (int i = 0; j.dev_ms && i < calls; i++)
        j.dev_ms[i] = NAN;
    row->device_ms = NAN;
    if (in->op == OP_SPMV || in->op == OP_SPMVT) {
        int64_t xl = (in->op == OP_SPMV ? in->n : in->m) * in->per;
        int64_t yl = (in->op == OP_SPMV ? in->m : in->n) * in->per;
        if (!s) s = hisp_vector_create(ctx, in->vt, xl, &j.x);
        if (!s) s = hisp_vector_create(ctx, in->vt, yl, &j.y);
        if (!s) s = hisp_vector_write(j.x, in->x);
        if (vendor) {
            bool t = in->op == OP_SPMVT;
            if (!s) s = vendor_plan(&j, row->dev.index);
            if (!s && !t) s = hisp_mvector_create(j.plan, HISP_MVEC_REPLICATED, &j.xm);
            if (!s && !t) s = hisp_mvector_create(j.plan, HISP_MVEC_ROWS, &j.ym);
            if (!s && !t) s = hisp_mvector_write(j.xm, in->x);
            if (!s)
                s = time_calls(ctx, t ? vendor_spmvt_call : vendor_spmv_call, NULL, &j, in->warmup,
                               calls, &row->ms);
            if (!s) row->device_ms = median_finite(j.dev_ms, calls);
        } else {
            if (!s) s = time_calls(ctx, spmv_call, NULL, &j, in->warmup, calls, &row->ms);
            if (!s)
                s = hisp_spmv_timed(ctx, op_of(in), scalar(&j, true), j.A, j.x, scalar(&j, false),
                                    j.y, 1, calls, j.dev_ms);
            if (!s) row->device_ms = median(j.dev_ms, calls);
            /* the result of a plain call (the timed runs left it too, beta = 0) */
            if (!s) s = spmv_call(&j, 0);
        }
        if (!s) s = read_vector(j.ym ? NULL : j.y, j.ym, in->vt, yl, res);
    } else if (in->op == OP_ADD) {
        if (!s)
            s = hisp_matrix_create_csr(ctx, in->t, in->m, in->n, in->bptr, in->bcols, in->bvals,
                                       &j.B);
        if (!s) s = hisp_matrix_convert(j.A, HISP_FORMAT_HISPARSE);
        if (!s) s = hisp_matrix_convert(j.B, HISP_FORMAT_HISPARSE);
        if (!s) s = time_calls(ctx, add_call, add_prep, &j, in->warmup, calls, &row->ms);
        if (!s) row->device_ms = median_finite(j.dev_ms, calls);
        if (!s) s = read_matrix(j.C, in->t, in->m, res);
    } else { /* solve */
        if (!s) s = hisp_vector_create(ctx, in->vt, in->m * in->per, &j.x);
        if (!s) s = hisp_vector_create(ctx, in->vt, in->n * in->per, &j.y);
        if (!s) s = hisp_vector_write(j.x, in->x);
        if (!s)
            s = hisp_solver_create(ctx, in->cg ? HISP_SOLVER_CG : HISP_SOLVER_BICGSTAB, &j.solver);
        /* a tolerance no iterate meets: every backend runs the same count */
        if (!s) s = hisp_solver_set_tolerances(j.solver, 1e-300, 0);
        if (!s) s = hisp_solver_set_max_iterations(j.solver, in->iterations);
        if (vendor) { /* hisp's loop over the plan's vectors, cuSPARSE's products */
            j.zeros = calloc((size_t)(in->n > 0 ? in->n : 1), hisp_type_size(in->t));
            /* (cuSPARSE rows run real types only: t is vt here) */
            if (!s && !j.zeros) s = HISP_ERR_OUT_OF_HOST_MEMORY;
            if (!s) s = vendor_plan(&j, row->dev.index);
            if (!s) s = hisp_mvector_create(j.plan, HISP_MVEC_ROWS, &j.xm);
            if (!s) s = hisp_mvector_create(j.plan, HISP_MVEC_ROWS, &j.ym);
            if (!s) s = hisp_mvector_write(j.xm, in->x);
            if (!s)
                s = time_calls(ctx, vendor_solve_call, vendor_solve_prep, &j, in->warmup, calls,
                               &row->ms);
        } else if (!s) {
            s = time_calls(ctx, solve_call, solve_prep, &j, in->warmup, calls, &row->ms);
        }
        if (!s) {
            row->iterations = j.info.iterations;
            row->rel_residual = j.info.relative_residual;
            row->ms = j.info.iterations > 0 ? row->ms / (double)j.info.iterations : NAN;
        }
        if (!s) s = read_vector(j.ym ? NULL : j.y, j.ym, in->vt, in->n * in->per, res);
    }
    if (!s && row->ms > 0) row->gbps = (double)in->bytes / (row->ms * 1e-3) * 1e-9;
    hisp_solver_destroy(&j.solver);
    hisp_mvector_destroy(&j.xm);
    hisp_mvector_destroy(&j.ym);
    hisp_mplan_destroy(&j.plan);
    free(j.zeros);
    hisp_vector_destroy(&j.x);
    hisp_vector_destroy(&j.y);
    hisp_matrix_destroy(&j.C);
    hisp_matrix_destroy(&j.B);
    hisp_matrix_destroy(&j.A);
    free(j.dev_ms);
    return s;
}

/* ---- rows --------------------------------------------------------------- */

static void row_reason(bench_row *row, hisp_context ctx, hisp_status s)
{
    hisp_error_info e = {0};
    const char *msg = NULL;
    if (ctx && hisp_context_last_error(ctx, &e) == HISP_SUCCESS && e.status == s && e.message &&
        e.message[0])
        msg = e.message;
    snprintf(row->reason, sizeof row->reason, "%s", msg ? msg : hisp_status_string(s));
}

/* Copy bandwidth per (backend, device), measured once. */
typedef struct {
    hisp_backend_kind b;
    int dev;
    double gbps;
} bw_entry;

static int run_row(bench_in *in, bench_row *row, bench_result *ref, bw_entry *bw, int *nbw)
{
    hisp_backend_kind b = row->kind == K_CUSPARSE ? HISP_BACKEND_CUDA
                          : row->kind == K_CUDA   ? HISP_BACKEND_CUDA
                          : row->kind == K_OPENCL ? HISP_BACKEND_OPENCL
                                                  : HISP_BACKEND_REFERENCE;
    hisp_context ctx = NULL;
    int rc = cli_context(&ctx);
    if (rc) return rc;
    bench_result res = {0};
    hisp_status s = hisp_context_set_backend(ctx, b, row->dev.index);
    cli_progress("%s on %s %d (%s)", op_names[in->op], kind_names[row->kind], row->dev.index,
                 row->dev.name);
    if (row->kind == K_CUSPARSE && (in->op == OP_ADD || in->per > 1 || in->vt != in->t ||
                                    (in->t != HISP_F32 && in->t != HISP_F64))) {
        row->status = "skipped";
        snprintf(row->reason, sizeof row->reason, "%s",
                 in->op == OP_ADD
                     ? "the library calls no vendor addition (bench/bench_add_cuda times csrgeam2)"
                     : "hisp's cuSPARSE plans take f32 and f64 (bench/bench_compound_cuda times "
                       "cuSPARSE on compound entries)");
        hisp_context_destroy(&ctx);
        return CLI_OK;
    }
    row->copy_gbps = NAN;
    for (int i = 0; !s && i < *nbw; i++)
        if (bw[i].b == b && bw[i].dev == row->dev.index) row->copy_gbps = bw[i].gbps;
    if (!s && isnan(row->copy_gbps)) {
        if (cli_copy_bandwidth(ctx, &row->copy_gbps) == CLI_OK && *nbw < 64)
            bw[(*nbw)++] = (bw_entry){b, row->dev.index, row->copy_gbps};
    }
    if (!s) s = run_op(ctx, in, row->kind == K_CUSPARSE, row, &res);
    if (s) {
        row->status = "failed";
        row_reason(row, ctx, s);
        hisp_context_destroy(&ctx);
        result_free(&res);
        return cli_exit_code(s);
    }
    row->status = "ok";
    row->fraction = row->gbps / row->copy_gbps;
    if (!ref->v) { /* the first row is the reference's: the oracle */
        *ref = res;
        row->oracle = true;
        row->rel_error = 0;
        /* a diverging method's iterates are chaotic: rounding decides them */
        in->check = in->op != OP_SOLVE         ? CHECK_RESULT
                    : !(row->rel_residual < 1) ? CHECK_NONE
                    : in->cg                   ? CHECK_RESULT
                                               : CHECK_RESIDUAL;
        in->ref_residual = row->rel_residual;
    } else
        row->rel_error = rel_error(&res, ref, in->m);
    if (ref->v != res.v) result_free(&res);
    hisp_context_destroy(&ctx);
    return CLI_OK;
}

/* The rows: the reference first (the oracle), then each OpenCL device, each
 * CUDA device and cuSPARSE on each; absent ones as skipped rows. */
static int list_rows(const bool want[K_COUNT], bench_row *rows, int cap)
{
    hisp_context ctx = NULL;
    int rc = cli_context(&ctx), n = 0;
    if (rc) return -rc;
    static const int order[] = {K_REFERENCE, K_OPENCL, K_CUDA};
    for (size_t o = 0; o < sizeof order / sizeof *order; o++) {
        int k = order[o];
        hisp_backend_kind b = k == K_REFERENCE ? HISP_BACKEND_REFERENCE
                              : k == K_OPENCL  ? HISP_BACKEND_OPENCL
                                               : HISP_BACKEND_CUDA;
        bool vendor = k == K_CUDA && want[K_CUSPARSE];
        if (!want[k] && !vendor) continue;
        int count = 0;
        char why[300] = "";
        if (!hisp_backend_compiled(b)) {
            snprintf(why, sizeof why, "not compiled into this build");
        } else {
            hisp_status s = hisp_backend_device_count(ctx, b, &count);
            if (s || count == 0) {
                hisp_error_info e = {0};
                const char *m =
                    hisp_context_last_error(ctx, &e) == HISP_SUCCESS && e.message && e.message[0]
                        ? e.message
                    : s ? hisp_status_string(s)
                        : "no device found";
                snprintf(why, sizeof why, "%s", m);
                count = 0;
            }
        }
        for (int pass = 0; pass < 2; pass++) {
            int kk = pass ? K_CUSPARSE : k;
            if (pass && !vendor) break;
            if (!want[kk]) continue;
            if (!count && n < cap) {
                rows[n] = (bench_row){.kind = kk, .status = "skipped", .rel_error = NAN};
                rows[n].dev.index = -1;
                snprintf(rows[n++].reason, sizeof rows->reason, "%s", why);
            }
            for (int d = 0; d < count && n < cap; d++) {
                rows[n] =
                    (bench_row){.kind = kk, .rel_error = NAN, .have_dev = true, .status = "failed"};
                snprintf(rows[n].reason, sizeof rows->reason, "not run");
                if (hisp_backend_device_info(ctx, b, d, &rows[n].dev) != HISP_SUCCESS)
                    rows[n].dev.index = d;
                n++;
            }
        }
    }
    hisp_context_destroy(&ctx);
    return n;
}

static int parse_backends(const char *s, bool want[K_COUNT])
{
    memset(want, 0, K_COUNT * sizeof *want);
    if (strcasecmp(s, "all") == 0) {
        for (int k = 0; k < K_COUNT; k++)
            want[k] = true;
        return CLI_OK;
    }
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL;
    int n = 0;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), n++) {
        int k = 0;
        while (k < K_COUNT && strcasecmp(tok, kind_names[k]) != 0)
            k++;
        if (k == K_COUNT)
            return cli_value_error("--backends: unknown backend '%s' (all, or a list of "
                                   "reference, opencl, cuda, cusparse)",
                                   tok);
        want[k] = true;
    }
    if (!n) return cli_value_error("--backends: empty list");
    return CLI_OK;
}

/* ---- input -------------------------------------------------------------- */

/* Symmetric with a positive diagonal (sorted CSR): CG's input. */
static bool spd_like(const bench_in *in)
{
    if (in->m != in->n) return false;
    for (int64_t i = 0; i < in->m; i++) {
        bool diag = false;
        for (int64_t k = in->ptr[i]; k < in->ptr[i + 1]; k++) {
            int32_t j = in->cols[k];
            double v = in->vals ? load(in->t, in->vals, k) : 1;
            if (j == i) {
                if (!(v > 0)) return false;
                diag = true;
                continue;
            }
            int64_t lo = in->ptr[j], hi = in->ptr[j + 1];
            while (lo < hi) { /* (j, i) in row j */
                int64_t mid = lo + (hi - lo) / 2;
                if (in->cols[mid] < i)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo == in->ptr[j + 1] || in->cols[lo] != i ||
                (in->vals ? load(in->t, in->vals, lo) : 1) != v)
                return false;
        }
        if (!diag) return false;
    }
    return true;
}

/* n entries of type t with random components in [-1, 1) (deterministic). */
static void *random_vector(hisp_type t, int64_t n)
{
    void *p = malloc((size_t)(n > 0 ? n : 1) * hisp_type_size(t));
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int64_t i = 0; p && i < n * hisp_type_components(t); i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        double v = (double)(x >> 11) * 0x1p-52 - 1.0;
        if (single(t))
            ((float *)p)[i] = (float)v;
        else
            ((double *)p)[i] = v;
    }
    return p;
}

/* ---- output ------------------------------------------------------------- */

static bool row_ok(const bench_in *in, const bench_row *r)
{
    if (in->check == CHECK_RESIDUAL)
        return r->rel_residual <= 10 * in->ref_residual + (single(in->t) ? 1e-5 : 1e-12);
    return !(r->rel_error > in->tolerance);
}

static const char *dev_type(const hisp_device_info *d)
{
    return d->is_gpu ? "gpu" : d->is_cpu ? "cpu" : "other";
}

static void print_json(const char *spec, const bench_in *in, const bench_row *rows, int n)
{
    cli_json j;
    json_init(&j, stdout);
    json_object_begin(&j, NULL);
    json_string(&j, "file", spec);
    json_string(&j, "op", op_names[in->op]);
    if (in->op == OP_SOLVE) {
        json_string(&j, "method", in->cg ? "cg" : "bicgstab");
        json_int(&j, "iterations", in->iterations);
    }
    json_string(&j, "type", hisp_type_name(in->t));
    json_int(&j, "rows", in->m);
    json_int(&j, "cols", in->n);
    json_int(&j, "nnz", in->nnz);
    json_int(&j, "repeat", in->repeat);
    json_int(&j, "warmup", in->warmup);
    json_uint(&j, "bytes", in->bytes);
    json_double(&j, "tolerance", in->tolerance);
    json_array_begin(&j, "results");
    for (int i = 0; i < n; i++) {
        const bench_row *r = &rows[i];
        json_object_begin(&j, NULL);
        json_string(&j, "backend", kind_names[r->kind == K_CUSPARSE ? K_CUDA : r->kind]);
        json_string(&j, "kernel", r->kind == K_CUSPARSE ? "cusparse" : "hisp");
        if (r->have_dev) {
            json_object_begin(&j, "device");
            json_int(&j, "index", r->dev.index);
            json_string(&j, "name", r->dev.name);
            json_string(&j, "platform", r->dev.platform);
            json_string(&j, "type", dev_type(&r->dev));
            json_object_end(&j);
        } else {
            json_null(&j, "device");
        }
        json_string(&j, "status", r->status);
        if (strcmp(r->status, "ok") != 0) {
            json_string(&j, "reason", r->reason);
        } else {
            json_double(&j, "ms", r->ms);
            json_double(&j, "device_ms", r->device_ms);
            json_double(&j, "gbps", r->gbps);
            json_double(&j, "copy_gbps", r->copy_gbps);
            json_double(&j, "bandwidth_fraction", r->fraction);
            json_double(&j, "rel_error", r->rel_error);
            if (in->check == CHECK_NONE)
                json_null(&j, "ok");
            else
                json_bool(&j, "ok", row_ok(in, r));
            if (in->op == OP_SOLVE) {
                json_int(&j, "iterations", r->iterations);
                json_double(&j, "relative_residual", r->rel_residual);
            }
        }
        json_object_end(&j);
    }
    json_array_end(&j);
    json_object_end(&j);
    json_finish(&j);
}

static void label_of(const bench_row *r, char *buf, size_t size)
{
    if (r->have_dev)
        snprintf(buf, size, "%s:%d %.40s", kind_names[r->kind], r->dev.index, r->dev.name);
    else
        snprintf(buf, size, "%s", kind_names[r->kind]);
}

static void print_table(const char *spec, const bench_in *in, const bench_row *rows, int n)
{
    printf("hisp bench: %s of %s (%lld x %lld, %lld nonzeros, %s)", op_names[in->op], spec,
           (long long)in->m, (long long)in->n, (long long)in->nnz, hisp_type_name(in->t));
    if (in->op == OP_SOLVE)
        printf(", %s, %d iterations", in->cg ? "CG" : "BiCGSTAB", in->iterations);
    printf("\nmedian of %d calls after %d warm-up, %llu bytes per %s\n\n", in->repeat, in->warmup,
           (unsigned long long)in->bytes, in->op == OP_SOLVE ? "iteration" : "call");
    printf("%-46s  %10s  %10s  %8s  %8s  %6s  %9s\n", "backend:device",
           in->op == OP_SOLVE ? "ms/iter" : "ms", "device ms", "GB/s", "copy", "of copy", "error");
    for (int i = 0; i < n; i++) {
        const bench_row *r = &rows[i];
        char label[64];
        label_of(r, label, sizeof label);
        if (strcmp(r->status, "ok") != 0) {
            printf("%-46s  %s: %s\n", label, r->status, r->reason);
            continue;
        }
        char err[16];
        if (r->oracle)
            snprintf(err, sizeof err, "(oracle)");
        else
            snprintf(err, sizeof err, "%.2e", r->rel_error);
        char dms[16] = "n/a";
        if (isfinite(r->device_ms)) snprintf(dms, sizeof dms, "%.4f", r->device_ms);
        printf("%-46s  %10.4f  %10s  %8.2f  %8.2f  %5.0f%%  %9s%s\n", label, r->ms, dms, r->gbps,
               r->copy_gbps, 100 * r->fraction, err,
               r->oracle                 ? ""
               : in->check == CHECK_NONE ? " (not checked)"
               : !row_ok(in, r)          ? " FAILED"
                                         : "");
    }
    if (in->check == CHECK_NONE)
        printf("\nThe method diverged on the reference (relative residual %.3g after %lld "
               "iterations):\nits iterates are decided by rounding, so the errors are not "
               "checked.\n",
               in->ref_residual, (long long)in->iterations);
    if (in->check == CHECK_RESIDUAL)
        printf("\nBiCGSTAB's iterates depend on rounding: each row's relative residual (the\n"
               "reference's: %.3g) is checked to be within 10x the reference's, not x.\n",
               in->ref_residual);
    printf("\nms: wall per call with a synchronize after it; device ms: the device's own time\n"
           "(n/a where not measured); copy: GB/s of a large hisp_vector_copy on the device;\n"
           "error: relative 2-norm against the reference backend (tolerance %.0e)\n",
           in->tolerance);
}

static int plot(const char *path, const char *spec, const bench_in *in, const bench_row *rows,
                int n, bool gbps)
{
    char(*labels)[64] = calloc((size_t)(n > 0 ? n : 1), sizeof *labels);
    const char **lp = calloc((size_t)(n > 0 ? n : 1), sizeof *lp);
    double *v = calloc((size_t)(n > 0 ? n : 1), sizeof *v);
    int rc = CLI_OK;
    if (!labels || !lp || !v) {
        rc = cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL);
    } else {
        for (int i = 0; i < n; i++) {
            label_of(&rows[i], labels[i], sizeof labels[i]);
            lp[i] = labels[i];
            v[i] = strcmp(rows[i].status, "ok") ? NAN : gbps ? rows[i].gbps : rows[i].ms;
        }
        char title[512], sub[256];
        snprintf(title, sizeof title, "hisp bench: %s of %s", op_names[in->op], spec);
        snprintf(sub, sizeof sub, "%s, %lld x %lld, %lld nonzeros; median of %d calls",
                 hisp_type_name(in->t), (long long)in->m, (long long)in->n, (long long)in->nnz,
                 in->repeat);
        rc = cli_plot_bars(path, title, sub,
                           gbps                 ? "GB/s (minimum traffic)"
                           : in->op == OP_SOLVE ? "ms per iteration (wall)"
                                                : "ms per call (wall)",
                           n, lp, v);
    }
    free(labels);
    free(lp);
    free(v);
    return rc;
}

/* ---- the command -------------------------------------------------------- */

int cmd_bench(int argc, char **argv)
{
    enum { O_OP, O_BACKENDS, O_TYPE, O_REPEAT, O_ITER, O_PLOT, O_PLOTV, O_JSON, O_HELP, O_HELP2 };
    static const cli_opt opts[] = {{"--op", true},
                                   {"--backends", true},
                                   {"--type", true},
                                   {"--repeat", true},
                                   {"--iterations", true},
                                   {"--plot", true},
                                   {"--plot-value", true},
                                   {"--json", false},
                                   {"--help", false},
                                   {"-h", false},
                                   {0, 0}};
    const char *val[O_HELP] = {0}, *spec = NULL;
    int prc = cli_parse_command("bench", argc, argv, opts, help, val, &spec);
    if (prc) return prc == CLI_HELP_SHOWN ? CLI_OK : prc;
    if (!spec) return cli_usage_error("bench", "missing FILE or gen:KIND:N");
    bool json = val[O_JSON] != NULL;
    cli_progress_enable(json);

    bench_in in = {.op = OP_SPMV, .warmup = 3, .iterations = 100};
    bool want[K_COUNT], plot_gbps = false;
    int rc = parse_backends(val[O_BACKENDS] ? val[O_BACKENDS] : "all", want);
    if (!rc && val[O_OP]) {
        int k = 0;
        while (k < 4 && strcasecmp(val[O_OP], op_names[k]) != 0)
            k++;
        if (k == 4)
            rc = cli_value_error("--op: unknown operation '%s' (spmv, spmvt, add, solve)",
                                 val[O_OP]);
        in.op = (bench_op)k;
    }
    in.repeat = in.op == OP_ADD ? 5 : in.op == OP_SOLVE ? 3 : 20;
    if (in.op == OP_ADD || in.op == OP_SOLVE) in.warmup = 1;
    if (!rc && val[O_REPEAT]) rc = cli_parse_int("--repeat", val[O_REPEAT], 1, 100000, &in.repeat);
    if (!rc && val[O_ITER])
        rc = cli_parse_int("--iterations", val[O_ITER], 1, 1000000, &in.iterations);
    if (!rc && val[O_PLOTV]) {
        if (strcasecmp(val[O_PLOTV], "gbps") == 0)
            plot_gbps = true;
        else if (strcasecmp(val[O_PLOTV], "ms") != 0)
            rc = cli_value_error("--plot-value: '%s' is not ms or gbps", val[O_PLOTV]);
    }
    if (!rc) rc = bench_type(val[O_TYPE], spec, &in.t);
    if (rc) return rc;

    hisp_context hctx = NULL; /* the input, on the host */
    hisp_matrix A = NULL, B = NULL;
    bench_row rows[40];
    bench_result ref = {0};
    int nrows = 0;
    if ((rc = cli_context(&hctx))) return rc;
    rc = cli_read_matrix_spec(hctx, spec, in.t, &A);
    hisp_matrix_info mi = {0};
    hisp_status s = HISP_SUCCESS;
    if (!rc) {
        const int32_t *r = NULL;
        s = hisp_matrix_convert(A, HISP_FORMAT_CSR);
        if (!s) s = hisp_matrix_get_info(A, &mi);
        if (!s) s = hisp_matrix_host_arrays(A, &in.ptr, &r, &in.cols, &in.vals);
        if (s) rc = cli_fail(hctx, s, spec);
    }
    if (!rc) rc = check_type(in.op, mi.type);
    if (!rc && (s = hisp_compound_vector_type(mi.type, &in.vt, &in.per)))
        rc = cli_fail(hctx, s, spec);
    if (rc) goto out;
    in.t = mi.type;
    in.m = mi.nrows;
    in.n = mi.ncols;
    in.nnz = mi.nnz;
    uint64_t es = hisp_type_size(in.vt) * (uint64_t)in.per; /* vector bytes per row */
    in.tolerance = single(in.t) ? 1e-4 : 1e-10;
    uint64_t csr = 0;
    if ((s = hisp_matrix_format_bytes(A, HISP_FORMAT_CSR, in.t, &csr))) {
        rc = cli_fail(hctx, s, spec);
        goto out;
    }
    if (in.op == OP_SPMV || in.op == OP_SPMVT) {
        in.x = random_vector(in.vt, (in.op == OP_SPMV ? in.n : in.m) * in.per);
        in.bytes = csr + es * (uint64_t)(in.m + in.n);
    } else if (in.op == OP_ADD) {
        cli_progress("perturbing A into B");
        const int32_t *r = NULL;
        hisp_matrix C = NULL;
        uint64_t ba = 0, bb = 0, bc = 0;
        s = hisp_matrix_perturb(A, 10, 2, &B);
        if (!s) s = hisp_matrix_convert(B, HISP_FORMAT_CSR);
        if (!s) s = hisp_matrix_host_arrays(B, &in.bptr, &r, &in.bcols, &in.bvals);
        /* the trees' sizes: A, B and the reference's C */
        if (!s) s = hisp_matrix_format_bytes(A, HISP_FORMAT_HISPARSE, in.t, &ba);
        if (!s) s = hisp_matrix_format_bytes(B, HISP_FORMAT_HISPARSE, in.t, &bb);
        if (!s) s = hisp_matrix_add(HISP_OP_N, A, HISP_OP_N, B, &C);
        if (!s) s = hisp_matrix_format_bytes(C, HISP_FORMAT_HISPARSE, in.t, &bc);
        hisp_matrix_destroy(&C);
        if (s) {
            rc = cli_fail(hctx, s, spec);
            goto out;
        }
        in.bytes = ba + bb + bc;
    } else {
        if (in.m != in.n) {
            rc = cli_value_error("%s: solve needs a square matrix, not %lld x %lld", spec,
                                 (long long)in.m, (long long)in.n);
            goto out;
        }
        /* quaternions: the library's one method for them is CG */
        in.cg = in.t == HISP_Q32 || in.t == HISP_Q64 ||
                ((in.t == HISP_F32 || in.t == HISP_F64) && spd_like(&in));
        in.x = random_vector(in.vt, in.m * in.per);
        in.bytes = in.cg ? csr + 8 * es * (uint64_t)in.n : 2 * csr + 12 * es * (uint64_t)in.n;
        in.tolerance = single(in.t) ? 1e-2 : 1e-6;
    }
    if ((in.op == OP_SPMV || in.op == OP_SPMVT || in.op == OP_SOLVE) && !in.x) {
        rc = cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL);
        goto out;
    }

    bool want_rows[K_COUNT];
    memcpy(want_rows, want, sizeof want_rows);
    want_rows[K_REFERENCE] = true; /* the oracle always runs */
    nrows = list_rows(want_rows, rows, (int)(sizeof rows / sizeof *rows));
    if (nrows < 0) {
        rc = -nrows;
        goto out;
    }
    bw_entry bw[64];
    int nbw = 0, worst = CLI_OK;
    bool bad = false;
    for (int i = 0; i < nrows; i++) {
        if (strcmp(rows[i].status, "skipped") == 0) continue;
        int r = run_row(&in, &rows[i], &ref, bw, &nbw);
        if (i == 0 && !ref.v) { /* no oracle: nothing to compare with */
            rc = r ? r : CLI_BACKEND;
            fprintf(stderr, "hisp: bench: the reference run failed: %s\n", rows[0].reason);
            goto out;
        }
        if (r && !worst) worst = r;
        if (strcmp(rows[i].status, "ok") == 0 && in.check != CHECK_NONE && !row_ok(&in, &rows[i]))
            bad = true;
    }
    /* the reference row was run as the oracle only */
    int first = want[K_REFERENCE] ? 0 : 1;
    bench_row *shown = rows + first;
    int nshown = nrows - first;
    if (json)
        print_json(spec, &in, shown, nshown);
    else
        print_table(spec, &in, shown, nshown);
    if (val[O_PLOT]) rc = plot(val[O_PLOT], spec, &in, shown, nshown, plot_gbps);
    if (!rc && worst) rc = worst;
    if (!rc && bad) {
        fprintf(stderr, "hisp: warning: an error against the reference exceeds the tolerance\n");
        rc = CLI_CHECK;
    }
out:
    result_free(&ref);
    free(in.x);
    hisp_matrix_destroy(&B);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&hctx);
    return rc;
}
