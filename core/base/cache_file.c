/* The disk cache's folder, atomic file writes and validated entries, shared
 * by the OpenCL program cache, the NVRTC cubin cache and the compound plan
 * cache.
 *
 * A binary cache entry is a 32-byte header and the payload:
 *    0  magic "hispcach"
 *    8  format version (u32, little-endian), 12: zero (u32)
 *   16  payload length (u64)
 *   24  FNV-1a 64 of bytes 0..23 and the payload (u64)
 * Anything else at the path (a truncated or damaged file, an old headerless
 * file, a directory, a device, a FIFO) is a miss, never handed to a runtime:
 * OpenCL and CUDA drivers may crash on a damaged binary. */
#include "hispi.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int hispi_cache_dir(hisp_context ctx, char *out, size_t size)
{
    const char *d = ctx ? ctx->opt.cache_dir : NULL;
    int n;
    if (d && *d) {
        if (strcmp(d, "off") == 0) return 0;
        n = snprintf(out, size, "%s", d);
    } else if ((d = getenv("XDG_CACHE_HOME")) && *d) {
        n = snprintf(out, size, "%s/hisp", d);
    } else if ((d = getenv("HOME")) && *d) {
        n = snprintf(out, size, "%s/.cache/hisp", d);
    } else {
        return 0;
    }
    return n > 0 && (size_t)n < size;
}

int hispi_cache_file(hisp_context ctx, const char *prefix, uint64_t key, const char *ext, char *out,
                     size_t size)
{
    char dir[900];
    if (!hispi_cache_dir(ctx, dir, sizeof dir)) return 0;
    int n = snprintf(out, size, "%s/%s-%016llx.%s", dir, prefix, (unsigned long long)key, ext);
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
    /* the cache is hisp's own folder: whatever sits at an entry's path that
     * is not a regular file (a link, a FIFO, a device, an empty folder: damage)
     * is removed first, never written through (a FIFO would block), then the
     * entry is written to a temporary file and renamed (file_out.c) */
    struct stat ls;
    if (lstat(path, &ls) == 0 && !S_ISREG(ls.st_mode)) {
        if (S_ISDIR(ls.st_mode) ? rmdir(path) != 0 : unlink(path) != 0) return errno ? errno : EIO;
    }
    hispi_out o;
    const char *why;
    int e = hispi_out_open(path, &o, &why);
    return e ? e : hispi_out_close(&o, path, fwrite(data, 1, n, o.f) == n);
}

/* ---- validated entries ----------------------------------------------------- */

#define ENTRY_MAGIC "hispcach"
#define ENTRY_VERSION 1u

static void put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static uint64_t entry_hash(const unsigned char *head, const void *payload, size_t n)
{
    return hispi_hash(payload, n, hispi_hash(head, 24, 0x6361636865ull));
}

int hispi_cache_entry_check(const void *entry, size_t size, size_t *payload_len)
{
    const unsigned char *e = entry;
    if (!e || size < HISPI_CACHE_HEADER || memcmp(e, ENTRY_MAGIC, 8) != 0) return 0;
    if (get_u64(e + 8) != ENTRY_VERSION) return 0; /* version and the zero word */
    uint64_t n = get_u64(e + 16);
    if (n != size - HISPI_CACHE_HEADER || n > HISPI_CACHE_MAX) return 0;
    if (get_u64(e + 24) != entry_hash(e, e + HISPI_CACHE_HEADER, (size_t)n)) return 0;
    if (payload_len) *payload_len = (size_t)n;
    return 1;
}

int hispi_cache_read_raw(const char *path, size_t max, char **data, size_t *size)
{
    *data = NULL;
    *size = 0;
    /* O_NONBLOCK: a FIFO at the path must not hang the open */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT ? 0 : -1;
    struct stat sb;
    char *buf = NULL;
    int r = -1;
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size >= 0 &&
        (uint64_t)sb.st_size <= max && (buf = malloc((size_t)sb.st_size + 1))) {
        size_t want = (size_t)sb.st_size, got = 0;
        while (got < want) {
            ssize_t k = read(fd, buf + got, want - got);
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) break;
            got += (size_t)k;
        }
        char extra;
        if (got == want && read(fd, &extra, 1) == 0) { /* neither shrunk nor grown */
            buf[want] = 0;
            *data = buf;
            *size = want;
            buf = NULL;
            r = 1;
        }
    }
    free(buf);
    close(fd);
    return r;
}

int hispi_cache_read(const char *path, void **payload, size_t *n)
{
    *payload = NULL;
    *n = 0;
    char *data = NULL;
    size_t size = 0, len = 0;
    int r = hispi_cache_read_raw(path, HISPI_CACHE_HEADER + (size_t)HISPI_CACHE_MAX, &data, &size);
    if (r <= 0) return r;
    if (!hispi_cache_entry_check(data, size, &len)) {
        free(data);
        return -1;
    }
    memmove(data, data + HISPI_CACHE_HEADER, len);
    *payload = data;
    *n = len;
    return 1;
}

void *hispi_cache_entry_make(const void *payload, size_t n, size_t *size)
{
    if (n > HISPI_CACHE_MAX) return NULL;
    unsigned char *e = malloc(HISPI_CACHE_HEADER + n);
    if (!e) return NULL;
    memcpy(e, ENTRY_MAGIC, 8);
    put_u64(e + 8, ENTRY_VERSION);
    put_u64(e + 16, n);
    if (n) memcpy(e + HISPI_CACHE_HEADER, payload, n);
    put_u64(e + 24, entry_hash(e, e + HISPI_CACHE_HEADER, n));
    *size = HISPI_CACHE_HEADER + n;
    return e;
}

int hispi_cache_write(const char *path, const void *payload, size_t n)
{
    size_t size = 0;
    void *e = hispi_cache_entry_make(payload, n, &size);
    if (!e) return n > HISPI_CACHE_MAX ? EFBIG : ENOMEM;
    int r = hispi_write_file_atomic(path, e, size, true);
    free(e);
    return r;
}
