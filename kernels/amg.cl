/* Smoothed-aggregation AMG's setup on the device (core/amg/amg_dev.c), the
 * host's loops of core/amg/amg_aggregate.c and amg_setup.c one row per
 * work-item, so that the aggregates are the host's and, in f64, the
 * prolongators' bits too (no contraction into fused multiply-adds). Built
 * with GS (the work-group). Counts are u32 (atomic increments); row
 * pointers come from kernels/scan.cl. */
#if defined(__CUDACC__)
#define KERNEL extern "C" __global__ void __launch_bounds__(GS)
#define FN static __device__ __forceinline__
#define GROUP ((i64)blockIdx.x)
#define GLOBAL_ID ((i64)blockIdx.x * blockDim.x + threadIdx.x)
#define INC_G(p) atomicAdd((p), 1u)
#define ADD_G(p, v) atomicAdd((p), (v))
#define MAX_G(p, v) atomicMax((p), (v))
#if IS_DOUBLE
#define MUL(x, y) __dmul_rn((x), (y))
#define DIV(x, y) __ddiv_rn((x), (y))
#else
#define MUL(x, y) __fmul_rn((x), (y))
#define DIV(x, y) __fdiv_rn((x), (y))
#endif
#else
#pragma OPENCL FP_CONTRACT OFF
#define KERNEL __kernel __attribute__((reqd_work_group_size(GS, 1, 1))) void
#define FN static inline
#define GROUP ((i64)get_group_id(0))
#define GLOBAL_ID ((i64)get_global_id(0))
#define INC_G(p) atomic_inc((volatile __global uint *)(p))
#define ADD_G(p, v) atomic_add((volatile __global uint *)(p), (v))
#define MAX_G(p, v) atomic_max((volatile __global uint *)(p), (v))
#define MUL(x, y) ((x) * (y))
#define DIV(x, y) ((x) / (y))
#endif

#define ABS(x) ((x) < 0 ? -(x) : (x))

/* ---- the diagonal (AMG's levels, Jacobi, l1-Jacobi, Chebyshev): d[i] the
 * sum of row i's diagonal entries; with want_l1, l1[i] the row's l1 value
 * (sum_j |a_ij| with a_ii's sign: a_ii + off or a_ii - off, off where
 * a_ii = 0, 1 for an empty row; l1 may be d); per work-group the largest
 * 1 + sum_j |a_ij| / a_ii (Gershgorin's bound of rho(D^-1 A)), the first
 * row whose diagonal is not positive and the first whose diagonal is zero
 * (n: none) */
KERNEL amg_diag(const i64 n, GLOBAL const i64 *ptr, GLOBAL const int *col,
                GLOBAL const real *val, GLOBAL real *d, GLOBAL real *l1, const int want_l1,
                GLOBAL real *gmax, GLOBAL i64 *gbad)
{
    LOCAL_DECL(real, sm[GS]);
    LOCAL_DECL(i64, sb[GS]);
    LOCAL_DECL(i64, sz[GS]);
    const i64 i = GLOBAL_ID;
    real r = 0;
    i64 bad = n, zero = n;
    if (i < n) {
        real di = 0, off = 0;
        for (i64 k = ptr[i]; k < ptr[i + 1]; k++)
            if (col[k] == i)
                di += val[k];
            else
                off += ABS(val[k]);
        d[i] = di;
        if (want_l1) l1[i] = di > 0 ? di + off : di < 0 ? di - off : off > 0 ? off : (real)1;
        if (di == 0) zero = i;
        if (!(di > 0))
            bad = i;
        else
            r = 1 + DIV(off, di);
    }
    sm[LID] = r, sb[LID] = bad, sz[LID] = zero;
    BARRIER();
    for (int s = GS / 2; s > 0; s >>= 1) {
        if (LID < s) {
            if (sm[LID + s] > sm[LID]) sm[LID] = sm[LID + s];
            if (sb[LID + s] < sb[LID]) sb[LID] = sb[LID + s];
            if (sz[LID + s] < sz[LID]) sz[LID] = sz[LID + s];
        }
        BARRIER();
    }
    if (LID == 0) gmax[GROUP] = sm[0], gbad[2 * GROUP] = sb[0], gbad[2 * GROUP + 1] = sz[0];
}

/* ---- the strength graph: j != i strong for i when a_ij != 0 and
 * a_ij^2 >= theta^2 |a_ii| |a_jj|, entered in rows i and j both (the
 * graph made undirected; repeats kept, the aggregation does not see them) */
FN bool strong(i64 i, int j, real v, real t2, GLOBAL const real *d)
{
    return j != i && v != 0 && MUL(v, v) >= MUL(MUL(t2, ABS(d[i])), ABS(d[j]));
}

KERNEL amg_scount(const i64 n, GLOBAL const i64 *ptr, GLOBAL const int *col,
                  GLOBAL const real *val, GLOBAL const real *d, const real t2, GLOBAL u32 *cnt)
{
    const i64 i = GLOBAL_ID;
    if (i >= n) return;
    u32 own = 0;
    for (i64 k = ptr[i]; k < ptr[i + 1]; k++)
        if (strong(i, col[k], val[k], t2, d)) own++, INC_G(&cnt[col[k]]);
    if (own) ADD_G(&cnt[i], own);
}

KERNEL amg_sfill(const i64 n, GLOBAL const i64 *ptr, GLOBAL const int *col,
                 GLOBAL const real *val, GLOBAL const real *d, const real t2,
                 GLOBAL const i64 *sptr, GLOBAL u32 *fill, GLOBAL int *sidx)
{
    const i64 i = GLOBAL_ID;
    if (i >= n) return;
    for (i64 k = ptr[i]; k < ptr[i + 1]; k++) {
        const int j = col[k];
        if (!strong(i, j, val[k], t2, d)) continue;
        sidx[sptr[i] + INC_G(&fill[i])] = j;
        sidx[sptr[j] + INC_G(&fill[j])] = (int)i;
    }
}

/* ---- nodes of b rows (amg_dev.c's node_strength): A's values squared,
 * E (n x n/b, row i a 1 in column i / b) and E^T, for N = E^T (A.^2) E;
 * then the node aggregates into rows' (the host's hispi_amg_expand) */
KERNEL amg_square(const i64 nnz, GLOBAL const real *val, GLOBAL real *sq)
{
    const i64 k = GLOBAL_ID;
    if (k < nnz) sq[k] = MUL(val[k], val[k]);
}

/* n + 1 work-items (n a multiple of b) */
KERNEL amg_collapse(const i64 n, const int b, GLOBAL i64 *eptr, GLOBAL int *ecol,
                    GLOBAL real *eval, GLOBAL i64 *tptr, GLOBAL int *tcol, GLOBAL real *tval)
{
    const i64 i = GLOBAL_ID;
    if (i > n) return;
    eptr[i] = i;
    if (i % b == 0) tptr[i / b] = i;
    if (i == n) return;
    ecol[i] = (int)(i / b), eval[i] = 1;
    tcol[i] = (int)i, tval[i] = 1;
}

KERNEL amg_expand(const i64 n, const int b, GLOBAL const int *nagg, GLOBAL int *agg)
{
    const i64 i = GLOBAL_ID;
    if (i >= n) return;
    const int a = nagg[i / b];
    agg[i] = a < 0 ? -1 : a * b + (int)(i % b);
}

/* ---- distance-2 maximal independent set by Luby's rounds ---------------- */
#define OUT 0
#define UNDECIDED 1
#define IN 2

FN u64 mix(u64 z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* hispi_amg_hash, and hispi_amg_prio: its top 62 bits */
FN u64 hash64(u64 seed, int i)
{
    return mix(seed ^ mix((u64)(i64)i + 0x9e3779b97f4a7c15ull));
}

FN u64 prio(u64 seed, int i)
{
    return hash64(seed, i) >> 2;
}

/* the states, and the priorities hashed once (64-bit multiplies are slow on
 * GPUs; the rounds compare each several times) */
KERNEL amg_mis_init(const i64 n, GLOBAL const i64 *sptr, const i64 seed, GLOBAL u8 *st,
                    GLOBAL u64 *pr, GLOBAL u32 *act)
{
    const i64 i = GLOBAL_ID;
    if (i >= n) return;
    st[i] = sptr[i + 1] == sptr[i] ? OUT : UNDECIDED;
    pr[i] = prio((u64)seed, (int)i);
    act[i] = 0u;
}

/* best[i]: the node above every other of from({i} and i's neighbours);
 * from NULL-like (first = 1): the nodes themselves. Only where the round
 * needs it: the first pass at the nodes act marks for the round (the
 * undecided and their neighbours), the second at the undecided (the late
 * rounds had swept every node for a few undecided ones). */
KERNEL amg_spread(const i64 n, GLOBAL const i64 *sptr, GLOBAL const int *sidx,
                  GLOBAL const u8 *st, GLOBAL const u64 *pr, const int first,
                  GLOBAL const int *from, GLOBAL int *best, GLOBAL const u32 *act, const int rnd)
{
    const i64 i = GLOBAL_ID;
    if (i >= n || (first ? act[i] != (u32)rnd : st[i] != UNDECIDED)) return;
    int b = first ? (int)i : from[i];
    u8 bs = st[b]; /* b's (state, priority) kept: each neighbour's loaded once */
    u64 bp = pr[b];
    for (i64 k = sptr[i]; k < sptr[i + 1]; k++) {
        const int c = first ? sidx[k] : from[sidx[k]];
        const u8 cs = st[c];
        if (cs < bs) continue;
        const u64 cp = pr[c];
        if (cs > bs || cp > bp || (cp == bp && c > b)) b = c, bs = cs, bp = cp;
    }
    best[i] = b;
}

/* one round's decisions from the last round's states; left counts the
 * nodes still undecided, which mark themselves and their neighbours in act
 * for the next round (rnd + 1; every writer writes that value) */
KERNEL amg_mis_update(const i64 n, GLOBAL const i64 *sptr, GLOBAL const int *sidx,
                      GLOBAL const u8 *st, GLOBAL const int *b2, GLOBAL u8 *nst, GLOBAL u32 *left,
                      GLOBAL u32 *act, const int rnd)
{
    const i64 i = GLOBAL_ID;
    if (i >= n) return;
    u8 s = st[i];
    if (s == UNDECIDED) {
        if (b2[i] == i) {
            s = IN;
        } else if (st[b2[i]] == IN) {
            s = OUT;
        } else {
            INC_G(left);
            act[i] = (u32)rnd + 1u;
            for (i64 k = sptr[i]; k < sptr[i + 1]; k++)
                act[sidx[k]] = (u32)rnd + 1u;
        }
    }
    nst[i] = s;
}

/* ---- aggregates: roots numbered in order (rnum: the scan of flags), their
 * neighbours join them, the others their neighbour's of the largest
 * priority; left counts nodes with neighbours still in none (none should
 * be: the set is maximal) */
KERNEL amg_flag_in(const i64 n, GLOBAL const u8 *st, GLOBAL u32 *flag)
{
    const i64 i = GLOBAL_ID;
    if (i < n) flag[i] = st[i] == IN;
}

KERNEL amg_join1(const i64 n, GLOBAL const i64 *sptr, GLOBAL const int *sidx,
                 GLOBAL const u8 *st, GLOBAL const i64 *rnum, GLOBAL int *b1)
{
    const i64 i = GLOBAL_ID;
    if (i >= n) return;
    int a = st[i] == IN ? (int)rnum[i] : -1;
    if (a < 0)
        for (i64 k = sptr[i]; k < sptr[i + 1]; k++)
            if (st[sidx[k]] == IN) a = (int)rnum[sidx[k]];
    b1[i] = a;
}

KERNEL amg_join2(const i64 n, GLOBAL const i64 *sptr, GLOBAL const int *sidx,
                 GLOBAL const u64 *pr, GLOBAL const int *b1, GLOBAL int *agg, GLOBAL u32 *left)
{
    const i64 i = GLOBAL_ID;
    if (i >= n) return;
    int a = b1[i];
    if (a < 0) {
        int best = -1;
        u64 pb = 0;
        for (i64 k = sptr[i]; k < sptr[i + 1]; k++) {
            const int j = sidx[k];
            if (b1[j] < 0) continue;
            const u64 pj = pr[j];
            if (best < 0 || pj > pb || (pj == pb && j > best)) best = j, pb = pj;
        }
        if (best >= 0) a = b1[best];
        if (a < 0 && sptr[i + 1] > sptr[i]) INC_G(left);
    }
    agg[i] = a;
}

/* ---- the tentative prolongator: size[a] nodes in aggregate a; flag[i]
 * one entry in row i; row i of P0 holds 1/sqrt(size) in column agg[i] */
KERNEL amg_p0_count(const i64 n, GLOBAL const int *agg, GLOBAL const u32 *w, const int has_w,
                    GLOBAL u32 *size, GLOBAL u32 *flag)
{
    const i64 i = GLOBAL_ID;
    if (i >= n) return;
    flag[i] = agg[i] >= 0;
    if (agg[i] >= 0) ADD_G(&size[agg[i]], has_w ? w[i] : 1u);
}

/* P0's entry of row i in aggregate a: sqrt(w_i / W_a) (the host's p0) */
FN real p0(GLOBAL const u32 *w, const int has_w, GLOBAL const u32 *size, const i64 i, const int a)
{
    return sqrt(DIV((real)(has_w ? w[i] : 1u), (real)size[a]));
}

KERNEL amg_p0_fill(const i64 n, GLOBAL const int *agg, GLOBAL const u32 *w, const int has_w,
                   GLOBAL const u32 *size, GLOBAL const i64 *ptr, GLOBAL int *col,
                   GLOBAL real *val)
{
    const i64 i = GLOBAL_ID;
    if (i >= n || agg[i] < 0) return;
    col[ptr[i]] = agg[i];
    val[ptr[i]] = p0(w, has_w, size, i, agg[i]);
}

/* ---- P = (I - omega D^-1 A) P0 over the pattern of A P0, in place of its
 * values: -omega / d_i * (A P0)_ij, plus P0's entry in column agg[i] */
KERNEL amg_smooth(const i64 n, GLOBAL const i64 *ptr, GLOBAL const int *col, GLOBAL real *val,
                  GLOBAL const real *d, const real omega, GLOBAL const int *agg,
                  GLOBAL const u32 *w, const int has_w, GLOBAL const u32 *size)
{
    const i64 i = GLOBAL_ID;
    if (i >= n) return;
    const real f = DIV(-omega, d[i]);
    for (i64 k = ptr[i]; k < ptr[i + 1]; k++) {
        real x = MUL(f, val[k]);
        if (agg[i] >= 0 && col[k] == agg[i]) x += p0(w, has_w, size, i, agg[i]);
        val[k] = x;
    }
}

/* ---- P = (I - omega D^-1 A) P0 in one pass over A (P0 one entry per row,
 * p0()): row i's columns are its neighbours' aggregates, at most APC of
 * them (else *bad, and the library's product makes A P0), summed in A's
 * order from the first product as the host's product sums (-0 + x = x),
 * then sorted: the bits of amg_smooth after that product. */
#define APC 48
KERNEL amg_ap_count(const i64 n, GLOBAL const i64 *aptr, GLOBAL const int *acol,
                    GLOBAL const int *agg, GLOBAL u32 *cnt, GLOBAL u32 *bad)
{
    const i64 i = GLOBAL_ID;
    if (i >= n) return;
    int c[APC];
    int m = 0;
    for (i64 k = aptr[i]; k < aptr[i + 1]; k++) {
        const int a = agg[acol[k]];
        if (a < 0) continue;
        int q = 0;
        while (q < m && c[q] != a) q++;
        if (q < m) continue;
        if (m == APC) {
            *bad = 1u;
            break;
        }
        c[m++] = a;
    }
    cnt[i] = (u32)m;
}

KERNEL amg_ap_fill(const i64 n, GLOBAL const i64 *aptr, GLOBAL const int *acol,
                   GLOBAL const real *aval, GLOBAL const int *agg, GLOBAL const u32 *w,
                   const int has_w, GLOBAL const u32 *size, GLOBAL const real *d,
                   const real omega, GLOBAL const i64 *ptr, GLOBAL int *col, GLOBAL real *val)
{
    const i64 i = GLOBAL_ID;
    if (i >= n) return;
    int c[APC];
    real v[APC];
    int m = 0;
    for (i64 k = aptr[i]; k < aptr[i + 1]; k++) {
        const int j = acol[k], a = agg[j];
        if (a < 0) continue;
        const real x = MUL(aval[k], p0(w, has_w, size, j, a));
        int q = 0;
        while (q < m && c[q] != a) q++;
        if (q < m) {
            v[q] += x;
        } else {
            c[m] = a, v[m] = x;
            m++;
        }
    }
    for (int q = 1; q < m; q++) /* columns in order */
        for (int r = q; r > 0 && c[r - 1] > c[r]; r--) {
            const int tc = c[r];
            const real tv = v[r];
            c[r] = c[r - 1], v[r] = v[r - 1];
            c[r - 1] = tc, v[r - 1] = tv;
        }
    const real f = DIV(-omega, d[i]);
    const int ai = agg[i];
    const i64 o = ptr[i];
    for (int q = 0; q < m; q++) {
        real x = MUL(f, v[q]);
        if (ai >= 0 && c[q] == ai) x += p0(w, has_w, size, i, ai);
        col[o + q] = c[q], val[o + q] = x;
    }
}

/* ---- the spectral estimate's start vector (hispi_amg_start_value) */
KERNEL amg_start(const i64 n, const i64 seed, GLOBAL real *v)
{
    const i64 i = GLOBAL_ID;
    if (i >= n) return;
    v[i] = (real)(hash64((u64)seed, (int)i) >> 40) * (real)1.1920928955078125e-7f - (real)1; /* 2^-23 */
}

/* ---- the V-cycle's fused updates (core/amg/amg_cycle.c) -----------------
 * The smoother's first step: r = r / d, e = s r, x = e (zero) or x + e. */
KERNEL amg_cheb0(const i64 n, GLOBAL real *r, GLOBAL const real *d, GLOBAL real *e,
                 GLOBAL real *x, const real s, const int zero)
{
    const i64 i = GLOBAL_ID;
    if (i >= n) return;
    const real ri = DIV(r[i], d[i]), ei = MUL(s, ri);
    r[i] = ri, e[i] = ei;
    x[i] = zero ? ei : x[i] + ei;
}

/* The others after t = A e: r = r - t / d, e = a r + b e, x = x + e. */
KERNEL amg_cheb(const i64 n, GLOBAL const real *t, GLOBAL const real *d, GLOBAL real *r,
                GLOBAL real *e, GLOBAL real *x, const real a, const real b)
{
    const i64 i = GLOBAL_ID;
    if (i >= n) return;
    const real ri = r[i] - DIV(t[i], d[i]), ei = MUL(a, ri) + MUL(b, e[i]);
    r[i] = ri, e[i] = ei;
    x[i] = x[i] + ei;
}

/* The coarsest level: x = M b, M (n x n, by columns) its operator's inverse. */
KERNEL amg_gemv(const i64 n, GLOBAL const real *m, GLOBAL const real *b, GLOBAL real *x)
{
    const i64 i = GLOBAL_ID;
    if (i >= n) return;
    real s = 0;
    for (i64 j = 0; j < n; j++)
        s += MUL(m[j * n + i], b[j]);
    x[i] = s;
}

/* ---- a device copy's 32-bit row pointers widened for the setup's reads */
KERNEL amg_ptr64(const i64 n1, GLOBAL const int *p32, GLOBAL i64 *p64)
{
    const i64 i = GLOBAL_ID;
    if (i < n1) p64[i] = (i64)p32[i];
}

#if IS_DOUBLE
/* ---- single-precision levels for an f64 system (core/amg/amg_single.c) */

/* A's entries narrowed to f32; *bad = 1 where a nonzero one is outside
 * [2^-64, 2^64] (f32 holds it, and the levels' products stay in range) */
KERNEL amg_narrow(const i64 n, GLOBAL const double *a, GLOBAL float *b, GLOBAL u32 *bad)
{
    const i64 i = GLOBAL_ID;
    if (i >= n) return;
    const double v = ABS(a[i]);
    b[i] = (float)a[i];
    if (v > 18446744073709551616.0 || (v != 0 && v < 5.42101086242752217e-20)) *bad = 1u;
}

/* The cycle's ends. *e (zeroed before): 2048 + the largest exponent of
 * b's entries (ilogb; 0: b = 0), by work-groups; b's f32 copy scaled by
 * 2^-e, exactly (the cycle is linear), so that a residual of any size
 * keeps f32's digits; x widened and scaled back by 2^e. */
KERNEL amg_bmax(const i64 n, GLOBAL const double *b, GLOBAL u32 *e)
{
    LOCAL_DECL(u32, sm[GS]);
    const i64 i = GLOBAL_ID;
    u32 m = 0;
    if (i < n && b[i] != 0) m = (u32)(2048 + ilogb(b[i]));
    sm[LID] = m;
    BARRIER();
    for (int s = GS / 2; s > 0; s >>= 1) {
        if (LID < s && sm[LID + s] > sm[LID]) sm[LID] = sm[LID + s];
        BARRIER();
    }
    if (LID == 0 && sm[0]) MAX_G(e, sm[0]);
}

KERNEL amg_bnarrow(const i64 n, GLOBAL const double *b, GLOBAL float *c, GLOBAL const u32 *e)
{
    const i64 i = GLOBAL_ID;
    if (i < n) c[i] = (float)ldexp(b[i], *e ? 2048 - (int)*e : 0);
}

KERNEL amg_xwiden(const i64 n, GLOBAL const float *c, GLOBAL double *x, GLOBAL const u32 *e)
{
    const i64 i = GLOBAL_ID;
    if (i < n) x[i] = ldexp((double)c[i], *e ? (int)*e - 2048 : 0);
}
#endif
