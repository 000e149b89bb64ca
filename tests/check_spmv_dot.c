/* SpMV fused with a dot product (hispi_spmv_dot, the CG solver's q = A p,
 * p.q) on every target against hisp_spmv + hisp_vector_dot and a host dot:
 * random square f32/f64 matrices, a matrix with rows long enough for the
 * CUDA plan to give them blocks of their own or to split them, results to
 * the host and to a vector entry, the fallbacks (compound entries,
 * HiSparse), argument errors, and CG through the solver. On CUDA the
 * backend's csr_spmv_dot runs; elsewhere the two calls. */
#include "testutil.h"
#include "hispi.h"
#ifdef HISP_HAVE_CUDA
#include "cuda/cuda_kernels.h" /* HISP_CUDA_SPLIT, HISP_CUDA_CAP: the long-row sizes */
#include <cuda_runtime_api.h>
#else
#define HISP_CUDA_CAP(entry_bytes) (16384 / (entry_bytes))
#define HISP_CUDA_SPLIT 8192
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double get(hisp_type t, const void *a, int64_t i)
{
    return t == HISP_F32 ? ((const float *)a)[i] : ((const double *)a)[i];
}

static void fill(hisp_type t, void *a, int64_t n, uint64_t *st, double nan)
{
    for (int64_t i = 0; i < n; i++) {
        double v = isnan(nan) ? nan : test_uniform(st);
        if (t == HISP_F32)
            ((float *)a)[i] = (float)v;
        else
            ((double *)a)[i] = v;
    }
}

/* y = A x and r = x.y through hispi_spmv_dot, the result once to the host
 * and once to entry 3 of a vector of 5, against hisp_spmv + hisp_vector_dot
 * and a host dot of x and the y returned. H: a matrix with A's entries whose
 * host arrays are read (A itself when NULL). */
static void check_case(hisp_context ctx, hisp_matrix A, hisp_matrix H, uint64_t *st,
                       const char *what)
{
    hisp_matrix_info info;
    CK_OK(ctx, hisp_matrix_get_info(A, &info));
    ck_assert_int_eq(info.nrows, info.ncols);
    hisp_type t = info.type;
    int64_t n = info.nrows;
    size_t es = hisp_type_size(t);
    void *xh = malloc((size_t)n * es + 8), *y1 = malloc((size_t)n * es + 8);
    void *y2 = malloc((size_t)n * es + 8);
    unsigned char bank0[5 * 8], bank1[5 * 8], r1[8] = {0}, r2[8] = {0};
    ck_assert(xh && y1 && y2);
    fill(t, xh, n, st, 0);
    fill(t, y1, n, st, NAN); /* y is not read */
    fill(t, bank0, 5, st, 0);
    hisp_vector x = NULL, y = NULL, bank = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, t, n, &x));
    CK_OK(ctx, hisp_vector_create(ctx, t, n, &y));
    CK_OK(ctx, hisp_vector_create(ctx, t, 5, &bank));
    CK_OK(ctx, hisp_vector_write(x, xh));
    CK_OK(ctx, hisp_vector_write(y, y1));
    CK_OK(ctx, hisp_vector_write(bank, bank0));

    CK_OK(ctx, hispi_spmv_dot(ctx, A, x, y, hisp_result_host(r1)));
    CK_OK(ctx, hisp_vector_read(y, y1));
    CK_OK(ctx, hispi_spmv_dot(ctx, A, x, y, hisp_result_entry(bank, 3)));
    CK_OK(ctx, hisp_vector_read(bank, bank1));
    /* the entry and nothing else; the same bits as the first call (a fixed
     * order of summation) */
    for (int i = 0; i < 5; i++)
        ck_assert_msg(memcmp(bank1 + (size_t)i * es, i == 3 ? r1 : bank0 + (size_t)i * es, es) == 0,
                      "%s: bank entry %d: %g, expected %g (%s)", what, i, get(t, bank1, i),
                      i == 3 ? get(t, r1, 0) : get(t, bank0, i),
                      i == 3 ? "the two calls differ" : "an entry not asked for was written");

    /* the two calls */
    double one = 1, zero = 0;
    float onef = 1, zerof = 0;
    const void *a = t == HISP_F32 ? (const void *)&onef : (const void *)&one;
    const void *b = t == HISP_F32 ? (const void *)&zerof : (const void *)&zero;
    CK_OK(ctx, hisp_spmv(ctx, HISP_OP_N, a, A, x, b, y));
    CK_OK(ctx, hisp_vector_dot(x, y, hisp_result_host(r2)));
    CK_OK(ctx, hisp_vector_read(y, y2));

    const int64_t *ptr;
    const int32_t *rows, *cols;
    const void *vals;
    CK_OK(ctx, hisp_matrix_host_arrays(H ? H : A, &ptr, &rows, &cols, &vals));
    double ytol = t == HISP_F32 ? 1e-5 : 1e-13;
    double dref = 0, mag = 0;
    for (int64_t i = 0; i < n; i++) {
        double m = 0; /* |A| |x| of row i */
        for (int64_t k = ptr[i]; k < ptr[i + 1]; k++)
            m += fabs(get(t, vals, k) * get(t, xh, cols[k]));
        double v1 = get(t, y1, i), v2 = get(t, y2, i);
        ck_assert_msg(!isnan(v1), "%s: y[%lld] is NaN (y was read)", what, (long long)i);
        ck_assert_msg(fabs(v1 - v2) <= ytol * m, "%s: y[%lld] = %.17g, hisp_spmv gives %.17g", what,
                      (long long)i, v1, v2);
        dref += get(t, xh, i) * v1;
        mag += fabs(get(t, xh, i) * v1);
    }
    double dtol = (t == HISP_F32 ? 1e-6 : 1e-12) * mag + 1e-300;
    double d1 = get(t, r1, 0), d2 = get(t, r2, 0);
    ck_assert_msg(fabs(d1 - dref) <= dtol,
                  "%s: %s n %lld nnz %lld: dot %.17g, host %.17g (|x||y| %.3g; seed %llu)", what,
                  hisp_type_name(t), (long long)n, (long long)info.nnz, d1, dref, mag,
                  (unsigned long long)test_seed());
    ck_assert_msg(fabs(d1 - d2) <= dtol + (t == HISP_F32 ? 1e-5 : 1e-12) * mag,
                  "%s: %s n %lld: dot %.17g, hisp_vector_dot %.17g (seed %llu)", what,
                  hisp_type_name(t), (long long)n, d1, d2, (unsigned long long)test_seed());
    hisp_vector_destroy(&x);
    hisp_vector_destroy(&y);
    hisp_vector_destroy(&bank);
    free(xh);
    free(y1);
    free(y2);
}

START_TEST(test_spmv_dot_random)
{
    uint64_t st = test_seed() + 1101 + (uint64_t)_i;
    static const struct {
        int64_t n;
        double density;
    } shapes[] = {{0, 0}, {1, 1}, {7, 0.5}, {257, 0.05}, {2000, 0}, {3000, 0.002}, {5000, 0.01}};
    hisp_context ctx = test_context(_i);
    for (int ti = 0; ti < 2; ti++) {
        hisp_type t = ti ? HISP_F64 : HISP_F32;
        if (t == HISP_F64 && !test_fp64(ctx)) continue;
        for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
            hisp_matrix A =
                test_random_matrix(ctx, t, shapes[k].n, shapes[k].n, shapes[k].density, &st);
            check_case(ctx, A, NULL, &st, test_label(_i));
            hisp_matrix_destroy(&A);
        }
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* Rows of every kind the CUDA plan makes (backends/cuda/cuda.c,
 * core/matrix/csr_plan.c): short rows in stream blocks, rows over CAP/4 entries
 * in a block of their own, rows over SPLIT entries split into chunks (the
 * first row, one in the middle, the last), next to empty rows. */
static hisp_matrix long_rows(hisp_context ctx, hisp_type t, uint64_t *st)
{
    const int64_t n = 3 * HISP_CUDA_SPLIT + 77;
    const int64_t cap = HISP_CUDA_CAP((int64_t)hisp_type_size(t));
    const struct {
        int64_t row, len;
    } longs[] = {{0, n},
                 {100, HISP_CUDA_SPLIT + 1},
                 {7000, 2 * HISP_CUDA_SPLIT + 5},
                 {7001, cap / 4 + 1},
                 {9000, HISP_CUDA_SPLIT},
                 {12000, cap},
                 {n - 1, n - 3}};
    const int nl = sizeof longs / sizeof longs[0];
    int64_t nnz = 5 * n;
    for (int l = 0; l < nl; l++)
        nnz += longs[l].len;
    int32_t *r = malloc((size_t)nnz * sizeof *r), *c = malloc((size_t)nnz * sizeof *c);
    void *v = malloc((size_t)nnz * hisp_type_size(t));
    ck_assert(r && c && v);
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        if (i % 97 == 13) continue; /* empty rows */
        r[k] = (int32_t)i, c[k++] = (int32_t)i;
        for (int j = 0; j < 4; j++)
            r[k] = (int32_t)i, c[k++] = (int32_t)(test_rand(st) % (uint64_t)n);
    }
    for (int l = 0; l < nl; l++) { /* len distinct columns from a random start */
        int64_t c0 = (int64_t)(test_rand(st) % (uint64_t)n);
        for (int64_t j = 0; j < longs[l].len; j++)
            r[k] = (int32_t)longs[l].row, c[k++] = (int32_t)((c0 + j) % n);
    }
    fill(t, v, k, st, 0);
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_create_coo(ctx, t, n, n, k, r, c, v, &A));
    CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_CSR));
    free(r);
    free(c);
    free(v);
    return A;
}

START_TEST(test_spmv_dot_long_rows)
{
    uint64_t st = test_seed() + 1202 + (uint64_t)_i;
    hisp_context ctx = test_context(_i);
    for (int ti = 0; ti < 2; ti++) {
        hisp_type t = ti ? HISP_F64 : HISP_F32;
        if (t == HISP_F64 && !test_fp64(ctx)) continue;
        hisp_matrix A = long_rows(ctx, t, &st);
        check_case(ctx, A, NULL, &st, test_label(_i));
        check_case(ctx, A, NULL, &st, test_label(_i)); /* the device scratch reused */
        hisp_matrix_destroy(&A);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

#ifdef HISP_HAVE_CUDA
static void *cu_copy(const void *src, size_t bytes)
{
    void *d = NULL;
    ck_assert_int_eq(cudaMalloc(&d, bytes ? bytes : 1), cudaSuccess);
    ck_assert_int_eq(cudaMemcpy(d, src, bytes, cudaMemcpyHostToDevice), cudaSuccess);
    return d;
}

/* The caller's device arrays (hisp_matrix_wrap_csr_device) in every index
 * shape: 32/64-bit row pointers and columns, base 0 or 1; the fused kernel's
 * instantiations for them, long and split rows included. */
START_TEST(test_spmv_dot_cuda_wrap)
{
    const test_target *t;
    int n = test_targets(&t), ti = -1;
    for (int i = 0; i < n && ti < 0; i++)
        if (t[i].kind == HISP_BACKEND_CUDA) ti = i;
    if (ti < 0) {
        test_skip("spmv_dot cuda wrap: no CUDA device");
        return;
    }
    uint64_t st = test_seed() + 1606;
    hisp_context ctx = test_context(ti);
    ck_assert_int_eq(cudaSetDevice(t[ti].device), cudaSuccess);
    for (int k = 0; k < 16; k++) {
        hisp_type ty = k & 8 ? HISP_F64 : HISP_F32;
        int ptr64 = k & 1, idx64 = k >> 1 & 1, base = k >> 2 & 1;
        hisp_matrix H = (k & 7) == 7 ? long_rows(ctx, ty, &st)
                                     : test_random_matrix(ctx, ty, 3000, 3000, 0.003, &st);
        hisp_matrix_info mi;
        CK_OK(ctx, hisp_matrix_get_info(H, &mi));
        const int64_t *ptr;
        const int32_t *rows, *cols;
        const void *vals;
        CK_OK(ctx, hisp_matrix_host_arrays(H, &ptr, &rows, &cols, &vals));
        size_t ps = ptr64 ? 8 : 4, is = idx64 ? 8 : 4, es = hisp_type_size(ty);
        char *rp = malloc((size_t)(mi.nrows + 1) * ps), *ci = malloc((size_t)mi.nnz * is + 8);
        ck_assert(rp && ci);
        for (int64_t i = 0; i <= mi.nrows; i++) {
            if (ptr64)
                ((int64_t *)rp)[i] = ptr[i] + base;
            else
                ((int32_t *)rp)[i] = (int32_t)(ptr[i] + base);
        }
        for (int64_t q = 0; q < mi.nnz; q++) {
            if (idx64)
                ((int64_t *)ci)[q] = cols[q] + base;
            else
                ((int32_t *)ci)[q] = cols[q] + base;
        }
        void *drp = cu_copy(rp, (size_t)(mi.nrows + 1) * ps),
             *dci = cu_copy(ci, (size_t)mi.nnz * is), *dva = cu_copy(vals, (size_t)mi.nnz * es);
        hisp_matrix A = NULL;
        CK_OK(ctx, hisp_matrix_wrap_csr_device(ctx, ty, mi.nrows, mi.ncols, mi.nnz, drp, dci, dva,
                                               ptr64 ? HISP_INDEX_64 : HISP_INDEX_32,
                                               idx64 ? HISP_INDEX_64 : HISP_INDEX_32, base, &A));
        char what[400];
        snprintf(what, sizeof what, "%s wrapped ptr%d idx%d base %d", test_label(ti),
                 ptr64 ? 64 : 32, idx64 ? 64 : 32, base);
        check_case(ctx, A, H, &st, what);
        hisp_matrix_destroy(&A);
        hisp_matrix_destroy(&H);
        cudaFree(drp);
        cudaFree(dci);
        cudaFree(dva);
        free(rp);
        free(ci);
    }
    hisp_context_destroy(&ctx);
}
END_TEST
#endif

/* The paths that are never fused give hisp_spmv + hisp_vector_dot too:
 * compound entries (c64: a complex, conjugate-linear dot) and HiSparse. */
START_TEST(test_spmv_dot_fallbacks)
{
    uint64_t st = test_seed() + 1303 + (uint64_t)_i;
    hisp_context ctx = test_context(_i);
    if (!test_fp64(ctx)) {
        test_skip("spmv_dot fallbacks on %s: no fp64", test_label(_i));
        hisp_context_destroy(&ctx);
        return;
    }
    for (int kind = 0; kind < 2; kind++) {
        hisp_type t = kind ? HISP_F64 : HISP_C64;
        const int64_t n = 300;
        size_t es = hisp_type_size(t);
        int vc = hisp_type_components(t);
        hisp_matrix A = NULL;
        if (kind) {
            A = test_random_matrix(ctx, t, n, n, 0.03, &st);
            CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_HISPARSE));
        } else { /* c64: 9 entries a row on average */
            int32_t *r = malloc(9 * n * sizeof *r), *c = malloc(9 * n * sizeof *c);
            double *v = malloc(2 * 9 * n * sizeof *v);
            ck_assert(r && c && v);
            for (int64_t k = 0; k < 9 * n; k++) {
                r[k] = (int32_t)(test_rand(&st) % (uint64_t)n);
                c[k] = (int32_t)(test_rand(&st) % (uint64_t)n);
                v[2 * k] = test_uniform(&st);
                v[2 * k + 1] = test_uniform(&st);
            }
            CK_OK(ctx, hisp_matrix_create_coo(ctx, t, n, n, 9 * n, r, c, v, &A));
            CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_CSR));
            free(r);
            free(c);
            free(v);
        }
        double *xh = malloc((size_t)n * es), *y1 = malloc((size_t)n * es),
               *y2 = malloc((size_t)n * es);
        ck_assert(xh && y1 && y2);
        for (int64_t i = 0; i < n * vc; i++)
            xh[i] = test_uniform(&st);
        hisp_vector x = NULL, y = NULL;
        CK_OK(ctx, hisp_vector_create(ctx, t, n, &x));
        CK_OK(ctx, hisp_vector_create(ctx, t, n, &y));
        CK_OK(ctx, hisp_vector_write(x, xh));
        double r1[2] = {0}, r2[2] = {0}, one = 1, zero = 0;
        CK_OK(ctx, hispi_spmv_dot(ctx, A, x, y, hisp_result_host(r1)));
        CK_OK(ctx, hisp_vector_read(y, y1));
        CK_OK(ctx, hisp_spmv(ctx, HISP_OP_N, &one, A, x, &zero, y));
        CK_OK(ctx, hisp_vector_dot(x, y, hisp_result_host(r2)));
        CK_OK(ctx, hisp_vector_read(y, y2));
        double mag = 0, ref[2] = {0, 0};
        for (int64_t i = 0; i < n; i++) {
            ck_assert_msg(fabs(y1[i * vc] - y2[i * vc]) <= 1e-12 * (1 + fabs(y2[i * vc])),
                          "%s %s: y[%lld] differs", test_label(_i), hisp_type_name(t),
                          (long long)i);
            double xr = xh[i * vc], xi = vc > 1 ? xh[i * vc + 1] : 0;
            double yr = y1[i * vc], yi = vc > 1 ? y1[i * vc + 1] : 0;
            ref[0] += xr * yr + xi * yi; /* conj(x) y */
            ref[1] += xr * yi - xi * yr;
            mag += hypot(xr, xi) * hypot(yr, yi);
        }
        for (int c = 0; c < vc; c++) {
            ck_assert_msg(fabs(r1[c] - ref[c]) <= 1e-12 * mag, "%s %s: dot[%d] %.17g, host %.17g",
                          test_label(_i), hisp_type_name(t), c, r1[c], ref[c]);
            ck_assert_msg(fabs(r1[c] - r2[c]) <= 1e-12 * mag,
                          "%s %s: dot[%d] %.17g, two calls %.17g", test_label(_i),
                          hisp_type_name(t), c, r1[c], r2[c]);
        }
        hisp_vector_destroy(&x);
        hisp_vector_destroy(&y);
        hisp_matrix_destroy(&A);
        free(xh);
        free(y1);
        free(y2);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* Wrong arguments: hisp_spmv's statuses and messages, then the result's;
 * y and the result vector untouched. */
START_TEST(test_spmv_dot_errors)
{
    uint64_t st = test_seed() + 1404 + (uint64_t)_i;
    hisp_context ctx = test_context(_i);
    hisp_matrix A = test_random_matrix(ctx, HISP_F32, 30, 30, 0.2, &st);
    hisp_matrix R = test_random_matrix(ctx, HISP_F32, 30, 20, 0.2, &st);
    hisp_vector x = NULL, y = NULL, xs = NULL, bank = NULL, b64 = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F32, 30, &x));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F32, 30, &y));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F32, 20, &xs));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F32, 4, &bank));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, 4, &b64));
    float xh[30], yh[30], yo[30], bh[4], bo[4], r = 0;
    fill(HISP_F32, xh, 30, &st, 0);
    fill(HISP_F32, yh, 30, &st, 0);
    fill(HISP_F32, bh, 4, &st, 0);
    CK_OK(ctx, hisp_vector_write(x, xh));
    CK_OK(ctx, hisp_vector_write(y, yh));
    CK_OK(ctx, hisp_vector_write(bank, bh));
    hisp_result none = hisp_result_host(NULL), both = hisp_result_entry(bank, 0);
    both.host = &r;
    struct {
        hisp_matrix A;
        hisp_vector x, y;
        hisp_result r;
        hisp_status want;
        const char *msg; /* a part of the message */
    } bad[] = {
        {A, xs, y, hisp_result_host(&r), HISP_ERR_INVALID_ARGUMENT, "dimension mismatch"},
        {A, x, x, hisp_result_host(&r), HISP_ERR_INVALID_ARGUMENT, "x and y must differ"},
        {R, xs, y, hisp_result_host(&r), HISP_ERR_INVALID_ARGUMENT, "square"},
        {A, x, y, none, HISP_ERR_INVALID_ARGUMENT, "no destination"},
        {A, x, y, both, HISP_ERR_INVALID_ARGUMENT, "both"},
        {A, x, y, hisp_result_entry(b64, 0), HISP_ERR_INVALID_ARGUMENT, "f64"},
        {A, x, y, hisp_result_entry(bank, 4), HISP_ERR_INVALID_ARGUMENT, "outside"},
        {A, x, y, hisp_result_entry(bank, -1), HISP_ERR_INVALID_ARGUMENT, "outside"},
        {NULL, x, y, hisp_result_host(&r), HISP_ERR_INVALID_HANDLE, "handle"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        hisp_status s = hispi_spmv_dot(ctx, bad[i].A, bad[i].x, bad[i].y, bad[i].r);
        ck_assert_msg(s == bad[i].want, "%s: case %zu: %s, expected %s", test_label(_i), i,
                      hisp_status_string(s), hisp_status_string(bad[i].want));
        hisp_error_info e;
        CK_OK(ctx, hisp_context_last_error(ctx, &e));
        ck_assert_msg(e.message && strstr(e.message, bad[i].msg), "%s: case %zu: message '%s'",
                      test_label(_i), i, e.message ? e.message : "");
        CK_OK(ctx, hisp_vector_read(y, yo));
        CK_OK(ctx, hisp_vector_read(bank, bo));
        ck_assert_msg(memcmp(yh, yo, sizeof yh) == 0, "%s: case %zu wrote y", test_label(_i), i);
        ck_assert_msg(memcmp(bh, bo, sizeof bh) == 0, "%s: case %zu wrote the bank", test_label(_i),
                      i);
    }
    ck_assert_int_eq(hispi_spmv_dot(NULL, A, x, y, hisp_result_host(&r)), HISP_ERR_INVALID_HANDLE);
    /* after the failures the context still works */
    CK_OK(ctx, hispi_spmv_dot(ctx, A, x, y, hisp_result_entry(bank, 2)));
    CK_OK(ctx, hisp_vector_read(bank, bo));
    ck_assert(isfinite(bo[2]));
    hisp_matrix_destroy(&A);
    hisp_matrix_destroy(&R);
    hisp_vector_destroy(&x);
    hisp_vector_destroy(&y);
    hisp_vector_destroy(&xs);
    hisp_vector_destroy(&bank);
    hisp_vector_destroy(&b64);
    hisp_context_destroy(&ctx);
}
END_TEST

/* An SPD arrow matrix: row and column 0 full (split into chunks on CUDA),
 * a tridiagonal coupling, diagonally dominant. */
static hisp_matrix arrow(hisp_context ctx, hisp_type t, int64_t n, uint64_t *st)
{
    int64_t cap = 5 * n;
    int32_t *r = malloc((size_t)cap * sizeof *r), *c = malloc((size_t)cap * sizeof *c);
    double *v = malloc((size_t)cap * sizeof *v), *d = calloc((size_t)n, sizeof *d);
    ck_assert(r && c && v && d);
    int64_t k = 0;
    for (int64_t j = 1; j < n; j++) {
        double u = 0.5 * test_uniform(st);
        r[k] = 0, c[k] = (int32_t)j, v[k++] = u;
        r[k] = (int32_t)j, c[k] = 0, v[k++] = u;
        d[0] += fabs(u);
        d[j] += fabs(u);
        if (j + 1 < n) {
            r[k] = (int32_t)j, c[k] = (int32_t)j + 1, v[k++] = -0.25;
            r[k] = (int32_t)j + 1, c[k] = (int32_t)j, v[k++] = -0.25;
            d[j] += 0.25;
            d[j + 1] += 0.25;
        }
    }
    for (int64_t i = 0; i < n; i++)
        r[k] = (int32_t)i, c[k] = (int32_t)i, v[k++] = d[i] + 0.5 + 0.5 * fabs(test_uniform(st));
    void *vt = v;
    float *vf = NULL;
    if (t == HISP_F32) {
        vf = malloc((size_t)k * sizeof *vf);
        ck_assert_ptr_nonnull(vf);
        for (int64_t i = 0; i < k; i++)
            vf[i] = (float)v[i];
        vt = vf;
    }
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_create_coo(ctx, t, n, n, k, r, c, vt, &A));
    CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_CSR));
    free(r);
    free(c);
    free(v);
    free(d);
    free(vf);
    return A;
}

typedef struct {
    hisp_context ctx;
    hisp_matrix A;
    hisp_type t;
} op_user;

static hisp_status apply_spmv(void *user, hisp_op op, hisp_vector x, hisp_vector y)
{
    const op_user *u = user;
    double one = 1, zero = 0;
    float onef = 1, zerof = 0;
    bool f = u->t == HISP_F32;
    return hisp_spmv(u->ctx, op, f ? (void *)&onef : (void *)&one, u->A, x,
                     f ? (void *)&zerof : (void *)&zero, y);
}

/* CG through the solver (its q = A p, p.q: an operator's apply_dot, or the
 * product and a dot) on a matrix and on an operator, with and without
 * Jacobi: converged, and the true residual ||b - A x|| small. */
START_TEST(test_spmv_dot_cg)
{
    uint64_t st = test_seed() + 1505 + (uint64_t)_i;
    hisp_context ctx = test_context(_i);
    const int64_t n = HISP_CUDA_SPLIT * 2 + 300;
    for (int ti = 0; ti < 2; ti++) {
        hisp_type t = ti ? HISP_F64 : HISP_F32;
        if (t == HISP_F64 && !test_fp64(ctx)) continue;
        size_t es = hisp_type_size(t);
        double rtol = t == HISP_F32 ? 1e-4 : 1e-10;
        hisp_matrix A = arrow(ctx, t, n, &st);
        op_user u = {ctx, A, t};
        void *bh = malloc((size_t)n * es), *xh = malloc((size_t)n * es),
             *rh = malloc((size_t)n * es);
        ck_assert(bh && xh && rh);
        fill(t, bh, n, &st, 0);
        hisp_vector b = NULL, x = NULL, res = NULL;
        CK_OK(ctx, hisp_vector_create(ctx, t, n, &b));
        CK_OK(ctx, hisp_vector_create(ctx, t, n, &x));
        CK_OK(ctx, hisp_vector_create(ctx, t, n, &res));
        CK_OK(ctx, hisp_vector_write(b, bh));
        for (int mode = 0; mode < 3; mode++) { /* matrix, matrix + Jacobi, operator */
            hisp_solver s = NULL;
            CK_OK(ctx, hisp_solver_create(ctx, HISP_SOLVER_CG, &s));
            CK_OK(ctx, hisp_solver_set_tolerances(s, rtol, 0));
            CK_OK(ctx, hisp_solver_set_max_iterations(s, 2000));
            if (mode == 1) CK_OK(ctx, hisp_solver_set_preconditioner(s, HISP_PRECOND_JACOBI));
            double zero = 0;
            float zerof = 0;
            CK_OK(ctx, hisp_vector_fill(
                           x, hisp_scalar_host(t == HISP_F32 ? (void *)&zerof : (void *)&zero)));
            hisp_solve_info info;
            if (mode < 2) {
                CK_OK(ctx, hisp_solver_solve(s, A, b, x, &info));
            } else {
                hisp_operator op = {n, n, t, apply_spmv, NULL, NULL, &u, NULL};
                CK_OK(ctx, hisp_solver_solve_operator(s, &op, b, x, &info));
            }
            ck_assert_msg(info.converged, "%s %s mode %d: %s after %lld iterations (rel %.3g)",
                          test_label(_i), hisp_type_name(t), mode,
                          hisp_stop_reason_name(info.reason), (long long)info.iterations,
                          info.relative_residual);
            CK_OK(ctx, apply_spmv(&u, HISP_OP_N, x, res));
            CK_OK(ctx, hisp_vector_read(res, rh));
            double num = 0, den = 0;
            for (int64_t i = 0; i < n; i++) {
                double e = get(t, bh, i) - get(t, rh, i);
                num += e * e;
                den += get(t, bh, i) * get(t, bh, i);
            }
            double rel = sqrt(num / den), tol = t == HISP_F32 ? 2e-3 : 1e-8;
            ck_assert_msg(rel <= tol, "%s %s mode %d: ||b - A x|| / ||b|| = %.3g > %.3g",
                          test_label(_i), hisp_type_name(t), mode, rel, tol);
            hisp_solver_destroy(&s);
        }
        hisp_vector_destroy(&b);
        hisp_vector_destroy(&x);
        hisp_vector_destroy(&res);
        hisp_matrix_destroy(&A);
        free(bh);
        free(xh);
        free(rh);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

Suite *suite_spmv_dot(void)
{
    Suite *s = suite_create("spmv_dot");
    int n = test_targets(NULL);
    TCase *tc = test_tcase(s, "spmv_dot", 600);
    tcase_add_loop_test(tc, test_spmv_dot_random, 0, n);
    tcase_add_loop_test(tc, test_spmv_dot_long_rows, 0, n);
    tcase_add_loop_test(tc, test_spmv_dot_fallbacks, 0, n);
    tcase_add_loop_test(tc, test_spmv_dot_errors, 0, n);
    tcase_add_loop_test(tc, test_spmv_dot_cg, 0, n);
#ifdef HISP_HAVE_CUDA
    tcase_add_test(tc, test_spmv_dot_cuda_wrap);
#endif
    return s;
}
