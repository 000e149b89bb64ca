/* Several right-hand sides in lock step (block.h): the blocks, the shared
 * product, the checks, and the end. CG and BiCGSTAB (block_cg.c,
 * block_bicgstab.c) run their columns together; each check reads every
 * running column's ring in one read and stops the columns that converged,
 * reached the limit or broke down.
 *
 * What the recurrence decides is checked: at the end one SpMM computes every
 * finished column's true residual; a column whose truth misses the tolerance
 * goes on alone from its x through hisp_solver_solve (which restarts from
 * the true residual as a single solve does), and a column that broke down,
 * starts converged or has b = 0 is solved alone from its x0, so that its
 * report is a single solve's. */
#include "block.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* a column's state */
enum { RUN = 0, DONE, ALONE, ALONE_FROM_X };

static ks_vec *W(hisp_vector v)
{
    return hispi_ks_wrap_local(v);
}

static hisp_status views(blk *b, hisp_vector whole, hisp_vector **out)
{
    void *buf = NULL;
    HISPI_TRY(hispi_vector_device(whole, false, &buf));
    HISPI_TRY(hispi_calloc(b->ctx, (size_t)b->k, sizeof **out, (void **)out));
    for (int64_t j = 0; j < b->k; j++)
        HISPI_TRY(hispi_vector_view(b->ctx, b->t, b->n, buf, j * b->n, &(*out)[j]));
    return HISP_SUCCESS;
}

static void free_views(int64_t count, hisp_vector **v)
{
    for (int64_t j = 0; *v && j < count; j++)
        hisp_vector_destroy(&(*v)[j]);
    free(*v);
    *v = NULL;
}

hisp_status hispi_blk_new(blk *b, bool keep, int *id)
{
    if (b->nblk == BLK_MAX) return HISP_ERR_INVALID_ARGUMENT; /* a method asks for too many */
    int i = b->nblk++;
    b->keep[i] = keep;
    *id = i;
    HISPI_TRY(hisp_vector_create(b->ctx, b->t, b->n * b->k, &b->whole[i]));
    return views(b, b->whole[i], &b->at[i]);
}

/* block i's first m columns as one column-major vector */
static hisp_status prefix(blk *b, int i)
{
    if (b->pre[i] && b->pre[i]->cols == b->m) return HISP_SUCCESS;
    hisp_vector_destroy(&b->pre[i]);
    void *buf = NULL;
    HISPI_TRY(hispi_vector_device(b->whole[i], false, &buf));
    HISPI_TRY(hispi_vector_view(b->ctx, b->t, b->n * b->m, buf, 0, &b->pre[i]));
    b->pre[i]->cols = b->m;
    b->pre[i]->order = HISP_ORDER_COL;
    return HISP_SUCCESS;
}

hisp_status hispi_blk_product(blk *b, int in, int out)
{
    HISPI_TRY(prefix(b, in));
    HISPI_TRY(prefix(b, out));
    return hisp_spmm(b->ctx, HISP_OP_N, b->one, b->A, b->pre[in], b->zero, b->pre[out]);
}

/* The column at position p stops: the last running column moves into its
 * place in every kept block. */
static hisp_status drop(blk *b, int64_t p)
{
    int64_t last = b->m - 1;
    if (p != last) {
        for (int i = 0; i < b->nblk; i++)
            if (b->keep[i]) HISPI_TRY(hisp_vector_copy(b->at[i][last], b->at[i][p]));
        b->col[p] = b->col[last];
    }
    b->m = last;
    return HISP_SUCCESS;
}

/* block tmp = A X over all k columns (the caller's X) */
static hisp_status product_x(blk *b, int tmp)
{
    hisp_vector q = b->whole[tmp];
    q->cols = b->k;
    q->order = HISP_ORDER_COL;
    hisp_status st = hisp_spmm(b->ctx, HISP_OP_N, b->one, b->A, b->cx.v, b->zero, q);
    q->cols = 0;
    return st;
}

/* Every column's r = b - A x into block res (X's SpMM into block `tmp`),
 * ||b|| and ||r0||; the columns that start converged, with b = 0 or NaN go
 * alone. */
static hisp_status begin(blk *b, int tmp)
{
    ks_space *sp = b->sp;
    const ks_ops *o = sp->o;
    HISPI_TRY(product_x(b, tmp));
    b->m = b->k;
    for (int64_t p = 0; p < b->k; p++) {
        b->col[p] = p;
        ks_vec *bc = W(b->cb.views[p]), *r = hispi_blk_at(b, b->res, p);
        HISPI_TRY(o->dot(sp, bc, bc, hispi_blk_slot(b, BLK_BB, p)));
        HISPI_TRY(o->copy(sp, bc, r));
        HISPI_TRY(o->axpby_dot(sp, ks_val(-1), hispi_blk_at(b, tmp, p), ks_val(1), r, NULL,
                               hispi_blk_slot(b, BLK_RR0, p)));
    }
    HISPI_TRY(o->read(sp, 0, 2 * (int)b->k, b->v));
    for (int64_t p = b->k - 1; p >= 0; p--) {
        int64_t c = b->col[p];
        double bb = b->v[4 * c], rr = b->v[4 * (b->k + c)];
        b->bnorm[c] = sqrt(fmax(bb, 0));
        b->rn[c] = sqrt(fmax(rr, 0));
        b->tol[c] = fmax(b->s->rtol * b->bnorm[c], b->s->atol);
        if (!isfinite(bb) || !isfinite(rr) || bb == 0 || b->rn[c] <= b->tol[c] ||
            b->s->maxit <= 0) {
            b->state[c] = ALONE;
            HISPI_TRY(drop(b, p));
        }
    }
    return b->m ? b->meth->start(b) : HISP_SUCCESS;
}

/* After iteration it: read the ring since the last check and decide each
 * running column; *next: iterations to the next check (as hispi_ks_check:
 * the rate's prediction, at most twice the last and K). */
static hisp_status check(blk *b, int64_t it, int64_t since, int *next)
{
    ks_space *sp = b->sp;
    int K = b->s->check, nf = b->meth->nfix;
    bool aux = b->meth->aux;
    int nr = aux ? 2 * b->ring : b->ring;
    HISPI_TRY(sp->o->read(sp, nf * (int)b->k, nr * (int)b->k, b->v));
    int want = K;
    bool far = true;
    for (int64_t p = b->m - 1; p >= 0; p--) {
        int64_t c = b->col[p];
        double before = b->rn[c], last = before;
        bool bad = false, conv = false;
        for (int64_t i = since + 1; i <= it && !bad; i++) {
            int j = (int)((i - 1) % b->ring);
            double rr = b->v[4 * ((size_t)j * b->k + c)];
            if (aux) {
                double pq = b->v[4 * ((size_t)(b->ring + j) * b->k + c)];
                if (isnan(pq) || pq < 0 || (pq == 0 && last > 0)) bad = true;
            }
            if (!isfinite(rr)) bad = true;
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
        int k2 = *next * 2 > K ? K : *next * 2;
        if (before > 0 && last < before) {
            double need = log(b->tol[c] / last) / (log(last / before) / (double)(it - since));
            if (need < k2) k2 = need < 1 ? 1 : (int)need;
        }
        if (k2 < want) want = k2;
    }
    *next = far ? (want < 1 ? 1 : want) : 1;
    return HISP_SUCCESS;
}

/* The finished columns' true residuals ||b - A x|| (one SpMM of every
 * column into block tmp): those that miss the tolerance go on alone. */
static hisp_status truth(blk *b, int tmp, hisp_solve_info *info)
{
    ks_space *sp = b->sp;
    const ks_ops *o = sp->o;
    HISPI_TRY(product_x(b, tmp));
    for (int64_t c = 0; c < b->k; c++)
        if (b->state[c] == DONE)
            HISPI_TRY(o->axpby_dot(sp, ks_val(1), W(b->cb.views[c]), ks_val(-1), W(b->at[tmp][c]),
                                   NULL, BLK_RR0 * (int)b->k + (int)c));
    HISPI_TRY(o->read(sp, BLK_RR0 * (int)b->k, (int)b->k, b->v));
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

static hisp_status open_blk(blk *b)
{
    hisp_context ctx = b->ctx;
    size_t k = (size_t)b->k;
    HISPI_TRY(hisp_vector_create(ctx, b->t, b->n * b->k, &b->X0));
    HISPI_TRY(views(b, b->X0, &b->X0c));
    HISPI_TRY(hispi_calloc(ctx, k, sizeof *b->col, (void **)&b->col));
    HISPI_TRY(hispi_calloc(ctx, k, sizeof *b->state, (void **)&b->state));
    HISPI_TRY(hispi_calloc(ctx, k, sizeof *b->its, (void **)&b->its));
    HISPI_TRY(hispi_calloc(ctx, 3 * k, sizeof *b->tol, (void **)&b->tol));
    b->bnorm = b->tol + k;
    b->rn = b->tol + 2 * k;
    HISPI_TRY(hispi_calloc(ctx, 8 * k * (size_t)b->ring, sizeof *b->v, (void **)&b->v));
    return hispi_blk_new(b, true, &b->res);
}

static void close_blk(blk *b)
{
    for (int i = 0; i < b->nblk; i++) {
        free_views(b->k, &b->at[i]);
        hisp_vector_destroy(&b->pre[i]);
        hisp_vector_destroy(&b->whole[i]);
    }
    free_views(b->k, &b->X0c);
    hisp_vector_destroy(&b->X0);
    free(b->col);
    free(b->state);
    free(b->its);
    free(b->tol);
    free(b->v);
}

static hisp_status run(blk *b, hisp_solve_info *info)
{
    int tmp = 0; /* a block for A X (at the start and the end) */
    HISPI_TRY(hispi_blk_new(b, false, &tmp));
    HISPI_TRY(begin(b, tmp));
    int64_t it = 0, since = 0;
    int next = 1;
    while (b->m > 0) {
        HISPI_TRY(b->meth->step(b, ++it));
        if (it - since >= next || it >= b->s->maxit) {
            HISPI_TRY(check(b, it, since, &next));
            since = it;
        }
    }
    HISPI_TRY(truth(b, tmp, info));
    b->t_lock = hispi_now_ms();
    return alone(b, info);
}

/* On a CPU device (PoCL, 2 cores) the lock step measured 0.56-0.78x the
 * columns one after another (poisson3d 64^3, k = 4 and 16): k columns'
 * vectors leave the caches a single solve's stay in. A test hook (1: on
 * CPU devices too) lets the suites run it there. */
int hispi_solve_block_cpu = 0;

/* Jacobi's z = D^-1 r is vector algebra, which runs on views of the blocks;
 * the preconditioners with a setup (AMG, ILU(0), IC(0), Chebyshev) run
 * products that take whole vectors, and their apply dominates an
 * iteration: in lock step through work vectors, AMG-CG measured 0.87-1.01x
 * the columns one after another (H200, poisson3d 100^3 and 160^3). */
bool hispi_solve_block_takes(hisp_solver s, hisp_matrix A, hisp_vector X)
{
    hisp_type t = A->host.type;
    hisp_precond pc = s->precond;
    hispi_kcaps caps;
    /* the bank holds (at most 8 + 2 (check + 1)) slots per column */
    if (X->cols * (8 + 2 * (int64_t)(s->check + 1)) > ((int64_t)1 << 24)) return false;
    if (!hispi_solve_block_cpu && (HISPI_BE(s->ctx, kern_caps, &caps) || caps.is_cpu)) return false;
    return (s->method == HISP_SOLVER_CG || s->method == HISP_SOLVER_BICGSTAB) && !s->monitor &&
           !s->pobj &&
           (pc == HISP_PRECOND_NONE || pc == HISP_PRECOND_JACOBI || pc == HISP_PRECOND_L1_JACOBI) &&
           s->ctx->opt.solver_precision != 1 &&
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
    b.meth = s->method == HISP_SOLVER_CG ? &hispi_blk_cg : &hispi_blk_bicgstab;
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
    int nslot = (b.meth->nfix + 2 * b.ring) * (int)b.k;
    hisp_status st = hispi_ks_local(ctx, A, NULL, s->precond, s->method, nslot, &b.sp);
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
            info[c].ms += b.t_lock - t0; /* the lock step's part, then its own */
        }
    }
    close_blk(&b);
    hispi_columns_close(&b.cb);
    hispi_columns_close(&b.cx);
    if (b.sp) b.sp->o->destroy(b.sp);
    free(in);
    return st;
}
