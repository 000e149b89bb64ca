/* The largest eigenvalue of D^-1 A (hispi_amg.h) by Lanczos's method in
 * the D inner product, from the library's SpMV and vector calls on the
 * context's backend: a level's prolongator smoothing and Chebyshev
 * smoother need it, and Gershgorin's bound can be twice too large on the
 * coarse levels (Galerkin operators with positive off-diagonal entries):
 * measured with a prototype of this hierarchy, poisson3d 96^3 CG + AMG to
 * 1e-8 took 17 iterations with Gershgorin's bound and 13 with 10 Lanczos
 * steps; 4 steps underestimate it by 11 % and the Chebyshev smoother
 * diverges on jump3d 128^3 (96 iterations against 17). The smoother's
 * upper end is 1.1 times the Ritz value plus |beta_k s_k| (s_k the last
 * component of its eigenvector of the Lanczos matrix: Zhou and Li's
 * bound), capped by Gershgorin's: the bound was 1-2 % above the largest
 * eigenvalue on poisson3d and jump3d 48^3 and 64^3 for 6 to 15 steps
 * while the Ritz value was 1-6 % below it, but 5 % below it on one
 * jump3d 12^3 (1.90 against 2.00). */
#include "hispi_amg.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t hispi_amg_hash(uint64_t seed, int64_t i)
{
    return mix(seed ^ mix((uint64_t)i + 0x9e3779b97f4a7c15ull));
}

uint64_t hispi_amg_prio(uint64_t seed, int64_t i)
{
    return hispi_amg_hash(seed, i) >> 2;
}

double hispi_amg_start_value(uint64_t seed, int64_t i)
{
    return (double)(hispi_amg_hash(seed ^ HISPI_AMG_START_SEED, i) >> 40) * 0x1p-23 - 1;
}

typedef struct {
    hisp_type t;
    int64_t n;
    uint64_t seed;
    void *h;
    atomic_llong next;
} start_job;

static void *start_worker(void *arg)
{
    start_job *j = arg;
    enum { CHUNK = 1 << 16 };
    for (;;) {
        int64_t lo = atomic_fetch_add(&j->next, CHUNK);
        if (lo >= j->n) return NULL;
        int64_t hi = lo + CHUNK < j->n ? lo + CHUNK : j->n;
        for (int64_t i = lo; i < hi; i++)
            hispi_store_real(j->t, j->h, i, hispi_amg_start_value(j->seed, i));
    }
}

void hispi_amg_start_fill(hisp_context ctx, hisp_type t, int64_t n, uint64_t seed, void *h)
{
    start_job j = {.t = t, .n = n, .seed = seed, .h = h};
    atomic_init(&j.next, 0);
    hispi_parallel(hispi_threads(ctx, (double)n), start_worker, &j);
}

/* The eigenvalues of the symmetric tridiagonal T (diagonal a, off-diagonal
 * b, k rows) below x: Sturm's count of negative pivots of T - x I. */
static int below(const double *a, const double *b, int k, double x)
{
    int c = 0;
    double q = 1;
    for (int i = 0; i < k; i++) {
        q = a[i] - x - (i ? b[i - 1] * b[i - 1] / q : 0);
        if (q == 0) q = -1e-300; /* x an eigenvalue: counted below */
        c += q < 0;
    }
    return c;
}

/* T's largest eigenvalue by bisection inside Gershgorin's interval. */
static double tridiag_max(const double *a, const double *b, int k)
{
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < k; i++) {
        double r = (i ? fabs(b[i - 1]) : 0) + (i + 1 < k ? fabs(b[i]) : 0);
        lo = fmin(lo, a[i] - r), hi = fmax(hi, a[i] + r);
    }
    for (int it = 0; it < 200 && hi - lo > 1e-14 * fmax(fabs(lo), fabs(hi)); it++) {
        double mid = (lo + hi) / 2;
        if (below(a, b, k, mid) == k)
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

/* |the last component| of T's unit eigenvector for eigenvalue x, by the
 * three-term recurrence from the first (k is small; b_j > 0). */
static double last_component(const double *a, const double *b, int k, double x)
{
    double s[HISPI_AMG_LANCZOS], nrm = 0;
    s[0] = 1;
    for (int j = 0; j + 1 < k; j++)
        s[j + 1] = ((x - a[j]) * s[j] - (j ? b[j - 1] * s[j - 1] : 0)) / b[j];
    for (int j = 0; j < k; j++)
        nrm += s[j] * s[j];
    return fabs(s[k - 1]) / sqrt(nrm);
}

/* Unnormalised: W_j = s_j v_j and R_j = D W_j, v_j the Lanczos vectors of
 * unit D-norm; U = A W_j, alpha_j = W_j^T U / s_j^2, then
 * R_{j+1} = U / s_j - alpha_j R_j / s_j - beta_j R_{j-1} / s_{j-1} in one
 * pass, W_{j+1} = D^-1 R_{j+1} with beta_{j+1}^2 = R_{j+1}^T W_{j+1} in
 * another, s_{j+1} = beta_{j+1}: one SpMV and three vector passes a step. */
static hisp_status lanczos(hisp_matrix A, hisp_vector d, hisp_vector r0, double *a, double *b,
                           int *steps, double *last)
{
    hisp_context ctx = A->ctx;
    hisp_type t = A->host.type;
    int64_t n = A->host.nrows;
    hisp_vector v[3] = {NULL, NULL, NULL}; /* W, U, and R_{j-1} */
    hisp_status s = HISP_SUCCESS;
    for (int i = 0; !s && i < 3; i++)
        s = hisp_vector_create(ctx, t, n, &v[i]);
    hisp_vector W = v[0], U = v[1], Rp = v[2], R = r0;
    int k = 0;
    hispi_amg_num x, y, z, r;
    if (!s) s = hisp_vector_div_dot(R, d, W, hisp_result_host(&r));
    double sj = sqrt(hispi_amg_value(t, &r)), sp = 1, beta = 0;
    for (int j = 0; !s && j < HISPI_AMG_LANCZOS && sj > 0 && isfinite(sj); j++) {
        (void)hispi_amg_scalar(t, &x, 1), (void)hispi_amg_scalar(t, &y, 0);
        s = hisp_spmv(ctx, HISP_OP_N, &x, A, W, &y, U);
        if (!s) s = hisp_vector_dot(U, W, hisp_result_host(&r));
        if (s) break;
        a[k] = hispi_amg_value(t, &r) / (sj * sj);
        s = hisp_vector_axpbypcz(hispi_amg_scalar(t, &x, -a[k] / sj), R,
                                 hispi_amg_scalar(t, &y, j ? -beta / sp : 0), j ? Rp : R,
                                 hispi_amg_scalar(t, &z, 1 / sj), U);
        if (!s) s = hisp_vector_div_dot(U, d, W, hisp_result_host(&r));
        if (s) break;
        k++;
        beta = sqrt(fmax(hispi_amg_value(t, &r), 0));
        if (!(beta > 1e-12 * fabs(a[k - 1])) || k == HISPI_AMG_LANCZOS)
            break; /* invariant subspace, or done */
        b[k - 1] = beta;
        hisp_vector tmp = Rp;
        Rp = R, R = U, U = tmp;
        sp = sj, sj = beta;
    }
    *steps = k, *last = beta;
    for (int i = 0; i < 3; i++)
        hisp_vector_destroy(&v[i]);
    return s;
}

void hispi_amg_bounds(const double *a, const double *b, int k, double beta, double rho,
                      double *lmax, double *upper)
{
    *lmax = *upper = 0;
    if (k > 0) {
        *lmax = tridiag_max(a, b, k);
        *upper = *lmax + beta * last_component(a, b, k, *lmax);
    }
    if (!(*lmax > 0 && *lmax < rho)) *lmax = rho;
    *upper *= 1.1; /* the residual bound can be low too (below) */
    if (!(*upper >= *lmax && *upper < rho)) *upper = rho;
}

hisp_status hispi_amg_lmax(hisp_matrix A, hisp_vector d, hisp_vector r0, double rho, double *lmax,
                           double *upper)
{
    double a[HISPI_AMG_LANCZOS], b[HISPI_AMG_LANCZOS], beta = 0;
    int k = 0;
    HISPI_TRY(lanczos(A, d, r0, a, b, &k, &beta));
    hispi_amg_bounds(a, b, k, beta, rho, lmax, upper);
    return HISP_SUCCESS;
}
