/* Command-line options by table, shared by the hisp CLI and the bench
 * programs: an option table, an iterator over argv, the whole command line
 * into one value per option, --help, and the messages of a usage error or a
 * bad value, each naming the program ("hisp spmv", "bench_vector").
 *
 * Plain C and libc only (no hisp): built once, linked by build/bin/hisp,
 * hisp-mpi and every build/bench program. */
#ifndef HISP_OPTS_H
#define HISP_OPTS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

/* Exit statuses of the hisp CLI (its CLI_USAGE, CLI_INPUT), and what
 * opts_parse returns after printing the help (the program then exits 0). */
enum { OPTS_OK = 0, OPTS_USAGE = 1, OPTS_INPUT = 2, OPTS_HELP_SHOWN = -100 };

/* opts_def.has_arg: false (a flag), true (takes a value), or OPTS_ARG_OP: a
 * flag that may take an op all the same, "--x=V" or "--x W" when the next
 * argument is n, t or h (case-insensitive), as hisp's --transpose [n|t|h]. */
enum { OPTS_ARG_OP = 2 };
typedef struct {
    const char *name; /* "--n", "-o"; a table ends with {0, 0} */
    int has_arg;
} opts_def;

/* The rows opts_parse answers with the help text. */
// clang-format off
#define OPTS_HELP_DEFS {"--help", false}, {"-h", false}
// clang-format on

enum { OPTS_END = -1, OPTS_POSITIONAL = -2, OPTS_ERROR = -3 };

typedef struct {
    char prog[64]; /* for messages: "hisp add", "bench_vector" */
    int argc;
    char **argv;
    int i;         /* next argv index (argv[0] names the program) */
    bool only_pos; /* after "--" */
} opts_iter;

void opts_iter_init(opts_iter *it, const char *prog, int argc, char **argv);
/* Next option: its index in defs with *val set for options taking a value
 * ("--x V" or "--x=V"); OPTS_POSITIONAL with *val the argument; OPTS_END;
 * or OPTS_ERROR after printing a usage message (unknown option, a value
 * missing, or given to a flag). */
int opts_next(opts_iter *it, const opts_def *defs, const char **val);

/* The whole command line. val[k] (room for every row of defs) gets the
 * value of defs[k] (the last one given; "" for a flag), *pos the positional
 * argument (NULL when none; a second one, or any when pos is NULL, is a
 * usage error). An option named --help or -h prints `help` on stdout.
 * Returns OPTS_OK, OPTS_USAGE (printed) or OPTS_HELP_SHOWN. */
int opts_parse(const char *prog, int argc, char **argv, const opts_def *defs, const char *help,
               const char **val, const char **pos);

/* "PROG: message" and "Try 'PROG --help'." on stderr; returns OPTS_USAGE. */
int opts_usage_error(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int opts_vusage_error(const char *prog, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
/* A bad value: "PROG: message" on stderr; returns OPTS_INPUT. */
int opts_value_error(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int opts_vvalue_error(const char *prog, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

/* Values of the option `opt` (named in the message): decimal integers in
 * [min, max], unsigned ones, finite numbers in [min, max], or one of the
 * NULL-terminated `names` (*out its index). A bad value prints "PROG: OPT:
 * why" and returns OPTS_INPUT. s NULL (the option was not given) leaves
 * *out as it is (the default) and returns OPTS_OK. */
int opts_i64(const char *prog, const char *opt, const char *s, int64_t min, int64_t max,
             int64_t *out);
int opts_int(const char *prog, const char *opt, const char *s, int min, int max, int *out);
int opts_u64(const char *prog, const char *opt, const char *s, uint64_t *out);
int opts_double(const char *prog, const char *opt, const char *s, double min, double max,
                double *out);
int opts_choice(const char *prog, const char *opt, const char *s, const char *const *names,
                int *out);

#endif
