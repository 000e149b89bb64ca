/* The solvers' space on one context: vectors are hisp vectors, the products
 * hisp_spmv (or the caller's operator), and the scalars entries of a small
 * device vector (the bank) that the vector kernels read and write, so a
 * method queues its whole iteration without waiting. With an operator whose
 * allreduce sums over MPI ranks, the reductions are read, summed over the
 * ranks and written back when a call first needs them, several in one
 * allreduce where a method issues them back to back (see flush). */
#include "amg/hispi_amg.h"
#include "compound/hispi_compound.h"
#include "ilu/hispi_ilu.h"
#include "ksp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    ks_space base;
    hisp_matrix A;
    const hisp_operator *op;
    hisp_type mt;     /* the matrix's entry type */
    hisp_vector bank; /* the slots */
    void *bank_host;  /* its host copy for read() */
    double one, zero; /* alpha, beta of hisp_spmv (component type) */
    float onef, zerof;
    hisp_variant var; /* compound types: the tuned plan's variant */
    bool has_var;
    /* Jacobi: z = diag^-1 x (div_dot); b3x3: z = Binv x; LSQR: z = x .* cscale */
    hisp_vector diag, cscale;
    bool diag_kept; /* diag is A's (hispi_ks_diagonal) */
    hisp_matrix binv;
    hispi_amg_cycle *amg; /* AMG: z = one V-cycle of x */
    hispi_ilu *ilu;       /* ILU(0), IC(0): z = U^-1 L^-1 x */
    hispi_chebpc *cheb;   /* Chebyshev: z = p(D^-1 A) D^-1 x */
    bool lent;            /* amg, ilu or cheb is a preconditioner object's */
    hisp_vector tmp;      /* LSQR with Jacobi: D x before the product */
    hisp_vector block;    /* the basis's allocation (l_vblock), its columns views of it */
    ks_vec **block_cols;  /* the array l_vblock filled with the views */
    /* MPI ranks: slots still holding this rank's partial sum (see flush) */
    unsigned char *pending;
    int npending;
    double *sums; /* the allreduce's values: 4 per slot at most */
} local_space;

static local_space *L(ks_space *sp)
{
    return (local_space *)sp;
}
static hisp_vector V(ks_vec *v)
{
    return (hisp_vector)v;
}

ks_vec *hispi_ks_wrap_local(hisp_vector v)
{
    return (ks_vec *)v;
}

hisp_vector hispi_ks_local_vector(ks_vec *v)
{
    return V(v);
}

/* A ks_sc as the vector calls take it; buf holds a host value. */
static hisp_scalar sc(local_space *ls, ks_sc s, unsigned char buf[32])
{
    if (s.kind == KS_SLOT) return hisp_scalar_ratio(ls->bank, s.a, NULL, 0, s.neg & 1);
    if (s.kind == KS_RATIO) {
        hisp_scalar h = hisp_scalar_ratio(ls->bank, s.a, ls->bank, s.b, s.neg & 1);
        if (s.neg & KS_SAFE) h.negate |= HISPI_SCALAR_SAFE;
        return h;
    }
    int vc = hisp_type_components(ls->base.t);
    bool dbl = hispi_type_scalar_size(ls->base.t) == 8;
    for (int c = 0; c < vc; c++) {
        double v = (s.neg & 1) ? -s.v[c] : s.v[c];
        if (dbl)
            ((double *)buf)[c] = v;
        else
            ((float *)buf)[c] = (float)v;
    }
    return hisp_scalar_host(buf);
}

/* ---- ranks: reductions summed over the operator's allreduce ------------------- */

static hisp_status bank_to_doubles(local_space *ls, int slot, double *v)
{
    int vc = hisp_type_components(ls->base.t);
    bool dbl = hispi_type_scalar_size(ls->base.t) == 8;
    size_t es = hisp_type_size(ls->base.t);
    const char *e = (const char *)ls->bank_host + (size_t)slot * es;
    for (int c = 0; c < 4; c++)
        v[c] = c < vc ? (dbl ? ((const double *)e)[c] : ((const float *)e)[c]) : 0;
    return HISP_SUCCESS;
}

static void doubles_to_bank(local_space *ls, int slot, const double *v)
{
    int vc = hisp_type_components(ls->base.t);
    bool dbl = hispi_type_scalar_size(ls->base.t) == 8;
    char *e = (char *)ls->bank_host + (size_t)slot * hisp_type_size(ls->base.t);
    for (int c = 0; c < vc; c++) {
        if (dbl)
            ((double *)e)[c] = v[c];
        else
            ((float *)e)[c] = (float)v[c];
    }
}

/* Slots that hold this rank's partial sums are marked pending and summed
 * over the ranks when a call first needs one of them (as a scalar operand or
 * by read()): reductions issued back to back (BiCGSTAB's ||r||^2 and the
 * next r0^H r, CG's ||r||^2 and r^H z with Jacobi) travel in one allreduce
 * of several values, one host round trip. Every rank issues the same calls,
 * so every rank reduces at the same points. */
static bool ranks(const local_space *ls)
{
    return ls->op && ls->op->allreduce;
}

static void mark(local_space *ls, int slot)
{
    if (ranks(ls) && !ls->pending[slot]) {
        ls->pending[slot] = 1;
        ls->npending++;
    }
}

/* A slot the call overwrites: its partial sum is no longer needed. */
static void unmark(local_space *ls, int slot)
{
    if (ls->pending && ls->pending[slot]) {
        ls->pending[slot] = 0;
        ls->npending--;
    }
}

/* Every pending slot summed over the ranks in one allreduce. */
static hisp_status flush(local_space *ls)
{
    if (!ls->npending) return HISP_SUCCESS;
    double t0 = ls->base.inner ? hispi_now_ms() : 0; /* timed: reduce_ms */
    int vc = hisp_type_components(ls->base.t), n = 0;
    hisp_status st = hisp_vector_read(ls->bank, ls->bank_host);
    if (st) return st;
    for (int s = 0; s < ls->base.nslot; s++)
        if (ls->pending[s]) {
            double v[4];
            bank_to_doubles(ls, s, v);
            memcpy(ls->sums + n, v, sizeof(double) * (size_t)vc);
            n += vc;
        }
    st = ls->op->allreduce(ls->op->user, ls->sums, n);
    if (st)
        return hispi_fail(ls->base.ctx, st, "solve: the operator's allreduce failed (%s)",
                          hisp_status_string(st));
    n = 0;
    for (int s = 0; s < ls->base.nslot; s++)
        if (ls->pending[s]) {
            doubles_to_bank(ls, s, ls->sums + n);
            n += vc;
            ls->pending[s] = 0;
        }
    ls->npending = 0;
    st = hisp_vector_write(ls->bank, ls->bank_host);
    if (ls->base.inner) ls->base.ms[KS_MS_REDUCE] += hispi_now_ms() - t0;
    return st;
}

/* The scalar operands of a call: their slots summed first where pending. */
static hisp_status need(local_space *ls, const ks_sc *a, int n)
{
    for (int i = 0; ls->npending && i < n; i++)
        if ((a[i].kind != KS_VAL && ls->pending[a[i].a]) ||
            (a[i].kind == KS_RATIO && ls->pending[a[i].b]))
            return flush(ls);
    return HISP_SUCCESS;
}

/* ---- the ops ---------------------------------------------------------------- */

/* Work vectors come from the context's pool (ctx->kpool) and go back to
 * it: on CUDA an allocation of a vector of 4M doubles took 0.02-18 ms on
 * an H200. The pool holds the vectors of the last solve's lengths, f32 and
 * f64 alike (mixed precision takes both; the others are destroyed when a
 * solve of another length asks), at most HISPI_KPOOL, and is emptied with
 * the backend. A solve writes each work vector before it reads it, so none
 * is cleared. */
static void kpool_drop(hispi_devobj *o)
{
    hispi_kpool *p = (hispi_kpool *)((char *)o - offsetof(hispi_kpool, link));
    while (p->n > 0)
        hisp_vector_destroy(&p->v[--p->n]);
}

hisp_status hispi_kpool_take(hisp_context ctx, hisp_type t, int64_t n, int64_t other,
                             hisp_vector *v)
{
    hispi_kpool *p = &ctx->kpool;
    for (int i = 0; i < p->n; i++)
        if (p->v[i]->type == t && p->v[i]->n == n) {
            *v = p->v[i];
            p->v[i] = p->v[--p->n];
            return HISP_SUCCESS;
        }
    for (int i = 0; i < p->n;) /* another solve's lengths */
        if (p->v[i]->n != n && p->v[i]->n != other) {
            hisp_vector_destroy(&p->v[i]);
            p->v[i] = p->v[--p->n];
        } else {
            i++;
        }
    return hisp_vector_create(ctx, t, n, v);
}

void hispi_kpool_give(hisp_context ctx, hisp_vector v)
{
    hispi_kpool *p = &ctx->kpool;
    if (!v || v->wrapped || p->n == HISPI_KPOOL) {
        hisp_vector_destroy(&v);
        return;
    }
    if (!p->link.next) hispi_devobj_attach(ctx, &p->link, kpool_drop);
    p->v[p->n++] = v;
}

static hisp_status l_vnew(ks_space *sp, int cols, ks_vec **v)
{
    hisp_vector h = NULL;
    HISPI_TRY(hispi_kpool_take(sp->ctx, sp->t, cols ? sp->ncols : sp->nrows,
                               cols ? sp->nrows : sp->ncols, &h));
    *v = (ks_vec *)h;
    return HISP_SUCCESS;
}

static void l_vfree(ks_space *sp, ks_vec *v)
{
    hispi_kpool_give(sp->ctx, V(v));
}

static void l_vblock_free(ks_space *sp, int count, ks_vec **v)
{
    local_space *ls = L(sp);
    if (!ls->block || v != ls->block_cols) { /* vectors of their own */
        hispi_ks_vblock_free_calls(sp, count, v);
        return;
    }
    for (int i = 0; i < count; i++) {
        hisp_vector c = V(v[i]);
        hisp_vector_destroy(&c); /* NULL: nothing */
        v[i] = NULL;
    }
    hispi_kpool_give(sp->ctx, ls->block);
    ls->block = NULL;
    ls->block_cols = NULL;
}

/* A basis in one pooled vector, its columns parts of it (hispi_vector_part:
 * vectors of their own for the products and the preconditioner), where the
 * vector kernels run and the backend can split a buffer (else, and for a
 * second basis, vectors of their own): the Gram-Schmidt products then read
 * every column in one pass. Columns start at multiples of 4096 bytes. */
static hisp_status l_vblock(ks_space *sp, int count, ks_vec **v)
{
    local_space *ls = L(sp);
    hisp_context ctx = sp->ctx;
    int64_t n = sp->nrows, per = 4096 / (int64_t)hisp_type_size(sp->t);
    int64_t stride = (n + per - 1) / per * per;
    for (int i = 0; i < count; i++)
        v[i] = NULL;
    if (ls->block || n == 0 || !hispi_vec_on_device(ctx) || !HISPI_BE_HAS(ctx, buf_sub))
        return hispi_ks_vblock_calls(sp, count, v);
    HISPI_TRY(hispi_kpool_take(ctx, sp->t, stride * count, n, &ls->block));
    ls->block_cols = v;
    hisp_status st = HISP_SUCCESS;
    for (int i = 0; !st && i < count; i++) {
        hisp_vector c = NULL;
        st = hispi_vector_part(ls->block, stride * i, n, &c);
        v[i] = (ks_vec *)c;
    }
    if (st) l_vblock_free(sp, count, v);
    return st;
}

/* ks_vec arrays as hisp_vector arrays (the same pointers, their own type) */
static hisp_status vecs(hisp_context ctx, ks_vec **k, int n, hisp_vector **out)
{
    HISPI_TRY(hispi_calloc(ctx, (size_t)n + 1, sizeof **out, (void **)out));
    for (int i = 0; i < n; i++)
        (*out)[i] = V(k[i]);
    return HISP_SUCCESS;
}

static hisp_status l_mdot(ks_space *sp, ks_vec **Q, int q, ks_vec **R, int nr, int slot)
{
    local_space *ls = L(sp);
    hisp_vector *hq = NULL, hr[2] = {V(R[0]), nr > 1 ? V(R[1]) : NULL};
    HISPI_TRY(vecs(sp->ctx, Q, q, &hq));
    hisp_status st = hispi_vector_mdot(q, hq, nr, hr, ls->bank, slot);
    free(hq);
    for (int i = 0; !st && i < q * nr; i++)
        mark(ls, slot + i);
    return st;
}

static hisp_status l_bupdate(ks_space *sp, ks_vec **Q, int q, ks_vec *y0, ks_vec *y1,
                             const double *coef)
{
    hisp_vector *hq = NULL;
    HISPI_TRY(vecs(sp->ctx, Q, q, &hq));
    hisp_status st = hispi_vector_bupdate(q, hq, V(y0), y1 ? V(y1) : NULL, coef);
    free(hq);
    return st;
}

/* y = op(M) x, M = A (its tuned variant where there is one) or binv */
static hisp_status spmv(local_space *ls, hisp_op op, hisp_matrix M, hisp_vector x, hisp_vector y)
{
    bool dbl = hispi_type_scalar_size(ls->mt) == 8;
    const void *a = dbl ? (const void *)&ls->one : (const void *)&ls->onef;
    const void *b = dbl ? (const void *)&ls->zero : (const void *)&ls->zerof;
    if (ls->has_var && op == HISP_OP_N && M == ls->A)
        return hisp_spmv_variant(ls->base.ctx, &ls->var, a, M, x, b, y);
    return hisp_spmv(ls->base.ctx, op, a, M, x, b, y);
}

static hisp_status l_matvec(ks_space *sp, hisp_op op, ks_vec *x, ks_vec *y)
{
    local_space *ls = L(sp);
    if (ls->op) {
        hisp_status st = ls->op->apply(ls->op->user, op, V(x), V(y));
        if (st && st != HISP_ERR_OUT_OF_DEVICE_MEMORY && st != HISP_ERR_OUT_OF_HOST_MEMORY)
            return hispi_fail(sp->ctx, st, "solve: the operator's apply failed (%s)",
                              hisp_status_string(st));
        return st;
    }
    return spmv(ls, op, ls->A, V(x), V(y));
}

static hisp_status l_dot(ks_space *sp, ks_vec *x, ks_vec *y, int slot)
{
    local_space *ls = L(sp);
    HISPI_TRY(hisp_vector_dot(V(x), V(y), hisp_result_entry(ls->bank, slot)));
    mark(ls, slot);
    return HISP_SUCCESS;
}

/* An operator: its apply_dot where it has one; else the product and the
 * dot as two calls (on the H200 CUDA's fused SpMV + dot kernel measured
 * slower than the two: CG 0.2307 against 0.2290 ms per iteration at
 * poisson3d 160^3). */
static hisp_status l_matvec_dot(ks_space *sp, ks_vec *x, ks_vec *y, int slot)
{
    local_space *ls = L(sp);
    if (ls->op && ls->op->apply_dot) {
        hisp_status st =
            ls->op->apply_dot(ls->op->user, V(x), V(y), hisp_result_entry(ls->bank, slot));
        if (st && st != HISP_ERR_OUT_OF_DEVICE_MEMORY && st != HISP_ERR_OUT_OF_HOST_MEMORY)
            return hispi_fail(sp->ctx, st, "solve: the operator's apply_dot failed (%s)",
                              hisp_status_string(st));
        if (!st) mark(ls, slot);
        return st;
    }
    HISPI_TRY(l_matvec(sp, HISP_OP_N, x, y));
    return l_dot(sp, x, y, slot);
}

static hisp_status l_precond(ks_space *sp, ks_vec *x, ks_vec *z, int slot)
{
    local_space *ls = L(sp);
    if (ls->cscale) { /* LSQR: the column scaling */
        HISPI_TRY(hisp_vector_mul(V(x), ls->cscale, V(z)));
    } else if (ls->diag) {
        if (slot >= 0) {
            HISPI_TRY(hisp_vector_div_dot(V(x), ls->diag, V(z), hisp_result_entry(ls->bank, slot)));
            mark(ls, slot);
            return HISP_SUCCESS;
        }
        HISPI_TRY(hisp_vector_div(V(x), ls->diag, V(z)));
    } else if (ls->binv) {
        HISPI_TRY(spmv(ls, HISP_OP_N, ls->binv, V(x), V(z)));
    } else if (ls->amg) {
        HISPI_TRY(hispi_amg_cycle_apply(ls->amg, V(x), V(z)));
    } else if (ls->ilu) {
        HISPI_TRY(hispi_ilu_apply(ls->ilu, V(x), V(z)));
    } else if (ls->cheb) {
        HISPI_TRY(hispi_chebpc_apply(ls->cheb, V(x), V(z)));
    } else if (x != z) {
        HISPI_TRY(hisp_vector_copy(V(x), V(z)));
    }
    return slot >= 0 ? l_dot(sp, x, z, slot) : HISP_SUCCESS;
}

static hisp_status l_fill(ks_space *sp, ks_sc a, ks_vec *y)
{
    unsigned char b0[32];
    HISPI_TRY(need(L(sp), &a, 1));
    return hisp_vector_fill(V(y), sc(L(sp), a, b0));
}

static hisp_status l_copy(ks_space *sp, ks_vec *x, ks_vec *y)
{
    (void)sp;
    return x == y ? HISP_SUCCESS : hisp_vector_copy(V(x), V(y));
}

static hisp_status l_scale(ks_space *sp, ks_vec *y, ks_sc a)
{
    unsigned char b0[32];
    HISPI_TRY(need(L(sp), &a, 1));
    return hisp_vector_scale(V(y), sc(L(sp), a, b0));
}

static hisp_status l_axpby(ks_space *sp, ks_sc a, ks_vec *x, ks_sc b, ks_vec *y)
{
    unsigned char b0[32], b1[32];
    const ks_sc in[] = {a, b};
    HISPI_TRY(need(L(sp), in, 2));
    return hisp_vector_axpby(sc(L(sp), a, b0), V(x), sc(L(sp), b, b1), V(y));
}

static hisp_status l_axpbypcz(ks_space *sp, ks_sc a, ks_vec *x, ks_sc b, ks_vec *y, ks_sc c,
                              ks_vec *z)
{
    unsigned char b0[32], b1[32], b2[32];
    local_space *ls = L(sp);
    const ks_sc in[] = {a, b, c};
    HISPI_TRY(need(ls, in, 3));
    return hisp_vector_axpbypcz(sc(ls, a, b0), V(x), sc(ls, b, b1), V(y), sc(ls, c, b2), V(z));
}

static hisp_status l_axpby_dot(ks_space *sp, ks_sc a, ks_vec *x, ks_sc b, ks_vec *y, ks_vec *w,
                               int slot)
{
    unsigned char b0[32], b1[32];
    local_space *ls = L(sp);
    const ks_sc in[] = {a, b};
    HISPI_TRY(need(ls, in, 2));
    HISPI_TRY(hisp_vector_axpby_dot(sc(ls, a, b0), V(x), sc(ls, b, b1), V(y), w ? V(w) : NULL,
                                    hisp_result_entry(ls->bank, slot)));
    mark(ls, slot);
    return HISP_SUCCESS;
}

/* Jacobi: the update and z = D^-1 y with both dots in one kernel */
static hisp_status l_axpby_precond(ks_space *sp, ks_sc a, ks_vec *x, ks_sc b, ks_vec *y, int s0,
                                   ks_vec *z, int s1)
{
    local_space *ls = L(sp);
    if (!ls->diag || ls->cscale || x == z || y == z) {
        HISPI_TRY(l_axpby_dot(sp, a, x, b, y, NULL, s0));
        return l_precond(sp, y, z, s1);
    }
    unsigned char b0[32], b1[32];
    const ks_sc in[] = {a, b};
    HISPI_TRY(need(ls, in, 2));
    HISPI_TRY(hispi_vector_axpby_div_dot2(sc(ls, a, b0), V(x), sc(ls, b, b1), V(y), ls->diag, V(z),
                                          hisp_result_entry(ls->bank, s0),
                                          hisp_result_entry(ls->bank, s1)));
    mark(ls, s0);
    mark(ls, s1);
    return HISP_SUCCESS;
}

static hisp_status l_axpby_dot2(ks_space *sp, const ks_acc *acc, ks_sc a, ks_vec *x, ks_sc b,
                                ks_vec *y, ks_vec *w, int s0, int s1)
{
    local_space *ls = L(sp);
    unsigned char b0[32], b1[32], b2[32], b3[32];
    const ks_sc in[] = {a, b, acc->p, acc->q};
    HISPI_TRY(need(ls, in, 4));
    HISPI_TRY(hispi_vector_axpby_dot2_acc(sc(ls, acc->p, b2), V(acc->P), sc(ls, acc->q, b3),
                                          V(acc->S), V(acc->X), sc(ls, a, b0), V(x), sc(ls, b, b1),
                                          V(y), V(w), hisp_result_entry(ls->bank, s0),
                                          hisp_result_entry(ls->bank, s1)));
    mark(ls, s0);
    mark(ls, s1);
    return HISP_SUCCESS;
}

static hisp_status l_axpby2(ks_space *sp, ks_sc a, ks_vec *x1, ks_sc b, ks_vec *y1, ks_sc c,
                            ks_vec *x2, ks_sc d, ks_vec *y2)
{
    unsigned char b0[32], b1[32], b2[32], b3[32];
    local_space *ls = L(sp);
    const ks_sc in[] = {a, b, c, d};
    HISPI_TRY(need(ls, in, 4));
    return hispi_vector_axpby2(sc(ls, a, b0), V(x1), sc(ls, b, b1), V(y1), sc(ls, c, b2), V(x2),
                               sc(ls, d, b3), V(y2));
}

static hisp_status l_dot2(ks_space *sp, ks_vec *x, ks_vec *y, ks_vec *w, int s0, int s1)
{
    local_space *ls = L(sp);
    HISPI_TRY(hisp_vector_dot2(V(x), V(y), V(w), hisp_result_entry(ls->bank, s0),
                               hisp_result_entry(ls->bank, s1)));
    mark(ls, s0);
    mark(ls, s1);
    return HISP_SUCCESS;
}

static hisp_status l_smul(ks_space *sp, ks_sc a, ks_sc b, int slot)
{
    unsigned char b0[32], b1[32];
    local_space *ls = L(sp);
    const ks_sc in[] = {a, b};
    HISPI_TRY(need(ls, in, 2));
    unmark(ls, slot);
    return hispi_vector_smul(sc(ls, a, b0), sc(ls, b, b1), hisp_result_entry(ls->bank, slot));
}

static hisp_status l_sset(ks_space *sp, int slot, const double v[4])
{
    unsigned char b0[32], b1[32];
    local_space *ls = L(sp);
    unmark(ls, slot);
    return hispi_vector_smul(sc(ls, ks_valv(v), b0), sc(ls, ks_val(1), b1),
                             hisp_result_entry(ls->bank, slot));
}

static hisp_status l_read(ks_space *sp, int first, int n, double *out)
{
    local_space *ls = L(sp);
    if (n <= 0) return hisp_context_synchronize(sp->ctx);
    if (ls->npending) /* bank_host holds the sums then */
        HISPI_TRY(flush(ls));
    else
        HISPI_TRY(hisp_vector_read(ls->bank, ls->bank_host));
    for (int i = 0; i < n; i++)
        bank_to_doubles(ls, first + i, out + 4 * (size_t)i);
    return HISP_SUCCESS;
}

static void l_destroy(ks_space *sp)
{
    local_space *ls = L(sp);
    hisp_vector_destroy(&ls->bank);
    hisp_vector_destroy(&ls->block);
    if (!ls->diag_kept) hisp_vector_destroy(&ls->diag);
    hisp_vector_destroy(&ls->cscale);
    hisp_vector_destroy(&ls->tmp);
    hisp_matrix_destroy(&ls->binv);
    if (!ls->lent) {
        hispi_amg_cycle_destroy(&ls->amg), hispi_ilu_destroy(&ls->ilu);
        hispi_chebpc_destroy(&ls->cheb);
    }
    free(ls->bank_host);
    free(ls->pending);
    free(ls->sums);
    hisp_context ctx = sp->ctx;
    free(ls);
    hispi_ctx_release(ctx); /* the solve's claim (hispi_ks_local) */
}

static const ks_ops local_ops = {.vnew = l_vnew,
                                 .vfree = l_vfree,
                                 .matvec = l_matvec,
                                 .precond = l_precond,
                                 .fill = l_fill,
                                 .copy = l_copy,
                                 .scale = l_scale,
                                 .axpby = l_axpby,
                                 .axpbypcz = l_axpbypcz,
                                 .dot = l_dot,
                                 .axpby_dot = l_axpby_dot,
                                 .axpby2 = l_axpby2,
                                 .dot2 = l_dot2,
                                 .smul = l_smul,
                                 .sset = l_sset,
                                 .read = l_read,
                                 .destroy = l_destroy,
                                 .matvec_dot = l_matvec_dot,
                                 .axpby_precond = l_axpby_precond,
                                 .axpby_dot2 = l_axpby_dot2,
                                 .vblock = l_vblock,
                                 .vblock_free = l_vblock_free,
                                 .mdot = l_mdot,
                                 .bupdate = l_bupdate};

static hisp_status local(hisp_context ctx, hisp_matrix A, const hisp_operator *op, hisp_precond pc,
                         hisp_solver_method method, int nslot, const hispi_ks_lent *lent,
                         ks_space **out);

hisp_status hispi_ks_local(hisp_context ctx, hisp_matrix A, const hisp_operator *op,
                           hisp_precond pc, hisp_solver_method method, int nslot, ks_space **out)
{
    return local(ctx, A, op, pc, method, nslot, NULL, out);
}

hisp_status hispi_ks_local_lent(hisp_context ctx, hisp_matrix A, hisp_precond pc,
                                hisp_solver_method method, int nslot, const hispi_ks_lent *lent,
                                ks_space **out)
{
    return local(ctx, A, NULL, pc, method, nslot, lent, out);
}

/* The preconditioner of a matrix's solve (not Jacobi's). */
static hisp_status setup_pc(local_space *ls, hisp_precond pc, hisp_solver_method method,
                            const hispi_ks_lent *lent)
{
    ks_space *sp = &ls->base;
    hisp_context ctx = sp->ctx;
    hisp_matrix A = ls->A;
    bool real = ls->mt == HISP_F32 || ls->mt == HISP_F64,
         cx = ls->mt == HISP_C32 || ls->mt == HISP_C64;
    bool lsqr = method == HISP_SOLVER_LSQR;
    if (pc == HISP_PRECOND_L1_JACOBI) {
        if (lsqr || !A || (!real && !cx))
            return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                              "l1-Jacobi: a matrix of real or complex entries and cg, bicgstab "
                              "or gmres");
        bool used;
        return hispi_ks_diagonal(ctx, A, true, &ls->diag, &used, &ls->diag_kept);
    }
    if (pc == HISP_PRECOND_ILU0 || pc == HISP_PRECOND_IC0) {
        if (lsqr || !A || (!real && !cx))
            return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                              "%s: a square matrix of f32, f64, c32 or c64 entries and cg, "
                              "bicgstab or gmres (use --precond jacobi)",
                              pc == HISP_PRECOND_IC0 ? "IC(0)" : "ILU(0)");
        if (lent && lent->ilu)
            ls->ilu = lent->ilu, ls->lent = true;
        else
            HISPI_TRY(hispi_ilu_create(A, pc == HISP_PRECOND_IC0, &ls->ilu));
        const hispi_ilu_info *f = hispi_ilu_report(ls->ilu);
        sp->pc_shifted = f->shifted, sp->pc_filled = f->filled, sp->pc_diag_shift = f->diag_shift;
        sp->pc_sweeps[0] = f->factor_sweeps, sp->pc_sweeps[1] = f->solve_sweeps;
        sp->pc_type = f->t;
        return HISP_SUCCESS;
    }
    if (pc == HISP_PRECOND_CHEBYSHEV) {
        if (lsqr || !A || !real)
            return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                              "Chebyshev: a square matrix of f32 or f64 entries and cg, bicgstab "
                              "or gmres");
        if (lent && lent->cheb)
            ls->cheb = lent->cheb, ls->lent = true;
        else
            HISPI_TRY(hispi_chebpc_create(A, ctx->opt.chebyshev_degree, &ls->cheb));
        sp->pc_type = ls->mt;
        return HISP_SUCCESS;
    }
    /* AMG */
    real = real || ls->mt == HISP_B3X3_F32 || ls->mt == HISP_B3X3_F64;
    if (lsqr || !A || !real)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                          "AMG: a square matrix of f32, f64 or 3x3-block entries and cg, "
                          "bicgstab or gmres (use --precond jacobi)");
    hispi_amg_opts o;
    hispi_amg_options(ctx, &o);
    /* GMRES's right preconditioning takes M^-1 as linear: the rounding
     * of f32 levels cost it iterations (poisson3d 256^3 on the H200: 21
     * against 14, and more time), so auto gives it the system's type */
    if (method == HISP_SOLVER_GMRES && o.precision == HISPI_AMG_AUTO) o.precision = HISPI_AMG_FULL;
    if (lent && lent->amg)
        ls->amg = lent->amg, ls->lent = true;
    else
        HISPI_TRY(hispi_amg_cycle_create(A, &o, &ls->amg));
    const hispi_amg *h = hispi_amg_cycle_hierarchy(ls->amg);
    sp->pc_levels = h->nlevels, sp->pc_rows = h->rows, sp->pc_nnz = h->nnz;
    sp->pc_type = hispi_amg_cycle_type(ls->amg);
    return HISP_SUCCESS;
}

static hisp_status local(hisp_context ctx, hisp_matrix A, const hisp_operator *op, hisp_precond pc,
                         hisp_solver_method method, int nslot, const hispi_ks_lent *lent,
                         ks_space **out)
{
    bool lsqr = method == HISP_SOLVER_LSQR;
    *out = NULL;
    /* the context is the solve's until the space goes (hispi_ctx_claim) */
    HISPI_TRY(hispi_ctx_claim(ctx));
    local_space *ls = NULL;
    hisp_status cs = hispi_calloc(ctx, 1, sizeof *ls, (void **)&ls);
    if (cs) {
        hispi_ctx_release(ctx);
        return cs;
    }
    ks_space *sp = &ls->base;
    sp->o = &local_ops;
    sp->ctx = ctx;
    sp->nslot = nslot;
    ls->A = A;
    ls->op = op;
    ls->one = 1;
    ls->onef = 1;
    hisp_status st = HISP_SUCCESS;
    if (A) {
        hisp_matrix_info mi;
        int per = 1;
        st = hisp_matrix_get_info(A, &mi);
        if (!st) st = hisp_compound_vector_type(mi.type, &sp->t, &per);
        ls->mt = mi.type;
        sp->nrows = mi.nrows * per;
        sp->ncols = mi.ncols * per;
        hisp_format_choice fc; /* a format chosen for A (hisp spmv --format auto) */
        bool chosen = !st && hispi_sparse_family(mi.format) &&
                      hispi_format_choice_cached(ctx, A, HISP_OP_N, &fc);
        if (chosen && fc.best.kind == HISP_CHOICE_VARIANT) {
            ls->var = fc.best.variant;
            ls->has_var = true;
        }
        if (!st && !chosen && mi.type != HISP_F32 && mi.type != HISP_F64 &&
            hispi_sparse_family(mi.format) && ctx->kind != HISP_BACKEND_REFERENCE) {
            hisp_tune_plan plan;
            int found = 0;
            if (hisp_tune_plan_lookup(ctx, A, &plan, &found) == HISP_SUCCESS && found) {
                ls->var = plan.best;
                ls->has_var = true;
            }
        }
    } else {
        sp->t = op->type;
        ls->mt = op->type;
        sp->nrows = op->nrows;
        sp->ncols = op->ncols;
    }
    if (!st) st = hisp_vector_create(ctx, sp->t, nslot, &ls->bank);
    if (!st) st = hispi_calloc(ctx, (size_t)nslot, hisp_type_size(sp->t), &ls->bank_host);
    if (!st) st = hisp_vector_write(ls->bank, ls->bank_host);
    if (!st && ranks(ls)) st = hispi_calloc(ctx, (size_t)nslot, 1, (void **)&ls->pending);
    if (!st && ranks(ls))
        st = hispi_calloc(ctx, 4 * (size_t)nslot, sizeof(double), (void **)&ls->sums);
    sp->pc_kind = pc;
    if (!st && pc == HISP_PRECOND_JACOBI) {
        bool l1 = false;
        if (lsqr)
            st = hispi_ks_column_scale(ctx, A, &ls->cscale);
        else if (A && (ls->mt == HISP_B3X3_F32 || ls->mt == HISP_B3X3_F64))
            st = hispi_ks_block_jacobi(ctx, A, &ls->binv);
        else if (A)
            st = hispi_ks_diagonal(ctx, A, false, &ls->diag, &l1, &ls->diag_kept);
        else
            st = hispi_ks_operator_diagonal(ctx, op, &ls->diag);
        if (l1) sp->pc_kind = HISP_PRECOND_L1_JACOBI;
    } else if (!st && pc != HISP_PRECOND_NONE) {
        st = setup_pc(ls, pc, method, lent);
    }
    if (st) {
        l_destroy(sp);
        return st;
    }
    sp->has_pc = ls->diag || ls->binv || ls->cscale || ls->amg || ls->ilu || ls->cheb;
    if (ctx->kind == HISP_BACKEND_REFERENCE) hispi_ks_timed(sp); /* host loops: calls finish */
    if (ctx->kind != HISP_BACKEND_REFERENCE && ctx->opt.debug) {
        hispi_ks_timed(sp);
        sp->timed_sync = true;
    }
    *out = sp;
    return HISP_SUCCESS;
}
