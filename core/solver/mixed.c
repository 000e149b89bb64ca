/* Mixed precision (solver_precision=mixed, hisp.h "Iterative solvers"):
 * CG on an f64 system iterated in f32 with reliable updates (Sleijpen and
 * van der Vorst; as QUDA's mixed CG). x and the residual r = b - A x stay
 * in f64 with A's own entries; the iterations run on A32 (A's entries
 * rounded, kept with A) and f32 vectors holding r 2^-e (2^e the largest
 * power of 2 in the first r, so r's scale never underflows f32) and x's
 * correction since the last update. When the f32 recurrence's residual has
 * fallen by RELIABLE since the last update, or claims the tolerance,
 * x += 2^e x32, x32 = 0 and r, recomputed in f64, replaces the f32
 * residual; the search direction is kept (re-conjugated to the new r), so
 * the iteration goes on as CG, not restarted. Iterative refinement around
 * whole f32 solves measured worse on poisson3d (CG 1.4x, BiCGSTAB 2-4.7x
 * the f64 iterations). The narrowing and the vectors' ends are AMG's
 * single-level ones (core/amg/amg_single.c): the same kernels and range. */
#include "amg/hispi_amg.h"
#include "ksp.h"

#include <math.h>
#include <string.h>

/* A test hook: 1 makes the first f64 update end the f32 iterations as
 * stagnation (the fallback to f64, solver.c, is then what runs). */
int hispi_mixed_give_up = 0;

/* CG's f64 update comes when the f32 residual is below this fraction of
 * the largest since the last one (QUDA's delta). */
#define RELIABLE 0.1

/* A32, taken from A (A->narrow) or made: CSR f32 in A's format; NULL
 * where an entry of A is outside what f32 holds. The caller puts it back
 * (keep). */
static hisp_status narrow_of(hisp_matrix A, hisp_format f, hisp_matrix *out)
{
    *out = A->narrow;
    A->narrow = NULL;
    if (*out) return HISP_SUCCESS;
    hisp_matrix C = A, S = NULL;
    bool ok = true;
    hisp_status s =
        f == HISP_FORMAT_CSR ? HISP_SUCCESS : hisp_matrix_duplicate(A, HISP_FORMAT_CSR, &C);
    if (!s) s = hispi_amg_narrow(C, &S, &ok);
    if (!s && S && f != HISP_FORMAT_CSR) s = hisp_matrix_convert(S, f);
    if (C != A) hisp_matrix_destroy(&C);
    if (s) hisp_matrix_destroy(&S);
    *out = S;
    return s;
}

static void keep(hisp_matrix A, hisp_matrix S)
{
    if (A->narrow) hisp_matrix_destroy(&A->narrow);
    A->narrow = S;
}

/* The f64 loop's state and vectors. */
typedef struct {
    hisp_context ctx;
    hisp_matrix A, S;   /* A and its f32 copy */
    hisp_vector b, x;   /* the caller's */
    hisp_vector r, w;   /* f64: the residual, x's update */
    hispi_amg_single g; /* the ends' kernels and scale */
    hisp_preconditioner P;
} mixed;

/* r = b - A x and its norm. */
static hisp_status residual(mixed *m, double *rn)
{
    const double one = 1, zero = 0;
    HISPI_TRY(hisp_spmv(m->ctx, HISP_OP_N, &one, m->A, m->x, &zero, m->r));
    HISPI_TRY(
        hisp_vector_axpby(hisp_scalar_host(&one), m->b, hisp_scalar_host(&(double){-1}), m->r));
    return hisp_vector_nrm2(m->r, hisp_result_host(rn));
}

/* The preconditioners whose setup is worth keeping: an object on A32 (the
 * diagonal's is kept with A32). */
static hisp_status precond_object(mixed *m, hisp_precond p)
{
    if (p == HISP_PRECOND_NONE || p == HISP_PRECOND_JACOBI || p == HISP_PRECOND_L1_JACOBI)
        return HISP_SUCCESS;
    return hisp_preconditioner_create(p, m->S, &m->P);
}

static hisp_status vectors(mixed *m, int64_t n)
{
    HISPI_TRY(hispi_kpool_take(m->ctx, HISP_F64, n, n, &m->r));
    HISPI_TRY(hispi_kpool_take(m->ctx, HISP_F64, n, n, &m->w));
    bool fused = HISPI_BE_HAS(m->ctx, kern_get) && HISPI_BE_HAS(m->ctx, kern_launch);
    return hispi_amg_single_init(m->ctx, fused, &m->g);
}

static void release(mixed *m)
{
    hisp_vector v[2] = {m->r, m->w};
    for (int i = 0; i < 2; i++)
        if (v[i]) hispi_kpool_give(m->ctx, v[i]);
    hispi_amg_single_free(m->ctx, &m->g);
    hisp_preconditioner_destroy(&m->P);
    if (m->S) keep(m->A, m->S);
}

/* What the solve tells the report. */
typedef struct {
    int64_t it, refinements;
    double method_rn;
    bool ran;           /* the iterations ran (pc holds their preconditioner) */
    hisp_solve_info pc; /* the preconditioner's part */
} tally;

/* ---- CG with reliable updates ------------------------------------------------ */

/* CG's monitor: the f32 residual in f64's units. */
typedef struct {
    const struct hisp_solver_s *s;
    double scale, bnorm; /* 2^e, ||b|| */
} cg_forward;

static int cg_monitor(void *user, int64_t k, double rn, double rel)
{
    (void)rel;
    const cg_forward *f = user;
    if (k == 0) return 0; /* the f64 residual was told */
    double est = rn * f->scale;
    return f->s->monitor(f->s->user, k, est, f->bnorm > 0 ? est / f->bnorm : 0);
}

typedef struct {
    ks_space *sp;
    ks_run r;
    ks_cg c;
    hisp_vector x32, xs32;   /* x's correction since the last update, its checkpoint */
    double scale;            /* 2^e */
    struct hisp_solver_s sh; /* the caller's settings in f32's units, cg_monitor */
    cg_forward fw;
} mixed_cg;

/* The f64 update: x += 2^e x32, x32 = 0, r = b - A x in f64 (*tn its
 * norm) and 2^-e r the f32 recurrence's residual from here. */
static hisp_status update(mixed *m, mixed_cg *g, double *tn)
{
    const double one = 1;
    const float zero = 0;
    HISPI_TRY(hispi_amg_single_out(m->ctx, &m->g, g->x32, m->w));
    HISPI_TRY(hisp_vector_axpby(hisp_scalar_host(&one), m->w, hisp_scalar_host(&one), m->x));
    HISPI_TRY(hisp_vector_fill(g->x32, hisp_scalar_host(&zero)));
    HISPI_TRY(hisp_vector_fill(g->xs32, hisp_scalar_host(&zero)));
    HISPI_TRY(residual(m, tn));
    HISPI_TRY(hispi_ks_cg_detach(&g->r, &g->c));
    HISPI_TRY(hispi_amg_single_in_same(m->ctx, &m->g, m->r, hispi_ks_local_vector(g->c.res)));
    HISPI_TRY(hispi_ks_cg_replace(&g->r, &g->c));
    g->r.it_saved = g->r.it;
    g->r.rnorm = *tn / g->scale;
    return HISP_SUCCESS;
}

/* CG's iterations in f32 from x (its residual in m->r, *tn its norm). */
static hisp_status cg_run(mixed *m, mixed_cg *g, double tol, double *tn, hisp_stop_reason *why,
                          tally *t)
{
    ks_run *r = &g->r;
    ks_cg *c = &g->c;
    const ks_ops *o = g->sp->o;
    int e = 0;
    HISPI_TRY(hispi_amg_single_in(m->ctx, &m->g, m->r, hispi_ks_local_vector(c->res)));
    HISPI_TRY(hispi_amg_single_shift(m->ctx, &m->g, &e));
    g->scale = g->fw.scale = ldexp(1, e);
    r->bnorm /= g->scale; /* the tolerance in f32's units: start's max(rtol bnorm, atol) */
    g->sh.atol /= g->scale;
    HISPI_TRY(o->fill(g->sp, ks_val(0), c->p));
    HISPI_TRY(hispi_ks_cg_replace(r, c));
    HISPI_TRY(hispi_ks_start(r, *tn / g->scale));
    double rmax = r->rnorm, best = INFINITY;
    bool fresh = true; /* x32 = 0: nothing to fold */
    hisp_status st = HISP_SUCCESS;
    while (!st) {
        if (r->done) {
            if (!fresh) st = update(m, g, tn), t->refinements++;
            fresh = true;
            if (st) break;
            bool met = *tn <= tol;
            if (met || r->reason != HISP_STOP_CONVERGED) {
                *why = met ? HISP_STOP_CONVERGED : r->reason;
                break;
            }
            /* the recurrence claimed the tolerance, the f64 residual says no: on from it,
             * unless the last such claim's residual was not halved */
            if (!(*tn < 0.5 * best)) {
                *why = HISP_STOP_STAGNATION;
                break;
            }
            best = *tn;
            r->done = 0;
            r->reason = HISP_STOP_MAX_ITERATIONS;
            rmax = r->rnorm;
            continue;
        }
        if (r->restart) { /* a batch to redo from the last check: from the f64 residual */
            r->restart = 0;
            st = update(m, g, tn);
            if (!st) st = o->copy(g->sp, c->z, c->p); /* CG anew from the f64 residual */
            t->refinements++, fresh = true, rmax = r->rnorm;
            continue;
        }
        st = hispi_ks_cg_step(r, c);
        fresh = false;
        int64_t saved = r->it_saved;
        if (!st) st = hispi_ks_check(r, 0);
        if (st || r->done || r->it_saved == saved) continue; /* no check */
        if (r->rnorm < RELIABLE * rmax) {
            st = update(m, g, tn);
            t->refinements++, fresh = true, rmax = r->rnorm;
            if (hispi_mixed_give_up) return (*why = HISP_STOP_STAGNATION), (t->it = r->it), st;
        } else if (r->rnorm > rmax) {
            rmax = r->rnorm;
        }
    }
    t->it = r->it;
    return st;
}

static hisp_status cg_mixed(mixed *m, const struct hisp_solver_s *s, double tol, double bnorm,
                            double *tn, hisp_stop_reason *why, tally *t)
{
    hisp_context ctx = m->ctx;
    mixed_cg g;
    memset(&g, 0, sizeof g);
    g.sh = *s;
    g.fw = (cg_forward){s, 1, bnorm};
    g.sh.monitor = s->monitor ? cg_monitor : NULL;
    g.sh.user = &g.fw;
    hispi_ks_lent lent = {NULL, NULL, NULL};
    hisp_status st = m->P ? hispi_preconditioner_lend(m->P, ctx, m->S, &lent) : HISP_SUCCESS;
    if (!st)
        st = hispi_ks_local_lent(ctx, m->S, s->precond, HISP_SOLVER_CG, hispi_solver_slots(&g.sh),
                                 &lent, &g.sp);
    if (st) return st;
    int64_t n = m->S->host.nrows;
    ks_run *r = &g.r;
    r->sp = g.sp, r->s = &g.sh;
    r->K = s->check, r->Kcur = 1, r->hist = KS_FIXED, r->ring = r->K + 1;
    r->aux = KS_FIXED + r->ring;
    r->reason = HISP_STOP_MAX_ITERATIONS;
    st = hispi_kpool_take(ctx, HISP_F32, n, n, &g.x32);
    if (!st) st = hispi_kpool_take(ctx, HISP_F32, n, n, &g.xs32);
    if (!st) st = hisp_vector_fill(g.x32, hisp_scalar_host(&(float){0}));
    r->x = hispi_ks_wrap_local(g.x32), r->xsave = hispi_ks_wrap_local(g.xs32);
    r->bnorm = bnorm;
    if (!st) st = hispi_ks_cg_begin(r, &g.c);
    if (!st) st = cg_run(m, &g, tol, tn, why, t);
    t->ran = true;
    hispi_ks_precond_info(g.sp, &t->pc);
    t->method_rn = r->rnorm * g.scale;
    hispi_ks_cg_end(r, &g.c);
    if (g.x32) hispi_kpool_give(ctx, g.x32);
    if (g.xs32) hispi_kpool_give(ctx, g.xs32);
    g.sp->o->destroy(g.sp);
    return st;
}

static void report(hisp_precond pk, const tally *t, hisp_stop_reason why, double rn, double bnorm,
                   double t0, double t1, hisp_solve_info *info)
{
    *info = t->pc; /* the preconditioner's fields (zero where the iterations did not run) */
    if (!t->ran) info->precond = pk;
    info->reason = why;
    info->converged = why == HISP_STOP_CONVERGED;
    info->iterations = t->it;
    info->residual_norm = rn;
    info->rhs_norm = bnorm;
    info->relative_residual = bnorm > 0 ? rn / bnorm : 0;
    info->method_residual_norm = t->refinements ? t->method_rn : rn;
    info->ms = hispi_now_ms() - t0;
    info->setup_ms = t1 - t0;
    info->iteration_type = HISP_F32;
    info->refinements = t->refinements;
}

hisp_status hispi_solve_mixed(hisp_solver s, hisp_matrix A, hisp_vector b, hisp_vector x, double t0,
                              hisp_solve_info *info, bool *ran)
{
    *ran = false;
    hisp_matrix_info mi;
    HISPI_TRY(hisp_matrix_get_info(A, &mi));
    if (s->ctx->opt.solver_precision != 1 || mi.type != HISP_F64 || s->pobj ||
        s->method != HISP_SOLVER_CG)
        return HISP_SUCCESS;
    mixed m;
    memset(&m, 0, sizeof m);
    m.ctx = s->ctx, m.A = A, m.b = b, m.x = x;
    HISPI_TRY(narrow_of(A, mi.format, &m.S));
    if (!m.S) return HISP_SUCCESS; /* an entry f32 does not hold */
    *ran = true;
    tally t;
    memset(&t, 0, sizeof t);
    double bnorm = NAN, rn = NAN;
    hisp_stop_reason why = HISP_STOP_MAX_ITERATIONS;
    hisp_status st = vectors(&m, mi.nrows);
    if (!st) st = precond_object(&m, s->precond);
    if (!st) st = hisp_vector_nrm2(b, hisp_result_host(&bnorm));
    if (!st) st = residual(&m, &rn);
    double t1 = hispi_now_ms();
    double tol = fmax(s->rtol * bnorm, s->atol);
    if (!st && s->monitor && isfinite(bnorm) &&
        s->monitor(s->user, 0, rn, bnorm > 0 ? rn / bnorm : 0))
        why = HISP_STOP_MONITOR;
    else if (!st && !isfinite(bnorm))
        why = HISP_STOP_NAN;
    else if (!st && bnorm == 0) { /* b = 0: x = 0 is the solution */
        st = hisp_vector_fill(x, hisp_scalar_host(&(double){0}));
        rn = 0, why = HISP_STOP_CONVERGED;
    } else if (!st)
        st = cg_mixed(&m, s, tol, bnorm, &rn, &why, &t);
    if (!st) st = hisp_context_synchronize(s->ctx);
    if (!st && info) report(s->precond, &t, why, rn, bnorm, t0, t1, info);
    release(&m);
    return st;
}
