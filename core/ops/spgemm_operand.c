/* SpGEMM's operands (spgemm.h): each matrix's entries as a CSR source, and
 * op(X) as that source or its transpose made by a counting sort. */
#include "spgemm.h"

#include <stdlib.h>
#include <string.h>

static void set_source(hispi_spgemm_src *s, const hispi_sparse *c, bool cols_major)
{
    s->cols_major = cols_major;
    s->rows = cols_major ? c->ncols : c->nrows;
    s->cols = cols_major ? c->nrows : c->ncols;
    s->nnz = c->nnz;
    s->ptr = cols_major ? c->colptr : c->rowptr;
    s->idx = cols_major ? c->rowind : c->colind;
    s->val = c->val;
}

hisp_status hispi_spgemm_source(hisp_matrix X, hispi_spgemm_src *s)
{
    memset(s, 0, sizeof *s);
    HISPI_TRY(hispi_matrix_need_host(X));
    if (X->host.format == HISP_FORMAT_CSC) { /* X's columns: the rows of X^T, read in place */
        set_source(s, &X->host, true);
        return HISP_SUCCESS;
    }
    const hispi_sparse *csr = NULL;
    HISPI_TRY(hispi_matrix_csr(X, &s->tmp, &csr));
    set_source(s, csr, false);
    return HISP_SUCCESS;
}

/* The transpose of s's source (rows x cols) into tptr, tidx, perm: a
 * counting sort over the columns, rows visited in order, so each row of
 * the transpose comes out sorted. */
static hisp_status transpose(hisp_context ctx, hispi_spgemm_src *s)
{
    int64_t n = s->cols, nnz = s->nnz;
    hisp_status st = hispi_calloc(ctx, (size_t)n + 1, sizeof *s->tptr, (void **)&s->tptr);
    if (!st) st = hispi_alloc(ctx, (size_t)nnz, sizeof *s->tidx, (void **)&s->tidx);
    if (!st) st = hispi_alloc(ctx, (size_t)nnz, sizeof *s->perm, (void **)&s->perm);
    if (st) {
        free(s->tptr), free(s->tidx), free(s->perm);
        s->tptr = s->perm = NULL, s->tidx = NULL;
        return st;
    }
    int64_t *tp = s->tptr;
    for (int64_t k = 0; k < nnz; k++)
        tp[s->idx[k] + 1]++;
    for (int64_t j = 0; j < n; j++)
        tp[j + 1] += tp[j];
    /* tp[j] is the next free slot of row j; afterwards tp[j] = old tp[j + 1] */
    for (int64_t i = 0; i < s->rows; i++)
        for (int64_t k = s->ptr[i]; k < s->ptr[i + 1]; k++) {
            int64_t p = tp[s->idx[k]]++;
            s->tidx[p] = (int32_t)i;
            s->perm[p] = k;
        }
    memmove(tp + 1, tp, (size_t)n * sizeof *tp);
    tp[0] = 0;
    return HISP_SUCCESS;
}

static bool is_complex(hisp_type t)
{
    return t == HISP_C32 || t == HISP_C64;
}

hisp_status hispi_spgemm_orient(hisp_context ctx, hispi_spgemm_src *s, hisp_type t, hisp_op op)
{
    free(s->tptr), free(s->tidx), free(s->perm);
    s->tptr = s->perm = NULL, s->tidx = NULL;
    bool want_t = op != HISP_OP_N;
    hispi_spgemm_operand *v = &s->v;
    v->nnz = s->nnz;
    v->val = s->val;
    v->conj = op == HISP_OP_H && is_complex(t);
    if (want_t == s->cols_major) {
        v->nrows = s->rows, v->ncols = s->cols;
        v->rowptr = s->ptr, v->colind = s->idx, v->perm = NULL;
        return HISP_SUCCESS;
    }
    HISPI_TRY(transpose(ctx, s));
    v->nrows = s->cols, v->ncols = s->rows;
    v->rowptr = s->tptr, v->colind = s->tidx, v->perm = s->perm;
    return HISP_SUCCESS;
}

hisp_status hispi_spgemm_open(hisp_matrix X, hisp_op op, hispi_spgemm_src *s)
{
    HISPI_TRY(hispi_spgemm_source(X, s));
    hisp_status st = hispi_spgemm_orient(X->ctx, s, X->host.type, op);
    if (st) hispi_spgemm_close(s);
    return st;
}

bool hispi_spgemm_dev_csr(hisp_matrix X)
{
    const hispi_csr_ext *e = &X->ext;
    return X->wrapped && e->ptr64 && !e->idx64 && !e->base;
}

bool hispi_spgemm_dev_resident(hisp_matrix X, hisp_op op)
{
    return hispi_spgemm_dev_csr(X) && X->host_absent && op == HISP_OP_N;
}

void hispi_spgemm_dev_view(hisp_matrix X, hispi_spgemm_operand *v)
{
    const hispi_csr_ext *e = &X->ext;
    memset(v, 0, sizeof *v);
    v->nrows = X->host.nrows, v->ncols = X->host.ncols, v->nnz = X->host.nnz;
    v->dev[0] = e->rowptr, v->dev[1] = e->colind, v->dev[2] = e->val;
}

hisp_status hispi_spgemm_open_dev(hisp_matrix X, hisp_op op, hispi_spgemm_src *s)
{
    if (!hispi_spgemm_dev_resident(X, op)) return hispi_spgemm_open(X, op, s);
    memset(s, 0, sizeof *s);
    hispi_spgemm_dev_view(X, &s->v);
    return HISP_SUCCESS;
}

void hispi_spgemm_close(hispi_spgemm_src *s)
{
    hispi_sparse_free(&s->tmp);
    free(s->tptr);
    free(s->tidx);
    free(s->perm);
    memset(s, 0, sizeof *s);
}
