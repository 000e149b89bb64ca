/* The context's options: one table of every setting a user may change, by
 * name (hisp_context_set_option) or through HISP_OPTIONS="name=value,..."
 * read when a context is created. Each option is typed and validated here;
 * the rest of the library reads the parsed values from ctx->opt. */
#include "hispi.h"

#include <ctype.h>
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* Contexts with the debug log on: hispi_debug has no context at hand (it is
 * called from deep in the backends), so it prints while any context has it. */
static atomic_int debug_contexts;

bool hispi_debug_on(void)
{
    return atomic_load_explicit(&debug_contexts, memory_order_relaxed) > 0;
}

typedef struct {
    const char *name;
    hisp_option_type type;
    const char *def;
    const char *meaning;
    double lo, hi;       /* int, real: the valid range */
    const char *choices; /* string: the words allowed ("a|b"; the value stored is the index), or
                            NULL: free text */
    size_t off;          /* the value in hispi_options */
} option;

#define AT(f) offsetof(hispi_options, f)
static const option table[] = {
    {"threads", HISP_OPTION_INT, "0",
     "host threads for builds, conversions and generators (0: one per core; at most 16)", 0, 16,
     NULL, AT(threads)},
    {"cache_dir", HISP_OPTION_STRING, "",
     "folder of the disk cache of built kernels and tuning plans (empty: "
     "$XDG_CACHE_HOME/hisp, else ~/.cache/hisp; \"off\": no disk cache)",
     0, 0, NULL, AT(cache_dir)},
    {"debug", HISP_OPTION_BOOL, "0",
     "log what the library decides and each error to stderr (CLI: also kernel build logs); "
     "one-context solves on a device wait for each step to fill the time breakdown",
     0, 0, NULL, AT(debug)},
    {"amg_theta", HISP_OPTION_REAL, "0.01",
     "AMG's strength threshold: j is a strong neighbour of i when |a_ij| >= theta * "
     "sqrt(|a_ii a_jj|) (0: every coupling)",
     0, 1, NULL, AT(amg_theta)},
    {"amg_smoother", HISP_OPTION_STRING, "chebyshev",
     "AMG's smoother: chebyshev (a polynomial in D^-1 A), jacobi (damped by 4/3 / rho) or "
     "l1-jacobi (D the row sums of |A|)",
     0, 0, "chebyshev|jacobi|l1-jacobi", AT(amg_smoother)},
    {"amg_sweeps", HISP_OPTION_INT, "3",
     "AMG's smoothing steps before and after the coarse correction (chebyshev: its degree)", 1, 10,
     NULL, AT(amg_sweeps)},
    {"amg_block", HISP_OPTION_INT, "0",
     "AMG's nodes: rows aggregated in blocks of this many (the unknowns of one node, e.g. 3 "
     "for 3D elasticity; 0: 3 for a matrix of 3x3 blocks, else 1)",
     0, 8, NULL, AT(amg_block)},
    {"amg_precision", HISP_OPTION_STRING, "auto",
     "AMG's levels and V-cycle in f32 for an f64 system (single), in the system's type (full), "
     "or auto: single where the setup runs on a GPU for a system of at least 100000 rows whose "
     "entries f32 holds, solved by cg or bicgstab or set up as a preconditioner object, else full",
     0, 0, "auto|single|full", AT(amg_precision)},
    {"chebyshev_degree", HISP_OPTION_INT, "4",
     "the Chebyshev preconditioner's steps (degree - 1 products with A per application)", 2, 32,
     NULL, AT(chebyshev_degree)},
    {"ilu_factor_sweeps", HISP_OPTION_INT, "-1",
     "ILU(0) / IC(0): the factorisation's fixed-point sweeps (Chow and Patel), 0: exact, row "
     "by row on the host; -1: 3 where the preconditioner runs on a GPU for a system of at least "
     "100000 rows, else 0",
     -1, 50, NULL, AT(ilu_factor_sweeps)},
    {"ilu_solve_sweeps", HISP_OPTION_INT, "-1",
     "ILU(0) / IC(0): Jacobi sweeps per triangular solve, 0: exact solves (level by level on a "
     "GPU); -1: 2 where the preconditioner runs on a GPU for a system of at least 100000 rows, "
     "else 0",
     -1, 50, NULL, AT(ilu_solve_sweeps)},
    {"spgemm", HISP_OPTION_STRING, "hisp",
     "the kernels of hisp_matrix_multiply and hisp_matrix_ptap: hisp's, or cusparse (the CUDA "
     "backend, f32 and f64: cuSPARSE's generic SpGEMM, ALG1, else ALG3 where ALG1 lacks the "
     "memory; a yardstick)",
     0, 0, "hisp|cusparse", AT(spgemm)},
    {"solver_precision", HISP_OPTION_STRING, "full",
     "cg on an f64 matrix: full (iterations in f64) or mixed (iterations in f32 on A's entries "
     "rounded to f32, x and its residual updated in f64 whenever the f32 residual fell tenfold; "
     "the tolerance holds for the f64 residual)",
     0, 0, "full|mixed", AT(solver_precision)},
};
#undef AT
enum { NOPT = sizeof table / sizeof table[0] };

int hisp_option_count(void)
{
    return NOPT;
}

hisp_status hisp_option_describe(int index, hisp_option_info *info)
{
    if (!info || index < 0 || index >= NOPT) return HISP_ERR_INVALID_ARGUMENT;
    info->name = table[index].name;
    info->type = table[index].type;
    info->default_value = table[index].def;
    info->meaning = table[index].meaning;
    return HISP_SUCCESS;
}

const char *hisp_option_type_name(hisp_option_type t)
{
    switch (t) {
    case HISP_OPTION_INT:
        return "int";
    case HISP_OPTION_BOOL:
        return "bool";
    case HISP_OPTION_STRING:
        return "string";
    case HISP_OPTION_REAL:
        return "real";
    default:
        return "invalid";
    }
}

static const option *find(const char *name, size_t len)
{
    for (int i = 0; i < NOPT; i++)
        if (strlen(table[i].name) == len && strncmp(table[i].name, name, len) == 0)
            return &table[i];
    return NULL;
}

static bool parse_bool(const char *v, bool *out)
{
    static const char *const yes[] = {"1", "true", "on", "yes"}, *const no[] = {"0", "false", "off",
                                                                                "no"};
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(v, yes[i]) == 0) return *out = true, true;
        if (strcasecmp(v, no[i]) == 0) return *out = false, true;
    }
    return false;
}

/* The index of word v in choices ("a|b|c"), or -1. */
static int choice(const char *choices, const char *v)
{
    size_t n = strlen(v);
    int i = 0;
    for (const char *p = choices; p; p = strchr(p, '|') ? strchr(p, '|') + 1 : NULL, i++) {
        const char *e = strchr(p, '|');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, v, n) == 0) return i;
    }
    return -1;
}

/* Validates `value` for `o` and stores it in ctx->opt. */
static hisp_status apply(hisp_context ctx, const option *o, const char *value)
{
    char *field = (char *)&ctx->opt + o->off;
    if (o->type == HISP_OPTION_INT || o->type == HISP_OPTION_REAL) {
        char *end;
        errno = 0;
        double v =
            o->type == HISP_OPTION_INT ? (double)strtol(value, &end, 10) : strtod(value, &end);
        if (!*value || *end || errno || isspace((unsigned char)*value) || v != v)
            return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "option %s: \"%s\" is not %s",
                              o->name, value,
                              o->type == HISP_OPTION_INT ? "an integer" : "a real number");
        if (v < o->lo || v > o->hi)
            return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                              "option %s: %s is out of range [%g, %g]", o->name, value, o->lo,
                              o->hi);
        if (o->type == HISP_OPTION_INT)
            *(int *)field = (int)v;
        else
            *(double *)field = v;
    } else if (o->type == HISP_OPTION_BOOL) {
        bool v;
        if (!parse_bool(value, &v))
            return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                              "option %s: \"%s\" is not a boolean (1/0, true/false, on/off, "
                              "yes/no)",
                              o->name, value);
        if (v != ctx->opt.debug) atomic_fetch_add(&debug_contexts, v ? 1 : -1);
        *(bool *)field = v;
    } else if (o->choices) {
        int k = choice(o->choices, value);
        if (k < 0)
            return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                              "option %s: \"%.200s\" is not one of %s", o->name, value, o->choices);
        *(int *)field = k;
    } else {
        if (strlen(value) >= sizeof ctx->opt.cache_dir)
            return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                              "option %s: longer than %zu characters", o->name,
                              sizeof ctx->opt.cache_dir - 1);
        strcpy(field, value);
    }
    return HISP_SUCCESS;
}

static hisp_status unknown(hisp_context ctx, const char *name, size_t len)
{
    char list[256] = "";
    for (int i = 0; i < NOPT; i++) {
        strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
        strncat(list, table[i].name, sizeof list - strlen(list) - 1);
    }
    return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "unknown option \"%.*s\" (options: %s)",
                      (int)(len > 200 ? 200 : len), name, list);
}

hisp_status hisp_context_set_option(hisp_context ctx, const char *name, const char *value)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!name || !value) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "name or value is NULL");
    const option *o = find(name, strlen(name));
    if (!o) return unknown(ctx, name, strlen(name));
    return apply(ctx, o, value);
}

hisp_status hisp_context_get_option(hisp_context ctx, const char *name, char *value, size_t size)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!name || !value || !size)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "name or value is NULL");
    const option *o = find(name, strlen(name));
    if (!o) return unknown(ctx, name, strlen(name));
    char buf[sizeof ctx->opt.cache_dir];
    const char *field = (const char *)&ctx->opt + o->off;
    if (o->type == HISP_OPTION_INT)
        snprintf(buf, sizeof buf, "%d", *(const int *)field);
    else if (o->type == HISP_OPTION_REAL)
        snprintf(buf, sizeof buf, "%g", *(const double *)field);
    else if (o->type == HISP_OPTION_BOOL)
        snprintf(buf, sizeof buf, "%d", *(const bool *)field ? 1 : 0);
    else if (o->choices) { /* the k-th word */
        const char *p = o->choices;
        for (int k = *(const int *)field; k > 0 && strchr(p, '|'); k--)
            p = strchr(p, '|') + 1;
        snprintf(buf, sizeof buf, "%.*s",
                 (int)(strchr(p, '|') ? strchr(p, '|') - p : (long)strlen(p)), p);
    } else
        snprintf(buf, sizeof buf, "%s", field);
    if (strlen(buf) >= size)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "option %s: value needs %zu bytes",
                          o->name, strlen(buf) + 1);
    strcpy(value, buf);
    return HISP_SUCCESS;
}

hisp_status hispi_options_parse(hisp_context ctx, const char *list)
{
    const char *p = list;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 0) { /* empty items ("a=1,,b=2", a trailing comma) are skipped */
            p += end ? 1 : 0;
            continue;
        }
        const char *eq = memchr(p, '=', len);
        if (!eq)
            return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                              "HISP_OPTIONS: \"%.*s\" is not name=value", (int)len, p);
        const option *o = find(p, (size_t)(eq - p));
        if (!o) {
            hisp_status s = unknown(ctx, p, (size_t)(eq - p));
            char msg[sizeof ctx->err.message];
            snprintf(msg, sizeof msg, "HISP_OPTIONS: %.990s", ctx->err.message);
            return hispi_fail(ctx, s, "%s", msg);
        }
        char value[sizeof ctx->opt.cache_dir + 1];
        size_t vl = len - (size_t)(eq + 1 - p);
        if (vl >= sizeof value)
            return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "HISP_OPTIONS: %s: value too long",
                              o->name);
        memcpy(value, eq + 1, vl);
        value[vl] = 0;
        hisp_status s = apply(ctx, o, value);
        if (s) {
            char msg[sizeof ctx->err.message];
            snprintf(msg, sizeof msg, "HISP_OPTIONS: %.990s", ctx->err.message);
            return hispi_fail(ctx, s, "%s", msg);
        }
        p += len + (end ? 1 : 0);
    }
    return HISP_SUCCESS;
}

void hispi_options_init(hisp_context ctx)
{
    memset(&ctx->opt, 0, sizeof ctx->opt);
    for (int i = 0; i < NOPT; i++) /* the defaults are valid: no error is left */
        if (table[i].type != HISP_OPTION_BOOL) (void)apply(ctx, &table[i], table[i].def);
}

void hispi_options_fini(hisp_context ctx)
{
    if (ctx->opt.debug) atomic_fetch_sub(&debug_contexts, 1);
    ctx->opt.debug = false;
}

void hispi_options_inherit(hisp_context dst, hisp_context src)
{
    if (!dst || !src) return;
    if (src->opt.debug != dst->opt.debug)
        atomic_fetch_add(&debug_contexts, src->opt.debug ? 1 : -1);
    dst->opt = src->opt;
}

int hispi_threads(hisp_context ctx, double work)
{
    if (work < HISPI_PARALLEL_WORK) return 1;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int t = cpus < 1 ? 1 : cpus > 16 ? 16 : (int)cpus;
    int n = ctx ? ctx->opt.threads : 0;
    return n >= 1 ? n : t;
}
