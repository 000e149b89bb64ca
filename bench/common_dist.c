/* The distributed solvers' scaling runs (common_dist.h). */
#include "common_dist.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void say_error(hisp_context ctx, hisp_status s, const char *what)
{
    hisp_error_info e = {0};
    if (hisp_context_last_error(ctx, &e)) {
    }
    fprintf(stderr, "%s: %s: %s\n", what, hisp_status_string(s), e.message ? e.message : "");
}

hisp_matrix bs_dist_matrix(hisp_context ctx, const char *kind, int64_t side, int scale,
                           int edge_factor, char *name, size_t name_size)
{
    hisp_gen_params gp;
    hisp_matrix A = NULL;
    double t0 = bench_now_ms();
    hisp_status s;
    if (!strcmp(kind, "poisson3d")) {
        hisp_gen_defaults(HISP_GEN_POISSON3D, &gp);
        gp.n = side;
        gp.seed = 42;
        snprintf(name, name_size, "poisson3d-%lld", (long long)side);
        s = hisp_matrix_generate(ctx, &gp, HISP_F64, &A);
        if (s) {
            say_error(ctx, s, "generate poisson3d");
            return NULL;
        }
        printf("%s: made in %.0f ms\n", name, bench_now_ms() - t0);
        return A;
    }
    if (strcmp(kind, "rmat")) {
        fprintf(stderr, "unknown matrix %s (poisson3d, rmat)\n", kind);
        return NULL;
    }
    hisp_gen_defaults(HISP_GEN_RMAT, &gp);
    gp.scale = scale;
    gp.edge_factor = edge_factor;
    gp.seed = 1;
    snprintf(name, name_size, "rmat-%d-%d-spd", scale, edge_factor);
    hisp_matrix G = NULL;
    s = hisp_matrix_generate(ctx, &gp, HISP_F64, &G);
    if (s) {
        say_error(ctx, s, "generate rmat");
        return NULL;
    }
    hisp_matrix_info mi;
    const int64_t *p;
    const int32_t *c;
    const void *v;
    s = hisp_matrix_get_info(G, &mi);
    if (!s) s = hisp_matrix_host_arrays(G, &p, NULL, &c, &v);
    if (s) {
        say_error(ctx, s, "rmat arrays");
        hisp_matrix_destroy(&G);
        return NULL;
    }
    double t1 = bench_now_ms();
    int64_t *bp, nnz;
    int32_t *bc;
    double *bv;
    int rc = bs_spd_graph(mi.nrows, p, c, (const double *)v, &bp, &bc, &bv, &nnz);
    double t2 = bench_now_ms();
    int64_t gnnz = mi.nnz, n = mi.nrows;
    hisp_matrix_destroy(&G); /* before B's copy: the peak is A + B's buffer, or B twice */
    if (rc) {
        fprintf(stderr, "rmat SPD graph: out of host memory\n");
        return NULL;
    }
    s = hisp_matrix_create_csr(ctx, HISP_F64, n, n, bp, bc, bv, &A);
    free(bp);
    free(bc);
    free(bv);
    if (s) {
        say_error(ctx, s, "SPD graph matrix");
        return NULL;
    }
    printf("%s: rmat %lld vertices, %lld entries (generated in %.0f ms) -> SPD graph %lld "
           "entries (%.0f ms), copied in %.0f ms\n",
           name, (long long)n, (long long)gnnz, t1 - t0, (long long)nnz, t2 - t1,
           bench_now_ms() - t2);
    return A;
}

/* ---- the runs -------------------------------------------------------------- */

static bs_dist_row *row_add(bs_dist_rows *R, const char *name, const char *method, const char *dev,
                            int64_t rows, int64_t nnz, int64_t asked)
{
    if (R->n >= BS_DIST_MAX_ROWS) return NULL;
    bs_dist_row *r = &R->v[R->n++];
    memset(r, 0, sizeof *r);
    snprintf(r->matrix, sizeof r->matrix, "%s", name);
    snprintf(r->method, sizeof r->method, "%s", method);
    snprintf(r->devices, sizeof r->devices, "%s", dev);
    snprintf(r->status, sizeof r->status, "ok");
    r->ndev = atoi(dev);
    r->plan = r->ndev > 1 || strchr(dev, 'p') != NULL;
    r->rows = rows;
    r->nnz = nnz;
    r->asked = asked;
    r->ms_it = r->speedup = r->product_it = r->vector_it = r->reduce_it = r->other_it = NAN;
    r->x_diff = r->plan_ms = NAN;
    return r;
}

static void fail_row(hisp_context ctx, bs_dist_row *r, hisp_status st, bs_dist_rows *R)
{
    hisp_error_info e = {0};
    if (hisp_context_last_error(ctx, &e)) {
    }
    snprintf(r->status, sizeof r->status, "%s", bs_status_word(st));
    printf("  %s on %s device(s): %s: %s\n", r->method, r->devices, r->status,
           e.message ? e.message : "");
    R->failed = 1;
}

/* The breakdown per iteration of the solve with the median wall. */
static void finish_row(bs_dist_row *r, const double *wall, const hisp_solve_info *in, int rep)
{
    int idx[64];
    for (int k = 0; k < rep; k++)
        idx[k] = k;
    for (int a = 1; a < rep; a++) /* by wall, insertion sort */
        for (int b = a; b > 0 && wall[idx[b]] < wall[idx[b - 1]]; b--) {
            int t = idx[b];
            idx[b] = idx[b - 1];
            idx[b - 1] = t;
        }
    const hisp_solve_info *m = &in[idx[(rep - 1) / 2]];
    double it = m->iterations > 0 ? (double)m->iterations : NAN;
    r->iters = m->iterations;
    r->ms_it = bench_median(wall, rep) / it;
    r->product_it = m->product_ms / it;
    r->vector_it = m->vector_ms / it;
    r->reduce_it = m->reduce_ms / it;
    r->other_it = (wall[idx[(rep - 1) / 2]] - m->product_ms - m->vector_ms - m->reduce_ms) / it;
}

static hisp_solver_method method_of(const char *name)
{
    hisp_solver_method m = HISP_SOLVER_CG;
    if (hisp_solver_method_from_name(name, &m)) m = HISP_SOLVER_COUNT;
    return m;
}

/* Every method over a plan of nd devices. x (host, n doubles per method)
 * receives the solutions. */
static void run_plan(hisp_context ctx, hisp_matrix A, const char *name, const bs_dist_opts *o,
                     const char *dev, int nd, const double *bh, double **xs, const char **meth,
                     int nm, bs_dist_rows *R)
{
    hisp_matrix_info mi;
    if (hisp_matrix_get_info(A, &mi)) return;
    int64_t n = mi.nrows;
    hisp_device_ref refs[HISP_MPLAN_MAX_DEVICES];
    for (int k = 0; k < nd; k++)
        refs[k] = (hisp_device_ref){o->backend, (o->plan_flags & HISP_MPLAN_SUBDEVICES) ? 0 : k};
    hisp_mplan plan = NULL;
    double t0 = bench_now_ms();
    hisp_status st = hisp_mplan_create(A, nd, refs, HISP_PART_PCSR, o->plan_flags, &plan);
    double plan_ms = bench_now_ms() - t0;
    hisp_mvector mb = NULL, mx = NULL;
    if (!st) st = hisp_mvector_create(plan, HISP_MVEC_ROWS, &mb);
    if (!st) st = hisp_mvector_create(plan, HISP_MVEC_ROWS, &mx);
    if (!st) st = hisp_mvector_write(mb, bh);
    if (!st) printf("  plan over %d device(s) made in %.0f ms\n", nd, plan_ms);
    double *x0 = calloc((size_t)n, sizeof *x0);
    for (int mk = 0; mk < nm; mk++) {
        bs_dist_row *r = row_add(R, name, meth[mk], dev, n, mi.nnz, o->iters);
        if (!r) break;
        r->plan_ms = plan_ms;
        if (!st && !x0) st = HISP_ERR_OUT_OF_HOST_MEMORY;
        if (st) {
            fail_row(ctx, r, st, R);
            continue;
        }
        hisp_solver sv = NULL;
        hisp_status s2 = hisp_solver_create(ctx, method_of(meth[mk]), &sv);
        if (!s2) s2 = hisp_solver_set_tolerances(sv, BS_RTOL, BS_ATOL);
        double wall[64];
        hisp_solve_info in[64];
        for (int k = -1; k < o->repeat && !s2; k++) { /* k = -1: warm-up, 2 iterations */
            hisp_solve_info w;
            s2 = hisp_solver_set_max_iterations(sv, k < 0 ? 2 : o->iters);
            if (!s2) s2 = hisp_mvector_write(mx, x0);
            double t1 = bench_now_ms();
            if (!s2) s2 = hisp_solver_solve_dist(sv, plan, mb, mx, k < 0 ? &w : &in[k]);
            if (k >= 0) wall[k] = bench_now_ms() - t1;
        }
        if (!s2) s2 = hisp_mvector_read(mx, xs[mk]);
        hisp_solver_destroy(&sv);
        if (s2) {
            fail_row(ctx, r, s2, R);
            continue;
        }
        finish_row(r, wall, in, o->repeat);
        printf("  %s on %s: %lld iterations, %.4f ms/it (product %.4f, vector %.4f, reduce "
               "%.4f, other %.4f)\n",
               r->method, r->devices, (long long)r->iters, r->ms_it, r->product_it, r->vector_it,
               r->reduce_it, r->other_it);
        fflush(stdout);
    }
    free(x0);
    hisp_mvector_destroy(&mb);
    hisp_mvector_destroy(&mx);
    hisp_mplan_destroy(&plan);
}

/* Every method on ctx alone (the baseline). */
static void run_local(hisp_context ctx, hisp_matrix A, const char *name, const bs_dist_opts *o,
                      const double *bh, double **xs, const char **meth, int nm, bs_dist_rows *R)
{
    hisp_matrix_info mi;
    if (hisp_matrix_get_info(A, &mi)) return;
    int64_t n = mi.nrows;
    hisp_vector b = NULL, x = NULL;
    hisp_status st = hisp_vector_create(ctx, HISP_F64, n, &b);
    if (!st) st = hisp_vector_create(ctx, HISP_F64, n, &x);
    if (!st) st = hisp_vector_write(b, bh);
    for (int mk = 0; mk < nm; mk++) {
        bs_dist_row *r = row_add(R, name, meth[mk], "1", n, mi.nnz, o->iters);
        if (!r) break;
        if (st) {
            fail_row(ctx, r, st, R);
            continue;
        }
        bs_solve s;
        hisp_status s2 =
            bs_solve_fixed(ctx, method_of(meth[mk]), A, b, x, o->iters, 0, 2, o->repeat, &s);
        if (!s2) s2 = hisp_vector_read(x, xs[mk]);
        if (s2) {
            fail_row(ctx, r, s2, R);
            continue;
        }
        r->iters = s.info.iterations;
        r->ms_it = s.ms_per_it;
        double it = (double)s.info.iterations;
        double sum = s.info.product_ms + s.info.vector_ms + s.info.reduce_ms;
        if (sum > 0) { /* a backend whose one-context calls are timed */
            r->product_it = s.info.product_ms / it;
            r->vector_it = s.info.vector_ms / it;
            r->reduce_it = s.info.reduce_ms / it;
            r->other_it = (s.info.ms - sum) / it; /* of the same (last) solve */
        }
        printf("  %s on 1 device (one context): %lld iterations, %.4f ms/it\n", r->method,
               (long long)r->iters, r->ms_it);
        fflush(stdout);
    }
    hisp_vector_destroy(&b);
    hisp_vector_destroy(&x);
}

void bs_dist_run(hisp_context ctx, hisp_matrix A, const char *name, double xtol,
                 const bs_dist_opts *o, bs_dist_rows *R)
{
    hisp_matrix_info mi;
    if (hisp_matrix_get_info(A, &mi)) return;
    int64_t n = mi.nrows;
    printf("%s: %lld rows, %lld entries\n", name, (long long)n, (long long)mi.nnz);
    const char *meth[8];
    char mbuf[8][16];
    int nm = 0;
    for (const char *s = o->methods; s && *s && nm < 8;) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        snprintf(mbuf[nm], sizeof mbuf[nm], "%.*s", (int)len, s);
        if (method_of(mbuf[nm]) == HISP_SOLVER_COUNT) {
            fprintf(stderr, "unknown method %s\n", mbuf[nm]);
            R->failed = 1;
        } else {
            meth[nm] = mbuf[nm];
            nm++;
        }
        s = e ? e + 1 : NULL;
    }
    double *bh = malloc((size_t)n * sizeof *bh);
    /* solutions: [device entry][method] */
    double *xs[16][8] = {{NULL}};
    char devs[16][8];
    int nd = 0;
    for (const char *s = o->devices; s && *s && nd < 16;) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        snprintf(devs[nd], sizeof devs[nd], "%.*s", (int)len, s);
        int k = atoi(devs[nd]);
        if (k >= 1 && k <= HISP_MPLAN_MAX_DEVICES) nd++;
        s = e ? e + 1 : NULL;
    }
    int ok = bh != NULL;
    for (int d = 0; d < nd && ok; d++)
        for (int m = 0; m < nm && ok; m++)
            ok = (xs[d][m] = malloc((size_t)n * sizeof(double))) != NULL;
    if (!ok) {
        fprintf(stderr, "%s: out of host memory for the solutions\n", name);
        R->failed = 1;
        goto done;
    }
    bs_fill_uniform(bh, n, 7);
    int first = R->n, local = -1;
    /* the plans first, the one-context solves last (device 0 holds A once) */
    for (int d = 0; d < nd; d++) {
        if (!strcmp(devs[d], "1")) {
            local = d;
            continue;
        }
        run_plan(ctx, A, name, o, devs[d], atoi(devs[d]), bh, xs[d], meth, nm, R);
    }
    if (local >= 0) run_local(ctx, A, name, o, bh, xs[local], meth, nm, R);
    /* speedups and differences against the one-context rows */
    for (int i = first; i < R->n; i++) {
        bs_dist_row *r = &R->v[i];
        int d = 0, m = 0;
        while (d < nd && strcmp(devs[d], r->devices))
            d++;
        while (m < nm && strcmp(meth[m], r->method))
            m++;
        for (int j = first; j < R->n && local >= 0; j++) {
            const bs_dist_row *b = &R->v[j];
            if (strcmp(b->devices, "1") || strcmp(b->method, r->method)) continue;
            r->speedup = b->ms_it / r->ms_it;
            if (!strcmp(r->status, "ok") && !strcmp(b->status, "ok") && d < nd && m < nm &&
                d != local) {
                r->x_diff = bs_rel_diff(xs[d][m], xs[local][m], n);
                /* BiCGSTAB's iterates 100 fixed iterations from convergence
                 * follow rounding (1e-2 apart on 4 H200s): reported, not held */
                if (!(r->x_diff <= xtol) && strcmp(r->method, "bicgstab")) {
                    printf("  %s on %s: x differs from the one-context solution by %.2e (more "
                           "than %.0e)\n",
                           r->method, r->devices, r->x_diff, xtol);
                    R->failed = 1;
                }
            }
        }
    }
done:
    free(bh);
    for (int d = 0; d < 16; d++)
        for (int m = 0; m < 8; m++)
            free(xs[d][m]);
}

void bs_dist_tables(FILE *f, const bs_dist_rows *R)
{
    char a[8][32];
    for (int i = 0; i < R->n; i++) {
        const bs_dist_row *r = &R->v[i];
        int seen = 0;
        for (int j = 0; j < i; j++)
            if (!strcmp(R->v[j].matrix, r->matrix)) seen = 1;
        if (seen) continue;
        fprintf(f,
                "\n%s (%lld rows, %lld entries, f64): fixed iterations, ms per iteration "
                "(median solve); product / vector / reduce / other: that solve's breakdown "
                "per iteration (hisp_solve_info; 1 = one context on device 0: no breakdown on "
                "device backends)\n\n",
                r->matrix, (long long)r->rows, (long long)r->nnz);
        fprintf(f, "| method | devices | iterations | ms/it | **speedup** | product | vector | "
                   "reduce | other | x rel. diff | plan ms |\n");
        fprintf(f, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
        for (int j = i; j < R->n; j++) {
            const bs_dist_row *q = &R->v[j];
            if (strcmp(q->matrix, r->matrix)) continue;
            fprintf(f, "| %s | %s | %lld/%lld %s | %s | **%s** | %s | %s | %s | %s | %s | %s |\n",
                    q->method, q->devices, (long long)q->iters, (long long)q->asked, q->status,
                    bs_fx(q->ms_it, a[0], "%.4f"), bs_fx(q->speedup, a[1], "%.2f"),
                    bs_fx(q->product_it, a[2], "%.4f"), bs_fx(q->vector_it, a[3], "%.4f"),
                    bs_fx(q->reduce_it, a[4], "%.4f"), bs_fx(q->other_it, a[5], "%.4f"),
                    bs_fx(q->x_diff, a[6], "%.1e"), bs_fx(q->plan_ms, a[7], "%.0f"));
        }
    }
}

static void num(FILE *f, const char *k, double v, int comma)
{
    if (isnan(v) || isinf(v))
        fprintf(f, "\"%s\": null%s", k, comma ? ", " : "");
    else
        fprintf(f, "\"%s\": %.6g%s", k, v, comma ? ", " : "");
}

void bs_dist_json(FILE *f, const bs_dist_row *r)
{
    fprintf(f,
            "{\"part\": \"dist\", \"matrix\": \"%s\", \"method\": \"%s\", \"format\": \"csr\", "
            "\"devices\": \"%s\", "
            "\"plan\": %s, \"rows\": %lld, \"nnz\": %lld, \"iterations_asked\": %lld, "
            "\"iterations\": %lld, \"status\": \"%s\", ",
            r->matrix, r->method, r->devices, r->plan ? "true" : "false", (long long)r->rows,
            (long long)r->nnz, (long long)r->asked, (long long)r->iters, r->status);
    num(f, "ms_per_it", r->ms_it, 1);
    num(f, "speedup", r->speedup, 1);
    num(f, "product_ms_per_it", r->product_it, 1);
    num(f, "vector_ms_per_it", r->vector_it, 1);
    num(f, "reduce_ms_per_it", r->reduce_it, 1);
    num(f, "other_ms_per_it", r->other_it, 1);
    num(f, "x_rel_diff", r->x_diff, 1);
    num(f, "plan_ms", r->plan_ms, 0);
    fprintf(f, "}");
}

/* ---- bs_dist_selftest ------------------------------------------------------ */

static int check(int ok, const char *what)
{
    printf("selftest: %s: %s\n", what, ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}

/* Fails the selftest with the context's message when s is an error. */
static int failed(hisp_context ctx, hisp_status s, const char *what)
{
    if (!s) return 0;
    say_error(ctx, s, what);
    return check(0, what);
}

/* The SPD graph of rmat(scale, ef) against the dense construction (exact:
 * the row sums add the same values in the same column order). */
static int spd_dense(hisp_context ctx, int scale, int ef)
{
    hisp_gen_params gp;
    hisp_gen_defaults(HISP_GEN_RMAT, &gp);
    gp.scale = scale;
    gp.edge_factor = ef;
    hisp_matrix G = NULL;
    hisp_matrix_info mi;
    const int64_t *p = NULL;
    const int32_t *c = NULL;
    const void *vv = NULL;
    hisp_status s = hisp_matrix_generate(ctx, &gp, HISP_F64, &G);
    if (!s) s = hisp_matrix_get_info(G, &mi);
    if (!s) s = hisp_matrix_host_arrays(G, &p, NULL, &c, &vv);
    if (s) {
        hisp_matrix_destroy(&G);
        return failed(ctx, s, "rmat");
    }
    const double *v = vv;
    int64_t n = mi.nrows, *bp = NULL, nnz = 0;
    int32_t *bc = NULL;
    double *bv = NULL, *D = calloc((size_t)(n * n), sizeof *D);
    if (!D || bs_spd_graph(n, p, c, v, &bp, &bc, &bv, &nnz)) {
        free(D);
        hisp_matrix_destroy(&G);
        return check(0, "SPD graph: host memory");
    }
    int selfloops = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t e = p[i]; e < p[i + 1]; e++) {
            if (c[e] == i) {
                selfloops++;
                continue;
            }
            D[i * n + c[e]] += fabs(v[e]);
            D[c[e] * n + i] += fabs(v[e]);
        }
    for (int64_t i = 0; i < n; i++) {
        double sum = 0;
        for (int64_t j = 0; j < n; j++)
            if (j != i) sum += D[i * n + j];
        D[i * n + i] = sum + 1;
    }
    int bad = 0;
    int64_t dense_nnz = 0;
    for (int64_t i = 0; i < n * n; i++)
        dense_nnz += D[i] != 0;
    for (int64_t i = 0; i < n && !bad; i++)
        for (int64_t e = bp[i]; e < bp[i + 1]; e++) {
            if (e > bp[i] && bc[e] <= bc[e - 1]) bad = 1; /* sorted, distinct */
            if (bv[e] != D[i * n + bc[e]]) bad = 1;
        }
    printf("selftest: rmat-%d-%d: %lld entries (%d self loops) -> SPD graph %lld entries (dense "
           "%lld)\n",
           scale, ef, (long long)mi.nnz, selfloops, (long long)nnz, (long long)dense_nnz);
    bad |= nnz != dense_nnz || bp[n] != nnz;
    free(D);
    free(bp);
    free(bc);
    free(bv);
    hisp_matrix_destroy(&G);
    return check(!bad, "SPD graph equals the dense construction");
}

/* Is the CSR matrix (p, c, v) of n rows symmetric, B_ij = B_ji for each
 * stored entry (sorted rows)? */
static int symmetric(int64_t n, const int64_t *p, const int32_t *c, const double *v)
{
    for (int64_t i = 0; i < n; i++)
        for (int64_t e = p[i]; e < p[i + 1]; e++) {
            int64_t j = c[e], lo = p[j], hi = p[j + 1];
            while (lo < hi) { /* B_ji by bisection */
                int64_t mid = lo + (hi - lo) / 2;
                if (c[mid] < i)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (!(lo < p[j + 1] && c[lo] == i && v[lo] == v[e])) return 0;
        }
    return 1;
}

/* B of bs_dist_matrix: symmetric, and CG converges on it (the true
 * residual checked on the host). */
static int spd_cg(hisp_context ctx, int scale, int ef)
{
    char name[40];
    hisp_matrix B = bs_dist_matrix(ctx, "rmat", 0, scale, ef, name, sizeof name);
    if (!B) return check(0, "SPD graph made");
    hisp_matrix_info mi = {0};
    const int64_t *p = NULL;
    const int32_t *c = NULL;
    const void *vv = NULL;
    hisp_status s = hisp_matrix_get_info(B, &mi);
    if (!s) s = hisp_matrix_host_arrays(B, &p, NULL, &c, &vv);
    int64_t n = mi.nrows;
    int bad = s ? failed(ctx, s, "SPD graph arrays")
                : check(symmetric(n, p, c, vv), "SPD graph symmetric");
    const double *v = vv;
    double *bh = bs_doubles(n), *xh = bs_doubles(n);
    bs_fill_uniform(bh, n, 7);
    hisp_vector b = NULL, x = NULL;
    hisp_solver sv = NULL;
    hisp_solve_info in = {0};
    if (!s) s = hisp_vector_create(ctx, HISP_F64, n, &b);
    if (!s) s = hisp_vector_create(ctx, HISP_F64, n, &x);
    if (!s) s = hisp_vector_write(b, bh);
    if (!s) s = hisp_solver_create(ctx, HISP_SOLVER_CG, &sv);
    if (!s) s = hisp_solver_set_tolerances(sv, 1e-10, 0);
    if (!s) s = hisp_solver_solve(sv, B, b, x, &in);
    if (!s) s = hisp_vector_read(x, xh);
    double rr = 0, bb = 0;
    for (int64_t i = 0; !s && i < n; i++) {
        double ax = 0;
        for (int64_t e = p[i]; e < p[i + 1]; e++)
            ax += v[e] * xh[c[e]];
        rr += (bh[i] - ax) * (bh[i] - ax);
        bb += bh[i] * bh[i];
    }
    if (s) {
        bad |= failed(ctx, s, "CG on the SPD graph");
    } else {
        printf("selftest: cg on %s: %s after %lld iterations, true relative residual %.2e\n", name,
               hisp_stop_reason_name(in.reason), (long long)in.iterations, sqrt(rr / bb));
        bad |= check(in.converged && sqrt(rr / bb) <= 1e-8, "CG converges on the SPD graph");
    }
    hisp_solver_destroy(&sv);
    hisp_vector_destroy(&b);
    hisp_vector_destroy(&x);
    hisp_matrix_destroy(&B);
    free(bh);
    free(xh);
    return bad;
}

int bs_dist_selftest(hisp_context ctx, hisp_backend_kind backend)
{
    int bad = spd_dense(ctx, 7, 8);
    bad |= spd_dense(ctx, 9, 16);
    bad |= spd_cg(ctx, 12, 8);
    bs_dist_opts o = {.backend = backend,
                      .plan_flags = HISP_MPLAN_SUBDEVICES, /* k parts on one device */
                      .devices = "1,1p,2,4",
                      .methods = "cg,bicgstab",
                      .iters = 20,
                      .repeat = 3};
    static bs_dist_rows R;
    memset(&R, 0, sizeof R);
    const struct {
        const char *kind;
        int64_t side;
        int scale, ef;
    } mats[] = {{"poisson3d", 24, 0, 0}, {"rmat", 0, 11, 8}};
    for (int m = 0; m < 2; m++) {
        char name[40];
        hisp_matrix A = bs_dist_matrix(ctx, mats[m].kind, mats[m].side, mats[m].scale, mats[m].ef,
                                       name, sizeof name);
        if (!A) return check(0, "scaling matrix made");
        bs_dist_run(ctx, A, name, m ? BS_DIST_XTOL_GRAPH : BS_DIST_XTOL, &o, &R);
        hisp_matrix_destroy(&A);
    }
    bs_dist_tables(stdout, &R);
    int timed = R.n == 16;
    for (int i = 0; i < R.n; i++) {
        const bs_dist_row *r = &R.v[i];
        timed &= r->iters == 20 && r->ms_it > 0 && r->speedup > 0;
        if (r->plan) timed &= r->product_it > 0 && r->reduce_it > 0 && r->vector_it >= 0;
    }
    bad |= check(!R.failed && timed, "scaling runs: 16 rows, breakdowns, solutions agree");
    printf("selftest: %s\n", bad ? "FAILED" : "passed");
    return bad;
}
