/* cuSPARSE and NVRTC opened at run time (cuda_dl.h says why). The sonames
 * come from the headers the backend was compiled against (cuSPARSE's and
 * the runtime's major version), so the tables' types match the library. */
#include "cuda_dl.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef HISP_CUDA_LIBDIR /* SConstruct passes cuda_home/lib64 */
#define HISP_CUDA_LIBDIR "/usr/local/cuda/lib64"
#endif

void *hisp_cuda_dl_open(const char *soname, char *why, size_t whylen)
{
    /* the loader's path first: LD_LIBRARY_PATH, the run path of the object
     * holding this code (a program linked with libhisp.a), ld.so.cache, the
     * system's folders; the first failure's text names the missing file */
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (h) return h;
    const char *err = dlerror();
    snprintf(why, whylen,
             "%s not found (looked on the loader path, in $CUDA_HOME/lib64 and %s): %s", soname,
             HISP_CUDA_LIBDIR, err ? err : "?");
    char path[1024];
    const char *home = getenv("CUDA_HOME");
    if (home && *home) {
        snprintf(path, sizeof path, "%s/lib64/%s", home, soname);
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    }
    if (!h) {
        snprintf(path, sizeof path, "%s/%s", HISP_CUDA_LIBDIR, soname);
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    }
    if (h) why[0] = 0;
    return h;
}

/* Bind every X(name) of a table from handle h; false with why set when one
 * is missing. */
#define HISP_CUDA_DL_BIND(f)                                                                       \
    if (!(*(void **)&t->f = dlsym(h, #f))) {                                                       \
        snprintf(why, whylen, "%s lacks %s (an older library than the headers of the build?)",     \
                 soname, #f);                                                                      \
        return false;                                                                              \
    }

static struct {
    pthread_once_t once;
    bool ok;
    char soname[64], why[512];
    hisp_cuda_cusparse_fns t;
} cs = {.once = PTHREAD_ONCE_INIT};

static bool bind_cusparse(void *h, hisp_cuda_cusparse_fns *t, const char *soname, char *why,
                          size_t whylen)
{
    HISP_CUDA_CUSPARSE_FNS(HISP_CUDA_DL_BIND)
    return true;
}

static void load_cusparse(void)
{
    snprintf(cs.soname, sizeof cs.soname, "libcusparse.so.%d", CUSPARSE_VER_MAJOR);
    void *h = hisp_cuda_dl_open(cs.soname, cs.why, sizeof cs.why);
    cs.ok = h && bind_cusparse(h, &cs.t, cs.soname, cs.why, sizeof cs.why);
}

hisp_status hisp_cuda_cusparse(hisp_context ctx, const hisp_cuda_cusparse_fns **fns)
{
    pthread_once(&cs.once, load_cusparse);
    if (!cs.ok) return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "cuSPARSE: %s", cs.why);
    *fns = &cs.t;
    return HISP_SUCCESS;
}

static struct {
    pthread_once_t once;
    bool ok;
    char soname[64], why[512];
    hisp_cuda_nvrtc_fns t;
} nv = {.once = PTHREAD_ONCE_INIT};

static bool bind_nvrtc(void *h, hisp_cuda_nvrtc_fns *t, const char *soname, char *why,
                       size_t whylen)
{
    HISP_CUDA_NVRTC_FNS(HISP_CUDA_DL_BIND)
    return true;
}

static void load_nvrtc(void)
{
    /* NVRTC's major version is the toolkit's (CUDA 13 ships no static libnvrtc) */
    snprintf(nv.soname, sizeof nv.soname, "libnvrtc.so.%d", CUDART_VERSION / 1000);
    void *h = hisp_cuda_dl_open(nv.soname, nv.why, sizeof nv.why);
    nv.ok = h && bind_nvrtc(h, &nv.t, nv.soname, nv.why, sizeof nv.why) &&
            nv.t.nvrtcVersion(&nv.t.major, &nv.t.minor) == NVRTC_SUCCESS;
    if (h && !nv.ok && !nv.why[0]) snprintf(nv.why, sizeof nv.why, "nvrtcVersion failed");
}

hisp_status hisp_cuda_nvrtc(hisp_context ctx, const hisp_cuda_nvrtc_fns **fns)
{
    pthread_once(&nv.once, load_nvrtc);
    if (!nv.ok) return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "NVRTC: %s", nv.why);
    *fns = &nv.t;
    return HISP_SUCCESS;
}
