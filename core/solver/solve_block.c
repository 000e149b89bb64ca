/* Several right-hand sides in lock step (hisp_solver_solve_columns with
 * CG): the k columns iterate together, one SpMM A [p_1 .. p_m] per
 * iteration serving every column still running, each column with its own
 * scalars (slots of one bank: slot s of column c is s*k + c) and its own
 * stop. The per-column updates are the one-context space's calls
 * (space_local.c: the fused Jacobi update, every preconditioner) on views of
 * the blocks. The directions sit in a block in the order of the running
 * columns, so a finished column leaves the product: the last running one's
 * direction moves into its place.
 *
 * What the recurrence decides is checked: at the end one SpMM computes every
 * finished column's true residual; a column whose truth misses the tolerance
 * goes on alone from its x through hisp_solver_solve (which restarts from
 * the true residual as a single solve does), and a column that broke down
 * (p^H A p <= 0 or NaN) or starts converged or with b = 0 is solved alone
 * from its x0, so its report is a single solve's. */
#include "ksp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* a column's state */
enum { RUN = 0, DONE, ALONE, ALONE_FROM_X };
/* per-column slots: rho (two, alternating with a preconditioner), ||b||^2,
 * ||r0||^2 (the true residual's at the end), then the ring of ||r||^2 and
 * the ring of p^H A p */
enum { S_RHO_A = 0, S_RHO_B, S_BB, S_RR0, S_RING };

typedef struct {
    hisp_solver s;
    hisp_context ctx;
    hisp_matrix A;
    ks_space *sp;
    hisp_type t;
    int64_t n, k, m;   /* rows, columns, columns running */
    int ring;          /* the check ring: K + 1 iterations */
    hisp_vector Pb, Qb, X0;
    hisp_vector *P, *Q;    /* views of Pb, Qb by position */
    hisp_vector *X0c;      /* views of X0 by column */
    hisp_vector Pm, Qm;    /* Pb, Qb's first m columns */
    hispi_columns cb, cx;  /* B's and X's columns (views) */
    ks_vec **R, **Z;       /* by column (Z = R without a preconditioner) */
    int64_t *col;          /* position -> column */
    unsigned char *state;  /* by column */
    int64_t *its;          /* iterations that made the column's x */
    double *tol, *bnorm, *rn; /* the tolerance, ||b||, the recurrence's last ||r|| */
    double *v;             /* read buffer: the ring of every column */
    unsigned char one[32], zero[32];
} blk;

static int slot(const blk *b, int s, int64_t c)
{
    return s * (int)b->k + (int)c;
}
static int rr_slot(const blk *b, int64_t it, int64_t c)
{
    return slot(b, S_RING + (int)((it - 1) % b->ring), c);
}
static int pq_slot(const blk *b, int64_t it, int64_t c)
{
    return slot(b, S_RING + b->ring + (int)((it - 1) % b->ring), c);
}
static ks_vec *W(hisp_vector v)
{
    return hispi_ks_wrap_local(v);
}

static hisp_status views(blk *b, hisp_vector whole, int64_t count, int64_t len, hisp_vector **out)
{
    void *buf = NULL;
    HISPI_TRY(hispi_vector_device(whole, false, &buf));
    HISPI_TRY(hispi_calloc(b->ctx, (size_t)count, sizeof **out, (void **)out));
    for (int64_t j = 0; j < count; j++)
        HISPI_TRY(hispi_vector_view(b->ctx, b->t, len, buf, j * len, &(*out)[j]));
    return HISP_SUCCESS;
}

static void free_views(int64_t count, hisp_vector **v)
{
    for (int64_t j = 0; *v && j < count; j++)
        hisp_vector_destroy(&(*v)[j]);
    free(*v);
    *v = NULL;
}

/* Q[0 .. m) = A P[0 .. m) (from X instead of P: X's k columns) */
static hisp_status product(blk *b, hisp_vector X)
{
    if (!X && b->Pm && b->Pm->cols != b->m) {
        hisp_vector_destroy(&b->Pm);
        hisp_vector_destroy(&b->Qm);
    }
    if (!X && !b->Pm) {
        void *pb = NULL, *qb = NULL;
        HISPI_TRY(hispi_vector_device(b->Pb, false, &pb));
        HISPI_TRY(hispi_vector_device(b->Qb, false, &qb));
        HISPI_TRY(hispi_vector_view(b->ctx, b->t, b->n * b->m, pb, 0, &b->Pm));
        HISPI_TRY(hispi_vector_view(b->ctx, b->t, b->n * b->m, qb, 0, &b->Qm));
        b->Pm->cols = b->Qm->cols = b->m;
        b->Pm->order = b->Qm->order = HISP_ORDER_COL;
    }
    if (X) {
        b->Qb->cols = b->k;
        b->Qb->order = HISP_ORDER_COL;
    }
    hisp_status st =
        hisp_spmm(b->ctx, HISP_OP_N, b->one, b->A, X ? X : b->Pm, b->zero, X ? b->Qb : b->Qm);
    b->Qb->cols = 0;
    return st;
}

static hisp_status open_blk(blk *b)
{
    hisp_context ctx = b->ctx;
    int64_t k = b->k, n = b->n;
    ks_space *sp = b->sp;
    HISPI_TRY(hisp_vector_create(ctx, b->t, n * k, &b->Pb));
    HISPI_TRY(hisp_vector_create(ctx, b->t, n * k, &b->Qb));
    HISPI_TRY(hisp_vector_create(ctx, b->t, n * k, &b->X0));
    HISPI_TRY(views(b, b->Pb, k, n, &b->P));
    HISPI_TRY(views(b, b->Qb, k, n, &b->Q));
    HISPI_TRY(views(b, b->X0, k, n, &b->X0c));
    HISPI_TRY(hispi_calloc(ctx, (size_t)k, sizeof *b->R, (void **)&b->R));
    HISPI_TRY(hispi_calloc(ctx, (size_t)k, sizeof *b->Z, (void **)&b->Z));
    HISPI_TRY(hispi_calloc(ctx, (size_t)k, sizeof *b->col, (void **)&b->col));
    HISPI_TRY(hispi_calloc(ctx, (size_t)k, sizeof *b->state, (void **)&b->state));
    HISPI_TRY(hispi_calloc(ctx, (size_t)k, sizeof *b->its, (void **)&b->its));
    HISPI_TRY(hispi_calloc(ctx, 3 * (size_t)k, sizeof *b->tol, (void **)&b->tol));
    b->bnorm = b->tol + k;
    b->rn = b->tol + 2 * k;
    HISPI_TRY(hispi_calloc(ctx, 8 * (size_t)k * (size_t)b->ring, sizeof *b->v, (void **)&b->v));
    for (int64_t c = 0; c < k; c++) {
        HISPI_TRY(sp->o->vnew(sp, 0, &b->R[c]));
        if (sp->has_pc)
            HISPI_TRY(sp->o->vnew(sp, 0, &b->Z[c]));
        else
            b->Z[c] = b->R[c];
    }
    return HISP_SUCCESS;
}

static void close_blk(blk *b)
{
    ks_space *sp = b->sp;
    for (int64_t c = 0; b->R && c < b->k; c++) {
        if (b->Z && b->Z[c] && b->Z[c] != b->R[c]) sp->o->vfree(sp, b->Z[c]);
        if (b->R[c]) sp->o->vfree(sp, b->R[c]);
    }
    free(b->R);
    free(b->Z);
    free_views(b->k, &b->P);
    free_views(b->k, &b->Q);
    free_views(b->k, &b->X0c);
    hisp_vector_destroy(&b->Pm);
    hisp_vector_destroy(&b->Qm);
    hisp_vector_destroy(&b->Pb);
    hisp_vector_destroy(&b->Qb);
    hisp_vector_destroy(&b->X0);
    free(b->col);
    free(b->state);
    free(b->its);
    free(b->tol);
    free(b->v);
}

/* r = b - A x, z = M^-1 r, p = z for every column; ||b||, ||r0|| read: the
 * columns that start converged, with b = 0 or NaN go alone. */
static hisp_status init(blk *b, int *rho)
{
    ks_space *sp = b->sp;
    const ks_ops *o = sp->o;
    HISPI_TRY(product(b, b->cx.v));
    *rho = sp->has_pc ? S_RHO_A : S_RR0;
    for (int64_t c = 0; c < b->k; c++) {
        ks_vec *bc = W(b->cb.views[c]), *q = W(b->Q[c]);
        HISPI_TRY(o->dot(sp, bc, bc, slot(b, S_BB, c)));
        HISPI_TRY(o->axpby_dot(sp, ks_val(1), bc, ks_val(-1), q, NULL, slot(b, S_RR0, c)));
        HISPI_TRY(o->copy(sp, q, b->R[c]));
        if (sp->has_pc) HISPI_TRY(o->precond(sp, b->R[c], b->Z[c], slot(b, S_RHO_A, c)));
    }
    HISPI_TRY(o->read(sp, slot(b, S_BB, 0), 2 * (int)b->k, b->v));
    b->m = 0;
    for (int64_t c = 0; c < b->k; c++) {
        double bb = b->v[4 * c], rr = b->v[4 * (b->k + c)];
        b->bnorm[c] = sqrt(fmax(bb, 0));
        b->rn[c] = sqrt(fmax(rr, 0));
        b->tol[c] = fmax(b->s->rtol * b->bnorm[c], b->s->atol);
        if (!isfinite(bb) || !isfinite(rr) || bb == 0 || b->rn[c] <= b->tol[c] ||
            b->s->maxit <= 0) {
            b->state[c] = ALONE;
            continue;
        }
        HISPI_TRY(o->copy(sp, b->Z[c], W(b->P[b->m])));
        b->col[b->m++] = c;
    }
    return HISP_SUCCESS;
}

/* one CG iteration of every running column (cg.c's, the product shared) */
static hisp_status step(blk *b, int64_t it, int *rho)
{
    ks_space *sp = b->sp;
    const ks_ops *o = sp->o;
    HISPI_TRY(product(b, NULL));
    int rho2 = sp->has_pc ? (*rho == S_RHO_A ? S_RHO_B : S_RHO_A) : -1;
    for (int64_t p = 0; p < b->m; p++) {
        int64_t c = b->col[p];
        ks_vec *P = W(b->P[p]), *Q = W(b->Q[p]), *x = W(b->cx.views[c]);
        int pq = pq_slot(b, it, c), rr = rr_slot(b, it, c), r0 = slot(b, *rho, c);
        int r1 = sp->has_pc ? slot(b, rho2, c) : rr;
        HISPI_TRY(o->dot(sp, P, Q, pq));
        if (sp->has_pc)
            HISPI_TRY(ks_axpby_precond(sp, ks_safe(r0, pq, 1), Q, ks_val(1), b->R[c], rr, b->Z[c],
                                       r1));
        else
            HISPI_TRY(o->axpby_dot(sp, ks_safe(r0, pq, 1), Q, ks_val(1), b->R[c], NULL, rr));
        HISPI_TRY(o->axpby2(sp, ks_safe(r0, pq, 0), P, ks_val(1), x, ks_val(1), b->Z[c],
                            ks_safe(r1, r0, 0), P));
    }
    /* without a preconditioner rho is this iteration's ||r||^2: its ring
     * slot, named by the ring index (S_RING + ...) */
    *rho = sp->has_pc ? rho2 : S_RING + (int)((it - 1) % b->ring);
    return HISP_SUCCESS;
}

/* The column at position p leaves the product: the last running column's
 * direction takes its place. */
static hisp_status drop(blk *b, int64_t p)
{
    int64_t last = b->m - 1;
    if (p != last) {
        HISPI_TRY(hisp_vector_copy(b->P[last], b->P[p]));
        b->col[p] = b->col[last];
    }
    b->m = last;
    return HISP_SUCCESS;
}

/* After iteration it: read the ring since the last check and decide each
 * running column; *next: iterations to the next check. */
static hisp_status check(blk *b, int64_t it, int64_t since, int *next)
{
    ks_space *sp = b->sp;
    int K = b->s->check, nr = 2 * b->ring;
    HISPI_TRY(sp->o->read(sp, slot(b, S_RING, 0), nr * (int)b->k, b->v));
    int want = K;
    bool far = true;
    for (int64_t p = b->m - 1; p >= 0; p--) {
        int64_t c = b->col[p];
        double before = b->rn[c], last = before;
        bool bad = false, conv = false;
        for (int64_t i = since + 1; i <= it && !bad; i++) {
            int j = (int)((i - 1) % b->ring);
            double rr = b->v[4 * ((size_t)j * b->k + c)];
            double pq = b->v[4 * ((size_t)(b->ring + j) * b->k + c)];
            if (isnan(pq) || pq < 0 || (pq == 0 && last > 0) || !isfinite(rr)) bad = true;
            last = sqrt(fmax(rr, 0));
            if (last <= b->tol[c]) conv = true;
        }
        b->its[c] = it;
        if (bad) { /* a single solve's report: alone from x0 */
            HISPI_TRY(hisp_vector_copy(b->X0c[c], b->cx.views[c]));
            b->its[c] = 0;
            b->state[c] = ALONE;
            HISPI_TRY(drop(b, p));
            continue;
        }
        b->rn[c] = last;
        if (last <= b->tol[c] || it >= b->s->maxit) {
            b->state[c] = DONE;
            HISPI_TRY(drop(b, p));
            continue;
        }
        if (conv) far = false; /* not monotone near the tolerance: every iteration */
        int64_t steps = it - since;
        int k2 = *next * 2 > K ? K : *next * 2;
        if (before > 0 && last < before) {
            double need = log(b->tol[c] / last) / (log(last / before) / (double)steps);
            if (need < k2) k2 = need < 1 ? 1 : (int)need;
        }
        if (k2 < want) want = k2;
    }
    *next = far ? (want < 1 ? 1 : want) : 1;
    return HISP_SUCCESS;
}

/* The finished columns' true residuals ||b - A x|| (one SpMM of every
 * column): those that miss the tolerance go on alone from their x. */
static hisp_status truth(blk *b, hisp_solve_info *info)
{
    ks_space *sp = b->sp;
    const ks_ops *o = sp->o;
    HISPI_TRY(product(b, b->cx.v));
    for (int64_t c = 0; c < b->k; c++)
        if (b->state[c] == DONE)
            HISPI_TRY(o->axpby_dot(sp, ks_val(1), W(b->cb.views[c]), ks_val(-1), W(b->Q[c]), NULL,
                                   slot(b, S_RR0, c)));
    HISPI_TRY(o->read(sp, slot(b, S_RR0, 0), (int)b->k, b->v));
    for (int64_t c = 0; c < b->k; c++) {
        if (b->state[c] != DONE) continue;
        double tn = sqrt(fmax(b->v[4 * c], 0));
        hisp_solve_info *in = &info[c];
        memset(in, 0, sizeof *in);
        bool conv = b->rn[c] <= b->tol[c];
        if (conv && !(tn <= b->tol[c])) {
            b->state[c] = ALONE_FROM_X;
            continue;
        }
        in->reason = conv ? HISP_STOP_CONVERGED : HISP_STOP_MAX_ITERATIONS;
        in->converged = conv;
        in->iterations = b->its[c];
        in->residual_norm = tn;
        in->rhs_norm = b->bnorm[c];
        in->relative_residual = tn / b->bnorm[c];
        in->method_residual_norm = b->rn[c];
        hispi_ks_precond_info(sp, in);
        in->iteration_type = sp->t;
    }
    return HISP_SUCCESS;
}

/* The columns that go alone: hisp_solver_solve of each (from x0, or from
 * the lock step's x with the iterations left). */
static hisp_status alone(blk *b, hisp_solve_info *info)
{
    hisp_solver s = b->s;
    hisp_vector bv = NULL, xv = NULL;
    hisp_status st = hisp_vector_create(b->ctx, b->t, b->n, &bv);
    if (!st) st = hisp_vector_create(b->ctx, b->t, b->n, &xv);
    int64_t maxit = s->maxit;
    for (int64_t c = 0; !st && c < b->k; c++) {
        if (b->state[c] != ALONE && b->state[c] != ALONE_FROM_X) continue;
        int64_t done = b->state[c] == ALONE_FROM_X ? b->its[c] : 0;
        s->maxit = maxit - done;
        st = hisp_vector_copy(b->cb.views[c], bv);
        if (!st) st = hisp_vector_copy(b->cx.views[c], xv);
        if (!st) st = hisp_solver_solve(s, b->A, bv, xv, &info[c]);
        if (!st) st = hisp_vector_copy(xv, b->cx.views[c]);
        if (!st && done) {
            info[c].iterations += done;
            info[c].restarts++;
        }
    }
    s->maxit = maxit;
    hisp_vector_destroy(&bv);
    hisp_vector_destroy(&xv);
    return st;
}

static hisp_status run(blk *b, hisp_solve_info *info)
{
    int rho = 0, next = 1;
    HISPI_TRY(init(b, &rho));
    int64_t it = 0, since = 0;
    while (b->m > 0) {
        HISPI_TRY(step(b, ++it, &rho));
        if (it - since >= next || it >= b->s->maxit) {
            HISPI_TRY(check(b, it, since, &next));
            since = it;
        }
    }
    HISPI_TRY(truth(b, info));
    return alone(b, info);
}

bool hispi_solve_block_takes(hisp_solver s, hisp_matrix A, hisp_vector X)
{
    hisp_type t = A->host.type;
    return s->method == HISP_SOLVER_CG && !s->monitor && s->ctx->opt.solver_precision != 1 &&
           (t == HISP_F32 || t == HISP_F64 || t == HISP_C32 || t == HISP_C64) &&
           X->order == HISP_ORDER_COL && hispi_vec_on_device(s->ctx) && !hispi_solve_on_host(s, A);
}

hisp_status hispi_solve_block(hisp_solver s, hisp_matrix A, hisp_vector B, hisp_vector X,
                              hisp_solve_info *info)
{
    double t0 = hispi_now_ms();
    hisp_context ctx = s->ctx;
    blk b;
    memset(&b, 0, sizeof b);
    b.s = s;
    b.ctx = ctx;
    b.A = A;
    b.t = B->type;
    b.k = B->cols;
    b.n = B->n / b.k;
    b.ring = s->check + 1;
    static const double d1[4] = {1, 0, 0, 0}, d0[4] = {0, 0, 0, 0};
    static const float f1[4] = {1, 0, 0, 0}, f0[4] = {0, 0, 0, 0};
    bool dbl = hispi_type_scalar_size(b.t) == 8;
    memcpy(b.one, dbl ? (const void *)d1 : (const void *)f1, dbl ? sizeof d1 : sizeof f1);
    memcpy(b.zero, dbl ? (const void *)d0 : (const void *)f0, dbl ? sizeof d0 : sizeof f0);
    hisp_solve_info *in = NULL;
    hispi_ks_lent lent = {NULL, NULL, NULL};
    hisp_status st = HISP_SUCCESS;
    if (s->pobj) st = hispi_preconditioner_lend(s->pobj, ctx, A, &lent);
    int nslot = (S_RING + 2 * b.ring) * (int)b.k;
    if (!st) st = hispi_ks_local_lent(ctx, A, s->precond, s->method, nslot, &lent, &b.sp);
    if (!st) st = hispi_calloc(ctx, (size_t)b.k, sizeof *in, (void **)&in);
    if (!st) st = hispi_columns_open(B, true, "hisp_solver_solve_columns", &b.cb);
    if (!st) st = hispi_columns_open(X, true, "hisp_solver_solve_columns", &b.cx);
    if (!st) st = open_blk(&b);
    if (!st) st = hisp_vector_copy(X, b.X0);
    bool saved = !st;
    double t1 = hispi_now_ms();
    if (!st) st = run(&b, in);
    if (!st) st = b.sp->o->read(b.sp, 0, 0, NULL);
    if (st && saved) { /* the caller's X as it was */
        hisp_status s2 = hisp_vector_copy(b.X0, X);
        (void)s2;
    }
    if (b.cx.views) hispi_vector_device_written(X); /* written through the views */
    double ms = hispi_now_ms() - t0;
    for (int64_t c = 0; !st && info && c < b.k; c++) {
        info[c] = in[c];
        if (b.state[c] == DONE) { /* the lock step's: its time, shared */
            info[c].lock_step = 1;
            info[c].ms = ms;
            info[c].setup_ms = t1 - t0;
        } else if (b.state[c] == ALONE_FROM_X) {
            info[c].lock_step = 1;
            info[c].ms += t1 - t0;
        }
    }
    close_blk(&b);
    hispi_columns_close(&b.cb);
    hispi_columns_close(&b.cx);
    if (b.sp) b.sp->o->destroy(b.sp);
    free(in);
    return st;
}
