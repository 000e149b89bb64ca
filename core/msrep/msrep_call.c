/* hisp_mspmv (x and y in host memory): hisp_mspmv hands every worker the
 * same job: send x (the whole x, or the part's slice when the device computes
 * a partial vector), run the backend's CSR SpMV on the local CSR with
 * beta = 0, read the partial result back, then (after a barrier) merge a
 * slice of y on the host, so that the merge runs on all workers too. */
#include "msrep_plan.h"

#include <stdlib.h>

/* Phase 1 on a HiSparse part: the vectors of the device op, the scheduler's
 * SpMV (synchronous: host clock), the result back. */
static hisp_status hisparse_compute(worker *w)
{
    hisp_mplan plan = w->plan;
    hisp_context ctx = w->ctx;
    size_t es = hisp_type_size(plan->type);
    int64_t rows = w->part.end - w->part.start;
    int64_t xlen = plan->dop == HISP_OP_N ? plan->vcols : rows;
    int64_t ylen = plan->dop == HISP_OP_N ? rows : plan->vcols;
    int64_t n = -1, n2 = -1;
    if (!w->xv || !w->yv || hisp_vector_size(w->xv, &n) || hisp_vector_size(w->yv, &n2) ||
        n != xlen || n2 != ylen) { /* first call, new device op, or an earlier failure */
        hisp_vector_destroy(&w->xv);
        hisp_vector_destroy(&w->yv);
        HISPI_TRY(hisp_vector_create(ctx, plan->type, xlen, &w->xv));
        HISPI_TRY(hisp_vector_create(ctx, plan->type, ylen, &w->yv));
    }
    if (!w->yh || w->ylen != ylen) {
        free(w->yh);
        w->yh = NULL;
        HISPI_TRY(hispi_alloc(ctx, (size_t)ylen, es, &w->yh));
        w->ylen = ylen;
    }
    double t0 = hispi_now_ms();
    const char *x = plan->x;
    if (plan->dop == HISP_OP_T) x += (size_t)w->part.start * es;
    HISPI_TRY(hisp_vector_write(w->xv, x));
    HISPI_TRY(hispi_vector_device(w->xv, true, &(void *){NULL}));
    double t1 = hispi_now_ms();
    double zero = 0;
    float zerof = 0, af = (float)plan->alpha;
    const void *a = plan->type == HISP_F32 ? (const void *)&af : (const void *)&plan->alpha;
    const void *b = plan->type == HISP_F32 ? (const void *)&zerof : (const void *)&zero;
    HISPI_TRY(hisp_spmv(ctx, plan->dop, a, w->L, w->xv, b, w->yv));
    HISPI_TRY(hisp_context_synchronize(ctx));
    double t2 = hispi_now_ms();
    HISPI_TRY(hisp_vector_read(w->yv, w->yh));
    double t3 = hispi_now_ms();
    w->x_ms = t1 - t0;
    w->compute_ms = t2 - t1;
    w->gather_ms = t3 - t2;
    return HISP_SUCCESS;
}

static void free_buffers(worker *w)
{
    if (w->xd) HISPI_BE_VOID(w->ctx, buf_free, w->xd);
    if (w->yd) HISPI_BE_VOID(w->ctx, buf_free, w->yd);
    free(w->yh);
    w->xd = w->yd = w->yh = NULL;
}

hisp_status hispi_msrep_part_spmv(worker *w)
{
    hisp_context ctx = w->ctx;
    hisp_mplan plan = w->plan;
    HISPI_TRY(HISPI_BE(ctx, mark_record, w->m0));
    HISPI_TRY(HISPI_BE(ctx, csr_spmv, w->dev, plan->dop, plan->alpha, w->xd, 0.0, w->yd));
    HISPI_TRY(HISPI_BE(ctx, mark_record, w->m1));
    return HISPI_BE_SYNC(ctx);
}

/* Buffers for the device op of the job (kept across calls with the same op;
 * all or none, so that a failed allocation is retried by the next call). */
hisp_status hispi_msrep_worker_buffers(worker *w, hisp_op dop, bool host)
{
    hisp_mplan plan = w->plan;
    if (w->xd && w->yd && (w->yh || !host) && w->yd_op == dop) return HISP_SUCCESS;
    free_buffers(w);
    int64_t rows = w->part.end - w->part.start;
    w->xlen = dop == HISP_OP_N ? plan->vcols : rows;
    w->ylen = dop == HISP_OP_N ? rows : plan->vcols;
    size_t es = hisp_type_size(plan->type);
    hisp_status s = HISPI_BE(w->ctx, buf_alloc, (size_t)w->xlen * es, &w->xd);
    if (!s) s = HISPI_BE(w->ctx, buf_alloc, (size_t)w->ylen * es, &w->yd);
    /* op N sends only the part's x window: zeros elsewhere, so that no
     * kernel ever reads garbage there (padding lanes read x[0]) */
    if (!s && HISPI_BE_HAS(w->ctx, buf_zero))
        s = HISPI_BE(w->ctx, buf_zero, w->xd, 0, (size_t)w->xlen * es);
    if (!s && host) s = hispi_alloc(w->ctx, (size_t)w->ylen, es, &w->yh);
    if (s) {
        free_buffers(w);
        return s;
    }
    if (w->yh) hispi_numa_bind_memory(w->yh, (size_t)w->ylen * es, w->numa);
    w->yd_op = dop;
    return HISP_SUCCESS;
}

/* Phase 1 of a job: x out, SpMV, partial result back. */
static hisp_status worker_compute(worker *w)
{
    hisp_mplan plan = w->plan;
    w->x_ms = w->compute_ms = w->gather_ms = 0;
    if (part_empty(w)) return HISP_SUCCESS;
    if (plan->hisparse) return hisparse_compute(w);
    hisp_context ctx = w->ctx;
    size_t es = hisp_type_size(plan->type);
    HISPI_TRY(hispi_msrep_worker_buffers(w, plan->dop, true));
    double t0 = hispi_now_ms();
    const char *x = plan->x;
    if (plan->dop == HISP_OP_T)
        HISPI_TRY(HISPI_BE(ctx, buf_write, w->xd, 0, x + (size_t)w->part.start * es,
                           (size_t)w->xlen * es));
    else /* only the columns the part touches */
        HISPI_TRY(HISPI_BE(ctx, buf_write, w->xd, (size_t)w->c0 * es, x + (size_t)w->c0 * es,
                           (size_t)(w->c1 - w->c0) * es));
    double t1 = hispi_now_ms();
    HISPI_TRY(hispi_msrep_part_spmv(w));
    double t2 = hispi_now_ms();
    HISPI_TRY(HISPI_BE(ctx, buf_read, w->yd, 0, w->yh, (size_t)w->ylen * es));
    double t3 = hispi_now_ms();
    if (HISPI_BE(ctx, mark_elapsed, w->m0, w->m1, &w->compute_ms) != HISP_SUCCESS)
        w->compute_ms = t2 - t1;
    w->x_ms = t1 - t0;
    w->gather_ms = t3 - t2;
    return HISP_SUCCESS;
}

/* A worker's share of a hisp_mspmv job: phase 1 (its status in w->st), a
 * barrier, then phase 2, its slice of y merged on the host (w->merge_ms). */
void hispi_msrep_host_job(worker *w)
{
    hisp_mplan plan = w->plan;
    w->st = worker_compute(w);
    plan->ybuf[w->id] = part_empty(w) || w->st ? NULL : w->yh;
    bool ok = hispi_barrier_wait_ok(&plan->bar, w->st); /* every worker's phase 1 done */
    double tm = hispi_now_ms();
    if (ok) { /* phase 2: this worker's slice of y */
        int64_t r0 = (int64_t)((__int128)plan->m * w->id / plan->nd);
        int64_t r1 = (int64_t)((__int128)plan->m * (w->id + 1) / plan->nd);
        if (plan->dop == HISP_OP_N)
            hispi_msrep_merge_rows(plan->type, plan->nd, plan->parts, plan->ybuf, plan->beta,
                                   plan->y, r0, r1);
        else
            hispi_msrep_merge_sum(plan->type, plan->nd, plan->ybuf, plan->beta, plan->y, r0, r1);
    }
    w->merge_ms = hispi_now_ms() - tm;
}

static hisp_status mspmv(hisp_mplan plan, hisp_op op, const void *alpha, const void *x,
                         const void *beta, void *y);

hisp_status hisp_mspmv(hisp_mplan plan, hisp_op op, const void *alpha, const void *x,
                       const void *beta, void *y)
{
    if (!hispi_handle_live(plan, HISPI_H_MPLAN)) return HISP_ERR_INVALID_HANDLE;
    HISPI_CLAIMED(plan->home, mspmv(plan, op, alpha, x, beta, y)); /* the plan's calls: hispi.h */
}

static hisp_status mspmv(hisp_mplan plan, hisp_op op, const void *alpha, const void *x,
                         const void *beta, void *y)
{
    hisp_context ctx = plan->home;
    if (op != HISP_OP_N && op != HISP_OP_T)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "unknown op %d", (int)op);
    if (!alpha || !beta) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "alpha or beta is NULL");
    int64_t m = op == HISP_OP_N ? plan->nrows : plan->ncols;
    int64_t n = op == HISP_OP_N ? plan->ncols : plan->nrows;
    if ((!x && n) || (!y && m)) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "x or y is NULL");
    double t0 = hispi_now_ms();
    plan->dop = (op == HISP_OP_T) != plan->columns ? HISP_OP_T : HISP_OP_N;
    plan->alpha = hispi_load_real(plan->type, alpha, 0);
    plan->beta = hispi_load_real(plan->type, beta, 0);
    plan->x = x;
    plan->y = y;
    plan->m = m;
    plan->devmerge = false;
    hispi_msrep_run_round(plan);
    double t1 = hispi_now_ms();
    HISPI_TRY(hispi_msrep_worker_failure(plan));
    hisp_mplan_breakdown *bd = &plan->bd;
    hispi_msrep_collect(plan);
    bd->total_ms = t1 - t0;
    bd->device_merge = 0;
    return HISP_SUCCESS;
}
