/* hisp solve's solve: the right-hand side and guess, the solver's settings,
 * the solve on one device or over an MSREP plan's devices, the true residual
 * recomputed from x and the timed products. */
#include "mspmv.h"
#include "solve.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* ---- scalars and vectors ------------------------------------------------ */

typedef union {
    float f;
    double d;
} real_buf;

/* Is the vector type's component float (f32, c32, q32)? */
static bool single(hisp_type vt)
{
    return hisp_type_size(vt) / (size_t)hisp_type_components(vt) == 4;
}

/* A real scalar of the component type (alpha, beta of hisp_spmv). */
static const void *real_of(hisp_type vt, double v, real_buf *b)
{
    if (single(vt)) {
        b->f = (float)v;
        return &b->f;
    }
    b->d = v;
    return &b->d;
}

static hisp_status norm(hisp_vector v, hisp_type vt, double *out)
{
    real_buf r;
    hisp_status s = hisp_vector_nrm2(v, hisp_result_host(single(vt) ? (void *)&r.f : &r.d));
    if (!s) *out = single(vt) ? (double)r.f : r.d;
    return s;
}

static uint64_t splitmix(uint64_t *st)
{
    uint64_t z = (*st += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* n entries of vt: every component uniform in [-1, 1) from seed. */
static void *random_entries(hisp_type vt, int64_t n, uint64_t seed)
{
    int64_t k = n * hisp_type_components(vt);
    void *p = malloc((size_t)(k > 0 ? k : 1) * (single(vt) ? 4 : 8));
    if (!p) return NULL;
    uint64_t st = seed;
    for (int64_t i = 0; i < k; i++) {
        double u = (double)(splitmix(&st) >> 11) * 0x1.0p-53 * 2 - 1;
        if (single(vt))
            ((float *)p)[i] = (float)u;
        else
            ((double *)p)[i] = u;
    }
    return p;
}

/* b (nb entries) and x0 (nx entries) as host arrays of vt. */
int solve_host_vectors(hisp_context ctx, const solve_opts *o, hisp_type vt, int64_t nb, int64_t nx,
                       void **bh, void **xh, int64_t *kcols)
{
    *kcols = 1;
    size_t es = hisp_type_size(vt);
    const char *what[2] = {"--rhs", "--x0"};
    const char *path[2] = {NULL, o->x0};
    int64_t len[2] = {nb, nx};
    void **out[2] = {bh, xh};
    if (strcmp(o->rhs, "ones") == 0) {
        *bh = calloc((size_t)(nb > 0 ? nb : 1), es);
        if (!*bh) return cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL);
        int comps = hisp_type_components(vt);
        for (int64_t i = 0; i < nb; i++) {
            if (single(vt))
                ((float *)*bh)[i * comps] = 1;
            else
                ((double *)*bh)[i * comps] = 1;
        }
    } else if (strcmp(o->rhs, "random") == 0) {
        *bh = random_entries(vt, nb, o->seed);
        if (!*bh) return cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL);
    } else {
        path[0] = o->rhs;
    }
    for (int k = 0; k < 2; k++) {
        if (!path[k]) continue;
        hisp_vector v = NULL;
        int64_t n = 0;
        cli_progress("reading %s", path[k]);
        int64_t cols = 1;
        hisp_order order;
        hisp_status s = hisp_vector_read_mtx(ctx, path[k], vt, &v);
        if (!s) s = hisp_vector_size(v, &n);
        if (!s) s = hisp_vector_columns(v, &cols, &order);
        if (!s && k == 0) *kcols = cols; /* B's columns: solved each */
        if (!s && cols != *kcols) {
            hisp_vector_destroy(&v);
            return cli_value_error("%s %s: %lld columns, --rhs has %lld", what[k], path[k],
                                   (long long)cols, (long long)*kcols);
        }
        if (!s && n != len[k] * cols) {
            hisp_vector_destroy(&v);
            if (cols == 1)
                return cli_value_error("%s %s: %lld entries, the matrix needs %lld (%s)", what[k],
                                       path[k], (long long)n, (long long)len[k],
                                       k == 0 ? "its rows" : "its columns");
            return cli_value_error("%s %s: %lld rows (of %lld columns), the matrix needs %lld "
                                   "(%s)",
                                   what[k], path[k], (long long)(n / cols), (long long)cols,
                                   (long long)len[k], k == 0 ? "its rows" : "its columns");
        }
        if (!s) {
            *out[k] = malloc((size_t)(n > 0 ? n : 1) * es);
            if (!*out[k]) s = HISP_ERR_OUT_OF_HOST_MEMORY;
        }
        if (!s) s = hisp_vector_read(v, *out[k]);
        hisp_vector_destroy(&v);
        if (s) return cli_fail(ctx, s, path[k]);
    }
    if (!*xh) {
        *xh = calloc((size_t)(nx * *kcols > 0 ? nx * *kcols : 1), es);
        if (!*xh) return cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL);
    }
    return CLI_OK;
}

static int write_x(hisp_context ctx, hisp_type vt, int64_t n, const void *xh, const char *path)
{
    hisp_vector v = NULL;
    cli_progress("writing %s", path);
    hisp_status s = hisp_vector_create(ctx, vt, n, &v);
    if (!s) s = hisp_vector_write(v, xh);
    if (!s) s = hisp_vector_write_mtx(v, path);
    hisp_vector_destroy(&v);
    return s ? cli_fail(ctx, s, path) : CLI_OK;
}

/* Median wall time of SOLVE_SPMV_RUNS products y = op(A) x, each synchronized. */
static hisp_status time_spmv(hisp_context ctx, hisp_op op, hisp_matrix A, hisp_vector x,
                             hisp_vector y, hisp_type vt, double *ms)
{
    real_buf one, zero;
    const void *a = real_of(vt, 1, &one), *z = real_of(vt, 0, &zero);
    double t[SOLVE_SPMV_RUNS];
    hisp_status s = HISP_SUCCESS;
    for (int i = 0; i < SOLVE_SPMV_RUNS && !s; i++) {
        double t0 = cli_now_ms();
        s = hisp_spmv(ctx, op, a, A, x, z, y);
        if (!s) s = hisp_context_synchronize(ctx);
        t[i] = cli_now_ms() - t0;
    }
    if (!s) *ms = mspmv_median(t, SOLVE_SPMV_RUNS);
    return s;
}

hisp_status solve_set_up_solver(hisp_context ctx, const solve_opts *o, cli_history *h,
                                hisp_solver *sv)
{
    hisp_status s = hisp_solver_create(ctx, o->method, sv);
    if (!s) s = hisp_solver_set_tolerances(*sv, o->rtol, o->atol);
    if (!s) s = hisp_solver_set_max_iterations(*sv, o->maxit);
    if (!s) s = hisp_solver_set_restart(*sv, o->restart);
    if (!s) s = hisp_solver_set_preconditioner(*sv, o->precond);
    if (!s) s = hisp_solver_set_damping(*sv, o->damp);
    if (!s) s = hisp_solver_set_check_interval(*sv, o->check);
    if (!s) s = hisp_solver_set_monitor(*sv, cli_history_monitor, h);
    return s;
}

/* The solver's own kernels (vector algebra, the preconditioner's) built
 * before the timed solve: one iteration of the method on a scratch copy of
 * x, without the monitor. A first use on a device otherwise spends seconds
 * of builds inside the solve's times. */
static hisp_status build_solver_kernels(hisp_context ctx, const solve_opts *o, hisp_matrix A,
                                        hisp_vector b, hisp_vector x, hisp_type vt, int64_t nx)
{
    hisp_vector xw = NULL;
    hisp_solver sv = NULL;
    hisp_solve_info info;
    hisp_status s = hisp_vector_create(ctx, vt, nx, &xw);
    if (!s) s = hisp_vector_copy(x, xw);
    if (!s) s = hisp_solver_create(ctx, o->method, &sv);
    if (!s) s = hisp_solver_set_max_iterations(sv, 1);
    if (!s) s = hisp_solver_set_restart(sv, o->restart);
    if (!s) s = hisp_solver_set_preconditioner(sv, o->precond);
    if (!s) s = hisp_solver_set_damping(sv, o->damp);
    if (!s) s = hisp_solver_solve(sv, A, b, xw, &info);
    hisp_solver_destroy(&sv);
    hisp_vector_destroy(&xw);
    return s;
}

/* --solves N: N solves from x0 (AMG's hierarchy set up once, *pc), their
 * median wall time; res->info the last one's. */
static hisp_status solves(const solve_opts *o, hisp_matrix A, hisp_vector b, hisp_vector x,
                          const void *xh, hisp_solver sv, hisp_preconditioner *pc,
                          solve_result *res)
{
    double *ms = NULL, *up = NULL;
    hisp_status s = HISP_SUCCESS;
    ms = calloc((size_t)o->solves, sizeof *ms), up = calloc((size_t)o->solves, sizeof *up);
    if (!ms || !up) {
        free(ms), free(up);
        return HISP_ERR_OUT_OF_HOST_MEMORY;
    }
    if (solve_kept_precond(o->precond)) {
        double t0 = cli_now_ms();
        s = hisp_preconditioner_create(o->precond, A, pc);
        res->pc_setup_ms = cli_now_ms() - t0;
        if (!s) s = hisp_solver_use_preconditioner(sv, *pc);
    }
    for (int k = 0; !s && k < o->solves; k++) {
        cli_progress("solve %d of %d", k + 1, o->solves);
        if (k) s = hisp_vector_write(x, xh);
        if (!s && k && o->update) { /* A's values anew: the numeric re-setup */
            double t0 = cli_now_ms();
            s = hisp_preconditioner_update(*pc, A);
            up[k - 1] = cli_now_ms() - t0;
        }
        if (!s) s = hisp_solver_solve(sv, A, b, x, &res->info);
        ms[k] = res->info.ms;
    }
    if (!s) res->median_solve_ms = cli_median(ms, o->solves);
    if (!s && o->update) res->median_update_ms = cli_median(up, o->solves - 1);
    free(ms), free(up);
    return s;
}

/* ---- one device ----------------------------------------------------------- */

int solve_local(hisp_context ctx, hisp_matrix A, const solve_opts *o, const void *bh,
                const void *xh, cli_history *h, solve_result *res)
{
    hisp_type vt = res->vt;
    int per = 1;
    hisp_type vt2;
    hisp_status s = hisp_compound_vector_type(res->mi.type, &vt2, &per);
    int64_t nb = res->mi.nrows * per, nx = res->mi.ncols * per;
    bool lsqr = o->method == HISP_SOLVER_LSQR;
    hisp_vector b = NULL, x = NULL, r = NULL, t = NULL, u = NULL;
    hisp_solver sv = NULL;
    hisp_preconditioner pc = NULL;
    real_buf one, zero, m1;
    const void *a1 = real_of(vt, 1, &one), *a0 = real_of(vt, 0, &zero), *am = real_of(vt, -1, &m1);
    int rc = CLI_OK;
    if (!s) s = hisp_context_get_device(ctx, &res->dev);
    if (!s) s = hisp_vector_create(ctx, vt, nb, &b);
    if (!s) s = hisp_vector_create(ctx, vt, nx, &x);
    if (!s) s = hisp_vector_create(ctx, vt, nb, &r);
    if (!s && lsqr) s = hisp_vector_create(ctx, vt, nx, &t);
    if (!s && lsqr) s = hisp_vector_create(ctx, vt, nx, &u);
    if (!s) s = hisp_vector_write(b, bh);
    if (!s) s = hisp_vector_write(x, xh);
    if (s) goto fail;
    /* prepare: upload A, b and x, build the kernels, outside the solve */
    cli_progress("uploading A and building kernels on %s (%s)", hisp_backend_name(res->dev.backend),
                 res->dev.name);
    hisp_build_stats k0 = cli_builds(ctx), k1;
    double t0 = cli_now_ms();
    s = norm(b, vt, &res->bnorm);
    if (!s) s = hisp_spmv(ctx, HISP_OP_N, a1, A, x, a0, r);
    if (!s && lsqr && (res->mi.type == HISP_F32 || res->mi.type == HISP_F64))
        s = hisp_spmv(ctx, HISP_OP_T, a1, A, b, a0, t); /* else the solver says why */
    if (!s) s = build_solver_kernels(ctx, o, A, b, x, vt, nx);
    if (!s) s = hisp_context_synchronize(ctx);
    res->prepare_ms = cli_now_ms() - t0;
    if (!s) s = solve_set_up_solver(ctx, o, h, &sv);
    if (s) goto fail;
    cli_progress("solving with %s", hisp_solver_method_name(o->method));
    cli_transfers_reset(ctx);
    h->t0 = cli_now_ms();
    if (o->solves > 1)
        s = solves(o, A, b, x, xh, sv, &pc, res);
    else
        s = hisp_solver_solve(sv, A, b, x, &res->info);
    cli_transfers_add(ctx, &res->xfer);
    k1 = cli_builds(ctx); /* prepare's builds, and the solve's (none, normally) */
    cli_builds_add(&res->builds, &k0, &k1);
    cli_history_end(h);
    if (s) goto fail;
    /* the true residual r = b - A x (lsqr: and A^T r against A^T b) */
    s = hisp_vector_copy(b, r);
    if (!s) s = hisp_spmv(ctx, HISP_OP_N, am, A, x, a1, r);
    if (!s) s = norm(r, vt, &res->rnorm);
    res->rel = res->bnorm > 0 ? res->rnorm / res->bnorm : res->rnorm;
    if (!s && lsqr) {
        double atr = 0, atb = 0;
        s = hisp_spmv(ctx, HISP_OP_T, a1, A, r, a0, t);
        if (!s) s = norm(t, vt, &atr);
        if (!s) s = hisp_spmv(ctx, HISP_OP_T, a1, A, b, a0, t);
        if (!s) s = norm(t, vt, &atb);
        res->normal_rel = atb > 0 ? atr / atb : atr;
    }
    /* the product's time on its own, after the solve */
    if (!s) s = time_spmv(ctx, HISP_OP_N, A, x, r, vt, &res->spmv_ms);
    if (!s && lsqr) s = time_spmv(ctx, HISP_OP_T, A, r, u, vt, &res->spmv_t_ms);
    if (s) goto fail;
    if (o->out) {
        cli_progress("writing %s", o->out);
        s = hisp_vector_write_mtx(x, o->out);
        if (s) rc = cli_fail(ctx, s, o->out);
    }
    goto out;
fail:
    rc = cli_fail(ctx, s, NULL);
out:
    hisp_solver_destroy(&sv);
    hisp_preconditioner_destroy(&pc);
    hisp_vector_destroy(&b);
    hisp_vector_destroy(&x);
    hisp_vector_destroy(&r);
    hisp_vector_destroy(&t);
    hisp_vector_destroy(&u);
    return rc;
}

/* ---- several devices (MSREP) ---------------------------------------------- */

double solve_host_norm(hisp_type vt, const void *p, int64_t n)
{
    int64_t m = n * hisp_type_components(vt);
    double sum = 0;
    for (int64_t i = 0; i < m; i++) {
        double v = single(vt) ? (double)((const float *)p)[i] : ((const double *)p)[i];
        sum += v * v;
    }
    return sqrt(sum);
}

int solve_devices(hisp_context ctx, hisp_matrix A, const solve_opts *o, const void *bh,
                  const void *xh, cli_history *h, solve_result *res)
{
    hisp_type vt = res->vt;
    int64_t n = res->mi.nrows;
    size_t es = hisp_type_size(vt);
    hisp_mplan plan = NULL;
    hisp_mvector b = NULL, x = NULL, xr = NULL, r = NULL;
    hisp_solver sv = NULL;
    void *host = malloc((size_t)(n > 0 ? n : 1) * es);
    real_buf one, zero, m1;
    const void *a1 = real_of(vt, 1, &one), *a0 = real_of(vt, 0, &zero), *am = real_of(vt, -1, &m1);
    int rc = CLI_OK;
    if (res->mi.nrows != res->mi.ncols) { /* bh has the rows, xh the columns */
        free(host);
        return cli_value_error("a solve over several devices needs a square matrix (this one is "
                               "%lld x %lld)",
                               (long long)res->mi.nrows, (long long)res->mi.ncols);
    }
    if (!host) return cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL);
    cli_progress("partitioning (pcsr) over %d device(s)", res->ndev);
    double t0 = cli_now_ms();
    hisp_status s = hisp_mplan_create(A, res->ndev, res->refs, HISP_PART_PCSR, 0, &plan);
    if (!s) s = hisp_mvector_create(plan, HISP_MVEC_ROWS, &b);
    if (!s) s = hisp_mvector_create(plan, HISP_MVEC_ROWS, &x);
    if (!s) s = hisp_mvector_create(plan, HISP_MVEC_ROWS, &r);
    if (!s) s = hisp_mvector_create(plan, HISP_MVEC_REPLICATED, &xr);
    if (!s) s = hisp_mvector_write(b, bh);
    if (!s) s = hisp_mvector_write(x, xh);
    res->prepare_ms = cli_now_ms() - t0;
    res->bnorm = solve_host_norm(vt, bh, n);
    if (!s) s = solve_set_up_solver(ctx, o, h, &sv);
    if (s) goto fail;
    cli_progress("solving with %s over %d device(s)", hisp_solver_method_name(o->method),
                 res->ndev);
    cli_transfers_reset(ctx);
    h->t0 = cli_now_ms();
    s = hisp_solver_solve_dist(sv, plan, b, x, &res->info);
    cli_transfers_add(ctx, &res->xfer);
    cli_history_end(h);
    if (s) goto fail;
    /* r = b - A x with x gathered on every device */
    s = hisp_mvector_allgather(x, xr);
    if (!s) s = hisp_mvector_write(r, bh);
    if (!s) s = hisp_mspmv_dist(plan, am, xr, a1, r);
    if (!s) s = hisp_mvector_read(r, host);
    if (!s) {
        res->rnorm = solve_host_norm(vt, host, n);
        res->rel = res->bnorm > 0 ? res->rnorm / res->bnorm : res->rnorm;
    }
    double t[SOLVE_SPMV_RUNS];
    for (int i = 0; i < SOLVE_SPMV_RUNS && !s; i++) {
        double c0 = cli_now_ms();
        s = hisp_mspmv_dist(plan, a1, xr, a0, r);
        t[i] = cli_now_ms() - c0;
    }
    if (!s) res->spmv_ms = mspmv_median(t, SOLVE_SPMV_RUNS);
    if (!s) s = hisp_mvector_read(x, host);
    if (s) goto fail;
    if (o->out) rc = write_x(ctx, vt, n, host, o->out);
    goto out;
fail:
    rc = cli_fail(ctx, s, NULL);
out:
    hisp_solver_destroy(&sv);
    hisp_mvector_destroy(&b);
    hisp_mvector_destroy(&x);
    hisp_mvector_destroy(&xr);
    hisp_mvector_destroy(&r);
    hisp_mplan_destroy(&plan);
    free(host);
    return rc;
}
