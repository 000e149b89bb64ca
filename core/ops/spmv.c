/* SpMV, the operation (above the formats): argument checks, compound entries
 * to their layouts, every format through its table (core/format/format.h),
 * the timed and fused (SpMV + dot) forms, the copy bandwidth. */
#include "backend/backend.h"
#include "compound/hispi_compound.h"
#include "format/format.h"

#include <stdlib.h>

hispi_spmv_hooks hispi_spmv_hook;

static hisp_status scalar_arg(hisp_context ctx, hisp_type t, const void *p, const char *what,
                              double *out)
{
    if (!p) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "%s is NULL", what);
    *out = hispi_load_real(t, p, 0);
    return HISP_SUCCESS;
}

/* Argument checks shared by every format. */
static hisp_status check_args(hisp_context ctx, hisp_op op, const void *alpha, hisp_matrix A,
                              hisp_vector x, const void *beta, hisp_vector y, double *a, double *b)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!hispi_mat_ok(A) || !hispi_vec_ok(x) || !hispi_vec_ok(y))
        return hispi_fail(ctx, HISP_ERR_INVALID_HANDLE, "invalid matrix or vector handle");
    if (A->ctx != ctx || x->ctx != ctx || y->ctx != ctx)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "matrix and vectors must belong to this context");
    if (op != HISP_OP_N && op != HISP_OP_T && op != HISP_OP_H)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "unknown op %d", (int)op);
    hisp_type t = A->host.type;
    if (x->type != t || y->type != t)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "entry types differ: A %s, x %s, y %s",
                          hisp_type_name(t), hisp_type_name(x->type), hisp_type_name(y->type));
    int64_t m = op == HISP_OP_N ? A->host.nrows : A->host.ncols;
    int64_t n = op == HISP_OP_N ? A->host.ncols : A->host.nrows;
    if (x->n != n || y->n != m)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "dimension mismatch: op(A) is %lld x %lld, x has %lld, y has %lld",
                          (long long)m, (long long)n, (long long)x->n, (long long)y->n);
    if (x == y) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "x and y must differ");
    HISPI_TRY(scalar_arg(ctx, t, alpha, "alpha", a));
    HISPI_TRY(scalar_arg(ctx, t, beta, "beta", b));
    return HISP_SUCCESS;
}

/* A^H of real entries is A^T: the real paths see only N and T. */
static hisp_op real_op(hisp_matrix A, hisp_op op)
{
    if (op != HISP_OP_H || !hispi_mat_ok(A)) return op;
    hisp_type t = A->host.type;
    return t == HISP_F32 || t == HISP_F64 ? HISP_OP_T : op;
}

/* Compound entry types (c, q, b3x3) run the default variant (hisp.h), on
 * A's explicit op(A) for op = T and H: *M gets the matrix to multiply. */
static bool compound_call(hisp_context ctx, hisp_matrix A, hisp_op op, hisp_matrix *M,
                          hisp_status *st)
{
    if (!hispi_ctx_ok(ctx) || !hispi_mat_ok(A) || !hispi_sparse_family(A->host.format))
        return false;
    hisp_type t = A->host.type;
    if (t == HISP_F32 || t == HISP_F64) return false;
    *M = A;
    if (op == HISP_OP_N)
        *st = HISP_SUCCESS;
    else if (op != HISP_OP_T && op != HISP_OP_H)
        *st = hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "unknown op %d", (int)op);
    else if (A->ctx != ctx)
        *st = hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                         "matrix and vectors must belong to this context");
    else
        *st = hispi_compound_op_matrix(A, op, M);
    return true;
}

static const hisp_variant default_variant = {{HISP_OUTER_CSR, HISP_AOS, HISP_AOS}, {0, 0, 0}};

bool hispi_matrix_host_csr(hisp_matrix A)
{
    hisp_type t = A->host.type;
    return A->host.format == HISP_FORMAT_CSR && !A->wrapped && !A->hs && !A->fdata &&
           (t == HISP_F32 || t == HISP_F64 || t == HISP_C32 || t == HISP_C64) &&
           (A->host.rowptr || !A->host.nrows);
}

/* y = a op(A) x + b y by the reference loop on the vectors' host copies
 * (a solve on the host: hisp_context_s.host_ops). */
static hisp_status host_spmv(hisp_context ctx, hisp_op op, double a, hisp_matrix A, hisp_vector x,
                             double b, hisp_vector y)
{
    void *hx, *hy;
    HISPI_TRY(hispi_vector_host(x, &hx));
    HISPI_TRY(b != 0 ? hispi_vector_host(y, &hy) : hispi_vector_host_out(y, &hy));
    HISPI_TRY(hispi_ref_csr_spmv(ctx, &A->host, op, a, hx, b, hy));
    return hispi_vector_host_written(y);
}

/* y = A x, then r = x^T y, rounded once: the reference backend's fused
 * product on the vectors' host copies. */
static hisp_status host_spmv_dot(hisp_context ctx, hisp_matrix A, hisp_vector x, hisp_vector y,
                                 hisp_result r)
{
    void *hx, *hy, *hr = r.host;
    double s;
    HISPI_TRY(hispi_vector_host(x, &hx));
    HISPI_TRY(hispi_vector_host_out(y, &hy));
    HISPI_TRY(hispi_ref_csr_spmv_dot(ctx, &A->host, hx, 0, hy, &s));
    HISPI_TRY(hispi_vector_host_written(y));
    hisp_type t = A->host.type;
    if (hr) {
        hispi_store_real(t, hr, 0, s);
        return HISP_SUCCESS;
    }
    HISPI_TRY(hispi_vector_host(r.vec, &hr));
    hispi_store_real(t, hr, r.index, s);
    return hispi_vector_host_written(r.vec);
}

static hisp_status spmv(hisp_context ctx, hisp_op op, const void *alpha, hisp_matrix A,
                        hisp_vector x, const void *beta, hisp_vector y)
{
    double a = 0, b = 0;
    hisp_status cs;
    hisp_matrix M = NULL;
    if (hispi_ctx_ok(ctx) && ctx->host_ops && hispi_mat_ok(A) && hispi_matrix_host_csr(A)) {
        op = real_op(A, op);
        HISPI_TRY(check_args(ctx, op, alpha, A, x, beta, y, &a, &b));
        return host_spmv(ctx, op, a, A, x, b, y); /* complex too, real alpha and beta */
    }
    if (compound_call(ctx, A, op, &M, &cs))
        return cs ? cs : hisp_spmv_variant(ctx, &default_variant, alpha, M, x, beta, y);
    op = real_op(A, op);
    HISPI_TRY(check_args(ctx, op, alpha, A, x, beta, y, &a, &b));
    return hispi_format_of(A)->spmv(ctx, op, a, A, x, b, y);
}

hisp_status hisp_spmv(hisp_context ctx, hisp_op op, const void *alpha, hisp_matrix A, hisp_vector x,
                      const void *beta, hisp_vector y)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    HISPI_CLAIMED(ctx, spmv(ctx, op, alpha, A, x, beta, y));
}

/* ---- SpMV fused with a dot (hispi.h) --------------------------------------- */

/* The dot's side of hispi_spmv_dot: A square, r a destination for an entry
 * of x's type (the messages of hisp_vector_dot's checks). */
static hisp_status dot_args(hisp_context ctx, hisp_vector x, hisp_vector y, hisp_result r)
{
    static const char op[] = "hisp_spmv_dot";
    if (x->n != y->n)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "%s: A must be square: x has %lld entries, y has %lld", op,
                          (long long)x->n, (long long)y->n);
    if (r.host) {
        if (r.vec)
            return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                              "%s: result r has both a host pointer and a vector", op);
        return HISP_SUCCESS;
    }
    if (!r.vec)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "%s: result r has no destination (NULL host pointer, no vector)", op);
    if (!hispi_vec_ok(r.vec))
        return hispi_fail(ctx, HISP_ERR_INVALID_HANDLE,
                          "%s: result r's vector is not a live vector", op);
    if (r.vec->ctx != ctx)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "%s: result r's vector belongs to another context than x", op);
    if (r.vec->type != x->type)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "%s: result r's vector is %s, %s needs %s", op,
                          hisp_type_name(r.vec->type), op, hisp_type_name(x->type));
    if (r.index < 0 || r.index >= r.vec->n)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "%s: result r's vector index %lld is outside its %lld entries", op,
                          (long long)r.index, (long long)r.vec->n);
    return HISP_SUCCESS;
}

hisp_status hispi_spmv_dot(hisp_context ctx, hisp_matrix A, hisp_vector x, hisp_vector y,
                           hisp_result r)
{
    static const double one = 1, zero = 0;
    static const float onef = 1, zerof = 0;
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    bool mat = hispi_mat_ok(A);
    hisp_type t = mat ? A->host.type : HISP_F64;
    bool real = t == HISP_F32 || t == HISP_F64;
    bool dbl = hispi_type_scalar_size(t) == 8;
    const void *a = dbl ? (const void *)&one : (const void *)&onef;
    const void *b = dbl ? (const void *)&zero : (const void *)&zerof;
    double ad = 0, bd = 0;
    /* everything checked before anything is written; compound entries: their
     * variant checks the product's arguments (hisp_spmv) */
    if (!mat || real) {
        HISPI_TRY(check_args(ctx, HISP_OP_N, a, A, x, b, y, &ad, &bd));
        HISPI_TRY(dot_args(ctx, x, y, r));
    } else if (hispi_vec_ok(x) && hispi_vec_ok(y) && x->ctx == ctx && y->ctx == ctx) {
        HISPI_TRY(dot_args(ctx, x, y, r));
    }
    if (ctx->host_ops && real && hispi_matrix_host_csr(A)) return host_spmv_dot(ctx, A, x, y, r);
    const hispi_format_ops *f = real ? hispi_format_of(A) : NULL;
    if (f && f->spmv_dot) return f->spmv_dot(ctx, A, x, y, r);
    HISPI_TRY(hisp_spmv(ctx, HISP_OP_N, a, A, x, b, y));
    return hisp_vector_dot(x, y, r);
}

hisp_status hisp_spmv_dot(hisp_context ctx, hisp_matrix A, hisp_vector x, hisp_vector y,
                          hisp_result r)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    HISPI_CLAIMED(ctx, hispi_spmv_dot(ctx, A, x, y, r));
}

static hisp_status spmv_timed(hisp_context ctx, hisp_op op, const void *alpha, hisp_matrix A,
                              hisp_vector x, const void *beta, hisp_vector y, int warmup,
                              int repeat, double *ms)
{
    if (warmup < 0 || repeat < 1 || !ms)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "need warmup >= 0, repeat >= 1, ms");
    hisp_status cs;
    hisp_matrix M = NULL;
    if (compound_call(ctx, A, op, &M, &cs))
        return cs ? cs
                  : hisp_spmv_variant_timed(ctx, &default_variant, alpha, M, x, beta, y, warmup,
                                            repeat, ms);
    op = real_op(A, op);
    for (int i = 0; i < (warmup > 0 ? warmup : 1); i++) /* at least one: uploads */
        HISPI_TRY(hisp_spmv(ctx, op, alpha, A, x, beta, y));
    HISPI_TRY(hisp_context_synchronize(ctx));
    double a = 0, b = 0;
    HISPI_TRY(check_args(ctx, op, alpha, A, x, beta, y, &a, &b));
    const hispi_format_ops *f = hispi_format_of(A);
    void *m0 = NULL, *m1 = NULL;
    hisp_status s = HISPI_BE(ctx, mark_create, &m0);
    if (!s) s = HISPI_BE(ctx, mark_create, &m1);
    /* marks around each call: a format that runs a controller (HiSparse;
     * on OpenCL the host's polling between launches) is timed with it */
    for (int i = 0; i < repeat && !s; i++) {
        s = HISPI_BE(ctx, mark_record, m0);
        if (!s) s = f->spmv(ctx, op, a, A, x, b, y);
        if (!s) s = HISPI_BE(ctx, mark_record, m1);
        if (!s) s = HISPI_BE(ctx, mark_elapsed, m0, m1, &ms[i]);
    }
    if (!s && f->settle) s = f->settle(ctx);
    if (m0) HISPI_BE_VOID(ctx, mark_destroy, m0);
    if (m1) HISPI_BE_VOID(ctx, mark_destroy, m1);
    return s;
}

hisp_status hisp_spmv_timed(hisp_context ctx, hisp_op op, const void *alpha, hisp_matrix A,
                            hisp_vector x, const void *beta, hisp_vector y, int warmup, int repeat,
                            double *ms)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    HISPI_CLAIMED(ctx, spmv_timed(ctx, op, alpha, A, x, beta, y, warmup, repeat, ms));
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static hisp_status copy_bandwidth(hisp_context ctx, size_t bytes, int repeat, double *bps)
{
    if (!bps || repeat < 1 || bytes == 0)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "need bytes > 0, repeat >= 1, output");
    void *src = NULL, *dst = NULL, *m0 = NULL, *m1 = NULL;
    double *t = NULL;
    hisp_status s = hispi_alloc(ctx, (size_t)repeat, sizeof *t, (void **)&t);
    if (!s) s = HISPI_BE(ctx, buf_alloc, bytes, &src);
    if (!s) s = HISPI_BE(ctx, buf_alloc, bytes, &dst);
    if (!s) s = HISPI_BE(ctx, mark_create, &m0);
    if (!s) s = HISPI_BE(ctx, mark_create, &m1);
    if (!s) s = HISPI_BE(ctx, buf_copy, dst, src, bytes); /* warm-up */
    for (int i = 0; i < repeat && !s; i++) {
        s = HISPI_BE(ctx, mark_record, m0);
        if (!s) s = HISPI_BE(ctx, buf_copy, dst, src, bytes);
        if (!s) s = HISPI_BE(ctx, mark_record, m1);
        if (!s) s = HISPI_BE(ctx, mark_elapsed, m0, m1, &t[i]);
    }
    if (!s) {
        qsort(t, (size_t)repeat, sizeof *t, cmp_double);
        double med = t[repeat / 2];
        *bps = med > 0 ? 2.0 * (double)bytes / (med * 1e-3) : 0;
    }
    if (m0) HISPI_BE_VOID(ctx, mark_destroy, m0);
    if (m1) HISPI_BE_VOID(ctx, mark_destroy, m1);
    if (src) HISPI_BE_VOID(ctx, buf_free, src);
    if (dst) HISPI_BE_VOID(ctx, buf_free, dst);
    free(t);
    return s;
}

hisp_status hisp_copy_bandwidth(hisp_context ctx, size_t bytes, int repeat, double *bps)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    HISPI_CLAIMED(ctx, copy_bandwidth(ctx, bytes, repeat, bps));
}
