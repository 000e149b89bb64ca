/* A program that uses an installed hisp: y = A x for the n x n 1D Laplacian
 * (2 on the diagonal, -1 beside it) on the backend named by argv[1] (auto,
 * reference, opencl, cuda; default auto), checked against a host loop.
 * Built by CI against `scons install` through pkg-config and CMake
 * (examples/CMakeLists.txt, examples/test_install.sh; README "Using the
 * library"). Prints "ok" and exits 0 when the product is right. */
#include <hisp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int fail(hisp_context ctx, hisp_status s, const char *what)
{
    hisp_error_info e = {0};
    if (!ctx || hisp_context_last_error(ctx, &e) != HISP_SUCCESS) e.message = NULL;
    fprintf(stderr, "spmv_example: %s: %s%s%s\n", what, hisp_status_string(s),
            e.message && *e.message ? ": " : "", e.message ? e.message : "");
    return 1;
}

#define CHECK(call)                                                                                \
    do {                                                                                           \
        hisp_status s_ = (call);                                                                   \
        if (s_ != HISP_SUCCESS) return fail(ctx, s_, #call);                                       \
    } while (0)

int main(int argc, char **argv)
{
    enum { N = 1000 };
    static int64_t rowptr[N + 1];
    static int32_t colind[3 * N];
    static double val[3 * N], x[N], y[N], want[N];
    int64_t nnz = 0;
    for (int i = 0; i < N; i++) {
        rowptr[i] = nnz;
        for (int j = i - 1; j <= i + 1; j++)
            if (j >= 0 && j < N) {
                colind[nnz] = j;
                val[nnz++] = j == i ? 2.0 : -1.0;
            }
        x[i] = (double)(i % 7) - 3.0;
    }
    rowptr[N] = nnz;
    for (int i = 0; i < N; i++) {
        want[i] = 0;
        for (int64_t k = rowptr[i]; k < rowptr[i + 1]; k++)
            want[i] += val[k] * x[colind[k]];
    }

    hisp_context ctx = NULL;
    hisp_backend_kind kind = HISP_BACKEND_AUTO;
    CHECK(hisp_context_create(&ctx));
    if (argc > 1) CHECK(hisp_backend_from_name(argv[1], &kind));
    CHECK(hisp_context_set_backend(ctx, kind, -1));
    hisp_device_info dev;
    CHECK(hisp_context_get_device(ctx, &dev));

    hisp_matrix A = NULL;
    hisp_vector vx = NULL, vy = NULL;
    const double one = 1.0, zero = 0.0;
    CHECK(hisp_matrix_create_csr(ctx, HISP_F64, N, N, rowptr, colind, val, &A));
    CHECK(hisp_vector_create(ctx, HISP_F64, N, &vx));
    CHECK(hisp_vector_create(ctx, HISP_F64, N, &vy));
    CHECK(hisp_vector_write(vx, x));
    CHECK(hisp_spmv(ctx, HISP_OP_N, &one, A, vx, &zero, vy));
    CHECK(hisp_vector_read(vy, y));

    double err = 0; /* max |y - want| by hand: the program needs no -lm */
    for (int i = 0; i < N; i++) {
        double d = y[i] > want[i] ? y[i] - want[i] : want[i] - y[i];
        if (d > err) err = d;
    }
    printf("hisp %s, %s backend (%s): y = A x, %d x %d Laplacian, max error %g\n",
           hisp_version_string(), hisp_backend_name(dev.backend), dev.name, N, N, err);
    hisp_vector_destroy(&vx);
    hisp_vector_destroy(&vy);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
    if (err > 1e-12) {
        fprintf(stderr, "spmv_example: wrong product\n");
        return 1;
    }
    printf("ok\n");
    return 0;
}
