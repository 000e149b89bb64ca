/* Mixed precision (solver_precision=mixed): f64 systems solved by
 * refinement around f32 solves, every result checked against a residual
 * computed here from the arrays in double and against the f64 solve's x. */
#include "fixture_solver.h"
#include "hispi.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern int hispi_spgemm_cpu_kernels;

/* poisson2d on an m x m grid */
static test_hcsr system_of(hisp_context ctx, int64_t m)
{
    return test_hcsr_generate(ctx, HISP_GEN_POISSON2D, m);
}

static void set_mixed(hisp_context ctx, bool on)
{
    CK_OK(ctx, hisp_context_set_option(ctx, "solver_precision", on ? "mixed" : "full"));
}

typedef struct {
    int64_t calls, last;
    bool ordered;
} seen;

static int watch(void *user, int64_t k, double rn, double rel)
{
    seen *w = user;
    w->ordered &= (w->calls == 0 ? k == 0 : k > w->last) && isfinite(rn) && rel >= 0;
    w->calls++, w->last = k;
    return 0;
}

/* x solving H x = b from x0 = 0 with method m, preconditioner p, rtol;
 * info filled; x read into xs (n doubles). */
static void solve(hisp_context ctx, hisp_matrix A, hisp_solver_method m, hisp_precond p,
                  double rtol, const double *b, double *xs, hisp_solve_info *info, seen *w)
{
    int64_t n = 0;
    hisp_matrix_info mi;
    CK_OK(ctx, hisp_matrix_get_info(A, &mi));
    n = mi.nrows;
    hisp_vector bv = test_vector_of(ctx, HISP_F64, n, b), xv = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, n, &xv));
    CK_OK(ctx, hisp_vector_fill(xv, hisp_scalar_host(&(double){0})));
    hisp_solver s = test_solver(ctx, m, false, rtol, 5000);
    CK_OK(ctx, hisp_solver_set_preconditioner(s, p));
    if (w) CK_OK(ctx, hisp_solver_set_monitor(s, watch, w));
    CK_OK(ctx, hisp_solver_solve(s, A, bv, xv, info));
    CK_OK(ctx, hisp_vector_read(xv, xs));
    hisp_solver_destroy(&s);
    hisp_vector_destroy(&bv), hisp_vector_destroy(&xv);
}

/* A converged mixed solve: iterations in f32, at least `refs`
 * refinements, its residual the one computed here, x the f64 solve's
 * within what the tolerance allows. */
static void check_mixed(const char *what, const test_hcsr *H, const double *b, const double *x,
                        const double *xf, const hisp_solve_info *in, double rtol, int refs)
{
    double tr = test_hcsr_residual(H, b, x);
    ck_assert_msg(in->converged, "%s: %s after %lld iterations, residual %g", what,
                  hisp_stop_reason_name(in->reason), (long long)in->iterations,
                  in->relative_residual);
    ck_assert_msg(in->iteration_type == HISP_F32 && in->refinements >= refs,
                  "%s: iterations in %s, %lld refinements", what,
                  hisp_type_name(in->iteration_type), (long long)in->refinements);
    ck_assert_msg(tr <= rtol * 1.001 && fabs(tr - in->relative_residual) <= 1e-2 * tr + 1e-15,
                  "%s: true residual %g, reported %g", what, tr, in->relative_residual);
    double e = 0, m = 0;
    for (int64_t i = 0; xf && i < H->nrows; i++)
        e = fmax(e, fabs(x[i] - xf[i])), m = fmax(m, fabs(xf[i]));
    ck_assert_msg(e <= 1e4 * rtol * m, "%s: |x - x_f64| %g of %g", what, e, m);
}

/* CG with none, Jacobi, IC(0), AMG and Chebyshev reaches 1e-11 on the f64
 * residual with f32 iterations, in CSR, SELL and HiSparse, on the device's kernels (forced on a CPU
 * device) and the host's; the monitor sees iterations 0, 1, .. in order, the last the count
 * reported. */
START_TEST(test_mixed_methods)
{
    hisp_context ctx = test_context(_i);
    if (!test_fp64(ctx)) {
        hisp_context_destroy(&ctx);
        return;
    }
    static const struct {
        hisp_solver_method m;
        hisp_precond p;
        hisp_format f;
    } cases[] = {
        {HISP_SOLVER_CG, HISP_PRECOND_NONE, HISP_FORMAT_CSR},
        {HISP_SOLVER_CG, HISP_PRECOND_JACOBI, HISP_FORMAT_SELL},
        {HISP_SOLVER_CG, HISP_PRECOND_IC0, HISP_FORMAT_CSR},
        {HISP_SOLVER_CG, HISP_PRECOND_AMG, HISP_FORMAT_CSR},
        {HISP_SOLVER_CG, HISP_PRECOND_CHEBYSHEV, HISP_FORMAT_HISPARSE},
    };
    const double rtol = 1e-11;
    for (int dev = 0; dev < 2; dev++) {
        hispi_spgemm_cpu_kernels = dev;
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            test_hcsr H = system_of(ctx, 30);
            int64_t n = H.nrows;
            hisp_matrix A = test_hcsr_matrix(ctx, &H, HISP_F64, cases[c].f);
            double *b = malloc((size_t)n * 8), *x = malloc((size_t)n * 8),
                   *xf = malloc((size_t)n * 8);
            for (int64_t i = 0; i < n; i++)
                b[i] = sin(0.37 * (double)i) + 0.5;
            char what[160];
            snprintf(what, sizeof what, "%s %s %s %s%s", test_label(_i),
                     hisp_solver_method_name(cases[c].m), hisp_precond_name(cases[c].p),
                     hisp_format_name(cases[c].f), dev ? " (device kernels)" : "");
            hisp_solve_info in, inf;
            set_mixed(ctx, false);
            solve(ctx, A, cases[c].m, cases[c].p, rtol, b, xf, &inf, NULL);
            ck_assert_msg(inf.converged && inf.iteration_type == HISP_F64 && inf.refinements == 0,
                          "%s: the f64 solve", what);
            set_mixed(ctx, true);
            seen w = {0, 0, true};
            solve(ctx, A, cases[c].m, cases[c].p, rtol, b, x, &in, &w);
            check_mixed(what, &H, b, x, xf, &in, rtol, 2);
            ck_assert_msg(w.ordered && w.last == in.iterations,
                          "%s: the monitor saw %lld calls, "
                          "the last at %lld of %lld iterations",
                          what, (long long)w.calls, (long long)w.last, (long long)in.iterations);
            set_mixed(ctx, false);
            free(b), free(x), free(xf);
            hisp_matrix_destroy(&A);
            test_hcsr_free(&H);
        }
    }
    hispi_spgemm_cpu_kernels = 0;
    hisp_context_destroy(&ctx);
}
END_TEST

/* A's f32 copy is kept for the next solve and goes with A's values
 * (hisp_matrix_scale: the next solve's x halves); x0 is where the
 * refinement starts; b = 0 gives x = 0; the iteration limit holds over
 * all refinements; an entry outside f32's range, an f32 system, lsqr,
 * bicgstab and gmres solve in their own precision, and say so. */
START_TEST(test_mixed_rules)
{
    hisp_context ctx = test_context(_i);
    if (!test_fp64(ctx)) {
        hisp_context_destroy(&ctx);
        return;
    }
    test_hcsr H = system_of(ctx, 20);
    int64_t n = H.nrows;
    hisp_matrix A = test_hcsr_matrix(ctx, &H, HISP_F64, HISP_FORMAT_CSR);
    double *b = malloc((size_t)n * 8), *x = malloc((size_t)n * 8), *x2 = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++)
        b[i] = cos(0.21 * (double)i);
    set_mixed(ctx, true);
    hisp_solve_info in;
    solve(ctx, A, HISP_SOLVER_CG, HISP_PRECOND_JACOBI, 1e-10, b, x, &in, NULL);
    check_mixed(test_label(_i), &H, b, x, NULL, &in, 1e-10, 2);
    hisp_matrix kept = A->narrow;
    ck_assert_ptr_nonnull(kept);
    solve(ctx, A, HISP_SOLVER_CG, HISP_PRECOND_JACOBI, 1e-10, b, x2, &in, NULL);
    ck_assert_ptr_eq(A->narrow, kept);
    for (int64_t i = 0; i < n; i++)
        ck_assert_double_eq(x2[i], x[i]); /* the same arithmetic */
    /* new values: the copy goes, the solution halves */
    CK_OK(ctx, hisp_matrix_scale(A, &(double){2}));
    ck_assert_ptr_null(A->narrow);
    solve(ctx, A, HISP_SOLVER_CG, HISP_PRECOND_JACOBI, 1e-10, b, x2, &in, NULL);
    ck_assert(in.converged && in.iteration_type == HISP_F32);
    for (int64_t i = 0; i < n; i++)
        ck_assert_double_eq_tol(x2[i], x[i] / 2, 1e-8 * fabs(x[i]) + 1e-12);
    CK_OK(ctx, hisp_matrix_scale(A, &(double){0.5}));

    /* from x0 = x rounded to f32: few iterations; b = 0: x = 0 */
    hisp_vector bv = test_vector_of(ctx, HISP_F64, n, b), xv = NULL;
    for (int64_t i = 0; i < n; i++)
        x2[i] = (float)x[i];
    xv = test_vector_of(ctx, HISP_F64, n, x2);
    hisp_solver s = test_solver(ctx, HISP_SOLVER_CG, false, 1e-10, 5000);
    CK_OK(ctx, hisp_solver_solve(s, A, bv, xv, &in));
    CK_OK(ctx, hisp_vector_read(xv, x2));
    ck_assert(in.converged && in.refinements >= 1);
    ck_assert_double_le(test_hcsr_residual(&H, b, x2), 1.001e-10);
    CK_OK(ctx, hisp_vector_fill(bv, hisp_scalar_host(&(double){0})));
    CK_OK(ctx, hisp_solver_solve(s, A, bv, xv, &in));
    CK_OK(ctx, hisp_vector_read(xv, x2));
    ck_assert(in.converged && in.iterations == 0 && in.residual_norm == 0);
    for (int64_t i = 0; i < n; i++)
        ck_assert_double_eq(x2[i], 0);

    /* the limit holds over all refinements */
    hisp_vector_destroy(&bv);
    bv = test_vector_of(ctx, HISP_F64, n, b);
    CK_OK(ctx, hisp_solver_set_max_iterations(s, 7));
    CK_OK(ctx, hisp_solver_solve(s, A, bv, xv, &in));
    CK_OK(ctx, hisp_vector_read(xv, x2));
    ck_assert_int_eq(in.reason, HISP_STOP_MAX_ITERATIONS);
    ck_assert_int_le(in.iterations, 7);
    ck_assert_double_eq_tol(test_hcsr_residual(&H, b, x2), in.relative_residual,
                            1e-2 * in.relative_residual);
    hisp_solver_destroy(&s);
    hisp_vector_destroy(&bv), hisp_vector_destroy(&xv);

    /* in their own precision: entries f32 cannot hold, an f32 system, lsqr */
    test_hcsr T = H;
    T.val = malloc((size_t)H.nnz * 8);
    for (int64_t e = 0; e < H.nnz; e++)
        T.val[e] = H.val[e] * 1e-25;
    hisp_matrix Ts = test_hcsr_matrix(ctx, &T, HISP_F64, HISP_FORMAT_CSR);
    solve(ctx, Ts, HISP_SOLVER_CG, HISP_PRECOND_NONE, 1e-10, b, x2, &in, NULL);
    ck_assert(in.converged && in.iteration_type == HISP_F64 && in.refinements == 0);
    ck_assert_double_le(test_hcsr_residual(&T, b, x2), 1.001e-10);
    hisp_matrix_destroy(&Ts);
    free(T.val);
    hisp_matrix A32 = test_hcsr_matrix(ctx, &H, HISP_F32, HISP_FORMAT_CSR);
    float *bf = malloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++)
        bf[i] = (float)b[i];
    hisp_vector b32 = NULL, x32 = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F32, n, &b32));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F32, n, &x32));
    CK_OK(ctx, hisp_vector_write(b32, bf));
    CK_OK(ctx, hisp_vector_fill(x32, hisp_scalar_host(&(float){0})));
    s = test_solver(ctx, HISP_SOLVER_CG, false, 1e-4, 5000);
    CK_OK(ctx, hisp_solver_solve(s, A32, b32, x32, &in));
    ck_assert(in.converged && in.iteration_type == HISP_F32 && in.refinements == 0);
    { /* its claim against the residual of H (f32's rounded entries) computed here in double */
        test_hcsr R = H;
        R.val = malloc((size_t)H.nnz * 8);
        for (int64_t e = 0; e < H.nnz; e++)
            R.val[e] = (float)H.val[e];
        CK_OK(ctx, hisp_vector_read(x32, bf));
        for (int64_t i = 0; i < n; i++)
            x2[i] = bf[i], x[i] = (float)b[i];
        double tr = test_hcsr_residual(&R, x, x2);
        ck_assert_msg(tr <= 1.01e-4 && fabs(tr - in.relative_residual) <= 0.05 * tr,
                      "%s: f32 true residual %g, reported %g", test_label(_i), tr,
                      in.relative_residual);
        free(R.val);
    }
    hisp_solver_destroy(&s);
    static const hisp_solver_method own[] = {HISP_SOLVER_LSQR, HISP_SOLVER_BICGSTAB,
                                             HISP_SOLVER_GMRES};
    for (int k = 0; k < 3; k++) {
        solve(ctx, A, own[k], HISP_PRECOND_NONE, 1e-10, b, x2, &in, NULL);
        ck_assert(in.iteration_type == HISP_F64 && in.refinements == 0);
    }
    free(bf);
    hisp_vector_destroy(&b32), hisp_vector_destroy(&x32);
    hisp_matrix_destroy(&A32);
    free(b), free(x), free(x2);
    hisp_matrix_destroy(&A);
    test_hcsr_free(&H);
    hisp_context_destroy(&ctx);
}
END_TEST

extern int hispi_mixed_give_up;

/* Where the f32 iterations stop gaining (forced here at the first f64
 * update), the solve goes on in f64 from their x and converges, saying so
 * (iteration_type f64 after refinements), its residual the true one. */
START_TEST(test_mixed_fallback)
{
    hisp_context ctx = test_context(_i);
    if (!test_fp64(ctx)) {
        hisp_context_destroy(&ctx);
        return;
    }
    test_hcsr H = system_of(ctx, 24);
    int64_t n = H.nrows;
    hisp_matrix A = test_hcsr_matrix(ctx, &H, HISP_F64, HISP_FORMAT_CSR);
    double *b = malloc((size_t)n * 8), *x = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++)
        b[i] = sin(1.3 * (double)i);
    set_mixed(ctx, true);
    hispi_mixed_give_up = 1;
    hisp_solve_info in;
    solve(ctx, A, HISP_SOLVER_CG, HISP_PRECOND_JACOBI, 1e-10, b, x, &in, NULL);
    hispi_mixed_give_up = 0;
    double tr = test_hcsr_residual(&H, b, x);
    ck_assert_msg(in.converged && in.iteration_type == HISP_F64 && in.refinements == 1,
                  "%s: %s, iterations in %s after %lld refinements", test_label(_i),
                  hisp_stop_reason_name(in.reason), hisp_type_name(in.iteration_type),
                  (long long)in.refinements);
    ck_assert_msg(tr <= 1.001e-10 && fabs(tr - in.relative_residual) <= 1e-2 * tr,
                  "%s: true residual %g, reported %g", test_label(_i), tr, in.relative_residual);
    free(b), free(x);
    hisp_matrix_destroy(&A);
    test_hcsr_free(&H);
    hisp_context_destroy(&ctx);
}
END_TEST

Suite *suite_solver_mixed(void)
{
    Suite *s = suite_create("solver_mixed");
    int n = test_targets(NULL);
    TCase *dev = test_tcase(s, "targets", 600);
    tcase_add_loop_test(dev, test_mixed_methods, 0, n);
    tcase_add_loop_test(dev, test_mixed_rules, 0, n);
    tcase_add_loop_test(dev, test_mixed_fallback, 0, n);
    return s;
}
