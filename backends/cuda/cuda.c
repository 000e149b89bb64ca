/* The CUDA backend: the CUDA runtime API (cudart linked statically, never the
 * driver API), one non-blocking stream per instance, CSR SpMV kernels from
 * kernels_cuda/spmv.cu. A machine without a driver or a GPU sees zero devices
 * and a note saying why. */
#include "backend/backend.h"
#include "cuda_err.h"
#include "cuda_hisparse.h"
#include "cuda_kernels.h"
#include "cuda_kern.h"
#include "cuda_msrep.h"
#include "cuda_stage.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int device;
    cudaStream_t stream;    /* every kernel and copy: own, or the caller's */
    cudaStream_t own;       /* the instance's non-blocking stream */
    void *hs;               /* HiSparse state (cuda_hisparse.c) */
    hisp_cuda_stage *stage; /* pinned staging of large copies (cuda_stage.c) */
    cudaMemPool_t pool;     /* scratch (hisp_cuda_tmp_alloc), made on first use */
    /* kern_lane: streams and events of the instance's, made on first use;
     * the lane kernels go to (0: stream), the lanes used since the fork */
    cudaStream_t lane[HISPI_LANES];
    cudaEvent_t fork, joined[HISPI_LANES];
    int cur;
    unsigned used;
} hisp_cuda_be;

/* The device representation of a CSR matrix (see cuda_kernels.h). */
typedef struct hisp_cuda_mat {
    hisp_cuda_csr k;
    void *rowptr, *colind, *val, *blocks, *splits, *partial;
    void *dotpart; /* csr_spmv_dot: the dot's partials and a result slot, on first use */
    void *mmpart;  /* csr_spmm: k partials per split-row chunk (mmpart_k of them) */
    int64_t mmpart_k;
    struct hisp_cuda_mat *tr; /* transposed copy for op = T, made on first use */
    int tr_off;               /* op = T scatters with atomics instead */
    void *vendor;             /* MSREP: a cuSPARSE part (cuda_vendor.c) instead of all above */
    /* at most half the rows non-empty (an MPI rank's ghost block): those rows
     * as a matrix of their own over colind and val (PETSc's compressed rows),
     * their numbers, and scratch for their products; beta = 1 runs them only */
    struct hisp_cuda_mat *nz;
    void *nzrows, *nzt;
} hisp_cuda_mat;

static hisp_status hisp_cuda_use(hisp_context ctx, hisp_cuda_be *be)
{
    HISP_CUDA_TRY(ctx, cudaSetDevice(be->device));
    return HISP_SUCCESS;
}

/* Why the CUDA runtime finds no device, in words a user can act on. The
 * runtime answers cudaErrorInsufficientDriver both when no NVIDIA driver is
 * installed (libcuda.so.1 missing: cudaDriverGetVersion gives 0) and when
 * the driver is older than the runtime; say which. */
static void hisp_cuda_no_device(hisp_context ctx, cudaError_t e)
{
    int drv = 0, rt = 0;
    if (e == cudaErrorInsufficientDriver && cudaDriverGetVersion(&drv) == cudaSuccess && drv == 0) {
        hispi_note(ctx, "no CUDA device: no NVIDIA driver is installed (libcuda.so.1 not found)");
    } else if (e == cudaErrorInsufficientDriver && cudaRuntimeGetVersion(&rt) == cudaSuccess) {
        hispi_note(ctx,
                   "no CUDA device: the NVIDIA driver supports CUDA up to %d.%d, this build "
                   "needs CUDA %d.%d (update the driver)",
                   drv / 1000, (drv % 1000) / 10, rt / 1000, (rt % 1000) / 10);
    } else if (e == cudaErrorNoDevice) {
        hispi_note(ctx, "no CUDA device: the NVIDIA driver finds no GPU");
    } else {
        hispi_note(ctx, "no CUDA device: %s", cudaGetErrorString(e));
    }
    (void)cudaGetLastError();
}

static hisp_status hisp_cuda_device_count(hisp_context ctx, int *count)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        *count = 0;
        hisp_cuda_no_device(ctx, e);
        return HISP_SUCCESS;
    }
    *count = n;
    if (n == 0) hispi_note(ctx, "no CUDA device: the driver reports none");
    return HISP_SUCCESS;
}

static hisp_status hisp_cuda_device_info(hisp_context ctx, int index, hisp_device_info *info)
{
    struct cudaDeviceProp p;
    HISP_CUDA_TRY(ctx, cudaGetDeviceProperties(&p, index));
    int rt = 0, drv = 0;
    HISP_CUDA_TRY(ctx, cudaRuntimeGetVersion(&rt));
    HISP_CUDA_TRY(ctx, cudaDriverGetVersion(&drv));
    memset(info, 0, sizeof *info);
    info->backend = HISP_BACKEND_CUDA;
    info->index = index;
    snprintf(info->name, sizeof info->name, "%s", p.name);
    snprintf(info->platform, sizeof info->platform, "CUDA %d.%d (sm_%d%d)", rt / 1000,
             (rt % 1000) / 10, p.major, p.minor);
    snprintf(info->vendor, sizeof info->vendor, "NVIDIA");
    snprintf(info->driver, sizeof info->driver, "CUDA driver API %d.%d", drv / 1000,
             (drv % 1000) / 10);
    info->is_gpu = 1;
    info->compute_units = p.multiProcessorCount;
    info->fp64 = 1;
    info->global_mem = (uint64_t)p.totalGlobalMem;
    return HISP_SUCCESS;
}

static hisp_status hisp_cuda_init(hisp_context ctx, int index, void **out)
{
    hisp_cuda_be *be = NULL;
    HISPI_TRY(hispi_calloc(ctx, 1, sizeof *be, (void **)&be));
    be->device = index;
    cudaError_t e = cudaSetDevice(index);
    if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&be->own, cudaStreamNonBlocking);
    be->stream = be->own;
    if (e != cudaSuccess) {
        free(be);
        return hisp_cuda_fail(ctx, e, "opening the CUDA device");
    }
    *out = be;
    return HISP_SUCCESS;
}

static void hisp_cuda_fini(void *p)
{
    hisp_cuda_be *be = p;
    if (!be) return;
    if (cudaSetDevice(be->device) == cudaSuccess) {
        (void)cudaStreamSynchronize(be->stream);
        (void)cudaStreamDestroy(be->own); /* never the caller's */
        hisp_cuda_hs_fini(be->hs);
        hisp_cuda_stage_free(be->stage);
        if (be->pool) (void)cudaMemPoolDestroy(be->pool);
        for (int l = 0; l < HISPI_LANES; l++) {
            if (be->lane[l]) (void)cudaStreamDestroy(be->lane[l]);
            if (be->joined[l]) (void)cudaEventDestroy(be->joined[l]);
        }
        if (be->fork) (void)cudaEventDestroy(be->fork);
    }
    (void)cudaGetLastError();
    free(be);
}

static hisp_status hisp_cuda_sync(hisp_context ctx, void *p)
{
    hisp_cuda_be *be = p;
    HISP_CUDA_TRY(ctx, cudaStreamSynchronize(be->stream));
    return HISP_SUCCESS;
}

static hisp_status hisp_cuda_alloc(hisp_context ctx, void *p, size_t bytes, void **buf)
{
    HISPI_TRY(hisp_cuda_use(ctx, p));
    *buf = NULL;
    /* 0 bytes: a small real allocation, so the handle is valid and freeable
     * (and x[0] readable: the SpMV kernel loads it for padding lanes) */
    hisp_cuda_be *be = p;
    cudaError_t e = cudaMalloc(buf, bytes ? bytes : 16);
    if (e == cudaErrorMemoryAllocation && be->pool) { /* the scratch pool's idle memory back */
        (void)cudaGetLastError();
        (void)cudaStreamSynchronize(be->stream);
        (void)cudaMemPoolTrimTo(be->pool, 0);
        e = cudaMalloc(buf, bytes ? bytes : 16);
    }
    HISP_CUDA_TRY(ctx, e);
    return HISP_SUCCESS;
}

/* Scratch from the instance's pool, in its stream: an operation's buffers
 * cost no cudaMalloc / cudaFree (each cudaFree waits for the whole device;
 * with every buffer of a product pooled, luxembourg's A*A took 0.24 ms
 * instead of 0.62 on an H200). The pool keeps up to 256 MiB between
 * operations; more goes back to the driver at the next synchronization,
 * and all of it before a failure is reported. */
static hisp_status hisp_cuda_tmp_alloc(hisp_context ctx, void *p, size_t bytes, void **buf)
{
    hisp_cuda_be *be = p;
    HISPI_TRY(hisp_cuda_use(ctx, be));
    *buf = NULL;
    if (!be->pool) {
        struct cudaMemPoolProps pp;
        memset(&pp, 0, sizeof pp);
        pp.allocType = cudaMemAllocationTypePinned;
        pp.location.type = cudaMemLocationTypeDevice;
        pp.location.id = be->device;
        uint64_t keep = HISPI_TMP_KEEP;
        HISP_CUDA_TRY(ctx, cudaMemPoolCreate(&be->pool, &pp));
        HISP_CUDA_TRY(ctx,
                      cudaMemPoolSetAttribute(be->pool, cudaMemPoolAttrReleaseThreshold, &keep));
    }
    size_t n = bytes ? bytes : 16;
    cudaError_t e = cudaMallocFromPoolAsync(buf, n, be->pool, be->stream);
    if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        (void)cudaStreamSynchronize(be->stream);
        (void)cudaMemPoolTrimTo(be->pool, 0);
        e = cudaMallocFromPoolAsync(buf, n, be->pool, be->stream);
    }
    HISP_CUDA_TRY(ctx, e);
    return HISP_SUCCESS;
}

static void hisp_cuda_tmp_free(void *p, void *buf)
{
    hisp_cuda_be *be = p;
    if (!buf) return;
    (void)cudaSetDevice(be->device);
    (void)cudaFreeAsync(buf, be->stream);
    (void)cudaGetLastError();
}

static void hisp_cuda_free(void *p, void *buf)
{
    hisp_cuda_be *be = p;
    if (!buf) return;
    (void)cudaSetDevice(be->device);
    (void)cudaFree(buf); /* cudaFree waits for work using it */
    (void)cudaGetLastError();
}

static hisp_status hisp_cuda_sub(hisp_context ctx, void *p, void *buf, size_t off, size_t bytes,
                                 void **sub, bool *owned)
{
    (void)ctx, (void)p, (void)bytes;
    *sub = (char *)buf + off;
    *owned = false;
    return HISP_SUCCESS;
}

static hisp_status hisp_cuda_write(hisp_context ctx, void *p, void *buf, size_t off,
                                   const void *src, size_t bytes)
{
    hisp_cuda_be *be = p;
    if (!bytes) return HISP_SUCCESS;
    HISPI_TRY(hisp_cuda_use(ctx, be));
    cudaError_t e;
    if (hisp_cuda_stage_wanted(bytes) &&
        hisp_cuda_stage_copy(ctx, &be->stage, be->stream, (char *)buf + off, src, bytes, true,
                             &e)) {
        HISP_CUDA_TRY(ctx, e);
    } else {
        HISP_CUDA_TRY(ctx, cudaMemcpyAsync((char *)buf + off, src, bytes, cudaMemcpyHostToDevice,
                                           be->stream));
        HISP_CUDA_TRY(ctx, cudaStreamSynchronize(be->stream));
    }
    hispi_xfer(ctx, HISPI_H2D, bytes);
    return HISP_SUCCESS;
}

static hisp_status hisp_cuda_read(hisp_context ctx, void *p, const void *buf, size_t off, void *dst,
                                  size_t bytes)
{
    hisp_cuda_be *be = p;
    if (!bytes) return HISP_SUCCESS;
    HISPI_TRY(hisp_cuda_use(ctx, be));
    cudaError_t e;
    if (hisp_cuda_stage_wanted(bytes) &&
        hisp_cuda_stage_copy(ctx, &be->stage, be->stream, dst, (const char *)buf + off, bytes,
                             false, &e)) {
        HISP_CUDA_TRY(ctx, e);
    } else {
        HISP_CUDA_TRY(ctx, cudaMemcpyAsync(dst, (const char *)buf + off, bytes,
                                           cudaMemcpyDeviceToHost, be->stream));
        HISP_CUDA_TRY(ctx, cudaStreamSynchronize(be->stream));
    }
    hispi_xfer(ctx, HISPI_D2H, bytes);
    return HISP_SUCCESS;
}

/* Device to device, queued on the stream (ordered with kernels and marks). */
static hisp_status hisp_cuda_copy(hisp_context ctx, void *p, void *dst, const void *src,
                                  size_t bytes)
{
    hisp_cuda_be *be = p;
    if (!bytes) return HISP_SUCCESS;
    HISPI_TRY(hisp_cuda_use(ctx, be));
    HISP_CUDA_TRY(ctx, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, be->stream));
    return HISP_SUCCESS;
}

static hisp_status hisp_cuda_mark_create(hisp_context ctx, void *p, void **mark)
{
    HISPI_TRY(hisp_cuda_use(ctx, p));
    cudaEvent_t ev = NULL;
    HISP_CUDA_TRY(ctx, cudaEventCreate(&ev));
    *mark = (void *)ev;
    return HISP_SUCCESS;
}

static hisp_status hisp_cuda_mark_record(hisp_context ctx, void *p, void *mark)
{
    hisp_cuda_be *be = p;
    HISP_CUDA_TRY(ctx, cudaEventRecord((cudaEvent_t)mark, be->stream));
    return HISP_SUCCESS;
}

static hisp_status hisp_cuda_mark_elapsed(hisp_context ctx, void *p, void *start, void *stop,
                                          double *ms)
{
    (void)p;
    float f = 0;
    HISP_CUDA_TRY(ctx, cudaEventSynchronize((cudaEvent_t)stop));
    HISP_CUDA_TRY(ctx, cudaEventElapsedTime(&f, (cudaEvent_t)start, (cudaEvent_t)stop));
    *ms = f;
    return HISP_SUCCESS;
}

static void hisp_cuda_mark_destroy(void *p, void *mark)
{
    (void)p;
    if (mark) (void)cudaEventDestroy((cudaEvent_t)mark);
    (void)cudaGetLastError();
}

/* ---- CSR ------------------------------------------------------------------ */

static void hisp_cuda_csr_free(void *p, void *dev)
{
    hisp_cuda_mat *m = dev;
    if (!m) return;
    hisp_cuda_vendor_free(p, m->vendor);
    void *bufs[] = {m->rowptr,  m->colind,  m->val,    m->blocks, m->splits,
                    m->partial, m->dotpart, m->nzrows, m->nzt,    m->mmpart};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        hisp_cuda_free(p, bufs[i]);
    hisp_cuda_csr_free(p, m->tr);
    hisp_cuda_csr_free(p, m->nz);
    free(m);
}

static hisp_status hisp_cuda_upload_array(hisp_context ctx, hisp_cuda_be *be, const void *src,
                                          size_t n, size_t size, void **dst)
{
    if (size && n > SIZE_MAX / size)
        return hispi_fail(ctx, HISP_ERR_OUT_OF_DEVICE_MEMORY, "array of %zu entries too large", n);
    HISPI_TRY(hisp_cuda_alloc(ctx, be, n * size, dst));
    return hisp_cuda_write(ctx, be, *dst, 0, src, n * size);
}

/* For op = T: a window of `cap` columns around the diagonal of a stream
 * block's rows, used when it takes at least a quarter of the block's entries
 * (those are then summed in shared memory before one global atomic each).
 * Returns the window's first column, or -1. */
static int32_t hisp_cuda_window(const hispi_csr_view *A, int64_t r0, int64_t r1, int64_t cap)
{
    int64_t k0 = A->rowptr[r0], k1 = A->rowptr[r1];
    if (k1 - k0 < 64) return -1;
    int64_t lo = r0 - (cap - (r1 - r0)) / 2;
    if (lo > A->ncols - cap) lo = A->ncols - cap;
    if (lo < 0) lo = 0;
    int64_t in = 0;
    for (int64_t k = k0; k < k1; k++)
        in += (uint64_t)(A->colind[k] - lo) < (uint64_t)cap;
    return 4 * in >= k1 - k0 ? (int32_t)lo : -1;
}

/* The block plan (core/matrix/csr_plan.c) in the kernels' layout, with a column
 * window for each stream block when the matrix's columns are known (A->colind
 * may be NULL). */
static hisp_status hisp_cuda_plan(hisp_context ctx, const hispi_csr_view *A, int64_t cap,
                                  hisp_cuda_block **bp, int64_t *nb, hisp_cuda_split **sp,
                                  int64_t *ns, int64_t *nslots)
{
    _Static_assert(sizeof(hisp_cuda_block) == sizeof(hispi_csr_block), "block layout");
    _Static_assert(sizeof(hisp_cuda_split) == sizeof(hispi_csr_split), "split layout");
    _Static_assert(HISP_CUDA_STREAM == HISPI_CSR_STREAM, "stream marker");
    hispi_csr_plan p;
    HISPI_TRY(
        hispi_csr_plan_build(ctx, A->rowptr, A->nrows, cap, HISP_CUDA_ROWCAP, HISP_CUDA_SPLIT, &p));
    hisp_cuda_block *blocks = NULL;
    hisp_cuda_split *splits = NULL;
    hisp_status s = hispi_alloc(ctx, (size_t)p.nblocks, sizeof *blocks, (void **)&blocks);
    if (!s) s = hispi_alloc(ctx, (size_t)p.nsplits, sizeof *splits, (void **)&splits);
    if (s) {
        free(blocks);
        hispi_csr_plan_free(&p);
        return s;
    }
    for (int64_t b = 0; b < p.nblocks; b++) {
        const hispi_csr_block *q = &p.blocks[b];
        int32_t win = -1;
        if (q->slot == HISPI_CSR_STREAM && A->colind)
            win = hisp_cuda_window(A, q->row0, q->row1, cap);
        blocks[b] = (hisp_cuda_block){q->k0, q->k1, q->row0, q->row1, q->slot, win};
    }
    for (int64_t k = 0; k < p.nsplits; k++)
        splits[k] = (hisp_cuda_split){p.splits[k].row, p.splits[k].slot0, p.splits[k].n, 0};
    *bp = blocks;
    *nb = p.nblocks;
    *sp = splits;
    *ns = p.nsplits;
    *nslots = p.nslots;
    hispi_csr_plan_free(&p);
    return HISP_SUCCESS;
}

/* The work layout of m from host row pointers (A->colind may be NULL: no
 * column windows): plans the blocks, uploads the row pointers (32-bit when
 * m->k.wide is 0; none when m->k.rowptr is already the caller's), the blocks
 * and the split rows, and allocates the partial sums. m->k's type, width and
 * sizes are set by the caller. */
static hisp_status hisp_cuda_layout(hisp_context ctx, hisp_cuda_be *be, hisp_cuda_mat *m,
                                    const hispi_csr_view *A)
{
    const void *ext_rowptr = m->k.rowptr;
    hisp_cuda_block *blocks = NULL;
    hisp_cuda_split *splits = NULL;
    int32_t *rp32 = NULL;
    int64_t nslots = 0;
    size_t es = hisp_type_size(A->type);
    hisp_status s = hisp_cuda_plan(ctx, A, HISP_CUDA_CAP((int64_t)es), &blocks, &m->k.nblocks,
                                   &splits, &m->k.nsplits, &nslots);
    if (!s && !m->k.wide && !ext_rowptr) { /* 32-bit row pointers: half the bytes */
        s = hispi_alloc(ctx, (size_t)A->nrows + 1, sizeof *rp32, (void **)&rp32);
        for (int64_t i = 0; !s && i <= A->nrows; i++)
            rp32[i] = (int32_t)A->rowptr[i];
    }
    if (!s && !ext_rowptr)
        s = m->k.wide
                ? hisp_cuda_upload_array(ctx, be, A->rowptr, (size_t)A->nrows + 1, 8, &m->rowptr)
                : hisp_cuda_upload_array(ctx, be, rp32, (size_t)A->nrows + 1, 4, &m->rowptr);
    if (!s)
        s = hisp_cuda_upload_array(ctx, be, blocks, (size_t)m->k.nblocks, sizeof *blocks,
                                   &m->blocks);
    if (!s)
        s = hisp_cuda_upload_array(ctx, be, splits, (size_t)m->k.nsplits, sizeof *splits,
                                   &m->splits);
    if (!s) s = hisp_cuda_alloc(ctx, be, (size_t)nslots * es, &m->partial);
    m->k.nslots = nslots;
    m->k.nlong = 0;
    for (int64_t b = 0; !s && b < m->k.nblocks; b++)
        m->k.nlong += blocks[b].slot != HISP_CUDA_STREAM;
    free(blocks);
    free(splits);
    free(rp32);
    m->k.rowptr = ext_rowptr ? ext_rowptr : m->rowptr;
    m->k.blocks = m->blocks;
    m->k.splits = m->splits;
    m->k.partial = m->partial;
    return s;
}

/* The work layout of m (wrapping device arrays: m->k.rowptr) planned on the
 * device from its row pointers (kernels_cuda/csr_plan.cu): no copy of them
 * to the host. */
static hisp_status hisp_cuda_layout_dev(hisp_context ctx, hisp_cuda_be *be, hisp_cuda_mat *m,
                                        const hispi_csr_ext *ext, hisp_type t)
{
    int64_t n = m->k.nrows, cap = HISP_CUDA_CAP((int64_t)hisp_type_size(t));
    size_t bytes = 0;
    void *scratch = NULL;
    unsigned tot[3] = {0, 0, 0};
    HISP_CUDA_TRY(ctx, hisp_cuda_plan_scratch(n, &bytes));
    HISPI_TRY(hisp_cuda_tmp_alloc(ctx, be, bytes, &scratch));
    cudaError_t e =
        hisp_cuda_plan_count(ext->rowptr, ext->ptr64, ext->base, n, cap, HISP_CUDA_ROWCAP,
                             HISP_CUDA_SPLIT, scratch, bytes, tot, be->stream);
    hisp_status s = HISP_SUCCESS;
    if (!e && tot[0] > INT32_MAX)
        s = hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                       "SpMV: the matrix needs %u thread blocks, too many", tot[0]);
    m->k.nblocks = tot[0], m->k.nsplits = tot[2];
    size_t es = hisp_type_size(t);
    if (!e && !s)
        s = hisp_cuda_alloc(ctx, be, (size_t)tot[0] * sizeof(hisp_cuda_block), &m->blocks);
    if (!e && !s)
        s = hisp_cuda_alloc(ctx, be, (size_t)tot[2] * sizeof(hisp_cuda_split), &m->splits);
    if (!e && !s) s = hisp_cuda_alloc(ctx, be, (size_t)tot[1] * es, &m->partial);
    m->k.nslots = tot[1];
    m->k.nlong = -1; /* the plan stays on the device */
    if (!e && !s)
        e = hisp_cuda_plan_fill(ext->rowptr, ext->ptr64, ext->base, n, cap, HISP_CUDA_ROWCAP,
                                HISP_CUDA_SPLIT, scratch, m->blocks, tot[0], m->splits, be->stream);
    if (e)
        s = hispi_fail_native(ctx, HISP_ERR_BACKEND, (int64_t)e,
                              "cuda: the SpMV plan on the device: %s", cudaGetErrorString(e));
    hisp_cuda_tmp_free(be, scratch);
    m->k.blocks = m->blocks;
    m->k.splits = m->splits;
    m->k.partial = m->partial;
    return s;
}

/* When at most half of A's rows have entries: m->nz, the matrix of those
 * rows (its own row pointers and plan; m's colind and val, not owned), the
 * rows' numbers and the scratch of their products. */
static hisp_status hisp_cuda_nonempty(hisp_context ctx, hisp_cuda_be *be, hisp_cuda_mat *m,
                                      const hispi_csr_view *A)
{
    int64_t n = 0;
    for (int64_t i = 0; i < A->nrows; i++)
        n += A->rowptr[i + 1] > A->rowptr[i];
    if (n == 0 || 2 * n > A->nrows) return HISP_SUCCESS;
    int64_t *ptr = NULL;
    int32_t *rows = NULL;
    hisp_cuda_mat *c = NULL;
    hisp_status s = hispi_alloc(ctx, (size_t)n + 1, sizeof *ptr, (void **)&ptr);
    if (!s) s = hispi_alloc(ctx, (size_t)n, sizeof *rows, (void **)&rows);
    if (!s) s = hispi_calloc(ctx, 1, sizeof *c, (void **)&c);
    if (!s) {
        /* the rows between two listed ones are empty: A's pointers as they are */
        int64_t j = 0;
        for (int64_t i = 0; i < A->nrows; i++)
            if (A->rowptr[i + 1] > A->rowptr[i]) {
                rows[j] = (int32_t)i;
                ptr[j++] = A->rowptr[i];
            }
        ptr[n] = A->rowptr[A->nrows];
        hispi_csr_view v = *A;
        v.nrows = n;
        v.rowptr = ptr;
        c->k = m->k;
        c->k.nrows = n;
        c->k.rowptr = NULL;
        s = hisp_cuda_layout(ctx, be, c, &v);
        c->k.colind = m->colind;
        c->k.val = m->val;
    }
    if (!s) s = hisp_cuda_upload_array(ctx, be, rows, (size_t)n, sizeof *rows, &m->nzrows);
    if (!s) s = hisp_cuda_alloc(ctx, be, (size_t)n * hisp_type_size(A->type), &m->nzt);
    if (!s) {
        m->nz = c;
        c = NULL;
    }
    hisp_cuda_csr_free(be, c);
    free(ptr);
    free(rows);
    return s;
}

static hisp_status hisp_cuda_csr_upload_opts(hisp_context ctx, void *p, const hispi_csr_view *A,
                                             const hispi_csr_opts *o, void **dev)
{
    hisp_cuda_be *be = p;
    if (A->type != HISP_F32 && A->type != HISP_F64)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "CUDA SpMV on %s entries is not implemented",
                          hisp_type_name(A->type));
    if (A->nrows > INT32_MAX - 1 || A->ncols > INT32_MAX - 1)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "CUDA SpMV: dimensions over 2^31");
    HISPI_TRY(hisp_cuda_use(ctx, be));
    hisp_cuda_mat *m = NULL;
    HISPI_TRY(hispi_calloc(ctx, 1, sizeof *m, (void **)&m));
    if (o && o->vendor) { /* MSREP: cuSPARSE runs this part */
        hisp_status s = hisp_cuda_vendor_upload(ctx, be, A, o, &m->vendor);
        if (s) free(m);
        if (!s) *dev = m;
        return s;
    }
    size_t es = hisp_type_size(A->type);
    m->k.f64 = A->type == HISP_F64;
    /* test hooks: 64-bit row pointers on small matrices; op = T by the
     * atomic scatter (the fallback where the transposed copy does not fit) */
    m->k.wide = A->nnz > INT32_MAX || hispi_spmv_hook.wide_ptr;
    m->tr_off = hispi_spmv_hook.t_mode == 1;
    m->k.nrows = A->nrows;
    m->k.ncols = A->ncols;
    m->k.nnz = A->nnz;
    hisp_status s = hisp_cuda_layout(ctx, be, m, A);
    if (!s) s = hisp_cuda_upload_array(ctx, be, A->colind, (size_t)A->nnz, 4, &m->colind);
    if (!s) s = hisp_cuda_upload_array(ctx, be, A->val, (size_t)A->nnz, es, &m->val);
    m->k.colind = m->colind;
    m->k.val = m->val;
    if (!s && !o) s = hisp_cuda_nonempty(ctx, be, m, A);
    if (s) {
        hisp_cuda_csr_free(be, m);
        return s;
    }
    hispi_debug("cuda: CSR %lld x %lld, %lld nnz, %s row pointers, %lld blocks, %lld split rows",
                (long long)A->nrows, (long long)A->ncols, (long long)A->nnz,
                m->k.wide ? "64-bit" : "32-bit", (long long)m->k.nblocks, (long long)m->k.nsplits);
    *dev = m;
    return HISP_SUCCESS;
}

static hisp_status hisp_cuda_csr_upload(hisp_context ctx, void *p, const hispi_csr_view *A,
                                        void **dev)
{
    return hisp_cuda_csr_upload_opts(ctx, p, A, NULL, dev);
}

/* The caller's arrays, read in place by kernels instantiated for their index
 * widths and base; only the block plan is hisp's. op = T scatters with
 * atomics (the transposed copy's kernels read hisp's own layout). */
static hisp_status hisp_cuda_csr_wrap(hisp_context ctx, void *p, const hispi_csr_view *A,
                                      const hispi_csr_ext *ext, void **dev)
{
    hisp_cuda_be *be = p;
    if (A->nrows > INT32_MAX - 1 || A->ncols > INT32_MAX - 1)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "CUDA SpMV: dimensions over 2^31");
    HISPI_TRY(hisp_cuda_use(ctx, be));
    hisp_cuda_mat *m = NULL;
    HISPI_TRY(hispi_calloc(ctx, 1, sizeof *m, (void **)&m));
    m->k.f64 = A->type == HISP_F64;
    m->k.wide = ext->ptr64;
    m->k.idx64 = ext->idx64;
    m->k.base = ext->base;
    m->k.nrows = A->nrows;
    m->k.ncols = A->ncols;
    m->k.nnz = A->nnz;
    m->k.rowptr = ext->rowptr;
    m->k.colind = ext->colind;
    m->k.val = ext->val;
    m->tr_off = 1;
    hisp_status s = A->rowptr ? hisp_cuda_layout(ctx, be, m, A)
                              : hisp_cuda_layout_dev(ctx, be, m, ext, A->type);
    if (s) {
        hisp_cuda_csr_free(be, m);
        return s;
    }
    *dev = m;
    return HISP_SUCCESS;
}

static hisp_status hisp_cuda_csr_arrays(hisp_context ctx, void *p, void *dev, hispi_csr_ext *ext)
{
    (void)p;
    const hisp_cuda_mat *m = dev;
    if (m->vendor)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "cuda: a cuSPARSE part has no hisp arrays");
    *ext = (hispi_csr_ext){(void *)m->k.rowptr,
                           (void *)m->k.colind,
                           (void *)m->k.val,
                           m->k.wide,
                           m->k.idx64,
                           m->k.base,
                           false,
                           false,
                           false};
    return HISP_SUCCESS;
}

/* A pointer the caller wraps: device or managed memory of this device. */
static hisp_status hisp_cuda_buf_check(hisp_context ctx, void *p, void *mem, size_t bytes,
                                       const char *what)
{
    hisp_cuda_be *be = p;
    (void)bytes; /* the runtime API cannot tell an allocation's size */
    struct cudaPointerAttributes a;
    cudaError_t e = cudaPointerGetAttributes(&a, mem);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return hispi_fail_native(ctx, HISP_ERR_INVALID_ARGUMENT, (int64_t)e,
                                 "cuda: %s is not a CUDA pointer (%s)", what, cudaGetErrorName(e));
    }
    if (a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "cuda: %s is host memory, not device or managed memory", what);
    if (a.type == cudaMemoryTypeDevice && a.device != be->device)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "cuda: %s is memory of device %d, the context works on device %d", what,
                          a.device, be->device);
    return HISP_SUCCESS;
}

/* The caller's stream, in place: the buffers stay; the old stream's work is
 * waited for, so that nothing queued there can overtake it. */
static hisp_status hisp_cuda_stream_set(hisp_context ctx, void *p, void *stream, void **new_be,
                                        int *device)
{
    hisp_cuda_be *be = p;
    (void)device;
    *new_be = NULL;
    HISPI_TRY(hisp_cuda_use(ctx, be));
    HISP_CUDA_TRY(ctx, cudaStreamSynchronize(be->stream));
    be->stream = stream ? (cudaStream_t)stream : be->own;
    return HISP_SUCCESS;
}

static void *hisp_cuda_stream_get(void *p)
{
    return ((hisp_cuda_be *)p)->stream;
}

/* The transpose of m as a CSR matrix of its own (ncols x nrows), built on the
 * device: count the entries of each column, prefix sums on the host (which
 * also plans the blocks), scatter. Entries of a column land in the order the
 * atomics give: sums over a column may round differently from one build to
 * the next, never between calls on the same copy. */
static hisp_status hisp_cuda_transpose(hisp_context ctx, hisp_cuda_be *be, hisp_cuda_mat *m,
                                       hisp_cuda_mat **out)
{
    hisp_cuda_mat *t = NULL;
    int64_t *colptr = NULL;
    int32_t *cnt_h = NULL;
    void *cnt = NULL;
    size_t es = m->k.f64 ? 8 : 4;
    int64_t nc = m->k.ncols;
    HISPI_TRY(hispi_calloc(ctx, 1, sizeof *t, (void **)&t));
    t->k.f64 = m->k.f64;
    t->k.wide = m->k.wide;
    t->k.nrows = m->k.ncols;
    t->k.ncols = m->k.nrows;
    t->k.nnz = m->k.nnz;
    t->tr_off = 1;
    hisp_status s = hispi_alloc(ctx, (size_t)nc + 1, sizeof *colptr, (void **)&colptr);
    if (!s) s = hispi_alloc(ctx, (size_t)nc + 1, sizeof *cnt_h, (void **)&cnt_h);
    if (!s) s = hisp_cuda_alloc(ctx, be, ((size_t)nc + 1) * 4, &cnt);
    cudaError_t e = cudaSuccess;
    if (!s) {
        e = cudaMemsetAsync(cnt, 0, ((size_t)nc + 1) * 4, be->stream);
        if (e == cudaSuccess) e = hisp_cuda_launch_transpose(&m->k, &t->k, cnt, 0, be->stream);
        if (e != cudaSuccess) s = hisp_cuda_fail(ctx, e, "transpose: counting columns");
    }
    if (!s) s = hisp_cuda_read(ctx, be, cnt, 0, cnt_h, (size_t)nc * 4);
    if (!s) {
        colptr[0] = 0;
        for (int64_t j = 0; j < nc; j++)
            colptr[j + 1] = colptr[j] + cnt_h[j];
        hispi_csr_view v = {
            m->k.f64 ? HISP_F64 : HISP_F32, nc, m->k.nrows, m->k.nnz, colptr, NULL, NULL};
        s = hisp_cuda_layout(ctx, be, t, &v);
    }
    if (!s) s = hisp_cuda_alloc(ctx, be, (size_t)m->k.nnz * 4, &t->colind);
    if (!s) s = hisp_cuda_alloc(ctx, be, (size_t)m->k.nnz * es, &t->val);
    if (!s) {
        t->k.colind = t->colind;
        t->k.val = t->val;
        e = cudaMemsetAsync(cnt, 0, ((size_t)nc + 1) * 4, be->stream);
        if (e == cudaSuccess) e = hisp_cuda_launch_transpose(&m->k, &t->k, cnt, 1, be->stream);
        if (e == cudaSuccess) e = cudaStreamSynchronize(be->stream);
        if (e != cudaSuccess) s = hisp_cuda_fail(ctx, e, "transpose: scattering entries");
    }
    hisp_cuda_free(be, cnt);
    free(colptr);
    free(cnt_h);
    if (s) {
        hisp_cuda_csr_free(be, t);
        return s;
    }
    *out = t;
    return HISP_SUCCESS;
}

/* op = T runs op = N on a transposed copy made at the first call (as fast
 * as op = N, no atomics); when the device has no room for it, m->tr_off:
 * the entries are scattered with atomics instead (SpMV and SpMM alike). */
static hisp_status want_transpose(hisp_context ctx, hisp_cuda_be *be, hisp_cuda_mat *m)
{
    if (m->tr || m->tr_off) return HISP_SUCCESS;
    hisp_status s = hisp_cuda_transpose(ctx, be, m, &m->tr);
    if (s != HISP_ERR_OUT_OF_DEVICE_MEMORY) return s;
    hispi_clear_error(ctx);
    m->tr_off = 1;
    return HISP_SUCCESS;
}

static hisp_status hisp_cuda_csr_spmv(hisp_context ctx, void *p, void *dev, hisp_op op,
                                      double alpha, const void *x, double beta, void *y)
{
    hisp_cuda_be *be = p;
    hisp_cuda_mat *m = dev;
    HISPI_TRY(hisp_cuda_use(ctx, be));
    if (m->vendor) return hisp_cuda_vendor_spmv(ctx, be, m->vendor, op, alpha, x, beta, y);
    if (op == HISP_OP_T) HISPI_TRY(want_transpose(ctx, be, m));
    if (op == HISP_OP_N && beta == 1 && isfinite(alpha) && m->nz) { /* y's empty rows stay */
        cudaError_t e =
            hisp_cuda_launch_csr_rows(&m->nz->k, m->nzrows, alpha, x, m->nzt, y, be->stream);
        if (e != cudaSuccess) return hisp_cuda_fail(ctx, e, "CSR SpMV kernel launch");
        return HISP_SUCCESS;
    }
    cudaError_t e =
        op == HISP_OP_T && m->tr
            ? hisp_cuda_launch_csr_spmv(&m->tr->k, 0, alpha, x, beta, y, be->stream)
            : hisp_cuda_launch_csr_spmv(&m->k, op == HISP_OP_T, alpha, x, beta, y, be->stream);
    if (e != cudaSuccess) return hisp_cuda_fail(ctx, e, "CSR SpMV kernel launch");
    return HISP_SUCCESS;
}

/* Y = alpha op(A) X + beta Y over k columns (backend.h): op = T on the
 * transposed copy csr_spmv makes, or by atomics where it has none. */
static hisp_status hisp_cuda_csr_spmm(hisp_context ctx, void *p, void *dev, hisp_op op,
                                      double alpha, const void *x, int xrow, double beta, void *y,
                                      int yrow, int64_t k)
{
    hisp_cuda_be *be = p;
    hisp_cuda_mat *m = dev;
    HISPI_TRY(hisp_cuda_use(ctx, be));
    if (m->vendor)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "cuda: SpMM needs hisp's CSR kernels");
    if (op == HISP_OP_T) HISPI_TRY(want_transpose(ctx, be, m));
    bool copy = op == HISP_OP_T && m->tr;
    hisp_cuda_mat *r = copy ? m->tr : m; /* the matrix op N runs on */
    if (op == HISP_OP_N || copy) {       /* split rows' partials: nslots * k entries, kept */
        size_t es = r->k.f64 ? 8 : 4;
        if (r->k.nslots && r->mmpart_k < k) {
            if ((size_t)k > SIZE_MAX / es / (size_t)r->k.nslots)
                return hispi_fail(ctx, HISP_ERR_OUT_OF_DEVICE_MEMORY,
                                  "cuda: SpMM scratch of %lld x %lld entries", (long long)k,
                                  (long long)r->k.nslots);
            void *nb = NULL;
            HISPI_TRY(hisp_cuda_alloc(ctx, be, (size_t)r->k.nslots * (size_t)k * es, &nb));
            hisp_cuda_free(be, r->mmpart);
            r->mmpart = nb;
            r->mmpart_k = k;
        }
    }
    cudaError_t e = hisp_cuda_launch_csr_spmm(&r->k, op == HISP_OP_T && !copy, alpha, x, xrow, beta,
                                              y, yrow, k, r->mmpart, be->stream);
    if (e != cudaSuccess) return hisp_cuda_fail(ctx, e, "CSR SpMM kernel launch");
    return HISP_SUCCESS;
}

/* y = A x and its dot with x in one pass over A (backend.h). The scratch
 * holds a double per block and per split row (the kernels' partials), then
 * one entry that a host result is read from. */
static hisp_status hisp_cuda_csr_spmv_dot(hisp_context ctx, void *p, void *dev, const void *x,
                                          int64_t xoff, void *y, void *res, int64_t res_index,
                                          void *res_host)
{
    hisp_cuda_be *be = p;
    hisp_cuda_mat *m = dev;
    HISPI_TRY(hisp_cuda_use(ctx, be));
    if (m->vendor || xoff < 0 || xoff + m->k.nrows > m->k.ncols)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                          "cuda: SpMV with a dot needs hisp's kernel and rows [xoff, xoff + "
                          "nrows) within x");
    size_t es = m->k.f64 ? 8 : 4, nparts = (size_t)(m->k.nblocks + m->k.nsplits);
    if (!m->dotpart)
        HISPI_TRY(hisp_cuda_alloc(ctx, be, (nparts + 1) * sizeof(double), &m->dotpart));
    double *part = m->dotpart;
    void *out = res_host ? (void *)(part + nparts) : (void *)((char *)res + (size_t)res_index * es);
    cudaError_t e = hisp_cuda_launch_csr_spmv_dot(&m->k, x, xoff, y, part, out, be->stream);
    if (e != cudaSuccess) return hisp_cuda_fail(ctx, e, "CSR SpMV + dot kernel launch");
    if (res_host) return hisp_cuda_read(ctx, be, m->dotpart, nparts * sizeof(double), res_host, es);
    return HISP_SUCCESS;
}

/* ---- HiSparse (backends/cuda/cuda_hisparse.c reaches the stream here) ---- */

void hisp_cuda_be_stream(void *p, int *device, cudaStream_t *stream)
{
    hisp_cuda_be *be = p;
    *device = be->device;
    *stream = be->stream;
}

void hisp_cuda_be_kern_stream(void *p, int *device, cudaStream_t *stream)
{
    hisp_cuda_be *be = p;
    *device = be->device;
    *stream = be->cur ? be->lane[be->cur - 1] : be->stream;
}

/* kern_lane (backend.h): lane l's stream waits for an event of the
 * instance's stream recorded at the first lane after a join; the join
 * makes the stream wait for an event of each lane used. */
static hisp_status hisp_cuda_kern_lane(hisp_context ctx, void *p, int lane)
{
    hisp_cuda_be *be = p;
    if (lane < 0 || lane > HISPI_LANES)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "cuda: no lane %d", lane);
    HISP_CUDA_TRY(ctx, cudaSetDevice(be->device));
    if (!lane) {
        be->cur = 0;
        for (int l = 0; l < HISPI_LANES; l++)
            if (be->used & (1u << l)) {
                be->used &= ~(1u << l);
                HISP_CUDA_TRY(ctx, cudaEventRecord(be->joined[l], be->lane[l]));
                HISP_CUDA_TRY(ctx, cudaStreamWaitEvent(be->stream, be->joined[l], 0));
            }
        return HISP_SUCCESS;
    }
    int l = lane - 1;
    if (!be->fork) HISP_CUDA_TRY(ctx, cudaEventCreateWithFlags(&be->fork, cudaEventDisableTiming));
    if (!be->lane[l]) {
        HISP_CUDA_TRY(ctx, cudaEventCreateWithFlags(&be->joined[l], cudaEventDisableTiming));
        HISP_CUDA_TRY(ctx, cudaStreamCreateWithFlags(&be->lane[l], cudaStreamNonBlocking));
    }
    if (!be->used) HISP_CUDA_TRY(ctx, cudaEventRecord(be->fork, be->stream));
    if (!(be->used & (1u << l))) {
        HISP_CUDA_TRY(ctx, cudaStreamWaitEvent(be->lane[l], be->fork, 0));
        be->used |= 1u << l;
    }
    be->cur = lane;
    return HISP_SUCCESS;
}

void **hisp_cuda_be_hs(void *p)
{
    return &((hisp_cuda_be *)p)->hs;
}

/* MSREP NUMA placement: the GPU's PCI address. */
static hisp_status hisp_cuda_device_pci(hisp_context ctx, int index, char *busid, size_t size)
{
    HISP_CUDA_TRY(ctx, cudaDeviceGetPCIBusId(busid, (int)size, index));
    return HISP_SUCCESS;
}

const hisp_backend_ops hisp_cuda_ops = {
    .name = "cuda",
    .kind = HISP_BACKEND_CUDA,
    .device_count = hisp_cuda_device_count,
    .device_info = hisp_cuda_device_info,
    .init = hisp_cuda_init,
    .fini = hisp_cuda_fini,
    .synchronize = hisp_cuda_sync,
    .buf_alloc = hisp_cuda_alloc,
    .buf_free = hisp_cuda_free,
    .buf_sub = hisp_cuda_sub,
    .tmp_alloc = hisp_cuda_tmp_alloc,
    .tmp_free = hisp_cuda_tmp_free,
    .buf_write = hisp_cuda_write,
    .buf_read = hisp_cuda_read,
    .buf_copy = hisp_cuda_copy,
    .mark_create = hisp_cuda_mark_create,
    .mark_record = hisp_cuda_mark_record,
    .mark_elapsed = hisp_cuda_mark_elapsed,
    .mark_destroy = hisp_cuda_mark_destroy,
    .csr_upload = hisp_cuda_csr_upload,
    .csr_upload_opts = hisp_cuda_csr_upload_opts,
    .csr_caps = HISPI_CSR_VENDOR | HISPI_CSR_VENDOR_GPTR | HISPI_CSR_WRAP_DEVICE,
    .csr_free = hisp_cuda_csr_free,
    .csr_spmv = hisp_cuda_csr_spmv,
    .csr_spmv_dot = hisp_cuda_csr_spmv_dot,
    .csr_spmm = hisp_cuda_csr_spmm,
    .hisparse_upload = hisp_cuda_hs_upload,
    .hisparse_free = hisp_cuda_hs_free,
    .hisparse_spmv = hisp_cuda_hs_spmv,
    .hisparse_counts = hisp_cuda_hs_counts,
    .device_pci = hisp_cuda_device_pci,
    .kern_caps = hisp_cuda_kern_caps,
    .kern_get = hisp_cuda_kern_get,
    .kern_prebuild = hisp_cuda_kern_prebuild,
    .kern_any = hisp_cuda_kern_any,
    .kern_free = hisp_cuda_kern_free,
    .kern_lane = hisp_cuda_kern_lane,
    .kern_launch = hisp_cuda_kern_launch,
    .buf_zero = hisp_cuda_buf_zero,
    .buf_peer_copy = hisp_cuda_peer_copy,
    .buf_axpby = hisp_cuda_axpby,
    .buf_check = hisp_cuda_buf_check,
    .stream_set = hisp_cuda_stream_set,
    .stream_get = hisp_cuda_stream_get,
    .csr_wrap = hisp_cuda_csr_wrap,
    .csr_arrays = hisp_cuda_csr_arrays,
    .vendor_spgemm = hisp_cuda_vendor_spgemm,
};
