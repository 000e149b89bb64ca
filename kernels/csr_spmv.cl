/* CSR SpMV kernels: y = alpha*op(A)*x + beta*y.
 *
 * Built at run time with:
 *   VALUE_T   float | double        IS_DOUBLE 0 | 1
 *   PTR_T     uint | ulong          (row pointers; uint when nnz < 2^31)
 *   IDX64     0 | 1 (64-bit column indices), IDX_BASE 0 | 1 (index base)
 *   LS        work-group size of the vector and long-row kernels (power of 2)
 *   ATOM64    1 when cl_khr_int64_base_atomics is available
 * The vector kernels take vl, the lanes per row (power of 2, <= LS), as an
 * argument: one program per (type, pointer width) serves every matrix.
 * With beta == 0, y is never read (NaN in y does not spread). The prelude
 * kernels/common.cl (real, atomic_add_real) comes first.
 */
typedef PTR_T ptr_t;

/* Index arrays the caller wrapped (hisp_matrix_wrap_csr_device) may be
 * 64-bit (IDX64 1) and 1-based (IDX_BASE 1): read in place, rebased
 * here. hisp's own arrays: uint, 0. */
#ifndef IDX64
#define IDX64 0
#endif
#ifndef IDX_BASE
#define IDX_BASE 0
#endif
#if IDX64
typedef ulong idx_t;
#else
typedef uint idx_t;
#endif
#define RP(i) (rowptr[i] - IDX_BASE)
#define CI(k) (colind[k] - IDX_BASE)

real combine(real alpha, real sum, real beta, __global const real *y, size_t i)
{
    if (beta == (real)0) return alpha * sum;
    return alpha * sum + beta * y[i];
}

/* y = beta*y, or 0 without reading y when beta == 0 (op = T, first step). */
#if ONE(scale_y)
__kernel void scale_y(const ulong n, const real beta, __global real *y)
{
    size_t i = get_global_id(0);
    if (i >= n) return;
    if (beta == (real)0)
        y[i] = (real)0;
    else
        y[i] = beta * y[i];
}
#endif

/* ---- CPU devices (PoCL): one work-item per part, a contiguous run of rows
 * with about equal nonzeros + rows. The work-group is one work-item, so
 * PoCL's work-group loop vanishes and the inner loop is a plain CSR loop. */

/* One row's dot product with four accumulators: shorter add-latency chains
 * (measured faster on PoCL than one or two for rows of tens of entries). */
real row_dot(ptr_t k, ptr_t e, __global const idx_t *colind, __global const real *val,
             __global const real *x)
{
    real s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (; k + 3 < e; k += 4) {
        s0 += val[k] * x[CI(k)];
        s1 += val[k + 1] * x[CI(k + 1)];
        s2 += val[k + 2] * x[CI(k + 2)];
        s3 += val[k + 3] * x[CI(k + 3)];
    }
    for (; k < e; k++) s0 += val[k] * x[CI(k)];
    return (s0 + s1) + (s2 + s3);
}

#if ONE(csr_n_chunk)
__kernel void csr_n_chunk(__global const uint *part, __global const ptr_t *rowptr,
                          __global const idx_t *colind, __global const real *val,
                          __global const real *x, const real alpha, const real beta,
                          __global real *y)
{
    size_t g = get_global_id(0);
    uint r0 = part[g], r1 = part[g + 1];
    if (beta == (real)0) { /* y is not read */
        for (uint i = r0; i < r1; i++)
            y[i] = alpha * row_dot(RP(i), RP(i + 1), colind, val, x);
    } else {
        for (uint i = r0; i < r1; i++)
            y[i] = alpha * row_dot(RP(i), RP(i + 1), colind, val, x) + beta * y[i];
    }
}
#endif

/* y += alpha*A x over the rows that have entries (rows: their list, part:
 * parts of it of equal cost), the others untouched: beta = 1 on a matrix
 * whose rows are mostly empty (an MPI rank's ghost block). Each listed
 * row as csr_n_chunk computes it. */
#if ONE(csr_n_rows)
__kernel void csr_n_rows(__global const uint *part, __global const uint *rows,
                         __global const ptr_t *rowptr, __global const idx_t *colind,
                         __global const real *val, __global const real *x, const real alpha,
                         __global real *y)
{
    size_t g = get_global_id(0);
    for (uint j = part[g]; j < part[g + 1]; j++) {
        uint i = rows[j];
        y[i] = alpha * row_dot(RP(i), RP(i + 1), colind, val, x) + y[i];
    }
}
#endif

/* Transposed without atomics: work-item g scatters its rows into its own
 * copy w + g*ncols; reduce_copies then sums the copies into y. */
#if ONE(csr_t_private)
__kernel void csr_t_private(__global const uint *part, __global const ptr_t *rowptr,
                            __global const idx_t *colind, __global const real *val,
                            __global const real *x, const real alpha, const ulong ncols,
                            __global real *w)
{
    size_t g = get_global_id(0);
    __global real *wg = w + g * ncols;
    for (ulong j = 0; j < ncols; j++) wg[j] = 0;
    uint r0 = part[g], r1 = part[g + 1];
    for (uint i = r0; i < r1; i++) {
        real xi = alpha * x[i];
        for (ptr_t k = RP(i); k < RP(i + 1); k++) wg[CI(k)] += val[k] * xi;
    }
}
#endif

#if ONE(reduce_copies)
__kernel void reduce_copies(const uint ncopies, const ulong ncols, __global const real *w,
                            const real beta, __global real *y)
{
    size_t j = get_global_id(0);
    if (j >= ncols) return;
    real s = 0;
    for (uint p = 0; p < ncopies; p++) s += w[p * ncols + j];
    if (beta == (real)0)
        y[j] = s;
    else
        y[j] = beta * y[j] + s;
}
#endif

#ifdef HAVE_ATOMIC_ADD
/* Transposed scatter, after scale_y: y[j] += alpha*A[i,j]*x[i]. */
#if ONE(csr_t_chunk)
__kernel void csr_t_chunk(__global const uint *part, __global const ptr_t *rowptr,
                          __global const idx_t *colind, __global const real *val,
                          __global const real *x, const real alpha, __global real *y)
{
    size_t g = get_global_id(0);
    uint r0 = part[g], r1 = part[g + 1];
    for (uint i = r0; i < r1; i++) {
        real xi = alpha * x[i];
        for (ptr_t k = RP(i); k < RP(i + 1); k++)
            atomic_add_real(&y[CI(k)], val[k] * xi);
    }
}
#endif
#endif

/* ---- SpMM, Y = alpha*op(A)*X + beta*Y over k columns: X and Y column-major
 * (entry (i, j) at j*rows + i) or row-major (at i*k + j) by xrow / yrow. */
#define AT(i, j, rows, k, row) ((row) ? (i) * (k) + (j) : (j) * (rows) + (i))
#define SPMM_CC 16 /* the most columns summed per pass over a row's entries */

/* op N: work-item g takes row g, or (part != 0, CPU devices) the rows
 * [part[g], part[g + 1]) of the chunk plan; 16, 8 or 4 columns per pass
 * (the rest one by one) in private sums, the row's entries read once per
 * pass. */
#if ONE(csr_spmm_n)
/* a row's sums of W columns from j0: constant bounds and X's stride fixed
 * per order, which CPU compilers unroll and vectorise (row-major X: the W
 * entries of a row of X are consecutive) */
#define SPMM_PASS(W, XAT)                                                                          \
    for (ptr_t e = RP(i); e < RP(i + 1); e++) {                                                   \
        real a = val[e];                                                                           \
        ulong c = CI(e);                                                                           \
        for (uint u = 0; u < W; u++)                                                               \
            acc[u] += a * x[XAT];                                                                  \
    }
#define SPMM_PASSES(W)                                                                             \
    if (xrow) {                                                                                    \
        SPMM_PASS(W, c * k + j0 + u)                                                               \
    } else {                                                                                       \
        SPMM_PASS(W, (j0 + u) * n + c)                                                             \
    }
__kernel void csr_spmm_n(const ulong count, __global const uint *part, const int chunk,
                         const ulong m, const ulong n, const ulong k, __global const ptr_t *rowptr,
                         __global const idx_t *colind, __global const real *val,
                         __global const real *x, const int xrow, const real alpha,
                         const real beta, __global real *y, const int yrow)
{
    size_t g = get_global_id(0);
    if (g >= count) return;
    ulong r0 = chunk ? part[g] : g, r1 = chunk ? part[g + 1] : g + 1;
    for (ulong i = r0; i < r1; i++) {
        uint w = 0;
        for (ulong j0 = 0; j0 < k; j0 += w) {
            real acc[SPMM_CC];
            for (uint u = 0; u < SPMM_CC; u++)
                acc[u] = (real)0;
            ulong left = k - j0;
            w = left >= 16 ? 16 : left >= 8 ? 8 : left >= 4 ? 4 : (uint)left;
            if (w == 16) {
                SPMM_PASSES(16)
            } else if (w == 8) {
                SPMM_PASSES(8)
            } else if (w == 4) {
                SPMM_PASSES(4)
            } else {
                for (ptr_t e = RP(i); e < RP(i + 1); e++) {
                    real a = val[e];
                    ulong c = CI(e);
                    for (uint u = 0; u < w; u++)
                        acc[u] += a * x[AT(c, j0 + u, n, k, xrow)];
                }
            }
            for (uint u = 0; u < w; u++) {
                ulong o = AT(i, j0 + u, m, k, yrow);
                y[o] = combine(alpha, acc[u], beta, y, o);
            }
        }
    }
}
#endif

#ifdef HAVE_ATOMIC_ADD
/* op T by scatter, after scale_y over Y: Y(c, j) += alpha*A[i,c]*X(i, j),
 * work-item g taking row g of A. */
#if ONE(csr_spmm_t)
__kernel void csr_spmm_t(const ulong m, const ulong n, const ulong k,
                         __global const ptr_t *rowptr, __global const idx_t *colind,
                         __global const real *val, __global const real *x, const int xrow,
                         const real alpha, __global real *y, const int yrow)
{
    size_t i = get_global_id(0);
    if (i >= m) return;
    for (ulong j = 0; j < k; j++) {
        real xi = alpha * x[AT(i, j, m, k, xrow)];
        for (ptr_t e = RP(i); e < RP(i + 1); e++)
            atomic_add_real(&y[AT(CI(e), j, n, k, yrow)], val[e] * xi);
    }
}
#endif
#endif

/* ---- GPU devices: vl lanes per row, coalesced loads, reduction in local
 * memory (no sub-group functions in OpenCL 1.2). Three bins of rows, so
 * that no row serializes: short rows (<= max_len) with the vl chosen from
 * the mean length, over all rows (list == NULL); medium rows with 32 lanes
 * from a row list; long rows with a whole work-group each. */

#if ONE(csr_n_vector)
__kernel __attribute__((reqd_work_group_size(LS, 1, 1))) void
csr_n_vector(const uint count, __global const uint *list, const uint vl, const ulong max_len,
             __global const ptr_t *rowptr, __global const idx_t *colind, __global const real *val,
             __global const real *x, const real alpha, const real beta, __global real *y)
{
    __local real part[LS];
    uint lid = get_local_id(0);
    uint lane = lid & (vl - 1);
    size_t idx = get_global_id(0) / vl;
    real sum = 0;
    int active = 0;
    uint row = 0;
    if (idx < count) {
        row = list ? list[idx] : (uint)idx;
        ptr_t s = RP(row), e = RP(row + 1);
        if ((ulong)(e - s) <= max_len) {
            active = 1;
            for (ptr_t k = s + lane; k < e; k += vl) sum += val[k] * x[CI(k)];
        }
    }
    part[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint off = vl / 2; off > 0; off >>= 1) {
        if (lane < off) part[lid] += part[lid + off];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (active && lane == 0) y[row] = combine(alpha, part[lid], beta, y, row);
}
#endif

/* One work-group per long row (rows listed in longrows). */
#if ONE(csr_n_long)
__kernel __attribute__((reqd_work_group_size(LS, 1, 1))) void
csr_n_long(__global const uint *longrows, __global const ptr_t *rowptr,
           __global const idx_t *colind, __global const real *val, __global const real *x,
           const real alpha, const real beta, __global real *y)
{
    __local real part[LS];
    uint lid = get_local_id(0);
    uint row = longrows[get_group_id(0)];
    ptr_t e = RP(row + 1);
    real sum = 0;
    for (ptr_t k = RP(row) + lid; k < e; k += LS) sum += val[k] * x[CI(k)];
    part[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint off = LS / 2; off > 0; off >>= 1) {
        if (lid < off) part[lid] += part[lid + off];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) y[row] = combine(alpha, part[0], beta, y, row);
}
#endif

#ifdef HAVE_ATOMIC_ADD
#if ONE(csr_t_vector)
__kernel __attribute__((reqd_work_group_size(LS, 1, 1))) void
csr_t_vector(const uint count, __global const uint *list, const uint vl, const ulong max_len,
             __global const ptr_t *rowptr, __global const idx_t *colind, __global const real *val,
             __global const real *x, const real alpha, __global real *y)
{
    uint lane = get_local_id(0) & (vl - 1);
    size_t idx = get_global_id(0) / vl;
    if (idx >= count) return;
    uint row = list ? list[idx] : (uint)idx;
    ptr_t s = RP(row), e = RP(row + 1);
    if ((ulong)(e - s) > max_len) return;
    real xi = alpha * x[row];
    for (ptr_t k = s + lane; k < e; k += vl) atomic_add_real(&y[CI(k)], val[k] * xi);
}
#endif

#if ONE(csr_t_long)
__kernel __attribute__((reqd_work_group_size(LS, 1, 1))) void
csr_t_long(__global const uint *longrows, __global const ptr_t *rowptr,
           __global const idx_t *colind, __global const real *val, __global const real *x,
           const real alpha, __global real *y)
{
    uint row = longrows[get_group_id(0)];
    real xi = alpha * x[row];
    ptr_t e = RP(row + 1);
    for (ptr_t k = RP(row) + get_local_id(0); k < e; k += LS)
        atomic_add_real(&y[CI(k)], val[k] * xi);
}
#endif
#endif
