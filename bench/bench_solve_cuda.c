/* hisp's Krylov solvers on the GPU as a user waits for them, against the
 * loops an expert writes with cuSPARSE and cuBLAS, in the same process.
 *
 * Options: --help (the help text below).
 *
 * Every solve starts from x0 = 0 with tolerances no run meets (rtol 0, atol
 * 1e-300), so it runs a fixed count of iterations; the count run is printed
 * beside the one asked for. ms/it = wall time from a synchronize to the
 * synchronize after hisp_solver_solve (its setup included), median of
 * `repeat` solves after one short warm-up solve (upload, kernel builds),
 * divided by the iterations.
 *
 *   cg        poisson3d n^3 (f64, hisp_matrix_generate, seed 42), CSR, against
 *             the CG loop of NVIDIA's conjugateGradient sample: cusparseSpMV
 *             (the fastest of the default, CSR_ALG1 and CSR_ALG2 on this
 *             matrix) + cublasDdot / Daxpy / Dscal / Dcopy with the scalars
 *             on the host (each dot returns to the host). floor = (the CSR
 *             bytes hisp reads, hisp_matrix_format_bytes, + 13 vector
 *             streams of n doubles: BS_CG_VECTOR_STREAMS) / the copy
 *             bandwidth (hisp_copy_bandwidth).
 *   lsqr      the m x ncols least-squares matrix of bs_lsq_matrix (npr
 *             entries per row, b random), hisp LSQR on CSR and on HiSparse
 *             (A^T products from the same tree, nothing transposed), against
 *             Paige and Saunders' LSQR written with cusparseSpMV (opA = N,
 *             the fastest algorithm, and opA = T, the default) + cublasDnrm2 /
 *             Dscal / Daxpy with host scalars, run for the iterations hisp ran.
 *   dist      the distributed solvers' scaling (common_dist.h): per matrix of
 *             --dist-matrices (poisson3d of --dist-side; rmat of --dist-scale
 *             and --dist-edge-factor made SPD: B = |A| + |A|^T, diagonal row
 *             sum + 1), method of --dist-methods and device count of
 *             --dist-devices (1: one context on GPU 0, the baseline; "1p": a
 *             plan over GPU 0 alone; k: a pcsr plan over GPUs 0..k-1), ms
 *             per iteration, speedup over 1, the breakdown per iteration
 *             (hisp_solve_info product / vector / reduce, other = the rest)
 *             and x's difference to the 1-GPU solution. Each matrix is made
 *             once; the plans run first, the 1-GPU solves last.
 *   selftest  what dist runs, checked at small sizes on GPU 0
 *             (bs_dist_selftest: the SPD graph against a dense construction,
 *             CG's convergence on it, the scaling rows over 1, 1p, 2 and 4
 *             parts sharing the GPU); not among the default parts.
 *   krylov    CG, BiCGSTAB and GMRES(restart) on the poisson3d of part cg
 *             (--sizes), --krylov-iters iterations each: ms/it and its ratio to
 *             CG's (the per-iteration cost of each method's vector work and
 *             waits; CuPy's cg and gmres: solve_cupy.py --gmres).
 *   compound  BiCGSTAB and GMRES(restart) on helmholtz (c64, n x n) and CG on
 *             qsurface (q64, 2 n^2 rows): ms/it and the SpMV's share (the
 *             wall of one synchronised hisp_spmv x SpMVs per iteration / ms
 *             per iteration). No cuSPARSE peer (it has no quaternions).
 *
 * A method hisp does not provide yet prints "unsupported" and the program
 * goes on. Exit: 0; 2 when a hisp solution and the expert's differ by more
 * than 1e-6 (relative) or a solve failed for another reason; 3 no device. */
#include "common_dist.h"
#include "cuda_bench.h"

#include <cublas_v2.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *parts, *sizes, *json, *summary;
    int64_t iters, lsqr_rows, lsqr_cols, lsqr_iters, kry_iters, helm_n, qsurf_n;
    int lsqr_scale;          /* rmat stack: four graphs of 2^lsqr_scale vertices */
    int64_t dist_side;       /* part dist: poisson3d side */
    int dist_scale, dist_ef; /* part dist: rmat scale and edge factor */
    const char *dist_devices, *dist_methods, *dist_matrices;
    int repeat, npr, restart;
} options;

/* ---- results ------------------------------------------------------------- */

typedef struct {
    char part[16], matrix[32], method[16], format[16];
    int64_t n, rows, cols, nnz, iters_asked, iters;
    char status[64], reason[48];
    double ms_it, first_ms, setup_ms, expert_ms_it, floor_ms, x_diff, spmv_ms, spmv_share;
    double over_cg; /* part krylov: ms/it over CG's on the matrix */
    char expert_alg[32];
} row;

typedef struct {
    row v[32];
    int n;
} rows;

static row *row_new(rows *R, const char *part, const char *matrix, const char *method,
                    const char *format)
{
    if (R->n >= 32) {
        fprintf(stderr, "too many rows\n");
        exit(3);
    }
    row *r = &R->v[R->n++];
    memset(r, 0, sizeof *r);
    snprintf(r->part, sizeof r->part, "%s", part);
    snprintf(r->matrix, sizeof r->matrix, "%s", matrix);
    snprintf(r->method, sizeof r->method, "%s", method);
    snprintf(r->format, sizeof r->format, "%s", format);
    r->ms_it = r->first_ms = r->setup_ms = r->expert_ms_it = r->floor_ms = r->x_diff = NAN;
    r->spmv_ms = r->spmv_share = r->over_cg = NAN;
    snprintf(r->status, sizeof r->status, "ok");
    return r;
}

/* Fills a row from a hisp solve; returns 1 when the solve ran. */
static int row_solve(row *r, const bs_solve *s, int64_t asked)
{
    r->iters_asked = asked;
    if (s->status != HISP_SUCCESS) {
        snprintf(r->status, sizeof r->status, "%s", bs_status_word(s->status));
        printf("  %s %s on %s: %s: %s\n", r->method, r->format, r->matrix, r->status, s->message);
        return 0;
    }
    r->iters = s->info.iterations;
    snprintf(r->reason, sizeof r->reason, "%s", hisp_stop_reason_name(s->info.reason));
    r->ms_it = s->ms_per_it;
    r->first_ms = s->first_ms;
    r->setup_ms = s->setup_ms;
    printf("  %s %s on %s: %lld of %lld iterations (%s), %.4f ms/it, setup %.2f ms, first "
           "(warm-up) solve %.1f ms, relative residual %.3e, moved %llu B to / %llu B from "
           "the device\n",
           r->method, r->format, r->matrix, (long long)r->iters, (long long)asked, r->reason,
           r->ms_it, r->setup_ms, r->first_ms, s->info.relative_residual,
           (unsigned long long)s->h2d_bytes, (unsigned long long)s->d2h_bytes);
    if (r->iters != asked)
        printf("  WARNING: %s ran %lld iterations, not %lld (%s)\n", r->method, (long long)r->iters,
               (long long)asked, r->reason);
    fflush(stdout);
    return 1;
}

static void tables(FILE *f, const rows *R, const char *gpu, double bw)
{
    char a[12][32];
    fprintf(f, "%s, copy bandwidth %.0f GB/s\n", gpu, bw * 1e-9);
    int any = 0;
    for (int i = 0; i < R->n; i++)
        if (!strcmp(R->v[i].part, "cg")) any = 1;
    if (any) {
        fprintf(f, "\nCG, f64, fixed iterations, wall per iteration (setup included)\n\n");
        fprintf(f, "| matrix | n | nnz | iterations | hisp ms/it | expert ms/it | hisp/expert | "
                   "floor ms | hisp/floor | expert SpMV | x rel. diff | setup ms |\n");
        fprintf(f, "|---|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|--:|\n");
        for (int i = 0; i < R->n; i++) {
            const row *r = &R->v[i];
            if (strcmp(r->part, "cg")) continue;
            fprintf(f,
                    "| %s | %lld | %lld | %lld/%lld %s | %s | %s | **%s** | %s | %s | %s | %s | "
                    "%s |\n",
                    r->matrix, (long long)r->n, (long long)r->nnz, (long long)r->iters,
                    (long long)r->iters_asked, r->status, bs_fx(r->ms_it, a[0], "%.4f"),
                    bs_fx(r->expert_ms_it, a[1], "%.4f"),
                    bs_fx(r->ms_it / r->expert_ms_it, a[2], "%.3f"),
                    bs_fx(r->floor_ms, a[3], "%.4f"), bs_fx(r->ms_it / r->floor_ms, a[4], "%.2f"),
                    r->expert_alg, bs_fx(r->x_diff, a[5], "%.1e"),
                    bs_fx(r->setup_ms, a[6], "%.2f"));
        }
    }
    any = 0;
    for (int i = 0; i < R->n; i++)
        if (!strcmp(R->v[i].part, "lsqr")) any = 1;
    if (any) {
        fprintf(f,
                "\nLSQR, f64, fixed iterations, wall per iteration (2 SpMVs: A v and A^T u)\n\n");
        fprintf(f, "| matrix | rows x cols | nnz | format | iterations | hisp ms/it | expert ms/it "
                   "| hisp/expert | SpMV N+T ms | SpMV share | first solve ms | x rel. diff |\n");
        fprintf(f, "|---|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|\n");
        for (int i = 0; i < R->n; i++) {
            const row *r = &R->v[i];
            if (strcmp(r->part, "lsqr")) continue;
            fprintf(f,
                    "| %s | %lld x %lld | %lld | %s | %lld/%lld %s | %s | %s | **%s** | %s | %s "
                    "| %s | %s |\n",
                    r->matrix, (long long)r->rows, (long long)r->cols, (long long)r->nnz, r->format,
                    (long long)r->iters, (long long)r->iters_asked, r->status,
                    bs_fx(r->ms_it, a[0], "%.4f"), bs_fx(r->expert_ms_it, a[1], "%.4f"),
                    bs_fx(r->ms_it / r->expert_ms_it, a[2], "%.3f"),
                    bs_fx(r->spmv_ms, a[3], "%.4f"), bs_fx(100 * r->spmv_share, a[4], "%.0f%%"),
                    bs_fx(r->first_ms, a[5], "%.1f"), bs_fx(r->x_diff, a[6], "%.1e"));
        }
    }
    any = 0;
    for (int i = 0; i < R->n; i++)
        if (!strcmp(R->v[i].part, "krylov")) any = 1;
    if (any) {
        fprintf(f, "\nKrylov methods, f64, CSR, fixed iterations, wall per iteration (setup "
                   "included) and over CG's\n\n");
        fprintf(f, "| matrix | method | iterations | ms/it | / CG | setup ms |\n");
        fprintf(f, "|---|---|--:|--:|--:|--:|\n");
        for (int i = 0; i < R->n; i++) {
            const row *r = &R->v[i];
            if (strcmp(r->part, "krylov")) continue;
            fprintf(f, "| %s | %s | %lld/%lld %s | %s | **%s** | %s |\n", r->matrix, r->method,
                    (long long)r->iters, (long long)r->iters_asked, r->status,
                    bs_fx(r->ms_it, a[0], "%.4f"), bs_fx(r->over_cg, a[1], "%.2f"),
                    bs_fx(r->setup_ms, a[2], "%.2f"));
        }
    }
    any = 0;
    for (int i = 0; i < R->n; i++)
        if (!strcmp(R->v[i].part, "compound")) any = 1;
    if (any) {
        fprintf(f, "\nCompound entries, fixed iterations, wall per iteration; SpMV share = "
                   "SpMV wall x SpMVs per iteration / ms per iteration\n\n");
        fprintf(f, "| matrix | type | rows | nnz | method | iterations | ms/it | SpMV ms | SpMV "
                   "share | setup ms |\n");
        fprintf(f, "|---|---|--:|--:|---|--:|--:|--:|--:|--:|\n");
        for (int i = 0; i < R->n; i++) {
            const row *r = &R->v[i];
            if (strcmp(r->part, "compound")) continue;
            fprintf(f, "| %s | %s | %lld | %lld | %s | %lld/%lld %s %s | %s | %s | %s | %s |\n",
                    r->matrix, r->format, (long long)r->rows, (long long)r->nnz, r->method,
                    (long long)r->iters, (long long)r->iters_asked, r->status, r->reason,
                    bs_fx(r->ms_it, a[0], "%.4f"), bs_fx(r->spmv_ms, a[1], "%.4f"),
                    bs_fx(100 * r->spmv_share, a[2], "%.0f%%"), bs_fx(r->setup_ms, a[3], "%.2f"));
        }
    }
}

static void json_num(FILE *f, const char *k, double v, int comma)
{
    if (isnan(v) || isinf(v))
        fprintf(f, "\"%s\": null%s", k, comma ? ", " : "");
    else
        fprintf(f, "\"%s\": %.6g%s", k, v, comma ? ", " : "");
}

static void write_json(FILE *f, const rows *R, const bs_dist_rows *D, const char *gpu, double bw,
                       const options *o)
{
    fprintf(f, "{\"device\": \"%s\", \"copy_bandwidth\": %.6g, \"repeat\": %d, \"results\": [\n",
            gpu, bw, o->repeat);
    for (int i = 0; i < R->n; i++) {
        const row *r = &R->v[i];
        fprintf(f,
                "  {\"part\": \"%s\", \"matrix\": \"%s\", \"method\": \"%s\", \"format\": \"%s\", "
                "\"n\": %lld, \"rows\": %lld, \"cols\": %lld, \"nnz\": %lld, \"iterations_asked\": "
                "%lld, \"iterations\": %lld, \"status\": \"%s\", \"reason\": \"%s\", "
                "\"expert_alg\": \"%s\", ",
                r->part, r->matrix, r->method, r->format, (long long)r->n, (long long)r->rows,
                (long long)r->cols, (long long)r->nnz, (long long)r->iters_asked,
                (long long)r->iters, r->status, r->reason, r->expert_alg);
        json_num(f, "ms_per_it", r->ms_it, 1);
        json_num(f, "expert_ms_per_it", r->expert_ms_it, 1);
        json_num(f, "floor_ms", r->floor_ms, 1);
        json_num(f, "first_ms", r->first_ms, 1);
        json_num(f, "setup_ms", r->setup_ms, 1);
        json_num(f, "spmv_ms", r->spmv_ms, 1);
        json_num(f, "spmv_share", r->spmv_share, 1);
        json_num(f, "over_cg", r->over_cg, 1);
        json_num(f, "x_rel_diff", r->x_diff, 0);
        fprintf(f, "}%s\n", i + 1 < R->n || D->n ? "," : "");
    }
    for (int i = 0; i < D->n; i++) {
        fprintf(f, "  ");
        bs_dist_json(f, &D->v[i]);
        fprintf(f, "%s\n", i + 1 < D->n ? "," : "");
    }
    fprintf(f, "]}\n");
}

/* ---- the expert's side: cuSPARSE + cuBLAS ------------------------------------ */

typedef struct {
    cb_cusp *C;
    cublasHandle_t bl;
    int64_t nrows, ncols, nnz;
    void *rp, *ci, *val; /* 32-bit row pointers and indices, f64 values */
} ex_mat;

static void *dalloc(size_t bytes)
{
    void *p = NULL;
    CK(cudaMalloc(&p, bytes ? bytes : 8));
    return p;
}

static void ex_upload(ex_mat *E, cb_cusp *C, cublasHandle_t bl, int64_t nrows, int64_t ncols,
                      const int64_t *rowptr, const int32_t *colind, const double *val)
{
    memset(E, 0, sizeof *E);
    E->C = C;
    E->bl = bl;
    E->nrows = nrows;
    E->ncols = ncols;
    E->nnz = rowptr[nrows];
    if (E->nnz > 2147483647) {
        fprintf(stderr, "expert loop: nnz %lld needs 64-bit row pointers\n", (long long)E->nnz);
        exit(3);
    }
    int32_t *rp = malloc((size_t)(nrows + 1) * sizeof *rp);
    if (!rp) exit(3);
    for (int64_t i = 0; i <= nrows; i++)
        rp[i] = (int32_t)rowptr[i];
    E->rp = dalloc((size_t)(nrows + 1) * 4);
    E->ci = dalloc((size_t)E->nnz * 4);
    E->val = dalloc((size_t)E->nnz * 8);
    CK(cudaMemcpy(E->rp, rp, (size_t)(nrows + 1) * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(E->ci, colind, (size_t)E->nnz * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(E->val, val, (size_t)E->nnz * 8, cudaMemcpyHostToDevice));
    free(rp);
}

static void ex_free(ex_mat *E)
{
    CK(cudaFree(E->rp));
    CK(cudaFree(E->ci));
    CK(cudaFree(E->val));
}

/* One prepared product y = alpha op(A) x + beta y: its own descriptors and
 * buffer (preprocessed for that op and algorithm). */
typedef struct {
    cusparseOperation_t op;
    cusparseSpMVAlg_t alg;
    cusparseSpMatDescr_t A;
    cusparseDnVecDescr_t x, y;
    void *buf;
    double ms; /* median device time of the trial runs */
} ex_spmv;

static void ex_spmv_make(ex_spmv *P, const ex_mat *E, cusparseOperation_t op, cusparseSpMVAlg_t alg,
                         void *x, void *y, double beta)
{
    memset(P, 0, sizeof *P);
    P->op = op;
    P->alg = alg;
    int tr = op != CUSPARSE_OPERATION_NON_TRANSPOSE;
    CKS(cusparseCreateCsr(&P->A, E->nrows, E->ncols, E->nnz, E->rp, E->ci, E->val,
                          CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                          CUDA_R_64F));
    CKS(cusparseCreateDnVec(&P->x, tr ? E->nrows : E->ncols, x, CUDA_R_64F));
    CKS(cusparseCreateDnVec(&P->y, tr ? E->ncols : E->nrows, y, CUDA_R_64F));
    double one = 1;
    size_t bs = 0;
    CKS(cusparseSpMV_bufferSize(E->C->h, op, &one, P->A, P->x, &beta, P->y, CUDA_R_64F, alg, &bs));
    P->buf = dalloc(bs);
    CKS(cusparseSpMV_preprocess(E->C->h, op, &one, P->A, P->x, &beta, P->y, CUDA_R_64F, alg,
                                P->buf));
}

static void ex_spmv_run(const ex_mat *E, const ex_spmv *P, double alpha, double beta)
{
    CKS(cusparseSpMV(E->C->h, P->op, &alpha, P->A, P->x, &beta, P->y, CUDA_R_64F, P->alg, P->buf));
}

static void ex_spmv_free(ex_spmv *P)
{
    CKS(cusparseDestroySpMat(P->A));
    CKS(cusparseDestroyDnVec(P->x));
    CKS(cusparseDestroyDnVec(P->y));
    CK(cudaFree(P->buf));
}

static const char *alg_name(cusparseSpMVAlg_t a)
{
    return a == CUSPARSE_SPMV_CSR_ALG1   ? "CSR_ALG1"
           : a == CUSPARSE_SPMV_CSR_ALG2 ? "CSR_ALG2"
                                         : "DEFAULT";
}

/* The fastest of the default, CSR_ALG1 and CSR_ALG2 for y = A x + beta y on
 * x, y (device times of 10 runs after 3, CUDA events), as
 * bench_runtime_cuda picks cuSPARSE's best; op = T takes the default. y's
 * content is destroyed. */
static void ex_spmv_best(ex_spmv *best, const ex_mat *E, cusparseOperation_t op, void *x, void *y,
                         double beta)
{
    static const cusparseSpMVAlg_t algs[3] = {CUSPARSE_SPMV_ALG_DEFAULT, CUSPARSE_SPMV_CSR_ALG1,
                                              CUSPARSE_SPMV_CSR_ALG2};
    int na = op == CUSPARSE_OPERATION_NON_TRANSPOSE ? 3 : 1;
    best->ms = INFINITY;
    for (int a = 0; a < na; a++) {
        ex_spmv P;
        ex_spmv_make(&P, E, op, algs[a], x, y, beta);
        double ms[10];
        for (int i = 0; i < 13; i++) {
            CK(cudaEventRecord(E->C->e0, E->C->stream));
            ex_spmv_run(E, &P, 1, beta);
            CK(cudaEventRecord(E->C->e1, E->C->stream));
            CK(cudaEventSynchronize(E->C->e1));
            float t = 0;
            CK(cudaEventElapsedTime(&t, E->C->e0, E->C->e1));
            if (i >= 3) ms[i - 3] = t;
        }
        P.ms = bench_median(ms, 10);
        if (P.ms < best->ms) {
            if (a) ex_spmv_free(best);
            *best = P;
        } else {
            ex_spmv_free(&P);
        }
    }
}

/* NVIDIA's conjugateGradient sample with x0 = 0 for exactly `iters`
 * iterations: r = b; p = r (then p = r + (r1/r0) p); Ax = A p; a = r1 /
 * p.Ax; x += a p; r -= a Ax; r1 = r.r; dots in host pointer mode (each waits
 * for the device). */
static void ex_cg(const ex_mat *E, const ex_spmv *S, int64_t iters, const double *b, double *x,
                  double *r, double *p, double *Ax)
{
    cublasHandle_t bl = E->bl;
    int n = (int)E->nrows;
    const double one = 1;
    CK(cudaMemsetAsync(x, 0, (size_t)n * 8, E->C->stream));
    CK(cudaMemcpyAsync(r, b, (size_t)n * 8, cudaMemcpyDeviceToDevice, E->C->stream));
    double r0 = 0, r1 = 0, dot = 0;
    CKB(cublasDdot(bl, n, r, 1, r, 1, &r1));
    for (int64_t k = 1; k <= iters; k++) {
        if (k > 1) {
            double beta = r1 / r0;
            CKB(cublasDscal(bl, n, &beta, p, 1));
            CKB(cublasDaxpy(bl, n, &one, r, 1, p, 1));
        } else {
            CKB(cublasDcopy(bl, n, r, 1, p, 1));
        }
        ex_spmv_run(E, S, 1, 0);
        CKB(cublasDdot(bl, n, p, 1, Ax, 1, &dot));
        double a = r1 / dot, na = -a;
        CKB(cublasDaxpy(bl, n, &a, p, 1, x, 1));
        CKB(cublasDaxpy(bl, n, &na, Ax, 1, r, 1));
        r0 = r1;
        CKB(cublasDdot(bl, n, r, 1, r, 1, &r1));
    }
    CK(cudaStreamSynchronize(E->C->stream));
}

/* LSQR (Paige and Saunders 1982, damp = 0) with x0 = 0 for `iters`
 * iterations: N: u = A v - alpha u, T: v = A^T u - beta v. */
static void ex_lsqr(const ex_mat *E, const ex_spmv *N, const ex_spmv *T, int64_t iters,
                    const double *b, double *x, double *u, double *v, double *w)
{
    cublasHandle_t bl = E->bl;
    int m = (int)E->nrows, n = (int)E->ncols;
    const double one = 1;
    double alpha = 0, beta = 0, s;
    CK(cudaMemsetAsync(x, 0, (size_t)n * 8, E->C->stream));
    CK(cudaMemcpyAsync(u, b, (size_t)m * 8, cudaMemcpyDeviceToDevice, E->C->stream));
    CKB(cublasDnrm2(bl, m, u, 1, &beta));
    s = 1 / beta;
    CKB(cublasDscal(bl, m, &s, u, 1));
    ex_spmv_run(E, T, 1, 0);
    CKB(cublasDnrm2(bl, n, v, 1, &alpha));
    s = 1 / alpha;
    CKB(cublasDscal(bl, n, &s, v, 1));
    CKB(cublasDcopy(bl, n, v, 1, w, 1));
    double phibar = beta, rhobar = alpha;
    for (int64_t k = 1; k <= iters; k++) {
        ex_spmv_run(E, N, 1, -alpha);
        CKB(cublasDnrm2(bl, m, u, 1, &beta));
        if (beta > 0) {
            s = 1 / beta;
            CKB(cublasDscal(bl, m, &s, u, 1));
        }
        ex_spmv_run(E, T, 1, -beta);
        CKB(cublasDnrm2(bl, n, v, 1, &alpha));
        if (alpha > 0) {
            s = 1 / alpha;
            CKB(cublasDscal(bl, n, &s, v, 1));
        }
        double rho = hypot(rhobar, beta), c = rhobar / rho, sn = beta / rho;
        double theta = sn * alpha, phi = c * phibar;
        rhobar = -c * alpha;
        phibar = sn * phibar;
        double t1 = phi / rho, t2 = -theta / rho;
        CKB(cublasDaxpy(bl, n, &t1, w, 1, x, 1));
        CKB(cublasDscal(bl, n, &t2, w, 1));
        CKB(cublasDaxpy(bl, n, &one, v, 1, w, 1));
    }
    CK(cudaStreamSynchronize(E->C->stream));
}

/* ---- the parts ------------------------------------------------------------- */

typedef struct {
    hisp_context ctx;
    cb_cusp C;
    cublasHandle_t bl;
    double bw;
    int failed;
    const options *o;
} bench;

static hisp_vector hvec(bench *B, hisp_type t, int64_t n, const double *host)
{
    hisp_vector v = NULL;
    cb_hk(B->ctx, hisp_vector_create(B->ctx, t, n, &v), "vector");
    if (host) cb_hk(B->ctx, hisp_vector_write(v, host), "vector write");
    return v;
}

/* poisson3d side^3 (f64, seed 42), its info and its name (32 bytes). */
static hisp_matrix poisson3d(bench *B, int64_t side, hisp_matrix_info *mi, char *name)
{
    hisp_gen_params gp;
    hisp_gen_defaults(HISP_GEN_POISSON3D, &gp);
    gp.n = side;
    gp.seed = 42;
    hisp_matrix A = NULL;
    cb_hk(B->ctx, hisp_matrix_generate(B->ctx, &gp, HISP_F64, &A), "generate poisson3d");
    cb_hk(B->ctx, hisp_matrix_get_info(A, mi), "info");
    snprintf(name, 32, "poisson3d-%lld", (long long)side);
    return A;
}

/* "gmres(m)" or the method's name. */
static const char *method_label(hisp_solver_method m, int restart, char buf[16])
{
    if (m != HISP_SOLVER_GMRES) return hisp_solver_method_name(m);
    snprintf(buf, 16, "gmres(%d)", restart);
    return buf;
}

static void part_cg(bench *B, rows *R, int64_t side)
{
    const options *o = B->o;
    hisp_context ctx = B->ctx;
    hisp_matrix_info mi;
    char name[32];
    hisp_matrix A = poisson3d(B, side, &mi, name);
    int64_t n = mi.nrows;
    printf("%s: %lld rows, nnz %lld\n", name, (long long)n, (long long)mi.nnz);
    row *r = row_new(R, "cg", name, "cg", "csr");
    r->n = side;
    r->rows = r->cols = n;
    r->nnz = mi.nnz;
    uint64_t mbytes = 0;
    cb_hk(ctx, hisp_matrix_format_bytes(A, HISP_FORMAT_CSR, HISP_F64, &mbytes), "format bytes");
    r->floor_ms = ((double)mbytes + BS_CG_VECTOR_STREAMS * 8.0 * (double)n) / B->bw * 1e3;
    double *bh = bs_doubles(n), *xh = bs_doubles(n), *xe = bs_doubles(n);
    bs_fill_uniform(bh, n, 7);
    hisp_vector b = hvec(B, HISP_F64, n, bh), x = hvec(B, HISP_F64, n, NULL);
    bs_solve s;
    int ran = !bs_solve_fixed(ctx, HISP_SOLVER_CG, A, b, x, o->iters, 0, 3, o->repeat, &s);
    if (row_solve(r, &s, o->iters)) {
        cb_hk(ctx, hisp_vector_read(x, xh), "read x");
        hisp_vector y = hvec(B, HISP_F64, n, NULL);
        r->spmv_ms = bs_spmv_wall(ctx, HISP_OP_N, A, b, y, 20, NULL);
        r->spmv_share = r->spmv_ms / r->ms_it;
        hisp_vector_destroy(&y);
    } else if (s.status != HISP_ERR_UNSUPPORTED) {
        B->failed = 1;
    }
    /* the expert's loop on its own copy of the matrix */
    const int64_t *rowptr;
    const int32_t *colind;
    const void *val;
    cb_hk(ctx, hisp_matrix_host_arrays(A, &rowptr, NULL, &colind, &val), "host arrays");
    ex_mat E;
    ex_upload(&E, &B->C, B->bl, n, n, rowptr, colind, val);
    double *db = dalloc((size_t)n * 8), *dx = dalloc((size_t)n * 8), *dr = dalloc((size_t)n * 8);
    double *dp = dalloc((size_t)n * 8), *dAx = dalloc((size_t)n * 8);
    CK(cudaMemcpy(db, bh, (size_t)n * 8, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dp, bh, (size_t)n * 8, cudaMemcpyHostToDevice));
    ex_spmv S;
    ex_spmv_best(&S, &E, CUSPARSE_OPERATION_NON_TRANSPOSE, dp, dAx, 0);
    snprintf(r->expert_alg, sizeof r->expert_alg, "%s", alg_name(S.alg));
    ex_cg(&E, &S, 3, db, dx, dr, dp, dAx); /* warm-up */
    int64_t it = ran && r->iters > 0 ? r->iters : o->iters;
    double wall[64];
    int rep = o->repeat < 64 ? o->repeat : 64;
    for (int k = 0; k < rep; k++) {
        CK(cudaStreamSynchronize(B->C.stream));
        double t0 = bench_now_ms();
        ex_cg(&E, &S, it, db, dx, dr, dp, dAx);
        wall[k] = bench_now_ms() - t0;
    }
    r->expert_ms_it = bench_median(wall, rep) / (double)it;
    CK(cudaMemcpy(xe, dx, (size_t)n * 8, cudaMemcpyDeviceToHost));
    if (ran) {
        r->x_diff = bs_rel_diff(xh, xe, n);
        if (!(r->x_diff <= 1e-6)) B->failed = 1;
    }
    printf("  expert cg (cusparseSpMV %s, SpMV %.4f ms device, + cuBLAS): %lld iterations, "
           "%.4f ms/it; hisp / expert %.3f; floor %.4f ms (%.1f MB), hisp / floor %.2f; x rel. "
           "diff %.2e\n",
           r->expert_alg, S.ms, (long long)it, r->expert_ms_it, r->ms_it / r->expert_ms_it,
           r->floor_ms, ((double)mbytes + BS_CG_VECTOR_STREAMS * 8.0 * (double)n) * 1e-6,
           r->ms_it / r->floor_ms, r->x_diff);
    fflush(stdout);
    ex_spmv_free(&S);
    double *fr[] = {db, dx, dr, dp, dAx};
    for (int k = 0; k < 5; k++)
        CK(cudaFree(fr[k]));
    ex_free(&E);
    hisp_vector_destroy(&b);
    hisp_vector_destroy(&x);
    hisp_matrix_destroy(&A);
    free(bh);
    free(xh);
    free(xe);
}

/* CG, BiCGSTAB and GMRES(restart) on poisson3d side^3: ms/it, and over
 * CG's. */
static void part_krylov(bench *B, rows *R, int64_t side)
{
    const options *o = B->o;
    hisp_context ctx = B->ctx;
    hisp_matrix_info mi;
    char name[32];
    hisp_matrix A = poisson3d(B, side, &mi, name);
    double *bh = bs_doubles(mi.nrows);
    bs_fill_uniform(bh, mi.nrows, 7);
    hisp_vector b = hvec(B, HISP_F64, mi.nrows, bh), x = hvec(B, HISP_F64, mi.nrows, NULL);
    const hisp_solver_method ms[3] = {HISP_SOLVER_CG, HISP_SOLVER_BICGSTAB, HISP_SOLVER_GMRES};
    double cg = NAN;
    for (int k = 0; k < 3; k++) {
        char buf[16];
        const char *meth = method_label(ms[k], o->restart, buf);
        row *r = row_new(R, "krylov", name, meth, "csr");
        r->n = side;
        r->rows = r->cols = mi.nrows;
        r->nnz = mi.nnz;
        bs_solve s;
        bs_solve_fixed(ctx, ms[k], A, b, x, o->kry_iters, o->restart, 3, o->repeat, &s);
        if (row_solve(r, &s, o->kry_iters)) {
            if (k == 0) cg = r->ms_it;
            r->over_cg = r->ms_it / cg;
            printf("  %s: %.2f x CG's time per iteration\n", meth, r->over_cg);
        } else if (s.status != HISP_ERR_UNSUPPORTED) {
            B->failed = 1;
        }
    }
    hisp_vector_destroy(&b);
    hisp_vector_destroy(&x);
    hisp_matrix_destroy(&A);
    free(bh);
}

/* Four rmat graphs of 2^scale vertices (seeds 1..4, edge factor 8, values
 * in [-1, 1)) stacked: a 4*2^scale x 2^scale least-squares operator with
 * power-law rows and columns. CSR arrays, malloc'd. */
static void rmat_stack(bench *B, int scale, int64_t **rowptr, int32_t **colind, double **val,
                       int64_t *m, int64_t *nc)
{
    hisp_matrix G[4];
    int64_t nnz = 0, n = (int64_t)1 << scale;
    for (int k = 0; k < 4; k++) {
        hisp_gen_params gp;
        hisp_gen_defaults(HISP_GEN_RMAT, &gp);
        gp.scale = scale;
        gp.seed = (uint64_t)k + 1;
        cb_hk(B->ctx, hisp_matrix_generate(B->ctx, &gp, HISP_F64, &G[k]), "generate rmat");
        hisp_matrix_info mi;
        cb_hk(B->ctx, hisp_matrix_get_info(G[k], &mi), "info");
        nnz += mi.nnz;
    }
    *m = 4 * n;
    *nc = n;
    *rowptr = malloc((size_t)(*m + 1) * sizeof **rowptr);
    *colind = malloc((size_t)nnz * sizeof **colind);
    *val = malloc((size_t)nnz * sizeof **val);
    if (!*rowptr || !*colind || !*val) {
        fprintf(stderr, "out of host memory\n");
        exit(3);
    }
    int64_t at = 0;
    (*rowptr)[0] = 0;
    for (int k = 0; k < 4; k++) {
        const int64_t *p;
        const int32_t *c;
        const void *v;
        cb_hk(B->ctx, hisp_matrix_host_arrays(G[k], &p, NULL, &c, &v), "host arrays");
        for (int64_t i = 0; i < n; i++) {
            for (int64_t e = p[i]; e < p[i + 1]; e++) {
                (*colind)[at] = c[e];
                (*val)[at++] = ((const double *)v)[e];
            }
            (*rowptr)[k * n + i + 1] = at;
        }
        hisp_matrix_destroy(&G[k]);
    }
}

static void part_lsqr(bench *B, rows *R, int rmat)
{
    const options *o = B->o;
    hisp_context ctx = B->ctx;
    int64_t m = o->lsqr_rows, nc = o->lsqr_cols;
    int64_t *rowptr;
    int32_t *colind;
    double *val;
    double t0 = bench_now_ms();
    const char *mname = rmat ? "lsq-rmat" : "lsq-random";
    if (rmat)
        rmat_stack(B, o->lsqr_scale, &rowptr, &colind, &val, &m, &nc);
    else
        bs_lsq_matrix(m, nc, o->npr, 11, &rowptr, &colind, &val);
    hisp_matrix A = NULL, H = NULL;
    cb_hk(ctx, hisp_matrix_create_csr(ctx, HISP_F64, m, nc, rowptr, colind, val, &A), "csr");
    int64_t nnz = rowptr[m];
    printf("%s: %lld x %lld, nnz %lld (made in %.0f ms)\n", mname, (long long)m, (long long)nc,
           (long long)nnz, bench_now_ms() - t0);
    t0 = bench_now_ms();
    cb_hk(ctx, hisp_matrix_duplicate(A, HISP_FORMAT_HISPARSE, &H), "to HiSparse");
    printf("  HiSparse copy built on the host in %.0f ms\n", bench_now_ms() - t0);
    double *bh = bs_doubles(m), *xh = bs_doubles(nc), *xe = bs_doubles(nc);
    bs_fill_uniform(bh, m, 13);
    hisp_vector b = hvec(B, HISP_F64, m, bh), x = hvec(B, HISP_F64, nc, NULL);
    hisp_vector yn = hvec(B, HISP_F64, m, NULL), yt = hvec(B, HISP_F64, nc, NULL);
    hisp_matrix mats[2] = {A, H};
    const char *fmt[2] = {"csr", "hisparse"};
    row *rr[2];
    int ran[2] = {0, 0};
    double *xs[2] = {xh, bs_doubles(nc)};
    int64_t it = o->lsqr_iters;
    for (int f = 0; f < 2; f++) {
        row *r = rr[f] = row_new(R, "lsqr", mname, "lsqr", fmt[f]);
        r->rows = m;
        r->cols = nc;
        r->nnz = nnz;
        bs_solve s;
        bs_solve_fixed(ctx, HISP_SOLVER_LSQR, mats[f], b, x, o->lsqr_iters, 0, 2, o->repeat, &s);
        ran[f] = row_solve(r, &s, o->lsqr_iters);
        if (!ran[f]) {
            if (s.status != HISP_ERR_UNSUPPORTED) B->failed = 1;
            continue;
        }
        it = r->iters > 0 ? r->iters : it;
        cb_hk(ctx, hisp_vector_read(x, xs[f]), "read x");
        hisp_vector xv = hvec(B, HISP_F64, nc, xs[f]);
        double sn = bs_spmv_wall(ctx, HISP_OP_N, mats[f], xv, yn, 20, NULL);
        double st = bs_spmv_wall(ctx, HISP_OP_T, mats[f], b, yt, 20, NULL);
        hisp_vector_destroy(&xv);
        r->spmv_ms = sn + st;
        r->spmv_share = r->spmv_ms / r->ms_it;
        printf("  hisp SpMV %s: N %.4f ms, T %.4f ms (wall, synchronised)\n", fmt[f], sn, st);
    }
    /* the expert's LSQR */
    ex_mat E;
    ex_upload(&E, &B->C, B->bl, m, nc, rowptr, colind, val);
    double *db = dalloc((size_t)m * 8), *du = dalloc((size_t)m * 8), *dx = dalloc((size_t)nc * 8);
    double *dv = dalloc((size_t)nc * 8), *dw = dalloc((size_t)nc * 8);
    CK(cudaMemcpy(db, bh, (size_t)m * 8, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(du, bh, (size_t)m * 8, cudaMemcpyHostToDevice));
    CK(cudaMemset(dv, 0, (size_t)nc * 8));
    ex_spmv SN, ST;
    ex_spmv_best(&SN, &E, CUSPARSE_OPERATION_NON_TRANSPOSE, dv, du, -1);
    ex_spmv_best(&ST, &E, CUSPARSE_OPERATION_TRANSPOSE, du, dv, -1);
    ex_lsqr(&E, &SN, &ST, 2, db, dx, du, dv, dw); /* warm-up */
    double wall[64];
    int rep = o->repeat < 64 ? o->repeat : 64;
    for (int k = 0; k < rep; k++) {
        CK(cudaStreamSynchronize(B->C.stream));
        t0 = bench_now_ms();
        ex_lsqr(&E, &SN, &ST, it, db, dx, du, dv, dw);
        wall[k] = bench_now_ms() - t0;
    }
    double ems = bench_median(wall, rep) / (double)it;
    CK(cudaMemcpy(xe, dx, (size_t)nc * 8, cudaMemcpyDeviceToHost));
    printf("  expert lsqr (cusparseSpMV N %s %.4f ms, T %s %.4f ms device, + cuBLAS): %lld "
           "iterations, %.4f ms/it\n",
           alg_name(SN.alg), SN.ms, alg_name(ST.alg), ST.ms, (long long)it, ems);
    for (int f = 0; f < 2; f++) {
        row *r = rr[f];
        r->expert_ms_it = ems;
        snprintf(r->expert_alg, sizeof r->expert_alg, "N %s, T %s", alg_name(SN.alg),
                 alg_name(ST.alg));
        if (!ran[f]) continue;
        r->x_diff = bs_rel_diff(xs[f], xe, nc);
        /* the rmat stack is rank deficient (empty columns, repeated rows):
         * 200 iterations from convergence, rounding differences of the two
         * loops' sums grow in its iterates, so only the random matrix's
         * solutions are held to agree */
        if (!rmat && !(r->x_diff <= 1e-6)) B->failed = 1;
        printf("  lsqr %s: hisp / expert %.3f, x rel. diff %.2e\n", fmt[f], r->ms_it / ems,
               r->x_diff);
    }
    fflush(stdout);
    ex_spmv_free(&SN);
    ex_spmv_free(&ST);
    double *fr[] = {db, du, dx, dv, dw};
    for (int k = 0; k < 5; k++)
        CK(cudaFree(fr[k]));
    ex_free(&E);
    hisp_vector *vs[] = {&b, &x, &yn, &yt};
    for (int k = 0; k < 4; k++)
        hisp_vector_destroy(vs[k]);
    hisp_matrix_destroy(&A);
    hisp_matrix_destroy(&H);
    free(rowptr);
    free(colind);
    free(val);
    free(bh);
    free(xh);
    free(xe);
    free(xs[1]);
}

/* One method on a compound matrix: ms/it, and the SpMV's share with
 * spmv_per_it products per iteration. */
static void compound_row(bench *B, rows *R, hisp_matrix A, const char *name, hisp_type t,
                         hisp_solver_method m, int restart, double spmv_per_it, double spmv_ms)
{
    const options *o = B->o;
    hisp_context ctx = B->ctx;
    hisp_matrix_info mi;
    cb_hk(ctx, hisp_matrix_get_info(A, &mi), "info");
    int per = (int)(hisp_type_size(t) / 8);
    char buf[16];
    const char *meth = method_label(m, restart, buf);
    row *r = row_new(R, "compound", name, meth, hisp_type_name(t));
    r->rows = r->cols = mi.nrows;
    r->nnz = mi.nnz;
    double *bh = bs_doubles(mi.nrows * per);
    bs_fill_uniform(bh, mi.nrows * per, 17);
    hisp_vector b = hvec(B, t, mi.nrows, bh), x = hvec(B, t, mi.nrows, NULL);
    bs_solve s;
    bs_solve_fixed(ctx, m, A, b, x, o->kry_iters, restart, 2, o->repeat, &s);
    if (row_solve(r, &s, o->kry_iters)) {
        r->spmv_ms = spmv_ms;
        r->spmv_share = spmv_ms * spmv_per_it / r->ms_it;
        if (s.info.reason == HISP_STOP_INDEFINITE)
            printf("  %s: CG found p^H A p <= 0: the matrix is not positive definite; the "
                   "time per iteration is of the iterations before that\n",
                   name);
    } else if (s.status != HISP_ERR_UNSUPPORTED) {
        B->failed = 1;
    }
    hisp_vector_destroy(&b);
    hisp_vector_destroy(&x);
    free(bh);
}

static void part_compound(bench *B, rows *R)
{
    const options *o = B->o;
    hisp_context ctx = B->ctx;
    static const struct {
        hisp_cgen_kind kind;
        hisp_type t;
        const char *name;
    } mats[2] = {{HISP_CGEN_HELMHOLTZ, HISP_C64, "helmholtz"},
                 {HISP_CGEN_QSURFACE, HISP_Q64, "qsurface"}};
    for (int k = 0; k < 2; k++) {
        int64_t n = k == 0 ? o->helm_n : o->qsurf_n;
        if (n <= 0) continue;
        hisp_matrix A = NULL;
        double t0 = bench_now_ms();
        hisp_status st = hisp_matrix_generate_compound(ctx, mats[k].kind, n, 42, mats[k].t, &A);
        if (st) {
            row *r = row_new(R, "compound", mats[k].name, "-", hisp_type_name(mats[k].t));
            snprintf(r->status, sizeof r->status, "%s", bs_status_word(st));
            printf("  %s: generate: %s\n", mats[k].name, hisp_status_string(st));
            B->failed |= st != HISP_ERR_UNSUPPORTED;
            continue;
        }
        hisp_matrix_info mi;
        cb_hk(ctx, hisp_matrix_get_info(A, &mi), "info");
        char name[32];
        snprintf(name, sizeof name, "%s-%lld", mats[k].name, (long long)n);
        printf("%s (%s): %lld rows, nnz %lld (made in %.0f ms)\n", name, hisp_type_name(mats[k].t),
               (long long)mi.nrows, (long long)mi.nnz, bench_now_ms() - t0);
        /* the SpMV alone, on random x */
        int per = (int)(hisp_type_size(mats[k].t) / 8);
        double *xh = bs_doubles(mi.nrows * per);
        bs_fill_uniform(xh, mi.nrows * per, 19);
        hisp_vector xv = hvec(B, mats[k].t, mi.nrows, xh), yv = hvec(B, mats[k].t, mi.nrows, NULL);
        hisp_status ss;
        double spmv = bs_spmv_wall(ctx, HISP_OP_N, A, xv, yv, 20, &ss);
        printf("  hisp SpMV: %.4f ms (wall, synchronised)%s\n", spmv,
               ss ? hisp_status_string(ss) : "");
        hisp_vector_destroy(&xv);
        hisp_vector_destroy(&yv);
        free(xh);
        if (k == 0) {
            compound_row(B, R, A, name, mats[k].t, HISP_SOLVER_BICGSTAB, 0, 2, spmv);
            compound_row(B, R, A, name, mats[k].t, HISP_SOLVER_GMRES, o->restart,
                         1 + 1.0 / o->restart, spmv);
        } else {
            compound_row(B, R, A, name, mats[k].t, HISP_SOLVER_CG, 0, 1, spmv);
        }
        hisp_matrix_destroy(&A);
    }
}

/* ---- main ------------------------------------------------------------------ */

static int has_part(const char *list, const char *p)
{
    size_t n = strlen(p);
    for (const char *s = list; s && *s;) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (len == n && !strncmp(s, p, n)) return 1;
        s = e ? e + 1 : NULL;
    }
    return 0;
}

/* The distributed solvers' scaling over CUDA devices 0..k-1 (common_dist.c):
 * one matrix at a time, made once for every method and device count. */
static void part_dist(bench *B, bs_dist_rows *D)
{
    const options *o = B->o;
    int ndev = 0;
    cb_hk(B->ctx, hisp_backend_device_count(B->ctx, HISP_BACKEND_CUDA, &ndev), "device count");
    int most = 0;
    for (const char *s = o->dist_devices; s && *s;) {
        int k = atoi(s);
        most = k > most ? k : most;
        s = strchr(s, ',');
        if (s) s++;
    }
    if (most > ndev) {
        printf("dist: --dist-devices %s needs %d GPUs (%d here)\n", o->dist_devices, most, ndev);
        D->failed = 1;
        return;
    }
    bs_dist_opts dopt = {.backend = HISP_BACKEND_CUDA,
                         .plan_flags = 0,
                         .devices = o->dist_devices,
                         .methods = o->dist_methods,
                         .iters = o->iters,
                         .repeat = o->repeat};
    for (int m = 0; m < 2; m++) {
        const char *kind = m ? "rmat" : "poisson3d";
        if (!has_part(o->dist_matrices, kind)) continue;
        char name[40];
        hisp_matrix A = bs_dist_matrix(B->ctx, kind, o->dist_side, o->dist_scale, o->dist_ef, name,
                                       sizeof name);
        if (!A) {
            D->failed = 1;
            continue;
        }
        bs_dist_run(B->ctx, A, name, m ? BS_DIST_XTOL_GRAPH : BS_DIST_XTOL, &dopt, D);
        hisp_matrix_destroy(&A);
    }
}

static const char prog[] = "bench_solve_cuda";
static const char help[] =
    "usage: bench_solve_cuda [--parts cg,lsqr,krylov,compound,dist,selftest]\n"
    "           [--sizes 160,200]\n"
    "           [--iters 500] [--repeat 3] [--lsqr-rows 4000000]\n"
    "           [--lsqr-cols 1000000] [--lsqr-npr 10] [--lsqr-iters 200]\n"
    "           [--lsqr-scale 20 (the rmat stack: 4 graphs of 2^scale vertices)]\n"
    "           [--dist-matrices poisson3d,rmat] [--dist-side 560] [--dist-scale 26]\n"
    "           [--dist-edge-factor 16]\n"
    "           [--dist-devices 1,2,4 (1p: a plan over GPU 0)]\n"
    "           [--dist-methods cg,bicgstab] (part dist: the distributed solvers)\n"
    "           [--helmholtz 2000] [--qsurface 1414] [--krylov-iters 200]\n"
    "           [--restart 30] [--json FILE] [--summary FILE]\n"
    "The values shown are the defaults but for --parts (cg,lsqr,compound),\n"
    "--dist-matrices (poisson3d) and --dist-devices (1,2); --repeat is at most 64.\n"
    "The head of bench/bench_solve_cuda.c describes the parts. --help: this text.\n";

enum {
    O_PARTS,
    O_SIZES,
    O_ITERS,
    O_REPEAT,
    O_LSQR_ROWS,
    O_LSQR_SCALE,
    O_DIST_SIDE,
    O_DIST_DEVICES,
    O_DIST_METHODS,
    O_DIST_MATRICES,
    O_DIST_SCALE,
    O_DIST_EF,
    O_LSQR_COLS,
    O_LSQR_NPR,
    O_LSQR_ITERS,
    O_HELMHOLTZ,
    O_QSURFACE,
    O_KRYLOV_ITERS,
    O_RESTART,
    O_JSON,
    O_SUMMARY
};
static const opts_def opts[] = {{"--parts", true},
                                {"--sizes", true},
                                {"--iters", true},
                                {"--repeat", true},
                                {"--lsqr-rows", true},
                                {"--lsqr-scale", true},
                                {"--dist-side", true},
                                {"--dist-devices", true},
                                {"--dist-methods", true},
                                {"--dist-matrices", true},
                                {"--dist-scale", true},
                                {"--dist-edge-factor", true},
                                {"--lsqr-cols", true},
                                {"--lsqr-npr", true},
                                {"--lsqr-iters", true},
                                {"--helmholtz", true},
                                {"--qsurface", true},
                                {"--krylov-iters", true},
                                {"--restart", true},
                                {"--json", true},
                                {"--summary", true},
                                OPTS_HELP_DEFS,
                                {0, 0}};

/* The options' values into o (which holds the defaults): OPTS_OK,
 * OPTS_HELP_SHOWN, or an error (printed). */
static int parse(int argc, char **argv, options *o)
{
    const int64_t big = INT32_MAX;
    const char *val[sizeof opts / sizeof *opts] = {0};
    int rc = opts_parse(prog, argc, argv, opts, help, val, NULL);
    if (!rc) rc = opts_i64(prog, "--iters", val[O_ITERS], 1, big, &o->iters);
    if (!rc) rc = opts_int(prog, "--repeat", val[O_REPEAT], 1, 64, &o->repeat);
    if (!rc) rc = opts_i64(prog, "--lsqr-rows", val[O_LSQR_ROWS], 1, big, &o->lsqr_rows);
    if (!rc) rc = opts_int(prog, "--lsqr-scale", val[O_LSQR_SCALE], 1, 30, &o->lsqr_scale);
    if (!rc) rc = opts_i64(prog, "--dist-side", val[O_DIST_SIDE], 1, big, &o->dist_side);
    if (!rc) rc = opts_int(prog, "--dist-scale", val[O_DIST_SCALE], 1, 30, &o->dist_scale);
    if (!rc) rc = opts_int(prog, "--dist-edge-factor", val[O_DIST_EF], 1, 1 << 20, &o->dist_ef);
    if (!rc) rc = opts_i64(prog, "--lsqr-cols", val[O_LSQR_COLS], 1, big, &o->lsqr_cols);
    if (!rc) rc = opts_int(prog, "--lsqr-npr", val[O_LSQR_NPR], 1, 1 << 20, &o->npr);
    if (!rc) rc = opts_i64(prog, "--lsqr-iters", val[O_LSQR_ITERS], 1, big, &o->lsqr_iters);
    if (!rc) rc = opts_i64(prog, "--helmholtz", val[O_HELMHOLTZ], 1, big, &o->helm_n);
    if (!rc) rc = opts_i64(prog, "--qsurface", val[O_QSURFACE], 1, big, &o->qsurf_n);
    if (!rc) rc = opts_i64(prog, "--krylov-iters", val[O_KRYLOV_ITERS], 1, big, &o->kry_iters);
    if (!rc) rc = opts_int(prog, "--restart", val[O_RESTART], 1, 1 << 20, &o->restart);
    if (!rc && o->lsqr_cols < o->npr)
        rc = opts_value_error(prog, "--lsqr-cols %lld is below --lsqr-npr %d",
                              (long long)o->lsqr_cols, o->npr);
    if (val[O_PARTS]) o->parts = val[O_PARTS];
    for (const char *q = o->parts; !rc && q && *q;) { /* every part named must exist */
        static const char *const known[] = {"cg", "lsqr", "krylov", "compound", "dist", "selftest"};
        size_t len = strcspn(q, ",");
        bool ok = false;
        for (size_t k = 0; k < sizeof known / sizeof *known; k++)
            ok |= strlen(known[k]) == len && !strncmp(q, known[k], len);
        if (!ok)
            rc = opts_usage_error(prog,
                                  "--parts: unknown part '%.*s' (cg, lsqr, krylov, compound, "
                                  "dist, selftest)",
                                  (int)len, q);
        q = q[len] ? q + len + 1 : NULL;
    }
    if (val[O_SIZES]) o->sizes = val[O_SIZES];
    if (val[O_DIST_DEVICES]) o->dist_devices = val[O_DIST_DEVICES];
    if (val[O_DIST_METHODS]) o->dist_methods = val[O_DIST_METHODS];
    if (val[O_DIST_MATRICES]) o->dist_matrices = val[O_DIST_MATRICES];
    if (val[O_JSON]) o->json = val[O_JSON];
    if (val[O_SUMMARY]) o->summary = val[O_SUMMARY];
    return rc;
}

int main(int argc, char **argv)
{
    options o = {.parts = "cg,lsqr,compound",
                 .sizes = "160,200",
                 .iters = 500,
                 .lsqr_rows = 4000000,
                 .lsqr_cols = 1000000,
                 .lsqr_iters = 200,
                 .kry_iters = 200,
                 .helm_n = 2000,
                 .qsurf_n = 1414,
                 .lsqr_scale = 20,
                 .dist_side = 560,
                 .dist_scale = 26,
                 .dist_ef = 16,
                 .dist_devices = "1,2",
                 .dist_methods = "cg,bicgstab",
                 .dist_matrices = "poisson3d",
                 .repeat = 3,
                 .npr = 10,
                 .restart = 30};
    int rc = parse(argc, argv, &o);
    if (rc) return rc == OPTS_HELP_SHOWN ? 0 : 1;
    bench B;
    memset(&B, 0, sizeof B);
    B.o = &o;
    hisp_device_info info;
    if (cb_cuda_context(&B.ctx, &info)) return 3;
    char gpu[128];
    snprintf(gpu, sizeof gpu, "%.100s", info.name);
    cb_hk(B.ctx, hisp_copy_bandwidth(B.ctx, (size_t)1 << 30, 20, &B.bw), "copy bandwidth");
    int ver = cb_cusp_open(&B.C);
    CKB(cublasCreate(&B.bl));
    CKB(cublasSetStream(B.bl, B.C.stream));
    int bver = 0;
    CKB(cublasGetVersion(B.bl, &bver));
    printf("%s, cuSPARSE %d.%d.%d, cuBLAS %d, copy bandwidth %.0f GB/s (read + write)\n", gpu,
           ver / 1000, (ver % 1000) / 100, ver % 100, bver, B.bw * 1e-9);
    fflush(stdout);
    rows R;
    memset(&R, 0, sizeof R);
    static const struct {
        const char *name;
        void (*run)(bench *, rows *, int64_t);
    } sized[2] = {{"cg", part_cg}, {"krylov", part_krylov}};
    for (int p = 0; p < 2; p++)
        for (const char *s = has_part(o.parts, sized[p].name) ? o.sizes : NULL; s && *s;) {
            int64_t side = atoll(s);
            if (side > 0) sized[p].run(&B, &R, side);
            s = strchr(s, ',');
            if (s) s++;
        }
    if (has_part(o.parts, "lsqr")) {
        part_lsqr(&B, &R, 0);
        part_lsqr(&B, &R, 1);
    }
    if (has_part(o.parts, "compound")) part_compound(&B, &R);
    static bs_dist_rows D;
    if (has_part(o.parts, "dist")) part_dist(&B, &D);
    if (has_part(o.parts, "selftest")) B.failed |= bs_dist_selftest(B.ctx, HISP_BACKEND_CUDA);
    B.failed |= D.failed;
    printf("\n");
    tables(stdout, &R, gpu, B.bw);
    bs_dist_tables(stdout, &D);
    FILE *f;
    if (o.summary && (f = bench_open_out(o.summary))) {
        tables(f, &R, gpu, B.bw);
        bs_dist_tables(f, &D);
        bench_close_out(f);
    }
    if (o.json && (f = bench_open_out(o.json))) {
        write_json(f, &R, &D, gpu, B.bw, &o);
        bench_close_out(f);
    }
    CKB(cublasDestroy(B.bl));
    cb_cusp_close(&B.C);
    hisp_context_destroy(&B.ctx);
    if (B.failed) printf("\nFAIL: a solve failed or hisp's solution differs from the expert's\n");
    return B.failed ? 2 : 0;
}
