/* Helpers of the solver benchmarks; see common_solve.h. */
#include "common_solve.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

uint64_t bs_mix(uint64_t seed, uint64_t i)
{
    uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double bs_uniform(uint64_t seed, uint64_t i)
{
    return (double)(bs_mix(seed, i) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

void bs_fill_uniform(double *a, int64_t n, uint64_t seed)
{
    for (int64_t i = 0; i < n; i++)
        a[i] = bs_uniform(seed, (uint64_t)i);
}

void *bs_alloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "out of host memory (%zu bytes)\n", bytes);
        exit(3);
    }
    return p;
}

double *bs_doubles(int64_t n)
{
    return bs_alloc((size_t)(n > 0 ? n : 1) * sizeof(double));
}

const char *bs_fx(double v, char *s, const char *fmt)
{
    if (isnan(v) || isinf(v))
        snprintf(s, 32, "-");
    else
        snprintf(s, 32, fmt, v);
    return s;
}

void bs_lsq_matrix(int64_t m, int64_t ncols, int npr, uint64_t seed, int64_t **rowptr,
                   int32_t **colind, double **vals)
{
    int64_t nnz = m * npr, band = ncols / npr;
    int64_t *rp = bs_alloc((size_t)(m + 1) * sizeof *rp);
    int32_t *ci = bs_alloc((size_t)nnz * sizeof *ci);
    double *v = bs_alloc((size_t)nnz * sizeof *v);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < m; i++) {
        rp[i] = i * npr;
        for (int k = 0; k < npr; k++) {
            uint64_t e = (uint64_t)(i * npr + k);
            ci[i * npr + k] = (int32_t)(k * band + (int64_t)(bs_mix(seed, e) % (uint64_t)band));
            v[i * npr + k] = bs_uniform(seed + 1, e);
        }
    }
    rp[m] = nnz;
    *rowptr = rp;
    *colind = ci;
    *vals = v;
}

static void bs_message(hisp_context ctx, bs_solve *o, hisp_status s)
{
    hisp_error_info e = {0};
    o->status = s;
    if (hisp_context_last_error(ctx, &e) == HISP_SUCCESS && e.message)
        snprintf(o->message, sizeof o->message, "%s", e.message);
}

#define BS_TRY(call)                                                                               \
    do {                                                                                           \
        hisp_status s_ = (call);                                                                   \
        if (s_ != HISP_SUCCESS) {                                                                  \
            bs_message(ctx, o, s_);                                                                \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

hisp_status bs_solve_fixed(hisp_context ctx, hisp_solver_method method, hisp_matrix A,
                           hisp_vector b, hisp_vector x, int64_t iters, int restart, int warm_iters,
                           int repeat, bs_solve *o)
{
    memset(o, 0, sizeof *o);
    o->first_ms = o->wall_ms = o->ms_per_it = o->setup_ms = NAN;
    static const double zero[4] = {0, 0, 0, 0}; /* one entry of any double type */
    hisp_solver s = NULL;
    double t0 = 0;
    double *wall = bs_alloc((size_t)(repeat > 0 ? repeat : 1) * sizeof *wall);
    BS_TRY(hisp_solver_create(ctx, method, &s));
    BS_TRY(hisp_solver_set_tolerances(s, BS_RTOL, BS_ATOL));
    if (restart > 0) BS_TRY(hisp_solver_set_restart(s, restart));
    BS_TRY(hisp_solver_set_max_iterations(s, warm_iters));
    BS_TRY(hisp_vector_fill(x, hisp_scalar_host(zero)));
    BS_TRY(hisp_context_synchronize(ctx));
    t0 = bench_now_ms();
    BS_TRY(hisp_solver_solve(s, A, b, x, &o->info));
    BS_TRY(hisp_context_synchronize(ctx));
    o->first_ms = bench_now_ms() - t0;
    BS_TRY(hisp_solver_set_max_iterations(s, iters));
    for (int r = 0; r < repeat; r++) {
        BS_TRY(hisp_vector_fill(x, hisp_scalar_host(zero)));
        BS_TRY(hisp_context_synchronize(ctx));
        BS_TRY(hisp_context_reset_transfers(ctx));
        t0 = bench_now_ms();
        BS_TRY(hisp_solver_solve(s, A, b, x, &o->info));
        BS_TRY(hisp_context_synchronize(ctx));
        wall[r] = bench_now_ms() - t0;
    }
    hisp_transfer_stats ts;
    BS_TRY(hisp_context_transfers(ctx, &ts));
    o->h2d_bytes = ts.h2d_bytes;
    o->d2h_bytes = ts.d2h_bytes;
    o->wall_ms = bench_median(wall, repeat);
    o->setup_ms = o->info.setup_ms;
    o->ms_per_it = o->info.iterations > 0 ? o->wall_ms / (double)o->info.iterations : NAN;
done:
    hisp_solver_destroy(&s);
    free(wall);
    return o->status;
}

double bs_spmv_wall(hisp_context ctx, hisp_op op, hisp_matrix A, hisp_vector x, hisp_vector y,
                    int repeat, hisp_status *st)
{
    const double one = 1, zero = 0;
    double *ms = bs_alloc((size_t)(repeat > 0 ? repeat : 1) * sizeof *ms), med = NAN;
    hisp_status s = HISP_SUCCESS;
    for (int i = 0; i < 2 && !s; i++)
        s = hisp_spmv(ctx, op, &one, A, x, &zero, y);
    if (!s) s = hisp_context_synchronize(ctx);
    for (int i = 0; i < repeat && !s; i++) {
        double t0 = bench_now_ms();
        s = hisp_spmv(ctx, op, &one, A, x, &zero, y);
        if (!s) s = hisp_context_synchronize(ctx);
        ms[i] = bench_now_ms() - t0;
    }
    if (!s) med = bench_median(ms, repeat);
    free(ms);
    if (st) *st = s;
    return med;
}

double bs_rel_diff(const double *a, const double *b, int64_t n)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = a[i] - b[i];
        if (isnan(d)) return NAN;
        num += d * d;
        den += b[i] * b[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

const char *bs_status_word(hisp_status s)
{
    return s == HISP_ERR_UNSUPPORTED ? "unsupported" : hisp_status_string(s);
}
