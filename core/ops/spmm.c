/* SpMM, Y = alpha*op(A)*X + beta*Y over k columns (hisp.h "many vectors at
 * once"): the argument checks, k = 1 as hisp_spmv, real CSR-family matrices
 * through their format's kernel (core/format/format.h spmm), and the rest
 * (SELL, HiSparse, complex entries on a device) column by column through
 * hisp_spmv, column-major only: each column copied into a work vector and
 * the product's column copied back. */
#include "format/format.h"

#include <stdio.h>

static int64_t cols(hisp_vector v)
{
    return v->cols ? v->cols : 1;
}

static hisp_status check(hisp_context ctx, hisp_op op, const void *alpha, hisp_matrix A,
                         hisp_vector X, const void *beta, hisp_vector Y, double *a, double *b)
{
    static const char f[] = "hisp_spmm";
    if (!hispi_mat_ok(A) || !hispi_vec_ok(X) || !hispi_vec_ok(Y))
        return hispi_fail(ctx, HISP_ERR_INVALID_HANDLE, "%s: invalid matrix or vector handle", f);
    if (A->ctx != ctx || X->ctx != ctx || Y->ctx != ctx)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "%s: the matrix and X, Y must belong to this context", f);
    if (op != HISP_OP_N && op != HISP_OP_T && op != HISP_OP_H)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "%s: unknown op %d", f, (int)op);
    hisp_type t = A->host.type;
    if (X->type != t || Y->type != t)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "%s: entry types differ: A %s, X %s, Y %s", f, hisp_type_name(t),
                          hisp_type_name(X->type), hisp_type_name(Y->type));
    int64_t k = cols(X);
    if (cols(Y) != k)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "%s: X has %lld columns, Y %lld", f,
                          (long long)k, (long long)cols(Y));
    int64_t m = op == HISP_OP_N ? A->host.nrows : A->host.ncols;
    int64_t n = op == HISP_OP_N ? A->host.ncols : A->host.nrows;
    if (X->n / k != n || Y->n / k != m)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "%s: op(A) is %lld x %lld, X has %lld rows, Y %lld", f, (long long)m,
                          (long long)n, (long long)(X->n / k), (long long)(Y->n / k));
    if (X == Y || (X->dev && X->dev == Y->dev))
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "%s: X and Y must differ", f);
    if (!alpha || !beta)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", f,
                          alpha ? "beta" : "alpha");
    *a = hispi_load_real(t, alpha, 0);
    *b = hispi_load_real(t, beta, 0);
    return HISP_SUCCESS;
}

/* a format or type without an SpMM kernel: k products of one column each */
static hisp_status by_columns(hisp_context ctx, hisp_op op, const void *alpha, hisp_matrix A,
                              hisp_vector X, const void *beta, hisp_vector Y, double b,
                              const char *what)
{
    hisp_vector tx = NULL, ty = NULL;
    hispi_columns cx = {0}, cy = {0};
    hisp_status s = hispi_columns_open(X, true, what, &cx);
    if (!s) s = hispi_columns_open(Y, b != 0, what, &cy);
    if (!s) s = hisp_vector_create(ctx, X->type, cx.n, &tx);
    if (!s) s = hisp_vector_create(ctx, Y->type, cy.n, &ty);
    for (int64_t j = 0; !s && j < cx.k; j++) {
        s = hispi_columns_get(&cx, j, tx);
        if (!s && b != 0) s = hispi_columns_get(&cy, j, ty);
        if (!s) s = hisp_spmv(ctx, op, alpha, A, tx, beta, ty);
        if (!s) s = hispi_columns_put(&cy, j, ty);
    }
    hispi_columns_close(&cx);
    hispi_columns_close(&cy);
    hisp_vector_destroy(&tx);
    hisp_vector_destroy(&ty);
    return s;
}

static hisp_status spmm(hisp_context ctx, hisp_op op, const void *alpha, hisp_matrix A,
                        hisp_vector X, const void *beta, hisp_vector Y)
{
    double a = 0, b = 0;
    HISPI_TRY(check(ctx, op, alpha, A, X, beta, Y, &a, &b));
    if (cols(X) == 1) return hisp_spmv(ctx, op, alpha, A, X, beta, Y);
    hisp_type t = A->host.type;
    bool real = t == HISP_F32 || t == HISP_F64;
    if (real && op == HISP_OP_H) op = HISP_OP_T;
    if (!real && t != HISP_C32 && t != HISP_C64)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                          "hisp_spmm: %s entries (f32, f64, c32 and c64 have it)",
                          hisp_type_name(t));
    const hispi_format_ops *f = hispi_format_of(A);
    bool kernel = hispi_sparse_family(A->host.format) && !A->hs && !A->fdata && f && f->spmm &&
                  (real || ctx->kind == HISP_BACKEND_REFERENCE);
    if (kernel) return f->spmm(ctx, op, a, A, X, b, Y);
    char what[80];
    snprintf(what, sizeof what, "hisp_spmm on a %s matrix of %s entries", f ? f->name : "?",
             hisp_type_name(t));
    return by_columns(ctx, op, alpha, A, X, beta, Y, b, what);
}

hisp_status hisp_spmm(hisp_context ctx, hisp_op op, const void *alpha, hisp_matrix A, hisp_vector X,
                      const void *beta, hisp_vector Y)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    HISPI_CLAIMED(ctx, spmm(ctx, op, alpha, A, X, beta, Y));
}
