/* `hisp solve` run as a child process: exit codes (0 converged, 4 not,
 * 1 usage, 2 input), the --json fields, the solution written with --out
 * checked against the test's own residual on random problems (real SPD,
 * complex), --history and --plot files, formats, preconditioner, types and
 * the several-device path. */
#include "cli_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- random problems written as Matrix Market files ------------------- */

typedef struct {
    int n, nnz;
    bool cplx;
    int *r, *c;
    double *v; /* 1 (real) or 2 (complex) numbers per entry */
} problem;

/* n x n, about 4 off-diagonal entries per row in [-1, 1), diagonal
 * dominant with a positive real part: SPD when real (symmetric pattern and
 * values), nonsingular when complex (no symmetry). */
static problem make_problem(int n, bool cplx, uint64_t *st)
{
    problem p = {n, 0, cplx, NULL, NULL, NULL};
    int comps = cplx ? 2 : 1, cap = n * 10;
    p.r = malloc((size_t)cap * sizeof *p.r);
    p.c = malloc((size_t)cap * sizeof *p.c);
    p.v = malloc((size_t)cap * (size_t)comps * sizeof *p.v);
    bool *used = calloc((size_t)n * (size_t)n, 1);
    double *rowsum = calloc((size_t)n, sizeof *rowsum);
    ck_assert(p.r && p.c && p.v && used && rowsum);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 2; k++) {
            int j = (int)(test_rand(st) % (uint64_t)n);
            if (j == i || used[(size_t)i * n + j]) continue;
            double a = test_uniform(st), b = cplx ? test_uniform(st) : 0;
            int pairs = cplx ? 1 : 2; /* real: (i, j) and (j, i) */
            if (!cplx && used[(size_t)j * n + i]) continue;
            for (int q = 0; q < pairs; q++) {
                int ri = q ? j : i, cj = q ? i : j;
                used[(size_t)ri * n + cj] = true;
                p.r[p.nnz] = ri;
                p.c[p.nnz] = cj;
                p.v[(size_t)p.nnz * comps] = a;
                if (cplx) p.v[(size_t)p.nnz * comps + 1] = b;
                rowsum[ri] += hypot(a, b);
                p.nnz++;
            }
        }
    for (int i = 0; i < n; i++) {
        p.r[p.nnz] = i;
        p.c[p.nnz] = i;
        p.v[(size_t)p.nnz * comps] = rowsum[i] + 1 + 0.5 * (test_uniform(st) + 1);
        if (cplx) p.v[(size_t)p.nnz * comps + 1] = test_uniform(st);
        p.nnz++;
    }
    free(used);
    free(rowsum);
    return p;
}

static void problem_free(problem *p)
{
    free(p->r);
    free(p->c);
    free(p->v);
}

static void write_problem_mtx(const problem *p, const char *path)
{
    FILE *f = fopen(path, "w");
    ck_assert(f);
    fprintf(f, "%%%%MatrixMarket matrix coordinate %s general\n%d %d %d\n",
            p->cplx ? "complex" : "real", p->n, p->n, p->nnz);
    for (int k = 0; k < p->nnz; k++) {
        if (p->cplx)
            fprintf(f, "%d %d %.17g %.17g\n", p->r[k] + 1, p->c[k] + 1, p->v[2 * k],
                    p->v[2 * k + 1]);
        else
            fprintf(f, "%d %d %.17g\n", p->r[k] + 1, p->c[k] + 1, p->v[k]);
    }
    fclose(f);
}

/* A random vector of n entries (comps numbers each) written as an array file. */
static double *write_random_vector(const char *path, int n, int comps, uint64_t *st)
{
    double *b = malloc((size_t)n * (size_t)comps * sizeof *b);
    ck_assert(b);
    FILE *f = fopen(path, "w");
    ck_assert(f);
    fprintf(f, "%%%%MatrixMarket matrix array %s general\n%d 1\n", comps == 2 ? "complex" : "real",
            n);
    for (int i = 0; i < n * comps; i++)
        b[i] = test_uniform(st);
    for (int i = 0; i < n; i++) {
        if (comps == 2)
            fprintf(f, "%.17g %.17g\n", b[2 * i], b[2 * i + 1]);
        else
            fprintf(f, "%.17g\n", b[i]);
    }
    fclose(f);
    return b;
}

/* x as written by --out (type t: f64 or c64), as doubles. */
static double *read_solution(const char *path, hisp_type t, int n)
{
    hisp_context ctx = test_default_context();
    hisp_vector v = NULL;
    int64_t len = 0;
    CK_OK(ctx, hisp_vector_read_mtx(ctx, path, t, &v));
    CK_OK(ctx, hisp_vector_size(v, &len));
    ck_assert_int_eq(len, n);
    double *x = malloc(hisp_type_size(t) * (size_t)n);
    ck_assert(x);
    CK_OK(ctx, hisp_vector_read(v, x));
    hisp_vector_destroy(&v);
    hisp_context_destroy(&ctx);
    return x;
}

/* ||b - A x|| / ||b||, in complex arithmetic when p is complex. */
static double residual(const problem *p, const double *b, const double *x)
{
    int comps = p->cplx ? 2 : 1;
    double *r = malloc((size_t)p->n * comps * sizeof *r);
    ck_assert(r);
    memcpy(r, b, (size_t)p->n * comps * sizeof *r);
    for (int k = 0; k < p->nnz; k++) {
        int i = p->r[k], j = p->c[k];
        if (p->cplx) {
            double ar = p->v[2 * k], ai = p->v[2 * k + 1], xr = x[2 * j], xi = x[2 * j + 1];
            r[2 * i] -= ar * xr - ai * xi;
            r[2 * i + 1] -= ar * xi + ai * xr;
        } else {
            r[i] -= p->v[k] * x[j];
        }
    }
    double num = 0, den = 0;
    for (int i = 0; i < p->n * comps; i++) {
        num += r[i] * r[i];
        den += b[i] * b[i];
    }
    free(r);
    return sqrt(num / den);
}

static bool json_has(const char *text, const char *key, const char *value)
{
    char pat[160];
    snprintf(pat, sizeof pat, "\"%s\": %s", key, value);
    return strstr(text, pat) != NULL;
}

#define CK_JSON(r, key, value)                                                                     \
    ck_assert_msg(json_has((r).out, key, value), "no \"%s\": %s in\n%.3000s", key, value, (r).out)

/* The --json members every solve reports, and converged / iterations. */
static void check_fields(const run_result *r, bool converged)
{
    ck_assert_msg(json_valid(r->out), "not JSON:\n%.3000s", r->out);
    static const char *const keys[] = {"method",
                                       "iterations",
                                       "relative_residual",
                                       "ms_per_iteration",
                                       "backend",
                                       "type",
                                       "format",
                                       "precond",
                                       "rtol",
                                       "atol",
                                       "maxit",
                                       "spmv_ms",
                                       "spmv_share",
                                       "setup_ms",
                                       "solve_ms",
                                       "h2d_bytes",
                                       "rhs_norm",
                                       "prepare_ms"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char pat[64];
        snprintf(pat, sizeof pat, "\"%s\": ", keys[i]);
        ck_assert_msg(strstr(r->out, pat), "no \"%s\" in\n%.3000s", keys[i], r->out);
    }
    CK_JSON(*r, "converged", converged ? "true" : "false");
    ck_assert(strstr(r->out, "\"transfers\": {"));
    ck_assert_double_ge(test_json_double(r->out, "spmv_ms"), 0);
}

/* ---- tests -------------------------------------------------------------- */

START_TEST(test_solve_help)
{
    run_result r = run_hisp("solve", "--help", NULL);
    CK_RUN(r, 0);
    static const char *const words[] = {"usage: hisp solve",
                                        "--method",
                                        "--rhs",
                                        "--x0",
                                        "--restart",
                                        "--precond",
                                        "--rtol",
                                        "--atol",
                                        "--maxit",
                                        "--damp",
                                        "--check-interval",
                                        "--backend",
                                        "--format",
                                        "--type",
                                        "--devices",
                                        "--out",
                                        "--history",
                                        "--plot",
                                        "--json",
                                        "--seed",
                                        "exit status",
                                        "  4  stopped without converging"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        ck_assert_msg(strstr(r.out, words[i]), "hisp solve --help lacks '%s'", words[i]);
    run_free(&r);
    r = run_hisp("--help", NULL);
    CK_RUN(r, 0);
    ck_assert_msg(strstr(r.out, "  solve "), "hisp --help does not list solve:\n%s", r.out);
    ck_assert(strstr(r.out, "  4  solve"));
    run_free(&r);
}
END_TEST

/* hisp solve A --method cg --rhs B on target t to rtol 1e-10, x to X
 * (removed first) and --json; exit status 0 asserted. */
static run_result cg_on_target(const test_target *t, const char *A, const char *B, const char *X)
{
    char dev[16];
    snprintf(dev, sizeof dev, "%d", t->device);
    remove(X);
    run_result r =
        run_hisp("solve", A, "--method", "cg", "--rhs", B, "--backend", hisp_backend_name(t->kind),
                 "--device", dev, "--rtol", "1e-10", "--out", X, "--json", NULL);
    CK_RUN(r, 0);
    return r;
}

/* CG on a random SPD matrix with a random right-hand side, on every
 * backend: exit 0, the JSON fields, and x (--out) meets the tolerance in the
 * test's own residual, which the reported one matches. */
START_TEST(test_solve_cg_backends)
{
    uint64_t st = test_seed();
    int n = 60 + (int)(test_rand(&st) % 40);
    problem p = make_problem(n, false, &st);
    const char *A = tmp("spd.mtx"), *B = tmp("b.mtx"), *X = tmp("x.mtx");
    write_problem_mtx(&p, A);
    double *b = write_random_vector(B, n, 1, &st);
    const test_target *t;
    int nt = test_targets(&t);
    for (int i = 0; i < nt; i++) {
        run_result r = cg_on_target(&t[i], A, B, X);
        check_fields(&r, true);
        CK_JSON(r, "method", "\"cg\"");
        CK_JSON(r, "reason", "\"converged\"");
        CK_JSON(r, "type", "\"f64\"");
        CK_JSON(r, "format", "\"csr\"");
        CK_JSON(r, "precond", "\"none\"");
        char be[32];
        snprintf(be, sizeof be, "\"%s\"", hisp_backend_name(t[i].kind));
        CK_JSON(r, "backend", be);
        double it = test_json_double(r.out, "iterations"),
               rel = test_json_double(r.out, "relative_residual");
        ck_assert_msg(it >= 1 && it <= 10000, "%s: %g iterations", t[i].label, it);
        double *x = read_solution(X, HISP_F64, n);
        double mine = residual(&p, b, x);
        ck_assert_msg(mine <= 1e-9, "%s: residual %g (seed %llu)", t[i].label, mine,
                      (unsigned long long)test_seed());
        ck_assert_msg(fabs(rel - mine) <= 1e-3 * mine + 1e-15, "%s: reported %g, recomputed %g",
                      t[i].label, rel, mine);
        ck_assert_double_gt(test_json_double(r.out, "ms_per_iteration"), 0);
        free(x);
        run_free(&r);
    }
    free(b);
    problem_free(&p);
}
END_TEST

/* --rhs of 3 columns (the middle one zero) on every target: each column of
 * --out meets the tolerance in the test's own residual, the JSON's per
 * column values match it; --x0 of other columns and --devices refused. */
START_TEST(test_solve_columns)
{
    uint64_t st = test_seed();
    int n = 50 + (int)(test_rand(&st) % 30), k = 3;
    problem p = make_problem(n, false, &st);
    const char *A = tmp("spd.mtx"), *B = tmp("b3.mtx"), *X = tmp("x3.mtx"), *X0 = tmp("x0.mtx");
    write_problem_mtx(&p, A);
    double *b = calloc((size_t)(n * k), sizeof *b);
    ck_assert(b);
    for (int i = 0; i < n; i++)
        b[i] = test_uniform(&st), b[2 * n + i] = 1 + test_uniform(&st);
    FILE *f = fopen(B, "w");
    ck_assert(f);
    fprintf(f, "%%%%MatrixMarket matrix array real general\n%d %d\n", n, k);
    for (int i = 0; i < n * k; i++)
        fprintf(f, "%.17g\n", b[i]);
    fclose(f);
    const test_target *t;
    int nt = test_targets(&t);
    for (int i = 0; i < nt; i++) {
        run_result r = cg_on_target(&t[i], A, B, X);
        ck_assert_int_eq(test_json_int(r.out, "columns"), k);
        ck_assert_int_eq(test_json_int(r.out, "converged_columns"), k);
        double *x = read_solution(X, HISP_F64, n * k);
        const char *c = strstr(r.out, "\"column\"");
        ck_assert(c);
        for (int j = 0; j < k; j++) {
            c = strstr(c + 1, "\"relative_residual\"");
            ck_assert(c);
            double rel = strtod(strchr(c, ':') + 1, NULL);
            double mine = j == 1 ? 0 : residual(&p, b + j * n, x + j * n);
            if (j == 1)
                for (int e = 0; e < n; e++)
                    ck_assert(x[n + e] == 0);
            ck_assert_msg(mine <= 1e-9, "%s column %d: residual %g", t[i].label, j, mine);
            ck_assert_msg(fabs(rel - mine) <= 1e-3 * mine + 1e-15,
                          "%s column %d: reported %g, recomputed %g", t[i].label, j, rel, mine);
        }
        free(x);
        run_free(&r);
    }
    free(write_random_vector(X0, n, 1, &st)); /* one column against --rhs's 3 */
    run_result r = run_hisp("solve", A, "--method", "cg", "--rhs", B, "--x0", X0, NULL);
    CK_RUN(r, 2);
    ck_assert_msg(strstr(r.err, "1 columns, --rhs has 3"), "%s", r.err);
    run_free(&r);
    r = run_hisp("solve", A, "--method", "cg", "--rhs", B, "--solves", "2", NULL);
    CK_RUN(r, 1);
    ck_assert_msg(strstr(r.err, "3 columns goes without"), "%s", r.err);
    run_free(&r);
    free(b);
    problem_free(&p);
}
END_TEST

/* --precond amg on every target: the hierarchy in --json (levels, each
 * coarser, complexities), the options in effect, the solution's residual
 * recomputed here; --amg-* set the library's options, bad values and
 * --amg-* without amg are refused. */
START_TEST(test_solve_amg)
{
    uint64_t st = test_seed();
    int n = 16;
    const char *A = tmp("jump.mtx"), *X = tmp("x.mtx");
    run_result r = run_hisp("gen", "jump3d", "--n", "16", "--block", "4", "-o", A, NULL);
    CK_RUN(r, 0);
    run_free(&r);
    static const char *const sm[] = {"chebyshev", "jacobi", "l1-jacobi"};
    const test_target *t;
    int nt = test_targets(&t);
    for (int i = 0; i < nt; i++) {
        char dev[16], sw[8];
        snprintf(dev, sizeof dev, "%d", t[i].device);
        const char *smoother = sm[test_rand(&st) % 3];
        snprintf(sw, sizeof sw, "%d", 1 + (int)(test_rand(&st) % 3));
        remove(X);
        r = run_hisp("solve", A, "--method", "cg", "--precond", "amg", "--amg-theta", "0.02",
                     "--amg-smoother", smoother, "--amg-sweeps", sw, "--backend",
                     hisp_backend_name(t[i].kind), "--device", dev, "--out", X, "--json", NULL);
        CK_RUN(r, 0);
        CK_JSON(r, "reason", "\"converged\"");
        CK_JSON(r, "precond", "\"amg\"");
        CK_JSON(r, "amg_theta", "\"0.02\"");
        char q[32];
        snprintf(q, sizeof q, "\"%s\"", smoother);
        CK_JSON(r, "amg_smoother", q);
        const char *lv = strstr(r.out, "\"levels\"");
        ck_assert_msg(lv, "%s: no levels in %s", t[i].label, r.out);
        long long prev = 0, rows = 0, lcount = 0;
        for (const char *p = strstr(lv, "\"rows\":"); p && p < strstr(lv, "]");
             p = strstr(p + 1, "\"rows\":")) {
            rows = strtoll(p + 7, NULL, 10);
            ck_assert_msg(lcount == 0 ? rows == n * n * n : rows < prev, "%s: level rows %lld",
                          t[i].label, rows);
            prev = rows, lcount++;
        }
        ck_assert_msg(lcount >= 2, "%s: %lld levels", t[i].label, lcount);
        double oc = test_json_double(r.out, "operator_complexity");
        ck_assert_msg(oc > 1 && oc < 3, "%s: operator complexity %g", t[i].label, oc);
        ck_assert_double_gt(test_json_double(r.out, "grid_complexity"), 1);
        double it = test_json_double(r.out, "iterations");
        ck_assert_msg(it >= 1 && it <= 60, "%s: %g iterations", t[i].label, it);
        run_free(&r);
    }
    /* --solves: the hierarchy once, three solves from x0 converged alike */
    r = run_hisp("solve", A, "--method", "cg", "--precond", "amg", "--solves", "3", "--update",
                 "--out", X, "--json", NULL);
    CK_RUN(r, 0);
    CK_JSON(r, "reason", "\"converged\"");
    ck_assert_int_eq(test_json_int(r.out, "solves"), 3);
    ck_assert_double_gt(test_json_double(r.out, "precond_setup_ms"), 0);
    ck_assert_double_gt(test_json_double(r.out, "median_solve_ms"), 0);
    ck_assert_double_gt(test_json_double(r.out, "median_update_ms"), 0);
    run_free(&r);
    r = run_hisp("solve", A, "--method", "cg", "--precond", "amg", "--update", NULL);
    CK_RUN(r, 1);
    run_free(&r);
    r = run_hisp("solve", A, "--method", "cg", "--solves", "2", "--history", tmp("h.csv"), NULL);
    CK_RUN(r, 1);
    run_free(&r);
    r = run_hisp("solve", A, "--method", "cg", "--precond", "jacobi", "--amg-sweeps", "2", NULL);
    CK_RUN(r, 1);
    ck_assert(strstr(r.err, "--precond amg"));
    run_free(&r);
    /* nodes: a b3x3 matrix aggregated in nodes of 3 by default (the JSON
     * says so), its file's scalars with --amg-block 3; rows that make no
     * whole nodes are refused, saying so */
    const char *E = tmp("el.mtx");
    r = run_hisp("gen", "elastic3d", "--n", "6", "-o", E, NULL);
    CK_RUN(r, 0);
    run_free(&r);
    r = run_hisp("solve", "gen:elastic3d:6", "--method", "cg", "--precond", "amg", "--json", NULL);
    CK_RUN(r, 0);
    CK_JSON(r, "reason", "\"converged\"");
    CK_JSON(r, "amg_block", "\"3\"");
    double nodes = test_json_double(r.out, "iterations");
    run_free(&r);
    r = run_hisp("solve", E, "--type", "f64", "--method", "cg", "--precond", "amg", "--amg-block",
                 "3", "--json", NULL);
    CK_RUN(r, 0);
    CK_JSON(r, "reason", "\"converged\"");
    CK_JSON(r, "amg_block", "\"3\"");
    ck_assert_double_eq(test_json_double(r.out, "iterations"), nodes);
    run_free(&r);
    r = run_hisp("solve", E, "--type", "f64", "--method", "cg", "--precond", "amg", "--amg-block",
                 "5", NULL);
    CK_RUN(r, 2);
    ck_assert_msg(strstr(r.err, "648 rows") && strstr(r.err, "amg_block"), "%s", r.err);
    run_free(&r);
    static const char *const bad[][2] = {{"--amg-theta", "2"},
                                         {"--amg-smoother", "gauss-seidel"},
                                         {"--amg-sweeps", "0"},
                                         {"--amg-block", "9"}};
    for (int k = 0; k < 4; k++) {
        r = run_hisp("solve", A, "--method", "cg", "--precond", "amg", bad[k][0], bad[k][1], NULL);
        CK_RUN(r, 2);
        ck_assert_msg(strstr(r.err, "amg_"), "%s", r.err);
        run_free(&r);
    }
}
END_TEST

START_TEST(test_solve_iteration_limit)
{
    run_result r = run_hisp("solve", "gen:poisson2d:20", "--method", "cg", "--maxit", "3",
                            "--backend", "reference", "--json", NULL);
    CK_RUN(r, 4);
    check_fields(&r, false);
    CK_JSON(r, "reason", "\"iteration limit\"");
    ck_assert_int_eq((int)test_json_double(r.out, "iterations"), 3);
    ck_assert_double_gt(test_json_double(r.out, "relative_residual"), 1e-8);
    run_free(&r);
    /* human output says why, and the exit status is the same */
    r = run_hisp("solve", "gen:poisson2d:20", "--method", "cg", "--maxit", "3", "--backend",
                 "reference", NULL);
    CK_RUN(r, 4);
    ck_assert_msg(strstr(r.out, "iteration limit after 3 iterations"), "%s", r.out);
    ck_assert(strstr(r.out, "||b - A x|| / ||b||"));
    run_free(&r);
}
END_TEST

/* f32 cannot reach rtol 1e-8: a warning first, then stagnation (exit 4),
 * the residuals in the JSON all the truth's; a reachable rtol converges.
 * And a --check of values near 1e200 that agree passes (scaled norms).
 * (The grid has more rows than PoCL's host path takes: the CLI's residual
 * is the device's product, whose rounding at f32's floor differs from the
 * host loop's by a third.) */
START_TEST(test_solve_truth)
{
    run_result r = run_hisp("solve", "gen:poisson2d:150", "--method", "cg", "--type", "f32",
                            "--backend", "opencl", "--json", NULL);
    if (r.status == 3) { /* no OpenCL device: the reference backend */
        run_free(&r);
        r = run_hisp("solve", "gen:poisson2d:40", "--method", "cg", "--type", "f32", "--backend",
                     "reference", "--json", NULL);
    }
    CK_RUN(r, 4);
    CK_JSON(r, "converged", "false");
    CK_JSON(r, "reason", "\"stagnation\"");
    ck_assert_msg(strstr(r.err, "warning: --rtol 1e-08 is below what f32 entries reach") &&
                      strstr(r.err, "solve in f64"),
                  "%s", r.err);
    double rel = test_json_double(r.out, "relative_residual"),
           lib = test_json_double(r.out, "solver_relative_residual");
    ck_assert_double_gt(rel, 1e-8);
    ck_assert_msg(fabs(rel - lib) <= 1e-3 * rel + 1e-6, "CLI %g, library %g", rel, lib);
    ck_assert_double_ge(test_json_double(r.out, "restarts"), 1);
    run_free(&r);
    /* f64 below its reach: warned, without suggesting f64 */
    r = run_hisp("solve", "gen:poisson2d:40", "--method", "cg", "--rtol", "1e-30", "--maxit", "50",
                 "--backend", "reference", "--json", NULL);
    ck_assert_msg(strstr(r.err, "is below what f64 entries reach") &&
                      !strstr(r.err, "solve in f64"),
                  "%s", r.err);
    run_free(&r);
    r = run_hisp("solve", "gen:poisson2d:40", "--method", "cg", "--type", "f32", "--rtol", "1e-4",
                 "--backend", "reference", "--json", NULL);
    CK_RUN(r, 0);
    ck_assert_msg(!strstr(r.err, "warning"), "%s", r.err);
    ck_assert_double_le(test_json_double(r.out, "relative_residual"), 1.01e-4);
    run_free(&r);

    const char *A = tmp("big.mtx");
    write_text(A, "%%MatrixMarket matrix coordinate real general\n3 3 4\n1 1 1e200\n2 2 "
                  "-3e200\n3 3 2.5e200\n1 3 1e199\n");
    r = run_hisp("spmv", A, "--check", NULL);
    CK_RUN(r, 0);
    ck_assert_msg(strstr(r.out, ": ok") && !strstr(r.out, "nan"), "%s", r.out);
    run_free(&r);
}
END_TEST

/* --solver-precision mixed: CG's iterations in f32, the f64 residual (the
 * CLI's own recomputation) at 1e-11, the updates reported; bicgstab stays
 * in f64 and says so. */
START_TEST(test_solve_mixed)
{
    run_result r =
        run_hisp("solve", "gen:poisson2d:40", "--method", "cg", "--rtol", "1e-11",
                 "--solver-precision", "mixed", "--backend", "reference", "--json", NULL);
    CK_RUN(r, 0);
    CK_JSON(r, "solver_precision", "\"mixed\"");
    CK_JSON(r, "iteration_type", "\"f32\"");
    ck_assert_double_ge(test_json_double(r.out, "refinements"), 2);
    ck_assert_double_le(test_json_double(r.out, "relative_residual"), 1e-11);
    run_free(&r);
    r = run_hisp("solve", "gen:poisson2d:40", "--method", "bicgstab", "--rtol", "1e-11",
                 "--solver-precision", "mixed", "--backend", "reference", NULL);
    CK_RUN(r, 0);
    ck_assert_msg(strstr(r.out, "precision  f64 throughout"), "%s", r.out);
    run_free(&r);
    r = run_hisp("solve", "gen:poisson2d:40", "--method", "cg", "--solver-precision", "half", NULL);
    ck_assert_int_ne(r.status, 0);
    ck_assert_msg(strstr(r.err, "solver_precision"), "%s", r.err);
    run_free(&r);
}
END_TEST

START_TEST(test_solve_bad_input)
{
    const char *A = tmp("a.mtx"), *B = tmp("short.mtx");
    run_result r = run_hisp("gen", "poisson2d", "--n", "6", "-o", A, NULL);
    CK_RUN(r, 0);
    run_free(&r);
    write_text(B, "%%MatrixMarket matrix array real general\n3 1\n1\n2\n3\n");
    /* usage errors (1): unknown option, no method, an option of another method */
    r = run_hisp("solve", A, "--method", "cg", "--no-such-option", NULL);
    CK_RUN(r, 1);
    ck_assert(strstr(r.err, "--no-such-option"));
    run_free(&r);
    r = run_hisp("solve", A, NULL);
    CK_RUN(r, 1);
    run_free(&r);
    r = run_hisp("solve", A, "--method", "cg", "--restart", "5", NULL);
    CK_RUN(r, 1);
    run_free(&r);
    /* input errors (2) */
    static const char *const bad[][4] = {{"--method", "newton", NULL, NULL},
                                         {"--method", "cg", "--precond", "ilu"},
                                         {"--method", "cg", "--rtol", "abc"},
                                         {"--method", "cg", "--type", "f16"},
                                         {"--method", "cg", "--rhs", "no-such-file.mtx"},
                                         {"--method", "cg", "--maxit", "-1"},
                                         {"--method", "cg", "--format", "ell"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = run_hisp("solve", A, bad[i][0], bad[i][1], bad[i][2], bad[i][3], NULL);
        CK_RUN(r, 2);
        ck_assert_msg(strlen(r.err) > 0, "no message for %s %s", bad[i][1], bad[i][2]);
        run_free(&r);
    }
    r = run_hisp("solve", tmp("missing.mtx"), "--method", "cg", NULL);
    CK_RUN(r, 2);
    ck_assert_msg(strstr(r.err, "missing.mtx"), "%s", r.err);
    run_free(&r);
    /* a right-hand side of the wrong length, an initial guess too */
    r = run_hisp("solve", A, "--method", "cg", "--rhs", B, NULL);
    CK_RUN(r, 2);
    ck_assert_msg(strstr(r.err, "3 entries"), "%s", r.err);
    run_free(&r);
    r = run_hisp("solve", A, "--method", "cg", "--x0", B, NULL);
    CK_RUN(r, 2);
    run_free(&r);
    /* tolerances both 0: the library refuses them */
    r = run_hisp("solve", A, "--method", "cg", "--rtol", "0", "--backend", "reference", NULL);
    CK_RUN(r, 2);
    run_free(&r);
    /* a rectangular matrix for cg */
    const char *R = tmp("rect.mtx");
    write_text(R, "%%MatrixMarket matrix coordinate real general\n3 2 2\n1 1 1\n2 2 1\n");
    r = run_hisp("solve", R, "--method", "cg", "--backend", "reference", NULL);
    CK_RUN(r, 2);
    ck_assert_msg(strstr(r.err, "square"), "%s", r.err);
    run_free(&r);
    /* over several devices: refused before any vector is made (a 10^6 x 1
     * matrix: its one-entry x0 was written into a 10^6-row vector) */
    const char *T = tmp("tall.mtx");
    write_text(T, "%%MatrixMarket matrix coordinate real general\n1000000 1 1\n1 1 1\n");
    static const char *const be[2] = {"reference", "opencl"};
    static const char *const meth[2] = {"cg", "lsqr"};
    for (int b = 0; b < 2; b++)
        for (int m = 0; m < 2; m++) {
            r = run_hisp("solve", T, "--method", meth[m], "--devices", "2", "--backend", be[b],
                         NULL);
            CK_RUN(r, 2); /* opencl without a device: the device's error, also 2 */
            ck_assert_msg(strstr(r.err, "square") || (b == 1 && strstr(r.err, "device")),
                          "%s %s: %s", be[b], meth[m], r.err);
            run_free(&r);
        }
}
END_TEST

/* GMRES and LSQR: solved (0) once they exist, else the library's
 * "unsupported" passed through (2) with its message. */
START_TEST(test_solve_other_methods)
{
    static const char *const m[] = {"gmres", "lsqr"};
    for (int i = 0; i < 2; i++) {
        run_result r = run_hisp("solve", "gen:poisson2d:10", "--method", m[i], "--backend",
                                "reference", "--json", NULL);
        ck_assert_msg(r.status == 0 || r.status == 2, "%s: exit %d\n%s", m[i], r.status, r.err);
        if (r.status == 0) {
            check_fields(&r, true);
            if (i == 1) ck_assert(strstr(r.out, "\"normal_relative_residual\": "));
        } else {
            ck_assert_msg(strstr(r.err, m[i]), "%s: %s", m[i], r.err);
        }
        run_free(&r);
    }
}
END_TEST

START_TEST(test_solve_history_and_plot)
{
    const char *H = tmp("h.csv"), *P = tmp("h.svg");
    run_result r = run_hisp("solve", "gen:poisson2d:16", "--method", "cg", "--backend", "reference",
                            "--check-interval", "4", "--history", H, "--plot", P, "--json", NULL);
    CK_RUN(r, 0);
    int it = (int)test_json_double(r.out, "iterations");
    ck_assert_int_ge(it, 2);
    char *csv = slurp(H);
    ck_assert_msg(strncmp(csv, "iteration,residual_norm,relative_residual\n", 42) == 0, "%s", csv);
    int lines = 0, want = 0;
    for (char *p = strchr(csv, '\n'); p && p[1]; p = strchr(p + 1, '\n')) {
        long k = strtol(p + 1, NULL, 10);
        ck_assert_int_eq(k, want++); /* iterations 0, 1, ... in order */
        lines++;
    }
    ck_assert_int_eq(lines, it + 1);
    /* the last line is the solve's relative residual (the method's) */
    char *last = strrchr(csv, ',');
    ck_assert(last);
    double rel = strtod(last + 1, NULL);
    ck_assert_double_le(rel, 1e-8);
    free(csv);
    char *svg = slurp(P);
    ck_assert_msg(strncmp(svg, "<svg", 4) == 0, "%.200s", svg);
    ck_assert(strstr(svg, "<polyline") || strstr(svg, "<path"));
    ck_assert(strstr(svg, "stroke-dasharray")); /* the tolerance */
    ck_assert(strstr(svg, "gen:poisson2d:16: cg"));
    ck_assert(strstr(svg, "</svg>"));
    free(svg);
    run_free(&r);
}
END_TEST

/* A complex file reads as c64 and BiCGSTAB solves it (the test's own
 * complex residual); the collection's dwg961a.mtx where it is present. */
START_TEST(test_solve_complex)
{
    uint64_t st = test_seed() ^ 0x5eed;
    int n = 50 + (int)(test_rand(&st) % 30);
    problem p = make_problem(n, true, &st);
    const char *A = tmp("c.mtx"), *B = tmp("cb.mtx"), *X = tmp("cx.mtx");
    write_problem_mtx(&p, A);
    double *b = write_random_vector(B, n, 2, &st);
    run_result r = run_hisp("solve", A, "--method", "bicgstab", "--rhs", B, "--out", X, "--backend",
                            "reference", "--json", NULL);
    CK_RUN(r, 0);
    check_fields(&r, true);
    CK_JSON(r, "type", "\"c64\"");
    CK_JSON(r, "method", "\"bicgstab\"");
    ck_assert_int_eq((int)test_json_double(r.out, "products_per_iteration"), 2);
    double *x = read_solution(X, HISP_C64, n);
    double mine = residual(&p, b, x);
    ck_assert_msg(mine <= 1e-7, "complex residual %g", mine);
    ck_assert(fabs(test_json_double(r.out, "relative_residual") - mine) <= 1e-3 * mine + 1e-15);
    free(x);
    run_free(&r);
    free(b);
    problem_free(&p);
    const char *dir = test_matrix_dir();
    char path[1200];
    snprintf(path, sizeof path, "%s/dwg961a.mtx", dir ? dir : "");
    if (!dir) {
        test_skip_no_matrices("cli_solve on dwg961a.mtx");
        return;
    }
    if (access(path, R_OK) != 0) {
        test_skip("cli_solve: dwg961a.mtx not in the matrix folder");
        return;
    }
    r = run_hisp("solve", path, "--method", "bicgstab", "--maxit", "20", "--backend", "reference",
                 "--json", NULL);
    ck_assert_msg(r.status == 0 || r.status == 4, "exit %d: %s", r.status, r.err);
    check_fields(&r, r.status == 0);
    CK_JSON(r, "type", "\"c64\"");
    run_free(&r);
}
END_TEST

/* --format hisparse, --precond jacobi, --type f32 and a generator spec on
 * the same SPD problem: each converges, and its x meets the tolerance. */
START_TEST(test_solve_variants)
{
    uint64_t st = test_seed() ^ 0xa11;
    int n = 70;
    problem p = make_problem(n, false, &st);
    const char *A = tmp("v.mtx"), *B = tmp("vb.mtx"), *X = tmp("vx.mtx");
    write_problem_mtx(&p, A);
    double *b = write_random_vector(B, n, 1, &st);
    static const char *const opt[][4] = {{"--format", "hisparse", "--rtol", "1e-10"},
                                         {"--precond", "jacobi", "--rtol", "1e-10"},
                                         {"--type", "f32", "--rtol", "1e-5"}};
    static const char *const want[][2] = {
        {"format", "\"hisparse\""}, {"precond", "\"jacobi\""}, {"type", "\"f32\""}};
    for (int i = 0; i < 3; i++) {
        remove(X);
        run_result r =
            run_hisp("solve", A, "--method", "cg", "--rhs", B, "--out", X, opt[i][0], opt[i][1],
                     opt[i][2], opt[i][3], "--backend", "reference", "--json", NULL);
        CK_RUN(r, 0);
        check_fields(&r, true);
        CK_JSON(r, want[i][0], want[i][1]);
        double *x = read_solution(X, HISP_F64, n);
        double mine = residual(&p, b, x);
        ck_assert_msg(mine <= (i == 2 ? 1e-4 : 1e-9), "%s %s: residual %g", opt[i][0], opt[i][1],
                      mine);
        free(x);
        run_free(&r);
    }
    free(b);
    problem_free(&p);
    /* a compound generator: helmholtz is complex */
    run_result r = run_hisp("solve", "gen:helmholtz:12", "--method", "bicgstab", "--backend",
                            "reference", "--rhs", "random", "--seed", "7", "--json", NULL);
    CK_RUN(r, 0);
    CK_JSON(r, "type", "\"c64\"");
    CK_JSON(r, "seed", "7");
    run_free(&r);
}
END_TEST

/* --devices N: wired to hisp_solver_solve_dist, with none, Jacobi or
 * Chebyshev (fewer iterations, its bound from the devices' products); the
 * factorisations refused with the library's message (2); compound types
 * refused before any work. */
START_TEST(test_solve_devices)
{
    static const char *const pc[3] = {"none", "jacobi", "chebyshev"};
    long long it[3];
    run_result r;
    for (int p = 0; p < 3; p++) {
        r = run_hisp("solve", "gen:poisson2d:24", "--method", "cg", "--devices", "2", "--precond",
                     pc[p], "--backend", "reference", "--rtol", "1e-8", "--json", NULL);
        CK_RUN(r, 0);
        check_fields(&r, true);
        ck_assert(strstr(r.out, "\"devices\": ["));
        char want[64];
        snprintf(want, sizeof want, "\"precond\": \"%s\"", pc[p]);
        ck_assert_msg(strstr(r.out, want), "%s: %.2000s", pc[p], r.out);
        ck_assert(test_json_double(r.out, "relative_residual") <= 1e-8);
        it[p] = test_json_int(r.out, "iterations");
        run_free(&r);
    }
    /* a Laplacian's diagonal is constant: Jacobi's iterations are none's */
    ck_assert_msg(it[2] < it[1] / 2 && it[1] <= it[0] + 1,
                  "iterations none %lld, jacobi %lld, "
                  "chebyshev %lld",
                  it[0], it[1], it[2]);
    r = run_hisp("solve", "gen:poisson2d:12", "--method", "gmres", "--devices", "2", "--precond",
                 "ilu0", "--backend", "reference", NULL);
    CK_RUN(r, 2);
    ck_assert_msg(strstr(r.err, "ilu0 over an MSREP plan is not provided"), "%s", r.err);
    run_free(&r);
    r = run_hisp("solve", "gen:helmholtz:8", "--method", "bicgstab", "--devices", "2", "--backend",
                 "reference", NULL);
    CK_RUN(r, 2);
    ck_assert_msg(strstr(r.err, "f32 or f64"), "%s", r.err);
    run_free(&r);
    r = run_hisp("solve", "gen:poisson2d:8", "--method", "cg", "--devices", "2", "--format",
                 "hisparse", NULL);
    CK_RUN(r, 1);
    run_free(&r);
}
END_TEST

Suite *suite_cli_solve(void)
{
    Suite *s = suite_create("cli_solve");
    if (!hisp_program()) {
        test_skip("cli_solve: build/bin/hisp is not built");
        return s;
    }
    TCase *tc = test_tcase(s, "cli_solve", 600);
    tcase_add_checked_fixture(tc, cli_setup, cli_teardown);
    tcase_add_test(tc, test_solve_help);
    tcase_add_test(tc, test_solve_cg_backends);
    tcase_add_test(tc, test_solve_columns);
    tcase_add_test(tc, test_solve_iteration_limit);
    tcase_add_test(tc, test_solve_amg);
    tcase_add_test(tc, test_solve_bad_input);
    tcase_add_test(tc, test_solve_truth);
    tcase_add_test(tc, test_solve_mixed);
    tcase_add_test(tc, test_solve_other_methods);
    tcase_add_test(tc, test_solve_history_and_plot);
    tcase_add_test(tc, test_solve_complex);
    tcase_add_test(tc, test_solve_variants);
    tcase_add_test(tc, test_solve_devices);
    return s;
}
