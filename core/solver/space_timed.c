/* The time breakdown of a solve (hisp_solve_info product_ms, vector_ms,
 * reduce_ms) for a space whose calls finish their work before they return,
 * or are made to (timed_sync: a device context with the debug option): its
 * ops wrapped so that each call's wall time goes to its kind. Two clock
 * reads per call; the allocation calls (vnew, vfree) are not counted. The
 * distributed space times itself (core/msrep/msrep_space.c: it also splits the wait for
 * work queued earlier). */
#include "ksp.h"

/* A call may first run reductions it needs (an operator's allreduce over
 * MPI ranks, deferred by space_local.c, which adds their time to reduce_ms
 * itself): the call's kind gets the rest. */
#define T0()                                                                                       \
    double t0_ = hispi_now_ms();                                                                   \
    double r0_ = sp->ms[KS_MS_REDUCE]
#define DONE(kind, st)                                                                             \
    do {                                                                                           \
        hisp_status s_ = (st);                                                                     \
        if (!s_ && sp->timed_sync) s_ = hisp_context_synchronize(sp->ctx);                         \
        sp->ms[kind] += hispi_now_ms() - t0_ - (sp->ms[KS_MS_REDUCE] - r0_);                       \
        return s_;                                                                                 \
    } while (0)

static hisp_status t_vnew(ks_space *sp, int cols, ks_vec **v)
{
    return sp->inner->vnew(sp, cols, v);
}

static void t_vfree(ks_space *sp, ks_vec *v)
{
    sp->inner->vfree(sp, v);
}

static hisp_status t_matvec(ks_space *sp, hisp_op op, ks_vec *x, ks_vec *y)
{
    T0();
    DONE(KS_MS_PRODUCT, sp->inner->matvec(sp, op, x, y));
}

static hisp_status t_matvec_dot(ks_space *sp, ks_vec *x, ks_vec *y, int slot)
{
    if (!sp->inner->matvec_dot) {
        HISPI_TRY(t_matvec(sp, HISP_OP_N, x, y));
        T0();
        DONE(KS_MS_REDUCE, sp->inner->dot(sp, x, y, slot));
    }
    T0();
    DONE(KS_MS_PRODUCT, sp->inner->matvec_dot(sp, x, y, slot));
}

static hisp_status t_precond(ks_space *sp, ks_vec *x, ks_vec *z, int slot)
{
    T0();
    DONE(slot >= 0 ? KS_MS_REDUCE : KS_MS_VECTOR, sp->inner->precond(sp, x, z, slot));
}

static hisp_status t_fill(ks_space *sp, ks_sc a, ks_vec *y)
{
    T0();
    DONE(KS_MS_VECTOR, sp->inner->fill(sp, a, y));
}

static hisp_status t_copy(ks_space *sp, ks_vec *x, ks_vec *y)
{
    T0();
    DONE(KS_MS_VECTOR, sp->inner->copy(sp, x, y));
}

static hisp_status t_scale(ks_space *sp, ks_vec *y, ks_sc a)
{
    T0();
    DONE(KS_MS_VECTOR, sp->inner->scale(sp, y, a));
}

static hisp_status t_axpby(ks_space *sp, ks_sc a, ks_vec *x, ks_sc b, ks_vec *y)
{
    T0();
    DONE(KS_MS_VECTOR, sp->inner->axpby(sp, a, x, b, y));
}

static hisp_status t_axpbypcz(ks_space *sp, ks_sc a, ks_vec *x, ks_sc b, ks_vec *y, ks_sc c,
                              ks_vec *z)
{
    T0();
    DONE(KS_MS_VECTOR, sp->inner->axpbypcz(sp, a, x, b, y, c, z));
}

static hisp_status t_dot(ks_space *sp, ks_vec *x, ks_vec *y, int slot)
{
    T0();
    DONE(KS_MS_REDUCE, sp->inner->dot(sp, x, y, slot));
}

static hisp_status t_axpby_dot(ks_space *sp, ks_sc a, ks_vec *x, ks_sc b, ks_vec *y, ks_vec *w,
                               int slot)
{
    T0();
    DONE(KS_MS_REDUCE, sp->inner->axpby_dot(sp, a, x, b, y, w, slot));
}

static hisp_status t_axpby2(ks_space *sp, ks_sc a, ks_vec *x1, ks_sc b, ks_vec *y1, ks_sc c,
                            ks_vec *x2, ks_sc d, ks_vec *y2)
{
    T0();
    DONE(KS_MS_VECTOR, sp->inner->axpby2(sp, a, x1, b, y1, c, x2, d, y2));
}

static hisp_status t_dot2(ks_space *sp, ks_vec *x, ks_vec *y, ks_vec *w, int s0, int s1)
{
    T0();
    DONE(KS_MS_REDUCE, sp->inner->dot2(sp, x, y, w, s0, s1));
}

static hisp_status t_smul(ks_space *sp, ks_sc a, ks_sc b, int slot)
{
    T0();
    DONE(KS_MS_VECTOR, sp->inner->smul(sp, a, b, slot));
}

static hisp_status t_sset(ks_space *sp, int slot, const double v[4])
{
    T0();
    DONE(KS_MS_VECTOR, sp->inner->sset(sp, slot, v));
}

static hisp_status t_read(ks_space *sp, int first, int n, double *out)
{
    T0();
    DONE(KS_MS_REDUCE, sp->inner->read(sp, first, n, out));
}

static hisp_status t_axpby_precond(ks_space *sp, ks_sc a, ks_vec *x, ks_sc b, ks_vec *y, int s0,
                                   ks_vec *z, int s1)
{
    if (!sp->inner->axpby_precond) {
        HISPI_TRY(t_axpby_dot(sp, a, x, b, y, NULL, s0));
        return t_precond(sp, y, z, s1);
    }
    T0();
    DONE(KS_MS_REDUCE, sp->inner->axpby_precond(sp, a, x, b, y, s0, z, s1));
}

static hisp_status t_axpby_dot2(ks_space *sp, const ks_acc *acc, ks_sc a, ks_vec *x, ks_sc b,
                                ks_vec *y, ks_vec *w, int s0, int s1)
{
    if (!sp->inner->axpby_dot2) {
        HISPI_TRY(t_axpbypcz(sp, acc->p, acc->P, acc->q, acc->S, ks_val(1), acc->X));
        HISPI_TRY(t_axpby_dot(sp, a, x, b, y, NULL, s0));
        return t_dot(sp, w, y, s1);
    }
    T0();
    DONE(KS_MS_REDUCE, sp->inner->axpby_dot2(sp, acc, a, x, b, y, w, s0, s1));
}

static void t_vblock_free(ks_space *sp, int count, ks_vec **v)
{
    if (sp->inner->vblock_free)
        sp->inner->vblock_free(sp, count, v);
    else
        hispi_ks_vblock_free_calls(sp, count, v);
}

static hisp_status t_vblock(ks_space *sp, int count, ks_vec **v)
{
    if (sp->inner->vblock) return sp->inner->vblock(sp, count, v);
    return hispi_ks_vblock_calls(sp, count, v);
}

/* a space without the basis's calls: the single-vector calls, each timed */
static hisp_status t_mdot(ks_space *sp, ks_vec **Q, int q, ks_vec **R, int nr, int slot)
{
    if (!sp->inner->mdot) return hispi_ks_mdot_calls(sp, Q, q, R, nr, slot);
    T0();
    DONE(KS_MS_REDUCE, sp->inner->mdot(sp, Q, q, R, nr, slot));
}

static hisp_status t_bupdate(ks_space *sp, ks_vec **Q, int q, ks_vec *y0, ks_vec *y1,
                             const double *coef)
{
    if (!sp->inner->bupdate) return hispi_ks_bupdate_calls(sp, Q, q, y0, y1, coef);
    T0();
    DONE(KS_MS_VECTOR, sp->inner->bupdate(sp, Q, q, y0, y1, coef));
}

static void t_destroy(ks_space *sp)
{
    sp->inner->destroy(sp);
}

static const ks_ops timed_ops = {.vnew = t_vnew,
                                 .vfree = t_vfree,
                                 .matvec = t_matvec,
                                 .precond = t_precond,
                                 .fill = t_fill,
                                 .copy = t_copy,
                                 .scale = t_scale,
                                 .axpby = t_axpby,
                                 .axpbypcz = t_axpbypcz,
                                 .dot = t_dot,
                                 .axpby_dot = t_axpby_dot,
                                 .axpby2 = t_axpby2,
                                 .dot2 = t_dot2,
                                 .smul = t_smul,
                                 .sset = t_sset,
                                 .read = t_read,
                                 .destroy = t_destroy,
                                 .matvec_dot = t_matvec_dot,
                                 .axpby_precond = t_axpby_precond,
                                 .axpby_dot2 = t_axpby_dot2,
                                 .vblock = t_vblock,
                                 .vblock_free = t_vblock_free,
                                 .mdot = t_mdot,
                                 .bupdate = t_bupdate};

void hispi_ks_timed(ks_space *sp)
{
    if (sp->o == &timed_ops) return;
    sp->inner = sp->o;
    sp->o = &timed_ops;
}
