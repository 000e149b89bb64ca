/* A Krylov basis (GMRES's): its vectors, their dots with one or two
 * vectors, and updates by combinations of them, through the space's ops
 * where it has them (the one-context space: one allocation, one pass over
 * the basis) or as the single-vector calls every space has (the
 * distributed spaces). */
#include "ksp.h"

#include <stdlib.h>

hisp_status hispi_ks_vblock_calls(ks_space *sp, int count, ks_vec **v)
{
    for (int i = 0; i < count; i++)
        v[i] = NULL;
    for (int i = 0; i < count; i++) {
        hisp_status st = sp->o->vnew(sp, 0, &v[i]);
        if (st) {
            hispi_ks_vblock_free_calls(sp, i, v);
            return st;
        }
    }
    return HISP_SUCCESS;
}

void hispi_ks_vblock_free_calls(ks_space *sp, int count, ks_vec **v)
{
    for (int i = 0; i < count; i++)
        if (v[i]) {
            sp->o->vfree(sp, v[i]);
            v[i] = NULL;
        }
}

hisp_status hispi_ks_vblock(ks_space *sp, int count, ks_vec **v)
{
    if (sp->o->vblock) return sp->o->vblock(sp, count, v);
    return hispi_ks_vblock_calls(sp, count, v);
}

void hispi_ks_vblock_free(ks_space *sp, int count, ks_vec **v)
{
    if (sp->o->vblock_free)
        sp->o->vblock_free(sp, count, v);
    else
        hispi_ks_vblock_free_calls(sp, count, v);
}

hisp_status hispi_ks_mdot_calls(ks_space *sp, ks_vec **Q, int q, ks_vec **R, int nr, int slot)
{
    for (int k = 0; k < nr; k++)
        for (int c = 0; c < q; c++)
            HISPI_TRY(sp->o->dot(sp, Q[c], R[k], slot + k * q + c));
    return HISP_SUCCESS;
}

hisp_status hispi_ks_mdot(ks_space *sp, ks_vec **Q, int q, ks_vec **R, int nr, int slot)
{
    if (sp->o->mdot) return sp->o->mdot(sp, Q, q, R, nr, slot);
    return hispi_ks_mdot_calls(sp, Q, q, R, nr, slot);
}

/* y1 first: it reads y0 as it was */
hisp_status hispi_ks_bupdate_calls(ks_space *sp, ks_vec **Q, int q, ks_vec *y0, ks_vec *y1,
                                   const double *coef)
{
    const ks_ops *o = sp->o;
#define COEF(i) ks_valv(coef + 4 * (size_t)(i))
    if (y1) {
        HISPI_TRY(o->axpby(sp, COEF(2 * q + 1), y0, COEF(2 * q + 2), y1));
        for (int c = 0; c < q; c++)
            HISPI_TRY(o->axpby(sp, COEF(q + 1 + c), Q[c], ks_val(1), y1));
    }
    if (q == 0) { /* a zero a0 does not read y0 */
        bool zero = coef[0] == 0 && coef[1] == 0 && coef[2] == 0 && coef[3] == 0;
        return zero ? o->fill(sp, ks_val(0), y0) : o->scale(sp, y0, COEF(0));
    }
    HISPI_TRY(o->axpby(sp, COEF(0), Q[0], COEF(q), y0));
    for (int c = 1; c < q; c++)
        HISPI_TRY(o->axpby(sp, COEF(c), Q[c], ks_val(1), y0));
#undef COEF
    return HISP_SUCCESS;
}

hisp_status hispi_ks_bupdate(ks_space *sp, ks_vec **Q, int q, ks_vec *y0, ks_vec *y1,
                             const double *coef)
{
    if (sp->o->bupdate) return sp->o->bupdate(sp, Q, q, y0, y1, coef);
    return hispi_ks_bupdate_calls(sp, Q, q, y0, y1, coef);
}
