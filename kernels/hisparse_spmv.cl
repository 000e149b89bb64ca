/* HiSparse SpMV node kernels: the OpenCL side of the dynamic scheduler
 * (core/hisparse/hisparse_sched.h; docs/FORMAT.md for the node bytes).
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

/* atomic_add_real comes from the prelude (kernels/common.cl) */
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

/* The queue of child c. Only a COO4 child's entry count decides its
 * queue (COO1: one entry, COO2: two, dense: dense), so only a COO4 child's
 * header is read: the other children point the load at the pool header
 * (always cached). Branch-free: the children of one node mix types
 * unpredictably. */
int queue_of(__global const uchar *pool, ulong c)
{
    int t = (int)(c & 15);
    int leaf = t >= 5, lt = t - (leaf ? 4 : 0); /* 1 dense, 2 COO1, 3 COO2, 4 COO4 */
    uint n = *(__global const uint *)(pool + (lt == 4 ? (c & ~(ulong)15) : 0));
    int q = lt == 1 ? 3 : lt == 2 ? 0 : lt == 3 ? 1 : 1 + (n > FEW);
    return q + (leaf ? 4 : 0);
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
        put(qe, base[q] + at[q]++, c, e.row + ((s >> log2d) << sh), e.col + ((s & (d - 1)) << sh),
            e.depth + 1);
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

/* ---- owner mapping (CPU devices) -------------------------------------------
 *
 * The output blocks (d rows of y, or d columns when transposed) are cut at
 * upload into P ranges of about equal leaf work (hispi_sched_spmv_owners);
 * every leaf queue is split into P sub-queues, one per range, and inner
 * nodes append a leaf child to the sub-queue of its block. One work-item
 * owns one range: it processes the range's pending leaves of every picked
 * leaf queue in one launch, so y is written without atomics (kernels of
 * one in-order queue do not overlap). Counters: tail[q * P + p] (inner
 * queues use p = 0), then head[(q - 4) * P + p] of the leaf sub-queues,
 * advanced by the leaf kernel itself. The leaf kernel is enqueued before
 * the round's inner kernel, so the tails it reads are the ones the host
 * read at the start of the round. */

#ifndef MAX_PARTS
#define MAX_PARTS 64
#endif

/* A work-item's node's children, in chunks of CHUNK: classify each child
 * once (queue and range, kept in private memory), reserve the chunk's
 * slots with one atomic_add per non-empty (queue, range), then write the
 * entries. Pair index i: 0..3 the inner queues, 4 + (q - 4) * P + p the
 * leaf sub-queues; its counter is tail[q * P + p]. */
#define CHUNK 256
void own_push_children(__global const uchar *pool, __global entry_t *qe,
                       volatile __global uint *tail, __global const ulong *base, const uint P,
                       __global const uchar *part, const uint log2d, const uint depth_l,
                       const int tr, entry_t e)
{
    __global const uchar *nd = pool + (e.ref & ~(ulong)15);
    uint t = (uint)(e.ref & 15);
    uint sh = log2d * (depth_l - 1 - e.depth);
    uint d = 1u << log2d;
    int dense = t == 1;
    uint n = dense ? d * d : *(__global const uint *)nd;
    __global const ulong *pay = (__global const ulong *)(dense ? nd : nd + coo_payload(n, 8));
    uint cnt[4 + 4 * MAX_PARTS];
    ushort pair[CHUNK];
    uint nc = 4 + 4 * P;
    for (uint k0 = 0; k0 < n; k0 += CHUNK) {
        uint k1 = min(n, k0 + CHUNK);
        for (uint i = 0; i < nc; i++)
            cnt[i] = 0;
        for (uint k = k0; k < k1; k++) {
            ulong c = pay[k];
            if (!c) continue; /* an empty cell of a dense node */
            int q = queue_of(pool, c);
            uint r, cl;
            if (dense) {
                r = e.row + ((k >> log2d) << sh);
                cl = e.col + ((k & (d - 1)) << sh);
            } else {
                r = e.row + ((uint)nd[4 + 2 * k] << sh);
                cl = e.col + ((uint)nd[5 + 2 * k] << sh);
            }
            uint pb = part[(tr ? cl : r) >> log2d]; /* in range for inner children too */
            uint i = q < 4 ? (uint)q : 4 + (q - 4) * P + pb;
            pair[k - k0] = (ushort)i;
            cnt[i]++;
        }
        for (uint i = 0; i < nc; i++)
            if (cnt[i]) cnt[i] = atomic_add(&tail[i < 4 ? i * P : i + 4 * P - 4], cnt[i]);
        for (uint k = k0; k < k1; k++) {
            ulong c = pay[k];
            if (!c) continue;
            uint r, cl;
            if (dense) {
                r = e.row + ((k >> log2d) << sh);
                cl = e.col + ((k & (d - 1)) << sh);
            } else {
                r = e.row + ((uint)nd[4 + 2 * k] << sh);
                cl = e.col + ((uint)nd[5 + 2 * k] << sh);
            }
            uint i = pair[k - k0];
            put(qe, base[i < 4 ? i * P : i + 4 * P - 4] + cnt[i]++, c, r, cl, e.depth + 1);
        }
    }
}

/* The picked inner queues of a round in one launch: work-item i takes
 * entry i of the concatenation of the four ranges [first_q, first_q + n_q). */
__kernel void hs_own_inner(__global const uchar *pool, __global entry_t *qe,
                           volatile __global uint *tail, __global const ulong *base, const uint P,
                           __global const uchar *part, const uint log2d, const uint depth_l,
                           const int tr, const ulong f0, const ulong n0, const ulong f1,
                           const ulong n1, const ulong f2, const ulong n2, const ulong f3,
                           const ulong n3)
{
    ulong i = get_global_id(0), at;
    if (i < n0)
        at = f0 + i;
    else if ((i -= n0) < n1)
        at = f1 + i;
    else if ((i -= n1) < n2)
        at = f2 + i;
    else if ((i -= n2) < n3)
        at = f3 + i;
    else
        return;
    own_push_children(pool, qe, tail, base, P, part, log2d, depth_l, tr, qe[at]);
}

#if IS_DOUBLE
typedef double4 real4;
typedef long4 mask4;
#define AS_MASK4(v) as_long4(v)
#else
typedef float4 real4;
typedef int4 mask4;
#define AS_MASK4(v) as_int4(v)
#endif

/* One leaf, its entries added into y (owned: plain read-modify-write).
 * Dense leaves skip slots whose bytes are all zero (empty cells); y = A x
 * sums each row with vector accumulators. COO leaves, y = A x: a leaf with
 * at least 2d entries sums each row's run (runs are long); a sparser one
 * adds entry by entry (runs of one or two entries make the run test a
 * mispredicted branch per entry). y = A^T x: each entry to its column.
 * (Forcing this function inline made f32 y = A x much slower on PoCL.) */
void own_leaf(__global const uchar *restrict pool, entry_t e, const uint log2d, const int tr,
              const real alpha, __global const real *restrict x, __global real *restrict y)
{
    __global const uchar *nd = pool + (e.ref & ~(ulong)15);
    uint t = (uint)(e.ref & 15);
    uint n = *(__global const uint *)nd;
    __global const uchar *rc = nd + 4;
    if (t == 6) { /* one entry: the value at offset 8 (f32 and f64) */
        real v = *(__global const real *)(nd + 8);
        uint r = rc[0], c = rc[1];
        if (tr)
            y[e.col + c] += alpha * v * x[e.row + r];
        else
            y[e.row + r] += alpha * v * x[e.col + c];
        return;
    }
    uint d = 1u << log2d;
    if (t == 5) {
        __global const real *val = (__global const real *)nd;
        if (!tr) {
            __global const real *xs = x + e.col;
            for (uint i = 0; i < d; i++) {
                __global const real *row = val + i * d;
                real4 s0 = 0, s1 = 0;
                mask4 any = 0;
                uint j = 0;
                for (; j + 8 <= d; j += 8) {
                    real4 v0 = vload4(0, row + j), v1 = vload4(1, row + j);
                    mask4 m0 = AS_MASK4(v0) != 0, m1 = AS_MASK4(v1) != 0;
                    s0 += select((real4)0, v0 * vload4(0, xs + j), m0);
                    s1 += select((real4)0, v1 * vload4(1, xs + j), m1);
                    any |= m0 | m1;
                }
                if (j < d) { /* d = 4 */
                    real4 v0 = vload4(0, row + j);
                    mask4 m0 = AS_MASK4(v0) != 0;
                    s0 += select((real4)0, v0 * vload4(0, xs + j), m0);
                    any |= m0;
                }
                s0 += s1;
                if (any.x | any.y | any.z | any.w)
                    y[e.row + i] += alpha * (s0.x + s0.y + s0.z + s0.w);
            }
        } else {
            __global real *ys = y + e.col;
            for (uint j = 0; j < d; j++) {
                real xj = alpha * x[e.row + j];
                __global const real *row = val + j * d;
                for (uint i = 0; i < d; i++) {
                    real v = row[i];
                    if (BITS(v) != 0) ys[i] += v * xj;
                }
            }
        }
        return;
    }
    __global const real *val = (__global const real *)(nd + coo_payload(n, sizeof(real)));
    if (tr) {
        __global const real *xs = x + e.row;
        __global real *ys = y + e.col;
        for (uint k = 0; k < n; k++)
            ys[rc[2 * k + 1]] += alpha * val[k] * xs[rc[2 * k]];
        return;
    }
    __global const real *xs = x + e.col;
    __global real *ys = y + e.row;
    if (n < 2 * d) {
        for (uint k = 0; k < n; k++)
            ys[rc[2 * k]] += alpha * val[k] * xs[rc[2 * k + 1]];
        return;
    }
    uint key = rc[0];
    real sum = 0;
    for (uint k = 0; k < n; k++) {
        uint r = rc[2 * k];
        if (r != key) {
            ys[key] += alpha * sum;
            sum = 0;
            key = r;
        }
        sum += val[k] * xs[rc[2 * k + 1]];
    }
    ys[key] += alpha * sum;
}

/* The picked leaf queues of a round, range p = work-item p. The host
 * passes the picked leaf queues (bit q - 4 of `mask`), or, with `devpick`,
 * the kernel picks them itself with hispi_sched_pick's rule (thresholds
 * `thr`, entries served so far `done`) from the counters the previous
 * launch left: the host enqueues the next round's leaf kernel right behind
 * an inner kernel instead of reading the counters first, and later applies
 * the same rule to the same counters for its counts. Every work-item
 * computes the same choice (the counters it reads do not change in this
 * launch). `scale`: the first leaf launch of the SpMV also does
 * y = beta * y on the range's outputs (y = 0 without reading y when beta
 * is 0) before adding into them. */
__kernel void hs_own_leaves(__global const uchar *restrict pool,
                            __global const entry_t *restrict qe, __global uint *restrict ctr,
                            __global const ulong *restrict base, const uint P, uint mask,
                            __global const uint *restrict first, const uint log2d, const int tr,
                            const real alpha, __global const real *restrict x,
                            __global real *restrict y, const int scale, const real beta,
                            const ulong ny, const int devpick, const uint8 thr, const uint8 done)
{
    uint p = (uint)get_global_id(0);
    if (p >= P) return;
    if (devpick) {
        uint thv[8] = {thr.s0, thr.s1, thr.s2, thr.s3, thr.s4, thr.s5, thr.s6, thr.s7};
        uint dnv[8] = {done.s0, done.s1, done.s2, done.s3, done.s4, done.s5, done.s6, done.s7};
        uint pend[8], pick = 0;
        for (uint q = 0; q < 8; q++) {
            uint sum = 0;
            for (uint i = 0; i < P; i++)
                sum += ctr[q * P + i];
            pend[q] = sum - dnv[q];
            if (pend[q] > 0 && pend[q] >= thv[q]) pick |= 1u << q;
        }
        if (!pick)
            for (uint q = 0; q < 8; q++)
                if (pend[q] > 0) pick |= 1u << q;
        mask = pick >> 4;
    }
    if (scale) {
        ulong r1 = min(ny, (ulong)first[p + 1] << log2d);
        for (ulong r = (ulong)first[p] << log2d; r < r1; r++)
            y[r] = beta == (real)0 ? (real)0 : beta * y[r];
    }
    __global uint *head = ctr + 8 * P;
    for (uint q = 0; q < 4; q++) {
        if (!((mask >> q) & 1)) continue;
        uint ti = (4 + q) * P + p, hi = q * P + p;
        uint h = head[hi], t = ctr[ti];
        head[hi] = t;
        __global const entry_t *qs = qe + base[ti];
        if (q == 0) { /* leaf-1: COO1 leaves only, value at offset 8 (f32 and f64) */
            for (uint k = h; k < t; k++) {
                entry_t e = qs[k];
                __global const uchar *nd = pool + (e.ref & ~(ulong)15);
                real v = alpha * *(__global const real *)(nd + 8);
                uint r = e.row + nd[4], c = e.col + nd[5];
                if (tr)
                    y[c] += v * x[r];
                else
                    y[r] += v * x[c];
            }
            continue;
        }
        for (uint k = h; k < t; k++)
            own_leaf(pool, qs[k], log2d, tr, alpha, x, y);
    }
}
