/* OpenCL backend: CSR upload and analysis. The kernel family is chosen from
 * the device (cl_csr.h) and the rows are planned for it on the host: the
 * block family's work-groups (plan_blocks), the chunk family's parts of
 * equal cost (make_parts), the vector family's lanes per row and its
 * medium and long rows (row_list); MSREP p*-opt makes a part's local
 * pointers on the device (local_ptr_on_device). */
#include "cl_csr.h"

#include <stdlib.h>

extern const char hispi_kern_src_msrep[];

void hisp_cl_csr_free(void *be, void *dev)
{
    (void)be;
    hisp_cl_csr *m = dev;
    if (!m) return;
    cl_kernel ks[] = {m->scale,  m->n_main, m->n_mid,     m->n_long,   m->t_main,
                      m->t_mid,  m->t_long, m->t_private, m->t_reduce, m->n_fix,
                      m->n_rows, m->mm_n,   m->mm_t};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
        if (ks[i]) clReleaseKernel(ks[i]);
    cl_mem bs[] = {m->rowptr, m->colind, m->val,    m->part,    m->midrows, m->longrows, m->tpart,
                   m->work,   m->blocks, m->splits, m->partial, m->nzrows,  m->nzpart};
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

/* Chunk family: when at most half the rows have entries, the list of those
 * rows and parts of about equal cost (nonzeros + listed rows) over it, for
 * y += alpha*A x touching only them (csr_n_rows). */
static hisp_status nonempty_rows(hisp_context ctx, hisp_cl_be *be, const hispi_csr_view *A,
                                 const hispi_csr_opts *o, uint64_t want, hisp_cl_csr *m)
{
    int64_t n = 0;
    for (int64_t i = 0; i < A->nrows; i++)
        n += lptr_at(A, o, i + 1) > lptr_at(A, o, i);
    if (n == 0 || 2 * n > A->nrows) return HISP_SUCCESS;
    if (want > (uint64_t)n) want = (uint64_t)n;
    uint32_t *rows = NULL, *part = NULL;
    hisp_status s = hispi_alloc(ctx, (size_t)n, sizeof *rows, (void **)&rows);
    if (!s) s = hispi_alloc(ctx, (size_t)want + 1, sizeof *part, (void **)&part);
    if (s) {
        free(rows);
        return s;
    }
    int64_t k = 0;
    for (int64_t i = 0; i < A->nrows; i++)
        if (lptr_at(A, o, i + 1) > lptr_at(A, o, i)) rows[k++] = (uint32_t)i;
    /* parts: the cost of list entries [0, j) is nnz before row rows[j], plus j */
    double total = (double)A->nnz + (double)n;
    uint32_t np = 0;
    part[0] = 0;
    int64_t j = 0;
    for (uint64_t q = 1; q <= want && j < n; q++) {
        double goal = total * (double)q / (double)want;
        while (j < n && (double)lptr_at(A, o, rows[j]) + (double)j < goal)
            j++;
        if (q == want) j = n;
        if (j > (int64_t)part[np]) part[++np] = (uint32_t)j;
    }
    s = upload(ctx, be, &m->nzrows, rows, (size_t)n * sizeof *rows);
    if (!s) s = upload(ctx, be, &m->nzpart, part, ((size_t)np + 1) * sizeof *part);
    if (!s) {
        m->nnzrows = (uint32_t)n;
        m->nzparts = np;
    }
    free(rows);
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
        s = hisp_cl_kernel(ctx, be, hispi_kern_src_msrep,
                           m->wide_ptr
                               ? "-cl-std=CL1.2 -D VALUE_T=float -D IS_DOUBLE=0 -D PTR_T=ulong"
                               : "-cl-std=CL1.2 -D VALUE_T=float -D IS_DOUBLE=0 -D PTR_T=uint",
                           "msrep_local_ptr", &k);
    cl_ulong n = np1;
    cl_long base = o->ptr_base, nnz = A->nnz;
    size_t ms = sizeof(cl_mem);
    size_t sz[] = {ms, sizeof n, sizeof base, sizeof nnz, ms};
    const void *v[] = {&g, &n, &base, &nnz, &m->rowptr};
    if (!s) s = hisp_cl_set_args(ctx, k, 5, sz, v);
    if (!s) s = hisp_cl_launch(ctx, be, k, np1, 64, 0);
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
hisp_status hisp_cl_csr_make(hisp_context ctx, hisp_cl_be *be, const hispi_csr_view *A,
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
     * too it beats the private-copy scatter on the suite's matrices;
     * BENCHMARKS: Transposed SpMV); the vector family keeps its atomic
     * scatter */
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
        if (!s) s = nonempty_rows(ctx, be, A, o, (uint64_t)be->compute_units * 8, m);
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
                "long %u parts %u blocks %u splits %u nonempty rows %u",
                (long long)A->nrows, (long long)A->ncols, (long long)A->nnz, mean,
                (long long)maxlen,
                m->variant == VARIANT_BLOCK    ? "block"
                : m->variant == VARIANT_VECTOR ? "vector"
                                               : "chunk",
                m->vl, m->ls, m->nmid, m->nlong, m->nparts, m->nblocks, m->nsplits, m->nnzrows);
    *out = m;
    return HISP_SUCCESS;
}

hisp_status hisp_cl_csr_upload(hisp_context ctx, void *vbe, const hispi_csr_view *A, void **dev)
{
    hisp_cl_csr *m = NULL;
    *dev = NULL;
    HISPI_TRY(hisp_cl_csr_make(ctx, vbe, A, NULL, NULL, -1, &m));
    *dev = m;
    return HISP_SUCCESS;
}

/* The caller's arrays, read in place (hisp_matrix_wrap_csr_device). */
hisp_status hisp_cl_csr_wrap(hisp_context ctx, void *vbe, const hispi_csr_view *A,
                             const hispi_csr_ext *ext, void **dev)
{
    hisp_cl_csr *m = NULL;
    *dev = NULL;
    HISPI_TRY(hisp_cl_csr_make(ctx, vbe, A, NULL, ext, -1, &m));
    *dev = m;
    return HISP_SUCCESS;
}

hisp_status hisp_cl_csr_arrays(hisp_context ctx, void *vbe, void *dev, hispi_csr_ext *ext)
{
    (void)ctx, (void)vbe;
    const hisp_cl_csr *m = dev;
    *ext = (hispi_csr_ext){m->rowptr, m->colind, m->val, m->wide_ptr, m->idx64,
                           m->base,   false,     false,  false};
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
    HISPI_TRY(hisp_cl_csr_make(ctx, vbe, A, o, NULL, -1, &m));
    *dev = m;
    return HISP_SUCCESS;
}
