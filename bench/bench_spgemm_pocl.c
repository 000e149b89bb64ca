/* Why a CPU OpenCL device computes SpGEMM on the host: C = A*A of one
 * Matrix Market file through hisp_matrix_multiply on the OpenCL backend's
 * first device, timed as it runs (a CPU device: the host phases) and with
 * the device kernels forced (the test hook hispi_spgemm_cpu_kernels), each
 * the median wall time of --repeat calls; the two C's compared bit for bit.
 * One line of Markdown per run:
 *   | file | nnz(C) | host ms | kernels ms | kernels / host | same bits |
 */
#include "common.h"

#include <stdlib.h>
#include <string.h>

extern int hispi_spgemm_cpu_kernels; /* core/ops/spgemm_dev.c */

static const char prog[] = "bench_spgemm_pocl";
static const char help[] = "usage: bench_spgemm_pocl FILE.mtx [--repeat N]\n"
                           "C = A*A on the OpenCL backend's first device (PoCL on a CPU):\n"
                           "the host phases against the device kernels, median wall ms.\n"
                           "  --repeat N   timed calls of each (default 5)\n"
                           "  --help       this text\n";

static int fail(hisp_context ctx, hisp_status s, const char *what)
{
    hisp_error_info e = {0};
    if (hisp_context_last_error(ctx, &e)) e.message = "";
    fprintf(stderr, "%s: %s: %s: %s\n", prog, what, hisp_status_string(s), e.message);
    return 1;
}

/* The median of n products (the last one's C kept in *C). */
static hisp_status timed(hisp_context ctx, hisp_matrix A, int n, double *ms, hisp_matrix *C)
{
    double *t = malloc((size_t)n * sizeof *t);
    if (!t) return HISP_ERR_OUT_OF_HOST_MEMORY;
    hisp_status s = HISP_SUCCESS;
    for (int i = 0; i < n && !s; i++) {
        hisp_matrix_destroy(C);
        double t0 = bench_now_ms();
        s = hisp_matrix_multiply(HISP_OP_N, A, HISP_OP_N, A, C);
        if (!s) s = hisp_context_synchronize(ctx);
        t[i] = bench_now_ms() - t0;
    }
    *ms = s ? 0 : bench_median(t, n);
    free(t);
    return s;
}

static bool same(hisp_matrix C, hisp_matrix D)
{
    hisp_matrix_info a, b;
    const int64_t *pa, *pb;
    const int32_t *ca, *cb;
    const void *va, *vb;
    if (hisp_matrix_get_info(C, &a) || hisp_matrix_get_info(D, &b) || a.nnz != b.nnz ||
        hisp_matrix_host_arrays(C, &pa, NULL, &ca, &va) ||
        hisp_matrix_host_arrays(D, &pb, NULL, &cb, &vb))
        return false;
    return !memcmp(pa, pb, ((size_t)a.nrows + 1) * 8) && !memcmp(ca, cb, (size_t)a.nnz * 4) &&
           !memcmp(va, vb, (size_t)a.nnz * hisp_type_size(a.type));
}

int main(int argc, char **argv)
{
    static const opts_def defs[] = {{"--repeat", true}, OPTS_HELP_DEFS, {0, 0}};
    const char *val[4] = {0}, *file = NULL;
    int rc = opts_parse(prog, argc, argv, defs, help, val, &file), repeat = 5;
    if (rc) return rc == OPTS_HELP_SHOWN ? 0 : 1;
    if (!file) return opts_usage_error(prog, "need a FILE.mtx");
    if (val[0] && opts_int(prog, "--repeat", val[0], 1, 1000, &repeat)) return 1;
    hisp_context ctx = NULL;
    hisp_matrix A = NULL, C = NULL, D = NULL;
    if (hisp_context_create(&ctx)) return 1;
    hisp_status s = hisp_context_set_backend(ctx, HISP_BACKEND_OPENCL, 0);
    if (!s) s = hisp_matrix_read_mtx(ctx, file, HISP_F64, &A, NULL);
    if (!s) s = hisp_matrix_convert(A, HISP_FORMAT_CSR);
    double host = 0, kern = 0;
    if (!s) s = timed(ctx, A, repeat, &host, &C);
    hispi_spgemm_cpu_kernels = 1;
    if (!s) s = timed(ctx, A, 1, &kern, &D); /* the kernels' build */
    if (!s) s = timed(ctx, A, repeat, &kern, &D);
    hisp_matrix_info ic = {0};
    if (!s) s = hisp_matrix_get_info(C, &ic);
    if (s) return fail(ctx, s, file);
    const char *name = strrchr(file, '/');
    printf("| %s | %lld | %.1f | %.1f | %.1f | %s |\n", name ? name + 1 : file, (long long)ic.nnz,
           host, kern, kern / host, same(C, D) ? "yes" : "NO");
    hisp_matrix_destroy(&A), hisp_matrix_destroy(&C), hisp_matrix_destroy(&D);
    hisp_context_destroy(&ctx);
    return 0;
}
