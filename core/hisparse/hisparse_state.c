/* HiSparse in matrix handles: conversions, O(1) duplicate / transpose /
 * scale, storage accounting, the profile, SpMV dispatch. */
#include "backend/backend.h"
#include "hispi_hisparse.h"
#include "format/format.h"

extern const hispi_format_ops hispi_hisparse_format;

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
    hispi_matrix_release_storage(A);
    A->hs = box;
    A->fmt = &hispi_hisparse_format;
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

/* ---- the format's operations (core/format/format.h) ------------------------- */

static hisp_status build(hisp_matrix A, const hispi_sparse *s)
{
    hispi_hisparse h;
    HISPI_TRY(hispi_hisparse_build(A->ctx, s, node_size(A), &h));
    return adopt(A, &h);
}

static hisp_status to_sparse(hisp_matrix A, hisp_format f, hispi_sparse *out)
{
    if (f != HISP_FORMAT_CSC) return hispi_hisparse_to_sparse(A->ctx, A->hs, f, out);
    hispi_sparse s;
    HISPI_TRY(hispi_hisparse_to_sparse(A->ctx, A->hs, HISP_FORMAT_CSR, &s));
    hisp_status st = hispi_sparse_convert(A->ctx, &s, f, out);
    hispi_sparse_free(&s);
    return st;
}

static hisp_status duplicate(hisp_matrix A, hisp_matrix *B)
{
    hispi_hisparse h;
    HISPI_TRY(hispi_hisparse_share(A->ctx, A->hs, &h));
    return hispi_hisparse_wrap(A->ctx, &h, B);
}

static void drop_device(hisp_matrix A)
{
    if (!A->hs_dev) return;
    hispi_pool *p = A->hs ? A->hs->pool : NULL;
    hispi_family_lock(p, true); /* another member's SpMV may use the device pool */
    HISPI_BE_VOID(A->ctx, hisparse_free, A->hs_dev);
    if (p) hispi_pool_dev_release(A->ctx, p); /* its family's device pool */
    hispi_family_unlock(p);
    A->hs_dev = NULL;
}

/* The backend closes: the family's device pool goes, the host copy brought
 * up to date first. */
static void backend_closes(hisp_matrix A)
{
    if (!A->hs) return;
    hispi_family_lock(A->hs->pool, true);
    hispi_pool_dev_drop(A->ctx, A->hs->pool);
    hispi_family_unlock(A->hs->pool);
}

/* O(1): a flag and a factor the kernels apply */
static hisp_status transpose(hisp_matrix A)
{
    A->hs->transposed = !A->hs->transposed;
    sync_info(A);
    return HISP_SUCCESS;
}

static hisp_status scale(hisp_matrix A, double a)
{
    A->hs->scale *= a;
    return HISP_SUCCESS;
}

static bool candidate(hisp_type t, hisp_op op)
{
    (void)op;
    return t == HISP_F32 || t == HISP_F64;
}

static hisp_status format_bytes(hisp_matrix A, hisp_type t, uint64_t *bytes);

const hispi_format_ops hispi_hisparse_format = {
    .format = HISP_FORMAT_HISPARSE,
    .name = "hisparse",
    .build = build,
    .to_sparse = to_sparse,
    .duplicate = duplicate,
    .release = hispi_hisparse_release,
    .drop_device = drop_device,
    .backend_closes = backend_closes,
    .transpose = transpose,
    .scale = scale,
    .bytes = format_bytes,
    .spmv = hispi_hisparse_spmv,
    .settle = hispi_sched_settle,
    .candidate = candidate,
};

static hisp_status format_bytes(hisp_matrix A, hisp_type t, uint64_t *bytes)
{
    if (A->hs && t == A->hs->type) {
        hisp_hisparse_profile p;
        HISPI_TRY(hispi_hisparse_profile(A->ctx, A->hs, &p)); /* locks the family */
        *bytes = p.bytes;
        return HISP_SUCCESS;
    }
    if (hispi_sparse_family(A->host.format))
        return hispi_hisparse_measure(A->ctx, &A->host, node_size(A), hisp_type_size(t), bytes);
    hispi_sparse s; /* another format's own form (a tree of another type, SELL) */
    HISPI_TRY(hispi_matrix_sparse_copy(A, HISP_FORMAT_CSR, &s));
    hisp_status st = hispi_hisparse_measure(A->ctx, &s, A->hs ? A->hs->d : node_size(A),
                                            hisp_type_size(t), bytes);
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
