/* The disk cache's folder and atomic file writes, shared by the OpenCL
 * program cache, the NVRTC cubin cache and the compound plan cache. */
#include "hispi.h"

#include <errno.h>
#include <pthread.h>
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
    char tmp[1200];
    /* pid and thread: processes and contexts of one process (MSREP) may
     * store the same file at once; rename makes the last one win whole */
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.%ld.%lx.tmp", path, (long)getpid(),
                         (unsigned long)pthread_self()) >= sizeof tmp)
        return ENAMETOOLONG;
    FILE *f = fopen(tmp, "wb");
    if (!f) return errno ? errno : EIO;
    int ok = fwrite(data, 1, n, f) == n;
    int e = ok ? 0 : (errno ? errno : EIO);
    if (fclose(f) != 0 && ok) {
        ok = 0;
        e = errno ? errno : EIO;
    }
    if (ok && rename(tmp, path) != 0) {
        ok = 0;
        e = errno ? errno : EIO;
    }
    if (!ok) remove(tmp);
    return ok ? 0 : e;
}
