#include "fixture_solver.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void test_hcsr_free(test_hcsr *H)
{
    free(H->ptr), free(H->col), free(H->val);
    memset(H, 0, sizeof *H);
}

hisp_type test_double_type(hisp_type t)
{
    switch (t) {
    case HISP_F32:
        return HISP_F64;
    case HISP_C32:
        return HISP_C64;
    case HISP_Q32:
        return HISP_Q64;
    case HISP_B3X3_F32:
        return HISP_B3X3_F64;
    default:
        return t;
    }
}

bool test_is32(hisp_type t)
{
    return test_double_type(t) != t;
}

test_hcsr test_hcsr_of(hisp_context ctx, hisp_matrix A)
{
    CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_CSR));
    hisp_matrix_info mi;
    CK_OK(ctx, hisp_matrix_get_info(A, &mi));
    ck_assert(mi.format == HISP_FORMAT_CSR);
    const int64_t *p;
    const int32_t *r, *c;
    const void *v;
    CK_OK(ctx, hisp_matrix_host_arrays(A, &p, &r, &c, &v));
    int ec = hisp_type_components(mi.type);
    test_hcsr H = {test_double_type(mi.type), mi.nrows, mi.ncols, mi.nnz, NULL, NULL, NULL};
    H.ptr = malloc((size_t)(H.nrows + 1) * sizeof *H.ptr);
    H.col = malloc((size_t)(H.nnz + 1) * sizeof *H.col);
    H.val = malloc((size_t)(H.nnz * ec + 1) * sizeof *H.val);
    ck_assert(H.ptr && H.col && H.val);
    memcpy(H.ptr, p, (size_t)(H.nrows + 1) * sizeof *H.ptr);
    memcpy(H.col, c, (size_t)H.nnz * sizeof *H.col);
    test_from_type(mi.type, v, H.val, H.nnz * ec); /* f32 entries widened exactly */
    return H;
}

test_hcsr test_hcsr_generate(hisp_context ctx, hisp_gen_kind kind, int64_t n)
{
    hisp_gen_params p;
    hisp_gen_defaults(kind, &p);
    p.n = n;
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_generate(ctx, &p, HISP_F64, &A));
    test_hcsr H = test_hcsr_of(ctx, A);
    hisp_matrix_destroy(&A);
    return H;
}

bool test_hcsr_file(hisp_context ctx, const char *name, const char *what, bool say, test_hcsr *H)
{
    const char *dir = test_matrix_dir();
    if (!dir) {
        if (say) test_skip_no_matrices(what);
        return false;
    }
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "r");
    if (!fp) {
        if (say) test_skip("%s: %s is missing", what, path);
        return false;
    }
    fclose(fp);
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_read_mtx(ctx, path, HISP_F64, &A, NULL));
    *H = test_hcsr_of(ctx, A);
    hisp_matrix_destroy(&A);
    return true;
}

hisp_matrix test_hcsr_matrix(hisp_context ctx, const test_hcsr *H, hisp_type t, hisp_format f)
{
    ck_assert(test_double_type(t) == H->type);
    void *v = test_to_type(t, H->val, H->nnz * hisp_type_components(H->type));
    hisp_matrix A = NULL, B = NULL;
    CK_OK(ctx, hisp_matrix_create_csr(ctx, t, H->nrows, H->ncols, H->ptr, H->col, v, &A));
    free(v);
    if (f == HISP_FORMAT_CSR) return A;
    CK_OK(ctx, hisp_matrix_duplicate(A, f, &B));
    hisp_matrix_destroy(&A);
    return B;
}

void *test_to_type(hisp_type t, const double *v, int64_t count)
{
    bool f = test_is32(t);
    void *o = malloc((size_t)(count + 1) * (f ? 4 : 8));
    ck_assert_ptr_nonnull(o);
    for (int64_t i = 0; i < count; i++)
        if (f)
            ((float *)o)[i] = (float)v[i];
        else
            ((double *)o)[i] = v[i];
    return o;
}

void test_from_type(hisp_type t, const void *o, double *v, int64_t count)
{
    bool f = test_is32(t);
    for (int64_t i = 0; i < count; i++)
        v[i] = f ? ((const float *)o)[i] : ((const double *)o)[i];
}

hisp_vector test_vector_of(hisp_context ctx, hisp_type vt, int64_t n, const double *v)
{
    hisp_vector x = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, vt, n, &x));
    void *o = test_to_type(vt, v, n * hisp_type_components(vt));
    CK_OK(ctx, hisp_vector_write(x, o));
    free(o);
    return x;
}

void test_vector_values(hisp_context ctx, hisp_vector x, hisp_type vt, int64_t n, double *v)
{
    int64_t count = n * hisp_type_components(vt);
    void *o = malloc((size_t)(count + 1) * 8);
    ck_assert_ptr_nonnull(o);
    CK_OK(ctx, hisp_vector_read(x, o));
    test_from_type(vt, o, v, count);
    free(o);
}

hisp_solver test_solver(hisp_context ctx, hisp_solver_method m, bool jacobi, double rtol,
                        int64_t maxit)
{
    hisp_solver s = NULL;
    CK_OK(ctx, hisp_solver_create(ctx, m, &s));
    CK_OK(ctx, hisp_solver_set_tolerances(s, rtol, 0));
    CK_OK(ctx, hisp_solver_set_max_iterations(s, maxit));
    CK_OK(ctx, hisp_solver_set_preconditioner(s, jacobi ? HISP_PRECOND_JACOBI : HISP_PRECOND_NONE));
    return s;
}

double test_hcsr_residual(const test_hcsr *H, const double *b, const double *x)
{
    double rr = 0, bb = 0;
    for (int64_t i = 0; i < H->nrows; i++) {
        double r = b[i];
        for (int64_t e = H->ptr[i]; e < H->ptr[i + 1]; e++)
            r -= H->val[e] * x[H->col[e]];
        rr += r * r, bb += b[i] * b[i];
    }
    return sqrt(rr / bb);
}
