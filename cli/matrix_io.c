/* Matrix files of the CLI: Matrix Market (.mtx) and HiSparse (.hisp). */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

bool cli_is_hisp_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    char magic[8] = {0};
    size_t n = fread(magic, 1, 8, f);
    fclose(f);
    return n == 8 && memcmp(magic, "HISPARSE", 8) == 0;
}

int cli_read_matrix(hisp_context ctx, const char *path, hisp_type type, hisp_matrix *A)
{
    cli_progress("reading %s", path);
    hisp_status s = cli_is_hisp_file(path) ? hisp_matrix_load(ctx, path, A)
                                           : hisp_matrix_read_mtx(ctx, path, type, A, NULL);
    return s ? cli_fail(ctx, s, path) : CLI_OK;
}

int cli_write_matrix(hisp_context ctx, hisp_matrix A, const char *path)
{
    size_t n = strlen(path);
    bool hisp = n >= 5 && strcmp(path + n - 5, ".hisp") == 0;
    cli_progress("writing %s", path);
    hisp_status s = hisp ? hisp_matrix_save(A, path) : hisp_matrix_write_mtx(A, path);
    return s ? cli_fail(ctx, s, path) : CLI_OK;
}

int cli_mtx_default_type(const char *path, hisp_type *t)
{
    *t = HISP_F64;
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    char line[256] = "";
    bool got = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    if (!got) return 0; /* the reader names what is wrong */
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
