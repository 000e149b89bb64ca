/* HiSparse on the host: construction and exact round trips, node types,
 * O(1) transpose / scale, reference SpMV and add, files, copy-on-write edits. */
#include "testutil.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A sorted CSR copy of A (its own handle) and its arrays. */
typedef struct {
    hisp_matrix M;
    hisp_matrix_info info;
    const int64_t *ptr;
    const int32_t *cols;
    const void *vals;
} csr_copy;

static csr_copy csr_of(hisp_context ctx, hisp_matrix A)
{
    csr_copy c = {0};
    CK_OK(ctx, hisp_matrix_duplicate(A, HISP_FORMAT_CSR, &c.M));
    CK_OK(ctx, hisp_matrix_get_info(c.M, &c.info));
    CK_OK(ctx, hisp_matrix_host_arrays(c.M, &c.ptr, NULL, &c.cols, &c.vals));
    return c;
}

/* Exact equality (structure and value bytes) of two matrices as shown. */
static void assert_same(hisp_context ctx, hisp_matrix A, hisp_matrix B, const char *what)
{
    csr_copy a = csr_of(ctx, A), b = csr_of(ctx, B);
    ck_assert_msg(a.info.nrows == b.info.nrows && a.info.ncols == b.info.ncols,
                  "%s: sizes %lldx%lld vs %lldx%lld", what, (long long)a.info.nrows,
                  (long long)a.info.ncols, (long long)b.info.nrows, (long long)b.info.ncols);
    ck_assert_msg(a.info.nnz == b.info.nnz, "%s: nnz %lld vs %lld", what, (long long)a.info.nnz,
                  (long long)b.info.nnz);
    ck_assert_msg(memcmp(a.ptr, b.ptr, (size_t)(a.info.nrows + 1) * 8) == 0, "%s: row pointers",
                  what);
    ck_assert_msg(a.info.nnz == 0 || memcmp(a.cols, b.cols, (size_t)a.info.nnz * 4) == 0,
                  "%s: column indices", what);
    ck_assert_msg(a.info.nnz == 0 ||
                      memcmp(a.vals, b.vals, (size_t)a.info.nnz * hisp_type_size(a.info.type)) == 0,
                  "%s: values", what);
    hisp_matrix_destroy(&a.M);
    hisp_matrix_destroy(&b.M);
}

/* H = A in HiSparse with node size d (A untouched). */
static hisp_matrix to_hisparse(hisp_context ctx, hisp_matrix A, int d)
{
    hisp_matrix H = NULL;
    CK_OK(ctx, hisp_matrix_set_node_size(A, d));
    CK_OK(ctx, hisp_matrix_duplicate(A, HISP_FORMAT_HISPARSE, &H));
    hisp_matrix_info info;
    CK_OK(ctx, hisp_matrix_get_info(H, &info));
    ck_assert_int_eq(info.format, HISP_FORMAT_HISPARSE);
    return H;
}

static int64_t seen_types[9];

static void roundtrip(hisp_context ctx, hisp_matrix A, int d, const char *what)
{
    hisp_matrix H = to_hisparse(ctx, A, d);
    char msg[256];
    snprintf(msg, sizeof msg, "%s, d = %d", what, d);
    assert_same(ctx, A, H, msg);
    hisp_hisparse_profile p;
    CK_OK(ctx, hisp_matrix_hisparse_profile(H, &p));
    for (int t = 1; t < 9; t++)
        seen_types[t] += p.nodes[t];
    uint64_t bytes = 0, measured = 0;
    hisp_matrix_info info;
    CK_OK(ctx, hisp_matrix_get_info(H, &info));
    CK_OK(ctx, hisp_matrix_format_bytes(H, HISP_FORMAT_HISPARSE, info.type, &bytes));
    CK_OK(ctx, hisp_matrix_format_bytes(A, HISP_FORMAT_HISPARSE, info.type, &measured));
    ck_assert_msg(bytes == p.bytes && bytes == measured && bytes == p.pool_used,
                  "%s: bytes %llu, profile %llu, size pass %llu, pool %llu", msg,
                  (unsigned long long)bytes, (unsigned long long)p.bytes,
                  (unsigned long long)measured, (unsigned long long)p.pool_used);
    /* in place, both ways */
    hisp_matrix B = NULL;
    CK_OK(ctx, hisp_matrix_duplicate(A, HISP_FORMAT_COO, &B));
    CK_OK(ctx, hisp_matrix_set_node_size(B, d));
    CK_OK(ctx, hisp_matrix_convert(B, HISP_FORMAT_HISPARSE));
    CK_OK(ctx, hisp_matrix_convert(B, HISP_FORMAT_CSC));
    CK_OK(ctx, hisp_matrix_convert(B, HISP_FORMAT_HISPARSE));
    CK_OK(ctx, hisp_matrix_convert(B, HISP_FORMAT_COO));
    assert_same(ctx, A, B, msg);
    hisp_matrix_destroy(&B);
    hisp_matrix_destroy(&H);
}

START_TEST(test_roundtrip_shapes)
{
    uint64_t st = test_seed() + 301;
    hisp_context ctx = NULL;
    ck_assert_int_eq(hisp_context_create(&ctx), HISP_SUCCESS);
    /* empty, single rows/cols, not powers of d, exactly d, d + 1 */
    int64_t shapes[][2] = {{0, 0},   {0, 7},     {1, 1},      {1, 300},  {300, 1},
                           {4, 4},   {5, 5},     {16, 17},    {37, 53},  {100, 64},
                           {129, 3}, {257, 255}, {1000, 999}, {4097, 70}};
    int ds[] = {4, 8, 16, 128, 256};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int ty = 0; ty < 2; ty++) {
            hisp_type t = ty ? HISP_F64 : HISP_F32;
            double dens = shapes[s][0] * shapes[s][1] > 10000 ? 0.01 : 0.2;
            hisp_matrix A = test_random_matrix(ctx, t, shapes[s][0], shapes[s][1], dens, &st);
            for (size_t k = 0; k < sizeof ds / sizeof ds[0]; k++) {
                char what[128];
                snprintf(what, sizeof what, "%lldx%lld %s", (long long)shapes[s][0],
                         (long long)shapes[s][1], hisp_type_name(t));
                roundtrip(ctx, A, ds[k], what);
            }
            hisp_matrix_destroy(&A);
        }
    hisp_context_destroy(&ctx);
}
END_TEST

/* Structured inputs from the generators, including explicit zeros. */
START_TEST(test_roundtrip_structured)
{
    hisp_context ctx = NULL;
    ck_assert_int_eq(hisp_context_create(&ctx), HISP_SUCCESS);
    for (int k = 0; k < HISP_GEN_COUNT; k++) {
        hisp_gen_params p;
        hisp_gen_defaults((hisp_gen_kind)k, &p);
        p.seed = test_seed();
        if (k == HISP_GEN_POISSON2D)
            p.n = 70;
        else if (k == HISP_GEN_POISSON3D)
            p.n = 17;
        else if (k == HISP_GEN_RMAT)
            p.scale = 11;
        else if (k == HISP_GEN_DENSE)
            p.n = 90;
        else
            p.n = 3000;
        for (int ty = 0; ty < 2; ty++) {
            hisp_matrix A = NULL;
            hisp_type t = ty ? HISP_F64 : HISP_F32;
            CK_OK(ctx, hisp_matrix_generate(ctx, &p, t, &A));
            int ds[] = {4, 16, 128, 256};
            for (size_t j = 0; j < 4; j++)
                roundtrip(ctx, A, ds[j], hisp_gen_name(p.kind));
            hisp_matrix_destroy(&A);
        }
    }
    /* explicit zeros in an otherwise full block: must come back as entries */
    int32_t r[64], c[64];
    double v[64];
    for (int k = 0; k < 64; k++) {
        r[k] = k / 8;
        c[k] = k % 8;
        v[k] = k % 5 == 0 ? 0.0 : k + 0.5;
    }
    v[3] = -0.0;
    hisp_matrix Z = NULL;
    CK_OK(ctx, hisp_matrix_create_coo(ctx, HISP_F64, 8, 8, 64, r, c, v, &Z));
    roundtrip(ctx, Z, 4, "explicit zeros");
    roundtrip(ctx, Z, 8, "explicit zeros");
    hisp_matrix_destroy(&Z);
    /* every node type appeared somewhere */
    for (int t = 1; t < 9; t++)
        ck_assert_msg(seen_types[t] > 0, "node type %d never built", t);
    hisp_context_destroy(&ctx);
}
END_TEST

/* The real matrices in ../shared/matrices. */
START_TEST(test_roundtrip_real)
{
    const char *dir = test_matrix_dir();
    if (!dir) {
        test_skip("hisparse real-matrix round trips: no matrix folder");
        return;
    }
    hisp_context ctx = NULL;
    ck_assert_int_eq(hisp_context_create(&ctx), HISP_SUCCESS);
    DIR *dd = opendir(dir);
    ck_assert_ptr_nonnull(dd);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(dd))) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".mtx") != 0) continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        hisp_matrix A = NULL;
        if (hisp_matrix_read_mtx(ctx, path, n % 2 ? HISP_F32 : HISP_F64, &A, NULL)) /* complex */
            CK_OK(ctx, hisp_matrix_read_mtx(ctx, path, n % 2 ? HISP_C32 : HISP_C64, &A, NULL));
        roundtrip(ctx, A, n % 3 == 0 ? 128 : n % 3 == 1 ? 16 : 256, e->d_name);
        hisp_matrix_destroy(&A);
        n++;
    }
    closedir(dd);
    ck_assert_int_gt(n, 0);
    hisp_context_destroy(&ctx);
}
END_TEST

/* y = alpha*op(H)*x + beta*y on a transposed and scaled HiSparse matrix
 * against the CSR reference on the same (transposed, scaled) matrix. */
static void check_spmv(hisp_context ctx, hisp_matrix H, hisp_matrix R, hisp_type t, uint64_t *st)
{
    hisp_matrix_info info;
    CK_OK(ctx, hisp_matrix_get_info(H, &info));
    size_t es = hisp_type_size(t);
    for (int op = 0; op < 2; op++) {
        int64_t m = op ? info.ncols : info.nrows, n = op ? info.nrows : info.ncols;
        void *x = malloc((size_t)(n + 1) * es), *y0 = malloc((size_t)(m + 1) * es);
        void *y1 = malloc((size_t)(m + 1) * es), *y2 = malloc((size_t)(m + 1) * es);
        for (int64_t i = 0; i < n; i++) {
            if (t == HISP_F32)
                ((float *)x)[i] = (float)test_uniform(st);
            else
                ((double *)x)[i] = test_uniform(st);
        }
        for (int64_t i = 0; i < m; i++) {
            if (t == HISP_F32)
                ((float *)y0)[i] = (float)test_uniform(st);
            else
                ((double *)y0)[i] = test_uniform(st);
        }
        float af = 1.5f, bf = -0.75f;
        double ad = 1.5, bd = -0.75;
        const void *alpha = t == HISP_F32 ? (const void *)&af : (const void *)&ad;
        const void *beta = t == HISP_F32 ? (const void *)&bf : (const void *)&bd;
        hisp_vector xv = NULL, yv = NULL;
        CK_OK(ctx, hisp_vector_create(ctx, t, n, &xv));
        CK_OK(ctx, hisp_vector_create(ctx, t, m, &yv));
        CK_OK(ctx, hisp_vector_write(xv, x));
        CK_OK(ctx, hisp_vector_write(yv, y0));
        CK_OK(ctx, hisp_spmv(ctx, (hisp_op)op, alpha, H, xv, beta, yv));
        CK_OK(ctx, hisp_vector_read(yv, y1));
        CK_OK(ctx, hisp_vector_write(yv, y0));
        CK_OK(ctx, hisp_spmv(ctx, (hisp_op)op, alpha, R, xv, beta, yv));
        CK_OK(ctx, hisp_vector_read(yv, y2));
        double err = test_rel_error(t, y1, y2, m);
        ck_assert_msg(err < (t == HISP_F32 ? 1e-5 : 1e-13), "op %d: relative error %g", op, err);
        hisp_matrix_info after;
        CK_OK(ctx, hisp_matrix_get_info(H, &after));
        ck_assert_int_eq(after.format, HISP_FORMAT_HISPARSE); /* not converted behind our back */
        hisp_vector_destroy(&xv);
        hisp_vector_destroy(&yv);
        free(x);
        free(y0);
        free(y1);
        free(y2);
    }
}

START_TEST(test_spmv_transpose_scale)
{
    uint64_t st = test_seed() + 77;
    hisp_context ctx = NULL;
    ck_assert_int_eq(hisp_context_create(&ctx), HISP_SUCCESS);
    int64_t shapes[][2] = {{1, 1}, {37, 530}, {300, 20}, {700, 700}, {0, 5}};
    int ds[] = {4, 128, 256, 8, 16};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int ty = 0; ty < 2; ty++) {
            hisp_type t = ty ? HISP_F64 : HISP_F32;
            hisp_matrix A = test_random_matrix(ctx, t, shapes[s][0], shapes[s][1], 0.05, &st);
            hisp_matrix H = to_hisparse(ctx, A, ds[s]);
            hisp_matrix R = NULL;
            CK_OK(ctx, hisp_matrix_duplicate(A, HISP_FORMAT_CSR, &R));
            check_spmv(ctx, H, R, t, &st); /* plain */
            float hf = 0.5f, mf = -3.0f;
            double hd = 0.5, md = -3.0;
            CK_OK(ctx, hisp_matrix_transpose(H));
            CK_OK(ctx, hisp_matrix_transpose(R));
            check_spmv(ctx, H, R, t, &st); /* transposed */
            CK_OK(ctx, hisp_matrix_scale(H, t == HISP_F32 ? (void *)&hf : (void *)&hd));
            CK_OK(ctx, hisp_matrix_scale(R, t == HISP_F32 ? (void *)&hf : (void *)&hd));
            check_spmv(ctx, H, R, t, &st); /* transposed and scaled */
            CK_OK(ctx, hisp_matrix_transpose(H));
            CK_OK(ctx, hisp_matrix_transpose(R));
            CK_OK(ctx, hisp_matrix_scale(H, t == HISP_F32 ? (void *)&mf : (void *)&md));
            CK_OK(ctx, hisp_matrix_scale(R, t == HISP_F32 ? (void *)&mf : (void *)&md));
            check_spmv(ctx, H, R, t, &st); /* scaled twice */
            /* conversions honour the state: same entries as the reference */
            assert_same(ctx, H, R, "state in conversion");
            hisp_matrix_destroy(&A);
            hisp_matrix_destroy(&H);
            hisp_matrix_destroy(&R);
        }
    hisp_context_destroy(&ctx);
}
END_TEST

Suite *suite_hisparse(void)
{
    Suite *s = suite_create("hisparse");
    TCase *tc = tcase_create("build");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_roundtrip_shapes);
    tcase_add_test(tc, test_roundtrip_structured);
    tcase_add_test(tc, test_roundtrip_real);
    tcase_add_test(tc, test_spmv_transpose_scale);
    suite_add_tcase(s, tc);
    return s;
}
