/* GPU benchmark of HiSparse SpMV and SpMV^T (issue 4) against hisp CSR and
 * cuSPARSE, on the generator suite.
 *
 * Options: --help (the help text below).
 *
 * Per matrix and precision, in one process and on one GPU:
 *   hisparse-cuda N/T        HiSparse as a user calls it: the first call (in the
 *                            warm-up) runs the dynamic scheduler, the timed calls
 *                            replay its leaf queues; the scheduler's counts are
 *                            those of a fresh duplicate's first call
 *   hisparse-opencl-gpu N/T  hisp's OpenCL backend on the same GPU (host-polled)
 *   hisp-cuda N/T            hisp CSR (T through its transposed copy)
 *   cusparse-alg1/alg2 N, cusparse T (opA = T, CSR_ALG1)
 *   cusparse-csc T           csr2csc once, then SpMV of the CSC arrays as a CSR of A^T
 *   cusparse-csc+conv T      the conversion and that SpMV, every time
 *   naive-atomic T           one thread per row, atomicAdd per entry (bench/naive_t.cu)
 * --quick keeps the HiSparse, hisp CSR and cuSPARSE SpMV rows only (no
 * conversion, naive or OpenCL rows).
 * Times: CUDA events, medians of `repeat` runs after `warmup`; alpha = 1,
 * beta = 0, y starting as NaN. Every result is checked against a double
 * host reference. GB/s: CSR rows use the CSR byte model; HiSparse rows the
 * tree's bytes + x + y. GFLOP/s in the table: 2 nnz / t; the summary adds
 * the HiSparse paper's 3 nnz / t. */
#include "cuda_bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cudaError_t bench_naive_spmv_t(int f64, int nrows, const int *rp, const int *ci, const void *v,
                               const void *x, void *y, cudaStream_t s);

/* ---- cuSPARSE and the naive kernel on device copies of the CSR arrays ---- */

typedef struct {
    void *rp, *ci, *v, *x, *y; /* CSR with 32-bit pointers; x (nrows), y (ncols) for A^T x */
} dev_csr;

static void dev_upload(const cb_problem *P, dev_csr *D)
{
    const cb_csr *A = P->A;
    size_t es = hisp_type_size(A->type);
    int32_t *rp = malloc((size_t)(A->nrows + 1) * sizeof *rp);
    for (int64_t i = 0; i <= A->nrows; i++)
        rp[i] = (int32_t)A->rowptr[i];
    CK(cudaMalloc(&D->rp, (size_t)(A->nrows + 1) * 4));
    CK(cudaMalloc(&D->ci, (size_t)A->nnz * 4 + 4));
    CK(cudaMalloc(&D->v, (size_t)A->nnz * es + es));
    CK(cudaMalloc(&D->x, (size_t)A->nrows * es + es));
    CK(cudaMalloc(&D->y, (size_t)A->ncols * es + es));
    CK(cudaMemcpy(D->rp, rp, (size_t)(A->nrows + 1) * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(D->ci, A->colind, (size_t)A->nnz * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(D->v, A->val, (size_t)A->nnz * es, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(D->x, P->x_t, (size_t)A->nrows * es, cudaMemcpyHostToDevice));
    free(rp);
}

static void dev_free(dev_csr *D)
{
    void *b[] = {D->rp, D->ci, D->v, D->x, D->y};
    for (int i = 0; i < 5; i++)
        if (b[i]) CK(cudaFree(b[i]));
    memset(D, 0, sizeof *D);
}

static double check_t(const cb_problem *P, const dev_csr *D)
{
    const cb_csr *A = P->A;
    size_t es = hisp_type_size(A->type);
    void *h = malloc((size_t)(A->ncols + 1) * es);
    CK(cudaMemcpy(h, D->y, (size_t)A->ncols * es, cudaMemcpyDeviceToHost));
    double e = cb_rel_err(A->type, h, P->ref_t, A->ncols);
    free(h);
    return e;
}

/* y = A^T x by csr2csc (cusparseCsr2cscEx2) and cusparseSpMV of the CSC
 * arrays read as the CSR of A^T: ms_spmv times the SpMV alone (conversion
 * done once), ms_total the conversion and the SpMV together. */
static void csc_run(cb_cusp *C, const cb_problem *P, int warmup, int repeat, double *ms_spmv,
                    double *ms_total, double *err)
{
    const cb_csr *A = P->A;
    hisp_type t = A->type;
    size_t es = hisp_type_size(t);
    cudaDataType dt = t == HISP_F32 ? CUDA_R_32F : CUDA_R_64F;
    dev_csr D = {0};
    dev_upload(P, &D);
    void *cp, *ri, *cv, *buf = NULL, *sbuf = NULL;
    CK(cudaMalloc(&cp, (size_t)(A->ncols + 1) * 4));
    CK(cudaMalloc(&ri, (size_t)A->nnz * 4 + 4));
    CK(cudaMalloc(&cv, (size_t)A->nnz * es + es));
    size_t bs = 0;
    CKS(cusparseCsr2cscEx2_bufferSize(C->h, (int)A->nrows, (int)A->ncols, (int)A->nnz, D.v, D.rp,
                                      D.ci, cv, cp, ri, dt, CUSPARSE_ACTION_NUMERIC,
                                      CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1, &bs));
    if (bs) CK(cudaMalloc(&buf, bs));
#define CONVERT()                                                                                  \
    CKS(cusparseCsr2cscEx2(C->h, (int)A->nrows, (int)A->ncols, (int)A->nnz, D.v, D.rp, D.ci, cv,   \
                           cp, ri, dt, CUSPARSE_ACTION_NUMERIC, CUSPARSE_INDEX_BASE_ZERO,          \
                           CUSPARSE_CSR2CSC_ALG1, buf))
    CONVERT();
    cusparseSpMatDescr_t mT;
    cusparseDnVecDescr_t vx, vy;
    CKS(cusparseCreateCsr(&mT, A->ncols, A->nrows, A->nnz, cp, ri, cv, CUSPARSE_INDEX_32I,
                          CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, dt));
    CKS(cusparseCreateDnVec(&vx, A->nrows, D.x, dt));
    CKS(cusparseCreateDnVec(&vy, A->ncols, D.y, dt));
    double a = 1, b = 0;
    float fa = 1, fb = 0;
    const void *pa = t == HISP_F32 ? (const void *)&fa : (const void *)&a;
    const void *pb = t == HISP_F32 ? (const void *)&fb : (const void *)&b;
    size_t sbs = 0;
    cusparseOperation_t N = CUSPARSE_OPERATION_NON_TRANSPOSE;
    CKS(cusparseSpMV_bufferSize(C->h, N, pa, mT, vx, pb, vy, dt, CUSPARSE_SPMV_CSR_ALG1, &sbs));
    if (sbs) CK(cudaMalloc(&sbuf, sbs));
    CKS(cusparseSpMV_preprocess(C->h, N, pa, mT, vx, pb, vy, dt, CUSPARSE_SPMV_CSR_ALG1, sbuf));
    for (int pass = 0; pass < 2; pass++) {
        double *ms = pass ? ms_total : ms_spmv;
        for (int i = -(warmup > 0 ? warmup : 1); i < repeat; i++) {
            float f = 0;
            CK(cudaEventRecord(C->e0, C->stream));
            if (pass) CONVERT();
            CKS(cusparseSpMV(C->h, N, pa, mT, vx, pb, vy, dt, CUSPARSE_SPMV_CSR_ALG1, sbuf));
            CK(cudaEventRecord(C->e1, C->stream));
            CK(cudaEventSynchronize(C->e1));
            CK(cudaEventElapsedTime(&f, C->e0, C->e1));
            if (i >= 0) ms[i] = f;
        }
    }
#undef CONVERT
    *err = check_t(P, &D);
    CKS(cusparseDestroySpMat(mT));
    CKS(cusparseDestroyDnVec(vx));
    CKS(cusparseDestroyDnVec(vy));
    void *bufs[] = {cp, ri, cv, buf, sbuf};
    for (int i = 0; i < 5; i++)
        if (bufs[i]) CK(cudaFree(bufs[i]));
    dev_free(&D);
}

/* The naive atomic SpMV^T; the timed work includes zeroing y. */
static void naive_run(cb_cusp *C, const cb_problem *P, int warmup, int repeat, double *ms,
                      double *err)
{
    const cb_csr *A = P->A;
    size_t es = hisp_type_size(A->type);
    dev_csr D = {0};
    dev_upload(P, &D);
    for (int i = -(warmup > 0 ? warmup : 1); i < repeat; i++) {
        float f = 0;
        CK(cudaEventRecord(C->e0, C->stream));
        CK(cudaMemsetAsync(D.y, 0, (size_t)A->ncols * es, C->stream));
        CK(bench_naive_spmv_t(A->type == HISP_F64, (int)A->nrows, D.rp, D.ci, D.v, D.x, D.y,
                              C->stream));
        CK(cudaEventRecord(C->e1, C->stream));
        CK(cudaEventSynchronize(C->e1));
        CK(cudaEventElapsedTime(&f, C->e0, C->e1));
        if (i >= 0) ms[i] = f;
    }
    *err = check_t(P, &D);
    dev_free(&D);
}

/* ---- HiSparse rows ------------------------------------------------------------ */

/* A result row whose bytes are the tree's (plus x read, y written). */
static void add_hs(bench_results *rs, const char *matrix, hisp_type t, const char *op,
                   const char *impl, const char *dev, const cb_csr *A, const double *ms, int rep,
                   double err, double copy_bw, uint64_t tree_bytes)
{
    cb_add(rs, matrix, t, op, impl, dev, A, ms, rep, err, copy_bw);
    bench_result *r = &rs->v[rs->n - 1];
    double bytes = (double)tree_bytes + (double)(A->nrows + A->ncols) * hisp_type_size(t);
    r->gbs = bytes / (r->median_ms * 1e-3) * 1e-9;
    r->bw_fraction = copy_bw > 0 ? r->gbs * 1e9 / copy_bw : 0;
    printf("       (tree bytes model: %.1f GB/s, %.1f%% of copy)\n", r->gbs, 100 * r->bw_fraction);
}

typedef struct {
    char matrix[48], precision[8];
    hisp_sched_counts c;
    uint64_t tree_bytes;
    double build_ms;
} hs_info;

static void counts_text(const hisp_sched_counts *c, char *s, size_t n)
{
    snprintf(s, n, "%lld / %lld / %lld", (long long)c->rounds, (long long)c->total_launches,
             (long long)c->total_nodes);
}

static void summary(FILE *f, const bench_results *rs, const hs_info *hi, int nhi)
{
    fprintf(f, "| matrix | prec | nnz | HiSparse N ms | HiSparse T ms | T/N | hisp CSR N ms "
               "| cuSPARSE best N ms | **HS N / cuSPARSE** | cuSPARSE T ms | csr2csc+SpMV ms "
               "(SpMV only) | naive atomic T ms | **cuSPARSE T / HS T** | HS N GB/s (of copy) "
               "| HS N GFLOP/s 3nnz/t (2nnz/t) | OpenCL-GPU HS N ms "
               "| scheduled rounds / launches / nodes |\n");
    fprintf(f, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n");
    for (int i = 0; i < nhi; i++) {
        const char *m = hi[i].matrix, *p = hi[i].precision;
        const bench_result *hn = cb_find(rs, m, p, "N", "hisparse-cuda");
        if (!hn) continue;
        double n = hn->median_ms, t = cb_med(cb_find(rs, m, p, "T", "hisparse-cuda")),
               csr = cb_med(cb_find(rs, m, p, "N", "hisp-cuda")),
               a1 = cb_med(cb_find(rs, m, p, "N", "cusparse-alg1")),
               a2 = cb_med(cb_find(rs, m, p, "N", "cusparse-alg2")),
               ct = cb_med(cb_find(rs, m, p, "T", "cusparse")),
               cs = cb_med(cb_find(rs, m, p, "T", "cusparse-csc")),
               cc = cb_med(cb_find(rs, m, p, "T", "cusparse-csc+conv")),
               na = cb_med(cb_find(rs, m, p, "T", "naive-atomic")),
               oc = cb_med(cb_find(rs, m, p, "N", "hisparse-opencl-gpu"));
        double best = a1 < a2 || isnan(a2) ? a1 : a2;
        char ct_s[64];
        counts_text(&hi[i].c, ct_s, sizeof ct_s);
        fprintf(f,
                "| %s | %s | %lld | %.4f | %.4f | %.2f | %.4f | %.4f | **%.2f** | %.4f "
                "| %.4f (%.4f) | %.4f | **%.2f** | %.0f (%.0f%%) | %.1f (%.1f) | %.4f | %s |\n",
                m, p, (long long)hn->nnz, n, t, t / n, csr, best, n / best, ct, cc, cs, na, ct / t,
                hn->gbs, 100 * hn->bw_fraction, 3e-6 * (double)hn->nnz / n,
                2e-6 * (double)hn->nnz / n, oc, ct_s);
    }
}

static void run_hs(hisp_context ctx, const cb_problem *H, hisp_op op, const char *impl,
                   const char *name, hisp_type t, const char *dev, bench_results *rs, int warmup,
                   int repeat, double *ms, double bw, uint64_t tree_bytes, hisp_sched_counts *c)
{
    double e = 0, e2 = 0;
    if (c) { /* the scheduled counts: a fresh duplicate's first call */
        cb_problem D = *H;
        cb_hk(ctx, hisp_matrix_duplicate(H->M, HISP_FORMAT_HISPARSE, &D.M), "duplicate");
        cb_hisp_run(ctx, &D, op, 0, 1, ms, &e, NULL);
        cb_hk(ctx, hisp_context_sched_counts(ctx, c), "counts");
        hisp_matrix_destroy(&D.M);
    }
    cb_hisp_run(ctx, H, op, warmup, repeat, ms, &e, &e2);
    add_hs(rs, name, t, op == HISP_OP_N ? "N" : "T", impl, dev, H->A, ms, repeat, e, bw,
           tree_bytes);
    printf("       (alpha 1.5, beta -0.5: rel. error %.1e)\n", e2);
    hisp_sched_counts cc;
    cb_hk(ctx, hisp_context_sched_counts(ctx, &cc), "counts");
    char s[64];
    counts_text(&cc, s, sizeof s);
    printf("       (last call: rounds / launches / nodes %s)\n", s);
    if (c) {
        counts_text(c, s, sizeof s);
        printf("       (first call, scheduled: rounds / launches / nodes %s)\n", s);
    }
}

static const char prog[] = "bench_hisparse_cuda";
// clang-format off
static const char help[] =
    "usage: bench_hisparse_cuda [--scale gpu|medium|small] [--matrices a,b]\n"
    "           [--precision f64|f32|both] [--repeat N] [--warmup N] [--node-size d]\n"
    "           [--no-opencl] [--quick] [--csv FILE] [--md FILE] [--summary FILE]\n"
    "HiSparse SpMV and SpMV^T on the GPU against hisp CSR and cuSPARSE, on the\n"
    "generator suite (the head of bench/bench_hisparse_cuda.c lists the rows).\n"
    "\n"
    BENCH_SUITE_HELP("gpu", "50", "5")
    "  --node-size d        HiSparse node size (default 128)\n"
    "  --no-opencl          skip the OpenCL GPU rows\n"
    "  --quick              only the HiSparse, hisp CSR and cuSPARSE SpMV rows\n"
    "  --csv FILE           the results as CSV (bench/README.md)\n"
    "  --md FILE            the markdown table\n"
    "  --summary FILE       the summary table\n"
    "  --help               this text\n";
// clang-format on

enum { O_NODE = BENCH_O_NEXT, O_NO_OPENCL, O_QUICK, O_CSV, O_MD, O_SUMMARY };
static const opts_def opts[] = {BENCH_SUITE_OPTS,    {"--node-size", true}, {"--no-opencl", false},
                                {"--quick", false},  {"--csv", true},       {"--md", true},
                                {"--summary", true}, OPTS_HELP_DEFS,        {0, 0}};

int main(int argc, char **argv)
{
    bench_suite_opts so = {BENCH_SCALE_GPU, NULL, true, true, 50, 5};
    int d = 128;
    const char *val[sizeof opts / sizeof *opts] = {0};
    int rc = bench_suite_parse(prog, argc, argv, opts, help, val, &so);
    if (!rc) rc = opts_int(prog, "--node-size", val[O_NODE], 4, 256, &d);
    if (rc) return rc == OPTS_HELP_SHOWN ? 0 : 1;
    int repeat = so.repeat, warmup = so.warmup, quick = val[O_QUICK] != NULL;
    int use_ocl = !val[O_NO_OPENCL] && !quick;
    const char *csv = val[O_CSV], *md = val[O_MD], *sum = val[O_SUMMARY];
    bench_matrix_def defs[BENCH_SUITE_MAX];
    int nm = bench_suite_select(&so, defs);
    if (nm < 0) return 1;

    hisp_context ctx = NULL;
    if (hisp_context_create(&ctx)) return 3;
    int ncuda = 0;
    cb_hk(ctx, hisp_backend_device_count(ctx, HISP_BACKEND_CUDA, &ncuda), "device count");
    if (ncuda == 0) {
        printf("no CUDA device: nothing to measure\n");
        hisp_context_destroy(&ctx);
        return 0;
    }
    hisp_device_info info;
    cb_hk(ctx, hisp_backend_device_info(ctx, HISP_BACKEND_CUDA, 0, &info), "device info");
    char gpu[128], ocl_gpu[128] = "";
    snprintf(gpu, sizeof gpu, "%.100s", info.name);
    printf("CUDA device 0: %s, %s, %d SMs\n", info.name, info.platform, info.compute_units);
    int ocl_dev = use_ocl ? cb_find_opencl(ctx, 1, ocl_gpu, sizeof ocl_gpu) : -1;
    printf("OpenCL GPU: %s\n", ocl_dev >= 0 ? ocl_gpu : "none");
    double bw = 0;
    cb_hk(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_CUDA, 0), "set cuda");
    cb_hk(ctx, hisp_copy_bandwidth(ctx, (size_t)1 << 30, 20, &bw), "copy bandwidth");
    cb_cusp C;
    (void)cb_cusp_open(&C);
    printf("copy bandwidth (read+write): %.0f GB/s; node size %d\n", bw * 1e-9, d);

    bench_results rs = {0};
    hs_info hi[2 * BENCH_SUITE_MAX];
    int nhi = 0;
    double *ms = malloc((size_t)repeat * sizeof *ms);
    for (int mi = 0; mi < nm; mi++)
        for (int ti = 0; ti < 2; ti++) {
            hisp_type t = ti == 0 ? HISP_F64 : HISP_F32;
            if (!bench_suite_has_type(&so, t)) continue;
            const char *name = defs[mi].name;
            double t0 = bench_now_ms();
            cb_case cs;
            cb_case_make(ctx, &defs[mi], t, 977 + (uint64_t)mi, &cs);
            const cb_csr A = cs.A;
            hisp_matrix M = cs.P.M, HM = NULL;
            double t1 = bench_now_ms();
            cb_hk(ctx, hisp_matrix_set_node_size(M, d), "node size");
            cb_hk(ctx, hisp_matrix_duplicate(M, HISP_FORMAT_HISPARSE, &HM), "to HiSparse");
            hs_info *h = &hi[nhi++];
            memset(h, 0, sizeof *h);
            snprintf(h->matrix, sizeof h->matrix, "%.47s", name);
            snprintf(h->precision, sizeof h->precision, "%s", hisp_type_name(t));
            h->build_ms = bench_now_ms() - t1;
            cb_hk(ctx, hisp_matrix_format_bytes(HM, HISP_FORMAT_HISPARSE, t, &h->tree_bytes),
                  "bytes");
            printf("%s %s: %lld x %lld, %lld nnz; HiSparse d=%d built on the host in %.0f ms, "
                   "%.2f bytes/nnz; inputs ready after %.1f s\n",
                   name, hisp_type_name(t), (long long)A.nrows, (long long)A.ncols,
                   (long long)A.nnz, d, h->build_ms,
                   (double)h->tree_bytes / (double)(A.nnz ? A.nnz : 1),
                   (bench_now_ms() - t0) * 1e-3);
            fflush(stdout);
            cb_problem P = cs.P, H = P;
            H.M = HM;
            double e = 0, e2 = 0;
            cb_hk(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_CUDA, 0), "set cuda");
            for (int op = 0; op < 2; op++)
                run_hs(ctx, &H, (hisp_op)op, "hisparse-cuda", name, t, gpu, &rs, warmup, repeat, ms,
                       bw, h->tree_bytes, op ? NULL : &h->c);
            for (int op = 0; op < 2; op++) {
                cb_hisp_run(ctx, &P, (hisp_op)op, warmup, repeat, ms, &e, &e2);
                cb_add(&rs, name, t, op ? "T" : "N", "hisp-cuda", gpu, &A, ms, repeat, e, bw);
            }
            /* free hisp's device copies before cuSPARSE's own */
            cb_hk(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_REFERENCE, 0), "set ref");
            cb_cusparse_run(&C, &P, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_SPMV_CSR_ALG1,
                            warmup, repeat, ms, &e);
            cb_add(&rs, name, t, "N", "cusparse-alg1", gpu, &A, ms, repeat, e, bw);
            cb_cusparse_run(&C, &P, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_SPMV_CSR_ALG2,
                            warmup, repeat, ms, &e);
            cb_add(&rs, name, t, "N", "cusparse-alg2", gpu, &A, ms, repeat, e, bw);
            cb_cusparse_run(&C, &P, CUSPARSE_OPERATION_TRANSPOSE, CUSPARSE_SPMV_CSR_ALG1, warmup,
                            repeat, ms, &e);
            cb_add(&rs, name, t, "T", "cusparse", gpu, &A, ms, repeat, e, bw);
            if (!quick) {
                double *ms2 = malloc((size_t)repeat * sizeof *ms2);
                csc_run(&C, &P, warmup, repeat, ms, ms2, &e);
                cb_add(&rs, name, t, "T", "cusparse-csc", gpu, &A, ms, repeat, e, bw);
                cb_add(&rs, name, t, "T", "cusparse-csc+conv", gpu, &A, ms2, repeat, e, bw);
                free(ms2);
                naive_run(&C, &P, warmup, repeat, ms, &e);
                cb_add(&rs, name, t, "T", "naive-atomic", gpu, &A, ms, repeat, e, bw);
            }
            if (ocl_dev >= 0) {
                cb_hk(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_OPENCL, ocl_dev), "set cl");
                for (int op = 0; op < 2; op++)
                    run_hs(ctx, &H, (hisp_op)op, "hisparse-opencl-gpu", name, t, ocl_gpu, &rs,
                           warmup, repeat, ms, bw, h->tree_bytes, NULL);
            }
            cb_hk(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_REFERENCE, 0), "set ref");
            hisp_matrix_destroy(&HM);
            cb_case_free(&cs);
        }
    free(ms);
    printf("\ncopy bandwidth %.0f GB/s; CSR rows: CSR byte model; HiSparse rows: tree + x + y\n\n",
           bw * 1e-9);
    bench_print_table(stdout, &rs, NULL);
    printf("\n");
    summary(stdout, &rs, hi, nhi);
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
        summary(f, &rs, hi, nhi);
        bench_close_out(f);
    }
    bench_results_free(&rs);
    cb_cusp_close(&C);
    hisp_context_destroy(&ctx);
    return 0;
}
