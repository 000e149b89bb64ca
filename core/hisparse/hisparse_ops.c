/* HiSparse reference operations beyond SpMV: C = op(A) + op(B). The
 * reference goes through sorted CSR (state applied), merges row by row and
 * rebuilds a tree; it is the oracle of the device addition
 * (core/hisparse/hisparse_add.c) and the reference backend's addition. */
#include "hispi_hisparse.h"

#include <stdlib.h>

/* op(A) as shown, as sorted CSR. */
static hisp_status csr_of(hisp_matrix A, hisp_op op, hispi_sparse *out)
{
    if (op == HISP_OP_N) return hispi_matrix_sparse_copy(A, HISP_FORMAT_CSR, out);
    /* the CSC arrays of A are the CSR arrays of A^T */
    hispi_sparse c;
    HISPI_TRY(hispi_matrix_sparse_copy(A, HISP_FORMAT_CSC, &c));
    memset(out, 0, sizeof *out);
    out->format = HISP_FORMAT_CSR;
    out->type = c.type;
    out->nrows = c.ncols;
    out->ncols = c.nrows;
    out->nnz = c.nnz;
    out->rowptr = c.colptr;
    out->colind = c.rowind;
    out->val = c.val;
    out->sorted = true;
    return HISP_SUCCESS;
}

static void add_into(hisp_type t, unsigned char *dst, const unsigned char *src)
{
    int comps = hisp_type_components(t);
    for (int c = 0; c < comps; c++) {
        if (hispi_type_scalar_size(t) == 4) {
            float a, b;
            memcpy(&a, dst + 4 * c, 4);
            memcpy(&b, src + 4 * c, 4);
            a += b;
            memcpy(dst + 4 * c, &a, 4);
        } else {
            double a, b;
            memcpy(&a, dst + 8 * c, 8);
            memcpy(&b, src + 8 * c, 8);
            a += b;
            memcpy(dst + 8 * c, &a, 8);
        }
    }
}

hisp_status hispi_matrix_add_ref(hisp_op op_a, hisp_matrix A, hisp_op op_b, hisp_matrix B,
                                 hisp_matrix *C)
{
    hisp_context ctx = A->ctx;
    int64_t am = op_a ? A->host.ncols : A->host.nrows, an = op_a ? A->host.nrows : A->host.ncols;
    hisp_type t = A->host.type;
    size_t es = hisp_type_size(t);
    int d = A->hs ? A->hs->d : A->node_size ? A->node_size : HISP_HISPARSE_DEFAULT_NODE_SIZE;
    hispi_sparse a, b;
    HISPI_TRY(csr_of(A, op_a, &a));
    hisp_status s = csr_of(B, op_b, &b);
    if (s) {
        hispi_sparse_free(&a);
        return s;
    }
    int32_t *rows = NULL, *cols = NULL;
    unsigned char *vals = NULL;
    size_t cap = (size_t)a.nnz + (size_t)b.nnz;
    s = hispi_alloc(ctx, cap, sizeof *rows, (void **)&rows);
    if (!s) s = hispi_alloc(ctx, cap, sizeof *cols, (void **)&cols);
    if (!s) s = hispi_alloc(ctx, cap, es, (void **)&vals);
    int64_t n = 0;
    for (int64_t i = 0; i < am && !s; i++) {
        int64_t p = a.rowptr[i], pe = a.rowptr[i + 1], q = b.rowptr[i], qe = b.rowptr[i + 1];
        while (p < pe || q < qe) {
            int64_t ca = p < pe ? a.colind[p] : INT64_MAX, cb = q < qe ? b.colind[q] : INT64_MAX;
            rows[n] = (int32_t)i;
            cols[n] = (int32_t)(ca < cb ? ca : cb);
            if (ca <= cb)
                memcpy(vals + (size_t)n * es, (unsigned char *)a.val + (size_t)p * es, es);
            else
                memcpy(vals + (size_t)n * es, (unsigned char *)b.val + (size_t)q * es, es);
            if (ca == cb)
                add_into(t, vals + (size_t)n * es, (unsigned char *)b.val + (size_t)q * es);
            if (ca <= cb) p++;
            if (cb <= ca) q++;
            n++;
        }
    }
    hispi_sparse_free(&a);
    hispi_sparse_free(&b);
    hispi_hisparse h;
    if (!s) s = hispi_hisparse_build_sorted(ctx, t, am, an, n, rows, cols, vals, d, 0, &h);
    free(rows);
    free(cols);
    free(vals);
    HISPI_TRY(s);
    return hispi_hisparse_wrap(ctx, &h, C);
}
