/* Helpers shared by the CUDA benchmark programs (see cuda_bench.h). */
#include "cuda_bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cb_hk(hisp_context ctx, hisp_status s, const char *what)
{
    if (s == HISP_SUCCESS) return;
    hisp_error_info e = {0};
    if (hisp_context_last_error(ctx, &e)) {
    }
    fprintf(stderr, "%s: %s: %s\n", what, hisp_status_string(s), e.message ? e.message : "");
    exit(3);
}

int cb_cuda_context(hisp_context *ctx, hisp_device_info *info)
{
    if (hisp_context_create(ctx)) return 3;
    int ncuda = 0;
    cb_hk(*ctx, hisp_backend_device_count(*ctx, HISP_BACKEND_CUDA, &ncuda), "device count");
    if (!ncuda) {
        printf("no CUDA device: nothing to measure\n");
        hisp_context_destroy(ctx);
        return 3;
    }
    cb_hk(*ctx, hisp_backend_device_info(*ctx, HISP_BACKEND_CUDA, 0, info), "device info");
    cb_hk(*ctx, hisp_context_set_backend(*ctx, HISP_BACKEND_CUDA, 0), "set cuda");
    return 0;
}

/* ---- host reference (double accumulation) --------------------------------- */

double cb_at(hisp_type t, const void *a, int64_t i)
{
    return t == HISP_F32 ? (double)((const float *)a)[i] : ((const double *)a)[i];
}

void cb_put(hisp_type t, void *a, int64_t i, double v)
{
    if (t == HISP_F32)
        ((float *)a)[i] = (float)v;
    else
        ((double *)a)[i] = v;
}

/* ref = alpha*op(A)*x + beta*y0 (beta == 0: y0 not read); ref in double. */
void cb_reference(const cb_csr *A, hisp_op op, double alpha, const void *x, double beta,
                  const void *y0, double *ref)
{
    hisp_type t = A->type;
    if (op == HISP_OP_N) {
#pragma omp parallel for schedule(dynamic, 1024)
        for (int64_t i = 0; i < A->nrows; i++) {
            double s = 0;
            for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
                s += cb_at(t, A->val, k) * cb_at(t, x, A->colind[k]);
            ref[i] = alpha * s + (beta != 0 ? beta * cb_at(t, y0, i) : 0);
        }
    } else {
        for (int64_t j = 0; j < A->ncols; j++)
            ref[j] = beta != 0 ? beta * cb_at(t, y0, j) : 0;
        for (int64_t i = 0; i < A->nrows; i++) {
            double xi = alpha * cb_at(t, x, i);
            for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
                ref[A->colind[k]] += cb_at(t, A->val, k) * xi;
        }
    }
}

double cb_rel_err(hisp_type t, const void *y, const double *ref, int64_t n)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = cb_at(t, y, i) - ref[i];
        if (isnan(d)) return NAN;
        num += d * d;
        den += ref[i] * ref[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

uint64_t cb_rng_next(uint64_t *s)
{
    uint64_t x = *s ? *s : 0x9E3779B97F4A7C15ull;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

double cb_rng_uniform(uint64_t *s) /* [-1, 1) */
{
    return (double)(cb_rng_next(s) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

void *cb_random_array(hisp_type t, int64_t n, uint64_t *seed)
{
    void *a = malloc((size_t)(n + 1) * hisp_type_size(t));
    if (!a) {
        fprintf(stderr, "out of host memory\n");
        exit(3);
    }
    for (int64_t i = 0; i < n; i++)
        cb_put(t, a, i, cb_rng_uniform(seed));
    return a;
}

void cb_nan_fill(hisp_type t, void *a, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        cb_put(t, a, i, NAN);
}

int cb_cusp_open(cb_cusp *C)
{
    memset(C, 0, sizeof *C);
    CK(cudaSetDevice(0));
    CK(cudaStreamCreateWithFlags(&C->stream, cudaStreamNonBlocking));
    CKS(cusparseCreate(&C->h));
    CKS(cusparseSetStream(C->h, C->stream));
    CK(cudaEventCreate(&C->e0));
    CK(cudaEventCreate(&C->e1));
    C->ok = 1;
    int ver = 0;
    CKS(cusparseGetVersion(C->h, &ver));
    return ver;
}

void cb_cusp_close(cb_cusp *C)
{
    if (!C->ok) return;
    CKS(cusparseDestroy(C->h));
    CK(cudaEventDestroy(C->e0));
    CK(cudaEventDestroy(C->e1));
    CK(cudaStreamDestroy(C->stream));
    C->ok = 0;
}

/* ---- hisp runs --------------------------------------------------------------- */

/* Times op on the context's backend; returns the median and fills errors. */
void cb_hisp_run(hisp_context ctx, const cb_problem *P, hisp_op op, int warmup, int repeat,
                 double *ms, double *err, double *err2)
{
    const cb_csr *A = P->A;
    hisp_type t = A->type;
    int64_t xn = op == HISP_OP_N ? A->ncols : A->nrows, yn = op == HISP_OP_N ? A->nrows : A->ncols;
    size_t es = hisp_type_size(t);
    hisp_vector x = NULL, y = NULL;
    cb_hk(ctx, hisp_vector_create(ctx, t, xn, &x), "vector");
    cb_hk(ctx, hisp_vector_create(ctx, t, yn, &y), "vector");
    cb_hk(ctx, hisp_vector_write(x, op == HISP_OP_N ? P->x_n : P->x_t), "vector write");
    void *h = malloc((size_t)(yn + 1) * es);
    cb_nan_fill(t, h, yn); /* beta = 0 must not read y, and every entry must be written */
    cb_hk(ctx, hisp_vector_write(y, h), "vector write");
    double a1 = 1, b0 = 0, a2 = 1.5, b2 = -0.5;
    float fa1 = 1, fb0 = 0, fa2 = 1.5f, fb2 = -0.5f;
    const void *pa1 = t == HISP_F32 ? (const void *)&fa1 : (const void *)&a1;
    const void *pb0 = t == HISP_F32 ? (const void *)&fb0 : (const void *)&b0;
    const void *pa2 = t == HISP_F32 ? (const void *)&fa2 : (const void *)&a2;
    const void *pb2 = t == HISP_F32 ? (const void *)&fb2 : (const void *)&b2;
    cb_hk(ctx, hisp_spmv_timed(ctx, op, pa1, P->M, x, pb0, y, warmup, repeat, ms), "spmv_timed");
    cb_hk(ctx, hisp_vector_read(y, h), "vector read");
    *err = cb_rel_err(t, h, op == HISP_OP_N ? P->ref_n : P->ref_t, yn);
    if (err2) {
        cb_hk(ctx, hisp_vector_write(y, op == HISP_OP_N ? P->y0_n : P->y0_t), "vector write");
        cb_hk(ctx, hisp_spmv(ctx, op, pa2, P->M, x, pb2, y), "spmv");
        cb_hk(ctx, hisp_vector_read(y, h), "vector read");
        *err2 = cb_rel_err(t, h, op == HISP_OP_N ? P->ref2_n : P->ref2_t, yn);
    }
    free(h);
    hisp_vector_destroy(&x);
    hisp_vector_destroy(&y);
}

/* ---- cuSPARSE ---------------------------------------------------------------- */

void cb_cusparse_run(cb_cusp *C, const cb_problem *P, cusparseOperation_t opA,
                     cusparseSpMVAlg_t alg, int warmup, int repeat, double *ms, double *err)
{
    cb_cusparse_run_wall(C, P, opA, alg, warmup, repeat, ms, NULL, err);
}

/* cusparseSpMV with alg and op, alpha = 1, beta = 0; ms per run (events),
 * wall per run (host clock around the call and a stream synchronize) when
 * wall is not NULL, error. */
void cb_cusparse_run_wall(cb_cusp *C, const cb_problem *P, cusparseOperation_t opA,
                          cusparseSpMVAlg_t alg, int warmup, int repeat, double *ms, double *wall,
                          double *err)
{
    const cb_csr *A = P->A;
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
    for (int i = 0; wall && i < repeat; i++) {
        double t0 = bench_now_ms();
        CKS(cusparseSpMV(C->h, opA, pa, mA, vx, pb, vy, dt, alg, buf));
        CK(cudaStreamSynchronize(C->stream));
        wall[i] = bench_now_ms() - t0;
    }
    void *h = malloc((size_t)(yn + 1) * es);
    CK(cudaMemcpy(h, dy, (size_t)yn * es, cudaMemcpyDeviceToHost));
    *err = cb_rel_err(t, h, tr ? P->ref_t : P->ref_n, yn);
    free(h);
    CKS(cusparseDestroySpMat(mA));
    CKS(cusparseDestroyDnVec(vx));
    CKS(cusparseDestroyDnVec(vy));
    void *bufs[] = {drp, dci, dv, dx, dy, buf};
    for (int i = 0; i < 6; i++)
        if (bufs[i]) CK(cudaFree(bufs[i]));
}

int cb_find_opencl(hisp_context ctx, int want_gpu, char *name, size_t len)
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

void cb_add(bench_results *rs, const char *matrix, hisp_type t, const char *op, const char *impl,
            const char *dev, const cb_csr *A, const double *ms, int rep, double err, double copy_bw)
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

const bench_result *cb_find(const bench_results *rs, const char *m, const char *p, const char *op,
                            const char *impl)
{
    for (int i = 0; i < rs->n; i++)
        if (!strcmp(rs->v[i].matrix, m) && !strcmp(rs->v[i].precision, p) &&
            !strcmp(rs->v[i].op, op) && !strcmp(rs->v[i].impl, impl))
            return &rs->v[i];
    return NULL;
}

double cb_med(const bench_result *r)
{
    return r ? r->median_ms : NAN;
}

void cb_case_make(hisp_context ctx, const bench_matrix_def *def, hisp_type t, uint64_t seed,
                  cb_case *c)
{
    memset(c, 0, sizeof *c);
    cb_hk(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_REFERENCE, 0), "set ref");
    hisp_matrix M = NULL;
    cb_hk(ctx, hisp_matrix_generate(ctx, &def->gen, t, &M), "generate");
    hisp_matrix_info info;
    cb_hk(ctx, hisp_matrix_get_info(M, &info), "info");
    cb_csr *A = &c->A;
    A->type = t;
    A->nrows = info.nrows;
    A->ncols = info.ncols;
    A->nnz = info.nnz;
    cb_hk(ctx, hisp_matrix_host_arrays(M, &A->rowptr, NULL, &A->colind, &A->val), "host arrays");
    void *xn = cb_random_array(t, A->ncols, &seed), *xt = cb_random_array(t, A->nrows, &seed);
    void *y0n = cb_random_array(t, A->nrows, &seed), *y0t = cb_random_array(t, A->ncols, &seed);
    double *rn = malloc((size_t)(A->nrows + 1) * 8), *rt = malloc((size_t)(A->ncols + 1) * 8);
    double *r2n = malloc((size_t)(A->nrows + 1) * 8), *r2t = malloc((size_t)(A->ncols + 1) * 8);
    if (!rn || !rt || !r2n || !r2t) {
        fprintf(stderr, "out of host memory\n");
        exit(3);
    }
    cb_reference(A, HISP_OP_N, 1, xn, 0, NULL, rn);
    cb_reference(A, HISP_OP_T, 1, xt, 0, NULL, rt);
    cb_reference(A, HISP_OP_N, 1.5, xn, -0.5, y0n, r2n);
    cb_reference(A, HISP_OP_T, 1.5, xt, -0.5, y0t, r2t);
    c->P = (cb_problem){A, M, xn, xt, y0n, y0t, rn, rt, r2n, r2t};
}

void cb_case_free(cb_case *c)
{
    hisp_matrix_destroy(&c->P.M);
    const void *f[] = {c->P.x_n,   c->P.x_t,   c->P.y0_n,   c->P.y0_t,
                       c->P.ref_n, c->P.ref_t, c->P.ref2_n, c->P.ref2_t};
    for (int k = 0; k < 8; k++)
        free((void *)f[k]);
    memset(c, 0, sizeof *c);
}
