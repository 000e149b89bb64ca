/* hisp solve: a Krylov solve (hisp.h "Iterative solvers") on one device, or
 * over an MSREP plan's devices, with the true residual recomputed from x,
 * the time per iteration and the SpMV's share of it: the options and the
 * command (solve_run.c the solve, solve_report.c the output). */
#include "mspmv.h"
#include "solve.h"

#include <math.h>
#include <stdlib.h>
#include <float.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static const char help[] =
    "usage: hisp solve A.mtx|A.hisp|gen:KIND[:N[:SEED]] --method M [options]\n"
    "\n"
    "Solves A x = b (lsqr: min ||A x - b||^2 + damp^2 ||x||^2) with a Krylov method\n"
    "on the chosen backend; the matrix and every vector stay on the device and only a\n"
    "few scalars reach the host per check. Prints why the solve stopped, the\n"
    "iterations, the relative residual ||b - A x|| / ||b|| recomputed from x with\n"
    "one SpMV (not the method's recurrence), the setup time, the time per iteration\n"
    "and the share of it that the SpMV takes (measured after the solve: the median\n"
    "of 7 products, each followed by a synchronize; bicgstab and lsqr make two\n"
    "products per iteration, lsqr one with A and one with A^T).\n"
    "\n"
    "A is a Matrix Market file, a HiSparse file or a generator, gen:KIND[:N[:SEED]]\n"
    "(below; e.g. gen:poisson2d:100 is SPD with 10000 rows, gen:helmholtz:N\n"
    "complex, gen:qsurface:N quaternion, gen:fem3x3:N and gen:elastic3d:N 3x3\n"
    "blocks). The entry type follows the input: real, integer and pattern files\n"
    "f64, complex files c64, quaternion files q64, a .hisp file its own.\n"
    "\n"
    "options:\n"
    "  --method M           cg (A Hermitian positive definite), bicgstab, gmres\n"
    "                       (restarted GMRES(m)) or lsqr (least squares, any shape)\n"
    "  --precond P          none (default), jacobi (diag(A)^-1; 3x3 blocks:\n"
    "                       their inverses; lsqr: column scaling; a zero diagonal\n"
    "                       entry: l1-jacobi instead, said in the report),\n"
    "                       l1-jacobi (row sums of |A|), ilu0 (incomplete LU),\n"
    "                       ic0 (incomplete Cholesky, A Hermitian positive\n"
    "                       definite; both f32, f64, c32, c64; the report says\n"
    "                       which pivots were shifted or diagonals filled),\n"
    "                       chebyshev (a polynomial in D^-1 A; A symmetric\n"
    "                       positive definite, f32/f64) or amg (one V-cycle of\n"
    "                       smoothed aggregation, set up on the GPU where the\n"
    "                       solve runs there; f32/f64; the report prints the\n"
    "                       hierarchy); all but jacobi and none need cg,\n"
    "                       bicgstab or gmres\n"
    "  --amg-theta T        amg: strength threshold in [0, 1] (default 0.01; 0:\n"
    "                       every coupling strong)\n"
    "  --amg-smoother S     amg: chebyshev (default), jacobi (damped) or l1-jacobi\n"
    "  --amg-sweeps K       amg: smoothing steps before and after the coarse\n"
    "                       correction, 1..10 (chebyshev: its degree; default 3)\n"
    "  --amg-block B        amg: rows aggregated as nodes of B unknowns, 0..8 (3\n"
    "                       for 3D elasticity; default 0: 3 for b3x3, else 1)\n"
    "  --amg-precision P    amg: the levels' entries for an f64 system: auto\n"
    "                       (default: f32 on a GPU from 100000 rows on, but for\n"
    "                       gmres), single (f32) or full (f64); the five are the\n"
    "                       library's options amg_theta, amg_smoother,\n"
    "                       amg_sweeps, amg_block, amg_precision (HISP_OPTIONS\n"
    "                       too)\n"
    "  --chebyshev-degree K chebyshev: its steps, 2..32 (K - 1 products with A per\n"
    "                       application; default 4; the library's option\n"
    "                       chebyshev_degree)\n"
    "  --factor-sweeps N    ilu0, ic0: the factorisation's fixed-point sweeps,\n"
    "                       0..50 (0: exact, on the host; default: 3 on a GPU\n"
    "                       from 100000 rows on, else 0; the library's option\n"
    "                       ilu_factor_sweeps)\n"
    "  --solve-sweeps N     ilu0, ic0: Jacobi sweeps per triangular solve, 0..50\n"
    "                       (0: exact; default: 2 on a GPU from 100000 rows on,\n"
    "                       else 0; the library's option ilu_solve_sweeps)\n"
    "  --solver-precision P full (default) or mixed: cg on an f64 matrix iterated\n"
    "                       in f32 on A's entries rounded (0.7x the bytes an\n"
    "                       iteration), x and its residual updated in f64, so the\n"
    "                       tolerance holds for the f64 residual; more iterations\n"
    "                       than f64 (the report says how many updates; the\n"
    "                       library's option solver_precision)\n"
    "  --solves N           N solves of the system, each from x0 (1..1000; default\n"
    "                       1): amg's hierarchy, ilu0's and ic0's factors and\n"
    "                       chebyshev's bound are set up once for all of them (a\n"
    "                       hisp_preconditioner), the others' setups are each\n"
    "                       solve's; the report gives that setup and the median\n"
    "                       solve; the other numbers are the last solve's\n"
    "  --update             with --solves and amg, ilu0, ic0 or chebyshev: before\n"
    "                       each solve after the first, the preconditioner set up\n"
    "                       again for A's values (hisp_preconditioner_update, as a\n"
    "                       time-stepping code would for new values); the report\n"
    "                       gives its median\n"
    "  --rtol r, --atol a   stop when ||r|| <= max(rtol*||b||, atol) (lsqr: ||A^T r||\n"
    "                       against ||A^T b||); defaults 1e-8 and 0\n"
    "  --maxit n            iteration limit (default 10000; 0: the initial residual)\n"
    "  --restart m          gmres: Krylov space size between restarts (default 30)\n"
    "  --damp d             lsqr: damping (default 0)\n"
    "  --check-interval k   cg, bicgstab: at most k iterations between two reads of\n"
    "                       the residual on the host (1..1024, default 8; the checks\n"
    "                       adapt to the convergence rate)\n"
    "  --rhs ones|random|B.mtx  right-hand side (default ones; random: uniform in\n"
    "                       [-1, 1) in every component, --seed S, default 1); a\n"
    "                       B.mtx of k columns solves each (one after another)\n"
    "  --x0 X0.mtx          initial guess (default zeros; as many columns as B)\n"
    "  --format csr|hisparse|sell|auto  storage the products run on (default:\n"
    "                       the input's; hisparse builds the HiSparse tree, sell\n"
    "                       the SELL-C-sigma slices, both f32/f64;\n"
    "                       auto: the fastest for y = A*x as hisp spmv --format\n"
    "                       auto chooses it, from the plan cache or timed now)\n"
    "  --history H.csv      iteration,residual_norm,relative_residual: a header and\n"
    "                       one line per iteration from 0 (the method's residuals as\n"
    "                       its monitor reports them)\n"
    "  --plot H.svg         the convergence history as an SVG chart: relative\n"
    "                       residual (log scale) against the iteration, tolerance\n"
    "                       dashed\n" CLI_TYPE_HELP CLI_BACKEND_HELP CLI_DEVICE_HELP
    "  --devices N          N > 1: A split over N devices of the backend (MSREP pCSR,\n"
    "                       as hisp mspmv picks them; with --device I all N parts\n"
    "                       on device I), distributed vectors\n"
    "                       (hisp_solver_solve_dist; cg, bicgstab, gmres; f32/f64;\n"
    "                       --precond none, jacobi or chebyshev)\n"
    "  -o FILE              write the solution x as a Matrix Market array\n" CLI_OUT_ALIASES_HELP
    "  --json               machine-readable output: \"backend\", \"device\", \"type\",\n"
    "                       the solve's numbers and times, \"transfers\",\n"
    "                       \"kernels\" (one device)\n" CLI_HELP_HELP "\n"
    "On a terminal a progress line shows the iteration, the method's relative\n"
    "residual and the time (stderr, about 10 updates a second).\n"
    "\n"
    "Times: setup (preconditioner, work vectors) and solve (the iterations) from\n"
    "the solver; before the solve, one product, one norm and one iteration of the\n"
    "method on a scratch x upload A and the vectors and build the kernels\n"
    "(prepare_ms), so the solve's time is the iterations' own.\n"
    "\n" CLI_BUILDS_HELP "Here: prepare's builds (one device).\n"
    "\n" CLI_GEN_SPEC_HELP "\n" CLI_TRANSFERS_HELP
    "Here: the solve (after prepare): the residual reads at checks and\n"
    "what the method moves; with --devices only this context's (none of the\n"
    "plan's per-device contexts).\n"
    "\n"
    "exit status:\n"
    "  0  converged: the tolerance was met\n"
    "  1  usage error: unknown option, missing argument\n"
    "  2  input error: malformed or unreadable file, sizes that do not match, invalid\n"
    "     value, a method or type the library does not provide (yet)\n"
    "  3  backend or device error\n"
    "  4  stopped without converging: iteration limit, breakdown, matrix not\n"
    "     positive definite (cg), NaN or Inf, stagnation (the true residual stopped\n"
    "     decreasing above the tolerance: below what the entry type reaches, as\n"
    "     rtol 1e-8 in f32; use f64); x is still reported and written\n"
    "\n"
    "Converged means the residual recomputed from x met the tolerance, not only\n"
    "the method's recurrence: where they disagree the method restarts from the\n"
    "true residual (residual replacement) and stops with stagnation when that no\n"
    "longer helps. A tolerance below about 10 machine epsilons of the entry type\n"
    "(f32: 1.2e-6) gets a warning.\n";

enum {
    O_METHOD,
    O_PRECOND,
    O_RTOL,
    O_ATOL,
    O_MAXIT,
    O_RESTART,
    O_DAMP,
    O_CHECK,
    O_RHS,
    O_SEED,
    O_X0,
    O_TYPE,
    O_ENTRY,
    O_PREC,
    O_FORMAT,
    O_BACKEND,
    O_DEVICE,
    O_DEVICES,
    O_OUT, /* CLI_OUT_OPTS: -o, --out, --output */
    O_OUT2,
    O_OUT3,
    O_HISTORY,
    O_PLOT,
    O_AMG_THETA,
    O_AMG_SMOOTHER,
    O_AMG_SWEEPS,
    O_AMG_BLOCK,
    O_AMG_PRECISION,
    O_CHEB_DEGREE,
    O_FACTOR_SWEEPS,
    O_SOLVE_SWEEPS,
    O_SOLVER_PRECISION,
    O_SOLVES,
    O_UPDATE,
    O_JSON,
    O_HELP,
    O_HELP2
};

static int parse(int argc, char **argv, solve_opts *o)
{
    static const cli_opt opts[] = {{"--method", true},
                                   {"--precond", true},
                                   {"--rtol", true},
                                   {"--atol", true},
                                   {"--maxit", true},
                                   {"--restart", true},
                                   {"--damp", true},
                                   {"--check-interval", true},
                                   {"--rhs", true},
                                   {"--seed", true},
                                   {"--x0", true},
                                   {"--type", true},
                                   {"--entry", true},
                                   {"--precision", true},
                                   {"--format", true},
                                   {"--backend", true},
                                   {"--device", true},
                                   {"--devices", true},
                                   CLI_OUT_OPTS,
                                   {"--history", true},
                                   {"--plot", true},
                                   {"--amg-theta", true},
                                   {"--amg-smoother", true},
                                   {"--amg-sweeps", true},
                                   {"--amg-block", true},
                                   {"--amg-precision", true},
                                   {"--chebyshev-degree", true},
                                   {"--factor-sweeps", true},
                                   {"--solve-sweeps", true},
                                   {"--solver-precision", true},
                                   {"--solves", true},
                                   {"--update", false},
                                   {"--json", false},
                                   CLI_HELP_OPTS,
                                   {0, 0}};
    const char *val[O_HELP] = {0};
    memset(o, 0, sizeof *o);
    o->rtol = 1e-8;
    o->maxit = 10000;
    o->restart = 30;
    o->check = 8;
    o->seed = 1;
    o->format = -1;
    o->backend = HISP_BACKEND_AUTO;
    o->device = -1;
    o->rhs = "ones";
    int rc = cli_parse_command("solve", argc, argv, opts, help, val, &o->spec);
    if (rc) return rc;
    if (!o->spec) return cli_usage_error("solve", "missing A.mtx (or gen:KIND[:N[:SEED]])");
    if (!val[O_METHOD])
        return cli_usage_error("solve", "missing --method (cg, bicgstab, gmres, lsqr)");
    o->json = val[O_JSON] != NULL;
    o->x0 = val[O_X0];
    if ((rc = cli_parse_out("solve", val + O_OUT, &o->out))) return rc;
    o->history = val[O_HISTORY];
    o->plot = val[O_PLOT];
    if (val[O_RHS]) o->rhs = val[O_RHS];
    cli_type ct;
    if ((rc = cli_parse_type("solve", val + O_TYPE, &ct))) return rc;
    o->type = ct.type;
    o->type_given = ct.given;
    if (hisp_solver_method_from_name(val[O_METHOD], &o->method))
        return cli_value_error("--method: unknown method '%s' (cg, bicgstab, gmres, lsqr)",
                               val[O_METHOD]);
    if (val[O_PRECOND] && hisp_precond_from_name(val[O_PRECOND], &o->precond))
        return cli_value_error("--precond: unknown preconditioner '%s' (none, jacobi, "
                               "l1-jacobi, ilu0, ic0, chebyshev, amg)",
                               val[O_PRECOND]);
    /* AMG's options (the library's amg_theta, amg_smoother, amg_sweeps,
     * amg_block, amg_precision) */
    static const char *const amg_opt[SOLVE_LIB_OPTS] = {
        "amg_theta",         "amg_smoother",     "amg_sweeps",
        "amg_block",         "amg_precision",    "chebyshev_degree",
        "ilu_factor_sweeps", "ilu_solve_sweeps", "solver_precision"};
    bool ilu = o->precond == HISP_PRECOND_ILU0 || o->precond == HISP_PRECOND_IC0;
    for (int i = 0; i < SOLVE_LIB_OPTS; i++) {
        o->amg[i].name = amg_opt[i];
        o->amg[i].value = val[O_AMG_THETA + i];
        if (i == SOLVE_CHEB_OPT && o->amg[i].value && o->precond != HISP_PRECOND_CHEBYSHEV)
            return cli_usage_error("solve", "--chebyshev-degree goes with --precond chebyshev");
        if (i >= SOLVE_ILU_OPT && i < SOLVE_PREC_OPT && o->amg[i].value && !ilu)
            return cli_usage_error("solve", "--%s-sweeps goes with --precond ilu0 or ic0",
                                   i == SOLVE_ILU_OPT ? "factor" : "solve");
        if (i < SOLVE_AMG_OPTS && o->amg[i].value && o->precond != HISP_PRECOND_AMG)
            return cli_usage_error("solve", "--amg-%s goes with --precond amg", amg_opt[i] + 4);
    }
    if (val[O_RESTART] && o->method != HISP_SOLVER_GMRES)
        return cli_usage_error("solve", "--restart goes with --method gmres");
    if (val[O_DAMP] && o->method != HISP_SOLVER_LSQR)
        return cli_usage_error("solve", "--damp goes with --method lsqr");
    if (val[O_SEED] && strcmp(o->rhs, "random") != 0)
        return cli_usage_error("solve", "--seed goes with --rhs random");
    if (!rc && val[O_RTOL]) rc = cli_parse_double("--rtol", val[O_RTOL], &o->rtol);
    if (!rc && val[O_ATOL]) rc = cli_parse_double("--atol", val[O_ATOL], &o->atol);
    if (!rc && val[O_MAXIT]) rc = cli_parse_i64("--maxit", val[O_MAXIT], 0, INT64_MAX, &o->maxit);
    if (!rc && val[O_RESTART])
        rc = cli_parse_int("--restart", val[O_RESTART], 1, 1000, &o->restart);
    if (!rc && val[O_DAMP]) rc = cli_parse_double("--damp", val[O_DAMP], &o->damp);
    if (!rc && val[O_CHECK])
        rc = cli_parse_int("--check-interval", val[O_CHECK], 1, 1024, &o->check);
    if (!rc && val[O_SEED]) rc = cli_parse_u64("--seed", val[O_SEED], &o->seed);
    if (!rc && val[O_FORMAT]) {
        hisp_format f;
        bool is_auto;
        rc = cli_parse_format("solve", val[O_FORMAT], &f, &is_auto);
        if (!rc) o->format = is_auto ? -2 : (int)f;
    }
    if (!rc && val[O_BACKEND]) rc = cli_parse_backend("--backend", val[O_BACKEND], &o->backend);
    if (!rc && val[O_DEVICE]) rc = cli_parse_int("--device", val[O_DEVICE], 0, 1 << 20, &o->device);
    if (!rc && val[O_DEVICES])
        rc = cli_parse_int("--devices", val[O_DEVICES], 1, HISP_MPLAN_MAX_DEVICES, &o->devices);
    o->solves = 1;
    if (!rc && val[O_SOLVES]) rc = cli_parse_int("--solves", val[O_SOLVES], 1, 1000, &o->solves);
    for (int i = O_FACTOR_SWEEPS, k; !rc && i <= O_SOLVE_SWEEPS; i++)
        if (val[i])
            rc = cli_parse_int(i == O_FACTOR_SWEEPS ? "--factor-sweeps" : "--solve-sweeps", val[i],
                               0, 50, &k);
    o->update = val[O_UPDATE] != NULL;
    if (!rc && o->update && (o->solves < 2 || !solve_kept_precond(o->precond)))
        rc = cli_usage_error("solve",
                             "--update goes with --solves N > 1 and --precond amg, ilu0, ic0 or "
                             "chebyshev");
    if (!rc && o->solves > 1 && (o->history || o->plot || o->devices > 1))
        rc =
            cli_usage_error("solve", "--solves N > 1 goes without --history, --plot and --devices");
    if (!rc && o->devices > 1 && o->format != -1 && o->format != HISP_FORMAT_CSR)
        rc = cli_usage_error("solve", "--devices runs CSR parts, not --format %s",
                             o->format == -2 ? "auto" : hisp_format_name((hisp_format)o->format));
    return rc;
}

/* ---- the command ------------------------------------------------------------- */

int cmd_solve(int argc, char **argv)
{
    solve_opts o;
    int rc = parse(argc, argv, &o);
    if (rc) return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
    cli_progress_enable(o.json);
    solve_result res;
    memset(&res, 0, sizeof res);
    res.normal_rel = res.spmv_t_ms = NAN;
    res.products = o.method == HISP_SOLVER_CG || o.method == HISP_SOLVER_GMRES ? 1 : 2;
    cli_history h;
    cli_history_init(&h, !o.json && isatty(STDERR_FILENO));
    hisp_context ctx = NULL;
    hisp_matrix A = NULL, B = NULL;
    void *bh = NULL, *xh = NULL;
    if ((rc = cli_context(&ctx))) goto out;
    hisp_status s = HISP_SUCCESS;
    /* --amg-*, --chebyshev-degree: set, then the values in effect for the report */
    for (int i = 0; i < SOLVE_LIB_OPTS; i++) {
        if (o.amg[i].value) s = hisp_context_set_option(ctx, o.amg[i].name, o.amg[i].value);
        if (!s) s = hisp_context_get_option(ctx, o.amg[i].name, o.amg[i].now, sizeof o.amg[i].now);
        if (s) {
            rc = cli_fail(ctx, s, NULL);
            goto out;
        }
    }
    /* the device first: a missing one is reported before a long read */
    if (o.devices > 1) {
        mspmv_opts mo;
        memset(&mo, 0, sizeof mo);
        mo.backend = o.backend;
        mo.devices = o.devices;
        mo.device = o.device;
        if ((rc = mspmv_devices(ctx, &mo, &res.refs, &res.ndev, &res.shared))) goto out;
    } else {
        s = hisp_context_set_backend(ctx, o.backend, o.device);
        if (s) {
            rc = cli_fail(ctx, s, NULL);
            goto out;
        }
    }
    cli_type ct = {o.type, o.type_given};
    if ((rc = cli_load_matrix(ctx, o.spec, &ct, &A, NULL))) goto out;
    s = hisp_matrix_get_info(A, &res.mi);
    if (s) {
        rc = cli_fail(ctx, s, o.spec);
        goto out;
    }
    if (!strcmp(o.amg[3].now, "0")) /* amg_block's default: the node size it takes */
        snprintf(o.amg[3].now, sizeof o.amg[3].now, "%d",
                 res.mi.type == HISP_B3X3_F32 || res.mi.type == HISP_B3X3_F64 ? 3 : 1);
    /* the storage the products run on; auto: the format chosen for A*x (a
     * variant stays CSR storage: the solver takes it from the plan cache) */
    static char auto_name[200];
    if (o.format == -2) {
        hisp_format_choice ch;
        hisp_format_options fo = {0, 0, cli_format_progress, NULL, NULL, 0};
        if (res.mi.format != HISP_FORMAT_CSR) {
            s = hisp_matrix_duplicate(A, HISP_FORMAT_CSR, &B);
            if (!s) {
                hisp_matrix_destroy(&A);
                A = B;
                B = NULL;
                s = hisp_matrix_get_info(A, &res.mi);
            }
        }
        if (!s) s = hisp_matrix_choose_format(ctx, A, HISP_OP_N, &fo, NULL, 0, NULL, &ch);
        cli_format_progress_end();
        char nm[160] = "?";
        if (!s && hisp_format_result_name(&ch.best, nm, sizeof nm)) nm[0] = 0;
        snprintf(auto_name, sizeof auto_name, "auto: %s", nm);
        if (s) {
            rc = cli_fail(ctx, s, o.spec);
            goto out;
        }
        o.format = ch.best.kind == HISP_CHOICE_FORMAT ? (int)ch.best.format : HISP_FORMAT_CSR;
    }
    /* by default a matrix read in a format of its own (a .hisp file) stays in it */
    bool own = res.mi.format != HISP_FORMAT_COO && res.mi.format != HISP_FORMAT_CSC &&
               res.mi.format != HISP_FORMAT_CSR;
    hisp_format want = o.format >= 0 ? (hisp_format)o.format
                       : own         ? res.mi.format
                                     : HISP_FORMAT_CSR;
    if (want == HISP_FORMAT_CSR && !own) {
        s = hisp_matrix_convert(A, want); /* in place: COO and CSC become CSR */
    } else if (want != res.mi.format) {
        cli_progress("building the %s form", hisp_format_name(want));
        s = hisp_matrix_duplicate(A, want, &B);
    }
    if (!s && B) {
        hisp_matrix_destroy(&A);
        A = B;
        B = NULL;
    }
    if (!s) s = hisp_matrix_get_info(A, &res.mi);
    if (s) {
        rc = cli_fail(ctx, s, o.spec);
        goto out;
    }
    res.format = auto_name[0] ? auto_name : hisp_format_name(want);
    int per = 1;
    s = hisp_compound_vector_type(res.mi.type, &res.vt, &per);
    if (s) {
        rc = cli_fail(ctx, s, o.spec);
        goto out;
    }
    if (o.devices > 1 && res.mi.type != HISP_F32 && res.mi.type != HISP_F64) {
        rc = cli_value_error("--devices: solves over several devices take f32 or f64 matrices, "
                             "not %s",
                             hisp_type_name(res.mi.type));
        goto out;
    }
    /* shapes before any vector is read or made: b has the rows, x the columns */
    bool square = res.mi.nrows == res.mi.ncols;
    if (!square && (o.method != HISP_SOLVER_LSQR || o.devices > 1)) {
        rc = cli_value_error("%s needs a square matrix (this one is %lld x %lld; %s)",
                             o.devices > 1 ? "a solve over several devices"
                                           : hisp_solver_method_name(o.method),
                             (long long)res.mi.nrows, (long long)res.mi.ncols,
                             o.devices > 1 ? "lsqr on one device solves rectangular least squares"
                                           : "lsqr solves rectangular least squares");
        goto out;
    }
    bool single = hisp_type_size(res.vt) / hisp_type_components(res.vt) == 4;
    double eps = single ? FLT_EPSILON : DBL_EPSILON;
    if (o.rtol < 10 * eps && o.atol == 0) /* f64 itself: no better type to suggest */
        fprintf(stderr,
                "hisp: warning: --rtol %g is below what %s entries reach (about %.0e at best, "
                "more on ill-conditioned matrices): expect the solve to stop with stagnation%s\n",
                o.rtol, hisp_type_name(res.mi.type), 10 * eps,
                single ? "; solve in f64 (--type f64) for tighter tolerances" : "");
    int64_t kcols = 1;
    if ((rc = solve_host_vectors(ctx, &o, res.vt, res.mi.nrows * per, res.mi.ncols * per, &bh, &xh,
                                 &kcols)))
        goto out;
    if (kcols > 1) { /* several right-hand sides */
        if (o.devices > 1 || o.solves > 1 || o.history || o.plot) {
            rc = cli_usage_error("solve",
                                 "--rhs of %lld columns goes without --devices, "
                                 "--solves, --history and --plot",
                                 (long long)kcols);
            goto out;
        }
        rc = solve_columns(ctx, A, &o, bh, xh, kcols, &res);
        goto out;
    }
    rc = o.devices > 1 ? solve_devices(ctx, A, &o, bh, xh, &h, &res)
                       : solve_local(ctx, A, &o, bh, xh, &h, &res);
    if (rc) goto out;
    if (h.oom) fprintf(stderr, "hisp: warning: the history misses iterations (out of memory)\n");
    if (o.history && (rc = cli_history_write_csv(&h, o.history))) goto out;
    if (o.plot && (rc = solve_plot(&o, &res, &h))) goto out;
    if (o.json)
        solve_print_json(&o, &res);
    else
        solve_print_text(&o, &res);
    if (!res.info.converged) {
        if (!o.json)
            fprintf(stderr, "hisp: not converged: %s after %lld iterations\n",
                    hisp_stop_reason_name(res.info.reason), (long long)res.info.iterations);
        rc = CLI_NOT_CONVERGED;
    }
out:
    cli_history_end(&h);
    cli_history_free(&h);
    free(bh);
    free(xh);
    free(res.refs);
    hisp_matrix_destroy(&A);
    hisp_matrix_destroy(&B);
    hisp_context_destroy(&ctx);
    return rc;
}
