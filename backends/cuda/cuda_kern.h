/* Run-time kernels of the CUDA backend (cuda_kern.c): NVRTC builds of the
 * compound SpMV variants, their launches. */
#ifndef HISP_CUDA_KERN_H
#define HISP_CUDA_KERN_H

#include "backend/backend.h"

HISPI_LOCAL hisp_status hisp_cuda_kern_caps(hisp_context ctx, void *be, hispi_kcaps *caps);
HISPI_LOCAL hisp_status hisp_cuda_kern_get(hisp_context ctx, void *be, int prog, const char *opts,
                                           const char *name, void **k);
HISPI_LOCAL hisp_status hisp_cuda_kern_prebuild(hisp_context ctx, void *be, int prog,
                                                const char *const *opts, int n);
HISPI_LOCAL void hisp_cuda_kern_free(void *be, void *k);
HISPI_LOCAL hisp_status hisp_cuda_kern_launch(hisp_context ctx, void *be, void *k,
                                              const hispi_karg *args, int nargs, size_t groups,
                                              size_t group_size);
HISPI_LOCAL hisp_status hisp_cuda_buf_zero(hisp_context ctx, void *be, void *buf, size_t off,
                                           size_t bytes);
/* Compile program prog (HISPI_PROG_*) with opts for sm_<major><minor> and drop the
 * cubin: NVRTC needs no device, so the tests run it on machines without one. */
HISPI_LOCAL hisp_status hisp_cuda_rtc_check(hisp_context ctx, int prog, const char *opts, int major,
                                            int minor, size_t *cubin_bytes);

#endif
