/* CSR SpMV kernels: y = alpha*op(A)*x + beta*y.
 *
 * Built at run time with:
 *   VALUE_T   float | double        IS_DOUBLE 0 | 1
 *   PTR_T     uint | ulong          (row pointers; uint when nnz < 2^31)
 *   LS        work-group size of the vector and long-row kernels (power of 2)
 *   ATOM64    1 when cl_khr_int64_base_atomics is available
 * The vector kernels take vl, the lanes per row (power of 2, <= LS), as an
 * argument: one program per (type, pointer width) serves every matrix.
 * With beta == 0, y is never read (NaN in y does not spread).
 */
#if IS_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#if ATOM64
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#endif
#endif

typedef VALUE_T real;
typedef PTR_T ptr_t;

/* Atomic y[i] += v as a compare-exchange loop on the bit pattern (OpenCL 1.2
 * has no float atomics). */
#if IS_DOUBLE
#if ATOM64
inline void atomic_add_real(volatile __global real *p, real v)
{
    volatile __global ulong *u = (volatile __global ulong *)p;
    ulong old = *u, seen;
    for (;;) {
        ulong nw = as_ulong(as_double(old) + v);
        seen = atom_cmpxchg(u, old, nw);
        if (seen == old) break;
        old = seen;
    }
}
#define HAVE_ATOMIC_ADD 1
#endif
#else
inline void atomic_add_real(volatile __global real *p, real v)
{
    volatile __global uint *u = (volatile __global uint *)p;
    uint old = *u, seen;
    for (;;) {
        uint nw = as_uint(as_float(old) + v);
        seen = atomic_cmpxchg(u, old, nw);
        if (seen == old) break;
        old = seen;
    }
}
#define HAVE_ATOMIC_ADD 1
#endif

inline real combine(real alpha, real sum, real beta, __global const real *y, size_t i)
{
    if (beta == (real)0) return alpha * sum;
    return alpha * sum + beta * y[i];
}

/* y = beta*y, or 0 without reading y when beta == 0 (op = T, first step). */
__kernel void scale_y(const ulong n, const real beta, __global real *y)
{
    size_t i = get_global_id(0);
    if (i >= n) return;
    if (beta == (real)0)
        y[i] = (real)0;
    else
        y[i] = beta * y[i];
}

/* ---- CPU devices (PoCL): one work-item per part, a contiguous run of rows
 * with about equal nonzeros + rows. The work-group is one work-item, so
 * PoCL's work-group loop vanishes and the inner loop is a plain CSR loop. */

__kernel void csr_n_chunk(__global const uint *part, __global const ptr_t *rowptr,
                          __global const uint *colind, __global const real *val,
                          __global const real *x, const real alpha, const real beta,
                          __global real *y)
{
    size_t g = get_global_id(0);
    uint r0 = part[g], r1 = part[g + 1];
    if (beta == (real)0) {
        for (uint i = r0; i < r1; i++) {
            ptr_t k = rowptr[i], e = rowptr[i + 1];
            real s0 = 0, s1 = 0;
            /* two accumulators: halves the add latency chain */
            for (; k + 1 < e; k += 2) {
                s0 += val[k] * x[colind[k]];
                s1 += val[k + 1] * x[colind[k + 1]];
            }
            if (k < e) s0 += val[k] * x[colind[k]];
            y[i] = alpha * (s0 + s1);
        }
    } else {
        for (uint i = r0; i < r1; i++) {
            ptr_t k = rowptr[i], e = rowptr[i + 1];
            real s0 = 0, s1 = 0;
            for (; k + 1 < e; k += 2) {
                s0 += val[k] * x[colind[k]];
                s1 += val[k + 1] * x[colind[k + 1]];
            }
            if (k < e) s0 += val[k] * x[colind[k]];
            y[i] = alpha * (s0 + s1) + beta * y[i];
        }
    }
}

#ifdef HAVE_ATOMIC_ADD
/* Transposed scatter, after scale_y: y[j] += alpha*A[i,j]*x[i]. */
__kernel void csr_t_chunk(__global const uint *part, __global const ptr_t *rowptr,
                          __global const uint *colind, __global const real *val,
                          __global const real *x, const real alpha, __global real *y)
{
    size_t g = get_global_id(0);
    uint r0 = part[g], r1 = part[g + 1];
    for (uint i = r0; i < r1; i++) {
        real xi = alpha * x[i];
        for (ptr_t k = rowptr[i]; k < rowptr[i + 1]; k++)
            atomic_add_real(&y[colind[k]], val[k] * xi);
    }
}
#endif

/* ---- GPU devices: VL lanes per row, coalesced loads, reduction in local
 * memory (no sub-group functions in OpenCL 1.2). Rows longer than
 * long_len are skipped here and handled by a whole work-group each. */

__kernel __attribute__((reqd_work_group_size(LS, 1, 1))) void
csr_n_vector(const uint nrows, const uint vl, const ulong long_len, __global const ptr_t *rowptr,
             __global const uint *colind, __global const real *val, __global const real *x,
             const real alpha, const real beta, __global real *y)
{
    __local real part[LS];
    uint lid = get_local_id(0);
    uint lane = lid & (vl - 1);
    size_t row = get_global_id(0) / vl;
    real sum = 0;
    int active = 0;
    if (row < nrows) {
        ptr_t s = rowptr[row], e = rowptr[row + 1];
        if ((ulong)(e - s) <= long_len) {
            active = 1;
            for (ptr_t k = s + lane; k < e; k += vl) sum += val[k] * x[colind[k]];
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

/* One work-group per long row (rows listed in longrows). */
__kernel __attribute__((reqd_work_group_size(LS, 1, 1))) void
csr_n_long(__global const uint *longrows, __global const ptr_t *rowptr,
           __global const uint *colind, __global const real *val, __global const real *x,
           const real alpha, const real beta, __global real *y)
{
    __local real part[LS];
    uint lid = get_local_id(0);
    uint row = longrows[get_group_id(0)];
    ptr_t e = rowptr[row + 1];
    real sum = 0;
    for (ptr_t k = rowptr[row] + lid; k < e; k += LS) sum += val[k] * x[colind[k]];
    part[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint off = LS / 2; off > 0; off >>= 1) {
        if (lid < off) part[lid] += part[lid + off];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) y[row] = combine(alpha, part[0], beta, y, row);
}

#ifdef HAVE_ATOMIC_ADD
__kernel __attribute__((reqd_work_group_size(LS, 1, 1))) void
csr_t_vector(const uint nrows, const uint vl, const ulong long_len, __global const ptr_t *rowptr,
             __global const uint *colind, __global const real *val, __global const real *x,
             const real alpha, __global real *y)
{
    uint lane = get_local_id(0) & (vl - 1);
    size_t row = get_global_id(0) / vl;
    if (row >= nrows) return;
    ptr_t s = rowptr[row], e = rowptr[row + 1];
    if ((ulong)(e - s) > long_len) return;
    real xi = alpha * x[row];
    for (ptr_t k = s + lane; k < e; k += vl) atomic_add_real(&y[colind[k]], val[k] * xi);
}

__kernel __attribute__((reqd_work_group_size(LS, 1, 1))) void
csr_t_long(__global const uint *longrows, __global const ptr_t *rowptr,
           __global const uint *colind, __global const real *val, __global const real *x,
           const real alpha, __global real *y)
{
    uint row = longrows[get_group_id(0)];
    real xi = alpha * x[row];
    ptr_t e = rowptr[row + 1];
    for (ptr_t k = rowptr[row] + get_local_id(0); k < e; k += LS)
        atomic_add_real(&y[colind[k]], val[k] * xi);
}
#endif
