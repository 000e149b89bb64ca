/* Krylov solvers over several devices (hisp_solver_solve_dist) and over MPI
 * ranks (hisp-mpi solve --mpi): CG, BiCGSTAB and GMRES with and without
 * Jacobi on plans of 2 and 3 parts (several reference contexts; PoCL
 * sub-devices), f64 and f32, compared with the one-context solve of the same
 * matrix on fresh random right-hand sides; bad arguments give clear errors.
 * Beneath them: the windowed product (hispi_mspmv_window, OWNED vectors)
 * against the all-gather and hisp_mspmv_dist, and vector-algebra views at
 * different offsets in one call. */
#include "msrep/msrep_plan.h"
#include "fixture_plan.h"
#include "fixture_solver.h"

#include <malloc.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A g^2 x g^2 5-point Laplacian scaled as D L D with a random positive D,
 * 1 <= D_ii < 1 + 2 amp (SPD, badly scaled: Jacobi matters); conv != 0 adds
 * a nonsymmetric convection term and a diagonal shift (BiCGSTAB). */
static hisp_matrix scaled_matrix(hisp_context ctx, hisp_type t, int g, double conv, double amp,
                                 uint64_t *st)
{
    int64_t n = (int64_t)g * g, k = 0;
    int64_t *ptr = malloc(((size_t)n + 1) * sizeof *ptr);
    int32_t *col = malloc((size_t)n * 5 * sizeof *col);
    double *val = malloc((size_t)n * 5 * sizeof *val), *d = malloc((size_t)n * sizeof *d);
    void *tv = malloc((size_t)n * 5 * hisp_type_size(t));
    ck_assert(ptr && col && val && d && tv);
    for (int64_t i = 0; i < n; i++)
        d[i] = 1 + amp * (test_uniform(st) + 1);
    for (int64_t i = 0; i < n; i++) {
        int r = (int)(i / g), c = (int)(i % g);
        ptr[i] = k;
        int64_t nb[5] = {r > 0 ? i - g : -1, c > 0 ? i - 1 : -1, i, c < g - 1 ? i + 1 : -1,
                         r < g - 1 ? i + g : -1};
        for (int q = 0; q < 5; q++) {
            if (nb[q] < 0) continue;
            double a = nb[q] == i ? (conv != 0 ? 5 : 4) : -1;
            if (q == 3) a -= conv; /* upwind convection */
            if (q == 1) a += conv;
            col[k] = (int32_t)nb[q];
            val[k++] = d[i] * a * d[nb[q]];
        }
    }
    ptr[n] = k;
    for (int64_t q = 0; q < k; q++) {
        if (t == HISP_F32)
            ((float *)tv)[q] = (float)val[q];
        else
            ((double *)tv)[q] = val[q];
    }
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_create_csr(ctx, t, n, n, ptr, col, tv, &A));
    free(ptr);
    free(col);
    free(val);
    free(d);
    free(tv);
    return A;
}

/* BiCGSTAB's and f32's iteration counts drift with rounding on harder
 * problems: they get the milder scaling. */
static hisp_matrix test_matrix(hisp_context ctx, hisp_type t, int g, double conv, uint64_t *st)
{
    return scaled_matrix(ctx, t, g, conv, conv != 0 || t == HISP_F32 ? 0.3 : 1, st);
}

static void *random_array(hisp_type t, int64_t n, uint64_t *st)
{
    void *a = malloc((size_t)n * hisp_type_size(t));
    ck_assert_ptr_nonnull(a);
    test_fill_uniform(t, a, n, st);
    return a;
}

static hisp_solver make_solver(hisp_context ctx, hisp_solver_method m, hisp_precond pc, hisp_type t)
{
    hisp_solver s = test_solver(ctx, m, false, t == HISP_F32 ? 1e-5 : 1e-10, 2000);
    CK_OK(ctx, hisp_solver_set_preconditioner(s, pc));
    if (m == HISP_SOLVER_GMRES) CK_OK(ctx, hisp_solver_set_restart(s, 8)); /* several cycles */
    return s;
}

/* The time breakdown of a solve (hisp_solve_info): each part >= 0, their
 * sum within the solve's time; timed: the products took time, else (a
 * one-context solve on a device backend, whose calls are queued) all 0. */
static void check_breakdown(const hisp_solve_info *in, bool timed, const char *what,
                            const char *where)
{
    double sum = in->product_ms + in->vector_ms + in->reduce_ms;
    ck_assert_msg(in->product_ms >= 0 && in->vector_ms >= 0 && in->reduce_ms >= 0,
                  "%s, %s: a negative time (product %g, vector %g, reduce %g ms)", what, where,
                  in->product_ms, in->vector_ms, in->reduce_ms);
    ck_assert_msg(sum <= in->ms * (1 + 1e-12), "%s, %s: product %g + vector %g + reduce %g > %g ms",
                  what, where, in->product_ms, in->vector_ms, in->reduce_ms, in->ms);
    if (timed)
        ck_assert_msg(in->product_ms > 0 && in->reduce_ms > 0,
                      "%s, %s: product %g ms, reduce %g ms: not measured", what, where,
                      in->product_ms, in->reduce_ms);
    else
        ck_assert_msg(sum == 0, "%s, %s: a breakdown of queued calls (%g ms)", what, where, sum);
}

/* A reported "converged" against ||b - A x|| recomputed here in double from
 * A's host copy, b and x (f32 or f64 arrays): within rtol plus what the
 * rounding of the solver's own residual in t may add, (row length + 2) eps
 * (|b| + |A||x|); and the reported residual norm is x's. */
static void expect_true(const test_hcsr *H, hisp_type t, const void *b, const void *x,
                        const hisp_solve_info *in, double rtol, const char *what, const char *where)
{
    int64_t n = H->nrows, wmax = 1;
    double *bd = malloc((size_t)n * sizeof *bd), *xd = malloc((size_t)n * sizeof *xd);
    ck_assert(bd && xd);
    test_from_type(t, b, bd, n), test_from_type(t, x, xd, n);
    double eps = t == HISP_F32 ? 0x1p-24 : 0x1p-53, rr = 0, ee = 0, bb = 0;
    for (int64_t i = 0; i < n; i++)
        if (H->ptr[i + 1] - H->ptr[i] > wmax) wmax = H->ptr[i + 1] - H->ptr[i];
    for (int64_t i = 0; i < n; i++) {
        double r = bd[i], e = fabs(bd[i]);
        for (int64_t k = H->ptr[i]; k < H->ptr[i + 1]; k++)
            r -= H->val[k] * xd[H->col[k]], e += fabs(H->val[k] * xd[H->col[k]]);
        e *= (double)(wmax + 2) * eps;
        rr += r * r, ee += e * e, bb += bd[i] * bd[i];
    }
    double truth = sqrt(rr), bound = sqrt(ee), bn = sqrt(bb);
    ck_assert_msg(fabs(in->residual_norm - truth) <= 1.01 * bound + 1e-6 * truth,
                  "%s, %s: reported residual %.6g, host %.6g (rounding bound %.3g)", what, where,
                  in->residual_norm, truth, bound);
    if (in->converged)
        ck_assert_msg(truth <= rtol * bn * (1 + 1e-6) + bound,
                      "%s, %s: converged, but ||b - A x|| / ||b|| = %.3g > rtol %g", what, where,
                      truth / bn, rtol);
    free(bd), free(xd);
}

/* One case: the distributed solve against the one-context solve, from
 * random b and x0 (ref: ctx on the reference backend, whose one-context
 * solves have a breakdown). */
static void compare(hisp_context ctx, hisp_matrix A, hisp_mplan plan, hisp_type t,
                    hisp_solver_method m, hisp_precond pc, uint64_t *st, const char *what)
{
    bool ref = ctx->kind == HISP_BACKEND_REFERENCE;
    hisp_matrix_info mi;
    CK_OK(ctx, hisp_matrix_get_info(A, &mi));
    int64_t n = mi.nrows;
    size_t bytes = (size_t)n * hisp_type_size(t);
    void *b = random_array(t, n, st), *x0 = random_array(t, n, st);
    hisp_solver s = make_solver(ctx, m, pc, t);
    /* one context */
    hisp_vector bv = NULL, xv = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, t, n, &bv));
    CK_OK(ctx, hisp_vector_create(ctx, t, n, &xv));
    CK_OK(ctx, hisp_vector_write(bv, b));
    CK_OK(ctx, hisp_vector_write(xv, x0));
    hisp_solve_info i1, i2;
    CK_OK(ctx, hisp_solver_solve(s, A, bv, xv, &i1));
    void *x1 = malloc(bytes), *x2 = malloc(bytes), *b2 = malloc(bytes);
    ck_assert(x1 && x2 && b2);
    CK_OK(ctx, hisp_vector_read(xv, x1));
    /* over the plan */
    hisp_mvector bd = NULL, xd = NULL;
    CK_OK(ctx, hisp_mvector_create(plan, HISP_MVEC_ROWS, &bd));
    CK_OK(ctx, hisp_mvector_create(plan, HISP_MVEC_ROWS, &xd));
    CK_OK(ctx, hisp_mvector_write(bd, b));
    CK_OK(ctx, hisp_mvector_write(xd, x0));
    CK_OK(ctx, hisp_solver_solve_dist(s, plan, bd, xd, &i2));
    CK_OK(ctx, hisp_mvector_read(xd, x2));
    CK_OK(ctx, hisp_mvector_read(bd, b2));
    ck_assert_msg(memcmp(b2, b, bytes) == 0, "%s: b changed", what);
    ck_assert_msg(i1.converged && i2.converged, "%s: converged one context %d (%s), dist %d (%s)",
                  what, i1.converged, hisp_stop_reason_name(i1.reason), i2.converged,
                  hisp_stop_reason_name(i2.reason));
    /* f32: the one-context space keeps its scalars in f32 on the device, the
     * distributed one sums and divides in double on the host, so their
     * recurrences drift apart by rounding; a tolerance of 1e-5 is near f32's
     * attainable accuracy, where BiCGSTAB stalls for a few iterations (72
     * against 75 seen for CG, 18 against 24 for BiCGSTAB); in f64 the dots
     * are summed in another order per part (151 against 148 seen) */
    long long it = (long long)i1.iterations, slack = t == HISP_F32 ? 3 + it / 2 : 2 + it / 25;
    ck_assert_msg(llabs((long long)(i1.iterations - i2.iterations)) <= slack,
                  "%s: %lld iterations on one context, %lld over the plan", what,
                  (long long)i1.iterations, (long long)i2.iterations);
    double err = test_rel_error(t, x2, x1, n), tol = t == HISP_F32 ? 2e-3 : 1e-7;
    ck_assert_msg(err <= tol, "%s: solutions differ by %.3e (tolerance %.0e)", what, err, tol);
    ck_assert(fabs(i2.relative_residual - i2.residual_norm / i2.rhs_norm) <= 1e-12);
    test_hcsr H = test_hcsr_of(ctx, A);
    double rtol = t == HISP_F32 ? 1e-5 : 1e-10; /* make_solver's */
    expect_true(&H, t, b, x1, &i1, rtol, what, "one context");
    expect_true(&H, t, b, x2, &i2, rtol, what, "over the plan");
    test_hcsr_free(&H);
    ck_assert_msg(i1.precond == pc && i2.precond == pc, "%s: ran %s and %s", what,
                  hisp_precond_name(i1.precond), hisp_precond_name(i2.precond));
    /* Chebyshev's bound stays with the plan: the solve below runs no Lanczos */
    if (pc == HISP_PRECOND_CHEBYSHEV) ck_assert(plan->cheb_hi > 0);
    check_breakdown(&i2, true, what, "over the plan");
    check_breakdown(&i1, ref, what, "one context");
    /* again from x0: the work vectors the plan kept serve, and the solve is
     * the same to the bit (stale entries of theirs are never read) */
    ck_assert_msg(plan->nspare > 0, "%s: the plan kept no work vectors", what);
    CK_OK(ctx, hisp_mvector_write(xd, x0));
    hisp_solve_info i3;
    CK_OK(ctx, hisp_solver_solve_dist(s, plan, bd, xd, &i3));
    void *x3 = malloc(bytes);
    ck_assert(x3);
    CK_OK(ctx, hisp_mvector_read(xd, x3));
    ck_assert_msg(i3.iterations == i2.iterations && memcmp(x3, x2, bytes) == 0,
                  "%s: a second solve over the plan differs (%lld against %lld iterations)", what,
                  (long long)i3.iterations, (long long)i2.iterations);
    free(x3);
    hisp_mvector_destroy(&bd);
    hisp_mvector_destroy(&xd);
    hisp_vector_destroy(&bv);
    hisp_vector_destroy(&xv);
    hisp_solver_destroy(&s);
    free(x1);
    free(x2);
    free(b2);
    free(b);
    free(x0);
}

START_TEST(test_dist_solve)
{
    test_plan_fx f = test_plan_fx_make(_i);
    hisp_context ctx = f.ctx;
    uint64_t st = test_seed() ^ (0x5d15 + (uint64_t)_i);
    const struct {
        int nd;
        hisp_partition_kind kind;
    } plans[] = {{2, HISP_PART_PCSR}, {3, HISP_PART_PCSR}, {3, HISP_PART_ROWBLOCK}};
    for (int ti = 0; ti < 2; ti++) {
        hisp_type t = ti == 0 ? HISP_F64 : HISP_F32;
        if (t == HISP_F64 && !f.info.fp64) continue;
        hisp_matrix As = test_matrix(ctx, t, 23, 0, &st), An = test_matrix(ctx, t, 23, 0.4, &st);
        for (size_t p = 0; p < sizeof plans / sizeof plans[0]; p++) {
            for (int m = 0; m < 3; m++) {
                static const hisp_solver_method meth[3] = {HISP_SOLVER_CG, HISP_SOLVER_BICGSTAB,
                                                           HISP_SOLVER_GMRES};
                hisp_matrix A = m == 0 ? As : An;
                hisp_mplan plan = NULL;
                CK_OK(ctx, hisp_mplan_create(A, plans[p].nd, f.refs, plans[p].kind,
                                             HISP_MPLAN_SUBDEVICES, &plan));
                static const hisp_precond pcs[] = {HISP_PRECOND_NONE, HISP_PRECOND_JACOBI,
                                                   HISP_PRECOND_CHEBYSHEV};
                for (size_t pc = 0; pc < sizeof pcs / sizeof pcs[0]; pc++) {
                    char what[512];
                    snprintf(what, sizeof what, "%s %s %s, %d x %s, %s", f.t->label,
                             hisp_solver_method_name(meth[m]), hisp_precond_name(pcs[pc]),
                             plans[p].nd, hisp_partition_name(plans[p].kind), hisp_type_name(t));
                    compare(ctx, A, plan, t, meth[m], pcs[pc], &st, what);
                }
                hisp_mplan_destroy(&plan);
            }
        }
        hisp_matrix_destroy(&As);
        hisp_matrix_destroy(&An);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* One-context solves on each target: a breakdown on the reference backend
 * (host loops), none where the calls are queued on a device, unless the
 * debug option makes each step wait (second pass). */
START_TEST(test_local_breakdown)
{
    uint64_t st = test_seed() ^ (0xb4d + (uint64_t)_i);
    hisp_context ctx = test_context(_i);
    hisp_type t = test_fp64(ctx) ? HISP_F64 : HISP_F32;
    for (int pass = 0; pass < 4; pass++) {
        int m = pass & 1;
        bool debug = pass >= 2;
        if (pass == 2) {
            test_stderr_begin(); /* the debug log: not the run's output */
            CK_OK(ctx, hisp_context_set_option(ctx, "debug", "1"));
        }
        hisp_matrix A = test_matrix(ctx, t, 15, m ? 0.4 : 0, &st);
        int64_t n = 15 * 15;
        void *b = random_array(t, n, &st);
        hisp_vector bv = NULL, xv = NULL;
        CK_OK(ctx, hisp_vector_create(ctx, t, n, &bv));
        CK_OK(ctx, hisp_vector_create(ctx, t, n, &xv));
        CK_OK(ctx, hisp_vector_write(bv, b));
        hisp_solver s =
            make_solver(ctx, m ? HISP_SOLVER_BICGSTAB : HISP_SOLVER_CG, (hisp_precond)m, t);
        hisp_solve_info in;
        CK_OK(ctx, hisp_solver_solve(s, A, bv, xv, &in));
        ck_assert(in.converged);
        char what[300];
        snprintf(what, sizeof what, "%.200s %s%s", test_label(_i), m ? "bicgstab jacobi" : "cg",
                 debug ? " (debug)" : "");
        check_breakdown(&in, debug || test_kind(_i) == HISP_BACKEND_REFERENCE, what, "one context");
        hisp_solver_destroy(&s);
        hisp_vector_destroy(&bv);
        hisp_vector_destroy(&xv);
        hisp_matrix_destroy(&A);
        free(b);
    }
    hisp_context_destroy(&ctx);
    free(test_stderr_end());
}
END_TEST

/* ---- the windowed product and views ------------------------------------------- */

/* A random n x n CSR: a third of the rows empty (rows no part holds at the
 * cuts), the others a diagonal entry and up to 5 columns within a band of
 * +-band, sometimes one anywhere (a window wider than the band). */
static hisp_matrix window_matrix(hisp_context ctx, hisp_type t, int64_t n, int64_t band,
                                 uint64_t *st, int64_t **pp, int32_t **pc, double **pv)
{
    int64_t *ptr = malloc(((size_t)n + 1) * sizeof *ptr), k = 0;
    int32_t *col = malloc((size_t)n * 7 * sizeof *col);
    double *val = malloc((size_t)n * 7 * sizeof *val);
    void *tv = malloc((size_t)n * 7 * hisp_type_size(t));
    ck_assert(ptr && col && val && tv);
    for (int64_t i = 0; i < n; i++) {
        ptr[i] = k;
        if (test_uniform(st) < -0.33) continue;
        int64_t c = i, m = 1 + (int64_t)((test_uniform(st) + 1) * 3);
        for (int64_t q = 0; q < m; q++, c += 1 + (int64_t)((test_uniform(st) + 1) * band / 6)) {
            int64_t cc = q == 0 ? i - band / 2 + (int64_t)((test_uniform(st) + 1) * band / 4) : c;
            if (cc < 0 || cc >= n || (k > ptr[i] && cc <= col[k - 1])) continue;
            col[k] = (int32_t)cc;
            val[k++] = test_uniform(st);
        }
        int64_t far = (int64_t)((test_uniform(st) + 1) * 0.5 * (double)n);
        if (test_uniform(st) > 0.9 && (k == ptr[i] || far > col[k - 1]) && far < n) {
            col[k] = (int32_t)far;
            val[k++] = test_uniform(st);
        }
    }
    ptr[n] = k;
    for (int64_t q = 0; q < k; q++) {
        if (t == HISP_F32) {
            ((float *)tv)[q] = (float)val[q];
            val[q] = ((float *)tv)[q];
        } else {
            ((double *)tv)[q] = val[q];
        }
    }
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_create_csr(ctx, t, n, n, ptr, col, tv, &A));
    free(tv);
    *pp = ptr;
    *pc = col;
    *pv = val;
    return A;
}

static void read_mv(hisp_context ctx, hisp_mvector v, void *out)
{
    CK_OK(ctx, hisp_mvector_read(v, out));
}

/* y = A x through the all-gather and hisp_mspmv_dist, through the window
 * from a ROWS x (OWNED scratch), from an OWNED x into an OWNED y, and that
 * y as the next x: bit for bit the same products, and A x of the host. */
START_TEST(test_dist_window)
{
    test_plan_fx f = test_plan_fx_make(_i);
    hisp_context ctx = f.ctx;
    uint64_t st = test_seed() ^ (0x3d0 + (uint64_t)_i);
    const struct {
        int nd;
        hisp_partition_kind kind;
    } plans[] = {
        {2, HISP_PART_PCSR}, {3, HISP_PART_PCSR}, {3, HISP_PART_ROWBLOCK}, {4, HISP_PART_PCSR}};
    for (int ti = 0; ti < 2; ti++) {
        hisp_type t = ti == 0 ? HISP_F64 : HISP_F32;
        if (t == HISP_F64 && !f.info.fp64) continue;
        size_t es = hisp_type_size(t);
        for (int mi = 0; mi < 2; mi++) {
            int64_t n = mi == 0 ? 900 : 2000, *ptr;
            int32_t *col;
            double *val;
            hisp_matrix A = window_matrix(ctx, t, n, mi == 0 ? 60 : 300, &st, &ptr, &col, &val);
            for (size_t p = 0; p < sizeof plans / sizeof plans[0]; p++) {
                hisp_mplan plan = NULL;
                CK_OK(ctx, hisp_mplan_create(A, plans[p].nd, f.refs, plans[p].kind,
                                             HISP_MPLAN_SUBDEVICES, &plan));
                hisp_mvector xr = NULL, rep = NULL, y1 = NULL, y2 = NULL, xs = NULL, xo = NULL,
                             yo = NULL;
                CK_OK(ctx, hisp_mvector_create(plan, HISP_MVEC_ROWS, &xr));
                CK_OK(ctx, hisp_mvector_create(plan, HISP_MVEC_REPLICATED, &rep));
                CK_OK(ctx, hisp_mvector_create(plan, HISP_MVEC_ROWS, &y1));
                CK_OK(ctx, hisp_mvector_create(plan, HISP_MVEC_ROWS, &y2));
                CK_OK(ctx, hispi_mvector_create(plan, HISPI_MVEC_OWNED, &xs));
                CK_OK(ctx, hispi_mvector_create(plan, HISPI_MVEC_OWNED, &xo));
                CK_OK(ctx, hispi_mvector_create(plan, HISPI_MVEC_OWNED, &yo));
                void *h1 = malloc((size_t)n * es), *h2 = malloc((size_t)n * es),
                     *h3 = malloc((size_t)n * es);
                double *want = malloc((size_t)n * sizeof *want);
                ck_assert(h1 && h2 && h3 && want);
                unsigned char one[8], zero[8];
                hispi_store_real(t, one, 0, 1.0);
                hispi_store_real(t, zero, 0, 0.0);
                char what[400];
                snprintf(what, sizeof what, "%s, %d x %s, %s, n %lld", f.t->label, plans[p].nd,
                         hisp_partition_name(plans[p].kind), hisp_type_name(t), (long long)n);
                for (int round = 0; round < 2; round++) { /* the second over stale halos */
                    void *x = random_array(t, n, &st);
                    for (int64_t r = 0; r < n; r++) {
                        double sum = 0;
                        for (int64_t q = ptr[r]; q < ptr[r + 1]; q++)
                            sum += val[q] * hispi_load_real(t, x, col[q]);
                        want[r] = sum;
                    }
                    CK_OK(ctx, hisp_mvector_write(xr, x));
                    CK_OK(ctx, hisp_mvector_write(xo, x));
                    CK_OK(ctx, hisp_mvector_allgather(xr, rep));
                    CK_OK(ctx, hisp_mspmv_dist(plan, one, rep, zero, y1));
                    CK_OK(ctx, hispi_mspmv_window(plan, xr, xs, y2, NULL));
                    CK_OK(ctx, hispi_mspmv_window(plan, xo, xo, yo, NULL));
                    read_mv(ctx, y1, h1);
                    read_mv(ctx, y2, h2);
                    read_mv(ctx, yo, h3);
                    double err = 0, norm = 0;
                    for (int64_t r = 0; r < n; r++) {
                        double d = hispi_load_real(t, h1, r) - want[r];
                        err += d * d;
                        norm += want[r] * want[r];
                    }
                    ck_assert_msg(sqrt(err) <= (t == HISP_F32 ? 1e-5 : 1e-13) * sqrt(norm),
                                  "%s: the all-gather product is off by %.3e", what, sqrt(err));
                    ck_assert_msg(memcmp(h1, h2, (size_t)n * es) == 0,
                                  "%s: the window from a ROWS x differs", what);
                    ck_assert_msg(memcmp(h1, h3, (size_t)n * es) == 0,
                                  "%s: the window of an OWNED x into an OWNED y differs", what);
                    /* the OWNED y as the next x, against the all-gather of it */
                    CK_OK(ctx, hisp_mvector_write(xr, h3));
                    CK_OK(ctx, hisp_mvector_allgather(xr, rep));
                    CK_OK(ctx, hisp_mspmv_dist(plan, one, rep, zero, y1));
                    CK_OK(ctx, hispi_mspmv_window(plan, yo, yo, y2, NULL));
                    read_mv(ctx, y1, h1);
                    read_mv(ctx, y2, h2);
                    ck_assert_msg(memcmp(h1, h2, (size_t)n * es) == 0,
                                  "%s: the window of a product's OWNED y differs", what);
                    free(x);
                }
                ck_assert_int_eq(hispi_mspmv_window(plan, xo, xs, yo, NULL),
                                 HISP_ERR_INVALID_ARGUMENT); /* an OWNED x is its own scratch */
                hisp_mvector *all[] = {&xr, &rep, &y1, &y2, &xs, &xo, &yo};
                for (int k = 0; k < 7; k++)
                    hisp_mvector_destroy(all[k]);
                hisp_mplan_destroy(&plan);
                free(h1);
                free(h2);
                free(h3);
                free(want);
            }
            hisp_matrix_destroy(&A);
            free(ptr);
            free(col);
            free(val);
        }
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* Views at different offsets of one buffer in one call (the distributed
 * space mixes ROWS and OWNED vectors): axpby2, dot2 and axpby_dot against
 * the same arithmetic on the host. */
START_TEST(test_views_offsets)
{
    hisp_context ctx = test_context(_i);
    uint64_t st = test_seed() ^ (0x0ff5 + (uint64_t)_i);
    hisp_device_info info;
    CK_OK(ctx, hisp_context_get_device(ctx, &info));
    for (int ti = 0; ti < 2; ti++) {
        hisp_type t = ti == 0 ? HISP_F64 : HISP_F32;
        if (t == HISP_F64 && !info.fp64) continue;
        const int64_t m = 1000, off[4] = {3, 1500, 2701, 4000}, total = 5000;
        void *h = random_array(t, total, &st), *got = malloc((size_t)total * hisp_type_size(t));
        ck_assert_ptr_nonnull(got);
        double *e = malloc((size_t)total * sizeof *e);
        ck_assert_ptr_nonnull(e);
        for (int64_t q = 0; q < total; q++)
            e[q] = hispi_load_real(t, h, q);
        hisp_vector v = NULL, w[4] = {NULL, NULL, NULL, NULL};
        CK_OK(ctx, hisp_vector_create(ctx, t, total, &v));
        CK_OK(ctx, hisp_vector_write(v, h));
        void *buf = NULL;
        CK_OK(ctx, hispi_vector_device(v, true, &buf));
        for (int k = 0; k < 4; k++)
            CK_OK(ctx, hispi_vector_view(ctx, t, m, buf, off[k], &w[k]));
        double sv[4] = {0.5, -1.25, 2, 0.75}, r0 = 0, r1 = 0, r2 = 0;
        unsigned char sb[4][8], rb[3][8];
        hisp_scalar s[4];
        for (int k = 0; k < 4; k++) {
            hispi_store_real(t, sb[k], 0, sv[k]);
            s[k] = hisp_scalar_host(sb[k]);
        }
        /* w1 = w0*a + w1*b, w3 = w2*c + w3*d; dot(w0, w1), dot(w0, w3);
         * w2 = w1*a + w2*b, dot(w2, w3) */
        CK_OK(ctx, hispi_vector_axpby2(s[0], w[0], s[1], w[1], s[2], w[2], s[3], w[3]));
        CK_OK(ctx,
              hisp_vector_dot2(w[0], w[1], w[3], hisp_result_host(rb[0]), hisp_result_host(rb[1])));
        CK_OK(ctx, hisp_vector_axpby_dot(s[0], w[1], s[1], w[2], w[3], hisp_result_host(rb[2])));
        double *x0 = e + off[0], *x1 = e + off[1], *x2 = e + off[2], *x3 = e + off[3];
        for (int64_t q = 0; q < m; q++) {
            x1[q] = x0[q] * sv[0] + x1[q] * sv[1];
            x3[q] = x2[q] * sv[2] + x3[q] * sv[3];
            r0 += x0[q] * x1[q];
            r1 += x0[q] * x3[q];
        }
        for (int64_t q = 0; q < m; q++) {
            x2[q] = x1[q] * sv[0] + x2[q] * sv[1];
            r2 += x2[q] * x3[q];
        }
        for (int k = 0; k < 4; k++)
            hisp_vector_destroy(&w[k]);
        hispi_vector_device_written(v); /* written behind v's back */
        CK_OK(ctx, hisp_vector_read(v, got));
        double tol = t == HISP_F32 ? 1e-5 : 1e-13, err = 0, norm = 0;
        for (int64_t q = 0; q < total; q++) {
            double d = hispi_load_real(t, got, q) - e[q];
            err += d * d;
            norm += e[q] * e[q];
        }
        ck_assert_msg(sqrt(err) <= tol * sqrt(norm), "views: entries off by %.3e", sqrt(err));
        double want[3] = {r0, r1, r2};
        for (int k = 0; k < 3; k++) {
            double g = hispi_load_real(t, rb[k], 0);
            ck_assert_msg(fabs(g - want[k]) <= 10 * tol * (1 + fabs(want[k])) * sqrt((double)m),
                          "views: dot %d is %.17g, want %.17g", k, g, want[k]);
        }
        hisp_vector_destroy(&v);
        free(h);
        free(got);
        free(e);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

static void expect_error(hisp_context ctx, hisp_status got, hisp_status want, const char *needle)
{
    ck_assert_msg(got == want, "status %s, expected %s", hisp_status_string(got),
                  hisp_status_string(want));
    hisp_error_info e = {0};
    ck_assert_int_eq(hisp_context_last_error(ctx, &e), HISP_SUCCESS);
    ck_assert_msg(e.message && strstr(e.message, needle), "message '%s' lacks '%s'",
                  e.message ? e.message : "(none)", needle);
}

START_TEST(test_dist_errors)
{
    uint64_t st = test_seed() ^ 0xe77;
    hisp_context ctx = test_default_context();
    hisp_type t = HISP_F64;
    hisp_matrix A = test_matrix(ctx, t, 10, 0, &st);
    int64_t n = 100;
    hisp_device_ref refs[2] = {{HISP_BACKEND_REFERENCE, 0}, {HISP_BACKEND_REFERENCE, 0}};
    hisp_mplan plan = NULL, other = NULL, cols = NULL, rect = NULL;
    CK_OK(ctx, hisp_mplan_create(A, 2, refs, HISP_PART_PCSR, 0, &plan));
    CK_OK(ctx, hisp_mplan_create(A, 2, refs, HISP_PART_PCSR, 0, &other));
    CK_OK(ctx, hisp_mplan_create(A, 2, refs, HISP_PART_PCSC, 0, &cols));
    hisp_matrix R = test_random_matrix(ctx, t, 100, 80, 0.05, &st);
    CK_OK(ctx, hisp_mplan_create(R, 2, refs, HISP_PART_PCSR, 0, &rect));
    hisp_mvector b = NULL, x = NULL, rep = NULL, xo = NULL, br = NULL, xr = NULL;
    CK_OK(ctx, hisp_mvector_create(plan, HISP_MVEC_ROWS, &b));
    CK_OK(ctx, hisp_mvector_create(plan, HISP_MVEC_ROWS, &x));
    CK_OK(ctx, hisp_mvector_create(plan, HISP_MVEC_REPLICATED, &rep));
    CK_OK(ctx, hisp_mvector_create(other, HISP_MVEC_ROWS, &xo));
    CK_OK(ctx, hisp_mvector_create(rect, HISP_MVEC_ROWS, &br));
    CK_OK(ctx, hisp_mvector_create(rect, HISP_MVEC_ROWS, &xr));
    void *bh = random_array(t, n, &st), *x0 = random_array(t, n, &st), *xa = malloc(n * 8);
    ck_assert_ptr_nonnull(xa);
    CK_OK(ctx, hisp_mvector_write(b, bh));
    CK_OK(ctx, hisp_mvector_write(x, x0));
    hisp_solver s = make_solver(ctx, HISP_SOLVER_CG, HISP_PRECOND_NONE, t);
    hisp_solve_info info;
    expect_error(ctx, hisp_solver_solve_dist(s, plan, rep, x, &info), HISP_ERR_INVALID_ARGUMENT,
                 "REPLICATED");
    expect_error(ctx, hisp_solver_solve_dist(s, plan, b, xo, &info), HISP_ERR_INVALID_ARGUMENT,
                 "not a live distributed vector of this plan");
    expect_error(ctx, hisp_solver_solve_dist(s, cols, b, x, &info), HISP_ERR_UNSUPPORTED,
                 "row partition");
    expect_error(ctx, hisp_solver_solve_dist(s, rect, br, xr, &info), HISP_ERR_INVALID_ARGUMENT,
                 "square");
    expect_error(ctx, hisp_solver_solve_dist(s, plan, b, b, &info), HISP_ERR_INVALID_ARGUMENT,
                 "one vector");
    CK_OK(ctx, hisp_mvector_read(x, xa)); /* operands untouched */
    ck_assert(memcmp(xa, x0, n * 8) == 0);
    hisp_solver_destroy(&s);
    s = make_solver(ctx, HISP_SOLVER_LSQR, HISP_PRECOND_NONE, t);
    expect_error(ctx, hisp_solver_solve_dist(s, plan, b, x, &info), HISP_ERR_UNSUPPORTED, "lsqr");
    hisp_solver_destroy(&s);
    /* a zero diagonal entry: Jacobi names the row */
    int64_t ptr[4] = {0, 2, 3, 5};
    int32_t col[5] = {0, 1, 0, 1, 2};
    double val[5] = {2, 1, 1, 1, 3};
    hisp_matrix Z = NULL;
    hisp_mplan zp = NULL;
    hisp_mvector zb = NULL, zx = NULL;
    CK_OK(ctx, hisp_matrix_create_csr(ctx, t, 3, 3, ptr, col, val, &Z));
    CK_OK(ctx, hisp_mplan_create(Z, 2, refs, HISP_PART_PCSR, 0, &zp));
    CK_OK(ctx, hisp_mvector_create(zp, HISP_MVEC_ROWS, &zb));
    CK_OK(ctx, hisp_mvector_create(zp, HISP_MVEC_ROWS, &zx));
    s = make_solver(ctx, HISP_SOLVER_BICGSTAB, HISP_PRECOND_JACOBI, t);
    expect_error(ctx, hisp_solver_solve_dist(s, zp, zb, zx, &info), HISP_ERR_INVALID_ARGUMENT,
                 "row 2 has no nonzero diagonal");
    hisp_solver_destroy(&s);
    /* Chebyshev needs it positive: the same row */
    s = make_solver(ctx, HISP_SOLVER_CG, HISP_PRECOND_CHEBYSHEV, t);
    expect_error(ctx, hisp_solver_solve_dist(s, zp, zb, zx, &info), HISP_ERR_INVALID_ARGUMENT,
                 "row 2's diagonal entry is 0, not positive");
    hisp_solver_destroy(&s);
    /* the factorisations and AMG need one context */
    s = make_solver(ctx, HISP_SOLVER_GMRES, HISP_PRECOND_ILU0, t);
    expect_error(ctx, hisp_solver_solve_dist(s, zp, zb, zx, &info), HISP_ERR_UNSUPPORTED,
                 "ilu0 over an MSREP plan is not provided");
    hisp_solver_destroy(&s);
    hisp_mvector *all[] = {&b, &x, &rep, &xo, &br, &xr, &zb, &zx};
    for (int k = 0; k < 8; k++)
        hisp_mvector_destroy(all[k]);
    hisp_mplan *plans[] = {&plan, &other, &cols, &rect, &zp};
    for (int k = 0; k < 5; k++)
        hisp_mplan_destroy(plans[k]);
    hisp_matrix_destroy(&A);
    hisp_matrix_destroy(&R);
    hisp_matrix_destroy(&Z);
    free(bh);
    free(x0);
    free(xa);
    hisp_context_destroy(&ctx);
}
END_TEST

/* ---- MPI: hisp-mpi solve --mpi against the one-process solve ------------------ */

static double json_double(const char *text, const char *key)
{
    char pat[128];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(text, pat);
    return p ? strtod(p + strlen(pat), NULL) : NAN;
}

/* Runs hisp-mpi solve MTX --mpi ARGS --json over np ranks (the reference
 * backend unless ARGS names one); the exit status. */
static int run_mpi(char *out, size_t cap, int np, const char *mtx, const char *args)
{
    return test_mpirun(out, cap, np, "'%s' solve '%s' --mpi %s%s --json", test_mpi_bin(), mtx, args,
                       strstr(args, "--backend") ? "" : " --backend reference");
}

/* The one-process solve of A x = ones from x0 = 0 (the CLI's settings). */
static int64_t one_process(hisp_context ctx, hisp_matrix A, hisp_solver_method m, hisp_precond pc,
                           int64_t n)
{
    hisp_solver s = NULL;
    CK_OK(ctx, hisp_solver_create(ctx, m, &s));
    CK_OK(ctx, hisp_solver_set_preconditioner(s, pc));
    CK_OK(ctx, hisp_solver_set_tolerances(s, 1e-9, 0));
    CK_OK(ctx, hisp_solver_set_restart(s, 30));
    hisp_vector bv = NULL, xv = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, n, &bv));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, n, &xv));
    double one = 1;
    CK_OK(ctx, hisp_vector_fill(bv, hisp_scalar_host(&one)));
    hisp_solve_info i1;
    CK_OK(ctx, hisp_solver_solve(s, A, bv, xv, &i1));
    ck_assert(i1.converged);
    hisp_vector_destroy(&bv);
    hisp_vector_destroy(&xv);
    hisp_solver_destroy(&s);
    return i1.iterations;
}

/* The MPI run converged with the true residual and about the one-process
 * iteration count (rounding differs with the summation order). */
static void expect_solved(const char *out, int status, int np, int64_t iters, const char *what)
{
    ck_assert_msg(status == 0, "%s, %d ranks: status %d\n%.3000s", what, np, status, out);
    ck_assert_int_eq(test_json_int(out, "ranks"), np);
    long long it = test_json_int(out, "iterations");
    ck_assert_msg(llabs(it - (long long)iters) <= 2,
                  "%s, %d ranks: %lld iterations, one process %lld\n%s", what, np, it,
                  (long long)iters, out);
    double rel = json_double(out, "relative_residual");
    ck_assert_msg(rel <= 1e-8, "%s, %d ranks: true relative residual %g", what, np, rel);
    ck_assert_msg(strstr(out, "\"converged\": true"), "%s", out);
    ck_assert_msg(json_double(out, "ms_per_iteration") > 0, "%s", out);
    ck_assert_msg(strstr(out, "\"rank_info\""), "%s", out);
}

/* The reductions of an iteration travel together (space_local.c): CG 2
 * allreduces per iteration (with Jacobi the second carries r^H z too),
 * BiCGSTAB 3 (||r||^2 with the next r0^H r, apart where a check reads
 * ||r||^2 first); were CG 2 (3 with Jacobi) and BiCGSTAB 4. */
static void expect_batched(const char *out, hisp_solver_method m, int pc)
{
    long long it = test_json_int(out, "iterations"), calls = test_json_int(out, "allreduce_calls"),
              values = test_json_int(out, "allreduce_values");
    ck_assert_msg(calls > 0 && values >= calls, "%s", out);
    if (m == HISP_SOLVER_CG) {
        ck_assert_msg(calls <= 2 * it + 4, "cg: %lld allreduces, %lld iterations", calls, it);
        if (pc)
            ck_assert_msg(values >= 3 * it, "cg jacobi: %lld values, %lld iterations", values, it);
    } else if (m == HISP_SOLVER_BICGSTAB) {
        ck_assert_msg(calls <= 3 * it + it / 2 + 4, "bicgstab: %lld allreduces, %lld iterations",
                      calls, it);
    }
}

static const char *const method_names[3] = {"cg", "bicgstab", "gmres"};
static const hisp_solver_method methods[3] = {HISP_SOLVER_CG, HISP_SOLVER_BICGSTAB,
                                              HISP_SOLVER_GMRES};

START_TEST(test_mpi_solve)
{
    uint64_t st = test_seed() ^ 0x3b1;
    hisp_context ctx = test_default_context();
    char dir[] = "/tmp/hisp_solver_dist_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    static char out[1 << 16];
    /* CG on the SPD Laplacian, BiCGSTAB and GMRES with convection */
    for (int m = 0; m < 3; m++) {
        hisp_type t = HISP_F64;
        hisp_matrix A = test_matrix(ctx, t, 20, m ? 0.4 : 0, &st);
        char mtx[600];
        snprintf(mtx, sizeof mtx, "%s/a%d.mtx", dir, m);
        CK_OK(ctx, hisp_matrix_write_mtx(A, mtx));
        for (int pc = 0; pc < 2; pc++) {
            int64_t iters = one_process(ctx, A, methods[m], (hisp_precond)pc, 400);
            for (int np = 2; np <= 3; np++) {
                char args[256];
                snprintf(args, sizeof args,
                         "--method %s --precond %s --rtol 1e-9 --rhs ones --partition %s",
                         method_names[m], pc ? "jacobi" : "none", np == 2 ? "pcsr" : "rowblock");
                int rc = run_mpi(out, sizeof out, np, mtx, args);
                expect_solved(out, rc, np, iters, method_names[m]);
                expect_batched(out, methods[m], pc);
                /* a 20 x 20 grid cut into row blocks: a band of 20 per neighbour */
                ck_assert_int_eq(test_json_int(out, "ghost_entries_sum"), 2 * (np - 1) * 20);
            }
        }
        hisp_matrix_destroy(&A);
    }
    /* bad input: exit status 2 */
    int rc = test_mpirun(out, sizeof out, 2, "'%s' solve '%s/missing.mtx' --mpi --json",
                         test_mpi_bin(), dir);
    ck_assert_msg(rc == 2, "missing file: status %d", rc);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) {
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* A symmetric, strictly diagonally dominant (SPD) n x n matrix whose
 * off-diagonal entries sit at random columns: every rank needs scattered
 * entries from every other. */
static hisp_matrix scattered_matrix(hisp_context ctx, int64_t n, int per_row, uint64_t *st)
{
    int64_t m = n * per_row, k = 0;
    int32_t *ri = malloc((size_t)(2 * m + n) * sizeof *ri);
    int32_t *ci = malloc((size_t)(2 * m + n) * sizeof *ci);
    double *v = malloc((size_t)(2 * m + n) * sizeof *v), *sum = calloc((size_t)n, sizeof *sum);
    ck_assert(ri && ci && v && sum);
    for (int64_t e = 0; e < m; e++) {
        int32_t i = (int32_t)(e / per_row), j = (int32_t)(test_rand(st) % (uint64_t)n);
        if (i == j) continue;
        double a = -(0.55 + 0.45 * test_uniform(st)); /* in (-1, -0.1] */
        ri[k] = i, ci[k] = j, v[k++] = a;
        ri[k] = j, ci[k] = i, v[k++] = a;
        sum[i] -= a;
        sum[j] -= a;
    }
    for (int32_t i = 0; i < n; i++)
        ri[k] = i, ci[k] = i, v[k++] = sum[i] + 1;
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_create_coo(ctx, HISP_F64, n, n, k, ri, ci, v, &A));
    CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_CSR));
    free(ri);
    free(ci);
    free(v);
    free(sum);
    return A;
}

/* Off-rank columns of each row block (rowblock's cuts), summed over ranks. */
static int64_t ghosts_rowblock(hisp_context ctx, hisp_matrix A, int64_t n, int np)
{
    const int64_t *ptr;
    const int32_t *rows, *cols;
    const void *vals;
    CK_OK(ctx, hisp_matrix_host_arrays(A, &ptr, &rows, &cols, &vals));
    char *seen = malloc((size_t)n);
    ck_assert_ptr_nonnull(seen);
    int64_t total = 0;
    for (int r = 0; r < np; r++) {
        int64_t a = n * r / np, e = n * (r + 1) / np;
        memset(seen, 0, (size_t)n);
        for (int64_t k = ptr[a]; k < ptr[e]; k++)
            if ((cols[k] < a || cols[k] >= e) && !seen[cols[k]]) seen[cols[k]] = 1, total++;
    }
    free(seen);
    return total;
}

/* Scattered columns: the exact ghost sets and an exchange with several
 * peers, on the reference backend, on PoCL and on CUDA (there CG's product
 * comes through the operator's apply_dot: halo_apply_dot). */
START_TEST(test_mpi_scattered)
{
    uint64_t st = test_seed() ^ 0x5ca7;
    hisp_context ctx = test_default_context();
    char dir[] = "/tmp/hisp_solver_dist_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    static char out[1 << 16];
    int64_t n = 900;
    hisp_matrix A = scattered_matrix(ctx, n, 3, &st);
    char mtx[600];
    snprintf(mtx, sizeof mtx, "%s/s.mtx", dir);
    CK_OK(ctx, hisp_matrix_write_mtx(A, mtx));
    const test_target *tg;
    int nt = test_targets(&tg);
    bool opencl = false, cuda = false;
    for (int i = 0; i < nt; i++) {
        opencl |= tg[i].kind == HISP_BACKEND_OPENCL;
        cuda |= tg[i].kind == HISP_BACKEND_CUDA;
    }
    if (!opencl) test_skip("solver_dist mpi scattered: no OpenCL device (the PoCL runs)");
    if (!cuda) test_skip("solver_dist mpi scattered: no CUDA device (the CUDA runs, apply_dot)");
    static const char *const be_opt[3] = {"", " --backend opencl", " --backend cuda"};
    static const char *const be_name[3] = {"", " (opencl)", " (cuda)"};
    struct {
        int np, m, pc, be; /* be: 0 reference, 1 opencl, 2 cuda */
        const char *part;
    } runs[] = {{3, 0, 0, 0, "rowblock"}, {4, 2, 1, 0, "rowblock"}, {2, 1, 1, 0, "pcsr"},
                {3, 0, 1, 1, "rowblock"}, {2, 2, 0, 1, "pcsr"},     {3, 0, 0, 2, "rowblock"},
                {2, 0, 1, 2, "pcsr"},     {2, 1, 0, 2, "rowblock"}};
    for (size_t q = 0; q < sizeof runs / sizeof runs[0]; q++) {
        if ((runs[q].be == 1 && !opencl) || (runs[q].be == 2 && !cuda)) continue;
        int64_t iters = one_process(ctx, A, methods[runs[q].m], (hisp_precond)runs[q].pc, n);
        char args[256], what[64];
        snprintf(args, sizeof args, "--method %s --precond %s --rtol 1e-9 --partition %s%s",
                 method_names[runs[q].m], runs[q].pc ? "jacobi" : "none", runs[q].part,
                 be_opt[runs[q].be]);
        snprintf(what, sizeof what, "scattered %s%s", method_names[runs[q].m], be_name[runs[q].be]);
        int rc = run_mpi(out, sizeof out, runs[q].np, mtx, args);
        expect_solved(out, rc, runs[q].np, iters, what);
        expect_batched(out, methods[runs[q].m], runs[q].pc);
        if (strcmp(runs[q].part, "rowblock") == 0)
            ck_assert_int_eq(test_json_int(out, "ghost_entries_sum"),
                             ghosts_rowblock(ctx, A, n, runs[q].np));
        /* every rank hears from every other */
        char key[64];
        snprintf(key, sizeof key, "\"peers_in\": %d,", runs[q].np - 1);
        int hits = 0;
        for (const char *p = strstr(out, key); p; p = strstr(p + 1, key))
            hits++;
        ck_assert_msg(hits == runs[q].np, "%s: %d ranks with %d peers\n%s", what, hits,
                      runs[q].np - 1, out);
        if (runs[q].be)
            ck_assert_msg(strstr(out, "\"device\": {\n") && strstr(out, "\"index\": 0"), "%s", out);
    }
    hisp_matrix_destroy(&A);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) {
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* Plans made and destroyed one after another on one context, a solve on
 * each: the OpenCL worker instances (queues, programs, sub-devices) of one
 * plan serve the next (none opened after the first plan), and the heap stays
 * flat (programs loaded again for every plan grew PoCL's LLVM state by about
 * 60 KiB a plan, freed only when every cl_context of the process is). */
START_TEST(test_plans_reuse_instances)
{
    if (test_kind(_i) != HISP_BACKEND_OPENCL) return; /* the others keep nothing */
    test_plan_fx f = test_plan_fx_make(_i);
    hisp_context ctx = f.ctx;
    uint64_t st = test_seed() ^ 0x9e5;
    CK_OK(ctx, hisp_context_set_backend(ctx, f.t->kind, f.t->device));
    hisp_type t = HISP_F32;
    hisp_matrix A = test_matrix(ctx, t, 12, 0, &st);
    void *bh = random_array(t, 144, &st);
    hisp_solver s = make_solver(ctx, HISP_SOLVER_CG, HISP_PRECOND_JACOBI, t);
    long opened = 0;
    size_t heap = 0;
    int64_t iters = -1;
    for (int k = 0; k < 60; k++) {
        if (k == 20) { /* after the first plans of each kind: the steady state */
            opened = hispi_context_instances_opened();
            heap = mallinfo2().uordblks;
        }
        hisp_mplan plan = NULL;
        unsigned flags = k % 2 ? HISP_MPLAN_SUBDEVICES : 0;
        CK_OK(ctx, hisp_mplan_create(A, 2, f.refs, HISP_PART_PCSR, flags, &plan));
        hisp_mvector b = NULL, x = NULL;
        CK_OK(ctx, hisp_mvector_create(plan, HISP_MVEC_ROWS, &b));
        CK_OK(ctx, hisp_mvector_create(plan, HISP_MVEC_ROWS, &x));
        CK_OK(ctx, hisp_mvector_write(b, bh));
        hisp_solve_info info;
        CK_OK(ctx, hisp_solver_solve_dist(s, plan, b, x, &info));
        ck_assert_msg(info.converged, "plan %d: %s after %lld iterations", k,
                      hisp_stop_reason_name(info.reason), (long long)info.iterations);
        if (k % 2 && iters < 0) iters = info.iterations;
        if (k % 2) ck_assert_int_eq(info.iterations, iters);
        hisp_mvector_destroy(&b);
        hisp_mvector_destroy(&x);
        hisp_mplan_destroy(&plan);
    }
    ck_assert_msg(hispi_context_instances_opened() == opened,
                  "%ld device instances opened by 40 plans after the first 20",
                  hispi_context_instances_opened() - opened);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    size_t now = mallinfo2().uordblks; /* sanitizers: their own allocators */
    ck_assert_msg(now < heap + (1u << 20), "the heap grew by %zd KiB over 40 plans",
                  ((ssize_t)now - (ssize_t)heap) / 1024);
#else
    (void)heap;
#endif
    hisp_solver_destroy(&s);
    hisp_matrix_destroy(&A);
    free(bh);
    hisp_context_destroy(&ctx);
}
END_TEST

/* Solves over two parts of each target (PoCL: two sub-devices of the CPU),
 * each method once: the case that ThreadSanitizer runs (./hisp.sh
 * test-tsan), where the plan's workers share the job's state. */
START_TEST(test_dist_solve_threads)
{
    test_plan_fx f = test_plan_fx_make(_i);
    hisp_context ctx = f.ctx;
    uint64_t st = test_seed() ^ (0x7a5 + (uint64_t)_i);
    hisp_type t = f.info.fp64 ? HISP_F64 : HISP_F32;
    hisp_matrix As = test_matrix(ctx, t, 12, 0, &st), An = test_matrix(ctx, t, 12, 0.4, &st);
    static const hisp_solver_method meth[3] = {HISP_SOLVER_CG, HISP_SOLVER_BICGSTAB,
                                               HISP_SOLVER_GMRES};
    for (int m = 0; m < 3; m++) {
        hisp_matrix A = m == 0 ? As : An;
        hisp_mplan plan = NULL;
        CK_OK(ctx, hisp_mplan_create(A, 2, f.refs, HISP_PART_PCSR, HISP_MPLAN_SUBDEVICES, &plan));
        char what[512];
        snprintf(what, sizeof what, "%s %s, 2 x pcsr", f.t->label,
                 hisp_solver_method_name(meth[m]));
        compare(ctx, A, plan, t, meth[m], HISP_PRECOND_JACOBI, &st, what);
        hisp_mplan_destroy(&plan);
    }
    hisp_matrix_destroy(&As);
    hisp_matrix_destroy(&An);
    hisp_context_destroy(&ctx);
}
END_TEST

/* A device that fails in the middle of a product (hispi_msrep_hook.fail_part,
 * each part in turn): every worker leaves the job together, the solve and
 * hisp_mspmv_dist return the failure with its message, x is unchanged, and
 * the plan works afterwards. A worker that saw another's failure of the
 * next phase early once returned alone and left the failing one waiting at
 * the product's barrier for ever. */
START_TEST(test_dist_device_failure)
{
    test_plan_fx f = test_plan_fx_make(_i);
    hisp_context ctx = f.ctx;
    uint64_t st = test_seed() ^ (0xfa11 + (uint64_t)_i);
    hisp_type t = HISP_F32;
    hisp_matrix A = test_matrix(ctx, t, 12, 0, &st);
    int64_t n = 144;
    hisp_mplan plan = NULL;
    CK_OK(ctx, hisp_mplan_create(A, 2, f.refs, HISP_PART_PCSR, HISP_MPLAN_SUBDEVICES, &plan));
    hisp_mvector b = NULL, x = NULL, xr = NULL;
    CK_OK(ctx, hisp_mvector_create(plan, HISP_MVEC_ROWS, &b));
    CK_OK(ctx, hisp_mvector_create(plan, HISP_MVEC_ROWS, &x));
    CK_OK(ctx, hisp_mvector_create(plan, HISP_MVEC_REPLICATED, &xr));
    void *bh = random_array(t, n, &st), *x0 = random_array(t, n, &st), *xa = malloc(n * 4);
    ck_assert_ptr_nonnull(xa);
    CK_OK(ctx, hisp_mvector_write(b, bh));
    CK_OK(ctx, hisp_mvector_write(x, x0));
    hisp_solver s = make_solver(ctx, HISP_SOLVER_CG, HISP_PRECOND_NONE, t);
    hisp_solve_info info;
    float one = 1, zero = 0;
    for (int rep = 0; rep < 40; rep++) {
        hispi_msrep_hook.fail_part = 1 + rep % 2;
        expect_error(ctx, hisp_solver_solve_dist(s, plan, b, x, &info), HISP_ERR_BACKEND,
                     "failed (test hook)");
        expect_error(ctx, hisp_mspmv_dist(plan, &one, xr, &zero, b), HISP_ERR_BACKEND,
                     "failed (test hook)");
        hispi_msrep_hook.fail_part = 0;
        CK_OK(ctx, hisp_mvector_read(x, xa));
        ck_assert_msg(memcmp(xa, x0, n * 4) == 0, "%s: x changed by a failed solve", f.t->label);
        CK_OK(ctx, hisp_mvector_write(b, bh));
    }
    CK_OK(ctx, hisp_solver_solve_dist(s, plan, b, x, &info));
    ck_assert_msg(info.converged, "%s: %s", f.t->label, hisp_stop_reason_name(info.reason));
    hisp_solver_destroy(&s);
    hisp_mvector_destroy(&b);
    hisp_mvector_destroy(&x);
    hisp_mvector_destroy(&xr);
    hisp_mplan_destroy(&plan);
    hisp_matrix_destroy(&A);
    free(bh);
    free(x0);
    free(xa);
    hisp_context_destroy(&ctx);
}
END_TEST

Suite *suite_solver_dist(void)
{
    Suite *s = suite_create("solver_dist");
    TCase *tc = test_tcase(s, "plan", 1200);
    int nt = test_targets(NULL);
    tcase_add_loop_test(tc, test_dist_solve, 0, nt);
    tcase_add_loop_test(tc, test_dist_window, 0, nt);
    tcase_add_loop_test(tc, test_local_breakdown, 0, nt);
    tcase_add_loop_test(tc, test_views_offsets, 0, nt);
    tcase_add_test(tc, test_dist_errors);
    tcase_add_loop_test(tc, test_plans_reuse_instances, 0, nt);
    /* the plan's worker threads at work (also run under ThreadSanitizer) */
    tc = test_tcase(s, "threads", 1200);
    tcase_add_loop_test(tc, test_dist_solve_threads, 0, nt);
    tcase_add_loop_test(tc, test_dist_device_failure, 0, nt);
    tc = test_tcase(s, "mpi", 1200);
    if (test_mpi_bin()) {
        tcase_add_test(tc, test_mpi_solve);
        tcase_add_test(tc, test_mpi_scattered);
    } else
        test_skip("solver_dist mpi: hisp-mpi or mpirun missing (build with mpi=yes; apt-get "
                  "install libopenmpi-dev openmpi-bin)");
    return s;
}
