/* MSREP distributed vectors: the hisp_mvector handles (create, destroy,
 * length, write, read) and the calls over them (hisp_mspmv_dist,
 * hisp_mvector_allgather, the solvers' hispi_mspmv_window and
 * hispi_msrep_each). Each call checks its operands on the caller's thread,
 * sets the plan's job and runs one round on the workers, whose share is in
 * msrep_dist.c (which also describes the layouts and the ownership of the
 * rows). */
#include "msrep_plan.h"

#include <stdlib.h>

#define HISPI_MAGIC_MVEC 0x684d5665u /* "hMVe" */

/* The rows each device owns (plan->own, made once per plan) and whether the
 * devices exchange through host memory. */
static hisp_status ownership(hisp_mplan plan)
{
    if (plan->own) return HISP_SUCCESS;
    plan->dhost = false; /* one backend with device peer copies, or the host in between */
    for (int k = 0; k < plan->nd; k++)
        plan->dhost = plan->dhost || !HISPI_BE_HAS(plan->w[k].ctx, buf_peer_copy) ||
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
            if (bs[i] && w->ctx) HISPI_BE_VOID(w->ctx, buf_free, bs[i]);
        v->buf[k] = v->tmp[k] = v->shin[k] = NULL;
    }
}

void hispi_msrep_dist_release(hisp_mplan plan)
{
    hispi_mvector_spares_drop(plan);
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
    *off = plan->own[k] - hispi_mvector_org(v, k);
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
    HISPI_CLAIMED(h, hispi_mvector_create(plan, layout, out)); /* the plan's calls: hispi.h */
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
    if (s == HISP_ERR_OUT_OF_DEVICE_MEMORY && plan->nspare > 0) { /* the spares' memory first */
        free_buffers(v);
        hispi_mvector_spares_drop(plan);
        hispi_clear_error(h);
        s = run_job(plan, DIST_ALLOC);
    }
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

hisp_mvector hispi_mvector_spare_take(hisp_mplan plan, hisp_mvec_layout layout)
{
    for (int i = plan->nspare - 1; i >= 0; i--)
        if (plan->spare[i]->layout == layout) {
            hisp_mvector v = plan->spare[i];
            plan->spare[i] = plan->spare[--plan->nspare];
            return v;
        }
    return NULL;
}

void hispi_mvector_spare_give(hisp_mplan plan, hisp_mvector *v)
{
    if (!*v) return;
    if (plan->nspare < HISPI_MPLAN_SPARES && (*v)->plan == plan) {
        plan->spare[plan->nspare++] = *v;
        *v = NULL;
        return;
    }
    hisp_mvector_destroy(v);
}

void hispi_mvector_spares_drop(hisp_mplan plan)
{
    while (plan->nspare > 0)
        hisp_mvector_destroy(&plan->spare[--plan->nspare]);
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
    hisp_mplan plan;
    HISPI_TRY(vec_check(v, &plan));
    HISPI_CLAIMED(plan->home, transfer(v, src, NULL));
}

hisp_status hisp_mvector_read(hisp_mvector v, void *dst)
{
    hisp_mplan plan;
    HISPI_TRY(vec_check(v, &plan));
    HISPI_CLAIMED(plan->home, transfer(v, NULL, dst));
}

static hisp_status mspmv_dist(hisp_mplan plan, const void *alpha, hisp_mvector x, const void *beta,
                              hisp_mvector y);

hisp_status hisp_mspmv_dist(hisp_mplan plan, const void *alpha, hisp_mvector x, const void *beta,
                            hisp_mvector y)
{
    if (!plan_ok(plan)) return HISP_ERR_INVALID_HANDLE;
    HISPI_CLAIMED(plan->home, mspmv_dist(plan, alpha, x, beta, y));
}

static hisp_status mspmv_dist(hisp_mplan plan, const void *alpha, hisp_mvector x, const void *beta,
                              hisp_mvector y)
{
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

static hisp_status allgather(hisp_mplan plan, hisp_mvector src, hisp_mvector dst);

hisp_status hisp_mvector_allgather(hisp_mvector src, hisp_mvector dst)
{
    hisp_mplan plan;
    HISPI_TRY(vec_check(src, &plan));
    HISPI_CLAIMED(plan->home, allgather(plan, src, dst));
}

static hisp_status allgather(hisp_mplan plan, hisp_mvector src, hisp_mvector dst)
{
    if (!vec_ok(dst) || dst->plan != plan)
        return hispi_fail(plan->home, HISP_ERR_INVALID_HANDLE, "dst must be a vector of this plan");
    if (src->layout != HISP_MVEC_ROWS || dst->layout != HISP_MVEC_REPLICATED || src->n != dst->n)
        return hispi_fail(plan->home, HISP_ERR_INVALID_ARGUMENT,
                          "allgather takes a ROWS vector into a REPLICATED one of the same length "
                          "(%lld and %lld entries; square matrices)",
                          (long long)src->n, (long long)dst->n);
    if (plan->dhost)
        HISPI_TRY(hispi_alloc(plan->home, (size_t)(src->n > 0 ? src->n : 1),
                              hisp_type_size(plan->type), &plan->dstage));
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
        HISPI_TRY(hispi_alloc(h, (size_t)(x->n > 0 ? x->n : 1), hisp_type_size(plan->type),
                              &plan->dstage));
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
