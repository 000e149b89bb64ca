/* MSREP benchmark on several NVIDIA GPUs (issue 7): speedup of 1, 2, 4 GPUs
 * over one, for the row-block baseline and pCSR / pCSC / pCOO, on rmat
 * (power law) and poisson3d (regular) matrices of 0.5-2 billion nonzeros.
 *
 *   bench_msrep_cuda --matrix rmat|poisson3d --nnz N [--gpus 1,2,4]
 *                    [--kinds rowblock,pcsr,pcsc,pcoo|none] [--precision f64|f32]
 *                    [--repeat 10] [--warmup 2] [--cache DIR] [--csv FILE] [--md FILE]
 *
 * --nnz picks the generator size (rmat: scale with edge factor 16, about
 * 16 * 2^scale entries before merging repeats; poisson3d: side n with
 * 7 n^3 entries). --cache DIR keeps the generated CSR as a raw file
 * (DIR/<matrix>-<nnz>-<type>.csr) so that later pieces skip the generation.
 *
 * Per configuration: the one-time cost (conversion, partition, distribution)
 * and the per-SpMV cost of hisp_mspmv (medians: whole call, x sent, kernel
 * time of the slowest device by CUDA events, results read back, host merge),
 * plus a device-side merge estimate: the merge volume (row kinds: each
 * device's row segment; column kinds and op = T: a whole partial vector per
 * device) copied peer-to-peer into GPU 0 concurrently, timed with events
 * (the summation kernel of the column merge is not included). Speedups:
 *   compute   = kernel(1 GPU, same kind) / slowest kernel(N GPUs)
 *   resident  = kernel(1 GPU) / (slowest kernel + peer merge) — parts, x and
 *               y resident on the devices, the iterative-solver case
 *   call      = hisp_mspmv(1 GPU) / hisp_mspmv(N GPUs), x and y on the host
 * Every result is checked against the single-GPU hisp_spmv result. */
#include "common.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(3);                                                                               \
        }                                                                                          \
    } while (0)

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

/* ---- device-side merge estimate: peer copies into GPU 0 ------------------- */

static double peer_merge_ms(int nd, const size_t *bytes, int repeat)
{
    if (nd < 2) return 0;
    void *dst[64] = {0}, *src[64] = {0};
    cudaStream_t st[64];
    cudaEvent_t e0, e1;
    size_t off = 0;
    for (int d = 1; d < nd; d++)
        off += bytes[d];
    CK(cudaSetDevice(0));
    CK(cudaMalloc(&dst[0], off ? off : 16));
    for (int d = 1; d < nd; d++) {
        CK(cudaSetDevice(d));
        int can = 0;
        CK(cudaDeviceCanAccessPeer(&can, d, 0));
        if (can) {
            cudaError_t e = cudaDeviceEnablePeerAccess(0, 0);
            if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) CK(e);
            (void)cudaGetLastError();
        }
        CK(cudaMalloc(&src[d], bytes[d] ? bytes[d] : 16));
        CK(cudaStreamCreateWithFlags(&st[d], cudaStreamNonBlocking));
    }
    CK(cudaSetDevice(0));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    double *t = malloc((size_t)(repeat + 1) * sizeof *t);
    for (int r = 0; r <= repeat; r++) { /* r = 0: warm-up */
        CK(cudaSetDevice(0));
        CK(cudaDeviceSynchronize());
        double h0 = bench_now_ms();
        size_t o = 0;
        for (int d = 1; d < nd; d++) {
            CK(cudaSetDevice(d));
            CK(cudaMemcpyPeerAsync((char *)dst[0] + o, 0, src[d], d, bytes[d], st[d]));
            o += bytes[d];
        }
        for (int d = 1; d < nd; d++) {
            CK(cudaSetDevice(d));
            CK(cudaStreamSynchronize(st[d]));
        }
        if (r) t[r - 1] = bench_now_ms() - h0;
    }
    double med = bench_median(t, repeat);
    free(t);
    for (int d = 1; d < nd; d++) {
        CK(cudaSetDevice(d));
        CK(cudaFree(src[d]));
        CK(cudaStreamDestroy(st[d]));
    }
    CK(cudaSetDevice(0));
    CK(cudaFree(dst[0]));
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    return med;
}

/* ---- runs ------------------------------------------------------------------ */

typedef struct {
    char kind[16];
    int gpus;
    double convert, partition, distribution; /* one-time, ms */
    double call, x, compute, gather, merge;  /* per SpMV medians, ms */
    double peer;                             /* device-side merge estimate, ms */
    double nnz_imbalance;                    /* max/mean nnz over devices */
    double time_imbalance;                   /* max/mean kernel time */
    double rel_error;
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

int main(int argc, char **argv)
{
    const char *matrix = "rmat", *gpus_s = "1,2,4", *kinds_s = "rowblock,pcsr,pcsc,pcoo";
    const char *cache = NULL, *csv = NULL, *md = NULL;
    double nnz = 5e8;
    int repeat = 10, warmup = 2;
    hisp_type t = HISP_F64;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--matrix") == 0 && v)
            matrix = v, i++;
        else if (strcmp(a, "--nnz") == 0 && v)
            nnz = atof(v), i++;
        else if (strcmp(a, "--gpus") == 0 && v)
            gpus_s = v, i++;
        else if (strcmp(a, "--kinds") == 0 && v)
            kinds_s = v, i++;
        else if (strcmp(a, "--repeat") == 0 && v)
            repeat = atoi(v), i++;
        else if (strcmp(a, "--warmup") == 0 && v)
            warmup = atoi(v), i++;
        else if (strcmp(a, "--cache") == 0 && v)
            cache = v, i++;
        else if (strcmp(a, "--csv") == 0 && v)
            csv = v, i++;
        else if (strcmp(a, "--md") == 0 && v)
            md = v, i++;
        else if (strcmp(a, "--precision") == 0 && v)
            t = strcmp(v, "f32") == 0 ? HISP_F32 : HISP_F64, i++;
        else {
            fprintf(stderr, "usage: see the head of bench/bench_msrep_cuda.c\n");
            return 1;
        }
    }
    if (repeat < 1 || warmup < 0 || nnz < 1) return 1;
    int ngpu = 0;
    if (cudaGetDeviceCount(&ngpu) != cudaSuccess || ngpu < 1) {
        fprintf(stderr, "bench_msrep_cuda: no CUDA device\n");
        return 3;
    }
    char gl[8][16], kl[8][16];
    int ng = parse_list(gpus_s, gl, 8), nk = parse_list(kinds_s, kl, 8);
    if (strcmp(kinds_s, "none") == 0) nk = 0; /* generate / cache and the 1-GPU yardstick only */
    hisp_context ctx = NULL;
    if (hisp_context_create(&ctx)) return 3;
    double gen_ms = 0;
    hisp_matrix A = make_matrix(ctx, matrix, nnz, t, cache, &gen_ms);
    hisp_matrix_info mi;
    hk(ctx, hisp_matrix_get_info(A, &mi), "info");
    size_t es = hisp_type_size(t);
    fprintf(stderr,
            "bench: %s %lld x %lld, %lld nnz %s, ready after %.0f ms, %d GPU(s), NUMA nodes %d\n",
            matrix, (long long)mi.nrows, (long long)mi.ncols, (long long)mi.nnz, hisp_type_name(t),
            gen_ms, ngpu, hisp_numa_nodes());

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

    /* single-GPU yardstick: hisp_spmv with x and y resident on GPU 0 */
    double single_ms = NAN;
    {
        hisp_context c1 = NULL;
        hisp_matrix B = NULL;
        hisp_vector xv = NULL, yv = NULL;
        const int64_t *rp;
        const int32_t *ci;
        const void *vv;
        hk(ctx, hisp_matrix_convert(A, HISP_FORMAT_CSR), "convert");
        hk(ctx, hisp_matrix_host_arrays(A, &rp, NULL, &ci, &vv), "arrays");
        hk(ctx, hisp_context_create(&c1), "context");
        hk(c1, hisp_context_set_backend(c1, HISP_BACKEND_CUDA, 0), "cuda");
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
    }
    fprintf(stderr, "bench: single GPU hisp_spmv (resident) %.4f ms\n", single_ms);

    result res[64];
    int nres = 0;
    hisp_mplan_breakdown *bd = calloc(1, sizeof *bd);
    double *tt = malloc((size_t)repeat * 5 * sizeof *tt),
           *dev = malloc((size_t)repeat * 64 * sizeof *dev);
    if (!bd || !tt || !dev) return 2;
    for (int k = 0; k < nk; k++) {
        hisp_partition_kind kind;
        if (hisp_partition_from_name(kl[k], &kind)) {
            fprintf(stderr, "unknown kind %s\n", kl[k]);
            return 1;
        }
        for (int g = 0; g < ng; g++) {
            int nd = atoi(gl[g]);
            if (nd < 1 || nd > ngpu) {
                fprintf(stderr, "bench: skipping %d GPUs (%d present)\n", nd, ngpu);
                continue;
            }
            hisp_device_ref refs[64];
            for (int d = 0; d < nd; d++)
                refs[d] = (hisp_device_ref){HISP_BACKEND_CUDA, d};
            hisp_mplan plan = NULL;
            hk(ctx, hisp_mplan_create(A, nd, refs, kind, 0, &plan), "plan");
            result *r = &res[nres++];
            memset(r, 0, sizeof *r);
            snprintf(r->kind, sizeof r->kind, "%s", kl[k]);
            r->gpus = nd;
            hk(ctx, hisp_mspmv(plan, HISP_OP_N, a, x, b, y), "mspmv");
            hk(ctx, hisp_mplan_get_breakdown(plan, bd), "breakdown");
            r->convert = bd->convert_ms;
            r->partition = bd->partition_ms;
            r->distribution = bd->distribution_ms;
            r->rel_error = bench_rel_error(t, y, yref, mi.nrows);
            for (int i = 0; i < warmup; i++)
                hk(ctx, hisp_mspmv(plan, HISP_OP_N, a, x, b, y), "mspmv");
            for (int i = 0; i < repeat; i++) {
                hk(ctx, hisp_mspmv(plan, HISP_OP_N, a, x, b, y), "mspmv");
                hk(ctx, hisp_mplan_get_breakdown(plan, bd), "breakdown");
                tt[0 * repeat + i] = bd->total_ms;
                tt[1 * repeat + i] = bd->x_ms;
                tt[2 * repeat + i] = bd->compute_ms;
                tt[3 * repeat + i] = bd->gather_ms;
                tt[4 * repeat + i] = bd->merge_ms;
                for (int d = 0; d < nd; d++)
                    dev[d * repeat + i] = bd->dev[d].compute_ms;
            }
            r->call = bench_median(tt, repeat);
            r->x = bench_median(tt + repeat, repeat);
            r->compute = bench_median(tt + 2 * repeat, repeat);
            r->gather = bench_median(tt + 3 * repeat, repeat);
            r->merge = bench_median(tt + 4 * repeat, repeat);
            double nmax = 0, nsum = 0, tmax = 0, tsum = 0;
            size_t bytes[64];
            bool rows =
                kind == HISP_PART_PCSR || kind == HISP_PART_PCOO || kind == HISP_PART_ROWBLOCK;
            for (int d = 0; d < nd; d++) {
                double nz = (double)bd->dev[d].nnz, td = bench_median(dev + d * repeat, repeat);
                nsum += nz;
                tsum += td;
                if (nz > nmax) nmax = nz;
                if (td > tmax) tmax = td;
                int64_t seg = bd->dev[d].part.end - bd->dev[d].part.start;
                bytes[d] = (size_t)(rows ? seg : mi.nrows) * es;
            }
            r->nnz_imbalance = nsum > 0 ? nmax / (nsum / nd) : 1;
            r->time_imbalance = tsum > 0 ? tmax / (tsum / nd) : 1;
            hisp_mplan_destroy(&plan);
            r->peer = peer_merge_ms(nd, bytes, repeat);
            fprintf(
                stderr,
                "bench: %s %d GPU(s): one-time %.1f+%.1f+%.1f ms, call %.3f ms, kernel %.4f ms, "
                "peer merge %.4f ms, err %.1e\n",
                r->kind, nd, r->convert, r->partition, r->distribution, r->call, r->compute,
                r->peer, r->rel_error);
        }
    }

    /* speedups against the same kind on 1 GPU */
    FILE *fm = md ? fopen(md, "w") : stdout;
    FILE *fc = csv ? fopen(csv, "w") : NULL;
    if (!fm) fm = stdout;
    fprintf(fm,
            "\n%s, %lld x %lld, %lld nnz, %s; single-GPU hisp_spmv %.4f ms (resident); "
            "generation/read %.0f ms\n\n",
            matrix, (long long)mi.nrows, (long long)mi.ncols, (long long)mi.nnz, hisp_type_name(t),
            single_ms, gen_ms);
    fprintf(fm, "| kind | GPUs | convert ms | partition ms | distribution ms | call ms | x ms | "
                "kernel ms | gather ms | host merge ms | peer merge ms | nnz max/mean | "
                "time max/mean | speedup compute | speedup resident | speedup call | rel err |\n");
    fprintf(fm, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    if (fc)
        fprintf(fc,
                "matrix,nnz,precision,kind,gpus,convert_ms,partition_ms,distribution_ms,call_ms,"
                "x_ms,kernel_ms,gather_ms,host_merge_ms,peer_merge_ms,nnz_imbalance,"
                "time_imbalance,speedup_compute,speedup_resident,speedup_call,rel_error\n");
    for (int i = 0; i < nres; i++) {
        const result *r = &res[i], *base = NULL;
        for (int j = 0; j < nres; j++)
            if (res[j].gpus == 1 && strcmp(res[j].kind, r->kind) == 0) base = &res[j];
        double sc = base ? base->compute / r->compute : NAN;
        double sr = base ? base->compute / (r->compute + r->peer) : NAN;
        double sa = base ? base->call / r->call : NAN;
        fprintf(fm,
                "| %s | %d | %.1f | %.1f | %.1f | %.3f | %.3f | %.4f | %.3f | %.3f | %.4f | %.3f | "
                "%.3f | %.2f | %.2f | %.2f | %.1e |\n",
                r->kind, r->gpus, r->convert, r->partition, r->distribution, r->call, r->x,
                r->compute, r->gather, r->merge, r->peer, r->nnz_imbalance, r->time_imbalance, sc,
                sr, sa, r->rel_error);
        if (fc)
            fprintf(fc,
                    "%s,%lld,%s,%s,%d,%.3f,%.3f,%.3f,%.4f,%.4f,%.5f,%.4f,%.4f,%.5f,%.4f,%.4f,%.3f,"
                    "%.3f,%.3f,%.3e\n",
                    matrix, (long long)mi.nnz, hisp_type_name(t), r->kind, r->gpus, r->convert,
                    r->partition, r->distribution, r->call, r->x, r->compute, r->gather, r->merge,
                    r->peer, r->nnz_imbalance, r->time_imbalance, sc, sr, sa, r->rel_error);
    }
    if (fm != stdout) fclose(fm);
    if (fc) fclose(fc);
    int bad = 0;
    for (int i = 0; i < nres; i++)
        bad |= !(res[i].rel_error < (t == HISP_F32 ? 1e-4 : 1e-10));
    free(x);
    free(y);
    free(yref);
    free(bd);
    free(tt);
    free(dev);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
    return bad ? 5 : 0;
}
