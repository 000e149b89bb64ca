/* GPU benchmark of the HiSparse addition C = op(A) + op(B) (issue 5)
 * against cuSPARSE csrgeam2, on the generator suite with B made from A by
 * hisp_matrix_perturb (every entry moved by a rounded normal offset of std
 * sigma = 10, the HiSparse paper's setup).
 *
 * Options: --help (the help text below). Per matrix and precision, in one
 * process:
 *   cusparse-geam N        csrgeam2 nnz phase + compute (C's arrays allocated
 *                          once, outside the timing), alpha = beta = 1
 *   cusparse-geam-compute  the compute call alone
 *   cusparse-csc+geam T    csr2csc (cusparseCsr2cscEx2) of A and B, then
 *                          csrgeam2 (nnz + compute) of the CSC arrays read as
 *                          the CSR of A^T and B^T
 *   cusparse-geam T        the same csrgeam2 on inputs converted once
 *   cusparse-geam-alloc-wall N/T  what a csrgeam2 user waits for per call:
 *                          bufferSizeExt, buffer and C allocated, nnz phase,
 *                          compute, synchronize (wall clock; T on the
 *                          transposes converted once)
 *   hisp-<backend> N/T     hisp_matrix_add(op, A, op, B) of A and B in
 *                          HiSparse form (node size d, default 128): the
 *                          median of hisp_context_add_stats().device_ms
 *   hisp-<backend>-wall    the median wall time of the whole call
 * --no-cusparse and --ops N skip rows (quicker runs).
 * Times: CUDA events (device_ms for hisp), medians of `repeat` runs after
 * `warmup`. hisp's times are "n/a" when the add is refused
 * (HISP_ERR_UNSUPPORTED) or when its stats show that it ran on the host
 * (no launches): the device addition is not in this build.
 *
 * Checks: a host merge gives C = A + B (the union of the patterns: an exact
 * zero sum stays an entry) and its transpose; cuSPARSE's C and hisp's C
 * (converted to sorted CSR) must have the same pattern and values within a
 * relative tolerance (1e-5 f32, 1e-12 f64, against max(1, |ref|)); a
 * mismatch prints FAIL and the program exits with status 2.
 *
 * Byte model (GB/s, fraction of the device copy bandwidth measured by
 * hisp_copy_bandwidth): A and B read and C written as CSR with 32-bit row
 * pointers and indices. GFLOP/s: the additions done (common entries). The
 * CSV's nnz column holds nnz(C).
 */
#include "cuda_bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- host CSR with double values (references and downloaded results) ---- */

typedef struct {
    int64_t nrows, ncols, nnz;
    int64_t *rp;
    int32_t *ci;
    double *v;
} hcsr;

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of host memory (%zu bytes)\n", n);
        exit(3);
    }
    return p;
}

static void hcsr_alloc(hcsr *h, int64_t nrows, int64_t ncols, int64_t nnz)
{
    h->nrows = nrows;
    h->ncols = ncols;
    h->nnz = nnz;
    h->rp = xmalloc((size_t)(nrows + 1) * sizeof *h->rp);
    h->ci = xmalloc((size_t)nnz * sizeof *h->ci);
    h->v = xmalloc((size_t)nnz * sizeof *h->v);
}

static void hcsr_free(hcsr *h)
{
    free(h->rp);
    free(h->ci);
    free(h->v);
    memset(h, 0, sizeof *h);
}

/* C = A + B on the host: the union of the patterns, values summed. */
static void host_add(const cb_csr *A, const cb_csr *B, hcsr *C)
{
    int64_t n = A->nrows;
    int64_t *len = xmalloc((size_t)(n + 1) * sizeof *len);
#pragma omp parallel for schedule(dynamic, 4096)
    for (int64_t i = 0; i < n; i++) {
        int64_t p = A->rowptr[i], pe = A->rowptr[i + 1], q = B->rowptr[i], qe = B->rowptr[i + 1],
                k = 0;
        while (p < pe || q < qe) {
            int32_t ca = p < pe ? A->colind[p] : INT32_MAX, cb = q < qe ? B->colind[q] : INT32_MAX;
            p += ca <= cb;
            q += cb <= ca;
            k++;
        }
        len[i] = k;
    }
    int64_t nnz = 0;
    for (int64_t i = 0; i < n; i++)
        nnz += len[i];
    hcsr_alloc(C, n, A->ncols, nnz);
    C->rp[0] = 0;
    for (int64_t i = 0; i < n; i++)
        C->rp[i + 1] = C->rp[i] + len[i];
    free(len);
#pragma omp parallel for schedule(dynamic, 4096)
    for (int64_t i = 0; i < n; i++) {
        int64_t p = A->rowptr[i], pe = A->rowptr[i + 1], q = B->rowptr[i], qe = B->rowptr[i + 1],
                k = C->rp[i];
        while (p < pe || q < qe) {
            int32_t ca = p < pe ? A->colind[p] : INT32_MAX, cb = q < qe ? B->colind[q] : INT32_MAX;
            double v = 0;
            if (ca <= cb) v += cb_at(A->type, A->val, p++);
            if (cb <= ca) v += cb_at(B->type, B->val, q++);
            C->ci[k] = ca < cb ? ca : cb;
            C->v[k++] = v;
        }
    }
}

/* T = C^T (sorted: a counting sort by column). */
static void host_transpose(const hcsr *C, hcsr *T)
{
    hcsr_alloc(T, C->ncols, C->nrows, C->nnz);
    memset(T->rp, 0, (size_t)(C->ncols + 1) * sizeof *T->rp);
    for (int64_t k = 0; k < C->nnz; k++)
        T->rp[C->ci[k] + 1]++;
    for (int64_t j = 0; j < C->ncols; j++)
        T->rp[j + 1] += T->rp[j];
    int64_t *pos = xmalloc((size_t)(C->ncols + 1) * sizeof *pos);
    memcpy(pos, T->rp, (size_t)(C->ncols + 1) * sizeof *pos);
    for (int64_t i = 0; i < C->nrows; i++)
        for (int64_t k = C->rp[i]; k < C->rp[i + 1]; k++) {
            int64_t s = pos[C->ci[k]]++;
            T->ci[s] = (int32_t)i;
            T->v[s] = C->v[k];
        }
    free(pos);
}

/* Compares got with ref: the same pattern and values within tol * max(1,
 * |ref|). Returns the largest relative difference, or INFINITY (with the
 * first difference in why) when the patterns differ. */
static double compare(const hcsr *got, const hcsr *ref, double tol, char *why, size_t len)
{
    why[0] = 0;
    if (got->nrows != ref->nrows || got->ncols != ref->ncols || got->nnz != ref->nnz) {
        snprintf(why, len, "sizes %lld x %lld, %lld nnz; expected %lld x %lld, %lld nnz",
                 (long long)got->nrows, (long long)got->ncols, (long long)got->nnz,
                 (long long)ref->nrows, (long long)ref->ncols, (long long)ref->nnz);
        return INFINITY;
    }
    double worst = 0;
    for (int64_t i = 0; i < ref->nrows; i++) {
        if (got->rp[i + 1] != ref->rp[i + 1]) {
            snprintf(why, len, "row %lld ends at %lld, expected %lld", (long long)i,
                     (long long)got->rp[i + 1], (long long)ref->rp[i + 1]);
            return INFINITY;
        }
        for (int64_t k = ref->rp[i]; k < ref->rp[i + 1]; k++) {
            if (got->ci[k] != ref->ci[k]) {
                snprintf(why, len, "row %lld: column %d, expected %d", (long long)i, got->ci[k],
                         ref->ci[k]);
                return INFINITY;
            }
            double r = fabs(ref->v[k]), d = fabs(got->v[k] - ref->v[k]) / (r > 1 ? r : 1);
            if (!(d <= worst)) { /* NaN too */
                worst = isnan(d) ? INFINITY : d;
                if (!(d <= tol) && !why[0])
                    snprintf(why, len, "entry (%lld, %d): %.17g, expected %.17g", (long long)i,
                             ref->ci[k], got->v[k], ref->v[k]);
            }
        }
    }
    return worst;
}

/* A hisp matrix as sorted CSR with double values. */
static void hcsr_of_hisp(hisp_context ctx, hisp_matrix M, hcsr *h)
{
    hisp_matrix D = NULL;
    cb_hk(ctx, hisp_matrix_duplicate(M, HISP_FORMAT_CSR, &D), "C to CSR");
    hisp_matrix_info info;
    cb_hk(ctx, hisp_matrix_get_info(D, &info), "info");
    const int64_t *rp;
    const int32_t *ci;
    const void *v;
    cb_hk(ctx, hisp_matrix_host_arrays(D, &rp, NULL, &ci, &v), "host arrays");
    hcsr_alloc(h, info.nrows, info.ncols, info.nnz);
    memcpy(h->rp, rp, (size_t)(info.nrows + 1) * sizeof *rp);
    memcpy(h->ci, ci, (size_t)info.nnz * sizeof *ci);
    for (int64_t k = 0; k < info.nnz; k++)
        h->v[k] = cb_at(info.type, v, k);
    hisp_matrix_destroy(&D);
}

/* ---- cuSPARSE ------------------------------------------------------------------ */

typedef struct {
    int m, n, nnz;
    int *rp, *ci;
    void *v;
} dcsr;

static void dcsr_alloc(dcsr *d, int m, int n, int nnz, size_t es)
{
    d->m = m;
    d->n = n;
    d->nnz = nnz;
    CK(cudaMalloc((void **)&d->rp, (size_t)(m + 1) * sizeof(int)));
    CK(cudaMalloc((void **)&d->ci, (size_t)nnz * sizeof(int) + 4));
    CK(cudaMalloc(&d->v, (size_t)nnz * es + es));
}

static void dcsr_upload(const cb_csr *A, dcsr *d)
{
    size_t es = hisp_type_size(A->type);
    dcsr_alloc(d, (int)A->nrows, (int)A->ncols, (int)A->nnz, es);
    int *rp = xmalloc((size_t)(A->nrows + 1) * sizeof *rp);
    for (int64_t i = 0; i <= A->nrows; i++)
        rp[i] = (int)A->rowptr[i];
    CK(cudaMemcpy(d->rp, rp, (size_t)(A->nrows + 1) * sizeof *rp, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d->ci, A->colind, (size_t)A->nnz * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d->v, A->val, (size_t)A->nnz * es, cudaMemcpyHostToDevice));
    free(rp);
    /* pageable copies may still be in flight; cuSPARSE runs on a non-blocking stream */
    CK(cudaDeviceSynchronize());
}

static void dcsr_download(const dcsr *d, hisp_type t, hcsr *h)
{
    size_t es = hisp_type_size(t);
    hcsr_alloc(h, d->m, d->n, d->nnz);
    int *rp = xmalloc((size_t)(d->m + 1) * sizeof *rp);
    void *v = xmalloc((size_t)d->nnz * es);
    CK(cudaMemcpy(rp, d->rp, (size_t)(d->m + 1) * sizeof *rp, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(h->ci, d->ci, (size_t)d->nnz * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(v, d->v, (size_t)d->nnz * es, cudaMemcpyDeviceToHost));
    for (int64_t i = 0; i <= d->m; i++)
        h->rp[i] = rp[i];
    for (int64_t k = 0; k < d->nnz; k++)
        h->v[k] = cb_at(t, v, k);
    free(rp);
    free(v);
}

static void dcsr_free(dcsr *d)
{
    if (d->rp) CK(cudaFree(d->rp));
    if (d->ci) CK(cudaFree(d->ci));
    if (d->v) CK(cudaFree(d->v));
    memset(d, 0, sizeof *d);
}

/* csrgeam2 of A and B (same sizes) into C, alpha = beta = 1. */
typedef struct {
    cb_cusp *cu;
    hisp_type t;
    cusparseMatDescr_t desc;
    const dcsr *A, *B;
    dcsr C;
    void *buf;
} geam;

static void geam_setup(geam *g, cb_cusp *cu, hisp_type t, const dcsr *A, const dcsr *B)
{
    memset(g, 0, sizeof *g);
    g->cu = cu;
    g->t = t;
    g->A = A;
    g->B = B;
    CKS(cusparseCreateMatDescr(&g->desc));
    CKS(cusparseSetMatType(g->desc, CUSPARSE_MATRIX_TYPE_GENERAL));
    CKS(cusparseSetMatIndexBase(g->desc, CUSPARSE_INDEX_BASE_ZERO));
    g->C.m = A->m;
    g->C.n = A->n;
    CK(cudaMalloc((void **)&g->C.rp, (size_t)(A->m + 1) * sizeof(int)));
    size_t bs = 0;
    double one = 1;
    float fone = 1;
    if (t == HISP_F32)
        CKS(cusparseScsrgeam2_bufferSizeExt(cu->h, A->m, A->n, &fone, g->desc, A->nnz, A->v, A->rp,
                                            A->ci, &fone, g->desc, B->nnz, B->v, B->rp, B->ci,
                                            g->desc, NULL, g->C.rp, NULL, &bs));
    else
        CKS(cusparseDcsrgeam2_bufferSizeExt(cu->h, A->m, A->n, &one, g->desc, A->nnz, A->v, A->rp,
                                            A->ci, &one, g->desc, B->nnz, B->v, B->rp, B->ci,
                                            g->desc, NULL, g->C.rp, NULL, &bs));
    CK(cudaMalloc(&g->buf, bs ? bs : 1));
}

/* The nnz phase (C's row pointers; the count comes back to the host). */
static int geam_nnz(geam *g)
{
    int nnz = -1;
    CKS(cusparseXcsrgeam2Nnz(g->cu->h, g->A->m, g->A->n, g->desc, g->A->nnz, g->A->rp, g->A->ci,
                             g->desc, g->B->nnz, g->B->rp, g->B->ci, g->desc, g->C.rp, &nnz,
                             g->buf));
    return nnz;
}

static void geam_compute(geam *g)
{
    const dcsr *A = g->A, *B = g->B;
    double one = 1;
    float fone = 1;
    if (g->t == HISP_F32)
        CKS(cusparseScsrgeam2(g->cu->h, A->m, A->n, &fone, g->desc, A->nnz, A->v, A->rp, A->ci,
                              &fone, g->desc, B->nnz, B->v, B->rp, B->ci, g->desc, g->C.v, g->C.rp,
                              g->C.ci, g->buf));
    else
        CKS(cusparseDcsrgeam2(g->cu->h, A->m, A->n, &one, g->desc, A->nnz, A->v, A->rp, A->ci, &one,
                              g->desc, B->nnz, B->v, B->rp, B->ci, g->desc, g->C.v, g->C.rp,
                              g->C.ci, g->buf));
}

/* The first nnz phase sizes C (allocated once, outside the timings). */
static void geam_first(geam *g)
{
    int nnz = geam_nnz(g);
    if (nnz < 0) {
        fprintf(stderr, "csrgeam2: no nnz count\n");
        exit(3);
    }
    g->C.nnz = nnz;
    size_t es = hisp_type_size(g->t);
    CK(cudaMalloc((void **)&g->C.ci, (size_t)nnz * sizeof(int) + 4));
    CK(cudaMalloc(&g->C.v, (size_t)nnz * es + es));
    geam_compute(g);
    CK(cudaStreamSynchronize(g->cu->stream));
}

static void geam_free(geam *g)
{
    dcsr_free(&g->C);
    if (g->buf) CK(cudaFree(g->buf));
    CKS(cusparseDestroyMatDescr(g->desc));
    memset(g, 0, sizeof *g);
}

/* CSR (m x n) to CSC = the CSR of the transpose, into T (allocated). */
typedef struct {
    cb_cusp *cu;
    hisp_type t;
    const dcsr *A;
    dcsr T;
    void *buf;
} csc_conv;

static void conv_setup(csc_conv *c, cb_cusp *cu, hisp_type t, const dcsr *A)
{
    memset(c, 0, sizeof *c);
    c->cu = cu;
    c->t = t;
    c->A = A;
    dcsr_alloc(&c->T, A->n, A->m, A->nnz, hisp_type_size(t));
    size_t bs = 0;
    CKS(cusparseCsr2cscEx2_bufferSize(cu->h, A->m, A->n, A->nnz, A->v, A->rp, A->ci, c->T.v,
                                      c->T.rp, c->T.ci, t == HISP_F32 ? CUDA_R_32F : CUDA_R_64F,
                                      CUSPARSE_ACTION_NUMERIC, CUSPARSE_INDEX_BASE_ZERO,
                                      CUSPARSE_CSR2CSC_ALG1, &bs));
    CK(cudaMalloc(&c->buf, bs ? bs : 1));
}

static void conv_run(csc_conv *c)
{
    const dcsr *A = c->A;
    CKS(cusparseCsr2cscEx2(c->cu->h, A->m, A->n, A->nnz, A->v, A->rp, A->ci, c->T.v, c->T.rp,
                           c->T.ci, c->t == HISP_F32 ? CUDA_R_32F : CUDA_R_64F,
                           CUSPARSE_ACTION_NUMERIC, CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1,
                           c->buf));
}

static void conv_free(csc_conv *c)
{
    dcsr_free(&c->T);
    if (c->buf) CK(cudaFree(c->buf));
    memset(c, 0, sizeof *c);
}

enum { T_ALL, T_COMPUTE, T_CONV_ALL };

/* One timed run: what = T_ALL (nnz + compute), T_COMPUTE, T_CONV_ALL
 * (conversions of both inputs + nnz + compute). */
static double geam_timed(geam *g, csc_conv *ca, csc_conv *cb, int what)
{
    cb_cusp *cu = g->cu;
    float f = 0;
    CK(cudaEventRecord(cu->e0, cu->stream));
    if (what == T_CONV_ALL) {
        conv_run(ca);
        conv_run(cb);
    }
    if (what != T_COMPUTE && geam_nnz(g) != g->C.nnz) {
        fprintf(stderr, "csrgeam2: the nnz count changed between runs\n");
        exit(3);
    }
    geam_compute(g);
    CK(cudaEventRecord(cu->e1, cu->stream));
    CK(cudaEventSynchronize(cu->e1));
    CK(cudaEventElapsedTime(&f, cu->e0, cu->e1));
    return f;
}

static void geam_series(geam *g, csc_conv *ca, csc_conv *cb, int what, int warmup, int repeat,
                        double *ms)
{
    for (int i = 0; i < warmup; i++)
        geam_timed(g, ca, cb, what);
    for (int i = 0; i < repeat; i++)
        ms[i] = geam_timed(g, ca, cb, what);
}

/* What a user of csrgeam2 waits for per call, C's allocation included:
 * bufferSizeExt, the work buffer and C's row pointers allocated, the nnz
 * phase (its count comes to the host), C's arrays allocated, compute, then a
 * synchronize; wall clock. C and the buffers are freed outside the timing. */
static double geam_alloc_wall(cb_cusp *cu, hisp_type t, const dcsr *A, const dcsr *B)
{
    CK(cudaDeviceSynchronize());
    double t0 = bench_now_ms();
    geam g;
    geam_setup(&g, cu, t, A, B); /* descriptor, rowptr of C, bufferSizeExt, buffer */
    int nnz = geam_nnz(&g);
    g.C.nnz = nnz;
    size_t es = hisp_type_size(t);
    CK(cudaMalloc((void **)&g.C.ci, (size_t)nnz * sizeof(int) + 4));
    CK(cudaMalloc(&g.C.v, (size_t)nnz * es + es));
    geam_compute(&g);
    CK(cudaStreamSynchronize(cu->stream));
    double w = bench_now_ms() - t0;
    geam_free(&g);
    return w;
}

static void geam_alloc_series(cb_cusp *cu, hisp_type t, const dcsr *A, const dcsr *B, int warmup,
                              int repeat, double *ms)
{
    for (int i = -warmup; i < repeat; i++) {
        double w = geam_alloc_wall(cu, t, A, B);
        if (i >= 0) ms[i] = w;
    }
}

/* ---- results ------------------------------------------------------------------- */

typedef struct {
    const cb_csr *A, *B;
    int64_t nnz_c;
    double copy_bw;
} add_case;

/* A result row with the addition's models: bytes = A, B read and C written
 * as CSR with 32-bit pointers; flops = the additions of common entries. */
static void add_row(bench_results *rs, const char *matrix, hisp_type t, const char *op,
                    const char *impl, const char *dev, const add_case *k, const double *ms, int rep,
                    double err)
{
    bench_result r;
    memset(&r, 0, sizeof r);
    snprintf(r.matrix, sizeof r.matrix, "%s", matrix);
    snprintf(r.precision, sizeof r.precision, "%s", hisp_type_name(t));
    snprintf(r.op, sizeof r.op, "%s", op);
    snprintf(r.impl, sizeof r.impl, "%s", impl);
    snprintf(r.device, sizeof r.device, "%s", dev);
    int T = op[0] == 'T';
    r.rows = T ? k->A->ncols : k->A->nrows;
    r.cols = T ? k->A->nrows : k->A->ncols;
    r.nnz = k->nnz_c;
    r.median_ms = bench_median(ms, rep);
    r.min_ms = bench_min(ms, rep);
    size_t es = hisp_type_size(t);
    double bytes = (double)(k->A->nnz + k->B->nnz + k->nnz_c) * (double)(4 + es) +
                   3.0 * (double)(r.rows + 1) * 4;
    double s = r.median_ms * 1e-3;
    r.gflops = s > 0 ? (double)(k->A->nnz + k->B->nnz - k->nnz_c) / s * 1e-9 : 0;
    r.gbs = s > 0 ? bytes / s * 1e-9 : 0;
    r.bw_fraction = k->copy_bw > 0 ? r.gbs * 1e9 / k->copy_bw : 0;
    r.rel_error = err;
    bench_results_add(rs, &r);
    printf("  %-4s %s %-24s %10.4f ms (min %.4f) %8.1f GB/s %5.1f%% of copy  err %.1e\n",
           r.precision, r.op, r.impl, r.median_ms, r.min_ms, r.gbs, 100 * r.bw_fraction,
           r.rel_error);
    fflush(stdout);
}

/* What hisp's addition did for one (matrix, precision, op). */
typedef struct {
    int measured;   /* device times available */
    char note[160]; /* why not, when not */
    hisp_add_stats st;
    double up_ms, down_ms; /* medians */
    int check;             /* 1 pass, 0 fail, -1 not checked */
} hs_add;

typedef struct {
    char matrix[48], precision[8];
    int64_t nnz_a, nnz_b, nnz_c;
    hs_add hs[2];   /* N, T */
    int geam_ok[2]; /* csrgeam2 result checks */
} case_info;

static const char *fmt_ms(double v, char *s, size_t n)
{
    if (isnan(v))
        snprintf(s, n, "n/a");
    else
        snprintf(s, n, "%.4f", v);
    return s;
}

static const char *fmt_x(double v, char *s, size_t n)
{
    if (isnan(v) || isinf(v))
        snprintf(s, n, "n/a");
    else
        snprintf(s, n, "%.2f", v);
    return s;
}

static void summary(FILE *f, const bench_results *rs, const case_info *ci, int nci,
                    const char *hs_impl)
{
    char wall_impl[64];
    snprintf(wall_impl, sizeof wall_impl, "%s-wall", hs_impl);
    fprintf(f,
            "| matrix | prec | nnz A | nnz B | nnz C | csrgeam2 N ms (nnz+compute) | compute "
            "only | hisp N ms (device) | hisp N wall ms | **csrgeam2 / hisp** | csr2csc+csrgeam2 "
            "T ms | csrgeam2 T ms (converted) | hisp T ms (device) | hisp T wall ms | **hisp "
            "T / N** | csrgeam2 N GB/s (of copy) | hisp N GB/s (of copy) | nodes new | bytes "
            "new | bytes reserved | subtrees shared | pool retries | rounds | launches | check "
            "|\n");
    fprintf(f, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
               "--:|--:|--:|--:|---|\n");
    double lg = 0, lgt = 0;
    int ng = 0, ngt = 0;
    for (int i = 0; i < nci; i++) {
        const case_info *c = &ci[i];
        const char *m = c->matrix, *p = c->precision;
        const bench_result *gn = cb_find(rs, m, p, "N", "cusparse-geam"),
                           *hn = cb_find(rs, m, p, "N", hs_impl);
        double g = cb_med(gn), gc = cb_med(cb_find(rs, m, p, "N", "cusparse-geam-compute")),
               gtc = cb_med(cb_find(rs, m, p, "T", "cusparse-csc+geam")),
               gt = cb_med(cb_find(rs, m, p, "T", "cusparse-geam")), hdn = cb_med(hn),
               hwn = cb_med(cb_find(rs, m, p, "N", wall_impl)),
               hdt = cb_med(cb_find(rs, m, p, "T", hs_impl)),
               hwt = cb_med(cb_find(rs, m, p, "T", wall_impl));
        if (g > 0 && hdn > 0) {
            lg += log(g / hdn);
            ng++;
        }
        if (hdt > 0 && hdn > 0) {
            lgt += log(hdt / hdn);
            ngt++;
        }
        const hisp_add_stats *st = &c->hs[0].st;
        char s[16][32];
        const char *check =
            (c->hs[0].check == 0 || c->hs[1].check == 0 || !c->geam_ok[0] || !c->geam_ok[1])
                ? "**FAIL**"
            : c->hs[0].check == 1 ? "PASS"
                                  : "PASS (cuSPARSE only)";
        char gbs_g[48] = "n/a", gbs_h[48] = "n/a";
        if (gn) snprintf(gbs_g, sizeof gbs_g, "%.0f (%.0f%%)", gn->gbs, 100 * gn->bw_fraction);
        if (hn) snprintf(gbs_h, sizeof gbs_h, "%.0f (%.0f%%)", hn->gbs, 100 * hn->bw_fraction);
        int have = c->hs[0].measured;
        fprintf(f,
                "| %s | %s | %lld | %lld | %lld | %s | %s | %s | %s | **%s** | %s | %s | %s | %s "
                "| **%s** | %s | %s | ",
                m, p, (long long)c->nnz_a, (long long)c->nnz_b, (long long)c->nnz_c,
                fmt_ms(g, s[0], 32), fmt_ms(gc, s[1], 32), fmt_ms(hdn, s[2], 32),
                fmt_ms(hwn, s[3], 32), fmt_x(g / hdn, s[4], 32), fmt_ms(gtc, s[5], 32),
                fmt_ms(gt, s[6], 32), fmt_ms(hdt, s[7], 32), fmt_ms(hwt, s[8], 32),
                fmt_x(hdt / hdn, s[9], 32), gbs_g, gbs_h);
        if (have)
            fprintf(f, "%lld | %llu | %llu | %lld | %d | %d | %d | %s |\n",
                    (long long)st->nodes_new, (unsigned long long)st->bytes_new,
                    (unsigned long long)st->bytes_reserved, (long long)st->subtrees_shared,
                    st->pool_retries, st->rounds, st->launches, check);
        else
            fprintf(f, "n/a | n/a | n/a | n/a | n/a | n/a | n/a | %s |\n", check);
    }
    char a[32], b[32];
    fprintf(f,
            "\ngeometric means: csrgeam2 / hisp (A+B) %s over %d case(s); hisp (A^T+B^T) / hisp "
            "(A+B) %s over %d\n",
            fmt_x(ng ? exp(lg / ng) : NAN, a, sizeof a), ng,
            fmt_x(ngt ? exp(lgt / ngt) : NAN, b, sizeof b), ngt);
    /* as the user waits: wall clock per call with a synchronize, csrgeam2 with C's allocation */
    fprintf(f, "\n| matrix | prec | csrgeam2+alloc N wall ms | hisp N wall ms | hisp N device ms | "
               "**csrgeam2 / hisp N** | csrgeam2+alloc T wall ms | hisp T wall ms | hisp T device "
               "ms | **csrgeam2 / hisp T** |\n|---|---|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    double lw[2] = {0, 0};
    int nw[2] = {0, 0}, slower[2] = {0, 0};
    for (int i = 0; i < nci; i++) {
        const char *m = ci[i].matrix, *p = ci[i].precision;
        char s[8][32];
        fprintf(f, "| %s | %s |", m, p);
        for (int o = 0; o < 2; o++) {
            const char *op = o ? "T" : "N";
            double g = cb_med(cb_find(rs, m, p, op, "cusparse-geam-alloc-wall")),
                   h = cb_med(cb_find(rs, m, p, op, wall_impl)),
                   hd = cb_med(cb_find(rs, m, p, op, hs_impl));
            if (g > 0 && h > 0) {
                lw[o] += log(g / h);
                nw[o]++;
                slower[o] += g < h;
            }
            fprintf(f, " %s | %s | %s | **%s** |", fmt_ms(g, s[4 * o], 32),
                    fmt_ms(h, s[4 * o + 1], 32), fmt_ms(hd, s[4 * o + 2], 32),
                    fmt_x(g / h, s[4 * o + 3], 32));
        }
        fprintf(f, "\n");
    }
    fprintf(f,
            "\nwall-clock geometric means (csrgeam2 with C's allocation / hisp): A+B %s over %d "
            "case(s), %d slower; A^T+B^T %s over %d, %d slower\n",
            fmt_x(nw[0] ? exp(lw[0] / nw[0]) : NAN, a, sizeof a), nw[0], slower[0],
            fmt_x(nw[1] ? exp(lw[1] / nw[1]) : NAN, b, sizeof b), nw[1], slower[1]);
    for (int i = 0; i < nci; i++)
        for (int o = 0; o < 2; o++)
            if (!ci[i].hs[o].measured && ci[i].hs[o].note[0])
                fprintf(f, "%s %s %s: hisp n/a: %s\n", ci[i].matrix, ci[i].precision, o ? "T" : "N",
                        ci[i].hs[o].note);
}

/* ---- hisp ---------------------------------------------------------------------- */

/* hisp_matrix_add(op, A, op, B) repeated; fills the device and wall times
 * (NAN when the add did not run on the device) and checks C against ref. */
static void hisp_add_series(hisp_context ctx, hisp_op op, hisp_matrix HA, hisp_matrix HB,
                            hisp_type t, const hcsr *ref, int warmup, int repeat, double *dev,
                            double *wall, hs_add *h)
{
    memset(h, 0, sizeof *h);
    h->check = -1;
    hisp_matrix C = NULL;
    double t0 = bench_now_ms();
    hisp_status s = hisp_matrix_add(op, HA, op, HB, &C);
    double first_ms = bench_now_ms() - t0;
    if (s == HISP_ERR_UNSUPPORTED) {
        hisp_error_info e = {0};
        if (hisp_context_last_error(ctx, &e)) {
        }
        snprintf(h->note, sizeof h->note, "hisp_matrix_add: %.120s", e.message ? e.message : "");
        return;
    }
    cb_hk(ctx, s, "hisp_matrix_add");
    hisp_status ss = hisp_context_add_stats(ctx, &h->st);
    if (ss != HISP_SUCCESS)
        snprintf(h->note, sizeof h->note, "hisp_context_add_stats: %s", hisp_status_string(ss));
    else if (h->st.launches == 0 && h->st.device_ms == 0)
        snprintf(h->note, sizeof h->note, "the addition ran on the host (%.0f ms)", first_ms);
    else
        h->measured = 1;
    /* the result is checked whatever ran it */
    hcsr got;
    hcsr_of_hisp(ctx, C, &got);
    char why[256];
    double err = compare(&got, ref, t == HISP_F32 ? 1e-5 : 1e-12, why, sizeof why);
    h->check = err <= (t == HISP_F32 ? 1e-5 : 1e-12);
    printf("  %-4s %s hisp C against the host reference: %s (max rel. diff %.1e)%s%s\n",
           hisp_type_name(t), op ? "T" : "N", h->check ? "PASS" : "FAIL", err, why[0] ? ": " : "",
           why);
    hcsr_free(&got);
    hisp_matrix_destroy(&C);
    if (h->measured && h->st.nnz != ref->nnz)
        printf("  warning: hisp_context_add_stats says nnz %lld, C has %lld\n",
               (long long)h->st.nnz, (long long)ref->nnz);
    if (!h->measured) {
        printf("  %-4s %s hisp: n/a (%s)\n", hisp_type_name(t), op ? "T" : "N", h->note);
        return;
    }
    double *up = xmalloc((size_t)repeat * sizeof *up), *down = xmalloc((size_t)repeat * sizeof *up);
    for (int i = -warmup; i < repeat; i++) {
        t0 = bench_now_ms();
        cb_hk(ctx, hisp_matrix_add(op, HA, op, HB, &C), "hisp_matrix_add");
        cb_hk(ctx, hisp_context_synchronize(ctx), "synchronize");
        double w = bench_now_ms() - t0;
        cb_hk(ctx, hisp_context_add_stats(ctx, &h->st), "add stats");
        hisp_matrix_destroy(&C);
        if (i < 0) continue;
        wall[i] = w;
        dev[i] = h->st.device_ms;
        up[i] = h->st.upload_ms;
        down[i] = h->st.download_ms;
    }
    h->up_ms = bench_median(up, repeat);
    h->down_ms = bench_median(down, repeat);
    free(up);
    free(down);
    const hisp_add_stats *st = &h->st;
    printf(
        "       (nnz %lld, nodes new %lld, bytes new %llu, reserved %llu, subtrees shared %lld, "
        "copied %lld, pool retries %d, zero-sum redos %d, rounds %d, launches %d, upload %.3f ms, "
        "download %.3f ms)\n",
        (long long)st->nnz, (long long)st->nodes_new, (unsigned long long)st->bytes_new,
        (unsigned long long)st->bytes_reserved, (long long)st->subtrees_shared,
        (long long)st->subtrees_copied, st->pool_retries, st->zero_retries, st->rounds,
        st->launches, h->up_ms, h->down_ms);
}

/* ---- main ---------------------------------------------------------------------- */

static const char prog[] = "bench_add_cuda";
// clang-format off
static const char help[] =
    "usage: bench_add_cuda [--scale gpu|medium|small] [--quick] [--matrices a,b]\n"
    "           [--precision f64|f32|both] [--repeat N] [--warmup N] [--node-size d]\n"
    "           [--sigma s] [--backend cuda|opencl|reference] [--csv FILE]\n"
    "           [--md FILE] [--summary FILE] [--no-cusparse] [--ops N|T|both]\n"
    "The HiSparse addition C = op(A) + op(B), B = hisp_matrix_perturb(A, sigma),\n"
    "against cuSPARSE csrgeam2 on the generator suite (the head of\n"
    "bench/bench_add_cuda.c lists the rows); every C is checked against a host\n"
    "merge (exit status 2 on a mismatch).\n"
    "\n"
    BENCH_SUITE_HELP("gpu", "30", "3")
    "  --quick              the small suite, 5 runs after 1 warm-up\n"
    "  --node-size d        HiSparse node size (default 128)\n"
    "  --sigma s            std of B's offsets (default 10)\n"
    "  --backend B          hisp's backend: cuda, opencl or reference (default cuda)\n"
    "  --ops N|T|both       which ops (default both)\n"
    "  --no-cusparse        skip the cuSPARSE rows\n"
    "  --csv FILE           the results as CSV (bench/README.md)\n"
    "  --md FILE            the markdown table\n"
    "  --summary FILE       the summary table\n"
    "  --help               this text\n";
// clang-format on

enum {
    O_QUICK = BENCH_O_NEXT,
    O_NODE,
    O_SIGMA,
    O_BACKEND,
    O_OPS,
    O_NO_CUSPARSE,
    O_CSV,
    O_MD,
    O_SUMMARY
};
static const opts_def opts[] = {
    BENCH_SUITE_OPTS,    {"--quick", false},  {"--node-size", true},    {"--sigma", true},
    {"--backend", true}, {"--ops", true},     {"--no-cusparse", false}, {"--csv", true},
    {"--md", true},      {"--summary", true}, OPTS_HELP_DEFS,           {0, 0}};

int main(int argc, char **argv)
{
    static const char *const op_names[] = {"N", "T", "both", NULL};
    bench_suite_opts so = {BENCH_SCALE_GPU, NULL, true, true, 30, 3};
    int d = HISP_HISPARSE_DEFAULT_NODE_SIZE, op_choice = 2;
    double sigma = 10;
    hisp_backend_kind bk = HISP_BACKEND_CUDA;
    const char *val[sizeof opts / sizeof *opts] = {0};
    int rc = bench_suite_parse(prog, argc, argv, opts, help, val, &so);
    if (!rc) rc = opts_int(prog, "--node-size", val[O_NODE], 4, 256, &d);
    if (!rc) rc = opts_double(prog, "--sigma", val[O_SIGMA], 0, 1e300, &sigma);
    if (!rc) rc = bench_backend_arg(prog, val[O_BACKEND], &bk);
    if (!rc) rc = opts_choice(prog, "--ops", val[O_OPS], op_names, &op_choice);
    if (rc) return rc == OPTS_HELP_SHOWN ? 0 : 1;
    if (val[O_QUICK]) {
        so.scale = BENCH_SCALE_SMALL;
        so.repeat = 5;
        so.warmup = 1;
    }
    int repeat = so.repeat, warmup = so.warmup, use_cusparse = !val[O_NO_CUSPARSE];
    int ops = op_choice + 1; /* bit 0: N, bit 1: T */
    const char *csv = val[O_CSV], *md = val[O_MD], *sum = val[O_SUMMARY];
    bench_matrix_def defs[BENCH_SUITE_MAX];
    int nm = bench_suite_select(&so, defs);
    if (nm < 0) return 1;

    hisp_context ctx = NULL;
    if (hisp_context_create(&ctx)) return 3;
    int ncuda = 0;
    if (hisp_backend_device_count(ctx, HISP_BACKEND_CUDA, &ncuda) != HISP_SUCCESS) ncuda = 0;
    if (ncuda == 0 && bk == HISP_BACKEND_CUDA) {
        printf("no CUDA device: nothing to measure\n");
        hisp_context_destroy(&ctx);
        return 0;
    }
    char gpu[128] = "", hs_dev[128] = "", hs_impl[48], wall_impl[64];
    int hs_index = 0;
    double bw = 0;
    cb_cusp C = {0};
    if (ncuda > 0) {
        hisp_device_info info;
        cb_hk(ctx, hisp_backend_device_info(ctx, HISP_BACKEND_CUDA, 0, &info), "device info");
        snprintf(gpu, sizeof gpu, "%.100s", info.name);
        printf("CUDA device 0: %s, %s, %d SMs\n", info.name, info.platform, info.compute_units);
        cb_hk(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_CUDA, 0), "set cuda");
        cb_hk(ctx, hisp_copy_bandwidth(ctx, (size_t)1 << 30, 20, &bw), "copy bandwidth");
        cb_hk(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_REFERENCE, 0), "set ref");
        (void)cb_cusp_open(&C);
        printf("copy bandwidth (read+write): %.0f GB/s\n", bw * 1e-9);
    } else {
        printf("no CUDA device: cuSPARSE skipped, hisp only\n");
    }
    if (bk == HISP_BACKEND_CUDA) {
        snprintf(hs_dev, sizeof hs_dev, "%s", gpu);
    } else if (bk == HISP_BACKEND_OPENCL) {
        hs_index = cb_find_opencl(ctx, 1, hs_dev, sizeof hs_dev);
        if (hs_index < 0) hs_index = cb_find_opencl(ctx, 0, hs_dev, sizeof hs_dev);
        if (hs_index < 0) {
            fprintf(stderr, "no OpenCL device\n");
            return 3;
        }
    } else {
        snprintf(hs_dev, sizeof hs_dev, "host (reference backend)");
    }
    snprintf(hs_impl, sizeof hs_impl, "hisp-%s", hisp_backend_name(bk));
    snprintf(wall_impl, sizeof wall_impl, "%s-wall", hs_impl);
    printf("hisp side: %s backend on %s; node size %d; B = perturb(A, sigma %g)\n",
           hisp_backend_name(bk), hs_dev, d, sigma);

    bench_results rs = {0};
    case_info ci[2 * BENCH_SUITE_MAX];
    int nci = 0, failed = 0;
    double *ms = xmalloc((size_t)repeat * sizeof *ms), *ms2 = xmalloc((size_t)repeat * sizeof *ms);
    for (int mi = 0; mi < nm; mi++)
        for (int ti = 0; ti < 2; ti++) {
            hisp_type t = ti == 0 ? HISP_F64 : HISP_F32;
            if (!bench_suite_has_type(&so, t)) continue;
            const char *name = defs[mi].name;
            double t0 = bench_now_ms();
            cb_case cs;
            cb_case_make(ctx, &defs[mi], t, 977 + (uint64_t)mi, &cs);
            const cb_csr A = cs.A;
            hisp_matrix MB = NULL;
            cb_hk(ctx, hisp_matrix_perturb(cs.P.M, sigma, 1234 + (uint64_t)mi, &MB), "perturb");
            hisp_matrix_info ib;
            cb_hk(ctx, hisp_matrix_get_info(MB, &ib), "info");
            cb_csr B = {t, ib.nrows, ib.ncols, ib.nnz, NULL, NULL, NULL};
            cb_hk(ctx, hisp_matrix_host_arrays(MB, &B.rowptr, NULL, &B.colind, &B.val), "arrays");
            hcsr ref_n, ref_t;
            host_add(&A, &B, &ref_n);
            host_transpose(&ref_n, &ref_t);
            case_info *c = &ci[nci++];
            memset(c, 0, sizeof *c);
            snprintf(c->matrix, sizeof c->matrix, "%.47s", name);
            snprintf(c->precision, sizeof c->precision, "%s", hisp_type_name(t));
            c->nnz_a = A.nnz;
            c->nnz_b = B.nnz;
            c->nnz_c = ref_n.nnz;
            c->geam_ok[0] = c->geam_ok[1] = 1;
            add_case k = {&A, &B, ref_n.nnz, bw};
            printf("%s %s: %lld x %lld, nnz A %lld, B %lld, C %lld; inputs ready after %.1f s\n",
                   name, hisp_type_name(t), (long long)A.nrows, (long long)A.ncols,
                   (long long)A.nnz, (long long)B.nnz, (long long)ref_n.nnz,
                   (bench_now_ms() - t0) * 1e-3);
            fflush(stdout);
            double tol = t == HISP_F32 ? 1e-5 : 1e-12;
            char why[256];

            /* cuSPARSE */
            if (C.ok && use_cusparse && ref_n.nnz < INT32_MAX) {
                dcsr dA = {0}, dB = {0};
                dcsr_upload(&A, &dA);
                dcsr_upload(&B, &dB);
                geam g;
                geam_setup(&g, &C, t, &dA, &dB);
                geam_first(&g);
                hcsr got;
                dcsr_download(&g.C, t, &got);
                double e = compare(&got, &ref_n, tol, why, sizeof why);
                hcsr_free(&got);
                c->geam_ok[0] = e <= tol;
                printf("  %-4s N csrgeam2 C against the host reference: %s%s%s\n",
                       hisp_type_name(t), c->geam_ok[0] ? "PASS" : "FAIL", why[0] ? ": " : "", why);
                geam_series(&g, NULL, NULL, T_ALL, warmup, repeat, ms);
                add_row(&rs, name, t, "N", "cusparse-geam", gpu, &k, ms, repeat, e);
                geam_series(&g, NULL, NULL, T_COMPUTE, warmup, repeat, ms);
                add_row(&rs, name, t, "N", "cusparse-geam-compute", gpu, &k, ms, repeat, e);
                geam_free(&g);
                geam_alloc_series(&C, t, &dA, &dB, warmup, repeat, ms);
                add_row(&rs, name, t, "N", "cusparse-geam-alloc-wall", gpu, &k, ms, repeat, e);
                /* transposes: csr2csc of both, csrgeam2 of the CSC arrays as CSR of A^T, B^T */
                csc_conv ca, cb;
                conv_setup(&ca, &C, t, &dA);
                conv_setup(&cb, &C, t, &dB);
                conv_run(&ca);
                conv_run(&cb);
                geam_setup(&g, &C, t, &ca.T, &cb.T);
                geam_first(&g);
                dcsr_download(&g.C, t, &got);
                e = compare(&got, &ref_t, tol, why, sizeof why);
                hcsr_free(&got);
                c->geam_ok[1] = e <= tol;
                printf("  %-4s T csr2csc + csrgeam2 C against the host reference: %s%s%s\n",
                       hisp_type_name(t), c->geam_ok[1] ? "PASS" : "FAIL", why[0] ? ": " : "", why);
                geam_series(&g, &ca, &cb, T_CONV_ALL, warmup, repeat, ms);
                add_row(&rs, name, t, "T", "cusparse-csc+geam", gpu, &k, ms, repeat, e);
                geam_series(&g, NULL, NULL, T_ALL, warmup, repeat, ms);
                add_row(&rs, name, t, "T", "cusparse-geam", gpu, &k, ms, repeat, e);
                geam_series(&g, NULL, NULL, T_COMPUTE, warmup, repeat, ms);
                add_row(&rs, name, t, "T", "cusparse-geam-compute", gpu, &k, ms, repeat, e);
                geam_free(&g);
                /* A^T + B^T as a user waits: both transposes exist already (converted
                 * once, above), csrgeam2 with C's allocation */
                geam_alloc_series(&C, t, &ca.T, &cb.T, warmup, repeat, ms);
                add_row(&rs, name, t, "T", "cusparse-geam-alloc-wall", gpu, &k, ms, repeat, e);
                conv_free(&ca);
                conv_free(&cb);
                dcsr_free(&dA);
                dcsr_free(&dB);
            } else if (C.ok && use_cusparse) {
                printf("  cuSPARSE skipped: nnz(C) does not fit 32-bit indices\n");
            }

            /* hisp: A and B in HiSparse form on the chosen backend */
            hisp_matrix HA = NULL, HB = NULL;
            double t1 = bench_now_ms();
            cb_hk(ctx, hisp_matrix_set_node_size(cs.P.M, d), "node size");
            cb_hk(ctx, hisp_matrix_set_node_size(MB, d), "node size");
            cb_hk(ctx, hisp_matrix_duplicate(cs.P.M, HISP_FORMAT_HISPARSE, &HA), "A to HiSparse");
            cb_hk(ctx, hisp_matrix_duplicate(MB, HISP_FORMAT_HISPARSE, &HB), "B to HiSparse");
            printf("  HiSparse A and B (d = %d) built on the host in %.0f ms\n", d,
                   bench_now_ms() - t1);
            cb_hk(ctx, hisp_context_set_backend(ctx, bk, bk == HISP_BACKEND_OPENCL ? hs_index : 0),
                  "set backend");
            for (int op = 0; op < 2; op++) {
                hs_add *h = &c->hs[op];
                if (!(ops >> op & 1)) {
                    h->check = -1; /* not run */
                    continue;
                }
                hisp_add_series(ctx, (hisp_op)op, HA, HB, t, op ? &ref_t : &ref_n, warmup, repeat,
                                ms, ms2, h);
                if (h->check == 0) failed = 1;
                if (!h->measured) continue;
                double e = 0; /* checked above: the same call gives the same C */
                add_row(&rs, name, t, op ? "T" : "N", hs_impl, hs_dev, &k, ms, repeat, e);
                add_row(&rs, name, t, op ? "T" : "N", wall_impl, hs_dev, &k, ms2, repeat, e);
            }
            if (!c->geam_ok[0] || !c->geam_ok[1]) failed = 1;
            printf("  %s %s: %s\n", name, hisp_type_name(t),
                   (c->hs[0].check == 0 || c->hs[1].check == 0 || !c->geam_ok[0] || !c->geam_ok[1])
                       ? "FAIL"
                       : "PASS");
            cb_hk(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_REFERENCE, 0), "set ref");
            hisp_matrix_destroy(&HA);
            hisp_matrix_destroy(&HB);
            hisp_matrix_destroy(&MB);
            hcsr_free(&ref_n);
            hcsr_free(&ref_t);
            cb_case_free(&cs);
        }
    free(ms);
    free(ms2);
    printf("\ncopy bandwidth %.0f GB/s; byte model: A, B read and C written as CSR (32-bit "
           "pointers)\n\n",
           bw * 1e-9);
    bench_print_table(stdout, &rs, NULL);
    printf("\n");
    summary(stdout, &rs, ci, nci, hs_impl);
    FILE *f;
    if (csv && (f = bench_open_out(csv))) {
        bench_write_csv(f, &rs, 1);
        bench_close_out(f);
    }
    if (md && (f = bench_open_out(md))) {
        summary(f, &rs, ci, nci, hs_impl);
        fprintf(f, "\n");
        bench_print_table(f, &rs, NULL);
        bench_close_out(f);
    }
    if (sum && (f = bench_open_out(sum))) {
        summary(f, &rs, ci, nci, hs_impl);
        bench_close_out(f);
    }
    bench_results_free(&rs);
    cb_cusp_close(&C);
    hisp_context_destroy(&ctx);
    if (failed) printf("\nFAIL: a result differs from the reference\n");
    return failed ? 2 : 0;
}
