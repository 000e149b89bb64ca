/* Matrix Market reader and writer: every field and symmetry, layout
 * variants, array files, vectors, exact round trips, malformed input with
 * its line number, I/O errors, and the real matrices of ../shared/matrices. */
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <time.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------ */

static hisp_status read_str(hisp_context ctx, const char *text, hisp_type t, hisp_matrix *A,
                            hisp_mtx_header *h)
{
    return hisp_matrix_read_mtx_buffer(ctx, text, strlen(text), "test.mtx", t, A, h);
}

/* Compare a matrix with an expected dense image given as rows of (re, im). */
static void expect_dense(hisp_matrix A, int64_t m, int64_t n, const double *want, const char *what)
{
    int64_t mm, nn;
    double *d = test_dense_image(A, 2, &mm, &nn); /* (re, im) */
    ck_assert_msg(mm == m && nn == n, "%s: size %lldx%lld, expected %lldx%lld", what, (long long)mm,
                  (long long)nn, (long long)m, (long long)n);
    for (int64_t i = 0; i < m * n * 2; i++)
        ck_assert_msg(d[i] == want[i], "%s: entry (%lld,%lld) %s part is %g, expected %g", what,
                      (long long)(i / 2 / n) + 1, (long long)(i / 2 % n) + 1,
                      i % 2 ? "imaginary" : "real", d[i], want[i]);
    free(d);
}

static int64_t nnz_of(hisp_matrix A)
{
    hisp_matrix_info info;
    ck_assert_int_eq(hisp_matrix_get_info(A, &info), HISP_SUCCESS);
    return info.nnz;
}

static char tmpdir[256];

static void make_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/hisp_mmio_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
    DIR *d = opendir(tmpdir);
    if (!d) return;
    struct dirent *e;
    char p[600];
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        snprintf(p, sizeof p, "%s/%s", tmpdir, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(tmpdir);
}

/* ---- fields and symmetries ----------------------------------------------- */

START_TEST(test_fields_and_symmetries)
{
    hisp_context ctx = test_default_context();
    hisp_matrix A = NULL;
    hisp_mtx_header h;
    static const struct {
        const char *text;
        hisp_type type;
        int64_t m, n, nnz; /* nnz after expansion */
        const char *field, *sym;
        double want[18]; /* dense rows of (re, im), up to 3x3 */
    } cases[] = {
        {"%%MatrixMarket matrix coordinate real general\n3 3 4\n1 1 1.5\n3 1 -2\n2 3 4e2\n"
         "1 3 0.25\n",
         HISP_F64,
         3,
         3,
         4,
         "real",
         "general",
         {1.5, 0, 0, 0, 0.25, 0, 0, 0, 0, 0, 400, 0, -2, 0, 0, 0, 0, 0}},
        {"%%MatrixMarket matrix coordinate double general\n2 3 2\n2 3 7\n1 2 -1\n",
         HISP_F32,
         2,
         3,
         2,
         "double",
         "general",
         {0, 0, -1, 0, 0, 0, 0, 0, 0, 0, 7, 0}},
        {"%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 1\n2 1 2\n3 2 3\n3 3 4\n",
         HISP_F64,
         3,
         3,
         6,
         "real",
         "symmetric",
         {1, 0, 2, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 3, 0, 4, 0}},
        {"%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 2\n3 1 -5\n",
         HISP_F64,
         3,
         3,
         4,
         "real",
         "skew-symmetric",
         {0, 0, -2, 0, 5, 0, 2, 0, 0, 0, 0, 0, -5, 0, 0, 0, 0, 0}},
        {"%%MatrixMarket matrix coordinate integer symmetric\n2 2 2\n1 1 123456789012\n"
         "2 1 -7\n",
         HISP_F64,
         2,
         2,
         3,
         "integer",
         "symmetric",
         {123456789012.0, 0, -7, 0, -7, 0, 0, 0}},
        {"%%MatrixMarket matrix coordinate integer general\n1 2 2\n1 1 +3\n1 2 -0\n",
         HISP_F32,
         1,
         2,
         2,
         "integer",
         "general",
         {3, 0, 0, 0}},
        {"%%MatrixMarket matrix coordinate pattern general\n2 2 2\n1 2\n2 1\n",
         HISP_F64,
         2,
         2,
         2,
         "pattern",
         "general",
         {0, 0, 1, 0, 1, 0, 0, 0}},
        {"%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n1 1\n3 1\n3 2\n",
         HISP_F32,
         3,
         3,
         5,
         "pattern",
         "symmetric",
         {1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 1, 0, 1, 0, 0, 0}},
        {"%%MatrixMarket matrix coordinate complex general\n2 2 2\n1 2 1 -2\n2 2 0.5 3\n",
         HISP_C64,
         2,
         2,
         2,
         "complex",
         "general",
         {0, 0, 1, -2, 0, 0, 0.5, 3}},
        {"%%MatrixMarket matrix coordinate complex hermitian\n2 2 2\n1 1 2 0\n2 1 1 3\n",
         HISP_C64,
         2,
         2,
         3,
         "complex",
         "hermitian",
         {2, 0, 1, -3, 1, 3, 0, 0}},
        {"%%MatrixMarket matrix coordinate complex symmetric\n2 2 1\n2 1 1 3\n",
         HISP_C32,
         2,
         2,
         2,
         "complex",
         "symmetric",
         {0, 0, 1, 3, 1, 3, 0, 0}},
        {"%%MatrixMarket matrix coordinate complex skew-symmetric\n2 2 1\n2 1 1 3\n",
         HISP_C64,
         2,
         2,
         2,
         "complex",
         "skew-symmetric",
         {0, 0, -1, -3, 1, 3, 0, 0}},
        /* real hermitian is symmetric (conj(x) = x) */
        {"%%MatrixMarket matrix coordinate real hermitian\n2 2 1\n2 1 4\n",
         HISP_F64,
         2,
         2,
         2,
         "real",
         "hermitian",
         {0, 0, 4, 0, 4, 0, 0, 0}},
        /* real and pattern files read into complex types with zero imaginary parts */
        {"%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n2 1 -1.5\n2 2 8\n",
         HISP_C64,
         2,
         2,
         3,
         "real",
         "symmetric",
         {0, 0, -1.5, 0, -1.5, 0, 8, 0}},
        {"%%MatrixMarket matrix coordinate pattern general\n1 1 1\n1 1\n",
         HISP_C32,
         1,
         1,
         1,
         "pattern",
         "general",
         {1, 0}},
        /* duplicates are kept (and summed by the conversions) */
        {"%%MatrixMarket matrix coordinate real general\n1 1 2\n1 1 1\n1 1 2\n",
         HISP_F64,
         1,
         1,
         2,
         "real",
         "general",
         {3, 0}},
        /* empty */
        {"%%MatrixMarket matrix coordinate real general\n0 0 0\n",
         HISP_F64,
         0,
         0,
         0,
         "real",
         "general",
         {0}},
        {"%%MatrixMarket matrix coordinate real general\n2 3 0\n",
         HISP_F64,
         2,
         3,
         0,
         "real",
         "general",
         {0}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char what[64];
        snprintf(what, sizeof what, "case %zu (%s %s)", c, cases[c].field, cases[c].sym);
        CK_OK(ctx, read_str(ctx, cases[c].text, cases[c].type, &A, &h));
        ck_assert_str_eq(h.field, cases[c].field);
        ck_assert_str_eq(h.symmetry, cases[c].sym);
        ck_assert_int_eq(h.is_array, 0);
        ck_assert_msg(nnz_of(A) == cases[c].nnz, "%s: nnz %lld, expected %lld", what,
                      (long long)nnz_of(A), (long long)cases[c].nnz);
        hisp_matrix_info info;
        CK_OK(ctx, hisp_matrix_get_info(A, &info));
        ck_assert_int_eq(info.type, cases[c].type);
        expect_dense(A, cases[c].m, cases[c].n, cases[c].want, what);
        /* the same after conversion to CSR (duplicates summed) */
        CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_CSR));
        expect_dense(A, cases[c].m, cases[c].n, cases[c].want, what);
        hisp_matrix_destroy(&A);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

START_TEST(test_type_rules)
{
    hisp_context ctx = test_default_context();
    hisp_matrix A = NULL;
    hisp_error_info e;
    const char *cplx = "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 2\n";
    const char *real = "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1\n";
    ck_assert_int_eq(read_str(ctx, cplx, HISP_F64, &A, NULL), HISP_ERR_INPUT_FORMAT);
    ck_assert_ptr_null(A);
    CK_OK(ctx, hisp_context_last_error(ctx, &e));
    ck_assert_ptr_nonnull(strstr(e.message, "complex file: read it with type c32 or c64"));
    ck_assert_int_eq(e.line, 1);
    ck_assert_int_eq(read_str(ctx, cplx, HISP_F32, &A, NULL), HISP_ERR_INPUT_FORMAT);
    /* issue 6: real files read into quaternions (w) and, with dimensions
     * divisible by 3, into 3x3 blocks (check_compound.c has the details) */
    CK_OK(ctx, read_str(ctx, real, HISP_Q32, &A, NULL));
    hisp_matrix_destroy(&A);
    ck_assert_int_eq(read_str(ctx, real, HISP_B3X3_F64, &A, NULL), HISP_ERR_INPUT_FORMAT);
    ck_assert_int_eq(read_str(ctx, real, (hisp_type)77, &A, NULL), HISP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(A);
    /* float precision: the double is rounded once to float */
    CK_OK(ctx, read_str(ctx,
                        "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 "
                        "0.1000000000000000055511151231257827\n",
                        HISP_F32, &A, NULL));
    const void *v;
    CK_OK(ctx, hisp_matrix_host_arrays(A, NULL, NULL, NULL, &v));
    ck_assert(((const float *)v)[0] == 0.1f);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

/* Layout: CRLF, tabs, runs of spaces, comments and blank lines anywhere after
 * the banner, case-insensitive keywords, a BOM, no final newline, and a
 * buffer that is not NUL-terminated. */
START_TEST(test_layout_variants)
{
    hisp_context ctx = test_default_context();
    hisp_matrix A = NULL;
    hisp_mtx_header h;
    const double want[] = {1.5, 0, 0, 0, 0, 0, -2, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0};
    const char *texts[] = {
        "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1.5\n2 1 -2\n2 3 3\n",
        "%%MatrixMarket matrix coordinate real general\r\n% comment\r\n3 3 3\r\n1 1 1.5\r\n"
        "2 1 -2\r\n2 3 3\r\n",
        "%%MatrixMarket\tmatrix  coordinate\t real   general  \n%\n\n   \n% c\n  3\t3 \t3  \n"
        "\t1\t1\t1.5\t\n\n% between entries\n 2  1  -2\n\n2 3 3",
        "%%MATRIXMARKET MATRIX COORDINATE REAL GENERAL\n3 3 3\n1 1 15e-1\n2 1 -2.0\n2 3 +3\n",
        "%%matrixmarket Matrix Coordinate Real General\n3 3 3\n1 1 1.5\n2 1 -2\n2 3 3\n\n\n",
        "\xEF\xBB\xBF%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1.5\n2 1 -2\n"
        "2 3 3\n% trailing comment\n",
        "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 .15E1\n2 1 -2\n2 3 3.\n",
    };
    for (size_t c = 0; c < sizeof texts / sizeof texts[0]; c++) {
        char what[32];
        snprintf(what, sizeof what, "layout %zu", c);
        CK_OK(ctx, read_str(ctx, texts[c], HISP_F64, &A, &h));
        ck_assert_str_eq(h.field, "real");
        ck_assert_str_eq(h.symmetry, "general");
        ck_assert_int_eq(h.nnz_stored, 3);
        expect_dense(A, 3, 3, want, what);
        hisp_matrix_destroy(&A);
    }
    /* Hermitian spelled with a capital H (as in mhd1280b) */
    CK_OK(ctx, read_str(ctx, "%%MatrixMarket matrix coordinate complex Hermitian\n1 1 1\n1 1 2 0",
                        HISP_C64, &A, &h));
    ck_assert_str_eq(h.symmetry, "hermitian");
    hisp_matrix_destroy(&A);
    /* not NUL-terminated: the bytes after `size` must not be read */
    const char buf[] = "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1234";
    CK_OK(ctx, hisp_matrix_read_mtx_buffer(ctx, buf, sizeof buf - 4, "cut", HISP_F64, &A, NULL));
    const void *v;
    CK_OK(ctx, hisp_matrix_host_arrays(A, NULL, NULL, NULL, &v));
    ck_assert(((const double *)v)[0] == 1.0);
    hisp_matrix_destroy(&A);
    /* nan and inf are numbers (as strtod reads them) */
    CK_OK(ctx, read_str(ctx,
                        "%%MatrixMarket matrix coordinate real general\n1 3 3\n1 1 nan\n"
                        "1 2 -inf\n1 3 Infinity\n",
                        HISP_F64, &A, NULL));
    CK_OK(ctx, hisp_matrix_host_arrays(A, NULL, NULL, NULL, &v));
    ck_assert(isnan(((const double *)v)[0]));
    ck_assert(isinf(((const double *)v)[1]) && ((const double *)v)[1] < 0);
    ck_assert(isinf(((const double *)v)[2]) && ((const double *)v)[2] > 0);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

/* Values must match strtod exactly on both paths (fast and slow). */
START_TEST(test_values_exact)
{
    hisp_context ctx = test_default_context();
    uint64_t st = test_seed() + 501;
    enum { N = 3000 };
    char *text = malloc(N * 64 + 128);
    double *ref = malloc(N * sizeof *ref);
    ck_assert(text && ref);
    int len = sprintf(text, "%%%%MatrixMarket matrix coordinate real general\n1 %d %d\n", N, N);
    for (int k = 0; k < N; k++) {
        char num[48];
        uint64_t r = test_rand(&st);
        switch (k % 6) {
        case 0:
            snprintf(num, sizeof num, "%.17g", test_uniform(&st));
            break;
        case 1:
            snprintf(num, sizeof num, "%.6g", test_uniform(&st) * 1e5);
            break;
        case 2:
            snprintf(num, sizeof num, "%lld", (long long)(r % 2000000) - 1000000);
            break;
        case 3:
            snprintf(num, sizeof num, "%.*e", (int)(r % 17),
                     test_uniform(&st) * pow(10, (double)(r % 600) - 300));
            break;
        case 4:
            snprintf(num, sizeof num, "%.3f", test_uniform(&st) * 100);
            break;
        default:
            snprintf(num, sizeof num, "%llu.%llue-%d", (unsigned long long)(r % 100000),
                     (unsigned long long)(r % 997), (int)(r % 30));
            break;
        }
        ref[k] = strtod(num, NULL);
        len += sprintf(text + len, "1 %d %s\n", k + 1, num);
    }
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_read_mtx_buffer(ctx, text, (size_t)len, "values", HISP_F64, &A, NULL));
    const int32_t *cols;
    const void *v;
    CK_OK(ctx, hisp_matrix_host_arrays(A, NULL, NULL, &cols, &v));
    for (int k = 0; k < N; k++)
        ck_assert_msg(memcmp(&((const double *)v)[k], &ref[cols[k]], 8) == 0,
                      "value %d: %.17g, strtod gives %.17g", k, ((const double *)v)[k],
                      ref[cols[k]]);
    hisp_matrix_destroy(&A);
    free(text);
    free(ref);
    hisp_context_destroy(&ctx);
}
END_TEST

/* ---- array files ------------------------------------------------------- */

START_TEST(test_array_files)
{
    hisp_context ctx = test_default_context();
    hisp_matrix A = NULL;
    hisp_mtx_header h;
    /* general 2x3, column-major, zeros stored as entries */
    CK_OK(ctx,
          read_str(ctx, "%%MatrixMarket matrix array real general\n% c\n2 3\n1\n4\n2\n0\n3\n6\n",
                   HISP_F64, &A, &h));
    ck_assert_int_eq(h.is_array, 1);
    ck_assert_int_eq(h.nnz_stored, 6);
    ck_assert_int_eq(nnz_of(A), 6);
    const double g[] = {1, 0, 2, 0, 3, 0, 4, 0, 0, 0, 6, 0};
    expect_dense(A, 2, 3, g, "array general");
    hisp_matrix_destroy(&A);
    /* symmetric 3x3: lower triangle by columns */
    CK_OK(ctx, read_str(ctx, "%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n",
                        HISP_F32, &A, &h));
    ck_assert_int_eq(h.nnz_stored, 6);
    ck_assert_int_eq(nnz_of(A), 9);
    const double s[] = {1, 0, 2, 0, 3, 0, 2, 0, 4, 0, 5, 0, 3, 0, 5, 0, 6, 0};
    expect_dense(A, 3, 3, s, "array symmetric");
    hisp_matrix_destroy(&A);
    /* skew-symmetric 3x3: strictly lower triangle */
    CK_OK(ctx, read_str(ctx, "%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n",
                        HISP_F64, &A, &h));
    ck_assert_int_eq(h.nnz_stored, 3);
    ck_assert_int_eq(nnz_of(A), 6);
    const double k[] = {0, 0, -1, 0, -2, 0, 1, 0, 0, 0, -3, 0, 2, 0, 3, 0, 0, 0};
    expect_dense(A, 3, 3, k, "array skew");
    hisp_matrix_destroy(&A);
    /* complex hermitian 2x2 and integer array */
    CK_OK(ctx, read_str(ctx, "%%MatrixMarket matrix array complex hermitian\n2 2\n1 0\n2 -1\n3 0\n",
                        HISP_C64, &A, &h));
    const double hm[] = {1, 0, 2, 1, 2, -1, 3, 0};
    expect_dense(A, 2, 2, hm, "array hermitian");
    hisp_matrix_destroy(&A);
    CK_OK(ctx, read_str(ctx, "%%MatrixMarket matrix array integer general\r\n1 2\r\n-4\r\n9\r\n",
                        HISP_F64, &A, &h));
    const double ia[] = {-4, 0, 9, 0};
    expect_dense(A, 1, 2, ia, "array integer");
    hisp_matrix_destroy(&A);
    /* 0 x 0 */
    CK_OK(ctx, read_str(ctx, "%%MatrixMarket matrix array real general\n0 0\n", HISP_F64, &A, &h));
    ck_assert_int_eq(nnz_of(A), 0);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

/* ---- vectors ------------------------------------------------------------- */

START_TEST(test_vectors)
{
    hisp_context ctx = test_default_context();
    make_tmpdir();
    uint64_t st = test_seed() + 77;
    char path[600];
    int64_t sizes[] = {0, 1, 7, 1000};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        int64_t n = sizes[si];
        hisp_type types[] = {HISP_F32, HISP_F64, HISP_C64};
        for (size_t ti = 0; ti < 3; ti++) {
            hisp_type t = types[ti];
            size_t es = hisp_type_size(t);
            unsigned char *x = malloc((size_t)n * es + 1), *y = malloc((size_t)n * es + 1);
            for (int64_t i = 0; i < n * hisp_type_components(t); i++) {
                double u = test_uniform(&st) * pow(10, (double)(test_rand(&st) % 20) - 10);
                if (t == HISP_F32)
                    ((float *)x)[i] = (float)u;
                else
                    ((double *)x)[i] = u;
            }
            hisp_vector v = NULL, w = NULL;
            CK_OK(ctx, hisp_vector_create(ctx, t, n, &v));
            CK_OK(ctx, hisp_vector_write(v, x));
            snprintf(path, sizeof path, "%s/v%zu_%zu.mtx", tmpdir, si, ti);
            CK_OK(ctx, hisp_vector_write_mtx(v, path));
            CK_OK(ctx, hisp_vector_read_mtx(ctx, path, t, &w));
            int64_t wn;
            CK_OK(ctx, hisp_vector_size(w, &wn));
            ck_assert_int_eq(wn, n);
            CK_OK(ctx, hisp_vector_read(w, y));
            ck_assert_msg(n == 0 || memcmp(x, y, (size_t)n * es) == 0,
                          "vector %s n=%lld does not round-trip", hisp_type_name(t), (long long)n);
            /* the file is an n x 1 array */
            hisp_matrix M = NULL;
            hisp_mtx_header h;
            CK_OK(ctx, hisp_matrix_read_mtx(ctx, path, t, &M, &h));
            ck_assert_int_eq(h.is_array, 1);
            ck_assert_str_eq(h.field, t == HISP_C64 ? "complex" : "real");
            hisp_matrix_info info;
            CK_OK(ctx, hisp_matrix_get_info(M, &info));
            ck_assert_int_eq(info.nrows, n);
            ck_assert_int_eq(info.ncols, 1);
            hisp_matrix_destroy(&M);
            hisp_vector_destroy(&v);
            hisp_vector_destroy(&w);
            free(x);
            free(y);
        }
    }
    /* a hand-written array vector and a sparse coordinate vector */
    snprintf(path, sizeof path, "%s/hand.mtx", tmpdir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("%%MatrixMarket matrix coordinate real general\n4 1 2\n3 1 2.5\n1 1 -1\n", f);
    fclose(f);
    hisp_vector v = NULL;
    CK_OK(ctx, hisp_vector_read_mtx(ctx, path, HISP_F64, &v));
    double got[4];
    CK_OK(ctx, hisp_vector_read(v, got));
    ck_assert(got[0] == -1 && got[1] == 0 && got[2] == 2.5 && got[3] == 0);
    hisp_vector_destroy(&v);
    remove_tmpdir();
    hisp_context_destroy(&ctx);
}
END_TEST

/* Vectors of k columns: n x k array files in Matrix Market's column-major
 * order whatever the vector's order, read back as HISP_ORDER_COL; hand-written
 * array and coordinate files; the errors with their lines. */
static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void expect_columns(hisp_context ctx, hisp_vector v, int64_t n, int64_t k, const char *what)
{
    int64_t len = -1, kk = -1;
    hisp_order order = HISP_ORDER_ROW;
    CK_OK(ctx, hisp_vector_size(v, &len));
    CK_OK(ctx, hisp_vector_columns(v, &kk, &order));
    ck_assert_msg(len == n * k && kk == k && order == HISP_ORDER_COL,
                  "%s: %lld entries in %lld columns (order %d), expected %lld x %lld in column "
                  "order",
                  what, (long long)len, (long long)kk, (int)order, (long long)n, (long long)k);
}

START_TEST(test_vector_columns)
{
    hisp_context ctx = test_default_context();
    make_tmpdir();
    uint64_t st = test_seed() + 79;
    char path[600];
    /* round trips: f32, f64, c32, c64; both orders; k 2, 3, 16 */
    const hisp_type types[] = {HISP_F32, HISP_F64, HISP_C32, HISP_C64};
    const int64_t ns[] = {0, 1, 7, 300}, ks[] = {2, 3, 16};
    for (size_t ti = 0; ti < 4; ti++)
        for (size_t ni = 0; ni < 4; ni++)
            for (size_t ki = 0; ki < 3; ki++)
                for (int o = 0; o < 2; o++) {
                    hisp_type t = types[ti];
                    int64_t n = ns[ni], k = ks[ki];
                    hisp_order order = o ? HISP_ORDER_ROW : HISP_ORDER_COL;
                    size_t es = hisp_type_size(t);
                    int comps = hisp_type_components(t);
                    unsigned char *x = malloc((size_t)(n * k) * es + 1);
                    unsigned char *y = malloc((size_t)(n * k) * es + 1);
                    for (int64_t i = 0; i < n * k * comps; i++) {
                        double u = test_uniform(&st) * pow(10, (double)(test_rand(&st) % 20) - 10);
                        if (es / (size_t)comps == 4)
                            ((float *)x)[i] = (float)u;
                        else
                            ((double *)x)[i] = u;
                    }
                    hisp_vector v = NULL, w = NULL;
                    CK_OK(ctx, hisp_vector_create_columns(ctx, t, n, k, order, &v));
                    CK_OK(ctx, hisp_vector_write(v, x));
                    snprintf(path, sizeof path, "%s/c%zu_%zu_%zu_%d.mtx", tmpdir, ti, ni, ki, o);
                    CK_OK(ctx, hisp_vector_write_mtx(v, path));
                    char what[96];
                    snprintf(what, sizeof what, "%s %lld x %lld %s order", hisp_type_name(t),
                             (long long)n, (long long)k, o ? "row" : "column");
                    CK_OK(ctx, hisp_vector_read_mtx(ctx, path, t, &w));
                    expect_columns(ctx, w, n, k, what);
                    CK_OK(ctx, hisp_vector_read(w, y));
                    for (int64_t i = 0; i < n; i++)
                        for (int64_t j = 0; j < k; j++) {
                            int64_t at = o ? i * k + j : j * n + i;
                            ck_assert_msg(
                                memcmp(x + (size_t)at * es, y + (size_t)(j * n + i) * es, es) == 0,
                                "%s: entry (%lld, %lld) does not round-trip", what, (long long)i,
                                (long long)j);
                        }
                    /* the file is an n x k array, column after column */
                    hisp_matrix M = NULL;
                    hisp_mtx_header h;
                    CK_OK(ctx, hisp_matrix_read_mtx(ctx, path, t, &M, &h));
                    ck_assert_int_eq(h.is_array, 1);
                    hisp_matrix_info info;
                    CK_OK(ctx, hisp_matrix_get_info(M, &info));
                    ck_assert_msg(info.nrows == n && info.ncols == k, "%s: the file is %lld x %lld",
                                  what, (long long)info.nrows, (long long)info.ncols);
                    hisp_matrix_destroy(&M);
                    hisp_vector_destroy(&v);
                    hisp_vector_destroy(&w);
                    free(x);
                    free(y);
                }
    /* a 3-column array file: column-major entries */
    snprintf(path, sizeof path, "%s/three.mtx", tmpdir);
    write_text(path, "%%MatrixMarket matrix array real general\n% 4 x 3\n4 3\n"
                     "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n-12.5\n");
    hisp_vector v = NULL;
    CK_OK(ctx, hisp_vector_read_mtx(ctx, path, HISP_F64, &v));
    expect_columns(ctx, v, 4, 3, "three.mtx");
    double got[12];
    CK_OK(ctx, hisp_vector_read(v, got));
    for (int e = 0; e < 12; e++)
        ck_assert_msg(got[e] == (e == 11 ? -12.5 : e + 1), "three.mtx: entry %d is %g", e, got[e]);
    hisp_vector_destroy(&v);
    /* the same read as f32, and as an integer array */
    write_text(path, "%%MatrixMarket matrix array integer general\n2 3\n1\n-2\n3\n-4\n5\n-6\n");
    CK_OK(ctx, hisp_vector_read_mtx(ctx, path, HISP_F32, &v));
    expect_columns(ctx, v, 2, 3, "integer array");
    float gf[6];
    CK_OK(ctx, hisp_vector_read(v, gf));
    for (int e = 0; e < 6; e++)
        ck_assert(gf[e] == (float)((e % 2 ? -1 : 1) * (e + 1)));
    hisp_vector_destroy(&v);
    /* a complex 2 x 2 array */
    write_text(path, "%%MatrixMarket matrix array complex general\n2 2\n1 -1\n2 -2\n3 -3\n4 -4\n");
    CK_OK(ctx, hisp_vector_read_mtx(ctx, path, HISP_C64, &v));
    expect_columns(ctx, v, 2, 2, "complex array");
    double gc[8];
    CK_OK(ctx, hisp_vector_read(v, gc));
    for (int e = 0; e < 4; e++)
        ck_assert(gc[2 * e] == e + 1 && gc[2 * e + 1] == -(e + 1));
    hisp_vector_destroy(&v);
    /* a coordinate 4 x 3 file: missing entries 0, of a repeated entry the last one */
    write_text(path, "%%MatrixMarket matrix coordinate real general\n4 3 4\n"
                     "2 3 7\n1 1 -1\n4 2 2.5\n2 3 8\n");
    CK_OK(ctx, hisp_vector_read_mtx(ctx, path, HISP_F64, &v));
    expect_columns(ctx, v, 4, 3, "coordinate 4 x 3");
    CK_OK(ctx, hisp_vector_read(v, got));
    const double want[12] = {-1, 0, 0, 0, 0, 0, 0, 2.5, 0, 8, 0, 0};
    for (int e = 0; e < 12; e++)
        ck_assert_msg(got[e] == want[e], "coordinate 4 x 3: entry %d is %g, expected %g", e, got[e],
                      want[e]);
    hisp_vector_destroy(&v);
    /* a symmetric 3 x 3 array: its mirror filled in */
    write_text(path, "%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n");
    CK_OK(ctx, hisp_vector_read_mtx(ctx, path, HISP_F64, &v));
    expect_columns(ctx, v, 3, 3, "symmetric array");
    CK_OK(ctx, hisp_vector_read(v, got));
    const double sym[9] = {1, 2, 3, 2, 4, 5, 3, 5, 6};
    for (int e = 0; e < 9; e++)
        ck_assert(got[e] == sym[e]);
    hisp_vector_destroy(&v);
    /* errors, each with its line; nothing is made */
    static const struct {
        const char *text;
        int64_t line;
        const char *word;
    } bad[] = {
        {"%%MatrixMarket matrix array real general\n3 2\n1.0\n2.0\n3.0\n4.0\n5.0\n", 8,
         "ends after 5 of the 6"},
        {"%%MatrixMarket matrix array real general\n% c\n3 2\n1\n2\n3\n4\n5\n6\n7\n", 10,
         "more entries than the 6"},
        {"%%MatrixMarket matrix array real general\n% c\n\n3 0\n", 4, "needs at least one column"},
        {"%%MatrixMarket matrix coordinate real general\n3 0 0\n", 2, "needs at least one column"},
        {"%%MatrixMarket matrix coordinate real general\n3 2 1\n4 1 1\n", 3, "row index 4"},
        {"%%MatrixMarket matrix coordinate real general\n3 2 1\n1 3 1\n", 3, "column index 3"},
        {"%%MatrixMarket matrix coordinate real general\n% big\n300000 300000 1\n1 1 1\n", 3,
         "too large"},
        {"%%MatrixMarket matrix array complex general\n1 2\n1.0 2.0\n3.000\n", 4,
         "missing imaginary part"},
    };
    for (size_t c = 0; c < sizeof bad / sizeof *bad; c++) {
        write_text(path, bad[c].text);
        hisp_type t = strstr(bad[c].text, "complex") ? HISP_C64 : HISP_F64;
        v = NULL;
        hisp_status s = hisp_vector_read_mtx(ctx, path, t, &v);
        hisp_error_info e;
        CK_OK(ctx, hisp_context_last_error(ctx, &e));
        ck_assert_msg(s == HISP_ERR_INPUT_FORMAT, "bad case %zu: %s (%s)", c, hisp_status_string(s),
                      e.message);
        ck_assert_ptr_null(v);
        ck_assert_msg(e.line == bad[c].line && strstr(e.message, bad[c].word) && e.file &&
                          strcmp(e.file, path) == 0,
                      "bad case %zu: %s:%lld: %s (expected line %lld, '%s')", c,
                      e.file ? e.file : "?", (long long)e.line, e.message, (long long)bad[c].line,
                      bad[c].word);
    }
    /* one column stays a plain vector */
    write_text(path, "%%MatrixMarket matrix array real general\n2 1\n1\n2\n");
    CK_OK(ctx, hisp_vector_read_mtx(ctx, path, HISP_F64, &v));
    expect_columns(ctx, v, 2, 1, "one column");
    hisp_vector_destroy(&v);
    remove_tmpdir();
    hisp_context_destroy(&ctx);
}
END_TEST

/* ---- write → read round trips ------------------------------------------- */

static void expect_same_csr(hisp_context ctx, hisp_matrix A, hisp_matrix B, const char *what)
{
    hisp_matrix_info ia, ib;
    CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_CSR));
    CK_OK(ctx, hisp_matrix_convert(B, HISP_FORMAT_CSR));
    CK_OK(ctx, hisp_matrix_get_info(A, &ia));
    CK_OK(ctx, hisp_matrix_get_info(B, &ib));
    ck_assert_msg(ia.nrows == ib.nrows && ia.ncols == ib.ncols && ia.nnz == ib.nnz &&
                      ia.type == ib.type,
                  "%s: shape or type differs", what);
    const int64_t *pa, *pb;
    const int32_t *ca, *cb;
    const void *va, *vb;
    CK_OK(ctx, hisp_matrix_host_arrays(A, &pa, NULL, &ca, &va));
    CK_OK(ctx, hisp_matrix_host_arrays(B, &pb, NULL, &cb, &vb));
    ck_assert_msg(memcmp(pa, pb, (size_t)(ia.nrows + 1) * 8) == 0, "%s: row pointers", what);
    ck_assert_msg(ia.nnz == 0 || memcmp(ca, cb, (size_t)ia.nnz * 4) == 0, "%s: columns", what);
    size_t es = hisp_type_size(ia.type), sc = es / (size_t)hisp_type_components(ia.type);
    for (int64_t k = 0; k < ia.nnz * hisp_type_components(ia.type); k++) {
        double x = sc == 4 ? ((const float *)va)[k] : ((const double *)va)[k];
        double y = sc == 4 ? ((const float *)vb)[k] : ((const double *)vb)[k];
        if (isnan(x) && isnan(y)) continue;
        ck_assert_msg(
            memcmp((const char *)va + (size_t)k * sc, (const char *)vb + (size_t)k * sc, sc) == 0,
            "%s: value %lld is %.17g, wrote %.17g", what, (long long)k, y, x);
    }
}

START_TEST(test_write_read_roundtrip)
{
    hisp_context ctx = test_default_context();
    make_tmpdir();
    uint64_t st = test_seed() + 1234;
    char path[600];
    hisp_type types[] = {HISP_F32, HISP_F64, HISP_C32, HISP_C64};
    int64_t shapes[][2] = {{0, 0}, {1, 1}, {17, 5}, {60, 60}, {3, 200}};
    for (size_t ti = 0; ti < 4; ti++)
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
            hisp_type t = types[ti];
            int64_t m = shapes[si][0], n = shapes[si][1];
            int64_t nnz = m && n ? m * n / 4 + 3 : 0;
            int comps = hisp_type_components(t);
            int32_t *r = malloc((size_t)nnz * 4 + 4), *c = malloc((size_t)nnz * 4 + 4);
            double *v = malloc((size_t)nnz * 16 + 16);
            for (int64_t k = 0; k < nnz; k++) {
                r[k] = (int32_t)(test_rand(&st) % (uint64_t)m);
                c[k] = (int32_t)(test_rand(&st) % (uint64_t)n);
                for (int q = 0; q < comps; q++) {
                    double u = test_uniform(&st);
                    uint64_t sel = test_rand(&st) % 16;
                    if (sel < 10)
                        u *= pow(10, (double)(test_rand(&st) % 60) - 30);
                    else if (sel == 10)
                        u = 0.0;
                    else if (sel == 11)
                        u = -0.0;
                    else if (sel == 12)
                        u = t == HISP_F32 || t == HISP_C32 ? FLT_MIN / 3 : 5e-310;
                    else if (sel == 13)
                        u = t == HISP_F32 || t == HISP_C32 ? FLT_MAX : DBL_MAX;
                    else if (sel == 14)
                        u = -INFINITY;
                    else
                        u = NAN;
                    if (t == HISP_F32 || t == HISP_C32)
                        ((float *)v)[k * comps + q] = (float)u;
                    else
                        v[k * comps + q] = u;
                }
            }
            hisp_matrix A = NULL;
            CK_OK(ctx, hisp_matrix_create_coo(ctx, t, m, n, nnz, r, c, v, &A));
            CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_CSR)); /* duplicates summed */
            hisp_format fmts[] = {HISP_FORMAT_CSR, HISP_FORMAT_CSC, HISP_FORMAT_COO};
            for (int fi = 0; fi < 3; fi++) {
                hisp_matrix W = NULL, B = NULL;
                CK_OK(ctx, hisp_matrix_duplicate(A, fmts[fi], &W));
                snprintf(path, sizeof path, "%s/m_%zu_%zu_%d.mtx", tmpdir, ti, si, fi);
                CK_OK(ctx, hisp_matrix_write_mtx(W, path));
                hisp_mtx_header h;
                CK_OK(ctx, hisp_matrix_read_mtx(ctx, path, t, &B, &h));
                ck_assert_str_eq(h.field, comps == 2 ? "complex" : "real");
                ck_assert_str_eq(h.symmetry, "general");
                char what[96];
                snprintf(what, sizeof what, "%s %lldx%lld written as %s", hisp_type_name(t),
                         (long long)m, (long long)n, hisp_format_name(fmts[fi]));
                expect_same_csr(ctx, W, B, what);
                hisp_matrix_destroy(&W);
                hisp_matrix_destroy(&B);
            }
            hisp_matrix_destroy(&A);
            free(r);
            free(c);
            free(v);
        }
    /* a random generated f64 matrix, through a file, unchanged */
    hisp_matrix A = test_random_matrix(ctx, HISP_F64, 300, 200, 0.05, &st), B = NULL;
    snprintf(path, sizeof path, "%s/rand.mtx", tmpdir);
    CK_OK(ctx, hisp_matrix_write_mtx(A, path));
    CK_OK(ctx, hisp_matrix_read_mtx(ctx, path, HISP_F64, &B, NULL));
    expect_same_csr(ctx, A, B, "random f64");
    hisp_matrix_destroy(&A);
    hisp_matrix_destroy(&B);
    remove_tmpdir();
    hisp_context_destroy(&ctx);
}
END_TEST

/* ---- malformed input ---------------------------------------------------- */

#define B_GEN "%%MatrixMarket matrix coordinate real general\n"

START_TEST(test_malformed)
{
    static const struct {
        const char *text;
        size_t len; /* 0: strlen */
        hisp_type type;
        int64_t line;
        const char *word;
    } cases[] = {
        {"", 0, HISP_F64, 1, "empty"},
        {"hello\n", 0, HISP_F64, 1, "banner"},
        {"% comment\n" B_GEN "1 1 1\n1 1 1\n", 0, HISP_F64, 1, "banner"},
        {"%%MatrixMarket\n", 0, HISP_F64, 1, "missing object"},
        {"%%MatrixMarket matrix coordinate real\n1 1 1\n1 1 1\n", 0, HISP_F64, 1,
         "missing symmetry"},
        {"%%MatrixMarketmatrix coordinate real general\n", 0, HISP_F64, 1, "banner"},
        {"%%MatrixMarket vector coordinate real general\n1 1 1\n1 1 1\n", 0, HISP_F64, 1, "object"},
        {"%%MatrixMarket matrix sparse real general\n", 0, HISP_F64, 1, "format"},
        {"%%MatrixMarket matrix coordinate float general\n", 0, HISP_F64, 1, "field"},
        {"%%MatrixMarket matrix coordinate real upper\n", 0, HISP_F64, 1, "symmetry"},
        {"%%MatrixMarket matrix coordinate real general extra\n", 0, HISP_F64, 1, "unexpected"},
        {"%%MatrixMarket matrix array pattern general\n2 2\n", 0, HISP_F64, 1, "pattern"},
        {"%%MatrixMarket matrix coordinate pattern skew-symmetric\n", 0, HISP_F64, 1, "pattern"},
        {"%%MatrixMarket matrix coordinate real general\r2 2 1\r1 1 1\r", 0, HISP_F64, 1,
         "unexpected"},
        {B_GEN, 0, HISP_F64, 2, "missing size line"},
        {B_GEN "% only comments\n\n", 0, HISP_F64, 4, "missing size line"},
        {B_GEN "-3 3 1\n1 1 1\n", 0, HISP_F64, 2, "negative"},
        {B_GEN "3 -3 1\n1 1 1\n", 0, HISP_F64, 2, "negative column count"},
        {B_GEN "3 3 -1\n", 0, HISP_F64, 2, "negative entry count"},
        {B_GEN "3 x 1\n", 0, HISP_F64, 2, "column count"},
        {B_GEN "3 3.0 1\n", 0, HISP_F64, 2, "column count"},
        {B_GEN "3 3\n", 0, HISP_F64, 2, "missing entry count"},
        {B_GEN "3 3 1 7\n1 1 1\n", 0, HISP_F64, 2, "unexpected"},
        {B_GEN "3000000000 3 1\n1 1 1\n", 0, HISP_F64, 2, "2^31"},
        {B_GEN "99999999999999999999999 3 1\n1 1 1\n", 0, HISP_F64, 2, "2^31"},
        {B_GEN "3 3 2\n1 1 1.000000\n", 0, HISP_F64, 4, "ends after 1 of the 2"},
        {B_GEN "3 3 2\n1 1 1\n% comment\n\n", 0, HISP_F64, 6, "ends after 1"},
        {B_GEN "3 3 1\n1 1 1\n2 2 2\n", 0, HISP_F64, 4, "more entries"},
        {B_GEN "3 3 1\n1 1 1\n%\n\n2 2 2\n", 0, HISP_F64, 6, "more entries"},
        {B_GEN "3 3 1\n0 1 1\n", 0, HISP_F64, 3, "index 0"},
        {B_GEN "3 3 1\n1 0 1\n", 0, HISP_F64, 3, "column index 0"},
        {B_GEN "3 3 1\n4 1 1\n", 0, HISP_F64, 3, "row index 4 out of range"},
        {B_GEN "3 3 1\n1 4 1\n", 0, HISP_F64, 3, "column index 4 out of range"},
        {B_GEN "3 3 1\n1 99999999999999999999999999 1\n", 0, HISP_F64, 3, "out of range"},
        {B_GEN "3 3 1\n-1 1 1\n", 0, HISP_F64, 3, "not a positive integer"},
        {B_GEN "3 3 1\n1.5 1 1\n", 0, HISP_F64, 3, "row index"},
        {B_GEN "3 3 1\n1     \n", 0, HISP_F64, 3, "missing column index"},
        {B_GEN "3 3 1\n1 1 abc\n", 0, HISP_F64, 3, "not a number"},
        {B_GEN "3 3 1\n1 1 1.5x\n", 0, HISP_F64, 3, "not a number"},
        {B_GEN "3 3 1\n1 1 1e\n", 0, HISP_F64, 3, "not a number"},
        {B_GEN "3 3 1\n1 1 .\n", 0, HISP_F64, 3, "not a number"},
        {B_GEN "3 3 1\n1 1 --1\n", 0, HISP_F64, 3, "not a number"},
        {B_GEN "3 3 1\n1 1 1,5\n", 0, HISP_F64, 3, "not a number"},
        {B_GEN "30 30 1\n10 10\n", 0, HISP_F64, 3, "missing value"},
        {B_GEN "3 3 1\n1 1 1 junk\n", 0, HISP_F64, 3, "unexpected"},
        {B_GEN "3 3 1\n1 1 1 2\n", 0, HISP_F64, 3, "unexpected"},
        {B_GEN "3 3 1\n1 1 "
               "1111111111111111111111111111111111111111111111111111111111111111111111111111111111"
               "111111111111111111111111111111111111111111111111111111111111111111111111111111111x"
               "\n",
         0, HISP_F64, 3, "not a number"}, /* long numbers are read (cli_files), bad ones not */
        {B_GEN "2 2 1\n1 1 \x01\x02\n", 0, HISP_F64, 3, "not a number"},
        {B_GEN "2 2 1\n\xff\xfe 1 1\n", 0, HISP_F64, 3, "row index"},
        {B_GEN "2 2 1\n1 1 1\0\n", sizeof(B_GEN "2 2 1\n1 1 1\0\n") - 1, HISP_F64, 3, "NUL"},
        {"%%Matrix\0Market", 15, HISP_F64, 1, "NUL"},
        {B_GEN "1000000 1000000 2000000000\n1 1 1\n", 0, HISP_F64, 2, "can hold"},
        {B_GEN "10 10 3\n1 1 1\n2 2 2\n", 0, HISP_F64, 2, "can hold"},
        {"%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 1.0\n", 0, HISP_C64, 3,
         "missing imaginary part"},
        {"%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 1.0 x\n", 0, HISP_C64, 3,
         "imaginary part 'x' is not a number"},
        {"%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n", 0, HISP_F64, 3,
         "not an integer"},
        {"%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 nan\n", 0, HISP_F64, 3,
         "not an integer"},
        {"%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1 5\n", 0, HISP_F64, 3,
         "unexpected"},
        {"%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 9223372036854775808\n", 0,
         HISP_F64, 3, "does not fit a 64-bit integer"},
        {"%%MatrixMarket matrix array integer general\n2 1\n-9223372036854775808\n"
         "-9223372036854775809\n",
         0, HISP_F64, 4, "does not fit a 64-bit integer"},
        {"%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 "
         "18446744073709551615\n",
         0, HISP_F64, 3, "does not fit"},
        {"\n \n\t hello\n", 0, HISP_F64, 3, "banner"},
        {"\n\n  %%MatrixMarket matrix coordinate real banana\n", 0, HISP_F64, 3, "symmetry"},
        {"%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n1 1 1\n", 0, HISP_F64, 2,
         "square"},
        {"%%MatrixMarket matrix array real symmetric\n2 3\n1\n2\n3\n4\n5\n6\n", 0, HISP_F64, 2,
         "square"},
        {"%%MatrixMarket matrix array real general\n100000 100000\n1\n", 0, HISP_F64, 2,
         "can hold"},
        {"%%MatrixMarket matrix array real general\n2 2\n1.0\n2.0\n3.0\n", 0, HISP_F64, 6,
         "ends after 3 of the 4"},
        {"%%MatrixMarket matrix array real general\n1 1\n1\n2\n", 0, HISP_F64, 4, "more entries"},
        {"%%MatrixMarket matrix array real general\n2 1\n1 2\n3\n", 0, HISP_F64, 3, "unexpected"},
        {"%%MatrixMarket matrix array real general\n2 1 2\n1\n2\n", 0, HISP_F64, 2, "unexpected"},
        {"%%MatrixMarket matrix array complex general\n2 1\n1 2\n3.000\n", 0, HISP_C64, 4,
         "missing imaginary"},
    };
    hisp_context ctx = test_default_context();
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        hisp_matrix A = NULL;
        size_t len = cases[c].len ? cases[c].len : strlen(cases[c].text);
        hisp_status s = hisp_matrix_read_mtx_buffer(ctx, cases[c].text, len, "bad.mtx",
                                                    cases[c].type, &A, NULL);
        hisp_error_info e;
        CK_OK(ctx, hisp_context_last_error(ctx, &e));
        ck_assert_msg(s == HISP_ERR_INPUT_FORMAT, "case %zu: status %s (%s), expected input format",
                      c, hisp_status_string(s), e.message);
        ck_assert_ptr_null(A);
        ck_assert_msg(e.line == cases[c].line, "case %zu: line %lld, expected %lld (%s)", c,
                      (long long)e.line, (long long)cases[c].line, e.message);
        ck_assert_msg(strstr(e.message, cases[c].word) != NULL, "case %zu: message '%s' lacks '%s'",
                      c, e.message, cases[c].word);
        ck_assert_msg(e.file && strcmp(e.file, "bad.mtx") == 0, "case %zu: file name", c);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* Every prefix of a valid file is either valid or an input-format error,
 * and so is every single-byte corruption of it (no crash, no other status). */
START_TEST(test_truncations_and_corruptions)
{
    hisp_context ctx = test_default_context();
    const char *files[] = {
        "%%MatrixMarket matrix coordinate complex hermitian\n% c\n3 3 3\n1 1 2 0\n3 1 1.5 "
        "-2e1\n3 3 4 0\n",
        "%%MatrixMarket matrix array real symmetric\n2 2\n1\n2\n3\n",
        "%%MatrixMarket matrix coordinate pattern symmetric\n4 4 3\n1 1\n4 2\n3 3\n",
    };
    const char junk[] = {'x', '0', ' ', '\n', '-', '.', 'e', '%', '\r', '9', '\t', '\0'};
    for (size_t f = 0; f < 3; f++) {
        size_t n = strlen(files[f]);
        char *buf = malloc(n);
        for (size_t len = 0; len <= n; len++) {
            memcpy(buf, files[f], len);
            hisp_matrix A = NULL;
            hisp_status s = hisp_matrix_read_mtx_buffer(ctx, buf, len, "t", HISP_C64, &A, NULL);
            ck_assert_msg(s == HISP_SUCCESS || s == HISP_ERR_INPUT_FORMAT,
                          "file %zu cut at %zu: %s", f, len, hisp_status_string(s));
            hisp_matrix_destroy(&A);
        }
        for (size_t pos = 0; pos < n; pos++)
            for (size_t j = 0; j < sizeof junk; j++) {
                memcpy(buf, files[f], n);
                buf[pos] = junk[j];
                hisp_matrix A = NULL;
                hisp_status s = hisp_matrix_read_mtx_buffer(ctx, buf, n, "t", HISP_C64, &A, NULL);
                ck_assert_msg(s == HISP_SUCCESS || s == HISP_ERR_INPUT_FORMAT,
                              "file %zu byte %zu = %d: %s", f, pos, junk[j], hisp_status_string(s));
                hisp_matrix_destroy(&A);
            }
        free(buf);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* ---- I/O errors ----------------------------------------------------------- */

START_TEST(test_io_errors)
{
    hisp_context ctx = test_default_context();
    hisp_matrix A = NULL;
    hisp_error_info e;
    ck_assert_int_eq(hisp_matrix_read_mtx(ctx, "/nonexistent/hisp/x.mtx", HISP_F64, &A, NULL),
                     HISP_ERR_IO);
    CK_OK(ctx, hisp_context_last_error(ctx, &e));
    ck_assert_int_eq(e.native_code, ENOENT);
    ck_assert_ptr_nonnull(strstr(e.message, "/nonexistent/hisp/x.mtx"));
    make_tmpdir();
    ck_assert_int_eq(hisp_matrix_read_mtx(ctx, tmpdir, HISP_F64, &A, NULL), HISP_ERR_IO);
    ck_assert_ptr_null(A);
    CK_OK(ctx, read_str(ctx, B_GEN "2 2 1\n1 1 1\n", HISP_F64, &A, NULL));
    ck_assert_int_eq(hisp_matrix_write_mtx(A, "/nonexistent/hisp/out.mtx"), HISP_ERR_IO);
    CK_OK(ctx, hisp_context_last_error(ctx, &e));
    ck_assert_int_eq(e.native_code, ENOENT);
    if (access("/dev/full", W_OK) == 0) { /* a full disk shows at the final flush */
        ck_assert_int_eq(hisp_matrix_write_mtx(A, "/dev/full"), HISP_ERR_IO);
        CK_OK(ctx, hisp_context_last_error(ctx, &e));
        ck_assert_int_eq(e.native_code, ENOSPC);
        hisp_vector v = NULL;
        CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, 3, &v));
        ck_assert_int_eq(hisp_vector_write_mtx(v, "/dev/full"), HISP_ERR_IO);
        hisp_vector_destroy(&v);
    }
    ck_assert_int_eq(hisp_matrix_write_mtx(A, NULL), HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_matrix_write_mtx(NULL, "x"), HISP_ERR_INVALID_HANDLE);
    hisp_matrix_destroy(&A);
    /* a type the format cannot hold: vectors of 3x3 blocks (block matrices
     * take real vectors; every matrix type is writable since issue 6) */
    hisp_vector bv = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, HISP_B3X3_F64, 1, &bv));
    char path[600];
    snprintf(path, sizeof path, "%s/q.mtx", tmpdir);
    ck_assert_int_eq(hisp_vector_write_mtx(bv, path), HISP_ERR_UNSUPPORTED);
    ck_assert_int_ne(access(path, F_OK), 0);
    hisp_vector_destroy(&bv);
    remove_tmpdir();
    hisp_context_destroy(&ctx);
}
END_TEST

/* The caller's numeric locale (a decimal comma) changes neither reading nor
 * writing. */
START_TEST(test_locale_independent)
{
    const char *locs[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8", "de_DE"};
    const char *loc = NULL;
    for (size_t i = 0; i < sizeof locs / sizeof locs[0] && !loc; i++)
        if (setlocale(LC_NUMERIC, locs[i])) loc = locs[i];
    if (!loc) {
        test_skip("mmio locale test: no decimal-comma locale (de_DE/fr_FR) installed");
        return;
    }
    hisp_context ctx = test_default_context();
    make_tmpdir();
    hisp_matrix A = NULL;
    CK_OK(ctx, read_str(ctx, B_GEN "1 1 1\n1 1 1.5e-1\n", HISP_F64, &A, NULL));
    const void *v;
    CK_OK(ctx, hisp_matrix_host_arrays(A, NULL, NULL, NULL, &v));
    ck_assert(((const double *)v)[0] == 0.15);
    char path[600], text[256] = {0};
    snprintf(path, sizeof path, "%s/loc.mtx", tmpdir);
    CK_OK(ctx, hisp_matrix_write_mtx(A, path));
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    size_t got = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    ck_assert(got > 0);
    ck_assert_msg(strstr(text, "0.1") && !strstr(text, "0,1"), "written in locale %s: %s", loc,
                  text);
    hisp_matrix_destroy(&A);
    setlocale(LC_NUMERIC, "C");
    remove_tmpdir();
    hisp_context_destroy(&ctx);
}
END_TEST

/* ---- speed ---------------------------------------------------------------- */

START_TEST(test_parse_speed)
{
    hisp_context ctx = test_default_context();
    uint64_t st = test_seed() + 99;
    enum { N = 600000 };
    size_t cap = (size_t)N * 48 + 128;
    char *text = malloc(cap);
    ck_assert_ptr_nonnull(text);
    int len = sprintf(text, "%s100000 100000 %d\n", B_GEN, N);
    for (int k = 0; k < N; k++) {
        uint64_t r = test_rand(&st);
        if (k % 2)
            len += sprintf(text + len, "%d %d %.17g\n", (int)(r % 100000) + 1,
                           (int)((r >> 20) % 100000) + 1, test_uniform(&st));
        else
            len += sprintf(text + len, "%d %d %.6e\n", (int)(r % 100000) + 1,
                           (int)((r >> 20) % 100000) + 1, test_uniform(&st));
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_read_mtx_buffer(ctx, text, (size_t)len, "speed", HISP_F64, &A, NULL));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    double mbs = (double)len / 1e6 / s;
    ck_assert_int_eq(nnz_of(A), N);
#if defined(NDEBUG) && !defined(__SANITIZE_ADDRESS__)
    ck_assert_msg(mbs > 30, "parsing at %.1f MB/s (%d bytes in %.3f s)", mbs, len, s);
#else
    (void)mbs;
#endif
    hisp_matrix_destroy(&A);
    free(text);
    hisp_context_destroy(&ctx);
}
END_TEST

/* ---- the real matrices of ../shared/matrices ----------------------------- */

/* From ../shared/matrices/SOURCES.md (the documented ground truth). */
static const struct {
    const char *file;
    int64_t rows, cols, stored, full;
    const char *field, *sym;
} real_matrices[] = {
    {"mhd1280b.mtx", 1280, 1280, 12029, 22778, "complex", "hermitian"},
    {"dwg961a.mtx", 961, 961, 2055, 3405, "complex", "symmetric"},
    {"young1c.mtx", 841, 841, 4089, 4089, "complex", "general"},
    {"494_bus.mtx", 494, 494, 1080, 1666, "real", "symmetric"},
    {"adder_dcop_05.mtx", 1813, 1813, 11097, 11097, "real", "general"},
    {"bayer10.mtx", 13436, 13436, 94926, 94926, "real", "general"},
    {"bcsstk13.mtx", 2003, 2003, 42943, 83883, "real", "symmetric"},
    {"cage8.mtx", 1015, 1015, 11003, 11003, "real", "general"},
    {"fidapex6.mtx", 1651, 1651, 49533, 49533, "real", "general"},
    {"LFAT5.mtx", 14, 14, 30, 46, "real", "symmetric"},
    {"lp_ship04l.mtx", 402, 2166, 6380, 6380, "real", "general"},
    {"Pd.mtx", 8081, 8081, 13036, 13036, "real", "general"},
    {"plskz362.mtx", 362, 362, 880, 1760, "real", "skew-symmetric"},
    {"rajat19.mtx", 1157, 1157, 5399, 5399, "real", "general"},
    {"well1850.mtx", 1850, 712, 8758, 8758, "real", "general"},
    {"west0479.mtx", 479, 479, 1910, 1910, "real", "general"},
    {"zenios.mtx", 2873, 2873, 15032, 27191, "real", "symmetric"},
    {"CA-HepPh.mtx", 89209, 89209, 237010, 237010, "integer", "general"},
    {"farm.mtx", 7, 17, 41, 41, "integer", "general"},
    {"Franz6_id1959_aug.mtx", 10592, 3016, 48472, 48472, "integer", "general"},
    {"Groebner_id2003_aug.mtx", 4967, 2456, 173670, 173670, "integer", "general"},
    {"jazz.mtx", 198, 198, 2742, 5484, "integer", "symmetric"},
    {"polblogs.mtx", 1490, 1490, 19025, 19025, "integer", "general"},
    {"abb313.mtx", 313, 176, 1557, 1557, "pattern", "general"},
    {"bcsstk33.mtx", 8738, 8738, 300321, 591904, "pattern", "symmetric"},
    {"ca-CondMat.mtx", 23133, 23133, 93497, 186936, "pattern", "symmetric"},
    {"ca-GrQc.mtx", 5242, 5242, 14496, 28980, "pattern", "symmetric"},
    {"Erdos971.mtx", 472, 472, 1314, 2628, "pattern", "symmetric"},
    {"karate.mtx", 34, 34, 78, 156, "pattern", "symmetric"},
    {"luxembourg.mtx", 114599, 114599, 119666, 239332, "pattern", "symmetric"},
    {"rajat01.mtx", 6833, 6833, 43250, 43250, "pattern", "general"},
};

/* A(i,j) against A(j,i) for an expanded symmetric matrix (via CSR and CSC:
 * the CSC arrays of A are the CSR arrays of A^T). */
static void check_mirror(hisp_context ctx, hisp_matrix A, const char *sym, const char *file)
{
    hisp_matrix R = NULL, C = NULL;
    CK_OK(ctx, hisp_matrix_duplicate(A, HISP_FORMAT_CSR, &R));
    CK_OK(ctx, hisp_matrix_duplicate(A, HISP_FORMAT_CSC, &C));
    const int64_t *pr, *pc;
    const int32_t *cr, *rc;
    const void *vr, *vc;
    CK_OK(ctx, hisp_matrix_host_arrays(R, &pr, NULL, &cr, &vr));
    CK_OK(ctx, hisp_matrix_host_arrays(C, &pc, &rc, NULL, &vc));
    hisp_matrix_info info;
    CK_OK(ctx, hisp_matrix_get_info(R, &info));
    int comps = hisp_type_components(info.type);
    ck_assert_int_eq(pr[info.nrows], pc[info.ncols]);
    for (int64_t k = 0; k < info.nnz; k++) {
        ck_assert_int_eq(cr[k], rc[k]); /* same pattern as the transpose */
        double re = ((const double *)vr)[k * comps], tre = ((const double *)vc)[k * comps];
        double im = comps == 2 ? ((const double *)vr)[k * 2 + 1] : 0;
        double tim = comps == 2 ? ((const double *)vc)[k * 2 + 1] : 0;
        if (!strcmp(sym, "symmetric"))
            ck_assert_msg(re == tre && im == tim, "%s", file);
        else if (!strcmp(sym, "skew-symmetric"))
            ck_assert_msg(re == -tre && im == -tim, "%s", file);
        else
            ck_assert_msg(re == tre && im == -tim, "%s", file); /* hermitian */
    }
    for (int64_t i = 0; i <= info.nrows; i++)
        ck_assert_int_eq(pr[i], pc[i]);
    hisp_matrix_destroy(&R);
    hisp_matrix_destroy(&C);
}

START_TEST(test_real_matrices)
{
    const char *dir = test_matrix_dir();
    if (!dir) {
        test_skip_no_matrices("mmio on real matrices");
        return;
    }
    hisp_context ctx = test_default_context();
    size_t nt = sizeof real_matrices / sizeof real_matrices[0];
    bool seen[64] = {false};
    int found = 0;
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    struct dirent *de;
    char path[2048];
    while ((de = readdir(d))) {
        size_t l = strlen(de->d_name);
        if (l < 4 || strcmp(de->d_name + l - 4, ".mtx") != 0) continue;
        size_t t;
        for (t = 0; t < nt && strcmp(real_matrices[t].file, de->d_name) != 0; t++) {
        }
        ck_assert_msg(t < nt, "%s/%s is not in the table of SOURCES.md", dir, de->d_name);
        seen[t] = true;
        found++;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        bool cplx = !strcmp(real_matrices[t].field, "complex");
        hisp_matrix A = NULL;
        hisp_mtx_header h;
        CK_OK(ctx, hisp_matrix_read_mtx(ctx, path, cplx ? HISP_C64 : HISP_F64, &A, &h));
        hisp_matrix_info info;
        CK_OK(ctx, hisp_matrix_get_info(A, &info));
        ck_assert_msg(info.nrows == real_matrices[t].rows && info.ncols == real_matrices[t].cols,
                      "%s: %lldx%lld", de->d_name, (long long)info.nrows, (long long)info.ncols);
        ck_assert_msg(info.nnz == real_matrices[t].full, "%s: nnz %lld, expected %lld", de->d_name,
                      (long long)info.nnz, (long long)real_matrices[t].full);
        ck_assert_msg(h.nnz_stored == real_matrices[t].stored, "%s: stored %lld", de->d_name,
                      (long long)h.nnz_stored);
        ck_assert_str_eq(h.field, real_matrices[t].field);
        ck_assert_str_eq(h.symmetry, real_matrices[t].sym);
        ck_assert_int_eq(h.is_array, 0);
        /* the files have no duplicates: conversion keeps every entry */
        CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_CSR));
        CK_OK(ctx, hisp_matrix_get_info(A, &info));
        ck_assert_int_eq(info.nnz, real_matrices[t].full);
        if (strcmp(real_matrices[t].sym, "general") != 0)
            check_mirror(ctx, A, real_matrices[t].sym, de->d_name);
        hisp_matrix_destroy(&A);
    }
    closedir(d);
    for (size_t t = 0; t < nt; t++)
        ck_assert_msg(seen[t], "%s listed in SOURCES.md but missing", real_matrices[t].file);
    ck_assert_int_eq(found, (int)nt);
    hisp_context_destroy(&ctx);
}
END_TEST

/* ---- what the peers accept, compressed files, exact floats, chunks ------- */

START_TEST(test_peer_forms)
{
    hisp_context ctx = test_default_context();
    hisp_matrix A = NULL;
    /* entries on both sides of the diagonal, each mirrored; (1,2) and (2,1)
     * both given: their mirrors add up, as in fast_matrix_market and scipy */
    CK_OK(ctx, read_str(ctx,
                        "\n  \n\t%%MatrixMarket matrix coordinate real symmetric\n"
                        "   % indented comment\n  3 3 4\n  1 3 4\n3 1 1\n\t2 2 5\n 1 2 -2\n",
                        HISP_F64, &A, NULL));
    const double sym[] = {0, 0, -2, 0, 5, 0, -2, 0, 5, 0, 0, 0, 5, 0, 0, 0, 0, 0};
    expect_dense(A, 3, 3, sym, "symmetric, upper entries");
    hisp_matrix_destroy(&A);
    /* skew-symmetric: a diagonal entry is kept as given (not mirrored) */
    CK_OK(ctx, read_str(ctx,
                        "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 2\n1 1 3\n1 2 "
                        "2\n",
                        HISP_F64, &A, NULL));
    const double skew[] = {3, 0, 2, 0, -2, 0, 0, 0};
    expect_dense(A, 2, 2, skew, "skew-symmetric, diagonal and upper");
    hisp_matrix_destroy(&A);
    /* Hermitian, upper entry: the lower one is its conjugate */
    CK_OK(ctx, read_str(ctx,
                        "%%MatrixMarket matrix coordinate complex hermitian\n2 2 2\n1 1 1 0\n1 2 "
                        "1 2\n",
                        HISP_C64, &A, NULL));
    const double herm[] = {1, 0, 1, 2, 1, -2, 0, 0};
    expect_dense(A, 2, 2, herm, "hermitian, upper");
    hisp_matrix_destroy(&A);
    /* pattern hermitian reads as pattern symmetric */
    CK_OK(ctx, read_str(ctx, "%%MatrixMarket matrix coordinate pattern hermitian\n2 2 1\n1 2\n",
                        HISP_F64, &A, NULL));
    const double pat[] = {0, 0, 1, 0, 1, 0, 0, 0};
    expect_dense(A, 2, 2, pat, "pattern hermitian");
    hisp_matrix_destroy(&A);
    /* int64 bounds are read */
    CK_OK(ctx, read_str(ctx,
                        "%%MatrixMarket matrix array integer general\n2 1\n-9223372036854775808\n"
                        "+9223372036854775807\n",
                        HISP_F64, &A, NULL));
    const double big[] = {-9223372036854775808.0, 0, 9223372036854775807.0, 0};
    expect_dense(A, 2, 1, big, "int64 bounds");
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

/* Every value the reader parses equals strtod's (bit for bit): 17-digit
 * round-trip strings, 19- and 20-digit mantissas with random exponents,
 * subnormals, halfway cases, over- and underflow. */
START_TEST(test_float_exact)
{
    hisp_context ctx = test_default_context();
    uint64_t st = test_seed() + 77;
    enum { N = 200000 };
    static const char *const fixed[] = {
        "9007199254740993",
        "9007199254740992.5",
        "2.2250738585072011e-308",
        "2.2250738585072014e-308",
        "4.9406564584124654e-324",
        "2.4703282292062327e-324",
        "2.4703282292062328e-324",
        "1.7976931348623157e308",
        "1.7976931348623159e308",
        "1e-400",
        "-1e400",
        "0.1",
        "1e23",
        "8.988465674311579e307",
        "123456789012345678e-5",
        "1844674407370955161.5",
        "7.2057594037927933e16",
        "-0.0",
        "00000000000000000000001.5",
        "0.000000000000000000000000000001234567890123456789",
        "1.00000000000000011102230246251565404236316680908203125",
        "4503599627370496.5",
        "4503599627370497.5",
        "3.0517578125e-05",
        "1e-22",
        "1e22",
        "1e-23",
        "5e-324",
    };
    size_t nf = sizeof fixed / sizeof *fixed;
    char *text = malloc((size_t)N * 48 + 4096), *p = text;
    ck_assert_ptr_nonnull(text);
    char(*tok)[40] = malloc((size_t)N * sizeof *tok);
    ck_assert_ptr_nonnull(tok);
    p += sprintf(p, "%%%%MatrixMarket matrix array real general\n%d 1\n", N);
    for (int k = 0; k < N; k++) {
        uint64_t r = test_rand(&st);
        int kind = (int)(r % 5);
        if ((size_t)k < nf) {
            snprintf(tok[k], sizeof tok[k], "%s", fixed[k]);
        } else if (kind == 0) { /* any double's %.17g */
            uint64_t bits = test_rand(&st);
            double d;
            memcpy(&d, &bits, 8);
            if (!isfinite(d)) d = 1.5;
            snprintf(tok[k], sizeof tok[k], "%.17g", d);
        } else if (kind == 1) { /* %.17g of values in ordinary ranges */
            snprintf(tok[k], sizeof tok[k], "%.17g",
                     test_uniform(&st) * pow(10, (double)(test_rand(&st) % 40) - 20));
        } else { /* 16 to 20 digits, exponent -350..330 */
            int nd = 16 + (int)(test_rand(&st) % 5), e = (int)(test_rand(&st) % 681) - 350;
            char d[24];
            d[0] = (char)('1' + test_rand(&st) % 9);
            for (int i = 1; i < nd; i++)
                d[i] = (char)('0' + test_rand(&st) % 10);
            d[nd] = 0;
            int dot = (int)(test_rand(&st) % (unsigned)nd) + 1;
            snprintf(tok[k], sizeof tok[k], "%s%.*s.%se%d", r & 8 ? "-" : "", dot, d, d + dot, e);
        }
        p += sprintf(p, "%s\n", tok[k]);
    }
    hisp_matrix A = NULL;
    CK_OK(ctx,
          hisp_matrix_read_mtx_buffer(ctx, text, (size_t)(p - text), "floats", HISP_F64, &A, NULL));
    const int64_t *ptr;
    const int32_t *rows, *cols;
    const void *vals;
    CK_OK(ctx, hisp_matrix_host_arrays(A, &ptr, &rows, &cols, &vals));
    locale_t c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    for (int k = 0; k < N; k++) {
        double want = strtod_l(tok[k], NULL, c), got = ((const double *)vals)[k];
        ck_assert_msg(memcmp(&want, &got, 8) == 0, "'%s' read as %.17g, strtod gives %.17g", tok[k],
                      got, want);
    }
    freelocale(c);
    hisp_matrix_destroy(&A);
    free(tok);
    free(text);
    hisp_context_destroy(&ctx);
}
END_TEST

/* A file large enough for several chunks: comments, blank and indented
 * lines anywhere; errors late in the file report their own line. */
START_TEST(test_chunks)
{
    hisp_context ctx = test_default_context();
    uint64_t st = test_seed() + 5;
    enum { N = 400000 };
    char *text = malloc((size_t)N * 64 + 256), *p = text;
    ck_assert_ptr_nonnull(text);
    int32_t *ri = malloc(N * sizeof *ri), *ci = malloc(N * sizeof *ci);
    double *v = malloc(N * sizeof *v);
    int64_t *lineof = malloc(N * sizeof *lineof);
    p += sprintf(p, "%%%%MatrixMarket matrix coordinate real general\n1000 1000 %d\n", N);
    int64_t line = 3;
    for (int k = 0; k < N; k++) {
        uint64_t r = test_rand(&st);
        if (r % 97 == 0) {
            p += sprintf(p, "%% comment %d\n", k);
            line++;
        }
        if (r % 89 == 0) {
            p += sprintf(p, r & 1 ? "\n" : "  \t\r\n");
            line++;
        }
        ri[k] = (int32_t)((r >> 8) % 1000);
        ci[k] = (int32_t)((r >> 24) % 1000);
        v[k] = test_uniform(&st);
        lineof[k] = line++;
        p += sprintf(p, r % 83 == 0 ? "  %d\t%d %.17g\r\n" : "%d %d %.17g\n", ri[k] + 1, ci[k] + 1,
                     v[k]);
    }
    size_t len = (size_t)(p - text);
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_read_mtx_buffer(ctx, text, len, "big", HISP_F64, &A, NULL));
    const int64_t *ptr;
    const int32_t *rows, *cols;
    const void *vals;
    CK_OK(ctx, hisp_matrix_host_arrays(A, &ptr, &rows, &cols, &vals));
    ck_assert_int_eq(nnz_of(A), N);
    for (int k = 0; k < N; k++)
        ck_assert_msg(rows[k] == ri[k] && cols[k] == ci[k] && ((const double *)vals)[k] == v[k],
                      "entry %d", k);
    hisp_matrix_destroy(&A);
    /* an error in each of several places: the line is the first bad one */
    int at[] = {N - 1, N / 2 + 7, 3 * N / 4, 11};
    for (int t = 0; t < 4; t++) {
        char *q = text + (size_t)(strchr(text, '\n') - text);
        for (int64_t l = 2; l < lineof[at[t]]; l++)
            q = strchr(q + 1, '\n');
        char save = q[1];
        q[1] = 'x';
        hisp_status s = hisp_matrix_read_mtx_buffer(ctx, text, len, "big", HISP_F64, &A, NULL);
        hisp_error_info e;
        CK_OK(ctx, hisp_context_last_error(ctx, &e));
        ck_assert_int_eq(s, HISP_ERR_INPUT_FORMAT);
        ck_assert_msg(e.line == lineof[at[t]], "error on line %lld reported on %lld (%s)",
                      (long long)lineof[at[t]], (long long)e.line, e.message);
        q[1] = save;
    }
    /* one entry fewer declared: the line of the last entry is one too many */
    char *sz = strstr(text, "1000 1000 ") + 10;
    int n1 = sprintf(sz, "%d", N - 1);
    sz[n1] = '\n'; /* 399999: as long as 400000 */
    ck_assert_int_eq(hisp_matrix_read_mtx_buffer(ctx, text, len, "big", HISP_F64, &A, NULL),
                     HISP_ERR_INPUT_FORMAT);
    hisp_error_info e;
    CK_OK(ctx, hisp_context_last_error(ctx, &e));
    ck_assert_msg(e.line == lineof[N - 1] && strstr(e.message, "more entries"), "line %lld: %s",
                  (long long)e.line, e.message);
    free(lineof);
    free(ri);
    free(ci);
    free(v);
    free(text);
    hisp_context_destroy(&ctx);
}
END_TEST

static void compress_file(const char *cmd_fmt, const char *path)
{
    char cmd[4096];
    ck_assert_int_lt(snprintf(cmd, sizeof cmd, cmd_fmt, path), (int)sizeof cmd);
    ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_compressed)
{
    hisp_context ctx = test_default_context();
    make_tmpdir();
    uint64_t st = test_seed() + 31;
    char path[700];
    /* several write blocks, CSR and COO, through .gz and .bz2 */
    hisp_matrix A = test_random_matrix(ctx, HISP_F64, 3000, 2000, 0.02, &st), B = NULL;
    const char *names[] = {"a.mtx.gz", "a.mtx.bz2", "a.mtx"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", tmpdir, names[i]);
        CK_OK(ctx, hisp_matrix_write_mtx(A, path));
        FILE *f = fopen(path, "rb");
        unsigned char m[3] = {0};
        ck_assert_int_eq(fread(m, 1, 3, f), 3);
        fclose(f);
        ck_assert(i == 0 ? m[0] == 0x1f && m[1] == 0x8b : i == 1 ? m[0] == 'B' : m[0] == '%');
        CK_OK(ctx, hisp_matrix_read_mtx(ctx, path, HISP_F64, &B, NULL));
        expect_same_csr(ctx, A, B, names[i]);
        hisp_matrix_destroy(&B);
    }
    /* gzip(1) and bzip2(1) output, read by content whatever the name */
    snprintf(path, sizeof path, "%s/a.mtx", tmpdir);
    compress_file("gzip -c %1$s > %1$s.data", path);
    snprintf(path, sizeof path, "%s/a.mtx.data", tmpdir);
    CK_OK(ctx, hisp_matrix_read_mtx(ctx, path, HISP_F64, &B, NULL));
    expect_same_csr(ctx, A, B, "gzip(1)");
    hisp_matrix_destroy(&B);
    snprintf(path, sizeof path, "%s/a.mtx", tmpdir);
    compress_file("bzip2 -c %1$s > %1$s.b; bzip2 -c %1$s >> %1$s.b", path);
    snprintf(path, sizeof path, "%s/a.mtx.b", tmpdir); /* two streams: the file twice */
    ck_assert_int_eq(hisp_matrix_read_mtx(ctx, path, HISP_F64, &B, NULL), HISP_ERR_INPUT_FORMAT);
    /* truncated and corrupt data: input-format errors */
    snprintf(path, sizeof path, "%s/a.mtx.gz", tmpdir);
    FILE *f = fopen(path, "rb");
    static char gz[1 << 22];
    size_t n = fread(gz, 1, sizeof gz, f);
    fclose(f);
    ck_assert(n > 1000 && n < sizeof gz);
    ck_assert_int_eq(hisp_matrix_read_mtx_buffer(ctx, gz, n / 2, "half.gz", HISP_F64, &B, NULL),
                     HISP_ERR_INPUT_FORMAT);
    gz[n / 2] ^= 0x55;
    ck_assert_int_eq(hisp_matrix_read_mtx_buffer(ctx, gz, n, "bad.gz", HISP_F64, &B, NULL),
                     HISP_ERR_INPUT_FORMAT);
    ck_assert_ptr_null(B);
    hisp_matrix_destroy(&A);
    /* a bomb: 1100 gzip members of 1 MiB of blanks each (about 1 MiB in
     * all) after a valid start: refused at the 1 GiB limit */
    snprintf(path, sizeof path, "%s/bomb.gz", tmpdir);
    static char blanks[1 << 20], member[1 << 16];
    memset(blanks, ' ', sizeof blanks);
    z_stream z;
    memset(&z, 0, sizeof z);
    ck_assert_int_eq(deflateInit2(&z, 9, Z_DEFLATED, 31, 9, Z_DEFAULT_STRATEGY), Z_OK);
    z.next_in = (Bytef *)blanks;
    z.avail_in = sizeof blanks;
    z.next_out = (Bytef *)member;
    z.avail_out = sizeof member;
    ck_assert_int_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
    size_t mlen = sizeof member - z.avail_out;
    deflateEnd(&z);
    f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    snprintf(path, sizeof path, "%s/bomb.gz", tmpdir);
    compress_file("printf '%%%%%%%%MatrixMarket matrix coordinate real general\\n1 1 1\\n' | "
                  "gzip > %s",
                  path);
    f = fopen(path, "ab");
    for (int i = 0; i < 1100; i++)
        ck_assert_int_eq(fwrite(member, 1, mlen, f), mlen);
    fclose(f);
    hisp_status s = hisp_matrix_read_mtx(ctx, path, HISP_F64, &B, NULL);
    hisp_error_info e;
    CK_OK(ctx, hisp_context_last_error(ctx, &e));
    ck_assert_int_eq(s, HISP_ERR_INPUT_FORMAT);
    ck_assert_msg(strstr(e.message, "more than 1024 MiB"), "%s", e.message);
    remove_tmpdir();
    hisp_context_destroy(&ctx);
}
END_TEST

/* The header alone: sizes, fields, the default type; plain, gzip and bzip2
 * files and buffers; a file whose entries are cut short still has its
 * header; a bad header fails with its line; a header past the first MiB is
 * not found; every header matches what the full read makes of the file. */
static hisp_mtx_info info_of(hisp_context ctx, const char *text)
{
    hisp_mtx_info in;
    CK_OK(ctx, hisp_matrix_read_mtx_info_buffer(ctx, text, strlen(text), "t", &in));
    return in;
}

START_TEST(test_info)
{
    hisp_context ctx = test_default_context();
    hisp_mtx_info in = info_of(ctx, "\n  %%MatrixMarket matrix coordinate real general\n% c\n"
                                    "4 5 3\n1 1 1\n");
    ck_assert(in.nrows == 4 && in.ncols == 5 && in.header.nnz_stored == 3); /* entries cut short */
    ck_assert_str_eq(in.header.field, "real");
    ck_assert_str_eq(in.header.symmetry, "general");
    ck_assert(!in.header.is_array && in.type == HISP_F64);
    in = info_of(ctx, "%%MatrixMarket matrix coordinate complex hermitian\n3 3 2\n");
    ck_assert(in.type == HISP_C64 && strcmp(in.header.symmetry, "hermitian") == 0);
    in = info_of(ctx, "%%MatrixMarket matrix coordinate quaternion general\n2 2 0\n");
    ck_assert(in.type == HISP_Q64);
    in = info_of(ctx, "%%MatrixMarket matrix coordinate pattern symmetric\n6 6 9\n");
    ck_assert(in.type == HISP_F64 && strcmp(in.header.field, "pattern") == 0);
    in = info_of(ctx, "%%MatrixMarket matrix array integer symmetric\n4 4\n");
    ck_assert(in.header.is_array && in.header.nnz_stored == 10 && in.type == HISP_F64);
    /* bad headers: the reader's errors, with the line */
    static const struct {
        const char *text;
        const char *msg;
        int64_t line;
    } bad[] = {{"%%MatrixMarket matrix coordinate reel general\n1 1 0\n", "unknown field", 1},
               {"%%MatrixMarket matrix coordinate real general\n% x\n2 x 1\n", "size line", 3},
               {"%%MatrixMarket matrix coordinate real general\n", "size line", 2},
               {"", "banner", 1}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        hisp_mtx_info b;
        ck_assert_int_eq(
            hisp_matrix_read_mtx_info_buffer(ctx, bad[i].text, strlen(bad[i].text), "t", &b),
            HISP_ERR_INPUT_FORMAT);
        hisp_error_info e;
        CK_OK(ctx, hisp_context_last_error(ctx, &e));
        ck_assert_msg(strstr(e.message, bad[i].msg) && e.line == bad[i].line, "%zu: line %lld: %s",
                      i, (long long)e.line, e.message);
    }
    ck_assert_int_eq(hisp_matrix_read_mtx_info_buffer(ctx, NULL, 0, "t", &in),
                     HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_matrix_read_mtx_info_buffer(ctx, "x", 1, "t", NULL),
                     HISP_ERR_INVALID_ARGUMENT);
    /* a header past the first MiB of comments */
    size_t big = (1u << 20) + 4096;
    char *t = malloc(big + 200);
    ck_assert_ptr_nonnull(t);
    int hl = sprintf(t, "%%%%MatrixMarket matrix coordinate real general\n");
    for (size_t k = (size_t)hl; k < big; k += 64) {
        memset(t + k, 'c', 63);
        t[k] = '%';
        t[k + 63] = '\n';
    }
    strcpy(t + big, "3 3 0\n");
    ck_assert_int_eq(hisp_matrix_read_mtx_info_buffer(ctx, t, strlen(t), "t", &in),
                     HISP_ERR_INPUT_FORMAT);
    free(t);
    /* files: plain, gzip, bzip2; a folder and a missing file */
    make_tmpdir();
    uint64_t st = test_seed() + 77;
    hisp_matrix A = test_random_matrix(ctx, HISP_F64, 3000, 2000, 0.02, &st);
    hisp_matrix_info mi;
    CK_OK(ctx, hisp_matrix_get_info(A, &mi));
    const char *names[] = {"i.mtx.gz", "i.mtx.bz2", "i.mtx"};
    char path[700];
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", tmpdir, names[i]);
        CK_OK(ctx, hisp_matrix_write_mtx(A, path));
        CK_OK(ctx, hisp_matrix_read_mtx_info(ctx, path, &in));
        ck_assert_msg(in.nrows == 3000 && in.ncols == 2000 && in.header.nnz_stored == mi.nnz,
                      "%s: %lld x %lld, %lld entries", names[i], (long long)in.nrows,
                      (long long)in.ncols, (long long)in.header.nnz_stored);
    }
    hisp_matrix_destroy(&A);
    ck_assert_int_eq(hisp_matrix_read_mtx_info(ctx, tmpdir, &in), HISP_ERR_IO);
    snprintf(path, sizeof path, "%s/none.mtx", tmpdir);
    ck_assert_int_eq(hisp_matrix_read_mtx_info(ctx, path, &in), HISP_ERR_IO);
    remove_tmpdir();
    /* the real matrices: the header says what the full read makes */
    const char *dir = test_matrix_dir();
    DIR *d = dir ? opendir(dir) : NULL;
    int seen = 0;
    for (struct dirent *e; d && (e = readdir(d)) && seen < 12;) {
        size_t l = strlen(e->d_name);
        if (l < 5 || strcmp(e->d_name + l - 4, ".mtx") != 0) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        CK_OK(ctx, hisp_matrix_read_mtx_info(ctx, path, &in));
        hisp_matrix B = NULL;
        CK_OK(ctx, hisp_matrix_read_mtx(ctx, path, in.type, &B, NULL));
        CK_OK(ctx, hisp_matrix_get_info(B, &mi));
        ck_assert_msg(mi.nrows == in.nrows && mi.ncols == in.ncols && mi.type == in.type,
                      "%s: header %lld x %lld %s, read %lld x %lld %s", e->d_name,
                      (long long)in.nrows, (long long)in.ncols, hisp_type_name(in.type),
                      (long long)mi.nrows, (long long)mi.ncols, hisp_type_name(mi.type));
        hisp_matrix_destroy(&B);
        seen++;
    }
    if (d) closedir(d);
    ck_assert(!d || seen > 0);
    hisp_context_destroy(&ctx);
}
END_TEST

/* The writer's digits read back to the same double, bit for bit: random
 * bit patterns (every exponent, subnormals), powers of two and ten,
 * integers near 2^53, the extremes. */
START_TEST(test_write_exact)
{
    hisp_context ctx = test_default_context();
    make_tmpdir();
    uint64_t st = test_seed() + 404;
    enum { N = 300000 };
    int32_t *r = malloc(N * sizeof *r), *c = malloc(N * sizeof *c);
    double *v = malloc(N * sizeof *v);
    ck_assert(r && c && v);
    for (int k = 0; k < N; k++) {
        r[k] = k;
        c[k] = 0;
        uint64_t b = test_rand(&st);
        int kind = k % 8;
        if (kind < 4) {
            memcpy(&v[k], &b, 8);
            if (!isfinite(v[k])) v[k] = (double)k;
        } else if (kind == 4) {
            v[k] = ldexp(1.0, (int)(b % 2098) - 1074);
        } else if (kind == 5) {
            v[k] = pow(10.0, (double)((int)(b % 630) - 320)) * (b & 1024 ? -1 : 1);
        } else if (kind == 6) {
            v[k] = (double)((1ull << 53) - 50 + (b % 100));
        } else {
            static const double x[] = {DBL_MAX, DBL_MIN, 4.9406564584124654e-324,
                                       0.1,     1e23,    123456.0,
                                       1e17,    1e16,    0.3,
                                       2.0 / 3, 5e-5,    1e-5};
            v[k] = x[b % (sizeof x / sizeof *x)];
        }
    }
    hisp_matrix A = NULL, B = NULL;
    CK_OK(ctx, hisp_matrix_create_coo(ctx, HISP_F64, N, 1, N, r, c, v, &A));
    char path[600];
    snprintf(path, sizeof path, "%s/exact.mtx", tmpdir);
    CK_OK(ctx, hisp_matrix_write_mtx(A, path));
    CK_OK(ctx, hisp_matrix_read_mtx(ctx, path, HISP_F64, &B, NULL));
    const int64_t *ptr;
    const int32_t *rows, *cols;
    const void *vals;
    CK_OK(ctx, hisp_matrix_host_arrays(B, &ptr, &rows, &cols, &vals));
    ck_assert_int_eq(nnz_of(B), N);
    for (int k = 0; k < N; k++)
        ck_assert_msg(rows[k] == k && memcmp(&((const double *)vals)[k], &v[k], 8) == 0,
                      "%.17g read back as %.17g", v[k], ((const double *)vals)[k]);
    hisp_matrix_destroy(&A);
    hisp_matrix_destroy(&B);
    free(r);
    free(c);
    free(v);
    remove_tmpdir();
    hisp_context_destroy(&ctx);
}
END_TEST

/* A file larger than two 32 MiB pieces is parsed as it is read: the same
 * entries as from a buffer; errors in later pieces name their own line. */
START_TEST(test_stream)
{
    hisp_context ctx = test_default_context();
    make_tmpdir();
    uint64_t st = test_seed() + 9;
    enum { N = 2300000 };
    size_t capb = (size_t)N * 48 + 4096;
    char *text = malloc(capb), *p = text;
    int64_t *off = malloc(N * sizeof *off), *lineof = malloc(N * sizeof *lineof);
    ck_assert(text && off && lineof);
    p += sprintf(p,
                 "%%%%MatrixMarket matrix coordinate real general\n%% a comment\n"
                 "100000 100000 %d\n",
                 N);
    int64_t line = 4;
    for (int k = 0; k < N; k++) {
        uint64_t r = test_rand(&st);
        if (r % 501 == 0) {
            p += sprintf(p, "%% comment %d\n\n", k);
            line += 2;
        }
        off[k] = p - text;
        lineof[k] = line++;
        p +=
            sprintf(p, r % 7 == 0 ? " %d\t%d %.17g\r\n" : "%d %d %.17g\n",
                    (int)((r >> 8) % 100000) + 1, (int)((r >> 30) % 100000) + 1, test_uniform(&st));
    }
    size_t len = (size_t)(p - text);
    ck_assert(len > ((size_t)64 << 20) + 1000);
    char path[600];
    snprintf(path, sizeof path, "%s/big.mtx", tmpdir);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fwrite(text, 1, len, f), len);
    fclose(f);
    hisp_matrix A = NULL, B = NULL;
    CK_OK(ctx, hisp_matrix_read_mtx(ctx, path, HISP_F64, &A, NULL));
    CK_OK(ctx, hisp_matrix_read_mtx_buffer(ctx, text, len, "big", HISP_F64, &B, NULL));
    const int64_t *ptr;
    const int32_t *ra, *ca, *rb, *cb;
    const void *va, *vb;
    CK_OK(ctx, hisp_matrix_host_arrays(A, &ptr, &ra, &ca, &va));
    CK_OK(ctx, hisp_matrix_host_arrays(B, &ptr, &rb, &cb, &vb));
    ck_assert_int_eq(nnz_of(A), N);
    ck_assert(memcmp(ra, rb, N * 4) == 0 && memcmp(ca, cb, N * 4) == 0 &&
              memcmp(va, vb, N * 8) == 0);
    hisp_matrix_destroy(&A);
    hisp_matrix_destroy(&B);
    /* a bad entry, then a NUL byte, in the last piece, then one in the middle */
    struct {
        int k;
        char c;
        const char *word;
    } bad[] = {{N - 3, 'x', "index"}, {N - 10, 0, "NUL"}, {N / 2, 'y', "index"}};
    for (int t = 0; t < 3; t++) {
        int64_t at = off[bad[t].k] + (text[off[bad[t].k]] == ' ');
        char save = text[at];
        text[at] = bad[t].c;
        f = fopen(path, "wb");
        ck_assert_int_eq(fwrite(text, 1, len, f), len);
        fclose(f);
        text[at] = save;
        ck_assert_int_eq(hisp_matrix_read_mtx(ctx, path, HISP_F64, &A, NULL),
                         HISP_ERR_INPUT_FORMAT);
        hisp_error_info e;
        CK_OK(ctx, hisp_context_last_error(ctx, &e));
        ck_assert_msg(e.line == lineof[bad[t].k] && strstr(e.message, bad[t].word),
                      "case %d: line %lld (expected %lld): %s", t, (long long)e.line,
                      (long long)lineof[bad[t].k], e.message);
    }
    /* cut before the last entry: the file ends early */
    f = fopen(path, "wb");
    ck_assert_int_eq(fwrite(text, 1, (size_t)off[N - 1], f), (size_t)off[N - 1]);
    fclose(f);
    ck_assert_int_eq(hisp_matrix_read_mtx(ctx, path, HISP_F64, &A, NULL), HISP_ERR_INPUT_FORMAT);
    hisp_error_info e;
    CK_OK(ctx, hisp_context_last_error(ctx, &e));
    ck_assert_msg(e.line == lineof[N - 1] && strstr(e.message, "ends after"), "line %lld: %s",
                  (long long)e.line, e.message);
    free(off);
    free(lineof);
    free(text);
    remove_tmpdir();
    hisp_context_destroy(&ctx);
}
END_TEST

Suite *suite_mmio(void)
{
    Suite *s = suite_create("mmio");
    TCase *tc = test_tcase(s, "mmio", 120);
    tcase_add_test(tc, test_fields_and_symmetries);
    tcase_add_test(tc, test_type_rules);
    tcase_add_test(tc, test_layout_variants);
    tcase_add_test(tc, test_values_exact);
    tcase_add_test(tc, test_array_files);
    tcase_add_test(tc, test_vectors);
    tcase_add_test(tc, test_vector_columns);
    tcase_add_test(tc, test_write_read_roundtrip);
    tcase_add_test(tc, test_malformed);
    tcase_add_test(tc, test_truncations_and_corruptions);
    tcase_add_test(tc, test_io_errors);
    tcase_add_test(tc, test_locale_independent);
    tcase_add_test(tc, test_parse_speed);
    tcase_add_test(tc, test_real_matrices);
    tcase_add_test(tc, test_peer_forms);
    tcase_add_test(tc, test_float_exact);
    tcase_add_test(tc, test_chunks);
    tcase_add_test(tc, test_compressed);
    tcase_add_test(tc, test_info);
    tcase_add_test(tc, test_write_exact);
    tcase_add_test(tc, test_stream);
    return s;
}
