/* Plain serial C reference for CSR SpMM, Y = alpha*op(A)*X + beta*Y over k
 * columns: the oracle of hisp_spmm and the reference backend's kernel. The
 * real loops accumulate as hispi_ref_csr_spmv's (f32 in float, the same
 * order), so a column of the product is the SpMV of that column bit for
 * bit; complex entries multiply as (a + bi)(c + di), conjugated for op H. */
#include "hispi.h"

/* entry (i, j) of an n-row block of k columns */
static inline int64_t at(int64_t i, int64_t j, int64_t n, int64_t k, int row)
{
    return row ? i * k + j : j * n + i;
}

#define REF_SPMM_REAL(T)                                                                           \
    static void spmm_##T(const hispi_sparse *A, hisp_op op, T alpha, const T *x, int xr, T beta,   \
                         T *y, int yr, int64_t k)                                                  \
    {                                                                                              \
        const T *v = (const T *)A->val;                                                            \
        const int64_t m = A->nrows, n = A->ncols;                                                  \
        if (op == HISP_OP_N) {                                                                     \
            for (int64_t j = 0; j < k; j++)                                                        \
                for (int64_t i = 0; i < m; i++) {                                                  \
                    T sum = 0;                                                                     \
                    for (int64_t e = A->rowptr[i]; e < A->rowptr[i + 1]; e++)                      \
                        sum += v[e] * x[at(A->colind[e], j, n, k, xr)];                            \
                    T *yo = y + at(i, j, m, k, yr);                                                \
                    *yo = beta == 0 ? alpha * sum : alpha * sum + beta * *yo;                      \
                }                                                                                  \
            return;                                                                                \
        }                                                                                          \
        for (int64_t j = 0; j < k; j++) {                                                          \
            for (int64_t c = 0; c < n; c++) {                                                      \
                T *yo = y + at(c, j, n, k, yr);                                                    \
                *yo = beta == 0 ? 0 : beta * *yo;                                                  \
            }                                                                                      \
            for (int64_t i = 0; i < m; i++) {                                                      \
                T xi = alpha * x[at(i, j, m, k, xr)];                                              \
                for (int64_t e = A->rowptr[i]; e < A->rowptr[i + 1]; e++)                          \
                    y[at(A->colind[e], j, n, k, yr)] += v[e] * xi;                                 \
            }                                                                                      \
        }                                                                                          \
    }
REF_SPMM_REAL(float)
REF_SPMM_REAL(double)

/* complex: entries are (re, im) pairs of T; alpha and beta real */
#define REF_SPMM_CX(T)                                                                             \
    static void spmm_c##T(const hispi_sparse *A, hisp_op op, T alpha, const T *x, int xr, T beta,  \
                          T *y, int yr, int64_t k)                                                 \
    {                                                                                              \
        const T *v = (const T *)A->val;                                                            \
        const int64_t m = A->nrows, n = A->ncols;                                                  \
        const T cj = op == HISP_OP_H ? -1 : 1;                                                     \
        if (op == HISP_OP_N) {                                                                     \
            for (int64_t j = 0; j < k; j++)                                                        \
                for (int64_t i = 0; i < m; i++) {                                                  \
                    T sr = 0, si = 0;                                                              \
                    for (int64_t e = A->rowptr[i]; e < A->rowptr[i + 1]; e++) {                    \
                        const T *xv = x + 2 * at(A->colind[e], j, n, k, xr);                       \
                        const T ar = v[2 * e], ai = v[2 * e + 1];                                  \
                        sr += ar * xv[0] - ai * xv[1];                                             \
                        si += ar * xv[1] + ai * xv[0];                                             \
                    }                                                                              \
                    T *yo = y + 2 * at(i, j, m, k, yr);                                            \
                    yo[0] = beta == 0 ? alpha * sr : alpha * sr + beta * yo[0];                    \
                    yo[1] = beta == 0 ? alpha * si : alpha * si + beta * yo[1];                    \
                }                                                                                  \
            return;                                                                                \
        }                                                                                          \
        for (int64_t j = 0; j < k; j++) {                                                          \
            for (int64_t c = 0; c < n; c++) {                                                      \
                T *yo = y + 2 * at(c, j, n, k, yr);                                                \
                yo[0] = beta == 0 ? 0 : beta * yo[0];                                              \
                yo[1] = beta == 0 ? 0 : beta * yo[1];                                              \
            }                                                                                      \
            for (int64_t i = 0; i < m; i++) {                                                      \
                const T *xv = x + 2 * at(i, j, m, k, xr);                                          \
                const T xr_ = alpha * xv[0], xi_ = alpha * xv[1];                                  \
                for (int64_t e = A->rowptr[i]; e < A->rowptr[i + 1]; e++) {                        \
                    T *yo = y + 2 * at(A->colind[e], j, n, k, yr);                                 \
                    const T ar = v[2 * e], ai = cj * v[2 * e + 1];                                 \
                    yo[0] += ar * xr_ - ai * xi_;                                                  \
                    yo[1] += ar * xi_ + ai * xr_;                                                  \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }
REF_SPMM_CX(float)
REF_SPMM_CX(double)

hisp_status hispi_ref_csr_spmm(hisp_context ctx, const hispi_sparse *A, hisp_op op, double alpha,
                               const void *X, int xrow, double beta, void *Y, int yrow, int64_t k)
{
    if (A->format != HISP_FORMAT_CSR)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "reference SpMM needs CSR");
    if (op == HISP_OP_H && (A->type == HISP_F32 || A->type == HISP_F64)) op = HISP_OP_T;
    switch (A->type) {
    case HISP_F32:
        spmm_float(A, op, (float)alpha, X, xrow, (float)beta, Y, yrow, k);
        return HISP_SUCCESS;
    case HISP_F64:
        spmm_double(A, op, alpha, X, xrow, beta, Y, yrow, k);
        return HISP_SUCCESS;
    case HISP_C32:
        spmm_cfloat(A, op, (float)alpha, X, xrow, (float)beta, Y, yrow, k);
        return HISP_SUCCESS;
    case HISP_C64:
        spmm_cdouble(A, op, alpha, X, xrow, beta, Y, yrow, k);
        return HISP_SUCCESS;
    default:
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                          "SpMM: %s entries (f32, f64, c32 and c64 have it)",
                          hisp_type_name(A->type));
    }
}
