/* Plain references of the Krylov methods (tests/solver_oracle.c): textbook
 * preconditioned CG and BiCGSTAB in double on a host CSR, the tests' oracle
 * for hisp_solver_solve. Independent of the space code (ksp.h): one loop
 * per method, the residual norm checked every iteration against
 * max(rtol * ||b||, atol). Arithmetic as hisp.h documents it: A acts from
 * the left (complex / Hamilton products a*x), a scalar multiplies a vector
 * from the right, dot(x, y) = sum conj(x_i) y_i, Jacobi z_i = d_i^-1 * r_i.
 * Built into the tests only. */
#ifndef HISPI_SOLVER_REF_H
#define HISPI_SOLVER_REF_H

#include "hispi.h"

/* A square CSR: type f64, c64, q64 (entries of 1, 2, 4 doubles; vectors of
 * n entries of that type) or b3x3_f64 (row-major 3x3 blocks; vectors of 3n
 * doubles). n rows = n columns (block rows for b3x3). */
typedef struct {
    hisp_type type;
    int64_t n;
    const int64_t *rowptr;
    const int32_t *colind;
    const double *val;
} hispi_ref_csr;

typedef struct {
    hisp_stop_reason reason; /* CONVERGED, MAX_ITERATIONS, BREAKDOWN, INDEFINITE, NAN */
    int64_t iterations;      /* the iterations that made x */
    double residual_norm;    /* ||r|| of x as the recurrence carries it */
    double rhs_norm;         /* ||b|| */
} hispi_ref_info;

/* The CSR form of a host matrix of type f64, c64, q64, b3x3_f64 (borrowed:
 * valid while s is). */
HISPI_LOCAL hisp_status hispi_ref_from_sparse(hisp_context ctx, const hispi_sparse *s,
                                              hispi_ref_csr *A);

/* Solve A x = b from the guess in x (overwritten; on INDEFINITE and
 * BREAKDOWN x is the last iterate before the failing step). jacobi: M =
 * diag(A) (b3x3: its diagonal blocks); a zero diagonal entry or a singular
 * block is HISP_ERR_INVALID_ARGUMENT naming the (1-based) row. BiCGSTAB:
 * right preconditioning, f64 and c64 only. */
HISPI_LOCAL hisp_status hispi_ref_cg(hisp_context ctx, const hispi_ref_csr *A, int jacobi,
                                     double rtol, double atol, int64_t maxit, const double *b,
                                     double *x, hispi_ref_info *info);
HISPI_LOCAL hisp_status hispi_ref_bicgstab(hisp_context ctx, const hispi_ref_csr *A, int jacobi,
                                           double rtol, double atol, int64_t maxit, const double *b,
                                           double *x, hispi_ref_info *info);

#endif
