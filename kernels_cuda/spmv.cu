/* CSR SpMV kernels of the CUDA backend: y = alpha*op(A)*x + beta*y.
 *
 * op = N: the host cut the rows into blocks of about equal work (see
 * backends/cuda/cuda.c). A "stream" block holds up to CAP entries of up to
 * ROWCAP consecutive rows: its threads load the entries with coalesced reads,
 * multiply by x into shared memory, then groups of L lanes (L from the rows'
 * mean length) sum each row. A row longer than CAP gets its own block(s): a
 * whole block sums up to SPLIT entries of it; longer rows are split into
 * chunks whose partial sums a small fix-up kernel adds. So every block does
 * comparable work whatever the row-length distribution.
 *
 * op = T: y is scaled by beta, then each entry's product is scattered with
 * atomicAdd (native float and double atomics on sm_60 and later), the same
 * blocks giving balanced work.
 *
 * Every kernel is templated on the entry type T and the row-pointer type I
 * (int32 when nnz < 2^31, int64 otherwise). */
#include "cuda/cuda_kernels.h"

#include <cstdint>

namespace
{

constexpr int NT = HISP_CUDA_THREADS;
constexpr int CAP = HISP_CUDA_CAP;
constexpr int PER = CAP / NT;
constexpr int64_t SPLIT = HISP_CUDA_SPLIT;
static_assert(CAP % NT == 0, "CAP must be a multiple of the block size");
static_assert(HISP_CUDA_ROWCAP <= NT, "a stream block holds at most one row per thread");

template <typename T> __device__ __forceinline__ T warp_sum(T v)
{
#pragma unroll
    for (int o = 16; o; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* Sum over the block; the result is valid in thread 0. */
template <typename T> __device__ __forceinline__ T block_sum(T v, T *red)
{
    v = warp_sum(v);
    const int w = threadIdx.x >> 5, l = threadIdx.x & 31;
    if (l == 0) red[w] = v;
    __syncthreads();
    T s = 0;
    if (w == 0) {
        s = l < NT / 32 ? red[l] : T(0);
        s = warp_sum(s);
    }
    return s;
}

/* Entries [s, e) of one row, summed by the whole block. */
template <typename T>
__device__ __forceinline__ T long_row_sum(const int32_t *__restrict__ col,
                                          const T *__restrict__ val, const T *__restrict__ x,
                                          int64_t s, int64_t e, T *red)
{
    T a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    int64_t k = s + threadIdx.x;
    for (; k + 3 * NT < e; k += 4 * NT) {
        const int32_t c0 = __ldg(col + k), c1 = __ldg(col + k + NT), c2 = __ldg(col + k + 2 * NT),
                      c3 = __ldg(col + k + 3 * NT);
        const T v0 = __ldg(val + k), v1 = __ldg(val + k + NT), v2 = __ldg(val + k + 2 * NT),
                v3 = __ldg(val + k + 3 * NT);
        a0 += v0 * __ldg(x + c0);
        a1 += v1 * __ldg(x + c1);
        a2 += v2 * __ldg(x + c2);
        a3 += v3 * __ldg(x + c3);
    }
    for (; k < e; k += NT)
        a0 += __ldg(val + k) * __ldg(x + __ldg(col + k));
    return block_sum((a0 + a1) + (a2 + a3), red);
}

template <typename T, typename I>
__global__ void __launch_bounds__(NT, 4)
    spmv_n(const I *__restrict__ rowptr, const int32_t *__restrict__ col, const T *__restrict__ val,
           const hisp_cuda_block *__restrict__ blocks, const T *__restrict__ x, T *__restrict__ y,
           T *__restrict__ partial, T alpha, T beta)
{
    __shared__ T sh[CAP];
    __shared__ T red[NT / 32];
    const hisp_cuda_block b = blocks[blockIdx.x];
    const int t = threadIdx.x;

    if (b.chunk >= 0) { /* (part of) one long row */
        const int64_t rs = rowptr[b.row0], re = rowptr[b.row0 + 1];
        const int64_t s = rs + (int64_t)b.chunk * SPLIT;
        const int64_t e = re < s + SPLIT ? re : s + SPLIT;
        const T sum = long_row_sum(col, val, x, s, e, red);
        if (t == 0) {
            if (b.slot >= 0)
                partial[b.slot] = sum;
            else
                y[b.row0] = beta != T(0) ? alpha * sum + beta * y[b.row0] : alpha * sum;
        }
        return;
    }

    /* stream: groups of L lanes per row, L = min(32, largest power of two with
     * L*R <= NT); each group's row bounds are loaded first so that their
     * latency overlaps the staging loads */
    const I base = rowptr[b.row0];
    const int R = b.row1 - b.row0;
    int L = 32;
    while (L > 1 && L * R > NT)
        L >>= 1;
    const int g = t / L, lane = t & (L - 1);
    const int r = b.row0 + g;
    int s = 0, e = 0;
    if (g < R) {
        s = (int)(rowptr[r] - base);
        e = (int)(rowptr[r + 1] - base);
    }
    const int E = (int)(rowptr[b.row1] - base);
    int32_t c[PER];
    T v[PER];
#pragma unroll
    for (int i = 0; i < PER; i++) {
        const int k = t + i * NT;
        if (k < E) {
            c[i] = __ldg(col + base + k);
            v[i] = __ldg(val + base + k);
        }
    }
#pragma unroll
    for (int i = 0; i < PER; i++) {
        const int k = t + i * NT;
        if (k < E) sh[k] = v[i] * __ldg(x + c[i]);
    }
    __syncthreads();
    T sum = 0;
    for (int k = s + lane; k < e; k += L)
        sum += sh[k];
    for (int o = L >> 1; o; o >>= 1)
        sum += __shfl_xor_sync(0xffffffffu, sum, o);
    if (lane == 0 && g < R) y[r] = beta != T(0) ? alpha * sum + beta * y[r] : alpha * sum;
}

/* Rows split into chunks: one warp per row adds its partial sums. */
template <typename T>
__global__ void spmv_fixup(const hisp_cuda_split *__restrict__ sp, int64_t n,
                           const T *__restrict__ partial, T *__restrict__ y, T alpha, T beta)
{
    const int64_t w = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (w >= n) return; /* whole warps leave together: blockDim is a multiple of 32 */
    const hisp_cuda_split s = sp[w];
    T sum = 0;
    for (int i = lane; i < s.n; i += 32)
        sum += partial[s.slot0 + i];
    sum = warp_sum(sum);
    if (lane == 0) y[s.row] = beta != T(0) ? alpha * sum + beta * y[s.row] : alpha * sum;
}

template <typename T> __global__ void scale(T *__restrict__ y, int64_t n, T beta)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        y[i] = beta != T(0) ? beta * y[i] : T(0);
}

/* op = T: scatter alpha*x[row]*a into y[col]. Stream blocks find each entry's
 * row by binary search over the block's row pointers staged in shared memory. */
template <typename T, typename I>
__global__ void __launch_bounds__(NT)
    spmv_t(const I *__restrict__ rowptr, const int32_t *__restrict__ col, const T *__restrict__ val,
           const hisp_cuda_block *__restrict__ blocks, const T *__restrict__ x, T *__restrict__ y,
           T alpha)
{
    __shared__ int ptr[HISP_CUDA_ROWCAP + 1];
    const hisp_cuda_block b = blocks[blockIdx.x];
    const int t = threadIdx.x;
    if (b.chunk >= 0) {
        const int64_t rs = rowptr[b.row0], re = rowptr[b.row0 + 1];
        const int64_t s = rs + (int64_t)b.chunk * SPLIT;
        const int64_t e = re < s + SPLIT ? re : s + SPLIT;
        const T xv = alpha * __ldg(x + b.row0);
        for (int64_t k = s + t; k < e; k += NT)
            atomicAdd(y + __ldg(col + k), __ldg(val + k) * xv);
        return;
    }
    const I base = rowptr[b.row0];
    const int R = b.row1 - b.row0;
    for (int i = t; i <= R; i += NT)
        ptr[i] = (int)(rowptr[b.row0 + i] - base);
    __syncthreads();
    const int E = ptr[R];
#pragma unroll
    for (int i = 0; i < PER; i++) {
        const int k = t + i * NT;
        if (k < E) {
            int lo = 0, hi = R - 1; /* last row with ptr[row] <= k */
            while (lo < hi) {
                const int mid = (lo + hi + 1) >> 1;
                if (ptr[mid] <= k)
                    lo = mid;
                else
                    hi = mid - 1;
            }
            const T xv = alpha * __ldg(x + b.row0 + lo);
            atomicAdd(y + __ldg(col + base + k), __ldg(val + base + k) * xv);
        }
    }
}

template <typename T, typename I>
cudaError_t run(const hisp_cuda_csr *A, int op, T alpha, const T *x, T beta, T *y, cudaStream_t st)
{
    const I *rp = static_cast<const I *>(A->rowptr);
    const T *val = static_cast<const T *>(A->val);
    cudaError_t e;
    if (op == 0) {
        if (A->nblocks > 0) {
            spmv_n<T, I><<<(unsigned)A->nblocks, NT, 0, st>>>(
                rp, A->colind, val, A->blocks, x, y, static_cast<T *>(A->partial), alpha, beta);
            if ((e = cudaGetLastError()) != cudaSuccess) return e;
        }
        if (A->nsplits > 0) {
            const int64_t threads = A->nsplits * 32;
            spmv_fixup<T><<<(unsigned)((threads + 255) / 256), 256, 0, st>>>(
                A->splits, A->nsplits, static_cast<const T *>(A->partial), y, alpha, beta);
            if ((e = cudaGetLastError()) != cudaSuccess) return e;
        }
        return cudaSuccess;
    }
    if (beta != T(1) && A->ncols > 0) {
        int64_t nb = (A->ncols + 255) / 256;
        if (nb > 65536) nb = 65536;
        scale<T><<<(unsigned)nb, 256, 0, st>>>(y, A->ncols, beta);
        if ((e = cudaGetLastError()) != cudaSuccess) return e;
    }
    if (A->nblocks > 0 && A->nnz > 0) {
        spmv_t<T, I>
            <<<(unsigned)A->nblocks, NT, 0, st>>>(rp, A->colind, val, A->blocks, x, y, alpha);
        if ((e = cudaGetLastError()) != cudaSuccess) return e;
    }
    return cudaSuccess;
}

} // namespace

extern "C" cudaError_t hisp_cuda_launch_csr_spmv(const hisp_cuda_csr *A, int op, double alpha,
                                                 const void *x, double beta, void *y,
                                                 cudaStream_t stream)
{
    if (A->f64)
        return A->wide ? run<double, int64_t>(A, op, alpha, static_cast<const double *>(x), beta,
                                              static_cast<double *>(y), stream)
                       : run<double, int32_t>(A, op, alpha, static_cast<const double *>(x), beta,
                                              static_cast<double *>(y), stream);
    return A->wide ? run<float, int64_t>(A, op, (float)alpha, static_cast<const float *>(x),
                                         (float)beta, static_cast<float *>(y), stream)
                   : run<float, int32_t>(A, op, (float)alpha, static_cast<const float *>(x),
                                         (float)beta, static_cast<float *>(y), stream);
}
