/* MSREP device-side merge on CUDA (backends/cuda/cuda_msrep.c,
 * kernels_cuda/msrep.cu). */
#ifndef HISP_CUDA_MSREP_H
#define HISP_CUDA_MSREP_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* y[i] = a*x[i] + b*y[i], i < n (x NULL: no a*x term; b == 0: y not read). */
cudaError_t hisp_cuda_launch_axpby(int f64, int64_t n, double a, const void *x, double b, void *y,
                                   cudaStream_t stream);

/* p*-opt: l[i] = clamp(g[i], base, base + nnz) - base, i < n, as int64
 * (wide) or int32. */
cudaError_t hisp_cuda_launch_local_ptr(const int64_t *g, int64_t n, int64_t base, int64_t nnz,
                                       int wide, void *l, cudaStream_t stream);

#ifndef __CUDACC__
#include "backend/backend.h"

/* cuSPARSE parts (cuda_vendor.c), reached through csr_upload / csr_spmv /
 * csr_free when the view asks for the vendor kernel. */
HISPI_LOCAL hisp_status hisp_cuda_vendor_upload(hisp_context ctx, void *be, const hispi_csr_view *A,
                                                const hispi_csr_opts *o, void **vm);
HISPI_LOCAL void hisp_cuda_vendor_free(void *be, void *vm);
HISPI_LOCAL hisp_status hisp_cuda_vendor_spmv(hisp_context ctx, void *be, void *vm, hisp_op op,
                                              double alpha, const void *x, double beta, void *y);
/* cuSPARSE's SpGEMM (cuda_spgemm.c): the backend's vendor_spgemm. */
HISPI_LOCAL hisp_status hisp_cuda_vendor_spgemm(hisp_context ctx, void *be, hisp_type t,
                                                const hispi_dcsr *A, const hispi_dcsr *B,
                                                hispi_dcsr *C);

HISPI_LOCAL hisp_status hisp_cuda_peer_copy(hisp_context ctx, void *q, void *dst_be, void *dst,
                                            size_t dst_off, void *src_be, const void *src,
                                            size_t src_off, size_t bytes);
HISPI_LOCAL hisp_status hisp_cuda_axpby(hisp_context ctx, void *be, hisp_type t, int64_t n,
                                        double a, const void *x, int64_t xoff, double b, void *y,
                                        int64_t yoff);
#endif

#ifdef __cplusplus
}
#endif
#endif
