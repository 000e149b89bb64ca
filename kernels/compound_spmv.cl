/* Compound-entry SpMV, one source for OpenCL C (after common.cl) and CUDA
 * (NVRTC). Every variant is this file compiled with defines:
 *   IS_DOUBLE 0|1     scalar type float | double
 *   KIND 0..3         entry arithmetic: real, complex, quaternion (Hamilton,
 *                     entry on the left), 3x3 block times 3-vector
 *   EC, VC            scalar components of an entry / of a vector entry
 *   OUTER 0|1|2       CSR | ELLPACK-R (column-major, row lengths) | SELL
 *   SLICE 16|32       SELL slice height
 *   INNER_SOA 0|1     entry components AoS | SoA (component c at c*stored+idx)
 *   VEC_SOA 0|1       vector components AoS | SoA (component c at c*n+j)
 *   DYN 0|1           static (work-groups stride over chunks of rows) |
 *                     dynamic (chunks taken from an atomic counter)
 *                     (both given: one kernel "compound_spmv"; neither: the
 *                     four kernels compound_spmv_v<VEC_SOA>_d<DYN>)
 *   PTR64 0|1         64-bit CSR/SELL pointers
 *   NT, NB            (CUDA) __launch_bounds__(NT, NB)
 * A chunk is as many consecutive rows as the work-group has work-items, one
 * row per work-item. The products are those of core/compound/compound_ref.c, in the
 * same order. */

/* cs_t, i64, GLOBAL, LOCAL_DECL, LID and BARRIER come from the prelude
 * (common.cl) */
#if defined(__CUDACC__)
#ifdef NT
#define KERNEL extern "C" __global__ void __launch_bounds__(NT, NB)
#else
#define KERNEL extern "C" __global__ void
#endif
#define KERNEL_PLAIN extern "C" __global__ void
#define RESTRICT __restrict__
#define GROUP ((int)blockIdx.x)
#define NGROUPS ((int)gridDim.x)
#define LSIZE ((int)blockDim.x)
#define GLOBAL_ID ((i64)blockIdx.x * blockDim.x + threadIdx.x)
#define ATOMIC_INC(p) atomicAdd((p), 1u)
#else
#define KERNEL __kernel void
#define KERNEL_PLAIN __kernel void
#define RESTRICT restrict
#define GROUP ((int)get_group_id(0))
#define NGROUPS ((int)get_num_groups(0))
#define LSIZE ((int)get_local_size(0))
#define GLOBAL_ID ((i64)get_global_id(0))
#define ATOMIC_INC(p) atomic_inc(p)
#endif

#if PTR64
typedef i64 ptr_t;
#else
typedef int ptr_t;
#endif

#if INNER_SOA
#define ENTRY(q) val[(i64)(q)*stored + idx]
#else
#define ENTRY(q) val[idx * EC + (q)]
#endif
#define XV(q) (vs_ ? x[(i64)(q)*ncols + j] : x[(i64)j * VC + (q)])
#define YV(q) (*(vs_ ? &y[(i64)(q)*nrows + i] : &y[(i64)i * VC + (q)]))

/* Vector loads of a whole complex / quaternion (AoS entries and vectors:
 * an entry of 2 or 4 scalars starts at a multiple of its size, buffers are
 * aligned). OpenCL: vload2/vload4; CUDA: float2/float4/double2 loads. */
#if defined(__CUDACC__)
#if IS_DOUBLE
typedef double2 cs2_t;
#define VLOAD4(p, i, a, b, c, d)                                                                   \
    do {                                                                                           \
        const double2 u_ = reinterpret_cast<const double2 *>(p)[2 * (i)];                          \
        const double2 v_ = reinterpret_cast<const double2 *>(p)[2 * (i) + 1];                      \
        a = u_.x, b = u_.y, c = v_.x, d = v_.y;                                                    \
    } while (0)
#else
typedef float2 cs2_t;
#define VLOAD4(p, i, a, b, c, d)                                                                   \
    do {                                                                                           \
        const float4 u_ = reinterpret_cast<const float4 *>(p)[i];                                  \
        a = u_.x, b = u_.y, c = u_.z, d = u_.w;                                                    \
    } while (0)
#endif
#define VLOAD2(p, i, a, b)                                                                         \
    do {                                                                                           \
        const cs2_t u_ = reinterpret_cast<const cs2_t *>(p)[i];                                    \
        a = u_.x, b = u_.y;                                                                        \
    } while (0)
#else
#if IS_DOUBLE
typedef double2 cs2_t;
typedef double4 cs4_t;
#else
typedef float2 cs2_t;
typedef float4 cs4_t;
#endif
#define VLOAD2(p, i, a, b)                                                                         \
    do {                                                                                           \
        const cs2_t u_ = vload2((size_t)(i), (p));                                                 \
        a = u_.x, b = u_.y;                                                                        \
    } while (0)
#define VLOAD4(p, i, a, b, c, d)                                                                   \
    do {                                                                                           \
        const cs4_t u_ = vload4((size_t)(i), (p));                                                 \
        a = u_.x, b = u_.y, c = u_.z, d = u_.w;                                                    \
    } while (0)
#endif

/* Entry and x loads of 2 / 4 components in the variant's layouts. */
#if INNER_SOA
#define LOADA2(a0, a1) (a0 = ENTRY(0), a1 = ENTRY(1))
#define LOADA4(a0, a1, a2, a3) (a0 = ENTRY(0), a1 = ENTRY(1), a2 = ENTRY(2), a3 = ENTRY(3))
#else
#define LOADA2(a0, a1) VLOAD2(val, idx, a0, a1)
#define LOADA4(a0, a1, a2, a3) VLOAD4(val, idx, a0, a1, a2, a3)
#endif
#define LOADX2(b0, b1)                                                                             \
    do {                                                                                           \
        if (vs_)                                                                                   \
            b0 = XV(0), b1 = XV(1);                                                                \
        else                                                                                       \
            VLOAD2(x, j, b0, b1);                                                                  \
    } while (0)
#define LOADX4(b0, b1, b2, b3)                                                                     \
    do {                                                                                           \
        if (vs_)                                                                                   \
            b0 = XV(0), b1 = XV(1), b2 = XV(2), b3 = XV(3);                                        \
        else                                                                                       \
            VLOAD4(x, j, b0, b1, b2, b3);                                                          \
    } while (0)

/* One row: acc[0..VC) = sum over the row's entries of a * x_j. */
#define ROW_BODY()                                                                                 \
    do {                                                                                           \
        const int j = col[idx];                                                                    \
        if (KIND == 0) {                                                                           \
            acc0 += ENTRY(0) * XV(0);                                                              \
        } else if (KIND == 1) {                                                                    \
            cs_t a0, a1, b0, b1;                                                                   \
            LOADA2(a0, a1);                                                                        \
            LOADX2(b0, b1);                                                                        \
            acc0 += a0 * b0 - a1 * b1;                                                             \
            acc1 += a0 * b1 + a1 * b0;                                                             \
        } else if (KIND == 2) {                                                                    \
            cs_t a0, a1, a2, a3, b0, b1, b2, b3;                                                   \
            LOADA4(a0, a1, a2, a3);                                                                \
            LOADX4(b0, b1, b2, b3);                                                                \
            acc0 += a0 * b0 - a1 * b1 - a2 * b2 - a3 * b3;                                         \
            acc1 += a0 * b1 + a1 * b0 + a2 * b3 - a3 * b2;                                         \
            acc2 += a0 * b2 - a1 * b3 + a2 * b0 + a3 * b1;                                         \
            acc3 += a0 * b3 + a1 * b2 - a2 * b1 + a3 * b0;                                         \
        } else {                                                                                   \
            const cs_t b0 = XV(0), b1 = XV(1), b2 = XV(2);                                         \
            acc0 += ENTRY(0) * b0 + ENTRY(1) * b1 + ENTRY(2) * b2;                                 \
            acc1 += ENTRY(3) * b0 + ENTRY(4) * b1 + ENTRY(5) * b2;                                 \
            acc2 += ENTRY(6) * b0 + ENTRY(7) * b1 + ENTRY(8) * b2;                                 \
        }                                                                                          \
    } while (0)

#define STORE(q, a) YV(q) = beta_zero ? alpha * (a) : alpha * (a) + beta * YV(q)

#define DO_ROW(i, VS)                                                                              \
    do {                                                                                           \
        const int vs_ = (VS); /* the vector layout, read by XV and YV */                           \
        cs_t acc0 = 0, acc1 = 0, acc2 = 0, acc3 = 0;                                               \
        if (OUTER == 0) {                                                                          \
            const i64 k1 = (i64)ptr[(i) + 1];                                                      \
            for (i64 idx = (i64)ptr[i]; idx < k1; idx++)                                           \
                ROW_BODY();                                                                      \
        } else if (OUTER == 1) {                                                                   \
            const int n = len[i];                                                                  \
            i64 idx = (i64)(i);                                                                    \
            for (int t = 0; t < n; t++, idx += ld)                                                 \
                ROW_BODY();                                                                      \
        } else {                                                                                   \
            const int n = len[i];                                                                  \
            i64 idx = (i64)ptr[(i) / SLICE] + (i) % SLICE;                                         \
            for (int t = 0; t < n; t++, idx += SLICE)                                              \
                ROW_BODY();                                                                      \
        }                                                                                          \
        STORE(0, acc0);                                                                            \
        if (VC > 1) STORE(1, acc1);                                                                \
        if (VC > 2) STORE(2, acc2);                                                                \
        if (VC > 3) STORE(3, acc3);                                                                \
    } while (0)

/* The SpMV kernel of vector layout VS and schedule DY. */
#define SPMV_KERNEL(NAME, VS, DY)                                                                  \
    KERNEL NAME(const int nrows, GLOBAL const ptr_t *RESTRICT ptr,                                 \
                GLOBAL const int *RESTRICT len, GLOBAL const int *RESTRICT col,                    \
                GLOBAL const cs_t *RESTRICT val, const i64 stored, const i64 ld,                   \
                GLOBAL const cs_t *RESTRICT x, const int ncols, GLOBAL cs_t *RESTRICT y,           \
                const cs_t alpha, const cs_t beta, const int beta_zero, GLOBAL unsigned *counter,  \
                const int nchunks)                                                                 \
    {                                                                                              \
        LOCAL_DECL(int, chunk_sh);                                                                 \
        if (DY) {                                                                                  \
            for (;;) {                                                                             \
                if (LID == 0) chunk_sh = (int)ATOMIC_INC(counter);                                 \
                BARRIER();                                                                         \
                const int c = chunk_sh;                                                            \
                BARRIER();                                                                         \
                if (c >= nchunks) break;                                                           \
                const int i = c * LSIZE + LID;                                                     \
                if (i < nrows) DO_ROW(i, VS);                                                      \
            }                                                                                      \
        } else {                                                                                   \
            for (int c = GROUP; c < nchunks; c += NGROUPS) {                                       \
                const int i = c * LSIZE + LID;                                                     \
                if (i < nrows) DO_ROW(i, VS);                                                      \
            }                                                                                      \
        }                                                                                          \
    }

/* With VEC_SOA and DYN defined (CUDA: one kernel per compile, with its
 * launch bounds) only that kernel; otherwise all four in one program
 * (OpenCL: fewer builds). */
#if defined(VEC_SOA) && defined(DYN)
SPMV_KERNEL(compound_spmv, VEC_SOA, DYN)
#else
SPMV_KERNEL(compound_spmv_v0_d0, 0, 0)
SPMV_KERNEL(compound_spmv_v0_d1, 0, 1)
SPMV_KERNEL(compound_spmv_v1_d0, 1, 0)
SPMV_KERNEL(compound_spmv_v1_d1, 1, 1)
#endif

/* Vector layout conversions: AoS (n entries of VC scalars) <-> SoA. */
KERNEL_PLAIN compound_vec_to_soa(const int n, GLOBAL const cs_t *RESTRICT src,
                                 GLOBAL cs_t *RESTRICT dst)
{
    const i64 g = GLOBAL_ID;
    if (g < (i64)n * VC) dst[(g % VC) * n + g / VC] = src[g];
}

KERNEL_PLAIN compound_vec_to_aos(const int n, GLOBAL const cs_t *RESTRICT src,
                                 GLOBAL cs_t *RESTRICT dst)
{
    const i64 g = GLOBAL_ID;
    if (g < (i64)n * VC) dst[g] = src[(g % VC) * n + g / VC];
}
