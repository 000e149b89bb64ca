/* ILU(0), IC(0), l1-Jacobi and Chebyshev (core/ilu/, core/solver/precond.c,
 * core/amg/amg_chebyshev.c): the
 * host factors against their definition ((L U)_ij = a_ij on the pattern,
 * (L D L^H)_ij = a_ij on the lower one, recomputed here from the factors'
 * arrays) on generated and real matrices; zero and missing pivots, empty
 * rows, duplicates and 1 x 1; the triangular solves of every target against
 * the host's (and L U z = x); CG + IC(0), GMRES and BiCGSTAB + ILU(0) on
 * every target (converged with a true residual, iterations within 2 of the
 * reference backend's), complex entries too; Jacobi's automatic l1-Jacobi;
 * the kept object and its update; errors; every allocation failed in turn;
 * Chebyshev-CG on each target (true residual, iterations within 2 of the
 * reference's, fewer with a higher degree, z against the reference's). */
#include "amg/hispi_amg.h"
#include "backend/backend.h" /* HISPI_PROG_ILU */
#include "ilu/hispi_ilu.h"
#include "solver/ksp.h"
#include "testutil.h"

#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

extern void hispi_alloc_fail_after(long);

typedef double complex cplx;

/* A 2D upwind convection-diffusion operator on an n x n grid (nonsymmetric,
 * an M-matrix), plus `shift` on the diagonal; complex types get shift's
 * imaginary part too. herm: the magnetic Laplacian instead (Hermitian
 * positive definite: off-diagonal couplings -e^(+-i 0.7)). */
static hisp_matrix grid2d(hisp_context ctx, hisp_type t, int64_t n, double beta, cplx shift,
                          bool herm)
{
    int64_t N = n * n, k = 0;
    int64_t *p = malloc((size_t)(N + 1) * 8);
    int32_t *c = malloc((size_t)N * 5 * 4);
    cplx *v = malloc((size_t)N * 5 * sizeof *v);
    p[0] = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
            int64_t r = i * n + j;
            const int64_t nb[4] = {i > 0 ? r - n : -1, j > 0 ? r - 1 : -1, j + 1 < n ? r + 1 : -1,
                                   i + 1 < n ? r + n : -1};
            cplx off[4] = {-1, -1 - beta, -1, -1};
            if (herm) off[0] = -cexp(0.7 * I), off[3] = -cexp(-0.7 * I), off[1] = off[2] = -1;
            for (int q = 0; q < 4; q++) {
                if (q == 2) c[k] = (int32_t)r, v[k++] = 4 + beta + shift;
                if (nb[q] >= 0) c[k] = (int32_t)nb[q], v[k++] = off[q];
            }
            p[r + 1] = k;
        }
    int vc = hisp_type_components(t);
    bool dbl = t == HISP_F64 || t == HISP_C64;
    void *val = malloc((size_t)k * vc * (dbl ? 8 : 4));
    for (int64_t e = 0; e < k; e++)
        for (int q = 0; q < vc; q++) {
            double x = q ? cimag(v[e]) : creal(v[e]);
            if (dbl)
                ((double *)val)[e * vc + q] = x;
            else
                ((float *)val)[e * vc + q] = (float)x;
        }
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_create_csr(ctx, t, N, N, p, c, val, &A));
    free(p), free(c), free(v), free(val);
    return A;
}

static hisp_context ref_ctx(void)
{
    hisp_context ctx = NULL;
    ck_assert_int_eq(hisp_context_create(&ctx), HISP_SUCCESS);
    CK_OK(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_REFERENCE, 0));
    return ctx;
}

static cplx fval(const double *v, int vc, int64_t k)
{
    return vc < 2 ? v[k] : CMPLX(v[2 * k], v[2 * k + 1]);
}

/* A's dense image (n x n complex) and the product of the factors on A's
 * cleaned pattern: every entry of the pattern (ILU: all; IC: the lower
 * triangle) must match within tol relative to the row's largest entry. */
static void check_identity(hisp_matrix A, const hispi_ilu_factors *f, bool ic, const char *what)
{
    int64_t m = 0, n = 0;
    int vc = hisp_type_components(f->t);
    double *img = test_dense_image(A, vc, &m, &n);
    ck_assert_int_eq(m, f->n);
    cplx *row = calloc((size_t)n, sizeof *row);
    double tol = f->t == HISP_F32 || f->t == HISP_C32 ? 1e-5 : 1e-10;
    for (int64_t i = 0; i < n; i++) {
        /* row i of L U = sum_k l_ik u_k* (l_ii = 1; u_kk = d_k) */
        memset(row, 0, (size_t)n * sizeof *row);
        for (int64_t q = f->lp[i]; q <= f->lp[i + 1]; q++) {
            bool diag = q == f->lp[i + 1];
            int64_t k = diag ? i : f->lc[q];
            cplx l = diag ? 1 : fval(f->lv, vc, q);
            if (!diag)
                ck_assert_msg(k < i, "%s: L(%lld, %lld) above the diagonal", what, (long long)i,
                              (long long)k);
            row[k] += l * fval(f->d, vc, k);
            for (int64_t r = f->up[k]; r < f->up[k + 1]; r++) {
                ck_assert(f->uc[r] > k && (r == f->up[k] || f->uc[r] > f->uc[r - 1]));
                row[f->uc[r]] += l * fval(f->uv, vc, r);
            }
        }
        double big = 0;
        for (int64_t j = 0; j < n; j++) {
            cplx a =
                vc < 2 ? img[i * n + j] : CMPLX(img[2 * (i * n + j)], img[2 * (i * n + j) + 1]);
            big = fmax(big, cabs(a));
        }
        /* the pattern: L's row, the diagonal, U's row (IC: L's row only) */
        for (int64_t q = f->lp[i]; q <= f->lp[i + 1]; q++) {
            int64_t j = q == f->lp[i + 1] ? i : f->lc[q];
            cplx a =
                vc < 2 ? img[i * n + j] : CMPLX(img[2 * (i * n + j)], img[2 * (i * n + j) + 1]);
            ck_assert_msg(cabs(row[j] - a) <= tol * (big > 0 ? big : 1),
                          "%s: (L U)(%lld, %lld) = %g%+gi, a = %g%+gi", what, (long long)i,
                          (long long)j, creal(row[j]), cimag(row[j]), creal(a), cimag(a));
        }
        for (int64_t q = f->up[i]; !ic && q < f->up[i + 1]; q++) {
            int64_t j = f->uc[q];
            cplx a =
                vc < 2 ? img[i * n + j] : CMPLX(img[2 * (i * n + j)], img[2 * (i * n + j) + 1]);
            ck_assert_msg(cabs(row[j] - a) <= tol * (big > 0 ? big : 1),
                          "%s: (L U)(%lld, %lld) = %g, a = %g", what, (long long)i, (long long)j,
                          creal(row[j]), creal(a));
        }
    }
    free(row), free(img);
}

/* The factors are the definition's on generated matrices of every type
 * and on real ones (no pivot replaced there). */
START_TEST(test_factors)
{
    hisp_context ctx = ref_ctx();
    static const hisp_type types[] = {HISP_F64, HISP_F32, HISP_C64, HISP_C32};
    for (size_t q = 0; q < 4; q++) {
        bool cx = types[q] == HISP_C64 || types[q] == HISP_C32;
        for (int ic = 0; ic < 2; ic++) {
            hisp_matrix A =
                grid2d(ctx, types[q], 9, ic ? 0 : 1.5, cx && !ic ? 0.5 + 0.5 * I : 0.1, ic && cx);
            hispi_ilu_factors f;
            CK_OK(ctx, hispi_ilu_factor(A, ic, 0, &f));
            ck_assert_int_eq(f.shifted, 0);
            ck_assert_int_eq(f.filled, 0);
            ck_assert(f.diag_shift == 0);
            check_identity(A, &f, ic, hisp_type_name(types[q]));
            hispi_ilu_factors_free(&f);
            hisp_matrix_destroy(&A);
        }
    }
    /* real matrices: ILU(0) of general ones, IC(0) of SPD ones; the
     * identity on every one whose pivots need no shift (all but bcsstk13,
     * whose IC(0) takes a diagonal shift) */
    static const struct {
        const char *file;
        bool ic, shifts;
    } real[] = {{"cage8.mtx", false, false},
                {"494_bus.mtx", true, false},
                {"mhd1280b.mtx", true, false},
                {"Pd.mtx", false, false},
                {"bcsstk13.mtx", true, true},
                /* ../shared/mm_ext: a power network (SPD), a complex general
                 * and a complex Hermitian matrix of the peers' reader tests */
                {"../mm_ext/ginkgo-project__ginkgo/matrices/test/1138_bus.mtx", true, false},
                {"../mm_ext/GraphBLAS__LAGraph/data/complex.mtx", false, false},
                {"../mm_ext/scipy__scipy/test_mmio/hermitian_example.mtx", false, false}};
    const char *dir = test_matrix_dir();
    int found = 0;
    for (size_t q = 0; dir && q < sizeof real / sizeof *real; q++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, real[q].file);
        hisp_matrix A = NULL;
        hisp_mtx_info mi; /* complex files as c64 */
        if (hisp_matrix_read_mtx_info(ctx, path, &mi) != HISP_SUCCESS) continue;
        CK_OK(ctx, hisp_matrix_read_mtx(ctx, path, mi.type, &A, NULL));
        found++;
        hispi_ilu_factors f;
        CK_OK(ctx, hispi_ilu_factor(A, real[q].ic, 0, &f));
        ck_assert_int_eq(f.filled, 0);
        if (real[q].shifts) {
            ck_assert_msg(f.shifted > 0 || f.diag_shift > 0, "%s: no pivot was shifted",
                          real[q].file);
        } else {
            ck_assert_msg(f.shifted == 0 && f.diag_shift == 0, "%s: shifted %lld, diagonal %g",
                          real[q].file, (long long)f.shifted, f.diag_shift);
            check_identity(A, &f, real[q].ic, real[q].file);
        }
        hispi_ilu_factors_free(&f);
        hisp_matrix_destroy(&A);
    }
    if (!found) test_skip_no_matrices("ILU(0) of real matrices");
    hisp_context_destroy(&ctx);
}
END_TEST

/* Zero and missing pivots, empty rows, duplicates, unsorted rows, 1 x 1:
 * what was filled and shifted is counted, the factors stay finite, and on
 * an unshifted pattern the identity holds with duplicates summed. */
START_TEST(test_pivots)
{
    hisp_context ctx = ref_ctx();
    /* row 0: a zero diagonal; row 1: none (filled); row 2: empty; row 3:
     * unsorted with a duplicate diagonal (2 + 2) */
    int64_t p[5] = {0, 2, 3, 3, 6};
    int32_t c[6] = {0, 1, 0, 3, 0, 3};
    double v[6] = {0, 1, 1, 2, -1, 2};
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_create_csr(ctx, HISP_F64, 4, 4, p, c, v, &A));
    hispi_ilu_factors f;
    CK_OK(ctx, hispi_ilu_factor(A, false, 0, &f));
    ck_assert_int_eq(f.filled, 2); /* rows 1 and 2 */
    ck_assert_int_ge(f.shifted, 2);
    for (int64_t i = 0; i < 4; i++)
        ck_assert(isfinite(f.d[i]) && f.d[i] != 0);
    ck_assert_double_eq_tol(f.d[0], 1e-3, 1e-15); /* row 0: r = 1 */
    ck_assert_double_eq_tol(f.d[2], 1e-3, 1e-15); /* the empty row: r taken as 1 */
    ck_assert_double_eq_tol(f.d[3], 4, 1e-12);    /* duplicates summed */
    double x[4] = {1, 2, 3, 4};
    hispi_ilu_solve_host(&f, x);
    for (int i = 0; i < 4; i++)
        ck_assert(isfinite(x[i]));
    hispi_ilu_factors_free(&f);
    hisp_matrix_destroy(&A);
    /* 1 x 1: [0] and [-2] */
    for (int q = 0; q < 2; q++) {
        int64_t p1[2] = {0, 1};
        int32_t c1[1] = {0};
        double v1[1] = {q ? -2 : 0};
        CK_OK(ctx, hisp_matrix_create_csr(ctx, HISP_F64, 1, 1, p1, c1, v1, &A));
        CK_OK(ctx, hispi_ilu_factor(A, false, 0, &f));
        ck_assert_int_eq(f.shifted, q ? 0 : 1);
        ck_assert_double_eq_tol(f.d[0], q ? -2 : 1e-3, 1e-15);
        hispi_ilu_factors_free(&f);
        /* IC(0) of [-2] shifts up to 1e3 * 2 and succeeds (-2 + 2000 > 0);
         * of [0] (r = 1) too */
        CK_OK(ctx, hispi_ilu_factor(A, true, 0, &f));
        ck_assert(f.diag_shift > 0 && f.d[0] > 0);
        hispi_ilu_factors_free(&f);
        hisp_matrix_destroy(&A);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* The options ilu_factor_sweeps and ilu_solve_sweeps on ctx. */
static void set_sweeps(hisp_context ctx, int fs, int ss)
{
    char v[16];
    snprintf(v, sizeof v, "%d", fs);
    CK_OK(ctx, hisp_context_set_option(ctx, "ilu_factor_sweeps", v));
    snprintf(v, sizeof v, "%d", ss);
    CK_OK(ctx, hisp_context_set_option(ctx, "ilu_solve_sweeps", v));
}

/* L (U z) = x for the exact solve z of the factors f. */
static void check_exact_solve(const hispi_ilu_factors *f, const double *z, const double *x)
{
    int vc = hisp_type_components(f->t);
    int64_t n = f->n;
    double res = 0;
    cplx *u = malloc((size_t)n * sizeof *u);
    for (int64_t i = 0; i < n; i++) {
        u[i] = fval(f->d, vc, i) * fval(z, vc, i);
        for (int64_t k = f->up[i]; k < f->up[i + 1]; k++)
            u[i] += fval(f->uv, vc, k) * fval(z, vc, f->uc[k]);
    }
    for (int64_t i = 0; i < n; i++) {
        cplx s = u[i];
        for (int64_t k = f->lp[i]; k < f->lp[i + 1]; k++)
            s += fval(f->lv, vc, k) * u[f->lc[k]];
        res = fmax(res, cabs(s - fval(x, vc, i)));
    }
    ck_assert_msg(res <= 1e-10, "L U z - x: %g", res);
    free(u);
}

/* P's z = M^-1 x (in place and not) against the host's factors of A made
 * as P's report says and their solves, in double, within tol32 (f32, c32:
 * the device's factors are single precision) or 1e-12 of |z|; exact solves
 * also by L U z = x. */
static void compare_apply(hisp_context ctx, hisp_matrix A, bool ic, hispi_ilu *P, double tol32,
                          const char *what)
{
    hisp_matrix_info mi;
    CK_OK(ctx, hisp_matrix_get_info(A, &mi));
    int vc = hisp_type_components(mi.type);
    bool dbl = mi.type == HISP_F64 || mi.type == HISP_C64;
    const hispi_ilu_info *r = hispi_ilu_report(P);
    hispi_ilu_factors f;
    CK_OK(ctx, hispi_ilu_factor(A, ic, r->factor_sweeps, &f));
    ck_assert_int_eq(f.sweeps, r->factor_sweeps);
    ck_assert_int_eq(f.shifted, r->shifted);
    ck_assert_double_eq(f.diag_shift, r->diag_shift);
    int64_t n = f.n, m = n * vc;
    double *hx = malloc((size_t)m * 8), *want = malloc((size_t)m * 8);
    double *work = malloc((size_t)m * 16);
    void *buf = malloc((size_t)m * 8), *got = malloc((size_t)m * 8);
    uint64_t st = test_seed();
    for (int64_t i = 0; i < m; i++) {
        want[i] = hx[i] = test_uniform(&st);
        if (dbl)
            ((double *)buf)[i] = hx[i];
        else
            ((float *)buf)[i] = (float)hx[i], want[i] = hx[i] = (float)hx[i];
    }
    if (r->solve_sweeps)
        hispi_ilu_sweeps_host(&f, r->solve_sweeps, want, work);
    else
        hispi_ilu_solve_host(&f, want);
    hisp_vector x = NULL, z = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, mi.type, n, &x));
    CK_OK(ctx, hisp_vector_create(ctx, mi.type, n, &z));
    for (int inplace = 0; inplace < 2; inplace++) {
        CK_OK(ctx, hisp_vector_write(x, buf));
        CK_OK(ctx, hispi_ilu_apply(P, x, inplace ? x : z));
        CK_OK(ctx, hisp_vector_read(inplace ? x : z, got));
        double err = 0, nrm = 0;
        for (int64_t i = 0; i < m; i++) {
            double v = dbl ? ((double *)got)[i] : ((float *)got)[i];
            err = fmax(err, fabs(v - want[i])), nrm = fmax(nrm, fabs(want[i]));
        }
        ck_assert_msg(err <= (dbl ? 1e-12 : tol32) * nrm,
                      "%s %s %s sweeps %d/%d: |z - z_host| %g of %g", what, hisp_type_name(mi.type),
                      ic ? "ic0" : "ilu0", r->factor_sweeps, r->solve_sweeps, err, nrm);
    }
    if (!r->solve_sweeps) check_exact_solve(&f, want, hx);
    free(hx), free(want), free(work), free(buf), free(got);
    hisp_vector_destroy(&x), hisp_vector_destroy(&z);
    hispi_ilu_factors_free(&f);
}

/* z = M^-1 x on each target, on its own path and on the GPUs' (the test
 * hook; kernels on PoCL too), real and complex, exact and by sweeps,
 * against the host's. */
START_TEST(test_apply)
{
    hisp_context ctx = test_context(_i);
    static const hisp_type types[] = {HISP_F64, HISP_F32, HISP_C64, HISP_C32};
    static const int variants[][2] = {{0, 0}, {3, 0}, {0, 2}, {3, 3}, {-1, -1}};
    for (size_t q = 0; q < 4; q++) {
        if ((types[q] == HISP_F64 || types[q] == HISP_C64) && !test_fp64(ctx)) continue;
        int vc = hisp_type_components(types[q]);
        for (int g = 0; g < 10; g++) {
            int ic = g % 2, fs = variants[g / 2][0], ss = variants[g / 2][1];
            hisp_matrix A =
                grid2d(ctx, types[q], 12, ic ? 0 : 2, vc > 1 && !ic ? 0.3 * I : 0.2, ic && vc > 1);
            for (int gpu = 0; gpu < 2; gpu++) {
                hispi_ilu_gpu_paths = gpu;
                set_sweeps(ctx, fs, ss);
                hispi_ilu *P = NULL;
                CK_OK(ctx, hispi_ilu_create(A, ic, &P));
                hispi_ilu_gpu_paths = 0;
                const hispi_ilu_info *r = hispi_ilu_report(P);
                if (fs >= 0) ck_assert_int_eq(r->solve_sweeps, ss);
                if (fs >= 0) ck_assert_int_eq(r->factor_sweeps, fs);
                char what[64];
                snprintf(what, sizeof what, "%s gpu paths %d", test_label(_i), gpu);
                compare_apply(ctx, A, ic, P, 1e-4, what);
                hispi_ilu_destroy(&P);
            }
            hisp_matrix_destroy(&A);
        }
    }
    set_sweeps(ctx, -1, -1);
    hisp_context_destroy(&ctx);
}
END_TEST

/* The device's sweeps replace pivots and shift IC(0) as the host's do,
 * complex too: ILU(0) of [0 1+i .; 1 2i 1; . 1-i 3] (a zero pivot, its
 * phase taken as 1), IC(0) of the Hermitian indefinite [1 2-i .; 2+i 1 .;
 * . . 2] (d_1 < 0 until shifted); the report's counts and the applied
 * preconditioner are the host's. */
START_TEST(test_device_pivots)
{
    hisp_context ctx = test_context(_i);
    static const int64_t p[2][4] = {{0, 2, 5, 7}, {0, 2, 4, 5}};
    static const int32_t c[2][7] = {{0, 1, 0, 1, 2, 1, 2}, {0, 1, 0, 1, 2}};
    static const cplx v[2][7] = {{0, 1 + I, 1, 2 * I, 1, 1 - I, 3}, {1, 2 - I, 2 + I, 1, 2}};
    static const hisp_type types[] = {HISP_C64, HISP_C32, HISP_F64};
    for (int q = 0; q < 3; q++) {
        if (types[q] != HISP_C32 && !test_fp64(ctx)) continue;
        for (int ic = 0; ic < 2; ic++) {
            bool dbl = types[q] != HISP_C32;
            int vc = hisp_type_components(types[q]);
            double buf[14];
            float fbuf[14];
            for (int e = 0; e < p[ic][3]; e++)
                for (int k = 0; k < vc; k++) {
                    /* f64: the real parts (the IC matrix stays symmetric indefinite) */
                    buf[e * vc + k] = k ? cimag(v[ic][e]) : creal(v[ic][e]);
                    fbuf[e * vc + k] = (float)buf[e * vc + k];
                }
            hisp_matrix A = NULL;
            CK_OK(ctx, hisp_matrix_create_csr(ctx, types[q], 3, 3, p[ic], c[ic],
                                              dbl ? (void *)buf : (void *)fbuf, &A));
            for (int ss = 0; ss < 3; ss += 2) {
                hispi_ilu_gpu_paths = 1;
                set_sweeps(ctx, 3, ss);
                hispi_ilu *P = NULL;
                hisp_status s = hispi_ilu_create(A, ic, &P);
                hispi_ilu_gpu_paths = 0;
                CK_OK(ctx, s);
                const hispi_ilu_info *r = hispi_ilu_report(P);
                ck_assert_int_eq(r->factor_sweeps, 3);
                if (ic)
                    ck_assert(r->diag_shift > 0);
                else
                    ck_assert_int_ge(r->shifted, 1);
                /* the replaced pivot 1e-3 r makes l_10 ~ 700: single
                 * precision's rounding grows by as much (2.5e-4 seen) */
                compare_apply(ctx, A, ic, P, 2e-3, test_label(_i));
                hispi_ilu_destroy(&P);
            }
            hisp_matrix_destroy(&A);
        }
    }
    set_sweeps(ctx, -1, -1);
    hisp_context_destroy(&ctx);
}
END_TEST

/* Sweeps converge to the exact algorithms: the factorisation's to the
 * factors of the definition, the solves' to the exact solves; where the
 * pattern needs cleaning (a missing diagonal) or the sweeps' entries
 * become infinite, the factorisation is exact (and said so). */
START_TEST(test_sweeps_limit)
{
    hisp_context ctx = ref_ctx();
    for (int ic = 0; ic < 2; ic++) {
        hisp_matrix A = grid2d(ctx, HISP_F64, 9, ic ? 0 : 1.5, 0.1, false);
        hispi_ilu_factors f, e;
        CK_OK(ctx, hispi_ilu_factor(A, ic, 60, &f));
        ck_assert_int_eq(f.sweeps, 60);
        check_identity(A, &f, ic, ic ? "IC(0) by 60 sweeps" : "ILU(0) by 60 sweeps");
        CK_OK(ctx, hispi_ilu_factor(A, ic, 0, &e));
        double x[81], y[81], w[162];
        for (int i = 0; i < 81; i++)
            x[i] = y[i] = sin(i + 1.0);
        hispi_ilu_solve_host(&e, x);
        hispi_ilu_sweeps_host(&e, 40, y, w);
        for (int i = 0; i < 81; i++)
            ck_assert_double_eq_tol(x[i], y[i], 1e-12 * fabs(x[i]) + 1e-14);
        hispi_ilu_factors_free(&f), hispi_ilu_factors_free(&e);
        hisp_matrix_destroy(&A);
    }
    /* [1e-300 1; 1e308 1]: the replaced pivot 1e-3 makes l_10 infinite */
    int64_t p[3] = {0, 2, 4};
    int32_t c[4] = {0, 1, 0, 1};
    double v[4] = {1e-300, 1, 1e308, 1};
    hisp_matrix B = NULL;
    CK_OK(ctx, hisp_matrix_create_csr(ctx, HISP_F64, 2, 2, p, c, v, &B));
    hispi_ilu_factors f;
    CK_OK(ctx, hispi_ilu_factor(B, false, 3, &f));
    ck_assert_int_eq(f.sweeps, 0);
    ck_assert_int_ge(f.shifted, 1);
    hispi_ilu_factors_free(&f);
    hisp_matrix_destroy(&B);
    hisp_context_destroy(&ctx);
}
END_TEST

/* On the GPUs' path (the test hook on CPU devices) a pattern the device
 * cannot factorise is the host's, exactly: a missing diagonal entry, an
 * unsorted row, for IC(0) an entry above the diagonal without its
 * mirror; the solves then still run on the device. */
START_TEST(test_device_fallback)
{
    hisp_context ctx = test_context(_i);
    /* rows: [2 1 .; . . 1; . 1 3] (row 1 lacks its diagonal); [3 . 1;
     * . 2 .; 1 . 4] unsorted in row 2; [4 1 .; . 4 .; . 1 4] (IC: (0, 1)
     * without (1, 0)) */
    static const int64_t p[3][4] = {{0, 2, 3, 5}, {0, 2, 3, 5}, {0, 2, 3, 5}};
    static const int32_t c[3][5] = {{0, 1, 2, 1, 2}, {0, 2, 1, 2, 0}, {0, 1, 1, 1, 2}};
    static const float v[3][5] = {{2, 1, 1, 1, 3}, {3, 1, 2, 4, 1}, {4, 1, 4, 1, 4}};
    for (int q = 0; q < 3; q++) {
        hisp_matrix A = NULL;
        CK_OK(ctx, hisp_matrix_create_csr(ctx, HISP_F32, 3, 3, p[q], c[q], v[q], &A));
        bool ic = q == 2;
        hispi_ilu_gpu_paths = 1;
        set_sweeps(ctx, 3, 2);
        hispi_ilu *P = NULL;
        hisp_status s = hispi_ilu_create(A, ic, &P);
        hispi_ilu_gpu_paths = 0;
        CK_OK(ctx, s);
        const hispi_ilu_info *r = hispi_ilu_report(P);
        /* on a device the host's exact factorisation; the reference's host
         * path honours the sweeps */
        ck_assert_int_eq(r->factor_sweeps, test_on_device(_i) ? 0 : 3);
        ck_assert_int_eq(r->filled, q == 0);
        ck_assert_int_eq(r->solve_sweeps, 2);
        hispi_ilu_factors f;
        CK_OK(ctx, hispi_ilu_factor(A, ic, r->factor_sweeps, &f));
        float x[3] = {1, 2, 3}, z[3];
        double want[3] = {1, 2, 3}, w[6];
        hispi_ilu_sweeps_host(&f, 2, want, w);
        hisp_vector vx = NULL;
        CK_OK(ctx, hisp_vector_create(ctx, HISP_F32, 3, &vx));
        CK_OK(ctx, hisp_vector_write(vx, x));
        CK_OK(ctx, hispi_ilu_apply(P, vx, vx));
        CK_OK(ctx, hisp_vector_read(vx, z));
        for (int i = 0; i < 3; i++)
            ck_assert_double_eq_tol(z[i], want[i], 1e-4 * fabs(want[i]) + 1e-6);
        hisp_vector_destroy(&vx);
        hispi_ilu_factors_free(&f);
        hispi_ilu_destroy(&P);
        hisp_matrix_destroy(&A);
    }
    set_sweeps(ctx, -1, -1);
    hisp_context_destroy(&ctx);
}
END_TEST

/* ||b - A x|| / ||b|| recomputed on the host in double. */
static double true_residual(hisp_context ctx, hisp_matrix A, hisp_vector b, hisp_vector x)
{
    hisp_matrix_info mi;
    CK_OK(ctx, hisp_matrix_get_info(A, &mi));
    int vc = hisp_type_components(mi.type);
    bool dbl = mi.type == HISP_F64 || mi.type == HISP_C64;
    int64_t m = 0, n = 0;
    double *img = test_dense_image(A, vc, &m, &n);
    void *hb = malloc((size_t)n * vc * 8), *hx = malloc((size_t)n * vc * 8);
    CK_OK(ctx, hisp_vector_read(b, hb));
    CK_OK(ctx, hisp_vector_read(x, hx));
    double r = 0, nb = 0;
#define G(a, i) (dbl ? ((double *)(a))[i] : ((float *)(a))[i])
    for (int64_t i = 0; i < n; i++) {
        cplx s = vc < 2 ? G(hb, i) : CMPLX(G(hb, 2 * i), G(hb, 2 * i + 1));
        nb += creal(s * conj(s));
        for (int64_t j = 0; j < n; j++) {
            cplx a =
                vc < 2 ? img[i * n + j] : CMPLX(img[2 * (i * n + j)], img[2 * (i * n + j) + 1]);
            cplx xj = vc < 2 ? G(hx, j) : CMPLX(G(hx, 2 * j), G(hx, 2 * j + 1));
            s -= a * xj;
        }
        r += creal(s * conj(s));
    }
#undef G
    free(img), free(hb), free(hx);
    return sqrt(r / nb);
}

typedef struct {
    hisp_solver_method method;
    hisp_precond pc;
    hisp_type t;
    bool herm; /* the Hermitian matrix (IC(0), CG) */
} solve_case;

static int64_t solve_once(hisp_context ctx, const solve_case *c, int target, double rtol)
{
    hisp_matrix A =
        grid2d(ctx, c->t, 20, c->herm ? 0 : 3, c->t == HISP_C64 && !c->herm ? 0.2 * I : 0.01,
               c->herm && c->t == HISP_C64);
    hisp_matrix_info mi;
    CK_OK(ctx, hisp_matrix_get_info(A, &mi));
    int vc = hisp_type_components(c->t);
    bool dbl = c->t == HISP_F64 || c->t == HISP_C64;
    void *hb = malloc((size_t)mi.nrows * vc * 8);
    uint64_t st = 12345; /* the same b on every target */
    for (int64_t i = 0; i < mi.nrows * vc; i++) {
        double u = test_uniform(&st);
        if (dbl)
            ((double *)hb)[i] = u;
        else
            ((float *)hb)[i] = (float)u;
    }
    hisp_vector b = NULL, x = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, c->t, mi.nrows, &b));
    CK_OK(ctx, hisp_vector_create(ctx, c->t, mi.nrows, &x));
    CK_OK(ctx, hisp_vector_write(b, hb));
    hisp_solver s = NULL;
    CK_OK(ctx, hisp_solver_create(ctx, c->method, &s));
    CK_OK(ctx, hisp_solver_set_preconditioner(s, c->pc));
    CK_OK(ctx, hisp_solver_set_tolerances(s, rtol, 0));
    hisp_solve_info info;
    CK_OK(ctx, hisp_solver_solve(s, A, b, x, &info));
    double tr = true_residual(ctx, A, b, x);
    ck_assert_msg(info.converged && tr <= rtol * 1.01 &&
                      fabs(tr - info.relative_residual) <= 1e-2 * tr + 1e-12,
                  "%s %s %s %s: converged %d in %lld, reported %g, true %g",
                  target >= 0 ? test_label(target) : "reference",
                  hisp_solver_method_name(c->method), hisp_precond_name(c->pc),
                  hisp_type_name(c->t), info.converged, (long long)info.iterations,
                  info.relative_residual, tr);
    ck_assert_int_eq(info.precond, c->pc);
    if (c->pc == HISP_PRECOND_ILU0 || c->pc == HISP_PRECOND_IC0) {
        hispi_options o = ctx->opt;
        ck_assert_int_eq(info.precond_solve_sweeps,
                         o.ilu_solve_sweeps < 0 ? info.precond_solve_sweeps : o.ilu_solve_sweeps);
        if (vc < 2 && o.ilu_factor_sweeps >= 0)
            ck_assert_int_eq(info.precond_factor_sweeps, o.ilu_factor_sweeps);
    }
    hisp_solver_destroy(&s);
    free(hb);
    hisp_vector_destroy(&b), hisp_vector_destroy(&x);
    hisp_matrix_destroy(&A);
    return info.iterations;
}

/* Every method with ILU(0) / IC(0) on each target: converged, the reported
 * residual true, iterations within 2 of the reference backend's and below
 * Jacobi's. */
START_TEST(test_solve)
{
    hisp_context ctx = test_context(_i), ref = ref_ctx();
    static const solve_case cases[] = {
        {HISP_SOLVER_CG, HISP_PRECOND_IC0, HISP_F64, true},
        {HISP_SOLVER_CG, HISP_PRECOND_ILU0, HISP_F64, true},
        {HISP_SOLVER_GMRES, HISP_PRECOND_ILU0, HISP_F64, false},
        {HISP_SOLVER_BICGSTAB, HISP_PRECOND_ILU0, HISP_F64, false},
        {HISP_SOLVER_GMRES, HISP_PRECOND_ILU0, HISP_C64, false},
        {HISP_SOLVER_CG, HISP_PRECOND_IC0, HISP_C64, true},
        {HISP_SOLVER_GMRES, HISP_PRECOND_ILU0, HISP_F32, false},
        {HISP_SOLVER_CG, HISP_PRECOND_IC0, HISP_F32, true},
    };
    /* exact, then by sweeps on the GPUs' path (kernels on PoCL too) */
    for (size_t q = 0; q < 2 * sizeof cases / sizeof *cases; q++) {
        const solve_case *c = &cases[q / 2];
        bool f32 = c->t == HISP_F32;
        if (!f32 && !test_fp64(ctx)) continue;
        double rtol = f32 ? 1e-5 : 1e-8;
        int fs = q % 2 ? 3 : 0, ss = q % 2 ? 2 : 0;
        set_sweeps(ctx, fs, ss), set_sweeps(ref, fs, ss);
        hispi_ilu_gpu_paths = q % 2;
        int64_t it = solve_once(ctx, c, _i, rtol);
        hispi_ilu_gpu_paths = 0;
        int64_t want = solve_once(ref, c, -1, rtol);
        ck_assert_msg(llabs(it - want) <= 2,
                      "%s %s %s sweeps %d/%d: %lld iterations, reference %lld", test_label(_i),
                      hisp_solver_method_name(c->method), hisp_precond_name(c->pc), fs, ss,
                      (long long)it, (long long)want);
        solve_case j = *c;
        j.pc = HISP_PRECOND_JACOBI;
        ck_assert_int_lt(it, solve_once(ref, &j, -1, rtol));
    }
    hisp_context_destroy(&ref);
    hisp_context_destroy(&ctx);
}
END_TEST

/* Jacobi on a matrix with a zero diagonal entry runs l1-Jacobi and says so;
 * l1-Jacobi's d_i: sum_j |a_ij| with a_ii's sign, |row| where a_ii = 0. */
START_TEST(test_l1_jacobi)
{
    hisp_context ctx = test_context(_i);
    if (!test_fp64(ctx)) {
        hisp_context_destroy(&ctx);
        return;
    }
    /* [[0 2 0] [1 -3 1] [0 -1 4]] */
    int64_t p[4] = {0, 1, 4, 6};
    int32_t c[6] = {1, 0, 1, 2, 1, 2};
    double v[6] = {2, 1, -3, 1, -1, 4};
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_create_csr(ctx, HISP_F64, 3, 3, p, c, v, &A));
    hisp_vector d = NULL;
    bool used = false, kept = false;
    CK_OK(ctx, hispi_ks_diagonal(ctx, A, false, &d, &used, &kept));
    ck_assert(used);
    double h[3];
    CK_OK(ctx, hisp_vector_read(d, h));
    ck_assert(h[0] == 2 && h[1] == -5 && h[2] == 5);
    if (!kept) hisp_vector_destroy(&d);
    double hb[3] = {1, 2, 3};
    hisp_vector b = NULL, x = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, 3, &b));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, 3, &x));
    CK_OK(ctx, hisp_vector_write(b, hb));
    for (int q = 0; q < 2; q++) {
        hisp_solver s = NULL;
        CK_OK(ctx, hisp_solver_create(ctx, HISP_SOLVER_GMRES, &s));
        CK_OK(ctx,
              hisp_solver_set_preconditioner(s, q ? HISP_PRECOND_L1_JACOBI : HISP_PRECOND_JACOBI));
        double zero = 0;
        CK_OK(ctx, hisp_vector_fill(x, hisp_scalar_host(&zero)));
        hisp_solve_info info;
        CK_OK(ctx, hisp_solver_solve(s, A, b, x, &info));
        ck_assert_int_eq(info.precond, HISP_PRECOND_L1_JACOBI);
        ck_assert(info.converged && true_residual(ctx, A, b, x) <= 1.01e-8);
        hisp_solver_destroy(&s);
    }
    hisp_vector_destroy(&b), hisp_vector_destroy(&x);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

/* hisp_preconditioner with ILU(0) / IC(0): solves with the kept factors
 * converge as a fresh setup does; an update with new values refactorises
 * (the solve then takes the new matrix's iterations); its info. */
START_TEST(test_object)
{
    hisp_context ctx = test_context(_i);
    if (!test_fp64(ctx)) {
        hisp_context_destroy(&ctx);
        return;
    }
    for (int ic = 0; ic < 2; ic++) {
        hisp_precond kind = ic ? HISP_PRECOND_IC0 : HISP_PRECOND_ILU0;
        hisp_matrix A = grid2d(ctx, HISP_F64, 16, ic ? 0 : 2, 0.05, false),
                    B = grid2d(ctx, HISP_F64, 16, ic ? 0 : 4, 1.0, false);
        hisp_preconditioner P = NULL;
        CK_OK(ctx, hisp_preconditioner_create(kind, A, &P));
        hisp_preconditioner_info pi;
        CK_OK(ctx, hisp_preconditioner_get_info(P, &pi));
        ck_assert_int_eq(pi.kind, kind);
        ck_assert_int_eq(pi.type, HISP_F64);
        ck_assert_int_eq(pi.shifted, 0);
        ck_assert_int_eq(pi.filled, 0);
        hisp_vector b = NULL, x = NULL;
        CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, 256, &b));
        CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, 256, &x));
        double one = 1, zero = 0;
        CK_OK(ctx, hisp_vector_fill(b, hisp_scalar_host(&one)));
        int64_t its[3];
        for (int k = 0; k < 3; k++) {
            hisp_matrix M = k == 2 ? B : A;
            if (k == 2) CK_OK(ctx, hisp_preconditioner_update(P, B));
            hisp_solver s = NULL;
            CK_OK(ctx, hisp_solver_create(ctx, ic ? HISP_SOLVER_CG : HISP_SOLVER_GMRES, &s));
            if (k == 1)
                CK_OK(ctx, hisp_solver_set_preconditioner(s, kind)); /* a fresh setup */
            else
                CK_OK(ctx, hisp_solver_use_preconditioner(s, P));
            CK_OK(ctx, hisp_vector_fill(x, hisp_scalar_host(&zero)));
            hisp_solve_info info;
            CK_OK(ctx, hisp_solver_solve(s, M, b, x, &info));
            ck_assert(info.converged && true_residual(ctx, M, b, x) <= 1.01e-8);
            ck_assert_int_eq(info.precond, kind);
            its[k] = info.iterations;
            hisp_solver_destroy(&s);
        }
        ck_assert_int_eq(its[0], its[1]);
        hisp_preconditioner_destroy(&P);
        hisp_vector_destroy(&b), hisp_vector_destroy(&x);
        TEST_DESTROY_MATRICES(&A, &B);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* Refusals with a status and a message: other entry types, rectangular A,
 * LSQR; IC(0) of a matrix no shift makes positive. */
START_TEST(test_errors)
{
    hisp_context ctx = ref_ctx();
    hisp_matrix Q = NULL, R = NULL;
    int64_t p[3] = {0, 1, 2};
    int32_t c[2] = {0, 1};
    double q[8] = {1, 0, 0, 0, 1, 0, 0, 0}; /* q64: 2 entries of 4 */
    CK_OK(ctx, hisp_matrix_create_csr(ctx, HISP_Q64, 2, 2, p, c, q, &Q));
    hispi_ilu_factors f;
    ck_assert_int_eq(hispi_ilu_factor(Q, false, 0, &f), HISP_ERR_UNSUPPORTED);
    int64_t pr[2] = {0, 2};
    int32_t cr[2] = {0, 1};
    double vr[2] = {1, 2};
    CK_OK(ctx, hisp_matrix_create_csr(ctx, HISP_F64, 1, 2, pr, cr, vr, &R));
    ck_assert_int_eq(hispi_ilu_factor(R, false, 0, &f), HISP_ERR_INVALID_ARGUMENT);
    /* a NaN on the diagonal: no shift makes its pivot positive */
    int64_t p2[3] = {0, 2, 4};
    int32_t c2[4] = {0, 1, 0, 1};
    double v2[4] = {NAN, 10, 10, 4};
    hisp_matrix S = NULL;
    CK_OK(ctx, hisp_matrix_create_csr(ctx, HISP_F64, 2, 2, p2, c2, v2, &S));
    ck_assert_int_eq(hispi_ilu_factor(S, true, 0, &f), HISP_ERR_INVALID_ARGUMENT);
    hisp_solver s = NULL;
    CK_OK(ctx, hisp_solver_create(ctx, HISP_SOLVER_LSQR, &s));
    CK_OK(ctx, hisp_solver_set_preconditioner(s, HISP_PRECOND_ILU0));
    hisp_vector b = NULL, x = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, 2, &b));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, 2, &x));
    ck_assert_int_eq(hisp_solver_solve(s, S, b, x, NULL), HISP_ERR_UNSUPPORTED);
    hisp_solver_destroy(&s);
    hisp_vector_destroy(&b), hisp_vector_destroy(&x);
    TEST_DESTROY_MATRICES(&Q, &R, &S);
    hisp_context_destroy(&ctx);
}
END_TEST

/* Every host allocation of the setup failed in turn: out of memory, A
 * intact, nothing leaked (ASan), then the setup succeeds. */
START_TEST(test_alloc_failures)
{
    hisp_context ctx = test_context(_i);
    hisp_matrix A = grid2d(ctx, HISP_F32, 6, 1, 0.1, false);
    for (int ic = 0; ic < 2; ic++) {
        hisp_status s = HISP_ERR_OUT_OF_HOST_MEMORY;
        long k = 1;
        for (; s == HISP_ERR_OUT_OF_HOST_MEMORY && k < 200; k++) {
            hispi_ilu *P = NULL;
            hispi_alloc_fail_after(k);
            s = hispi_ilu_create(A, ic, &P);
            hispi_alloc_fail_after(0);
            ck_assert(s == HISP_SUCCESS || s == HISP_ERR_OUT_OF_HOST_MEMORY);
            ck_assert((s == HISP_SUCCESS) == (P != NULL));
            hispi_ilu_destroy(&P);
        }
        ck_assert_int_eq(s, HISP_SUCCESS);
        ck_assert_int_gt(k, 3); /* a GPU's setup is mostly device buffers */
    }
    hisp_matrix_info mi;
    CK_OK(ctx, hisp_matrix_get_info(A, &mi));
    ck_assert_int_eq(mi.nnz, 36 * 5 - 4 * 6);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

/* Every device buffer of the GPUs' setup failed in turn (the test hook;
 * PoCL runs the GPUs' paths): out of device memory with a message, A
 * intact, nothing leaked (ASan), then the setup succeeds; by sweeps and
 * exactly, IC(0) and ILU(0). */
START_TEST(test_device_failures)
{
    hisp_context ctx = test_context(_i);
    if (!test_on_device(_i)) {
        hisp_context_destroy(&ctx);
        return;
    }
    hisp_matrix A = grid2d(ctx, HISP_F32, 6, 1, 0.1, false);
    for (int v = 0; v < 4; v++) {
        bool ic = v % 2;
        set_sweeps(ctx, v < 2 ? 3 : 0, v < 2 ? 2 : 0);
        hisp_status s = HISP_ERR_OUT_OF_DEVICE_MEMORY;
        long k = 1;
        for (; s == HISP_ERR_OUT_OF_DEVICE_MEMORY && k < 100; k++) {
            hispi_ilu *P = NULL;
            hispi_ilu_gpu_paths = 1;
            hispi_ilu_dev_fail_after = k;
            s = hispi_ilu_create(A, ic, &P);
            hispi_ilu_dev_fail_after = 0;
            hispi_ilu_gpu_paths = 0;
            ck_assert(s == HISP_SUCCESS || s == HISP_ERR_OUT_OF_DEVICE_MEMORY);
            ck_assert((s == HISP_SUCCESS) == (P != NULL));
            if (s) {
                hisp_error_info ei;
                CK_OK(ctx, hisp_context_last_error(ctx, &ei));
                ck_assert_ptr_nonnull(strstr(ei.message, "device buffer"));
            }
            hispi_ilu_destroy(&P);
        }
        ck_assert_int_eq(s, HISP_SUCCESS);
        ck_assert_int_gt(k, v < 2 ? 10 : 7); /* 9 and 6 buffers, each failed once */
    }
    hisp_matrix_info mi;
    CK_OK(ctx, hisp_matrix_get_info(A, &mi));
    ck_assert_int_eq(mi.nnz, 36 * 5 - 4 * 6);
    set_sweeps(ctx, -1, -1);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

/* Chebyshev refuses a diagonal that is not positive, naming the row. */
static void cheb_refuses(hisp_context ctx)
{
    int64_t p[3] = {0, 1, 2};
    int32_t c[2] = {0, 1};
    double v[2] = {1, -1};
    hisp_matrix N = NULL;
    CK_OK(ctx, hisp_matrix_create_csr(ctx, HISP_F64, 2, 2, p, c, v, &N));
    hispi_chebpc *P = NULL;
    ck_assert_int_eq(hispi_chebpc_create(N, 4, &P), HISP_ERR_INVALID_ARGUMENT);
    hisp_error_info ei;
    CK_OK(ctx, hisp_context_last_error(ctx, &ei));
    ck_assert_ptr_nonnull(strstr(ei.message, "row 2"));
    hisp_matrix_destroy(&N);
}

/* z = M^-1 x of the Chebyshev preconditioner on ctx, as doubles. */
static void cheb_apply(hisp_context ctx, hisp_matrix A, int deg, const double *x, double *z,
                       int64_t n)
{
    hispi_chebpc *P = NULL;
    CK_OK(ctx, hispi_chebpc_create(A, deg, &P));
    hisp_vector vx = NULL, vz = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, n, &vx));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, n, &vz));
    CK_OK(ctx, hisp_vector_write(vx, x));
    CK_OK(ctx, hispi_chebpc_apply(P, vx, vz));
    CK_OK(ctx, hisp_vector_read(vz, z));
    hisp_vector_destroy(&vx), hisp_vector_destroy(&vz);
    hispi_chebpc_destroy(&P);
}

START_TEST(test_chebyshev)
{
    hisp_context ctx = test_context(_i), ref = ref_ctx();
    if (!test_fp64(ctx)) {
        hisp_context_destroy(&ref), hisp_context_destroy(&ctx);
        return;
    }
    solve_case c = {HISP_SOLVER_CG, HISP_PRECOND_CHEBYSHEV, HISP_F64, true};
    int64_t it[2];
    for (int q = 0; q < 2; q++) {
        const char *deg = q ? "8" : "2";
        CK_OK(ctx, hisp_context_set_option(ctx, "chebyshev_degree", deg));
        CK_OK(ref, hisp_context_set_option(ref, "chebyshev_degree", deg));
        it[q] = solve_once(ctx, &c, _i, 1e-8);
        int64_t want = solve_once(ref, &c, -1, 1e-8);
        ck_assert_msg(llabs(it[q] - want) <= 2, "%s degree %s: %lld iterations, reference %lld",
                      test_label(_i), deg, (long long)it[q], (long long)want);
    }
    solve_case j = c;
    j.pc = HISP_PRECOND_JACOBI;
    ck_assert_int_lt(it[0], solve_once(ref, &j, -1, 1e-8));
    ck_assert_int_lt(2 * it[1], it[0]);
    /* one application against the reference's */
    hisp_matrix A = grid2d(ctx, HISP_F64, 20, 0, 0.01, false),
                B = grid2d(ref, HISP_F64, 20, 0, 0.01, false);
    double x[400], z[400], w[400], e = 0, m = 0;
    uint64_t st = test_seed();
    for (int i = 0; i < 400; i++)
        x[i] = test_uniform(&st);
    cheb_apply(ctx, A, 5, x, z, 400);
    cheb_apply(ref, B, 5, x, w, 400);
    for (int i = 0; i < 400; i++)
        e = fmax(e, fabs(z[i] - w[i])), m = fmax(m, fabs(w[i]));
    ck_assert_msg(e <= 1e-9 * m, "%s: |z - z_ref| %g of %g", test_label(_i), e, m);
    cheb_refuses(ctx); /* a diagonal that is not positive */
    hisp_matrix_destroy(&A);
    hisp_matrix_destroy(&B);
    hisp_context_destroy(&ref), hisp_context_destroy(&ctx);
}
END_TEST

extern int hispi_spgemm_cpu_kernels;

/* A random n x n CSR matrix of type t: 4 off-diagonal entries a row and a
 * diagonal in [-4, 4), row z's diagonal entry an explicit 0 and row z + 1
 * without one where zero. */
static hisp_matrix diag_case(hisp_context ctx, hisp_type t, int64_t n, bool zero, uint64_t seed)
{
    int64_t *p = malloc((size_t)(n + 1) * 8), k = 0, z = n / 2;
    int32_t *c = malloc((size_t)n * 5 * 4);
    double *v = malloc((size_t)n * 5 * 8);
    float *vf = malloc((size_t)n * 5 * 4);
    uint64_t st = seed;
    p[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        bool diag = !(zero && i == z + 1);
        for (int64_t j = 0, last = -1; j < n && k - p[i] < 5; j++) {
            bool here = (j == i && diag) || (j != i && test_rand(&st) % (uint64_t)(n / 4) == 0 &&
                                             k - p[i] < 4 - (diag && j < i));
            if (!here || j == last) continue;
            c[k] = (int32_t)j,
            v[k] = j == i ? (zero && i == z ? 0 : 4 * test_uniform(&st)) : test_uniform(&st);
            vf[k] = (float)v[k], last = j, k++;
        }
        p[i + 1] = k;
    }
    hisp_matrix A = NULL;
    CK_OK(ctx,
          hisp_matrix_create_csr(ctx, t, n, n, p, c, t == HISP_F64 ? (void *)v : (void *)vf, &A));
    free(p), free(c), free(v), free(vf);
    return A;
}

/* Jacobi's diagonal made by the device's kernel (forced on a CPU device):
 * diag(A), l1-Jacobi's values and Jacobi's l1 fallback on a zero diagonal
 * equal the reference backend's (f64 bit for bit); it is A's, kept (the
 * next solve's call returns it) until A's device copy goes
 * (hisp_matrix_scale). Chebyshev's device diagonal: its refusal names the
 * row; Chebyshev-CG and Jacobi-CG take the reference's iterations. */
START_TEST(test_diag_device)
{
    hisp_context ctx = test_context(_i), ref = ref_ctx();
    uint64_t seed = test_seed();
    hispi_spgemm_cpu_kernels = 1;
    for (int ti = 0; ti < 2; ti++) {
        hisp_type t = ti ? HISP_F32 : HISP_F64;
        if (t == HISP_F64 && !test_fp64(ctx)) continue;
        int64_t n = 300; /* more than one work-group */
        for (int q = 0; q < 4; q++) {
            bool zero = q & 1, l1 = q & 2;
            hisp_matrix A = diag_case(ctx, t, n, zero, seed + (uint64_t)q),
                        B = diag_case(ref, t, n, zero, seed + (uint64_t)q);
            hisp_vector d = NULL, e = NULL, d2 = NULL;
            bool used = false, kept = false, used_ref = false, kept_ref = true;
            CK_OK(ctx, hispi_ks_diagonal(ctx, A, l1, &d, &used, &kept));
            CK_OK(ref, hispi_ks_diagonal(ref, B, l1, &e, &used_ref, &kept_ref));
            ck_assert_int_eq(kept, test_on_device(_i));
            ck_assert(!kept_ref && used == used_ref && used == (zero || l1));
            double hd[300], he[300];
            CK_OK(ctx, hisp_vector_read(d, hd));
            CK_OK(ref, hisp_vector_read(e, he));
            for (int64_t i = 0; i < n; i++) {
                double a = t == HISP_F64 ? hd[i] : ((float *)hd)[i],
                       b = t == HISP_F64 ? he[i] : ((float *)he)[i];
                ck_assert_msg(t == HISP_F64 ? a == b : fabs(a - b) <= 1e-6 * fabs(b),
                              "%s %s l1 %d zero %d row %lld: %g, reference %g (seed %llu)",
                              test_label(_i), hisp_type_name(t), l1, zero, (long long)i, a, b,
                              (unsigned long long)seed);
            }
            CK_OK(ctx, hispi_ks_diagonal(ctx, A, l1, &d2, &used, &kept));
            ck_assert(kept == test_on_device(_i) && (d2 == d) == kept);
            if (!kept) hisp_vector_destroy(&d), hisp_vector_destroy(&d2);
            if (kept) { /* a new device copy: a new diagonal, of the new values */
                double two[1] = {2};
                float twof[1] = {2};
                CK_OK(ctx, hisp_matrix_scale(A, t == HISP_F64 ? (void *)two : (void *)twof));
                CK_OK(ctx, hispi_ks_diagonal(ctx, A, l1, &d2, &used, &kept));
                ck_assert(kept);
                CK_OK(ctx, hisp_vector_read(d2, hd));
                double a = t == HISP_F64 ? hd[7] : ((float *)hd)[7],
                       b = t == HISP_F64 ? he[7] : ((float *)he)[7];
                ck_assert_double_eq_tol(a, 2 * b, 1e-6 * fabs(b));
            }
            hisp_vector_destroy(&e);
            hisp_matrix_destroy(&A), hisp_matrix_destroy(&B);
        }
    }
    if (test_fp64(ctx)) {
        hisp_precond pcs[2] = {HISP_PRECOND_JACOBI, HISP_PRECOND_CHEBYSHEV};
        for (int q = 0; q < 2; q++) {
            solve_case c = {HISP_SOLVER_CG, pcs[q], HISP_F64, true};
            int64_t it = solve_once(ctx, &c, _i, 1e-8), want = solve_once(ref, &c, -1, 1e-8);
            ck_assert_msg(llabs(it - want) <= 2, "%s %s: %lld iterations, reference %lld",
                          test_label(_i), hisp_precond_name(pcs[q]), (long long)it,
                          (long long)want);
        }
        cheb_refuses(ctx);
    }
    hispi_spgemm_cpu_kernels = 0;
    hisp_context_destroy(&ref), hisp_context_destroy(&ctx);
}
END_TEST

/* The kernels of kernels/ilu.cl through NVRTC (no device needed): real
 * and complex, single and double. */
START_TEST(test_nvrtc)
{
#ifdef HISP_HAVE_CUDA
    hisp_context ctx = ref_ctx();
    for (int k = 0; k < 4; k++) {
        char opts[128];
        snprintf(opts, sizeof opts,
                 "-DVALUE_T=%s -DIS_DOUBLE=%d -DIS_COMPLEX=%d -DATOM64=0 -DGS=%d",
                 k % 2 ? "double" : "float", k % 2, k / 2, HISPI_ILU_GS);
        if (!test_nvrtc_build(ctx, HISPI_PROG_ILU, opts, "ILU NVRTC builds")) break;
    }
    hisp_context_destroy(&ctx);
#else
    test_skip("ILU NVRTC builds: the CUDA backend is not compiled in");
#endif
}
END_TEST

/* hisp solve with --factor-sweeps and --solve-sweeps: what ran in --json,
 * converged with the residual recomputed; refused with other
 * preconditioners. */
START_TEST(test_cli)
{
    if (!test_hisp_bin()) {
        test_skip("hisp solve --factor-sweeps: the hisp program is not built");
        return;
    }
    char out[16384];
    int rc = test_run_cli(out, sizeof out,
                          "solve gen:poisson3d:10 --method cg --precond ic0 --factor-sweeps 2 "
                          "--solve-sweeps 3 --json");
    ck_assert_msg(rc == 0, "exit %d: %s", rc, out);
    ck_assert_int_eq(test_json_int(out, "factor_sweeps"), 2);
    ck_assert_int_eq(test_json_int(out, "solve_sweeps"), 3);
    ck_assert(test_json_double(out, "relative_residual") <= 1e-8);
    rc = test_run_cli(out, sizeof out,
                      "solve gen:poisson3d:10 --method cg --precond jacobi --solve-sweeps 2");
    ck_assert_int_eq(rc, 1); /* a usage error */
    rc = test_run_cli(out, sizeof out,
                      "solve gen:poisson3d:10 --method cg --precond ilu0 --factor-sweeps 51");
    ck_assert_int_eq(rc, 2); /* a value out of range */
}
END_TEST

Suite *suite_ilu(void)
{
    Suite *s = suite_create("ilu");
    TCase *tc = tcase_create("factor");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_factors);
    tcase_add_test(tc, test_pivots);
    tcase_add_test(tc, test_sweeps_limit);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_nvrtc);
    tcase_add_test(tc, test_cli);
    suite_add_tcase(s, tc);
    TCase *ts = tcase_create("solve");
    tcase_set_timeout(ts, 300);
    tcase_add_loop_test(ts, test_apply, 0, test_targets(NULL));
    tcase_add_loop_test(ts, test_device_pivots, 0, test_targets(NULL));
    tcase_add_loop_test(ts, test_solve, 0, test_targets(NULL));
    tcase_add_loop_test(ts, test_device_fallback, 0, test_targets(NULL));
    tcase_add_loop_test(ts, test_l1_jacobi, 0, test_targets(NULL));
    tcase_add_loop_test(ts, test_object, 0, test_targets(NULL));
    tcase_add_loop_test(ts, test_alloc_failures, 0, test_targets(NULL));
    tcase_add_loop_test(ts, test_device_failures, 0, test_targets(NULL));
    tcase_add_loop_test(ts, test_chebyshev, 0, test_targets(NULL));
    tcase_add_loop_test(ts, test_diag_device, 0, test_targets(NULL));
    suite_add_tcase(s, ts);
    return s;
}
