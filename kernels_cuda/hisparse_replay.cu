/* HiSparse SpMV on CUDA, the replay's leaf kernels (whole-program module,
 * host launches): the kernels that walk a COO leaf queue's plan, one, two
 * or four entries per lane, and the band kernel (plans:
 * kernels_cuda/hisparse_plan.cu; backends/cuda/cuda_hisparse.c decides
 * which runs). */
#include "hisparse_nodes.cuh"

namespace
{

/* Entry k of the plan's concatenation, in leaf lf: its output index and
 * a_ij * x_j (a plan of one entry per lane has no padding). */
template <typename T>
__device__ __forceinline__ void plan_entry(const ulonglong2 *addr, const uint2 *at, unsigned lf,
                                           unsigned k, bool tr, const T *x, unsigned &key, T &v)
{
    const ulonglong2 ad = __ldg(addr + lf);
    const uint2 o = __ldg(at + lf);
    const unsigned bb = reinterpret_cast<const unsigned short *>(ad.x)[k];
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
template <typename T>
__global__ void __launch_bounds__(256)
    hs_leaf_replay(hisp_cuda_hs P, const ulonglong2 *addr, const uint2 *at, const unsigned *off,
                   const unsigned *wl, unsigned nleaves, unsigned total, unsigned cs)
{
    const unsigned lane = threadIdx.x & 31;
    const unsigned w = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    const unsigned slices = (total + 31) / 32;
    if ((unsigned long long)w * cs >= slices) return;
    const unsigned a = w * cs, b = min(slices, a + cs);
    const T *x = static_cast<const T *>(P.x);
    T *y = static_cast<T *>(P.y);
    const T alpha = (T)P.alpha;
    const bool tr = P.tr != 0;
    walk_slices<T>(
        wl[w], 32 * a, b - a, total, nleaves, lane, [&](unsigned m) { return __ldg(off + m); },
        [&](unsigned lf, unsigned k, unsigned &key, T &v) {
            plan_entry<T>(addr, at, lf, k, tr, x, key, v);
        },
        [&](unsigned key, T v) { slice_sum<T>(key, v, lane, y, alpha); });
}

/* Four neighbouring outputs at once (f32: one vector add; f64 has none). */
__device__ __forceinline__ void red_quad(float *p, float a, float b, float c, float d)
{
    red_add4(p, make_float4(a, b, c, d));
}
__device__ __forceinline__ void red_quad(double *p, double a, double b, double c, double d)
{
    red_add(p, a), red_add(p + 1, b), red_add(p + 2, c), red_add(p + 3, d);
}

/* The sums of a 64-entry slice held two consecutive entries per lane
 * (keys ka, kb; values va, vb), one add per run of equal keys. A lane's
 * tail (kb, with va when ka == kb) enters a segmented inclusive scan
 * towards the run's last lane; a lane whose two keys differ adds its head
 * (ka) itself, with the previous lane's run sum when that run has key ka.
 * Per entry half the shuffles of slice_sum. With `paired`, a head and
 * tail on neighbouring outputs go as one vector add; with `quad` (a lane
 * of four entries on four consecutive outputs, whose middle sums m1, m2
 * the kernel kept) the four go as one (a tail that the next lane's run
 * continues adds 0 there). */
template <typename T>
__device__ __forceinline__ void pair_sum(unsigned ka, unsigned kb, T va, T vb, unsigned lane, T *y,
                                         T alpha, bool paired, bool quad = false, T m1 = 0,
                                         T m2 = 0)
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
    const bool head = !pure && ka != NOKEY, tail = kb != NOKEY && (lane == 31 || nk != kb);
    const T hv = alpha * (joins ? va + prev : va);
    if (quad) { /* head and middles always; the tail where its run ends */
        red_quad(&y[ka], hv, alpha * m1, alpha * m2, tail ? alpha * S : (T)0);
        return;
    }
    if (paired && head && tail && kb == ka + 1) { /* lines of one entry per row */
        red_add2(&y[ka], hv, alpha * S);
        return;
    }
    if (head) red_add(&y[ka], hv);
    if (tail) red_add(&y[kb], alpha * S);
}

template <typename T> struct pair_of;
template <> struct pair_of<float> {
    using type = float2;
};
template <> struct pair_of<double> {
    using type = double2;
};

/* hs_leaf_replay with W = 2 or 4 consecutive entries per lane (32 W-entry
 * slices): one walk, one leaf record and one scan per 32 W entries. The
 * plan is padded (every leaf starts at a multiple of W), so a lane's
 * entries lie in one leaf and load as W / 2 4-byte coordinate words and
 * W / 2 value pairs; the walk is walk_slice's over groups of W. A lane
 * folds its entries into a head (the entries of its first key), a tail (of
 * its last) and, with four, at most two middle entries, which it adds
 * itself (rarely: its keys are ordered, row-major leaves or by column
 * through perm, and runs are long where four run); heads and tails go
 * through pair_sum. A warp covers exactly its plan chunk of 32 * cs
 * entries. VEC (f32 plans whose outputs mostly step by one, without perm):
 * a lane's outputs in a row go to y as one vector add (pair_sum); a
 * kernel of its own, since the extra registers of the check (beyond
 * perm's) slowed banded f32 A^T x. */
template <typename T, unsigned W, bool PERM, bool VEC = false>
__global__ void __launch_bounds__(256)
    hs_leaf_replayw(hisp_cuda_hs P, const ulonglong2 *addr, const uint2 *at, const unsigned *off,
                    const unsigned *wl, const unsigned *perm, unsigned nleaves, unsigned total,
                    unsigned cs)
{
    static_assert(W == 2 || W == 4, "two or four entries per lane");
    using T2 = typename pair_of<T>::type;
    constexpr unsigned U = 2, S = 32 * W; /* S: entries per slice */
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
    constexpr bool paired = VEC && sizeof(T) == 4;
    unsigned L = wl[w];
    const unsigned le = lane == 31 ? 0xffffffffu : (2u << lane) - 1; /* lanes <= this one */
    for (unsigned base = a; base < kend; base += S * U) {
        unsigned ka[U], kb[U];
        T va[U], vb[U], m1[U], m2[U];
        bool quad[U];
#pragma unroll
        for (unsigned u = 0; u < U; u++) {
            const unsigned sb = base + S * u, k = sb + W * lane; /* kend, k: multiples of W */
            ka[u] = kb[u] = NOKEY;
            va[u] = vb[u] = m1[u] = m2[u] = 0;
            quad[u] = false;
            if (sb >= kend) continue; /* warp-uniform */
            bool last;
            const unsigned lf = walk_slice(
                L, sb / W, lane, le, nleaves, [&](unsigned m) { return __ldg(off + m) / W; },
                &last);
            if (k >= kend) continue;
            const ulonglong2 ad = __ldg(addr + lf);
            const uint2 o = __ldg(at + lf);
            /* coordinates start 4 bytes into the node: 4-byte words */
            const unsigned short *co = reinterpret_cast<const unsigned short *>(ad.x & ~3ull);
            const T *vp = reinterpret_cast<const T *>(ad.y);
            unsigned c[W];
            T v[W];
            const unsigned s0 = PERM ? __ldg(off + lf) : 0;
#pragma unroll
            for (unsigned h = 0; h < W / 2; h++) {
                if constexpr (PERM) { /* the lane's entries by the leaf's order */
                    const unsigned pp = __ldg(perm + (k >> 1) + h);
                    const unsigned i0 = s0 + (pp & 0xffff), i1 = s0 + (pp >> 16);
                    c[2 * h] = co[i0], c[2 * h + 1] = co[i1];
                    v[2 * h] = vp[i0], v[2 * h + 1] = vp[i1];
                } else {
                    const unsigned cc = *reinterpret_cast<const unsigned *>(co + k + 2 * h);
                    const T2 vv = *reinterpret_cast<const T2 *>(vp + k + 2 * h);
                    c[2 * h] = cc & 0xffff, c[2 * h + 1] = cc >> 16;
                    v[2 * h] = vv.x, v[2 * h + 1] = vv.y;
                }
            }
            /* padding (the leaf's last pad entries): its predecessor's key, 0 */
            const unsigned pad = last ? (unsigned)(ad.x & 3) : 0;
            unsigned key[W];
#pragma unroll
            for (unsigned j = 0; j < W; j++) {
                const unsigned r = o.x + (c[j] & 255), cl = o.y + (c[j] >> 8);
                if (j == 0 || j < W - pad) {
                    key[j] = tr ? cl : r;
                    v[j] *= x[tr ? r : cl];
                } else {
                    key[j] = key[j - 1];
                    v[j] = 0;
                }
            }
            /* keys equal to the first go to the head, to the last to the
             * tail (none when they are the same key: pair_sum's pure lane),
             * the others (at most two, ordered unless A^T x without perm)
             * are added here */
            ka[u] = key[0];
            kb[u] = key[W - 1];
            const bool pure = key[0] == key[W - 1];
            va[u] = pure ? v[0] + v[W - 1] : v[0];
            vb[u] = pure ? 0 : v[W - 1];
            if constexpr (W == 4 && paired) { /* four outputs in a row: one vector add */
                if (key[1] == key[0] + 1 && key[2] == key[0] + 2 && key[3] == key[0] + 3) {
                    quad[u] = true;
                    m1[u] = v[1];
                    m2[u] = v[2];
                    continue;
                }
            }
            T mid = 0; /* the middle run ending at entry 1 or 2 */
#pragma unroll
            for (unsigned j = 1; j + 1 < W; j++) {
                if (key[j] == key[0]) {
                    va[u] += v[j];
                } else if (key[j] == key[W - 1]) {
                    vb[u] += v[j];
                } else {
                    mid += v[j];
                    if (j == W - 2 || key[j + 1] != key[j]) {
                        red_add(&y[key[j]], alpha * mid);
                        mid = 0;
                    }
                }
            }
        }
#pragma unroll
        for (unsigned u = 0; u < U; u++)
            if (base + S * u < kend)
                pair_sum<T>(ka[u], kb[u], va[u], vb[u], lane, y, alpha, paired, quad[u], m1[u],
                            m2[u]);
    }
}

/* ---- the band replay: every COO leaf of a band of d output indices ----------- */

/* Adds v into acc[key] for every lane whose key is not NOKEY, the lanes
 * of one warp at once with plain read-modify-writes: lanes of equal key
 * (runs that were not neighbours in the slice) first sum into the lowest
 * of them, so the writers' keys are distinct. acc is this warp's own. */
template <typename T>
__device__ __forceinline__ void warp_acc_add(T *acc, unsigned key, T v, unsigned lane)
{
    const unsigned grp = __match_any_sync(0xffffffffu, key);
    const bool lead = key != NOKEY && __ffs(grp) - 1 == (int)lane;
    unsigned todo = lead ? grp & (grp - 1) : 0; /* the other lanes of its key */
    while (__any_sync(0xffffffffu, todo != 0)) {
        const T o = __shfl_sync(0xffffffffu, v, todo ? __ffs(todo) - 1 : lane);
        if (todo) {
            v += o;
            todo &= todo - 1;
        }
    }
    if (lead) acc[key] += v;
    __syncwarp(); /* the next slice's writers may be other lanes */
}

/* Entry k (of leaf lf) of the band plan: its output index within the band
 * and its product with x. 12 bytes of plan per leaf (rec, off), not 28:
 * on rmat they outweighed the leaves' own bytes. */
template <typename T>
__device__ __forceinline__ void band_entry(const hisp_cuda_hs &P, const uint2 *rec,
                                           const unsigned *off, unsigned lf, unsigned k,
                                           unsigned &key, T &v)
{
    const bool tr = P.tr != 0;
    const unsigned s0 = __ldg(off + lf), i = k - s0;
    const uint2 r = __ldg(rec + lf);
    const unsigned char *nd = P.pool + 16ull * r.x;
    const unsigned bb = reinterpret_cast<const unsigned short *>(nd + 4)[i];
    key = tr ? bb >> 8 : bb & 255;
    const T *val =
        reinterpret_cast<const T *>(nd + coo_payload(__ldg(off + lf + 1) - s0, sizeof(T)));
    v = val[i] * static_cast<const T *>(P.x)[r.y + (tr ? bb & 255 : bb >> 8)];
}

/* A slice's run sums into the accumulators acc: shared-memory atomics
 * (ATOMIC), or one plain add per distinct output index (warp_acc_add;
 * acc then belongs to this warp alone). */
template <typename T, bool ATOMIC>
__device__ __forceinline__ void band_sum(T *acc, unsigned key, T v, unsigned lane)
{
    unsigned rk = NOKEY;
    T rv = 0;
    slice_runs<T>(key, v, lane, [&](unsigned k, T sum) {
        if (ATOMIC) {
            atomicAdd(&acc[k], sum);
        } else {
            rk = k;
            rv = sum;
        }
    });
    if (!ATOMIC) warp_acc_add<T>(acc, rk, rv, lane);
}

/* Each touched accumulator of a band, summed over `sets` sets of d, into
 * y once (NaN too). (Groups of four as one f32 vector add were no faster
 * on rmat and circuit: BENCHMARKS, HiSparse SpMV.) */
template <typename T>
__device__ __forceinline__ void band_flush(const hisp_cuda_hs &P, const T *acc, unsigned sets,
                                           unsigned band)
{
    T *y = static_cast<T *>(P.y);
    const unsigned d = 1u << P.log2d;
    for (unsigned i = threadIdx.x; i < d; i += blockDim.x) {
        T s = acc[i];
        for (unsigned w = 1; w < sets; w++)
            s += acc[w * d + i];
        if (s != (T)0 || s != s) red_add(&y[band + i], (T)P.alpha * s);
    }
}

/* The band replay's kernel: a block per unit (at most 32 * 8 * cs entries
 * of one band of d output indices, the bands being the leaves' output
 * offsets / d, all COO leaf queues together, sorted by band). Its nw (8 or
 * 4) warps share the unit's slices, each from the plan's leaf uwl of its
 * first entry, walk them as hs_leaf_replay does, merge runs of equal
 * output index in registers and add the run sums into d accumulators in
 * shared memory: one set for the block by shared-memory atomics (ATOMIC),
 * or a set per warp with one plain add per distinct output index (f64's
 * shared atomics are compare-and-swap loops: a third of the stall samples
 * on rmat). The block then adds each touched output index's sum into y
 * once: one global add per output index per unit instead of one per run.
 * The plan times the four variants (hisp_cuda_hs_bplan_tune). (A warp per
 * unit taking units from a ticket counter, without the block's barrier,
 * was slower.) */
template <typename T, bool ATOMIC>
__global__ void __launch_bounds__(32 * BAND_WARPS)
    hs_leaf_band(hisp_cuda_hs P, const uint2 *rec, const unsigned *off, const unsigned *ustart,
                 const unsigned *uband, const unsigned *uwl, unsigned nleaves)
{
    extern __shared__ __align__(16) unsigned char band_smem[];
    T *const acc = reinterpret_cast<T *>(band_smem); /* ATOMIC ? d : nw * d */
    const unsigned u = blockIdx.x, lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    const unsigned nw = blockDim.x >> 5, d = 1u << P.log2d, sets = ATOMIC ? 1 : nw;
    for (unsigned i = threadIdx.x; i < sets * d; i += blockDim.x)
        acc[i] = 0;
    __syncthreads();
    const unsigned us = ustart[u], ue = ustart[u + 1];
    const unsigned per = band_warp_entries(ue - us, nw); /* entries per warp */
    const unsigned a = us + wid * per, kend = min(ue, a + per);
    T *const mine = ATOMIC ? acc : acc + wid * d;
    if (a < kend)
        walk_slices<T>(
            __ldg(uwl + u * BAND_UWL + band_uwl_slot(nw, wid)), a, (kend - a + 31) / 32, kend,
            nleaves, lane, [&](unsigned m) { return __ldg(off + m); },
            [&](unsigned lf, unsigned k, unsigned &key, T &v) {
                band_entry<T>(P, rec, off, lf, k, key, v);
            },
            [&](unsigned key, T v) { band_sum<T, ATOMIC>(mine, key, v, lane); });
    __syncthreads();
    band_flush<T>(P, acc, sets, uband[u]);
}

} // namespace

/* The plan's kernel: R->width entries per lane (by run length, from
 * hisp_cuda_hs_rplan_build), in the plan's order (R->perm). */
template <typename T>
static void rplan_launch(const hisp_cuda_hs *P, const hisp_cuda_hs_rplan *R, cudaStream_t stream)
{
    const unsigned blocks = (R->warps + 7) / 8;
    const ulonglong2 *ad = static_cast<const ulonglong2 *>(R->addr);
    const uint2 *at = static_cast<const uint2 *>(R->at);
    const unsigned *pm = static_cast<const unsigned *>(R->perm);
    if constexpr (sizeof(T) == 4) { /* f32 vector adds (R->vec: never with perm) */
        if (R->vec && R->width == 4) {
            hs_leaf_replayw<T, 4, false, true><<<blocks, 256, 0, stream>>>(
                *P, ad, at, R->off, R->wl, pm, R->nleaves, R->total, R->slices);
            return;
        }
        if (R->vec && R->width == 2) {
            hs_leaf_replayw<T, 2, false, true><<<blocks, 256, 0, stream>>>(
                *P, ad, at, R->off, R->wl, pm, R->nleaves, R->total, R->slices);
            return;
        }
    }
    if (R->width == 4 && pm)
        hs_leaf_replayw<T, 4, true><<<blocks, 256, 0, stream>>>(*P, ad, at, R->off, R->wl, pm,
                                                                R->nleaves, R->total, R->slices);
    else if (R->width == 4)
        hs_leaf_replayw<T, 4, false><<<blocks, 256, 0, stream>>>(*P, ad, at, R->off, R->wl, pm,
                                                                 R->nleaves, R->total, R->slices);
    else if (R->width == 2 && pm)
        hs_leaf_replayw<T, 2, true><<<blocks, 256, 0, stream>>>(*P, ad, at, R->off, R->wl, pm,
                                                                R->nleaves, R->total, R->slices);
    else if (R->width == 2)
        hs_leaf_replayw<T, 2, false><<<blocks, 256, 0, stream>>>(*P, ad, at, R->off, R->wl, pm,
                                                                 R->nleaves, R->total, R->slices);
    else
        hs_leaf_replay<T><<<blocks, 256, 0, stream>>>(*P, ad, at, R->off, R->wl, R->nleaves,
                                                      R->total, R->slices);
}

extern "C" cudaError_t hisp_cuda_hs_rplan_run(const hisp_cuda_hs *P, const hisp_cuda_hs_rplan *R,
                                              cudaStream_t stream)
{
    if (P->f64)
        rplan_launch<double>(P, R, stream);
    else
        rplan_launch<float>(P, R, stream);
    return cudaGetLastError();
}

template <typename T, bool ATOMIC>
static void band_launch(const hisp_cuda_hs *P, const hisp_cuda_hs_bplan *B, unsigned nw,
                        cudaStream_t stream)
{
    const unsigned d = 1u << P->log2d;
    hs_leaf_band<T, ATOMIC><<<B->units, 32 * nw, (ATOMIC ? 1 : nw) * d * sizeof(T), stream>>>(
        *P, static_cast<const uint2 *>(B->rec), B->off, B->ustart, B->uband, B->uwl, B->nleaves);
}

/* With the variant warps, atomic (the plan's where warps <= 0). */
static cudaError_t bplan_run(const hisp_cuda_hs *P, const hisp_cuda_hs_bplan *B, int warps,
                             int atomic, cudaStream_t stream)
{
    const unsigned nw = warps == 4 || warps == 8 ? (unsigned)warps : B->warps;
    if (warps <= 0) atomic = B->atomic;
    if (P->f64 && atomic)
        band_launch<double, true>(P, B, nw, stream);
    else if (P->f64)
        band_launch<double, false>(P, B, nw, stream);
    else if (atomic)
        band_launch<float, true>(P, B, nw, stream);
    else
        band_launch<float, false>(P, B, nw, stream);
    return cudaGetLastError();
}

extern "C" cudaError_t hisp_cuda_hs_bplan_run(const hisp_cuda_hs *P, const hisp_cuda_hs_bplan *B,
                                              cudaStream_t stream)
{
    return bplan_run(P, B, 0, 0, stream);
}

/* The variant by measurement: the best of 8 or 4 warps and of atomics or
 * a set per warp depends on the matrix (f64: rmat A x fastest with 4 warps
 * and a set each, circuit with 8 warps and atomics; f32 alike either way
 * but for the warps). */
extern "C" cudaError_t hisp_cuda_hs_bplan_tune(const hisp_cuda_hs *P, hisp_cuda_hs_bplan *B,
                                               uint64_t ny, cudaStream_t stream)
{
    const int cw[4] = {8, 8, 4, 4}, ca[4] = {0, 1, 0, 1}, nc = 4;
    hisp_cuda_hs S = *P;
    cudaEvent_t e[2] = {nullptr, nullptr};
    cudaError_t r = cudaMalloc(&S.y, (size_t)(ny + 256) * (P->f64 ? 8 : 4));
    for (int i = 0; i < 2 && r == cudaSuccess; i++)
        r = cudaEventCreate(&e[i]);
    /* a warm pass, then three passes over the candidates in turn, each
     * candidate's fastest run: interleaved, so that a clock still rising
     * after the plan's build favours none of them (one pass in order had
     * picked 4 warps for rmat f64 A^T x, slower than 8 after it) */
    float best[4] = {0, 0, 0, 0};
    for (int pass = 0; pass < 4 && r == cudaSuccess; pass++)
        for (int c = 0; c < nc && r == cudaSuccess; c++) {
            float t = 0;
            r = cudaEventRecord(e[0], stream);
            if (r == cudaSuccess) r = bplan_run(&S, B, cw[c], ca[c], stream);
            if (r == cudaSuccess) r = cudaEventRecord(e[1], stream);
            if (r == cudaSuccess) r = cudaEventSynchronize(e[1]);
            if (r == cudaSuccess) r = cudaEventElapsedTime(&t, e[0], e[1]);
            if (pass == 1 || (pass > 1 && t < best[c])) best[c] = t;
        }
    for (int c = 0, w = 0; c < nc && r == cudaSuccess; c++)
        if (best[c] < best[w] || c == 0) {
            w = c;
            B->warps = (unsigned)cw[c];
            B->atomic = ca[c];
        }
    for (int i = 0; i < 2; i++)
        if (e[i]) (void)cudaEventDestroy(e[i]);
    if (S.y) (void)cudaFree(S.y);
    return r;
}
