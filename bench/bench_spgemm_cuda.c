/* SpGEMM on one GPU: hisp_matrix_multiply (the CUDA backend) against
 * cuSPARSE's generic SpGEMM, ALG1, ALG2 and ALG3, in one process.
 *
 * Items (--items, comma-separated): FILE.mtx (C = A*A), aat:FILE.mtx
 * (C = A*A^T) and ptap:P.mtx:A.mtx (C = P^T*A*P). Per item and algorithm:
 *   hisp          median wall ms of hisp_matrix_multiply (hisp_matrix_ptap)
 *                 with a synchronize, C a new matrix (kept on the device),
 *                 the operands cuSPARSE's device arrays wrapped
 *                 (hisp_matrix_wrap_csr_device over a 64-bit copy of the
 *                 row pointers; A^T formed as for cuSPARSE; ptap's P
 *                 too, its transpose made by hisp), with the device ms and peak device bytes of
 *                 hisp_context_spgemm_stats (the last product's); the same
 *                 with host CSR operands (their upload in the call; op T for
 *                 A*A^T); the plan's numeric re-computation (made from the
 *                 host operands, executed with the device ones; not for
 *                 ptap)
 *   cusparse-algK median wall ms of what a cuSPARSE user runs per product,
 *                 as CuPy calls it: descriptors, workEstimation (size query,
 *                 buffer, call), for ALG2/ALG3 estimateMemory (chunk
 *                 fraction 0.2 for ALG3), compute (size query, buffer,
 *                 call), C's arrays allocated, copy, synchronize, all freed;
 *                 the operands on the device already (32-bit indices; A^T
 *                 and P^T formed once, outside the timing: cuSPARSE has no
 *                 transposed operand in SpGEMM); its peak bytes (buffers
 *                 and C). A failure (memory, indices past 2^31) is reported
 *                 with cuSPARSE's status, not timed.
 * Check: each cuSPARSE C (rows sorted on the host) against hisp's: the same
 * structure and values within 1e-12 (f64) / 1e-5 (f32) relative to the
 * largest |value|; a mismatch prints FAIL and the exit status is 2.
 * Output: one Markdown row per item on stdout; --json FILE the same data.
 */
#include "cuda_bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char prog[] = "bench_spgemm_cuda";
static const char help[] =
    "usage: bench_spgemm_cuda --items LIST [options]\n"
    "SpGEMM: hisp_matrix_multiply on CUDA against cuSPARSE SpGEMM ALG1/2/3.\n"
    "  --items LIST   FILE.mtx (A*A), aat:FILE.mtx (A*A^T), ptap:P.mtx:A.mtx,\n"
    "                 comma-separated\n"
    "  --precision P  f64 or f32 (default f64)\n"
    "  --repeat N     timed calls of each (default 5)\n"
    "  --warmup N     untimed calls first (default 1)\n"
    "  --json FILE    the rows as JSON\n"
    "  --help         this text\n";

enum { O_ITEMS, O_PREC, O_REPEAT, O_WARMUP, O_JSON, O_HELP };

/* A CSR matrix on the device with 32-bit pointers, as cuSPARSE takes it. */
typedef struct {
    int64_t m, n, nnz;
    int *rp, *ci;
    void *v;
    cusparseSpMatDescr_t d;
} dcsr;

static cudaDataType dtype(hisp_type t)
{
    return t == HISP_F32 ? CUDA_R_32F : CUDA_R_64F;
}

/* X (host CSR of ctx) onto the device; false when it has 2^31 entries or more. */
static bool upload(hisp_matrix X, dcsr *D)
{
    hisp_matrix_info mi;
    const int64_t *p;
    const int32_t *c;
    const void *v;
    memset(D, 0, sizeof *D);
    if (hisp_matrix_get_info(X, &mi) || hisp_matrix_host_arrays(X, &p, NULL, &c, &v)) return false;
    if (mi.nnz >= INT32_MAX) return false;
    D->m = mi.nrows, D->n = mi.ncols, D->nnz = mi.nnz;
    int *rp = malloc(((size_t)mi.nrows + 1) * sizeof *rp);
    if (!rp) return false;
    for (int64_t i = 0; i <= mi.nrows; i++)
        rp[i] = (int)p[i];
    size_t es = hisp_type_size(mi.type);
    CK(cudaMalloc((void **)&D->rp, ((size_t)mi.nrows + 1) * sizeof(int)));
    CK(cudaMalloc((void **)&D->ci, (size_t)(mi.nnz ? mi.nnz : 1) * 4));
    CK(cudaMalloc(&D->v, (size_t)(mi.nnz ? mi.nnz : 1) * es));
    CK(cudaMemcpy(D->rp, rp, ((size_t)mi.nrows + 1) * sizeof(int), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(D->ci, c, (size_t)mi.nnz * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(D->v, v, (size_t)mi.nnz * es, cudaMemcpyHostToDevice));
    free(rp);
    CKS(cusparseCreateCsr(&D->d, D->m, D->n, D->nnz, D->rp, D->ci, D->v, CUSPARSE_INDEX_32I,
                          CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, dtype(mi.type)));
    return true;
}

static void dcsr_free(dcsr *D)
{
    if (D->d) cusparseDestroySpMat(D->d);
    cudaFree(D->rp), cudaFree(D->ci), cudaFree(D->v);
    memset(D, 0, sizeof *D);
}

/* One cuSPARSE product C = A*B with alg, as a user runs it: *C (the
 * caller frees it; freed here on failure). Returns cuSPARSE's status (a
 * cudaMalloc failure as CUSPARSE_STATUS_ALLOC_FAILED); *peak the bytes of
 * the buffers and C. */
static cusparseStatus_t cusparse_product(cusparseHandle_t h, hisp_type t, const dcsr *A,
                                         const dcsr *B, cusparseSpGEMMAlg_t alg, dcsr *C,
                                         size_t *peak)
{
    double one = 1, zero = 0;
    float fone = 1, fzero = 0;
    const void *al = t == HISP_F32 ? (const void *)&fone : &one;
    const void *be = t == HISP_F32 ? (const void *)&fzero : &zero;
    cusparseOperation_t N = CUSPARSE_OPERATION_NON_TRANSPOSE;
    cudaDataType dt = dtype(t);
    cusparseSpGEMMDescr_t g = NULL;
    void *b1 = NULL, *b2 = NULL, *b3 = NULL;
    size_t s1 = 0, s2 = 0, s3 = 0, es = hisp_type_size(t);
    cusparseStatus_t e;
    memset(C, 0, sizeof *C);
    C->m = A->m, C->n = B->n;
    *peak = 0;
#define TRY(call)                                                                                  \
    if ((e = (call)) != CUSPARSE_STATUS_SUCCESS) goto out
#define MEM(p, n)                                                                                  \
    if (cudaMalloc((void **)&(p), (n) > 0 ? (size_t)(n) : 1) != cudaSuccess) {                     \
        e = CUSPARSE_STATUS_ALLOC_FAILED;                                                          \
        goto out;                                                                                  \
    }
    TRY(cusparseCreateCsr(&C->d, A->m, B->n, 0, NULL, NULL, NULL, CUSPARSE_INDEX_32I,
                          CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, dt));
    TRY(cusparseSpGEMM_createDescr(&g));
    TRY(cusparseSpGEMM_workEstimation(h, N, N, al, A->d, B->d, be, C->d, dt, alg, g, &s1, NULL));
    MEM(b1, s1);
    TRY(cusparseSpGEMM_workEstimation(h, N, N, al, A->d, B->d, be, C->d, dt, alg, g, &s1, b1));
    if (alg != CUSPARSE_SPGEMM_ALG1) {
        float chunk = alg == CUSPARSE_SPGEMM_ALG3 ? 0.2f : 1.0f;
        TRY(cusparseSpGEMM_estimateMemory(h, N, N, al, A->d, B->d, be, C->d, dt, alg, g, chunk, &s3,
                                          NULL, NULL));
        MEM(b3, s3);
        TRY(cusparseSpGEMM_estimateMemory(h, N, N, al, A->d, B->d, be, C->d, dt, alg, g, chunk, &s3,
                                          b3, &s2));
        cudaFree(b3);
        b3 = NULL;
    } else {
        TRY(cusparseSpGEMM_compute(h, N, N, al, A->d, B->d, be, C->d, dt, alg, g, &s2, NULL));
    }
    MEM(b2, s2);
    TRY(cusparseSpGEMM_compute(h, N, N, al, A->d, B->d, be, C->d, dt, alg, g, &s2, b2));
    int64_t r, c, nnz;
    TRY(cusparseSpMatGetSize(C->d, &r, &c, &nnz));
    C->nnz = nnz;
    MEM(C->rp, ((size_t)C->m + 1) * sizeof(int));
    MEM(C->ci, (size_t)nnz * 4);
    MEM(C->v, (size_t)nnz * es);
    TRY(cusparseCsrSetPointers(C->d, C->rp, C->ci, C->v));
    TRY(cusparseSpGEMM_copy(h, N, N, al, A->d, B->d, be, C->d, dt, alg, g));
    if (cudaDeviceSynchronize() != cudaSuccess) e = CUSPARSE_STATUS_EXECUTION_FAILED;
    *peak = s1 + s2 + (s3 > s2 ? s3 - s2 : 0) + ((size_t)C->m + 1) * 4 + (size_t)nnz * (4 + es);
out:
#undef TRY
#undef MEM
    if (g) cusparseSpGEMM_destroyDescr(g);
    cudaFree(b1), cudaFree(b2), cudaFree(b3);
    if (e) dcsr_free(C);
    return e;
}

/* C (device, cuSPARSE's) against H (hisp's, host CSR): structure and
 * values, rows sorted first. Returns the relative error, or INFINITY when
 * the structures differ. */
static double compare(hisp_type t, const dcsr *C, hisp_matrix H)
{
    hisp_matrix_info mi;
    const int64_t *p;
    const int32_t *c;
    const void *v;
    if (hisp_matrix_get_info(H, &mi) || hisp_matrix_host_arrays(H, &p, NULL, &c, &v) ||
        mi.nnz != C->nnz)
        return INFINITY;
    size_t es = hisp_type_size(t), nnz = (size_t)C->nnz;
    int *rp = malloc(((size_t)C->m + 1) * sizeof *rp), *ci = malloc((nnz ? nnz : 1) * 4);
    char *cv = malloc((nnz ? nnz : 1) * es);
    if (!rp || !ci || !cv) exit(3);
    CK(cudaMemcpy(rp, C->rp, ((size_t)C->m + 1) * sizeof *rp, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(ci, C->ci, nnz * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(cv, C->v, nnz * es, cudaMemcpyDeviceToHost));
    double err = 0, big = 0;
    for (int64_t i = 0; i < C->m && err < INFINITY; i++) {
        if (rp[i + 1] != p[i + 1]) err = INFINITY;
        for (int k = rp[i]; k < rp[i + 1] && err < INFINITY; k++) { /* insertion by column */
            int q = k;
            while (q > rp[i] && ci[q - 1] > ci[k])
                q--;
            if (q == k) continue;
            int col = ci[k];
            char tmp[8];
            memcpy(tmp, cv + (size_t)k * es, es);
            memmove(ci + q + 1, ci + q, (size_t)(k - q) * 4);
            memmove(cv + (size_t)(q + 1) * es, cv + (size_t)q * es, (size_t)(k - q) * es);
            ci[q] = col;
            memcpy(cv + (size_t)q * es, tmp, es);
        }
        for (int k = rp[i]; k < rp[i + 1] && err < INFINITY; k++) {
            if (ci[k] != c[k]) {
                err = INFINITY;
                break;
            }
            double a = cb_at(t, cv, k), b = cb_at(t, v, k);
            err = fmax(err, fabs(a - b));
            big = fmax(big, fabs(b));
        }
    }
    free(rp), free(ci), free(cv);
    return err < INFINITY && big > 0 ? err / big : err;
}

typedef struct {
    const char *kind; /* "A*A", "A*A^T", "P^T*A*P" */
    const char *a, *p;
} item;

/* Parses one item of --items into it (strings point into s). */
static bool parse_item(char *s, item *it)
{
    it->p = NULL;
    if (strncmp(s, "aat:", 4) == 0) {
        it->kind = "A*A^T", it->a = s + 4;
    } else if (strncmp(s, "ptap:", 5) == 0) {
        char *c = strchr(s + 5, ':');
        if (!c) return false;
        *c = 0;
        it->kind = "P^T*A*P", it->p = s + 5, it->a = c + 1;
    } else {
        it->kind = "A*A", it->a = s;
    }
    return true;
}

static hisp_matrix load(hisp_context ctx, const char *file, hisp_type t)
{
    hisp_matrix X = NULL;
    cb_hk(ctx, hisp_matrix_read_mtx(ctx, file, t, &X, NULL), file);
    cb_hk(ctx, hisp_matrix_convert(X, HISP_FORMAT_CSR), file);
    return X;
}

/* X^T as a new host CSR matrix. */
static hisp_matrix transposed(hisp_context ctx, hisp_matrix X)
{
    hisp_matrix T = NULL;
    cb_hk(ctx, hisp_matrix_duplicate(X, HISP_FORMAT_CSR, &T), "duplicate");
    cb_hk(ctx, hisp_matrix_transpose(T), "transpose");
    cb_hk(ctx, hisp_matrix_convert(T, HISP_FORMAT_CSR), "convert");
    return T;
}

/* D's arrays as a hisp matrix on the device, over a 64-bit copy of its row
 * pointers (*p64, freed by the caller after the matrix): hisp's SpGEMM
 * reads its own layout (int64 pointers) in place. */
static hisp_matrix wrap_dev(hisp_context ctx, hisp_type t, const dcsr *D, int64_t **p64)
{
    size_t n = (size_t)D->m + 1;
    int *rp = malloc(n * sizeof *rp);
    int64_t *rq = malloc(n * sizeof *rq);
    if (!rp || !rq) exit(3);
    CK(cudaMemcpy(rp, D->rp, n * sizeof *rp, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < n; i++)
        rq[i] = rp[i];
    CK(cudaMalloc((void **)p64, n * 8));
    CK(cudaMemcpy(*p64, rq, n * 8, cudaMemcpyHostToDevice));
    free(rp), free(rq);
    hisp_matrix W = NULL;
    cb_hk(ctx,
          hisp_matrix_wrap_csr_device(ctx, t, D->m, D->n, D->nnz, *p64, D->ci, D->v, HISP_INDEX_64,
                                      HISP_INDEX_32, 0, &W),
          "wrap");
    return W;
}

/* The median wall ms of repeat products (after warmup) with a synchronize:
 * ptap(P, A) where P is given, else op_a(A)*op_b(B); *C the last. */
static double hisp_wall(hisp_context ctx, hisp_matrix A, hisp_op ob, hisp_matrix B, hisp_matrix P,
                        int warmup, int repeat, hisp_matrix *C)
{
    double *t = malloc(sizeof(double) * (size_t)repeat);
    if (!t) exit(3);
    for (int i = 0; i < warmup + repeat; i++) {
        hisp_matrix_destroy(C);
        double t0 = bench_now_ms();
        cb_hk(ctx, P ? hisp_matrix_ptap(P, A, C) : hisp_matrix_multiply(HISP_OP_N, A, ob, B, C),
              "hisp product");
        cb_hk(ctx, hisp_context_synchronize(ctx), "synchronize");
        if (i >= warmup) t[i - warmup] = bench_now_ms() - t0;
    }
    double ms = bench_median(t, repeat);
    free(t);
    return ms;
}

typedef struct {
    double ms, dev_ms, peak_mb; /* operands on the device: wall, device (stats), peak */
    double host_ms;             /* operands on the host (their upload in the call) */
    double num_ms;              /* the plan's numeric re-computation (device operands) */
    double num_first_ms;        /* its first execution (the plan's device state made) */
    double num_peak_mb;         /* the device bytes the first execution took */
} hisp_res;

/* hisp's product of the item, its operands on the device (Ad, Bd: cuSPARSE's
 * arrays wrapped; for ptap Bd is P's) and on the host (A, P; op T for
 * A*A^T); *C kept (the device operands'). The plan is
 * made from the host operands (A, Bh: A or A^T, op N) and executed with the
 * device ones, read in place. */
static void hisp_times(hisp_context ctx, const item *it, hisp_matrix A, hisp_matrix Bh,
                       hisp_matrix P, hisp_matrix Ad, hisp_matrix Bd, int warmup, int repeat,
                       hisp_res *r, hisp_matrix *C)
{
    hisp_op ob = strcmp(it->kind, "A*A^T") == 0 ? HISP_OP_T : HISP_OP_N;
    r->ms = hisp_wall(ctx, Ad, HISP_OP_N, Bd, P ? Bd : NULL, warmup, repeat, C);
    hisp_spgemm_stats st;
    cb_hk(ctx, hisp_context_spgemm_stats(ctx, &st), "stats");
    r->peak_mb = (double)st.device_bytes_peak / 1e6;
    r->dev_ms = st.device_ms;
    hisp_matrix Ch = NULL;
    r->host_ms = hisp_wall(ctx, A, ob, A, P, warmup, repeat, &Ch);
    hisp_matrix_destroy(&Ch);
    r->num_ms = r->num_first_ms = r->num_peak_mb = NAN;
    if (P) return;
    double *t = malloc(sizeof(double) * (size_t)repeat);
    if (!t) exit(3);
    hisp_spgemm_plan plan = NULL;
    hisp_matrix D = NULL;
    cb_hk(ctx, hisp_spgemm_plan_create(HISP_OP_N, A, HISP_OP_N, Bh, &plan, &D), "plan");
    for (int i = 0; i < warmup + repeat; i++) {
        double t0 = bench_now_ms();
        cb_hk(ctx, hisp_spgemm_plan_execute(plan, Ad, Bd, D), "plan execute");
        cb_hk(ctx, hisp_context_synchronize(ctx), "synchronize");
        if (i >= warmup) t[i - warmup] = bench_now_ms() - t0;
        if (i == 0) {
            r->num_first_ms = bench_now_ms() - t0;
            cb_hk(ctx, hisp_context_spgemm_stats(ctx, &st), "stats");
            r->num_peak_mb = (double)st.device_bytes_peak / 1e6;
        }
    }
    r->num_ms = bench_median(t, repeat);
    hisp_spgemm_plan_destroy(&plan);
    hisp_matrix_destroy(&D);
    free(t);
}

int main(int argc, char **argv)
{
    static const opts_def opts[] = {{"--items", true},
                                    {"--precision", true},
                                    {"--repeat", true},
                                    {"--warmup", true},
                                    {"--json", true},
                                    OPTS_HELP_DEFS,
                                    {0, 0}};
    static const char *const precs[] = {"f64", "f32", NULL};
    const char *val[sizeof opts / sizeof *opts] = {0};
    int rc = opts_parse(prog, argc, argv, opts, help, val, NULL), prec = 0, repeat = 5, warmup = 1;
    if (!rc) rc = opts_choice(prog, "--precision", val[O_PREC], precs, &prec);
    if (!rc && val[O_REPEAT]) rc = opts_int(prog, "--repeat", val[O_REPEAT], 1, 1000, &repeat);
    if (!rc && val[O_WARMUP]) rc = opts_int(prog, "--warmup", val[O_WARMUP], 0, 1000, &warmup);
    if (!rc && !val[O_ITEMS]) rc = opts_usage_error(prog, "--items is required");
    if (rc) return rc == OPTS_HELP_SHOWN ? 0 : 1;
    hisp_type t = prec ? HISP_F32 : HISP_F64;
    hisp_context ctx = NULL;
    if (hisp_context_create(&ctx)) return 3;
    cb_hk(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_CUDA, 0), "CUDA backend");
    cb_cusp cu;
    cb_cusp_open(&cu);
    FILE *js = val[O_JSON] ? fopen(val[O_JSON], "w") : NULL;
    if (js) fprintf(js, "{\"precision\": \"%s\", \"repeat\": %d, \"rows\": [", precs[prec], repeat);
    printf("| product | file | nnz(C) | hisp ms (device ms, peak MB) | hisp ms, host operands | "
           "hisp numeric ms (first ms, its peak MB) | ALG1 ms (peak MB) | ALG2 ms (peak MB) | ALG3 "
           "ms (peak MB) | "
           "best cuSPARSE / hisp | max rel. error |\n");
    printf("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    char *list = strdup(val[O_ITEMS]);
    int status = 0, nrow = 0;
    for (char *save = NULL, *s = strtok_r(list, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
        item it;
        if (!parse_item(s, &it)) return opts_usage_error(prog, "bad item '%s'", s);
        hisp_matrix A = load(ctx, it.a, t), P = it.p ? load(ctx, it.p, t) : NULL, H = NULL;
        /* cuSPARSE's operands: A*A, A*A^T (A^T formed), or A*P then P^T*(A*P) */
        hisp_matrix At = strcmp(it.kind, "A*A^T") == 0 ? transposed(ctx, A) : NULL;
        hisp_matrix Pt = P ? transposed(ctx, P) : NULL;
        dcsr dA, dB, dPt = {0};
        bool ok = upload(A, &dA) && upload(P ? P : At ? At : A, &dB) && (!Pt || upload(Pt, &dPt));
        if (!ok) cb_hk(ctx, HISP_ERR_UNSUPPORTED, "operands past 32-bit indices");
        int64_t *pa = NULL, *pb = NULL;
        hisp_matrix Ad = wrap_dev(ctx, t, &dA, &pa), Bd = At || P ? wrap_dev(ctx, t, &dB, &pb) : Ad;
        hisp_res hr;
        hisp_times(ctx, &it, A, At ? At : A, P, Ad, Bd, warmup, repeat, &hr, &H);
        double cms[3] = {NAN, NAN, NAN}, peak_mb[3] = {0}, err = NAN;
        cusparseStatus_t cst[3] = {CUSPARSE_STATUS_NOT_SUPPORTED, CUSPARSE_STATUS_NOT_SUPPORTED,
                                   CUSPARSE_STATUS_NOT_SUPPORTED};
        static const cusparseSpGEMMAlg_t algs[3] = {CUSPARSE_SPGEMM_ALG1, CUSPARSE_SPGEMM_ALG2,
                                                    CUSPARSE_SPGEMM_ALG3};
        double *tm = malloc(sizeof(double) * (size_t)repeat);
        for (int a = 0; a < 3 && ok && tm; a++) {
            cst[a] = CUSPARSE_STATUS_SUCCESS;
            for (int i = 0; i < warmup + repeat && !cst[a]; i++) {
                dcsr C, AP;
                size_t pk = 0, pk2 = 0;
                double t0 = bench_now_ms();
                cst[a] = cusparse_product(cu.h, t, &dA, &dB, algs[a], &AP, &pk);
                if (!cst[a] && P) { /* A*P stays while P^T*(A*P) is made */
                    cst[a] = cusparse_product(cu.h, t, &dPt, &AP, algs[a], &C, &pk2);
                    pk2 += ((size_t)AP.m + 1) * 4 + (size_t)AP.nnz * (4 + hisp_type_size(t));
                    dcsr_free(&AP);
                } else if (!cst[a]) {
                    C = AP;
                }
                if (cst[a]) break;
                if (i >= warmup) tm[i - warmup] = bench_now_ms() - t0;
                peak_mb[a] = (double)(pk > pk2 ? pk : pk2) / 1e6;
                if (i == warmup + repeat - 1) {
                    double e = compare(t, &C, H);
                    err = isnan(err) ? e : fmax(err, e);
                }
                dcsr_free(&C);
            }
            if (!cst[a]) cms[a] = bench_median(tm, repeat);
        }
        free(tm);
        double tol = t == HISP_F32 ? 1e-5 : 1e-12, best = NAN;
        for (int a = 0; a < 3; a++)
            if (!isnan(cms[a]) && (isnan(best) || cms[a] < best)) best = cms[a];
        hisp_matrix_info ic;
        cb_hk(ctx, hisp_matrix_get_info(H, &ic), "info");
        const char *f = strrchr(it.a, '/');
        printf("| %s | %s | %lld | %.3f (%.3f, %.0f) | %.3f | %.3f (%.3f, %.0f) |", it.kind,
               f ? f + 1 : it.a, (long long)ic.nnz, hr.ms, hr.dev_ms, hr.peak_mb, hr.host_ms,
               hr.num_ms, hr.num_first_ms, hr.num_peak_mb);
        for (int a = 0; a < 3; a++)
            if (isnan(cms[a]))
                printf(" %s |", ok ? cusparseGetErrorString(cst[a]) : "32-bit indices overflow");
            else
                printf(" %.3f (%.0f) |", cms[a], peak_mb[a]);
        printf(" %.2f | %.1e%s |\n", best / hr.ms, err, err > tol ? " FAIL" : "");
        if (err > tol) status = 2;
        if (js) {
            fprintf(js,
                    "%s\n {\"product\": \"%s\", \"a\": \"%s\", \"p\": \"%s\", \"nnz\": %lld, "
                    "\"hisp_ms\": %.6g, \"hisp_device_ms\": %.6g, \"hisp_peak_mb\": %.6g, "
                    "\"hisp_host_operands_ms\": %.6g, \"hisp_numeric_ms\": %.6g, "
                    "\"hisp_numeric_first_ms\": %.6g, \"hisp_numeric_peak_mb\": %.6g",
                    nrow++ ? "," : "", it.kind, it.a, it.p ? it.p : "", (long long)ic.nnz, hr.ms,
                    hr.dev_ms, hr.peak_mb, hr.host_ms, isnan(hr.num_ms) ? -1 : hr.num_ms,
                    isnan(hr.num_first_ms) ? -1 : hr.num_first_ms,
                    isnan(hr.num_peak_mb) ? -1 : hr.num_peak_mb);
            for (int a = 0; a < 3; a++)
                fprintf(js,
                        ", \"alg%d_ms\": %.6g, \"alg%d_peak_mb\": %.6g, \"alg%d_status\": \"%s\"",
                        a + 1, isnan(cms[a]) ? -1 : cms[a], a + 1, peak_mb[a], a + 1,
                        cusparseGetErrorString(cst[a]));
            fprintf(js, ", \"max_rel_error\": %.3g}", isnan(err) ? -1 : err);
        }
        fflush(stdout);
        if (Bd != Ad) hisp_matrix_destroy(&Bd);
        hisp_matrix_destroy(&Ad);
        cudaFree(pa), cudaFree(pb);
        dcsr_free(&dA), dcsr_free(&dB), dcsr_free(&dPt);
        hisp_matrix_destroy(&A), hisp_matrix_destroy(&P), hisp_matrix_destroy(&H);
        hisp_matrix_destroy(&At), hisp_matrix_destroy(&Pt);
    }
    if (js) fprintf(js, "\n]}\n"), fclose(js);
    free(list);
    cb_cusp_close(&cu);
    hisp_context_destroy(&ctx);
    return status;
}
