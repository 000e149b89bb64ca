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
#include "testutil.h"

#include <float.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a host CSR in double: the matrix the device holds -------------------- */

typedef struct {
    int64_t n, m, nnz; /* rows, cols */
    int64_t *ptr;
    int32_t *col;
    double *val;
} tcsr;

static void tc_free(tcsr *H)
{
    free(H->ptr), free(H->col), free(H->val);
    memset(H, 0, sizeof *H);
}

static tcsr tc_from(hisp_context ctx, hisp_matrix A)
{
    CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_CSR));
    hisp_matrix_info mi;
    CK_OK(ctx, hisp_matrix_get_info(A, &mi));
    ck_assert(mi.type == HISP_F64);
    const int64_t *p;
    const int32_t *r, *c;
    const void *v;
    CK_OK(ctx, hisp_matrix_host_arrays(A, &p, &r, &c, &v));
    tcsr H = {mi.nrows, mi.ncols, mi.nnz, NULL, NULL, NULL};
    H.ptr = malloc((size_t)(H.n + 1) * sizeof *H.ptr);
    H.col = malloc((size_t)(H.nnz + 1) * sizeof *H.col);
    H.val = malloc((size_t)(H.nnz + 1) * sizeof *H.val);
    ck_assert(H.ptr && H.col && H.val);
    memcpy(H.ptr, p, (size_t)(H.n + 1) * sizeof *H.ptr);
    memcpy(H.col, c, (size_t)H.nnz * sizeof *H.col);
    memcpy(H.val, v, (size_t)H.nnz * sizeof *H.val);
    return H;
}

/* NULL (skipped) when the shared matrix is missing */
static bool tc_read(hisp_context ctx, const char *path, tcsr *H)
{
    FILE *fp = fopen(path, "r");
    if (!fp) return false;
    fclose(fp);
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_read_mtx(ctx, path, HISP_F64, &A, NULL));
    *H = tc_from(ctx, A);
    hisp_matrix_destroy(&A);
    return true;
}

static tcsr tc_poisson(hisp_context ctx, int64_t n)
{
    hisp_gen_params p;
    hisp_gen_defaults(HISP_GEN_POISSON2D, &p);
    p.n = n;
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_generate(ctx, &p, HISP_F64, &A));
    tcsr H = tc_from(ctx, A);
    hisp_matrix_destroy(&A);
    return H;
}

/* H0's pattern (shared) with values of its own: H0's times s, rounded to
 * float for f32 (what the device will hold). Free its val. */
static tcsr tc_scaled(const tcsr *H0, double s, bool f32)
{
    tcsr H = *H0;
    H.val = malloc((size_t)(H0->nnz + 1) * sizeof *H.val);
    ck_assert_ptr_nonnull(H.val);
    for (int64_t k = 0; k < H.nnz; k++) {
        H.val[k] = H0->val[k] * s;
        if (f32) H.val[k] = (double)(float)H.val[k];
    }
    return H;
}

static hisp_matrix tc_matrix(hisp_context ctx, const tcsr *H, bool f32)
{
    hisp_matrix A = NULL;
    if (!f32) {
        CK_OK(ctx, hisp_matrix_create_csr(ctx, HISP_F64, H->n, H->m, H->ptr, H->col, H->val, &A));
        return A;
    }
    float *v = malloc((size_t)(H->nnz + 1) * sizeof *v);
    ck_assert_ptr_nonnull(v);
    for (int64_t k = 0; k < H->nnz; k++)
        v[k] = (float)H->val[k];
    CK_OK(ctx, hisp_matrix_create_csr(ctx, HISP_F32, H->n, H->m, H->ptr, H->col, v, &A));
    free(v);
    return A;
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
static void host_mv(const tcsr *H, bool trans, bool absval, const double *x, double *y)
{
    memset(y, 0, (size_t)(trans ? H->m : H->n) * sizeof *y);
    for (int64_t i = 0; i < H->n; i++)
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
static truth host_truth(const tcsr *H, const double *b, const double *x, bool lsqr, double eps)
{
    int64_t n = H->n, m = H->m, wmax = 1;
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

static const char *test_target_label(int i)
{
    const test_target *t;
    test_targets(&t);
    return t[i].label;
}

static const char *const method_names[] = {"cg", "bicgstab", "gmres", "lsqr"};

/* Solves H x = ones (x0 = 0) and checks the info against the host's truth;
 * returns the info. */
static hisp_solve_info solve_checked(hisp_context ctx, const char *what, const tcsr *H, bool f32,
                                     hisp_solver_method m, bool jacobi, double rtol, int64_t maxit)
{
    hisp_type t = f32 ? HISP_F32 : HISP_F64;
    size_t es = f32 ? 4 : 8;
    double eps = f32 ? FLT_EPSILON : DBL_EPSILON;
    hisp_matrix A = tc_matrix(ctx, H, f32);
    hisp_vector vb = NULL, vx = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, t, H->n, &vb));
    CK_OK(ctx, hisp_vector_create(ctx, t, H->m, &vx));
    double *b = malloc((size_t)(H->n + 1) * 8), *x = malloc((size_t)(H->m + 1) * 8);
    void *io = malloc((size_t)(H->n > H->m ? H->n : H->m) * es + 8);
    ck_assert(b && x && io);
    for (int64_t i = 0; i < H->n; i++) {
        b[i] = 1;
        if (f32)
            ((float *)io)[i] = 1;
        else
            ((double *)io)[i] = 1;
    }
    CK_OK(ctx, hisp_vector_write(vb, io));
    memset(io, 0, (size_t)H->m * es);
    CK_OK(ctx, hisp_vector_write(vx, io));
    hisp_solver s = NULL;
    CK_OK(ctx, hisp_solver_create(ctx, m, &s));
    CK_OK(ctx, hisp_solver_set_tolerances(s, rtol, 0));
    CK_OK(ctx, hisp_solver_set_max_iterations(s, maxit));
    CK_OK(ctx, hisp_solver_set_preconditioner(s, jacobi ? HISP_PRECOND_JACOBI : HISP_PRECOND_NONE));
    hisp_solve_info info;
    CK_OK(ctx, hisp_solver_solve(s, A, vb, vx, &info));
    hisp_solver_destroy(&s);
    CK_OK(ctx, hisp_vector_read(vx, io));
    for (int64_t j = 0; j < H->m; j++)
        x[j] = f32 ? (double)((float *)io)[j] : ((double *)io)[j];

    bool lsqr = m == HISP_SOLVER_LSQR;
    ck_assert_msg(info.converged == (info.reason == HISP_STOP_CONVERGED), "%s: converged %d, %s",
                  what, info.converged, hisp_stop_reason_name(info.reason));
    ck_assert_msg(info.iterations >= 0 && info.iterations <= maxit, "%s: %lld iterations", what,
                  (long long)info.iterations);
    bool xfinite = true;
    for (int64_t j = 0; j < H->m; j++)
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
    free(b), free(x), free(io);
    return info;
}

/* ---- the tests ----------------------------------------------------------------- */

/* Tolerances the type cannot reach on these matrices: never converged; the
 * info tells the truth. Limits keep the PoCL run short: a solve ends in
 * stagnation, or at the iteration limit without claiming anything. */
START_TEST(test_unreachable)
{
    hisp_context ctx = test_context(_i);
    const char *dir = test_matrix_dir();
    static const char *const files[] = {"494_bus.mtx", "bcsstk13.mtx"};
    for (int k = 0; k < 3; k++) {
        tcsr H0;
        char name[64];
        if (k < 2) {
            char path[2048];
            if (!dir) {
                if (_i == 0) test_skip_no_matrices("solver truth on real matrices");
                continue;
            }
            snprintf(path, sizeof path, "%s/%s", dir, files[k]);
            if (!tc_read(ctx, path, &H0)) {
                if (_i == 0) test_skip("solver truth: %s is missing", path);
                continue;
            }
            snprintf(name, sizeof name, "%s", files[k]);
        } else {
            H0 = tc_poisson(ctx, 40);
            snprintf(name, sizeof name, "poisson2d:40");
        }
        for (int f = 0; f < 2; f++) {
            tcsr H = tc_scaled(&H0, 1, f == 0);
            /* f32: 1e-9; f64: 1e-17, below the rounding of ||b|| itself */
            double rtol = f == 0 ? 1e-9 : 1e-17;
            for (int m = 0; m < HISP_SOLVER_COUNT; m++) {
                char what[512];
                snprintf(what, sizeof what, "%s: %s %s %s", test_target_label(_i), name,
                         method_names[m], f == 0 ? "f32" : "f64");
                hisp_solve_info in =
                    solve_checked(ctx, what, &H, f == 0, (hisp_solver_method)m, false, rtol,
                                  m == HISP_SOLVER_GMRES || m == HISP_SOLVER_LSQR ? 300 : 1500);
                ck_assert_msg(!in.converged,
                              "%s: converged at an unreachable rtol %g (relative residual %g)",
                              what, rtol, in.relative_residual);
            }
            free(H.val);
        }
        tc_free(&H0);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* A reachable tolerance in f32 and f64 still converges, and the truth
 * agrees. */
START_TEST(test_reachable)
{
    hisp_context ctx = test_context(_i);
    tcsr H0 = tc_poisson(ctx, 30);
    for (int f = 0; f < 2; f++) {
        tcsr H = tc_scaled(&H0, 1, f == 0);
        for (int m = 0; m < HISP_SOLVER_COUNT; m++) {
            /* LSQR's normal-equation residual squares the condition: f32
             * reaches about 1e-4 on this matrix */
            double rtol = f == 1 ? 1e-8 : m == HISP_SOLVER_LSQR ? 1e-3 : 1e-4;
            char what[512];
            snprintf(what, sizeof what, "%s: poisson2d:30 %s %s", test_target_label(_i),
                     method_names[m], f == 0 ? "f32" : "f64");
            hisp_solve_info in =
                solve_checked(ctx, what, &H, f == 0, (hisp_solver_method)m, false, rtol, 5000);
            ck_assert_msg(in.converged, "%s: %s after %lld iterations, relative residual %g", what,
                          hisp_stop_reason_name(in.reason), (long long)in.iterations,
                          in.relative_residual);
        }
        free(H.val);
    }
    tc_free(&H0);
    hisp_context_destroy(&ctx);
}
END_TEST

/* Entries near the ends of double's range (1e-300, 1e200) and subnormal
 * ones (1e-310): whatever the methods make of them, no false convergence,
 * and NaN or Inf in x is never convergence. */
START_TEST(test_scaled)
{
    hisp_context ctx = test_context(_i);
    tcsr H0 = tc_poisson(ctx, 12);
    static const double scales[] = {1e-300, 1e200, 1e-310, 1e300};
    for (int k = 0; k < 4; k++) {
        tcsr H = tc_scaled(&H0, scales[k], false);
        for (int m = 0; m < HISP_SOLVER_COUNT; m++) {
            char what[512];
            snprintf(what, sizeof what, "%s: poisson2d:12 * %g %s", test_target_label(_i),
                     scales[k], method_names[m]);
            (void)solve_checked(ctx, what, &H, false, (hisp_solver_method)m, false, 1e-8, 500);
        }
        free(H.val);
    }
    tc_free(&H0);
    hisp_context_destroy(&ctx);
}
END_TEST

/* BiCGSTAB with Jacobi on 1138_bus: its recurrence breaks down (rho -> 0)
 * on the way; restarts from the true residual carry it to convergence. */
START_TEST(test_breakdown_restart)
{
    const char *dir = test_matrix_dir();
    if (!dir) {
        if (_i == 0) test_skip_no_matrices("solver breakdown restarts");
        return;
    }
    char path[2048];
    snprintf(path, sizeof path, "%s/../mm_ext/ginkgo-project__ginkgo/matrices/test/1138_bus.mtx",
             dir);
    hisp_context ctx = test_context(_i);
    tcsr H;
    if (!tc_read(ctx, path, &H)) {
        if (_i == 0) test_skip("solver breakdown restarts: %s is missing", path);
        hisp_context_destroy(&ctx);
        return;
    }
    char what[512];
    snprintf(what, sizeof what, "%s: 1138_bus bicgstab jacobi", test_target_label(_i));
    hisp_solve_info in =
        solve_checked(ctx, what, &H, false, HISP_SOLVER_BICGSTAB, true, 1e-8, 6000);
    ck_assert_msg(in.converged, "%s: %s after %lld iterations (%lld restarts)", what,
                  hisp_stop_reason_name(in.reason), (long long)in.iterations,
                  (long long)in.restarts);
    tc_free(&H);
    hisp_context_destroy(&ctx);
}
END_TEST

Suite *suite_solver_truth(void)
{
    Suite *s = suite_create("solver_truth");
    const test_target *t;
    int n = test_targets(&t);
    TCase *tc = tcase_create("targets");
    tcase_set_timeout(tc, 1200);
    tcase_add_loop_test(tc, test_reachable, 0, n);
    tcase_add_loop_test(tc, test_unreachable, 0, n);
    tcase_add_loop_test(tc, test_scaled, 0, n);
    tcase_add_loop_test(tc, test_breakdown_restart, 0, n);
    suite_add_tcase(s, tc);
    return s;
}
