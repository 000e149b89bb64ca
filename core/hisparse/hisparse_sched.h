/* The dynamic scheduler's policy for HiSparse operations: hardware-neutral,
 * shared by every backend (the OpenCL host controller, the CUDA device
 * controller, the host simulation of the reference backend).
 *
 * A tree operation is a set of queues. A queue holds entries (node
 * reference, row and column offset of the node's first cell, depth) of
 * nodes that wait to be processed by one node function, with a fixed
 * number of threads per node. A work-group (thread block) of `group`
 * threads takes group / tpn consecutive entries, so small nodes share a
 * group and all of its threads work, while a heavy node gets a whole group.
 *
 * The controller works in rounds: it reads how many entries wait in each
 * queue, picks the queues to launch (hispi_sched_pick: a deterministic rule
 * on the fill levels), launches one node kernel per picked queue on the
 * entries queued so far, and repeats when those kernels have finished. A
 * kernel queues children for later rounds; it never waits on work queued by
 * its own launch. Since the fill levels after each round do not depend on
 * the order in which work-items ran, the counts (nodes per queue, launches,
 * rounds) are the same on every run and every backend.
 *
 * The policy, the queues, the views a backend receives (hispi_hs_view,
 * hispi_sched_args) and the policy functions a backend calls are part of the
 * backend contract: core/backend/sched_view.h. Here: what only the core uses. */
#ifndef HISPI_HISPARSE_SCHED_H
#define HISPI_HISPARSE_SCHED_H

#include "backend/sched_view.h"
#include "hispi.h"

struct hispi_hisparse;
/* Queue capacities of the SpMV of h (nodes per queue) and the root's queue. */
HISPI_LOCAL void hispi_sched_spmv_caps(const struct hispi_hisparse *h, const hispi_sched_policy *p,
                                       uint64_t *cap, int *root_queue);
/* The scheduler run on the host exactly as a device runs it (rounds,
 * queues, entries), on a pool in host memory; x and y host arrays. The
 * reference backend's hisparse_spmv and the tests' oracle of the counts.
 * Entries are processed in queue order, so results are reproducible. */
HISPI_LOCAL hisp_status hispi_sched_spmv_host(hisp_context ctx, const unsigned char *pool,
                                              const hispi_sched_args *a, const uint64_t *cap,
                                              const void *x, void *y, hisp_sched_counts *counts);
/* The same with the queues' memory given: entries of at least
 * hispi_sched_host_entries(cap, nqueues) (NULL: allocated for the call,
 * before y is written). */
HISPI_LOCAL hisp_status hispi_sched_spmv_host_in(hisp_context ctx, const unsigned char *pool,
                                                 const hispi_sched_args *a, const uint64_t *cap,
                                                 hispi_sched_entry *entries, const void *x, void *y,
                                                 hisp_sched_counts *counts);
HISPI_LOCAL size_t hispi_sched_host_entries(const uint64_t *cap, int nqueues);

#endif
