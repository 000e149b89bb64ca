/* A format's SpMV against the plain CSR reference hispi_ref_csr_spmv
 * (tests/fixture_spmv.c), for the suites spmv and sell. Apart from
 * testutil.h because it reads the library's internal host CSR. */
#ifndef HISP_FIXTURE_SPMV_H
#define HISP_FIXTURE_SPMV_H

#include "hispi.h"
#include "testutil.h"

/* y = alpha*op(A)*x + beta*y on ctx's backend against the reference on ref
 * (A's entries as CSR), for fresh x, y, alpha and beta from st; beta_mode
 * 1: beta = 0 and y starts as NaN (y must not be read); 2: beta = 1 (PoCL's
 * chunk kernels then skip the empty rows of a matrix whose rows are mostly
 * empty); 0: beta random. The error is relative to |alpha| |op(A)| |x| +
 * |beta| |y| (a plain relative error means nothing where y cancels to ~0);
 * the f32 tolerance grows with the longest row or column. what names the
 * case, how the kernel variant (may be ""). */
void test_spmv_check(hisp_context ctx, hisp_matrix A, const hispi_sparse *ref, hisp_op op,
                     int beta_mode, uint64_t *st, const char *what, const char *how);

#endif
