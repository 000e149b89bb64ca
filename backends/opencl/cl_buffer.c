/* OpenCL backend: buffers (cl_mem handles) and timing marks. */
#include "cl_backend.h"

#include <stdlib.h>

hisp_status hisp_cl_buf_alloc(hisp_context ctx, void *vbe, size_t bytes, void **buf)
{
    hisp_cl_be *be = vbe;
    *buf = NULL;
    /* implementations may allocate lazily: refuse what can never fit now */
    if (be->max_alloc && bytes > be->max_alloc)
        return hispi_fail_native(ctx, HISP_ERR_OUT_OF_DEVICE_MEMORY, CL_INVALID_BUFFER_SIZE,
                                 "OpenCL buffer of %zu bytes exceeds the device's "
                                 "CL_DEVICE_MAX_MEM_ALLOC_SIZE (%llu bytes)",
                                 bytes, (unsigned long long)be->max_alloc);
    cl_int e = CL_SUCCESS;
    /* CPU devices: the memory allocated now, by clCreateBuffer, where a
     * failure is an error code. Without CL_MEM_ALLOC_HOST_PTR, PoCL allocates
     * a buffer's memory at its first use and aborts the process when that
     * fails (an assertion in pocl_create_migration_commands, seen under an
     * address-space limit) */
    cl_mem_flags fl = CL_MEM_READ_WRITE | (be->is_cpu ? CL_MEM_ALLOC_HOST_PTR : 0);
    /* a zero-byte request still needs a valid handle */
    cl_mem m = clCreateBuffer(be->context, fl, bytes ? bytes : 16, NULL, &e);
    if (e != CL_SUCCESS) {
        hisp_status s = HISP_ERR_BACKEND;
        if (e == CL_MEM_OBJECT_ALLOCATION_FAILURE || e == CL_OUT_OF_RESOURCES ||
            e == CL_INVALID_BUFFER_SIZE || (be->is_cpu && e == CL_OUT_OF_HOST_MEMORY))
            s = HISP_ERR_OUT_OF_DEVICE_MEMORY; /* a CPU device's memory is the host's */
        else if (e == CL_OUT_OF_HOST_MEMORY)
            s = HISP_ERR_OUT_OF_HOST_MEMORY;
        return hispi_fail_native(ctx, s, e, "OpenCL clCreateBuffer(%zu bytes) failed: %s (%d)",
                                 bytes, hisp_cl_error_name(e), (int)e);
    }
    *buf = m;
    return HISP_SUCCESS;
}

void hisp_cl_buf_free(void *be, void *buf)
{
    (void)be;
    if (buf) clReleaseMemObject((cl_mem)buf);
}

hisp_status hisp_cl_buf_write(hisp_context ctx, void *vbe, void *buf, size_t off, const void *src,
                              size_t bytes)
{
    hisp_cl_be *be = vbe;
    if (!bytes) return HISP_SUCCESS;
    cl_int e =
        clEnqueueWriteBuffer(be->queue, (cl_mem)buf, CL_TRUE, off, bytes, src, 0, NULL, NULL);
    if (e != CL_SUCCESS) return hisp_cl_fail(ctx, e, "clEnqueueWriteBuffer");
    hispi_xfer(ctx, HISPI_H2D, bytes);
    return HISP_SUCCESS;
}

static hisp_status read_counted(hisp_context ctx, hisp_cl_be *be, const void *buf, size_t off,
                                void *dst, size_t bytes, int dir)
{
    if (!bytes) return HISP_SUCCESS;
    cl_int e = clEnqueueReadBuffer(be->queue, (cl_mem)buf, CL_TRUE, off, bytes, dst, 0, NULL, NULL);
    if (e != CL_SUCCESS) return hisp_cl_fail(ctx, e, "clEnqueueReadBuffer");
    hispi_xfer(ctx, dir, bytes);
    return HISP_SUCCESS;
}

hisp_status hisp_cl_buf_read(hisp_context ctx, void *vbe, const void *buf, size_t off, void *dst,
                             size_t bytes)
{
    return read_counted(ctx, vbe, buf, off, dst, bytes, HISPI_D2H);
}

hisp_status hisp_cl_ctl_read(hisp_context ctx, void *vbe, const void *buf, size_t off, void *dst,
                             size_t bytes)
{
    return read_counted(ctx, vbe, buf, off, dst, bytes, HISPI_CONTROL);
}

hisp_status hisp_cl_buf_copy(hisp_context ctx, void *vbe, void *dst, const void *src, size_t bytes)
{
    hisp_cl_be *be = vbe;
    if (!bytes) return HISP_SUCCESS;
    cl_int e = clEnqueueCopyBuffer(be->queue, (cl_mem)src, (cl_mem)dst, 0, 0, bytes, 0, NULL, NULL);
    return e == CL_SUCCESS ? HISP_SUCCESS : hisp_cl_fail(ctx, e, "clEnqueueCopyBuffer");
}

/* A mark is the event of a marker command on the profiling queue; its
 * CL_PROFILING_COMMAND_END is when every earlier command had finished
 * (in-order queue). Checked on PoCL 3.1: the difference of two markers
 * around a kernel equals the kernel event's own END - START within
 * microseconds. Some implementations give markers no timestamps (0 or
 * CL_PROFILING_INFO_NOT_AVAILABLE); the instance then switches to host
 * timing: clFinish at each mark and the host clock. */
typedef struct {
    cl_event ev;
    double host_ms;
} hisp_cl_mark;

hisp_status hisp_cl_mark_create(hisp_context ctx, void *be, void **mark)
{
    (void)be;
    return hispi_calloc(ctx, 1, sizeof(hisp_cl_mark), mark);
}

hisp_status hisp_cl_mark_record(hisp_context ctx, void *vbe, void *vmark)
{
    hisp_cl_be *be = vbe;
    hisp_cl_mark *m = vmark;
    if (m->ev) clReleaseEvent(m->ev);
    m->ev = NULL;
    if (be->host_timing) {
        cl_int e = clFinish(be->queue);
        if (e != CL_SUCCESS) return hisp_cl_fail(ctx, e, "clFinish");
        m->host_ms = hispi_now_ms();
        return HISP_SUCCESS;
    }
    m->host_ms = hispi_now_ms();
    cl_int e = clEnqueueMarkerWithWaitList(be->queue, 0, NULL, &m->ev);
    if (e != CL_SUCCESS) {
        m->ev = NULL;
        return hisp_cl_fail(ctx, e, "clEnqueueMarkerWithWaitList");
    }
    return HISP_SUCCESS;
}

hisp_status hisp_cl_mark_elapsed(hisp_context ctx, void *vbe, void *start, void *stop, double *ms)
{
    hisp_cl_be *be = vbe;
    hisp_cl_mark *a = start, *b = stop;
    if (!a->ev || !b->ev) {
        if (a->host_ms == 0 || b->host_ms == 0)
            return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "timing mark was never recorded");
        *ms = b->host_ms > a->host_ms ? b->host_ms - a->host_ms : 0.0; /* host timing */
        return HISP_SUCCESS;
    }
    cl_event evs[2] = {a->ev, b->ev};
    cl_int e = clWaitForEvents(2, evs);
    if (e != CL_SUCCESS) return hisp_cl_fail(ctx, e, "clWaitForEvents");
    cl_ulong t0 = 0, t1 = 0;
    e = clGetEventProfilingInfo(a->ev, CL_PROFILING_COMMAND_END, sizeof t0, &t0, NULL);
    if (e == CL_SUCCESS)
        e = clGetEventProfilingInfo(b->ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
    if (e == CL_PROFILING_INFO_NOT_AVAILABLE || (e == CL_SUCCESS && (t0 == 0 || t1 == 0))) {
        /* markers without timestamps: host timing from now on; this
         * interval is measured on the host and includes enqueue time */
        hispi_debug("opencl: marker events carry no timestamps; timing on the host");
        be->host_timing = 1;
        double now = hispi_now_ms();
        *ms = now > a->host_ms ? now - a->host_ms : 0.0;
        return HISP_SUCCESS;
    }
    if (e != CL_SUCCESS) return hisp_cl_fail(ctx, e, "clGetEventProfilingInfo");
    *ms = t1 > t0 ? (double)(t1 - t0) * 1e-6 : 0.0;
    return HISP_SUCCESS;
}

void hisp_cl_mark_destroy(void *be, void *vmark)
{
    (void)be;
    hisp_cl_mark *m = vmark;
    if (!m) return;
    if (m->ev) clReleaseEvent(m->ev);
    free(m);
}
