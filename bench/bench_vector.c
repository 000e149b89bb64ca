/* Vector algebra bandwidth: axpby, dot, nrm2, axpby_dot and copy through the
 * public API on one backend, against the measured copy bandwidth
 * (hisp_copy_bandwidth) and, for f32/f64, an OpenMP C loop (the CPU peer).
 *
 * Two times per operation, after warm-up calls (the kernel build and the
 * upload happen there): per call, a synchronize after each call (what a
 * caller waits for; median), and back to back, `repeat` calls then one
 * synchronize (the throughput a solver loop sees). Reductions write their
 * result to a device entry (hisp_result_entry) so nothing waits on the host.
 * GB/s counts the bytes each operation must move once (axpby and axpby_dot
 * 3n entries, dot and copy 2n, nrm2 n). Run with --help for the options.
 */
#include "common.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    hisp_backend_kind backend;
    int device;
    int64_t n;
    hisp_type type;
    int repeat, threads;
    const char *json;
} options;

static const char prog[] = "bench_vector";
static const char help[] =
    "usage: bench_vector [options]\n"
    "Vector algebra (axpby, dot, nrm2, axpby_dot, copy) through the public API.\n"
    "  --backend B         reference, opencl or cuda (default opencl)\n"
    "  --device N          device index (default: first)\n"
    "  --n N               entries (default 8388608)\n"
    "  --type T            f32 f64 c32 c64 q32 q64 (default f64)\n"
    "  --repeat N          timed calls (default 20)\n"
    "  --threads N         OpenMP threads of the C peer (default 2)\n"
    "  --json FILE         write the results as JSON\n"
    "  --help              this text\n";

enum { O_BACKEND, O_DEVICE, O_N, O_TYPE, O_REPEAT, O_THREADS, O_JSON };
static const opts_def opts[] = {{"--backend", true}, {"--device", true}, {"--n", true},
                                {"--type", true},    {"--repeat", true}, {"--threads", true},
                                {"--json", true},    OPTS_HELP_DEFS,     {0, 0}};

/* OPTS_OK, OPTS_HELP_SHOWN, or an error (printed). */
static int parse(int argc, char **argv, options *o)
{
    *o = (options){HISP_BACKEND_OPENCL, -1, 8388608, HISP_F64, 20, 2, NULL};
    const char *val[sizeof opts / sizeof *opts] = {0};
    int rc = opts_parse(prog, argc, argv, opts, help, val, NULL);
    if (!rc) rc = bench_backend_arg(prog, val[O_BACKEND], &o->backend);
    if (!rc) rc = opts_int(prog, "--device", val[O_DEVICE], 0, 1 << 20, &o->device);
    if (!rc) rc = opts_i64(prog, "--n", val[O_N], 1, (int64_t)1 << 40, &o->n);
    if (!rc && val[O_TYPE] && hisp_type_from_name(val[O_TYPE], &o->type))
        rc = opts_value_error(prog, "--type: unknown type '%s'", val[O_TYPE]);
    if (!rc) rc = opts_int(prog, "--repeat", val[O_REPEAT], 1, 1000000, &o->repeat);
    if (!rc) rc = opts_int(prog, "--threads", val[O_THREADS], 1, 4096, &o->threads);
    if (val[O_JSON]) o->json = val[O_JSON];
    return rc;
}

enum { OP_AXPBY, OP_DOT, OP_NRM2, OP_AXPBY_DOT, OP_COPY, OP_COUNT };
static const char *const op_name[OP_COUNT] = {"axpby", "dot", "nrm2", "axpby_dot", "copy"};
static const int op_streams[OP_COUNT] = {3, 2, 1, 3, 2}; /* entries moved per index */

typedef struct {
    hisp_vector x, y, r, rr;
    unsigned char a[32], b[32];
} vecs;

static hisp_status run_op(int op, vecs *v)
{
    hisp_scalar a = hisp_scalar_host(v->a), b = hisp_scalar_host(v->b);
    switch (op) {
    case OP_AXPBY:
        return hisp_vector_axpby(a, v->x, b, v->y);
    case OP_DOT:
        return hisp_vector_dot(v->x, v->y, hisp_result_entry(v->r, 0));
    case OP_NRM2:
        return hisp_vector_nrm2(v->x, hisp_result_entry(v->rr, 0));
    case OP_AXPBY_DOT:
        return hisp_vector_axpby_dot(a, v->x, b, v->y, NULL, hisp_result_entry(v->r, 1));
    default:
        return hisp_vector_copy(v->x, v->y);
    }
}

/* The OpenMP peer on plain arrays (f32/f64). */
typedef struct {
    int op, dbl;
    int64_t n;
    void *x, *y;
    double a, b, r;
} peer;

#define PEER_LOOPS(T)                                                                              \
    do {                                                                                           \
        T *x = p->x, *y = p->y, a = (T)p->a, b = (T)p->b;                                          \
        int64_t n = p->n;                                                                          \
        double s = 0;                                                                              \
        switch (p->op) {                                                                           \
        case OP_AXPBY:                                                                             \
            _Pragma("omp parallel for schedule(static)") for (int64_t i = 0; i < n; i++) y[i] =    \
                a * x[i] + b * y[i];                                                               \
            break;                                                                                 \
        case OP_DOT:                                                                               \
            _Pragma("omp parallel for schedule(static) reduction(+ : s)") for (int64_t i = 0;      \
                                                                               i < n; i++) s +=    \
                (double)x[i] * y[i];                                                               \
            break;                                                                                 \
        case OP_NRM2:                                                                              \
            _Pragma("omp parallel for schedule(static) reduction(+ : s)") for (int64_t i = 0;      \
                                                                               i < n; i++) s +=    \
                (double)x[i] * x[i];                                                               \
            break;                                                                                 \
        case OP_AXPBY_DOT:                                                                         \
            _Pragma("omp parallel for schedule(static) reduction(+ : s)") for (int64_t i = 0;      \
                                                                               i < n; i++)         \
            {                                                                                      \
                T e = a * x[i] + b * y[i];                                                         \
                y[i] = e;                                                                          \
                s += (double)e * e;                                                                \
            }                                                                                      \
            break;                                                                                 \
        default:                                                                                   \
            _Pragma("omp parallel for schedule(static)") for (int64_t i = 0; i < n; i++) y[i] =    \
                x[i];                                                                              \
        }                                                                                          \
        p->r = s;                                                                                  \
    } while (0)

static void peer_run(void *arg)
{
    peer *p = arg;
    if (p->dbl)
        PEER_LOOPS(double);
    else
        PEER_LOOPS(float);
}

int main(int argc, char **argv)
{
    options o;
    int rc = parse(argc, argv, &o);
    if (rc) return rc == OPTS_HELP_SHOWN ? 0 : 1;
    hisp_context ctx = NULL;
    if (hisp_context_create(&ctx)) return 1;
    size_t es = hisp_type_size(o.type), ss = es / (size_t)hisp_type_components(o.type);
    int dbl = ss == 8, real = hisp_type_components(o.type) == 1;
    size_t bytes = (size_t)o.n * es;
    vecs v;
    memset(&v, 0, sizeof v);
    unsigned char *h = malloc(bytes);
    if (!h) return 1;
    for (size_t i = 0; i < bytes / ss; i++) {
        double u = (double)((i * 2654435761u) % 1000) / 1000.0 - 0.5;
        if (dbl)
            ((double *)h)[i] = u;
        else
            ((float *)h)[i] = (float)u;
    }
    if (dbl)
        ((double *)v.a)[0] = 0.5, ((double *)v.b)[0] = 0.25;
    else
        ((float *)v.a)[0] = 0.5f, ((float *)v.b)[0] = 0.25f;
    peer p = {0, dbl, o.n, NULL, NULL, 0.5, 0.25, 0};
    if (real && o.backend != HISP_BACKEND_CUDA) {
        p.x = malloc(bytes);
        p.y = malloc(bytes);
        if (!p.x || !p.y) return 1;
        omp_set_num_threads(o.threads);
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < o.n; i++) { /* first touch by the threads that use them */
            memcpy((char *)p.x + (size_t)i * es, h + (size_t)i * es, es);
            memcpy((char *)p.y + (size_t)i * es, h + (size_t)i * es, es);
        }
    }
    double *t = malloc(sizeof(double) * (size_t)o.repeat), peer_ms[OP_COUNT] = {0};
    if (!t) return 1;
    /* the peer first: PoCL's worker threads, once started, compete with it */
    for (int op = 0; op < OP_COUNT && p.x; op++) {
        p.op = op;
        bench_time_host(peer_run, &p, 2, o.repeat, t);
        peer_ms[op] = bench_median(t, o.repeat);
    }
    if (!bench_ok(prog, ctx, hisp_context_set_backend(ctx, o.backend, o.device), "set backend"))
        return 1;
    hisp_device_info info;
    if (!bench_ok(prog, ctx, hisp_context_get_device(ctx, &info), "device info")) return 1;
    hisp_status s = hisp_vector_create(ctx, o.type, o.n, &v.x);
    if (!s) s = hisp_vector_create(ctx, o.type, o.n, &v.y);
    if (!s) s = hisp_vector_create(ctx, o.type, 2, &v.r);
    if (!s) s = hisp_vector_create(ctx, dbl ? HISP_F64 : HISP_F32, 1, &v.rr);
    if (!s) s = hisp_vector_write(v.x, h);
    if (!s) s = hisp_vector_write(v.y, h);
    if (!bench_ok(prog, ctx, s, "vectors")) return 1;
    double copy_bps = 0;
    if (!bench_ok(prog, ctx, hisp_copy_bandwidth(ctx, bytes, 10, &copy_bps), "copy bandwidth"))
        return 1;

    printf("# bench_vector: %s %s (%s), n = %lld, %s; copy bandwidth %.2f GB/s\n",
           hisp_backend_name(o.backend), info.name, info.platform, (long long)o.n,
           hisp_type_name(o.type), copy_bps * 1e-9);
    printf("%-10s %12s %12s %9s %8s %12s %9s %10s\n", "op", "call_ms", "b2b_ms", "GB/s", "of_copy",
           "omp_ms", "omp_GB/s", "hisp/omp");
    FILE *js = o.json ? fopen(o.json, "w") : NULL;
    if (js)
        fprintf(js,
                "{\"backend\": \"%s\", \"device\": \"%s\", \"type\": \"%s\", \"n\": %lld, "
                "\"copy_gbs\": %.4f, \"omp_threads\": %d, \"results\": [",
                hisp_backend_name(o.backend), info.name, hisp_type_name(o.type), (long long)o.n,
                copy_bps * 1e-9, o.threads);
    for (int op = 0; op < OP_COUNT; op++) {
        for (int w = 0; w < 3; w++)
            if (!bench_ok(prog, ctx, run_op(op, &v), op_name[op])) return 1;
        if (!bench_ok(prog, ctx, hisp_context_synchronize(ctx), "synchronize")) return 1;
        for (int i = 0; i < o.repeat; i++) {
            double t0 = bench_now_ms();
            s = run_op(op, &v);
            if (!s) s = hisp_context_synchronize(ctx);
            t[i] = bench_now_ms() - t0;
            if (!bench_ok(prog, ctx, s, op_name[op])) return 1;
        }
        double call = bench_median(t, o.repeat);
        double t0 = bench_now_ms();
        for (int i = 0; i < o.repeat && !s; i++)
            s = run_op(op, &v);
        if (!s) s = hisp_context_synchronize(ctx);
        if (!bench_ok(prog, ctx, s, op_name[op])) return 1;
        double b2b = (bench_now_ms() - t0) / o.repeat;
        double moved = (double)op_streams[op] * (double)bytes;
        double gbs = moved / (b2b * 1e-3) * 1e-9;
        double pms = 0, pgbs = 0;
        if (p.x) {
            pms = peer_ms[op];
            pgbs = moved / (pms * 1e-3) * 1e-9;
        }
        printf("%-10s %12.4f %12.4f %9.2f %7.1f%% ", op_name[op], call, b2b, gbs,
               100 * gbs / (copy_bps * 1e-9));
        if (p.x)
            printf("%12.4f %9.2f %9.2fx\n", pms, pgbs, b2b / pms);
        else
            printf("%12s %9s %10s\n", "-", "-", "-");
        if (js)
            fprintf(js,
                    "%s\n  {\"op\": \"%s\", \"call_ms\": %.5f, \"b2b_ms\": %.5f, \"gbs\": %.4f, "
                    "\"bw_fraction\": %.4f, \"omp_ms\": %.5f, \"omp_gbs\": %.4f}",
                    op ? "," : "", op_name[op], call, b2b, gbs, gbs / (copy_bps * 1e-9), pms, pgbs);
    }
    if (js) {
        fprintf(js, "\n]}\n");
        fclose(js);
    }
    free(t);
    free(h);
    free(p.x);
    free(p.y);
    hisp_vector_destroy(&v.x);
    hisp_vector_destroy(&v.y);
    hisp_vector_destroy(&v.r);
    hisp_vector_destroy(&v.rr);
    hisp_context_destroy(&ctx);
    return 0;
}
