/* hisp bench: the operations on one context, timed (wall per call with a
 * synchronize after each), their results on the host and their errors. */
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void bench_result_free(bench_result *r)
{
    free(r->v);
    free(r->ptr);
    free(r->cols);
    memset(r, 0, sizeof *r);
}

/* The median of the finite values (NaN when none). */
static double median_finite(double *v, int n)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(v[i])) v[k++] = v[i];
    return k ? cli_median(v, k) : NAN;
}

bool bench_single(hisp_type t)
{
    return hisp_type_size(t) / (size_t)hisp_type_components(t) == 4;
}

/* Scalar component i of an array of type t. */
double bench_load(hisp_type t, const void *p, int64_t i)
{
    return bench_single(t) ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

/* ---- timing ------------------------------------------------------------- */

typedef hisp_status (*call_fn)(void *user, int i);

/* A row's time budget: a slow backend (the serial reference on a large
 * input) stops repeating once its timed calls, and apart its warm-ups, have
 * taken this long; at least one call of each kind runs. */
enum { ROW_BUDGET_MS = 2000 };

/* One call i (negative: a warm-up) as a caller waits: prep (may be NULL)
 * untimed, then f and a synchronize, timed into *ms (less the kernel builds
 * it waited for: a first use's, when the warm-ups did not take them). */
static hisp_status one_call(hisp_context ctx, call_fn f, call_fn prep, void *u, int i, double *ms)
{
    hisp_status s = prep ? prep(u, i) : HISP_SUCCESS;
    if (!s) s = hisp_context_synchronize(ctx);
    if (s) return s;
    hisp_build_stats b0 = cli_builds(ctx), b1;
    double t0 = cli_now_ms();
    s = f(u, i);
    if (!s) s = hisp_context_synchronize(ctx);
    *ms = cli_now_ms() - t0;
    b1 = cli_builds(ctx);
    *ms -= cli_builds_ms(&b0, &b1);
    return s;
}

/* Wall ms per call: median of up to `repeat` timed calls after up to
 * `warmup` warm-ups, each series cut once it has taken ROW_BUDGET_MS (at
 * least one call of each); *made: the timed calls made. */
static hisp_status time_calls(hisp_context ctx, call_fn f, call_fn prep, void *u, int warmup,
                              int repeat, double *ms, int *made, hisp_transfer_stats *xfer)
{
    double *t = malloc((size_t)repeat * sizeof *t);
    if (!t) return HISP_ERR_OUT_OF_HOST_MEMORY;
    hisp_status s = HISP_SUCCESS;
    double spent = 0, dt = 0;
    for (int i = -warmup; i < 0 && !s && spent <= ROW_BUDGET_MS; i++) {
        s = one_call(ctx, f, prep, u, i, &dt);
        spent += dt;
    }
    int n = 0;
    cli_transfers_reset(ctx);
    for (spent = 0; n < repeat && !s && (n == 0 || spent <= ROW_BUDGET_MS); n++) {
        s = one_call(ctx, f, prep, u, n, &t[n]);
        spent += t[n];
    }
    cli_transfers_add(ctx, xfer);
    if (!s) *ms = cli_median(t, n);
    *made = s ? 0 : n;
    free(t);
    return s;
}

/* Mean wall ms per call of up to `repeat` calls back to back with one
 * synchronize after them (what a solver's loop sees), after `warmup`
 * warm-ups (at least one: its time caps the count so that the calls take
 * about ROW_BUDGET_MS); *made: the calls timed. */
static hisp_status time_batch(hisp_context ctx, call_fn f, void *u, int warmup, int repeat,
                              double *ms, int *made, hisp_transfer_stats *xfer)
{
    hisp_status s = HISP_SUCCESS;
    double one = 0;
    for (int i = -(warmup > 1 ? warmup : 1); i < 0 && !s; i++)
        s = one_call(ctx, f, NULL, u, i, &one);
    int n = repeat;
    if (one * n > ROW_BUDGET_MS) n = one * 2 > ROW_BUDGET_MS ? 1 : (int)(ROW_BUDGET_MS / one);
    cli_transfers_reset(ctx);
    hisp_build_stats b0 = cli_builds(ctx), b1;
    double t0 = cli_now_ms();
    for (int i = 0; i < n && !s; i++)
        s = f(u, i);
    if (!s) s = hisp_context_synchronize(ctx);
    double t = cli_now_ms() - t0;
    b1 = cli_builds(ctx);
    cli_transfers_add(ctx, xfer);
    *ms = (t - cli_builds_ms(&b0, &b1)) / n;
    *made = s ? 0 : n;
    return s;
}

/* ---- the operations on one context ------------------------------------- */

typedef struct {
    const bench_in *in;
    hisp_context ctx;
    hisp_matrix A, B;
    hisp_vector x, y;
    hisp_vector bank;    /* spmv-dot: the dots (0: the two calls', 1: the fused one's) */
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
    if (bench_single(j->in->t)) return one ? (const void *)&j->one_f32 : (const void *)&j->zero_f32;
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

static hisp_status spmm_call(void *u, int i)
{
    (void)i;
    op_job *j = u;
    return hisp_spmm(j->ctx, HISP_OP_N, scalar(j, true), j->A, j->x, scalar(j, false), j->y);
}

/* spmv-dot: q = A p then p.q as two calls, and as one */
static hisp_status unfused_call(void *u, int i)
{
    op_job *j = u;
    hisp_status s = spmv_call(u, i);
    return s ? s : hisp_vector_dot(j->x, j->y, hisp_result_entry(j->bank, 0));
}

static hisp_status fused_call(void *u, int i)
{
    op_job *j = u;
    (void)i;
    return hisp_spmv_dot(j->ctx, j->A, j->x, j->y, hisp_result_entry(j->bank, 1));
}

/* The three series of spmv-dot back to back (the fused one last: q is its
 * result) and its two dots. */
static hisp_status run_spmv_dot(op_job *j, int warmup, bench_row *row)
{
    const bench_in *in = j->in;
    hisp_transfer_stats none = {0};
    int calls = 0;
    hisp_status s = hisp_vector_create(j->ctx, in->vt, in->n, &j->x);
    if (!s) s = hisp_vector_create(j->ctx, in->vt, in->m, &j->y);
    if (!s) s = hisp_vector_create(j->ctx, in->vt, 2, &j->bank);
    if (!s) s = hisp_vector_write(j->x, in->x);
    if (!s) s = time_batch(j->ctx, spmv_call, j, warmup, in->repeat, &row->spmv_ms, &calls, &none);
    if (!s)
        s = time_batch(j->ctx, unfused_call, j, warmup, in->repeat, &row->unfused_ms, &calls,
                       &none);
    if (!s)
        s = time_batch(j->ctx, fused_call, j, warmup, in->repeat, &row->ms, &row->calls,
                       &row->xfer);
    double d[2] = {0, 0};
    float f[2] = {0, 0};
    if (!s) s = hisp_vector_read(j->bank, bench_single(in->t) ? (void *)f : (void *)d);
    row->dot_unfused = bench_single(in->t) ? f[0] : d[0];
    row->dot = bench_single(in->t) ? f[1] : d[1];
    return s;
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

/* multiply: C = A A to completion, C's allocation included (add_prep
 * destroys the previous C, untimed, as for add); the device's time from
 * hisp_context_spgemm_stats where the product ran there */
static hisp_status multiply_call(void *u, int i)
{
    op_job *j = u;
    hisp_status s = hisp_matrix_multiply(HISP_OP_N, j->A, HISP_OP_N, j->A, &j->C);
    hisp_spgemm_stats st;
    if (!s && i >= 0 && hisp_context_spgemm_stats(j->ctx, &st) == HISP_SUCCESS)
        j->dev_ms[i] = st.on_device ? st.device_ms : NAN;
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
        r->v[i] = bench_load(t, h, i);
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

/* r gets C's CSR form in double, each entry's scalar components (C is
 * converted). */
static hisp_status read_matrix(hisp_matrix C, hisp_type t, int64_t rows, bench_result *r)
{
    const int64_t *ptr = NULL;
    const int32_t *cols = NULL, *rws = NULL;
    const void *vals = NULL;
    hisp_status s = hisp_matrix_convert(C, HISP_FORMAT_CSR);
    if (!s) s = hisp_matrix_host_arrays(C, &ptr, &rws, &cols, &vals);
    if (s) return s;
    int64_t nnz = ptr[rows];
    int comp = hisp_type_components(t);
    r->n = nnz;
    r->comp = comp;
    r->ptr = malloc((size_t)(rows + 1) * sizeof *r->ptr);
    r->cols = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *r->cols);
    r->v = malloc((size_t)(nnz > 0 ? nnz * comp : 1) * sizeof *r->v);
    if (!r->ptr || !r->cols || !r->v) return HISP_ERR_OUT_OF_HOST_MEMORY;
    memcpy(r->ptr, ptr, (size_t)(rows + 1) * sizeof *ptr);
    if (nnz) memcpy(r->cols, cols, (size_t)nnz * sizeof *cols);
    /* a pattern matrix's entries are 1 (real: one component) */
    for (int64_t k = 0; k < nnz * comp; k++)
        r->v[k] = vals ? bench_load(t, vals, k) : 1.0;
    return HISP_SUCCESS;
}

/* ||a - b|| / ||b||; matrices merge row by row (an entry one lacks is 0). */
double bench_rel_error(const bench_result *a, const bench_result *b, int64_t rows)
{
    cli_error e = {0};
    if (!a->ptr) {
        for (int64_t i = 0; i < a->n && i < b->n; i++)
            cli_error_add(a->v[i], b->v[i], &e);
        if (a->n != b->n) return INFINITY;
    } else {
        for (int64_t i = 0; i < rows; i++) {
            int64_t p = a->ptr[i], q = b->ptr[i];
            while (p < a->ptr[i + 1] || q < b->ptr[i + 1]) {
                bool ha = p < a->ptr[i + 1], hb = q < b->ptr[i + 1];
                if (ha && hb && a->cols[p] == b->cols[q])
                    cli_error_add(a->v[p++], b->v[q++], &e);
                else if (ha && (!hb || a->cols[p] < b->cols[q]))
                    cli_error_add(a->v[p++], 0, &e);
                else
                    cli_error_add(0, b->v[q++], &e);
            }
        }
    }
    return cli_error_relative(&e);
}

bool bench_same_matrix(const bench_result *a, const bench_result *b, int64_t rows, double *err)
{
    if (!a->ptr || !b->ptr || a->n != b->n || a->comp != b->comp ||
        memcmp(a->ptr, b->ptr, (size_t)(rows + 1) * sizeof *a->ptr) != 0 ||
        (a->n && memcmp(a->cols, b->cols, (size_t)a->n * sizeof *a->cols) != 0))
        return false;
    /* the same structure: entry k is the same (row, column) in both */
    cli_error e = {0};
    for (int64_t k = 0; k < a->n * a->comp; k++)
        cli_error_add(a->v[k], b->v[k], &e);
    *err = cli_error_relative(&e);
    return true;
}

/* Runs the operation on ctx (its backend set); vendor: through a one-device
 * cuSPARSE plan. Fills the row's times and *res. */
hisp_status bench_run_op(hisp_context ctx, const bench_in *in, bool vendor, bench_row *row,
                         bench_result *res)
{
    op_job j = {.in = in, .ctx = ctx, .one_f64 = 1, .one_f32 = 1};
    hisp_status s =
        hisp_matrix_create_csr(ctx, in->t, in->m, in->n, in->ptr, in->cols, in->vals, &j.A);
    if (!s && !vendor && in->op != OP_ADD && in->format != HISP_FORMAT_CSR)
        s = hisp_matrix_convert(j.A, in->format);
    int calls = in->repeat;
    /* the reference compiles and caches nothing: no warm-up */
    int warmup = row->kind == K_REFERENCE ? 0 : in->warmup;
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
                s = time_calls(ctx, t ? vendor_spmvt_call : vendor_spmv_call, NULL, &j, warmup,
                               calls, &row->ms, &row->calls, &row->xfer);
            if (!s) row->device_ms = median_finite(j.dev_ms, row->calls);
        } else {
            if (!s)
                s = time_calls(ctx, spmv_call, NULL, &j, warmup, calls, &row->ms, &row->calls,
                               &row->xfer);
            if (!s)
                s = hisp_spmv_timed(ctx, op_of(in), scalar(&j, true), j.A, j.x, scalar(&j, false),
                                    j.y, 1, row->calls, j.dev_ms);
            if (!s) row->device_ms = cli_median(j.dev_ms, row->calls);
            /* the result of a plain call (the timed runs left it too, beta = 0) */
            if (!s) s = spmv_call(&j, 0);
        }
        if (!s) s = read_vector(j.ym ? NULL : j.y, j.ym, in->vt, yl, res);
    } else if (in->op == OP_SPMM) {
        int64_t k = in->columns;
        if (!s)
            s = hisp_vector_create_columns(ctx, in->vt, in->n * in->per, k, HISP_ORDER_COL, &j.x);
        if (!s)
            s = hisp_vector_create_columns(ctx, in->vt, in->m * in->per, k, HISP_ORDER_COL, &j.y);
        if (!s) s = hisp_vector_write(j.x, in->x);
        if (!s)
            s = time_calls(ctx, spmm_call, NULL, &j, warmup, calls, &row->ms, &row->calls,
                           &row->xfer);
        int queued = 0;
        hisp_transfer_stats none = {0};
        if (!s) s = time_batch(ctx, spmm_call, &j, warmup, calls, &row->device_ms, &queued, &none);
        if (!s) s = read_vector(j.y, NULL, in->vt, in->m * in->per * k, res);
    } else if (in->op == OP_SPMV_DOT) {
        if (!s) s = run_spmv_dot(&j, warmup, row);
        if (!s) s = read_vector(j.y, NULL, in->vt, in->m, res);
    } else if (in->op == OP_ADD) {
        if (!s)
            s = hisp_matrix_create_csr(ctx, in->t, in->m, in->n, in->bptr, in->bcols, in->bvals,
                                       &j.B);
        if (!s) s = hisp_matrix_convert(j.A, HISP_FORMAT_HISPARSE);
        if (!s) s = hisp_matrix_convert(j.B, HISP_FORMAT_HISPARSE);
        if (!s)
            s = time_calls(ctx, add_call, add_prep, &j, warmup, calls, &row->ms, &row->calls,
                           &row->xfer);
        if (!s) row->device_ms = median_finite(j.dev_ms, row->calls);
        if (!s) s = read_matrix(j.C, in->t, in->m, res);
    } else if (in->op == OP_MULTIPLY) {
        if (!s && vendor) s = hisp_context_set_option(ctx, "spgemm", "cusparse");
        if (!s)
            s = time_calls(ctx, multiply_call, add_prep, &j, warmup, calls, &row->ms, &row->calls,
                           &row->xfer);
        if (!s) row->device_ms = median_finite(j.dev_ms, row->calls);
        if (!s) s = read_matrix(j.C, in->t, in->m, res);
        row->c_nnz = res->n;
    } else { /* solve */
        if (!s) s = hisp_vector_create(ctx, in->vt, in->m * in->per, &j.x);
        if (!s) s = hisp_vector_create(ctx, in->vt, in->n * in->per, &j.y);
        if (!s) s = hisp_vector_write(j.x, in->x);
        if (!s) s = hisp_solver_create(ctx, in->method, &j.solver);
        if (!s && in->method == HISP_SOLVER_GMRES)
            s = hisp_solver_set_restart(j.solver, BENCH_RESTART);
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
                s = time_calls(ctx, vendor_solve_call, vendor_solve_prep, &j, warmup, calls,
                               &row->ms, &row->calls, &row->xfer);
        } else if (!s) {
            s = time_calls(ctx, solve_call, solve_prep, &j, warmup, calls, &row->ms, &row->calls,
                           &row->xfer);
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
    hisp_vector_destroy(&j.bank);
    hisp_matrix_destroy(&j.C);
    hisp_matrix_destroy(&j.B);
    hisp_matrix_destroy(&j.A);
    free(j.dev_ms);
    return s;
}
