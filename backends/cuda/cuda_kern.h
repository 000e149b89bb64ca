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
HISPI_LOCAL hisp_status hisp_cuda_kern_any(hisp_context ctx, void *be);
HISPI_LOCAL void hisp_cuda_kern_free(void *be, void *k);
HISPI_LOCAL hisp_status hisp_cuda_kern_launch(hisp_context ctx, void *be, void *k,
                                              const hispi_karg *args, int nargs, size_t groups,
                                              size_t group_size);
HISPI_LOCAL hisp_status hisp_cuda_buf_zero(hisp_context ctx, void *be, void *buf, size_t off,
                                           size_t bytes);
/* Compile program prog (HISPI_PROG_*) with opts for sm_<major><minor>:
 * *cubin (malloc'd; NULL: dropped) and its size. NVRTC needs no device, so
 * the tests and the build's prebuild run it on machines without one. */
HISPI_LOCAL hisp_status hisp_cuda_rtc_cubin(hisp_context ctx, int prog, const char *opts, int major,
                                            int minor, char **cubin, size_t *cubin_bytes);

/* Cubins compiled when hisp was built (build/gen/cuda_prebuilt.c, made by
 * tools/kernels_prebuild.c): kern_get loads one whose program, options and
 * sm_XY match exactly, before its caches and NVRTC. */
typedef struct {
    int prog, arch; /* HISPI_PROG_*, major * 10 + minor */
    const char *opts;
    const unsigned char *cubin;
    size_t size;
} hisp_cuda_prebuilt;
extern const hisp_cuda_prebuilt hisp_cuda_prebuilt_table[];
extern const int hisp_cuda_prebuilt_count;

#endif
