/* OpenCL backend: platform and device discovery, once per process.
 *
 * The ICD loader and PoCL initialise lazily on the first clGetPlatformIDs /
 * clGetDeviceIDs, and PoCL 3.1 is not safe against a second thread entering
 * while that runs (the second sees no devices, or crashes in clGetDeviceInfo).
 * So discovery runs under one process-wide lock and its result is kept: every
 * caller, first or later, in any thread, sees the same complete list. Root
 * devices stay valid for the life of the process, so the list is never freed.
 * Only a result that may change (out of memory) is not kept. */
#include "cl_backend.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#ifndef CL_PLATFORM_NOT_FOUND_KHR
#define CL_PLATFORM_NOT_FOUND_KHR -1001
#endif

static pthread_mutex_t disc_mu = PTHREAD_MUTEX_INITIALIZER;
static int disc_done;           /* the fields below are final */
static cl_device_id *disc_devs; /* GPUs first, then the others */
static int disc_n;
static char disc_why[256]; /* why the list is empty ("" when not) */
static int disc_oom;       /* and that reason is a lack of memory */

/* ICD files the loader reads (ocl-icd: $OCL_ICD_VENDORS or /etc/OpenCL/vendors). */
static int icd_files(void)
{
    const char *dir = getenv("OCL_ICD_VENDORS");
    if (!dir || !*dir) dir = "/etc/OpenCL/vendors";
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        n += len > 4 && !strcmp(e->d_name + len - 4, ".icd");
    }
    closedir(d);
    return n;
}

/* An ICD is listed but no platform loaded: was it memory? The loader hides
 * dlopen's reason, so probe for the address space a driver needs (PoCL maps
 * several hundred MiB of LLVM). 1: out of memory (explained in why). */
static int short_of_memory(char *why, size_t size)
{
    if (!icd_files()) return 0;
    const size_t probe = (size_t)256 << 20;
    void *p = mmap(NULL, probe, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p != MAP_FAILED) {
        munmap(p, probe);
        return 0;
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        snprintf(why, size,
                 "out of memory: an OpenCL ICD is installed but none loaded, and the process "
                 "cannot map 256 MiB more (address space limited to %llu MiB, ulimit -v)",
                 (unsigned long long)(rl.rlim_cur >> 20));
    else
        snprintf(why, size,
                 "out of memory: an OpenCL ICD is installed but none loaded, and the process "
                 "cannot map 256 MiB more");
    return 1;
}

static int device_is_gpu(cl_device_id d)
{
    cl_device_type t = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof t, &t, NULL) != CL_SUCCESS) return 0;
    return (t & CL_DEVICE_TYPE_GPU) != 0;
}

/* The discovery itself (under disc_mu). Returns 1 when the result is final,
 * 0 when it is out of memory (why says so; try again later). */
static int discover(void)
{
    const char *why = NULL;
    if (!hisp_cl_fns(&why)) { /* no ICD loader: final, and no OpenCL call is made */
        snprintf(disc_why, sizeof disc_why, "%s", why);
        return 1;
    }
    cl_uint np = 0;
    cl_int e = clGetPlatformIDs(0, NULL, &np);
    if (e == CL_OUT_OF_HOST_MEMORY) {
        snprintf(disc_why, sizeof disc_why, "out of memory: clGetPlatformIDs gave %s",
                 hisp_cl_error_name(e));
        return 0;
    }
    if (e == CL_PLATFORM_NOT_FOUND_KHR || (e == CL_SUCCESS && np == 0)) {
        /* the loader does not try again, so this is final either way */
        disc_oom = short_of_memory(disc_why, sizeof disc_why);
        if (!disc_oom)
            snprintf(disc_why, sizeof disc_why,
                     "no OpenCL platform found (install an ICD such as pocl-opencl-icd)");
        return 1;
    }
    if (e != CL_SUCCESS) { /* a broken ICD setup is "no device", not an error */
        snprintf(disc_why, sizeof disc_why,
                 "OpenCL platform query failed: clGetPlatformIDs gave %s (%d)",
                 hisp_cl_error_name(e), (int)e);
        return 1;
    }
    cl_platform_id *plats = calloc(np, sizeof *plats);
    if (!plats || clGetPlatformIDs(np, plats, NULL) != CL_SUCCESS) {
        free(plats);
        snprintf(disc_why, sizeof disc_why, "out of memory listing %u OpenCL platforms", np);
        return 0;
    }
    cl_device_id *all = NULL;
    size_t nall = 0;
    for (cl_uint p = 0; p < np; p++) {
        cl_uint nd = 0;
        e = clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd);
        if (e != CL_SUCCESS || nd == 0) continue; /* a platform without devices */
        cl_device_id *grown = realloc(all, (nall + nd) * sizeof *all);
        if (!grown) {
            free(all);
            free(plats);
            snprintf(disc_why, sizeof disc_why, "out of memory listing OpenCL devices");
            return 0;
        }
        all = grown;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd, all + nall, NULL) == CL_SUCCESS)
            nall += nd;
    }
    free(plats);
    /* stable partition: GPUs first */
    cl_device_id *sorted = nall ? malloc(nall * sizeof *sorted) : NULL;
    if (nall && !sorted) {
        free(all);
        snprintf(disc_why, sizeof disc_why, "out of memory listing OpenCL devices");
        return 0;
    }
    size_t k = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < nall; i++)
            if (device_is_gpu(all[i]) == (pass == 0)) sorted[k++] = all[i];
    free(all);
    disc_devs = sorted;
    disc_n = (int)nall;
    if (!nall) snprintf(disc_why, sizeof disc_why, "OpenCL platforms found but no devices");
    return 1;
}

hisp_status hisp_cl_devices(hisp_context ctx, cl_device_id **out, int *n)
{
    *out = NULL;
    *n = 0;
    pthread_mutex_lock(&disc_mu);
    if (!disc_done) {
        disc_why[0] = 0;
        disc_oom = 0;
        disc_done = discover();
        if (!disc_done) disc_oom = 1;
    }
    int oom = disc_oom, count = disc_n;
    char why[sizeof disc_why];
    memcpy(why, disc_why, sizeof why);
    cl_device_id *copy = NULL;
    hisp_status s = HISP_SUCCESS;
    if (count) {
        s = hispi_alloc(ctx, (size_t)count, sizeof *copy, (void **)&copy);
        if (!s) memcpy(copy, disc_devs, (size_t)count * sizeof *copy);
    }
    pthread_mutex_unlock(&disc_mu);
    if (s) return s;
    if (oom) return hispi_fail(ctx, HISP_ERR_OUT_OF_HOST_MEMORY, "opencl: %s", why);
    if (!count) hispi_note(ctx, "%s", why);
    *out = copy;
    *n = count;
    return HISP_SUCCESS;
}
