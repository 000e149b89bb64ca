/* SpMM, Y = alpha*op(A)*X + beta*Y over k columns (hisp_spmm), on every
 * target against a dense oracle in double computed here from A's host
 * arrays: k = 1, 2, 3, 12, 16, 33; X and Y each column- or row-major; op N, T
 * (H: T for real entries); rectangular random matrices with empty rows and
 * columns, a matrix with rows long enough for the CUDA plan's long-row
 * blocks and split rows; beta = 0 (Y not read: NaN stays out) and not;
 * complex entries (N, T, H; column by column on devices); SELL and
 * HiSparse by columns; the shape calls, the argument errors, the orders and
 * types refused, and injected allocation failures (Y unchanged). */
#include "testutil.h"
#include "hispi.h"

#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int64_t at(int64_t i, int64_t j, int64_t n, int64_t k, hisp_order o)
{
    return o == HISP_ORDER_ROW ? i * k + j : j * n + i;
}

static double comp(hisp_type t, const void *a, int64_t i)
{
    return t == HISP_F32 || t == HISP_C32 ? ((const float *)a)[i] : ((const double *)a)[i];
}

static void put(hisp_type t, void *a, int64_t i, double v)
{
    if (t == HISP_F32 || t == HISP_C32)
        ((float *)a)[i] = (float)v;
    else
        ((double *)a)[i] = v;
}

/* One product on ctx against the oracle: A (m x n) in any CSR-family
 * format, k columns, the orders of X and Y, op, beta (0: Y starts as NaN). */
static void check_image(hisp_context ctx, hisp_matrix A, hisp_matrix img, hisp_op op, int64_t k,
                        hisp_order xo, hisp_order yo, double beta, uint64_t *st, const char *what)
{
    hisp_matrix_info info;
    CK_OK(ctx, hisp_matrix_get_info(A, &info));
    hisp_type t = info.type;
    bool cx = t == HISP_C32 || t == HISP_C64;
    int vc = cx ? 2 : 1;
    int64_t m0, n0;
    double *D = test_dense_image(img, vc, &m0, &n0);
    int64_t m = op == HISP_OP_N ? m0 : n0, n = op == HISP_OP_N ? n0 : m0;
    size_t es = hisp_type_size(t);
    void *xh = malloc((size_t)(n * k + 1) * es), *y0 = malloc((size_t)(m * k + 1) * es);
    void *y = malloc((size_t)(m * k + 1) * es);
    double *ref = calloc((size_t)(m * k * vc + 1), sizeof(double));
    ck_assert(D && xh && y0 && y && ref);
    for (int64_t i = 0; i < n * k * vc; i++)
        put(t, xh, i, test_uniform(st));
    for (int64_t i = 0; i < m * k * vc; i++)
        put(t, y0, i, beta == 0 ? NAN : test_uniform(st));
    const double alpha = 1.5;
    /* the oracle: ref(i, j) = alpha * sum_l op(D)(i, l) X(l, j) + beta Y0(i, j) */
    for (int64_t j = 0; j < k; j++)
        for (int64_t i = 0; i < m; i++) {
            double complex s = 0;
            for (int64_t l = 0; l < n; l++) {
                int64_t r = op == HISP_OP_N ? i : l, c = op == HISP_OP_N ? l : i;
                const double *d = D + (r * n0 + c) * vc;
                double complex a = cx ? d[0] + I * d[1] : d[0];
                if (op == HISP_OP_H) a = conj(a);
                int64_t xi = at(l, j, n, k, xo) * vc;
                double complex xv =
                    cx ? comp(t, xh, xi) + I * comp(t, xh, xi + 1) : comp(t, xh, xi);
                s += a * xv;
            }
            int64_t yi = at(i, j, m, k, yo) * vc;
            double complex yv = 0;
            if (beta != 0) yv = cx ? comp(t, y0, yi) + I * comp(t, y0, yi + 1) : comp(t, y0, yi);
            double complex r = alpha * s + beta * yv;
            int64_t ri = (j * m + i) * vc; /* column-major, for per-column errors */
            ref[ri] = creal(r);
            if (cx) ref[ri + 1] = cimag(r);
        }
    hisp_vector X = NULL, Y = NULL;
    CK_OK(ctx, hisp_vector_create_columns(ctx, t, n, k, xo, &X));
    CK_OK(ctx, hisp_vector_create(ctx, t, m * k, &Y));
    CK_OK(ctx, hisp_vector_set_columns(Y, k, yo));
    CK_OK(ctx, hisp_vector_write(X, xh));
    CK_OK(ctx, hisp_vector_write(Y, y0));
    bool dbl = hispi_type_scalar_size(t) == 8;
    float af = (float)alpha, bf = (float)beta;
    const void *pa = dbl ? (const void *)&alpha : (const void *)&af;
    const void *pb = dbl ? (const void *)&beta : (const void *)&bf;
    CK_OK(ctx, hisp_spmm(ctx, op, pa, A, X, pb, Y));
    CK_OK(ctx, hisp_vector_read(Y, y));
    double tol = hispi_type_scalar_size(t) == 8 ? 1e-12 : 2e-5;
    for (int64_t j = 0; j < k; j++) {
        double num = 0, den = 0;
        for (int64_t i = 0; i < m; i++)
            for (int c = 0; c < vc; c++) {
                double g = comp(t, y, at(i, j, m, k, yo) * vc + c);
                double r = ref[(j * m + i) * vc + c];
                ck_assert_msg(!isnan(g), "%s: k %lld column %lld row %lld is NaN", what,
                              (long long)k, (long long)j, (long long)i);
                num += (g - r) * (g - r);
                den += r * r;
            }
        double err = den > 0 ? sqrt(num / den) : sqrt(num);
        ck_assert_msg(err <= tol, "%s: op %d k %lld orders %d/%d beta %g column %lld: error %g",
                      what, (int)op, (long long)k, (int)xo, (int)yo, beta, (long long)j, err);
    }
    hisp_vector_destroy(&X);
    hisp_vector_destroy(&Y);
    free(D), free(xh), free(y0), free(y), free(ref);
}

/* the oracle from A's own host arrays */
static void check_product(hisp_context ctx, hisp_matrix A, hisp_op op, int64_t k, hisp_order xo,
                          hisp_order yo, double beta, uint64_t *st, const char *what)
{
    check_image(ctx, A, A, op, k, xo, yo, beta, st, what);
}

/* A matrix with rows of 0..3 entries and, every 97th row, one of `longrow`
 * entries (CUDA: a row longer than a stream block's cap gets blocks of its
 * own; longer than HISP_CUDA_SPLIT it is split), over n columns. */
static hisp_matrix long_rows(hisp_context ctx, hisp_type t, int64_t m, int64_t n, int64_t longrow,
                             uint64_t *st)
{
    int64_t *ptr = malloc((size_t)(m + 1) * sizeof *ptr);
    int64_t cap = m * 3 + (m / 97 + 1) * longrow;
    int32_t *col = malloc((size_t)cap * sizeof *col);
    void *val = malloc((size_t)cap * hisp_type_size(t));
    ck_assert(ptr && col && val);
    int64_t e = 0;
    for (int64_t i = 0; i < m; i++) {
        ptr[i] = e;
        int64_t len = i % 97 == 5 ? longrow : (int64_t)(test_rand(st) % 4);
        if (len > n) len = n;
        int64_t c0 = len == n ? 0 : (int64_t)(test_rand(st) % (uint64_t)(n - len + 1));
        for (int64_t l = 0; l < len; l++, e++) {
            col[e] = (int32_t)(c0 + l);
            put(t, val, e, test_uniform(st));
        }
    }
    ptr[m] = e;
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_create_csr(ctx, t, m, n, ptr, col, val, &A));
    free(ptr), free(col), free(val);
    return A;
}

/* A random CSR matrix of complex entries (about density * m * n of them). */
static hisp_matrix random_complex(hisp_context ctx, hisp_type t, int64_t m, int64_t n,
                                  double density, uint64_t *st)
{
    int64_t nnz = (int64_t)(density * (double)(m * n));
    int32_t *r = malloc((size_t)(nnz + 1) * sizeof *r), *c = malloc((size_t)(nnz + 1) * sizeof *c);
    void *v = malloc((size_t)(nnz + 1) * hisp_type_size(t));
    ck_assert(r && c && v);
    for (int64_t e = 0; e < nnz; e++) {
        r[e] = (int32_t)(test_rand(st) % (uint64_t)m);
        c[e] = (int32_t)(test_rand(st) % (uint64_t)n);
        put(t, v, 2 * e, test_uniform(st));
        put(t, v, 2 * e + 1, test_uniform(st));
    }
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_create_coo(ctx, t, m, n, nnz, r, c, v, &A));
    CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_CSR));
    free(r), free(c), free(v);
    return A;
}

START_TEST(test_real)
{
    hisp_context ctx = test_context(_i);
    uint64_t st = test_seed();
    const hisp_type types[] = {HISP_F32, HISP_F64};
    const int64_t ks[] = {1, 2, 3, 12, 16, 33};
    for (int ti = 0; ti < 2; ti++) {
        hisp_type t = types[ti];
        if (t == HISP_F64 && !test_fp64(ctx)) continue;
        hisp_matrix A = test_random_matrix(ctx, t, 37, 53, 0.08, &st);
        for (int ki = 0; ki < 5; ki++)
            for (int o = 0; o < 4; o++)
                for (int op = 0; op < 3; op++)
                    check_product(ctx, A, (hisp_op)op, ks[ki], (hisp_order)(o & 1),
                                  (hisp_order)(o >> 1), (ki + o + op) % 2 ? -0.5 : 0, &st,
                                  test_label(_i));
        hisp_matrix_destroy(&A);
        /* rows past a CUDA stream block (2048 f64 / 4096 f32 entries) and past
         * a split (8192): blocks of their own, split rows */
        A = long_rows(ctx, t, 400, 20000, 9000, &st);
        for (int o = 0; o < 4; o++) {
            check_product(ctx, A, HISP_OP_N, 3, (hisp_order)(o & 1), (hisp_order)(o >> 1), -0.5,
                          &st, "long rows");
            /* CUDA: several slices of columns (column-major), vector loads (row-major) */
            check_product(ctx, A, HISP_OP_N, 17 - (o & 1), (hisp_order)(o & 1),
                          (hisp_order)(o >> 1), 0, &st, "long rows, k 16 and 17");
            check_product(ctx, A, HISP_OP_T, 4, (hisp_order)(o & 1), (hisp_order)(o >> 1), 0, &st,
                          "long rows, op T");
        }
        hisp_matrix_destroy(&A);
        /* COO and CSC operands (uploaded as CSR), an empty matrix */
        A = test_random_matrix(ctx, t, 20, 20, 0.2, &st);
        CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_CSC));
        check_product(ctx, A, HISP_OP_N, 5, HISP_ORDER_ROW, HISP_ORDER_COL, 0.25, &st, "csc");
        CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_COO));
        check_product(ctx, A, HISP_OP_T, 5, HISP_ORDER_COL, HISP_ORDER_ROW, 0.25, &st, "coo");
        hisp_matrix_destroy(&A);
        A = test_random_matrix(ctx, t, 9, 7, 0, &st);
        check_product(ctx, A, HISP_OP_N, 4, HISP_ORDER_COL, HISP_ORDER_COL, 0.5, &st, "empty");
        hisp_matrix_destroy(&A);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* complex entries: the reference backend computes them; devices refuse */
START_TEST(test_complex)
{
    hisp_context ctx = test_context(_i);
    uint64_t st = test_seed();
    const hisp_type types[] = {HISP_C32, HISP_C64};
    for (int ti = 0; ti < 2; ti++) {
        hisp_matrix A = random_complex(ctx, types[ti], 23, 31, 0.1, &st);
        if (test_on_device(_i)) { /* column by column through the SpMV; row-major refused */
            for (int op = 0; op < 3; op++)
                check_product(ctx, A, (hisp_op)op, 3, HISP_ORDER_COL, HISP_ORDER_COL,
                              op == 1 ? 0 : 0.75, &st, "complex by columns");
            hisp_vector X = NULL, Y = NULL;
            const double one = 1;
            const float onef = 1;
            const void *p = types[ti] == HISP_C64 ? (const void *)&one : (const void *)&onef;
            CK_OK(ctx, hisp_vector_create_columns(ctx, types[ti], 31, 3, HISP_ORDER_ROW, &X));
            CK_OK(ctx, hisp_vector_create_columns(ctx, types[ti], 23, 3, HISP_ORDER_COL, &Y));
            ck_assert_int_eq(hisp_spmm(ctx, HISP_OP_N, p, A, X, p, Y), HISP_ERR_UNSUPPORTED);
            hisp_vector_destroy(&X);
            hisp_vector_destroy(&Y);
        } else {
            for (int op = 0; op < 3; op++)
                for (int o = 0; o < 4; o++)
                    check_product(ctx, A, (hisp_op)op, 1 + o * 5, (hisp_order)(o & 1),
                                  (hisp_order)(o >> 1), o % 2 ? 0 : 0.75, &st, "complex");
        }
        hisp_matrix_destroy(&A);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* the kernels a small matrix or a CPU device would not take (the SpMV's
 * test hooks, read at upload): 64-bit row pointers; op T by the atomic
 * scatter and by the transposed copy; OpenCL's vector and block families */
START_TEST(test_variants)
{
    hisp_context ctx = test_context(_i);
    uint64_t st = test_seed();
    const hispi_spmv_hooks hooks[] = {{0, 1, 0}, {0, 2, 1}, {2, 1, 0}, {3, 2, 0}, {3, 1, 1}};
    const hisp_type t = test_fp64(ctx) ? HISP_F64 : HISP_F32;
    for (size_t h = 0; h < sizeof hooks / sizeof *hooks; h++) {
        hispi_spmv_hook = hooks[h];
        hisp_matrix A = long_rows(ctx, t, 300, 9000, 5000, &st);
        for (int o = 0; o < 4; o++) {
            check_product(ctx, A, HISP_OP_N, 6, (hisp_order)(o & 1), (hisp_order)(o >> 1), 0.5, &st,
                          "hooks");
            check_product(ctx, A, HISP_OP_T, 3, (hisp_order)(o & 1), (hisp_order)(o >> 1), 0, &st,
                          "hooks, op T");
        }
        hisp_matrix_destroy(&A);
        hispi_spmv_hook = (hispi_spmv_hooks){0};
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* SELL and HiSparse (A^T x without forming it) by columns, column-major */
START_TEST(test_formats)
{
    hisp_context ctx = test_context(_i);
    uint64_t st = test_seed();
    const hisp_type t = test_fp64(ctx) ? HISP_F64 : HISP_F32;
    const hisp_format fs[] = {HISP_FORMAT_SELL, HISP_FORMAT_HISPARSE};
    for (int fi = 0; fi < 2; fi++) {
        hisp_matrix A = test_random_matrix(ctx, t, 150, 90, 0.05, &st);
        hisp_matrix C = NULL; /* A in SELL or HiSparse; the oracle reads A's arrays */
        CK_OK(ctx, hisp_matrix_duplicate(A, fs[fi], &C));
        for (int op = 0; op < 2; op++)
            check_image(ctx, C, A, (hisp_op)op, 5, HISP_ORDER_COL, HISP_ORDER_COL, op ? 0 : -0.5,
                        &st, fi ? "hisparse" : "sell");
        TEST_DESTROY_MATRICES(&A, &C);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

static hisp_status status_with(hisp_context ctx, hisp_status s, const char *needle)
{
    if (s && needle) {
        hisp_error_info e = {0};
        ck_assert(hisp_context_last_error(ctx, &e) == HISP_SUCCESS && e.status == s);
        ck_assert_msg(e.message && strstr(e.message, needle), "message '%s' lacks '%s'",
                      e.message ? e.message : "", needle);
    }
    return s;
}

START_TEST(test_errors)
{
    hisp_context ctx = test_context(_i);
    uint64_t st = test_seed();
    hisp_matrix A = test_random_matrix(ctx, HISP_F64, 10, 12, 0.3, &st);
    hisp_vector X = NULL, Y = NULL, Z = NULL, V = NULL;
    const double one = 1;
    int64_t k = 0;
    hisp_order o = HISP_ORDER_ROW;
    CK_OK(ctx, hisp_vector_create_columns(ctx, HISP_F64, 12, 4, HISP_ORDER_ROW, &X));
    CK_OK(ctx, hisp_vector_create_columns(ctx, HISP_F64, 10, 3, HISP_ORDER_COL, &Y));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, 10, &V));
    /* shapes */
    CK_OK(ctx, hisp_vector_columns(V, &k, &o));
    ck_assert(k == 1 && o == HISP_ORDER_COL);
    CK_OK(ctx, hisp_vector_columns(X, &k, &o));
    ck_assert(k == 4 && o == HISP_ORDER_ROW);
    ck_assert_int_eq(status_with(ctx, hisp_vector_set_columns(V, 3, HISP_ORDER_COL), "multiple"),
                     HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_vector_set_columns(V, 0, HISP_ORDER_COL), HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_vector_set_columns(V, 2, (hisp_order)7), HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_vector_create_columns(ctx, HISP_F64, 5, 0, HISP_ORDER_COL, &Z),
                     HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(
        hisp_vector_create_columns(ctx, HISP_F64, INT64_MAX / 2, 3, HISP_ORDER_COL, &Z),
        HISP_ERR_INVALID_ARGUMENT);
    ck_assert(Z == NULL);
    /* the product's arguments */
    ck_assert_int_eq(status_with(ctx, hisp_spmm(ctx, HISP_OP_N, &one, A, X, &one, Y), "columns"),
                     HISP_ERR_INVALID_ARGUMENT);
    CK_OK(ctx, hisp_vector_set_columns(Y, 5, HISP_ORDER_ROW)); /* 30 entries: 6 rows of 5 */
    CK_OK(ctx, hisp_vector_create_columns(ctx, HISP_F64, 12, 3, HISP_ORDER_COL, &Z));
    CK_OK(ctx, hisp_vector_set_columns(Y, 3, HISP_ORDER_COL));
    ck_assert_int_eq(status_with(ctx, hisp_spmm(ctx, HISP_OP_T, &one, A, Z, &one, Y), "rows"),
                     HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_spmm(ctx, HISP_OP_N, NULL, A, Z, &one, Y), HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_spmm(ctx, HISP_OP_N, &one, A, Z, NULL, Y), HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_spmm(ctx, (hisp_op)9, &one, A, Z, &one, Y), HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_spmm(ctx, HISP_OP_N, &one, NULL, Z, &one, Y), HISP_ERR_INVALID_HANDLE);
    hisp_matrix S = test_random_matrix(ctx, HISP_F64, 12, 12, 0.3, &st);
    hisp_vector W = NULL;
    CK_OK(ctx, hisp_vector_create_columns(ctx, HISP_F64, 12, 3, HISP_ORDER_COL, &W));
    ck_assert_int_eq(status_with(ctx, hisp_spmm(ctx, HISP_OP_N, &one, S, W, &one, W), "differ"),
                     HISP_ERR_INVALID_ARGUMENT);
    hisp_vector F = NULL;
    CK_OK(ctx, hisp_vector_create_columns(ctx, HISP_F32, 12, 3, HISP_ORDER_COL, &F));
    ck_assert_int_eq(status_with(ctx, hisp_spmm(ctx, HISP_OP_N, &one, S, F, &one, W), "types"),
                     HISP_ERR_INVALID_ARGUMENT);
    CK_OK(ctx, hisp_spmm(ctx, HISP_OP_N, &one, S, Z, &one, W)); /* well-formed */
    /* formats without an SpMM kernel run by columns; row-major refused, named */
    hisp_vector R = NULL;
    CK_OK(ctx, hisp_vector_create_columns(ctx, HISP_F64, 12, 3, HISP_ORDER_ROW, &R));
    CK_OK(ctx, hisp_matrix_convert(S, HISP_FORMAT_SELL));
    ck_assert_int_eq(status_with(ctx, hisp_spmm(ctx, HISP_OP_N, &one, S, R, &one, W), "sell"),
                     HISP_ERR_UNSUPPORTED);
    CK_OK(ctx, hisp_matrix_convert(S, HISP_FORMAT_HISPARSE));
    ck_assert_int_eq(
        status_with(ctx, hisp_spmm(ctx, HISP_OP_N, &one, S, Z, &one, R), "column-major"),
        HISP_ERR_UNSUPPORTED);
    hisp_vector_destroy(&R);
    hisp_vector *vs[] = {&X, &Y, &Z, &V, &W, &F};
    for (size_t i = 0; i < sizeof vs / sizeof *vs; i++)
        hisp_vector_destroy(vs[i]);
    TEST_DESTROY_MATRICES(&A, &S);
    hisp_context_destroy(&ctx);
}
END_TEST

/* an allocation that fails anywhere in a first product on a fresh context
 * (the upload of A, X, Y, the backend's state) leaves Y as it was */
START_TEST(test_alloc_failures)
{
    uint64_t st = test_seed();
    int64_t m = 30, n = 25, k = 4;
    double *x = malloc((size_t)(n * k) * 8), *y0 = malloc((size_t)(m * k) * 8);
    double *y = malloc((size_t)(m * k) * 8);
    ck_assert(x && y0 && y);
    test_fill_uniform(HISP_F64, x, n * k, &st);
    test_fill_uniform(HISP_F64, y0, m * k, &st);
    int fails = 0, done = 0;
    for (long f = 1; f < 80 && !done; f++) {
        hisp_context ctx = test_context(_i);
        if (!test_fp64(ctx)) {
            hisp_context_destroy(&ctx);
            break;
        }
        hisp_matrix A = test_random_matrix(ctx, HISP_F64, m, n, 0.2, &st);
        hisp_vector X = NULL, Y = NULL;
        CK_OK(ctx, hisp_vector_create_columns(ctx, HISP_F64, n, k, HISP_ORDER_ROW, &X));
        CK_OK(ctx, hisp_vector_create_columns(ctx, HISP_F64, m, k, HISP_ORDER_COL, &Y));
        CK_OK(ctx, hisp_vector_write(X, x));
        CK_OK(ctx, hisp_vector_write(Y, y0));
        const double a = 2, b = 1;
        hispi_alloc_fail_after(f);
        hisp_status s = hisp_spmm(ctx, HISP_OP_N, &a, A, X, &b, Y);
        hispi_alloc_fail_after(0);
        if (s) {
            ck_assert_int_eq(s, HISP_ERR_OUT_OF_HOST_MEMORY);
            fails++;
            CK_OK(ctx, hisp_vector_read(Y, y));
            ck_assert_msg(!memcmp(y, y0, (size_t)(m * k) * 8), "Y changed by a failure at %ld", f);
            /* the operands stay usable */
            CK_OK(ctx, hisp_spmm(ctx, HISP_OP_N, &a, A, X, &b, Y));
        } else {
            done = 1;
        }
        hisp_vector_destroy(&X);
        hisp_vector_destroy(&Y);
        hisp_matrix_destroy(&A);
        hisp_context_destroy(&ctx);
    }
    ck_assert_msg(done, "no product finished within 80 allocations (%d failures)", fails);
    free(x), free(y0), free(y);
}
END_TEST

Suite *suite_spmm(void)
{
    Suite *s = suite_create("spmm");
    TCase *tc = test_tcase(s, "spmm", 600);
    int n = test_targets(NULL);
    tcase_add_loop_test(tc, test_real, 0, n);
    tcase_add_loop_test(tc, test_complex, 0, n);
    tcase_add_loop_test(tc, test_variants, 0, n);
    tcase_add_loop_test(tc, test_formats, 0, n);
    tcase_add_loop_test(tc, test_errors, 0, n);
    tcase_add_loop_test(tc, test_alloc_failures, 0, n);
    return s;
}
