/* cuSPARSE as the per-device kernel of MSREP plans (HISP_MPLAN_CUSPARSE):
 * the part's CSR with 32-bit indices, cusparseSpMV on the instance's stream.
 * With the view's gptr (p*-opt) the global pointer slice is uploaded as is
 * and a kernel derives the local pointers on the device; otherwise the
 * host's local pointers are narrowed and uploaded. cuSPARSE is opened on
 * the first upload (cuda_dl.c); every part holds its table. */
#include "cuda_dl.h"
#include "cuda_err.h"
#include "cuda_hisparse.h"
#include "cuda_msrep.h"

#include <stdlib.h>

typedef struct {
    const hisp_cuda_cusparse_fns *cs;
    cusparseHandle_t h;
    cusparseSpMatDescr_t A;
    void *rowptr, *colind, *val;
    void *buf; /* cusparseSpMV's workspace, grown on demand */
    size_t bufsize;
    void *clean_y; /* an op = N output zeroed before: no NaN can be read from it */
    int device;
    hisp_type type;
    int64_t nrows, ncols, nnz;
} vcsr;

hisp_status hisp_cuda_sp_fail(hisp_context ctx, const hisp_cuda_cusparse_fns *cs,
                              cusparseStatus_t e, const char *what)
{
    bool mem = e == CUSPARSE_STATUS_ALLOC_FAILED || e == CUSPARSE_STATUS_INSUFFICIENT_RESOURCES;
    return hispi_fail_native(ctx, mem ? HISP_ERR_OUT_OF_DEVICE_MEMORY : HISP_ERR_BACKEND,
                             (int64_t)e, "%s failed: %s", what, cs->cusparseGetErrorString(e));
}

#define CU(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            s = hisp_cuda_fail(ctx, e_, #call);                                                    \
            goto out;                                                                              \
        }                                                                                          \
    } while (0)
#define SP(call)                                                                                   \
    do {                                                                                           \
        cusparseStatus_t e_ = (call);                                                              \
        if (e_ != CUSPARSE_STATUS_SUCCESS) {                                                       \
            s = hisp_cuda_sp_fail(ctx, cs, e_, #call);                                             \
            goto out;                                                                              \
        }                                                                                          \
    } while (0)

void hisp_cuda_vendor_free(void *be, void *p)
{
    (void)be;
    vcsr *m = p;
    if (!m) return;
    const hisp_cuda_cusparse_fns *cs = m->cs; /* set whenever m->A or m->h is */
    (void)cudaSetDevice(m->device);
    if (m->A) (void)cs->cusparseDestroySpMat(m->A);
    if (m->h) (void)cs->cusparseDestroy(m->h);
    void *bufs[] = {m->rowptr, m->colind, m->val, m->buf};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i]) (void)cudaFree(bufs[i]);
    (void)cudaGetLastError();
    free(m);
}

hisp_status hisp_cuda_vendor_upload(hisp_context ctx, void *be, const hispi_csr_view *A,
                                    const hispi_csr_opts *o, void **out)
{
    if (A->type != HISP_F32 && A->type != HISP_F64)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "cuSPARSE parts need f32 or f64");
    if (A->nnz > INT32_MAX || A->nrows >= INT32_MAX || A->ncols >= INT32_MAX)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                          "cuSPARSE parts: %lld nonzeros, %lld x %lld (32-bit indices: at most "
                          "2^31-1; use more devices)",
                          (long long)A->nnz, (long long)A->nrows, (long long)A->ncols);
    const hisp_cuda_cusparse_fns *cs;
    HISPI_TRY(hisp_cuda_cusparse(ctx, &cs));
    cudaStream_t st;
    int dev = 0;
    hisp_cuda_be_stream(be, &dev, &st);
    vcsr *m = NULL;
    HISPI_TRY(hispi_calloc(ctx, 1, sizeof *m, (void **)&m));
    m->cs = cs;
    m->device = dev;
    m->type = A->type;
    m->nrows = A->nrows;
    m->ncols = A->ncols;
    m->nnz = A->nnz;
    size_t es = hisp_type_size(A->type), np1 = (size_t)A->nrows + 1;
    int32_t *rp32 = NULL;
    void *g = NULL;
    hisp_status s = HISP_SUCCESS;
    CU(cudaSetDevice(dev));
    CU(cudaMalloc(&m->rowptr, np1 * 4));
    CU(cudaMalloc(&m->colind, A->nnz ? (size_t)A->nnz * 4 : 16));
    CU(cudaMalloc(&m->val, A->nnz ? (size_t)A->nnz * es : 16));
    if (A->nnz) {
        CU(cudaMemcpyAsync(m->colind, A->colind, (size_t)A->nnz * 4, cudaMemcpyHostToDevice, st));
        CU(cudaMemcpyAsync(m->val, A->val, (size_t)A->nnz * es, cudaMemcpyHostToDevice, st));
    }
    if (o->gptr) { /* p*-opt: the global slice as is, local pointers made here */
        CU(cudaMalloc(&g, np1 * 8));
        CU(cudaMemcpyAsync(g, A->rowptr, np1 * 8, cudaMemcpyHostToDevice, st));
        CU(hisp_cuda_launch_local_ptr(g, (int64_t)np1, o->ptr_base, A->nnz, 0, m->rowptr, st));
    } else {
        s = hispi_alloc(ctx, np1, sizeof *rp32, (void **)&rp32);
        if (s) goto out;
        for (size_t i = 0; i < np1; i++)
            rp32[i] = (int32_t)A->rowptr[i];
        CU(cudaMemcpyAsync(m->rowptr, rp32, np1 * 4, cudaMemcpyHostToDevice, st));
    }
    CU(cudaStreamSynchronize(st));
    /* the part's indices, values and pointers (global slice or local) */
    hispi_xfer(ctx, HISPI_H2D, (uint64_t)A->nnz * (4 + es) + np1 * (o->gptr ? 8 : 4));
    SP(cs->cusparseCreate(&m->h));
    SP(cs->cusparseSetStream(m->h, st));
    SP(cs->cusparseCreateCsr(&m->A, A->nrows, A->ncols, A->nnz, m->rowptr, m->colind, m->val,
                             CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                             A->type == HISP_F64 ? CUDA_R_64F : CUDA_R_32F));
out:
    free(rp32);
    if (g) (void)cudaFree(g);
    if (s) {
        hisp_cuda_vendor_free(be, m);
        return s;
    }
    hispi_debug("cuda: cuSPARSE CSR %lld x %lld, %lld nnz, local pointers %s", (long long)A->nrows,
                (long long)A->ncols, (long long)A->nnz,
                o->gptr ? "made on the device" : "from the host");
    *out = m;
    return HISP_SUCCESS;
}

hisp_status hisp_cuda_vendor_spmv(hisp_context ctx, void *be, void *p, hisp_op op, double alpha,
                                  const void *x, double beta, void *y)
{
    (void)be;
    vcsr *m = p;
    const hisp_cuda_cusparse_fns *cs = m->cs;
    hisp_status s = HISP_SUCCESS;
    cusparseDnVecDescr_t vx = NULL, vy = NULL;
    cudaDataType dt = m->type == HISP_F64 ? CUDA_R_64F : CUDA_R_32F;
    cusparseOperation_t o =
        op == HISP_OP_T ? CUSPARSE_OPERATION_TRANSPOSE : CUSPARSE_OPERATION_NON_TRANSPOSE;
    int64_t xl = op == HISP_OP_T ? m->nrows : m->ncols, yl = op == HISP_OP_T ? m->ncols : m->nrows;
    float af = (float)alpha, bf = (float)beta;
    const void *pa = m->type == HISP_F64 ? (const void *)&alpha : (const void *)&af;
    const void *pb = m->type == HISP_F64 ? (const void *)&beta : (const void *)&bf;
    size_t need = 0;
    CU(cudaSetDevice(m->device));
    /* beta = 0: y might be read (0 * NaN); zeroed always for op = T (a
     * scatter into y), once per y buffer for op = N (it then holds finite
     * results of earlier calls) */
    if (beta == 0 && yl && (op == HISP_OP_T || y != m->clean_y)) {
        cudaStream_t st;
        int dev;
        hisp_cuda_be_stream(be, &dev, &st);
        CU(cudaMemsetAsync(y, 0, (size_t)yl * hisp_type_size(m->type), st));
        m->clean_y = op == HISP_OP_N ? y : NULL;
    }
    if (m->nnz == 0 || xl == 0) { /* y = beta*y without cuSPARSE (empty parts) */
        cudaStream_t st;
        int dev;
        hisp_cuda_be_stream(be, &dev, &st);
        CU(hisp_cuda_launch_axpby(m->type == HISP_F64, yl, 0, NULL, beta, y, st));
        goto out;
    }
    {
        cudaStream_t st; /* the instance's stream now (it may have changed since upload) */
        int dev;
        hisp_cuda_be_stream(be, &dev, &st);
        SP(cs->cusparseSetStream(m->h, st));
    }
    SP(cs->cusparseCreateDnVec(&vx, xl, (void *)x, dt));
    SP(cs->cusparseCreateDnVec(&vy, yl, y, dt));
    SP(cs->cusparseSpMV_bufferSize(m->h, o, pa, m->A, vx, pb, vy, dt, CUSPARSE_SPMV_ALG_DEFAULT,
                                   &need));
    if (need > m->bufsize) {
        if (m->buf) (void)cudaFree(m->buf);
        m->buf = NULL;
        m->bufsize = 0;
        CU(cudaMalloc(&m->buf, need));
        m->bufsize = need;
    }
    SP(cs->cusparseSpMV(m->h, o, pa, m->A, vx, pb, vy, dt, CUSPARSE_SPMV_ALG_DEFAULT, m->buf));
out:
    if (vx) (void)cs->cusparseDestroyDnVec(vx);
    if (vy) (void)cs->cusparseDestroyDnVec(vy);
    return s;
}
