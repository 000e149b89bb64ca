/* The SpMV kernels' block plan (kernels_cuda/spmv.cu) made on the device,
 * for CSR matrices over device arrays (csr_wrap: the caller's, or a
 * product's on the device), whose row pointers the host would otherwise
 * read: 134 MB and 0.15 s for the 16.8M rows of an AMG prolongator on an
 * H200, against a few kernels here.
 *
 * The host's plan (core/matrix/csr_plan.c) is greedy, block after block;
 * this one decides per row whether a block starts there: at a long row
 * (more than CAP/4 entries: its own block, or chunks of SPLIT entries with
 * partial sums) and the row after it, at every ROWCAP-th row, and where a
 * row's first entry falls in another slice of 3/4 CAP entries than the
 * previous row's. So a stream block holds at most ROWCAP rows and, its
 * rows all starting in one slice and none longer than CAP/4, at most CAP
 * entries (slices of CAP/2 made blocks of half the greedy plan's entries,
 * and the AMG V-cycle, whose prolongators and coarse operators use this
 * plan, 11 % slower on poisson3d 256^3). Counts per row, three scans (blocks, partial-sum slots,
 * split rows), then each block written by its first row; a stream block's
 * end is the next block's first row. */
#include "../backends/cuda/cuda_kernels.h"

#include <cub/cub.cuh>

namespace
{

constexpr int NT = 256;

struct plan_args {
    int64_t n, cap, rowcap, split;
    int base;
};

template <typename I> __device__ inline int64_t at(const I *rp, int64_t i, int base)
{
    return (int64_t)rp[i] - base;
}

/* Blocks starting at row i (cnt), its partial-sum slots (slots) and
 * whether it is a split row (nsplit); entry n of each 0 (the scans' totals). */
template <typename I>
__global__ void plan_count(const I *__restrict__ rp, plan_args a, unsigned *cnt, unsigned *slots,
                           unsigned *nsplit)
{
    const int64_t i = (int64_t)blockIdx.x * NT + threadIdx.x;
    if (i > a.n) return;
    unsigned b = 0, sl = 0, sp = 0;
    if (i < a.n) {
        const int64_t s = at(rp, i, a.base), len = at(rp, i + 1, a.base) - s;
        if (len > a.cap / 4) {
            const int64_t ch = (len + a.split - 1) / a.split;
            b = (unsigned)ch;
            if (ch > 1) sl = (unsigned)ch, sp = 1;
        } else if (i == 0 || i % a.rowcap == 0) {
            b = 1;
        } else {
            const int64_t ps = at(rp, i - 1, a.base);
            const int64_t slice = a.cap - a.cap / 4;
            b = s - ps > a.cap / 4 || s / slice != ps / slice;
        }
    }
    cnt[i] = b, slots[i] = sl, nsplit[i] = sp;
}

template <typename I>
__global__ void plan_fill(const I *__restrict__ rp, plan_args a, const unsigned *__restrict__ boff,
                          const unsigned *__restrict__ soff, const unsigned *__restrict__ spoff,
                          hisp_cuda_block *blocks, hisp_cuda_split *splits)
{
    const int64_t i = (int64_t)blockIdx.x * NT + threadIdx.x;
    if (i >= a.n) return;
    const unsigned b = boff[i], nb = boff[i + 1] - b;
    if (!nb) return;
    const int64_t s = at(rp, i, a.base), len = at(rp, i + 1, a.base) - s;
    if (len <= a.cap / 4) { /* a stream block; its end set by plan_ends */
        blocks[b] = hisp_cuda_block{s, s, (int32_t)i, (int32_t)i, HISP_CUDA_STREAM, -1};
        return;
    }
    for (unsigned c = 0; c < nb; c++) {
        const int64_t k0 = s + (int64_t)c * a.split;
        const int64_t k1 = k0 + a.split < s + len ? k0 + a.split : s + len;
        blocks[b + c] = hisp_cuda_block{
            k0, k1, (int32_t)i, (int32_t)i + 1, nb > 1 ? (int32_t)(soff[i] + c) : -1, -1};
    }
    if (nb > 1) splits[spoff[i]] = hisp_cuda_split{(int32_t)i, (int32_t)soff[i], (int32_t)nb, 0};
}

template <typename I>
__global__ void plan_ends(const I *__restrict__ rp, plan_args a, hisp_cuda_block *blocks,
                          int64_t nb)
{
    const int64_t b = (int64_t)blockIdx.x * NT + threadIdx.x;
    if (b >= nb || blocks[b].slot != HISP_CUDA_STREAM) return;
    const int32_t r1 = b + 1 < nb ? blocks[b + 1].row0 : (int32_t)a.n;
    blocks[b].row1 = r1;
    blocks[b].k1 = at(rp, r1, a.base);
}

unsigned grid(int64_t n)
{
    return (unsigned)((n + NT - 1) / NT);
}

/* The scratch: three arrays of n + 1 counts, then CUB's scan storage. */
size_t counts_bytes(int64_t n)
{
    return ((3 * ((size_t)n + 1) * sizeof(unsigned)) + 255) / 256 * 256;
}

} // namespace

extern "C" cudaError_t hisp_cuda_plan_scratch(int64_t n, size_t *bytes)
{
    size_t t = 0;
    cudaError_t r = cub::DeviceScan::ExclusiveSum(nullptr, t, (unsigned *)nullptr,
                                                  (unsigned *)nullptr, (int)n + 1);
    *bytes = counts_bytes(n) + t;
    return r;
}

extern "C" cudaError_t hisp_cuda_plan_count(const void *rowptr, int ptr64, int base, int64_t n,
                                            int64_t cap, int64_t rowcap, int64_t split,
                                            void *scratch, size_t bytes, unsigned tot[3],
                                            cudaStream_t stream)
{
    plan_args a{n, cap, rowcap, split, base};
    unsigned *c = static_cast<unsigned *>(scratch), *c1 = c + n + 1, *c2 = c1 + n + 1;
    void *tmp = static_cast<char *>(scratch) + counts_bytes(n);
    size_t tb = bytes - counts_bytes(n);
    if (ptr64)
        plan_count<<<grid(n + 1), NT, 0, stream>>>(static_cast<const int64_t *>(rowptr), a, c, c1,
                                                   c2);
    else
        plan_count<<<grid(n + 1), NT, 0, stream>>>(static_cast<const int32_t *>(rowptr), a, c, c1,
                                                   c2);
    cudaError_t r = cudaGetLastError();
    unsigned *arr[3] = {c, c1, c2};
    for (int k = 0; r == cudaSuccess && k < 3; k++)
        r = cub::DeviceScan::ExclusiveSum(tmp, tb, arr[k], arr[k], (int)n + 1, stream);
    for (int k = 0; r == cudaSuccess && k < 3; k++)
        r = cudaMemcpyAsync(&tot[k], arr[k] + n, sizeof *tot, cudaMemcpyDeviceToHost, stream);
    if (r == cudaSuccess) r = cudaStreamSynchronize(stream);
    return r;
}

extern "C" cudaError_t hisp_cuda_plan_fill(const void *rowptr, int ptr64, int base, int64_t n,
                                           int64_t cap, int64_t rowcap, int64_t split,
                                           const void *scratch, hisp_cuda_block *blocks, int64_t nb,
                                           hisp_cuda_split *splits, cudaStream_t stream)
{
    plan_args a{n, cap, rowcap, split, base};
    const unsigned *c = static_cast<const unsigned *>(scratch), *c1 = c + n + 1, *c2 = c1 + n + 1;
    if (n == 0 || nb == 0) return cudaSuccess;
    if (ptr64) {
        const int64_t *rp = static_cast<const int64_t *>(rowptr);
        plan_fill<<<grid(n), NT, 0, stream>>>(rp, a, c, c1, c2, blocks, splits);
        plan_ends<<<grid(nb), NT, 0, stream>>>(rp, a, blocks, nb);
    } else {
        const int32_t *rp = static_cast<const int32_t *>(rowptr);
        plan_fill<<<grid(n), NT, 0, stream>>>(rp, a, c, c1, c2, blocks, splits);
        plan_ends<<<grid(nb), NT, 0, stream>>>(rp, a, blocks, nb);
    }
    return cudaGetLastError();
}
