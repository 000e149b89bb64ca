/* Matrix files of the CLI: Matrix Market (.mtx) and HiSparse (.hisp). */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <bzlib.h>
#include <zlib.h>

/* Every input is read once (pipes and FIFOs cannot be read twice): the bytes
 * of the last file read stay here until cli_read_matrix parses them, so
 * sniffing the format or the banner's field opens nothing again. Regular
 * files are read whole; pipes and devices up to CLI_STREAM_LIMIT, and only
 * their first 64 KiB when these start like neither format (the parser then
 * names the problem at once: /dev/zero is refused, not read for ever).
 * gzip and bzip2 data stay compressed here: the library reads them.
 * A regular file over CLI_HEAD_ONLY bytes keeps only its first MiB here
 * (enough to sniff); the library then reads it by path, large Matrix
 * Market files in pieces (no second whole copy in memory). */
static struct {
    char *path, *data; /* data NULL: reading path failed, err says why */
    size_t size;
    bool head_only; /* data is the file's first MiB */
    char err[600];
} held;

#define CLI_HEAD_ONLY ((uint64_t)64 << 20)

static void release(void)
{
    free(held.path);
    free(held.data);
    memset(&held, 0, sizeof held);
}

static bool compressed(const char *p, size_t n)
{
    return (n >= 2 && (unsigned char)p[0] == 0x1f && (unsigned char)p[1] == 0x8b) ||
           (n >= 4 && memcmp(p, "BZh", 3) == 0);
}

/* HISPARSE, or %%MatrixMarket after blanks, or gzip/bzip2 data (the
 * library decompresses Matrix Market files). */
static bool known_start(const char *p, size_t n)
{
    static const char mtx[] = "%%MatrixMarket";
    if ((n >= 8 && memcmp(p, "HISPARSE", 8) == 0) || compressed(p, n)) return true;
    size_t i = strspn(p, " \t\r\n\v\f");
    return n - i >= sizeof mtx - 1 && strncasecmp(p + i, mtx, sizeof mtx - 1) == 0;
}

#define FAIL(...) (snprintf(held.err, sizeof held.err, __VA_ARGS__), CLI_INPUT)

/* Reads path into held (once per path; failures are kept and reported by
 * cli_read_matrix_header, so sniffing prints nothing). */
static int slurp(const char *path)
{
    if (held.path && strcmp(held.path, path) == 0) return held.data ? CLI_OK : CLI_INPUT;
    release();
    held.path = strdup(path);
    if (!held.path) return FAIL("%s: out of host memory", path);
    FILE *f = fopen(path, "rb");
    if (!f) return FAIL("cannot open %s: %s", path, strerror(errno));
    struct stat sb;
    size_t cap = 1 << 16, len = 0, limit = CLI_STREAM_LIMIT;
    bool stream = true;
    if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fclose(f);
        return FAIL("cannot read %s: %s", path, strerror(EISDIR));
    }
    if (S_ISREG(sb.st_mode) && sb.st_size >= 0 && (uint64_t)sb.st_size < SIZE_MAX / 4) {
        cap = (size_t)sb.st_size + 2; /* +2: the first short read ends it */
        limit = SIZE_MAX / 4;
        stream = false;
        if ((uint64_t)sb.st_size > CLI_HEAD_ONLY) {
            cap = limit = (1 << 20) + 1;
            held.head_only = true;
        }
    }
    char *buf = malloc(cap);
    int rc = buf ? CLI_OK : FAIL("%s: out of host memory", path);
    bool sniffed = !stream;
    while (!rc) {
        if (len + 1 >= cap) {
            if (held.head_only) break;
            char *nb = cap < limit ? realloc(buf, cap * 2) : NULL;
            if (!nb) {
                rc = cap >= limit ? FAIL("%s: more than %zu MiB from a pipe or device (the "
                                         "limit for inputs that are not regular files)",
                                         path, limit >> 20)
                                  : FAIL("%s: out of host memory", path);
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t want = cap - 1 - len, got = fread(buf + len, 1, want, f);
        len += got;
        if (got < want) {
            if (ferror(f)) rc = FAIL("cannot read %s: %s", path, strerror(errno));
            break;
        }
        if (!sniffed) {
            sniffed = true;
            if (!known_start(buf, len)) break;
        }
    }
    fclose(f);
    if (rc) {
        free(buf);
        return rc;
    }
    buf[len] = 0;
    held.data = buf;
    held.size = len;
    return CLI_OK;
}

bool cli_is_hisp_file(const char *path)
{
    return slurp(path) == CLI_OK && held.size >= 8 && memcmp(held.data, "HISPARSE", 8) == 0;
}

bool cli_is_hisp_name(const char *path)
{
    size_t n = strlen(path);
    return n >= 5 && strcmp(path + n - 5, ".hisp") == 0;
}

int cli_read_matrix_header(hisp_context ctx, const char *path, hisp_type type, hisp_matrix *A,
                           hisp_mtx_header *h)
{
    cli_progress("reading %s", path);
    if (slurp(path)) {
        int rc = cli_value_error("%s", held.err);
        release();
        return rc;
    }
    bool hisp = held.size >= 8 && memcmp(held.data, "HISPARSE", 8) == 0;
    hisp_status s;
    if (held.head_only)
        s = hisp ? hisp_matrix_load(ctx, path, A) : hisp_matrix_read_mtx(ctx, path, type, A, h);
    else
        s = hisp ? hisp_matrix_load_buffer(ctx, held.data, held.size, path, A)
                 : hisp_matrix_read_mtx_buffer(ctx, held.data, held.size, path, type, A, h);
    release();
    return s ? cli_fail(ctx, s, path) : CLI_OK;
}

int cli_read_matrix(hisp_context ctx, const char *path, hisp_type type, hisp_matrix *A)
{
    return cli_read_matrix_header(ctx, path, type, A, NULL);
}

int cli_write_matrix(hisp_context ctx, hisp_matrix A, const char *path)
{
    cli_progress("writing %s", path);
    hisp_status s =
        cli_is_hisp_name(path) ? hisp_matrix_save(A, path) : hisp_matrix_write_mtx(A, path);
    return s ? cli_fail(ctx, s, path) : CLI_OK;
}

/* The first bytes of compressed data, decompressed, for the banner. */
static size_t head_of(const char *data, size_t size, char *out, size_t cap)
{
    size_t got = 0;
    if ((unsigned char)data[0] == 0x1f) {
        z_stream z;
        memset(&z, 0, sizeof z);
        if (inflateInit2(&z, 15 + 32) != Z_OK) return 0;
        z.next_in = (Bytef *)data;
        z.avail_in = size > (1u << 30) ? 1u << 30 : (uInt)size;
        z.next_out = (Bytef *)out;
        z.avail_out = (uInt)cap;
        inflate(&z, Z_SYNC_FLUSH);
        got = cap - z.avail_out;
        inflateEnd(&z);
    } else {
        bz_stream z;
        memset(&z, 0, sizeof z);
        if (BZ2_bzDecompressInit(&z, 0, 0) != BZ_OK) return 0;
        z.next_in = (char *)data;
        z.avail_in = size > (1u << 30) ? 1u << 30 : (unsigned)size;
        z.next_out = out;
        z.avail_out = (unsigned)cap;
        BZ2_bzDecompress(&z);
        got = cap - z.avail_out;
        BZ2_bzDecompressEnd(&z);
    }
    return got;
}

int cli_mtx_default_type(const char *path, hisp_type *t)
{
    *t = HISP_F64;
    if (slurp(path)) return -1;
    char head[1024], line[256] = "";
    const char *p = held.data;
    size_t size = held.size;
    if (compressed(held.data, held.size)) {
        size = head_of(held.data, held.size, head, sizeof head - 1);
        head[size] = 0;
        p = head;
    }
    p += strspn(p, " \t\r\n\v\f"); /* blank lines before the banner */
    size_t n = strcspn(p, "\n");
    if (n >= sizeof line) n = sizeof line - 1;
    memcpy(line, p, n);
    line[n] = 0;
    char banner[32], object[32], format[32], field[32];
    if (sscanf(line, "%31s %31s %31s %31s", banner, object, format, field) != 4) return 0;
    if (strcasecmp(field, "complex") == 0)
        *t = HISP_C64;
    else if (strcasecmp(field, "quaternion") == 0)
        *t = HISP_Q64;
    return 0;
}

/* gen:KIND:N[:SEED]: the hisp gen kinds (f32/f64; N = grid side or rows,
 * rmat: the scale) and the compound generators (their family's types). */
static int generate(hisp_context ctx, const char *spec, hisp_type t, hisp_matrix *A)
{
    char kind[32] = "";
    const char *p = spec + 4, *c = strchr(p, ':');
    if (!c || (size_t)(c - p) >= sizeof kind)
        return cli_value_error("'%s': expected gen:KIND:N[:SEED]", spec);
    memcpy(kind, p, (size_t)(c - p));
    char *end = NULL;
    errno = 0;
    long long n = strtoll(c + 1, &end, 10);
    unsigned long long seed = 1;
    if (end != c + 1 && *end == ':') {
        const char *sp = end + 1;
        seed = strtoull(sp, &end, 10);
        if (end == sp) end = (char *)"?";
    }
    if (end == c + 1 || *end || n < 1 || errno == ERANGE)
        return cli_value_error("'%s': expected gen:KIND:N[:SEED]", spec);
    hisp_gen_kind gk;
    hisp_cgen_kind ck;
    hisp_status s;
    cli_progress("generating %s n=%lld", kind, n);
    if (hisp_gen_from_name(kind, &gk) == HISP_SUCCESS) {
        hisp_gen_params gp;
        hisp_gen_defaults(gk, &gp);
        if (gk == HISP_GEN_RMAT) {
            if (n > 30) return cli_value_error("'%s': the rmat scale is at most 30", spec);
            gp.scale = (int)n;
        } else {
            gp.n = n;
        }
        gp.seed = seed;
        s = hisp_matrix_generate(ctx, &gp, t, A);
    } else if (hisp_cgen_from_name(kind, &ck) == HISP_SUCCESS) {
        s = hisp_matrix_generate_compound(ctx, ck, n, seed, t, A);
    } else {
        return cli_value_error("'%s': unknown generator (hisp gen's kinds: poisson2d, "
                               "poisson3d, banded, random, rmat, dense, circuit, blockdiag; "
                               "compound: fem3x3, qsurface, helmholtz)",
                               kind);
    }
    return s ? cli_fail(ctx, s, NULL) : CLI_OK;
}

bool cli_is_gen_spec(const char *spec)
{
    return strncmp(spec, "gen:", 4) == 0;
}

hisp_type cli_gen_default_type(const char *spec)
{
    const char *p = spec + 4;
    if (strncmp(p, "fem3x3:", 7) == 0) return HISP_B3X3_F64;
    if (strncmp(p, "qsurface:", 9) == 0) return HISP_Q64;
    if (strncmp(p, "helmholtz:", 10) == 0) return HISP_C64;
    return HISP_F64;
}

int cli_read_matrix_spec(hisp_context ctx, const char *spec, hisp_type type, hisp_matrix *A)
{
    return cli_is_gen_spec(spec) ? generate(ctx, spec, type, A)
                                 : cli_read_matrix(ctx, spec, type, A);
}
