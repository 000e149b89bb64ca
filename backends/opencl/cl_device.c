/* OpenCL backend: device discovery, instances, error mapping, ops table. */
#include "cl_backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CL_PLATFORM_NOT_FOUND_KHR
#define CL_PLATFORM_NOT_FOUND_KHR -1001
#endif

const char *hisp_cl_error_name(cl_int e)
{
    switch (e) {
#define N(x)                                                                                       \
    case x:                                                                                        \
        return #x;
        N(CL_SUCCESS)
        N(CL_DEVICE_NOT_FOUND)
        N(CL_DEVICE_NOT_AVAILABLE)
        N(CL_COMPILER_NOT_AVAILABLE)
        N(CL_MEM_OBJECT_ALLOCATION_FAILURE)
        N(CL_OUT_OF_RESOURCES)
        N(CL_OUT_OF_HOST_MEMORY)
        N(CL_PROFILING_INFO_NOT_AVAILABLE)
        N(CL_MEM_COPY_OVERLAP)
        N(CL_BUILD_PROGRAM_FAILURE)
        N(CL_MAP_FAILURE)
        N(CL_MISALIGNED_SUB_BUFFER_OFFSET)
        N(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
        N(CL_COMPILE_PROGRAM_FAILURE)
        N(CL_LINK_PROGRAM_FAILURE)
        N(CL_INVALID_VALUE)
        N(CL_INVALID_DEVICE_TYPE)
        N(CL_INVALID_PLATFORM)
        N(CL_INVALID_DEVICE)
        N(CL_INVALID_CONTEXT)
        N(CL_INVALID_QUEUE_PROPERTIES)
        N(CL_INVALID_COMMAND_QUEUE)
        N(CL_INVALID_HOST_PTR)
        N(CL_INVALID_MEM_OBJECT)
        N(CL_INVALID_BINARY)
        N(CL_INVALID_BUILD_OPTIONS)
        N(CL_INVALID_PROGRAM)
        N(CL_INVALID_PROGRAM_EXECUTABLE)
        N(CL_INVALID_KERNEL_NAME)
        N(CL_INVALID_KERNEL_DEFINITION)
        N(CL_INVALID_KERNEL)
        N(CL_INVALID_ARG_INDEX)
        N(CL_INVALID_ARG_VALUE)
        N(CL_INVALID_ARG_SIZE)
        N(CL_INVALID_KERNEL_ARGS)
        N(CL_INVALID_WORK_DIMENSION)
        N(CL_INVALID_WORK_GROUP_SIZE)
        N(CL_INVALID_WORK_ITEM_SIZE)
        N(CL_INVALID_GLOBAL_OFFSET)
        N(CL_INVALID_EVENT_WAIT_LIST)
        N(CL_INVALID_EVENT)
        N(CL_INVALID_OPERATION)
        N(CL_INVALID_BUFFER_SIZE)
        N(CL_INVALID_GLOBAL_WORK_SIZE)
        N(CL_INVALID_PROPERTY)
#undef N
    case CL_PLATFORM_NOT_FOUND_KHR:
        return "CL_PLATFORM_NOT_FOUND_KHR";
    default:
        return "unknown OpenCL error";
    }
}

hisp_status hisp_cl_fail(hisp_context ctx, cl_int err, const char *call)
{
    hisp_status s = HISP_ERR_BACKEND;
    if (err == CL_OUT_OF_HOST_MEMORY) s = HISP_ERR_OUT_OF_HOST_MEMORY;
    /* lazy allocation: an oversized buffer may fail at its first use */
    else if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE)
        s = HISP_ERR_OUT_OF_DEVICE_MEMORY;
    return hispi_fail_native(ctx, s, err, "OpenCL %s failed: %s (%d)", call,
                             hisp_cl_error_name(err), (int)err);
}

void hisp_cl_device_string(cl_device_id d, cl_device_info what, char *out, size_t size)
{
    out[0] = 0;
    size_t got = 0;
    if (clGetDeviceInfo(d, what, size, out, &got) != CL_SUCCESS) {
        /* too long for the buffer: fetch whole and truncate */
        if (clGetDeviceInfo(d, what, 0, NULL, &got) != CL_SUCCESS || !got) return;
        char *tmp = malloc(got);
        if (!tmp) return;
        if (clGetDeviceInfo(d, what, got, tmp, NULL) == CL_SUCCESS) snprintf(out, size, "%s", tmp);
        free(tmp);
    }
    out[size - 1] = 0;
}

int hisp_cl_has_extension(cl_device_id d, const char *ext)
{
    size_t n = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, NULL, &n) != CL_SUCCESS || !n) return 0;
    char *s = malloc(n + 1);
    if (!s) return 0;
    int found = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, n, s, NULL) == CL_SUCCESS) {
        s[n] = 0;
        size_t len = strlen(ext);
        for (char *p = strstr(s, ext); p && !found; p = strstr(p + 1, ext))
            found = (p == s || p[-1] == ' ') && (p[len] == 0 || p[len] == ' ');
    }
    free(s);
    return found;
}

static hisp_status hisp_cl_dev_count(hisp_context ctx, int *count)
{
    cl_device_id *d = NULL;
    hisp_status s = hisp_cl_devices(ctx, &d, count);
    free(d);
    return s;
}

static hisp_status device_at(hisp_context ctx, int index, cl_device_id *dev)
{
    cl_device_id *d = NULL;
    int n = 0;
    HISPI_TRY(hisp_cl_devices(ctx, &d, &n));
    if (index < 0 || index >= n) {
        free(d);
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "opencl: device %d requested, %d available", index, n);
    }
    *dev = d[index];
    free(d);
    return HISP_SUCCESS;
}

static int device_fp64(cl_device_id d)
{
    cl_device_fp_config fp = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp, &fp, NULL) == CL_SUCCESS &&
        fp != 0)
        return 1;
    return hisp_cl_has_extension(d, "cl_khr_fp64");
}

static hisp_status hisp_cl_dev_info(hisp_context ctx, int index, hisp_device_info *info)
{
    cl_device_id d = NULL;
    HISPI_TRY(device_at(ctx, index, &d));
    memset(info, 0, sizeof *info);
    info->backend = HISP_BACKEND_OPENCL;
    info->index = index;
    cl_platform_id p = NULL;
    if (clGetDeviceInfo(d, CL_DEVICE_PLATFORM, sizeof p, &p, NULL) == CL_SUCCESS &&
        clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof info->platform, info->platform, NULL) !=
            CL_SUCCESS)
        info->platform[0] = 0;
    info->platform[sizeof info->platform - 1] = 0;
    hisp_cl_device_string(d, CL_DEVICE_NAME, info->name, sizeof info->name);
    hisp_cl_device_string(d, CL_DEVICE_VENDOR, info->vendor, sizeof info->vendor);
    hisp_cl_device_string(d, CL_DRIVER_VERSION, info->driver, sizeof info->driver);
    cl_device_type t = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof t, &t, NULL) == CL_SUCCESS) {
        info->is_gpu = (t & CL_DEVICE_TYPE_GPU) != 0;
        info->is_cpu = (t & CL_DEVICE_TYPE_CPU) != 0;
    }
    cl_uint cu = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL) == CL_SUCCESS)
        info->compute_units = (int)cu;
    info->fp64 = device_fp64(d);
    cl_ulong mem = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL) == CL_SUCCESS)
        info->global_mem = mem;
    return HISP_SUCCESS;
}

static void hisp_cl_fini(void *vbe)
{
    hisp_cl_be *be = vbe;
    if (!be) return;
    if (be->queue) clFinish(be->queue);
    hisp_cl_programs_release(be);
    if (be->queue) clReleaseCommandQueue(be->queue);
    if (be->context) clReleaseContext(be->context);
    if (be->sub) clReleaseDevice(be->sub);
    free(be);
}

/* Open device d (a root device or a sub-device whose reference passes to
 * the instance). uq: the caller's queue on d (hisp_context_set_stream), or
 * NULL for a context and queue of the instance's own. */
static hisp_status open_device(hisp_context ctx, cl_device_id d, cl_device_id sub,
                               cl_command_queue uq, void **out)
{
    hisp_cl_be *be = NULL;
    hisp_status st = hispi_calloc(ctx, 1, sizeof *be, (void **)&be);
    if (st) {
        if (sub) clReleaseDevice(sub);
        return st;
    }
    be->device = d;
    be->sub = sub;
    cl_int e = clGetDeviceInfo(d, CL_DEVICE_PLATFORM, sizeof be->platform, &be->platform, NULL);
    if (e != CL_SUCCESS) goto fail_call_platform;
    cl_device_type t = 0;
    clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof t, &t, NULL);
    be->is_gpu = (t & CL_DEVICE_TYPE_GPU) != 0;
    be->is_cpu = (t & CL_DEVICE_TYPE_CPU) != 0;
    be->fp64 = device_fp64(d);
    be->int64_atomics = hisp_cl_has_extension(d, "cl_khr_int64_base_atomics");
    clGetDeviceInfo(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof be->compute_units, &be->compute_units,
                    NULL);
    if (be->compute_units < 1) be->compute_units = 1;
    clGetDeviceInfo(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof be->max_alloc, &be->max_alloc, NULL);
    clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof be->max_wg, &be->max_wg, NULL);
    if (be->max_wg < 1) be->max_wg = 1;
    be->vector_ls = 1;
    while (be->vector_ls < 256 && be->vector_ls * 2 <= be->max_wg)
        be->vector_ls *= 2;
    {
        cl_ulong lm = 0;
        if (clGetDeviceInfo(d, CL_DEVICE_LOCAL_MEM_SIZE, sizeof lm, &lm, NULL) == CL_SUCCESS)
            be->local_mem = (size_t)lm;
    }
    be->nv_opts = hisp_cl_has_extension(d, "cl_nv_compiler_options");
    hisp_cl_device_string(d, CL_DEVICE_NAME, be->name, sizeof be->name);
    hisp_cl_device_string(d, CL_DRIVER_VERSION, be->driver, sizeof be->driver);
    if (clGetPlatformInfo(be->platform, CL_PLATFORM_NAME, sizeof be->platform_name,
                          be->platform_name, NULL) != CL_SUCCESS)
        be->platform_name[0] = 0;
    be->platform_name[sizeof be->platform_name - 1] = 0;
    {
        /* NVIDIA's platform compiles OpenCL C to PTX and accepts inline PTX
         * (red.global.add; a failed build steps the level down, see
         * csr_block.cl) */
        be->nv_asm = be->is_gpu && strstr(be->platform_name, "NVIDIA") != NULL ? 2 : 0;
    }

    if (uq) { /* the caller's queue and its context, retained while in use */
        cl_context c = NULL;
        cl_command_queue_properties qp = 0;
        e = clGetCommandQueueInfo(uq, CL_QUEUE_CONTEXT, sizeof c, &c, NULL);
        if (e == CL_SUCCESS)
            e = clGetCommandQueueInfo(uq, CL_QUEUE_PROPERTIES, sizeof qp, &qp, NULL);
        if (e == CL_SUCCESS) e = clRetainContext(c);
        if (e != CL_SUCCESS) {
            hisp_cl_fini(be);
            return hisp_cl_fail(ctx, e, "clGetCommandQueueInfo (the caller's queue)");
        }
        be->context = c;
        if ((e = clRetainCommandQueue(uq)) != CL_SUCCESS) {
            hisp_cl_fini(be);
            return hisp_cl_fail(ctx, e, "clRetainCommandQueue");
        }
        be->queue = uq;
        be->user_queue = 1;
        /* marks need timestamps; without them they time on the host */
        be->host_timing = (qp & CL_QUEUE_PROFILING_ENABLE) == 0;
        *out = be;
        return HISP_SUCCESS;
    }
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)be->platform, 0};
    be->context = clCreateContext(props, 1, &d, NULL, NULL, &e);
    if (e != CL_SUCCESS) {
        hisp_cl_fini(be);
        return hisp_cl_fail(ctx, e, "clCreateContext");
    }
    be->queue = clCreateCommandQueue(be->context, d, CL_QUEUE_PROFILING_ENABLE, &e);
    if (e != CL_SUCCESS) {
        hisp_cl_fini(be);
        return hisp_cl_fail(ctx, e, "clCreateCommandQueue");
    }
    hispi_debug("opencl: opened %s (%s), fp64=%d int64 atomics=%d", be->name, be->platform_name,
                be->fp64, be->int64_atomics);
    *out = be;
    return HISP_SUCCESS;
fail_call_platform:
    hisp_cl_fini(be);
    return hisp_cl_fail(ctx, e, "clGetDeviceInfo(CL_DEVICE_PLATFORM)");
}

static hisp_status hisp_cl_init(hisp_context ctx, int index, void **out)
{
    cl_device_id d = NULL;
    HISPI_TRY(device_at(ctx, index, &d));
    return open_device(ctx, d, NULL, NULL, out);
}

/* MSREP on one OpenCL device: part `sub` of `nsub` sub-devices with about
 * equal compute units each (CL_DEVICE_PARTITION_BY_COUNTS; PoCL 3.1 supports
 * it on CPUs, up to one sub-device per core). */
static hisp_status hisp_cl_init_sub(hisp_context ctx, int index, int sub, int nsub, void **out)
{
    cl_device_id d = NULL;
    HISPI_TRY(device_at(ctx, index, &d));
    cl_uint cu = 0, maxsub = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL) != CL_SUCCESS ||
        clGetDeviceInfo(d, CL_DEVICE_PARTITION_MAX_SUB_DEVICES, sizeof maxsub, &maxsub, NULL) !=
            CL_SUCCESS ||
        nsub < 1 || sub < 0 || sub >= nsub || (cl_uint)nsub > cu || (cl_uint)nsub > maxsub)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                          "opencl device %d: no %d sub-devices (%u compute units, at most %u "
                          "sub-devices)",
                          index, nsub, cu, maxsub);
    cl_device_partition_property props[64 + 3];
    if (nsub > 64) return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "at most 64 sub-devices");
    props[0] = CL_DEVICE_PARTITION_BY_COUNTS;
    for (int k = 0; k < nsub; k++) /* spread the remainder over the first parts */
        props[1 + k] =
            (cl_device_partition_property)(cu / (cl_uint)nsub + ((cl_uint)k < cu % (cl_uint)nsub));
    props[1 + nsub] = CL_DEVICE_PARTITION_BY_COUNTS_LIST_END;
    props[2 + nsub] = 0;
    cl_device_id subs[64];
    cl_uint got = 0;
    cl_int e = clCreateSubDevices(d, props, (cl_uint)nsub, subs, &got);
    if (e != CL_SUCCESS || got != (cl_uint)nsub) {
        for (cl_uint k = 0; e == CL_SUCCESS && k < got; k++)
            clReleaseDevice(subs[k]);
        return hispi_fail_native(ctx, HISP_ERR_UNSUPPORTED, e,
                                 "opencl device %d: clCreateSubDevices into %d failed (%s)", index,
                                 nsub, hisp_cl_error_name(e));
    }
    for (int k = 0; k < nsub; k++)
        if (k != sub) clReleaseDevice(subs[k]);
    return open_device(ctx, subs[sub], subs[sub], NULL, out);
}

static hisp_status hisp_cl_sync(hisp_context ctx, void *vbe)
{
    hisp_cl_be *be = vbe;
    cl_int e = clFinish(be->queue);
    return e == CL_SUCCESS ? HISP_SUCCESS : hisp_cl_fail(ctx, e, "clFinish");
}

/* MSREP NUMA placement: the PCI address through cl_khr_pci_bus_info, or
 * NVIDIA's attributes; CPU devices have none. */
static hisp_status hisp_cl_device_pci(hisp_context ctx, int index, char *busid, size_t size)
{
    cl_device_id d = NULL;
    HISPI_TRY(device_at(ctx, index, &d));
    cl_uint v[4] = {0, 0, 0, 0}; /* domain, bus, device, function */
    if (hisp_cl_has_extension(d, "cl_khr_pci_bus_info") &&
        clGetDeviceInfo(d, 0x410F /* CL_DEVICE_PCI_BUS_INFO_KHR */, sizeof v, v, NULL) ==
            CL_SUCCESS) {
        snprintf(busid, size, "%04x:%02x:%02x.%x", v[0], v[1], v[2], v[3]);
        return HISP_SUCCESS;
    }
    if (hisp_cl_has_extension(d, "cl_nv_device_attribute_query") &&
        clGetDeviceInfo(d, 0x4008 /* CL_DEVICE_PCI_BUS_ID_NV */, sizeof v[1], &v[1], NULL) ==
            CL_SUCCESS &&
        clGetDeviceInfo(d, 0x4009 /* CL_DEVICE_PCI_SLOT_ID_NV */, sizeof v[2], &v[2], NULL) ==
            CL_SUCCESS) {
        if (clGetDeviceInfo(d, 0x400A /* CL_DEVICE_PCI_DOMAIN_ID_NV */, sizeof v[0], &v[0], NULL) !=
            CL_SUCCESS)
            v[0] = 0;
        /* the slot id packs device << 3 | function */
        snprintf(busid, size, "%04x:%02x:%02x.%x", v[0], v[1], v[2] >> 3, v[2] & 7);
        return HISP_SUCCESS;
    }
    return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "opencl device %d has no PCI address", index);
}

/* ---- memory and queues of the caller ---------------------------------- */

static hisp_status hisp_cl_buf_check(hisp_context ctx, void *vbe, void *mem, size_t bytes,
                                     const char *what)
{
    hisp_cl_be *be = vbe;
    cl_context c = NULL;
    size_t size = 0;
    cl_int e = clGetMemObjectInfo((cl_mem)mem, CL_MEM_CONTEXT, sizeof c, &c, NULL);
    if (e == CL_SUCCESS) e = clGetMemObjectInfo((cl_mem)mem, CL_MEM_SIZE, sizeof size, &size, NULL);
    if (e != CL_SUCCESS)
        return hispi_fail_native(ctx, HISP_ERR_INVALID_ARGUMENT, e,
                                 "opencl: %s is not a cl_mem (%s)", what, hisp_cl_error_name(e));
    if (c != be->context)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "opencl: %s belongs to another cl_context than hisp works in (set "
                          "the caller's queue with hisp_context_set_stream first)",
                          what);
    if (size < bytes)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "opencl: %s holds %zu bytes, %zu needed",
                          what, size, bytes);
    return HISP_SUCCESS;
}

static hisp_status hisp_cl_buf_retain(hisp_context ctx, void *vbe, void *mem)
{
    (void)vbe;
    cl_int e = clRetainMemObject((cl_mem)mem);
    return e == CL_SUCCESS ? HISP_SUCCESS : hisp_cl_fail(ctx, e, "clRetainMemObject");
}

static hisp_status hisp_cl_buf_sub(hisp_context ctx, void *vbe, void *buf, size_t off, size_t bytes,
                                   void **sub, bool *owned)
{
    (void)vbe;
    cl_buffer_region reg = {off, bytes};
    cl_int e = CL_SUCCESS;
    cl_mem m =
        clCreateSubBuffer((cl_mem)buf, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &reg, &e);
    if (e != CL_SUCCESS) return hisp_cl_fail(ctx, e, "clCreateSubBuffer");
    *sub = m;
    *owned = true;
    return HISP_SUCCESS;
}

/* The flat index of d (or of the root device of a sub-device), -1 if none. */
static int device_index(hisp_context ctx, cl_device_id d)
{
    cl_device_id *list = NULL;
    int n = 0, found = -1;
    if (hisp_cl_devices(ctx, &list, &n) != HISP_SUCCESS) return -1;
    for (int hop = 0; hop < 8 && d && found < 0; hop++) {
        for (int i = 0; i < n && found < 0; i++)
            if (list[i] == d) found = i;
        cl_device_id parent = NULL;
        if (clGetDeviceInfo(d, CL_DEVICE_PARENT_DEVICE, sizeof parent, &parent, NULL) != CL_SUCCESS)
            break;
        d = parent;
    }
    free(list);
    return found;
}

static hisp_status hisp_cl_stream_set(hisp_context ctx, void *vbe, void *stream, void **new_be,
                                      int *device)
{
    hisp_cl_be *be = vbe;
    cl_command_queue q = stream;
    *new_be = NULL;
    if (!q) { /* back to a queue and context of hisp's own */
        if (!be->user_queue) return HISP_SUCCESS;
        int i = device_index(ctx, be->device);
        if (i < 0)
            return hispi_fail(ctx, HISP_ERR_NO_DEVICE, "opencl: the device is no longer listed");
        *device = i;
        return open_device(ctx, be->device, NULL, NULL, new_be);
    }
    cl_context c = NULL;
    cl_device_id d = NULL;
    cl_command_queue_properties qp = 0;
    cl_int e = clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof c, &c, NULL);
    if (e == CL_SUCCESS) e = clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof d, &d, NULL);
    if (e == CL_SUCCESS) e = clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof qp, &qp, NULL);
    if (e != CL_SUCCESS)
        return hispi_fail_native(ctx, HISP_ERR_INVALID_ARGUMENT, e,
                                 "opencl: the stream is not a cl_command_queue (%s)",
                                 hisp_cl_error_name(e));
    if (qp & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                          "opencl: hisp needs an in-order queue (this one is out of order)");
    int i = device_index(ctx, d);
    if (i < 0)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                          "opencl: the queue's device is not one hisp lists");
    if (c == be->context && d == be->device) { /* the same context: switch in place */
        e = clRetainCommandQueue(q);
        if (e == CL_SUCCESS) e = clFinish(be->queue);
        if (e != CL_SUCCESS) return hisp_cl_fail(ctx, e, "switching queues");
        clReleaseCommandQueue(be->queue);
        be->queue = q;
        be->user_queue = 1; /* the context is retained either way */
        be->host_timing = (qp & CL_QUEUE_PROFILING_ENABLE) == 0;
        return HISP_SUCCESS;
    }
    *device = i;
    return open_device(ctx, d, NULL, q, new_be);
}

static void *hisp_cl_stream_get(void *vbe)
{
    return ((hisp_cl_be *)vbe)->queue;
}

const hisp_backend_ops hisp_cl_ops = {
    .name = "opencl",
    .kind = HISP_BACKEND_OPENCL,
    .device_count = hisp_cl_dev_count,
    .device_info = hisp_cl_dev_info,
    .init = hisp_cl_init,
    .fini = hisp_cl_fini,
    .synchronize = hisp_cl_sync,
    .buf_alloc = hisp_cl_buf_alloc,
    .buf_free = hisp_cl_buf_free,
    .buf_write = hisp_cl_buf_write,
    .buf_read = hisp_cl_buf_read,
    .buf_copy = hisp_cl_buf_copy,
    .mark_create = hisp_cl_mark_create,
    .mark_record = hisp_cl_mark_record,
    .mark_elapsed = hisp_cl_mark_elapsed,
    .mark_destroy = hisp_cl_mark_destroy,
    .csr_upload = hisp_cl_csr_upload,
    .csr_upload_opts = hisp_cl_csr_upload_opts,
    .csr_caps = HISPI_CSR_GPTR,
    .csr_free = hisp_cl_csr_free,
    .csr_spmv = hisp_cl_csr_spmv,
    .csr_spmm = hisp_cl_csr_spmm,
    .hisparse_upload = hisp_cl_hs_upload,
    .hisparse_free = hisp_cl_hs_free,
    .hisparse_spmv = hisp_cl_hs_spmv,
    .device_pci = hisp_cl_device_pci,
    .init_sub = hisp_cl_init_sub,
    .kern_caps = hisp_cl_kern_caps,
    .kern_get = hisp_cl_kern_get,
    .kern_free = hisp_cl_kern_free,
    .kern_launch = hisp_cl_kern_launch,
    .buf_zero = hisp_cl_buf_zero,
    .buf_check = hisp_cl_buf_check,
    .buf_retain = hisp_cl_buf_retain,
    .buf_sub = hisp_cl_buf_sub,
    .stream_set = hisp_cl_stream_set,
    .stream_get = hisp_cl_stream_get,
    .csr_wrap = hisp_cl_csr_wrap,
    .csr_arrays = hisp_cl_csr_arrays,
};
