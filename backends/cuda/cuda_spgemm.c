/* C = A*B by cuSPARSE's generic SpGEMM (the spgemm=cusparse option of
 * hisp_matrix_multiply, a yardstick inside hisp): the operands' 64-bit row
 * pointers narrowed to cuSPARSE's 32-bit ones, ALG1 as CuPy calls it, ALG3
 * (chunks of a fifth of the products) where ALG1 lacks the memory; C's
 * pointers widened again, its arrays cudaMalloc'd for the matrix that
 * keeps them. */
#include "cuda_dl.h"
#include "cuda_err.h"
#include "cuda_hisparse.h"
#include "cuda_msrep.h"

#include <stdint.h>
#include <string.h>

cudaError_t hisp_cuda_launch_widen(const int32_t *s, int64_t n, int64_t *d, cudaStream_t stream);

typedef struct {
    const hisp_cuda_cusparse_fns *cs;
    cusparseHandle_t h;
    cusparseSpMatDescr_t a, b, c;
    cusparseSpGEMMDescr_t g;
    void *aptr, *bptr, *cptr32, *w1, *w2, *w3;
    cudaStream_t st;
} vjob;

static void vjob_free(vjob *j)
{
    const hisp_cuda_cusparse_fns *cs = j->cs;
    if (j->g) (void)cs->cusparseSpGEMM_destroyDescr(j->g);
    cusparseSpMatDescr_t d[3] = {j->a, j->b, j->c};
    for (int i = 0; i < 3; i++)
        if (d[i]) (void)cs->cusparseDestroySpMat(d[i]);
    if (j->h) (void)cs->cusparseDestroy(j->h);
    void *b[6] = {j->aptr, j->bptr, j->cptr32, j->w1, j->w2, j->w3};
    for (int i = 0; i < 6; i++)
        if (b[i]) (void)cudaFree(b[i]);
    (void)cudaGetLastError();
}

static hisp_status sp_check(hisp_context ctx, const vjob *j, cusparseStatus_t e, const char *what)
{
    return e == CUSPARSE_STATUS_SUCCESS ? HISP_SUCCESS : hisp_cuda_sp_fail(ctx, j->cs, e, what);
}

static hisp_status cu_check(hisp_context ctx, cudaError_t e, const char *what)
{
    return e == cudaSuccess ? HISP_SUCCESS : hisp_cuda_fail(ctx, e, what);
}

/* X's CSR descriptor over its values and columns, its pointers narrowed
 * into *p32. */
static hisp_status descr(hisp_context ctx, vjob *j, const hispi_dcsr *x, cudaDataType dt,
                         void **p32, cusparseSpMatDescr_t *d)
{
    size_t np1 = (size_t)x->nrows + 1;
    HISPI_TRY(cu_check(ctx, cudaMalloc(p32, np1 * 4), "cudaMalloc"));
    HISPI_TRY(cu_check(
        ctx, hisp_cuda_launch_local_ptr(x->rowptr, (int64_t)np1, 0, x->nnz, 0, *p32, j->st),
        "narrowing row pointers"));
    return sp_check(ctx, j,
                    j->cs->cusparseCreateCsr(d, x->nrows, x->ncols, x->nnz, *p32, (void *)x->colind,
                                             (void *)x->val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                             CUSPARSE_INDEX_BASE_ZERO, dt),
                    "cusparseCreateCsr");
}

/* The product by algorithm alg up to C's size (work estimation, memory
 * estimate for ALG3, compute). */
static cusparseStatus_t compute(vjob *j, cusparseSpGEMMAlg_t alg, cudaDataType dt, const void *one,
                                const void *zero)
{
    const hisp_cuda_cusparse_fns *cs = j->cs;
    cusparseOperation_t N = CUSPARSE_OPERATION_NON_TRANSPOSE;
    size_t s1 = 0, s2 = 0, s3 = 0;
    cusparseStatus_t e;
#define STEP(call)                                                                                 \
    if ((e = (call)) != CUSPARSE_STATUS_SUCCESS) return e
#define WORK(p, n)                                                                                 \
    if (cudaMalloc(&(p), (n) ? (n) : 1) != cudaSuccess) return CUSPARSE_STATUS_ALLOC_FAILED
    STEP(cs->cusparseSpGEMM_workEstimation(j->h, N, N, one, j->a, j->b, zero, j->c, dt, alg, j->g,
                                           &s1, NULL));
    WORK(j->w1, s1);
    STEP(cs->cusparseSpGEMM_workEstimation(j->h, N, N, one, j->a, j->b, zero, j->c, dt, alg, j->g,
                                           &s1, j->w1));
    if (alg == CUSPARSE_SPGEMM_ALG3) {
        STEP(cs->cusparseSpGEMM_estimateMemory(j->h, N, N, one, j->a, j->b, zero, j->c, dt, alg,
                                               j->g, 0.2f, &s3, NULL, NULL));
        WORK(j->w3, s3);
        STEP(cs->cusparseSpGEMM_estimateMemory(j->h, N, N, one, j->a, j->b, zero, j->c, dt, alg,
                                               j->g, 0.2f, &s3, j->w3, &s2));
    } else {
        STEP(cs->cusparseSpGEMM_compute(j->h, N, N, one, j->a, j->b, zero, j->c, dt, alg, j->g, &s2,
                                        NULL));
    }
    WORK(j->w2, s2);
    return cs->cusparseSpGEMM_compute(j->h, N, N, one, j->a, j->b, zero, j->c, dt, alg, j->g, &s2,
                                      j->w2);
#undef STEP
#undef WORK
}

static hisp_status run(hisp_context ctx, vjob *j, hisp_type t, const hispi_dcsr *A,
                       const hispi_dcsr *B, hispi_dcsr *C)
{
    const hisp_cuda_cusparse_fns *cs = j->cs;
    cudaDataType dt = t == HISP_F64 ? CUDA_R_64F : CUDA_R_32F;
    double one = 1, zero = 0;
    float fone = 1, fzero = 0;
    const void *al = t == HISP_F64 ? (const void *)&one : &fone;
    const void *be = t == HISP_F64 ? (const void *)&zero : &fzero;
    HISPI_TRY(sp_check(ctx, j, cs->cusparseCreate(&j->h), "cusparseCreate"));
    HISPI_TRY(sp_check(ctx, j, cs->cusparseSetStream(j->h, j->st), "cusparseSetStream"));
    HISPI_TRY(descr(ctx, j, A, dt, &j->aptr, &j->a));
    HISPI_TRY(descr(ctx, j, B, dt, &j->bptr, &j->b));
    HISPI_TRY(sp_check(ctx, j,
                       cs->cusparseCreateCsr(&j->c, A->nrows, B->ncols, 0, NULL, NULL, NULL,
                                             CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                             CUSPARSE_INDEX_BASE_ZERO, dt),
                       "cusparseCreateCsr"));
    cusparseSpGEMMAlg_t alg = CUSPARSE_SPGEMM_ALG1;
    HISPI_TRY(
        sp_check(ctx, j, cs->cusparseSpGEMM_createDescr(&j->g), "cusparseSpGEMM_createDescr"));
    cusparseStatus_t e = compute(j, alg, dt, al, be);
    if (e == CUSPARSE_STATUS_INSUFFICIENT_RESOURCES || e == CUSPARSE_STATUS_ALLOC_FAILED) {
        hispi_debug("cuda: cuSPARSE SpGEMM ALG1 lacks memory (%s), ALG3",
                    cs->cusparseGetErrorString(e));
        (void)cs->cusparseSpGEMM_destroyDescr(j->g);
        j->g = NULL;
        void *w[3] = {j->w1, j->w2, j->w3};
        for (int i = 0; i < 3; i++)
            if (w[i]) (void)cudaFree(w[i]);
        j->w1 = j->w2 = j->w3 = NULL;
        (void)cudaGetLastError();
        alg = CUSPARSE_SPGEMM_ALG3;
        HISPI_TRY(
            sp_check(ctx, j, cs->cusparseSpGEMM_createDescr(&j->g), "cusparseSpGEMM_createDescr"));
        e = compute(j, alg, dt, al, be);
    }
    HISPI_TRY(sp_check(ctx, j, e, "cusparseSpGEMM_compute"));
    int64_t r, c, nnz;
    HISPI_TRY(
        sp_check(ctx, j, cs->cusparseSpMatGetSize(j->c, &r, &c, &nnz), "cusparseSpMatGetSize"));
    size_t es = hisp_type_size(t), np1 = (size_t)A->nrows + 1;
    HISPI_TRY(cu_check(ctx, cudaMalloc(&j->cptr32, np1 * 4), "cudaMalloc"));
    void *p = NULL, *ci = NULL, *cv = NULL;
    hisp_status s = cu_check(ctx, cudaMalloc(&p, np1 * 8), "cudaMalloc");
    if (!s) s = cu_check(ctx, cudaMalloc(&ci, nnz ? (size_t)nnz * 4 : 16), "cudaMalloc");
    if (!s) s = cu_check(ctx, cudaMalloc(&cv, nnz ? (size_t)nnz * es : 16), "cudaMalloc");
    if (!s)
        s = sp_check(ctx, j, cs->cusparseCsrSetPointers(j->c, j->cptr32, ci, cv),
                     "cusparseCsrSetPointers");
    if (!s)
        s = sp_check(ctx, j,
                     cs->cusparseSpGEMM_copy(j->h, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                             CUSPARSE_OPERATION_NON_TRANSPOSE, al, j->a, j->b, be,
                                             j->c, dt, alg, j->g),
                     "cusparseSpGEMM_copy");
    if (!s)
        s = cu_check(ctx, hisp_cuda_launch_widen(j->cptr32, (int64_t)np1, p, j->st),
                     "widening row pointers");
    if (!s) s = cu_check(ctx, cudaStreamSynchronize(j->st), "cudaStreamSynchronize");
    if (s) {
        (void)cudaFree(p), (void)cudaFree(ci), (void)cudaFree(cv);
        (void)cudaGetLastError();
        return s;
    }
    *C = (hispi_dcsr){A->nrows, B->ncols, nnz, p, ci, cv};
    return HISP_SUCCESS;
}

hisp_status hisp_cuda_vendor_spgemm(hisp_context ctx, void *be, hisp_type t, const hispi_dcsr *A,
                                    const hispi_dcsr *B, hispi_dcsr *C)
{
    memset(C, 0, sizeof *C);
    if (t != HISP_F32 && t != HISP_F64)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "cuSPARSE SpGEMM: f32 or f64 only, not %s",
                          hisp_type_name(t));
    if (A->nnz > INT32_MAX || B->nnz > INT32_MAX || A->nrows >= INT32_MAX || B->ncols >= INT32_MAX)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                          "cuSPARSE SpGEMM: 32-bit indices (A %lld entries, B %lld)",
                          (long long)A->nnz, (long long)B->nnz);
    vjob j = {0};
    HISPI_TRY(hisp_cuda_cusparse(ctx, &j.cs));
    int dev = 0;
    hisp_cuda_be_stream(be, &dev, &j.st);
    hisp_status s = run(ctx, &j, t, A, B, C);
    vjob_free(&j);
    return s;
}
