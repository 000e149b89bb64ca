/* The V-cycle of smoothed-aggregation AMG (hispi_amg.h) from the library's
 * SpMV (R, or P with op T, restricts) on the context's backend, so that it
 * runs where the solve runs. Where the backend has run-time kernels, the
 * smoother's vector updates are fused kernels (kernels/amg.cl) and the
 * coarsest level is a product with its operator's dense inverse on the
 * device: the cycle is queued whole, with no host wait. Elsewhere (the
 * reference backend, the oracle) the updates are the library's vector
 * calls and the coarsest level a dense LU solve on the host. */
#include "hispi_amg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct hispi_amg_cycle {
    hisp_context ctx;
    hispi_amg h;
    hisp_matrix csr; /* level 0 where A is not f32/f64 CSR: A's CSR copy, or its scalars
                        (hisp_matrix_expand_real) where A has 3x3 blocks; or NULL */
    hisp_type t;     /* the levels' entries */
    /* single-precision levels for an f64 A (amg_precision): level 0's
     * operator A's f32 copy, its b and x (the caller's are f64) */
    bool single;
    hisp_matrix a32;
    hispi_amg_single g;
    /* per level: b and x (the caller's on level 0), r */
    hisp_vector b[HISPI_AMG_MAX_LEVELS], x[HISPI_AMG_MAX_LEVELS], r[HISPI_AMG_MAX_LEVELS],
        e[HISPI_AMG_MAX_LEVELS], w2[HISPI_AMG_MAX_LEVELS];
    /* (e, w2: the smoother's direction and product) */
    /* the coarsest level: LU factors (row-major, nc x nc), pivots, host work */
    int64_t nc;
    double *lu, *w;
    int64_t *piv;
    void *tw; /* nc entries of type t */
    /* fused: kernels amg_cheb0, amg_cheb, amg_gemv; minv the coarsest
     * operator's inverse (by columns, type t) on the device */
    bool fused;
    void *k[3], *minv;
    hispi_amg_opts o; /* the smoother and its sweeps */
};
enum { K_CHEB0, K_CHEB, K_GEMV };

const hispi_amg *hispi_amg_cycle_hierarchy(const hispi_amg_cycle *c)
{
    return &c->h;
}

hisp_type hispi_amg_cycle_type(const hispi_amg_cycle *c)
{
    return c->t;
}

void hispi_amg_cycle_destroy(hispi_amg_cycle **pc)
{
    hispi_amg_cycle *c = *pc;
    if (!c) return;
    for (int l = 0; l < HISPI_AMG_MAX_LEVELS; l++) {
        if (l > 0 || c->single) hisp_vector_destroy(&c->b[l]), hisp_vector_destroy(&c->x[l]);
        hisp_vector_destroy(&c->r[l]);
        hisp_vector_destroy(&c->e[l]), hisp_vector_destroy(&c->w2[l]);
    }
    hispi_amg_free(&c->h);
    hisp_matrix_destroy(&c->csr), hisp_matrix_destroy(&c->a32);
    hispi_amg_single_free(c->ctx, &c->g);
    free(c->lu), free(c->w), free(c->piv), free(c->tw);
    if (hispi_handle_live(c->ctx, HISPI_H_CONTEXT)) { /* else its backend freed them */
        for (int i = 0; i < 3; i++)
            if (c->k[i]) HISPI_BE_VOID(c->ctx, kern_free, c->k[i]);
        if (c->minv) HISPI_BE_VOID(c->ctx, buf_free, c->minv);
    }
    free(c);
    *pc = NULL;
}

/* The coarsest operator's LU factors with partial pivoting; a singular one
 * is the error. */
static hisp_status factor(hispi_amg_cycle *c)
{
    hisp_context ctx = c->ctx;
    int L = c->h.nlevels - 1;
    int64_t n = c->h.rows[L];
    const int64_t *p;
    const int32_t *ci;
    const void *v;
    HISPI_TRY(hisp_matrix_host_arrays(c->h.A[L], &p, NULL, &ci, &v));
    c->nc = n;
    HISPI_TRY(hispi_calloc(ctx, (size_t)(n * n) + 1, sizeof *c->lu, (void **)&c->lu));
    HISPI_TRY(hispi_alloc(ctx, (size_t)n + 1, sizeof *c->w, (void **)&c->w));
    HISPI_TRY(hispi_alloc(ctx, (size_t)n + 1, sizeof *c->piv, (void **)&c->piv));
    HISPI_TRY(hispi_alloc(ctx, (size_t)n + 1, hisp_type_size(c->t), &c->tw));
    double *a = c->lu, big = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = p[i]; k < p[i + 1]; k++) {
            a[i * n + ci[k]] += hispi_load_real(c->t, v, k);
            big = fmax(big, fabs(a[i * n + ci[k]]));
        }
    for (int64_t j = 0; j < n; j++) {
        int64_t q = j;
        for (int64_t i = j + 1; i < n; i++)
            if (fabs(a[i * n + j]) > fabs(a[q * n + j])) q = i;
        c->piv[j] = q;
        if (!(fabs(a[q * n + j]) > 1e-14 * big))
            return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                              "AMG setup: the coarsest operator (%lld rows) is singular",
                              (long long)n);
        if (q != j)
            for (int64_t k = 0; k < n; k++) {
                double s = a[j * n + k];
                a[j * n + k] = a[q * n + k], a[q * n + k] = s;
            }
        for (int64_t i = j + 1; i < n; i++) {
            double f = a[i * n + j] /= a[j * n + j];
            for (int64_t k = j + 1; k < n; k++)
                a[i * n + k] -= f * a[j * n + k];
        }
    }
    return HISP_SUCCESS;
}

/* w = A_c^-1 w on the host, by the LU factors. */
static void lu_solve(const hispi_amg_cycle *c, double *w)
{
    int64_t n = c->nc;
    const double *a = c->lu;
    for (int64_t j = 0; j < n; j++) { /* P b, then L y = P b */
        int64_t q = c->piv[j];
        double s = w[j];
        w[j] = w[q], w[q] = s;
    }
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < i; k++)
            w[i] -= a[i * n + k] * w[k];
    for (int64_t i = n - 1; i >= 0; i--) { /* U x = y */
        for (int64_t k = i + 1; k < n; k++)
            w[i] -= a[i * n + k] * w[k];
        w[i] /= a[i * n + i];
    }
}

/* The inverse of the coarsest operator on the device (minv, by columns:
 * column j the solve for e_j). */
static hisp_status upload_inverse(hispi_amg_cycle *c)
{
    hisp_context ctx = c->ctx;
    int64_t n = c->nc;
    size_t es = hisp_type_size(c->t);
    void *m = NULL;
    HISPI_TRY(hispi_alloc(ctx, (size_t)(n * n) + 1, es, &m));
    for (int64_t j = 0; j < n; j++) {
        memset(c->w, 0, (size_t)n * sizeof *c->w);
        c->w[j] = 1;
        lu_solve(c, c->w);
        for (int64_t i = 0; i < n; i++)
            hispi_store_real(c->t, m, j * n + i, c->w[i]);
    }
    size_t bytes = (size_t)(n * n) * es;
    hisp_status s = HISPI_BE(ctx, buf_alloc, bytes ? bytes : 1, &c->minv);
    if (!s && bytes) s = HISPI_BE(ctx, buf_write, c->minv, 0, m, bytes);
    free(m);
    return s;
}

void *hispi_amg_vbuf(hisp_vector v, bool written, hisp_status *s)
{
    void *b = NULL;
    if (!*s) *s = hispi_vector_device(v, true, &b);
    if (!*s && written) hispi_vector_device_written(v);
    return b;
}

static hispi_karg kr(const hispi_amg_cycle *c, double v)
{
    return (hispi_karg){c->t == HISP_F64 ? HISPI_KARG_F64 : HISPI_KARG_F32, NULL, 0, v};
}

/* x = A_c^-1 b: on the device (fused), else on the host. */
static hisp_status coarse_solve(hispi_amg_cycle *c, hisp_vector b, hisp_vector x)
{
    int64_t n = c->nc;
    if (c->fused) {
        hisp_status s = HISP_SUCCESS;
        hispi_karg a[] = {hispi_ki64(n), hispi_kbuf(c->minv),
                          hispi_kbuf(hispi_amg_vbuf(b, false, &s)),
                          hispi_kbuf(hispi_amg_vbuf(x, true, &s))};
        return s ? s : hispi_amg_launch(c->ctx, c->k[K_GEMV], a, 4, n);
    }
    HISPI_TRY(hisp_vector_read(b, c->tw));
    for (int64_t i = 0; i < n; i++)
        c->w[i] = hispi_load_real(c->t, c->tw, i);
    lu_solve(c, c->w);
    for (int64_t i = 0; i < n; i++)
        hispi_store_real(c->t, c->tw, i, c->w[i]);
    return hisp_vector_write(x, c->tw);
}

/* A scalar of the cycle's type in host memory. */
typedef hispi_amg_num num;

static hisp_scalar scal(const hispi_amg_cycle *c, num *n, double v)
{
    return hispi_amg_scalar(c->t, n, v);
}

static hispi_karg kt(hisp_type t, double v)
{
    return (hispi_karg){t == HISP_F64 ? HISPI_KARG_F64 : HISPI_KARG_F32, NULL, 0, v};
}

hisp_status hispi_cheb_steps(const hispi_cheb *ch, hisp_vector b, hisp_vector x, bool zero)
{
    const int deg = ch->degree;
    hisp_context ctx = ch->ctx;
    hisp_matrix A = ch->A;
    hisp_vector r = ch->r, d = ch->d, t = ch->t;
    double th = (ch->hi + ch->lo) / 2, de = (ch->hi - ch->lo) / 2;
    double sg = th / de, rk = 1 / sg;
    num one, mone, zero_, a, bb;
    (void)hispi_amg_scalar(ch->type, &one, 1), (void)hispi_amg_scalar(ch->type, &mone, -1);
    (void)hispi_amg_scalar(ch->type, &zero_, 0);
    /* r = D^-1 (b - A x), d = r / theta */
    HISPI_TRY(hisp_vector_copy(b, r));
    if (!zero) HISPI_TRY(hisp_spmv(ctx, HISP_OP_N, &mone, A, x, &one, r));
    if (ch->k0) { /* one kernel per step after the product */
        hisp_status s = HISP_SUCCESS;
        int64_t n = r->n;
        hispi_karg k0[] = {hispi_ki64(n),
                           hispi_kbuf(hispi_amg_vbuf(r, true, &s)),
                           hispi_kbuf(hispi_amg_vbuf(ch->diag, false, &s)),
                           hispi_kbuf(hispi_amg_vbuf(d, true, &s)),
                           hispi_kbuf(hispi_amg_vbuf(x, true, &s)),
                           kt(ch->type, 1 / th),
                           {HISPI_KARG_I32, NULL, zero, 0}};
        if (!s) s = hispi_amg_launch(ctx, ch->k0, k0, 7, n);
        for (int k = 0; !s && k + 1 < deg; k++) {
            double rn = 1 / (2 * sg - rk);
            s = hisp_spmv(ctx, HISP_OP_N, &one, A, d, &zero_, t);
            hispi_karg ks[] = {hispi_ki64(n),
                               hispi_kbuf(hispi_amg_vbuf(t, false, &s)),
                               hispi_kbuf(hispi_amg_vbuf(ch->diag, false, &s)),
                               hispi_kbuf(hispi_amg_vbuf(r, true, &s)),
                               hispi_kbuf(hispi_amg_vbuf(d, true, &s)),
                               hispi_kbuf(hispi_amg_vbuf(x, true, &s)),
                               kt(ch->type, 2 * rn / de),
                               kt(ch->type, rn * rk)};
            if (!s) s = hispi_amg_launch(ctx, ch->k1, ks, 8, n);
            rk = rn;
        }
        return s;
    }
    HISPI_TRY(hisp_vector_div(r, ch->diag, r));
    HISPI_TRY(hisp_vector_axpby(hispi_amg_scalar(ch->type, &a, 1 / th), r,
                                hispi_amg_scalar(ch->type, &bb, 0), d));
    for (int k = 0; k < deg; k++) {
        if (zero && k == 0)
            HISPI_TRY(hisp_vector_copy(d, x));
        else
            HISPI_TRY(hisp_vector_axpby(hispi_amg_scalar(ch->type, &a, 1), d,
                                        hispi_amg_scalar(ch->type, &bb, 1), x));
        if (k + 1 == deg) break;
        HISPI_TRY(hisp_spmv(ctx, HISP_OP_N, &one, A, d, &zero_, t));
        HISPI_TRY(hisp_vector_div(t, ch->diag, t));
        HISPI_TRY(hisp_vector_axpby(hispi_amg_scalar(ch->type, &a, -1), t,
                                    hispi_amg_scalar(ch->type, &bb, 1), r));
        double rn = 1 / (2 * sg - rk);
        HISPI_TRY(hisp_vector_axpby(hispi_amg_scalar(ch->type, &a, 2 * rn / de), r,
                                    hispi_amg_scalar(ch->type, &bb, rn * rk), d));
        rk = rn;
    }
    return HISP_SUCCESS;
}

/* The Chebyshev smoother on level l: sweeps steps (the default 3) over
 * [lmax / 30, upper] (lmax and upper the Lanczos estimate and bound of the
 * largest eigenvalue of D^-1 A). A polynomial in D^-1 A: the same before
 * and after the coarse correction keeps the cycle symmetric. Measured
 * against damped Jacobi (one sweep) and degree 2, CG to 1e-8 on 48^3 grids
 * (theta 0) took 14 / 26 / 18 iterations on poisson3d, 46 / 123 / 63 on
 * aniso3d, 27 / 57 / 34 on jump3d. */
static hisp_status chebyshev(hispi_amg_cycle *c, int l, hisp_vector b, hisp_vector x, bool zero)
{
    hispi_cheb ch = {c->ctx,
                     c->t,
                     c->h.A[l],
                     c->h.diag[l],
                     c->r[l],
                     c->e[l],
                     c->w2[l],
                     c->h.lmax[l] / 30,
                     c->h.upper[l],
                     c->o.sweeps,
                     c->fused ? c->k[K_CHEB0] : NULL,
                     c->fused ? c->k[K_CHEB] : NULL};
    return hispi_cheb_steps(&ch, b, x, zero);
}

/* The Jacobi smoothers: sweeps times x = x + w D^-1 (b - A x), damped
 * Jacobi (D A's diagonal, w = 4/3 / lmax) or l1-Jacobi (D the row sums of
 * |A|, w = 1: convergent for SPD A without damping); symmetric before and
 * after. zero: x is 0 on entry. */
static hisp_status jacobi(hispi_amg_cycle *c, int l, hisp_vector b, hisp_vector x, bool zero)
{
    hisp_context ctx = c->ctx;
    bool l1 = c->o.smoother == HISPI_AMG_L1_JACOBI;
    hisp_vector r = c->r[l], D = l1 ? c->h.l1[l] : c->h.diag[l];
    double w = l1 ? 1 : 4.0 / 3.0 / c->h.lmax[l];
    num one, mone, a, bb;
    (void)scal(c, &one, 1), (void)scal(c, &mone, -1);
    for (int k = 0; k < c->o.sweeps; k++) {
        bool first = zero && k == 0; /* x = 0: r = b */
        HISPI_TRY(hisp_vector_copy(b, r));
        if (!first) HISPI_TRY(hisp_spmv(ctx, HISP_OP_N, &mone, c->h.A[l], x, &one, r));
        if (c->fused) {
            hisp_status s = HISP_SUCCESS;
            int64_t n = c->h.rows[l];
            hispi_karg k0[] = {hispi_ki64(n),
                               hispi_kbuf(hispi_amg_vbuf(r, true, &s)),
                               hispi_kbuf(hispi_amg_vbuf(D, false, &s)),
                               hispi_kbuf(hispi_amg_vbuf(c->e[l], true, &s)),
                               hispi_kbuf(hispi_amg_vbuf(x, true, &s)),
                               kr(c, w),
                               {HISPI_KARG_I32, NULL, first, 0}};
            if (!s) s = hispi_amg_launch(ctx, c->k[K_CHEB0], k0, 7, n);
            HISPI_TRY(s);
            continue;
        }
        HISPI_TRY(hisp_vector_div(r, D, r));
        HISPI_TRY(hisp_vector_axpby(scal(c, &a, w), r, scal(c, &bb, first ? 0 : 1), x));
    }
    return HISP_SUCCESS;
}

static hisp_status smooth(hispi_amg_cycle *c, int l, hisp_vector b, hisp_vector x, bool zero)
{
    return c->o.smoother == HISPI_AMG_CHEBYSHEV ? chebyshev(c, l, b, x, zero)
                                                : jacobi(c, l, b, x, zero);
}

/* x = V(b) on level l. */
static hisp_status vcycle(hispi_amg_cycle *c, int l, hisp_vector b, hisp_vector x)
{
    if (l == c->h.nlevels - 1) return coarse_solve(c, b, x);
    hisp_context ctx = c->ctx;
    hisp_matrix A = c->h.A[l], P = c->h.P[l];
    hisp_vector r = c->r[l];
    num one, mone, zero;
    (void)scal(c, &one, 1), (void)scal(c, &mone, -1), (void)scal(c, &zero, 0);
    HISPI_TRY(smooth(c, l, b, x, true));
    /* the coarse correction: x += P V(P^T (b - A x)) */
    HISPI_TRY(hisp_vector_copy(b, r));
    HISPI_TRY(hisp_spmv(ctx, HISP_OP_N, &mone, A, x, &one, r));
    if (c->h.R[l]) /* P^T as a matrix of its own (a device setup's) */
        HISPI_TRY(hisp_spmv(ctx, HISP_OP_N, &one, c->h.R[l], r, &zero, c->b[l + 1]));
    else
        HISPI_TRY(hisp_spmv(ctx, HISP_OP_T, &one, P, r, &zero, c->b[l + 1]));
    HISPI_TRY(vcycle(c, l + 1, c->b[l + 1], c->x[l + 1]));
    HISPI_TRY(hisp_spmv(ctx, HISP_OP_N, &one, P, c->x[l + 1], &one, x));
    return smooth(c, l, b, x, false);
}

hisp_status hispi_amg_cycle_apply(hispi_amg_cycle *c, hisp_vector b, hisp_vector x)
{
    if (!c->single) return vcycle(c, 0, b, x);
    HISPI_TRY(hispi_amg_single_in(c->ctx, &c->g, b, c->b[0]));
    HISPI_TRY(vcycle(c, 0, c->b[0], c->x[0]));
    return hispi_amg_single_out(c->ctx, &c->g, c->x[0], x);
}

/* A new vector of n zeros (on the device: filled there, nothing moves). */
static hisp_status zeros(hispi_amg_cycle *c, int64_t n, hisp_vector *v)
{
    num z;
    HISPI_TRY(hisp_vector_create(c->ctx, c->t, n, v));
    return hisp_vector_fill(*v, scal(c, &z, 0));
}

/* Level l's vectors on the backend, and the device forms of its matrices
 * made now (a setup's cost, not the first cycle's). */
static hisp_status level_vectors(hispi_amg_cycle *c, int l)
{
    int64_t n = c->h.rows[l];
    /* A: not the caller's (level 0, unless its f32 copy), nor the coarsest (dense) */
    bool own = (l > 0 || c->single) && l + 1 < c->h.nlevels;
    hisp_matrix m[3] = {own ? c->h.A[l] : NULL, c->h.P[l], c->h.R[l]};
    static const char *const what[3] = {"A's SpMV form", "P's SpMV form", "R's SpMV form"};
    double t0 = 0;
    hispi_amg_mark(c->ctx, n, "", &t0);
    for (int i = 0; i < 3; i++)
        if (m[i] && m[i]->wrapped && !m[i]->dev) {
            HISPI_TRY(hispi_matrix_wrap_upload(m[i]));
            hispi_amg_mark(c->ctx, n, what[i], &t0);
        }
    if (l > 0 || c->single) {
        HISPI_TRY(zeros(c, n, &c->b[l]));
        HISPI_TRY(zeros(c, n, &c->x[l]));
    }
    if (l == c->h.nlevels - 1) return HISP_SUCCESS;
    HISPI_TRY(zeros(c, n, &c->r[l]));
    HISPI_TRY(zeros(c, n, &c->e[l]));
    HISPI_TRY(zeros(c, n, &c->w2[l]));
    hispi_amg_mark(c->ctx, n, "vectors", &t0);
    return HISP_SUCCESS;
}

long hispi_amg_single_rows = 100000;

/* Single-precision levels for an f64 A0 (CSR, n rows) where amg_precision
 * asks (auto: on a GPU, from hispi_amg_single_rows rows on, where A0's
 * entries fit; on PoCL's CPU device they measured no faster, 48^3 grids:
 * poisson3d and jump3d the same, aniso3d 10 % slower): *A0 then its f32
 * copy. */
static hisp_status single_levels(hispi_amg_cycle *c, hisp_matrix A0, int64_t n, hisp_matrix *out)
{
    int p = c->o.precision;
    if (c->t != HISP_F64 || p == HISPI_AMG_FULL ||
        (p == HISPI_AMG_AUTO && (n < hispi_amg_single_rows || !hispi_amg_dev_usable(c->ctx))))
        return HISP_SUCCESS;
    bool ok = true;
    HISPI_TRY(hispi_amg_narrow(A0, &c->a32, &ok));
    if (!ok && p == HISPI_AMG_SINGLE)
        return hispi_fail(c->ctx, HISP_ERR_INVALID_ARGUMENT,
                          "AMG setup: amg_precision=single: an entry of A is outside [2^-64, "
                          "2^64], which single-precision levels do not take (amg_precision=full "
                          "does)");
    if (!ok) {
        hispi_debug("amg setup: an entry is outside [2^-64, 2^64]: levels in f64");
        return HISP_SUCCESS;
    }
    hisp_matrix_destroy(&c->csr); /* its f32 copy serves */
    c->single = true, c->t = HISP_F32, *out = c->a32;
    return HISP_SUCCESS;
}

/* A matrix of 3x3 blocks: its scalars' nodes are its blocks. */
static bool has_blocks(hisp_type t)
{
    return t == HISP_B3X3_F32 || t == HISP_B3X3_F64;
}

/* The node size o asks for A of type t (amg_block 0: 3 for blocks, else 1). */
static int block_size(const hispi_amg_opts *o, hisp_type t)
{
    return o->block ? o->block : has_blocks(t) ? 3 : 1;
}

static hisp_status create(hisp_matrix A, const hispi_amg_opts *o, hispi_amg *reuse,
                          hispi_amg_cycle **pc)
{
    *pc = NULL;
    if (!hispi_mat_ok(A)) return HISP_ERR_INVALID_HANDLE;
    hisp_context ctx = A->ctx;
    hispi_amg_cycle *c = NULL;
    HISPI_TRY(hispi_calloc(ctx, 1, sizeof *c, (void **)&c));
    c->ctx = ctx;
    c->o = *o;
    hisp_matrix_info mi;
    hisp_status s = hisp_matrix_get_info(A, &mi);
    c->t = mi.type;
    hisp_matrix A0 = A;
    c->o.block = block_size(o, mi.type);
    if (!s && has_blocks(mi.type)) { /* its scalars, each block's unknowns a node's */
        s = hisp_matrix_expand_real(A, &c->csr);
        if (!s) s = hisp_matrix_convert(c->csr, HISP_FORMAT_CSR);
        if (!s) s = hisp_matrix_get_info(c->csr, &mi);
        c->t = mi.type;
        A0 = c->csr;
    } else if (!s && mi.format != HISP_FORMAT_CSR) {
        s = hisp_matrix_duplicate(A, HISP_FORMAT_CSR, &c->csr);
        A0 = c->csr;
    }
    double t0 = 0;
    hispi_amg_mark(ctx, mi.nrows, "", &t0);
    if (!s) s = single_levels(c, A0, mi.nrows, &A0);
    if (c->single) hispi_amg_mark(ctx, mi.nrows, "A in f32", &t0);
    if (!s) s = hispi_amg_setup(A0, &c->o, reuse, &c->h);
    hispi_amg_mark(ctx, mi.nrows, "the hierarchy", &t0);
    if (!s) s = factor(c);
    c->fused = HISPI_BE_HAS(ctx, kern_get) && HISPI_BE_HAS(ctx, kern_launch);
    static const char *const kn[3] = {"amg_cheb0", "amg_cheb", "amg_gemv"};
    for (int i = 0; !s && c->fused && i < 3; i++)
        s = hispi_amg_kernel(ctx, c->t, kn[i], &c->k[i]);
    if (!s && c->fused) s = upload_inverse(c);
    if (!s && c->single) s = hispi_amg_single_init(ctx, c->fused, &c->g);
    hispi_amg_mark(ctx, mi.nrows, "the coarsest level's inverse", &t0);
    for (int l = 0; !s && l < c->h.nlevels; l++)
        s = level_vectors(c, l);
    hispi_amg_mark(ctx, mi.nrows, "the cycle's vectors and matrices", &t0);
    if (s) {
        hispi_amg_cycle_destroy(&c);
        return s;
    }
    *pc = c;
    return HISP_SUCCESS;
}

hisp_status hispi_amg_cycle_create(hisp_matrix A, const hispi_amg_opts *o, hispi_amg_cycle **pc)
{
    return create(A, o, NULL, pc);
}

hisp_status hispi_amg_cycle_renew(hisp_matrix A, const hispi_amg_opts *o, hispi_amg_cycle *old,
                                  hispi_amg_cycle **pc)
{
    *pc = NULL;
    if (!hispi_mat_ok(A)) return HISP_ERR_INVALID_HANDLE;
    bool same = old && old->o.theta == o->theta && old->o.block == block_size(o, A->host.type) &&
                old->o.seed == o->seed && old->o.max_coarse == o->max_coarse &&
                old->o.max_levels == o->max_levels;
    return create(A, o, same ? &old->h : NULL, pc);
}
