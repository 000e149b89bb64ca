/* Incomplete factorisations (hisp.h HISP_PRECOND_ILU0, HISP_PRECOND_IC0):
 * ILU(0) A ~ L U and IC(0) A ~ L D L^H on A's pattern (with its diagonal),
 * applied as z = U^-1 L^-1 x. Not installed.
 *
 *   ilu_factor.c  the factorisation on the host in double (the oracle, the
 *                 reference backend's and CPU devices' setup, and the GPUs'
 *                 where the device cannot): the pattern cleaned (sorted,
 *                 duplicates summed, missing diagonals filled), tiny pivots
 *                 shifted; row by row (exact), or by Chow and Patel's
 *                 fixed-point sweeps as on the device; the triangular solves
 *                 exact or by Jacobi sweeps;
 *   ilu_device.c  the factorisation by sweeps on a GPU (kernels/ilu.cl) over
 *                 A's device pattern where it is clean;
 *   ilu_apply.c   the preconditioner: where it is set up, and the
 *                 triangular solves on the host or the device (Jacobi
 *                 sweeps, or level-scheduled exact solves). */
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
    int sweeps;        /* the fixed-point sweeps that made them (0: exact) */
} hispi_ilu_factors;

/* The factors of square A (CSR-convertible, f32, f64, c32 or c64), ic: IC(0)
 * (A Hermitian; only its lower triangle is read); sweeps > 0: by that many
 * fixed-point sweeps (exact where an entry becomes infinite: f->sweeps 0).
 * Other types or a rectangular A: HISP_ERR_UNSUPPORTED / _INVALID_ARGUMENT
 * with the reason. */
HISPI_LOCAL hisp_status hispi_ilu_factor(hisp_matrix A, bool ic, int sweeps, hispi_ilu_factors *f);
HISPI_LOCAL void hispi_ilu_factors_free(hispi_ilu_factors *f);
/* x = U^-1 L^-1 x on the host (n entries of 1 or 2 doubles). */
HISPI_LOCAL void hispi_ilu_solve_host(const hispi_ilu_factors *f, double *x);
/* x ~ U^-1 L^-1 x by `sweeps` Jacobi sweeps of each triangle from y = x
 * and z = D^-1 y (work: 2 n entries). */
HISPI_LOCAL void hispi_ilu_sweeps_host(const hispi_ilu_factors *f, int sweeps, double *x,
                                       double *work);

/* The factorisation by fixed-point sweeps on a GPU over A's device CSR
 * (f32, f64, c32, c64): *ptr, *col (A's pattern, copied), *dpos (the diagonal's
 * place in each row), *val (L below the diagonal, U on and above it) as
 * device buffers; r the report (shifted, diag_shift). *done false (and
 * nothing made) where A's pattern needs the host's cleaning (a row
 * unsorted, a duplicate, a missing diagonal, IC: an entry without its
 * mirror) or an entry became infinite. */
typedef struct {
    int64_t shifted, filled;
    double diag_shift;
    int factor_sweeps, solve_sweeps; /* what ran; 0: exact */
    hisp_type t;
} hispi_ilu_info;
HISPI_LOCAL hisp_status hispi_ilu_dev_factor(hisp_matrix A, bool ic, int sweeps, void *b[4],
                                             hispi_ilu_info *r, bool *done);
/* The work-group of kernels/ilu.cl, and its kernel `name` for entries of t. */
#define HISPI_ILU_GS 128
/* kernels/ilu.cl's build options for entries of type t (f32, f64, c32, c64). */
HISPI_LOCAL void hispi_ilu_kopts(char *opts, size_t size, hisp_type t);
HISPI_LOCAL hisp_status hispi_ilu_kernel(hisp_context ctx, hisp_type t, const char *name, void **k);
/* Kernel k over n work-items of work-groups of HISPI_ILU_GS (none for n <= 0). */
HISPI_LOCAL hisp_status hispi_ilu_launch(hisp_context ctx, void *k, const hispi_karg *a, int na,
                                         int64_t n);
/* A device buffer of the preconditioner (at least 1 byte). */
HISPI_LOCAL hisp_status hispi_ilu_buf(hisp_context ctx, size_t bytes, void **b);
/* Test hooks: 1 makes CPU devices take the GPUs' paths; k > 0 fails the
 * k-th device buffer of hispi_ilu_buf as HISP_ERR_OUT_OF_DEVICE_MEMORY. */
extern int hispi_ilu_gpu_paths;
extern long hispi_ilu_dev_fail_after;

/* The preconditioner on a context: the factors where the solves run. */
typedef struct hispi_ilu hispi_ilu;
HISPI_LOCAL hisp_status hispi_ilu_create(hisp_matrix A, bool ic, hispi_ilu **out);
/* z = M^-1 x (vectors of A's vector type, of the context's backend). */
HISPI_LOCAL hisp_status hispi_ilu_apply(hispi_ilu *p, hisp_vector x, hisp_vector z);
HISPI_LOCAL const hispi_ilu_info *hispi_ilu_report(const hispi_ilu *p);
HISPI_LOCAL void hispi_ilu_destroy(hispi_ilu **p);

#endif
