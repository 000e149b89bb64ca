/* Large host <-> device copies through pinned staging buffers filled and
 * drained by several host threads (backends/cuda/cuda_stage.c). */
#ifndef HISP_CUDA_STAGE_H
#define HISP_CUDA_STAGE_H

#include "backend/backend.h"

#include <cuda_runtime_api.h>
#include <stdbool.h>

typedef struct hisp_cuda_stage hisp_cuda_stage;

/* Whether a copy of `bytes` goes through the staging buffers (64 MiB and
 * more). */
HISPI_LOCAL bool hisp_cuda_stage_wanted(size_t bytes);
/* Copies bytes from src to dst (to_device: host to device, else device to
 * host) on stream and waits for it. *sp: the staging buffers, allocated on
 * first use. Returns false, with nothing copied, when no pinned memory can
 * be had (the caller copies plainly); otherwise true with *err. */
HISPI_LOCAL bool hisp_cuda_stage_copy(hisp_context ctx, hisp_cuda_stage **sp, cudaStream_t stream,
                                      void *dst, const void *src, size_t bytes, bool to_device,
                                      cudaError_t *err);
HISPI_LOCAL void hisp_cuda_stage_free(hisp_cuda_stage *s);

#endif
