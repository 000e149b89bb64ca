/* Row pointers from counts on the device (core/ops/scan_dev.c): ptr[0] = 0,
 * ptr[i + 1] = cnt[0] + ... + cnt[i] (64-bit), counts of CNT_T (i64 or
 * u32), in chunks of CH counts (SPER per work-item): scan_part sums each
 * chunk into part[g], scan_top (one work-group) turns the parts into their
 * exclusive prefix sums, scan_out writes each chunk's pointers. Built with
 * GS (the work-group) and CNT_T. */
#if defined(__CUDACC__)
#define KERNEL extern "C" __global__ void __launch_bounds__(GS)
#define FN static __device__ __forceinline__
#define LQ
#define GROUP ((i64)blockIdx.x)
#else
#define KERNEL __kernel __attribute__((reqd_work_group_size(GS, 1, 1))) void
#define FN static inline
#define LQ __local
#define GROUP ((i64)get_group_id(0))
#endif

#define SPER 16
#define CH ((i64)GS * SPER)

/* The exclusive prefix sum of v over the work-group; *total the sum. */
FN i64 group_scan(LQ i64 *sc, i64 v, i64 *total)
{
    sc[LID] = v;
    BARRIER();
    for (int d = 1; d < GS; d <<= 1) {
        const i64 t = LID >= d ? sc[LID - d] : 0;
        BARRIER();
        sc[LID] += t;
        BARRIER();
    }
    const i64 r = sc[LID] - v;
    *total = sc[GS - 1];
    BARRIER();
    return r;
}

KERNEL scan_part(const i64 m, GLOBAL const CNT_T *cnt, GLOBAL i64 *part)
{
    LOCAL_DECL(i64, sc[GS]);
    i64 s = 0, total;
    for (i64 k = GROUP * CH + LID; k < m && k < (GROUP + 1) * CH; k += GS)
        s += (i64)cnt[k];
    (void)group_scan(sc, s, &total);
    if (LID == 0) part[GROUP] = total;
}

KERNEL scan_top(const i64 np, GLOBAL i64 *part)
{
    LOCAL_DECL(i64, sc[GS]);
    const i64 per = (np + GS - 1) / GS, k0 = LID * per;
    const i64 k1 = k0 + per < np ? k0 + per : np;
    i64 s = 0, total;
    for (i64 k = k0; k < k1; k++)
        s += part[k];
    i64 off = group_scan(sc, s, &total);
    for (i64 k = k0; k < k1; k++) {
        const i64 v = part[k];
        part[k] = off;
        off += v;
    }
}

KERNEL scan_out(const i64 m, GLOBAL const CNT_T *cnt, GLOBAL const i64 *part, GLOBAL i64 *ptr)
{
    LOCAL_DECL(i64, sc[GS]);
    const i64 k0 = GROUP * CH + (i64)LID * SPER;
    const i64 k1 = k0 + SPER < m ? k0 + SPER : m;
    i64 s = 0, total;
    for (i64 k = k0; k < k1; k++)
        s += (i64)cnt[k];
    i64 off = part[GROUP] + group_scan(sc, s, &total);
    for (i64 k = k0; k < k1; k++) {
        off += (i64)cnt[k];
        ptr[k + 1] = off;
    }
    if (GROUP == 0 && LID == 0) ptr[0] = 0;
}
