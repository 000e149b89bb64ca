/* ILU(0) / IC(0) as a preconditioner: the host's factors (ilu_factor.c)
 * and z = U^-1 L^-1 x where the solve runs. With run-time kernels the
 * triangular solves are level-scheduled on the device (kernels/ilu.cl):
 * a row's level is one more than the highest level of the rows it reads
 * (L: from the top, U: from the bottom), each level one launch over its
 * rows; the factors are uploaded once, in the matrix's entry type, U's
 * diagonal as its inverse. Elsewhere (the reference backend, the oracle,
 * and CPU devices such as PoCL's) the solves run on the host in double. */
#include "hispi_ilu.h"

#include <complex.h>
#include <stdlib.h>
#include <string.h>

#define GS 128

enum { B_LP, B_LC, B_LV, B_UP, B_UC, B_UV, B_DINV, B_LROWS, B_UROWS, NB };

struct hispi_ilu {
    hisp_context ctx;
    hispi_ilu_factors f;
    bool dev;
    void *k, *b[NB];
    int64_t nl, nu;       /* levels of L and U */
    int64_t *loff, *uoff; /* where each level's rows start in B_LROWS, B_UROWS */
    double *work;         /* the host path's x (n entries of 1 or 2 doubles) */
    hisp_vector tmp;      /* x's copy where z is x */
};

const hispi_ilu_factors *hispi_ilu_report(const hispi_ilu *p)
{
    return &p->f;
}

void hispi_ilu_destroy(hispi_ilu **pp)
{
    hispi_ilu *p = *pp;
    if (!p) return;
    if (hispi_handle_live(p->ctx, HISPI_H_CONTEXT)) { /* else its backend freed them */
        for (int i = 0; i < NB; i++)
            if (p->b[i]) HISPI_BE_VOID(p->ctx, buf_free, p->b[i]);
        if (p->k) HISPI_BE_VOID(p->ctx, kern_free, p->k);
    }
    hisp_vector_destroy(&p->tmp);
    hispi_ilu_factors_free(&p->f);
    free(p->loff), free(p->uoff), free(p->work);
    free(p);
    *pp = NULL;
}

/* The rows of a triangle ordered by level (counting sort): rows[],
 * *off (levels + 1 starts), *nlev. upper: levels from the bottom. */
static hisp_status levels(hisp_context ctx, int64_t n, const int64_t *ptr, const int32_t *col,
                          bool upper, int32_t **rows, int64_t **off, int64_t *nlev)
{
    int32_t *lev = NULL;
    *rows = NULL, *off = NULL, *nlev = 0;
    HISPI_TRY(hispi_alloc(ctx, (size_t)n + 1, sizeof *lev, (void **)&lev));
    int32_t top = -1;
    for (int64_t t = 0; t < n; t++) {
        int64_t i = upper ? n - 1 - t : t;
        int32_t l = 0;
        for (int64_t k = ptr[i]; k < ptr[i + 1]; k++)
            if (lev[col[k]] + 1 > l) l = lev[col[k]] + 1;
        lev[i] = l;
        if (l > top) top = l;
    }
    *nlev = top + 1;
    hisp_status s = hispi_calloc(ctx, (size_t)*nlev + 2, sizeof **off, (void **)off);
    if (!s) s = hispi_alloc(ctx, (size_t)n + 1, sizeof **rows, (void **)rows);
    if (!s) {
        int64_t *o = *off;
        for (int64_t i = 0; i < n; i++)
            o[lev[i] + 2]++;
        for (int64_t l = 0; l < *nlev; l++)
            o[l + 2] += o[l + 1];
        for (int64_t i = 0; i < n; i++)
            (*rows)[o[lev[i] + 1]++] = (int32_t)i;
    }
    free(lev);
    if (s) free(*rows), free(*off), *rows = NULL, *off = NULL;
    return s;
}

/* A device buffer of `bytes` from src. */
static hisp_status upload(hispi_ilu *p, int which, const void *src, size_t bytes)
{
    HISPI_TRY(HISPI_BE(p->ctx, buf_alloc, bytes ? bytes : 1, &p->b[which]));
    return bytes ? HISPI_BE(p->ctx, buf_write, p->b[which], 0, src, bytes) : HISP_SUCCESS;
}

/* n * vc doubles as the entry type's scalars (inv: each entry inverted). */
static hisp_status values(hispi_ilu *p, int which, const double *v, int64_t n, bool inv)
{
    int vc = hisp_type_components(p->f.t);
    size_t ss = hispi_type_scalar_size(p->f.t);
    void *h = NULL;
    HISPI_TRY(hispi_alloc(p->ctx, (size_t)(n * vc) + 1, ss, &h));
    for (int64_t i = 0; i < n; i++) {
        double complex x = vc < 2 ? v[i] : CMPLX(v[2 * i], v[2 * i + 1]);
        if (inv) x = 1 / x;
        double c[2] = {creal(x), cimag(x)};
        for (int q = 0; q < vc; q++) {
            if (ss == 8)
                ((double *)h)[i * vc + q] = c[q];
            else
                ((float *)h)[i * vc + q] = (float)c[q];
        }
    }
    hisp_status s = upload(p, which, h, (size_t)(n * vc) * ss);
    free(h);
    return s;
}

static hisp_status device_setup(hispi_ilu *p)
{
    const hispi_ilu_factors *f = &p->f;
    int64_t n = f->n;
    bool dbl = hispi_type_scalar_size(f->t) == 8, cx = hisp_type_components(f->t) > 1;
    char opts[128];
    snprintf(opts, sizeof opts, "-DVALUE_T=%s -DIS_DOUBLE=%d -DIS_COMPLEX=%d -DATOM64=0 -DGS=%d",
             dbl ? "double" : "float", (int)dbl, (int)cx, GS);
    HISPI_TRY(HISPI_BE(p->ctx, kern_get, HISPI_PROG_ILU, opts, "ilu_level", &p->k));
    int32_t *lr = NULL, *ur = NULL;
    hisp_status s = levels(p->ctx, n, f->lp, f->lc, false, &lr, &p->loff, &p->nl);
    if (!s) s = levels(p->ctx, n, f->up, f->uc, true, &ur, &p->uoff, &p->nu);
    if (!s) s = upload(p, B_LROWS, lr, (size_t)n * 4);
    if (!s) s = upload(p, B_UROWS, ur, (size_t)n * 4);
    free(lr), free(ur);
    if (!s) s = upload(p, B_LP, f->lp, ((size_t)n + 1) * 8);
    if (!s) s = upload(p, B_LC, f->lc, (size_t)f->lp[n] * 4);
    if (!s) s = values(p, B_LV, f->lv, f->lp[n], false);
    if (!s) s = upload(p, B_UP, f->up, ((size_t)n + 1) * 8);
    if (!s) s = upload(p, B_UC, f->uc, (size_t)f->up[n] * 4);
    if (!s) s = values(p, B_UV, f->uv, f->up[n], false);
    if (!s) s = values(p, B_DINV, f->d, n, true);
    return s;
}

hisp_status hispi_ilu_create(hisp_matrix A, bool ic, hispi_ilu **out)
{
    hisp_context ctx = A->ctx;
    *out = NULL;
    hispi_ilu *p = NULL;
    HISPI_TRY(hispi_calloc(ctx, 1, sizeof *p, (void **)&p));
    p->ctx = ctx;
    hisp_status s = hispi_ilu_factor(A, ic, &p->f);
    /* a CPU device's memory is the host's: one level per launch cost more
     * than the host's serial solves there (PoCL, 2 vCPUs, IC(0)-CG on
     * poisson3d 64^3: 13.1 against 8.7 ms per iteration) */
    hispi_kcaps caps;
    p->dev = HISPI_BE_HAS(ctx, kern_get) && HISPI_BE_HAS(ctx, kern_launch) &&
             HISPI_BE_HAS(ctx, buf_write) && HISPI_BE_HAS(ctx, kern_caps) &&
             !HISPI_BE(ctx, kern_caps, &caps) && !caps.is_cpu;
    if (!s && p->dev) s = device_setup(p);
    if (!s && !p->dev)
        s = hispi_alloc(ctx, (size_t)(p->f.n * hisp_type_components(p->f.t)) + 1, sizeof(double),
                        (void **)&p->work);
    if (s) {
        hispi_ilu_destroy(&p);
        return s;
    }
    *out = p;
    return HISP_SUCCESS;
}

/* One triangle's levels: y = T^-1 x (upper: in place on y). */
static hisp_status solve_levels(hispi_ilu *p, bool upper, const void *x, void *y)
{
    const int64_t *off = upper ? p->uoff : p->loff;
    int64_t nlev = upper ? p->nu : p->nl;
    int b0 = upper ? B_UP : B_LP;
    for (int64_t l = 0; l < nlev; l++) {
        int64_t m = off[l + 1] - off[l];
        hispi_karg a[] = {hispi_ki64(m),
                          hispi_ki64(off[l]),
                          hispi_kbuf(p->b[upper ? B_UROWS : B_LROWS]),
                          hispi_kbuf(p->b[b0]),
                          hispi_kbuf(p->b[b0 + 1]),
                          hispi_kbuf(p->b[b0 + 2]),
                          hispi_kbuf(p->b[B_DINV]),
                          {HISPI_KARG_I32, NULL, upper, 0},
                          hispi_kbuf(x),
                          hispi_kbuf(y)};
        HISPI_TRY(HISPI_BE(p->ctx, kern_launch, p->k, a, 10, (size_t)((m + GS - 1) / GS), GS));
    }
    return HISP_SUCCESS;
}

static hisp_status apply_host(hispi_ilu *p, hisp_vector x, hisp_vector z)
{
    int vc = hisp_type_components(p->f.t);
    bool dbl = hispi_type_scalar_size(p->f.t) == 8;
    int64_t m = p->f.n * vc;
    void *hx = NULL, *hz = NULL;
    HISPI_TRY(hispi_vector_host(x, &hx));
    for (int64_t i = 0; i < m; i++)
        p->work[i] = dbl ? ((const double *)hx)[i] : ((const float *)hx)[i];
    hispi_ilu_solve_host(&p->f, p->work);
    HISPI_TRY(hispi_vector_host_out(z, &hz));
    for (int64_t i = 0; i < m; i++) {
        if (dbl)
            ((double *)hz)[i] = p->work[i];
        else
            ((float *)hz)[i] = (float)p->work[i];
    }
    return hispi_vector_host_written(z);
}

hisp_status hispi_ilu_apply(hispi_ilu *p, hisp_vector x, hisp_vector z)
{
    if (!p->dev) return apply_host(p, x, z);
    if (x == z) { /* the lower solve reads x while it writes z: x copied first */
        if (!p->tmp) HISPI_TRY(hisp_vector_create(p->ctx, x->type, x->n, &p->tmp));
        HISPI_TRY(hisp_vector_copy(x, p->tmp));
        x = p->tmp;
    }
    void *bx = NULL, *bz = NULL;
    HISPI_TRY(hispi_vector_device(x, true, &bx));
    HISPI_TRY(hispi_vector_device(z, false, &bz));
    hispi_vector_device_written(z);
    HISPI_TRY(solve_levels(p, false, bx, bz));
    return solve_levels(p, true, bz, bz);
}
