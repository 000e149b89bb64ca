/* OpenCL backend: CSR SpMV, the launches of the three kernel families
 * (cl_csr.h; the matrix and its plan come from cl_csr_upload.c).
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
#include "cl_csr.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char hispi_kern_src_csr_spmv[];
extern const char hispi_kern_src_csr_block[];

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
    HISPI_TRY(hisp_cl_kernel(ctx, be, hispi_kern_src_csr_spmv, opts, name, k));
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

static unsigned floor_pow2(size_t v)
{
    unsigned p = 1;
    while ((size_t)p * 2 <= v && p < (1u << 30))
        p *= 2;
    return p;
}

/* Set kernel arguments from a list of (size, pointer) pairs. */
hisp_status hisp_cl_set_args(hisp_context ctx, cl_kernel k, int n, const size_t *sizes,
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
hisp_status hisp_cl_launch(hisp_context ctx, hisp_cl_be *be, cl_kernel k, size_t global,
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
    HISPI_TRY(hisp_cl_set_args(ctx, *k, n ? 11 : 10, sz, v));
    return hisp_cl_launch(ctx, be, *k, (size_t)count * vl, m->ls, 1);
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
        hisp_status s = hisp_cl_kernel(ctx, be, hispi_kern_src_csr_block, opts, name, k);
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
        s = hisp_cl_csr_make(ctx, be, &v, NULL, NULL, m->variant, out);
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

/* op = T through the transposed copy, made at the first op = T call;
 * when there is no room for it (device or host), m->tr_off: atomics
 * instead (SpMV and SpMM alike). */
static hisp_status want_transpose(hisp_context ctx, hisp_cl_be *be, hisp_cl_csr *m)
{
    if (m->t_mode != T_TRANSPOSE || m->tr || m->tr_off) return HISP_SUCCESS;
    hisp_status s = transpose_copy(ctx, be, m, &m->tr);
    if (s != HISP_ERR_OUT_OF_DEVICE_MEMORY && s != HISP_ERR_OUT_OF_HOST_MEMORY) return s;
    hispi_debug("opencl: no room for the transposed copy; op = T by atomics");
    hispi_clear_error(ctx);
    m->tr_off = 1;
    return HISP_SUCCESS;
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
        HISPI_TRY(hisp_cl_set_args(ctx, m->n_main, 9, sz, v));
        HISPI_TRY(hisp_cl_launch(ctx, be, m->n_main, (size_t)m->nblocks * BLK_NT, BLK_NT, 1));
    }
    if (m->nsplits) {
        HISPI_TRY(get_block_kernel(ctx, be, m, "csr_fixup", 0, &m->n_fix));
        cl_uint n = m->nsplits;
        size_t sz[] = {sizeof n, ms, ms, rs, rs, ms};
        const void *v[] = {&n, &m->splits, &m->partial, ap, bp, &ym};
        HISPI_TRY(hisp_cl_set_args(ctx, m->n_fix, 6, sz, v));
        HISPI_TRY(hisp_cl_launch(ctx, be, m->n_fix, n, 64, 0));
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

    if (op == HISP_OP_T) HISPI_TRY(want_transpose(ctx, be, m));
    if (op == HISP_OP_T && m->tr)
        return hisp_cl_csr_spmv(ctx, be, m->tr, HISP_OP_N, alpha, x, beta, y);

    if (op == HISP_OP_N) {
        if (m->nrows == 0) return HISP_SUCCESS;
        if (m->variant == VARIANT_BLOCK) return block_n(ctx, be, m, ap, bp, xm, ym);
        if (m->variant == VARIANT_CHUNK && m->nzrows && beta == 1 && isfinite(alpha)) {
            /* y's empty rows stay as they are: only the listed rows */
            HISPI_TRY(get_kernel(ctx, be, m, "csr_n_rows", 0, &m->n_rows));
            size_t sz[] = {ms, ms, ms, ms, ms, ms, rs, ms};
            const void *v[] = {&m->nzpart, &m->nzrows, &m->rowptr, &m->colind,
                               &m->val,    &xm,        ap,         &ym};
            HISPI_TRY(hisp_cl_set_args(ctx, m->n_rows, 8, sz, v));
            return hisp_cl_launch(ctx, be, m->n_rows, m->nzparts, 1, 0);
        }
        if (m->variant == VARIANT_CHUNK) {
            HISPI_TRY(get_kernel(ctx, be, m, "csr_n_chunk", 0, &m->n_main));
            size_t sz[] = {ms, ms, ms, ms, ms, rs, rs, ms};
            const void *v[] = {&m->part, &m->rowptr, &m->colind, &m->val, &xm, ap, bp, &ym};
            HISPI_TRY(hisp_cl_set_args(ctx, m->n_main, 8, sz, v));
            return hisp_cl_launch(ctx, be, m->n_main, m->nparts, 1, 0);
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
            HISPI_TRY(hisp_cl_set_args(ctx, m->n_long, 8, sz2, v2));
            HISPI_TRY(hisp_cl_launch(ctx, be, m->n_long, (size_t)m->nlong * m->ls, m->ls, 1));
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
        HISPI_TRY(hisp_cl_set_args(ctx, m->t_private, 8, sz, v));
        HISPI_TRY(hisp_cl_launch(ctx, be, m->t_private, m->ntparts, 1, 0));
        HISPI_TRY(get_kernel(ctx, be, m, "reduce_copies", 0, &m->t_reduce));
        cl_uint nc = m->ntparts;
        size_t sz2[] = {sizeof nc, sizeof ncols, ms, rs, ms};
        const void *v2[] = {&nc, &ncols, &m->work, bp, &ym};
        HISPI_TRY(hisp_cl_set_args(ctx, m->t_reduce, 5, sz2, v2));
        return hisp_cl_launch(ctx, be, m->t_reduce, (size_t)m->ncols, be->is_gpu ? 256 : 64, 0);
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
        HISPI_TRY(hisp_cl_set_args(ctx, m->scale, 3, sz, v));
        HISPI_TRY(hisp_cl_launch(ctx, be, m->scale, (size_t)m->ncols, be->is_gpu ? 256 : 64, 0));
    }
    if (m->nnz == 0) return HISP_SUCCESS;
    if (m->variant == VARIANT_BLOCK) {
        if (!m->nblocks) return HISP_SUCCESS;
        HISPI_TRY(get_block_kernel(ctx, be, m, "csr_t_block", 1, &m->t_main));
        size_t sz[] = {ms, ms, ms, ms, ms, ms, rs};
        const void *v[] = {&m->rowptr, &m->colind, &m->val, &m->blocks, &xm, &ym, ap};
        HISPI_TRY(hisp_cl_set_args(ctx, m->t_main, 7, sz, v));
        return hisp_cl_launch(ctx, be, m->t_main, (size_t)m->nblocks * BLK_NT, BLK_NT, 1);
    }
    if (m->variant == VARIANT_CHUNK) {
        HISPI_TRY(get_kernel(ctx, be, m, "csr_t_chunk", 0, &m->t_main));
        size_t sz[] = {ms, ms, ms, ms, ms, rs, ms};
        const void *v[] = {&m->part, &m->rowptr, &m->colind, &m->val, &xm, ap, &ym};
        HISPI_TRY(hisp_cl_set_args(ctx, m->t_main, 7, sz, v));
        return hisp_cl_launch(ctx, be, m->t_main, m->nparts, 1, 0);
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
        HISPI_TRY(hisp_cl_set_args(ctx, m->t_long, 7, sz2, v2));
        HISPI_TRY(hisp_cl_launch(ctx, be, m->t_long, (size_t)m->nlong * m->ls, m->ls, 1));
    }
    return HISP_SUCCESS;
}

/* Y = alpha op(A) X + beta Y over k columns (backend.h): op = N one
 * work-item per row (per chunk of rows on CPU devices); op = T on the
 * transposed copy where the SpMV makes one, else scale_y and a scatter with
 * atomics, as the SpMV's. */
hisp_status hisp_cl_csr_spmm(hisp_context ctx, void *vbe, void *dev, hisp_op op, double alpha,
                             const void *x, int xrow, double beta, void *y, int yrow, int64_t k)
{
    hisp_cl_be *be = vbe;
    hisp_cl_csr *m = dev;
    cl_mem xm = (cl_mem)x, ym = (cl_mem)y;
    int dbl = m->type == HISP_F64;
    float af = (float)alpha, bf = (float)beta;
    const void *ap = dbl ? (const void *)&alpha : (const void *)&af;
    const void *bp = dbl ? (const void *)&beta : (const void *)&bf;
    size_t rs = dbl ? sizeof(double) : sizeof(float), ms = sizeof(cl_mem), us = sizeof(cl_ulong),
           is = sizeof(int);
    cl_ulong mr = (cl_ulong)m->nrows, nc = (cl_ulong)m->ncols, kk = (cl_ulong)k;
    if (op == HISP_OP_T) HISPI_TRY(want_transpose(ctx, be, m));
    if (op == HISP_OP_T && m->tr)
        return hisp_cl_csr_spmm(ctx, be, m->tr, HISP_OP_N, alpha, x, xrow, beta, y, yrow, k);
    if (op == HISP_OP_N) {
        if (m->nrows == 0) return HISP_SUCCESS;
        int chunk = m->variant == VARIANT_CHUNK && m->part;
        cl_ulong count = chunk ? (cl_ulong)m->nparts : mr;
        cl_mem part = chunk ? m->part : m->rowptr; /* not read without chunk */
        HISPI_TRY(get_kernel(ctx, be, m, "csr_spmm_n", 0, &m->mm_n));
        size_t sz[] = {us, ms, is, us, us, us, ms, ms, ms, ms, is, rs, rs, ms, is};
        const void *v[] = {&count,  &part, &chunk, &mr, &nc, &kk, &m->rowptr, &m->colind,
                           &m->val, &xm,   &xrow,  ap,  bp,  &ym, &yrow};
        HISPI_TRY(hisp_cl_set_args(ctx, m->mm_n, 15, sz, v));
        return hisp_cl_launch(ctx, be, m->mm_n, (size_t)count, chunk ? 1 : 64, 0);
    }
    if (m->ncols == 0) return HISP_SUCCESS;
    if (dbl && !be->int64_atomics && m->nnz > 0)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                          "opencl: transposed f64 SpMM needs 64-bit atomics "
                          "(cl_khr_int64_base_atomics), which device \"%s\" lacks",
                          be->name);
    HISPI_TRY(get_kernel(ctx, be, m, "scale_y", 0, &m->scale));
    cl_ulong ny = nc * kk;
    size_t sz[] = {sizeof ny, rs, ms};
    const void *v[] = {&ny, bp, &ym};
    HISPI_TRY(hisp_cl_set_args(ctx, m->scale, 3, sz, v));
    HISPI_TRY(hisp_cl_launch(ctx, be, m->scale, (size_t)ny, be->is_gpu ? 256 : 64, 0));
    if (m->nnz == 0 || m->nrows == 0) return HISP_SUCCESS;
    HISPI_TRY(get_kernel(ctx, be, m, "csr_spmm_t", 0, &m->mm_t));
    size_t sz2[] = {us, us, us, ms, ms, ms, ms, is, rs, ms, is};
    const void *v2[] = {&mr, &nc, &kk, &m->rowptr, &m->colind, &m->val, &xm, &xrow, ap, &ym, &yrow};
    HISPI_TRY(hisp_cl_set_args(ctx, m->mm_t, 11, sz2, v2));
    return hisp_cl_launch(ctx, be, m->mm_t, (size_t)m->nrows, be->is_gpu ? 64 : 1, 0);
}
