/* MSREP distributed vectors, each device's share of their jobs (run on the
 * plan's worker threads; the handles and the calls that start the jobs are
 * in msrep_mvector.c). Distributed vectors stay on a plan's devices between
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

/* The kernel writes straight into y's buffer: the part starts at hispi_mvector_org(). */
static bool direct(const struct hisp_mvector_s *y, int k)
{
    const hisp_part *p = &y->plan->parts[k];
    return p->start >= p->end || p->start == hispi_mvector_org(y, k);
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
    hisp_context ctx = w->ctx;
    hisp_type t = w->plan->type;
    if (HISPI_BE_HAS(w->ctx, buf_axpby))
        return HISPI_BE(ctx, buf_axpby, t, n, a, x, xoff, b, y, yoff);
    size_t es = esize(w->plan), bytes = (size_t)n * es;
    void *hy = NULL, *hx = NULL;
    hisp_status s = hispi_alloc(ctx, (size_t)n, es, &hy);
    if (!s && x) s = hispi_alloc(ctx, (size_t)n, es, &hx);
    if (!s && b != 0) s = HISPI_BE(ctx, buf_read, y, (size_t)yoff * es, hy, bytes);
    if (!s && x) s = HISPI_BE(ctx, buf_read, x, (size_t)xoff * es, hx, bytes);
    for (int64_t i = 0; !s && i < n; i++)
        hispi_store_real(t, hy, i,
                         (b != 0 ? b * hispi_load_real(t, hy, i) : 0.0) +
                             (x ? a * hispi_load_real(t, hx, i) : 0.0));
    if (!s) s = HISPI_BE(ctx, buf_write, y, (size_t)yoff * es, hy, bytes);
    free(hx);
    free(hy);
    return s;
}

static hisp_status alloc_one(worker *w, size_t entries, void **out)
{
    return HISPI_BE(w->ctx, buf_alloc, (entries ? entries : 1) * esize(w->plan), out);
}

/* A new buffer of entries zeros: a new distributed vector reads as zeros, as
 * a new hisp_vector does (OWNED: the entries outside the device's rows and
 * window are never written, and the SpMV's padding lanes read x[0]). */
static hisp_status alloc_zeros(worker *w, size_t entries, void **out)
{
    HISPI_TRY(alloc_one(w, entries, out));
    if (!entries) return HISP_SUCCESS;
    return HISPI_BE_HAS(w->ctx, buf_zero)
               ? HISPI_BE(w->ctx, buf_zero, *out, 0, entries * esize(w->plan))
               : axpby(w, (int64_t)entries, 0.0, NULL, 0, 0.0, *out, 0);
}

static hisp_status work_alloc(worker *w, struct hisp_mvector_s *v)
{
    hisp_mplan plan = w->plan;
    int k = w->id;
    if (v->layout == HISP_MVEC_REPLICATED || v->layout == HISPI_MVEC_OWNED) {
        HISPI_TRY(alloc_zeros(w, (size_t)v->n, &v->buf[k]));
    } else {
        HISPI_TRY(
            alloc_zeros(w, (size_t)(plan->own[k + 1] - hispi_mvector_base(plan, k)), &v->buf[k]));
        if (!direct(v, k))
            HISPI_TRY(alloc_one(w, (size_t)(w->part.end - w->part.start), &v->tmp[k]));
    }
    HISPI_TRY(alloc_one(w, (size_t)plan->nd, &v->shin[k]));
    return HISPI_BE_SYNC(w->ctx);
}

static hisp_status work_io(worker *w, struct hisp_mvector_s *v, bool write)
{
    hisp_mplan plan = w->plan;
    size_t es = esize(plan);
    int k = w->id;
    int64_t o0 = 0, o1 = v->n, b = hispi_mvector_org(v, k);
    if (v->layout != HISP_MVEC_REPLICATED) {
        owned(plan, k, &o0, &o1);
    } else if (!write && k > 0) {
        return HISP_SUCCESS; /* a replicated vector reads from device 0 */
    }
    if (o1 <= o0) return HISP_SUCCESS;
    size_t bytes = (size_t)(o1 - o0) * es, off = (size_t)(o0 - b) * es;
    if (write)
        HISPI_TRY(
            HISPI_BE(w->ctx, buf_write, v->buf[k], off, (const char *)plan->dsrc + o0 * es, bytes));
    else
        HISPI_TRY(HISPI_BE(w->ctx, buf_read, v->buf[k], off, (char *)plan->ddst + o0 * es, bytes));
    return HISPI_BE_SYNC(w->ctx);
}

/* Steps 1-2 of the file comment, y = A x with x full-length (REPLICATED, or
 * OWNED with the window filled) and y ROWS or OWNED; st: a failure before
 * (nothing computed then). Every worker reaches the barrier. */
static hisp_status work_spmv(worker *w, struct hisp_mvector_s *x, struct hisp_mvector_s *y,
                             hisp_status st)
{
    hisp_mplan plan = w->plan;
    hisp_context ctx = w->ctx;
    void *be = ctx->be;
    hisp_type t = plan->type;
    size_t es = esize(plan);
    int k = w->id;
    int64_t o0, o1, s = w->part.start, e = w->part.end, b = hispi_mvector_org(y, k);
    owned(plan, k, &o0, &o1);
    double beta = plan->beta;
    if (!st && hispi_msrep_hook.fail_part == k + 1) /* a test hook */
        st = hispi_fail(ctx, HISP_ERR_BACKEND, "msrep: part %d failed (test hook)", k);
    if (!st && s < e && s < o0 && (s + 1 < o0 || owner_of(plan, s) < 0 || owner_of(plan, s) == k))
        st = hispi_fail(ctx, HISP_ERR_BACKEND,
                        "msrep: part %d starts %lld rows before the rows it owns", k,
                        (long long)(o0 - s));
    if (!st && s < e && s < o0) /* the shared row's slot: 0, which beta keeps */
        st = axpby(w, 1, 0.0, NULL, 0, 0.0, y->buf[k], s - b);
    if (!st && s < e) st = HISPI_BE(ctx, mark_record, w->m0);
    w->dot_fused = false;
    if (!st && s < e && direct(y, k) && plan->ddot && HISPI_BE_HAS(w->ctx, csr_spmv_dot) &&
        !plan->vendor && beta == 0 &&
        plan->alpha == 1) { /* y = A_k x and its rows' dot with x, one pass */
        unsigned char r[8];
        st = HISPI_BE(ctx, csr_spmv_dot, w->dev, x->buf[k], s - hispi_mvector_org(x, k), y->buf[k],
                      NULL, 0, r);
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
            st =
                HISPI_BE(ctx, csr_spmv, w->dev, HISP_OP_N, plan->alpha, x->buf[k], beta, y->buf[k]);
    } else if (!st && s < e) { /* the part's rows start inside y's buffer */
        if (!y->tmp[k]) st = alloc_one(w, (size_t)(e - s), &y->tmp[k]);
        if (!st)
            st = HISPI_BE(ctx, csr_spmv, w->dev, HISP_OP_N, plan->alpha, x->buf[k], 0.0, y->tmp[k]);
        if (!st) st = axpby(w, e - s, 1.0, y->tmp[k], 0, beta, y->buf[k], s - b);
        /* s > o0: owned rows [o0, s) no part holds */
        if (!st) st = axpby(w, s - o0, 0.0, NULL, 0, beta, y->buf[k], o0 - b);
    }
    int64_t c1 = s < e && e > o0 ? e : o0; /* owned rows [c1, o1) no part computes */
    if (!st && o1 > c1) st = axpby(w, o1 - c1, 0.0, NULL, 0, beta, y->buf[k], c1 - b);
    if (!st && s < e && s < o0 && !plan->dhost)
        st = HISPI_BE(ctx, buf_peer_copy, plan->w[owner_of(plan, s)].ctx->be,
                      y->shin[owner_of(plan, s)], (size_t)k * es, be, y->buf[k],
                      (size_t)(s - b) * es, es);
    if (!st && s < e) st = HISPI_BE(ctx, mark_record, w->m1);
    if (!st) st = HISPI_BE_SYNC(ctx);
    if (!st && s < e && s < o0 && plan->dhost) /* the boundary entry to the host */
        st = HISPI_BE(ctx, buf_read, y->buf[k], (size_t)(s - b) * es,
                      (char *)plan->dslot + (size_t)k * es, es);
    w->gather_ms = w->compute_ms = 0;
    if (!st && s < e && HISPI_BE(ctx, mark_elapsed, w->m0, w->m1, &w->compute_ms))
        hispi_clear_error(ctx); /* no device timing: the breakdown shows 0 */
    /* every shared row is in its owner's scratch; a failure anywhere: all return */
    if (!hispi_barrier_wait_ok(&plan->bar, st)) return st;
    double tm = hispi_now_ms();
    for (int j = 0; j < plan->nd && !st; j++) {
        const hisp_part *p = &plan->parts[j];
        if (j == k || p->start >= p->end || p->start >= plan->own[j]) continue;
        if (owner_of(plan, p->start) != k) continue;
        if (!plan->dhost) {
            st = axpby(w, 1, 1.0, y->shin[k], j, 1.0, y->buf[k], p->start - b);
        } else { /* the entry from the host: y[row] += slot j */
            char v[8];
            size_t off = (size_t)(p->start - b) * es;
            st = HISPI_BE(ctx, buf_read, y->buf[k], off, v, es);
            if (st) break;
            hispi_store_real(t, v, 0,
                             hispi_load_real(t, v, 0) + hispi_load_real(t, plan->dslot, j));
            st = HISPI_BE(ctx, buf_write, y->buf[k], off, v, es);
        }
    }
    if (!st) st = HISPI_BE_SYNC(ctx);
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
    void *be = w->ctx->be;
    size_t es = esize(plan);
    int k = w->id;
    if (plan->dhost) {
        int64_t o0 = plan->own[k], o1 = plan->own[k + 1];
        hisp_status st = HISP_SUCCESS;
        if (o1 > o0)
            st = HISPI_BE(w->ctx, buf_read, src->buf[k],
                          (size_t)(o0 - hispi_mvector_org(src, k)) * es,
                          (char *)plan->dstage + (size_t)o0 * es, (size_t)(o1 - o0) * es);
        if (!hispi_barrier_wait_ok(&plan->bar, st)) return st; /* every device's rows are staged */
        if (src->n > 0)
            HISPI_TRY(
                HISPI_BE(w->ctx, buf_write, dst->buf[k], 0, plan->dstage, (size_t)src->n * es));
        return HISPI_BE_SYNC(w->ctx);
    }
    for (int j = 0; j < plan->nd; j++) {
        int64_t o0 = plan->own[j], o1 = plan->own[j + 1];
        if (o1 > o0)
            HISPI_TRY(HISPI_BE(w->ctx, buf_peer_copy, be, dst->buf[k], (size_t)o0 * es,
                               plan->w[j].ctx->be, src->buf[j],
                               (size_t)(o0 - hispi_mvector_org(src, j)) * es,
                               (size_t)(o1 - o0) * es));
    }
    return HISPI_BE_SYNC(w->ctx);
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
    hisp_status st =
        hispi_vector_view(w->ctx, t, o1 - o0, x->buf[k], o0 - hispi_mvector_org(x, k), &vx);
    if (!st)
        st = hispi_vector_view(w->ctx, t, o1 - o0, y->buf[k], o0 - hispi_mvector_org(y, k), &vy);
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
    void *be = w->ctx->be;
    size_t es = esize(plan);
    int k = w->id;
    int64_t a, b;
    double t0 = hispi_now_ms();
    hisp_status st = HISPI_BE_SYNC(w->ctx);
    w->wait_ms = hispi_now_ms() - t0;
    if (!st && plan->dhost) { /* the hull of what the others need of this device's rows */
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        for (int j = 0; j < plan->nd; j++)
            if (piece(plan, x, xs, j, k, &a, &b)) {
                lo = a < lo ? a : lo;
                hi = b > hi ? b : hi;
            }
        if (lo < hi)
            st = HISPI_BE(w->ctx, buf_read, x->buf[k], (size_t)(lo - hispi_mvector_org(x, k)) * es,
                          (char *)plan->dstage + (size_t)lo * es, (size_t)(hi - lo) * es);
    }
    /* every device's x is complete (and staged); a failure anywhere: all
     * return here, so no worker waits at work_spmv's barrier alone */
    if (!hispi_barrier_wait_ok(&plan->bar, st)) return st;
    for (int j = 0; j < plan->nd && !st; j++) {
        if (!piece(plan, x, xs, k, j, &a, &b)) continue;
        if (plan->dhost)
            st = HISPI_BE(w->ctx, buf_write, xs->buf[k], (size_t)a * es,
                          (const char *)plan->dstage + (size_t)a * es, (size_t)(b - a) * es);
        else
            st = HISPI_BE(w->ctx, buf_peer_copy, be, xs->buf[k], (size_t)a * es, plan->w[j].ctx->be,
                          x->buf[j], (size_t)(a - hispi_mvector_org(x, j)) * es,
                          (size_t)(b - a) * es);
    }
    if (!st) st = HISPI_BE_SYNC(w->ctx);
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
