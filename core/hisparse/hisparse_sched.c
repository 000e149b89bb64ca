/* The dynamic scheduler's policy (core/hisparse/hisparse_sched.h), its host
 * simulation, and the dispatch of HiSparse SpMV to the context's backend. */
#include "backend/backend.h"
#include "hispi.h"
#include "hisparse_sched.h"
#include "hispi_hisparse.h"

#include <stdlib.h>

static const char *const spmv_names[HISPI_SQ_SPMV] = {"inner-1",     "inner-few", "inner-many",
                                                      "inner-dense", "leaf-1",    "leaf-few",
                                                      "leaf-many",   "leaf-dense"};

const char *hisp_sched_queue_name(int q)
{
    return q >= 0 && q < HISPI_SQ_SPMV ? spmv_names[q] : NULL;
}

hisp_status hisp_context_sched_counts(hisp_context ctx, hisp_sched_counts *c)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!c) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "counts is NULL");
    HISPI_TRY(hispi_sched_settle(ctx));
    *c = ctx->sched;
    return HISP_SUCCESS;
}

/* Threads per node: one for single entries, 4 for 2..32 entries (64 leaves
 * per group: CUDA's flattened kernel then spreads a block's prologue over
 * more entries; 8 was slower on rmat's replay, whose entries sit mostly in
 * such leaves), a whole group (or d^2 threads for small d) for heavy inner nodes,
 * a warp of 32 for heavy COO leaves (a group per leaf left most threads
 * idle on leaves of a few hundred entries and ran one dependent chain of
 * loads per block, far below the DRAM bandwidth on poisson3d), d threads for a dense leaf (one row
 * or column each). Inner queues launch as soon as they have work (they gate the rest of the tree);
 * leaf queues wait until they fill about 64 groups, or until nothing else is left, so leaves of
 * several levels' worth of parents share launches. */
void hispi_sched_spmv_policy(int d, hisp_type t, hispi_sched_policy *p)
{
    (void)t;
    const int group = 256;
    int heavy = d * d < group ? d * d : group;
    int warp = heavy < 32 ? heavy : 32;
    memset(p, 0, sizeof *p);
    p->nqueues = HISPI_SQ_SPMV;
    const struct {
        int fn, tpn;
        uint32_t threshold;
    } q[HISPI_SQ_SPMV] = {
        {HISPI_NF_INNER_COO, 1, 1},         {HISPI_NF_INNER_COO, 8, 1},
        {HISPI_NF_INNER_COO, heavy, 1},     {HISPI_NF_INNER_DENSE, heavy, 1},
        {HISPI_NF_LEAF_COO, 1, 64 * group}, {HISPI_NF_LEAF_COO, 4, 64 * group / 8},
        {HISPI_NF_LEAF_COO, warp, 64},      {HISPI_NF_LEAF_DENSE, d < group ? d : group, 64},
    };
    for (int i = 0; i < HISPI_SQ_SPMV; i++) {
        p->q[i].name = spmv_names[i];
        p->q[i].fn = q[i].fn;
        p->q[i].tpn = q[i].tpn;
        p->q[i].group = group;
        p->q[i].threshold = q[i].threshold;
    }
}

/* The addition merges whole nodes: a work-group per inner, dense or large
 * leaf pair, a segment of one per other leaf pair over HISPI_ADD_FEW
 * entries (its size set by the controller from the local memory it needs),
 * a work-item per smaller one; every queue launches when it has work: the
 * children of a round are the next level. */
void hispi_sched_add_policy(hispi_sched_policy *p)
{
    static const char *names[HISPI_AQ_ADD] = {"inner-pair", "leaf-pair-few", "leaf-pair-many",
                                              "leaf-pair-dense-or-large", "one-operand"};
    static const int fn[HISPI_AQ_ADD] = {HISPI_NF_ADD_PAIR, HISPI_NF_ADD_SEQ, HISPI_NF_ADD_LEAF,
                                         HISPI_NF_ADD_PAIR, HISPI_NF_ADD_ONE};
    memset(p, 0, sizeof *p);
    p->nqueues = HISPI_AQ_ADD;
    for (int i = 0; i < HISPI_AQ_ADD; i++) {
        p->q[i].name = names[i];
        p->q[i].fn = fn[i];
        p->q[i].tpn = fn[i] == HISPI_NF_ADD_SEQ ? 1 : 64;
        p->q[i].group = 64;
        p->q[i].threshold = 1;
    }
}

int hispi_sched_pick(const hispi_sched_policy *p, const uint64_t *pending, bool *launch)
{
    int n = 0;
    for (int q = 0; q < p->nqueues; q++) {
        launch[q] = pending[q] > 0 && pending[q] >= p->q[q].threshold;
        n += launch[q];
    }
    if (n) return n;
    for (int q = 0; q < p->nqueues; q++) {
        launch[q] = pending[q] > 0;
        n += launch[q];
    }
    return n;
}

static uint32_t node_count(const unsigned char *pool, uint64_t ref)
{
    int t = HISPI_REF_TYPE(ref);
    return hispi_node_is_dense(t) ? 0 : hispi_rd32(pool + HISPI_REF_OFF(ref));
}

static int queue_of(const unsigned char *pool, uint64_t ref)
{
    return hispi_sched_spmv_queue(HISPI_REF_TYPE(ref), node_count(pool, ref));
}

static void count_nodes(const hispi_hisparse *h, uint64_t ref, uint64_t *cap)
{
    const unsigned char *pool = h->pool->base, *node = pool + HISPI_REF_OFF(ref);
    int t = HISPI_REF_TYPE(ref);
    cap[queue_of(pool, ref)]++;
    if (hispi_node_is_leaf(t)) return;
    if (hispi_node_is_dense(t)) {
        for (uint64_t s = 0; s < (uint64_t)h->d * (uint64_t)h->d; s++) {
            uint64_t c = hispi_rd64(node + 8 * s);
            if (c) count_nodes(h, c, cap);
        }
        return;
    }
    uint64_t n = hispi_rd32(node), np, pay = hispi_coo_payload(n, 8, &np);
    for (uint64_t k = 0; k < n; k++)
        count_nodes(h, hispi_rd64(node + pay + 8 * k), cap);
}

void hispi_sched_spmv_caps(const hispi_hisparse *h, const hispi_sched_policy *p, uint64_t *cap,
                           int *root_queue)
{
    memset(cap, 0, sizeof(uint64_t) * (size_t)p->nqueues);
    *root_queue = 0;
    if (!h->root) return;
    *root_queue = queue_of(h->pool->base, h->root);
    count_nodes(h, h->root, cap);
}

/* Upper bounds of the queues' fills from the node counts per level: an
 * inner queue holds at most the inner nodes, a leaf queue the leaves (the
 * dense one the dense leaves). */
static hisp_status caps_of_census(hisp_context ctx, hispi_hisparse *h, const hispi_sched_policy *p,
                                  uint64_t *cap)
{
    HISPI_TRY(hispi_hisparse_census(ctx, h));
    uint64_t inner = 0, leaves = (uint64_t)h->census.nodes[h->depth - 1];
    for (int l = 0; l + 1 < h->depth; l++)
        inner += (uint64_t)h->census.nodes[l];
    memset(cap, 0, sizeof(uint64_t) * (size_t)p->nqueues);
    for (int q = 0; q < p->nqueues; q++)
        cap[q] = q < HISPI_SQ_LEAF_1 ? inner : leaves;
    if (p->nqueues > HISPI_SQ_LEAF_DENSE)
        cap[HISPI_SQ_LEAF_DENSE] = (uint64_t)h->census.dense_leaves;
    return HISP_SUCCESS;
}

/* ---- output owners (CPU devices) ------------------------------------------ */

typedef struct {
    const hispi_hs_view *v;
    uint64_t *w[2];   /* leaf work per block row / column */
    uint64_t *cnt[2]; /* leaves per (block, leaf queue): [block * 4 + q - 4] */
    uint64_t inner[HISPI_SQ_SPMV];
} owners_walk;

/* Leaf work: its entries plus a constant for the node itself (header,
 * queue entry), so that blocks of single-entry leaves weigh what they cost. */
static void owners_visit(owners_walk *w, uint64_t ref, uint64_t row, uint64_t col, int depth)
{
    const hispi_hs_view *v = w->v;
    const unsigned char *node = v->pool + HISPI_REF_OFF(ref);
    int t = HISPI_REF_TYPE(ref);
    uint32_t n = hispi_node_is_dense(t) ? 0 : hispi_rd32(node);
    int q = hispi_sched_spmv_queue(t, n);
    if (hispi_node_is_leaf(t)) {
        uint64_t br = row >> v->log2d, bc = col >> v->log2d;
        uint64_t work = 8 + (hispi_node_is_dense(t) ? (uint64_t)v->d * (uint64_t)v->d / 2 : n);
        w->w[0][br] += work;
        w->w[1][bc] += work;
        w->cnt[0][br * 4 + (uint64_t)(q - 4)]++;
        w->cnt[1][bc * 4 + (uint64_t)(q - 4)]++;
        return;
    }
    w->inner[q]++;
    int sh = v->log2d * (v->depth - 1 - depth);
    if (hispi_node_is_dense(t)) {
        for (uint64_t s = 0; s < (uint64_t)v->d * (uint64_t)v->d; s++) {
            uint64_t c = hispi_rd64(node + 8 * s);
            if (c)
                owners_visit(w, c, row + ((s >> v->log2d) << sh),
                             col + ((s & (uint64_t)(v->d - 1)) << sh), depth + 1);
        }
        return;
    }
    uint64_t np, pay = hispi_coo_payload(n, 8, &np);
    for (uint64_t k = 0; k < n; k++)
        owners_visit(w, hispi_rd64(node + pay + 8 * k), row + ((uint64_t)node[4 + 2 * k] << sh),
                     col + ((uint64_t)node[5 + 2 * k] << sh), depth + 1);
}

void hispi_sched_owners_free(hispi_sched_owners *o)
{
    for (int k = 0; k < 2; k++) {
        free(o->part[k]);
        free(o->first[k]);
        free(o->cap[k]);
    }
    memset(o, 0, sizeof *o);
}

hisp_status hispi_sched_spmv_owners(hisp_context ctx, const hispi_hs_view *v, int nparts,
                                    hispi_sched_owners *o)
{
    memset(o, 0, sizeof *o);
    if (nparts < 1 || nparts > HISPI_SCHED_MAX_PARTS || v->nqueues != HISPI_SQ_SPMV)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "owner ranges: %d parts, %d queues",
                          nparts, v->nqueues);
    owners_walk w;
    memset(&w, 0, sizeof w);
    w.v = v;
    o->nparts = nparts;
    hisp_status s = HISP_SUCCESS;
    for (int k = 0; k < 2 && !s; k++) {
        int64_t len = k ? v->ncols : v->nrows;
        int64_t nb = (len + v->d - 1) >> v->log2d;
        o->nblocks[k] = nb;
        s = hispi_calloc(ctx, (size_t)(nb ? nb : 1), sizeof *w.w[k], (void **)&w.w[k]);
        if (!s)
            s = hispi_calloc(ctx, (size_t)(nb ? nb : 1), 4 * sizeof *w.cnt[k], (void **)&w.cnt[k]);
        if (!s) s = hispi_alloc(ctx, (size_t)(nb ? nb : 1), 1, (void **)&o->part[k]);
        if (!s)
            s = hispi_alloc(ctx, (size_t)nparts + 1, sizeof *o->first[k], (void **)&o->first[k]);
        if (!s)
            s = hispi_calloc(ctx, (size_t)v->nqueues * (size_t)nparts, sizeof *o->cap[k],
                             (void **)&o->cap[k]);
    }
    if (!s && v->root) owners_visit(&w, v->root, 0, 0, 0);
    for (int k = 0; k < 2 && !s; k++) {
        int64_t nb = o->nblocks[k];
        uint64_t total = 0, acc = 0;
        for (int64_t b = 0; b < nb; b++)
            total += w.w[k][b];
        /* greedy: range p ends at the first block where the running work
         * reaches (p + 1) / nparts of the total */
        int p = 0;
        o->first[k][0] = 0;
        for (int64_t b = 0; b < nb; b++) {
            while (p + 1 < nparts && acc > 0 && acc >= (uint64_t)((double)total * (p + 1) / nparts))
                o->first[k][++p] = (uint32_t)b;
            o->part[k][b] = (uint8_t)p;
            acc += w.w[k][b];
            for (int q = 0; q < 4; q++)
                o->cap[k][(size_t)(4 + q) * (size_t)nparts + (size_t)p] += w.cnt[k][b * 4 + q];
        }
        while (p + 1 <= nparts)
            o->first[k][++p] = (uint32_t)nb;
        for (int q = 0; q < 4; q++)
            o->cap[k][(size_t)q * (size_t)nparts] = w.inner[q];
    }
    for (int k = 0; k < 2; k++) {
        free(w.w[k]);
        free(w.cnt[k]);
    }
    if (s) hispi_sched_owners_free(o);
    return s;
}

/* ---- the host simulation -------------------------------------------------- */

typedef struct {
    const unsigned char *pool;
    const hispi_sched_args *a;
    hispi_sched_entry *e;                 /* all queues, queue q from base[q] */
    uint64_t base[HISP_SCHED_MAX_QUEUES]; /* first slot of each queue */
    uint64_t cap[HISP_SCHED_MAX_QUEUES];  /* its slots */
    uint64_t head[HISP_SCHED_MAX_QUEUES]; /* entries taken by launches */
    uint64_t tail[HISP_SCHED_MAX_QUEUES]; /* entries queued (the fill counter) */
    const void *x;
    void *y;
    bool overflow;
} sim;

static void push(sim *s, uint64_t ref, uint64_t row, uint64_t col, uint32_t depth)
{
    int q = queue_of(s->pool, ref);
    if (s->tail[q] >= s->cap[q]) {
        s->overflow = true;
        return;
    }
    s->e[s->base[q] + s->tail[q]++] =
        (hispi_sched_entry){ref, (uint32_t)row, (uint32_t)col, depth, 0};
}

/* y[i] += v in the entry type. */
static void add_y(sim *s, uint64_t i, double v32or64, float v32)
{
    if (s->a->type == HISP_F32)
        ((float *)s->y)[i] += v32;
    else
        ((double *)s->y)[i] += v32or64;
}

static void leaf_entry(sim *s, uint64_t r, uint64_t c, const unsigned char *p)
{
    bool tr = s->a->transposed;
    uint64_t yi = tr ? c : r, xi = tr ? r : c;
    if (s->a->type == HISP_F32) {
        float v;
        memcpy(&v, p, 4);
        add_y(s, yi, 0, (float)s->a->alpha * v * ((const float *)s->x)[xi]);
    } else {
        double v;
        memcpy(&v, p, 8);
        add_y(s, yi, s->a->alpha * v * ((const double *)s->x)[xi], 0);
    }
}

static void process(sim *s, const hispi_sched_entry *en)
{
    const hispi_sched_args *a = s->a;
    const unsigned char *node = s->pool + HISPI_REF_OFF(en->ref);
    int t = HISPI_REF_TYPE(en->ref), d = a->d;
    bool leaf = hispi_node_is_leaf(t);
    size_t es = leaf ? hisp_type_size(a->type) : 8;
    int sh = a->log2d * (a->depth - 1 - (int)en->depth);
    if (hispi_node_is_dense(t)) {
        for (int rd = 0; rd < d; rd++)
            for (int cd = 0; cd < d; cd++) {
                const unsigned char *p = node + ((size_t)rd * (size_t)d + (size_t)cd) * es;
                if (leaf) {
                    if (!hispi_bytes_zero(p, es)) leaf_entry(s, en->row + rd, en->col + cd, p);
                } else {
                    uint64_t c = hispi_rd64(p);
                    if (c)
                        push(s, c, en->row + ((uint64_t)rd << sh), en->col + ((uint64_t)cd << sh),
                             en->depth + 1);
                }
            }
        return;
    }
    uint64_t n = hispi_rd32(node), np, pay = hispi_coo_payload(n, es, &np);
    for (uint64_t k = 0; k < n; k++) {
        uint64_t rd = node[4 + 2 * k], cd = node[5 + 2 * k];
        const unsigned char *p = node + pay + k * es;
        if (leaf)
            leaf_entry(s, en->row + rd, en->col + cd, p);
        else
            push(s, hispi_rd64(p), en->row + (rd << sh), en->col + (cd << sh), en->depth + 1);
    }
}

size_t hispi_sched_host_entries(const uint64_t *cap, int nqueues)
{
    uint64_t total = 0;
    for (int q = 0; q < nqueues; q++)
        total += cap[q];
    return (size_t)total;
}

hisp_status hispi_sched_spmv_host(hisp_context ctx, const unsigned char *pool,
                                  const hispi_sched_args *a, const uint64_t *cap, const void *x,
                                  void *y, hisp_sched_counts *counts)
{
    return hispi_sched_spmv_host_in(ctx, pool, a, cap, NULL, x, y, counts);
}

hisp_status hispi_sched_spmv_host_in(hisp_context ctx, const unsigned char *pool,
                                     const hispi_sched_args *a, const uint64_t *cap,
                                     hispi_sched_entry *entries, const void *x, void *y,
                                     hisp_sched_counts *counts)
{
    const hispi_sched_policy *p = a->policy;
    /* the queues' memory before y is written: a failure leaves y as it was */
    hispi_sched_entry *own = NULL;
    if (a->root && !entries) {
        HISPI_TRY(hispi_alloc(ctx, hispi_sched_host_entries(cap, p->nqueues), sizeof *own,
                              (void **)&own));
        entries = own;
    }
    memset(counts, 0, sizeof *counts);
    counts->queues = p->nqueues;
    for (int64_t i = 0; i < a->ny; i++) {
        if (a->type == HISP_F32)
            ((float *)y)[i] = a->beta == 0 ? 0.0f : (float)a->beta * ((float *)y)[i];
        else
            ((double *)y)[i] = a->beta == 0 ? 0.0 : a->beta * ((double *)y)[i];
    }
    if (!a->root) return HISP_SUCCESS;
    sim s;
    memset(&s, 0, sizeof s);
    s.pool = pool;
    s.a = a;
    s.x = x;
    s.y = y;
    uint64_t total = 0;
    for (int q = 0; q < p->nqueues; q++) {
        s.base[q] = total;
        s.cap[q] = cap[q];
        total += cap[q];
    }
    s.e = entries;
    push(&s, a->root, 0, 0, 0);
    for (;;) {
        uint64_t pending[HISP_SCHED_MAX_QUEUES], end[HISP_SCHED_MAX_QUEUES];
        bool launch[HISP_SCHED_MAX_QUEUES];
        for (int q = 0; q < p->nqueues; q++) {
            pending[q] = s.tail[q] - s.head[q];
            end[q] = s.tail[q]; /* what the round's launches see */
        }
        if (!hispi_sched_pick(p, pending, launch)) break;
        counts->rounds++;
        for (int q = 0; q < p->nqueues; q++) {
            if (!launch[q]) continue;
            for (uint64_t i = s.head[q]; i < end[q]; i++)
                process(&s, &s.e[s.base[q] + i]);
            counts->nodes[q] += (int64_t)(end[q] - s.head[q]);
            counts->launches[q]++;
            s.head[q] = end[q];
        }
    }
    free(own);
    if (s.overflow)
        return hispi_fail(ctx, HISP_ERR_BACKEND, "scheduler queue overflow (capacities wrong)");
    for (int q = 0; q < p->nqueues; q++) {
        counts->total_nodes += counts->nodes[q];
        counts->total_launches += counts->launches[q];
    }
    return HISP_SUCCESS;
}

/* ---- dispatch --------------------------------------------------------------- */

hispi_hs_hooks hispi_hs_hook;

/* The context's settle hook while an SpMV's counts are with the backend:
 * cleared, then the counts fetched with the scheduler's check. */
static hisp_status settle_counts(hisp_context ctx)
{
    ctx->settle = NULL;
    return HISPI_BE(ctx, hisparse_counts, &ctx->sched);
}

hisp_status hispi_sched_settle(hisp_context ctx)
{
    if (ctx->settle != settle_counts) return HISP_SUCCESS;
    return settle_counts(ctx);
}

static hisp_status spmv_held(hisp_context ctx, hisp_op op, double alpha, hisp_matrix A,
                             hisp_vector x, double beta, hisp_vector y)
{
    const hisp_backend_ops *o = ctx->ops;
    hispi_hisparse *h = A->hs;
    if (!HISPI_BE_HAS(ctx, hisparse_spmv))
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                          "the %s backend has no HiSparse SpMV; convert the matrix to CSR",
                          o->name);
    if (h->type != HISP_F32 && h->type != HISP_F64)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                          "HiSparse SpMV on %s entries is not implemented yet",
                          hisp_type_name(h->type));
    if (h->nrows > INT32_MAX || h->ncols > INT32_MAX)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "HiSparse SpMV: dimensions beyond 2^31-1");
    hispi_sched_policy pol;
    hispi_sched_spmv_policy(h->d, h->type, &pol);
    int rq = 0;
    /* the family's device pool, brought up to date (only bytes the device
     * lacks move); the handle's SpMV state (queues, replay plans) is made
     * once over it, and again when the pool moved */
    void *pool_dev = NULL;
    HISPI_TRY(hispi_pool_device(ctx, h->pool, &pool_dev));
    /* a tree only the device holds (an addition's result) is never read on
     * the host: queue capacities from its census, the root's count kept */
    bool dev_only = h->root && hispi_pool_region_of(h->pool, HISPI_REF_OFF(h->root));
    uint32_t root_n = 0;
    HISPI_TRY(hispi_hisparse_root_count(ctx, h, &root_n));
    if (A->hs_dev && A->hs_dev_gen != h->pool->dev_gen) {
        HISPI_TRY(hispi_sched_settle(ctx)); /* its scheduled run may be in flight */
        HISPI_BE_VOID(ctx, hisparse_free, A->hs_dev);
        A->hs_dev = NULL;
        hispi_pool_dev_release(ctx, h->pool);
        if (!h->pool->dev) HISPI_TRY(hispi_pool_device(ctx, h->pool, &pool_dev));
    }
    if (!A->hs_dev) { /* the tree of a handle never changes: upload once */
        hispi_hs_view v;
        memset(&v, 0, sizeof v);
        v.type = h->type;
        v.d = h->d;
        v.log2d = h->log2d;
        v.depth = h->depth;
        v.nrows = h->nrows;
        v.ncols = h->ncols;
        v.pool = dev_only ? NULL : h->pool->base;
        v.pool_bytes = h->pool->used;
        v.root_n = root_n;
        v.pool_dev = pool_dev;
        v.nqueues = pol.nqueues;
        v.root = h->root;
        if (dev_only)
            HISPI_TRY(caps_of_census(ctx, h, &pol, v.cap));
        else
            hispi_sched_spmv_caps(h, &pol, v.cap, &rq);
        h->pool->dev_users++;
        hisp_status s = HISPI_BE(ctx, hisparse_upload, &v, &A->hs_dev);
        if (s) {
            A->hs_dev = NULL;
            hispi_pool_dev_release(ctx, h->pool);
            return s;
        }
        A->hs_dev_gen = h->pool->dev_gen;
    }
    rq = h->root ? hispi_sched_spmv_queue(HISPI_REF_TYPE(h->root), root_n) : 0;
    bool tr = h->transposed != (op == HISP_OP_T);
    hispi_sched_args a = {&pol,
                          h->type,
                          h->root,
                          rq,
                          h->d,
                          h->log2d,
                          h->depth,
                          tr,
                          alpha * h->scale,
                          beta,
                          tr ? h->nrows : h->ncols,
                          tr ? h->ncols : h->nrows};
    void *xd = NULL, *yd = NULL;
    HISPI_TRY(hispi_vector_device(x, true, &xd));
    HISPI_TRY(hispi_vector_device(y, beta != 0, &yd));
    hisp_sched_counts c;
    memset(&c, 0, sizeof c);
    memset(&ctx->sched, 0, sizeof ctx->sched);
    if (ctx->settle == settle_counts) ctx->settle = NULL;
    HISPI_TRY(HISPI_BE(ctx, hisparse_spmv, A->hs_dev, &a, xd, yd, &c));
    hispi_vector_device_written(y);
    ctx->sched = c;
    if (HISPI_BE_HAS(ctx, hisparse_counts)) ctx->settle = settle_counts;
    return HISP_SUCCESS;
}

/* Exclusive: the family's device copy is brought up to date (and may move)
 * and the handle's state made over it. */
hisp_status hispi_hisparse_spmv(hisp_context ctx, hisp_op op, double alpha, hisp_matrix A,
                                hisp_vector x, double beta, hisp_vector y)
{
    hispi_pool *p = A->hs->pool;
    hispi_family_lock(p, true);
    hisp_status s = spmv_held(ctx, op, alpha, A, x, beta, y);
    hispi_family_unlock(p);
    return s;
}
