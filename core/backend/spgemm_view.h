/* The sparse matrix-matrix product as its phases receive it (part of the
 * backend contract, core/backend/backend.h): C = op(A)*op(B) with both
 * operands already in CSR orientation. The host phases (core/ops/spgemm_ref.c)
 * take exactly these views, so that a backend slot can take over the
 * symbolic and numeric phases later without a change in core/ops/spgemm.c;
 * no backend has such a slot yet: the device path (core/ops/spgemm_dev.c,
 * the product and a plan's numeric pass) takes the same views and runs
 * through the backends' run-time kernels.
 * Includes only hisp.h. */
#ifndef HISPI_SPGEMM_VIEW_H
#define HISPI_SPGEMM_VIEW_H

#include "hisp.h"

#include <stdbool.h>
#include <stdint.h>

/* One operand op(X) in CSR: nrows x ncols, rows rowptr[i]..rowptr[i+1] with
 * columns sorted. Entry k's value is val[perm[k]] (perm NULL: val[k]), the
 * complex conjugate of it when conj: a transpose made by a counting sort
 * keeps the position of each entry in the source array, so new values of
 * the source are read without transposing again. */
typedef struct {
    int64_t nrows, ncols, nnz;
    const int64_t *rowptr; /* nrows + 1 */
    const int32_t *colind; /* nnz */
    const void *val;       /* the source's values (entries of the product's type) */
    const int64_t *perm;   /* nnz, or NULL */
    bool conj;             /* op H of complex entries */
    /* or, for the device path only: rowptr (int64), colind (int32) and val
     * as buffers of the context's backend, read in place (the host arrays
     * above are NULL then; perm NULL, conj false) */
    const void *dev[3];
} hispi_spgemm_operand;

/* The product's arguments: op(A) is m x k, op(B) k x n, entries of type
 * (f32, f64, c32, c64). */
typedef struct {
    hisp_type type;
    hispi_spgemm_operand a, b;
} hispi_spgemm_args;

/* C in CSR (m x n): the symbolic phase writes rowptr, the numeric phases
 * colind (first product only) and val. */
typedef struct {
    int64_t *rowptr;
    int32_t *colind;
    void *val;
} hispi_spgemm_out;

#endif
