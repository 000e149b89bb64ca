/* Plain serial C reference for CSR SpMV: the oracle of the tests. */
#include "compound/hispi_compound.h"

#include <stdlib.h>

/* One body per precision; T is the accumulation type (same as the kernels). */
#define REF_SPMV(T)                                                                                \
    static void ref_##T(const hispi_sparse *A, hisp_op op, T alpha, const T *x, T beta, T *y)      \
    {                                                                                              \
        const T *v = (const T *)A->val;                                                            \
        if (op == HISP_OP_N) {                                                                     \
            for (int64_t i = 0; i < A->nrows; i++) {                                               \
                T sum = 0;                                                                         \
                for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)                          \
                    sum += v[k] * x[A->colind[k]];                                                 \
                y[i] = beta == 0 ? alpha * sum : alpha * sum + beta * y[i];                        \
            }                                                                                      \
        } else {                                                                                   \
            for (int64_t j = 0; j < A->ncols; j++)                                                 \
                y[j] = beta == 0 ? 0 : beta * y[j];                                                \
            for (int64_t i = 0; i < A->nrows; i++) {                                               \
                T xi = alpha * x[i];                                                               \
                for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)                          \
                    y[A->colind[k]] += v[k] * xi;                                                  \
            }                                                                                      \
        }                                                                                          \
    }
REF_SPMV(float)
REF_SPMV(double)

hisp_status hispi_ref_csr_spmv(hisp_context ctx, const hispi_sparse *A, hisp_op op, double alpha,
                               const void *x, double beta, void *y)
{
    if (A->format != HISP_FORMAT_CSR)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "reference SpMV needs CSR");
    if (op == HISP_OP_H && (A->type == HISP_F32 || A->type == HISP_F64)) op = HISP_OP_T;
    switch (A->type) {
    case HISP_F32:
        ref_float(A, op, (float)alpha, x, (float)beta, y);
        break;
    case HISP_F64:
        ref_double(A, op, alpha, x, beta, y);
        break;
    default:
        return hispi_compound_ref_spmv_op(ctx, A, op, alpha, x, beta, y);
    }
    return HISP_SUCCESS;
}

hisp_status hispi_ref_csr_spmv_dot(hisp_context ctx, const hispi_sparse *A, const void *x,
                                   int64_t xoff, void *y, double *dot)
{
    HISPI_TRY(hispi_ref_csr_spmv(ctx, A, HISP_OP_N, 1.0, x, 0.0, y));
    double s = 0;
    if (A->type == HISP_F64)
        for (int64_t i = 0; i < A->nrows; i++)
            s += ((const double *)x)[xoff + i] * ((const double *)y)[i];
    else
        for (int64_t i = 0; i < A->nrows; i++)
            s += (double)((const float *)x)[xoff + i] * ((const float *)y)[i];
    *dot = s;
    return HISP_SUCCESS;
}
