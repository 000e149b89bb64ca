/* Compound SpMV variants on the context's backend: layouts built on the
 * host and uploaded once per (matrix, outer, inner), kernels generated from
 * kernels/compound_spmv.cl with defines and cached per matrix, vector
 * layout conversions, schedules. Backends without run-time kernels (the
 * reference) run the host emulation of the layout. */
#include "backend/backend.h"
#include "hispi.h"
#include "hispi_compound.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ckern {
    struct ckern *next;
    char opts[480];
    char name[40];
    void *k;
} ckern;

typedef struct {
    bool have[HISP_OUTER_COUNT][2];
    hispi_clayout lay[HISP_OUTER_COUNT][2];
    void *dptr[HISP_OUTER_COUNT][2], *dlen[HISP_OUTER_COUNT][2];
    void *dcol[HISP_OUTER_COUNT][2], *dval[HISP_OUTER_COUNT][2];
    ckern *kerns;
    void *counter, *dummy, *xs, *ys;
    bool caps_ok;
    hispi_kcaps caps;
    hisp_matrix opm[2]; /* op(A) for op = T, H (hispi_compound_op_matrix) */
} hispi_cdev;

static void dfree(hisp_context ctx, void **b)
{
    if (*b) HISPI_BE_VOID(ctx, buf_free, *b);
    *b = NULL;
}

void hispi_compound_drop(hisp_matrix A)
{
    hispi_cdev *d = A->cdev;
    if (!d) return;
    hisp_context ctx = A->ctx;
    for (int o = 0; o < HISP_OUTER_COUNT; o++)
        for (int in = 0; in < 2; in++) {
            hispi_clayout_free(&d->lay[o][in]);
            dfree(ctx, &d->dptr[o][in]);
            dfree(ctx, &d->dlen[o][in]);
            dfree(ctx, &d->dcol[o][in]);
            dfree(ctx, &d->dval[o][in]);
        }
    while (d->kerns) {
        ckern *k = d->kerns;
        d->kerns = k->next;
        if (k->k && HISPI_BE_HAS(ctx, kern_free)) HISPI_BE_VOID(ctx, kern_free, k->k);
        free(k);
    }
    dfree(ctx, &d->counter);
    dfree(ctx, &d->dummy);
    dfree(ctx, &d->xs);
    dfree(ctx, &d->ys);
    A->cdev = NULL; /* before the destroys below: they may come back here */
    for (int k = 0; k < 2; k++)
        hisp_matrix_destroy(&d->opm[k]);
    free(d);
}

hisp_status hispi_compound_op_matrix(hisp_matrix A, hisp_op op, hisp_matrix *M)
{
    hisp_context ctx = A->ctx;
    if (op != HISP_OP_T && op != HISP_OP_H)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "op(A) is built for op = T or H");
    if (!A->cdev) {
        HISPI_TRY(hispi_calloc(ctx, 1, sizeof(hispi_cdev), &A->cdev));
        A->cdev_drop = hispi_compound_drop; /* the matrix layer's hook */
    }
    hispi_cdev *d = A->cdev;
    int k = op == HISP_OP_T ? 0 : 1;
    if (!d->opm[k]) {
        HISPI_TRY(hispi_matrix_need_host(A));
        hispi_sparse tmp, t;
        const hispi_sparse *c = NULL;
        HISPI_TRY(hispi_matrix_csr(A, &tmp, &c));
        hisp_status s = hispi_compound_op_csr(ctx, c, op, &t);
        hispi_sparse_free(&tmp);
        HISPI_TRY(s);
        HISPI_TRY(hispi_matrix_wrap(ctx, &t, &d->opm[k])); /* frees t on failure */
    }
    *M = d->opm[k];
    return HISP_SUCCESS;
}

static bool has_kernels(hisp_context ctx)
{
    return HISPI_BE_HAS(ctx, kern_caps) && HISPI_BE_HAS(ctx, kern_get) &&
           HISPI_BE_HAS(ctx, kern_free) && HISPI_BE_HAS(ctx, kern_launch) &&
           HISPI_BE_HAS(ctx, buf_zero);
}

static hisp_status upload(hisp_context ctx, const void *src, size_t bytes, void **buf)
{
    HISPI_TRY(HISPI_BE(ctx, buf_alloc, bytes, buf));
    return HISPI_BE(ctx, buf_write, *buf, 0, src, bytes);
}

/* The layout of A for (outer, inner): built, and uploaded on devices. */
static hisp_status need_layout(hisp_matrix A, hispi_cdev *d, const hisp_layout *l)
{
    hisp_context ctx = A->ctx;
    int o = l->outer, in = l->inner;
    if (d->have[o][in]) return HISP_SUCCESS;
    hisp_layout key = {l->outer, l->inner, HISP_AOS};
    hispi_clayout *L = &d->lay[o][in];
    hispi_sparse tmp; /* a COO or CSC matrix stays as it is */
    const hispi_sparse *c = NULL;
    HISPI_TRY(hispi_matrix_csr(A, &tmp, &c));
    hisp_status bs = hispi_clayout_build(ctx, c, &key, L);
    hispi_sparse_free(&tmp);
    HISPI_TRY(bs);
    if (has_kernels(ctx)) {
        size_t pw = L->wide ? 8 : 4;
        void *p32 = NULL;
        hisp_status s = HISP_SUCCESS;
        if (L->nptr) {
            if (!L->wide) { /* narrow the pointers */
                s = hispi_alloc(ctx, (size_t)L->nptr, 4, &p32);
                for (int64_t i = 0; !s && i < L->nptr; i++)
                    ((int32_t *)p32)[i] = (int32_t)L->ptr[i];
            }
            if (!s)
                s = upload(ctx, L->wide ? (void *)L->ptr : p32, (size_t)L->nptr * pw,
                           &d->dptr[o][in]);
            free(p32);
        }
        if (!s && L->len) s = upload(ctx, L->len, (size_t)L->nrows * 4, &d->dlen[o][in]);
        if (!s) s = upload(ctx, L->col, (size_t)L->stored * 4, &d->dcol[o][in]);
        if (!s)
            s = upload(ctx, L->val, (size_t)L->stored * (size_t)L->ct.ec * L->ct.ss,
                       &d->dval[o][in]);
        if (s) {
            dfree(ctx, &d->dptr[o][in]);
            dfree(ctx, &d->dlen[o][in]);
            dfree(ctx, &d->dcol[o][in]);
            dfree(ctx, &d->dval[o][in]);
            hispi_clayout_free(L);
            return s;
        }
        /* the device holds it now: keep only the sizes */
        free(L->ptr);
        free(L->len);
        free(L->col);
        free(L->val);
        L->ptr = NULL;
        L->len = NULL;
        L->col = NULL;
        L->val = NULL;
    }
    d->have[o][in] = true;
    return HISP_SUCCESS;
}

static hisp_status get_kernel(hisp_context ctx, hispi_cdev *d, const char *opts, const char *name,
                              void **k)
{
    for (ckern *q = d->kerns; q; q = q->next)
        if (strcmp(q->opts, opts) == 0 && strcmp(q->name, name) == 0) {
            *k = q->k;
            return HISP_SUCCESS;
        }
    ckern *q = NULL;
    HISPI_TRY(hispi_calloc(ctx, 1, sizeof *q, (void **)&q));
    snprintf(q->opts, sizeof q->opts, "%s", opts);
    snprintf(q->name, sizeof q->name, "%s", name);
    hisp_status s = HISPI_BE(ctx, kern_get, HISPI_PROG_COMPOUND, opts, name, &q->k);
    if (s) {
        free(q);
        return s;
    }
    q->next = d->kerns;
    d->kerns = q;
    *k = q->k;
    return HISP_SUCCESS;
}

/* Defaults and limits of a schedule on this device. */
static hisp_status resolve_sched(hisp_context ctx, const hispi_kcaps *c, const hisp_schedule *in,
                                 hisp_schedule *out)
{
    *out = *in;
    bool gpu = c->simd >= 32;
    if (!out->nt) out->nt = c->simd * 4 <= c->max_group ? c->simd * 4 : c->max_group;
    if (!out->nb) out->nb = gpu ? 4 : 2;
    if (out->nt < 1 || out->nt > c->max_group || out->nb < 1 || out->nb > 1024)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "schedule %dx%d outside the device's limits (1..%d threads per "
                          "work-group, 1..1024 work-groups per compute unit)",
                          out->nt, out->nb, c->max_group);
    return HISP_SUCCESS;
}

static void kargs_spmv(hispi_karg *a, const hispi_clayout *L, hispi_cdev *d, int o, int in,
                       const void *x, const void *y, double alpha, double beta, int nchunks)
{
    bool dbl = L->ct.ss == 8;
    hispi_karg v[15] = {
        {HISPI_KARG_I32, NULL, L->nrows, 0},
        {HISPI_KARG_BUF, d->dptr[o][in] ? d->dptr[o][in] : d->dummy, 0, 0},
        {HISPI_KARG_BUF, d->dlen[o][in] ? d->dlen[o][in] : d->dummy, 0, 0},
        {HISPI_KARG_BUF, d->dcol[o][in], 0, 0},
        {HISPI_KARG_BUF, d->dval[o][in], 0, 0},
        {HISPI_KARG_I64, NULL, L->stored, 0},
        {HISPI_KARG_I64, NULL, L->ld, 0},
        {HISPI_KARG_BUF, x, 0, 0},
        {HISPI_KARG_I32, NULL, L->ncols, 0},
        {HISPI_KARG_BUF, y, 0, 0},
        {dbl ? HISPI_KARG_F64 : HISPI_KARG_F32, NULL, 0, alpha},
        {dbl ? HISPI_KARG_F64 : HISPI_KARG_F32, NULL, 0, beta},
        {HISPI_KARG_I32, NULL, beta == 0, 0},
        {HISPI_KARG_BUF, d->counter, 0, 0},
        {HISPI_KARG_I32, NULL, nchunks, 0},
    };
    memcpy(a, v, sizeof v);
}

/* Convert between AoS and SoA vectors on the device (n entries). */
static hisp_status vec_convert(hisp_context ctx, hispi_cdev *d, const char *opts, bool to_soa,
                               int64_t n, int vc, const void *src, void *dst)
{
    if (!n) return HISP_SUCCESS;
    void *k = NULL;
    HISPI_TRY(get_kernel(ctx, d, opts, to_soa ? "compound_vec_to_soa" : "compound_vec_to_aos", &k));
    hispi_karg a[3] = {
        {HISPI_KARG_I32, NULL, n, 0}, {HISPI_KARG_BUF, src, 0, 0}, {HISPI_KARG_BUF, dst, 0, 0}};
    size_t ls = 64, groups = ((size_t)n * (size_t)vc + ls - 1) / ls;
    return HISPI_BE(ctx, kern_launch, k, a, 3, groups, ls);
}

static hisp_status scratch(hisp_context ctx, void **buf, size_t bytes)
{
    if (*buf) return HISP_SUCCESS; /* sized for this matrix at first use */
    return HISPI_BE(ctx, buf_alloc, bytes, buf);
}

/* Host emulation (backends without run-time kernels). */
static hisp_status run_host(hisp_context ctx, const hispi_clayout *L, int vs, double alpha,
                            hisp_vector x, double beta, hisp_vector y, int warmup, int repeat,
                            double *ms)
{
    void *xh = NULL, *yh = NULL, *xt = NULL, *yt = NULL;
    HISPI_TRY(hispi_vector_host(x, &xh));
    HISPI_TRY(hispi_vector_host(y, &yh));
    int vc = L->ct.vc;
    size_t ss = L->ct.ss;
    int64_t nx = L->ncols, ny = L->nrows;
    hisp_status s = HISP_SUCCESS;
    if (vs) {
        s = hispi_alloc(ctx, (size_t)(nx * vc), ss, &xt);
        if (!s) s = hispi_alloc(ctx, (size_t)(ny * vc), ss, &yt);
        for (int64_t j = 0; !s && j < nx; j++)
            for (int q = 0; q < vc; q++)
                memcpy((char *)xt + (size_t)(q * nx + j) * ss,
                       (char *)xh + (size_t)(j * vc + q) * ss, ss);
        for (int64_t i = 0; !s && i < ny; i++)
            for (int q = 0; q < vc; q++)
                memcpy((char *)yt + (size_t)(q * ny + i) * ss,
                       (char *)yh + (size_t)(i * vc + q) * ss, ss);
    }
    if (!s) {
        void *xx = vs ? xt : xh, *yy = vs ? yt : yh;
        /* every run starts from the same y so that beta != 0 gives the
         * result of one SpMV */
        void *y0 = NULL;
        int runs = warmup + repeat;
        if (runs > 1 && beta != 0) {
            s = hispi_alloc(ctx, (size_t)(ny * vc), ss, &y0);
            if (!s) memcpy(y0, yy, (size_t)(ny * vc) * ss);
        }
        for (int r = 0; !s && r < (runs > 0 ? runs : 1); r++) {
            if (y0 && r) memcpy(yy, y0, (size_t)(ny * vc) * ss);
            double t0 = hispi_now_ms();
            hispi_clayout_spmv_host(L, vs, alpha, xx, beta, yy);
            if (ms && r >= warmup) ms[r - warmup] = hispi_now_ms() - t0;
        }
        free(y0);
    }
    if (!s && vs)
        for (int64_t i = 0; i < ny; i++)
            for (int q = 0; q < vc; q++)
                memcpy((char *)yh + (size_t)(i * vc + q) * ss,
                       (char *)yt + (size_t)(q * ny + i) * ss, ss);
    free(xt);
    free(yt);
    if (!s) s = hispi_vector_host_written(y); /* the host copy is the new one */
    return s;
}

/* The layout of variant v of A, built (and uploaded) on first use. */
static hisp_status variant_layout(hisp_context ctx, hisp_matrix A, const hisp_variant *v,
                                  const hispi_clayout **L)
{
    if (!A->cdev) {
        HISPI_TRY(hispi_calloc(ctx, 1, sizeof(hispi_cdev), &A->cdev));
        A->cdev_drop = hispi_compound_drop; /* the matrix layer's hook */
    }
    hispi_cdev *d = A->cdev;
    HISPI_TRY(need_layout(A, d, &v->layout));
    *L = &d->lay[v->layout.outer][v->layout.inner];
    return HISP_SUCCESS;
}

/* The build options and kernel name of variant v of A (its layout on the
 * device, its schedule resolved into *scp), and vopts, those of its vector
 * conversions. */
static hisp_status variant_opts(hisp_context ctx, hisp_matrix A, const hisp_variant *v,
                                char opts[480], char vopts[480], char name[40], hisp_schedule *scp)
{
    const hispi_clayout *L = NULL;
    HISPI_TRY(variant_layout(ctx, A, v, &L));
    hispi_cdev *d = A->cdev;
    const int o = v->layout.outer, in = v->layout.inner, vs = v->layout.vec == HISP_SOA;
    if (!d->caps_ok) {
        HISPI_TRY(HISPI_BE(ctx, kern_caps, &d->caps));
        d->caps_ok = true;
    }
    hisp_schedule sc;
    HISPI_TRY(resolve_sched(ctx, &d->caps, &v->sched, &sc));
    *scp = sc;
    hispi_ctype c = L->ct;
    int n = snprintf(opts, 480,
                     "-DVALUE_T=%s -DIS_DOUBLE=%d -DATOM64=0 -DKIND=%d -DEC=%d -DVC=%d -DOUTER=%d "
                     "-DSLICE=%d -DINNER_SOA=%d -DPTR64=%d",
                     c.ss == 8 ? "double" : "float", c.ss == 8, c.kind, c.ec, c.vc,
                     o == HISP_OUTER_CSR   ? 0
                     : o == HISP_OUTER_ELL ? 1
                                           : 2,
                     o == HISP_OUTER_SELL16 ? 16 : 32, in, L->wide);
    snprintf(vopts, 480, "%s", opts); /* the conversions: any schedule */
    if (d->caps.launch_bounds) {
        snprintf(opts + n, 480 - (size_t)n, " -DVEC_SOA=%d -DDYN=%d -DNT=%d -DNB=%d", vs,
                 sc.dynamic, sc.nt, sc.nb);
        snprintf(vopts + n, 480 - (size_t)n, " -DVEC_SOA=0 -DDYN=0");
        snprintf(name, 40, "compound_spmv");
    } else {
        snprintf(name, 40, "compound_spmv_v%d_d%d", vs, sc.dynamic);
    }
    return HISP_SUCCESS;
}

hisp_status hispi_compound_prebuild(hisp_context ctx, hisp_matrix A, const hisp_variant *v, int n)
{
    if (!hispi_sparse_family(A->host.format) || !has_kernels(ctx) ||
        !HISPI_BE_HAS(ctx, kern_prebuild) || n <= 0)
        return HISP_SUCCESS;
    char(*opts)[480] = NULL;
    const char **ptr = NULL;
    hisp_status s = hispi_alloc(ctx, (size_t)n, sizeof *opts, (void **)&opts);
    if (!s) s = hispi_alloc(ctx, (size_t)n, sizeof *ptr, (void **)&ptr);
    int m = 0;
    for (int i = 0; i < n && !s; i++) {
        char vopts[480], name[40];
        hisp_schedule sc;
        s = variant_opts(ctx, A, &v[i], opts[m], vopts, name, &sc);
        if (s == HISP_ERR_INVALID_ARGUMENT) { /* a schedule the device refuses: kern_get's */
            hispi_clear_error(ctx);
            s = HISP_SUCCESS;
            continue;
        }
        if (!s) ptr[m] = opts[m], m++;
    }
    if (!s) s = HISPI_BE(ctx, kern_prebuild, HISPI_PROG_COMPOUND, ptr, m);
    free(opts);
    free(ptr);
    return s;
}

hisp_status hispi_compound_spmv(hisp_context ctx, const hisp_variant *v, double alpha,
                                hisp_matrix A, hisp_vector x, double beta, hisp_vector y,
                                int warmup, int repeat, double *ms)
{
    if (!hispi_sparse_family(A->host.format))
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                          "compound SpMV variants need COO/CSR/CSC storage, not %s",
                          hisp_format_name(A->host.format));
    const hispi_clayout *L = NULL;
    HISPI_TRY(variant_layout(ctx, A, v, &L));
    hispi_cdev *d = A->cdev;
    const int o = v->layout.outer, in = v->layout.inner, vs = v->layout.vec == HISP_SOA;
    if (!has_kernels(ctx)) return run_host(ctx, L, vs, alpha, x, beta, y, warmup, repeat, ms);

    char opts[480], vopts[480], name[40];
    hisp_schedule sc;
    HISPI_TRY(variant_opts(ctx, A, v, opts, vopts, name, &sc));
    hispi_ctype c = L->ct;
    void *k = NULL;
    HISPI_TRY(get_kernel(ctx, d, opts, name, &k));
    if (!d->dummy) HISPI_TRY(HISPI_BE(ctx, buf_alloc, 16, &d->dummy));
    if (!d->counter) HISPI_TRY(HISPI_BE(ctx, buf_alloc, 16, &d->counter));

    void *xd = NULL, *yd = NULL;
    HISPI_TRY(hispi_vector_device(x, true, &xd));
    HISPI_TRY(hispi_vector_device(y, beta != 0, &yd));
    void *xk = xd, *yk = yd;
    size_t ss = c.ss;
    if (vs) {
        HISPI_TRY(scratch(ctx, &d->xs, (size_t)(L->ncols * c.vc) * ss));
        HISPI_TRY(scratch(ctx, &d->ys, (size_t)(L->nrows * c.vc) * ss));
        HISPI_TRY(vec_convert(ctx, d, vopts, true, L->ncols, c.vc, xd, d->xs));
        if (beta != 0) HISPI_TRY(vec_convert(ctx, d, vopts, true, L->nrows, c.vc, yd, d->ys));
        xk = d->xs;
        yk = d->ys;
    }
    /* beta != 0 with several runs: each run must see the caller's y */
    void *y0 = NULL;
    size_t ybytes = (size_t)(L->nrows * c.vc) * ss;
    int runs = warmup + repeat;
    if (runs < 1) runs = 1;
    hisp_status s = HISP_SUCCESS;
    if (runs > 1 && beta != 0) {
        s = HISPI_BE(ctx, buf_alloc, ybytes, &y0);
        if (!s) s = HISPI_BE(ctx, buf_copy, y0, yk, ybytes);
    }
    int64_t nchunks = (L->nrows + sc.nt - 1) / sc.nt;
    size_t groups = (size_t)sc.nb * (size_t)(d->caps.compute_units > 0 ? d->caps.compute_units : 1);
    if (groups > (size_t)nchunks) groups = (size_t)nchunks;
    hispi_karg args[15];
    kargs_spmv(args, L, d, o, in, xk, yk, alpha, beta, (int)nchunks);
    void *m0 = NULL, *m1 = NULL;
    if (!s && ms) s = HISPI_BE(ctx, mark_create, &m0);
    if (!s && ms) s = HISPI_BE(ctx, mark_create, &m1);
    for (int r = 0; r < runs && !s; r++) {
        if (y0 && r) s = HISPI_BE(ctx, buf_copy, yk, y0, ybytes);
        bool timed = ms && r >= warmup;
        if (!s && timed) s = HISPI_BE(ctx, mark_record, m0);
        if (!s && sc.dynamic) s = HISPI_BE(ctx, buf_zero, d->counter, 0, 4);
        if (!s) s = HISPI_BE(ctx, kern_launch, k, args, 15, groups, (size_t)sc.nt);
        if (!s && timed) s = HISPI_BE(ctx, mark_record, m1);
        if (!s && timed) s = HISPI_BE(ctx, mark_elapsed, m0, m1, &ms[r - warmup]);
    }
    if (!s && vs) s = vec_convert(ctx, d, vopts, false, L->nrows, c.vc, d->ys, yd);
    if (m0) HISPI_BE_VOID(ctx, mark_destroy, m0);
    if (m1) HISPI_BE_VOID(ctx, mark_destroy, m1);
    if (y0) HISPI_BE_VOID(ctx, buf_free, y0);
    if (!s) hispi_vector_device_written(y);
    return s;
}

/* ---- public entry points --------------------------------------------------- */

static hisp_status check(hisp_context ctx, const hisp_variant *v, const void *alpha, hisp_matrix A,
                         hisp_vector x, const void *beta, hisp_vector y, double *a, double *b)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!hispi_mat_ok(A) || !hispi_vec_ok(x) || !hispi_vec_ok(y))
        return hispi_fail(ctx, HISP_ERR_INVALID_HANDLE, "invalid matrix or vector handle");
    if (A->ctx != ctx || x->ctx != ctx || y->ctx != ctx)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "matrix and vectors must belong to this context");
    HISPI_TRY(hispi_matrix_need_host(A));
    if (!v || !alpha || !beta)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "NULL variant, alpha or beta");
    if ((int)v->layout.outer < 0 || v->layout.outer >= HISP_OUTER_COUNT ||
        (v->layout.inner != HISP_AOS && v->layout.inner != HISP_SOA) ||
        (v->layout.vec != HISP_AOS && v->layout.vec != HISP_SOA) ||
        (v->sched.dynamic != 0 && v->sched.dynamic != 1) || v->sched.nt < 0 || v->sched.nb < 0)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "invalid variant");
    hisp_type t = A->host.type, vt;
    int per = 1;
    HISPI_TRY(hisp_compound_vector_type(t, &vt, &per));
    if (x->type != vt || y->type != vt)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "a %s matrix takes %s vectors (x is %s, y is %s)", hisp_type_name(t),
                          hisp_type_name(vt), hisp_type_name(x->type), hisp_type_name(y->type));
    if (x->n != A->host.ncols * per || y->n != A->host.nrows * per)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "dimension mismatch: A is %lld x %lld (%d scalars per vector entry), x "
                          "has %lld, y has %lld",
                          (long long)A->host.nrows, (long long)A->host.ncols, per, (long long)x->n,
                          (long long)y->n);
    if (x == y) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "x and y must differ");
    *a = hispi_load_real(t, alpha, 0);
    *b = hispi_load_real(t, beta, 0);
    return HISP_SUCCESS;
}

static hisp_status variant_spmv(hisp_context ctx, const hisp_variant *v, const void *alpha,
                                hisp_matrix A, hisp_vector x, const void *beta, hisp_vector y,
                                int warmup, int repeat, double *ms)
{
    double a = 0, b = 0;
    HISPI_TRY(check(ctx, v, alpha, A, x, beta, y, &a, &b));
    if (ms && (warmup < 0 || repeat < 1))
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "need warmup >= 0, repeat >= 1, ms");
    return hispi_compound_spmv(ctx, v, a, A, x, b, y, warmup, repeat, ms);
}

hisp_status hisp_spmv_variant(hisp_context ctx, const hisp_variant *v, const void *alpha,
                              hisp_matrix A, hisp_vector x, const void *beta, hisp_vector y)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    HISPI_CLAIMED(ctx, variant_spmv(ctx, v, alpha, A, x, beta, y, 0, 1, NULL));
}

hisp_status hisp_spmv_variant_timed(hisp_context ctx, const hisp_variant *v, const void *alpha,
                                    hisp_matrix A, hisp_vector x, const void *beta, hisp_vector y,
                                    int warmup, int repeat, double *ms)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!ms) {
        double a = 0, b = 0; /* the arguments' messages first, as before */
        HISPI_TRY(check(ctx, v, alpha, A, x, beta, y, &a, &b));
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "need warmup >= 0, repeat >= 1, ms");
    }
    HISPI_CLAIMED(ctx, variant_spmv(ctx, v, alpha, A, x, beta, y, warmup, repeat, ms));
}

hisp_status hisp_matrix_layout_bytes(hisp_matrix A, hisp_outer_layout o, uint64_t *bytes)
{
    if (!hispi_mat_ok(A)) return HISP_ERR_INVALID_HANDLE;
    if (!bytes || (int)o < 0 || o >= HISP_OUTER_COUNT)
        return hispi_fail(A->ctx, HISP_ERR_INVALID_ARGUMENT, "bad layout or NULL output");
    if (!hispi_sparse_family(A->host.format))
        return hispi_fail(A->ctx, HISP_ERR_UNSUPPORTED, "layout bytes of a %s matrix",
                          hisp_format_name(A->host.format));
    hispi_sparse tmp;
    const hispi_sparse *c = NULL;
    HISPI_TRY(hispi_matrix_csr(A, &tmp, &c));
    hisp_layout l = {o, HISP_AOS, HISP_AOS};
    hisp_status s = hispi_clayout_size(A->ctx, c, &l, bytes);
    hispi_sparse_free(&tmp);
    return s;
}
