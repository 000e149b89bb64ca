/* ILU(0) / IC(0) on the device (core/ilu/ilu_device.c, ilu_apply.c). The
 * factors live in one CSR over the pattern (rows sorted, the diagonal in
 * each row at dpos[i]): L's strict lower part with a unit diagonal left
 * out, U's upper part with its diagonal. IS_COMPLEX: entries are pairs of
 * reals (re, im); the factorisation kernels are real only. Built with GS
 * (the work-group). */
#if defined(__CUDACC__)
#define KERNEL extern "C" __global__ void __launch_bounds__(GS)
#define FN static __device__ __forceinline__
#define GLOBAL_ID ((i64)blockIdx.x * blockDim.x + threadIdx.x)
#define INC_G(p) atomicAdd((p), 1u)
#define FINITE(x) isfinite(x)
#else
#define KERNEL __kernel __attribute__((reqd_work_group_size(GS, 1, 1))) void
#define FN static inline
#define GLOBAL_ID ((i64)get_global_id(0))
#define INC_G(p) atomic_inc((volatile __global uint *)(p))
#define FINITE(x) isfinite(x)
#endif

#define ABS(x) ((x) < 0 ? -(x) : (x))

/* Entries [lo, hi) of row i of the triangle: L below the diagonal, U
 * above it. */
#define TRI_RANGE(i)                                                                               \
    const i64 lo = upper ? dpos[i] + 1 : ptr[i];                                                   \
    const i64 hi = upper ? ptr[i + 1] : dpos[i]

/* ---- triangular solves ---------------------------------------------------------------------- */

#if IS_COMPLEX
/* (*re, *im) /= d[2 k] + i d[2 k + 1] */
FN void cdiv(real *re, real *im, GLOBAL const real *d, const i64 k)
{
    const real dr = d[2 * k], di = d[2 * k + 1], q = dr * dr + di * di;
    const real r = (*re * dr + *im * di) / q;
    *im = (*im * dr - *re * di) / q;
    *re = r;
}
#endif

/* y[i] = x[i] - sum_k t_ik yin[k] over row i of the triangle (upper: divided
 * by u_ii); scale: yin read as D^-1 yin (the upper sweeps' start). x or yin
 * may be y: x[i] is read first, y[i] written last, yin[i] not read. */
FN void tri_row(const i64 i, GLOBAL const i64 *ptr, GLOBAL const int *col, GLOBAL const i64 *dpos,
                GLOBAL const real *val, const int upper, const int scale, GLOBAL const real *x,
                GLOBAL const real *yin, GLOBAL real *y)
{
    TRI_RANGE(i);
#if IS_COMPLEX
    real sr = x[2 * i], si = x[2 * i + 1];
    for (i64 k = lo; k < hi; k++) {
        const i64 c = col[k];
        real yr = yin[2 * c], yi = yin[2 * c + 1];
        if (scale) cdiv(&yr, &yi, val, dpos[c]);
        const real vr = val[2 * k], vi = val[2 * k + 1];
        sr -= vr * yr - vi * yi;
        si -= vr * yi + vi * yr;
    }
    if (upper) cdiv(&sr, &si, val, dpos[i]);
    y[2 * i] = sr;
    y[2 * i + 1] = si;
#else
    real s = x[i];
    for (i64 k = lo; k < hi; k++) {
        const i64 c = col[k];
        s -= val[k] * (scale ? yin[c] / val[dpos[c]] : yin[c]);
    }
    y[i] = upper ? s / val[dpos[i]] : s;
#endif
}

/* y[i] = x[i] - sum_k t_ik y[k] (upper: divided by u_ii) for the m rows
 * rows[off ..] of one level: the rows they read are done. x may be y. */
KERNEL ilu_level(const i64 m, const i64 off, GLOBAL const int *rows, GLOBAL const i64 *ptr,
                 GLOBAL const int *col, GLOBAL const i64 *dpos, GLOBAL const real *val,
                 const int upper, GLOBAL const real *x, GLOBAL real *y)
{
    const i64 t = GLOBAL_ID;
    if (t < m) tri_row(rows[off + t], ptr, col, dpos, val, upper, 0, x, y, y);
}

/* One Jacobi sweep of T y = x over every row: y[i] = x[i] - sum_k t_ik
 * yold[k] (upper: divided by u_ii). first (upper): yold is the lower
 * solve's result, read as D^-1 yold (the sweeps' start). */
KERNEL ilu_sweep(const i64 n, GLOBAL const i64 *ptr, GLOBAL const int *col,
                 GLOBAL const i64 *dpos, GLOBAL const real *val, const int upper, const int first,
                 GLOBAL const real *x, GLOBAL const real *yold, GLOBAL real *y)
{
    const i64 i = GLOBAL_ID;
    if (i < n) tri_row(i, ptr, col, dpos, val, upper, upper && first, x, yold, y);
}

#if !IS_COMPLEX
/* ---- the factorisation: Chow and Patel's fixed-point sweeps ---------------------------------- */

/* Where column c sits in entries [lo, hi) (sorted), or -1. */
FN i64 find(GLOBAL const int *col, i64 lo, const i64 end, const int c)
{
    i64 hi = end;
    while (lo < hi) {
        const i64 m = lo + (hi - lo) / 2;
        if (col[m] < c)
            lo = m + 1;
        else
            hi = m;
    }
    return lo < end && col[lo] == c ? lo : -1;
}

/* A pivot kept, or replaced by 1e-3 r with its sign where |u| <= 1e-8 r
 * or not finite (IC: where it is not > 1e-8 r); *bad counts it. */
FN real pivot(real u, const real r, const int ic, int *bad)
{
    if (ic ? u > (real)1e-8 * r : ABS(u) > (real)1e-8 * r && FINITE(u)) return u;
    *bad = 1;
    return (u < 0 && !ic ? (real)-1e-3 : (real)1e-3) * r;
}

/* Per row: dpos (the diagonal's index), r (the largest |a_ij| of the row,
 * IC: of its lower part; 1 where 0), and in cnt[0] the rows whose columns
 * are not strictly ascending, lack the diagonal or (IC) have an entry above
 * the diagonal without its mirror: such a pattern is the host's to clean. */
KERNEL ilu_prep(const i64 n, GLOBAL const i64 *ptr, GLOBAL const int *col,
                GLOBAL const real *a, const int ic, GLOBAL i64 *dpos, GLOBAL real *r,
                GLOBAL u32 *cnt)
{
    const i64 i = GLOBAL_ID;
    if (i >= n) return;
    i64 d = -1;
    real m = 0;
    int bad = 0;
    for (i64 k = ptr[i]; k < ptr[i + 1]; k++) {
        const int c = col[k];
        if (k > ptr[i] && col[k - 1] >= c) bad = 1;
        if (c == i) d = k;
        if (!ic || c <= i) m = ABS(a[k]) > m ? ABS(a[k]) : m;
        if (ic && c > i && find(col, ptr[c], ptr[c + 1], (int)i) < 0) bad = 1;
    }
    if (d < 0) bad = 1;
    dpos[i] = d;
    r[i] = m > 0 && FINITE(m) ? m : 1;
    if (bad) INC_G(cnt);
}

/* The sweeps' start: l_ij = a_ij / u_jj, u_ij = a_ij, the diagonal
 * a_ii + sh r_i (pivots replaced). IC: the lower part only. */
KERNEL ilu_start(const i64 n, GLOBAL const i64 *ptr, GLOBAL const int *col,
                 GLOBAL const i64 *dpos, GLOBAL const real *a, GLOBAL const real *r,
                 const int ic, const real sh, GLOBAL real *v)
{
    const i64 i = GLOBAL_ID;
    if (i >= n) return;
    int bad = 0;
    const i64 hi = ic ? dpos[i] + 1 : ptr[i + 1];
    for (i64 k = ptr[i]; k < hi; k++) {
        const int j = col[k];
        if (j < i)
            v[k] = a[k] / pivot(a[dpos[j]] + sh * r[j], r[j], ic, &bad);
        else if (j == i)
            v[k] = pivot(a[k] + sh * r[i], r[i], ic, &bad);
        else
            v[k] = a[k];
    }
}

/* One sweep, vold -> v: for each entry (i, j) of the pattern
 *   s = a_ij - sum_{k < min(i, j)} l_ik u_kj,  l_ij = s / u_jj (j < i),
 *   u_ij = s (j >= i; the diagonal + sh r_i, its pivot replaced),
 * with u_kj found in row k (IC: u_kj = d_k l_jk, found in row j, over the
 * lower part only). last: cnt[1] counts the pivots replaced, cnt[2] the
 * entries that are not finite. */
KERNEL ilu_par(const i64 n, GLOBAL const i64 *ptr, GLOBAL const int *col,
               GLOBAL const i64 *dpos, GLOBAL const real *a, GLOBAL const real *r, const int ic,
               const real sh, GLOBAL real *v, GLOBAL const real *vold, const int last,
               GLOBAL u32 *cnt)
{
    const i64 i = GLOBAL_ID;
    if (i >= n) return;
    int bad = 0, inf = 0;
    const i64 hi = ic ? dpos[i] + 1 : ptr[i + 1];
    for (i64 e = ptr[i]; e < hi; e++) {
        const int j = col[e];
        const int lim = j < i ? j : (int)i;
        real s = a[e];
        for (i64 k = ptr[i]; k < dpos[i] && col[k] < lim; k++) {
            const int c = col[k];
            if (ic) {
                const i64 f = find(col, ptr[j], dpos[j], c);
                if (f >= 0) s -= vold[k] * vold[dpos[c]] * vold[f];
            } else {
                const i64 f = find(col, dpos[c] + 1, ptr[c + 1], j);
                if (f >= 0) s -= vold[k] * vold[f];
            }
        }
        if (j < i)
            s /= vold[dpos[j]];
        else if (j == i)
            s = pivot(s + sh * r[i], r[i], ic, &bad);
        if (!FINITE(s)) inf = 1;
        v[e] = s;
    }
    if (last && bad) INC_G(cnt + 1);
    if (last && inf) INC_G(cnt + 2);
}

/* IC(0): U = D L^T into the upper part, u_ij = d_i l_ji (the mirror's
 * place found in row j). */
KERNEL ilu_mirror(const i64 n, GLOBAL const i64 *ptr, GLOBAL const int *col,
                  GLOBAL const i64 *dpos, GLOBAL real *v)
{
    const i64 i = GLOBAL_ID;
    if (i >= n) return;
    const real d = v[dpos[i]];
    for (i64 e = dpos[i] + 1; e < ptr[i + 1]; e++) {
        const int j = col[e];
        v[e] = d * v[find(col, ptr[j], dpos[j], (int)i)];
    }
}
#endif
