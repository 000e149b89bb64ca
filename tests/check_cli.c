/* The `hisp` program, run as a child process on temporary files: help and
 * usage handling, exit codes, gen -> stats, spmv results against the library,
 * error messages with file and line, JSON output. */
#include "cli_run.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- tests -------------------------------------------------------------- */

START_TEST(test_help_and_usage)
{
    static const char *const cmds[] = {"info", "gen", "stats", "spmv", "demo"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        run_result r = run_hisp(cmds[i], "--help", NULL);
        CK_RUN(r, 0);
        char want[64];
        snprintf(want, sizeof want, "usage: hisp %s", cmds[i]);
        ck_assert_msg(strstr(r.out, want), "hisp %s --help:\n%s", cmds[i], r.out);
        ck_assert_msg(strstr(r.out, "--json"), "hisp %s --help does not list --json", cmds[i]);
        run_free(&r);
        /* unknown option: usage error naming it */
        r = run_hisp(cmds[i], "--no-such-option", NULL);
        CK_RUN(r, 1);
        ck_assert_msg(strstr(r.err, "--no-such-option"), "%s", r.err);
        run_free(&r);
    }
    run_result r = run_hisp("--help", NULL);
    CK_RUN(r, 0);
    ck_assert(strstr(r.out, "usage: hisp") && strstr(r.out, "exit status"));
    run_free(&r);
    r = run_hisp("--version", NULL);
    CK_RUN(r, 0);
    ck_assert_msg(strstr(r.out, hisp_version_string()), "%s", r.out);
    run_free(&r);
    r = run_hisp(NULL);
    CK_RUN(r, 1);
    run_free(&r);
    r = run_hisp("frobnicate", NULL);
    CK_RUN(r, 1);
    ck_assert(strstr(r.err, "frobnicate"));
    run_free(&r);
    r = run_hisp("--frobnicate", NULL);
    CK_RUN(r, 1);
    run_free(&r);
    /* missing arguments and option values */
    r = run_hisp("gen", "poisson2d", NULL); /* no -o */
    CK_RUN(r, 1);
    run_free(&r);
    r = run_hisp("stats", NULL);
    CK_RUN(r, 1);
    run_free(&r);
    r = run_hisp("spmv", "a.mtx", "--repeat", NULL);
    CK_RUN(r, 1);
    run_free(&r);
    r = run_hisp("stats", "a.mtx", "b.mtx", NULL);
    CK_RUN(r, 1);
    run_free(&r);
    r = run_hisp("info", "--json=yes", NULL);
    CK_RUN(r, 1);
    run_free(&r);
}
END_TEST

START_TEST(test_invalid_values)
{
    const char *f = tmp("v.mtx");
    run_result r = run_hisp("gen", "poisson2d", "--n", "abc", "-o", f, NULL);
    CK_RUN(r, 2);
    ck_assert_msg(strstr(r.err, "abc"), "%s", r.err);
    run_free(&r);
    r = run_hisp("gen", "no-such-kind", "-o", f, NULL);
    CK_RUN(r, 2);
    run_free(&r);
    r = run_hisp("gen", "poisson2d", "--n", "-3", "-o", f, NULL);
    CK_RUN(r, 2);
    run_free(&r);
    r = run_hisp("stats", f, "--precision", "f16", NULL);
    CK_RUN(r, 2);
    run_free(&r);
    r = run_hisp("spmv", f, "--backend", "quantum", NULL);
    CK_RUN(r, 2);
    run_free(&r);
    r = run_hisp("spmv", f, "--alpha", "1.5x", NULL);
    CK_RUN(r, 2);
    run_free(&r);
    r = run_hisp("spmv", f, "--format", "ell", NULL);
    CK_RUN(r, 2);
    run_free(&r);
    r = run_hisp("demo", "--repeat", "0", NULL);
    CK_RUN(r, 2);
    run_free(&r);
}
END_TEST

START_TEST(test_info_json)
{
    run_result r = run_hisp("info", "--json", NULL);
    CK_RUN(r, 0);
    ck_assert_msg(json_valid(r.out), "not JSON:\n%s", r.out);
    ck_assert(strstr(r.out, "\"backends\""));
    ck_assert(strstr(r.out, "\"reference\""));
    ck_assert_int_ge((int)test_json_double(r.out, "device_count"), 1);
    run_free(&r);
    r = run_hisp("info", NULL);
    CK_RUN(r, 0);
    ck_assert(strstr(r.out, "reference"));
    run_free(&r);
}
END_TEST

/* gen KIND -> stats --json agrees with the library's own matrix. */
START_TEST(test_gen_then_stats)
{
    uint64_t seed = test_seed() % 100000;
    hisp_context ctx = test_default_context();
    for (int k = 0; k < HISP_GEN_COUNT; k++) {
        hisp_gen_params p;
        hisp_gen_defaults((hisp_gen_kind)k, &p);
        char nbuf[32], sbuf[32];
        p.n = k == HISP_GEN_POISSON2D ? 9 : TEST_GEN_3D(k) ? 5 : k == HISP_GEN_DENSE ? 13 : 150;
        p.seed = seed + (uint64_t)k;
        snprintf(nbuf, sizeof nbuf, "%lld", (long long)p.n);
        snprintf(sbuf, sizeof sbuf, "%llu", (unsigned long long)p.seed);
        const char *f = tmp("g.mtx");
        run_result r;
        if (k == HISP_GEN_RMAT) {
            p.scale = 7;
            r = run_hisp("gen", hisp_gen_name((hisp_gen_kind)k), "--scale", "7", "--seed", sbuf,
                         "-o", f, "--json", NULL);
        } else {
            r = run_hisp("gen", hisp_gen_name((hisp_gen_kind)k), "--n", nbuf, "--seed", sbuf, "-o",
                         f, "--json", NULL);
        }
        CK_RUN(r, 0);
        ck_assert_msg(json_valid(r.out), "not JSON:\n%s", r.out);
        hisp_matrix A = NULL;
        CK_OK(ctx, hisp_matrix_generate(ctx, &p, HISP_F64, &A));
        hisp_matrix_info mi;
        CK_OK(ctx, hisp_matrix_get_info(A, &mi));
        ck_assert_int_eq((int64_t)test_json_double(r.out, "nnz"), mi.nnz);
        run_free(&r);

        r = run_hisp("stats", f, "--json", NULL);
        CK_RUN(r, 0);
        ck_assert_msg(json_valid(r.out), "not JSON:\n%s", r.out);
        ck_assert_int_eq((int64_t)test_json_double(r.out, "rows"), mi.nrows);
        ck_assert_int_eq((int64_t)test_json_double(r.out, "cols"), mi.ncols);
        ck_assert_int_eq((int64_t)test_json_double(r.out, "nnz"), mi.nnz);
        ck_assert(strstr(r.out, "\"field\": \"real\""));
        ck_assert(strstr(r.out, "\"symmetry\": \"general\""));
        /* row lengths and bytes from the library's arrays */
        CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_CSR));
        const int64_t *ptr;
        const int32_t *rows, *cols;
        const void *vals;
        CK_OK(ctx, hisp_matrix_host_arrays(A, &ptr, &rows, &cols, &vals));
        int64_t mn = INT64_MAX, mx = 0;
        for (int64_t i = 0; i < mi.nrows; i++) {
            int64_t len = ptr[i + 1] - ptr[i];
            mn = len < mn ? len : mn;
            mx = len > mx ? len : mx;
        }
        ck_assert_int_eq((int64_t)test_json_double(r.out, "min"), mn);
        ck_assert_int_eq((int64_t)test_json_double(r.out, "max"), mx);
        ck_assert(fabs(test_json_double(r.out, "mean") - (double)mi.nnz / (double)mi.nrows) < 1e-6);
        uint64_t coo = 0, csr = 0;
        CK_OK(ctx, hisp_matrix_format_bytes(A, HISP_FORMAT_COO, HISP_F64, &coo));
        CK_OK(ctx, hisp_matrix_format_bytes(A, HISP_FORMAT_CSR, HISP_F64, &csr));
        ck_assert(strstr(r.out, "\"bytes\""));
        ck_assert_uint_eq((uint64_t)test_json_double(r.out, "coo"), coo);
        ck_assert_uint_eq((uint64_t)test_json_double(r.out, "csr"), csr);
        run_free(&r);
        hisp_matrix_destroy(&A);
    }
    /* the Laplacian sizes are known in closed form */
    run_result r = run_hisp("gen", "poisson3d", "--n", "6", "-o", tmp("p.mtx"), NULL);
    CK_RUN(r, 0);
    run_free(&r);
    r = run_hisp("stats", tmp("p.mtx"), "--json", "--precision", "f32", NULL);
    CK_RUN(r, 0);
    ck_assert_int_eq((int64_t)test_json_double(r.out, "rows"), 216);
    ck_assert_int_eq((int64_t)test_json_double(r.out, "nnz"), 7 * 216 - 6 * 36);
    ck_assert_int_eq((int64_t)test_json_double(r.out, "empty_rows"), 0);
    run_free(&r);
    r = run_hisp("stats", tmp("p.mtx"), NULL);
    CK_RUN(r, 0);
    ck_assert(strstr(r.out, "216 x 216"));
    run_free(&r);
    hisp_context_destroy(&ctx);
}
END_TEST

/* Writes a random m x n matrix and vectors; returns the matrix. */
static hisp_matrix write_problem(hisp_context ctx, int64_t m, int64_t n, uint64_t *st,
                                 const char *mpath, const char *xpath, int64_t xn,
                                 const char *ypath, int64_t yn, double **x, double **y0)
{
    hisp_matrix A = test_random_matrix(ctx, HISP_F64, m, n, 0.2, st);
    CK_OK(ctx, hisp_matrix_write_mtx(A, mpath));
    *x = malloc((size_t)xn * sizeof **x);
    *y0 = malloc((size_t)yn * sizeof **y0);
    for (int64_t i = 0; i < xn; i++)
        (*x)[i] = test_uniform(st);
    for (int64_t i = 0; i < yn; i++)
        (*y0)[i] = test_uniform(st);
    hisp_vector v = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, xn, &v));
    CK_OK(ctx, hisp_vector_write(v, *x));
    CK_OK(ctx, hisp_vector_write_mtx(v, xpath));
    hisp_vector_destroy(&v);
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, yn, &v));
    CK_OK(ctx, hisp_vector_write(v, *y0));
    CK_OK(ctx, hisp_vector_write_mtx(v, ypath));
    hisp_vector_destroy(&v);
    /* the matrix as the program sees it: read back from the file */
    hisp_matrix B = NULL;
    CK_OK(ctx, hisp_matrix_read_mtx(ctx, mpath, HISP_F64, &B, NULL));
    hisp_matrix_destroy(&A);
    return B;
}

/* y = alpha*op(A)*x + beta*y0 on the reference backend in this process. */
static double *expected(hisp_context ctx, hisp_matrix A, hisp_op op, double alpha, const double *x,
                        double beta, const double *y0, int64_t yn)
{
    double *y = malloc((size_t)yn * sizeof *y);
    ck_assert_ptr_nonnull(y);
    test_spmv_host(ctx, op, &alpha, A, x, &beta, y0, y);
    return y;
}

static double *read_vec(hisp_context ctx, const char *path, int64_t n)
{
    hisp_vector v = NULL;
    CK_OK(ctx, hisp_vector_read_mtx(ctx, path, HISP_F64, &v));
    int64_t len = -1;
    CK_OK(ctx, hisp_vector_size(v, &len));
    ck_assert_int_eq(len, n);
    double *y = malloc((size_t)n * sizeof *y + 8);
    CK_OK(ctx, hisp_vector_read(v, y));
    hisp_vector_destroy(&v);
    return y;
}

/* spmv --out on a rectangular matrix, with and without x/y0/alpha/beta and
 * transposed: the written y matches the library's result. */
START_TEST(test_spmv_out_matches_library)
{
    uint64_t st = test_seed() + 301;
    hisp_context ctx = test_default_context();
    const int64_t m = 37, n = 23;
    for (int t = 0; t < 2; t++) {
        hisp_op op = t ? HISP_OP_T : HISP_OP_N;
        int64_t xn = t ? m : n, yn = t ? n : m;
        double *x, *y0;
        hisp_matrix A = write_problem(ctx, m, n, &st, tmp("A.mtx"), tmp("x.mtx"), xn, tmp("y0.mtx"),
                                      yn, &x, &y0);
        /* full form */
        run_result r = run_hisp("spmv", tmp("A.mtx"), "--backend", "reference", "--x", tmp("x.mtx"),
                                "--y", tmp("y0.mtx"), "--alpha", "-1.5", "--beta", "0.25", "--out",
                                tmp("y.mtx"), t ? "--transpose" : NULL, NULL);
        CK_RUN(r, 0);
        ck_assert(strstr(r.out, "reference"));
        run_free(&r);
        double *want = expected(ctx, A, op, -1.5, x, 0.25, y0, yn);
        double *got = read_vec(ctx, tmp("y.mtx"), yn);
        ck_assert_msg(test_rel_error(HISP_F64, got, want, yn) < 1e-12, "op %d: error %g", t,
                      test_rel_error(HISP_F64, got, want, yn));
        free(want);
        free(got);
        /* defaults: x_j = 1/(j+1), y0 = 0, alpha 1, beta 0 */
        r = run_hisp("spmv", tmp("A.mtx"), "--backend", "reference", "--out", tmp("y.mtx"),
                     t ? "--transpose" : NULL, NULL);
        CK_RUN(r, 0);
        run_free(&r);
        for (int64_t j = 0; j < xn; j++)
            x[j] = 1.0 / (double)(j + 1);
        want = expected(ctx, A, op, 1.0, x, 0.0, y0, yn);
        got = read_vec(ctx, tmp("y.mtx"), yn);
        ck_assert_msg(test_rel_error(HISP_F64, got, want, yn) < 1e-12, "defaults op %d", t);
        free(want);
        free(got);
        /* a vector of the wrong length is an input error */
        r = run_hisp("spmv", tmp("A.mtx"), "--backend", "reference", "--x", tmp("y0.mtx"),
                     t ? "--transpose" : NULL, NULL);
        CK_RUN(r, 2);
        run_free(&r);
        free(x);
        free(y0);
        hisp_matrix_destroy(&A);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

static bool have_scipy(void);

/* A random n x k block in a Matrix Market array file, written from a
 * vector in `order` (the file is column-major either way); returns the
 * entries column after column. */
static double *write_columns(hisp_context ctx, int64_t n, int64_t k, hisp_order order,
                             const char *path, uint64_t *st)
{
    double *col = malloc((size_t)(n * k) * sizeof *col), *buf = malloc((size_t)(n * k) * 8 + 8);
    ck_assert(col && buf);
    for (int64_t e = 0; e < n * k; e++)
        col[e] = test_uniform(st);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < k; j++)
            buf[order == HISP_ORDER_ROW ? i * k + j : j * n + i] = col[j * n + i];
    hisp_vector v = NULL;
    CK_OK(ctx, hisp_vector_create_columns(ctx, HISP_F64, n, k, order, &v));
    CK_OK(ctx, hisp_vector_write(v, buf));
    CK_OK(ctx, hisp_vector_write_mtx(v, path));
    hisp_vector_destroy(&v);
    free(buf);
    return col;
}

/* spmv --x X.mtx with X of 3 and 16 columns on the reference backend: the
 * written Y (k columns) against a dense product on the host and, where
 * python3 has scipy, against scipy's alpha*op(A) @ X + beta*Y0; "columns"
 * in --json; a format outside the CSR family, and mismatched X or Y0, are
 * input errors. */
START_TEST(test_spmv_columns)
{
    uint64_t st = test_seed() + 307;
    hisp_context ctx = test_default_context();
    char script[PATH_MAX];
    snprintf(script, sizeof script, "%s/tests/spmm_scipy.py", HISP_SOURCE_DIR);
    bool scipy = have_scipy();
    if (!scipy)
        test_skip("spmv --x of several columns against scipy: python3 with scipy is not "
                  "installed (checked against the host product only)");
    const int64_t m = 37, n = 23;
    hisp_matrix A0 = test_random_matrix(ctx, HISP_F64, m, n, 0.2, &st);
    CK_OK(ctx, hisp_matrix_write_mtx(A0, tmp("A.mtx")));
    hisp_matrix_destroy(&A0);
    hisp_matrix A = NULL; /* as the program reads it */
    CK_OK(ctx, hisp_matrix_read_mtx(ctx, tmp("A.mtx"), HISP_F64, &A, NULL));
    int64_t dm, dn;
    double *D = test_dense_image(A, 1, &dm, &dn);
    ck_assert(dm == m && dn == n);
    const int64_t ks[] = {3, 16};
    for (int c = 0; c < 4; c++) {
        int64_t k = ks[c / 2];
        bool t = c % 2;
        int64_t xn = t ? m : n, yn = t ? n : m;
        double *x =
            write_columns(ctx, xn, k, c == 1 ? HISP_ORDER_COL : HISP_ORDER_ROW, tmp("X.mtx"), &st);
        double *y0 = write_columns(ctx, yn, k, HISP_ORDER_COL, tmp("Y0.mtx"), &st);
        run_result r = run_hisp("spmv", tmp("A.mtx"), "--backend", "reference", "--x", tmp("X.mtx"),
                                "--y", tmp("Y0.mtx"), "--alpha", "-1.5", "--beta", "0.25", "-o",
                                tmp("Y.mtx"), "--json", t ? "--transpose" : NULL, NULL);
        CK_RUN(r, 0);
        ck_assert_int_eq(test_json_int(r.out, "columns"), k);
        run_free(&r);
        /* the host's product, in double */
        double *want = malloc((size_t)(yn * k) * sizeof *want);
        ck_assert(want);
        for (int64_t j = 0; j < k; j++)
            for (int64_t i = 0; i < yn; i++) {
                double sum = 0;
                for (int64_t l = 0; l < xn; l++)
                    sum += (t ? D[l * n + i] : D[i * n + l]) * x[j * xn + l];
                want[j * yn + i] = -1.5 * sum + 0.25 * y0[j * yn + i];
            }
        hisp_vector yv = NULL;
        CK_OK(ctx, hisp_vector_read_mtx(ctx, tmp("Y.mtx"), HISP_F64, &yv));
        int64_t len = 0, kk = 0;
        hisp_order order;
        CK_OK(ctx, hisp_vector_size(yv, &len));
        CK_OK(ctx, hisp_vector_columns(yv, &kk, &order));
        ck_assert_int_eq(len, yn * k);
        ck_assert_int_eq(kk, k);
        double *got = malloc((size_t)len * sizeof *got);
        CK_OK(ctx, hisp_vector_read(yv, got));
        hisp_vector_destroy(&yv);
        double err = test_rel_error(HISP_F64, got, want, yn * k);
        ck_assert_msg(err < 1e-12, "k %lld op %s: error %g against the host", (long long)k,
                      t ? "T" : "N", err);
        if (scipy) {
            const char *py[] = {"python3", script,        tmp("Y.mtx"),  tmp("A.mtx"), tmp("X.mtx"),
                                "--y0",    tmp("Y0.mtx"), "--alpha",     "-1.5",       "--beta",
                                "0.25",    "--op",        t ? "t" : "n", NULL};
            r = run_program(py);
            ck_assert_msg(r.status == 0, "k %lld op %s against scipy: %s%s", (long long)k,
                          t ? "T" : "N", r.out, r.err);
            run_free(&r);
        }
        free(want), free(got), free(x), free(y0);
    }
    /* defaults (alpha 1, beta 0, no Y0), the human output, --repeat's wall clock */
    double *x = write_columns(ctx, n, 3, HISP_ORDER_COL, tmp("X.mtx"), &st);
    run_result r = run_hisp("spmv", tmp("A.mtx"), "--backend", "reference", "--x", tmp("X.mtx"),
                            "-o", tmp("Y.mtx"), NULL);
    CK_RUN(r, 0);
    ck_assert_msg(strstr(r.out, "over 3 columns"), "%s", r.out);
    run_free(&r);
    if (scipy) {
        const char *py[] = {"python3", script, tmp("Y.mtx"), tmp("A.mtx"), tmp("X.mtx"), NULL};
        r = run_program(py);
        ck_assert_msg(r.status == 0, "defaults against scipy: %s%s", r.out, r.err);
        run_free(&r);
    }
    r = run_hisp("spmv", tmp("A.mtx"), "--backend", "reference", "--x", tmp("X.mtx"), "--repeat",
                 "2", "--check", "--json", NULL);
    CK_RUN(r, 0);
    ck_assert_int_eq(test_json_int(r.out, "columns"), 3);
    ck_assert_msg(strstr(r.out, "\"clock\": \"wall\""), "%s", r.out);
    ck_assert(test_json_double(r.out, "rel_error") < 1e-12);
    run_free(&r);
    /* one column: "columns" is 1 */
    r = run_hisp("spmv", tmp("A.mtx"), "--backend", "reference", "--json", NULL);
    CK_RUN(r, 0);
    ck_assert_int_eq(test_json_int(r.out, "columns"), 1);
    run_free(&r);
    /* SELL has no SpMM kernel: column by column (the file's X is column-major), checked */
    r = run_hisp("spmv", tmp("A.mtx"), "--backend", "reference", "--x", tmp("X.mtx"), "--format",
                 "sell", "--check", "--json", NULL);
    CK_RUN(r, 0);
    ck_assert_int_eq(test_json_int(r.out, "columns"), 3);
    ck_assert(test_json_double(r.out, "rel_error") < 1e-12);
    run_free(&r);
    /* X of op(A)'s rows transposed, and Y0 of other columns */
    r = run_hisp("spmv", tmp("A.mtx"), "--backend", "reference", "--x", tmp("X.mtx"), "--transpose",
                 NULL);
    CK_RUN(r, 2);
    ck_assert_msg(strstr(r.err, "23 rows (of 3 columns), op(A) needs 37"), "%s", r.err);
    run_free(&r);
    free(write_columns(ctx, m, 2, HISP_ORDER_COL, tmp("Y0.mtx"), &st));
    r = run_hisp("spmv", tmp("A.mtx"), "--backend", "reference", "--x", tmp("X.mtx"), "--y",
                 tmp("Y0.mtx"), NULL);
    CK_RUN(r, 2);
    ck_assert_msg(strstr(r.err, "y has 2 columns, x 3"), "%s", r.err);
    run_free(&r);
    free(x);
    free(D);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

/* hisp add: C = alpha*op(A) + beta*op(B) written as .mtx and .hisp, checked
 * through C x against alpha*op(A) x + beta*op(B) x; mismatched sizes and a
 * device backend are refused with their exit codes. */
START_TEST(test_add_matches_library)
{
    uint64_t st = test_seed() + 311;
    hisp_context ctx = test_default_context();
    const int64_t m = 41, n = 29;
    for (int t = 0; t < 4; t++) {
        hisp_op op = t & 1 ? HISP_OP_T : HISP_OP_N;
        int64_t xn = t & 1 ? m : n, yn = t & 1 ? n : m;
        double *x, *y0, *xb, *yb;
        hisp_matrix A = write_problem(ctx, m, n, &st, tmp("A.mtx"), tmp("x.mtx"), xn, tmp("y0.mtx"),
                                      yn, &x, &y0);
        hisp_matrix B = write_problem(ctx, m, n, &st, tmp("B.mtx"), tmp("xb.mtx"), xn,
                                      tmp("yb.mtx"), yn, &xb, &yb);
        const char *out = t & 2 ? tmp("C.hisp") : tmp("C.mtx");
        run_result r = run_hisp("add", tmp("A.mtx"), tmp("B.mtx"), "-o", out, "--alpha", "-1.5",
                                "--beta", "0.25", "--json", t & 1 ? "--transpose" : NULL, NULL);
        CK_RUN(r, 0);
        ck_assert_int_eq(test_json_int(r.out, "rows"), yn);
        run_free(&r);
        hisp_matrix C = NULL;
        CK_OK(ctx, t & 2 ? hisp_matrix_load(ctx, out, &C)
                         : hisp_matrix_read_mtx(ctx, out, HISP_F64, &C, NULL));
        double *zero = calloc((size_t)yn, sizeof *zero);
        ck_assert(zero);
        double *ya = expected(ctx, A, op, -1.5, x, 0.0, zero, yn);
        double *want = expected(ctx, B, op, 0.25, x, 1.0, ya, yn);
        double *got = expected(ctx, C, HISP_OP_N, 1.0, x, 0.0, zero, yn);
        ck_assert_msg(test_rel_error(HISP_F64, got, want, yn) < 1e-12, "add case %d: error %g", t,
                      test_rel_error(HISP_F64, got, want, yn));
        free(zero), free(ya), free(want), free(got), free(x), free(y0), free(xb), free(yb);
        hisp_matrix_destroy(&A);
        hisp_matrix_destroy(&B);
        hisp_matrix_destroy(&C);
    }
    double *x, *y0;
    hisp_matrix D =
        write_problem(ctx, 5, 6, &st, tmp("D.mtx"), tmp("x.mtx"), 6, tmp("y0.mtx"), 5, &x, &y0);
    run_result r = run_hisp("add", tmp("A.mtx"), tmp("D.mtx"), "-o", tmp("E.mtx"), NULL);
    CK_RUN(r, 2); /* sizes differ */
    ck_assert(strstr(r.err, "op(A)"));
    run_free(&r);
    /* on a device (when the machine has OpenCL): the same sum, said where it ran */
    const test_target *tt;
    int nt = test_targets(&tt);
    for (int i = 0; i < nt; i++) {
        if (tt[i].kind != HISP_BACKEND_OPENCL) continue;
        char dev[16];
        snprintf(dev, sizeof dev, "%d", tt[i].device);
        r = run_hisp("add", tmp("A.mtx"), tmp("B.mtx"), "-o", tmp("E.hisp"), "--backend", "opencl",
                     "--device", dev, "--json", NULL);
        CK_RUN(r, 0);
        ck_assert(strstr(r.out, "\"backend\": \"opencl\""));
        ck_assert_int_gt(test_json_int(r.out, "rounds"), 0);
        run_free(&r);
        r = run_hisp("add", tmp("A.mtx"), tmp("B.mtx"), "-o", tmp("F.hisp"), NULL);
        CK_RUN(r, 0);
        run_free(&r);
        hisp_matrix E = NULL, F = NULL, Ec = NULL, Fc = NULL;
        CK_OK(ctx, hisp_matrix_load(ctx, tmp("E.hisp"), &E));
        CK_OK(ctx, hisp_matrix_load(ctx, tmp("F.hisp"), &F));
        CK_OK(ctx, hisp_matrix_duplicate(E, HISP_FORMAT_CSR, &Ec));
        CK_OK(ctx, hisp_matrix_duplicate(F, HISP_FORMAT_CSR, &Fc));
        hisp_matrix_info ie, jf;
        CK_OK(ctx, hisp_matrix_get_info(Ec, &ie));
        CK_OK(ctx, hisp_matrix_get_info(Fc, &jf));
        ck_assert_int_eq(ie.nnz, jf.nnz);
        const void *ve, *vf;
        const int32_t *ce, *cf;
        CK_OK(ctx, hisp_matrix_host_arrays(Ec, NULL, NULL, &ce, &ve));
        CK_OK(ctx, hisp_matrix_host_arrays(Fc, NULL, NULL, &cf, &vf));
        ck_assert(memcmp(ce, cf, (size_t)ie.nnz * sizeof *ce) == 0);
        ck_assert(test_rel_error(HISP_F64, ve, vf, ie.nnz) < 1e-14);
        hisp_matrix_destroy(&E), hisp_matrix_destroy(&F);
        hisp_matrix_destroy(&Ec), hisp_matrix_destroy(&Fc);
        break;
    }
    r = run_hisp("add", tmp("A.mtx"), "-o", tmp("E.mtx"), NULL);
    CK_RUN(r, 1);
    run_free(&r);
    free(x), free(y0);
    hisp_matrix_destroy(&D);
    hisp_context_destroy(&ctx);
}
END_TEST

/* python3 with scipy, the CLI tests' second oracle */
static bool have_scipy(void)
{
    const char *probe[] = {"python3", "-c", "import scipy", NULL};
    run_result r = run_program(probe);
    bool have = r.status == 0;
    run_free(&r);
    return have;
}

/* hisp multiply against scipy (tests/spgemm_scipy.py): A*B, A^T*A, A*A^T,
 * P^T*A*P of generated files, A*A^H of a complex real matrix and A*A of a
 * real one; skipped where python3 or scipy is missing. */
START_TEST(test_multiply_scipy)
{
    char script[PATH_MAX];
    snprintf(script, sizeof script, "%s/tests/spgemm_scipy.py", HISP_SOURCE_DIR);
    run_result r;
    if (!have_scipy()) {
        test_skip("multiply against scipy: python3 with scipy is not installed");
        return;
    }
    r = run_hisp("gen", "random", "--n", "300", "--nnz-per-row", "6", "--seed", "11", "-o",
                 tmp("R.mtx"), NULL);
    CK_RUN(r, 0);
    run_free(&r);
    r = run_hisp("gen", "banded", "--n", "300", "--bandwidth", "4", "--seed", "12", "-o",
                 tmp("S.mtx"), NULL);
    CK_RUN(r, 0);
    run_free(&r);
    const char *mdir = test_matrix_dir();
    char west[PATH_MAX], dwg[PATH_MAX];
    snprintf(west, sizeof west, "%s/west0479.mtx", mdir ? mdir : ".");
    snprintf(dwg, sizeof dwg, "%s/dwg961a.mtx", mdir ? mdir : ".");
    static const struct {
        int a, b; /* 0: R, 1: S, 2: west0479, 3: dwg961a; b -1: none (B = A) */
        const char *ta, *tb;
        bool ptap;
    } cases[] = {{0, 1, NULL, NULL, false}, {0, -1, "t", NULL, false}, {0, -1, NULL, "t", false},
                 {0, 1, NULL, NULL, true},  {3, -1, NULL, "h", false}, {2, -1, NULL, NULL, false}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        if (cases[c].a >= 2 && !mdir) {
            test_skip_no_matrices("multiply against scipy on ../shared/matrices");
            continue;
        }
        const char *files[] = {tmp("R.mtx"), tmp("S.mtx"), west, dwg};
        const char *a = files[cases[c].a], *b = cases[c].b >= 0 ? files[cases[c].b] : NULL;
        const char *args[16], *py[16];
        int n = 0, k = 0;
        args[n++] = "multiply";
        if (cases[c].ptap) args[n++] = "--ptap";
        args[n++] = a;
        if (b) args[n++] = b;
        args[n++] = "-o";
        args[n++] = tmp("C.mtx");
        py[k++] = "python3", py[k++] = script, py[k++] = tmp("C.mtx"), py[k++] = a;
        if (b) py[k++] = b;
        if (cases[c].ta) args[n++] = "--transpose-a", args[n++] = cases[c].ta;
        if (cases[c].ta) py[k++] = "--ta", py[k++] = cases[c].ta;
        if (cases[c].tb) args[n++] = "--transpose-b", args[n++] = cases[c].tb;
        if (cases[c].tb) py[k++] = "--tb", py[k++] = cases[c].tb;
        if (cases[c].ptap) py[k++] = "--ptap";
        args[n] = NULL, py[k] = NULL;
        r = run_hisp_argv(args);
        CK_RUN(r, 0);
        run_free(&r);
        r = run_program(py);
        ck_assert_msg(r.status == 0, "case %zu: %s%s", c, r.out, r.err);
        run_free(&r);
    }
}
END_TEST

/* hisp gen aniso3d and jump3d against tests/gen_scipy.py's independent
 * construction (aniso3d: Kronecker sums of 1D Laplacians) and checks
 * (jump3d: cubes of one coefficient, harmonic couplings, positive definite). */
START_TEST(test_gen_diffusion_scipy)
{
    char script[PATH_MAX];
    snprintf(script, sizeof script, "%s/tests/gen_scipy.py", HISP_SOURCE_DIR);
    run_result r;
    if (!have_scipy()) {
        test_skip("gen against scipy: python3 with scipy is not installed");
        return;
    }
    r = run_hisp("gen", "aniso3d", "--n", "5", "--epsilon", "0.01", "-o", tmp("an.mtx"), NULL);
    CK_RUN(r, 0);
    run_free(&r);
    const char *pa[] = {"python3", script, "aniso3d", tmp("an.mtx"), "5", "0.01", NULL};
    r = run_program(pa);
    ck_assert_msg(r.status == 0, "aniso3d: %s%s", r.out, r.err);
    run_free(&r);
    r = run_hisp("gen", "jump3d", "--n", "6", "--block", "2", "--contrast", "1e4", "--seed", "3",
                 "-o", tmp("jp.mtx"), NULL);
    CK_RUN(r, 0);
    run_free(&r);
    const char *pj[] = {"python3", script, "jump3d", tmp("jp.mtx"), "6", "2", "1e4", NULL};
    r = run_program(pj);
    ck_assert_msg(r.status == 0, "jump3d: %s%s", r.out, r.err);
    run_free(&r);
    r = run_hisp("gen", "aniso3d", "--epsilon", "0", "-o", tmp("an.mtx"), NULL);
    CK_RUN(r, 2);
    ck_assert_msg(strstr(r.err, "--epsilon"), "%s", r.err);
    run_free(&r);
}
END_TEST

/* hisp multiply: C of the program equals the library's product bit for
 * bit, and C*x equals op(A)*(op(B)*x) by two SpMVs (no SpGEMM in the
 * oracle), for every op pair and B left out; JSON fields; errors. */
START_TEST(test_multiply_matches_library)
{
    uint64_t st = test_seed() + 733;
    hisp_context ctx = NULL;
    ck_assert_int_eq(hisp_context_create(&ctx), HISP_SUCCESS);
    for (int t = 0; t < 5; t++) {
        hisp_op oa = t & 1 ? HISP_OP_T : HISP_OP_N, ob = t & 2 ? HISP_OP_T : HISP_OP_N;
        bool self = t == 4; /* B left out: A*A */
        int64_t m = 23, k = self ? 23 : 31, n = self ? 23 : 17;
        double *x, *y0, *xb, *yb;
        hisp_matrix A = write_problem(ctx, oa ? k : m, oa ? m : k, &st, tmp("A.mtx"), tmp("x.mtx"),
                                      n, tmp("y0.mtx"), k, &x, &y0);
        hisp_matrix B = self ? A
                             : write_problem(ctx, ob ? n : k, ob ? k : n, &st, tmp("B.mtx"),
                                             tmp("xb.mtx"), n, tmp("yb.mtx"), k, &xb, &yb);
        run_result r =
            run_hisp("multiply", tmp("A.mtx"), "-o", tmp("C.mtx"), "--json", "--repeat", "3",
                     oa ? "--transpose-a" : "--type=f64", ob ? "--transpose-b" : "--type=f64",
                     self ? NULL : tmp("B.mtx"), NULL);
        CK_RUN(r, 0);
        hisp_matrix C = NULL, L = NULL;
        CK_OK(ctx, hisp_matrix_read_mtx(ctx, tmp("C.mtx"), HISP_F64, &C, NULL));
        CK_OK(ctx, hisp_matrix_multiply(oa, A, ob, B, &L));
        hisp_matrix_info ic;
        CK_OK(ctx, hisp_matrix_get_info(L, &ic));
        ck_assert_int_eq(test_json_int(r.out, "rows"), m);
        ck_assert_int_eq(test_json_int(r.out, "cols"), n);
        ck_assert_int_eq(test_json_int(r.out, "nnz"), ic.nnz);
        ck_assert_int_eq(test_json_int(r.out, "repeat"), 3);
        ck_assert(test_json_double(r.out, "wall_ms") >= 0);
        ck_assert(test_json_double(r.out, "numeric_ms") >= 0);
        /* the reference and a CPU device (the host pass) move nothing; a GPU
         * backend uploads the operands and downloads C in every product */
        if (strstr(r.out, "\"backend\": \"reference\"") || strstr(r.out, "\"type\": \"cpu\"")) {
            ck_assert_int_eq(test_json_int(r.out, "h2d_bytes"), 0);
            ck_assert_msg(strstr(r.out, "\"device_ms\": null"), "%s", r.out);
        } else { /* the row bounds and counts come back even where C stays */
            ck_assert(test_json_int(r.out, "h2d_bytes") > 0 &&
                      test_json_int(r.out, "d2h_bytes") > 0);
            ck_assert(test_json_double(r.out, "device_ms") > 0 &&
                      test_json_double(r.out, "device_bytes_peak") > 0);
        }
        run_free(&r);
        test_same_matrix(ctx, C, ctx, L, "hisp multiply vs hisp_matrix_multiply");
        double *zk = calloc((size_t)k, sizeof *zk), *zm = calloc((size_t)m, sizeof *zm);
        double *bx = expected(ctx, B, ob, 1.0, x, 0.0, zk, k);
        double *want = expected(ctx, A, oa, 1.0, bx, 0.0, zm, m);
        double *got = expected(ctx, C, HISP_OP_N, 1.0, x, 0.0, zm, m);
        ck_assert_msg(test_rel_error(HISP_F64, got, want, m) < 1e-12, "multiply case %d: error %g",
                      t, test_rel_error(HISP_F64, got, want, m));
        free(zk), free(zm), free(bx), free(want), free(got), free(x), free(y0);
        if (!self) free(xb), free(yb), hisp_matrix_destroy(&B);
        hisp_matrix_destroy(&A), hisp_matrix_destroy(&C), hisp_matrix_destroy(&L);
    }
    /* --ptap: P^T*A*P of P.mtx and A.mtx (23 x 23), bit for bit the library's */
    run_result r =
        run_hisp("gen", "random", "--n", "23", "--nnz-per-row", "3", "-o", tmp("P.mtx"), NULL);
    CK_RUN(r, 0);
    run_free(&r);
    r = run_hisp("multiply", "--ptap", tmp("P.mtx"), tmp("A.mtx"), "-o", tmp("PAP.mtx"), "--json",
                 NULL);
    CK_RUN(r, 0);
    ck_assert_msg(strstr(r.out, "\"op\": \"ptap\"") && strstr(r.out, "\"numeric_ms\": null"), "%s",
                  r.out);
    run_free(&r);
    {
        hisp_matrix P = NULL, A = NULL, C = NULL, L = NULL;
        CK_OK(ctx, hisp_matrix_read_mtx(ctx, tmp("P.mtx"), HISP_F64, &P, NULL));
        CK_OK(ctx, hisp_matrix_read_mtx(ctx, tmp("A.mtx"), HISP_F64, &A, NULL));
        CK_OK(ctx, hisp_matrix_read_mtx(ctx, tmp("PAP.mtx"), HISP_F64, &C, NULL));
        CK_OK(ctx, hisp_matrix_convert(P, HISP_FORMAT_CSR));
        CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_CSR));
        CK_OK(ctx, hisp_matrix_ptap(P, A, &L));
        test_same_matrix(ctx, C, ctx, L, "hisp multiply --ptap vs hisp_matrix_ptap");
        hisp_matrix_destroy(&P), hisp_matrix_destroy(&A), hisp_matrix_destroy(&C);
        hisp_matrix_destroy(&L);
    }
    r = run_hisp("multiply", "--ptap", tmp("P.mtx"), "-o", tmp("PAP.mtx"), NULL); /* no A */
    CK_RUN(r, 1);
    run_free(&r);
    /* A.mtx is 23 x 23 (the last case), B.mtx 17 x 31 (case 3): 23 columns, 17 rows */
    r = run_hisp("multiply", tmp("A.mtx"), tmp("B.mtx"), "-o", tmp("E.mtx"), NULL);
    CK_RUN(r, 2);
    ck_assert_msg(strstr(r.err, "dimension mismatch"), "%s", r.err);
    run_free(&r);
    r = run_hisp("multiply", tmp("A.mtx"), NULL); /* no -o */
    CK_RUN(r, 1);
    run_free(&r);
    r = run_hisp("multiply", "gen:qsurface:4", "-o", tmp("E.mtx"), NULL);
    CK_RUN(r, 2);
    ck_assert_msg(strstr(r.err, "not supported"), "%s", r.err);
    run_free(&r);
    r = run_hisp("multiply", "--help", NULL);
    CK_RUN(r, 0);
    ck_assert(strstr(r.out, "usage: hisp multiply") && strstr(r.out, "B = A"));
    run_free(&r);
    hisp_context_destroy(&ctx);
}
END_TEST

/* spmv --check --repeat on every backend with a device: small error. */
/* Index of the device called `name` in the `backend` section of a
 * `hisp info --json` output, or -1. */
static int child_device_index(const char *info, const char *backend, const char *name)
{
    char key[96];
    snprintf(key, sizeof key, "\"name\": \"%s\"", backend);
    const char *sec = strstr(info, key);
    if (!sec) return -1;
    const char *end = strstr(sec, "\"note\"");
    char want[600];
    snprintf(want, sizeof want, "\"name\": \"%s\"", name);
    int idx = 0;
    for (const char *p = strstr(sec + strlen(key), "\"name\": \""); p && (!end || p < end);
         p = strstr(p + 1, "\"name\": \"")) {
        if (strncmp(p, want, strlen(want)) == 0) return idx;
        idx++;
    }
    return -1;
}

START_TEST(test_spmv_check_backends)
{
    const test_target *tg;
    int nt = test_targets(&tg);
    char seed[32];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)(test_seed() % 1000000));
    run_result r = run_hisp("gen", "random", "--n", "3000", "--nnz-per-row", "9", "--seed", seed,
                            "-o", tmp("r.mtx"), NULL);
    CK_RUN(r, 0);
    run_free(&r);
    r = run_hisp("gen", "poisson2d", "--n", "40", "-o", tmp("p.mtx"), NULL);
    CK_RUN(r, 0);
    run_free(&r);
    /* Find each target's index in the child's own device list: a child may
     * see fewer devices (a GPU in exclusive-process mode held by this
     * process, an ICD loader that edited the environment). */
    r = run_hisp("info", "--json", NULL);
    CK_RUN(r, 0);
    char *info = r.out;
    r.out = NULL;
    run_free(&r);
    hisp_context ctx = test_default_context();
    for (int i = 0; i < nt; i++) {
        const char *be = hisp_backend_name(tg[i].kind);
        hisp_device_info di;
        CK_OK(ctx, hisp_backend_device_info(ctx, tg[i].kind, tg[i].device, &di));
        int child = child_device_index(info, be, di.name);
        if (child < 0) {
            test_skip("cli spmv on %s: the device is not visible to a child process", tg[i].label);
            continue;
        }
        char dev[16];
        snprintf(dev, sizeof dev, "%d", child);
        static const char *const precs[] = {"f32", "f64"};
        for (int pi = 0; pi < 2; pi++)
            for (int t = 0; t < 2; t++) {
                const char *f = t ? tmp("p.mtx") : tmp("r.mtx");
                r = run_hisp("spmv", f, "--backend", be, "--device", dev, "--precision", precs[pi],
                             "--check", "--repeat", "3", "--beta", "0.5", "--json",
                             t ? "--transpose" : NULL, NULL);
                CK_RUN(r, 0);
                ck_assert_msg(json_valid(r.out), "not JSON:\n%s", r.out);
                char want[64];
                snprintf(want, sizeof want, "\"backend\": \"%s\"", be);
                ck_assert_msg(strstr(r.out, want), "%s: %s", tg[i].label, r.out);
                double err = test_json_double(r.out, "rel_error");
                ck_assert_msg(err < (pi ? 1e-12 : 1e-5), "%s %s: error %g", tg[i].label, precs[pi],
                              err);
                ck_assert(test_json_double(r.out, "median_ms") >= 0);
                ck_assert(test_json_double(r.out, "gflops") > 0);
                run_free(&r);
            }
        /* HiSparse: the scheduled first call, then replays (device
         * backends), checked after the warm-up and timed runs */
        r = run_hisp("spmv", tmp("p.mtx"), "--backend", be, "--device", dev, "--format", "hisparse",
                     "--check", "--repeat", "3", "--beta", "0.5", "--json", NULL);
        CK_RUN(r, 0);
        ck_assert_msg(test_json_double(r.out, "rel_error") < 1e-12, "%s replay: %s", tg[i].label,
                      r.out);
        run_free(&r);
        /* text form names backend and device */
        r = run_hisp("spmv", tmp("r.mtx"), "--backend", be, "--device", dev, "--check", "--repeat",
                     "2", NULL);
        CK_RUN(r, 0);
        ck_assert(strstr(r.out, "GFLOP/s") && strstr(r.out, "relative error"));
        run_free(&r);
    }
    hisp_context_destroy(&ctx);
    free(info);
}
END_TEST

START_TEST(test_input_errors)
{
    /* entry on line 5 is not a number */
    write_text(tmp("bad.mtx"), "%%MatrixMarket matrix coordinate real general\n"
                               "% comment\n"
                               "3 3 3\n"
                               "1 1 1.0\n"
                               "2 2 x7\n"
                               "3 3 1.0\n");
    static const char *const cmds[] = {"stats", "spmv"};
    for (int c = 0; c < 2; c++) {
        run_result r = run_hisp(cmds[c], tmp("bad.mtx"), NULL);
        CK_RUN(r, 2);
        char want[PATH_MAX + 80];
        snprintf(want, sizeof want, "hisp: %s:5: ", tmp("bad.mtx"));
        ck_assert_msg(strncmp(r.err, want, strlen(want)) == 0, "stderr: %s\nwanted %s", r.err,
                      want);
        ck_assert_msg(strchr(r.err, '\n') == r.err + strlen(r.err) - 1, "not one line: %s", r.err);
        run_free(&r);
    }
    /* index out of range on line 4 */
    write_text(tmp("bad2.mtx"), "%%MatrixMarket matrix coordinate real general\n"
                                "2 2 2\n"
                                "1 1 1.0\n"
                                "3 1 1.0\n");
    run_result r = run_hisp("stats", tmp("bad2.mtx"), "--json", NULL);
    CK_RUN(r, 2);
    ck_assert_msg(strstr(r.err, "bad2.mtx:4:"), "%s", r.err);
    run_free(&r);
    /* missing file */
    r = run_hisp("stats", tmp("no-such-file.mtx"), NULL);
    CK_RUN(r, 2);
    ck_assert_msg(strstr(r.err, "no-such-file.mtx"), "%s", r.err);
    run_free(&r);
    r = run_hisp("spmv", tmp("no-such-file.mtx"), "--backend", "reference", NULL);
    CK_RUN(r, 2);
    run_free(&r);
    /* unwritable output */
    r = run_hisp("gen", "poisson2d", "--n", "4", "-o", tmp("no-such-dir/out.mtx"), NULL);
    CK_RUN(r, 2);
    ck_assert_msg(strstr(r.err, "out.mtx"), "%s", r.err);
    run_free(&r);
}
END_TEST

START_TEST(test_missing_backend)
{
    hisp_context ctx = test_default_context();
    int n = 0;
    if (hisp_backend_compiled(HISP_BACKEND_CUDA) &&
        hisp_backend_device_count(ctx, HISP_BACKEND_CUDA, &n) == HISP_SUCCESS && n > 0) {
        hisp_context_destroy(&ctx);
        test_skip("cli: 'spmv --backend cuda' without CUDA (this machine has a CUDA device)");
        return;
    }
    hisp_context_destroy(&ctx);
    run_result r = run_hisp("gen", "poisson2d", "--n", "5", "-o", tmp("p.mtx"), NULL);
    CK_RUN(r, 0);
    run_free(&r);
    r = run_hisp("spmv", tmp("p.mtx"), "--backend", "cuda", NULL);
    CK_RUN(r, 3);
    ck_assert_msg(strncasecmp(r.err, "hisp: ", 6) == 0 && strcasestr(r.err, "cuda"), "%s", r.err);
    ck_assert_msg(strchr(r.err, '\n') == r.err + strlen(r.err) - 1, "not one line: %s", r.err);
    run_free(&r);
    r = run_hisp("demo", "--backend", "cuda", "--n", "4", NULL);
    CK_RUN(r, 3);
    run_free(&r);
    /* a device index past the end */
    r = run_hisp("spmv", tmp("p.mtx"), "--backend", "reference", "--device", "7", NULL);
    ck_assert_msg(r.status == 2 || r.status == 3, "status %d: %s", r.status, r.err);
    run_free(&r);
}
END_TEST

START_TEST(test_demo_small)
{
    run_result r = run_hisp("demo", "--n", "10", "--scale", "8", "--repeat", "2", "--backend",
                            "reference", "--json", NULL);
    CK_RUN(r, 0);
    ck_assert_msg(json_valid(r.out), "not JSON:\n%s", r.out);
    ck_assert(strstr(r.out, "poisson3d n=10") && strstr(r.out, "rmat scale=8"));
    ck_assert(test_json_double(r.out, "rel_error") == 0); /* reference against itself */
    run_free(&r);
    /* the default backend choice, text table */
    r = run_hisp("demo", "--n", "12", "--scale", "0", "--repeat", "2", NULL);
    CK_RUN(r, 0);
    ck_assert_msg(strstr(r.out, "GFLOP/s") && strstr(r.out, "poisson3d n=12") &&
                      !strstr(r.out, "rmat") && !strstr(r.out, "FAILED"),
                  "%s", r.out);
    run_free(&r);
}
END_TEST

/* "transfers" in --json: present everywhere; 0 on the reference backend and
 * for host-only commands; on a device the timed SpMV runs send the matrix
 * and x once (the warm-up's upload) and read nothing back, the one untimed
 * SpMV reads y. */
START_TEST(test_transfers_json)
{
    run_result r = run_hisp("gen", "poisson3d", "--n", "10", "-o", tmp("t.mtx"), "--json", NULL);
    CK_RUN(r, 0);
    ck_assert_int_eq(test_json_int(r.out, "h2d_bytes"), 0);
    ck_assert_int_eq(test_json_int(r.out, "d2h_bytes"), 0);
    run_free(&r);
    static const char *const host_cmds[][4] = {{"stats", "--json", NULL, NULL},
                                               {"convert", "-o", "t.hisp", "--json"}};
    for (int c = 0; c < 2; c++) {
        r = run_hisp(host_cmds[c][0], tmp("t.mtx"), host_cmds[c][1],
                     host_cmds[c][2] ? tmp(host_cmds[c][2]) : NULL, host_cmds[c][3], NULL);
        CK_RUN(r, 0);
        ck_assert_int_eq(test_json_int(r.out, "h2d_bytes"), 0);
        ck_assert_int_eq(test_json_int(r.out, "d2h_bytes"), 0);
        ck_assert_int_eq(test_json_int(r.out, "control_bytes"), 0);
        run_free(&r);
    }
    r = run_hisp("spmv", tmp("t.mtx"), "--backend", "reference", "--repeat", "3", "--json", NULL);
    CK_RUN(r, 0);
    ck_assert_int_eq(test_json_int(r.out, "h2d_bytes"), 0);
    ck_assert_int_eq(test_json_int(r.out, "d2h_bytes"), 0);
    run_free(&r);
    r = run_hisp("mspmv", tmp("t.mtx"), "--backend", "reference", "--devices", "2", "--repeat", "2",
                 "--json", NULL);
    CK_RUN(r, 0);
    ck_assert_int_eq(test_json_int(r.out, "h2d_bytes"), 0);
    ck_assert(strstr(r.out, "\"covers\": "));
    run_free(&r);

    hisp_context ctx = test_default_context();
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_read_mtx(ctx, tmp("t.mtx"), HISP_F64, &A, NULL));
    uint64_t csr = 0;
    CK_OK(ctx, hisp_matrix_format_bytes(A, HISP_FORMAT_CSR, HISP_F64, &csr));
    const long long n = 1000, xb = 8 * n; /* poisson3d n=10, f64 */
    r = run_hisp("info", "--json", NULL);
    CK_RUN(r, 0);
    char *info = r.out;
    r.out = NULL;
    run_free(&r);
    const test_target *tg;
    int nt = test_targets(&tg);
    for (int i = 0; i < nt; i++) {
        if (tg[i].kind == HISP_BACKEND_REFERENCE) continue;
        const char *be = hisp_backend_name(tg[i].kind);
        hisp_device_info di;
        CK_OK(ctx, hisp_backend_device_info(ctx, tg[i].kind, tg[i].device, &di));
        int child = child_device_index(info, be, di.name);
        if (child < 0) {
            test_skip("cli transfers on %s: the device is not visible to a child process",
                      tg[i].label);
            continue;
        }
        char dev[16];
        snprintf(dev, sizeof dev, "%d", child);
        if (!di.fp64) continue;
        /* timed: the warm-up uploads A's arrays (and the kernels' plan) and x */
        r = run_hisp("spmv", tmp("t.mtx"), "--backend", be, "--device", dev, "--repeat", "3",
                     "--json", NULL);
        CK_RUN(r, 0);
        long long h2d = test_json_int(r.out, "h2d_bytes");
        ck_assert_int_ge(h2d, (long long)csr + xb);
        ck_assert_int_le(h2d, (long long)csr + xb + 64 * (n + 1) + 4096);
        ck_assert_int_eq(test_json_int(r.out, "d2h_bytes"), 0);
        ck_assert_int_eq(test_json_int(r.out, "control_bytes"), 0);
        run_free(&r);
        /* untimed: the one run also reads y */
        r = run_hisp("spmv", tmp("t.mtx"), "--backend", be, "--device", dev, "--json", NULL);
        CK_RUN(r, 0);
        ck_assert_int_ge(test_json_int(r.out, "h2d_bytes"), (long long)csr + xb);
        ck_assert_int_eq(test_json_int(r.out, "d2h_bytes"), xb);
        run_free(&r);
        /* HiSparse: the tree and x go up with the first (scheduled) call, before
         * the timed ones; those move no data, only the scheduler's words */
        r = run_hisp("spmv", tmp("t.mtx"), "--backend", be, "--device", dev, "--format", "hisparse",
                     "--repeat", "3", "--json", NULL);
        CK_RUN(r, 0);
        ck_assert_int_eq(test_json_int(r.out, "h2d_bytes"), 0);
        ck_assert_int_eq(test_json_int(r.out, "d2h_bytes"), 0);
        run_free(&r);
        r = run_hisp("add", tmp("t.mtx"), tmp("t.mtx"), "-o", tmp("t2.hisp"), "--backend", be,
                     "--device", dev, "--repeat", "2", "--json", NULL);
        CK_RUN(r, 0);
        /* the operands' trees are made and uploaded once, before the timed
         * sums; C stays on the device */
        ck_assert_int_eq(test_json_int(r.out, "h2d_bytes"), 0);
        ck_assert_int_eq(test_json_int(r.out, "d2h_bytes"), 0);
        run_free(&r);
    }
    free(info);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

Suite *suite_cli(void)
{
    Suite *s = suite_create("cli");
    if (!hisp_program()) {
        test_skip("cli tests: the hisp program was not found next to the test binary (build it "
                  "with scons)");
        return s;
    }
    TCase *tc = tcase_create("cli");
    tcase_add_checked_fixture(tc, cli_setup, cli_teardown);
    tcase_add_test(tc, test_help_and_usage);
    tcase_add_test(tc, test_invalid_values);
    tcase_add_test(tc, test_info_json);
    tcase_add_test(tc, test_gen_then_stats);
    tcase_add_test(tc, test_spmv_out_matches_library);
    tcase_add_test(tc, test_spmv_columns);
    tcase_add_test(tc, test_add_matches_library);
    tcase_add_test(tc, test_multiply_matches_library);
    tcase_add_test(tc, test_multiply_scipy);
    tcase_add_test(tc, test_gen_diffusion_scipy);
    tcase_add_test(tc, test_spmv_check_backends);
    tcase_add_test(tc, test_input_errors);
    tcase_add_test(tc, test_missing_backend);
    tcase_add_test(tc, test_demo_small);
    tcase_add_test(tc, test_transfers_json);
    suite_add_tcase(s, tc);
    return s;
}
