/* Matrix files of the CLI: Matrix Market (.mtx) and HiSparse (.hisp). */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

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

void cli_file_sizes(const hisp_matrix_info *mi, bool mtx, int64_t *rows, int64_t *cols,
                    int64_t *nnz)
{
    bool blocks = mtx && (mi->type == HISP_B3X3_F32 || mi->type == HISP_B3X3_F64);
    *rows = mi->nrows * (blocks ? 3 : 1);
    *cols = mi->ncols * (blocks ? 3 : 1);
    *nnz = mi->nnz * (blocks ? 9 : 1);
}

/* A Matrix Market file's entry type from its banner's field (complex: c64,
 * quaternion: q64, else f64), from the bytes slurp holds (the whole file,
 * or its first MiB); -1 when the file cannot be read or its header is bad
 * (the reader then says why). */
static int mtx_default_type(hisp_context ctx, const char *path, hisp_type *t)
{
    *t = HISP_F64;
    if (slurp(path)) return -1;
    hisp_mtx_info info;
    if (hisp_matrix_read_mtx_info_buffer(ctx, held.data, held.size, path, &info)) return -1;
    *t = info.type;
    return 0;
}

/* Compound generators: their family (f32 and f64 forms) and default size. */
static const struct {
    const char *name;
    hisp_type t32, t64;
    int64_t n;
} cgens[] = {{"fem3x3", HISP_B3X3_F32, HISP_B3X3_F64, 10},
             {"qsurface", HISP_Q32, HISP_Q64, 32},
             {"helmholtz", HISP_C32, HISP_C64, 100},
             {"elastic3d", HISP_B3X3_F32, HISP_B3X3_F64, 10}};

static int cgen_index(const char *kind)
{
    for (int i = 0; i < (int)(sizeof cgens / sizeof cgens[0]); i++)
        if (strcasecmp(kind, cgens[i].name) == 0) return i;
    return -1;
}

bool cli_is_compound_gen(const char *kind)
{
    return cgen_index(kind) >= 0;
}

bool cli_type_real(hisp_type t)
{
    return t == HISP_F32 || t == HISP_F64;
}

int cli_generate(hisp_context ctx, const char *kind, int64_t n, uint64_t seed,
                 const hisp_gen_params *p, hisp_type t, hisp_matrix *A)
{
    hisp_gen_kind gk;
    hisp_cgen_kind ck;
    hisp_status s;
    int ci = cgen_index(kind);
    if (ci >= 0 && hisp_cgen_from_name(cgens[ci].name, &ck) == HISP_SUCCESS) {
        if (t != cgens[ci].t32 && t != cgens[ci].t64)
            return cli_value_error("gen: %s makes %s or %s matrices, not %s", cgens[ci].name,
                                   hisp_type_name(cgens[ci].t32), hisp_type_name(cgens[ci].t64),
                                   hisp_type_name(t));
        if (n <= 0) n = cgens[ci].n;
        if (!seed) seed = 1;
        cli_progress("generating %s n=%lld", cgens[ci].name, (long long)n);
        s = hisp_matrix_generate_compound(ctx, ck, n, seed, t, A);
    } else if (hisp_gen_from_name(kind, &gk) == HISP_SUCCESS) {
        if (!cli_type_real(t))
            return cli_value_error("gen: %s makes f32 or f64 matrices, not %s (complex: "
                                   "helmholtz, quaternion: qsurface, 3x3 blocks: fem3x3, "
                                   "elastic3d)",
                                   hisp_gen_name(gk), hisp_type_name(t));
        hisp_gen_params gp;
        if (p) {
            gp = *p;
        } else {
            hisp_gen_defaults(gk, &gp);
            if (gk == HISP_GEN_RMAT && n > 30)
                return cli_value_error("gen:%s: the rmat scale is at most 30", kind);
            if (n > 0 && gk == HISP_GEN_RMAT) gp.scale = (int)n;
            if (n > 0 && gk != HISP_GEN_RMAT) gp.n = n;
            if (seed) gp.seed = seed;
        }
        cli_progress("generating %s", hisp_gen_name(gk));
        s = hisp_matrix_generate(ctx, &gp, t, A);
    } else {
        return cli_value_error("unknown generator '%s' (poisson2d, poisson3d, banded, random, "
                               "rmat, dense, circuit, blockdiag, aniso3d, jump3d; compound: "
                               "fem3x3, elastic3d, qsurface, helmholtz)",
                               kind);
    }
    return s ? cli_fail(ctx, s, NULL) : CLI_OK;
}

/* gen:KIND[:N[:SEED]] (CLI_GEN_SPEC_HELP); quiet: no message (the
 * generation that follows says why). */
static int parse_gen_spec(const char *spec, bool quiet, char kind[32], int64_t *n, uint64_t *seed)
{
    const char *p = spec + 4, *c = strchr(p, ':');
    size_t kl = c ? (size_t)(c - p) : strlen(p);
    const char *why = NULL;
    *n = 0;
    *seed = 0;
    if (kl == 0 || kl >= 32) why = "";
    if (!why) {
        memcpy(kind, p, kl);
        kind[kl] = 0;
    }
    if (!why && c) {
        char *end = NULL;
        errno = 0;
        long long v = strtoll(c + 1, &end, 10);
        if (end == c + 1 || (*end && *end != ':') || v < 1 || errno == ERANGE) {
            why = " with N >= 1";
        } else {
            *n = v;
            if (*end == ':') {
                const char *sp = end + 1;
                errno = 0;
                unsigned long long sv = strtoull(sp, &end, 10);
                if (end == sp || *end || *sp == '-' || errno == ERANGE)
                    why = ", SEED a number";
                else
                    *seed = sv;
            }
        }
    }
    if (!why) return CLI_OK;
    if (quiet) return CLI_INPUT;
    return cli_value_error("'%s': expected gen:KIND[:N[:SEED]]%s", spec, why);
}

static int generate(hisp_context ctx, const char *spec, hisp_type t, hisp_matrix *A)
{
    char kind[32];
    int64_t n;
    uint64_t seed;
    int rc = parse_gen_spec(spec, false, kind, &n, &seed);
    return rc ? rc : cli_generate(ctx, kind, n, seed, NULL, t, A);
}

bool cli_is_gen_spec(const char *spec)
{
    return strncmp(spec, "gen:", 4) == 0;
}

/* A generator's family (f64, b3x3_f64, q64, c64). */
static hisp_type gen_default_type(const char *spec)
{
    char kind[32];
    int64_t n;
    uint64_t seed;
    if (parse_gen_spec(spec, true, kind, &n, &seed)) return HISP_F64; /* generate() says why */
    int ci = cgen_index(kind);
    return ci >= 0 ? cgens[ci].t64 : HISP_F64;
}

/* ---- entry types ------------------------------------------------------------ */

int cli_parse_type(const char *cmd, const char *const v[3], cli_type *t)
{
    static const char *const names[3] = {"--type", "--entry", "--precision"};
    const char *name = NULL, *opt = NULL;
    t->type = HISP_F64;
    t->given = false;
    for (int i = 0; i < 3; i++)
        if (v[i]) {
            if (name)
                return cli_usage_error(cmd,
                                       "give one of --type, --entry, --precision (%s and "
                                       "%s are the same option)",
                                       opt, names[i]);
            name = v[i];
            opt = names[i];
        }
    if (!name) return CLI_OK;
    if (hisp_type_from_name(name, &t->type) != HISP_SUCCESS) {
        /* the old spellings of --precision */
        if (strcasecmp(name, "float") == 0 || strcasecmp(name, "single") == 0)
            t->type = HISP_F32;
        else if (strcasecmp(name, "double") == 0)
            t->type = HISP_F64;
        else
            return cli_value_error("%s: unknown type '%s' (f32, f64, c32, c64, q32, q64, "
                                   "b3x3_f32, b3x3_f64)",
                                   opt, name);
    }
    t->given = true;
    return CLI_OK;
}

hisp_type cli_spec_type(hisp_context ctx, const char *spec, const cli_type *t)
{
    if (t && t->given) return t->type;
    if (cli_is_gen_spec(spec)) return gen_default_type(spec);
    hisp_type d = HISP_F64;
    if (!ctx || mtx_default_type(ctx, spec, &d)) d = HISP_F64; /* the reader says why */
    return d;
}

int cli_load_matrix(hisp_context ctx, const char *spec, const cli_type *t, hisp_matrix *A,
                    hisp_mtx_header *h)
{
    hisp_type want = cli_spec_type(ctx, spec, t);
    bool hispf = !cli_is_gen_spec(spec) && cli_is_hisp_file(spec);
    int rc = cli_is_gen_spec(spec) ? generate(ctx, spec, want, A)
                                   : cli_read_matrix_header(ctx, spec, want, A, h);
    if (rc || !hispf || !t || !t->given) return rc;
    hisp_matrix_info mi;
    hisp_status s = hisp_matrix_get_info(*A, &mi);
    if (s) return cli_fail(ctx, s, spec);
    if (mi.type != t->type) {
        hisp_matrix_destroy(A);
        return cli_value_error("%s: a HiSparse file of %s entries (--type %s does not convert it)",
                               spec, hisp_type_name(mi.type), hisp_type_name(t->type));
    }
    return CLI_OK;
}

int cli_type_unsupported(const char *cmd, hisp_type t, const char *why)
{
    return cli_value_error("%s: %s matrices are not supported (%s)", cmd, hisp_type_name(t), why);
}
