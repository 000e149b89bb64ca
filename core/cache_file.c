/* The disk cache's folder and atomic file writes, shared by the OpenCL
 * program cache, the NVRTC cubin cache and the compound plan cache. */
#include "hispi.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int hispi_cache_file(const char *prefix, uint64_t key, const char *ext, char *out, size_t size)
{
    const char *d = getenv("HISP_CACHE_DIR");
    char dir[900];
    int n;
    if (d && *d) {
        if (strcmp(d, "off") == 0) return 0;
        n = snprintf(dir, sizeof dir, "%s", d);
    } else if ((d = getenv("XDG_CACHE_HOME")) && *d) {
        n = snprintf(dir, sizeof dir, "%s/hisp", d);
    } else if ((d = getenv("HOME")) && *d) {
        n = snprintf(dir, sizeof dir, "%s/.cache/hisp", d);
    } else {
        return 0;
    }
    if (n <= 0 || (size_t)n >= sizeof dir) return 0;
    n = snprintf(out, size, "%s/%s-%016llx.%s", dir, prefix, (unsigned long long)key, ext);
    return n > 0 && (size_t)n < size;
}

/* mkdir -p of the folder holding `file`; failures show up as a failed open. */
static void make_parent_dirs(const char *file)
{
    char tmp[1024];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s", file) >= sizeof tmp) return;
    char *slash = strrchr(tmp, '/');
    if (!slash || slash == tmp) return;
    *slash = 0;
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            mkdir(tmp, 0755);
            *p = '/';
        }
    mkdir(tmp, 0755);
}

int hispi_write_file_atomic(const char *path, const void *data, size_t n, bool make_dirs)
{
    if (make_dirs) make_parent_dirs(path);
    hispi_out o; /* the target checks and the rename: file_out.c */
    const char *why;
    int e = hispi_out_open(path, &o, &why);
    return e ? e : hispi_out_close(&o, path, fwrite(data, 1, n, o.f) == n);
}
