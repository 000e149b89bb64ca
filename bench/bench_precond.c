/* CG's cost with the cheap preconditioners as a user waits for it: none,
 * Jacobi, l1-Jacobi and Chebyshev on poisson3d n^3 (f64, CSR) through the
 * public API on one backend.
 *
 * Per side and preconditioner, a fresh matrix uploaded by one product, then
 * solves of a fixed iteration count from x0 = 0 (rtol 0, atol 1e-300):
 * `first setup` is hisp_solve_info.setup_ms of the first solve (Jacobi's
 * diagonal made there and kept with the matrix), `setup` and `ms/it` the
 * medians of `repeat` more solves (ms/it: wall from a synchronize to the
 * synchronize after hisp_solver_solve, setup included, over the
 * iterations), `/ none` that over CG's without a preconditioner. Prints a
 * Markdown table; --help for the options. */
#include "common.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    hisp_backend_kind backend;
    int device, repeat;
    int64_t iters;
    int64_t sides[16];
    int nsides;
} options;

static const char prog[] = "bench_precond";
static const char help[] =
    "usage: bench_precond [options]\n"
    "CG on poisson3d n^3 with none, jacobi, l1-jacobi and chebyshev: setup and ms per\n"
    "iteration through the public API.\n"
    "  --backend B         reference, opencl or cuda (default cuda)\n"
    "  --device N          device index (default: first)\n"
    "  --sides LIST        grid sides, comma-separated (default 160,200)\n"
    "  --iterations K      iterations per solve (default 300)\n"
    "  --repeat N          timed solves after the first (default 5)\n"
    "  --help              this text\n";

enum { O_BACKEND, O_DEVICE, O_SIDES, O_ITERS, O_REPEAT };
static const opts_def opts[] = {{"--backend", true},
                                {"--device", true},
                                {"--sides", true},
                                {"--iterations", true},
                                {"--repeat", true},
                                OPTS_HELP_DEFS,
                                {0, 0}};

static int parse(int argc, char **argv, options *o)
{
    *o = (options){.backend = HISP_BACKEND_CUDA, .device = -1, .repeat = 5, .iters = 300};
    const char *val[sizeof opts / sizeof *opts] = {0};
    int rc = opts_parse(prog, argc, argv, opts, help, val, NULL);
    if (!rc) rc = bench_backend_arg(prog, val[O_BACKEND], &o->backend);
    if (!rc) rc = opts_int(prog, "--device", val[O_DEVICE], 0, 1 << 20, &o->device);
    if (!rc)
        rc = bench_sides(prog, val[O_SIDES] ? val[O_SIDES] : "160,200", o->sides, 16, &o->nsides);
    if (!rc) rc = opts_i64(prog, "--iterations", val[O_ITERS], 1, 1000000, &o->iters);
    if (!rc) rc = opts_int(prog, "--repeat", val[O_REPEAT], 1, 1000, &o->repeat);
    return rc;
}

typedef struct {
    double first_setup, setup, ms_it;
    int64_t iters;
} result;

/* One preconditioner on a fresh poisson3d side^3. */
static bool run(hisp_context ctx, const options *o, int64_t side, hisp_precond pc, result *r)
{
    hisp_gen_params gp;
    hisp_gen_defaults(HISP_GEN_POISSON3D, &gp);
    gp.n = side;
    gp.seed = 42;
    hisp_matrix A = NULL;
    hisp_vector b = NULL, x = NULL;
    hisp_solver s = NULL;
    double one = 1, zero = 0, *wall = calloc((size_t)o->repeat, sizeof *wall),
           *setup = calloc((size_t)o->repeat, sizeof *setup);
    bool good = wall && setup &&
                bench_ok(prog, ctx, hisp_matrix_generate(ctx, &gp, HISP_F64, &A), "generate");
    hisp_matrix_info mi;
    good = good && bench_ok(prog, ctx, hisp_matrix_get_info(A, &mi), "info");
    good = good && bench_ok(prog, ctx, hisp_vector_create(ctx, HISP_F64, mi.nrows, &b), "vector") &&
           bench_ok(prog, ctx, hisp_vector_create(ctx, HISP_F64, mi.nrows, &x), "vector");
    good = good && bench_ok(prog, ctx, hisp_vector_fill(b, hisp_scalar_host(&one)), "fill") &&
           bench_ok(prog, ctx, hisp_spmv(ctx, HISP_OP_N, &one, A, b, &zero, x), "upload");
    good = good && bench_ok(prog, ctx, hisp_solver_create(ctx, HISP_SOLVER_CG, &s), "solver") &&
           bench_ok(prog, ctx, hisp_solver_set_tolerances(s, 0, 1e-300), "tolerances") &&
           bench_ok(prog, ctx, hisp_solver_set_max_iterations(s, o->iters), "iterations") &&
           bench_ok(prog, ctx, hisp_solver_set_preconditioner(s, pc), "preconditioner");
    for (int k = -1; good && k < o->repeat; k++) {
        hisp_solve_info info;
        good = bench_ok(prog, ctx, hisp_vector_fill(x, hisp_scalar_host(&zero)), "fill") &&
               bench_ok(prog, ctx, hisp_context_synchronize(ctx), "synchronize");
        double t0 = bench_now_ms();
        good = good && bench_ok(prog, ctx, hisp_solver_solve(s, A, b, x, &info), "solve") &&
               bench_ok(prog, ctx, hisp_context_synchronize(ctx), "synchronize");
        double t = bench_now_ms() - t0;
        if (!good) break;
        r->iters = info.iterations;
        if (k < 0)
            r->first_setup = info.setup_ms;
        else
            wall[k] = t / (double)info.iterations, setup[k] = info.setup_ms;
    }
    if (good) r->ms_it = bench_median(wall, o->repeat), r->setup = bench_median(setup, o->repeat);
    hisp_solver_destroy(&s);
    hisp_vector_destroy(&b), hisp_vector_destroy(&x);
    hisp_matrix_destroy(&A);
    free(wall), free(setup);
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
    printf("%s: %s, %lld iterations, median of %d solves\n\n", prog, info.name, (long long)o.iters,
           o.repeat);
    printf("| side | rows | precond | first setup ms | setup ms | ms/it | / none |\n");
    printf("|--:|--:|---|--:|--:|--:|--:|\n");
    static const hisp_precond pcs[] = {HISP_PRECOND_NONE, HISP_PRECOND_JACOBI,
                                       HISP_PRECOND_L1_JACOBI, HISP_PRECOND_CHEBYSHEV};
    for (int i = 0; i < o.nsides; i++) {
        int64_t side = o.sides[i];
        double none = 0;
        for (size_t p = 0; p < sizeof pcs / sizeof *pcs; p++) {
            result r = {0};
            if (!run(ctx, &o, side, pcs[p], &r)) return 2;
            if (p == 0) none = r.ms_it;
            printf("| %lld | %lld | %s | %.3f | %.3f | %.4f | %.3f |\n", (long long)side,
                   (long long)(side * side * side), hisp_precond_name(pcs[p]), r.first_setup,
                   r.setup, r.ms_it, r.ms_it / none);
            fflush(stdout);
        }
    }
    hisp_context_destroy(&ctx);
    return 0;
}
