/* Host systems in double for the solver suites (tests/fixture_solver.c): a
 * matrix's CSR copy, generated and file matrices, the hisp matrices and
 * vectors of a type made from them, and solvers with the usual settings.
 * The suites solver, solver_truth and solver_ls check hisp's solves with
 * these against their own oracles. */
#ifndef HISP_FIXTURE_SOLVER_H
#define HISP_FIXTURE_SOLVER_H

#include "testutil.h"

/* A CSR in double: entries of f64, c64, q64 or b3x3_f64, each
 * hisp_type_components(type) doubles. */
typedef struct {
    hisp_type type;
    int64_t nrows, ncols, nnz;
    int64_t *ptr;
    int32_t *col;
    double *val;
} test_hcsr;

void test_hcsr_free(test_hcsr *H);
/* t's double type (f32 -> f64, c32 -> c64, q32 -> q64, b3x3_f32 -> b3x3_f64;
 * the others themselves) and whether t holds floats. */
hisp_type test_double_type(hisp_type t);
bool test_is32(hisp_type t);
/* The host copy of A (converted to CSR), its entries in double. */
test_hcsr test_hcsr_of(hisp_context ctx, hisp_matrix A);
/* The generator's matrix of size n, f64. */
test_hcsr test_hcsr_generate(hisp_context ctx, hisp_gen_kind kind, int64_t n);
/* The file `name` of test_matrix_dir() (a path below it) as f64; false when
 * the folder or the file is missing, recorded as skipped (what: the tests)
 * when say. */
bool test_hcsr_file(hisp_context ctx, const char *name, const char *what, bool say, test_hcsr *H);
/* H as a matrix of type t (H's type, or its float form: entries rounded),
 * in format f. */
hisp_matrix test_hcsr_matrix(hisp_context ctx, const test_hcsr *H, hisp_type t, hisp_format f);

/* ||b - H x|| / ||b|| in double from the real arrays of H: a check that
 * shares nothing with hisp. */
double test_hcsr_residual(const test_hcsr *H, const double *b, const double *x);

/* count doubles as t's scalars (malloc'd), and back. */
void *test_to_type(hisp_type t, const double *v, int64_t count);
void test_from_type(hisp_type t, const void *o, double *v, int64_t count);
/* A vector of type vt and n entries from n * components(vt) doubles; and a
 * vector's entries read into doubles. */
hisp_vector test_vector_of(hisp_context ctx, hisp_type vt, int64_t n, const double *v);
void test_vector_values(hisp_context ctx, hisp_vector x, hisp_type vt, int64_t n, double *v);

/* A solver of method m: Jacobi or no preconditioner, relative tolerance
 * rtol (atol 0), at most maxit iterations. */
hisp_solver test_solver(hisp_context ctx, hisp_solver_method m, bool jacobi, double rtol,
                        int64_t maxit);

#endif
