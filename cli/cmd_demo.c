/* hisp demo: what ./hisp.sh demo runs. Picks the best backend, generates
 * matrices, runs timed SpMV checked against the reference and prints a
 * short table. */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char help[] =
    "usage: hisp demo [options]\n"
    "\n"
    "Picks the best backend (CUDA when a GPU answers, else OpenCL - PoCL on a\n"
    "CPU - else the reference), generates poisson3d (n^3 rows, 7-point) and an\n"
    "R-MAT power-law graph, runs timed CSR SpMV y = A*x on each, checks y\n"
    "against the reference backend, and prints backend, device, matrix, rows,\n"
    "nnz, median time, GFLOP/s, GB/s and the relative error.\n"
    "\n"
    "options:\n"
    "  --n N                poisson3d grid side (default: sized for the device,\n"
    "                       at least 64: 262144 rows)\n"
    "  --scale S            rmat scale, 2^S vertices (default: sized for the\n"
    "                       device, at least 16; 0 skips rmat)\n"
    "  --repeat N           timed runs per matrix after 3 warm-up runs (default 20)\n"
    "  --type f32|f64       entry type (default f64; --entry and --precision are\n"
    "                       aliases)\n" CLI_BACKEND_HELP CLI_DEVICE_HELP
    "  --json               machine-readable output: \"backend\", \"device\", \"type\",\n"
    "                       \"results\" (one per matrix, each with its \"transfers\"),\n"
    "                       \"transfers\" (their sum)\n" CLI_HELP_HELP "\n"
    "GFLOP/s = 2*nnz / median time; GB/s = bytes / median time, where bytes\n"
    "counts the CSR arrays (row pointers, column indices, values), x read once\n"
    "and y written once.\n"
    "\n"
    "Sizes: without --n / --scale the demo measures the device's copy bandwidth\n"
    "(a large hisp_vector_copy) and sizes each matrix so that one SpMV moves\n"
    "what the device copies in 1 ms (at least the sizes above; at most an\n"
    "eighth of the device's and the host's memory; rmat a third of that, its\n"
    "scattered reads being slower; at most scale 24, and on a CPU device n = 128\n"
    "and scale 20, a few seconds in all).\n"
    "\n" CLI_TRANSFERS_HELP
    "Per matrix: the warm-up and timed runs; the first run uploads the matrix and x.\n"
    "\n" CLI_BUILDS_HELP
    "The warm-up runs take each matrix's builds: the timed runs never include one.\n"
    "\n"
    "exit status: 0 ok, 1 usage, 2 invalid value, 3 backend or device error,\n"
    "5 an error against the reference above 1e-4 (f32) or 1e-10 (f64).\n";

typedef struct {
    char matrix[64];
    cli_spmv_result r;
} demo_row;

/* Sizes for the device: one SpMV moves what it copies in TARGET_MS (at
 * least the defaults), within an eighth of device and host memory. */
enum { TARGET_MS = 1, MIN_N = 64, MIN_SCALE = 16 };

typedef struct {
    bool sized;       /* chosen from the measurement */
    double copy_gbps; /* measured */
    uint64_t budget;  /* bytes one SpMV should move */
} demo_sizing;

static void size_for_device(const hisp_device_info *dev, hisp_type t, double copy_gbps, bool want_n,
                            bool want_scale, int64_t *n, int *scale, demo_sizing *sz)
{
    double es = (double)hisp_type_size(t);
    double budget = copy_gbps * 1e9 * TARGET_MS * 1e-3;
    double cap = 1e300;
    if (dev->global_mem) cap = (double)dev->global_mem / 8;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) cap = fmin(cap, (double)pages * (double)page / 8);
    budget = fmin(budget, cap);
    sz->sized = true;
    sz->copy_gbps = copy_gbps;
    sz->budget = (uint64_t)budget;
    bool cpu = !dev->is_gpu;
    if (want_n) { /* poisson3d: 7 entries, a pointer, x and y per row */
        double per_row = 7 * (es + 4) + 8 + 2 * es;
        double side = ceil(cbrt(budget / per_row));
        side = fmax(side, MIN_N);
        side = fmin(side, cpu ? 128 : 1290); /* n^3 < 2^31 rows */
        if (side * side * side * per_row > cap) side = fmax(MIN_N, floor(cbrt(cap / per_row)));
        *n = (int64_t)side;
    }
    if (want_scale && *scale > 0) {
        /* rmat: about edge_factor (8) entries per vertex; its scattered x
         * reads run at a fraction of the copy bandwidth (a quarter to a half
         * on PoCL here), so a third of the budget takes about as long; the
         * generator's time caps the scale at 24 (20 on a CPU) */
        double per_vertex = 8 * (es + 4) + 8 + 2 * es;
        int sc = (int)ceil(log2(fmax(budget / 3 / per_vertex, 1)));
        if (sc < MIN_SCALE) sc = MIN_SCALE;
        if (sc > (cpu ? 20 : 24)) sc = cpu ? 20 : 24;
        while (sc > MIN_SCALE && ldexp(per_vertex, sc) > cap)
            sc--;
        *scale = sc;
    }
}

/* Why each backend tried before `chosen` in AUTO's order was passed over. */
static int skipped_backends(hisp_context ctx, hisp_backend_kind chosen, hisp_backend_kind *kinds,
                            char notes[][256])
{
    static const hisp_backend_kind order[] = {HISP_BACKEND_CUDA, HISP_BACKEND_OPENCL};
    int n = 0;
    for (size_t i = 0; i < sizeof order / sizeof order[0] && order[i] != chosen; i++) {
        int count = 0;
        hisp_error_info e = {0};
        if (!hisp_backend_compiled(order[i])) {
            snprintf(notes[n], 256, "not compiled into this build");
        } else {
            hisp_status s = hisp_backend_device_count(ctx, order[i], &count);
            if (hisp_context_last_error(ctx, &e) == HISP_SUCCESS && e.message && e.message[0])
                snprintf(notes[n], 256, "%s", e.message);
            else
                snprintf(notes[n], 256, "%s", s ? hisp_status_string(s) : "no device found");
        }
        kinds[n++] = order[i];
    }
    return n;
}

/* hisp demo's command line. */
typedef struct {
    bool json, n_given, scale_given; /* --n, --scale: else sized for the device */
    int64_t n;
    int scale, device;
    hisp_backend_kind backend;
    hisp_type type;
    cli_spmv_job job;
} demo_opts;

enum {
    D_N,
    D_SCALE,
    D_BACKEND,
    D_DEVICE,
    D_TYPE, /* CLI_TYPE_OPTS: --type, --entry, --precision */
    D_ENTRY,
    D_PREC,
    D_REPEAT,
    D_JSON,
    D_HELP,
    D_HELP2
};

/* Parses the command line into o; returns CLI_OK, an exit code, or
 * CLI_HELP_SHOWN. */
static int demo_parse(int argc, char **argv, demo_opts *o)
{
    static const cli_opt opts[] = {{"--n", true},      {"--scale", true}, {"--backend", true},
                                   {"--device", true}, CLI_TYPE_OPTS,     {"--repeat", true},
                                   {"--json", false},  CLI_HELP_OPTS,     {0, 0}};
    const char *val[D_HELP] = {0};
    memset(o, 0, sizeof *o);
    int rc = cli_parse_command("demo", argc, argv, opts, help, val, NULL);
    if (rc) return rc;
    o->json = val[D_JSON] != NULL;
    o->n_given = val[D_N] != NULL;
    o->scale_given = val[D_SCALE] != NULL;
    o->n = 64;
    o->scale = 16;
    o->device = -1;
    o->backend = HISP_BACKEND_AUTO;
    o->type = HISP_F64;
    o->job = (cli_spmv_job){.op = HISP_OP_N,
                            .alpha = 1,
                            .beta = 0,
                            .repeat = 20,
                            .warmup = 3,
                            .check = true,
                            .format = HISP_FORMAT_CSR};
    if (!rc && val[D_N]) rc = cli_parse_i64("--n", val[D_N], 1, 1290, &o->n); /* n^3 < 2^31 */
    if (!rc && val[D_SCALE]) rc = cli_parse_int("--scale", val[D_SCALE], 0, 26, &o->scale);
    if (!rc && val[D_BACKEND]) rc = cli_parse_backend("--backend", val[D_BACKEND], &o->backend);
    if (!rc && val[D_DEVICE]) rc = cli_parse_int("--device", val[D_DEVICE], 0, 1 << 20, &o->device);
    cli_type ct;
    if (!rc) rc = cli_parse_type("demo", val + D_TYPE, &ct);
    if (!rc && ct.given) o->type = ct.type;
    if (!rc && !cli_type_real(o->type))
        rc = cli_type_unsupported("demo", o->type,
                                  "its matrices are real, f32 or f64; hisp spmv gen:helmholtz, "
                                  "gen:qsurface, gen:fem3x3 or gen:elastic3d runs the others");
    if (!rc && val[D_REPEAT])
        rc = cli_parse_int("--repeat", val[D_REPEAT], 1, 100000, &o->job.repeat);
    return rc;
}

/* What hisp demo reports: the device, the backends auto skipped, the
 * sizing and one row per matrix. */
typedef struct {
    hisp_device_info dev;
    hisp_backend_kind skipped[2];
    char notes[2][256];
    int nskipped;
    demo_sizing sz;
    demo_row rows[2];
    int nrows;
    bool bad; /* an error against the reference exceeds the tolerance */
} demo_result;

/* ctx on the chosen device (d->dev); the sizes of the matrices (o->n,
 * o->scale) where the command line left them out; the backends skipped. */
static int demo_device(hisp_context ctx, demo_opts *o, demo_result *d)
{
    int rc;
    cli_progress("selecting the %s backend", hisp_backend_name(o->backend));
    hisp_status s = hisp_context_set_backend(ctx, o->backend, o->device);
    if (!s) s = hisp_context_get_device(ctx, &d->dev);
    if (s) return cli_fail(ctx, s, NULL);
    if (!o->n_given || !o->scale_given) {
        double gbps = 0;
        if ((rc = cli_copy_bandwidth(ctx, &gbps))) return rc;
        size_for_device(&d->dev, o->type, gbps, !o->n_given, !o->scale_given, &o->n, &o->scale,
                        &d->sz);
    }
    d->nskipped = o->backend == HISP_BACKEND_AUTO
                      ? skipped_backends(ctx, d->dev.backend, d->skipped, d->notes)
                      : 0;
    return CLI_OK;
}

/* Generates and runs the matrices (poisson3d n, and rmat scale unless 0)
 * into d->rows. */
static int demo_run(hisp_context ctx, const demo_opts *o, demo_result *d)
{
    hisp_gen_params params[2];
    int nmat = 0, rc = CLI_OK;
    hisp_gen_defaults(HISP_GEN_POISSON3D, &params[nmat]);
    params[nmat++].n = o->n;
    if (o->scale > 0) {
        hisp_gen_defaults(HISP_GEN_RMAT, &params[nmat]);
        params[nmat++].scale = o->scale;
    }
    for (int i = 0; i < nmat && !rc; i++) {
        hisp_matrix A = NULL;
        const char *kind = hisp_gen_name(params[i].kind);
        demo_row *row = &d->rows[d->nrows];
        if (params[i].kind == HISP_GEN_RMAT)
            snprintf(row->matrix, sizeof row->matrix, "%s scale=%d", kind, params[i].scale);
        else
            snprintf(row->matrix, sizeof row->matrix, "%s n=%lld", kind, (long long)params[i].n);
        cli_progress("generating %s", row->matrix);
        hisp_status s = hisp_matrix_generate(ctx, &params[i], o->type, &A);
        if (s) {
            rc = cli_fail(ctx, s, NULL);
            break;
        }
        rc = cli_spmv_run(ctx, A, &o->job, &row->r);
        hisp_matrix_destroy(&A);
        if (rc) break;
        free(row->r.y); /* only the numbers are reported */
        row->r.y = NULL;
        if (!(row->r.rel_error <= row->r.tolerance)) d->bad = true;
        d->nrows++;
    }
    return rc;
}

static void demo_report_json(const demo_opts *o, const demo_result *d)
{
    cli_json j;
    json_init(&j, stdout);
    json_object_begin(&j, NULL);
    json_string(&j, "backend", hisp_backend_name(d->dev.backend));
    json_device(&j, "device", &d->dev);
    json_array_begin(&j, "skipped_backends");
    for (int i = 0; i < d->nskipped; i++) {
        json_object_begin(&j, NULL);
        json_string(&j, "name", hisp_backend_name(d->skipped[i]));
        json_string(&j, "reason", d->notes[i]);
        json_object_end(&j);
    }
    json_array_end(&j);
    json_string(&j, "type", hisp_type_name(o->type));
    json_object_begin(&j, "sizing");
    json_bool(&j, "auto", d->sz.sized);
    if (d->sz.sized) {
        json_double(&j, "copy_gbps", d->sz.copy_gbps);
        json_int(&j, "target_ms", TARGET_MS);
        json_uint(&j, "target_bytes", d->sz.budget);
    }
    json_object_end(&j);
    json_int(&j, "repeat", o->job.repeat);
    json_int(&j, "warmup", o->job.warmup);
    json_string(&j, "byte_model", CLI_BYTE_MODEL);
    json_array_begin(&j, "results");
    hisp_transfer_stats sum = {0};
    for (int i = 0; i < d->nrows; i++) {
        const cli_spmv_result *r = &d->rows[i].r;
        json_object_begin(&j, NULL);
        json_string(&j, "matrix", d->rows[i].matrix);
        json_int(&j, "rows", r->m);
        json_int(&j, "cols", r->n);
        json_int(&j, "nnz", r->nnz);
        json_double(&j, "median_ms", r->median_ms);
        json_double(&j, "min_ms", r->min_ms);
        json_double(&j, "gflops", r->gflops);
        json_double(&j, "gbps", r->gbps);
        json_uint(&j, "bytes", r->model_bytes);
        json_double(&j, "rel_error", r->rel_error);
        json_double(&j, "tolerance", r->tolerance);
        json_bool(&j, "ok", r->rel_error <= r->tolerance);
        json_transfers(&j, &r->xfer, NULL);
        json_builds(&j, &r->builds);
        json_object_end(&j);
        sum.h2d_bytes += r->xfer.h2d_bytes;
        sum.d2h_bytes += r->xfer.d2h_bytes;
        sum.control_bytes += r->xfer.control_bytes;
    }
    json_array_end(&j);
    json_transfers(&j, &sum, NULL);
    json_object_end(&j);
    json_finish(&j);
}

static void demo_report_text(const demo_opts *o, const demo_result *d)
{
    const hisp_device_info *dev = &d->dev;
    const char *dtype = dev->is_gpu ? "gpu" : dev->is_cpu ? "cpu" : "other";
    char devname[29];
    snprintf(devname, sizeof devname, "%.28s", dev->name);
    if (strlen(dev->name) >= sizeof devname) strcpy(devname + sizeof devname - 4, "...");
    printf("hisp %s demo: CSR SpMV y = A*x, %s, median of %d runs after %d warm-up\n",
           hisp_version_string(), hisp_type_name(o->type), o->job.repeat, o->job.warmup);
    for (int i = 0; i < d->nskipped; i++)
        printf("(%s backend not used: %s)\n", hisp_backend_name(d->skipped[i]), d->notes[i]);
    printf("\n%-9s  %-28s  %-16s  %9s  %10s  %9s  %8s  %7s  %9s\n", "backend", "device", "matrix",
           "rows", "nnz", "time(ms)", "GFLOP/s", "GB/s", "error");
    for (int i = 0; i < d->nrows; i++) {
        const cli_spmv_result *r = &d->rows[i].r;
        printf("%-9s  %-28s  %-16s  %9lld  %10lld  %9.3f  %8.2f  %7.2f  %9.2e%s\n",
               hisp_backend_name(dev->backend), devname, d->rows[i].matrix, (long long)r->m,
               (long long)r->nnz, r->median_ms, r->gflops, r->gbps, r->rel_error,
               r->rel_error <= r->tolerance ? "" : " FAILED");
    }
    printf("\ndevice: %s (%s, %s)\n", dev->name, dev->platform, dtype);
    hisp_build_stats b = {0}, none = {0};
    for (int i = 0; i < d->nrows; i++)
        cli_builds_add(&b, &none, &d->rows[i].r.builds);
    cli_print_builds("kernels:", &b);
    if (d->sz.sized)
        printf("sizes: copy bandwidth %.1f GB/s measured; one SpMV to move >= %.3g MB (%d ms "
               "of copying), within an eighth of memory\n",
               d->sz.copy_gbps, (double)d->sz.budget * 1e-6, TARGET_MS);
    printf("error: ||y - y_ref|| / ||y_ref|| against the reference backend\n");
    printf("GB/s: bytes of the CSR arrays + x + y per run / median time\n");
}

int cmd_demo(int argc, char **argv)
{
    demo_opts o;
    int rc = demo_parse(argc, argv, &o);
    if (rc) return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
    cli_progress_enable(o.json);
    hisp_context ctx = NULL;
    if ((rc = cli_context(&ctx))) return rc;
    demo_result d;
    memset(&d, 0, sizeof d);
    rc = demo_device(ctx, &o, &d);
    if (!rc) rc = demo_run(ctx, &o, &d);
    hisp_context_destroy(&ctx);
    if (rc) return rc;
    if (o.json)
        demo_report_json(&o, &d);
    else
        demo_report_text(&o, &d);
    if (d.bad) {
        fprintf(stderr, "hisp: warning: an error against the reference exceeds the tolerance\n");
        return CLI_CHECK;
    }
    return CLI_OK;
}
