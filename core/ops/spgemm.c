/* SpGEMM, the operation (above the formats): C = op(A)*op(B) and the
 * Galerkin product P^T*A*P, their argument checks, the calls' stats, and
 * the product of two operand views: on a GPU through the run-time kernels
 * (spgemm_dev.c: a real C may stay on the device, an operand living there
 * is read in place), else the host phases (spgemm_ref.c: symbolic phase,
 * C's arrays allocated once, fill). C is a new CSR matrix of A's context
 * (converted to HiSparse when A is). The plan's numeric re-computation
 * (spgemm_plan.c) runs where the product does. */
#include "spgemm.h"

#include <stdlib.h>
#include <string.h>

static bool product_type(hisp_type t)
{
    return t == HISP_F32 || t == HISP_F64 || t == HISP_C32 || t == HISP_C64;
}

static int64_t op_rows(hisp_op op, hisp_matrix X)
{
    return op == HISP_OP_N ? X->host.nrows : X->host.ncols;
}

static int64_t op_cols(hisp_op op, hisp_matrix X)
{
    return op == HISP_OP_N ? X->host.ncols : X->host.nrows;
}

static const char *op_name(hisp_op op)
{
    return op == HISP_OP_N ? "" : op == HISP_OP_T ? "^T" : "^H";
}

hisp_status hispi_spgemm_check(hisp_context ctx, const char *what, hisp_op op_a, hisp_matrix A,
                               hisp_op op_b, hisp_matrix B)
{
    if (!hispi_mat_ok(B) || B->ctx != ctx)
        return hispi_fail(ctx, HISP_ERR_INVALID_HANDLE, "%s: B is invalid or of another context",
                          what);
    if ((unsigned)op_a > HISP_OP_H || (unsigned)op_b > HISP_OP_H)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "%s: unknown op (%d, %d)", what,
                          (int)op_a, (int)op_b);
    hisp_type t = A->host.type;
    if (B->host.type != t)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "%s: entry types differ: A %s, B %s",
                          what, hisp_type_name(t), hisp_type_name(B->host.type));
    if (!product_type(t))
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                          "%s: %s entries are not supported (f32, f64, c32, c64)", what,
                          hisp_type_name(t));
    if (op_cols(op_a, A) != op_rows(op_b, B))
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "%s: dimension mismatch: A%s is %lld x %lld, B%s is %lld x %lld", what,
                          op_name(op_a), (long long)op_rows(op_a, A), (long long)op_cols(op_a, A),
                          op_name(op_b), (long long)op_rows(op_b, B), (long long)op_cols(op_b, B));
    return HISP_SUCCESS;
}

void hispi_spgemm_stats_reset(hisp_context ctx)
{
    memset(&ctx->spgemm, 0, sizeof ctx->spgemm);
    ctx->spgemm_live = 0;
}

hisp_status hisp_context_spgemm_stats(hisp_context ctx, hisp_spgemm_stats *st)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!st) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "stats is NULL");
    *st = ctx->spgemm;
    return HISP_SUCCESS;
}

hisp_status hispi_spgemm_prefix(hisp_context ctx, int64_t *p, int64_t m)
{
    p[0] = 0;
    for (int64_t i = 0; i < m; i++) {
        if (p[i + 1] > INT64_MAX - p[i])
            return hispi_fail(ctx, HISP_ERR_OUT_OF_HOST_MEMORY,
                              "SpGEMM: C would hold more than 2^63 - 1 entries (%lld in its "
                              "first %lld rows, then %lld more)",
                              (long long)p[i], (long long)i, (long long)p[i + 1]);
        p[i + 1] += p[i];
    }
    return HISP_SUCCESS;
}

hisp_status hispi_spgemm_alloc_out(hisp_context ctx, const hispi_spgemm_args *g,
                                   hispi_spgemm_out *o)
{
    int64_t m = g->a.nrows, nnz = o->rowptr[m];
    size_t esz = hisp_type_size(g->type);
    hisp_status s = hispi_alloc(ctx, (size_t)nnz, sizeof *o->colind, (void **)&o->colind);
    if (!s) s = hispi_alloc(ctx, (size_t)nnz, esz, &o->val);
    if (!s) {
        hispi_huge_pages(o->colind, (size_t)nnz * sizeof *o->colind);
        hispi_huge_pages(o->val, (size_t)nnz * esz);
    }
    if (s && nnz > 0)
        s = hispi_fail(ctx, s,
                       "SpGEMM: C (%lld x %lld, %lld entries) needs %.0f bytes of host memory",
                       (long long)m, (long long)g->b.ncols, (long long)nnz,
                       (double)nnz * (double)(sizeof *o->colind + esz) + 8.0 * (double)(m + 1));
    return s;
}

void hispi_spgemm_take(const hispi_spgemm_args *g, hispi_spgemm_out *o, hispi_sparse *C)
{
    int64_t m = g->a.nrows;
    C->format = HISP_FORMAT_CSR;
    C->type = g->type;
    C->nrows = m;
    C->ncols = g->b.ncols;
    C->nnz = o->rowptr[m];
    C->rowptr = o->rowptr;
    C->colind = o->colind;
    C->val = o->val;
}

hisp_status hispi_spgemm_product(hisp_context ctx, const hispi_spgemm_args *g, hispi_sparse *C)
{
    if (hispi_spgemm_dev_usable(ctx)) return hispi_spgemm_dev_product(ctx, g, C);
    memset(C, 0, sizeof *C);
    int64_t m = g->a.nrows;
    hispi_spgemm_out o = {0};
    HISPI_TRY(hispi_calloc(ctx, (size_t)m + 1, sizeof *o.rowptr, (void **)&o.rowptr));
    hisp_status s = hispi_spgemm_host(ctx, g, &o);
    if (s) {
        free(o.rowptr), free(o.colind), free(o.val);
        return s;
    }
    hispi_spgemm_take(g, &o, C);
    return HISP_SUCCESS;
}

/* X's view for a product: in place on the device where it lives there
 * only and the product runs there (dev), else its host arrays. */
static hisp_status open_for(bool dev, hisp_matrix X, hisp_op op, hispi_spgemm_src *s)
{
    return dev ? hispi_spgemm_open_dev(X, op, s) : hispi_spgemm_open(X, op, s);
}

/* g's product as a new matrix *C: on the device (dev; a real C may stay
 * there) or on the host. */
static hisp_status product_matrix(hisp_context ctx, bool dev, const hispi_spgemm_args *g,
                                  hisp_matrix *C)
{
    if (ctx->opt.spgemm) return hispi_spgemm_dev_vendor(ctx, g, C); /* vendor_ok said yes */
    if (dev) return hispi_spgemm_dev_matrix(ctx, g, C);
    hispi_sparse out;
    HISPI_TRY(hispi_spgemm_product(ctx, g, &out));
    return hispi_matrix_wrap(ctx, &out, C); /* frees out on failure */
}

/* *C (a new CSR) converted to HiSparse when X is HiSparse, with X's node
 * size for conversions; on failure *C is destroyed. */
static hisp_status as_format_of(hisp_matrix X, hisp_matrix *C)
{
    if (X->host.format != HISP_FORMAT_HISPARSE) return HISP_SUCCESS;
    (*C)->node_size = X->node_size;
    hisp_status s = hisp_matrix_convert(*C, HISP_FORMAT_HISPARSE);
    if (s) hisp_matrix_destroy(C);
    return s;
}

/* The spgemm option's vendor kernels, where it asks for them: on a backend
 * that has them, for real entries. */
static hisp_status vendor_ok(hisp_context ctx, const char *what, hisp_type t)
{
    if (!ctx->opt.spgemm) return HISP_SUCCESS;
    if (!HISPI_BE_HAS(ctx, vendor_spgemm))
        return hispi_fail(
            ctx, HISP_ERR_UNSUPPORTED,
            "%s: the option spgemm=cusparse needs the CUDA backend (this context: %s)", what,
            ctx->ops->name);
    if (t != HISP_F32 && t != HISP_F64)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                          "%s: the option spgemm=cusparse takes f32 or f64 entries, not %s", what,
                          hisp_type_name(t));
    return HISP_SUCCESS;
}

/* op(A) and op(B)'s views, their product into a new matrix *C. */
static hisp_status multiply(hisp_op op_a, hisp_matrix A, hisp_op op_b, hisp_matrix B,
                            hisp_matrix *C)
{
    hisp_context ctx = A->ctx;
    static const char what[] = "hisp_matrix_multiply";
    if (!C) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "%s: C is NULL", what);
    *C = NULL;
    hispi_spgemm_stats_reset(ctx);
    HISPI_TRY(hispi_spgemm_check(ctx, what, op_a, A, op_b, B));
    HISPI_TRY(vendor_ok(ctx, what, A->host.type));
    bool dev = hispi_spgemm_dev_usable(ctx);
    hispi_spgemm_src sa, sb;
    HISPI_TRY(open_for(dev, A, op_a, &sa));
    hisp_status s = open_for(dev, B, op_b, &sb);
    if (!s) {
        hispi_spgemm_args g = {A->host.type, sa.v, sb.v};
        s = product_matrix(ctx, dev, &g, C);
        hispi_spgemm_close(&sb);
    }
    hispi_spgemm_close(&sa);
    return s ? s : as_format_of(A, C);
}

hisp_status hisp_matrix_multiply(hisp_op op_a, hisp_matrix A, hisp_op op_b, hisp_matrix B,
                                 hisp_matrix *C)
{
    if (!hispi_mat_ok(A)) return HISP_ERR_INVALID_HANDLE;
    HISPI_CLAIMED(A->ctx, multiply(op_a, A, op_b, B, C));
}

bool hispi_spgemm_refill_ok(hisp_matrix A, hisp_matrix B, hisp_matrix C)
{
    hisp_type t = C->host.type;
    return hispi_spgemm_dev_usable(C->ctx) && A->ctx == C->ctx && B->ctx == C->ctx &&
           (t == HISP_F32 || t == HISP_F64) && A->host.type == t && B->host.type == t &&
           hispi_spgemm_dev_csr(A) && hispi_spgemm_dev_csr(B) && hispi_spgemm_dev_csr(C) &&
           A->host.nrows == C->host.nrows && A->host.ncols == B->host.nrows &&
           B->host.ncols == C->host.ncols;
}

hisp_status hispi_spgemm_refill(hisp_matrix A, hisp_matrix B, hisp_matrix C)
{
    hisp_context ctx = C->ctx;
    hispi_spgemm_stats_reset(ctx);
    if (!hispi_spgemm_refill_ok(A, B, C))
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "SpGEMM refill: A, B and C must be real matrices of one type on the "
                          "device with a product's sizes");
    hispi_spgemm_args g = {C->host.type, {0}, {0}};
    hispi_spgemm_dev_view(A, &g.a);
    hispi_spgemm_dev_view(B, &g.b);
    return hispi_spgemm_dev_refill(ctx, &g, C);
}

/* C = R*(A*P), R = P^T made on the device where P lives there (the device
 * transpose), else from P's source by a counting sort on the host (P read
 * as the CSC of P^T); AP a private matrix (on the device where the product
 * runs there). AP and R on the device are scratch: a CUDA device's pool,
 * not cudaMalloc and cudaFree (which waits for the device). */
static hisp_status ptap(hisp_matrix P, hisp_matrix A, hisp_matrix *C)
{
    hisp_context ctx = P->ctx;
    static const char what[] = "hisp_matrix_ptap";
    if (!C) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "%s: C is NULL", what);
    *C = NULL;
    hispi_spgemm_stats_reset(ctx);
    if (!hispi_mat_ok(A) || A->ctx != ctx)
        return hispi_fail(ctx, HISP_ERR_INVALID_HANDLE, "%s: A is invalid or of another context",
                          what);
    if (A->host.nrows != A->host.ncols || A->host.nrows != P->host.nrows)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "%s: A must be square with P's rows: A is %lld x %lld, P %lld x %lld",
                          what, (long long)A->host.nrows, (long long)A->host.ncols,
                          (long long)P->host.nrows, (long long)P->host.ncols);
    HISPI_TRY(hispi_spgemm_check(ctx, what, HISP_OP_N, A, HISP_OP_N, P));
    hisp_type t = A->host.type;
    HISPI_TRY(vendor_ok(ctx, what, t));
    bool dev = hispi_spgemm_dev_usable(ctx);
    hispi_spgemm_src sa, sp, sap;
    hisp_matrix AP = NULL; /* on the device where the product runs there */
    bool on_dev = dev && hispi_spgemm_dev_resident(P, HISP_OP_N);
    hisp_matrix R = NULL;
    HISPI_TRY(open_for(dev, A, HISP_OP_N, &sa));
    hisp_status s = open_for(on_dev, P, HISP_OP_N, &sp);
    if (!s) {
        hispi_spgemm_args g = {t, sa.v, sp.v};
        s = product_matrix(ctx, dev, &g, &AP);
    }
    hispi_spgemm_close(&sa);
    if (on_dev) {
        hispi_spgemm_close(&sp);
        if (!s) s = hispi_spgemm_dev_transpose(P, true, &R);
        if (!s) s = open_for(true, R, HISP_OP_N, &sp);
    } else if (!s) {
        s = hispi_spgemm_orient(ctx, &sp, t, HISP_OP_T);
    }
    if (!s) s = open_for(dev, AP, HISP_OP_N, &sap);
    if (!s) {
        hispi_spgemm_args g = {t, sp.v, sap.v};
        s = product_matrix(ctx, dev, &g, C);
        hispi_spgemm_close(&sap);
    }
    hispi_spgemm_close(&sp);
    hisp_matrix_destroy(&AP);
    hisp_matrix_destroy(&R);
    return s ? s : as_format_of(A, C);
}

hisp_status hisp_matrix_ptap(hisp_matrix P, hisp_matrix A, hisp_matrix *C)
{
    if (!hispi_mat_ok(P)) return HISP_ERR_INVALID_HANDLE;
    HISPI_CLAIMED(P->ctx, ptap(P, A, C));
}
