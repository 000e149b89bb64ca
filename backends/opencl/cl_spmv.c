/* OpenCL backend: CSR upload, analysis and SpMV dispatch.
 *
 * Two kernel families (kernels_cl/csr_spmv.cl):
 *  - "chunk" (CPU devices, PoCL): one work-item per part, each part a
 *    contiguous run of rows with about equal cost (nonzeros + rows), local
 *    size 1 so PoCL runs a plain CSR loop per part, several parts per core;
 *  - "vector" (GPUs): VL = 2..32 lanes per row chosen from the mean row
 *    length, and rows longer than long_len done by a whole work-group.
 * $HISP_CL_VARIANT=chunk|vector overrides the choice at upload (the tests
 * run both families on PoCL).
 * op = T: scale_y first (y = beta*y, or 0 without reading y), then a
 * scatter with compare-exchange atomics. */
#include "cl_backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char hispi_cl_src_csr_spmv[];

enum { VARIANT_CHUNK = 0, VARIANT_VECTOR = 1 };

typedef struct {
    hisp_type type;
    int64_t nrows, ncols, nnz;
    int wide_ptr; /* 64-bit row pointers */
    int variant;
    unsigned vl, ls;
    uint64_t long_len;
    uint32_t nparts, nlong;
    cl_mem rowptr, colind, val;
    cl_mem part;     /* chunk: nparts + 1 row boundaries */
    cl_mem longrows; /* vector: rows longer than long_len */
    /* kernels, made on first use */
    cl_kernel scale, n_main, n_long, t_main, t_long;
} hisp_cl_csr;

void hisp_cl_csr_free(void *be, void *dev)
{
    (void)be;
    hisp_cl_csr *m = dev;
    if (!m) return;
    cl_kernel ks[] = {m->scale, m->n_main, m->n_long, m->t_main, m->t_long};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
        if (ks[i]) clReleaseKernel(ks[i]);
    cl_mem bs[] = {m->rowptr, m->colind, m->val, m->part, m->longrows};
    for (size_t i = 0; i < sizeof bs / sizeof bs[0]; i++)
        if (bs[i]) clReleaseMemObject(bs[i]);
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

static hisp_status make_parts(hisp_context ctx, hisp_cl_be *be, const hispi_csr_view *A,
                              hisp_cl_csr *m)
{
    /* several parts per compute unit: balance without much per-group cost */
    uint64_t want = (uint64_t)be->compute_units * 16;
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
        while (i < A->nrows && (double)A->rowptr[i] + (double)i < goal)
            i++;
        if (p == want) i = A->nrows;
        if (i > (int64_t)part[np]) part[++np] = (uint32_t)i;
    }
    if (np == 0) part[++np] = (uint32_t)A->nrows; /* nrows == 0: one empty part */
    m->nparts = np;
    hisp_status s = upload(ctx, be, &m->part, part, ((size_t)np + 1) * sizeof *part);
    free(part);
    return s;
}

static hisp_status make_long_rows(hisp_context ctx, hisp_cl_be *be, const hispi_csr_view *A,
                                  hisp_cl_csr *m)
{
    uint32_t n = 0;
    for (int64_t i = 0; i < A->nrows; i++)
        n += (uint64_t)(A->rowptr[i + 1] - A->rowptr[i]) > m->long_len;
    m->nlong = n;
    if (n == 0) return HISP_SUCCESS;
    uint32_t *rows = NULL;
    HISPI_TRY(hispi_alloc(ctx, n, sizeof *rows, (void **)&rows));
    n = 0;
    for (int64_t i = 0; i < A->nrows; i++)
        if ((uint64_t)(A->rowptr[i + 1] - A->rowptr[i]) > m->long_len) rows[n++] = (uint32_t)i;
    hisp_status s = upload(ctx, be, &m->longrows, rows, (size_t)n * sizeof *rows);
    free(rows);
    return s;
}

hisp_status hisp_cl_csr_upload(hisp_context ctx, void *vbe, const hispi_csr_view *A, void **dev)
{
    hisp_cl_be *be = vbe;
    *dev = NULL;
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
    m->wide_ptr = A->nnz >= ((int64_t)1 << 31);

    /* analysis: mean and longest row */
    int64_t maxlen = 0;
    for (int64_t i = 0; i < A->nrows; i++) {
        int64_t len = A->rowptr[i + 1] - A->rowptr[i];
        if (len > maxlen) maxlen = len;
    }
    double mean = A->nrows ? (double)A->nnz / (double)A->nrows : 0;
    m->variant = be->is_gpu ? VARIANT_VECTOR : VARIANT_CHUNK;
    const char *force = getenv("HISP_CL_VARIANT");
    if (force && strcmp(force, "chunk") == 0) m->variant = VARIANT_CHUNK;
    if (force && strcmp(force, "vector") == 0) m->variant = VARIANT_VECTOR;
    if (m->variant == VARIANT_VECTOR) {
        m->ls = be->vector_ls;
        m->vl = lanes_for(mean);
        if (m->vl > m->ls) m->vl = m->ls;
        /* a lane does at most ~64 iterations; longer rows get a work-group */
        m->long_len = (uint64_t)m->vl * 64;
        if (m->long_len < 4u * m->ls) m->long_len = 4u * m->ls;
    } else {
        m->ls = 1;
        m->vl = 1;
    }
    hispi_debug("opencl: csr %lldx%lld nnz %lld mean %.1f max %lld -> %s vl %u ls %u",
                (long long)A->nrows, (long long)A->ncols, (long long)A->nnz, mean,
                (long long)maxlen, m->variant == VARIANT_VECTOR ? "vector" : "chunk", m->vl, m->ls);

    hisp_status s = HISP_SUCCESS;
    size_t np1 = (size_t)A->nrows + 1;
    if (m->wide_ptr) {
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
    if (!s) s = upload(ctx, be, &m->colind, A->colind, (size_t)A->nnz * sizeof(int32_t));
    if (!s) s = upload(ctx, be, &m->val, A->val, (size_t)A->nnz * hisp_type_size(A->type));
    if (!s)
        s = m->variant == VARIANT_CHUNK ? make_parts(ctx, be, A, m) : make_long_rows(ctx, be, A, m);
    if (s) {
        hisp_cl_csr_free(be, m);
        return s;
    }
    *dev = m;
    return HISP_SUCCESS;
}

static hisp_status get_kernel(hisp_context ctx, hisp_cl_be *be, hisp_cl_csr *m, const char *name,
                              cl_kernel *k)
{
    if (*k) return HISP_SUCCESS;
    char opts[256];
    snprintf(opts, sizeof opts,
             "-cl-std=CL1.2 -D VALUE_T=%s -D IS_DOUBLE=%d -D PTR_T=%s -D LS=%u -D ATOM64=%d",
             m->type == HISP_F64 ? "double" : "float", m->type == HISP_F64,
             m->wide_ptr ? "ulong" : "uint", be->vector_ls, be->int64_atomics);
    HISPI_TRY(hisp_cl_kernel(ctx, be, hispi_cl_src_csr_spmv, opts, name, k));
    size_t wg = 0;
    cl_int e =
        clGetKernelWorkGroupInfo(*k, be->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL);
    if (e != CL_SUCCESS) return hisp_cl_fail(ctx, e, "clGetKernelWorkGroupInfo");
    if (wg < m->ls && m->ls > 1)
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

static hisp_status launch(hisp_context ctx, hisp_cl_be *be, cl_kernel k, size_t global,
                          size_t local)
{
    if (global == 0) return HISP_SUCCESS; /* nothing to do: no zero-size launch */
    global = (global + local - 1) / local * local;
    cl_int e = clEnqueueNDRangeKernel(be->queue, k, 1, NULL, &global, &local, 0, NULL, NULL);
    return e == CL_SUCCESS ? HISP_SUCCESS : hisp_cl_fail(ctx, e, "clEnqueueNDRangeKernel");
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
    cl_ulong long_len = m->long_len;
    cl_uint vl = m->vl;

    if (op == HISP_OP_N) {
        if (m->nrows == 0) return HISP_SUCCESS;
        if (m->variant == VARIANT_CHUNK) {
            HISPI_TRY(get_kernel(ctx, be, m, "csr_n_chunk", &m->n_main));
            size_t sz[] = {ms, ms, ms, ms, ms, rs, rs, ms};
            const void *v[] = {&m->part, &m->rowptr, &m->colind, &m->val, &xm, ap, bp, &ym};
            HISPI_TRY(set_args(ctx, m->n_main, 8, sz, v));
            return launch(ctx, be, m->n_main, m->nparts, 1);
        }
        HISPI_TRY(get_kernel(ctx, be, m, "csr_n_vector", &m->n_main));
        size_t sz[] = {sizeof nrows, sizeof vl, sizeof long_len, ms, ms, ms, ms, rs, rs, ms};
        const void *v[] = {&nrows,  &vl, &long_len, &m->rowptr, &m->colind,
                           &m->val, &xm, ap,        bp,         &ym};
        HISPI_TRY(set_args(ctx, m->n_main, 10, sz, v));
        HISPI_TRY(launch(ctx, be, m->n_main, (size_t)m->nrows * m->vl, m->ls));
        if (m->nlong) {
            HISPI_TRY(get_kernel(ctx, be, m, "csr_n_long", &m->n_long));
            size_t sz2[] = {ms, ms, ms, ms, ms, rs, rs, ms};
            const void *v2[] = {&m->longrows, &m->rowptr, &m->colind, &m->val, &xm, ap, bp, &ym};
            HISPI_TRY(set_args(ctx, m->n_long, 8, sz2, v2));
            HISPI_TRY(launch(ctx, be, m->n_long, (size_t)m->nlong * m->ls, m->ls));
        }
        return HISP_SUCCESS;
    }

    if (dbl && !be->int64_atomics)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                          "opencl: transposed f64 SpMV needs 64-bit atomics "
                          "(cl_khr_int64_base_atomics), which device \"%s\" lacks",
                          be->name);
    if (m->ncols == 0) return HISP_SUCCESS;
    HISPI_TRY(get_kernel(ctx, be, m, "scale_y", &m->scale));
    cl_ulong ncols = (cl_ulong)m->ncols;
    {
        size_t sz[] = {sizeof ncols, rs, ms};
        const void *v[] = {&ncols, bp, &ym};
        HISPI_TRY(set_args(ctx, m->scale, 3, sz, v));
        size_t local = be->is_gpu ? 256 : 64;
        if (local > be->max_wg) local = floor_pow2(be->max_wg);
        HISPI_TRY(launch(ctx, be, m->scale, (size_t)m->ncols, local));
    }
    if (m->nnz == 0) return HISP_SUCCESS;
    if (m->variant == VARIANT_CHUNK) {
        HISPI_TRY(get_kernel(ctx, be, m, "csr_t_chunk", &m->t_main));
        size_t sz[] = {ms, ms, ms, ms, ms, rs, ms};
        const void *v[] = {&m->part, &m->rowptr, &m->colind, &m->val, &xm, ap, &ym};
        HISPI_TRY(set_args(ctx, m->t_main, 7, sz, v));
        return launch(ctx, be, m->t_main, m->nparts, 1);
    }
    HISPI_TRY(get_kernel(ctx, be, m, "csr_t_vector", &m->t_main));
    size_t sz[] = {sizeof nrows, sizeof vl, sizeof long_len, ms, ms, ms, ms, rs, ms};
    const void *v[] = {&nrows, &vl, &long_len, &m->rowptr, &m->colind, &m->val, &xm, ap, &ym};
    HISPI_TRY(set_args(ctx, m->t_main, 9, sz, v));
    HISPI_TRY(launch(ctx, be, m->t_main, (size_t)m->nrows * m->vl, m->ls));
    if (m->nlong) {
        HISPI_TRY(get_kernel(ctx, be, m, "csr_t_long", &m->t_long));
        size_t sz2[] = {ms, ms, ms, ms, ms, rs, ms};
        const void *v2[] = {&m->longrows, &m->rowptr, &m->colind, &m->val, &xm, ap, &ym};
        HISPI_TRY(set_args(ctx, m->t_long, 7, sz2, v2));
        HISPI_TRY(launch(ctx, be, m->t_long, (size_t)m->nlong * m->ls, m->ls));
    }
    return HISP_SUCCESS;
}
