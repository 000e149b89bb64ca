/* SELL-C-sigma SpMV on the context's backend: the host form uploaded once
 * (A's, and A^T's for op = T, hispi_sell.h says what that costs), kernels
 * of kernels_cl/sell_spmv.cl through the backend's run-time kernel slots,
 * all kept in A->fdev until the device copy is dropped. Backends without
 * run-time kernels (the reference) run hispi_sell_ref_spmv on the vectors'
 * host copies. */
#include "../backends/backend.h"
#include "sell/hispi_sell.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hispi_sell_kernel_mode;

/* GPUs: slices wider than WIDE_W entries per row go to sell_spmv_wide, one
 * work-group of C x LANES work-items each (kernels_cl/sell_spmv.cl). */
#define WIDE_W 64
#define LANES 8

/* One SELL on the device. */
typedef struct {
    bool have;
    int64_t nrows, nslices, nwide;
    void *sptr, *perm, *col, *val;
    void *wide; /* nwide slice indices (GPUs) */
} dsell;

typedef struct {
    dsell m[2]; /* A (op N), A^T (op T) */
    void *k;    /* the kernel */
    void *kw;   /* sell_spmv_wide (GPUs) */
    bool slices;
    int group; /* work-group size */
    int64_t wide_w;
} sell_dev;

static bool has_kernels(hisp_context ctx)
{
    const hisp_backend_ops *o = ctx->ops;
    return o->kern_caps && o->kern_get && o->kern_free && o->kern_launch;
}

static void dsell_free(hisp_context ctx, dsell *d)
{
    void **b[5] = {&d->sptr, &d->perm, &d->col, &d->val, &d->wide};
    for (int i = 0; i < 5; i++) {
        if (*b[i]) ctx->ops->buf_free(ctx->be, *b[i]);
        *b[i] = NULL;
    }
    d->have = false;
}

void hispi_sell_drop_device(hisp_matrix A)
{
    sell_dev *d = A->fdev;
    if (!d) return;
    hisp_context ctx = A->ctx;
    for (int i = 0; i < 2; i++)
        dsell_free(ctx, &d->m[i]);
    if (d->k && ctx->ops->kern_free) ctx->ops->kern_free(ctx->be, d->k);
    if (d->kw && ctx->ops->kern_free) ctx->ops->kern_free(ctx->be, d->kw);
    free(d);
    A->fdev = NULL;
}

static hisp_status upload(hisp_context ctx, const void *src, size_t bytes, void **buf)
{
    HISPI_TRY(ctx->ops->buf_alloc(ctx, ctx->be, bytes, buf));
    return ctx->ops->buf_write(ctx, ctx->be, *buf, 0, src, bytes);
}

/* The slices wider than wide_w entries per row, as a buffer of indices. */
static hisp_status wide_list(hisp_context ctx, const hispi_sell *h, int64_t wide_w, dsell *d)
{
    d->nwide = 0;
    for (int64_t s = 0; s < h->nslices; s++)
        d->nwide += h->sptr[s + 1] - h->sptr[s] > wide_w * h->C;
    if (!d->nwide) return HISP_SUCCESS;
    int32_t *w = NULL;
    HISPI_TRY(hispi_alloc(ctx, (size_t)d->nwide, sizeof *w, (void **)&w));
    int64_t n = 0;
    for (int64_t s = 0; s < h->nslices; s++)
        if (h->sptr[s + 1] - h->sptr[s] > wide_w * h->C) w[n++] = (int32_t)s;
    hisp_status st = upload(ctx, w, (size_t)n * sizeof *w, &d->wide);
    free(w);
    return st;
}

static hisp_status dsell_upload(hisp_context ctx, const hispi_sell *h, int64_t wide_w, dsell *d)
{
    size_t es = hisp_type_size(h->type);
    hisp_status s = upload(ctx, h->sptr, (size_t)(h->nslices + 1) * 8, &d->sptr);
    if (!s) s = upload(ctx, h->perm, (size_t)h->nrows * 4, &d->perm);
    if (!s) s = upload(ctx, h->col, (size_t)h->padded * 4, &d->col);
    if (!s) s = upload(ctx, h->val, (size_t)h->padded * es, &d->val);
    if (!s && wide_w < INT64_MAX) s = wide_list(ctx, h, wide_w, d);
    if (s) {
        dsell_free(ctx, d);
        return s;
    }
    d->nrows = h->nrows;
    d->nslices = h->nslices;
    d->have = true;
    return HISP_SUCCESS;
}

/* A's device state with the SELL of op(A) and the kernel. */
static hisp_status need_device(hisp_context ctx, hisp_matrix A, int t, sell_dev **out)
{
    const hispi_sell *h = A->fdata;
    if (!A->fdev) {
        sell_dev *d = NULL;
        HISPI_TRY(hispi_calloc(ctx, 1, sizeof *d, (void **)&d));
        hispi_kcaps caps;
        hisp_status s = ctx->ops->kern_caps(ctx, ctx->be, &caps);
        if (!s) {
            d->slices = hispi_sell_kernel_mode ? hispi_sell_kernel_mode == 2 : caps.is_cpu != 0;
            int g = d->slices ? 1 : h->C > 4 * caps.simd ? h->C : 4 * caps.simd;
            d->group = g > caps.max_group ? caps.max_group : g < 1 ? 1 : g;
            char opts[160];
            bool dbl = h->type == HISP_F64;
            int lanes = h->C * LANES <= caps.max_group ? LANES : 1;
            snprintf(opts, sizeof opts,
                     "-DVALUE_T=%s -DIS_DOUBLE=%d -DATOM64=0 -DSLICE=%d -DLANES=%d",
                     dbl ? "double" : "float", dbl, (int)h->C, lanes);
            /* on CPUs a work-item streams whole slices, wide or not */
            d->wide_w = d->slices || lanes == 1 ? INT64_MAX : WIDE_W;
            s = ctx->ops->kern_get(ctx, ctx->be, HISPI_PROG_SELL, opts,
                                   d->slices ? "sell_spmv_slices" : "sell_spmv", &d->k);
            if (!s && d->wide_w < INT64_MAX)
                s = ctx->ops->kern_get(ctx, ctx->be, HISPI_PROG_SELL, opts, "sell_spmv_wide",
                                       &d->kw);
        }
        if (s) {
            if (d->k) ctx->ops->kern_free(ctx->be, d->k);
            free(d);
            return s;
        }
        A->fdev = d;
    }
    sell_dev *d = A->fdev;
    if (!d->m[t].have) {
        if (t == 0) {
            HISPI_TRY(dsell_upload(ctx, h, d->wide_w, &d->m[0]));
        } else {
            hispi_sell at;
            HISPI_TRY(hispi_sell_build_transposed(ctx, h, &at));
            hisp_status s = dsell_upload(ctx, &at, d->wide_w, &d->m[1]);
            hispi_sell_free(&at); /* the device holds it now */
            HISPI_TRY(s);
        }
    }
    *out = d;
    return HISP_SUCCESS;
}

static hisp_status run_host(hisp_context ctx, hisp_op op, double alpha, const hispi_sell *h,
                            hisp_vector x, double beta, hisp_vector y)
{
    void *xh = NULL, *yh = NULL;
    HISPI_TRY(hispi_vector_host(x, &xh));
    if (beta != 0)
        HISPI_TRY(hispi_vector_host(y, &yh));
    else
        HISPI_TRY(hispi_vector_host_out(y, &yh)); /* not read */
    HISPI_TRY(hispi_sell_ref_spmv(ctx, h, op, alpha, xh, beta, yh));
    return hispi_vector_host_written(y);
}

hisp_status hispi_sell_spmv(hisp_context ctx, hisp_op op, double alpha, hisp_matrix A,
                            hisp_vector x, double beta, hisp_vector y)
{
    const hispi_sell *h = A->fdata;
    if (op == HISP_OP_H) op = HISP_OP_T; /* real entries */
    if (!has_kernels(ctx)) return run_host(ctx, op, alpha, h, x, beta, y);
    int t = op == HISP_OP_N ? 0 : 1;
    sell_dev *d = NULL;
    HISPI_TRY(need_device(ctx, A, t, &d));
    const dsell *m = &d->m[t];
    void *xd = NULL, *yd = NULL;
    HISPI_TRY(hispi_vector_device(x, true, &xd));
    HISPI_TRY(hispi_vector_device(y, beta != 0, &yd));
    if (m->nrows > 0) {
        bool dbl = h->type == HISP_F64;
        int fk = dbl ? HISPI_KARG_F64 : HISPI_KARG_F32;
        hispi_karg a[11] = {
            {HISPI_KARG_I32, NULL, m->nrows, 0},
            {HISPI_KARG_BUF, m->sptr, 0, 0},
            {HISPI_KARG_BUF, m->perm, 0, 0},
            {HISPI_KARG_BUF, m->col, 0, 0},
            {HISPI_KARG_BUF, m->val, 0, 0},
            {HISPI_KARG_BUF, xd, 0, 0},
            {HISPI_KARG_BUF, yd, 0, 0},
            {fk, NULL, 0, alpha},
            {fk, NULL, 0, beta},
            {HISPI_KARG_I32, NULL, beta == 0, 0},
            {HISPI_KARG_I64, NULL, d->wide_w < INT64_MAX ? d->wide_w * h->C : INT64_MAX, 0},
        };
        int64_t items = d->slices ? m->nslices : m->nrows;
        size_t groups = (size_t)((items + d->group - 1) / d->group);
        int nargs = d->slices ? 10 : 11;
        HISPI_TRY(ctx->ops->kern_launch(ctx, ctx->be, d->k, a, nargs, groups, (size_t)d->group));
        if (m->nwide) {
            hispi_karg w[11] = {a[0], {HISPI_KARG_BUF, m->wide, 0, 0}, a[1], a[2], a[3], a[4],
                                a[5], a[6], a[7], a[8], a[9]};
            HISPI_TRY(ctx->ops->kern_launch(ctx, ctx->be, d->kw, w, 11, (size_t)m->nwide,
                                            (size_t)(h->C * LANES)));
        }
    }
    hispi_vector_device_written(y);
    return HISP_SUCCESS;
}
