/* The census of a HiSparse tree: nodes per level, dense leaves, bytes (what
 * the addition and the scheduler size their queues and scratch by). */
#include "hispi_hisparse.h"

#include <stdlib.h>
#include <string.h>

/* Kept with the tree (hispi_hisparse.census): a build's is counted by a
 * host walk at its first addition, an addition's result gets its kernels'
 * counts and an edit its source's plus the nodes it added and dropped, so a
 * device-resident operand needs no walk. */

/* Threads for a walk over a tree of `work` entries or nodes (the test hook
 * hispi_hs_hook.walk_threads forces a count). */
static int walk_threads(hisp_context ctx, double work)
{
    int f = hispi_hs_hook.walk_threads;
    int t = f >= 1 ? f : hispi_threads(ctx, work);
    return t > 16 ? 16 : t;
}

/* Visits inner nodes only: a leaf is counted from its reference's type in
 * its parent (a power-law tree has millions of leaves and few inner
 * nodes). A part: [0] dense leaves, [1 + l] nodes at level l. */
static bool census_visit(uint64_t r, int level, void *part)
{
    int64_t *c = part;
    int t = HISPI_REF_TYPE(r);
    c[1 + level]++;
    c[0] += t == HISPI_LEAF_DENSE;
    return !hispi_node_is_leaf(t);
}

static hisp_status census_parts(hisp_context ctx, const hispi_hisparse *h, int threads,
                                int64_t **sum)
{
    /* each thread's counts a cache line apart from the next one's */
    const size_t used = (size_t)h->depth + 1, w = used + 8;
    int64_t *parts = NULL;
    HISPI_TRY(hispi_calloc(ctx, (size_t)threads * w, sizeof *parts, (void **)&parts));
    if (h->root) census_visit(h->root, 0, parts);
    hispi_walk wk = {h->pool->base, h->d, census_visit};
    hispi_walk_tree(&wk, h->root, h->depth, threads, parts, w * sizeof *parts);
    for (int t = 1; t < threads; t++)
        for (size_t i = 0; i < used; i++)
            parts[i] += parts[(size_t)t * w + i];
    *sum = parts;
    return HISP_SUCCESS;
}

/* The walk, in threads: the trees of a large matrix hold tens of millions
 * of child references (rmat's two trees), slow to walk on one thread. */
hisp_status hispi_hisparse_census(hisp_context ctx, hispi_hisparse *h)
{
    if (h->census.known) return HISP_SUCCESS;
    if (h->depth > HISPI_MAX_DEPTH)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "HiSparse: %d levels", h->depth);
    HISPI_TRY(hispi_hisparse_host(ctx, h));
    int64_t *p = NULL;
    HISPI_TRY(census_parts(ctx, h, walk_threads(ctx, (double)h->nnz), &p));
    if (hispi_hs_hook.add_census_check) { /* tests: one thread must agree */
        int64_t *q = NULL;
        hisp_status s = census_parts(ctx, h, 1, &q);
        bool same = !s && !memcmp(p, q, ((size_t)h->depth + 1) * sizeof *p);
        free(q);
        if (!same) free(p);
        if (s) return s;
        if (!same) return hispi_fail(ctx, HISP_ERR_BACKEND, "addition: the census differs");
    }
    hispi_census *c = &h->census;
    memset(c, 0, sizeof *c);
    c->dense_leaves = p[0];
    memcpy(c->nodes, p + 1, (size_t)h->depth * sizeof *p);
    c->bytes = h->pool->live;
    c->root_n = -1;
    c->known = true;
    free(p);
    return HISP_SUCCESS;
}
