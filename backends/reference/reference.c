/* The reference backend: host memory and the core's plain C operations.
 * It is the oracle of the tests and the fallback when no device answers. */
#include "backend/backend.h"
/* the reference backend runs the core's own host loops (host CSR, the
 * reference SpMV, the scheduler's host simulation): core internals */
#include "hisparse/hisparse_sched.h"
#include "hispi.h"

#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <unistd.h>

static hisp_status ref_device_count(hisp_context ctx, int *count)
{
    (void)ctx;
    *count = 1;
    return HISP_SUCCESS;
}

static hisp_status ref_device_info(hisp_context ctx, int index, hisp_device_info *info)
{
    (void)ctx;
    memset(info, 0, sizeof *info);
    info->backend = HISP_BACKEND_REFERENCE;
    info->index = index;
    snprintf(info->name, sizeof info->name, "host CPU (serial reference)");
    snprintf(info->platform, sizeof info->platform, "hisp reference");
    snprintf(info->vendor, sizeof info->vendor, "hisp");
    snprintf(info->driver, sizeof info->driver, "%s", hisp_version_string());
    info->is_cpu = 1;
    info->compute_units = 1;
    info->fp64 = 1;
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    info->global_mem = pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize : 0;
    return HISP_SUCCESS;
}

static int ref_instance; /* the reference backend has no state; a non-NULL token */

static hisp_status ref_init(hisp_context ctx, int index, void **be)
{
    (void)ctx;
    (void)index;
    *be = &ref_instance;
    return HISP_SUCCESS;
}

static void ref_fini(void *be)
{
    (void)be;
}

static hisp_status ref_sync(hisp_context ctx, void *be)
{
    (void)ctx;
    (void)be;
    return HISP_SUCCESS;
}

static hisp_status ref_alloc(hisp_context ctx, void *be, size_t bytes, void **buf)
{
    (void)be;
    return hispi_alloc(ctx, bytes, 1, buf);
}

static void ref_free(void *be, void *buf)
{
    (void)be;
    free(buf);
}

static hisp_status ref_write(hisp_context ctx, void *be, void *buf, size_t off, const void *src,
                             size_t bytes)
{
    (void)ctx;
    (void)be;
    if (bytes) memcpy((char *)buf + off, src, bytes);
    return HISP_SUCCESS;
}

static hisp_status ref_read(hisp_context ctx, void *be, const void *buf, size_t off, void *dst,
                            size_t bytes)
{
    (void)ctx;
    (void)be;
    if (bytes) memcpy(dst, (const char *)buf + off, bytes);
    return HISP_SUCCESS;
}

static hisp_status ref_copy(hisp_context ctx, void *be, void *dst, const void *src, size_t bytes)
{
    (void)ctx;
    (void)be;
    if (bytes) memcpy(dst, src, bytes);
    return HISP_SUCCESS;
}

/* MSREP device-side merge on host memory: lets the tests walk the plan's
 * device-merge path (the orchestration the CUDA backend runs). */
static hisp_status ref_peer_copy(hisp_context ctx, void *q, void *dst_be, void *dst, size_t dst_off,
                                 void *src_be, const void *src, size_t src_off, size_t bytes)
{
    (void)ctx;
    (void)q;
    (void)dst_be;
    (void)src_be;
    if (bytes) memcpy((char *)dst + dst_off, (const char *)src + src_off, bytes);
    return HISP_SUCCESS;
}

#define REF_AXPBY(T)                                                                               \
    static void ref_axpby_##T(int64_t n, T a, const T *x, T b, T *y)                               \
    {                                                                                              \
        for (int64_t i = 0; i < n; i++)                                                            \
            y[i] = (x ? a * x[i] : (T)0) + (b == 0 ? (T)0 : b * y[i]);                             \
    }
REF_AXPBY(float)
REF_AXPBY(double)

static hisp_status ref_axpby(hisp_context ctx, void *be, hisp_type t, int64_t n, double a,
                             const void *x, int64_t xoff, double b, void *y, int64_t yoff)
{
    (void)be;
    if (t == HISP_F32)
        ref_axpby_float(n, (float)a, x ? (const float *)x + xoff : NULL, (float)b,
                        (float *)y + yoff);
    else if (t == HISP_F64)
        ref_axpby_double(n, a, x ? (const double *)x + xoff : NULL, b, (double *)y + yoff);
    else
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "axpby on %s entries", hisp_type_name(t));
    return HISP_SUCCESS;
}

static hisp_status ref_mark_create(hisp_context ctx, void *be, void **mark)
{
    (void)be;
    return hispi_calloc(ctx, 1, sizeof(double), mark);
}

static hisp_status ref_mark_record(hisp_context ctx, void *be, void *mark)
{
    (void)ctx;
    (void)be;
    *(double *)mark = hispi_now_ms();
    return HISP_SUCCESS;
}

static hisp_status ref_mark_elapsed(hisp_context ctx, void *be, void *start, void *stop, double *ms)
{
    (void)ctx;
    (void)be;
    *ms = *(double *)stop - *(double *)start;
    return HISP_SUCCESS;
}

static void ref_mark_destroy(void *be, void *mark)
{
    (void)be;
    free(mark);
}

/* The "device" copy is a private CSR copy, independent of the handle's host
 * storage. */
static hisp_status ref_csr_upload_opts(hisp_context ctx, void *be, const hispi_csr_view *A,
                                       const hispi_csr_opts *o, void **dev)
{
    (void)be;
    hispi_sparse *s = NULL;
    HISPI_TRY(hispi_calloc(ctx, 1, sizeof *s, (void **)&s));
    hisp_status st =
        hispi_sparse_alloc(ctx, s, HISP_FORMAT_CSR, A->type, A->nrows, A->ncols, A->nnz);
    if (st) {
        free(s);
        return st;
    }
    memcpy(s->rowptr, A->rowptr, ((size_t)A->nrows + 1) * sizeof(int64_t));
    if (o && o->gptr) /* global pointers: local ones made in the "device" copy (p*-opt) */
        for (int64_t i = 0; i <= A->nrows; i++) {
            int64_t v = s->rowptr[i], lo = o->ptr_base, hi = o->ptr_base + A->nnz;
            s->rowptr[i] = (v < lo ? lo : v > hi ? hi : v) - lo;
        }
    if (A->nnz) {
        memcpy(s->colind, A->colind, (size_t)A->nnz * sizeof(int32_t));
        memcpy(s->val, A->val, (size_t)A->nnz * hisp_type_size(A->type));
    }
    *dev = s;
    return HISP_SUCCESS;
}

static hisp_status ref_csr_upload(hisp_context ctx, void *be, const hispi_csr_view *A, void **dev)
{
    return ref_csr_upload_opts(ctx, be, A, NULL, dev);
}

static void ref_csr_free(void *be, void *dev)
{
    (void)be;
    hispi_sparse_free(dev);
    free(dev);
}

static hisp_status ref_csr_spmv(hisp_context ctx, void *be, void *dev, hisp_op op, double alpha,
                                const void *x, double beta, void *y)
{
    (void)be;
    return hispi_ref_csr_spmv(ctx, dev, op, alpha, x, beta, y);
}

/* y = A x, then r = sum_i x[xoff + i]*y[i] in double in row order, rounded
 * once (backend.h; so the fused paths of the solvers run in the tests). */
static hisp_status ref_csr_spmv_dot(hisp_context ctx, void *be, void *dev, const void *x,
                                    int64_t xoff, void *y, void *res, int64_t res_index,
                                    void *res_host)
{
    (void)be;
    const hispi_sparse *A = dev;
    if ((A->type != HISP_F32 && A->type != HISP_F64) || xoff < 0 || xoff + A->nrows > A->ncols)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                          "reference: SpMV with a dot needs f32/f64 and rows within x");
    double s;
    HISPI_TRY(hispi_ref_csr_spmv_dot(ctx, A, x, xoff, y, &s));
    hispi_store_real(A->type, res_host ? res_host : res, res_host ? 0 : res_index, s);
    return HISP_SUCCESS;
}

static hisp_status ref_csr_spmm(hisp_context ctx, void *be, void *dev, hisp_op op, double alpha,
                                const void *x, int xrow, double beta, void *y, int yrow, int64_t k)
{
    (void)be;
    return hispi_ref_csr_spmm(ctx, dev, op, alpha, x, xrow, beta, y, yrow, k);
}

/* HiSparse: the "device" state is the family's pool copy that core keeps
 * in this backend's (host) buffers plus the queue capacities; SpMV is the
 * scheduler's host simulation. */
typedef struct {
    const unsigned char *pool; /* core's (hispi_hs_view.pool_dev) */
    uint64_t cap[HISP_SCHED_MAX_QUEUES];
    hispi_sched_entry *queues; /* the simulation's queues, made with the state: an SpMV
                                  allocates nothing (a solve's later products cannot fail so) */
    size_t nentries;
} ref_hs;

static hisp_status ref_hs_upload(hisp_context ctx, void *be, const hispi_hs_view *A, void **dev)
{
    (void)be;
    ref_hs *m = NULL;
    HISPI_TRY(hispi_calloc(ctx, 1, sizeof *m, (void **)&m));
    m->pool = A->pool_dev;
    memcpy(m->cap, A->cap, sizeof m->cap);
    m->nentries = hispi_sched_host_entries(m->cap, A->nqueues);
    hisp_status s =
        hispi_alloc(ctx, m->nentries ? m->nentries : 1, sizeof *m->queues, (void **)&m->queues);
    if (s) {
        free(m);
        return s;
    }
    *dev = m;
    return HISP_SUCCESS;
}

static void ref_hs_free(void *be, void *dev)
{
    (void)be;
    ref_hs *m = dev;
    if (!m) return;
    free(m->queues);
    free(m);
}

static hisp_status ref_hs_spmv(hisp_context ctx, void *be, void *dev, const hispi_sched_args *a,
                               const void *x, void *y, hisp_sched_counts *counts)
{
    (void)be;
    ref_hs *m = dev;
    bool fits = hispi_sched_host_entries(m->cap, a->policy->nqueues) <= m->nentries;
    return hispi_sched_spmv_host_in(ctx, m->pool, a, m->cap, fits ? m->queues : NULL, x, y, counts);
}

/* Wrapped memory is a host pointer; its size cannot be told. */
static hisp_status ref_buf_check(hisp_context ctx, void *be, void *mem, size_t bytes,
                                 const char *what)
{
    (void)ctx;
    (void)be;
    (void)mem;
    (void)bytes;
    (void)what;
    return HISP_SUCCESS;
}

const hisp_backend_ops hisp_reference_ops = {
    .name = "reference",
    .kind = HISP_BACKEND_REFERENCE,
    .device_count = ref_device_count,
    .device_info = ref_device_info,
    .init = ref_init,
    .fini = ref_fini,
    .synchronize = ref_sync,
    .buf_alloc = ref_alloc,
    .buf_free = ref_free,
    .buf_write = ref_write,
    .buf_read = ref_read,
    .buf_copy = ref_copy,
    .mark_create = ref_mark_create,
    .mark_record = ref_mark_record,
    .mark_elapsed = ref_mark_elapsed,
    .mark_destroy = ref_mark_destroy,
    .csr_upload = ref_csr_upload,
    .csr_upload_opts = ref_csr_upload_opts,
    .csr_caps = HISPI_CSR_GPTR,
    .csr_free = ref_csr_free,
    .csr_spmv = ref_csr_spmv,
    .csr_spmv_dot = ref_csr_spmv_dot,
    .csr_spmm = ref_csr_spmm,
    .hisparse_upload = ref_hs_upload,
    .hisparse_free = ref_hs_free,
    .hisparse_spmv = ref_hs_spmv,
    .buf_peer_copy = ref_peer_copy,
    .buf_axpby = ref_axpby,
    .buf_check = ref_buf_check,
};
