/* HiSparse pools: one growable arena per family of matrices, per-node
 * reference counts kept on the side (the node bytes stay exactly as
 * docs/FORMAT.md says), exact-size reuse of freed node ranges. */
#include "backend/backend.h"
#include "hispi.h"
#include "hispi_hisparse.h"

#include <stdlib.h>

hisp_status hispi_pool_create(hisp_context ctx, uint64_t bytes, hispi_pool **out)
{
    *out = NULL;
    if (bytes < HISPI_POOL_HEADER) bytes = HISPI_POOL_HEADER;
    if (bytes > SIZE_MAX / 2)
        return hispi_fail(ctx, HISP_ERR_OUT_OF_HOST_MEMORY, "pool of %llu bytes",
                          (unsigned long long)bytes);
    hispi_pool *p = NULL;
    HISPI_TRY(hispi_calloc(ctx, 1, sizeof *p, (void **)&p));
    /* calloc: untouched pages stay lazily zeroed, and padding must be 0 */
    hisp_status s = hispi_calloc(ctx, (size_t)bytes, 1, (void **)&p->base);
    if (!s && pthread_rwlock_init(&p->lock, NULL)) {
        free(p->base);
        s = hispi_fail(ctx, HISP_ERR_OUT_OF_HOST_MEMORY, "HiSparse pool: no family lock");
    }
    if (s) {
        free(p);
        return s;
    }
    uint32_t magic = HISPI_POOL_MAGIC, version = HISPI_POOL_VERSION;
    memcpy(p->base, &magic, 4);
    memcpy(p->base + 4, &version, 4);
    p->used = HISPI_POOL_HEADER;
    p->live = HISPI_POOL_HEADER;
    p->cap = bytes;
    p->handles = 1;
    *out = p;
    return HISP_SUCCESS;
}

void hispi_pool_release(hispi_pool *p)
{
    if (!p || --p->handles > 0) return;
    pthread_rwlock_destroy(&p->lock);
    if (p->dev && p->dev_ctx) HISPI_BE_VOID(p->dev_ctx, buf_free, p->dev);
    free(p->reg);
    free(p->hv);
    free(p->base);
    free(p->rc);
    for (uint64_t c = 0; c < p->nclasses; c++)
        free(p->free_list[c]);
    free(p->free_list);
    free(p->free_len);
    free(p->free_cap);
    free(p);
}

hisp_status hispi_pool_append(hisp_context ctx, hispi_pool *p, uint64_t bytes, uint64_t *off)
{
    if (p->used + bytes > p->cap) {
        uint64_t cap = p->cap + p->cap / 2;
        if (cap < p->used + bytes) cap = p->used + bytes;
        if (cap > SIZE_MAX / 2)
            return hispi_fail(ctx, HISP_ERR_OUT_OF_HOST_MEMORY, "pool of %llu bytes",
                              (unsigned long long)cap);
        void *b = p->base;
        HISPI_TRY(hispi_realloc(ctx, &b, (size_t)cap, 1));
        hispi_huge_pages(b, (size_t)cap); /* the new tail is touched next */
        p->base = b;
        p->cap = cap;
    }
    *off = p->used;
    p->used += bytes;
    p->live += bytes;
    return HISP_SUCCESS;
}

hisp_status hispi_pool_alloc(hisp_context ctx, hispi_pool *p, uint64_t bytes, uint64_t *off)
{
    uint64_t c = bytes / 16;
    if (c < p->nclasses && p->free_len[c] > 0) {
        *off = p->free_list[c][--p->free_len[c]];
    } else {
        HISPI_TRY(hispi_pool_append(ctx, p, bytes, off));
        p->live -= bytes; /* counted below */
    }
    memset(p->base + *off, 0, (size_t)bytes);
    hispi_pool_dirty(p, *off);
    p->live += bytes;
    return HISP_SUCCESS;
}

static void pool_free_range(hispi_pool *p, uint64_t off, uint64_t bytes)
{
    p->live -= bytes;
    if (off + bytes == p->used) { /* the last node: give the tail back */
        p->used = off;
        hispi_pool_dirty(p, off);
        return;
    }
    uint64_t c = bytes / 16;
    if (c >= p->nclasses) { /* grow the class table; on failure the range leaks until
                               the family ends (never wrong, only less reuse) */
        uint64_t n = c + 1;
        uint64_t **fl = realloc(p->free_list, n * sizeof *fl);
        if (!fl) return;
        p->free_list = fl;
        uint64_t *fn = realloc(p->free_len, n * sizeof *fn);
        if (!fn) return;
        p->free_len = fn;
        uint64_t *fc = realloc(p->free_cap, n * sizeof *fc);
        if (!fc) return;
        p->free_cap = fc;
        for (uint64_t k = p->nclasses; k < n; k++)
            fl[k] = NULL, fn[k] = fc[k] = 0;
        p->nclasses = n;
    }
    if (p->free_len[c] == p->free_cap[c]) {
        uint64_t n = p->free_cap[c] ? 2 * p->free_cap[c] : 8;
        uint64_t *l = realloc(p->free_list[c], n * sizeof *l);
        if (!l) return;
        p->free_list[c] = l;
        p->free_cap[c] = n;
    }
    p->free_list[c][p->free_len[c]++] = off;
}

typedef struct {
    uint64_t off, cls;
} free_range;

static int by_offset(const void *x, const void *y)
{
    uint64_t a = ((const free_range *)x)->off, b = ((const free_range *)y)->off;
    return a < b ? -1 : a > b;
}

/* The bytes of the freed ranges at offsets >= t. */
static uint64_t free_bytes_from(const hispi_pool *p, uint64_t t)
{
    uint64_t s = 0;
    for (uint64_t c = 0; c < p->nclasses; c++)
        for (uint64_t i = 0; i < p->free_len[c]; i++)
            s += p->free_list[c][i] >= t ? c * 16 : 0;
    return s;
}

/* The free tail without sorting: the tail starts at t* = the lowest t with
 * [t, used) all free. Freed ranges are disjoint and inside the pool, so
 * from a t <= t* (first: used - all freed bytes), t' = used - (bytes of the
 * ranges at >= t) is again <= t* and > t unless [t, used) is covered, i.e.
 * t = t*. A few passes over the lists, where sorting 16 M ranges (C of an
 * rmat sum, destroyed) took seconds; after 8 passes the sort decides. */
static bool trim_linear(hispi_pool *p)
{
    uint64_t t = p->used - free_bytes_from(p, 0);
    for (int pass = 0; pass < 8; pass++) {
        uint64_t s = free_bytes_from(p, t);
        if (s != p->used - t) {
            t = p->used - s;
            continue;
        }
        for (uint64_t c = 0; c < p->nclasses; c++) { /* drop the tail's ranges */
            uint64_t k = 0;
            for (uint64_t i = 0; i < p->free_len[c]; i++)
                if (p->free_list[c][i] < t) p->free_list[c][k++] = p->free_list[c][i];
            p->free_len[c] = k;
        }
        p->used = t;
        return true;
    }
    return false;
}

void hispi_pool_trim(hispi_pool *p)
{
    uint64_t n = 0, k = 0;
    for (uint64_t c = 0; c < p->nclasses; c++)
        n += p->free_len[c];
    if (!n) return;
    if (trim_linear(p)) {
        hispi_pool_dirty(p, p->used);
        return;
    }
    free_range *r = malloc((size_t)n * sizeof *r);
    if (!r) return; /* nothing trimmed: never wrong, only less room */
    for (uint64_t c = 0; c < p->nclasses; c++)
        for (uint64_t i = 0; i < p->free_len[c]; i++)
            r[k++] = (free_range){p->free_list[c][i], c};
    qsort(r, (size_t)n, sizeof *r, by_offset);
    while (k > 0 && r[k - 1].off + r[k - 1].cls * 16 == p->used)
        p->used = r[--k].off;
    if (k < n) { /* the rest back on their lists (counts only shrink: room enough) */
        for (uint64_t c = 0; c < p->nclasses; c++)
            p->free_len[c] = 0;
        for (uint64_t i = 0; i < k; i++)
            p->free_list[r[i].cls][p->free_len[r[i].cls]++] = r[i].off;
    }
    free(r);
    hispi_pool_dirty(p, p->used);
}

/* ---- reference counts above 1 ------------------------------------------- */

static uint64_t rc_slot(const hispi_pool *p, uint64_t key)
{
    /* Fibonacci hashing: the top bits of the product (offsets of nearby
     * nodes are close; the top bits spread them) */
    uint64_t h = (key >> 4) * 0x9E3779B97F4A7C15ull;
    return h >> (64 - __builtin_ctzll(p->rc_cap));
}

static int64_t *rc_find(hispi_pool *p, uint64_t key)
{
    if (!p->rc_cap) return NULL;
    for (uint64_t i = rc_slot(p, key);; i = (i + 1) & (p->rc_cap - 1)) {
        if (p->rc[i].key == key) return &p->rc[i].val;
        if (p->rc[i].key == 0) return NULL;
    }
}

static void rc_put(hispi_pool *p, uint64_t key, int64_t val)
{
    uint64_t i = rc_slot(p, key);
    while (p->rc[i].key != 0 && p->rc[i].key != key)
        i = (i + 1) & (p->rc_cap - 1);
    p->rc[i].key = key;
    p->rc[i].val = val;
}

static hisp_status rc_grow(hisp_context ctx, hispi_pool *p)
{
    uint64_t ncap = p->rc_cap ? 2 * p->rc_cap : 64, ocap = p->rc_cap;
    struct hispi_rc_slot *old = p->rc, *t = NULL;
    HISPI_TRY(hispi_calloc(ctx, (size_t)ncap, sizeof *t, (void **)&t));
    hispi_huge_pages(t, (size_t)ncap * sizeof *t);
    p->rc = t;
    p->rc_cap = ncap;
    for (uint64_t i = 0; i < ocap; i++)
        if (old[i].key) rc_put(p, old[i].key, old[i].val);
    free(old);
    return HISP_SUCCESS;
}

/* Delete by backward shift (linear probing stays correct without tombstones). */
static void rc_del(hispi_pool *p, uint64_t key)
{
    uint64_t m = p->rc_cap - 1, i = rc_slot(p, key);
    while (p->rc[i].key != key)
        i = (i + 1) & m;
    p->rc[i].key = 0;
    p->rc_len--;
    for (uint64_t j = (i + 1) & m; p->rc[j].key; j = (j + 1) & m) {
        uint64_t h = rc_slot(p, p->rc[j].key);
        /* move j back to i if its home is not in (i, j] cyclically */
        bool in = i <= j ? (h > i && h <= j) : (h > i || h <= j);
        if (!in) {
            p->rc[i].key = p->rc[j].key;
            p->rc[i].val = p->rc[j].val;
            p->rc[j].key = 0;
            i = j;
        }
    }
}

/* One more reference to a counted node (true), or false when key has none
 * in the table yet (its count is then 1). */
static bool rc_bump(hispi_pool *p, uint64_t key)
{
    int64_t *c = rc_find(p, key);
    if (c) (*c)++;
    return c != NULL;
}

/* A node's second reference (the table has room). */
static void rc_insert(hispi_pool *p, uint64_t key)
{
    rc_put(p, key, 2);
    p->rc_len++;
}

hisp_status hispi_node_incref(hisp_context ctx, hispi_pool *p, uint64_t ref)
{
    if (!ref) return HISP_SUCCESS;
    if (!rc_bump(p, HISPI_REF_OFF(ref))) {
        if ((p->rc_len + 1) * 4 > p->rc_cap * 3) HISPI_TRY(rc_grow(ctx, p));
        rc_insert(p, HISPI_REF_OFF(ref));
    }
    hispi_pool_region_note(p, HISPI_REF_OFF(ref), 1);
    return HISP_SUCCESS;
}

hisp_status hispi_node_incref_reserve(hisp_context ctx, hispi_pool *p, size_t n)
{
    /* at most half full: linear probing's misses stay short (at 3/4 each
     * new key's probes cost rmat's 3 M shared subtrees 0.09 s) */
    while ((p->rc_len + n + 1) * 2 > p->rc_cap)
        HISPI_TRY(rc_grow(ctx, p));
    return HISP_SUCCESS;
}

hisp_status hispi_node_incref_many(hisp_context ctx, hispi_pool *p, const uint64_t *refs, size_t n)
{
    HISPI_TRY(hispi_node_incref_reserve(ctx, p, n));
    enum { AHEAD = 16 };
    for (size_t i = 0; i < n; i++) {
        if (i + AHEAD < n && refs[i + AHEAD])
            __builtin_prefetch(&p->rc[rc_slot(p, HISPI_REF_OFF(refs[i + AHEAD]))], 1);
        if (refs[i] && !rc_bump(p, HISPI_REF_OFF(refs[i]))) rc_insert(p, HISPI_REF_OFF(refs[i]));
        if (refs[i]) hispi_pool_region_note(p, HISPI_REF_OFF(refs[i]), 1);
    }
    return HISP_SUCCESS;
}

uint64_t hispi_node_bytes(const hispi_pool *p, uint64_t ref, size_t s, int d)
{
    int t = HISPI_REF_TYPE(ref);
    uint64_t es = hispi_node_is_leaf(t) ? s : 8;
    if (hispi_node_is_dense(t)) return hispi_dense_bytes(d, es);
    return hispi_coo_bytes(hispi_rd32(p->base + HISPI_REF_OFF(ref)), es);
}

void hispi_node_decref(hispi_pool *p, uint64_t ref, size_t s, int d)
{
    if (!ref) return;
    uint64_t off = HISPI_REF_OFF(ref);
    int64_t *c = rc_find(p, off);
    if (c) {
        if (--*c == 1) rc_del(p, off);
        hispi_pool_region_note(p, off, -1);
        return;
    }
    if (p->nreg) { /* a device-only node: freed with its range, or read after a download */
        bool lost;
        if (hispi_pool_region_free(p, off, s, d, &lost) || lost) return; /* lost: leaks */
    }
    int t = HISPI_REF_TYPE(ref);
    uint64_t bytes = hispi_node_bytes(p, ref, s, d);
    if (!hispi_node_is_leaf(t)) {
        if (t == HISPI_INNER_DENSE) {
            for (uint64_t k = 0; k < (uint64_t)d * (uint64_t)d; k++)
                hispi_node_decref(p, hispi_rd64(p->base + off + 8 * k), s, d);
        } else {
            uint64_t n = hispi_rd32(p->base + off), np;
            uint64_t pay = hispi_coo_payload(n, 8, &np);
            for (uint64_t k = 0; k < n; k++)
                hispi_node_decref(p, hispi_rd64(p->base + off + pay + 8 * k), s, d);
        }
    }
    pool_free_range(p, off, bytes);
}

void hispi_pool_free_span(hispi_pool *p, uint64_t off, uint64_t bytes, size_t s, int d)
{
    if (off + bytes == p->used) {
        pool_free_range(p, off, bytes);
        return;
    }
    /* pieces of the largest node's size (a size class per byte count would
     * grow the class table with the range): reusable by nodes of that size,
     * and the tail's pieces go back together (hispi_pool_trim) */
    uint64_t k = hispi_dense_bytes(d, s > 8 ? s : 8);
    for (uint64_t o = off; o < off + bytes; o += k)
        pool_free_range(p, o, off + bytes - o < k ? off + bytes - o : k);
}
