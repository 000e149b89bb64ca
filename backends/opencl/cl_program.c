/* OpenCL backend: run-time program builds, cached in the instance by
 * (source, options) and on disk as device binaries.
 *
 * Disk cache: the context's cache_dir option, else $XDG_CACHE_HOME/hisp,
 * else $HOME/.cache/hisp ("off" disables it). A file is named by a hash of the
 * hisp version, source, options, device name and driver version and holds
 * a validated entry (core/base/cache_file.c: length and checksum). A damaged,
 * truncated or old-format file never reaches the OpenCL runtime (PoCL can
 * crash on a damaged binary): it is a miss, rebuilt from source and
 * atomically replaced. A valid binary the driver refuses (stale) likewise. */
#include "cl_backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cache_path(hisp_context ctx, const hisp_cl_be *be, const char *src, const char *opts,
                      char *out, size_t size)
{
    const char *ver = hisp_version_string();
    uint64_t h = hispi_hash(ver, strlen(ver), 0x6869737063ull);
    h = hispi_hash(hispi_kern_src_common, strlen(hispi_kern_src_common), h);
    h = hispi_hash(src, strlen(src), h);
    h = hispi_hash(opts, strlen(opts) + 1, h);
    h = hispi_hash(be->name, strlen(be->name) + 1, h);
    h = hispi_hash(be->driver, strlen(be->driver) + 1, h);
    h = hispi_hash(be->platform_name, strlen(be->platform_name) + 1, h);
    return hispi_cache_file(ctx, "cl", h, "bin", out, size);
}

static cl_program load_cached(hisp_cl_be *be, const char *path, const char *opts)
{
    void *bin = NULL;
    size_t len = 0;
    int r = hispi_cache_read(path, &bin, &len);
    if (r < 0) hispi_debug("opencl: %s is not a valid cache entry: rebuilding", path);
    if (r <= 0 || len == 0) {
        free(bin);
        return NULL;
    }
    const unsigned char *bins[1] = {bin};
    cl_int st = CL_SUCCESS, e = CL_SUCCESS;
    cl_program p = clCreateProgramWithBinary(be->context, 1, &be->device, &len, bins, &st, &e);
    if (e == CL_SUCCESS && st == CL_SUCCESS)
        e = clBuildProgram(p, 1, &be->device, opts, NULL, NULL);
    else if (e == CL_SUCCESS)
        e = st;
    if (e != CL_SUCCESS && p) {
        clReleaseProgram(p);
        p = NULL;
    }
    free(bin);
    return p;
}

static void store_cached(cl_program p, const char *path)
{
    size_t len = 0;
    if (clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof len, &len, NULL) != CL_SUCCESS ||
        len == 0)
        return;
    unsigned char *bin = malloc(len);
    if (!bin) return;
    unsigned char *bins[1] = {bin};
    if (clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL) == CL_SUCCESS)
        (void)hispi_cache_write(path, bin, len); /* a cache: best effort */
    free(bin);
}

static hisp_status build_from_source(hisp_context ctx, hisp_cl_be *be, const char *src,
                                     const char *opts, cl_program *out)
{
    cl_int e = CL_SUCCESS;
    const char *parts[2] = {hispi_kern_src_common, src}; /* the prelude first */
    cl_program p = clCreateProgramWithSource(be->context, 2, parts, NULL, &e);
    if (e != CL_SUCCESS) return hisp_cl_fail(ctx, e, "clCreateProgramWithSource");
    e = clBuildProgram(p, 1, &be->device, opts, NULL, NULL);
    if (e != CL_SUCCESS) {
        size_t n = 0;
        char *log = NULL;
        if (clGetProgramBuildInfo(p, be->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) == CL_SUCCESS &&
            n > 0 && (log = malloc(n + 1)) &&
            clGetProgramBuildInfo(p, be->device, CL_PROGRAM_BUILD_LOG, n, log, NULL) == CL_SUCCESS)
            log[n] = 0;
        else if (log)
            log[0] = 0;
        hisp_status s = hispi_fail_native(ctx, HISP_ERR_KERNEL_BUILD, e,
                                          "OpenCL clBuildProgram failed: %s (%d), options \"%s\"",
                                          hisp_cl_error_name(e), (int)e, opts);
        if (log) hispi_set_build_log(ctx, log);
        free(log);
        clReleaseProgram(p);
        return s;
    }
    *out = p;
    return HISP_SUCCESS;
}

static hisp_status program(hisp_context ctx, hisp_cl_be *be, const char *src, const char *opts,
                           cl_program *out)
{
    for (hisp_cl_prog *q = be->progs; q; q = q->next)
        if (q->src == src && strcmp(q->options, opts) == 0) {
            *out = q->program;
            return HISP_SUCCESS;
        }
    hisp_cl_prog *q = NULL;
    HISPI_TRY(hispi_calloc(ctx, 1, sizeof *q, (void **)&q));
    size_t olen = strlen(opts) + 1;
    hisp_status s = hispi_alloc(ctx, olen, 1, (void **)&q->options);
    if (s) {
        free(q);
        return s;
    }
    memcpy(q->options, opts, olen);
    char path[1024];
    int cacheable = cache_path(ctx, be, src, opts, path, sizeof path);
    double t0 = hispi_now_ms();
    cl_program p = cacheable ? load_cached(be, path, opts) : NULL;
    if (p) {
        hispi_build_count(ctx, true, 1, hispi_now_ms() - t0);
        hispi_debug("opencl: program from %s (%.1f ms)", path, hispi_now_ms() - t0);
    } else {
        hispi_build_begin(ctx, be->name, 1);
        s = build_from_source(ctx, be, src, opts, &p);
        if (s) {
            free(q->options);
            free(q);
            return s;
        }
        hispi_debug("opencl: built program \"%s\" (%.1f ms)", opts, hispi_now_ms() - t0);
        /* PoCL compiles every kernel of the program for the binary */
        if (cacheable) store_cached(p, path);
        hispi_build_count(ctx, false, 1, hispi_now_ms() - t0);
        if (cacheable)
            hispi_debug("opencl: cached as %s (%.1f ms in all)", path, hispi_now_ms() - t0);
    }
    q->src = src;
    q->program = p;
    q->next = be->progs;
    be->progs = q;
    *out = p;
    return HISP_SUCCESS;
}

hisp_status hisp_cl_kernel(hisp_context ctx, hisp_cl_be *be, const char *src, const char *opts,
                           const char *name, cl_kernel *k)
{
    /* a program whose kernels are guarded by ONE() (kernels/common.cl) is
     * built for this kernel alone: PoCL compiles every kernel of a program
     * for its binary (vector.cl's 21: 3.6 s of a cold CG's 5.1 s of builds) */
    char one[512];
    if (strstr(src, "#if ONE(")) {
        int w = snprintf(one, sizeof one, "%s -DONE_KERNEL=1 -DONLY_%s=1", opts, name);
        if (w < 0 || (size_t)w >= sizeof one)
            return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "opencl: options too long for %s",
                              name);
        opts = one;
    }
    cl_program p = NULL;
    HISPI_TRY(program(ctx, be, src, opts, &p));
    cl_int e = CL_SUCCESS;
    *k = clCreateKernel(p, name, &e);
    if (e != CL_SUCCESS) {
        *k = NULL;
        return hispi_fail_native(ctx, HISP_ERR_BACKEND, e,
                                 "OpenCL clCreateKernel(%s) failed: %s (%d)", name,
                                 hisp_cl_error_name(e), (int)e);
    }
    return HISP_SUCCESS;
}

void hisp_cl_programs_release(hisp_cl_be *be)
{
    while (be->progs) {
        hisp_cl_prog *q = be->progs;
        be->progs = q->next;
        clReleaseProgram(q->program);
        free(q->options);
        free(q);
    }
}
