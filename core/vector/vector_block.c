/* Products with a basis of vectors (GMRES's Gram-Schmidt): the dots of q
 * columns with one or two vectors in one pass, and the update of one or two
 * vectors by combinations of the columns in one pass. A basis whose columns
 * are views of one buffer at a fixed stride (hispi_ks's vblock: every
 * column of a Krylov basis in one allocation) runs as one kernel (two for
 * the dots: per-tile partials, then their sums); anything else as the
 * equivalent hisp_vector_dot / hisp_vector_axpby calls, which are also the
 * host path and the reference the kernels are tested against. */
#include "vector_ops.h"

#include <stdlib.h>

static hisp_status check_all(const char *op, int q, const hisp_vector *Q, int nv,
                             const hisp_vector *v, hisp_context *ctx)
{
    hisp_vector first = q > 0 ? Q[0] : v[0];
    if (!hispi_vec_ok(first)) return HISP_ERR_INVALID_HANDLE;
    *ctx = first->ctx;
    for (int i = 0; i < q + nv; i++) {
        hisp_vector x = i < q ? Q[i] : v[i - q];
        if (!hispi_vec_ok(x))
            return hispi_fail(*ctx, HISP_ERR_INVALID_HANDLE, "%s: operand %d is not a live vector",
                              op, i);
        if (x->ctx != first->ctx || x->type != first->type || x->n != first->n)
            return hispi_fail(*ctx, HISP_ERR_INVALID_ARGUMENT,
                              "%s: operand %d differs from the first in context, type or length",
                              op, i);
    }
    return HISP_SUCCESS;
}

/* Q as one buffer at a fixed stride, where it is (the kernels' case):
 * parts of one vector (hispi_vector_part), or views of one buffer. */
static bool as_block(int q, const hisp_vector *Q, vblock *b)
{
    hisp_vector q0 = Q[0];
    hisp_context ctx = q0->ctx;
    if (!hispi_vec_on_device(ctx)) return false;
    *b = (vblock){ctx, q0->type, q0->n, q0->dev, q0->off, q0->n, q};
    if (q == 1) return hispi_vector_device(q0, true, &b->buf) == HISP_SUCCESS;
    bool parts = q0->base != NULL;
    void *buf = parts ? q0->base : q0->dev;
    int64_t o0 = parts ? q0->base_off : q0->off, o1 = parts ? Q[1]->base_off : Q[1]->off;
    if (!q0->wrapped || !buf || o1 - o0 < q0->n) return false;
    for (int i = 0; i < q; i++) {
        hisp_vector c = Q[i];
        if (!c->wrapped || !c->dev_valid || (parts ? c->base : c->dev) != buf ||
            (parts ? c->base_off : c->off) != o0 + i * (o1 - o0))
            return false;
    }
    *b = (vblock){ctx, q0->type, q0->n, buf, o0, o1 - o0, q};
    return true;
}

/* The host copies of Q's columns (read). */
static hisp_status host_cols(int q, const hisp_vector *Q, const void ***out)
{
    HISPI_TRY(hispi_calloc(Q[0]->ctx, (size_t)q + 1, sizeof **out, (void **)out));
    for (int c = 0; c < q; c++) {
        void *h = NULL;
        hisp_status st = hispi_vector_host(Q[c], &h);
        if (st) {
            free(*out);
            return st;
        }
        (*out)[c] = h;
    }
    return HISP_SUCCESS;
}

/* The host path: one pass over the rows (the reference loops). */
static hisp_status mdot_host(int q, const hisp_vector *Q, int nr, const hisp_vector *R,
                             hisp_vector out, int64_t oi)
{
    const void **qh = NULL, *rh[2] = {0};
    void *oh = NULL;
    double *acc = NULL;
    for (int k = 0; k < nr; k++) {
        void *h = NULL;
        HISPI_TRY(hispi_vector_host(R[k], &h));
        rh[k] = h;
    }
    HISPI_TRY(hispi_vector_host(out, &oh));
    HISPI_TRY(hispi_calloc(out->ctx, 4 * (size_t)q * (size_t)nr, sizeof *acc, (void **)&acc));
    hisp_status st = host_cols(q, Q, &qh);
    if (!st) {
        hispi_vref_mdot(out->type, R[0]->n, q, qh, nr, rh, acc,
                        (char *)oh + (size_t)oi * hisp_type_size(out->type));
        st = hispi_vector_host_written(out);
    }
    free(qh);
    free(acc);
    return st;
}

static hisp_status mdot(int q, const hisp_vector *Q, int nr, const hisp_vector *R, hisp_vector out,
                        int64_t oi)
{
    vblock b;
    if (q > 0 && as_block(q, Q, &b)) return hispi_vec_mdot_dev(&b, nr, R, out, oi);
    if (q > 0 && !hispi_vec_on_device(out->ctx)) return mdot_host(q, Q, nr, R, out, oi);
    for (int k = 0; k < nr; k++)
        for (int c = 0; c < q; c++)
            HISPI_TRY(hisp_vector_dot(Q[c], R[k], hisp_result_entry(out, oi + (int64_t)k * q + c)));
    return HISP_SUCCESS;
}

hisp_status hispi_vector_mdot(int q, const hisp_vector *Q, int nr, const hisp_vector *R,
                              hisp_vector out, int64_t oi)
{
    const char *op = "hispi_vector_mdot";
    if (q < 0 || nr < 1 || nr > 2 || (q > 0 && !Q) || !R) return HISP_ERR_INVALID_ARGUMENT;
    hisp_context ctx = NULL;
    HISPI_TRY(check_all(op, q, Q, nr, R, &ctx));
    if (!hispi_vec_ok(out) || out->ctx != ctx) return HISP_ERR_INVALID_HANDLE;
    if (out->type != R[0]->type || out->off || oi < 0 || oi + (int64_t)q * nr > out->n)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "%s: %d results from entry %lld do not fit the result vector", op, q * nr,
                          (long long)oi);
    HISPI_CLAIMED(ctx, mdot(q, Q, nr, R, out, oi));
}

/* The update as axpby calls: y1 first (it reads y0 as it was). */
static hisp_status bupdate_calls(int q, const hisp_vector *Q, hisp_vector y0, hisp_vector y1,
                                 const char *coef, size_t es)
{
    static const double one[4] = {1, 0, 0, 0};
    static const float onef[4] = {1, 0, 0, 0};
    const void *u = hispi_type_scalar_size(y0->type) == 8 ? (const void *)one : (const void *)onef;
    hisp_scalar s1 = hisp_scalar_host(u);
#define COEF(i) hisp_scalar_host(coef + (size_t)(i)*es)
    if (y1) {
        HISPI_TRY(hisp_vector_axpby(COEF(2 * q + 1), y0, COEF(2 * q + 2), y1));
        for (int c = 0; c < q; c++)
            HISPI_TRY(hisp_vector_axpby(COEF(q + 1 + c), Q[c], s1, y1));
    }
    if (q == 0) {
        if (hispi_vref_is_zero(y0->type, coef)) return hisp_vector_fill(y0, COEF(0));
        return hisp_vector_scale(y0, COEF(0));
    }
    HISPI_TRY(hisp_vector_axpby(COEF(0), Q[0], COEF(q), y0));
    for (int c = 1; c < q; c++)
        HISPI_TRY(hisp_vector_axpby(COEF(c), Q[c], s1, y0));
#undef COEF
    return HISP_SUCCESS;
}

/* The host path: an entry at a time over every column (the reference loop;
 * a vector whose old values are not used is not brought up to date). */
static hisp_status bupdate_host(int q, const hisp_vector *Q, hisp_vector y0, hisp_vector y1,
                                const char *coef)
{
    hisp_type t = y0->type;
    size_t es = hisp_type_size(t);
    bool z0 = hispi_vref_is_zero(t, coef + (size_t)q * es),
         zb0 = hispi_vref_is_zero(t, coef + (2 * (size_t)q + 1) * es),
         zb1 = hispi_vref_is_zero(t, coef + (2 * (size_t)q + 2) * es);
    void *h0 = NULL, *h1 = NULL;
    const void **qh = NULL;
    if (!z0 || (y1 && !zb0))
        HISPI_TRY(hispi_vector_host(y0, &h0));
    else
        HISPI_TRY(hispi_vector_host_out(y0, &h0));
    if (y1 && !zb1) HISPI_TRY(hispi_vector_host(y1, &h1));
    if (y1 && zb1) HISPI_TRY(hispi_vector_host_out(y1, &h1));
    if (q > 0) HISPI_TRY(host_cols(q, Q, &qh));
    hispi_vref_bupdate(t, y0->n, q, qh, h0, h1, coef);
    free(qh);
    HISPI_TRY(hispi_vector_host_written(y0));
    return y1 ? hispi_vector_host_written(y1) : HISP_SUCCESS;
}

static hisp_status bupdate(int q, const hisp_vector *Q, hisp_vector y0, hisp_vector y1,
                           const double *coef)
{
    hisp_type t = y0->type;
    int vc = hisp_type_components(t);
    bool dbl = hispi_type_scalar_size(t) == 8;
    size_t es = hisp_type_size(t), ne = 2 * (size_t)q + 3;
    char *c = NULL;
    HISPI_TRY(hispi_calloc(y0->ctx, ne, es, (void **)&c));
    for (size_t i = 0; i < ne; i++)
        for (int k = 0; k < vc; k++) {
            if (dbl)
                ((double *)(c + i * es))[k] = coef[4 * i + (size_t)k];
            else
                ((float *)(c + i * es))[k] = (float)coef[4 * i + (size_t)k];
        }
    vblock b;
    hisp_status st = HISP_SUCCESS;
    if (q > 0 && as_block(q, Q, &b))
        st = hispi_vec_bupdate_dev(&b, y0, y1, c);
    else if (!hispi_vec_on_device(y0->ctx))
        st = bupdate_host(q, Q, y0, y1, c);
    else
        st = bupdate_calls(q, Q, y0, y1, c, es);
    free(c);
    return st;
}

hisp_status hispi_vector_bupdate(int q, const hisp_vector *Q, hisp_vector y0, hisp_vector y1,
                                 const double *coef)
{
    const char *op = "hispi_vector_bupdate";
    if (q < 0 || (q > 0 && !Q) || !y0 || !coef) return HISP_ERR_INVALID_ARGUMENT;
    hisp_vector y[2] = {y0, y1};
    hisp_context ctx = NULL;
    HISPI_TRY(check_all(op, q, Q, y1 ? 2 : 1, y, &ctx));
    for (int i = 0; i < q; i++)
        if (Q[i] == y0 || Q[i] == y1)
            return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "%s: y0 and y1 are not columns", op);
    if (y0 == y1) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "%s: y0 is y1", op);
    HISPI_CLAIMED(ctx, bupdate(q, Q, y0, y1, coef));
}
