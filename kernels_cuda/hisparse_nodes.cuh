/* HiSparse SpMV on CUDA: the node kernels of the dynamic scheduler, included
 * by hisparse.cu (whole-program module: host-launched kernels) and
 * hisparse_cdp.cu (relocatable module with the device-side controller),
 * so that a module without dynamic parallelism exists for
 * compute-sanitizer racecheck, which refuses modules with device launches.
 * Scheduler (core/hisparse/hisparse_sched.h; docs/FORMAT.md for the bytes).
 *
 * Node kernels: a block of G threads takes G / tpn consecutive entries of
 * one queue, tpn threads per node; one kernel per node function.
 * - Inner nodes queue their children. A block reserves the slots of a
 *   batch of children with one atomicAdd per queue: warps aggregate their
 *   lanes' children per queue in shared memory (__match_any_sync), then one
 *   thread per queue adds the block's count to the global fill counter. One
 *   global atomic per child on 8 counters serialised in L2
 *   (bench/results/hisparse-cuda-2026-11-22.md).
 * - Leaves add alpha * a_ij * x_j into y with red.global (no return
 *   value). Heavy COO leaves get a warp (a block per leaf ran a dependent
 *   chain of loads per block with most threads idle); lanes hold
 *   consecutive entries and a segmented warp reduction over runs of equal
 *   output indices leaves one add per run. A shared-memory accumulator per
 *   leaf was measured and dropped: slower (shared f64 atomics and the
 *   d-entry flush).
 * - Dense leaves: for y = A x one warp per row (coalesced loads, warp sum),
 *   for A^T x one thread per column (coalesced across threads).
 *
 * Controller (CDP2, CUDA 12+): no device-side synchronize exists, and a
 * child launched into cudaStreamFireAndForget need not start before its
 * parent ends. So a round is one single-thread grid: it reads the fill
 * counters, picks the queues (the rule of hispi_sched_pick), launches one
 * node kernel per picked queue (fire-and-forget), and launches itself into
 * cudaStreamTailLaunch, which runs after this grid and all its children have
 * finished; a round that finds every queue empty launches nothing and the
 * chain ends. Queue entries and counters written by another grid are read
 * with L1-bypassing loads (__ldcg), which DESIGN.md records as necessary
 * when grids overlap; here grid boundaries already order them, the loads
 * keep it safe if a variant ever overlaps rounds. */
#ifndef HISP_KERNELS_CUDA_HISPARSE_NODES_CUH
#define HISP_KERNELS_CUDA_HISPARSE_NODES_CUH

#include "cuda/cuda_hisparse.h"

#include <cstdint>

/* Internal linkage on purpose: each module gets its own copy, so a host
 * launch never resolves to the module with device launches. */
namespace
{

constexpr int FEW = 32;
constexpr unsigned NOKEY = 0xffffffffu;

struct entry_t { /* hispi_sched_entry */
    unsigned long long ref;
    unsigned row, col, depth, pad;
};
static_assert(sizeof(entry_t) == 24, "entry layout");

__device__ __forceinline__ entry_t load_entry(const entry_t *p)
{
    entry_t e;
    e.ref = __ldcg(&p->ref);
    e.row = __ldcg(&p->row);
    e.col = __ldcg(&p->col);
    e.depth = __ldcg(&p->depth);
    e.pad = 0;
    return e;
}

__device__ __forceinline__ unsigned long long coo_payload(unsigned n, unsigned s)
{
    /* x and a are powers of two (s is): masks, not the divisions the
     * compiler emits for a variable divisor (the band kernel runs this per
     * entry) */
    unsigned x = n == 1 ? 1 : n == 2 ? 2 : 4;
    unsigned np = (n + x - 1) & ~(x - 1);
    unsigned a = x * s < 16 ? x * s : 16;
    return (4 + 2 * np + a - 1) & ~(a - 1);
}

/* The queue of child c: hispi_sched_spmv_queue (reads a COO child's count). */
__device__ __forceinline__ int queue_of(const unsigned char *pool, unsigned long long c)
{
    int t = (int)(c & 15);
    int q;
    if (t == 1 || t == 5) {
        q = 3;
    } else {
        unsigned n = __ldg(reinterpret_cast<const unsigned *>(pool + (c & ~15ull)));
        q = n <= 1 ? 0 : n <= FEW ? 1 : 2;
    }
    return t >= 5 ? q + 4 : q;
}

/* Fire-and-forget global adds: the result is never needed, and `red` keeps
 * the compiler from waiting for it. No "memory" clobber: nothing in a node
 * kernel reads y, so loads may move across the adds (more loads in flight). */
__device__ __forceinline__ void red_add(float *p, float v)
{
    asm volatile("red.global.add.f32 [%0], %1;" ::"l"(p), "f"(v));
}
__device__ __forceinline__ void red_add(double *p, double v)
{
    asm volatile("red.global.add.f64 [%0], %1;" ::"l"(p), "d"(v));
}

/* Adds a into p[0] and b into p[1]. f32 on sm_90 has a vector reduction,
 * one L2 atomic operation for both when p is 8-byte aligned (the L2's
 * atomic units, not DRAM, bound leaves whose runs are one entry long);
 * otherwise, and for f64, two. */
__device__ __forceinline__ void red_add2(float *p, float a, float b)
{
#if __CUDA_ARCH__ >= 900
    if ((reinterpret_cast<unsigned long long>(p) & 7) == 0) {
        asm volatile("red.global.add.v2.f32 [%0], {%1, %2};" ::"l"(p), "f"(a), "f"(b));
        return;
    }
#endif
    red_add(p, a);
    red_add(p + 1, b);
}
__device__ __forceinline__ void red_add2(double *p, double a, double b)
{
    red_add(p, a);
    red_add(p + 1, b);
}
/* Adds v.x..v.w into p[0..3]: one operation where p is 16-byte aligned. */
__device__ __forceinline__ void red_add4(float *p, float4 v)
{
#if __CUDA_ARCH__ >= 900
    if ((reinterpret_cast<unsigned long long>(p) & 15) == 0) {
        asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(v.x), "f"(v.y),
                     "f"(v.z), "f"(v.w));
        return;
    }
#endif
    red_add(p, v.x), red_add(p + 1, v.y), red_add(p + 2, v.z), red_add(p + 3, v.w);
}

template <typename T> __device__ __forceinline__ bool nonzero_bits(T v);
template <> __device__ __forceinline__ bool nonzero_bits<float>(float v)
{
    return __float_as_uint(v) != 0;
}
template <> __device__ __forceinline__ bool nonzero_bits<double>(double v)
{
    return __double_as_longlong(v) != 0;
}

/* ---- inner nodes: queue the children ---------------------------------------- */

template <bool DENSE>
__global__ void __launch_bounds__(256)
    hs_inner(hisp_cuda_hs P, unsigned long long first, unsigned long long count, unsigned tpn)
{
    __shared__ unsigned s_cnt[HISP_CUDA_HS_QUEUES], s_at[HISP_CUDA_HS_QUEUES], s_iters;
    const unsigned per = blockDim.x / tpn;
    const unsigned long long node = (unsigned long long)blockIdx.x * per + threadIdx.x / tpn;
    const unsigned t = threadIdx.x % tpn;
    const unsigned log2d = (unsigned)P.log2d, d = 1u << log2d;
    const bool live = node < count;
    entry_t e = {0, 0, 0, 0, 0};
    const unsigned char *nd = P.pool;
    unsigned n = 0;
    if (live) {
        e = load_entry(static_cast<const entry_t *>(P.entries) + first + node);
        nd = P.pool + (e.ref & ~15ull);
        n = DENSE ? d * d : *reinterpret_cast<const unsigned *>(nd);
    }
    if (threadIdx.x == 0) s_iters = 0;
    __syncthreads();
    if (live && t == 0) atomicMax(&s_iters, (n + tpn - 1) / tpn);
    __syncthreads();
    const unsigned iters = s_iters;
    const unsigned sh = log2d * ((unsigned)P.depth - 1 - e.depth);
    const unsigned long long *pay =
        reinterpret_cast<const unsigned long long *>(DENSE ? nd : nd + coo_payload(n, 8));
    const unsigned lane = threadIdx.x & 31;
    for (unsigned it = 0; it < iters; it++) {
        if (threadIdx.x < HISP_CUDA_HS_QUEUES) s_cnt[threadIdx.x] = 0;
        __syncthreads();
        const unsigned k = it * tpn + t;
        unsigned long long c = live && k < n ? pay[k] : 0;
        int q = -1;
        unsigned local = 0;
        if (c) {
            q = queue_of(P.pool, c);
            unsigned mask = __activemask();
            unsigned peers = __match_any_sync(mask, q);
            int leader = __ffs(peers) - 1;
            unsigned off = 0;
            if ((int)lane == leader) off = atomicAdd(&s_cnt[q], __popc(peers));
            off = __shfl_sync(peers, off, leader);
            local = off + __popc(peers & ((1u << lane) - 1));
        }
        __syncthreads();
        if (threadIdx.x < HISP_CUDA_HS_QUEUES && s_cnt[threadIdx.x])
            s_at[threadIdx.x] = atomicAdd(&P.tails[threadIdx.x], s_cnt[threadIdx.x]);
        __syncthreads();
        if (q >= 0) {
            unsigned r = DENSE ? k >> log2d : nd[4 + 2 * k];
            unsigned cc = DENSE ? k & (d - 1) : nd[5 + 2 * k];
            entry_t *o = static_cast<entry_t *>(P.entries) + P.base[q] + s_at[q] + local;
            o->ref = c;
            o->row = e.row + (r << sh);
            o->col = e.col + (cc << sh);
            o->depth = e.depth + 1;
            o->pad = 0;
        }
    }
}

/* ---- COO leaves --------------------------------------------------------------- */

/* Leaves of the single-entry queue (tpn = 1), a thread each. A one-entry
 * node is 16 bytes, [n][row col][pad][value at byte 8] in both precisions
 * (coo_payload(1, s) = 8), so one 16-byte load brings count, coordinates
 * and value together: the chain entry -> node -> x instead of entry ->
 * count -> coordinates and value -> x (circuit's 3.4M single entries were
 * stalled on those dependent loads). A node of another count takes the
 * general loop. The device pool is padded to 16 bytes for the load. */
template <typename T>
__global__ void __launch_bounds__(256)
    hs_leaf_single(hisp_cuda_hs P, unsigned long long first, unsigned long long count)
{
    const unsigned long long node = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (node >= count) return;
    const entry_t e = load_entry(static_cast<const entry_t *>(P.entries) + first + node);
    const unsigned char *nd = P.pool + (e.ref & ~15ull);
    const uint4 w = __ldg(reinterpret_cast<const uint4 *>(nd));
    const T *x = static_cast<const T *>(P.x);
    T *y = static_cast<T *>(P.y);
    const bool tr = P.tr != 0;
    if (w.x == 1) {
        unsigned r = e.row + (w.y & 255), c = e.col + ((w.y >> 8) & 255);
        T a;
        if constexpr (sizeof(T) == 8)
            a = __hiloint2double((int)w.w, (int)w.z);
        else
            a = __uint_as_float(w.z);
        red_add(&y[tr ? c : r], (T)P.alpha * a * x[tr ? r : c]);
        return;
    }
    const unsigned short *rc = reinterpret_cast<const unsigned short *>(nd + 4);
    const T *val = reinterpret_cast<const T *>(nd + coo_payload(w.x, sizeof(T)));
    for (unsigned k = 0; k < w.x; k++) {
        unsigned b = rc[k], r = e.row + (b & 255), c = e.col + (b >> 8);
        red_add(&y[tr ? c : r], (T)P.alpha * val[k] * x[tr ? r : c]);
    }
}

/* The segmented sum of one warp slice: emit(key, sum) once per run of
 * lanes with the same output index, by the run's first lane. Runs are found
 * by comparing neighbours only, so it is exact for any order: for y = A x
 * the outputs (rows) are sorted and a run is a row's entries in the slice;
 * for A^T x they are the columns, where runs form in columns that hold most
 * of a leaf (per-entry adds to one address serialise in L2). A slice where
 * no entry continues its neighbour's run (every slice of A^T x over
 * row-major leaves, most of a diagonal line's) skips the scan: its 11
 * shuffles per lane (16 for f64) bought nothing there. */
template <typename T, typename EMIT>
__device__ __forceinline__ void slice_runs(unsigned key, T v, unsigned lane, EMIT emit)
{
    unsigned kp = __shfl_up_sync(0xffffffffu, key, 1);
    if (!__any_sync(0xffffffffu, lane > 0 && kp == key && key != NOKEY)) {
        if (key != NOKEY) emit(key, v);
        return;
    }
    unsigned kn = __shfl_down_sync(0xffffffffu, key, 1);
    bool stop = lane == 31 || kn != key;
    for (unsigned o = 1; o < 32; o <<= 1) {
        T vo = __shfl_down_sync(0xffffffffu, v, o);
        bool so = __shfl_down_sync(0xffffffffu, stop, o);
        if (!stop) v += vo;
        stop = stop || so;
    }
    if (key != NOKEY && (lane == 0 || kp != key)) emit(key, v);
}

/* ... and one add into y per run. */
template <typename T>
__device__ __forceinline__ void slice_sum(unsigned key, T v, unsigned lane, T *y, T alpha)
{
    slice_runs<T>(key, v, lane, [&](unsigned k, T sum) { red_add(&y[k], alpha * sum); });
}

/* The band kernel's blocks: nw = 8 or 4 warps, each a contiguous share of
 * its unit's slices (band_warp_entries of a unit of n entries). The band
 * plan holds both splits' first leaves, BAND_UWL per unit: 8 then 4. */
constexpr unsigned BAND_WARPS = 8, BAND_UWL = 12;
__device__ __host__ __forceinline__ unsigned band_warp_entries(unsigned n, unsigned nw)
{
    return ((n + 31) / 32 + nw - 1) / nw * 32;
}
__device__ __host__ __forceinline__ unsigned band_uwl_slot(unsigned nw, unsigned wid)
{
    return (nw == BAND_WARPS ? 0 : BAND_WARPS) + wid;
}

/* One 32-entry slice of a walk over concatenated leaves: L is the leaf of
 * the slice's first entry (base); lane m reads the start of leaf L + 1 + m
 * through off(m) (the slice overlaps at most 32 leaves); the starts inside
 * the slice, as bits of one OR-reduced mask, give the lane's leaf by a
 * population count (le: the bits of lanes <= this one), and L moves to the
 * next slice's first leaf. Leaves hold at least one entry. With last,
 * also whether the lane's entry is its leaf's last. */
template <typename OFF>
__device__ __forceinline__ unsigned walk_slice(unsigned &L, unsigned base, unsigned lane,
                                               unsigned le, unsigned nleaves, OFF off,
                                               bool *last = nullptr)
{
    const unsigned m = L + 1 + lane;
    const unsigned p = m <= nleaves ? off(m) - base : 64u; /* >= 1 */
    const unsigned ends = __reduce_or_sync(0xffffffffu, p < 32 ? 1u << p : 0u);
    const bool next = __any_sync(0xffffffffu, p == 32); /* a leaf starts the next slice */
    const unsigned lf = L + __popc(ends & le);
    L += __popc(ends) + (next ? 1u : 0u);
    if (last) *last = lane == 31 ? next : ((ends >> (lane + 1)) & 1) != 0;
    return lf;
}

/* A warp's walk over concatenated leaves: its 32-entry slices from entry
 * `first` (L: the leaf of that entry; off(m): leaf m's first entry), n of
 * them, entries from `end` on left out; U = 4 slices' loads are issued
 * before their sums: entry(lf, k, key, v) gives entry k of leaf lf,
 * emit(key, v) sums a slice (NOKEY where left out). Shared by the
 * flattened kernel and the replay's one-entry and band kernels. */
template <typename T, typename OFF, typename ENTRY, typename EMIT>
__device__ __forceinline__ void walk_slices(unsigned L, unsigned first, unsigned n, unsigned end,
                                            unsigned nleaves, unsigned lane, OFF off, ENTRY entry,
                                            EMIT emit)
{
    constexpr unsigned U = 4;
    const unsigned le = lane == 31 ? 0xffffffffu : (2u << lane) - 1; /* lanes <= this one */
    for (unsigned j = 0; j < n; j += U) {
        unsigned key[U];
        T v[U];
#pragma unroll
        for (unsigned u = 0; u < U; u++) {
            const unsigned base = first + 32 * (j + u), k = base + lane;
            key[u] = NOKEY;
            v[u] = 0;
            if (j + u >= n) continue; /* warp-uniform */
            const unsigned lf = walk_slice(L, base, lane, le, nleaves, off);
            if (k < end) entry(lf, k, key[u], v[u]);
        }
#pragma unroll
        for (unsigned u = 0; u < U; u++) {
            if (j + u >= n) break; /* warp-uniform */
            emit(key[u], v[u]);
        }
    }
}

/* hs_leaf_flat's entries without a search per entry (f32; f64 searches, as
 * measured: BENCHMARKS, HiSparse SpMV): each warp takes a contiguous run of slices and
 * carries the leaf of its next slice's first entry. For a slice starting in
 * leaf L, lane m reads the end of leaf L + m (the slice overlaps at most 32
 * leaves); the ends inside the slice, as bits of one OR-reduced mask, give
 * every lane its leaf by a population count, and the next slice's first
 * leaf. ncu on the search version: the per-entry binary search was about a
 * quarter of the flat kernel's instructions on poisson3d. */
template <typename T>
__device__ __forceinline__ void
flat_walk(const hisp_cuda_hs &P, const unsigned long long *s_nd, const unsigned *s_row,
          const unsigned *s_col, const unsigned *s_val, const unsigned *s_off, unsigned nodes,
          unsigned total, unsigned slices, unsigned nw, unsigned wid, unsigned lane, const T *x,
          T *y, T alpha, bool tr)
{
    const unsigned per_warp = (slices + nw - 1) / nw;
    const unsigned a = wid * per_warp, b = min(slices, a + per_warp);
    if (a >= b) return;
    unsigned L = 0, hi = nodes - 1; /* the leaf of entry 32 a: uniform search, once */
    while (L < hi) {
        unsigned mid = (L + hi + 1) >> 1;
        if (s_off[mid] <= a * 32)
            L = mid;
        else
            hi = mid - 1;
    }
    walk_slices<T>(
        L, 32 * a, b - a, total, nodes, lane, [&](unsigned m) { return s_off[m]; },
        [&](unsigned lf, unsigned k, unsigned &key, T &v) {
            const unsigned kk = k - s_off[lf];
            const unsigned char *nd = P.pool + s_nd[lf];
            unsigned bb = reinterpret_cast<const unsigned short *>(nd + 4)[kk];
            unsigned r = s_row[lf] + (bb & 255), c = s_col[lf] + (bb >> 8);
            key = tr ? c : r;
            v = reinterpret_cast<const T *>(nd + s_val[lf])[kk] * x[tr ? r : c];
        },
        [&](unsigned key, T v) { slice_sum<T>(key, v, lane, y, alpha); });
}

/* The flattened kernel's entries found by a binary search per entry over
 * the block's leaf offsets. U slices per round have their loads issued
 * before any reduction, for more loads in flight. */
template <typename T>
__device__ __forceinline__ void
flat_search(const hisp_cuda_hs &P, const unsigned long long *s_nd, const unsigned *s_row,
            const unsigned *s_col, const unsigned *s_val, const unsigned *s_off, unsigned nodes,
            unsigned total, unsigned slices, unsigned nw, unsigned wid, unsigned lane, const T *x,
            T *y, T alpha, bool tr)
{
    constexpr unsigned U = 4;
    for (unsigned s0 = wid; s0 < slices; s0 += U * nw) {
        unsigned key[U];
        T v[U];
#pragma unroll
        for (unsigned u = 0; u < U; u++) {
            unsigned k = (s0 + u * nw) * 32 + lane;
            key[u] = NOKEY;
            v[u] = 0;
            if (k < total) {
                unsigned lo = 0, hi = nodes - 1;
                while (lo < hi) {
                    unsigned mid = (lo + hi + 1) >> 1;
                    if (s_off[mid] <= k)
                        lo = mid;
                    else
                        hi = mid - 1;
                }
                unsigned kk = k - s_off[lo];
                const unsigned char *nd = P.pool + s_nd[lo];
                unsigned b = reinterpret_cast<const unsigned short *>(nd + 4)[kk];
                unsigned r = s_row[lo] + (b & 255), c = s_col[lo] + (b >> 8);
                key[u] = tr ? c : r;
                v[u] = reinterpret_cast<const T *>(nd + s_val[lo])[kk] * x[tr ? r : c];
            }
        }
#pragma unroll
        for (unsigned u = 0; u < U; u++) {
            if (s0 + u * nw >= slices) break; /* warp-uniform */
            slice_sum<T>(key[u], v[u], lane, y, alpha);
        }
    }
}

/* The same sums with the work of a block's G / tpn leaves flattened: the
 * block loads its queue entries and node headers together, prefix-sums the
 * entry counts in shared memory, and every warp takes 32-entry slices of
 * the concatenation (a lane finds its leaf by binary search over the
 * prefix). A leaf of thousands of entries is then shared by the block's 8
 * warps instead of walked by one, and short leaves fill whole warps. Runs
 * may span two leaves: their keys are absolute indices of y, so merging
 * them is exact. U slices per round have their loads issued before any
 * reduction, for more loads in flight. */
template <typename T, bool WALK>
__global__ void __launch_bounds__(256)
    hs_leaf_flat(hisp_cuda_hs P, unsigned long long first, unsigned long long count, unsigned tpn)
{
    extern __shared__ unsigned long long s_dyn[]; /* flat_shared(per) bytes */
    const unsigned per = blockDim.x / tpn, lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    unsigned long long *s_nd = s_dyn;
    unsigned *s_row = reinterpret_cast<unsigned *>(s_nd + per), *s_col = s_row + per,
             *s_val = s_col + per, *s_warp = s_val + per, *s_off = s_warp + 32;
    const unsigned long long b0 = (unsigned long long)blockIdx.x * per;
    const unsigned nodes = (unsigned)min((unsigned long long)per, count - b0);
    unsigned n = 0;
    if (threadIdx.x < nodes) {
        const entry_t e =
            load_entry(static_cast<const entry_t *>(P.entries) + first + b0 + threadIdx.x);
        unsigned long long off = e.ref & ~15ull;
        n = *reinterpret_cast<const unsigned *>(P.pool + off);
        s_nd[threadIdx.x] = off;
        s_row[threadIdx.x] = e.row;
        s_col[threadIdx.x] = e.col;
        s_val[threadIdx.x] = (unsigned)coo_payload(n, sizeof(T));
    }
    unsigned inc = n; /* inclusive scan of n over the block */
    for (unsigned o = 1; o < 32; o <<= 1) {
        unsigned u = __shfl_up_sync(0xffffffffu, inc, o);
        if (lane >= o) inc += u;
    }
    if (lane == 31) s_warp[wid] = inc;
    __syncthreads();
    unsigned before = 0;
    for (unsigned w = 0; w < wid; w++)
        before += s_warp[w];
    if (threadIdx.x < per) s_off[threadIdx.x + 1] = before + inc;
    if (threadIdx.x == 0) s_off[0] = 0;
    __syncthreads();
    const unsigned total = s_off[nodes], slices = (total + 31) / 32, nw = blockDim.x / 32;
    const T *x = static_cast<const T *>(P.x);
    T *y = static_cast<T *>(P.y);
    const T alpha = (T)P.alpha;
    const bool tr = P.tr != 0;
    if constexpr (WALK)
        flat_walk<T>(P, s_nd, s_row, s_col, s_val, s_off, nodes, total, slices, nw, wid, lane, x, y,
                     alpha, tr);
    else
        flat_search<T>(P, s_nd, s_row, s_col, s_val, s_off, nodes, total, slices, nw, wid, lane, x,
                       y, alpha, tr);
}

/* ---- dense leaves --------------------------------------------------------------- */

template <typename T>
__global__ void __launch_bounds__(256)
    hs_leaf_dense(hisp_cuda_hs P, unsigned long long first, unsigned long long count, unsigned tpn)
{
    const unsigned per = blockDim.x / tpn;
    const unsigned long long node = (unsigned long long)blockIdx.x * per + threadIdx.x / tpn;
    const unsigned t = threadIdx.x % tpn;
    if (node >= count) return;
    const entry_t e = load_entry(static_cast<const entry_t *>(P.entries) + first + node);
    const T *val = reinterpret_cast<const T *>(P.pool + (e.ref & ~15ull));
    const unsigned log2d = (unsigned)P.log2d, d = 1u << log2d;
    const T *x = static_cast<const T *>(P.x);
    T *y = static_cast<T *>(P.y);
    const T alpha = (T)P.alpha;
    if (P.tr || tpn < 32 || d < 32) { /* a column (A^T) or row per thread */
        const bool tr = P.tr != 0;
        for (unsigned i = t; i < d; i += tpn) {
            T sum = 0;
            bool any = false;
            for (unsigned j = 0; j < d; j++) {
                T v = tr ? val[j * d + i] : val[i * d + j];
                if (nonzero_bits(v)) {
                    sum += v * x[(tr ? e.row : e.col) + j];
                    any = true;
                }
            }
            if (any) red_add(&y[(tr ? e.col : e.row) + i], alpha * sum);
        }
        return;
    }
    const unsigned lane = t & 31, warps = tpn / 32; /* a row per warp */
    for (unsigned i = t / 32; i < d; i += warps) {
        T sum = 0;
        bool any = false;
        for (unsigned j = lane; j < d; j += 32) {
            T v = val[i * d + j];
            if (nonzero_bits(v)) {
                sum += v * x[e.col + j];
                any = true;
            }
        }
        for (unsigned o = 16; o; o >>= 1)
            sum += __shfl_xor_sync(0xffffffffu, sum, o);
        if (__any_sync(0xffffffffu, any) && lane == 0) red_add(&y[e.row + i], alpha * sum);
    }
}

/* Ask for a shared-memory carveout that fits 8 blocks of any node kernel
 * per SM (the driver's default for grids launched from the device may
 * leave less); a hint, errors ignored by the caller. */
inline cudaError_t prefer_shared_carveout()
{
    const void *k[] = {(const void *)hs_inner<false>,
                       (const void *)hs_inner<true>,
                       (const void *)hs_leaf_flat<float, false>,
                       (const void *)hs_leaf_flat<double, false>,
                       (const void *)hs_leaf_flat<float, true>,
                       (const void *)hs_leaf_flat<double, true>,
                       (const void *)hs_leaf_single<float>,
                       (const void *)hs_leaf_single<double>,
                       (const void *)hs_leaf_dense<float>,
                       (const void *)hs_leaf_dense<double>};
    cudaError_t r = cudaSuccess;
    for (const void *f : k) {
        cudaError_t e = cudaFuncSetAttribute(f, cudaFuncAttributePreferredSharedMemoryCarveout, 25);
        if (e != cudaSuccess) r = e;
    }
    return r;
}

/* ---- launch ------------------------------------------------------------------- */

__device__ __host__ __forceinline__ unsigned blocks_for(const hisp_cuda_hs &P, int q,
                                                        unsigned long long count)
{
    unsigned per = (unsigned)(P.group[q] / P.tpn[q]);
    return (unsigned)((count + per - 1) / per);
}

/* Dynamic shared memory of hs_leaf_flat for `per` leaves per block: sized
 * to the queue (a static 8 KB for 256 leaves left room for one block per
 * SM in device-launched grids, much slower than from the host). */
__device__ __host__ __forceinline__ unsigned flat_shared(unsigned per)
{
    return per * 8 + per * 12 + 32 * 4 + (per + 1) * 4;
}

/* One node kernel over entries [first, first + count) of queue q into
 * stream s (a host stream, or cudaStreamFireAndForget on the device, which
 * needs the relocatable module). */
#ifdef __CUDACC_RDC__
#define HS_LAUNCHER __device__ __host__
#else
#define HS_LAUNCHER __host__
#endif
template <typename T>
HS_LAUNCHER void launch_node(const hisp_cuda_hs &P, int q, unsigned long long first,
                             unsigned long long count, cudaStream_t s)
{
    dim3 grid(blocks_for(P, q, count)), block((unsigned)P.group[q]);
    unsigned tpn = (unsigned)P.tpn[q];
    switch (P.fn[q]) {
    case 0:
        hs_inner<false><<<grid, block, 0, s>>>(P, first, count, tpn);
        break;
    case 1:
        hs_inner<true><<<grid, block, 0, s>>>(P, first, count, tpn);
        break;
    case 2:
        if (tpn == 1) { /* single entries: a thread each, nothing to share */
            hs_leaf_single<T><<<grid, block, 0, s>>>(P, first, count);
        } else {
            unsigned per = block.x / tpn;
            dim3 g((unsigned)((count + per - 1) / per));
            if (sizeof(T) == 4) /* the walk for f32, the search for f64 */
                hs_leaf_flat<T, true>
                    <<<g, block, flat_shared(per), s>>>(P, first, count, block.x / per);
            else
                hs_leaf_flat<T, false>
                    <<<g, block, flat_shared(per), s>>>(P, first, count, block.x / per);
        }
        break;
    default:
        hs_leaf_dense<T><<<grid, block, 0, s>>>(P, first, count, tpn);
    }
}

} // namespace

#endif
