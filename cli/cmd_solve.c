/* hisp solve: a Krylov solve (hisp.h "Iterative solvers") on one device, or
 * over an MSREP plan's devices, with the true residual recomputed from x,
 * the time per iteration and the SpMV's share of it. */
#include "mspmv.h"
#include "solve.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static const char help[] =
    "usage: hisp solve A.mtx|A.hisp|gen:KIND[:N[:SEED]] --method M [options]\n"
    "\n"
    "Solves A x = b (lsqr: min ||A x - b||^2 + damp^2 ||x||^2) with a Krylov method on\n"
    "the chosen backend; the matrix and every vector stay on the device and only a\n"
    "few scalars reach the host per check. Prints why the solve stopped, the\n"
    "iterations, the relative residual ||b - A x|| / ||b|| recomputed from x with\n"
    "one SpMV (not the method's recurrence), the setup time, the time per iteration\n"
    "and the share of it that the SpMV takes (measured after the solve: the median\n"
    "of 7 products, each followed by a synchronize; bicgstab and lsqr make two\n"
    "products per iteration, lsqr one with A and one with A^T).\n"
    "\n"
    "A is a Matrix Market file, a HiSparse file or a generator, gen:KIND[:N[:SEED]]\n"
    "(below; e.g. gen:poisson2d:100 is SPD with 10000 rows, gen:helmholtz:N\n"
    "complex, gen:qsurface:N quaternion, gen:fem3x3:N 3x3 blocks). The entry type\n"
    "follows the input: real, integer and pattern files f64, complex files c64,\n"
    "quaternion files q64, a .hisp file its own.\n"
    "\n"
    "  --method M           cg (A Hermitian positive definite), bicgstab, gmres\n"
    "                       (restarted GMRES(m)) or lsqr (least squares, any shape)\n"
    "  --precond P          none (default) or jacobi (diag(A)^-1; 3x3 blocks:\n"
    "                       their inverses; lsqr: column scaling)\n"
    "  --rtol r, --atol a   stop when ||r|| <= max(rtol*||b||, atol) (lsqr: ||A^T r||\n"
    "                       against ||A^T b||); defaults 1e-8 and 0\n"
    "  --maxit n            iteration limit (default 10000; 0: the initial residual)\n"
    "  --restart m          gmres: Krylov space size between restarts (default 30)\n"
    "  --damp d             lsqr: damping (default 0)\n"
    "  --check-interval k   cg, bicgstab: at most k iterations between two reads of\n"
    "                       the residual on the host (1..1024, default 8; the checks\n"
    "                       adapt to the convergence rate)\n"
    "  --rhs ones|random|B.mtx  right-hand side (default ones; random: uniform in\n"
    "                       [-1, 1) in every component, --seed S, default 1)\n"
    "  --x0 X0.mtx          initial guess (default zeros)\n" CLI_TYPE_HELP
    "  --format csr|hisparse|auto  storage the products run on (default: the\n"
    "                       input's; hisparse builds the HiSparse tree, f32/f64;\n"
    "                       auto: the fastest for y = A*x as hisp spmv --format\n"
    "                       auto chooses it, from the plan cache or timed now)\n"
    "  --backend B          auto, reference, opencl or cuda (default auto: CUDA if a\n"
    "                       GPU answers, else OpenCL, else reference)\n"
    "  --device N           device index within the backend (default: the first)\n"
    "  --devices N          N > 1: A split over N devices of the backend (MSREP pCSR,\n"
    "                       as hisp mspmv picks them), distributed vectors\n"
    "                       (hisp_solver_solve_dist; cg, bicgstab, gmres; f32/f64)\n"
    "  --out X.mtx          write the solution x as a Matrix Market array\n"
    "  --history H.csv      iteration,residual_norm,relative_residual: a header and\n"
    "                       one line per iteration from 0 (the method's residuals as\n"
    "                       its monitor reports them)\n"
    "  --plot H.svg         the convergence history as an SVG chart: relative\n"
    "                       residual (log scale) against the iteration, tolerance\n"
    "                       dashed\n"
    "  --json               machine-readable output\n"
    "  --help               this text\n"
    "\n"
    "On a terminal a progress line shows the iteration, the method's relative\n"
    "residual and the time (stderr, about 10 updates a second).\n"
    "\n"
    "Times: setup (preconditioner, work vectors) and solve (the iterations) from\n"
    "the solver; before the solve, one product and one norm upload A and the\n"
    "vectors and build the kernels (prepare_ms), so the solve's time is the\n"
    "iterations' own.\n"
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
    "     positive definite (cg), NaN or Inf; x is still reported and written\n";

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
    O_OUT,
    O_HISTORY,
    O_PLOT,
    O_JSON,
    O_HELP,
    O_HELP2
};

typedef struct {
    const char *spec, *rhs, *x0, *out, *history, *plot;
    hisp_solver_method method;
    hisp_precond precond;
    double rtol, atol, damp;
    int64_t maxit;
    int restart, check;
    uint64_t seed;
    hisp_type type;
    bool type_given;
    int format; /* -1: the input's; -2: auto; else HISP_FORMAT_CSR or HISP_FORMAT_HISPARSE */
    hisp_backend_kind backend;
    int device, devices;
    bool json;
} solve_opts;

/* What the run found, for both output forms. */
typedef struct {
    hisp_solve_info info;
    hisp_matrix_info mi;
    hisp_type vt;              /* vector entry type */
    double bnorm, rnorm;       /* ||b||, ||b - A x|| recomputed */
    double rel;                /* rnorm / bnorm */
    double normal_rel;         /* lsqr: ||A^T (b - A x)|| / ||A^T b|| */
    double spmv_ms, spmv_t_ms; /* median product with A, A^T (lsqr) */
    int products;              /* per iteration */
    double prepare_ms;
    hisp_transfer_stats xfer;
    hisp_device_info dev;  /* one device */
    hisp_device_ref *refs; /* --devices */
    int ndev;
    bool shared;
    const char *format;
} solve_result;

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
                                   {"--out", true},
                                   {"--history", true},
                                   {"--plot", true},
                                   {"--json", false},
                                   {"--help", false},
                                   {"-h", false},
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
    o->out = val[O_OUT];
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
        return cli_value_error("--precond: unknown preconditioner '%s' (none, jacobi)",
                               val[O_PRECOND]);
    if (val[O_RESTART] && o->method != HISP_SOLVER_GMRES)
        return cli_usage_error("solve", "--restart goes with --method gmres");
    if (val[O_DAMP] && o->method != HISP_SOLVER_LSQR)
        return cli_usage_error("solve", "--damp goes with --method lsqr");
    if (val[O_SEED] && strcmp(o->rhs, "random") != 0)
        return cli_usage_error("solve", "--seed goes with --rhs random");
    if (val[O_DEVICES] && val[O_DEVICE])
        return cli_usage_error("solve", "give --device (one device) or --devices N, not both");
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
        if (strcasecmp(val[O_FORMAT], "hisparse") == 0)
            o->format = HISP_FORMAT_HISPARSE;
        else if (strcasecmp(val[O_FORMAT], "csr") == 0)
            o->format = HISP_FORMAT_CSR;
        else if (strcasecmp(val[O_FORMAT], "auto") == 0)
            o->format = -2;
        else
            rc = cli_value_error("--format: '%s' is not supported (csr, hisparse, auto)",
                                 val[O_FORMAT]);
    }
    if (!rc && val[O_BACKEND]) rc = cli_parse_backend("--backend", val[O_BACKEND], &o->backend);
    if (!rc && val[O_DEVICE]) rc = cli_parse_int("--device", val[O_DEVICE], 0, 1 << 20, &o->device);
    if (!rc && val[O_DEVICES])
        rc = cli_parse_int("--devices", val[O_DEVICES], 1, HISP_MPLAN_MAX_DEVICES, &o->devices);
    if (!rc && o->devices > 1 && (o->format == HISP_FORMAT_HISPARSE || o->format == -2))
        rc = cli_usage_error("solve", "--devices runs CSR parts, not --format %s",
                             o->format == -2 ? "auto" : "hisparse");
    return rc;
}

/* ---- scalars and vectors ------------------------------------------------ */

typedef union {
    float f;
    double d;
} real_buf;

/* Is the vector type's component float (f32, c32, q32)? */
static bool single(hisp_type vt)
{
    return hisp_type_size(vt) / (size_t)hisp_type_components(vt) == 4;
}

/* A real scalar of the component type (alpha, beta of hisp_spmv). */
static const void *real_of(hisp_type vt, double v, real_buf *b)
{
    if (single(vt)) {
        b->f = (float)v;
        return &b->f;
    }
    b->d = v;
    return &b->d;
}

static hisp_status norm(hisp_vector v, hisp_type vt, double *out)
{
    real_buf r;
    hisp_status s = hisp_vector_nrm2(v, hisp_result_host(single(vt) ? (void *)&r.f : &r.d));
    if (!s) *out = single(vt) ? (double)r.f : r.d;
    return s;
}

static uint64_t splitmix(uint64_t *st)
{
    uint64_t z = (*st += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* n entries of vt: every component uniform in [-1, 1) from seed. */
static void *random_entries(hisp_type vt, int64_t n, uint64_t seed)
{
    int64_t k = n * hisp_type_components(vt);
    void *p = malloc((size_t)(k > 0 ? k : 1) * (single(vt) ? 4 : 8));
    if (!p) return NULL;
    uint64_t st = seed;
    for (int64_t i = 0; i < k; i++) {
        double u = (double)(splitmix(&st) >> 11) * 0x1.0p-53 * 2 - 1;
        if (single(vt))
            ((float *)p)[i] = (float)u;
        else
            ((double *)p)[i] = u;
    }
    return p;
}

/* b (nb entries) and x0 (nx entries) as host arrays of vt. */
static int host_vectors(hisp_context ctx, const solve_opts *o, hisp_type vt, int64_t nb, int64_t nx,
                        void **bh, void **xh)
{
    size_t es = hisp_type_size(vt);
    const char *what[2] = {"--rhs", "--x0"};
    const char *path[2] = {NULL, o->x0};
    int64_t len[2] = {nb, nx};
    void **out[2] = {bh, xh};
    if (strcmp(o->rhs, "ones") == 0) {
        *bh = calloc((size_t)(nb > 0 ? nb : 1), es);
        if (!*bh) return cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL);
        int comps = hisp_type_components(vt);
        for (int64_t i = 0; i < nb; i++) {
            if (single(vt))
                ((float *)*bh)[i * comps] = 1;
            else
                ((double *)*bh)[i * comps] = 1;
        }
    } else if (strcmp(o->rhs, "random") == 0) {
        *bh = random_entries(vt, nb, o->seed);
        if (!*bh) return cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL);
    } else {
        path[0] = o->rhs;
    }
    for (int k = 0; k < 2; k++) {
        if (!path[k]) continue;
        hisp_vector v = NULL;
        int64_t n = 0;
        cli_progress("reading %s", path[k]);
        hisp_status s = hisp_vector_read_mtx(ctx, path[k], vt, &v);
        if (!s) s = hisp_vector_size(v, &n);
        if (!s && n != len[k]) {
            hisp_vector_destroy(&v);
            return cli_value_error("%s %s: %lld entries, the matrix needs %lld (%s)", what[k],
                                   path[k], (long long)n, (long long)len[k],
                                   k == 0 ? "its rows" : "its columns");
        }
        if (!s) {
            *out[k] = malloc((size_t)(n > 0 ? n : 1) * es);
            if (!*out[k]) s = HISP_ERR_OUT_OF_HOST_MEMORY;
        }
        if (!s) s = hisp_vector_read(v, *out[k]);
        hisp_vector_destroy(&v);
        if (s) return cli_fail(ctx, s, path[k]);
    }
    if (!*xh) {
        *xh = calloc((size_t)(nx > 0 ? nx : 1), es);
        if (!*xh) return cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL);
    }
    return CLI_OK;
}

static int write_x(hisp_context ctx, hisp_type vt, int64_t n, const void *xh, const char *path)
{
    hisp_vector v = NULL;
    cli_progress("writing %s", path);
    hisp_status s = hisp_vector_create(ctx, vt, n, &v);
    if (!s) s = hisp_vector_write(v, xh);
    if (!s) s = hisp_vector_write_mtx(v, path);
    hisp_vector_destroy(&v);
    return s ? cli_fail(ctx, s, path) : CLI_OK;
}

enum { RUNS = 7 };

/* Median wall time of RUNS products y = op(A) x, each synchronized. */
static hisp_status time_spmv(hisp_context ctx, hisp_op op, hisp_matrix A, hisp_vector x,
                             hisp_vector y, hisp_type vt, double *ms)
{
    real_buf one, zero;
    const void *a = real_of(vt, 1, &one), *z = real_of(vt, 0, &zero);
    double t[RUNS];
    hisp_status s = HISP_SUCCESS;
    for (int i = 0; i < RUNS && !s; i++) {
        double t0 = cli_now_ms();
        s = hisp_spmv(ctx, op, a, A, x, z, y);
        if (!s) s = hisp_context_synchronize(ctx);
        t[i] = cli_now_ms() - t0;
    }
    if (!s) *ms = mspmv_median(t, RUNS);
    return s;
}

static hisp_status set_up_solver(hisp_context ctx, const solve_opts *o, cli_history *h,
                                 hisp_solver *sv)
{
    hisp_status s = hisp_solver_create(ctx, o->method, sv);
    if (!s) s = hisp_solver_set_tolerances(*sv, o->rtol, o->atol);
    if (!s) s = hisp_solver_set_max_iterations(*sv, o->maxit);
    if (!s) s = hisp_solver_set_restart(*sv, o->restart);
    if (!s) s = hisp_solver_set_preconditioner(*sv, o->precond);
    if (!s) s = hisp_solver_set_damping(*sv, o->damp);
    if (!s) s = hisp_solver_set_check_interval(*sv, o->check);
    if (!s) s = hisp_solver_set_monitor(*sv, cli_history_monitor, h);
    return s;
}

/* ---- one device ----------------------------------------------------------- */

static int solve_local(hisp_context ctx, hisp_matrix A, const solve_opts *o, const void *bh,
                       const void *xh, cli_history *h, solve_result *res)
{
    hisp_type vt = res->vt;
    int per = 1;
    hisp_type vt2;
    hisp_status s = hisp_compound_vector_type(res->mi.type, &vt2, &per);
    int64_t nb = res->mi.nrows * per, nx = res->mi.ncols * per;
    bool lsqr = o->method == HISP_SOLVER_LSQR;
    hisp_vector b = NULL, x = NULL, r = NULL, t = NULL, u = NULL;
    hisp_solver sv = NULL;
    real_buf one, zero, m1;
    const void *a1 = real_of(vt, 1, &one), *a0 = real_of(vt, 0, &zero), *am = real_of(vt, -1, &m1);
    int rc = CLI_OK;
    if (!s) s = hisp_context_get_device(ctx, &res->dev);
    if (!s) s = hisp_vector_create(ctx, vt, nb, &b);
    if (!s) s = hisp_vector_create(ctx, vt, nx, &x);
    if (!s) s = hisp_vector_create(ctx, vt, nb, &r);
    if (!s && lsqr) s = hisp_vector_create(ctx, vt, nx, &t);
    if (!s && lsqr) s = hisp_vector_create(ctx, vt, nx, &u);
    if (!s) s = hisp_vector_write(b, bh);
    if (!s) s = hisp_vector_write(x, xh);
    if (s) goto fail;
    /* prepare: upload A, b and x, build the kernels, outside the solve */
    cli_progress("uploading A and building kernels on %s (%s)", hisp_backend_name(res->dev.backend),
                 res->dev.name);
    double t0 = cli_now_ms();
    s = norm(b, vt, &res->bnorm);
    if (!s) s = hisp_spmv(ctx, HISP_OP_N, a1, A, x, a0, r);
    if (!s && lsqr && (res->mi.type == HISP_F32 || res->mi.type == HISP_F64))
        s = hisp_spmv(ctx, HISP_OP_T, a1, A, b, a0, t); /* else the solver says why */
    if (!s) s = hisp_context_synchronize(ctx);
    res->prepare_ms = cli_now_ms() - t0;
    if (!s) s = set_up_solver(ctx, o, h, &sv);
    if (s) goto fail;
    cli_progress("solving with %s", hisp_solver_method_name(o->method));
    cli_transfers_reset(ctx);
    h->t0 = cli_now_ms();
    s = hisp_solver_solve(sv, A, b, x, &res->info);
    cli_transfers_add(ctx, &res->xfer);
    cli_history_end(h);
    if (s) goto fail;
    /* the true residual r = b - A x (lsqr: and A^T r against A^T b) */
    s = hisp_vector_copy(b, r);
    if (!s) s = hisp_spmv(ctx, HISP_OP_N, am, A, x, a1, r);
    if (!s) s = norm(r, vt, &res->rnorm);
    res->rel = res->bnorm > 0 ? res->rnorm / res->bnorm : res->rnorm;
    if (!s && lsqr) {
        double atr = 0, atb = 0;
        s = hisp_spmv(ctx, HISP_OP_T, a1, A, r, a0, t);
        if (!s) s = norm(t, vt, &atr);
        if (!s) s = hisp_spmv(ctx, HISP_OP_T, a1, A, b, a0, t);
        if (!s) s = norm(t, vt, &atb);
        res->normal_rel = atb > 0 ? atr / atb : atr;
    }
    /* the product's time on its own, after the solve */
    if (!s) s = time_spmv(ctx, HISP_OP_N, A, x, r, vt, &res->spmv_ms);
    if (!s && lsqr) s = time_spmv(ctx, HISP_OP_T, A, r, u, vt, &res->spmv_t_ms);
    if (s) goto fail;
    if (o->out) {
        cli_progress("writing %s", o->out);
        s = hisp_vector_write_mtx(x, o->out);
        if (s) rc = cli_fail(ctx, s, o->out);
    }
    goto out;
fail:
    rc = cli_fail(ctx, s, NULL);
out:
    hisp_solver_destroy(&sv);
    hisp_vector_destroy(&b);
    hisp_vector_destroy(&x);
    hisp_vector_destroy(&r);
    hisp_vector_destroy(&t);
    hisp_vector_destroy(&u);
    return rc;
}

/* ---- several devices (MSREP) ---------------------------------------------- */

static double host_norm(hisp_type vt, const void *p, int64_t n)
{
    double sum = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = vt == HISP_F32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
        sum += v * v;
    }
    return sqrt(sum);
}

static int solve_devices(hisp_context ctx, hisp_matrix A, const solve_opts *o, const void *bh,
                         const void *xh, cli_history *h, solve_result *res)
{
    hisp_type vt = res->vt;
    int64_t n = res->mi.nrows;
    size_t es = hisp_type_size(vt);
    hisp_mplan plan = NULL;
    hisp_mvector b = NULL, x = NULL, xr = NULL, r = NULL;
    hisp_solver sv = NULL;
    void *host = malloc((size_t)(n > 0 ? n : 1) * es);
    real_buf one, zero, m1;
    const void *a1 = real_of(vt, 1, &one), *a0 = real_of(vt, 0, &zero), *am = real_of(vt, -1, &m1);
    int rc = CLI_OK;
    if (!host) return cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL);
    cli_progress("partitioning (pcsr) over %d device(s)", res->ndev);
    double t0 = cli_now_ms();
    hisp_status s = hisp_mplan_create(A, res->ndev, res->refs, HISP_PART_PCSR, 0, &plan);
    if (!s) s = hisp_mvector_create(plan, HISP_MVEC_ROWS, &b);
    if (!s) s = hisp_mvector_create(plan, HISP_MVEC_ROWS, &x);
    if (!s) s = hisp_mvector_create(plan, HISP_MVEC_ROWS, &r);
    if (!s) s = hisp_mvector_create(plan, HISP_MVEC_REPLICATED, &xr);
    if (!s) s = hisp_mvector_write(b, bh);
    if (!s) s = hisp_mvector_write(x, xh);
    res->prepare_ms = cli_now_ms() - t0;
    res->bnorm = host_norm(vt, bh, n);
    if (!s) s = set_up_solver(ctx, o, h, &sv);
    if (s) goto fail;
    cli_progress("solving with %s over %d device(s)", hisp_solver_method_name(o->method),
                 res->ndev);
    cli_transfers_reset(ctx);
    h->t0 = cli_now_ms();
    s = hisp_solver_solve_dist(sv, plan, b, x, &res->info);
    cli_transfers_add(ctx, &res->xfer);
    cli_history_end(h);
    if (s) goto fail;
    /* r = b - A x with x gathered on every device */
    s = hisp_mvector_allgather(x, xr);
    if (!s) s = hisp_mvector_write(r, bh);
    if (!s) s = hisp_mspmv_dist(plan, am, xr, a1, r);
    if (!s) s = hisp_mvector_read(r, host);
    if (!s) {
        res->rnorm = host_norm(vt, host, n);
        res->rel = res->bnorm > 0 ? res->rnorm / res->bnorm : res->rnorm;
    }
    double t[RUNS];
    for (int i = 0; i < RUNS && !s; i++) {
        double c0 = cli_now_ms();
        s = hisp_mspmv_dist(plan, a1, xr, a0, r);
        t[i] = cli_now_ms() - c0;
    }
    if (!s) res->spmv_ms = mspmv_median(t, RUNS);
    if (!s) s = hisp_mvector_read(x, host);
    if (s) goto fail;
    if (o->out) rc = write_x(ctx, vt, n, host, o->out);
    goto out;
fail:
    rc = cli_fail(ctx, s, NULL);
out:
    hisp_solver_destroy(&sv);
    hisp_mvector_destroy(&b);
    hisp_mvector_destroy(&x);
    hisp_mvector_destroy(&xr);
    hisp_mvector_destroy(&r);
    hisp_mplan_destroy(&plan);
    free(host);
    return rc;
}

/* ---- output ------------------------------------------------------------------ */

static double ms_per_iteration(const solve_result *r)
{
    double solve_ms = r->info.ms - r->info.setup_ms;
    return r->info.iterations > 0 ? solve_ms / (double)r->info.iterations : NAN;
}

static double spmv_share(const solve_opts *o, const solve_result *r)
{
    double per = ms_per_iteration(r);
    double spmv =
        o->method == HISP_SOLVER_LSQR ? r->spmv_ms + r->spmv_t_ms : r->products * r->spmv_ms;
    return per > 0 ? spmv / per : NAN;
}

static void print_json(const solve_opts *o, const solve_result *r)
{
    bool lsqr = o->method == HISP_SOLVER_LSQR;
    cli_json j;
    json_init(&j, stdout);
    json_object_begin(&j, NULL);
    json_string(&j, cli_is_gen_spec(o->spec) ? "generator" : "file", o->spec);
    json_int(&j, "rows", r->mi.nrows);
    json_int(&j, "cols", r->mi.ncols);
    json_int(&j, "nnz", r->mi.nnz);
    json_string(&j, "type", hisp_type_name(r->mi.type));
    json_string(&j, "format", r->format);
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
    json_double(&j, "method_relative_residual", r->info.relative_residual);
    json_double(&j, "prepare_ms", r->prepare_ms);
    json_double(&j, "setup_ms", r->info.setup_ms);
    json_double(&j, "solve_ms", r->info.ms - r->info.setup_ms);
    json_double(&j, "ms_per_iteration", ms_per_iteration(r));
    json_double(&j, "spmv_ms", r->spmv_ms);
    if (lsqr) json_double(&j, "spmv_transpose_ms", r->spmv_t_ms);
    json_int(&j, "products_per_iteration", r->products);
    json_double(&j, "spmv_share", spmv_share(o, r));
    if (o->out) json_string(&j, "out", o->out);
    if (o->history) json_string(&j, "history", o->history);
    if (o->plot) json_string(&j, "plot", o->plot);
    json_transfers(&j, &r->xfer, r->ndev > 1 ? MSPMV_XFER_COVERS : NULL);
    json_object_end(&j);
    json_finish(&j);
}

static void print_text(const solve_opts *o, const solve_result *r)
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
    if (r->ndev > 1)
        printf("devices    %d x %s (pcsr parts%s)\n", r->ndev,
               hisp_backend_name(r->refs[0].backend), r->shared ? ", several per device" : "");
    else
        printf("backend    %s, device %d: %s (%s)\n", hisp_backend_name(r->dev.backend),
               r->dev.index, r->dev.name, r->dev.platform);
    printf("stopped    %s after %lld iterations\n", hisp_stop_reason_name(r->info.reason),
           (long long)r->info.iterations);
    printf("residual   ||b - A x|| / ||b|| = %.3e (recomputed from x)\n", r->rel);
    if (lsqr)
        printf("           ||A^T (b - A x)|| / ||A^T b|| = %.3e (the normal equations: what "
               "lsqr's tolerance bounds)\n",
               r->normal_rel);
    printf("           the method's own: %.3e\n", r->info.relative_residual);
    printf("time       setup %.3f ms, solve %.3f ms", r->info.setup_ms,
           r->info.ms - r->info.setup_ms);
    if (r->info.iterations > 0) printf(" = %.4f ms per iteration", ms_per_iteration(r));
    printf(" (before: upload and kernels %.3f ms)\n", r->prepare_ms);
    if (lsqr)
        printf("spmv       A x %.4f ms, A^T x %.4f ms (medians of %d)", r->spmv_ms, r->spmv_t_ms,
               RUNS);
    else
        printf("spmv       %.4f ms (median of %d), %d per iteration", r->spmv_ms, RUNS,
               r->products);
    double share = spmv_share(o, r);
    if (isfinite(share)) printf(": %.0f%% of an iteration", 100 * share);
    printf("\n");
    cli_print_transfers("transfers", &r->xfer);
    if (o->out) printf("wrote      %s\n", o->out);
    if (o->history) printf("wrote      %s\n", o->history);
    if (o->plot) printf("wrote      %s\n", o->plot);
}

static int plot(const solve_opts *o, const solve_result *r, const cli_history *h)
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
    /* the device first: a missing one is reported before a long read */
    hisp_status s = HISP_SUCCESS;
    if (o.devices > 1) {
        mspmv_opts mo;
        memset(&mo, 0, sizeof mo);
        mo.backend = o.backend;
        mo.devices = o.devices;
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
    /* the storage the products run on; auto: the format chosen for A*x (a
     * variant stays CSR storage: the solver takes it from the plan cache) */
    static char auto_name[200];
    if (o.format == -2) {
        hisp_format_choice ch;
        hisp_format_options fo = {0, 0, cli_format_progress, NULL, NULL, 0};
        if (res.mi.format == HISP_FORMAT_HISPARSE) {
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
        o.format = ch.best.kind == HISP_CHOICE_HISPARSE ? HISP_FORMAT_HISPARSE : HISP_FORMAT_CSR;
    }
    hisp_format want = o.format >= 0                           ? (hisp_format)o.format
                       : res.mi.format == HISP_FORMAT_HISPARSE ? HISP_FORMAT_HISPARSE
                                                               : HISP_FORMAT_CSR;
    if (want == HISP_FORMAT_HISPARSE && res.mi.format != HISP_FORMAT_HISPARSE) {
        cli_progress("building the HiSparse tree");
        s = hisp_matrix_duplicate(A, HISP_FORMAT_HISPARSE, &B);
    } else if (want == HISP_FORMAT_CSR && res.mi.format == HISP_FORMAT_HISPARSE) {
        s = hisp_matrix_duplicate(A, HISP_FORMAT_CSR, &B);
    } else if (want == HISP_FORMAT_CSR) {
        s = hisp_matrix_convert(A, HISP_FORMAT_CSR);
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
    res.format = auto_name[0] ? auto_name : want == HISP_FORMAT_HISPARSE ? "hisparse" : "csr";
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
    if ((rc = host_vectors(ctx, &o, res.vt, res.mi.nrows * per, res.mi.ncols * per, &bh, &xh)))
        goto out;
    rc = o.devices > 1 ? solve_devices(ctx, A, &o, bh, xh, &h, &res)
                       : solve_local(ctx, A, &o, bh, xh, &h, &res);
    if (rc) goto out;
    if (h.oom) fprintf(stderr, "hisp: warning: the history misses iterations (out of memory)\n");
    if (o.history && (rc = cli_history_write_csv(&h, o.history))) goto out;
    if (o.plot && (rc = plot(&o, &res, &h))) goto out;
    if (o.json)
        print_json(&o, &res);
    else
        print_text(&o, &res);
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
