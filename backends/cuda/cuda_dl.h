/* The CUDA libraries that libhisp opens at run time (cuda_dl.c): cuSPARSE
 * and NVRTC. libhisp records no NEEDED entry for them, so it loads (and the
 * reference and OpenCL backends run) on machines without the CUDA toolkit;
 * each library is opened once, on its first use, and a missing one is a
 * status with the library's name. The CUDA runtime is linked statically
 * (cudart_static opens the driver, libcuda.so.1, itself).
 *
 * The tables hold pointers typed from the toolkit's own headers and named
 * as the functions, so a call reads as the plain call: cs->cusparseSpMV(...). */
#ifndef HISP_CUDA_DL_H
#define HISP_CUDA_DL_H

#include "backend/backend.h"

#define DISABLE_CUSPARSE_DEPRECATED /* the header marks its legacy API */
#include <cusparse.h>
#include <nvrtc.h>

/* X(name) for every function the backend calls; adding a call = adding it here */
#define HISP_CUDA_CUSPARSE_FNS(X)                                                                  \
    X(cusparseCreate)                                                                              \
    X(cusparseDestroy)                                                                             \
    X(cusparseSetStream)                                                                           \
    X(cusparseGetErrorString)                                                                      \
    X(cusparseCreateCsr)                                                                           \
    X(cusparseDestroySpMat)                                                                        \
    X(cusparseCreateDnVec)                                                                         \
    X(cusparseDestroyDnVec)                                                                        \
    X(cusparseSpMV_bufferSize)                                                                     \
    X(cusparseSpMV)                                                                                \
    X(cusparseSpGEMM_createDescr)                                                                  \
    X(cusparseSpGEMM_destroyDescr)                                                                 \
    X(cusparseSpGEMM_workEstimation)                                                               \
    X(cusparseSpGEMM_estimateMemory)                                                               \
    X(cusparseSpGEMM_compute)                                                                      \
    X(cusparseSpGEMM_copy)                                                                         \
    X(cusparseSpMatGetSize)                                                                        \
    X(cusparseCsrSetPointers)

#define HISP_CUDA_NVRTC_FNS(X)                                                                     \
    X(nvrtcCreateProgram)                                                                          \
    X(nvrtcCompileProgram)                                                                         \
    X(nvrtcGetCUBINSize)                                                                           \
    X(nvrtcGetCUBIN)                                                                               \
    X(nvrtcGetProgramLogSize)                                                                      \
    X(nvrtcGetProgramLog)                                                                          \
    X(nvrtcDestroyProgram)                                                                         \
    X(nvrtcVersion)                                                                                \
    X(nvrtcGetErrorString)

#define HISP_CUDA_DL_SLOT(f) __typeof__(f) *f;

typedef struct {
    HISP_CUDA_CUSPARSE_FNS(HISP_CUDA_DL_SLOT)
} hisp_cuda_cusparse_fns;

typedef struct {
    HISP_CUDA_NVRTC_FNS(HISP_CUDA_DL_SLOT)
    int major, minor; /* nvrtcVersion */
} hisp_cuda_nvrtc_fns;

/* The table, the library opened on the first call (thread safe). Missing
 * library or symbol: HISP_ERR_UNSUPPORTED, "libcusparse.so.12 not found
 * (...)" in ctx's last error, and the same answer on every later call. */
HISPI_LOCAL hisp_status hisp_cuda_cusparse(hisp_context ctx, const hisp_cuda_cusparse_fns **fns);
/* A failed cuSPARSE call what (e): HISP_ERR_OUT_OF_DEVICE_MEMORY where it
 * lacked memory, else HISP_ERR_BACKEND, with cuSPARSE's words. */
HISPI_LOCAL hisp_status hisp_cuda_sp_fail(hisp_context ctx, const hisp_cuda_cusparse_fns *cs,
                                          cusparseStatus_t e, const char *what);
HISPI_LOCAL hisp_status hisp_cuda_nvrtc(hisp_context ctx, const hisp_cuda_nvrtc_fns **fns);

/* dlopen soname from the loader's path, else $CUDA_HOME/lib64, else the
 * toolkit's lib64 of the build; NULL with the reason in why (the tests). */
HISPI_LOCAL void *hisp_cuda_dl_open(const char *soname, char *why, size_t whylen);

#endif
