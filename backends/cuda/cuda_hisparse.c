/* CUDA backend: HiSparse upload and SpMV through the dynamic scheduler
 * (core/hisparse/hisparse_sched.h, kernels_cuda/hisparse.cu).
 *
 * Device state of a matrix: the family's pool (core/hisparse/hisparse_dev.c, shared
 * by its matrices, at the host's offsets); one entry array
 * holding every queue (queue q at slots [base[q], base[q] + cap[q]), cap[q]
 * the nodes of that queue in the tree: each node is queued once per SpMV);
 * the fill counters; the controller's state (heads and counts).
 *
 * Two controllers, the same kernels and the same rounds (so the same
 * counts): the device controller (one kernel launch from the host per
 * SpMV, rounds joined by tail launches, see hisparse.cu) and the
 * host-polled one (the test hook hispi_hs_hook.cuda_host_controller: the
 * host reads the fill counters each round and launches the node kernels
 * itself; compute-sanitizer racecheck cannot follow device launches).
 * After either, every counter must equal its capacity (each node
 * processed exactly once), which is checked.
 *
 * A matrix's first SpMV is scheduled; once its counts checked out (every
 * leaf queued once), later SpMVs replay the leaf queues (replay below).
 *
 * The device controller's SpMV does not wait: its counts travel to pinned
 * host memory behind the work, and hisp_cuda_hs_counts (which core calls
 * before anyone reads a result) waits for them and does the check. So
 * back-to-back SpMVs queue like CSR ones, and device events time them. */
#include "cuda_err.h"
#include "cuda_hisparse.h"

#include <stdlib.h>
#include <string.h>

/* What replays of one orientation (A x or A^T x) keep: the leaf queues
 * with their heavy queues sorted by that orientation's output offset, the
 * COO queues' plans and the band plan, all built once. The two
 * orientations keep separate queues (A^T's a copy of the scheduler's), so
 * a solver that alternates A x and A^T x (LSQR, BiCG) sorts and plans once
 * each instead of at every switch; without memory for the copy they share
 * one and redo it at each switch. */
typedef struct {
    void *entries;
    int sorted;
    hisp_cuda_hs_rplan rp[HISP_SCHED_MAX_QUEUES];
    int rp_built;
    unsigned band; /* the band replay's queues (band_queues) */
    /* the band replay's plan of the queues in bp_mask (bp_for 1), or -1: it
     * could not be built */
    hisp_cuda_hs_bplan bp;
    int bp_for;
    unsigned bp_mask;
} hs_orient;

typedef struct {
    int f64, nq;
    /* replay: 0 while the leaf queues are not known complete; 1 once a
     * scheduled SpMV's counts checked out (every leaf queued once) */
    int leaves;
    void *pool, *entries, *tails, *ctl;
    uint64_t base[HISP_SCHED_MAX_QUEUES], cap[HISP_SCHED_MAX_QUEUES];
    /* cap[] is each queue's exact node count (a tree the host holds), or an
     * upper bound (a device-only tree's census) until a scheduled run has
     * counted the queues: cap[] then becomes those counts, which the
     * replays and their plans need */
    bool exact;
    hs_orient o[2]; /* A x, A^T x */
    size_t entries_bytes;
    void *entries_t;      /* A^T x's copy of the queues (NULL: none yet, or no memory) */
    int t_tried, t_fresh; /* its allocation was tried; it holds the current queues */
    /* the band kernel's stream and events, beside the other leaf kernels */
    cudaStream_t side;
    cudaEvent_t fork, join;
} hisp_cuda_hsm;

/* Drops orientation i's sort and plans. */
static void orient_reset(hisp_cuda_hsm *m, int i)
{
    hs_orient *o = &m->o[i];
    for (int q = 0; q < HISP_SCHED_MAX_QUEUES; q++)
        hisp_cuda_hs_rplan_free(&o->rp[q]);
    hisp_cuda_hs_bplan_free(&o->bp);
    o->sorted = o->rp_built = o->bp_for = 0;
    o->band = o->bp_mask = 0;
}

static hisp_status upload(hisp_context ctx, hisp_cuda_hsm *m, const hispi_hs_view *A,
                          cudaStream_t stream)
{
    uint64_t total = 0;
    for (int q = 0; q < m->nq; q++) {
        if (A->cap[q] > UINT32_MAX)
            return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                              "cuda: %llu nodes in one scheduler queue (at most 2^32-1)",
                              (unsigned long long)A->cap[q]);
        m->cap[q] = A->cap[q];
        m->base[q] = total;
        total += A->cap[q];
    }
    m->exact = A->pool != NULL;
    if (total > SIZE_MAX / sizeof(hispi_sched_entry) - 1)
        return hispi_fail(ctx, HISP_ERR_OUT_OF_DEVICE_MEMORY, "cuda: scheduler queues too large");
    /* the family's pool, kept by core (padded for the single-entry kernel's
     * whole 16-byte node loads) */
    m->pool = A->pool_dev;
    m->entries_bytes = ((size_t)total + 1) * sizeof(hispi_sched_entry);
    HISP_CUDA_TRY(ctx, cudaMalloc(&m->entries, m->entries_bytes));
    HISP_CUDA_TRY(ctx, cudaMalloc(&m->tails, HISP_SCHED_MAX_QUEUES * sizeof(uint32_t)));
    HISP_CUDA_TRY(ctx, cudaMalloc(&m->ctl, sizeof(hisp_cuda_hs_ctl)));
    (void)stream;
    /* a round holds at most nq + 1 launches pending; raise the device
     * runtime's limit where it is lower than what several contexts need */
    size_t pending = 0;
    if (cudaDeviceGetLimit(&pending, cudaLimitDevRuntimePendingLaunchCount) == cudaSuccess &&
        pending < 4096 &&
        cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 4096) != cudaSuccess)
        hispi_debug("cuda: could not raise the pending launch limit from %zu", pending);
    (void)cudaGetLastError(); /* the default (2048) is plenty for nq + 1 per round */
    return HISP_SUCCESS;
}

hisp_status hisp_cuda_hs_upload(hisp_context ctx, void *be, const hispi_hs_view *A, void **dev)
{
    *dev = NULL;
    if (A->type != HISP_F32 && A->type != HISP_F64)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "cuda: HiSparse SpMV on %s entries",
                          hisp_type_name(A->type));
    if (A->nqueues > HISP_CUDA_HS_QUEUES)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "cuda: %d scheduler queues", A->nqueues);
    int device = 0;
    cudaStream_t stream = NULL;
    hisp_cuda_be_stream(be, &device, &stream);
    HISP_CUDA_TRY(ctx, cudaSetDevice(device));
    hisp_cuda_hsm *m = NULL;
    HISPI_TRY(hispi_calloc(ctx, 1, sizeof *m, (void **)&m));
    m->f64 = A->type == HISP_F64;
    m->nq = A->nqueues;
    hisp_status s = upload(ctx, m, A, stream);
    if (s) {
        hisp_cuda_hs_free(be, m);
        return s;
    }
    *dev = m;
    return HISP_SUCCESS;
}

/* The counts of the last SpMV of a backend instance: ready (host-polled,
 * empty matrix) or in flight to pinned memory (device controller). */
typedef struct {
    hisp_cuda_hs_ctl *ctl; /* pinned, followed by the fill counters */
    uint32_t *tails;
    cudaEvent_t done;
    int state;    /* 0 none, 1 ready, 2 in flight */
    int prepared; /* carveout hints given: 1 host module, 2 both */
    int cc_major; /* the device's compute capability (0 until read) */
    int nq;
    uint64_t cap[HISP_SCHED_MAX_QUEUES];
    bool exact; /* cap[] exact, else bounds (hisp_cuda_hsm.exact at the launch) */
    const char *names[HISP_SCHED_MAX_QUEUES];
    hisp_sched_counts ready;
    void *m; /* the matrix (hisp_cuda_hsm) of the scheduled run in flight */
} hs_last;

void hisp_cuda_hs_free(void *be, void *dev)
{
    hisp_cuda_hsm *m = dev;
    if (!m) return;
    hs_last *L = *hisp_cuda_be_hs(be);
    if (L && L->m == m) L->m = NULL; /* its counts no longer concern a matrix */
    int device = 0;
    cudaStream_t stream = NULL;
    hisp_cuda_be_stream(be, &device, &stream);
    (void)cudaSetDevice(device);
    orient_reset(m, 0);
    orient_reset(m, 1);
    if (m->side) (void)cudaStreamDestroy(m->side);
    if (m->fork) (void)cudaEventDestroy(m->fork);
    if (m->join) (void)cudaEventDestroy(m->join);
    void *bufs[] = {m->entries, m->entries_t, m->tails, m->ctl}; /* the pool is core's */
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i]) (void)cudaFree(bufs[i]);
    (void)cudaGetLastError();
    free(m);
}

void hisp_cuda_hs_fini(void *p)
{
    hs_last *L = p;
    if (!L) return;
    if (L->ctl) (void)cudaFreeHost(L->ctl);
    if (L->done) (void)cudaEventDestroy(L->done);
    (void)cudaGetLastError();
    free(L);
}

static hisp_status last_of(hisp_context ctx, void *be, hs_last **out)
{
    void **slot = hisp_cuda_be_hs(be);
    if (!*slot) {
        hs_last *L = NULL;
        HISPI_TRY(hispi_calloc(ctx, 1, sizeof *L, (void **)&L));
        cudaError_t e = cudaMallocHost(
            (void **)&L->ctl, sizeof(hisp_cuda_hs_ctl) + HISP_SCHED_MAX_QUEUES * sizeof(uint32_t));
        if (e == cudaSuccess) e = cudaEventCreateWithFlags(&L->done, cudaEventDisableTiming);
        if (e != cudaSuccess) {
            hisp_cuda_hs_fini(L);
            return e == cudaErrorMemoryAllocation
                       ? hispi_fail(ctx, HISP_ERR_OUT_OF_HOST_MEMORY,
                                    "cuda: no pinned host memory for the scheduler counts")
                       : hisp_cuda_fail(ctx, e, "cudaMallocHost / cudaEventCreate");
        }
        L->tails = (uint32_t *)(L->ctl + 1);
        *slot = L;
    }
    *out = *slot;
    return HISP_SUCCESS;
}

/* Every queue must have processed each node it queued, once: with exact
 * capacities every node of the tree; with bounds at most the bound, and m
 * learns the counts. m may be NULL (its upload is gone). */
static hisp_status check_counts(hisp_context ctx, const hs_last *L, hisp_cuda_hsm *m,
                                const uint32_t *tails, hisp_sched_counts *c)
{
    bool exact = L->exact;
    c->total_nodes = c->total_launches = 0;
    for (int q = 0; q < L->nq; q++) {
        if ((exact ? tails[q] != L->cap[q] : tails[q] > L->cap[q]) ||
            (uint64_t)c->nodes[q] != tails[q])
            return hispi_fail(ctx, HISP_ERR_BACKEND,
                              "cuda: scheduler queue %s queued %u and processed %lld of %s%llu "
                              "nodes",
                              L->names[q], tails[q], (long long)c->nodes[q],
                              exact ? "" : "at most ", (unsigned long long)L->cap[q]);
        c->total_nodes += c->nodes[q];
        c->total_launches += c->launches[q];
    }
    if (m && !exact && !m->exact) { /* the counts of this upload's run */
        for (int q = 0; q < L->nq; q++)
            m->cap[q] = tails[q];
        m->exact = true;
    }
    return HISP_SUCCESS;
}

hisp_status hisp_cuda_hs_counts(hisp_context ctx, void *be, hisp_sched_counts *counts)
{
    hs_last *L = *hisp_cuda_be_hs(be);
    memset(counts, 0, sizeof *counts);
    if (!L || L->state == 0) return HISP_SUCCESS;
    if (L->state == 1) {
        *counts = L->ready;
        return HISP_SUCCESS;
    }
    int device = 0;
    cudaStream_t stream = NULL;
    hisp_cuda_be_stream(be, &device, &stream);
    HISP_CUDA_TRY(ctx, cudaSetDevice(device));
    L->state = 0; /* whatever happens, these counts are consumed */
    HISP_CUDA_TRY(ctx, cudaEventSynchronize(L->done));
    counts->queues = L->nq;
    counts->rounds = (int64_t)L->ctl->rounds;
    for (int q = 0; q < L->nq; q++) {
        counts->nodes[q] = (int64_t)L->ctl->nodes[q];
        counts->launches[q] = (int64_t)L->ctl->launches[q];
    }
    HISPI_TRY(check_counts(ctx, L, L->m, L->tails, counts));
    if (L->m) ((hisp_cuda_hsm *)L->m)->leaves = 1; /* a replay may follow */
    L->m = NULL;
    L->ready = *counts;
    L->state = 1;
    return HISP_SUCCESS;
}

/* The host-polled controller: rounds driven from here, counts exact. */
static hisp_status host_rounds(hisp_context ctx, const hisp_cuda_hsm *m, const hisp_cuda_hs *P,
                               const hispi_sched_policy *p, cudaStream_t stream,
                               hisp_sched_counts *counts, uint32_t *tails)
{
    uint64_t head[HISP_SCHED_MAX_QUEUES] = {0};
    for (;;) {
        HISP_CUDA_TRY(ctx, cudaMemcpyAsync(tails, m->tails, (size_t)m->nq * sizeof *tails,
                                           cudaMemcpyDeviceToHost, stream));
        HISP_CUDA_TRY(ctx, cudaStreamSynchronize(stream));
        hispi_xfer(ctx, HISPI_CONTROL, (size_t)m->nq * sizeof *tails);
        uint64_t pending[HISP_SCHED_MAX_QUEUES];
        bool launch[HISP_SCHED_MAX_QUEUES];
        for (int q = 0; q < m->nq; q++)
            pending[q] = tails[q] - head[q];
        if (!hispi_sched_pick(p, pending, launch)) return HISP_SUCCESS;
        counts->rounds++;
        for (int q = 0; q < m->nq; q++) {
            if (!launch[q]) continue;
            HISP_CUDA_TRY(ctx, hisp_cuda_hs_node(P, q, m->base[q] + head[q], pending[q], stream));
            head[q] = tails[q];
            counts->nodes[q] += (int64_t)pending[q];
            counts->launches[q]++;
        }
    }
}

/* Entries of COO leaf queue q as far as known: its plan's count, one per
 * node for single-entry leaves, or `guess` per node. */
static uint64_t queue_entries(const hisp_cuda_hsm *m, const hs_orient *o, const hisp_cuda_hs *P,
                              int q, uint64_t guess)
{
    if (P->tpn[q] == 1) return m->cap[q];
    return o->rp[q].off ? o->rp[q].total : m->cap[q] * guess;
}

/* The band replay's queues (a bit mask), by the share of the COO entries in
 * short leaves (under a warp per leaf): half or more, every COO queue;
 * a quarter or more, the short-leaf queues; else none. A matrix with most
 * entries in short leaves (rmat) runs fastest with every leaf banded, A x
 * and A^T x; one with about half (circuit) with its short leaves banded
 * and its long ones (long runs) through their plan; those with few
 * (poisson3d, banded, blockdiag) run slower banded: their bands hold a few
 * hundred to two thousand entries, too few for a block's set-up and flush
 * (BENCHMARKS: HiSparse SpMV). */
static unsigned band_queues(const hisp_cuda_hsm *m, const hs_orient *o, const hisp_cuda_hs *P)
{
    unsigned coo = 0, shorts = 0;
    uint64_t in = 0, out = 0;
    for (int q = 0; q < m->nq; q++) {
        if (P->fn[q] != HISPI_NF_LEAF_COO || !m->cap[q]) continue;
        coo |= 1u << q;
        if (P->tpn[q] < 32) {
            shorts |= 1u << q;
            in += queue_entries(m, o, P, q, 2);
        } else {
            out += queue_entries(m, o, P, q, HISPI_SCHED_FEW + 1);
        }
    }
    if (2 * in >= in + out) return coo;
    return in && 4 * in >= in + out ? shorts : 0;
}

/* The replay's plans of the COO leaf queues with several threads per leaf
 * (hs_leaf_replay*), built once per queue order. A queue the plan cannot
 * take (over 2^32 entries, no device memory for it) keeps the flattened
 * kernel. */
static hisp_status replay_plans(hisp_context ctx, hisp_cuda_hsm *m, hs_orient *o,
                                const hisp_cuda_hs *P, cudaStream_t stream)
{
    if (o->rp_built) return HISP_SUCCESS;
    for (int q = 0; q < m->nq; q++) {
        if (P->fn[q] != HISPI_NF_LEAF_COO || P->tpn[q] < 2 || !m->cap[q]) continue;
        cudaError_t e = hisp_cuda_hs_rplan_build(P, q, m->cap[q], &o->rp[q], stream);
        if (e == cudaErrorInvalidValue || e == cudaErrorMemoryAllocation) {
            (void)cudaGetLastError();
            hispi_debug("cuda: replay of queue %d without a plan (%s)", q, cudaGetErrorName(e));
            continue;
        }
        HISP_CUDA_TRY(ctx, e);
        hispi_xfer(ctx, HISPI_CONTROL, 7 * 8); /* the build reads 7 counters */
        hispi_debug("cuda: replay plan of queue %d: %u leaves, %u entries, runs %.3f, %u per "
                    "lane%s%s",
                    q, o->rp[q].nleaves, o->rp[q].total, o->rp[q].runs, o->rp[q].width,
                    o->rp[q].perm ? ", leaves ordered by column" : "",
                    o->rp[q].vec ? ", vector adds" : "");
    }
    o->rp_built = 1;
    o->band = band_queues(m, o, P);
    return HISP_SUCCESS;
}

/* The band plan of the queues in mask for this orientation, built once;
 * false where it cannot be built (those queues keep their own kernels). */
static hisp_status band_plan(hisp_context ctx, hisp_cuda_hsm *m, hs_orient *o,
                             const hisp_cuda_hs *P, unsigned mask, uint64_t ny, cudaStream_t stream,
                             bool *ok)
{
    *ok = false;
    if (o->bp_mask == mask && o->bp_for == 1) {
        *ok = true;
        return HISP_SUCCESS;
    }
    if (o->bp_mask == mask && o->bp_for == -1) return HISP_SUCCESS; /* tried */
    hisp_cuda_hs_bplan_free(&o->bp);
    o->bp_mask = mask;
    o->bp_for = -1;
    int qs[HISP_SCHED_MAX_QUEUES], nq = 0;
    uint64_t cap[HISP_SCHED_MAX_QUEUES];
    for (int q = 0; q < m->nq; q++)
        if (mask & (1u << q)) {
            qs[nq] = q;
            cap[nq++] = m->cap[q];
        }
    cudaError_t e = hisp_cuda_hs_bplan_build(P, qs, nq, cap, &o->bp, stream);
    if (e == cudaErrorInvalidValue || e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        hispi_debug("cuda: no band plan (%s)", cudaGetErrorName(e));
        return HISP_SUCCESS;
    }
    HISP_CUDA_TRY(ctx, e);
    hispi_xfer(ctx, HISPI_CONTROL, 5 * 8); /* the build reads 5 counters */
    e = hisp_cuda_hs_bplan_tune(P, &o->bp, ny, stream);
    if (e == cudaErrorMemoryAllocation) { /* no room for its scratch y: the plan's default */
        (void)cudaGetLastError();
        hispi_debug("cuda: band plan variant not timed (%s)", cudaGetErrorName(e));
    } else {
        HISP_CUDA_TRY(ctx, e);
    }
    o->bp_for = 1;
    *ok = true;
    hispi_debug("cuda: band plan of queues 0x%x: %u leaves, %u entries, %u units; %u warps, %s",
                mask, o->bp.nleaves, o->bp.total, o->bp.units, o->bp.warps,
                o->bp.atomic ? "atomics" : "a set per warp");
    return HISP_SUCCESS;
}

/* Replay: once a
 * scheduled SpMV has filled the queues, later SpMVs launch the leaf kernels
 * straight over the leaf queues, the heavy ones sorted once by output
 * offset (so a row band's leaves are processed by neighbouring blocks while
 * its part of y is in L2): no inner levels, one round. The COO queues run
 * through their plans (replay_plans), the band plan (band_queues) or, where
 * neither could be built, the scheduler's kernels. */
static hisp_status replay(hisp_context ctx, hisp_cuda_hsm *m, const hisp_cuda_hs *P0, uint64_t ny,
                          cudaStream_t stream, hisp_sched_counts *counts)
{
    const int i = P0->tr ? 1 : 0;
    hs_orient *o = &m->o[i];
    if (i == 1 && !m->t_tried) { /* A^T x's own copy of the queues */
        m->t_tried = 1;
        if (cudaMalloc(&m->entries_t, m->entries_bytes) != cudaSuccess) {
            (void)cudaGetLastError();
            m->entries_t = NULL;
            hispi_debug("cuda: no memory for A^T x's queues: A x and A^T x share one");
        }
    }
    if (i == 1 && m->entries_t && !m->t_fresh) {
        HISP_CUDA_TRY(ctx, cudaMemcpyAsync(m->entries_t, m->entries, m->entries_bytes,
                                           cudaMemcpyDeviceToDevice, stream));
        m->t_fresh = 1;
        orient_reset(m, 1);
    }
    o->entries = i == 1 && m->entries_t ? m->entries_t : m->entries;
    hisp_cuda_hs Pl = *P0;
    Pl.entries = o->entries;
    const hisp_cuda_hs *P = &Pl;
    if (!o->sorted) {
        if (o->entries == m->o[1 - i].entries) orient_reset(m, 1 - i); /* shared: re-sorted */
        orient_reset(m, i);
        /* only the queues of leaves with many entries (tpn >= a warp: the
         * bulk of regular matrices, faster sorted); short leaves stay in the
         * scheduler's order, which spreads the adds of a power-law matrix's
         * hub rows and columns (sorted, rmat's A^T x was much slower) */
        for (int q = 0; q < m->nq; q++)
            if (P->fn[q] >= HISPI_NF_LEAF_COO && P->tpn[q] >= 32 && m->cap[q] > 1) {
                cudaError_t e = hisp_cuda_hs_sort_entries(
                    (hispi_sched_entry *)o->entries + m->base[q], m->cap[q], P->tr, stream);
                if (e == cudaErrorInvalidValue) break; /* too many to sort: replay unsorted */
                HISP_CUDA_TRY(ctx, e);
            }
        o->sorted = 1;
    }
    HISPI_TRY(replay_plans(ctx, m, o, P, stream));
    unsigned band = o->band;
    bool banded = false;
    cudaStream_t side = NULL;
    if (band) HISPI_TRY(band_plan(ctx, m, o, P, band, ny, stream, &banded));
    if (banded) {
        for (int q = 0; q < m->nq; q++) /* their own plans are not needed */
            if (band & (1u << q)) hisp_cuda_hs_rplan_free(&o->rp[q]);
        /* the band kernel on a stream of its own, beside the other leaf
         * kernels (all of them only add into y; faster than one after the
         * other on circuit, the one suite matrix with both) */
        bool others = false;
        for (int q = 0; q < m->nq; q++)
            others |= P->fn[q] >= HISPI_NF_LEAF_COO && m->cap[q] && !(band & (1u << q));
        if (others) {
            if (!m->side)
                HISP_CUDA_TRY(ctx, cudaStreamCreateWithFlags(&m->side, cudaStreamNonBlocking));
            if (!m->fork)
                HISP_CUDA_TRY(ctx, cudaEventCreateWithFlags(&m->fork, cudaEventDisableTiming));
            if (!m->join)
                HISP_CUDA_TRY(ctx, cudaEventCreateWithFlags(&m->join, cudaEventDisableTiming));
            HISP_CUDA_TRY(ctx, cudaEventRecord(m->fork, stream));
            HISP_CUDA_TRY(ctx, cudaStreamWaitEvent(m->side, m->fork, 0));
            side = m->side;
        }
        HISP_CUDA_TRY(ctx, hisp_cuda_hs_bplan_run(P, &o->bp, side ? side : stream));
    }
    counts->rounds = 1;
    bool first = true; /* the band kernel counts as the first banded queue's launch */
    for (int q = 0; q < m->nq; q++)
        if (P->fn[q] >= HISPI_NF_LEAF_COO && m->cap[q]) {
            counts->launches[q] = 1;
            if (banded && (band & (1u << q))) {
                counts->launches[q] = first ? 1 : 0;
                first = false;
            } else if (o->rp[q].off) {
                HISP_CUDA_TRY(ctx, hisp_cuda_hs_rplan_run(P, &o->rp[q], stream));
            } else {
                HISP_CUDA_TRY(ctx, hisp_cuda_hs_node(P, q, m->base[q], m->cap[q], stream));
            }
            counts->nodes[q] = (int64_t)m->cap[q];
            counts->total_nodes += counts->nodes[q];
            counts->total_launches += counts->launches[q];
        }
    if (side) { /* the call's stream waits for the band kernel */
        HISP_CUDA_TRY(ctx, cudaEventRecord(m->join, side));
        HISP_CUDA_TRY(ctx, cudaStreamWaitEvent(stream, m->join, 0));
    }
    return HISP_SUCCESS;
}

/* The device's compute capability major version (0 if it cannot be read). */
static int cc_major(int device)
{
    int v = 0;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return v;
}

hisp_status hisp_cuda_hs_spmv(hisp_context ctx, void *be, void *dev, const hispi_sched_args *a,
                              const void *x, void *y, hisp_sched_counts *counts)
{
    (void)counts; /* given by hisp_cuda_hs_counts */
    hisp_cuda_hsm *m = dev;
    const hispi_sched_policy *p = a->policy;
    int device = 0;
    cudaStream_t stream = NULL;
    hisp_cuda_be_stream(be, &device, &stream);
    if (p->nqueues != m->nq)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "cuda: policy has %d queues, upload %d",
                          p->nqueues, m->nq);
    for (int q = 0; q < m->nq; q++) { /* a launch covers at most all of a queue */
        uint64_t per = (uint64_t)(p->q[q].group / p->q[q].tpn);
        if ((m->cap[q] + per - 1) / per > INT32_MAX)
            return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                              "cuda: queue %s would need more than 2^31-1 blocks", p->q[q].name);
    }
    hs_last *L = NULL;
    HISPI_TRY(last_of(ctx, be, &L));
    if (L->state == 2 && L->m) {
        /* a matrix's scheduled run is in flight: check its counts now
         * (they wait for its work; once per matrix and upload), or its
         * leaf queues would never count as complete for its replays */
        hisp_sched_counts prev;
        HISPI_TRY(hisp_cuda_hs_counts(ctx, be, &prev));
    }
    L->state = 0;
    L->nq = m->nq;
    for (int q = 0; q < m->nq; q++) {
        L->cap[q] = a->root ? m->cap[q] : 0;
        L->names[q] = p->q[q].name;
    }
    L->exact = m->exact || !a->root;
    memset(&L->ready, 0, sizeof L->ready);
    L->ready.queues = m->nq;
    HISP_CUDA_TRY(ctx, cudaSetDevice(device));

    hisp_cuda_hs P;
    memset(&P, 0, sizeof P);
    P.f64 = m->f64;
    P.nq = m->nq;
    P.log2d = a->log2d;
    P.depth = a->depth;
    P.tr = a->transposed;
    P.pool = m->pool;
    P.entries = m->entries;
    P.tails = m->tails;
    P.ctl = m->ctl;
    for (int q = 0; q < m->nq; q++) {
        P.base[q] = m->base[q];
        P.fn[q] = p->q[q].fn;
        P.tpn[q] = p->q[q].tpn;
        P.group[q] = p->q[q].group;
        P.threshold[q] = p->q[q].threshold;
    }
    P.alpha = a->alpha;
    P.x = x;
    P.y = y;
    P.root = a->root;
    P.root_queue = a->root_queue;
    /* f32 vector reductions exist from sm_90 */
    if (!L->cc_major) L->cc_major = cc_major(device);
    P.vred = !P.f64 && L->cc_major >= 9;
    int host = hispi_hs_hook.cuda_host_controller != 0;
    if (L->prepared < (host ? 1 : 2)) {
        if (hisp_cuda_hs_prepare(!host) != cudaSuccess)
            hispi_debug("cuda: shared-memory carveout hint refused");
        (void)cudaGetLastError();
        L->prepared = host ? 1 : 2;
    }
    HISP_CUDA_TRY(ctx, hisp_cuda_hs_begin(&P, a->ny, a->beta, stream));
    if (!a->root) {
        L->state = 1;
        return HISP_SUCCESS;
    }
    if (m->leaves) {
        HISPI_TRY(replay(ctx, m, &P, (uint64_t)a->ny, stream, &L->ready));
        L->state = 1;
        return HISP_SUCCESS;
    }
    m->leaves = 0;      /* this run rewrites the queues; complete once checked */
    orient_reset(m, 0); /* and their orders and plans */
    orient_reset(m, 1);
    m->t_fresh = 0;
    if (host) {
        uint32_t tails[HISP_SCHED_MAX_QUEUES] = {0};
        HISPI_TRY(host_rounds(ctx, m, &P, p, stream, &L->ready, tails));
        HISPI_TRY(check_counts(ctx, L, m, tails, &L->ready));
        m->leaves = 1; /* every leaf queued once: a replay may follow */
        L->state = 1;
        return HISP_SUCCESS;
    }
    HISP_CUDA_TRY(ctx, hisp_cuda_hs_controller(&P, stream));
    HISP_CUDA_TRY(ctx,
                  cudaMemcpyAsync(L->ctl, m->ctl, sizeof *L->ctl, cudaMemcpyDeviceToHost, stream));
    HISP_CUDA_TRY(ctx, cudaMemcpyAsync(L->tails, m->tails, (size_t)m->nq * sizeof *L->tails,
                                       cudaMemcpyDeviceToHost, stream));
    hispi_xfer(ctx, HISPI_CONTROL, sizeof *L->ctl + (size_t)m->nq * sizeof *L->tails);
    HISP_CUDA_TRY(ctx, cudaEventRecord(L->done, stream));
    L->state = 2;
    L->m = m; /* complete once its counts check out (hisp_cuda_hs_counts) */
    return HISP_SUCCESS;
}
