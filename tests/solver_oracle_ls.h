/* Plain host references of GMRES(m) and LSQR (tests/solver_oracle_ls.c):
 * textbook loops in double (complex double for GMRES on complex matrices)
 * over a host CSR matrix, independent of the solver spaces, with the same
 * stopping rule as the library (hisp.h "Iterative solvers"). The tests
 * compare every backend against them. Built into the tests only. */
#ifndef HISPI_REF_LS_H
#define HISPI_REF_LS_H

#include "hispi.h"

typedef struct {
    int64_t nrows, ncols;
    const int64_t *rowptr;
    const int32_t *colind;
    const double *vals; /* nnz entries; complex: (re, im) pairs */
    int cplx;
} hispi_ref_csr;

typedef struct {
    hisp_stop_reason reason;
    int64_t iterations;
    double residual_norm; /* the method's estimate, as hisp_solve_info */
    double rhs_norm;
} hispi_ref_result;

/* GMRES(m) with right Jacobi preconditioning (jacobi != 0: M = diag(A),
 * every diagonal entry must be nonzero). b and x (guess in, solution out)
 * hold nrows entries ((re, im) pairs when A->cplx). */
HISPI_LOCAL hisp_status hispi_ref_gmres(const hispi_ref_csr *A, const double *b, double *x, int m,
                                        int jacobi, double rtol, double atol, int64_t maxit,
                                        hispi_ref_result *res);
/* LSQR for min ||A x - b||^2 + damp^2 ||x||^2 (real A), with the column
 * scaling D = diag(1 / ||A(:, j)||) when colscale (x = x0 + D y), as
 * core/solver/lsqr.c documents; residual: ||D (A^T r - damp^2 x)||,
 * rhs_norm ||D A^T b||. */
HISPI_LOCAL hisp_status hispi_ref_lsqr(const hispi_ref_csr *A, const double *b, double *x,
                                       double damp, int colscale, double rtol, double atol,
                                       int64_t maxit, hispi_ref_result *res);

#endif
