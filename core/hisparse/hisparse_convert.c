/* HiSparse readers: traversal in tree order, conversion back to sorted
 * CSR/COO (transposed flag and scale applied), the node profile. */
#include "hispi_hisparse.h"

#include <stdlib.h>

typedef struct {
    const hispi_hisparse *h;
    hispi_entry_fn fn;
    void *user;
    size_t s;
} walk;

static void visit(const walk *w, uint64_t ref, int l, int64_t r0, int64_t c0)
{
    const hispi_hisparse *h = w->h;
    const unsigned char *node = h->pool->base + HISPI_REF_OFF(ref);
    int t = HISPI_REF_TYPE(ref), d = h->d;
    bool leaf = hispi_node_is_leaf(t);
    int sh = h->log2d * (h->depth - 1 - l);
    size_t es = leaf ? w->s : 8;
    if (hispi_node_is_dense(t)) {
        for (int rd = 0; rd < d; rd++)
            for (int cd = 0; cd < d; cd++) {
                const unsigned char *p = node + ((size_t)rd * (size_t)d + (size_t)cd) * es;
                if (leaf) {
                    if (!hispi_bytes_zero(p, es)) w->fn(w->user, r0 + rd, c0 + cd, p);
                } else {
                    uint64_t c = hispi_rd64(p);
                    if (c) visit(w, c, l + 1, r0 + ((int64_t)rd << sh), c0 + ((int64_t)cd << sh));
                }
            }
        return;
    }
    uint64_t n = hispi_rd32(node), np;
    uint64_t pay = hispi_coo_payload(n, es, &np);
    for (uint64_t k = 0; k < n; k++) {
        int64_t rd = node[4 + 2 * k], cd = node[5 + 2 * k];
        const unsigned char *p = node + pay + k * es;
        if (leaf)
            w->fn(w->user, r0 + rd, c0 + cd, p);
        else
            visit(w, hispi_rd64(p), l + 1, r0 + (rd << sh), c0 + (cd << sh));
    }
}

void hispi_hisparse_foreach(const hispi_hisparse *h, hispi_entry_fn fn, void *user)
{
    if (!h->root) return;
    walk w = {h, fn, user, hisp_type_size(h->type)};
    visit(&w, h->root, 0, 0, 0);
}

/* dst = scale * src, component-wise, in the type's precision. */
static void scale_entry(hisp_type t, unsigned char *dst, const unsigned char *src, double scale)
{
    size_t es = hisp_type_size(t);
    if (scale == 1.0) {
        memcpy(dst, src, es);
        return;
    }
    int comps = hisp_type_components(t);
    for (int c = 0; c < comps; c++) {
        if (hispi_type_scalar_size(t) == 4) {
            float f;
            memcpy(&f, src + 4 * c, 4);
            f = (float)((double)f * scale);
            memcpy(dst + 4 * c, &f, 4);
        } else {
            double f;
            memcpy(&f, src + 8 * c, 8);
            f *= scale;
            memcpy(dst + 8 * c, &f, 8);
        }
    }
}

typedef struct {
    const hispi_hisparse *h;
    int64_t *ptr; /* output rows + 1: counts, then cursors */
    int32_t *col;
    unsigned char *val;
    bool tr;
    size_t es;
} to_csr;

static void count_cb(void *user, int64_t r, int64_t c, const unsigned char *v)
{
    (void)v;
    to_csr *a = user;
    a->ptr[(a->tr ? c : r) + 1]++;
}

static void fill_cb(void *user, int64_t r, int64_t c, const unsigned char *v)
{
    to_csr *a = user;
    int64_t row = a->tr ? c : r, k = a->ptr[row]++;
    a->col[k] = (int32_t)(a->tr ? r : c);
    scale_entry(a->h->type, a->val + (size_t)k * a->es, v, a->h->scale);
}

static hisp_status to_sparse_held(hisp_context ctx, const hispi_hisparse *h, hisp_format f,
                                  hispi_sparse *out)
{
    int64_t m = h->transposed ? h->ncols : h->nrows, n = h->transposed ? h->nrows : h->ncols;
    HISPI_TRY(hispi_hisparse_host(ctx, h));
    HISPI_TRY(hispi_sparse_alloc(ctx, out, HISP_FORMAT_CSR, h->type, m, n, h->nnz));
    /* for a fixed row the tree visits columns in increasing order (and for a
     * fixed column rows), so counting + scattering gives sorted rows */
    to_csr a = {h, out->rowptr, out->colind, out->val, h->transposed, hisp_type_size(h->type)};
    hispi_hisparse_foreach(h, count_cb, &a);
    for (int64_t i = 0; i < m; i++)
        out->rowptr[i + 1] += out->rowptr[i];
    if (out->rowptr[m] != h->nnz) {
        long long held = (long long)out->rowptr[m];
        hispi_sparse_free(out);
        return hispi_fail(ctx, HISP_ERR_INPUT_FORMAT, "HiSparse tree holds %lld entries, not %lld",
                          held, (long long)h->nnz);
    }
    hispi_hisparse_foreach(h, fill_cb, &a);
    memmove(out->rowptr + 1, out->rowptr, (size_t)m * sizeof *out->rowptr);
    out->rowptr[0] = 0;
    if (f == HISP_FORMAT_CSR) return HISP_SUCCESS;
    hispi_sparse coo;
    hisp_status s = hispi_sparse_convert(ctx, out, f, &coo);
    hispi_sparse_free(out);
    if (!s) *out = coo;
    return s;
}

/* ---- profile -------------------------------------------------------------- */

static void profile_node(const hispi_hisparse *h, uint64_t ref, hisp_hisparse_profile *p)
{
    const unsigned char *node = h->pool->base + HISPI_REF_OFF(ref);
    int t = HISPI_REF_TYPE(ref), d = h->d;
    size_t s = hisp_type_size(h->type), es = hispi_node_is_leaf(t) ? s : 8;
    p->nodes[t]++;
    p->bytes += hispi_node_bytes(h->pool, ref, s, d);
    if (hispi_node_is_dense(t)) {
        for (size_t k = 0; k < (size_t)d * (size_t)d; k++) {
            const unsigned char *q = node + k * es;
            if (hispi_node_is_leaf(t)) {
                if (!hispi_bytes_zero(q, es)) p->entries[t]++;
            } else if (hispi_rd64(q)) {
                p->entries[t]++;
                profile_node(h, hispi_rd64(q), p);
            }
        }
        return;
    }
    uint64_t n = hispi_rd32(node), np, pay = hispi_coo_payload(n, es, &np);
    p->entries[t] += (int64_t)n;
    if (!hispi_node_is_leaf(t))
        for (uint64_t k = 0; k < n; k++)
            profile_node(h, hispi_rd64(node + pay + 8 * k), p);
}

static hisp_status profile_held(hisp_context ctx, const hispi_hisparse *h, hisp_hisparse_profile *p)
{
    memset(p, 0, sizeof *p);
    HISPI_TRY(hispi_hisparse_host(ctx, h));
    p->node_size = h->d;
    p->depth = h->depth;
    p->transposed = h->transposed;
    p->scale = h->scale;
    p->bytes = HISPI_POOL_HEADER;
    if (h->root) profile_node(h, h->root, p);
    int64_t ise = 0, lse = 0;
    for (int t = HISPI_INNER_COO1; t <= HISPI_INNER_COO4; t++) {
        p->inner_sparse += p->nodes[t];
        ise += p->entries[t];
    }
    for (int t = HISPI_LEAF_COO1; t <= HISPI_LEAF_COO4; t++) {
        p->leaf_sparse += p->nodes[t];
        lse += p->entries[t];
    }
    p->inner_dense = p->nodes[HISPI_INNER_DENSE];
    p->leaf_dense = p->nodes[HISPI_LEAF_DENSE];
#define MEAN(a, b) ((b) ? (double)(a) / (double)(b) : 0.0)
    p->inner_sparse_mean = MEAN(ise, p->inner_sparse);
    p->leaf_sparse_mean = MEAN(lse, p->leaf_sparse);
    p->inner_dense_mean = MEAN(p->entries[HISPI_INNER_DENSE], p->inner_dense);
    p->leaf_dense_mean = MEAN(p->entries[HISPI_LEAF_DENSE], p->leaf_dense);
#undef MEAN
    p->pool_used = h->pool ? h->pool->used : 0;
    p->pool_live = h->pool ? h->pool->live : 0;
    return HISP_SUCCESS;
}

/* ---- reference SpMV on the tree --------------------------------------------- */

typedef struct {
    bool tr;
    double a;
    const void *x;
    void *y;
} spmv_ctx;

static void spmv_f32(void *user, int64_t r, int64_t c, const unsigned char *v)
{
    spmv_ctx *s = user;
    float f;
    memcpy(&f, v, 4);
    const float *x = s->x;
    float *y = s->y;
    if (s->tr)
        y[c] += (float)s->a * f * x[r];
    else
        y[r] += (float)s->a * f * x[c];
}

static void spmv_f64(void *user, int64_t r, int64_t c, const unsigned char *v)
{
    spmv_ctx *s = user;
    double f;
    memcpy(&f, v, 8);
    const double *x = s->x;
    double *y = s->y;
    if (s->tr)
        y[c] += s->a * f * x[r];
    else
        y[r] += s->a * f * x[c];
}

static hisp_status ref_spmv_held(hisp_context ctx, const hispi_hisparse *h, hisp_op op,
                                 double alpha, const void *x, double beta, void *y)
{
    bool tr = h->transposed != (op == HISP_OP_T);
    int64_t m = tr ? h->ncols : h->nrows;
    spmv_ctx s = {tr, alpha * h->scale, x, y};
    HISPI_TRY(hispi_hisparse_host(ctx, h));
    switch (h->type) {
    case HISP_F32:
        for (int64_t i = 0; i < m; i++)
            ((float *)y)[i] = beta == 0 ? 0.0f : (float)beta * ((float *)y)[i];
        hispi_hisparse_foreach(h, spmv_f32, &s);
        break;
    case HISP_F64:
        for (int64_t i = 0; i < m; i++)
            ((double *)y)[i] = beta == 0 ? 0.0 : beta * ((double *)y)[i];
        hispi_hisparse_foreach(h, spmv_f64, &s);
        break;
    default:
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "SpMV on %s entries is not implemented yet",
                          hisp_type_name(h->type));
    }
    return HISP_SUCCESS;
}

hisp_status hispi_hisparse_to_sparse(hisp_context ctx, const hispi_hisparse *h, hisp_format f,
                                     hispi_sparse *out)
{
    hispi_family_lock_host(h);
    hisp_status s = to_sparse_held(ctx, h, f, out);
    hispi_family_unlock(h->pool);
    return s;
}

hisp_status hispi_hisparse_profile(hisp_context ctx, const hispi_hisparse *h,
                                   hisp_hisparse_profile *p)
{
    hispi_family_lock_host(h);
    hisp_status s = profile_held(ctx, h, p);
    hispi_family_unlock(h->pool);
    return s;
}

hisp_status hispi_hisparse_ref_spmv(hisp_context ctx, const hispi_hisparse *h, hisp_op op,
                                    double alpha, const void *x, double beta, void *y)
{
    hispi_family_lock_host(h);
    hisp_status s = ref_spmv_held(ctx, h, op, alpha, x, beta, y);
    hispi_family_unlock(h->pool);
    return s;
}
