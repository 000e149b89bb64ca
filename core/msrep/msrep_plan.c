/* MSREP execution: a plan holds one context, one resident part and one host
 * thread per device. hisp_mspmv hands every worker the same job: send x (the
 * whole x, or the part's slice when the device computes a partial vector),
 * run the backend's CSR SpMV on the local CSR with beta = 0, read the partial
 * result back, then (after a barrier) merge a slice of y on the host, so the
 * merge runs on all workers too. hisp_mspmv_vec (x, y on a device) does the
 * same device to device where the backend has buf_peer_copy and buf_axpby:
 * each worker copies x from the vectors' device and its partial result back
 * to it, and the caller's thread merges there with axpby kernels. */
#include "msrep_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* HiSparse plans: the part becomes a tree on the worker's context (the
 * conversion needs a copy anyway); one SpMV on zeros uploads the tree, so
 * that the distribution time holds it. */
static hisp_status hisparse_part(worker *w, const hispi_csr_view *v)
{
    hisp_context ctx = w->ctx;
    HISPI_TRY(hisp_matrix_create_csr(ctx, v->type, v->nrows, v->ncols, v->rowptr, v->colind, v->val,
                                     &w->L));
    HISPI_TRY(hisp_matrix_convert(w->L, HISP_FORMAT_HISPARSE));
    HISPI_TRY(hisp_vector_create(ctx, v->type, v->ncols, &w->xv));
    HISPI_TRY(hisp_vector_create(ctx, v->type, v->nrows, &w->yv));
    double one = 1, zero = 0;
    float onef = 1, zerof = 0;
    const void *a = v->type == HISP_F32 ? (const void *)&onef : (const void *)&one;
    const void *b = v->type == HISP_F32 ? (const void *)&zerof : (const void *)&zero;
    return hisp_spmv(ctx, HISP_OP_N, a, w->L, w->xv, b, w->yv);
}

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

/* Creation work of one worker: its local pointers (partition), its context
 * and the upload of its part (distribution). */
static hisp_status worker_init(worker *w)
{
    hisp_mplan plan = w->plan;
    const hispi_msrep_src *src = plan->src;
    double t0 = hispi_now_ms();
    hispi_numa_bind_thread(w->numa);
    HISPI_TRY(hisp_context_create(&w->ctx));
    hispi_options_inherit(w->ctx, plan->home);
    int64_t rows = w->part.end - w->part.start;
    hisp_status st = HISP_ERR_UNSUPPORTED;
    if (w->nsub > 1)
        st = hispi_context_set_subdevice(w->ctx, w->ref.backend, w->ref.device, w->sub, w->nsub);
    if (st == HISP_ERR_UNSUPPORTED) { /* whole device, shared with the other parts */
        w->sub = -1;
        w->nsub = 0;
        st = hisp_context_set_backend(w->ctx, w->ref.backend, w->ref.device);
    }
    HISPI_TRY(st);
    hisp_device_info info;
    if (hisp_context_get_device(w->ctx, &info) == HISP_SUCCESS)
        snprintf(w->name, sizeof w->name, "%.127s", info.name);
    const hisp_backend_ops *o = wops(w);
    if (!o->csr_upload || !o->csr_spmv)
        return hispi_fail(w->ctx, HISP_ERR_UNSUPPORTED, "the %s backend has no CSR SpMV", o->name);
    if (plan->vendor && (!o->csr_upload_opts || !(o->csr_caps & HISPI_CSR_VENDOR)))
        return hispi_fail(w->ctx, HISP_ERR_UNSUPPORTED,
                          "cuSPARSE parts need CUDA devices, not the %s backend", o->name);
    /* local pointers: on the device where asked and possible (p*-opt), else
     * here (the part's own copy) */
    w->device_ptr = plan->device_ptr && src->ptr && !plan->hisparse && o->csr_upload_opts &&
                    (o->csr_caps & (plan->vendor ? HISPI_CSR_VENDOR_GPTR : HISPI_CSR_GPTR));
    double tl = hispi_now_ms();
    if (!part_empty(w) && !w->device_ptr)
        HISPI_TRY(hispi_msrep_local_ptr(w->ctx, src, plan->kind, &w->part, &w->lptr));
    if (w->lptr) hispi_numa_bind_memory(w->lptr, ((size_t)rows + 1) * sizeof(int64_t), w->numa);
    double t1 = hispi_now_ms();
    w->lptr_ms = t1 - tl;
    /* the x window of op N: the view columns the part touches (a pass over
     * the part's column indices: counted in the distribution, so that the
     * partition time shows what p*-opt saves) */
    w->c0 = w->c1 = 0;
    if (!part_empty(w) && w->part.nnz_end > w->part.nnz_begin) {
        int32_t lo = INT32_MAX, hi = -1;
        for (int64_t k = w->part.nnz_begin; k < w->part.nnz_end; k++) {
            int32_t c = src->idx[k];
            lo = c < lo ? c : lo;
            hi = c > hi ? c : hi;
        }
        w->c0 = lo;
        w->c1 = (int64_t)hi + 1;
    }
    HISPI_TRY(o->mark_create(w->ctx, w->ctx->be, &w->m0));
    HISPI_TRY(o->mark_create(w->ctx, w->ctx->be, &w->m1));
    if (!part_empty(w)) {
        size_t es = hisp_type_size(plan->type);
        int64_t k0 = w->part.nnz_begin, nnz = w->part.nnz_end - k0;
        hispi_csr_view v = {plan->type,
                            rows,
                            plan->vcols,
                            nnz,
                            w->lptr,
                            src->idx + k0,
                            (const char *)src->val + (size_t)k0 * es};
        hispi_csr_opts opts = {plan->vendor, 0, 0};
        if (w->device_ptr) { /* the global slice; the device subtracts k0 */
            v.rowptr = src->ptr + w->part.start;
            opts.gptr = 1;
            opts.ptr_base = k0;
        }
        if (plan->hisparse)
            HISPI_TRY(hisparse_part(w, &v));
        else
            HISPI_TRY(opts.vendor || opts.gptr
                          ? o->csr_upload_opts(w->ctx, w->ctx->be, &v, &opts, &w->dev)
                          : o->csr_upload(w->ctx, w->ctx->be, &v, &w->dev));
        HISPI_TRY(o->synchronize(w->ctx, w->ctx->be));
        w->bytes = ((uint64_t)rows + 1) * sizeof(int64_t) + (uint64_t)nnz * (4 + es);
        if (w->L)
            HISPI_TRY(hisp_matrix_format_bytes(w->L, HISP_FORMAT_HISPARSE, plan->type, &w->bytes));
    }
    w->upload_ms = hispi_now_ms() - t0 - w->lptr_ms;
    return HISP_SUCCESS;
}

static void free_buffers(worker *w)
{
    const hisp_backend_ops *o = wops(w);
    if (w->xd) o->buf_free(w->ctx->be, w->xd);
    if (w->yd) o->buf_free(w->ctx->be, w->yd);
    free(w->yh);
    w->xd = w->yd = w->yh = NULL;
}

/* Buffers for the device op of the job (kept across calls with the same op;
 * all or none, so that a failed allocation is retried by the next call). */
static hisp_status worker_buffers(worker *w, hisp_op dop, bool host)
{
    hisp_mplan plan = w->plan;
    const hisp_backend_ops *o = wops(w);
    if (w->xd && w->yd && (w->yh || !host) && w->yd_op == dop) return HISP_SUCCESS;
    free_buffers(w);
    int64_t rows = w->part.end - w->part.start;
    w->xlen = dop == HISP_OP_N ? plan->vcols : rows;
    w->ylen = dop == HISP_OP_N ? rows : plan->vcols;
    size_t es = hisp_type_size(plan->type);
    hisp_status s = o->buf_alloc(w->ctx, w->ctx->be, (size_t)w->xlen * es, &w->xd);
    if (!s) s = o->buf_alloc(w->ctx, w->ctx->be, (size_t)w->ylen * es, &w->yd);
    /* op N sends only the part's x window: zeros elsewhere, so that no
     * kernel ever reads garbage there (padding lanes read x[0]) */
    if (!s && o->buf_zero) s = o->buf_zero(w->ctx, w->ctx->be, w->xd, 0, (size_t)w->xlen * es);
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
    const hisp_backend_ops *o = wops(w);
    void *be = w->ctx->be;
    hisp_context ctx = w->ctx;
    size_t es = hisp_type_size(plan->type);
    HISPI_TRY(worker_buffers(w, plan->dop, true));
    double t0 = hispi_now_ms();
    const char *x = plan->x;
    if (plan->dop == HISP_OP_T)
        HISPI_TRY(
            o->buf_write(ctx, be, w->xd, 0, x + (size_t)w->part.start * es, (size_t)w->xlen * es));
    else /* only the columns the part touches */
        HISPI_TRY(o->buf_write(ctx, be, w->xd, (size_t)w->c0 * es, x + (size_t)w->c0 * es,
                               (size_t)(w->c1 - w->c0) * es));
    double t1 = hispi_now_ms();
    HISPI_TRY(o->mark_record(ctx, be, w->m0));
    HISPI_TRY(o->csr_spmv(ctx, be, w->dev, plan->dop, plan->alpha, w->xd, 0.0, w->yd));
    HISPI_TRY(o->mark_record(ctx, be, w->m1));
    HISPI_TRY(o->synchronize(ctx, be));
    double t2 = hispi_now_ms();
    HISPI_TRY(o->buf_read(ctx, be, w->yd, 0, w->yh, (size_t)w->ylen * es));
    double t3 = hispi_now_ms();
    if (o->mark_elapsed(ctx, be, w->m0, w->m1, &w->compute_ms) != HISP_SUCCESS)
        w->compute_ms = t2 - t1;
    w->x_ms = t1 - t0;
    w->gather_ms = t3 - t2;
    return HISP_SUCCESS;
}

/* Phase 1 of a device-merge job: x from the merge device, SpMV, the partial
 * result to the merge device (row kinds: the rows the part owns straight into
 * y when beta == 0, else into the staging vector, and the shared first row
 * into shbuf; sum merge: the whole partial vector, unless this device is the
 * merge device). Synchronous at the end, so the merge can start. */
/* x of op N relayed: every worker first fetches chunk k = [n*k/nd,
 * n*(k+1)/nd) of x from the vectors' device (so that device sends x about
 * once, not once per device), then, after a barrier, takes the rest of its
 * window from the workers holding it. Returns false when the relay did not
 * run because another worker failed in the first phase (this one then
 * skips its SpMV; the call fails with the other's error). */
static bool x_relay(worker *w, hisp_status *st)
{
    hisp_mplan plan = w->plan;
    const hisp_backend_ops *o = wops(w);
    hisp_context ctx = w->ctx;
    void *be = ctx->be, *hb = plan->mctx->be;
    size_t es = hisp_type_size(plan->type);
    int nd = plan->nd, k = w->id;
    int64_t n = plan->vcols;
    int64_t lo = (int64_t)((__int128)n * k / nd), hi = (int64_t)((__int128)n * (k + 1) / nd);
    hisp_status s = worker_buffers(w, plan->dop, false);
    if (!s && hi > lo)
        s = o->buf_peer_copy(ctx, be, be, w->xd, (size_t)lo * es, hb, plan->xdev, (size_t)lo * es,
                             (size_t)(hi - lo) * es);
    if (!s) s = o->synchronize(ctx, be);
    w->xst = s;
    hispi_barrier_wait(&plan->bar); /* every chunk is on its device */
    for (int j = 0; j < nd; j++)
        if (plan->w[j].xst) {
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
            s = o->buf_peer_copy(ctx, be, be, w->xd, (size_t)a * es, v->ctx->be, v->xd,
                                 (size_t)a * es, (size_t)(b - a) * es);
    }
    if (!s) s = o->synchronize(ctx, be);
    *st = s;
    return true;
}

static hisp_status worker_compute_dev(worker *w)
{
    hisp_mplan plan = w->plan;
    w->x_ms = w->compute_ms = w->gather_ms = 0;
    double t0 = hispi_now_ms();
    if (plan->relay) { /* every worker takes part, an empty one too */
        hisp_status s = HISP_SUCCESS;
        if (!x_relay(w, &s) || s) return s;
    }
    if (part_empty(w)) return HISP_SUCCESS;
    const hisp_backend_ops *o = wops(w);
    hisp_context ctx = w->ctx;
    void *be = ctx->be, *hb = plan->mctx->be;
    size_t es = hisp_type_size(plan->type);
    HISPI_TRY(worker_buffers(w, plan->dop, false));
    int64_t rows = w->part.end - w->part.start;
    if (plan->relay) {
        /* x is in place */
    } else if (plan->dop == HISP_OP_T) {
        HISPI_TRY(o->buf_peer_copy(ctx, be, be, w->xd, 0, hb, plan->xdev,
                                   (size_t)w->part.start * es, (size_t)w->xlen * es));
    } else { /* only the columns the part touches (a band for stencil matrices) */
        HISPI_TRY(o->buf_peer_copy(ctx, be, be, w->xd, (size_t)w->c0 * es, hb, plan->xdev,
                                   (size_t)w->c0 * es, (size_t)(w->c1 - w->c0) * es));
    }
    HISPI_TRY(o->synchronize(ctx, be));
    double t1 = hispi_now_ms();
    HISPI_TRY(o->mark_record(ctx, be, w->m0));
    HISPI_TRY(o->csr_spmv(ctx, be, w->dev, plan->dop, plan->alpha, w->xd, 0.0, w->yd));
    HISPI_TRY(o->mark_record(ctx, be, w->m1));
    HISPI_TRY(o->synchronize(ctx, be));
    double t2 = hispi_now_ms();
    if (plan->dop == HISP_OP_N) {
        int64_t sh = w->part.shared_first ? 1 : 0;
        void *dst = plan->beta == 0 ? plan->ydev : plan->stage;
        HISPI_TRY(o->buf_peer_copy(ctx, be, hb, dst, (size_t)(w->part.start + sh) * es, be, w->yd,
                                   (size_t)sh * es, (size_t)(rows - sh) * es));
        if (sh)
            HISPI_TRY(
                o->buf_peer_copy(ctx, be, hb, plan->shbuf, (size_t)w->id * es, be, w->yd, 0, es));
    } else if (!w->local) {
        HISPI_TRY(o->buf_peer_copy(ctx, be, hb, plan->pstage[w->id], 0, be, w->yd, 0,
                                   (size_t)w->ylen * es));
    }
    HISPI_TRY(o->synchronize(ctx, be));
    double t3 = hispi_now_ms();
    if (o->mark_elapsed(ctx, be, w->m0, w->m1, &w->compute_ms) != HISP_SUCCESS)
        w->compute_ms = t2 - t1;
    w->x_ms = t1 - t0;
    w->gather_ms = t3 - t2;
    return HISP_SUCCESS;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    hisp_mplan plan = w->plan;
    hisp_status st = worker_init(w);
    pthread_mutex_lock(&plan->mu);
    w->st = st;
    plan->finished++;
    pthread_cond_broadcast(&plan->done);
    uint64_t seen = plan->gen;
    for (;;) {
        if (plan->spin_ns > 0 && plan->gen == seen && !plan->quit) {
            pthread_mutex_unlock(&plan->mu); /* the next job comes soon in a solver's loop */
            for (hispi_spin sp = hispi_spin_start(plan->spin_ns);
                 plan->gen == seen && hispi_spin_more(&sp);)
                ;
            pthread_mutex_lock(&plan->mu);
        }
        while (plan->gen == seen && !plan->quit)
            pthread_cond_wait(&plan->go, &plan->mu);
        if (plan->quit) break;
        seen = plan->gen;
        pthread_mutex_unlock(&plan->mu);
        if (plan->dist) { /* a distributed-vector job */
            w->st = hispi_msrep_dist_work(w);
            pthread_mutex_lock(&plan->mu);
            plan->finished++;
            pthread_cond_broadcast(&plan->done);
            continue;
        }
        if (plan->devmerge) { /* the caller merges on the device */
            w->st = worker_compute_dev(w);
            w->merge_ms = 0;
            pthread_mutex_lock(&plan->mu);
            plan->finished++;
            pthread_cond_broadcast(&plan->done);
            continue;
        }
        w->st = worker_compute(w);
        plan->ybuf[w->id] = part_empty(w) || w->st ? NULL : w->yh;
        hispi_barrier_wait(&plan->bar);
        double tm = hispi_now_ms();
        bool ok = true; /* every worker's phase 1 is visible after the barrier */
        for (int k = 0; k < plan->nd; k++)
            ok = ok && plan->w[k].st == HISP_SUCCESS;
        if (ok) { /* phase 2: this worker's slice of y */
            int64_t r0 = (int64_t)((__int128)plan->m * w->id / plan->nd);
            int64_t r1 = (int64_t)((__int128)plan->m * (w->id + 1) / plan->nd);
            if (plan->dop == HISP_OP_N)
                hispi_msrep_merge_rows(plan->type, plan->nd, plan->parts, plan->ybuf, plan->beta,
                                       plan->y, r0, r1);
            else
                hispi_msrep_merge_sum(plan->type, plan->nd, plan->ybuf, plan->beta, plan->y, r0,
                                      r1);
        }
        w->merge_ms = hispi_now_ms() - tm;
        pthread_mutex_lock(&plan->mu);
        plan->finished++;
        pthread_cond_broadcast(&plan->done);
    }
    pthread_mutex_unlock(&plan->mu);
    return NULL;
}

void hispi_msrep_run_round(hisp_mplan plan)
{
    pthread_mutex_lock(&plan->mu);
    plan->finished = 0;
    plan->gen++;
    pthread_cond_broadcast(&plan->go);
    if (plan->spin_ns > 0) {
        pthread_mutex_unlock(&plan->mu);
        for (hispi_spin sp = hispi_spin_start(plan->spin_ns);
             plan->finished < plan->nd && hispi_spin_more(&sp);)
            ;
        pthread_mutex_lock(&plan->mu);
    }
    while (plan->finished < plan->nd)
        pthread_cond_wait(&plan->done, &plan->mu);
    pthread_mutex_unlock(&plan->mu);
}

int hispi_barrier_init(hispi_barrier *b, unsigned n, long spin_ns)
{
    b->n = n;
    b->count = 0;
    b->phase = 0;
    b->spin_ns = spin_ns;
    if (pthread_mutex_init(&b->mu, NULL)) return -1;
    if (pthread_cond_init(&b->cv, NULL)) {
        pthread_mutex_destroy(&b->mu);
        return -1;
    }
    return 0;
}

void hispi_barrier_destroy(hispi_barrier *b)
{
    pthread_cond_destroy(&b->cv);
    pthread_mutex_destroy(&b->mu);
}

void hispi_barrier_wait(hispi_barrier *b)
{
    pthread_mutex_lock(&b->mu);
    uint64_t ph = b->phase;
    if (++b->count == b->n) { /* the last one in opens it */
        b->count = 0;
        b->phase++;
        pthread_cond_broadcast(&b->cv);
        pthread_mutex_unlock(&b->mu);
        return;
    }
    if (b->spin_ns > 0) {
        pthread_mutex_unlock(&b->mu);
        for (hispi_spin sp = hispi_spin_start(b->spin_ns); b->phase == ph && hispi_spin_more(&sp);)
            ;
        pthread_mutex_lock(&b->mu);
    }
    while (b->phase == ph)
        pthread_cond_wait(&b->cv, &b->mu);
    pthread_mutex_unlock(&b->mu);
}

hispi_msrep_hooks hispi_msrep_hook;

/* The spin budget: the test hook's if set, else 2000 us where every
 * device is a GPU and the machine has a core for every thread that may wait
 * at once (the workers and the caller), else none: with CPU devices (PoCL,
 * the reference backend) or too few cores, spinning steals the time of the
 * work waited for. */
static long spin_budget(hisp_context ctx, int nd, const hisp_device_ref *devs)
{
    if (hispi_msrep_hook.spin_us > 0) return hispi_msrep_hook.spin_us * 1000;
    if (sysconf(_SC_NPROCESSORS_ONLN) <= (long)nd) return 0;
    for (int k = 0; k < nd; k++) {
        bool seen = false; /* each device asked once */
        for (int j = 0; j < k && !seen; j++)
            seen = devs[j].backend == devs[k].backend && devs[j].device == devs[k].device;
        if (seen) continue;
        hisp_device_info info;
        if (hisp_backend_device_info(ctx, devs[k].backend, devs[k].device, &info) != HISP_SUCCESS) {
            hispi_clear_error(ctx);
            return 0;
        }
        if (!info.is_gpu) return 0;
    }
    return 2000 * 1000L;
}

void hispi_msrep_collect(hisp_mplan plan)
{
    hisp_mplan_breakdown *bd = &plan->bd;
    bd->x_ms = bd->compute_ms = bd->gather_ms = bd->merge_ms = 0;
    for (int k = 0; k < plan->nd; k++) {
        worker *w = &plan->w[k];
        bd->dev[k].x_ms = w->x_ms;
        bd->dev[k].compute_ms = w->compute_ms;
        bd->dev[k].gather_ms = w->gather_ms;
        if (w->x_ms > bd->x_ms) bd->x_ms = w->x_ms;
        if (w->compute_ms > bd->compute_ms) bd->compute_ms = w->compute_ms;
        if (w->gather_ms > bd->gather_ms) bd->gather_ms = w->gather_ms;
        if (w->merge_ms > bd->merge_ms) bd->merge_ms = w->merge_ms;
    }
}

hisp_status hispi_msrep_worker_failure(hisp_mplan plan)
{
    for (int k = 0; k < plan->nd; k++) {
        worker *w = &plan->w[k];
        if (w->st == HISP_SUCCESS) continue;
        hisp_error_info e = {0};
        if (w->ctx && hisp_context_last_error(w->ctx, &e) == HISP_SUCCESS && e.message)
            return hispi_fail_native(plan->home, w->st, e.native_code, "device %d (%s %d%s%s): %s",
                                     k, hisp_backend_name(w->ref.backend), w->ref.device,
                                     w->name[0] ? ", " : "", w->name, e.message);
        return hispi_fail(plan->home, w->st, "device %d (%s %d): %s", k,
                          hisp_backend_name(w->ref.backend), w->ref.device,
                          hisp_status_string(w->st));
    }
    return HISP_SUCCESS;
}

static void worker_release(worker *w)
{
    if (w->ctx) {
        const hisp_backend_ops *o = wops(w);
        void *be = w->ctx->be;
        if (w->dev) o->csr_free(be, w->dev);
        hisp_matrix_destroy(&w->L);
        hisp_vector_destroy(&w->xv);
        hisp_vector_destroy(&w->yv);
        if (w->xd) o->buf_free(be, w->xd);
        if (w->yd) o->buf_free(be, w->yd);
        if (w->m0) o->mark_destroy(be, w->m0);
        if (w->m1) o->mark_destroy(be, w->m1);
        hisp_context_destroy(&w->ctx);
    }
    free(w->lptr);
    free(w->yh);
}

static void merge_free_stage(hisp_mplan plan)
{
    if (!plan->mctx) return;
    const hisp_backend_ops *o = plan->mctx->ops;
    void *hb = plan->mctx->be;
    if (plan->stage) o->buf_free(hb, plan->stage);
    for (int k = 0; plan->pstage && k < plan->nd; k++)
        if (plan->pstage[k]) o->buf_free(hb, plan->pstage[k]);
    plan->stage = NULL;
    plan->stage_m = plan->pstage_m = 0;
    if (plan->pstage) memset(plan->pstage, 0, (size_t)plan->nd * sizeof *plan->pstage);
}

static void merge_release(hisp_mplan plan)
{
    if (plan->mctx) {
        merge_free_stage(plan);
        if (plan->shbuf) plan->mctx->ops->buf_free(plan->mctx->be, plan->shbuf);
        plan->shbuf = NULL;
        hisp_context_destroy(&plan->mctx);
    }
    free(plan->pstage);
    plan->pstage = NULL;
}

void hisp_mplan_destroy(hisp_mplan *pp)
{
    if (!pp || !hispi_handle_known(*pp, HISPI_H_MPLAN)) return;
    hisp_mplan plan = *pp;
    if (plan->sync_made) {
        pthread_mutex_lock(&plan->mu);
        plan->quit = true;
        plan->gen++; /* ends the workers' spinning too */
        pthread_cond_broadcast(&plan->go);
        pthread_mutex_unlock(&plan->mu);
    }
    int nw = plan->w ? plan->nd : 0; /* creation may have failed before the workers */
    for (int k = 0; k < nw; k++)
        if (plan->w[k].started) pthread_join(plan->w[k].th, NULL);
    hispi_msrep_dist_release(plan); /* before the contexts that hold its buffers */
    /* the workers have ended: their contexts can be released from here */
    for (int k = 0; k < nw; k++)
        worker_release(&plan->w[k]);
    merge_release(plan);
    if (plan->sync_made) {
        pthread_mutex_destroy(&plan->mu);
        pthread_cond_destroy(&plan->go);
        pthread_cond_destroy(&plan->done);
    }
    if (plan->bar_made) hispi_barrier_destroy(&plan->bar);
    free(plan->w);
    free(plan->parts);
    free(plan->ybuf);
    free(plan->diag);
    plan->magic = 0;
    hispi_handle_free(plan);
    *pp = NULL;
}

/* Device order: grouped by NUMA node (stable), so that each node gets one
 * contiguous range of the nonzeros (the first level) split among its devices
 * (the second). */
static int numa_order(hisp_context ctx, int nd, const hisp_device_ref *devs, int *node, int *order)
{
    int nodes = hispi_numa_nodes();
    for (int k = 0; k < nd; k++) {
        node[k] = nodes > 1 ? hispi_numa_device_node(ctx, devs[k].backend, devs[k].device) : -1;
        order[k] = k;
    }
    /* insertion sort by node (-1, the devices spanning the machine, last) */
    for (int i = 1; i < nd; i++) {
        int v = order[i], key = node[v] < 0 ? 1 << 30 : node[v], j = i - 1;
        while (j >= 0 && (node[order[j]] < 0 ? 1 << 30 : node[order[j]]) > key) {
            order[j + 1] = order[j];
            j--;
        }
        order[j + 1] = v;
    }
    int groups = 0, last = -2;
    for (int i = 0; i < nd; i++)
        if (node[order[i]] != last) {
            last = node[order[i]];
            if (last >= 0) groups++;
        }
    return groups > 0 ? groups : 1;
}

/* diag(A) of a square A over a row partition, kept on the host for the
 * solvers' Jacobi (hisp_solver_solve_dist): the plan does not keep A.
 * Duplicate entries are summed. */
static hisp_status plan_diagonal(hisp_mplan plan, const hispi_msrep_src *src)
{
    if (src->columns || plan->nrows != plan->ncols) return HISP_SUCCESS;
    int64_t n = plan->nrows;
    HISPI_TRY(
        hispi_calloc(plan->home, (size_t)(n > 0 ? n : 1), hisp_type_size(plan->type), &plan->diag));
    for (int64_t i = 0, k = 0; k < src->nnz; k++) {
        if (src->ptr)
            while (k >= src->ptr[i + 1])
                i++;
        else
            i = src->rowidx[k];
        if (src->idx[k] == i)
            hispi_store_real(plan->type, plan->diag, i,
                             hispi_load_real(plan->type, plan->diag, i) +
                                 hispi_load_real(plan->type, src->val, k));
    }
    return HISP_SUCCESS;
}

hisp_status hisp_mplan_create(hisp_matrix A, int nd, const hisp_device_ref *devs,
                              hisp_partition_kind kind, unsigned flags, hisp_mplan *out)
{
    return hisp_mplan_create_weighted(A, nd, devs, kind, flags, 0.0, out);
}

hisp_status hisp_mplan_create_weighted(hisp_matrix A, int nd, const hisp_device_ref *devs,
                                       hisp_partition_kind kind, unsigned flags, double row_cost,
                                       hisp_mplan *out)
{
    if (!hispi_mat_ok(A)) return HISP_ERR_INVALID_HANDLE;
    HISPI_TRY(hispi_matrix_need_host(A));
    hisp_context ctx = A->ctx;
    if (!out) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "output handle is NULL");
    *out = NULL;
    if (!(row_cost >= 0 && row_cost <= 1e9)) /* NaN fails too */
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "row cost %g: need 0 <= row cost <= 1e9 (nonzeros per row)", row_cost);
    if (nd < 1 || nd > HISP_MPLAN_MAX_DEVICES || !devs)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "need 1..%d devices, got %d",
                          HISP_MPLAN_MAX_DEVICES, nd);
    if ((int)kind < 0 || kind >= HISP_PART_COUNT)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "unknown partition kind %d", (int)kind);
    if (A->host.type != HISP_F32 && A->host.type != HISP_F64)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "MSREP SpMV needs f32 or f64, not %s",
                          hisp_type_name(A->host.type));
    for (int k = 0; k < nd; k++) {
        if ((int)devs[k].backend < 0 || devs[k].backend >= HISP_BACKEND_COUNT)
            return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                              "device %d: a concrete backend is needed", k);
        if (!hisp_backend_compiled(devs[k].backend))
            return hispi_fail(ctx, HISP_ERR_NOT_COMPILED, "the %s backend is not compiled in",
                              hisp_backend_name(devs[k].backend));
    }
    hisp_mplan plan = NULL;
    HISPI_TRY(hispi_calloc(ctx, 1, sizeof *plan, (void **)&plan));
    if (hispi_handle_add(plan, HISPI_H_MPLAN, ctx)) {
        free(plan);
        return hispi_fail(ctx, HISP_ERR_OUT_OF_HOST_MEMORY, "no room for a plan handle");
    }
    plan->magic = HISPI_MAGIC_MPLAN;
    plan->home = ctx;
    plan->type = A->host.type;
    plan->kind = kind;
    plan->hisparse = (flags & HISP_MPLAN_HISPARSE) != 0;
    plan->host_merge = (flags & HISP_MPLAN_HOST_MERGE) != 0;
    plan->vendor = (flags & HISP_MPLAN_CUSPARSE) != 0;
    plan->device_ptr = (flags & HISP_MPLAN_DEVICE_PTR) != 0;
    if (plan->vendor && plan->hisparse) {
        hisp_mplan_destroy(&plan);
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "HISP_MPLAN_CUSPARSE and HISP_MPLAN_HISPARSE exclude each other");
    }
    plan->nrows = A->host.nrows;
    plan->ncols = A->host.ncols;
    plan->nd = nd;
    hisp_status s = hispi_calloc(ctx, (size_t)nd, sizeof *plan->w, (void **)&plan->w);
    if (!s) s = hispi_calloc(ctx, (size_t)nd, sizeof *plan->parts, (void **)&plan->parts);
    if (!s) s = hispi_calloc(ctx, (size_t)nd, sizeof *plan->ybuf, (void **)&plan->ybuf);
    if (!s) s = hispi_calloc(ctx, (size_t)nd, sizeof *plan->pstage, (void **)&plan->pstage);
    if (s) {
        hisp_mplan_destroy(&plan);
        return s;
    }
    hisp_mplan_breakdown *bd = &plan->bd;
    bd->partition = kind;
    bd->ndevices = nd;

    /* the source arrays (a temporary conversion when A is in another format) */
    hispi_msrep_src src;
    double t0 = hispi_now_ms();
    s = hispi_msrep_source(A, kind, &src);
    double t1 = hispi_now_ms();
    if (s) {
        hisp_mplan_destroy(&plan);
        return s;
    }
    bd->convert_ms = t1 - t0;
    plan->columns = src.columns;
    plan->vrows = src.nrows;
    plan->vcols = src.ncols;
    plan->src = &src;
    plan->row_cost = row_cost;
    s = hispi_msrep_split(ctx, &src, kind, nd, row_cost, (flags & HISP_MPLAN_ALIGN) != 0,
                          plan->parts);
    double t2 = hispi_now_ms();

    int node[HISP_MPLAN_MAX_DEVICES], order[HISP_MPLAN_MAX_DEVICES];
    plan->numa_nodes = 1;
    if (!(flags & HISP_MPLAN_NO_NUMA))
        plan->numa_nodes = numa_order(ctx, nd, devs, node, order);
    else
        for (int k = 0; k < nd; k++)
            node[k] = -1, order[k] = k;
    bd->numa_nodes = plan->numa_nodes;

    if (!s && (pthread_mutex_init(&plan->mu, NULL) || pthread_cond_init(&plan->go, NULL) ||
               pthread_cond_init(&plan->done, NULL)))
        s = hispi_fail(ctx, HISP_ERR_OUT_OF_HOST_MEMORY, "cannot create the plan's locks");
    if (!s) plan->sync_made = true;
    plan->spin_ns = spin_budget(ctx, nd, devs);
    if (!s && hispi_barrier_init(&plan->bar, (unsigned)nd, plan->spin_ns))
        s = hispi_fail(ctx, HISP_ERR_OUT_OF_HOST_MEMORY, "cannot create the plan's barrier");
    if (!s) plan->bar_made = true;
    for (int k = 0; k < nd && !s; k++) {
        worker *w = &plan->w[k];
        w->plan = plan;
        w->id = k;
        w->ref = devs[order[k]];
        w->numa = node[order[k]];
        w->part = plan->parts[k];
        int earlier = 0, uses = 0; /* this is use `earlier` of a device listed `uses` times */
        for (int j = 0; j < nd; j++)
            if (devs[order[j]].backend == w->ref.backend &&
                devs[order[j]].device == w->ref.device) {
                uses++;
                earlier += j < k;
            }
        bool split = (flags & HISP_MPLAN_SUBDEVICES) && uses > 1;
        w->sub = split ? earlier : -1;
        w->nsub = split ? uses : 0;
        w->yd_op = HISP_OP_N;
    }
    /* start the workers; each opens its device and uploads its part */
    int started = 0;
    if (!s) {
        pthread_mutex_lock(&plan->mu);
        for (int k = 0; k < nd; k++) {
            if (pthread_create(&plan->w[k].th, NULL, worker_main, &plan->w[k])) {
                s = hispi_fail(ctx, HISP_ERR_OUT_OF_HOST_MEMORY, "cannot start worker thread %d",
                               k);
                break;
            }
            plan->w[k].started = true;
            started++;
        }
        while (plan->finished < started)
            pthread_cond_wait(&plan->done, &plan->mu);
        pthread_mutex_unlock(&plan->mu);
    }
    double t3 = hispi_now_ms();
    if (!s) s = plan_diagonal(plan, &src);
    plan->src = NULL;
    if (!s) s = hispi_msrep_worker_failure(plan);
    if (!s && started < nd) s = HISP_ERR_OUT_OF_HOST_MEMORY;
    if (s) {
        if (started < nd && plan->bar_made) { /* the barrier counts nd: fail the others out */
            pthread_mutex_lock(&plan->mu);
            plan->quit = true;
            plan->gen++; /* ends the workers' spinning too */
            pthread_cond_broadcast(&plan->go);
            pthread_mutex_unlock(&plan->mu);
        }
        hispi_msrep_source_free(&src);
        hisp_mplan_destroy(&plan);
        return s;
    }
    hispi_msrep_source_free(&src);
    double lptr_max = 0;
    for (int k = 0; k < nd; k++) {
        worker *w = &plan->w[k];
        if (w->lptr_ms > lptr_max) lptr_max = w->lptr_ms;
        bd->dev[k].backend = w->ref.backend;
        bd->dev[k].device = w->ref.device;
        bd->dev[k].numa_node = w->numa;
        bd->dev[k].sub = w->sub;
        bd->dev[k].nsub = w->nsub;
        bd->dev[k].part = w->part;
        bd->dev[k].nnz = w->part.nnz_end - w->part.nnz_begin;
        bd->dev[k].bytes = w->bytes;
        bd->dev[k].upload_ms = w->upload_ms;
        bd->dev[k].device_ptr = w->device_ptr;
        bd->dev[k].vendor = plan->vendor;
        snprintf(bd->dev[k].name, sizeof bd->dev[k].name, "%s", w->name);
    }
    bd->partition_ms = (t2 - t1) + lptr_max;
    bd->distribution_ms = (t3 - t2) - lptr_max;
    if (bd->distribution_ms < 0) bd->distribution_ms = 0;
    plan->finished = 0;
    *out = plan;
    return HISP_SUCCESS;
}

hisp_status hisp_mspmv(hisp_mplan plan, hisp_op op, const void *alpha, const void *x,
                       const void *beta, void *y)
{
    if (!hispi_handle_live(plan, HISPI_H_MPLAN)) return HISP_ERR_INVALID_HANDLE;
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

/* ---- x and y on a device: hisp_mspmv_vec ---------------------------------- */

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
    if (plan->hisparse || plan->host_merge || !o->buf_peer_copy || !o->buf_axpby) return false;
    for (int k = 0; k < plan->nd; k++)
        if (plan->w[k].ctx->ops != o || plan->w[k].nsub > 0) return false;
    return true;
}

/* The merge context on the vectors' device and the staging buffers of this
 * job (kept across calls; remade when the vectors move or the length
 * changes). */
static hisp_status devmerge_prepare(hisp_mplan plan, hisp_context vctx)
{
    hisp_context h = plan->home;
    if (plan->mctx && (plan->mctx->kind != vctx->kind || plan->mctx->device != vctx->device))
        merge_release(plan);
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
    if (!plan->shbuf) HISPI_TRY(o->buf_alloc(h, hb, (size_t)plan->nd * es, &plan->shbuf));
    if (plan->dop == HISP_OP_N && plan->beta != 0 && plan->stage_m != plan->m) {
        if (plan->stage) o->buf_free(hb, plan->stage);
        plan->stage = NULL;
        plan->stage_m = 0;
        HISPI_TRY(o->buf_alloc(h, hb, (size_t)plan->m * es, &plan->stage));
        plan->stage_m = plan->m;
    }
    if (plan->dop == HISP_OP_T) {
        if (plan->pstage_m != plan->m)
            for (int k = 0; k < plan->nd; k++) {
                if (plan->pstage[k]) o->buf_free(hb, plan->pstage[k]);
                plan->pstage[k] = NULL;
            }
        plan->pstage_m = plan->m;
        for (int k = 0; k < plan->nd; k++) {
            worker *w = &plan->w[k];
            if (part_empty(w) || w->local || plan->pstage[k]) continue;
            HISPI_TRY(o->buf_alloc(h, hb, (size_t)plan->m * es, &plan->pstage[k]));
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
                HISPI_TRY(o->buf_axpby(h, hb, t, q->start - cur, 0, NULL, 0, beta, y, cur));
            if (beta != 0) {
                int64_t r = q->start + (q->shared_first ? 1 : 0);
                HISPI_TRY(o->buf_axpby(h, hb, t, q->end - r, 1, plan->stage, r, beta, y, r));
            }
            if (q->end > cur) cur = q->end;
        }
        if (cur < m) HISPI_TRY(o->buf_axpby(h, hb, t, m - cur, 0, NULL, 0, beta, y, cur));
        for (int k = 0; k < plan->nd; k++) {
            const hisp_part *q = &plan->parts[k];
            if (q->start < q->end && q->shared_first)
                HISPI_TRY(o->buf_axpby(h, hb, t, 1, 1, plan->shbuf, k, 1, y, q->start));
        }
    } else {
        bool first = true;
        for (int k = 0; k < plan->nd; k++) {
            worker *w = &plan->w[k];
            if (part_empty(w)) continue;
            const void *src = w->local ? w->yd : plan->pstage[k];
            HISPI_TRY(o->buf_axpby(h, hb, t, m, 1, src, 0, first ? beta : 1, y, 0));
            first = false;
        }
        if (first) HISPI_TRY(o->buf_axpby(h, hb, t, m, 0, NULL, 0, beta, y, 0));
    }
    return o->synchronize(h, hb);
}

hisp_status hisp_mspmv_vec(hisp_mplan plan, hisp_op op, const void *alpha, hisp_vector x,
                           const void *beta, hisp_vector y)
{
    if (!hispi_handle_live(plan, HISPI_H_MPLAN)) return HISP_ERR_INVALID_HANDLE;
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

hisp_status hisp_mplan_fit_row_cost(hisp_mplan plan, const double *ms, double *row_cost)
{
    if (!hispi_handle_live(plan, HISPI_H_MPLAN)) return HISP_ERR_INVALID_HANDLE;
    if (!row_cost) return hispi_fail(plan->home, HISP_ERR_INVALID_ARGUMENT, "row_cost is NULL");
    /* least squares of t_k = a * nnz_k + b * rows_k over the nonempty parts
     * (no intercept: a launch is microseconds against the milliseconds of a
     * part); the normal equations of the two unknowns */
    double snn = 0, snr = 0, srr = 0, snt = 0, srt = 0;
    int used = 0;
    for (int k = 0; k < plan->nd; k++) {
        const hisp_part *p = &plan->parts[k];
        double t = ms ? ms[k] : plan->bd.dev[k].compute_ms;
        double nz = (double)(p->nnz_end - p->nnz_begin), r = (double)(p->end - p->start);
        if (nz <= 0 || !(t > 0)) continue;
        snn += nz * nz, snr += nz * r, srr += r * r, snt += nz * t, srt += r * t;
        used++;
    }
    double det = snn * srr - snr * snr;
    *row_cost = plan->row_cost;
    if (used < 2 || !(det > 1e-9 * snn * srr)) /* the parts' row/nnz ratios barely differ */
        return HISP_SUCCESS;
    double a = (snt * srr - srt * snr) / det, b = (snn * srt - snr * snt) / det;
    if (a > 0) *row_cost = b > 0 ? b / a : 0;
    if (*row_cost > 1e9) *row_cost = 1e9;
    return HISP_SUCCESS;
}

hisp_status hisp_mplan_get_breakdown(hisp_mplan plan, hisp_mplan_breakdown *b)
{
    if (!hispi_handle_live(plan, HISPI_H_MPLAN)) return HISP_ERR_INVALID_HANDLE;
    if (!b) return hispi_fail(plan->home, HISP_ERR_INVALID_ARGUMENT, "breakdown is NULL");
    *b = plan->bd;
    return HISP_SUCCESS;
}

int hisp_numa_nodes(void)
{
    return hispi_numa_nodes();
}
