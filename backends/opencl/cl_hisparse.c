/* OpenCL backend: HiSparse upload and SpMV with the host as the scheduler's
 * controller (core/hisparse/hisparse_sched.h, kernels/hisparse_spmv.cl).
 *
 * Device state of a matrix: the family's pool (core/hisparse/hisparse_dev.c); one entry array
 * holding every queue (queue q at slots [qbase[q], qbase[q] + cap[q]),
 * cap[q] = the nodes of that queue in the tree, since each node is queued
 * once per SpMV); fill counters bumped by atomic_add in the kernels.
 * Entries are never reused within one SpMV, so there is no generation swap
 * and a kernel can append while earlier ranges are being read. The root's
 * entry sits in the first slot of its queue (written at upload).
 *
 * Two mappings of the node work onto the device:
 *
 * - owner (CPU devices, the default there): the output blocks are cut into
 *   P ranges of about equal leaf work (hispi_sched_spmv_owners, for rows
 *   and for columns); each leaf queue is split into P sub-queues and a
 *   range's leaves are processed by one work-item, so y is written without
 *   atomics. A round is one blocking read of the counters, then at most two
 *   launches: every picked leaf queue in one kernel (P work-items), every
 *   picked inner queue in another (one work-item per node). The first leaf
 *   launch also scales y by beta, range by range. PoCL's compare-exchange
 *   loops on y were two thirds of the time before (perf on poisson3d).
 * - atomic (GPUs; on CPUs through the test hook hispi_hs_hook.cl_atomic):
 *   one kernel per picked queue with the policy's threads per node, leaves
 *   adding into y with atomic adds (compare-exchange loops, or
 *   red.global.add on NVIDIA's platform).
 *
 * Both run exactly the rounds of the host simulation: each picked queue is
 * served once per round on the entries queued before the round, so the
 * counts are the simulation's (with the owner mapping, launches[q] counts
 * the rounds that served queue q, whichever kernel did). PoCL gives no
 * forward-progress guarantee between work-groups, so no kernel ever waits
 * on work of its own launch.
 *
 * A matrix's first SpMV (per orientation with the owner mapping, whose
 * sub-queues depend on it: each orientation has its own entry array) is
 * scheduled; later ones replay the full leaf queues in one round. */
#include "cl_backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char hispi_kern_src_hisparse_spmv[];

enum {
    K_INNER_COO,
    K_INNER_DENSE,
    K_LEAF_COO,
    K_LEAF_DENSE,
    K_SCALE,
    K_OWN_INNER,
    K_OWN_LEAVES,
    K_COUNT
};
static const char *const kernel_names[K_COUNT] = {"hs_inner_coo",  "hs_inner_dense", "hs_leaf_coo",
                                                  "hs_leaf_dense", "hs_scale_y",     "hs_own_inner",
                                                  "hs_own_leaves"};

typedef struct {
    hisp_type type;
    int nq;
    uint64_t cap[HISP_SCHED_MAX_QUEUES], base[HISP_SCHED_MAX_QUEUES];
    cl_mem pool; /* the family's device pool (core's: not released here) */
    cl_mem entries, tails, bases;
    cl_mem entries_t; /* owner mapping, A^T x: its own entry array (made at the first) */
    uint64_t root_at; /* the root's slot (its queue's first), 0 when empty */
    hispi_sched_entry root;
    /* owner mapping (P > 0 when the device is a CPU) */
    int P;
    int64_t nblocks[2];
    uint64_t *ocap[2];                         /* [nq * P] sub-queue capacities: rows, columns */
    cl_uint *ctr_init;                         /* [12 * P]: the counters at the start of an SpMV */
    cl_uint tails_init[HISP_SCHED_MAX_QUEUES]; /* the same for the atomic mapping */
    cl_mem ctr;      /* tails [8 * P], heads of the leaf sub-queues [4 * P] */
    cl_mem obase[2]; /* [nq * P] first slot of each sub-queue */
    cl_mem part[2];  /* block -> range */
    cl_mem first[2]; /* [P + 1] first block of each range */
    int nv_asm;      /* NV_ASM level of this program (2: red.global atomics) */
    cl_kernel k[K_COUNT];
    /* replay: the leaf queues hold every leaf after a scheduled SpMV, in
     * [base[q], base[q] + fill[q]); the owner mapping's sub-queues in the
     * arrangement of one direction (entries: A x, entries_t: A^T x); the
     * atomic mapping's in `entries` */
    bool replay_own[2], replay_atomic;
    cl_uint *ctr_full[2]; /* [12 * P]: the counters of an owner replay */
    /* the queues' fills after the atomic mapping's scheduled run: cap[] is a
     * bound for a tree only the device holds (its census), never a fill */
    uint64_t fill[HISP_SCHED_MAX_QUEUES];
} hisp_cl_hs;

void hisp_cl_hs_free(void *vbe, void *dev)
{
    hisp_cl_be *be = vbe;
    hisp_cl_hs *m = dev;
    if (!m) return;
    /* a non-blocking write may still read ctr_init */
    if (be && be->queue) clFinish(be->queue);
    for (int i = 0; i < K_COUNT; i++)
        if (m->k[i]) clReleaseKernel(m->k[i]);
    cl_mem bs[] = {m->entries, m->tails,   m->bases,    m->ctr,      m->obase[0], m->obase[1],
                   m->part[0], m->part[1], m->first[0], m->first[1], m->entries_t};
    for (size_t i = 0; i < sizeof bs / sizeof bs[0]; i++)
        if (bs[i]) clReleaseMemObject(bs[i]);
    free(m->ocap[0]);
    free(m->ocap[1]);
    free(m->ctr_init);
    free(m->ctr_full[0]);
    free(m->ctr_full[1]);
    free(m);
}

static hisp_status buffer(hisp_context ctx, hisp_cl_be *be, size_t bytes, const void *src,
                          cl_mem *out)
{
    void *b = NULL;
    HISPI_TRY(hisp_cl_buf_alloc(ctx, be, bytes, &b));
    *out = b;
    return src ? hisp_cl_buf_write(ctx, be, b, 0, src, bytes) : HISP_SUCCESS;
}

/* The ranges of the owner mapping on CPUs: 8 per compute unit (PoCL hands
 * work-groups to its threads dynamically, so uneven ranges even out), at
 * most HISPI_SCHED_MAX_PARTS; the test hook hispi_hs_hook.cl_parts
 * overrides (1..64). */
static int owner_parts(const hisp_cl_be *be)
{
    int p = hispi_hs_hook.cl_parts > 0 ? hispi_hs_hook.cl_parts
                                       : 8 * (int)(be->compute_units ? be->compute_units : 1);
    return p < 1 ? 1 : p > HISPI_SCHED_MAX_PARTS ? HISPI_SCHED_MAX_PARTS : p;
}

static hisp_status owner_upload(hisp_context ctx, hisp_cl_be *be, hisp_cl_hs *m,
                                const hispi_hs_view *A, int rq)
{
    hispi_sched_owners o;
    int P = owner_parts(be);
    HISPI_TRY(hispi_sched_spmv_owners(ctx, A, P, &o));
    m->P = P;
    size_t nqp = (size_t)m->nq * (size_t)P;
    uint64_t *ob = NULL;
    hisp_status s = hispi_alloc(ctx, nqp, sizeof *ob, (void **)&ob);
    if (!s) s = hispi_calloc(ctx, 12 * (size_t)P, sizeof *m->ctr_init, (void **)&m->ctr_init);
    for (int k = 0; k < 2 && !s; k++) {
        m->nblocks[k] = o.nblocks[k];
        for (int q = 0; q < m->nq && !s; q++) {
            uint64_t at = m->base[q], sum = 0;
            for (int p = 0; p < P; p++) {
                ob[(size_t)q * (size_t)P + (size_t)p] = at;
                at += o.cap[k][(size_t)q * (size_t)P + (size_t)p];
                sum += o.cap[k][(size_t)q * (size_t)P + (size_t)p];
            }
            if (sum != m->cap[q])
                s = hispi_fail(ctx, HISP_ERR_BACKEND,
                               "opencl: owner ranges count %llu nodes in queue %d, the "
                               "scheduler %llu",
                               (unsigned long long)sum, q, (unsigned long long)m->cap[q]);
        }
        if (!s) s = buffer(ctx, be, nqp * sizeof *ob, ob, &m->obase[k]);
        if (!s)
            s = buffer(ctx, be, (size_t)(o.nblocks[k] ? o.nblocks[k] : 1), o.part[k], &m->part[k]);
        if (!s) s = buffer(ctx, be, ((size_t)P + 1) * sizeof *o.first[k], o.first[k], &m->first[k]);
        if (!s) {
            m->ocap[k] = o.cap[k]; /* kept for the overflow check */
            o.cap[k] = NULL;
        }
    }
    if (!s) {
        m->ctr_init[(size_t)rq * (size_t)P] = 1; /* the root, at p = 0 */
        s = buffer(ctx, be, 12 * (size_t)P * sizeof(cl_uint), NULL, &m->ctr);
    }
    free(ob);
    hispi_sched_owners_free(&o);
    return s;
}

hisp_status hisp_cl_hs_upload(hisp_context ctx, void *vbe, const hispi_hs_view *A, void **dev)
{
    hisp_cl_be *be = vbe;
    *dev = NULL;
    if (A->type != HISP_F32 && A->type != HISP_F64)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "opencl: HiSparse SpMV on %s entries",
                          hisp_type_name(A->type));
    if (A->type == HISP_F64 && (!be->fp64 || !be->int64_atomics))
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                          "opencl: f64 HiSparse SpMV needs cl_khr_fp64 and "
                          "cl_khr_int64_base_atomics, which device \"%s\" lacks",
                          be->name);
    hisp_cl_hs *m = NULL;
    HISPI_TRY(hispi_calloc(ctx, 1, sizeof *m, (void **)&m));
    m->type = A->type;
    m->nq = A->nqueues;
    m->nv_asm = be->nv_asm >= 2 ? 2 : 0;
    uint64_t total = 0;
    for (int q = 0; q < m->nq; q++) {
        if (A->cap[q] > UINT32_MAX) {
            free(m);
            return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                              "opencl: %llu nodes in one scheduler queue (at most 2^32-1)",
                              (unsigned long long)A->cap[q]);
        }
        m->cap[q] = A->cap[q];
        m->base[q] = total;
        total += A->cap[q];
    }
    m->pool = (cl_mem)A->pool_dev; /* the family's, kept by core */
    hisp_status s = HISP_SUCCESS;
    if (total > SIZE_MAX / sizeof(hispi_sched_entry))
        s = hispi_fail(ctx, HISP_ERR_OUT_OF_DEVICE_MEMORY, "opencl: scheduler queues too large");
    if (!s) s = buffer(ctx, be, (size_t)total * sizeof(hispi_sched_entry), NULL, &m->entries);
    if (!s) s = buffer(ctx, be, (size_t)m->nq * sizeof(cl_uint), NULL, &m->tails);
    if (!s) s = buffer(ctx, be, (size_t)m->nq * sizeof(cl_ulong), m->base, &m->bases);
    if (!s && A->root) {
        /* the root's entry, first in its queue for every SpMV */
        int t = HISPI_REF_TYPE(A->root);
        uint32_t n = hispi_node_is_dense(t) ? 0 : A->root_n;
        int rq = hispi_sched_spmv_queue(t, n);
        hispi_sched_entry root = {A->root, 0, 0, 0, 0};
        m->root = root;
        m->root_at = m->base[rq];
        s = hispi_ctl_write(ctx, be, m->entries, m->base[rq] * sizeof root, &root, sizeof root);
        m->tails_init[rq] = 1;
        /* owners walk the tree on the host: not for one only the device holds */
        if (!s && be->is_cpu && m->nq == HISPI_SQ_SPMV && A->pool)
            s = owner_upload(ctx, be, m, A, rq);
    }
    if (s) {
        hisp_cl_hs_free(be, m);
        return s;
    }
    *dev = m;
    return HISP_SUCCESS;
}

/* A kernel of the program; on NVIDIA's platform built with NV_ASM 2 (the
 * prelude's red.global.add atomics; untested on a GPU so far), stepping
 * down to the compare-exchange loops if that build fails. */
static hisp_status kernel(hisp_context ctx, hisp_cl_be *be, hisp_cl_hs *m, int which,
                          cl_kernel *out)
{
    while (!m->k[which]) {
        char opts[200];
        snprintf(opts, sizeof opts,
                 "-cl-std=CL1.2 -D VALUE_T=%s -D IS_DOUBLE=%d -D ATOM64=%d -D NV_ASM=%d -D "
                 "MAX_PARTS=%d",
                 m->type == HISP_F64 ? "double" : "float", m->type == HISP_F64, be->int64_atomics,
                 m->nv_asm, HISPI_SCHED_MAX_PARTS);
        hisp_status s = hisp_cl_kernel(ctx, be, hispi_kern_src_hisparse_spmv, opts,
                                       kernel_names[which], &m->k[which]);
        if (s == HISP_ERR_KERNEL_BUILD && m->nv_asm) {
            hispi_debug("opencl: hisparse_spmv.cl with NV_ASM=%d failed to build; plain atomics",
                        m->nv_asm);
            hispi_clear_error(ctx);
            for (int i = 0; i < K_COUNT; i++)
                if (m->k[i]) clReleaseKernel(m->k[i]), m->k[i] = NULL;
            m->nv_asm = 0;
            continue;
        }
        HISPI_TRY(s);
    }
    *out = m->k[which];
    return HISP_SUCCESS;
}

static hisp_status set_args(hisp_context ctx, cl_kernel k, cl_uint n, const size_t *sz,
                            const void *const *v)
{
    for (cl_uint i = 0; i < n; i++) {
        cl_int e = clSetKernelArg(k, i, sz[i], v[i]);
        if (e != CL_SUCCESS) return hisp_cl_fail(ctx, e, "clSetKernelArg");
    }
    return HISP_SUCCESS;
}

static hisp_status enqueue(hisp_context ctx, hisp_cl_be *be, cl_kernel k, size_t global,
                           size_t local)
{
    cl_int e = clEnqueueNDRangeKernel(be->queue, k, 1, NULL, &global, &local, 0, NULL, NULL);
    return e == CL_SUCCESS ? HISP_SUCCESS : hisp_cl_fail(ctx, e, "clEnqueueNDRangeKernel");
}

/* The work-group size for a queue: the policy's group, or less where the
 * kernel allows less (threads per node then shrink with it: the node
 * functions stride over their work, so any tpn is correct). */
static hisp_status group_size(hisp_context ctx, hisp_cl_be *be, cl_kernel k, size_t want, size_t *g)
{
    size_t wg = 0;
    cl_int e =
        clGetKernelWorkGroupInfo(k, be->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL);
    if (e != CL_SUCCESS) return hisp_cl_fail(ctx, e, "clGetKernelWorkGroupInfo");
    size_t gs = want;
    while (gs > 1 && gs > wg)
        gs /= 2;
    *g = gs;
    return HISP_SUCCESS;
}

/* CPUs: up to 64 nodes (work-items) per work-group, fewer when that leaves
 * less than 4 work-groups per compute unit (a queue of a few heavy nodes
 * must not run on one core). */
static size_t cpu_group(const hisp_cl_be *be, uint64_t items)
{
    uint64_t fit = items / (4 * (uint64_t)(be->compute_units ? be->compute_units : 1));
    size_t want = 64;
    while (want > 1 && want > fit)
        want /= 2;
    return want;
}

/* y = beta*y (0 without reading y when beta is 0) as its own kernel. */
static hisp_status scale_y(hisp_context ctx, hisp_cl_be *be, hisp_cl_hs *m,
                           const hispi_sched_args *a, const void *bp, size_t rs, cl_mem ym)
{
    cl_kernel k = NULL;
    HISPI_TRY(kernel(ctx, be, m, K_SCALE, &k));
    cl_ulong n = (cl_ulong)a->ny;
    const size_t sz[] = {sizeof n, rs, sizeof ym};
    const void *v[] = {&n, bp, &ym};
    HISPI_TRY(set_args(ctx, k, 3, sz, v));
    size_t local = be->is_gpu ? 256 : 64;
    HISPI_TRY(group_size(ctx, be, k, local, &local));
    return enqueue(ctx, be, k, ((size_t)a->ny + local - 1) / local * local, local);
}

static void finish_counts(const hisp_cl_hs *m, hisp_sched_counts *counts)
{
    for (int q = 0; q < m->nq; q++) {
        counts->total_nodes += counts->nodes[q];
        counts->total_launches += counts->launches[q];
    }
}

/* The owner mapping's entry array of direction dir (A^T x's made at its
 * first use, with the root's entry). */
static hisp_status own_entries(hisp_context ctx, hisp_cl_be *be, hisp_cl_hs *m, int dir,
                               cl_mem *out)
{
    if (dir && !m->entries_t) {
        uint64_t total = 0;
        for (int q = 0; q < m->nq; q++)
            total += m->cap[q];
        cl_mem e = NULL;
        HISPI_TRY(buffer(ctx, be, (size_t)total * sizeof(hispi_sched_entry), NULL, &e));
        hisp_status s =
            hisp_cl_buf_write(ctx, be, e, m->root_at * sizeof m->root, &m->root, sizeof m->root);
        if (s) {
            clReleaseMemObject(e);
            return s;
        }
        m->entries_t = e;
    }
    *out = dir ? m->entries_t : m->entries;
    return HISP_SUCCESS;
}

/* The owner mapping's leaf kernel over the P ranges: `devpick` 0 with the
 * host's choice in `mask` (bit q: leaf queue 4 + q), or 1 enqueued right
 * behind an inner kernel for the next round, choosing by itself from the
 * counters that kernel leaves and done[] (entries served per queue). scale:
 * y = beta*y first, range by range. */
static hisp_status own_leaves(hisp_context ctx, hisp_cl_be *be, hisp_cl_hs *m,
                              const hispi_sched_args *a, cl_uint mask, cl_int devpick, cl_int scale,
                              const uint64_t *done, cl_mem xm, cl_mem ym, const void *ap,
                              const void *bp, size_t rs)
{
    cl_kernel kl = NULL;
    HISPI_TRY(kernel(ctx, be, m, K_OWN_LEAVES, &kl));
    const cl_uint P = (cl_uint)m->P;
    const int dir = a->transposed ? 1 : 0;
    const size_t ms = sizeof(cl_mem);
    cl_uint log2d = (cl_uint)a->log2d;
    cl_int tr = a->transposed;
    cl_ulong ny = (cl_ulong)a->ny;
    cl_mem ent = NULL;
    HISPI_TRY(own_entries(ctx, be, m, dir, &ent));
    cl_uint8 thr, dn;
    for (int q = 0; q < 8; q++) {
        thr.s[q] = a->policy->q[q].threshold;
        dn.s[q] = done ? (cl_uint)done[q] : 0;
    }
    const size_t sz[] = {ms, ms, ms, ms, 4,  4, ms, 4,          sizeof tr,
                         rs, ms, ms, 4,  rs, 8, 4,  sizeof thr, sizeof dn};
    const void *v[] = {
        &m->pool, &ent, &m->ctr, &m->obase[dir], &P, &mask, &m->first[dir], &log2d, &tr,
        ap,       &xm,  &ym,     &scale,         bp, &ny,   &devpick,       &thr,   &dn};
    HISPI_TRY(set_args(ctx, kl, 18, sz, v));
    return enqueue(ctx, be, kl, P, 1);
}

/* The owner mapping (see the top of this file). */
static hisp_status spmv_owner(hisp_context ctx, hisp_cl_be *be, hisp_cl_hs *m,
                              const hispi_sched_args *a, cl_mem xm, cl_mem ym, const void *ap,
                              const void *bp, size_t rs, hisp_sched_counts *counts)
{
    const hispi_sched_policy *p = a->policy;
    const cl_uint P = (cl_uint)m->P;
    const int dir = a->transposed ? 1 : 0;
    const size_t ms = sizeof(cl_mem);
    cl_mem ent = NULL;
    HISPI_TRY(own_entries(ctx, be, m, dir, &ent));
    /* the counters: non-blocking, from memory that lives with m */
    cl_int e = clEnqueueWriteBuffer(be->queue, m->ctr, CL_FALSE, 0,
                                    12 * (size_t)P * sizeof(cl_uint), m->ctr_init, 0, NULL, NULL);
    if (e != CL_SUCCESS) return hisp_cl_fail(ctx, e, "clEnqueueWriteBuffer");
    hispi_xfer(ctx, HISPI_CONTROL, 12 * (size_t)P * sizeof(cl_uint));
    cl_uint tails[8 * HISPI_SCHED_MAX_PARTS];
    uint64_t done[HISP_SCHED_MAX_QUEUES] = {0}; /* entries served per queue */
    cl_uint log2d = (cl_uint)a->log2d, depth = (cl_uint)a->depth;
    cl_int tr = a->transposed, scale = 1;
#define LEAVES(MASK, DEVPICK)                                                                      \
    do {                                                                                           \
        HISPI_TRY(own_leaves(ctx, be, m, a, (MASK), (DEVPICK), scale, done, xm, ym, ap, bp, rs));  \
        scale = 0;                                                                                 \
        unread = 1;                                                                                \
    } while (0)
    /* round 1 needs no read: the counters are the ones just written */
    memcpy(tails, m->ctr_init, 8 * (size_t)P * sizeof *tails);
    int known = 1;      /* tails[] hold the device's counters (only inner kernels change them) */
    int leaves_run = 0; /* this round's leaf queues were served by a devpick leaf kernel */
    int unread = 1;     /* commands enqueued since the last blocking read */
    for (;;) {
        /* blocking: the previous round's kernels have finished */
        if (!known) {
            HISPI_TRY(hisp_cl_ctl_read(ctx, be, m->ctr, 0, tails, 8 * (size_t)P * sizeof *tails));
            unread = 0;
        }
        uint64_t pending[HISP_SCHED_MAX_QUEUES];
        bool launch[HISP_SCHED_MAX_QUEUES];
        for (int q = 0; q < m->nq; q++) {
            uint64_t sum = 0;
            for (cl_uint i = 0; i < P; i++) {
                size_t at = (size_t)q * P + i;
                if (tails[at] > m->ocap[dir][at])
                    return hispi_fail(ctx, HISP_ERR_BACKEND,
                                      "opencl: scheduler queue %s, range %u overflowed (%u > %llu)",
                                      p->q[q].name, i, tails[at],
                                      (unsigned long long)m->ocap[dir][at]);
                sum += tails[at];
            }
            pending[q] = sum - done[q];
        }
        if (!hispi_sched_pick(p, pending, launch)) break;
        counts->rounds++;
        cl_uint mask = 0;
        for (int q = 4; q < 8; q++)
            if (launch[q]) mask |= 1u << (q - 4);
        /* leaves first: the kernel must see the tails read above */
        if (mask && !leaves_run) LEAVES(mask, 0);
        cl_ulong fn[8] = {0};
        uint64_t inner = 0;
        for (int q = 0; q < 4; q++)
            if (launch[q]) {
                fn[2 * q] = m->base[q] + done[q];
                fn[2 * q + 1] = pending[q];
                inner += pending[q];
            }
        for (int q = 0; q < m->nq; q++) {
            if (!launch[q]) continue;
            counts->nodes[q] += (int64_t)pending[q];
            counts->launches[q]++;
            done[q] += pending[q];
        }
        leaves_run = 0;
        known = !inner;
        if (inner) {
            cl_kernel k = NULL;
            HISPI_TRY(kernel(ctx, be, m, K_OWN_INNER, &k));
            const size_t sz[] = {ms, ms, ms, ms, 4, ms, 4, 4, sizeof tr, 8, 8, 8, 8, 8, 8, 8, 8};
            const void *v[] = {&m->pool, &ent,   &m->ctr, &m->obase[dir], &P,     &m->part[dir],
                               &log2d,   &depth, &tr,     &fn[0],         &fn[1], &fn[2],
                               &fn[3],   &fn[4], &fn[5],  &fn[6],         &fn[7]};
            HISPI_TRY(set_args(ctx, k, 17, sz, v));
            size_t g = 0;
            HISPI_TRY(group_size(ctx, be, k, cpu_group(be, inner), &g));
            HISPI_TRY(enqueue(ctx, be, k, (size_t)((inner + g - 1) / g) * g, g));
            /* the next round's leaves, chosen on the device (done[] is now
             * what the next round starts from) */
            LEAVES(0, 1);
            leaves_run = 1;
        }
    }
#undef LEAVES
    if (unread) { /* synchronous: the last kernels have finished */
        e = clFinish(be->queue);
        if (e != CL_SUCCESS) return hisp_cl_fail(ctx, e, "clFinish");
    }
    if (scale && a->ny > 0) /* no leaf at all (cannot happen with a root; kept for safety) */
        HISPI_TRY(scale_y(ctx, be, m, a, bp, rs, ym));
    finish_counts(m, counts);
    m->replay_own[dir] = true;         /* every sub-queue is full, in this direction's ranges */
    if (!dir) m->replay_atomic = true; /* and every queue of `entries` */
    return HISP_SUCCESS;
}

/* The replays: every leaf queue as the last scheduled SpMV left it, one
 * round, no inner levels. Owner: the counters set to full sub-queues and
 * empty heads, then one leaf kernel (which also scales y). */
static hisp_status replay_owner(hisp_context ctx, hisp_cl_be *be, hisp_cl_hs *m,
                                const hispi_sched_args *a, cl_mem xm, cl_mem ym, const void *ap,
                                const void *bp, size_t rs, hisp_sched_counts *counts)
{
    const int dir = a->transposed ? 1 : 0;
    const size_t P = (size_t)m->P;
    if (!m->ctr_full[dir]) {
        HISPI_TRY(hispi_calloc(ctx, 12 * P, sizeof(cl_uint), (void **)&m->ctr_full[dir]));
        for (size_t q = 4; q < 8; q++)
            for (size_t i = 0; i < P; i++)
                m->ctr_full[dir][q * P + i] = (cl_uint)m->ocap[dir][q * P + i];
    }
    /* non-blocking, from memory that lives with m */
    cl_int e = clEnqueueWriteBuffer(be->queue, m->ctr, CL_FALSE, 0, 12 * P * sizeof(cl_uint),
                                    m->ctr_full[dir], 0, NULL, NULL);
    if (e != CL_SUCCESS) return hisp_cl_fail(ctx, e, "clEnqueueWriteBuffer");
    hispi_xfer(ctx, HISPI_CONTROL, 12 * P * sizeof(cl_uint));
    HISPI_TRY(own_leaves(ctx, be, m, a, 0xfu, 0, 1, NULL, xm, ym, ap, bp, rs));
    e = clFinish(be->queue); /* synchronous, as the scheduled SpMV */
    if (e != CL_SUCCESS) return hisp_cl_fail(ctx, e, "clFinish");
    counts->rounds = 1;
    for (int q = 4; q < m->nq; q++) {
        counts->nodes[q] = (int64_t)m->cap[q];
        counts->launches[q] = m->cap[q] > 0;
    }
    finish_counts(m, counts);
    return HISP_SUCCESS;
}

static const int fn_kernel[4] = {K_INNER_COO, K_INNER_DENSE, K_LEAF_COO, K_LEAF_DENSE};

/* One node kernel of the atomic mapping over entries [first, first + count)
 * of queue q. */
static hisp_status atomic_launch(hisp_context ctx, hisp_cl_be *be, hisp_cl_hs *m,
                                 const hispi_sched_args *a, int q, cl_ulong first, cl_ulong count,
                                 cl_mem xm, cl_mem ym, const void *ap, size_t rs)
{
    const hispi_sched_policy *p = a->policy;
    size_t ms = sizeof(cl_mem);
    cl_uint log2d = (cl_uint)a->log2d, depth = (cl_uint)a->depth;
    cl_int tr = a->transposed;
    cl_kernel k = NULL;
    HISPI_TRY(kernel(ctx, be, m, fn_kernel[p->q[q].fn], &k));
    size_t g = 0;
    HISPI_TRY(group_size(ctx, be, k, (size_t)p->q[q].group, &g));
    cl_uint tpn = (cl_uint)p->q[q].tpn < g ? (cl_uint)p->q[q].tpn : (cl_uint)g;
    size_t per = g / tpn, groups = (size_t)((count + per - 1) / per);
    const size_t sz[] = {ms, ms, ms, ms, 8, 8, 4, 4, 4, sizeof tr, rs, ms, ms};
    const void *v[] = {&m->pool, &m->entries, &m->tails, &m->bases, &first, &count, &tpn,
                       &log2d,   &depth,      &tr,       ap,        &xm,    &ym};
    HISPI_TRY(set_args(ctx, k, 13, sz, v));
    return enqueue(ctx, be, k, groups * g, g);
}

/* The atomic mapping's replay: y = beta*y, then each leaf queue whole. */
static hisp_status replay_atomic(hisp_context ctx, hisp_cl_be *be, hisp_cl_hs *m,
                                 const hispi_sched_args *a, cl_mem xm, cl_mem ym, const void *ap,
                                 const void *bp, size_t rs, hisp_sched_counts *counts)
{
    if (a->ny > 0) HISPI_TRY(scale_y(ctx, be, m, a, bp, rs, ym));
    counts->rounds = 1;
    for (int q = 0; q < m->nq; q++) {
        if (a->policy->q[q].fn < HISPI_NF_LEAF_COO || !m->fill[q]) continue;
        HISPI_TRY(atomic_launch(ctx, be, m, a, q, m->base[q], m->fill[q], xm, ym, ap, rs));
        counts->nodes[q] = (int64_t)m->fill[q];
        counts->launches[q] = 1;
    }
    finish_counts(m, counts);
    return HISP_SUCCESS;
}

/* The atomic mapping: one kernel per picked queue. */
static hisp_status spmv_atomic(hisp_context ctx, hisp_cl_be *be, hisp_cl_hs *m,
                               const hispi_sched_args *a, cl_mem xm, cl_mem ym, const void *ap,
                               size_t rs, hisp_sched_counts *counts)
{
    const hispi_sched_policy *p = a->policy;
    cl_uint tails[HISP_SCHED_MAX_QUEUES];
    uint64_t head[HISP_SCHED_MAX_QUEUES] = {0};
    memcpy(tails, m->tails_init, sizeof tails);
    /* non-blocking, from memory that lives with m */
    cl_int e = clEnqueueWriteBuffer(be->queue, m->tails, CL_FALSE, 0, (size_t)m->nq * sizeof *tails,
                                    m->tails_init, 0, NULL, NULL);
    if (e != CL_SUCCESS) return hisp_cl_fail(ctx, e, "clEnqueueWriteBuffer");
    hispi_xfer(ctx, HISPI_CONTROL, (size_t)m->nq * sizeof *tails);
    for (int first_round = 1;; first_round = 0) {
        /* blocking: the previous round's kernels have finished (round 1
         * knows its counters: the ones just written) */
        if (!first_round)
            HISPI_TRY(hisp_cl_ctl_read(ctx, be, m->tails, 0, tails, (size_t)m->nq * sizeof *tails));
        uint64_t pending[HISP_SCHED_MAX_QUEUES];
        bool launch[HISP_SCHED_MAX_QUEUES];
        for (int q = 0; q < m->nq; q++) {
            if (tails[q] > m->cap[q])
                return hispi_fail(ctx, HISP_ERR_BACKEND,
                                  "opencl: scheduler queue %s overflowed (%u > %llu)", p->q[q].name,
                                  tails[q], (unsigned long long)m->cap[q]);
            pending[q] = tails[q] - head[q];
        }
        if (!hispi_sched_pick(p, pending, launch)) break;
        counts->rounds++;
        for (int q = 0; q < m->nq; q++) {
            if (!launch[q]) continue;
            HISPI_TRY(
                atomic_launch(ctx, be, m, a, q, m->base[q] + head[q], pending[q], xm, ym, ap, rs));
            head[q] = tails[q];
            counts->nodes[q] += (int64_t)pending[q];
            counts->launches[q]++;
        }
    }
    finish_counts(m, counts);
    for (int q = 0; q < m->nq; q++)
        m->fill[q] = tails[q];
    m->replay_atomic = true;  /* every queue is full, in the scheduler's order */
    m->replay_own[0] = false; /* its sub-queue arrangement is gone */
    return HISP_SUCCESS;
}

hisp_status hisp_cl_hs_spmv(hisp_context ctx, void *vbe, void *dev, const hispi_sched_args *a,
                            const void *x, void *y, hisp_sched_counts *counts)
{
    hisp_cl_be *be = vbe;
    hisp_cl_hs *m = dev;
    const hispi_sched_policy *p = a->policy;
    cl_mem xm = (cl_mem)x, ym = (cl_mem)y;
    int dbl = m->type == HISP_F64;
    float af = (float)a->alpha, bf = (float)a->beta;
    const void *ap = dbl ? (const void *)&a->alpha : (const void *)&af;
    const void *bp = dbl ? (const void *)&a->beta : (const void *)&bf;
    size_t rs = dbl ? sizeof(double) : sizeof(float);
    memset(counts, 0, sizeof *counts);
    counts->queues = p->nqueues;
    if (p->nqueues != m->nq)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "opencl: policy has %d queues, upload %d",
                          p->nqueues, m->nq);
    /* the owner mapping needs the upload of a CPU device; the test hook
     * runs the GPUs' atomic one there */
    const int owner = m->P > 0 && !hispi_hs_hook.cl_atomic, dir = a->transposed ? 1 : 0;
    if (!a->root) return a->ny > 0 ? scale_y(ctx, be, m, a, bp, rs, ym) : HISP_SUCCESS;
    if (owner && m->replay_own[dir]) return replay_owner(ctx, be, m, a, xm, ym, ap, bp, rs, counts);
    if (!owner && m->replay_atomic) return replay_atomic(ctx, be, m, a, xm, ym, ap, bp, rs, counts);
    /* a scheduled run rewrites the queues of its entry array: no replay
     * from it until the run completes */
    if (owner) {
        m->replay_own[dir] = false;
        if (!dir) m->replay_atomic = false;
        return spmv_owner(ctx, be, m, a, xm, ym, ap, bp, rs, counts);
    }
    m->replay_atomic = m->replay_own[0] = false;
    if (a->ny > 0) HISPI_TRY(scale_y(ctx, be, m, a, bp, rs, ym));
    return spmv_atomic(ctx, be, m, a, xm, ym, ap, rs, counts);
}
