/* The OpenCL ICD loader opened at run time (cl_dl.h says why). */
#define HISP_CL_DL_NO_REDIRECT
#include "cl_dl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static struct {
    pthread_once_t once;
    bool ok;
    char why[512];
    hisp_cl_fn_table t;
} cl = {.once = PTHREAD_ONCE_INIT};

#define HISP_CL_DL_BIND(f)                                                                         \
    if (!(*(void **)&t->f = dlsym(h, #f))) {                                                       \
        snprintf(cl.why, sizeof cl.why,                                                            \
                 "libOpenCL.so.1 lacks %s (an OpenCL 1.2 ICD loader is needed)", #f);              \
        return false;                                                                              \
    }

static bool bind(void *h, hisp_cl_fn_table *t)
{
    HISP_CL_FNS(HISP_CL_DL_BIND)
    return true;
}

static void load(void)
{
    /* the loader's path: LD_LIBRARY_PATH, the run path, ld.so.cache */
    void *h = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *err = dlerror();
        snprintf(cl.why, sizeof cl.why,
                 "libOpenCL.so.1 not found (install an ICD loader such as ocl-icd-libopencl1): %s",
                 err ? err : "?");
        return;
    }
    cl.ok = bind(h, &cl.t);
}

const hisp_cl_fn_table *hisp_cl_fns(const char **why)
{
    pthread_once(&cl.once, load);
    if (why) *why = cl.ok ? NULL : cl.why;
    return cl.ok ? &cl.t : NULL;
}
