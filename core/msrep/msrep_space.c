/* The solvers' space over an MSREP plan's devices (hisp_solver_solve_dist):
 * vectors are distributed vectors, each device keeping the rows it owns
 * current. The space's own vectors start as ROWS vectors; one that is the
 * input of a product becomes OWNED (msrep_plan.h: a full-length buffer per
 * device, owned rows in place), so that a product fetches only the entries
 * of each part's column window that other devices own (a halo for a banded
 * matrix) and copies nothing locally: hispi_mspmv_window, one job on every
 * device (a caller's ROWS x goes through a scratch OWNED vector). Every other
 * operation runs on each device's owned rows at once, on the plan's worker
 * threads (hispi_msrep_each): the vector-algebra kernels on views of the
 * owned rows (hispi_vector_view; each operand its own offset). The scalars
 * (slots) live on the host: a reduction's partial sums come back from every
 * device and are added in device order (deterministic), and a method's
 * ratios and products are evaluated here and passed to the kernels as host
 * values. */
#include "msrep_plan.h"
#include "amg/hispi_amg.h"
#include "solver/ksp.h"

#include <stdlib.h>
#include <string.h>

/* A vector of the space: a distributed vector and its per-device views.
 * The caller's vectors are named by their hisp_mvector, the space's own by
 * their dvec (whose mv changes when it becomes OWNED). */
typedef struct {
    hisp_mvector mv;
    hisp_vector view[HISP_MPLAN_MAX_DEVICES]; /* NULL where a device owns no rows */
    bool mine;                                /* made by vnew: freed by vfree */
} dvec;

typedef struct {
    ks_space base;
    hisp_mplan plan;
    double *slot; /* the slots (real: the plan's types are f32 and f64) */
    dvec **vecs;  /* every vector met so far (the caller's too) */
    int nvec, capvec;
    hisp_mvector xs; /* OWNED scratch: the product's x where x is the caller's (made on use) */
    dvec *diag;      /* Jacobi, Chebyshev: diag(A) in ROWS layout, or NULL */
    ks_cheb cheb;    /* Chebyshev (cheb.degree > 0): its work vectors and interval */
    bool pending;    /* element-wise work queued since the devices were last waited for */
    /* the debug option: element-wise work is waited for at once (its own
     * time, not the next job's wait), and the products' steps are summed
     * (slowest device each) for the log line at the end */
    bool debug;
    int64_t nprod;
    double halo_ms, kernel_ms, merge_ms;
    bool home_claimed; /* the plan's home context, claimed too where it is not the solver's */
} dist_space;

static dist_space *D(ks_space *sp)
{
    return (dist_space *)sp;
}

static ks_vec *wrap(hisp_mvector v)
{
    return (ks_vec *)v;
}

/* A failure recorded on the plan's context, onto the solver's. */
static hisp_status relay(dist_space *ds, hisp_status st)
{
    hisp_context home = ds->plan->home;
    if (!st || home == ds->base.ctx) return st;
    hisp_error_info e = {0};
    if (hisp_context_last_error(home, &e) == HISP_SUCCESS && e.message)
        return hispi_fail_native(ds->base.ctx, st, e.native_code, "%s", e.message);
    return hispi_fail(ds->base.ctx, st, "solve over an MSREP plan: %s", hisp_status_string(st));
}

/* ---- checks -------------------------------------------------------------------- */

static hisp_status plan_check(hisp_context ctx, hisp_mplan plan)
{
    if (!hispi_handle_live(plan, HISPI_H_MPLAN))
        return hispi_fail(ctx, HISP_ERR_INVALID_HANDLE, "solve: the plan is not a live MSREP plan");
    if (plan->columns || plan->hisparse)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                          "solve over an MSREP plan needs a row partition (rowblock, pcsr, pcoo) "
                          "run by the CSR kernel, not %s%s",
                          hisp_partition_name(plan->kind), plan->hisparse ? " with HiSparse" : "");
    if (plan->nrows != plan->ncols)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "solve over an MSREP plan needs a square matrix (this one is %lld x "
                          "%lld)",
                          (long long)plan->nrows, (long long)plan->ncols);
    return HISP_SUCCESS;
}

static hisp_status vec_check(hisp_context ctx, hisp_mplan plan, const char *name, hisp_mvector v)
{
    hisp_mvec_layout lay;
    if (!v) return hispi_fail(ctx, HISP_ERR_INVALID_HANDLE, "solve: %s is NULL", name);
    if (!hispi_mvector_of(v, plan, &lay))
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "solve: %s is not a live distributed vector of this plan", name);
    if (lay != HISP_MVEC_ROWS)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "solve: %s is a REPLICATED vector; b and x are ROWS vectors of the "
                          "plan (hisp_mvector_create(plan, HISP_MVEC_ROWS, ...))",
                          name);
    return HISP_SUCCESS;
}

static hisp_status dist_check(hisp_context ctx, hisp_mplan plan, hisp_mvector b, hisp_mvector x)
{
    HISPI_TRY(plan_check(ctx, plan));
    HISPI_TRY(vec_check(ctx, plan, "b", b));
    HISPI_TRY(vec_check(ctx, plan, "x", x));
    if (b == x) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "solve: b and x are one vector");
    return HISP_SUCCESS;
}

/* ---- vectors -------------------------------------------------------------------- */

static void drop_views(dvec *d)
{
    for (int k = 0; k < HISP_MPLAN_MAX_DEVICES; k++)
        hisp_vector_destroy(&d->view[k]);
}

/* The space's own vectors go back to the plan's spares for the next solve. */
static void dvec_free(dist_space *ds, dvec *d)
{
    drop_views(d);
    if (d->mine) hispi_mvector_spare_give(ds->plan, &d->mv);
    free(d);
}

/* Entry 0 of an OWNED buffer made 0 again where row 0 is another device's:
 * the SpMV's padding lanes read it (times a zero), as in a new buffer. */
static hisp_status zero_entry0(worker *w, void *arg)
{
    hisp_mvector mv = arg;
    void *buf;
    int64_t off, n;
    hispi_mvector_slice(mv, w->id, &buf, &off, &n);
    if (off == 0 || !buf) return HISP_SUCCESS; /* row 0 is this device's own */
    unsigned char zero[8] = {0};
    hisp_vector v = NULL;
    hisp_status st = hispi_vector_view(w->ctx, w->plan->type, 1, buf, 0, &v);
    if (!st) st = hisp_vector_fill(v, hisp_scalar_host(zero));
    hisp_vector_destroy(&v);
    return st;
}

/* A vector of the layout: a spare of the plan's, else a new one. */
static hisp_status take_or_make(dist_space *ds, hisp_mvec_layout layout, hisp_mvector *mv)
{
    *mv = hispi_mvector_spare_take(ds->plan, layout);
    if (!*mv) return relay(ds, hispi_mvector_create(ds->plan, layout, mv));
    hisp_status st = HISP_SUCCESS;
    if (layout == HISPI_MVEC_OWNED) st = relay(ds, hispi_msrep_each(ds->plan, zero_entry0, *mv));
    if (st) hispi_mvector_spare_give(ds->plan, mv);
    return st;
}

/* d's views of the owned rows of d->mv. */
static hisp_status make_views(dist_space *ds, dvec *d)
{
    hisp_mplan plan = ds->plan;
    for (int k = 0; k < plan->nd; k++) {
        void *buf;
        int64_t off, n;
        hispi_mvector_slice(d->mv, k, &buf, &off, &n);
        hisp_status st = HISP_SUCCESS;
        if (n > 0) st = hispi_vector_view(plan->w[k].ctx, plan->type, n, buf, off, &d->view[k]);
        if (st) {
            drop_views(d);
            return hispi_fail(ds->base.ctx, st,
                              "solve: cannot make device %d's view of a vector (%s)", k,
                              hisp_status_string(st));
        }
    }
    return HISP_SUCCESS;
}

/* A new record of mv with its views (mine: mv is freed with it). */
static hisp_status dvec_new(dist_space *ds, hisp_mvector mv, bool mine, dvec **out)
{
    dvec *d = NULL;
    HISPI_TRY(hispi_calloc(ds->base.ctx, 1, sizeof *d, (void **)&d));
    d->mv = mv;
    hisp_status st = make_views(ds, d);
    if (st) {
        free(d);
        return st;
    }
    d->mine = mine;
    *out = d;
    return HISP_SUCCESS;
}

static hisp_status remember(dist_space *ds, dvec *d)
{
    if (ds->nvec == ds->capvec) {
        int cap = ds->capvec ? 2 * ds->capvec : 16;
        dvec **nv = realloc(ds->vecs, (size_t)cap * sizeof *nv);
        if (!nv)
            return hispi_fail(ds->base.ctx, HISP_ERR_OUT_OF_HOST_MEMORY,
                              "solve: out of host memory");
        ds->vecs = nv;
        ds->capvec = cap;
    }
    ds->vecs[ds->nvec++] = d;
    return HISP_SUCCESS;
}

/* The space's record of v: one of its own, or the caller's (made on first
 * sight: b and x). */
static hisp_status lookup(dist_space *ds, ks_vec *v, dvec **out)
{
    for (int i = 0; i < ds->nvec; i++)
        if ((ks_vec *)ds->vecs[i] == v || (ks_vec *)ds->vecs[i]->mv == v) {
            *out = ds->vecs[i];
            return HISP_SUCCESS;
        }
    hisp_mvector mv = (hisp_mvector)v;
    HISPI_TRY(vec_check(ds->base.ctx, ds->plan, "a vector", mv));
    dvec *d = NULL;
    HISPI_TRY(dvec_new(ds, mv, false, &d));
    hisp_status st = remember(ds, d);
    if (st) {
        dvec_free(ds, d);
        return st;
    }
    *out = d;
    return HISP_SUCCESS;
}

static hisp_status d_vnew(ks_space *sp, int cols, ks_vec **v)
{
    (void)cols; /* square */
    dist_space *ds = D(sp);
    hisp_mvector mv = NULL;
    HISPI_TRY(take_or_make(ds, HISP_MVEC_ROWS, &mv));
    dvec *d = NULL;
    hisp_status st = dvec_new(ds, mv, true, &d);
    if (st) {
        hispi_mvector_spare_give(ds->plan, &mv);
        return st;
    }
    st = remember(ds, d);
    if (st) {
        dvec_free(ds, d);
        return st;
    }
    *v = (ks_vec *)d;
    return HISP_SUCCESS;
}

static void d_vfree(ks_space *sp, ks_vec *v)
{
    dist_space *ds = D(sp);
    for (int i = 0; i < ds->nvec; i++)
        if ((ks_vec *)ds->vecs[i] == v) {
            dvec_free(ds, ds->vecs[i]);
            ds->vecs[i] = ds->vecs[--ds->nvec];
            return;
        }
}

/* ---- one operation on every device ------------------------------------------ */

enum {
    OP_SYNC,
    OP_FILL,
    OP_COPY,
    OP_SCALE,
    OP_AXPBY,
    OP_AXPBYPCZ,
    OP_DOT,
    OP_AXPBY_DOT,
    OP_DOT2,
    OP_DIV,
    OP_DIV_DOT,
    OP_AXPBY2
};

typedef struct {
    int op;
    hisp_type t;
    dvec *v[4];  /* operands in the vector call's order (NULL: none) */
    double s[4]; /* host scalars */
    int nres;
    double part[HISP_MPLAN_MAX_DEVICES][2]; /* each device's partial results */
    bool pre; /* a reduction after queued updates: wait for them first, timed apart */
    double wait[HISP_MPLAN_MAX_DEVICES]; /* that wait on each device (ms) */
} job;

static hisp_status each_op(worker *w, void *arg)
{
    job *j = arg;
    int k = w->id;
    j->part[k][0] = j->part[k][1] = 0;
    j->wait[k] = 0;
    if (j->op == OP_SYNC) return hisp_context_synchronize(w->ctx);
    if (j->pre) { /* costs a launch's latency once: the reduction waits anyway */
        double t0 = hispi_now_ms();
        hisp_status st = hisp_context_synchronize(w->ctx);
        j->wait[k] = hispi_now_ms() - t0;
        if (st) return st;
    }
    hisp_vector v[4] = {NULL, NULL, NULL, NULL};
    for (int i = 0; i < 4; i++)
        if (j->v[i]) {
            v[i] = j->v[i]->view[k];
            if (!v[i]) return HISP_SUCCESS; /* this device owns no rows */
            /* the buffer is the truth: the product and the all-gather
             * write it behind the view's back */
            hispi_vector_device_written(v[i]);
        }
    unsigned char sb[4][8], rb[2][8];
    hisp_scalar s[4];
    for (int i = 0; i < 4; i++) {
        hispi_store_real(j->t, sb[i], 0, j->s[i]);
        s[i] = hisp_scalar_host(sb[i]);
    }
    hisp_result r0 = hisp_result_host(rb[0]), r1 = hisp_result_host(rb[1]);
    hisp_status st = HISP_SUCCESS;
    switch (j->op) {
    case OP_FILL:
        st = hisp_vector_fill(v[0], s[0]);
        break;
    case OP_COPY:
        st = hisp_vector_copy(v[0], v[1]);
        break;
    case OP_SCALE:
        st = hisp_vector_scale(v[0], s[0]);
        break;
    case OP_AXPBY:
        st = hisp_vector_axpby(s[0], v[0], s[1], v[1]);
        break;
    case OP_AXPBYPCZ:
        st = hisp_vector_axpbypcz(s[0], v[0], s[1], v[1], s[2], v[2]);
        break;
    case OP_DOT:
        st = hisp_vector_dot(v[0], v[1], r0);
        break;
    case OP_AXPBY_DOT:
        st = hisp_vector_axpby_dot(s[0], v[0], s[1], v[1], v[2], r0);
        break;
    case OP_DOT2:
        st = hisp_vector_dot2(v[0], v[1], v[2], r0, r1);
        break;
    case OP_DIV:
        st = hisp_vector_div(v[0], v[1], v[2]);
        break;
    case OP_AXPBY2:
        st = hispi_vector_axpby2(s[0], v[0], s[1], v[1], s[2], v[2], s[3], v[3]);
        break;
    default: /* OP_DIV_DOT */
        st = hisp_vector_div_dot(v[0], v[1], v[2], r0);
        break;
    }
    for (int i = 0; !st && i < j->nres; i++)
        j->part[k][i] = hispi_load_real(j->t, rb[i], 0);
    return st;
}

/* j's partial results summed in device order into slots s0 (and s1). */
static void sum_parts(dist_space *ds, const job *j, int s0, int s1)
{
    int slots[2] = {s0, s1};
    for (int i = 0; i < j->nres; i++) {
        double sum = 0;
        for (int k = 0; k < ds->plan->nd; k++)
            sum += j->part[k][i];
        ds->slot[slots[i]] = sum;
    }
}

/* The longest of the devices' waits for work queued before a job. */
static double longest(const dist_space *ds, const double *wait)
{
    double w = 0;
    for (int k = 0; k < ds->plan->nd; k++)
        w = wait[k] > w ? wait[k] : w;
    return w;
}

/* A job's wall time t into the breakdown: `waited` ms of it were the wait
 * for element-wise work queued earlier (vector), the rest `kind`. */
static void spent(dist_space *ds, int kind, double t, double waited)
{
    waited = waited < t ? waited : t;
    ds->base.ms[KS_MS_VECTOR] += waited;
    ds->base.ms[kind] += t - waited;
}

/* Run j on every device; its partial results into slots s0 (and s1).
 * Element-wise jobs return once their kernels are queued (the next job that
 * waits for the devices finds them done); a reduction after them first
 * waits for them, so that the breakdown can tell the two apart. */
static hisp_status run(dist_space *ds, job *j, int s0, int s1)
{
    j->t = ds->plan->type;
    j->pre = ds->pending && j->nres > 0;
    double t0 = hispi_now_ms();
    HISPI_TRY(relay(ds, hispi_msrep_each(ds->plan, each_op, j)));
    spent(ds, j->nres > 0 ? KS_MS_REDUCE : KS_MS_VECTOR, hispi_now_ms() - t0,
          j->pre ? longest(ds, j->wait) : 0);
    /* a device that read a result back has its queue drained */
    ds->pending = j->nres == 0 && j->op != OP_SYNC;
    sum_parts(ds, j, s0, s1);
    if (ds->pending && ds->debug) {
        job w = {.op = OP_SYNC};
        return run(ds, &w, 0, 0);
    }
    return HISP_SUCCESS;
}

/* A ks_sc on the host. */
static double ev(const dist_space *ds, ks_sc s)
{
    double v = s.v[0];
    if (s.kind == KS_SLOT) v = ds->slot[s.a];
    if (s.kind == KS_RATIO) {
        double den = ds->slot[s.b];
        v = (s.neg & KS_SAFE) && den == 0 ? 0 : ds->slot[s.a] / den;
    }
    return (s.neg & 1) ? -v : v;
}

#define OPERANDS(...)                                                                              \
    do {                                                                                           \
        ks_vec *in_[] = {__VA_ARGS__};                                                             \
        for (size_t i_ = 0; i_ < sizeof in_ / sizeof in_[0]; i_++)                                 \
            if (in_[i_]) HISPI_TRY(lookup(ds, in_[i_], &j.v[i_]));                                 \
    } while (0)

static hisp_status d_fill(ks_space *sp, ks_sc a, ks_vec *y)
{
    dist_space *ds = D(sp);
    job j = {.op = OP_FILL, .s = {ev(ds, a)}};
    OPERANDS(y);
    return run(ds, &j, 0, 0);
}

static hisp_status d_copy(ks_space *sp, ks_vec *x, ks_vec *y)
{
    dist_space *ds = D(sp);
    if (x == y) return HISP_SUCCESS;
    job j = {.op = OP_COPY};
    OPERANDS(x, y);
    return run(ds, &j, 0, 0);
}

static hisp_status d_scale(ks_space *sp, ks_vec *y, ks_sc a)
{
    dist_space *ds = D(sp);
    job j = {.op = OP_SCALE, .s = {ev(ds, a)}};
    OPERANDS(y);
    return run(ds, &j, 0, 0);
}

static hisp_status d_axpby(ks_space *sp, ks_sc a, ks_vec *x, ks_sc b, ks_vec *y)
{
    dist_space *ds = D(sp);
    job j = {.op = OP_AXPBY, .s = {ev(ds, a), ev(ds, b)}};
    OPERANDS(x, y);
    return run(ds, &j, 0, 0);
}

static hisp_status d_axpbypcz(ks_space *sp, ks_sc a, ks_vec *x, ks_sc b, ks_vec *y, ks_sc c,
                              ks_vec *z)
{
    dist_space *ds = D(sp);
    job j = {.op = OP_AXPBYPCZ, .s = {ev(ds, a), ev(ds, b), ev(ds, c)}};
    OPERANDS(x, y, z);
    return run(ds, &j, 0, 0);
}

static hisp_status d_dot(ks_space *sp, ks_vec *x, ks_vec *y, int slot)
{
    dist_space *ds = D(sp);
    job j = {.op = OP_DOT, .nres = 1};
    OPERANDS(x, y);
    return run(ds, &j, slot, 0);
}

static hisp_status d_axpby_dot(ks_space *sp, ks_sc a, ks_vec *x, ks_sc b, ks_vec *y, ks_vec *w,
                               int slot)
{
    dist_space *ds = D(sp);
    job j = {.op = OP_AXPBY_DOT, .s = {ev(ds, a), ev(ds, b)}, .nres = 1};
    OPERANDS(x, y, w);
    return run(ds, &j, slot, 0);
}

static hisp_status d_dot2(ks_space *sp, ks_vec *x, ks_vec *y, ks_vec *w, int s0, int s1)
{
    dist_space *ds = D(sp);
    job j = {.op = OP_DOT2, .nres = 2};
    OPERANDS(x, y, w);
    return run(ds, &j, s0, s1);
}

/* z = x ./ w on every device's owned rows (slot >= 0: slot = dot(x, z)). */
static hisp_status d_div(ks_space *sp, ks_vec *x, ks_vec *w, ks_vec *z, int slot)
{
    dist_space *ds = D(sp);
    job j = {.op = slot >= 0 ? OP_DIV_DOT : OP_DIV, .nres = slot >= 0};
    OPERANDS(x, w, z);
    return run(ds, &j, slot >= 0 ? slot : 0, 0);
}

/* z = M^-1 x: Jacobi (the diagonal in the same layout), Chebyshev
 * (ks_cheb.c), or a copy. */
static hisp_status d_precond(ks_space *sp, ks_vec *x, ks_vec *z, int slot)
{
    dist_space *ds = D(sp);
    if (ds->cheb.degree > 0) {
        HISPI_TRY(hispi_ks_cheb_apply(sp, &ds->cheb, x, z));
        return slot >= 0 ? d_dot(sp, x, z, slot) : HISP_SUCCESS;
    }
    if (ds->diag) return d_div(sp, x, (ks_vec *)ds->diag, z, slot);
    HISPI_TRY(d_copy(sp, x, z));
    return slot >= 0 ? d_dot(sp, x, z, slot) : HISP_SUCCESS;
}

/* Wait for the element-wise work still queued on the devices. */
static hisp_status drain(dist_space *ds)
{
    if (!ds->pending) return HISP_SUCCESS;
    job j = {.op = OP_SYNC};
    return run(ds, &j, 0, 0);
}

/* One of the space's vectors becomes OWNED (its first product): its owned
 * rows copied into the full-length buffers once, so that every later
 * product reads them in place. */
static hisp_status promote(dist_space *ds, dvec *d)
{
    hisp_mvec_layout lay;
    if (!d->mine || (hispi_mvector_of(d->mv, ds->plan, &lay) && lay == HISPI_MVEC_OWNED))
        return HISP_SUCCESS;
    hisp_mvector mv = NULL;
    HISPI_TRY(take_or_make(ds, HISPI_MVEC_OWNED, &mv));
    dvec *nd = NULL;
    hisp_status st = dvec_new(ds, mv, true, &nd);
    if (st) {
        hispi_mvector_spare_give(ds->plan, &mv);
        return st;
    }
    job j = {.op = OP_COPY, .v = {d, nd}};
    st = run(ds, &j, 0, 0);
    if (!st) st = drain(ds); /* the old buffers go next */
    if (st) {
        dvec_free(ds, nd);
        return st;
    }
    drop_views(d);
    hispi_mvector_spare_give(ds->plan, &d->mv);
    d->mv = nd->mv;
    memcpy(d->view, nd->view, sizeof d->view);
    free(nd);
    return HISP_SUCCESS;
}

/* y = A x (slot >= 0: slot = dot(x, y), in the same job); x is made OWNED
 * if it is the space's, else goes through the OWNED scratch. */
static hisp_status product(dist_space *ds, ks_vec *x, ks_vec *y, int slot)
{
    dvec *dx, *dy;
    HISPI_TRY(lookup(ds, x, &dx));
    HISPI_TRY(lookup(ds, y, &dy));
    if (dx == dy)
        return hispi_fail(ds->base.ctx, HISP_ERR_INVALID_ARGUMENT,
                          "solve over an MSREP plan: a product's x and y are one vector");
    HISPI_TRY(promote(ds, dx));
    hisp_mvector xs = dx->mv;
    if (!dx->mine) {
        if (!ds->xs) HISPI_TRY(take_or_make(ds, HISPI_MVEC_OWNED, &ds->xs));
        xs = ds->xs;
    }
    double part[HISP_MPLAN_MAX_DEVICES], wait[HISP_MPLAN_MAX_DEVICES];
    bool queued = ds->pending;
    double t0 = hispi_now_ms();
    HISPI_TRY(relay(ds, hispi_mspmv_window(ds->plan, dx->mv, xs, dy->mv, slot >= 0 ? part : NULL)));
    /* each device first waited for x's writers (wait_ms): the updates queued before */
    double st[3] = {0, 0, 0}; /* the slowest device's halo, kernel (device time), merge */
    for (int k = 0; k < ds->plan->nd; k++) {
        const worker *w = &ds->plan->w[k];
        wait[k] = w->wait_ms;
        double v[3] = {w->x_ms - w->wait_ms, w->compute_ms, w->merge_ms};
        for (int i = 0; i < 3; i++)
            st[i] = v[i] > st[i] ? v[i] : st[i];
    }
    ds->nprod++;
    ds->halo_ms += st[0];
    ds->kernel_ms += st[1];
    ds->merge_ms += st[2];
    spent(ds, KS_MS_PRODUCT, hispi_now_ms() - t0, queued ? longest(ds, wait) : 0);
    ds->pending = false; /* the job waits for its devices */
    if (slot >= 0) {     /* in device order, as every reduction of the space */
        double sum = 0;
        for (int k = 0; k < ds->plan->nd; k++)
            sum += part[k];
        ds->slot[slot] = sum;
    }
    return HISP_SUCCESS;
}

static hisp_status d_matvec(ks_space *sp, hisp_op op, ks_vec *x, ks_vec *y)
{
    if (op != HISP_OP_N)
        return hispi_fail(sp->ctx, HISP_ERR_UNSUPPORTED,
                          "solve over an MSREP plan: products with A^T are not available");
    return product(D(sp), x, y, -1);
}

/* y = A x and slot = dot(x, y) in one job: fused into the product's kernel
 * where the backend can, else a pass right after it on each device. */
static hisp_status d_matvec_dot(ks_space *sp, ks_vec *x, ks_vec *y, int slot)
{
    return product(D(sp), x, y, slot);
}

static hisp_status d_smul(ks_space *sp, ks_sc a, ks_sc b, int slot)
{
    dist_space *ds = D(sp);
    ds->slot[slot] = ev(ds, a) * ev(ds, b);
    return HISP_SUCCESS;
}

static hisp_status d_sset(ks_space *sp, int slot, const double v[4])
{
    D(sp)->slot[slot] = v[0];
    return HISP_SUCCESS;
}

static hisp_status d_read(ks_space *sp, int first, int n, double *out)
{
    dist_space *ds = D(sp);
    HISPI_TRY(drain(ds));
    for (int i = 0; i < n; i++) {
        double *o = out + 4 * (size_t)i;
        o[0] = ds->slot[first + i];
        o[1] = o[2] = o[3] = 0;
    }
    return HISP_SUCCESS;
}

static void d_destroy(ks_space *sp)
{
    dist_space *ds = D(sp);
    if (ds->debug && ds->nprod > 0) {
        double n = (double)ds->nprod;
        hispi_debug("solve over %d device(s): %lld products, per product (slowest device): halo "
                    "%.4f ms, kernel %.4f ms (device time), merge %.4f ms; in all product %.3f, "
                    "vector %.3f, reduce %.3f ms",
                    ds->plan->nd, (long long)ds->nprod, ds->halo_ms / n, ds->kernel_ms / n,
                    ds->merge_ms / n, sp->ms[KS_MS_PRODUCT], sp->ms[KS_MS_VECTOR],
                    sp->ms[KS_MS_REDUCE]);
    }
    for (int i = 0; i < ds->nvec; i++)
        dvec_free(ds, ds->vecs[i]);
    free(ds->vecs);
    hispi_mvector_spare_give(ds->plan, &ds->xs);
    free(ds->slot);
    hisp_context ctx = sp->ctx, home = ds->plan->home;
    bool home_claimed = ds->home_claimed;
    free(ds);
    if (home_claimed) hispi_ctx_release(home);
    hispi_ctx_release(ctx); /* the solve's claims (hispi_ks_dist) */
}

/* One pass on every device (x1 read before y2 is written). */
static hisp_status d_axpby2(ks_space *sp, ks_sc a, ks_vec *x1, ks_sc b, ks_vec *y1, ks_sc c,
                            ks_vec *x2, ks_sc d, ks_vec *y2)
{
    dist_space *ds = D(sp);
    job j = {.op = OP_AXPBY2, .s = {ev(ds, a), ev(ds, b), ev(ds, c), ev(ds, d)}};
    OPERANDS(x1, y1, x2, y2);
    return run(ds, &j, 0, 0);
}

static const ks_ops dist_ops = {.vnew = d_vnew,
                                .vfree = d_vfree,
                                .matvec = d_matvec,
                                .precond = d_precond,
                                .fill = d_fill,
                                .copy = d_copy,
                                .scale = d_scale,
                                .axpby = d_axpby,
                                .axpbypcz = d_axpbypcz,
                                .dot = d_dot,
                                .axpby_dot = d_axpby_dot,
                                .axpby2 = d_axpby2,
                                .dot2 = d_dot2,
                                .smul = d_smul,
                                .sset = d_sset,
                                .read = d_read,
                                .destroy = d_destroy,
                                .matvec_dot = d_matvec_dot,
                                .div = d_div};

/* The plan's diagonal (taken from A at plan time) on the devices: Jacobi
 * needs it nonzero, Chebyshev positive. */
static hisp_status make_diag(dist_space *ds, hisp_precond pc)
{
    hisp_mplan plan = ds->plan;
    hisp_context ctx = ds->base.ctx;
    const char *name = hisp_precond_name(pc);
    if (!plan->diag)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "%s: the plan holds no diagonal of A", name);
    for (int64_t i = 0; i < plan->nrows; i++) {
        double d = hispi_load_real(plan->type, plan->diag, i);
        if (pc == HISP_PRECOND_JACOBI && d == 0)
            return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                              "Jacobi: row %lld has no nonzero diagonal entry (use --precond "
                              "none)",
                              (long long)i + 1);
        if (pc == HISP_PRECOND_CHEBYSHEV && !(d > 0))
            return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                              "Chebyshev: row %lld's diagonal entry is %g, not positive (A must "
                              "be symmetric positive definite)",
                              (long long)i + 1, d);
    }
    ks_vec *v = NULL;
    HISPI_TRY(d_vnew(&ds->base, 0, &v));
    ds->diag = (dvec *)v;
    return relay(ds, hisp_mvector_write(ds->diag->mv, plan->diag));
}

/* Chebyshev over the plan: the diagonal and the interval by ks_cheb.c; the
 * plan keeps the bound (its A does not change): Lanczos runs at its first
 * Chebyshev solve only, from the start vector amg_chebyshev.c uses. */
static hisp_status make_cheb(dist_space *ds)
{
    hisp_mplan plan = ds->plan;
    HISPI_TRY(make_diag(ds, HISP_PRECOND_CHEBYSHEV));
    if (!(plan->cheb_hi > 0)) {
        void *h = NULL;
        size_t es = hisp_type_size(plan->type);
        HISPI_TRY(hispi_alloc(ds->base.ctx, (size_t)(plan->nrows > 0 ? plan->nrows : 1), es, &h));
        hispi_amg_start_fill(ds->base.ctx, plan->type, plan->nrows, 1, h);
        ks_vec *start = NULL;
        hisp_status st = d_vnew(&ds->base, 0, &start);
        if (!st) st = relay(ds, hisp_mvector_write(((dvec *)start)->mv, h));
        free(h);
        double hi = 0;
        if (!st)
            st = hispi_ks_cheb_bound(&ds->base, (ks_vec *)ds->diag, start, plan->gersh, 0, &hi);
        if (start) d_vfree(&ds->base, start);
        HISPI_TRY(st);
        plan->cheb_hi = hi;
    }
    return hispi_ks_cheb_setup(&ds->base, (ks_vec *)ds->diag, ds->base.ctx->opt.chebyshev_degree,
                               plan->cheb_hi, &ds->cheb);
}

static hisp_status dist_space_new(hisp_context ctx, hisp_mplan plan, hisp_precond pc, int nslot,
                                  ks_space **out)
{
    *out = NULL;
    HISPI_TRY(plan_check(ctx, plan));
    /* the solver's context and the plan's home are the solve's until the
     * space goes (hispi_ctx_claim) */
    HISPI_TRY(hispi_ctx_claim(ctx));
    bool other = plan->home != ctx;
    if (other && hispi_ctx_claim(plan->home)) {
        hisp_status cs = hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                                    "solve: the plan's context is in use by another thread (a "
                                    "context is used by one thread at a time)");
        hispi_ctx_release(ctx);
        return cs;
    }
    dist_space *ds = NULL;
    hisp_status cs = hispi_calloc(ctx, 1, sizeof *ds, (void **)&ds);
    if (cs) {
        if (other) hispi_ctx_release(plan->home);
        hispi_ctx_release(ctx);
        return cs;
    }
    ds->home_claimed = other;
    ks_space *sp = &ds->base;
    sp->o = &dist_ops;
    sp->ctx = ctx;
    sp->t = plan->type;
    sp->nslot = nslot;
    sp->nrows = sp->ncols = plan->nrows;
    ds->plan = plan;
    ds->debug = ctx->opt.debug;
    hisp_status st = hispi_calloc(ctx, (size_t)nslot, sizeof *ds->slot, (void **)&ds->slot);
    if (!st && pc == HISP_PRECOND_JACOBI) st = make_diag(ds, pc);
    if (!st && pc == HISP_PRECOND_CHEBYSHEV) st = make_cheb(ds);
    if (st) {
        d_destroy(sp);
        return st;
    }
    sp->has_pc = ds->diag != NULL;
    sp->pc_kind = pc;
    *out = sp;
    return HISP_SUCCESS;
}

/* ---- the entry point ---------------------------------------------------------- */

hisp_status hisp_solver_solve_dist(hisp_solver s, hisp_mplan plan, hisp_mvector b, hisp_mvector x,
                                   hisp_solve_info *info)
{
    if (!hispi_handle_live(s, HISPI_H_SOLVER)) return HISP_ERR_INVALID_HANDLE;
    double t0 = hispi_now_ms();
    if (!plan || !b || !x)
        return hispi_fail(s->ctx, HISP_ERR_INVALID_HANDLE, "solve: plan, b or x is NULL");
    if (s->method == HISP_SOLVER_LSQR)
        return hispi_fail(s->ctx, HISP_ERR_UNSUPPORTED,
                          "solve: lsqr over an MSREP plan needs A^T products of the plan's "
                          "parts, which distributed vectors do not provide");
    if (s->precond != HISP_PRECOND_NONE && s->precond != HISP_PRECOND_JACOBI &&
        s->precond != HISP_PRECOND_CHEBYSHEV)
        return hispi_fail(s->ctx, HISP_ERR_UNSUPPORTED,
                          "solve: %s over an MSREP plan is not provided yet (one device: "
                          "hisp_solver_solve; several: --precond jacobi or chebyshev)",
                          hisp_precond_name(s->precond));
    HISPI_TRY(dist_check(s->ctx, plan, b, x));
    ks_space *sp = NULL;
    HISPI_TRY(dist_space_new(s->ctx, plan, s->precond, hispi_solver_slots(s), &sp));
    hisp_status st = hispi_solver_run(s, sp, wrap(b), wrap(x), t0, info);
    sp->o->destroy(sp);
    return st;
}
