/* HiSparse in matrix handles: conversions, O(1) duplicate / transpose /
 * scale, storage accounting, the profile, SpMV dispatch. */
#include "hispi_hisparse.h"

#include <stdlib.h>

static int node_size(hisp_matrix A)
{
    return A->node_size ? A->node_size : HISP_HISPARSE_DEFAULT_NODE_SIZE;
}

void hispi_hisparse_free(hispi_hisparse *h)
{
    hispi_pool *p = h->pool;
    if (!p) return;
    /* the last holder frees the whole arena (no other thread can reach it:
     * no other handle holds it); others release their nodes */
    hispi_family_lock(p, true);
    bool last = p->handles <= 1;
    if (!last) {
        hispi_node_decref(p, h->root, hisp_type_size(h->type), h->d);
        p->handles--;
    }
    hispi_family_unlock(p);
    if (last) hispi_pool_release(p);
    h->pool = NULL;
    h->root = 0;
}

void hispi_hisparse_release(hisp_matrix A)
{
    if (!A->hs) return;
    hispi_hisparse_free(A->hs);
    free(A->hs);
    A->hs = NULL;
}

hisp_status hispi_hisparse_share(hisp_context ctx, const hispi_hisparse *h, hispi_hisparse *out)
{
    hispi_family_lock(h->pool, true);
    hisp_status s = hispi_node_incref(ctx, h->pool, h->root);
    if (!s) h->pool->handles++;
    hispi_family_unlock(h->pool);
    HISPI_TRY(s);
    *out = *h;
    return HISP_SUCCESS;
}

/* Sizes and format of the handle as shown. */
static void sync_info(hisp_matrix A)
{
    hispi_hisparse *h = A->hs;
    memset(&A->host, 0, sizeof A->host);
    A->host.format = HISP_FORMAT_HISPARSE;
    A->host.type = h->type;
    A->host.nrows = h->transposed ? h->ncols : h->nrows;
    A->host.ncols = h->transposed ? h->nrows : h->ncols;
    A->host.nnz = h->nnz;
    A->host.sorted = true;
}

/* Give the handle the tree *h (taken over; freed on failure). */
static hisp_status adopt(hisp_matrix A, hispi_hisparse *h)
{
    hispi_hisparse *box = NULL;
    hisp_status s = hispi_alloc(A->ctx, 1, sizeof *box, (void **)&box);
    if (s) {
        hispi_hisparse_free(h);
        return s;
    }
    *box = *h;
    hispi_matrix_drop_device(A);
    hispi_sparse_free(&A->host);
    hispi_hisparse_release(A);
    A->hs = box;
    sync_info(A);
    return HISP_SUCCESS;
}

hisp_status hispi_hisparse_wrap(hisp_context ctx, hispi_hisparse *h, hisp_matrix *B)
{
    int d = h->d;
    hispi_sparse empty;
    memset(&empty, 0, sizeof empty);
    hisp_status s = hispi_matrix_wrap(ctx, &empty, B);
    if (s) {
        hispi_hisparse_free(h);
        return s;
    }
    (*B)->node_size = d;
    s = adopt(*B, h);
    if (s) hisp_matrix_destroy(B);
    return s;
}

hisp_status hispi_matrix_sparse_copy(hisp_matrix A, hisp_format f, hispi_sparse *out)
{
    HISPI_TRY(hispi_matrix_need_host(A));
    if (A->hs) return hispi_hisparse_to_sparse(A->ctx, A->hs, f, out);
    return hispi_sparse_convert(A->ctx, &A->host, f, out);
}

hisp_status hispi_hisparse_convert(hisp_matrix A, hisp_format f)
{
    if (f == HISP_FORMAT_HISPARSE) {
        if (A->hs) return HISP_SUCCESS;
        hispi_hisparse h;
        HISPI_TRY(hispi_hisparse_build(A->ctx, &A->host, node_size(A), &h));
        return adopt(A, &h);
    }
    hispi_sparse s;
    HISPI_TRY(
        hispi_hisparse_to_sparse(A->ctx, A->hs, f == HISP_FORMAT_CSC ? HISP_FORMAT_CSR : f, &s));
    if (f == HISP_FORMAT_CSC) {
        hispi_sparse c;
        hisp_status st = hispi_sparse_convert(A->ctx, &s, f, &c);
        hispi_sparse_free(&s);
        HISPI_TRY(st);
        s = c;
    }
    hispi_matrix_drop_device(A); /* the device copy of the tree */
    hispi_hisparse_release(A);
    A->host = s;
    return HISP_SUCCESS;
}

hisp_status hispi_hisparse_duplicate(hisp_matrix A, hisp_format f, hisp_matrix *B)
{
    hispi_hisparse h;
    if (A->hs && f == HISP_FORMAT_HISPARSE) {
        HISPI_TRY(hispi_hisparse_share(A->ctx, A->hs, &h));
    } else if (f == HISP_FORMAT_HISPARSE) {
        HISPI_TRY(hispi_hisparse_build(A->ctx, &A->host, node_size(A), &h));
    } else {
        hispi_sparse s;
        HISPI_TRY(hispi_matrix_sparse_copy(A, f, &s));
        HISPI_TRY(hispi_matrix_wrap(A->ctx, &s, B));
        (*B)->node_size = A->node_size;
        return HISP_SUCCESS;
    }
    return hispi_hisparse_wrap(A->ctx, &h, B);
}

hisp_status hispi_hisparse_format_bytes(hisp_matrix A, hisp_type t, uint64_t *bytes)
{
    if (A->hs && t == A->hs->type) {
        hisp_hisparse_profile p;
        HISPI_TRY(hispi_hisparse_profile(A->ctx, A->hs, &p)); /* locks the family */
        *bytes = p.bytes;
        return HISP_SUCCESS;
    }
    if (!A->hs)
        return hispi_hisparse_measure(A->ctx, &A->host, node_size(A), hisp_type_size(t), bytes);
    hispi_sparse s;
    HISPI_TRY(hispi_hisparse_to_sparse(A->ctx, A->hs, HISP_FORMAT_CSR, &s));
    hisp_status st = hispi_hisparse_measure(A->ctx, &s, A->hs->d, hisp_type_size(t), bytes);
    hispi_sparse_free(&s);
    return st;
}

/* ---- public calls ------------------------------------------------------------ */

hisp_status hisp_matrix_set_node_size(hisp_matrix A, int d)
{
    if (!hispi_mat_ok(A)) return HISP_ERR_INVALID_HANDLE;
    if (d < 4 || d > 256 || (d & (d - 1)))
        return hispi_fail(A->ctx, HISP_ERR_INVALID_ARGUMENT,
                          "node size %d: must be a power of two in 4..256", d);
    A->node_size = d;
    return HISP_SUCCESS;
}

hisp_status hisp_matrix_transpose(hisp_matrix A)
{
    if (!hispi_mat_ok(A)) return HISP_ERR_INVALID_HANDLE;
    HISPI_TRY(hispi_matrix_need_host(A));
    if (A->hs) {
        A->hs->transposed = !A->hs->transposed;
        sync_info(A);
        return HISP_SUCCESS;
    }
    hispi_sparse *s = &A->host;
    hispi_matrix_drop_device(A);
    int64_t t = s->nrows;
    s->nrows = s->ncols;
    s->ncols = t;
    int32_t *ix = s->rowind;
    s->rowind = s->colind;
    s->colind = ix;
    if (s->format == HISP_FORMAT_COO) {
        s->sorted = false; /* now column-major */
    } else {
        int64_t *p = s->rowptr;
        s->rowptr = s->colptr;
        s->colptr = p;
        s->format = s->format == HISP_FORMAT_CSR ? HISP_FORMAT_CSC : HISP_FORMAT_CSR;
    }
    return HISP_SUCCESS;
}

hisp_status hisp_matrix_scale(hisp_matrix A, const void *alpha)
{
    if (!hispi_mat_ok(A)) return HISP_ERR_INVALID_HANDLE;
    if (!alpha) return hispi_fail(A->ctx, HISP_ERR_INVALID_ARGUMENT, "alpha is NULL");
    HISPI_TRY(hispi_matrix_need_host(A));
    double a = hispi_load_real(A->host.type, alpha, 0);
    if (A->hs) {
        A->hs->scale *= a;
        return HISP_SUCCESS;
    }
    hispi_matrix_drop_device(A);
    hisp_type t = A->host.type;
    int64_t n = A->host.nnz * hisp_type_components(t);
    if (hispi_type_scalar_size(t) == 4)
        for (int64_t k = 0; k < n; k++)
            ((float *)A->host.val)[k] *= (float)a;
    else
        for (int64_t k = 0; k < n; k++)
            ((double *)A->host.val)[k] *= a;
    return HISP_SUCCESS;
}

hisp_status hisp_matrix_hisparse_profile(hisp_matrix A, hisp_hisparse_profile *p)
{
    if (!hispi_mat_ok(A)) return HISP_ERR_INVALID_HANDLE;
    if (!p) return hispi_fail(A->ctx, HISP_ERR_INVALID_ARGUMENT, "profile is NULL");
    if (!A->hs)
        return hispi_fail(A->ctx, HISP_ERR_INVALID_ARGUMENT,
                          "the matrix is in %s form, not HiSparse",
                          hisp_format_name(A->host.format));
    return hispi_hisparse_profile(A->ctx, A->hs, p);
}
