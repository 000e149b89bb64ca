/* The CUDA backend's one translation of a failed CUDA runtime call
 * (cudaError_t) into hisp's error model (backends/cuda/cuda_err.c). */
#ifndef HISP_CUDA_ERR_H
#define HISP_CUDA_ERR_H

#include "backend/backend.h"

#include <cuda_runtime_api.h>

/* Records `what` failing with e on ctx (the native code, the error's name and
 * text) and returns the status: cudaErrorMemoryAllocation is
 * HISP_ERR_OUT_OF_DEVICE_MEMORY, anything else HISP_ERR_BACKEND. Clears a
 * non-sticky error (cudaGetLastError) so the next call starts clean. */
HISPI_LOCAL hisp_status hisp_cuda_fail(hisp_context ctx, cudaError_t e, const char *what);

/* Returns hisp_cuda_fail(ctx, ..., "call") from the enclosing function when
 * call does not give cudaSuccess. */
#define HISP_CUDA_TRY(ctx, call)                                                                   \
    do {                                                                                           \
        cudaError_t hisp_cuda_e_ = (call);                                                         \
        if (hisp_cuda_e_ != cudaSuccess) return hisp_cuda_fail((ctx), hisp_cuda_e_, #call);        \
    } while (0)

#endif
