/* The GPU CSR work plan (core/matrix/csr_plan.c), a core service of the
 * backend contract (core/backend/backend.h): the CUDA and OpenCL block
 * kernels run it. Includes only the contract's basics. */
#ifndef HISPI_BACKEND_CSR_PLAN_H
#define HISPI_BACKEND_CSR_PLAN_H

#include "backend/basics.h"

/* One thread block / work-group of the balanced-block CSR SpMV kernels:
 * entries [k0, k1). slot == HISPI_CSR_STREAM: consecutive rows [row0, row1)
 * holding at most cap entries; slot >= -1: a chunk of the long row row0, its
 * sum going to partial[slot] (slot >= 0) or, as the whole row, to y (-1).
 * aux is the backend's (CUDA: a column window for op = T). The layout (24
 * bytes) is the device kernels' block struct. */
typedef struct {
    int64_t k0, k1;
    int32_t row0, row1, slot, aux;
} hispi_csr_block;
#define HISPI_CSR_STREAM (-2)

/* A row split into n chunks: its partial sums are partial[slot0 .. slot0+n). */
typedef struct {
    int32_t row, slot0, n, pad;
} hispi_csr_split;

typedef struct {
    hispi_csr_block *blocks;
    int64_t nblocks;
    hispi_csr_split *splits;
    int64_t nsplits;
    int64_t nslots; /* partial sums needed */
} hispi_csr_plan;

/* Cut the rows into blocks of comparable work: consecutive short rows up to
 * cap entries and rowcap rows per block; a row longer than cap/4 gets a
 * block of its own, or chunks of `split` entries plus a split entry. */
HISPI_LOCAL hisp_status hispi_csr_plan_build(hisp_context ctx, const int64_t *rowptr, int64_t nrows,
                                             int64_t cap, int64_t rowcap, int64_t split,
                                             hispi_csr_plan *p);
HISPI_LOCAL void hispi_csr_plan_free(hispi_csr_plan *p);

#endif
