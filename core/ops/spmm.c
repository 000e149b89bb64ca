/* SpMM, Y = alpha*op(A)*X + beta*Y over k columns (hisp.h "many vectors at
 * once"): the argument checks, k = 1 as hisp_spmv, the rest through A's
 * format (core/format/format.h spmm: the CSR family's backend kernels). */
#include "format/format.h"

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
    if (!real && ctx->kind != HISP_BACKEND_REFERENCE)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                          "hisp_spmm: complex entries run on the reference backend only");
    const hispi_format_ops *f =
        hispi_sparse_family(A->host.format) && !A->hs && !A->fdata ? hispi_format_of(A) : NULL;
    if (!f || !f->spmm)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                          "hisp_spmm: a %s matrix (COO, CSR and CSC have it: convert first)",
                          f                    ? f->name
                          : hispi_format_of(A) ? hispi_format_of(A)->name
                                               : "?");
    return f->spmm(ctx, op, a, A, X, b, Y);
}

hisp_status hisp_spmm(hisp_context ctx, hisp_op op, const void *alpha, hisp_matrix A, hisp_vector X,
                      const void *beta, hisp_vector Y)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    HISPI_CLAIMED(ctx, spmm(ctx, op, alpha, A, X, beta, Y));
}
