/* SpMV runs shared by `hisp spmv` and `hisp demo`: one result run, optional
 * timing with hisp_spmv_timed, optional check against the reference backend;
 * over several columns hisp_spmm, timed by the wall clock. */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Bytes of one scalar component of t (4 or 8). */
static size_t scalar_size(hisp_type t)
{
    return hisp_type_size(t) / (size_t)hisp_type_components(t);
}

void *cli_default_x(hisp_type t, int64_t n)
{
    int64_t k = n * hisp_type_components(t); /* scalars */
    void *x = malloc((size_t)(n > 0 ? n : 1) * hisp_type_size(t));
    if (!x) return NULL;
    for (int64_t j = 0; j < k; j++) {
        if (scalar_size(t) == 4)
            ((float *)x)[j] = (float)(1.0 / (double)(j + 1));
        else
            ((double *)x)[j] = 1.0 / (double)(j + 1);
    }
    return x;
}

static double load(size_t ss, const void *p, int64_t i)
{
    return ss == 4 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

/* Over the n entries' scalar components. */
static double rel_error(hisp_type t, const void *a, const void *b, int64_t n)
{
    cli_error e = {0};
    size_t ss = scalar_size(t);
    int64_t k = n * hisp_type_components(t);
    for (int64_t i = 0; i < k; i++) {
        cli_error_add(load(ss, a, i), load(ss, b, i), &e);
    }
    return cli_error_relative(&e);
}

/* Flops of one entry's multiply-add: real 2, complex 8, quaternion 32, 3x3
 * block 18. */
static double entry_flops(hisp_type t)
{
    switch (t) {
    case HISP_C32:
    case HISP_C64:
        return 8;
    case HISP_Q32:
    case HISP_Q64:
        return 32;
    case HISP_B3X3_F32:
    case HISP_B3X3_F64:
        return 18;
    default:
        return 2;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double cli_median(double *v, int n)
{
    if (n <= 0) return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The job's columns (1 for a plain SpMV). */
static int64_t job_cols(const cli_spmv_job *job)
{
    return job->cols > 1 ? job->cols : 1;
}

/* A vector of n rows in the job's columns (column after column). */
static hisp_status job_vector(hisp_context ctx, const cli_spmv_job *job, hisp_type t, int64_t n,
                              hisp_vector *v)
{
    return job_cols(job) > 1
               ? hisp_vector_create_columns(ctx, t, n, job_cols(job), HISP_ORDER_COL, v)
               : hisp_vector_create(ctx, t, n, v);
}

/* The product once: hisp_spmm over several columns, else hisp_spmv (or
 * variant v when not NULL). */
static hisp_status product(hisp_context ctx, hisp_matrix A, const cli_spmv_job *job,
                           const hisp_variant *v, const void *alpha, const void *beta,
                           hisp_vector x, hisp_vector y)
{
    if (job_cols(job) > 1) return hisp_spmm(ctx, job->op, alpha, A, x, beta, y);
    return v ? hisp_spmv_variant(ctx, v, alpha, A, x, beta, y)
             : hisp_spmv(ctx, job->op, alpha, A, x, beta, y);
}

/* ms[i] = the wall time of call i of `repeat` products after `warmup`
 * untimed ones, each followed by a synchronize (kernels built on the way
 * not counted): hisp_spmm has no device-timed form. */
static hisp_status product_timed(hisp_context ctx, hisp_matrix A, const cli_spmv_job *job,
                                 const void *alpha, const void *beta, hisp_vector x, hisp_vector y,
                                 double *ms)
{
    hisp_status s = HISP_SUCCESS;
    for (int i = -job->warmup; i < job->repeat && !s; i++) {
        hisp_build_stats b0 = cli_builds(ctx), b1;
        double t0 = cli_now_ms();
        s = product(ctx, A, job, NULL, alpha, beta, x, y);
        if (!s) s = hisp_context_synchronize(ctx);
        b1 = cli_builds(ctx);
        if (i >= 0) ms[i] = cli_now_ms() - t0 - cli_builds_ms(&b0, &b1);
    }
    return s;
}

/* y = alpha*op(A)*x + beta*y0 once on ctx (with variant v when not NULL);
 * y_out gets m entries per column. */
static hisp_status spmv_once(hisp_context ctx, hisp_matrix A, const cli_spmv_job *job,
                             const hisp_variant *v, const void *alpha, const void *beta,
                             hisp_vector x, hisp_vector y, const void *y0, void *y_out,
                             double *call_ms)
{
    hisp_status s = hisp_vector_write(y, y0);
    if (!s) s = hisp_context_synchronize(ctx); /* y0's upload is not the call's */
    hisp_build_stats b0 = cli_builds(ctx), b1;
    double t0 = cli_now_ms();
    if (!s) s = product(ctx, A, job, v, alpha, beta, x, y);
    if (!s) s = hisp_context_synchronize(ctx);
    b1 = cli_builds(ctx);
    /* kernels built on the way are reported apart ("kernels") */
    if (!s && call_ms) *call_ms = cli_now_ms() - t0 - cli_builds_ms(&b0, &b1);
    if (!s) s = hisp_vector_read(y, y_out);
    return s;
}

/* The reference result on a context of its own (a copy of A's CSR arrays). */
static int reference_result(hisp_matrix A, const cli_spmv_job *job, const void *alpha,
                            const void *beta, const void *x, const void *y0,
                            const cli_spmv_result *res, void *yref)
{
    hisp_context rctx = NULL;
    int rc = cli_context(&rctx);
    if (rc) return rc;
    hisp_matrix B = NULL;
    hisp_vector xv = NULL, yv = NULL;
    const int64_t *ptr = NULL;
    const int32_t *rows = NULL, *cols = NULL;
    const void *vals = NULL;
    hisp_matrix_info mi = {0};
    hisp_status s = hisp_matrix_get_info(A, &mi);
    if (!s) s = hisp_matrix_host_arrays(A, &ptr, &rows, &cols, &vals);
    if (!s && (!ptr || !cols)) s = HISP_ERR_INVALID_ARGUMENT; /* A was converted to CSR */
    if (!s) s = hisp_matrix_create_csr(rctx, mi.type, mi.nrows, mi.ncols, ptr, cols, vals, &B);
    if (!s) s = job_vector(rctx, job, res->vt, res->n, &xv);
    if (!s) s = job_vector(rctx, job, res->vt, res->m, &yv);
    if (!s) s = hisp_vector_write(xv, x);
    if (!s) s = spmv_once(rctx, B, job, NULL, alpha, beta, xv, yv, y0, yref, NULL);
    if (s) rc = cli_fail(rctx, s, NULL);
    hisp_vector_destroy(&xv);
    hisp_vector_destroy(&yv);
    hisp_matrix_destroy(&B);
    hisp_context_destroy(&rctx);
    return rc;
}

/* The form the SpMV runs on: --format auto's choice (res->choice; *var
 * when it is a compound variant, else *format), and for a format other
 * than CSR a copy of A in it (*H, with job->node_size). */
static int spmv_form(hisp_context ctx, hisp_matrix A, const cli_spmv_job *job, hisp_type type,
                     cli_spmv_result *res, hisp_format *format, const hisp_variant **var,
                     hisp_matrix *H)
{
    hisp_status s = HISP_SUCCESS;
    if (job->auto_format) {
        hisp_format_options fo = {0, 0, cli_format_progress, NULL, NULL, 0};
        cli_progress("choosing the format (--format auto)");
        /* the choice takes op n or t; A^H is A^T for real entries */
        hisp_op cop = job->op == HISP_OP_H && cli_type_real(type) ? HISP_OP_T : job->op;
        s = hisp_matrix_choose_format(ctx, A, cop, &fo, NULL, 0, NULL, &res->choice);
        cli_format_progress_end();
        if (s) return cli_fail(ctx, s, NULL);
        res->have_choice = true;
        if (res->choice.best.kind == HISP_CHOICE_FORMAT) *format = res->choice.best.format;
        if (res->choice.best.kind == HISP_CHOICE_VARIANT) *var = &res->choice.best.variant;
    }
    if (*format != HISP_FORMAT_CSR) {
        if (job->node_size) s = hisp_matrix_set_node_size(A, job->node_size);
        cli_progress("building the %s form", hisp_format_name(*format));
        if (!s) s = hisp_matrix_duplicate(A, *format, H);
        if (s) return cli_fail(ctx, s, NULL);
    }
    return CLI_OK;
}

int cli_spmv_run(hisp_context ctx, hisp_matrix A, const cli_spmv_job *job, cli_spmv_result *res)
{
    hisp_matrix_info mi = {0};
    memset(res, 0, sizeof *res);
    res->median_ms = res->min_ms = res->gflops = res->gbps = res->call_ms = NAN;
    res->rel_error = NAN;
    /* kernels built on the way (the warm-up runs take them: the timed runs
     * never include a build) */
    hisp_build_stats b0 = cli_builds(ctx);
    hisp_status s = hisp_matrix_convert(A, HISP_FORMAT_CSR);
    if (!s) s = hisp_matrix_get_info(A, &mi);
    if (!s) s = hisp_context_get_device(ctx, &res->device);
    int per = 1;
    hisp_type vt = HISP_F64;
    if (!s) s = hisp_compound_vector_type(mi.type, &vt, &per);
    if (s) return cli_fail(ctx, s, NULL);
    if (job->format != HISP_FORMAT_CSR && !cli_type_real(mi.type)) {
        char what[64];
        snprintf(what, sizeof what, "spmv --format %s", hisp_format_name(job->format));
        return cli_type_unsupported(what, mi.type,
                                    "this format takes f32 or f64; use --format csr");
    }
    int64_t k = job_cols(job);
    if (k > 1 && !(mi.type == HISP_F32 || mi.type == HISP_F64 || mi.type == HISP_C32 ||
                   mi.type == HISP_C64)) {
        char what[64];
        snprintf(what, sizeof what, "spmv over %lld columns", (long long)k);
        return cli_type_unsupported(what, mi.type, "hisp_spmm takes f32, f64, c32 and c64");
    }
    if (k > 1 && job->auto_format)
        return cli_value_error("spmv --format auto: x has %lld columns, and SpMM runs on the CSR "
                               "family only (use --format csr, the default)",
                               (long long)k);
    int rc = cli_check_real("--alpha", job->alpha, vt);
    if (!rc) rc = cli_check_real("--beta", job->beta, vt);
    if (rc) return rc;
    hisp_format format = job->format;
    const hisp_variant *var = NULL; /* --format auto chose a compound variant */
    hisp_matrix H = NULL;           /* --format hisparse, sell: the operation runs on a copy */
    if ((rc = spmv_form(ctx, A, job, mi.type, res, &format, &var, &H))) return rc;
    hisp_matrix Aop = H ? H : A;
    hisp_type t = vt; /* the vectors' type below */
    size_t es = hisp_type_size(t);
    bool single = scalar_size(t) == 4;
    res->type = mi.type;
    res->vt = vt;
    res->nnz = mi.nnz;
    res->m = (job->op == HISP_OP_N ? mi.nrows : mi.ncols) * per;
    res->n = (job->op == HISP_OP_N ? mi.ncols : mi.nrows) * per;
    res->tolerance = single ? 1e-4 : 1e-10;
    float af = (float)job->alpha, bf = (float)job->beta;
    const void *alpha = single ? (const void *)&af : (const void *)&job->alpha;
    const void *beta = single ? (const void *)&bf : (const void *)&job->beta;

    rc = CLI_OK;
    void *xd = NULL, *y0d = NULL, *yref = NULL;
    double *ms = NULL;
    hisp_vector x = NULL, y = NULL;
    const void *xh = job->x, *y0 = job->y0;
    int64_t xlen = res->n * k, ylen = res->m * k; /* entries of x and y, all columns */
    if (!xh) xh = xd = cli_default_x(t, xlen);
    if (!y0) y0 = y0d = calloc((size_t)(ylen > 0 ? ylen : 1), es);
    res->y = malloc((size_t)(ylen > 0 ? ylen : 1) * es);
    if (!xh || !y0 || !res->y) {
        rc = cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL);
        goto out;
    }
    s = job_vector(ctx, job, t, res->n, &x);
    if (!s) s = job_vector(ctx, job, t, res->m, &y);
    if (!s) s = hisp_vector_write(x, xh);
    if (!s && format == HISP_FORMAT_HISPARSE && k == 1) {
        /* HiSparse: the first call is scheduled (its counts are reported);
         * later ones replay its leaf queues on device backends */
        s = spmv_once(ctx, Aop, job, NULL, alpha, beta, x, y, y0, res->y, NULL);
        if (!s) s = hisp_context_sched_counts(ctx, &res->sched);
        res->have_sched = !s;
    }
    if (!s && job->repeat > 0) {
        /* timed runs first: with beta != 0 they accumulate into y, so the
         * result run below starts again from y0 */
        cli_progress("timing %d runs on %s (%s), %d warm-up", job->repeat,
                     hisp_backend_name(res->device.backend), res->device.name, job->warmup);
        ms = malloc((size_t)job->repeat * sizeof *ms);
        if (!ms) s = HISP_ERR_OUT_OF_HOST_MEMORY;
        if (!s) s = hisp_vector_write(y, y0);
        cli_transfers_reset(ctx);
        if (!s && k > 1)
            s = product_timed(ctx, Aop, job, alpha, beta, x, y, ms);
        else if (!s)
            s = var ? hisp_spmv_variant_timed(ctx, var, alpha, Aop, x, beta, y, job->warmup,
                                              job->repeat, ms)
                    : hisp_spmv_timed(ctx, job->op, alpha, Aop, x, beta, y, job->warmup,
                                      job->repeat, ms);
        cli_transfers_add(ctx, &res->xfer);
        if (!s) {
            qsort(ms, (size_t)job->repeat, sizeof *ms, cmp_double);
            res->min_ms = ms[0];
            res->median_ms = job->repeat % 2
                                 ? ms[job->repeat / 2]
                                 : 0.5 * (ms[job->repeat / 2 - 1] + ms[job->repeat / 2]);
        }
    }
    if (!s) {
        cli_progress("SpMV on %s (%s)", hisp_backend_name(res->device.backend), res->device.name);
        if (job->repeat <= 0) cli_transfers_reset(ctx); /* the one run is the measured call */
        s = spmv_once(ctx, Aop, job, var, alpha, beta, x, y, y0, res->y, &res->call_ms);
        if (job->repeat <= 0) cli_transfers_add(ctx, &res->xfer);
    }
    if (s) {
        rc = cli_fail(ctx, s, NULL);
        goto out;
    }
    uint64_t csr_bytes = 0;
    if ((s = var ? hisp_matrix_layout_bytes(A, var->layout.outer, &csr_bytes)
                 : hisp_matrix_format_bytes(Aop, format, mi.type, &csr_bytes))) {
        rc = cli_fail(ctx, s, NULL);
        goto out;
    }
    res->model_bytes =
        csr_bytes + es * (uint64_t)xlen + es * (uint64_t)ylen * (job->beta != 0 ? 2u : 1u);
    if (job->repeat > 0 && res->median_ms > 0) {
        res->gflops =
            entry_flops(mi.type) * (double)res->nnz * (double)k / (res->median_ms * 1e-3) * 1e-9;
        res->gbps = (double)res->model_bytes / (res->median_ms * 1e-3) * 1e-9;
    }
    if (job->check) {
        cli_progress("checking against the reference backend");
        yref = malloc((size_t)(ylen > 0 ? ylen : 1) * es);
        if (!yref) {
            rc = cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL);
            goto out;
        }
        rc = reference_result(A, job, alpha, beta, xh, y0, res, yref);
        if (rc) goto out;
        res->rel_error = rel_error(t, res->y, yref, ylen);
    }
out:
    if (rc) {
        free(res->y);
        res->y = NULL;
    }
    hisp_build_stats b1 = cli_builds(ctx);
    cli_builds_add(&res->builds, &b0, &b1);
    hisp_vector_destroy(&x);
    hisp_vector_destroy(&y);
    hisp_matrix_destroy(&H);
    free(xd);
    free(y0d);
    free(yref);
    free(ms);
    return rc;
}

int cli_copy_bandwidth(hisp_context ctx, double *gbps)
{
    hisp_device_info d = {0};
    hisp_status s = hisp_context_get_device(ctx, &d);
    if (s) return cli_fail(ctx, s, NULL);
    /* large enough to leave the caches (large L3s hold 32 MiB): 128 MiB on
     * CPUs, global memory / 16 up to 1 GiB on GPUs */
    uint64_t bytes = (uint64_t)128 << 20;
    if (d.is_gpu && d.global_mem / 16 > bytes) bytes = d.global_mem / 16;
    if (bytes > ((uint64_t)1 << 30)) bytes = (uint64_t)1 << 30;
    enum { WARMUP = 2, REPEAT = 5 };
    double one = 1, ms[REPEAT];
    hisp_vector x = NULL, y = NULL;
    cli_progress("measuring the copy bandwidth of %s (%s)", hisp_backend_name(d.backend), d.name);
    s = hisp_vector_create(ctx, HISP_F64, (int64_t)(bytes / 8), &x);
    if (!s) s = hisp_vector_create(ctx, HISP_F64, (int64_t)(bytes / 8), &y);
    if (!s) s = hisp_vector_fill(x, hisp_scalar_host(&one));
    if (!s) s = hisp_context_synchronize(ctx);
    for (int i = -WARMUP; i < REPEAT && !s; i++) {
        hisp_build_stats b0 = cli_builds(ctx), b1;
        double t0 = cli_now_ms();
        s = hisp_vector_copy(x, y);
        if (!s) s = hisp_context_synchronize(ctx);
        b1 = cli_builds(ctx);
        if (i >= 0) ms[i] = cli_now_ms() - t0 - cli_builds_ms(&b0, &b1); /* a copy, not a build */
    }
    hisp_vector_destroy(&x);
    hisp_vector_destroy(&y);
    if (s) return cli_fail(ctx, s, NULL);
    qsort(ms, REPEAT, sizeof *ms, cmp_double);
    *gbps = 2.0 * (double)bytes / (ms[REPEAT / 2] * 1e-3) * 1e-9;
    return CLI_OK;
}
