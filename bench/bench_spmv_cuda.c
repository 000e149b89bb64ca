/* GPU benchmark: hisp CSR SpMV (CUDA backend, OpenCL backend on the GPU and
 * on the CPU) against cuSPARSE cusparseSpMV (CSR_ALG1, CSR_ALG2, opA = T) on
 * the generator suite.
 *
 *   bench_spmv_cuda [--scale gpu|medium|small] [--matrices a,b] [--precision f64|f32|both]
 *                   [--repeat N] [--warmup N] [--cpu-repeat N] [--no-opencl] [--no-pocl]
 *                   [--csv FILE] [--md FILE] [--summary FILE]
 *   bench_spmv_cuda --selftest      correctness sweep of the CUDA backend (for
 *                                   compute-sanitizer); exit status 1 on a failure
 *
 * Times: medians of `repeat` runs after warm-up; CUDA events for cuSPARSE,
 * hisp_spmv_timed (the backend's own device events) for hisp. Timed runs use
 * alpha = 1, beta = 0 (y = A x, y not read); a second check uses alpha = 1.5,
 * beta = -0.5. Every result is compared with a double-precision host
 * reference (relative 2-norm error). Byte model: bench_csr_spmv_bytes with
 * 32-bit row pointers (all implementations here use them), i.e. rowptr +
 * colind + values + x read once + y written once. */
#include "common.h"

#include <cuda_runtime_api.h>
#define DISABLE_CUSPARSE_DEPRECATED /* the header marks its legacy API */
#include <cusparse.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(3);                                                                               \
        }                                                                                          \
    } while (0)
#define CKS(call)                                                                                  \
    do {                                                                                           \
        cusparseStatus_t e_ = (call);                                                              \
        if (e_ != CUSPARSE_STATUS_SUCCESS) {                                                       \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                          \
                    cusparseGetErrorString(e_));                                                   \
            exit(3);                                                                               \
        }                                                                                          \
    } while (0)

static void hk(hisp_context ctx, hisp_status s, const char *what)
{
    if (s == HISP_SUCCESS) return;
    hisp_error_info e = {0};
    if (hisp_context_last_error(ctx, &e)) {
    }
    fprintf(stderr, "%s: %s: %s\n", what, hisp_status_string(s), e.message ? e.message : "");
    exit(3);
}

/* ---- host reference (double accumulation) --------------------------------- */

typedef struct {
    hisp_type type;
    int64_t nrows, ncols, nnz;
    const int64_t *rowptr;
    const int32_t *colind;
    const void *val;
} csr_host;

static double at(hisp_type t, const void *a, int64_t i)
{
    return t == HISP_F32 ? (double)((const float *)a)[i] : ((const double *)a)[i];
}

static void put(hisp_type t, void *a, int64_t i, double v)
{
    if (t == HISP_F32)
        ((float *)a)[i] = (float)v;
    else
        ((double *)a)[i] = v;
}

/* ref = alpha*op(A)*x + beta*y0 (beta == 0: y0 not read); ref in double. */
static void reference(const csr_host *A, hisp_op op, double alpha, const void *x, double beta,
                      const void *y0, double *ref)
{
    hisp_type t = A->type;
    if (op == HISP_OP_N) {
#pragma omp parallel for schedule(dynamic, 1024)
        for (int64_t i = 0; i < A->nrows; i++) {
            double s = 0;
            for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
                s += at(t, A->val, k) * at(t, x, A->colind[k]);
            ref[i] = alpha * s + (beta != 0 ? beta * at(t, y0, i) : 0);
        }
    } else {
        for (int64_t j = 0; j < A->ncols; j++)
            ref[j] = beta != 0 ? beta * at(t, y0, j) : 0;
        for (int64_t i = 0; i < A->nrows; i++) {
            double xi = alpha * at(t, x, i);
            for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
                ref[A->colind[k]] += at(t, A->val, k) * xi;
        }
    }
}

static double rel_err(hisp_type t, const void *y, const double *ref, int64_t n)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = at(t, y, i) - ref[i];
        if (isnan(d)) return NAN;
        num += d * d;
        den += ref[i] * ref[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s ? *s : 0x9E3779B97F4A7C15ull;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

static double rng_uniform(uint64_t *s) /* [-1, 1) */
{
    return (double)(rng_next(s) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

static void *random_array(hisp_type t, int64_t n, uint64_t *seed)
{
    void *a = malloc((size_t)(n + 1) * hisp_type_size(t));
    if (!a) {
        fprintf(stderr, "out of host memory\n");
        exit(3);
    }
    for (int64_t i = 0; i < n; i++)
        put(t, a, i, rng_uniform(seed));
    return a;
}

static void nan_fill(hisp_type t, void *a, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        put(t, a, i, NAN);
}

/* ---- hisp runs --------------------------------------------------------------- */

typedef struct {
    const csr_host *A;
    hisp_matrix M;
    const void *x_n, *x_t, *y0_n, *y0_t; /* inputs (x for op N has ncols entries) */
    const double *ref_n, *ref_t;         /* alpha = 1, beta = 0 */
    const double *ref2_n, *ref2_t;       /* alpha = 1.5, beta = -0.5, y0 */
} problem;

/* Times op on the context's backend; returns the median and fills errors. */
static void hisp_run(hisp_context ctx, const problem *P, hisp_op op, int warmup, int repeat,
                     double *ms, double *err, double *err2)
{
    const csr_host *A = P->A;
    hisp_type t = A->type;
    int64_t xn = op == HISP_OP_N ? A->ncols : A->nrows, yn = op == HISP_OP_N ? A->nrows : A->ncols;
    size_t es = hisp_type_size(t);
    hisp_vector x = NULL, y = NULL;
    hk(ctx, hisp_vector_create(ctx, t, xn, &x), "vector");
    hk(ctx, hisp_vector_create(ctx, t, yn, &y), "vector");
    hk(ctx, hisp_vector_write(x, op == HISP_OP_N ? P->x_n : P->x_t), "vector write");
    void *h = malloc((size_t)(yn + 1) * es);
    nan_fill(t, h, yn); /* beta = 0 must not read y, and every entry must be written */
    hk(ctx, hisp_vector_write(y, h), "vector write");
    double a1 = 1, b0 = 0, a2 = 1.5, b2 = -0.5;
    float fa1 = 1, fb0 = 0, fa2 = 1.5f, fb2 = -0.5f;
    const void *pa1 = t == HISP_F32 ? (const void *)&fa1 : (const void *)&a1;
    const void *pb0 = t == HISP_F32 ? (const void *)&fb0 : (const void *)&b0;
    const void *pa2 = t == HISP_F32 ? (const void *)&fa2 : (const void *)&a2;
    const void *pb2 = t == HISP_F32 ? (const void *)&fb2 : (const void *)&b2;
    hk(ctx, hisp_spmv_timed(ctx, op, pa1, P->M, x, pb0, y, warmup, repeat, ms), "spmv_timed");
    hk(ctx, hisp_vector_read(y, h), "vector read");
    *err = rel_err(t, h, op == HISP_OP_N ? P->ref_n : P->ref_t, yn);
    if (err2) {
        hk(ctx, hisp_vector_write(y, op == HISP_OP_N ? P->y0_n : P->y0_t), "vector write");
        hk(ctx, hisp_spmv(ctx, op, pa2, P->M, x, pb2, y), "spmv");
        hk(ctx, hisp_vector_read(y, h), "vector read");
        *err2 = rel_err(t, h, op == HISP_OP_N ? P->ref2_n : P->ref2_t, yn);
    }
    free(h);
    hisp_vector_destroy(&x);
    hisp_vector_destroy(&y);
}

/* ---- cuSPARSE ---------------------------------------------------------------- */

typedef struct {
    int ok;
    cudaStream_t stream;
    cusparseHandle_t h;
    cudaEvent_t e0, e1;
} cusp;

/* cusparseSpMV with alg and op, alpha = 1, beta = 0; median ms, error. */
static void cusparse_run(cusp *C, const problem *P, cusparseOperation_t opA, cusparseSpMVAlg_t alg,
                         int warmup, int repeat, double *ms, double *err)
{
    const csr_host *A = P->A;
    hisp_type t = A->type;
    size_t es = hisp_type_size(t);
    cudaDataType dt = t == HISP_F32 ? CUDA_R_32F : CUDA_R_64F;
    int tr = opA != CUSPARSE_OPERATION_NON_TRANSPOSE;
    int64_t xn = tr ? A->nrows : A->ncols, yn = tr ? A->ncols : A->nrows;
    int32_t *rp = malloc((size_t)(A->nrows + 1) * sizeof *rp);
    for (int64_t i = 0; i <= A->nrows; i++)
        rp[i] = (int32_t)A->rowptr[i];
    void *drp, *dci, *dv, *dx, *dy, *buf = NULL;
    CK(cudaMalloc(&drp, (size_t)(A->nrows + 1) * 4));
    CK(cudaMalloc(&dci, (size_t)A->nnz * 4 + 4));
    CK(cudaMalloc(&dv, (size_t)A->nnz * es + es));
    CK(cudaMalloc(&dx, (size_t)xn * es + es));
    CK(cudaMalloc(&dy, (size_t)yn * es + es));
    CK(cudaMemcpy(drp, rp, (size_t)(A->nrows + 1) * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dci, A->colind, (size_t)A->nnz * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dv, A->val, (size_t)A->nnz * es, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dx, tr ? P->x_t : P->x_n, (size_t)xn * es, cudaMemcpyHostToDevice));
    CK(cudaMemset(dy, 0xff, (size_t)yn * es)); /* NaN */
    free(rp);
    cusparseSpMatDescr_t mA;
    cusparseDnVecDescr_t vx, vy;
    CKS(cusparseCreateCsr(&mA, A->nrows, A->ncols, A->nnz, drp, dci, dv, CUSPARSE_INDEX_32I,
                          CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, dt));
    CKS(cusparseCreateDnVec(&vx, xn, dx, dt));
    CKS(cusparseCreateDnVec(&vy, yn, dy, dt));
    double a = 1, b = 0;
    float fa = 1, fb = 0;
    const void *pa = t == HISP_F32 ? (const void *)&fa : (const void *)&a;
    const void *pb = t == HISP_F32 ? (const void *)&fb : (const void *)&b;
    size_t bs = 0;
    CKS(cusparseSpMV_bufferSize(C->h, opA, pa, mA, vx, pb, vy, dt, alg, &bs));
    if (bs) CK(cudaMalloc(&buf, bs));
    CKS(cusparseSpMV_preprocess(C->h, opA, pa, mA, vx, pb, vy, dt, alg, buf));
    for (int i = 0; i < (warmup > 0 ? warmup : 1); i++)
        CKS(cusparseSpMV(C->h, opA, pa, mA, vx, pb, vy, dt, alg, buf));
    CK(cudaStreamSynchronize(C->stream));
    for (int i = 0; i < repeat; i++) {
        float f = 0;
        CK(cudaEventRecord(C->e0, C->stream));
        CKS(cusparseSpMV(C->h, opA, pa, mA, vx, pb, vy, dt, alg, buf));
        CK(cudaEventRecord(C->e1, C->stream));
        CK(cudaEventSynchronize(C->e1));
        CK(cudaEventElapsedTime(&f, C->e0, C->e1));
        ms[i] = f;
    }
    void *h = malloc((size_t)(yn + 1) * es);
    CK(cudaMemcpy(h, dy, (size_t)yn * es, cudaMemcpyDeviceToHost));
    *err = rel_err(t, h, tr ? P->ref_t : P->ref_n, yn);
    free(h);
    CKS(cusparseDestroySpMat(mA));
    CKS(cusparseDestroyDnVec(vx));
    CKS(cusparseDestroyDnVec(vy));
    void *bufs[] = {drp, dci, dv, dx, dy, buf};
    for (int i = 0; i < 6; i++)
        if (bufs[i]) CK(cudaFree(bufs[i]));
}

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
        uint64_t r = rng_next(seed) % 100;
        int64_t l;
        if (which == 6) /* long rows: around CAP, SPLIT and several chunks */
            l = (int64_t[]){
                0, 1, 2047, 2048, 2049, 4095, 4096, 4097, 8192, 8193, 20000, 70000}[i % 12];
        else if (which == 7) /* power law */
            l = r < 30   ? 0
                : r < 90 ? (int64_t)(rng_next(seed) % 9)
                         : (int64_t)(rng_next(seed) % 3000);
        else
            l = r < 10 ? 0 : (int64_t)(rng_next(seed) % (uint64_t)(2 * (which + 3)));
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
            ci[k] = (int32_t)((j + (int64_t)(rng_next(seed) % 4 == 0 ? 0 : i)) % *n);
            put(t, v, k, rng_uniform(seed));
        }
    /* duplicates are summed by the conversion; fine for a test */
    hisp_matrix A = NULL;
    hk(ctx, hisp_matrix_create_coo(ctx, t, *m, *n, k, ri, ci, v, &A), "create_coo");
    hk(ctx, hisp_matrix_convert(A, HISP_FORMAT_CSR), "convert");
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
    hk(ctx, hisp_backend_device_count(ctx, HISP_BACKEND_CUDA, &n), "device count");
    if (n == 0) {
        hisp_error_info e = {0};
        if (hisp_context_last_error(ctx, &e)) {
        }
        printf("selftest skipped: %s\n", e.message ? e.message : "no CUDA device");
        hisp_context_destroy(&ctx);
        return 0;
    }
    hk(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_CUDA, 0), "set backend");
    uint64_t seed = 12345;
    int fails = 0, runs = 0;
    /* mode 0: 32-bit row pointers; 1: 64-bit; 2: op = T by atomics, not
     * through the transposed copy */
    for (int mode = 0; mode < 3; mode++) {
        int wide = mode == 1;
        setenv("HISP_CUDA_WIDE_PTR", wide ? "1" : "0", 1);
        setenv("HISP_CUDA_T", mode == 2 ? "atomic" : "transpose", 1);
        for (int ti = 0; ti < 2; ti++) {
            hisp_type t = ti ? HISP_F64 : HISP_F32;
            double tol = t == HISP_F32 ? 2e-5 : 1e-12;
            for (int which = 0; which < 8; which++) {
                int64_t m, nc;
                hisp_matrix M = selftest_matrix(ctx, t, which, &seed, &m, &nc);
                const int64_t *rp;
                const int32_t *ci;
                const void *v;
                hk(ctx, hisp_matrix_host_arrays(M, &rp, NULL, &ci, &v), "host arrays");
                hisp_matrix_info info;
                hk(ctx, hisp_matrix_get_info(M, &info), "info");
                csr_host A = {t, m, nc, info.nnz, rp, ci, v};
                for (int op = 0; op < 2; op++)
                    for (int bi = 0; bi < 3; bi++) {
                        double alpha = bi == 2 ? 0.75 : 1.5, beta = bi == 0   ? 0
                                                                    : bi == 1 ? -0.5
                                                                              : 1;
                        int64_t xn = op ? m : nc, yn = op ? nc : m;
                        void *x = random_array(t, xn, &seed), *y0 = random_array(t, yn, &seed);
                        void *yh = malloc((size_t)(yn + 1) * hisp_type_size(t));
                        double *ref = malloc((size_t)(yn + 1) * sizeof *ref);
                        reference(&A, (hisp_op)op, alpha, x, beta, y0, ref);
                        hisp_vector vx = NULL, vy = NULL;
                        hk(ctx, hisp_vector_create(ctx, t, xn, &vx), "vec");
                        hk(ctx, hisp_vector_create(ctx, t, yn, &vy), "vec");
                        hk(ctx, hisp_vector_write(vx, x), "write");
                        if (beta == 0) nan_fill(t, y0, yn);
                        hk(ctx, hisp_vector_write(vy, y0), "write");
                        float fa = (float)alpha, fb = (float)beta;
                        const void *pa = t == HISP_F32 ? (void *)&fa : (void *)&alpha;
                        const void *pb = t == HISP_F32 ? (void *)&fb : (void *)&beta;
                        hk(ctx, hisp_spmv(ctx, (hisp_op)op, pa, M, vx, pb, vy), "spmv");
                        hk(ctx, hisp_vector_read(vy, yh), "read");
                        double e = rel_err(t, yh, ref, yn);
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
    unsetenv("HISP_CUDA_WIDE_PTR");
    unsetenv("HISP_CUDA_T");
    hisp_context_destroy(&ctx);
    printf("selftest: %d of %d CUDA SpMV runs correct (f32/f64, N/T, beta 0/-0.5/1, "
           "32/64-bit row pointers, T by transpose and by atomics)\n",
           runs - fails, runs);
    return fails ? 1 : 0;
}

/* ---- main -------------------------------------------------------------------- */

static int find_opencl(hisp_context ctx, int want_gpu, char *name, size_t len)
{
    int n = 0;
    if (hisp_backend_device_count(ctx, HISP_BACKEND_OPENCL, &n) != HISP_SUCCESS) return -1;
    for (int i = 0; i < n; i++) {
        hisp_device_info info;
        if (hisp_backend_device_info(ctx, HISP_BACKEND_OPENCL, i, &info) != HISP_SUCCESS) continue;
        if ((want_gpu && info.is_gpu) || (!want_gpu && info.is_cpu)) {
            snprintf(name, len, "%.40s: %.50s", info.platform, info.name);
            return i;
        }
    }
    return -1;
}

static void add(bench_results *rs, const char *matrix, hisp_type t, const char *op,
                const char *impl, const char *dev, const csr_host *A, const double *ms, int rep,
                double err, double copy_bw)
{
    bench_result r;
    memset(&r, 0, sizeof r);
    snprintf(r.matrix, sizeof r.matrix, "%s", matrix);
    snprintf(r.precision, sizeof r.precision, "%s", hisp_type_name(t));
    snprintf(r.op, sizeof r.op, "%s", op);
    snprintf(r.impl, sizeof r.impl, "%s", impl);
    snprintf(r.device, sizeof r.device, "%s", dev);
    r.rows = A->nrows;
    r.cols = A->ncols;
    r.nnz = A->nnz;
    r.rel_error = err;
    bench_result_finish(&r, ms, rep, 4, hisp_type_size(t), 0, copy_bw);
    bench_results_add(rs, &r);
    printf("  %-4s %s %-16s %9.4f ms %8.1f GFLOP/s %8.1f GB/s %5.1f%% of copy  err %.1e\n",
           r.precision, r.op, r.impl, r.median_ms, r.gflops, r.gbs, 100 * r.bw_fraction,
           r.rel_error);
    fflush(stdout);
}

static const bench_result *find(const bench_results *rs, const char *m, const char *p,
                                const char *op, const char *impl)
{
    for (int i = 0; i < rs->n; i++)
        if (!strcmp(rs->v[i].matrix, m) && !strcmp(rs->v[i].precision, p) &&
            !strcmp(rs->v[i].op, op) && !strcmp(rs->v[i].impl, impl))
            return &rs->v[i];
    return NULL;
}

static double med(const bench_result *r)
{
    return r ? r->median_ms : NAN;
}

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
        double hn = r->median_ms, a1 = med(find(rs, m, p, "N", "cusparse-alg1")),
               a2 = med(find(rs, m, p, "N", "cusparse-alg2")),
               ht = med(find(rs, m, p, "T", "hisp-cuda")),
               ct = med(find(rs, m, p, "T", "cusparse")),
               ta = med(find(rs, m, p, "T", "hisp-cuda-atomic")),
               on = med(find(rs, m, p, "N", "hisp-opencl-gpu")),
               ot = med(find(rs, m, p, "T", "hisp-opencl-gpu")),
               pn = med(find(rs, m, p, "N", "hisp-opencl-cpu"));
        double best = a1 < a2 || isnan(a2) ? a1 : a2;
        fprintf(f,
                "| %s | %s | %lld | %lld | %.4f | %.4f | %.4f | **%.2f** | %.4f | %.4f | **%.2f** "
                "| %.4f "
                "| %.0f (%.0f%%) | %.4f | %.4f | **%.2f** | **%.2f** | %.2f |\n",
                m, p, (long long)r->rows, (long long)r->nnz, hn, a1, a2, hn / best, ht, ct, ht / ct,
                ta, r->gbs, 100 * r->bw_fraction, on, ot, on / hn, ot / ht, pn);
    }
}

int main(int argc, char **argv)
{
    const char *scale_name = "gpu", *list = NULL, *prec = "both", *csv = NULL, *md = NULL,
               *sum = NULL;
    int repeat = 50, warmup = 5, cpu_repeat = 5, use_ocl = 1, use_pocl = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--selftest")) return selftest();
#define OPT(name, stmt)                                                                            \
    if (!strcmp(a, name) && v) {                                                                   \
        stmt;                                                                                      \
        i++;                                                                                       \
        continue;                                                                                  \
    }
        OPT("--scale", scale_name = v);
        OPT("--matrices", list = v);
        OPT("--precision", prec = v);
        OPT("--repeat", repeat = atoi(v));
        OPT("--warmup", warmup = atoi(v));
        OPT("--cpu-repeat", cpu_repeat = atoi(v));
        OPT("--csv", csv = v);
        OPT("--md", md = v);
        OPT("--summary", sum = v);
        if (!strcmp(a, "--no-opencl")) {
            use_ocl = 0;
            continue;
        }
        if (!strcmp(a, "--no-pocl")) {
            use_pocl = 0;
            continue;
        }
        fprintf(stderr,
                "usage: %s [--selftest] [--scale gpu|medium|small] [--matrices a,b] "
                "[--precision f64|f32|both] [--repeat N] [--warmup N] [--cpu-repeat N] "
                "[--no-opencl] [--no-pocl] [--csv F] [--md F] [--summary F]\n",
                argv[0]);
        return 1;
    }
    if (repeat < 1 || cpu_repeat < 1 || warmup < 0) return 1;
    bench_scale scale;
    if (bench_scale_from_name(scale_name, &scale)) {
        fprintf(stderr, "unknown scale %s\n", scale_name);
        return 1;
    }
    bench_matrix_def defs[BENCH_SUITE_MAX];
    int nm = bench_suite_filter(defs, bench_suite(scale, defs), list);
    if (nm < 0) return 1;

    hisp_context ctx = NULL;
    if (hisp_context_create(&ctx)) return 3;
    int ncuda = 0;
    hk(ctx, hisp_backend_device_count(ctx, HISP_BACKEND_CUDA, &ncuda), "device count");
    char cuda_name[300] = "";
    if (ncuda == 0) {
        hisp_error_info e = {0};
        if (hisp_context_last_error(ctx, &e)) {
        }
        printf("CUDA: %s (CUDA and cuSPARSE columns skipped)\n", e.message ? e.message : "");
    } else {
        hisp_device_info info;
        hk(ctx, hisp_backend_device_info(ctx, HISP_BACKEND_CUDA, 0, &info), "device info");
        snprintf(cuda_name, sizeof cuda_name, "%.100s", info.name);
        printf("CUDA device 0: %s, %s, %d SMs, %.1f GiB\n", info.name, info.platform,
               info.compute_units, (double)info.global_mem / (1 << 30));
    }
    char ocl_gpu[128] = "", ocl_cpu[128] = "";
    int ocl_gpu_dev = use_ocl ? find_opencl(ctx, 1, ocl_gpu, sizeof ocl_gpu) : -1;
    int ocl_cpu_dev = use_pocl ? find_opencl(ctx, 0, ocl_cpu, sizeof ocl_cpu) : -1;
    printf("OpenCL GPU: %s\nOpenCL CPU: %s\n", ocl_gpu_dev >= 0 ? ocl_gpu : "none",
           ocl_cpu_dev >= 0 ? ocl_cpu : "none");

    /* copy bandwidths: GPU device-to-device (hisp CUDA backend), host memcpy */
    double gpu_bw = 0, host_bw = bench_host_copy_bandwidth((size_t)512 << 20, 5);
    cusp C = {0};
    if (ncuda) {
        hk(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_CUDA, 0), "set cuda");
        hk(ctx, hisp_copy_bandwidth(ctx, (size_t)1 << 30, 20, &gpu_bw), "copy bandwidth");
        CK(cudaSetDevice(0));
        CK(cudaStreamCreateWithFlags(&C.stream, cudaStreamNonBlocking));
        CKS(cusparseCreate(&C.h));
        CKS(cusparseSetStream(C.h, C.stream));
        CK(cudaEventCreate(&C.e0));
        CK(cudaEventCreate(&C.e1));
        C.ok = 1;
        int ver = 0;
        CKS(cusparseGetVersion(C.h, &ver));
        printf("cuSPARSE %d.%d.%d\n", ver / 1000, (ver % 1000) / 100, ver % 100);
    }
    printf("copy bandwidth (read+write): GPU D2D %.0f GB/s, host memcpy %.1f GB/s\n", gpu_bw * 1e-9,
           host_bw * 1e-9);

    bench_results rs = {0};
    double *ms = malloc((size_t)(repeat > cpu_repeat ? repeat : cpu_repeat) * sizeof *ms);
    for (int mi = 0; mi < nm; mi++)
        for (int ti = 0; ti < 2; ti++) {
            hisp_type t = ti == 0 ? HISP_F64 : HISP_F32;
            if (strcmp(prec, "both") && strcmp(prec, hisp_type_name(t))) continue;
            const char *name = defs[mi].name;
            double t0 = bench_now_ms();
            hk(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_REFERENCE, 0), "set ref");
            hisp_matrix M = NULL;
            hk(ctx, hisp_matrix_generate(ctx, &defs[mi].gen, t, &M), "generate");
            const int64_t *rp;
            const int32_t *ci;
            const void *v;
            hisp_matrix_info info;
            hk(ctx, hisp_matrix_get_info(M, &info), "info");
            hk(ctx, hisp_matrix_host_arrays(M, &rp, NULL, &ci, &v), "host arrays");
            csr_host A = {t, info.nrows, info.ncols, info.nnz, rp, ci, v};
            uint64_t seed = 977 + (uint64_t)mi;
            void *xn = random_array(t, A.ncols, &seed), *xt = random_array(t, A.nrows, &seed);
            void *y0n = random_array(t, A.nrows, &seed), *y0t = random_array(t, A.ncols, &seed);
            double *rn = malloc((size_t)(A.nrows + 1) * 8), *rt = malloc((size_t)(A.ncols + 1) * 8);
            double *r2n = malloc((size_t)(A.nrows + 1) * 8),
                   *r2t = malloc((size_t)(A.ncols + 1) * 8);
            reference(&A, HISP_OP_N, 1, xn, 0, NULL, rn);
            reference(&A, HISP_OP_T, 1, xt, 0, NULL, rt);
            reference(&A, HISP_OP_N, 1.5, xn, -0.5, y0n, r2n);
            reference(&A, HISP_OP_T, 1.5, xt, -0.5, y0t, r2t);
            int64_t lmax = 0;
            for (int64_t i = 0; i < A.nrows; i++)
                if (rp[i + 1] - rp[i] > lmax) lmax = rp[i + 1] - rp[i];
            printf("%s %s: %lld x %lld, %lld nnz (mean %.1f, max %lld per row), generated and "
                   "reference in %.1f s\n",
                   name, hisp_type_name(t), (long long)A.nrows, (long long)A.ncols,
                   (long long)A.nnz, (double)A.nnz / (double)(A.nrows ? A.nrows : 1),
                   (long long)lmax, (bench_now_ms() - t0) * 1e-3);
            fflush(stdout);
            problem P = {&A, M, xn, xt, y0n, y0t, rn, rt, r2n, r2t};
            double e = 0, e2 = 0;
            if (ncuda) {
                hk(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_CUDA, 0), "set cuda");
                hisp_run(ctx, &P, HISP_OP_N, warmup, repeat, ms, &e, &e2);
                add(&rs, name, t, "N", "hisp-cuda", cuda_name, &A, ms, repeat, e, gpu_bw);
                printf("       (alpha 1.5, beta -0.5: rel. error %.1e)\n", e2);
                double t1 = bench_now_ms();
                hisp_run(ctx, &P, HISP_OP_T, 0, 1, ms, &e, NULL);
                printf("       (first op = T call, transposed copy built: %.1f ms host time)\n",
                       bench_now_ms() - t1);
                hisp_run(ctx, &P, HISP_OP_T, warmup, repeat, ms, &e, &e2);
                add(&rs, name, t, "T", "hisp-cuda", cuda_name, &A, ms, repeat, e, gpu_bw);
                printf("       (alpha 1.5, beta -0.5: rel. error %.1e)\n", e2);
                /* op = T by atomics (what runs when the transposed copy does not fit) */
                setenv("HISP_CUDA_T", "atomic", 1);
                hk(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_REFERENCE, 0), "set ref");
                hk(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_CUDA, 0), "set cuda");
                hisp_run(ctx, &P, HISP_OP_T, warmup, repeat, ms, &e, &e2);
                add(&rs, name, t, "T", "hisp-cuda-atomic", cuda_name, &A, ms, repeat, e, gpu_bw);
                printf("       (alpha 1.5, beta -0.5: rel. error %.1e)\n", e2);
                unsetenv("HISP_CUDA_T");
                /* free the hisp copy before cuSPARSE's own */
                hk(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_REFERENCE, 0), "set ref");
                cusparse_run(&C, &P, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_SPMV_CSR_ALG1,
                             warmup, repeat, ms, &e);
                add(&rs, name, t, "N", "cusparse-alg1", cuda_name, &A, ms, repeat, e, gpu_bw);
                cusparse_run(&C, &P, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_SPMV_CSR_ALG2,
                             warmup, repeat, ms, &e);
                add(&rs, name, t, "N", "cusparse-alg2", cuda_name, &A, ms, repeat, e, gpu_bw);
                cusparse_run(&C, &P, CUSPARSE_OPERATION_TRANSPOSE, CUSPARSE_SPMV_ALG_DEFAULT,
                             warmup, repeat, ms, &e);
                add(&rs, name, t, "T", "cusparse", cuda_name, &A, ms, repeat, e, gpu_bw);
            }
            if (ocl_gpu_dev >= 0) {
                hk(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_OPENCL, ocl_gpu_dev), "set cl");
                hisp_run(ctx, &P, HISP_OP_N, warmup, repeat, ms, &e, NULL);
                add(&rs, name, t, "N", "hisp-opencl-gpu", ocl_gpu, &A, ms, repeat, e, gpu_bw);
                hisp_run(ctx, &P, HISP_OP_T, warmup, repeat, ms, &e, NULL);
                add(&rs, name, t, "T", "hisp-opencl-gpu", ocl_gpu, &A, ms, repeat, e, gpu_bw);
            }
            if (ocl_cpu_dev >= 0) {
                hk(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_OPENCL, ocl_cpu_dev), "set cl");
                hisp_run(ctx, &P, HISP_OP_N, 1, cpu_repeat, ms, &e, NULL);
                add(&rs, name, t, "N", "hisp-opencl-cpu", ocl_cpu, &A, ms, cpu_repeat, e, 0);
            }
            hk(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_REFERENCE, 0), "set ref");
            hisp_matrix_destroy(&M);
            free(xn);
            free(xt);
            free(y0n);
            free(y0t);
            free(rn);
            free(rt);
            free(r2n);
            free(r2t);
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
    if (C.ok) {
        CKS(cusparseDestroy(C.h));
        CK(cudaEventDestroy(C.e0));
        CK(cudaEventDestroy(C.e1));
        CK(cudaStreamDestroy(C.stream));
    }
    hisp_context_destroy(&ctx);
    return 0;
}
