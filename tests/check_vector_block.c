/* A basis's products (hispi_vector_mdot, hispi_vector_bupdate: GMRES's
 * Gram-Schmidt) on every target and the entry types GMRES takes, against
 * sums in double complex computed here: columns as views of one buffer (one
 * kernel where the target has kernels) and as separate vectors (the
 * per-vector calls), right-hand vectors inside the basis and outside. */
#include "hispi.h"
#include "testutil.h"

#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef double complex cplx;

static const hisp_type types[4] = {HISP_F32, HISP_F64, HISP_C32, HISP_C64};

static bool dbl(hisp_type t)
{
    return hispi_type_scalar_size(t) == 8;
}

static cplx get(hisp_type t, const void *a, int64_t i)
{
    int vc = hisp_type_components(t);
    double re = dbl(t) ? ((const double *)a)[i * vc] : ((const float *)a)[i * vc];
    double im = vc == 1  ? 0
                : dbl(t) ? ((const double *)a)[i * vc + 1]
                         : ((const float *)a)[i * vc + 1];
    return CMPLX(re, im);
}

static void set(hisp_type t, void *a, int64_t i, cplx v)
{
    int vc = hisp_type_components(t);
    for (int c = 0; c < vc; c++) {
        double x = c == 0 ? creal(v) : cimag(v);
        if (dbl(t))
            ((double *)a)[i * vc + c] = x;
        else
            ((float *)a)[i * vc + c] = (float)x;
    }
}

static cplx rnd(hisp_type t, uint64_t *st)
{
    double re = test_uniform(st), im = hisp_type_components(t) > 1 ? test_uniform(st) : 0;
    return CMPLX(re, im);
}

/* q + 2 columns of n entries: Q = columns 0..q-1, then two more (the
 * right-hand or updated vectors); as vectors of their own (mode 0), or, on
 * device targets, as views of one vector (1) or parts of one (2: buffers
 * of their own, hispi_vector_part, at 4096-byte strides). */
typedef struct {
    hisp_context ctx;
    hisp_type t;
    int64_t n;
    int q;
    int views;
    hisp_vector all, *col;
    void *host; /* the values, (q + 2) * n entries */
} basis;

static bool basis_init(basis *b, hisp_context ctx, hisp_type t, int64_t n, int q, int views,
                       uint64_t *st)
{
    memset(b, 0, sizeof *b);
    if (views && (!hispi_vec_on_device(ctx) || n == 0)) return false;
    *b = (basis){ctx, t, n, q, views, NULL, NULL, NULL};
    size_t es = hisp_type_size(t), cnt = (size_t)(q + 2) * (size_t)n;
    b->host = malloc(cnt * es + 1);
    b->col = calloc((size_t)q + 2, sizeof *b->col);
    ck_assert(b->host && b->col);
    for (size_t i = 0; i < cnt; i++)
        set(t, b->host, (int64_t)i, rnd(t, st));
    if (views == 1) {
        CK_OK(ctx, hisp_vector_create(ctx, t, (int64_t)cnt, &b->all));
        CK_OK(ctx, hisp_vector_write(b->all, b->host));
        void *buf = NULL;
        CK_OK(ctx, hispi_vector_device(b->all, true, &buf));
        for (int c = 0; c < q + 2; c++)
            CK_OK(ctx, hispi_vector_view(ctx, t, n, buf, c * n, &b->col[c]));
    } else if (views == 2) {
        int64_t per = 4096 / (int64_t)es, stride = (n + per - 1) / per * per;
        CK_OK(ctx, hisp_vector_create(ctx, t, stride * (q + 2), &b->all));
        for (int c = 0; c < q + 2; c++) {
            CK_OK(ctx, hispi_vector_part(b->all, stride * c, n, &b->col[c]));
            CK_OK(ctx, hisp_vector_write(b->col[c], (char *)b->host + (size_t)c * (size_t)n * es));
        }
    } else {
        for (int c = 0; c < q + 2; c++) {
            CK_OK(ctx, hisp_vector_create(ctx, t, n, &b->col[c]));
            CK_OK(ctx, hisp_vector_write(b->col[c], (char *)b->host + (size_t)c * (size_t)n * es));
        }
    }
    return true;
}

static void basis_free(basis *b)
{
    for (int c = 0; b->col && c < b->q + 2; c++)
        hisp_vector_destroy(&b->col[c]);
    hisp_vector_destroy(&b->all);
    free(b->col);
    free(b->host);
}

static cplx hval(const basis *b, int c, int64_t i)
{
    return get(b->t, b->host, (int64_t)c * b->n + i);
}

static double tol(hisp_type t)
{
    return dbl(t) ? 1e-13 : 3e-6;
}

/* dots of Q with R = (column q, column q + 1), or (column 0 .. , the last) */
static void check_mdot(basis *b, int nr, bool inside)
{
    hisp_context ctx = b->ctx;
    int q = b->q;
    int rc[2] = {inside && q > 0 ? q - 1 : q, q + 1};
    hisp_vector R[2] = {b->col[rc[0]], b->col[rc[1]]}, out = NULL;
    int64_t oi = 3;
    CK_OK(ctx, hisp_vector_create(ctx, b->t, oi + 2 * q + 1, &out));
    CK_OK(ctx, hispi_vector_mdot(q, b->col, nr, R, out, oi));
    size_t es = hisp_type_size(b->t);
    void *got = malloc((size_t)(oi + 2 * q + 1) * es);
    ck_assert_ptr_nonnull(got);
    CK_OK(ctx, hisp_vector_read(out, got));
    for (int k = 0; k < nr; k++)
        for (int c = 0; c < q; c++) {
            cplx s = 0;
            double mag = 0;
            for (int64_t i = 0; i < b->n; i++) {
                cplx p = conj(hval(b, c, i)) * hval(b, rc[k], i);
                s += p;
                mag += cabs(p);
            }
            cplx g = get(b->t, got, oi + (int64_t)k * q + c);
            ck_assert_msg(cabs(g - s) <= tol(b->t) * (1 + mag),
                          "mdot %s n %lld q %d views %d nr %d: result (%d, %d) %g%+gi, want "
                          "%g%+gi",
                          hisp_type_name(b->t), (long long)b->n, q, b->views, nr, k, c, creal(g),
                          cimag(g), creal(s), cimag(s));
        }
    free(got);
    hisp_vector_destroy(&out);
}

/* y0 = column q, y1 = column q + 1 (or none); zero a0 / b1 over NaN. */
static void check_bupdate(basis *b, bool two, bool zero_a0, bool zero_b1, uint64_t *st)
{
    hisp_context ctx = b->ctx;
    int q = b->q;
    double *coef = calloc(4 * (2 * (size_t)q + 3), sizeof *coef);
    cplx *cf = calloc(2 * (size_t)q + 3, sizeof *cf);
    ck_assert(coef && cf);
    for (int i = 0; i < 2 * q + 3; i++) {
        cf[i] = rnd(b->t, st);
        if ((i == q && zero_a0) || (i == 2 * q + 2 && zero_b1)) cf[i] = 0;
        coef[4 * i] = creal(cf[i]), coef[4 * i + 1] = cimag(cf[i]);
    }
    size_t es = hisp_type_size(b->t);
    char *nan = malloc((size_t)b->n * es + 1);
    ck_assert_ptr_nonnull(nan);
    for (int64_t i = 0; i < b->n; i++)
        set(b->t, nan, i, CMPLX(NAN, NAN));
    /* the old values a zero coefficient must not read: NaN */
    if (zero_a0 && !two) CK_OK(ctx, hisp_vector_write(b->col[q], nan));
    if (zero_b1 && two) CK_OK(ctx, hisp_vector_write(b->col[q + 1], nan));
    CK_OK(ctx, hispi_vector_bupdate(q, b->col, b->col[q], two ? b->col[q + 1] : NULL, coef));
    char *g0 = malloc((size_t)b->n * es + 1), *g1 = malloc((size_t)b->n * es + 1);
    ck_assert(g0 && g1);
    CK_OK(ctx, hisp_vector_read(b->col[q], g0));
    CK_OK(ctx, hisp_vector_read(b->col[q + 1], g1));
    for (int64_t i = 0; i < b->n; i++) {
        cplx y0 = hval(b, q, i), y1 = hval(b, q + 1, i);
        cplx w0 = zero_a0 ? 0 : y0 * cf[q];
        cplx w1 = (zero_b1 ? 0 : y1 * cf[2 * q + 2]) + y0 * cf[2 * q + 1];
        double m0 = cabs(w0), m1 = cabs(w1);
        for (int c = 0; c < q; c++) {
            w0 += hval(b, c, i) * cf[c], m0 += cabs(hval(b, c, i) * cf[c]);
            w1 += hval(b, c, i) * cf[q + 1 + c], m1 += cabs(hval(b, c, i) * cf[q + 1 + c]);
        }
        cplx h0 = get(b->t, g0, i), h1 = get(b->t, g1, i);
        ck_assert_msg(cabs(h0 - w0) <= tol(b->t) * (1 + m0),
                      "bupdate %s n %lld q %d views %d two %d a0 %d: y0[%lld] %g, want %g",
                      hisp_type_name(b->t), (long long)b->n, q, b->views, two, !zero_a0,
                      (long long)i, creal(h0), creal(w0));
        if (two)
            ck_assert_msg(cabs(h1 - w1) <= tol(b->t) * (1 + m1),
                          "bupdate %s n %lld q %d views %d b1 %d: y1[%lld] %g, want %g",
                          hisp_type_name(b->t), (long long)b->n, q, b->views, !zero_b1,
                          (long long)i, creal(h1), creal(w1));
    }
    free(coef), free(cf), free(nan), free(g0), free(g1);
}

START_TEST(test_basis)
{
    uint64_t st = test_seed() ^ (uint64_t)(_i + 7) * 0x9E3779B97F4A7C15ull;
    hisp_context ctx = test_context(_i);
    static const int64_t sizes[] = {0, 1, 7, 30011};
    static const int qs[] = {0, 1, 3, 16, 17, 33};
    for (int k = 0; k < 4; k++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (size_t iq = 0; iq < sizeof qs / sizeof qs[0]; iq++)
                for (int views = 0; views < 3; views++) {
                    basis b;
                    if (!basis_init(&b, ctx, types[k], sizes[s], qs[iq], views, &st)) continue;
                    for (int nr = 1; nr <= 2; nr++)
                        for (int inside = 0; inside < 2; inside++)
                            check_mdot(&b, nr, inside);
                    /* each update from fresh values: one after another */
                    for (int v = 0; v < 4; v++) {
                        basis_free(&b);
                        ck_assert(basis_init(&b, ctx, types[k], sizes[s], qs[iq], views, &st));
                        check_bupdate(&b, v & 1, v == 2, v == 3, &st);
                    }
                    basis_free(&b);
                }
    hisp_context_destroy(&ctx);
}
END_TEST

/* Updates one after another with nothing read between them and the
 * coefficient array overwritten after each call (the caller may reuse it at
 * return): each sees its own coefficients and the column as the update
 * before left it. */
START_TEST(test_basis_queued)
{
    uint64_t st = test_seed() ^ (uint64_t)(_i + 11) * 0x9E3779B97F4A7C15ull;
    hisp_context ctx = test_context(_i);
    enum { Q = 5, ROUNDS = 20 };
    for (int k = 0; k < 4; k++) {
        basis b;
        hisp_type t = types[k];
        if (!basis_init(&b, ctx, t, 1001, Q, hispi_vec_on_device(ctx), &st)) continue;
        double coef[4 * (2 * Q + 3)];
        cplx *want = calloc((size_t)b.n, sizeof *want), *cf = calloc(2 * Q + 3, sizeof *cf);
        double *mag = calloc((size_t)b.n, sizeof *mag);
        ck_assert(want && cf && mag);
        for (int64_t i = 0; i < b.n; i++)
            want[i] = hval(&b, Q, i), mag[i] = cabs(want[i]);
        for (int r = 0; r < ROUNDS; r++) {
            memset(coef, 0, sizeof coef);
            for (int i = 0; i <= Q; i++) {
                cf[i] = 0.5 * rnd(t, &st);
                coef[4 * i] = creal(cf[i]), coef[4 * i + 1] = cimag(cf[i]);
            }
            CK_OK(ctx, hispi_vector_bupdate(Q, b.col, b.col[Q], NULL, coef));
            for (size_t i = 0; i < sizeof coef / sizeof *coef; i++)
                coef[i] = NAN;
            for (int64_t i = 0; i < b.n; i++) {
                want[i] *= cf[Q], mag[i] *= cabs(cf[Q]);
                for (int c = 0; c < Q; c++)
                    want[i] += hval(&b, c, i) * cf[c], mag[i] += cabs(hval(&b, c, i) * cf[c]);
            }
        }
        size_t es = hisp_type_size(t);
        char *got = malloc((size_t)b.n * es);
        ck_assert_ptr_nonnull(got);
        CK_OK(ctx, hisp_vector_read(b.col[Q], got));
        for (int64_t i = 0; i < b.n; i++)
            ck_assert_msg(cabs(get(t, got, i) - want[i]) <= 4 * tol(t) * (1 + mag[i]),
                          "%s: y[%lld] %g, want %g after %d updates", hisp_type_name(t),
                          (long long)i, creal(get(t, got, i)), creal(want[i]), ROUNDS);
        free(got), free(want), free(cf), free(mag);
        basis_free(&b);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

static const char *last_msg(hisp_context ctx)
{
    static hisp_error_info e;
    CK_OK(ctx, hisp_context_last_error(ctx, &e));
    return e.message;
}

START_TEST(test_basis_errors)
{
    hisp_context ctx = test_context(_i);
    hisp_vector v[3] = {NULL, NULL, NULL}, other = NULL, out = NULL;
    for (int i = 0; i < 3; i++)
        CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, 10, &v[i]));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, 11, &other));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, 4, &out));
    double coef[4 * 7] = {0};
    hisp_vector R[2] = {v[2], other};
    ck_assert_int_eq(hispi_vector_mdot(2, v, 2, R, out, 0), HISP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(last_msg(ctx), "length"));
    R[1] = v[2];
    ck_assert_int_eq(hispi_vector_mdot(2, v, 2, R, out, 1), HISP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(last_msg(ctx), "do not fit"));
    ck_assert_int_eq(hispi_vector_mdot(2, v, 3, R, out, 0), HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hispi_vector_bupdate(2, v, v[1], NULL, coef), HISP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(last_msg(ctx), "not columns"));
    ck_assert_int_eq(hispi_vector_bupdate(1, v, v[2], v[2], coef), HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hispi_vector_bupdate(1, v, other, NULL, coef), HISP_ERR_INVALID_ARGUMENT);
    for (int i = 0; i < 3; i++)
        hisp_vector_destroy(&v[i]);
    hisp_vector_destroy(&other);
    hisp_vector_destroy(&out);
    hisp_context_destroy(&ctx);
}
END_TEST

Suite *suite_vector_block(void)
{
    Suite *s = suite_create("vector_block");
    int n = test_targets(NULL);
    TCase *tc = test_tcase(s, "targets", 1200);
    tcase_add_loop_test(tc, test_basis, 0, n);
    tcase_add_loop_test(tc, test_basis_queued, 0, n);
    tcase_add_loop_test(tc, test_basis_errors, 0, n);
    return s;
}
