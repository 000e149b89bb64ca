/* Plain serial C SpMV over the SELL-C-sigma host form: the reference
 * backend's path and the tests' second oracle. Only the stored entries of
 * each row are visited (its length), so op N sums exactly as
 * hispi_ref_csr_spmv does (same order, entry type). */
#include "sell/hispi_sell.h"

#define SELL_REF(T)                                                                                \
    static void ref_##T(const hispi_sell *h, hisp_op op, T alpha, const T *x, T beta, T *y)        \
    {                                                                                              \
        const T *v = (const T *)h->val;                                                            \
        const int64_t C = h->C;                                                                    \
        if (op == HISP_OP_N) {                                                                     \
            for (int64_t r = 0; r < h->nrows; r++) {                                               \
                const int64_t b = h->sptr[r / C] + r % C;                                          \
                T sum = 0;                                                                         \
                for (int64_t k = 0; k < h->len[r]; k++)                                            \
                    sum += v[b + k * C] * x[h->col[b + k * C]];                                    \
                const int64_t i = h->perm[r];                                                      \
                y[i] = beta == 0 ? alpha * sum : alpha * sum + beta * y[i];                        \
            }                                                                                      \
        } else {                                                                                   \
            for (int64_t j = 0; j < h->ncols; j++)                                                 \
                y[j] = beta == 0 ? 0 : beta * y[j];                                                \
            for (int64_t r = 0; r < h->nrows; r++) {                                               \
                const int64_t b = h->sptr[r / C] + r % C;                                          \
                const T xi = alpha * x[h->perm[r]];                                                \
                for (int64_t k = 0; k < h->len[r]; k++)                                            \
                    y[h->col[b + k * C]] += v[b + k * C] * xi;                                     \
            }                                                                                      \
        }                                                                                          \
    }
SELL_REF(float)
SELL_REF(double)

hisp_status hispi_sell_ref_spmv(hisp_context ctx, const hispi_sell *h, hisp_op op, double alpha,
                                const void *x, double beta, void *y)
{
    if (op == HISP_OP_H) op = HISP_OP_T; /* real entries */
    if (op != HISP_OP_N && op != HISP_OP_T)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "unknown op %d", (int)op);
    switch (h->type) {
    case HISP_F32:
        ref_float(h, op, (float)alpha, x, (float)beta, y);
        return HISP_SUCCESS;
    case HISP_F64:
        ref_double(h, op, alpha, x, beta, y);
        return HISP_SUCCESS;
    default:
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "SELL stores f32 and f64 entries, not %s",
                          hisp_type_name(h->type));
    }
}
