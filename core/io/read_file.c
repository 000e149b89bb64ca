/* Reading a whole file into memory for the parsers (Matrix Market, .hisp,
 * plans): regular files whole (large ones by several threads), pipes and
 * devices once, with the limits of docs/ARCHITECTURE.md "Files". */
#include "hispi_mmio.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/* A blank byte in any locale (the parsers' whitespace, and line ends). */
static inline bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' || c == '\n';
}

/* Whether the first bytes of a stream look like the format: its magic after
 * blanks, or compressed data (decompressed and checked by the parser). */
static bool looks_like(const char *buf, size_t len, const char *magic)
{
    if (hispi_compressed_kind(buf, len)) return true;
    size_t i = 0;
    while (i < len && is_blank(buf[i]))
        i++;
    size_t m = strlen(magic);
    return len - i < m || strncasecmp(buf + i, magic, m) == 0;
}

/* A large regular file read by several threads (pread of equal parts):
 * copying from the page cache is as much of the reading as the parsing.
 * Returns the bytes read from the start (0: read it the usual way). */
typedef struct {
    int fd;
    char *buf;
    size_t size, part;
    atomic_int next, failed;
} pread_job;

static void *pread_worker(void *arg)
{
    pread_job *j = arg;
    for (;;) {
        size_t i = (size_t)atomic_fetch_add(&j->next, 1), lo = i * j->part;
        if (lo >= j->size) break;
        size_t hi = lo + j->part < j->size ? lo + j->part : j->size;
        while (lo < hi) {
            ssize_t got = pread(j->fd, j->buf + lo, hi - lo, (off_t)lo);
            if (got <= 0) {
                atomic_store(&j->failed, 1);
                break;
            }
            lo += (size_t)got;
        }
    }
    return NULL;
}

static size_t read_parallel(hisp_context ctx, int fd, char *buf, size_t size)
{
    int threads = hispi_threads(ctx, (double)size / 16);
    if (threads < 2 || size < ((size_t)64 << 20)) return 0;
    pread_job j = {.fd = fd, .buf = buf, .size = size, .part = (size_t)8 << 20};
    atomic_init(&j.next, 0);
    atomic_init(&j.failed, 0);
    hispi_parallel(threads, pread_worker, &j);
    return atomic_load(&j.failed) ? 0 : size;
}

hisp_status hispi_read_file(hisp_context ctx, const char *path, const char *magic, char **data,
                            size_t *size)
{
    *data = NULL;
    *size = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        int e = errno;
        return hispi_fail_native(ctx, HISP_ERR_IO, e, "cannot open %s: %s", path, strerror(e));
    }
    /* regular files: exact size (+2 so that the first short read ends it);
     * pipes and devices grow the buffer up to HISPI_STREAM_LIMIT */
    struct stat sb;
    size_t cap = 1 << 16, limit = HISPI_STREAM_LIMIT;
    bool stream = true;
    if (fstat(fileno(f), &sb) == 0) {
        if (S_ISDIR(sb.st_mode)) {
            fclose(f);
            return hispi_fail_native(ctx, HISP_ERR_IO, EISDIR, "cannot read %s: %s", path,
                                     strerror(EISDIR));
        }
        if (S_ISREG(sb.st_mode) && sb.st_size >= 0 && (uint64_t)sb.st_size < SIZE_MAX - 2) {
            cap = (size_t)sb.st_size + 2;
            limit = SIZE_MAX / 2; /* a file that grows while read */
            stream = false;
        }
    }
    char *buf = NULL;
    size_t len = 0;
    bool sniffed = !stream || !magic;
    hisp_status s = hispi_alloc(ctx, cap, 1, (void **)&buf);
    if (!s && !stream) {
        hispi_huge_pages(buf, cap); /* a large file: 2 MiB faults */
        len = read_parallel(ctx, fileno(f), buf, cap - 2);
        if (len && fseeko(f, (off_t)len, SEEK_SET)) len = 0; /* then read on from there */
    }
    while (!s) {
        if (len + 1 >= cap) {
            if (cap >= limit) {
                s = hispi_fail(ctx, HISP_ERR_INPUT_FORMAT,
                               "%s: more than %zu MiB from a pipe or device (the limit for "
                               "inputs that are not regular files)",
                               path, limit >> 20);
                break;
            }
            cap *= 2;
            if ((s = hispi_realloc(ctx, (void **)&buf, cap, 1))) break;
        }
        size_t want = cap - 1 - len, got = fread(buf + len, 1, want, f);
        len += got;
        if (got < want) {
            if (ferror(f)) {
                int e = errno;
                s = hispi_fail_native(ctx, HISP_ERR_IO, e, "cannot read %s: %s", path, strerror(e));
            }
            break;
        }
        if (!sniffed) { /* not the format: the parser names the problem from these bytes */
            sniffed = true;
            if (!looks_like(buf, len, magic)) break;
        }
    }
    fclose(f);
    if (s) {
        free(buf);
        return s;
    }
    buf[len] = 0;
    *data = buf;
    *size = len;
    return HISP_SUCCESS;
}
