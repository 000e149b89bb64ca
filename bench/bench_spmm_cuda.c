/* GPU benchmark: hisp_spmm (CUDA backend) against cuSPARSE cusparseSpMM (the
 * fastest of its CSR algorithms that takes the layout: DEFAULT, CSR_ALG1,
 * CSR_ALG2, CSR_ALG3) on the generator suite, Y = A X with k columns, X and
 * Y both column-major or both row-major, f64 (f32 with --types).
 *
 * Times per call, medians of `repeat`: `wall` from the host clock around one
 * call and a synchronize (what a user waits for); `dev` the mean of `repeat`
 * calls queued back to back with one synchronize at the end (for cuSPARSE,
 * CUDA events around the same back-to-back calls). cuSPARSE's buffer is
 * queried and allocated once, outside the timing, as CuPy keeps it. hisp's
 * SpMV of one column is timed the same way, so `per-vector gain` is k times
 * the SpMV over the SpMM. Results: hisp's Y against cuSPARSE's (relative
 * 2-norm difference) and column 0 against a double-precision host product. */
#include "cuda_bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char prog[] = "bench_spmm_cuda";

// clang-format off
static const char help[] =
    "usage: bench_spmm_cuda [suite options] [--columns 4,16,64] [--orders col,row]\n"
    "           [--md FILE]\n"
    "hisp_spmm (CUDA) against cuSPARSE SpMM on the generator suite.\n"
    "\n"
    BENCH_SUITE_HELP("gpu", "10", "3")
    "  --columns LIST       column counts k (default 4,16,64)\n"
    "  --orders LIST        col, row or both (default col,row)\n"
    "  --md FILE            the markdown table\n"
    "  --help               this text\n";
// clang-format on

enum { O_COLUMNS = BENCH_O_NEXT, O_ORDERS, O_MD };
static const opts_def opts[] = {BENCH_SUITE_OPTS, {"--columns", true}, {"--orders", true},
                                {"--md", true},   OPTS_HELP_DEFS,      {0, 0}};

typedef struct {
    double wall, dev; /* ms per call, medians */
} timing;

static double median_of(double *v, int n)
{
    return bench_median(v, n);
}

/* hisp: Y = A X (alpha 1, beta 0) on the context's stream */
static timing time_hisp(hisp_context ctx, hisp_matrix A, hisp_vector X, hisp_vector Y, int spmv,
                        int warmup, int repeat)
{
    const double one = 1, zero = 0;
    float onef = 1, zerof = 0;
    hisp_matrix_info mi;
    cb_hk(ctx, hisp_matrix_get_info(A, &mi), "info");
    const void *a = mi.type == HISP_F32 ? (const void *)&onef : (const void *)&one;
    const void *b = mi.type == HISP_F32 ? (const void *)&zerof : (const void *)&zero;
#define CALL()                                                                                     \
    cb_hk(ctx,                                                                                     \
          spmv ? hisp_spmv(ctx, HISP_OP_N, a, A, X, b, Y)                                          \
               : hisp_spmm(ctx, HISP_OP_N, a, A, X, b, Y),                                         \
          "product")
    for (int i = 0; i < warmup; i++)
        CALL();
    cb_hk(ctx, hisp_context_synchronize(ctx), "sync");
    double *w = malloc((size_t)repeat * sizeof *w), *d = malloc((size_t)repeat * sizeof *d);
    for (int i = 0; i < repeat; i++) {
        double t0 = bench_now_ms();
        CALL();
        cb_hk(ctx, hisp_context_synchronize(ctx), "sync");
        w[i] = bench_now_ms() - t0;
    }
    for (int r = 0; r < repeat; r++) {
        double t0 = bench_now_ms();
        for (int i = 0; i < 5; i++)
            CALL();
        cb_hk(ctx, hisp_context_synchronize(ctx), "sync");
        d[r] = (bench_now_ms() - t0) / 5;
    }
#undef CALL
    timing t = {median_of(w, repeat), median_of(d, repeat)};
    free(w), free(d);
    return t;
}

/* cuSPARSE SpMM: the best algorithm for the order (wall and device ms), its
 * Y in yh; *alg_name the one that won; 0 when no algorithm took it */
static int time_cusparse(cb_cusp *C, const cb_csr *A, const void *xh, int64_t k, int row,
                         int warmup, int repeat, void *yh, timing *best, const char **alg_name)
{
    hisp_type t = A->type;
    size_t es = hisp_type_size(t);
    cudaDataType dt = t == HISP_F32 ? CUDA_R_32F : CUDA_R_64F;
    int32_t *rp = malloc((size_t)(A->nrows + 1) * sizeof *rp);
    for (int64_t i = 0; i <= A->nrows; i++)
        rp[i] = (int32_t)A->rowptr[i];
    void *drp, *dci, *dv, *dx, *dy;
    size_t xb = (size_t)(A->ncols * k) * es, yb = (size_t)(A->nrows * k) * es;
    CK(cudaMalloc(&drp, (size_t)(A->nrows + 1) * 4));
    CK(cudaMalloc(&dci, (size_t)A->nnz * 4 + 4));
    CK(cudaMalloc(&dv, (size_t)A->nnz * es + es));
    CK(cudaMalloc(&dx, xb + es));
    CK(cudaMalloc(&dy, yb + es));
    CK(cudaMemcpy(drp, rp, (size_t)(A->nrows + 1) * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dci, A->colind, (size_t)A->nnz * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dv, A->val, (size_t)A->nnz * es, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dx, xh, xb, cudaMemcpyHostToDevice));
    free(rp);
    cusparseSpMatDescr_t mA;
    cusparseDnMatDescr_t mX, mY;
    cusparseOrder_t ord = row ? CUSPARSE_ORDER_ROW : CUSPARSE_ORDER_COL;
    CKS(cusparseCreateCsr(&mA, A->nrows, A->ncols, A->nnz, drp, dci, dv, CUSPARSE_INDEX_32I,
                          CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, dt));
    CKS(cusparseCreateDnMat(&mX, A->ncols, k, row ? k : A->ncols, dx, dt, ord));
    CKS(cusparseCreateDnMat(&mY, A->nrows, k, row ? k : A->nrows, dy, dt, ord));
    double a = 1, b = 0;
    float fa = 1, fb = 0;
    const void *pa = t == HISP_F32 ? (const void *)&fa : (const void *)&a;
    const void *pb = t == HISP_F32 ? (const void *)&fb : (const void *)&b;
    const cusparseSpMMAlg_t algs[] = {CUSPARSE_SPMM_ALG_DEFAULT, CUSPARSE_SPMM_CSR_ALG1,
                                      CUSPARSE_SPMM_CSR_ALG2, CUSPARSE_SPMM_CSR_ALG3};
    const char *names[] = {"DEFAULT", "CSR_ALG1", "CSR_ALG2", "CSR_ALG3"};
    const cusparseOperation_t N = CUSPARSE_OPERATION_NON_TRANSPOSE;
    int found = 0;
    double *w = malloc((size_t)repeat * sizeof *w), *d = malloc((size_t)repeat * sizeof *d);
    for (int ai = 0; ai < 4; ai++) {
        size_t bs = 0;
        void *buf = NULL;
        if (cusparseSpMM_bufferSize(C->h, N, N, pa, mA, mX, pb, mY, dt, algs[ai], &bs) !=
            CUSPARSE_STATUS_SUCCESS)
            continue;
        if (bs && cudaMalloc(&buf, bs) != cudaSuccess) {
            (void)cudaGetLastError();
            continue;
        }
        if (cusparseSpMM_preprocess(C->h, N, N, pa, mA, mX, pb, mY, dt, algs[ai], buf) !=
                CUSPARSE_STATUS_SUCCESS ||
            cusparseSpMM(C->h, N, N, pa, mA, mX, pb, mY, dt, algs[ai], buf) !=
                CUSPARSE_STATUS_SUCCESS) {
            if (buf) CK(cudaFree(buf));
            continue;
        }
        for (int i = 0; i < warmup; i++)
            CKS(cusparseSpMM(C->h, N, N, pa, mA, mX, pb, mY, dt, algs[ai], buf));
        CK(cudaStreamSynchronize(C->stream));
        for (int i = 0; i < repeat; i++) {
            double t0 = bench_now_ms();
            CKS(cusparseSpMM(C->h, N, N, pa, mA, mX, pb, mY, dt, algs[ai], buf));
            CK(cudaStreamSynchronize(C->stream));
            w[i] = bench_now_ms() - t0;
        }
        for (int r = 0; r < repeat; r++) {
            float f = 0;
            CK(cudaEventRecord(C->e0, C->stream));
            for (int i = 0; i < 5; i++)
                CKS(cusparseSpMM(C->h, N, N, pa, mA, mX, pb, mY, dt, algs[ai], buf));
            CK(cudaEventRecord(C->e1, C->stream));
            CK(cudaEventSynchronize(C->e1));
            CK(cudaEventElapsedTime(&f, C->e0, C->e1));
            d[r] = f / 5;
        }
        timing tm = {median_of(w, repeat), median_of(d, repeat)};
        if (!found || tm.dev < best->dev) {
            *best = tm;
            *alg_name = names[ai];
            CK(cudaMemcpy(yh, dy, yb, cudaMemcpyDeviceToHost));
        }
        found = 1;
        if (buf) CK(cudaFree(buf));
    }
    free(w), free(d);
    CKS(cusparseDestroySpMat(mA));
    CKS(cusparseDestroyDnMat(mX));
    CKS(cusparseDestroyDnMat(mY));
    void *bufs[] = {drp, dci, dv, dx, dy};
    for (int i = 0; i < 5; i++)
        CK(cudaFree(bufs[i]));
    return found;
}

static double rel_diff(hisp_type t, const void *a, const void *b, int64_t n)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        double x = cb_at(t, a, i), y = cb_at(t, b, i);
        num += (x - y) * (x - y);
        den += y * y;
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

int main(int argc, char **argv)
{
    bench_suite_opts so = {BENCH_SCALE_GPU, NULL, true, true, 10, 3};
    const char *val[sizeof opts / sizeof *opts] = {0};
    int rc = bench_suite_parse(prog, argc, argv, opts, help, val, &so);
    if (rc) return rc == OPTS_HELP_SHOWN ? 0 : 1;
    int64_t ks[8];
    int nk = 0;
    if (bench_sides(prog, val[O_COLUMNS] ? val[O_COLUMNS] : "4,16,64", ks, 8, &nk)) return 1;
    const char *orders = val[O_ORDERS] ? val[O_ORDERS] : "col,row";
    int want_col = strstr(orders, "col") != NULL, want_row = strstr(orders, "row") != NULL;
    bench_matrix_def defs[BENCH_SUITE_MAX];
    int nm = bench_suite_select(&so, defs);
    if (nm < 0) return 1;
    hisp_context ctx = NULL;
    hisp_device_info info;
    if (cb_cuda_context(&ctx, &info)) return 3;
    cb_cusp C = {0};
    int ver = cb_cusp_open(&C);
    printf("%s, cuSPARSE %d.%d.%d\n", info.name, ver / 1000, (ver % 1000) / 100, ver % 100);
    FILE *md = val[O_MD] ? fopen(val[O_MD], "w") : NULL;
    const char *head = "| matrix | type | k | order | hisp wall ms | hisp dev ms | cuSPARSE alg | "
                       "cuSPARSE wall ms | cuSPARSE dev ms | **cuSPARSE / hisp** (wall) | "
                       "per-vector gain | Y diff |\n"
                       "|---|---|--:|---|--:|--:|---|--:|--:|--:|--:|--:|\n";
    printf("%s", head);
    if (md)
        fprintf(md, "%s %s, cuSPARSE %d.%d.%d\n\n%s", info.name, info.platform, ver / 1000,
                (ver % 1000) / 100, ver % 100, head);
    double logsum = 0;
    int nlog = 0, fails = 0;
    for (int mi = 0; mi < nm; mi++)
        for (int ti = 0; ti < 2; ti++) {
            hisp_type t = ti == 0 ? HISP_F64 : HISP_F32;
            if (!bench_suite_has_type(&so, t)) continue;
            cb_case cs;
            cb_case_make(ctx, &defs[mi], t, 977 + (uint64_t)mi, &cs);
            const cb_csr *A = &cs.A;
            cb_hk(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_CUDA, 0), "set cuda");
            hisp_matrix M = NULL;
            cb_hk(ctx,
                  hisp_matrix_create_csr(ctx, t, A->nrows, A->ncols, A->rowptr, A->colind, A->val,
                                         &M),
                  "matrix");
            size_t es = hisp_type_size(t);
            /* one SpMV for the per-vector gain */
            hisp_vector x1 = NULL, y1 = NULL;
            cb_hk(ctx, hisp_vector_create(ctx, t, A->ncols, &x1), "x");
            cb_hk(ctx, hisp_vector_create(ctx, t, A->nrows, &y1), "y");
            cb_hk(ctx, hisp_vector_write(x1, cs.P.x_n), "x write");
            timing sv = time_hisp(ctx, M, x1, y1, 1, so.warmup, so.repeat);
            hisp_vector_destroy(&x1);
            hisp_vector_destroy(&y1);
            for (int ki = 0; ki < nk; ki++)
                for (int row = 0; row < 2; row++) {
                    if ((row && !want_row) || (!row && !want_col)) continue;
                    int64_t k = ks[ki];
                    uint64_t seed = 31 + (uint64_t)k;
                    void *xh = cb_random_array(t, A->ncols * k, &seed);
                    void *yh = malloc((size_t)(A->nrows * k) * es + es);
                    void *yc = malloc((size_t)(A->nrows * k) * es + es);
                    hisp_order o = row ? HISP_ORDER_ROW : HISP_ORDER_COL;
                    hisp_vector X = NULL, Y = NULL;
                    cb_hk(ctx, hisp_vector_create_columns(ctx, t, A->ncols, k, o, &X), "X");
                    cb_hk(ctx, hisp_vector_create_columns(ctx, t, A->nrows, k, o, &Y), "Y");
                    cb_hk(ctx, hisp_vector_write(X, xh), "X write");
                    timing th = time_hisp(ctx, M, X, Y, 0, so.warmup, so.repeat);
                    cb_hk(ctx, hisp_vector_read(Y, yh), "Y read");
                    hisp_vector_destroy(&X);
                    hisp_vector_destroy(&Y);
                    /* column 0 against the host product in double */
                    void *x0 = malloc((size_t)A->ncols * es + es);
                    double *ref = malloc((size_t)A->nrows * sizeof *ref + 8);
                    void *y0 = malloc((size_t)A->nrows * es + es);
                    for (int64_t i = 0; i < A->ncols; i++)
                        cb_put(t, x0, i, cb_at(t, xh, row ? i * k : i));
                    for (int64_t i = 0; i < A->nrows; i++)
                        cb_put(t, y0, i, cb_at(t, yh, row ? i * k : i));
                    cb_reference(A, HISP_OP_N, 1, x0, 0, NULL, ref);
                    double e0 = cb_rel_err(t, y0, ref, A->nrows);
                    timing tc = {NAN, NAN};
                    const char *alg = "-";
                    int ok = time_cusparse(&C, A, xh, k, row, so.warmup, so.repeat, yc, &tc, &alg);
                    double diff = ok ? rel_diff(t, yh, yc, A->nrows * k) : NAN;
                    double tol = t == HISP_F64 ? 1e-12 : 1e-5;
                    if (!(e0 <= tol) || (ok && !(diff <= tol))) fails++;
                    double ratio = tc.wall / th.wall;
                    if (ok && isfinite(ratio)) logsum += log(ratio), nlog++;
                    char line[512];
                    snprintf(line, sizeof line,
                             "| %s | %s | %lld | %s | %.4f | %.4f | %s | %.4f | %.4f | **%.2f** | "
                             "%.2f | %.1e |\n",
                             defs[mi].name, hisp_type_name(t), (long long)k, row ? "row" : "col",
                             th.wall, th.dev, alg, tc.wall, tc.dev, ratio,
                             (double)k * sv.dev / th.dev, diff);
                    printf("%s", line);
                    if (md) fprintf(md, "%s", line);
                    fflush(stdout);
                    free(xh), free(yh), free(yc), free(x0), free(ref), free(y0);
                }
            hisp_matrix_destroy(&M);
            cb_hk(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_REFERENCE, 0), "free device");
            cb_case_free(&cs);
        }
    double gm = nlog ? exp(logsum / nlog) : NAN;
    printf("\ncuSPARSE / hisp, wall per call, geometric mean over %d rows: %.2f\n", nlog, gm);
    if (md) {
        fprintf(md, "\ncuSPARSE / hisp, wall per call, geometric mean over %d rows: %.2f\n", nlog,
                gm);
        fclose(md);
    }
    if (fails) printf("FAIL: %d rows differ from cuSPARSE or the host product\n", fails);
    cb_cusp_close(&C);
    hisp_context_destroy(&ctx);
    return fails ? 1 : 0;
}
