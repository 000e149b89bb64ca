/* HiSparse SpMV node kernels: the OpenCL side of the dynamic scheduler
 * (core/hisparse_sched.h; docs/FORMAT.md for the node bytes).
 *
 * The host is the controller: each round it reads the queues' fill
 * counters, launches one of these kernels per queue with work on the
 * entries [first, first + count) queued before the round, and repeats. A
 * work-group of G = get_local_size(0) work-items takes G / tpn consecutive
 * entries, tpn work-items per node. Inner nodes queue their children
 * (atomic fill counter per queue, slots sized at upload so they never
 * overflow) for a later round; nothing here waits on work of its own
 * launch. Leaves add alpha * a_ij * x_j into y with compare-exchange loops
 * on the bit pattern (OpenCL 1.2 and PoCL 3.1 have no float atomics).
 *
 * Built with VALUE_T float | double, IS_DOUBLE 0 | 1, ATOM64 (64-bit
 * atomics, needed for double). Queue classification must match
 * hispi_sched_spmv_queue: inner 0..3, leaf 4..7 = one entry, 2..32 entries,
 * more, dense. */

/* hispi_sched_entry */
typedef struct {
    ulong ref;
    uint row, col, depth, pad;
} entry_t;

#define FEW 32

/* atomic_add_real comes from the prelude (kernels_cl/common.cl) */
#if IS_DOUBLE
#define BITS(v) as_ulong(v)
#else
#define BITS(v) as_uint(v)
#endif

/* y = beta*y, or 0 without reading y when beta == 0. */
__kernel void hs_scale_y(const ulong n, const real beta, __global real *y)
{
    size_t i = get_global_id(0);
    if (i >= n) return;
    y[i] = beta == (real)0 ? (real)0 : beta * y[i];
}

/* Offset of the payload of a COO node of n entries with slots of s bytes. */
ulong coo_payload(uint n, uint s)
{
    uint x = n == 1 ? 1 : n == 2 ? 2 : 4;
    uint np = (n + x - 1) / x * x;
    uint a = x * s < 16 ? x * s : 16;
    return (4 + 2 * np + a - 1) / a * a;
}

/* The queue of child c (reads a COO child's entry count). */
int queue_of(__global const uchar *pool, ulong c)
{
    int t = (int)(c & 15);
    int q;
    if (t == 1 || t == 5) {
        q = 3;
    } else {
        uint n = *(__global const uint *)(pool + (c & ~(ulong)15));
        q = n <= 1 ? 0 : n <= FEW ? 1 : 2;
    }
    return t >= 5 ? q + 4 : q;
}

void put(__global entry_t *qe, ulong at, ulong c, uint row, uint col, uint depth)
{
    entry_t e;
    e.ref = c;
    e.row = row;
    e.col = col;
    e.depth = depth;
    e.pad = 0;
    qe[at] = e;
}

/* The work-item's node: *node its index in [0, count), *t its rank among
 * the node's tpn work-items. */
#define NODE_PROLOGUE                                                                              \
    uint per = (uint)get_local_size(0) / tpn;                                                      \
    ulong node = (ulong)get_group_id(0) * per + get_local_id(0) / tpn;                             \
    uint t = (uint)get_local_id(0) % tpn;                                                          \
    if (node >= count) return;                                                                     \
    entry_t e = qe[first + node];                                                                  \
    __global const uchar *nd = pool + (e.ref & ~(ulong)15);

#define NODE_ARGS                                                                                  \
    __global const uchar *pool, __global entry_t *qe, volatile __global uint *tail,                \
        __global const ulong *base, const ulong first, const ulong count, const uint tpn,          \
        const uint log2d, const uint depth_l, const int tr, const real alpha,                      \
        __global const real *x, __global real *y

/* Inner nodes: each work-item counts its children per queue, reserves
 * their slots with one atomic_add per queue, then writes them (one
 * contended counter update per queue instead of one per child). */
#define RESERVE                                                                                    \
    uint at[8];                                                                                    \
    for (int q = 0; q < 8; q++)                                                                    \
        at[q] = cnt[q] ? atomic_add(&tail[q], cnt[q]) : 0;

__kernel void hs_inner_coo(NODE_ARGS)
{
    NODE_PROLOGUE
    uint sh = log2d * (depth_l - 1 - e.depth);
    uint n = *(__global const uint *)nd;
    __global const ulong *pay = (__global const ulong *)(nd + coo_payload(n, 8));
    uint cnt[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (uint k = t; k < n; k += tpn)
        cnt[queue_of(pool, pay[k])]++;
    RESERVE
    for (uint k = t; k < n; k += tpn) {
        int q = queue_of(pool, pay[k]);
        put(qe, base[q] + at[q]++, pay[k], e.row + ((uint)nd[4 + 2 * k] << sh),
            e.col + ((uint)nd[5 + 2 * k] << sh), e.depth + 1);
    }
}

__kernel void hs_inner_dense(NODE_ARGS)
{
    NODE_PROLOGUE
    uint sh = log2d * (depth_l - 1 - e.depth);
    uint d = 1u << log2d;
    __global const ulong *slot = (__global const ulong *)nd;
    uint cnt[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (uint s = t; s < d * d; s += tpn)
        if (slot[s]) cnt[queue_of(pool, slot[s])]++;
    RESERVE
    for (uint s = t; s < d * d; s += tpn) {
        ulong c = slot[s];
        if (!c) continue;
        int q = queue_of(pool, c);
        put(qe, base[q] + at[q]++, c, e.row + ((s >> log2d) << sh),
            e.col + ((s & (d - 1)) << sh), e.depth + 1);
    }
}

/* Each work-item takes a contiguous run of the entries (sorted row-major)
 * and sums runs with the same output index before one atomic add. */
__kernel void hs_leaf_coo(NODE_ARGS)
{
    NODE_PROLOGUE
    uint n = *(__global const uint *)nd;
    __global const real *val = (__global const real *)(nd + coo_payload(n, sizeof(real)));
    uint chunk = (n + tpn - 1) / tpn;
    uint k = t * chunk, k1 = min(n, k + chunk);
    if (k >= k1) return;
    uint key = tr ? e.col + nd[5 + 2 * k] : e.row + nd[4 + 2 * k];
    real sum = 0;
    for (; k < k1; k++) {
        uint r = e.row + nd[4 + 2 * k], c = e.col + nd[5 + 2 * k];
        uint yi = tr ? c : r, xi = tr ? r : c;
        if (yi != key) {
            atomic_add_real(&y[key], alpha * sum);
            sum = 0;
            key = yi;
        }
        sum += val[k] * x[xi];
    }
    atomic_add_real(&y[key], alpha * sum);
}

/* A dense leaf: work-item t sums rows t, t + tpn, ... (transposed: columns)
 * over the slots that hold an entry (non-zero bytes), one atomic per row. */
__kernel void hs_leaf_dense(NODE_ARGS)
{
    NODE_PROLOGUE
    uint d = 1u << log2d;
    __global const real *val = (__global const real *)nd;
    for (uint i = t; i < d; i += tpn) {
        real sum = 0;
        int any = 0;
        for (uint j = 0; j < d; j++) {
            real v = tr ? val[j * d + i] : val[i * d + j];
            if (BITS(v) != 0) {
                sum += v * x[(tr ? e.row : e.col) + j];
                any = 1;
            }
        }
        if (any) atomic_add_real(&y[(tr ? e.col : e.row) + i], alpha * sum);
    }
}
