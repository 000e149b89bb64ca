/* cudaError_t -> hisp_status and the context's error record (cuda_err.h). */
#include "cuda_err.h"

hisp_status hisp_cuda_fail(hisp_context ctx, cudaError_t e, const char *what)
{
    (void)cudaGetLastError(); /* a non-sticky error is cleared; a sticky one stays */
    if (e == cudaErrorMemoryAllocation)
        return hispi_fail_native(ctx, HISP_ERR_OUT_OF_DEVICE_MEMORY, (int64_t)e, "%s: %s", what,
                                 cudaGetErrorString(e));
    return hispi_fail_native(ctx, HISP_ERR_BACKEND, (int64_t)e, "%s failed: %s (%s)", what,
                             cudaGetErrorName(e), cudaGetErrorString(e));
}
