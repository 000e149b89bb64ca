/* The OpenCL ICD loader (libOpenCL.so.1) opened at run time, on the first
 * OpenCL call: libhisp records no NEEDED entry for it, so the library and
 * the hisp program load (and the reference and CUDA backends run) on
 * machines without an ICD loader, as CUDA images often are; there the
 * OpenCL backend lists no device and says why.
 *
 * The table holds pointers typed from CL/cl.h and named as the functions;
 * the backend's files call clFoo(...) as usual, and the macros at the end
 * send each call through hisp_cl_fns(), which loads the table once. */
#ifndef HISP_CL_DL_H
#define HISP_CL_DL_H

#include "backend/backend.h"

#include <CL/cl.h>

/* X(name) for every function the backend calls; adding a call = adding it here */
#define HISP_CL_FNS(X)                                                                             \
    X(clBuildProgram)                                                                              \
    X(clCreateBuffer)                                                                              \
    X(clCreateCommandQueue)                                                                        \
    X(clCreateContext)                                                                             \
    X(clCreateKernel)                                                                              \
    X(clCreateProgramWithBinary)                                                                   \
    X(clCreateProgramWithSource)                                                                   \
    X(clCreateSubBuffer)                                                                           \
    X(clCreateSubDevices)                                                                          \
    X(clEnqueueCopyBuffer)                                                                         \
    X(clEnqueueFillBuffer)                                                                         \
    X(clEnqueueMarkerWithWaitList)                                                                 \
    X(clEnqueueNDRangeKernel)                                                                      \
    X(clEnqueueReadBuffer)                                                                         \
    X(clEnqueueWriteBuffer)                                                                        \
    X(clFinish)                                                                                    \
    X(clGetCommandQueueInfo)                                                                       \
    X(clGetDeviceIDs)                                                                              \
    X(clGetDeviceInfo)                                                                             \
    X(clGetEventProfilingInfo)                                                                     \
    X(clGetKernelWorkGroupInfo)                                                                    \
    X(clGetMemObjectInfo)                                                                          \
    X(clGetPlatformIDs)                                                                            \
    X(clGetPlatformInfo)                                                                           \
    X(clGetProgramBuildInfo)                                                                       \
    X(clGetProgramInfo)                                                                            \
    X(clReleaseCommandQueue)                                                                       \
    X(clReleaseContext)                                                                            \
    X(clReleaseDevice)                                                                             \
    X(clReleaseEvent)                                                                              \
    X(clReleaseKernel)                                                                             \
    X(clReleaseMemObject)                                                                          \
    X(clReleaseProgram)                                                                            \
    X(clRetainCommandQueue)                                                                        \
    X(clRetainContext)                                                                             \
    X(clRetainMemObject)                                                                           \
    X(clSetKernelArg)                                                                              \
    X(clWaitForEvents)

#define HISP_CL_DL_SLOT(f) __typeof__(f) *f;

typedef struct {
    HISP_CL_FNS(HISP_CL_DL_SLOT)
} hisp_cl_fn_table;

/* The table, the loader opened on the first call (thread safe); NULL when
 * it cannot be opened or lacks a function, with *why saying so. */
HISPI_LOCAL const hisp_cl_fn_table *hisp_cl_fns(const char **why);

#ifndef HISP_CL_DL_NO_REDIRECT
/* Every call below goes through the table. hisp_cl_fns(NULL) is only
 * reached after the backend's discovery, which reports a missing loader
 * and then opens no device, so no call runs without it. */
#define HISP_CL_CALL(f) (hisp_cl_fns(NULL)->f)
#define clBuildProgram HISP_CL_CALL(clBuildProgram)
#define clCreateBuffer HISP_CL_CALL(clCreateBuffer)
#define clCreateCommandQueue HISP_CL_CALL(clCreateCommandQueue)
#define clCreateContext HISP_CL_CALL(clCreateContext)
#define clCreateKernel HISP_CL_CALL(clCreateKernel)
#define clCreateProgramWithBinary HISP_CL_CALL(clCreateProgramWithBinary)
#define clCreateProgramWithSource HISP_CL_CALL(clCreateProgramWithSource)
#define clCreateSubBuffer HISP_CL_CALL(clCreateSubBuffer)
#define clCreateSubDevices HISP_CL_CALL(clCreateSubDevices)
#define clEnqueueCopyBuffer HISP_CL_CALL(clEnqueueCopyBuffer)
#define clEnqueueFillBuffer HISP_CL_CALL(clEnqueueFillBuffer)
#define clEnqueueMarkerWithWaitList HISP_CL_CALL(clEnqueueMarkerWithWaitList)
#define clEnqueueNDRangeKernel HISP_CL_CALL(clEnqueueNDRangeKernel)
#define clEnqueueReadBuffer HISP_CL_CALL(clEnqueueReadBuffer)
#define clEnqueueWriteBuffer HISP_CL_CALL(clEnqueueWriteBuffer)
#define clFinish HISP_CL_CALL(clFinish)
#define clGetCommandQueueInfo HISP_CL_CALL(clGetCommandQueueInfo)
#define clGetDeviceIDs HISP_CL_CALL(clGetDeviceIDs)
#define clGetDeviceInfo HISP_CL_CALL(clGetDeviceInfo)
#define clGetEventProfilingInfo HISP_CL_CALL(clGetEventProfilingInfo)
#define clGetKernelWorkGroupInfo HISP_CL_CALL(clGetKernelWorkGroupInfo)
#define clGetMemObjectInfo HISP_CL_CALL(clGetMemObjectInfo)
#define clGetPlatformIDs HISP_CL_CALL(clGetPlatformIDs)
#define clGetPlatformInfo HISP_CL_CALL(clGetPlatformInfo)
#define clGetProgramBuildInfo HISP_CL_CALL(clGetProgramBuildInfo)
#define clGetProgramInfo HISP_CL_CALL(clGetProgramInfo)
#define clReleaseCommandQueue HISP_CL_CALL(clReleaseCommandQueue)
#define clReleaseContext HISP_CL_CALL(clReleaseContext)
#define clReleaseDevice HISP_CL_CALL(clReleaseDevice)
#define clReleaseEvent HISP_CL_CALL(clReleaseEvent)
#define clReleaseKernel HISP_CL_CALL(clReleaseKernel)
#define clReleaseMemObject HISP_CL_CALL(clReleaseMemObject)
#define clReleaseProgram HISP_CL_CALL(clReleaseProgram)
#define clRetainCommandQueue HISP_CL_CALL(clRetainCommandQueue)
#define clRetainContext HISP_CL_CALL(clRetainContext)
#define clRetainMemObject HISP_CL_CALL(clRetainMemObject)
#define clSetKernelArg HISP_CL_CALL(clSetKernelArg)
#define clWaitForEvents HISP_CL_CALL(clWaitForEvents)
#endif

#endif
