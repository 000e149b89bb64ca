/* MSREP plans: creation and destruction. hisp_mplan_create_weighted checks
 * the arguments, takes the source arrays of A (a temporary conversion when A
 * is in another format), cuts the parts, orders the devices by NUMA node and
 * starts one worker thread per device (msrep_workers.c); each worker opens
 * its own context on its device and uploads its part (hispi_msrep_worker_init:
 * the local pointers, on the device for p*-opt; a HiSparse tree or a
 * cuSPARSE part where the flags ask). The calls are in msrep_call.c and
 * msrep_devmerge.c, the distributed vectors in msrep_mvector.c and
 * msrep_dist.c. */
#include "msrep_plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

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

/* Creation work of one worker: its local pointers (partition), its context
 * and the upload of its part (distribution). */
hisp_status hispi_msrep_worker_init(worker *w)
{
    hisp_mplan plan = w->plan;
    const hispi_msrep_src *src = plan->src;
    double t0 = hispi_now_ms();
    hispi_numa_bind_thread(w->numa);
    HISPI_TRY(hisp_context_create(&w->ctx));
    hispi_options_inherit(w->ctx, plan->home);
    int64_t rows = w->part.end - w->part.start;
    hisp_status st = HISP_ERR_UNSUPPORTED;
    if (w->nsub > 1) { /* an earlier plan's instance of this part of the device, else a new one */
        st =
            hispi_context_unpark(plan->home, w->ctx, w->ref.backend, w->ref.device, w->sub, w->nsub)
                ? HISP_SUCCESS
                : hispi_context_set_subdevice(w->ctx, w->ref.backend, w->ref.device, w->sub,
                                              w->nsub);
    }
    if (st == HISP_ERR_UNSUPPORTED) { /* whole device, shared with the other parts */
        w->sub = -1;
        w->nsub = 0;
        st = hispi_context_unpark(plan->home, w->ctx, w->ref.backend, w->ref.device, -1, 0)
                 ? HISP_SUCCESS
                 : hisp_context_set_backend(w->ctx, w->ref.backend, w->ref.device);
    }
    HISPI_TRY(st);
    hisp_device_info info;
    if (hisp_context_get_device(w->ctx, &info) == HISP_SUCCESS)
        snprintf(w->name, sizeof w->name, "%.127s", info.name);
    const hisp_backend_ops *o = wops(w);
    if (!HISPI_BE_HAS(w->ctx, csr_upload) || !HISPI_BE_HAS(w->ctx, csr_spmv))
        return hispi_fail(w->ctx, HISP_ERR_UNSUPPORTED, "the %s backend has no CSR SpMV", o->name);
    if (plan->vendor &&
        (!HISPI_BE_HAS(w->ctx, csr_upload_opts) || !(o->csr_caps & HISPI_CSR_VENDOR)))
        return hispi_fail(w->ctx, HISP_ERR_UNSUPPORTED,
                          "cuSPARSE parts need CUDA devices, not the %s backend", o->name);
    /* local pointers: on the device where asked and possible (p*-opt), else
     * here (the part's own copy) */
    w->device_ptr = plan->device_ptr && src->ptr && !plan->hisparse &&
                    HISPI_BE_HAS(w->ctx, csr_upload_opts) &&
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
    HISPI_TRY(HISPI_BE(w->ctx, mark_create, &w->m0));
    HISPI_TRY(HISPI_BE(w->ctx, mark_create, &w->m1));
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
                          ? HISPI_BE(w->ctx, csr_upload_opts, &v, &opts, &w->dev)
                          : HISPI_BE(w->ctx, csr_upload, &v, &w->dev));
        HISPI_TRY(HISPI_BE_SYNC(w->ctx));
        w->bytes = ((uint64_t)rows + 1) * sizeof(int64_t) + (uint64_t)nnz * (4 + es);
        if (w->L)
            HISPI_TRY(hisp_matrix_format_bytes(w->L, HISP_FORMAT_HISPARSE, plan->type, &w->bytes));
    }
    w->upload_ms = hispi_now_ms() - t0 - w->lptr_ms;
    return HISP_SUCCESS;
}

static void worker_release(worker *w)
{
    if (w->ctx) {
        if (w->dev) HISPI_BE_VOID(w->ctx, csr_free, w->dev);
        hisp_matrix_destroy(&w->L);
        hisp_vector_destroy(&w->xv);
        hisp_vector_destroy(&w->yv);
        if (w->xd) HISPI_BE_VOID(w->ctx, buf_free, w->xd);
        if (w->yd) HISPI_BE_VOID(w->ctx, buf_free, w->yd);
        if (w->m0) HISPI_BE_VOID(w->ctx, mark_destroy, w->m0);
        if (w->m1) HISPI_BE_VOID(w->ctx, mark_destroy, w->m1);
        if (!w->st) hispi_context_park(w->plan->home, w->ctx, w->sub, w->nsub);
        hisp_context_destroy(&w->ctx);
    }
    free(w->lptr);
    free(w->yh);
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
    hispi_msrep_merge_release(plan);
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
 * solvers' Jacobi and Chebyshev (hisp_solver_solve_dist): the plan does not
 * keep A. Duplicate entries are summed. With it Gershgorin's bound of
 * rho(D^-1 A) (Chebyshev's cap; infinite where a diagonal entry is not
 * positive). */
static hisp_status plan_diagonal(hisp_mplan plan, const hispi_msrep_src *src)
{
    if (src->columns || plan->nrows != plan->ncols) return HISP_SUCCESS;
    int64_t n = plan->nrows;
    double *off = NULL;
    HISPI_TRY(hispi_calloc(plan->home, (size_t)(n > 0 ? n : 1), sizeof *off, (void **)&off));
    hisp_status s =
        hispi_calloc(plan->home, (size_t)(n > 0 ? n : 1), hisp_type_size(plan->type), &plan->diag);
    for (int64_t i = 0, k = 0; !s && k < src->nnz; k++) {
        if (src->ptr)
            while (k >= src->ptr[i + 1])
                i++;
        else
            i = src->rowidx[k];
        double v = hispi_load_real(plan->type, src->val, k);
        if (src->idx[k] == i)
            hispi_store_real(plan->type, plan->diag, i,
                             hispi_load_real(plan->type, plan->diag, i) + v);
        else
            off[i] += fabs(v);
    }
    plan->gersh = 0;
    for (int64_t i = 0; !s && i < n; i++) {
        double d = hispi_load_real(plan->type, plan->diag, i);
        plan->gersh = d > 0 ? fmax(plan->gersh, 1 + off[i] / d) : INFINITY;
    }
    free(off);
    return s;
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
    plan->spin_ns = hispi_msrep_spin_budget(ctx, nd, devs);
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
            if (pthread_create(&plan->w[k].th, NULL, hispi_msrep_worker_main, &plan->w[k])) {
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
