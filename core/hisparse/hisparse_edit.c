/* Copy-on-write edits of HiSparse trees. Nodes never change once written:
 * an edit decodes each node on the path to a touched leaf, applies the
 * changes and writes a new node into the family's pool; every untouched
 * child is shared (its reference count goes up). Cost per touched leaf:
 * O(depth * d^2) at worst (decoding a dense node), never O(nnz).
 * A tree only the device holds (an addition's result, or an edit of one:
 * its root in a range of core/hisparse/hisparse_resid.c) is edited without bringing
 * the host copy up to date: each node on a path is fetched alone, the new
 * nodes are appended together, uploaded, and recorded as a range that pins
 * the source's root instead of counting the children it shares. */
#include "hispi_hisparse.h"

#include <stdlib.h>

typedef struct {
    uint32_t r, c; /* stored coordinates */
    int64_t idx;   /* position in the caller's batch: later wins */
    bool remove;
    const unsigned char *val; /* stored value (already divided by the scale) */
} change;

typedef struct {
    hisp_context ctx;
    hispi_pool *pool;
    int d, k, L;
    size_t s;
    hisp_edit_stats *st;
    /* per level: the old and the new cells of the node being edited */
    uint32_t *keys, *nkeys;
    unsigned char *pay, *npay;
    size_t ps; /* payload slot room: max(s, 8) */
    bool pin;  /* the source is in a range: fetch its nodes, append, no counts */
    /* the edit's change to the census: nodes per level, dense leaves */
    int64_t dn[HISPI_MAX_DEPTH], ddense;
} editor;

/* glibc qsort_r (the build defines _GNU_SOURCE); arg = {log2 d, depth} */
static int cmp_change(const void *pa, const void *pb, void *arg)
{
    const change *a = pa, *b = pb;
    int g_k = ((const int *)arg)[0], g_L = ((const int *)arg)[1];
    for (int l = 0; l < g_L; l++) { /* tree order: (row digit, col digit) level by level */
        int sh = g_k * (g_L - 1 - l);
        uint32_t m = (1u << g_k) - 1;
        uint32_t ka = ((a->r >> sh) & m) << 8 | ((a->c >> sh) & m);
        uint32_t kb = ((b->r >> sh) & m) << 8 | ((b->c >> sh) & m);
        if (ka != kb) return ka < kb ? -1 : 1;
    }
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static inline uint32_t key_at(const editor *e, const change *c, int l)
{
    int sh = e->k * (e->L - 1 - l);
    uint32_t m = (uint32_t)e->d - 1;
    return ((c->r >> sh) & m) * (uint32_t)e->d + ((c->c >> sh) & m);
}

/* Decode a node's cells: keys (row-major local index) and payloads. */
static hisp_status decode(editor *e, uint64_t ref, uint32_t *keys, unsigned char *pay, size_t es,
                          uint64_t *n)
{
    *n = 0;
    if (!ref) return HISP_SUCCESS;
    if (e->pin) HISPI_TRY(hispi_pool_fetch(e->ctx, e->pool, ref, e->s, e->d));
    *n = hispi_node_decode(e->pool->base + HISPI_REF_OFF(ref), HISPI_REF_TYPE(ref), e->d, es, keys,
                           pay);
    return HISP_SUCCESS;
}

/* Write a node of n cells; *ref gets it (0 when n == 0). */
static hisp_status encode(editor *e, bool leaf, uint64_t n, const uint32_t *keys,
                          const unsigned char *pay, uint64_t *ref)
{
    *ref = 0;
    if (n == 0) return HISP_SUCCESS;
    size_t es = leaf ? e->s : 8;
    bool use_dense = hispi_node_dense_fits(e->d, es, n);
    for (uint64_t k = 0; leaf && use_dense && k < n; k++) /* same rule as the builder */
        if (hispi_bytes_zero(pay + k * es, es)) use_dense = false;
    int type = hispi_node_type(leaf, use_dense, n);
    uint64_t bytes = hispi_node_type_bytes(type, e->d, es, n), off;
    if (e->pin) { /* the new nodes in one span, past every range */
        HISPI_TRY(hispi_pool_append(e->ctx, e->pool, bytes, &off));
        memset(e->pool->base + off, 0, (size_t)bytes);
    } else {
        HISPI_TRY(hispi_pool_alloc(e->ctx, e->pool, bytes, &off));
    }
    hispi_node_encode(e->pool->base + off, type, e->d, es, n, keys, pay);
    e->st->nodes_copied++;
    e->st->bytes_added += bytes;
    *ref = off | (uint64_t)type;
    return HISP_SUCCESS;
}

/* The edited copy of the subtree `ref` (0 = none yet) at level l, with the
 * changes ch[0..nc) that all fall into it, sorted in tree order. */
static hisp_status edit_node(editor *e, uint64_t ref, int l, const change *ch, int64_t nc,
                             uint64_t *out)
{
    bool leaf = l == e->L - 1;
    size_t es = leaf ? e->s : 8;
    uint64_t dd = (uint64_t)e->d * (uint64_t)e->d;
    uint32_t *keys = e->keys + (size_t)l * dd, *nkeys = e->nkeys + (size_t)l * dd;
    unsigned char *pay = e->pay + (size_t)l * dd * e->ps, *npay = e->npay + (size_t)l * dd * e->ps;
    uint64_t n = 0, m = 0, i = 0;
    hisp_status s = decode(e, ref, keys, pay, es, &n);
    /* merge old cells with the groups of changes (both in key order) */
    for (int64_t j = 0; !s && (i < n || j < nc);) {
        uint32_t kj = j < nc ? key_at(e, &ch[j], l) : UINT32_MAX;
        if (i < n && keys[i] < kj) { /* untouched cell */
            nkeys[m] = keys[i];
            memcpy(npay + m * es, pay + i * es, es);
            if (!leaf) {
                if (!e->pin) s = hispi_node_incref(e->ctx, e->pool, hispi_rd64(pay + i * es));
                if (s) break;
                e->st->subtrees_shared++;
            }
            m++;
            i++;
            continue;
        }
        bool had = i < n && keys[i] == kj;
        int64_t jend = j;
        while (jend < nc && key_at(e, &ch[jend], l) == kj)
            jend++;
        if (leaf) { /* apply in batch order; the last change decides */
            bool present = had;
            const unsigned char *v = had ? pay + i * es : NULL;
            for (int64_t q = j; q < jend; q++) {
                if (ch[q].remove) {
                    if (present)
                        e->st->removed++;
                    else
                        e->st->ignored++;
                    present = false;
                } else {
                    if (present)
                        e->st->overwritten++;
                    else
                        e->st->inserted++;
                    present = true;
                    v = ch[q].val;
                }
            }
            if (present) {
                nkeys[m] = kj;
                memcpy(npay + m * es, v, es);
                m++;
            }
        } else {
            uint64_t child = 0;
            s = edit_node(e, had ? hispi_rd64(pay + i * es) : 0, l + 1, ch + j, jend - j, &child);
            if (s) break;
            if (child) {
                nkeys[m] = kj;
                memcpy(npay + m * es, &child, 8);
                m++;
            }
        }
        if (had) i++;
        j = jend;
    }
    if (!s) s = encode(e, leaf, m, nkeys, npay, out);
    if (s && !leaf && !e->pin) /* release what this unfinished node held */
        for (uint64_t q = 0; q < m; q++)
            hispi_node_decref(e->pool, hispi_rd64(npay + q * es), e->s, e->d);
    if (!s) { /* the census: this node replaced */
        e->dn[l] += (*out != 0) - (ref != 0);
        if (leaf)
            e->ddense += (*out && HISPI_REF_TYPE(*out) == HISPI_LEAF_DENSE) -
                         (ref && HISPI_REF_TYPE(ref) == HISPI_LEAF_DENSE);
    }
    return s;
}

/* stored = v / scale, component-wise in the type's precision. */
static void unscale(hisp_type t, unsigned char *dst, const unsigned char *src, double scale)
{
    size_t es = hisp_type_size(t);
    if (scale == 1.0) {
        memcpy(dst, src, es);
        return;
    }
    for (int c = 0; c < hisp_type_components(t); c++) {
        if (hispi_type_scalar_size(t) == 4) {
            float f;
            memcpy(&f, src + 4 * c, 4);
            f = (float)((double)f / scale);
            memcpy(dst + 4 * c, &f, 4);
        } else {
            double f;
            memcpy(&f, src + 8 * c, 8);
            f /= scale;
            memcpy(dst + 8 * c, &f, 8);
        }
    }
}

hisp_status hisp_matrix_edit(hisp_matrix A, int64_t n, const int32_t *rows, const int32_t *cols,
                             const void *vals, const uint8_t *remove, hisp_matrix *B,
                             hisp_edit_stats *stats)
{
    if (!hispi_mat_ok(A)) return HISP_ERR_INVALID_HANDLE;
    hisp_context ctx = A->ctx;
    if (!B) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "output handle is NULL");
    *B = NULL;
    if (!A->hs)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "edits need a HiSparse matrix (convert it first)");
    if (n < 0 || (n > 0 && (!rows || !cols)))
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "bad change count or NULL arrays");
    hispi_hisparse *h = A->hs;
    size_t es = hisp_type_size(h->type);
    bool any_set = false;
    for (int64_t q = 0; q < n; q++) {
        if (rows[q] < 0 || rows[q] >= A->host.nrows || cols[q] < 0 || cols[q] >= A->host.ncols)
            return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                              "change %lld: (%d, %d) is outside the %lld x %lld matrix",
                              (long long)q, rows[q], cols[q], (long long)A->host.nrows,
                              (long long)A->host.ncols);
        if (!(remove && remove[q])) any_set = true;
    }
    if (any_set && !vals)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "vals is NULL but entries are set");
    if (any_set && h->scale == 0)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "cannot set entries of a matrix scaled by 0");
    hispi_pool *pool = h->pool;
    /* exclusive: the pool grows (its bytes may move) and its counts change */
    hispi_family_lock(pool, true);
    /* a tree in a range: its paths fetched node by node (no host copy of
     * the ranges brought up to date), its new nodes a range of their own */
    bool pin = h->root && pool->nreg && hispi_pool_region_of(pool, HISPI_REF_OFF(h->root));
    hisp_edit_stats local;
    hisp_edit_stats *st = stats ? stats : &local;
    memset(st, 0, sizeof *st);
    change *ch = NULL;
    unsigned char *sv = NULL;
    hisp_status s = hispi_alloc(ctx, (size_t)n, sizeof *ch, (void **)&ch);
    if (!s) s = hispi_alloc(ctx, (size_t)n, es, (void **)&sv);
    if (s) {
        free(ch);
        hispi_family_unlock(pool);
        return s;
    }
    for (int64_t q = 0; q < n; q++) {
        uint32_t r = (uint32_t)rows[q], c = (uint32_t)cols[q];
        ch[q].r = h->transposed ? c : r;
        ch[q].c = h->transposed ? r : c;
        ch[q].idx = q;
        ch[q].remove = remove && remove[q];
        ch[q].val = sv + (size_t)q * es;
        if (!ch[q].remove)
            unscale(h->type, sv + (size_t)q * es, (const unsigned char *)vals + (size_t)q * es,
                    h->scale);
    }
    int kl[2] = {h->log2d, h->depth};
    qsort_r(ch, (size_t)n, sizeof *ch, cmp_change, kl);
    editor e = {.ctx = ctx,
                .pool = pool,
                .d = h->d,
                .k = h->log2d,
                .L = h->depth,
                .s = es,
                .st = st,
                .ps = es > 8 ? es : 8,
                .pin = pin};
    size_t cells = (size_t)h->depth * (size_t)h->d * (size_t)h->d;
    uint64_t root = h->root, base = pool->used;
    if (n > 0) {
        s = hispi_alloc(ctx, cells, sizeof *e.keys, (void **)&e.keys);
        if (!s) s = hispi_alloc(ctx, cells, sizeof *e.nkeys, (void **)&e.nkeys);
        if (!s) s = hispi_alloc(ctx, cells, e.ps, (void **)&e.pay);
        if (!s) s = hispi_alloc(ctx, cells, e.ps, (void **)&e.npay);
        if (!s) s = edit_node(&e, h->root, 0, ch, n, &root);
        free(e.keys);
        free(e.nkeys);
        free(e.pay);
        free(e.npay);
    } else
        s = hispi_node_incref(ctx, pool, root); /* nothing to do: share the root */
    free(ch);
    free(sv);
    if (!s && pin && root != h->root && root)
        s = hispi_pool_region_edit(ctx, pool, base, root, h->root, (uint32_t)es, h->d, h->depth);
    if (s && pin && pool->used > base) { /* the new nodes end the pool: give them back */
        pool->live -= pool->used - base;
        pool->used = base;
    }
    if (s) {
        hispi_family_unlock(pool);
        return s;
    }
    hispi_hisparse nh = *h;
    nh.root = root;
    if (root != h->root && h->census.known) { /* the source's census and the edit's changes */
        for (int l = 0; l < h->depth; l++)
            nh.census.nodes[l] += e.dn[l];
        nh.census.dense_leaves += e.ddense;
        nh.census.bytes += st->bytes_added;
        nh.census.root_n = !root ? 0
                           : hispi_node_is_dense(HISPI_REF_TYPE(root))
                               ? 0
                               : (int64_t)hispi_rd32(pool->base + HISPI_REF_OFF(root));
    } else if (root != h->root) {
        nh.census.known = false; /* counted when needed */
    }
    nh.nnz = h->nnz + st->inserted - st->removed;
    h->pool->handles++;
    hispi_family_unlock(pool); /* B's wrap frees its tree on failure: that locks */
    return hispi_hisparse_wrap(ctx, &nh, B);
}
