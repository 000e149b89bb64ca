/* CSR SpMV kernels of the CUDA backend: y = alpha*op(A)*x + beta*y.
 *
 * op = N: the host cut the rows into blocks of about equal work (see
 * backends/cuda/cuda.c). A "stream" block holds up to CAP entries (16 KiB of
 * products) of up to ROWCAP consecutive rows: its threads load the entries
 * with coalesced reads, multiply by x into shared memory, then groups of L
 * lanes (L from the block's rows per thread) sum each row. A row longer than
 * CAP gets its own block(s): a whole block sums up to SPLIT entries of it;
 * longer rows are split into chunks whose partial sums a small fix-up kernel
 * adds. So every block does comparable work whatever the row lengths. The
 * block descriptors carry their entry range, so a block's first loads do not
 * wait for the row pointers.
 *
 * op = T: the backend normally runs op = N on a transposed copy that it
 * builds at the first op = T call (transpose_count / transpose_scatter
 * below). The fallback, when that copy does not fit: y is scaled by beta,
 * then each entry's product is scattered with atomicAdd (native float and
 * double atomics on sm_60 and later), the same blocks giving balanced work;
 * where a block's entries fall mostly in a window of columns near its rows
 * (banded, stencil, block-diagonal patterns), they are summed in shared
 * memory first, cutting global atomics.
 *
 * Fused dot (DOT = true, the CG solver's q = A p, p.q): each row's writer
 * also adds xd[r]*y[r] in double (xd = x + xoff: an MSREP part's first row
 * is row xoff of x; xd[r] is in cache: the row's diagonal entry read it); a
 * block's sum goes to dpart[block], a split row's to dpart[nblocks + split]
 * (written by the fix-up), and one block (dot_reduce) sums them in a fixed
 * order: the same bits on every call, no float atomics. DOT = false is the
 * plain kernel, unchanged.
 *
 * Loads of colind and values use the streaming cache hint (read once), so
 * that x stays in L1/L2. The stream blocks' loads are straight-line predicated
 * PTX (ld_cs_if) so that each thread has all of them in flight at once.
 *
 * Every kernel is templated on the entry type T and the row-pointer type I
 * (int32 when nnz < 2^31, int64 otherwise); the SpMV kernels also on the
 * column-index type J and the index base B, so that arrays the caller
 * wrapped (hisp_matrix_wrap_csr_device: int64 indices, 1-based) are read in
 * place. hisp's own arrays are <int32_t, 0>. */
#include "cuda/cuda_kernels.h"

#include <cstdint>

namespace
{

constexpr int NT = HISP_CUDA_THREADS;

constexpr int RPT = HISP_CUDA_ROWCAP / NT; /* rows per thread, at most */
static_assert(HISP_CUDA_ROWCAP % NT == 0, "ROWCAP must be a multiple of the block size");

template <typename T> struct cfg {
    static constexpr int CAP = HISP_CUDA_CAP((int)sizeof(T));
    static constexpr int PER = CAP / NT;
    /* staged index k -> padded slot: one entry skipped per 128 bytes */
    static constexpr int SHIFT = sizeof(T) == 4 ? 5 : 4;
    static constexpr int PADDED = CAP + (CAP >> SHIFT);
    static __device__ __forceinline__ int pad(int k)
    {
        return k + (k >> SHIFT);
    }
    static_assert(CAP % NT == 0, "CAP must be a multiple of the block size");
};

/* *p when ok, else 0, with the streaming hint (read once), written as one
 * predicated PTX load. A C "if" around each load became a branch per entry,
 * and ptxas, held to 64 registers, then issued a stream block's staging loads
 * in dependent rounds (col 0 -> x 0 -> store, then the other columns, ...)
 * instead of all at once: f64 ran slower than the same algorithm built by
 * NVIDIA's OpenCL. Straight-line code lets it issue every colind and value
 * load, then every x load, before the first use. */
__device__ __forceinline__ int32_t ld_cs_if(const int32_t *p, int ok)
{
    int32_t v;
    asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.s32 q, %2, 0;\n\tmov.b32 %0, 0;\n\t"
                 "@q ld.global.cs.s32 %0, [%1];\n\t}"
                 : "=r"(v)
                 : "l"(p), "r"(ok));
    return v;
}
__device__ __forceinline__ int64_t ld_cs_if(const int64_t *p, int ok)
{
    int64_t v;
    asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.s32 q, %2, 0;\n\tmov.b64 %0, 0;\n\t"
                 "@q ld.global.cs.s64 %0, [%1];\n\t}"
                 : "=l"(v)
                 : "l"(p), "r"(ok));
    return v;
}
__device__ __forceinline__ float ld_cs_if(const float *p, int ok)
{
    float v;
    asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.s32 q, %2, 0;\n\tmov.b32 %0, 0f00000000;\n\t"
                 "@q ld.global.cs.f32 %0, [%1];\n\t}"
                 : "=f"(v)
                 : "l"(p), "r"(ok));
    return v;
}
__device__ __forceinline__ double ld_cs_if(const double *p, int ok)
{
    double v;
    asm volatile(
        "{\n\t.reg .pred q;\n\tsetp.ne.s32 q, %2, 0;\n\tmov.b64 %0, 0d0000000000000000;\n\t"
        "@q ld.global.cs.f64 %0, [%1];\n\t}"
        : "=d"(v)
        : "l"(p), "r"(ok));
    return v;
}

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
template <typename T, typename J, int B>
__device__ __forceinline__ T long_row_sum(const J *__restrict__ col, const T *__restrict__ val,
                                          const T *__restrict__ x, int64_t s, int64_t e, T *red)
{
    T a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    int64_t k = s + threadIdx.x;
    for (; k + 3 * NT < e; k += 4 * NT) {
        const J c0 = __ldcs(col + k) - B, c1 = __ldcs(col + k + NT) - B,
                c2 = __ldcs(col + k + 2 * NT) - B, c3 = __ldcs(col + k + 3 * NT) - B;
        const T v0 = __ldcs(val + k), v1 = __ldcs(val + k + NT), v2 = __ldcs(val + k + 2 * NT),
                v3 = __ldcs(val + k + 3 * NT);
        a0 += v0 * __ldg(x + c0);
        a1 += v1 * __ldg(x + c1);
        a2 += v2 * __ldg(x + c2);
        a3 += v3 * __ldg(x + c3);
    }
    for (; k < e; k += NT)
        a0 += __ldcs(val + k) * __ldg(x + (__ldcs(col + k) - B));
    return block_sum((a0 + a1) + (a2 + a3), red);
}

template <typename T, typename I, typename J, int B, bool DOT>
__global__ void __launch_bounds__(NT, 4)
    spmv_n(const I *__restrict__ rowptr, const J *__restrict__ col, const T *__restrict__ val,
           const hisp_cuda_block *__restrict__ blocks, const T *__restrict__ x, T *__restrict__ y,
           T *__restrict__ partial, T alpha, T beta, double *__restrict__ dpart,
           const T *__restrict__ xd)
{
    constexpr int PER = cfg<T>::PER;
    __shared__ T sh[cfg<T>::PADDED];
    __shared__ T red[NT / 32];
    const hisp_cuda_block b = blocks[blockIdx.x];
    const int t = threadIdx.x;

    if (b.slot != HISP_CUDA_STREAM) { /* (part of) one long row */
        const T sum = long_row_sum<T, J, B>(col, val, x, b.k0, b.k1, red);
        if (t == 0) {
            if (b.slot >= 0) {
                partial[b.slot] = sum;
                if constexpr (DOT) dpart[blockIdx.x] = 0.0; /* the fix-up adds the row */
            } else {
                const T yr = beta != T(0) ? alpha * sum + beta * y[b.row0] : alpha * sum;
                y[b.row0] = yr;
                if constexpr (DOT) dpart[blockIdx.x] = (double)__ldg(xd + b.row0) * (double)yr;
            }
        }
        return;
    }

    /* stream: groups of L lanes per row, L = min(32, largest power of two with
     * L*R <= NT); with more rows than threads (L = 1) a thread sums up to RPT
     * rows. Row bounds are loaded first so their latency overlaps the staging
     * loads. Products are staged with one word of padding per 32 banks, so
     * that threads summing rows of any common length hit distinct banks. */
    const int64_t base = b.k0;
    const int R = b.row1 - b.row0;
    const int E = (int)(b.k1 - base);
    int L = 32;
    while (L > 1 && L * R > NT)
        L >>= 1;
    const int G = NT / L, g = t / L, lane = t & (L - 1);
    int s[RPT], e[RPT];
#pragma unroll
    for (int j = 0; j < RPT; j++) {
        const int i = g + j * G;
        s[j] = e[j] = 0;
        if (i < R) {
            s[j] = (int)(rowptr[b.row0 + i] - B - base);
            e[j] = (int)(rowptr[b.row0 + i + 1] - B - base);
        }
    }
    /* Entries past E: column 0 and value 0, product not stored (x[0] exists:
     * device buffers have at least 16 bytes, see hisp_cuda_alloc). No branch
     * around the staging (such as "if (E > 0)"): ptxas would then issue the
     * row bounds' loads and the division by L first (measured slower). */
    const J *cp = col + base + t;
    const T *vp = val + base + t;
    J c[PER];
    T v[PER];
#pragma unroll
    for (int i = 0; i < PER; i++) {
        const int ok = t + i * NT < E;
        c[i] = ld_cs_if(cp + i * NT, ok);
        v[i] = ld_cs_if(vp + i * NT, ok);
    }
#pragma unroll
    for (int i = 0; i < PER; i++) {
        /* padding lanes hold column 0: with B = 1 they read x[0] too */
        const J cc = B ? (c[i] > 0 ? c[i] - B : J(0)) : c[i];
        const T p = v[i] * __ldg(x + cc);
        if (t + i * NT < E) sh[cfg<T>::pad(t + i * NT)] = p;
    }
    __syncthreads();
    double dot = 0.0; /* DOT: xd[r]*y[r] over the rows this thread writes */
#pragma unroll
    for (int j = 0; j < RPT; j++) {
        T sum = 0;
        for (int k = s[j] + lane; k < e[j]; k += L)
            sum += sh[cfg<T>::pad(k)];
        for (int o = L >> 1; o; o >>= 1)
            sum += __shfl_xor_sync(0xffffffffu, sum, o);
        const int i = g + j * G;
        if (lane == 0 && i < R) {
            const int r = b.row0 + i;
            const T yr = beta != T(0) ? alpha * sum + beta * y[r] : alpha * sum;
            y[r] = yr;
            if constexpr (DOT) dot += (double)__ldg(xd + r) * (double)yr;
        }
    }
    if constexpr (DOT) {
        __shared__ double dred[NT / 32];
        const double bs = block_sum(dot, dred);
        if (t == 0) dpart[blockIdx.x] = bs;
    }
}

/* Rows split into chunks: one warp per row adds its partial sums. DOT: split
 * row w's xd[r]*y[r] goes to dpart[w] (dpart: the slots after the blocks'). */
template <typename T, bool DOT>
__global__ void spmv_fixup(const hisp_cuda_split *__restrict__ sp, int64_t n,
                           const T *__restrict__ partial, T *__restrict__ y, T alpha, T beta,
                           const T *__restrict__ xd, double *__restrict__ dpart)
{
    const int64_t w = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (w >= n) return; /* whole warps leave together: blockDim is a multiple of 32 */
    const hisp_cuda_split s = sp[w];
    T sum = 0;
    for (int i = lane; i < s.n; i += 32)
        sum += partial[s.slot0 + i];
    sum = warp_sum(sum);
    if (lane == 0) {
        const T yr = beta != T(0) ? alpha * sum + beta * y[s.row] : alpha * sum;
        y[s.row] = yr;
        if constexpr (DOT) dpart[w] = (double)__ldg(xd + s.row) * (double)yr;
    }
}

/* DOT: *out = the sum of the n partials, in a fixed order (each thread a
 * strided slice, then a fixed tree), rounded once to T. One block. */
constexpr int RT = 1024;
template <typename T>
__global__ void __launch_bounds__(RT)
    dot_reduce(const double *__restrict__ dpart, int64_t n, T *__restrict__ out)
{
    __shared__ double red[RT / 32];
    double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
    int64_t i = threadIdx.x;
    for (; i + 3 * RT < n; i += 4 * RT) {
        a0 += dpart[i];
        a1 += dpart[i + RT];
        a2 += dpart[i + 2 * RT];
        a3 += dpart[i + 3 * RT];
    }
    for (; i < n; i += RT)
        a0 += dpart[i];
    double v = warp_sum((a0 + a1) + (a2 + a3));
    const int w = threadIdx.x >> 5, l = threadIdx.x & 31;
    if (l == 0) red[w] = v;
    __syncthreads();
    if (w == 0) {
        v = warp_sum(red[l]); /* RT / 32 == 32 */
        if (l == 0) *out = (T)v;
    }
}
static_assert(RT / 32 == 32, "dot_reduce: one warp sums the warps' sums");

template <typename T> __global__ void scale(T *__restrict__ y, int64_t n, T beta)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        y[i] = beta != T(0) ? beta * y[i] : T(0);
}

/* y[rows[j]] += t[j]: the non-empty rows' products added back (the rows
 * are distinct: no two threads write one entry). */
template <typename T>
__global__ void scatter_add(const int32_t *__restrict__ rows, const T *__restrict__ t, int64_t n,
                            T *__restrict__ y)
{
    for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < n;
         j += (int64_t)gridDim.x * blockDim.x)
        y[rows[j]] += t[j];
}

/* op = T: scatter alpha*x[row]*a into y[col]. Stream blocks find each entry's
 * row by binary search over the block's row pointers staged in shared memory;
 * with a column window (b.win >= 0) the entries falling in it are summed in
 * shared memory and added to y once per column at the end. */
template <typename T, typename I, typename J, int B>
__global__ void __launch_bounds__(NT)
    spmv_t(const I *__restrict__ rowptr, const J *__restrict__ col, const T *__restrict__ val,
           const hisp_cuda_block *__restrict__ blocks, const T *__restrict__ x, T *__restrict__ y,
           T alpha, int64_t ncols)
{
    constexpr int CAP = cfg<T>::CAP, PER = cfg<T>::PER;
    __shared__ int ptr[HISP_CUDA_ROWCAP + 1];
    __shared__ T win[CAP];
    const hisp_cuda_block b = blocks[blockIdx.x];
    const int t = threadIdx.x;
    if (b.slot != HISP_CUDA_STREAM) {
        const T xv = alpha * __ldg(x + b.row0);
        for (int64_t k = b.k0 + t; k < b.k1; k += NT)
            atomicAdd(y + (__ldg(col + k) - B), __ldg(val + k) * xv);
        return;
    }
    const int64_t base = b.k0;
    const int R = b.row1 - b.row0, E = (int)(b.k1 - base);
    const int w0 = b.win;
    for (int i = t; i <= R; i += NT)
        ptr[i] = (int)(rowptr[b.row0 + i] - B - base);
    if (w0 >= 0)
#pragma unroll
        for (int i = 0; i < PER; i++)
            win[t + i * NT] = T(0);
    __syncthreads();
#pragma unroll
    for (int i = 0; i < PER; i++) {
        const int k = t + i * NT;
        if (k < E) {
            int lo = 0, hi = R - 1; /* the last row with ptr[row] <= k */
            while (lo < hi) {
                const int mid = (lo + hi + 1) >> 1;
                if (ptr[mid] <= k)
                    lo = mid;
                else
                    hi = mid - 1;
            }
            const int c = (int)(__ldg(col + base + k) - B);
            const T p = __ldg(val + base + k) * (alpha * __ldg(x + b.row0 + lo));
            if (w0 >= 0 && (unsigned)(c - w0) < (unsigned)CAP)
                atomicAdd(win + (c - w0), p);
            else
                atomicAdd(y + c, p);
        }
    }
    if (w0 < 0) return;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < PER; i++) {
        const int j = t + i * NT;
        const T v = win[j];
        if (v != T(0) && w0 + j < ncols) atomicAdd(y + w0 + j, v);
    }
}

/* Transpose, pass 0: entries per column. */
__global__ void transpose_count(const int32_t *__restrict__ col, int64_t nnz, int *__restrict__ cnt)
{
    for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < nnz;
         k += (int64_t)gridDim.x * blockDim.x)
        atomicAdd(cnt + __ldg(col + k), 1);
}

/* Transpose, pass 1: each entry (row r, column c) goes to the next free slot
 * of column c in the transposed arrays (tp: its row pointers). Rows come from
 * the block descriptors as in spmv_t. */
template <typename T, typename I>
__global__ void __launch_bounds__(NT)
    transpose_scatter(const I *__restrict__ rowptr, const int32_t *__restrict__ col,
                      const T *__restrict__ val, const hisp_cuda_block *__restrict__ blocks,
                      const I *__restrict__ tp, int32_t *__restrict__ tcol, T *__restrict__ tval,
                      int *__restrict__ fill)
{
    __shared__ int ptr[HISP_CUDA_ROWCAP + 1];
    const hisp_cuda_block b = blocks[blockIdx.x];
    const int t = threadIdx.x;
    if (b.slot != HISP_CUDA_STREAM) {
        for (int64_t k = b.k0 + t; k < b.k1; k += NT) {
            const int c = __ldg(col + k);
            const int64_t pos = (int64_t)tp[c] + atomicAdd(fill + c, 1);
            tcol[pos] = b.row0;
            tval[pos] = __ldg(val + k);
        }
        return;
    }
    const int64_t base = b.k0;
    const int R = b.row1 - b.row0, E = (int)(b.k1 - base);
    for (int i = t; i <= R; i += NT)
        ptr[i] = (int)(rowptr[b.row0 + i] - base);
    __syncthreads();
    for (int k = t; k < E; k += NT) {
        int lo = 0, hi = R - 1;
        while (lo < hi) {
            const int mid = (lo + hi + 1) >> 1;
            if (ptr[mid] <= k)
                lo = mid;
            else
                hi = mid - 1;
        }
        const int c = __ldg(col + base + k);
        const int64_t pos = (int64_t)tp[c] + atomicAdd(fill + c, 1);
        tcol[pos] = b.row0 + lo;
        tval[pos] = __ldg(val + base + k);
    }
}

template <typename T, typename I>
cudaError_t transpose(const hisp_cuda_csr *A, const hisp_cuda_csr *Tr, int *cnt, int phase,
                      cudaStream_t st)
{
    if (A->nnz == 0) return cudaSuccess;
    if (phase == 0) {
        int64_t nb = (A->nnz + 255) / 256;
        if (nb > 65536) nb = 65536;
        transpose_count<<<(unsigned)nb, 256, 0, st>>>(static_cast<const int32_t *>(A->colind),
                                                      A->nnz, cnt);
        return cudaGetLastError();
    }
    transpose_scatter<T, I><<<(unsigned)A->nblocks, NT, 0, st>>>(
        static_cast<const I *>(A->rowptr), static_cast<const int32_t *>(A->colind),
        static_cast<const T *>(A->val), A->blocks, static_cast<const I *>(Tr->rowptr),
        static_cast<int32_t *>(const_cast<void *>(Tr->colind)),
        static_cast<T *>(const_cast<void *>(Tr->val)), cnt);
    return cudaGetLastError();
}

/* op = N; DOT: then *res = dot(xd, y) through the partials dpart. */
template <typename T, typename I, typename J, int B, bool DOT>
cudaError_t run_n(const hisp_cuda_csr *A, T alpha, const T *x, T beta, T *y, double *dpart, T *res,
                  const T *xd, cudaStream_t st)
{
    const I *rp = static_cast<const I *>(A->rowptr);
    const J *col = static_cast<const J *>(A->colind);
    const T *val = static_cast<const T *>(A->val);
    cudaError_t e;
    if (A->nblocks > 0) {
        spmv_n<T, I, J, B, DOT><<<(unsigned)A->nblocks, NT, 0, st>>>(
            rp, col, val, A->blocks, x, y, static_cast<T *>(A->partial), alpha, beta, dpart, xd);
        if ((e = cudaGetLastError()) != cudaSuccess) return e;
    }
    if (A->nsplits > 0) {
        const int64_t threads = A->nsplits * 32;
        spmv_fixup<T, DOT><<<(unsigned)((threads + 255) / 256), 256, 0, st>>>(
            A->splits, A->nsplits, static_cast<const T *>(A->partial), y, alpha, beta, xd,
            DOT ? dpart + A->nblocks : nullptr);
        if ((e = cudaGetLastError()) != cudaSuccess) return e;
    }
    if constexpr (DOT) {
        dot_reduce<T><<<1, RT, 0, st>>>(dpart, A->nblocks + A->nsplits, res);
        if ((e = cudaGetLastError()) != cudaSuccess) return e;
    }
    return cudaSuccess;
}

template <typename T, typename I, typename J, int B>
cudaError_t run(const hisp_cuda_csr *A, int op, T alpha, const T *x, T beta, T *y, double *dpart,
                T *res, const T *xd, cudaStream_t st)
{
    const I *rp = static_cast<const I *>(A->rowptr);
    const J *col = static_cast<const J *>(A->colind);
    const T *val = static_cast<const T *>(A->val);
    cudaError_t e;
    if (op == 0)
        return dpart ? run_n<T, I, J, B, true>(A, alpha, x, beta, y, dpart, res, xd, st)
                     : run_n<T, I, J, B, false>(A, alpha, x, beta, y, nullptr, nullptr, x, st);
    if (beta != T(1) && A->ncols > 0) {
        int64_t nb = (A->ncols + 255) / 256;
        if (nb > 65536) nb = 65536;
        scale<T><<<(unsigned)nb, 256, 0, st>>>(y, A->ncols, beta);
        if ((e = cudaGetLastError()) != cudaSuccess) return e;
    }
    if (A->nblocks > 0 && A->nnz > 0) {
        spmv_t<T, I, J, B>
            <<<(unsigned)A->nblocks, NT, 0, st>>>(rp, col, val, A->blocks, x, y, alpha, A->ncols);
        if ((e = cudaGetLastError()) != cudaSuccess) return e;
    }
    return cudaSuccess;
}

/* The instance for A's row-pointer width, index width and base. */
template <typename T>
cudaError_t run_shape(const hisp_cuda_csr *A, int op, T alpha, const T *x, T beta, T *y,
                      double *dpart, T *res, const T *xd, cudaStream_t st)
{
    switch ((A->wide ? 4 : 0) + (A->idx64 ? 2 : 0) + (A->base ? 1 : 0)) {
    case 0:
        return run<T, int32_t, int32_t, 0>(A, op, alpha, x, beta, y, dpart, res, xd, st);
    case 1:
        return run<T, int32_t, int32_t, 1>(A, op, alpha, x, beta, y, dpart, res, xd, st);
    case 2:
        return run<T, int32_t, int64_t, 0>(A, op, alpha, x, beta, y, dpart, res, xd, st);
    case 3:
        return run<T, int32_t, int64_t, 1>(A, op, alpha, x, beta, y, dpart, res, xd, st);
    case 4:
        return run<T, int64_t, int32_t, 0>(A, op, alpha, x, beta, y, dpart, res, xd, st);
    case 5:
        return run<T, int64_t, int32_t, 1>(A, op, alpha, x, beta, y, dpart, res, xd, st);
    case 6:
        return run<T, int64_t, int64_t, 0>(A, op, alpha, x, beta, y, dpart, res, xd, st);
    default:
        return run<T, int64_t, int64_t, 1>(A, op, alpha, x, beta, y, dpart, res, xd, st);
    }
}

} // namespace

extern "C" cudaError_t hisp_cuda_launch_csr_spmv(const hisp_cuda_csr *A, int op, double alpha,
                                                 const void *x, double beta, void *y,
                                                 cudaStream_t stream)
{
    if (A->f64)
        return run_shape<double>(A, op, alpha, static_cast<const double *>(x), beta,
                                 static_cast<double *>(y), nullptr, nullptr, nullptr, stream);
    return run_shape<float>(A, op, (float)alpha, static_cast<const float *>(x), (float)beta,
                            static_cast<float *>(y), nullptr, nullptr, nullptr, stream);
}

extern "C" cudaError_t hisp_cuda_launch_csr_spmv_dot(const hisp_cuda_csr *A, const void *x,
                                                     int64_t xoff, void *y, double *part, void *res,
                                                     cudaStream_t stream)
{
    if (A->f64) {
        const double *xs = static_cast<const double *>(x);
        return run_shape<double>(A, 0, 1.0, xs, 0.0, static_cast<double *>(y), part,
                                 static_cast<double *>(res), xs + xoff, stream);
    }
    const float *xs = static_cast<const float *>(x);
    return run_shape<float>(A, 0, 1.0f, xs, 0.0f, static_cast<float *>(y), part,
                            static_cast<float *>(res), xs + xoff, stream);
}

extern "C" cudaError_t hisp_cuda_launch_csr_rows(const hisp_cuda_csr *C, const int32_t *rows,
                                                 double alpha, const void *x, void *t, void *y,
                                                 cudaStream_t stream)
{
    cudaError_t e = hisp_cuda_launch_csr_spmv(C, 0, alpha, x, 0.0, t, stream);
    if (e != cudaSuccess || C->nrows == 0) return e;
    int64_t nb = (C->nrows + 255) / 256;
    if (nb > 65536) nb = 65536;
    if (C->f64)
        scatter_add<double><<<(unsigned)nb, 256, 0, stream>>>(
            rows, static_cast<const double *>(t), C->nrows, static_cast<double *>(y));
    else
        scatter_add<float><<<(unsigned)nb, 256, 0, stream>>>(
            rows, static_cast<const float *>(t), C->nrows, static_cast<float *>(y));
    return cudaGetLastError();
}

extern "C" cudaError_t hisp_cuda_launch_transpose(const hisp_cuda_csr *A, const hisp_cuda_csr *Tr,
                                                  void *cnt, int phase, cudaStream_t stream)
{
    int *c = static_cast<int *>(cnt);
    if (A->f64)
        return A->wide ? transpose<double, int64_t>(A, Tr, c, phase, stream)
                       : transpose<double, int32_t>(A, Tr, c, phase, stream);
    return A->wide ? transpose<float, int64_t>(A, Tr, c, phase, stream)
                   : transpose<float, int32_t>(A, Tr, c, phase, stream);
}
