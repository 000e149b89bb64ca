/* HiSparse internals: the pool (a refcounted, growable arena shared by a
 * family of matrices), node layout helpers, construction, traversal.
 * docs/FORMAT.md is the normative description of the bytes. */
#ifndef HISPI_HISPARSE_H
#define HISPI_HISPARSE_H

#include "hispi.h"

#include <pthread.h>
#include <string.h>

/* Node types, child references and their helpers: core/backend/sched_view.h
 * (the backends read the pool). */
#define HISPI_POOL_HEADER 16
#define HISPI_POOL_MAGIC 0x4c505348u /* "HSPL" little endian */
#define HISPI_POOL_VERSION 1u

static inline uint64_t hispi_round_up(uint64_t v, uint64_t m)
{
    return (v + m - 1) / m * m;
}
/* X for a COO node of n entries. */
static inline int hispi_coo_x(uint64_t n)
{
    return n == 1 ? 1 : n == 2 ? 2 : 4;
}
/* Offset P of the payload in a COO node; *npad gets the padded count. */
static inline uint64_t hispi_coo_payload(uint64_t n, uint64_t s, uint64_t *npad)
{
    uint64_t x = (uint64_t)hispi_coo_x(n), np = hispi_round_up(n, x);
    uint64_t a = x * s < 16 ? x * s : 16;
    *npad = np;
    return hispi_round_up(4 + 2 * np, a);
}
static inline uint64_t hispi_coo_bytes(uint64_t n, uint64_t s)
{
    uint64_t np, p = hispi_coo_payload(n, s, &np);
    return hispi_round_up(p + np * s, 16);
}
static inline uint64_t hispi_dense_bytes(int d, uint64_t s)
{
    return hispi_round_up((uint64_t)d * (uint64_t)d * s, 16);
}
static inline uint32_t hispi_rd32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static inline uint64_t hispi_rd64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}
static inline bool hispi_bytes_zero(const unsigned char *p, size_t s)
{
    for (size_t i = 0; i < s; i++)
        if (p[i]) return false;
    return true;
}

/* ---- the pool (core/hisparse/hisparse_pool.c) ----------------------------- */

/* One arena per family of matrices (a build and everything edited or
 * duplicated from it). Guarded by the family lock (below). */
struct hispi_hisparse;
typedef struct hispi_pool {
    pthread_rwlock_t lock; /* the family lock (core/hisparse/hisparse_lock.c) */
    unsigned char *base;
    uint64_t used, cap; /* bytes in use (end of the last node), capacity */
    uint64_t live;      /* bytes of nodes still referenced (+ header) */
    int64_t handles;    /* matrices holding the pool */
    /* Per-node reference counts above 1 (absent = 1), so the node bytes stay
     * exactly as specified: open addressing, key = offset (0 = free slot). */
    struct hispi_rc_slot {
        uint64_t key; /* node offset */
        int64_t val;  /* its reference count (>= 2) */
    } * rc;           /* key and count side by side: one cache miss per lookup */
    uint64_t rc_cap, rc_len;
    /* Freed ranges by size class (size / 16): exact-size reuse. */
    uint64_t **free_list;
    uint64_t *free_len, *free_cap;
    uint64_t nclasses;
    /* The family's copy on its context's device backend (core/hisparse/hisparse_dev.c):
     * one buffer per family, shared by every member's SpMV, bytes at the
     * host offsets. Bytes [0, dev_valid) equal the host's (writes below it
     * lower it: hispi_pool_dirty); dev_cap bytes allocated; dev_gen changes
     * when the buffer moves; dev_users: matrix handles whose backend state
     * uses it (freed when the last one drops its state); device bytes from
     * dev_clean on are zero (an addition zeroes only those below it that
     * it may write). */
    void *dev;
    uint64_t dev_valid, dev_cap, dev_gen, dev_clean;
    int64_t dev_users;
    hisp_context dev_ctx; /* whose backend holds dev (NULL: none) */
    /* Ranges valid only on the device (core/hisparse/hisparse_resid.c): the nodes of
     * a device addition's result, never downloaded. Sorted by offset. */
    struct hispi_region {
        uint64_t off, end; /* bytes [off, end): the result's new nodes */
        uint64_t root;     /* their tree's root reference */
        uint64_t pins[2];  /* operand roots held for the result (0: none) */
        int64_t extra;     /* counts above 1 on nodes of the range other than root */
        uint32_t s;        /* value size at leaves */
        int d, depth;      /* node size, levels */
    } * reg;
    size_t nreg, reg_cap;
    /* Spans of the ranges whose host bytes are valid (sorted, disjoint):
     * single nodes an edit downloaded, and an edit's own new nodes. */
    struct hispi_span {
        uint64_t off, end;
    } * hv;
    size_t nhv, hv_cap;
} hispi_pool;

/* The family lock: every host or device access to a pool's bytes or
 * bookkeeping holds it, shared to read trees (profile, save, conversions,
 * format_bytes), exclusive to change the pool or its device copy (edit,
 * duplicate, destroy, SpMV (device residency), addition, backend change,
 * settling device-only ranges). Trees never change once written, so two
 * locked sections of one call need not be atomic together. A thread may
 * nest calls on a family it holds (counted, not locked again); a reader
 * must not ask to write. Never taken with another family's lock held but
 * in an addition (pools in address order). */
HISPI_LOCAL void hispi_family_lock(hispi_pool *p, bool write);
HISPI_LOCAL void hispi_family_unlock(hispi_pool *p);
/* Shared, or exclusive when h's host copy must be settled first (its root in
 * a device-only range): what a host reader of h's bytes takes. */
HISPI_LOCAL void hispi_family_lock_host(const struct hispi_hisparse *h);
/* Two families (or one) exclusively, in address order; unlock both. */
HISPI_LOCAL void hispi_family_lock2(hispi_pool *a, hispi_pool *b);
HISPI_LOCAL void hispi_family_unlock2(hispi_pool *a, hispi_pool *b);

/* Host bytes from `off` on changed (or may change): the device copy is
 * valid only below (the device-only ranges excepted: no host write reaches
 * them). */
static inline void hispi_pool_dirty(hispi_pool *p, uint64_t off)
{
    if (off < p->dev_valid) p->dev_valid = off;
}
/* The device copy of the pool's bytes [0, used) on ctx's backend: made or
 * grown (device to device, keeping the valid bytes) and brought up to date
 * by writing only the bytes past dev_valid. The caller becomes a user
 * (hispi_pool_dev_release) when it keeps state over *buf. Out of device
 * memory: an error, the pool and its device copy as before. */
HISPI_LOCAL hisp_status hispi_pool_device(hisp_context ctx, hispi_pool *p, void **buf);
HISPI_LOCAL void hispi_pool_dev_release(hisp_context ctx, hispi_pool *p);
/* Room for `need` bytes in the device copy (which exists): a larger buffer
 * when it lacks it, bytes [0, keep) moved there on the device, the rest of
 * a new buffer zeroed. Out of device memory: an error, nothing changed. */
HISPI_LOCAL hisp_status hispi_pool_dev_reserve(hisp_context ctx, hispi_pool *p, uint64_t need,
                                               uint64_t keep);
/* The backend goes away: the host copy brought up to date, the device copy
 * freed. */
HISPI_LOCAL void hispi_pool_dev_drop(hisp_context ctx, hispi_pool *p);

/* ---- residency of a pool's ranges (core/hisparse/hisparse_resid.c) --------
 * A device addition writes its result's nodes into the family's device copy
 * only and records their range here (device-only), with the operands' roots
 * pinned: the nodes it shares stay alive without a count per shared
 * subtree. An edit of a tree in a range records its new nodes the same way
 * (written on the host and uploaded at once; the source's root pinned).
 * The host copy of the ranges is brought up to date (downloaded but for
 * the host-valid spans, the shared subtrees counted, the pins dropped) when
 * the host must read a whole tree. A tree whose root is not in a range has
 * no node in one. */
HISPI_LOCAL hisp_status hispi_pool_region_add(hisp_context ctx, hispi_pool *p,
                                              const struct hispi_region *r);
/* The range holding offset off, or NULL. */
HISPI_LOCAL struct hispi_region *hispi_pool_region_of(const hispi_pool *p, uint64_t off);
/* Every device-only range downloaded and settled: the whole host copy
 * valid. On failure the ranges stay as they were. */
HISPI_LOCAL hisp_status hispi_pool_host(hisp_context ctx, hispi_pool *p);
/* decref of a node whose count drops to 0 inside a range: the range's root
 * with no other reference into it is freed whole (no byte read, its pins
 * released): true. Otherwise the host copy is brought up to date first
 * (false: free it the usual way; *lost: that failed, leave it). */
HISPI_LOCAL bool hispi_pool_region_free(hispi_pool *p, uint64_t off, size_t s, int d, bool *lost);
/* Counts above 1 on a range's inner nodes (n = +1 or -1). */
static inline void hispi_pool_region_note(hispi_pool *p, uint64_t off, int n)
{
    if (!p->nreg) return;
    struct hispi_region *r = hispi_pool_region_of(p, off);
    if (r && off != HISPI_REF_OFF(r->root)) r->extra += n;
}
/* The node at ref readable on the host: downloaded (its 16 first bytes,
 * then the rest) when it lies in a range and is not host-valid yet, then
 * marked so. Counted as d2h data. */
HISPI_LOCAL hisp_status hispi_pool_fetch(hisp_context ctx, hispi_pool *p, uint64_t ref, size_t s,
                                         int d);
/* An edit of the tree `src` (its root in a range) wrote its nodes at
 * [base, p->used) on the host, `root` among them: they go up to the device
 * copy and become a range with src pinned (the untouched nodes the edit
 * shares are src's: no count per shared child). On failure nothing is
 * recorded (the caller gives the nodes back). */
HISPI_LOCAL hisp_status hispi_pool_region_edit(hisp_context ctx, hispi_pool *p, uint64_t base,
                                               uint64_t root, uint64_t src, uint32_t s, int d,
                                               int depth);
/* Test hook: make the k-th following device allocation of a pool or of
 * the addition's scratch fail (0 = off); -k: the k-th and every later one,
 * until the hook is reset. */
HISPI_LOCAL void hispi_pool_dev_fail_after(long k);
/* A device buffer on ctx's backend through that hook (uninitialised). */
HISPI_LOCAL hisp_status hispi_dev_alloc(hisp_context ctx, uint64_t bytes, void **buf);
/* A device buffer of `room` bytes, or of `need` (<= room) when room does not
 * fit: *cap gets the size obtained. Growth with headroom that still works
 * close to the device's limit. */
HISPI_LOCAL hisp_status hispi_dev_alloc_room(hisp_context ctx, uint64_t need, uint64_t room,
                                             void **buf, uint64_t *cap);

/* ---- the addition's scratch of a context (core/hisparse/hisparse_add_cache.c) ----
 * Kept across calls in ctx->addc: the device's work-group limits, the
 * control words and timing marks (made once per backend), kernels by name
 * and options, and the queue and scratch-pool buffers, grown geometrically
 * (a failed growth: an error, the cache still valid, operands untouched). */
HISPI_LOCAL hisp_status hispi_add_cache(hisp_context ctx, hispi_astate **out);
/* The addition's two programs on a GPU for type t and the default node
 * size, 128 (tools/kernels_prebuild.c). */
HISPI_LOCAL void hispi_add_kopts_gpu(hisp_type t, char opts[2][320]);
HISPI_LOCAL hisp_status hispi_add_cache_kernel(hisp_context ctx, hispi_astate *c, int name,
                                               const char *kname, const char *opts, void **k);
/* At least `bytes` of queues (c->queues, c->qbytes). */
HISPI_LOCAL hisp_status hispi_add_cache_queues(hisp_context ctx, hispi_astate *c, uint64_t bytes);
/* At least `bytes` of scratch pool (c->tmp, c->tbytes), all zero. */
HISPI_LOCAL hisp_status hispi_add_cache_tmp(hisp_context ctx, hispi_astate *c, uint64_t bytes);

/* ---- the node codec (core/hisparse/hisparse_node.c) ---------------------
 * A node of n cells with payloads of es bytes (values in leaves, 8-byte
 * references in inner nodes) is dense when hispi_node_dense_fits and no
 * leaf cell's payload is all zero bytes (dense cells of zero bytes are
 * empty: such an explicit entry keeps the node COO, for exact round trips),
 * COO otherwise. Keys are row-major local cell indices (r * d + c), in
 * increasing order for COO nodes. */
HISPI_LOCAL bool hispi_node_dense_fits(int d, size_t es, uint64_t n);
HISPI_LOCAL int hispi_node_type(bool leaf, bool dense, uint64_t n);
HISPI_LOCAL uint64_t hispi_node_type_bytes(int type, int d, size_t es, uint64_t n);
/* The cells of a node: keys and payloads (packed); returns their count. */
HISPI_LOCAL uint64_t hispi_node_decode(const unsigned char *node, int type, int d, size_t es,
                                       uint32_t *keys, unsigned char *pay);
/* Writes n cells into a node of `type` (hispi_node_type_bytes bytes, a
 * dense node's empty cells already zero). */
HISPI_LOCAL void hispi_node_encode(unsigned char *node, int type, int d, size_t es, uint64_t n,
                                   const uint32_t *keys, const unsigned char *pay);

HISPI_LOCAL hisp_status hispi_pool_create(hisp_context ctx, uint64_t bytes, hispi_pool **out);
HISPI_LOCAL void hispi_pool_release(hispi_pool *p);
/* Room for a node of `bytes` (a multiple of 16), zeroed; *off its offset.
 * May move p->base. */
HISPI_LOCAL hisp_status hispi_pool_alloc(hisp_context ctx, hispi_pool *p, uint64_t bytes,
                                         uint64_t *off);
/* Room for `bytes` at the end of the pool (not zeroed, no reuse of freed
 * ranges): *off = the old end. May move p->base. */
HISPI_LOCAL hisp_status hispi_pool_append(hisp_context ctx, hispi_pool *p, uint64_t bytes,
                                          uint64_t *off);
/* Gives back the freed ranges that end the pool (nodes freed in any order
 * leave a run of them at the tail that pool_free gives back only from the
 * last one): a few linear passes over the F freed ranges (a sort after 8);
 * those left stay reusable.
 * The bytes beyond the new end are stale: append's callers overwrite. */
HISPI_LOCAL void hispi_pool_trim(hispi_pool *p);
/* Reference counts of nodes (a ref of 0 is ignored). decref frees a node
 * whose count reaches 0 and releases its children. */
HISPI_LOCAL hisp_status hispi_node_incref(hisp_context ctx, hispi_pool *p, uint64_t ref);
/* incref of refs[0..n): the count table grown first (reserve: room for n
 * more at most half full), its slots prefetched ahead (millions of shared
 * subtrees after an addition: a cache miss each). */
HISPI_LOCAL hisp_status hispi_node_incref_reserve(hisp_context ctx, hispi_pool *p, size_t n);
HISPI_LOCAL hisp_status hispi_node_incref_many(hisp_context ctx, hispi_pool *p,
                                               const uint64_t *refs, size_t n);
HISPI_LOCAL void hispi_node_decref(hispi_pool *p, uint64_t ref, size_t s, int d);
/* Frees a whole range of nodes [off, off + bytes) at once (a device-only
 * result: its bytes are never read). */
HISPI_LOCAL void hispi_pool_free_span(hispi_pool *p, uint64_t off, uint64_t bytes, size_t s, int d);
/* Bytes of the node at ref (s = value size at leaves). */
HISPI_LOCAL uint64_t hispi_node_bytes(const hispi_pool *p, uint64_t ref, size_t s, int d);

/* A walk over a tree's inner nodes (core/hisparse/hisparse_walk.c): visit(r, level,
 * part) is called for every nonzero child reference r (r at `level`) and
 * returns whether to walk below r (an inner node); part is the state of the
 * calling thread. */
typedef struct {
    const unsigned char *pool;
    int d;
    bool (*visit)(uint64_t r, int level, void *part);
} hispi_walk;
/* Walks below root (level 0, not visited itself; nothing when it is a leaf)
 * in up to `threads` threads (at most 16): thread t visits with
 * parts + t * part_size, the levels near the root with parts. Every child
 * is visited once whatever the split; without memory for it, one thread. */
HISPI_LOCAL void hispi_walk_tree(const hispi_walk *w, uint64_t root, int depth, int threads,
                                 void *parts, size_t part_size);

/* ---- the HiSparse form held by a matrix handle ---------------------------- */

#define HISPI_MAX_DEPTH 32 /* d >= 4, dimensions below 2^63 */

/* Node counts of a tree, for queue capacities without a walk: exact or
 * upper bounds (an addition's result: its kernels count what they write). */
typedef struct {
    bool known;
    int64_t nodes[HISPI_MAX_DEPTH]; /* per level (0 = root) */
    int64_t dense_leaves;           /* at most */
    uint64_t bytes;                 /* the tree's bytes, an estimate */
    int64_t root_n;                 /* the root's entry count (-1: not kept) */
} hispi_census;

typedef struct hispi_hisparse {
    hispi_pool *pool;
    uint64_t root;             /* 0 = empty matrix */
    int d, log2d;              /* node size */
    int depth;                 /* L >= 1 */
    int64_t nrows, ncols, nnz; /* of the stored tree (before the transposed flag) */
    hisp_type type;
    bool transposed;     /* the handle shows the transpose of the stored tree */
    double scale;        /* the handle shows scale * stored values */
    hispi_census census; /* of the stored tree (a new root: known = false) */
} hispi_hisparse;

/* The host copy of tree h up to date (hispi_pool_host when its root is in a
 * device-only range); every host reader of a tree's bytes calls it. */
HISPI_LOCAL hisp_status hispi_hisparse_host(hisp_context ctx, const hispi_hisparse *h);
/* h's census: kept, or counted by a host walk (and kept; hisparse_census.c). */
HISPI_LOCAL hisp_status hispi_hisparse_census(hisp_context ctx, hispi_hisparse *h);
/* The entry count of h's root (a COO node; 0 dense), read on the device when
 * only the device holds it (a control read). */
HISPI_LOCAL hisp_status hispi_hisparse_root_count(hisp_context ctx, const hispi_hisparse *h,
                                                  uint32_t *n);

HISPI_LOCAL int hispi_hisparse_depth(int d, int64_t nrows, int64_t ncols);

/* Build from a host COO/CSR/CSC storage (unsorted or with duplicates is
 * fine: it is sorted first). d checked by the caller. */
HISPI_LOCAL hisp_status hispi_hisparse_build(hisp_context ctx, const hispi_sparse *src, int d,
                                             hispi_hisparse *out);
/* Build from entries sorted row-major without duplicates (rows/cols 32-bit,
 * vals of the type); used by the builder and the reference add. */
HISPI_LOCAL hisp_status hispi_hisparse_build_sorted(hisp_context ctx, hisp_type t, int64_t nrows,
                                                    int64_t ncols, int64_t nnz, const int32_t *rows,
                                                    const int32_t *cols, const void *vals, int d,
                                                    int nthreads, hispi_hisparse *out);
/* Pool bytes (header + nodes) a build with value size s would take, without
 * building. */
HISPI_LOCAL hisp_status hispi_hisparse_measure(hisp_context ctx, const hispi_sparse *src, int d,
                                               size_t s, uint64_t *bytes);
HISPI_LOCAL void hispi_hisparse_free(hispi_hisparse *h);
/* A second holder of the same tree (shares the pool and root). */
HISPI_LOCAL hisp_status hispi_hisparse_share(hisp_context ctx, const hispi_hisparse *h,
                                             hispi_hisparse *out);

/* A new matrix handle holding *h (taken over; freed on failure). */
HISPI_LOCAL hisp_status hispi_hisparse_wrap(hisp_context ctx, hispi_hisparse *h, hisp_matrix *B);

/* The logical matrix (transposed flag and scale applied) as sorted CSR
 * (f = CSR) or sorted COO (f = COO). */
HISPI_LOCAL hisp_status hispi_hisparse_to_sparse(hisp_context ctx, const hispi_hisparse *h,
                                                 hisp_format f, hispi_sparse *out);

/* Visit every stored entry in tree order: (stored row, stored col, value
 * pointer). Returns false from the callback to stop. */
typedef void (*hispi_entry_fn)(void *user, int64_t r, int64_t c, const unsigned char *val);
HISPI_LOCAL void hispi_hisparse_foreach(const hispi_hisparse *h, hispi_entry_fn fn, void *user);

/* Reachable bytes (header + nodes) and per-type counts. */
HISPI_LOCAL hisp_status hispi_hisparse_profile(hisp_context ctx, const hispi_hisparse *h,
                                               hisp_hisparse_profile *prof);

/* Reference y = alpha*op(A)*x + beta*y on the tree (op composed with the
 * transposed flag; alpha with the scale). */
HISPI_LOCAL hisp_status hispi_hisparse_ref_spmv(hisp_context ctx, const hispi_hisparse *h,
                                                hisp_op op, double alpha, const void *x,
                                                double beta, void *y);

/* C = op_a(A) + op_b(B) on the host through sorted CSR (arguments checked
 * by hisp_matrix_add). */
HISPI_LOCAL hisp_status hispi_matrix_add_ref(hisp_op op_a, hisp_matrix A, hisp_op op_b,
                                             hisp_matrix B, hisp_matrix *C);

/* Serialisation into / out of memory (core/hisparse/hisparse_io.c). */
HISPI_LOCAL hisp_status hispi_hisparse_parse(hisp_context ctx, const unsigned char *data,
                                             size_t size, const char *name, hispi_hisparse *out);

#endif
