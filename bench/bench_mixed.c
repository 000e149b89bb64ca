/* Mixed precision against f64 as a user waits for a solve to a tight
 * tolerance: poisson3d n^3 (f64, CSR), CG with none and Jacobi, BiCGSTAB
 * with none, each solved to rtol 1e-10 from x0 = 0 with
 * solver_precision=full and =mixed through the public API on one backend.
 *
 * Per side, a fresh matrix uploaded by one product; per method, a first
 * solve (`first ms`: mixed's includes making A's f32 copy), then `repeat`
 * solves: `ms` is their median wall time from a synchronize to the
 * synchronize after hisp_solver_solve, `ms/it` that over the iterations.
 * `true rel` is ||b - A x|| / ||b|| of the returned x computed here on the
 * host in double from A's arrays (not by hisp). Prints a Markdown table;
 * --help for the options. */
#include "common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    hisp_backend_kind backend;
    int device, repeat;
    double rtol;
    int64_t sides[16];
    int nsides;
} options;

static const char prog[] = "bench_mixed";
static const char help[] =
    "usage: bench_mixed [options]\n"
    "poisson3d n^3 (f64) solved to a tolerance in f64 and in mixed precision\n"
    "(solver_precision=mixed): iterations, wall ms and the true residual.\n"
    "  --backend B         reference, opencl or cuda (default cuda)\n"
    "  --device N          device index (default: first)\n"
    "  --sides LIST        grid sides, comma-separated (default 160,200)\n"
    "  --rtol R            relative tolerance (default 1e-10)\n"
    "  --repeat N          timed solves after the first (default 3)\n"
    "  --help              this text\n";

enum { O_BACKEND, O_DEVICE, O_SIDES, O_RTOL, O_REPEAT };
static const opts_def opts[] = {{"--backend", true},
                                {"--device", true},
                                {"--sides", true},
                                {"--rtol", true},
                                {"--repeat", true},
                                OPTS_HELP_DEFS,
                                {0, 0}};

static int parse(int argc, char **argv, options *o)
{
    *o = (options){.backend = HISP_BACKEND_CUDA, .device = -1, .repeat = 3, .rtol = 1e-10};
    const char *val[sizeof opts / sizeof *opts] = {0};
    int rc = opts_parse(prog, argc, argv, opts, help, val, NULL);
    if (!rc) rc = bench_backend_arg(prog, val[O_BACKEND], &o->backend);
    if (!rc) rc = opts_int(prog, "--device", val[O_DEVICE], 0, 1 << 20, &o->device);
    if (!rc)
        rc = bench_sides(prog, val[O_SIDES] ? val[O_SIDES] : "160,200", o->sides, 16, &o->nsides);
    if (!rc) rc = opts_double(prog, "--rtol", val[O_RTOL], 1e-300, 1, &o->rtol);
    if (!rc) rc = opts_int(prog, "--repeat", val[O_REPEAT], 1, 1000, &o->repeat);
    return rc;
}

/* ||b - A x|| / ||b|| with b = 1, in double from A's host arrays. */
static double true_rel(hisp_matrix A, const double *x)
{
    const int64_t *p = NULL;
    const int32_t *c = NULL;
    const void *v = NULL;
    hisp_matrix_info mi;
    if (hisp_matrix_get_info(A, &mi) || hisp_matrix_host_arrays(A, &p, NULL, &c, &v)) return NAN;
    const double *a = v;
    double rr = 0;
    for (int64_t i = 0; i < mi.nrows; i++) {
        double r = 1;
        for (int64_t e = p[i]; e < p[i + 1]; e++)
            r -= a[e] * x[c[e]];
        rr += r * r;
    }
    return sqrt(rr / (double)mi.nrows);
}

typedef struct {
    double first, ms, ms_it, rel, true_rel;
    int64_t iters, refinements;
    hisp_type itype;
    const char *reason;
} result;

static bool run(hisp_context ctx, const options *o, hisp_matrix A, hisp_vector b, hisp_vector x,
                hisp_solver s, bool mixed, result *r)
{
    double zero = 0, *wall = calloc((size_t)o->repeat, sizeof *wall);
    bool good =
        wall && bench_ok(prog, ctx,
                         hisp_context_set_option(ctx, "solver_precision", mixed ? "mixed" : "full"),
                         "option");
    hisp_solve_info info;
    for (int k = -1; good && k < o->repeat; k++) {
        good = bench_ok(prog, ctx, hisp_vector_fill(x, hisp_scalar_host(&zero)), "fill") &&
               bench_ok(prog, ctx, hisp_context_synchronize(ctx), "synchronize");
        double t0 = bench_now_ms();
        good = good && bench_ok(prog, ctx, hisp_solver_solve(s, A, b, x, &info), "solve") &&
               bench_ok(prog, ctx, hisp_context_synchronize(ctx), "synchronize");
        double t = bench_now_ms() - t0;
        if (!good) break;
        if (k < 0)
            r->first = t;
        else
            wall[k] = t;
    }
    if (good) {
        r->ms = bench_median(wall, o->repeat);
        r->iters = info.iterations, r->refinements = info.refinements;
        r->ms_it = info.iterations ? r->ms / (double)info.iterations : NAN;
        r->rel = info.relative_residual, r->itype = info.iteration_type;
        r->reason = hisp_stop_reason_name(info.reason);
        hisp_matrix_info mi;
        double *xh = NULL;
        good = bench_ok(prog, ctx, hisp_matrix_get_info(A, &mi), "info") &&
               (xh = malloc((size_t)mi.nrows * sizeof *xh)) &&
               bench_ok(prog, ctx, hisp_vector_read(x, xh), "read");
        r->true_rel = good ? true_rel(A, xh) : NAN;
        free(xh);
    }
    free(wall);
    return good;
}

static bool side_table(hisp_context ctx, const options *o, int64_t side)
{
    hisp_gen_params gp;
    hisp_gen_defaults(HISP_GEN_POISSON3D, &gp);
    gp.n = side;
    gp.seed = 42;
    hisp_matrix A = NULL;
    hisp_vector b = NULL, x = NULL;
    double one = 1, zero = 0;
    hisp_matrix_info mi;
    bool good = bench_ok(prog, ctx, hisp_matrix_generate(ctx, &gp, HISP_F64, &A), "generate") &&
                bench_ok(prog, ctx, hisp_matrix_get_info(A, &mi), "info") &&
                bench_ok(prog, ctx, hisp_vector_create(ctx, HISP_F64, mi.nrows, &b), "vector") &&
                bench_ok(prog, ctx, hisp_vector_create(ctx, HISP_F64, mi.nrows, &x), "vector") &&
                bench_ok(prog, ctx, hisp_vector_fill(b, hisp_scalar_host(&one)), "fill") &&
                bench_ok(prog, ctx, hisp_spmv(ctx, HISP_OP_N, &one, A, b, &zero, x), "upload");
    static const struct {
        hisp_solver_method m;
        hisp_precond p;
    } cases[] = {{HISP_SOLVER_CG, HISP_PRECOND_NONE},
                 {HISP_SOLVER_CG, HISP_PRECOND_JACOBI},
                 {HISP_SOLVER_BICGSTAB, HISP_PRECOND_NONE}};
    for (size_t c = 0; good && c < sizeof cases / sizeof *cases; c++) {
        hisp_solver s = NULL;
        good = bench_ok(prog, ctx, hisp_solver_create(ctx, cases[c].m, &s), "solver") &&
               bench_ok(prog, ctx, hisp_solver_set_tolerances(s, o->rtol, 0), "tolerances") &&
               bench_ok(prog, ctx, hisp_solver_set_preconditioner(s, cases[c].p), "precond");
        result r[2];
        memset(r, 0, sizeof r);
        for (int mixed = 0; good && mixed < 2; mixed++) {
            good = run(ctx, o, A, b, x, s, mixed, &r[mixed]);
            if (!good) break;
            printf("| %lld | %s | %s | %s | %s | %lld | %lld | %.2f | %.2f | %.4f | %.2e | %.2e "
                   "| %.2f |\n",
                   (long long)side, hisp_solver_method_name(cases[c].m),
                   hisp_precond_name(cases[c].p), mixed ? "mixed" : "full",
                   hisp_type_name(r[mixed].itype), (long long)r[mixed].iters,
                   (long long)r[mixed].refinements, r[mixed].first, r[mixed].ms, r[mixed].ms_it,
                   r[mixed].rel, r[mixed].true_rel, r[0].ms / r[mixed].ms);
            fflush(stdout);
        }
        hisp_solver_destroy(&s);
    }
    hisp_vector_destroy(&b), hisp_vector_destroy(&x);
    hisp_matrix_destroy(&A);
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
    printf("%s: %s, rtol %g, median of %d solves after a first\n\n", prog, info.name, o.rtol,
           o.repeat);
    printf("| side | method | precond | precision | iterations in | iterations | f64 updates "
           "| first ms | ms | ms/it | reported rel | true rel | f64 ms / this |\n");
    printf("|--:|---|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    for (int i = 0; i < o.nsides; i++)
        if (!side_table(ctx, &o, o.sides[i])) return 2;
    hisp_context_destroy(&ctx);
    return 0;
}
