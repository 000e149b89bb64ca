/* OpenCL backend: CSR upload, analysis and SpMV dispatch.
 *
 * Three kernel families:
 *  - "block" (GPUs; kernels_cl/csr_block.cl): the CUDA backend's design.
 *    The host cuts the rows into work-groups of about equal work
 *    (plan_blocks): consecutive short rows packed up to 16 KiB of staged
 *    products / 1024 rows, a row longer than a quarter of that its own
 *    work-group(s), rows over SPLIT entries in chunks added by a fix-up
 *    kernel; products staged in local memory and reduced per row;
 *  - "chunk" (CPU devices, PoCL; csr_spmv.cl): one work-item per part, each
 *    part a contiguous run of rows with about equal cost (nonzeros + rows),
 *    local size 1 so PoCL runs a plain CSR loop per part, several parts per
 *    core;
 *  - "vector" (csr_spmv.cl; the former GPU family): vl = 2..32 lanes per
 *    row from the mean row length, 32 lanes for medium rows, a whole
 *    work-group for each long row.
 * The test hook hispi_spmv_hook overrides the family at upload (the tests
 * run every family on PoCL) and can force 64-bit row pointers, otherwise
 * used only from nnz >= 2^31.
 *
 * op = T, block and chunk families: op = N on a transposed copy (the CSR
 * arrays of A^T) built at the first op = T call: the matrix is read back, transposed on the
 * host (counting sort, rows kept in order, so results are reproducible) and
 * uploaded as a matrix of its own. MEMORY: that is a second copy of the
 * matrix on the device (colind + values + row pointers + work-group plan)
 * for as long as the matrix lives, and during the build about twice the
 * matrix in host memory. When the copy does not fit (out of device or host
 * memory), op = T scatters instead: block family with compare-exchange
 * atomics (csr_t_block, after scale_y), chunk family as below (the test
 * hook's t_mode forces either path, the copy with the vector family too).
 * op = T by scatter, chunk and vector families: scale_y first (y = beta*y,
 * or 0 without reading y), then a scatter with compare-exchange atomics; on CPU devices
 * (chunk), when it costs no more memory than the matrix, each compute unit
 * scatters into a private copy of y instead and reduce_copies sums them
 * (PoCL's atomics are compare-exchange loops: several times slower than the
 * serial loop). */
#include "cl_backend.h"

#include <stdatomic.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char hispi_cl_src_csr_spmv[];
extern const char hispi_cl_src_csr_block[];
extern const char hispi_cl_src_msrep[];

enum { VARIANT_CHUNK = 0, VARIANT_VECTOR = 1, VARIANT_BLOCK = 2 };

/* Block family constants; they must match csr_block.cl. */
#define BLK_NT 256
#define BLK_ROWCAP 1024
#define BLK_STAGE_BYTES 16384
#define BLK_SPLIT 8192

enum { T_DEFAULT = 0, T_ATOMIC = 1, T_TRANSPOSE = 2 };

typedef struct hisp_cl_csr_s {
    hisp_type type;
    int64_t nrows, ncols, nnz;
    int wide_ptr; /* 64-bit row pointers */
    int idx64;    /* 64-bit column indices (wrapped arrays) */
    int base;     /* index base of wrapped arrays (0 or 1) */
    int variant;
    unsigned vl, ls;
    uint64_t short_len, long_len; /* bins: <= short_len, <= long_len, longer */
    uint32_t nparts, nmid, nlong;
    cl_mem rowptr, colind, val;
    cl_mem part;     /* chunk: nparts + 1 row boundaries */
    cl_mem midrows;  /* vector: rows in (short_len, long_len] */
    cl_mem longrows; /* vector: rows longer than long_len */
    cl_mem tpart;    /* chunk, op = T: row parts of the private-copy scatter */
    uint32_t ntparts;
    cl_mem work; /* ntparts copies of y (made on first op = T) */
    /* block family */
    cl_mem blocks, splits, partial;
    uint32_t nblocks, nsplits;
    /* op = T through a transposed copy (made on first op = T) */
    int t_mode;               /* T_DEFAULT, T_ATOMIC, T_TRANSPOSE */
    struct hisp_cl_csr_s *tr; /* the copy */
    int tr_off;               /* atomics instead (no room for the copy) */
    /* kernels, made on first use */
    cl_kernel scale, n_main, n_mid, n_long, t_main, t_mid, t_long, t_private, t_reduce, n_fix;
} hisp_cl_csr;

void hisp_cl_csr_free(void *be, void *dev)
{
    (void)be;
    hisp_cl_csr *m = dev;
    if (!m) return;
    cl_kernel ks[] = {m->scale, m->n_main, m->n_mid,     m->n_long,   m->t_main,
                      m->t_mid, m->t_long, m->t_private, m->t_reduce, m->n_fix};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
        if (ks[i]) clReleaseKernel(ks[i]);
    cl_mem bs[] = {m->rowptr, m->colind, m->val,    m->part,   m->midrows, m->longrows,
                   m->tpart,  m->work,   m->blocks, m->splits, m->partial};
    for (size_t i = 0; i < sizeof bs / sizeof bs[0]; i++)
        if (bs[i]) clReleaseMemObject(bs[i]);
    hisp_cl_csr_free(be, m->tr);
    free(m);
}

static hisp_status upload(hisp_context ctx, hisp_cl_be *be, cl_mem *buf, const void *src,
                          size_t bytes)
{
    void *b = NULL;
    HISPI_TRY(hisp_cl_buf_alloc(ctx, be, bytes, &b));
    *buf = b;
    return hisp_cl_buf_write(ctx, be, b, 0, src, bytes);
}

/* Row pointer i of the matrix being uploaded, the local one also when
 * A->rowptr holds a part's slice of the global pointers (MSREP p*-opt,
 * o->gptr): the host analysis reads it without a local copy. */
static inline int64_t lptr_at(const hispi_csr_view *A, const hispi_csr_opts *o, int64_t i)
{
    int64_t v = A->rowptr[i];
    if (!o || !o->gptr) return v;
    int64_t lo = o->ptr_base, hi = o->ptr_base + A->nnz;
    return (v < lo ? lo : v > hi ? hi : v) - lo;
}

static unsigned floor_pow2(size_t v)
{
    unsigned p = 1;
    while ((size_t)p * 2 <= v && p < (1u << 30))
        p *= 2;
    return p;
}

/* Lanes per row from the mean row length: the smallest power of two >= the
 * mean, within 2..32. */
static unsigned lanes_for(double mean)
{
    unsigned vl = 2;
    while (vl < 32 && vl < mean)
        vl *= 2;
    return vl;
}

/* Split the rows into at most `want` contiguous parts of about equal cost
 * (nonzeros + rows); uploads nparts + 1 boundaries. */
static hisp_status make_parts(hisp_context ctx, hisp_cl_be *be, const hispi_csr_view *A,
                              const hispi_csr_opts *o, uint64_t want, cl_mem *buf, uint32_t *nparts)
{
    if (want > (uint64_t)A->nrows) want = (uint64_t)A->nrows;
    if (want < 1) want = 1;
    uint32_t *part = NULL;
    HISPI_TRY(hispi_alloc(ctx, (size_t)want + 1, sizeof *part, (void **)&part));
    double total = (double)A->nnz + (double)A->nrows;
    uint32_t np = 0;
    part[0] = 0;
    int64_t i = 0;
    for (uint64_t p = 1; p <= want && i < A->nrows; p++) {
        double goal = total * (double)p / (double)want;
        /* advance until the cost of rows [0, i) reaches the goal */
        while (i < A->nrows && (double)lptr_at(A, o, i) + (double)i < goal)
            i++;
        if (p == want) i = A->nrows;
        if (i > (int64_t)part[np]) part[++np] = (uint32_t)i;
    }
    if (np == 0) part[++np] = (uint32_t)A->nrows; /* nrows == 0: one empty part */
    *nparts = np;
    hisp_status s = upload(ctx, be, buf, part, ((size_t)np + 1) * sizeof *part);
    free(part);
    return s;
}

/* The rows of length in (lo, hi] as a list on the device. */
static hisp_status row_list(hisp_context ctx, hisp_cl_be *be, const hispi_csr_view *A,
                            const hispi_csr_opts *o, uint64_t lo, uint64_t hi, cl_mem *buf,
                            uint32_t *count)
{
    uint32_t n = 0;
    for (int64_t i = 0; i < A->nrows; i++) {
        uint64_t len = (uint64_t)(lptr_at(A, o, i + 1) - lptr_at(A, o, i));
        n += len > lo && len <= hi;
    }
    *count = n;
    if (n == 0) return HISP_SUCCESS;
    uint32_t *rows = NULL;
    HISPI_TRY(hispi_alloc(ctx, n, sizeof *rows, (void **)&rows));
    n = 0;
    for (int64_t i = 0; i < A->nrows; i++) {
        uint64_t len = (uint64_t)(lptr_at(A, o, i + 1) - lptr_at(A, o, i));
        if (len > lo && len <= hi) rows[n++] = (uint32_t)i;
    }
    hisp_status s = upload(ctx, be, buf, rows, (size_t)n * sizeof *rows);
    free(rows);
    return s;
}

/* The block family's plan (core/matrix/csr_plan.c, whose block and split layouts
 * are csr_block.cl's block_t and split_t): upload it and allocate the
 * partial sums. */
static hisp_status plan_blocks(hisp_context ctx, hisp_cl_be *be, const hispi_csr_view *A,
                               const hispi_csr_opts *o, hisp_cl_csr *m)
{
    const int64_t cap = BLK_STAGE_BYTES / (int64_t)hisp_type_size(A->type);
    hispi_csr_plan p;
    int64_t *lp = NULL; /* p*-opt: the planner needs the local pointers as an array */
    if (o && o->gptr) {
        HISPI_TRY(hispi_alloc(ctx, (size_t)A->nrows + 1, sizeof *lp, (void **)&lp));
        for (int64_t i = 0; i <= A->nrows; i++)
            lp[i] = lptr_at(A, o, i);
    }
    hisp_status ps =
        hispi_csr_plan_build(ctx, lp ? lp : A->rowptr, A->nrows, cap, BLK_ROWCAP, BLK_SPLIT, &p);
    free(lp);
    HISPI_TRY(ps);
    hisp_status st = HISP_SUCCESS;
    if ((uint64_t)p.nblocks > UINT32_MAX / BLK_NT)
        st = hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                        "opencl: matrix needs %lld work-groups, too many", (long long)p.nblocks);
    m->nblocks = (uint32_t)p.nblocks;
    m->nsplits = (uint32_t)p.nsplits;
    if (!st) st = upload(ctx, be, &m->blocks, p.blocks, (size_t)p.nblocks * sizeof *p.blocks);
    if (!st) st = upload(ctx, be, &m->splits, p.splits, (size_t)p.nsplits * sizeof *p.splits);
    if (!st) {
        void *b = NULL;
        st = hisp_cl_buf_alloc(ctx, be, (size_t)p.nslots * hisp_type_size(A->type), &b);
        m->partial = b;
    }
    hispi_csr_plan_free(&p);
    return st;
}

/* Whether the device can run the block family (work-groups of BLK_NT,
 * local memory for the staged products and the reduction). */
static int block_ok(const hisp_cl_be *be, hisp_type t)
{
    size_t es = hisp_type_size(t), cap = BLK_STAGE_BYTES / es;
    size_t need = (cap + (cap >> (es == 8 ? 4 : 5)) + BLK_NT) * es;
    return be->max_wg >= BLK_NT && be->local_mem >= need + 1024;
}

static hisp_status set_args(hisp_context ctx, cl_kernel k, int n, const size_t *sizes,
                            const void *const *vals);
static hisp_status launch(hisp_context ctx, hisp_cl_be *be, cl_kernel k, size_t global,
                          size_t local, int fixed);

/* p*-opt: the part's slice of the global pointers goes to the device as is
 * and msrep.cl makes the local pointers there (narrowed when 32-bit). */
static hisp_status local_ptr_on_device(hisp_context ctx, hisp_cl_be *be, const hispi_csr_view *A,
                                       const hispi_csr_opts *o, hisp_cl_csr *m)
{
    size_t np1 = (size_t)A->nrows + 1;
    cl_mem g = NULL;
    cl_kernel k = NULL;
    void *b = NULL;
    hisp_status s = upload(ctx, be, &g, A->rowptr, np1 * sizeof(int64_t));
    if (!s) s = hisp_cl_buf_alloc(ctx, be, np1 * (m->wide_ptr ? 8 : 4), &b);
    if (!s) m->rowptr = b;
    if (!s)
        s = hisp_cl_kernel(ctx, be, hispi_cl_src_msrep,
                           m->wide_ptr
                               ? "-cl-std=CL1.2 -D VALUE_T=float -D IS_DOUBLE=0 -D PTR_T=ulong"
                               : "-cl-std=CL1.2 -D VALUE_T=float -D IS_DOUBLE=0 -D PTR_T=uint",
                           "msrep_local_ptr", &k);
    cl_ulong n = np1;
    cl_long base = o->ptr_base, nnz = A->nnz;
    size_t ms = sizeof(cl_mem);
    size_t sz[] = {ms, sizeof n, sizeof base, sizeof nnz, ms};
    const void *v[] = {&g, &n, &base, &nnz, &m->rowptr};
    if (!s) s = set_args(ctx, k, 5, sz, v);
    if (!s) s = launch(ctx, be, k, np1, 64, 0);
    if (!s) {
        cl_int e = clFinish(be->queue);
        if (e != CL_SUCCESS) s = hisp_cl_fail(ctx, e, "clFinish");
    }
    if (k) clReleaseKernel(k);
    if (g) clReleaseMemObject(g);
    return s;
}

/* Upload A; variant < 0: chosen from the device (and the test hook). o:
 * MSREP options (NULL: none; gptr: A->rowptr are global, see lptr_at).
 * ext: the caller's arrays, used in place (retained, never uploaded); A
 * then holds the 0-based row pointers for the analysis only. */
static hisp_status upload_csr(hisp_context ctx, hisp_cl_be *be, const hispi_csr_view *A,
                              const hispi_csr_opts *o, const hispi_csr_ext *ext, int variant,
                              hisp_cl_csr **out)
{
    if (A->type != HISP_F32 && A->type != HISP_F64)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                          "opencl: SpMV on %s entries is not implemented yet",
                          hisp_type_name(A->type));
    if (A->type == HISP_F64 && !be->fp64)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                          "opencl: device \"%s\" has no double precision (cl_khr_fp64); use f32",
                          be->name);
    if (A->nrows > INT32_MAX || A->ncols > INT32_MAX)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "opencl: dimensions beyond 2^31-1");
    hisp_cl_csr *m = NULL;
    HISPI_TRY(hispi_calloc(ctx, 1, sizeof *m, (void **)&m));
    m->type = A->type;
    m->nrows = A->nrows;
    m->ncols = A->ncols;
    m->nnz = A->nnz;
    m->wide_ptr = A->nnz >= ((int64_t)1 << 31) || hispi_spmv_hook.wide_ptr;
    if (ext) {
        m->wide_ptr = ext->ptr64;
        m->idx64 = ext->idx64;
        m->base = ext->base;
    }

    /* analysis: mean and longest row */
    int64_t maxlen = 0;
    for (int64_t i = 0; i < A->nrows; i++) {
        int64_t len = lptr_at(A, o, i + 1) - lptr_at(A, o, i);
        if (len > maxlen) maxlen = len;
    }
    double mean = A->nrows ? (double)A->nnz / (double)A->nrows : 0;
    m->variant = be->is_gpu ? VARIANT_BLOCK : VARIANT_CHUNK;
    if (hispi_spmv_hook.cl_variant >= 1 && hispi_spmv_hook.cl_variant <= 3)
        m->variant = hispi_spmv_hook.cl_variant - 1; /* a test hook */
    if (variant >= 0) m->variant = variant;
    if (m->variant == VARIANT_BLOCK && !block_ok(be, A->type)) m->variant = VARIANT_VECTOR;
    m->t_mode = hispi_spmv_hook.t_mode == 1   ? T_ATOMIC
                : hispi_spmv_hook.t_mode == 2 ? T_TRANSPOSE
                                              : T_DEFAULT;
    /* the transposed copy by default with the GPU and CPU families (on PoCL
     * too it beats the private-copy scatter: 13-37% on 4-7M-entry suite
     * matrices, 2 cores); the vector family keeps its atomic scatter */
    if (m->t_mode == T_DEFAULT) m->t_mode = m->variant == VARIANT_VECTOR ? T_ATOMIC : T_TRANSPOSE;
    if (ext) m->t_mode = T_ATOMIC; /* the caller's arrays: no transposed copy of them */
    if (m->variant == VARIANT_BLOCK) {
        m->ls = BLK_NT;
        m->vl = 1;
    } else if (m->variant == VARIANT_VECTOR) {
        m->ls = be->vector_ls;
        m->vl = lanes_for(mean);
        if (m->vl > m->ls) m->vl = m->ls;
        /* a lane does at most ~16 iterations: longer rows go to 32 lanes
         * (medium) or, beyond 4 iterations per item of a work-group, to a
         * whole work-group (long) */
        m->long_len = 4u * (uint64_t)m->ls;
        m->short_len = (uint64_t)m->vl * 16;
        if (m->short_len > m->long_len) m->short_len = m->long_len;
    } else {
        m->ls = 1;
        m->vl = 1;
    }

    hisp_status s = HISP_SUCCESS;
    size_t np1 = (size_t)A->nrows + 1;
    if (ext) { /* in place: a reference each, released by csr_free */
        cl_mem bufs[3] = {(cl_mem)ext->rowptr, (cl_mem)ext->colind, (cl_mem)ext->val};
        cl_mem *dst[3] = {&m->rowptr, &m->colind, &m->val};
        for (int i = 0; i < 3 && !s; i++) {
            cl_int e = clRetainMemObject(bufs[i]);
            if (e != CL_SUCCESS) s = hisp_cl_fail(ctx, e, "clRetainMemObject");
            if (!s) *dst[i] = bufs[i];
        }
    } else if (o && o->gptr) {
        s = local_ptr_on_device(ctx, be, A, o, m);
    } else if (m->wide_ptr) {
        s = upload(ctx, be, &m->rowptr, A->rowptr, np1 * sizeof(int64_t));
    } else { /* narrowed: halves the bytes of the row pointers */
        uint32_t *p32 = NULL;
        s = hispi_alloc(ctx, np1, sizeof *p32, (void **)&p32);
        if (!s) {
            for (size_t i = 0; i < np1; i++)
                p32[i] = (uint32_t)A->rowptr[i];
            s = upload(ctx, be, &m->rowptr, p32, np1 * sizeof *p32);
            free(p32);
        }
    }
    if (!s && !ext) s = upload(ctx, be, &m->colind, A->colind, (size_t)A->nnz * sizeof(int32_t));
    if (!s && !ext) s = upload(ctx, be, &m->val, A->val, (size_t)A->nnz * hisp_type_size(A->type));
    if (!s && m->variant == VARIANT_CHUNK) {
        /* several parts per compute unit: balance without much per-group cost */
        s = make_parts(ctx, be, A, o, (uint64_t)be->compute_units * 8, &m->part, &m->nparts);
        /* op = T: one private copy of y per compute unit (at most 8) when
         * the copies cost no more than the matrix; else atomics */
        uint64_t copies = be->compute_units < 8 ? be->compute_units : 8;
        if (!s && (uint64_t)A->ncols * copies <= 2 * (uint64_t)A->nnz + 4096)
            s = make_parts(ctx, be, A, o, copies, &m->tpart, &m->ntparts);
    } else if (!s && m->variant == VARIANT_BLOCK) {
        s = plan_blocks(ctx, be, A, o, m);
    } else if (!s) {
        if (m->vl < 32 && m->ls >= 32 && maxlen > (int64_t)m->short_len)
            s = row_list(ctx, be, A, o, m->short_len, m->long_len, &m->midrows, &m->nmid);
        else
            m->short_len = m->long_len; /* no medium bin */
        if (!s && maxlen > (int64_t)m->long_len)
            s = row_list(ctx, be, A, o, m->long_len, UINT64_MAX, &m->longrows, &m->nlong);
    }
    if (s) {
        hisp_cl_csr_free(be, m);
        return s;
    }
    hispi_debug("opencl: csr %lldx%lld nnz %lld mean %.1f max %lld -> %s vl %u ls %u medium %u "
                "long %u parts %u blocks %u splits %u",
                (long long)A->nrows, (long long)A->ncols, (long long)A->nnz, mean,
                (long long)maxlen,
                m->variant == VARIANT_BLOCK    ? "block"
                : m->variant == VARIANT_VECTOR ? "vector"
                                               : "chunk",
                m->vl, m->ls, m->nmid, m->nlong, m->nparts, m->nblocks, m->nsplits);
    *out = m;
    return HISP_SUCCESS;
}

hisp_status hisp_cl_csr_upload(hisp_context ctx, void *vbe, const hispi_csr_view *A, void **dev)
{
    hisp_cl_csr *m = NULL;
    *dev = NULL;
    HISPI_TRY(upload_csr(ctx, vbe, A, NULL, NULL, -1, &m));
    *dev = m;
    return HISP_SUCCESS;
}

/* The caller's arrays, read in place (hisp_matrix_wrap_csr_device). */
hisp_status hisp_cl_csr_wrap(hisp_context ctx, void *vbe, const hispi_csr_view *A,
                             const hispi_csr_ext *ext, void **dev)
{
    hisp_cl_csr *m = NULL;
    *dev = NULL;
    HISPI_TRY(upload_csr(ctx, vbe, A, NULL, ext, -1, &m));
    *dev = m;
    return HISP_SUCCESS;
}

/* MSREP: the upload with options (p*-opt; no vendor kernel on OpenCL). */
hisp_status hisp_cl_csr_upload_opts(hisp_context ctx, void *vbe, const hispi_csr_view *A,
                                    const hispi_csr_opts *o, void **dev)
{
    hisp_cl_csr *m = NULL;
    *dev = NULL;
    if (o && o->vendor)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "opencl: no vendor SpMV kernel");
    HISPI_TRY(upload_csr(ctx, vbe, A, o, NULL, -1, &m));
    *dev = m;
    return HISP_SUCCESS;
}

/* Defines of wrapped index arrays (none for hisp's own: the kernels'
 * defaults, so those programs keep their cache keys). */
static const char *idx_defines(const hisp_cl_csr *m)
{
    static const char *const d[4] = {"", " -D IDX_BASE=1", " -D IDX64=1",
                                     " -D IDX64=1 -D IDX_BASE=1"};
    return d[(m->idx64 ? 2 : 0) + (m->base ? 1 : 0)];
}

/* The kernel `name` of the matrix's program; reqd: it has a required
 * work-group size of LS (vector and long-row kernels), checked here. */
static hisp_status get_kernel(hisp_context ctx, hisp_cl_be *be, hisp_cl_csr *m, const char *name,
                              int reqd, cl_kernel *k)
{
    if (*k) return HISP_SUCCESS;
    char opts[256];
    snprintf(opts, sizeof opts,
             "-cl-std=CL1.2 -D VALUE_T=%s -D IS_DOUBLE=%d -D PTR_T=%s -D LS=%u -D ATOM64=%d%s",
             m->type == HISP_F64 ? "double" : "float", m->type == HISP_F64,
             m->wide_ptr ? "ulong" : "uint", be->vector_ls, be->int64_atomics, idx_defines(m));
    HISPI_TRY(hisp_cl_kernel(ctx, be, hispi_cl_src_csr_spmv, opts, name, k));
    if (!reqd) return HISP_SUCCESS;
    size_t wg = 0;
    cl_int e =
        clGetKernelWorkGroupInfo(*k, be->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL);
    if (e != CL_SUCCESS) return hisp_cl_fail(ctx, e, "clGetKernelWorkGroupInfo");
    if (wg < m->ls)
        return hispi_fail(ctx, HISP_ERR_BACKEND,
                          "opencl: kernel %s allows work-groups of %zu, needs %u", name, wg, m->ls);
    return HISP_SUCCESS;
}

/* Set kernel arguments from a list of (size, pointer) pairs. */
static hisp_status set_args(hisp_context ctx, cl_kernel k, int n, const size_t *sizes,
                            const void *const *vals)
{
    for (int i = 0; i < n; i++) {
        cl_int e = clSetKernelArg(k, (cl_uint)i, sizes[i], vals[i]);
        if (e != CL_SUCCESS) return hisp_cl_fail(ctx, e, "clSetKernelArg");
    }
    return HISP_SUCCESS;
}

/* Enqueue over `global` items (rounded up to the local size). A kernel
 * without a required work-group size gets at most what it allows. */
static hisp_status launch(hisp_context ctx, hisp_cl_be *be, cl_kernel k, size_t global,
                          size_t local, int fixed)
{
    if (global == 0) return HISP_SUCCESS; /* nothing to do: no zero-size launch */
    size_t wg = 0;
    if (!fixed && local > 1 &&
        clGetKernelWorkGroupInfo(k, be->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL) ==
            CL_SUCCESS &&
        wg > 0 && wg < local)
        local = floor_pow2(wg);
    global = (global + local - 1) / local * local;
    cl_int e = clEnqueueNDRangeKernel(be->queue, k, 1, NULL, &global, &local, 0, NULL, NULL);
    return e == CL_SUCCESS ? HISP_SUCCESS : hisp_cl_fail(ctx, e, "clEnqueueNDRangeKernel");
}

/* One vector-kernel launch: `count` rows (all rows when list is NULL,
 * those of length <= max_len), vl lanes each. */
static hisp_status vector_pass(hisp_context ctx, hisp_cl_be *be, hisp_cl_csr *m, hisp_op op,
                               cl_kernel *k, cl_uint count, cl_mem list, cl_uint vl,
                               cl_ulong max_len, const void *ap, const void *bp, cl_mem xm,
                               cl_mem ym)
{
    size_t rs = m->type == HISP_F64 ? sizeof(double) : sizeof(float), ms = sizeof(cl_mem);
    int n = op == HISP_OP_N;
    HISPI_TRY(get_kernel(ctx, be, m, n ? "csr_n_vector" : "csr_t_vector", 1, k));
    /* kernel arguments; op = T has no beta (y was scaled before) */
    size_t sz[] = {sizeof count, ms, sizeof vl, sizeof max_len, ms, ms, ms, ms, rs, rs, ms};
    const void *v[] = {&count,  &list, &vl, &max_len, &m->rowptr, &m->colind,
                       &m->val, &xm,   ap,  bp,       &ym};
    if (!n) {
        sz[9] = ms;
        v[9] = &ym;
    }
    HISPI_TRY(set_args(ctx, *k, n ? 11 : 10, sz, v));
    return launch(ctx, be, *k, (size_t)count * vl, m->ls, 1);
}

/* A kernel of the block family's program (csr_block.cl). On NVIDIA's
 * platform it is built with inline PTX first (NV_ASM 2: loads and atomic
 * adds); if that build fails, the instance steps down (1: loads only, then 0:
 * plain OpenCL C). */
static hisp_status get_block_kernel(hisp_context ctx, hisp_cl_be *be, hisp_cl_csr *m,
                                    const char *name, int reqd, cl_kernel *k)
{
    if (*k) return HISP_SUCCESS;
    for (;;) {
        char opts[320];
        /* -cl-nv-maxrregcount=64: four work-groups of 256 per SM, as the CUDA
         * kernel's __launch_bounds__(256, 4) */
        snprintf(opts, sizeof opts,
                 "-cl-std=CL1.2 -D VALUE_T=%s -D IS_DOUBLE=%d -D PTR_T=%s -D ATOM64=%d "
                 "-D NV_ASM=%d -D STAGE_BYTES=%d%s%s",
                 m->type == HISP_F64 ? "double" : "float", m->type == HISP_F64,
                 m->wide_ptr ? "ulong" : "uint", be->int64_atomics, be->nv_asm, BLK_STAGE_BYTES,
                 be->nv_opts ? " -cl-nv-maxrregcount=64" : "", idx_defines(m));
        hisp_status s = hisp_cl_kernel(ctx, be, hispi_cl_src_csr_block, opts, name, k);
        if (s == HISP_ERR_KERNEL_BUILD && be->nv_asm) {
            hispi_debug("opencl: csr_block.cl with inline PTX level %d failed to build; "
                        "trying level %d",
                        be->nv_asm, be->nv_asm - 1);
            hispi_clear_error(ctx);
            be->nv_asm--;
            continue;
        }
        HISPI_TRY(s);
        break;
    }
    if (!reqd) return HISP_SUCCESS;
    size_t wg = 0;
    cl_int e =
        clGetKernelWorkGroupInfo(*k, be->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL);
    if (e != CL_SUCCESS) return hisp_cl_fail(ctx, e, "clGetKernelWorkGroupInfo");
    if (wg < BLK_NT)
        return hispi_fail(ctx, HISP_ERR_BACKEND,
                          "opencl: kernel %s allows work-groups of %zu, needs %d", name, wg,
                          BLK_NT);
    return HISP_SUCCESS;
}

/* The transposed copy of m (see the top of this file): read back, counting
 * sort by column on the host, upload as a matrix of the same family. */
static hisp_status transpose_copy(hisp_context ctx, hisp_cl_be *be, hisp_cl_csr *m,
                                  hisp_cl_csr **out)
{
    const size_t es = hisp_type_size(m->type), nr = (size_t)m->nrows, nc = (size_t)m->ncols,
                 nnz = (size_t)m->nnz;
    int64_t *rp = NULL, *tp = NULL;
    int32_t *col = NULL, *tcol = NULL;
    char *val = NULL, *tval = NULL;
    void *raw = NULL;
    hisp_status s = hispi_alloc(ctx, nr + 1, sizeof *rp, (void **)&rp);
    if (!s) s = hispi_calloc(ctx, nc + 1, sizeof *tp, (void **)&tp);
    if (!s) s = hispi_alloc(ctx, nnz ? nnz : 1, sizeof *col, (void **)&col);
    if (!s) s = hispi_alloc(ctx, nnz ? nnz : 1, sizeof *tcol, (void **)&tcol);
    if (!s) s = hispi_alloc(ctx, nnz ? nnz : 1, es, (void **)&val);
    if (!s) s = hispi_alloc(ctx, nnz ? nnz : 1, es, (void **)&tval);
    if (!s && !m->wide_ptr) s = hispi_alloc(ctx, nr + 1, sizeof(uint32_t), &raw);
    if (!s)
        s = hisp_cl_buf_read(ctx, be, m->rowptr, 0, m->wide_ptr ? (void *)rp : raw,
                             (nr + 1) * (m->wide_ptr ? 8 : 4));
    if (!s) s = hisp_cl_buf_read(ctx, be, m->colind, 0, col, nnz * 4);
    if (!s) s = hisp_cl_buf_read(ctx, be, m->val, 0, val, nnz * es);
    if (!s) {
        if (!m->wide_ptr)
            for (size_t i = 0; i <= nr; i++)
                rp[i] = ((const uint32_t *)raw)[i];
        for (size_t k = 0; k < nnz; k++)
            tp[col[k] + 1]++;
        for (size_t j = 0; j < nc; j++)
            tp[j + 1] += tp[j];
        /* rows in order: each column's entries come out sorted by row; tp[c]
         * advances to the next free slot, then is shifted back */
        for (size_t i = 0; i < nr; i++)
            for (int64_t k = rp[i]; k < rp[i + 1]; k++) {
                int64_t pos = tp[col[k]]++;
                tcol[pos] = (int32_t)i;
                memcpy(tval + (size_t)pos * es, val + (size_t)k * es, es);
            }
        for (size_t j = nc; j > 0; j--)
            tp[j] = tp[j - 1];
        tp[0] = 0;
        hispi_csr_view v = {m->type, m->ncols, m->nrows, m->nnz, tp, tcol, tval};
        s = upload_csr(ctx, be, &v, NULL, NULL, m->variant, out);
    }
    free(rp);
    free(tp);
    free(col);
    free(tcol);
    free(val);
    free(tval);
    free(raw);
    return s;
}

/* op = N with the block family. */
static hisp_status block_n(hisp_context ctx, hisp_cl_be *be, hisp_cl_csr *m, const void *ap,
                           const void *bp, cl_mem xm, cl_mem ym)
{
    size_t rs = hisp_type_size(m->type), ms = sizeof(cl_mem);
    if (m->nblocks) {
        HISPI_TRY(get_block_kernel(ctx, be, m, "csr_n_block", 1, &m->n_main));
        size_t sz[] = {ms, ms, ms, ms, ms, ms, ms, rs, rs};
        const void *v[] = {&m->rowptr, &m->colind,  &m->val, &m->blocks, &xm,
                           &ym,        &m->partial, ap,      bp};
        HISPI_TRY(set_args(ctx, m->n_main, 9, sz, v));
        HISPI_TRY(launch(ctx, be, m->n_main, (size_t)m->nblocks * BLK_NT, BLK_NT, 1));
    }
    if (m->nsplits) {
        HISPI_TRY(get_block_kernel(ctx, be, m, "csr_fixup", 0, &m->n_fix));
        cl_uint n = m->nsplits;
        size_t sz[] = {sizeof n, ms, ms, rs, rs, ms};
        const void *v[] = {&n, &m->splits, &m->partial, ap, bp, &ym};
        HISPI_TRY(set_args(ctx, m->n_fix, 6, sz, v));
        HISPI_TRY(launch(ctx, be, m->n_fix, n, 64, 0));
    }
    return HISP_SUCCESS;
}

hisp_status hisp_cl_csr_spmv(hisp_context ctx, void *vbe, void *dev, hisp_op op, double alpha,
                             const void *x, double beta, void *y)
{
    hisp_cl_be *be = vbe;
    hisp_cl_csr *m = dev;
    cl_mem xm = (cl_mem)x, ym = (cl_mem)y;
    int dbl = m->type == HISP_F64;
    float af = (float)alpha, bf = (float)beta;
    const void *ap = dbl ? (const void *)&alpha : (const void *)&af;
    const void *bp = dbl ? (const void *)&beta : (const void *)&bf;
    size_t rs = dbl ? sizeof(double) : sizeof(float), ms = sizeof(cl_mem);
    cl_uint nrows = (cl_uint)m->nrows;

    /* op = T through the transposed copy, made at the first op = T call;
     * when there is no room for it (device or host), atomics instead */
    if (op == HISP_OP_T && m->t_mode == T_TRANSPOSE && !m->tr && !m->tr_off) {
        hisp_status s = transpose_copy(ctx, be, m, &m->tr);
        if (s == HISP_ERR_OUT_OF_DEVICE_MEMORY || s == HISP_ERR_OUT_OF_HOST_MEMORY) {
            hispi_debug("opencl: no room for the transposed copy; op = T by atomics");
            hispi_clear_error(ctx);
            m->tr_off = 1;
        } else if (s) {
            return s;
        }
    }
    if (op == HISP_OP_T && m->tr)
        return hisp_cl_csr_spmv(ctx, be, m->tr, HISP_OP_N, alpha, x, beta, y);

    if (op == HISP_OP_N) {
        if (m->nrows == 0) return HISP_SUCCESS;
        if (m->variant == VARIANT_BLOCK) return block_n(ctx, be, m, ap, bp, xm, ym);
        if (m->variant == VARIANT_CHUNK) {
            HISPI_TRY(get_kernel(ctx, be, m, "csr_n_chunk", 0, &m->n_main));
            size_t sz[] = {ms, ms, ms, ms, ms, rs, rs, ms};
            const void *v[] = {&m->part, &m->rowptr, &m->colind, &m->val, &xm, ap, bp, &ym};
            HISPI_TRY(set_args(ctx, m->n_main, 8, sz, v));
            return launch(ctx, be, m->n_main, m->nparts, 1, 0);
        }
        HISPI_TRY(vector_pass(ctx, be, m, op, &m->n_main, nrows, NULL, m->vl, m->short_len, ap, bp,
                              xm, ym));
        if (m->nmid)
            HISPI_TRY(vector_pass(ctx, be, m, op, &m->n_mid, m->nmid, m->midrows, 32, UINT64_MAX,
                                  ap, bp, xm, ym));
        if (m->nlong) {
            HISPI_TRY(get_kernel(ctx, be, m, "csr_n_long", 1, &m->n_long));
            size_t sz2[] = {ms, ms, ms, ms, ms, rs, rs, ms};
            const void *v2[] = {&m->longrows, &m->rowptr, &m->colind, &m->val, &xm, ap, bp, &ym};
            HISPI_TRY(set_args(ctx, m->n_long, 8, sz2, v2));
            HISPI_TRY(launch(ctx, be, m->n_long, (size_t)m->nlong * m->ls, m->ls, 1));
        }
        return HISP_SUCCESS;
    }

    if (m->ncols == 0) return HISP_SUCCESS;
    cl_ulong ncols = (cl_ulong)m->ncols;
    if (m->tpart && m->nnz > 0 && !m->work) {
        void *w = NULL;
        if (hisp_cl_buf_alloc(ctx, be, (size_t)m->ntparts * (size_t)m->ncols * rs, &w)) {
            /* no room for the copies: atomics instead */
            hispi_clear_error(ctx);
            clReleaseMemObject(m->tpart);
            m->tpart = NULL;
        }
        m->work = w;
    }
    if (m->tpart && m->nnz > 0) { /* private copies, then y = beta*y + their sum */
        HISPI_TRY(get_kernel(ctx, be, m, "csr_t_private", 0, &m->t_private));
        size_t sz[] = {ms, ms, ms, ms, ms, rs, sizeof ncols, ms};
        const void *v[] = {&m->tpart, &m->rowptr, &m->colind, &m->val, &xm, ap, &ncols, &m->work};
        HISPI_TRY(set_args(ctx, m->t_private, 8, sz, v));
        HISPI_TRY(launch(ctx, be, m->t_private, m->ntparts, 1, 0));
        HISPI_TRY(get_kernel(ctx, be, m, "reduce_copies", 0, &m->t_reduce));
        cl_uint nc = m->ntparts;
        size_t sz2[] = {sizeof nc, sizeof ncols, ms, rs, ms};
        const void *v2[] = {&nc, &ncols, &m->work, bp, &ym};
        HISPI_TRY(set_args(ctx, m->t_reduce, 5, sz2, v2));
        return launch(ctx, be, m->t_reduce, (size_t)m->ncols, be->is_gpu ? 256 : 64, 0);
    }
    /* the scatter needs atomics (checked before y is touched) */
    if (dbl && !be->int64_atomics && m->nnz > 0)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                          "opencl: transposed f64 SpMV needs 64-bit atomics "
                          "(cl_khr_int64_base_atomics), which device \"%s\" lacks",
                          be->name);
    HISPI_TRY(get_kernel(ctx, be, m, "scale_y", 0, &m->scale));
    {
        size_t sz[] = {sizeof ncols, rs, ms};
        const void *v[] = {&ncols, bp, &ym};
        HISPI_TRY(set_args(ctx, m->scale, 3, sz, v));
        HISPI_TRY(launch(ctx, be, m->scale, (size_t)m->ncols, be->is_gpu ? 256 : 64, 0));
    }
    if (m->nnz == 0) return HISP_SUCCESS;
    if (m->variant == VARIANT_BLOCK) {
        if (!m->nblocks) return HISP_SUCCESS;
        HISPI_TRY(get_block_kernel(ctx, be, m, "csr_t_block", 1, &m->t_main));
        size_t sz[] = {ms, ms, ms, ms, ms, ms, rs};
        const void *v[] = {&m->rowptr, &m->colind, &m->val, &m->blocks, &xm, &ym, ap};
        HISPI_TRY(set_args(ctx, m->t_main, 7, sz, v));
        return launch(ctx, be, m->t_main, (size_t)m->nblocks * BLK_NT, BLK_NT, 1);
    }
    if (m->variant == VARIANT_CHUNK) {
        HISPI_TRY(get_kernel(ctx, be, m, "csr_t_chunk", 0, &m->t_main));
        size_t sz[] = {ms, ms, ms, ms, ms, rs, ms};
        const void *v[] = {&m->part, &m->rowptr, &m->colind, &m->val, &xm, ap, &ym};
        HISPI_TRY(set_args(ctx, m->t_main, 7, sz, v));
        return launch(ctx, be, m->t_main, m->nparts, 1, 0);
    }
    HISPI_TRY(
        vector_pass(ctx, be, m, op, &m->t_main, nrows, NULL, m->vl, m->short_len, ap, bp, xm, ym));
    if (m->nmid)
        HISPI_TRY(vector_pass(ctx, be, m, op, &m->t_mid, m->nmid, m->midrows, 32, UINT64_MAX, ap,
                              bp, xm, ym));
    if (m->nlong) {
        HISPI_TRY(get_kernel(ctx, be, m, "csr_t_long", 1, &m->t_long));
        size_t sz2[] = {ms, ms, ms, ms, ms, rs, ms};
        const void *v2[] = {&m->longrows, &m->rowptr, &m->colind, &m->val, &xm, ap, &ym};
        HISPI_TRY(set_args(ctx, m->t_long, 7, sz2, v2));
        HISPI_TRY(launch(ctx, be, m->t_long, (size_t)m->nlong * m->ls, m->ls, 1));
    }
    return HISP_SUCCESS;
}
