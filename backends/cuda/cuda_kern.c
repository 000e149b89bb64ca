/* CUDA backend: the run-time kernels of kernels/ (the programs whose
 * HISPI_PROGRAMS line says cuda), from the same source and defines as
 * OpenCL.
 *
 * A variant whose options the build knows (tools/kernels_prebuild.c lists
 * them: the vector algebra, AMG, ILU, the scan, SpGEMM's first programs,
 * the HiSparse addition at the default node size, on a GPU as NVIDIA's
 * are) was compiled when hisp was built, for the build's cuda_arch list
 * (build/gen/cuda_prebuilt.c): it is loaded from the library, without
 * NVRTC or the disk. Every other one (options that depend on the matrix:
 * the compound layouts, SELL, SpGEMM's bitmap kernels, other node sizes)
 * goes through NVRTC, opened at the first such build (cuda_dl.c: a program
 * must start where it is missing). A cubin for the device's
 * sm_XY is loaded with cudaLibraryLoadData (runtime API, no -lcuda).
 * Built modules are cached per process under (device, source hash, options,
 * NVRTC version) and on disk as cubins in the kernel cache folder
 * (the context's cache_dir option, else $XDG_CACHE_HOME/hisp, else
 * ~/.cache/hisp; "off" disables it), each a validated entry (core/base/cache_file.c: length and
 * checksum): a damaged or old-format file is never handed to the driver,
 * it is rebuilt and replaced. Modules stay loaded until the process ends. */
#include "backend/backend.h"
#include "cuda_dl.h"
#include "cuda_err.h"
#include "cuda_hisparse.h"
#include "cuda_kern.h"

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct module {
    struct module *next;
    int device;
    uint64_t key;
    cudaLibrary_t lib;
} module;

static module *modules;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static hisp_status need_nvrtc(hisp_context ctx)
{
    const hisp_cuda_nvrtc_fns *t;
    return hisp_cuda_nvrtc(ctx, &t);
}

/* The table, where need_nvrtc succeeded before (the same table every time). */
static const hisp_cuda_nvrtc_fns *nvrtc(void)
{
    const hisp_cuda_nvrtc_fns *t = NULL;
    (void)hisp_cuda_nvrtc(NULL, &t);
    return t;
}

/* The text NVRTC compiles: the prelude (kernels/common.cl), then the
 * program's file; NULL for a program CUDA does not compile. */
static const char *prog_src(int prog)
{
    return prog >= 0 && prog < HISPI_PROG_COUNT ? hispi_programs[prog].cuda_src : NULL;
}

static const char *prog_name(int prog)
{
    return hispi_programs[prog].file;
}

/* Device dev's properties, read once per process: cudaGetDeviceProperties
 * queries every attribute, and an operation asks for its kernels (and so
 * for the properties) at each call. */
enum { MAX_DEV = 64 };
static struct cudaDeviceProp dev_props[MAX_DEV];
static bool dev_known[MAX_DEV];

static hisp_status props_of(hisp_context ctx, int dev, struct cudaDeviceProp *p)
{
    bool kept = dev >= 0 && dev < MAX_DEV;
    if (kept) {
        pthread_mutex_lock(&lock);
        bool known = dev_known[dev];
        if (known) *p = dev_props[dev];
        pthread_mutex_unlock(&lock);
        if (known) return HISP_SUCCESS;
    }
    cudaError_t e = cudaGetDeviceProperties(p, dev);
    if (e != cudaSuccess) return hisp_cuda_fail(ctx, e, "cudaGetDeviceProperties");
    if (kept) {
        pthread_mutex_lock(&lock);
        dev_props[dev] = *p;
        dev_known[dev] = true;
        pthread_mutex_unlock(&lock);
    }
    return HISP_SUCCESS;
}

hisp_status hisp_cuda_kern_caps(hisp_context ctx, void *be, hispi_kcaps *c)
{
    int dev;
    cudaStream_t st;
    hisp_cuda_be_stream(be, &dev, &st);
    struct cudaDeviceProp p;
    HISPI_TRY(props_of(ctx, dev, &p));
    int rt = 0; /* not NVRTC's version: opening NVRTC costs ~0.1 s, and the
                 * build's cubins need none */
    (void)cudaRuntimeGetVersion(&rt);
    memset(c, 0, sizeof *c);
    c->max_group = p.maxThreadsPerBlock;
    c->simd = p.warpSize;
    c->local_mem = (int64_t)p.sharedMemPerBlock; /* static: 48 KiB */
    c->compute_units = p.multiProcessorCount;
    c->launch_bounds = 1;
    snprintf(c->compiler, sizeof c->compiler, "cuda %d sm_%d%d", rt, p.major, p.minor);
    return HISP_SUCCESS;
}

/* One NVRTC build, without a context (prebuild runs it on several threads):
 * program pid with opts for sm_XY. On success *cubin is malloc'd; on failure
 * why (and *log, malloc'd, when NVRTC has one) say why. */
typedef struct {
    char *cubin, *log;
    size_t size;
    nvrtcResult r; /* NVRTC_SUCCESS unless NVRTC failed */
    char why[160]; /* the failure, when there is one */
} build_out;

static bool compile_raw(int pid, const char *opts, int major, int minor, build_out *o)
{
    const hisp_cuda_nvrtc_fns *nv = nvrtc();
    char buf[1024], arch[64];
    memset(o, 0, sizeof *o);
    if ((size_t)snprintf(buf, sizeof buf, "%s", opts) >= sizeof buf) {
        snprintf(o->why, sizeof o->why, "build options longer than %zu bytes", sizeof buf - 1);
        return false;
    }
    snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d%d", major, minor);
    const char *argv[48];
    int argc = 0;
    argv[argc++] = arch;
    argv[argc++] = "-std=c++17";
    /* strtok_r: strtok's hidden state would break a caller's own strtok loop */
    char *save = NULL;
    for (char *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        if (argc == (int)(sizeof argv / sizeof argv[0])) {
            snprintf(o->why, sizeof o->why, "more than %d build options", argc - 2);
            return false;
        }
        argv[argc++] = t;
    }
    nvrtcProgram prog = NULL;
    o->r = nv->nvrtcCreateProgram(&prog, prog_src(pid), prog_name(pid), 0, NULL, NULL);
    if (o->r != NVRTC_SUCCESS) {
        snprintf(o->why, sizeof o->why, "nvrtcCreateProgram: %s", nv->nvrtcGetErrorString(o->r));
        return false;
    }
    o->r = nv->nvrtcCompileProgram(prog, argc, argv);
    if (o->r != NVRTC_SUCCESS) {
        size_t n = 0;
        if (nv->nvrtcGetProgramLogSize(prog, &n) == NVRTC_SUCCESS && n &&
            (o->log = malloc(n + 1))) {
            if (nv->nvrtcGetProgramLog(prog, o->log) != NVRTC_SUCCESS) o->log[0] = 0;
            o->log[n] = 0;
        }
        snprintf(o->why, sizeof o->why, "compile failed: %s", nv->nvrtcGetErrorString(o->r));
        nv->nvrtcDestroyProgram(&prog);
        return false;
    }
    o->r = nv->nvrtcGetCUBINSize(prog, &o->size);
    if (o->r == NVRTC_SUCCESS) {
        if (!(o->cubin = malloc(o->size ? o->size : 1))) {
            snprintf(o->why, sizeof o->why, "out of host memory (%zu bytes)", o->size);
            nv->nvrtcDestroyProgram(&prog);
            return false;
        }
        o->r = nv->nvrtcGetCUBIN(prog, o->cubin);
    }
    nv->nvrtcDestroyProgram(&prog);
    if (o->r != NVRTC_SUCCESS) {
        free(o->cubin);
        o->cubin = NULL;
        snprintf(o->why, sizeof o->why, "nvrtcGetCUBIN: %s", nv->nvrtcGetErrorString(o->r));
        return false;
    }
    return true;
}

/* compile_raw with the failure recorded in ctx; *cubin malloc'd. */
static hisp_status compile(hisp_context ctx, int pid, const char *opts, int major, int minor,
                           char **cubin, size_t *size)
{
    build_out o;
    if (compile_raw(pid, opts, major, minor, &o)) {
        *cubin = o.cubin;
        *size = o.size;
        return HISP_SUCCESS;
    }
    hisp_status s = o.r == NVRTC_ERROR_OUT_OF_MEMORY || strstr(o.why, "out of host memory")
                        ? hispi_fail(ctx, HISP_ERR_OUT_OF_HOST_MEMORY, "NVRTC: %s", o.why)
                        : hispi_fail_native(ctx, HISP_ERR_KERNEL_BUILD, o.r,
                                            "NVRTC %s, options \"%s\"", o.why, opts);
    if (o.log) hispi_set_build_log(ctx, o.log);
    free(o.log);
    return s;
}

hisp_status hisp_cuda_rtc_cubin(hisp_context ctx, int prog, const char *opts, int major, int minor,
                                char **cubin, size_t *cubin_bytes)
{
    HISPI_TRY(need_nvrtc(ctx));
    if (!prog_src(prog))
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "unknown program %d", prog);
    char *c = NULL;
    HISPI_TRY(compile(ctx, prog, opts, major, minor, &c, cubin_bytes));
    if (cubin)
        *cubin = c;
    else
        free(c);
    return HISP_SUCCESS;
}

/* The build's cubin of (prog, opts) for sm_XY, or NULL. */
static const hisp_cuda_prebuilt *prebuilt(int prog, const char *opts, int major, int minor)
{
    for (int i = 0; i < hisp_cuda_prebuilt_count; i++) {
        const hisp_cuda_prebuilt *b = &hisp_cuda_prebuilt_table[i];
        if (b->prog == prog && b->arch == major * 10 + minor && !strcmp(b->opts, opts)) return b;
    }
    return NULL;
}

/* A cached cubin that kern_get will take (a damaged one is built again). */
static bool cache_valid(const char *path)
{
    void *b = NULL;
    size_t n = 0;
    bool ok = hispi_cache_read(path, &b, &n) > 0 && n > 0;
    free(b);
    return ok;
}

/* A module's key: source (its hash taken once per process), options,
 * NVRTC version (none for the build's cubins), device. */
static uint64_t module_key(int prog, const char *opts, const struct cudaDeviceProp *p, bool pre)
{
    static uint64_t src_key[HISPI_PROG_COUNT];
    static bool src_known[HISPI_PROG_COUNT];
    pthread_mutex_lock(&lock);
    if (!src_known[prog]) {
        const char *src = prog_src(prog);
        src_key[prog] = hispi_hash(src, strlen(src), 0x6e7672746300ull);
        src_known[prog] = true;
    }
    uint64_t key = src_key[prog];
    pthread_mutex_unlock(&lock);
    key = hispi_hash(opts, strlen(opts) + 1, key);
    int ver[4] = {-1, -1, p->major, p->minor};
    if (!pre) ver[0] = nvrtc()->major, ver[1] = nvrtc()->minor;
    key = hispi_hash(ver, sizeof ver, key);
    return hispi_hash(p->name, strlen(p->name) + 1, key);
}

static module *find_module(int dev, uint64_t key)
{
    pthread_mutex_lock(&lock);
    module *m = modules;
    while (m && !(m->device == dev && m->key == key))
        m = m->next;
    pthread_mutex_unlock(&lock);
    return m;
}

/* Keep the loaded library as module (dev, key). */
static hisp_status add_module(hisp_context ctx, int dev, uint64_t key, cudaLibrary_t lib,
                              module **out)
{
    module *m = NULL;
    hisp_status s = hispi_calloc(ctx, 1, sizeof *m, (void **)&m);
    if (s) {
        (void)cudaLibraryUnload(lib);
        return s;
    }
    m->device = dev;
    m->key = key;
    m->lib = lib;
    pthread_mutex_lock(&lock);
    m->next = modules;
    modules = m;
    pthread_mutex_unlock(&lock);
    *out = m;
    return HISP_SUCCESS;
}

static hisp_status device_props(hisp_context ctx, void *be, int *dev, struct cudaDeviceProp *p)
{
    cudaStream_t st;
    hisp_cuda_be_stream(be, dev, &st);
    cudaError_t e = cudaSetDevice(*dev);
    if (e != cudaSuccess) return hisp_cuda_fail(ctx, e, "cudaSetDevice");
    return props_of(ctx, *dev, p);
}

hisp_status hisp_cuda_kern_get(hisp_context ctx, void *be, int prog, const char *opts,
                               const char *name, void **k)
{
    const char *src = prog_src(prog);
    if (!src) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "unknown program %d", prog);
    int dev;
    struct cudaDeviceProp p;
    HISPI_TRY(device_props(ctx, be, &dev, &p));
    const hisp_cuda_prebuilt *pb = prebuilt(prog, opts, p.major, p.minor);
    if (!pb) HISPI_TRY(need_nvrtc(ctx));
    uint64_t key = module_key(prog, opts, &p, pb != NULL);
    module *m = find_module(dev, key);
    cudaError_t e;
    if (!m && pb) { /* compiled with the library: no NVRTC, no disk */
        double t0 = hispi_now_ms();
        cudaLibrary_t lib = NULL;
        e = cudaLibraryLoadData(&lib, pb->cubin, NULL, NULL, 0, NULL, NULL, 0);
        if (e != cudaSuccess) return hisp_cuda_fail(ctx, e, "cudaLibraryLoadData (prebuilt)");
        hispi_build_count(ctx, true, 1, hispi_now_ms() - t0);
        HISPI_TRY(add_module(ctx, dev, key, lib, &m));
    }
    if (!m) {
        char path[1024];
        size_t n = 0;
        char *cubin = NULL;
        double t0 = hispi_now_ms();
        int cacheable = hispi_cache_file(ctx, "cu", key, "cubin", path, sizeof path);
        if (cacheable && hispi_cache_read(path, (void **)&cubin, &n) < 0)
            hispi_debug("cuda: %s is not a valid cache entry: rebuilding", path);
        if (cubin && n == 0) {
            free(cubin);
            cubin = NULL;
        }
        cudaLibrary_t lib = NULL;
        if (cubin &&
            cudaLibraryLoadData(&lib, cubin, NULL, NULL, 0, NULL, NULL, 0) != cudaSuccess) {
            (void)cudaGetLastError(); /* a stale file: rebuild */
            free(cubin);
            cubin = NULL;
            lib = NULL;
        }
        if (lib) {
            hispi_build_count(ctx, true, 1, hispi_now_ms() - t0);
        } else {
            hispi_build_begin(ctx, p.name, 1);
            HISPI_TRY(compile(ctx, prog, opts, p.major, p.minor, &cubin, &n));
            e = cudaLibraryLoadData(&lib, cubin, NULL, NULL, 0, NULL, NULL, 0);
            if (e != cudaSuccess) {
                free(cubin);
                return hisp_cuda_fail(ctx, e, "cudaLibraryLoadData");
            }
            if (cacheable) /* a cache: best effort */
                (void)hispi_cache_write(path, cubin, n);
            hispi_build_count(ctx, false, 1, hispi_now_ms() - t0);
        }
        free(cubin);
        HISPI_TRY(add_module(ctx, dev, key, lib, &m));
    }
    cudaKernel_t kern = NULL;
    e = cudaLibraryGetKernel(&kern, m->lib, name);
    if (e != cudaSuccess) return hisp_cuda_fail(ctx, e, "cudaLibraryGetKernel");
    *k = (void *)kern;
    return HISP_SUCCESS;
}

/* ---- prebuild: many variants on several host threads --------------------- */

typedef struct {
    int prog, major, minor, n;
    const char *const *opts;
    const bool *todo;
    build_out *out;
    atomic_int next;
} prebuild_job;

static void *prebuild_worker(void *arg)
{
    prebuild_job *j = arg;
    for (int i; (i = atomic_fetch_add(&j->next, 1)) < j->n;)
        if (j->todo[i]) (void)compile_raw(j->prog, j->opts[i], j->major, j->minor, &j->out[i]);
    return NULL;
}

hisp_status hisp_cuda_kern_prebuild(hisp_context ctx, void *be, int prog, const char *const *opts,
                                    int n)
{
    const char *src = prog_src(prog);
    if (!src) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "unknown program %d", prog);
    if (n <= 0) return HISP_SUCCESS;
    HISPI_TRY(need_nvrtc(ctx));
    int dev;
    struct cudaDeviceProp p;
    HISPI_TRY(device_props(ctx, be, &dev, &p));
    bool *todo = NULL;
    build_out *out = NULL;
    uint64_t *key = NULL;
    hisp_status s = hispi_calloc(ctx, (size_t)n, sizeof *todo, (void **)&todo);
    if (!s) s = hispi_calloc(ctx, (size_t)n, sizeof *out, (void **)&out);
    if (!s) s = hispi_calloc(ctx, (size_t)n, sizeof *key, (void **)&key);
    int left = 0;
    char path[1024];
    for (int i = 0; i < n && !s; i++) {
        key[i] = module_key(prog, opts[i], &p, false);
        bool dup = false; /* the same options twice: build once */
        for (int q = 0; q < i && !dup; q++)
            dup = key[q] == key[i] && !strcmp(opts[q], opts[i]);
        todo[i] =
            !dup && !find_module(dev, key[i]) &&
            !(hispi_cache_file(ctx, "cu", key[i], "cubin", path, sizeof path) && cache_valid(path));
        left += todo[i];
    }
    if (!s && left) {
        int threads = hispi_threads(ctx, 1e300); /* the threads option */
        if (threads > left) threads = left;
        prebuild_job j = {prog, p.major, p.minor, n, opts, todo, out, 0};
        hispi_build_begin(ctx, p.name, left);
        double t0 = hispi_now_ms();
        hispi_parallel(threads, prebuild_worker, &j);
        hispi_build_count(ctx, false, left, hispi_now_ms() - t0);
        hispi_debug("cuda: %d NVRTC builds on %d threads (%.1f ms)", left, threads,
                    hispi_now_ms() - t0);
    }
    /* load them here, in the caller's thread: a build that failed is left
     * for kern_get to report with its log */
    for (int i = 0; i < n && !s; i++) {
        if (!out[i].cubin) continue;
        cudaLibrary_t lib = NULL;
        if (cudaLibraryLoadData(&lib, out[i].cubin, NULL, NULL, 0, NULL, NULL, 0) != cudaSuccess) {
            (void)cudaGetLastError();
            continue;
        }
        module *m;
        s = add_module(ctx, dev, key[i], lib, &m);
        if (!s && hispi_cache_file(ctx, "cu", key[i], "cubin", path, sizeof path))
            (void)hispi_cache_write(path, out[i].cubin, out[i].size);
    }
    for (int i = 0; out && i < n; i++) {
        free(out[i].cubin);
        free(out[i].log);
    }
    free(todo);
    free(out);
    free(key);
    return s;
}

hisp_status hisp_cuda_kern_any(hisp_context ctx, void *be)
{
    (void)be;
    return need_nvrtc(ctx);
}

void hisp_cuda_kern_free(void *be, void *k)
{
    (void)be; /* kernels belong to their module, which stays loaded */
    (void)k;
}

hisp_status hisp_cuda_kern_launch(hisp_context ctx, void *be, void *k, const hispi_karg *a,
                                  int nargs, size_t groups, size_t group_size)
{
    int dev;
    cudaStream_t st;
    hisp_cuda_be_kern_stream(be, &dev, &st);
    /* 64: the vector algebra's axpby2 on quaternions takes 42 */
    if (nargs > 64) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "too many kernel arguments");
    union {
        const void *p;
        int i32;
        long long i64;
        float f;
        double d;
    } v[64];
    void *argv[64];
    for (int i = 0; i < nargs; i++) {
        switch (a[i].kind) {
        case HISPI_KARG_BUF:
            v[i].p = a[i].buf;
            break;
        case HISPI_KARG_I32:
            v[i].i32 = (int)a[i].i;
            break;
        case HISPI_KARG_I64:
            v[i].i64 = (long long)a[i].i;
            break;
        case HISPI_KARG_F32:
            v[i].f = (float)a[i].d;
            break;
        default:
            v[i].d = a[i].d;
            break;
        }
        argv[i] = &v[i];
    }
    if (!groups) return HISP_SUCCESS;
    if (groups > 0x7fffffff) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "grid too large");
    dim3 grid = {(unsigned)groups, 1, 1}, block = {(unsigned)group_size, 1, 1};
    cudaError_t e = cudaSetDevice(dev);
    if (e == cudaSuccess) e = cudaLaunchKernel((const void *)k, grid, block, argv, 0, st);
    return e == cudaSuccess ? HISP_SUCCESS
                            : hisp_cuda_fail(ctx, e, "cudaLaunchKernel (run-time kernel)");
}

hisp_status hisp_cuda_buf_zero(hisp_context ctx, void *be, void *buf, size_t off, size_t bytes)
{
    int dev;
    cudaStream_t st;
    hisp_cuda_be_stream(be, &dev, &st);
    cudaError_t e = cudaMemsetAsync((char *)buf + off, 0, bytes, st);
    return e == cudaSuccess ? HISP_SUCCESS : hisp_cuda_fail(ctx, e, "cudaMemsetAsync");
}
