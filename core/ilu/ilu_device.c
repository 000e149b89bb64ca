/* ILU(0) / IC(0) of real and complex matrices factorised on a GPU by Chow
 * and Patel's fixed-point sweeps (kernels/ilu.cl: every entry of the
 * pattern at once from the previous sweep's, deterministic), over A's own
 * device CSR where its pattern is clean (rows sorted, the diagonal present,
 * IC: every entry above the diagonal mirrored below), the host's
 * factorisation (ilu_factor.c) otherwise. Only counters cross to the host:
 * the rows the host must clean, the pivots replaced, the entries not
 * finite. */
#include "../amg/hispi_amg.h"
#include "backend/backend.h"
#include "hispi_ilu.h"

#include <stdio.h>
#include <stdlib.h>

int hispi_ilu_gpu_paths;
long hispi_ilu_dev_fail_after;

hisp_status hispi_ilu_buf(hisp_context ctx, size_t bytes, void **b)
{
    if (hispi_ilu_dev_fail_after > 0 && --hispi_ilu_dev_fail_after == 0)
        return hispi_fail(ctx, HISP_ERR_OUT_OF_DEVICE_MEMORY,
                          "ILU: device buffer of %zu bytes (test hook)", bytes);
    return HISPI_BE(ctx, buf_alloc, bytes ? bytes : 1, b);
}

enum { GS = HISPI_ILU_GS };

void hispi_ilu_kopts(char *opts, size_t size, hisp_type t)
{
    bool dbl = hispi_type_scalar_size(t) == 8, cx = hisp_type_components(t) > 1;
    snprintf(opts, size, "-DVALUE_T=%s -DIS_DOUBLE=%d -DIS_COMPLEX=%d -DATOM64=0 -DGS=%d",
             dbl ? "double" : "float", (int)dbl, (int)cx, GS);
}

hisp_status hispi_ilu_kernel(hisp_context ctx, hisp_type t, const char *name, void **k)
{
    char opts[128];
    hispi_ilu_kopts(opts, sizeof opts, t);
    return HISPI_BE(ctx, kern_get, HISPI_PROG_ILU, opts, name, k);
}
enum { K_PREP, K_START, K_PAR, K_MIRROR, NK };
static const char *const knames[NK] = {"ilu_prep", "ilu_start", "ilu_par", "ilu_mirror"};
/* the outputs (hispi_ilu_dev_factor's b[]), then the scratch */
enum { O_PTR, O_COL, O_DPOS, O_VAL, S_R, S_W, S_CNT, NB };

typedef struct {
    hisp_context ctx;
    void *k[NK], *b[NB];
    int64_t n;
    void *ptr, *col, *a; /* A's device arrays */
    hisp_type t;
} dev;

hisp_status hispi_ilu_launch(hisp_context ctx, void *k, const hispi_karg *a, int na, int64_t n)
{
    return n > 0 ? HISPI_BE(ctx, kern_launch, k, a, na, (size_t)((n + GS - 1) / GS), GS)
                 : HISP_SUCCESS;
}

static hisp_status launch(dev *d, int k, const hispi_karg *a, int na)
{
    return hispi_ilu_launch(d->ctx, d->k[k], a, na, d->n);
}

static hispi_karg kreal(const dev *d, double v)
{
    return (hispi_karg){hispi_type_scalar_size(d->t) == 8 ? HISPI_KARG_F64 : HISPI_KARG_F32, NULL,
                        0, v};
}

/* The counters: rows to clean, pivots replaced, entries not finite. */
static hisp_status counts(dev *d, uint32_t cnt[3])
{
    return HISPI_BE(d->ctx, buf_read, d->b[S_CNT], 0, cnt, 3 * sizeof *cnt);
}

/* `sweeps` sweeps from the start with shift sh into O_VAL; cnt: the last
 * sweep's counters. */
static hisp_status run(dev *d, bool ic, int sweeps, double sh, uint32_t cnt[3])
{
    HISPI_TRY(HISPI_BE(d->ctx, buf_zero, d->b[S_CNT], 0, 3 * sizeof *cnt));
    /* the sweeps alternate between S_W and O_VAL, the last into O_VAL;
     * ilu_start takes the first 9 arguments of ilu_par's (the 9th its
     * output) */
    void *out = sweeps % 2 ? d->b[S_W] : d->b[O_VAL];
    hispi_karg a[] = {hispi_ki64(d->n),
                      hispi_kbuf(d->ptr),
                      hispi_kbuf(d->col),
                      hispi_kbuf(d->b[O_DPOS]),
                      hispi_kbuf(d->a),
                      hispi_kbuf(d->b[S_R]),
                      {HISPI_KARG_I32, NULL, ic, 0},
                      kreal(d, sh),
                      hispi_kbuf(out),
                      hispi_kbuf(NULL),
                      {HISPI_KARG_I32, NULL, 0, 0},
                      hispi_kbuf(d->b[S_CNT])};
    HISPI_TRY(launch(d, K_START, a, 9));
    for (int q = 1; q <= sweeps; q++) {
        void *in = out;
        out = in == d->b[S_W] ? d->b[O_VAL] : d->b[S_W];
        a[8] = hispi_kbuf(out), a[9] = hispi_kbuf(in);
        a[10] = (hispi_karg){HISPI_KARG_I32, NULL, q == sweeps, 0};
        HISPI_TRY(launch(d, K_PAR, a, 12));
    }
    return counts(d, cnt);
}

static hisp_status buf(dev *d, int which, size_t bytes)
{
    return hispi_ilu_buf(d->ctx, bytes, &d->b[which]);
}

/* The sweeps over A's device arrays, with IC's shifts. */
static hisp_status factor(dev *d, hisp_matrix D, bool ic, int sweeps, hispi_ilu_info *r, bool *done)
{
    hisp_context ctx = d->ctx;
    int64_t n = d->n, nnz = D->host.nnz;
    size_t es = hisp_type_size(d->t);
    for (int i = 0; i < NK; i++)
        HISPI_TRY(hispi_ilu_kernel(ctx, d->t, knames[i], &d->k[i]));
    HISPI_TRY(buf(d, O_DPOS, (size_t)n * 8));
    HISPI_TRY(buf(d, S_R, (size_t)n * hispi_type_scalar_size(d->t)));
    HISPI_TRY(buf(d, S_CNT, 3 * sizeof(uint32_t)));
    HISPI_TRY(HISPI_BE(ctx, buf_zero, d->b[S_CNT], 0, 3 * sizeof(uint32_t)));
    hispi_karg pa[] = {hispi_ki64(n),
                       hispi_kbuf(d->ptr),
                       hispi_kbuf(d->col),
                       hispi_kbuf(d->a),
                       {HISPI_KARG_I32, NULL, ic, 0},
                       hispi_kbuf(d->b[O_DPOS]),
                       hispi_kbuf(d->b[S_R]),
                       hispi_kbuf(d->b[S_CNT])};
    HISPI_TRY(launch(d, K_PREP, pa, 8));
    uint32_t cnt[3];
    HISPI_TRY(counts(d, cnt));
    if (cnt[0]) return HISP_SUCCESS; /* the host cleans the pattern */
    HISPI_TRY(buf(d, O_VAL, (size_t)nnz * es));
    HISPI_TRY(buf(d, S_W, (size_t)nnz * es));
    for (double sh = 0;; sh = sh ? sh * 10 : 1e-3) {
        if (sh > 1.5e3)
            return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                              "IC(0): A is not positive definite: a pivot stayed <= 0 with its "
                              "diagonal shifted by 1000 times its rows' largest entries "
                              "(use --precond ilu0)");
        HISPI_TRY(run(d, ic, sweeps, sh, cnt));
        if (cnt[2]) return HISP_SUCCESS; /* not finite: the host's exact factorisation */
        r->diag_shift = sh;
        r->shifted = ic ? 0 : cnt[1];
        if (!ic || !cnt[1]) break;
    }
    if (ic) {
        hispi_karg m[] = {hispi_ki64(n), hispi_kbuf(d->ptr), hispi_kbuf(d->col),
                          hispi_kbuf(d->b[O_DPOS]), hispi_kbuf(d->b[O_VAL])};
        HISPI_TRY(launch(d, K_MIRROR, m, 5));
    }
    /* the pattern, the factors' own (A may change or go) */
    HISPI_TRY(buf(d, O_PTR, ((size_t)n + 1) * 8));
    HISPI_TRY(HISPI_BE(ctx, buf_copy, d->b[O_PTR], d->ptr, ((size_t)n + 1) * 8));
    HISPI_TRY(buf(d, O_COL, (size_t)nnz * 4));
    if (nnz) HISPI_TRY(HISPI_BE(ctx, buf_copy, d->b[O_COL], d->col, (size_t)nnz * 4));
    r->factor_sweeps = sweeps, r->filled = 0;
    *done = true;
    return HISP_SUCCESS;
}

hisp_status hispi_ilu_dev_factor(hisp_matrix A, bool ic, int sweeps, void *b[4], hispi_ilu_info *r,
                                 bool *done)
{
    hisp_context ctx = A->ctx;
    *done = false;
    hisp_matrix D = NULL;
    void *own = NULL;
    HISPI_TRY(hispi_amg_dev_operand(A, &D, &own));
    dev d = {.ctx = ctx,
             .n = D->host.nrows,
             .ptr = D->ext.rowptr,
             .col = D->ext.colind,
             .a = D->ext.val,
             .t = D->host.type};
    hisp_status s = factor(&d, D, ic, sweeps, r, done);
    for (int i = 0; i < NB; i++)
        if (d.b[i] && (i > O_VAL || !*done || s)) HISPI_BE_VOID(ctx, buf_free, d.b[i]);
    for (int i = 0; i < 4; i++)
        b[i] = *done && !s ? d.b[i] : NULL;
    if (s) *done = false;
    for (int i = 0; i < NK; i++)
        if (d.k[i]) HISPI_BE_VOID(ctx, kern_free, d.k[i]);
    if (D != A) hisp_matrix_destroy(&D);
    if (own) HISPI_BE_VOID(ctx, buf_free, own);
    return s;
}
