/* MSREP worker threads: one per device of a plan, started by plan creation
 * and kept until hisp_mplan_destroy. hispi_msrep_run_round hands every
 * worker the same job (a generation counter under the plan's lock) and waits
 * for all; a worker runs its share of the job (msrep_call.c,
 * msrep_devmerge.c, msrep_dist.c) and reports back. The waits spin before
 * they block where the machine has the cores (msrep_plan.h). */
#include "msrep_plan.h"

#include <unistd.h>

void *hispi_msrep_worker_main(void *arg)
{
    worker *w = arg;
    hisp_mplan plan = w->plan;
    hisp_status st = hispi_msrep_worker_init(w);
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
        if (plan->dist) /* a distributed-vector job */
            w->st = hispi_msrep_dist_work(w);
        else if (plan->devmerge) { /* the caller merges on the device */
            w->st = hispi_msrep_compute_dev(w);
            w->merge_ms = 0;
        } else /* hisp_mspmv: sets w->st */
            hispi_msrep_host_job(w);
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
    b->failed[0] = b->failed[1] = false;
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

bool hispi_barrier_wait_ok(hispi_barrier *b, hisp_status st)
{
    pthread_mutex_lock(&b->mu);
    uint64_t ph = b->phase;
    if (st) b->failed[ph & 1] = true;
    if (++b->count == b->n) { /* the last one in opens it */
        b->count = 0;
        b->failed[(ph + 1) & 1] = false; /* the next phase starts clean */
        b->phase++;
        bool ok = !b->failed[ph & 1];
        pthread_cond_broadcast(&b->cv);
        pthread_mutex_unlock(&b->mu);
        return ok;
    }
    if (b->spin_ns > 0) {
        pthread_mutex_unlock(&b->mu);
        for (hispi_spin sp = hispi_spin_start(b->spin_ns); b->phase == ph && hispi_spin_more(&sp);)
            ;
        pthread_mutex_lock(&b->mu);
    }
    while (b->phase == ph)
        pthread_cond_wait(&b->cv, &b->mu);
    /* failed[ph & 1] stays until phase ph + 1 ends, which needs this thread */
    bool ok = !b->failed[ph & 1];
    pthread_mutex_unlock(&b->mu);
    return ok;
}

hispi_msrep_hooks hispi_msrep_hook; /* test hooks (hispi_msrep.h) */

/* The spin budget: the test hook's if set, else 2000 us where every
 * device is a GPU and the machine has a core for every thread that may wait
 * at once (the workers and the caller), else none: with CPU devices (PoCL,
 * the reference backend) or too few cores, spinning steals the time of the
 * work waited for. */
long hispi_msrep_spin_budget(hisp_context ctx, int nd, const hisp_device_ref *devs)
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
