/* MSREP plans: the plan and its per-device workers, shared by the files of
 * core/msrep/ that run them (msrep_plan.c creation, msrep_workers.c threads
 * and waits, msrep_call.c and msrep_devmerge.c the calls, msrep_mvector.c and
 * msrep_dist.c the distributed vectors, msrep_breakdown.c the costs). Not
 * installed. */
#ifndef HISPI_MSREP_PLAN_H
#define HISPI_MSREP_PLAN_H

#include "backend/backend.h"
#include "hispi.h"
#include "hispi_msrep.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#define HISPI_MAGIC_MPLAN 0x684d506cu /* "hMPl" */

/* Spin-then-block waits. A handoff through a condition variable costs a
 * wake-up latency (futex + scheduler), several per SpMV, a visible share of
 * a short multi-GPU call (BENCHMARKS: MSREP multi-GPU SpMV). Where the machine has a core
 * for each waiting thread, waits first spin for up to spin_ns
 * (2000 us; 0: never; hispi_msrep_spin_budget), then block. */
typedef struct {
    long ns;
    struct timespec t0;
    unsigned i;
} hispi_spin;

static inline hispi_spin hispi_spin_start(long ns)
{
    hispi_spin sp = {ns, {0, 0}, 0};
    if (ns > 0) clock_gettime(CLOCK_MONOTONIC, &sp.t0);
    return sp;
}

/* One more round of spinning? false once the budget is spent. */
static inline bool hispi_spin_more(hispi_spin *sp)
{
    if (sp->ns <= 0) return false;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
    if (++sp->i % 64) return true;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (t.tv_sec - sp->t0.tv_sec) * 1000000000L + (t.tv_nsec - sp->t0.tv_nsec) < sp->ns;
}

/* A barrier of n threads that spins before it blocks. failed[p & 1]: a
 * thread of phase p arrived with a failure (hispi_barrier_wait_ok). */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned n, count;
    _Atomic uint64_t phase;
    bool failed[2];
    long spin_ns;
} hispi_barrier;

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
    bool dot_fused;     /* hispi_mspmv_window: the product's kernel made the dot */
    double wait_ms;     /* hispi_mspmv_window: the wait for x's writers (work queued before) */
    hisp_status st;
    double lptr_ms, upload_ms, x_ms, compute_ms, gather_ms, merge_ms;
    uint64_t bytes;
    char name[128];
} worker;

enum { HISPI_MPLAN_SPARES = 40 }; /* GMRES(30)'s basis and a solve's other vectors */

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
    double row_cost; /* of the split: nnz + row_cost * rows balanced */
    worker *w;
    hisp_part *parts;           /* in worker order (= part order) */
    const hispi_msrep_src *src; /* during creation only */
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    hispi_barrier bar;
    bool sync_made, bar_made;
    long spin_ns;         /* hispi_spin budget of the plan's waits (0: block at once) */
    _Atomic uint64_t gen; /* job generation */
    _Atomic int finished; /* workers done with the current job */
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
    bool relay; /* x of op N relayed between the devices (x_relay, msrep_devmerge.c) */
    hisp_context mctx;
    void *xdev, *ydev;
    void *stage, **pstage, *shbuf;
    int64_t stage_m, pstage_m;
    /* distributed vectors (msrep_mvector.c): the current job (0: none) and its
     * operands; own0/own1: the rows each device owns (they tile the rows) */
    int dist;
    struct hisp_mvector_s *dx, *dy, *dv;
    const void *dsrc;
    void *ddst;
    int64_t *own;                   /* [nd + 1] first owned row of each device, own[nd] = rows */
    struct hisp_mvector_s *vectors; /* live distributed vectors (released with the plan) */
    bool dhost;   /* the devices exchange through host memory (no common peer copies) */
    void *dslot;  /* dhost: each device's shared boundary entry, nd entries */
    void *dstage; /* dhost allgather: the whole vector */
    double *ddot; /* hispi_mspmv_window: each device's part of dot(x, y), or NULL */
    /* DIST_EACH: fn(worker, arg) on every worker (hispi_msrep_each) */
    hisp_status (*each)(worker *w, void *arg);
    void *each_arg;
    void *diag;     /* square A over a row partition: diag(A), nrows entries (host) */
    double gersh;   /* and Gershgorin's bound of rho(D^-1 A) (msrep_plan.c plan_diagonal) */
    double cheb_hi; /* Chebyshev's bound over the plan (msrep_space.c), 0 until its first solve */
    /* the solvers' work vectors kept between solves (core/msrep/msrep_space.c): their
     * allocation and zeroing cost a solve milliseconds on large plans */
    struct hisp_mvector_s *spare[HISPI_MPLAN_SPARES];
    int nspare;
};

static inline const hisp_backend_ops *wops(worker *w)
{
    return w->ctx->ops;
}

static inline bool part_empty(const worker *w)
{
    return w->part.start >= w->part.end;
}

HISPI_LOCAL int hispi_barrier_init(hispi_barrier *b, unsigned n, long spin_ns);
HISPI_LOCAL void hispi_barrier_destroy(hispi_barrier *b);
/* Waits for the n threads, passing this thread's status of the phase it ends: true when
 * every thread arrived with HISP_SUCCESS. Every thread of one phase gets the
 * same answer, so all of them take the same path afterwards (none waits at a
 * later barrier that the others skip). */
HISPI_LOCAL bool hispi_barrier_wait_ok(hispi_barrier *b, hisp_status st);
/* ---- creation and the worker threads (msrep_plan.c, msrep_workers.c) --- */

/* Creation work of one worker, on its thread: its context, local pointers
 * and the upload of its part (msrep_plan.c). */
HISPI_LOCAL hisp_status hispi_msrep_worker_init(worker *w);
/* The thread of a worker (msrep_workers.c): hispi_msrep_worker_init, then
 * one job per round until the plan quits. */
HISPI_LOCAL void *hispi_msrep_worker_main(void *arg);
/* The spin budget of a plan's waits in ns (0: block at once). */
HISPI_LOCAL long hispi_msrep_spin_budget(hisp_context ctx, int nd, const hisp_device_ref *devs);
/* Wakes every worker for one job and waits until all have finished. */
HISPI_LOCAL void hispi_msrep_run_round(hisp_mplan plan);
/* The workers' last x, compute, gather and merge times into the plan's
 * breakdown (per device, and the slowest device's). */
HISPI_LOCAL void hispi_msrep_collect(hisp_mplan plan);
/* The first failing worker's error, copied onto the plan's home context. */
HISPI_LOCAL hisp_status hispi_msrep_worker_failure(hisp_mplan plan);

/* ---- the calls (msrep_call.c, msrep_devmerge.c) ------------------------- */

/* A worker's device buffers for device op dop (host: and the host copy of
 * its partial result); kept across calls with the same op, all or none. */
HISPI_LOCAL hisp_status hispi_msrep_worker_buffers(worker *w, hisp_op dop, bool host);
/* The part's product y_d = alpha op(A_k) x_d between the timing marks m0
 * and m1, waited for (msrep_call.c; the host and device-merge paths). */
HISPI_LOCAL hisp_status hispi_msrep_part_spmv(worker *w);
/* A worker's share of a hisp_mspmv job (host merge); sets w->st. */
HISPI_LOCAL void hispi_msrep_host_job(worker *w);
/* A worker's share of a hisp_mspmv_vec job (device merge): phase 1. */
HISPI_LOCAL hisp_status hispi_msrep_compute_dev(worker *w);
/* Free the device merge's context and staging buffers (plan destruction). */
HISPI_LOCAL void hispi_msrep_merge_release(hisp_mplan plan);

/* ---- distributed vectors (msrep_mvector.c the handles and calls,
 *      msrep_dist.c each device's share of a job) -------------------------- */

/* The job of a distributed-vector round (plan->dist). */
enum { DIST_ALLOC = 1, DIST_WRITE, DIST_READ, DIST_SPMV, DIST_GATHER, DIST_EACH, DIST_WINDOW };

struct hisp_mvector_s {
    uint32_t magic;
    hisp_mplan plan; /* NULL once the plan is gone */
    hisp_mvec_layout layout;
    int64_t n;
    void *buf[HISP_MPLAN_MAX_DEVICES];  /* the device's entries (from row hispi_mvector_org) */
    void *tmp[HISP_MPLAN_MAX_DEVICES];  /* ROWS, OWNED: A_k x where the part starts after org */
    void *shin[HISP_MPLAN_MAX_DEVICES]; /* ROWS, OWNED: shared rows received, a slot per device */
    struct hisp_mvector_s *next;
};

/* ROWS: the first row of device k's buffer -- its part's first row when
 * that row is shared (a slot before the owned rows), else its first owned
 * row. The buffer holds rows [base, own[k+1]). */
static inline int64_t hispi_mvector_base(hisp_mplan plan, int k)
{
    const hisp_part *p = &plan->parts[k];
    return p->start < p->end && p->start < plan->own[k] ? p->start : plan->own[k];
}

/* The row of entry 0 of v's buffer on device k: hispi_mvector_base for ROWS,
 * 0 for the full-length layouts (REPLICATED, OWNED: row i at entry i). */
static inline int64_t hispi_mvector_org(const struct hisp_mvector_s *v, int k)
{
    return v->layout == HISP_MVEC_ROWS ? hispi_mvector_base(v->plan, k) : 0;
}

/* A worker's share of a distributed-vector job (plan->dist). */
HISPI_LOCAL hisp_status hispi_msrep_dist_work(worker *w);
/* fn(w, arg) on every worker thread at once (each on its own context);
 * returns after all have finished, the first failure copied onto the
 * plan's home context. */
HISPI_LOCAL hisp_status hispi_msrep_each(hisp_mplan plan, hisp_status (*fn)(worker *w, void *arg),
                                         void *arg);
/* The plan's spare vectors (its solvers' work vectors between solves): one
 * of the layout taken (NULL where none), one given back (destroyed where
 * there is no room), all destroyed (the plan ends, or a new vector needs
 * their memory). */
HISPI_LOCAL hisp_mvector hispi_mvector_spare_take(hisp_mplan plan, hisp_mvec_layout layout);
HISPI_LOCAL void hispi_mvector_spare_give(hisp_mplan plan, hisp_mvector *v);
HISPI_LOCAL void hispi_mvector_spares_drop(hisp_mplan plan);
/* A live distributed vector of `plan` (false otherwise), and its layout. */
HISPI_LOCAL bool hispi_mvector_of(hisp_mvector v, hisp_mplan plan, hisp_mvec_layout *layout);
/* An internal layout beside hisp.h's two: every device holds a full-length
 * buffer (row i at entry i, zeros where never written) of which only its
 * owned rows are kept current; a product reading it (hispi_mspmv_window)
 * fetches just the rest of its window. The solvers keep the vectors that
 * feed their products so. Square plans only. */
#define HISPI_MVEC_OWNED ((hisp_mvec_layout)2)
/* hisp_mvector_create, HISPI_MVEC_OWNED allowed (the checks of the public
 * call are the caller's). */
HISPI_LOCAL hisp_status hispi_mvector_create(hisp_mplan plan, hisp_mvec_layout layout,
                                             hisp_mvector *out);
/* y = A x (square plan) in one job on every device: x's writers on each
 * device are waited for; each device then fetches the entries of its window
 * (the part's column range and its rows) that other devices own into xs --
 * a halo for a banded matrix, not the whole vector --, xs = x where x is
 * OWNED (its owned rows in place), else a full-length scratch (REPLICATED or
 * OWNED; x ROWS, whose own window rows are copied too); then the product
 * into y (ROWS, or OWNED: through a scratch where the part does not start
 * at row 0) with the shared rows merged as hisp_mspmv_dist. xs's entries
 * outside the windows are left as they are. dot (NULL: none): dot[k] gets
 * device k's share of dot(x, y) (their sum, in device order, is the dot):
 * from the product's kernel where the backend fuses them (csr_spmv_dot: the
 * part's rows with their values before the merge -- the dot is linear in y,
 * so the shares of a shared row add up to its merged term), else a pass over
 * the owned rows after the merge. */
HISPI_LOCAL hisp_status hispi_mspmv_window(hisp_mplan plan, hisp_mvector x, hisp_mvector xs,
                                           hisp_mvector y, double *dot);
/* Device k's part of a ROWS or OWNED vector: its buffer, the owned rows'
 * first entry in it and their count (a ROWS buffer may start with a shared
 * row's slot; an OWNED one starts at row 0). */
HISPI_LOCAL void hispi_mvector_slice(hisp_mvector v, int k, void **buf, int64_t *off, int64_t *n);
/* Free a plan's distributed-vector scratch (at plan destruction). */
HISPI_LOCAL void hispi_msrep_dist_release(hisp_mplan plan);

#endif
