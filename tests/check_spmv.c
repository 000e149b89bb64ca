/* SpMV on every target (reference, OpenCL devices, CUDA devices) against
 * the plain C reference hispi_ref_csr_spmv, on fresh random inputs,
 * structured matrices and the real matrices of test_matrix_dir(). */
#include "fixture_spmv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* OpenCL kernel families the backend can be forced to (hispi_spmv_hook),
 * with the op = T path: "chunk" and "block" run op = T on a
 * transposed copy by default, with "atomic" by their fallback scatters. All run on every OpenCL
 * device, whatever the device's default. */
static const char *const cl_variants[] = {"chunk", "chunk", "vector", "block", "block"};
static const char *const cl_tmodes[] = {"", "atomic", "", "", "atomic"};
#define NCL_VARIANTS 5

static int nvariants(int target)
{
    return test_kind(target) == HISP_BACKEND_OPENCL ? NCL_VARIANTS : 1;
}

/* Variants NCL_VARIANTS and up (where asked for) repeat the others with
 * 64-bit row pointers, otherwise only used from 2^31 entries. */
static void set_variant(int target, int v)
{
    if (test_kind(target) != HISP_BACKEND_OPENCL) return;
    const char *f = cl_variants[v % NCL_VARIANTS];
    hispi_spmv_hook.cl_variant = !strcmp(f, "chunk") ? 1 : !strcmp(f, "vector") ? 2 : 3;
    hispi_spmv_hook.t_mode = cl_tmodes[v % NCL_VARIANTS][0] ? 1 : 0;
    hispi_spmv_hook.wide_ptr = v >= NCL_VARIANTS;
}

static void clear_variant(void)
{
    hispi_spmv_hook = (hispi_spmv_hooks){0};
}

static const char *variant_name(void)
{
    static const char *const names[] = {"", "chunk", "vector", "block"};
    int v = hispi_spmv_hook.cl_variant;
    return v >= 0 && v <= 3 ? names[v] : "?";
}

/* y = alpha*op(A)*x + beta*y for A in CSR against the reference
 * (fixture_spmv.h), with the OpenCL kernel variant in the message. */
static void check_one(hisp_context ctx, hisp_matrix A, hisp_op op, int beta_mode, uint64_t *st,
                      const char *what)
{
    hisp_matrix_info info;
    CK_OK(ctx, hisp_matrix_get_info(A, &info));
    ck_assert_int_eq(info.format, HISP_FORMAT_CSR);
    const int64_t *ptr;
    const int32_t *rows, *cols;
    const void *vals;
    CK_OK(ctx, hisp_matrix_host_arrays(A, &ptr, &rows, &cols, &vals));
    hispi_sparse s = {.format = HISP_FORMAT_CSR,
                      .type = info.type,
                      .nrows = info.nrows,
                      .ncols = info.ncols,
                      .nnz = info.nnz,
                      .rowptr = (int64_t *)ptr,
                      .colind = (int32_t *)cols,
                      .val = (void *)vals};
    char how[64];
    snprintf(how, sizeof how, " %s%s", variant_name(),
             hispi_spmv_hook.t_mode == 1 ? " atomic" : "");
    test_spmv_check(ctx, A, &s, op, beta_mode, st, what, how);
}

/* Both ops, beta = 0 (y NaN) and random beta; op N with beta = 1. */
static void check_all_ops(hisp_context ctx, hisp_matrix A, uint64_t *st, const char *what)
{
    for (int op = 0; op < 2; op++)
        for (int bm = 0; bm < 3 - op; bm++)
            check_one(ctx, A, (hisp_op)op, bm, st, what);
}

/* A matrix from COO triplets (duplicates summed), CSR form. */
static hisp_matrix from_coo(hisp_context ctx, hisp_type t, int64_t m, int64_t n, int64_t nnz,
                            const int32_t *r, const int32_t *c, uint64_t *st)
{
    void *v = malloc((size_t)nnz * hisp_type_size(t) + 8);
    ck_assert_ptr_nonnull(v);
    test_fill_uniform(t, v, nnz, st);
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_create_coo(ctx, t, m, n, nnz, r, c, v, &A));
    CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_CSR));
    free(v);
    return A;
}

START_TEST(test_spmv_random)
{
    uint64_t st = test_seed() + 101 + (uint64_t)_i;
    static const struct {
        int64_t m, n;
        double density;
    } shapes[] = {{0, 0, 0},         {0, 7, 0},        {7, 0, 0},           {1, 1, 1},
                  {1, 300, 0.3},     {300, 1, 0.5},    {50, 40, 0},         {257, 257, 0.05},
                  {1000, 80, 0.02},  {80, 1000, 0.05}, {3000, 3000, 0.002}, {2000, 50, 0.004},
                  {40, 20000, 0.002}};
    hisp_context ctx = test_context(_i);
    for (int var = 0; var < 2 * nvariants(_i); var++) {
        set_variant(_i, var);
        for (int ti = 0; ti < 2; ti++) {
            hisp_type t = ti ? HISP_F64 : HISP_F32;
            if (t == HISP_F64 && !test_fp64(ctx)) continue;
            for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
                hisp_matrix A =
                    test_random_matrix(ctx, t, shapes[k].m, shapes[k].n, shapes[k].density, &st);
                check_all_ops(ctx, A, &st, test_label(_i));
                hisp_matrix_destroy(&A);
            }
        }
    }
    clear_variant();
    hisp_context_destroy(&ctx);
}
END_TEST

/* Banded, power-law row lengths, a few very long rows, mostly empty rows. */
START_TEST(test_spmv_structured)
{
    uint64_t st = test_seed() + 202 + (uint64_t)_i;
    hisp_context ctx = test_context(_i);
    int64_t cap = 200000;
    int32_t *r = malloc((size_t)cap * sizeof *r), *c = malloc((size_t)cap * sizeof *c);
    ck_assert(r && c);
    for (int var = 0; var < nvariants(_i); var++) {
        set_variant(_i, var);
        for (int ti = 0; ti < 2; ti++) {
            hisp_type t = ti ? HISP_F64 : HISP_F32;
            if (t == HISP_F64 && !test_fp64(ctx)) continue;
            for (int kind = 0; kind < 4; kind++) {
                int64_t m = 0, n = 0, nnz = 0;
                const char *name = "";
                if (kind == 0) { /* banded, half-bandwidth 6 */
                    name = "banded";
                    m = n = 3000;
                    for (int64_t i = 0; i < m; i++)
                        for (int64_t j = i - 6; j <= i + 6; j++)
                            if (j >= 0 && j < n) {
                                r[nnz] = (int32_t)i;
                                c[nnz++] = (int32_t)j;
                            }
                } else if (kind == 1) { /* power law: row i has ~ 2000/(i+1)^0.9 */
                    name = "power-law";
                    m = 4000;
                    n = 3000;
                    for (int64_t i = 0; i < m; i++) {
                        int64_t len = (int64_t)(2000.0 / pow((double)(i + 1), 0.9)) + 1;
                        for (int64_t k = 0; k < len; k++) {
                            r[nnz] = (int32_t)i;
                            c[nnz++] = (int32_t)(test_rand(&st) % (uint64_t)n);
                        }
                    }
                } else if (kind == 2) { /* short rows plus rows of thousands */
                    name = "long rows"; /* row 5: several chunks of the GPU kernels */
                    m = 600;
                    n = 20000;
                    for (int64_t i = 0; i < m; i++) {
                        int64_t len = i == 5 ? n : i == 300 ? 2500 : i == 599 ? 1200 : i % 4;
                        for (int64_t k = 0; k < len; k++) {
                            r[nnz] = (int32_t)i;
                            c[nnz++] =
                                len == n ? (int32_t)k : (int32_t)(test_rand(&st) % (uint64_t)n);
                        }
                    }
                } else { /* 97% empty rows */
                    name = "empty rows";
                    m = 20000;
                    n = 700;
                    for (int64_t i = 0; i < m; i++)
                        if (test_rand(&st) % 33 == 0)
                            for (int k = 0; k < 9; k++) {
                                r[nnz] = (int32_t)i;
                                c[nnz++] = (int32_t)(test_rand(&st) % (uint64_t)n);
                            }
                }
                ck_assert_int_le(nnz, cap);
                hisp_matrix A = from_coo(ctx, t, m, n, nnz, r, c, &st);
                char label[400];
                snprintf(label, sizeof label, "%s: %s", test_label(_i), name);
                check_all_ops(ctx, A, &st, label);
                hisp_matrix_destroy(&A);
            }
            /* the library's generators, where available */
            for (int g = 0; g < HISP_GEN_COUNT; g++) {
                hisp_gen_params p;
                hisp_gen_defaults((hisp_gen_kind)g, &p);
                p.seed = st;
                if (g == HISP_GEN_POISSON2D)
                    p.n = 40;
                else if (TEST_GEN_3D(g))
                    p.n = 12;
                else if (g == HISP_GEN_RMAT)
                    p.scale = 10;
                else if (g == HISP_GEN_DENSE)
                    p.n = 70;
                else
                    p.n = 1500;
                hisp_matrix A = NULL;
                hisp_status s = hisp_matrix_generate(ctx, &p, t, &A);
                if (s == HISP_ERR_UNSUPPORTED) {
                    if (_i == 0 && var == 0 && ti == 0 && g == 0)
                        test_skip("spmv on generated matrices: hisp_matrix_generate not "
                                  "available in this build");
                    break;
                }
                CK_OK(ctx, s);
                char label[400];
                snprintf(label, sizeof label, "%s: %s", test_label(_i),
                         hisp_gen_name((hisp_gen_kind)g));
                check_all_ops(ctx, A, &st, label);
                hisp_matrix_destroy(&A);
            }
        }
    }
    clear_variant();
    free(r);
    free(c);
    hisp_context_destroy(&ctx);
}
END_TEST

START_TEST(test_spmv_mtx_files)
{
    uint64_t st = test_seed() + 303 + (uint64_t)_i;
    const char *dir = test_matrix_dir();
    if (!dir) {
        if (_i == 0) test_skip_no_matrices("spmv on real matrices");
        return;
    }
    char *names[256];
    int nn = test_mtx_names(dir, names);
    hisp_context ctx = test_context(_i);
    int done = 0;
    for (int k = 0; k < nn; k++) {
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        if (test_mtx_is_complex(path) != 0) continue;
        for (int ti = 0; ti < 2; ti++) {
            hisp_type t = ti ? HISP_F64 : HISP_F32;
            if (t == HISP_F64 && !test_fp64(ctx)) continue;
            hisp_matrix A = NULL;
            hisp_status s = hisp_matrix_read_mtx(ctx, path, t, &A, NULL);
            if (s == HISP_ERR_UNSUPPORTED && done == 0) {
                if (_i == 0) test_skip("spmv on real matrices: hisp_matrix_read_mtx not available");
                k = nn;
                break;
            }
            CK_OK(ctx, s);
            CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_CSR));
            char label[400];
            snprintf(label, sizeof label, "%s: %s", test_label(_i), names[k]);
            check_all_ops(ctx, A, &st, label);
            hisp_matrix_destroy(&A);
            done++;
        }
    }
    test_free_names(names, nn);
    hisp_context_destroy(&ctx);
}
END_TEST

/* Wrong arguments: the status says why and y is untouched. */
START_TEST(test_spmv_errors)
{
    uint64_t st = test_seed() + 404 + (uint64_t)_i;
    hisp_context ctx = test_context(_i);
    hisp_matrix A = test_random_matrix(ctx, HISP_F32, 30, 20, 0.2, &st);
    hisp_vector x = NULL, y = NULL, xs = NULL, y64 = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F32, 20, &x));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F32, 30, &y));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F32, 19, &xs));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, 30, &y64));
    float xh[20], yh[30], yo[30];
    test_fill_uniform(HISP_F32, xh, 20, &st);
    test_fill_uniform(HISP_F32, yh, 30, &st);
    CK_OK(ctx, hisp_vector_write(x, xh));
    CK_OK(ctx, hisp_vector_write(y, yh));
    float a = 1.5f, b = 0.5f;
    ck_assert_int_eq(hisp_spmv(ctx, HISP_OP_N, &a, A, xs, &b, y), HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_spmv(ctx, HISP_OP_T, &a, A, x, &b, y), HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_spmv(ctx, HISP_OP_N, &a, A, x, &b, y64), HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_spmv(ctx, HISP_OP_N, NULL, A, x, &b, y), HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_spmv(ctx, HISP_OP_N, &a, A, x, NULL, y), HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_spmv(ctx, (hisp_op)7, &a, A, x, &b, y), HISP_ERR_INVALID_ARGUMENT);
    hisp_error_info e;
    CK_OK(ctx, hisp_context_last_error(ctx, &e));
    ck_assert(e.message && e.message[0]);
    CK_OK(ctx, hisp_vector_read(y, yo));
    ck_assert_int_eq(memcmp(yh, yo, sizeof yh), 0);
    /* after the failures the context still works */
    CK_OK(ctx, hisp_spmv(ctx, HISP_OP_N, &a, A, x, &b, y));
    hisp_matrix_destroy(&A);
    hisp_vector_destroy(&x);
    hisp_vector_destroy(&y);
    hisp_vector_destroy(&xs);
    hisp_vector_destroy(&y64);
    hisp_context_destroy(&ctx);
}
END_TEST

START_TEST(test_spmv_timed)
{
    uint64_t st = test_seed() + 505 + (uint64_t)_i;
    hisp_context ctx = test_context(_i);
    hisp_matrix A = test_random_matrix(ctx, HISP_F32, 4000, 4000, 0.004, &st);
    hisp_vector x = NULL, y = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F32, 4000, &x));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F32, 4000, &y));
    float *xh = malloc(4000 * sizeof *xh);
    test_fill_uniform(HISP_F32, xh, 4000, &st);
    CK_OK(ctx, hisp_vector_write(x, xh));
    float a = 1, b = 0;
    double ms[4] = {0};
    for (int op = 0; op < 2; op++) {
        CK_OK(ctx, hisp_spmv_timed(ctx, (hisp_op)op, &a, A, x, &b, y, 1, 4, ms));
        for (int i = 0; i < 4; i++)
            ck_assert_msg(ms[i] > 0 && ms[i] < 10000, "%s: run %d took %g ms", test_label(_i), i,
                          ms[i]);
    }
    double bps = 0;
    CK_OK(ctx, hisp_copy_bandwidth(ctx, (size_t)1 << 22, 3, &bps));
    ck_assert_msg(bps > 1e6 && bps < 1e14, "%s: copy bandwidth %g B/s", test_label(_i), bps);
    hisp_matrix_destroy(&A);
    hisp_vector_destroy(&x);
    hisp_vector_destroy(&y);
    free(xh);
    hisp_context_destroy(&ctx);
}
END_TEST

/* Vectors and matrices keep their data when the context changes backend
 * between calls (results computed on one device read on another). */
START_TEST(test_spmv_backend_switch)
{
    uint64_t st = test_seed() + 606 + (uint64_t)_i;
    const test_target *tg;
    test_targets(&tg);
    hisp_context ctx = test_default_context();
    hisp_matrix A = test_random_matrix(ctx, HISP_F64, 300, 300, 0.03, &st);
    hisp_vector x = NULL, y = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, 300, &x));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, 300, &y));
    double xh[300], y0[300], yref[300], ydev[300];
    test_fill_uniform(HISP_F64, xh, 300, &st);
    test_fill_uniform(HISP_F64, y0, 300, &st);
    CK_OK(ctx, hisp_vector_write(x, xh));
    CK_OK(ctx, hisp_vector_write(y, y0));
    double a = 0.75, b = -1.25;
    /* y1 = A x + b y0 on the target, then y2 = A^T y1 + b x on the reference... */
    CK_OK(ctx, hisp_context_set_backend(ctx, tg[_i].kind, tg[_i].device));
    if (!test_fp64(ctx)) {
        hisp_matrix_destroy(&A);
        hisp_vector_destroy(&x);
        hisp_vector_destroy(&y);
        hisp_context_destroy(&ctx);
        return;
    }
    CK_OK(ctx, hisp_spmv(ctx, HISP_OP_N, &a, A, x, &b, y)); /* y lives on the device */
    CK_OK(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_REFERENCE, 0));
    CK_OK(ctx, hisp_spmv(ctx, HISP_OP_T, &a, A, y, &b, x)); /* x = a A^T y + b x */
    CK_OK(ctx, hisp_context_set_backend(ctx, tg[_i].kind, tg[_i].device));
    CK_OK(ctx, hisp_spmv(ctx, HISP_OP_N, &a, A, x, &b, y));
    CK_OK(ctx, hisp_vector_read(y, ydev));
    /* the same on the host */
    const int64_t *ptr;
    const int32_t *rows, *cols;
    const void *vals;
    CK_OK(ctx, hisp_matrix_host_arrays(A, &ptr, &rows, &cols, &vals));
    hispi_sparse s = {.format = HISP_FORMAT_CSR,
                      .type = HISP_F64,
                      .nrows = 300,
                      .ncols = 300,
                      .nnz = ptr[300],
                      .rowptr = (int64_t *)ptr,
                      .colind = (int32_t *)cols,
                      .val = (void *)vals};
    memcpy(yref, y0, sizeof yref);
    ck_assert_int_eq(hispi_ref_csr_spmv(NULL, &s, HISP_OP_N, a, xh, b, yref), 0);
    ck_assert_int_eq(hispi_ref_csr_spmv(NULL, &s, HISP_OP_T, a, yref, b, xh), 0);
    ck_assert_int_eq(hispi_ref_csr_spmv(NULL, &s, HISP_OP_N, a, xh, b, yref), 0);
    double err = test_rel_error(HISP_F64, ydev, yref, 300);
    ck_assert_msg(err < 1e-12, "%s: backend switch: relative error %g", test_label(_i), err);
    hisp_matrix_destroy(&A);
    hisp_vector_destroy(&x);
    hisp_vector_destroy(&y);
    hisp_context_destroy(&ctx);
}
END_TEST

/* The device a target's context runs on describes itself. */
START_TEST(test_spmv_device_info)
{
    const test_target *tg;
    test_targets(&tg);
    hisp_context ctx = test_context(_i);
    hisp_device_info info;
    CK_OK(ctx, hisp_context_get_device(ctx, &info));
    ck_assert_int_eq(info.backend, tg[_i].kind);
    ck_assert_int_eq(info.index, tg[_i].device);
    ck_assert_msg(info.name[0] && info.platform[0], "%s: empty device or platform name",
                  test_label(_i));
    ck_assert_int_ge(info.compute_units, 1);
    ck_assert(info.global_mem > 0);
    ck_assert(info.is_gpu || info.is_cpu || tg[_i].kind == HISP_BACKEND_OPENCL);
    hisp_device_info again;
    CK_OK(ctx, hisp_backend_device_info(ctx, tg[_i].kind, tg[_i].device, &again));
    ck_assert_str_eq(again.name, info.name);
    int n = 0;
    CK_OK(ctx, hisp_backend_device_count(ctx, tg[_i].kind, &n));
    ck_assert_int_gt(n, tg[_i].device);
    ck_assert_int_ne(hisp_backend_device_info(ctx, tg[_i].kind, n, &again), HISP_SUCCESS);
    hisp_context_destroy(&ctx);
}
END_TEST

/* A vector of 108 MB written and read back bit for bit: on CUDA, copies of
 * 64 MiB and more go through the pinned staging buffers (four 32 MiB
 * chunks, the last one partial, one buffer used twice). */
START_TEST(test_vector_large_copy)
{
    hisp_context ctx = test_context(_i);
    const int64_t n = 13500001; /* doubles */
    uint64_t *in = malloc((size_t)n * sizeof *in), *out = malloc((size_t)n * sizeof *out);
    ck_assert(in && out);
    uint64_t z = test_seed() + 77;
    for (int64_t i = 0; i < n; i++) { /* splitmix64: every bit pattern, NaNs included */
        z += 0x9E3779B97F4A7C15ull;
        uint64_t v = z;
        v = (v ^ (v >> 30)) * 0xBF58476D1CE4E5B9ull;
        v = (v ^ (v >> 27)) * 0x94D049BB133111EBull;
        in[i] = v ^ (v >> 31);
    }
    hisp_vector x = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, n, &x));
    CK_OK(ctx, hisp_vector_write(x, in));
    memset(out, 0, (size_t)n * sizeof *out);
    CK_OK(ctx, hisp_vector_read(x, out));
    ck_assert_msg(!memcmp(in, out, (size_t)n * sizeof *in), "%s: 108 MB read back differs",
                  test_label(_i));
    hisp_vector_destroy(&x);
    free(in);
    free(out);
    hisp_context_destroy(&ctx);
}
END_TEST

Suite *suite_spmv(void)
{
    Suite *s = suite_create("spmv");
    int n = test_targets(NULL);
    TCase *tc = test_tcase(s, "spmv", 600);
    tcase_add_loop_test(tc, test_spmv_device_info, 0, n);
    tcase_add_loop_test(tc, test_spmv_random, 0, n);
    tcase_add_loop_test(tc, test_spmv_structured, 0, n);
    tcase_add_loop_test(tc, test_spmv_mtx_files, 0, n);
    tcase_add_loop_test(tc, test_spmv_errors, 0, n);
    tcase_add_loop_test(tc, test_spmv_timed, 0, n);
    tcase_add_loop_test(tc, test_spmv_backend_switch, 0, n);
    tcase_add_loop_test(tc, test_vector_large_copy, 0, n);
    return s;
}
