/* BiCGSTAB in lock step (block.h): bicgstab.c's iteration for every running
 * column, each of its two products one SpMM over them (right
 * preconditioning: the SpMMs take M^-1 p and M^-1 s). */
#include "block.h"

enum { RHO = BLK_FIRST, BETA, RV, TS, TT, NFIX };
enum { R0 = 0, P, V, T, PH, SH };

/* r0 = r, p = v = 0, rho = ||r||^2, a finite first beta */
static hisp_status start(blk *b)
{
    ks_space *sp = b->sp;
    const ks_ops *o = sp->o;
    for (int i = R0; i <= V; i++)
        HISPI_TRY(hispi_blk_new(b, true, &b->mb[i]));
    HISPI_TRY(hispi_blk_new(b, false, &b->mb[T]));
    b->mb[PH] = b->mb[P];
    b->mb[SH] = b->res;
    if (sp->has_pc) {
        HISPI_TRY(hispi_blk_new(b, false, &b->mb[PH]));
        HISPI_TRY(hispi_blk_new(b, false, &b->mb[SH]));
    }
    const double one[4] = {1, 0, 0, 0};
    for (int64_t p = 0; p < b->m; p++) {
        HISPI_TRY(o->copy(sp, hispi_blk_at(b, b->res, p), hispi_blk_at(b, b->mb[R0], p)));
        HISPI_TRY(o->fill(sp, ks_val(0), hispi_blk_at(b, b->mb[P], p)));
        HISPI_TRY(o->fill(sp, ks_val(0), hispi_blk_at(b, b->mb[V], p)));
        HISPI_TRY(o->smul(sp, ks_slot(hispi_blk_slot(b, BLK_RR0, p), 0), ks_val(1),
                          hispi_blk_slot(b, RHO, p)));
        const int slot[3] = {RV, TS, TT};
        for (int i = 0; i < 3; i++)
            HISPI_TRY(o->sset(sp, hispi_blk_slot(b, slot[i], p), one));
    }
    return HISP_SUCCESS;
}

static hisp_status step(blk *b, int64_t it)
{
    ks_space *sp = b->sp;
    const ks_ops *o = sp->o;
    int64_t m = b->m;
#define AT(i, p) hispi_blk_at(b, b->mb[i], p)
#define SL(s, p) hispi_blk_slot(b, s, p)
    for (int64_t p = 0; p < m; p++) {
        /* beta and omega*beta from the last iteration's slots */
        HISPI_TRY(o->smul(sp, ks_ratio(SL(RHO, p), SL(RV, p), 0), ks_ratio(SL(TT, p), SL(TS, p), 0),
                          SL(BETA, p)));
        HISPI_TRY(o->axpbypcz(sp, ks_val(1), hispi_blk_at(b, b->res, p),
                              ks_ratio(SL(RHO, p), SL(RV, p), 1), AT(V, p), ks_slot(SL(BETA, p), 0),
                              AT(P, p)));
        if (sp->has_pc) HISPI_TRY(o->precond(sp, AT(P, p), AT(PH, p), -1));
    }
    HISPI_TRY(hispi_blk_product(b, b->mb[PH], b->mb[V]));
    for (int64_t p = 0; p < m; p++) {
        ks_vec *res = hispi_blk_at(b, b->res, p);
        HISPI_TRY(o->dot(sp, AT(R0, p), AT(V, p), SL(RV, p)));
        HISPI_TRY(o->axpby(sp, ks_ratio(SL(RHO, p), SL(RV, p), 1), AT(V, p), ks_val(1), res));
        if (sp->has_pc) HISPI_TRY(o->precond(sp, res, AT(SH, p), -1));
    }
    HISPI_TRY(hispi_blk_product(b, b->mb[SH], b->mb[T]));
    for (int64_t p = 0; p < m; p++) {
        ks_vec *res = hispi_blk_at(b, b->res, p);
        HISPI_TRY(o->dot2(sp, AT(T, p), res, AT(T, p), SL(TS, p), SL(TT, p)));
        /* x += P*alpha + S*omega in the residual's pass, the next rho */
        const ks_acc acc = {ks_ratio(SL(RHO, p), SL(RV, p), 0), ks_safe(SL(TS, p), SL(TT, p), 0),
                            AT(PH, p), AT(SH, p), hispi_blk_x(b, p)};
        HISPI_TRY(ks_axpby_dot2(sp, &acc, ks_safe(SL(TS, p), SL(TT, p), 1), AT(T, p), ks_val(1),
                                res, AT(R0, p), hispi_blk_rr(b, it, p), SL(RHO, p)));
    }
#undef AT
#undef SL
    return HISP_SUCCESS;
}

const blk_method hispi_blk_bicgstab = {NFIX, false, start, step};
