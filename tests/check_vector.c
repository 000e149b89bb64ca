/* Vector algebra (hisp.h "vector algebra") on every target and entry type,
 * against the core reference loops (core/vector/vector_ref.c). */
#include "hispi.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HISP_HAVE_CUDA
#include "backend/backend.h" /* HISPI_PROG_* */
#endif

static const hisp_type types[6] = {HISP_F32, HISP_F64, HISP_C32, HISP_C64, HISP_Q32, HISP_Q64};

static bool dbl(hisp_type t)
{
    return hispi_type_scalar_size(t) == 8;
}

static double get(hisp_type t, const void *a, int64_t i)
{
    return dbl(t) ? ((const double *)a)[i] : ((const float *)a)[i];
}

static void set(hisp_type t, void *a, int64_t i, double v)
{
    if (dbl(t))
        ((double *)a)[i] = v;
    else
        ((float *)a)[i] = (float)v;
}

/* n entries of t: uniform in [-1, 1), or bounded away from 0 (|v| in
 * [0.5, 1)) so that they can divide */
static void *rand_entries(hisp_type t, int64_t n, bool away, uint64_t *st)
{
    int vc = hisp_type_components(t);
    void *a = malloc((size_t)(n * vc + 1) * hispi_type_scalar_size(t));
    ck_assert_ptr_nonnull(a);
    for (int64_t i = 0; i < n * vc; i++) {
        double u = test_uniform(st);
        set(t, a, i, away ? (u < 0 ? -0.5 + 0.5 * u : 0.5 + 0.5 * u) : u);
    }
    return a;
}

/* count scalars of type t (its components) within tol * (1 + |want|) */
static void expect_close(hisp_type t, const void *got, const void *want, int64_t count, double tol,
                         const char *what)
{
    for (int64_t i = 0; i < count; i++) {
        double g = get(t, got, i), w = get(t, want, i);
        if (isnan(w)) {
            ck_assert_msg(isnan(g), "%s (%s) scalar %lld: %g, want NaN", what, hisp_type_name(t),
                          (long long)i, g);
        } else if (isinf(w)) {
            ck_assert_msg(g == w, "%s (%s) scalar %lld: %g, want %g", what, hisp_type_name(t),
                          (long long)i, g, w);
        } else {
            ck_assert_msg(fabs(g - w) <= tol * (1 + fabs(w)),
                          "%s (%s) scalar %lld: %.17g, want %.17g", what, hisp_type_name(t),
                          (long long)i, g, w);
        }
    }
}

static double tol_of(hisp_type t)
{
    return dbl(t) ? 1e-12 : 2e-5;
}

/* a reduction over n entries: both sides sum in double (in another order)
 * and round once; the fused forms' summands are computed in the entry type,
 * where the kernels may round differently (contracted multiply-adds): f32
 * sums then differ by about sqrt(n) rounding errors of the summands */
static double tol_red(hisp_type t, int64_t n)
{
    return dbl(t) ? 1e-15 * (double)(n + 1) : 5e-7 + 1e-6 * sqrt((double)(n + 1));
}

typedef struct {
    hisp_context ctx;
    hisp_type t;
    int64_t n;
    size_t es;
    void *hx, *hy, *hw, *hs;   /* host inputs (hy away from 0: it divides) */
    void *e1, *e2, *g1, *g2;   /* expected and read-back buffers */
    hisp_vector x, y, w, z, s; /* s: 4 scalar entries */
    hisp_vector r, rr;         /* results: 4 entries of t, 4 reals */
} fixture;

static void fx_init(fixture *f, hisp_context ctx, hisp_type t, int64_t n, uint64_t *st)
{
    memset(f, 0, sizeof *f);
    f->ctx = ctx;
    f->t = t;
    f->n = n;
    f->es = hisp_type_size(t);
    f->hx = rand_entries(t, n, false, st);
    f->hy = rand_entries(t, n, true, st);
    f->hw = rand_entries(t, n, false, st);
    f->hs = rand_entries(t, 4, true, st);
    size_t b = (size_t)(n + 4) * f->es;
    f->e1 = malloc(b), f->e2 = malloc(b), f->g1 = malloc(b), f->g2 = malloc(b);
    ck_assert(f->e1 && f->e2 && f->g1 && f->g2);
    CK_OK(ctx, hisp_vector_create(ctx, t, n, &f->x));
    CK_OK(ctx, hisp_vector_create(ctx, t, n, &f->y));
    CK_OK(ctx, hisp_vector_create(ctx, t, n, &f->w));
    CK_OK(ctx, hisp_vector_create(ctx, t, n, &f->z));
    CK_OK(ctx, hisp_vector_create(ctx, t, 4, &f->s));
    CK_OK(ctx, hisp_vector_create(ctx, t, 4, &f->r));
    CK_OK(ctx, hisp_vector_create(ctx, dbl(t) ? HISP_F64 : HISP_F32, 4, &f->rr));
}

static void fx_free(fixture *f)
{
    hisp_vector *v[] = {&f->x, &f->y, &f->w, &f->z, &f->s, &f->r, &f->rr};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        hisp_vector_destroy(v[i]);
    free(f->hx), free(f->hy), free(f->hw), free(f->hs);
    free(f->e1), free(f->e2), free(f->g1), free(f->g2);
}

/* every operand back to its host values (the device copies go stale) */
static void fx_reset(fixture *f)
{
    CK_OK(f->ctx, hisp_vector_write(f->x, f->hx));
    CK_OK(f->ctx, hisp_vector_write(f->y, f->hy));
    CK_OK(f->ctx, hisp_vector_write(f->w, f->hw));
    CK_OK(f->ctx, hisp_vector_write(f->z, f->hw));
    CK_OK(f->ctx, hisp_vector_write(f->s, f->hs));
    CK_OK(f->ctx, hisp_vector_fill(f->r, hisp_scalar_host(f->hs)));
    double one = 1;
    float onef = 1;
    CK_OK(f->ctx, hisp_vector_fill(f->rr, hisp_scalar_host(dbl(f->t) ? (void *)&one : &onef)));
}

static void expect_vec(fixture *f, hisp_vector v, const void *want, const char *what)
{
    CK_OK(f->ctx, hisp_vector_read(v, f->g1));
    expect_close(f->t, f->g1, want, f->n * hisp_type_components(f->t), tol_of(f->t), what);
}

/* a reduction's components within tolerance of the whole result's size: the
 * imaginary parts of dot(y, y) are 0 in exact arithmetic and rounding noise
 * of the order of |y|^2 in any summation order */
static void expect_red(fixture *f, const void *got, const void *want, int comps, const char *what)
{
    double scale = 0;
    for (int c = 0; c < comps; c++) {
        double w = fabs(get(f->t, want, c));
        if (isfinite(w) && w > scale) scale = w;
    }
    expect_close(f->t, got, want, comps, tol_red(f->t, f->n) * (1 + scale), what);
}

static const void *sent(fixture *f, int i)
{
    return (const char *)f->hs + (size_t)i * f->es;
}

/* The ops of one (target, type, length), each against the reference. */
static void check_ops(hisp_context ctx, hisp_type t, int64_t n, uint64_t *st)
{
    fixture F, *f = &F;
    fx_init(f, ctx, t, n, st);
    int vc = hisp_type_components(t);
    int64_t cnt = n * vc;
    size_t es = f->es, vb = (size_t)n * es;
    unsigned char a[32], b[32], c[32], r1[32], r2[32], g[32], g2[32];
    char what[96];
    snprintf(what, sizeof what, "n=%lld", (long long)n);

    /* fill: host value (exact), then -(s0 * s1^-1) read on the device */
    fx_reset(f);
    CK_OK(ctx, hisp_vector_fill(f->y, hisp_scalar_host(sent(f, 2))));
    hispi_vref_fill(t, n, sent(f, 2), f->e1);
    CK_OK(ctx, hisp_vector_read(f->y, f->g1));
    ck_assert(memcmp(f->g1, f->e1, vb) == 0);
    CK_OK(ctx, hisp_vector_fill(f->y, hisp_scalar_ratio(f->s, 0, f->s, 1, 1)));
    hispi_vref_scalar(t, sent(f, 0), sent(f, 1), 1, a);
    hispi_vref_fill(t, n, a, f->e1);
    expect_vec(f, f->y, f->e1, "fill ratio");

    /* copy (exact), scale by a device entry */
    fx_reset(f);
    CK_OK(ctx, hisp_vector_copy(f->x, f->y));
    CK_OK(ctx, hisp_vector_read(f->y, f->g1));
    ck_assert(vb == 0 || memcmp(f->g1, f->hx, vb) == 0);
    CK_OK(ctx, hisp_vector_scale(f->y, hisp_scalar_entry(f->s, 2)));
    memcpy(f->e1, f->hx, vb);
    hispi_vref_scale(t, n, sent(f, 2), f->e1);
    expect_vec(f, f->y, f->e1, "scale entry");

    /* axpby: host a, b = -(s0 * s1^-1) on the device */
    fx_reset(f);
    CK_OK(ctx, hisp_vector_axpby(hisp_scalar_host(sent(f, 3)), f->x,
                                 hisp_scalar_ratio(f->s, 0, f->s, 1, 1), f->y));
    hispi_vref_scalar(t, sent(f, 0), sent(f, 1), 1, b);
    memcpy(f->e1, f->hy, vb);
    hispi_vref_axpbypcz(t, n, sent(f, 3), f->hx, NULL, NULL, b, f->e1);
    expect_vec(f, f->y, f->e1, "axpby");
    /* b = 0: y is not read (NaN there does not spread) */
    if (n) {
        memset(b, 0, sizeof b);
        for (int64_t i = 0; i < cnt; i++)
            set(t, f->e2, i, NAN);
        CK_OK(ctx, hisp_vector_write(f->y, f->e2));
        CK_OK(ctx,
              hisp_vector_axpby(hisp_scalar_host(sent(f, 3)), f->x, hisp_scalar_host(b), f->y));
        hispi_vref_axpbypcz(t, n, sent(f, 3), f->hx, NULL, NULL, b, f->e2);
        for (int64_t i = 0; i < cnt; i++)
            ck_assert(!isnan(get(t, f->e2, i)));
        expect_vec(f, f->y, f->e2, "axpby b=0");
    }

    /* axpbypcz: a an entry, b host, c a ratio */
    fx_reset(f);
    CK_OK(ctx, hisp_vector_axpbypcz(hisp_scalar_entry(f->s, 3), f->x, hisp_scalar_host(sent(f, 1)),
                                    f->y, hisp_scalar_ratio(f->s, 2, f->s, 0, 0), f->z));
    hispi_vref_scalar(t, sent(f, 2), sent(f, 0), 0, c);
    memcpy(f->e1, f->hw, vb);
    hispi_vref_axpbypcz(t, n, sent(f, 3), f->hx, sent(f, 1), f->hy, c, f->e1);
    expect_vec(f, f->z, f->e1, "axpbypcz");

    /* mul, div; mul into x itself */
    fx_reset(f);
    CK_OK(ctx, hisp_vector_mul(f->x, f->y, f->z));
    hispi_vref_mul(t, n, f->hx, f->hy, f->e1);
    expect_vec(f, f->z, f->e1, "mul");
    CK_OK(ctx, hisp_vector_div(f->x, f->y, f->z));
    hispi_vref_div(t, n, f->hx, f->hy, f->e1);
    expect_vec(f, f->z, f->e1, "div");
    CK_OK(ctx, hisp_vector_mul(f->x, f->y, f->x));
    hispi_vref_mul(t, n, f->hx, f->hy, f->e1);
    expect_vec(f, f->x, f->e1, "mul in place");

    /* dot to the host and to entry 1 of r (the other entries kept) */
    fx_reset(f);
    CK_OK(ctx, hisp_vector_dot(f->x, f->y, hisp_result_host(g)));
    hispi_vref_dot(t, n, f->hx, f->hy, r1);
    expect_red(f, g, r1, vc, "dot host");
    CK_OK(ctx, hisp_vector_dot(f->w, f->y, hisp_result_entry(f->r, 1)));
    hispi_vref_dot(t, n, f->hw, f->hy, r2);
    CK_OK(ctx, hisp_vector_read(f->r, f->g2));
    expect_red(f, (char *)f->g2 + es, r2, vc, "dot entry");
    ck_assert(memcmp(f->g2, f->hs, es) == 0);
    ck_assert(memcmp((char *)f->g2 + 2 * es, f->hs, es) == 0);

    /* nrm2 to the host and to a real vector */
    size_t rs = hispi_type_scalar_size(t);
    CK_OK(ctx, hisp_vector_nrm2(f->x, hisp_result_host(g)));
    hispi_vref_nrm2(t, n, f->hx, r1);
    expect_red(f, g, r1, 1, "nrm2 host");
    CK_OK(ctx, hisp_vector_nrm2(f->y, hisp_result_entry(f->rr, 3)));
    hispi_vref_nrm2(t, n, f->hy, r2);
    CK_OK(ctx, hisp_vector_read(f->rr, f->g2));
    expect_red(f, (char *)f->g2 + 3 * rs, r2, 1, "nrm2 entry");
    ck_assert(get(t, f->g2, 0) == 1.0);

    /* axpby_dot: with w, and w NULL (r = ||y||^2); b a device entry */
    fx_reset(f);
    CK_OK(ctx, hisp_vector_axpby_dot(hisp_scalar_host(sent(f, 0)), f->x, hisp_scalar_entry(f->s, 1),
                                     f->y, f->w, hisp_result_host(g)));
    memcpy(f->e1, f->hy, vb);
    hispi_vref_axpby_dot(t, n, sent(f, 0), f->hx, sent(f, 1), f->e1, f->hw, r1);
    expect_vec(f, f->y, f->e1, "axpby_dot y");
    expect_red(f, g, r1, vc, "axpby_dot r");
    CK_OK(ctx, hisp_vector_axpby_dot(hisp_scalar_ratio(f->s, 2, f->s, 3, 1), f->x,
                                     hisp_scalar_host(sent(f, 1)), f->y, NULL,
                                     hisp_result_entry(f->r, 0)));
    hispi_vref_scalar(t, sent(f, 2), sent(f, 3), 1, a);
    hispi_vref_axpby_dot(t, n, a, f->hx, sent(f, 1), f->e1, NULL, r2);
    expect_vec(f, f->y, f->e1, "axpby_dot y (w = y)");
    CK_OK(ctx, hisp_vector_read(f->r, f->g2));
    expect_red(f, f->g2, r2, vc, "axpby_dot r (w = y)");

    /* dot2: r0 to the host, r1 to an entry */
    fx_reset(f);
    CK_OK(ctx, hisp_vector_dot2(f->x, f->y, f->w, hisp_result_host(g), hisp_result_entry(f->r, 3)));
    hispi_vref_dot2(t, n, f->hx, f->hy, f->hw, r1, r2);
    expect_red(f, g, r1, vc, "dot2 r0");
    CK_OK(ctx, hisp_vector_read(f->r, f->g2));
    expect_red(f, (char *)f->g2 + 3 * es, r2, vc, "dot2 r1");
    CK_OK(ctx, hisp_vector_dot2(f->x, f->y, f->w, hisp_result_host(g), hisp_result_host(g2)));
    expect_red(f, g, r1, vc, "dot2 r0 host");
    expect_red(f, g2, r2, vc, "dot2 r1 host");

    /* div_dot */
    fx_reset(f);
    CK_OK(ctx, hisp_vector_div_dot(f->x, f->y, f->z, hisp_result_host(g)));
    hispi_vref_div_dot(t, n, f->hx, f->hy, f->e1, r1);
    expect_vec(f, f->z, f->e1, "div_dot z");
    expect_red(f, g, r1, vc, "div_dot r");

    /* axpby_div_dot2 (Jacobi-CG's update): a an entry, z = w^-1 y, r0 to
     * the host, r1 to an entry */
    fx_reset(f);
    CK_OK(ctx, hispi_vector_axpby_div_dot2(hisp_scalar_entry(f->s, 2), f->x,
                                           hisp_scalar_host(sent(f, 1)), f->y, f->w, f->z,
                                           hisp_result_host(g), hisp_result_entry(f->r, 2)));
    memcpy(f->e1, f->hy, vb);
    hispi_vref_axpby_div_dot2(t, n, sent(f, 2), f->hx, sent(f, 1), f->e1, f->hw, f->e2, r1, r2);
    expect_vec(f, f->y, f->e1, "axpby_div_dot2 y");
    expect_vec(f, f->z, f->e2, "axpby_div_dot2 z");
    expect_red(f, g, r1, vc, "axpby_div_dot2 r0");
    CK_OK(ctx, hisp_vector_read(f->r, f->g2));
    expect_red(f, (char *)f->g2 + 2 * es, r2, vc, "axpby_div_dot2 r1");

    /* axpby_dot2_acc (BiCGSTAB's x and r): X (z) += P*p + S*q before the
     * update; S a vector of its own, then S = y (read before y changes);
     * expected from the separate loops */
    hisp_vector vP = NULL, vS = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, t, n, &vP));
    CK_OK(ctx, hisp_vector_create(ctx, t, n, &vS));
    void *hP = malloc(vb ? vb : 1), *hS = malloc(vb ? vb : 1), *ex = malloc(vb ? vb : 1);
    ck_assert(hP && hS && ex);
    memcpy(hP, f->hw, vb);
    memcpy(hS, f->hx, vb);
    for (int same = 0; same < 2; same++) {
        fx_reset(f);
        CK_OK(ctx, hisp_vector_write(vP, hP));
        CK_OK(ctx, hisp_vector_write(vS, hS));
        hisp_vector vs = same ? f->y : vS;
        CK_OK(ctx, hispi_vector_axpby_dot2_acc(
                       hisp_scalar_entry(f->s, 3), vP, hisp_scalar_host(sent(f, 0)), vs, f->z,
                       hisp_scalar_entry(f->s, 2), f->x, hisp_scalar_host(sent(f, 1)), f->y, f->w,
                       hisp_result_host(g), hisp_result_entry(f->r, 1)));
        const double one[4] = {1};
        const float onef[4] = {1};
        memcpy(ex, f->hw, vb); /* z's start */
        hispi_vref_axpbypcz(t, n, sent(f, 3), hP, sent(f, 0), same ? f->hy : hS,
                            dbl(t) ? (const void *)one : (const void *)onef, ex);
        memcpy(f->e1, f->hy, vb);
        hispi_vref_axpby_dot(t, n, sent(f, 2), f->hx, sent(f, 1), f->e1, NULL, r1);
        hispi_vref_dot(t, n, f->hw, f->e1, r2);
        expect_vec(f, f->z, ex, same ? "axpby_dot2_acc X (vS = y)" : "axpby_dot2_acc X");
        expect_vec(f, f->y, f->e1, "axpby_dot2_acc y");
        expect_red(f, g, r1, vc, "axpby_dot2_acc r0");
        CK_OK(ctx, hisp_vector_read(f->r, f->g2));
        expect_red(f, (char *)f->g2 + es, r2, vc, "axpby_dot2_acc r1");
    }
    ck_assert_int_eq(hispi_vector_axpby_dot2_acc(
                         hisp_scalar_host(sent(f, 0)), vP, hisp_scalar_host(sent(f, 0)), vS, vP,
                         hisp_scalar_host(sent(f, 1)), f->x, hisp_scalar_host(sent(f, 1)), f->y,
                         f->w, hisp_result_host(g), hisp_result_host(g2)),
                     HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hispi_vector_axpby_dot2_acc(
                         hisp_scalar_host(sent(f, 0)), vP, hisp_scalar_host(sent(f, 0)), vS, f->z,
                         hisp_scalar_host(sent(f, 1)), f->y, hisp_scalar_host(sent(f, 1)), f->y,
                         f->w, hisp_result_host(g), hisp_result_host(g2)),
                     HISP_ERR_INVALID_ARGUMENT);
    hisp_vector_destroy(&vP);
    hisp_vector_destroy(&vS);
    free(hP), free(hS), free(ex);

    /* a scalar read from the vector the call writes: y = y*y[1] */
    if (n > 1) {
        fx_reset(f);
        CK_OK(ctx, hisp_vector_scale(f->y, hisp_scalar_entry(f->y, 1)));
        memcpy(f->e1, f->hy, vb);
        hispi_vref_scale(t, n, (const char *)f->hy + es, f->e1);
        expect_vec(f, f->y, f->e1, "scale by own entry");
    }
    fx_free(f);
}

START_TEST(test_ops)
{
    uint64_t st = test_seed() ^ (uint64_t)(_i + 1) * 0x9E3779B97F4A7C15ull;
    hisp_context ctx = test_context(_i);
    static const int64_t sizes[] = {0, 1, 7, 100003};
    for (int k = 0; k < 6; k++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            check_ops(ctx, types[k], sizes[s], &st);
    hisp_context_destroy(&ctx);
}
END_TEST

/* NaN and Inf in the operands spread as in the reference loops. */
START_TEST(test_nan_inf)
{
    uint64_t st = test_seed() ^ 0x5151u;
    hisp_context ctx = test_context(_i);
    for (int k = 0; k < 6; k++) {
        hisp_type t = types[k];
        fixture F, *f = &F;
        int64_t n = 5000;
        fx_init(f, ctx, t, n, &st);
        set(t, f->hx, 3, NAN);
        set(t, f->hx, 2 * hisp_type_components(t) + 2, INFINITY);
        set(t, f->hy, 4000, -INFINITY);
        size_t vb = (size_t)n * f->es;
        unsigned char g[32], r[32];
        fx_reset(f);
        CK_OK(ctx,
              hisp_vector_axpby(hisp_scalar_host(f->hs), f->x, hisp_scalar_entry(f->s, 1), f->y));
        memcpy(f->e1, f->hy, vb);
        hispi_vref_axpbypcz(t, n, f->hs, f->hx, NULL, NULL, (char *)f->hs + f->es, f->e1);
        expect_vec(f, f->y, f->e1, "axpby NaN/Inf");
        CK_OK(ctx, hisp_vector_div(f->y, f->x, f->z));
        hispi_vref_div(t, n, f->e1, f->hx, f->e2);
        expect_vec(f, f->z, f->e2, "div NaN/Inf");
        fx_reset(f);
        CK_OK(ctx, hisp_vector_dot(f->x, f->y, hisp_result_host(g)));
        hispi_vref_dot(t, n, f->hx, f->hy, r);
        expect_red(f, g, r, hisp_type_components(t), "dot NaN/Inf");
        ck_assert(isnan(get(t, g, 0)));
        CK_OK(ctx, hisp_vector_nrm2(f->y, hisp_result_host(g)));
        ck_assert(isinf(get(t, g, 0)));
        fx_free(f);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* The vectors of a b3x3 matrix: f32/f64 of 3 scalars per block. */
START_TEST(test_b3x3)
{
    uint64_t st = test_seed() ^ 0xb3b3u;
    hisp_context ctx = test_context(_i);
    for (int p = 0; p < 2; p++) {
        hisp_type mt = p ? HISP_B3X3_F64 : HISP_B3X3_F32, vt;
        int per = 0;
        CK_OK(ctx, hisp_compound_vector_type(mt, &vt, &per));
        ck_assert_int_eq(per, 3);
        fixture F, *f = &F;
        fx_init(f, ctx, vt, 3 * 1001, &st);
        fx_reset(f);
        unsigned char g[32], r[32];
        CK_OK(ctx, hisp_vector_axpby_dot(hisp_scalar_host(f->hs), f->x, hisp_scalar_entry(f->s, 1),
                                         f->y, f->w, hisp_result_host(g)));
        memcpy(f->e1, f->hy, (size_t)f->n * f->es);
        hispi_vref_axpby_dot(vt, f->n, f->hs, f->hx, (char *)f->hs + f->es, f->e1, f->hw, r);
        expect_vec(f, f->y, f->e1, "b3x3 axpby_dot y");
        expect_red(f, g, r, 1, "b3x3 axpby_dot r");
        fx_free(f);
        /* a vector typed b3x3 itself is refused */
        hisp_vector B = NULL;
        CK_OK(ctx, hisp_vector_create(ctx, mt, 4, &B));
        double one[9] = {1};
        ck_assert_int_eq(hisp_vector_fill(B, hisp_scalar_host(one)), HISP_ERR_UNSUPPORTED);
        hisp_vector_destroy(&B);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

static void expect_unchanged(hisp_context ctx, hisp_vector v, const void *want, size_t bytes)
{
    void *g = malloc(bytes + 1);
    CK_OK(ctx, hisp_vector_read(v, g));
    ck_assert(memcmp(g, want, bytes) == 0);
    free(g);
}

#define EXPECT_INVALID(expr)                                                                       \
    do {                                                                                           \
        hisp_status s_ = (expr);                                                                   \
        ck_assert_msg(s_ == HISP_ERR_INVALID_ARGUMENT, "%s gave %s", #expr,                        \
                      hisp_status_string(s_));                                                     \
    } while (0)
#define EXPECT_HANDLE(expr)                                                                        \
    do {                                                                                           \
        hisp_status s_ = (expr);                                                                   \
        ck_assert_msg(s_ == HISP_ERR_INVALID_HANDLE, "%s gave %s", #expr, hisp_status_string(s_)); \
    } while (0)

/* Every mismatch is INVALID_ARGUMENT (a NULL vector INVALID_HANDLE) with the
 * operands untouched. */
START_TEST(test_errors)
{
    uint64_t st = test_seed() ^ 0xe77u;
    hisp_context ctx = test_context(_i), other = NULL;
    ck_assert_int_eq(hisp_context_create(&other), 0);
    int64_t n = 100;
    void *hx = rand_entries(HISP_C64, n, false, &st), *hy = rand_entries(HISP_C64, n, true, &st);
    void *hf = rand_entries(HISP_F64, n + 1, false, &st);
    hisp_vector x, y, f64, f64n1, c32, xo, r, rr;
    CK_OK(ctx, hisp_vector_create(ctx, HISP_C64, n, &x));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_C64, n, &y));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, n, &f64));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, n + 1, &f64n1));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_C32, n, &c32));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_C64, 2, &r));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, 2, &rr));
    CK_OK(other, hisp_vector_create(other, HISP_C64, n, &xo));
    CK_OK(ctx, hisp_vector_write(x, hx));
    CK_OK(ctx, hisp_vector_write(y, hy));
    CK_OK(ctx, hisp_vector_write(f64, hf));
    CK_OK(ctx, hisp_vector_write(f64n1, hf));
    double two[2] = {2, 0}, res[4];
    hisp_scalar a = hisp_scalar_host(two);
    size_t vb = (size_t)n * 16;
    /* put x and y on the device first: an error must not touch either copy */
    CK_OK(ctx, hisp_vector_axpby(a, x, a, y));
    CK_OK(ctx, hisp_vector_read(y, hy));

    EXPECT_INVALID(hisp_vector_axpby(a, x, a, c32));                 /* type */
    EXPECT_INVALID(hisp_vector_axpby(a, f64, a, f64n1));             /* length */
    EXPECT_INVALID(hisp_vector_axpby(a, xo, a, y));                  /* context */
    EXPECT_INVALID(hisp_vector_dot(x, y, hisp_result_entry(rr, 0))); /* result type */
    EXPECT_INVALID(hisp_vector_nrm2(x, hisp_result_entry(r, 0)));    /* nrm2's is real */
    EXPECT_INVALID(hisp_vector_dot(x, y, hisp_result_entry(r, 2)));  /* index */
    EXPECT_INVALID(hisp_vector_dot(x, y, hisp_result_entry(r, -1)));
    EXPECT_INVALID(hisp_vector_axpby(hisp_scalar_entry(x, n), x, a, y));   /* scalar index */
    EXPECT_INVALID(hisp_vector_axpby(hisp_scalar_entry(f64, 0), x, a, y)); /* scalar type */
    EXPECT_INVALID(hisp_vector_axpby(hisp_scalar_ratio(x, 0, xo, 0, 0), x, a, y));
    EXPECT_INVALID(hisp_vector_axpby(hisp_scalar_ratio(x, 0, f64, 0, 0), x, a, y));
    EXPECT_INVALID(hisp_vector_axpby(a, x, hisp_scalar_host(NULL), y)); /* NULLs */
    EXPECT_HANDLE(hisp_vector_axpby(a, NULL, a, y));
    EXPECT_HANDLE(hisp_vector_axpby(a, x, a, NULL));
    EXPECT_HANDLE(hisp_vector_fill(NULL, a));
    EXPECT_INVALID(hisp_vector_dot(x, y, hisp_result_host(NULL)));
    EXPECT_HANDLE(hisp_vector_dot2(x, y, NULL, hisp_result_host(res), hisp_result_host(res)));
    EXPECT_INVALID(hisp_vector_div_dot(x, y, c32, hisp_result_host(res)));
    EXPECT_INVALID(hisp_vector_axpby_dot(a, x, a, y, f64, hisp_result_host(res)));
    EXPECT_INVALID(hisp_vector_axpbypcz(a, x, a, y, a, f64));
    EXPECT_INVALID(hisp_vector_mul(x, y, xo));
    EXPECT_INVALID(hisp_vector_copy(x, f64));
    hisp_error_info e;
    CK_OK(ctx, hisp_context_last_error(ctx, &e));
    ck_assert_ptr_nonnull(strstr(e.message, "hisp_vector_copy"));
    ck_assert_ptr_nonnull(strstr(e.message, "c64"));
    ck_assert_ptr_nonnull(strstr(e.message, "f64"));
    expect_unchanged(ctx, y, hy, vb);
    CK_OK(ctx, hisp_vector_axpby(a, x, hisp_scalar_host(two), y)); /* still usable */

    hisp_vector_destroy(&x);
    hisp_vector_destroy(&y);
    hisp_vector_destroy(&f64);
    hisp_vector_destroy(&f64n1);
    hisp_vector_destroy(&c32);
    hisp_vector_destroy(&r);
    hisp_vector_destroy(&rr);
    hisp_vector_destroy(&xo);
    free(hx), free(hy), free(hf);
    hisp_context_destroy(&other);
    hisp_context_destroy(&ctx);
}
END_TEST

/* A Krylov-like chain with device scalars and results: once the vectors
 * are on the device, nothing moves between host and device; the values
 * equal the same chain on the reference backend. */
static void run_chain(hisp_context ctx, hisp_type t, int64_t n, const void *hx, const void *hy,
                      const void *hs, void *out, void *rout, hisp_transfer_stats *xf)
{
    hisp_vector x, y, p, d, s, r, rr;
    CK_OK(ctx, hisp_vector_create(ctx, t, n, &x));
    CK_OK(ctx, hisp_vector_create(ctx, t, n, &y));
    CK_OK(ctx, hisp_vector_create(ctx, t, n, &p));
    CK_OK(ctx, hisp_vector_create(ctx, t, n, &d));
    CK_OK(ctx, hisp_vector_create(ctx, t, 4, &s));
    CK_OK(ctx, hisp_vector_create(ctx, t, 4, &r));
    CK_OK(ctx, hisp_vector_create(ctx, dbl(t) ? HISP_F64 : HISP_F32, 2, &rr));
    CK_OK(ctx, hisp_vector_write(x, hx));
    CK_OK(ctx, hisp_vector_write(y, hy));
    CK_OK(ctx, hisp_vector_write(d, hy));
    CK_OK(ctx, hisp_vector_write(s, hs));
    /* first touch: every vector to the device */
    CK_OK(ctx, hisp_vector_copy(x, p));
    CK_OK(ctx, hisp_vector_dot(y, d, hisp_result_entry(r, 0)));
    CK_OK(ctx, hisp_vector_nrm2(s, hisp_result_entry(rr, 0)));
    CK_OK(ctx, hisp_context_synchronize(ctx));
    CK_OK(ctx, hisp_context_reset_transfers(ctx));
    for (int it = 0; it < 3; it++) {
        CK_OK(ctx, hisp_vector_dot(x, y, hisp_result_entry(r, 0)));
        CK_OK(ctx, hisp_vector_dot2(p, y, x, hisp_result_entry(r, 1), hisp_result_entry(r, 2)));
        /* y = -p*(r0/r1) + y*s0 */
        CK_OK(ctx,
              hisp_vector_axpby(hisp_scalar_ratio(r, 0, r, 1, 1), p, hisp_scalar_entry(s, 0), y));
        /* x = y*(r2/r0) - x*(s2/s3), r3 = ||x||^2 */
        CK_OK(ctx, hisp_vector_axpby_dot(hisp_scalar_ratio(r, 2, r, 0, 0), y,
                                         hisp_scalar_ratio(s, 2, s, 3, 1), x, NULL,
                                         hisp_result_entry(r, 3)));
        CK_OK(ctx, hisp_vector_nrm2(x, hisp_result_entry(rr, 1)));
        /* p = d^-1 x, r1 = dot(x, p) */
        CK_OK(ctx, hisp_vector_div_dot(x, d, p, hisp_result_entry(r, 1)));
        CK_OK(ctx,
              hisp_vector_axpbypcz(hisp_scalar_entry(s, 1), x, hisp_scalar_ratio(r, 1, r, 3, 0), y,
                                   hisp_scalar_entry(s, 0), p));
        CK_OK(ctx, hisp_vector_scale(x, hisp_scalar_ratio(r, 1, r, 3, 0)));
        CK_OK(ctx, hisp_vector_fill(s, hisp_scalar_entry(s, it))); /* reads what it writes */
    }
    CK_OK(ctx, hisp_context_synchronize(ctx));
    CK_OK(ctx, hisp_context_transfers(ctx, xf));
    CK_OK(ctx, hisp_vector_read(p, out));
    CK_OK(ctx, hisp_vector_read(r, rout));
    hisp_vector_destroy(&x);
    hisp_vector_destroy(&y);
    hisp_vector_destroy(&p);
    hisp_vector_destroy(&d);
    hisp_vector_destroy(&s);
    hisp_vector_destroy(&r);
    hisp_vector_destroy(&rr);
}

START_TEST(test_no_transfers)
{
    if (test_kind(_i) == HISP_BACKEND_REFERENCE) return; /* nothing to move there */
    uint64_t st = test_seed() ^ 0xc4a1u;
    hisp_context ctx = test_context(_i), ref = NULL;
    ck_assert_int_eq(hisp_context_create(&ref), 0);
    for (int k = 0; k < 6; k++) {
        hisp_type t = types[k];
        int64_t n = 20011;
        /* positive components: the chain's dots do not cancel */
        void *hx = rand_entries(t, n, true, &st), *hy = rand_entries(t, n, true, &st);
        void *hs = rand_entries(t, 4, true, &st);
        for (int64_t i = 0; i < n * hisp_type_components(t); i++) {
            set(t, hx, i, fabs(get(t, hx, i)));
            set(t, hy, i, fabs(get(t, hy, i)));
            if (i < 4 * hisp_type_components(t)) set(t, hs, i, fabs(get(t, hs, i)));
        }
        size_t es = hisp_type_size(t);
        void *o1 = malloc((size_t)n * es), *o2 = malloc((size_t)n * es);
        unsigned char r1[128], r2[128];
        hisp_transfer_stats xd, xr;
        run_chain(ctx, t, n, hx, hy, hs, o1, r1, &xd);
        run_chain(ref, t, n, hx, hy, hs, o2, r2, &xr);
        ck_assert_msg(xd.h2d_bytes == 0 && xd.d2h_bytes == 0,
                      "%s: the chain moved %llu bytes up, %llu down", hisp_type_name(t),
                      (unsigned long long)xd.h2d_bytes, (unsigned long long)xd.d2h_bytes);
        /* the chain compounds rounding: a looser tolerance */
        double tol = dbl(t) ? 1e-9 : 2e-3;
        expect_close(t, o1, o2, n * hisp_type_components(t), tol, "chain p");
        expect_close(t, r1, r2, 4 * hisp_type_components(t), tol, "chain r");
        free(hx), free(hy), free(hs), free(o1), free(o2);
    }
    hisp_context_destroy(&ref);
    hisp_context_destroy(&ctx);
}
END_TEST

static uint64_t moved(hisp_context ctx, bool up)
{
    hisp_transfer_stats x;
    CK_OK(ctx, hisp_context_transfers(ctx, &x));
    return up ? x.h2d_bytes : x.d2h_bytes;
}

/* hisp_vector_read_range / write_range on a host-resident, a
 * device-resident and a both-valid vector: the right entries, only the range
 * moved (device targets), every copy kept valid; bad ranges refused with
 * nothing changed. */
START_TEST(test_range)
{
    bool dev = test_kind(_i) != HISP_BACKEND_REFERENCE;
    uint64_t st = test_seed() ^ 0x7a49u;
    hisp_context ctx = test_context(_i);
    for (int k = 0; k < 6; k++) {
        hisp_type t = types[k];
        int vc = hisp_type_components(t);
        size_t es = hisp_type_size(t);
        int64_t n = 3001 + (int64_t)(test_rand(&st) % 1000);
        int64_t off = (int64_t)(test_rand(&st) % (uint64_t)(n / 2)), cnt = n / 3;
        void *h = rand_entries(t, n, false, &st), *w = rand_entries(t, cnt, false, &st);
        void *want = malloc((size_t)n * es), *got = malloc((size_t)n * es);
        ck_assert(want && got);
        double two[4] = {2, 0, 0, 0};
        float twof[4] = {2, 0, 0, 0};
        hisp_scalar a = hisp_scalar_host(dbl(t) ? (const void *)two : (const void *)twof);
        hisp_vector v = NULL;
        CK_OK(ctx, hisp_vector_create(ctx, t, n, &v));
        CK_OK(ctx, hisp_vector_write(v, h));
        /* host-resident */
        CK_OK(ctx, hisp_vector_read_range(v, off, cnt, got));
        expect_close(t, got, (char *)h + (size_t)off * es, cnt * vc, 0, "read_range (host)");
        /* device-resident: v = 2 h; only the range comes down */
        CK_OK(ctx, hisp_vector_scale(v, a));
        for (int64_t i = 0; i < n * vc; i++)
            set(t, want, i, 2 * get(t, h, i));
        uint64_t d0 = moved(ctx, false);
        CK_OK(ctx, hisp_vector_read_range(v, off, cnt, got));
        expect_close(t, got, (char *)want + (size_t)off * es, cnt * vc, 0, "read_range (device)");
        if (dev) ck_assert_uint_eq(moved(ctx, false) - d0, (uint64_t)cnt * es);
        /* written into the device copy: only the range goes up */
        uint64_t u0 = moved(ctx, true);
        CK_OK(ctx, hisp_vector_write_range(v, off, cnt, w));
        if (dev) ck_assert_uint_eq(moved(ctx, true) - u0, (uint64_t)cnt * es);
        memcpy((char *)want + (size_t)off * es, w, (size_t)cnt * es);
        CK_OK(ctx, hisp_vector_scale(v, a)); /* the device sees the new entries */
        for (int64_t i = 0; i < n * vc; i++)
            set(t, want, i, 2 * get(t, want, i));
        CK_OK(ctx, hisp_vector_read(v, got));
        expect_close(t, got, want, n * vc, 0, "write_range (device)");
        /* both copies valid now: both get the range (the tail, to the end) */
        int64_t o2 = n - cnt;
        CK_OK(ctx, hisp_vector_write_range(v, o2, cnt, w));
        memcpy((char *)want + (size_t)o2 * es, w, (size_t)cnt * es);
        CK_OK(ctx, hisp_vector_read(v, got));
        expect_close(t, got, want, n * vc, 0, "write_range (host copy)");
        CK_OK(ctx, hisp_vector_scale(v, a));
        for (int64_t i = 0; i < n * vc; i++)
            set(t, want, i, 2 * get(t, want, i));
        CK_OK(ctx, hisp_vector_read(v, got));
        expect_close(t, got, want, n * vc, 0, "write_range (device copy)");
        /* host-resident write */
        CK_OK(ctx, hisp_vector_write(v, h));
        CK_OK(ctx, hisp_vector_write_range(v, 0, cnt, w));
        memcpy(want, h, (size_t)n * es);
        memcpy(want, w, (size_t)cnt * es);
        CK_OK(ctx, hisp_vector_read(v, got));
        expect_close(t, got, want, n * vc, 0, "write_range (host)");
        /* bad ranges: refused, nothing read or written */
        CK_OK(ctx, hisp_vector_scale(v, a)); /* device-resident again */
        for (int64_t i = 0; i < n * vc; i++)
            set(t, want, i, 2 * get(t, want, i));
        int64_t bad[][2] = {{-1, 1},    {0, -1},        {n - 1, 2},
                            {n + 1, 0}, {1, INT64_MAX}, {INT64_MAX, 1}};
        for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
            memset(got, 0x5a, (size_t)n * es);
            EXPECT_INVALID(hisp_vector_read_range(v, bad[b][0], bad[b][1], got));
            ck_assert_uint_eq(((unsigned char *)got)[0], 0x5a);
            EXPECT_INVALID(hisp_vector_write_range(v, bad[b][0], bad[b][1], w));
        }
        EXPECT_INVALID(hisp_vector_read_range(v, 0, 1, NULL));
        EXPECT_INVALID(hisp_vector_write_range(v, 0, 1, NULL));
        CK_OK(ctx, hisp_vector_read_range(v, n, 0, NULL)); /* empty ranges: nothing */
        CK_OK(ctx, hisp_vector_write_range(v, 0, 0, NULL));
        ck_assert_int_eq(hisp_vector_read_range(NULL, 0, 0, got), HISP_ERR_INVALID_HANDLE);
        CK_OK(ctx, hisp_vector_read(v, got));
        expect_close(t, got, want, n * vc, 0, "after the refused ranges");
        hisp_vector_destroy(&v);
        free(h), free(w), free(want), free(got);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* Identities of the conventions, on the reference backend: scalars from
 * the right, dot conjugate-linear in its first argument, y^-1 x. */
START_TEST(test_conventions)
{
    hisp_context ctx = test_default_context();
    hisp_vector x, y, z;
    CK_OK(ctx, hisp_vector_create(ctx, HISP_Q64, 1, &x));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_Q64, 1, &y));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_Q64, 1, &z));
    double i[4] = {0, 1, 0, 0}, j[4] = {0, 0, 1, 0}, q[4];
    CK_OK(ctx, hisp_vector_write(x, i));
    CK_OK(ctx, hisp_vector_scale(x, hisp_scalar_host(j))); /* x = i*j = k */
    CK_OK(ctx, hisp_vector_read(x, q));
    ck_assert(q[0] == 0 && q[1] == 0 && q[2] == 0 && q[3] == 1);
    /* dot(x, y) = conj(x) y: dot(i, j) = -i*j = -k */
    CK_OK(ctx, hisp_vector_write(x, i));
    CK_OK(ctx, hisp_vector_write(y, j));
    CK_OK(ctx, hisp_vector_dot(x, y, hisp_result_host(q)));
    ck_assert(q[0] == 0 && q[1] == 0 && q[2] == 0 && q[3] == -1);
    /* div: z = y^-1 x, so y*z = x */
    double a[4] = {1, 2, -1, 0.5}, b[4] = {0.5, -1, 2, 3};
    CK_OK(ctx, hisp_vector_write(x, a));
    CK_OK(ctx, hisp_vector_write(y, b));
    CK_OK(ctx, hisp_vector_div(x, y, z));
    CK_OK(ctx, hisp_vector_mul(y, z, z));
    CK_OK(ctx, hisp_vector_read(z, q));
    for (int k = 0; k < 4; k++)
        ck_assert(fabs(q[k] - a[k]) < 1e-14);
    hisp_vector_destroy(&x);
    hisp_vector_destroy(&y);
    hisp_vector_destroy(&z);
    /* nrm2 of complex (3 + 4i, 0) = 5 */
    CK_OK(ctx, hisp_vector_create(ctx, HISP_C32, 2, &x));
    float c[4] = {3, 4, 0, 0}, nr = 0;
    CK_OK(ctx, hisp_vector_write(x, c));
    CK_OK(ctx, hisp_vector_nrm2(x, hisp_result_host(&nr)));
    ck_assert(nr == 5.0f);
    hisp_vector_destroy(&x);
    hisp_context_destroy(&ctx);
}
END_TEST

/* NVRTC compiles vector.cl for every type (no GPU needed). */
START_TEST(test_nvrtc)
{
#ifdef HISP_HAVE_CUDA
    hisp_context ctx = test_default_context();
    for (int k = 0; k < 6; k++)
        for (int acc = 0; acc < 2; acc++) {
            hisp_type t = types[k];
            int vc = hisp_type_components(t);
            char opts[300];
            snprintf(opts, sizeof opts,
                     "-DVALUE_T=%s -DIS_DOUBLE=%d -DATOM64=0 -DKIND=%d -DVC=%d -DACC_DOUBLE=%d "
                     "-DCHUNK=0 -DLS=256 -DMT=%d",
                     dbl(t) ? "double" : "float", dbl(t),
                     vc == 1   ? 0
                     : vc == 2 ? 1
                               : 2,
                     vc, acc || dbl(t), 4 / vc);
            if (!test_nvrtc_build(ctx, HISPI_PROG_VECTOR, opts, "vector NVRTC builds")) {
                hisp_context_destroy(&ctx);
                return;
            }
        }
    hisp_context_destroy(&ctx);
#else
    test_skip("vector NVRTC builds: CUDA not compiled in");
#endif
}
END_TEST

Suite *suite_vector(void)
{
    Suite *s = suite_create("vector");
    TCase *tc = test_tcase(s, "host", 600);
    tcase_add_test(tc, test_conventions);
    tcase_add_test(tc, test_nvrtc);
    int n = test_targets(NULL);
    TCase *dev = test_tcase(s, "targets", 1200);
    tcase_add_loop_test(dev, test_ops, 0, n);
    tcase_add_loop_test(dev, test_nan_inf, 0, n);
    tcase_add_loop_test(dev, test_b3x3, 0, n);
    tcase_add_loop_test(dev, test_errors, 0, n);
    tcase_add_loop_test(dev, test_no_transfers, 0, n);
    tcase_add_loop_test(dev, test_range, 0, n);
    return s;
}
