/* HiSparse SpMV on CUDA, the host-launched kernels (whole-program module):
 * the begin kernel and the node kernels the host-polled controller
 * launches. The node kernels are in hisparse_nodes.cuh; the device-side
 * controller is in hisparse_cdp.cu. */
#include "hisparse_nodes.cuh"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <cstring>

namespace
{

/* y = beta*y, and block 0 resets the queues and puts the root in its queue. */
template <typename T> __global__ void hs_begin(hisp_cuda_hs P, long long n, T beta)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    T *y = static_cast<T *>(P.y);
    if (i < n) y[i] = beta == (T)0 ? (T)0 : beta * y[i];
    if (blockIdx.x) return;
    hisp_cuda_hs_ctl *c = static_cast<hisp_cuda_hs_ctl *>(P.ctl);
    unsigned q = threadIdx.x;
    if (q < HISP_CUDA_HS_QUEUES) {
        P.tails[q] = (int)q == P.root_queue && P.root ? 1u : 0u;
        c->head[q] = c->nodes[q] = c->launches[q] = 0;
    }
    if (q == 0) {
        c->rounds = 0;
        entry_t *e = static_cast<entry_t *>(P.entries) + P.base[P.root_queue];
        e->ref = P.root;
        e->row = e->col = e->depth = e->pad = 0;
    }
}

__global__ void hs_sort_keys(const entry_t *e, unsigned n, int tr, unsigned long long *key,
                             unsigned *idx)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned long long r = e[i].row, c = e[i].col;
    key[i] = tr ? c << 32 | r : r << 32 | c;
    idx[i] = i;
}

__global__ void hs_gather(const entry_t *in, const unsigned *idx, unsigned n, entry_t *out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[idx[i]];
}

/* ---- the replay's plan of a COO leaf queue ------------------------------------ */

__global__ void rp_count(const unsigned char *pool, const entry_t *e, unsigned n,
                         unsigned long long *cnt)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) cnt[i] = *reinterpret_cast<const unsigned *>(pool + (e[i].ref & ~15ull));
    if (i == n) cnt[n] = 0;
}

/* Leaf i's addresses less its first entry's index (so lane k reads entry k
 * of the queue's concatenation at base + k), its offsets, its first entry,
 * and the warps whose first entry lies in it. */
__global__ void rp_fill(const unsigned char *pool, const entry_t *e, unsigned n, unsigned vs,
                        const unsigned long long *start, unsigned ce, int tr, ulonglong2 *addr,
                        uint2 *at, unsigned *off, unsigned *wl, unsigned *small,
                        unsigned long long *cont)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > n) return;
    const unsigned long long s0 = start[i];
    off[i] = (unsigned)s0;
    if (i == n) return;
    const unsigned long long s1 = start[i + 1];
    if (s1 - s0 < 2) *small = 1; /* the two-entry lanes' walk needs >= 2 per leaf */
    const unsigned long long nd = reinterpret_cast<unsigned long long>(pool) + (e[i].ref & ~15ull);
    addr[i] = make_ulonglong2(nd + 4 - 2 * s0, nd + coo_payload((unsigned)(s1 - s0), vs) - vs * s0);
    at[i] = make_uint2(e[i].row, e[i].col);
    for (unsigned long long c = (s0 + ce - 1) / ce; c * ce < s1; c++)
        wl[c] = i;
    /* entries whose output index is their predecessor's in the leaf */
    const unsigned char *rc = reinterpret_cast<const unsigned char *>(nd + 4) + (tr ? 1 : 0);
    unsigned same = 0;
    for (unsigned k = 1; k < (unsigned)(s1 - s0); k++)
        same += rc[2 * k] == rc[2 * k - 2];
    if (same) atomicAdd(cont, (unsigned long long)same);
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
            const unsigned m = L + 1 + lane;
            const unsigned p = m <= nleaves ? __ldg(off + m) - base : 64u; /* >= 1 */
            const unsigned ends = __reduce_or_sync(0xffffffffu, p < 32 ? 1u << p : 0u);
            const unsigned lf = L + __popc(ends & le);
            L += __popc(ends) + (__any_sync(0xffffffffu, p == 32) ? 1u : 0u);
            if (k < total) {
                const ulonglong2 ad = __ldg(addr + lf);
                const uint2 o = __ldg(at + lf);
                const unsigned bb = reinterpret_cast<const unsigned short *>(ad.x)[k];
                const unsigned r = o.x + (bb & 255), c = o.y + (bb >> 8);
                key[u] = tr ? c : r;
                v[u] = reinterpret_cast<const T *>(ad.y)[k] * x[tr ? r : c];
            }
        }
#pragma unroll
        for (unsigned u = 0; u < U; u++) {
            if (j + u >= b) break; /* warp-uniform */
            if constexpr (MATCH)
                match_sum<T>(key[u], v[u], lane, y, alpha, s_v + (threadIdx.x & ~31u));
            else
                slice_sum<T>(key[u], v[u], lane, y, alpha);
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

/* hs_leaf_replay with two consecutive entries per lane (64-entry slices):
 * one walk and one scan per 64 entries. A slice holds at most 32 leaf
 * starts because the plan's leaves hold at least two entries (checked when
 * it is built), so lanes m = 0..31 reading the starts of leaves L+1..L+32
 * see them all. A warp covers exactly its plan chunk of 32 * cs entries. */
template <typename T>
__global__ void __launch_bounds__(256)
    hs_leaf_replay2(hisp_cuda_hs P, const ulonglong2 *addr, const uint2 *at, const unsigned *off,
                    const unsigned *wl, unsigned nleaves, unsigned total, unsigned cs)
{
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
    const unsigned e0 = 2 * lane; /* this lane's first position in a slice */
    /* starts at positions <= e0: all of lo and part of hi, or part of lo */
    const unsigned mlo = lane < 16 ? (2u << e0) - 1 : 0xffffffffu;
    const unsigned mhi = lane < 16 ? 0u : (2u << (e0 - 32)) - 1;
    const unsigned sh1 = (e0 + 1) & 31; /* position e0 + 1 in lo (lane < 16) or hi */
    for (unsigned base = a; base < kend; base += 64 * U) {
        unsigned ka[U], kb[U];
        T va[U], vb[U];
#pragma unroll
        for (unsigned u = 0; u < U; u++) {
            const unsigned sb = base + 64 * u, k = sb + e0;
            ka[u] = kb[u] = NOKEY;
            va[u] = vb[u] = 0;
            if (sb >= kend) continue; /* warp-uniform */
            const unsigned m = L + 1 + lane;
            const unsigned p = m <= nleaves ? __ldg(off + m) - sb : 128u; /* >= 1 */
            const unsigned lo = __reduce_or_sync(0xffffffffu, p < 32 ? 1u << p : 0u);
            const unsigned hi = __reduce_or_sync(0xffffffffu, p - 32 < 32 ? 1u << (p - 32) : 0u);
            const unsigned l0 = L + __popc(lo & mlo) + __popc(hi & mhi);
            const unsigned l1 = l0 + (((lane < 16 ? lo : hi) >> sh1) & 1);
            L += __popc(lo) + __popc(hi) + (__any_sync(0xffffffffu, p == 64) ? 1u : 0u);
            if (k < kend) {
                const ulonglong2 ad = __ldg(addr + l0);
                const uint2 o = __ldg(at + l0);
                const unsigned bb = reinterpret_cast<const unsigned short *>(ad.x)[k];
                const unsigned r = o.x + (bb & 255), c = o.y + (bb >> 8);
                ka[u] = tr ? c : r;
                va[u] = reinterpret_cast<const T *>(ad.y)[k] * x[tr ? r : c];
            }
            if (k + 1 < kend) {
                const ulonglong2 ad = __ldg(addr + l1);
                const uint2 o = __ldg(at + l1);
                const unsigned bb = reinterpret_cast<const unsigned short *>(ad.x)[k + 1];
                const unsigned r = o.x + (bb & 255), c = o.y + (bb >> 8);
                kb[u] = tr ? c : r;
                vb[u] = reinterpret_cast<const T *>(ad.y)[k + 1] * x[tr ? r : c];
            }
        }
#pragma unroll
        for (unsigned u = 0; u < U; u++)
            if (base + 64 * u < kend) pair_sum<T>(ka[u], kb[u], va[u], vb[u], lane, y, alpha);
    }
}

} // namespace

extern "C" void hisp_cuda_hs_rplan_free(hisp_cuda_hs_rplan *R)
{
    void *bufs[] = {R->addr, R->at, R->off, R->wl};
    for (void *b : bufs)
        if (b) (void)cudaFree(b);
    memset(R, 0, sizeof *R);
}

extern "C" cudaError_t hisp_cuda_hs_rplan_build(const hisp_cuda_hs *P, int q, uint64_t n,
                                                unsigned slices, hisp_cuda_hs_rplan *R,
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
    if (r == cudaSuccess) r = cudaMalloc(&cnt, (2 * ((size_t)nl + 1) + 2) * sizeof *cnt);
    if (r == cudaSuccess) r = cudaMalloc(&tmp, tmp_bytes ? tmp_bytes : 1);
    unsigned long long *start = cnt + nl + 1;
    /* [0]: a leaf of fewer than two entries; [1]: entries continuing a run */
    unsigned long long *flags = start + nl + 1, h_flags[2] = {0, 0};
    if (r == cudaSuccess) r = cudaMemsetAsync(flags, 0, sizeof h_flags, stream);
    if (r == cudaSuccess) {
        rp_count<<<blocks, 256, 0, stream>>>(P->pool, e, nl, cnt);
        r = cub::DeviceScan::ExclusiveSum(tmp, tmp_bytes, cnt, start, (int)nl + 1, stream);
    }
    if (r == cudaSuccess)
        r = cudaMemcpyAsync(&total, start + nl, sizeof total, cudaMemcpyDeviceToHost, stream);
    if (r == cudaSuccess) r = cudaStreamSynchronize(stream);
    if (r == cudaSuccess && (total == 0 || total > 0xffffffffull - ce))
        r = cudaErrorInvalidValue; /* entry offsets are 32-bit */
    const unsigned long long warps = (total + ce - 1) / ce;
    if (r == cudaSuccess) r = cudaMalloc(&R->addr, (size_t)nl * sizeof(ulonglong2));
    if (r == cudaSuccess) r = cudaMalloc(&R->at, (size_t)nl * sizeof(uint2));
    if (r == cudaSuccess) r = cudaMalloc((void **)&R->off, ((size_t)nl + 1) * sizeof(unsigned));
    if (r == cudaSuccess) r = cudaMalloc((void **)&R->wl, (size_t)warps * sizeof(unsigned));
    if (r == cudaSuccess) {
        rp_fill<<<blocks, 256, 0, stream>>>(P->pool, e, nl, vs, start, ce, P->tr,
                                            static_cast<ulonglong2 *>(R->addr),
                                            static_cast<uint2 *>(R->at), R->off, R->wl,
                                            reinterpret_cast<unsigned *>(flags), flags + 1);
        r = cudaGetLastError();
    }
    if (r == cudaSuccess)
        r = cudaMemcpyAsync(h_flags, flags, sizeof h_flags, cudaMemcpyDeviceToHost, stream);
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
    R->runs = (double)h_flags[1] / (double)total;
    return cudaGetLastError();
}

extern "C" cudaError_t hisp_cuda_hs_rplan_run(const hisp_cuda_hs *P, const hisp_cuda_hs_rplan *R,
                                              int pairs, int match, cudaStream_t stream)
{
    const unsigned blocks = (R->warps + 7) / 8;
    const ulonglong2 *ad = static_cast<const ulonglong2 *>(R->addr);
    const uint2 *at = static_cast<const uint2 *>(R->at);
    /* two entries per lane where runs are long: with runs of one entry its
     * two adds per lane (head and tail) spread a warp's adds over twice the
     * sectors of y, which cost more than the halved scan saves, and more
     * so for f64 adds (H100, forced on: banded, blockdiag, circuit N 10-18 %
     * faster, poisson3d N (runs 0.31) 8 % slower in f64 and 11 % faster in
     * f32, A^T x (runs under 0.02) up to 34 % slower) */
    const double longer = P->f64 ? 0.4 : 0.25;
    if (R->pairs && (pairs > 0 || (pairs < 0 && R->runs >= longer))) {
        if (P->f64)
            hs_leaf_replay2<double><<<blocks, 256, 0, stream>>>(*P, ad, at, R->off, R->wl,
                                                                R->nleaves, R->total, R->slices);
        else
            hs_leaf_replay2<float><<<blocks, 256, 0, stream>>>(*P, ad, at, R->off, R->wl,
                                                               R->nleaves, R->total, R->slices);
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

extern "C" cudaError_t hisp_cuda_hs_sort_entries(void *entries, uint64_t n, int tr,
                                                 cudaStream_t stream)
{
    if (n < 2) return cudaSuccess;
    if (n >= (1ull << 31)) return cudaErrorInvalidValue;
    int m = (int)n;
    unsigned long long *k0 = nullptr, *k1 = nullptr;
    unsigned *i0 = nullptr, *i1 = nullptr;
    entry_t *copy = nullptr;
    void *tmp = nullptr;
    size_t tmp_bytes = 0;
    cudaError_t e =
        cub::DeviceRadixSort::SortPairs(nullptr, tmp_bytes, k0, k1, i0, i1, m, 0, 64, stream);
    if (e == cudaSuccess) e = cudaMalloc(&k0, 2 * n * sizeof *k0);
    if (e == cudaSuccess) e = cudaMalloc(&i0, 2 * n * sizeof *i0);
    if (e == cudaSuccess) e = cudaMalloc(&copy, n * sizeof *copy);
    if (e == cudaSuccess) e = cudaMalloc(&tmp, tmp_bytes ? tmp_bytes : 1);
    unsigned blocks = (unsigned)((n + 255) / 256);
    entry_t *ent = static_cast<entry_t *>(entries);
    if (e == cudaSuccess) {
        k1 = k0 + n;
        i1 = i0 + n;
        hs_sort_keys<<<blocks, 256, 0, stream>>>(ent, (unsigned)n, tr, k0, i0);
        e = cub::DeviceRadixSort::SortPairs(tmp, tmp_bytes, k0, k1, i0, i1, m, 0, 64, stream);
    }
    if (e == cudaSuccess) {
        hs_gather<<<blocks, 256, 0, stream>>>(ent, i1, (unsigned)n, copy);
        e = cudaMemcpyAsync(ent, copy, n * sizeof *copy, cudaMemcpyDeviceToDevice, stream);
    }
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream); /* before the frees */
    void *bufs[] = {k0, i0, copy, tmp};
    for (void *b : bufs)
        if (b) (void)cudaFree(b);
    return e != cudaSuccess ? e : cudaGetLastError();
}

extern "C" cudaError_t hisp_cuda_hs_begin(const hisp_cuda_hs *P, int64_t n, double beta,
                                          cudaStream_t stream)
{
    unsigned blocks = n > 0 ? (unsigned)((n + 255) / 256) : 1;
    if (P->f64)
        hs_begin<double><<<blocks, 256, 0, stream>>>(*P, n, beta);
    else
        hs_begin<float><<<blocks, 256, 0, stream>>>(*P, n, (float)beta);
    return cudaGetLastError();
}

extern "C" cudaError_t hisp_cuda_hs_node(const hisp_cuda_hs *P, int q, uint64_t first,
                                         uint64_t count, cudaStream_t stream)
{
    if (P->f64)
        launch_node<double>(*P, q, first, count, stream);
    else
        launch_node<float>(*P, q, first, count, stream);
    return cudaGetLastError();
}

extern "C" cudaError_t hisp_cuda_hs_cdp_prepare(void);

extern "C" cudaError_t hisp_cuda_hs_prepare(int cdp)
{
    cudaError_t a = prefer_shared_carveout(), b = cdp ? hisp_cuda_hs_cdp_prepare() : cudaSuccess;
    return a != cudaSuccess ? a : b;
}
