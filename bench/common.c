/* Shared helpers of the bench programs; see common.h. */
#include "common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- suite ---------------------------------------------------------------- */

static const char *const scale_names[] = {"small", "medium", "gpu", NULL};

int bench_scale_from_name(const char *name, bench_scale *scale)
{
    for (int i = 0; i < 3; i++)
        if (name && strcmp(name, scale_names[i]) == 0) {
            *scale = (bench_scale)i;
            return 0;
        }
    return -1;
}

const char *bench_scale_name(bench_scale scale)
{
    return (unsigned)scale < 3 ? scale_names[scale] : "?";
}

/* Every field set here: the suite must not change when generator defaults do. */
static bench_matrix_def def(const char *name, hisp_gen_kind kind, int64_t n, int64_t bandwidth,
                            double nnz_per_row, int scale, int edge_factor, int block,
                            double dense_share)
{
    bench_matrix_def d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "%s", name);
    d.gen.kind = kind;
    d.gen.n = n;
    d.gen.seed = 42;
    d.gen.bandwidth = bandwidth;
    d.gen.nnz_per_row = nnz_per_row;
    d.gen.scale = scale;
    d.gen.edge_factor = edge_factor;
    d.gen.block = block;
    d.gen.dense_share = dense_share;
    return d;
}

int bench_suite(bench_scale scale, bench_matrix_def *d)
{
    int k = 0;
    switch (scale) {
    case BENCH_SCALE_SMALL:
        d[k++] = def("poisson2d", HISP_GEN_POISSON2D, 300, 0, 0, 0, 0, 0, 0);
        d[k++] = def("poisson3d", HISP_GEN_POISSON3D, 40, 0, 0, 0, 0, 0, 0);
        d[k++] = def("banded", HISP_GEN_BANDED, 100000, 16, 8, 0, 0, 0, 0);
        d[k++] = def("random", HISP_GEN_RANDOM, 100000, 0, 8, 0, 0, 0, 0);
        d[k++] = def("rmat", HISP_GEN_RMAT, 0, 0, 0, 16, 8, 0, 0);
        d[k++] = def("dense", HISP_GEN_DENSE, 500, 0, 0, 0, 0, 0, 0);
        d[k++] = def("circuit", HISP_GEN_CIRCUIT, 100000, 0, 6, 0, 0, 0, 0.3);
        d[k++] = def("blockdiag", HISP_GEN_BLOCKDIAG, 100000, 0, 0, 0, 0, 8, 0);
        break;
    case BENCH_SCALE_MEDIUM: /* 2-core CPU: 1-10M nnz each */
        d[k++] = def("poisson2d", HISP_GEN_POISSON2D, 1000, 0, 0, 0, 0, 0, 0);
        d[k++] = def("poisson3d", HISP_GEN_POISSON3D, 100, 0, 0, 0, 0, 0, 0);
        d[k++] = def("banded", HISP_GEN_BANDED, 500000, 16, 16, 0, 0, 0, 0);
        d[k++] = def("random", HISP_GEN_RANDOM, 500000, 0, 10, 0, 0, 0, 0);
        d[k++] = def("rmat", HISP_GEN_RMAT, 0, 0, 0, 19, 8, 0, 0);
        d[k++] = def("dense", HISP_GEN_DENSE, 1500, 0, 0, 0, 0, 0, 0);
        d[k++] = def("circuit", HISP_GEN_CIRCUIT, 500000, 0, 8, 0, 0, 0, 0.3);
        d[k++] = def("blockdiag", HISP_GEN_BLOCKDIAG, 500000, 0, 0, 0, 0, 8, 0);
        break;
    case BENCH_SCALE_GPU: /* the GPU suite */
        d[k++] = def("poisson3d", HISP_GEN_POISSON3D, 160, 0, 0, 0, 0, 0, 0);
        d[k++] = def("banded", HISP_GEN_BANDED, 2000000, 16, 16, 0, 0, 0, 0);
        d[k++] = def("rmat", HISP_GEN_RMAT, 0, 0, 0, 22, 8, 0, 0);
        d[k++] = def("dense", HISP_GEN_DENSE, 4096, 0, 0, 0, 0, 0, 0);
        d[k++] = def("circuit", HISP_GEN_CIRCUIT, 2000000, 0, 8, 0, 0, 0, 0.3);
        d[k++] = def("blockdiag", HISP_GEN_BLOCKDIAG, 2000000, 0, 0, 0, 0, 8, 0);
        break;
    }
    return k;
}

int bench_suite_filter(bench_matrix_def *defs, int n, const char *list)
{
    if (!list || !*list || strcmp(list, "all") == 0) return n;
    bench_matrix_def keep[BENCH_SUITE_MAX];
    int k = 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int i = 0; i < n; i++)
            if (strcmp(defs[i].name, tok) == 0) found = i;
        if (found < 0) {
            fprintf(stderr, "unknown matrix '%s'; the suite has:", tok);
            for (int i = 0; i < n; i++)
                fprintf(stderr, " %s", defs[i].name);
            fprintf(stderr, "\n");
            return -1;
        }
        if (k < BENCH_SUITE_MAX) keep[k++] = defs[found];
    }
    memcpy(defs, keep, (size_t)k * sizeof *keep);
    return k;
}

/* ---- command line --------------------------------------------------------- */

int bench_suite_args(const char *prog, const char *const *val, bench_suite_opts *o)
{
    static const char *const precisions[] = {"f64", "f32", "both", NULL};
    int scale = (int)o->scale, prec = o->f64 && o->f32 ? 2 : o->f32 ? 1 : 0;
    int rc = opts_choice(prog, "--scale", val[BENCH_O_SCALE], scale_names, &scale);
    if (!rc) rc = opts_choice(prog, "--precision", val[BENCH_O_PRECISION], precisions, &prec);
    if (!rc) rc = opts_int(prog, "--repeat", val[BENCH_O_REPEAT], 1, 1000000, &o->repeat);
    if (!rc) rc = opts_int(prog, "--warmup", val[BENCH_O_WARMUP], 0, 1000000, &o->warmup);
    if (val[BENCH_O_MATRICES]) o->matrices = val[BENCH_O_MATRICES];
    o->scale = (bench_scale)scale;
    o->f64 = prec != 1;
    o->f32 = prec != 0;
    return rc;
}

int bench_suite_parse(const char *prog, int argc, char **argv, const opts_def *opts,
                      const char *help, const char **val, bench_suite_opts *o)
{
    int rc = opts_parse(prog, argc, argv, opts, help, val, NULL);
    return rc ? rc : bench_suite_args(prog, val, o);
}

int bench_suite_select(const bench_suite_opts *o, bench_matrix_def *defs)
{
    return bench_suite_filter(defs, bench_suite(o->scale, defs), o->matrices);
}

bool bench_suite_has_type(const bench_suite_opts *o, hisp_type t)
{
    return t == HISP_F32 ? o->f32 : t == HISP_F64 && o->f64;
}

int bench_backend_arg(const char *prog, const char *s, hisp_backend_kind *out)
{
    static const char *const names[] = {"reference", "opencl", "cuda", NULL};
    _Static_assert(HISP_BACKEND_REFERENCE == 0 && HISP_BACKEND_OPENCL == 1 &&
                       HISP_BACKEND_CUDA == 2,
                   "names[] follows hisp_backend_kind");
    int k = (int)*out;
    int rc = opts_choice(prog, "--backend", s, names, &k);
    *out = (hisp_backend_kind)k;
    return rc;
}

bool bench_ok(const char *prog, hisp_context ctx, hisp_status s, const char *what)
{
    if (s == HISP_SUCCESS) return true;
    hisp_error_info e = {0};
    if (hisp_context_last_error(ctx, &e)) e.message = "";
    fprintf(stderr, "%s: %s: %s: %s\n", prog, what, hisp_status_string(s),
            e.message ? e.message : "");
    return false;
}

hisp_context bench_context(const char *prog, hisp_backend_kind backend, int device,
                           hisp_device_info *info)
{
    hisp_context ctx = NULL;
    if (hisp_context_create(&ctx)) {
        fprintf(stderr, "%s: cannot create a context\n", prog);
        return NULL;
    }
    if (!bench_ok(prog, ctx, hisp_context_set_backend(ctx, backend, device), "backend") ||
        !bench_ok(prog, ctx, hisp_context_get_device(ctx, info), "device"))
        hisp_context_destroy(&ctx);
    return ctx;
}

/* ---- time and statistics -------------------------------------------------- */

double bench_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(const double *v, int n)
{
    if (n < 1) return NAN;
    double small[64];
    double *t = n <= 64 ? small : malloc((size_t)n * sizeof *t);
    if (!t) return NAN;
    memcpy(t, v, (size_t)n * sizeof *t);
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    double m = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    if (t != small) free(t);
    return m;
}

double bench_min(const double *v, int n)
{
    double m = n > 0 ? v[0] : NAN;
    for (int i = 1; i < n; i++)
        if (v[i] < m) m = v[i];
    return m;
}

void bench_time_host(void (*fn)(void *), void *arg, int warmup, int repeat, double *ms)
{
    for (int i = 0; i < warmup; i++)
        fn(arg);
    for (int i = 0; i < repeat; i++) {
        double t0 = bench_now_ms();
        fn(arg);
        ms[i] = bench_now_ms() - t0;
    }
}

typedef struct {
    void *dst;
    const void *src;
    size_t bytes;
} copy_arg;

static void do_copy(void *p)
{
    copy_arg *a = p;
    memcpy(a->dst, a->src, a->bytes);
    /* keep the copy from being optimised away */
    __asm__ __volatile__("" : : "r"(a->dst) : "memory");
}

double bench_host_copy_bandwidth(size_t bytes, int repeat)
{
    if (repeat < 1 || bytes == 0) return 0;
    char *src = malloc(bytes), *dst = malloc(bytes);
    double *ms = malloc((size_t)repeat * sizeof *ms);
    double bw = 0;
    if (src && dst && ms) {
        memset(src, 1, bytes); /* touch the pages before timing */
        memset(dst, 0, bytes);
        copy_arg a = {dst, src, bytes};
        bench_time_host(do_copy, &a, 2, repeat, ms);
        double med = bench_median(ms, repeat);
        if (med > 0) bw = 2.0 * (double)bytes / (med * 1e-3);
    }
    free(src);
    free(dst);
    free(ms);
    return bw;
}

/* ---- CSR SpMV models ------------------------------------------------------ */

double bench_csr_spmv_flops(int64_t nnz)
{
    return 2.0 * (double)nnz;
}

double bench_csr_spmv_bytes(int64_t nrows, int64_t ncols, int64_t nnz, size_t ptr_bytes,
                            size_t val_bytes, hisp_op op, int beta_nonzero)
{
    double xlen = (double)(op == HISP_OP_N ? ncols : nrows);
    double ylen = (double)(op == HISP_OP_N ? nrows : ncols);
    double b = (double)(nrows + 1) * (double)ptr_bytes;
    b += (double)nnz * (4.0 + (double)val_bytes);
    b += xlen * (double)val_bytes;
    b += ylen * (double)val_bytes * (beta_nonzero ? 2.0 : 1.0);
    return b;
}

/* ---- checks --------------------------------------------------------------- */

double bench_rel_error(hisp_type type, const void *y, const void *ref, int64_t n)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        double a, b;
        if (type == HISP_F32) {
            a = ((const float *)y)[i];
            b = ((const float *)ref)[i];
        } else {
            a = ((const double *)y)[i];
            b = ((const double *)ref)[i];
        }
        num += (a - b) * (a - b);
        den += b * b;
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* ---- results -------------------------------------------------------------- */

void bench_result_finish(bench_result *r, const double *ms, int repeat, size_t ptr_bytes,
                         size_t val_bytes, int beta_nonzero, double copy_bw)
{
    r->median_ms = bench_median(ms, repeat);
    r->min_ms = bench_min(ms, repeat);
    hisp_op op = r->op[0] == 'T' ? HISP_OP_T : HISP_OP_N;
    double s = r->median_ms * 1e-3;
    r->gflops = s > 0 ? bench_csr_spmv_flops(r->nnz) / s * 1e-9 : 0;
    double bytes =
        bench_csr_spmv_bytes(r->rows, r->cols, r->nnz, ptr_bytes, val_bytes, op, beta_nonzero);
    r->gbs = s > 0 ? bytes / s * 1e-9 : 0;
    r->bw_fraction = copy_bw > 0 ? r->gbs * 1e9 / copy_bw : 0;
}

int bench_results_add(bench_results *rs, const bench_result *r)
{
    if (rs->n == rs->cap) {
        int cap = rs->cap ? 2 * rs->cap : 64;
        bench_result *v = realloc(rs->v, (size_t)cap * sizeof *v);
        if (!v) return -1;
        rs->v = v;
        rs->cap = cap;
    }
    rs->v[rs->n++] = *r;
    return 0;
}

void bench_results_free(bench_results *rs)
{
    free(rs->v);
    rs->v = NULL;
    rs->n = rs->cap = 0;
}

static const bench_result *find_base(const bench_results *rs, const bench_result *r,
                                     const char *impl)
{
    for (int i = 0; i < rs->n; i++) {
        const bench_result *b = &rs->v[i];
        if (strcmp(b->impl, impl) == 0 && strcmp(b->matrix, r->matrix) == 0 &&
            strcmp(b->precision, r->precision) == 0 && strcmp(b->op, r->op) == 0)
            return b;
    }
    return NULL;
}

void bench_print_table(FILE *f, const bench_results *rs, const char *base_impl)
{
    fprintf(f,
            "| matrix | prec | op | impl | device | rows | nnz | median ms | min ms | GFLOP/s "
            "| GB/s | of copy BW | rel. error |%s\n",
            base_impl ? " speed-up |" : "");
    fprintf(f, "|---|---|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|%s\n",
            base_impl ? "--:|" : "");
    for (int i = 0; i < rs->n; i++) {
        const bench_result *r = &rs->v[i];
        fprintf(f,
                "| %s | %s | %s | %s | %s | %lld | %lld | %.3f | %.3f | %.2f | %.2f | %.0f%% "
                "| %.1e |",
                r->matrix, r->precision, r->op, r->impl, r->device, (long long)r->rows,
                (long long)r->nnz, r->median_ms, r->min_ms, r->gflops, r->gbs,
                100.0 * r->bw_fraction, r->rel_error);
        if (base_impl) {
            const bench_result *b = find_base(rs, r, base_impl);
            if (b && r->median_ms > 0)
                fprintf(f, " %.2fx |", b->median_ms / r->median_ms);
            else
                fprintf(f, " - |");
        }
        fprintf(f, "\n");
    }
}

/* CSV fields never contain quotes; commas in free text become ';'. */
static void csv_text(FILE *f, const char *s)
{
    for (; *s; s++)
        fputc(*s == ',' || *s == '\n' ? ';' : *s, f);
}

void bench_write_csv(FILE *f, const bench_results *rs, int header)
{
    if (header)
        fprintf(f, "matrix,precision,op,impl,device,rows,cols,nnz,median_ms,min_ms,gflops,gbs,"
                   "bw_fraction,rel_error\n");
    for (int i = 0; i < rs->n; i++) {
        const bench_result *r = &rs->v[i];
        csv_text(f, r->matrix);
        fprintf(f, ",%s,%s,", r->precision, r->op);
        csv_text(f, r->impl);
        fputc(',', f);
        csv_text(f, r->device);
        fprintf(f, ",%lld,%lld,%lld,%.6g,%.6g,%.6g,%.6g,%.6g,%.3e\n", (long long)r->rows,
                (long long)r->cols, (long long)r->nnz, r->median_ms, r->min_ms, r->gflops, r->gbs,
                r->bw_fraction, r->rel_error);
    }
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void json_num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.6g", v);
    else
        fprintf(f, "null");
}

void bench_write_json(FILE *f, const bench_results *rs, const char *const *meta)
{
    fprintf(f, "{\"machine\": {");
    for (int i = 0; meta && meta[i] && meta[i + 1]; i += 2) {
        if (i) fprintf(f, ", ");
        json_str(f, meta[i]);
        fprintf(f, ": ");
        json_str(f, meta[i + 1]);
    }
    fprintf(f, "},\n \"results\": [");
    for (int i = 0; i < rs->n; i++) {
        const bench_result *r = &rs->v[i];
        fprintf(f, "%s\n  {\"matrix\": ", i ? "," : "");
        json_str(f, r->matrix);
        fprintf(f, ", \"precision\": \"%s\", \"op\": \"%s\", \"impl\": ", r->precision, r->op);
        json_str(f, r->impl);
        fprintf(f, ", \"device\": ");
        json_str(f, r->device);
        fprintf(f, ", \"rows\": %lld, \"cols\": %lld, \"nnz\": %lld", (long long)r->rows,
                (long long)r->cols, (long long)r->nnz);
        const char *k[] = {"median_ms", "min_ms", "gflops", "gbs", "bw_fraction", "rel_error"};
        double v[] = {r->median_ms, r->min_ms, r->gflops, r->gbs, r->bw_fraction, r->rel_error};
        for (int j = 0; j < 6; j++) {
            fprintf(f, ", \"%s\": ", k[j]);
            json_num(f, v[j]);
        }
        fprintf(f, "}");
    }
    fprintf(f, "\n]}\n");
}

FILE *bench_open_out(const char *path)
{
    if (strcmp(path, "-") == 0) return stdout;
    FILE *f = fopen(path, "w");
    if (!f) perror(path);
    return f;
}

void bench_close_out(FILE *f)
{
    if (f && f != stdout) fclose(f);
}

int bench_sides(const char *prog, const char *list, int64_t *sides, int max, int *n)
{
    *n = 0;
    for (const char *q = list; *q;) {
        char *end = NULL;
        long long side = strtoll(q, &end, 10);
        if (end == q || side < 2 || *n == max || (*end && *end != ',')) {
            fprintf(stderr, "%s: --sides: not a list of at most %d sides >= 2: '%s'\n", prog, max,
                    list);
            return 1;
        }
        sides[(*n)++] = side;
        q = *end == ',' ? end + 1 : end;
    }
    if (*n) return 0;
    fprintf(stderr, "%s: --sides: empty\n", prog);
    return 1;
}
