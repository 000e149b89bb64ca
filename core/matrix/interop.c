/* Memory the caller already has: CSR matrices from index arrays of any
 * shape (host, copied) and over the caller's device arrays (read in place),
 * and the residency of wrapped matrices. Wrapped vectors live in
 * core/vector/vector.c, the caller's stream in core/base/context.c. */
#include "backend/backend.h"
#include "hispi.h"

#include <stdlib.h>
#include <string.h>

/* Entry i of an index array of 32 or 64 bits. */
static inline int64_t idx_at(const void *a, int wide, int64_t i)
{
    return wide ? ((const int64_t *)a)[i] : (int64_t)((const int32_t *)a)[i];
}

/* dst = src - base as 64-bit row pointers; checks monotone, dst[0] = 0 and
 * dst[nrows] = nnz. */
static hisp_status convert_ptr(hisp_context ctx, hisp_status bad, const void *src, int wide,
                               int base, int64_t nrows, int64_t nnz, int64_t *dst)
{
    for (int64_t i = 0; i <= nrows; i++) {
        int64_t p = idx_at(src, wide, i) - base;
        if (i == 0 ? p != 0 : p < dst[i - 1] || p > nnz)
            return hispi_fail(ctx, bad,
                              "row pointer %lld is %lld: row pointers must start at the base "
                              "(%d) and be monotone up to nnz + base",
                              (long long)i, (long long)(p + base), base);
        dst[i] = p;
    }
    if (dst[nrows] != nnz)
        return hispi_fail(ctx, bad, "row pointers end at %lld, not at nnz + base = %lld",
                          (long long)(dst[nrows] + base), (long long)(nnz + base));
    return HISP_SUCCESS;
}

/* dst = src - base as 32-bit column indices, each in [0, ncols). */
static hisp_status convert_idx(hisp_context ctx, hisp_status bad, const void *src, int wide,
                               int base, int64_t nnz, int64_t ncols, int32_t *dst)
{
    for (int64_t k = 0; k < nnz; k++) {
        int64_t c = idx_at(src, wide, k) - base;
        if (c < 0 || c >= ncols)
            return hispi_fail(ctx, bad, "column index %lld is %lld, outside [%d, %lld)",
                              (long long)k, (long long)(c + base), base, (long long)(ncols + base));
        dst[k] = (int32_t)c;
    }
    return HISP_SUCCESS;
}

static hisp_status check_shape(hisp_context ctx, int64_t nrows, int64_t ncols, int64_t nnz,
                               hisp_index_type pt, hisp_index_type it, int base)
{
    if (nrows < 0 || ncols < 0 || nnz < 0 || nrows > INT32_MAX || ncols > INT32_MAX)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "invalid size %lld x %lld with %lld entries", (long long)nrows,
                          (long long)ncols, (long long)nnz);
    if ((pt != HISP_INDEX_32 && pt != HISP_INDEX_64) ||
        (it != HISP_INDEX_32 && it != HISP_INDEX_64))
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "unknown index type (%d, %d)", (int)pt,
                          (int)it);
    if (base != 0 && base != 1)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "index base %d (0 or 1)", base);
    if (pt == HISP_INDEX_32 && nnz + base > INT32_MAX)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "%lld entries do not fit 32-bit row pointers", (long long)nnz);
    return HISP_SUCCESS;
}

hisp_status hisp_matrix_import_csr(hisp_context ctx, hisp_type type, int64_t nrows, int64_t ncols,
                                   int64_t nnz, const void *rowptr, const void *colind,
                                   const void *vals, hisp_index_type ptr_type,
                                   hisp_index_type idx_type, int base, hisp_matrix *A)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!A) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "output handle is NULL");
    *A = NULL;
    HISPI_TRY(check_shape(ctx, nrows, ncols, nnz, ptr_type, idx_type, base));
    if (!rowptr || (!colind && nnz > 0))
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "rowptr or colind is NULL");
    hispi_sparse s;
    HISPI_TRY(hispi_sparse_alloc(ctx, &s, HISP_FORMAT_CSR, type, nrows, ncols, nnz));
    hisp_status st =
        convert_ptr(ctx, HISP_ERR_INVALID_ARGUMENT, rowptr, ptr_type, base, nrows, nnz, s.rowptr);
    if (!st)
        st = convert_idx(ctx, HISP_ERR_INVALID_ARGUMENT, colind, idx_type, base, nnz, ncols,
                         s.colind);
    if (!st && vals)
        memcpy(s.val, vals, (size_t)nnz * hisp_type_size(type));
    else if (!st)
        for (int64_t k = 0; k < nnz; k++)
            hispi_store_real(type, s.val, k, 1.0);
    if (st) {
        hispi_sparse_free(&s);
        return st;
    }
    return hispi_matrix_wrap(ctx, &s, A);
}

/* A CSR matrix handle with sizes only: its arrays stay absent until the
 * host needs them (hispi_matrix_need_host). */
static hisp_status absent_csr(hisp_context ctx, hisp_type type, int64_t nrows, int64_t ncols,
                              int64_t nnz, hisp_matrix *A)
{
    hispi_sparse s;
    memset(&s, 0, sizeof s);
    s.format = HISP_FORMAT_CSR;
    s.type = type;
    s.nrows = nrows;
    s.ncols = ncols;
    s.nnz = nnz;
    s.sorted = true;
    return hispi_matrix_wrap(ctx, &s, A);
}

hisp_status hisp_matrix_wrap_csr_device(hisp_context ctx, hisp_type type, int64_t nrows,
                                        int64_t ncols, int64_t nnz, void *rowptr, void *colind,
                                        void *vals, hisp_index_type ptr_type,
                                        hisp_index_type idx_type, int base, hisp_matrix *A)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!A) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "output handle is NULL");
    *A = NULL;
    HISPI_TRY(check_shape(ctx, nrows, ncols, nnz, ptr_type, idx_type, base));
    if (type != HISP_F32 && type != HISP_F64)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "wrapped CSR matrices are f32 or f64, not %s",
                          hisp_type_name(type));
    if (!rowptr || !colind || !vals)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "rowptr, colind or vals is NULL");
    const hisp_backend_ops *o = ctx->ops;
    if (!HISPI_BE_HAS(ctx, buf_check))
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "the %s backend cannot wrap memory", o->name);
    size_t pw = ptr_type == HISP_INDEX_64 ? 8 : 4, iw = idx_type == HISP_INDEX_64 ? 8 : 4;
    HISPI_TRY(HISPI_BE(ctx, buf_check, rowptr, ((size_t)nrows + 1) * pw, "rowptr"));
    HISPI_TRY(HISPI_BE(ctx, buf_check, colind, (size_t)nnz * iw, "colind"));
    HISPI_TRY(HISPI_BE(ctx, buf_check, vals, (size_t)nnz * hisp_type_size(type), "vals"));
    /* a reference of hisp's own to each array where the backend counts them
     * (the caller may release theirs), given back by unwrap or destroy */
    void *arr[3] = {rowptr, colind, vals};
    int held = 0;
    hisp_status st = HISP_SUCCESS;
    if (HISPI_BE_HAS(ctx, buf_retain))
        for (; held < 3; held++)
            if ((st = HISPI_BE(ctx, buf_retain, arr[held]))) break;
    if (!st) st = absent_csr(ctx, type, nrows, ncols, nnz, A);
    if (st) {
        for (int k = 0; k < held; k++)
            HISPI_BE_VOID(ctx, buf_free, arr[k]);
        return st;
    }
    hisp_matrix M = *A;
    M->wrapped = true;
    M->host_absent = true;
    M->ext = (hispi_csr_ext){rowptr,
                             colind,
                             vals,
                             ptr_type == HISP_INDEX_64,
                             idx_type == HISP_INDEX_64,
                             base,
                             HISPI_BE_HAS(ctx, buf_retain),
                             false,
                             false};
    return HISP_SUCCESS;
}

/* M's storage: the device buffers hisp made (int64 pointers, int32
 * columns, zero-based), its own to free (retained: the allocations are
 * hisp's references, given back by buf_free); the host copy absent. */
static void own(hisp_matrix M, void *rowptr, void *colind, void *vals, bool pooled)
{
    M->wrapped = true;
    M->host_absent = true;
    M->ext = (hispi_csr_ext){rowptr, colind, vals, 1, 0, 0, true, pooled, true};
}

hisp_status hispi_matrix_wrap_owned(hisp_context ctx, hisp_type type, int64_t nrows, int64_t ncols,
                                    int64_t nnz, void *rowptr, void *colind, void *vals,
                                    hisp_matrix *A)
{
    HISPI_TRY(absent_csr(ctx, type, nrows, ncols, nnz, A));
    own(*A, rowptr, colind, vals, false);
    return HISP_SUCCESS;
}

hisp_status hispi_matrix_wrap_pooled(hisp_context ctx, hisp_type type, int64_t nrows, int64_t ncols,
                                     int64_t nnz, void *rowptr, void *colind, void *vals,
                                     hisp_matrix *A)
{
    HISPI_TRY(absent_csr(ctx, type, nrows, ncols, nnz, A));
    own(*A, rowptr, colind, vals, true);
    return HISP_SUCCESS;
}

hisp_status hispi_matrix_wrap_view(hisp_context ctx, hisp_type type, int64_t nrows, int64_t ncols,
                                   int64_t nnz, void *rowptr, void *colind, void *vals,
                                   hisp_matrix *A)
{
    HISPI_TRY(absent_csr(ctx, type, nrows, ncols, nnz, A));
    hisp_matrix M = *A;
    M->wrapped = true;
    M->host_absent = true;
    M->ext = (hispi_csr_ext){rowptr, colind, vals, 1, 0, 0, false, false, true};
    return HISP_SUCCESS;
}

void hispi_matrix_adopt_owned(hisp_matrix A, void *rowptr, void *colind, void *vals)
{
    hispi_matrix_drop_device(A);
    hispi_sparse_free(&A->host); /* the sizes stay */
    own(A, rowptr, colind, vals, false);
}

void hispi_matrix_ext_release(hisp_matrix A)
{
    if (!A->wrapped || !A->ext.retained) return;
    void *arr[3] = {A->ext.rowptr, A->ext.colind, A->ext.val};
    for (int k = 0; k < 3; k++)
        if (A->ext.pooled)
            hispi_tmp_free(A->ctx, arr[k]);
        else
            HISPI_BE_VOID(A->ctx, buf_free, arr[k]);
    A->ext.retained = false;
}

hisp_status hispi_matrix_need_host(hisp_matrix A)
{
    if (!A->wrapped || !A->host_absent) return HISP_SUCCESS;
    hisp_context ctx = A->ctx;
    const hispi_csr_ext *e = &A->ext;
    int64_t nr = A->host.nrows, nnz = A->host.nnz;
    size_t pw = e->ptr64 ? 8 : 4, iw = e->idx64 ? 8 : 4;
    size_t pb = ((size_t)nr + 1) * pw, ib = (size_t)nnz * iw;
    hispi_sparse s;
    void *tmp = NULL;
    HISPI_TRY(hispi_sparse_alloc(ctx, &s, HISP_FORMAT_CSR, A->host.type, nr, A->host.ncols, nnz));
    hisp_status st = hispi_alloc(ctx, pb > ib ? pb : ib, 1, &tmp);
    if (!st) st = HISPI_BE(ctx, buf_read, e->rowptr, 0, tmp, pb);
    if (!st)
        st = convert_ptr(ctx, HISP_ERR_INPUT_FORMAT, tmp, e->ptr64, e->base, nr, nnz, s.rowptr);
    if (!st) st = HISPI_BE(ctx, buf_read, e->colind, 0, tmp, ib);
    if (!st)
        st = convert_idx(ctx, HISP_ERR_INPUT_FORMAT, tmp, e->idx64, e->base, nnz, A->host.ncols,
                         s.colind);
    if (!st)
        st = HISPI_BE(ctx, buf_read, e->val, 0, s.val, (size_t)nnz * hisp_type_size(A->host.type));
    free(tmp);
    if (st) {
        hispi_sparse_free(&s);
        return st;
    }
    hispi_sparse_free(&A->host);
    A->host = s;
    A->host_absent = false;
    return HISP_SUCCESS;
}

hisp_status hispi_matrix_wrap_upload(hisp_matrix A)
{
    hisp_context ctx = A->ctx;
    hispi_sparse *h = &A->host;
    if (!HISPI_BE_HAS(ctx, csr_wrap)) { /* the reference backend: hisp's host copy */
        HISPI_TRY(hispi_matrix_need_host(A));
        hispi_csr_view v = {h->type, h->nrows, h->ncols, h->nnz, h->rowptr, h->colind, h->val};
        return HISPI_BE(ctx, csr_upload, &v, &A->dev);
    }
    /* the analysis needs the row pointers on the host: hisp's copy when
     * there is one, else one read of nrows + 1 pointers (checked: the
     * caller's), but where the backend plans from arrays hisp made */
    int64_t *rp = h->rowptr;
    hisp_status st = HISP_SUCCESS;
    if (!rp && !(A->ext.made && (ctx->ops->csr_caps & HISPI_CSR_WRAP_DEVICE))) {
        size_t pb = ((size_t)h->nrows + 1) * (A->ext.ptr64 ? 8 : 4);
        void *raw = NULL;
        st = hispi_alloc(ctx, (size_t)h->nrows + 1, sizeof *rp, (void **)&rp);
        if (!st) st = hispi_alloc(ctx, pb, 1, &raw);
        if (!st) st = HISPI_BE(ctx, buf_read, A->ext.rowptr, 0, raw, pb);
        if (!st)
            st = convert_ptr(ctx, HISP_ERR_INPUT_FORMAT, raw, A->ext.ptr64, A->ext.base, h->nrows,
                             h->nnz, rp);
        free(raw);
    }
    if (!st) {
        hispi_csr_view v = {h->type, h->nrows, h->ncols, h->nnz, rp, NULL, NULL};
        st = HISPI_BE(ctx, csr_wrap, &v, &A->ext, &A->dev);
    }
    if (rp != h->rowptr) free(rp);
    return st;
}

void hispi_matrix_unwrap(hisp_matrix A)
{
    if (!A->wrapped) return;
    if (hispi_matrix_need_host(A) != HISP_SUCCESS) {
        hispi_debug("a wrapped matrix's arrays could not be read back; it is left empty");
        hispi_sparse s;
        hispi_sparse_free(&A->host);
        if (hispi_sparse_alloc(A->ctx, &s, HISP_FORMAT_CSR, A->host.type, A->host.nrows,
                               A->host.ncols, 0) == HISP_SUCCESS)
            A->host = s;
        else
            A->host.nrows = A->host.ncols = A->host.nnz = 0;
    }
    hispi_matrix_ext_release(A);
    A->wrapped = false;
    A->host_absent = false;
    memset(&A->ext, 0, sizeof A->ext);
}

hisp_status hisp_matrix_device_modified(hisp_matrix A)
{
    if (!hispi_mat_ok(A)) return HISP_ERR_INVALID_HANDLE;
    if (!A->wrapped) return HISP_SUCCESS;
    /* the plan is made again from the row pointers at the next SpMV */
    if (A->dev) HISPI_BE_VOID(A->ctx, csr_free, A->dev);
    A->dev = NULL;
    hispi_sparse_free(&A->host);
    hispi_matrix_keys_drop(A);
    A->host_absent = true;
    return HISP_SUCCESS;
}
