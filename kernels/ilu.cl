/* The triangular solves of ILU(0) / IC(0) (core/ilu/ilu_apply.c), level by
 * level: the rows of one level depend only on rows of earlier levels, so
 * each is one work-item, and a level is one launch. IS_COMPLEX: entries
 * are pairs of reals (re, im). Built with GS (the work-group). */
#if defined(__CUDACC__)
#define KERNEL extern "C" __global__ void __launch_bounds__(GS)
#define GLOBAL_ID ((i64)blockIdx.x * blockDim.x + threadIdx.x)
#else
#define KERNEL __kernel __attribute__((reqd_work_group_size(GS, 1, 1))) void
#define GLOBAL_ID ((i64)get_global_id(0))
#endif

/* y[i] = (x[i] - sum_k val[k] y[col[k]]) (upper: times dinv[i]) for the m
 * rows rows[off ..]; x may be y (the upper solve runs in place). */
KERNEL ilu_level(const i64 m, const i64 off, GLOBAL const int *rows, GLOBAL const i64 *ptr,
                 GLOBAL const int *col, GLOBAL const real *val, GLOBAL const real *dinv,
                 const int upper, GLOBAL const real *x, GLOBAL real *y)
{
    const i64 t = GLOBAL_ID;
    if (t >= m) return;
    const i64 i = rows[off + t];
#if IS_COMPLEX
    real sr = x[2 * i], si = x[2 * i + 1];
    for (i64 k = ptr[i]; k < ptr[i + 1]; k++) {
        const i64 c = col[k];
        const real vr = val[2 * k], vi = val[2 * k + 1], yr = y[2 * c], yi = y[2 * c + 1];
        sr -= vr * yr - vi * yi;
        si -= vr * yi + vi * yr;
    }
    if (upper) {
        const real dr = dinv[2 * i], di = dinv[2 * i + 1], r = sr * dr - si * di;
        si = sr * di + si * dr;
        sr = r;
    }
    y[2 * i] = sr;
    y[2 * i + 1] = si;
#else
    real s = x[i];
    for (i64 k = ptr[i]; k < ptr[i + 1]; k++)
        s -= val[k] * y[col[k]];
    y[i] = upper ? s * dinv[i] : s;
#endif
}
