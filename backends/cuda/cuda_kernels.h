/* Interface between the CUDA backend's host side (C) and its kernels
 * (kernels_cuda/spmv.cu, C++ compiled by nvcc). Only plain C types cross. */
#ifndef HISP_CUDA_KERNELS_H
#define HISP_CUDA_KERNELS_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Threads of one SpMV block; shared-memory bytes a "stream" block stages
 * (CAP entries: 4096 float or 2048 double); rows a stream block may hold; the
 * slice of a very long row one block reduces (longer rows are split into
 * chunks summed by a fix-up kernel). */
#define HISP_CUDA_THREADS 256
#define HISP_CUDA_STAGE_BYTES 16384
#define HISP_CUDA_CAP(entry_bytes) (HISP_CUDA_STAGE_BYTES / (entry_bytes))
#define HISP_CUDA_ROWCAP 1024
#define HISP_CUDA_SPLIT 8192

/* One thread block's work, chosen on the host at upload. Entries [k0, k1).
 * slot == -2: a "stream" block of rows [row0, row1) holding at most CAP
 * entries; win >= 0: for op = T, columns [win, win + CAP) take most of its
 * entries and are summed in shared memory first (-1: none).
 * slot >= -1: a chunk of the long row row0 (row1 = row0 + 1); slot >= 0: its
 * sum goes to partial[slot]; slot == -1: the chunk is the whole row and the
 * block writes y itself. */
typedef struct {
    int64_t k0, k1;
    int32_t row0, row1, slot, win;
} hisp_cuda_block;

#define HISP_CUDA_STREAM (-2)

/* A row split into chunks: its partial sums are partial[slot0 .. slot0+n). */
typedef struct {
    int32_t row, slot0, n, pad;
} hisp_cuda_split;

typedef struct {
    int f64;   /* entry type: 0 float, 1 double */
    int wide;  /* rowptr holds int64_t (nnz >= 2^31), else int32_t */
    int idx64; /* colind holds int64_t (the caller's wrapped arrays), else int32_t */
    int base;  /* index base of rowptr and colind: 0, or 1 for wrapped arrays */
    int64_t nrows, ncols, nnz;
    const void *rowptr;
    const void *colind;
    const void *val;
    const hisp_cuda_block *blocks;
    int64_t nblocks;
    const hisp_cuda_split *splits;
    int64_t nsplits;
    void *partial;  /* one entry per chunk of a split row */
    int64_t nslots; /* those chunks */
    int64_t nlong;  /* blocks that hold one row (or a chunk of one); -1: not counted */
} hisp_cuda_csr;

/* y = alpha*op(A)*x + beta*y on `stream` (op 0 = N, 1 = T). Returns the first
 * launch error (cudaSuccess when all launches were accepted). With beta == 0
 * y is not read. */
cudaError_t hisp_cuda_launch_csr_spmv(const hisp_cuda_csr *A, int op, double alpha, const void *x,
                                      double beta, void *y, cudaStream_t stream);

/* y = A*x (op N, alpha 1, beta 0) as hisp_cuda_launch_csr_spmv, then *res =
 * sum_i x[xoff + i]*y[i] (xoff + nrows <= ncols; res: one entry of A's type
 * in device memory),
 * accumulated in double in a fixed order through part (A->nblocks +
 * A->nsplits doubles of device scratch) and rounded once. */
cudaError_t hisp_cuda_launch_csr_spmv_dot(const hisp_cuda_csr *A, const void *x, int64_t xoff,
                                          void *y, double *part, void *res, cudaStream_t stream);

/* Y = alpha*op(A)*X + beta*Y over k columns (kernels_cuda/spmm.cu; op 0 =
 * N, 1 = T by atomics): X holds ncols(op) x k entries, Y nrows(op) x k, each
 * column-major, or row-major where xrow / yrow; beta == 0: Y is not read.
 * part: scratch of (the plan's partial-sum slots) * k entries for op N. */
cudaError_t hisp_cuda_launch_csr_spmm(const hisp_cuda_csr *A, int op, double alpha, const void *x,
                                      int xrow, double beta, void *y, int yrow, int64_t k,
                                      void *part, cudaStream_t stream);

/* y += alpha*A*x over the non-empty rows of a matrix A whose rows are mostly
 * empty: C holds them (C's row j is A's row rows[j], sharing A's colind and
 * val), t = alpha*C*x (C->nrows entries of scratch), then y[rows[j]] += t[j]. */
cudaError_t hisp_cuda_launch_csr_rows(const hisp_cuda_csr *C, const int32_t *rows, double alpha,
                                      const void *x, void *t, void *y, cudaStream_t stream);

/* Transpose of A into Tr (A with 32-bit indices and base 0; same type and width; Tr's row pointers,
 * colind and val allocated). phase 0: cnt[c] += entries of column c (cnt zeroed, ncols ints); phase
 * 1: scatter, cnt (zeroed again) counting the entries placed per column. Tr's arrays are written
 * through its const pointers. */
cudaError_t hisp_cuda_launch_transpose(const hisp_cuda_csr *A, const hisp_cuda_csr *Tr, void *cnt,
                                       int phase, cudaStream_t stream);

/* The block plan on the device from device row pointers (64-bit or 32-bit,
 * base 0 or 1), kernels_cuda/csr_plan.cu: the scratch it needs; the
 * blocks, split rows and partial-sum slots it makes (tot, after a wait);
 * then the blocks and splits written into arrays of those sizes. */
cudaError_t hisp_cuda_plan_scratch(int64_t n, size_t *bytes);
cudaError_t hisp_cuda_plan_count(const void *rowptr, int ptr64, int base, int64_t n, int64_t cap,
                                 int64_t rowcap, int64_t split, void *scratch, size_t bytes,
                                 unsigned tot[3], cudaStream_t stream);
cudaError_t hisp_cuda_plan_fill(const void *rowptr, int ptr64, int base, int64_t n, int64_t cap,
                                int64_t rowcap, int64_t split, const void *scratch,
                                hisp_cuda_block *blocks, int64_t nb, hisp_cuda_split *splits,
                                cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
