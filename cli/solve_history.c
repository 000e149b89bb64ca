/* hisp solve: the convergence history the solver's monitor reports, the
 * live progress line and the CSV file. */
#include "solve.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void cli_history_init(cli_history *h, bool live)
{
    memset(h, 0, sizeof *h);
    h->live = live;
    h->t0 = cli_now_ms();
    h->last = -1e30;
}

static bool grow(cli_history *h)
{
    if (h->n < h->cap) return true;
    size_t cap = h->cap ? 2 * h->cap : 256;
    int64_t *it = realloc(h->it, cap * sizeof *it);
    if (it) h->it = it;
    double *rn = it ? realloc(h->rn, cap * sizeof *rn) : NULL;
    if (rn) h->rn = rn;
    double *rel = rn ? realloc(h->rel, cap * sizeof *rel) : NULL;
    if (rel) h->rel = rel;
    if (!rel) return false;
    h->cap = cap;
    return true;
}

int cli_history_monitor(void *user, int64_t k, double residual_norm, double relative_residual)
{
    cli_history *h = user;
    /* a repeated iteration: the method redid a batch from a checked x */
    while (h->n > 0 && h->it[h->n - 1] >= k)
        h->n--;
    if (grow(h)) {
        h->it[h->n] = k;
        h->rn[h->n] = residual_norm;
        h->rel[h->n] = relative_residual;
        h->n++;
    } else {
        h->oom = true;
    }
    if (h->live) {
        double now = cli_now_ms();
        if (now - h->last >= 100) {
            h->last = now;
            fprintf(stderr, "\rhisp: iteration %-9lld relative residual %.3e  %8.2f s ",
                    (long long)k, relative_residual, (now - h->t0) * 1e-3);
            fflush(stderr);
        }
    }
    return 0;
}

void cli_history_end(cli_history *h)
{
    if (h->live && h->last > -1e30) {
        fprintf(stderr, "\r%72s\r", "");
        fflush(stderr);
        h->last = -1e30;
    }
}

int cli_history_write_csv(const cli_history *h, const char *path)
{
    cli_progress("writing %s", path);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return cli_value_error("%s: %s", path, strerror(errno));
    fprintf(f, "iteration,residual_norm,relative_residual\n");
    for (size_t i = 0; i < h->n; i++)
        fprintf(f, "%lld,%.17g,%.17g\n", (long long)h->it[i], h->rn[i], h->rel[i]);
    int bad = ferror(f);
    int rc = fclose(f) != 0 || bad ? cli_value_error("%s: out of host memory", path)
                                   : cli_write_text(path, buf, len);
    free(buf);
    return rc;
}

void cli_history_free(cli_history *h)
{
    free(h->it);
    free(h->rn);
    free(h->rel);
    memset(h, 0, sizeof *h);
}
