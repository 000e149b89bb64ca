/* hisp's Krylov solvers on one backend without a GPU (PoCL on the CI
 * machine), through the public API, timed as the user waits for them; the
 * peer is scipy's cg (bench/solve_scipy.py) on the same matrices and right
 * sides, run by bench/solve_cpu.sh.
 *
 *   bench_solve_cpu [--backend opencl|reference|cuda] [--sizes 64,80,100] [--iters 100]
 *                   [--repeat 3] [--compound N] [--lsqr ROWS,COLS] [--json FILE]
 *
 * cg: poisson3d n^3 (f64, seed 42), b_i = bs_uniform(7, i), x0 = 0, a fixed
 * count of iterations (rtol 0, atol 1e-300; the count run is printed beside
 * the one asked for). ms/it = wall from a synchronize to the synchronize
 * after hisp_solver_solve (its setup included), median of `repeat` solves
 * after a 3-iteration warm-up solve (kernel builds, upload), / iterations.
 * floor = (CSR bytes + 13 vector streams of n doubles) / hisp_copy_bandwidth.
 * SpMV share = one synchronised hisp_spmv / ms per iteration.
 * --compound N adds BiCGSTAB and GMRES(30) on helmholtz N (c64) and CG on
 * qsurface N (q64); --lsqr adds LSQR on the ROWS x COLS matrix of
 * bs_lsq_matrix (10 per row), CSR and HiSparse. A method hisp does not
 * provide yet is printed as "unsupported". Exit 0; 2 when a solve failed
 * for another reason.
 *
 * --selftest checks what bench_solve_cuda --parts dist runs, at small sizes
 * on this backend: the SPD graph of rmat (bs_spd_graph) against a dense
 * construction, its symmetry and CG's convergence on it, then the scaling
 * runs (common_dist.c) with plans over 1, 2 and 4 of the device's
 * sub-devices (PoCL) or reference contexts. Exit 0 when all hold, else 2. */
#include "common_dist.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char matrix[32], type[8], method[16], format[16], status[64], reason[48];
    int64_t rows, nnz, asked, iters;
    double ms_it, setup_ms, first_ms, spmv_ms, share, floor_ms, relres;
} result;

static void hk(hisp_context ctx, hisp_status s, const char *what)
{
    if (!s) return;
    hisp_error_info e = {0};
    if (hisp_context_last_error(ctx, &e)) {
    }
    fprintf(stderr, "%s: %s: %s\n", what, hisp_status_string(s), e.message ? e.message : "");
    exit(3);
}

static int nres, failed;
static result res[64];

/* Solves A x = b (b from seed 7 or 17) with `method`, and times one SpMV. */
static void run(hisp_context ctx, hisp_matrix A, const char *name, hisp_solver_method method,
                const char *format, int64_t iters, int repeat, double spmv_per_it, double bw)
{
    hisp_matrix_info mi;
    hk(ctx, hisp_matrix_get_info(A, &mi), "info");
    hisp_type vt;
    int per = 1;
    hk(ctx, hisp_compound_vector_type(mi.type, &vt, &per), "vector type");
    int comps = (int)(hisp_type_size(vt) / 8);
    if (nres >= 64) return;
    result *r = &res[nres++];
    memset(r, 0, sizeof *r);
    snprintf(r->matrix, sizeof r->matrix, "%s", name);
    snprintf(r->type, sizeof r->type, "%s", hisp_type_name(mi.type));
    if (method == HISP_SOLVER_GMRES)
        snprintf(r->method, sizeof r->method, "gmres(30)");
    else
        snprintf(r->method, sizeof r->method, "%s", hisp_solver_method_name(method));
    snprintf(r->format, sizeof r->format, "%s", format);
    r->rows = mi.nrows;
    r->nnz = mi.nnz;
    r->asked = iters;
    r->ms_it = r->setup_ms = r->first_ms = r->spmv_ms = r->share = r->floor_ms = NAN;
    double *bh = bs_doubles(mi.nrows * comps), *xh = bs_doubles(mi.ncols * comps);
    bs_fill_uniform(bh, mi.nrows * comps, method == HISP_SOLVER_LSQR ? 13 : 7);
    bs_fill_uniform(xh, mi.ncols * comps, 19);
    hisp_vector b = NULL, x = NULL, y = NULL;
    hk(ctx, hisp_vector_create(ctx, vt, mi.nrows, &b), "vector");
    hk(ctx, hisp_vector_create(ctx, vt, mi.ncols, &x), "vector");
    hk(ctx, hisp_vector_create(ctx, vt, mi.nrows, &y), "vector");
    hk(ctx, hisp_vector_write(b, bh), "vector write");
    bs_solve s;
    bs_solve_fixed(ctx, method, A, b, x, iters, method == HISP_SOLVER_GMRES ? 30 : 0, 3, repeat,
                   &s);
    if (s.status) {
        snprintf(r->status, sizeof r->status, "%s", bs_status_word(s.status));
        printf("%s %s %s: %s: %s\n", name, r->method, format, r->status, s.message);
        failed |= s.status != HISP_ERR_UNSUPPORTED;
    } else {
        snprintf(r->status, sizeof r->status, "ok");
        snprintf(r->reason, sizeof r->reason, "%s", hisp_stop_reason_name(s.info.reason));
        r->iters = s.info.iterations;
        r->ms_it = s.ms_per_it;
        r->setup_ms = s.setup_ms;
        r->first_ms = s.first_ms;
        r->relres = s.info.relative_residual;
        hk(ctx, hisp_vector_write(x, xh), "vector write");
        r->spmv_ms = bs_spmv_wall(ctx, HISP_OP_N, A, x, y, 10, NULL);
        if (method == HISP_SOLVER_LSQR)
            r->spmv_ms += bs_spmv_wall(ctx, HISP_OP_T, A, b, x, 10, NULL);
        r->share = r->spmv_ms * spmv_per_it / r->ms_it;
        if (method == HISP_SOLVER_CG && mi.type == HISP_F64) {
            uint64_t mb = 0;
            hk(ctx, hisp_matrix_format_bytes(A, HISP_FORMAT_CSR, HISP_F64, &mb), "bytes");
            r->floor_ms =
                ((double)mb + BS_CG_VECTOR_STREAMS_UNFUSED * 8.0 * (double)mi.nrows) / bw * 1e3;
        }
        printf("%s %s %s: %lld of %lld iterations (%s), %.4f ms/it, setup %.2f ms, first solve "
               "%.1f ms, SpMV %.4f ms (share %.0f%%), relative residual %.3e\n",
               name, r->method, format, (long long)r->iters, (long long)iters, r->reason, r->ms_it,
               r->setup_ms, r->first_ms, r->spmv_ms, 100 * r->share, r->relres);
    }
    fflush(stdout);
    hisp_vector_destroy(&b);
    hisp_vector_destroy(&x);
    hisp_vector_destroy(&y);
    free(bh);
    free(xh);
}

static void json_num(FILE *f, const char *k, double v, int comma)
{
    if (isnan(v) || isinf(v))
        fprintf(f, "\"%s\": null%s", k, comma ? ", " : "");
    else
        fprintf(f, "\"%s\": %.6g%s", k, v, comma ? ", " : "");
}

/* ---- --selftest ------------------------------------------------------------ */

static int check(int ok, const char *what)
{
    printf("selftest: %s: %s\n", what, ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}

/* bs_spd_graph of rmat(scale, ef) against the dense construction (exact:
 * the row sums add the same values in the same column order). */
static int spd_dense(hisp_context ctx, int scale, int ef)
{
    hisp_gen_params gp;
    hisp_gen_defaults(HISP_GEN_RMAT, &gp);
    gp.scale = scale;
    gp.edge_factor = ef;
    hisp_matrix G = NULL;
    hk(ctx, hisp_matrix_generate(ctx, &gp, HISP_F64, &G), "rmat");
    hisp_matrix_info mi;
    const int64_t *p;
    const int32_t *c;
    const void *v;
    hk(ctx, hisp_matrix_get_info(G, &mi), "info");
    hk(ctx, hisp_matrix_host_arrays(G, &p, NULL, &c, &v), "arrays");
    int64_t n = mi.nrows, *bp, nnz;
    int32_t *bc;
    double *bv;
    if (bs_spd_graph(n, p, c, (const double *)v, &bp, &bc, &bv, &nnz)) return 1;
    double *D = calloc((size_t)(n * n), sizeof *D);
    if (!D) return 1;
    int selfloops = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t e = p[i]; e < p[i + 1]; e++) {
            if (c[e] == i) {
                selfloops++;
                continue;
            }
            D[i * n + c[e]] += fabs(((const double *)v)[e]);
            D[c[e] * n + i] += fabs(((const double *)v)[e]);
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

/* B of bs_dist_matrix: symmetric (B_ij = B_ji for each stored entry) and
 * CG converges on it; the true residual checked on the host. */
static int spd_cg(hisp_context ctx, int scale, int ef)
{
    char name[40];
    hisp_matrix B = bs_dist_matrix(ctx, "rmat", 0, scale, ef, name, sizeof name);
    if (!B) return 1;
    hisp_matrix_info mi;
    const int64_t *p;
    const int32_t *c;
    const void *vv;
    hk(ctx, hisp_matrix_get_info(B, &mi), "info");
    hk(ctx, hisp_matrix_host_arrays(B, &p, NULL, &c, &vv), "arrays");
    const double *v = vv;
    int64_t n = mi.nrows;
    int sym = 1;
    for (int64_t i = 0; i < n && sym; i++)
        for (int64_t e = p[i]; e < p[i + 1] && sym; e++) {
            int64_t j = c[e], lo = p[j], hi = p[j + 1];
            while (lo < hi) { /* B_ji by bisection */
                int64_t mid = lo + (hi - lo) / 2;
                if (c[mid] < i)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            sym = lo < p[j + 1] && c[lo] == i && v[lo] == v[e];
        }
    int bad = check(sym, "SPD graph symmetric");
    double *bh = bs_doubles(n), *xh = bs_doubles(n);
    bs_fill_uniform(bh, n, 7);
    hisp_vector b = NULL, x = NULL;
    hk(ctx, hisp_vector_create(ctx, HISP_F64, n, &b), "vector");
    hk(ctx, hisp_vector_create(ctx, HISP_F64, n, &x), "vector");
    hk(ctx, hisp_vector_write(b, bh), "write");
    hisp_solver s = NULL;
    hk(ctx, hisp_solver_create(ctx, HISP_SOLVER_CG, &s), "solver");
    hk(ctx, hisp_solver_set_tolerances(s, 1e-10, 0), "tolerances");
    hisp_solve_info in;
    hk(ctx, hisp_solver_solve(s, B, b, x, &in), "solve");
    hk(ctx, hisp_vector_read(x, xh), "read");
    double rr = 0, bb = 0;
    for (int64_t i = 0; i < n; i++) {
        double ax = 0;
        for (int64_t e = p[i]; e < p[i + 1]; e++)
            ax += v[e] * xh[c[e]];
        rr += (bh[i] - ax) * (bh[i] - ax);
        bb += bh[i] * bh[i];
    }
    printf("selftest: cg on %s: %s after %lld iterations, true relative residual %.2e\n", name,
           hisp_stop_reason_name(in.reason), (long long)in.iterations, sqrt(rr / bb));
    bad |= check(in.converged && sqrt(rr / bb) <= 1e-8, "CG converges on the SPD graph");
    hisp_solver_destroy(&s);
    hisp_vector_destroy(&b);
    hisp_vector_destroy(&x);
    hisp_matrix_destroy(&B);
    free(bh);
    free(xh);
    return bad;
}

static int selftest(hisp_context ctx, hisp_backend_kind backend)
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
    const struct {
        const char *kind;
        int64_t side;
        int scale, ef;
    } mats[] = {{"poisson3d", 24, 0, 0}, {"rmat", 0, 11, 8}};
    for (int m = 0; m < 2; m++) {
        char name[40];
        hisp_matrix A = bs_dist_matrix(ctx, mats[m].kind, mats[m].side, mats[m].scale, mats[m].ef,
                                       name, sizeof name);
        if (!A) return 1;
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

int main(int argc, char **argv)
{
    hisp_backend_kind backend = HISP_BACKEND_OPENCL;
    const char *sizes = "64,80,100", *json = NULL;
    int64_t iters = 100, cn = 0, lrows = 0, lcols = 0;
    int repeat = 3, self = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--selftest")) {
            self = 1;
            continue;
        }
#define OPT(name, stmt)                                                                            \
    if (!strcmp(a, name) && v) {                                                                   \
        stmt;                                                                                      \
        i++;                                                                                       \
        continue;                                                                                  \
    }
        OPT("--backend", if (hisp_backend_from_name(v, &backend)) backend = HISP_BACKEND_COUNT);
        OPT("--sizes", sizes = v);
        OPT("--iters", iters = atoll(v));
        OPT("--repeat", repeat = atoi(v));
        OPT("--compound", cn = atoll(v));
        OPT("--lsqr",
            if (sscanf(v, "%lld,%lld", (long long *)&lrows, (long long *)&lcols) != 2) lrows = -1);
        OPT("--json", json = v);
        fprintf(stderr,
                "usage: %s [--backend opencl|reference|cuda] [--sizes 64,80,100] [--iters 100] "
                "[--repeat 3] [--compound N] [--lsqr ROWS,COLS] [--json FILE] [--selftest]\n",
                argv[0]);
        return 1;
    }
    if (backend == HISP_BACKEND_COUNT || iters < 1 || repeat < 1 || lrows < 0 ||
        (lrows && lcols < 10)) {
        fprintf(stderr, "bad option value\n");
        return 1;
    }
    hisp_context ctx = NULL;
    if (hisp_context_create(&ctx)) return 3;
    hisp_status st = hisp_context_set_backend(ctx, backend, -1);
    if (st) {
        printf("backend %s: %s: nothing to measure\n", hisp_backend_name(backend),
               hisp_status_string(st));
        hisp_context_destroy(&ctx);
        return 3;
    }
    hisp_device_info dev;
    hk(ctx, hisp_context_get_device(ctx, &dev), "device");
    if (self) {
        int bad = selftest(ctx, backend);
        hisp_context_destroy(&ctx);
        return bad ? 2 : 0;
    }
    double bw = 0;
    hk(ctx, hisp_copy_bandwidth(ctx, (size_t)1 << 27, 10, &bw), "copy bandwidth");
    printf("# bench_solve_cpu: %s %s, copy bandwidth %.2f GB/s (read + write)\n",
           hisp_backend_name(backend), dev.name, bw * 1e-9);
    for (const char *s = sizes; s && *s;) {
        int64_t side = atoll(s);
        s = strchr(s, ',');
        if (s) s++;
        if (side <= 0) continue;
        hisp_gen_params gp;
        hisp_gen_defaults(HISP_GEN_POISSON3D, &gp);
        gp.n = side;
        gp.seed = 42;
        hisp_matrix A = NULL;
        hk(ctx, hisp_matrix_generate(ctx, &gp, HISP_F64, &A), "generate");
        char name[32];
        snprintf(name, sizeof name, "poisson3d-%lld", (long long)side);
        run(ctx, A, name, HISP_SOLVER_CG, "csr", iters, repeat, 1, bw);
        hisp_matrix_destroy(&A);
    }
    if (cn > 0) {
        hisp_matrix A = NULL;
        char name[32];
        snprintf(name, sizeof name, "helmholtz-%lld", (long long)cn);
        hk(ctx, hisp_matrix_generate_compound(ctx, HISP_CGEN_HELMHOLTZ, cn, 42, HISP_C64, &A),
           "helmholtz");
        run(ctx, A, name, HISP_SOLVER_BICGSTAB, "csr", iters, repeat, 2, bw);
        run(ctx, A, name, HISP_SOLVER_GMRES, "csr", iters, repeat, 1 + 1.0 / 30, bw);
        hisp_matrix_destroy(&A);
        snprintf(name, sizeof name, "qsurface-%lld", (long long)cn);
        hk(ctx, hisp_matrix_generate_compound(ctx, HISP_CGEN_QSURFACE, cn, 42, HISP_Q64, &A),
           "qsurface");
        run(ctx, A, name, HISP_SOLVER_CG, "csr", iters, repeat, 1, bw);
        hisp_matrix_destroy(&A);
    }
    if (lrows > 0) {
        int64_t *rp;
        int32_t *ci;
        double *v;
        bs_lsq_matrix(lrows, lcols, 10, 11, &rp, &ci, &v);
        hisp_matrix A = NULL, H = NULL;
        hk(ctx, hisp_matrix_create_csr(ctx, HISP_F64, lrows, lcols, rp, ci, v, &A), "csr");
        hk(ctx, hisp_matrix_duplicate(A, HISP_FORMAT_HISPARSE, &H), "HiSparse");
        run(ctx, A, "lsq-random", HISP_SOLVER_LSQR, "csr", iters, repeat, 1, bw);
        run(ctx, H, "lsq-random", HISP_SOLVER_LSQR, "hisparse", iters, repeat, 1, bw);
        hisp_matrix_destroy(&A);
        hisp_matrix_destroy(&H);
        free(rp);
        free(ci);
        free(v);
    }
    printf("\n| matrix | type | method | format | rows | nnz | iterations | ms/it | floor ms | "
           "ms/it / floor | SpMV ms | SpMV share | setup ms | first solve ms |\n");
    printf("|---|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    for (int i = 0; i < nres; i++) {
        const result *r = &res[i];
        char a[8][32];
        printf("| %s | %s | %s | %s | %lld | %lld | %lld/%lld %s %s | %s | %s | %s | %s | %s | %s "
               "| %s |\n",
               r->matrix, r->type, r->method, r->format, (long long)r->rows, (long long)r->nnz,
               (long long)r->iters, (long long)r->asked, r->status, r->reason,
               bs_fx(r->ms_it, a[0], "%.3f"), bs_fx(r->floor_ms, a[1], "%.3f"),
               bs_fx(r->ms_it / r->floor_ms, a[2], "%.2f"), bs_fx(r->spmv_ms, a[3], "%.3f"),
               bs_fx(100 * r->share, a[4], "%.0f%%"), bs_fx(r->setup_ms, a[5], "%.2f"),
               bs_fx(r->first_ms, a[6], "%.1f"));
    }
    FILE *f;
    if (json && (f = bench_open_out(json))) {
        fprintf(f,
                "{\"backend\": \"%s\", \"device\": \"%s\", \"copy_bandwidth\": %.6g, \"repeat\": "
                "%d, \"results\": [\n",
                hisp_backend_name(backend), dev.name, bw, repeat);
        for (int i = 0; i < nres; i++) {
            const result *r = &res[i];
            fprintf(f,
                    "  {\"matrix\": \"%s\", \"type\": \"%s\", \"method\": \"%s\", \"format\": "
                    "\"%s\", \"rows\": %lld, \"nnz\": %lld, \"iterations_asked\": %lld, "
                    "\"iterations\": %lld, \"status\": \"%s\", \"reason\": \"%s\", ",
                    r->matrix, r->type, r->method, r->format, (long long)r->rows, (long long)r->nnz,
                    (long long)r->asked, (long long)r->iters, r->status, r->reason);
            json_num(f, "ms_per_it", r->ms_it, 1);
            json_num(f, "floor_ms", r->floor_ms, 1);
            json_num(f, "spmv_ms", r->spmv_ms, 1);
            json_num(f, "spmv_share", r->share, 1);
            json_num(f, "setup_ms", r->setup_ms, 1);
            json_num(f, "first_ms", r->first_ms, 1);
            json_num(f, "relative_residual", r->relres, 0);
            fprintf(f, "}%s\n", i + 1 < nres ? "," : "");
        }
        fprintf(f, "]}\n");
        bench_close_out(f);
    }
    hisp_context_destroy(&ctx);
    return failed ? 2 : 0;
}
