/* MSREP plans: the plan and its per-device workers (core/msrep.c), shared
 * with the distributed vectors (core/msrep_dist.c). Not installed. */
#ifndef HISPI_MSREP_PLAN_H
#define HISPI_MSREP_PLAN_H

#include "../backends/backend.h"
#include "hispi_msrep.h"

#include <pthread.h>

#define HISPI_MAGIC_MPLAN 0x684d506cu /* "hMPl" */

typedef struct worker {
    struct hisp_mplan_s *plan;
    int id;
    pthread_t th;
    bool started;
    hisp_device_ref ref;
    int sub, nsub; /* sub-device sub of nsub, -1 / 0: the whole device */
    int numa;
    hisp_context ctx;
    hisp_part part;
    int64_t *lptr;
    void *dev;          /* the backend's copy of the local CSR */
    hisp_matrix L;      /* HiSparse plans: the part as a tree (on ctx) */
    hisp_vector xv, yv; /* and its vectors */
    void *xd, *yd;      /* device buffers: x (whole or slice), partial result */
    int64_t xlen, ylen; /* their lengths for the current device op */
    int64_t c0, c1;     /* view columns [c0, c1) the part touches: the x window of op N */
    hisp_op yd_op;      /* the device op yd was sized for */
    void *yh;           /* host copy of the partial result */
    void *m0, *m1;      /* device time marks */
    bool local;         /* device merge: on the merge device (its yd is read in place) */
    bool device_ptr;    /* p*-opt: the device made its local pointers */
    hisp_status xst;    /* device merge, relay of x: this worker's first phase */
    hisp_status st;
    double lptr_ms, upload_ms, x_ms, compute_ms, gather_ms, merge_ms;
    uint64_t bytes;
    char name[128];
} worker;

struct hisp_mplan_s {
    uint32_t magic;
    hisp_context home; /* failures are recorded here */
    hisp_type type;
    hisp_partition_kind kind;
    bool columns;
    bool hisparse;        /* HISP_MPLAN_HISPARSE */
    int64_t nrows, ncols; /* of A */
    int64_t vrows, vcols; /* of the view (A, or A^T for column kinds) */
    int nd;
    worker *w;
    hisp_part *parts;           /* in worker order (= part order) */
    const hispi_msrep_src *src; /* during creation only */
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    pthread_barrier_t bar;
    bool sync_made, bar_made;
    uint64_t gen; /* job generation */
    int finished; /* workers done with the current job */
    bool quit;
    /* the current job */
    hisp_op dop; /* device op */
    double alpha, beta;
    const void *x;
    void *y;
    int64_t m; /* output length */
    void **ybuf;
    hisp_mplan_breakdown bd;
    int numa_nodes;
    bool host_merge; /* HISP_MPLAN_HOST_MERGE */
    bool vendor;     /* HISP_MPLAN_CUSPARSE */
    bool device_ptr; /* HISP_MPLAN_DEVICE_PTR asked */
    /* device-side merge (hisp_mspmv_vec): the current job's mode, a context of
     * the plan's own on the vectors' device (its queue runs the merge), the
     * vectors' buffers, staging: m entries for the row merge with beta != 0,
     * one partial vector per device not on the merge device for the sum
     * merge, the first entry of each part (shared rows) */
    bool devmerge;
    bool relay; /* x of op N relayed between the devices (x_relay) */
    hisp_context mctx;
    void *xdev, *ydev;
    void *stage, **pstage, *shbuf;
    int64_t stage_m, pstage_m;
    /* distributed vectors (msrep_dist.c): the current job (0: none) and its
     * operands; own0/own1: the rows each device owns (they tile the rows) */
    int dist;
    struct hisp_mvector_s *dx, *dy, *dv;
    const void *dsrc;
    void *ddst;
    int64_t *own;                   /* [nd + 1] first owned row of each device, own[nd] = rows */
    struct hisp_mvector_s *vectors; /* live distributed vectors (released with the plan) */
};

static inline const hisp_backend_ops *wops(worker *w)
{
    return w->ctx->ops;
}

static inline bool part_empty(const worker *w)
{
    return w->part.start >= w->part.end;
}

/* Wakes every worker for one job and waits until all have finished. */
HISPI_LOCAL void hispi_msrep_run_round(hisp_mplan plan);
/* The workers' last x, compute, gather and merge times into the plan's
 * breakdown (per device, and the slowest device's). */
HISPI_LOCAL void hispi_msrep_collect(hisp_mplan plan);
/* The first failing worker's error, copied onto the plan's home context. */
HISPI_LOCAL hisp_status hispi_msrep_worker_failure(hisp_mplan plan);
/* A worker's share of a distributed-vector job (plan->dist, msrep_dist.c). */
HISPI_LOCAL hisp_status hispi_msrep_dist_work(worker *w);
/* Free a plan's distributed-vector scratch (at plan destruction). */
HISPI_LOCAL void hispi_msrep_dist_release(hisp_mplan plan);

#endif
