#include "fixture_spmv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double ld(hisp_type t, const void *a, int64_t i)
{
    return t == HISP_F32 ? (double)((const float *)a)[i] : ((const double *)a)[i];
}

/* Longest row or column of a CSR: the f32 tolerance grows with it. */
static int64_t longest_line(const hispi_sparse *s)
{
    int64_t best = 0;
    for (int64_t i = 0; i < s->nrows; i++)
        if (s->rowptr[i + 1] - s->rowptr[i] > best) best = s->rowptr[i + 1] - s->rowptr[i];
    int64_t *cnt = calloc((size_t)s->ncols + 1, sizeof *cnt);
    ck_assert_ptr_nonnull(cnt);
    for (int64_t k = 0; k < s->nnz; k++)
        if (++cnt[s->colind[k]] > best) best = cnt[s->colind[k]];
    free(cnt);
    return best;
}

void test_spmv_check(hisp_context ctx, hisp_matrix A, const hispi_sparse *ref, hisp_op op,
                     int beta_mode, uint64_t *st, const char *what, const char *how)
{
    ck_assert_int_eq(ref->format, HISP_FORMAT_CSR);
    hisp_type t = ref->type;
    size_t es = hisp_type_size(t);
    int64_t m = op == HISP_OP_N ? ref->nrows : ref->ncols;
    int64_t n = op == HISP_OP_N ? ref->ncols : ref->nrows;
    void *xh = malloc((size_t)n * es + 8), *y0 = malloc((size_t)m * es + 8);
    void *yref = malloc((size_t)m * es + 8), *ydev = malloc((size_t)m * es + 8);
    ck_assert(xh && y0 && yref && ydev);
    test_fill_uniform(t, xh, n, st);
    if (beta_mode == 1)
        test_fill_nan(t, y0, m);
    else
        test_fill_uniform(t, y0, m, st);
    double alpha = 0.5 + test_uniform(st);
    double beta = beta_mode == 1 ? 0 : beta_mode == 2 ? 1 : 0.5 + test_uniform(st);
    if (t == HISP_F32) alpha = (float)alpha, beta = (float)beta; /* what the device gets */
    float af = (float)alpha, bf = (float)beta;
    const void *ap = t == HISP_F32 ? (const void *)&af : (const void *)&alpha;
    const void *bp = t == HISP_F32 ? (const void *)&bf : (const void *)&beta;

    test_spmv_host(ctx, op, ap, A, xh, bp, y0, ydev);
    memcpy(yref, y0, (size_t)m * es);
    CK_OK(ctx, hispi_ref_csr_spmv(ctx, ref, op, alpha, xh, beta, yref));

    double *mag = calloc((size_t)m + 1, sizeof *mag);
    ck_assert_ptr_nonnull(mag);
    for (int64_t i = 0; i < ref->nrows; i++)
        for (int64_t k = ref->rowptr[i]; k < ref->rowptr[i + 1]; k++) {
            int64_t c = ref->colind[k];
            int64_t from = op == HISP_OP_N ? c : i, to = op == HISP_OP_N ? i : c;
            mag[to] += fabs(alpha) * fabs(ld(t, ref->val, k)) * fabs(ld(t, xh, from));
        }
    double num = 0, den = 0;
    for (int64_t i = 0; i < m; i++) {
        double d = ld(t, ydev, i), r = ld(t, yref, i);
        ck_assert_msg(!isnan(d) && !isnan(r), "%s: NaN in y[%lld]%s", what, (long long)i,
                      beta_mode == 1 ? " (y was NaN and beta = 0: y was read)" : "");
        double g = mag[i] + (beta_mode == 1 ? 0 : fabs(beta * ld(t, y0, i)));
        num += (d - r) * (d - r);
        den += g * g;
    }
    free(mag);
    double err = den > 0 ? sqrt(num / den) : sqrt(num);
    double tol = 1e-12;
    if (t == HISP_F32) {
        double L = (double)longest_line(ref);
        tol = 1e-5 * (L > 64 ? sqrt(L / 64) : 1);
    }
    ck_assert_msg(err <= tol,
                  "%s: %s %lldx%lld nnz %lld%s op %c beta %s: relative error %.3g > %.3g "
                  "(seed %llu)",
                  what, hisp_type_name(t), (long long)ref->nrows, (long long)ref->ncols,
                  (long long)ref->nnz, how, "NTH"[op % 3],
                  beta_mode == 1   ? "0 (y NaN)"
                  : beta_mode == 2 ? "1"
                                   : "random",
                  err, tol, (unsigned long long)test_seed());
    free(xh), free(y0), free(yref), free(ydev);
}
