/* Argument parsing, error reporting and progress helpers of the CLI. */
#include "cli.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

/* The program in messages: "hisp" or "hisp CMD". */
static void prog_name(char *buf, size_t n, const char *cmd)
{
    snprintf(buf, n, "hisp%s%s", cmd ? " " : "", cmd ? cmd : "");
}

void cli_args_init(cli_args *a, const char *cmd, int argc, char **argv)
{
    char prog[sizeof a->prog];
    prog_name(prog, sizeof prog, cmd);
    opts_iter_init(a, prog, argc, argv); /* argv[0] is the subcommand */
}

int cli_args_next(cli_args *a, const cli_opt *opts, const char **val)
{
    return opts_next(a, opts, val);
}

int cli_parse_command(const char *cmd, int argc, char **argv, const cli_opt *opts, const char *help,
                      const char **val, const char **pos)
{
    char prog[64];
    prog_name(prog, sizeof prog, cmd);
    return opts_parse(prog, argc, argv, opts, help, val, pos);
}

int cli_parse_inputs(const char *cmd, int argc, char **argv, const cli_opt *opts, const char *help,
                     const char **val, const char **in, int nin)
{
    cli_args a;
    cli_args_init(&a, cmd, argc, argv);
    for (;;) {
        const char *v;
        int k = cli_args_next(&a, opts, &v);
        if (k == CLI_ARG_END) return CLI_OK;
        if (k == CLI_ARG_ERROR) return CLI_USAGE;
        if (k == CLI_ARG_POSITIONAL) {
            int i = 0;
            while (i < nin && in[i])
                i++;
            if (i == nin) return cli_usage_error(cmd, "unexpected argument '%s'", v);
            in[i] = v;
        } else if (!strcmp(opts[k].name, "--help") || !strcmp(opts[k].name, "-h")) {
            fputs(help, stdout);
            return CLI_HELP_SHOWN;
        } else {
            val[k] = v ? v : "";
        }
    }
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    char prog[64];
    prog_name(prog, sizeof prog, cmd);
    va_list ap;
    va_start(ap, fmt);
    int rc = opts_vusage_error(prog, fmt, ap);
    va_end(ap);
    return rc;
}

int cli_value_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = opts_vvalue_error("hisp", fmt, ap);
    va_end(ap);
    return rc;
}

int cli_parse_i64(const char *opt, const char *s, int64_t min, int64_t max, int64_t *out)
{
    return opts_i64("hisp", opt, s, min, max, out);
}

int cli_parse_int(const char *opt, const char *s, int min, int max, int *out)
{
    return opts_int("hisp", opt, s, min, max, out);
}

int cli_parse_u64(const char *opt, const char *s, uint64_t *out)
{
    return opts_u64("hisp", opt, s, out);
}

int cli_parse_double(const char *opt, const char *s, double *out)
{
    return opts_double("hisp", opt, s, -DBL_MAX, DBL_MAX, out);
}

int cli_check_real(const char *opt, double v, hisp_type t)
{
    if (hisp_type_size(t) / (size_t)hisp_type_components(t) != 4) return CLI_OK;
    if (fabs(v) > FLT_MAX)
        return cli_value_error("%s: %g is out of range for %s (|value| <= %g)", opt, v,
                               hisp_type_name(t), (double)FLT_MAX);
    if (v != 0 && (float)v == 0)
        return cli_value_error("%s: %g rounds to 0 in %s (|value| >= %g)", opt, v,
                               hisp_type_name(t), (double)FLT_TRUE_MIN);
    return CLI_OK;
}

/* scale * sqrt(sum) += v^2 without forming v^2 */
static void ssq_add(double v, double *scale, double *sum)
{
    v = fabs(v);
    if (v == 0) return;
    if (!isfinite(v)) {
        *scale = v; /* Inf or NaN: the norm is that */
        *sum = 1;
    } else if (*scale < v) {
        *sum = 1 + *sum * (*scale / v) * (*scale / v);
        *scale = v;
    } else if (isfinite(*scale)) {
        *sum += (v / *scale) * (v / *scale);
    }
}

void cli_error_add(double a, double b, cli_error *e)
{
    if (isfinite(b)) ssq_add(b, &e->den_scale, &e->den_sum);
    if (a == b || (isnan(a) && isnan(b))) return; /* equal infinities too */
    ssq_add(a - b, &e->num_scale, &e->num_sum);
}

double cli_error_relative(const cli_error *e)
{
    double num = e->num_scale * sqrt(e->num_sum);
    if (e->den_scale == 0) return num;
    return e->num_scale / e->den_scale * sqrt(e->num_sum / e->den_sum);
}

int cli_write_text(const char *path, const char *data, size_t n)
{
    hisp_context ctx = NULL;
    int rc = cli_context(&ctx);
    if (rc) return rc;
    hisp_status s = hisp_file_write(ctx, path, data, n);
    rc = s ? cli_fail(ctx, s, path) : CLI_OK;
    hisp_context_destroy(&ctx);
    return rc;
}

int cli_parse_op(const char *opt, const char *s, hisp_op *out)
{
    if (strcasecmp(s, "n") == 0)
        *out = HISP_OP_N;
    else if (strcasecmp(s, "t") == 0)
        *out = HISP_OP_T;
    else if (strcasecmp(s, "h") == 0)
        *out = HISP_OP_H;
    else
        return cli_value_error("%s: unknown op '%s' (n: A, t: A^T, h: A^H)", opt, s);
    return CLI_OK;
}

int cli_parse_transpose(const char *cmd, const char *tr_val, const char *op_val, hisp_op *out)
{
    *out = HISP_OP_N;
    if (tr_val && op_val)
        return cli_usage_error(cmd, "give --transpose or --op (its alias), not both");
    if (op_val) return cli_parse_op("--op", op_val, out);
    if (!tr_val) return CLI_OK;
    if (!tr_val[0]) {
        *out = HISP_OP_T;
        return CLI_OK;
    }
    return cli_parse_op("--transpose", tr_val, out);
}

int cli_parse_format(const char *what, const char *val, hisp_format *f, bool *is_auto)
{
    if (is_auto) *is_auto = false;
    if (is_auto && strcasecmp(val, "auto") == 0) {
        *is_auto = true;
        *f = HISP_FORMAT_CSR;
        return CLI_OK;
    }
    hisp_format g;
    if (hisp_format_from_name(val, &g) || g == HISP_FORMAT_COO || g == HISP_FORMAT_CSC)
        return cli_value_error("%s --format: '%s' is not supported (csr, hisparse, sell%s)", what,
                               val, is_auto ? ", auto" : "");
    *f = g;
    return CLI_OK;
}

int cli_parse_out(const char *cmd, const char *const v[3], const char **out)
{
    static const char *const names[3] = {"-o", "--out", "--output"};
    *out = NULL;
    for (int k = 0; k < 3; k++) {
        if (!v[k]) continue;
        if (*out)
            return cli_usage_error(cmd, "give the output file once (-o, --out and --output are "
                                        "the same option)");
        *out = v[k];
        if (!v[k][0]) return cli_usage_error(cmd, "%s: an empty file name", names[k]);
    }
    return CLI_OK;
}

const char *cli_op_name(hisp_op op)
{
    return op == HISP_OP_N ? "A" : op == HISP_OP_T ? "A^T" : "A^H";
}

int cli_parse_backend(const char *opt, const char *s, hisp_backend_kind *out)
{
    if (hisp_backend_from_name(s, out) != HISP_SUCCESS)
        return cli_value_error("%s: unknown backend '%s' (auto, reference, opencl or cuda)", opt,
                               s);
    return CLI_OK;
}

int cli_exit_code(hisp_status s)
{
    switch (s) {
    case HISP_SUCCESS:
        return CLI_OK;
    case HISP_ERR_INPUT_FORMAT:
    case HISP_ERR_IO:
    case HISP_ERR_INVALID_ARGUMENT:
    case HISP_ERR_OUT_OF_HOST_MEMORY: /* the input is too large for this machine */
    case HISP_ERR_UNSUPPORTED:        /* type/format the request cannot be served in */
        return CLI_INPUT;
    case HISP_ERR_NO_DEVICE:
    case HISP_ERR_BACKEND:
    case HISP_ERR_KERNEL_BUILD:
    case HISP_ERR_OUT_OF_DEVICE_MEMORY:
    case HISP_ERR_NOT_COMPILED:
    case HISP_ERR_INVALID_HANDLE:
        return CLI_BACKEND;
    }
    return CLI_BACKEND;
}

int cli_fail(hisp_context ctx, hisp_status s, const char *path)
{
    hisp_error_info e = {0};
    const char *msg = NULL;
    if (ctx && hisp_context_last_error(ctx, &e) == HISP_SUCCESS && e.status == s) msg = e.message;
    if (!msg || !msg[0]) msg = hisp_status_string(s);
    const char *file = e.file;
    /* name the file we were working on unless the message already does */
    if (!file && path && !strstr(msg, path)) file = path;
    if (file && e.line > 0)
        fprintf(stderr, "hisp: %s:%lld: %s\n", file, (long long)e.line, msg);
    else if (file)
        fprintf(stderr, "hisp: %s: %s\n", file, msg);
    else
        fprintf(stderr, "hisp: %s\n", msg);
    char debug[8] = "0";
    if (ctx && hisp_context_get_option(ctx, "debug", debug, sizeof debug)) debug[0] = '0';
    if (e.build_log && e.build_log[0] && debug[0] == '1')
        fprintf(stderr, "build log:\n%s\n", e.build_log);
    return cli_exit_code(s);
}

static bool progress_on;

void cli_progress_enable(bool json)
{
    progress_on = !json && isatty(STDERR_FILENO);
}

void cli_progress(const char *fmt, ...)
{
    if (!progress_on) return;
    va_list ap;
    va_start(ap, fmt);
    fputs("hisp: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

double cli_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

int cli_context(hisp_context *ctx)
{
    hisp_status s = hisp_context_create(ctx);
    if (s == HISP_SUCCESS) {
        /* a first use's kernel builds are announced (cannot fail on a new context) */
        if (hisp_context_set_build_notify(*ctx, cli_build_notice, NULL)) {
        }
        return CLI_OK;
    }
    hisp_error_info e = {0}; /* why it failed (a bad HISP_OPTIONS) */
    if (hisp_context_last_error(NULL, &e) == HISP_SUCCESS && e.status == s && e.message &&
        e.message[0]) {
        fprintf(stderr, "hisp: %s\n", e.message);
        return cli_exit_code(s);
    }
    return cli_fail(NULL, s, NULL);
}
