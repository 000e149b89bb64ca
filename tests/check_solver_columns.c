/* Several right-hand sides (hisp_solver_solve_columns) on every target:
 * each column's solution, iterations and stop those of hisp_solver_solve of
 * that column alone: bit for bit where the columns run one after another
 * (the same calls), within the SpMM's rounding and a check interval's
 * iterations in lock step (CG, BiCGSTAB with none or Jacobi on a device;
 * info.lock_step says which); the true residual checked in double here (f64 and f32, also below
 * what f32 reaches, where a column goes on alone from the lock step's x);
 * columns that converge at different iterations, a zero column, an
 * iteration limit reached by one column only; Jacobi, ILU(0) and AMG set up
 * once for all columns; a column of an indefinite A that breaks down
 * reported as its own solve; complex entries (Jacobi-BiCGSTAB, c64); k = 1; the argument errors and
 * a row-major B refused; injected allocation failures leaving X usable. */
#include "fixture_solver.h"
#include "hispi.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { K = 4 };

/* B's columns: ones, random, zero, and A times a random vector (another
 * iteration count each, the zero one none) */
static double *make_b(const test_hcsr *H, uint64_t *st)
{
    int64_t n = H->nrows;
    double *b = calloc((size_t)(n * K), sizeof *b), *v = malloc((size_t)n * sizeof *v);
    ck_assert(b && v);
    for (int64_t i = 0; i < n; i++) {
        b[i] = 1;
        b[n + i] = test_uniform(st);
        v[i] = test_uniform(st);
    }
    for (int64_t i = 0; i < n; i++)
        for (int64_t e = H->ptr[i]; e < H->ptr[i + 1]; e++)
            b[3 * n + i] += H->val[e] * v[H->col[e]];
    free(v);
    return b;
}

static void check_method(hisp_context ctx, const test_hcsr *H, hisp_matrix A, hisp_type t,
                         double rtol, hisp_solver_method m, hisp_precond pc, int64_t maxit,
                         uint64_t *st, const char *what)
{
    bool lock = (m == HISP_SOLVER_CG || m == HISP_SOLVER_BICGSTAB) &&
                (pc == HISP_PRECOND_NONE || pc == HISP_PRECOND_JACOBI) &&
                ctx->kind != HISP_BACKEND_REFERENCE;
    int64_t n = H->nrows;
    double *b = make_b(H, st), *x = calloc((size_t)(n * K), sizeof *x);
    double *x1 = malloc((size_t)n * sizeof *x1);
    ck_assert(x && x1);
    hisp_vector B = test_vector_of(ctx, t, n * K, b), X = NULL;
    CK_OK(ctx, hisp_vector_set_columns(B, K, HISP_ORDER_COL));
    CK_OK(ctx, hisp_vector_create_columns(ctx, t, n, K, HISP_ORDER_COL, &X));
    hisp_solver s = test_solver(ctx, m, false, rtol, maxit);
    CK_OK(ctx, hisp_solver_set_preconditioner(s, pc));
    hisp_solve_info info[K];
    CK_OK(ctx, hisp_solver_solve_columns(s, A, B, X, info));
    test_vector_values(ctx, X, t, n * K, x);
    for (int j = 0; j < K; j++) {
        /* the column alone */
        hisp_vector b1 = test_vector_of(ctx, t, n, b + j * n), y = NULL;
        CK_OK(ctx, hisp_vector_create(ctx, t, n, &y));
        hisp_solve_info one;
        CK_OK(ctx, hisp_solver_solve(s, A, b1, y, &one));
        test_vector_values(ctx, y, t, n, x1);
        if (info[j].lock_step) {
            /* in lock step: the same stop; the iterations within a check
             * interval's overshoot of the column's own; x within rounding of
             * the SpMM's other summation order, amplified by A's condition */
            int64_t d = info[j].iterations - one.iterations;
            ck_assert_msg(info[j].reason == one.reason && llabs(d) <= 2 + one.iterations / 10,
                          "%s column %d: %lld iterations (%s) in lock step, alone %lld (%s)", what,
                          j, (long long)info[j].iterations, hisp_stop_reason_name(info[j].reason),
                          (long long)one.iterations, hisp_stop_reason_name(one.reason));
            double dx = 0, xm = 0;
            for (int64_t i = 0; i < n; i++) {
                dx = fmax(dx, fabs(x1[i] - x[j * n + i]));
                xm = fmax(xm, fabs(x1[i]));
            }
            ck_assert_msg(dx <= 1e4 * rtol * xm, "%s column %d: x differs by %g (max %g)", what, j,
                          dx, xm);
        } else {
            ck_assert_msg(info[j].iterations == one.iterations && info[j].reason == one.reason,
                          "%s column %d: %lld iterations (%s), alone %lld (%s)", what, j,
                          (long long)info[j].iterations, hisp_stop_reason_name(info[j].reason),
                          (long long)one.iterations, hisp_stop_reason_name(one.reason));
            ck_assert_msg(!memcmp(x1, x + j * n, (size_t)n * sizeof *x1),
                          "%s column %d: x differs from the column's own solve", what, j);
        }
        /* CG and BiCGSTAB with none or Jacobi on a device run in lock step
         * (the zero column alone) */
        ck_assert_msg(info[j].lock_step == (lock && j != 2), "%s column %d: lock_step %d", what, j,
                      info[j].lock_step);
        /* the truth, from H */
        double rel = test_hcsr_residual(H, b + j * n, x + j * n);
        if (j == 2) {
            ck_assert_msg(info[j].iterations == 0 && info[j].converged, "%s: zero column", what);
            for (int64_t i = 0; i < n; i++)
                ck_assert(x[j * n + i] == 0);
        } else if (info[j].converged) {
            ck_assert_msg(rel <= rtol * 1.01, "%s column %d: true residual %g", what, j, rel);
        }
        /* b = 0: no relative residual; f32: the library recomputes the residual
         * in f32 (here within 2e-6, about 17 f32 epsilons, of the truth) */
        double slack = t == HISP_F32 ? 2e-6 : 1e-6 * fmax(rel, 1e-300) + 1e-15;
        if (j != 2)
            ck_assert_msg(fabs(info[j].relative_residual - rel) <= slack,
                          "%s column %d: reported %g, true %g", what, j, info[j].relative_residual,
                          rel);
        hisp_vector_destroy(&b1);
        hisp_vector_destroy(&y);
    }
    if (maxit > 100) /* the columns stop at different iterations */
        ck_assert_msg(info[0].iterations != info[1].iterations ||
                          info[1].iterations != info[3].iterations,
                      "%s: every column took %lld iterations", what, (long long)info[0].iterations);
    hisp_solver_destroy(&s);
    hisp_vector_destroy(&B);
    hisp_vector_destroy(&X);
    free(b), free(x), free(x1);
}

START_TEST(test_columns)
{
    hisp_context ctx = test_context(_i);
    if (!test_fp64(ctx)) {
        test_skip("solver_columns on %s: no f64", test_label(_i));
        hisp_context_destroy(&ctx);
        return;
    }
    uint64_t st = test_seed();
    test_hcsr H = test_hcsr_generate(ctx, HISP_GEN_POISSON2D, 24);
    hisp_matrix A = test_hcsr_matrix(ctx, &H, HISP_F64, HISP_FORMAT_CSR);
    const hisp_type f = HISP_F64;
    check_method(ctx, &H, A, f, 1e-9, HISP_SOLVER_CG, HISP_PRECOND_NONE, 2000, &st, "cg");
    check_method(ctx, &H, A, f, 1e-9, HISP_SOLVER_BICGSTAB, HISP_PRECOND_JACOBI, 2000, &st,
                 "bicgstab");
    check_method(ctx, &H, A, f, 1e-9, HISP_SOLVER_GMRES, HISP_PRECOND_NONE, 2000, &st, "gmres");
    check_method(ctx, &H, A, f, 1e-9, HISP_SOLVER_CG, HISP_PRECOND_AMG, 2000, &st, "amg-cg");
    check_method(ctx, &H, A, f, 1e-9, HISP_SOLVER_CG, HISP_PRECOND_JACOBI, 2000, &st, "jacobi-cg");
    check_method(ctx, &H, A, f, 1e-9, HISP_SOLVER_BICGSTAB, HISP_PRECOND_ILU0, 2000, &st,
                 "ilu0-bicgstab");
    /* an iteration limit: some columns stop by it */
    check_method(ctx, &H, A, f, 1e-9, HISP_SOLVER_CG, HISP_PRECOND_NONE, 12, &st,
                 "cg, 12 iterations");
    /* f32: every converged column's true residual (in double, from H) meets rtol */
    hisp_matrix A32 = test_hcsr_matrix(ctx, &H, HISP_F32, HISP_FORMAT_CSR);
    check_method(ctx, &H, A32, HISP_F32, 1e-5, HISP_SOLVER_CG, HISP_PRECOND_JACOBI, 2000, &st,
                 "f32 cg");
    /* below what f32 reaches: the recurrence converges, the truth may not */
    check_method(ctx, &H, A32, HISP_F32, 1e-7, HISP_SOLVER_CG, HISP_PRECOND_NONE, 2000, &st,
                 "f32 cg, tight");
    hisp_matrix_destroy(&A32);
    hisp_matrix_destroy(&A);
    test_hcsr_free(&H);
    hisp_context_destroy(&ctx);
}
END_TEST

/* an indefinite A (a Laplacian shifted into the middle of its spectrum):
 * a column whose CG breaks down is solved alone from x0 in the lock step,
 * so it reports what its own solve reports, bit for bit */
START_TEST(test_breakdown)
{
    hisp_context ctx = test_context(_i);
    if (!test_fp64(ctx)) {
        hisp_context_destroy(&ctx);
        return;
    }
    uint64_t st = test_seed();
    test_hcsr H = test_hcsr_generate(ctx, HISP_GEN_POISSON2D, 12);
    for (int64_t i = 0; i < H.nrows; i++)
        for (int64_t e = H.ptr[i]; e < H.ptr[i + 1]; e++)
            if (H.col[e] == i) H.val[e] -= 4;
    hisp_matrix A = test_hcsr_matrix(ctx, &H, HISP_F64, HISP_FORMAT_CSR);
    int64_t n = H.nrows;
    double *b = malloc((size_t)(n * K) * sizeof *b), *x = malloc((size_t)(n * K) * sizeof *x);
    double *x1 = malloc((size_t)n * sizeof *x1);
    ck_assert(b && x && x1);
    for (int64_t i = 0; i < n * K; i++)
        b[i] = test_uniform(&st);
    hisp_vector B = test_vector_of(ctx, HISP_F64, n * K, b), X = NULL;
    CK_OK(ctx, hisp_vector_set_columns(B, K, HISP_ORDER_COL));
    CK_OK(ctx, hisp_vector_create_columns(ctx, HISP_F64, n, K, HISP_ORDER_COL, &X));
    hisp_solver s = test_solver(ctx, HISP_SOLVER_CG, false, 1e-8, 500);
    hisp_solve_info info[K];
    CK_OK(ctx, hisp_solver_solve_columns(s, A, B, X, info));
    test_vector_values(ctx, X, HISP_F64, n * K, x);
    int broke = 0;
    for (int j = 0; j < K; j++) {
        hisp_vector b1 = test_vector_of(ctx, HISP_F64, n, b + j * n), y = NULL;
        CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, n, &y));
        hisp_solve_info one;
        CK_OK(ctx, hisp_solver_solve(s, A, b1, y, &one));
        test_vector_values(ctx, y, HISP_F64, n, x1);
        ck_assert_msg(info[j].reason == one.reason, "column %d: %s, alone %s", j,
                      hisp_stop_reason_name(info[j].reason), hisp_stop_reason_name(one.reason));
        if (one.reason == HISP_STOP_INDEFINITE) {
            broke++;
            ck_assert_msg(!info[j].lock_step && info[j].iterations == one.iterations &&
                              !memcmp(x1, x + j * n, (size_t)n * sizeof *x1),
                          "column %d: the breakdown not as its own solve's", j);
        }
        hisp_vector_destroy(&b1);
        hisp_vector_destroy(&y);
    }
    ck_assert_msg(broke > 0, "no column broke down");
    hisp_solver_destroy(&s);
    hisp_vector_destroy(&B);
    hisp_vector_destroy(&X);
    hisp_matrix_destroy(&A);
    test_hcsr_free(&H);
    free(b), free(x), free(x1);
    hisp_context_destroy(&ctx);
}
END_TEST

/* ||b - A x|| / ||b|| of complex vectors (interleaved) in double, from H */
static double complex_residual(const test_hcsr *H, const double *b, const double *x)
{
    double rr = 0, bb = 0;
    for (int64_t i = 0; i < H->nrows; i++) {
        double re = b[2 * i], im = b[2 * i + 1];
        for (int64_t e = H->ptr[i]; e < H->ptr[i + 1]; e++) {
            double ar = H->val[2 * e], ai = H->val[2 * e + 1];
            double xr = x[2 * H->col[e]], xi = x[2 * H->col[e] + 1];
            re -= ar * xr - ai * xi;
            im -= ar * xi + ai * xr;
        }
        rr += re * re + im * im;
        bb += b[2 * i] * b[2 * i] + b[2 * i + 1] * b[2 * i + 1];
    }
    return sqrt(rr / bb);
}

/* complex entries (helmholtz, c64) with Jacobi-BiCGSTAB: in lock step on a
 * device (the SpMM column by column there), each column as its own solve */
START_TEST(test_complex)
{
    hisp_context ctx = test_context(_i);
    if (!test_fp64(ctx)) {
        hisp_context_destroy(&ctx);
        return;
    }
    uint64_t st = test_seed();
    hisp_matrix G = NULL;
    CK_OK(ctx, hisp_matrix_generate_compound(ctx, HISP_CGEN_HELMHOLTZ, 12, 5, HISP_C64, &G));
    test_hcsr H = test_hcsr_of(ctx, G);
    int64_t n = H.nrows;
    double *b = malloc((size_t)(2 * n * K) * sizeof *b),
           *x = malloc((size_t)(2 * n * K) * sizeof *x);
    ck_assert(b && x);
    for (int64_t i = 0; i < 2 * n * K; i++)
        b[i] = test_uniform(&st);
    hisp_vector B = test_vector_of(ctx, HISP_C64, n * K, b), X = NULL;
    CK_OK(ctx, hisp_vector_set_columns(B, K, HISP_ORDER_COL));
    CK_OK(ctx, hisp_vector_create_columns(ctx, HISP_C64, n, K, HISP_ORDER_COL, &X));
    hisp_solver s = test_solver(ctx, HISP_SOLVER_BICGSTAB, true, 1e-9, 1000);
    hisp_solve_info info[K];
    CK_OK(ctx, hisp_solver_solve_columns(s, G, B, X, info));
    test_vector_values(ctx, X, HISP_C64, n * K, x);
    for (int j = 0; j < K; j++) {
        hisp_vector b1 = test_vector_of(ctx, HISP_C64, n, b + 2 * j * n), y = NULL;
        CK_OK(ctx, hisp_vector_create(ctx, HISP_C64, n, &y));
        hisp_solve_info one;
        CK_OK(ctx, hisp_solver_solve(s, G, b1, y, &one));
        ck_assert_msg(info[j].converged && one.converged &&
                          llabs(info[j].iterations - one.iterations) <= 2 + one.iterations / 10,
                      "column %d: %lld iterations (%s), alone %lld (%s)", j,
                      (long long)info[j].iterations, hisp_stop_reason_name(info[j].reason),
                      (long long)one.iterations, hisp_stop_reason_name(one.reason));
        ck_assert_int_eq(info[j].lock_step, ctx->kind != HISP_BACKEND_REFERENCE);
        double rel = complex_residual(&H, b + 2 * j * n, x + 2 * j * n);
        ck_assert_msg(rel <= 1e-9 * 1.01 && fabs(info[j].relative_residual - rel) <= 1e-6 * rel,
                      "column %d: true residual %g, reported %g", j, rel,
                      info[j].relative_residual);
        hisp_vector_destroy(&b1);
        hisp_vector_destroy(&y);
    }
    hisp_solver_destroy(&s);
    hisp_vector_destroy(&B);
    hisp_vector_destroy(&X);
    hisp_matrix_destroy(&G);
    test_hcsr_free(&H);
    free(b), free(x);
    hisp_context_destroy(&ctx);
}
END_TEST

START_TEST(test_errors)
{
    hisp_context ctx = test_context(_i);
    uint64_t st = test_seed();
    hisp_matrix A = test_random_matrix(ctx, HISP_F64, 20, 20, 0.2, &st);
    hisp_vector B = NULL, X = NULL, R = NULL, b = NULL, x = NULL;
    CK_OK(ctx, hisp_vector_create_columns(ctx, HISP_F64, 20, 3, HISP_ORDER_COL, &B));
    CK_OK(ctx, hisp_vector_create_columns(ctx, HISP_F64, 20, 2, HISP_ORDER_COL, &X));
    CK_OK(ctx, hisp_vector_create_columns(ctx, HISP_F64, 20, 3, HISP_ORDER_ROW, &R));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, 20, &b));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, 20, &x));
    hisp_solver s = test_solver(ctx, HISP_SOLVER_GMRES, false, 1e-8, 50);
    ck_assert_int_eq(hisp_solver_solve_columns(s, A, B, X, NULL), HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_solver_solve_columns(s, A, B, B, NULL), HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_solver_solve_columns(NULL, A, B, X, NULL), HISP_ERR_INVALID_HANDLE);
    ck_assert_int_eq(hisp_solver_solve_columns(s, A, R, B, NULL), HISP_ERR_UNSUPPORTED);
    hisp_error_info e = {0};
    CK_OK(ctx, hisp_context_last_error(ctx, &e));
    ck_assert_msg(e.message && strstr(e.message, "column-major"), "%s", e.message);
    CK_OK(ctx, hisp_vector_set_columns(X, 4, HISP_ORDER_COL)); /* 40 entries: 10 rows */
    ck_assert_int_eq(hisp_solver_solve_columns(s, A, B, X, NULL), HISP_ERR_INVALID_ARGUMENT);
    /* k = 1: hisp_solver_solve */
    const double one = 1;
    CK_OK(ctx, hisp_vector_fill(b, hisp_scalar_host(&one)));
    hisp_solve_info i1;
    CK_OK(ctx, hisp_solver_solve_columns(s, A, b, x, &i1));
    ck_assert(i1.iterations > 0);
    hisp_vector *vs[] = {&B, &X, &R, &b, &x};
    for (size_t i = 0; i < sizeof vs / sizeof *vs; i++)
        hisp_vector_destroy(vs[i]);
    hisp_solver_destroy(&s);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

/* a failure anywhere in the call (fresh context: the kernels' setup too)
 * is a status; X stays readable and a solve afterwards succeeds */
START_TEST(test_alloc_failures)
{
    int fails = 0, done = 0;
    for (long f = 1; f < 200 && !done; f++) {
        hisp_context ctx = test_context(_i);
        if (!test_fp64(ctx)) {
            hisp_context_destroy(&ctx);
            return;
        }
        test_hcsr H = test_hcsr_generate(ctx, HISP_GEN_POISSON2D, 6);
        hisp_matrix A = test_hcsr_matrix(ctx, &H, HISP_F64, HISP_FORMAT_CSR);
        hisp_vector B = NULL, X = NULL;
        const double one = 1;
        CK_OK(ctx, hisp_vector_create_columns(ctx, HISP_F64, 36, 3, HISP_ORDER_COL, &B));
        CK_OK(ctx, hisp_vector_create_columns(ctx, HISP_F64, 36, 3, HISP_ORDER_COL, &X));
        CK_OK(ctx, hisp_vector_fill(B, hisp_scalar_host(&one)));
        hisp_solver s = test_solver(ctx, HISP_SOLVER_CG, true, 1e-10, 500);
        hispi_alloc_fail_after(f);
        hisp_status r = hisp_solver_solve_columns(s, A, B, X, NULL);
        hispi_alloc_fail_after(0);
        if (r) {
            ck_assert_msg(r == HISP_ERR_OUT_OF_HOST_MEMORY, "failure %ld: %s", f,
                          hisp_status_string(r));
            fails++;
            double xs[108];
            CK_OK(ctx, hisp_vector_read(X, xs));
            hisp_solve_info in[3];
            CK_OK(ctx, hisp_solver_solve_columns(s, A, B, X, in));
            for (int j = 0; j < 3; j++)
                ck_assert_msg(in[j].converged, "after failure %ld: column %d %s after %lld", f, j,
                              hisp_stop_reason_name(in[j].reason), (long long)in[j].iterations);
        } else {
            done = 1;
        }
        hisp_solver_destroy(&s);
        hisp_vector_destroy(&B);
        hisp_vector_destroy(&X);
        hisp_matrix_destroy(&A);
        test_hcsr_free(&H);
        hisp_context_destroy(&ctx);
    }
    ck_assert_msg(done && fails > 0, "%d failures, done %d", fails, done);
}
END_TEST

Suite *suite_solver_columns(void)
{
    Suite *s = suite_create("solver_columns");
    TCase *tc = test_tcase(s, "solver_columns", 900);
    int n = test_targets(NULL);
    tcase_add_loop_test(tc, test_columns, 0, n);
    tcase_add_loop_test(tc, test_breakdown, 0, n);
    tcase_add_loop_test(tc, test_complex, 0, n);
    tcase_add_loop_test(tc, test_errors, 0, n);
    tcase_add_loop_test(tc, test_alloc_failures, 0, n);
    return s;
}
