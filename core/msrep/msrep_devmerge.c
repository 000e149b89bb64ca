/* hisp_mspmv_vec (x and y on a device): the same job as hisp_mspmv, device to
 * device where the backend has buf_peer_copy and buf_axpby: each worker
 * copies x from the vectors' device (op N: relayed between the devices) and
 * its partial result back to it, and the caller's thread merges there with
 * axpby kernels on a merge context of the plan's own. Otherwise x and y go
 * through the host (hisp_mspmv). */
#include "msrep_plan.h"

#include <stdlib.h>
#include <string.h>

/* x of op N relayed: every worker first fetches chunk k = [n*k/nd,
 * n*(k+1)/nd) of x from the vectors' device (so that device sends x about
 * once, not once per device), then, after a barrier, takes the rest of its
 * window from the workers holding it. Returns false when the relay did not
 * run because another worker failed in the first phase (this one then
 * skips its SpMV; the call fails with the other's error). */
static bool x_relay(worker *w, hisp_status *st)
{
    hisp_mplan plan = w->plan;
    hisp_context ctx = w->ctx;
    void *be = ctx->be, *hb = plan->mctx->be;
    size_t es = hisp_type_size(plan->type);
    int nd = plan->nd, k = w->id;
    int64_t n = plan->vcols;
    int64_t lo = (int64_t)((__int128)n * k / nd), hi = (int64_t)((__int128)n * (k + 1) / nd);
    hisp_status s = hispi_msrep_worker_buffers(w, plan->dop, false);
    if (!s && hi > lo)
        s = HISPI_BE(ctx, buf_peer_copy, be, w->xd, (size_t)lo * es, hb, plan->xdev,
                     (size_t)lo * es, (size_t)(hi - lo) * es);
    if (!s) s = HISPI_BE_SYNC(ctx);
    if (!hispi_barrier_wait_ok(&plan->bar, s)) { /* every chunk is on its device */
        *st = s;
        return false;
    }
    for (int j = 0; j < nd && !s && !part_empty(w); j++) {
        if (j == k) continue;
        worker *v = &plan->w[j];
        int64_t a = (int64_t)((__int128)n * j / nd), b = (int64_t)((__int128)n * (j + 1) / nd);
        if (a < w->c0) a = w->c0;
        if (b > w->c1) b = w->c1;
        if (a < b)
            s = HISPI_BE(ctx, buf_peer_copy, be, w->xd, (size_t)a * es, v->ctx->be, v->xd,
                         (size_t)a * es, (size_t)(b - a) * es);
    }
    if (!s) s = HISPI_BE_SYNC(ctx);
    *st = s;
    return true;
}

/* Phase 1 of a device-merge job: x from the merge device, SpMV, the partial
 * result to the merge device (row kinds: the rows the part owns straight into
 * y when beta == 0, else into the staging vector, and the shared first row
 * into shbuf; sum merge: the whole partial vector, unless this device is the
 * merge device). Synchronous at the end, so the merge can start. */
hisp_status hispi_msrep_compute_dev(worker *w)
{
    hisp_mplan plan = w->plan;
    w->x_ms = w->compute_ms = w->gather_ms = 0;
    double t0 = hispi_now_ms();
    if (plan->relay) { /* every worker takes part, an empty one too */
        hisp_status s = HISP_SUCCESS;
        if (!x_relay(w, &s) || s) return s;
    }
    if (part_empty(w)) return HISP_SUCCESS;
    hisp_context ctx = w->ctx;
    void *be = ctx->be, *hb = plan->mctx->be;
    size_t es = hisp_type_size(plan->type);
    HISPI_TRY(hispi_msrep_worker_buffers(w, plan->dop, false));
    int64_t rows = w->part.end - w->part.start;
    if (plan->relay) {
        /* x is in place */
    } else if (plan->dop == HISP_OP_T) {
        HISPI_TRY(HISPI_BE(ctx, buf_peer_copy, be, w->xd, 0, hb, plan->xdev,
                           (size_t)w->part.start * es, (size_t)w->xlen * es));
    } else { /* only the columns the part touches (a band for stencil matrices) */
        HISPI_TRY(HISPI_BE(ctx, buf_peer_copy, be, w->xd, (size_t)w->c0 * es, hb, plan->xdev,
                           (size_t)w->c0 * es, (size_t)(w->c1 - w->c0) * es));
    }
    HISPI_TRY(HISPI_BE_SYNC(ctx));
    double t1 = hispi_now_ms();
    HISPI_TRY(hispi_msrep_part_spmv(w));
    double t2 = hispi_now_ms();
    if (plan->dop == HISP_OP_N) {
        int64_t sh = w->part.shared_first ? 1 : 0;
        void *dst = plan->beta == 0 ? plan->ydev : plan->stage;
        HISPI_TRY(HISPI_BE(ctx, buf_peer_copy, hb, dst, (size_t)(w->part.start + sh) * es, be,
                           w->yd, (size_t)sh * es, (size_t)(rows - sh) * es));
        if (sh)
            HISPI_TRY(HISPI_BE(ctx, buf_peer_copy, hb, plan->shbuf, (size_t)w->id * es, be, w->yd,
                               0, es));
    } else if (!w->local) {
        HISPI_TRY(HISPI_BE(ctx, buf_peer_copy, hb, plan->pstage[w->id], 0, be, w->yd, 0,
                           (size_t)w->ylen * es));
    }
    HISPI_TRY(HISPI_BE_SYNC(ctx));
    double t3 = hispi_now_ms();
    if (HISPI_BE(ctx, mark_elapsed, w->m0, w->m1, &w->compute_ms) != HISP_SUCCESS)
        w->compute_ms = t2 - t1;
    w->x_ms = t1 - t0;
    w->gather_ms = t3 - t2;
    return HISP_SUCCESS;
}

/* Copy the last error of `from` onto the plan's home context. */
static hisp_status copy_error(hisp_mplan plan, hisp_context from, hisp_status st, const char *what)
{
    hisp_error_info e = {0};
    if (from && hisp_context_last_error(from, &e) == HISP_SUCCESS && e.message)
        return hispi_fail_native(plan->home, st, e.native_code, "%s: %s", what, e.message);
    return hispi_fail(plan->home, st, "%s: %s", what, hisp_status_string(st));
}

/* Every device of the plan and the vectors' context on one backend that
 * merges on the device. */
static bool devmerge_possible(hisp_mplan plan, hisp_context vctx)
{
    const hisp_backend_ops *o = vctx->ops;
    if (plan->hisparse || plan->host_merge || !HISPI_BE_HAS(vctx, buf_peer_copy) ||
        !HISPI_BE_HAS(vctx, buf_axpby))
        return false;
    for (int k = 0; k < plan->nd; k++)
        if (plan->w[k].ctx->ops != o || plan->w[k].nsub > 0) return false;
    return true;
}

static void merge_free_stage(hisp_mplan plan)
{
    if (!plan->mctx) return;
    if (plan->stage) HISPI_BE_VOID(plan->mctx, buf_free, plan->stage);
    for (int k = 0; plan->pstage && k < plan->nd; k++)
        if (plan->pstage[k]) HISPI_BE_VOID(plan->mctx, buf_free, plan->pstage[k]);
    plan->stage = NULL;
    plan->stage_m = plan->pstage_m = 0;
    if (plan->pstage) memset(plan->pstage, 0, (size_t)plan->nd * sizeof *plan->pstage);
}

void hispi_msrep_merge_release(hisp_mplan plan)
{
    if (plan->mctx) {
        merge_free_stage(plan);
        if (plan->shbuf) HISPI_BE_VOID(plan->mctx, buf_free, plan->shbuf);
        plan->shbuf = NULL;
        hisp_context_destroy(&plan->mctx);
    }
    free(plan->pstage);
    plan->pstage = NULL;
}

/* The merge context on the vectors' device and the staging buffers of this
 * job (kept across calls; remade when the vectors move or the length
 * changes). */
static hisp_status devmerge_prepare(hisp_mplan plan, hisp_context vctx)
{
    hisp_context h = plan->home;
    if (plan->mctx && (plan->mctx->kind != vctx->kind || plan->mctx->device != vctx->device))
        hispi_msrep_merge_release(plan);
    if (!plan->pstage)
        HISPI_TRY(hispi_calloc(h, (size_t)plan->nd, sizeof *plan->pstage, (void **)&plan->pstage));
    if (!plan->mctx) {
        hisp_status s = hisp_context_create(&plan->mctx);
        if (s) return hispi_fail(h, s, "cannot open a context for the merge");
        hispi_options_inherit(plan->mctx, h);
        s = hisp_context_set_backend(plan->mctx, vctx->kind, vctx->device);
        if (s) {
            s = copy_error(plan, plan->mctx, s, "merge device");
            hisp_context_destroy(&plan->mctx);
            return s;
        }
    }
    const hisp_backend_ops *o = plan->mctx->ops;
    void *hb = plan->mctx->be;
    size_t es = hisp_type_size(plan->type);
    bool stage_all = hispi_msrep_hook.stage_all; /* a test hook */
    for (int k = 0; k < plan->nd; k++) {
        worker *w = &plan->w[k];
        w->local = !stage_all && w->ref.backend == vctx->kind && w->ref.device == vctx->device;
    }
    if (!plan->shbuf)
        HISPI_TRY(HISPI_BE_ON(h, o, buf_alloc, hb, (size_t)plan->nd * es, &plan->shbuf));
    if (plan->dop == HISP_OP_N && plan->beta != 0 && plan->stage_m != plan->m) {
        if (plan->stage) HISPI_BE_VOID_ON(o, buf_free, hb, plan->stage);
        plan->stage = NULL;
        plan->stage_m = 0;
        HISPI_TRY(HISPI_BE_ON(h, o, buf_alloc, hb, (size_t)plan->m * es, &plan->stage));
        plan->stage_m = plan->m;
    }
    if (plan->dop == HISP_OP_T) {
        if (plan->pstage_m != plan->m)
            for (int k = 0; k < plan->nd; k++) {
                if (plan->pstage[k]) HISPI_BE_VOID_ON(o, buf_free, hb, plan->pstage[k]);
                plan->pstage[k] = NULL;
            }
        plan->pstage_m = plan->m;
        for (int k = 0; k < plan->nd; k++) {
            worker *w = &plan->w[k];
            if (part_empty(w) || w->local || plan->pstage[k]) continue;
            HISPI_TRY(HISPI_BE_ON(h, o, buf_alloc, hb, (size_t)plan->m * es, &plan->pstage[k]));
        }
    }
    return HISP_SUCCESS;
}

/* Phase 2 on the merge device (every partial result is there). Row merge:
 * rows no part holds become beta*y, the owned rows were copied into y
 * (beta == 0) or are staged (y = stage + beta*y), the shared first rows are
 * added. Sum merge: y = beta*y + the partial vectors, one pass each. */
static hisp_status merge_on_device(hisp_mplan plan)
{
    hisp_context h = plan->home;
    const hisp_backend_ops *o = plan->mctx->ops;
    void *hb = plan->mctx->be, *y = plan->ydev;
    hisp_type t = plan->type;
    double beta = plan->beta;
    int64_t m = plan->m;
    if (plan->dop == HISP_OP_N) {
        int64_t cur = 0;
        for (int k = 0; k < plan->nd; k++) {
            const hisp_part *q = &plan->parts[k];
            if (q->start >= q->end) continue;
            if (q->start > cur)
                HISPI_TRY(
                    HISPI_BE_ON(h, o, buf_axpby, hb, t, q->start - cur, 0, NULL, 0, beta, y, cur));
            if (beta != 0) {
                int64_t r = q->start + (q->shared_first ? 1 : 0);
                HISPI_TRY(
                    HISPI_BE_ON(h, o, buf_axpby, hb, t, q->end - r, 1, plan->stage, r, beta, y, r));
            }
            if (q->end > cur) cur = q->end;
        }
        if (cur < m)
            HISPI_TRY(HISPI_BE_ON(h, o, buf_axpby, hb, t, m - cur, 0, NULL, 0, beta, y, cur));
        for (int k = 0; k < plan->nd; k++) {
            const hisp_part *q = &plan->parts[k];
            if (q->start < q->end && q->shared_first)
                HISPI_TRY(
                    HISPI_BE_ON(h, o, buf_axpby, hb, t, 1, 1, plan->shbuf, k, 1, y, q->start));
        }
    } else {
        bool first = true;
        for (int k = 0; k < plan->nd; k++) {
            worker *w = &plan->w[k];
            if (part_empty(w)) continue;
            const void *src = w->local ? w->yd : plan->pstage[k];
            HISPI_TRY(HISPI_BE_ON(h, o, buf_axpby, hb, t, m, 1, src, 0, first ? beta : 1, y, 0));
            first = false;
        }
        if (first) HISPI_TRY(HISPI_BE_ON(h, o, buf_axpby, hb, t, m, 0, NULL, 0, beta, y, 0));
    }
    return HISPI_BE_ON(h, o, synchronize, hb);
}

static hisp_status mspmv_vec(hisp_mplan plan, hisp_op op, const void *alpha, hisp_vector x,
                             const void *beta, hisp_vector y);

/* the vectors' context too where it is not the plan's (hispi.h) */
static hisp_status mspmv_vec_claimed(hisp_mplan plan, hisp_op op, const void *alpha, hisp_vector x,
                                     const void *beta, hisp_vector y)
{
    if (!hispi_vec_ok(x) || x->ctx == plan->home) return mspmv_vec(plan, op, alpha, x, beta, y);
    if (hispi_ctx_claim(x->ctx))
        return hispi_fail(plan->home, HISP_ERR_INVALID_ARGUMENT,
                          "the vectors' context is in use by another thread (a context is used "
                          "by one thread at a time)");
    hisp_status s = mspmv_vec(plan, op, alpha, x, beta, y);
    hispi_ctx_release(x->ctx);
    return s;
}

hisp_status hisp_mspmv_vec(hisp_mplan plan, hisp_op op, const void *alpha, hisp_vector x,
                           const void *beta, hisp_vector y)
{
    if (!hispi_handle_live(plan, HISPI_H_MPLAN)) return HISP_ERR_INVALID_HANDLE;
    HISPI_CLAIMED(plan->home, mspmv_vec_claimed(plan, op, alpha, x, beta, y));
}

static hisp_status mspmv_vec(hisp_mplan plan, hisp_op op, const void *alpha, hisp_vector x,
                             const void *beta, hisp_vector y)
{
    hisp_context h = plan->home;
    if (!hispi_vec_ok(x) || !hispi_vec_ok(y))
        return hispi_fail(h, HISP_ERR_INVALID_HANDLE, "x or y is not a vector");
    if (op != HISP_OP_N && op != HISP_OP_T)
        return hispi_fail(h, HISP_ERR_INVALID_ARGUMENT, "unknown op %d", (int)op);
    if (!alpha || !beta) return hispi_fail(h, HISP_ERR_INVALID_ARGUMENT, "alpha or beta is NULL");
    int64_t m = op == HISP_OP_N ? plan->nrows : plan->ncols;
    int64_t n = op == HISP_OP_N ? plan->ncols : plan->nrows;
    if (x == y) /* the devices may write y while others still copy x */
        return hispi_fail(h, HISP_ERR_INVALID_ARGUMENT, "x and y must be different vectors");
    if (x->ctx != y->ctx)
        return hispi_fail(h, HISP_ERR_INVALID_ARGUMENT, "x and y belong to different contexts");
    if (x->type != plan->type || y->type != plan->type)
        return hispi_fail(h, HISP_ERR_INVALID_ARGUMENT, "vectors of %s for a plan of %s",
                          hisp_type_name(x->type != plan->type ? x->type : y->type),
                          hisp_type_name(plan->type));
    if (x->n != n || y->n != m)
        return hispi_fail(h, HISP_ERR_INVALID_ARGUMENT,
                          "x has %lld entries and y %lld, op(A) needs %lld and %lld",
                          (long long)x->n, (long long)y->n, (long long)n, (long long)m);
    hisp_context vctx = x->ctx;
    double b = hispi_load_real(plan->type, beta, 0);
    if (!devmerge_possible(plan, vctx)) { /* through the host */
        void *xh = NULL, *yh = NULL;
        hisp_status s = hispi_vector_host(x, &xh);
        if (!s) s = b != 0 ? hispi_vector_host(y, &yh) : hispi_vector_host_out(y, &yh);
        if (s) return copy_error(plan, vctx, s, "vectors to the host");
        HISPI_TRY(hisp_mspmv(plan, op, alpha, xh, beta, yh));
        return hispi_vector_host_written(y);
    }
    double t0 = hispi_now_ms();
    plan->dop = (op == HISP_OP_T) != plan->columns ? HISP_OP_T : HISP_OP_N;
    plan->alpha = hispi_load_real(plan->type, alpha, 0);
    plan->beta = b;
    plan->x = plan->y = NULL;
    plan->m = m;
    hisp_status s = hispi_vector_device(x, true, &plan->xdev);
    if (!s) s = hispi_vector_device(y, b != 0, &plan->ydev);
    if (!s) s = hisp_context_synchronize(vctx); /* x is there, y is idle */
    if (s) return copy_error(plan, vctx, s, "vectors on the device");
    HISPI_TRY(devmerge_prepare(plan, vctx));
    plan->relay = plan->dop == HISP_OP_N && plan->nd > 1; /* x windows relayed (docs/MSREP.md) */
    plan->devmerge = true;
    hispi_msrep_run_round(plan);
    plan->devmerge = false;
    HISPI_TRY(hispi_msrep_worker_failure(plan));
    double t1 = hispi_now_ms();
    HISPI_TRY(merge_on_device(plan));
    hispi_vector_device_written(y);
    double t2 = hispi_now_ms();
    hisp_mplan_breakdown *bd = &plan->bd;
    hispi_msrep_collect(plan);
    bd->merge_ms = t2 - t1;
    bd->total_ms = t2 - t0;
    bd->device_merge = 1;
    return HISP_SUCCESS;
}
