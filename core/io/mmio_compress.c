/* gzip and bzip2 for Matrix Market files: inputs recognised by their magic
 * bytes (files, pipes and buffers alike), outputs chosen by the path's
 * suffix (.gz, .bz2). Decompressed data is bounded like a stream input: at
 * most HISPI_STREAM_LIMIT (1 GiB) or 64 times the compressed size, whichever
 * is larger, so a small "bomb" is refused early instead of filling memory
 * (deflate can expand 1032-fold, bzip2 far more). Data compressed again
 * inside (bzip2 of a gzip file) is expanded level by level, at most
 * HISPI_DECOMPRESS_LEVELS deep, every level's output counting against that
 * one limit of the outermost input. */
#include "hispi_mmio.h"

#include <bzlib.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

const char *hispi_compressed_kind(const char *data, size_t size)
{
    if (size >= 2 && (unsigned char)data[0] == 0x1f && (unsigned char)data[1] == 0x8b)
        return "gzip";
    if (size >= 4 && memcmp(data, "BZh", 3) == 0 && data[3] >= '1' && data[3] <= '9')
        return "bzip2";
    return NULL;
}

size_t hispi_decompress_limit(size_t compressed)
{
    size_t l = HISPI_STREAM_LIMIT;
    return compressed < (SIZE_MAX / 4) / 64 && compressed * 64 > l ? compressed * 64 : l;
}

/* Grows *buf to hold at least len + 1 + want bytes, doubling, up to limit + 1. */
static hisp_status grow(hisp_context ctx, char **buf, size_t *cap, size_t len, size_t limit)
{
    if (len + 1 < *cap) return HISP_SUCCESS;
    size_t nc = *cap * 2 > limit + 1 ? limit + 1 : *cap * 2;
    HISPI_TRY(hispi_realloc(ctx, (void **)buf, nc, 1));
    *cap = nc;
    return HISP_SUCCESS;
}

/* The outermost input: its kind, size and limit (all levels share it). */
typedef struct {
    const char *kind;
    size_t size, limit;
} whole_input;

static hisp_status too_big(hisp_context ctx, const char *name, const whole_input *w)
{
    return hispi_fail_at(ctx, name, 0,
                         "%s data of %zu bytes expands to more than %zu MiB (the limit for "
                         "compressed inputs: 1 GiB or 64 x their size, all levels together)",
                         w->kind, w->size, w->limit >> 20);
}

/* head: the first `limit` bytes are enough (no error when there are more,
 * or when data, a file's first bytes, ends inside the stream). */
static hisp_status gunzip(hisp_context ctx, const char *name, const char *data, size_t size,
                          size_t limit, const whole_input *whole, bool head, char **buf,
                          size_t *cap, size_t *len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 15 + 32) != Z_OK) /* gzip or zlib header */
        return hispi_fail(ctx, HISP_ERR_OUT_OF_HOST_MEMORY, "%s: cannot start zlib", name);
    z.next_in = (Bytef *)data;
    hisp_status s = HISP_SUCCESS;
    size_t left = size;
    for (;;) {
        if (*len >= limit) {
            if (!head) s = too_big(ctx, name, whole);
            break;
        }
        if ((s = grow(ctx, buf, cap, *len, limit))) break;
        if (z.avail_in == 0) {
            z.avail_in = left > (1u << 30) ? 1u << 30 : (uInt)left;
            left -= z.avail_in;
        }
        size_t room = *cap - 1 - *len;
        z.next_out = (Bytef *)*buf + *len;
        z.avail_out = room > (1u << 30) ? 1u << 30 : (uInt)room;
        uInt before = z.avail_out;
        int r = inflate(&z, Z_NO_FLUSH);
        *len += before - z.avail_out;
        if (r == Z_STREAM_END) {
            if (z.avail_in == 0 && left == 0) break;
            /* concatenated members (gzip -c a b > c.gz): go on */
            if (inflateReset(&z) != Z_OK)
                r = Z_DATA_ERROR;
            else
                continue;
        }
        if (r == Z_MEM_ERROR) {
            s = hispi_fail(ctx, HISP_ERR_OUT_OF_HOST_MEMORY, "%s: zlib is out of memory", name);
            break;
        }
        if (r != Z_OK && r != Z_BUF_ERROR) {
            s = hispi_fail_at(ctx, name, 0, "corrupt gzip data: %s",
                              z.msg ? z.msg : "inflate failed");
            break;
        }
        if (r == Z_BUF_ERROR && z.avail_in == 0 && left == 0) {
            if (!head)
                s = hispi_fail_at(ctx, name, 0, "truncated gzip data (the stream ends early)");
            break;
        }
    }
    inflateEnd(&z);
    return s;
}

static hisp_status bunzip(hisp_context ctx, const char *name, const char *data, size_t size,
                          size_t limit, const whole_input *whole, bool head, char **buf,
                          size_t *cap, size_t *len)
{
    bz_stream z;
    memset(&z, 0, sizeof z);
    if (BZ2_bzDecompressInit(&z, 0, 0) != BZ_OK)
        return hispi_fail(ctx, HISP_ERR_OUT_OF_HOST_MEMORY, "%s: cannot start bzip2", name);
    z.next_in = (char *)data;
    hisp_status s = HISP_SUCCESS;
    size_t left = size;
    for (;;) {
        if (*len >= limit) {
            if (!head) s = too_big(ctx, name, whole);
            break;
        }
        if ((s = grow(ctx, buf, cap, *len, limit))) break;
        if (z.avail_in == 0) {
            z.avail_in = left > (1u << 30) ? 1u << 30 : (unsigned)left;
            left -= z.avail_in;
        }
        size_t room = *cap - 1 - *len;
        z.next_out = *buf + *len;
        z.avail_out = room > (1u << 30) ? 1u << 30 : (unsigned)room;
        unsigned before = z.avail_out;
        int r = BZ2_bzDecompress(&z);
        *len += before - z.avail_out;
        if (r == BZ_STREAM_END) {
            if (z.avail_in == 0 && left == 0) break;
            /* concatenated streams (pbzip2, bzip2 -c a b): start the next */
            const char *nin = z.next_in;
            unsigned nav = z.avail_in;
            BZ2_bzDecompressEnd(&z);
            memset(&z, 0, sizeof z);
            if (BZ2_bzDecompressInit(&z, 0, 0) != BZ_OK) {
                s = hispi_fail(ctx, HISP_ERR_OUT_OF_HOST_MEMORY, "%s: cannot start bzip2", name);
                return s;
            }
            z.next_in = (char *)nin;
            z.avail_in = nav;
            continue;
        }
        if (r == BZ_MEM_ERROR) {
            s = hispi_fail(ctx, HISP_ERR_OUT_OF_HOST_MEMORY, "%s: bzip2 is out of memory", name);
            break;
        }
        if (r != BZ_OK) {
            s = hispi_fail_at(ctx, name, 0, "corrupt bzip2 data (error %d)", r);
            break;
        }
        if (z.avail_in == 0 && left == 0 && before == z.avail_out) {
            if (!head)
                s = hispi_fail_at(ctx, name, 0, "truncated bzip2 data (the stream ends early)");
            break;
        }
    }
    BZ2_bzDecompressEnd(&z);
    return s;
}

/* One level: data (size bytes) into a fresh buffer of at most limit bytes. */
static hisp_status decompress(hisp_context ctx, const char *name, const char *data, size_t size,
                              size_t limit, const whole_input *whole, bool head, char **out,
                              size_t *out_size)
{
    *out = NULL;
    *out_size = 0;
    const char *kind = hispi_compressed_kind(data, size);
    size_t cap = size * 4 + 64, len = 0;
    if (cap > limit + 1) cap = limit + 1;
    char *buf = NULL;
    HISPI_TRY(hispi_alloc(ctx, cap, 1, (void **)&buf));
    hisp_status s = kind && kind[0] == 'g'
                        ? gunzip(ctx, name, data, size, limit, whole, head, &buf, &cap, &len)
                        : bunzip(ctx, name, data, size, limit, whole, head, &buf, &cap, &len);
    if (s) {
        free(buf);
        return s;
    }
    buf[len] = 0;
    *out = buf;
    *out_size = len;
    return HISP_SUCCESS;
}

/* Level after level until the data is plain; every level's output counts
 * against limit (head: each level's first limit bytes). */
static hisp_status expand(hisp_context ctx, const char *name, const char *data, size_t size,
                          size_t limit, bool head, char **out, size_t *out_size)
{
    *out = NULL;
    *out_size = 0;
    const whole_input whole = {hispi_compressed_kind(data, size), size, limit};
    size_t left = limit;
    char *held = NULL; /* the previous level's output, the input of this one */
    for (int level = 0;; level++) {
        if (level == HISPI_DECOMPRESS_LEVELS) {
            free(held);
            return hispi_fail_at(ctx, name, 0,
                                 "compressed more than %d times over (gzip or bzip2 inside "
                                 "gzip or bzip2)",
                                 HISPI_DECOMPRESS_LEVELS);
        }
        char *o = NULL;
        size_t n = 0;
        hisp_status s =
            decompress(ctx, name, data, size, head ? limit : left, &whole, head, &o, &n);
        free(held);
        if (s) return s;
        if (!hispi_compressed_kind(o, n)) {
            *out = o;
            *out_size = n;
            return HISP_SUCCESS;
        }
        if (!head) left -= n; /* n <= left */
        held = o;
        data = o;
        size = n;
    }
}

hisp_status hispi_decompress(hisp_context ctx, const char *name, const char *data, size_t size,
                             char **out, size_t *out_size)
{
    return expand(ctx, name, data, size, hispi_decompress_limit(size), false, out, out_size);
}

hisp_status hispi_decompress_head(hisp_context ctx, const char *name, const char *data, size_t size,
                                  size_t max, char **out, size_t *out_size)
{
    return expand(ctx, name, data, size, max, true, out, out_size);
}

/* ---- output ------------------------------------------------------------- */

typedef enum { SINK_PLAIN, SINK_GZIP, SINK_BZIP2 } sink_kind;

struct hispi_sink {
    hisp_context ctx;
    const char *path;
    hispi_out out;
    sink_kind kind;
    bool failed;
    z_stream z;
    bz_stream bz;
    char *buf; /* compressed bytes on their way to the file */
};

enum { SINK_BUF = 1 << 20 };

static bool has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n > m && strcmp(s + n - m, suf) == 0;
}

hisp_status hispi_sink_open(hisp_context ctx, const char *path, hispi_sink **out)
{
    *out = NULL;
    hispi_sink *s;
    HISPI_TRY(hispi_alloc(ctx, 1, sizeof *s, (void **)&s));
    memset(s, 0, sizeof *s);
    s->ctx = ctx;
    s->path = path;
    s->kind = has_suffix(path, ".gz")    ? SINK_GZIP
              : has_suffix(path, ".bz2") ? SINK_BZIP2
                                         : SINK_PLAIN;
    if (s->kind != SINK_PLAIN && hispi_alloc(ctx, SINK_BUF, 1, (void **)&s->buf)) {
        free(s);
        return HISP_ERR_OUT_OF_HOST_MEMORY;
    }
    int r = s->kind == SINK_GZIP    ? deflateInit2(&s->z, 6, Z_DEFLATED, 15 + 16, 8,
                                                   Z_DEFAULT_STRATEGY) /* gzip wrapper */
            : s->kind == SINK_BZIP2 ? BZ2_bzCompressInit(&s->bz, 9, 0, 0)
                                    : 0;
    if (r != 0) {
        free(s->buf);
        free(s);
        return hispi_fail(ctx, HISP_ERR_OUT_OF_HOST_MEMORY, "cannot start %s compression",
                          has_suffix(path, ".gz") ? "gzip" : "bzip2");
    }
    const char *why;
    int e = hispi_out_open(path, &s->out, &why);
    if (e) {
        if (s->kind == SINK_GZIP) deflateEnd(&s->z);
        if (s->kind == SINK_BZIP2) BZ2_bzCompressEnd(&s->bz);
        free(s->buf);
        free(s);
        return hispi_out_fail(ctx, path, e, why);
    }
    *out = s;
    return HISP_SUCCESS;
}

/* Runs the compressor over n bytes (finish: to the end of the stream). */
static bool pump(hispi_sink *s, const void *p, size_t n, bool finish)
{
    if (s->kind == SINK_GZIP) {
        s->z.next_in = (Bytef *)p;
        s->z.avail_in = (uInt)n;
        int r;
        do {
            s->z.next_out = (Bytef *)s->buf;
            s->z.avail_out = SINK_BUF;
            r = deflate(&s->z, finish ? Z_FINISH : Z_NO_FLUSH);
            if (r == Z_STREAM_ERROR) return false;
            size_t got = SINK_BUF - s->z.avail_out;
            if (got && fwrite(s->buf, 1, got, s->out.f) != got) return false;
        } while (s->z.avail_out == 0 || (finish && r != Z_STREAM_END));
        return true;
    }
    s->bz.next_in = (char *)p;
    s->bz.avail_in = (unsigned)n;
    int r;
    do {
        s->bz.next_out = s->buf;
        s->bz.avail_out = SINK_BUF;
        r = BZ2_bzCompress(&s->bz, finish ? BZ_FINISH : BZ_RUN);
        if (r < 0) return false;
        size_t got = SINK_BUF - s->bz.avail_out;
        if (got && fwrite(s->buf, 1, got, s->out.f) != got) return false;
    } while (s->bz.avail_in > 0 || s->bz.avail_out == 0 || (finish && r != BZ_STREAM_END));
    return true;
}

hisp_status hispi_sink_write(hispi_sink *s, const void *p, size_t n)
{
    if (s->failed) return HISP_ERR_IO;
    const char *c = p;
    while (n && !s->failed) {
        size_t k = n > (1u << 30) ? 1u << 30 : n;
        s->failed = s->kind == SINK_PLAIN ? fwrite(c, 1, k, s->out.f) != k : !pump(s, c, k, false);
        c += k;
        n -= k;
    }
    return s->failed ? HISP_ERR_IO : HISP_SUCCESS;
}

hisp_status hispi_sink_close(hispi_sink *s, bool ok)
{
    if (ok && !s->failed && s->kind != SINK_PLAIN) s->failed = !pump(s, NULL, 0, true);
    if (s->kind == SINK_GZIP) deflateEnd(&s->z);
    if (s->kind == SINK_BZIP2) BZ2_bzCompressEnd(&s->bz);
    int e = hispi_out_close(&s->out, s->path, ok && !s->failed);
    hisp_status st = HISP_SUCCESS;
    if (ok && e) st = hispi_out_fail(s->ctx, s->path, e, NULL);
    free(s->buf);
    free(s);
    return st;
}
