/* MSREP benchmark on several NVIDIA GPUs (issue 7): speedup of 1, 2, 4 GPUs
 * over one, for the row-block baseline and pCSR / pCSC / pCOO, on rmat
 * (power law) and poisson3d (regular) matrices of 0.5-2 billion nonzeros,
 * without and with the optimisations. Options: --help (the help text below).
 *
 * --nnz picks the generator size (rmat: scale with edge factor 16, about
 * 16 * 2^scale entries before merging repeats; poisson3d: side n with
 * 7 n^3 entries); the library's generator runs multi-threaded. pcsc plans
 * read a CSC copy made once here (OpenMP transpose), so that no plan converts.
 * --cache DIR keeps the generated CSR as a raw file
 * (DIR/<matrix>-<nnz>-<type>.csr).
 *
 * Variants (one plan serves host and resident; one plan each for the others):
 *   host          hisp kernel, x and y on the host, merge on the host (hisp_mspmv)
 *   resident      hisp kernel, x and y on GPU 0 (hisp_mspmv_vec): x and the
 *                 partial results move GPU to GPU, merge kernels on GPU 0
 *   cusparse      cuSPARSE per device, resident, device merge
 *   cusparse-pptr the same with p*-opt (local pointers made on the devices)
 *   dist          hisp kernel, x replicated and y split by rows on the devices
 *                 (hisp_mspmv_dist: only shared boundary rows move; row kinds;
 *                 wall time per call)
 *   dist-fit      dist on a second plan whose parts balance nnz + w * rows,
 *                 w fitted to dist's per-device kernel times
 *                 (hisp_mplan_fit_row_cost; pcsr and pcoo), cuts in short
 *                 rows moved to row ends (HISP_MPLAN_ALIGN)
 * Per configuration: the one-time cost (conversion, partition, distribution)
 * and the per-SpMV medians (whole call, x sent, kernel time of the slowest
 * device by CUDA events, partial results gathered, merge), the load balance,
 * and speedups: over the same kind and variant on 1 GPU (per SpMV and
 * compute only) and over the single-GPU hisp_spmv with resident x and y.
 * Every result is checked against the single-GPU hisp_spmv result.
 * --backend opencl|reference runs the same logic elsewhere (tests of
 * bench/msrep_suite.sh on machines without a GPU; devices beyond the
 * backend's count share one). */
#include "common.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void hk(hisp_context ctx, hisp_status s, const char *what)
{
    if (s == HISP_SUCCESS) return;
    hisp_error_info e = {0};
    if (hisp_context_last_error(ctx, &e)) {
    }
    fprintf(stderr, "%s: %s: %s\n", what, hisp_status_string(s), e.message ? e.message : "");
    exit(3);
}

/* ---- the matrix: generated, or read from the raw cache -------------------- */

static hisp_matrix make_matrix(hisp_context ctx, const char *kind, double nnz, hisp_type t,
                               const char *cache, double *gen_ms)
{
    hisp_gen_params p;
    char path[4096] = "";
    if (strcmp(kind, "rmat") == 0) {
        hisp_gen_defaults(HISP_GEN_RMAT, &p);
        p.edge_factor = 16;
        p.scale = (int)lround(log2(nnz / 16.0));
    } else {
        hisp_gen_defaults(HISP_GEN_POISSON3D, &p);
        p.n = (int64_t)lround(cbrt(nnz / 7.0));
    }
    if (cache)
        snprintf(path, sizeof path, "%s/%s-%.0f-%s.csr", cache, kind, nnz, hisp_type_name(t));
    double t0 = bench_now_ms();
    hisp_matrix A = NULL;
    FILE *f = path[0] ? fopen(path, "rb") : NULL;
    if (f) { /* header: rows, cols, nnz; then rowptr, colind, values */
        int64_t h[3];
        if (fread(h, sizeof h, 1, f) != 1) exit(2);
        size_t es = hisp_type_size(t);
        int64_t *rp = malloc((size_t)(h[0] + 1) * 8);
        int32_t *ci = malloc((size_t)h[2] * 4);
        void *v = malloc((size_t)h[2] * es);
        if (!rp || !ci || !v) exit(2);
        if (fread(rp, 8, (size_t)h[0] + 1, f) != (size_t)h[0] + 1 ||
            fread(ci, 4, (size_t)h[2], f) != (size_t)h[2] ||
            fread(v, es, (size_t)h[2], f) != (size_t)h[2]) {
            fprintf(stderr, "%s: short read\n", path);
            exit(2);
        }
        fclose(f);
        hk(ctx, hisp_matrix_create_csr(ctx, t, h[0], h[1], rp, ci, v, &A), "create");
        free(rp);
        free(ci);
        free(v);
        fprintf(stderr, "bench: read %s\n", path);
    } else {
        hk(ctx, hisp_matrix_generate(ctx, &p, t, &A), "generate");
        if (path[0] && (f = fopen(path, "wb"))) {
            hisp_matrix_info mi;
            const int64_t *rp;
            const int32_t *ci;
            const void *v;
            hk(ctx, hisp_matrix_get_info(A, &mi), "info");
            hk(ctx, hisp_matrix_host_arrays(A, &rp, NULL, &ci, &v), "arrays");
            int64_t h[3] = {mi.nrows, mi.ncols, mi.nnz};
            size_t es = hisp_type_size(t);
            int ok = fwrite(h, sizeof h, 1, f) == 1 &&
                     fwrite(rp, 8, (size_t)mi.nrows + 1, f) == (size_t)mi.nrows + 1 &&
                     fwrite(ci, 4, (size_t)mi.nnz, f) == (size_t)mi.nnz &&
                     fwrite(v, es, (size_t)mi.nnz, f) == (size_t)mi.nnz;
            if (fclose(f) != 0 || !ok) {
                fprintf(stderr, "bench: could not write %s (disk full?); removed\n", path);
                remove(path);
            } else {
                fprintf(stderr, "bench: cached %s\n", path);
            }
        }
    }
    *gen_ms = bench_now_ms() - t0;
    return A;
}

/* ---- the CSC copy for pcsc (OpenMP: a plan would convert single-threaded) -- */

static hisp_matrix make_csc(hisp_context ctx, hisp_matrix A, hisp_type t, double *ms)
{
    double t0 = bench_now_ms();
    hisp_matrix_info mi;
    const int64_t *rp;
    const int32_t *ci;
    const void *v;
    hk(ctx, hisp_matrix_get_info(A, &mi), "info");
    hk(ctx, hisp_matrix_host_arrays(A, &rp, NULL, &ci, &v), "arrays");
    int64_t m = mi.nrows, n = mi.ncols, nnz = mi.nnz;
    size_t es = hisp_type_size(t);
    int64_t *cp = calloc((size_t)n + 1, sizeof *cp), *pos = malloc(((size_t)n + 1) * sizeof *pos);
    int32_t *ri = malloc((size_t)(nnz ? nnz : 1) * sizeof *ri);
    char *cv = malloc((size_t)(nnz ? nnz : 1) * es);
    if (!cp || !pos || !ri || !cv) {
        fprintf(stderr, "bench: out of memory for the CSC copy\n");
        exit(2);
    }
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < nnz; k++) {
#pragma omp atomic
        cp[ci[k] + 1]++;
    }
    for (int64_t j = 0; j < n; j++)
        cp[j + 1] += cp[j];
    memcpy(pos, cp, ((size_t)n + 1) * sizeof *pos);
    /* scatter (rows within a column come in the threads' order: the sums
     * round a little differently from run to run, far below the check's
     * tolerance; sorting them would cost more than the rest on heavy rmat
     * columns) */
#pragma omp parallel for schedule(dynamic, 4096)
    for (int64_t i = 0; i < m; i++)
        for (int64_t k = rp[i]; k < rp[i + 1]; k++) {
            int64_t q;
#pragma omp atomic capture
            q = pos[ci[k]]++;
            ri[q] = (int32_t)i;
            memcpy(cv + (size_t)q * es, (const char *)v + (size_t)k * es, es);
        }
    hisp_matrix C = NULL;
    hk(ctx, hisp_matrix_create_csc(ctx, t, m, n, cp, ri, cv, &C), "create csc");
    free(cp);
    free(pos);
    free(ri);
    free(cv);
    *ms = bench_now_ms() - t0;
    return C;
}

/* ---- runs ------------------------------------------------------------------ */

enum { V_HOST, V_RESIDENT, V_CUSPARSE, V_CUSPARSE_PPTR, V_DIST, V_DIST_FIT, NVAR };
static const char *const var_names[NVAR] = {"host",          "resident", "cusparse",
                                            "cusparse-pptr", "dist",     "dist-fit"};

typedef struct {
    char kind[16];
    int gpus, variant;
    double convert, partition, distribution; /* one-time, ms */
    double call, x, compute, gather, merge;  /* per SpMV medians, ms */
    double nnz_imbalance, time_imbalance, rel_error;
    double row_cost; /* of the plan's split (dist-fit: the fitted one) */
    int device_merge, device_ptr;
} result;

static int parse_list(const char *s, char items[][16], int max)
{
    int n = 0;
    while (s && *s && n < max) {
        const char *c = strchr(s, ',');
        size_t len = c ? (size_t)(c - s) : strlen(s);
        snprintf(items[n++], 16, "%.*s", (int)(len < 15 ? len : 15), s);
        s = c ? c + 1 : NULL;
    }
    return n;
}

typedef struct {
    hisp_context ctx, vctx;
    hisp_type t;
    int64_t m, n;
    int repeat, warmup;
    const void *x, *a, *b, *yref;
    void *y;
    hisp_vector xv, yv;
    double *tt, *dev;
    hisp_mplan_breakdown *bd;
} runner;

/* A failure of one configuration is reported and skipped (the others still
 * run: device time is scarce). */
static bool soft(hisp_context ctx, hisp_status s, const char *what)
{
    if (s == HISP_SUCCESS) return true;
    hisp_error_info e = {0};
    if (hisp_context_last_error(ctx, &e)) {
    }
    fprintf(stderr, "bench: FAILED %s: %s: %s\n", what, hisp_status_string(s),
            e.message ? e.message : "");
    return false;
}

enum { CALL_HOST, CALL_RESIDENT, CALL_DIST };

/* One SpMV of a plan: host x, y (hisp_mspmv), resident on GPU 0
 * (hisp_mspmv_vec) or distributed vectors (hisp_mspmv_dist). */
static hisp_status call(runner *R, hisp_mplan plan, int how, hisp_mvector xd, hisp_mvector yd)
{
    if (how == CALL_DIST) return hisp_mspmv_dist(plan, R->a, xd, R->b, yd);
    if (how == CALL_RESIDENT) return hisp_mspmv_vec(plan, HISP_OP_N, R->a, R->xv, R->b, R->yv);
    return hisp_mspmv(plan, HISP_OP_N, R->a, R->x, R->b, R->y);
}

/* Warm-up and timed calls: the medians of the plan's breakdown. */
static bool time_calls(runner *R, hisp_mplan plan, int how, hisp_mvector xd, hisp_mvector yd,
                       int nd, result *r)
{
    int rep = R->repeat;
    for (int i = 0; i < R->warmup + rep; i++) {
        if (!soft(R->ctx, call(R, plan, how, xd, yd), "mspmv")) return false;
        if (i < R->warmup) continue;
        int k = i - R->warmup;
        if (!soft(R->ctx, hisp_mplan_get_breakdown(plan, R->bd), "breakdown")) return false;
        R->tt[0 * rep + k] = R->bd->total_ms;
        R->tt[1 * rep + k] = R->bd->x_ms;
        R->tt[2 * rep + k] = R->bd->compute_ms;
        R->tt[3 * rep + k] = R->bd->gather_ms;
        R->tt[4 * rep + k] = R->bd->merge_ms;
        for (int d = 0; d < nd; d++)
            R->dev[d * rep + k] = R->bd->dev[d].compute_ms;
    }
    r->call = bench_median(R->tt, rep);
    r->x = bench_median(R->tt + rep, rep);
    r->compute = bench_median(R->tt + 2 * rep, rep);
    r->gather = bench_median(R->tt + 3 * rep, rep);
    r->merge = bench_median(R->tt + 4 * rep, rep);
    r->device_merge = R->bd->device_merge;
    double nmax = 0, nsum = 0, tmax = 0, tsum = 0;
    for (int d = 0; d < nd; d++) {
        double nz = (double)R->bd->dev[d].nnz, td = bench_median(R->dev + d * rep, rep);
        nsum += nz;
        tsum += td;
        if (nz > nmax) nmax = nz;
        if (td > tmax) tmax = td;
    }
    r->nnz_imbalance = nsum > 0 ? nmax / (nsum / nd) : 1;
    r->time_imbalance = tsum > 0 ? tmax / (tsum / nd) : 1;
    return true;
}

/* Timed calls of one plan: host x, y (hisp_mspmv) or resident (hisp_mspmv_vec). */
static bool measure(runner *R, hisp_mplan plan, bool resident, int nd, result *r)
{
    hisp_context ctx = R->ctx;
    size_t es = hisp_type_size(R->t);
    memset(R->y, 0, (size_t)R->m * es);
    if (resident) {
        if (!soft(R->vctx, hisp_vector_write(R->yv, R->y), "y") ||
            !soft(ctx, call(R, plan, CALL_RESIDENT, NULL, NULL), "mspmv_vec") ||
            !soft(R->vctx, hisp_vector_read(R->yv, R->y), "read y"))
            return false;
    } else if (!soft(ctx, call(R, plan, CALL_HOST, NULL, NULL), "mspmv")) {
        return false;
    }
    r->rel_error = bench_rel_error(R->t, R->y, R->yref, R->m);
    return time_calls(R, plan, resident ? CALL_RESIDENT : CALL_HOST, NULL, NULL, nd, r);
}

/* Timed calls of hisp_mspmv_dist: x replicated on the devices, y split by
 * rows and left there (the solver case without a home device); the
 * breakdown's kernel is each device's CSR kernel, its merge the boundary
 * rows' adds. */
static bool measure_dist(runner *R, hisp_mplan plan, int nd, result *r)
{
    hisp_context ctx = R->ctx;
    size_t es = hisp_type_size(R->t);
    hisp_mvector xv = NULL, yv = NULL;
    bool ok = soft(ctx, hisp_mvector_create(plan, HISP_MVEC_REPLICATED, &xv), "dist x") &&
              soft(ctx, hisp_mvector_create(plan, HISP_MVEC_ROWS, &yv), "dist y");
    memset(R->y, 0, (size_t)R->m * es);
    ok = ok && soft(ctx, hisp_mvector_write(xv, R->x), "dist write x") &&
         soft(ctx, hisp_mvector_write(yv, R->y), "dist write y") &&
         soft(ctx, call(R, plan, CALL_DIST, xv, yv), "mspmv_dist") &&
         soft(ctx, hisp_mvector_read(yv, R->y), "dist read y");
    if (ok) r->rel_error = bench_rel_error(R->t, R->y, R->yref, R->m);
    ok = ok && time_calls(R, plan, CALL_DIST, xv, yv, nd, r);
    hisp_mvector_destroy(&xv);
    hisp_mvector_destroy(&yv);
    return ok;
}

/* dist-fit: the row cost that fits plan's dist kernel times per device
 * (those of the dist row just measured, else measured here), then dist on a plan split by it with
 * aligned cuts (replacing *plan). On one device there is nothing to balance or align: the plan is
 * timed as it is. */
static bool dist_fit(runner *R, hisp_mplan *plan, hisp_matrix S, int nd,
                     const hisp_device_ref *refs, hisp_partition_kind kind, const char *kname,
                     bool timed, result *r, int *nres)
{
    int rep = R->repeat;
    double w = 0, med[64];
    memset(r, 0, sizeof *r);
    if (nd > 1) { /* timed: the dist row just measured left its per-device times in R->dev */
        if (!timed && !measure_dist(R, *plan, nd, r)) return false;
        for (int d = 0; d < nd; d++)
            med[d] = bench_median(R->dev + d * rep, rep);
        if (!soft(R->ctx, hisp_mplan_fit_row_cost(*plan, med, &w), "fit row cost")) return false;
        hisp_mplan_destroy(plan);
        if (!soft(R->ctx, hisp_mplan_create_weighted(S, nd, refs, kind, HISP_MPLAN_ALIGN, w, plan),
                  "weighted plan"))
            return false;
    }
    hk(R->ctx, hisp_mplan_get_breakdown(*plan, R->bd), "breakdown");
    memset(r, 0, sizeof *r);
    r->convert = R->bd->convert_ms;
    r->partition = R->bd->partition_ms;
    r->distribution = R->bd->distribution_ms;
    snprintf(r->kind, sizeof r->kind, "%.15s", kname);
    r->gpus = nd;
    r->variant = V_DIST_FIT;
    r->row_cost = w;
    if (!measure_dist(R, *plan, nd, r)) return false;
    fprintf(stderr,
            "bench: %s %d dev dist-fit: row cost %.3f, one-time %.1f+%.1f+%.1f ms, call %.3f ms "
            "(kernel %.4f, merge %.3f, time max/mean %.3f), err %.1e\n",
            r->kind, nd, w, r->convert, r->partition, r->distribution, r->call, r->compute,
            r->merge, r->time_imbalance, r->rel_error);
    (*nres)++;
    return true;
}

static const char prog[] = "bench_msrep_cuda";
static const char help[] =
    "usage: bench_msrep_cuda --matrix rmat|poisson3d --nnz N [--gpus 1,2,4]\n"
    "           [--kinds rowblock,pcsr,pcsc,pcoo|none] [--precision f64|f32]\n"
    "           [--variants host,resident,cusparse,cusparse-pptr,dist,dist-fit\n"
    "            | --kernel hisp|cusparse] [--backend cuda|opencl|reference]\n"
    "           [--repeat 10] [--warmup 2] [--cache DIR] [--csv FILE] [--md FILE]\n"
    "MSREP SpMV on 1, 2, 4 GPUs against one (the head of bench/bench_msrep_cuda.c\n"
    "describes the kinds and variants). Defaults: --matrix rmat, --nnz 5e8,\n"
    "--kinds rowblock,pcsr,pcsc,pcoo (none: the 1-GPU yardstick only), --variants\n"
    "host,resident,cusparse,cusparse-pptr (--kernel hisp: host,resident; cusparse:\n"
    "cusparse,cusparse-pptr), --precision f64, --backend cuda. --cache DIR keeps the\n"
    "generated CSR as DIR/<matrix>-<nnz>-<type>.csr. --help: this text.\n";

enum {
    O_MATRIX,
    O_NNZ,
    O_GPUS,
    O_KINDS,
    O_VARIANTS,
    O_KERNEL,
    O_BACKEND,
    O_REPEAT,
    O_WARMUP,
    O_CACHE,
    O_CSV,
    O_MD,
    O_PRECISION
};
static const opts_def opts[] = {{"--matrix", true},    {"--nnz", true},      {"--gpus", true},
                                {"--kinds", true},     {"--variants", true}, {"--kernel", true},
                                {"--backend", true},   {"--repeat", true},   {"--warmup", true},
                                {"--cache", true},     {"--csv", true},      {"--md", true},
                                {"--precision", true}, OPTS_HELP_DEFS,       {0, 0}};

int main(int argc, char **argv)
{
    static const char *const matrices[] = {"rmat", "poisson3d", NULL};
    static const char *const kernels[] = {"hisp", "cusparse", NULL};
    static const char *const kernel_vars[] = {"host,resident", "cusparse,cusparse-pptr"};
    static const char *const precisions[] = {"f64", "f32", NULL};
    int mat = 0, kernel = 0, prec = 0, repeat = 10, warmup = 2;
    double nnz = 5e8;
    hisp_backend_kind backend = HISP_BACKEND_CUDA;
    const char *val[sizeof opts / sizeof *opts] = {0};
    int rc = opts_parse(prog, argc, argv, opts, help, val, NULL);
    if (!rc && val[O_VARIANTS] && val[O_KERNEL])
        rc = opts_usage_error(prog, "give --variants or --kernel, not both");
    if (!rc) rc = opts_choice(prog, "--matrix", val[O_MATRIX], matrices, &mat);
    if (!rc) rc = opts_double(prog, "--nnz", val[O_NNZ], 1, 1e13, &nnz);
    if (!rc) rc = opts_choice(prog, "--kernel", val[O_KERNEL], kernels, &kernel);
    if (!rc) rc = bench_backend_arg(prog, val[O_BACKEND], &backend);
    if (!rc) rc = opts_int(prog, "--repeat", val[O_REPEAT], 1, 1000000, &repeat);
    if (!rc) rc = opts_int(prog, "--warmup", val[O_WARMUP], 0, 1000000, &warmup);
    if (!rc) rc = opts_choice(prog, "--precision", val[O_PRECISION], precisions, &prec);
    if (rc) return rc == OPTS_HELP_SHOWN ? 0 : 1;
    const char *matrix = matrices[mat];
    const char *gpus_s = val[O_GPUS] ? val[O_GPUS] : "1,2,4";
    const char *kinds_s = val[O_KINDS] ? val[O_KINDS] : "rowblock,pcsr,pcsc,pcoo";
    const char *vars_s = val[O_VARIANTS] ? val[O_VARIANTS] : kernel_vars[kernel];
    const char *cache = val[O_CACHE], *csv = val[O_CSV], *md = val[O_MD];
    hisp_type t = prec ? HISP_F32 : HISP_F64;
    hisp_context ctx = NULL;
    if (hisp_context_create(&ctx)) return 3;
    int ndev = 0;
    if (hisp_backend_device_count(ctx, backend, &ndev) || ndev < 1) {
        fprintf(stderr, "bench_msrep_cuda: no %s device\n", hisp_backend_name(backend));
        return 3;
    }
    char gl[8][16], kl[8][16], vl[8][16];
    int ng = parse_list(gpus_s, gl, 8), nk = parse_list(kinds_s, kl, 8);
    int nv = parse_list(vars_s, vl, 8);
    if (strcmp(kinds_s, "none") == 0) nk = 0; /* generate / cache and the 1-GPU yardstick only */
    bool want[NVAR] = {0};
    for (int i = 0; i < nv; i++) {
        int k = 0;
        while (k < NVAR && strcmp(vl[i], var_names[k]) != 0)
            k++;
        if (k == NVAR) {
            fprintf(stderr, "unknown variant %s\n", vl[i]);
            return 1;
        }
        want[k] = true;
    }
    if (backend != HISP_BACKEND_CUDA && (want[V_CUSPARSE] || want[V_CUSPARSE_PPTR])) {
        fprintf(stderr, "bench: cusparse variants need --backend cuda; skipped\n");
        want[V_CUSPARSE] = want[V_CUSPARSE_PPTR] = false;
    }
    double gen_ms = 0, csc_ms = 0;
    hisp_matrix A = make_matrix(ctx, matrix, nnz, t, cache, &gen_ms);
    hisp_matrix_info mi;
    hk(ctx, hisp_matrix_get_info(A, &mi), "info");
    size_t es = hisp_type_size(t);
    fprintf(stderr,
            "bench: %s %lld x %lld, %lld nnz %s, ready after %.0f ms, %d %s device(s), NUMA "
            "nodes %d\n",
            matrix, (long long)mi.nrows, (long long)mi.ncols, (long long)mi.nnz, hisp_type_name(t),
            gen_ms, ndev, hisp_backend_name(backend), hisp_numa_nodes());
    hisp_matrix Acsc = NULL;
    for (int k = 0; k < nk; k++)
        if (strcmp(kl[k], "pcsc") == 0 || strcmp(kl[k], "colblock") == 0) {
            Acsc = make_csc(ctx, A, t, &csc_ms);
            fprintf(stderr, "bench: CSC copy for the column kinds in %.0f ms\n", csc_ms);
            break;
        }

    void *x = malloc((size_t)mi.ncols * es), *y = malloc((size_t)mi.nrows * es);
    void *yref = malloc((size_t)mi.nrows * es);
    if (!x || !y || !yref) return 2;
    for (int64_t j = 0; j < mi.ncols; j++) {
        double v = 1.0 / (double)(1 + j % 1000);
        if (t == HISP_F32)
            ((float *)x)[j] = (float)v;
        else
            ((double *)x)[j] = v;
    }
    double one = 1, zero = 0;
    float onef = 1, zerof = 0;
    const void *a = t == HISP_F32 ? (const void *)&onef : (const void *)&one;
    const void *b = t == HISP_F32 ? (const void *)&zerof : (const void *)&zero;

    /* single-GPU yardstick: hisp_spmv with x and y resident on device 0 */
    double single_ms = NAN;
    {
        hisp_context c1 = NULL;
        hisp_matrix B = NULL;
        hisp_vector xv = NULL, yv = NULL;
        const int64_t *rp;
        const int32_t *ci;
        const void *vv;
        double t0 = bench_now_ms();
        hk(ctx, hisp_matrix_host_arrays(A, &rp, NULL, &ci, &vv), "arrays");
        hk(ctx, hisp_context_create(&c1), "context");
        hk(c1, hisp_context_set_backend(c1, backend, 0), "backend");
        hk(c1, hisp_matrix_create_csr(c1, t, mi.nrows, mi.ncols, rp, ci, vv, &B), "copy");
        hk(c1, hisp_vector_create(c1, t, mi.ncols, &xv), "x");
        hk(c1, hisp_vector_create(c1, t, mi.nrows, &yv), "y");
        hk(c1, hisp_vector_write(xv, x), "x");
        double *ms = malloc((size_t)repeat * sizeof *ms);
        hk(c1, hisp_spmv_timed(c1, HISP_OP_N, a, B, xv, b, yv, warmup, repeat, ms), "spmv");
        single_ms = bench_median(ms, repeat);
        hk(c1, hisp_vector_read(yv, yref), "read");
        free(ms);
        hisp_vector_destroy(&xv);
        hisp_vector_destroy(&yv);
        hisp_matrix_destroy(&B);
        hisp_context_destroy(&c1);
        fprintf(stderr, "bench: single-device hisp_spmv (resident) %.4f ms (setup %.0f ms)\n",
                single_ms, bench_now_ms() - t0);
    }

    runner R = {.ctx = ctx,
                .t = t,
                .m = mi.nrows,
                .n = mi.ncols,
                .repeat = repeat,
                .warmup = warmup,
                .x = x,
                .a = a,
                .b = b,
                .yref = yref,
                .y = y};
    R.bd = calloc(1, sizeof *R.bd);
    R.tt = malloc((size_t)repeat * 5 * sizeof *R.tt);
    R.dev = malloc((size_t)repeat * 64 * sizeof *R.dev);
    if (!R.bd || !R.tt || !R.dev) return 2;
    if (want[V_RESIDENT] || want[V_CUSPARSE] || want[V_CUSPARSE_PPTR]) {
        hk(ctx, hisp_context_create(&R.vctx), "context");
        hk(R.vctx, hisp_context_set_backend(R.vctx, backend, 0), "backend");
        hk(R.vctx, hisp_vector_create(R.vctx, t, mi.ncols, &R.xv), "x");
        hk(R.vctx, hisp_vector_create(R.vctx, t, mi.nrows, &R.yv), "y");
        hk(R.vctx, hisp_vector_write(R.xv, x), "x");
    }

    result *res = calloc(8 * 8 * NVAR, sizeof *res);
    int nres = 0, failures = 0;
    if (!res) return 2;
    for (int k = 0; k < nk; k++) {
        hisp_partition_kind kind;
        if (hisp_partition_from_name(kl[k], &kind)) {
            fprintf(stderr, "unknown kind %s\n", kl[k]);
            return 1;
        }
        hisp_matrix S = kind == HISP_PART_PCSC || kind == HISP_PART_COLBLOCK ? Acsc : A;
        for (int g = 0; g < ng; g++) {
            int nd = atoi(gl[g]);
            if (nd < 1 || nd > 64 || (backend == HISP_BACKEND_CUDA && nd > ndev)) {
                fprintf(stderr, "bench: skipping %d GPUs (%d present)\n", nd, ndev);
                continue;
            }
            hisp_device_ref refs[64];
            for (int d = 0; d < nd; d++)
                refs[d] = (hisp_device_ref){backend, d % ndev};
            /* plans: flags 0 (host, resident), cuSPARSE, cuSPARSE + p*-opt */
            for (int p = 0; p < 3; p++) {
                bool host = p == 0 && want[V_HOST], resid = p == 0 && want[V_RESIDENT];
                if (p == 0 && !host && !resid && !want[V_DIST] && !want[V_DIST_FIT]) continue;
                if (p == 1 && !want[V_CUSPARSE]) continue;
                if (p == 2 && !want[V_CUSPARSE_PPTR]) continue;
                unsigned flags = p == 1   ? HISP_MPLAN_CUSPARSE
                                 : p == 2 ? HISP_MPLAN_CUSPARSE | HISP_MPLAN_DEVICE_PTR
                                          : 0u;
                hisp_mplan plan = NULL;
                char what[96];
                snprintf(what, sizeof what, "plan %.15s on %d device(s), flags %u", kl[k], nd,
                         flags);
                if (!soft(ctx, hisp_mplan_create(S, nd, refs, kind, flags, &plan), what)) {
                    failures++;
                    continue;
                }
                hk(ctx, hisp_mplan_get_breakdown(plan, R.bd), "breakdown");
                result one_time = {0};
                bool dist_timed = false; /* R.dev holds this plan's dist kernel times */
                one_time.convert = R.bd->convert_ms;
                one_time.partition = R.bd->partition_ms;
                one_time.distribution = R.bd->distribution_ms;
                one_time.device_ptr = R.bd->dev[0].device_ptr;
                for (int q = 0; q < 3; q++) {
                    int var = p == 0 ? (q == 0   ? V_HOST
                                        : q == 1 ? V_RESIDENT
                                                 : V_DIST)
                                     : (p == 1 ? V_CUSPARSE : V_CUSPARSE_PPTR);
                    if (p == 0 && q == 0 && !host) continue;
                    if (p == 0 && q == 1 && !resid) continue;
                    if (p == 0 && q == 2 && (!want[V_DIST] || S != A)) continue;
                    if (p > 0 && q >= 1) continue;
                    result *r = &res[nres++];
                    *r = one_time;
                    snprintf(r->kind, sizeof r->kind, "%.15s", kl[k]);
                    r->gpus = nd;
                    r->variant = var;
                    if (var == V_DIST ? !measure_dist(&R, plan, nd, r)
                                      : !measure(&R, plan, var != V_HOST, nd, r)) {
                        failures++;
                        nres--;
                        continue;
                    }
                    dist_timed = var == V_DIST;
                    fprintf(stderr,
                            "bench: %s %d dev %s: one-time %.1f+%.1f+%.1f ms, call %.3f ms "
                            "(x %.3f, kernel %.4f, gather %.3f, merge %.3f), err %.1e\n",
                            r->kind, nd, var_names[var], r->convert, r->partition, r->distribution,
                            r->call, r->x, r->compute, r->gather, r->merge, r->rel_error);
                }
                if (p == 0 && want[V_DIST_FIT] && S == A &&
                    (kind == HISP_PART_PCSR || kind == HISP_PART_PCOO))
                    failures += !dist_fit(&R, &plan, S, nd, refs, kind, kl[k], dist_timed,
                                          &res[nres], &nres);
                hisp_mplan_destroy(&plan);
            }
        }
    }

    FILE *fm = md ? fopen(md, "w") : stdout;
    FILE *fc = csv ? fopen(csv, "w") : NULL;
    if (!fm) fm = stdout;
    fprintf(fm,
            "\n%s, %lld x %lld, %lld nnz, %s, %s; single-device hisp_spmv %.4f ms (resident); "
            "generation/read %.0f ms, CSC copy %.0f ms\n\n",
            matrix, (long long)mi.nrows, (long long)mi.ncols, (long long)mi.nnz, hisp_type_name(t),
            hisp_backend_name(backend), single_ms, gen_ms, csc_ms);
    fprintf(fm,
            "| kind | variant | GPUs | convert ms | partition ms | distribution ms | call ms | "
            "x ms | kernel ms | gather ms | merge ms | merge on | nnz max/mean | time "
            "max/mean | speedup call | speedup kernel | speedup w/o x | vs 1-GPU hisp_spmv | rel "
            "err |\n");
    fprintf(fm, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    if (fc)
        fprintf(fc, "matrix,nnz,precision,kind,variant,gpus,convert_ms,partition_ms,"
                    "distribution_ms,call_ms,x_ms,kernel_ms,gather_ms,merge_ms,device_merge,"
                    "device_ptr,nnz_imbalance,time_imbalance,speedup_call,speedup_kernel,"
                    "vs_single,single_ms,rel_error,speedup_no_x,row_cost\n");
    for (int i = 0; i < nres; i++) {
        const result *r = &res[i], *base = NULL;
        for (int j = 0; j < nres; j++)
            if (res[j].gpus == 1 && res[j].variant == r->variant &&
                strcmp(res[j].kind, r->kind) == 0)
                base = &res[j];
        double sc = base ? base->call / r->call : NAN;
        double sk = base ? base->compute / r->compute : NAN;
        double ss = single_ms / r->call;
        /* per SpMV without sending x (x already on every device: a solver
         * that keeps x replicated) */
        double snx = base ? (base->call - base->x) / (r->call - r->x) : NAN;
        fprintf(fm,
                "| %s | %s | %d | %.1f | %.1f | %.1f | %.3f | %.3f | %.4f | %.3f | %.3f | %s | "
                "%.3f | %.3f | %.2f | %.2f | %.2f | %.2f | %.1e |\n",
                r->kind, var_names[r->variant], r->gpus, r->convert, r->partition, r->distribution,
                r->call, r->x, r->compute, r->gather, r->merge, r->device_merge ? "device" : "host",
                r->nnz_imbalance, r->time_imbalance, sc, sk, snx, ss, r->rel_error);
        if (fc)
            fprintf(fc,
                    "%s,%lld,%s,%s,%s,%d,%.3f,%.3f,%.3f,%.4f,%.4f,%.5f,%.4f,%.4f,%d,%d,%.4f,%.4f,"
                    "%.3f,%.3f,%.3f,%.5f,%.3e,%.3f,%.4f\n",
                    matrix, (long long)mi.nnz, hisp_type_name(t), r->kind, var_names[r->variant],
                    r->gpus, r->convert, r->partition, r->distribution, r->call, r->x, r->compute,
                    r->gather, r->merge, r->device_merge, r->device_ptr, r->nnz_imbalance,
                    r->time_imbalance, sc, sk, ss, single_ms, r->rel_error, snx, r->row_cost);
    }
    if (fm != stdout) fclose(fm);
    if (fc) fclose(fc);
    int bad = failures > 0;
    if (failures) fprintf(stderr, "bench: %d configuration(s) FAILED (see above)\n", failures);
    for (int i = 0; i < nres; i++)
        bad |= !(res[i].rel_error < (t == HISP_F32 ? 1e-4 : 1e-10));
    free(x);
    free(y);
    free(yref);
    free(res);
    free(R.bd);
    free(R.tt);
    free(R.dev);
    hisp_vector_destroy(&R.xv);
    hisp_vector_destroy(&R.yv);
    hisp_context_destroy(&R.vctx);
    hisp_matrix_destroy(&Acsc);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
    return bad ? 5 : 0;
}
