/* Host formats: creation checks and COO/CSR/CSC conversions. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

START_TEST(test_convert_roundtrip)
{
    uint64_t st = test_seed() + 11;
    hisp_context ctx = test_default_context();
    int64_t shapes[][2] = {{0, 0}, {1, 1}, {1, 17}, {23, 1}, {37, 53}, {100, 64}, {5, 300}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int64_t m = shapes[s][0], n = shapes[s][1];
        int64_t nnz = m * n / 3 + 4;
        if (m == 0 || n == 0) nnz = 0;
        int32_t *r = malloc((size_t)nnz * 4 + 4), *c = malloc((size_t)nnz * 4 + 4);
        double *v = malloc((size_t)nnz * 8 + 8);
        for (int64_t k = 0; k < nnz; k++) { /* duplicates on purpose */
            r[k] = (int32_t)(test_rand(&st) % (uint64_t)m);
            c[k] = (int32_t)(test_rand(&st) % (uint64_t)n);
            v[k] = test_uniform(&st);
        }
        hisp_matrix A = NULL;
        CK_OK(ctx, hisp_matrix_create_coo(ctx, HISP_F64, m, n, nnz, r, c, v, &A));
        int64_t m0, n0;
        double *ref = test_dense_image(A, 1, &m0, &n0);
        hisp_format seq[] = {HISP_FORMAT_CSR, HISP_FORMAT_CSC, HISP_FORMAT_COO,
                             HISP_FORMAT_CSC, HISP_FORMAT_CSR, HISP_FORMAT_COO};
        for (size_t f = 0; f < sizeof seq / sizeof seq[0]; f++) {
            CK_OK(ctx, hisp_matrix_convert(A, seq[f]));
            int64_t m1, n1;
            double *d = test_dense_image(A, 1, &m1, &n1);
            ck_assert_int_eq(m1, m);
            ck_assert_int_eq(n1, n);
            for (int64_t i = 0; i < m * n; i++)
                ck_assert_msg(d[i] - ref[i] < 1e-12 && ref[i] - d[i] < 1e-12,
                              "%lldx%lld after %s: entry %lld differs", (long long)m, (long long)n,
                              hisp_format_name(seq[f]), (long long)i);
            free(d);
            /* sorted, no duplicates */
            const int64_t *ptr;
            const int32_t *rows, *cols;
            ck_assert_int_eq(hisp_matrix_host_arrays(A, &ptr, &rows, &cols, NULL), 0);
            hisp_matrix_info info;
            ck_assert_int_eq(hisp_matrix_get_info(A, &info), 0);
            if (seq[f] == HISP_FORMAT_CSR)
                for (int64_t i = 0; i < m; i++)
                    for (int64_t k = ptr[i] + 1; k < ptr[i + 1]; k++)
                        ck_assert_int_lt(cols[k - 1], cols[k]);
            if (seq[f] == HISP_FORMAT_COO)
                for (int64_t k = 1; k < info.nnz; k++)
                    ck_assert(rows[k - 1] < rows[k] ||
                              (rows[k - 1] == rows[k] && cols[k - 1] < cols[k]));
        }
        hisp_matrix B = NULL;
        CK_OK(ctx, hisp_matrix_duplicate(A, HISP_FORMAT_CSC, &B));
        int64_t m2, n2;
        double *d2 = test_dense_image(B, 1, &m2, &n2);
        ck_assert_mem_eq(d2, ref, (size_t)(m * n) * sizeof(double));
        free(d2);
        hisp_matrix_destroy(&B);
        ck_assert_ptr_null(B);
        free(ref);
        free(r);
        free(c);
        free(v);
        hisp_matrix_destroy(&A);
    }
    hisp_context_destroy(&ctx);
    ck_assert_ptr_null(ctx);
}
END_TEST

START_TEST(test_create_rejects_bad_input)
{
    hisp_context ctx = test_default_context();
    hisp_matrix A = NULL;
    int32_t r[] = {0, 1, 5}, c[] = {0, 1, 1};
    double v[] = {1, 2, 3};
    ck_assert_int_eq(hisp_matrix_create_coo(ctx, HISP_F64, 3, 3, 3, r, c, v, &A),
                     HISP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(A);
    hisp_error_info e;
    ck_assert_int_eq(hisp_context_last_error(ctx, &e), HISP_SUCCESS);
    ck_assert_ptr_nonnull(strstr(e.message, "row index 5"));
    int64_t badptr[] = {0, 2, 1, 3};
    ck_assert_int_eq(hisp_matrix_create_csr(ctx, HISP_F64, 3, 3, badptr, c, v, &A),
                     HISP_ERR_INVALID_ARGUMENT);
    int64_t ptr[] = {0, 1, 2, 3};
    int32_t badc[] = {0, -1, 2};
    ck_assert_int_eq(hisp_matrix_create_csr(ctx, HISP_F64, 3, 3, ptr, badc, v, &A),
                     HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_matrix_create_csr(ctx, HISP_F64, -1, 3, ptr, c, v, &A),
                     HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_matrix_create_csr(ctx, (hisp_type)99, 3, 3, ptr, c, v, &A),
                     HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_matrix_create_coo(NULL, HISP_F64, 3, 3, 3, r, c, v, &A),
                     HISP_ERR_INVALID_HANDLE);
    /* pattern (vals = NULL) gives ones */
    CK_OK(ctx, hisp_matrix_create_csr(ctx, HISP_F32, 3, 3, ptr, c, NULL, &A));
    const void *vals;
    CK_OK(ctx, hisp_matrix_host_arrays(A, NULL, NULL, NULL, &vals));
    ck_assert_float_eq(((const float *)vals)[2], 1.0f);
    uint64_t bytes;
    CK_OK(ctx, hisp_matrix_format_bytes(A, HISP_FORMAT_CSR, HISP_F64, &bytes));
    ck_assert_int_eq(bytes, 3 * 8 + 3 * 4 + 4 * 4);
    CK_OK(ctx, hisp_matrix_format_bytes(A, HISP_FORMAT_COO, HISP_F32, &bytes));
    ck_assert_int_eq(bytes, 3 * 12);
    hisp_matrix_destroy(&A);
    hisp_matrix_destroy(&A); /* second destroy of a NULL handle is harmless */
    hisp_context_destroy(&ctx);
}
END_TEST

START_TEST(test_out_of_memory_is_an_error)
{
    hisp_context ctx = test_default_context();
    hisp_matrix A = NULL;
    int32_t r[] = {0, 1, 2}, c[] = {2, 1, 0};
    double v[] = {1, 2, 3};
    CK_OK(ctx, hisp_matrix_create_coo(ctx, HISP_F64, 3, 3, 3, r, c, v, &A));
    /* every allocation of the conversion fails in turn; A stays intact */
    for (long k = 1; k <= 8; k++) {
        extern void hispi_alloc_fail_after(long);
        hispi_alloc_fail_after(k);
        hisp_status s = hisp_matrix_convert(A, HISP_FORMAT_CSC);
        hispi_alloc_fail_after(0);
        if (s == HISP_SUCCESS)
            CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_COO));
        else
            ck_assert_int_eq(s, HISP_ERR_OUT_OF_HOST_MEMORY);
        hisp_matrix_info info;
        CK_OK(ctx, hisp_matrix_get_info(A, &info));
        ck_assert_int_eq(info.nnz, 3);
    }
    /* an absurd size is refused, not attempted */
    hisp_vector x = NULL;
    ck_assert_int_eq(hisp_vector_create(ctx, HISP_F64, INT64_MAX / 4, &x),
                     HISP_ERR_OUT_OF_HOST_MEMORY);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

Suite *suite_sparse(void)
{
    Suite *s = suite_create("sparse");
    TCase *tc = tcase_create("formats");
    tcase_add_test(tc, test_convert_roundtrip);
    tcase_add_test(tc, test_create_rejects_bad_input);
    tcase_add_test(tc, test_out_of_memory_is_an_error);
    suite_add_tcase(s, tc);
    return s;
}
