/* Several right-hand sides as a user waits for them: poisson3d n^3 (f64,
 * CSR) and k random right-hand sides (seed 7), solved to rtol from X0 = 0
 * with CG (none, Jacobi, AMG) and BiCGSTAB (none, Jacobi)
 * (1) by one hisp_solver_solve_columns call and (2) by k consecutive
 * hisp_solver_solve calls on k vectors of their own (already on the device,
 * as a user holding k vectors calls them; AMG set up once for them by
 * hisp_preconditioner_create, inside the timing, as solve_columns sets it
 * up once), on one backend in one process.
 *
 * `lock ms`, `alone ms`: median over `repeat` runs (after one warm-up of
 * each) of the wall time from a synchronize to the synchronize after the
 * call (the k calls); `alone / lock` their ratio. `in lock step`: the
 * columns info.lock_step marks (a system on the host's loops has none).
 * `its`: the largest and
 * the sum of the columns' iterations (lock step, then alone). `true rel`:
 * the largest ||b - A x|| / ||b|| over the columns, computed here on the
 * host in double from A's arrays (not by hisp), of the lock step's X, and
 * `reported`: the largest hisp reported. Prints a Markdown table; --help
 * for the options. */
#include "common_solve.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    hisp_backend_kind backend;
    int device, repeat;
    double rtol;
    int64_t sides[16], ks[16];
    int nsides, nks;
} options;

static const char prog[] = "bench_columns";
static const char help[] =
    "usage: bench_columns [options]\n"
    "poisson3d n^3 (f64) with k right-hand sides: one hisp_solver_solve_columns\n"
    "call against k consecutive hisp_solver_solve calls (CG: none, Jacobi, AMG;\n"
    "BiCGSTAB: none, Jacobi).\n"
    "  --backend B         reference, opencl or cuda (default cuda)\n"
    "  --device N          device index (default: first)\n"
    "  --sides LIST        grid sides, comma-separated (default 160)\n"
    "  --columns LIST      k, comma-separated (default 4,16)\n"
    "  --rtol R            relative tolerance (default 1e-8)\n"
    "  --repeat N          timed runs after a warm-up (default 3)\n"
    "  --help              this text\n";

enum { O_BACKEND, O_DEVICE, O_SIDES, O_COLUMNS, O_RTOL, O_REPEAT };
static const opts_def opts[] = {
    {"--backend", true}, {"--device", true}, {"--sides", true}, {"--columns", true},
    {"--rtol", true},    {"--repeat", true}, OPTS_HELP_DEFS,    {0, 0}};

static int parse(int argc, char **argv, options *o)
{
    *o = (options){.backend = HISP_BACKEND_CUDA, .device = -1, .repeat = 3, .rtol = 1e-8};
    const char *val[sizeof opts / sizeof *opts] = {0};
    int rc = opts_parse(prog, argc, argv, opts, help, val, NULL);
    if (!rc) rc = bench_backend_arg(prog, val[O_BACKEND], &o->backend);
    if (!rc) rc = opts_int(prog, "--device", val[O_DEVICE], 0, 1 << 20, &o->device);
    if (!rc) rc = bench_sides(prog, val[O_SIDES] ? val[O_SIDES] : "160", o->sides, 16, &o->nsides);
    if (!rc) rc = bench_sides(prog, val[O_COLUMNS] ? val[O_COLUMNS] : "4,16", o->ks, 16, &o->nks);
    if (!rc) rc = opts_double(prog, "--rtol", val[O_RTOL], 1e-300, 1, &o->rtol);
    if (!rc) rc = opts_int(prog, "--repeat", val[O_REPEAT], 1, 1000, &o->repeat);
    return rc;
}

/* the largest ||b_j - A x_j|| / ||b_j|| over k columns, in double from A's
 * host arrays */
static double true_rel(hisp_matrix A, int64_t n, int64_t k, const double *b, const double *x)
{
    const int64_t *p = NULL;
    const int32_t *c = NULL;
    const void *v = NULL;
    if (hisp_matrix_host_arrays(A, &p, NULL, &c, &v)) return NAN;
    const double *a = v;
    double worst = 0;
    for (int64_t j = 0; j < k; j++) {
        const double *bj = b + j * n, *xj = x + j * n;
        double rr = 0, bb = 0;
        for (int64_t i = 0; i < n; i++) {
            double r = bj[i];
            for (int64_t e = p[i]; e < p[i + 1]; e++)
                r -= a[e] * xj[c[e]];
            rr += r * r;
            bb += bj[i] * bj[i];
        }
        worst = fmax(worst, sqrt(rr / bb));
    }
    return worst;
}

typedef struct {
    hisp_context ctx;
    hisp_matrix A;
    hisp_solver s;
    hisp_precond pc;
    int64_t n, k;
    hisp_vector B, X, *b, *x;
    double *bh;
} setup;

static bool sync_ok(hisp_context ctx)
{
    return bench_ok(prog, ctx, hisp_context_synchronize(ctx), "synchronize");
}

/* one timed run of each way; its and worst reported relative residual */
static bool once(setup *u, bool lock, double *ms, int64_t its[3], double *rep)
{
    hisp_context ctx = u->ctx;
    double zero = 0;
    hisp_solve_info *in = calloc((size_t)u->k, sizeof *in);
    bool good = in != NULL;
    for (int64_t j = 0; good && !lock && j < u->k; j++)
        good = bench_ok(prog, ctx, hisp_vector_fill(u->x[j], hisp_scalar_host(&zero)), "fill");
    if (lock)
        good = good && bench_ok(prog, ctx, hisp_vector_fill(u->X, hisp_scalar_host(&zero)), "fill");
    good = good && sync_ok(ctx);
    double t0 = bench_now_ms();
    /* alone: a preconditioner with a setup made once, as solve_columns does */
    hisp_preconditioner P = NULL;
    if (good && !lock && u->pc == HISP_PRECOND_AMG)
        good = bench_ok(prog, ctx, hisp_preconditioner_create(u->pc, u->A, &P), "setup") &&
               bench_ok(prog, ctx, hisp_solver_use_preconditioner(u->s, P), "use");
    if (lock)
        good = good && bench_ok(prog, ctx, hisp_solver_solve_columns(u->s, u->A, u->B, u->X, in),
                                "solve_columns");
    for (int64_t j = 0; good && !lock && j < u->k; j++)
        good =
            bench_ok(prog, ctx, hisp_solver_solve(u->s, u->A, u->b[j], u->x[j], &in[j]), "solve");
    good = good && sync_ok(ctx);
    *ms = bench_now_ms() - t0;
    if (P) good = bench_ok(prog, ctx, hisp_solver_use_preconditioner(u->s, NULL), "use") && good;
    hisp_preconditioner_destroy(&P);
    its[0] = its[1] = its[2] = 0;
    *rep = 0;
    for (int64_t j = 0; good && j < u->k; j++) {
        its[0] = in[j].iterations > its[0] ? in[j].iterations : its[0];
        its[1] += in[j].iterations;
        *rep = fmax(*rep, in[j].relative_residual);
        if (!in[j].converged) {
            fprintf(stderr, "%s: column %lld: %s\n", prog, (long long)j,
                    hisp_stop_reason_name(in[j].reason));
            good = false;
        }
        its[2] += lock && in[j].lock_step;
    }
    free(in);
    return good;
}

static bool measure(setup *u, const options *o, bool lock, double *ms, int64_t its[3], double *rep)
{
    double *wall = calloc((size_t)o->repeat, sizeof *wall);
    bool good = wall && once(u, lock, ms, its, rep); /* warm-up */
    for (int r = 0; good && r < o->repeat; r++)
        good = once(u, lock, &wall[r], its, rep);
    if (good) *ms = bench_median(wall, o->repeat);
    free(wall);
    return good;
}

static bool columns_row(setup *u, const options *o, int64_t side, hisp_solver_method meth,
                        hisp_precond pc)
{
    hisp_context ctx = u->ctx;
    int64_t n = u->n, k = u->k;
    u->pc = pc;
    bool good = bench_ok(prog, ctx, hisp_solver_create(ctx, meth, &u->s), "solver") &&
                bench_ok(prog, ctx, hisp_solver_set_tolerances(u->s, o->rtol, 0), "tolerances") &&
                bench_ok(prog, ctx, hisp_solver_set_preconditioner(u->s, pc), "precond");
    double lms = 0, ams = 0, lrep = 0, arep = 0;
    int64_t lits[3] = {0, 0, 0}, aits[3] = {0, 0, 0};
    good =
        good && measure(u, o, true, &lms, lits, &lrep) && measure(u, o, false, &ams, aits, &arep);
    double *xh = good ? malloc((size_t)(n * k) * sizeof *xh) : NULL;
    good = good && xh && bench_ok(prog, ctx, hisp_vector_read(u->X, xh), "read");
    if (good) {
        double tr = true_rel(u->A, n, k, u->bh, xh);
        printf(
            "| %lld | %lld | %s | %s | %lld | %lld / %lld | %lld / %lld | %.2f | %.2f | **%.2f** "
            "| %.2e | %.2e |\n",
            (long long)side, (long long)k, hisp_solver_method_name(meth), hisp_precond_name(pc),
            (long long)lits[2], (long long)lits[0], (long long)lits[1], (long long)aits[0],
            (long long)aits[1], lms, ams, ams / lms, lrep, tr);
        fflush(stdout);
        if (!(tr <= o->rtol * 1.01)) {
            fprintf(stderr, "%s: true residual %g above rtol\n", prog, tr);
            good = false;
        }
    }
    free(xh);
    hisp_solver_destroy(&u->s);
    return good;
}

static bool side_k(hisp_context ctx, const options *o, int64_t side, int64_t k)
{
    hisp_gen_params gp;
    hisp_gen_defaults(HISP_GEN_POISSON3D, &gp);
    gp.n = side;
    gp.seed = 42;
    setup u = {.ctx = ctx, .k = k};
    hisp_matrix_info mi;
    bool good = bench_ok(prog, ctx, hisp_matrix_generate(ctx, &gp, HISP_F64, &u.A), "generate") &&
                bench_ok(prog, ctx, hisp_matrix_get_info(u.A, &mi), "info");
    u.n = mi.nrows;
    u.b = calloc((size_t)k, sizeof *u.b);
    u.x = calloc((size_t)k, sizeof *u.x);
    u.bh = malloc((size_t)(u.n * k) * sizeof *u.bh);
    good = good && u.b && u.x && u.bh;
    if (good) bs_fill_uniform(u.bh, u.n * k, 7);
    good = good &&
           bench_ok(prog, ctx,
                    hisp_vector_create_columns(ctx, HISP_F64, u.n, k, HISP_ORDER_COL, &u.B), "B") &&
           bench_ok(prog, ctx,
                    hisp_vector_create_columns(ctx, HISP_F64, u.n, k, HISP_ORDER_COL, &u.X), "X") &&
           bench_ok(prog, ctx, hisp_vector_write(u.B, u.bh), "write");
    for (int64_t j = 0; good && j < k; j++)
        good = bench_ok(prog, ctx, hisp_vector_create(ctx, HISP_F64, u.n, &u.b[j]), "b") &&
               bench_ok(prog, ctx, hisp_vector_create(ctx, HISP_F64, u.n, &u.x[j]), "x") &&
               bench_ok(prog, ctx, hisp_vector_write(u.b[j], u.bh + j * u.n), "write");
    static const struct {
        hisp_solver_method m;
        hisp_precond p;
    } cases[] = {{HISP_SOLVER_CG, HISP_PRECOND_NONE},
                 {HISP_SOLVER_CG, HISP_PRECOND_JACOBI},
                 {HISP_SOLVER_CG, HISP_PRECOND_AMG},
                 {HISP_SOLVER_BICGSTAB, HISP_PRECOND_NONE},
                 {HISP_SOLVER_BICGSTAB, HISP_PRECOND_JACOBI}};
    for (size_t c = 0; good && c < sizeof cases / sizeof *cases; c++)
        good = columns_row(&u, o, side, cases[c].m, cases[c].p);
    for (int64_t j = 0; j < k; j++) {
        if (u.b) hisp_vector_destroy(&u.b[j]);
        if (u.x) hisp_vector_destroy(&u.x[j]);
    }
    free(u.b), free(u.x), free(u.bh);
    hisp_vector_destroy(&u.B), hisp_vector_destroy(&u.X);
    hisp_matrix_destroy(&u.A);
    return good;
}

int main(int argc, char **argv)
{
    options o;
    int rc = parse(argc, argv, &o);
    if (rc) return rc == OPTS_HELP_SHOWN ? 0 : 1;
    hisp_device_info info;
    hisp_context ctx = bench_context(prog, o.backend, o.device, &info);
    if (!ctx) return 3;
    printf("%s: %s, to rtol %g from X0 = 0, median of %d runs after a warm-up\n\n", prog, info.name,
           o.rtol, o.repeat);
    printf("| side | k | method | precond | in lock step | its lock (max / sum) | its alone (max / "
           "sum) "
           "| lock ms | alone ms | **alone / lock** | reported rel | true rel |\n");
    printf("|--:|--:|---|---|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    for (int i = 0; i < o.nsides; i++)
        for (int j = 0; j < o.nks; j++)
            if (!side_k(ctx, &o, o.sides[i], o.ks[j])) return 2;
    hisp_context_destroy(&ctx);
    return 0;
}
