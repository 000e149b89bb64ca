/* ILU(0) / IC(0) on the device (core/ilu/ilu_device.c, ilu_apply.c). The
 * factors live in one CSR over the pattern (rows sorted, the diagonal in
 * each row at dpos[i]): L's strict lower part with a unit diagonal left
 * out, U's upper part with its diagonal. IS_COMPLEX: entries are pairs of
 * reals (re, im), written once for both through the scalar sc. Built with
 * GS (the work-group). */
#if defined(__CUDACC__)
#define KERNEL extern "C" __global__ void __launch_bounds__(GS)
#define FN static __device__ __forceinline__
#define GLOBAL_ID ((i64)blockIdx.x * blockDim.x + threadIdx.x)
#define INC_G(p) atomicAdd((p), 1u)
#else
#define KERNEL __kernel __attribute__((reqd_work_group_size(GS, 1, 1))) void
#define FN static inline
#define GLOBAL_ID ((i64)get_global_id(0))
#define INC_G(p) atomic_inc((volatile __global uint *)(p))
#endif
#define FINITE(x) isfinite(x)

/* ---- the entries' scalar sc: real, or complex as (re, im) -------------------------------------- */

#if IS_COMPLEX
typedef struct {
    real re, im;
} sc;
FN sc sc_mk(const real re, const real im)
{
    sc z;
    z.re = re;
    z.im = im;
    return z;
}
FN sc sc_ld(GLOBAL const real *p, const i64 k) { return sc_mk(p[2 * k], p[2 * k + 1]); }
FN void sc_st(GLOBAL real *p, const i64 k, const sc z)
{
    p[2 * k] = z.re;
    p[2 * k + 1] = z.im;
}
FN real sc_re(const sc a) { return a.re; }
FN real sc_im(const sc a) { return a.im; }
FN sc sc_sub(const sc a, const sc b) { return sc_mk(a.re - b.re, a.im - b.im); }
FN sc sc_mul(const sc a, const sc b)
{
    return sc_mk(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
FN sc sc_conj(const sc a) { return sc_mk(a.re, -a.im); }
FN sc sc_div(const sc a, const sc b)
{
    const real q = b.re * b.re + b.im * b.im;
    return sc_mk((a.re * b.re + a.im * b.im) / q, (a.im * b.re - a.re * b.im) / q);
}
/* |a| without overflow in the squares */
FN real sc_abs(const sc a)
{
    const real x = a.re < 0 ? -a.re : a.re, y = a.im < 0 ? -a.im : a.im;
    const real m = x > y ? x : y;
    if (!(m > 0) || !FINITE(m)) return m;
    const real p = x / m, q = y / m;
    return m * sqrt(p * p + q * q);
}
#else
typedef real sc;
FN sc sc_mk(const real re, const real im)
{
    (void)im;
    return re;
}
FN sc sc_ld(GLOBAL const real *p, const i64 k) { return p[k]; }
FN void sc_st(GLOBAL real *p, const i64 k, const sc z) { p[k] = z; }
FN real sc_re(const sc a) { return a; }
FN real sc_im(const sc a)
{
    (void)a;
    return 0;
}
FN sc sc_sub(const sc a, const sc b) { return a - b; }
FN sc sc_mul(const sc a, const sc b) { return a * b; }
FN sc sc_conj(const sc a) { return a; }
FN sc sc_div(const sc a, const sc b) { return a / b; }
FN real sc_abs(const sc a) { return a < 0 ? -a : a; }
#endif
FN sc sc_scale(const sc a, const real s) { return sc_mk(sc_re(a) * s, sc_im(a) * s); }
FN sc sc_divr(const sc a, const real d) { return sc_mk(sc_re(a) / d, sc_im(a) / d); }
FN sc sc_addr(const sc a, const real x) { return sc_mk(sc_re(a) + x, sc_im(a)); }
FN int sc_fin(const sc a) { return FINITE(sc_re(a)) && FINITE(sc_im(a)); }

/* Entries [lo, hi) of row i of the triangle: L below the diagonal, U
 * above it. */
#define TRI_RANGE(i)                                                                               \
    const i64 lo = upper ? dpos[i] + 1 : ptr[i];                                                   \
    const i64 hi = upper ? ptr[i + 1] : dpos[i]

/* ---- triangular solves ---------------------------------------------------------------------- */

/* y[i] = x[i] - sum_k t_ik yin[k] over row i of the triangle (upper: divided
 * by u_ii); scale: yin read as D^-1 yin (the upper sweeps' start). x or yin
 * may be y: x[i] is read first, y[i] written last, yin[i] not read. */
FN void tri_row(const i64 i, GLOBAL const i64 *ptr, GLOBAL const int *col, GLOBAL const i64 *dpos,
                GLOBAL const real *val, const int upper, const int scale, GLOBAL const real *x,
                GLOBAL const real *yin, GLOBAL real *y)
{
    TRI_RANGE(i);
    sc s = sc_ld(x, i);
    for (i64 k = lo; k < hi; k++) {
        const i64 c = col[k];
        const sc yc = sc_ld(yin, c);
        s = sc_sub(s, sc_mul(sc_ld(val, k), scale ? sc_div(yc, sc_ld(val, dpos[c])) : yc));
    }
    sc_st(y, i, upper ? sc_div(s, sc_ld(val, dpos[i])) : s);
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

/* A pivot kept, or replaced (*bad set) as the host's (ilu_factor.c): ILU:
 * where |u| <= 1e-8 r or not finite, by 1e-3 r with u's sign (complex: its
 * phase); IC: the real part d kept where d > 1e-8 r, else 1e-3 r. */
FN sc pivot(const sc u, const real r, const int ic, int *bad)
{
    if (ic) {
        if (sc_re(u) > (real)1e-8 * r) return sc_mk(sc_re(u), 0);
        *bad = 1;
        return sc_mk((real)1e-3 * r, 0);
    }
    const real m = sc_abs(u);
    if (m > (real)1e-8 * r && FINITE(m)) return u;
    *bad = 1;
    const sc ph = m > 0 && FINITE(m) ? sc_divr(u, m) : sc_mk(1, 0);
    return sc_scale(ph, (real)1e-3 * r);
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
        const real x = sc_abs(sc_ld(a, k));
        if (!ic || c <= i) m = x > m ? x : m;
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
        sc x = sc_ld(a, k);
        if (j < i)
            x = sc_div(x, pivot(sc_addr(sc_ld(a, dpos[j]), sh * r[j]), r[j], ic, &bad));
        else if (j == i)
            x = pivot(sc_addr(x, sh * r[i]), r[i], ic, &bad);
        sc_st(v, k, x);
    }
}

/* One sweep, vold -> v: for each entry (i, j) of the pattern
 *   s = a_ij - sum_{k < min(i, j)} l_ik u_kj,  l_ij = s / u_jj (j < i),
 *   u_ij = s (j >= i; the diagonal + sh r_i, its pivot replaced),
 * with u_kj found in row k (IC: u_kj = d_k conj(l_jk), found in row j, over
 * the lower part only). last: cnt[1] counts the pivots replaced, cnt[2] the
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
        sc s = sc_ld(a, e);
        for (i64 k = ptr[i]; k < dpos[i] && col[k] < lim; k++) {
            const int c = col[k];
            if (ic) {
                const i64 f = find(col, ptr[j], dpos[j], c);
                if (f >= 0)
                    s = sc_sub(s, sc_mul(sc_scale(sc_ld(vold, k), sc_re(sc_ld(vold, dpos[c]))),
                                         sc_conj(sc_ld(vold, f))));
            } else {
                const i64 f = find(col, dpos[c] + 1, ptr[c + 1], j);
                if (f >= 0) s = sc_sub(s, sc_mul(sc_ld(vold, k), sc_ld(vold, f)));
            }
        }
        if (j < i)
            s = ic ? sc_divr(s, sc_re(sc_ld(vold, dpos[j]))) : sc_div(s, sc_ld(vold, dpos[j]));
        else if (j == i)
            s = pivot(sc_addr(s, sh * r[i]), r[i], ic, &bad);
        if (!sc_fin(s)) inf = 1;
        sc_st(v, e, s);
    }
    if (last && bad) INC_G(cnt + 1);
    if (last && inf) INC_G(cnt + 2);
}

/* IC(0): U = D L^H into the upper part, u_ij = d_i conj(l_ji) (the
 * mirror's place found in row j). */
KERNEL ilu_mirror(const i64 n, GLOBAL const i64 *ptr, GLOBAL const int *col,
                  GLOBAL const i64 *dpos, GLOBAL real *v)
{
    const i64 i = GLOBAL_ID;
    if (i >= n) return;
    const real d = sc_re(sc_ld(v, dpos[i]));
    for (i64 e = dpos[i] + 1; e < ptr[i + 1]; e++) {
        const int j = col[e];
        sc_st(v, e, sc_scale(sc_conj(sc_ld(v, find(col, ptr[j], dpos[j], (int)i))), d));
    }
}
