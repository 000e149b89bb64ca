/* Matrix Market reading and writing through the public API, wall time per
 * call (bench/mm_speed.sh runs it beside fast_matrix_market):
 *
 *   bench_mm read FILE [REPEATS]        hisp_matrix_read_mtx, f64
 *   bench_mm write FILE OUT [REPEATS]   hisp_matrix_write_mtx of FILE's matrix
 *
 * One line per call: "hisp read|write SECONDS"; then the median. The thread
 * count is the context's threads option (HISP_OPTIONS=threads=N). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "hisp.h"

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    bool write = argc >= 4 && strcmp(argv[1], "write") == 0;
    if (argc < 3 || (!write && strcmp(argv[1], "read") != 0)) {
        fprintf(stderr, "usage: bench_mm read FILE [REPEATS] | write FILE OUT [REPEATS]\n");
        return 2;
    }
    int reps = argc > (write ? 4 : 3) ? atoi(argv[write ? 4 : 3]) : 5;
    if (reps < 1 || reps > 100) reps = 5;
    hisp_context ctx = NULL;
    if (hisp_context_create(&ctx)) return 1;
    hisp_matrix A = NULL;
    double t[100];
    for (int r = 0; r < (write ? 1 : reps); r++) {
        hisp_matrix_destroy(&A);
        double t0 = bench_now_ms();
        hisp_status s = hisp_matrix_read_mtx(ctx, argv[2], HISP_F64, &A, NULL);
        t[r] = (bench_now_ms() - t0) / 1e3;
        if (s) {
            hisp_error_info e;
            if (hisp_context_last_error(ctx, &e)) return 1;
            fprintf(stderr, "bench_mm: %s: %s\n", argv[2], e.message);
            return 1;
        }
        if (!write) printf("hisp read %.4f\n", t[r]);
    }
    for (int r = 0; write && r < reps; r++) {
        double t0 = bench_now_ms();
        hisp_status s = hisp_matrix_write_mtx(A, argv[3]);
        t[r] = (bench_now_ms() - t0) / 1e3;
        if (s) {
            fprintf(stderr, "bench_mm: writing %s failed\n", argv[3]);
            return 1;
        }
        printf("hisp write %.4f\n", t[r]);
    }
    hisp_matrix_info info;
    if (hisp_matrix_get_info(A, &info)) return 1;
    qsort(t, (size_t)reps, sizeof *t, cmp);
    printf("hisp %s median %.4f s (%d calls, %lld x %lld, %lld entries)\n",
           write ? "write" : "read", t[reps / 2], reps, (long long)info.nrows,
           (long long)info.ncols, (long long)info.nnz);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
    return 0;
}
