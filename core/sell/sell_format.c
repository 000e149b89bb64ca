/* HISP_FORMAT_SELL's table of operations (core/format/format.h): SELL-C-sigma
 * with C = HISPI_SELL_C and sigma = HISPI_SELL_SIGMA (hispi_sell.h). */
#include "sell/hispi_sell.h"

#include <stdlib.h>
#include <string.h>

static bool sell_holds(hisp_type t)
{
    return t == HISP_F32 || t == HISP_F64;
}

static bool is_sell(hisp_matrix A)
{
    return A->fmt == &hispi_sell_format && A->fdata;
}

/* A's header while it is SELL: sizes and type, no arrays (hisparse_state.c
 * does the same for HiSparse). */
static void sync_info(hisp_matrix A)
{
    const hispi_sell *h = A->fdata;
    memset(&A->host, 0, sizeof A->host);
    A->host.format = HISP_FORMAT_SELL;
    A->host.type = h->type;
    A->host.nrows = h->nrows;
    A->host.ncols = h->ncols;
    A->host.nnz = h->nnz;
    A->host.sorted = true;
}

static hisp_status sell_build(hisp_matrix A, const hispi_sparse *s)
{
    hisp_context ctx = A->ctx;
    if (!s) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "SELL: no storage to build from");
    if (!sell_holds(s->type))
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                          "SELL stores f32 and f64 entries, not %s (compound types use the "
                          "compound layouts, hisp_spmv_variant)",
                          hisp_type_name(s->type));
    hispi_sell *h = NULL;
    HISPI_TRY(hispi_calloc(ctx, 1, sizeof *h, (void **)&h));
    hisp_status st = hispi_sell_build(ctx, s, HISPI_SELL_C, HISPI_SELL_SIGMA, h);
    if (st) {
        free(h);
        return st;
    }
    /* the new form exists: only now is A's old storage let go (s may be
     * A->host itself) */
    hispi_matrix_release_storage(A);
    A->fdata = h;
    A->fmt = &hispi_sell_format;
    sync_info(A);
    return HISP_SUCCESS;
}

static hisp_status sell_to_sparse(hisp_matrix A, hisp_format f, hispi_sparse *out)
{
    hisp_context ctx = A->ctx;
    memset(out, 0, sizeof *out);
    if (!is_sell(A))
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "the matrix is not in SELL format");
    if (f != HISP_FORMAT_COO && f != HISP_FORMAT_CSR && f != HISP_FORMAT_CSC)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "SELL converts to COO, CSR or CSC storage (format %d asked)", (int)f);
    hispi_sparse csr;
    HISPI_TRY(hispi_sell_to_csr(ctx, A->fdata, &csr));
    if (f == HISP_FORMAT_CSR) {
        *out = csr;
        return HISP_SUCCESS;
    }
    hisp_status s = hispi_sparse_convert(ctx, &csr, f, out);
    hispi_sparse_free(&csr);
    return s;
}

static void sell_release(hisp_matrix A)
{
    if (A->fmt != &hispi_sell_format || !A->fdata) return;
    hispi_sell_free(A->fdata);
    free(A->fdata);
    A->fdata = NULL;
}

static void sell_drop_device(hisp_matrix A)
{
    hispi_sell_drop_device(A);
}

/* The length of each row of A (in row order), from whatever A holds. */
static hisp_status row_lengths(hisp_matrix A, int64_t **out)
{
    hisp_context ctx = A->ctx;
    int64_t *len = NULL;
    int64_t m = A->host.nrows;
    if (is_sell(A)) {
        const hispi_sell *h = A->fdata;
        HISPI_TRY(hispi_alloc(ctx, (size_t)m, sizeof *len, (void **)&len));
        for (int64_t r = 0; r < m; r++)
            len[h->perm[r]] = h->len[r];
        *out = len;
        return HISP_SUCCESS;
    }
    hispi_sparse tmp;
    const hispi_sparse *c = NULL;
    memset(&tmp, 0, sizeof tmp);
    HISPI_TRY(hispi_matrix_need_host(A));
    if (hispi_sparse_family(A->host.format))
        c = &A->host;
    else
        HISPI_TRY(hispi_matrix_csr(A, &tmp, &c)); /* another format's own form */
    m = c->nrows;
    hisp_status s = hispi_calloc(ctx, (size_t)m, sizeof *len, (void **)&len);
    if (!s && c->format == HISP_FORMAT_CSR) {
        for (int64_t i = 0; i < m; i++)
            len[i] = c->rowptr[i + 1] - c->rowptr[i];
    } else if (!s && c->format == HISP_FORMAT_CSC) {
        for (int64_t k = 0; k < c->nnz; k++)
            len[c->rowind[k]]++;
    } else if (!s && c->sorted) {
        for (int64_t k = 0; k < c->nnz; k++)
            len[c->rowind[k]]++;
    } else if (!s) { /* unsorted COO may repeat a cell: count what CSR would hold */
        free(len);
        len = NULL;
        hispi_sparse csr;
        s = hispi_sparse_convert(ctx, c, HISP_FORMAT_CSR, &csr);
        if (!s) s = hispi_alloc(ctx, (size_t)m, sizeof *len, (void **)&len);
        for (int64_t i = 0; !s && i < m; i++)
            len[i] = csr.rowptr[i + 1] - csr.rowptr[i];
        hispi_sparse_free(&csr);
    }
    hispi_sparse_free(&tmp);
    if (s) {
        free(len);
        return s;
    }
    *out = len;
    return HISP_SUCCESS;
}

static hisp_status sell_bytes(hisp_matrix A, hisp_type t, uint64_t *bytes)
{
    hisp_context ctx = A->ctx;
    if (!bytes) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "SELL bytes: NULL output");
    if (!sell_holds(t))
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "SELL stores f32 and f64 entries, not %s",
                          hisp_type_name(t));
    int64_t *len = NULL;
    HISPI_TRY(row_lengths(A, &len));
    hisp_status s = hispi_sell_bytes(ctx, A->host.nrows, len, hisp_type_size(t), HISPI_SELL_C,
                                     HISPI_SELL_SIGMA, bytes);
    free(len);
    return s;
}

static hisp_status sell_spmv(hisp_context ctx, hisp_op op, double alpha, hisp_matrix A,
                             hisp_vector x, double beta, hisp_vector y)
{
    /* the dispatcher checked the arguments; these checks cost nothing and
     * keep a direct call safe */
    if (!is_sell(A))
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "the matrix is not in SELL format");
    if (A->ctx != ctx || x->ctx != ctx || y->ctx != ctx)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "matrix and vectors must belong to this context");
    if (op != HISP_OP_N && op != HISP_OP_T && op != HISP_OP_H)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "unknown op %d", (int)op);
    const hispi_sell *h = A->fdata;
    if (x->type != h->type || y->type != h->type)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "entry types differ: A %s, x %s, y %s",
                          hisp_type_name(h->type), hisp_type_name(x->type),
                          hisp_type_name(y->type));
    int64_t m = op == HISP_OP_N ? h->nrows : h->ncols, n = op == HISP_OP_N ? h->ncols : h->nrows;
    if (x->n != n || y->n != m)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "dimension mismatch: op(A) is %lld x %lld, x has %lld, y has %lld",
                          (long long)m, (long long)n, (long long)x->n, (long long)y->n);
    if (x == y) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "x and y must differ");
    return hispi_sell_spmv(ctx, op, alpha, A, x, beta, y);
}

static bool sell_candidate(hisp_type t, hisp_op op)
{
    return sell_holds(t) && (op == HISP_OP_N || op == HISP_OP_T || op == HISP_OP_H);
}

const hispi_format_ops hispi_sell_format = {
    .format = HISP_FORMAT_SELL,
    .name = "sell",
    .holds = sell_holds,
    .build = sell_build,
    .to_sparse = sell_to_sparse,
    .release = sell_release,
    .drop_device = sell_drop_device,
    .bytes = sell_bytes,
    .spmv = sell_spmv,
    .candidate = sell_candidate,
};
