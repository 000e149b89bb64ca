/* Compound entries: arithmetic (Hamilton product, the real expansion), the
 * layouts and every generated variant on every target against an oracle
 * computed here in double from the real expansion, Matrix Market round
 * trips (complex, quaternion, 3x3 blocks), generators, the plan cache. */
#include "testutil.h"
#include "compound/hispi_compound.h"
#ifdef HISP_HAVE_CUDA
#include "backend/backend.h" /* HISPI_PROG_* */
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const hisp_type ctypes[] = {HISP_C32, HISP_C64,      HISP_Q32,
                                   HISP_Q64, HISP_B3X3_F32, HISP_B3X3_F64};
#define NCTYPES 6

enum { S_RANDOM, S_LONGROW, S_EMPTY, S_ONEROW, S_COUNT };
static const char *const snames[] = {"random", "long-row", "empty-rows", "one-row"};

static int quick(void)
{
    return getenv("HISP_TEST_QUICK") != NULL;
}

/* A matrix of type t with structure st, fresh random values in [-1, 1). */
static hisp_matrix make_matrix(hisp_context ctx, hisp_type t, int st, int64_t m, int64_t n,
                               uint64_t *seed)
{
    if (st == S_ONEROW) m = 1;
    int64_t cap = m * n / 8 + 2 * m + n + 8, nnz = 0;
    int32_t *r = malloc((size_t)cap * 4), *c = malloc((size_t)cap * 4);
    int comps = hisp_type_components(t);
    size_t ss = hisp_type_size(t) / (size_t)comps;
    unsigned char *v = malloc((size_t)cap * hisp_type_size(t));
    ck_assert(r && c && v);
    for (int64_t i = 0; i < m; i++) {
        int64_t len;
        if (st == S_LONGROW)
            len = i == m / 2 ? n : (int64_t)(test_rand(seed) % 3);
        else if (st == S_EMPTY)
            len = i % 3 ? 0 : (int64_t)(test_rand(seed) % (uint64_t)(n / 4 + 2));
        else if (st == S_ONEROW)
            len = n / 2 + 1;
        else
            len = (int64_t)(test_rand(seed) % (uint64_t)(n / 8 + 3));
        for (int64_t k = 0; k < len && nnz < cap; k++) {
            r[nnz] = (int32_t)i;
            c[nnz] = (int32_t)(len == n ? k : (int64_t)(test_rand(seed) % (uint64_t)n));
            for (int q = 0; q < comps; q++) {
                double d = test_uniform(seed);
                if (ss == 4)
                    ((float *)v)[nnz * comps + q] = (float)d;
                else
                    ((double *)v)[nnz * comps + q] = d;
            }
            nnz++;
        }
    }
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_create_coo(ctx, t, m, n, nnz, r, c, v, &A));
    CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_CSR));
    free(r);
    free(c);
    free(v);
    return A;
}

/* Vector scalars of A: rows*vc and cols*vc; the scalar type. */
static void vec_dims(hisp_matrix A, int64_t *nx, int64_t *ny, hisp_type *vt, int *per, int *vc)
{
    hisp_matrix_info mi;
    ck_assert_int_eq(hisp_matrix_get_info(A, &mi), 0);
    ck_assert_int_eq(hisp_compound_vector_type(mi.type, vt, per), 0);
    *vc = hisp_type_components(*vt) * *per; /* scalars per block row */
    *nx = mi.ncols * *per;
    *ny = mi.nrows * *per;
}

/* Runs variant v on ctx and compares with the oracle (fresh x, y0, alpha,
 * beta); beta_zero starts y as NaN. */
static void check_variant(hisp_context ctx, hisp_matrix A, const hisp_variant *v, int beta_zero,
                          uint64_t *seed, const char *what)
{
    int64_t nx, ny;
    hisp_type vt;
    int per, vc;
    vec_dims(A, &nx, &ny, &vt, &per, &vc);
    int comps = hisp_type_components(vt);
    size_t ss = hisp_type_size(vt) / (size_t)comps;
    int64_t sx = nx * comps, sy = ny * comps; /* scalars */
    void *xh = malloc((size_t)sx * ss + 8), *y0 = malloc((size_t)sy * ss + 8),
         *yh = malloc((size_t)sy * ss + 8);
    for (int64_t i = 0; i < sx; i++) {
        double d = test_uniform(seed);
        if (ss == 4)
            ((float *)xh)[i] = (float)d;
        else
            ((double *)xh)[i] = d;
    }
    for (int64_t i = 0; i < sy; i++) {
        double d = beta_zero ? NAN : test_uniform(seed);
        if (ss == 4)
            ((float *)y0)[i] = (float)d;
        else
            ((double *)y0)[i] = d;
    }
    double alpha = 0.5 + (test_uniform(seed) + 1) / 2, beta = beta_zero ? 0 : test_uniform(seed);
    float af = (float)alpha, bf = (float)beta;
    if (ss == 4) alpha = af, beta = bf;
    hisp_vector x = NULL, y = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, vt, nx, &x));
    CK_OK(ctx, hisp_vector_create(ctx, vt, ny, &y));
    CK_OK(ctx, hisp_vector_write(x, xh));
    CK_OK(ctx, hisp_vector_write(y, y0));
    hisp_status s = ss == 4 ? hisp_spmv_variant(ctx, v, &af, A, x, &bf, y)
                            : hisp_spmv_variant(ctx, v, &alpha, A, x, &beta, y);
    if (s) {
        hisp_error_info e = {0};
        if (hisp_context_last_error(ctx, &e)) e.message = "";
        if (e.build_log) fprintf(stderr, "build log:\n%.4000s\n", e.build_log);
        ck_abort_msg("%s: %s: %s", what, hisp_status_string(s), e.message);
    }
    CK_OK(ctx, hisp_vector_read(y, yh));
    double *ref = test_compound_oracle(A, HISP_OP_N, xh, y0, alpha, beta);
    const int64_t *ptr;
    ck_assert_int_eq(hisp_matrix_host_arrays(A, &ptr, NULL, NULL, NULL), 0);
    hisp_matrix_info mi;
    ck_assert_int_eq(hisp_matrix_get_info(A, &mi), 0);
    int64_t longest = 1;
    for (int64_t i = 0; i < mi.nrows; i++)
        if (ptr[i + 1] - ptr[i] > longest) longest = ptr[i + 1] - ptr[i];
    double tol = ss == 4 ? 2e-6 * sqrt((double)longest * 9) + 1e-6 : 1e-13 * longest + 1e-14;
    double err = test_compound_error(ss, yh, ref, sy);
    ck_assert_msg(err <= tol, "%s: relative error %.3e > %.1e", what, err, tol);
    free(ref);
    free(xh);
    free(y0);
    free(yh);
    hisp_vector_destroy(&x);
    hisp_vector_destroy(&y);
}

static void variant_label(char *buf, size_t n, hisp_type t, int st, const hisp_variant *v,
                          const char *target)
{
    char l[64], s[64];
    ck_assert_int_eq(hisp_layout_name(&v->layout, l, sizeof l), 0);
    ck_assert_int_eq(hisp_schedule_name(&v->sched, s, sizeof s), 0);
    snprintf(buf, n, "%s %s %s %s on %s", hisp_type_name(t), snames[st], l, s, target);
}

/* ---- arithmetic ---------------------------------------------------------- */

START_TEST(test_hamilton)
{
    hisp_context ctx = test_default_context();
    /* i*j = k, j*i = -k, k*i = j, (1+2i+3j+4k)(5+6i+7j+8k) = -60+12i+30j+24k */
    static const double a[4][4] = {{0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}, {1, 2, 3, 4}};
    static const double b[4][4] = {{0, 0, 1, 0}, {0, 1, 0, 0}, {0, 1, 0, 0}, {5, 6, 7, 8}};
    static const double w[4][4] = {{0, 0, 0, 1}, {0, 0, 0, -1}, {0, 0, 1, 0}, {-60, 12, 30, 24}};
    for (int c = 0; c < 4; c++)
        for (int f = 0; f < 2; f++) {
            hisp_type t = f ? HISP_Q64 : HISP_Q32;
            int64_t rp[2] = {0, 1};
            int32_t ci[1] = {0};
            float af[4], xf[4], yf[4];
            double ad[4], xd[4], yd[4];
            for (int q = 0; q < 4; q++)
                af[q] = (float)a[c][q], ad[q] = a[c][q], xf[q] = (float)b[c][q], xd[q] = b[c][q];
            hisp_matrix A = NULL;
            hisp_vector x = NULL, y = NULL;
            CK_OK(ctx,
                  hisp_matrix_create_csr(ctx, t, 1, 1, rp, ci, f ? (void *)ad : (void *)af, &A));
            CK_OK(ctx, hisp_vector_create(ctx, t, 1, &x));
            CK_OK(ctx, hisp_vector_create(ctx, t, 1, &y));
            CK_OK(ctx, hisp_vector_write(x, f ? (void *)xd : (void *)xf));
            double one = 1, zero = 0;
            float onef = 1, zerof = 0;
            CK_OK(ctx, hisp_spmv(ctx, HISP_OP_N, f ? (void *)&one : (void *)&onef, A, x,
                                 f ? (void *)&zero : (void *)&zerof, y));
            CK_OK(ctx, hisp_vector_read(y, f ? (void *)yd : (void *)yf));
            for (int q = 0; q < 4; q++)
                ck_assert_msg((f ? yd[q] : yf[q]) == w[c][q], "case %d %s comp %d: %g != %g", c,
                              hisp_type_name(t), q, f ? yd[q] : yf[q], w[c][q]);
            /* an op that does not exist is refused (T and H: suite compound_op) */
            ck_assert_int_eq(hisp_spmv(ctx, (hisp_op)7, f ? (void *)&one : (void *)&onef, A, x,
                                       f ? (void *)&zero : (void *)&zerof, y),
                             HISP_ERR_INVALID_ARGUMENT);
            hisp_matrix_destroy(&A);
            hisp_vector_destroy(&x);
            hisp_vector_destroy(&y);
        }
    hisp_context_destroy(&ctx);
}
END_TEST

/* The plain C reference (hispi_compound_ref_spmv) against the oracle from
 * the real expansion, every type and structure. */
START_TEST(test_reference)
{
    uint64_t seed = test_seed() + 601;
    hisp_context ctx = test_default_context();
    for (int ti = 0; ti < NCTYPES; ti++)
        for (int st = 0; st < S_COUNT; st++) {
            hisp_type t = ctypes[ti];
            hisp_matrix A = make_matrix(ctx, t, st, 37, 29, &seed);
            int64_t nx, ny;
            hisp_type vt;
            int per, vc;
            vec_dims(A, &nx, &ny, &vt, &per, &vc);
            int comps = hisp_type_components(vt);
            size_t ss = hisp_type_size(vt) / (size_t)comps;
            int64_t sx = nx * comps, sy = ny * comps;
            void *x = malloc((size_t)sx * ss + 8), *y = malloc((size_t)sy * ss + 8),
                 *y0 = malloc((size_t)sy * ss + 8);
            for (int64_t i = 0; i < sx; i++)
                ss == 4 ? (void)(((float *)x)[i] = (float)test_uniform(&seed))
                        : (void)(((double *)x)[i] = test_uniform(&seed));
            for (int64_t i = 0; i < sy; i++)
                ss == 4 ? (void)(((float *)y0)[i] = (float)test_uniform(&seed))
                        : (void)(((double *)y0)[i] = test_uniform(&seed));
            memcpy(y, y0, (size_t)sy * ss);
            hispi_sparse s = A->host;
            CK_OK(ctx, hispi_compound_ref_spmv(ctx, &s, 0.75, x, -0.5, y));
            double *ref = test_compound_oracle(A, HISP_OP_N, x, y0, 0.75, -0.5);
            double err = test_compound_error(ss, y, ref, sy);
            ck_assert_msg(err < (ss == 4 ? 1e-5 : 1e-13), "%s %s: error %.3e", hisp_type_name(t),
                          snames[st], err);
            free(ref);
            free(x);
            free(y);
            free(y0);
            hisp_matrix_destroy(&A);
        }
    hisp_context_destroy(&ctx);
}
END_TEST

/* ---- every variant on every target ---------------------------------------- */

static void run_all_variants(int target, int big)
{
    hisp_context ctx = test_context(target);
    hisp_device_info info;
    CK_OK(ctx, hisp_context_get_device(ctx, &info));
    uint64_t seed = test_seed() + 700 + (uint64_t)target;
    char what[512];
    for (int ti = 0; ti < NCTYPES; ti++) {
        hisp_type t = ctypes[ti];
        if (hisp_type_size(t) / (size_t)hisp_type_components(t) == 8 && !info.fp64) {
            test_skip("compound %s on %s: no fp64", hisp_type_name(t), test_label(target));
            continue;
        }
        if (!big) {
            for (int st = 0; st < S_COUNT; st++) {
                hisp_matrix A = make_matrix(ctx, t, st, 45, 40, &seed);
                for (int o = 0; o < HISP_OUTER_COUNT; o++)
                    for (int in = 0; in < 2; in++)
                        for (int vs = 0; vs < 2; vs++)
                            for (int dy = 0; dy < 2; dy++) {
                                /* default schedule, and a small odd one that
                                 * makes several chunks per work-group */
                                int odd = (o + in + vs + st) % 2;
                                hisp_variant v = {
                                    {(hisp_outer_layout)o, (hisp_sublayout)in, (hisp_sublayout)vs},
                                    {dy, odd ? 8 : 0, odd ? 1 : 0}};
                                variant_label(what, sizeof what, t, st, &v, test_label(target));
                                check_variant(ctx, A, &v, (o + dy + st) % 2, &seed, what);
                            }
                hisp_matrix_destroy(&A);
            }
        } else { /* generated matrices, a few variants */
            hisp_cgen_kind k = ti < 2   ? HISP_CGEN_HELMHOLTZ
                               : ti < 4 ? HISP_CGEN_QSURFACE
                                        : HISP_CGEN_FEM3X3;
            int64_t n = k == HISP_CGEN_FEM3X3 ? 14 : k == HISP_CGEN_QSURFACE ? 40 : 70;
            hisp_matrix A = NULL;
            CK_OK(ctx, hisp_matrix_generate_compound(ctx, k, n, seed, t, &A));
            static const hisp_variant vs[] = {
                {{HISP_OUTER_CSR, HISP_AOS, HISP_AOS}, {0, 0, 0}},
                {{HISP_OUTER_SELL32, HISP_SOA, HISP_SOA}, {1, 0, 0}},
                {{HISP_OUTER_ELL, HISP_SOA, HISP_AOS}, {1, 32, 2}},
                {{HISP_OUTER_SELL16, HISP_AOS, HISP_SOA}, {0, 48, 3}},
            };
            for (size_t q = 0; q < sizeof vs / sizeof vs[0]; q++) {
                variant_label(what, sizeof what, t, S_RANDOM, &vs[q], test_label(target));
                check_variant(ctx, A, &vs[q], (int)q % 2, &seed, what);
            }
            hisp_matrix_destroy(&A);
        }
    }
    hisp_context_destroy(&ctx);
}

START_TEST(test_variants)
{
    run_all_variants(_i, 0);
}
END_TEST

START_TEST(test_variants_generated)
{
    run_all_variants(_i, 1);
}
END_TEST

/* Refusals: wrong vector types and sizes, bad variants, invalid schedules. */
START_TEST(test_variant_errors)
{
    uint64_t seed = test_seed() + 801;
    hisp_context ctx = test_default_context();
    hisp_matrix A = make_matrix(ctx, HISP_B3X3_F64, S_RANDOM, 10, 12, &seed);
    hisp_vector x = NULL, y = NULL, xb = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, 36, &x));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, 30, &y));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_B3X3_F64, 12, &xb));
    double one = 1, zero = 0;
    hisp_variant v = {{HISP_OUTER_ELL, HISP_SOA, HISP_SOA}, {1, 0, 0}};
    CK_OK(ctx, hisp_spmv_variant(ctx, &v, &one, A, x, &zero, y));
    ck_assert_int_eq(hisp_spmv_variant(ctx, &v, &one, A, xb, &zero, y), HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_spmv_variant(ctx, &v, &one, A, y, &zero, x), HISP_ERR_INVALID_ARGUMENT);
    v.layout.outer = HISP_OUTER_COUNT;
    ck_assert_int_eq(hisp_spmv_variant(ctx, &v, &one, A, x, &zero, y), HISP_ERR_INVALID_ARGUMENT);
    hisp_layout l;
    ck_assert_int_eq(hisp_layout_from_name("sell16-soa-aos", &l), 0);
    ck_assert_int_eq(l.outer, HISP_OUTER_SELL16);
    ck_assert_int_eq(l.inner, HISP_SOA);
    ck_assert_int_eq(l.vec, HISP_AOS);
    ck_assert_int_eq(hisp_layout_from_name("CSR", &l), 0);
    ck_assert_int_eq(hisp_layout_from_name("COO-AoS-AoS", &l), HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_layout_from_name("ELL-AoS", &l), HISP_ERR_INVALID_ARGUMENT);
    hisp_schedule s;
    ck_assert_int_eq(hisp_schedule_from_name("dynamic:96x3", &s), 0);
    ck_assert(s.dynamic == 1 && s.nt == 96 && s.nb == 3);
    ck_assert_int_eq(hisp_schedule_from_name("dynamic:96", &s), HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_schedule_from_name("fast:1x1", &s), HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_schedule_from_name("static:0x1", &s), HISP_ERR_INVALID_ARGUMENT);
    hisp_vector_destroy(&x);
    hisp_vector_destroy(&y);
    hisp_vector_destroy(&xb);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

/* Layout memory: CSR exact, ELL = padded rows x longest row, SELL between. */
START_TEST(test_layout_bytes)
{
    uint64_t seed = test_seed() + 901;
    hisp_context ctx = test_default_context();
    for (int ti = 0; ti < NCTYPES; ti++) {
        hisp_type t = ctypes[ti];
        hisp_matrix A = make_matrix(ctx, t, S_LONGROW, 100, 64, &seed);
        hisp_matrix_info mi;
        CK_OK(ctx, hisp_matrix_get_info(A, &mi));
        uint64_t b[HISP_OUTER_COUNT];
        for (int o = 0; o < HISP_OUTER_COUNT; o++)
            CK_OK(ctx, hisp_matrix_layout_bytes(A, (hisp_outer_layout)o, &b[o]));
        uint64_t es = hisp_type_size(t);
        ck_assert_uint_eq(b[HISP_OUTER_CSR], (uint64_t)mi.nnz * (es + 4) + 101 * 4);
        ck_assert_uint_eq(b[HISP_OUTER_ELL], 128ull * 64 * (es + 4) + 100 * 4); /* 100 -> 128 */
        ck_assert(b[HISP_OUTER_SELL16] <= b[HISP_OUTER_SELL32]);
        ck_assert(b[HISP_OUTER_SELL32] < b[HISP_OUTER_ELL]);
        ck_assert(b[HISP_OUTER_CSR] <= b[HISP_OUTER_SELL16]);
        hisp_matrix_destroy(&A);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* ---- Matrix Market ---------------------------------------------------------- */

static void tmpname(char *buf, size_t n, const char *tag)
{
    snprintf(buf, n, "/tmp/hisp-compound-%ld-%s", (long)getpid(), tag);
}

static void same_matrix(hisp_matrix A, hisp_matrix B)
{
    CK_OK(NULL, hisp_matrix_convert(A, HISP_FORMAT_CSR));
    ck_assert_int_eq(hisp_matrix_convert(B, HISP_FORMAT_CSR), 0);
    hisp_matrix_info a, b;
    ck_assert_int_eq(hisp_matrix_get_info(A, &a), 0);
    ck_assert_int_eq(hisp_matrix_get_info(B, &b), 0);
    ck_assert_int_eq(a.type, b.type);
    ck_assert_int_eq(a.nrows, b.nrows);
    ck_assert_int_eq(a.ncols, b.ncols);
    ck_assert_int_eq(a.nnz, b.nnz);
    const int64_t *pa, *pb;
    const int32_t *ca, *cb;
    const void *va, *vb;
    ck_assert_int_eq(hisp_matrix_host_arrays(A, &pa, NULL, &ca, &va), 0);
    ck_assert_int_eq(hisp_matrix_host_arrays(B, &pb, NULL, &cb, &vb), 0);
    ck_assert(!memcmp(pa, pb, (size_t)(a.nrows + 1) * 8));
    ck_assert(!memcmp(ca, cb, (size_t)a.nnz * 4));
    ck_assert_msg(!memcmp(va, vb, (size_t)a.nnz * hisp_type_size(a.type)), "%s values differ",
                  hisp_type_name(a.type));
}

START_TEST(test_mtx_roundtrip)
{
    uint64_t seed = test_seed() + 1001;
    hisp_context ctx = test_default_context();
    char path[256];
    tmpname(path, sizeof path, "rt.mtx");
    for (int ti = 0; ti < NCTYPES; ti++)
        for (int st = 0; st < S_COUNT; st++) {
            hisp_type t = ctypes[ti];
            hisp_matrix A = make_matrix(ctx, t, st, 23, 19, &seed), B = NULL;
            CK_OK(ctx, hisp_matrix_write_mtx(A, path));
            hisp_mtx_header h;
            CK_OK(ctx, hisp_matrix_read_mtx(ctx, path, t, &B, &h));
            ck_assert_str_eq(h.field, t == HISP_C32 || t == HISP_C64   ? "complex"
                                      : t == HISP_Q32 || t == HISP_Q64 ? "quaternion"
                                                                       : "real");
            same_matrix(A, B);
            hisp_matrix_destroy(&A);
            hisp_matrix_destroy(&B);
        }
    /* quaternion and complex vectors */
    for (int f = 0; f < 4; f++) {
        hisp_type t = (hisp_type[]){HISP_Q32, HISP_Q64, HISP_C32, HISP_C64}[f];
        int64_t n = 17;
        size_t es = hisp_type_size(t);
        unsigned char *a = malloc((size_t)n * es), *b = malloc((size_t)n * es);
        /* finite values of the type */
        for (int64_t i = 0; i < n * hisp_type_components(t); i++) {
            if (es / (size_t)hisp_type_components(t) == 4)
                ((float *)a)[i] = (float)test_uniform(&seed);
            else
                ((double *)a)[i] = test_uniform(&seed);
        }
        hisp_vector v = NULL, w = NULL;
        CK_OK(ctx, hisp_vector_create(ctx, t, n, &v));
        CK_OK(ctx, hisp_vector_write(v, a));
        CK_OK(ctx, hisp_vector_write_mtx(v, path));
        CK_OK(ctx, hisp_vector_read_mtx(ctx, path, t, &w));
        CK_OK(ctx, hisp_vector_read(w, b));
        ck_assert(!memcmp(a, b, (size_t)n * es));
        hisp_vector_destroy(&v);
        hisp_vector_destroy(&w);
        free(a);
        free(b);
    }
    unlink(path);
    hisp_context_destroy(&ctx);
}
END_TEST

static hisp_status read_buf(hisp_context ctx, const char *text, hisp_type t, hisp_matrix *A,
                            int64_t *line)
{
    hisp_status s = hisp_matrix_read_mtx_buffer(ctx, text, strlen(text), "t.mtx", t, A, NULL);
    hisp_error_info e = {0};
    if (s && hisp_context_last_error(ctx, &e) == 0) *line = e.line;
    return s;
}

START_TEST(test_mtx_quaternion_and_blocks)
{
    hisp_context ctx = test_default_context();
    hisp_matrix A = NULL;
    int64_t line = 0;
    /* hermitian quaternion: the mirror is the conjugate */
    CK_OK(ctx, read_buf(ctx,
                        "%%MatrixMarket matrix coordinate quaternion hermitian\n% c\n2 2 2\n"
                        "1 1 5 0 0 0\n2 1 1 2 3 4\n",
                        HISP_Q64, &A, &line));
    CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_CSR));
    const void *vals;
    const int32_t *cols;
    CK_OK(ctx, hisp_matrix_host_arrays(A, NULL, NULL, &cols, &vals));
    const double *q = vals;
    ck_assert(cols[1] == 1 && q[4] == 1 && q[5] == -2 && q[6] == -3 && q[7] == -4); /* (1,2) */
    ck_assert(cols[2] == 0 && q[8] == 1 && q[9] == 2 && q[10] == 3 && q[11] == 4);  /* (2,1) */
    hisp_matrix_destroy(&A);
    /* complex and real files into quaternions: w + x i */
    CK_OK(ctx, read_buf(ctx, "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 2 3\n",
                        HISP_Q32, &A, &line));
    CK_OK(ctx, hisp_matrix_host_arrays(A, NULL, NULL, NULL, &vals));
    ck_assert(((const float *)vals)[0] == 2 && ((const float *)vals)[1] == 3 &&
              ((const float *)vals)[2] == 0);
    hisp_matrix_destroy(&A);
    /* malformed quaternion files name the line */
    ck_assert_int_eq(read_buf(ctx,
                              "%%MatrixMarket matrix coordinate quaternion general\n2 2 2\n"
                              "1 1 1 2 3 4\n2 2 1.5 2.5 3.5\n",
                              HISP_Q64, &A, &line),
                     HISP_ERR_INPUT_FORMAT);
    ck_assert_int_eq(line, 4);
    ck_assert_int_eq(read_buf(ctx,
                              "%%MatrixMarket matrix coordinate quaternion general\n2 2 1\n"
                              "1 1 1 2 3 4 5\n",
                              HISP_Q64, &A, &line),
                     HISP_ERR_INPUT_FORMAT);
    ck_assert_int_eq(line, 3);
    ck_assert_int_eq(read_buf(ctx, "%%MatrixMarket matrix coordinate quaternion general\n1 1 0\n",
                              HISP_C64, &A, &line),
                     HISP_ERR_INPUT_FORMAT);
    ck_assert_int_eq(line, 1);
    /* quaternion arrays */
    CK_OK(ctx,
          read_buf(ctx, "%%MatrixMarket matrix array quaternion general\n2 1\n1 2 3 4\n5 6 7 8\n",
                   HISP_Q64, &A, &line));
    hisp_matrix_destroy(&A);
    /* 3x3 blocks from a real file: 6x6 -> 2x2 blocks, missing entries zero */
    CK_OK(ctx, read_buf(ctx,
                        "%%MatrixMarket matrix coordinate real symmetric\n6 6 3\n1 1 1\n5 2 "
                        "7\n6 6 2\n",
                        HISP_B3X3_F64, &A, &line));
    hisp_matrix_info mi;
    CK_OK(ctx, hisp_matrix_get_info(A, &mi));
    ck_assert(mi.nrows == 2 && mi.ncols == 2 && mi.nnz == 4);
    CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_CSR));
    CK_OK(ctx, hisp_matrix_host_arrays(A, NULL, NULL, &cols, &vals));
    const double *b = vals;
    /* block (0,0): a11 = 1; block (0,1): (2,5) -> r 1, c 1 = 7; block (1,0): (5,2) ->
     * r 1, c 1 = 7; block (1,1): (6,6) -> r 2, c 2 = 2 */
    ck_assert(b[0] == 1 && b[4] == 0 && cols[0] == 0);
    ck_assert(cols[1] == 1 && b[9 + 4] == 7);
    ck_assert(cols[2] == 0 && b[18 + 4] == 7);
    hisp_matrix_destroy(&A);
    ck_assert_int_eq(read_buf(ctx,
                              "%%MatrixMarket matrix coordinate real general\n% x\n5 6 1\n1 1 1\n",
                              HISP_B3X3_F32, &A, &line),
                     HISP_ERR_INPUT_FORMAT);
    ck_assert_int_eq(line, 3);
    ck_assert_int_eq(read_buf(ctx, "%%MatrixMarket matrix coordinate complex general\n3 3 0\n",
                              HISP_B3X3_F32, &A, &line),
                     HISP_ERR_INPUT_FORMAT);
    hisp_context_destroy(&ctx);
}
END_TEST

/* ---- generators ----------------------------------------------------------------- */

START_TEST(test_generators)
{
    hisp_context ctx = test_default_context();
    static const hisp_type ty[HISP_CGEN_COUNT][2] = {{HISP_B3X3_F32, HISP_B3X3_F64},
                                                     {HISP_Q32, HISP_Q64},
                                                     {HISP_C32, HISP_C64},
                                                     {HISP_B3X3_F32, HISP_B3X3_F64}};
    for (int k = 0; k < HISP_CGEN_COUNT; k++)
        for (int f = 0; f < 2; f++) {
            bool blocks = k == HISP_CGEN_FEM3X3 || k == HISP_CGEN_ELASTIC3D;
            int64_t n = blocks ? 5 : k == HISP_CGEN_QSURFACE ? 6 : 9;
            hisp_matrix A = NULL, B = NULL, C = NULL;
            hisp_type t = ty[k][f];
            CK_OK(ctx, hisp_matrix_generate_compound(ctx, (hisp_cgen_kind)k, n, 7, t, &A));
            CK_OK(ctx, hisp_matrix_generate_compound(ctx, (hisp_cgen_kind)k, n, 7, t, &B));
            CK_OK(ctx, hisp_matrix_generate_compound(ctx, (hisp_cgen_kind)k, n, 8, t, &C));
            same_matrix(A, B);
            hisp_matrix_info mi;
            CK_OK(ctx, hisp_matrix_get_info(A, &mi));
            int64_t want = blocks                    ? (3 * n - 2) * (3 * n - 2) * (3 * n - 2)
                           : k == HISP_CGEN_QSURFACE ? 7 * 2 * n * n
                                                     : 5 * n * n - 4 * n;
            ck_assert_int_eq(mi.nnz, want);
            /* another seed: other values (elastic3d has no random part) */
            const void *va, *vc;
            CK_OK(ctx, hisp_matrix_host_arrays(A, NULL, NULL, NULL, &va));
            CK_OK(ctx, hisp_matrix_host_arrays(C, NULL, NULL, NULL, &vc));
            ck_assert((memcmp(va, vc, (size_t)mi.nnz * hisp_type_size(t)) != 0) ==
                      (k != HISP_CGEN_ELASTIC3D));
            /* symmetry: 3x3 blocks A_ji = A_ij^T, qsurface A_ji = conj(A_ij) */
            const int64_t *p;
            const int32_t *c;
            CK_OK(ctx, hisp_matrix_host_arrays(A, &p, NULL, &c, &va));
            int comps = hisp_type_components(t);
            size_t ss = hisp_type_size(t) / (size_t)comps;
            for (int64_t i = 0; i < mi.nrows && k != HISP_CGEN_HELMHOLTZ; i++)
                for (int64_t e = p[i]; e < p[i + 1]; e++) {
                    int64_t j = c[e], g = -1;
                    for (int64_t h = p[j]; h < p[j + 1]; h++)
                        if (c[h] == i) g = h;
                    ck_assert_int_ge(g, 0);
                    for (int q = 0; q < comps; q++) {
                        int qt = blocks ? (q % 3) * 3 + q / 3 : q;
                        double sg = k == HISP_CGEN_QSURFACE && q > 0 ? -1 : 1;
                        ck_assert(test_scalar(ss, va, e * comps + q) ==
                                  sg * test_scalar(ss, va, g * comps + qt));
                    }
                }
            hisp_matrix_destroy(&A);
            hisp_matrix_destroy(&B);
            hisp_matrix_destroy(&C);
        }
    /* a size that runs on several threads equals the one-thread result */
    hisp_matrix A = NULL, B = NULL;
    CK_OK(ctx, hisp_matrix_generate_compound(ctx, HISP_CGEN_QSURFACE, 110, 3, HISP_Q64, &A));
    CK_OK(ctx, hisp_context_set_option(ctx, "threads", "1"));
    CK_OK(ctx, hisp_matrix_generate_compound(ctx, HISP_CGEN_QSURFACE, 110, 3, HISP_Q64, &B));
    CK_OK(ctx, hisp_context_set_option(ctx, "threads", "0"));
    same_matrix(A, B);
    hisp_matrix_destroy(&A);
    hisp_matrix_destroy(&B);
    ck_assert_int_eq(hisp_matrix_generate_compound(ctx, HISP_CGEN_FEM3X3, 4, 1, HISP_Q64, &A),
                     HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_matrix_generate_compound(ctx, HISP_CGEN_FEM3X3, 0, 1, HISP_B3X3_F64, &A),
                     HISP_ERR_INVALID_ARGUMENT);
    hisp_cgen_kind k;
    ck_assert_int_eq(hisp_cgen_from_name("QSurface", &k), 0);
    ck_assert_int_eq(k, HISP_CGEN_QSURFACE);
    hisp_context_destroy(&ctx);
}
END_TEST

/* elastic3d against what linear elasticity promises, not against stored
 * values: the sizes of a 27-point block stencil, exact symmetry, the six
 * rigid-body motions in the null space of every row not coupled to the
 * clamped face, positive definiteness (a dense Cholesky), f32 = f64
 * rounded, one matrix whatever the seed and the number of threads, and
 * n < 2 refused. */
static int64_t span(int64_t c, int64_t lo, int64_t hi) /* neighbour coordinates in [lo, hi] */
{
    return 1 + (c > lo) + (c < hi);
}

static void elastic_check(hisp_context ctx, int64_t n)
{
    hisp_matrix A = NULL, A2 = NULL, F = NULL;
    CK_OK(ctx, hisp_matrix_generate_compound(ctx, HISP_CGEN_ELASTIC3D, n, 1, HISP_B3X3_F64, &A));
    CK_OK(ctx, hisp_matrix_generate_compound(ctx, HISP_CGEN_ELASTIC3D, n, 99, HISP_B3X3_F64, &A2));
    CK_OK(ctx, hisp_matrix_generate_compound(ctx, HISP_CGEN_ELASTIC3D, n, 1, HISP_B3X3_F32, &F));
    same_matrix(A, A2);
    hisp_matrix_info mi, fi;
    CK_OK(ctx, hisp_matrix_get_info(A, &mi));
    CK_OK(ctx, hisp_matrix_get_info(F, &fi));
    ck_assert_int_eq(mi.nrows, n * n * n);
    ck_assert_int_eq(mi.ncols, n * n * n);
    ck_assert_int_eq(mi.nnz, (3 * n - 2) * (3 * n - 2) * (3 * n - 2));
    ck_assert_int_eq(fi.nnz, mi.nnz);
    const int64_t *p;
    const int32_t *c;
    const void *vv, *fv;
    CK_OK(ctx, hisp_matrix_host_arrays(A, &p, NULL, &c, &vv));
    CK_OK(ctx, hisp_matrix_host_arrays(F, NULL, NULL, NULL, &fv));
    const double *v = vv;
    const float *vf = fv;
    for (int64_t e = 0; e < mi.nnz * 9; e++)
        ck_assert_msg(vf[e] == (float)v[e], "f32 entry %lld: %g, f64 %g", (long long)e,
                      (double)vf[e], v[e]);
    int coupled = 0; /* x = 1 nodes whose rows move a rigid motion */
    for (int64_t i = 0; i < mi.nrows; i++) {
        int64_t x = i % n + 1, y = (i / n) % n, z = i / (n * n);
        /* row length: the 27-point neighbourhood within x in 1..n, y, z in 0..n-1 */
        ck_assert_int_eq(p[i + 1] - p[i], span(x, 1, n) * span(y, 0, n - 1) * span(z, 0, n - 1));
        double res[6][3] = {{0}}, scale = 0;
        for (int64_t e = p[i]; e < p[i + 1]; e++) {
            int64_t j = c[e], X = j % n + 1, Y = (j / n) % n, Z = j / (n * n);
            ck_assert(e == p[i] || c[e - 1] < j);
            ck_assert(llabs(X - x) <= 1 && llabs(Y - y) <= 1 && llabs(Z - z) <= 1);
            /* A_ji = A_ij^T exactly */
            int64_t g = -1;
            for (int64_t h = p[j]; h < p[j + 1]; h++)
                if (c[h] == i) g = h;
            ck_assert_int_ge(g, 0);
            for (int r = 0; r < 3; r++)
                for (int q = 0; q < 3; q++)
                    ck_assert(v[e * 9 + r * 3 + q] == v[g * 9 + q * 3 + r]);
            /* the rigid motions at node j: translations e_d, rotations w x (X, Y, Z) */
            const double pos[3] = {(double)X, (double)Y, (double)Z};
            double u[6][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
            for (int d = 0; d < 3; d++) { /* rotation about axis d */
                int a = (d + 1) % 3, b = (d + 2) % 3;
                u[3 + d][a] = -pos[b];
                u[3 + d][b] = pos[a];
            }
            double umax = (double)(n + 1);
            for (int r = 0; r < 3; r++)
                for (int q = 0; q < 3; q++) {
                    double a = v[e * 9 + r * 3 + q];
                    scale += fabs(a) * umax;
                    for (int m = 0; m < 6; m++)
                        res[m][r] += a * u[m][q];
                }
        }
        double worst = 0;
        for (int m = 0; m < 6; m++)
            for (int r = 0; r < 3; r++)
                worst = fmax(worst, fabs(res[m][r]));
        if (x >= 2)
            ck_assert_msg(worst <= 1e-12 * scale,
                          "n %lld node %lld (%lld, %lld, %lld): rigid "
                          "motion gives %g (row scale %g)",
                          (long long)n, (long long)i, (long long)x, (long long)y, (long long)z,
                          worst, scale);
        else
            coupled += worst > 1e-6 * scale;
    }
    ck_assert_int_eq(coupled, n * n); /* every node next to the clamped face */
    TEST_DESTROY_MATRICES(&A, &A2, &F);
}

/* Dense Cholesky of the scalar expansion of elastic3d n; returns the
 * smallest pivot (<= 0 where it fails). */
static double elastic_cholesky(hisp_context ctx, int64_t n)
{
    hisp_matrix A = NULL, B = NULL;
    CK_OK(ctx, hisp_matrix_generate_compound(ctx, HISP_CGEN_ELASTIC3D, n, 1, HISP_B3X3_F64, &A));
    CK_OK(ctx, hisp_matrix_expand_real(A, &B));
    CK_OK(ctx, hisp_matrix_convert(B, HISP_FORMAT_CSR));
    hisp_matrix_info bi;
    CK_OK(ctx, hisp_matrix_get_info(B, &bi));
    int64_t m = 3 * n * n * n;
    ck_assert_int_eq(bi.nrows, m);
    ck_assert_int_eq(bi.type, HISP_F64);
    ck_assert_int_eq(bi.nnz, 9 * (3 * n - 2) * (3 * n - 2) * (3 * n - 2));
    const int64_t *p;
    const int32_t *c;
    const void *vv;
    CK_OK(ctx, hisp_matrix_host_arrays(B, &p, NULL, &c, &vv));
    const double *v = vv;
    double *L = calloc((size_t)(m * m), sizeof *L);
    ck_assert_ptr_nonnull(L);
    for (int64_t i = 0; i < m; i++)
        for (int64_t e = p[i]; e < p[i + 1]; e++)
            L[i * m + c[e]] = v[e];
    double lo = HUGE_VAL;
    for (int64_t j = 0; j < m && lo > 0; j++) { /* in place, lower triangle */
        double d = L[j * m + j];
        for (int64_t k = 0; k < j; k++)
            d -= L[j * m + k] * L[j * m + k];
        lo = fmin(lo, d);
        if (d <= 0) break;
        d = sqrt(d);
        L[j * m + j] = d;
        for (int64_t i = j + 1; i < m; i++) {
            double s = L[i * m + j];
            for (int64_t k = 0; k < j; k++)
                s -= L[i * m + k] * L[j * m + k];
            L[i * m + j] = s / d;
        }
    }
    free(L);
    TEST_DESTROY_MATRICES(&A, &B);
    return lo;
}

START_TEST(test_elastic3d)
{
    hisp_context ctx = test_default_context();
    for (int64_t n = 2; n <= 6; n += 2)
        elastic_check(ctx, n);
    elastic_check(ctx, 3);
    for (int64_t n = 2; n <= 3; n++) {
        double lo = elastic_cholesky(ctx, n);
        ck_assert_msg(lo > 0, "elastic3d n %lld: Cholesky pivot %g", (long long)n, lo);
    }
    /* a size that runs on several threads equals the one-thread result */
    hisp_matrix A = NULL, B = NULL;
    CK_OK(ctx, hisp_matrix_generate_compound(ctx, HISP_CGEN_ELASTIC3D, 28, 1, HISP_B3X3_F32, &A));
    CK_OK(ctx, hisp_context_set_option(ctx, "threads", "1"));
    CK_OK(ctx, hisp_matrix_generate_compound(ctx, HISP_CGEN_ELASTIC3D, 28, 1, HISP_B3X3_F32, &B));
    CK_OK(ctx, hisp_context_set_option(ctx, "threads", "0"));
    same_matrix(A, B);
    TEST_DESTROY_MATRICES(&A, &B);
    /* refused, with the reason */
    static const int64_t bad[] = {1, 0, -4, 1291};
    for (int b = 0; b < 4; b++) {
        ck_assert_int_eq(
            hisp_matrix_generate_compound(ctx, HISP_CGEN_ELASTIC3D, bad[b], 1, HISP_B3X3_F64, &A),
            HISP_ERR_INVALID_ARGUMENT);
        ck_assert_ptr_null(A);
        hisp_error_info e;
        CK_OK(ctx, hisp_context_last_error(ctx, &e));
        ck_assert_msg(strstr(e.message, "elastic3d: n = ") &&
                          strstr(e.message, bad[b] < 2 ? "needs n >= 2" : "2^31 - 1 rows"),
                      "n %lld: %s", (long long)bad[b], e.message);
    }
    ck_assert_int_eq(hisp_matrix_generate_compound(ctx, HISP_CGEN_ELASTIC3D, 3, 1, HISP_C64, &A),
                     HISP_ERR_INVALID_ARGUMENT);
    hisp_cgen_kind k;
    CK_OK(ctx, hisp_cgen_from_name("Elastic3D", &k));
    ck_assert_int_eq(k, HISP_CGEN_ELASTIC3D);
    ck_assert_str_eq(hisp_cgen_name(HISP_CGEN_ELASTIC3D), "elastic3d");
    hisp_context_destroy(&ctx);
}
END_TEST

/* ---- tuner and plan cache ----------------------------------------------------------- */

static const char *cache_dir = "";

static void use_temp_cache(hisp_context ctx)
{
    cache_dir = test_temp_cache(ctx, "plans");
}

START_TEST(test_plan_cache)
{
    uint64_t seed = test_seed() + 1201 + (uint64_t)_i;
    hisp_context ctx = test_context(_i);
    use_temp_cache(ctx);
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_generate_compound(ctx, HISP_CGEN_QSURFACE, 12, seed, HISP_Q32, &A));
    hisp_tune_plan p, p2;
    hisp_tune_result res[400];
    int count = 0;
    int found = 1;
    CK_OK(ctx, hisp_tune_plan_lookup(ctx, A, &p, &found));
    ck_assert_int_eq(found, 0); /* miss */
    CK_OK(ctx, hisp_tune(ctx, A, HISP_TUNE_FAST, 1, NULL, NULL, res, 400, &count, &p));
    ck_assert_int_eq(p.from_cache, 0);
    ck_assert_int_gt(count, 0);
    ck_assert_int_eq(p.tried, count);
    for (int i = 1; i < count && i < 400; i++)
        ck_assert(res[i - 1].ms <= res[i].ms);
    ck_assert(!memcmp(&res[0].v, &p.best, sizeof p.best));
    /* the winner computes the right thing */
    char what[512];
    variant_label(what, sizeof what, HISP_Q32, S_RANDOM, &p.best, test_label(_i));
    check_variant(ctx, A, &p.best, 0, &seed, what);
    /* hit: nothing tuned */
    CK_OK(ctx, hisp_tune(ctx, A, HISP_TUNE_FAST, 1, NULL, NULL, res, 400, &count, &p2));
    ck_assert_int_eq(p2.from_cache, 1);
    ck_assert_int_eq(count, 0);
    ck_assert(!memcmp(&p2.best, &p.best, sizeof p.best));
    ck_assert_str_eq(p2.key, p.key);
    /* a similar matrix (another seed) shares the key */
    hisp_matrix B = NULL;
    CK_OK(ctx, hisp_matrix_generate_compound(ctx, HISP_CGEN_QSURFACE, 12, seed + 1, HISP_Q32, &B));
    CK_OK(ctx, hisp_tune_plan_lookup(ctx, B, &p2, &found));
    ck_assert_int_eq(found, 1);
    hisp_matrix_destroy(&B);
    /* corrupt file: a miss, then tuned and rewritten */
    char path[1024];
    ck_assert_int_eq(hisp_tune_plan_cache_path(ctx, p.key, path, sizeof path), 0);
    FILE *f = fopen(path, "r+");
    ck_assert_ptr_nonnull(f);
    fseek(f, -5, SEEK_END);
    fputc('x', f);
    fclose(f);
    ck_assert_int_eq(hisp_tune_plan_load(ctx, path, &p2), HISP_ERR_INPUT_FORMAT);
    hisp_error_info e;
    CK_OK(ctx, hisp_context_last_error(ctx, &e));
    ck_assert_int_eq(e.line, 6);
    CK_OK(ctx, hisp_tune_plan_lookup(ctx, A, &p2, &found));
    ck_assert_int_eq(found, 0);
    CK_OK(ctx, hisp_tune(ctx, A, HISP_TUNE_FAST, 1, NULL, NULL, NULL, 0, &count, &p2));
    ck_assert_int_eq(p2.from_cache, 0);
    CK_OK(ctx, hisp_tune_plan_lookup(ctx, A, &p2, &found));
    ck_assert_int_eq(found, 1);
    /* explicit save / load; truncated and edited files refused */
    char mine[300];
    snprintf(mine, sizeof mine, "%s/mine.plan", cache_dir);
    CK_OK(ctx, hisp_tune_plan_save(ctx, &p, mine));
    CK_OK(ctx, hisp_tune_plan_load(ctx, mine, &p2));
    ck_assert(!memcmp(&p2.best, &p.best, sizeof p.best));
    ck_assert_str_eq(p2.key, p.key);
    f = fopen(mine, "w");
    fputs("hisp-plan 1\nkey k\nlayout ELL-SoA-AoS\n", f);
    fclose(f);
    ck_assert_int_eq(hisp_tune_plan_load(ctx, mine, &p2), HISP_ERR_INPUT_FORMAT);
    CK_OK(ctx, hisp_context_last_error(ctx, &e));
    ck_assert_int_eq(e.line, 4);
    f = fopen(mine, "w");
    fputs("hisp-plan 1\nkey k\nlayout BSR-SoA-AoS\nschedule static:1x1\nms 1\ncheck 0\n", f);
    fclose(f);
    ck_assert_int_eq(hisp_tune_plan_load(ctx, mine, &p2), HISP_ERR_INPUT_FORMAT);
    CK_OK(ctx, hisp_context_last_error(ctx, &e));
    ck_assert_int_eq(e.line, 3);
    /* no cache: tuned every time, nothing written */
    CK_OK(ctx, hisp_context_set_option(ctx, "cache_dir", "off"));
    CK_OK(ctx, hisp_tune(ctx, A, HISP_TUNE_FAST, 1, NULL, NULL, NULL, 0, &count, &p2));
    ck_assert_int_eq(p2.from_cache, 0);
    hisp_matrix_destroy(&A);
    test_drop_temp_cache();
    hisp_context_destroy(&ctx);
}
END_TEST

static int progress_calls;
static void on_progress(void *user, int done, int total, const hisp_tune_result *r)
{
    (void)user;
    (void)r;
    ck_assert_int_le(done, total);
    progress_calls++;
}

/* Full search: the product of layouts and schedules; the fast search's
 * best is among the full search's candidates. */
START_TEST(test_full_search)
{
    if (test_kind(_i) == HISP_BACKEND_CUDA && quick()) { /* ~2000 NVRTC builds */
        test_skip("compound full search on %s: not in a quick run", test_label(_i));
        return;
    }
    hisp_context ctx = test_context(_i);
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_generate_compound(ctx, HISP_CGEN_HELMHOLTZ, 12, 5, HISP_C64, &A));
    int cap = 8192, count = 0;
    hisp_tune_result *res = malloc((size_t)cap * sizeof *res);
    hisp_tune_plan p;
    progress_calls = 0;
    CK_OK(ctx, hisp_tune(ctx, A, HISP_TUNE_FULL, 0, on_progress, NULL, res, cap, &count, &p));
    ck_assert_int_eq(progress_calls, count);
    ck_assert_int_ge(count, 32); /* 16 layouts x 2 schedule types x the sizes */
    int layouts[HISP_OUTER_COUNT][2][2] = {{{0}}};
    for (int i = 0; i < count; i++)
        layouts[res[i].v.layout.outer][res[i].v.layout.inner][res[i].v.layout.vec] = 1;
    for (int o = 0; o < HISP_OUTER_COUNT; o++)
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++)
                ck_assert(layouts[o][a][b]);
    hisp_matrix_destroy(&A);
    free(res);
    hisp_context_destroy(&ctx);
}
END_TEST

/* The CUDA variants compile through NVRTC (no GPU needed): every entry
 * arithmetic x outer x inner x vector layout x schedule type, f32 and f64,
 * for sm_90 (the GPU machine) with launch bounds. */
START_TEST(test_nvrtc)
{
#ifdef HISP_HAVE_CUDA
    hisp_context ctx = test_default_context();
    static const int kinds[4][3] = {{0, 1, 1}, {1, 2, 2}, {2, 4, 4}, {3, 9, 3}};
    int n = 0;
    for (int k = 0; k < 4; k++)
        for (int dbl = 0; dbl < 2; dbl++)
            for (int o = 0; o < 3; o++)
                for (int in = 0; in < 2; in++)
                    for (int vs = 0; vs < 2; vs++)
                        for (int dy = 0; dy < 2; dy++) {
                            if (quick() && (in + vs + dy + o) % 3) continue;
                            char opts[400];
                            snprintf(opts, sizeof opts,
                                     "-DVALUE_T=%s -DIS_DOUBLE=%d -DATOM64=0 -DKIND=%d -DEC=%d "
                                     "-DVC=%d -DOUTER=%d -DSLICE=%d -DINNER_SOA=%d -DPTR64=%d "
                                     "-DVEC_SOA=%d -DDYN=%d -DNT=%d -DNB=%d",
                                     dbl ? "double" : "float", dbl, kinds[k][0], kinds[k][1],
                                     kinds[k][2], o, o == 2 ? 16 : 32, in, o == 1, vs, dy,
                                     32 << (o % 3), 1 + in);
                            if (!test_nvrtc_build(ctx, HISPI_PROG_COMPOUND, opts,
                                                  "compound NVRTC builds")) {
                                hisp_context_destroy(&ctx);
                                return;
                            }
                            n++;
                        }
    ck_assert_int_gt(n, 0);
    hisp_context_destroy(&ctx);
#else
    test_skip("compound NVRTC builds: the CUDA backend is not compiled in");
#endif
}
END_TEST

/* hisp tune and hisp spmv --entry on every target. */
START_TEST(test_cli)
{
    const test_target *tt;
    test_targets(&tt);
    if (!test_hisp_bin()) {
        test_skip("compound CLI: the hisp program is not built");
        return;
    }
    const char *b = hisp_backend_name(tt[_i].kind);
    int dev = tt[_i].device;
    use_temp_cache(NULL); /* the hisp program only */
    static char out[1 << 16];
    /* miss, then hit */
    int rc =
        test_run_cli(out, sizeof out,
                     "tune gen:helmholtz:16:3 --entry c64 --backend %s --device %d --json", b, dev);
    ck_assert_msg(rc == 0, "tune: exit %d: %s", rc, out);
    ck_assert(strstr(out, "\"from_cache\": false"));
    ck_assert_int_gt(test_json_int(out, "tried"), 0);
    rc =
        test_run_cli(out, sizeof out,
                     "tune gen:helmholtz:16:4 --entry c64 --backend %s --device %d --json", b, dev);
    ck_assert_int_eq(rc, 0);
    ck_assert_msg(strstr(out, "\"from_cache\": true"), "second tune: %s", out);
    /* table output, save, spmv with the plan file and with auto */
    char plan[300];
    snprintf(plan, sizeof plan, "%s/p.plan", cache_dir);
    rc = test_run_cli(out, sizeof out,
                      "tune gen:qsurface:6 --entry q64 --backend %s --device %d --no-cache "
                      "--save %s --top 3",
                      b, dev, plan);
    ck_assert_msg(rc == 0 && strstr(out, "rank") && strstr(out, "best"), "tune table: exit %d: %s",
                  rc, out);
    rc = test_run_cli(out, sizeof out,
                      "spmv gen:qsurface:6 --entry q64 --backend %s --device %d --plan %s "
                      "--check --json",
                      b, dev, plan);
    ck_assert_msg(rc == 0 && strstr(out, "\"ok\": true"), "spmv --plan: %d %s", rc, out);
    rc = test_run_cli(out, sizeof out,
                      "spmv gen:fem3x3:5 --entry b3x3_f32 --backend %s --device %d --plan auto "
                      "--check --repeat 3",
                      b, dev);
    ck_assert_msg(rc == 0 && strstr(out, "ok"), "spmv --plan auto: %d %s", rc, out);
    rc = test_run_cli(out, sizeof out,
                      "spmv gen:helmholtz:9 --entry c32 --backend %s --device %d --layout "
                      "SELL16-SoA-SoA --schedule dynamic:8x2 --check",
                      b, dev);
    ck_assert_msg(rc == 0 && strstr(out, "SELL16-SoA-SoA dynamic:8x2"), "spmv layout: %d %s", rc,
                  out);
    /* refusals */
    ck_assert_int_eq(test_run_cli(out, sizeof out,
                                  "spmv gen:helmholtz:9 --entry c32 --layout "
                                  "BSR-AoS-AoS"),
                     2);
    ck_assert_int_eq(test_run_cli(out, sizeof out,
                                  "spmv gen:helmholtz:9 --entry c32 --schedule "
                                  "dynamic:8"),
                     2);
    /* the type comes from the generator; two spellings of --type are one too many */
    ck_assert_int_eq(test_run_cli(out, sizeof out, "tune gen:helmholtz:9 --type c64 --entry c64"),
                     1);
    ck_assert_int_eq(test_run_cli(out, sizeof out, "tune gen:helmholtz:9 --entry q32"), 2);
    ck_assert_int_eq(
        test_run_cli(out, sizeof out, "spmv gen:qsurface:4 --entry q32 --plan %s.no", plan), 2);
    test_drop_temp_cache();
}
END_TEST

Suite *suite_compound(void)
{
    Suite *s = suite_create("compound");
    TCase *tc = tcase_create("arith");
    tcase_add_test(tc, test_hamilton);
    tcase_add_test(tc, test_reference);
    tcase_add_test(tc, test_variant_errors);
    tcase_add_test(tc, test_layout_bytes);
    tcase_add_test(tc, test_mtx_roundtrip);
    tcase_add_test(tc, test_mtx_quaternion_and_blocks);
    tcase_add_test(tc, test_generators);
    tcase_add_test(tc, test_elastic3d);
    suite_add_tcase(s, tc);
    TCase *rtc = test_tcase(s, "nvrtc", 1200);
    tcase_add_test(rtc, test_nvrtc);
    int n = test_targets(NULL);
    TCase *dev = test_tcase(s, "variants", 1200);
    tcase_add_loop_test(dev, test_variants, 0, n);
    tcase_add_loop_test(dev, test_variants_generated, 0, n);
    tcase_add_loop_test(dev, test_plan_cache, 0, n);
    if (!quick()) tcase_add_loop_test(dev, test_full_search, 0, n);
    tcase_add_loop_test(dev, test_cli, 0, n);
    return s;
}
