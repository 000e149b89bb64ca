/* Several right-hand sides (hisp.h hisp_solver_solve_columns): CG and
 * BiCGSTAB on a device in lock step (block.h), else the columns of B solved
 * one after another by hisp_solver_solve, each with its own iterations and
 * stop; a preconditioner with a setup (AMG, ILU(0), IC(0), Chebyshev) made
 * once for all of them; each column copied into a work vector and its
 * solution back (hispi_columns: on the device where the vectors live
 * there). */
#include "ksp.h"

static bool has_setup(hisp_precond p)
{
    return p == HISP_PRECOND_AMG || p == HISP_PRECOND_ILU0 || p == HISP_PRECOND_IC0 ||
           p == HISP_PRECOND_CHEBYSHEV;
}

hisp_status hisp_solver_solve_columns(hisp_solver s, hisp_matrix A, hisp_vector B, hisp_vector X,
                                      hisp_solve_info *info)
{
    if (!hispi_handle_live(s, HISPI_H_SOLVER)) return HISP_ERR_INVALID_HANDLE;
    hisp_context ctx = s->ctx;
    static const char f[] = "hisp_solver_solve_columns";
    if (!hispi_vec_ok(B) || !hispi_vec_ok(X))
        return hispi_fail(ctx, HISP_ERR_INVALID_HANDLE, "%s: B or X is not a live vector", f);
    if (B->ctx != ctx || X->ctx != ctx)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "%s: B and X must belong to the solver's context", f);
    int64_t k = B->cols ? B->cols : 1;
    if ((X->cols ? X->cols : 1) != k)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "%s: B has %lld columns, X %lld", f,
                          (long long)k, (long long)(X->cols ? X->cols : 1));
    if (B == X) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "%s: B and X must differ", f);
    if (k == 1) return hisp_solver_solve(s, A, B, X, info);
    if (!hispi_mat_ok(A)) return hispi_fail(ctx, HISP_ERR_INVALID_HANDLE, "%s: A is not live", f);
    hisp_matrix_info mi;
    HISPI_TRY(hisp_matrix_get_info(A, &mi));
    hisp_type vt;
    int per = 1;
    HISPI_TRY(hisp_compound_vector_type(mi.type, &vt, &per));
    if (B->n / k != mi.nrows * per || X->n / k != mi.ncols * per)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "%s: A is %lld x %lld, B's columns have %lld entries, X's %lld", f,
                          (long long)(mi.nrows * per), (long long)(mi.ncols * per),
                          (long long)(B->n / k), (long long)(X->n / k));
    /* none or Jacobi: no setup to share */
    if (hispi_solve_block_takes(s, A, X)) return hispi_solve_block(s, A, B, X, info);
    /* everything a column needs is made before the first solve changes X */
    hispi_columns cb = {0}, cx = {0};
    hisp_vector b = NULL, x = NULL;
    hisp_preconditioner P = NULL;
    double setup_ms = 0;
    hisp_status st = hispi_columns_open(B, true, f, &cb);
    if (!st) st = hispi_columns_open(X, true, f, &cx);
    if (!st) st = hisp_vector_create(ctx, B->type, cb.n, &b);
    if (!st) st = hisp_vector_create(ctx, X->type, cx.n, &x);
    if (!st && !s->pobj && has_setup(s->precond) && s->method != HISP_SOLVER_LSQR) {
        double t0 = hispi_now_ms();
        st = hisp_preconditioner_create(s->precond, A, &P);
        if (!st) s->pobj = P;
        setup_ms = hispi_now_ms() - t0;
    }
    for (int64_t j = 0; !st && j < k; j++) {
        st = hispi_columns_get(&cb, j, b);
        if (!st) st = hispi_columns_get(&cx, j, x);
        if (!st) st = hisp_solver_solve(s, A, b, x, info ? &info[j] : NULL);
        if (!st) st = hispi_columns_put(&cx, j, x);
    }
    if (!st && info && P) info[0].setup_ms += setup_ms; /* the shared setup: the first column's */
    if (P) s->pobj = NULL;
    hisp_preconditioner_destroy(&P);
    hisp_vector_destroy(&b);
    hisp_vector_destroy(&x);
    hispi_columns_close(&cb);
    hispi_columns_close(&cx);
    return st;
}
