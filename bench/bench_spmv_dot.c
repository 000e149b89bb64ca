/* CG's product and dot: q = A p then p.q as two calls (hisp_spmv,
 * hisp_vector_dot) against one pass (hispi_spmv_dot, the backend's
 * csr_spmv_dot where it has one), on the 7-point Laplacian of a g^3 grid.
 * Back to back: `repeat` calls, one synchronize, the mean per call (what a
 * solver loop sees); the dots go to a device entry (no host wait). Also a
 * CG solve of fixed length (its iterations use the fused call): ms per
 * iteration. Prints one line per measurement; run with --help for options.
 */
#include "common.h"
#include "hispi.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: bench_spmv_dot [options]\n"
               "  --backend reference|opencl|cuda  (default cuda)\n"
               "  --grid G            poisson3d grid side, G^3 rows (default 160)\n"
               "  --type f32|f64      (default f64)\n"
               "  --repeat N          calls per measurement (default 200)\n"
               "  --cg N              CG iterations timed (default 200; 0: none)\n");
}

#define TRY(call)                                                                                  \
    do {                                                                                           \
        hisp_status s_ = (call);                                                                   \
        if (s_) {                                                                                  \
            hisp_error_info e_ = {0};                                                              \
            if (hisp_context_last_error(ctx, &e_)) {                                               \
            }                                                                                      \
            fprintf(stderr, "bench_spmv_dot: %s: %s: %s\n", #call, hisp_status_string(s_),         \
                    e_.message ? e_.message : "");                                                 \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

int main(int argc, char **argv)
{
    hisp_backend_kind backend = HISP_BACKEND_CUDA;
    hisp_type t = HISP_F64;
    int64_t g = 160;
    int repeat = 200, cgit = 200;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        }
        if (!v) {
            usage(stderr);
            return 2;
        }
        i++;
        if (!strcmp(a, "--backend") && !hisp_backend_from_name(v, &backend)) continue;
        if (!strcmp(a, "--grid") && (g = atoll(v)) > 0) continue;
        if (!strcmp(a, "--type") && (!strcmp(v, "f32") || !strcmp(v, "f64"))) {
            t = strcmp(v, "f32") ? HISP_F64 : HISP_F32;
            continue;
        }
        if (!strcmp(a, "--repeat") && (repeat = atoi(v)) > 0) continue;
        if (!strcmp(a, "--cg") && (cgit = atoi(v)) >= 0) continue;
        usage(stderr);
        return 2;
    }
    hisp_context ctx = NULL;
    if (hisp_context_create(&ctx)) return 1;
    TRY(hisp_context_set_backend(ctx, backend, -1));
    hisp_device_info dev;
    TRY(hisp_context_get_device(ctx, &dev));
    hisp_gen_params gp;
    hisp_gen_defaults(HISP_GEN_POISSON3D, &gp);
    gp.n = g;
    hisp_matrix A = NULL;
    TRY(hisp_matrix_generate(ctx, &gp, t, &A));
    hisp_matrix_info mi;
    TRY(hisp_matrix_get_info(A, &mi));
    int64_t n = mi.nrows;
    size_t es = hisp_type_size(t);
    void *h = malloc((size_t)n * es);
    if (!h) return 1;
    for (int64_t i = 0; i < n; i++) {
        double u = (double)((i * 2654435761u) % 1000) / 1000.0 - 0.5;
        if (t == HISP_F64)
            ((double *)h)[i] = u;
        else
            ((float *)h)[i] = (float)u;
    }
    hisp_vector p = NULL, q = NULL, bank = NULL;
    TRY(hisp_vector_create(ctx, t, n, &p));
    TRY(hisp_vector_create(ctx, t, n, &q));
    TRY(hisp_vector_create(ctx, t, 2, &bank));
    TRY(hisp_vector_write(p, h));
    double one = 1, zero = 0;
    float onef = 1, zerof = 0;
    const void *a = t == HISP_F32 ? (const void *)&onef : (const void *)&one;
    const void *b = t == HISP_F32 ? (const void *)&zerof : (const void *)&zero;
    printf("bench_spmv_dot: %s, poisson3d %lld^3: n %lld, nnz %lld, %s, %d calls back to back\n",
           dev.name, (long long)g, (long long)n, (long long)mi.nnz, hisp_type_name(t), repeat);
    double ms[3] = {0};
    for (int m = 0; m < 3; m++) {
        for (int pass = 0; pass < 2; pass++) { /* warm-up (uploads, kernels), then timed */
            int calls = pass ? repeat : 3;
            TRY(hisp_context_synchronize(ctx));
            double t0 = bench_now_ms();
            for (int i = 0; i < calls; i++) {
                if (m < 2) TRY(hisp_spmv(ctx, HISP_OP_N, a, A, p, b, q));
                if (m == 1) TRY(hisp_vector_dot(p, q, hisp_result_entry(bank, 0)));
                if (m == 2) TRY(hispi_spmv_dot(ctx, A, p, q, hisp_result_entry(bank, 1)));
            }
            TRY(hisp_context_synchronize(ctx));
            ms[m] = (bench_now_ms() - t0) / calls;
        }
    }
    double r[2] = {0};
    if (t == HISP_F64) {
        TRY(hisp_vector_read(bank, r));
    } else {
        float rf[2];
        TRY(hisp_vector_read(bank, rf));
        r[0] = rf[0], r[1] = rf[1];
    }
    printf("spmv               %.4f ms\n", ms[0]);
    printf("spmv + dot         %.4f ms (dot %.4f ms)\n", ms[1], ms[1] - ms[0]);
    printf("spmv_dot (fused)   %.4f ms (saves %.4f ms per call)\n", ms[2], ms[1] - ms[2]);
    printf("dot: two calls %.17g, fused %.17g (relative difference %.2g)\n", r[0], r[1],
           fabs(r[0] - r[1]) / (fabs(r[0]) > 0 ? fabs(r[0]) : 1));
    if (cgit > 0) {
        hisp_solver s = NULL;
        TRY(hisp_solver_create(ctx, HISP_SOLVER_CG, &s));
        TRY(hisp_solver_set_tolerances(s, 0, 1e-300)); /* runs cgit iterations */
        TRY(hisp_solver_set_max_iterations(s, cgit));
        hisp_solve_info info;
        for (int pass = 0; pass < 2; pass++) {
            TRY(hisp_vector_fill(q, hisp_scalar_host(b)));
            TRY(hisp_solver_solve(s, A, p, q, &info));
        }
        printf("cg                 %.4f ms per iteration (%lld iterations, %.1f ms, setup %.1f)\n",
               (info.ms - info.setup_ms) / (double)(info.iterations ? info.iterations : 1),
               (long long)info.iterations, info.ms, info.setup_ms);
        hisp_solver_destroy(&s);
    }
    hisp_vector_destroy(&p);
    hisp_vector_destroy(&q);
    hisp_vector_destroy(&bank);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
    free(h);
    return 0;
}
