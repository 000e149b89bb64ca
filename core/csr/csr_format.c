/* The sparse family's formats: COO, CSR and CSC keep their entries in the
 * matrix's host arrays (A->host) and run on the device as CSR: the
 * backend's csr_upload / csr_spmv (a COO or CSC matrix uploads a private
 * CSR and stays as it is). Compound entry types never reach spmv here:
 * hisp_spmv sends them to their layouts (core/compound/). */
#include "backend/backend.h"
#include "format/format.h"

#include <string.h>

extern const hispi_format_ops hispi_coo_format, hispi_csr_format, hispi_csc_format;

/* A becomes format f, its entries taken from s (a copy: s may be A->host). */
static hisp_status build(hisp_matrix A, const hispi_sparse *s, hisp_format f,
                         const hispi_format_ops *ops)
{
    hispi_sparse c;
    HISPI_TRY(hispi_sparse_convert(A->ctx, s, f, &c));
    hispi_matrix_release_storage(A);
    A->host = c;
    A->fmt = ops;
    return HISP_SUCCESS;
}

static hisp_status to_sparse(hisp_matrix A, hisp_format f, hispi_sparse *out)
{
    return hispi_sparse_convert(A->ctx, &A->host, f, out);
}

static hisp_status bytes(hisp_matrix A, hisp_format f, hisp_type t, uint64_t *b)
{
    uint64_t nnz = (uint64_t)A->host.nnz;
    uint64_t ptrw = nnz > INT32_MAX ? 8 : 4; /* pointer width the devices use */
    uint64_t entries = nnz * hisp_type_size(t);
    if (f == HISP_FORMAT_COO)
        *b = entries + nnz * 8;
    else
        *b = entries + nnz * 4 +
             ((uint64_t)(f == HISP_FORMAT_CSR ? A->host.nrows : A->host.ncols) + 1) * ptrw;
    return HISP_SUCCESS;
}

static hisp_status transpose(hisp_matrix A)
{
    hispi_sparse *s = &A->host;
    hispi_matrix_drop_device(A);
    int64_t t = s->nrows;
    s->nrows = s->ncols;
    s->ncols = t;
    int32_t *ix = s->rowind;
    s->rowind = s->colind;
    s->colind = ix;
    if (s->format == HISP_FORMAT_COO) {
        s->sorted = false; /* now column-major */
    } else {
        int64_t *p = s->rowptr;
        s->rowptr = s->colptr;
        s->colptr = p;
        s->format = s->format == HISP_FORMAT_CSR ? HISP_FORMAT_CSC : HISP_FORMAT_CSR;
        A->fmt = s->format == HISP_FORMAT_CSR ? &hispi_csr_format : &hispi_csc_format;
    }
    return HISP_SUCCESS;
}

static hisp_status scale(hisp_matrix A, double a)
{
    hispi_matrix_drop_device(A);
    hispi_sparse_scale(&A->host, a);
    return HISP_SUCCESS;
}

hisp_status hispi_csr_device(hisp_matrix A)
{
    hisp_context ctx = A->ctx;
    if (A->wrapped && !A->dev) HISPI_TRY(hispi_matrix_wrap_upload(A)); /* no host copy */
    if (A->dev) return HISP_SUCCESS;
    hispi_sparse tmp;
    const hispi_sparse *c = NULL;
    HISPI_TRY(hispi_matrix_csr(A, &tmp, &c));
    hispi_csr_view v = {c->type, c->nrows, c->ncols, c->nnz, c->rowptr, c->colind, c->val};
    hisp_status s = HISPI_BE(ctx, csr_upload, &v, &A->dev);
    hispi_sparse_free(&tmp);
    return s;
}

/* The backend's CSR copy of A and the vectors' device buffers. */
static hisp_status prepare(hisp_context ctx, hisp_matrix A, hisp_vector x, bool read_y,
                           hisp_vector y, void **xd, void **yd)
{
    (void)ctx;
    HISPI_TRY(hispi_csr_device(A));
    HISPI_TRY(hispi_vector_device(x, true, xd));
    return hispi_vector_device(y, read_y, yd);
}

static hisp_status spmv(hisp_context ctx, hisp_op op, double a, hisp_matrix A, hisp_vector x,
                        double b, hisp_vector y)
{
    void *xd = NULL, *yd = NULL;
    HISPI_TRY(prepare(ctx, A, x, b != 0, y, &xd, &yd));
    HISPI_TRY(HISPI_BE(ctx, csr_spmv, A->dev, op, a, xd, b, yd));
    hispi_vector_device_written(y);
    return HISP_SUCCESS;
}

/* The backend's fused kernel where it has one, else the SpMV and the dot. */
static hisp_status spmv_dot(hisp_context ctx, hisp_matrix A, hisp_vector x, hisp_vector y,
                            hisp_result r)
{
    if (!HISPI_BE_HAS(ctx, csr_spmv_dot)) {
        HISPI_TRY(spmv(ctx, HISP_OP_N, 1, A, x, 0, y));
        return hisp_vector_dot(x, y, r);
    }
    void *xd = NULL, *yd = NULL, *rd = NULL;
    HISPI_TRY(prepare(ctx, A, x, false, y, &xd, &yd));
    if (r.vec) HISPI_TRY(hispi_vector_device(r.vec, true, &rd)); /* one entry is written */
    HISPI_TRY(HISPI_BE(ctx, csr_spmv_dot, A->dev, xd, 0, yd, rd, r.index, r.host));
    hispi_vector_device_written(y);
    if (r.vec) hispi_vector_device_written(r.vec);
    return HISP_SUCCESS;
}

/* hisp_spmm on the backend's kernel (arguments checked there) */
static hisp_status spmm(hisp_context ctx, hisp_op op, double a, hisp_matrix A, hisp_vector X,
                        double b, hisp_vector Y)
{
    if (!HISPI_BE_HAS(ctx, csr_spmm))
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "hisp_spmm: the %s backend has no SpMM",
                          ctx->ops->name);
    void *xd = NULL, *yd = NULL;
    HISPI_TRY(prepare(ctx, A, X, b != 0, Y, &xd, &yd));
    HISPI_TRY(HISPI_BE(ctx, csr_spmm, A->dev, op, a, xd, X->order == HISP_ORDER_ROW, b, yd,
                       Y->order == HISP_ORDER_ROW, X->cols));
    hispi_vector_device_written(Y);
    return HISP_SUCCESS;
}

#define FAMILY(F, NAME, ID)                                                                        \
    static hisp_status build_##F(hisp_matrix A, const hispi_sparse *s)                             \
    {                                                                                              \
        return build(A, s, ID, &hispi_##F##_format);                                               \
    }                                                                                              \
    static hisp_status bytes_##F(hisp_matrix A, hisp_type t, uint64_t *b)                          \
    {                                                                                              \
        return bytes(A, ID, t, b);                                                                 \
    }                                                                                              \
    const hispi_format_ops hispi_##F##_format = {                                                  \
        .format = ID,                                                                              \
        .name = NAME,                                                                              \
        .build = build_##F,                                                                        \
        .to_sparse = to_sparse,                                                                    \
        .transpose = transpose,                                                                    \
        .scale = scale,                                                                            \
        .bytes = bytes_##F,                                                                        \
        .spmv = spmv,                                                                              \
        .spmv_dot = spmv_dot,                                                                      \
        .spmm = spmm,                                                                              \
    };

FAMILY(coo, "coo", HISP_FORMAT_COO)
FAMILY(csr, "csr", HISP_FORMAT_CSR)
FAMILY(csc, "csc", HISP_FORMAT_CSC)
