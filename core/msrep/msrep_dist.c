/* MSREP distributed vectors: vectors that stay on a plan's devices between
 * SpMVs (the iterative-solver case without a home device), so that one
 * SpMV moves no vector between devices except the shared boundary rows.
 * (The solvers use an internal third layout, OWNED, and a product that
 * fetches only each part's window: hispi_mspmv_window, msrep_plan.h.)
 *
 * A REPLICATED vector holds all of x on every device; a ROWS vector holds on
 * device k the rows it owns. Ownership tiles the rows: device k owns
 * [own[k], own[k+1]), which covers its part's rows except a first row
 * shared with an earlier part (that row's owner is the earliest part that
 * holds it), plus the rows no part holds (empty rows) before its part and,
 * for the last device, after it. hisp_mspmv_dist then runs, on every
 * device at once (the plan's worker threads):
 *   1. y = A_k x + beta*y on the device, the part's local CSR (its rows
 *      [start, end)) straight into the vector: device k's buffer starts at
 *      the part's first row, so a shared first row gets a slot of its own
 *      in front of the owned rows (zeroed first, so beta leaves it alone);
 *      beta*y over owned rows no part computes;
 *   2. a shared first row: its slot goes by peer copy to the owner's
 *      scratch slot k; barrier; the owner adds every slot it received.
 * A part that starts after its first owned row (empty rows no part holds
 * in between) computes into a scratch vector and adds it instead.
 * Where the devices share a backend with device peer copies (CUDA, the
 * reference backend) the boundary entries and the all-gather move device to
 * device; otherwise (OpenCL, whose buffers belong to one context each, and
 * plans over several backends) they go through host memory, as do the
 * axpby steps of a backend without buf_axpby: one entry per shared
 * boundary, and the rows no part computes (empty rows), per call. */
#include "msrep_plan.h"

#include <stdlib.h>
#include <string.h>

#define HISPI_MAGIC_MVEC 0x684d5665u /* "hMVe" */

enum { DIST_ALLOC = 1, DIST_WRITE, DIST_READ, DIST_SPMV, DIST_GATHER, DIST_EACH, DIST_WINDOW };

struct hisp_mvector_s {
    uint32_t magic;
    hisp_mplan plan; /* NULL once the plan is gone */
    hisp_mvec_layout layout;
    int64_t n;
    void *buf[HISP_MPLAN_MAX_DEVICES];  /* the device's entries (from row org()) */
    void *tmp[HISP_MPLAN_MAX_DEVICES];  /* ROWS, OWNED: A_k x where the part starts after org() */
    void *shin[HISP_MPLAN_MAX_DEVICES]; /* ROWS, OWNED: shared rows received, a slot per device */
    struct hisp_mvector_s *next;
};

/* The rows device k owns (ROWS layout). */
static void owned(hisp_mplan plan, int k, int64_t *o0, int64_t *o1)
{
    *o0 = plan->own[k];
    *o1 = plan->own[k + 1];
}

/* The owner of row r: the device whose owned rows hold it. */
static int owner_of(hisp_mplan plan, int64_t r)
{
    for (int j = 0; j < plan->nd; j++)
        if (r >= plan->own[j] && r < plan->own[j + 1]) return j;
    return -1;
}

static hisp_status ownership(hisp_mplan plan)
{
    if (plan->own) return HISP_SUCCESS;
    plan->dhost = false; /* one backend with device peer copies, or the host in between */
    for (int k = 0; k < plan->nd; k++)
        plan->dhost = plan->dhost || !wops(&plan->w[k])->buf_peer_copy ||
                      wops(&plan->w[k]) != wops(&plan->w[0]);
    HISPI_TRY(hispi_calloc(plan->home, (size_t)plan->nd, 8, &plan->dslot));
    HISPI_TRY(
        hispi_alloc(plan->home, (size_t)plan->nd + 1, sizeof *plan->own, (void **)&plan->own));
    int64_t cur = 0;
    for (int k = 0; k < plan->nd; k++) {
        plan->own[k] = cur;
        const hisp_part *p = &plan->parts[k];
        if (p->end > cur) cur = p->end;
    }
    plan->own[plan->nd] = plan->nrows;
    return HISP_SUCCESS;
}

/* ROWS: the first row of device k's buffer -- its part's first row when
 * that row is shared (a slot before the owned rows), else its first owned
 * row. The buffer holds rows [base, own[k+1]). */
static int64_t base(hisp_mplan plan, int k)
{
    const hisp_part *p = &plan->parts[k];
    return p->start < p->end && p->start < plan->own[k] ? p->start : plan->own[k];
}

/* The row of entry 0 of v's buffer on device k: base() for ROWS, 0 for the
 * full-length layouts (REPLICATED, OWNED: row i at entry i). */
static int64_t org(const struct hisp_mvector_s *v, int k)
{
    return v->layout == HISP_MVEC_ROWS ? base(v->plan, k) : 0;
}

/* The kernel writes straight into y's buffer: the part starts at org(). */
static bool direct(const struct hisp_mvector_s *y, int k)
{
    const hisp_part *p = &y->plan->parts[k];
    return p->start >= p->end || p->start == org(y, k);
}

static size_t esize(hisp_mplan plan)
{
    return hisp_type_size(plan->type);
}

/* y[yoff + i] = a*x[xoff + i] + b*y[yoff + i] for i < n on w's device (x
 * NULL: no a*x term; b == 0: y not read): the backend's axpby, or through
 * host memory where it has none. */
static hisp_status axpby(worker *w, int64_t n, double a, const void *x, int64_t xoff, double b,
                         void *y, int64_t yoff)
{
    if (n <= 0) return HISP_SUCCESS;
    const hisp_backend_ops *o = wops(w);
    hisp_context ctx = w->ctx;
    hisp_type t = w->plan->type;
    if (o->buf_axpby) return o->buf_axpby(ctx, ctx->be, t, n, a, x, xoff, b, y, yoff);
    size_t es = esize(w->plan), bytes = (size_t)n * es;
    void *hy = NULL, *hx = NULL;
    hisp_status s = hispi_alloc(ctx, (size_t)n, es, &hy);
    if (!s && x) s = hispi_alloc(ctx, (size_t)n, es, &hx);
    if (!s && b != 0) s = o->buf_read(ctx, ctx->be, y, (size_t)yoff * es, hy, bytes);
    if (!s && x) s = o->buf_read(ctx, ctx->be, x, (size_t)xoff * es, hx, bytes);
    for (int64_t i = 0; !s && i < n; i++)
        hispi_store_real(t, hy, i,
                         (b != 0 ? b * hispi_load_real(t, hy, i) : 0.0) +
                             (x ? a * hispi_load_real(t, hx, i) : 0.0));
    if (!s) s = o->buf_write(ctx, ctx->be, y, (size_t)yoff * es, hy, bytes);
    free(hx);
    free(hy);
    return s;
}

static hisp_status alloc_one(worker *w, size_t entries, void **out)
{
    return wops(w)->buf_alloc(w->ctx, w->ctx->be, (entries ? entries : 1) * esize(w->plan), out);
}

static hisp_status work_alloc(worker *w, struct hisp_mvector_s *v)
{
    hisp_mplan plan = w->plan;
    int k = w->id;
    if (v->layout == HISP_MVEC_REPLICATED) return alloc_one(w, (size_t)v->n, &v->buf[k]);
    if (v->layout == HISPI_MVEC_OWNED) {
        /* zeros: the entries outside the device's rows and window are never
         * written, and the SpMV's padding lanes read x[0] */
        HISPI_TRY(alloc_one(w, (size_t)v->n, &v->buf[k]));
        HISPI_TRY(wops(w)->buf_zero ? wops(w)->buf_zero(w->ctx, w->ctx->be, v->buf[k], 0,
                                                        (size_t)v->n * esize(plan))
                                    : axpby(w, v->n, 0.0, NULL, 0, 0.0, v->buf[k], 0));
        HISPI_TRY(wops(w)->synchronize(w->ctx, w->ctx->be));
    } else {
        HISPI_TRY(alloc_one(w, (size_t)(plan->own[k + 1] - base(plan, k)), &v->buf[k]));
        if (!direct(v, k))
            HISPI_TRY(alloc_one(w, (size_t)(w->part.end - w->part.start), &v->tmp[k]));
    }
    return alloc_one(w, (size_t)plan->nd, &v->shin[k]);
}

static hisp_status work_io(worker *w, struct hisp_mvector_s *v, bool write)
{
    hisp_mplan plan = w->plan;
    const hisp_backend_ops *o = wops(w);
    void *be = w->ctx->be;
    size_t es = esize(plan);
    int k = w->id;
    int64_t o0 = 0, o1 = v->n, b = org(v, k);
    if (v->layout != HISP_MVEC_REPLICATED) {
        owned(plan, k, &o0, &o1);
    } else if (!write && k > 0) {
        return HISP_SUCCESS; /* a replicated vector reads from device 0 */
    }
    if (o1 <= o0) return HISP_SUCCESS;
    size_t bytes = (size_t)(o1 - o0) * es, off = (size_t)(o0 - b) * es;
    if (write)
        HISPI_TRY(
            o->buf_write(w->ctx, be, v->buf[k], off, (const char *)plan->dsrc + o0 * es, bytes));
    else
        HISPI_TRY(o->buf_read(w->ctx, be, v->buf[k], off, (char *)plan->ddst + o0 * es, bytes));
    return o->synchronize(w->ctx, be);
}

/* Steps 1-2 of the file comment, y = A x with x full-length (REPLICATED, or
 * OWNED with the window filled) and y ROWS or OWNED; st: a failure before
 * (nothing computed then). Every worker reaches the barrier. */
static hisp_status work_spmv(worker *w, struct hisp_mvector_s *x, struct hisp_mvector_s *y,
                             hisp_status st)
{
    hisp_mplan plan = w->plan;
    const hisp_backend_ops *o = wops(w);
    hisp_context ctx = w->ctx;
    void *be = ctx->be;
    hisp_type t = plan->type;
    size_t es = esize(plan);
    int k = w->id;
    int64_t o0, o1, s = w->part.start, e = w->part.end, b = org(y, k);
    owned(plan, k, &o0, &o1);
    double beta = plan->beta;
    if (!st && s < e && s < o0 && (s + 1 < o0 || owner_of(plan, s) < 0 || owner_of(plan, s) == k))
        st = hispi_fail(ctx, HISP_ERR_BACKEND,
                        "msrep: part %d starts %lld rows before the rows it owns", k,
                        (long long)(o0 - s));
    if (!st && s < e && s < o0) /* the shared row's slot: 0, which beta keeps */
        st = axpby(w, 1, 0.0, NULL, 0, 0.0, y->buf[k], s - b);
    if (!st && s < e) st = o->mark_record(ctx, be, w->m0);
    w->dot_fused = false;
    if (!st && s < e && direct(y, k) && plan->ddot && o->csr_spmv_dot && !plan->vendor &&
        beta == 0 && plan->alpha == 1) { /* y = A_k x and its rows' dot with x, one pass */
        unsigned char r[8];
        st = o->csr_spmv_dot(ctx, be, w->dev, x->buf[k], s - org(x, k), y->buf[k], NULL, 0, r);
        if (st == HISP_ERR_UNSUPPORTED) { /* the plain product, and the dot's own pass */
            hispi_clear_error(ctx);
            st = HISP_SUCCESS;
        } else if (!st) {
            w->dot_fused = true;
            plan->ddot[k] = hispi_load_real(t, r, 0);
        }
    }
    if (!st && s < e && direct(y, k)) {
        if (!w->dot_fused)
            st = o->csr_spmv(ctx, be, w->dev, HISP_OP_N, plan->alpha, x->buf[k], beta, y->buf[k]);
    } else if (!st && s < e) { /* the part's rows start inside y's buffer */
        if (!y->tmp[k]) st = alloc_one(w, (size_t)(e - s), &y->tmp[k]);
        if (!st)
            st = o->csr_spmv(ctx, be, w->dev, HISP_OP_N, plan->alpha, x->buf[k], 0.0, y->tmp[k]);
        if (!st) st = axpby(w, e - s, 1.0, y->tmp[k], 0, beta, y->buf[k], s - b);
        /* s > o0: owned rows [o0, s) no part holds */
        if (!st) st = axpby(w, s - o0, 0.0, NULL, 0, beta, y->buf[k], o0 - b);
    }
    int64_t c1 = s < e && e > o0 ? e : o0; /* owned rows [c1, o1) no part computes */
    if (!st && o1 > c1) st = axpby(w, o1 - c1, 0.0, NULL, 0, beta, y->buf[k], c1 - b);
    if (!st && s < e && s < o0 && !plan->dhost)
        st = o->buf_peer_copy(ctx, be, plan->w[owner_of(plan, s)].ctx->be,
                              y->shin[owner_of(plan, s)], (size_t)k * es, be, y->buf[k],
                              (size_t)(s - b) * es, es);
    if (!st && s < e) st = o->mark_record(ctx, be, w->m1);
    if (!st) st = o->synchronize(ctx, be);
    if (!st && s < e && s < o0 && plan->dhost) /* the boundary entry to the host */
        st = o->buf_read(ctx, be, y->buf[k], (size_t)(s - b) * es,
                         (char *)plan->dslot + (size_t)k * es, es);
    w->gather_ms = w->compute_ms = 0;
    if (!st && s < e && o->mark_elapsed(ctx, be, w->m0, w->m1, &w->compute_ms))
        hispi_clear_error(ctx); /* no device timing: the breakdown shows 0 */
    w->xst = st;
    hispi_barrier_wait(&plan->bar); /* every shared row is in its owner's scratch */
    double tm = hispi_now_ms();
    for (int j = 0; j < plan->nd; j++)
        if (plan->w[j].xst) return st;
    for (int j = 0; j < plan->nd && !st; j++) {
        const hisp_part *p = &plan->parts[j];
        if (j == k || p->start >= p->end || p->start >= plan->own[j]) continue;
        if (owner_of(plan, p->start) != k) continue;
        if (!plan->dhost) {
            st = axpby(w, 1, 1.0, y->shin[k], j, 1.0, y->buf[k], p->start - b);
        } else { /* the entry from the host: y[row] += slot j */
            char v[8];
            size_t off = (size_t)(p->start - b) * es;
            st = o->buf_read(ctx, be, y->buf[k], off, v, es);
            if (st) break;
            hispi_store_real(t, v, 0,
                             hispi_load_real(t, v, 0) + hispi_load_real(t, plan->dslot, j));
            st = o->buf_write(ctx, be, y->buf[k], off, v, es);
        }
    }
    if (!st) st = o->synchronize(ctx, be);
    w->merge_ms = hispi_now_ms() - tm;
    return st;
}

/* Every device pulls the rows the others own (peer copies on its own
 * queue; the sources are not written meanwhile), or through host memory:
 * each device stages its rows, then after a barrier reads them all. */
static hisp_status work_gather(worker *w)
{
    hisp_mplan plan = w->plan;
    struct hisp_mvector_s *src = plan->dy, *dst = plan->dx;
    const hisp_backend_ops *o = wops(w);
    void *be = w->ctx->be;
    size_t es = esize(plan);
    int k = w->id;
    if (plan->dhost) {
        int64_t o0 = plan->own[k], o1 = plan->own[k + 1];
        hisp_status st = HISP_SUCCESS;
        if (o1 > o0)
            st = o->buf_read(w->ctx, be, src->buf[k], (size_t)(o0 - org(src, k)) * es,
                             (char *)plan->dstage + (size_t)o0 * es, (size_t)(o1 - o0) * es);
        w->xst = st;
        hispi_barrier_wait(&plan->bar); /* every device's rows are staged */
        for (int j = 0; j < plan->nd; j++)
            if (plan->w[j].xst) return st;
        if (src->n > 0)
            HISPI_TRY(o->buf_write(w->ctx, be, dst->buf[k], 0, plan->dstage, (size_t)src->n * es));
        return o->synchronize(w->ctx, be);
    }
    for (int j = 0; j < plan->nd; j++) {
        int64_t o0 = plan->own[j], o1 = plan->own[j + 1];
        if (o1 > o0)
            HISPI_TRY(o->buf_peer_copy(w->ctx, be, be, dst->buf[k], (size_t)o0 * es,
                                       plan->w[j].ctx->be, src->buf[j],
                                       (size_t)(o0 - org(src, j)) * es, (size_t)(o1 - o0) * es));
    }
    return o->synchronize(w->ctx, be);
}

/* The x rows device k's product reads: the part's column window [c0, c1)
 * and its own rows [start, end) (a fused dot pairs y's rows with x's); empty
 * for an empty part. */
static void window(hisp_mplan plan, int k, int64_t *lo, int64_t *hi)
{
    const worker *w = &plan->w[k];
    *lo = *hi = 0;
    if (part_empty(w)) return;
    *lo = w->part.start;
    *hi = w->part.end;
    if (w->c1 > w->c0) {
        *lo = w->c0 < *lo ? w->c0 : *lo;
        *hi = w->c1 > *hi ? w->c1 : *hi;
    }
}

/* [a, b) = device j's owned rows within device k's window, as far as k must
 * fetch them into xs (x's rows are in place on k when xs is x). */
static bool piece(hisp_mplan plan, const struct hisp_mvector_s *x, const struct hisp_mvector_s *xs,
                  int k, int j, int64_t *a, int64_t *b)
{
    int64_t lo, hi;
    window(plan, k, &lo, &hi);
    *a = plan->own[j] > lo ? plan->own[j] : lo;
    *b = plan->own[j + 1] < hi ? plan->own[j + 1] : hi;
    return *a < *b && !(j == k && xs == x);
}

/* dot(x, y) over device k's owned rows (views of the two buffers). */
static hisp_status owned_dot(worker *w, struct hisp_mvector_s *x, struct hisp_mvector_s *y,
                             double *out)
{
    hisp_type t = w->plan->type;
    int k = w->id;
    int64_t o0, o1;
    owned(w->plan, k, &o0, &o1);
    *out = 0;
    if (o1 <= o0) return HISP_SUCCESS;
    hisp_vector vx = NULL, vy = NULL;
    unsigned char r[8];
    hisp_status st = hispi_vector_view(w->ctx, t, o1 - o0, x->buf[k], o0 - org(x, k), &vx);
    if (!st) st = hispi_vector_view(w->ctx, t, o1 - o0, y->buf[k], o0 - org(y, k), &vy);
    if (!st) st = hisp_vector_dot(vx, vy, hisp_result_host(r));
    if (!st) *out = hispi_load_real(t, r, 0);
    hisp_vector_destroy(&vx);
    hisp_vector_destroy(&vy);
    return st;
}

/* hispi_mspmv_window on one device: x's writers done (this queue), then
 * each device pulls into xs the rows of its window that the others own
 * (peer copies on its own queue; through host memory where the plan has
 * none: each device first stages the rows the others need), then the
 * product into y and the merge (work_spmv), then the dot's pass where the
 * kernel did not make it. */
static hisp_status work_window(worker *w)
{
    hisp_mplan plan = w->plan;
    struct hisp_mvector_s *x = plan->dv, *xs = plan->dx, *y = plan->dy;
    const hisp_backend_ops *o = wops(w);
    void *be = w->ctx->be;
    size_t es = esize(plan);
    int k = w->id;
    int64_t a, b;
    double t0 = hispi_now_ms();
    hisp_status st = o->synchronize(w->ctx, be);
    w->wait_ms = hispi_now_ms() - t0;
    if (!st && plan->dhost) { /* the hull of what the others need of this device's rows */
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        for (int j = 0; j < plan->nd; j++)
            if (piece(plan, x, xs, j, k, &a, &b)) {
                lo = a < lo ? a : lo;
                hi = b > hi ? b : hi;
            }
        if (lo < hi)
            st = o->buf_read(w->ctx, be, x->buf[k], (size_t)(lo - org(x, k)) * es,
                             (char *)plan->dstage + (size_t)lo * es, (size_t)(hi - lo) * es);
    }
    w->xst = st;
    hispi_barrier_wait(&plan->bar); /* every device's x is complete (and staged) */
    for (int j = 0; j < plan->nd; j++)
        if (plan->w[j].xst) return st; /* all return here: no worker waits at the next barrier */
    for (int j = 0; j < plan->nd && !st; j++) {
        if (!piece(plan, x, xs, k, j, &a, &b)) continue;
        if (plan->dhost)
            st = o->buf_write(w->ctx, be, xs->buf[k], (size_t)a * es,
                              (const char *)plan->dstage + (size_t)a * es, (size_t)(b - a) * es);
        else
            st = o->buf_peer_copy(w->ctx, be, be, xs->buf[k], (size_t)a * es, plan->w[j].ctx->be,
                                  x->buf[j], (size_t)(a - org(x, j)) * es, (size_t)(b - a) * es);
    }
    if (!st) st = o->synchronize(w->ctx, be);
    w->x_ms = hispi_now_ms() - t0;
    st = work_spmv(w, xs, y, st);
    if (!st && plan->ddot && !w->dot_fused) st = owned_dot(w, x, y, &plan->ddot[k]);
    return st;
}

hisp_status hispi_msrep_dist_work(worker *w)
{
    hisp_mplan plan = w->plan;
    switch (plan->dist) {
    case DIST_ALLOC:
        return work_alloc(w, plan->dv);
    case DIST_WRITE:
        return work_io(w, plan->dv, true);
    case DIST_READ:
        return work_io(w, plan->dv, false);
    case DIST_GATHER:
        return work_gather(w);
    case DIST_EACH:
        return plan->each(w, plan->each_arg);
    case DIST_WINDOW:
        return work_window(w);
    default:
        w->x_ms = 0;
        return work_spmv(w, plan->dx, plan->dy, HISP_SUCCESS);
    }
}

/* One job on every worker; the first failure goes to the plan's context. */
static hisp_status run_job(hisp_mplan plan, int job)
{
    for (int k = 0; k < plan->nd; k++)
        plan->w[k].st = HISP_SUCCESS;
    plan->dist = job;
    hispi_msrep_run_round(plan);
    plan->dist = 0;
    return hispi_msrep_worker_failure(plan);
}

static bool plan_ok(hisp_mplan plan)
{
    return hispi_handle_live(plan, HISPI_H_MPLAN);
}

/* Live: neither it nor its plan (nor the plan's context) destroyed. */
static bool vec_ok(const struct hisp_mvector_s *v)
{
    return hispi_handle_live(v, HISPI_H_MVECTOR);
}

/* What hisp_mvector_destroy accepts: live, or orphaned by its plan's end. */
static bool vec_known(const struct hisp_mvector_s *v)
{
    return hispi_handle_known(v, HISPI_H_MVECTOR);
}

static void free_buffers(struct hisp_mvector_s *v)
{
    hisp_mplan plan = v->plan;
    for (int k = 0; plan && k < plan->nd; k++) {
        worker *w = &plan->w[k];
        void *bs[3] = {v->buf[k], v->tmp[k], v->shin[k]};
        for (int i = 0; i < 3; i++)
            if (bs[i] && w->ctx) wops(w)->buf_free(w->ctx->be, bs[i]);
        v->buf[k] = v->tmp[k] = v->shin[k] = NULL;
    }
}

void hispi_msrep_dist_release(hisp_mplan plan)
{
    for (struct hisp_mvector_s *v = plan->vectors; v; v = v->next) {
        free_buffers(v);
        v->plan = NULL; /* the handle stays valid for hisp_mvector_destroy */
    }
    plan->vectors = NULL;
    free(plan->own);
    plan->own = NULL;
    free(plan->dslot);
    plan->dslot = NULL;
}

hisp_status hispi_msrep_each(hisp_mplan plan, hisp_status (*fn)(worker *w, void *arg), void *arg)
{
    plan->each = fn;
    plan->each_arg = arg;
    hisp_status s = run_job(plan, DIST_EACH);
    plan->each = NULL;
    plan->each_arg = NULL;
    return s;
}

bool hispi_mvector_of(hisp_mvector v, hisp_mplan plan, hisp_mvec_layout *layout)
{
    if (!vec_ok(v) || !plan || v->plan != plan) return false;
    *layout = v->layout;
    return true;
}

void hispi_mvector_slice(hisp_mvector v, int k, void **buf, int64_t *off, int64_t *n)
{
    hisp_mplan plan = v->plan;
    *buf = v->buf[k];
    *off = plan->own[k] - org(v, k);
    *n = plan->own[k + 1] - plan->own[k];
}

hisp_status hisp_mvector_create(hisp_mplan plan, hisp_mvec_layout layout, hisp_mvector *out)
{
    if (!plan_ok(plan)) return HISP_ERR_INVALID_HANDLE;
    hisp_context h = plan->home;
    if (!out) return hispi_fail(h, HISP_ERR_INVALID_ARGUMENT, "NULL vector pointer");
    *out = NULL;
    if (layout != HISP_MVEC_REPLICATED && layout != HISP_MVEC_ROWS)
        return hispi_fail(h, HISP_ERR_INVALID_ARGUMENT, "unknown vector layout %d", (int)layout);
    return hispi_mvector_create(plan, layout, out);
}

hisp_status hispi_mvector_create(hisp_mplan plan, hisp_mvec_layout layout, hisp_mvector *out)
{
    hisp_context h = plan->home;
    *out = NULL;
    if (plan->columns || plan->hisparse)
        return hispi_fail(h, HISP_ERR_UNSUPPORTED,
                          "distributed vectors need a row partition (rowblock, pcsr, pcoo) run by "
                          "the CSR kernel, not %s%s",
                          hisp_partition_name(plan->kind), plan->hisparse ? " with HiSparse" : "");
    if (layout == HISPI_MVEC_OWNED && plan->nrows != plan->ncols)
        return hispi_fail(h, HISP_ERR_INVALID_ARGUMENT, "OWNED vectors need a square matrix");
    HISPI_TRY(ownership(plan));
    struct hisp_mvector_s *v = NULL;
    HISPI_TRY(hispi_calloc(h, 1, sizeof *v, (void **)&v));
    if (hispi_handle_add(v, HISPI_H_MVECTOR, plan)) {
        free(v);
        return hispi_fail(h, HISP_ERR_OUT_OF_HOST_MEMORY, "no room for a vector handle");
    }
    v->magic = HISPI_MAGIC_MVEC;
    v->plan = plan;
    v->layout = layout;
    v->n = layout == HISP_MVEC_REPLICATED ? plan->ncols : plan->nrows;
    plan->dv = v;
    hisp_status s = run_job(plan, DIST_ALLOC);
    plan->dv = NULL;
    if (s) {
        free_buffers(v);
        hispi_handle_free(v);
        return s;
    }
    v->next = plan->vectors;
    plan->vectors = v;
    *out = v;
    return HISP_SUCCESS;
}

void hisp_mvector_destroy(hisp_mvector *pv)
{
    if (!pv || !vec_known(*pv)) return;
    struct hisp_mvector_s *v = *pv;
    hisp_mplan plan = v->plan;
    if (plan) {
        free_buffers(v);
        for (struct hisp_mvector_s **p = &plan->vectors; *p; p = &(*p)->next)
            if (*p == v) {
                *p = v->next;
                break;
            }
    }
    v->magic = 0;
    hispi_handle_free(v);
    *pv = NULL;
}

static hisp_status vec_check(hisp_mvector v, hisp_mplan *plan)
{
    if (!vec_ok(v)) return HISP_ERR_INVALID_HANDLE;
    if (!v->plan || !plan_ok(v->plan)) return HISP_ERR_INVALID_HANDLE; /* its plan is gone */
    *plan = v->plan;
    return HISP_SUCCESS;
}

hisp_status hisp_mvector_length(hisp_mvector v, int64_t *n)
{
    hisp_mplan plan;
    HISPI_TRY(vec_check(v, &plan));
    if (!n) return hispi_fail(plan->home, HISP_ERR_INVALID_ARGUMENT, "NULL length");
    *n = v->n;
    return HISP_SUCCESS;
}

/* A write (src) or read (dst) between the host and every device. */
static hisp_status transfer(hisp_mvector v, const void *src, void *dst)
{
    hisp_mplan plan;
    HISPI_TRY(vec_check(v, &plan));
    if (!src && !dst) return hispi_fail(plan->home, HISP_ERR_INVALID_ARGUMENT, "NULL host array");
    plan->dv = v;
    plan->dsrc = src;
    plan->ddst = dst;
    hisp_status s = run_job(plan, src ? DIST_WRITE : DIST_READ);
    plan->dv = NULL;
    plan->dsrc = NULL;
    plan->ddst = NULL;
    return s;
}

hisp_status hisp_mvector_write(hisp_mvector v, const void *src)
{
    return transfer(v, src, NULL);
}

hisp_status hisp_mvector_read(hisp_mvector v, void *dst)
{
    return transfer(v, NULL, dst);
}

hisp_status hisp_mspmv_dist(hisp_mplan plan, const void *alpha, hisp_mvector x, const void *beta,
                            hisp_mvector y)
{
    if (!plan_ok(plan)) return HISP_ERR_INVALID_HANDLE;
    hisp_context h = plan->home;
    if (!vec_ok(x) || !vec_ok(y) || x->plan != plan || y->plan != plan)
        return hispi_fail(h, HISP_ERR_INVALID_HANDLE, "x and y must be vectors of this plan");
    if (x->layout != HISP_MVEC_REPLICATED || y->layout != HISP_MVEC_ROWS)
        return hispi_fail(h, HISP_ERR_INVALID_ARGUMENT,
                          "hisp_mspmv_dist takes a replicated x and a row-distributed y");
    if (!alpha || !beta) return hispi_fail(h, HISP_ERR_INVALID_ARGUMENT, "alpha or beta is NULL");
    plan->alpha = hispi_load_real(plan->type, alpha, 0);
    plan->beta = hispi_load_real(plan->type, beta, 0);
    plan->dx = x;
    plan->dy = y;
    double t0 = hispi_now_ms();
    hisp_status s = run_job(plan, DIST_SPMV);
    plan->dx = plan->dy = NULL;
    if (!s) {
        hisp_mplan_breakdown *bd = &plan->bd;
        hispi_msrep_collect(plan); /* kernel per device (device marks), boundary adds as merge */
        bd->total_ms = hispi_now_ms() - t0;
        bd->device_merge = 1; /* the boundary rows are added on their owners */
    }
    return s;
}

hisp_status hisp_mvector_allgather(hisp_mvector src, hisp_mvector dst)
{
    hisp_mplan plan;
    HISPI_TRY(vec_check(src, &plan));
    if (!vec_ok(dst) || dst->plan != plan)
        return hispi_fail(plan->home, HISP_ERR_INVALID_HANDLE, "dst must be a vector of this plan");
    if (src->layout != HISP_MVEC_ROWS || dst->layout != HISP_MVEC_REPLICATED || src->n != dst->n)
        return hispi_fail(plan->home, HISP_ERR_INVALID_ARGUMENT,
                          "allgather takes a ROWS vector into a REPLICATED one of the same length "
                          "(%lld and %lld entries; square matrices)",
                          (long long)src->n, (long long)dst->n);
    if (plan->dhost)
        HISPI_TRY(
            hispi_alloc(plan->home, (size_t)(src->n > 0 ? src->n : 1), esize(plan), &plan->dstage));
    plan->dy = src;
    plan->dx = dst;
    hisp_status s = run_job(plan, DIST_GATHER);
    plan->dx = plan->dy = NULL;
    free(plan->dstage);
    plan->dstage = NULL;
    return s;
}

hisp_status hispi_mspmv_window(hisp_mplan plan, hisp_mvector x, hisp_mvector xs, hisp_mvector y,
                               double *dot)
{
    if (!plan_ok(plan)) return HISP_ERR_INVALID_HANDLE;
    hisp_context h = plan->home;
    if (plan->nrows != plan->ncols)
        return hispi_fail(h, HISP_ERR_INVALID_ARGUMENT,
                          "msrep: the windowed product needs a square matrix");
    bool full = xs && (xs->layout == HISP_MVEC_REPLICATED || xs->layout == HISPI_MVEC_OWNED);
    if (!vec_ok(x) || !vec_ok(y) || !full || x->plan != plan || xs->plan != plan ||
        y->plan != plan || x->layout == HISP_MVEC_REPLICATED || y->layout == HISP_MVEC_REPLICATED ||
        (x->layout == HISPI_MVEC_OWNED && xs != x) || x == y || xs == y)
        return hispi_fail(h, HISP_ERR_INVALID_ARGUMENT,
                          "msrep: the windowed product takes x (ROWS, or OWNED and its own "
                          "scratch), a full-length scratch and y (ROWS or OWNED) of the plan, y "
                          "apart");
    if (plan->dhost)
        HISPI_TRY(hispi_alloc(h, (size_t)(x->n > 0 ? x->n : 1), esize(plan), &plan->dstage));
    plan->alpha = 1.0;
    plan->beta = 0.0;
    plan->dv = x;
    plan->dx = xs;
    plan->dy = y;
    plan->ddot = dot;
    for (int k = 0; dot && k < plan->nd; k++)
        dot[k] = 0;
    double t0 = hispi_now_ms();
    hisp_status s = run_job(plan, DIST_WINDOW);
    plan->dv = plan->dx = plan->dy = NULL;
    plan->ddot = NULL;
    free(plan->dstage);
    plan->dstage = NULL;
    if (!s) {
        hispi_msrep_collect(plan);
        plan->bd.total_ms = hispi_now_ms() - t0;
        plan->bd.device_merge = 1;
    }
    return s;
}
