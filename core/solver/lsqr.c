/* LSQR (Paige and Saunders) for min ||A x - b||^2 + damp^2 ||x||^2, A
 * rectangular, f32/f64. The damping enters as the augmented operator
 *   Ab = [A D; damp D] (y -> (A D y, damp D y)),  Ab^T (u1, u2) = D (A^T u1 + damp u2),
 * solved for the correction y: x = x0 + D y, right-hand side
 * (b - A x0, -damp x0). D is Jacobi's column scaling diag(1/||A(:, j)||)
 * (the space's precond on x's space) or I. So a guess x0 != 0 and the
 * scaling leave the problem as stated; without damping u2 is not kept.
 *
 * Golub-Kahan bidiagonalisation with one wait per iteration: the vectors
 * are kept unnormalised, U = beta_k u_k and Vh = c_k v_k with
 * c_k = alpha_k beta_k, so
 *   U  <- A D Vh / c_k - U (alpha_k / beta_k)           (||U||^2 = beta_{k+1}^2)
 *   Vh <- D (A^T U1 + damp U2) - Vh (beta_{k+1}^2 / c_k)  (= c_{k+1} v_{k+1})
 * need only host values known before the iteration and beta_{k+1}^2 as
 * slots; one read brings beta_{k+1}^2 and c_{k+1}^2 (alpha_{k+1} =
 * c_{k+1} / beta_{k+1}). The plane rotations, x's step and the estimate
 *   ||Ab^T rb_k|| = phibar_{k+1} alpha_{k+1} |c_k|
 * are host arithmetic. That estimate is the residual the stopping rule
 * sees: ||D (A^T r - damp^2 x)|| with r = b - A x (D = I without Jacobi),
 * and r->bnorm = ||D A^T b|| (computed by the caller, core/solver/solver.c). A
 * zero alpha or beta ends the bidiagonalisation: x is the (damped) least-
 * squares solution and the estimate is 0, so the solve converges. A
 * non-finite read is HISP_STOP_BREAKDOWN with x of the previous iteration.
 * The reference is tests/solver_oracle_ls.c. */
#include "ksp.h"

#include <math.h>

enum { SU1 = 0, SU2, SV, CK };

static void stop(ks_run *r, hisp_stop_reason why)
{
    r->done = 1;
    r->reason = why;
}

static double root(double v)
{
    return isnan(v) ? NAN : sqrt(fmax(v, 0));
}

typedef struct {
    ks_vec *u1, *q, *u2, *vh, *t, *w, *dy;
} lsqr_vecs;

hisp_status hispi_ks_lsqr(ks_run *r)
{
    ks_space *sp = r->sp;
    const ks_ops *o = sp->o;
    if (sp->t != HISP_F32 && sp->t != HISP_F64)
        return hispi_fail(sp->ctx, HISP_ERR_UNSUPPORTED, "lsqr: f32 and f64 entries only");
    double lam = r->s->damp;
    lsqr_vecs L = {0};
    hisp_status st = o->vnew(sp, 0, &L.u1);
    if (!st) st = o->vnew(sp, 0, &L.q);
    if (!st && lam > 0) st = o->vnew(sp, 1, &L.u2);
    if (!st) st = o->vnew(sp, 1, &L.vh);
    if (!st) st = o->vnew(sp, 1, &L.t);
    if (!st) st = o->vnew(sp, 1, &L.w);
    if (!st && sp->has_pc) st = o->vnew(sp, 1, &L.dy);
    if (!sp->has_pc) L.dy = r->x; /* D = I: the steps go straight into x */

    /* U = (b - A x0, -damp x0); Vh = Ab^T U (r->bnorm = ||D A^T b|| is the
     * caller's) */
    if (!st) st = o->matvec(sp, HISP_OP_N, r->x, L.u1);
    if (!st) st = o->axpby_dot(sp, ks_val(1), r->b, ks_val(-1), L.u1, NULL, SU1);
    if (!st && lam > 0) st = o->axpby_dot(sp, ks_val(-lam), r->x, ks_val(0), L.u2, NULL, SU2);
    if (!st) st = o->matvec(sp, HISP_OP_T, L.u1, L.t);
    if (!st && lam > 0) st = o->axpby(sp, ks_val(lam), L.u2, ks_val(1), L.t);
    if (!st) st = o->precond(sp, L.t, L.vh, -1);
    if (!st) st = o->dot(sp, L.vh, L.vh, SV);
    double v[16];
    if (!st) st = o->read(sp, SU1, 3, v);
    double beta = 0, c = 0, alpha = 0;
    if (!st) {
        beta = root(v[0] + (lam > 0 ? v[4] : 0));
        c = root(v[8]);
        st = hispi_ks_start(r, c);
    }
    /* with c > 0 (else converged above) beta > 0 too */
    alpha = c > 0 ? c / beta : 0;
    double phibar = beta, rhobar = alpha;
    if (!st && !r->done) st = o->axpby(sp, ks_val(1 / c), L.vh, ks_val(0), L.w);
    bool steps = !st && !r->done && sp->has_pc; /* dy is used */
    if (steps) st = o->fill(sp, ks_val(0), L.dy);

    while (!st && !r->done) {
        ks_vec *dv = L.vh; /* D Vh */
        if (sp->has_pc) {
            st = o->precond(sp, L.vh, L.t, -1);
            dv = L.t;
        }
        if (!st) st = o->matvec(sp, HISP_OP_N, dv, L.q);
        if (!st) st = o->axpby_dot(sp, ks_val(1 / c), L.q, ks_val(-alpha / beta), L.u1, NULL, SU1);
        if (!st && lam > 0)
            st = o->axpby_dot(sp, ks_val(lam / c), dv, ks_val(-alpha / beta), L.u2, NULL, SU2);
        if (!st) st = o->matvec(sp, HISP_OP_T, L.u1, L.t);
        if (!st && lam > 0) st = o->axpby(sp, ks_val(lam), L.u2, ks_val(1), L.t);
        if (!st) st = o->precond(sp, L.t, L.t, -1);
        const double cv[4] = {c, 0, 0, 0};
        if (!st) st = o->sset(sp, CK, cv);
        if (!st && lam > 0) st = o->axpby(sp, ks_ratio(SU2, CK, 1), L.vh, ks_val(1), L.t);
        if (!st) st = o->axpby_dot(sp, ks_val(1), L.t, ks_ratio(SU1, CK, 1), L.vh, NULL, SV);
        if (!st) st = o->read(sp, SU1, 3, v); /* the one wait of the iteration */
        if (st) break;
        double beta2 = root(v[0] + (lam > 0 ? v[4] : 0)), c2 = root(v[8]);
        double alpha2 = beta2 > 0 ? c2 / beta2 : 0;
        double rho = hypot(rhobar, beta2);
        if (!isfinite(beta2) || !isfinite(c2) || !(rho > 0)) {
            stop(r, HISP_STOP_BREAKDOWN);
            break;
        }
        double cs = rhobar / rho, sn = beta2 / rho, theta = sn * alpha2, phi = cs * phibar;
        rhobar = -cs * alpha2;
        phibar = sn * phibar;
        st = o->axpby(sp, ks_val(phi / rho), L.w, ks_val(1), L.dy);
        if (!st && c2 > 0) st = o->axpby(sp, ks_val(1 / c2), L.vh, ks_val(-theta / rho), L.w);
        if (st) break;
        r->it++;
        st = hispi_ks_step_host(r, phibar * alpha2 * fabs(cs));
        if (!st && !r->done && c2 == 0) stop(r, HISP_STOP_CONVERGED); /* not reached: 0 <= tol */
        c = c2;
        alpha = alpha2;
        beta = beta2;
    }
    /* x = x0 + D y */
    if (!st && steps) {
        st = o->precond(sp, L.dy, L.t, -1);
        if (!st) st = o->axpby(sp, ks_val(1), L.t, ks_val(1), r->x);
    }
    ks_vec *all[] = {L.u1, L.q, L.u2, L.vh, L.t, L.w, sp->has_pc ? L.dy : NULL};
    for (int i = 0; i < 7; i++)
        if (all[i]) o->vfree(sp, all[i]);
    return st;
}
