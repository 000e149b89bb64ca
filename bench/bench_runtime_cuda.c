/* SpMV as a user waits for it: hisp's HiSparse and CSR SpMV with no settings,
 * through the public API only, against cuSPARSE's CSR SpMV in the same
 * process, on the generator suite.
 *
 * Options: --help (the help text below).
 *
 * Per matrix, precision and op (N: y = A x, T: y = A^T x), two times, medians
 * of `repeat` runs after `warmup`:
 *   device  CUDA events around the call (hisp_spmv_timed; cusparseSpMV)
 *   wall    host clock around the call and a synchronize (hisp_spmv +
 *           hisp_context_synchronize; cusparseSpMV + cudaStreamSynchronize)
 * Rows: cusparse-default, -alg1, -alg2 (N; the best of the three is the
 * yardstick), cusparse-t (opA = T, the default algorithm); hisp-csr (N, T);
 * hisparse (N, T): a HiSparse copy of A (node size d, default 128), timed
 * after its first call, which is reported on its own (hisparse-first: the
 * upload and the scheduled run). Every result is checked against a double
 * host reference. The data moved between host and device during the timed
 * hisparse calls (hisp_context_transfers) is printed; it must be 0. */
#include "cuda_bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const void *scalar(hisp_type t, double v, float *f, double *d)
{
    *f = (float)v;
    *d = v;
    return t == HISP_F32 ? (const void *)f : (const void *)d;
}

/* hisp_spmv(op, M) as a user calls it: the first call's wall time, then the
 * device time (hisp_spmv_timed) and the wall time of `repeat` calls each
 * followed by a synchronize; error against the reference. Returns 0 when the
 * steady-state calls moved no data between host and device. */
static int hisp_series(hisp_context ctx, const cb_problem *P, hisp_matrix M, hisp_op op, int warmup,
                       int repeat, double *first, double *dev, double *wall, double *err)
{
    const cb_csr *A = P->A;
    hisp_type t = A->type;
    int64_t xn = op == HISP_OP_N ? A->ncols : A->nrows, yn = op == HISP_OP_N ? A->nrows : A->ncols;
    hisp_vector x = NULL, y = NULL;
    cb_hk(ctx, hisp_vector_create(ctx, t, xn, &x), "vector");
    cb_hk(ctx, hisp_vector_create(ctx, t, yn, &y), "vector");
    cb_hk(ctx, hisp_vector_write(x, op == HISP_OP_N ? P->x_n : P->x_t), "vector write");
    float fa, fb;
    double da, db;
    const void *a = scalar(t, 1, &fa, &da), *b = scalar(t, 0, &fb, &db);
    cb_hk(ctx, hisp_context_synchronize(ctx), "synchronize");
    double t0 = bench_now_ms();
    cb_hk(ctx, hisp_spmv(ctx, op, a, M, x, b, y), "spmv");
    cb_hk(ctx, hisp_context_synchronize(ctx), "synchronize");
    *first = bench_now_ms() - t0;
    cb_hk(ctx, hisp_spmv_timed(ctx, op, a, M, x, b, y, warmup, repeat, dev), "spmv_timed");
    cb_hk(ctx, hisp_context_reset_transfers(ctx), "reset transfers");
    for (int i = 0; i < repeat; i++) {
        t0 = bench_now_ms();
        cb_hk(ctx, hisp_spmv(ctx, op, a, M, x, b, y), "spmv");
        cb_hk(ctx, hisp_context_synchronize(ctx), "synchronize");
        wall[i] = bench_now_ms() - t0;
    }
    hisp_transfer_stats st;
    cb_hk(ctx, hisp_context_transfers(ctx, &st), "transfers");
    void *h = malloc((size_t)(yn + 1) * hisp_type_size(t));
    cb_hk(ctx, hisp_vector_read(y, h), "vector read");
    *err = cb_rel_err(t, h, op == HISP_OP_N ? P->ref_n : P->ref_t, yn);
    free(h);
    hisp_vector_destroy(&x);
    hisp_vector_destroy(&y);
    if (st.h2d_bytes || st.d2h_bytes)
        printf("  warning: %d timed calls moved %llu bytes to and %llu from the device\n", repeat,
               (unsigned long long)st.h2d_bytes, (unsigned long long)st.d2h_bytes);
    return st.h2d_bytes || st.d2h_bytes;
}

static void row(bench_results *rs, const char *m, hisp_type t, const char *op, const char *impl,
                const char *dev, const cb_csr *A, const double *ms, int rep, double err, double bw)
{
    cb_add(rs, m, t, op, impl, dev, A, ms, rep, err, bw);
}

static const char *fx(double v, char *s)
{
    if (isnan(v) || isinf(v))
        snprintf(s, 24, "n/a");
    else
        snprintf(s, 24, "%.3f", v);
    return s;
}

static void summary(FILE *f, const bench_results *rs, char names[][48], const char *prec[], int n)
{
    fprintf(f,
            "| matrix | prec | cuSPARSE best N device ms | wall ms | hisparse N device ms | wall "
            "ms | first call ms | **hisparse / cuSPARSE N (wall)** | device | cuSPARSE T "
            "device ms | wall ms | hisparse T device ms | wall ms | **cuSPARSE T / hisparse T "
            "(wall)** | device | hisp CSR N device ms | wall ms |\n");
    fprintf(f, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    double lnw = 0, lnd = 0, ltw = 0, ltd = 0;
    int k = 0, over_w = 0, over_d = 0;
    for (int i = 0; i < n; i++) {
        const char *m = names[i], *p = prec[i];
        static const char *algs[] = {"cusparse-default", "cusparse-alg1", "cusparse-alg2"};
        double cd = INFINITY, cw = INFINITY;
        for (int a = 0; a < 3; a++) {
            double d = cb_med(cb_find(rs, m, p, "N", algs[a]));
            char wn[64];
            snprintf(wn, sizeof wn, "%s-wall", algs[a]);
            double w = cb_med(cb_find(rs, m, p, "N", wn));
            if (d < cd) cd = d;
            if (w < cw) cw = w;
        }
        double hd = cb_med(cb_find(rs, m, p, "N", "hisparse")),
               hw = cb_med(cb_find(rs, m, p, "N", "hisparse-wall")),
               h1 = cb_med(cb_find(rs, m, p, "N", "hisparse-first")),
               ctd = cb_med(cb_find(rs, m, p, "T", "cusparse-t")),
               ctw = cb_med(cb_find(rs, m, p, "T", "cusparse-t-wall")),
               htd = cb_med(cb_find(rs, m, p, "T", "hisparse")),
               htw = cb_med(cb_find(rs, m, p, "T", "hisparse-wall")),
               csd = cb_med(cb_find(rs, m, p, "N", "hisp-csr")),
               csw = cb_med(cb_find(rs, m, p, "N", "hisp-csr-wall"));
        char s[16][24];
        fprintf(f,
                "| %s | %s | %s | %s | %s | %s | %s | **%s** | %s | %s | %s | %s | %s | **%s** | "
                "%s | %s | %s |\n",
                m, p, fx(cd, s[0]), fx(cw, s[1]), fx(hd, s[2]), fx(hw, s[3]), fx(h1, s[4]),
                fx(hw / cw, s[5]), fx(hd / cd, s[6]), fx(ctd, s[7]), fx(ctw, s[8]), fx(htd, s[9]),
                fx(htw, s[10]), fx(ctw / htw, s[11]), fx(ctd / htd, s[12]), fx(csd, s[13]),
                fx(csw, s[14]));
        if (hw > 0 && cw > 0 && htw > 0 && ctw > 0 && hd > 0 && cd > 0 && htd > 0 && ctd > 0) {
            lnw += log(hw / cw);
            lnd += log(hd / cd);
            ltw += log(ctw / htw);
            ltd += log(ctd / htd);
            over_w += hw / cw > 1.25;
            over_d += hd / cd > 1.25;
            k++;
        }
    }
    if (k)
        fprintf(f,
                "\ngeometric means over %d case(s): hisparse / cuSPARSE best N %.3f wall, %.3f "
                "device (target: <= 1.25 on every matrix; over it: %d wall, %d device); "
                "cuSPARSE T / hisparse T %.3f wall, %.3f device (target >= 2)\n",
                k, exp(lnw / k), exp(lnd / k), over_w, over_d, exp(ltw / k), exp(ltd / k));
}

static const char prog[] = "bench_runtime_cuda";
// clang-format off
static const char help[] =
    "usage: bench_runtime_cuda [--scale gpu|medium|small] [--matrices a,b]\n"
    "                          [--precision f64|f32|both] [--repeat N] [--warmup N]\n"
    "                          [--node-size d] [--csv FILE] [--summary FILE]\n"
    "HiSparse and CSR SpMV / SpMV^T as a user waits for them (public API) against\n"
    "cuSPARSE's CSR SpMV, on the generator suite (the head of\n"
    "bench/bench_runtime_cuda.c lists the rows).\n"
    "\n"
    BENCH_SUITE_HELP("gpu", "30", "3")
    "  --node-size d        HiSparse node size (default 128)\n"
    "  --csv FILE           the results as CSV (bench/README.md)\n"
    "  --summary FILE       the summary table\n"
    "  --help               this text\n";
// clang-format on

enum { O_NODE = BENCH_O_NEXT, O_CSV, O_SUMMARY };
static const opts_def opts[] = {BENCH_SUITE_OPTS,    {"--node-size", true}, {"--csv", true},
                                {"--summary", true}, OPTS_HELP_DEFS,        {0, 0}};

int main(int argc, char **argv)
{
    bench_suite_opts so = {BENCH_SCALE_GPU, NULL, true, true, 30, 3};
    int d = HISP_HISPARSE_DEFAULT_NODE_SIZE;
    const char *val[sizeof opts / sizeof *opts] = {0};
    int rc = bench_suite_parse(prog, argc, argv, opts, help, val, &so);
    if (!rc) rc = opts_int(prog, "--node-size", val[O_NODE], 4, 256, &d);
    if (rc) return rc == OPTS_HELP_SHOWN ? 0 : 1;
    int repeat = so.repeat, warmup = so.warmup;
    const char *csv = val[O_CSV], *sum = val[O_SUMMARY];
    bench_matrix_def defs[BENCH_SUITE_MAX];
    int nm = bench_suite_select(&so, defs);
    if (nm < 0) return 1;
    hisp_context ctx = NULL;
    if (hisp_context_create(&ctx)) return 3;
    int ncuda = 0;
    cb_hk(ctx, hisp_backend_device_count(ctx, HISP_BACKEND_CUDA, &ncuda), "device count");
    if (!ncuda) {
        printf("no CUDA device: nothing to measure\n");
        hisp_context_destroy(&ctx);
        return 3;
    }
    hisp_device_info info;
    cb_hk(ctx, hisp_backend_device_info(ctx, HISP_BACKEND_CUDA, 0, &info), "device info");
    char gpu[128];
    snprintf(gpu, sizeof gpu, "%.100s", info.name);
    double bw = 0;
    cb_hk(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_CUDA, 0), "set cuda");
    cb_hk(ctx, hisp_copy_bandwidth(ctx, (size_t)1 << 30, 20, &bw), "copy bandwidth");
    cb_cusp C;
    int ver = cb_cusp_open(&C);
    printf("%s, cuSPARSE %d.%d.%d, copy bandwidth %.0f GB/s (read + write)\n", gpu, ver / 1000,
           (ver % 1000) / 100, ver % 100, bw * 1e-9);

    bench_results rs = {0};
    char names[2 * BENCH_SUITE_MAX][48];
    const char *precs[2 * BENCH_SUITE_MAX];
    int ncase = 0, moved = 0, failed = 0;
    double *ms = malloc((size_t)repeat * sizeof *ms), *wall = malloc((size_t)repeat * sizeof *ms);
    for (int mi = 0; mi < nm; mi++)
        for (int ti = 0; ti < 2; ti++) {
            hisp_type t = ti == 0 ? HISP_F64 : HISP_F32;
            if (!bench_suite_has_type(&so, t)) continue;
            const char *name = defs[mi].name;
            cb_case cs;
            cb_case_make(ctx, &defs[mi], t, 977 + (uint64_t)mi, &cs);
            const cb_csr *A = &cs.A;
            printf("%s %s: %lld x %lld, nnz %lld\n", name, hisp_type_name(t), (long long)A->nrows,
                   (long long)A->ncols, (long long)A->nnz);
            snprintf(names[ncase], sizeof names[ncase], "%s", name);
            precs[ncase++] = hisp_type_name(t);
            double err = 0, tol = t == HISP_F32 ? 1e-4 : 1e-10;
            static const struct {
                const char *impl;
                cusparseOperation_t op;
                cusparseSpMVAlg_t alg;
            } cu[] = {
                {"cusparse-default", CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_SPMV_ALG_DEFAULT},
                {"cusparse-alg1", CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_SPMV_CSR_ALG1},
                {"cusparse-alg2", CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_SPMV_CSR_ALG2},
                {"cusparse-t", CUSPARSE_OPERATION_TRANSPOSE, CUSPARSE_SPMV_ALG_DEFAULT}};
            for (int k = 0; k < 4; k++) {
                const char *op = cu[k].op == CUSPARSE_OPERATION_TRANSPOSE ? "T" : "N";
                char wn[64];
                snprintf(wn, sizeof wn, "%s-wall", cu[k].impl);
                cb_cusparse_run_wall(&C, &cs.P, cu[k].op, cu[k].alg, warmup, repeat, ms, wall,
                                     &err);
                failed |= !(err <= tol);
                row(&rs, name, t, op, cu[k].impl, gpu, A, ms, repeat, err, bw);
                row(&rs, name, t, op, wn, gpu, A, wall, repeat, err, bw);
            }
            /* hisp on the CUDA backend: CSR as generated, and a HiSparse copy */
            hisp_matrix H = NULL;
            cb_hk(ctx, hisp_matrix_set_node_size(cs.P.M, d), "node size");
            cb_hk(ctx, hisp_matrix_duplicate(cs.P.M, HISP_FORMAT_HISPARSE, &H), "to HiSparse");
            cb_hk(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_CUDA, 0), "set cuda");
            for (int o = 0; o < 2; o++) {
                hisp_op op = o ? HISP_OP_T : HISP_OP_N;
                const char *ops = o ? "T" : "N";
                double first = 0;
                moved |=
                    hisp_series(ctx, &cs.P, cs.P.M, op, warmup, repeat, &first, ms, wall, &err);
                failed |= !(err <= tol);
                row(&rs, name, t, ops, "hisp-csr", gpu, A, ms, repeat, err, bw);
                row(&rs, name, t, ops, "hisp-csr-wall", gpu, A, wall, repeat, err, bw);
                moved |= hisp_series(ctx, &cs.P, H, op, warmup, repeat, &first, ms, wall, &err);
                failed |= !(err <= tol);
                row(&rs, name, t, ops, "hisparse", gpu, A, ms, repeat, err, bw);
                row(&rs, name, t, ops, "hisparse-wall", gpu, A, wall, repeat, err, bw);
                row(&rs, name, t, ops, "hisparse-first", gpu, A, &first, 1, err, bw);
            }
            hisp_matrix_destroy(&H);
            cb_case_free(&cs);
        }
    free(ms);
    free(wall);
    printf("\n");
    summary(stdout, &rs, names, precs, ncase);
    FILE *f;
    if (csv && (f = bench_open_out(csv))) {
        bench_write_csv(f, &rs, 1);
        bench_close_out(f);
    }
    if (sum && (f = bench_open_out(sum))) {
        fprintf(f, "%s, cuSPARSE %d.%d.%d, copy bandwidth %.0f GB/s\n\n", gpu, ver / 1000,
                (ver % 1000) / 100, ver % 100, bw * 1e-9);
        summary(f, &rs, names, precs, ncase);
        bench_close_out(f);
    }
    bench_results_free(&rs);
    cb_cusp_close(&C);
    hisp_context_destroy(&ctx);
    if (moved) printf("\nWARNING: timed hisp calls moved data between host and device\n");
    if (failed) printf("\nFAIL: a result differs from the reference\n");
    return failed ? 2 : 0;
}
