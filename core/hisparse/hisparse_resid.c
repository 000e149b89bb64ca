/* Residency of a HiSparse pool's ranges (core/hisparse/hispi_hisparse.h): the nodes
 * of a device addition's result live only in the family's device copy until
 * the host reads them. Such a range keeps its operands' roots pinned (one
 * reference each) instead of counting every subtree it shares: an addition
 * costs the host O(1) bookkeeping. Bringing the host copy up to date
 * downloads the ranges, counts the shared subtrees (a walk over the
 * downloaded nodes only) and drops the pins; a result destroyed before the
 * host ever read it is freed whole without a byte moving. An edit of such
 * a tree fetches only the nodes on its paths (kept as host-valid spans) and
 * records its new nodes as a range of their own, pinning the source's root
 * (hispi_pool_region_edit): a whole range is never downloaded for it. */
#include "backend/backend.h"
#include "hispi.h"
#include "hispi_hisparse.h"

#include <stdlib.h>

struct hispi_region *hispi_pool_region_of(const hispi_pool *p, uint64_t off)
{
    size_t lo = 0, hi = p->nreg;
    while (lo < hi) { /* the first range ending after off */
        size_t m = (lo + hi) / 2;
        if (p->reg[m].end <= off)
            lo = m + 1;
        else
            hi = m;
    }
    return lo < p->nreg && p->reg[lo].off <= off ? &p->reg[lo] : NULL;
}

hisp_status hispi_pool_region_add(hisp_context ctx, hispi_pool *p, const struct hispi_region *r)
{
    if (p->nreg == p->reg_cap) {
        size_t cap = p->reg_cap ? 2 * p->reg_cap : 8;
        void *n = p->reg;
        HISPI_TRY(hispi_realloc(ctx, &n, cap, sizeof *p->reg));
        p->reg = n;
        p->reg_cap = cap;
    }
    size_t i = p->nreg;
    while (i > 0 && p->reg[i - 1].off > r->off) {
        p->reg[i] = p->reg[i - 1];
        i--;
    }
    p->reg[i] = *r;
    p->nreg++;
    return HISP_SUCCESS;
}

/* ---- host-valid spans of the ranges -------------------------------------- */

/* The first span ending after off. */
static size_t hv_index(const hispi_pool *p, uint64_t off)
{
    size_t lo = 0, hi = p->nhv;
    while (lo < hi) {
        size_t m = (lo + hi) / 2;
        if (p->hv[m].end <= off)
            lo = m + 1;
        else
            hi = m;
    }
    return lo;
}

static bool hv_holds(const hispi_pool *p, uint64_t off)
{
    size_t i = hv_index(p, off);
    return i < p->nhv && p->hv[i].off <= off;
}

/* Room for n more spans. */
static hisp_status hv_reserve(hisp_context ctx, hispi_pool *p, size_t n)
{
    if (p->nhv + n <= p->hv_cap) return HISP_SUCCESS;
    size_t cap = p->hv_cap ? 2 * p->hv_cap : 16;
    while (cap < p->nhv + n)
        cap *= 2;
    void *v = p->hv;
    HISPI_TRY(hispi_realloc(ctx, &v, cap, sizeof *p->hv));
    p->hv = v;
    p->hv_cap = cap;
    return HISP_SUCCESS;
}

/* [off, end) (disjoint from every span) becomes host-valid, merged with
 * the spans it touches; the room is there. */
static void hv_insert(hispi_pool *p, uint64_t off, uint64_t end)
{
    size_t i = hv_index(p, off);
    bool left = i > 0 && p->hv[i - 1].end == off, right = i < p->nhv && p->hv[i].off == end;
    if (left && right) {
        p->hv[i - 1].end = p->hv[i].end;
        memmove(p->hv + i, p->hv + i + 1, (p->nhv - i - 1) * sizeof *p->hv);
        p->nhv--;
    } else if (left) {
        p->hv[i - 1].end = end;
    } else if (right) {
        p->hv[i].off = off;
    } else {
        memmove(p->hv + i + 1, p->hv + i, (p->nhv - i) * sizeof *p->hv);
        p->hv[i] = (struct hispi_span){off, end};
        p->nhv++;
    }
}

/* The spans inside [off, end) go (a range freed whole). */
static void hv_drop(hispi_pool *p, uint64_t off, uint64_t end)
{
    size_t i = hv_index(p, off), j = i;
    while (j < p->nhv && p->hv[j].off < end)
        j++;
    if (j == i) return;
    memmove(p->hv + i, p->hv + j, (p->nhv - j) * sizeof *p->hv);
    p->nhv -= j - i;
}

static void region_remove(hispi_pool *p, struct hispi_region *r)
{
    size_t i = (size_t)(r - p->reg);
    hv_drop(p, r->off, r->end);
    memmove(r, r + 1, (p->nreg - i - 1) * sizeof *r);
    p->nreg--;
}

bool hispi_pool_region_free(hispi_pool *p, uint64_t off, size_t s, int d, bool *lost)
{
    *lost = false;
    struct hispi_region *r = hispi_pool_region_of(p, off);
    if (!r) return false;
    if (off == HISPI_REF_OFF(r->root) && r->extra == 0) {
        /* no reference into the range but the root's, which drops: every
         * node of it goes (it holds the result's nodes only) */
        struct hispi_region g = *r;
        region_remove(p, r);
        hispi_pool_free_span(p, g.off, g.end - g.off, s, d);
        hispi_node_decref(p, g.pins[0], s, d);
        hispi_node_decref(p, g.pins[1], s, d);
        return true;
    }
    *lost = hispi_pool_host(p->dev_ctx, p) != HISP_SUCCESS;
    return false;
}

/* The child references of a range's nodes that point out of it (the
 * subtrees its result shares), collected by a walk from its root. */
typedef struct {
    uint64_t lo, hi;
    uint64_t *v;
    size_t n, cap;
    bool failed;
    char pad[80]; /* the next thread's part a cache line away */
} shared_part;

static bool collect_visit(uint64_t r, int level, void *part)
{
    (void)level;
    shared_part *s = part;
    uint64_t o = HISPI_REF_OFF(r);
    if (o >= s->lo && o < s->hi) return !hispi_node_is_leaf(HISPI_REF_TYPE(r));
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 4096;
        uint64_t *v = realloc(s->v, cap * sizeof *v);
        if (!v) {
            s->failed = true;
            return false;
        }
        s->v = v, s->cap = cap;
    }
    s->v[s->n++] = r;
    return false;
}

/* The walk's threads: as the addition's census (hispi_threads). */
static int settle_threads(hisp_context ctx, uint64_t bytes)
{
    int t = hispi_threads(ctx, (double)bytes / 16);
    return t > 16 ? 16 : t < 1 ? 1 : t;
}

hisp_status hispi_pool_host(hisp_context ctx, hispi_pool *p)
{
    if (!p->nreg) return HISP_SUCCESS;
    hisp_context dc = p->dev_ctx ? p->dev_ctx : ctx;
    if (!dc || !p->dev)
        return hispi_fail(ctx, HISP_ERR_BACKEND,
                          "HiSparse pool: device-only nodes without a device");
    /* downloads first (a failure changes nothing), around the host-valid
     * spans: an edit's nodes, nodes an edit fetched */
    for (size_t i = 0, h = 0; i < p->nreg; i++) {
        uint64_t at = p->reg[i].off, end = p->reg[i].end;
        while (at < end) {
            while (h < p->nhv && p->hv[h].end <= at)
                h++;
            uint64_t to = h < p->nhv && p->hv[h].off < end ? p->hv[h].off : end;
            if (to > at)
                HISPI_TRY(
                    HISPI_BE(dc, buf_read, p->dev, (size_t)at, p->base + at, (size_t)(to - at)));
            at = to < end ? p->hv[h].end : end;
        }
    }
    /* the shared subtrees of every range, counted before any pin drops */
    size_t nreg = p->nreg, total = 0;
    shared_part **parts = NULL;
    int *nthr = NULL;
    hisp_status s = hispi_calloc(ctx, nreg, sizeof *parts, (void **)&parts);
    if (!s) s = hispi_calloc(ctx, nreg, sizeof *nthr, (void **)&nthr);
    for (size_t i = 0; i < nreg && !s; i++) {
        const struct hispi_region *g = &p->reg[i];
        int threads = settle_threads(ctx, g->end - g->off);
        s = hispi_calloc(ctx, (size_t)threads, sizeof **parts, (void **)&parts[i]);
        if (s) break;
        nthr[i] = threads;
        for (int t = 0; t < threads; t++)
            parts[i][t].lo = g->off, parts[i][t].hi = g->end;
        collect_visit(g->root, 0, parts[i]);
        hispi_walk wk = {p->base, g->d, collect_visit};
        if (HISPI_REF_OFF(g->root) >= g->off && HISPI_REF_OFF(g->root) < g->end)
            hispi_walk_tree(&wk, g->root, g->depth, threads, parts[i], sizeof **parts);
        for (int t = 0; t < threads; t++) {
            if (parts[i][t].failed && !s)
                s = hispi_fail(ctx, HISP_ERR_OUT_OF_HOST_MEMORY, "HiSparse: shared subtree list");
            total += parts[i][t].n;
        }
    }
    if (!s) s = hispi_node_incref_reserve(ctx, p, total);
    struct hispi_region *regs = NULL;
    if (!s) s = hispi_alloc(ctx, nreg, sizeof *regs, (void **)&regs);
    if (!s) { /* nothing fails from here: the ranges become host nodes */
        memcpy(regs, p->reg, nreg * sizeof *regs);
        p->nreg = 0;
        p->nhv = 0;
        for (size_t i = 0; i < nreg; i++)
            for (int t = 0; t < nthr[i]; t++)
                (void)hispi_node_incref_many(ctx, p, parts[i][t].v, parts[i][t].n);
        for (size_t i = 0; i < nreg; i++) {
            hispi_node_decref(p, regs[i].pins[0], regs[i].s, regs[i].d);
            hispi_node_decref(p, regs[i].pins[1], regs[i].s, regs[i].d);
        }
    }
    for (size_t i = 0; parts && i < nreg; i++) {
        for (int t = 0; parts[i] && t < nthr[i]; t++)
            free(parts[i][t].v);
        free(parts[i]);
    }
    free(parts);
    free(nthr);
    free(regs);
    return s;
}

hisp_status hispi_hisparse_host(hisp_context ctx, const hispi_hisparse *h)
{
    if (!h->pool || !h->pool->nreg || !h->root) return HISP_SUCCESS;
    if (!hispi_pool_region_of(h->pool, HISPI_REF_OFF(h->root))) return HISP_SUCCESS;
    return hispi_pool_host(ctx, h->pool);
}

hisp_status hispi_hisparse_root_count(hisp_context ctx, const hispi_hisparse *h, uint32_t *n)
{
    *n = 0;
    if (!h->root || hispi_node_is_dense(HISPI_REF_TYPE(h->root))) return HISP_SUCCESS;
    uint64_t off = HISPI_REF_OFF(h->root);
    hispi_pool *p = h->pool;
    if (!p->nreg || !hispi_pool_region_of(p, off)) {
        *n = hispi_rd32(p->base + off);
        return HISP_SUCCESS;
    }
    if (h->census.known && h->census.root_n >= 0) {
        *n = (uint32_t)h->census.root_n;
        return HISP_SUCCESS;
    }
    hisp_context dc = p->dev_ctx ? p->dev_ctx : ctx;
    return hispi_ctl_read(dc, dc->be, p->dev, (size_t)off, n, sizeof *n);
}

/* ---- edits of trees in ranges -------------------------------------------- */

hisp_status hispi_pool_fetch(hisp_context ctx, hispi_pool *p, uint64_t ref, size_t s, int d)
{
    uint64_t off = HISPI_REF_OFF(ref);
    const struct hispi_region *r = ref && p->nreg ? hispi_pool_region_of(p, off) : NULL;
    if (!r || hv_holds(p, off)) return HISP_SUCCESS;
    hisp_context dc = p->dev_ctx ? p->dev_ctx : ctx;
    if (!dc || !p->dev)
        return hispi_fail(ctx, HISP_ERR_BACKEND,
                          "HiSparse pool: device-only nodes without a device");
    int t = HISPI_REF_TYPE(ref);
    size_t es = hispi_node_is_leaf(t) ? s : 8;
    /* a dense node's size is its type's; a COO node's follows from its
     * count, in its first 16 bytes (every node has them) */
    uint64_t head = hispi_node_is_dense(t) ? hispi_dense_bytes(d, es) : 16;
    if (t == HISPI_NODE_INVALID || t >= HISPI_NODE_TYPES || off + head > r->end)
        return hispi_fail(ctx, HISP_ERR_BACKEND, "HiSparse pool: bad reference %#llx",
                          (unsigned long long)ref);
    HISPI_TRY(HISPI_BE(dc, buf_read, p->dev, (size_t)off, p->base + off, (size_t)head));
    uint64_t bytes = head;
    if (!hispi_node_is_dense(t)) {
        uint32_t n = hispi_rd32(p->base + off);
        if (n == 0 || n > (uint32_t)(d * d))
            return hispi_fail(ctx, HISP_ERR_BACKEND, "HiSparse pool: node %#llx holds %u entries",
                              (unsigned long long)ref, n);
        bytes = hispi_coo_bytes(n, es);
        if (off + bytes > r->end)
            return hispi_fail(ctx, HISP_ERR_BACKEND, "HiSparse pool: node %#llx past its range",
                              (unsigned long long)ref);
        if (bytes > head)
            HISPI_TRY(HISPI_BE(dc, buf_read, p->dev, (size_t)(off + head), p->base + off + head,
                               (size_t)(bytes - head)));
    }
    /* a node read again next time when there is no room to note it */
    if (hv_reserve(ctx, p, 1) == HISP_SUCCESS)
        hv_insert(p, off, off + bytes);
    else
        hispi_clear_error(ctx);
    return HISP_SUCCESS;
}

hisp_status hispi_pool_region_edit(hisp_context ctx, hispi_pool *p, uint64_t base, uint64_t root,
                                   uint64_t src, uint32_t s, int d, int depth)
{
    uint64_t end = p->used;
    hisp_context dc = p->dev_ctx ? p->dev_ctx : ctx;
    if (!dc || !p->dev)
        return hispi_fail(ctx, HISP_ERR_BACKEND,
                          "HiSparse pool: device-only nodes without a device");
    /* the new nodes up now (the upload of stale bytes skips ranges) */
    HISPI_TRY(hispi_pool_dev_reserve(dc, p, hispi_round_up(end, 16) + 16, 0));
    HISPI_TRY(HISPI_BE(dc, buf_write, p->dev, (size_t)base, p->base + base, (size_t)(end - base)));
    /* room first: nothing fails once src is pinned */
    HISPI_TRY(hv_reserve(ctx, p, 1));
    if (p->nreg == p->reg_cap) {
        size_t cap = p->reg_cap ? 2 * p->reg_cap : 8;
        void *n = p->reg;
        HISPI_TRY(hispi_realloc(ctx, &n, cap, sizeof *p->reg));
        p->reg = n;
        p->reg_cap = cap;
    }
    HISPI_TRY(hispi_node_incref(ctx, p, src));
    struct hispi_region r = {
        .off = base, .end = end, .root = root, .pins = {src, 0}, .s = s, .d = d, .depth = depth};
    (void)hispi_pool_region_add(ctx, p, &r);
    hv_insert(p, base, end);
    if (p->dev_valid >= base) p->dev_valid = end;
    return HISP_SUCCESS;
}
