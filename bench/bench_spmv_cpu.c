/* CSR SpMV on the CPU: hisp's OpenCL backend (PoCL) against a plain
 * single-thread scalar C loop, OpenMP C loops and the hisp reference
 * backend, on the generator suite, f64 and f32, op = N and op = T.
 *
 * Every result is checked against the serial loop (relative 2-norm error).
 * Times: host clock for the C loops (after warm-up calls), device events
 * through hisp_spmv_timed for the hisp backends (after warm-up runs; the
 * upload and the kernel build happen in the warm-up and are not timed).
 * Run with --help for the options.
 */
#include "common.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

typedef struct {
    bench_suite_opts s; /* --scale, --matrices, --precision, --repeat, --warmup */
    int do_t;
    int cl_device;
    int no_opencl;
    const char *csv, *json, *md;
} options;

static const char prog[] = "bench_spmv_cpu";
// clang-format off
static const char help[] =
    "usage: bench_spmv_cpu [options]\n"
    "CSR SpMV y = A*x (and y = A^T*x) on the CPU: serial scalar C loop, OpenMP C\n"
    "loops, the hisp OpenCL backend (PoCL) and the hisp reference backend, on the\n"
    "generator suite (medium: 1-10M nnz per matrix). Prints a markdown table; the\n"
    "speed-up column is relative to serial-c.\n"
    "\n"
    BENCH_SUITE_HELP("medium", "20", "3")
    "  --no-transpose       skip op = T\n"
    "  --no-opencl          skip the OpenCL backend\n"
    "  --device N           OpenCL device index (default: first)\n"
    "  --csv FILE           write results as CSV (schema in bench/README.md)\n"
    "  --json FILE          write results and machine facts as JSON\n"
    "  --md FILE            write the markdown table to FILE too\n"
    "  --help               this text\n"
    "OMP_NUM_THREADS sets the OpenMP threads (default: all cores). Threads are\n"
    "pinned (OMP_PROC_BIND=close OMP_PLACES=cores POCL_AFFINITY=1, set by\n"
    "re-executing the program) unless those are set already or HISP_BENCH_NO_PIN\n"
    "is set.\n";
// clang-format on

enum { O_NO_T = BENCH_O_NEXT, O_NO_OPENCL, O_DEVICE, O_CSV, O_JSON, O_MD };
static const opts_def opts[] = {BENCH_SUITE_OPTS,
                                {"--no-transpose", false},
                                {"--no-opencl", false},
                                {"--device", true},
                                {"--csv", true},
                                {"--json", true},
                                {"--md", true},
                                OPTS_HELP_DEFS,
                                {0, 0}};

/* OPTS_OK, OPTS_HELP_SHOWN, or an error (printed). */
static int parse_args(int argc, char **argv, options *o)
{
    *o = (options){.s = {BENCH_SCALE_MEDIUM, NULL, true, true, 20, 3}, .do_t = 1, .cl_device = -1};
    const char *val[sizeof opts / sizeof *opts] = {0};
    int rc = bench_suite_parse(prog, argc, argv, opts, help, val, &o->s);
    if (!rc) rc = opts_int(prog, "--device", val[O_DEVICE], 0, 1 << 20, &o->cl_device);
    o->do_t = !val[O_NO_T];
    o->no_opencl = val[O_NO_OPENCL] != NULL;
    o->csv = val[O_CSV];
    o->json = val[O_JSON];
    o->md = val[O_MD];
    return rc;
}

/* ---- the C loops ------------------------------------------------------------ */

/* The arrays hisp keeps on the host: 64-bit row pointers, 32-bit indices. */
typedef struct {
    int64_t nrows, ncols, nnz;
    const int64_t *rowptr;
    const int32_t *colind;
    const void *val;
    const void *x;
    void *y;
    int64_t *bounds; /* nthreads + 1 row bounds with equal nnz shares */
    int nthreads;
} loop_arg;

/* Plain scalar CSR loop, one thread. The compiler does not vectorise the
 * reduction (no -ffast-math), so this is the scalar baseline of the issue. */
#define SERIAL_N(T, NAME)                                                                          \
    static void NAME(void *p)                                                                      \
    {                                                                                              \
        const loop_arg *a = p;                                                                     \
        const T *val = a->val, *x = a->x;                                                          \
        T *y = a->y;                                                                               \
        for (int64_t i = 0; i < a->nrows; i++) {                                                   \
            T s = 0;                                                                               \
            for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++)                              \
                s += val[k] * x[a->colind[k]];                                                     \
            y[i] = s;                                                                              \
        }                                                                                          \
    }
SERIAL_N(double, serial_n_f64)
SERIAL_N(float, serial_n_f32)

/* y = A^T x: scatter over the rows of A. */
#define SERIAL_T(T, NAME)                                                                          \
    static void NAME(void *p)                                                                      \
    {                                                                                              \
        const loop_arg *a = p;                                                                     \
        const T *val = a->val, *x = a->x;                                                          \
        T *y = a->y;                                                                               \
        for (int64_t j = 0; j < a->ncols; j++)                                                     \
            y[j] = 0;                                                                              \
        for (int64_t i = 0; i < a->nrows; i++) {                                                   \
            T xi = x[i];                                                                           \
            for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++)                              \
                y[a->colind[k]] += val[k] * xi;                                                    \
        }                                                                                          \
    }
SERIAL_T(double, serial_t_f64)
SERIAL_T(float, serial_t_f32)

/* OpenMP, static schedule over rows. */
#define OMP_STATIC(T, NAME)                                                                        \
    static void NAME(void *p)                                                                      \
    {                                                                                              \
        const loop_arg *a = p;                                                                     \
        const T *val = a->val, *x = a->x;                                                          \
        T *y = a->y;                                                                               \
        _Pragma("omp parallel for schedule(static)") for (int64_t i = 0; i < a->nrows; i++)        \
        {                                                                                          \
            T s = 0;                                                                               \
            for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++)                              \
                s += val[k] * x[a->colind[k]];                                                     \
            y[i] = s;                                                                              \
        }                                                                                          \
    }
OMP_STATIC(double, omp_static_f64)
OMP_STATIC(float, omp_static_f32)

/* OpenMP, one contiguous row range per thread holding an equal share of
 * the nonzeros (bounds precomputed): robust to a few very long rows. */
#define OMP_NNZ(T, NAME)                                                                           \
    static void NAME(void *p)                                                                      \
    {                                                                                              \
        const loop_arg *a = p;                                                                     \
        const T *val = a->val, *x = a->x;                                                          \
        T *y = a->y;                                                                               \
        _Pragma("omp parallel num_threads(a->nthreads)")                                           \
        {                                                                                          \
            int t = omp_get_thread_num();                                                          \
            for (int64_t i = a->bounds[t]; i < a->bounds[t + 1]; i++) {                            \
                T s = 0;                                                                           \
                for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++)                          \
                    s += val[k] * x[a->colind[k]];                                                 \
                y[i] = s;                                                                          \
            }                                                                                      \
        }                                                                                          \
    }
OMP_NNZ(double, omp_nnz_f64)
OMP_NNZ(float, omp_nnz_f32)

/* First row whose start pointer reaches the target share. */
static void nnz_bounds(const int64_t *rowptr, int64_t nrows, int nt, int64_t *b)
{
    int64_t nnz = rowptr[nrows];
    b[0] = 0;
    for (int t = 1; t < nt; t++) {
        int64_t target = (int64_t)((double)nnz * t / nt);
        int64_t lo = b[t - 1], hi = nrows;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (rowptr[mid] < target)
                lo = mid + 1;
            else
                hi = mid;
        }
        b[t] = lo;
    }
    b[nt] = nrows;
}

/* ---- main --------------------------------------------------------------------- */

typedef struct {
    hisp_context cl;  /* OpenCL backend, or NULL */
    hisp_context ref; /* reference backend; matrices are generated here */
    char cl_device[96];
    int nthreads;
    double host_bw, host_bw_omp, cl_bw;
} machine;

static double omp_copy_bandwidth(size_t bytes, int repeat)
{
    char *src = malloc(bytes), *dst = malloc(bytes);
    double *ms = malloc((size_t)repeat * sizeof *ms), bw = 0;
    if (src && dst && ms) {
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < bytes; i += 4096) { /* first touch by the copying thread */
            src[i] = 1;
            dst[i] = 0;
        }
        for (int r = -2; r < repeat; r++) {
            double t0 = bench_now_ms();
#pragma omp parallel
            {
                int nt = omp_get_num_threads(), t = omp_get_thread_num();
                size_t lo = bytes / (size_t)nt * (size_t)t;
                size_t hi = t == nt - 1 ? bytes : lo + bytes / (size_t)nt;
                memcpy(dst + lo, src + lo, hi - lo);
            }
            if (r >= 0) ms[r] = bench_now_ms() - t0;
        }
        double med = bench_median(ms, repeat);
        bw = med > 0 ? 2.0 * (double)bytes / (med * 1e-3) : 0;
    }
    free(src), free(dst), free(ms);
    return bw;
}

/* ---- measurements ------------------------------------------------------------- */

/* One implementation under test. The implementations of one (matrix, type,
 * op) are timed round-robin (round r runs each once), so that a change of
 * load on this shared machine hits all of them alike. */
typedef struct {
    const char *impl;
    char device[96];
    double bw; /* copy bandwidth it is compared with */
    /* host loop */
    void (*fn)(void *);
    loop_arg arg;
    /* or hisp backend */
    hisp_context ctx;
    hisp_matrix A;
    hisp_vector x, y;
    int force_n; /* run op = N whatever the measured op (A^T stored explicitly) */
    int failed;
    double *ms;
} candidate;

typedef struct {
    const options *o;
    bench_results *rs;
    const char *matrix;
    hisp_type type;
    int64_t rows, cols, nnz;
} run_ctx;

static void report_error(hisp_context ctx, const char *what, hisp_status s)
{
    hisp_error_info e;
    const char *msg = "";
    if (ctx && hisp_context_last_error(ctx, &e) == HISP_SUCCESS) msg = e.message;
    fprintf(stderr, "%s: %s: %s\n", what, hisp_status_string(s), msg);
    if (ctx && hisp_context_last_error(ctx, &e) == HISP_SUCCESS && e.build_log)
        fprintf(stderr, "build log:\n%s\n", e.build_log);
}

static const void *scalar(hisp_type t, int one)
{
    static const double d[2] = {0, 1};
    static const float f[2] = {0, 1};
    return t == HISP_F32 ? (const void *)&f[one] : (const void *)&d[one];
}

/* Runs candidate c once (or `warmup` untimed + 1 timed when warmup >= 0 is
 * the first call); stores the time of the timed run in *ms. */
static void run_candidate(run_ctx *r, candidate *c, hisp_op op, int warmup, double *ms)
{
    if (c->failed) return;
    if (c->fn) {
        bench_time_host(c->fn, &c->arg, warmup, 1, ms);
        return;
    }
    hisp_status s = hisp_spmv_timed(c->ctx, c->force_n ? HISP_OP_N : op, scalar(r->type, 1), c->A,
                                    c->x, scalar(r->type, 0), c->y, warmup, 1, ms);
    if (s) {
        report_error(c->ctx, c->impl, s);
        c->failed = 1;
    }
}

/* Times all candidates (same op), checks each result against ref and adds
 * the results. y_host: scratch of the output length. */
static void measure(run_ctx *r, candidate *cs, int n, hisp_op op, const void *ref, void *y_host)
{
    int64_t ylen = op == HISP_OP_N ? r->rows : r->cols;
    int rep = r->o->s.repeat;
    for (int i = 0; i < n; i++) {
        cs[i].ms = calloc((size_t)rep, sizeof(double));
        if (!cs[i].ms) cs[i].failed = 1;
    }
    for (int i = 0; i < n; i++) { /* warm-up: uploads, kernel builds, caches */
        double t;
        run_candidate(r, &cs[i], op, r->o->s.warmup, &t);
    }
    for (int k = 0; k < rep; k++)
        for (int i = 0; i < n; i++)
            run_candidate(r, &cs[i], op, 0, &cs[i].ms[k]);
    for (int i = 0; i < n; i++) {
        candidate *c = &cs[i];
        const void *y = c->arg.y;
        if (!c->failed && !c->fn) {
            hisp_status s = hisp_vector_read(c->y, y_host);
            if (s) {
                report_error(c->ctx, c->impl, s);
                c->failed = 1;
            }
            y = y_host;
        }
        if (c->failed) {
            free(c->ms);
            continue;
        }
        bench_result res;
        memset(&res, 0, sizeof res);
        snprintf(res.matrix, sizeof res.matrix, "%s", r->matrix);
        snprintf(res.precision, sizeof res.precision, "%s", hisp_type_name(r->type));
        snprintf(res.op, sizeof res.op, "%s", op == HISP_OP_N ? "N" : "T");
        snprintf(res.impl, sizeof res.impl, "%s", c->impl);
        snprintf(res.device, sizeof res.device, "%s", c->device);
        res.rows = r->rows, res.cols = r->cols, res.nnz = r->nnz;
        res.rel_error = bench_rel_error(r->type, y, ref, ylen);
        bench_result_finish(&res, c->ms, rep, sizeof(int64_t), hisp_type_size(r->type), 0, c->bw);
        if (bench_results_add(r->rs, &res)) fprintf(stderr, "out of memory for results\n");
        fprintf(stderr,
                "  %-4s %-2s %-14s %9.3f ms (min %8.3f) %6.2f GFLOP/s %6.2f GB/s  err %.1e\n",
                res.precision, res.op, res.impl, res.median_ms, res.min_ms, res.gflops, res.gbs,
                res.rel_error);
        free(c->ms);
    }
}

/* A hisp candidate on ctx: vectors of the op's lengths, x filled. */
static void hisp_candidate(run_ctx *r, candidate *c, hisp_context ctx, hisp_matrix A, hisp_op op,
                           const void *xh)
{
    int64_t xlen = op == HISP_OP_N ? r->cols : r->rows;
    int64_t ylen = op == HISP_OP_N ? r->rows : r->cols;
    c->ctx = ctx;
    c->A = A;
    hisp_status s = hisp_vector_create(ctx, r->type, xlen, &c->x);
    if (!s) s = hisp_vector_create(ctx, r->type, ylen, &c->y);
    if (!s) s = hisp_vector_write(c->x, xh);
    if (s) {
        report_error(ctx, c->impl, s);
        c->failed = 1;
    }
}

/* A^T as a CSR matrix of its own (the CSC arrays of A). */
static int explicit_transpose(hisp_context ctx, hisp_matrix A, hisp_type t, hisp_matrix *At)
{
    hisp_matrix C = NULL;
    hisp_matrix_info info;
    const int64_t *colptr;
    const int32_t *rowind;
    const void *val;
    hisp_status s = hisp_matrix_get_info(A, &info);
    if (!s) s = hisp_matrix_duplicate(A, HISP_FORMAT_CSC, &C);
    if (!s) s = hisp_matrix_host_arrays(C, &colptr, &rowind, NULL, &val);
    if (!s) s = hisp_matrix_create_csr(ctx, t, info.ncols, info.nrows, colptr, rowind, val, At);
    if (s) report_error(ctx, "explicit transpose", s);
    hisp_matrix_destroy(&C);
    return s ? -1 : 0;
}

/* x values: splitmix64, fresh but repeatable. */
static uint64_t rng_next(uint64_t *s)
{
    *s += 0x9e3779b97f4a7c15ull;
    uint64_t z = *s;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double rng_unit(uint64_t *s) /* [-1, 1) */
{
    return (double)(rng_next(s) >> 11) * 0x1.0p-52 - 1.0;
}

static void bench_matrix(machine *m, const options *o, const bench_matrix_def *d, hisp_type t,
                         bench_results *rs)
{
    hisp_matrix A = NULL, Acl = NULL, AtCl = NULL;
    double g0 = bench_now_ms();
    hisp_status s = hisp_matrix_generate(m->ref, &d->gen, t, &A);
    const char *how = "hisp_matrix_generate";
    if (s) {
        report_error(m->ref, d->name, s);
        return;
    }
    hisp_matrix_info info;
    const int64_t *rowptr;
    const int32_t *colind;
    const void *val;
    if (hisp_matrix_get_info(A, &info) || hisp_matrix_convert(A, HISP_FORMAT_CSR) ||
        hisp_matrix_host_arrays(A, &rowptr, NULL, &colind, &val)) {
        report_error(m->ref, d->name, HISP_ERR_INVALID_ARGUMENT);
        hisp_matrix_destroy(&A);
        return;
    }
    fprintf(stderr, "%s %s: %lld x %lld, %lld nnz (%s, %.0f ms)\n", d->name, hisp_type_name(t),
            (long long)info.nrows, (long long)info.ncols, (long long)info.nnz, how,
            bench_now_ms() - g0);

    size_t es = hisp_type_size(t);
    int64_t nr = info.nrows, nc = info.ncols, mx = nr > nc ? nr : nc;
    enum { NY = 4 };
    void *x = malloc((size_t)mx * es), *yref_n = malloc((size_t)nr * es);
    void *yref_t = malloc((size_t)nc * es), *y[NY];
    for (int i = 0; i < NY; i++)
        y[i] = malloc((size_t)mx * es);
    int64_t *bounds = malloc((size_t)(m->nthreads + 1) * sizeof *bounds);
    candidate cs[8];
    memset(cs, 0, sizeof cs);
    if (!x || !yref_n || !yref_t || !y[0] || !y[1] || !y[2] || !y[3] || !bounds) {
        fprintf(stderr, "%s: out of host memory\n", d->name);
        goto done;
    }
    uint64_t seed = 7;
    for (int64_t j = 0; j < mx; j++) {
        double v = rng_unit(&seed);
        if (t == HISP_F32)
            ((float *)x)[j] = (float)v;
        else
            ((double *)x)[j] = v;
    }
    nnz_bounds(rowptr, nr, m->nthreads, bounds);
    run_ctx r = {o, rs, d->name, t, nr, nc, info.nnz};
    int f32 = t == HISP_F32;

    /* The serial loop's results are the references. */
    loop_arg a = {nr, nc, info.nnz, rowptr, colind, val, x, yref_n, bounds, m->nthreads};
    (f32 ? serial_n_f32 : serial_n_f64)(&a);
    loop_arg at = a;
    at.y = yref_t;
    (f32 ? serial_t_f32 : serial_t_f64)(&at);

    if (m->cl) {
        /* The same arrays in the OpenCL context (a host copy). */
        s = hisp_matrix_create_csr(m->cl, t, nr, nc, rowptr, colind, val, &Acl);
        if (s) report_error(m->cl, "hisp_matrix_create_csr", s);
    }

    /* op = N */
    int n = 0;
    void (*loops[3])(void *) = {f32 ? serial_n_f32 : serial_n_f64,
                                f32 ? omp_static_f32 : omp_static_f64,
                                f32 ? omp_nnz_f32 : omp_nnz_f64};
    const char *names[3] = {"serial-c", "openmp-static", "openmp-nnz"};
    for (int i = 0; i < 3; i++, n++) {
        cs[n].impl = names[i];
        cs[n].fn = loops[i];
        cs[n].arg = a;
        cs[n].arg.y = y[i];
        cs[n].bw = m->host_bw;
        if (i == 0)
            snprintf(cs[n].device, sizeof cs[n].device, "cpu 1 thread");
        else
            snprintf(cs[n].device, sizeof cs[n].device, "cpu %d threads", m->nthreads);
    }
    cs[n].impl = "hisp-reference";
    snprintf(cs[n].device, sizeof cs[n].device, "host");
    cs[n].bw = m->host_bw;
    hisp_candidate(&r, &cs[n++], m->ref, A, HISP_OP_N, x);
    if (Acl) {
        cs[n].impl = "hisp-opencl";
        snprintf(cs[n].device, sizeof cs[n].device, "%s", m->cl_device);
        cs[n].bw = m->cl_bw;
        hisp_candidate(&r, &cs[n++], m->cl, Acl, HISP_OP_N, x);
    }
    measure(&r, cs, n, HISP_OP_N, yref_n, y[NY - 1]);
    for (int i = 0; i < n; i++) {
        hisp_vector_destroy(&cs[i].x);
        hisp_vector_destroy(&cs[i].y);
    }

    /* op = T */
    if (o->do_t) {
        memset(cs, 0, sizeof cs);
        n = 0;
        cs[n].impl = "serial-c";
        cs[n].fn = f32 ? serial_t_f32 : serial_t_f64;
        cs[n].arg = at;
        cs[n].arg.y = y[0];
        cs[n].bw = m->host_bw;
        snprintf(cs[n++].device, sizeof cs[0].device, "cpu 1 thread");
        cs[n].impl = "hisp-reference";
        snprintf(cs[n].device, sizeof cs[n].device, "host");
        cs[n].bw = m->host_bw;
        hisp_candidate(&r, &cs[n++], m->ref, A, HISP_OP_T, x);
        if (Acl) {
            cs[n].impl = "hisp-opencl";
            snprintf(cs[n].device, sizeof cs[n].device, "%s", m->cl_device);
            cs[n].bw = m->cl_bw;
            hisp_candidate(&r, &cs[n++], m->cl, Acl, HISP_OP_T, x);
            /* For comparison: op = N on A^T stored as its own CSR (what a
             * backend could build at upload for op = T; not timed). */
            if (!explicit_transpose(m->cl, Acl, t, &AtCl)) {
                cs[n].impl = "hisp-opencl-AT";
                snprintf(cs[n].device, sizeof cs[n].device, "%s", m->cl_device);
                cs[n].bw = m->cl_bw;
                cs[n].force_n = 1;
                hisp_candidate(&r, &cs[n++], m->cl, AtCl, HISP_OP_T, x);
            }
        }
        measure(&r, cs, n, HISP_OP_T, yref_t, y[NY - 1]);
        for (int i = 0; i < n; i++) {
            hisp_vector_destroy(&cs[i].x);
            hisp_vector_destroy(&cs[i].y);
        }
    }
done:
    hisp_matrix_destroy(&AtCl);
    hisp_matrix_destroy(&Acl);
    hisp_matrix_destroy(&A);
    free(x), free(yref_n), free(yref_t), free(bounds);
    for (int i = 0; i < NY; i++)
        free(y[i]);
}

/* Speed-up of hisp-opencl over serial-c, op = N, against the 1.3x. */
static void print_target(FILE *f, const bench_results *rs)
{
    fprintf(f, "\n### Target: hisp-opencl (PoCL) >= 1.3x serial-c (op = N)\n\n");
    fprintf(f, "| matrix | prec | serial-c ms | hisp-opencl ms | speed-up (medians) | speed-up "
               "(minima) | target |\n");
    fprintf(f, "|---|---|--:|--:|--:|--:|---|\n");
    int met = 0, total = 0;
    for (int i = 0; i < rs->n; i++) {
        const bench_result *b = &rs->v[i];
        if (strcmp(b->impl, "serial-c") || strcmp(b->op, "N")) continue;
        for (int j = 0; j < rs->n; j++) {
            const bench_result *r = &rs->v[j];
            if (strcmp(r->impl, "hisp-opencl") || strcmp(r->op, "N") ||
                strcmp(r->matrix, b->matrix) || strcmp(r->precision, b->precision))
                continue;
            double sp = b->median_ms / r->median_ms;
            total++;
            met += sp >= 1.3;
            fprintf(f, "| %s | %s | %.3f | %.3f | %.2fx | %.2fx | %s |\n", b->matrix, b->precision,
                    b->median_ms, r->median_ms, sp, b->min_ms / r->min_ms,
                    sp >= 1.3 ? "met" : "MISSED");
        }
    }
    fprintf(f, "\n%d of %d met (judged on the medians).\n", met, total);
}

/* The 1-minute load average: other work on this 2-core machine skews every
 * number, so the run records it at start and end. */
static double loadavg(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1) l = -1;
        fclose(f);
    }
    return l;
}

static const char *env_or(const char *name)
{
    const char *v = getenv(name);
    return v ? v : "(unset)";
}

static void cpu_model(char *buf, size_t n)
{
    snprintf(buf, n, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "model name", 10) == 0) {
            char *p = strchr(line, ':');
            if (p) {
                p += 1 + (p[1] == ' ');
                p[strcspn(p, "\n")] = 0;
                snprintf(buf, n, "%s", p);
            }
            break;
        }
    fclose(f);
}

/* On this 2-core VM, unpinned threads often share one core for a whole
 * scheduler slice: OpenMP loops then take ~8 ms instead of 0.4 ms, and PoCL
 * runs on one core. Pin both (OpenMP through OMP_PROC_BIND, PoCL's workers
 * through POCL_AFFINITY) unless the caller chose; the runtimes read these at
 * start-up, hence the re-exec. Returns only when nothing needs setting. */
static void pin_threads(char **argv)
{
    if (getenv("HISP_BENCH_NO_PIN")) return;
    int again = 0;
    if (!getenv("OMP_PROC_BIND")) again = !setenv("OMP_PROC_BIND", "close", 1);
    if (!getenv("OMP_PLACES")) again |= !setenv("OMP_PLACES", "cores", 1);
    if (!getenv("POCL_AFFINITY")) again |= !setenv("POCL_AFFINITY", "1", 1);
    if (!again) return;
    setenv("HISP_BENCH_NO_PIN", "1", 1); /* once */
    execv("/proc/self/exe", argv);
    /* exec failed: go on unpinned */
}

int main(int argc, char **argv)
{
    pin_threads(argv);
    options o;
    int prc = parse_args(argc, argv, &o);
    if (prc) return prc == OPTS_HELP_SHOWN ? 0 : 1;
    bench_matrix_def defs[BENCH_SUITE_MAX];
    int nd = bench_suite_select(&o.s, defs);
    if (nd < 0) return 1;

    machine m;
    memset(&m, 0, sizeof m);
    m.nthreads = omp_get_max_threads();
    hisp_status s = hisp_context_create(&m.ref);
    if (s) {
        fprintf(stderr, "hisp_context_create: %s\n", hisp_status_string(s));
        return 3;
    }
    if (!o.no_opencl) {
        s = hisp_context_create(&m.cl);
        if (!s) s = hisp_context_set_backend(m.cl, HISP_BACKEND_OPENCL, o.cl_device);
        hisp_device_info di;
        if (!s) s = hisp_context_get_device(m.cl, &di);
        if (s) {
            report_error(m.cl, "OpenCL backend (skipped)", s);
            hisp_context_destroy(&m.cl);
        } else {
            snprintf(m.cl_device, sizeof m.cl_device, "%.95s", di.name);
        }
    }

    /* Copy bandwidth: 2 x 128 MiB, far beyond the caches. */
    size_t cb = (size_t)128 << 20;
    m.host_bw = bench_host_copy_bandwidth(cb, 10);
    m.host_bw_omp = omp_copy_bandwidth(cb, 10);
    if (m.host_bw_omp > m.host_bw) m.host_bw = m.host_bw_omp; /* the best the host reaches */
    if (m.cl && (s = hisp_copy_bandwidth(m.cl, cb, 10, &m.cl_bw)))
        report_error(m.cl, "hisp_copy_bandwidth", s);

    char cpu[256], buf[8][128] = {{0}};
    cpu_model(cpu, sizeof cpu);
    struct utsname un;
    if (uname(&un)) snprintf(un.nodename, sizeof un.nodename, "?");
    snprintf(buf[0], sizeof buf[0], "%d", m.nthreads);
    snprintf(buf[1], sizeof buf[1], "%.2f", m.host_bw * 1e-9);
    snprintf(buf[2], sizeof buf[2], "%.2f", m.host_bw_omp * 1e-9);
    snprintf(buf[3], sizeof buf[3], "%.2f", m.cl_bw * 1e-9);
    snprintf(buf[4], sizeof buf[4], "%d", o.s.repeat);
    snprintf(buf[5], sizeof buf[5], "%d", o.s.warmup);
    const char *meta[] = {"cpu",
                          cpu,
                          "threads",
                          buf[0],
                          "host_copy_gbs",
                          buf[1],
                          "host_copy_omp_gbs",
                          buf[2],
                          "opencl_device",
                          m.cl ? m.cl_device : "none",
                          "opencl_copy_gbs",
                          buf[3],
                          "repeat",
                          buf[4],
                          "warmup",
                          buf[5],
                          "scale",
                          bench_scale_name(o.s.scale),
                          "hisp",
                          hisp_version_string(),
                          "loadavg_start",
                          buf[6],
                          "loadavg_end",
                          buf[7],
                          NULL};

    fprintf(stderr, "CPU: %s, %d OpenMP threads; OpenCL device: %s\n", cpu, m.nthreads,
            m.cl ? m.cl_device : "none");
    fprintf(stderr, "OMP_PROC_BIND=%s OMP_PLACES=%s POCL_AFFINITY=%s\n", env_or("OMP_PROC_BIND"),
            env_or("OMP_PLACES"), env_or("POCL_AFFINITY"));
    fprintf(stderr,
            "copy bandwidth (read+write): memcpy 1 thread %.2f GB/s, %d threads %.2f GB/s, "
            "OpenCL %.2f GB/s\n",
            bench_host_copy_bandwidth(cb, 5) * 1e-9, m.nthreads, m.host_bw_omp * 1e-9,
            m.cl_bw * 1e-9);

    bench_results rs = {0};
    double t0 = bench_now_ms(), load0 = loadavg();
    for (int i = 0; i < nd; i++) {
        if (o.s.f64) bench_matrix(&m, &o, &defs[i], HISP_F64, &rs);
        if (o.s.f32) bench_matrix(&m, &o, &defs[i], HISP_F32, &rs);
    }
    double load1 = loadavg();
    fprintf(stderr, "suite done in %.1f s; load average %.2f at start, %.2f at end\n",
            (bench_now_ms() - t0) * 1e-3, load0, load1);
    snprintf(buf[6], sizeof buf[6], "%.2f", load0);
    snprintf(buf[7], sizeof buf[7], "%.2f", load1);

    FILE *outs[2] = {stdout, o.md ? bench_open_out(o.md) : NULL};
    for (int k = 0; k < 2; k++) {
        FILE *f = outs[k];
        if (!f) continue;
        fprintf(f, "## CSR SpMV on the CPU (%s scale, median of %d after %d warm-up)\n\n",
                bench_scale_name(o.s.scale), o.s.repeat, o.s.warmup);
        fprintf(f, "CPU: %s, %d threads. OpenCL device: %s.\n", cpu, m.nthreads,
                m.cl ? m.cl_device : "none");
        fprintf(f,
                "Copy bandwidth (read + write): host memcpy best %.2f GB/s (%d threads %.2f), "
                "OpenCL buffer copy %.2f GB/s.\n\n",
                m.host_bw * 1e-9, m.nthreads, m.host_bw_omp * 1e-9, m.cl_bw * 1e-9);
        fprintf(f, "Load average (1 min) %.2f at start, %.2f at end; %s.\n\n", load0, load1,
                "GB/s: bytes of rowptr (8 B/row) + colind (4 B/nnz) + values + x + y, each once");
        bench_print_table(f, &rs, "serial-c");
        print_target(f, &rs);
    }
    bench_close_out(outs[1]);
    int rc = 0;
    if (o.csv) {
        FILE *f = bench_open_out(o.csv);
        if (f)
            bench_write_csv(f, &rs, 1);
        else
            rc = 1;
        bench_close_out(f);
    }
    if (o.json) {
        FILE *f = bench_open_out(o.json);
        if (f)
            bench_write_json(f, &rs, meta);
        else
            rc = 1;
        bench_close_out(f);
    }
    /* Any result far off the serial loop is a failure of the run. */
    for (int i = 0; i < rs.n; i++) {
        double tol = strcmp(rs.v[i].precision, "f32") == 0 ? 1e-4 : 1e-10;
        if (!(rs.v[i].rel_error <= tol)) {
            fprintf(stderr, "WRONG RESULT: %s %s %s %s rel. error %.2e\n", rs.v[i].matrix,
                    rs.v[i].precision, rs.v[i].op, rs.v[i].impl, rs.v[i].rel_error);
            rc = 2;
        }
    }
    bench_results_free(&rs);
    hisp_context_destroy(&m.cl);
    hisp_context_destroy(&m.ref);
    return rc;
}
