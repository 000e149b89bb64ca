/* SELL-C-sigma SpMV on the context's backend: the host form uploaded once
 * (A's, and A^T's for op = T, hispi_sell.h says what that costs), kernels
 * of kernels/sell_spmv.cl through the backend's run-time kernel slots,
 * all kept in A->fdev until the device copy is dropped. Backends without
 * run-time kernels (the reference) run hispi_sell_ref_spmv on the vectors'
 * host copies. */
#include "backend/backend.h"
#include "sell/hispi_sell.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hispi_sell_kernel_mode;

/* GPUs: slices wider than WIDE_W entries per row go to sell_spmv_wide in
 * chunks of CHUNK entries per row, one work-group of C x LANES work-items
 * per chunk (kernels/sell_spmv.cl). A SELL of fewer than LANES_ROWS rows
 * (one work-item per row would leave most of a GPU idle) runs
 * sell_spmv_lanes instead, one launch with one work-group per slice, where
 * no row is longer than LANES_MAX_W (a longer one would hold its work-group
 * alone) and the rows are long enough for the lanes: LANES / 2 entries per
 * row on average, or a slice that would otherwise take the wide path's two
 * launches. */
#define WIDE_W 64
#define LANES 8
#define CHUNK 256
#define LANES_ROWS (1 << 17)
#define LANES_MAX_W 512

/* One SELL on the device. */
typedef struct {
    bool have;
    bool lanes; /* sell_spmv_lanes */
    int64_t nrows, nslices, nwide, nchunks;
    void *sptr, *perm, *col, *val;
    /* GPUs: the wide slices (wslice, nwide), their chunks' ranges (wchunk,
     * nwide + 1), each chunk's slice and first entry (cslice, ck0) and its
     * partial sums (part, nchunks x C entries) */
    void *wslice, *wchunk, *cslice, *ck0, *part;
} dsell;

typedef struct {
    dsell m[2];         /* A (op N), A^T (op T) */
    void *k;            /* the kernel */
    void *kw, *ks, *kl; /* sell_spmv_wide, _wide_sum, _lanes (GPUs) */
    bool slices;
    int group; /* work-group size */
    int64_t wide_w;
} sell_dev;

static bool has_kernels(hisp_context ctx)
{
    return HISPI_BE_HAS(ctx, kern_caps) && HISPI_BE_HAS(ctx, kern_get) &&
           HISPI_BE_HAS(ctx, kern_free) && HISPI_BE_HAS(ctx, kern_launch);
}

static void dsell_free(hisp_context ctx, dsell *d)
{
    void **b[9] = {&d->sptr,   &d->perm,   &d->col, &d->val, &d->wslice,
                   &d->wchunk, &d->cslice, &d->ck0, &d->part};
    for (int i = 0; i < 9; i++) {
        if (*b[i]) HISPI_BE_VOID(ctx, buf_free, *b[i]);
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
    if (d->k) HISPI_BE_VOID(ctx, kern_free, d->k);
    if (d->kw) HISPI_BE_VOID(ctx, kern_free, d->kw);
    if (d->ks) HISPI_BE_VOID(ctx, kern_free, d->ks);
    if (d->kl) HISPI_BE_VOID(ctx, kern_free, d->kl);
    free(d);
    A->fdev = NULL;
}

static hisp_status upload(hisp_context ctx, const void *src, size_t bytes, void **buf)
{
    HISPI_TRY(HISPI_BE(ctx, buf_alloc, bytes, buf));
    return HISPI_BE(ctx, buf_write, *buf, 0, src, bytes);
}

/* The slices wider than wide_w entries per row and their chunks. */
static hisp_status wide_list(hisp_context ctx, const hispi_sell *h, int64_t wide_w, dsell *d)
{
    d->nwide = d->nchunks = 0;
    for (int64_t s = 0; s < h->nslices; s++) {
        int64_t width = (h->sptr[s + 1] - h->sptr[s]) / h->C;
        if (width <= wide_w) continue;
        d->nwide++;
        d->nchunks += (width + CHUNK - 1) / CHUNK;
    }
    if (!d->nwide) return HISP_SUCCESS;
    if (d->nchunks > INT32_MAX)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "SELL: %lld chunks of wide slices",
                          (long long)d->nchunks);
    int32_t *ws = NULL, *wc = NULL, *cs = NULL, *ck = NULL;
    hisp_status st = hispi_alloc(ctx, (size_t)d->nwide, sizeof *ws, (void **)&ws);
    if (!st) st = hispi_alloc(ctx, (size_t)d->nwide + 1, sizeof *wc, (void **)&wc);
    if (!st) st = hispi_alloc(ctx, (size_t)d->nchunks, sizeof *cs, (void **)&cs);
    if (!st) st = hispi_alloc(ctx, (size_t)d->nchunks, sizeof *ck, (void **)&ck);
    int64_t w = 0, c = 0;
    for (int64_t s = 0; !st && s < h->nslices; s++) {
        int64_t width = (h->sptr[s + 1] - h->sptr[s]) / h->C;
        if (width <= wide_w) continue;
        ws[w] = (int32_t)s;
        wc[w++] = (int32_t)c;
        for (int64_t k = 0; k < width; k += CHUNK, c++) {
            cs[c] = (int32_t)s;
            ck[c] = (int32_t)k;
        }
    }
    if (!st) wc[w] = (int32_t)c;
    if (!st) st = upload(ctx, ws, (size_t)d->nwide * 4, &d->wslice);
    if (!st) st = upload(ctx, wc, ((size_t)d->nwide + 1) * 4, &d->wchunk);
    if (!st) st = upload(ctx, cs, (size_t)d->nchunks * 4, &d->cslice);
    if (!st) st = upload(ctx, ck, (size_t)d->nchunks * 4, &d->ck0);
    if (!st)
        st = HISPI_BE(ctx, buf_alloc, (size_t)d->nchunks * (size_t)h->C * hisp_type_size(h->type),
                      &d->part);
    free(ws);
    free(wc);
    free(cs);
    free(ck);
    return st;
}

/* Does h run sell_spmv_lanes (GPUs; the test hook may force either way)? */
static bool use_lanes(const hispi_sell *h)
{
    if (hispi_sell_kernel_mode) return hispi_sell_kernel_mode == 3;
    if (h->nrows >= LANES_ROWS) return false;
    int64_t widest = 0;
    for (int64_t s = 0; s < h->nslices; s++) {
        int64_t w = (h->sptr[s + 1] - h->sptr[s]) / h->C;
        if (w > widest) widest = w;
    }
    return widest <= LANES_MAX_W &&
           (widest > WIDE_W || h->padded >= (int64_t)h->nslices * h->C * (LANES / 2));
}

static hisp_status dsell_upload(hisp_context ctx, const hispi_sell *h, int64_t wide_w, dsell *d)
{
    size_t es = hisp_type_size(h->type);
    d->lanes = wide_w < INT64_MAX && use_lanes(h);
    if (d->lanes) wide_w = INT64_MAX; /* no chunks */
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
        hisp_status s = HISPI_BE(ctx, kern_caps, &caps);
        if (!s) {
            d->slices = hispi_sell_kernel_mode ? hispi_sell_kernel_mode == 2 : caps.is_cpu != 0;
            int g = d->slices ? 1 : h->C > 4 * caps.simd ? h->C : 4 * caps.simd;
            d->group = g > caps.max_group ? caps.max_group : g < 1 ? 1 : g;
            char opts[160];
            bool dbl = h->type == HISP_F64;
            int lanes = h->C * LANES <= caps.max_group ? LANES : 1;
            snprintf(opts, sizeof opts,
                     "-DVALUE_T=%s -DIS_DOUBLE=%d -DATOM64=0 -DSLICE=%d -DLANES=%d -DCHUNK=%d",
                     dbl ? "double" : "float", dbl, (int)h->C, lanes, CHUNK);
            /* on CPUs a work-item streams whole slices, wide or not */
            d->wide_w = d->slices || lanes == 1 ? INT64_MAX : WIDE_W;
            s = HISPI_BE(ctx, kern_get, HISPI_PROG_SELL, opts,
                         d->slices ? "sell_spmv_slices" : "sell_spmv", &d->k);
            if (!s && d->wide_w < INT64_MAX)
                s = HISPI_BE(ctx, kern_get, HISPI_PROG_SELL, opts, "sell_spmv_wide", &d->kw);
            if (!s && d->wide_w < INT64_MAX)
                s = HISPI_BE(ctx, kern_get, HISPI_PROG_SELL, opts, "sell_spmv_wide_sum", &d->ks);
            if (!s && d->wide_w < INT64_MAX)
                s = HISPI_BE(ctx, kern_get, HISPI_PROG_SELL, opts, "sell_spmv_lanes", &d->kl);
        }
        if (s) {
            if (d->k) HISPI_BE_VOID(ctx, kern_free, d->k);
            if (d->kw) HISPI_BE_VOID(ctx, kern_free, d->kw);
            if (d->ks) HISPI_BE_VOID(ctx, kern_free, d->ks);
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
        if (m->lanes) {
            HISPI_TRY(HISPI_BE(ctx, kern_launch, d->kl, a, 10, (size_t)m->nslices,
                               (size_t)(h->C * LANES)));
            hispi_vector_device_written(y);
            return HISP_SUCCESS;
        }
        int64_t items = d->slices ? m->nslices : m->nrows;
        size_t groups = (size_t)((items + d->group - 1) / d->group);
        int nargs = d->slices ? 10 : 11;
        HISPI_TRY(HISPI_BE(ctx, kern_launch, d->k, a, nargs, groups, (size_t)d->group));
        if (m->nwide) {
            hispi_karg w[7] = {{HISPI_KARG_BUF, m->cslice, 0, 0},
                               {HISPI_KARG_BUF, m->ck0, 0, 0},
                               a[1],
                               a[3],
                               a[4],
                               a[5],
                               {HISPI_KARG_BUF, m->part, 0, 0}};
            HISPI_TRY(HISPI_BE(ctx, kern_launch, d->kw, w, 7, (size_t)m->nchunks,
                               (size_t)(h->C * LANES)));
            hispi_karg u[10] = {{HISPI_KARG_I32, NULL, m->nwide, 0},
                                a[0],
                                {HISPI_KARG_BUF, m->wslice, 0, 0},
                                {HISPI_KARG_BUF, m->wchunk, 0, 0},
                                {HISPI_KARG_BUF, m->part, 0, 0},
                                a[2],
                                a[6],
                                a[7],
                                a[8],
                                a[9]};
            size_t items = (size_t)(m->nwide * h->C), g = (size_t)d->group;
            HISPI_TRY(HISPI_BE(ctx, kern_launch, d->ks, u, 10, (items + g - 1) / g, g));
        }
    }
    hispi_vector_device_written(y);
    return HISP_SUCCESS;
}
