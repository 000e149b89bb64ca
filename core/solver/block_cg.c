/* CG in lock step (block.h): cg.c's iteration for every running column,
 * the product A p one SpMM over them; p^H A p kept per iteration (aux) so a
 * check can tell a breakdown. */
#include "block.h"

enum { RHO_A = BLK_FIRST, RHO_B, NFIX };
enum { P = 0, Q, Z };

/* z = M^-1 r, rho = r^H z, p = z */
static hisp_status start(blk *b)
{
    ks_space *sp = b->sp;
    const ks_ops *o = sp->o;
    HISPI_TRY(hispi_blk_new(b, true, &b->mb[P]));
    HISPI_TRY(hispi_blk_new(b, false, &b->mb[Q]));
    b->mb[Z] = b->res;
    if (sp->has_pc) HISPI_TRY(hispi_blk_new(b, false, &b->mb[Z]));
    b->mstate = sp->has_pc ? RHO_A : BLK_RR0;
    for (int64_t p = 0; p < b->m; p++) {
        ks_vec *z = hispi_blk_at(b, b->mb[Z], p);
        if (sp->has_pc)
            HISPI_TRY(o->precond(sp, hispi_blk_at(b, b->res, p), z, hispi_blk_slot(b, RHO_A, p)));
        HISPI_TRY(o->copy(sp, z, hispi_blk_at(b, b->mb[P], p)));
    }
    return HISP_SUCCESS;
}

static hisp_status step(blk *b, int64_t it)
{
    ks_space *sp = b->sp;
    const ks_ops *o = sp->o;
    HISPI_TRY(hispi_blk_product(b, b->mb[P], b->mb[Q]));
    int rho = b->mstate, rho2 = sp->has_pc ? (rho == RHO_A ? RHO_B : RHO_A) : -1;
    for (int64_t p = 0; p < b->m; p++) {
        ks_vec *pv = hispi_blk_at(b, b->mb[P], p), *q = hispi_blk_at(b, b->mb[Q], p);
        ks_vec *r = hispi_blk_at(b, b->res, p), *z = hispi_blk_at(b, b->mb[Z], p);
        int pq = hispi_blk_aux(b, it, p), rr = hispi_blk_rr(b, it, p);
        int r0 = hispi_blk_slot(b, rho, p), r1 = sp->has_pc ? hispi_blk_slot(b, rho2, p) : rr;
        HISPI_TRY(o->dot(sp, pv, q, pq));
        if (sp->has_pc) /* Jacobi: one pass */
            HISPI_TRY(ks_axpby_precond(sp, ks_safe(r0, pq, 1), q, ks_val(1), r, rr, z, r1));
        else
            HISPI_TRY(o->axpby_dot(sp, ks_safe(r0, pq, 1), q, ks_val(1), r, NULL, rr));
        /* x += p*alpha and p = z + p*beta in one pass */
        HISPI_TRY(o->axpby2(sp, ks_safe(r0, pq, 0), pv, ks_val(1), hispi_blk_x(b, p), ks_val(1), z,
                            ks_safe(r1, r0, 0), pv));
    }
    /* without a preconditioner the next rho is this iteration's ||r||^2 */
    b->mstate = sp->has_pc ? rho2 : NFIX + (int)((it - 1) % b->ring);
    return HISP_SUCCESS;
}

const blk_method hispi_blk_cg = {NFIX, true, start, step};
