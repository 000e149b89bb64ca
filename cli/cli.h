/* The `hisp` command-line program: shared declarations.
 *
 * The CLI is a thin layer over the public API (hisp.h only). Each subcommand
 * lives in cli/cmd_<name>.c; argument helpers in args.c (the parser itself
 * in opts/, which the bench programs share), the JSON writer in json.c,
 * SpMV timing/checking shared by `spmv` and `demo` in measure.c. */
#ifndef HISP_CLI_H
#define HISP_CLI_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "hisp.h"
#include "opts/opts.h"

/* Exit codes (documented in `hisp --help`). */
enum {
    CLI_OK = 0,
    CLI_USAGE = OPTS_USAGE, /* bad command line: unknown option, missing argument */
    CLI_INPUT = OPTS_INPUT, /* bad input: malformed file, I/O failure, invalid value */
    CLI_BACKEND = 3,        /* backend/device: no device, not compiled, backend failure */
    CLI_NOT_CONVERGED = 4,  /* solve: stopped without meeting the tolerance */
    CLI_CHECK = 5           /* --check: error against the reference above tolerance */
};

/* ---- subcommands ------------------------------------------------------- */

int cmd_info(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_spmv(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_add(int argc, char **argv);
int cmd_multiply(int argc, char **argv);
int cmd_edit(int argc, char **argv);
int cmd_mspmv(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_solve(int argc, char **argv);
int cmd_bench(int argc, char **argv);
/* --mpi (mpi_exec.c): argv[1..] holds `flag` (before any "--")? The plain
 * program replaces itself with hisp-mpi of its folder, same arguments
 * (argv[0] the subcommand); returns only on failure. */
bool cli_has_flag(int argc, char **argv, const char *flag);
int cli_exec_mpi(int argc, char **argv);
/* hisp solve --mpi (hisp-mpi only: cli/mpi/solve_mpi.c); argv[0] is "solve". */
int solve_mpi(int argc, char **argv);
/* Progress of hisp_matrix_choose_format on stderr (cmd_tune.c): a line
 * rewritten in place on a terminal, else throttled lines (at most one a
 * second, one per 10 % of a stage or 10 s), with the best so far and an
 * estimate of the time left; _end closes the terminal's line. */
void cli_format_progress(void *user, const hisp_format_progress_info *p);
void cli_format_progress_end(void);
/* The format name of a choice: "csr", the format's name, "variant". */
const char *cli_choice_kind(const hisp_format_result *r);
/* --format NAME: csr, hisparse, sell (and "auto" where auto is not NULL:
 * *is_auto); what the operation `what` does not run is a usage error. */
int cli_parse_format(const char *what, const char *val, hisp_format *f, bool *is_auto);
/* hisp spmv with --layout/--schedule/--plan (cmd_tune.c); t: --type. */
struct cli_type_s;
int cli_spmv_compound(const char *path, const struct cli_type_s *t, const char *layout,
                      const char *schedule, const char *plan, hisp_backend_kind backend, int device,
                      int repeat, bool check, bool json, double alpha, double beta);

/* ---- matrix files (matrix_io.c) ---------------------------------------- */

/* Inputs are read once (pipes, FIFOs, /dev/stdin work): the sniffing calls
 * keep the bytes for the read. Pipes and devices are read up to this many
 * bytes (regular files have no limit here). */
#define CLI_STREAM_LIMIT ((size_t)1 << 30)
/* Is path a HiSparse file (by its magic bytes; false when unreadable)? */
bool cli_is_hisp_file(const char *path);
/* Does the output name end in .hisp (cli_write_matrix's choice)? */
bool cli_is_hisp_name(const char *path);
/* Reads a .mtx (into type) or .hisp file (its own type); prints on failure
 * and returns the exit code. h (may be NULL) gets a .mtx file's banner. */
int cli_read_matrix(hisp_context ctx, const char *path, hisp_type type, hisp_matrix *A);
int cli_read_matrix_header(hisp_context ctx, const char *path, hisp_type type, hisp_matrix *A,
                           hisp_mtx_header *h);
/* Writes A as .hisp when path ends in .hisp, else as Matrix Market. */
int cli_write_matrix(hisp_context ctx, hisp_matrix A, const char *path);
/* The sizes a written file holds for A (mi its info): a Matrix Market
 * file (mtx) of 3x3 blocks is real, with 3 rows and columns and 9 entries
 * per block; otherwise A's own. */
void cli_file_sizes(const hisp_matrix_info *mi, bool mtx, int64_t *rows, int64_t *cols,
                    int64_t *nnz);
/* Is spec a generator, gen:KIND[:N[:SEED]] (CLI_GEN_SPEC_HELP)? */
bool cli_is_gen_spec(const char *spec);
#define CLI_GEN_SPEC_HELP                                                                          \
    "Wherever a matrix file is read, gen:KIND[:N[:SEED]] generates it instead:\n"                  \
    "KIND one of hisp gen's (poisson2d, poisson3d, banded, random, rmat, dense,\n"                 \
    "circuit, blockdiag, aniso3d, jump3d; fem3x3 and elastic3d 3x3 blocks,\n"                      \
    "qsurface quaternion, helmholtz complex), N as hisp gen's --n (rmat:\n"                        \
    "--scale), SEED as --seed; each left out takes hisp gen's default.\n"                          \
    "gen:poisson2d:100 is hisp gen poisson2d --n 100.\n"
/* A generator by name: the hisp gen kinds (f32/f64) and the compound ones
 * (fem3x3, elastic3d: b3x3_*, qsurface: q*, helmholtz: c*). n <= 0 and seed 0 take the
 * kind's defaults; p (may be NULL) gives every parameter of a real kind
 * (n and seed then ignored). A type outside the kind's family is refused
 * naming both. Prints on failure. */
int cli_generate(hisp_context ctx, const char *kind, int64_t n, uint64_t seed,
                 const hisp_gen_params *p, hisp_type t, hisp_matrix *A);
/* Is kind a compound generator (fem3x3, elastic3d, qsurface, helmholtz)? */
bool cli_is_compound_gen(const char *kind);

/* ---- the options every command spells the same way ------------------------
 * One name per concept, each command's help in one layout: the command's
 * own options, then these in this order (those that apply): --type,
 * --backend, --device (--devices), -o, --json, --help.
 *
 * The output file of a command that writes one is -o FILE; --out and
 * --output are aliases (CLI_OUT_OPTS, parsed by cli_parse_out). */
// clang-format off
#define CLI_OUT_OPTS {"-o", true}, {"--out", true}, {"--output", true}
#define CLI_TRANSPOSE_OPT {"--transpose", CLI_ARG_OP}
#define CLI_HELP_OPTS OPTS_HELP_DEFS
// clang-format on
/* v[0..2]: the values of -o, --out, --output; more than one is a usage
 * error. *out: the one given, else NULL. */
int cli_parse_out(const char *cmd, const char *const v[3], const char **out);
/* Follows a command's "  -o FILE              what it writes\n" line. */
#define CLI_OUT_ALIASES_HELP "                       (--out and --output are aliases)\n"
#define CLI_TRANSPOSE_HELP                                                                         \
    "  --transpose [n|t|h]  op(A) = A (n), A^T (t, and --transpose alone) or A^H\n"                \
    "                       (h: the conjugate transpose; A^T for real entries)\n"
#define CLI_BACKEND_HELP                                                                           \
    "  --backend B          auto, reference, opencl or cuda (default auto: CUDA if a\n"            \
    "                       GPU answers, else OpenCL, else reference)\n"
#define CLI_DEVICE_HELP                                                                            \
    "  --device I           which device of the backend runs it: its index in hisp\n"              \
    "                       info (default: the first)\n"
#define CLI_HELP_HELP "  --help, -h           this text\n"
/* Host-only commands (gen, convert, stats, edit) work on the reference
 * backend's context; their --json names it as every command does. */
#define CLI_HOST_JSON_HELP                                                                         \
    "                       \"backend\", \"device\" (the reference: the work is on the\n"          \
    "                       host), \"type\", \"transfers\" (0)\n"

/* ---- entry types (matrix_io.c) -------------------------------------------
 * Every command that reads or makes a matrix takes --type T (the aliases
 * --entry and --precision mean the same): put CLI_TYPE_OPTS into its option
 * table, CLI_TYPE_HELP into its help, and pass the three values (in that
 * order) to cli_parse_type. Without --type the input decides
 * (cli_spec_type). */
// clang-format off
#define CLI_TYPE_OPTS {"--type", true}, {"--entry", true}, {"--precision", true}
// clang-format on
#define CLI_TYPE_HELP                                                                              \
    "  --type T             entry type: f32, f64, c32, c64, q32, q64, b3x3_f32,\n"                 \
    "                       b3x3_f64 (default: the input's: real, integer and\n"                   \
    "                       pattern files f64, complex c64, quaternion q64, a\n"                   \
    "                       generator its family, a .hisp file its own; b3x3\n"                    \
    "                       groups a real file into 3x3 blocks; --entry and\n"                     \
    "                       --precision are aliases)\n"
typedef struct cli_type_s {
    hisp_type type;
    bool given; /* --type (or an alias) was on the command line */
} cli_type;
/* v[0..2]: the values of --type, --entry, --precision (NULL when absent);
 * more than one is a usage error. */
int cli_parse_type(const char *cmd, const char *const v[3], cli_type *t);
/* The type spec reads into: the given one, else the input's (a file's
 * header read through ctx; NULL ctx: only for generator specs). */
hisp_type cli_spec_type(hisp_context ctx, const char *spec, const cli_type *t);
/* Reads (or generates) spec in cli_spec_type's type; a .hisp file keeps
 * its own and refuses another --type. h (may be NULL) gets a .mtx file's
 * banner. Prints on failure. */
int cli_load_matrix(hisp_context ctx, const char *spec, const cli_type *t, hisp_matrix *A,
                    hisp_mtx_header *h);
/* "CMD: TYPE matrices are not supported (WHY)" for the kernels a command
 * lacks; returns CLI_INPUT. */
int cli_type_unsupported(const char *cmd, hisp_type t, const char *why);
/* Is t f32 or f64? */
bool cli_type_real(hisp_type t);

/* ---- argument parsing (args.c over opts/opts.h) ---------------------------
 * The parser is opts/opts.h's, shared with the bench programs; these names
 * keep the CLI's spelling, with "hisp CMD" as the program in messages. */

enum { CLI_ARG_OP = OPTS_ARG_OP };
typedef opts_def cli_opt;
enum { CLI_ARG_END = OPTS_END, CLI_ARG_POSITIONAL = OPTS_POSITIONAL, CLI_ARG_ERROR = OPTS_ERROR };
typedef opts_iter cli_args;

/* cmd: the subcommand (argv[0]). cli_args_next is opts_next. */
void cli_args_init(cli_args *a, const char *cmd, int argc, char **argv);
int cli_args_next(cli_args *a, const cli_opt *opts, const char **val);

/* opts_parse of a subcommand's command line; CLI_HELP_SHOWN after --help
 * (the command then exits with CLI_OK). */
enum { CLI_HELP_SHOWN = OPTS_HELP_SHOWN };
int cli_parse_command(const char *cmd, int argc, char **argv, const cli_opt *opts, const char *help,
                      const char **val, const char **pos);

/* cli_parse_command for commands with up to nin inputs: in[0..nin) get the
 * positional arguments in order (one more is a usage error), val[k] the
 * value of opts[k] ("" for a flag); --help and -h print help. */
int cli_parse_inputs(const char *cmd, int argc, char **argv, const cli_opt *opts, const char *help,
                     const char **val, const char **in, int nin);
/* Usage problem: "hisp CMD: message" plus a hint (cmd NULL: "hisp: ");
 * returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Invalid value: "hisp: message"; returns CLI_INPUT. */
int cli_value_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Parse option values; on failure print an error and return CLI_INPUT. */
int cli_parse_i64(const char *opt, const char *s, int64_t min, int64_t max, int64_t *out);
int cli_parse_int(const char *opt, const char *s, int min, int max, int *out);
int cli_parse_u64(const char *opt, const char *s, uint64_t *out);
int cli_parse_double(const char *opt, const char *s, double *out);
/* --op n|t|h (case-insensitive): A, A^T, A^H. */
int cli_parse_op(const char *opt, const char *s, hisp_op *out);
/* op(A) of a command with --transpose [n|t|h] (CLI_TRANSPOSE_OPT; "" alone
 * is t) and, where it has one, its older alias --op n|t|h (op_val, NULL
 * when the command has none or it was not given): both is a usage error.
 * *out stays HISP_OP_N when neither was given. */
int cli_parse_transpose(const char *cmd, const char *tr_val, const char *op_val, hisp_op *out);
const char *cli_op_name(hisp_op op); /* "A", "A^T", "A^H" */
int cli_parse_backend(const char *opt, const char *s, hisp_backend_kind *out);
/* A real scalar option (--alpha, --beta) must be finite in type t's
 * component precision: 1e39 is refused for f32 (it would be inf), and so is
 * a nonzero value that would round to 0. */
int cli_check_real(const char *opt, double v, hisp_type t);
/* The relative error ||a - b|| / ||b|| of a --check, entry by entry: equal
 * values, infinities and NaNs included, differ by nothing. The two norms
 * are kept as scale * sqrt(sum) (LAPACK's dlassq), so entries near 1e200
 * or 1e-200 neither overflow nor underflow. Start from {0}. */
typedef struct {
    double num_scale, num_sum, den_scale, den_sum;
} cli_error;
void cli_error_add(double a, double b, cli_error *e);
double cli_error_relative(const cli_error *e);
/* --history, --plot: text built in memory, written by hisp_file_write's rule
 * (no replacing a pipe, device or link). Prints on failure. */
int cli_write_text(const char *path, const char *data, size_t n);

/* ---- errors and progress ---------------------------------------------- */

/* Exit code for a library status. */
int cli_exit_code(hisp_status s);
/* Print the context's last error as one line "hisp: FILE:LINE: reason"
 * (path names the file being worked on when the library did not); return
 * the exit code for s. ctx may be NULL (then only the status is known). */
int cli_fail(hisp_context ctx, hisp_status s, const char *path);

/* Phase lines on stderr, only when it is a terminal and not in JSON mode. */
void cli_progress_enable(bool json);
void cli_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

double cli_now_ms(void);

/* Creates a context (on the reference backend); prints on failure. */
int cli_context(hisp_context *ctx);

/* ---- JSON writer (json.c) ---------------------------------------------- */

#define CLI_JSON_DEPTH 16

typedef struct {
    FILE *f;
    int depth;
    bool first[CLI_JSON_DEPTH]; /* no member written yet at this level */
} cli_json;

/* key is the member name inside objects and NULL inside arrays / at the top. */
void json_init(cli_json *j, FILE *f);
void json_object_begin(cli_json *j, const char *key);
void json_object_end(cli_json *j);
void json_array_begin(cli_json *j, const char *key);
void json_array_end(cli_json *j);
void json_string(cli_json *j, const char *key, const char *s);
void json_int(cli_json *j, const char *key, int64_t v);
void json_uint(cli_json *j, const char *key, uint64_t v);
void json_double(cli_json *j, const char *key, double v); /* non-finite -> null */
/* A computed result a caller may compare: all 17 digits (json_double keeps 10). */
void json_exact(cli_json *j, const char *key, double v);
void json_bool(cli_json *j, const char *key, bool v);
void json_null(cli_json *j, const char *key);
/* Ends the document with a newline. */
void json_finish(cli_json *j);
/* The "device" member every command that runs on a device writes: {"backend",
 * "index", "name", "platform", "type": "gpu"|"cpu"|"other"} (key NULL inside
 * arrays). */
void json_device(cli_json *j, const char *key, const hisp_device_info *d);
const char *cli_device_kind(const hisp_device_info *d); /* "gpu", "cpu", "other" */
/* "backend" and "device" of ctx's current device (host-only commands: the
 * reference's). */
void json_context_device(cli_json *j, hisp_context ctx);

/* ---- transfers (json.c) ------------------------------------------------ */

/* Every --json output has "transfers": {"h2d_bytes", "d2h_bytes",
 * "control_bytes"}: what hisp_context_transfers counted over the command's
 * timed calls (reset right before them, read right after; CLI_TRANSFERS_HELP
 * says which calls those are). The reference backend counts nothing. */
#define CLI_TRANSFERS_HELP                                                                         \
    "--json reports \"transfers\": the bytes the backend moved host -> device\n"                   \
    "(h2d_bytes) and device -> host (d2h_bytes) and its schedulers' control words\n"               \
    "(control_bytes) during the timed calls, or the one operation without --repeat\n"              \
    "(0 on the reference backend).\n"
void cli_transfers_reset(hisp_context ctx);
/* Adds ctx's counters into *sum (ctx may be NULL). */
void cli_transfers_add(hisp_context ctx, hisp_transfer_stats *sum);
/* The "transfers" member; covers (may be NULL) says what it leaves out. */
void json_transfers(cli_json *j, const hisp_transfer_stats *t, const char *covers);
/* The member for everything ctx moved since it was made (host-only
 * commands: all 0, their contexts are on the reference backend). */
void json_transfers_of(cli_json *j, hisp_context ctx);
/* The input: "generator" for a gen: spec, else "file". */
void json_input(cli_json *j, const char *spec);
/* "check": {rel_error, tolerance, ok} of a result compared with the reference. */
void json_check(cli_json *j, double rel_error, double tolerance);
/* One human-readable line "LABEL N bytes to the device, ...". */
void cli_print_transfers(const char *label, const hisp_transfer_stats *t);

/* ---- kernel builds (json.c) --------------------------------------------- */

/* Run-time kernels are built at a device's first use and cached
 * (hisp_context_builds). On a terminal (stderr), cli_context's contexts say
 * so once per process, before the first build: what is built, that it
 * happens once, and the cache folder (cli_build_notice, the contexts' build
 * notice). Reports read the counters around the work they time and print
 * the build time as its own figure, out of the operation's times. */
#define CLI_BUILDS_HELP                                                                            \
    "--json reports \"kernels\": {\"programs_built\", \"build_ms\", \"programs_loaded\",\n"        \
    "\"load_ms\"}: run-time kernels compiled (a first use on a device) or loaded from\n"           \
    "the disk cache during the command; their time is not in the reported times.\n"
void cli_build_notice(void *user, const hisp_build_event *e);
/* ctx's counters (all zero when ctx is NULL). */
hisp_build_stats cli_builds(hisp_context ctx);
/* Build and load ms from reading a to reading b. */
double cli_builds_ms(const hisp_build_stats *a, const hisp_build_stats *b);
/* Adds the counts from reading a to reading b into *sum. */
void cli_builds_add(hisp_build_stats *sum, const hisp_build_stats *a, const hisp_build_stats *b);
/* The "kernels" member. */
void json_builds(cli_json *j, const hisp_build_stats *b);
/* "LABEL N programs built in X ms (...), M loaded from the disk cache in Y
 * ms" (nothing when none was built or loaded). */
void cli_print_builds(const char *label, const hisp_build_stats *b);

/* ---- SpMV runs shared by `spmv` and `demo` (measure.c) ----------------- */

typedef struct {
    hisp_op op;
    double alpha, beta;
    int repeat; /* timed runs; 0 = run once, untimed */
    int warmup;
    bool check;         /* compare against the reference backend */
    int64_t cols;       /* columns of x and y (0 or 1: one, hisp_spmv; more: hisp_spmm,
                           wall-timed; x, y0 and the result column after column) */
    const void *y0;     /* initial y (rows of op(A) vector entries, per column), NULL = zeros */
    const void *x;      /* x (cols of op(A) vector entries, per column), NULL = cli_default_x */
    hisp_format format; /* run on a copy of A in this format (CSR: A itself; the check uses
                           A's CSR) */
    int node_size;      /* HiSparse node size, 0 = default */
    bool
        auto_format; /* --format auto: hisp_matrix_choose_format picks CSR, HiSparse or a variant */
} cli_spmv_job;

typedef struct {
    hisp_type type;    /* of the matrix */
    hisp_type vt;      /* of the vectors (hisp_compound_vector_type) */
    int64_t m, n, nnz; /* op(A) is m x n vector entries */
    void *y;           /* result (m entries of type per column), caller frees */
    /* hisp_spmv_timed's; over several columns the wall clock's, each call synchronized */
    double median_ms, min_ms;
    double call_ms;       /* the result run's call with a synchronize (with --repeat: warm) */
    double gflops, gbps;  /* from median */
    uint64_t model_bytes; /* bytes moved per SpMV in the byte model */
    double rel_error;     /* vs reference, NaN when not checked */
    double tolerance;
    hisp_device_info device;
    bool have_sched; /* --format hisparse: the scheduler's counts of the result run */
    hisp_sched_counts sched;
    hisp_transfer_stats xfer; /* over the timed runs (CLI_TRANSFERS_HELP) */
    hisp_build_stats builds;  /* kernels built or loaded during the run (CLI_BUILDS_HELP) */
    bool have_choice;         /* --format auto: what was chosen */
    hisp_format_choice choice;
} cli_spmv_result;

/* Runs the job on ctx's current backend (A must belong to ctx). On failure
 * prints the error and returns the exit code; res->y is then NULL. The
 * reference check uses its own context on the reference backend. */
int cli_spmv_run(hisp_context ctx, hisp_matrix A, const cli_spmv_job *job, cli_spmv_result *res);
/* Byte model of one SpMV, as used for GB/s (stated in the help texts); over
 * k columns x and y count k times. */
#define CLI_BYTE_MODEL                                                                             \
    "CSR arrays (row pointers, column indices, values) + x read once + y written once (read "      \
    "too when beta != 0)"

/* x_j = 1/(j+1) in type t (f32/f64); the other types: component k of the
 * flat scalars 1/(k+1). */
void *cli_default_x(hisp_type t, int64_t n);
/* GB/s (bytes read + written) of a large hisp_vector_copy on ctx's device,
 * wall time per call with a synchronize after each, median of 5 (measure.c).
 * Prints on failure and returns the exit code. */
int cli_copy_bandwidth(hisp_context ctx, double *gbps);
/* The median of v[0..n) (sorts v; NaN when n <= 0). */
double cli_median(double *v, int n);

/* ---- SVG charts (svg.c) -------------------------------------------------- */

/* A horizontal bar chart: one bar per label with its value written beside
 * it; a non-finite value is drawn as "skipped". Written by cli_write_text. */
int cli_plot_bars(const char *path, const char *title, const char *subtitle, const char *xlabel,
                  int n, const char *const *labels, const double *values);

#endif
