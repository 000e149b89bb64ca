/* hisp spmv: y = alpha*op(A)*x + beta*y on a chosen backend. */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char help[] =
    "usage: hisp spmv FILE.mtx|FILE.hisp|gen:KIND[:N[:SEED]] [options]\n"
    "\n"
    "Computes y = alpha*op(A)*x + beta*y with A read from FILE (or generated), on\n"
    "the chosen backend, and reports which backend and device ran it and the time\n"
    "of the call. Every entry type works: real (f32, f64), complex (c32, c64),\n"
    "quaternion (q32, q64) and 3x3 blocks (b3x3_f32, b3x3_f64, whose vectors are\n"
    "real with 3 entries per block). Entries multiply from the left\n"
    "(docs/COMPOUND.md).\n"
    "\n"
    "options:\n" CLI_TRANSPOSE_HELP
    "                       (complex and quaternion entries conjugated; --op n|t|h\n"
    "                       is an alias)\n"
    "  --format csr|hisparse|sell|auto  storage format used for the operation\n"
    "                       (default csr; sell (f32, f64): SELL-C-sigma slices of\n"
    "                       C rows padded to their longest; hisparse (f32, f64)\n"
    "                       walks the tree with the\n"
    "                       dynamic scheduler on any backend and reports its\n"
    "                       counts: nodes per queue, node-kernel launches, rounds,\n"
    "                       of the first call; on a device backend later calls\n"
    "                       replay its leaf queues in one round; auto times CSR,\n"
    "                       HiSparse, SELL and the compound layouts on the device,\n"
    "                       runs the fastest and keeps the choice in the plan\n"
    "                       cache, so a later auto on this matrix and device times\n"
    "                       nothing\n"
    "                       (see hisp tune))\n"
    "  --node-size d        HiSparse node size, a power of two in 4..256 (128)\n"
    "  --x X.mtx            x as a Matrix Market array of the vector type (default:\n"
    "                       scalar component k of x is 1/(k+1)); a file of c > 1\n"
    "                       columns (n x c) runs SpMM (hisp_spmm): every column\n"
    "                       at once for real CSR matrices; SELL, HiSparse and\n"
    "                       complex entries on a device column by column (not\n"
    "                       with --format auto); --y must then have c columns\n"
    "                       too, and -o writes y's c columns\n"
    "  --alpha a            default 1 (a real number)\n"
    "  --beta b             default 0 (a real number)\n"
    "  --y Y0.mtx           initial y (default zeros)\n"
    "  --check              also run on the reference backend and report the\n"
    "                       relative 2-norm error ||y - y_ref|| / ||y_ref|| over\n"
    "                       every scalar component\n"
    "  --repeat N           time N runs (after 3 warm-up runs, not timed) and report\n"
    "                       median and minimum ms, GFLOP/s = flops * nnz (* the\n"
    "                       columns) / median time (flops per entry: 2 real, 8\n"
    "                       complex, 32 quaternion, 18 3x3 block) and GB/s = bytes\n"
    "                       / median time, where bytes\n"
    "                       counts the CSR arrays (row pointers, column indices,\n"
    "                       values), x read once and y written once (and read when\n"
    "                       beta != 0), each of their columns\n"
    "  --layout L           compound entries, op n: run this variant's layout,\n"
    "                       OUTER-INNER-VEC, e.g. CSR-AoS-AoS, ELL-SoA-AoS,\n"
    "                       SELL16-SoA-SoA, SELL32-AoS-SoA (default CSR-AoS-AoS)\n"
    "  --schedule S         with --layout: static|dynamic[:NTxNB] (default static,\n"
    "                       device sizes)\n"
    "  --plan auto|FILE     the variant of a plan: auto = the plan cache (tuned with\n"
    "                       the fast search on a miss), or a file from\n"
    "                       hisp tune --save\n" CLI_TYPE_HELP CLI_BACKEND_HELP CLI_DEVICE_HELP
    "  -o FILE              write the result y as a Matrix Market array\n" CLI_OUT_ALIASES_HELP
    "  --json               machine-readable output: \"file\" (or \"generator\"),\n"
    "                       \"backend\", \"device\" {\"backend\", \"index\", \"name\",\n"
    "                       \"platform\", \"type\"}, \"format\", \"type\", \"op\", \"rows\",\n"
    "                       \"cols\", \"nnz\", \"columns\" (of x and y), \"alpha\", \"beta\",\n"
    "                       \"timing\", \"check\",\n"
    "                       \"transfers\", \"kernels\"\n" CLI_HELP_HELP "\n"
    "Time: the wall time of the result's call to hisp_spmv followed by a\n"
    "synchronize (\"call_ms\"). Without --repeat that is the first call (with\n"
    "--format hisparse the one after the scheduling call): it includes uploading\n"
    "A and x, not the kernels built on the way (\"kernels\", below); --repeat\n"
    "times warm calls. Over several columns the call is hisp_spmm and --repeat\n"
    "times each warm call the same way, by the wall clock with a synchronize\n"
    "(\"clock\": \"wall\"): SpMM has no device-timed form.\n"
    "\n" CLI_TRANSFERS_HELP
    "With --repeat: the warm-up and timed runs (hisp_spmv_timed); the first run\n"
    "uploads the matrix and x (for op t or h of compound entries also op(A), built\n"
    "once), runs on device-resident data add nothing. Without: the one SpMV with\n"
    "its uploads and the read of y.\n"
    "\n" CLI_BUILDS_HELP "The warm-up runs take the builds: the timed runs never include one.\n"
    "\n" CLI_GEN_SPEC_HELP "\n"
    "exit status:\n"
    "  0  success\n"
    "  1  usage error\n"
    "  2  input error: malformed or unreadable file, sizes that do not match,\n"
    "     invalid value\n"
    "  3  backend or device error: backend not compiled in, no device, kernel\n"
    "     build or device failure, out of device memory\n"
    "  5  --check: the relative error exceeds 1e-4 (f32 components) or 1e-10 (f64);\n"
    "     the result is still reported (and written with -o)\n";

enum {
    O_TYPE, /* CLI_TYPE_OPTS: --type, --entry, --precision */
    O_ENTRY,
    O_PREC,
    O_T,
    O_OP,
    O_BACKEND,
    O_DEVICE,
    O_FORMAT,
    O_NODE,
    O_X,
    O_ALPHA,
    O_BETA,
    O_Y,
    O_OUT, /* CLI_OUT_OPTS: -o, --out, --output */
    O_OUT2,
    O_OUT3,
    O_CHECK,
    O_REPEAT,
    O_JSON,
    O_LAYOUT,
    O_SCHED,
    O_PLAN,
    O_HELP,
    O_HELP2
};

/* Reads a vector file of one column or several (*cols) and checks its rows;
 * host copy in *out (column after column). */
static int read_vector(hisp_context ctx, const char *path, hisp_type t, int64_t want,
                       const char *what, void **out, int64_t *cols)
{
    hisp_vector v = NULL;
    int64_t n = 0, k = 1;
    hisp_order order;
    cli_progress("reading %s", path);
    hisp_status s = hisp_vector_read_mtx(ctx, path, t, &v);
    if (!s) s = hisp_vector_size(v, &n);
    if (!s) s = hisp_vector_columns(v, &k, &order);
    if (s) {
        hisp_vector_destroy(&v);
        return cli_fail(ctx, s, path);
    }
    if (k == 1 && n != want) {
        hisp_vector_destroy(&v);
        return cli_value_error("%s: %s has %lld entries, op(A) needs %lld", path, what,
                               (long long)n, (long long)want);
    }
    if (k > 1 && n / k != want) {
        hisp_vector_destroy(&v);
        return cli_value_error("%s: %s has %lld rows (of %lld columns), op(A) needs %lld", path,
                               what, (long long)(n / k), (long long)k, (long long)want);
    }
    *cols = k;
    *out = malloc((size_t)(n > 0 ? n : 1) * hisp_type_size(t));
    if (!*out) s = HISP_ERR_OUT_OF_HOST_MEMORY;
    if (!s) s = hisp_vector_read(v, *out);
    hisp_vector_destroy(&v);
    return s ? cli_fail(ctx, s, path) : CLI_OK;
}

/* hisp spmv's command line. */
typedef struct {
    const char *path, *out, *xpath, *ypath; /* --x, --y (NULL when absent) */
    const char *layout, *schedule, *plan;   /* the compound path when any is given */
    bool json;
    cli_spmv_job job;
    hisp_backend_kind backend;
    int device;
    cli_type ct;
} spmv_opts;

/* Parses the command line into o; returns CLI_OK, an exit code, or
 * CLI_HELP_SHOWN. */
static int spmv_parse(int argc, char **argv, spmv_opts *o)
{
    static const cli_opt opts[] = {
        CLI_TYPE_OPTS,        CLI_TRANSPOSE_OPT,  {"--op", true},        {"--backend", true},
        {"--device", true},   {"--format", true}, {"--node-size", true}, {"--x", true},
        {"--alpha", true},    {"--beta", true},   {"--y", true},         CLI_OUT_OPTS,
        {"--check", false},   {"--repeat", true}, {"--json", false},     {"--layout", true},
        {"--schedule", true}, {"--plan", true},   CLI_HELP_OPTS,         {0, 0}};
    const char *val[O_HELP] = {0};
    memset(o, 0, sizeof *o);
    int rc = cli_parse_command("spmv", argc, argv, opts, help, val, &o->path);
    if (rc) return rc;
    if (!o->path) return cli_usage_error("spmv", "missing FILE.mtx");
    o->json = val[O_JSON] != NULL;
    cli_progress_enable(o->json);
    o->job = (cli_spmv_job){.op = HISP_OP_N,
                            .format = HISP_FORMAT_CSR,
                            .alpha = 1,
                            .beta = 0,
                            .repeat = 0,
                            .warmup = 3,
                            .check = val[O_CHECK] != NULL};
    cli_spmv_job *job = &o->job;
    o->backend = HISP_BACKEND_AUTO;
    o->device = -1;
    o->xpath = val[O_X];
    o->ypath = val[O_Y];
    o->layout = val[O_LAYOUT];
    o->schedule = val[O_SCHED];
    o->plan = val[O_PLAN];
    rc = cli_parse_type("spmv", val, &o->ct);
    if (!rc) rc = cli_parse_transpose("spmv", val[O_T], val[O_OP], &job->op);
    if (!rc) rc = cli_parse_out("spmv", val + O_OUT, &o->out);
    if (!rc && val[O_BACKEND]) rc = cli_parse_backend("--backend", val[O_BACKEND], &o->backend);
    if (!rc && val[O_DEVICE]) rc = cli_parse_int("--device", val[O_DEVICE], 0, 1 << 20, &o->device);
    if (!rc && val[O_FORMAT]) {
        rc = cli_parse_format("spmv", val[O_FORMAT], &job->format, &job->auto_format);
    }
    if (!rc && val[O_NODE]) rc = cli_parse_int("--node-size", val[O_NODE], 4, 256, &job->node_size);
    if (!rc && val[O_ALPHA]) rc = cli_parse_double("--alpha", val[O_ALPHA], &job->alpha);
    if (!rc && val[O_BETA]) rc = cli_parse_double("--beta", val[O_BETA], &job->beta);
    if (!rc && val[O_REPEAT])
        rc = cli_parse_int("--repeat", val[O_REPEAT], 1, 1000000, &job->repeat);
    if (rc) return rc;
    if ((o->layout || o->schedule || o->plan) &&
        (val[O_T] || val[O_OP] || o->xpath || o->ypath || o->out || val[O_FORMAT]))
        return cli_usage_error("spmv", "--layout/--schedule/--plan take none of "
                                       "--transpose (--op), --x, --y, -o, --format");
    return CLI_OK;
}

/* hisp spmv's matrix, vectors and result; spmv_state_free releases it. */
typedef struct {
    hisp_context ctx;
    hisp_matrix A;
    hisp_matrix_info mi;
    hisp_type vt;     /* the vectors' type */
    int64_t m, n;     /* op(A) is m x n vector entries */
    int64_t cols;     /* x's and y's columns (1, or more for SpMM) */
    void *x, *y0;     /* --x, --y (NULL: the defaults) */
    const char *fmt;  /* the format run, as reported */
    char chosen[160]; /* --format auto: the choice's name */
    cli_spmv_result res;
} spmv_state;

/* ctx on the chosen backend (a missing device is reported before a long
 * read), A, and --x and --y checked against op(A)'s sizes. */
static int spmv_load(spmv_state *st, spmv_opts *o)
{
    int rc;
    hisp_status s = hisp_context_set_backend(st->ctx, o->backend, o->device);
    if (s) return cli_fail(st->ctx, s, NULL);
    if ((rc = cli_load_matrix(st->ctx, o->path, &o->ct, &st->A, NULL))) return rc;
    s = hisp_matrix_get_info(st->A, &st->mi);
    st->vt = st->mi.type;
    int per = 1;
    if (!s) s = hisp_compound_vector_type(st->mi.type, &st->vt, &per);
    if (s) return cli_fail(st->ctx, s, o->path);
    hisp_op op = o->job.op;
    st->m = (op == HISP_OP_N ? st->mi.nrows : st->mi.ncols) * per;
    st->n = (op == HISP_OP_N ? st->mi.ncols : st->mi.nrows) * per;
    int64_t kx = 1, ky = 1;
    if (o->xpath && (rc = read_vector(st->ctx, o->xpath, st->vt, st->n, "x", &st->x, &kx)))
        return rc;
    if (o->ypath && (rc = read_vector(st->ctx, o->ypath, st->vt, st->m, "y", &st->y0, &ky)))
        return rc;
    if (o->ypath && ky != kx)
        return cli_value_error("%s: y has %lld column%s, x %lld", o->ypath, (long long)ky,
                               ky == 1 ? "" : "s", (long long)kx);
    o->job.cols = kx;
    o->job.x = st->x;
    o->job.y0 = st->y0;
    return CLI_OK;
}

/* -o FILE: y as a Matrix Market array (of y's columns). */
static int spmv_write_y(const spmv_state *st, const char *out)
{
    hisp_vector yv = NULL;
    cli_progress("writing %s", out);
    int64_t k = st->cols;
    hisp_status s = k > 1
                        ? hisp_vector_create_columns(st->ctx, st->vt, st->m, k, HISP_ORDER_COL, &yv)
                        : hisp_vector_create(st->ctx, st->vt, st->m, &yv);
    if (!s) s = hisp_vector_write(yv, st->res.y);
    if (!s) s = hisp_vector_write_mtx(yv, out);
    hisp_vector_destroy(&yv);
    return s ? cli_fail(st->ctx, s, out) : CLI_OK;
}

/* The "scheduler" member of a --format hisparse run. */
static void json_sched(cli_json *j, const hisp_sched_counts *sc)
{
    json_object_begin(j, "scheduler");
    json_int(j, "rounds", sc->rounds);
    json_int(j, "launches", sc->total_launches);
    json_int(j, "nodes", sc->total_nodes);
    json_array_begin(j, "queues");
    for (int q = 0; q < sc->queues; q++) {
        json_object_begin(j, NULL);
        json_string(j, "name", hisp_sched_queue_name(q));
        json_int(j, "nodes", sc->nodes[q]);
        json_int(j, "launches", sc->launches[q]);
        json_object_end(j);
    }
    json_array_end(j);
    json_object_end(j);
}

static void spmv_report_json(const spmv_opts *o, const spmv_state *st)
{
    static const char *const opn[3] = {"N", "T", "H"};
    const cli_spmv_job *job = &o->job;
    const cli_spmv_result *res = &st->res;
    cli_json j;
    json_init(&j, stdout);
    json_object_begin(&j, NULL);
    json_input(&j, o->path);
    json_string(&j, "backend", hisp_backend_name(res->device.backend));
    json_device(&j, "device", &res->device);
    json_string(&j, "format", st->fmt);
    if (res->have_choice) {
        json_object_begin(&j, "format_choice");
        json_bool(&j, "from_cache", res->choice.from_cache);
        json_string(&j, "chosen", st->chosen);
        json_double(&j, "ms", res->choice.best.ms);
        json_double(&j, "csr_ms", res->choice.csr_ms);
        json_double(&j, "tune_ms", res->choice.tune_ms);
        json_object_end(&j);
    }
    json_string(&j, "type", hisp_type_name(st->mi.type));
    json_string(&j, "op", opn[job->op]);
    json_bool(&j, "transpose", job->op != HISP_OP_N);
    json_int(&j, "rows", st->mi.nrows);
    json_int(&j, "cols", st->mi.ncols);
    json_int(&j, "nnz", st->mi.nnz);
    json_int(&j, "columns", st->cols);
    json_double(&j, "alpha", job->alpha);
    json_double(&j, "beta", job->beta);
    if (o->out) json_string(&j, "out", o->out);
    json_object_begin(&j, "timing");
    json_double(&j, "call_ms", res->call_ms);
    if (job->repeat > 0) {
        json_int(&j, "repeat", job->repeat);
        json_int(&j, "warmup", job->warmup);
        if (st->cols > 1) json_string(&j, "clock", "wall");
        json_double(&j, "median_ms", res->median_ms);
        json_double(&j, "min_ms", res->min_ms);
        json_double(&j, "gflops", res->gflops);
        json_double(&j, "gbps", res->gbps);
        json_uint(&j, "bytes", res->model_bytes);
        json_string(&j, "byte_model", CLI_BYTE_MODEL);
    }
    json_object_end(&j);
    if (res->have_sched) json_sched(&j, &res->sched);
    if (job->check) {
        json_check(&j, res->rel_error, res->tolerance);
    }
    json_transfers(&j, &res->xfer, NULL);
    json_builds(&j, &res->builds);
    json_object_end(&j);
    json_finish(&j);
}

/* bad: the check failed. */
static void spmv_report_text(const spmv_opts *o, const spmv_state *st, bool bad)
{
    const cli_spmv_job *job = &o->job;
    const cli_spmv_result *res = &st->res;
    const hisp_matrix_info *mi = &st->mi;
    printf("matrix     %s: %lld x %lld, %lld nonzeros, %s\n", o->path, (long long)mi->nrows,
           (long long)mi->ncols, (long long)mi->nnz, hisp_type_name(mi->type));
    if (st->cols > 1)
        printf("operation  Y = %g*%s*X + %g*Y over %lld columns (%s, SpMM)\n", job->alpha,
               cli_op_name(job->op), job->beta, (long long)st->cols, st->fmt);
    else
        printf("operation  y = %g*%s*x + %g*y (%s)\n", job->alpha, cli_op_name(job->op), job->beta,
               res->have_choice ? st->chosen : st->fmt);
    if (res->have_choice)
        printf("format     auto: %s, %.4f ms per call against CSR's %.4f ms (%s)\n", st->chosen,
               res->choice.best.ms, res->choice.csr_ms,
               res->choice.from_cache ? "from the plan cache" : "timed now, cached");
    printf("backend    %s, device %d: %s (%s, %s)\n", hisp_backend_name(res->device.backend),
           res->device.index, res->device.name, res->device.platform,
           cli_device_kind(&res->device));
    if (job->repeat <= 0)
        printf("time       %.4f ms, one call with a synchronize (the first: uploads "
               "included, kernel builds not)\n",
               res->call_ms);
    if (job->repeat > 0) {
        printf("time       median %.4f ms, min %.4f ms (%d runs after %d warm-up%s)\n",
               res->median_ms, res->min_ms, job->repeat, job->warmup,
               st->cols > 1 ? "; wall time of each call with a synchronize" : "");
        printf("rate       %.3f GFLOP/s, %.3f GB/s (%llu bytes per run: the %s form + x "
               "+ y%s)\n",
               res->gflops, res->gbps, (unsigned long long)res->model_bytes,
               strcmp(st->fmt, "variant") == 0 ? "layout's" : st->fmt,
               st->cols > 1 ? ", all columns" : "");
    }
    cli_print_transfers("transfers", &res->xfer);
    cli_print_builds("kernels", &res->builds);
    if (res->have_sched) {
        const hisp_sched_counts *sc = &res->sched;
        printf("scheduler  %lld rounds, %lld launches, %lld nodes:", (long long)sc->rounds,
               (long long)sc->total_launches, (long long)sc->total_nodes);
        for (int q = 0; q < sc->queues; q++)
            if (sc->nodes[q]) printf(" %s %lld", hisp_sched_queue_name(q), (long long)sc->nodes[q]);
        printf("\n");
    }
    if (job->check)
        printf("check      relative error vs reference %.3e (tolerance %.0e): %s\n", res->rel_error,
               res->tolerance, bad ? "FAILED" : "ok");
    if (o->out) printf("wrote      %s\n", o->out);
}

int cmd_spmv(int argc, char **argv)
{
    spmv_opts o;
    int rc = spmv_parse(argc, argv, &o);
    if (rc) return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
    if (o.layout || o.schedule || o.plan)
        return cli_spmv_compound(o.path, &o.ct, o.layout, o.schedule, o.plan, o.backend, o.device,
                                 o.job.repeat, o.job.check, o.json, o.job.alpha, o.job.beta);
    spmv_state st;
    memset(&st, 0, sizeof st);
    if ((rc = cli_context(&st.ctx))) return rc;
    if ((rc = spmv_load(&st, &o))) goto out;
    st.cols = o.job.cols > 1 ? o.job.cols : 1;
    if ((rc = cli_spmv_run(st.ctx, st.A, &o.job, &st.res))) goto out;
    if (o.out && (rc = spmv_write_y(&st, o.out))) goto out;
    const cli_spmv_result *res = &st.res;
    bool bad = o.job.check && !(res->rel_error <= res->tolerance);
    st.fmt = hisp_format_name(o.job.format);
    if (res->have_choice) {
        st.fmt = cli_choice_kind(&res->choice.best);
        if (hisp_format_result_name(&res->choice.best, st.chosen, sizeof st.chosen))
            st.chosen[0] = 0;
    }
    if (o.json)
        spmv_report_json(&o, &st);
    else
        spmv_report_text(&o, &st, bad);
    if (bad) {
        fprintf(stderr, "hisp: warning: relative error %.3e exceeds the tolerance %.0e\n",
                res->rel_error, res->tolerance);
        rc = CLI_CHECK;
    }
out:
    free(st.res.y);
    free(st.x);
    free(st.y0);
    hisp_matrix_destroy(&st.A);
    hisp_context_destroy(&st.ctx);
    return rc;
}
