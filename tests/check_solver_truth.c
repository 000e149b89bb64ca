/* What a solve reports is true (hisp.h "Iterative solvers", convergence):
 * on every target, every method, f32 and f64, the info's residual is
 * checked against ||b - A x|| recomputed here on the host in double from
 * the returned x (LSQR: ||A^T (b - A x)|| against ||A^T b||), and a solve
 * that says converged meets its tolerance in that independent computation.
 * Ill-conditioned matrices (494_bus, bcsstk13) and a Laplacian with
 * tolerances their type cannot reach never report convergence; scaled
 * matrices (entries near 1e-300, 1e200, subnormal) neither. BiCGSTAB's
 * breakdowns restart from the true residual (1138_bus with Jacobi, which
 * breaks down without restarts on PoCL, converges). */
#include "fixture_solver.h"

#include <float.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* H0's pattern (shared) with values of its own: H0's times s, rounded to
 * float for f32 (what the device will hold). Free its val. */
static test_hcsr tc_scaled(const test_hcsr *H0, double s, bool f32)
{
    ck_assert(H0->type == HISP_F64);
    test_hcsr H = *H0;
    H.val = malloc((size_t)(H0->nnz + 1) * sizeof *H.val);
    ck_assert_ptr_nonnull(H.val);
    for (int64_t k = 0; k < H.nnz; k++) {
        H.val[k] = H0->val[k] * s;
        if (f32) H.val[k] = (double)(float)H.val[k];
    }
    return H;
}

/* ---- host arithmetic in double -------------------------------------------- */

/* ||v|| without overflow or underflow (scaled sum of squares) */
static double snorm(const double *v, int64_t n)
{
    double scale = 0, sum = 1;
    for (int64_t i = 0; i < n; i++) {
        double a = fabs(v[i]);
        if (a == 0) continue;
        if (!isfinite(a)) return a;
        if (scale < a) {
            sum = 1 + sum * (scale / a) * (scale / a);
            scale = a;
        } else {
            sum += (a / scale) * (a / scale);
        }
    }
    return scale * sqrt(sum);
}

/* y = op(|A|) |x| when absval, else op(A) x */
static void host_mv(const test_hcsr *H, bool trans, bool absval, const double *x, double *y)
{
    memset(y, 0, (size_t)(trans ? H->ncols : H->nrows) * sizeof *y);
    for (int64_t i = 0; i < H->nrows; i++)
        for (int64_t k = H->ptr[i]; k < H->ptr[i + 1]; k++) {
            double a = absval ? fabs(H->val[k]) : H->val[k];
            if (trans)
                y[H->col[k]] += a * (absval ? fabs(x[i]) : x[i]);
            else
                y[i] += a * (absval ? fabs(x[H->col[k]]) : x[H->col[k]]);
        }
}

typedef struct {
    double truth; /* the residual the tolerance is about, in double */
    double bound; /* what rounding of the device's own residual may add */
    double rhs;   /* ||b|| (LSQR ||A^T b||) */
} truth;

/* From x (of the solve's type, read back): ||b - A x|| or, for LSQR,
 * ||A^T (b - A x)||, with a bound on the rounding of that computation in the
 * entry type (eps): each entry of b - A x is off by at most
 * (row length + 2) eps (|b| + |A||x|). */
static truth host_truth(const test_hcsr *H, const double *b, const double *x, bool lsqr, double eps)
{
    int64_t n = H->nrows, m = H->ncols, wmax = 1;
    for (int64_t i = 0; i < n; i++)
        if (H->ptr[i + 1] - H->ptr[i] > wmax) wmax = H->ptr[i + 1] - H->ptr[i];
    double *r = malloc((size_t)(n + 1) * sizeof *r), *e = malloc((size_t)(n + 1) * sizeof *e),
           *t = malloc((size_t)(m + 1) * sizeof *t), *u = malloc((size_t)(m + 1) * sizeof *u);
    ck_assert(r && e && t && u);
    host_mv(H, false, false, x, r);
    host_mv(H, false, true, x, e);
    double g = (double)(wmax + 2) * eps;
    for (int64_t i = 0; i < n; i++) {
        r[i] = b[i] - r[i];
        e[i] = g * (fabs(b[i]) + e[i]);
    }
    truth T;
    if (!lsqr) {
        T.truth = snorm(r, n);
        T.bound = snorm(e, n);
        T.rhs = snorm(b, n);
    } else {
        /* A^T r's error: |A|^T e from r's, plus the product's own rounding */
        host_mv(H, true, false, r, t);
        T.truth = snorm(t, m);
        host_mv(H, true, true, e, t);
        host_mv(H, true, true, r, u);
        for (int64_t j = 0; j < m; j++)
            t[j] += g * u[j];
        T.bound = snorm(t, m);
        host_mv(H, true, false, b, t);
        T.rhs = snorm(t, m);
    }
    free(r), free(e), free(t), free(u);
    return T;
}

/* ---- one solve, checked ---------------------------------------------------- */

static const char *const method_names[] = {"cg", "bicgstab", "gmres", "lsqr"};

/* Solves H x = ones (x0 = 0) and checks the info against the host's truth;
 * returns the info. */
static hisp_solve_info solve_checked(hisp_context ctx, const char *what, const test_hcsr *H,
                                     bool f32, hisp_solver_method m, bool jacobi, double rtol,
                                     int64_t maxit)
{
    hisp_type t = f32 ? HISP_F32 : HISP_F64;
    double eps = f32 ? FLT_EPSILON : DBL_EPSILON;
    hisp_matrix A = test_hcsr_matrix(ctx, H, t, HISP_FORMAT_CSR);
    double *b = malloc((size_t)(H->nrows + 1) * 8), *x = calloc((size_t)(H->ncols + 1), 8);
    ck_assert(b && x);
    for (int64_t i = 0; i < H->nrows; i++)
        b[i] = 1;
    hisp_vector vb = test_vector_of(ctx, t, H->nrows, b), vx = test_vector_of(ctx, t, H->ncols, x);
    hisp_solver s = test_solver(ctx, m, jacobi, rtol, maxit);
    hisp_solve_info info;
    CK_OK(ctx, hisp_solver_solve(s, A, vb, vx, &info));
    hisp_solver_destroy(&s);
    test_vector_values(ctx, vx, t, H->ncols, x);

    bool lsqr = m == HISP_SOLVER_LSQR;
    ck_assert_msg(info.converged == (info.reason == HISP_STOP_CONVERGED), "%s: converged %d, %s",
                  what, info.converged, hisp_stop_reason_name(info.reason));
    ck_assert_msg(info.iterations >= 0 && info.iterations <= maxit, "%s: %lld iterations", what,
                  (long long)info.iterations);
    bool xfinite = true;
    for (int64_t j = 0; j < H->ncols; j++)
        xfinite = xfinite && isfinite(x[j]);
    if (!xfinite) {
        ck_assert_msg(!info.converged, "%s: converged with a non-finite x", what);
    } else if (!(jacobi && lsqr)) { /* LSQR with Jacobi: norms of D times the vector */
        truth T = host_truth(H, b, x, lsqr, eps);
        ck_assert_msg(fabs(info.rhs_norm - T.rhs) <= 1e-6 * T.rhs + T.rhs * 16 * eps,
                      "%s: rhs %g, host %g", what, info.rhs_norm, T.rhs);
        /* the reported residual is the residual of x (within the rounding
         * of computing it in the entry type) */
        if (isfinite(info.residual_norm))
            ck_assert_msg(fabs(info.residual_norm - T.truth) <= 1.01 * T.bound + 1e-6 * T.truth,
                          "%s: reported residual %.6g, host %.6g (rounding bound %.3g)", what,
                          info.residual_norm, T.truth, T.bound);
        if (info.converged)
            ck_assert_msg(T.truth <= rtol * T.rhs * (1 + 1e-6) + T.bound,
                          "%s: converged, but ||residual|| / ||rhs|| = %.3g > rtol %g (rounding "
                          "bound %.3g)",
                          what, T.truth / T.rhs, rtol, T.bound / T.rhs);
    }
    if (info.converged)
        ck_assert_msg(info.residual_norm <= rtol * info.rhs_norm, "%s: converged at %g > %g * %g",
                      what, info.residual_norm, rtol, info.rhs_norm);
    hisp_vector_destroy(&vb);
    hisp_vector_destroy(&vx);
    hisp_matrix_destroy(&A);
    free(b), free(x);
    return info;
}

/* ---- the tests ----------------------------------------------------------------- */

/* Tolerances the type cannot reach on these matrices: never converged; the
 * info tells the truth. Limits keep the PoCL run short: a solve ends in
 * stagnation, or at the iteration limit without claiming anything. */
START_TEST(test_unreachable)
{
    hisp_context ctx = test_context(_i);
    static const char *const files[] = {"494_bus.mtx", "bcsstk13.mtx"};
    for (int k = 0; k < 3; k++) {
        test_hcsr H0;
        const char *name = k < 2 ? files[k] : "poisson2d:40";
        if (k == 2)
            H0 = test_hcsr_generate(ctx, HISP_GEN_POISSON2D, 40);
        else if (!test_hcsr_file(ctx, files[k], "solver truth on real matrices", _i == 0, &H0))
            continue;
        for (int f = 0; f < 2; f++) {
            test_hcsr H = tc_scaled(&H0, 1, f == 0);
            /* f32: 1e-9; f64: 1e-17, below the rounding of ||b|| itself */
            double rtol = f == 0 ? 1e-9 : 1e-17;
            for (int m = 0; m < HISP_SOLVER_COUNT; m++) {
                char what[512];
                snprintf(what, sizeof what, "%s: %s %s %s", test_label(_i), name, method_names[m],
                         f == 0 ? "f32" : "f64");
                hisp_solve_info in =
                    solve_checked(ctx, what, &H, f == 0, (hisp_solver_method)m, false, rtol,
                                  m == HISP_SOLVER_GMRES || m == HISP_SOLVER_LSQR ? 300 : 1500);
                ck_assert_msg(!in.converged,
                              "%s: converged at an unreachable rtol %g (relative residual %g)",
                              what, rtol, in.relative_residual);
            }
            free(H.val);
        }
        test_hcsr_free(&H0);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* A reachable tolerance in f32 and f64 still converges, and the truth
 * agrees. */
START_TEST(test_reachable)
{
    hisp_context ctx = test_context(_i);
    test_hcsr H0 = test_hcsr_generate(ctx, HISP_GEN_POISSON2D, 30);
    for (int f = 0; f < 2; f++) {
        test_hcsr H = tc_scaled(&H0, 1, f == 0);
        for (int m = 0; m < HISP_SOLVER_COUNT; m++) {
            /* LSQR's normal-equation residual squares the condition: f32
             * reaches about 1e-4 on this matrix */
            double rtol = f == 1 ? 1e-8 : m == HISP_SOLVER_LSQR ? 1e-3 : 1e-4;
            char what[512];
            snprintf(what, sizeof what, "%s: poisson2d:30 %s %s", test_label(_i), method_names[m],
                     f == 0 ? "f32" : "f64");
            hisp_solve_info in =
                solve_checked(ctx, what, &H, f == 0, (hisp_solver_method)m, false, rtol, 5000);
            ck_assert_msg(in.converged, "%s: %s after %lld iterations, relative residual %g", what,
                          hisp_stop_reason_name(in.reason), (long long)in.iterations,
                          in.relative_residual);
        }
        free(H.val);
    }
    test_hcsr_free(&H0);
    hisp_context_destroy(&ctx);
}
END_TEST

/* Entries near the ends of double's range (1e-300, 1e200) and subnormal
 * ones (1e-310): whatever the methods make of them, no false convergence,
 * and NaN or Inf in x is never convergence. */
START_TEST(test_scaled)
{
    hisp_context ctx = test_context(_i);
    test_hcsr H0 = test_hcsr_generate(ctx, HISP_GEN_POISSON2D, 12);
    static const double scales[] = {1e-300, 1e200, 1e-310, 1e300};
    for (int k = 0; k < 4; k++) {
        test_hcsr H = tc_scaled(&H0, scales[k], false);
        for (int m = 0; m < HISP_SOLVER_COUNT; m++) {
            char what[512];
            snprintf(what, sizeof what, "%s: poisson2d:12 * %g %s", test_label(_i), scales[k],
                     method_names[m]);
            (void)solve_checked(ctx, what, &H, false, (hisp_solver_method)m, false, 1e-8, 500);
        }
        free(H.val);
    }
    test_hcsr_free(&H0);
    hisp_context_destroy(&ctx);
}
END_TEST

/* BiCGSTAB with Jacobi on 1138_bus: its recurrence breaks down (rho -> 0)
 * on the way; restarts from the true residual carry it to convergence. */
START_TEST(test_breakdown_restart)
{
    hisp_context ctx = test_context(_i);
    test_hcsr H;
    if (!test_hcsr_file(ctx, "../mm_ext/ginkgo-project__ginkgo/matrices/test/1138_bus.mtx",
                        "solver breakdown restarts", _i == 0, &H)) {
        hisp_context_destroy(&ctx);
        return;
    }
    char what[512];
    snprintf(what, sizeof what, "%s: 1138_bus bicgstab jacobi", test_label(_i));
    hisp_solve_info in =
        solve_checked(ctx, what, &H, false, HISP_SOLVER_BICGSTAB, true, 1e-8, 6000);
    ck_assert_msg(in.converged, "%s: %s after %lld iterations (%lld restarts)", what,
                  hisp_stop_reason_name(in.reason), (long long)in.iterations,
                  (long long)in.restarts);
    test_hcsr_free(&H);
    hisp_context_destroy(&ctx);
}
END_TEST

Suite *suite_solver_truth(void)
{
    Suite *s = suite_create("solver_truth");
    int n = test_targets(NULL);
    TCase *tc = test_tcase(s, "targets", 1200);
    tcase_add_loop_test(tc, test_reachable, 0, n);
    tcase_add_loop_test(tc, test_unreachable, 0, n);
    tcase_add_loop_test(tc, test_scaled, 0, n);
    tcase_add_loop_test(tc, test_breakdown_restart, 0, n);
    return s;
}
