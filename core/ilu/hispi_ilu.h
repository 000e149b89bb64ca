/* Incomplete factorisations (hisp.h HISP_PRECOND_ILU0, HISP_PRECOND_IC0):
 * ILU(0) A ~ L U and IC(0) A ~ L D L^H on A's pattern (with its diagonal),
 * applied as z = U^-1 L^-1 x. Not installed.
 *
 *   ilu_factor.c  the factorisation on the host in double (the oracle and,
 *                 today, every backend's setup): the pattern cleaned
 *                 (sorted, duplicates summed, missing diagonals filled),
 *                 tiny pivots shifted;
 *   ilu_apply.c   the triangular solves: on the host (reference backend),
 *                 or level-scheduled kernels (kernels/ilu.cl) where the
 *                 backend has run-time kernels. */
#ifndef HISPI_ILU_H
#define HISPI_ILU_H

#include "../hispi.h"

/* The factors in double (2 doubles per entry for complex types): L strict
 * lower with a unit diagonal, U strict upper, d U's diagonal (IC(0): U =
 * D L^H, so that both apply alike). Row-major CSR, columns ascending. */
typedef struct {
    hisp_type t; /* the matrix's entry type: f32, f64, c32, c64 */
    int64_t n;
    int64_t *lp, *up;
    int32_t *lc, *uc;
    double *lv, *uv, *d;
    int64_t shifted;   /* pivots replaced (hisp_solve_info.precond_shifted) */
    int64_t filled;    /* diagonal entries added to the pattern */
    double diag_shift; /* IC(0): A + diag_shift * diag(|A|) was factorised */
} hispi_ilu_factors;

/* The factors of square A (CSR-convertible, f32, f64, c32 or c64), ic: IC(0)
 * (A Hermitian; only its lower triangle is read). Other types or a
 * rectangular A: HISP_ERR_UNSUPPORTED / _INVALID_ARGUMENT with the reason. */
HISPI_LOCAL hisp_status hispi_ilu_factor(hisp_matrix A, bool ic, hispi_ilu_factors *f);
HISPI_LOCAL void hispi_ilu_factors_free(hispi_ilu_factors *f);
/* x = U^-1 L^-1 x on the host (n entries of 1 or 2 doubles). */
HISPI_LOCAL void hispi_ilu_solve_host(const hispi_ilu_factors *f, double *x);

/* The preconditioner on a context: the factors where the solves run. */
typedef struct hispi_ilu hispi_ilu;
HISPI_LOCAL hisp_status hispi_ilu_create(hisp_matrix A, bool ic, hispi_ilu **out);
/* z = M^-1 x (vectors of A's vector type, of the context's backend). */
HISPI_LOCAL hisp_status hispi_ilu_apply(hispi_ilu *p, hisp_vector x, hisp_vector z);
HISPI_LOCAL const hispi_ilu_factors *hispi_ilu_report(const hispi_ilu *p);
HISPI_LOCAL void hispi_ilu_destroy(hispi_ilu **p);

#endif
