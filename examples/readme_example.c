/* readme_example.c: a 2D Poisson matrix, y = A x on the best backend, then
 * A x = b solved by CG. Build: cc readme_example.c $(pkg-config --cflags --libs hisp) */
#include <hisp.h>
#include <stdio.h>

static int check(hisp_context ctx, hisp_status s, const char *what)
{
    if (s == HISP_SUCCESS) return 0;
    hisp_error_info e = {0};
    if (ctx && hisp_context_last_error(ctx, &e) == HISP_SUCCESS && e.message)
        fprintf(stderr, "%s: %s: %s\n", what, hisp_status_string(s), e.message);
    else
        fprintf(stderr, "%s: %s\n", what, hisp_status_string(s));
    return 1;
}
#define CHECK(call)                                                                                \
    if (check(ctx, (call), #call)) return 1

int main(void)
{
    hisp_context ctx = NULL;
    if (check(NULL, hisp_context_create(&ctx), "hisp_context_create")) return 1;
    CHECK(hisp_context_set_backend(ctx, HISP_BACKEND_AUTO, -1)); /* CUDA, else OpenCL, else C */
    hisp_device_info dev;
    CHECK(hisp_context_get_device(ctx, &dev));

    hisp_gen_params p;
    hisp_gen_defaults(HISP_GEN_POISSON2D, &p);
    p.n = 100; /* a 100 x 100 grid: 10000 rows */
    hisp_matrix A = NULL;
    CHECK(hisp_matrix_generate(ctx, &p, HISP_F64, &A));
    hisp_matrix_info mi;
    CHECK(hisp_matrix_get_info(A, &mi));

    hisp_vector x = NULL, y = NULL, b = NULL;
    CHECK(hisp_vector_create(ctx, HISP_F64, mi.ncols, &x));
    CHECK(hisp_vector_create(ctx, HISP_F64, mi.nrows, &y));
    CHECK(hisp_vector_create(ctx, HISP_F64, mi.nrows, &b));
    double one = 1, zero = 0, norm = 0;
    CHECK(hisp_vector_fill(x, hisp_scalar_host(&one)));
    CHECK(hisp_spmv(ctx, HISP_OP_N, &one, A, x, &zero, y)); /* y = A x */
    CHECK(hisp_vector_nrm2(y, hisp_result_host(&norm)));
    printf("%s backend (%s): %lld x %lld, %lld nonzeros, ||A 1|| = %g\n",
           hisp_backend_name(dev.backend), dev.name, (long long)mi.nrows, (long long)mi.ncols,
           (long long)mi.nnz, norm);

    hisp_solver cg = NULL;
    hisp_solve_info info;
    CHECK(hisp_vector_fill(b, hisp_scalar_host(&one)));
    CHECK(hisp_vector_fill(x, hisp_scalar_host(&zero))); /* initial guess */
    CHECK(hisp_solver_create(ctx, HISP_SOLVER_CG, &cg));
    CHECK(hisp_solver_set_preconditioner(cg, HISP_PRECOND_JACOBI));
    CHECK(hisp_solver_solve(cg, A, b, x, &info));
    printf("CG: %s after %lld iterations, relative residual %.2e\n",
           hisp_stop_reason_name(info.reason), (long long)info.iterations, info.relative_residual);

    hisp_solver_destroy(&cg);
    hisp_vector_destroy(&x);
    hisp_vector_destroy(&y);
    hisp_vector_destroy(&b);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
    return info.converged ? 0 : 1;
}
