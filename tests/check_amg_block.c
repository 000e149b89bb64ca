/* AMG on nodes of several unknowns (amg_block; core/amg/): the node graph
 * against a dense computation of its blocks' squared norms; hierarchies of
 * a 3D elasticity matrix set up on every target against the reference's
 * (sizes, entries, the prolongators' products, every level a whole number
 * of nodes); CG with the V-cycle on the b3x3 matrix itself (its scalars
 * aggregated by nodes of 3: converged, the reported residual true, fewer
 * iterations than aggregation of single rows and than Jacobi); the errors
 * (rows that do not make whole nodes, the option's range). */
#include "amg/hispi_amg.h"
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

extern int hispi_spgemm_cpu_kernels;

/* The elasticity matrix of side n (b3x3 of type t) on ctx. */
static hisp_matrix elastic(hisp_context ctx, int64_t n, hisp_type t)
{
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_generate_compound(ctx, HISP_CGEN_ELASTIC3D, n, 1, t, &A));
    return A;
}

/* its scalars (f64 CSR) */
static hisp_matrix elastic_scalars(hisp_context ctx, int64_t n)
{
    hisp_matrix B = elastic(ctx, n, HISP_B3X3_F64), A = NULL;
    CK_OK(ctx, hisp_matrix_expand_real(B, &A));
    CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_CSR));
    hisp_matrix_destroy(&B);
    return A;
}

START_TEST(test_nodes)
{
    hisp_context ctx = NULL;
    ck_assert_int_eq(hisp_context_create(&ctx), HISP_SUCCESS);
    uint64_t st = test_seed();
    for (int b = 2; b <= 3; b++) {
        int64_t m = 40, n = b * m;
        /* random rows: a few entries each (zeros among them), the diagonal */
        int64_t *p = malloc((size_t)(n + 1) * 8);
        int32_t *c = malloc((size_t)n * 8 * 4);
        double *v = malloc((size_t)n * 8 * 8), *dense = calloc((size_t)(m * m), 8);
        char *has = calloc((size_t)(m * m), 1);
        p[0] = 0;
        for (int64_t i = 0; i < n; i++) {
            int64_t k = p[i];
            for (int e = 0; e < 8; e++) {
                int32_t j = e == 0
                                ? (int32_t)i
                                : (int32_t)(test_uniform(&st) * 0.5 * (double)n + 0.5 * (double)n) %
                                      (int32_t)n;
                bool dup = false;
                for (int64_t q = p[i]; q < k; q++)
                    dup |= c[q] == j;
                if (dup) continue;
                c[k] = j;
                v[k] = e == 3 ? 0 : test_uniform(&st);
                dense[(i / b) * m + j / b] += v[k] * v[k];
                has[(i / b) * m + j / b] = 1;
                k++;
            }
            p[i + 1] = k;
        }
        int64_t *np = NULL;
        int32_t *nc = NULL;
        double *nv = NULL;
        CK_OK(ctx, hispi_amg_nodes(ctx, n, b, p, c, v, HISP_F64, &np, &nc, &nv));
        for (int64_t I = 0; I < m; I++) {
            int64_t k = np[I];
            for (int64_t J = 0; J < m; J++) {
                if (!has[I * m + J]) continue;
                ck_assert_msg(k < np[I + 1] && nc[k] == J, "b %d: node (%lld, %lld) missing", b,
                              (long long)I, (long long)J);
                ck_assert_msg(fabs(nv[k] - dense[I * m + J]) <= 1e-14 * dense[I * m + J],
                              "b %d: node (%lld, %lld): %g, the blocks' %g", b, (long long)I,
                              (long long)J, nv[k], dense[I * m + J]);
                k++;
            }
            ck_assert_msg(k == np[I + 1], "b %d: node %lld has entries beyond its blocks", b,
                          (long long)I);
        }
        free(np), free(nc), free(nv);
        free(p), free(c), free(v), free(dense), free(has);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* y = X x by the library (X's own context). */
static void apply(hisp_context ctx, hisp_matrix X, const double *x, double *y)
{
    hisp_matrix_info mi;
    CK_OK(ctx, hisp_matrix_get_info(X, &mi));
    hisp_vector vx = NULL, vy = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, mi.ncols, &vx));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, mi.nrows, &vy));
    CK_OK(ctx, hisp_vector_write(vx, x));
    double one = 1, zero = 0;
    CK_OK(ctx, hisp_spmv(ctx, HISP_OP_N, &one, X, vx, &zero, vy));
    CK_OK(ctx, hisp_vector_read(vy, y));
    hisp_vector_destroy(&vx), hisp_vector_destroy(&vy);
}

/* Elasticity's hierarchy in nodes of 3 on target t and on the reference:
 * the same levels (rows, entries; each a whole number of nodes) and, in
 * f64, the same prolongators and coarse operators (their products with a
 * random vector within 1e-10). */
START_TEST(test_block_setup)
{
    hisp_context ctx = test_context(_i), cr = NULL;
    ck_assert_int_eq(hisp_context_create(&cr), HISP_SUCCESS);
    CK_OK(cr, hisp_context_set_backend(cr, HISP_BACKEND_REFERENCE, 0));
    hispi_spgemm_cpu_kernels = 1; /* the device's setup on a CPU device too */
    hisp_matrix A = elastic_scalars(ctx, 6), Ar = elastic_scalars(cr, 6);
    hispi_amg_opts o;
    hispi_amg_defaults(&o);
    o.block = 3, o.max_coarse = 20;
    hispi_amg h, hr;
    CK_OK(ctx, hispi_amg_setup(A, &o, NULL, &h));
    CK_OK(cr, hispi_amg_setup(Ar, &o, NULL, &hr));
    ck_assert_msg(h.nlevels == hr.nlevels && h.nlevels >= 2, "%s: %d levels, the reference's %d",
                  test_label(_i), h.nlevels, hr.nlevels);
    uint64_t st = test_seed();
    for (int l = 0; l < h.nlevels; l++) {
        ck_assert_msg(h.rows[l] == hr.rows[l] && h.nnz[l] == hr.nnz[l] && h.rows[l] % 3 == 0,
                      "%s: level %d: %lld rows (%lld entries), the reference's %lld (%lld)",
                      test_label(_i), l, (long long)h.rows[l], (long long)h.nnz[l],
                      (long long)hr.rows[l], (long long)hr.nnz[l]);
        hisp_matrix M[2] = {l ? h.A[l] : NULL, l + 1 < h.nlevels ? h.P[l] : NULL};
        hisp_matrix Mr[2] = {l ? hr.A[l] : NULL, l + 1 < h.nlevels ? hr.P[l] : NULL};
        for (int q = 0; q < 2; q++) {
            if (!M[q]) continue;
            hisp_matrix_info mi;
            CK_OK(ctx, hisp_matrix_get_info(M[q], &mi));
            double *x = malloc((size_t)mi.ncols * 8), *y = malloc((size_t)mi.nrows * 8),
                   *yr = malloc((size_t)mi.nrows * 8), big = 0;
            for (int64_t j = 0; j < mi.ncols; j++)
                x[j] = test_uniform(&st);
            apply(ctx, M[q], x, y);
            apply(cr, Mr[q], x, yr);
            for (int64_t i = 0; i < mi.nrows; i++)
                big = fmax(big, fabs(yr[i]));
            for (int64_t i = 0; i < mi.nrows; i++)
                ck_assert_msg(fabs(y[i] - yr[i]) <= 1e-10 * big, "%s: level %d %s row %lld: %g, %g",
                              test_label(_i), l, q ? "P" : "A", (long long)i, y[i], yr[i]);
            free(x), free(y), free(yr);
        }
    }
    hispi_spgemm_cpu_kernels = 0;
    hispi_amg_free(&h), hispi_amg_free(&hr);
    hisp_matrix_destroy(&A), hisp_matrix_destroy(&Ar);
    hisp_context_destroy(&ctx), hisp_context_destroy(&cr);
}
END_TEST

/* CG on the b3x3 system with pc (block: the amg_block option, NULL the
 * default): converged, the true residual (by the scalars) as reported;
 * the iterations. */
static int64_t block_cg(int t, hisp_context ctx, hisp_matrix A, hisp_matrix S, hisp_precond pc,
                        const char *block)
{
    hisp_matrix_info mi;
    CK_OK(ctx, hisp_matrix_get_info(S, &mi));
    int64_t n = mi.nrows;
    double *hb = malloc((size_t)n * 8), *hx = malloc((size_t)n * 8), *r = malloc((size_t)n * 8);
    uint64_t st = 99;
    for (int64_t i = 0; i < n; i++)
        hb[i] = test_uniform(&st);
    CK_OK(ctx, hisp_context_set_option(ctx, "amg_block", block ? block : "0"));
    hisp_vector b = NULL, x = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, n, &b));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, n, &x));
    CK_OK(ctx, hisp_vector_write(b, hb));
    double zero = 0;
    CK_OK(ctx, hisp_vector_fill(x, hisp_scalar_host(&zero)));
    hisp_solver s = NULL;
    CK_OK(ctx, hisp_solver_create(ctx, HISP_SOLVER_CG, &s));
    CK_OK(ctx, hisp_solver_set_preconditioner(s, pc));
    hisp_solve_info info;
    CK_OK(ctx, hisp_solver_solve(s, A, b, x, &info));
    CK_OK(ctx, hisp_vector_read(x, hx));
    apply(ctx, S, hx, r);
    double rn = 0, bn = 0;
    for (int64_t i = 0; i < n; i++)
        rn += (hb[i] - r[i]) * (hb[i] - r[i]), bn += hb[i] * hb[i];
    double tr = sqrt(rn / bn);
    ck_assert_msg(info.converged && tr <= 1.01e-8 &&
                      fabs(tr - info.relative_residual) <= 1e-3 * tr + 1e-12,
                  "%s %s block %s: converged %d after %lld, reported %g, true %g", test_label(t),
                  hisp_precond_name(pc), block ? block : "default", info.converged,
                  (long long)info.iterations, info.relative_residual, tr);
    hisp_solver_destroy(&s);
    hisp_vector_destroy(&b), hisp_vector_destroy(&x);
    free(hb), free(hx), free(r);
    CK_OK(ctx, hisp_context_set_option(ctx, "amg_block", "0"));
    return info.iterations;
}

START_TEST(test_block_solve)
{
    hisp_context ctx = test_context(_i);
    hisp_matrix A = elastic(ctx, 12, HISP_B3X3_F64), S = NULL;
    CK_OK(ctx, hisp_matrix_expand_real(A, &S));
    int64_t nodes = block_cg(_i, ctx, A, S, HISP_PRECOND_AMG, NULL);
    int64_t three = block_cg(_i, ctx, S, S, HISP_PRECOND_AMG, "3");
    int64_t rows = block_cg(_i, ctx, S, S, HISP_PRECOND_AMG, "1");
    int64_t jacobi = block_cg(_i, ctx, A, S, HISP_PRECOND_JACOBI, NULL);
    ck_assert_msg(nodes == three && nodes < rows && 3 * nodes < jacobi,
                  "%s: AMG-CG %lld iterations on b3x3, %lld on its scalars in nodes of 3, %lld "
                  "in single rows; Jacobi-CG %lld",
                  test_label(_i), (long long)nodes, (long long)three, (long long)rows,
                  (long long)jacobi);
    hisp_matrix_destroy(&A), hisp_matrix_destroy(&S);
    hisp_context_destroy(&ctx);
}
END_TEST

START_TEST(test_block_errors)
{
    hisp_context ctx = NULL;
    ck_assert_int_eq(hisp_context_create(&ctx), HISP_SUCCESS);
    CK_OK(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_REFERENCE, 0));
    ck_assert_int_eq(hisp_context_set_option(ctx, "amg_block", "9"), HISP_ERR_INVALID_ARGUMENT);
    hisp_gen_params p;
    hisp_gen_defaults(HISP_GEN_POISSON2D, &p);
    p.n = 5; /* 25 rows */
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_generate(ctx, &p, HISP_F64, &A));
    CK_OK(ctx, hisp_context_set_option(ctx, "amg_block", "2"));
    hisp_preconditioner P = NULL;
    ck_assert_int_eq(hisp_preconditioner_create(HISP_PRECOND_AMG, A, &P),
                     HISP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(P);
    hisp_error_info e;
    CK_OK(ctx, hisp_context_last_error(ctx, &e));
    ck_assert_msg(strstr(e.message, "25 rows") && strstr(e.message, "amg_block"), "%s", e.message);
    CK_OK(ctx, hisp_context_set_option(ctx, "amg_block", "5")); /* 5 nodes of 5 */
    CK_OK(ctx, hisp_preconditioner_create(HISP_PRECOND_AMG, A, &P));
    hisp_preconditioner_destroy(&P);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

Suite *suite_amg_block(void)
{
    Suite *s = suite_create("amg_block");
    TCase *tc = tcase_create("host");
    tcase_add_test(tc, test_nodes);
    tcase_add_test(tc, test_block_errors);
    suite_add_tcase(s, tc);
    TCase *ts = tcase_create("targets");
    tcase_set_timeout(ts, 600);
    tcase_add_loop_test(ts, test_block_setup, 0, test_targets(NULL));
    tcase_add_loop_test(ts, test_block_solve, 0, test_targets(NULL));
    suite_add_tcase(s, ts);
    return s;
}
