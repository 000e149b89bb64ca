/* Matrix handles: creation from user arrays, formats, device residency. */
#include "backend/backend.h"
#include "format/format.h"

#include <stdlib.h>
#include <string.h>

bool hispi_mat_ok(hisp_matrix A)
{
    return hispi_handle_live(A, HISPI_H_MATRIX);
}

void hispi_matrix_drop_device(hisp_matrix A)
{
    hispi_matrix_unwrap(A); /* reads the caller's arrays while their backend is there */
    if (A->dev) HISPI_BE_VOID(A->ctx, csr_free, A->dev);
    A->dev = NULL;
    if (A->fmt && A->fmt->drop_device) A->fmt->drop_device(A);
    if (A->cdev_drop) A->cdev_drop(A);
    if (A->diag_drop) A->diag_drop(A);
    hisp_matrix_destroy(&A->narrow);
    hispi_matrix_keys_drop(A);
}

void hispi_matrix_release_storage(hisp_matrix A)
{
    hispi_matrix_drop_device(A);
    if (A->fmt && A->fmt->release) A->fmt->release(A);
    hispi_sparse_free(&A->host);
}

static void drop_cb(hispi_devobj *o)
{
    hisp_matrix A = (hisp_matrix)((char *)o - offsetof(struct hisp_matrix_s, link));
    hispi_matrix_drop_device(A);
    if (A->fmt && A->fmt->backend_closes) A->fmt->backend_closes(A);
}

hisp_status hispi_matrix_wrap(hisp_context ctx, hispi_sparse *s, hisp_matrix *out)
{
    hisp_matrix A = NULL;
    hisp_status st = hispi_calloc(ctx, 1, sizeof *A, (void **)&A);
    if (st) {
        hispi_sparse_free(s);
        return st;
    }
    st = hispi_handle_add(A, HISPI_H_MATRIX, ctx);
    if (st) {
        free(A);
        hispi_sparse_free(s);
        return hispi_fail(ctx, st, "no room for a matrix handle");
    }
    A->magic = HISPI_MAGIC_MATRIX;
    A->ctx = ctx;
    A->host = *s;
    memset(s, 0, sizeof *s);
    hispi_devobj_attach(ctx, &A->link, drop_cb);
    *out = A;
    return HISP_SUCCESS;
}

void hisp_matrix_destroy(hisp_matrix *pA)
{
    if (!pA || !hispi_handle_known(*pA, HISPI_H_MATRIX)) return;
    hisp_matrix A = *pA;
    if (A->link.next) { /* still attached: its context is alive */
        hispi_matrix_ext_release(A);
        A->wrapped = false; /* nothing to keep: the caller's arrays are just let go */
        hispi_matrix_drop_device(A);
        hispi_devobj_detach(&A->link);
    }
    hispi_matrix_keys_drop(A);
    if (A->fmt && A->fmt->release) A->fmt->release(A);
    hispi_sparse_free(&A->host);
    A->magic = 0;
    hispi_handle_free(A);
    *pA = NULL;
}

/* Common checks and storage for the create_* calls. */
static hisp_status create_common(hisp_context ctx, hisp_format f, hisp_type type, int64_t nrows,
                                 int64_t ncols, int64_t nnz, const void *vals, hisp_matrix *A,
                                 hispi_sparse *s)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!A) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "output handle is NULL");
    *A = NULL;
    HISPI_TRY(hispi_sparse_alloc(ctx, s, f, type, nrows, ncols, nnz));
    if (vals)
        memcpy(s->val, vals, (size_t)nnz * hisp_type_size(type));
    else
        for (int64_t k = 0; k < nnz; k++)
            hispi_store_real(type, s->val, k, 1.0);
    return HISP_SUCCESS;
}

static hisp_status finish_create(hisp_context ctx, hispi_sparse *s, hisp_matrix *A)
{
    hisp_status st = hispi_sparse_validate(ctx, s);
    if (st) {
        hispi_sparse_free(s);
        return st;
    }
    return hispi_matrix_wrap(ctx, s, A);
}

#define NEED(p, what)                                                                              \
    if (!(p) && nnz > 0) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, what " is NULL")

hisp_status hisp_matrix_create_coo(hisp_context ctx, hisp_type type, int64_t nrows, int64_t ncols,
                                   int64_t nnz, const int32_t *rows, const int32_t *cols,
                                   const void *vals, hisp_matrix *A)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    NEED(rows, "rows");
    NEED(cols, "cols");
    hispi_sparse s;
    HISPI_TRY(create_common(ctx, HISP_FORMAT_COO, type, nrows, ncols, nnz, vals, A, &s));
    if (nnz) {
        memcpy(s.rowind, rows, (size_t)nnz * sizeof(int32_t));
        memcpy(s.colind, cols, (size_t)nnz * sizeof(int32_t));
    }
    s.sorted = false;
    return finish_create(ctx, &s, A);
}

hisp_status hisp_matrix_create_csr(hisp_context ctx, hisp_type type, int64_t nrows, int64_t ncols,
                                   const int64_t *rowptr, const int32_t *colind, const void *vals,
                                   hisp_matrix *A)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!rowptr) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "rowptr is NULL");
    if (nrows < 0 || nrows > INT32_MAX)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "invalid row count %lld",
                          (long long)nrows);
    int64_t nnz = rowptr[nrows];
    NEED(colind, "colind");
    hispi_sparse s;
    HISPI_TRY(create_common(ctx, HISP_FORMAT_CSR, type, nrows, ncols, nnz, vals, A, &s));
    memcpy(s.rowptr, rowptr, ((size_t)nrows + 1) * sizeof(int64_t));
    if (nnz) memcpy(s.colind, colind, (size_t)nnz * sizeof(int32_t));
    return finish_create(ctx, &s, A);
}

hisp_status hisp_matrix_create_csc(hisp_context ctx, hisp_type type, int64_t nrows, int64_t ncols,
                                   const int64_t *colptr, const int32_t *rowind, const void *vals,
                                   hisp_matrix *A)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!colptr) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "colptr is NULL");
    if (ncols < 0 || ncols > INT32_MAX)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "invalid column count %lld",
                          (long long)ncols);
    int64_t nnz = colptr[ncols];
    NEED(rowind, "rowind");
    hispi_sparse s;
    HISPI_TRY(create_common(ctx, HISP_FORMAT_CSC, type, nrows, ncols, nnz, vals, A, &s));
    memcpy(s.colptr, colptr, ((size_t)ncols + 1) * sizeof(int64_t));
    if (nnz) memcpy(s.rowind, rowind, (size_t)nnz * sizeof(int32_t));
    return finish_create(ctx, &s, A);
}

hisp_status hisp_matrix_get_info(hisp_matrix A, hisp_matrix_info *info)
{
    if (!hispi_mat_ok(A)) return HISP_ERR_INVALID_HANDLE;
    if (!info) return hispi_fail(A->ctx, HISP_ERR_INVALID_ARGUMENT, "info is NULL");
    info->type = A->host.type;
    info->format = A->host.format;
    info->nrows = A->host.nrows;
    info->ncols = A->host.ncols;
    info->nnz = A->host.nnz;
    return HISP_SUCCESS;
}

bool hispi_matrix_key_get(hisp_matrix A, int i, char *key, size_t size)
{
    const char *m = A->keys[i];
    if (!m || strlen(m) >= size) return false;
    memcpy(key, m, strlen(m) + 1);
    return true;
}

void hispi_matrix_keys_drop(hisp_matrix A)
{
    for (int i = 0; i < 3; i++) {
        free(A->keys[i]);
        A->keys[i] = NULL;
    }
}

void hispi_matrix_key_keep(hisp_matrix A, int i, const char *key)
{
    free(A->keys[i]);
    A->keys[i] = strdup(key);
}

hisp_status hispi_matrix_csr(hisp_matrix A, hispi_sparse *tmp, const hispi_sparse **csr)
{
    HISPI_TRY(hispi_matrix_need_host(A));
    memset(tmp, 0, sizeof *tmp);
    *csr = &A->host;
    if (!hispi_sparse_family(A->host.format)) { /* the format's own form is the matrix */
        HISPI_TRY(A->fmt->to_sparse(A, HISP_FORMAT_CSR, tmp));
        *csr = tmp;
        return HISP_SUCCESS;
    }
    if (A->host.format == HISP_FORMAT_CSR) return HISP_SUCCESS;
    HISPI_TRY(hispi_sparse_convert(A->ctx, &A->host, HISP_FORMAT_CSR, tmp));
    *csr = tmp;
    return HISP_SUCCESS;
}

hisp_status hispi_matrix_sparse_copy(hisp_matrix A, hisp_format f, hispi_sparse *out)
{
    HISPI_TRY(hispi_matrix_need_host(A));
    if (hispi_sparse_family(A->host.format)) return hispi_sparse_convert(A->ctx, &A->host, f, out);
    return A->fmt->to_sparse(A, f, out); /* the format's own form */
}

hisp_status hisp_matrix_host_arrays(hisp_matrix A, const int64_t **ptr, const int32_t **rows,
                                    const int32_t **cols, const void **vals)
{
    if (!hispi_mat_ok(A)) return HISP_ERR_INVALID_HANDLE;
    HISPI_TRY(hispi_matrix_need_host(A));
    const hispi_sparse *s = &A->host;
    if (ptr) *ptr = s->format == HISP_FORMAT_CSC ? s->colptr : s->rowptr;
    if (rows) *rows = s->rowind;
    if (cols) *cols = s->colind;
    if (vals) *vals = s->val;
    return HISP_SUCCESS;
}
