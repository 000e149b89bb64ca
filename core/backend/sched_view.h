/* The backend contract's view of the HiSparse scheduler (owned by
 * core/backend/backend.h; the policy is core/hisparse/hisparse_sched.c, the
 * background core/hisparse/hisparse_sched.h): the queues and their policy,
 * the tree a backend's hisparse_upload receives (hispi_hs_view), one SpMV's
 * arguments (hispi_sched_args; the counts are the public hisp_sched_counts)
 * and the policy functions a backend's controller calls. Includes only the
 * contract's basics. */
#ifndef HISPI_BACKEND_SCHED_VIEW_H
#define HISPI_BACKEND_SCHED_VIEW_H

#include "backend/basics.h"

/* The pool's nodes as a backend reads them (docs/FORMAT.md): node types in
 * the low 4 bits of a child reference. */
enum {
    HISPI_NODE_INVALID = 0,
    HISPI_INNER_DENSE = 1,
    HISPI_INNER_COO1 = 2,
    HISPI_INNER_COO2 = 3,
    HISPI_INNER_COO4 = 4,
    HISPI_LEAF_DENSE = 5,
    HISPI_LEAF_COO1 = 6,
    HISPI_LEAF_COO2 = 7,
    HISPI_LEAF_COO4 = 8,
    HISPI_NODE_TYPES = 9
};

#define HISPI_REF_OFF(r) ((r) & ~(uint64_t)15)
#define HISPI_REF_TYPE(r) ((int)((r)&15))

static inline bool hispi_node_is_leaf(int t)
{
    return t >= HISPI_LEAF_DENSE;
}
static inline bool hispi_node_is_dense(int t)
{
    return t == HISPI_INNER_DENSE || t == HISPI_LEAF_DENSE;
}
/* X of a COO node type (1, 2, 4), 0 for dense. */
static inline int hispi_node_x(int t)
{
    static const int x[HISPI_NODE_TYPES] = {0, 0, 1, 2, 4, 0, 1, 2, 4};
    return x[t];
}

/* The SpMV queues: node kind x entry-count bin. "1": one entry (COO1);
 * "few": 2..HISPI_SCHED_FEW entries; "many": more; "dense": a dense node
 * (d^2 slots, whatever it holds). The device kernels classify children
 * with the same rule (hispi_sched_spmv_queue). */
enum {
    HISPI_SQ_INNER_1 = 0,
    HISPI_SQ_INNER_FEW = 1,
    HISPI_SQ_INNER_MANY = 2,
    HISPI_SQ_INNER_DENSE = 3,
    HISPI_SQ_LEAF_1 = 4,
    HISPI_SQ_LEAF_FEW = 5,
    HISPI_SQ_LEAF_MANY = 6,
    HISPI_SQ_LEAF_DENSE = 7,
    HISPI_SQ_SPMV = 8 /* number of SpMV queues */
};
#define HISPI_SCHED_FEW 32

/* Node functions a queue runs. */
enum {
    HISPI_NF_INNER_COO = 0, /* queue each child */
    HISPI_NF_INNER_DENSE = 1,
    HISPI_NF_LEAF_COO = 2, /* SpMV: y += alpha * a_ij * x_j per entry */
    HISPI_NF_LEAF_DENSE = 3
};

typedef struct {
    const char *name;
    int fn;             /* HISPI_NF_* */
    int tpn;            /* threads per node: a power of two <= group */
    int group;          /* threads per work-group / block (group / tpn nodes each) */
    uint32_t threshold; /* launch rule, see hispi_sched_pick */
} hispi_sched_queue;

typedef struct {
    int nqueues;
    hispi_sched_queue q[HISP_SCHED_MAX_QUEUES];
} hispi_sched_policy;

/* One queue entry; the same 24 bytes on every backend (the kernels declare
 * the same struct). */
typedef struct {
    uint64_t ref;      /* child reference: pool offset | node type */
    uint32_t row, col; /* stored coordinates of the node's cell (0, 0) */
    uint32_t depth;    /* level: 0 = root, leaves at depth L-1 */
    uint32_t pad;
} hispi_sched_entry;

/* A HiSparse tree as a backend's upload sees it. */
typedef struct {
    hisp_type type;
    int d, log2d, depth;
    int64_t nrows, ncols;      /* of the stored tree */
    const unsigned char *pool; /* NULL: only the device holds the tree's bytes */
    uint64_t pool_bytes;       /* bytes [0, pool_bytes) hold the tree */
    /* the family's pool on the backend (a buf_alloc buffer owned by core,
     * core/hisparse/hisparse_dev.c): bytes [0, pool_bytes) valid, at least
     * round_up(pool_bytes, 16) + 16 allocated; the backend keeps using it
     * and never frees it */
    void *pool_dev;
    int nqueues;
    uint64_t cap[HISP_SCHED_MAX_QUEUES]; /* most entries queue q holds in one SpMV */
    uint64_t root;                       /* the handle's root reference (0 = empty) */
    uint32_t root_n;                     /* the root's entry count (COO; 0 dense) */
} hispi_hs_view;

/* Output owners for devices that run a work-group as a loop (CPUs): the
 * blocks of d output indices (block rows for y = A x, block columns for
 * y = A^T x) are cut into `nparts` contiguous ranges of about equal leaf
 * work; a leaf belongs to the range of its block. A device that gives each
 * range to one work-item per launch writes y without atomics. Index 0:
 * rows (y = A x on the stored tree), 1: columns. Every leaf queue q is
 * split into nparts sub-queues; cap[k][q * nparts + p] counts the nodes of
 * queue q in range p (the inner queues are not split: their whole count is
 * at p = 0), so the sub-queues never overflow. */
typedef struct {
    int nparts;
    int64_t nblocks[2];
    uint8_t *part[2];   /* part[k][block]: its range */
    uint32_t *first[2]; /* first[k][p]: the first block of range p; [nparts] = nblocks */
    uint64_t *cap[2];   /* [nqueues * nparts] */
} hispi_sched_owners;
#define HISPI_SCHED_MAX_PARTS 64

/* The owner ranges of the tree in v (v->root, the SpMV queues) for
 * 1 <= nparts <= HISPI_SCHED_MAX_PARTS; free with hispi_sched_owners_free. */
HISPI_LOCAL hisp_status hispi_sched_spmv_owners(hisp_context ctx, const hispi_hs_view *v,
                                                int nparts, hispi_sched_owners *o);
HISPI_LOCAL void hispi_sched_owners_free(hispi_sched_owners *o);

/* One SpMV as a backend's hisparse_spmv sees it. */
typedef struct {
    const hispi_sched_policy *policy;
    hisp_type type;
    uint64_t root; /* 0 = empty matrix */
    int root_queue;
    int d, log2d, depth;
    bool transposed; /* the tree's flag composed with op: y[c] += a_rc * x[r] */
    double alpha;    /* alpha times the matrix's scale */
    double beta;     /* y = beta * y first; 0: y is not read */
    int64_t nx, ny;  /* lengths of x and y */
} hispi_sched_args;

/* The SpMV policy for node size d and entry type t. */
HISPI_LOCAL void hispi_sched_spmv_policy(int d, hisp_type t, hispi_sched_policy *p);
/* The SpMV queue of a node of type `type` (HISPI_INNER_* / HISPI_LEAF_*)
 * with n entries (n is ignored for dense nodes). */
static inline int hispi_sched_spmv_queue(int type, uint32_t n)
{
    int leaf = type >= 5 ? 4 : 0;
    if (type == 1 || type == 5) return leaf + 3;
    return leaf + (n <= 1 ? 0 : n <= HISPI_SCHED_FEW ? 1 : 2);
}
/* The launch rule: queue q is launched when pending[q] >= its threshold;
 * when no queue qualifies, every queue with work is launched (so the
 * scheduler always progresses). launch[q] gets the choice; returns the
 * number of queues launched (0 = all empty: done). */
HISPI_LOCAL int hispi_sched_pick(const hispi_sched_policy *p, const uint64_t *pending,
                                 bool *launch);

/* The addition's queues (core/hisparse/hisparse_add.c, kernels/hisparse_add.cl):
 * an entry is a pair of nodes at one position, or in "one" a node of one
 * operand alone that is copied (scaled or transposed). Inner pairs, leaf
 * pairs of both COO nodes with at most HISPI_ADD_FEW entries together (a
 * work-item each), up to HISPI_ADD_MANY (a segment of a work-group each),
 * with a dense node or more entries (a work-group each). Rounds are levels:
 * every queue with work is launched in every round. */
enum {
    HISPI_AQ_INNER = 0,
    HISPI_AQ_LEAF_FEW = 1,
    HISPI_AQ_LEAF_MANY = 2,
    HISPI_AQ_LEAF_DENSE = 3,
    HISPI_AQ_ONE = 4,
    HISPI_AQ_ADD = 5 /* number of addition queues */
};
#define HISPI_ADD_FEW 64
/* Leaf pairs of more entries together go to the work-group queue
 * (HISPI_AQ_LEAF_DENSE): a segment of the leaf kernel would hold up its
 * group alone. The test hook hispi_hs_hook.add_leaf_max overrides. */
#define HISPI_ADD_MANY 8192
enum { HISPI_NF_ADD_PAIR = 4, HISPI_NF_ADD_SEQ = 5, HISPI_NF_ADD_ONE = 6, HISPI_NF_ADD_LEAF = 7 };
HISPI_LOCAL void hispi_sched_add_policy(hispi_sched_policy *p);

#endif
