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

#ifndef __CUDACC__
#include "../backend.h"

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
