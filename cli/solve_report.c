/* hisp solve's output: the text report, the --json object and the --plot
 * convergence chart. */
#include "mspmv.h"
#include "solve.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* ---- output ------------------------------------------------------------------ */

static double ms_per_iteration(const solve_result *r)
{
    double solve_ms = r->info.ms - r->info.setup_ms;
    return r->info.iterations > 0 ? solve_ms / (double)r->info.iterations : NAN;
}

/* the relative residual the method's recurrence carried at its stop */
static double method_rel(const solve_result *r)
{
    return r->info.rhs_norm > 0 ? r->info.method_residual_norm / r->info.rhs_norm : 0;
}

static double spmv_share(const solve_opts *o, const solve_result *r)
{
    double per = ms_per_iteration(r);
    double spmv =
        o->method == HISP_SOLVER_LSQR ? r->spmv_ms + r->spmv_t_ms : r->products * r->spmv_ms;
    return per > 0 ? spmv / per : NAN;
}

/* sum over the levels of rows (grid) or entries (operator) / the finest's */
static double complexity(const int64_t *v, int levels)
{
    double s = 0;
    for (int l = 0; l < levels; l++)
        s += (double)v[l];
    return v[0] ? s / (double)v[0] : 0;
}

/* AMG's hierarchy: "levels" (rows, nnz per level) and its complexities. */
static void json_levels(cli_json *j, const hisp_solve_info *in)
{
    if (in->precond_levels <= 0) return;
    json_array_begin(j, "levels");
    for (int l = 0; l < in->precond_levels; l++) {
        json_object_begin(j, NULL);
        json_int(j, "rows", in->precond_rows[l]);
        json_int(j, "nnz", in->precond_nnz[l]);
        json_object_end(j);
    }
    json_array_end(j);
    json_double(j, "operator_complexity", complexity(in->precond_nnz, in->precond_levels));
    json_double(j, "grid_complexity", complexity(in->precond_rows, in->precond_levels));
    json_string(j, "levels_type", hisp_type_name(in->precond_type));
}

void solve_json_head(cli_json *j, const solve_opts *o, const solve_result *r)
{
    json_object_begin(j, NULL);
    json_input(j, o->spec);
    json_int(j, "rows", r->mi.nrows);
    json_int(j, "cols", r->mi.ncols);
    json_int(j, "nnz", r->mi.nnz);
    json_string(j, "type", hisp_type_name(r->mi.type));
    json_string(j, "format", r->format);
}

void solve_print_json(const solve_opts *o, const solve_result *r)
{
    bool lsqr = o->method == HISP_SOLVER_LSQR;
    cli_json j;
    json_init(&j, stdout);
    solve_json_head(&j, o, r);
    if (r->ndev > 1) {
        json_string(&j, "backend", hisp_backend_name(r->refs[0].backend));
        json_array_begin(&j, "devices");
        for (int k = 0; k < r->ndev; k++) {
            json_object_begin(&j, NULL);
            json_string(&j, "backend", hisp_backend_name(r->refs[k].backend));
            json_int(&j, "index", r->refs[k].device);
            json_object_end(&j);
        }
        json_array_end(&j);
        json_bool(&j, "shared_devices", r->shared);
    } else {
        json_string(&j, "backend", hisp_backend_name(r->dev.backend));
        json_device(&j, "device", &r->dev);
    }
    json_string(&j, "method", hisp_solver_method_name(o->method));
    json_string(&j, "precond", hisp_precond_name(o->precond));
    json_string(&j, "precond_used", hisp_precond_name(r->info.precond));
    if (o->precond == HISP_PRECOND_ILU0 || o->precond == HISP_PRECOND_IC0) {
        json_int(&j, "precond_shifted", r->info.precond_shifted);
        json_int(&j, "precond_filled", r->info.precond_filled);
        if (o->precond == HISP_PRECOND_IC0)
            json_double(&j, "precond_diag_shift", r->info.precond_diag_shift);
        json_int(&j, "factor_sweeps", r->info.precond_factor_sweeps);
        json_int(&j, "solve_sweeps", r->info.precond_solve_sweeps);
    }
    json_double(&j, "rtol", o->rtol);
    json_double(&j, "atol", o->atol);
    json_int(&j, "maxit", o->maxit);
    json_int(&j, "check_interval", o->check);
    if (o->method == HISP_SOLVER_GMRES) json_int(&j, "restart", o->restart);
    if (lsqr) json_double(&j, "damp", o->damp);
    json_string(&j, "rhs", o->rhs);
    if (strcmp(o->rhs, "random") == 0) json_uint(&j, "seed", o->seed);
    if (o->x0) json_string(&j, "x0", o->x0);
    json_bool(&j, "converged", r->info.converged != 0);
    json_string(&j, "reason", hisp_stop_reason_name(r->info.reason));
    json_int(&j, "iterations", r->info.iterations);
    json_double(&j, "relative_residual", r->rel);
    json_double(&j, "residual_norm", r->rnorm);
    json_double(&j, "rhs_norm", r->bnorm);
    if (lsqr) json_double(&j, "normal_relative_residual", r->normal_rel);
    json_double(&j, "method_relative_residual", method_rel(r));
    json_double(&j, "solver_relative_residual", r->info.relative_residual);
    json_int(&j, "restarts", r->info.restarts);
    json_bool(&j, "on_host", r->info.on_host != 0);
    json_string(&j, "solver_precision", o->amg[SOLVE_PREC_OPT].now);
    json_string(&j, "iteration_type", hisp_type_name(r->info.iteration_type));
    json_int(&j, "refinements", r->info.refinements);
    json_double(&j, "prepare_ms", r->prepare_ms);
    json_double(&j, "setup_ms", r->info.setup_ms);
    json_double(&j, "solve_ms", r->info.ms - r->info.setup_ms);
    json_double(&j, "ms_per_iteration", ms_per_iteration(r));
    json_double(&j, "spmv_ms", r->spmv_ms);
    if (lsqr) json_double(&j, "spmv_transpose_ms", r->spmv_t_ms);
    json_int(&j, "products_per_iteration", r->products);
    json_double(&j, "spmv_share", spmv_share(o, r));
    json_levels(&j, &r->info);
    if (o->solves > 1) {
        json_int(&j, "solves", o->solves);
        json_double(&j, "precond_setup_ms", r->pc_setup_ms);
        json_double(&j, "median_solve_ms", r->median_solve_ms);
        if (o->update) json_double(&j, "median_update_ms", r->median_update_ms);
    }
    if (o->precond == HISP_PRECOND_AMG && r->info.precond_levels > 0)
        for (int i = 0; i < SOLVE_AMG_OPTS; i++)
            json_string(&j, o->amg[i].name, o->amg[i].now);
    if (o->precond == HISP_PRECOND_CHEBYSHEV)
        json_string(&j, o->amg[SOLVE_CHEB_OPT].name, o->amg[SOLVE_CHEB_OPT].now);
    if (o->out) json_string(&j, "out", o->out);
    if (o->history) json_string(&j, "history", o->history);
    if (o->plot) json_string(&j, "plot", o->plot);
    json_transfers(&j, &r->xfer, r->ndev > 1 ? MSPMV_XFER_COVERS : NULL);
    if (r->ndev <= 1) json_builds(&j, &r->builds);
    json_object_end(&j);
    json_finish(&j);
}

/* What the preconditioner's setup did beyond what was asked. */
static void print_precond_note(const solve_opts *o, const hisp_solve_info *in)
{
    if (o->precond == HISP_PRECOND_JACOBI && in->precond == HISP_PRECOND_L1_JACOBI)
        printf("note       A has a zero diagonal entry: l1-jacobi (row sums of |A|) ran "
               "instead of jacobi\n");
    if (in->precond_filled > 0)
        printf("note       %s: %lld missing diagonal entries added to the pattern\n",
               hisp_precond_name(o->precond), (long long)in->precond_filled);
    if (in->precond_shifted > 0)
        printf("note       %s: %lld tiny or zero pivots replaced (1e-3 of their row's largest "
               "entry)\n",
               hisp_precond_name(o->precond), (long long)in->precond_shifted);
    if (in->precond_diag_shift > 0)
        printf("note       ic0: a pivot was not positive; A + %g diag(r) was factorised\n",
               in->precond_diag_shift);
    if (o->precond == HISP_PRECOND_ILU0 || o->precond == HISP_PRECOND_IC0) {
        char f[48] = "exactly", s[48] = "exact";
        if (in->precond_factor_sweeps)
            snprintf(f, sizeof f, "by %d fixed-point sweeps", in->precond_factor_sweeps);
        if (in->precond_solve_sweeps)
            snprintf(s, sizeof s, "%d Jacobi sweeps each", in->precond_solve_sweeps);
        printf("note       %s: factorised %s; triangular solves %s\n",
               hisp_precond_name(o->precond), f, s);
    }
}

void solve_print_text(const solve_opts *o, const solve_result *r)
{
    bool lsqr = o->method == HISP_SOLVER_LSQR;
    printf("matrix     %s: %lld x %lld, %lld nonzeros, %s, %s\n", o->spec, (long long)r->mi.nrows,
           (long long)r->mi.ncols, (long long)r->mi.nnz, hisp_type_name(r->mi.type), r->format);
    printf("method     %s, preconditioner %s, rtol %g, atol %g, maxit %lld",
           hisp_solver_method_name(o->method), hisp_precond_name(o->precond), o->rtol, o->atol,
           (long long)o->maxit);
    if (o->method == HISP_SOLVER_GMRES) printf(", restart %d", o->restart);
    if (lsqr) printf(", damp %g", o->damp);
    printf("\n");
    print_precond_note(o, &r->info);
    if (r->ndev > 1)
        printf("devices    %d x %s (pcsr parts%s)\n", r->ndev,
               hisp_backend_name(r->refs[0].backend), r->shared ? ", several per device" : "");
    else
        printf("backend    %s, device %d: %s (%s)\n", hisp_backend_name(r->dev.backend),
               r->dev.index, r->dev.name, r->dev.platform);
    if (r->ndev <= 1 && r->info.on_host)
        printf("           on the host's loops (a small system: a CPU device's kernels "
               "cost more)\n");
    printf("stopped    %s after %lld iterations\n", hisp_stop_reason_name(r->info.reason),
           (long long)r->info.iterations);
    if (r->info.refinements > 0 && r->info.iteration_type == r->vt)
        printf("precision  mixed, then %s: the f32 iterations stopped gaining after %lld "
               "updates of x; the solve went on in %s from there\n",
               hisp_type_name(r->vt), (long long)r->info.refinements, hisp_type_name(r->vt));
    else if (r->info.refinements > 0)
        printf("precision  mixed: the iterations in %s, %lld updates of x and its residual in "
               "%s\n",
               hisp_type_name(r->info.iteration_type), (long long)r->info.refinements,
               hisp_type_name(r->vt));
    else if (strcmp(o->amg[SOLVE_PREC_OPT].now, "mixed") == 0)
        printf("precision  %s throughout (mixed takes cg on an f64 matrix whose entries f32 "
               "holds, without a preconditioner object)\n",
               hisp_type_name(r->info.iteration_type));
    printf("residual   ||b - A x|| / ||b|| = %.3e (recomputed from x)\n", r->rel);
    if (lsqr)
        printf("           ||A^T (b - A x)|| / ||A^T b|| = %.3e (the normal equations: what "
               "lsqr's tolerance bounds)\n",
               r->normal_rel);
    printf("           the method's recurrence: %.3e", method_rel(r));
    if (r->info.restarts > 0)
        printf(" (restarted %lld times from the true residual)", (long long)r->info.restarts);
    printf("\n");
    const hisp_solve_info *in = &r->info;
    if (in->precond_levels > 0) {
        printf("hierarchy  %d levels, rows (entries):", in->precond_levels);
        for (int l = 0; l < in->precond_levels; l++)
            printf("%s %lld (%lld)", l ? " >" : "", (long long)in->precond_rows[l],
                   (long long)in->precond_nnz[l]);
        printf("\n           operator complexity %.3f, grid complexity %.3f; theta %s, %s, %s "
               "sweeps, block %s, levels in %s\n",
               complexity(in->precond_nnz, in->precond_levels),
               complexity(in->precond_rows, in->precond_levels), o->amg[0].now, o->amg[1].now,
               o->amg[2].now, o->amg[3].now, hisp_type_name(in->precond_type));
    }
    if (o->solves > 1)
        printf("solves     %d from x0: the preconditioner's setup %.3f ms once, then a median "
               "%.3f ms per solve (its setup and iterations); below, the last solve\n",
               o->solves, r->pc_setup_ms, r->median_solve_ms);
    if (o->update)
        printf("update     the hierarchy set up again before each later solve: a median "
               "%.3f ms\n",
               r->median_update_ms);
    printf("time       setup %.3f ms, solve %.3f ms", r->info.setup_ms,
           r->info.ms - r->info.setup_ms);
    if (r->info.iterations > 0) printf(" = %.4f ms per iteration", ms_per_iteration(r));
    printf(" (before: upload and kernels %.3f ms)\n", r->prepare_ms);
    if (lsqr)
        printf("spmv       A x %.4f ms, A^T x %.4f ms (medians of %d)", r->spmv_ms, r->spmv_t_ms,
               SOLVE_SPMV_RUNS);
    else
        printf("spmv       %.4f ms (median of %d), %d per iteration", r->spmv_ms, SOLVE_SPMV_RUNS,
               r->products);
    double share = spmv_share(o, r);
    if (isfinite(share)) printf(": %.0f%% of an iteration", 100 * share);
    printf("\n");
    cli_print_transfers("transfers", &r->xfer);
    if (r->ndev <= 1) cli_print_builds("kernels", &r->builds);
    if (o->out) printf("wrote      %s\n", o->out);
    if (o->history) printf("wrote      %s\n", o->history);
    if (o->plot) printf("wrote      %s\n", o->plot);
}

int solve_plot(const solve_opts *o, const solve_result *r, const cli_history *h)
{
    const char *name = cli_is_gen_spec(o->spec) ? o->spec : strrchr(o->spec, '/');
    name = name && name[0] == '/' ? name + 1 : name ? name : o->spec;
    char title[512], sub[256];
    snprintf(title, sizeof title, "%s: %s%s%s, %s", name, hisp_solver_method_name(o->method),
             o->precond ? " + " : "", o->precond ? hisp_precond_name(o->precond) : "",
             hisp_type_name(r->mi.type));
    snprintf(sub, sizeof sub, "%s after %lld iterations, ||b - A x|| / ||b|| = %.2e",
             hisp_stop_reason_name(r->info.reason), (long long)r->info.iterations, r->rel);
    /* the stopping rule relative to the method's right-hand side norm */
    double rhs = r->info.rhs_norm, tol = o->rtol;
    if (rhs > 0 && o->atol / rhs > tol) tol = o->atol / rhs;
    return cli_plot_convergence(o->plot, h, title, sub,
                                o->method == HISP_SOLVER_LSQR
                                    ? "||A\xe1\xb5\x80r|| / ||A\xe1\xb5\x80"
                                      "b||"
                                    : "||r|| / ||b||",
                                tol);
}
