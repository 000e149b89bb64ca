/* hisp_matrix_perturb: the HiSparse paper's second operand of an addition,
 * B = A with every entry moved by a rounded normal offset (standard
 * deviation sigma) in row and column, with a fresh value.
 *
 * Determinism: entry (i, j) of A (as shown: HiSparse transpose applied)
 * draws from streams keyed by (seed, i, j) (core/gen/gen.c's counter-based
 * streams), so B depends on A's entries, not on its format or storage
 * order, and not on the number of threads. The normal deviates come from
 * Marsaglia's polar method with a logarithm made of + - * / only and the
 * correctly rounded sqrt, so they are bit-identical on any IEEE machine
 * (gen.c's rule: no libm transcendental).
 *
 * An offset that leaves the matrix is redrawn. When sigma exceeds 4x the
 * dimension, a draw would land inside less than about 1 time in 10: the
 * offset is then drawn uniformly over the cells inside and accepted with
 * probability exp(-k^2 / (2 sigma^2)), the normal density at k instead of
 * the rounded normal's mass of [k - 1/2, k + 1/2) (relative difference below
 * 1 / (24 sigma^2), under 0.3%).
 *
 * Assembly: a counting sort by new column, then a stable one by new row,
 * gives row-major order with ties in A's row-major order; entries landing
 * on one cell are summed in double in that order, then stored in A's type.
 */
#include "hispi.h"

#include <math.h> /* isfinite, sqrt (correctly rounded by IEEE 754) */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Stream purposes (gen.c uses 1..6 with other keys). */
enum { P_MOVE = 101, P_VALUE = 102 };

/* Natural logarithm of a positive normal double from + - * / only:
 * s = m 2^e with m in [sqrt(1/2), sqrt(2)), log m = 2 atanh(t) with
 * t = (m-1)/(m+1), |t| < 0.172, summed to t^23 (error below 1e-17). */
static double det_log(double s)
{
    uint64_t b;
    memcpy(&b, &s, sizeof b);
    int e = (int)((b >> 52) & 0x7ff) - 1023;
    b = (b & 0x000fffffffffffffull) | 0x3ff0000000000000ull;
    double m;
    memcpy(&m, &b, sizeof m);
    if (m > 1.4142135623730951) {
        m *= 0.5;
        e++;
    }
    double t = (m - 1) / (m + 1), t2 = t * t, p = 1.0 / 23;
    for (int k = 21; k >= 1; k -= 2)
        p = p * t2 + 1.0 / k;
    return 2 * t * p + (double)e * 0x1.62e42fefa39efp-1;
}

typedef struct {
    hispi_rng r;
    double spare;
    bool has_spare;
} normal_src;

/* Uniform in [-1, 1), multiples of 2^-52 (so u*u is never subnormal). */
static double unit(hispi_rng *r)
{
    return (double)(hispi_rng_next(r) >> 11) * 0x1p-52 - 1.0;
}

/* Standard normal deviates, two per accepted polar pair. */
static double normal(normal_src *n)
{
    if (n->has_spare) {
        n->has_spare = false;
        return n->spare;
    }
    double u, v, s;
    do {
        u = unit(&n->r);
        v = unit(&n->r);
        s = u * u + v * v;
    } while (s >= 1 || s == 0);
    double f = sqrt(-2 * det_log(s) / s);
    n->spare = v * f;
    n->has_spare = true;
    return u * f;
}

/* An offset k with 0 <= pos + k < n (n >= 1): the rounded normal redrawn
 * until inside, or the large-sigma rejection sampler (see the top). */
static int64_t offset(normal_src *ns, double sigma, int64_t pos, int64_t n)
{
    if (sigma == 0) return 0;
    int64_t kmin = -pos, kmax = n - 1 - pos;
    if (sigma > 4.0 * (double)n) {
        for (;;) {
            int64_t k = hispi_rng_below(&ns->r, n) - pos;
            double u = (double)((hispi_rng_next(&ns->r) >> 11) + 1) * 0x1p-53; /* (0, 1] */
            double a = (double)k / sigma;
            if (det_log(u) <= -0.5 * a * a) return k;
        }
    }
    double lo = (double)kmin - 0.5, hi = (double)kmax + 0.5;
    for (;;) {
        double x = sigma * normal(ns);
        if (!(x >= lo && x < hi)) continue;
        double y = x + 0.5; /* round half up: floor(x + 1/2) */
        int64_t k = (int64_t)y;
        if ((double)k > y) k--;
        return k > kmax ? kmax : k; /* x + 0.5 may round up onto the bound */
    }
}

typedef struct {
    const hispi_sparse *S;
    uint64_t key;
    double sigma;
    size_t scalar;
    int32_t *nr, *nc; /* new row and column of entry k */
    double *v;        /* its new value */
    int64_t chunk;
    atomic_llong next;
} move_job;

static void *move_worker(void *arg)
{
    move_job *j = arg;
    const hispi_sparse *S = j->S;
    for (;;) {
        int64_t lo = atomic_fetch_add(&j->next, j->chunk);
        if (lo >= S->nrows) break;
        int64_t hi = lo + j->chunk < S->nrows ? lo + j->chunk : S->nrows;
        for (int64_t i = lo; i < hi; i++)
            for (int64_t k = S->rowptr[i]; k < S->rowptr[i + 1]; k++) {
                int64_t c = S->colind[k];
                uint64_t cell = (uint64_t)i << 32 | (uint32_t)c;
                normal_src ns = {hispi_rng_at(j->key, cell, P_MOVE), 0, false};
                j->nr[k] = (int32_t)(i + offset(&ns, j->sigma, i, S->nrows));
                j->nc[k] = (int32_t)(c + offset(&ns, j->sigma, c, S->ncols));
                hispi_rng rv = hispi_rng_at(j->key, cell, P_VALUE);
                j->v[k] = hispi_gen_value(j->scalar, hispi_rng_next(&rv));
            }
    }
    return NULL;
}

/* Sorted, merged CSR of the moved entries (nr, nc, v: nnz of them). */
static hisp_status assemble(hisp_context ctx, hisp_type t, int64_t nrows, int64_t ncols,
                            int64_t nnz, const int32_t *nr, const int32_t *nc, const double *v,
                            hispi_sparse *out)
{
    int64_t *perm = NULL, *cnt = NULL, *rowptr = NULL;
    int32_t *oc = NULL;
    double *ov = NULL;
    int64_t cmax = nrows > ncols ? nrows : ncols;
    hisp_status s = hispi_alloc(ctx, (size_t)nnz, sizeof *perm, (void **)&perm);
    if (!s) s = hispi_calloc(ctx, (size_t)cmax + 1, sizeof *cnt, (void **)&cnt);
    if (!s) s = hispi_calloc(ctx, (size_t)nrows + 1, sizeof *rowptr, (void **)&rowptr);
    if (!s) s = hispi_alloc(ctx, (size_t)nnz, sizeof *oc, (void **)&oc);
    if (!s) s = hispi_alloc(ctx, (size_t)nnz, sizeof *ov, (void **)&ov);
    if (s) goto done;
    /* by column (stable in A's order) */
    for (int64_t k = 0; k < nnz; k++)
        cnt[nc[k] + 1]++;
    for (int64_t c = 0; c < ncols; c++)
        cnt[c + 1] += cnt[c];
    for (int64_t k = 0; k < nnz; k++)
        perm[cnt[nc[k]]++] = k;
    /* then by row, stable: row-major, ties in A's order */
    for (int64_t k = 0; k < nnz; k++)
        rowptr[nr[k] + 1]++;
    for (int64_t i = 0; i < nrows; i++)
        rowptr[i + 1] += rowptr[i];
    memcpy(cnt, rowptr, (size_t)nrows * sizeof *cnt);
    for (int64_t q = 0; q < nnz; q++) {
        int64_t k = perm[q], slot = cnt[nr[k]]++;
        oc[slot] = nc[k];
        ov[slot] = v[k];
    }
    /* merge repeated cells within each row */
    int64_t w = 0;
    for (int64_t i = 0; i < nrows; i++) {
        int64_t start = rowptr[i], end = rowptr[i + 1], first = w;
        rowptr[i] = w;
        for (int64_t q = start; q < end; q++) {
            if (w > first && oc[w - 1] == oc[q]) {
                ov[w - 1] += ov[q];
            } else {
                oc[w] = oc[q];
                ov[w] = ov[q];
                w++;
            }
        }
    }
    rowptr[nrows] = w;
    memset(out, 0, sizeof *out);
    out->format = HISP_FORMAT_CSR;
    out->type = t;
    out->nrows = nrows;
    out->ncols = ncols;
    out->nnz = w;
    out->sorted = true;
    s = hispi_alloc(ctx, (size_t)w, hisp_type_size(t), &out->val);
    if (s) goto done;
    for (int64_t k = 0; k < w; k++) {
        if (t == HISP_F32)
            ((float *)out->val)[k] = (float)ov[k];
        else
            ((double *)out->val)[k] = ov[k];
    }
    if (w < nnz) { /* failure to shrink is harmless */
        void *p = realloc(oc, (size_t)(w ? w : 1) * sizeof *oc);
        if (p) oc = p;
    }
    out->rowptr = rowptr;
    out->colind = oc;
    rowptr = NULL;
    oc = NULL;
done:
    free(perm);
    free(cnt);
    free(rowptr);
    free(oc);
    free(ov);
    return s;
}

hisp_status hisp_matrix_perturb(hisp_matrix A, double sigma, uint64_t seed, hisp_matrix *B)
{
    if (!hispi_mat_ok(A)) return HISP_ERR_INVALID_HANDLE;
    HISPI_TRY(hispi_matrix_need_host(A));
    hisp_context ctx = A->ctx;
    if (!B) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "perturb: output handle is NULL");
    *B = NULL;
    if (!(sigma >= 0) || !isfinite(sigma))
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "perturb: sigma %g must be finite and >= 0", sigma);
    hisp_type t = A->host.type;
    if (t != HISP_F32 && t != HISP_F64)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                          "perturb: entry type %s not supported (f32, f64)", hisp_type_name(t));
    hispi_sparse S;
    HISPI_TRY(hispi_matrix_sparse_copy(A, HISP_FORMAT_CSR, &S));
    int64_t nnz = S.nnz;
    int32_t *nr = NULL, *nc = NULL;
    double *v = NULL;
    hisp_status s = hispi_alloc(ctx, (size_t)nnz, sizeof *nr, (void **)&nr);
    if (!s) s = hispi_alloc(ctx, (size_t)nnz, sizeof *nc, (void **)&nc);
    if (!s) s = hispi_alloc(ctx, (size_t)nnz, sizeof *v, (void **)&v);
    if (s) {
        hispi_sparse_free(&S);
        goto done;
    }
    move_job j = {.S = &S,
                  .key = hispi_mix64(seed ^ hispi_mix64(0x70657274u)), /* "pert" */
                  .sigma = sigma,
                  .scalar = hispi_type_scalar_size(t),
                  .nr = nr,
                  .nc = nc,
                  .v = v};
    double per_row = S.nrows > 0 ? (double)nnz / (double)S.nrows : 1;
    j.chunk = per_row >= 4096 ? 1 : (int64_t)(4096 / (per_row > 1 ? per_row : 1));
    atomic_init(&j.next, 0);
    hispi_parallel(hispi_threads(ctx, 8.0 * (double)nnz), move_worker, &j);
    int64_t nrows = S.nrows, ncols = S.ncols;
    hispi_sparse_free(&S);
    hispi_sparse out;
    s = assemble(ctx, t, nrows, ncols, nnz, nr, nc, v, &out);
    if (!s) s = hispi_matrix_wrap(ctx, &out, B);
done:
    free(nr);
    free(nc);
    free(v);
    return s;
}
