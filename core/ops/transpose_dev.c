/* X^T on the device (spgemm.h), for the Galerkin product P^T*(A*P) of
 * hisp_matrix_ptap and AMG's restriction: the counts of X's columns
 * (sg_tcount, atomics), X^T's row pointers by the device scan, the entries
 * placed by atomic cursors (sg_tfill), then each row of X^T sorted by its
 * columns, X's rows (sg_tsort; kernels/spgemm.cl). The values are moved,
 * never combined, so X^T has X's bits whatever order the cursors took. */
#include "scan_dev.h"
#include "spgemm.h"

static const char *const names[3] = {"sg_tcount", "sg_tfill", "sg_tsort"};

typedef struct {
    hisp_context ctx;
    void *k[3];
    hispi_scan scan;
    void *cnt, *ptr, *col, *val;
    size_t cnt_bytes, ptr_bytes, col_bytes, val_bytes;
    bool scratch; /* ptr, col, val from hispi_tmp_alloc */
} tjob;

static void tjob_free(tjob *j)
{
    hisp_context ctx = j->ctx;
    hispi_spgemm_dev_free(ctx, j->cnt_bytes, true, j->cnt);
    hispi_spgemm_dev_free(ctx, j->ptr_bytes, j->scratch, j->ptr);
    hispi_spgemm_dev_free(ctx, j->col_bytes, j->scratch, j->col);
    hispi_spgemm_dev_free(ctx, j->val_bytes, j->scratch, j->val);
    for (int i = 0; i < 3; i++)
        if (j->k[i]) HISPI_BE_VOID(ctx, kern_free, j->k[i]);
    hispi_scan_free(ctx, &j->scan);
}

static hisp_status run(tjob *j, hisp_matrix X, bool scratch, hisp_matrix *R)
{
    hisp_context ctx = j->ctx;
    hisp_type t = X->host.type;
    const hispi_csr_ext *e = &X->ext;
    int64_t m = X->host.nrows, n = X->host.ncols, nnz = 0, gs = HISPI_SPGEMM_GS;
    size_t groups = (size_t)((m + gs - 1) / gs);
    for (int i = 0; i < 3; i++)
        HISPI_TRY(hispi_spgemm_kernel(ctx, t, names[i], &j->k[i]));
    HISPI_TRY(hispi_scan_get(ctx, true, &j->scan));
    j->cnt_bytes = (size_t)n * 4, j->ptr_bytes = ((size_t)n + 1) * 8;
    HISPI_TRY(hispi_spgemm_dev_buffer(ctx, j->cnt_bytes, true, &j->cnt));
    HISPI_TRY(HISPI_BE(ctx, buf_zero, j->cnt, 0, j->cnt_bytes));
    hispi_karg c[] = {hispi_ki64(m), hispi_kbuf(e->rowptr), hispi_kbuf(e->colind),
                      hispi_kbuf(j->cnt)};
    if (groups) HISPI_TRY(HISPI_BE(ctx, kern_launch, j->k[0], c, 4, groups, (size_t)gs));
    HISPI_TRY(hispi_spgemm_dev_buffer(ctx, j->ptr_bytes, scratch, &j->ptr));
    HISPI_TRY(hispi_scan_run(ctx, &j->scan, n, j->cnt, j->ptr, &nnz));
    j->col_bytes = (size_t)nnz * 4, j->val_bytes = (size_t)nnz * hisp_type_size(t);
    HISPI_TRY(hispi_spgemm_dev_buffer(ctx, j->col_bytes, scratch, &j->col));
    HISPI_TRY(hispi_spgemm_dev_buffer(ctx, j->val_bytes, scratch, &j->val));
    HISPI_TRY(HISPI_BE(ctx, buf_zero, j->cnt, 0, j->cnt_bytes));
    hispi_karg f[] = {hispi_ki64(m),      hispi_kbuf(e->rowptr), hispi_kbuf(e->colind),
                      hispi_kbuf(e->val), hispi_kbuf(j->ptr),    hispi_kbuf(j->cnt),
                      hispi_kbuf(j->col), hispi_kbuf(j->val)};
    if (groups) HISPI_TRY(HISPI_BE(ctx, kern_launch, j->k[1], f, 8, groups, (size_t)gs));
    hispi_karg s[] = {hispi_kbuf(j->ptr), hispi_kbuf(j->col), hispi_kbuf(j->val)};
    if (n) HISPI_TRY(HISPI_BE(ctx, kern_launch, j->k[2], s, 3, (size_t)n, (size_t)gs));
    HISPI_TRY((scratch ? hispi_matrix_wrap_pooled
                       : hispi_matrix_wrap_owned)(ctx, t, n, m, nnz, j->ptr, j->col, j->val, R));
    j->ptr = j->col = j->val = NULL; /* R's now */
    return HISP_SUCCESS;
}

hisp_status hispi_spgemm_dev_transpose(hisp_matrix X, bool scratch, hisp_matrix *R)
{
    *R = NULL;
    tjob j = {.ctx = X->ctx, .scratch = scratch};
    hisp_status s = run(&j, X, scratch, R);
    tjob_free(&j);
    return s;
}
