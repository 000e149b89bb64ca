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

#endif
