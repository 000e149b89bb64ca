/* ILU(0) / IC(0) as a preconditioner. On a GPU (a backend with run-time
 * kernels, not a CPU device) the factors live on the device in one CSR
 * (kernels/ilu.cl), made there by fixed-point sweeps (ilu_device.c) or
 * uploaded from the host's factorisation, and z = U^-1 L^-1 x runs as
 * Jacobi sweeps of each triangle (the option ilu_solve_sweeps) or exactly,
 * level by level: a row's level is one more than the highest level of the
 * rows it reads (L: from the top, U: from the bottom), each level one
 * launch. Elsewhere (the reference backend, the oracle, and CPU devices
 * such as PoCL's) factors and solves are the host's, in double. */
#include "hispi_ilu.h"

#include <complex.h>
#include <stdlib.h>
#include <string.h>

/* The defaults of the options ilu_factor_sweeps and ilu_solve_sweeps
 * where the preconditioner runs on a GPU for a system of at least
 * SWEEP_ROWS rows (else exact). H200, poisson3d 160^3 (CUDA, 4.1M rows):
 * IC(0)-CG 142 iterations, 2672 ms in all exactly (host factorisation,
 * ~480 levels a triangle), 168 and 141 ms by 3 and 2 sweeps; 1, 2, 3, 5
 * factorisation sweeps gave 176, 167, 168, 168 iterations (solve sweeps
 * 2), 1, 2, 3 solve sweeps 215-233, 167-176, 144-157. On small real
 * matrices the sweeps cost 1.5-3x the exact solves' iterations (494_bus
 * 103 -> 151, bcsstk13 396 -> 1225, mhd1280b 8 -> 24) where the
 * levels are few and cheap. */
#define FACTOR_SWEEPS 3
#define SOLVE_SWEEPS 2
#define SWEEP_ROWS 100000

enum { B_PTR, B_COL, B_DPOS, B_VAL, B_T0, B_T1, B_LROWS, B_UROWS, NB };
enum { K_LEVEL, K_SWEEP, NK };

struct hispi_ilu {
    hisp_context ctx;
    hisp_type t;
    int64_t n;
    hispi_ilu_info info;
    hispi_ilu_factors f; /* the host path's factors */
    bool dev;
    void *k[NK], *b[NB];
    int64_t nl, nu;       /* levels of L and U */
    int64_t *loff, *uoff; /* where each level's rows start in B_LROWS, B_UROWS */
    double *work;         /* the host path's x, and its sweeps' 2 n */
    hisp_vector tmp;      /* x's copy where z is x (level-scheduled solves) */
};

const hispi_ilu_info *hispi_ilu_report(const hispi_ilu *p)
{
    return &p->info;
}

void hispi_ilu_destroy(hispi_ilu **pp)
{
    hispi_ilu *p = *pp;
    if (!p) return;
    if (hispi_handle_live(p->ctx, HISPI_H_CONTEXT)) { /* else its backend freed them */
        for (int i = 0; i < NB; i++)
            if (p->b[i]) HISPI_BE_VOID(p->ctx, buf_free, p->b[i]);
        for (int i = 0; i < NK; i++)
            if (p->k[i]) HISPI_BE_VOID(p->ctx, kern_free, p->k[i]);
    }
    hisp_vector_destroy(&p->tmp);
    hispi_ilu_factors_free(&p->f);
    free(p->loff), free(p->uoff), free(p->work);
    free(p);
    *pp = NULL;
}

/* The factors in one CSR (kernels/ilu.cl): ptr, col, dpos on the host,
 * val (1 or 2 doubles per entry) row by row as L, the diagonal, U. */
typedef struct {
    int64_t *ptr, *dpos;
    int32_t *col;
    double *val;
} combined;

static void combined_free(combined *c)
{
    free(c->ptr), free(c->dpos), free(c->col), free(c->val);
}

static hisp_status combine(hisp_context ctx, const hispi_ilu_factors *f, combined *c)
{
    int vc = hisp_type_components(f->t);
    int64_t n = f->n, nnz = f->lp[n] + f->up[n] + n, q = 0;
    HISPI_TRY(hispi_alloc(ctx, (size_t)n + 1, sizeof *c->ptr, (void **)&c->ptr));
    HISPI_TRY(hispi_alloc(ctx, (size_t)n + 1, sizeof *c->dpos, (void **)&c->dpos));
    HISPI_TRY(hispi_alloc(ctx, (size_t)nnz + 1, sizeof *c->col, (void **)&c->col));
    HISPI_TRY(hispi_alloc(ctx, (size_t)(nnz * vc) + 1, sizeof *c->val, (void **)&c->val));
    c->ptr[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        for (int64_t k = f->lp[i]; k < f->lp[i + 1]; k++, q++)
            c->col[q] = f->lc[k], memcpy(c->val + q * vc, f->lv + k * vc, (size_t)vc * 8);
        c->dpos[i] = q, c->col[q] = (int32_t)i;
        memcpy(c->val + q++ * vc, f->d + i * vc, (size_t)vc * 8);
        for (int64_t k = f->up[i]; k < f->up[i + 1]; k++, q++)
            c->col[q] = f->uc[k], memcpy(c->val + q * vc, f->uv + k * vc, (size_t)vc * 8);
        c->ptr[i + 1] = q;
    }
    return HISP_SUCCESS;
}

/* A's pattern with its diagonals' places (the device factorisation's,
 * which found it clean): for the levels. */
static hisp_status pattern(hisp_matrix A, combined *c)
{
    hispi_sparse tmp;
    const hispi_sparse *a = NULL;
    HISPI_TRY(hispi_matrix_csr(A, &tmp, &a));
    int64_t n = a->nrows;
    hisp_status s = hispi_alloc(A->ctx, (size_t)n + 1, sizeof *c->ptr, (void **)&c->ptr);
    if (!s) s = hispi_alloc(A->ctx, (size_t)n + 1, sizeof *c->dpos, (void **)&c->dpos);
    if (!s) s = hispi_alloc(A->ctx, (size_t)a->nnz + 1, sizeof *c->col, (void **)&c->col);
    for (int64_t i = 0; !s && i <= n; i++)
        c->ptr[i] = a->rowptr[i];
    for (int64_t i = 0; !s && i < n; i++)
        for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++)
            if (a->colind[k] == i) c->dpos[i] = k;
    if (!s) memcpy(c->col, a->colind, (size_t)a->nnz * sizeof *c->col);
    hispi_sparse_free(&tmp);
    return s;
}

/* The rows of a triangle ordered by level (counting sort): rows[],
 * *off (levels + 1 starts), *nlev. upper: levels from the bottom. */
static hisp_status levels(hisp_context ctx, int64_t n, const combined *c, bool upper,
                          int32_t **rows, int64_t **off, int64_t *nlev)
{
    int32_t *lev = NULL;
    *rows = NULL, *off = NULL, *nlev = 0;
    HISPI_TRY(hispi_alloc(ctx, (size_t)n + 1, sizeof *lev, (void **)&lev));
    int32_t top = -1;
    for (int64_t t = 0; t < n; t++) {
        int64_t i = upper ? n - 1 - t : t;
        int32_t l = 0;
        for (int64_t k = upper ? c->dpos[i] + 1 : c->ptr[i];
             k < (upper ? c->ptr[i + 1] : c->dpos[i]); k++)
            if (lev[c->col[k]] + 1 > l) l = lev[c->col[k]] + 1;
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
    HISPI_TRY(hispi_ilu_buf(p->ctx, bytes, &p->b[which]));
    return bytes ? HISPI_BE(p->ctx, buf_write, p->b[which], 0, src, bytes) : HISP_SUCCESS;
}

/* n * vc doubles as the entry type's scalars. */
static hisp_status values(hispi_ilu *p, int which, const double *v, int64_t n)
{
    int vc = hisp_type_components(p->t);
    size_t ss = hispi_type_scalar_size(p->t);
    void *h = NULL;
    HISPI_TRY(hispi_alloc(p->ctx, (size_t)(n * vc) + 1, ss, &h));
    for (int64_t i = 0; i < n * vc; i++) {
        if (ss == 8)
            ((double *)h)[i] = v[i];
        else
            ((float *)h)[i] = (float)v[i];
    }
    hisp_status s = upload(p, which, h, (size_t)(n * vc) * ss);
    free(h);
    return s;
}

/* The device's part: the host's factors uploaded (unless the device made
 * them), the levels of exact solves or the sweeps' two vectors. */
static hisp_status device_setup(hispi_ilu *p, hisp_matrix A, bool made)
{
    int64_t n = p->n;
    HISPI_TRY(hispi_ilu_kernel(p->ctx, p->t, "ilu_level", &p->k[K_LEVEL]));
    HISPI_TRY(hispi_ilu_kernel(p->ctx, p->t, "ilu_sweep", &p->k[K_SWEEP]));
    combined c = {0};
    hisp_status s = HISP_SUCCESS;
    if (!made) {
        s = combine(p->ctx, &p->f, &c);
        if (!s) s = upload(p, B_PTR, c.ptr, ((size_t)n + 1) * 8);
        if (!s) s = upload(p, B_DPOS, c.dpos, (size_t)n * 8);
        if (!s) s = upload(p, B_COL, c.col, (size_t)c.ptr[n] * 4);
        if (!s) s = values(p, B_VAL, c.val, c.ptr[n]);
        hispi_ilu_factors_free(&p->f); /* the device's now */
    } else if (!p->info.solve_sweeps) {
        s = pattern(A, &c);
    }
    if (!s && !p->info.solve_sweeps) {
        int32_t *lr = NULL, *ur = NULL;
        s = levels(p->ctx, n, &c, false, &lr, &p->loff, &p->nl);
        if (!s) s = levels(p->ctx, n, &c, true, &ur, &p->uoff, &p->nu);
        if (!s) s = upload(p, B_LROWS, lr, (size_t)n * 4);
        if (!s) s = upload(p, B_UROWS, ur, (size_t)n * 4);
        free(lr), free(ur);
    }
    combined_free(&c);
    size_t vb = (size_t)n * hisp_type_size(p->t);
    if (!s && p->info.solve_sweeps) s = hispi_ilu_buf(p->ctx, vb, &p->b[B_T0]);
    if (!s && p->info.solve_sweeps) s = hispi_ilu_buf(p->ctx, vb, &p->b[B_T1]);
    return s;
}

hisp_status hispi_ilu_create(hisp_matrix A, bool ic, hispi_ilu **out)
{
    hisp_context ctx = A->ctx;
    *out = NULL;
    hispi_ilu *p = NULL;
    HISPI_TRY(hispi_calloc(ctx, 1, sizeof *p, (void **)&p));
    p->ctx = ctx, p->t = A->host.type, p->n = A->host.nrows;
    /* a CPU device's memory is the host's: one level per launch cost more
     * than the host's serial solves there (PoCL, 2 vCPUs, IC(0)-CG on
     * poisson3d 64^3: 13.1 against 8.7 ms per iteration) */
    hispi_kcaps caps;
    p->dev = HISPI_BE_HAS(ctx, kern_get) && HISPI_BE_HAS(ctx, kern_launch) &&
             HISPI_BE_HAS(ctx, buf_write) && HISPI_BE_HAS(ctx, kern_caps) &&
             !HISPI_BE(ctx, kern_caps, &caps) && (!caps.is_cpu || hispi_ilu_gpu_paths);
    int fs = ctx->opt.ilu_factor_sweeps, ss = ctx->opt.ilu_solve_sweeps;
    bool sweep = p->dev && p->n >= SWEEP_ROWS;
    if (fs < 0) fs = sweep ? FACTOR_SWEEPS : 0;
    if (ss < 0) ss = sweep ? SOLVE_SWEEPS : 0;
    bool made = false;
    hisp_status s = HISP_SUCCESS;
    if (p->dev && fs > 0 && A->host.format == HISP_FORMAT_CSR && A->host.nrows == A->host.ncols)
        s = hispi_ilu_dev_factor(A, ic, fs, p->b, &p->info, &made);
    if (!s && !made) { /* the host's: exact on a GPU where the device could not */
        s = hispi_ilu_factor(A, ic, p->dev ? 0 : fs, &p->f);
        p->info = (hispi_ilu_info){p->f.shifted, p->f.filled, p->f.diag_shift, p->f.sweeps, 0, 0};
    }
    p->info.solve_sweeps = ss, p->info.t = p->t;
    if (!s && p->dev) s = device_setup(p, A, made);
    if (!s && !p->dev)
        s = hispi_alloc(ctx, (size_t)(3 * p->n * hisp_type_components(p->t)) + 1, sizeof(double),
                        (void **)&p->work);
    if (s) {
        hispi_ilu_destroy(&p);
        return s;
    }
    *out = p;
    return HISP_SUCCESS;
}

static hisp_status launch(hispi_ilu *p, int k, const hispi_karg *a, int na, int64_t m)
{
    return hispi_ilu_launch(p->ctx, p->k[k], a, na, m);
}

/* One triangle's levels: y = T^-1 x (upper: in place on y). */
static hisp_status solve_levels(hispi_ilu *p, bool upper, const void *x, void *y)
{
    const int64_t *off = upper ? p->uoff : p->loff;
    int64_t nlev = upper ? p->nu : p->nl;
    for (int64_t l = 0; l < nlev; l++) {
        int64_t m = off[l + 1] - off[l];
        hispi_karg a[] = {hispi_ki64(m),
                          hispi_ki64(off[l]),
                          hispi_kbuf(p->b[upper ? B_UROWS : B_LROWS]),
                          hispi_kbuf(p->b[B_PTR]),
                          hispi_kbuf(p->b[B_COL]),
                          hispi_kbuf(p->b[B_DPOS]),
                          hispi_kbuf(p->b[B_VAL]),
                          {HISPI_KARG_I32, NULL, upper, 0},
                          hispi_kbuf(x),
                          hispi_kbuf(y)};
        HISPI_TRY(launch(p, K_LEVEL, a, 10, m));
    }
    return HISP_SUCCESS;
}

/* z ~ U^-1 L^-1 x by Jacobi sweeps: L's end in T0, U's in z (x may be z:
 * only L's read x). */
static hisp_status solve_sweeps(hispi_ilu *p, void *x, void *z)
{
    int ss = p->info.solve_sweeps;
    void *prev = x;
    for (int upper = 0; upper < 2; upper++)
        for (int q = 1; q <= ss; q++) {
            void *out = (ss - q) % 2 ? p->b[B_T1] : upper ? z : p->b[B_T0];
            hispi_karg a[] = {hispi_ki64(p->n),
                              hispi_kbuf(p->b[B_PTR]),
                              hispi_kbuf(p->b[B_COL]),
                              hispi_kbuf(p->b[B_DPOS]),
                              hispi_kbuf(p->b[B_VAL]),
                              {HISPI_KARG_I32, NULL, upper, 0},
                              {HISPI_KARG_I32, NULL, q == 1, 0},
                              hispi_kbuf(upper ? p->b[B_T0] : x),
                              hispi_kbuf(prev),
                              hispi_kbuf(out)};
            HISPI_TRY(launch(p, K_SWEEP, a, 10, p->n));
            prev = out;
        }
    return HISP_SUCCESS;
}

static hisp_status apply_host(hispi_ilu *p, hisp_vector x, hisp_vector z)
{
    int vc = hisp_type_components(p->t);
    bool dbl = hispi_type_scalar_size(p->t) == 8;
    int64_t m = p->n * vc;
    void *hx = NULL, *hz = NULL;
    HISPI_TRY(hispi_vector_host(x, &hx));
    for (int64_t i = 0; i < m; i++)
        p->work[i] = dbl ? ((const double *)hx)[i] : ((const float *)hx)[i];
    if (p->info.solve_sweeps)
        hispi_ilu_sweeps_host(&p->f, p->info.solve_sweeps, p->work, p->work + m);
    else
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
    if (x == z && !p->info.solve_sweeps) { /* the lower solve reads x while it writes z */
        if (!p->tmp) HISPI_TRY(hisp_vector_create(p->ctx, x->type, x->n, &p->tmp));
        HISPI_TRY(hisp_vector_copy(x, p->tmp));
        x = p->tmp;
    }
    void *bx = NULL, *bz = NULL;
    HISPI_TRY(hispi_vector_device(x, true, &bx));
    HISPI_TRY(hispi_vector_device(z, x == z, &bz));
    hispi_vector_device_written(z);
    if (p->info.solve_sweeps) return solve_sweeps(p, bx, bz);
    HISPI_TRY(solve_levels(p, false, bx, bz));
    return solve_levels(p, true, bz, bz);
}
