/* Smoothed-aggregation AMG's setup on the host (core/amg/): the strength
 * graph (undirected, no diagonal, the threshold), the MIS(2) aggregation's
 * invariants (roots pairwise at distance 3 or more, every node with
 * neighbours within distance 2 of its aggregate's root, nodes without
 * neighbours in none; the same aggregates twice, others for another seed),
 * and hierarchies of the Laplacians and the diffusion generators (sizes
 * shrinking, every P of the shapes between levels, each coarse operator
 * equal to P^T (A (P x)) by SpMVs, symmetric, operator complexity), the
 * errors (diagonals, shapes) and every allocation failed in turn; CG,
 * BiCGSTAB and GMRES with the V-cycle on every target (converged, the
 * reported residual true, CG in at most half Jacobi's iterations; f32 too:
 * a reported convergence holds for the true residual). */
#include "amg/hispi_amg.h"
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

extern void hispi_alloc_fail_after(long);
extern int hispi_spgemm_cpu_kernels;
extern long hispi_spgemm_refills, hispi_spgemm_dev_fail_after;
extern long hispi_amg_dev_levels, hispi_amg_dev_fail_after;
extern long hispi_spgemm_sort_slots;
extern long hispi_amg_setups, hispi_amg_aggregations;
extern int hispi_amg_product_p;
extern long hispi_amg_one_pass_p, hispi_amg_wide_p, hispi_amg_single_rows;

static hisp_context ref_ctx(void)
{
    hisp_context ctx = NULL;
    ck_assert_int_eq(hisp_context_create(&ctx), HISP_SUCCESS);
    CK_OK(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_REFERENCE, 0));
    return ctx;
}

static hisp_matrix generated(hisp_context ctx, hisp_gen_kind k, int64_t n, uint64_t seed)
{
    hisp_gen_params p;
    hisp_gen_defaults(k, &p);
    p.n = n;
    p.seed = seed;
    p.block = 2;
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_generate(ctx, &p, HISP_F64, &A));
    return A;
}

typedef struct {
    int64_t n, *sptr;
    int32_t *sidx;
} graph;

static bool adjacent(const graph *g, int32_t i, int32_t j)
{
    for (int64_t k = g->sptr[i]; k < g->sptr[i + 1]; k++)
        if (g->sidx[k] == j) return true;
    return false;
}

/* A's info and host CSR arrays. */
static hisp_matrix_info csr_of(hisp_context ctx, hisp_matrix A, const int64_t **p,
                               const int32_t **c, const void **v)
{
    hisp_matrix_info mi;
    CK_OK(ctx, hisp_matrix_get_info(A, &mi));
    CK_OK(ctx, hisp_matrix_host_arrays(A, p, NULL, c, v));
    return mi;
}

/* Is j within distance 2 of i (i itself included)? */
static bool near2(const graph *g, int32_t i, int32_t j)
{
    if (i == j || adjacent(g, i, j)) return true;
    for (int64_t k = g->sptr[i]; k < g->sptr[i + 1]; k++)
        if (adjacent(g, g->sidx[k], j)) return true;
    return false;
}

static void check_aggregates(hisp_context ctx, hisp_matrix A, double theta, const char *what)
{
    const int64_t *p;
    const int32_t *c;
    const void *v;
    hisp_matrix_info mi = csr_of(ctx, A, &p, &c, &v);
    graph g = {mi.nrows, NULL, NULL};
    CK_OK(ctx, hispi_amg_strength(ctx, g.n, p, c, v, mi.type, theta, &g.sptr, &g.sidx));
    /* undirected, sorted, no diagonal; every strong coupling passes the test */
    for (int64_t i = 0; i < g.n; i++)
        for (int64_t k = g.sptr[i]; k < g.sptr[i + 1]; k++) {
            int32_t j = g.sidx[k];
            ck_assert_msg(j != i && (k == g.sptr[i] || g.sidx[k - 1] < j), "%s: row %lld", what,
                          (long long)i);
            ck_assert_msg(adjacent(&g, j, (int32_t)i), "%s: (%lld, %d) one way", what, (long long)i,
                          j);
        }
    int32_t *agg = malloc((size_t)g.n * 4 + 4), *roots = malloc((size_t)g.n * 4 + 4),
            *again = malloc((size_t)g.n * 4 + 4);
    int64_t na = 0, nb = 0;
    CK_OK(ctx, hispi_amg_aggregate(ctx, g.n, g.sptr, g.sidx, 7, agg, roots, &na));
    ck_assert_msg(na > 0 && na < g.n, "%s: %lld aggregates of %lld nodes", what, (long long)na,
                  (long long)g.n);
    for (int64_t a = 0; a < na; a++) {
        ck_assert_int_eq(agg[roots[a]], a);
        for (int64_t b = 0; b < a; b++)
            ck_assert_msg(!near2(&g, roots[a], roots[b]), "%s: roots %d and %d within 2", what,
                          roots[a], roots[b]);
    }
    for (int64_t i = 0; i < g.n; i++) {
        bool alone = g.sptr[i + 1] == g.sptr[i];
        ck_assert_msg(alone ? agg[i] == -1 : agg[i] >= 0 && agg[i] < na, "%s: node %lld in %d",
                      what, (long long)i, agg[i]);
        if (!alone)
            ck_assert_msg(near2(&g, roots[agg[i]], (int32_t)i), "%s: node %lld far from its root",
                          what, (long long)i);
    }
    /* the same aggregates again; another seed gives others */
    CK_OK(ctx, hispi_amg_aggregate(ctx, g.n, g.sptr, g.sidx, 7, again, NULL, &nb));
    ck_assert(nb == na && !memcmp(agg, again, (size_t)g.n * 4));
    CK_OK(ctx, hispi_amg_aggregate(ctx, g.n, g.sptr, g.sidx, 8, again, NULL, &nb));
    ck_assert_msg(nb != na || memcmp(agg, again, (size_t)g.n * 4), "%s: seed ignored", what);
    free(agg), free(roots), free(again), free(g.sptr), free(g.sidx);
}

START_TEST(test_aggregates)
{
    hisp_context ctx = ref_ctx();
    hisp_matrix A = generated(ctx, HISP_GEN_POISSON2D, 20, 1);
    check_aggregates(ctx, A, 0, "poisson2d 20");
    hisp_matrix_destroy(&A);
    A = generated(ctx, HISP_GEN_ANISO3D, 8, 1);
    check_aggregates(ctx, A, 0, "aniso3d 8");
    check_aggregates(ctx, A, 0.2, "aniso3d 8, theta 0.2"); /* the z couplings weak */
    hisp_matrix_destroy(&A);
    A = generated(ctx, HISP_GEN_JUMP3D, 8, test_seed());
    check_aggregates(ctx, A, 0.1, "jump3d 8, theta 0.1");
    hisp_matrix_destroy(&A);
    hisp_gen_params p;
    hisp_gen_defaults(HISP_GEN_RANDOM, &p);
    p.n = 300, p.nnz_per_row = 3, p.seed = test_seed();
    CK_OK(ctx, hisp_matrix_generate(ctx, &p, HISP_F64, &A));
    check_aggregates(ctx, A, 0, "random 300 (made undirected)");
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

/* theta: aniso3d's z couplings (epsilon 1e-3 against 1) are weak at 0.2,
 * so each node keeps its 4 in-plane neighbours at most (at 0.25 none:
 * 0.25 * sqrt(4.002 * 4.002) > 1); at 0 every coupling is strong. */
START_TEST(test_strength_threshold)
{
    hisp_context ctx = ref_ctx();
    hisp_matrix A = generated(ctx, HISP_GEN_ANISO3D, 6, 1);
    const int64_t *p;
    const int32_t *c;
    const void *v;
    CK_OK(ctx, hisp_matrix_host_arrays(A, &p, NULL, &c, &v));
    int64_t *sp = NULL;
    int32_t *si = NULL;
    CK_OK(ctx, hispi_amg_strength(ctx, 216, p, c, v, HISP_F64, 0.2, &sp, &si));
    for (int64_t i = 0; i < 216; i++) {
        ck_assert_int_le(sp[i + 1] - sp[i], 4);
        ck_assert_int_ge(sp[i + 1] - sp[i], 2);
        for (int64_t k = sp[i]; k < sp[i + 1]; k++)
            ck_assert_int_lt(llabs((long long)(si[k] - i)), 36);
    }
    free(sp), free(si);
    CK_OK(ctx, hispi_amg_strength(ctx, 216, p, c, v, HISP_F64, 0, &sp, &si));
    ck_assert_int_eq(sp[216], p[216] - 216); /* every coupling */
    free(sp), free(si);
    CK_OK(ctx, hispi_amg_strength(ctx, 216, p, c, v, HISP_F64, 0.25, &sp, &si));
    ck_assert_int_eq(sp[216], 0);
    free(sp), free(si);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

/* y = X x on the host. */
static void mult(hisp_context ctx, hisp_matrix X, bool trans, const double *x, double *y)
{
    hisp_matrix_info mi;
    const int64_t *p;
    const int32_t *c;
    const void *v;
    CK_OK(ctx, hisp_matrix_get_info(X, &mi));
    CK_OK(ctx, hisp_matrix_host_arrays(X, &p, NULL, &c, &v));
    memset(y, 0, (size_t)(trans ? mi.ncols : mi.nrows) * sizeof *y);
    for (int64_t i = 0; i < mi.nrows; i++)
        for (int64_t k = p[i]; k < p[i + 1]; k++) {
            double a = ((const double *)v)[k];
            if (trans)
                y[c[k]] += a * x[i];
            else
                y[i] += a * x[c[k]];
        }
}

static void check_hierarchy(hisp_context ctx, hisp_matrix A, int64_t max_coarse, const char *what)
{
    hispi_amg_opts o;
    hispi_amg_defaults(&o);
    o.max_coarse = max_coarse;
    hispi_amg h;
    CK_OK(ctx, hispi_amg_setup(A, &o, NULL, &h));
    ck_assert_msg(h.nlevels >= 2, "%s: %d levels", what, h.nlevels);
    ck_assert_msg(h.rows[h.nlevels - 1] <= max_coarse || h.nlevels == o.max_levels,
                  "%s: coarsest %lld rows", what, (long long)h.rows[h.nlevels - 1]);
    uint64_t st = test_seed();
    for (int l = 0; l + 1 < h.nlevels; l++) {
        ck_assert_msg(h.rows[l + 1] < h.rows[l], "%s: level %d does not shrink", what, l);
        hisp_matrix_info pi;
        CK_OK(ctx, hisp_matrix_get_info(h.P[l], &pi));
        ck_assert(pi.nrows == h.rows[l] && pi.ncols == h.rows[l + 1]);
        /* A_{l+1} x = P^T (A_l (P x)), and A_{l+1} symmetric */
        int64_t n = h.rows[l], nc = h.rows[l + 1];
        double *x = malloc((size_t)nc * 8), *y = malloc((size_t)nc * 8),
               *z = malloc((size_t)nc * 8), *u = malloc((size_t)n * 8), *w = malloc((size_t)n * 8);
        for (int64_t i = 0; i < nc; i++)
            x[i] = test_uniform(&st);
        mult(ctx, h.A[l + 1], false, x, y);
        mult(ctx, h.P[l], false, x, u);
        mult(ctx, h.A[l], false, u, w);
        mult(ctx, h.P[l], true, w, z);
        double err = 0, big = 0;
        for (int64_t i = 0; i < nc; i++)
            err = fmax(err, fabs(y[i] - z[i])), big = fmax(big, fabs(z[i]));
        ck_assert_msg(err <= 1e-12 * big, "%s: level %d: |Ac x - P^T A P x| %g of %g", what, l + 1,
                      err, big);
        mult(ctx, h.A[l + 1], true, x, z); /* A^T x = A x */
        for (int64_t i = 0; i < nc; i++)
            ck_assert_msg(fabs(y[i] - z[i]) <= 1e-12 * big, "%s: level %d not symmetric", what,
                          l + 1);
        free(x), free(y), free(z), free(u), free(w);
    }
    double oc = hispi_amg_operator_complexity(&h);
    ck_assert_msg(oc > 1 && oc < 2.5, "%s: operator complexity %g", what, oc);
    ck_assert_ptr_eq(h.A[0], A);
    hispi_amg_free(&h);
}

START_TEST(test_hierarchy)
{
    hisp_context ctx = ref_ctx();
    static const struct {
        hisp_gen_kind k;
        int64_t n;
        const char *what;
    } cases[] = {{HISP_GEN_POISSON3D, 14, "poisson3d 14"},
                 {HISP_GEN_POISSON2D, 40, "poisson2d 40"},
                 {HISP_GEN_ANISO3D, 12, "aniso3d 12"},
                 {HISP_GEN_JUMP3D, 12, "jump3d 12"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        hisp_matrix A = generated(ctx, cases[i].k, cases[i].n, test_seed());
        check_hierarchy(ctx, A, 50, cases[i].what);
        hisp_matrix_destroy(&A);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* The largest eigenvalue of D^-1 X (X symmetric, n rows) by 3000 steps of
 * the power method, its D-Rayleigh quotient: an independent estimate from
 * below. */
static double power_lmax(hisp_context ctx, hisp_matrix X, int64_t n)
{
    double *d = calloc((size_t)n, 8), *x = malloc((size_t)n * 8), *y = malloc((size_t)n * 8),
           *e = calloc((size_t)n, 8), q = 0;
    for (int64_t i = 0; i < n; i++) { /* d = diag(X) as X e_i's i-th entry */
        e[i] = 1;
        mult(ctx, X, false, e, y);
        d[i] = y[i], e[i] = 0;
        x[i] = (double)((i * 7919) % 101) - 50;
    }
    for (int it = 0; it < 3000; it++) {
        mult(ctx, X, false, x, y); /* y = X x; q = x^T X x / x^T D x */
        double num = 0, den = 0, nrm = 0;
        for (int64_t i = 0; i < n; i++)
            num += x[i] * y[i], den += x[i] * d[i] * x[i];
        q = num / den;
        for (int64_t i = 0; i < n; i++)
            x[i] = y[i] / d[i], nrm = fmax(nrm, fabs(x[i]));
        for (int64_t i = 0; i < n; i++)
            x[i] /= nrm;
    }
    free(d), free(x), free(y), free(e);
    return q;
}

/* Each level's Lanczos estimate of D^-1 A's largest eigenvalue: below it
 * (a Ritz value) and within 15 % of it, and its upper bound above it and
 * within 20 %, against the power method's and, on poisson3d, the exact
 * 1 + cos(pi / (n + 1)); never above Gershgorin's bound. */
START_TEST(test_spectrum)
{
    hisp_context ctx = ref_ctx();
    for (int q = 0; q < 2; q++) {
        hisp_gen_kind k = q ? HISP_GEN_JUMP3D : HISP_GEN_POISSON3D;
        hisp_matrix A = generated(ctx, k, 12, test_seed());
        hispi_amg_opts o;
        hispi_amg_defaults(&o);
        o.max_coarse = 20;
        hispi_amg h;
        CK_OK(ctx, hispi_amg_setup(A, &o, NULL, &h));
        ck_assert_int_ge(h.nlevels, 3);
        if (!q) {
            double exact = 1 + cos(M_PI / 13);
            ck_assert_msg(h.lmax[0] <= exact * (1 + 1e-12) && h.lmax[0] >= 0.85 * exact &&
                              h.upper[0] >= exact * (1 - 1e-12),
                          "poisson3d 12: lmax %g, upper %g, exact %g", h.lmax[0], h.upper[0],
                          exact);
        }
        for (int l = 0; l + 1 < h.nlevels; l++) {
            double ref = power_lmax(ctx, h.A[l], h.rows[l]);
            ck_assert_msg(h.lmax[l] <= ref * (1 + 1e-3) && h.lmax[l] >= 0.85 * ref &&
                              h.upper[l] >= ref * (1 - 1e-3) && h.upper[l] <= 1.2 * ref &&
                              h.upper[l] <= h.rho[l],
                          "%s level %d: lmax %g, upper %g, the power method's %g, Gershgorin's %g",
                          q ? "jump3d" : "poisson3d", l, h.lmax[l], h.upper[l], ref, h.rho[l]);
        }
        hispi_amg_free(&h);
        hisp_matrix_destroy(&A);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* R (of ctx) is P^T (P of the context cr): the same rows, columns sorted,
 * the values P's. */
static void check_transpose(hisp_context ctx, hisp_matrix R, hisp_context cr, hisp_matrix P,
                            const char *what)
{
    hisp_matrix_info ri, pi;
    const int64_t *rp, *pp;
    const int32_t *rc, *pc;
    const void *rv, *pv;
    CK_OK(ctx, hisp_matrix_get_info(R, &ri));
    CK_OK(cr, hisp_matrix_get_info(P, &pi));
    ck_assert(ri.nrows == pi.ncols && ri.ncols == pi.nrows && ri.nnz == pi.nnz);
    CK_OK(ctx, hisp_matrix_host_arrays(R, &rp, NULL, &rc, &rv));
    CK_OK(cr, hisp_matrix_host_arrays(P, &pp, NULL, &pc, &pv));
    int64_t *next = malloc(((size_t)ri.nrows + 1) * 8);
    memcpy(next, rp, ((size_t)ri.nrows + 1) * 8);
    size_t es = ri.type == HISP_F32 ? 4 : 8;
    for (int64_t i = 0; i < pi.nrows; i++)
        for (int64_t k = pp[i]; k < pp[i + 1]; k++) {
            int64_t q = next[pc[k]]++;
            ck_assert_msg(q < rp[pc[k] + 1] && rc[q] == i, "%s: R's row %d", what, pc[k]);
            double x = es == 4 ? ((const float *)rv)[q] : ((const double *)rv)[q];
            double y = es == 4 ? ((const float *)pv)[k] : ((const double *)pv)[k];
            ck_assert_msg(x == y, "%s: R's entry (%d, %lld): %g, P's %g", what, pc[k], (long long)i,
                          x, y);
        }
    free(next);
}

/* n x n, f64: diagonal 10, three entries in [-1, 1) elsewhere in each row
 * at random columns (a pattern and values without symmetry); row 0 also
 * weak entries 1e-3 in every other column (wider than the device's P in
 * one pass takes). */
static hisp_matrix nonsymmetric(hisp_context ctx, int64_t n)
{
    int64_t *p = malloc(((size_t)n + 1) * 8);
    int32_t *c = malloc((size_t)n * 5 * 4);
    double *v = malloc((size_t)n * 5 * 8);
    uint64_t st = 99;
    p[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t k = p[i];
        c[k] = (int32_t)i, v[k++] = 10;
        for (int64_t j = 2; i == 0 && j < n; j += 2)
            c[k] = (int32_t)j, v[k++] = 1e-3;
        for (int e = 0; e < 3 && i > 0; e++) {
            int32_t j = (int32_t)(test_rand(&st) % (uint64_t)n);
            bool seen = false; /* a column of this row already */
            for (int64_t q = p[i]; q < k; q++)
                seen |= c[q] == j;
            if (seen) continue;
            int64_t q = k++;
            for (; q > p[i] && c[q - 1] > j; q--)
                c[q] = c[q - 1], v[q] = v[q - 1];
            c[q] = j, v[q] = test_uniform(&st);
        }
        p[i + 1] = k;
    }
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_create_csr(ctx, HISP_F64, n, n, p, c, v, &A));
    free(p), free(c), free(v);
    return A;
}

/* The hierarchy set up on device target t (kernels on CPU devices too)
 * against the host's: the same levels and aggregates, so the same sizes
 * and patterns; in f64 the same operators and prolongators (within the
 * last digits), R = P^T, the same diagonals. */
static void check_device_setup(int t, hisp_context cr, hisp_gen_kind k, int64_t n, hisp_type ty,
                               double theta, const char *what)
{
    hisp_context ctx = test_context(t);
    hisp_gen_params gp;
    hisp_gen_defaults(k, &gp);
    gp.n = n, gp.seed = 3, gp.block = 2, gp.nnz_per_row = 3;
    hisp_matrix A = NULL, Ar = NULL;
    if (k == HISP_GEN_RANDOM) {
        A = nonsymmetric(ctx, n), Ar = nonsymmetric(cr, n);
    } else {
        CK_OK(ctx, hisp_matrix_generate(ctx, &gp, ty, &A));
        CK_OK(cr, hisp_matrix_generate(cr, &gp, ty, &Ar));
    }
    hispi_amg_opts o;
    hispi_amg_defaults(&o);
    o.max_coarse = 20, o.theta = theta;
    hispi_amg h, hr;
    long before = hispi_amg_dev_levels;
    CK_OK(ctx, hispi_amg_setup(A, &o, NULL, &h));
    CK_OK(cr, hispi_amg_setup(Ar, &o, NULL, &hr));
    char w[160];
    snprintf(w, sizeof w, "%s %s (%s)", what, hisp_type_name(ty), test_label(t));
    ck_assert_msg(h.on_device && hispi_amg_dev_levels - before == h.nlevels - 1,
                  "%s: %ld device levels of %d", w, hispi_amg_dev_levels - before, h.nlevels);
    ck_assert_msg(h.nlevels == hr.nlevels && h.nlevels >= 2, "%s: %d levels, the host's %d", w,
                  h.nlevels, hr.nlevels);
    for (int l = 0; l < h.nlevels; l++) {
        ck_assert_msg(h.rows[l] == hr.rows[l] && h.nnz[l] == hr.nnz[l], "%s: level %d", w, l);
        if (l > 0) test_same_matrix(ctx, h.A[l], cr, hr.A[l], w);
        if (l + 1 == h.nlevels) break;
        test_same_matrix(ctx, h.P[l], cr, hr.P[l], w);
        check_transpose(ctx, h.R[l], ctx, h.P[l], w);
        ck_assert(fabs(h.rho[l] - hr.rho[l]) <= 1e-6 * hr.rho[l]);
        ck_assert_msg(fabs(h.lmax[l] - hr.lmax[l]) <= 1e-6 * hr.lmax[l] && h.lmax[l] <= h.rho[l],
                      "%s: level %d: lmax %g, the host's %g", w, l, h.lmax[l], hr.lmax[l]);
        double *d = malloc((size_t)h.rows[l] * 8), *dr = malloc((size_t)h.rows[l] * 8);
        CK_OK(ctx, hisp_vector_read(h.diag[l], d));
        CK_OK(cr, hisp_vector_read(hr.diag[l], dr));
        for (int64_t i = 0; i < h.rows[l]; i++) {
            double x = ty == HISP_F32 ? ((float *)d)[i] : d[i];
            double y = ty == HISP_F32 ? ((float *)dr)[i] : dr[i];
            ck_assert_msg(fabs(x - y) <= (ty == HISP_F32 ? 1e-5 : 1e-12) * fabs(y),
                          "%s: level %d diagonal %lld: %g, the host's %g", w, l, (long long)i, x,
                          y);
        }
        free(d), free(dr);
    }
    hispi_amg_free(&h), hispi_amg_free(&hr);
    hisp_matrix_destroy(&A), hisp_matrix_destroy(&Ar);
    hisp_context_destroy(&ctx);
}

static void host_fail(long k)
{
    hispi_alloc_fail_after(k);
}
static void dev_fail(long k)
{
    hispi_amg_dev_fail_after = k;
}

/* The setup of poisson2d side^2 (at most 10 coarsest rows) with its k-th
 * allocation of one kind failed (inject(k); inject(0) clears it) for k = 1,
 * 2, ...: each the status want, nothing kept, until one succeeds; then A
 * unchanged. The count of failing allocations into *f, the hierarchy into
 * *h (the caller frees it). */
static void failures_in_turn(hisp_context ctx, int64_t side, void (*inject)(long), hisp_status want,
                             long *f, hispi_amg *h)
{
    hisp_matrix A = generated(ctx, HISP_GEN_POISSON2D, side, 1);
    hispi_amg_opts o;
    hispi_amg_defaults(&o);
    o.max_coarse = 10;
    for (*f = 1;; (*f)++) {
        inject(*f);
        hisp_status s = hispi_amg_setup(A, &o, NULL, h);
        inject(0);
        if (s == HISP_SUCCESS) break;
        ck_assert_msg(s == want, "allocation %ld: %s", *f, hisp_status_string(s));
        ck_assert_int_eq(h->nlevels, 0);
        ck_assert_msg(*f < 2000, "the setup never succeeds");
    }
    hisp_matrix_info mi;
    CK_OK(ctx, hisp_matrix_get_info(A, &mi));
    ck_assert_int_eq(mi.nnz, 5 * side * side - 4 * side);
    hisp_matrix_destroy(&A);
}

/* Every device buffer of a device setup failed in turn: the error, nothing
 * kept, A intact; then the setup as without failures. */
static void device_alloc_failures(int t)
{
    hisp_context ctx = test_context(t);
    hispi_amg h;
    long f = 0;
    failures_in_turn(ctx, 16, dev_fail, HISP_ERR_OUT_OF_DEVICE_MEMORY, &f, &h);
    ck_assert_int_gt(f, 20);
    ck_assert(h.on_device && h.nlevels >= 3);
    hispi_amg_free(&h);
    hisp_context_destroy(&ctx);
}

/* One V-cycle on target t (fused kernels, the coarsest level by its
 * inverse on a device) against the reference's (vector calls, LU on the
 * host) from the same hierarchy: the same x within rounding. */
static void check_cycle(int t, hisp_context cr)
{
    hisp_context ctx = test_context(t);
    hisp_matrix A = generated(ctx, HISP_GEN_JUMP3D, 14, 2),
                Ar = generated(cr, HISP_GEN_JUMP3D, 14, 2);
    hispi_amg_opts o;
    hispi_amg_defaults(&o);
    o.max_coarse = 60;
    hispi_amg_cycle *c = NULL, *cref = NULL;
    CK_OK(ctx, hispi_amg_cycle_create(A, &o, &c));
    CK_OK(cr, hispi_amg_cycle_create(Ar, &o, &cref));
    ck_assert_int_ge(hispi_amg_cycle_hierarchy(c)->nlevels, 3);
    int64_t n = 14 * 14 * 14;
    double *hb = malloc((size_t)n * 8), *hx = malloc((size_t)n * 8), *hr = malloc((size_t)n * 8);
    uint64_t st = test_seed();
    for (int64_t i = 0; i < n; i++)
        hb[i] = test_uniform(&st);
    hisp_vector b, x, br, xr;
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, n, &b));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, n, &x));
    CK_OK(cr, hisp_vector_create(cr, HISP_F64, n, &br));
    CK_OK(cr, hisp_vector_create(cr, HISP_F64, n, &xr));
    CK_OK(ctx, hisp_vector_write(b, hb));
    CK_OK(cr, hisp_vector_write(br, hb));
    for (int rep = 0; rep < 2; rep++) { /* the second from the first's state */
        CK_OK(ctx, hispi_amg_cycle_apply(c, b, x));
        CK_OK(cr, hispi_amg_cycle_apply(cref, br, xr));
    }
    CK_OK(ctx, hisp_vector_read(x, hx));
    CK_OK(cr, hisp_vector_read(xr, hr));
    double err = 0, big = 0;
    for (int64_t i = 0; i < n; i++)
        err = fmax(err, fabs(hx[i] - hr[i])), big = fmax(big, fabs(hr[i]));
    ck_assert_msg(big > 0 && err <= 1e-9 * big, "%s: V-cycle %g from the reference's (of %g)",
                  test_label(t), err, big);
    free(hb), free(hx), free(hr);
    hisp_vector_destroy(&b), hisp_vector_destroy(&x);
    hisp_vector_destroy(&br), hisp_vector_destroy(&xr);
    hispi_amg_cycle_destroy(&c), hispi_amg_cycle_destroy(&cref);
    hisp_matrix_destroy(&A), hisp_matrix_destroy(&Ar);
    hisp_context_destroy(&ctx);
}

START_TEST(test_device_setup)
{
    if (!test_on_device(_i)) {
        test_skip("amg device setup: %s is the host", test_label(_i));
        return;
    }
    hisp_context cr = ref_ctx();
    hispi_spgemm_cpu_kernels = 1;
    long one = hispi_amg_one_pass_p;
    check_device_setup(_i, cr, HISP_GEN_POISSON3D, 14, HISP_F64, 0, "poisson3d 14");
    ck_assert_msg(hispi_amg_one_pass_p > one, "P was not made in one pass");
    hispi_amg_product_p = 1; /* P by the library's product A P0 */
    check_device_setup(_i, cr, HISP_GEN_POISSON3D, 14, HISP_F64, 0, "poisson3d 14, P by A P0");
    hispi_amg_product_p = 0;
    long wide = hispi_amg_wide_p; /* row 0 too wide for one pass: by the product */
    check_device_setup(_i, cr, HISP_GEN_RANDOM, 3000, HISP_F64, 0, "random 3000");
    ck_assert_msg(hispi_amg_wide_p > wide, "random 3000: no level by the product");
    check_device_setup(_i, cr, HISP_GEN_ANISO3D, 12, HISP_F64, 0.2, "aniso3d 12, theta 0.2");
    check_device_setup(_i, cr, HISP_GEN_JUMP3D, 12, HISP_F64, 0, "jump3d 12");
    check_device_setup(_i, cr, HISP_GEN_POISSON2D, 40, HISP_F32, 0, "poisson2d 40");
    hispi_spgemm_sort_slots = 4; /* R's longer rows by the heap sort */
    check_device_setup(_i, cr, HISP_GEN_POISSON3D, 12, HISP_F64, 0, "poisson3d 12, heap sort");
    hispi_spgemm_sort_slots = 0;
    device_alloc_failures(_i);
    check_cycle(_i, cr);
    hispi_spgemm_cpu_kernels = 0;
    hisp_context_destroy(&cr);
}
END_TEST

/* x's relative residual ||b - A x|| / ||b|| computed here on the host. */
static double true_residual(hisp_context ctx, hisp_matrix A, hisp_vector b, hisp_vector x)
{
    hisp_matrix_info mi;
    CK_OK(ctx, hisp_matrix_get_info(A, &mi));
    double *hb = malloc((size_t)mi.nrows * 8), *hx = malloc((size_t)mi.nrows * 8),
           *ax = malloc((size_t)mi.nrows * 8);
    CK_OK(ctx, hisp_vector_read(b, hb));
    CK_OK(ctx, hisp_vector_read(x, hx));
    mult(ctx, A, false, hx, ax);
    double r = 0, nb = 0;
    for (int64_t i = 0; i < mi.nrows; i++)
        r += (hb[i] - ax[i]) * (hb[i] - ax[i]), nb += hb[i] * hb[i];
    free(hb), free(hx), free(ax);
    return sqrt(r / nb);
}

/* f32: AMG-CG to rtol 1e-5 converges with a true residual (recomputed here
 * in double from the f32 data) within it; to 1e-8, below what f32 reaches,
 * a reported convergence must hold too (the solver's truth check). */
static void solve_f32(hisp_context ctx, int target)
{
    hisp_gen_params p;
    hisp_gen_defaults(HISP_GEN_POISSON3D, &p);
    p.n = 16;
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_generate(ctx, &p, HISP_F32, &A));
    const int64_t *rp;
    const int32_t *ci;
    const void *va;
    CK_OK(ctx, hisp_matrix_host_arrays(A, &rp, NULL, &ci, &va));
    int64_t n = 16 * 16 * 16;
    float *hb = malloc((size_t)n * 4), *hx = malloc((size_t)n * 4);
    uint64_t st = test_seed() + 3;
    for (int64_t i = 0; i < n; i++)
        hb[i] = (float)test_uniform(&st);
    hisp_vector b = NULL, x = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F32, n, &b));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F32, n, &x));
    CK_OK(ctx, hisp_vector_write(b, hb));
    static const double rtols[] = {1e-5, 1e-8};
    for (int q = 0; q < 2; q++) {
        hisp_solver s = NULL;
        CK_OK(ctx, hisp_solver_create(ctx, HISP_SOLVER_CG, &s));
        CK_OK(ctx, hisp_solver_set_preconditioner(s, HISP_PRECOND_AMG));
        CK_OK(ctx, hisp_solver_set_tolerances(s, rtols[q], 0));
        CK_OK(ctx, hisp_solver_set_max_iterations(s, 200));
        float zero = 0;
        CK_OK(ctx, hisp_vector_fill(x, hisp_scalar_host(&zero)));
        hisp_solve_info info;
        CK_OK(ctx, hisp_solver_solve(s, A, b, x, &info));
        CK_OK(ctx, hisp_vector_read(x, hx));
        double r2 = 0, b2 = 0;
        for (int64_t i = 0; i < n; i++) {
            double ax = 0;
            for (int64_t k = rp[i]; k < rp[i + 1]; k++)
                ax += (double)((const float *)va)[k] * hx[ci[k]];
            r2 += (hb[i] - ax) * (hb[i] - ax), b2 += (double)hb[i] * hb[i];
        }
        double tr = sqrt(r2 / b2);
        if (q == 0)
            ck_assert_msg(info.converged, "%s f32: not converged to 1e-5", test_label(target));
        ck_assert_msg(!info.converged || tr <= 1.01 * rtols[q],
                      "%s f32 rtol %g: converged, true residual %g", test_label(target), rtols[q],
                      tr);
        hisp_solver_destroy(&s);
    }
    free(hb), free(hx);
    hisp_vector_destroy(&b), hisp_vector_destroy(&x);
    hisp_matrix_destroy(&A);
}

/* AMG-CG's iterations with the smoother (amg_smoother, amg_sweeps) on
 * ctx, after checking that it converged with a true residual. */
static int64_t smoother_cg(hisp_context ctx, const char *smoother, const char *sweeps,
                           const char *what)
{
    CK_OK(ctx, hisp_context_set_option(ctx, "amg_smoother", smoother));
    CK_OK(ctx, hisp_context_set_option(ctx, "amg_sweeps", sweeps));
    hisp_matrix A = generated(ctx, HISP_GEN_JUMP3D, 14, 4);
    int64_t n = 14 * 14 * 14;
    double *hb = malloc((size_t)n * 8);
    uint64_t st = 11;
    for (int64_t i = 0; i < n; i++)
        hb[i] = test_uniform(&st);
    hisp_vector b = NULL, x = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, n, &b));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, n, &x));
    CK_OK(ctx, hisp_vector_write(b, hb));
    double zero = 0;
    CK_OK(ctx, hisp_vector_fill(x, hisp_scalar_host(&zero)));
    hisp_solver s = NULL;
    CK_OK(ctx, hisp_solver_create(ctx, HISP_SOLVER_CG, &s));
    CK_OK(ctx, hisp_solver_set_preconditioner(s, HISP_PRECOND_AMG));
    hisp_solve_info info;
    CK_OK(ctx, hisp_solver_solve(s, A, b, x, &info));
    double tr = true_residual(ctx, A, b, x);
    ck_assert_msg(info.converged && tr <= 1.01e-8, "%s %s x%s: converged %d, true %g", what,
                  smoother, sweeps, info.converged, tr);
    ck_assert_msg(info.precond_levels >= 2, "%s: %d levels", what, info.precond_levels);
    hisp_solver_destroy(&s);
    hisp_vector_destroy(&b), hisp_vector_destroy(&x);
    hisp_matrix_destroy(&A);
    free(hb);
    CK_OK(ctx, hisp_context_set_option(ctx, "amg_smoother", "chebyshev"));
    CK_OK(ctx, hisp_context_set_option(ctx, "amg_sweeps", "3"));
    return info.iterations;
}

/* Every smoother with 1 and 2 sweeps on target t: converged, and within 2
 * iterations of the reference backend's count. */
START_TEST(test_smoothers)
{
    hisp_context ctx = test_context(_i), cr = ref_ctx();
    static const char *const sm[] = {"chebyshev", "jacobi", "l1-jacobi"}, *const sw[] = {"1", "2"};
    for (int a = 0; a < 3; a++)
        for (int k = 0; k < 2; k++) {
            int64_t it = smoother_cg(ctx, sm[a], sw[k], test_label(_i));
            int64_t ir = smoother_cg(cr, sm[a], sw[k], "reference");
            ck_assert_msg(llabs((long long)(it - ir)) <= 2,
                          "%s %s x%s: %lld iterations, the "
                          "reference %lld",
                          test_label(_i), sm[a], sw[k], (long long)it, (long long)ir);
        }
    hisp_context_destroy(&ctx), hisp_context_destroy(&cr);
}
END_TEST

/* CG with a preconditioner object on target t: the hierarchy set up once
 * for several solves (none set up by them), the same iterations as with a
 * setup per solve, the true residual; the refusals. */
START_TEST(test_object)
{
    hisp_context ctx = test_context(_i);
    hisp_matrix A = generated(ctx, HISP_GEN_JUMP3D, 14, 6);
    int64_t n = 14 * 14 * 14;
    hisp_preconditioner P = NULL;
    CK_OK(ctx, hisp_preconditioner_create(HISP_PRECOND_AMG, A, &P));
    hisp_preconditioner_info pi;
    CK_OK(ctx, hisp_preconditioner_get_info(P, &pi));
    ck_assert(pi.kind == HISP_PRECOND_AMG && pi.levels >= 2 && pi.rows[0] == n && pi.setup_ms > 0);
    for (int l = 1; l < pi.levels; l++)
        ck_assert(pi.rows[l] < pi.rows[l - 1] && pi.nnz[l] > 0);
    double *hb = malloc((size_t)n * 8);
    hisp_vector b = NULL, x = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, n, &b));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, n, &x));
    hisp_solver s = NULL;
    CK_OK(ctx, hisp_solver_create(ctx, HISP_SOLVER_CG, &s));
    uint64_t st = test_seed();
    double zero = 0;
    for (int rep = 0; rep < 3; rep++) {
        for (int64_t i = 0; i < n; i++)
            hb[i] = test_uniform(&st);
        CK_OK(ctx, hisp_vector_write(b, hb));
        int64_t it[2];
        for (int use = 0; use < 2; use++) { /* a setup per solve, then the object */
            if (use)
                CK_OK(ctx, hisp_solver_use_preconditioner(s, P));
            else
                CK_OK(ctx, hisp_solver_set_preconditioner(s, HISP_PRECOND_AMG));
            CK_OK(ctx, hisp_vector_fill(x, hisp_scalar_host(&zero)));
            long setups = hispi_amg_setups;
            hisp_solve_info info;
            CK_OK(ctx, hisp_solver_solve(s, A, b, x, &info));
            ck_assert_int_eq(hispi_amg_setups - setups, use ? 0 : 1);
            double tr = true_residual(ctx, A, b, x);
            ck_assert_msg(info.converged && tr <= 1.01e-8, "%s: object %d, true residual %g",
                          test_label(_i), use, tr);
            ck_assert_int_eq(info.precond_levels, pi.levels);
            it[use] = info.iterations;
        }
        ck_assert_msg(it[0] == it[1], "%s: %lld iterations with a setup, %lld with the object",
                      test_label(_i), (long long)it[0], (long long)it[1]);
    }
    /* refusals: Jacobi has nothing to keep; another size; lsqr; A destroyed */
    hisp_preconditioner Q = NULL;
    ck_assert_int_eq(hisp_preconditioner_create(HISP_PRECOND_JACOBI, A, &Q), HISP_ERR_UNSUPPORTED);
    ck_assert_ptr_null(Q);
    hisp_matrix B = generated(ctx, HISP_GEN_POISSON3D, 10, 1);
    hisp_vector b2 = NULL, x2 = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, 1000, &b2));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, 1000, &x2));
    ck_assert_int_eq(hisp_solver_solve(s, B, b2, x2, NULL), HISP_ERR_INVALID_ARGUMENT);
    hisp_solver l = NULL;
    CK_OK(ctx, hisp_solver_create(ctx, HISP_SOLVER_LSQR, &l));
    CK_OK(ctx, hisp_solver_use_preconditioner(l, P));
    ck_assert_int_eq(hisp_solver_solve(l, A, b, x, NULL), HISP_ERR_UNSUPPORTED);
    hisp_solver_destroy(&l);
    hisp_matrix C = NULL;
    CK_OK(ctx, hisp_matrix_duplicate(A, HISP_FORMAT_CSR, &C));
    hisp_matrix_destroy(&A);
    ck_assert_int_eq(hisp_solver_solve(s, C, b, x, NULL), HISP_ERR_INVALID_HANDLE);
    CK_OK(ctx, hisp_solver_set_preconditioner(s, HISP_PRECOND_JACOBI)); /* drops P */
    CK_OK(ctx, hisp_solver_solve(s, C, b, x, NULL));
    hisp_preconditioner_destroy(&P);
    ck_assert_ptr_null(P);
    ck_assert_int_eq(hisp_preconditioner_get_info(P, &pi), HISP_ERR_INVALID_HANDLE);
    free(hb);
    hisp_solver_destroy(&s);
    hisp_vector_destroy(&b), hisp_vector_destroy(&x), hisp_vector_destroy(&b2),
        hisp_vector_destroy(&x2);
    hisp_matrix_destroy(&B), hisp_matrix_destroy(&C);
    /* an object outliving its context is still destroyed cleanly */
    A = generated(ctx, HISP_GEN_POISSON2D, 30, 1);
    CK_OK(ctx, hisp_preconditioner_create(HISP_PRECOND_AMG, A, &P));
    hisp_context_destroy(&ctx);
    hisp_preconditioner_destroy(&P);
    hisp_matrix_destroy(&A);
}
END_TEST

/* hisp_preconditioner_update on target t: solves after an update for
 * another seed's coefficients take a fresh setup's iterations; an update
 * for a matrix of another size is refused, and a failed update makes
 * solves refuse the object until an update succeeds. */
/* b (n entries, uniform from seed) and x on ctx, f64. */
static void rhs_and_x(hisp_context ctx, int64_t n, uint64_t seed, hisp_vector *b, hisp_vector *x)
{
    double *hb = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++)
        hb[i] = test_uniform(&seed);
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, n, b));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, n, x));
    CK_OK(ctx, hisp_vector_write(*b, hb));
    free(hb);
}

/* A with its diagonal times f and then every entry times g (new values on
 * A's pattern: a time step's M / dt + K for another dt). */
static hisp_matrix rescaled(hisp_context ctx, hisp_matrix A, double f, double g)
{
    const int64_t *p;
    const int32_t *c;
    const void *v;
    hisp_matrix_info mi = csr_of(ctx, A, &p, &c, &v);
    double *w = malloc((size_t)mi.nnz * 8);
    memcpy(w, v, (size_t)mi.nnz * 8);
    for (int64_t i = 0; i < mi.nrows; i++)
        for (int64_t k = p[i]; k < p[i + 1]; k++)
            w[k] *= c[k] == i ? f * g : g;
    hisp_matrix B = NULL;
    CK_OK(ctx, hisp_matrix_create_csr(ctx, HISP_F64, mi.nrows, mi.ncols, p, c, w, &B));
    free(w);
    return B;
}

/* CG on A with P (NULL: a setup of its own) from x = 0: converged, the
 * residual true; the iterations. */
static int64_t cg_with(int t, hisp_context ctx, hisp_matrix A, hisp_preconditioner P, hisp_vector b,
                       hisp_vector x)
{
    hisp_solver s = NULL;
    CK_OK(ctx, hisp_solver_create(ctx, HISP_SOLVER_CG, &s));
    if (P)
        CK_OK(ctx, hisp_solver_use_preconditioner(s, P));
    else
        CK_OK(ctx, hisp_solver_set_preconditioner(s, HISP_PRECOND_AMG));
    double zero = 0;
    CK_OK(ctx, hisp_vector_fill(x, hisp_scalar_host(&zero)));
    hisp_solve_info info;
    CK_OK(ctx, hisp_solver_solve(s, A, b, x, &info));
    double tr = true_residual(ctx, A, b, x);
    ck_assert_msg(info.converged && tr <= 1.01e-8, "%s: %s: true residual %g", test_label(t),
                  P ? "the object" : "a setup", tr);
    hisp_solver_destroy(&s);
    return info.iterations;
}

/* hisp_preconditioner_update keeps the aggregates: no aggregation runs;
 * for the same values the same hierarchy as a setup (the same iterations),
 * for new values on the pattern at most 2 iterations more than a setup of
 * its own; another amg_theta aggregates anew. */
static void update_reuse(int t);

/* run(t), then on a device target again with the device's setup (on a
 * CPU device too). */
static void host_and_device_setup(int t, void (*run)(int))
{
    run(t);
    if (!test_on_device(t)) return;
    hispi_spgemm_cpu_kernels = 1;
    run(t);
    hispi_spgemm_cpu_kernels = 0;
}

START_TEST(test_update_reuse)
{
    host_and_device_setup(_i, update_reuse);
}
END_TEST

static void update_reuse(int t)
{
    const int _i = t;
    hisp_context ctx = test_context(_i);
    hisp_matrix A = generated(ctx, HISP_GEN_JUMP3D, 12, 1), A2 = rescaled(ctx, A, 1.5, 1);
    int64_t n = 12 * 12 * 12;
    hisp_vector b, x;
    rhs_and_x(ctx, n, test_seed(), &b, &x);
    hisp_preconditioner P = NULL;
    CK_OK(ctx, hisp_preconditioner_create(HISP_PRECOND_AMG, A, &P));
    int64_t fresh = cg_with(_i, ctx, A, NULL, b, x);
    long before = hispi_amg_aggregations;
    CK_OK(ctx, hisp_preconditioner_update(P, A));
    ck_assert_int_eq(hispi_amg_aggregations, before);
    int64_t same = cg_with(_i, ctx, A, P, b, x);
    ck_assert_msg(same == fresh,
                  "%s: %lld iterations after an update for the same values, %lld "
                  "with a setup",
                  test_label(_i), (long long)same, (long long)fresh);
    CK_OK(ctx, hisp_preconditioner_update(P, A2));
    ck_assert_int_eq(hispi_amg_aggregations, before);
    int64_t kept = cg_with(_i, ctx, A2, P, b, x), own = cg_with(_i, ctx, A2, NULL, b, x);
    ck_assert_msg(kept <= own + 2,
                  "%s: %lld iterations with the kept aggregates, %lld with "
                  "A2's own",
                  test_label(_i), (long long)kept, (long long)own);
    CK_OK(ctx, hisp_context_set_option(ctx, "amg_theta", "0.05"));
    before = hispi_amg_aggregations;
    CK_OK(ctx, hisp_preconditioner_update(P, A2));
    ck_assert_msg(hispi_amg_aggregations > before, "%s: theta changed, aggregates kept",
                  test_label(_i));
    cg_with(_i, ctx, A2, P, b, x);
    hisp_preconditioner_destroy(&P);
    hisp_vector_destroy(&b), hisp_vector_destroy(&x);
    hisp_matrix_destroy(&A), hisp_matrix_destroy(&A2);
    hisp_context_destroy(&ctx);
}

/* Another pattern of A's size (still SPD): the coupling of rows i and
 * i + 1 dropped (move false: 2 entries fewer) or moved to rows i and i + 2
 * as explicit zeros (as many entries). */
static hisp_matrix repatterned(hisp_context ctx, hisp_matrix A, int64_t i, bool move)
{
    const int64_t *p;
    const int32_t *c;
    const void *v;
    hisp_matrix_info mi = csr_of(ctx, A, &p, &c, &v);
    int32_t *r = malloc((size_t)mi.nnz * 4), *d = malloc((size_t)mi.nnz * 4);
    double *w = malloc((size_t)mi.nnz * 8);
    int64_t k = 0;
    for (int64_t q = 0; q < mi.nrows; q++)
        for (int64_t e = p[q]; e < p[q + 1]; e++) {
            bool pair = (q == i && c[e] == i + 1) || (q == i + 1 && c[e] == i);
            if (pair && !move) continue;
            r[k] = (int32_t)(pair && q == i + 1 ? i + 2 : q);
            d[k] = pair && q == i ? (int32_t)(i + 2) : c[e];
            w[k++] = pair ? 0 : ((const double *)v)[e];
        }
    ck_assert_int_eq(k, move ? mi.nnz : mi.nnz - 2);
    hisp_matrix B = NULL;
    CK_OK(ctx, hisp_matrix_create_coo(ctx, HISP_F64, mi.nrows, mi.ncols, k, r, d, w, &B));
    CK_OK(ctx, hisp_matrix_convert(B, HISP_FORMAT_CSR));
    free(r), free(d), free(w);
    return B;
}

/* X and Y hold the same bits (structure and values, read to the host). */
static void same_matrix(hisp_context ctx, hisp_matrix X, hisp_matrix Y, const char *what, int l)
{
    hisp_matrix_info ix, iy;
    CK_OK(ctx, hisp_matrix_get_info(X, &ix));
    CK_OK(ctx, hisp_matrix_get_info(Y, &iy));
    ck_assert_msg(ix.nrows == iy.nrows && ix.ncols == iy.ncols && ix.nnz == iy.nnz &&
                      ix.type == iy.type,
                  "%s level %d: shapes differ", what, l);
    const int64_t *px, *py;
    const int32_t *cx, *cy;
    const void *vx, *vy;
    CK_OK(ctx, hisp_matrix_host_arrays(X, &px, NULL, &cx, &vx));
    CK_OK(ctx, hisp_matrix_host_arrays(Y, &py, NULL, &cy, &vy));
    ck_assert_msg(!memcmp(px, py, ((size_t)ix.nrows + 1) * 8) &&
                      !memcmp(cx, cy, (size_t)ix.nnz * 4) &&
                      !memcmp(vx, vy, (size_t)ix.nnz * hisp_type_size(ix.type)),
                  "%s level %d: the operators differ", what, l);
}

/* An update (the object's setup keeps the products' structure): for new
 * values on A's pattern every level's products are computed again into
 * the kept matrices (on a device by refills, on the host by plans), with
 * the bits of an update that multiplies anew; another pattern of the same
 * size multiplies anew and keeps the new structure; every allocation of
 * the update failed in turn (device buffers for a device setup, host
 * memory for a host one) is a clean failure after which the object is
 * refused until an update succeeds. */
static void update_refill(int t)
{
    const int _i = t;
    hisp_context ctx = test_context(_i);
    hisp_matrix A = generated(ctx, HISP_GEN_JUMP3D, 12, 1), A2 = rescaled(ctx, A, 1.5, 0.5),
                A3 = repatterned(ctx, A, 100, false);
    hispi_amg_opts o, of;
    hispi_amg_options(ctx, &o);
    o.keep = true, o.max_coarse = 60;
    of = o, of.keep = false;
    hispi_amg_cycle *c1 = NULL, *c2 = NULL, *f1 = NULL, *f2 = NULL, *c3 = NULL;
    CK_OK(ctx, hispi_amg_cycle_create(A, &o, &c1));
    CK_OK(ctx, hispi_amg_cycle_create(A, &of, &f1));
    const hispi_amg *h1 = hispi_amg_cycle_hierarchy(c1);
    int nl = h1->nlevels;
    bool dev = h1->on_device;
    ck_assert_int_ge(nl, 3);
    /* a device setup keeps its products, the host's first update makes plans */
    ck_assert(!h1->AP[0] == !dev && !h1->pat_ptr == !dev && !h1->plan[1][0]);
    ck_assert(!hispi_amg_cycle_hierarchy(f1)->AP[0]);
    if (!dev) {
        hispi_amg_cycle *c0 = c1;
        c1 = NULL;
        CK_OK(ctx, hispi_amg_cycle_renew(A, &o, c0, &c1));
        hispi_amg_cycle_destroy(&c0);
        h1 = hispi_amg_cycle_hierarchy(c1);
        ck_assert(h1->AP[0] && h1->AP[nl - 2] && !h1->AP[nl - 1] && h1->plan[1][0]);
    }
    long k0 = hispi_amg_kept_levels, r0 = hispi_spgemm_refills;
    CK_OK(ctx, hispi_amg_cycle_renew(A2, &o, c1, &c2));
    ck_assert_int_eq(hispi_amg_kept_levels - k0, nl - 1);
    ck_assert_int_eq(hispi_spgemm_refills - r0, dev ? 2 * (nl - 1) : 0);
    CK_OK(ctx, hispi_amg_cycle_renew(A2, &of, f1, &f2));
    ck_assert_int_eq(hispi_amg_kept_levels - k0, nl - 1);
    const hispi_amg *h2 = hispi_amg_cycle_hierarchy(c2), *g2 = hispi_amg_cycle_hierarchy(f2);
    ck_assert_int_eq(h2->nlevels, g2->nlevels);
    char what[120];
    snprintf(what, sizeof what, "%s, %s setup: kept against multiplied", test_label(_i),
             dev ? "device" : "host");
    for (int l = 1; l < nl; l++)
        same_matrix(ctx, h2->A[l], g2->A[l], what, l);
    hispi_amg_cycle_destroy(&c1), hispi_amg_cycle_destroy(&f1), hispi_amg_cycle_destroy(&f2);
    /* another pattern: level 0's products anew (on a device every level's;
     * on the host a coarse level whose patterns did not change may keep
     * its plans), the structure kept for it */
    for (int m = 0; m < 2; m++) { /* as many entries, elsewhere; fewer */
        hisp_matrix A4 = m ? A3 : repatterned(ctx, A, 200, true);
        k0 = hispi_amg_kept_levels;
        CK_OK(ctx, hispi_amg_cycle_renew(A4, &o, c2, &c3));
        ck_assert_int_le(hispi_amg_kept_levels - k0, dev ? 0 : nl - 2);
        ck_assert(hispi_amg_cycle_hierarchy(c3)->AP[0]);
        hispi_amg_cycle_destroy(&c2);
        c2 = c3, c3 = NULL;
        if (!m) hisp_matrix_destroy(&A4);
    }
    hispi_amg_cycle_destroy(&c2);
    /* the object: updates through failed allocations */
    int64_t n = 12 * 12 * 12;
    hisp_vector b, x;
    rhs_and_x(ctx, n, test_seed(), &b, &x);
    hisp_preconditioner P = NULL;
    int64_t own = cg_with(_i, ctx, A2, NULL, b, x);
    CK_OK(ctx, hisp_preconditioner_create(HISP_PRECOND_AMG, A, &P));
    CK_OK(ctx, hisp_preconditioner_update(P, A)); /* the host's plans made */
    k0 = hispi_amg_kept_levels;
    CK_OK(ctx, hisp_preconditioner_update(P, A2));
    long per_update = hispi_amg_kept_levels - k0; /* the levels but the coarsest */
    ck_assert_int_ge(per_update, 1);
    long fails = 0;
    hisp_status oom = dev ? HISP_ERR_OUT_OF_DEVICE_MEMORY : HISP_ERR_OUT_OF_HOST_MEMORY;
    for (long k = 1;; k++) { /* the k-th allocation of the update fails */
        hisp_preconditioner_destroy(&P);
        CK_OK(ctx, hisp_preconditioner_create(HISP_PRECOND_AMG, A, &P));
        CK_OK(ctx, hisp_preconditioner_update(P, A));
        if (dev)
            hispi_spgemm_dev_fail_after = k;
        else
            hispi_alloc_fail_after(k);
        k0 = hispi_amg_kept_levels;
        hisp_status st = hisp_preconditioner_update(P, A2);
        hispi_spgemm_dev_fail_after = 0;
        hispi_alloc_fail_after(0);
        if (!st) break;
        ck_assert_int_eq(st, oom);
        fails++;
        ck_assert_int_lt(k, 5000);
        /* refused until an update succeeds; the next one multiplies anew */
        hisp_solver sv = NULL;
        CK_OK(ctx, hisp_solver_create(ctx, HISP_SOLVER_CG, &sv));
        CK_OK(ctx, hisp_solver_use_preconditioner(sv, P));
        ck_assert_int_eq(hisp_solver_solve(sv, A2, b, x, NULL), HISP_ERR_INVALID_ARGUMENT);
        hisp_solver_destroy(&sv);
        CK_OK(ctx, hisp_preconditioner_update(P, A2));
        ck_assert_int_le(cg_with(_i, ctx, A2, P, b, x), own + 2);
    }
    ck_assert_msg(hispi_amg_kept_levels - k0 == per_update && fails > 2,
                  "%s: %ld failures, then %ld levels kept", test_label(_i), fails,
                  hispi_amg_kept_levels - k0);
    int64_t kept = cg_with(_i, ctx, A2, P, b, x);
    ck_assert_msg(kept <= own + 2, "%s: %lld iterations after failed updates, %lld with a setup",
                  test_label(_i), (long long)kept, (long long)own);
    CK_OK(ctx, hisp_preconditioner_update(P, A));
    CK_OK(ctx, hisp_preconditioner_update(P, A2));
    ck_assert_int_eq(cg_with(_i, ctx, A2, P, b, x), kept);
    hisp_preconditioner_destroy(&P);
    hisp_vector_destroy(&b), hisp_vector_destroy(&x);
    hisp_matrix_destroy(&A), hisp_matrix_destroy(&A2), hisp_matrix_destroy(&A3);
    hisp_context_destroy(&ctx);
}

START_TEST(test_update_refill)
{
    host_and_device_setup(_i, update_refill);
}
END_TEST

START_TEST(test_update)
{
    hisp_context ctx = test_context(_i);
    hisp_matrix A = generated(ctx, HISP_GEN_JUMP3D, 12, 1),
                A2 = generated(ctx, HISP_GEN_JUMP3D, 12, 9);
    int64_t n = 12 * 12 * 12;
    hisp_vector b, x;
    rhs_and_x(ctx, n, test_seed(), &b, &x);
    hisp_preconditioner P = NULL;
    CK_OK(ctx, hisp_preconditioner_create(HISP_PRECOND_AMG, A2, &P));
    CK_OK(ctx, hisp_preconditioner_update(P, A2));
    int64_t fresh = cg_with(_i, ctx, A2, NULL, b, x), updated = cg_with(_i, ctx, A2, P, b, x);
    ck_assert_msg(fresh == updated, "%s: %lld iterations fresh, %lld updated", test_label(_i),
                  (long long)fresh, (long long)updated);
    hisp_solver s = NULL;
    CK_OK(ctx, hisp_solver_create(ctx, HISP_SOLVER_CG, &s));
    CK_OK(ctx, hisp_solver_use_preconditioner(s, P));
    hisp_matrix B = generated(ctx, HISP_GEN_POISSON3D, 10, 1), Z = NULL;
    ck_assert_int_eq(hisp_preconditioner_update(P, B), HISP_ERR_INVALID_ARGUMENT);
    CK_OK(ctx, hisp_solver_solve(s, A2, b, x, NULL)); /* nothing changed */
    /* a failed setup (no entries: a zero diagonal) leaves the object refused */
    int64_t *p = calloc((size_t)n + 1, 8);
    CK_OK(ctx, hisp_matrix_create_csr(ctx, HISP_F64, n, n, p, NULL, NULL, &Z));
    ck_assert_int_eq(hisp_preconditioner_update(P, Z), HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_solver_solve(s, A2, b, x, NULL), HISP_ERR_INVALID_ARGUMENT);
    CK_OK(ctx, hisp_preconditioner_update(P, A));
    CK_OK(ctx, hisp_solver_solve(s, A, b, x, NULL));
    hisp_solver_destroy(&s);
    hisp_preconditioner_destroy(&P);
    free(p);
    hisp_vector_destroy(&b), hisp_vector_destroy(&x);
    hisp_matrix_destroy(&A), hisp_matrix_destroy(&A2), hisp_matrix_destroy(&B),
        hisp_matrix_destroy(&Z);
    hisp_context_destroy(&ctx);
}
END_TEST

/* method with AMG (amg_precision prec) on A from x = 0: converged, the
 * residual true (recomputed here); its iterations and levels' type. */
static int64_t solve_prec(int t, hisp_context ctx, hisp_solver_method method, const char *prec,
                          hisp_matrix A, hisp_vector b, hisp_vector x, hisp_type *type)
{
    CK_OK(ctx, hisp_context_set_option(ctx, "amg_precision", prec));
    hisp_solver s = NULL;
    CK_OK(ctx, hisp_solver_create(ctx, method, &s));
    CK_OK(ctx, hisp_solver_set_preconditioner(s, HISP_PRECOND_AMG));
    double zero = 0;
    CK_OK(ctx, hisp_vector_fill(x, hisp_scalar_host(&zero)));
    hisp_solve_info info;
    CK_OK(ctx, hisp_solver_solve(s, A, b, x, &info));
    double tr = true_residual(ctx, A, b, x);
    ck_assert_msg(info.converged && tr <= 1.01e-8, "%s %s amg_precision=%s: converged %d, true %g",
                  test_label(t), hisp_solver_method_name(method), prec, info.converged, tr);
    hisp_solver_destroy(&s);
    *type = info.precond_type;
    return info.iterations;
}

/* A's f32 copy for single-precision levels (hispi_amg_narrow, on the
 * device where the setup runs there): A's structure, each entry rounded. */
static void check_narrow(int t, hisp_context ctx, hisp_matrix A)
{
    hisp_matrix S = NULL;
    bool ok = false;
    CK_OK(ctx, hispi_amg_narrow(A, &S, &ok));
    ck_assert_msg(ok && S, "%s: narrowing refused", test_label(t));
    const int64_t *p, *q;
    const int32_t *c, *d;
    const void *v, *w;
    CK_OK(ctx, hisp_matrix_host_arrays(A, &p, NULL, &c, &v));
    CK_OK(ctx, hisp_matrix_host_arrays(S, &q, NULL, &d, &w));
    hisp_matrix_info mi;
    CK_OK(ctx, hisp_matrix_get_info(S, &mi));
    ck_assert_int_eq(mi.type, HISP_F32);
    for (int64_t i = 0; i <= mi.nrows; i++)
        ck_assert_int_eq(p[i], q[i]);
    for (int64_t k = 0; k < p[mi.nrows]; k++) {
        ck_assert_int_eq(c[k], d[k]);
        ck_assert_msg(((const float *)w)[k] == (float)((const double *)v)[k], "%s: entry %lld",
                      test_label(t), (long long)k);
    }
    hisp_matrix_destroy(&S);
}

/* Single-precision levels for an f64 system (amg_precision) on target t:
 * CG, BiCGSTAB and GMRES converge to 1e-8 with a true residual, CG within
 * one iteration of f64 levels; auto's choice by rows, device (f32 on GPUs
 * only), method (GMRES: f64) and the entries' range; a right-hand side of 2^-120 (its residuals far
 * below f32's normal numbers) takes the same iterations as its unscaled one (the cycle scales b
 * exactly); entries outside [2^-64, 2^64]: single refuses them, auto takes f64 levels; the
 * preconditioner object reports its levels' type. */
static void single_levels(int t)
{
    const int _i = t;
    hisp_context ctx = test_context(_i);
    hisp_matrix A = generated(ctx, HISP_GEN_JUMP3D, 14, 2);
    int64_t n = 14 * 14 * 14;
    hisp_vector b, x;
    rhs_and_x(ctx, n, test_seed() + 5, &b, &x);
    check_narrow(_i, ctx, A);
    hisp_type ty;
    int64_t full = solve_prec(_i, ctx, HISP_SOLVER_CG, "full", A, b, x, &ty);
    ck_assert_int_eq(ty, HISP_F64);
    int64_t single = solve_prec(_i, ctx, HISP_SOLVER_CG, "single", A, b, x, &ty);
    ck_assert_int_eq(ty, HISP_F32);
    ck_assert_msg(llabs((long long)(single - full)) <= 1,
                  "%s: CG %lld iterations single, %lld full", test_label(_i), (long long)single,
                  (long long)full);
    (void)solve_prec(_i, ctx, HISP_SOLVER_CG, "auto", A, b, x, &ty);
    ck_assert_int_eq(ty, HISP_F64); /* fewer rows than auto's bound */
    long rows = hispi_amg_single_rows;
    hispi_amg_single_rows = n;
    hisp_type gpu = hispi_amg_dev_usable(ctx) ? HISP_F32 : HISP_F64; /* auto's: f32 on GPUs */
    int64_t it = solve_prec(_i, ctx, HISP_SOLVER_CG, "auto", A, b, x, &ty);
    ck_assert_int_eq(ty, gpu);
    ck_assert_int_eq(it, gpu == HISP_F32 ? single : full);
    (void)solve_prec(_i, ctx, HISP_SOLVER_BICGSTAB, "auto", A, b, x, &ty);
    ck_assert_int_eq(ty, gpu);
    (void)solve_prec(_i, ctx, HISP_SOLVER_GMRES, "auto", A, b, x, &ty);
    ck_assert_int_eq(ty, HISP_F64); /* auto: gmres keeps f64 levels */
    (void)solve_prec(_i, ctx, HISP_SOLVER_GMRES, "single", A, b, x, &ty);
    ck_assert_int_eq(ty, HISP_F32);
    /* b times 2^-120 */
    hisp_vector bs = NULL;
    double f = ldexp(1, -120), zero = 0;
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, n, &bs));
    CK_OK(ctx, hisp_vector_axpby(hisp_scalar_host(&f), b, hisp_scalar_host(&zero), bs));
    it = solve_prec(_i, ctx, HISP_SOLVER_CG, "single", A, bs, x, &ty);
    ck_assert_msg(it == single, "%s: b times 2^-120: %lld iterations, %lld unscaled",
                  test_label(_i), (long long)it, (long long)single);
    /* entries of about 2^-70 */
    hisp_matrix As = rescaled(ctx, A, 1, ldexp(1, -70));
    (void)solve_prec(_i, ctx, HISP_SOLVER_CG, "auto", As, bs, x, &ty);
    ck_assert_int_eq(ty, HISP_F64);
    CK_OK(ctx, hisp_context_set_option(ctx, "amg_precision", "single"));
    hisp_solver s = NULL;
    CK_OK(ctx, hisp_solver_create(ctx, HISP_SOLVER_CG, &s));
    CK_OK(ctx, hisp_solver_set_preconditioner(s, HISP_PRECOND_AMG));
    ck_assert_int_eq(hisp_solver_solve(s, As, bs, x, NULL), HISP_ERR_INVALID_ARGUMENT);
    hisp_error_info ei;
    CK_OK(ctx, hisp_context_last_error(ctx, &ei));
    ck_assert_msg(strstr(ei.message, "amg_precision=single"), "%s: message '%s'", test_label(_i),
                  ei.message);
    hisp_solver_destroy(&s);
    hisp_preconditioner P = NULL;
    CK_OK(ctx, hisp_preconditioner_create(HISP_PRECOND_AMG, A, &P)); /* amg_precision single */
    hisp_preconditioner_info pi;
    CK_OK(ctx, hisp_preconditioner_get_info(P, &pi));
    ck_assert_int_eq(pi.type, HISP_F32);
    ck_assert_int_eq(cg_with(_i, ctx, A, P, b, x), single);
    hisp_preconditioner_destroy(&P);
    hispi_amg_single_rows = rows;
    hisp_vector_destroy(&b), hisp_vector_destroy(&x), hisp_vector_destroy(&bs);
    hisp_matrix_destroy(&A), hisp_matrix_destroy(&As);
    hisp_context_destroy(&ctx);
}

START_TEST(test_single)
{
    host_and_device_setup(_i, single_levels);
}
END_TEST

/* CG, BiCGSTAB and GMRES with --precond amg on every target: converged, the
 * residual they report true (recomputed here: within 0.1 % or 1e-12, the
 * rounding of ||b - A x|| near x's last digits), CG in at most half Jacobi's
 * iterations; LSQR and matrix-free operators refuse AMG. */
START_TEST(test_solve)
{
    hisp_context ctx = test_context(_i);
    static const struct {
        hisp_gen_kind k;
        int64_t n;
    } probs[] = {{HISP_GEN_POISSON3D, 16}, {HISP_GEN_JUMP3D, 16}};
    for (size_t q = 0; q < 2; q++) {
        hisp_matrix A = generated(ctx, probs[q].k, probs[q].n, 5);
        hisp_matrix_info mi;
        CK_OK(ctx, hisp_matrix_get_info(A, &mi));
        double *hb = malloc((size_t)mi.nrows * 8);
        uint64_t st = test_seed();
        for (int64_t i = 0; i < mi.nrows; i++)
            hb[i] = test_uniform(&st);
        hisp_vector b = NULL, x = NULL;
        CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, mi.nrows, &b));
        CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, mi.nrows, &x));
        CK_OK(ctx, hisp_vector_write(b, hb));
        int64_t it_jacobi = 0;
        for (int m = 0; m < 3; m++) {
            hisp_solver_method method = m == 0   ? HISP_SOLVER_CG
                                        : m == 1 ? HISP_SOLVER_BICGSTAB
                                                 : HISP_SOLVER_GMRES;
            for (int pc = m ? 1 : 0; pc < 2; pc++) {
                hisp_solver s = NULL;
                CK_OK(ctx, hisp_solver_create(ctx, method, &s));
                CK_OK(ctx, hisp_solver_set_preconditioner(s, pc ? HISP_PRECOND_AMG
                                                                : HISP_PRECOND_JACOBI));
                double zero = 0;
                CK_OK(ctx, hisp_vector_fill(x, hisp_scalar_host(&zero)));
                hisp_solve_info info;
                CK_OK(ctx, hisp_solver_solve(s, A, b, x, &info));
                double tr = true_residual(ctx, A, b, x);
                ck_assert_msg(info.converged && tr <= 1.01e-8 &&
                                  fabs(tr - info.relative_residual) <= 1e-3 * tr + 1e-12,
                              "%s %s %s: converged %d, reported %g, true %g", test_label(_i),
                              hisp_solver_method_name(method), pc ? "amg" : "jacobi",
                              info.converged, info.relative_residual, tr);
                if (!pc) it_jacobi = info.iterations;
                if (pc && method == HISP_SOLVER_CG)
                    ck_assert_msg(2 * info.iterations <= it_jacobi, "%s: AMG-CG %lld, Jacobi %lld",
                                  test_label(_i), (long long)info.iterations, (long long)it_jacobi);
                hisp_solver_destroy(&s);
            }
        }
        free(hb);
        hisp_vector_destroy(&b), hisp_vector_destroy(&x);
        hisp_matrix_destroy(&A);
    }
    solve_f32(ctx, _i);
    hisp_solver s = NULL;
    CK_OK(ctx, hisp_solver_create(ctx, HISP_SOLVER_LSQR, &s));
    CK_OK(ctx, hisp_solver_set_preconditioner(s, HISP_PRECOND_AMG));
    hisp_matrix A = generated(ctx, HISP_GEN_POISSON2D, 5, 1);
    hisp_vector b = NULL, x = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, 25, &b));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, 25, &x));
    ck_assert_int_eq(hisp_solver_solve(s, A, b, x, NULL), HISP_ERR_UNSUPPORTED);
    hisp_solver_destroy(&s);
    hisp_vector_destroy(&b), hisp_vector_destroy(&x);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

/* A missing, zero or negative diagonal, a matrix that is not square or not
 * CSR: HISP_ERR_INVALID_ARGUMENT with the reason, nothing kept. */
START_TEST(test_errors)
{
    hisp_context ctx = ref_ctx();
    hispi_amg_opts o;
    hispi_amg_defaults(&o);
    o.max_coarse = 2;
    hispi_amg h;
    int64_t p[5] = {0, 2, 4, 6, 7};
    int32_t c[7] = {0, 1, 0, 1, 2, 3, 3};
    double v[7] = {2, -1, -1, 2, 2, -1, 1};
    static const struct {
        int at;
        double d;
        const char *words;
    } bad[] = {{3, 0, "row 1 is 0"}, {6, -1, "row 3 is -1"}};
    for (size_t b = 0; b < 2; b++) {
        double w[7];
        memcpy(w, v, sizeof w);
        w[bad[b].at] = bad[b].d;
        hisp_matrix A = NULL;
        CK_OK(ctx, hisp_matrix_create_csr(ctx, HISP_F64, 4, 4, p, c, w, &A));
        ck_assert_int_eq(hispi_amg_setup(A, &o, NULL, &h), HISP_ERR_INVALID_ARGUMENT);
        hisp_error_info e;
        CK_OK(ctx, hisp_context_last_error(ctx, &e));
        ck_assert_msg(strstr(e.message, bad[b].words), "%s", e.message);
        ck_assert_int_eq(h.nlevels, 0);
        hisp_matrix_destroy(&A);
    }
    int64_t q[5] = {0, 1, 2, 3, 3}; /* row 3 without a diagonal */
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_create_csr(ctx, HISP_F64, 4, 4, q, c, v, &A));
    ck_assert_int_eq(hispi_amg_setup(A, &o, NULL, &h), HISP_ERR_INVALID_ARGUMENT);
    hisp_matrix_destroy(&A);
    CK_OK(ctx, hisp_matrix_create_csr(ctx, HISP_F64, 3, 4, p, c, v, &A));
    ck_assert_int_eq(hispi_amg_setup(A, &o, NULL, &h), HISP_ERR_INVALID_ARGUMENT);
    hisp_matrix_destroy(&A);
    A = generated(ctx, HISP_GEN_POISSON2D, 6, 1);
    CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_COO));
    ck_assert_int_eq(hispi_amg_setup(A, &o, NULL, &h), HISP_ERR_INVALID_ARGUMENT);
    hisp_matrix_destroy(&A);
    /* no strong coupling (1/4 < 0.9): no coarser level, too many rows for
     * the dense solve */
    A = generated(ctx, HISP_GEN_POISSON2D, 70, 1);
    o.theta = 0.9;
    ck_assert_int_eq(hispi_amg_setup(A, &o, NULL, &h), HISP_ERR_INVALID_ARGUMENT);
    hisp_error_info e;
    CK_OK(ctx, hisp_context_last_error(ctx, &e));
    ck_assert_msg(strstr(e.message, "4900 rows") && strstr(e.message, "strong"), "%s", e.message);
    ck_assert_int_eq(h.nlevels, 0);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

/* Every host allocation of a setup failed in turn: a clean status, nothing
 * kept (the sanitizers see no leak), A unchanged; then it succeeds. */
START_TEST(test_alloc_failures)
{
    hisp_context ctx = ref_ctx();
    hispi_amg h;
    long f = 0;
    failures_in_turn(ctx, 12, host_fail, HISP_ERR_OUT_OF_HOST_MEMORY, &f, &h);
    ck_assert_int_gt(f, 10);
    ck_assert_int_ge(h.nlevels, 2);
    hispi_amg_free(&h);
    hisp_context_destroy(&ctx);
}
END_TEST

Suite *suite_amg(void)
{
    Suite *s = suite_create("amg");
    TCase *tc = tcase_create("setup");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_aggregates);
    tcase_add_test(tc, test_strength_threshold);
    tcase_add_test(tc, test_hierarchy);
    tcase_add_test(tc, test_spectrum);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_alloc_failures);
    suite_add_tcase(s, tc);
    TCase *ts = tcase_create("solve");
    tcase_set_timeout(ts, 300);
    tcase_add_loop_test(ts, test_solve, 0, test_targets(NULL));
    tcase_add_loop_test(ts, test_device_setup, 0, test_targets(NULL));
    tcase_add_loop_test(ts, test_smoothers, 0, test_targets(NULL));
    tcase_add_loop_test(ts, test_object, 0, test_targets(NULL));
    tcase_add_loop_test(ts, test_update, 0, test_targets(NULL));
    tcase_add_loop_test(ts, test_update_reuse, 0, test_targets(NULL));
    tcase_add_loop_test(ts, test_update_refill, 0, test_targets(NULL));
    tcase_add_loop_test(ts, test_single, 0, test_targets(NULL));
    suite_add_tcase(s, ts);
    return s;
}
