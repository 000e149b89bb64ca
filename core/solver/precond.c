/* Jacobi preconditioners, made once per solve on the host from A's CSR form
 * (a private conversion for other formats; A is not changed) and uploaded:
 * diag(A) for the scalar and c/q types (l1-Jacobi's row sums where asked or
 * where a diagonal entry is zero), the inverted 3x3 diagonal blocks as a
 * block-diagonal b3x3 matrix, the column scaling of LSQR. */
#include "amg/hispi_amg.h"
#include "ksp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double comp(const void *val, bool dbl, int64_t i)
{
    return dbl ? ((const double *)val)[i] : ((const float *)val)[i];
}

static void put(void *dst, bool dbl, int64_t i, double v)
{
    if (dbl)
        ((double *)dst)[i] = v;
    else
        ((float *)dst)[i] = (float)v;
}

/* |a| of entry k (vc components) */
static double mag(const void *val, bool dbl, int vc, int64_t k)
{
    if (vc == 1) return fabs(comp(val, dbl, k)); /* exact, as the device's */
    double m = 0;
    for (int q = 0; q < vc; q++)
        m += comp(val, dbl, k * vc + q) * comp(val, dbl, k * vc + q);
    return sqrt(m);
}

/* l1-Jacobi's d_i into h (the diagonal there): (|a_ii| + sum_{j != i}
 * |a_ij|) times a_ii / |a_ii| (real and complex entries; a_ii the sum of
 * the row's diagonal entries, as the device's kernel amg_diag), the sum
 * where a_ii = 0, 1 for an empty row. */
static void l1_rows(const hispi_sparse *c, bool dbl, int vc, int64_t n, void *h)
{
    for (int64_t i = 0; i < n; i++) {
        double r = 0, a[2] = {comp(h, dbl, i * vc), vc > 1 ? comp(h, dbl, i * vc + 1) : 0};
        for (int64_t k = c->rowptr[i]; k < c->rowptr[i + 1]; k++)
            if (c->colind[k] != i) r += mag(c->val, dbl, vc, k);
        double m = hypot(a[0], a[1]);
        r += m;
        if (!(r > 0)) r = 1;
        for (int q = 0; q < vc; q++)
            put(h, dbl, i * vc + q,
                m > 0 ? (vc == 1 ? copysign(r, a[0]) : r * a[q] / m)
                : q   ? 0
                      : r);
    }
}

/* Jacobi's diagonal kept with A (A->diag): made on the device, dropped
 * with A's device copy (A->diag_drop), so a solve after the first sets up
 * nothing. */
typedef struct {
    hisp_vector d;
    bool l1;      /* asked for l1-Jacobi */
    bool l1_used; /* l1 values: asked, or a diagonal entry is zero */
} kept_diag;

static void kept_drop(hisp_matrix A)
{
    kept_diag *k = A->diag;
    if (k) hisp_vector_destroy(&k->d);
    free(k);
    A->diag = NULL;
    A->diag_drop = NULL;
}

/* The device's diagonal of A, kept (*d NULL where the device cannot: a
 * CPU device, another format or type). */
static hisp_status device_diagonal(hisp_context ctx, hisp_matrix A, bool l1, hisp_vector *d,
                                   bool *l1_used)
{
    kept_diag *k = A->diag;
    if (k && k->l1 == l1) {
        *d = k->d, *l1_used = k->l1_used;
        return HISP_SUCCESS;
    }
    hisp_vector v = NULL;
    hispi_diag_info in;
    bool used = l1;
    HISPI_TRY(hispi_amg_dev_diagonal(A, l1, &v, &in));
    if (!v) return HISP_SUCCESS;
    hisp_status s = HISP_SUCCESS;
    if (!l1 && in.zero < A->host.nrows) { /* l1-Jacobi instead */
        s = hispi_amg_dev_diagonal(A, true, &v, &in);
        used = true;
    }
    if (!s) s = hispi_calloc(ctx, 1, sizeof *k, (void **)&k);
    if (s) {
        hisp_vector_destroy(&v);
        return s;
    }
    if (A->diag_drop) A->diag_drop(A);
    *k = (kept_diag){v, l1, used};
    A->diag = k;
    A->diag_drop = kept_drop;
    *d = v, *l1_used = used;
    return HISP_SUCCESS;
}

hisp_status hispi_ks_diagonal(hisp_context ctx, hisp_matrix A, bool l1, hisp_vector *d,
                              bool *l1_used, bool *kept)
{
    *d = NULL;
    *l1_used = false;
    HISPI_TRY(device_diagonal(ctx, A, l1, d, l1_used));
    *kept = *d != NULL;
    if (*kept) return HISP_SUCCESS;
    hispi_sparse tmp;
    const hispi_sparse *c = NULL;
    HISPI_TRY(hispi_matrix_csr(A, &tmp, &c));
    int vc = hisp_type_components(c->type);
    bool dbl = hispi_type_scalar_size(c->type) == 8;
    int64_t n = c->nrows < c->ncols ? c->nrows : c->ncols, zero = -1;
    void *h = NULL;
    hisp_status st = hispi_calloc(ctx, (size_t)(n ? n : 1), hisp_type_size(c->type), &h);
    if (!st && l1 && vc > 2)
        st = hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "l1-Jacobi: real and complex entries (not %s)",
                        hisp_type_name(c->type));
    for (int64_t i = 0; !st && i < n; i++) {
        bool nonzero = false;
        for (int64_t k = c->rowptr[i]; k < c->rowptr[i + 1]; k++) {
            if (c->colind[k] != i) continue;
            for (int q = 0; q < vc; q++) {
                double v = comp(h, dbl, i * vc + q) + comp(c->val, dbl, k * vc + q);
                put(h, dbl, i * vc + q, v);
            }
        }
        for (int q = 0; q < vc; q++)
            nonzero = nonzero || comp(h, dbl, i * vc + q) != 0;
        if (!nonzero && zero < 0) zero = i;
    }
    /* a zero diagonal entry: l1-Jacobi instead, where it is defined */
    if (!st && zero >= 0 && !l1 && vc > 2)
        st = hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                        "Jacobi: row %lld has no nonzero diagonal entry (use --precond none)",
                        (long long)zero + 1);
    if (!st && (l1 || zero >= 0)) {
        l1_rows(c, dbl, vc, n, h);
        *l1_used = true;
    }
    if (!st) st = hisp_vector_create(ctx, c->type, n, d);
    if (!st) st = hisp_vector_write(*d, h);
    if (st) hisp_vector_destroy(d);
    free(h);
    hispi_sparse_free(&tmp);
    return st;
}

/* inv = m^-1 of a row-major 3x3 block (adjugate / determinant); false when
 * singular. */
static bool inv3(const double m[9], double inv[9])
{
    double c0 = m[4] * m[8] - m[5] * m[7], c1 = m[5] * m[6] - m[3] * m[8],
           c2 = m[3] * m[7] - m[4] * m[6];
    double det = m[0] * c0 + m[1] * c1 + m[2] * c2;
    double scale = 0;
    for (int i = 0; i < 9; i++)
        scale = fmax(scale, fabs(m[i]));
    if (!(fabs(det) > 1e-14 * scale * scale * scale) || !isfinite(det)) return false;
    double r = 1 / det;
    inv[0] = c0 * r;
    inv[1] = (m[2] * m[7] - m[1] * m[8]) * r;
    inv[2] = (m[1] * m[5] - m[2] * m[4]) * r;
    inv[3] = c1 * r;
    inv[4] = (m[0] * m[8] - m[2] * m[6]) * r;
    inv[5] = (m[2] * m[3] - m[0] * m[5]) * r;
    inv[6] = c2 * r;
    inv[7] = (m[1] * m[6] - m[0] * m[7]) * r;
    inv[8] = (m[0] * m[4] - m[1] * m[3]) * r;
    return true;
}

hisp_status hispi_ks_block_jacobi(hisp_context ctx, hisp_matrix A, hisp_matrix *B)
{
    *B = NULL;
    hispi_sparse tmp;
    const hispi_sparse *c = NULL;
    HISPI_TRY(hispi_matrix_csr(A, &tmp, &c));
    bool dbl = c->type == HISP_B3X3_F64;
    int64_t n = c->nrows;
    int64_t *ptr = NULL;
    int32_t *ind = NULL;
    void *val = NULL;
    hisp_status st = hispi_alloc(ctx, (size_t)n + 1, sizeof *ptr, (void **)&ptr);
    if (!st) st = hispi_alloc(ctx, (size_t)(n ? n : 1), sizeof *ind, (void **)&ind);
    if (!st) st = hispi_calloc(ctx, (size_t)(n ? n : 1), hisp_type_size(c->type), &val);
    for (int64_t i = 0; !st && i < n; i++) {
        double m[9] = {0}, inv[9];
        for (int64_t k = c->rowptr[i]; k < c->rowptr[i + 1]; k++)
            if (c->colind[k] == i)
                for (int q = 0; q < 9; q++)
                    m[q] += comp(c->val, dbl, k * 9 + q);
        if (!inv3(m, inv)) {
            st = hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                            "block Jacobi: the diagonal block of block row %lld is singular "
                            "(use --precond none)",
                            (long long)i + 1);
            break;
        }
        ptr[i] = i;
        ind[i] = (int32_t)i;
        for (int q = 0; q < 9; q++)
            put(val, dbl, i * 9 + q, inv[q]);
    }
    if (!st) {
        ptr[n] = n;
        st = hisp_matrix_create_csr(ctx, c->type, n, n, ptr, ind, val, B);
    }
    free(ptr);
    free(ind);
    free(val);
    hispi_sparse_free(&tmp);
    return st;
}

hisp_status hispi_ks_column_scale(hisp_context ctx, hisp_matrix A, hisp_vector *s)
{
    *s = NULL;
    hispi_sparse tmp;
    const hispi_sparse *c = NULL;
    HISPI_TRY(hispi_matrix_csr(A, &tmp, &c));
    bool dbl = c->type == HISP_F64;
    double *sum = NULL;
    void *h = NULL;
    int64_t n = c->ncols;
    hisp_status st = hispi_calloc(ctx, (size_t)(n ? n : 1), sizeof *sum, (void **)&sum);
    if (!st) st = hispi_calloc(ctx, (size_t)(n ? n : 1), hisp_type_size(c->type), &h);
    for (int64_t k = 0; !st && k < c->nnz; k++) {
        double v = comp(c->val, dbl, k);
        sum[c->colind[k]] += v * v;
    }
    for (int64_t j = 0; !st && j < n; j++)
        put(h, dbl, j, sum[j] > 0 ? 1 / sqrt(sum[j]) : 1);
    if (!st) st = hisp_vector_create(ctx, c->type, n, s);
    if (!st) st = hisp_vector_write(*s, h);
    if (st) hisp_vector_destroy(s);
    free(sum);
    free(h);
    hispi_sparse_free(&tmp);
    return st;
}

hisp_status hispi_ks_operator_diagonal(hisp_context ctx, const hisp_operator *op, hisp_vector *d)
{
    *d = NULL;
    HISPI_TRY(hisp_vector_create(ctx, op->type, op->nrows, d));
    hisp_status st = op->diagonal(op->user, *d);
    if (st) {
        hisp_vector_destroy(d);
        return hispi_fail(ctx, st, "Jacobi: the operator's diagonal function failed (%s)",
                          hisp_status_string(st));
    }
    /* a zero entry would make every later iterate NaN: refuse it here */
    void *h = NULL;
    st = hispi_vector_host(*d, &h);
    int vc = hisp_type_components(op->type);
    bool dbl = hispi_type_scalar_size(op->type) == 8;
    for (int64_t i = 0; !st && i < op->nrows; i++) {
        bool nz = false;
        for (int q = 0; q < vc; q++)
            nz = nz || comp(h, dbl, i * vc + q) != 0;
        if (!nz)
            st = hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                            "Jacobi: local row %lld of the operator has a zero diagonal",
                            (long long)i + 1);
    }
    if (st) hisp_vector_destroy(d);
    return st;
}
