/* Host walks over a HiSparse tree's inner nodes, in threads: the levels
 * near the root in the calling thread until one holds enough inner nodes
 * to share, then the subtrees below that level taken by an atomic counter.
 * The addition's census and its count of shared subtrees use it (a
 * power-law tree has tens of millions of child references). */
#include "hispi_hisparse.h"

#include <stdatomic.h>
#include <stdlib.h>

/* The child slots of inner node ref: their count, *slots the first (8
 * bytes each; a dense node's empty cells hold 0). */
static uint64_t children(const hispi_walk *w, uint64_t ref, const unsigned char **slots)
{
    const unsigned char *p = w->pool + HISPI_REF_OFF(ref);
    if (HISPI_REF_TYPE(ref) == HISPI_INNER_DENSE) {
        *slots = p;
        return (uint64_t)w->d * (uint64_t)w->d;
    }
    uint64_t n = hispi_rd32(p), np;
    *slots = p + hispi_coo_payload(n, 8, &np);
    return n;
}

/* The children of inner node ref (at level) visited at level + 1, and the
 * walk continued below those the visitor keeps. */
static void walk_below(const hispi_walk *w, uint64_t ref, int level, void *part)
{
    const unsigned char *c;
    uint64_t n = children(w, ref, &c);
    for (uint64_t k = 0; k < n; k++) {
        uint64_t r = hispi_rd64(c + 8 * k);
        if (r && w->visit(r, level + 1, part)) walk_below(w, r, level + 1, part);
    }
}

typedef struct {
    const hispi_walk *w;
    const uint64_t *front;
    int64_t n;
    int level;
    atomic_llong next;
    atomic_int slot;
    unsigned char *parts;
    size_t part_size;
} walk_job;

static void *walk_worker(void *arg)
{
    walk_job *j = arg;
    void *part = j->parts + (size_t)atomic_fetch_add(&j->slot, 1) * j->part_size;
    for (int64_t i; (i = atomic_fetch_add(&j->next, 1)) < j->n;)
        walk_below(j->w, j->front[i], j->level, part);
    return NULL;
}

void hispi_walk_tree(const hispi_walk *w, uint64_t root, int depth, int threads, void *parts,
                     size_t part_size)
{
    if (!root || hispi_node_is_leaf(HISPI_REF_TYPE(root))) return;
    uint64_t *front = threads > 1 ? malloc(sizeof *front) : NULL;
    if (!front) { /* one thread, or no memory for the frontier */
        walk_below(w, root, 0, parts);
        return;
    }
    front[0] = root;
    int64_t n = 1;
    int level = 0;
    while (n < 64 * (int64_t)threads && level + 2 < depth) { /* one level down, here */
        uint64_t *next = NULL;
        int64_t m = 0, cap = 0;
        for (int64_t i = 0; i < n; i++) {
            const unsigned char *c;
            uint64_t k = children(w, front[i], &c);
            for (uint64_t e = 0; e < k; e++) {
                uint64_t r = hispi_rd64(c + 8 * e);
                if (!r || !w->visit(r, level + 1, parts)) continue;
                if (m == cap) {
                    uint64_t *g = realloc(next, (size_t)(cap ? 2 * cap : 256) * sizeof *g);
                    if (!g) { /* no room to keep it: its subtree now, in this thread */
                        walk_below(w, r, level + 1, parts);
                        continue;
                    }
                    next = g, cap = cap ? 2 * cap : 256;
                }
                next[m++] = r;
            }
        }
        free(front);
        front = next, n = m, level++;
    }
    walk_job j = {
        .w = w, .front = front, .n = n, .level = level, .parts = parts, .part_size = part_size};
    atomic_init(&j.next, 0);
    atomic_init(&j.slot, 0);
    hispi_debug("walk: %d threads below %lld nodes of level %d", threads, (long long)n, level);
    hispi_parallel(threads, walk_worker, &j);
    free(front);
}
