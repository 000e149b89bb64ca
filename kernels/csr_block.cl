/* CSR SpMV for GPU devices, balanced blocks: y = alpha*op(A)*x + beta*y.
 * An OpenCL C 1.2 port of the CUDA backend's kernels (kernels_cuda/spmv.cu).
 *
 * The host cut the rows into blocks of about equal work (cl_csr_upload.c,
 * plan_blocks). A "stream" block holds up to CAP entries (16 KiB of
 * products) of up to ROWCAP consecutive rows: its NT work-items load the
 * entries with coalesced reads, multiply by x into local memory, then groups
 * of L lanes (L from the block's row count) sum each row. A row longer than
 * CAP/4 gets its own block(s): a whole work-group sums up to SPLIT entries of
 * it; longer rows are split into chunks whose partial sums csr_fixup adds.
 * No sub-group functions: lane groups reduce through local memory with
 * barriers (L is uniform in a work-group, so every barrier is reached by all).
 *
 * Built with:
 *   VALUE_T float | double, IS_DOUBLE 0 | 1, PTR_T uint | ulong (row pointers)
 *   IDX64   0 | 1 (64-bit column indices), IDX_BASE 0 | 1 (index base)
 *   ATOM64  1 when cl_khr_int64_base_atomics is available (f64 scatter)
 *   NV_ASM  on NVIDIA's platform, inline PTX: >= 1 streaming loads
 *           (ld.global.cs) for colind/values and read-only loads for x, as
 *           the CUDA kernels do; 2 also native float/double atomic adds
 *           (red.global.add) for the op = T fallback; 0 elsewhere
 * NT, ROWCAP, STAGE_BYTES and SPLIT must match cl_csr.h. */
typedef PTR_T ptr_t;
/* column indices: uint, or ulong for wrapped 64-bit ones; IDX_BASE 1 for
 * 1-based wrapped arrays (read in place, rebased here) */
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
#define RP(i) ((long)rowptr[i] - IDX_BASE)

#define NT 256
#define ROWCAP 1024
#define RPT (ROWCAP / NT)
#define CAP (STAGE_BYTES / (int)sizeof(real))
#define PER (CAP / NT)
/* staged index k -> padded slot: one entry skipped per 128 bytes, so that
 * work-items summing rows of any common length hit distinct banks */
#if IS_DOUBLE
#define SHIFT 4
#else
#define SHIFT 5
#endif
#define PADDED (CAP + (CAP >> SHIFT))
#define PAD(k) ((k) + ((k) >> SHIFT))
#define STREAM (-2)

/* One work-group's work (layout shared with the host's hisp_cl_block). */
typedef struct {
    long k0, k1;
    int row0, row1, slot, pad;
} block_t;

#if NV_ASM
idx_t ld_col(__global const idx_t *p)
{
    idx_t v;
#if IDX64
    asm("ld.global.cs.u64 %0, [%1];" : "=l"(v) : "l"(p));
#else
    asm("ld.global.cs.u32 %0, [%1];" : "=r"(v) : "l"(p));
#endif
    return v;
}
#if IS_DOUBLE
real ld_val(__global const real *p)
{
    real v;
    asm("ld.global.cs.f64 %0, [%1];" : "=d"(v) : "l"(p));
    return v;
}
real ld_x(__global const real *p)
{
    real v;
    asm("ld.global.nc.f64 %0, [%1];" : "=d"(v) : "l"(p));
    return v;
}
#else
real ld_val(__global const real *p)
{
    real v;
    asm("ld.global.cs.f32 %0, [%1];" : "=f"(v) : "l"(p));
    return v;
}
real ld_x(__global const real *p)
{
    real v;
    asm("ld.global.nc.f32 %0, [%1];" : "=f"(v) : "l"(p));
    return v;
}
#endif
#define LD_COL(p) (ld_col(p) - IDX_BASE)
#define LD_VAL(p) ld_val(p)
#define LD_X(p) ld_x(p)
#else
#define LD_COL(p) (*(p) - IDX_BASE)
#define LD_VAL(p) (*(p))
#define LD_X(p) (*(p))
#endif

real combine_y(real alpha, real sum, real beta, __global real *y, int r)
{
    return beta != (real)0 ? alpha * sum + beta * y[r] : alpha * sum;
}

/* Sum of v over the work-group; valid in work-item 0. */
real group_sum(real v, __local real *red)
{
    const int t = get_local_id(0);
    red[t] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int o = NT / 2; o > 0; o >>= 1) {
        if (t < o) red[t] += red[t + o];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return red[0];
}

__kernel __attribute__((reqd_work_group_size(NT, 1, 1))) void
csr_n_block(__global const ptr_t *restrict rowptr, __global const idx_t *restrict col,
            __global const real *restrict val, __global const block_t *restrict blocks,
            __global const real *restrict x, __global real *restrict y,
            __global real *restrict partial, const real alpha, const real beta)
{
    __local real sh[PADDED];
    __local real red[NT];
    const block_t b = blocks[get_group_id(0)];
    const int t = get_local_id(0);

    if (b.slot != STREAM) { /* (part of) one long row, the whole work-group */
        real a0 = 0, a1 = 0, a2 = 0, a3 = 0;
        long k = b.k0 + t;
        const long e = b.k1;
        for (; k + 3 * NT < e; k += 4 * NT) {
            const idx_t c0 = LD_COL(col + k), c1 = LD_COL(col + k + NT),
                       c2 = LD_COL(col + k + 2 * NT), c3 = LD_COL(col + k + 3 * NT);
            const real v0 = LD_VAL(val + k), v1 = LD_VAL(val + k + NT),
                       v2 = LD_VAL(val + k + 2 * NT), v3 = LD_VAL(val + k + 3 * NT);
            a0 += v0 * LD_X(x + c0);
            a1 += v1 * LD_X(x + c1);
            a2 += v2 * LD_X(x + c2);
            a3 += v3 * LD_X(x + c3);
        }
        for (; k < e; k += NT)
            a0 += LD_VAL(val + k) * LD_X(x + LD_COL(col + k));
        const real sum = group_sum((a0 + a1) + (a2 + a3), red);
        if (t == 0) {
            if (b.slot >= 0)
                partial[b.slot] = sum;
            else
                y[b.row0] = combine_y(alpha, sum, beta, y, b.row0);
        }
        return;
    }

    /* stream: groups of L lanes per row, L = min(32, largest power of two
     * with L*R <= NT); with more rows than work-items (L = 1) an item sums up
     * to RPT rows. Row bounds are loaded first so that their latency overlaps
     * the staging loads. */
    const long base = b.k0;
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
            s[j] = (int)(RP(b.row0 + i) - base);
            e[j] = (int)(RP(b.row0 + i + 1) - base);
        }
    }
    idx_t c[PER];
    real v[PER];
#pragma unroll
    for (int i = 0; i < PER; i++) {
        const int k = t + i * NT;
        c[i] = 0;
        v[i] = 0;
        if (k < E) {
            c[i] = LD_COL(col + base + k);
            v[i] = LD_VAL(val + base + k);
        }
    }
#pragma unroll
    for (int i = 0; i < PER; i++) {
        const int k = t + i * NT;
        if (k < E) sh[PAD(k)] = v[i] * LD_X(x + c[i]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (L == 1) { /* a work-item per row: no reduction */
#pragma unroll
        for (int j = 0; j < RPT; j++) {
            const int i = g + j * G;
            if (i < R) {
                real sum = 0;
                for (int k = s[j]; k < e[j]; k++)
                    sum += sh[PAD(k)];
                y[b.row0 + i] = combine_y(alpha, sum, beta, y, b.row0 + i);
            }
        }
        return;
    }
    /* L > 1: R <= NT / 2, one row per lane group (j = 0) */
    real sum = 0;
    for (int k = s[0] + lane; k < e[0]; k += L)
        sum += sh[PAD(k)];
    red[t] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int o = L >> 1; o > 0; o >>= 1) {
        if (lane < o) red[t] += red[t + o];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lane == 0 && g < R) y[b.row0 + g] = combine_y(alpha, red[t], beta, y, b.row0 + g);
}

/* Rows split into chunks: a work-item per row adds its partial sums
 * (split: row, first slot, count, pad). */
__kernel void csr_fixup(const uint n, __global const int4 *restrict split,
                        __global const real *restrict partial, const real alpha, const real beta,
                        __global real *restrict y)
{
    const size_t w = get_global_id(0);
    if (w >= n) return;
    const int4 sp = split[w];
    real sum = 0;
    for (int i = 0; i < sp.z; i++)
        sum += partial[sp.y + i];
    y[sp.x] = combine_y(alpha, sum, beta, y, sp.x);
}

/* ---- op = T by atomics: the fallback when the transposed copy does not fit
 * on the device. y was scaled by beta first (scale_y
 * of csr_spmv.cl). OpenCL 1.2 has no float atomics: compare-exchange loops
 * on the bit pattern (64-bit ones need cl_khr_int64_base_atomics). */
#ifdef HAVE_ATOMIC_ADD
/* Scatter alpha*x[row]*a into y[col]; stream blocks find each entry's row by
 * binary search over the block's row pointers staged in local memory. */
__kernel __attribute__((reqd_work_group_size(NT, 1, 1))) void
csr_t_block(__global const ptr_t *restrict rowptr, __global const idx_t *restrict col,
            __global const real *restrict val, __global const block_t *restrict blocks,
            __global const real *restrict x, __global real *y, const real alpha)
{
    __local int ptr[ROWCAP + 1];
    const block_t b = blocks[get_group_id(0)];
    const int t = get_local_id(0);
    const int stream = b.slot == STREAM;
    const long base = b.k0;
    const int R = stream ? b.row1 - b.row0 : 0, E = stream ? (int)(b.k1 - base) : 0;
    for (int i = t; i <= R; i += NT)
        ptr[i] = stream ? (int)(RP(b.row0 + i) - base) : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!stream) {
        const real xv = alpha * x[b.row0];
        for (long k = b.k0 + t; k < b.k1; k += NT)
            atomic_add_real(y + (col[k] - IDX_BASE), val[k] * xv);
    }
    for (int k = t; k < E; k += NT) {
        int lo = 0, hi = R - 1; /* the last row with ptr[row] <= k */
        while (lo < hi) {
            const int mid = (lo + hi + 1) >> 1;
            if (ptr[mid] <= k)
                lo = mid;
            else
                hi = mid - 1;
        }
        atomic_add_real(y + (col[base + k] - IDX_BASE), val[base + k] * (alpha * x[b.row0 + lo]));
    }
}
#endif
