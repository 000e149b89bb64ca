/* GPU benchmark: hisp CSR SpMV (CUDA backend, OpenCL backend on the GPU and
 * on the CPU) against cuSPARSE cusparseSpMV (CSR_ALG1, CSR_ALG2, opA = T) on
 * the generator suite.
 *
 * Options: --help (the help text below); --selftest is a correctness sweep
 * of the CUDA backend (for compute-sanitizer), exit status 1 on a failure.
 *
 * Times: medians of `repeat` runs after warm-up; CUDA events for cuSPARSE,
 * hisp_spmv_timed (the backend's own device events) for hisp. Timed runs use
 * alpha = 1, beta = 0 (y = A x, y not read); a second check uses alpha = 1.5,
 * beta = -0.5. Every result is compared with a double-precision host
 * reference (relative 2-norm error). Byte model: bench_csr_spmv_bytes with
 * 32-bit row pointers (all implementations here use them), i.e. rowptr +
 * colind + values + x read once + y written once. */
#include "cuda_bench.h"
#include "hispi.h" /* hispi_spmv_hook: wide row pointers, op = T by atomics */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- selftest ---------------------------------------------------------------- */

/* Matrices whose row lengths cross every schedule boundary of the CUDA
 * kernels (stream blocks, one block per row, rows split into chunks), with
 * empty rows, empty shapes and random values. */
static hisp_matrix selftest_matrix(hisp_context ctx, hisp_type t, int which, uint64_t *seed,
                                   int64_t *m, int64_t *n)
{
    static const int64_t shapes[][2] = {{0, 0},       {1, 1},       {7, 300},    {300, 7},
                                        {1000, 1000}, {5000, 3000}, {40, 70000}, {3000, 3000}};
    *m = shapes[which][0];
    *n = shapes[which][1];
    int64_t cap = 0;
    /* row lengths: 0..~70000 mixing patterns */
    int64_t *len = calloc((size_t)*m + 1, sizeof *len);
    for (int64_t i = 0; i < *m; i++) {
        uint64_t r = cb_rng_next(seed) % 100;
        int64_t l;
        if (which == 6) /* long rows: around CAP, SPLIT and several chunks */
            l = (int64_t[]){
                0, 1, 2047, 2048, 2049, 4095, 4096, 4097, 8192, 8193, 20000, 70000}[i % 12];
        else if (which == 7) /* power law */
            l = r < 30   ? 0
                : r < 90 ? (int64_t)(cb_rng_next(seed) % 9)
                         : (int64_t)(cb_rng_next(seed) % 3000);
        else
            l = r < 10 ? 0 : (int64_t)(cb_rng_next(seed) % (uint64_t)(2 * (which + 3)));
        if (l > *n) l = *n;
        len[i] = l;
        cap += l;
    }
    int32_t *ri = malloc((size_t)cap * 4 + 4), *ci = malloc((size_t)cap * 4 + 4);
    void *v = malloc((size_t)cap * hisp_type_size(t) + 8);
    int64_t k = 0;
    for (int64_t i = 0; i < *m; i++)
        for (int64_t j = 0; j < len[i]; j++, k++) {
            ri[k] = (int32_t)i;
            /* a run of consecutive columns from a random start (no duplicates) */
            ci[k] = (int32_t)((j + (int64_t)(cb_rng_next(seed) % 4 == 0 ? 0 : i)) % *n);
            cb_put(t, v, k, cb_rng_uniform(seed));
        }
    /* duplicates are summed by the conversion; fine for a test */
    hisp_matrix A = NULL;
    cb_hk(ctx, hisp_matrix_create_coo(ctx, t, *m, *n, k, ri, ci, v, &A), "create_coo");
    cb_hk(ctx, hisp_matrix_convert(A, HISP_FORMAT_CSR), "convert");
    free(len);
    free(ri);
    free(ci);
    free(v);
    return A;
}

static int selftest(void)
{
    hisp_context ctx = NULL;
    if (hisp_context_create(&ctx)) return 3;
    int n = 0;
    cb_hk(ctx, hisp_backend_device_count(ctx, HISP_BACKEND_CUDA, &n), "device count");
    if (n == 0) {
        hisp_error_info e = {0};
        if (hisp_context_last_error(ctx, &e)) {
        }
        printf("selftest skipped: %s\n", e.message ? e.message : "no CUDA device");
        hisp_context_destroy(&ctx);
        return 0;
    }
    cb_hk(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_CUDA, 0), "set backend");
    uint64_t seed = 12345;
    int fails = 0, runs = 0;
    /* mode 0: 32-bit row pointers; 1: 64-bit; 2: op = T by atomics, not
     * through the transposed copy */
    for (int mode = 0; mode < 3; mode++) {
        int wide = mode == 1;
        hispi_spmv_hook.wide_ptr = wide;
        hispi_spmv_hook.t_mode = mode == 2 ? 1 : 2;
        for (int ti = 0; ti < 2; ti++) {
            hisp_type t = ti ? HISP_F64 : HISP_F32;
            double tol = t == HISP_F32 ? 2e-5 : 1e-12;
            for (int which = 0; which < 8; which++) {
                int64_t m, nc;
                hisp_matrix M = selftest_matrix(ctx, t, which, &seed, &m, &nc);
                const int64_t *rp;
                const int32_t *ci;
                const void *v;
                cb_hk(ctx, hisp_matrix_host_arrays(M, &rp, NULL, &ci, &v), "host arrays");
                hisp_matrix_info info;
                cb_hk(ctx, hisp_matrix_get_info(M, &info), "info");
                cb_csr A = {t, m, nc, info.nnz, rp, ci, v};
                for (int op = 0; op < 2; op++)
                    for (int bi = 0; bi < 3; bi++) {
                        double alpha = bi == 2 ? 0.75 : 1.5, beta = bi == 0   ? 0
                                                                    : bi == 1 ? -0.5
                                                                              : 1;
                        int64_t xn = op ? m : nc, yn = op ? nc : m;
                        void *x = cb_random_array(t, xn, &seed),
                             *y0 = cb_random_array(t, yn, &seed);
                        void *yh = malloc((size_t)(yn + 1) * hisp_type_size(t));
                        double *ref = malloc((size_t)(yn + 1) * sizeof *ref);
                        cb_reference(&A, (hisp_op)op, alpha, x, beta, y0, ref);
                        hisp_vector vx = NULL, vy = NULL;
                        cb_hk(ctx, hisp_vector_create(ctx, t, xn, &vx), "vec");
                        cb_hk(ctx, hisp_vector_create(ctx, t, yn, &vy), "vec");
                        cb_hk(ctx, hisp_vector_write(vx, x), "write");
                        if (beta == 0) cb_nan_fill(t, y0, yn);
                        cb_hk(ctx, hisp_vector_write(vy, y0), "write");
                        float fa = (float)alpha, fb = (float)beta;
                        const void *pa = t == HISP_F32 ? (void *)&fa : (void *)&alpha;
                        const void *pb = t == HISP_F32 ? (void *)&fb : (void *)&beta;
                        cb_hk(ctx, hisp_spmv(ctx, (hisp_op)op, pa, M, vx, pb, vy), "spmv");
                        cb_hk(ctx, hisp_vector_read(vy, yh), "read");
                        double e = cb_rel_err(t, yh, ref, yn);
                        runs++;
                        if (!(e <= tol)) {
                            fails++;
                            printf("FAIL %s ptr%d %lldx%lld nnz %lld op %c alpha %g beta %g: "
                                   "rel. error %.3e\n",
                                   hisp_type_name(t), wide ? 64 : 32, (long long)m, (long long)nc,
                                   (long long)info.nnz, op ? 'T' : 'N', alpha, beta, e);
                        }
                        hisp_vector_destroy(&vx);
                        hisp_vector_destroy(&vy);
                        free(x);
                        free(y0);
                        free(yh);
                        free(ref);
                    }
                hisp_matrix_destroy(&M);
            }
        }
    }
    hispi_spmv_hook = (hispi_spmv_hooks){0};
    hisp_context_destroy(&ctx);
    printf("selftest: %d of %d CUDA SpMV runs correct (f32/f64, N/T, beta 0/-0.5/1, "
           "32/64-bit row pointers, T by transpose and by atomics)\n",
           runs - fails, runs);
    return fails ? 1 : 0;
}

/* ---- main -------------------------------------------------------------------- */

/* The wide comparison table: one row per (matrix, precision). */
static void summary(FILE *f, const bench_results *rs)
{
    fprintf(f,
            "| matrix | prec | rows | nnz | hisp CUDA N ms | cuSPARSE ALG1 ms | cuSPARSE ALG2 ms "
            "| hisp/cuSPARSE best | hisp CUDA T ms | cuSPARSE T ms | hisp/cuSPARSE T "
            "| hisp CUDA T atomics ms "
            "| hisp CUDA N GB/s (of copy) | OpenCL GPU N ms | OpenCL GPU T ms | OCL-GPU/CUDA N "
            "| OCL-GPU/CUDA T | PoCL CPU N ms |\n");
    fprintf(f, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    for (int i = 0; i < rs->n; i++) {
        const bench_result *r = &rs->v[i];
        if (strcmp(r->impl, "hisp-cuda") || strcmp(r->op, "N")) continue;
        const char *m = r->matrix, *p = r->precision;
        double hn = r->median_ms, a1 = cb_med(cb_find(rs, m, p, "N", "cusparse-alg1")),
               a2 = cb_med(cb_find(rs, m, p, "N", "cusparse-alg2")),
               ht = cb_med(cb_find(rs, m, p, "T", "hisp-cuda")),
               ct = cb_med(cb_find(rs, m, p, "T", "cusparse")),
               ta = cb_med(cb_find(rs, m, p, "T", "hisp-cuda-atomic")),
               on = cb_med(cb_find(rs, m, p, "N", "hisp-opencl-gpu")),
               ot = cb_med(cb_find(rs, m, p, "T", "hisp-opencl-gpu")),
               pn = cb_med(cb_find(rs, m, p, "N", "hisp-opencl-cpu"));
        double best = a1 < a2 || isnan(a2) ? a1 : a2;
        fprintf(f,
                "| %s | %s | %lld | %lld | %.4f | %.4f | %.4f | **%.2f** | %.4f | %.4f | **%.2f** "
                "| %.4f "
                "| %.0f (%.0f%%) | %.4f | %.4f | **%.2f** | **%.2f** | %.2f |\n",
                m, p, (long long)r->rows, (long long)r->nnz, hn, a1, a2, hn / best, ht, ct, ht / ct,
                ta, r->gbs, 100 * r->bw_fraction, on, ot, on / hn, ot / ht, pn);
    }
}

static const char prog[] = "bench_spmv_cuda";
// clang-format off
static const char help[] =
    "usage: bench_spmv_cuda [--scale gpu|medium|small] [--matrices a,b]\n"
    "           [--precision f64|f32|both] [--repeat N] [--warmup N] [--cpu-repeat N]\n"
    "           [--no-opencl] [--no-pocl] [--csv FILE] [--md FILE] [--summary FILE]\n"
    "       bench_spmv_cuda --selftest\n"
    "hisp CSR SpMV (CUDA backend, OpenCL on the GPU and on the CPU) against\n"
    "cuSPARSE SpMV (CSR_ALG1, CSR_ALG2, opA = T) on the generator suite.\n"
    "\n"
    BENCH_SUITE_HELP("gpu", "50", "5")
    "  --cpu-repeat N       timed runs of the OpenCL CPU rows (default 5)\n"
    "  --no-opencl          skip the OpenCL GPU rows\n"
    "  --no-pocl            skip the OpenCL CPU rows\n"
    "  --csv FILE           the results as CSV (bench/README.md)\n"
    "  --md FILE            the markdown table\n"
    "  --summary FILE       the summary table\n"
    "  --selftest           correctness sweep of the CUDA backend (for\n"
    "                       compute-sanitizer); exit status 1 on a failure\n"
    "  --help               this text\n";
// clang-format on

enum { O_CPU_REPEAT = BENCH_O_NEXT, O_NO_OPENCL, O_NO_POCL, O_CSV, O_MD, O_SUMMARY, O_SELFTEST };
static const opts_def opts[] = {BENCH_SUITE_OPTS,       {"--cpu-repeat", true},
                                {"--no-opencl", false}, {"--no-pocl", false},
                                {"--csv", true},        {"--md", true},
                                {"--summary", true},    {"--selftest", false},
                                OPTS_HELP_DEFS,         {0, 0}};

int main(int argc, char **argv)
{
    bench_suite_opts so = {BENCH_SCALE_GPU, NULL, true, true, 50, 5};
    int cpu_repeat = 5;
    const char *val[sizeof opts / sizeof *opts] = {0};
    int rc = bench_suite_parse(prog, argc, argv, opts, help, val, &so);
    if (!rc) rc = opts_int(prog, "--cpu-repeat", val[O_CPU_REPEAT], 1, 1000000, &cpu_repeat);
    if (rc) return rc == OPTS_HELP_SHOWN ? 0 : 1;
    if (val[O_SELFTEST]) return selftest();
    int repeat = so.repeat, warmup = so.warmup;
    int use_ocl = !val[O_NO_OPENCL], use_pocl = !val[O_NO_POCL];
    const char *csv = val[O_CSV], *md = val[O_MD], *sum = val[O_SUMMARY];
    bench_matrix_def defs[BENCH_SUITE_MAX];
    int nm = bench_suite_select(&so, defs);
    if (nm < 0) return 1;

    hisp_context ctx = NULL;
    if (hisp_context_create(&ctx)) return 3;
    int ncuda = 0;
    cb_hk(ctx, hisp_backend_device_count(ctx, HISP_BACKEND_CUDA, &ncuda), "device count");
    char cuda_name[300] = "";
    if (ncuda == 0) {
        hisp_error_info e = {0};
        if (hisp_context_last_error(ctx, &e)) {
        }
        printf("CUDA: %s (CUDA and cuSPARSE columns skipped)\n", e.message ? e.message : "");
    } else {
        hisp_device_info info;
        cb_hk(ctx, hisp_backend_device_info(ctx, HISP_BACKEND_CUDA, 0, &info), "device info");
        snprintf(cuda_name, sizeof cuda_name, "%.100s", info.name);
        printf("CUDA device 0: %s, %s, %d SMs, %.1f GiB\n", info.name, info.platform,
               info.compute_units, (double)info.global_mem / (1 << 30));
    }
    char ocl_gpu[128] = "", ocl_cpu[128] = "";
    int ocl_gpu_dev = use_ocl ? cb_find_opencl(ctx, 1, ocl_gpu, sizeof ocl_gpu) : -1;
    int ocl_cpu_dev = use_pocl ? cb_find_opencl(ctx, 0, ocl_cpu, sizeof ocl_cpu) : -1;
    printf("OpenCL GPU: %s\nOpenCL CPU: %s\n", ocl_gpu_dev >= 0 ? ocl_gpu : "none",
           ocl_cpu_dev >= 0 ? ocl_cpu : "none");

    /* copy bandwidths: GPU device-to-device (hisp CUDA backend), host memcpy */
    double gpu_bw = 0, host_bw = bench_host_copy_bandwidth((size_t)512 << 20, 5);
    cb_cusp C = {0};
    if (ncuda) {
        cb_hk(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_CUDA, 0), "set cuda");
        cb_hk(ctx, hisp_copy_bandwidth(ctx, (size_t)1 << 30, 20, &gpu_bw), "copy bandwidth");
        int ver = cb_cusp_open(&C);
        printf("cuSPARSE %d.%d.%d\n", ver / 1000, (ver % 1000) / 100, ver % 100);
    }
    printf("copy bandwidth (read+write): GPU D2D %.0f GB/s, host memcpy %.1f GB/s\n", gpu_bw * 1e-9,
           host_bw * 1e-9);

    bench_results rs = {0};
    double *ms = malloc((size_t)(repeat > cpu_repeat ? repeat : cpu_repeat) * sizeof *ms);
    for (int mi = 0; mi < nm; mi++)
        for (int ti = 0; ti < 2; ti++) {
            hisp_type t = ti == 0 ? HISP_F64 : HISP_F32;
            if (!bench_suite_has_type(&so, t)) continue;
            const char *name = defs[mi].name;
            double t0 = bench_now_ms();
            cb_case cs;
            cb_case_make(ctx, &defs[mi], t, 977 + (uint64_t)mi, &cs);
            const cb_csr A = cs.A;
            const int64_t *rp = A.rowptr;
            int64_t lmax = 0;
            for (int64_t i = 0; i < A.nrows; i++)
                if (rp[i + 1] - rp[i] > lmax) lmax = rp[i + 1] - rp[i];
            printf("%s %s: %lld x %lld, %lld nnz (mean %.1f, max %lld per row), generated and "
                   "reference in %.1f s\n",
                   name, hisp_type_name(t), (long long)A.nrows, (long long)A.ncols,
                   (long long)A.nnz, (double)A.nnz / (double)(A.nrows ? A.nrows : 1),
                   (long long)lmax, (bench_now_ms() - t0) * 1e-3);
            fflush(stdout);
            const cb_problem P = cs.P;
            double e = 0, e2 = 0;
            if (ncuda) {
                cb_hk(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_CUDA, 0), "set cuda");
                cb_hisp_run(ctx, &P, HISP_OP_N, warmup, repeat, ms, &e, &e2);
                cb_add(&rs, name, t, "N", "hisp-cuda", cuda_name, &A, ms, repeat, e, gpu_bw);
                printf("       (alpha 1.5, beta -0.5: rel. error %.1e)\n", e2);
                double t1 = bench_now_ms();
                cb_hisp_run(ctx, &P, HISP_OP_T, 0, 1, ms, &e, NULL);
                printf("       (first op = T call, transposed copy built: %.1f ms host time)\n",
                       bench_now_ms() - t1);
                cb_hisp_run(ctx, &P, HISP_OP_T, warmup, repeat, ms, &e, &e2);
                cb_add(&rs, name, t, "T", "hisp-cuda", cuda_name, &A, ms, repeat, e, gpu_bw);
                printf("       (alpha 1.5, beta -0.5: rel. error %.1e)\n", e2);
                /* op = T by atomics (what runs when the transposed copy does not fit) */
                hispi_spmv_hook.t_mode = 1;
                cb_hk(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_REFERENCE, 0), "set ref");
                cb_hk(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_CUDA, 0), "set cuda");
                cb_hisp_run(ctx, &P, HISP_OP_T, warmup, repeat, ms, &e, &e2);
                cb_add(&rs, name, t, "T", "hisp-cuda-atomic", cuda_name, &A, ms, repeat, e, gpu_bw);
                printf("       (alpha 1.5, beta -0.5: rel. error %.1e)\n", e2);
                hispi_spmv_hook.t_mode = 0;
                /* free the hisp copy before cuSPARSE's own */
                cb_hk(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_REFERENCE, 0), "set ref");
                cb_cusparse_run(&C, &P, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_SPMV_CSR_ALG1,
                                warmup, repeat, ms, &e);
                cb_add(&rs, name, t, "N", "cusparse-alg1", cuda_name, &A, ms, repeat, e, gpu_bw);
                cb_cusparse_run(&C, &P, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_SPMV_CSR_ALG2,
                                warmup, repeat, ms, &e);
                cb_add(&rs, name, t, "N", "cusparse-alg2", cuda_name, &A, ms, repeat, e, gpu_bw);
                cb_cusparse_run(&C, &P, CUSPARSE_OPERATION_TRANSPOSE, CUSPARSE_SPMV_ALG_DEFAULT,
                                warmup, repeat, ms, &e);
                cb_add(&rs, name, t, "T", "cusparse", cuda_name, &A, ms, repeat, e, gpu_bw);
            }
            if (ocl_gpu_dev >= 0) {
                cb_hk(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_OPENCL, ocl_gpu_dev),
                      "set cl");
                cb_hisp_run(ctx, &P, HISP_OP_N, warmup, repeat, ms, &e, NULL);
                cb_add(&rs, name, t, "N", "hisp-opencl-gpu", ocl_gpu, &A, ms, repeat, e, gpu_bw);
                cb_hisp_run(ctx, &P, HISP_OP_T, warmup, repeat, ms, &e, NULL);
                cb_add(&rs, name, t, "T", "hisp-opencl-gpu", ocl_gpu, &A, ms, repeat, e, gpu_bw);
            }
            if (ocl_cpu_dev >= 0) {
                cb_hk(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_OPENCL, ocl_cpu_dev),
                      "set cl");
                cb_hisp_run(ctx, &P, HISP_OP_N, 1, cpu_repeat, ms, &e, NULL);
                cb_add(&rs, name, t, "N", "hisp-opencl-cpu", ocl_cpu, &A, ms, cpu_repeat, e, 0);
            }
            cb_hk(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_REFERENCE, 0), "set ref");
            cb_case_free(&cs);
        }
    free(ms);
    printf("\nbyte model: rowptr (rows+1)*4 + colind nnz*4 + values nnz*size + x + y (written); "
           "GPU copy bandwidth %.0f GB/s, host %.1f GB/s\n\n",
           gpu_bw * 1e-9, host_bw * 1e-9);
    bench_print_table(stdout, &rs, NULL);
    printf("\n");
    summary(stdout, &rs);
    FILE *f;
    if (csv && (f = bench_open_out(csv))) {
        bench_write_csv(f, &rs, 1);
        bench_close_out(f);
    }
    if (md && (f = bench_open_out(md))) {
        bench_print_table(f, &rs, NULL);
        bench_close_out(f);
    }
    if (sum && (f = bench_open_out(sum))) {
        summary(f, &rs);
        bench_close_out(f);
    }
    bench_results_free(&rs);
    cb_cusp_close(&C);
    hisp_context_destroy(&ctx);
    return 0;
}
