/* GPU benchmark of compound-entry SpMV: hisp's tuned variants (CUDA through
 * NVRTC, and optionally the OpenCL devices) against cuSPARSE on the same
 * matrices in one run:
 *   complex     helmholtz n x n (c32, c64)   vs cusparseSpMV CSR (CUDA_C_32F/64F)
 *   3x3 blocks  fem3x3 n^3 (b3x3_f32/f64)    vs cusparse<S|D>bsrmv, blockDim 3
 *   quaternions qsurface 2n x n (q32, q64)   vs cusparse<S|D>bsrmv on the 4x4
 *                                              real left-multiplication blocks
 * Options: --help (the help text below).
 *
 * hisp: hisp_tune (plan cache on, so a second run tunes nothing; the tuning
 * time of the first run is reported; --search both runs the fast and the
 * full search without the plan cache and compares their picks), then the
 * pick timed with hisp_spmv_variant_timed; "CSR sched" is the best
 * CSR-AoS-AoS variant the search found (schedule-only tuning, the paper's
 * baseline), timed in the same final pass as the pick; --all-csv writes every
 * variant each search timed. cuSPARSE: CUDA
 * events around each call after warm-up. Medians. Each result is compared
 * with the reference backend (relative 2-norm error). Memory: bytes of each
 * hisp layout and of the cuSPARSE form (CSR, BSR). */
#include "cuda_bench.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    hisp_type t;
    hisp_type vt;                      /* vector scalar type */
    int64_t nrows, ncols, nnz, nx, ny; /* nx, ny: vector entries (of vt) */
    int comps;                         /* scalars per vector entry of vt */
    size_t ss;                         /* scalar bytes */
    const int64_t *rowptr;
    const int32_t *colind;
    const void *val;
    void *x;   /* host x */
    void *ref; /* reference y (scalars of ss) */
} prob;

static double sc(size_t ss, const void *a, int64_t i)
{
    return ss == 4 ? (double)((const float *)a)[i] : ((const double *)a)[i];
}

static double rel_err(const prob *P, const void *y)
{
    int64_t n = P->ny * P->comps;
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = sc(P->ss, y, i) - sc(P->ss, P->ref, i), r = sc(P->ss, P->ref, i);
        num += d * d;
        den += r * r;
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* ---- cuSPARSE ------------------------------------------------------------------- */

static double time_events(cudaStream_t st, void (*fn)(void *), void *arg, int warmup, int repeat)
{
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int i = 0; i < warmup; i++)
        fn(arg);
    double *ms = malloc((size_t)repeat * sizeof *ms);
    for (int i = 0; i < repeat; i++) {
        float f = 0;
        CK(cudaEventRecord(e0, st));
        fn(arg);
        CK(cudaEventRecord(e1, st));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(&f, e0, e1));
        ms[i] = f;
    }
    double m = bench_median(ms, repeat);
    free(ms);
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    return m;
}

typedef struct {
    cusparseHandle_t h;
    int kind; /* 0 CSR SpMV (complex), 1 bsrmv */
    int dbl;
    /* CSR */
    cusparseSpMatDescr_t A;
    cusparseDnVecDescr_t vx, vy;
    cudaDataType dt;
    void *buf;
    /* BSR */
    cusparseMatDescr_t d;
    int mb, nb, nnzb, bs;
    void *rp, *ci, *v, *x, *y;
} cusp_op;

static void cusp_call(void *p)
{
    cusp_op *c = p;
    if (c->kind == 0) {
        double one[2] = {1, 0}, zero[2] = {0, 0};
        float onef[2] = {1, 0}, zerof[2] = {0, 0};
        CKS(cusparseSpMV(c->h, CUSPARSE_OPERATION_NON_TRANSPOSE,
                         c->dbl ? (void *)one : (void *)onef, c->A, c->vx,
                         c->dbl ? (void *)zero : (void *)zerof, c->vy, c->dt,
                         CUSPARSE_SPMV_ALG_DEFAULT, c->buf));
    } else if (c->dbl) {
        double one = 1, zero = 0;
        CKS(cusparseDbsrmv(c->h, CUSPARSE_DIRECTION_ROW, CUSPARSE_OPERATION_NON_TRANSPOSE, c->mb,
                           c->nb, c->nnzb, &one, c->d, c->v, c->rp, c->ci, c->bs, c->x, &zero,
                           c->y));
    } else {
        float one = 1, zero = 0;
        CKS(cusparseSbsrmv(c->h, CUSPARSE_DIRECTION_ROW, CUSPARSE_OPERATION_NON_TRANSPOSE, c->mb,
                           c->nb, c->nnzb, &one, c->d, c->v, c->rp, c->ci, c->bs, c->x, &zero,
                           c->y));
    }
}

/* cuSPARSE on P: median ms, error, bytes of its matrix form. */
static void cusparse_bench(const prob *P, int warmup, int repeat, double *ms, double *err,
                           uint64_t *bytes)
{
    cudaStream_t st;
    CK(cudaStreamCreate(&st));
    cusp_op c;
    memset(&c, 0, sizeof c);
    CKS(cusparseCreate(&c.h));
    CKS(cusparseSetStream(c.h, st));
    c.dbl = P->ss == 8;
    int bs = P->t == HISP_B3X3_F32 || P->t == HISP_B3X3_F64 ? 3
             : P->t == HISP_Q32 || P->t == HISP_Q64         ? 4
                                                            : 0;
    int64_t m = P->nrows;
    int32_t *rp = malloc((size_t)(m + 1) * 4);
    for (int64_t i = 0; i <= m; i++)
        rp[i] = (int32_t)P->rowptr[i];
    size_t vbytes;
    void *vals = NULL;
    if (bs == 4) { /* the 4x4 left-multiplication block of every quaternion */
        static const int ix[4][4] = {{0, 1, 2, 3}, {1, 0, 3, 2}, {2, 3, 0, 1}, {3, 2, 1, 0}};
        static const int sg[4][4] = {{1, -1, -1, -1}, {1, 1, -1, 1}, {1, 1, 1, -1}, {1, -1, 1, 1}};
        vbytes = (size_t)P->nnz * 16 * P->ss;
        vals = malloc(vbytes);
        for (int64_t k = 0; k < P->nnz; k++)
            for (int r = 0; r < 4; r++)
                for (int q = 0; q < 4; q++) {
                    double a = sg[r][q] * sc(P->ss, P->val, k * 4 + ix[r][q]);
                    if (P->ss == 4)
                        ((float *)vals)[k * 16 + r * 4 + q] = (float)a;
                    else
                        ((double *)vals)[k * 16 + r * 4 + q] = a;
                }
    } else {
        vbytes = (size_t)P->nnz * hisp_type_size(P->t);
    }
    size_t xb = (size_t)(P->nx * P->comps) * P->ss, yb = (size_t)(P->ny * P->comps) * P->ss;
    CK(cudaMalloc(&c.rp, (size_t)(m + 1) * 4));
    CK(cudaMalloc(&c.ci, (size_t)P->nnz * 4 + 4));
    CK(cudaMalloc(&c.v, vbytes + 16));
    CK(cudaMalloc(&c.x, xb + 16));
    CK(cudaMalloc(&c.y, yb + 16));
    CK(cudaMemcpy(c.rp, rp, (size_t)(m + 1) * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(c.ci, P->colind, (size_t)P->nnz * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(c.v, vals ? vals : P->val, vbytes, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(c.x, P->x, xb, cudaMemcpyHostToDevice));
    free(vals);
    free(rp);
    *bytes = vbytes + (uint64_t)P->nnz * 4 + (uint64_t)(m + 1) * 4;
    if (bs == 0) {
        c.kind = 0;
        c.dt = c.dbl ? CUDA_C_64F : CUDA_C_32F;
        CKS(cusparseCreateCsr(&c.A, m, P->ncols, P->nnz, c.rp, c.ci, c.v, CUSPARSE_INDEX_32I,
                              CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, c.dt));
        CKS(cusparseCreateDnVec(&c.vx, P->ncols, c.x, c.dt));
        CKS(cusparseCreateDnVec(&c.vy, m, c.y, c.dt));
        double one[2] = {1, 0}, zero[2] = {0, 0};
        float onef[2] = {1, 0}, zerof[2] = {0, 0};
        size_t n = 0;
        CKS(cusparseSpMV_bufferSize(
            c.h, CUSPARSE_OPERATION_NON_TRANSPOSE, c.dbl ? (void *)one : (void *)onef, c.A, c.vx,
            c.dbl ? (void *)zero : (void *)zerof, c.vy, c.dt, CUSPARSE_SPMV_ALG_DEFAULT, &n));
        if (n) CK(cudaMalloc(&c.buf, n));
    } else {
        c.kind = 1;
        c.mb = (int)m;
        c.nb = (int)P->ncols;
        c.nnzb = (int)P->nnz;
        c.bs = bs;
        CKS(cusparseCreateMatDescr(&c.d));
    }
    *ms = time_events(st, cusp_call, &c, warmup, repeat);
    void *h = malloc(yb + 16);
    CK(cudaMemcpy(h, c.y, yb, cudaMemcpyDeviceToHost));
    *err = rel_err(P, h);
    free(h);
    if (c.kind == 0) {
        CKS(cusparseDestroySpMat(c.A));
        CKS(cusparseDestroyDnVec(c.vx));
        CKS(cusparseDestroyDnVec(c.vy));
    } else {
        CKS(cusparseDestroyMatDescr(c.d));
    }
    void *bufs[] = {c.rp, c.ci, c.v, c.x, c.y, c.buf};
    for (int i = 0; i < 6; i++)
        if (bufs[i]) CK(cudaFree(bufs[i]));
    CKS(cusparseDestroy(c.h));
    CK(cudaStreamDestroy(st));
}

/* ---- hisp --------------------------------------------------------------------- */

typedef struct {
    char target[160];
    hisp_variant best;
    double ms, csr_sched_ms, tune_ms, err;
    int tried, from_cache;
    /* --search both: the fast search's pick beside the full search's */
    hisp_variant fast_best;
    double fast_ms, fast_tune_ms;
    int fast_tried;
} hisp_res;

#define BOTH ((hisp_tune_search)-1) /* --search both */

static FILE *all_csv; /* --all-csv: every variant a search timed */

static void tune_one(hisp_context ctx, hisp_matrix A, hisp_tune_search search, int use_cache,
                     hisp_tune_result *res, int cap, hisp_variant *best, hisp_variant *csr,
                     double *tune_ms, int *tried, int *from_cache)
{
    int count = 0;
    hisp_tune_plan plan;
    double t0 = bench_now_ms();
    cb_hk(ctx, hisp_tune(ctx, A, search, use_cache, NULL, NULL, res, cap, &count, &plan), "tune");
    *tune_ms = bench_now_ms() - t0;
    *tried = plan.tried;
    *from_cache = plan.from_cache;
    *best = plan.best;
    hisp_matrix_info mi;
    cb_hk(ctx, hisp_matrix_get_info(A, &mi), "info");
    for (int i = 0; all_csv && i < count && i < cap; i++) {
        char l[64], sc[64];
        if (hisp_layout_name(&res[i].v.layout, l, sizeof l)) l[0] = 0;
        if (hisp_schedule_name(&res[i].v.sched, sc, sizeof sc)) sc[0] = 0;
        fprintf(all_csv, "%s,%s,%s,%s,%.6f\n", hisp_type_name(mi.type),
                search == HISP_TUNE_FULL ? "full" : "fast", l, sc, res[i].ms);
    }
    for (int i = 0; csr && i < count && i < cap; i++)
        if (res[i].v.layout.outer == HISP_OUTER_CSR && res[i].v.layout.inner == HISP_AOS &&
            res[i].v.layout.vec == HISP_AOS && isfinite(res[i].ms)) {
            *csr = res[i].v; /* sorted: the first is the best */
            break;
        }
}

/* hisp: tune (fast, full, or both: fast first with fresh kernel caches, so
 * its time includes its builds), then time the picks and the best
 * CSR-AoS-AoS variant in one final pass, interleaved in 3 blocks (a drift of
 * the GPU's clocks then hits all alike), medians. */
static void hisp_bench(hisp_context ctx, hisp_matrix A, const prob *P, hisp_tune_search search,
                       int warmup, int repeat, hisp_res *r)
{
    hisp_device_info d;
    cb_hk(ctx, hisp_context_get_device(ctx, &d), "device");
    snprintf(r->target, sizeof r->target, "%s:%d %.120s", hisp_backend_name(d.backend), d.index,
             d.name);
    int cap = 1 << 14;
    hisp_tune_result *res = malloc((size_t)cap * sizeof *res);
    hisp_variant csr = {{HISP_OUTER_CSR, HISP_AOS, HISP_AOS}, {0, 0, 0}};
    if (search == BOTH)
        tune_one(ctx, A, HISP_TUNE_FAST, 0, res, cap, &r->fast_best, NULL, &r->fast_tune_ms,
                 &r->fast_tried, &r->from_cache);
    tune_one(ctx, A, search == BOTH ? HISP_TUNE_FULL : search, search != BOTH, res, cap, &r->best,
             &csr, &r->tune_ms, &r->tried, &r->from_cache);
    free(res);
    hisp_vector x = NULL, y = NULL;
    cb_hk(ctx, hisp_vector_create(ctx, P->vt, P->nx, &x), "vector");
    cb_hk(ctx, hisp_vector_create(ctx, P->vt, P->ny, &y), "vector");
    cb_hk(ctx, hisp_vector_write(x, P->x), "write x");
    double one = 1, zero = 0;
    float onef = 1, zerof = 0;
    const void *pa = P->ss == 4 ? (void *)&onef : (void *)&one;
    const void *pb = P->ss == 4 ? (void *)&zerof : (void *)&zero;
    enum { BLOCKS = 3 };
    const hisp_variant *vs[3] = {&r->best, &csr, &r->fast_best};
    int nv = search == BOTH ? 3 : 2;
    double *ms[3];
    for (int i = 0; i < nv; i++)
        ms[i] = malloc((size_t)(BLOCKS * repeat) * sizeof *ms[i]);
    for (int blk = 0; blk < BLOCKS; blk++)
        for (int i = 0; i < nv; i++) {
            cb_hk(ctx,
                  hisp_spmv_variant_timed(ctx, vs[i], pa, A, x, pb, y, warmup, repeat,
                                          ms[i] + blk * repeat),
                  "spmv");
            if (i == 0 && blk == BLOCKS - 1) { /* check the pick's result */
                void *h = malloc((size_t)(P->ny * P->comps) * P->ss + 16);
                cb_hk(ctx, hisp_vector_read(y, h), "read y");
                r->err = rel_err(P, h);
                free(h);
            }
        }
    r->ms = bench_median(ms[0], BLOCKS * repeat);
    r->csr_sched_ms = bench_median(ms[1], BLOCKS * repeat);
    r->fast_ms = search == BOTH ? bench_median(ms[2], BLOCKS * repeat) : NAN;
    for (int i = 0; i < nv; i++)
        free(ms[i]);
    hisp_vector_destroy(&x);
    hisp_vector_destroy(&y);
}

/* ---- main ------------------------------------------------------------------------- */

static const char prog[] = "bench_compound_cuda";
static const char help[] =
    "usage: bench_compound_cuda [--scale gpu|small] [--types c32,c64,...]\n"
    "           [--search fast|full|both] [--repeat N] [--warmup N] [--opencl]\n"
    "           [--md FILE] [--csv FILE] [--all-csv FILE]\n"
    "Compound-entry SpMV: hisp's tuned variants against cuSPARSE's complex CSR and\n"
    "3x3 / 4x4 BSR SpMV (the head of bench/bench_compound_cuda.c says how).\n"
    "\n"
    "  --scale S            gpu or small (default gpu)\n"
    "  --types T,...        entry types (default c32,c64,b3x3_f32,b3x3_f64,q32,q64)\n"
    "  --search S           the tuner's fast or full search, or both compared\n"
    "                       (default fast)\n"
    "  --repeat N           timed runs per block (default 20)\n"
    "  --warmup N           untimed runs first (default 5)\n"
    "  --opencl             the OpenCL devices too\n"
    "  --md FILE            the markdown tables (default stdout)\n"
    "  --csv FILE           the results as CSV\n"
    "  --all-csv FILE       every variant each search timed, as CSV\n"
    "  --help               this text\n";

enum { O_SCALE, O_TYPES, O_SEARCH, O_REPEAT, O_WARMUP, O_OPENCL, O_MD, O_CSV, O_ALL_CSV };
static const opts_def opts[] = {{"--scale", true},
                                {"--types", true},
                                {"--search", true},
                                {"--repeat", true},
                                {"--warmup", true},
                                {"--opencl", false},
                                {"--md", true},
                                {"--csv", true},
                                {"--all-csv", true},
                                OPTS_HELP_DEFS,
                                {0, 0}};

int main(int argc, char **argv)
{
    static const char *const scales[] = {"gpu", "small", NULL};
    static const char *const searches[] = {"fast", "full", "both", NULL};
    static const hisp_tune_search search_of[] = {HISP_TUNE_FAST, HISP_TUNE_FULL, BOTH};
    int small = 0, warmup = 5, repeat = 20, si = 0;
    const char *val[sizeof opts / sizeof *opts] = {0};
    int rc = opts_parse(prog, argc, argv, opts, help, val, NULL);
    if (!rc) rc = opts_choice(prog, "--scale", val[O_SCALE], scales, &small);
    if (!rc) rc = opts_choice(prog, "--search", val[O_SEARCH], searches, &si);
    if (!rc) rc = opts_int(prog, "--repeat", val[O_REPEAT], 1, 1000000, &repeat);
    if (!rc) rc = opts_int(prog, "--warmup", val[O_WARMUP], 0, 1000000, &warmup);
    if (rc) return rc == OPTS_HELP_SHOWN ? 0 : 1;
    hisp_tune_search search = search_of[si];
    const char *types = val[O_TYPES] ? val[O_TYPES] : "c32,c64,b3x3_f32,b3x3_f64,q32,q64";
    const char *md = val[O_MD], *csv = val[O_CSV];
    int use_cl = val[O_OPENCL] != NULL;
    if (val[O_ALL_CSV]) {
        if (!(all_csv = fopen(val[O_ALL_CSV], "w"))) {
            perror(val[O_ALL_CSV]);
            return 1;
        }
        fprintf(all_csv, "type,search,layout,schedule,ms\n");
    }
    hisp_context ctx = NULL, rctx = NULL;
    cb_hk(NULL, hisp_context_create(&ctx), "context");
    cb_hk(NULL, hisp_context_create(&rctx), "context");
    int ncuda = 0, ncl = 0;
    cb_hk(ctx, hisp_backend_device_count(ctx, HISP_BACKEND_CUDA, &ncuda), "cuda devices");
    if (!ncuda) {
        fprintf(stderr, "no CUDA device\n");
        return 3;
    }
    if (use_cl && hisp_backend_device_count(ctx, HISP_BACKEND_OPENCL, &ncl)) ncl = 0;
    FILE *fm = md ? fopen(md, "w") : stdout, *fc = csv ? fopen(csv, "w") : NULL;
    if (!fm) fm = stdout;
    hisp_device_info gi;
    cb_hk(ctx, hisp_backend_device_info(ctx, HISP_BACKEND_CUDA, 0, &gi), "device info");
    bool both = search == BOTH;
    fprintf(fm, "# compound SpMV on %s (%s), search %s, median of 3x%d after %d warm-up\n\n",
            gi.name, gi.platform,
            both                       ? "full and fast"
            : search == HISP_TUNE_FULL ? "full"
                                       : "fast",
            repeat, warmup);
    fprintf(fm,
            "| type | matrix | nnz | target | best variant | ms | CSR sched ms | layout "
            "speedup | cuSPARSE ms | vs cuSPARSE | tune s (variants) | err |%s\n",
            both ? " fast pick | fast ms | full/fast | fast tune s (variants) | fast/full time |"
                 : "");
    fprintf(fm, "|---|---|---|---|---|---|---|---|---|---|---|---|%s\n",
            both ? "---|---|---|---|---|" : "");
    if (fc)
        fprintf(fc, "type,matrix,nnz,target,layout,schedule,ms,csr_sched_ms,cusparse_ms,tune_ms,"
                    "tried,from_cache,err,cusparse_err,bytes_csr,bytes_ell,bytes_sell16,"
                    "bytes_sell32,bytes_cusparse,fast_layout,fast_schedule,fast_ms,fast_tune_ms,"
                    "fast_tried\n");
    char list[256];
    snprintf(list, sizeof list, "%s", types);
    char *save = NULL;
    for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        hisp_type t;
        if (hisp_type_from_name(tok, &t) || t == HISP_F32 || t == HISP_F64) {
            fprintf(stderr, "skipping type '%s'\n", tok);
            continue;
        }
        hisp_cgen_kind k = t == HISP_C32 || t == HISP_C64   ? HISP_CGEN_HELMHOLTZ
                           : t == HISP_Q32 || t == HISP_Q64 ? HISP_CGEN_QSURFACE
                                                            : HISP_CGEN_FEM3X3;
        /* gpu scale: the sizes (6.9M 3x3 blocks, 23.4M quaternions) */
        int64_t n = k == HISP_CGEN_HELMHOLTZ  ? (small ? 256 : 2048)
                    : k == HISP_CGEN_QSURFACE ? (small ? 100 : 1293)
                                              : (small ? 16 : 64);
        char mname[64];
        snprintf(mname, sizeof mname, "%s:%lld", hisp_cgen_name(k), (long long)n);
        fprintf(stderr, "== %s %s\n", tok, mname);
        hisp_matrix R = NULL;
        cb_hk(rctx, hisp_matrix_generate_compound(rctx, k, n, 1, t, &R), "generate");
        hisp_matrix_info mi;
        cb_hk(rctx, hisp_matrix_get_info(R, &mi), "info");
        prob P;
        memset(&P, 0, sizeof P);
        P.t = t;
        int per = 1;
        cb_hk(rctx, hisp_compound_vector_type(t, &P.vt, &per), "vector type");
        P.nrows = mi.nrows;
        P.ncols = mi.ncols;
        P.nnz = mi.nnz;
        P.nx = mi.ncols * per;
        P.ny = mi.nrows * per;
        P.comps = hisp_type_components(P.vt);
        P.ss = hisp_type_size(P.vt) / (size_t)P.comps;
        cb_hk(rctx, hisp_matrix_host_arrays(R, &P.rowptr, NULL, &P.colind, &P.val), "arrays");
        int64_t sx = P.nx * P.comps, sy = P.ny * P.comps;
        P.x = malloc((size_t)sx * P.ss);
        P.ref = malloc((size_t)sy * P.ss);
        for (int64_t i = 0; i < sx; i++) {
            double v = 1.0 / (double)(i % 97 + 1);
            if (P.ss == 4)
                ((float *)P.x)[i] = (float)v;
            else
                ((double *)P.x)[i] = v;
        }
        { /* the reference result */
            hisp_vector x = NULL, y = NULL;
            double one = 1, zero = 0;
            float onef = 1, zerof = 0;
            cb_hk(rctx, hisp_vector_create(rctx, P.vt, P.nx, &x), "vector");
            cb_hk(rctx, hisp_vector_create(rctx, P.vt, P.ny, &y), "vector");
            cb_hk(rctx, hisp_vector_write(x, P.x), "write");
            cb_hk(rctx,
                  hisp_spmv(rctx, HISP_OP_N, P.ss == 4 ? (void *)&onef : (void *)&one, R, x,
                            P.ss == 4 ? (void *)&zerof : (void *)&zero, y),
                  "reference");
            cb_hk(rctx, hisp_vector_read(y, P.ref), "read");
            hisp_vector_destroy(&x);
            hisp_vector_destroy(&y);
        }
        uint64_t lb[HISP_OUTER_COUNT] = {0}, cb = 0;
        for (int o = 0; o < HISP_OUTER_COUNT; o++)
            cb_hk(rctx, hisp_matrix_layout_bytes(R, (hisp_outer_layout)o, &lb[o]), "bytes");
        double cms = NAN, cerr = NAN;
        cusparse_bench(&P, warmup, repeat, &cms, &cerr, &cb);
        int ntargets = 1 + ncl;
        for (int ti = 0; ti < ntargets; ti++) {
            hisp_backend_kind bk = ti == 0 ? HISP_BACKEND_CUDA : HISP_BACKEND_OPENCL;
            int dev = ti == 0 ? 0 : ti - 1;
            cb_hk(ctx, hisp_context_set_backend(ctx, bk, dev), "backend");
            hisp_device_info di;
            cb_hk(ctx, hisp_context_get_device(ctx, &di), "device");
            if (P.ss == 8 && !di.fp64) continue;
            hisp_matrix A = NULL;
            cb_hk(ctx,
                  hisp_matrix_create_csr(ctx, t, mi.nrows, mi.ncols, P.rowptr, P.colind, P.val, &A),
                  "matrix");
            hisp_res r;
            memset(&r, 0, sizeof r);
            fprintf(stderr, "   %s %s ...\n", hisp_backend_name(bk), di.name);
            hisp_bench(ctx, A, &P, search, warmup, repeat, &r);
            char lay[64], sch[64];
            if (hisp_layout_name(&r.best.layout, lay, sizeof lay)) lay[0] = 0;
            if (hisp_schedule_name(&r.best.sched, sch, sizeof sch)) sch[0] = 0;
            fprintf(fm,
                    "| %s | %s | %lld | %s | %s %s | %.4f | %.4f | %.2f | %.4f | %.2fx | %.1f "
                    "(%d%s) | %.1e |",
                    tok, mname, (long long)P.nnz, r.target, lay, sch, r.ms, r.csr_sched_ms,
                    r.csr_sched_ms / r.ms, cms, cms / r.ms, r.tune_ms / 1e3, r.tried,
                    r.from_cache ? ", cached" : "", r.err);
            if (both) {
                char fl[64], fs[64];
                if (hisp_layout_name(&r.fast_best.layout, fl, sizeof fl)) fl[0] = 0;
                if (hisp_schedule_name(&r.fast_best.sched, fs, sizeof fs)) fs[0] = 0;
                fprintf(fm, " %s %s | %.4f | %.3f | %.1f (%d) | %.1f %% |", fl, fs, r.fast_ms,
                        r.ms / r.fast_ms, r.fast_tune_ms / 1e3, r.fast_tried,
                        100.0 * r.fast_tune_ms / r.tune_ms);
            }
            fprintf(fm, "\n");
            if (fc)
                fprintf(fc,
                        "%s,%s,%lld,\"%s\",%s,%s,%.6f,%.6f,%.6f,%.1f,%d,%d,%.3e,%.3e,%llu,%llu,"
                        "%llu,%llu,%llu,",
                        tok, mname, (long long)P.nnz, r.target, lay, sch, r.ms, r.csr_sched_ms, cms,
                        r.tune_ms, r.tried, r.from_cache, r.err, cerr, (unsigned long long)lb[0],
                        (unsigned long long)lb[1], (unsigned long long)lb[2],
                        (unsigned long long)lb[3], (unsigned long long)cb);
            if (fc) {
                char fl[64] = "", fs[64] = "";
                if (both && hisp_layout_name(&r.fast_best.layout, fl, sizeof fl)) fl[0] = 0;
                if (both && hisp_schedule_name(&r.fast_best.sched, fs, sizeof fs)) fs[0] = 0;
                fprintf(fc, "%s,%s,%.6f,%.1f,%d\n", fl, fs, r.fast_ms, r.fast_tune_ms,
                        r.fast_tried);
            }
            fflush(fm);
            hisp_matrix_destroy(&A);
        }
        fprintf(fm,
                "| %s | %s | memory MB | CSR %.1f, ELL %.1f, SELL16 %.1f, SELL32 %.1f | "
                "cuSPARSE %s %.1f | | | | cuSPARSE err %.1e | | | |%s\n",
                tok, mname, lb[0] / 1e6, lb[1] / 1e6, lb[2] / 1e6, lb[3] / 1e6,
                k == HISP_CGEN_HELMHOLTZ ? "CSR" : "BSR", cb / 1e6, cerr, both ? " | | | | |" : "");
        free(P.x);
        free(P.ref);
        hisp_matrix_destroy(&R);
    }
    if (fm != stdout) fclose(fm);
    if (fc) fclose(fc);
    if (all_csv) fclose(all_csv);
    hisp_context_destroy(&ctx);
    hisp_context_destroy(&rctx);
    return 0;
}
