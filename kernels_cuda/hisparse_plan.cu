/* HiSparse SpMV on CUDA, the replay's plans (whole-program module): per
 * COO leaf queue the records the replay kernels walk (hs_leaf_replay*),
 * and the band plan of hs_leaf_band; built once per queue order, on the
 * device (backends/cuda/cuda_hisparse.c decides which; the kernels are in
 * kernels_cuda/hisparse_replay.cu). */
#include "hisparse_nodes.cuh"

#include <cub/device/device_scan.cuh>

#include <cstring>

namespace
{

/* ---- the plan of a COO leaf queue --------------------------------------------- */

/* Entries of each leaf rounded up to a multiple of g (1, 2 or 4: the
 * lanes' entries of the kernel that walks the plan; every leaf then starts
 * at a multiple of g, so a lane's entries share a leaf and load as one
 * word each, the node's padding slots standing for the missing ones). With
 * st (the first pass, g = 1): st[0] = 1 where a leaf holds one entry, st[1]
 * where it holds two (no padding slot to pad to 4), st[2] the entries
 * whose output index is their predecessor's in the leaf, st[3] as many
 * with each leaf's entries ordered by output index (its count less its
 * distinct output indices), st[4] the entries, st[5] the entries whose
 * output index is their predecessor's plus one. */
__global__ void rp_count(const unsigned char *pool, const entry_t *e, unsigned n, unsigned g,
                         int tr, unsigned long long *cnt, unsigned long long *st)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == n) cnt[n] = 0;
    if (i >= n) return;
    const unsigned char *nd = pool + (e[i].ref & ~15ull);
    const unsigned c = *reinterpret_cast<const unsigned *>(nd);
    cnt[i] = (c + g - 1) & ~(g - 1);
    if (!st) return;
    if (c < 3) atomicMax(&st[c < 2 ? 0 : 1], 1ull);
    const unsigned char *rc = nd + 4 + (tr ? 1 : 0);
    unsigned same = 0, step = 0, seen[8] = {0, 0, 0, 0, 0, 0, 0, 0}, distinct = 0;
    for (unsigned k = 0; k < c; k++) {
        const unsigned o = rc[2 * k], bit = 1u << (o & 31);
        same += k > 0 && o == rc[2 * k - 2];
        step += k > 0 && o == rc[2 * k - 2] + 1u;
        distinct += (seen[o >> 5] & bit) == 0;
        seen[o >> 5] |= bit;
    }
    atomicAdd(&st[4], (unsigned long long)c);
    if (same) atomicAdd(&st[2], (unsigned long long)same);
    if (step) atomicAdd(&st[5], (unsigned long long)step);
    if (c > distinct) atomicAdd(&st[3], (unsigned long long)(c - distinct));
}

/* Leaf i's addresses less its first entry's index (so lane k reads entry k
 * of the queue's concatenation at base + k; the low two bits of the
 * coordinates' address: how many of the leaf's last plan entries are its
 * node's padding slots, value 0, which add nothing), its offsets, its
 * first entry, and the warps whose first entry lies in it. */
__global__ void rp_fill(const unsigned char *pool, const entry_t *e, unsigned n, unsigned vs,
                        const unsigned long long *start, unsigned ce, ulonglong2 *addr, uint2 *at,
                        unsigned *off, unsigned *wl)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > n) return;
    const unsigned long long s0 = start[i];
    off[i] = (unsigned)s0;
    if (i == n) return;
    const unsigned long long s1 = start[i + 1];
    const unsigned long long nd = reinterpret_cast<unsigned long long>(pool) + (e[i].ref & ~15ull);
    const unsigned c = *reinterpret_cast<const unsigned *>(nd); /* s1 - s0 less 0..3 */
    addr[i] = make_ulonglong2((nd + 4 - 2 * s0) | (s1 - s0 - c), nd + coo_payload(c, vs) - vs * s0);
    at[i] = make_uint2(e[i].row, e[i].col);
    for (unsigned long long w = (s0 + ce - 1) / ce; wl && w * ce < s1; w++)
        wl[w] = i;
}

/* The order by output index within each leaf of a padded A^T x plan (a
 * counting sort of its entries by column; stable, so rows stay in order):
 * perm[k] is the leaf-local index of the leaf's k-th entry in that order;
 * the padding stays last. Runs of equal output index then
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
    for (unsigned k = c; k < off[i + 1] - s0; k++)
        perm[s0 + k] = (unsigned short)k;
}

/* ---- the band plan ------------------------------------------------------------ */

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

/* The leaf of each warp's first entry, for blocks of 8 and of 4 warps
 * (hs_leaf_band's split of a unit into contiguous slices per warp;
 * BAND_UWL per unit; ~0u for a warp without entries): the kernel then
 * starts each warp with one load instead of a binary search over the
 * unit's leaves (9 dependent loads on rmat; faster on rmat and circuit).
 * Leaves of every slice, so that a warp's slices would not wait for one
 * another's walks, were slower (f64 rmat, circuit). */
__global__ void bp_warp_leaves(unsigned units, const unsigned *ustart, const unsigned *uleaf,
                               const unsigned *off, unsigned n, unsigned *uwl)
{
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x, u = t / BAND_UWL;
    if (u >= units) return;
    const unsigned slot = t % BAND_UWL, nw = slot < BAND_WARPS ? BAND_WARPS : BAND_WARPS / 2;
    const unsigned us = ustart[u], ue = ustart[u + 1];
    const unsigned a =
        us + (slot < BAND_WARPS ? slot : slot - BAND_WARPS) * band_warp_entries(ue - us, nw);
    if (a >= ue) {
        uwl[t] = ~0u;
        return;
    }
    unsigned L = uleaf[u], hi = min(uleaf[u + 1], n - 1);
    while (L < hi) {
        const unsigned mid = (L + hi + 1) >> 1;
        if (off[mid] <= a)
            L = mid;
        else
            hi = mid - 1;
    }
    uwl[t] = L;
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

} // namespace

extern "C" void hisp_cuda_hs_rplan_free(hisp_cuda_hs_rplan *R)
{
    void *bufs[] = {R->addr, R->at, R->off, R->wl, R->perm};
    for (void *b : bufs)
        if (b) (void)cudaFree(b);
    memset(R, 0, sizeof *R);
}

/* Runs (entries continuing their predecessor's output index, / all) from
 * which several entries per lane pay: with runs of one entry a lane's
 * adds (head and tail) spread a warp's adds over more sectors of y, which
 * cost more than the shared scan saves, and more so for f64 adds (two
 * entries forced on: banded, blockdiag, circuit N faster, poisson3d N
 * (runs 0.31) slower in f64 and faster in f32, A^T x (runs under 0.02)
 * much slower) */
static double long_runs(const hisp_cuda_hs *P)
{
    return P->f64 ? 0.4 : 0.25;
}

extern "C" cudaError_t hisp_cuda_hs_rplan_build(const hisp_cuda_hs *P, int q, uint64_t n,
                                                hisp_cuda_hs_rplan *R, cudaStream_t stream)
{
    memset(R, 0, sizeof *R);
    if (n == 0 || n >= (1ull << 31)) return cudaErrorInvalidValue;
    const entry_t *e = static_cast<const entry_t *>(P->entries) + P->base[q];
    const unsigned nl = (unsigned)n, vs = P->f64 ? 8 : 4;
    const unsigned blocks = (nl + 1 + 255) / 256;
    unsigned long long *cnt = nullptr, total = 0;
    void *tmp = nullptr;
    size_t tmp_bytes = 0;
    cudaError_t r =
        cub::DeviceScan::ExclusiveSum(nullptr, tmp_bytes, cnt, cnt, (int)nl + 1, stream);
    if (r == cudaSuccess) r = cudaMalloc(&cnt, (2 * ((size_t)nl + 1) + 6) * sizeof *cnt);
    if (r == cudaSuccess) r = cudaMalloc(&tmp, tmp_bytes ? tmp_bytes : 1);
    unsigned long long *start = cnt + nl + 1, *st = start + nl + 1, h_st[6] = {0, 0, 0, 0, 0, 0};
    if (r == cudaSuccess) r = cudaMemsetAsync(st, 0, sizeof h_st, stream);
    if (r == cudaSuccess) {
        rp_count<<<blocks, 256, 0, stream>>>(P->pool, e, nl, 1, P->tr, cnt, st);
        r = cudaMemcpyAsync(h_st, st, sizeof h_st, cudaMemcpyDeviceToHost, stream);
    }
    if (r == cudaSuccess) r = cudaStreamSynchronize(stream);
    /* the entries per lane by run length, where the leaves allow it (4: no
     * leaf under three entries, 2: none under two). A^T x over row-major
     * leaves: each leaf's entries ordered by column where that makes its
     * runs long (2 bytes per plan entry). Its bar is f64's
     * two-entry bar for both precisions: the gathers cost more than f32's
     * lower bar gains (banded A^T x faster in both precisions with runs
     * 0.92, circuit too, poisson3d f32 with runs 0.31 slower). Not with f32
     * vector adds where three in four entries continue their predecessor's
     * output index by one (rows of dense blocks): four per lane in leaf
     * order are then one add, without the permutation's bytes (blockdiag
     * f32 A^T x faster). */
    const double all = h_st[4] ? (double)h_st[4] : 1.0;
    const double rs = (double)h_st[2] / all, rsorted = (double)h_st[3] / all;
    const double steps = (double)h_st[5] / all;
    const unsigned most = h_st[0] ? 1 : h_st[1] ? 2 : 4;
    const bool order =
        P->tr && most > 1 && rsorted >= 0.4 && rs < 0.4 && !(P->vred && most == 4 && steps >= 0.75);
    const double runs = order ? rsorted : rs;
    /* f32 vector adds where half the entries step by one (P->vred) */
    const bool vec = P->vred && !order && most > 1 && steps >= 0.5;
    /* four per lane from runs 0.5: a lane then adds its middle entries
     * itself, one add each, and with shorter runs those outweigh the
     * saved scans (poisson3d f32 A x, runs 0.31, slower than with two;
     * banded, blockdiag f32 A x, runs about 0.9, faster). With vector adds
     * (vec) four wherever the leaves allow: a lane's four outputs in a row
     * are one add (poisson3d f32 A x and A^T x faster than with two and
     * scalar adds). */
    unsigned g = vec ? 4 : runs < long_runs(P) ? 1 : runs < 0.5 ? 2 : 4;
    g = g < most ? g : most;
    /* 8 slices per warp, 16 for four entries per lane in leaf order (banded
     * A x faster than with 8; with 8 elsewhere, A^T x by column and one or
     * two entries per lane faster than with 16) */
    const unsigned slices = g == 4 && !order ? 16 : 8;
    const unsigned ce = 32 * slices;
    if (r == cudaSuccess) {
        rp_count<<<blocks, 256, 0, stream>>>(P->pool, e, nl, g, P->tr, cnt, nullptr);
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
        rp_fill<<<blocks, 256, 0, stream>>>(P->pool, e, nl, vs, start, ce,
                                            static_cast<ulonglong2 *>(R->addr),
                                            static_cast<uint2 *>(R->at), R->off, R->wl);
        r = cudaGetLastError();
    }
    if (r == cudaSuccess && order && g > 1) {
        r = cudaMalloc(&R->perm, (size_t)total * sizeof(unsigned short));
        if (r == cudaSuccess)
            rp_perm<<<(nl + 255) / 256, 256, 0, stream>>>(P->pool, e, nl, R->off, P->tr,
                                                          static_cast<unsigned short *>(R->perm));
        if (r == cudaSuccess) r = cudaGetLastError();
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
    R->width = g;
    R->vec = vec && g > 1;
    R->runs = R->perm ? rsorted : rs;
    return cudaGetLastError();
}

extern "C" void hisp_cuda_hs_bplan_free(hisp_cuda_hs_bplan *B)
{
    void *bufs[] = {B->rec, B->off, B->ustart, B->uleaf, B->uband, B->uwl};
    for (void *b : bufs)
        if (b) (void)cudaFree(b);
    memset(B, 0, sizeof *B);
}

extern "C" cudaError_t hisp_cuda_hs_bplan_build(const hisp_cuda_hs *P, const int *queues, int nq,
                                                const uint64_t *cap, hisp_cuda_hs_bplan *B,
                                                cudaStream_t stream)
{
    memset(B, 0, sizeof *B);
    uint64_t n64 = 0;
    for (int i = 0; i < nq; i++)
        n64 += cap[i];
    if (n64 == 0 || n64 >= (1ull << 31)) return cudaErrorInvalidValue;
    /* units of at most 32 * 8 * 4 = 1024 entries (rmat and circuit faster
     * than with 2048, 4096 slower still, 512 slower on circuit) */
    const unsigned slices = 4;
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
        rp_count<<<blocks, 256, 0, stream>>>(P->pool, e, n, 1, P->tr, cnt, nullptr);
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
    if (r == cudaSuccess) r = cudaMalloc((void **)&B->uwl, units * BAND_UWL * sizeof(unsigned));
    if (r == cudaSuccess) {
        bp_fill_off<<<blocks, 256, 0, stream>>>(n, start, B->off);
        bp_fill_rec<<<blocks, 256, 0, stream>>>(e, n, P->tr, static_cast<uint2 *>(B->rec),
                                                reinterpret_cast<unsigned *>(scratch));
        bp_fill_units<<<blocks, 256, 0, stream>>>(e, n, start, bs, uidx, ce, P->tr, log2d,
                                                  B->ustart, B->uleaf, B->uband);
        bp_warp_leaves<<<(unsigned)((units * BAND_UWL + 255) / 256), 256, 0, stream>>>(
            (unsigned)units, B->ustart, B->uleaf, B->off, n, B->uwl);
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
    B->warps = BAND_WARPS;
    B->atomic = P->f64 ? 0 : 1;
    return cudaGetLastError();
}
