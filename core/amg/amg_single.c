/* Single-precision levels for an f64 system (hispi_amg.h): A's entries
 * narrowed to f32 (on the device where the setup runs there, else on the
 * host), the hierarchy and the V-cycle then in f32, the cycle's b and x
 * narrowed and widened at its ends. A V-cycle streams its operators about
 * ten times per iteration, so on a GPU halving the bytes of their values
 * shortens a CG iteration by a quarter (H200, poisson3d 256^3: 7.4 against
 * 9.8 ms), while CG in f64 keeps the solve's accuracy: the same
 * iterations to 1e-8 on the generators' grids. */
#include "hispi_amg.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Is v 0 or in [2^-64, 2^64] (kernels/amg.cl's amg_narrow)? f32 holds
 * it, and the levels' products of such entries stay in f32's range. */
static bool fits(double v)
{
    double a = fabs(v);
    return a == 0 || (a >= ldexp(1, -64) && a <= ldexp(1, 64));
}

/* From A's host arrays. */
static hisp_status narrow_host(hisp_matrix A, hisp_matrix *S, bool *ok)
{
    hisp_context ctx = A->ctx;
    const int64_t *p;
    const int32_t *c;
    const void *v;
    HISPI_TRY(hisp_matrix_host_arrays(A, &p, NULL, &c, &v));
    int64_t n = A->host.nrows, nnz = p[n];
    const double *d = v;
    for (int64_t k = 0; k < nnz; k++)
        if (!fits(d[k])) return (*ok = false), HISP_SUCCESS;
    float *f = NULL;
    HISPI_TRY(hispi_alloc(ctx, (size_t)nnz + 1, sizeof *f, (void **)&f));
    for (int64_t k = 0; k < nnz; k++)
        f[k] = (float)d[k];
    hisp_status s = hisp_matrix_create_csr(ctx, HISP_F32, n, A->host.ncols, p, c, f, S);
    free(f);
    return s;
}

/* From A's device arrays (hispi_amg_dev_operand's view): the structure
 * copied there, the values narrowed by amg_narrow; only its flag is read
 * back. */
static hisp_status narrow_device(hisp_matrix A, hisp_matrix *S, bool *ok)
{
    hisp_context ctx = A->ctx;
    hisp_matrix D = NULL;
    void *own = NULL, *k = NULL, *buf[4] = {NULL, NULL, NULL, NULL}; /* ptr, col, val, flag */
    HISPI_TRY(hispi_amg_dev_operand(A, &D, &own));
    int64_t n = D->host.nrows, nnz = D->host.nnz;
    uint32_t bad = 0;
    buf[0] = own, own = NULL;
    hisp_status s = buf[0] ? HISP_SUCCESS : HISPI_BE(ctx, buf_alloc, ((size_t)n + 1) * 8, &buf[0]);
    if (!s && buf[0] != D->ext.rowptr)
        s = HISPI_BE(ctx, buf_copy, buf[0], D->ext.rowptr, ((size_t)n + 1) * 8);
    if (!s) s = HISPI_BE(ctx, buf_alloc, (size_t)nnz * 4 + 4, &buf[1]);
    if (!s && nnz) s = HISPI_BE(ctx, buf_copy, buf[1], D->ext.colind, (size_t)nnz * 4);
    if (!s) s = HISPI_BE(ctx, buf_alloc, (size_t)nnz * 4 + 4, &buf[2]);
    if (!s) s = HISPI_BE(ctx, buf_alloc, sizeof bad, &buf[3]);
    if (!s) s = HISPI_BE(ctx, buf_zero, buf[3], 0, sizeof bad);
    if (!s) s = hispi_amg_kernel(ctx, HISP_F64, "amg_narrow", &k);
    hispi_karg a[] = {hispi_ki64(nnz), hispi_kbuf(D->ext.val), hispi_kbuf(buf[2]),
                      hispi_kbuf(buf[3])};
    if (!s) s = hispi_amg_launch(ctx, k, a, 4, nnz);
    if (!s) s = HISPI_BE(ctx, buf_read, buf[3], 0, &bad, sizeof bad);
    if (k) HISPI_BE_VOID(ctx, kern_free, k);
    if (!s && !bad)
        s = hispi_matrix_wrap_owned(ctx, HISP_F32, n, D->host.ncols, nnz, buf[0], buf[1], buf[2],
                                    S);
    if (s || bad)
        for (int i = 0; i < 3; i++)
            if (buf[i]) HISPI_BE_VOID(ctx, buf_free, buf[i]);
    if (buf[3]) HISPI_BE_VOID(ctx, buf_free, buf[3]);
    if (D != A) hisp_matrix_destroy(&D);
    *ok = !bad;
    return s;
}

hisp_status hispi_amg_narrow(hisp_matrix A, hisp_matrix *S, bool *ok)
{
    *S = NULL;
    *ok = true;
    return hispi_amg_dev_usable(A->ctx) ? narrow_device(A, S, ok) : narrow_host(A, S, ok);
}

void hispi_amg_single_free(hisp_context ctx, hispi_amg_single *g)
{
    if (hispi_handle_live(ctx, HISPI_H_CONTEXT)) { /* else its backend freed them */
        for (int i = 0; i < 3; i++)
            if (g->k[i]) HISPI_BE_VOID(ctx, kern_free, g->k[i]);
        if (g->e) HISPI_BE_VOID(ctx, buf_free, g->e);
    }
    memset(g, 0, sizeof *g);
}

hisp_status hispi_amg_single_init(hisp_context ctx, bool fused, hispi_amg_single *g)
{
    memset(g, 0, sizeof *g);
    if (!fused) return HISP_SUCCESS;
    static const char *const kn[3] = {"amg_bmax", "amg_bnarrow", "amg_xwiden"};
    for (int i = 0; i < 3; i++)
        HISPI_TRY(hispi_amg_kernel(ctx, HISP_F64, kn[i], &g->k[i]));
    return HISPI_BE(ctx, buf_alloc, sizeof(uint32_t), &g->e);
}

/* The host's end of the cycle (no kernels): in, b (f64) scaled by 2^-e
 * into c (f32), e then kept (`same`: the kept e); else c's entries widened
 * into b, scaled by 2^e. */
static hisp_status host_end(hisp_context ctx, hispi_amg_single *g, hisp_vector b, hisp_vector c,
                            bool in, bool same)
{
    int64_t n = 0;
    HISPI_TRY(hisp_vector_size(b, &n));
    double *u = NULL;
    float *f = NULL;
    hisp_status s = hispi_alloc(ctx, (size_t)n + 1, sizeof *u, (void **)&u);
    if (!s) s = hispi_alloc(ctx, (size_t)n + 1, sizeof *f, (void **)&f);
    if (!s) s = in ? hisp_vector_read(b, u) : hisp_vector_read(c, f);
    if (!s && in && !same) {
        int e = INT_MIN;
        for (int64_t i = 0; i < n; i++)
            if (u[i] != 0 && ilogb(u[i]) > e) e = ilogb(u[i]);
        g->shift = e == INT_MIN ? 0 : e;
    }
    if (!s && in) {
        for (int64_t i = 0; i < n; i++)
            f[i] = (float)ldexp(u[i], -g->shift);
        s = hisp_vector_write(c, f);
    } else if (!s) {
        for (int64_t i = 0; i < n; i++)
            u[i] = ldexp((double)f[i], g->shift);
        s = hisp_vector_write(b, u);
    }
    free(u), free(f);
    return s;
}

static hisp_status single_in(hisp_context ctx, hispi_amg_single *g, hisp_vector b, hisp_vector c,
                             bool same)
{
    if (!g->k[0]) return host_end(ctx, g, b, c, true, same);
    int64_t n = 0;
    hisp_status s = hisp_vector_size(b, &n);
    void *bb = hispi_amg_vbuf(b, false, &s), *cb = hispi_amg_vbuf(c, true, &s);
    if (!s && !same) s = HISPI_BE(ctx, buf_zero, g->e, 0, sizeof(uint32_t));
    hispi_karg a[] = {hispi_ki64(n), hispi_kbuf(bb), hispi_kbuf(cb), hispi_kbuf(g->e)};
    hispi_karg m[] = {a[0], a[1], a[3]};
    if (!s && !same) s = hispi_amg_launch(ctx, g->k[0], m, 3, n);
    return s ? s : hispi_amg_launch(ctx, g->k[1], a, 4, n);
}

hisp_status hispi_amg_single_in(hisp_context ctx, hispi_amg_single *g, hisp_vector b, hisp_vector c)
{
    return single_in(ctx, g, b, c, false);
}

hisp_status hispi_amg_single_in_same(hisp_context ctx, hispi_amg_single *g, hisp_vector b,
                                     hisp_vector c)
{
    return single_in(ctx, g, b, c, true);
}

hisp_status hispi_amg_single_out(hisp_context ctx, hispi_amg_single *g, hisp_vector c,
                                 hisp_vector x)
{
    if (!g->k[2]) return host_end(ctx, g, x, c, false, false);
    int64_t n = 0;
    hisp_status s = hisp_vector_size(x, &n);
    void *cb = hispi_amg_vbuf(c, false, &s), *xb = hispi_amg_vbuf(x, true, &s);
    hispi_karg a[] = {hispi_ki64(n), hispi_kbuf(cb), hispi_kbuf(xb), hispi_kbuf(g->e)};
    return s ? s : hispi_amg_launch(ctx, g->k[2], a, 4, n);
}

hisp_status hispi_amg_single_shift(hisp_context ctx, hispi_amg_single *g, int *e)
{
    *e = g->shift;
    if (!g->k[0]) return HISP_SUCCESS;
    uint32_t v = 0;
    HISPI_TRY(HISPI_BE(ctx, buf_read, g->e, 0, &v, sizeof v));
    *e = v ? (int)v - 2048 : 0;
    return HISP_SUCCESS;
}
