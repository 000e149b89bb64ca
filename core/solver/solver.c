/* Solver objects (hisp.h "Iterative solvers"): names, settings, the checks
 * and the stopping rule every method shares, and the three entry points
 * (a matrix, a caller's operator, an MSREP plan). */
#include "backend/backend.h"
#include "compound/hispi_compound.h"
#include "ksp.h"
#include "vector/vector_ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define HISPI_MAGIC_SOLVER 0x68536f6cu /* "hSol" */

static const char *const method_names[HISP_SOLVER_COUNT] = {"cg", "bicgstab", "gmres", "lsqr"};
static const char *const precond_names[HISP_PRECOND_COUNT] = {
    "none", "jacobi", "amg", "l1-jacobi", "ilu0", "ic0", "chebyshev"};
static const char *const reason_names[HISP_STOP_COUNT] = {
    "converged",  "iteration limit",        "breakdown", "matrix not positive definite",
    "NaN or Inf", "stopped by the monitor", "stagnation"};

const char *hisp_solver_method_name(hisp_solver_method m)
{
    return (unsigned)m < HISP_SOLVER_COUNT ? method_names[m] : "unknown";
}

hisp_status hisp_solver_method_from_name(const char *name, hisp_solver_method *m)
{
    if (!name || !m) return HISP_ERR_INVALID_ARGUMENT;
    for (int i = 0; i < HISP_SOLVER_COUNT; i++)
        if (!strcasecmp(name, method_names[i])) {
            *m = (hisp_solver_method)i;
            return HISP_SUCCESS;
        }
    return HISP_ERR_INVALID_ARGUMENT;
}

const char *hisp_precond_name(hisp_precond p)
{
    return (unsigned)p < HISP_PRECOND_COUNT ? precond_names[p] : "unknown";
}

hisp_status hisp_precond_from_name(const char *name, hisp_precond *p)
{
    if (!name || !p) return HISP_ERR_INVALID_ARGUMENT;
    for (int i = 0; i < HISP_PRECOND_COUNT; i++)
        if (!strcasecmp(name, precond_names[i])) {
            *p = (hisp_precond)i;
            return HISP_SUCCESS;
        }
    return HISP_ERR_INVALID_ARGUMENT;
}

const char *hisp_stop_reason_name(hisp_stop_reason r)
{
    return (unsigned)r < HISP_STOP_COUNT ? reason_names[r] : "unknown";
}

/* ---- the object ------------------------------------------------------------- */

static bool solver_ok(hisp_solver s)
{
    return hispi_handle_live(s, HISPI_H_SOLVER);
}

#define SOLVER_CHECK(s)                                                                            \
    do {                                                                                           \
        if (!solver_ok(s)) return HISP_ERR_INVALID_HANDLE;                                         \
    } while (0)

hisp_status hisp_solver_create(hisp_context ctx, hisp_solver_method method, hisp_solver *s)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!s) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "hisp_solver_create: s is NULL");
    *s = NULL;
    if ((unsigned)method >= HISP_SOLVER_COUNT)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "hisp_solver_create: unknown method %d",
                          (int)method);
    hisp_solver o = NULL;
    HISPI_TRY(hispi_calloc(ctx, 1, sizeof *o, (void **)&o));
    hisp_status st = hispi_handle_add(o, HISPI_H_SOLVER, ctx);
    if (st) {
        free(o);
        return hispi_fail(ctx, st, "hisp_solver_create: no room for the handle");
    }
    o->magic = HISPI_MAGIC_SOLVER;
    o->ctx = ctx;
    o->method = method;
    o->rtol = 1e-8;
    o->maxit = 10000;
    o->restart = 30;
    o->check = 8;
    *s = o;
    return HISP_SUCCESS;
}

void hisp_solver_destroy(hisp_solver *s)
{
    if (!s || !hispi_handle_known(*s, HISPI_H_SOLVER)) return;
    (*s)->magic = 0;
    hispi_handle_free(*s);
    *s = NULL;
}

hisp_status hisp_solver_set_tolerances(hisp_solver s, double rtol, double atol)
{
    SOLVER_CHECK(s);
    if (!(rtol >= 0) || !(atol >= 0) || !isfinite(rtol) || !isfinite(atol) ||
        (rtol == 0 && atol == 0))
        return hispi_fail(s->ctx, HISP_ERR_INVALID_ARGUMENT,
                          "solver tolerances rtol %g, atol %g: both must be finite and >= 0, "
                          "not both 0",
                          rtol, atol);
    s->rtol = rtol;
    s->atol = atol;
    return HISP_SUCCESS;
}

hisp_status hisp_solver_set_max_iterations(hisp_solver s, int64_t maxit)
{
    SOLVER_CHECK(s);
    if (maxit < 0)
        return hispi_fail(s->ctx, HISP_ERR_INVALID_ARGUMENT,
                          "solver iteration limit %lld: must be >= 0", (long long)maxit);
    s->maxit = maxit;
    return HISP_SUCCESS;
}

hisp_status hisp_solver_set_restart(hisp_solver s, int m)
{
    SOLVER_CHECK(s);
    if (m < 1 || m > 1000)
        return hispi_fail(s->ctx, HISP_ERR_INVALID_ARGUMENT,
                          "GMRES restart length %d: must be 1..1000", m);
    s->restart = m;
    return HISP_SUCCESS;
}

hisp_status hisp_solver_set_preconditioner(hisp_solver s, hisp_precond p)
{
    SOLVER_CHECK(s);
    if ((unsigned)p >= HISP_PRECOND_COUNT)
        return hispi_fail(s->ctx, HISP_ERR_INVALID_ARGUMENT, "unknown preconditioner %d", (int)p);
    s->precond = p;
    s->pobj = NULL;
    return HISP_SUCCESS;
}

hisp_status hisp_solver_use_preconditioner(hisp_solver s, hisp_preconditioner P)
{
    SOLVER_CHECK(s);
    if (P) {
        hisp_preconditioner_info pi;
        HISPI_TRY(hisp_preconditioner_get_info(P, &pi)); /* a live handle */
        s->precond = pi.kind;
    }
    s->pobj = P;
    return HISP_SUCCESS;
}

hisp_status hisp_solver_set_damping(hisp_solver s, double damp)
{
    SOLVER_CHECK(s);
    if (!(damp >= 0) || !isfinite(damp))
        return hispi_fail(s->ctx, HISP_ERR_INVALID_ARGUMENT,
                          "LSQR damping %g: must be finite and >= 0", damp);
    s->damp = damp;
    return HISP_SUCCESS;
}

hisp_status hisp_solver_set_check_interval(hisp_solver s, int k)
{
    SOLVER_CHECK(s);
    if (k < 1 || k > 1024)
        return hispi_fail(s->ctx, HISP_ERR_INVALID_ARGUMENT,
                          "solver check interval %d: must be 1..1024", k);
    s->check = k;
    return HISP_SUCCESS;
}

hisp_status hisp_solver_set_monitor(hisp_solver s, hisp_solver_monitor f, void *user)
{
    SOLVER_CHECK(s);
    s->monitor = f;
    s->user = user;
    return HISP_SUCCESS;
}

/* ---- the stopping rule --------------------------------------------------------- */

static void stop(ks_run *r, hisp_stop_reason why)
{
    r->done = 1;
    r->reason = why;
}

static bool monitor(ks_run *r, int64_t k, double rn)
{
    if (!r->s->monitor) return false;
    double rel = r->bnorm > 0 ? rn / r->bnorm : 0;
    return r->s->monitor(r->s->user, k, rn, rel) != 0;
}

hisp_status hispi_ks_start(ks_run *r, double rnorm0)
{
    if (!r->resumed) r->it = 0;
    r->it_saved = r->it;
    r->Kcur = 1;
    r->rnorm = rnorm0;
    r->tol = fmax(r->s->rtol * r->bnorm, r->s->atol);
    if (!isfinite(r->bnorm) || !isfinite(rnorm0)) {
        stop(r, HISP_STOP_NAN);
        return HISP_SUCCESS;
    }
    if (!r->resumed && monitor(r, 0, rnorm0)) stop(r, HISP_STOP_MONITOR);
    if (r->bnorm == 0) { /* b = 0: x = 0 is the solution */
        HISPI_TRY(r->sp->o->fill(r->sp, ks_val(0), r->x));
        r->rnorm = 0;
        stop(r, HISP_STOP_CONVERGED);
    } else if (rnorm0 <= r->tol) {
        stop(r, HISP_STOP_CONVERGED);
    } else if (!r->done && r->it >= r->s->maxit) {
        stop(r, HISP_STOP_MAX_ITERATIONS);
    }
    if (!r->done && r->xsave) HISPI_TRY(r->sp->o->copy(r->sp, r->x, r->xsave));
    return HISP_SUCCESS;
}

/* The next check's distance: the iterations the last batch's rate predicts
 * until the tolerance, at least 1, at most twice the last and K. */
static void next_interval(ks_run *r, double before, double after, int64_t steps)
{
    int k = r->Kcur * 2 > r->K ? r->K : r->Kcur * 2;
    if (before > 0 && after > 0 && after < before && steps > 0) {
        double rate = log(after / before) / (double)steps; /* < 0 */
        double need = log(r->tol / after) / rate;          /* iterations to go */
        if (need < k) k = need < 1 ? 1 : (int)need;
    }
    r->Kcur = k < 1 ? 1 : k;
}

hisp_status hispi_ks_check(ks_run *r, int force)
{
    int64_t pending = r->it - r->it_saved;
    if (pending <= 0) return HISP_SUCCESS;
    if (!force && pending < r->Kcur && r->it < r->s->maxit) return HISP_SUCCESS;
    ks_space *sp = r->sp;
    double v[2 * 1025 * 4];
    int nread = r->use_aux ? 2 * r->ring : r->ring;
    HISPI_TRY(sp->o->read(sp, r->hist, nread, v));
    double before = r->rnorm, last = r->rnorm;
    int64_t conv = 0; /* first iteration of the batch below the tolerance */
    hisp_stop_reason fail = HISP_STOP_COUNT;
    for (int64_t k = r->it_saved + 1; k <= r->it; k++) {
        int j = (int)((k - 1) % r->ring);
        if (r->use_aux && r->aux_bad) {
            int why = r->aux_bad(&v[(size_t)(r->ring + j) * 4], last);
            if (why >= 0) {
                fail = (hisp_stop_reason)why;
                break;
            }
        }
        double rr = v[(size_t)j * 4];
        if (!isfinite(rr)) {
            fail = HISP_STOP_BREAKDOWN;
            break;
        }
        last = sqrt(fmax(rr, 0));
        if (!conv && last <= r->tol) conv = k;
        if (monitor(r, k, last)) {
            /* x is x_it: report what it holds */
            r->rnorm = sqrt(fmax(v[(size_t)((r->it - 1) % r->ring) * 4], 0));
            r->it_saved = r->it;
            stop(r, HISP_STOP_MONITOR);
            return HISP_SUCCESS;
        }
    }
    if (fail != HISP_STOP_COUNT) {
        /* back to the last good x */
        if (r->xsave) HISPI_TRY(sp->o->copy(sp, r->xsave, r->x));
        r->it = r->it_saved;
        if (conv) {
            /* it had converged before it failed (an exact zero residual
             * turned into 0/0): redo the batch one iteration at a time */
            r->Kcur = 1;
            r->restart = 1;
            return HISP_SUCCESS;
        }
        stop(r, fail);
        return HISP_SUCCESS;
    }
    r->rnorm = last;
    int64_t steps = r->it - r->it_saved;
    r->it_saved = r->it;
    if (last <= r->tol)
        stop(r, HISP_STOP_CONVERGED);
    else if (r->it >= r->s->maxit)
        stop(r, HISP_STOP_MAX_ITERATIONS);
    else if (r->xsave)
        HISPI_TRY(sp->o->copy(sp, r->x, r->xsave));
    if (conv)
        r->Kcur = 1; /* below the tolerance inside the batch, above at its end (a residual that
                        is not monotone): check every iteration from here */
    else
        next_interval(r, before, last, steps);
    return HISP_SUCCESS;
}

hisp_status hispi_ks_step_host(ks_run *r, double rnorm)
{
    if (!isfinite(rnorm)) {
        stop(r, HISP_STOP_BREAKDOWN);
        return HISP_SUCCESS;
    }
    r->rnorm = rnorm;
    r->it_saved = r->it;
    if (monitor(r, r->it, rnorm))
        stop(r, HISP_STOP_MONITOR);
    else if (rnorm <= r->tol)
        stop(r, HISP_STOP_CONVERGED);
    else if (r->it >= r->s->maxit)
        stop(r, HISP_STOP_MAX_ITERATIONS);
    return HISP_SUCCESS;
}

/* ---- solving ----------------------------------------------------------------------- */

static hisp_status (*const methods[HISP_SOLVER_COUNT])(ks_run *) = {hispi_ks_cg, hispi_ks_bicgstab,
                                                                    hispi_ks_gmres, hispi_ks_lsqr};

/* Slots of a solve: the method's fixed ones, the checks' 2K, and GMRES's
 * Gram-Schmidt products (ks_extra). */
int hispi_solver_slots(hisp_solver s)
{
    return KS_NSLOT(s->check) + (s->method == HISP_SOLVER_GMRES ? 2 * (s->restart + 1) : 0);
}

/* ---- the truth: norms and residuals computed from x ------------------------ */

/* ||v|| as the square root of v^H v accumulated in double; where that sum
 * underflows to 0 or overflows, the norm of v times a power of 2 (exact)
 * divided by it. v is scaled in place when `scratch` (its value is not
 * needed afterwards), else a copy in tmp. */
static hisp_status safe_norm(ks_space *sp, ks_vec *v, bool scratch, ks_vec *tmp, double *out)
{
    const ks_ops *o = sp->o;
    double w[4];
    HISPI_TRY(o->dot(sp, v, v, KS_SCRATCH));
    HISPI_TRY(o->read(sp, KS_SCRATCH, 1, w));
    *out = isnan(w[0]) ? NAN : sqrt(fmax(w[0], 0));
    if (!(w[0] == 0 || isinf(w[0]))) return HISP_SUCCESS;
    /* f32 sums are of doubles already: 2^60 only matters where a device
     * sums f32 in f32 */
    double k = hispi_type_scalar_size(sp->t) == 8 ? 0x1p600 : 0x1p60;
    if (isinf(w[0])) k = 1 / k;
    if (!scratch) {
        HISPI_TRY(o->copy(sp, v, tmp));
        v = tmp;
    }
    HISPI_TRY(o->scale(sp, v, ks_val(k)));
    HISPI_TRY(o->dot(sp, v, v, KS_SCRATCH));
    HISPI_TRY(o->read(sp, KS_SCRATCH, 1, w));
    if (isfinite(w[0])) *out = sqrt(fmax(w[0], 0)) / k;
    return HISP_SUCCESS;
}

/* The vectors the truth needs: res of b's length, and for LSQR nv of x's. */
typedef struct {
    ks_vec *res, *nv;
} ks_truth;

/* The norm the tolerance is relative to: ||b||, LSQR ||D A^T b||. */
static hisp_status rhs_norm(ks_run *r, ks_truth *t, double *out)
{
    ks_space *sp = r->sp;
    if (r->s->method != HISP_SOLVER_LSQR) return safe_norm(sp, r->b, false, t->res, out);
    HISPI_TRY(sp->o->matvec(sp, HISP_OP_T, r->b, t->nv));
    HISPI_TRY(sp->o->precond(sp, t->nv, t->nv, -1));
    return safe_norm(sp, t->nv, true, NULL, out);
}

/* The residual norm of x the stopping rule is about: ||b - A x||, LSQR
 * ||D (A^T (b - A x) - damp^2 x)||. */
static hisp_status true_norm(ks_run *r, ks_truth *t, double *out)
{
    ks_space *sp = r->sp;
    const ks_ops *o = sp->o;
    HISPI_TRY(o->matvec(sp, HISP_OP_N, r->x, t->res));
    HISPI_TRY(o->axpby(sp, ks_val(1), r->b, ks_val(-1), t->res));
    if (r->s->method != HISP_SOLVER_LSQR) return safe_norm(sp, t->res, true, NULL, out);
    HISPI_TRY(o->matvec(sp, HISP_OP_T, t->res, t->nv));
    double d = r->s->damp;
    if (d > 0) HISPI_TRY(o->axpby(sp, ks_val(-d * d), r->x, ks_val(1), t->nv));
    HISPI_TRY(o->precond(sp, t->nv, t->nv, -1));
    return safe_norm(sp, t->nv, true, NULL, out);
}

/* Restarts from the true residual without halving the best one seen, in a
 * row, before a false convergence is stagnation and a breakdown is
 * reported; and at most this many restarts in all. */
#define KS_STRIKES_CONVERGED 1
#define KS_STRIKES_BREAKDOWN 3
#define KS_MAX_RESTARTS 1000

typedef struct {
    double best; /* the lowest true residual norm at a restart so far */
    int strikes; /* restarts in a row that did not halve it */
    int64_t restarts;
} ks_restarts;

/* The method stopped with x and its true residual norm tn: decide whether
 * the stop stands (with which reason) or the method restarts from x. */
static bool settle(ks_run *r, ks_restarts *rs, double tn)
{
    bool met = tn <= r->tol;
    hisp_stop_reason why = r->reason;
    if (!isfinite(tn)) {
        if (why != HISP_STOP_BREAKDOWN && why != HISP_STOP_INDEFINITE) r->reason = HISP_STOP_NAN;
        return true;
    }
    if (met && (why == HISP_STOP_MAX_ITERATIONS || why == HISP_STOP_BREAKDOWN))
        r->reason = HISP_STOP_CONVERGED; /* the truth decides */
    if (met || (why != HISP_STOP_CONVERGED && why != HISP_STOP_BREAKDOWN)) return true;
    /* a false convergence, or a breakdown */
    if (r->it >= r->s->maxit) {
        if (why == HISP_STOP_CONVERGED) r->reason = HISP_STOP_MAX_ITERATIONS;
        return true;
    }
    if (tn < 0.5 * rs->best) {
        rs->best = tn;
        rs->strikes = 0;
    } else {
        rs->strikes++;
    }
    int limit = why == HISP_STOP_CONVERGED ? KS_STRIKES_CONVERGED : KS_STRIKES_BREAKDOWN;
    if (rs->strikes >= limit || rs->restarts >= KS_MAX_RESTARTS) {
        if (why == HISP_STOP_CONVERGED) r->reason = HISP_STOP_STAGNATION;
        return true;
    }
    rs->restarts++;
    r->done = 0;
    r->restart = 0;
    r->resumed = 1;
    r->reason = HISP_STOP_MAX_ITERATIONS;
    return false;
}

void hispi_ks_precond_info(const ks_space *sp, hisp_solve_info *info)
{
    info->precond_levels = sp->pc_levels;
    info->precond_type = sp->pc_type;
    info->precond = sp->pc_kind;
    info->precond_shifted = sp->pc_shifted, info->precond_filled = sp->pc_filled;
    info->precond_diag_shift = sp->pc_diag_shift;
    info->precond_factor_sweeps = sp->pc_sweeps[0];
    info->precond_solve_sweeps = sp->pc_sweeps[1];
    for (int l = 0; l < sp->pc_levels; l++)
        info->precond_rows[l] = sp->pc_rows[l], info->precond_nnz[l] = sp->pc_nnz[l];
}

/* Run the method on a space made for it; x keeps its value on an error.
 * The tolerance is relative to ||b|| computed here; each time the method
 * stops, the residual of x is computed from x, and the method runs again
 * from x where that is worth it (settle). */
hisp_status hispi_solver_run(hisp_solver s, ks_space *sp, ks_vec *b, ks_vec *x, double t0,
                             hisp_solve_info *info)
{
    ks_run r;
    memset(&r, 0, sizeof r);
    r.sp = sp;
    r.s = s;
    r.b = b;
    r.x = x;
    r.K = s->check;
    r.Kcur = 1;
    r.hist = KS_FIXED;
    r.ring = r.K + 1;
    r.aux = KS_FIXED + r.ring;
    r.reason = HISP_STOP_MAX_ITERATIONS;
    hisp_status st = HISP_SUCCESS;
    ks_vec *x0 = NULL;
    /* a copy of x0 restores the caller's x on an error; the same vector
     * serves as the checkpoint of the last check */
    st = sp->o->vnew(sp, 1, &x0);
    if (!st) st = sp->o->copy(sp, x, x0);
    bool saved = !st; /* x0 holds x: a failed copy leaves it nothing to restore */
    r.xsave = x0;
    ks_truth tr = {NULL, NULL};
    if (!st) st = sp->o->vnew(sp, 0, &tr.res);
    if (!st && s->method == HISP_SOLVER_LSQR) st = sp->o->vnew(sp, 1, &tr.nv);
    if (!st) st = rhs_norm(&r, &tr, &r.bnorm);
    /* x0's residual: the best so far, and every vector true_norm uses gets
     * its memory now (a vector's may be allocated at its first product), so
     * that a failure at the end cannot leave x moved */
    double t1 = hispi_now_ms(), tn = NAN;
    if (!st) st = true_norm(&r, &tr, &tn);
    ks_restarts rs = {isfinite(tn) ? tn : INFINITY, 0, 0};
    while (!st) {
        st = methods[s->method](&r);
        if (!st) st = true_norm(&r, &tr, &tn);
        if (st || settle(&r, &rs, tn)) break;
    }
    if (tr.res) sp->o->vfree(sp, tr.res);
    if (tr.nv) sp->o->vfree(sp, tr.nv);
    if (st && saved) {
        hisp_status s2 = sp->o->copy(sp, x0, x);
        (void)s2;
    }
    if (!st) st = sp->o->read(sp, 0, 0, NULL); /* wait for the queued work */
    if (x0) sp->o->vfree(sp, x0);
    if (st) return st;
    if (info) {
        memset(info, 0, sizeof *info);
        info->reason = r.reason;
        info->converged = r.reason == HISP_STOP_CONVERGED;
        info->iterations = r.it;
        info->residual_norm = tn;
        info->rhs_norm = r.bnorm;
        info->relative_residual = r.bnorm > 0 ? tn / r.bnorm : 0;
        info->method_residual_norm = r.rnorm;
        info->restarts = rs.restarts;
        info->ms = hispi_now_ms() - t0;
        info->setup_ms = t1 - t0;
        info->product_ms = sp->ms[KS_MS_PRODUCT];
        info->vector_ms = sp->ms[KS_MS_VECTOR];
        info->reduce_ms = sp->ms[KS_MS_REDUCE];
        hispi_ks_precond_info(sp, info);
        info->iteration_type = sp->t;
    }
    return HISP_SUCCESS;
}

static hisp_status vec_arg(hisp_solver s, const char *name, hisp_vector v, hisp_type t, int64_t n)
{
    if (!v) return hispi_fail(s->ctx, HISP_ERR_INVALID_HANDLE, "solve: %s is NULL", name);
    if (!hispi_vec_ok(v))
        return hispi_fail(s->ctx, HISP_ERR_INVALID_HANDLE, "solve: %s is not a live vector", name);
    if (v->ctx != s->ctx)
        return hispi_fail(s->ctx, HISP_ERR_INVALID_ARGUMENT,
                          "solve: %s belongs to another context than the solver", name);
    if (v->type != t)
        return hispi_fail(s->ctx, HISP_ERR_INVALID_ARGUMENT, "solve: %s is %s, the matrix needs %s",
                          name, hisp_type_name(v->type), hisp_type_name(t));
    if (v->n != n)
        return hispi_fail(s->ctx, HISP_ERR_INVALID_ARGUMENT,
                          "solve: %s has %lld entries, the matrix needs %lld", name,
                          (long long)v->n, (long long)n);
    return HISP_SUCCESS;
}

/* Method and type combinations the methods are written for. */
static hisp_status method_ok(hisp_solver s, hisp_type mt, int64_t nrows, int64_t ncols,
                             bool local_op)
{
    const char *m = hisp_solver_method_name(s->method);
    if (s->method == HISP_SOLVER_LSQR) {
        if (mt != HISP_F32 && mt != HISP_F64)
            return hispi_fail(s->ctx, HISP_ERR_UNSUPPORTED,
                              "lsqr solves real least squares (f32, f64): its host arithmetic "
                              "is real, complex and other entry types are not implemented "
                              "(this matrix is %s)",
                              hisp_type_name(mt));
        return HISP_SUCCESS;
    }
    if (nrows != ncols && !local_op)
        return hispi_fail(s->ctx, HISP_ERR_INVALID_ARGUMENT,
                          "%s needs a square matrix (this one is %lld x %lld; lsqr solves "
                          "rectangular least squares)",
                          m, (long long)nrows, (long long)ncols);
    return HISP_SUCCESS;
}

/* Solves on a CPU device run on the host below these rows (a test hook: 0
 * never). PoCL on 2 vCPUs, ms per iteration host / kernels: poisson3d 16^3
 * (4096 rows) CG 0.026 / 0.166, 22^3 (10648) CG 0.078 / 0.205, BiCGSTAB
 * 0.156 / 0.210, GMRES 0.257 / 0.741, 30^3 (27000) CG 0.239 / 0.233. */
int64_t hispi_solve_host_rows = 20000;

/* Whether a solve of A runs on the host's loops (hisp_solve_info.on_host):
 * a CPU device's memory is the host's, and a small system's iteration is
 * shorter than the kernels' launches. The preconditioners whose apply is
 * vector algebra or the host's triangular solves only. */
bool hispi_solve_on_host(hisp_solver s, hisp_matrix A)
{
    hisp_context ctx = s->ctx;
    hispi_kcaps caps;
    hisp_format_choice fc;
    hisp_precond p = s->precond;
    if (A->host.nrows >= hispi_solve_host_rows || s->pobj || !hispi_vec_has_kernels(ctx) ||
        !hispi_matrix_host_csr(A))
        return false;
    if (p != HISP_PRECOND_NONE && p != HISP_PRECOND_JACOBI && p != HISP_PRECOND_ILU0 &&
        p != HISP_PRECOND_IC0)
        return false;
    if (HISPI_BE(ctx, kern_caps, &caps) || !caps.is_cpu) return false;
    if (hispi_format_choice_cached(ctx, A, HISP_OP_N, &fc)) return false;
    hisp_type t = A->host.type;
    hisp_tune_plan plan; /* complex entries: a tuned variant runs the device's products */
    int found = 0;
    return t == HISP_F32 || t == HISP_F64 ||
           (hisp_tune_plan_lookup(ctx, A, &plan, &found) == HISP_SUCCESS && !found);
}

static hisp_status solve_one(hisp_solver s, hisp_matrix A, hisp_vector b, hisp_vector x, double t0,
                             hisp_solve_info *info);

/* A mixed-precision solve whose f32 iterations stopped making progress
 * (stagnation: the entries' rounding, or a breakdown) goes on in f64 from
 * its x with the iterations left, as cuSOLVER's refinement falls back. */
static bool fall_back(hisp_solver s, const hisp_solve_info *mix)
{
    return (mix->reason == HISP_STOP_STAGNATION || mix->reason == HISP_STOP_BREAKDOWN) &&
           mix->iterations < s->maxit;
}

hisp_status hisp_solver_solve(hisp_solver s, hisp_matrix A, hisp_vector b, hisp_vector x,
                              hisp_solve_info *info)
{
    SOLVER_CHECK(s);
    double t0 = hispi_now_ms();
    if (!A) return hispi_fail(s->ctx, HISP_ERR_INVALID_HANDLE, "solve: A is NULL");
    hisp_matrix_info mi;
    HISPI_TRY(hisp_matrix_get_info(A, &mi));
    if (A->ctx != s->ctx)
        return hispi_fail(s->ctx, HISP_ERR_INVALID_ARGUMENT,
                          "solve: A belongs to another context than the solver");
    hisp_type vt;
    int per = 1;
    HISPI_TRY(hisp_compound_vector_type(mi.type, &vt, &per));
    HISPI_TRY(vec_arg(s, "b", b, vt, mi.nrows * per));
    HISPI_TRY(vec_arg(s, "x", x, vt, mi.ncols * per));
    HISPI_TRY(method_ok(s, mi.type, mi.nrows, mi.ncols, false));
    hisp_solve_info mix;
    bool mixed = false;
    HISPI_TRY(hispi_solve_mixed(s, A, b, x, t0, &mix, &mixed));
    if (mixed && !fall_back(s, &mix)) {
        if (info) *info = mix;
        return HISP_SUCCESS;
    }
    /* in one precision, or on in f64 from the mixed solve's x */
    int64_t maxit = s->maxit;
    if (mixed) s->maxit -= mix.iterations;
    hisp_status st = solve_one(s, A, b, x, t0, info);
    s->maxit = maxit;
    if (!st && mixed && info) {
        info->iterations += mix.iterations;
        info->refinements = mix.refinements;
        info->setup_ms += mix.setup_ms;
    }
    return st;
}

/* A solve in the matrix's precision. */
static hisp_status solve_one(hisp_solver s, hisp_matrix A, hisp_vector b, hisp_vector x, double t0,
                             hisp_solve_info *info)
{
    hisp_matrix_info mi;
    HISPI_TRY(hisp_matrix_get_info(A, &mi));
    ks_space *sp = NULL;
    hispi_ks_lent lent = {NULL, NULL, NULL};
    if (s->pobj) {
        if (s->method == HISP_SOLVER_LSQR)
            return hispi_fail(s->ctx, HISP_ERR_UNSUPPORTED,
                              "solve: lsqr takes no preconditioner object (cg, bicgstab, gmres)");
        HISPI_TRY(hispi_preconditioner_lend(s->pobj, s->ctx, A, &lent));
    }
    bool host = hispi_solve_on_host(s, A);
    s->ctx->host_ops += host;
    hisp_status st =
        hispi_ks_local_lent(s->ctx, A, s->precond, s->method, hispi_solver_slots(s), &lent, &sp);
    if (!st) {
        st = hispi_solver_run(s, sp, hispi_ks_wrap_local(b), hispi_ks_wrap_local(x), t0, info);
        sp->o->destroy(sp);
    }
    s->ctx->host_ops -= host;
    if (info) info->on_host = host;
    return st;
}

hisp_status hisp_solver_solve_operator(hisp_solver s, const hisp_operator *A, hisp_vector b,
                                       hisp_vector x, hisp_solve_info *info)
{
    SOLVER_CHECK(s);
    double t0 = hispi_now_ms();
    if (!A || !A->apply)
        return hispi_fail(s->ctx, HISP_ERR_INVALID_ARGUMENT,
                          "solve: the operator or its apply function is NULL");
    if (A->nrows < 0 || A->ncols < 0 || (unsigned)A->type >= HISP_TYPE_COUNT)
        return hispi_fail(s->ctx, HISP_ERR_INVALID_ARGUMENT,
                          "solve: the operator's sizes or type are invalid");
    if (s->precond == HISP_PRECOND_JACOBI && !A->diagonal && s->method != HISP_SOLVER_LSQR)
        return hispi_fail(s->ctx, HISP_ERR_INVALID_ARGUMENT,
                          "solve: Jacobi needs the operator's diagonal function");
    if (s->precond == HISP_PRECOND_JACOBI && s->method == HISP_SOLVER_LSQR)
        return hispi_fail(s->ctx, HISP_ERR_UNSUPPORTED,
                          "solve: lsqr with Jacobi needs A's column norms: give the matrix");
    if (s->precond != HISP_PRECOND_NONE && s->precond != HISP_PRECOND_JACOBI)
        return hispi_fail(s->ctx, HISP_ERR_UNSUPPORTED,
                          "solve: %s needs the matrix (its setup reads A's entries; an operator "
                          "takes none or jacobi)",
                          hisp_precond_name(s->precond));
    HISPI_TRY(vec_arg(s, "b", b, A->type, A->nrows));
    HISPI_TRY(vec_arg(s, "x", x, A->type, A->ncols));
    HISPI_TRY(method_ok(s, A->type, A->nrows, A->ncols, true));
    if (s->method != HISP_SOLVER_LSQR && A->nrows != A->ncols)
        return hispi_fail(s->ctx, HISP_ERR_INVALID_ARGUMENT,
                          "%s needs a square operator (local rows %lld, columns %lld)",
                          hisp_solver_method_name(s->method), (long long)A->nrows,
                          (long long)A->ncols);
    ks_space *sp = NULL;
    HISPI_TRY(hispi_ks_local(s->ctx, NULL, A, s->precond, s->method, hispi_solver_slots(s), &sp));
    hisp_status st =
        hispi_solver_run(s, sp, hispi_ks_wrap_local(b), hispi_ks_wrap_local(x), t0, info);
    sp->o->destroy(sp);
    return st;
}
