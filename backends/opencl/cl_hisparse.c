/* OpenCL backend: HiSparse upload and SpMV with the host as the scheduler's
 * controller (core/hisparse_sched.h, kernels_cl/hisparse_spmv.cl).
 *
 * Device state of a matrix: the pool bytes as on the host; one entry array
 * holding every queue (queue q at slots [base[q], base[q] + cap[q]), cap[q]
 * = the nodes of that queue in the tree, since each node is queued once per
 * SpMV); the fill counters tail[q] (uint, bumped by atomic_inc in the
 * kernels). A queue is consumed from head[q] (host side) up; entries are
 * never reused within one SpMV, so there is no generation swap and a
 * kernel can append while earlier ranges are being read.
 *
 * A round: read the nq counters (one small blocking read, which also waits
 * for the previous round's kernels), pick the queues (hispi_sched_pick),
 * enqueue one node kernel per picked queue over [head, tail), head = tail.
 * PoCL gives no forward-progress guarantee between work-groups, so no
 * kernel ever waits on work of its own launch. */
#include "cl_backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char hispi_cl_src_hisparse_spmv[];

enum { K_INNER_COO, K_INNER_DENSE, K_LEAF_COO, K_LEAF_DENSE, K_SCALE, K_COUNT };
static const char *const kernel_names[K_COUNT] = {"hs_inner_coo", "hs_inner_dense", "hs_leaf_coo",
                                                  "hs_leaf_dense", "hs_scale_y"};

typedef struct {
    hisp_type type;
    int nq;
    uint64_t cap[HISP_SCHED_MAX_QUEUES], base[HISP_SCHED_MAX_QUEUES];
    cl_mem pool, entries, tails, bases;
    cl_kernel k[K_COUNT];
} hisp_cl_hs;

void hisp_cl_hs_free(void *be, void *dev)
{
    (void)be;
    hisp_cl_hs *m = dev;
    if (!m) return;
    for (int i = 0; i < K_COUNT; i++)
        if (m->k[i]) clReleaseKernel(m->k[i]);
    cl_mem bs[] = {m->pool, m->entries, m->tails, m->bases};
    for (size_t i = 0; i < sizeof bs / sizeof bs[0]; i++)
        if (bs[i]) clReleaseMemObject(bs[i]);
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
    hisp_status s = buffer(ctx, be, (size_t)A->pool_bytes, A->pool, &m->pool);
    if (!s && total > SIZE_MAX / sizeof(hispi_sched_entry))
        s = hispi_fail(ctx, HISP_ERR_OUT_OF_DEVICE_MEMORY, "opencl: scheduler queues too large");
    if (!s) s = buffer(ctx, be, (size_t)total * sizeof(hispi_sched_entry), NULL, &m->entries);
    if (!s) s = buffer(ctx, be, (size_t)m->nq * sizeof(cl_uint), NULL, &m->tails);
    if (!s) s = buffer(ctx, be, (size_t)m->nq * sizeof(cl_ulong), m->base, &m->bases);
    if (s) {
        hisp_cl_hs_free(be, m);
        return s;
    }
    *dev = m;
    return HISP_SUCCESS;
}

static hisp_status kernel(hisp_context ctx, hisp_cl_be *be, hisp_cl_hs *m, int which,
                          cl_kernel *out)
{
    if (!m->k[which]) {
        char opts[160];
        snprintf(opts, sizeof opts, "-cl-std=CL1.2 -D VALUE_T=%s -D IS_DOUBLE=%d -D ATOM64=%d",
                 m->type == HISP_F64 ? "double" : "float", m->type == HISP_F64, be->int64_atomics);
        HISPI_TRY(hisp_cl_kernel(ctx, be, hispi_cl_src_hisparse_spmv, opts, kernel_names[which],
                                 &m->k[which]));
    }
    *out = m->k[which];
    return HISP_SUCCESS;
}

static hisp_status arg(hisp_context ctx, cl_kernel k, cl_uint i, size_t size, const void *v)
{
    cl_int e = clSetKernelArg(k, i, size, v);
    return e == CL_SUCCESS ? HISP_SUCCESS : hisp_cl_fail(ctx, e, "clSetKernelArg");
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

static const int fn_kernel[4] = {K_INNER_COO, K_INNER_DENSE, K_LEAF_COO, K_LEAF_DENSE};

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
    size_t rs = dbl ? sizeof(double) : sizeof(float), ms = sizeof(cl_mem);
    memset(counts, 0, sizeof *counts);
    counts->queues = p->nqueues;
    if (p->nqueues != m->nq)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "opencl: policy has %d queues, upload %d",
                          p->nqueues, m->nq);
    cl_kernel k = NULL;
    if (a->ny > 0) {
        HISPI_TRY(kernel(ctx, be, m, K_SCALE, &k));
        cl_ulong n = (cl_ulong)a->ny;
        HISPI_TRY(arg(ctx, k, 0, sizeof n, &n));
        HISPI_TRY(arg(ctx, k, 1, rs, bp));
        HISPI_TRY(arg(ctx, k, 2, ms, &ym));
        size_t local = be->is_gpu ? 256 : 64;
        HISPI_TRY(group_size(ctx, be, k, local, &local));
        HISPI_TRY(enqueue(ctx, be, k, ((size_t)a->ny + local - 1) / local * local, local));
    }
    if (!a->root) return HISP_SUCCESS;

    /* the root alone in its queue */
    cl_uint tails[HISP_SCHED_MAX_QUEUES] = {0};
    uint64_t head[HISP_SCHED_MAX_QUEUES] = {0};
    hispi_sched_entry root = {a->root, 0, 0, 0, 0};
    tails[a->root_queue] = 1;
    HISPI_TRY(hisp_cl_buf_write(ctx, be, m->entries, m->base[a->root_queue] * sizeof root, &root,
                                sizeof root));
    HISPI_TRY(hisp_cl_buf_write(ctx, be, m->tails, 0, tails, (size_t)m->nq * sizeof *tails));
    cl_uint log2d = (cl_uint)a->log2d, depth = (cl_uint)a->depth;
    cl_int tr = a->transposed;
    /* $HISP_CL_HS_THREADS=policy: the policy's threads per node on CPUs too
     * (the tests run both mappings) */
    const char *thr = getenv("HISP_CL_HS_THREADS");
    int cpu = be->is_cpu && !(thr && strcmp(thr, "policy") == 0);
    for (;;) {
        /* blocking: the previous round's kernels have finished */
        HISPI_TRY(hisp_cl_buf_read(ctx, be, m->tails, 0, tails, (size_t)m->nq * sizeof *tails));
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
            HISPI_TRY(kernel(ctx, be, m, fn_kernel[p->q[q].fn], &k));
            size_t g = 0;
            /* CPUs: up to 64 nodes per work-group, fewer when that leaves
             * less than 4 work-groups per compute unit (a queue of a few
             * heavy nodes must not run on one core) */
            size_t want = (size_t)p->q[q].group;
            if (cpu) {
                uint64_t fit =
                    pending[q] / (4 * (uint64_t)(be->compute_units ? be->compute_units : 1));
                for (want = 64; want > 1 && want > fit; want /= 2)
                    ;
            }
            HISPI_TRY(group_size(ctx, be, k, want, &g));
            /* CPU devices (PoCL): one work-item walks a whole node, a plain
             * loop that sums each row's run before one atomic (about 2x
             * faster on PoCL than the policy's threads per node, measured
             * on bcsstk33); the rounds, and so the counts, are the same */
            cl_uint tpn = cpu ? 1 : (cl_uint)p->q[q].tpn < g ? (cl_uint)p->q[q].tpn : (cl_uint)g;
            cl_ulong first = m->base[q] + head[q], count = pending[q];
            size_t per = g / tpn, groups = (size_t)((count + per - 1) / per);
            const size_t sz[] = {ms, ms, ms, ms, 8, 8, 4, 4, 4, sizeof tr, rs, ms, ms};
            const void *v[] = {&m->pool, &m->entries, &m->tails, &m->bases, &first, &count, &tpn,
                               &log2d,   &depth,      &tr,       ap,        &xm,    &ym};
            for (cl_uint i = 0; i < 13; i++)
                HISPI_TRY(arg(ctx, k, i, sz[i], v[i]));
            HISPI_TRY(enqueue(ctx, be, k, groups * g, g));
            head[q] = tails[q];
            counts->nodes[q] += (int64_t)count;
            counts->launches[q]++;
        }
    }
    for (int q = 0; q < m->nq; q++) {
        counts->total_nodes += counts->nodes[q];
        counts->total_launches += counts->launches[q];
    }
    return HISP_SUCCESS;
}
