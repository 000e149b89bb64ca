/* The compound suites' oracle: y = alpha*op(A)*x + beta*y0 in double from
 * A's real expansion (hisp_matrix_expand_real), x and y as flat scalars. */
#include "testutil.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

double test_scalar(size_t ss, const void *a, int64_t i)
{
    return ss == 4 ? (double)((const float *)a)[i] : ((const double *)a)[i];
}

void test_put_scalar(size_t ss, void *a, int64_t i, double d)
{
    if (ss == 4)
        ((float *)a)[i] = (float)d;
    else
        ((double *)a)[i] = d;
}

/* The real expansion of op(A) is expand(A)^T for H and expand(conj(A))^T
 * for T (3x3 blocks are real: T = H), read here as a scatter over rows. */
double *test_compound_oracle(hisp_matrix A, hisp_op op, const void *x, const void *y0, double alpha,
                             double beta)
{
    hisp_context ctx = test_default_context();
    hisp_matrix_info mi;
    ck_assert_int_eq(hisp_matrix_get_info(A, &mi), 0);
    const int64_t *ptr;
    const int32_t *cols;
    const void *vals;
    ck_assert_int_eq(hisp_matrix_convert(A, HISP_FORMAT_CSR), 0);
    ck_assert_int_eq(hisp_matrix_host_arrays(A, &ptr, NULL, &cols, &vals), 0);
    int comps = hisp_type_components(mi.type);
    size_t es = hisp_type_size(mi.type), ss = es / (size_t)comps;
    void *cv = malloc((size_t)mi.nnz * es + 8);
    ck_assert_ptr_nonnull(cv);
    memcpy(cv, vals, (size_t)mi.nnz * es);
    bool blocks = mi.type == HISP_B3X3_F32 || mi.type == HISP_B3X3_F64;
    if (op == HISP_OP_T && !blocks)
        for (int64_t k = 0; k < mi.nnz; k++)
            for (int q = 1; q < comps; q++)
                test_put_scalar(ss, cv, k * comps + q, -test_scalar(ss, cv, k * comps + q));
    hisp_matrix C = NULL, B = NULL;
    CK_OK(ctx, hisp_matrix_create_csr(ctx, mi.type, mi.nrows, mi.ncols, ptr, cols, cv, &C));
    CK_OK(ctx, hisp_matrix_expand_real(C, &B));
    hisp_matrix_info bi;
    CK_OK(ctx, hisp_matrix_get_info(B, &bi));
    ck_assert_int_eq(hisp_matrix_host_arrays(B, &ptr, NULL, &cols, &vals), 0);
    int64_t ny = op == HISP_OP_N ? bi.nrows : bi.ncols;
    double *acc = calloc((size_t)ny + 1, sizeof *acc), *y = calloc((size_t)ny + 1, sizeof *y);
    ck_assert(acc && y);
    for (int64_t i = 0; i < bi.nrows; i++)
        for (int64_t k = ptr[i]; k < ptr[i + 1]; k++) {
            double a = test_scalar(ss, vals, k);
            if (op == HISP_OP_N)
                acc[i] += a * test_scalar(ss, x, cols[k]);
            else
                acc[cols[k]] += a * test_scalar(ss, x, i);
        }
    for (int64_t j = 0; j < ny; j++)
        y[j] = alpha * acc[j] + (beta != 0 ? beta * test_scalar(ss, y0, j) : 0);
    free(acc);
    free(cv);
    hisp_matrix_destroy(&B);
    hisp_matrix_destroy(&C);
    hisp_context_destroy(&ctx);
    return y;
}

double test_compound_error(size_t ss, const void *y, const double *ref, int64_t n)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = test_scalar(ss, y, i) - ref[i];
        num += d * d;
        den += ref[i] * ref[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}
