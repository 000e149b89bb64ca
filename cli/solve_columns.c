/* hisp solve with a right-hand side of several columns (--rhs B.mtx of k
 * columns): hisp_solver_solve_columns, each column's true residual
 * recomputed here, -o's k columns, and the report. */
#include "solve.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    double rel, rnorm, bnorm; /* recomputed from the returned column */
} column_truth;

/* ||b_j - A x_j|| for every column, by one product a column on the host's
 * copies (any entry type hisp_spmv takes) */
static hisp_status truths(hisp_context ctx, hisp_matrix A, hisp_type vt, int64_t nb, int64_t nx,
                          int64_t k, const void *bh, const void *xh, column_truth *t)
{
    size_t es = hisp_type_size(vt);
    bool single = es / (size_t)hisp_type_components(vt) == 4;
    const float m1f = -1, onef = 1;
    const double m1 = -1, one = 1;
    const void *am = single ? (const void *)&m1f : (const void *)&m1;
    const void *a1 = single ? (const void *)&onef : (const void *)&one;
    hisp_vector x = NULL, r = NULL;
    void *rh = malloc((size_t)(nb > 0 ? nb : 1) * es);
    hisp_status s = rh ? HISP_SUCCESS : HISP_ERR_OUT_OF_HOST_MEMORY;
    if (!s) s = hisp_vector_create(ctx, vt, nx, &x);
    if (!s) s = hisp_vector_create(ctx, vt, nb, &r);
    for (int64_t j = 0; !s && j < k; j++) {
        const char *bj = (const char *)bh + (size_t)(j * nb) * es;
        s = hisp_vector_write(x, (const char *)xh + (size_t)(j * nx) * es);
        if (!s) s = hisp_vector_write(r, bj);
        if (!s) s = hisp_spmv(ctx, HISP_OP_N, am, A, x, a1, r);
        if (!s) s = hisp_vector_read(r, rh);
        if (!s) {
            t[j].rnorm = solve_host_norm(vt, rh, nb);
            t[j].bnorm = solve_host_norm(vt, bj, nb);
            t[j].rel = t[j].bnorm > 0 ? t[j].rnorm / t[j].bnorm : t[j].rnorm;
        }
    }
    hisp_vector_destroy(&x);
    hisp_vector_destroy(&r);
    free(rh);
    return s;
}

static void print_json(const solve_opts *o, const solve_result *r, int64_t k,
                       const hisp_solve_info *in, const column_truth *t, double ms,
                       int64_t iterations, int64_t converged)
{
    cli_json j;
    json_init(&j, stdout);
    solve_json_head(&j, o, r);
    json_string(&j, "backend", hisp_backend_name(r->dev.backend));
    json_device(&j, "device", &r->dev);
    json_string(&j, "method", hisp_solver_method_name(o->method));
    json_string(&j, "precond", hisp_precond_name(o->precond));
    json_double(&j, "rtol", o->rtol);
    json_double(&j, "atol", o->atol);
    json_int(&j, "maxit", o->maxit);
    json_string(&j, "rhs", o->rhs);
    if (o->x0) json_string(&j, "x0", o->x0);
    json_int(&j, "columns", k);
    json_bool(&j, "converged", converged == k);
    json_int(&j, "converged_columns", converged);
    json_int(&j, "iterations", iterations);
    json_double(&j, "ms", ms);
    json_array_begin(&j, "column");
    for (int64_t c = 0; c < k; c++) {
        json_object_begin(&j, NULL);
        json_bool(&j, "converged", in[c].converged != 0);
        json_string(&j, "reason", hisp_stop_reason_name(in[c].reason));
        json_int(&j, "iterations", in[c].iterations);
        json_double(&j, "relative_residual", t[c].rel);
        json_double(&j, "residual_norm", t[c].rnorm);
        json_double(&j, "rhs_norm", t[c].bnorm);
        json_double(&j, "solver_relative_residual", in[c].relative_residual);
        json_int(&j, "restarts", in[c].restarts);
        json_double(&j, "setup_ms", in[c].setup_ms);
        json_double(&j, "ms", in[c].ms);
        json_object_end(&j);
    }
    json_array_end(&j);
    json_transfers(&j, &r->xfer, "the solve");
    json_object_end(&j);
    json_finish(&j);
}

static void print_text(const solve_opts *o, const solve_result *r, int64_t k,
                       const hisp_solve_info *in, const column_truth *t, double ms,
                       int64_t iterations, int64_t converged)
{
    printf("matrix     %s: %lld x %lld, %lld nonzeros, %s, %s\n", o->spec, (long long)r->mi.nrows,
           (long long)r->mi.ncols, (long long)r->mi.nnz, hisp_type_name(r->mi.type), r->format);
    printf("method     %s, preconditioner %s, rtol %g, atol %g, maxit %lld\n",
           hisp_solver_method_name(o->method), hisp_precond_name(o->precond), o->rtol, o->atol,
           (long long)o->maxit);
    printf("backend    %s, device %d: %s (%s)\n", hisp_backend_name(r->dev.backend), r->dev.index,
           r->dev.name, r->dev.platform);
    printf("columns    %lld right-hand sides, solved one after another: %lld converged, "
           "%lld iterations in all, %.3f ms\n",
           (long long)k, (long long)converged, (long long)iterations, ms);
    for (int64_t c = 0; c < k; c++)
        printf("  %4lld     %s after %lld iterations, ||b - A x|| / ||b|| = %.3e (recomputed)\n",
               (long long)c, hisp_stop_reason_name(in[c].reason), (long long)in[c].iterations,
               t[c].rel);
    if (o->out) printf("wrote      %s (%lld columns)\n", o->out, (long long)k);
}

int solve_columns(hisp_context ctx, hisp_matrix A, const solve_opts *o, const void *bh,
                  const void *xh, int64_t k, solve_result *res)
{
    int per = 1;
    hisp_type vt2;
    hisp_status s = hisp_compound_vector_type(res->mi.type, &vt2, &per);
    hisp_type vt = res->vt;
    int64_t nb = res->mi.nrows * per, nx = res->mi.ncols * per;
    size_t es = hisp_type_size(vt);
    hisp_vector B = NULL, X = NULL;
    hisp_solver sv = NULL;
    cli_history h;
    cli_history_init(&h, false);
    hisp_solve_info *in = calloc((size_t)k, sizeof *in);
    column_truth *t = calloc((size_t)k, sizeof *t);
    void *xo = malloc((size_t)(nx * k > 0 ? nx * k : 1) * es);
    if (!in || !t || !xo) s = HISP_ERR_OUT_OF_HOST_MEMORY;
    if (!s) s = hisp_context_get_device(ctx, &res->dev);
    if (!s) s = hisp_vector_create_columns(ctx, vt, nb, k, HISP_ORDER_COL, &B);
    if (!s) s = hisp_vector_create_columns(ctx, vt, nx, k, HISP_ORDER_COL, &X);
    if (!s) s = hisp_vector_write(B, bh);
    if (!s) s = hisp_vector_write(X, xh);
    if (!s) s = solve_set_up_solver(ctx, o, &h, &sv);
    double ms = 0;
    if (!s) {
        cli_progress("solving %lld columns with %s", (long long)k,
                     hisp_solver_method_name(o->method));
        cli_transfers_reset(ctx);
        double t0 = cli_now_ms();
        s = hisp_solver_solve_columns(sv, A, B, X, in);
        if (!s) s = hisp_context_synchronize(ctx);
        ms = cli_now_ms() - t0;
        cli_transfers_add(ctx, &res->xfer);
    }
    if (!s) s = hisp_vector_read(X, xo);
    if (!s) s = truths(ctx, A, vt, nb, nx, k, bh, xo, t);
    int rc = CLI_OK;
    if (s) rc = cli_fail(ctx, s, NULL);
    if (!rc && o->out) {
        cli_progress("writing %s", o->out);
        s = hisp_vector_write_mtx(X, o->out);
        if (s) rc = cli_fail(ctx, s, o->out);
    }
    if (!rc) {
        int64_t iterations = 0, converged = 0;
        for (int64_t c = 0; c < k; c++)
            iterations += in[c].iterations, converged += in[c].converged != 0;
        if (o->json)
            print_json(o, res, k, in, t, ms, iterations, converged);
        else
            print_text(o, res, k, in, t, ms, iterations, converged);
        if (converged < k) {
            if (!o->json)
                fprintf(stderr, "hisp: not converged: %lld of %lld columns\n",
                        (long long)(k - converged), (long long)k);
            rc = CLI_NOT_CONVERGED;
        }
    }
    cli_history_end(&h);
    cli_history_free(&h);
    hisp_solver_destroy(&sv);
    hisp_vector_destroy(&B);
    hisp_vector_destroy(&X);
    free(in), free(t), free(xo);
    return rc;
}
