/* HiSparse SpMV on CUDA, the replay's leaf kernels (whole-program module,
 * host launches): the plan of a COO leaf queue and the kernels that walk
 * it (backends/cuda/cuda_hisparse.c decides which runs; docs/ARCHITECTURE.md). */
#include "hisparse_nodes.cuh"

#include <cub/device/device_scan.cuh>

#include <cstring>

namespace
{

/* ---- the replay's plan of a COO leaf queue ------------------------------------ */

/* Entries of each leaf, rounded up to even with pad (the pair kernel's
 * plans: every leaf then starts at an even entry, so a lane's two entries
 * share a leaf and load as one word each); small: a leaf of one entry
 * (its node has no padding slot to stand for the second). */
__global__ void rp_count(const unsigned char *pool, const entry_t *e, unsigned n, int pad,
                         unsigned long long *cnt, unsigned *small)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const unsigned c = *reinterpret_cast<const unsigned *>(pool + (e[i].ref & ~15ull));
        if (c < 2 && small) *small = 1;
        cnt[i] = pad ? (c + 1) & ~1u : c;
    }
    if (i == n) cnt[n] = 0;
}

/* Leaf i's addresses less its first entry's index (so lane k reads entry k
 * of the queue's concatenation at base + k; bit 0 of the coordinates'
 * address set: an odd count padded, the leaf's last plan entry is the
 * node's padding slot, value 0, and adds nothing), its offsets, its first
 * entry, and the warps whose first entry lies in it. */
__global__ void rp_fill(const unsigned char *pool, const entry_t *e, unsigned n, unsigned vs,
                        const unsigned long long *start, unsigned ce, int tr, ulonglong2 *addr,
                        uint2 *at, unsigned *off, unsigned *wl, unsigned long long *cont,
                        unsigned long long *cont_sorted)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > n) return;
    const unsigned long long s0 = start[i];
    off[i] = (unsigned)s0;
    if (i == n) return;
    const unsigned long long s1 = start[i + 1];
    const unsigned long long nd = reinterpret_cast<unsigned long long>(pool) + (e[i].ref & ~15ull);
    const unsigned c = *reinterpret_cast<const unsigned *>(nd); /* s1 - s0 or one less */
    addr[i] = make_ulonglong2((nd + 4 - 2 * s0) | (s1 - s0 != c ? 1u : 0u),
                              nd + coo_payload(c, vs) - vs * s0);
    at[i] = make_uint2(e[i].row, e[i].col);
    for (unsigned long long w = (s0 + ce - 1) / ce; wl && w * ce < s1; w++)
        wl[w] = i;
    /* entries whose output index is their predecessor's in the leaf, and
     * as many with the leaf's entries ordered by output index (c less the
     * distinct indices) */
    const unsigned char *rc = reinterpret_cast<const unsigned char *>(nd + 4) + (tr ? 1 : 0);
    unsigned same = 0, seen[8] = {0, 0, 0, 0, 0, 0, 0, 0}, distinct = 0;
    for (unsigned k = 0; k < c; k++) {
        const unsigned o = rc[2 * k], bit = 1u << (o & 31);
        same += k > 0 && o == rc[2 * k - 2];
        distinct += (seen[o >> 5] & bit) == 0;
        seen[o >> 5] |= bit;
    }
    if (same) atomicAdd(cont, (unsigned long long)same);
    if (c > distinct) atomicAdd(cont_sorted, (unsigned long long)(c - distinct));
}

/* The order by output index within each leaf of a padded A^T x plan (a
 * counting sort of its entries by column; stable, so rows stay in order):
 * perm[k] is the leaf-local index of the leaf's k-th entry in that order;
 * an odd leaf's padding stays last. Runs of equal output index then
 * become as long as A x's. A thread per leaf: built once per plan. */
__global__ void rp_perm(const unsigned char *pool, const entry_t *e, unsigned n,
                        const unsigned *off, int tr, unsigned short *perm)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const unsigned char *nd = pool + (e[i].ref & ~15ull);
    const unsigned c = *reinterpret_cast<const unsigned *>(nd), s0 = off[i];
    const unsigned char *rc = nd + 4 + (tr ? 1 : 0);
    unsigned short pos[256];
    for (unsigned j = 0; j < 256; j++)
        pos[j] = 0;
    for (unsigned k = 0; k < c; k++)
        pos[rc[2 * k]]++;
    for (unsigned j = 0, sum = 0; j < 256; j++) {
        const unsigned h = pos[j];
        pos[j] = (unsigned short)sum;
        sum += h;
    }
    for (unsigned k = 0; k < c; k++)
        perm[s0 + pos[rc[2 * k]]++] = (unsigned short)k;
    if (off[i + 1] - s0 > c) perm[s0 + c] = (unsigned short)c;
}

/* Entry k of the plan's concatenation, in leaf lf (last: the leaf's last
 * plan entry): its output index and a_ij * x_j; NOKEY for an odd leaf's
 * padding entry. */
template <typename T>
__device__ __forceinline__ void plan_entry(const ulonglong2 *addr, const uint2 *at, unsigned lf,
                                           unsigned k, bool last, bool tr, const T *x,
                                           unsigned &key, T &v)
{
    const ulonglong2 ad = __ldg(addr + lf);
    if (last && (ad.x & 1)) return; /* key, v stay NOKEY, 0 */
    const uint2 o = __ldg(at + lf);
    const unsigned bb = reinterpret_cast<const unsigned short *>(ad.x & ~1ull)[k];
    const unsigned r = o.x + (bb & 255), c = o.y + (bb >> 8);
    key = tr ? c : r;
    v = reinterpret_cast<const T *>(ad.y)[k] * x[tr ? r : c];
}

/* The replay's COO leaves without a block prologue: every warp takes
 * `cs` consecutive 32-entry slices of the queue's concatenated entries and
 * finds each lane's leaf as flat_walk does, from the plan's entry offsets
 * in global memory (L1: a slice reads one line of them), starting at the
 * leaf the plan recorded for its first entry. A lane's coordinates and
 * value are at the leaf's two base addresses + its entry index. The
 * flattened kernel it replaces loaded a block's queue entries and node
 * headers (two dependent loads), scanned the counts and waited at two
 * barriers for about four slices per warp on poisson3d. */
/* One add per distinct key of a warp slice in any order (peers found by
 * __match_any_sync, summed by their first lane from shared memory): the
 * adds of A^T x, whose equal keys are rarely neighbours, combined. */
template <typename T>
__device__ __forceinline__ void match_sum(unsigned key, T v, unsigned lane, T *y, T alpha, T *s_w)
{
    const unsigned peers = __match_any_sync(0xffffffffu, key);
    s_w[lane] = v;
    __syncwarp();
    if (key != NOKEY && lane == (unsigned)__ffs(peers) - 1) {
        for (unsigned rest = peers & (peers - 1); rest; rest &= rest - 1)
            v += s_w[__ffs(rest) - 1];
        red_add(&y[key], alpha * v);
    }
    __syncwarp();
}

template <typename T, bool MATCH>
__global__ void __launch_bounds__(256)
    hs_leaf_replay(hisp_cuda_hs P, const ulonglong2 *addr, const uint2 *at, const unsigned *off,
                   const unsigned *wl, unsigned nleaves, unsigned total, unsigned cs)
{
    constexpr unsigned U = 4;
    __shared__ T s_v[MATCH ? 256 : 1];
    const unsigned lane = threadIdx.x & 31;
    const unsigned w = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    const unsigned slices = (total + 31) / 32;
    if ((unsigned long long)w * cs >= slices) return;
    const unsigned a = w * cs, b = min(slices, a + cs);
    const T *x = static_cast<const T *>(P.x);
    T *y = static_cast<T *>(P.y);
    const T alpha = (T)P.alpha;
    const bool tr = P.tr != 0;
    unsigned L = wl[w];
    const unsigned le = lane == 31 ? 0xffffffffu : (2u << lane) - 1; /* lanes <= this one */
    for (unsigned j = a; j < b; j += U) {
        unsigned key[U];
        T v[U];
#pragma unroll
        for (unsigned u = 0; u < U; u++) {
            const unsigned js = j + u, base = js * 32, k = base + lane;
            key[u] = NOKEY;
            v[u] = 0;
            if (js >= b) continue; /* warp-uniform */
            bool last;
            const unsigned lf = walk_slice(
                L, base, lane, le, nleaves, [&](unsigned m) { return __ldg(off + m); }, &last);
            if (k < total) plan_entry<T>(addr, at, lf, k, last, tr, x, key[u], v[u]);
        }
#pragma unroll
        for (unsigned u = 0; u < U; u++) {
            if (j + u >= b) break; /* warp-uniform */
            if constexpr (MATCH)
                match_sum<T>(key[u], v[u], lane, y, alpha, s_v + (threadIdx.x & ~31u));
            else
                slice_sum<T>(key[u], v[u], lane, y, alpha, P.runs_check != 0);
        }
    }
}

/* The sums of a 64-entry slice held two consecutive entries per lane
 * (keys ka, kb; values va, vb), one add per run of equal keys. A lane's
 * tail (kb, with va when ka == kb) enters a segmented inclusive scan
 * towards the run's last lane; a lane whose two keys differ adds its head
 * (ka) itself, with the previous lane's run sum when that run has key ka.
 * Per entry half the shuffles of slice_sum. */
template <typename T>
__device__ __forceinline__ void pair_sum(unsigned ka, unsigned kb, T va, T vb, unsigned lane, T *y,
                                         T alpha)
{
    const unsigned full = 0xffffffffu;
    const bool pure = ka == kb;
    const unsigned pk = __shfl_up_sync(full, kb, 1), nk = __shfl_down_sync(full, ka, 1);
    const bool joins = lane > 0 && pk == ka; /* my first entry continues the lane before */
    bool f = !(pure && joins);               /* my tail starts a run */
    T S = pure ? va + vb : vb;
    for (unsigned o = 1; o < 32; o <<= 1) {
        T so = __shfl_up_sync(full, S, o);
        bool fo = __shfl_up_sync(full, f, o);
        if (lane >= o) {
            if (!f) S += so;
            f = f || fo;
        }
    }
    const T prev = __shfl_up_sync(full, S, 1);
    if (!pure && ka != NOKEY) red_add(&y[ka], alpha * (joins ? va + prev : va));
    if (kb != NOKEY && (lane == 31 || nk != kb)) red_add(&y[kb], alpha * S);
}

template <typename T> struct pair_of;
template <> struct pair_of<float> {
    using type = float2;
};
template <> struct pair_of<double> {
    using type = double2;
};

/* hs_leaf_replay with two consecutive entries per lane (64-entry slices):
 * one walk and one scan per 64 entries. The plan is padded (every leaf
 * starts at an even entry), so a lane's two entries lie in one leaf: one
 * leaf record, one 4-byte load of their coordinates and one 8- or 16-byte
 * load of their values, and the walk is walk_slice's over pairs. A warp
 * covers exactly its plan chunk of 32 * cs entries. */
template <typename T, bool PERM>
__global__ void __launch_bounds__(256)
    hs_leaf_replay2(hisp_cuda_hs P, const ulonglong2 *addr, const uint2 *at, const unsigned *off,
                    const unsigned *wl, const unsigned *perm, unsigned nleaves, unsigned total,
                    unsigned cs)
{
    using T2 = typename pair_of<T>::type;
    constexpr unsigned U = 2;
    const unsigned lane = threadIdx.x & 31;
    const unsigned w = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    const unsigned long long a64 = (unsigned long long)w * 32 * cs;
    if (a64 >= total) return;
    const unsigned a = (unsigned)a64,
                   kend = (unsigned)min((unsigned long long)total, a64 + 32ull * cs);
    const T *x = static_cast<const T *>(P.x);
    T *y = static_cast<T *>(P.y);
    const T alpha = (T)P.alpha;
    const bool tr = P.tr != 0;
    unsigned L = wl[w];
    const unsigned le = lane == 31 ? 0xffffffffu : (2u << lane) - 1; /* lanes <= this one */
    for (unsigned base = a; base < kend; base += 64 * U) {
        unsigned ka[U], kb[U];
        T va[U], vb[U];
#pragma unroll
        for (unsigned u = 0; u < U; u++) {
            const unsigned sb = base + 64 * u, k = sb + 2 * lane; /* kend, k: even */
            ka[u] = kb[u] = NOKEY;
            va[u] = vb[u] = 0;
            if (sb >= kend) continue; /* warp-uniform */
            bool last;
            const unsigned lf = walk_slice(
                L, sb >> 1, lane, le, nleaves, [&](unsigned m) { return __ldg(off + m) >> 1; },
                &last);
            if (k >= kend) continue;
            const ulonglong2 ad = __ldg(addr + lf);
            const uint2 o = __ldg(at + lf);
            unsigned cc;
            T2 vv;
            if constexpr (PERM) { /* the pair's two entries by the leaf's order */
                const unsigned pp = __ldg(perm + (k >> 1)), s0 = __ldg(off + lf);
                const unsigned i0 = s0 + (pp & 0xffff), i1 = s0 + (pp >> 16);
                const unsigned short *co = reinterpret_cast<const unsigned short *>(ad.x & ~1ull);
                const T *va_ = reinterpret_cast<const T *>(ad.y);
                cc = co[i0] | (unsigned)co[i1] << 16;
                vv.x = va_[i0];
                vv.y = va_[i1];
            } else {
                cc = *reinterpret_cast<const unsigned *>((ad.x & ~1ull) + 2ull * k);
                vv = *reinterpret_cast<const T2 *>(ad.y + (unsigned long long)sizeof(T) * k);
            }
            const unsigned ra = o.x + (cc & 255), ca = o.y + ((cc >> 8) & 255);
            ka[u] = kb[u] = tr ? ca : ra;
            va[u] = vv.x * x[tr ? ra : ca];
            if (!(last && (ad.x & 1))) { /* else: an odd leaf's padding, adds nothing */
                const unsigned rb = o.x + ((cc >> 16) & 255), cb = o.y + (cc >> 24);
                kb[u] = tr ? cb : rb;
                vb[u] = vv.y * x[tr ? rb : cb];
            }
        }
#pragma unroll
        for (unsigned u = 0; u < U; u++)
            if (base + 64 * u < kend) pair_sum<T>(ka[u], kb[u], va[u], vb[u], lane, y, alpha);
    }
}

/* ---- the band replay: every COO leaf of a band of d output indices ----------- */

struct max_u64 {
    __device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const
    {
        return a > b ? a : b;
    }
};

__device__ __forceinline__ unsigned band_of(const entry_t &e, int tr, unsigned log2d)
{
    return (tr ? e.col : e.row) >> log2d;
}

/* A leaf's first entry where its band starts (0 elsewhere: a running
 * maximum then gives every leaf its band's first entry). */
__global__ void bp_band(const entry_t *e, unsigned n, const unsigned long long *start, int tr,
                        unsigned log2d, unsigned long long *bs)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    bool first = i == 0 || band_of(e[i], tr, log2d) != band_of(e[i - 1], tr, log2d);
    bs[i] = first ? start[i] : 0;
}

/* The units starting in leaf i: entries sb + j * ce of its band (first
 * entry sb) that fall in the leaf. */
__global__ void bp_units(unsigned n, const unsigned long long *start, const unsigned long long *bs,
                         unsigned ce, unsigned long long *ucnt, unsigned long long *empty)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > n) return;
    const unsigned long long s0 = start[i], s1 = i < n ? start[i + 1] : s0, sb = i < n ? bs[i] : 0;
    if (s1 == s0) { /* the sentinel, or an empty leaf (the walk needs entries) */
        ucnt[i] = 0;
        if (i < n) *empty = 1;
        return;
    }
    const long long before = s0 == sb ? -1 : (long long)((s0 - sb - 1) / ce);
    ucnt[i] = (unsigned long long)((long long)((s1 - 1 - sb) / ce) - before);
}

__global__ void bp_fill_units(const entry_t *e, unsigned n, const unsigned long long *start,
                              const unsigned long long *bs, const unsigned long long *uidx,
                              unsigned ce, int tr, unsigned log2d, unsigned *ustart,
                              unsigned *uleaf, unsigned *uband)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > n) return;
    unsigned long long u = uidx[i];
    if (i == n) { /* the sentinel: the end of the last unit */
        ustart[u] = (unsigned)start[n];
        uleaf[u] = n;
        return;
    }
    const unsigned long long s0 = start[i], s1 = start[i + 1], sb = bs[i];
    unsigned long long p = sb + (s0 - sb + ce - 1) / ce * ce;
    for (; p < s1; p += ce, u++) {
        ustart[u] = (unsigned)p;
        uleaf[u] = i;
        uband[u] = band_of(e[i], tr, log2d) << log2d;
    }
}

__global__ void bp_fill_off(unsigned n, const unsigned long long *start, unsigned *off)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) off[i] = (unsigned)start[i];
}

/* Leaf i's band-plan record: its node's 16-byte index in the pool and its
 * input offset (column, or row when tr; its output offset is its unit's
 * band). flag: a node beyond 2^32 * 16 bytes. */
__global__ void bp_fill_rec(const entry_t *e, unsigned n, int tr, uint2 *rec, unsigned *flag)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const unsigned long long nd = (e[i].ref & ~15ull) >> 4;
    if (nd >> 32) *flag = 1;
    rec[i] = make_uint2((unsigned)nd, tr ? e[i].row : e[i].col);
}

/* The band replay's kernel: a block per unit (at most 32 * 8 * cs entries
 * of one band, the bands being the leaves' output offsets / d, all COO
 * leaf queues together, sorted by band). Its warps share the unit's slices,
 * walk them as hs_leaf_replay does, merge runs of equal output index in
 * registers and add the run sums into the block's d accumulators in shared
 * memory; the block then adds each touched accumulator into y once. One
 * global add per output index per unit instead of one per run. */
template <typename T>
__global__ void __launch_bounds__(256)
    hs_leaf_band(hisp_cuda_hs P, const uint2 *rec, const unsigned *off, const unsigned *ustart,
                 const unsigned *uleaf, const unsigned *uband, unsigned nleaves)
{
    constexpr unsigned U = 4;
    __shared__ T acc[256];
    const unsigned u = blockIdx.x, lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    const unsigned nw = blockDim.x >> 5, d = 1u << P.log2d;
    for (unsigned i = threadIdx.x; i < d; i += blockDim.x)
        acc[i] = 0;
    __syncthreads();
    const unsigned us = ustart[u], ue = ustart[u + 1], band = uband[u];
    const unsigned per = ((ue - us + 31) / 32 + nw - 1) / nw; /* slices per warp */
    const unsigned a = us + wid * per * 32, kend = min(ue, a + per * 32);
    const T *x = static_cast<const T *>(P.x);
    const bool tr = P.tr != 0;
    if (a < kend) {
        unsigned L = uleaf[u], hi = min(uleaf[u + 1], nleaves - 1);
        while (L < hi) { /* the leaf of entry a */
            unsigned mid = (L + hi + 1) >> 1;
            if (__ldg(off + mid) <= a)
                L = mid;
            else
                hi = mid - 1;
        }
        const unsigned le = lane == 31 ? 0xffffffffu : (2u << lane) - 1;
        for (unsigned base = a; base < kend; base += 32 * U) {
            unsigned key[U];
            T v[U];
#pragma unroll
            for (unsigned j = 0; j < U; j++) {
                const unsigned sb = base + 32 * j, k = sb + lane;
                key[j] = NOKEY;
                v[j] = 0;
                if (sb >= kend) continue; /* warp-uniform */
                const unsigned lf = walk_slice(L, sb, lane, le, nleaves,
                                               [&](unsigned m) { return __ldg(off + m); });
                if (k < kend) {
                    /* 12 bytes of plan per leaf (rec, off), not 28: on rmat
                     * they outweighed the leaves' own bytes */
                    const unsigned s0 = __ldg(off + lf), i = k - s0;
                    const uint2 r = __ldg(rec + lf);
                    const unsigned char *nd = P.pool + 16ull * r.x;
                    const unsigned bb = reinterpret_cast<const unsigned short *>(nd + 4)[i];
                    key[j] = tr ? bb >> 8 : bb & 255;
                    const T *val = reinterpret_cast<const T *>(
                        nd + coo_payload(__ldg(off + lf + 1) - s0, sizeof(T)));
                    v[j] = val[i] * x[r.y + (tr ? bb & 255 : bb >> 8)];
                }
            }
#pragma unroll
            for (unsigned j = 0; j < U; j++) {
                if (base + 32 * j >= kend) break; /* warp-uniform */
                slice_runs<T>(
                    key[j], v[j], lane, [&](unsigned k, T sum) { atomicAdd(&acc[k], sum); },
                    P.runs_check != 0);
            }
        }
    }
    __syncthreads();
    T *y = static_cast<T *>(P.y);
    const T alpha = (T)P.alpha;
    for (unsigned i = threadIdx.x; i < d; i += blockDim.x) {
        const T s = acc[i];
        if (s != (T)0 || s != s) red_add(&y[band + i], alpha * s); /* NaN too */
    }
}

} // namespace

extern "C" void hisp_cuda_hs_rplan_free(hisp_cuda_hs_rplan *R)
{
    void *bufs[] = {R->addr, R->at, R->off, R->wl, R->perm};
    for (void *b : bufs)
        if (b) (void)cudaFree(b);
    memset(R, 0, sizeof *R);
}

/* Runs (entries continuing their predecessor's output index, / all) from
 * which two entries per lane pay: with runs of one entry its two adds per
 * lane (head and tail) spread a warp's adds over twice the sectors of y,
 * which cost more than the halved scan saves, and more so for f64 adds
 * (H100, forced on: banded, blockdiag, circuit N 10-18 % faster,
 * poisson3d N (runs 0.31) 8 % slower in f64 and 11 % faster in f32, A^T x
 * (runs under 0.02) up to 34 % slower) */
static double long_runs(const hisp_cuda_hs *P)
{
    return P->f64 ? 0.4 : 0.25;
}

extern "C" cudaError_t hisp_cuda_hs_rplan_build(const hisp_cuda_hs *P, int q, uint64_t n,
                                                unsigned slices, int perm, hisp_cuda_hs_rplan *R,
                                                cudaStream_t stream)
{
    memset(R, 0, sizeof *R);
    if (n == 0 || n >= (1ull << 31) || slices == 0 || slices > 4096) return cudaErrorInvalidValue;
    const entry_t *e = static_cast<const entry_t *>(P->entries) + P->base[q];
    const unsigned nl = (unsigned)n, vs = P->f64 ? 8 : 4, ce = 32 * slices;
    const unsigned blocks = (nl + 1 + 255) / 256;
    unsigned long long *cnt = nullptr, total = 0;
    void *tmp = nullptr;
    size_t tmp_bytes = 0;
    cudaError_t r =
        cub::DeviceScan::ExclusiveSum(nullptr, tmp_bytes, cnt, cnt, (int)nl + 1, stream);
    if (r == cudaSuccess) r = cudaMalloc(&cnt, (2 * ((size_t)nl + 1) + 3) * sizeof *cnt);
    if (r == cudaSuccess) r = cudaMalloc(&tmp, tmp_bytes ? tmp_bytes : 1);
    unsigned long long *start = cnt + nl + 1;
    /* [0]: a leaf of fewer than two entries; [1]: entries continuing a run;
     * [2]: as many with each leaf's entries ordered by output index */
    unsigned long long *flags = start + nl + 1, h_flags[3] = {0, 0, 0};
    if (r == cudaSuccess) r = cudaMemsetAsync(flags, 0, sizeof h_flags, stream);
    /* padded to even counts unless a leaf holds one entry (then unpadded,
     * and only the one-entry-per-lane kernel runs) */
    for (int pad = 1; pad >= 0 && r == cudaSuccess; pad--) {
        rp_count<<<blocks, 256, 0, stream>>>(P->pool, e, nl, pad, cnt,
                                             pad ? reinterpret_cast<unsigned *>(flags) : nullptr);
        r = cub::DeviceScan::ExclusiveSum(tmp, tmp_bytes, cnt, start, (int)nl + 1, stream);
        if (r == cudaSuccess)
            r = cudaMemcpyAsync(&total, start + nl, sizeof total, cudaMemcpyDeviceToHost, stream);
        if (r == cudaSuccess)
            r = cudaMemcpyAsync(h_flags, flags, sizeof h_flags, cudaMemcpyDeviceToHost, stream);
        if (r == cudaSuccess) r = cudaStreamSynchronize(stream);
        if (!h_flags[0]) break;
    }
    if (r == cudaSuccess && (total == 0 || total > 0xffffffffull - ce))
        r = cudaErrorInvalidValue; /* entry offsets are 32-bit */
    const unsigned long long warps = (total + ce - 1) / ce;
    if (r == cudaSuccess) r = cudaMalloc(&R->addr, (size_t)nl * sizeof(ulonglong2));
    if (r == cudaSuccess) r = cudaMalloc(&R->at, (size_t)nl * sizeof(uint2));
    if (r == cudaSuccess) r = cudaMalloc((void **)&R->off, ((size_t)nl + 1) * sizeof(unsigned));
    if (r == cudaSuccess) r = cudaMalloc((void **)&R->wl, (size_t)warps * sizeof(unsigned));
    if (r == cudaSuccess) {
        rp_fill<<<blocks, 256, 0, stream>>>(
            P->pool, e, nl, vs, start, ce, P->tr, static_cast<ulonglong2 *>(R->addr),
            static_cast<uint2 *>(R->at), R->off, R->wl, flags + 1, flags + 2);
        r = cudaGetLastError();
    }
    if (r == cudaSuccess)
        r = cudaMemcpyAsync(h_flags + 1, flags + 1, 2 * sizeof *h_flags, cudaMemcpyDeviceToHost,
                            stream);
    if (r == cudaSuccess) r = cudaStreamSynchronize(stream);
    /* A^T x over row-major leaves: ordered by column within each leaf where
     * that makes its runs long (perm > 0: always, perm == 0: never); 2
     * bytes per plan entry. The bar is f64's two-entry bar for both
     * precisions: the gathers cost more than f32's lower bar gains (H100:
     * banded A^T x 22 % (f64) and 15 % (f32) faster with runs 0.92, circuit
     * 11-13 %, poisson3d f32 with runs 0.31 6 % slower) */
    const double lr = long_runs(P), rs = (double)h_flags[1] / (double)total,
                 rsorted = (double)h_flags[2] / (double)total;
    const bool order = r == cudaSuccess && P->tr && h_flags[0] == 0 &&
                       (perm > 0 || (perm < 0 && rs < lr && rsorted >= 0.4));
    if (order) r = cudaMalloc(&R->perm, (size_t)total * sizeof(unsigned short));
    if (order && r == cudaSuccess) {
        rp_perm<<<(nl + 255) / 256, 256, 0, stream>>>(P->pool, e, nl, R->off, P->tr,
                                                      static_cast<unsigned short *>(R->perm));
        r = cudaGetLastError();
    }
    if (r == cudaSuccess) r = cudaStreamSynchronize(stream); /* before the frees */
    if (cnt) (void)cudaFree(cnt);
    if (tmp) (void)cudaFree(tmp);
    if (r != cudaSuccess) {
        hisp_cuda_hs_rplan_free(R);
        return r;
    }
    R->nleaves = nl;
    R->total = (unsigned)total;
    R->warps = (unsigned)warps;
    R->slices = slices;
    R->pairs = h_flags[0] == 0;
    R->runs = R->perm ? rsorted : rs;
    return cudaGetLastError();
}

extern "C" cudaError_t hisp_cuda_hs_rplan_run(const hisp_cuda_hs *P, const hisp_cuda_hs_rplan *R,
                                              int pairs, int match, cudaStream_t stream)
{
    const unsigned blocks = (R->warps + 7) / 8;
    const ulonglong2 *ad = static_cast<const ulonglong2 *>(R->addr);
    const uint2 *at = static_cast<const uint2 *>(R->at);
    const unsigned *pm = static_cast<const unsigned *>(R->perm);
    if (R->pairs && (pairs > 0 || (pairs < 0 && R->runs >= long_runs(P)))) {
        if (P->f64 && pm)
            hs_leaf_replay2<double, true><<<blocks, 256, 0, stream>>>(
                *P, ad, at, R->off, R->wl, pm, R->nleaves, R->total, R->slices);
        else if (P->f64)
            hs_leaf_replay2<double, false><<<blocks, 256, 0, stream>>>(
                *P, ad, at, R->off, R->wl, pm, R->nleaves, R->total, R->slices);
        else if (pm)
            hs_leaf_replay2<float, true><<<blocks, 256, 0, stream>>>(
                *P, ad, at, R->off, R->wl, pm, R->nleaves, R->total, R->slices);
        else
            hs_leaf_replay2<float, false><<<blocks, 256, 0, stream>>>(
                *P, ad, at, R->off, R->wl, pm, R->nleaves, R->total, R->slices);
    } else if (match > 0) {
        if (P->f64)
            hs_leaf_replay<double, true><<<blocks, 256, 0, stream>>>(
                *P, ad, at, R->off, R->wl, R->nleaves, R->total, R->slices);
        else
            hs_leaf_replay<float, true><<<blocks, 256, 0, stream>>>(
                *P, ad, at, R->off, R->wl, R->nleaves, R->total, R->slices);
    } else if (P->f64) {
        hs_leaf_replay<double, false><<<blocks, 256, 0, stream>>>(*P, ad, at, R->off, R->wl,
                                                                  R->nleaves, R->total, R->slices);
    } else {
        hs_leaf_replay<float, false><<<blocks, 256, 0, stream>>>(*P, ad, at, R->off, R->wl,
                                                                 R->nleaves, R->total, R->slices);
    }
    return cudaGetLastError();
}

extern "C" void hisp_cuda_hs_bplan_free(hisp_cuda_hs_bplan *B)
{
    void *bufs[] = {B->rec, B->off, B->ustart, B->uleaf, B->uband};
    for (void *b : bufs)
        if (b) (void)cudaFree(b);
    memset(B, 0, sizeof *B);
}

extern "C" cudaError_t hisp_cuda_hs_bplan_build(const hisp_cuda_hs *P, const int *queues, int nq,
                                                const uint64_t *cap, unsigned slices,
                                                hisp_cuda_hs_bplan *B, cudaStream_t stream)
{
    memset(B, 0, sizeof *B);
    uint64_t n64 = 0;
    for (int i = 0; i < nq; i++)
        n64 += cap[i];
    if (n64 == 0 || n64 >= (1ull << 31) || slices == 0 || slices > 4096)
        return cudaErrorInvalidValue;
    const unsigned n = (unsigned)n64, ce = 32 * 8 * slices;
    const unsigned log2d = (unsigned)P->log2d, blocks = (n + 1 + 255) / 256;
    entry_t *e = nullptr;
    unsigned long long *cnt = nullptr, total = 0, units = 0, scratch_h[3] = {0, 0, 0};
    void *tmp = nullptr;
    size_t tmp_bytes = 0, t2 = 0;
    /* the COO leaf queues' entries together, sorted by (output, input) offset */
    cudaError_t r = cudaMalloc(&e, (size_t)n * sizeof *e);
    uint64_t at_ = 0;
    for (int i = 0; i < nq && r == cudaSuccess; i++) {
        if (cap[i])
            r = cudaMemcpyAsync(e + at_,
                                static_cast<const entry_t *>(P->entries) + P->base[queues[i]],
                                cap[i] * sizeof *e, cudaMemcpyDeviceToDevice, stream);
        at_ += cap[i];
    }
    if (r == cudaSuccess) r = hisp_cuda_hs_sort_entries(e, n, P->tr, stream);
    /* cnt, n + 1 each: counts, first entries, band starts where a band
     * starts, every leaf's band start, unit counts, unit indices; then 3
     * flags (a node past a 32-bit record index, unused, an empty leaf) */
    if (r == cudaSuccess) r = cudaMalloc(&cnt, (6 * ((size_t)n + 1) + 3) * sizeof *cnt);
    unsigned long long *start = cnt + n + 1, *bs0 = start + n + 1, *bs = bs0 + n + 1,
                       *ucnt = bs + n + 1, *uidx = ucnt + n + 1, *scratch = uidx + n + 1;
    if (r == cudaSuccess) r = cudaMemsetAsync(scratch, 0, 3 * sizeof *scratch, stream);
    if (r == cudaSuccess)
        r = cub::DeviceScan::ExclusiveSum(nullptr, tmp_bytes, cnt, start, (int)n + 1, stream);
    if (r == cudaSuccess)
        r = cub::DeviceScan::InclusiveScan(nullptr, t2, bs0, bs, max_u64(), (int)n, stream);
    if (r == cudaSuccess) r = cudaMalloc(&tmp, (tmp_bytes > t2 ? tmp_bytes : t2) + 16);
    if (r == cudaSuccess) {
        rp_count<<<blocks, 256, 0, stream>>>(P->pool, e, n, 0, cnt, nullptr);
        r = cub::DeviceScan::ExclusiveSum(tmp, tmp_bytes, cnt, start, (int)n + 1, stream);
    }
    if (r == cudaSuccess)
        r = cudaMemcpyAsync(&total, start + n, sizeof total, cudaMemcpyDeviceToHost, stream);
    if (r == cudaSuccess) r = cudaStreamSynchronize(stream);
    if (r == cudaSuccess && (total == 0 || total > 0xffffffffull - ce)) r = cudaErrorInvalidValue;
    if (r == cudaSuccess) {
        bp_band<<<blocks, 256, 0, stream>>>(e, n, start, P->tr, log2d, bs0);
        t2 = tmp_bytes > t2 ? tmp_bytes : t2;
        r = cub::DeviceScan::InclusiveScan(tmp, t2, bs0, bs, max_u64(), (int)n, stream);
    }
    if (r == cudaSuccess) {
        bp_units<<<blocks, 256, 0, stream>>>(n, start, bs, ce, ucnt, scratch + 2);
        r = cub::DeviceScan::ExclusiveSum(tmp, tmp_bytes, ucnt, uidx, (int)n + 1, stream);
    }
    if (r == cudaSuccess)
        r = cudaMemcpyAsync(&units, uidx + n, sizeof units, cudaMemcpyDeviceToHost, stream);
    if (r == cudaSuccess) r = cudaStreamSynchronize(stream);
    if (r == cudaSuccess && (units == 0 || units >= (1ull << 31))) r = cudaErrorInvalidValue;
    if (r == cudaSuccess) r = cudaMalloc(&B->rec, (size_t)n * sizeof(uint2));
    if (r == cudaSuccess) r = cudaMalloc((void **)&B->off, ((size_t)n + 1) * sizeof(unsigned));
    if (r == cudaSuccess) r = cudaMalloc((void **)&B->ustart, (units + 1) * sizeof(unsigned));
    if (r == cudaSuccess) r = cudaMalloc((void **)&B->uleaf, (units + 1) * sizeof(unsigned));
    if (r == cudaSuccess) r = cudaMalloc((void **)&B->uband, units * sizeof(unsigned));
    if (r == cudaSuccess) {
        bp_fill_off<<<blocks, 256, 0, stream>>>(n, start, B->off);
        bp_fill_rec<<<blocks, 256, 0, stream>>>(e, n, P->tr, static_cast<uint2 *>(B->rec),
                                                reinterpret_cast<unsigned *>(scratch));
        bp_fill_units<<<blocks, 256, 0, stream>>>(e, n, start, bs, uidx, ce, P->tr, log2d,
                                                  B->ustart, B->uleaf, B->uband);
        r = cudaGetLastError();
    }
    if (r == cudaSuccess)
        r = cudaMemcpyAsync(scratch_h, scratch, sizeof scratch_h, cudaMemcpyDeviceToHost, stream);
    if (r == cudaSuccess) r = cudaStreamSynchronize(stream); /* before the frees */
    /* an empty leaf, or a node past the records' 32-bit index */
    if (r == cudaSuccess && (scratch_h[2] || scratch_h[0])) r = cudaErrorInvalidValue;
    void *bufs[] = {e, cnt, tmp};
    for (void *b : bufs)
        if (b) (void)cudaFree(b);
    if (r != cudaSuccess) {
        hisp_cuda_hs_bplan_free(B);
        return r;
    }
    B->nleaves = n;
    B->total = (unsigned)total;
    B->units = (unsigned)units;
    return cudaGetLastError();
}

extern "C" cudaError_t hisp_cuda_hs_bplan_run(const hisp_cuda_hs *P, const hisp_cuda_hs_bplan *B,
                                              cudaStream_t stream)
{
    const uint2 *rec = static_cast<const uint2 *>(B->rec);
    if (P->f64)
        hs_leaf_band<double><<<B->units, 256, 0, stream>>>(*P, rec, B->off, B->ustart, B->uleaf,
                                                           B->uband, B->nleaves);
    else
        hs_leaf_band<float><<<B->units, 256, 0, stream>>>(*P, rec, B->off, B->ustart, B->uleaf,
                                                          B->uband, B->nleaves);
    return cudaGetLastError();
}
