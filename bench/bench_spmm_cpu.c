/* SpMM on the CPU: hisp_spmm (Y = A X over k columns) on one backend
 * (PoCL by default) against an OpenMP C loop over the same CSR arrays, in
 * one process: rows split statically over the threads, each row's k sums
 * accumulated over its entries (X column-major: X[c + j n]; row-major:
 * X[c k + j]). Wall per call: hisp's from before the call to after a
 * synchronize, the loop's around it; medians of --repeat after a warm-up.
 * Every hisp result is checked against the loop's (relative 2-norm, f64);
 * exit 2 past 1e-12. OMP_NUM_THREADS sets the loop's threads (default: all
 * cores). --help for the options. */
#include "common.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    hisp_backend_kind backend;
    int device, repeat;
    const char *specs;
    int64_t ks[16];
    int nks;
    bool col, row;
} options;

static const char prog[] = "bench_spmm_cpu";
static const char help[] =
    "usage: bench_spmm_cpu [options]\n"
    "hisp_spmm on one backend against an OpenMP C loop (f64), Markdown table.\n"
    "  --backend B         reference, opencl or cuda (default opencl)\n"
    "  --device N          device index (default: first)\n"
    "  --matrices LIST     generator specs kind:n (rmat: kind:scale), comma-separated\n"
    "                      (default poisson3d:48,banded:200000,rmat:16)\n"
    "  --columns LIST      k, comma-separated (default 4,16)\n"
    "  --orders LIST       col, row or both (default col,row)\n"
    "  --repeat N          timed calls after a warm-up (default 10)\n"
    "  --help              this text\n"
    "OMP_NUM_THREADS sets the loop's threads (default: all cores).\n";

enum { O_BACKEND, O_DEVICE, O_MATRICES, O_COLUMNS, O_ORDERS, O_REPEAT };
static const opts_def opts[] = {
    {"--backend", true}, {"--device", true}, {"--matrices", true}, {"--columns", true},
    {"--orders", true},  {"--repeat", true}, OPTS_HELP_DEFS,       {0, 0}};

static int parse(int argc, char **argv, options *o)
{
    *o = (options){.backend = HISP_BACKEND_OPENCL,
                   .device = -1,
                   .repeat = 10,
                   .specs = "poisson3d:48,banded:200000,rmat:16"};
    const char *val[sizeof opts / sizeof *opts] = {0};
    int rc = opts_parse(prog, argc, argv, opts, help, val, NULL);
    if (!rc) rc = bench_backend_arg(prog, val[O_BACKEND], &o->backend);
    if (!rc) rc = opts_int(prog, "--device", val[O_DEVICE], 0, 1 << 20, &o->device);
    if (!rc && val[O_MATRICES]) o->specs = val[O_MATRICES];
    if (!rc) rc = bench_sides(prog, val[O_COLUMNS] ? val[O_COLUMNS] : "4,16", o->ks, 16, &o->nks);
    if (!rc) rc = opts_int(prog, "--repeat", val[O_REPEAT], 1, 100000, &o->repeat);
    const char *ord = val[O_ORDERS] ? val[O_ORDERS] : "col,row";
    o->col = strstr(ord, "col") != NULL;
    o->row = strstr(ord, "row") != NULL;
    if (!rc && !o->col && !o->row) {
        fprintf(stderr, "%s: --orders: col, row or both\n", prog);
        rc = OPTS_INPUT;
    }
    return rc;
}

/* Y = A X over k columns, rows split statically over the threads */
static void omp_spmm(int64_t m, int64_t n, int64_t k, const int64_t *p, const int32_t *c,
                     const double *a, const double *x, double *y, bool row)
{
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < m; i++) {
        double acc[16];
        for (int64_t j0 = 0; j0 < k; j0 += 16) {
            int w = k - j0 < 16 ? (int)(k - j0) : 16;
            for (int u = 0; u < w; u++)
                acc[u] = 0;
            for (int64_t e = p[i]; e < p[i + 1]; e++) {
                const double v = a[e];
                const int64_t cc = c[e];
                if (row)
                    for (int u = 0; u < w; u++)
                        acc[u] += v * x[cc * k + j0 + u];
                else
                    for (int u = 0; u < w; u++)
                        acc[u] += v * x[(j0 + u) * n + cc];
            }
            for (int u = 0; u < w; u++)
                y[row ? i * k + j0 + u : (j0 + u) * m + i] = acc[u];
        }
    }
}

static bool one_case(hisp_context ctx, const options *o, const char *name, hisp_matrix A, int64_t k,
                     bool row)
{
    hisp_matrix_info mi;
    const int64_t *p = NULL;
    const int32_t *c = NULL;
    const void *v = NULL;
    bool good = bench_ok(prog, ctx, hisp_matrix_get_info(A, &mi), "info") &&
                bench_ok(prog, ctx, hisp_matrix_host_arrays(A, &p, NULL, &c, &v), "arrays");
    if (!good) return false;
    int64_t m = mi.nrows, n = mi.ncols;
    double *x = malloc((size_t)(n * k) * sizeof *x), *y = malloc((size_t)(m * k) * sizeof *y),
           *yh = malloc((size_t)(m * k) * sizeof *yh);
    double *th = calloc((size_t)o->repeat, sizeof *th), *tl = calloc((size_t)o->repeat, sizeof *tl);
    hisp_vector X = NULL, Y = NULL;
    hisp_order ord = row ? HISP_ORDER_ROW : HISP_ORDER_COL;
    good = x && y && yh && th && tl;
    for (int64_t i = 0; good && i < n * k; i++)
        x[i] = sin(0.37 * (double)i) + 0.5;
    good = good &&
           bench_ok(prog, ctx, hisp_vector_create_columns(ctx, HISP_F64, n, k, ord, &X), "X") &&
           bench_ok(prog, ctx, hisp_vector_create_columns(ctx, HISP_F64, m, k, ord, &Y), "Y") &&
           bench_ok(prog, ctx, hisp_vector_write(X, x), "write");
    const double one = 1, zero = 0;
    for (int r = -1; good && r < o->repeat; r++) {
        good = bench_ok(prog, ctx, hisp_context_synchronize(ctx), "synchronize");
        double t0 = bench_now_ms();
        good = good &&
               bench_ok(prog, ctx, hisp_spmm(ctx, HISP_OP_N, &one, A, X, &zero, Y), "spmm") &&
               bench_ok(prog, ctx, hisp_context_synchronize(ctx), "synchronize");
        double t1 = bench_now_ms();
        omp_spmm(m, n, k, p, c, v, x, y, row);
        double t2 = bench_now_ms();
        if (r >= 0) th[r] = t1 - t0, tl[r] = t2 - t1;
    }
    good = good && bench_ok(prog, ctx, hisp_vector_read(Y, yh), "read");
    if (good) {
        double dd = 0, yy = 0;
        for (int64_t i = 0; i < m * k; i++) {
            dd += (yh[i] - y[i]) * (yh[i] - y[i]);
            yy += y[i] * y[i];
        }
        double rel = sqrt(dd / (yy > 0 ? yy : 1));
        double hm = bench_median(th, o->repeat), lm = bench_median(tl, o->repeat);
        printf("| %s | %lld | %lld | %lld | %s | %.3f | %.3f | **%.2f** | %.1e |\n", name,
               (long long)m, (long long)mi.nnz, (long long)k, row ? "row" : "col", hm, lm, lm / hm,
               rel);
        fflush(stdout);
        if (!(rel <= 1e-12)) {
            fprintf(stderr, "%s: %s k=%lld: hisp differs from the loop by %g\n", prog, name,
                    (long long)k, rel);
            good = false;
        }
    }
    hisp_vector_destroy(&X);
    hisp_vector_destroy(&Y);
    free(x), free(y), free(yh), free(th), free(tl);
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
    printf("%s: hisp on %s, the loop on %d OpenMP threads, f64, median of %d calls after a "
           "warm-up\n\n",
           prog, info.name, omp_get_max_threads(), o.repeat);
    printf(
        "| matrix | rows | nnz | k | order | hisp ms | OpenMP ms | **OpenMP / hisp** | diff |\n");
    printf("|---|--:|--:|--:|---|--:|--:|--:|--:|\n");
    char *list = strdup(o.specs);
    bool good = list != NULL;
    for (char *save = NULL, *tok = good ? strtok_r(list, ",", &save) : NULL; good && tok;
         tok = strtok_r(NULL, ",", &save)) {
        char kind[32] = {0};
        long long size = 0;
        hisp_gen_kind gk;
        if (sscanf(tok, "%31[^:]:%lld", kind, &size) != 2 || hisp_gen_from_name(kind, &gk)) {
            fprintf(stderr, "%s: --matrices: '%s' is not kind:n\n", prog, tok);
            good = false;
            break;
        }
        hisp_gen_params gp;
        hisp_gen_defaults(gk, &gp);
        if (gk == HISP_GEN_RMAT)
            gp.scale = (int)size;
        else
            gp.n = size;
        gp.seed = 42;
        hisp_matrix A = NULL;
        good = bench_ok(prog, ctx, hisp_matrix_generate(ctx, &gp, HISP_F64, &A), "generate");
        for (int j = 0; good && j < o.nks; j++) {
            if (o.col) good = one_case(ctx, &o, tok, A, o.ks[j], false);
            if (good && o.row) good = one_case(ctx, &o, tok, A, o.ks[j], true);
        }
        hisp_matrix_destroy(&A);
    }
    free(list);
    hisp_context_destroy(&ctx);
    return good ? 0 : 2;
}
