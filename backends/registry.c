/* The compile-time backend table: the only place that knows which backends
 * were built. */
#include "backend/backend.h"

const hisp_backend_ops *const hispi_backends[HISP_BACKEND_COUNT] = {
    [HISP_BACKEND_REFERENCE] = &hisp_reference_ops,
#ifdef HISP_HAVE_OPENCL
    [HISP_BACKEND_OPENCL] = &hisp_cl_ops,
#endif
#ifdef HISP_HAVE_CUDA
    [HISP_BACKEND_CUDA] = &hisp_cuda_ops,
#endif
};
