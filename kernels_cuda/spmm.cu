/* CSR SpMM kernels of the CUDA backend: Y = alpha*op(A)*X + beta*Y over k
 * columns. op T runs op N on the transposed copy (backends/cuda/cuda.c) or,
 * without one, scatters with atomics (spmm_t_scatter).
 *
 * op N, a matrix without long rows (the plan has none, cuda_kernels.h nlong):
 * with at most 16 entries per row on average, a thread per row (spmm_thread)
 * where X is column-major, or row-major with k <= 4; else a group of L lanes
 * per row over the whole matrix (spmm_rows).
 * With long rows, the SpMV's block plan (kernels_cuda/spmv.cu), so work is
 * balanced by entries: spmm_n_xrow / spmm_n_xcol, a long row (or a chunk of
 * one) by a whole block, a split row's chunks leaving their sums in
 * part[slot*k + j], added by spmm_fixup in a fixed order.
 *   - X row-major: lane l of a row's group holds the VW consecutive columns
 *     l*VW.. and reads each of the row's entries itself (the group's lanes
 *     read the same address: one transaction), X's rows with vector loads
 *     where aligned. On the H200, f64, k >= 16: 0.66-0.85x cuSPARSE with
 *     lanes splitting the columns and shuffling the entries, 1.20-2.51x so.
 *   - X column-major: the lanes split a row's entries, each holding CC
 *     columns, summed by shuffles (spmm_rows); with the plan, blocks take a
 *     slice of CC columns each (spmm_n_xcol), see there.
 * Y's order is a run-time choice; with beta == 0 Y is not read. Sums in the
 * entry type in a fixed order (the same bits on every call). Templated as
 * kernels_cuda/spmv.cu on the row-pointer type I, the column index type J
 * and the index base B (arrays the caller wrapped). */
#include "cuda/cuda_kernels.h"

#include <cstdint>

namespace
{

constexpr int NT = 256; /* threads per block */
constexpr int VW = 4;   /* columns a lane holds, X row-major (L lanes: 4L columns a pass) */
constexpr int CC = 8;   /* columns a lane holds per pass, X column-major */

__device__ __forceinline__ int64_t at(int64_t i, int64_t j, int64_t n, int64_t k, int row)
{
    return row ? i * k + j : j * n + i;
}

/* VW consecutive entries of a row of X, from p (VEC: p is aligned to
 * VW * sizeof(T), read as vectors) */
template <typename T, bool VEC> __device__ __forceinline__ void load_vw(const T *p, T *o)
{
    if constexpr (VEC && sizeof(T) == 8) {
        const double2 a = __ldg(reinterpret_cast<const double2 *>(p)),
                      b = __ldg(reinterpret_cast<const double2 *>(p) + 1);
        o[0] = a.x, o[1] = a.y, o[2] = b.x, o[3] = b.y;
    } else if constexpr (VEC) {
        const float4 a = __ldg(reinterpret_cast<const float4 *>(p));
        o[0] = a.x, o[1] = a.y, o[2] = a.z, o[3] = a.w;
    } else {
#pragma unroll
        for (int u = 0; u < VW; u++)
            o[u] = __ldg(p + u);
    }
}

/* The sums of one row (or chunk) [s, e) for columns [j0, j0 + ...) by a
 * group of L lanes, X row-major: lane l holds the VW consecutive columns
 * j0 + l*VW + u (u < VW) and reads every entry of the row itself (the
 * group's lanes read the same index and value, one transaction), so a row of
 * X is read coalesced and no shuffles are needed. VEC: X's rows are aligned
 * for vector loads (k a multiple of VW). */
template <typename T, typename J, int B, bool VEC>
__device__ __forceinline__ void row_xrow(const J *__restrict__ col, const T *__restrict__ val,
                                         int64_t s, int64_t e, int64_t k, int64_t j0,
                                         const T *__restrict__ x, int lane, T *acc)
{
#pragma unroll
    for (int u = 0; u < VW; u++)
        acc[u] = T(0);
    const int64_t jb = j0 + (int64_t)lane * VW;
    if (jb >= k) return;
    if (jb + VW <= k) {
#pragma unroll 2
        for (int64_t q = s; q < e; q++) {
            const T a = __ldg(val + q);
            T xv[VW];
            load_vw<T, VEC>(x + ((int64_t)__ldg(col + q) - B) * k + jb, xv);
#pragma unroll
            for (int u = 0; u < VW; u++)
                acc[u] += a * xv[u];
        }
    } else { /* the last, partial columns */
        const int w = (int)(k - jb);
        for (int64_t q = s; q < e; q++) {
            const T a = __ldg(val + q);
            const T *xr = x + ((int64_t)__ldg(col + q) - B) * k + jb;
#pragma unroll
            for (int u = 0; u < VW; u++)
                if (u < w) acc[u] += a * __ldg(xr + u);
        }
    }
}

/* (column-major: entries s + first, s + first + step, ...; the sums over
 * each group of L lanes) */
template <typename T, typename J, int B, int L>
__device__ __forceinline__ void
row_xcol(const J *__restrict__ col, const T *__restrict__ val, int64_t s, int64_t e, int64_t n,
         int64_t k, int64_t j0, const T *__restrict__ x, int first, int step, unsigned mask, T *acc)
{
    const int w = k - j0 < CC ? (int)(k - j0) : CC;
#pragma unroll
    for (int u = 0; u < CC; u++)
        acc[u] = T(0);
    for (int64_t q = s + first; q < e; q += step) {
        const T a = __ldg(val + q);
        const T *xc = x + j0 * n + ((int64_t)__ldg(col + q) - B);
#pragma unroll
        for (int u = 0; u < CC; u++)
            if (u < w) acc[u] += a * __ldg(xc + u * n);
    }
#pragma unroll
    for (int u = 0; u < CC; u++)
        for (int o = L >> 1; o; o >>= 1)
            acc[u] += __shfl_xor_sync(mask, acc[u], o, L);
}

template <typename T> __device__ __forceinline__ void put(T *yo, T alpha, T sum, T beta)
{
    *yo = beta != T(0) ? alpha * sum + beta * *yo : alpha * sum;
}

/* X's order as the kernels take it: column-major; row-major; row-major
 * with rows aligned for vector loads (VW divides k, X aligned) */
enum { XCOL = 0, XROWS = 1, XVEC = 2 };

/* Y's rows (or row g of a stream block) as a group of L lanes computes them */
template <typename T, typename J, int B, int XM, int L>
__device__ __forceinline__ void one_row(const J *__restrict__ col, const T *__restrict__ val,
                                        int64_t i, int64_t s, int64_t e, int64_t m, int64_t n,
                                        int64_t k, T alpha, const T *__restrict__ x, T beta,
                                        T *__restrict__ y, int yrow, int lane, unsigned mask)
{
    T acc[XM != XCOL ? VW : CC];
    for (int64_t j0 = 0; j0 < k; j0 += XM != XCOL ? (int64_t)L * VW : CC) {
        if constexpr (XM != XCOL) {
            row_xrow<T, J, B, XM == XVEC>(col, val, s, e, k, j0, x, lane, acc);
#pragma unroll
            for (int u = 0; u < VW; u++) {
                const int64_t j = j0 + (int64_t)lane * VW + u;
                if (j < k) put(y + at(i, j, m, k, yrow), alpha, acc[u], beta);
            }
        } else {
            row_xcol<T, J, B, L>(col, val, s, e, n, k, j0, x, lane, L, mask, acc);
#pragma unroll
            for (int u = 0; u < CC; u++) /* lane l writes the columns u = l mod L */
                if ((u & (L - 1)) == lane && j0 + u < k)
                    put(y + at(i, j0 + u, m, k, yrow), alpha, acc[u], beta);
        }
    }
}

template <int L> __device__ __forceinline__ unsigned group_mask(int t)
{
    return L == 32 ? 0xffffffffu : ((1u << L) - 1) << ((t & 31) & ~(L - 1));
}

/* A matrix without long rows: group g of L lanes takes row g (L from k, X
 * row-major; from the mean row, column-major). Many small blocks: more
 * warps in flight than the plan's blocks give (measured faster where no row
 * is long). */
template <typename T, typename I, typename J, int B, int XM, int L>
__global__ void __launch_bounds__(NT)
    spmm_rows(const I *__restrict__ rowptr, const J *__restrict__ col, const T *__restrict__ val,
              int64_t m, int64_t n, int64_t k, T alpha, const T *__restrict__ x, T beta,
              T *__restrict__ y, int yrow)
{
    const int64_t g = ((int64_t)blockIdx.x * NT + threadIdx.x) / L;
    const int lane = threadIdx.x & (L - 1);
    if (g >= m) return; /* a group leaves whole: L divides NT */
    one_row<T, J, B, XM, L>(col, val, g, (int64_t)rowptr[g] - B, (int64_t)rowptr[g + 1] - B, m, n,
                            k, alpha, x, beta, y, yrow, lane, group_mask<L>(threadIdx.x));
}

/* a stream block's rows [row0, row0 + R), a group of L lanes per row */
template <typename T, typename I, typename J, int B, int XM, int L>
__device__ __forceinline__ void
stream_rows(const I *__restrict__ rowptr, const J *__restrict__ col, const T *__restrict__ val,
            int64_t row0, int R, int64_t m, int64_t n, int64_t k, T alpha, const T *__restrict__ x,
            T beta, T *__restrict__ y, int yrow)
{
    const int t = threadIdx.x, lane = t & (L - 1);
    for (int r = t / L; r < R; r += NT / L) { /* whole groups take a row: L divides NT */
        const int64_t i = row0 + r;
        one_row<T, J, B, XM, L>(col, val, i, (int64_t)rowptr[i] - B, (int64_t)rowptr[i + 1] - B, m,
                                n, k, alpha, x, beta, y, yrow, lane, group_mask<L>(t));
    }
}

/* the sums of a long row's entries [k0, k1) for every column, X row-major:
 * NT / L groups over consecutive slices of the entries, lanes over the
 * columns (VW each), reduced in red; out(j, sum) writes them */
template <typename T, typename J, int B, bool VEC, int L, typename Out>
__device__ __forceinline__ void long_xrow(const J *__restrict__ col, const T *__restrict__ val,
                                          int64_t k0, int64_t k1, int64_t k,
                                          const T *__restrict__ x, T *red, Out out)
{
    constexpr int S = NT / L, W = L * VW;
    const int t = threadIdx.x, lane = t & (L - 1), sg = t / L;
    const int64_t len = (k1 - k0 + S - 1) / S;
    const int64_t s0 = k0 + sg * len, e = s0 + len < k1 ? s0 + len : k1;
    T acc[VW];
    for (int64_t j0 = 0; j0 < k; j0 += W) {
        row_xrow<T, J, B, VEC>(col, val, s0 < e ? s0 : e, e, k, j0, x, lane, acc);
#pragma unroll
        for (int u = 0; u < VW; u++)
            red[sg * W + lane * VW + u] = acc[u];
        __syncthreads();
        if (t < W && j0 + t < k) { /* column j0 + t */
            T sum = 0;
            for (int g = 0; g < S; g++)
                sum += red[g * W + t];
            out(j0 + t, sum);
        }
        __syncthreads();
    }
}

/* One block of the SpMV plan (cuda_kernels.h hisp_cuda_block), X row-major:
 * a stream block's rows, a group of L lanes per row (L from k); or a long
 * row (or a chunk of one) by the whole block, its sums reduced in shared
 * memory and written to Y (slot -1) or to the chunk's partials
 * part[slot*k + j] (slot >= 0). */
template <typename T, typename I, typename J, int B, bool VEC>
__global__ void __launch_bounds__(NT)
    spmm_n_xrow(const I *__restrict__ rowptr, const J *__restrict__ col, const T *__restrict__ val,
                const hisp_cuda_block *__restrict__ blocks, int64_t m, int64_t n, int64_t k,
                T alpha, const T *__restrict__ x, T beta, T *__restrict__ y, int yrow,
                T *__restrict__ part)
{
    constexpr int XM = VEC ? XVEC : XROWS;
    __shared__ T red[NT * VW];
    const hisp_cuda_block b = blocks[blockIdx.x];
    const int64_t w = (k + VW - 1) / VW; /* lanes a row's columns take */
    if (b.slot == HISP_CUDA_STREAM) {
        const int R = b.row1 - b.row0;
#define HISP_STREAM(L)                                                                             \
    stream_rows<T, I, J, B, XM, L>(rowptr, col, val, b.row0, R, m, n, k, alpha, x, beta, y, yrow)
        if (w <= 1)
            HISP_STREAM(1);
        else if (w <= 2)
            HISP_STREAM(2);
        else if (w <= 4)
            HISP_STREAM(4);
        else if (w <= 8)
            HISP_STREAM(8);
        else if (w <= 16)
            HISP_STREAM(16);
        else
            HISP_STREAM(32);
#undef HISP_STREAM
        return;
    }
    const int64_t i = b.row0;
    auto out = [&](int64_t j, T sum) {
        if (b.slot < 0)
            put(y + at(i, j, m, k, yrow), alpha, sum, beta);
        else
            part[(int64_t)b.slot * k + j] = sum;
    };
    if (w <= 1)
        long_xrow<T, J, B, VEC, 1>(col, val, b.k0, b.k1, k, x, red, out);
    else if (w <= 4)
        long_xrow<T, J, B, VEC, 4>(col, val, b.k0, b.k1, k, x, red, out);
    else if (w <= 16)
        long_xrow<T, J, B, VEC, 16>(col, val, b.k0, b.k1, k, x, red, out);
    else
        long_xrow<T, J, B, VEC, 32>(col, val, b.k0, b.k1, k, x, red, out);
}

/* One block of the SpMV plan, X column-major, for the columns
 * [blockIdx.y * CC, + CC): the blocks of one slice of columns run together,
 * so the columns they gather from stay in L2 (X whole may not fit; on the
 * H200, rmat 18 at k = 64: 44 -> 27 ms). A stream block, as the SpMV's:
 * each thread loads its entries once (PER, in registers), then for CR
 * columns at a time gathers X's entries (all loads issued before the first
 * use), stages the products in shared memory, and groups of L lanes sum the
 * rows. A long row (or a chunk): the block's threads over its entries, CC
 * columns a pass (row_xcol), the warps' sums reduced in shared memory. */
constexpr int CR = 2; /* columns a stream block stages at once */
template <typename T, typename I, typename J, int B>
__global__ void __launch_bounds__(NT)
    spmm_n_xcol(const I *__restrict__ rowptr, const J *__restrict__ col, const T *__restrict__ val,
                const hisp_cuda_block *__restrict__ blocks, int64_t m, int64_t n, int64_t k,
                T alpha, const T *__restrict__ x, T beta, T *__restrict__ y, int yrow,
                T *__restrict__ part)
{
    constexpr int CAP = HISP_CUDA_CAP((int)sizeof(T)), PER = CAP / NT;
    constexpr int RPT = HISP_CUDA_ROWCAP / NT, SHIFT = sizeof(T) == 4 ? 5 : 4;
    constexpr int PAD = CAP + (CAP >> SHIFT); /* one word of padding per 32 banks */
    __shared__ T sh[CR * PAD];
    const hisp_cuda_block b = blocks[blockIdx.x];
    const int t = threadIdx.x;
    const int64_t step = (int64_t)gridDim.y * CC; /* slices past 65535 (k past 2^19) */
    if (b.slot != HISP_CUDA_STREAM) {             /* (a chunk of) one long row */
        T *red = sh;
        for (int64_t j0 = (int64_t)blockIdx.y * CC; j0 < k; j0 += step) {
            T acc[CC];
            row_xcol<T, J, B, 32>(col, val, b.k0, b.k1, n, k, j0, x, t, NT, 0xffffffffu, acc);
#pragma unroll
            for (int u = 0; u < CC; u++) /* the warps' sums (every lane holds its warp's) */
                if ((t & 31) == 0) red[(t >> 5) * CC + u] = acc[u];
            __syncthreads();
            if (t < CC && j0 + t < k) {
                T sum = 0;
                for (int g = 0; g < NT / 32; g++)
                    sum += red[g * CC + t];
                if (b.slot < 0)
                    put(y + at(b.row0, j0 + t, m, k, yrow), alpha, sum, beta);
                else
                    part[(int64_t)b.slot * k + j0 + t] = sum;
            }
            __syncthreads();
        }
        return;
    }
    const int64_t base = b.k0;
    const int R = b.row1 - b.row0, E = (int)(b.k1 - base);
    int L = 32; /* lanes per row, as the SpMV's: the largest with L*R <= NT */
    while (L > 1 && L * R > NT)
        L >>= 1;
    const int G = NT / L, g = t / L, lane = t & (L - 1);
    int s[RPT], e[RPT];
#pragma unroll
    for (int r = 0; r < RPT; r++) {
        const int i = g + r * G;
        s[r] = e[r] = 0;
        if (i < R) {
            s[r] = (int)(rowptr[b.row0 + i] - B - base);
            e[r] = (int)(rowptr[b.row0 + i + 1] - B - base);
        }
    }
    /* entries past E: column 0 and value 0 (X's first entry exists), so the
     * gathers need no branch */
    int64_t c[PER];
    T v[PER];
#pragma unroll
    for (int u = 0; u < PER; u++) {
        const int q = t + u * NT;
        c[u] = q < E ? (int64_t)__ldcs(col + base + q) - B : 0;
        v[u] = q < E ? __ldcs(val + base + q) : T(0);
    }
    for (int64_t js = (int64_t)blockIdx.y * CC; js < k; js += step)
        for (int64_t j = js; j < js + CC && j < k; j += CR) {
            const int w = k - j < CR ? (int)(k - j) : CR;
            T p[CR][PER];
#pragma unroll
            for (int c2 = 0; c2 < CR; c2++) {
                const T *xc = x + (j + (c2 < w ? c2 : 0)) * n;
#pragma unroll
                for (int u = 0; u < PER; u++)
                    p[c2][u] = v[u] * __ldg(xc + c[u]);
            }
#pragma unroll
            for (int c2 = 0; c2 < CR; c2++)
#pragma unroll
                for (int u = 0; u < PER; u++) {
                    const int q = t + u * NT;
                    if (q < E) sh[c2 * PAD + q + (q >> SHIFT)] = p[c2][u];
                }
            __syncthreads();
#pragma unroll
            for (int c2 = 0; c2 < CR; c2++)
#pragma unroll
                for (int r = 0; r < RPT; r++) {
                    T sum = 0;
                    for (int q = s[r] + lane; q < e[r]; q += L)
                        sum += sh[c2 * PAD + q + (q >> SHIFT)];
                    for (int o = L >> 1; o; o >>= 1)
                        sum += __shfl_xor_sync(0xffffffffu, sum, o);
                    const int i = g + r * G;
                    if (lane == 0 && i < R && c2 < w)
                        put(y + at(b.row0 + i, j + c2, m, k, yrow), alpha, sum, beta);
                }
            __syncthreads();
        }
}

/* Split rows: a warp per row sums its chunks' partials, column by column. */
template <typename T>
__global__ void spmm_fixup(const hisp_cuda_split *__restrict__ sp, int64_t ns, int64_t m, int64_t k,
                           const T *__restrict__ part, T alpha, T beta, T *__restrict__ y, int yrow)
{
    const int64_t w = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (w >= ns) return;
    const hisp_cuda_split s = sp[w];
    for (int64_t j = lane; j < k; j += 32) {
        T sum = 0;
        for (int c = 0; c < s.n; c++)
            sum += part[(int64_t)(s.slot0 + c) * k + j];
        put(y + at(s.row, j, m, k, yrow), alpha, sum, beta);
    }
}

/* op T without a transposed copy (wrapped arrays, or no room): Y scaled by
 * beta, then each row i of A adds alpha*a_ic*X(i, j) to Y(c, j) with atomics,
 * the lanes of a warp splitting the columns. */
template <typename T> __global__ void scale_y(T *__restrict__ y, int64_t n, T beta)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        y[i] = beta != T(0) ? beta * y[i] : T(0);
}

template <typename T, typename I, typename J, int B>
__global__ void __launch_bounds__(NT)
    spmm_t_scatter(const I *__restrict__ rowptr, const J *__restrict__ col,
                   const T *__restrict__ val, int64_t m, int64_t n, int64_t k, T alpha,
                   const T *__restrict__ x, int xrow, T *__restrict__ y, int yrow)
{
    const int64_t g = ((int64_t)blockIdx.x * NT + threadIdx.x) / 32;
    const int lane = threadIdx.x & 31;
    if (g >= m) return;
    const int64_t s = (int64_t)rowptr[g] - B, e = (int64_t)rowptr[g + 1] - B;
    for (int64_t j = lane; j < k; j += 32) {
        const T xv = alpha * __ldg(x + at(g, j, m, k, xrow));
        for (int64_t q = s; q < e; q++)
            atomicAdd(y + at((int64_t)__ldg(col + q) - B, j, n, k, yrow), __ldg(val + q) * xv);
    }
}

template <typename T, typename I, typename J, int B>
cudaError_t scatter_t(const hisp_cuda_csr *A, T alpha, const T *x, int xrow, T beta, T *y, int yrow,
                      int64_t k, cudaStream_t st)
{
    const int64_t ny = A->ncols * k;
    if (ny > 0) {
        int64_t nb = (ny + 255) / 256;
        scale_y<T><<<(unsigned)(nb < 65536 ? nb : 65536), 256, 0, st>>>(y, ny, beta);
    }
    const int64_t blocks = (A->nrows * 32 + NT - 1) / NT;
    if (blocks > 0)
        spmm_t_scatter<T, I, J, B><<<(unsigned)blocks, NT, 0, st>>>(
            static_cast<const I *>(A->rowptr), static_cast<const J *>(A->colind),
            static_cast<const T *>(A->val), A->nrows, A->ncols, k, alpha, x, xrow, y, yrow);
    return cudaGetLastError();
}

template <typename T, typename I, typename J, int B, int L>
cudaError_t rows(const hisp_cuda_csr *A, T alpha, const T *x, int xm, T beta, T *y, int yrow,
                 int64_t k, cudaStream_t st)
{
    const int64_t blocks = (A->nrows * L + NT - 1) / NT;
    const I *rp = static_cast<const I *>(A->rowptr);
    const J *col = static_cast<const J *>(A->colind);
    const T *val = static_cast<const T *>(A->val);
#define HISP_ROWS(XM)                                                                              \
    spmm_rows<T, I, J, B, XM, L><<<(unsigned)blocks, NT, 0, st>>>(                                 \
        rp, col, val, A->nrows, A->ncols, k, alpha, x, beta, y, yrow)
    if (xm == XVEC)
        HISP_ROWS(XVEC);
    else if (xm == XROWS)
        HISP_ROWS(XROWS);
    else
        HISP_ROWS(XCOL);
#undef HISP_ROWS
    return cudaGetLastError();
}

/* X column-major, short rows: a thread per row, its entries read in turn
 * (from L1 after the first of a line), CW columns a pass; the consecutive
 * rows of a warp read X and write Y coalesced where the columns of
 * consecutive rows are near (stencils, banded). */
template <typename T, typename I, typename J, int B, int CW, bool XROW>
__global__ void __launch_bounds__(NT)
    spmm_thread(const I *__restrict__ rowptr, const J *__restrict__ col, const T *__restrict__ val,
                int64_t m, int64_t n, int64_t k, T alpha, const T *__restrict__ x, T beta,
                T *__restrict__ y, int yrow)
{
    const int64_t i = (int64_t)blockIdx.x * NT + threadIdx.x;
    if (i >= m) return;
    const int64_t s = (int64_t)rowptr[i] - B, e = (int64_t)rowptr[i + 1] - B;
    for (int64_t j0 = 0; j0 < k; j0 += CW) {
        const int w = k - j0 < CW ? (int)(k - j0) : CW;
        T acc[CW];
#pragma unroll
        for (int u = 0; u < CW; u++)
            acc[u] = T(0);
        for (int64_t q = s; q < e; q++) {
            const T a = __ldg(val + q);
            const int64_t c = (int64_t)__ldg(col + q) - B;
            const T *xc = XROW ? x + c * k + j0 : x + j0 * n + c;
#pragma unroll
            for (int u = 0; u < CW; u++)
                if (u < w) acc[u] += a * __ldg(xc + (XROW ? u : u * n));
        }
#pragma unroll
        for (int u = 0; u < CW; u++)
            if (u < w) put(y + at(i, j0 + u, m, k, yrow), alpha, acc[u], beta);
    }
}

template <typename T, typename I, typename J, int B, int CW>
cudaError_t thread_rows(const hisp_cuda_csr *A, T alpha, const T *x, int xrow, T beta, T *y,
                        int yrow, int64_t k, cudaStream_t st)
{
    const int64_t blocks = (A->nrows + NT - 1) / NT;
    const I *rp = static_cast<const I *>(A->rowptr);
    const J *col = static_cast<const J *>(A->colind);
    const T *val = static_cast<const T *>(A->val);
    if (xrow)
        spmm_thread<T, I, J, B, CW, true><<<(unsigned)blocks, NT, 0, st>>>(
            rp, col, val, A->nrows, A->ncols, k, alpha, x, beta, y, yrow);
    else
        spmm_thread<T, I, J, B, CW, false><<<(unsigned)blocks, NT, 0, st>>>(
            rp, col, val, A->nrows, A->ncols, k, alpha, x, beta, y, yrow);
    return cudaGetLastError();
}

template <typename T, typename I, typename J, int B>
cudaError_t run(const hisp_cuda_csr *A, int op, T alpha, const T *x, int xrow, T beta, T *y,
                int yrow, int64_t k, T *part, cudaStream_t st)
{
    if (op) return scatter_t<T, I, J, B>(A, alpha, x, xrow, beta, y, yrow, k, st);
    const I *rp = static_cast<const I *>(A->rowptr);
    const J *col = static_cast<const J *>(A->colind);
    const T *val = static_cast<const T *>(A->val);
    /* row-major X aligned for vector loads of VW entries */
    const int xm = !xrow                                                 ? XCOL
                   : k % VW == 0 && (uintptr_t)x % (VW * sizeof(T)) == 0 ? XVEC
                                                                         : XROWS;
    if (A->nlong == 0) { /* no long rows: a group per row over the whole matrix */
        const double mean = A->nrows ? (double)A->nnz / (double)A->nrows : 0;
        if (mean <= 16 && (!xrow || k <= 4)) { /* short rows: a thread per row */
            if (k <= 4) return thread_rows<T, I, J, B, 4>(A, alpha, x, xrow, beta, y, yrow, k, st);
            if (k <= 8) return thread_rows<T, I, J, B, 8>(A, alpha, x, xrow, beta, y, yrow, k, st);
            return thread_rows<T, I, J, B, 16>(A, alpha, x, xrow, beta, y, yrow, k, st);
        }
        /* lanes per row: X row-major, VW columns each; column-major, from the mean row */
        const double w = xrow ? (double)((k + VW - 1) / VW) : mean;
        if (w <= 1 && xrow) return rows<T, I, J, B, 1>(A, alpha, x, xm, beta, y, yrow, k, st);
        if (w <= 2 && xrow) return rows<T, I, J, B, 2>(A, alpha, x, xm, beta, y, yrow, k, st);
        if (w <= 4) return rows<T, I, J, B, 4>(A, alpha, x, xm, beta, y, yrow, k, st);
        if (w <= 8) return rows<T, I, J, B, 8>(A, alpha, x, xm, beta, y, yrow, k, st);
        if (w <= 16) return rows<T, I, J, B, 16>(A, alpha, x, xm, beta, y, yrow, k, st);
        return rows<T, I, J, B, 32>(A, alpha, x, xm, beta, y, yrow, k, st);
    }
    if (A->nblocks > 0) {
        const unsigned nb = (unsigned)A->nblocks;
        if (xm == XVEC)
            spmm_n_xrow<T, I, J, B, true><<<nb, NT, 0, st>>>(
                rp, col, val, A->blocks, A->nrows, A->ncols, k, alpha, x, beta, y, yrow, part);
        else if (xm == XROWS)
            spmm_n_xrow<T, I, J, B, false><<<nb, NT, 0, st>>>(
                rp, col, val, A->blocks, A->nrows, A->ncols, k, alpha, x, beta, y, yrow, part);
        else
            spmm_n_xcol<T, I, J, B>
                <<<dim3(nb, (unsigned)((k + CC - 1) / CC < 65535 ? (k + CC - 1) / CC : 65535)), NT,
                   0, st>>>(rp, col, val, A->blocks, A->nrows, A->ncols, k, alpha, x, beta, y, yrow,
                            part);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) return e;
    }
    if (A->nsplits > 0) {
        const int64_t threads = A->nsplits * 32;
        spmm_fixup<T><<<(unsigned)((threads + 255) / 256), 256, 0, st>>>(
            A->splits, A->nsplits, A->nrows, k, part, alpha, beta, y, yrow);
    }
    return cudaGetLastError();
}

template <typename T>
cudaError_t run_shape(const hisp_cuda_csr *A, int op, T alpha, const void *xv, int xrow, T beta,
                      void *yv, int yrow, int64_t k, void *pv, cudaStream_t st)
{
    const T *x = static_cast<const T *>(xv);
    T *y = static_cast<T *>(yv);
    T *part = static_cast<T *>(pv);
    switch ((A->wide ? 4 : 0) + (A->idx64 ? 2 : 0) + (A->base ? 1 : 0)) {
    case 0:
        return run<T, int32_t, int32_t, 0>(A, op, alpha, x, xrow, beta, y, yrow, k, part, st);
    case 1:
        return run<T, int32_t, int32_t, 1>(A, op, alpha, x, xrow, beta, y, yrow, k, part, st);
    case 2:
        return run<T, int32_t, int64_t, 0>(A, op, alpha, x, xrow, beta, y, yrow, k, part, st);
    case 3:
        return run<T, int32_t, int64_t, 1>(A, op, alpha, x, xrow, beta, y, yrow, k, part, st);
    case 4:
        return run<T, int64_t, int32_t, 0>(A, op, alpha, x, xrow, beta, y, yrow, k, part, st);
    case 5:
        return run<T, int64_t, int32_t, 1>(A, op, alpha, x, xrow, beta, y, yrow, k, part, st);
    case 6:
        return run<T, int64_t, int64_t, 0>(A, op, alpha, x, xrow, beta, y, yrow, k, part, st);
    default:
        return run<T, int64_t, int64_t, 1>(A, op, alpha, x, xrow, beta, y, yrow, k, part, st);
    }
}

} // namespace

extern "C" cudaError_t hisp_cuda_launch_csr_spmm(const hisp_cuda_csr *A, int op, double alpha,
                                                 const void *x, int xrow, double beta, void *y,
                                                 int yrow, int64_t k, void *part,
                                                 cudaStream_t stream)
{
    if ((op == 0 && A->nrows == 0) || k == 0) return cudaSuccess;
    if (A->f64) return run_shape<double>(A, op, alpha, x, xrow, beta, y, yrow, k, part, stream);
    return run_shape<float>(A, op, (float)alpha, x, xrow, (float)beta, y, yrow, k, part, stream);
}
