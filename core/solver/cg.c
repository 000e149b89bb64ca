/* Conjugate gradients (Hestenes and Stiefel) with an optional
 * preconditioner M: per iteration one product, the fused updates
 *   q = A p, pq = p^H q (an operator's apply_dot fuses them);
 *   r -= q*alpha, ||r||^2;  z = M^-1 r, rho' = r^H z (one pass with Jacobi);
 *   x += p*alpha and p = z + p*(rho'/rho) in one pass
 * with alpha = rho/pq read by the kernels from the slots (no wait). Where
 * the space forms the direction in its product (sp->pdot: CUDA's CSR), an
 * iteration is two passes: p = z + p*beta, q = A p, pq = p^H q in the
 * product; then x += p*alpha with r -= q*alpha, ||r||^2 (Jacobi: x, then
 * r with z). pq is kept per iteration (aux) so a check can tell an
 * indefinite A. The steps are also mixed precision's (mixed.c), which
 * replaces r between them. */
#include "ksp.h"

#include <math.h>
#include <stdlib.h>

enum { RHO_A = 0, RHO_B = 1, R0 = 2, RG = 3, JUNK = 4 /* a dot nobody reads */ };

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
    c->pend = -1;
    double v[4];
    HISPI_TRY(o->read(sp, R0, 1, v));
    *rn = isnan(v[0]) ? NAN : sqrt(fmax(v[0], 0));
    return HISP_SUCCESS;
}

hisp_status hispi_ks_cg_detach(ks_run *r, ks_cg *c)
{
    ks_space *sp = r->sp;
    if (c->pend < 0) return sp->o->axpby(sp, ks_val(-1), c->z, ks_val(1), c->p);
    HISPI_TRY(sp->o->scale(sp, c->p, ks_safe(c->rho, c->pend, 0))); /* the direction not formed */
    c->pend = -1;
    return HISP_SUCCESS;
}

/* As QUDA's reliable update: p made conjugate-gradient-like again for the
 * new r, p = z + d - (r^H d / r^H z) z with d = beta p_old (detach), so that
 * r^H p = r^H z holds as the recurrence assumes (f32's rounding loses it). */
hisp_status hispi_ks_cg_replace(ks_run *r, ks_cg *c)
{
    c->pend = -1;
    ks_space *sp = r->sp;
    HISPI_TRY(sp->o->dot2(sp, c->res, c->res, c->p, R0, RG));
    HISPI_TRY(cg_precond(r, c));
    return sp->o->axpbypcz(sp, ks_val(1), c->z, ks_safe(RG, c->rho, 1), c->z, ks_val(1), c->p);
}

hisp_status hispi_ks_cg_begin(ks_run *r, ks_cg *c)
{
    ks_space *sp = r->sp;
    const ks_ops *o = sp->o;
    *c = (ks_cg){NULL, NULL, NULL, NULL, R0, NULL, -1};
    hisp_status st = o->vnew(sp, 0, &c->res);
    if (!st) st = o->vnew(sp, 0, &c->p);
    if (!st) st = o->vnew(sp, 0, &c->q);
    if (!st && sp->pdot) st = o->vnew(sp, 0, &c->pn);
    if (!st && sp->has_pc) st = o->vnew(sp, 0, &c->z);
    if (!sp->has_pc) c->z = c->res;
    r->use_aux = 1;
    r->aux_bad = cg_aux_bad;
    return st;
}

void hispi_ks_cg_end(ks_run *r, ks_cg *c)
{
    ks_space *sp = r->sp;
    ks_vec *v[5] = {c->res, c->p, c->q, sp->has_pc ? c->z : NULL, c->pn};
    for (int i = 0; i < 5; i++)
        if (v[i]) sp->o->vfree(sp, v[i]);
}

/* The two-pass iteration (sp->pdot): the direction formed in the product
 * (from the second iteration on), x updated with r. */
static hisp_status cg_step_pdot(ks_run *r, ks_cg *c, int pq, int rr)
{
    ks_space *sp = r->sp;
    const ks_ops *o = sp->o;
    int rho = c->rho;
    if (c->pend >= 0) {
        HISPI_TRY(o->matvec_pdot(sp, c->z, ks_safe(rho, c->pend, 0), c->p, c->pn, c->q, pq));
        ks_vec *t = c->p;
        c->p = c->pn, c->pn = t;
    } else {
        HISPI_TRY(ks_matvec_dot(sp, c->p, c->q, pq));
    }
    int rho2 = rr;
    if (sp->has_pc) {
        rho2 = rho == RHO_A ? RHO_B : RHO_A;
        HISPI_TRY(o->axpby(sp, ks_safe(rho, pq, 0), c->p, ks_val(1), r->x));
        HISPI_TRY(
            ks_axpby_precond(sp, ks_safe(rho, pq, 1), c->q, ks_val(1), c->res, rr, c->z, rho2));
    } else {
        /* x += p*alpha (+ r*0: the fused op's second term) with r -= q*alpha */
        const ks_acc acc = {ks_safe(rho, pq, 0), ks_val(0), c->p, c->res, r->x};
        HISPI_TRY(
            ks_axpby_dot2(sp, &acc, ks_safe(rho, pq, 1), c->q, ks_val(1), c->res, c->q, rr, JUNK));
    }
    c->pend = rho;
    c->rho = rho2;
    return HISP_SUCCESS;
}

hisp_status hispi_ks_cg_step(ks_run *r, ks_cg *c)
{
    ks_space *sp = r->sp;
    const ks_ops *o = sp->o;
    int64_t k = r->it + 1;
    int pq = ks_aux(r, k), rr = ks_hist(r, k), rho = c->rho;
    if (sp->pdot && !getenv("HISP_CG_CLASSIC")) { /* TEMPORARY switch for the measurement */
        HISPI_TRY(cg_step_pdot(r, c, pq, rr));
        r->it = k;
        return HISP_SUCCESS;
    }
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
