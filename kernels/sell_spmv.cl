/* SELL-C-sigma SpMV (core/sell/sell_dev.c), one source for OpenCL C and CUDA
 * (NVRTC), after the prelude common.cl. Built with defines:
 *   IS_DOUBLE 0|1   entries float | double, accumulated in that type (as the
 *                   CSR reference, core/csr/csr_ref.c)
 *   SLICE           C, the slice height (a power of two)
 * The layout (core/sell/hispi_sell.h): slice s holds the sorted rows
 * s*SLICE .. s*SLICE + SLICE - 1 from sptr[s] on, entry k of its row i at
 * sptr[s] + k*SLICE + i, so the work-items of a slice read consecutive
 * addresses; padding has value 0 and a valid column, so no kernel tests for
 * it. Sorted row r is row perm[r] of the matrix.
 *   sell_spmv:        one work-item per sorted row (GPUs; any work-group
 *                     size, the rows past nrows return)
 *   sell_spmv_slices: one work-item per slice, its SLICE rows in a private
 *                     array (CPUs: each work-item streams a contiguous block)
 *   sell_spmv_wide:   GPUs: slices of more than `wide` entries, which
 *                     sell_spmv leaves out, in chunks of CHUNK entries per
 *                     row, one work-group of SLICE x LANES work-items per
 *                     chunk: the LANES work-items of a row take every
 *                     LANES-th entry, each warp still reading SLICE
 *                     consecutive addresses; so a long row is neither one
 *                     work-item's serial loop nor one work-group's
 *   sell_spmv_lanes:  GPUs, matrices with too few rows to fill the device:
 *                     one work-group of SLICE x LANES work-items per slice,
 *                     the LANES work-items of a row taking every LANES-th
 *                     entry of the whole row; one launch
 * All write y[perm[r]] = alpha*sum + beta*y[perm[r]]; beta_zero: y is not
 * read. */

#if defined(__CUDACC__)
#define KERNEL extern "C" __global__ void
#define FN static __device__ __forceinline__
#define LOCALP
#define GLOBAL_ID ((i64)blockIdx.x * blockDim.x + threadIdx.x)
#define GROUP ((i64)blockIdx.x)
#else
#define KERNEL __kernel void
#define FN static inline
#define LOCALP __local
#define GLOBAL_ID ((i64)get_global_id(0))
#define GROUP ((i64)get_group_id(0))
#endif

#if ONE(sell_spmv)
KERNEL sell_spmv(int nrows, GLOBAL const i64 *sptr, GLOBAL const int *perm,
                 GLOBAL const int *col, GLOBAL const cs_t *val, GLOBAL const cs_t *x,
                 GLOBAL cs_t *y, cs_t alpha, cs_t beta, int beta_zero, i64 wide)
{
    const i64 r = GLOBAL_ID;
    if (r >= nrows) return;
    const i64 s = r / SLICE;
    const i64 end = sptr[s + 1];
    if (end - sptr[s] > wide) return; /* sell_spmv_wide's */
    cs_t sum = 0;
    for (i64 k = sptr[s] + (r & (SLICE - 1)); k < end; k += SLICE)
        sum += val[k] * x[col[k]];
    const int i = perm[r];
    y[i] = beta_zero ? alpha * sum : alpha * sum + beta * y[i];
}
#endif

#if ONE(sell_spmv_slices)
KERNEL sell_spmv_slices(int nrows, GLOBAL const i64 *sptr, GLOBAL const int *perm,
                        GLOBAL const int *col, GLOBAL const cs_t *val, GLOBAL const cs_t *x,
                        GLOBAL cs_t *y, cs_t alpha, cs_t beta, int beta_zero)
{
    const i64 s = GLOBAL_ID;
    const i64 r0 = s * SLICE;
    if (r0 >= nrows) return;
    cs_t sum[SLICE];
    for (int i = 0; i < SLICE; i++)
        sum[i] = 0;
    const i64 end = sptr[s + 1];
    for (i64 k = sptr[s]; k < end; k += SLICE)
        for (int i = 0; i < SLICE; i++)
            sum[i] += val[k + i] * x[col[k + i]];
    const int n = nrows - r0 < SLICE ? (int)(nrows - r0) : SLICE;
    for (int i = 0; i < n; i++) {
        const int row = perm[r0 + i];
        y[row] = beta_zero ? alpha * sum[i] : alpha * sum[i] + beta * y[row];
    }
}
#endif

#ifdef LANES
/* The LANES work-items of a row of slice s (base: its first entry, width:
 * entries per row) sum entries k0 + j, k0 + j + LANES, ... below k1; the
 * row's sum (in the fixed order of the lanes) is returned to lane 0, the
 * others get 0. acc: SLICE * LANES entries of local memory. */
FN cs_t lanes_sum(LOCALP cs_t *acc, i64 base, i64 k0, i64 k1, GLOBAL const int *col,
          GLOBAL const cs_t *val, GLOBAL const cs_t *x)
{
    const int i = LID & (SLICE - 1), j = LID / SLICE;
    cs_t sum = 0;
    for (i64 k = k0 + j; k < k1; k += LANES)
        sum += val[base + k * SLICE + i] * x[col[base + k * SLICE + i]];
    acc[LID] = sum;
    BARRIER();
    if (j) return 0;
    for (int q = 1; q < LANES; q++)
        sum += acc[q * SLICE + i];
    return sum;
}

#if ONE(sell_spmv_lanes)
KERNEL sell_spmv_lanes(int nrows, GLOBAL const i64 *sptr, GLOBAL const int *perm,
                       GLOBAL const int *col, GLOBAL const cs_t *val, GLOBAL const cs_t *x,
                       GLOBAL cs_t *y, cs_t alpha, cs_t beta, int beta_zero)
{
    LOCAL_DECL(cs_t, acc[SLICE * LANES]);
    const i64 s = GROUP, base = sptr[s];
    const cs_t sum = lanes_sum(acc, base, 0, (sptr[s + 1] - base) / SLICE, col, val, x);
    const i64 r = s * SLICE + LID;
    if (LID >= SLICE || r >= nrows) return;
    const int row = perm[r];
    y[row] = beta_zero ? alpha * sum : alpha * sum + beta * y[row];
}
#endif

/* Wide slices, in chunks of CHUNK entries per row: work-group g takes chunk
 * g (slice cslice[g], entries ck0[g] .. ck0[g] + CHUNK - 1 of each of its
 * rows) and leaves its SLICE sums in part; sell_spmv_wide_sum adds a slice's
 * chunks in order (the same sum on every call) and writes y. */
#if ONE(sell_spmv_wide)
KERNEL sell_spmv_wide(GLOBAL const int *cslice, GLOBAL const int *ck0, GLOBAL const i64 *sptr,
                      GLOBAL const int *col, GLOBAL const cs_t *val, GLOBAL const cs_t *x,
                      GLOBAL cs_t *part)
{
    LOCAL_DECL(cs_t, acc[SLICE * LANES]);
    const i64 g = GROUP, s = cslice[g];
    const i64 base = sptr[s], width = (sptr[s + 1] - base) / SLICE;
    const i64 k1 = ck0[g] + CHUNK < width ? ck0[g] + CHUNK : width;
    const cs_t sum = lanes_sum(acc, base, ck0[g], k1, col, val, x);
    if (LID < SLICE) part[g * SLICE + LID] = sum;
}
#endif

#if ONE(sell_spmv_wide_sum)
KERNEL sell_spmv_wide_sum(int nwide, int nrows, GLOBAL const int *wslice,
                          GLOBAL const int *wchunk, GLOBAL const cs_t *part,
                          GLOBAL const int *perm, GLOBAL cs_t *y, cs_t alpha, cs_t beta,
                          int beta_zero)
{
    const i64 t = GLOBAL_ID;
    if (t >= (i64)nwide * SLICE) return;
    const i64 w = t / SLICE;
    const int i = (int)(t & (SLICE - 1));
    cs_t sum = 0;
    for (int c = wchunk[w]; c < wchunk[w + 1]; c++)
        sum += part[(i64)c * SLICE + i];
    const i64 r = (i64)wslice[w] * SLICE + i;
    if (r >= nrows) return;
    const int row = perm[r];
    y[row] = beta_zero ? alpha * sum : alpha * sum + beta * y[row];
}
#endif
#endif
