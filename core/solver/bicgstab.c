/* BiCGSTAB (van der Vorst) with right preconditioning M: per iteration two
 * products and the updates
 *   p = r + p*beta - v*(omega*beta);  v = A M^-1 p;  alpha = rho/(r0^H v);
 *   s = r - v*alpha;  t = A M^-1 s;  omega = (t^H s)/(t^H t);
 *   x += M^-1 p*alpha + M^-1 s*omega and r = s - t*omega with ||r||^2
 *   and the next rho = r0^H r in one pass
 * with every scalar read by the kernels as a ratio of slots: with the last
 * iteration's r0^H v, t^H s and t^H t, omega*beta = rho/(r0^H v) and beta =
 * (rho/(r0^H v)) (t^H t/t^H s), so one scalar product (beta) a step. A
 * zero rho or r0^H v (breakdown) shows as a non-finite residual at the next
 * check. Real and complex entries: the quaternion form needs left
 * divisions the scalars do not have. */
#include "ksp.h"

#include <math.h>

enum { RHO = 0, BETA, RV, TS, TT, R0 };

static hisp_status init(ks_run *r, ks_vec *res, ks_vec *r0, ks_vec *p, ks_vec *v, double *rn)
{
    ks_space *sp = r->sp;
    const ks_ops *o = sp->o;
    const double one[4] = {1, 0, 0, 0};
    HISPI_TRY(o->matvec(sp, HISP_OP_N, r->x, res));
    HISPI_TRY(o->axpby_dot(sp, ks_val(1), r->b, ks_val(-1), res, NULL, R0));
    HISPI_TRY(o->copy(sp, res, r0));
    HISPI_TRY(o->fill(sp, ks_val(0), p));
    HISPI_TRY(o->fill(sp, ks_val(0), v));
    HISPI_TRY(o->smul(sp, ks_slot(R0, 0), ks_val(1), RHO)); /* r0^H r = ||r||^2 */
    /* a finite first beta (p and v are 0) */
    const int slot[3] = {RV, TS, TT};
    for (int i = 0; i < 3; i++)
        HISPI_TRY(o->sset(sp, slot[i], one));
    double w[4];
    HISPI_TRY(o->read(sp, R0, 1, w));
    *rn = isnan(w[0]) ? NAN : sqrt(fmax(w[0], 0));
    return HISP_SUCCESS;
}

hisp_status hispi_ks_bicgstab(ks_run *r)
{
    ks_space *sp = r->sp;
    const ks_ops *o = sp->o;
    if (sp->t == HISP_Q32 || sp->t == HISP_Q64)
        return hispi_fail(sp->ctx, HISP_ERR_UNSUPPORTED,
                          "bicgstab: real and complex entries only (quaternion matrices: cg "
                          "for Hermitian ones)");
    ks_vec *res = NULL, *r0 = NULL, *p = NULL, *v = NULL, *t = NULL, *ph = NULL, *sh = NULL;
    hisp_status st = o->vnew(sp, 0, &res);
    if (!st) st = o->vnew(sp, 0, &r0);
    if (!st) st = o->vnew(sp, 0, &p);
    if (!st) st = o->vnew(sp, 0, &v);
    if (!st) st = o->vnew(sp, 0, &t);
    if (!st && sp->has_pc) st = o->vnew(sp, 0, &ph);
    if (!st && sp->has_pc) st = o->vnew(sp, 0, &sh);
    double rn = 0;
    if (!st) st = init(r, res, r0, p, v, &rn);
    if (!st) st = hispi_ks_start(r, rn);
    while (!st && !r->done) {
        if (r->restart) {
            r->restart = 0;
            st = init(r, res, r0, p, v, &rn);
            continue;
        }
        int64_t k = r->it + 1;
        ks_vec *P = sp->has_pc ? ph : p, *S = sp->has_pc ? sh : res;
        /* beta and omega*beta from the last iteration's slots */
        st = o->smul(sp, ks_ratio(RHO, RV, 0), ks_ratio(TT, TS, 0), BETA);
        if (!st) st = o->axpbypcz(sp, ks_val(1), res, ks_ratio(RHO, RV, 1), v, ks_slot(BETA, 0), p);
        if (!st && sp->has_pc) st = o->precond(sp, p, ph, -1);
        if (!st) st = o->matvec(sp, HISP_OP_N, P, v);
        if (!st) st = o->dot(sp, r0, v, RV);
        if (!st) st = o->axpby(sp, ks_ratio(RHO, RV, 1), v, ks_val(1), res); /* res = s */
        if (!st && sp->has_pc) st = o->precond(sp, res, sh, -1);
        if (!st) st = o->matvec(sp, HISP_OP_N, S, t);
        if (!st) st = o->dot2(sp, t, res, t, TS, TT);
        /* x += P*alpha + S*omega in the residual's pass (t = 0 only when s
         * = 0, converged at the half step: omega 0); the next rho: rho is
         * read by this pass's first stage, written by its reduction */
        const ks_acc acc = {ks_ratio(RHO, RV, 0), ks_safe(TS, TT, 0), P, S, r->x};
        if (!st)
            st = ks_axpby_dot2(sp, &acc, ks_safe(TS, TT, 1), t, ks_val(1), res, r0, ks_hist(r, k),
                               RHO);
        r->it = k;
        if (!st) st = hispi_ks_check(r, 0);
    }
    ks_vec *all[] = {res, r0, p, v, t, ph, sh};
    for (int i = 0; i < 7; i++)
        if (all[i]) o->vfree(sp, all[i]);
    return st;
}
