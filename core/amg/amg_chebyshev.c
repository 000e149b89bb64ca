/* The Chebyshev polynomial preconditioner (hisp.h HISP_PRECOND_CHEBYSHEV):
 * z = p(D^-1 A) D^-1 x, the AMG smoother's iteration (hispi_cheb_steps)
 * from z = 0 over [hi / HISPI_CHEB_RATIO, hi], hi the Lanczos bound of D^-1 A's
 * largest eigenvalue (hispi_amg_lmax). No setup beyond the diagonal and
 * the bound; each application is degree - 1 products with A and fused
 * vector updates where the backend has run-time kernels. */
#include "hispi_amg.h"

#include <math.h>
#include <stdlib.h>

struct hispi_chebpc {
    hispi_cheb ch;
    double lmax;
};

void hispi_chebpc_destroy(hispi_chebpc **pp)
{
    hispi_chebpc *p = *pp;
    if (!p) return;
    hisp_vector_destroy(&p->ch.diag), hisp_vector_destroy(&p->ch.r);
    hisp_vector_destroy(&p->ch.d), hisp_vector_destroy(&p->ch.t);
    if (hispi_handle_live(p->ch.ctx, HISPI_H_CONTEXT)) {
        if (p->ch.k0) HISPI_BE_VOID(p->ch.ctx, kern_free, p->ch.k0);
        if (p->ch.k1) HISPI_BE_VOID(p->ch.ctx, kern_free, p->ch.k1);
    }
    free(p);
    *pp = NULL;
}

static hisp_status not_positive(hisp_context ctx, int64_t i, double di)
{
    return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                      "Chebyshev: row %lld's diagonal entry is %g, not positive (A must be "
                      "symmetric positive definite)",
                      (long long)i + 1, di);
}

/* A's diagonal (positive: else the error naming the row) as a new vector
 * of its type, and Gershgorin's bound of rho(D^-1 A): on the device where
 * it can (a GPU, CSR), else from the host's CSR form. */
static hisp_status diagonal(hisp_matrix A, hisp_vector *dv, double *rho)
{
    hisp_context ctx = A->ctx;
    hispi_diag_info in;
    *dv = NULL;
    hisp_status s = hispi_amg_dev_diagonal(A, false, dv, &in);
    if (!s && *dv) {
        *rho = in.rho;
        if (in.nonpos < A->host.nrows) {
            double v = 0; /* room for one entry of either type */
            s = hisp_vector_read_range(*dv, in.nonpos, 1, &v);
            if (!s) s = not_positive(ctx, in.nonpos, hispi_load_real(A->host.type, &v, 0));
        }
    }
    if (s || *dv) {
        if (s) hisp_vector_destroy(dv);
        return s;
    }
    hispi_sparse tmp;
    const hispi_sparse *c = NULL;
    HISPI_TRY(hispi_matrix_csr(A, &tmp, &c));
    double *d = NULL;
    s = hispi_alloc(ctx, (size_t)c->nrows + 1, sizeof *d, (void **)&d);
    *rho = 0;
    for (int64_t i = 0; !s && i < c->nrows; i++) {
        double di = 0, off = 0;
        for (int64_t k = c->rowptr[i]; k < c->rowptr[i + 1]; k++)
            if (c->colind[k] == i)
                di += hispi_load_real(c->type, c->val, k);
            else
                off += fabs(hispi_load_real(c->type, c->val, k));
        if (!(di > 0)) s = not_positive(ctx, i, di);
        d[i] = di;
        *rho = fmax(*rho, 1 + off / di);
    }
    if (!s) s = hispi_amg_diag_vector(ctx, c->type, c->nrows, d, dv);
    free(d);
    hispi_sparse_free(&tmp);
    return s;
}

hisp_status hispi_chebpc_create(hisp_matrix A, int degree, hispi_chebpc **out)
{
    hisp_context ctx = A->ctx;
    *out = NULL;
    hisp_matrix_info mi;
    HISPI_TRY(hisp_matrix_get_info(A, &mi));
    if (mi.type != HISP_F32 && mi.type != HISP_F64)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                          "Chebyshev: entries of %s (f32 and f64 are provided)",
                          hisp_type_name(mi.type));
    if (mi.nrows != mi.ncols)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "Chebyshev: A is %lld x %lld, not square",
                          (long long)mi.nrows, (long long)mi.ncols);
    hispi_chebpc *p = NULL;
    HISPI_TRY(hispi_calloc(ctx, 1, sizeof *p, (void **)&p));
    hispi_cheb *ch = &p->ch;
    ch->ctx = ctx, ch->type = mi.type, ch->A = A, ch->degree = degree;
    double rho = 0;
    hisp_status s = diagonal(A, &ch->diag, &rho);
    int64_t n = mi.nrows;
    /* r starts as Lanczos's start vector (overwritten) */
    if (!s) s = hispi_amg_start_vector(ctx, mi.type, n, 1, &ch->r);
    if (!s) s = hisp_vector_create(ctx, mi.type, n, &ch->d);
    if (!s) s = hisp_vector_create(ctx, mi.type, n, &ch->t);
    if (!s) s = hispi_amg_lmax(A, ch->diag, ch->r, rho, &p->lmax, &ch->hi);
    ch->lo = ch->hi / HISPI_CHEB_RATIO;
    if (!s && HISPI_BE_HAS(ctx, kern_get) && HISPI_BE_HAS(ctx, kern_launch)) {
        s = hispi_amg_kernel(ctx, mi.type, "amg_cheb0", &ch->k0);
        if (!s) s = hispi_amg_kernel(ctx, mi.type, "amg_cheb", &ch->k1);
    }
    if (s) {
        hispi_chebpc_destroy(&p);
        return s;
    }
    *out = p;
    return HISP_SUCCESS;
}

hisp_status hispi_chebpc_apply(hispi_chebpc *p, hisp_vector x, hisp_vector z)
{
    return hispi_cheb_steps(&p->ch, x, z, true);
}
