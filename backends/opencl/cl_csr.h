/* OpenCL backend: a CSR matrix on the device (hisp_cl_csr), shared by its
 * upload and analysis (cl_csr_upload.c) and its SpMV (cl_spmv.c).
 *
 * Three kernel families:
 *  - "block" (GPUs; kernels/csr_block.cl): the CUDA backend's design.
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
 * used only from nnz >= 2^31. */
#ifndef HISP_CL_CSR_H
#define HISP_CL_CSR_H

#include "cl_backend.h"

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
    /* chunk, a matrix whose rows are mostly empty (an MPI rank's ghost
     * block): the rows with entries (PETSc's compressed rows) and nzparts + 1
     * boundaries of parts of equal cost in that list; op N with beta = 1
     * runs over them only */
    cl_mem nzrows, nzpart;
    uint32_t nnzrows, nzparts;
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
    cl_kernel scale, n_main, n_mid, n_long, t_main, t_mid, t_long, t_private, t_reduce, n_fix,
        n_rows, mm_n, mm_t;
} hisp_cl_csr;

/* Upload A; variant < 0: chosen from the device (and the test hook). o:
 * MSREP options (NULL: none; gptr: A->rowptr are global slices). ext: the
 * caller's arrays, used in place (retained, never uploaded); A then holds
 * the 0-based row pointers for the analysis only. */
HISPI_LOCAL hisp_status hisp_cl_csr_make(hisp_context ctx, hisp_cl_be *be, const hispi_csr_view *A,
                                         const hispi_csr_opts *o, const hispi_csr_ext *ext,
                                         int variant, hisp_cl_csr **out);
/* Set kernel arguments from a list of (size, pointer) pairs. */
HISPI_LOCAL hisp_status hisp_cl_set_args(hisp_context ctx, cl_kernel k, int n, const size_t *sizes,
                                         const void *const *vals);
/* Enqueue k over `global` items (rounded up to the local size); fixed: k
 * has a required work-group size, else it gets at most what it allows. */
HISPI_LOCAL hisp_status hisp_cl_launch(hisp_context ctx, hisp_cl_be *be, cl_kernel k, size_t global,
                                       size_t local, int fixed);

#endif
