/* Output files: what a path may be before hisp writes to it.
 *
 * The rule (docs/ARCHITECTURE.md, "Files"): a missing path or a regular file
 * is written to a temporary file beside it and renamed over it, so readers
 * never see half a file and the old file's permission bits are kept (a
 * file the caller may not write is refused, as an in-place write would be;
 * hard links to the old file keep the old contents). A pipe
 * (FIFO) or character device, named directly or through symbolic links
 * (/dev/stdout, /dev/null, a named pipe, a terminal) is written through as a
 * stream: never created, truncated or replaced. Anything else is refused
 * without touching it: a directory, a block device, a socket, a dangling
 * link, or a link to a regular file (a planted link would make hisp
 * overwrite the file it points to; name that file instead). */
#include "hispi.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool stream_kind(mode_t m)
{
    return S_ISFIFO(m) || S_ISCHR(m);
}

static const char *refused_kind(mode_t m)
{
    return S_ISDIR(m)    ? "it is a directory"
           : S_ISBLK(m)  ? "it is a block device"
           : S_ISSOCK(m) ? "it is a socket"
                         : "it is not a regular file, pipe or character device";
}

int hispi_out_open(const char *path, hispi_out *o, const char **why)
{
    memset(o, 0, sizeof *o);
    *why = NULL;
    struct stat ls, ts;
    mode_t keep = 0; /* an existing regular file's permission bits */
    if (lstat(path, &ls) == 0) {
        if (S_ISLNK(ls.st_mode)) {
            if (stat(path, &ts) != 0) {
                *why = "it is a dangling symbolic link";
                return EEXIST;
            }
            if (!stream_kind(ts.st_mode)) {
                *why = S_ISREG(ts.st_mode) ? "it is a symbolic link to a regular file (hisp "
                                             "follows links only to pipes and character "
                                             "devices; name the file itself)"
                                           : refused_kind(ts.st_mode);
                return EEXIST;
            }
            o->through = true;
        } else if (stream_kind(ls.st_mode)) {
            o->through = true;
        } else if (!S_ISREG(ls.st_mode)) {
            *why = refused_kind(ls.st_mode);
            return EEXIST;
        } else {
            /* a read-only file stays refused, as an in-place write would be */
            if (access(path, W_OK) != 0) return errno;
            keep = ls.st_mode & 07777;
        }
    } else if (errno != ENOENT) {
        return errno;
    }
    int fd;
    if (o->through) {
        /* no O_CREAT, O_TRUNC: the stream stays what it is; fstat below
         * catches a path swapped for something else since the lstat */
        fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
        if (fd < 0) return errno;
        if (fstat(fd, &ts) != 0 || !stream_kind(ts.st_mode)) {
            close(fd);
            *why = "it changed while being opened";
            return EEXIST;
        }
    } else {
        /* pid and thread: processes and contexts of one process (MSREP) may
         * store the same file at once; rename makes the last one win whole */
        if ((size_t)snprintf(o->tmp, sizeof o->tmp, "%s.%ld.%lx.tmp", path, (long)getpid(),
                             (unsigned long)pthread_self()) >= sizeof o->tmp)
            return ENAMETOOLONG;
        /* O_EXCL: a link planted at the temporary name is never followed */
        fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0) return errno;
        if (keep) (void)fchmod(fd, keep);
    }
    o->f = fdopen(fd, "wb");
    if (!o->f) {
        int e = errno;
        close(fd);
        if (!o->through) unlink(o->tmp);
        return e;
    }
    return 0;
}

int hispi_out_close(hispi_out *o, const char *path, bool ok)
{
    int e = 0;
    if (!ok) e = EIO;
    if (ferror(o->f) && !e) e = errno ? errno : EIO;
    if (fclose(o->f) != 0 && !e) e = errno ? errno : EIO;
    o->f = NULL;
    if (o->through) return e;
    if (!e && rename(o->tmp, path) != 0) e = errno ? errno : EIO;
    if (e) unlink(o->tmp);
    return e;
}

hisp_status hispi_out_fail(hisp_context ctx, const char *path, int e, const char *why)
{
    if (why) return hispi_fail_native(ctx, HISP_ERR_IO, e, "cannot write %s: %s", path, why);
    return hispi_fail_native(ctx, HISP_ERR_IO, e, "cannot write %s: %s", path, strerror(e));
}

hisp_status hispi_save_file(hisp_context ctx, const char *path, const void *data, size_t n)
{
    hispi_out o;
    const char *why;
    int e = hispi_out_open(path, &o, &why);
    if (!e) e = hispi_out_close(&o, path, fwrite(data, 1, n, o.f) == n);
    return e ? hispi_out_fail(ctx, path, e, why) : HISP_SUCCESS;
}

hisp_status hisp_file_write(hisp_context ctx, const char *path, const void *data, size_t n)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!path || (!data && n))
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "NULL path or data");
    return hispi_save_file(ctx, path, data, n);
}
