/* hisp solve: the convergence history (its monitor, live progress line and
 * CSV file, solve_history.c) and its plot (svg.c). */
#ifndef HISP_CLI_SOLVE_H
#define HISP_CLI_SOLVE_H

#include "cli.h"

typedef struct {
    int64_t *it;      /* iteration k */
    double *rn, *rel; /* the method's residual norm and relative residual */
    size_t n, cap;
    bool oom;        /* an entry could not be stored (the solve goes on) */
    bool live;       /* a progress line on stderr (a terminal, not --json) */
    double t0, last; /* start, last progress line (ms) */
} cli_history;

void cli_history_init(cli_history *h, bool live);
/* The solver monitor (hisp_solver_monitor): records iteration k; a k seen
 * before (the method went back to a checked iterate) replaces the entries
 * from k on. Redraws the progress line at most 10 times a second. */
int cli_history_monitor(void *user, int64_t k, double residual_norm, double relative_residual);
/* Clears the progress line (if one was drawn). */
void cli_history_end(cli_history *h);
/* "iteration,residual_norm,relative_residual" and one line per iteration;
 * prints on failure and returns the exit code. */
int cli_history_write_csv(const cli_history *h, const char *path);
void cli_history_free(cli_history *h);

/* The history as an SVG line chart: relative residual on a log10 axis
 * against the iteration, the tolerance tol (relative) as a dashed line.
 * Prints on failure and returns the exit code. */
int cli_plot_convergence(const char *path, const cli_history *h, const char *title,
                         const char *subtitle, const char *ylabel, double tol);

/* ---- hisp solve (cmd_solve.c, solve_run.c, solve_report.c) ---------------- */

/* the library options the CLI sets: --amg-* (the first 5),
 * --chebyshev-degree (SOLVE_CHEB_OPT), --factor-sweeps and --solve-sweeps
 * (SOLVE_ILU_OPT, + 1), --solver-precision (SOLVE_PREC_OPT) */
enum {
    SOLVE_AMG_OPTS = 5,
    SOLVE_CHEB_OPT = 5,
    SOLVE_ILU_OPT = 6,
    SOLVE_PREC_OPT = 8,
    SOLVE_LIB_OPTS = 9
};

typedef struct {
    const char *spec, *rhs, *x0, *out, *history, *plot;
    hisp_solver_method method;
    hisp_precond precond;
    double rtol, atol, damp;
    int64_t maxit;
    int restart, check;
    uint64_t seed;
    hisp_type type;
    bool type_given;
    int format; /* -1: the input's; -2: auto; else HISP_FORMAT_CSR or HISP_FORMAT_HISPARSE */
    hisp_backend_kind backend;
    int device, devices;
    bool json;
    int solves;  /* --solves */
    bool update; /* --update */
    struct {
        const char *name, *value; /* the library's option; --amg-*'s value or NULL */
        char now[32];             /* the value in effect */
    } amg[SOLVE_LIB_OPTS];
} solve_opts;

/* What the run found, for both output forms. */
typedef struct {
    hisp_solve_info info;
    hisp_matrix_info mi;
    hisp_type vt;              /* vector entry type */
    double bnorm, rnorm;       /* ||b||, ||b - A x|| recomputed */
    double rel;                /* rnorm / bnorm */
    double normal_rel;         /* lsqr: ||A^T (b - A x)|| / ||A^T b|| */
    double spmv_ms, spmv_t_ms; /* median product with A, A^T (lsqr) */
    int products;              /* per iteration */
    double prepare_ms;
    hisp_transfer_stats xfer;
    hisp_build_stats builds; /* kernels built or loaded (one device: prepare and solve) */
    hisp_device_info dev;    /* one device */
    hisp_device_ref *refs;   /* --devices */
    int ndev;
    bool shared;
    const char *format;
    /* --solves N > 1: the preconditioner object's setup (amg), the median
     * of the solves' wall times (each one's setup_ms + solve_ms) */
    double pc_setup_ms, median_solve_ms, median_update_ms;
} solve_result;

/* b (nb entries: --rhs ones, random or a file) and x0 (nx entries: --x0's
 * file, else zeros) as host arrays of vt; a file of k columns gives k
 * column-major columns (*kcols: --rhs's, which --x0 must match). Prints on
 * failure. */
int solve_host_vectors(hisp_context ctx, const solve_opts *o, hisp_type vt, int64_t nb, int64_t nx,
                       void **bh, void **xh, int64_t *kcols);
/* ||v|| of n entries of vt on the host, in double. */
double solve_host_norm(hisp_type vt, const void *p, int64_t n);
/* A solver with the options of o, its monitor h. */
hisp_status solve_set_up_solver(hisp_context ctx, const solve_opts *o, cli_history *h,
                                hisp_solver *sv);
/* --rhs of k > 1 columns: every column solved (hisp_solver_solve_columns),
 * the true residual of each, -o's k columns, the report (text or --json). */
int solve_columns(hisp_context ctx, hisp_matrix A, const solve_opts *o, const void *bh,
                  const void *xh, int64_t k, solve_result *res);
/* Products timed for the SpMV time (their median) and its share. */
enum { SOLVE_SPMV_RUNS = 7 };

/* The solve on ctx's device, or over --devices N (res->refs); fills res. */
int solve_local(hisp_context ctx, hisp_matrix A, const solve_opts *o, const void *bh,
                const void *xh, cli_history *h, solve_result *res);
int solve_devices(hisp_context ctx, hisp_matrix A, const solve_opts *o, const void *bh,
                  const void *xh, cli_history *h, solve_result *res);
/* The report: --json object or text; --plot's chart. */
/* Preconditioners whose setup --solves keeps in a hisp_preconditioner. */
static inline bool solve_kept_precond(hisp_precond p)
{
    return p == HISP_PRECOND_AMG || p == HISP_PRECOND_ILU0 || p == HISP_PRECOND_IC0 ||
           p == HISP_PRECOND_CHEBYSHEV;
}
void solve_print_json(const solve_opts *o, const solve_result *r);
/* The --json object opened with the input and the matrix's fields. */
void solve_json_head(cli_json *j, const solve_opts *o, const solve_result *r);
void solve_print_text(const solve_opts *o, const solve_result *r);
int solve_plot(const solve_opts *o, const solve_result *r, const cli_history *h);

#endif
