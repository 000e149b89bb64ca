/* Command-line options by table; see opts.h. */
#include "opts.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void opts_iter_init(opts_iter *it, const char *prog, int argc, char **argv)
{
    snprintf(it->prog, sizeof it->prog, "%s", prog);
    it->argc = argc;
    it->argv = argv;
    it->i = 1;
    it->only_pos = false;
}

/* Is arg an op, n, t or h (case-insensitive)? */
static bool is_op_word(const char *arg)
{
    return (arg[0] == 'n' || arg[0] == 'N' || arg[0] == 't' || arg[0] == 'T' || arg[0] == 'h' ||
            arg[0] == 'H') &&
           arg[1] == 0;
}

int opts_next(opts_iter *it, const opts_def *defs, const char **val)
{
    *val = NULL;
    if (it->i >= it->argc) return OPTS_END;
    const char *arg = it->argv[it->i++];
    if (it->only_pos || arg[0] != '-' || arg[1] == 0) { /* "-" alone is a file name */
        *val = arg;
        return OPTS_POSITIONAL;
    }
    if (strcmp(arg, "--") == 0) {
        it->only_pos = true;
        return opts_next(it, defs, val);
    }
    const char *eq = strchr(arg, '=');
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    for (int k = 0; defs[k].name; k++) {
        if (strlen(defs[k].name) != len || strncmp(defs[k].name, arg, len) != 0) continue;
        bool op = defs[k].has_arg == OPTS_ARG_OP;
        if (!defs[k].has_arg || op) {
            if (eq && !op) {
                opts_usage_error(it->prog, "option '%s' takes no value", defs[k].name);
                return OPTS_ERROR;
            }
            if (eq)
                *val = eq + 1;
            else if (op && it->i < it->argc && is_op_word(it->argv[it->i]))
                *val = it->argv[it->i++];
            return k;
        }
        if (eq) {
            *val = eq + 1;
        } else if (it->i < it->argc) {
            *val = it->argv[it->i++];
        } else {
            opts_usage_error(it->prog, "option '%s' needs a value", defs[k].name);
            return OPTS_ERROR;
        }
        return k;
    }
    opts_usage_error(it->prog, "unknown option '%.*s'", (int)len, arg);
    return OPTS_ERROR;
}

int opts_parse(const char *prog, int argc, char **argv, const opts_def *defs, const char *help,
               const char **val, const char **pos)
{
    opts_iter it;
    opts_iter_init(&it, prog, argc, argv);
    for (;;) {
        const char *v;
        int k = opts_next(&it, defs, &v);
        if (k == OPTS_END) return OPTS_OK;
        if (k == OPTS_ERROR) return OPTS_USAGE;
        if (k == OPTS_POSITIONAL) {
            if (!pos || *pos) return opts_usage_error(prog, "unexpected argument '%s'", v);
            *pos = v;
        } else if (strcmp(defs[k].name, "--help") == 0 || strcmp(defs[k].name, "-h") == 0) {
            fputs(help, stdout);
            return OPTS_HELP_SHOWN;
        } else {
            val[k] = v ? v : "";
        }
    }
}

int opts_vusage_error(const char *prog, const char *fmt, va_list ap)
{
    fprintf(stderr, "%s: ", prog);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry '%s --help'.\n", prog);
    return OPTS_USAGE;
}

int opts_usage_error(const char *prog, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = opts_vusage_error(prog, fmt, ap);
    va_end(ap);
    return rc;
}

int opts_vvalue_error(const char *prog, const char *fmt, va_list ap)
{
    fprintf(stderr, "%s: ", prog);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    return OPTS_INPUT;
}

int opts_value_error(const char *prog, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = opts_vvalue_error(prog, fmt, ap);
    va_end(ap);
    return rc;
}

int opts_i64(const char *prog, const char *opt, const char *s, int64_t min, int64_t max,
             int64_t *out)
{
    if (!s) return OPTS_OK;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10); /* decimal: 010 is ten */
    if (end == s || *end != 0 || errno == ERANGE)
        return opts_value_error(prog, "%s: '%s' is not an integer", opt, s);
    if (v < min || v > max)
        return opts_value_error(prog, "%s: %lld is out of range [%" PRId64 ", %" PRId64 "]", opt, v,
                                min, max);
    *out = v;
    return OPTS_OK;
}

int opts_int(const char *prog, const char *opt, const char *s, int min, int max, int *out)
{
    int64_t v = 0;
    int rc = opts_i64(prog, opt, s, min, max, &v);
    if (rc == OPTS_OK && s) *out = (int)v;
    return rc;
}

int opts_u64(const char *prog, const char *opt, const char *s, uint64_t *out)
{
    if (!s) return OPTS_OK;
    char *end = NULL;
    errno = 0;
    if (s[0] == '-') return opts_value_error(prog, "%s: '%s' must not be negative", opt, s);
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || *end != 0 || errno == ERANGE)
        return opts_value_error(prog, "%s: '%s' is not an unsigned integer", opt, s);
    *out = v;
    return OPTS_OK;
}

int opts_double(const char *prog, const char *opt, const char *s, double min, double max,
                double *out)
{
    if (!s) return OPTS_OK;
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != 0 || errno == ERANGE || !isfinite(v))
        return opts_value_error(prog, "%s: '%s' is not a finite number", opt, s);
    if (v < min || v > max)
        return opts_value_error(prog, "%s: %g is out of range [%g, %g]", opt, v, min, max);
    *out = v;
    return OPTS_OK;
}

int opts_choice(const char *prog, const char *opt, const char *s, const char *const *names,
                int *out)
{
    if (!s) return OPTS_OK;
    int n = 0;
    for (; names[n]; n++)
        if (strcmp(s, names[n]) == 0) {
            *out = n;
            return OPTS_OK;
        }
    fprintf(stderr, "%s: %s: '%s' is not ", prog, opt, s);
    for (int k = 0; k < n; k++)
        fprintf(stderr, "%s%s", names[k], k + 2 < n ? ", " : k + 2 == n ? " or " : "\n");
    return OPTS_INPUT;
}
