/* OpenCL backend: run-time kernels (compound-entry SpMV variants, HiSparse
 * addition, vector algebra)
 * (programs built with hisp_cl_kernel, so they share its memory and disk
 * caches keyed by source, options, device, driver and platform). */
#include "cl_backend.h"

#include <stdio.h>
#include <string.h>

hisp_status hisp_cl_kern_caps(hisp_context ctx, void *vbe, hispi_kcaps *c)
{
    (void)ctx;
    hisp_cl_be *be = vbe;
    memset(c, 0, sizeof *c);
    c->max_group = be->max_wg > 1024 ? 1024 : (int)be->max_wg;
    /* the warp/wavefront on GPUs; PoCL vectorises work-groups by 8 */
    c->simd = be->is_gpu ? (strstr(be->platform_name, "AMD") ? 64 : 32) : 8;
    if (c->simd > c->max_group) c->simd = c->max_group;
    c->compute_units = (int)be->compute_units;
    c->launch_bounds = 0;
    c->is_cpu = be->is_cpu;
    c->local_mem = (int64_t)be->local_mem;
    snprintf(c->compiler, sizeof c->compiler, "%.80s %.70s", be->platform_name, be->driver);
    return HISP_SUCCESS;
}

hisp_status hisp_cl_kern_get(hisp_context ctx, void *vbe, int prog, const char *opts,
                             const char *name, void **k)
{
    const char *src = prog >= 0 && prog < HISPI_PROG_COUNT ? hispi_programs[prog].src : NULL;
    if (!src) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "unknown program %d", prog);
    cl_kernel kk = NULL;
    HISPI_TRY(hisp_cl_kernel(ctx, vbe, src, opts, name, &kk));
    *k = kk;
    return HISP_SUCCESS;
}

void hisp_cl_kern_free(void *be, void *k)
{
    (void)be;
    if (k) clReleaseKernel((cl_kernel)k);
}

hisp_status hisp_cl_kern_launch(hisp_context ctx, void *vbe, void *k, const hispi_karg *a,
                                int nargs, size_t groups, size_t group_size)
{
    hisp_cl_be *be = vbe;
    cl_kernel kk = k;
    cl_int e = CL_SUCCESS;
    for (int i = 0; i < nargs && e == CL_SUCCESS; i++) {
        switch (a[i].kind) {
        case HISPI_KARG_BUF: {
            cl_mem m = (cl_mem)a[i].buf;
            e = clSetKernelArg(kk, (cl_uint)i, sizeof m, &m);
            break;
        }
        case HISPI_KARG_I32: {
            cl_int v = (cl_int)a[i].i;
            e = clSetKernelArg(kk, (cl_uint)i, sizeof v, &v);
            break;
        }
        case HISPI_KARG_I64: {
            cl_long v = (cl_long)a[i].i;
            e = clSetKernelArg(kk, (cl_uint)i, sizeof v, &v);
            break;
        }
        case HISPI_KARG_F32: {
            cl_float v = (cl_float)a[i].d;
            e = clSetKernelArg(kk, (cl_uint)i, sizeof v, &v);
            break;
        }
        default: {
            cl_double v = a[i].d;
            e = clSetKernelArg(kk, (cl_uint)i, sizeof v, &v);
            break;
        }
        }
    }
    if (e != CL_SUCCESS) return hisp_cl_fail(ctx, e, "clSetKernelArg");
    if (!groups) return HISP_SUCCESS;
    size_t global = groups * group_size, local = group_size;
    e = clEnqueueNDRangeKernel(be->queue, kk, 1, NULL, &global, &local, 0, NULL, NULL);
    return e == CL_SUCCESS ? HISP_SUCCESS : hisp_cl_fail(ctx, e, "clEnqueueNDRangeKernel");
}

hisp_status hisp_cl_buf_zero(hisp_context ctx, void *vbe, void *buf, size_t off, size_t bytes)
{
    hisp_cl_be *be = vbe;
    if (!bytes) return HISP_SUCCESS;
    cl_uint zero = 0;
    size_t pat = bytes % 4 == 0 && off % 4 == 0 ? 4 : 1;
    cl_int e = clEnqueueFillBuffer(be->queue, (cl_mem)buf, &zero, pat, off, bytes, 0, NULL, NULL);
    return e == CL_SUCCESS ? HISP_SUCCESS : hisp_cl_fail(ctx, e, "clEnqueueFillBuffer");
}
