/* Memory the caller already has: CSR arrays of every index shape (host,
 * copied; device, read in place), wrapped and exported vectors, the
 * caller's OpenCL queue and CUDA stream. Every SpMV is compared with the
 * reference backend on fresh random inputs. */
#include "testutil.h"
#include "hispi.h"

#include <unistd.h>

#ifdef HISP_HAVE_OPENCL
#include <CL/cl.h>
#endif
#ifdef HISP_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A random CSR matrix's arrays in one index shape (ptr64, idx64, base). */
typedef struct {
    hisp_type type;
    int64_t nrows, ncols, nnz;
    void *rowptr, *colind, *val;
    size_t pbytes, ibytes, vbytes;
    int ptr64, idx64, base;
    hisp_matrix ref; /* the same matrix on the reference context */
} shaped;

static void shaped_make(hisp_context rctx, hisp_type t, int64_t nr, int64_t nc, uint64_t *rng,
                        int ptr64, int idx64, int base, shaped *m)
{
    memset(m, 0, sizeof *m);
    m->ref = test_random_matrix(rctx, t, nr, nc, 0.05, rng);
    CK_OK(rctx, hisp_matrix_convert(m->ref, HISP_FORMAT_CSR));
    const int64_t *rp;
    const int32_t *ci;
    const void *v;
    CK_OK(rctx, hisp_matrix_host_arrays(m->ref, &rp, NULL, &ci, &v));
    m->type = t;
    m->nrows = nr;
    m->ncols = nc;
    m->nnz = rp[nr];
    m->ptr64 = ptr64;
    m->idx64 = idx64;
    m->base = base;
    m->pbytes = (size_t)(nr + 1) * (ptr64 ? 8 : 4);
    m->ibytes = (size_t)(m->nnz ? m->nnz : 1) * (idx64 ? 8 : 4);
    m->vbytes = (size_t)(m->nnz ? m->nnz : 1) * hisp_type_size(t);
    m->rowptr = malloc(m->pbytes);
    m->colind = calloc(1, m->ibytes);
    m->val = calloc(1, m->vbytes);
    ck_assert(m->rowptr && m->colind && m->val);
    for (int64_t i = 0; i <= nr; i++)
        if (ptr64)
            ((int64_t *)m->rowptr)[i] = rp[i] + base;
        else
            ((int32_t *)m->rowptr)[i] = (int32_t)(rp[i] + base);
    for (int64_t k = 0; k < m->nnz; k++)
        if (idx64)
            ((int64_t *)m->colind)[k] = ci[k] + base;
        else
            ((int32_t *)m->colind)[k] = ci[k] + base;
    memcpy(m->val, v, (size_t)m->nnz * hisp_type_size(t));
}

static void shaped_free(shaped *m)
{
    free(m->rowptr);
    free(m->colind);
    free(m->val);
    hisp_matrix_destroy(&m->ref);
}

static void *random_array(hisp_type t, int64_t n, uint64_t *rng)
{
    void *a = malloc((size_t)(n ? n : 1) * hisp_type_size(t));
    ck_assert(a);
    for (int64_t i = 0; i < n; i++)
        if (t == HISP_F32)
            ((float *)a)[i] = (float)test_uniform(rng);
        else
            ((double *)a)[i] = test_uniform(rng);
    return a;
}

/* y_ref = alpha*op(A)*x + beta*y0 on the reference context. */
static void *reference_spmv(hisp_context rctx, hisp_matrix A, hisp_op op, const void *x,
                            const void *y0, int64_t nx, int64_t ny, hisp_type t)
{
    hisp_vector xv, yv;
    CK_OK(rctx, hisp_vector_create(rctx, t, nx, &xv));
    CK_OK(rctx, hisp_vector_create(rctx, t, ny, &yv));
    CK_OK(rctx, hisp_vector_write(xv, x));
    CK_OK(rctx, hisp_vector_write(yv, y0));
    double a = 1.25, b = -0.5;
    float af = 1.25f, bf = -0.5f;
    const void *ap = t == HISP_F64 ? (const void *)&a : (const void *)&af;
    const void *bp = t == HISP_F64 ? (const void *)&b : (const void *)&bf;
    CK_OK(rctx, hisp_spmv(rctx, op, ap, A, xv, bp, yv));
    void *out = malloc((size_t)(ny ? ny : 1) * hisp_type_size(t));
    CK_OK(rctx, hisp_vector_read(yv, out));
    hisp_vector_destroy(&xv);
    hisp_vector_destroy(&yv);
    return out;
}

static double tol(hisp_type t)
{
    return t == HISP_F32 ? 1e-5 : 1e-12;
}

/* Host arrays of every shape, copied: the same matrix as hisp's own CSR. */
START_TEST(test_import_host)
{
    hisp_context ctx;
    ck_assert_int_eq(hisp_context_create(&ctx), 0);
    uint64_t rng = test_seed();
    for (int shape = 0; shape < 8; shape++) {
        shaped m;
        shaped_make(ctx, shape & 4 ? HISP_F64 : HISP_F32, 57, 43, &rng, shape & 1, shape >> 1 & 1,
                    shape & 4 ? 1 : 0, &m);
        hisp_matrix B = NULL;
        CK_OK(ctx, hisp_matrix_import_csr(ctx, m.type, m.nrows, m.ncols, m.nnz, m.rowptr, m.colind,
                                          m.val, m.ptr64, m.idx64, m.base, &B));
        const int64_t *p0, *p1;
        const int32_t *c0, *c1;
        const void *v0, *v1;
        CK_OK(ctx, hisp_matrix_host_arrays(m.ref, &p0, NULL, &c0, &v0));
        CK_OK(ctx, hisp_matrix_host_arrays(B, &p1, NULL, &c1, &v1));
        ck_assert_mem_eq(p0, p1, (size_t)(m.nrows + 1) * 8);
        ck_assert_mem_eq(c0, c1, (size_t)m.nnz * 4);
        ck_assert_mem_eq(v0, v1, (size_t)m.nnz * hisp_type_size(m.type));
        hisp_matrix_destroy(&B);
        shaped_free(&m);
    }
    /* scipy's shape: int32 indptr and indices, 1-based here; errors */
    int32_t rp[4] = {1, 3, 3, 4}, ci[3] = {1, 3, 2};
    float v[3] = {1.5f, -2.0f, 0.25f};
    hisp_matrix B = NULL;
    CK_OK(ctx, hisp_matrix_import_csr(ctx, HISP_F32, 3, 3, 3, rp, ci, v, HISP_INDEX_32,
                                      HISP_INDEX_32, 1, &B));
    hisp_matrix_destroy(&B);
    ck_assert_int_eq(hisp_matrix_import_csr(ctx, HISP_F32, 3, 3, 3, rp, ci, v, HISP_INDEX_32,
                                            HISP_INDEX_32, 0, &B),
                     HISP_ERR_INVALID_ARGUMENT); /* rowptr[0] = 1 with base 0 */
    ck_assert_int_eq(hisp_matrix_import_csr(ctx, HISP_F32, 3, 3, 4, rp, ci, v, HISP_INDEX_32,
                                            HISP_INDEX_32, 1, &B),
                     HISP_ERR_INVALID_ARGUMENT); /* nnz does not match */
    ck_assert_int_eq(hisp_matrix_import_csr(ctx, HISP_F32, 3, 2, 3, rp, ci, v, HISP_INDEX_32,
                                            HISP_INDEX_32, 1, &B),
                     HISP_ERR_INVALID_ARGUMENT); /* column 3 of 2 */
    ck_assert_int_eq(hisp_matrix_import_csr(ctx, HISP_F32, 3, 3, 3, rp, ci, v, HISP_INDEX_32,
                                            HISP_INDEX_32, 2, &B),
                     HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_matrix_import_csr(ctx, HISP_F32, 3, 3, 3, NULL, ci, v, HISP_INDEX_32,
                                            HISP_INDEX_32, 1, &B),
                     HISP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(B);
    hisp_context_destroy(&ctx);
}
END_TEST

/* The reference backend wraps host pointers: vectors written through, the
 * matrix read into hisp's storage at its first use. */
START_TEST(test_wrap_reference)
{
    hisp_context ctx;
    ck_assert_int_eq(hisp_context_create(&ctx), 0);
    ck_assert_int_eq(hisp_context_set_stream(ctx, (void *)&ctx), HISP_ERR_UNSUPPORTED);
    CK_OK(ctx, hisp_context_set_stream(ctx, NULL));
    void *st = &ctx;
    CK_OK(ctx, hisp_context_get_stream(ctx, &st));
    ck_assert_ptr_null(st);
    uint64_t rng = test_seed();
    for (int shape = 0; shape < 8; shape++) {
        hisp_type t = shape & 1 ? HISP_F64 : HISP_F32;
        shaped m;
        shaped_make(ctx, t, 61, 45, &rng, shape >> 1 & 1, shape >> 2 & 1, shape & 1, &m);
        for (int op = 0; op < 2; op++) {
            int64_t nx = op ? m.nrows : m.ncols, ny = op ? m.ncols : m.nrows;
            void *x = random_array(t, nx, &rng), *y = random_array(t, ny, &rng);
            void *want = reference_spmv(ctx, m.ref, (hisp_op)op, x, y, nx, ny, t);
            hisp_matrix A;
            hisp_vector xv, yv;
            CK_OK(ctx, hisp_matrix_wrap_csr_device(ctx, t, m.nrows, m.ncols, m.nnz, m.rowptr,
                                                   m.colind, m.val, m.ptr64, m.idx64, m.base, &A));
            CK_OK(ctx, hisp_vector_wrap_device(ctx, t, nx, x, &xv));
            CK_OK(ctx, hisp_vector_wrap_device(ctx, t, ny, y, &yv));
            double a = 1.25, b = -0.5;
            float af = 1.25f, bf = -0.5f;
            CK_OK(ctx, hisp_spmv(ctx, (hisp_op)op, t == HISP_F64 ? (void *)&a : (void *)&af, A, xv,
                                 t == HISP_F64 ? (void *)&b : (void *)&bf, yv));
            ck_assert_double_le(test_rel_error(t, y, want, ny), tol(t)); /* in place */
            hisp_matrix_destroy(&A);
            hisp_vector_destroy(&xv);
            hisp_vector_destroy(&yv);
            free(x);
            free(y);
            free(want);
        }
        shaped_free(&m);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

#ifdef HISP_HAVE_OPENCL
static cl_mem cl_buffer(cl_context c, const void *src, size_t bytes)
{
    cl_int e;
    cl_mem m = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, (void *)src, &e);
    ck_assert_int_eq(e, CL_SUCCESS);
    return m;
}

/* A cl_context and in-order queue of the caller, on hisp's OpenCL device
 * (found by name among the platforms' devices); profiling optional. */
static void cl_own(hisp_context hctx, int profiling, cl_context *c, cl_command_queue *q,
                   cl_device_id *dev)
{
    hisp_device_info info;
    CK_OK(hctx, hisp_context_get_device(hctx, &info));
    cl_platform_id plats[16];
    cl_uint np = 0;
    ck_assert_int_eq(clGetPlatformIDs(16, plats, &np), CL_SUCCESS);
    *dev = NULL;
    for (cl_uint p = 0; p < np && !*dev; p++) {
        cl_device_id ds[16];
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 16, ds, &nd) != CL_SUCCESS) continue;
        for (cl_uint i = 0; i < nd && !*dev; i++) {
            char name[256] = "";
            clGetDeviceInfo(ds[i], CL_DEVICE_NAME, sizeof name, name, NULL);
            if (strcmp(name, info.name) == 0) *dev = ds[i];
        }
    }
    ck_assert_ptr_nonnull(*dev);
    cl_int e;
    *c = clCreateContext(NULL, 1, dev, NULL, NULL, &e);
    ck_assert_int_eq(e, CL_SUCCESS);
    *q = clCreateCommandQueue(*c, *dev, profiling ? CL_QUEUE_PROFILING_ENABLE : 0, &e);
    ck_assert_int_eq(e, CL_SUCCESS);
}

/* An OpenCL target's context running on a queue of the caller's own (in a
 * cl_context of the caller's), beside a context on the default backend for
 * the reference results. */
typedef struct {
    hisp_context ctx, rctx;
    cl_context c;
    cl_command_queue q;
    cl_device_id dev;
} cl_fx;

/* false (recorded as skipped) where there is no OpenCL device */
static bool cl_fx_make(cl_fx *f, int profiling)
{
    int ti = test_first_target(HISP_BACKEND_OPENCL);
    if (ti < 0) {
        test_skip("interop opencl: no OpenCL device");
        return false;
    }
    f->ctx = test_context(ti);
    f->rctx = test_default_context();
    cl_own(f->ctx, profiling, &f->c, &f->q, &f->dev);
    CK_OK(f->ctx, hisp_context_set_stream(f->ctx, f->q));
    return true;
}

static void cl_fx_free(cl_fx *f)
{
    hisp_context_destroy(&f->ctx);
    clReleaseCommandQueue(f->q);
    clReleaseContext(f->c);
    hisp_context_destroy(&f->rctx);
}

/* The caller's queue and cl_mem arrays of every index shape and base, every
 * kernel family: SpMV in place, the result read by the caller and by hisp;
 * only the row pointers cross to the host. */
/* m's reference count once the queue's finished commands have let go of it:
 * an OpenCL runtime may drop the references its commands hold a little
 * after they complete (PoCL does it in its worker threads), so the count is
 * read again for up to 2 s until it is 1. */
static cl_uint mem_refs_settled(cl_command_queue q, cl_mem m)
{
    cl_uint refs = 0;
    clFinish(q);
    for (int i = 0; i < 2000; i++) {
        clGetMemObjectInfo(m, CL_MEM_REFERENCE_COUNT, sizeof refs, &refs, NULL);
        if (refs <= 1) break;
        usleep(1000);
    }
    return refs;
}

START_TEST(test_opencl_wrap)
{
    cl_fx f;
    if (!cl_fx_make(&f, 0)) return; /* no profiling: marks time on the host */
    hisp_context ctx = f.ctx, rctx = f.rctx;
    void *got = NULL;
    CK_OK(ctx, hisp_context_get_stream(ctx, &got));
    ck_assert_ptr_eq(got, f.q);
    uint64_t rng = test_seed();
    for (int shape = 0; shape < 16; shape++) {
        hisp_type t = shape & 8 ? HISP_F64 : HISP_F32;
        hispi_spmv_hook.cl_variant = 1 + shape % 3; /* chunk, vector, block */
        shaped m;
        shaped_make(rctx, t, 70 + shape, 53, &rng, shape & 1, shape >> 1 & 1, shape >> 2 & 1, &m);
        cl_mem rp = cl_buffer(f.c, m.rowptr, m.pbytes), ci = cl_buffer(f.c, m.colind, m.ibytes),
               va = cl_buffer(f.c, m.val, m.vbytes);
        hisp_matrix A;
        CK_OK(ctx, hisp_matrix_wrap_csr_device(ctx, t, m.nrows, m.ncols, m.nnz, rp, ci, va, m.ptr64,
                                               m.idx64, m.base, &A));
        for (int op = 0; op < 2; op++) {
            int64_t nx = op ? m.nrows : m.ncols, ny = op ? m.ncols : m.nrows;
            size_t es = hisp_type_size(t);
            void *x = random_array(t, nx, &rng), *y = random_array(t, ny, &rng);
            void *want = reference_spmv(rctx, m.ref, (hisp_op)op, x, y, nx, ny, t);
            cl_mem xm = cl_buffer(f.c, x, (size_t)nx * es), ym = cl_buffer(f.c, y, (size_t)ny * es);
            hisp_vector xv, yv;
            CK_OK(ctx, hisp_vector_wrap_device(ctx, t, nx, xm, &xv));
            CK_OK(ctx, hisp_vector_wrap_device(ctx, t, ny, ym, &yv));
            CK_OK(ctx, hisp_context_reset_transfers(ctx));
            double a = 1.25, b = -0.5;
            float af = 1.25f, bf = -0.5f;
            CK_OK(ctx, hisp_spmv(ctx, (hisp_op)op, t == HISP_F64 ? (void *)&a : (void *)&af, A, xv,
                                 t == HISP_F64 ? (void *)&b : (void *)&bf, yv));
            hisp_transfer_stats st;
            CK_OK(ctx, hisp_context_transfers(ctx, &st));
            /* zero copy: the row pointers once, at the first SpMV; no entry
             * uploaded (the plan is far smaller than the matrix) */
            ck_assert_uint_eq(st.d2h_bytes, op == 0 ? m.pbytes : 0);
            ck_assert_uint_lt(st.h2d_bytes, (uint64_t)m.nnz * (es + 4) + 64);
            void *out = malloc((size_t)ny * es);
            ck_assert_int_eq(
                clEnqueueReadBuffer(f.q, ym, CL_TRUE, 0, (size_t)ny * es, out, 0, NULL, NULL),
                CL_SUCCESS);
            ck_assert_msg(test_rel_error(t, out, want, ny) <= tol(t), "shape %d op %d: %g", shape,
                          op, test_rel_error(t, out, want, ny));
            memset(out, 0, (size_t)ny * es);
            CK_OK(ctx, hisp_vector_read(yv, out));
            ck_assert_double_le(test_rel_error(t, out, want, ny), tol(t));
            hisp_vector_destroy(&xv);
            hisp_vector_destroy(&yv);
            ck_assert_uint_eq(mem_refs_settled(f.q, ym), 1); /* hisp let it go */
            clReleaseMemObject(xm);
            clReleaseMemObject(ym);
            free(x);
            free(y);
            free(out);
            free(want);
        }
        hisp_matrix_destroy(&A);
        ck_assert_uint_eq(mem_refs_settled(f.q, va), 1);
        clReleaseMemObject(rp);
        clReleaseMemObject(ci);
        clReleaseMemObject(va);
        shaped_free(&m);
    }
    hispi_spmv_hook.cl_variant = 0;
    cl_fx_free(&f);
}
END_TEST

static void CL_CALLBACK count_freed(cl_mem m, void *arg)
{
    (void)m;
    __atomic_add_fetch((int *)arg, 1, __ATOMIC_SEQ_CST);
}

/* Wait up to 2 s for *n to reach want (PoCL frees in its own threads). */
static int freed_settled(const int *n, int want)
{
    for (int i = 0; i < 2000 && __atomic_load_n(n, __ATOMIC_SEQ_CST) < want; i++)
        usleep(1000);
    return __atomic_load_n(n, __ATOMIC_SEQ_CST);
}

/* hisp holds a reference of its own to every cl_mem it wraps (vectors and
 * matrices): the caller may release theirs at once, hisp's calls still work,
 * and hisp's destroy (or a backend switch) frees the buffers. */
START_TEST(test_opencl_wrap_retains)
{
    cl_fx f;
    if (!cl_fx_make(&f, 1)) return;
    hisp_context ctx = f.ctx, rctx = f.rctx;
    uint64_t rng = test_seed() ^ 0x4e7a;
    hisp_type t = HISP_F32;
    size_t es = 4;
    shaped m;
    shaped_make(rctx, t, 90, 61, &rng, 0, 0, 0, &m);
    for (int pass = 0; pass < 2; pass++) { /* 1: the backend switched before the destroys */
        void *x = random_array(t, m.ncols, &rng), *y = random_array(t, m.nrows, &rng);
        void *want = reference_spmv(rctx, m.ref, HISP_OP_N, x, y, m.ncols, m.nrows, t);
        cl_mem bufs[5] = {cl_buffer(f.c, m.rowptr, m.pbytes), cl_buffer(f.c, m.colind, m.ibytes),
                          cl_buffer(f.c, m.val, m.vbytes), cl_buffer(f.c, x, (size_t)m.ncols * es),
                          cl_buffer(f.c, y, (size_t)m.nrows * es)};
        int freed = 0;
        for (int k = 0; k < 5; k++)
            ck_assert_int_eq(clSetMemObjectDestructorCallback(bufs[k], count_freed, &freed),
                             CL_SUCCESS);
        hisp_matrix A;
        hisp_vector xv, yv;
        CK_OK(ctx, hisp_matrix_wrap_csr_device(ctx, t, m.nrows, m.ncols, m.nnz, bufs[0], bufs[1],
                                               bufs[2], m.ptr64, m.idx64, m.base, &A));
        CK_OK(ctx, hisp_vector_wrap_device(ctx, t, m.ncols, bufs[3], &xv));
        CK_OK(ctx, hisp_vector_wrap_device(ctx, t, m.nrows, bufs[4], &yv));
        for (int k = 0; k < 5; k++) {
            cl_uint refs = 0;
            clGetMemObjectInfo(bufs[k], CL_MEM_REFERENCE_COUNT, sizeof refs, &refs, NULL);
            ck_assert_uint_ge(refs, 2);  /* the caller's and hisp's */
            clReleaseMemObject(bufs[k]); /* the caller lets go */
        }
        float a = 1.25f, b = -0.5f;
        CK_OK(ctx, hisp_spmv(ctx, HISP_OP_N, &a, A, xv, &b, yv));
        void *out = malloc((size_t)m.nrows * es);
        ck_assert_ptr_nonnull(out);
        CK_OK(ctx, hisp_vector_read(yv, out));
        ck_assert_double_le(test_rel_error(t, out, want, m.nrows), tol(t));
        ck_assert_int_eq(freed, 0);
        if (pass == 1) { /* the data comes to the host; the buffers are let go */
            CK_OK(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_REFERENCE, 0));
            ck_assert_int_eq(freed_settled(&freed, 5), 5);
            memset(out, 0, (size_t)m.nrows * es);
            CK_OK(ctx, hisp_vector_read(yv, out));
            ck_assert_double_le(test_rel_error(t, out, want, m.nrows), tol(t));
        }
        hisp_matrix_destroy(&A);
        hisp_vector_destroy(&xv);
        hisp_vector_destroy(&yv);
        ck_assert_int_eq(freed_settled(&freed, 5), 5); /* hisp's references were the last */
        free(x);
        free(y);
        free(out);
        free(want);
    }
    shaped_free(&m);
    cl_fx_free(&f);
}
END_TEST

/* Exported buffers, the caller's writes, timing on a queue without
 * profiling, a backend switch with wrapped objects, errors. */
START_TEST(test_opencl_export)
{
    int ti = test_first_target(HISP_BACKEND_OPENCL);
    if (ti < 0) {
        test_skip("interop opencl: no OpenCL device");
        return;
    }
    hisp_context ctx = test_context(ti);
    uint64_t rng = test_seed();
    const int64_t n = 300;
    double *x = random_array(HISP_F64, n, &rng), *z = random_array(HISP_F64, n, &rng);
    double back[300];
    /* hisp's own queue: export, read and write by the caller */
    hisp_vector v;
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, n, &v));
    CK_OK(ctx, hisp_vector_write(v, x));
    void *mem = NULL, *qp = NULL;
    CK_OK(ctx, hisp_vector_device_memory(v, &mem));
    CK_OK(ctx, hisp_context_get_stream(ctx, &qp));
    ck_assert_ptr_nonnull(qp);
    cl_command_queue hq = qp;
    ck_assert_int_eq(
        clEnqueueReadBuffer(hq, (cl_mem)mem, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL),
        CL_SUCCESS);
    ck_assert_mem_eq(back, x, sizeof back);
    ck_assert_int_eq(
        clEnqueueWriteBuffer(hq, (cl_mem)mem, CL_TRUE, 0, sizeof back, z, 0, NULL, NULL),
        CL_SUCCESS);
    CK_OK(ctx, hisp_vector_device_modified(v));
    CK_OK(ctx, hisp_vector_read(v, back));
    ck_assert_mem_eq(back, z, sizeof back);
    {
        /* a queue of the caller in hisp's own cl_context: switched in place,
         * device copies stay; NULL then opens a context of hisp's own */
        cl_context hc;
        cl_device_id hd;
        cl_int e;
        ck_assert_int_eq(clGetCommandQueueInfo(hq, CL_QUEUE_CONTEXT, sizeof hc, &hc, NULL), 0);
        ck_assert_int_eq(clGetCommandQueueInfo(hq, CL_QUEUE_DEVICE, sizeof hd, &hd, NULL), 0);
        cl_command_queue q2 = clCreateCommandQueue(hc, hd, CL_QUEUE_PROFILING_ENABLE, &e);
        ck_assert_int_eq(e, CL_SUCCESS);
        CK_OK(ctx, hisp_context_set_stream(ctx, q2));
        void *mem2 = NULL;
        CK_OK(ctx, hisp_vector_device_memory(v, &mem2));
        ck_assert_ptr_eq(mem2, mem);
        CK_OK(ctx, hisp_context_set_stream(ctx, NULL));
        memset(back, 0, sizeof back);
        CK_OK(ctx, hisp_vector_read(v, back));
        ck_assert_mem_eq(back, z, sizeof back);
        clReleaseCommandQueue(q2);
    }
    hisp_vector_destroy(&v);

    /* the caller's queue (no profiling) */
    cl_context c;
    cl_command_queue q;
    cl_device_id dev;
    cl_own(ctx, 0, &c, &q, &dev);
    CK_OK(ctx, hisp_context_set_stream(ctx, q));
    hisp_vector w;
    cl_mem xm = cl_buffer(c, x, (size_t)n * 8);
    /* errors: NULL, too small, another context */
    ck_assert_int_eq(hisp_vector_wrap_device(ctx, HISP_F64, n, NULL, &w),
                     HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_vector_wrap_device(ctx, HISP_F64, n + 1, xm, &w),
                     HISP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(w);
    {
        cl_int e;
        cl_context c2 = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
        ck_assert_int_eq(e, CL_SUCCESS);
        cl_mem other = cl_buffer(c2, x, (size_t)n * 8);
        ck_assert_int_eq(hisp_vector_wrap_device(ctx, HISP_F64, n, other, &w),
                         HISP_ERR_INVALID_ARGUMENT);
        clReleaseMemObject(other);
        clReleaseContext(c2);
    }
    /* a wrapped matrix with bad row pointers fails at its first SpMV */
    int32_t badp[4] = {0, 2, 1, 3}, ci[3] = {0, 1, 2};
    double vals[3] = {1, 2, 3};
    cl_mem bp = cl_buffer(c, badp, sizeof badp), bc = cl_buffer(c, ci, sizeof ci),
           bv = cl_buffer(c, vals, sizeof vals);
    hisp_matrix B;
    ck_assert_int_eq(hisp_matrix_wrap_csr_device(ctx, HISP_F64, 3, 3, 4, bp, bc, bv, HISP_INDEX_32,
                                                 HISP_INDEX_32, 0, &B),
                     HISP_ERR_INVALID_ARGUMENT); /* colind holds 3 indices, not 4 */
    ck_assert_int_eq(hisp_matrix_wrap_csr_device(ctx, HISP_C64, 3, 3, 3, bp, bc, bv, HISP_INDEX_32,
                                                 HISP_INDEX_32, 0, &B),
                     HISP_ERR_UNSUPPORTED);
    CK_OK(ctx, hisp_matrix_wrap_csr_device(ctx, HISP_F64, 3, 3, 3, bp, bc, bv, HISP_INDEX_32,
                                           HISP_INDEX_32, 0, &B));
    hisp_vector x3, y3;
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, 3, &x3));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, 3, &y3));
    double one = 1, zero = 0;
    ck_assert_int_eq(hisp_spmv(ctx, HISP_OP_N, &one, B, x3, &zero, y3), HISP_ERR_INPUT_FORMAT);
    /* fixed by the caller: device_modified makes the plan again */
    badp[1] = 1;
    ck_assert_int_eq(clEnqueueWriteBuffer(q, bp, CL_TRUE, 0, sizeof badp, badp, 0, NULL, NULL),
                     CL_SUCCESS);
    CK_OK(ctx, hisp_matrix_device_modified(B));
    double ones[3] = {1, 1, 1}, y[3];
    CK_OK(ctx, hisp_vector_write(x3, ones));
    CK_OK(ctx, hisp_spmv(ctx, HISP_OP_N, &one, B, x3, &zero, y3));
    CK_OK(ctx, hisp_vector_read(y3, y));
    ck_assert(y[0] == 1 && y[1] == 0 && y[2] == 5);
    double ms[2];
    CK_OK(ctx, hisp_spmv_timed(ctx, HISP_OP_N, &one, B, x3, &zero, y3, 0, 2, ms));
    ck_assert(ms[0] >= 0 && ms[1] >= 0);

    /* a backend switch: the wrapped objects become ordinary ones */
    CK_OK(ctx, hisp_vector_wrap_device(ctx, HISP_F64, n, xm, &w));
    CK_OK(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_REFERENCE, 0));
    CK_OK(ctx, hisp_vector_read(w, back));
    ck_assert_mem_eq(back, x, sizeof back);
    CK_OK(ctx, hisp_spmv(ctx, HISP_OP_N, &one, B, x3, &zero, y3));
    CK_OK(ctx, hisp_vector_read(y3, y));
    ck_assert(y[0] == 1 && y[1] == 0 && y[2] == 5);
    ck_assert_uint_eq(mem_refs_settled(q, bv), 1);
    hisp_vector_destroy(&w);
    hisp_vector_destroy(&x3);
    hisp_vector_destroy(&y3);
    hisp_matrix_destroy(&B);
    /* back on OpenCL, hisp's own queue again after NULL */
    const test_target *tg;
    test_targets(&tg);
    CK_OK(ctx, hisp_context_set_backend(ctx, tg[ti].kind, tg[ti].device));
    CK_OK(ctx, hisp_context_set_stream(ctx, q));
    CK_OK(ctx, hisp_context_set_stream(ctx, NULL));
    CK_OK(ctx, hisp_context_get_stream(ctx, &qp));
    ck_assert_ptr_ne(qp, q);
    clReleaseMemObject(xm);
    clReleaseMemObject(bp);
    clReleaseMemObject(bc);
    clReleaseMemObject(bv);
    clReleaseCommandQueue(q);
    clReleaseContext(c);
    free(x);
    free(z);
    hisp_context_destroy(&ctx);
}
END_TEST
#endif

#ifdef HISP_HAVE_CUDA
static void *cu_copy(const void *src, size_t bytes)
{
    void *d = NULL;
    ck_assert_int_eq(cudaMalloc(&d, bytes), cudaSuccess);
    ck_assert_int_eq(cudaMemcpy(d, src, bytes, cudaMemcpyHostToDevice), cudaSuccess);
    return d;
}
#endif

/* cudaMalloc'd arrays of every shape and a stream of the caller. */
START_TEST(test_cuda_wrap)
{
#ifdef HISP_HAVE_CUDA
    const test_target *t;
    test_targets(&t);
    int ti = test_first_target(HISP_BACKEND_CUDA);
    if (ti < 0) {
        test_skip("interop cuda: no CUDA device");
        return;
    }
    hisp_context rctx, ctx = test_context(ti);
    ck_assert_int_eq(hisp_context_create(&rctx), 0);
    ck_assert_int_eq(cudaSetDevice(t[ti].device), cudaSuccess);
    cudaStream_t s;
    ck_assert_int_eq(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    CK_OK(ctx, hisp_context_set_stream(ctx, s));
    void *got = NULL;
    CK_OK(ctx, hisp_context_get_stream(ctx, &got));
    ck_assert_ptr_eq(got, s);
    uint64_t rng = test_seed();
    for (int shape = 0; shape < 16; shape++) {
        hisp_type ty = shape & 8 ? HISP_F64 : HISP_F32;
        shaped m;
        shaped_make(rctx, ty, 700 + shape, 530, &rng, shape & 1, shape >> 1 & 1, shape >> 2 & 1,
                    &m);
        void *rp = cu_copy(m.rowptr, m.pbytes), *ci = cu_copy(m.colind, m.ibytes),
             *va = cu_copy(m.val, m.vbytes);
        hisp_matrix A;
        CK_OK(ctx, hisp_matrix_wrap_csr_device(ctx, ty, m.nrows, m.ncols, m.nnz, rp, ci, va,
                                               m.ptr64, m.idx64, m.base, &A));
        for (int op = 0; op < 2; op++) {
            int64_t nx = op ? m.nrows : m.ncols, ny = op ? m.ncols : m.nrows;
            size_t es = hisp_type_size(ty);
            void *x = random_array(ty, nx, &rng), *y = random_array(ty, ny, &rng);
            void *want = reference_spmv(rctx, m.ref, (hisp_op)op, x, y, nx, ny, ty);
            void *xd = cu_copy(x, (size_t)nx * es), *yd = cu_copy(y, (size_t)ny * es);
            hisp_vector xv, yv;
            CK_OK(ctx, hisp_vector_wrap_device(ctx, ty, nx, xd, &xv));
            CK_OK(ctx, hisp_vector_wrap_device(ctx, ty, ny, yd, &yv));
            double a = 1.25, b = -0.5;
            float af = 1.25f, bf = -0.5f;
            CK_OK(ctx, hisp_spmv(ctx, (hisp_op)op, ty == HISP_F64 ? (void *)&a : (void *)&af, A, xv,
                                 ty == HISP_F64 ? (void *)&b : (void *)&bf, yv));
            void *out = malloc((size_t)ny * es);
            ck_assert_int_eq(cudaMemcpyAsync(out, yd, (size_t)ny * es, cudaMemcpyDeviceToHost, s),
                             cudaSuccess);
            ck_assert_int_eq(cudaStreamSynchronize(s), cudaSuccess);
            ck_assert_msg(test_rel_error(ty, out, want, ny) <= tol(ty), "shape %d op %d: %g", shape,
                          op, test_rel_error(ty, out, want, ny));
            CK_OK(ctx, hisp_vector_read(yv, out));
            ck_assert_double_le(test_rel_error(ty, out, want, ny), tol(ty));
            hisp_vector_destroy(&xv);
            hisp_vector_destroy(&yv);
            cudaFree(xd);
            cudaFree(yd);
            free(x);
            free(y);
            free(out);
            free(want);
        }
        hisp_matrix_destroy(&A);
        cudaFree(rp);
        cudaFree(ci);
        cudaFree(va);
        shaped_free(&m);
    }
    /* an exported buffer read on the caller's stream */
    hisp_vector v;
    double xs[100], back[100];
    for (int i = 0; i < 100; i++)
        xs[i] = test_uniform(&rng);
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, 100, &v));
    CK_OK(ctx, hisp_vector_write(v, xs));
    void *mem = NULL;
    CK_OK(ctx, hisp_vector_device_memory(v, &mem));
    ck_assert_int_eq(cudaMemcpyAsync(back, mem, sizeof back, cudaMemcpyDeviceToHost, s),
                     cudaSuccess);
    ck_assert_int_eq(cudaStreamSynchronize(s), cudaSuccess);
    ck_assert_mem_eq(back, xs, sizeof back);
    ck_assert_int_eq(hisp_vector_wrap_device(ctx, HISP_F64, 100, xs /* host memory */, &v),
                     HISP_ERR_INVALID_ARGUMENT);
    hisp_vector_destroy(&v);
    CK_OK(ctx, hisp_context_set_stream(ctx, NULL));
    hisp_context_destroy(&ctx);
    cudaStreamDestroy(s);
    hisp_context_destroy(&rctx);
#else
    test_skip("interop cuda: not compiled");
#endif
}
END_TEST

Suite *suite_interop(void)
{
    Suite *s = suite_create("interop");
    TCase *tc = test_tcase(s, "interop", 600);
    tcase_add_test(tc, test_import_host);
    tcase_add_test(tc, test_wrap_reference);
#ifdef HISP_HAVE_OPENCL
    tcase_add_test(tc, test_opencl_wrap);
    tcase_add_test(tc, test_opencl_wrap_retains);
    tcase_add_test(tc, test_opencl_export);
#endif
    tcase_add_test(tc, test_cuda_wrap);
    return s;
}
