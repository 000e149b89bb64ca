/* Conjugate gradients (Hestenes and Stiefel) with an optional
 * preconditioner M: per iteration one product, the fused updates
 *   q = A p, pq = p^H q (one pass where the space fuses them);
 *   r -= q*alpha, ||r||^2;  z = M^-1 r, rho' = r^H z (one pass with Jacobi);
 *   x += p*alpha and p = z + p*(rho'/rho) in one pass
 * with alpha = rho/pq read by the kernels from the slots (no wait). pq is
 * kept per iteration (aux) so a check can tell an indefinite A. */
#include "ksp.h"

#include <math.h>

enum { RHO_A = 0, RHO_B = 1, R0 = 2 };

static int cg_aux_bad(const double v[4], double rprev)
{
    if (isnan(v[0])) return -1; /* the residual check reports it */
    if (v[0] < 0 || (v[0] == 0 && rprev > 0)) return HISP_STOP_INDEFINITE;
    return -1;
}

/* r = b - A x, z = M^-1 r, p = z; *rho: the slot holding r^H z. */
static hisp_status cg_init(ks_run *r, ks_vec *res, ks_vec *z, ks_vec *p, int *rho, double *rn)
{
    ks_space *sp = r->sp;
    const ks_ops *o = sp->o;
    HISPI_TRY(o->matvec(sp, HISP_OP_N, r->x, res));
    HISPI_TRY(o->axpby_dot(sp, ks_val(1), r->b, ks_val(-1), res, NULL, R0));
    *rho = R0;
    if (sp->has_pc) {
        HISPI_TRY(o->precond(sp, res, z, RHO_A));
        *rho = RHO_A;
    }
    HISPI_TRY(o->copy(sp, z, p));
    double v[4];
    HISPI_TRY(o->read(sp, R0, 1, v));
    *rn = sqrt(fmax(v[0], 0));
    if (isnan(v[0])) *rn = NAN;
    return HISP_SUCCESS;
}

hisp_status hispi_ks_cg(ks_run *r)
{
    ks_space *sp = r->sp;
    const ks_ops *o = sp->o;
    ks_vec *res = NULL, *p = NULL, *q = NULL, *z = NULL;
    hisp_status st = o->vnew(sp, 0, &res);
    if (!st) st = o->vnew(sp, 0, &p);
    if (!st) st = o->vnew(sp, 0, &q);
    if (!st && sp->has_pc) st = o->vnew(sp, 0, &z);
    if (!sp->has_pc) z = res;
    r->use_aux = 1;
    r->aux_bad = cg_aux_bad;
    double rn = 0;
    int rho = R0;
    if (!st) st = cg_init(r, res, z, p, &rho, &rn);
    if (!st) st = hispi_ks_start(r, rn);
    while (!st && !r->done) {
        if (r->restart) {
            r->restart = 0;
            st = cg_init(r, res, z, p, &rho, &rn);
            continue;
        }
        int64_t k = r->it + 1;
        int pq = ks_aux(r, k), rr = ks_hist(r, k);
        st = ks_matvec_dot(sp, p, q, pq);
        int rho2 = rr; /* no preconditioner: rho' = ||r||^2 */
        if (!st && sp->has_pc) {
            rho2 = rho == RHO_A ? RHO_B : RHO_A;
            st = ks_axpby_precond(sp, ks_safe(rho, pq, 1), q, ks_val(1), res, rr, z, rho2);
        } else if (!st) {
            st = o->axpby_dot(sp, ks_safe(rho, pq, 1), q, ks_val(1), res, NULL, rr);
        }
        /* x += p*alpha and p = z + p*beta in one pass (p read once) */
        if (!st)
            st = o->axpby2(sp, ks_safe(rho, pq, 0), p, ks_val(1), r->x, ks_val(1), z,
                           ks_safe(rho2, rho, 0), p);
        rho = rho2;
        r->it = k;
        if (!st) st = hispi_ks_check(r, 0);
    }
    o->vfree(sp, res);
    o->vfree(sp, p);
    o->vfree(sp, q);
    if (sp->has_pc) o->vfree(sp, z);
    return st;
}
