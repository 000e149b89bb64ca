/* ILU(0) and IC(0) on the host in double (complex double for c32/c64):
 * the oracle of every backend, and their setup today.
 *
 * The pattern S is A's with each row sorted, duplicates summed and the
 * diagonal present (a missing one is filled with 0 and counted). ILU(0)
 * eliminates row by row over S (IKJ): a fill-in outside S is dropped. A
 * pivot |u_ii| <= PIVOT_TOL * r_i (r_i the largest |a_ij| of row i; 1 for
 * an empty row) or not finite is replaced by PIVOT_SET * r_i with the
 * pivot's sign (complex: its phase) and counted: the factors stay finite
 * where a zero pivot would end the factorisation. IC(0) (A ~ L D L^H over
 * the lower triangle) needs every d_i > 0: where one is not, it starts
 * again on A + s diag(r), s = 1e-3, 1e-2, ... up to 1e3 (Manteuffel's
 * shift), and reports s. */
#include "hispi_ilu.h"

#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PIVOT_TOL 1e-8
#define PIVOT_SET 1e-3
#define IC_SHIFT0 1e-3
#define IC_SHIFT_MAX 1e3

typedef double complex cplx;

void hispi_ilu_factors_free(hispi_ilu_factors *f)
{
    free(f->lp), free(f->up), free(f->lc), free(f->uc);
    free(f->lv), free(f->uv), free(f->d);
    memset(f, 0, sizeof *f);
}

/* The cleaned pattern: rows sorted, duplicates summed, the diagonal in
 * each row (lower: only columns <= i). */
typedef struct {
    int64_t n, *p, *dpos; /* dpos: the diagonal's index in each row */
    int32_t *c;
    cplx *v;
    double *r; /* r_i of the header */
} spat;

static void spat_free(spat *s)
{
    free(s->p), free(s->dpos), free(s->c), free(s->v), free(s->r);
    memset(s, 0, sizeof *s);
}

static cplx load(const hispi_sparse *a, int vc, bool dbl, int64_t k)
{
    double re = dbl ? ((const double *)a->val)[k * vc] : ((const float *)a->val)[k * vc];
    double im = vc < 2 ? 0
                : dbl  ? ((const double *)a->val)[k * vc + 1]
                       : ((const float *)a->val)[k * vc + 1];
    return CMPLX(re, im);
}

typedef struct {
    int32_t c;
    cplx v;
} centry;

static int by_col(const void *x, const void *y)
{
    int32_t a = ((const centry *)x)->c, b = ((const centry *)y)->c;
    return (a > b) - (a < b);
}

static hisp_status clean(hisp_context ctx, const hispi_sparse *a, bool lower, spat *s,
                         int64_t *filled)
{
    int vc = hisp_type_components(a->type);
    bool dbl = hispi_type_scalar_size(a->type) == 8;
    int64_t n = a->nrows, cap = 0;
    memset(s, 0, sizeof *s);
    s->n = n;
    centry *row = NULL;
    int64_t maxrow = 1; /* a row's entries and its diagonal */
    for (int64_t i = 0; i < n; i++) {
        int64_t m = a->rowptr[i + 1] - a->rowptr[i] + 1;
        cap += m;
        if (m > maxrow) maxrow = m;
    }
    hisp_status st = hispi_alloc(ctx, (size_t)n + 1, sizeof *s->p, (void **)&s->p);
    if (!st) st = hispi_alloc(ctx, (size_t)n + 1, sizeof *s->dpos, (void **)&s->dpos);
    if (!st) st = hispi_alloc(ctx, (size_t)n + 1, sizeof *s->r, (void **)&s->r);
    if (!st) st = hispi_alloc(ctx, (size_t)cap + 1, sizeof *s->c, (void **)&s->c);
    if (!st) st = hispi_alloc(ctx, (size_t)cap + 1, sizeof *s->v, (void **)&s->v);
    if (!st) st = hispi_alloc(ctx, (size_t)maxrow, sizeof *row, (void **)&row);
    if (st) {
        spat_free(s);
        return st;
    }
    int64_t q = 0;
    *filled = 0;
    s->p[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t m = 0;
        double r = 0;
        for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++) {
            if (lower && a->colind[k] > i) continue;
            row[m].c = a->colind[k], row[m].v = load(a, vc, dbl, k);
            m++;
        }
        qsort(row, (size_t)m, sizeof *row, by_col);
        s->dpos[i] = -1;
        for (int64_t k = 0; k < m; k++) {
            if (q > s->p[i] && s->c[q - 1] == row[k].c) {
                s->v[q - 1] += row[k].v;
                continue;
            }
            if (row[k].c > i && s->dpos[i] < 0) { /* the missing diagonal, in its place */
                s->dpos[i] = q, s->c[q] = (int32_t)i, s->v[q++] = 0;
                (*filled)++;
            }
            if (row[k].c == i) s->dpos[i] = q;
            s->c[q] = row[k].c, s->v[q++] = row[k].v;
        }
        if (s->dpos[i] < 0) {
            s->dpos[i] = q, s->c[q] = (int32_t)i, s->v[q++] = 0;
            (*filled)++;
        }
        s->p[i + 1] = q;
        for (int64_t k = s->p[i]; k < q; k++)
            r = fmax(r, cabs(s->v[k]));
        s->r[i] = r > 0 && isfinite(r) ? r : 1;
    }
    free(row);
    return HISP_SUCCESS;
}

/* A pivot kept, or replaced (true). */
static bool pivot(cplx *u, double r)
{
    double m = cabs(*u);
    if (m > PIVOT_TOL * r && isfinite(m)) return false;
    cplx ph = m > 0 && isfinite(m) ? *u / m : 1;
    *u = PIVOT_SET * r * ph;
    return true;
}

/* Chow and Patel's pivot of a sweep: ILU as pivot(); IC: a real d_i >
 * PIVOT_TOL r_i kept, else PIVOT_SET r_i (counted in *bad). */
static cplx sweep_pivot(cplx u, double r, bool ic, int64_t *bad)
{
    if (ic) {
        if (creal(u) > PIVOT_TOL * r) return creal(u);
        (*bad)++;
        return PIVOT_SET * r;
    }
    *bad += pivot(&u, r);
    return u;
}

/* Where column c sits in entries [lo, hi) of s (sorted), or -1. */
static int64_t find(const int32_t *col, int64_t lo, int64_t hi, int64_t c)
{
    int64_t end = hi;
    while (lo < hi) {
        int64_t m = lo + (hi - lo) / 2;
        if (col[m] < c)
            lo = m + 1;
        else
            hi = m;
    }
    return lo < end && col[lo] == c ? lo : -1;
}

/* Chow and Patel's fixed-point sweeps over s (ILU: the pattern; IC: its
 * lower part; the diagonal shifted by sh r_i), the device's algorithm
 * (kernels/ilu.cl ilu_start, ilu_par) in double: into v (w: scratch of
 * s's size); *bad the pivots the last sweep replaced; false where an entry
 * is not finite. */
static bool par_sweeps(const spat *s, bool ic, double sh, int sweeps, cplx *v, cplx *w,
                       int64_t *bad)
{
    int64_t n = s->n, b = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = s->p[i]; k < s->p[i + 1]; k++) {
            int64_t j = s->c[k];
            if (j < i)
                v[k] = s->v[k] / sweep_pivot(s->v[s->dpos[j]] + sh * s->r[j], s->r[j], ic, &b);
            else if (j == i)
                v[k] = sweep_pivot(s->v[k] + sh * s->r[i], s->r[i], ic, &b);
            else
                v[k] = s->v[k];
        }
    bool fin = true;
    for (int q = 0; q < sweeps; q++) {
        memcpy(w, v, (size_t)s->p[n] * sizeof *w);
        b = 0, fin = true;
        for (int64_t i = 0; i < n; i++)
            for (int64_t e = s->p[i]; e < s->p[i + 1]; e++) {
                int64_t j = s->c[e], lim = j < i ? j : i;
                cplx x = s->v[e];
                for (int64_t k = s->p[i]; k < s->dpos[i] && s->c[k] < lim; k++) {
                    int64_t c = s->c[k];
                    int64_t f = ic ? find(s->c, s->p[j], s->dpos[j], c)
                                   : find(s->c, s->dpos[c] + 1, s->p[c + 1], j);
                    if (f >= 0) x -= ic ? w[k] * creal(w[s->dpos[c]]) * conj(w[f]) : w[k] * w[f];
                }
                if (j < i)
                    x /= ic ? creal(w[s->dpos[j]]) : w[s->dpos[j]];
                else if (j == i)
                    x = sweep_pivot(x + sh * s->r[i], s->r[i], ic, &b);
                if (!isfinite(creal(x)) || !isfinite(cimag(x))) fin = false;
                v[e] = x;
            }
    }
    *bad = b;
    return fin;
}

/* ILU(0) in place over s (IKJ); pos: n entries of -1. */
static void ilu0(spat *s, int64_t *pos, int64_t *shifted)
{
    for (int64_t i = 0; i < s->n; i++) {
        for (int64_t k = s->p[i]; k < s->p[i + 1]; k++)
            pos[s->c[k]] = k;
        for (int64_t k = s->p[i]; k < s->dpos[i]; k++) {
            int64_t j = s->c[k];
            cplx l = s->v[k] /= s->v[s->dpos[j]];
            for (int64_t m = s->dpos[j] + 1; m < s->p[j + 1]; m++)
                if (pos[s->c[m]] >= 0) s->v[pos[s->c[m]]] -= l * s->v[m];
        }
        *shifted += pivot(&s->v[s->dpos[i]], s->r[i]);
        for (int64_t k = s->p[i]; k < s->p[i + 1]; k++)
            pos[s->c[k]] = -1;
    }
}

/* IC(0) as L D L^H over the lower pattern s (values a, shifted by sh * r
 * on the diagonal) into v (l_ij below, d_i on the diagonal); false where a
 * d_i is not positive. w: n entries of 0 (l_ij d_j of the row so far). */
static bool ic0(const spat *s, double sh, cplx *v, cplx *w)
{
    for (int64_t i = 0; i < s->n; i++) {
        double d = creal(s->v[s->dpos[i]]) + sh * s->r[i];
        for (int64_t k = s->p[i]; k < s->dpos[i]; k++) {
            int64_t j = s->c[k];
            cplx x = s->v[k];
            for (int64_t m = s->p[j]; m < s->dpos[j]; m++)
                x -= w[s->c[m]] * conj(v[m]);
            cplx l = x / creal(v[s->dpos[j]]);
            v[k] = l;
            w[j] = l * creal(v[s->dpos[j]]);
            d -= creal(l * conj(w[j]));
        }
        for (int64_t k = s->p[i]; k < s->dpos[i]; k++)
            w[s->c[k]] = 0;
        if (!(d > PIVOT_TOL * s->r[i]) || !isfinite(d)) return false;
        v[s->dpos[i]] = d;
    }
    return true;
}

static void put(double *dst, int vc, int64_t k, cplx v)
{
    dst[k * vc] = creal(v);
    if (vc > 1) dst[k * vc + 1] = cimag(v);
}

/* The factors' arrays from s (factorised in place into v): L the part
 * below the diagonal; U the part above (ILU) or D L^H (IC). */
static hisp_status split(hisp_context ctx, const spat *s, const cplx *v, bool ic,
                         hispi_ilu_factors *f)
{
    int vc = hisp_type_components(f->t);
    int64_t n = s->n, nl = 0, nu = 0;
    for (int64_t i = 0; i < n; i++) {
        nl += s->dpos[i] - s->p[i];
        nu += s->p[i + 1] - s->dpos[i] - 1;
    }
    if (ic) nu = nl;
    HISPI_TRY(hispi_calloc(ctx, (size_t)n + 1, sizeof *f->lp, (void **)&f->lp));
    HISPI_TRY(hispi_calloc(ctx, (size_t)n + 2, sizeof *f->up, (void **)&f->up));
    HISPI_TRY(hispi_alloc(ctx, (size_t)nl + 1, sizeof *f->lc, (void **)&f->lc));
    HISPI_TRY(hispi_alloc(ctx, (size_t)nu + 1, sizeof *f->uc, (void **)&f->uc));
    HISPI_TRY(hispi_alloc(ctx, (size_t)(nl * vc) + 1, sizeof *f->lv, (void **)&f->lv));
    HISPI_TRY(hispi_alloc(ctx, (size_t)(nu * vc) + 1, sizeof *f->uv, (void **)&f->uv));
    HISPI_TRY(hispi_alloc(ctx, (size_t)(n * vc) + 1, sizeof *f->d, (void **)&f->d));
    int64_t ql = 0, qu = 0;
    for (int64_t i = 0; i < n; i++) {
        for (int64_t k = s->p[i]; k < s->dpos[i]; k++)
            f->lc[ql] = s->c[k], put(f->lv, vc, ql++, v[k]);
        put(f->d, vc, i, v[s->dpos[i]]);
        for (int64_t k = s->dpos[i] + 1; !ic && k < s->p[i + 1]; k++)
            f->uc[qu] = s->c[k], put(f->uv, vc, qu++, v[k]);
        f->lp[i + 1] = ql;
        if (!ic) f->up[i + 1] = qu;
    }
    if (!ic) return HISP_SUCCESS;
    /* U = D L^H: row j of U holds d_j conj(l_ij) for the rows i > j of L's
     * column j, in ascending i (a counting sort of L by columns) */
    for (int64_t k = 0; k < nl; k++)
        f->up[f->lc[k] + 2]++;
    for (int64_t j = 0; j < n; j++)
        f->up[j + 2] += f->up[j + 1];
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = f->lp[i]; k < f->lp[i + 1]; k++) {
            int64_t j = f->lc[k], at = f->up[j + 1]++;
            f->uc[at] = (int32_t)i;
            put(f->uv, vc, at, creal(v[s->dpos[j]]) * conj(v[s->p[i] + (k - f->lp[i])]));
        }
    return HISP_SUCCESS;
}

/* ILU(0) by sweeps (falling back to IKJ where an entry is not finite) or
 * IKJ, in place over s. */
static hisp_status ilu_values(hisp_context ctx, spat *s, int sweeps, hispi_ilu_factors *f)
{
    int64_t nnz = s->p[s->n], *pos = NULL;
    if (sweeps > 0) {
        cplx *v = NULL, *w = NULL;
        hisp_status st = hispi_alloc(ctx, (size_t)nnz + 1, sizeof *v, (void **)&v);
        if (!st) st = hispi_alloc(ctx, (size_t)nnz + 1, sizeof *w, (void **)&w);
        bool ok = !st && par_sweeps(s, false, 0, sweeps, v, w, &f->shifted);
        if (ok) memcpy(s->v, v, (size_t)nnz * sizeof *v), f->sweeps = sweeps;
        free(v), free(w);
        if (st || ok) return st;
        f->shifted = 0;
    }
    HISPI_TRY(hispi_alloc(ctx, (size_t)s->n + 1, sizeof *pos, (void **)&pos));
    for (int64_t i = 0; i < s->n; i++)
        pos[i] = -1;
    ilu0(s, pos, &f->shifted);
    free(pos);
    return HISP_SUCCESS;
}

/* IC(0) into v (nnz of s) by sweeps or row by row, on A + sh diag(r) with
 * the first sh of 0, 1e-3, 1e-2, .. whose pivots are all positive. */
static hisp_status ic_values(hisp_context ctx, const spat *s, int sweeps, cplx *v,
                             hispi_ilu_factors *f)
{
    int64_t nnz = s->p[s->n];
    cplx *w = NULL;
    f->sweeps = 0;
    hisp_status st =
        hispi_calloc(ctx, (size_t)(sweeps > 0 ? nnz : s->n) + 1, sizeof *w, (void **)&w);
    bool ok = false;
    for (double sh = 0; !st && !ok; sh = sh ? sh * 10 : IC_SHIFT0) {
        if (sh > IC_SHIFT_MAX * 1.5) {
            st = hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                            "IC(0): A is not positive definite: a pivot stayed <= 0 with its "
                            "diagonal shifted by %g times its rows' largest entries "
                            "(use --precond ilu0)",
                            IC_SHIFT_MAX);
            break;
        }
        f->diag_shift = sh;
        if (sweeps > 0) {
            int64_t bad = 0;
            if (!par_sweeps(s, true, sh, sweeps, v, w, &bad)) { /* not finite: row by row */
                free(w);
                return ic_values(ctx, s, 0, v, f);
            }
            ok = bad == 0;
            f->sweeps = sweeps;
            continue;
        }
        memcpy(v, s->v, (size_t)nnz * sizeof *v);
        ok = ic0(s, sh, v, w);
        for (int64_t i = 0; !ok && i < s->n; i++)
            w[i] = 0;
    }
    free(w);
    return st;
}

hisp_status hispi_ilu_factor(hisp_matrix A, bool ic, int sweeps, hispi_ilu_factors *f)
{
    hisp_context ctx = A->ctx;
    const char *what = ic ? "IC(0)" : "ILU(0)";
    memset(f, 0, sizeof *f);
    hispi_sparse tmp;
    const hispi_sparse *a = NULL;
    HISPI_TRY(hispi_matrix_csr(A, &tmp, &a));
    hisp_status st = HISP_SUCCESS;
    if (a->type != HISP_F32 && a->type != HISP_F64 && a->type != HISP_C32 && a->type != HISP_C64)
        st = hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                        "%s: entries of %s (f32, f64, c32 and c64 are factorised)", what,
                        hisp_type_name(a->type));
    else if (a->nrows != a->ncols)
        st = hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "%s: A is %lld x %lld, not square", what,
                        (long long)a->nrows, (long long)a->ncols);
    spat s;
    memset(&s, 0, sizeof s);
    cplx *v = NULL;
    if (!st) st = clean(ctx, a, ic, &s, &f->filled);
    f->t = a->type, f->n = a->nrows;
    if (!st && !ic) {
        st = ilu_values(ctx, &s, sweeps, f);
        v = s.v;
    } else if (!st) {
        st = hispi_alloc(ctx, (size_t)s.p[s.n] + 1, sizeof *v, (void **)&v);
        if (!st) st = ic_values(ctx, &s, sweeps, v, f);
    }
    if (!st) st = split(ctx, &s, v, ic, f);
    if (v != s.v) free(v);
    spat_free(&s);
    hispi_sparse_free(&tmp);
    if (st) hispi_ilu_factors_free(f);
    return st;
}

/* The real factors' solves (the complex ones below): the host path's
 * time per application. */
static void solve_real(const hispi_ilu_factors *f, double *x)
{
    for (int64_t i = 0; i < f->n; i++) {
        double s = x[i];
        for (int64_t k = f->lp[i]; k < f->lp[i + 1]; k++)
            s -= f->lv[k] * x[f->lc[k]];
        x[i] = s;
    }
    for (int64_t i = f->n - 1; i >= 0; i--) {
        double s = x[i];
        for (int64_t k = f->up[i]; k < f->up[i + 1]; k++)
            s -= f->uv[k] * x[f->uc[k]];
        x[i] = s / f->d[i];
    }
}

static cplx xget(const double *x, int vc, int64_t i)
{
    return vc < 2 ? x[i] : CMPLX(x[2 * i], x[2 * i + 1]);
}

/* One Jacobi sweep of a triangle (kernels/ilu.cl ilu_sweep): y = x - T_s
 * yold (upper: divided by d; first: yold read as D^-1 yold). */
static void sweep(const hispi_ilu_factors *f, bool upper, bool first, const double *x,
                  const double *yold, double *y)
{
    int vc = hisp_type_components(f->t);
    const int64_t *p = upper ? f->up : f->lp;
    const int32_t *c = upper ? f->uc : f->lc;
    const double *v = upper ? f->uv : f->lv;
    for (int64_t i = 0; i < f->n; i++) {
        cplx s = xget(x, vc, i);
        for (int64_t k = p[i]; k < p[i + 1]; k++) {
            cplx yo = xget(yold, vc, c[k]);
            if (upper && first) yo /= xget(f->d, vc, c[k]);
            s -= xget(v, vc, k) * yo;
        }
        if (upper) s /= xget(f->d, vc, i);
        put(y, vc, i, s);
    }
}

void hispi_ilu_sweeps_host(const hispi_ilu_factors *f, int sweeps, double *x, double *work)
{
    int64_t m = f->n * hisp_type_components(f->t);
    double *b[2] = {work, work + m};
    /* the lower sweeps end in b[0], the upper ones in x */
    for (int q = 1; q <= sweeps; q++)
        sweep(f, false, false, x, q == 1 ? x : b[(sweeps - q + 1) % 2], b[(sweeps - q) % 2]);
    for (int q = 1; q <= sweeps; q++) {
        double *out = (sweeps - q) % 2 ? b[1] : x, *old = q == 1 ? b[0] : (out == x ? b[1] : x);
        sweep(f, true, q == 1, b[0], old, out);
    }
}

void hispi_ilu_solve_host(const hispi_ilu_factors *f, double *x)
{
    if (hisp_type_components(f->t) < 2) {
        solve_real(f, x);
        return;
    }
    for (int64_t i = 0; i < f->n; i++) {
        cplx s = CMPLX(x[2 * i], x[2 * i + 1]);
        for (int64_t k = f->lp[i]; k < f->lp[i + 1]; k++)
            s -= CMPLX(f->lv[2 * k], f->lv[2 * k + 1]) *
                 CMPLX(x[2 * (int64_t)f->lc[k]], x[2 * (int64_t)f->lc[k] + 1]);
        x[2 * i] = creal(s), x[2 * i + 1] = cimag(s);
    }
    for (int64_t i = f->n - 1; i >= 0; i--) {
        cplx s = CMPLX(x[2 * i], x[2 * i + 1]);
        for (int64_t k = f->up[i]; k < f->up[i + 1]; k++)
            s -= CMPLX(f->uv[2 * k], f->uv[2 * k + 1]) *
                 CMPLX(x[2 * (int64_t)f->uc[k]], x[2 * (int64_t)f->uc[k] + 1]);
        s /= CMPLX(f->d[2 * i], f->d[2 * i + 1]);
        x[2 * i] = creal(s), x[2 * i + 1] = cimag(s);
    }
}
