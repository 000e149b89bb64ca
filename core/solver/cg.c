/* Conjugate gradients (Hestenes and Stiefel) with an optional
 * preconditioner M: per iteration one product, the fused updates
 *   q = A p, pq = p^H q (an operator's apply_dot fuses them);
 *   r -= q*alpha, ||r||^2;  z = M^-1 r, rho' = r^H z (one pass with Jacobi);
 *   x += p*alpha and p = z + p*(rho'/rho) in one pass
 * with alpha = rho/pq read by the kernels from the slots (no wait). pq is
 * kept per iteration (aux) so a check can tell an indefinite A. The steps
 * are also mixed precision's (mixed.c), which replaces r between them. */
#include "ksp.h"

#include <math.h>

enum { RHO_A = 0, RHO_B = 1, R0 = 2, RG = 3 };

static int cg_aux_bad(const double v[4], double rprev)
{
    if (isnan(v[0])) return -1; /* the residual check reports it */
    if (v[0] < 0 || (v[0] == 0 && rprev > 0)) return HISP_STOP_INDEFINITE;
    return -1;
}

/* z = M^-1 r and the slot of rho = r^H z (R0, ||r||^2 already, without M) */
static hisp_status cg_precond(ks_run *r, ks_cg *c)
{
    ks_space *sp = r->sp;
    c->rho = R0;
    if (!sp->has_pc) return HISP_SUCCESS;
    c->rho = RHO_A;
    return sp->o->precond(sp, c->res, c->z, RHO_A);
}

hisp_status hispi_ks_cg_init(ks_run *r, ks_cg *c, double *rn)
{
    ks_space *sp = r->sp;
    const ks_ops *o = sp->o;
    HISPI_TRY(o->matvec(sp, HISP_OP_N, r->x, c->res));
    HISPI_TRY(o->axpby_dot(sp, ks_val(1), r->b, ks_val(-1), c->res, NULL, R0));
    HISPI_TRY(cg_precond(r, c));
    HISPI_TRY(o->copy(sp, c->z, c->p));
    double v[4];
    HISPI_TRY(o->read(sp, R0, 1, v));
    *rn = isnan(v[0]) ? NAN : sqrt(fmax(v[0], 0));
    return HISP_SUCCESS;
}

hisp_status hispi_ks_cg_detach(ks_run *r, ks_cg *c)
{
    return r->sp->o->axpby(r->sp, ks_val(-1), c->z, ks_val(1), c->p);
}

/* As QUDA's reliable update: p made conjugate-gradient-like again for the
 * new r, p = z + d - (r^H d / r^H z) z with d = beta p_old (detach), so that
 * r^H p = r^H z holds as the recurrence assumes (f32's rounding loses it). */
hisp_status hispi_ks_cg_replace(ks_run *r, ks_cg *c)
{
    ks_space *sp = r->sp;
    HISPI_TRY(sp->o->dot2(sp, c->res, c->res, c->p, R0, RG));
    HISPI_TRY(cg_precond(r, c));
    return sp->o->axpbypcz(sp, ks_val(1), c->z, ks_safe(RG, c->rho, 1), c->z, ks_val(1), c->p);
}

hisp_status hispi_ks_cg_begin(ks_run *r, ks_cg *c)
{
    ks_space *sp = r->sp;
    const ks_ops *o = sp->o;
    *c = (ks_cg){NULL, NULL, NULL, NULL, R0};
    hisp_status st = o->vnew(sp, 0, &c->res);
    if (!st) st = o->vnew(sp, 0, &c->p);
    if (!st) st = o->vnew(sp, 0, &c->q);
    if (!st && sp->has_pc) st = o->vnew(sp, 0, &c->z);
    if (!sp->has_pc) c->z = c->res;
    r->use_aux = 1;
    r->aux_bad = cg_aux_bad;
    return st;
}

void hispi_ks_cg_end(ks_run *r, ks_cg *c)
{
    ks_space *sp = r->sp;
    ks_vec *v[4] = {c->res, c->p, c->q, sp->has_pc ? c->z : NULL};
    for (int i = 0; i < 4; i++)
        if (v[i]) sp->o->vfree(sp, v[i]);
}

hisp_status hispi_ks_cg_step(ks_run *r, ks_cg *c)
{
    ks_space *sp = r->sp;
    const ks_ops *o = sp->o;
    int64_t k = r->it + 1;
    int pq = ks_aux(r, k), rr = ks_hist(r, k), rho = c->rho;
    HISPI_TRY(ks_matvec_dot(sp, c->p, c->q, pq));
    int rho2 = rr; /* no preconditioner: rho' = ||r||^2 */
    if (sp->has_pc) {
        rho2 = rho == RHO_A ? RHO_B : RHO_A;
        HISPI_TRY(
            ks_axpby_precond(sp, ks_safe(rho, pq, 1), c->q, ks_val(1), c->res, rr, c->z, rho2));
    } else {
        HISPI_TRY(o->axpby_dot(sp, ks_safe(rho, pq, 1), c->q, ks_val(1), c->res, NULL, rr));
    }
    /* x += p*alpha and p = z + p*beta in one pass (p read once) */
    HISPI_TRY(o->axpby2(sp, ks_safe(rho, pq, 0), c->p, ks_val(1), r->x, ks_val(1), c->z,
                        ks_safe(rho2, rho, 0), c->p));
    c->rho = rho2;
    r->it = k;
    return HISP_SUCCESS;
}

hisp_status hispi_ks_cg(ks_run *r)
{
    ks_cg c;
    double rn = 0;
    hisp_status st = hispi_ks_cg_begin(r, &c);
    if (!st) st = hispi_ks_cg_init(r, &c, &rn);
    if (!st) st = hispi_ks_start(r, rn);
    while (!st && !r->done) {
        if (r->restart) {
            r->restart = 0;
            st = hispi_ks_cg_init(r, &c, &rn);
            continue;
        }
        st = hispi_ks_cg_step(r, &c);
        if (!st) st = hispi_ks_check(r, 0);
    }
    hispi_ks_cg_end(r, &c);
    return st;
}
