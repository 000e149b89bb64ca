/* hisp mspmv: SpMV over several devices with the MSREP partial formats: the
 * options, the plan and the timed calls (mspmv_setup.c the inputs and the
 * check, mspmv_report.c the output). */
#include "mspmv.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static const char help[] =
    "usage: hisp mspmv FILE.mtx|FILE.hisp|gen:KIND[:N[:SEED]] [options]\n"
    "\n"
    "Computes y = alpha*op(A)*x + beta*y over several devices (MSREP): A is cut\n"
    "into one part per device, each device receives only its part and keeps it,\n"
    "one host thread per device runs the single-device CSR kernel, and the\n"
    "partial results are merged (row segments, or partial vectors summed): on the\n"
    "host, or on the first device with --resident on CUDA. Reports the one-time\n"
    "cost (conversion, partition, distribution), the per-SpMV cost (x sent,\n"
    "compute, results gathered, merge) and the load balance (nonzeros and time\n"
    "per device).\n"
    "\n"
    "options:\n"
    "  --devices N|all      how many parts, one per device (default all: every\n"
    "                       device of the backend; with --device I: 1). More than\n"
    "                       the backend has: several contexts (queues) share a\n"
    "                       device\n"
    "  --partition K        pcsr (default), pcsc, pcoo: nonzero-balanced parts;\n"
    "                       rowblock, colblock: equal row / column counts (baselines)\n"
    "  --format csr|hisparse  single-device format of the parts (default csr;\n"
    "                       hisparse: each part becomes a HiSparse tree run by the\n"
    "                       scheduler)\n" CLI_TRANSPOSE_HELP
    "                       (--op n|t|h is an alias)\n"
    "  --x X.mtx            x as a Matrix Market array (default x_j = 1/(j+1))\n"
    "  --alpha a, --beta b  defaults 1 and 0\n"
    "  --y Y0.mtx           initial y (default zeros; not with --mpi)\n"
    "  --repeat N           time N runs after 2 warm-up runs; medians are reported\n"
    "  --check              compare with the single-device reference (exit 5 when the\n"
    "                       relative error exceeds 1e-4 for f32, 1e-10 for f64)\n"
    "  --no-numa            no NUMA grouping or binding (hwloc)\n"
    "  --kernel hisp|cusparse  per-device kernel (default hisp; cusparse: CUDA only)\n"
    "  --device-ptr         p*-opt: each device receives its slice of the global\n"
    "                       pointers and makes its local pointers itself (OpenCL,\n"
    "                       CUDA with --kernel cusparse, reference; else the host)\n"
    "  --resident           x and y live on the first device (hisp_mspmv_vec): on\n"
    "                       CUDA x and the partial results move device to device\n"
    "                       and the merge runs there (the iterative-solver case)\n"
    "  --host-merge         with --resident: merge on the host anyway (the baseline)\n"
    "  --distributed        x replicated on the devices, y split over them by rows\n"
    "                       (hisp_mspmv_dist: only shared boundary rows move per\n"
    "                       call; row partitions, op N)\n"
    "  --row-cost W|auto    pcsr/pcsc/pcoo parts balance nnz + W*rows instead of nnz\n"
    "                       (default 0: MSREP's nnz split); auto: time the plain\n"
    "                       split, fit W to each device's kernel time, split again\n"
    "  --align              move cuts that fall inside short rows to a row end (no\n"
    "                       shared rows to merge; long rows are still split)\n"
    "  --subdevices         more parts than devices: split each device into\n"
    "                       sub-devices (OpenCL, e.g. PoCL on CPUs) instead of\n"
    "                       sharing\n"
    "  --mpi                run as one MPI rank of `mpirun -np R hisp mspmv ...`:\n"
    "                       rank 0 reads and partitions A over the ranks (the same\n"
    "                       kinds),\n"
    "                       each rank splits its part over its own --devices, results\n"
    "                       merge through MPI collectives (runs build/bin/hisp-mpi)\n"
    "  --gen KIND           the same as the argument gen:KIND, with --n N, --scale S,\n"
    "                       --seed S as hisp gen takes them\n"
    "  --type f32|f64       entry type (default: the input's; MSREP parts take f32\n"
    "                       or f64, other types are refused: hisp spmv runs them on\n"
    "                       one device; --entry and --precision are aliases)\n" CLI_BACKEND_HELP
    "  --device I           put every part on device I of the backend (its index in\n"
    "                       hisp info; several parts share it as queues); default:\n"
    "                       the parts cycle over the backend's devices\n"
    "  -o FILE              write y as a Matrix Market array\n" CLI_OUT_ALIASES_HELP
    "  --json               machine-readable output: \"backend\", \"devices\" (how\n"
    "                       many), \"type\", the times, \"parts\" (each with its\n"
    "                       \"device\"), \"check\", \"transfers\"\n" CLI_HELP_HELP
    "\n" CLI_GEN_SPEC_HELP "\n" CLI_TRANSFERS_HELP
    "Here only what the caller's contexts moved (the vectors' device with\n"
    "--resident): the plan's per-device contexts, which send the parts, x and the\n"
    "partial results, are not visible (\"covers\" says so).\n"
    "\n"
    "exit status: 0 ok, 1 usage, 2 input error, 3 backend or device error,\n"
    "5 --check above tolerance.\n";

enum {
    O_DEVICES,
    O_PART,
    O_BACKEND,
    O_FORMAT,
    O_T,
    O_TYPE,
    O_X,
    O_ALPHA,
    O_BETA,
    O_OUT, /* CLI_OUT_OPTS: -o, --out, --output */
    O_OUT2,
    O_OUT3,
    O_Y,
    O_REPEAT,
    O_CHECK,
    O_NONUMA,
    O_SUBDEV,
    O_MPI,
    O_GEN,
    O_N,
    O_SCALE,
    O_SEED,
    O_JSON,
    O_KERNEL,
    O_DEVPTR,
    O_RESIDENT,
    O_HOSTMERGE,
    O_ROWCOST,
    O_ALIGN,
    O_DIST,
    O_ENTRY,
    O_PREC, /* O_TYPE, O_ENTRY, O_PREC: CLI_TYPE_OPTS */
    O_OP,
    O_DEVICE,
    O_HELP,
    O_HELP2
};

/* The vectors of one call: host arrays, vectors on the first device
 * (--resident) or distributed vectors (--distributed). */
typedef struct {
    const void *x;
    void *y;
    hisp_vector xv, yv;
    hisp_mvector xd, yd;
} call_io;

static hisp_status call_once(hisp_mplan plan, const mspmv_opts *o, const void *a, const void *b,
                             const call_io *io)
{
    if (o->dist) return hisp_mspmv_dist(plan, a, io->xd, b, io->yd);
    if (o->resident) return hisp_mspmv_vec(plan, o->op, a, io->xv, b, io->yv);
    return hisp_mspmv(plan, o->op, a, io->x, b, io->y);
}

/* --row-cost auto: five timed calls on the plan (into a scratch y), the
 * row cost that fits each device's median kernel time, and a new plan split
 * by it in place of the old one. */
static hisp_status mspmv_refit(hisp_matrix A, int nd, const hisp_device_ref *refs, mspmv_opts *o,
                               const void *x, hisp_mplan *plan)
{
    enum { CALLS = 5 };
    hisp_matrix_info mi;
    hisp_status s0 = hisp_matrix_get_info(A, &mi);
    if (s0) return s0;
    int64_t m = o->op == HISP_OP_T ? mi.ncols : mi.nrows;
    size_t es = hisp_type_size(o->type);
    double *t = calloc((size_t)nd * CALLS, sizeof *t), ms[HISP_MPLAN_MAX_DEVICES];
    void *y = calloc((size_t)(m > 0 ? m : 1), es);
    hisp_mplan_breakdown *b = calloc(1, sizeof *b);
    hisp_status s = t && y && b ? HISP_SUCCESS : HISP_ERR_OUT_OF_HOST_MEMORY;
    double one = 1, zero = 0;
    float onef = 1, zerof = 0;
    const void *a = o->type == HISP_F32 ? (const void *)&onef : (const void *)&one;
    const void *z = o->type == HISP_F32 ? (const void *)&zerof : (const void *)&zero;
    for (int i = 0; i < CALLS && !s; i++) {
        s = hisp_mspmv(*plan, o->op, a, x, z, y);
        if (!s) s = hisp_mplan_get_breakdown(*plan, b);
        for (int k = 0; k < nd && !s; k++)
            t[(size_t)k * CALLS + i] = b->dev[k].compute_ms;
    }
    for (int k = 0; k < nd && !s; k++)
        ms[k] = mspmv_median(t + (size_t)k * CALLS, CALLS);
    if (!s) s = hisp_mplan_fit_row_cost(*plan, ms, &o->row_cost);
    if (!s) {
        cli_progress("row cost fitted to the devices' kernel times: %.3f; partitioning again",
                     o->row_cost);
        hisp_mplan_destroy(plan);
        s = hisp_mplan_create_weighted(A, nd, refs, o->kind, mspmv_flags(o), o->row_cost, plan);
    }
    free(t);
    free(y);
    free(b);
    return s;
}

static int parse(int argc, char **argv, mspmv_opts *o)
{
    static const cli_opt opts[] = {{"--devices", true},     {"--partition", true},
                                   {"--backend", true},     {"--format", true},
                                   CLI_TRANSPOSE_OPT,       {"--type", true},
                                   {"--x", true},           {"--alpha", true},
                                   {"--beta", true},        CLI_OUT_OPTS,
                                   {"--y", true},           {"--repeat", true},
                                   {"--check", false},      {"--no-numa", false},
                                   {"--subdevices", false}, {"--mpi", false},
                                   {"--gen", true},         {"--n", true},
                                   {"--scale", true},       {"--seed", true},
                                   {"--json", false},       {"--kernel", true},
                                   {"--device-ptr", false}, {"--resident", false},
                                   {"--host-merge", false}, {"--row-cost", true},
                                   {"--align", false},      {"--distributed", false},
                                   {"--entry", true},       {"--precision", true},
                                   {"--op", true},          {"--device", true},
                                   CLI_HELP_OPTS,           {0, 0}};
    const char *val[O_HELP] = {0};
    memset(o, 0, sizeof *o);
    o->kind = HISP_PART_PCSR;
    o->backend = HISP_BACKEND_AUTO;
    o->type = HISP_F64;
    o->alpha = 1;
    o->warmup = 2;
    o->device = -1;
    int rc = cli_parse_command("mspmv", argc, argv, opts, help, val, &o->path);
    if (rc) return rc;
    o->json = val[O_JSON] != NULL;
    o->check = val[O_CHECK] != NULL;
    o->mpi = val[O_MPI] != NULL;
    o->no_numa = val[O_NONUMA] != NULL;
    o->subdevices = val[O_SUBDEV] != NULL;
    o->device_ptr = val[O_DEVPTR] != NULL;
    o->resident = val[O_RESIDENT] != NULL;
    o->host_merge = val[O_HOSTMERGE] != NULL;
    o->align = val[O_ALIGN] != NULL;
    o->dist = val[O_DIST] != NULL;
    if ((rc = cli_parse_transpose("mspmv", val[O_T], val[O_OP], &o->op))) return rc;
    if (o->op == HISP_OP_H) o->op = HISP_OP_T; /* real entries: A^H = A^T */
    o->xpath = val[O_X];
    if ((rc = cli_parse_out("mspmv", val + O_OUT, &o->out))) return rc;
    o->ypath = val[O_Y];
    if (val[O_GEN]) {
        hisp_gen_kind k;
        if (o->path) return cli_usage_error("mspmv", "give FILE (or gen:KIND) or --gen, not both");
        if (hisp_gen_from_name(val[O_GEN], &k))
            return cli_value_error("--gen: unknown kind '%s' (see hisp gen --help)", val[O_GEN]);
        hisp_gen_defaults(k, &o->gp);
        o->gen = true;
    } else if (!o->path) {
        return cli_usage_error("mspmv", "missing FILE.mtx (or gen:KIND)");
    }
    if (val[O_DEVICES] && strcmp(val[O_DEVICES], "all") != 0)
        rc = cli_parse_int("--devices", val[O_DEVICES], 1, HISP_MPLAN_MAX_DEVICES, &o->devices);
    if (!rc && val[O_DEVICE]) rc = cli_parse_int("--device", val[O_DEVICE], 0, 1 << 20, &o->device);
    if (!rc && val[O_PART] && hisp_partition_from_name(val[O_PART], &o->kind))
        rc = cli_value_error("--partition: unknown kind '%s' (pcsr, pcsc, pcoo, rowblock, "
                             "colblock)",
                             val[O_PART]);
    if (!rc && val[O_BACKEND]) rc = cli_parse_backend("--backend", val[O_BACKEND], &o->backend);
    if (!rc && val[O_FORMAT]) {
        if (strcasecmp(val[O_FORMAT], "hisparse") == 0)
            o->hisparse = true;
        else if (strcasecmp(val[O_FORMAT], "csr") != 0)
            rc = cli_value_error("--format: '%s' is not supported (csr, hisparse)", val[O_FORMAT]);
    }
    if (!rc && val[O_KERNEL]) {
        if (strcasecmp(val[O_KERNEL], "cusparse") == 0)
            o->cusparse = true;
        else if (strcasecmp(val[O_KERNEL], "hisp") != 0)
            rc = cli_value_error("--kernel: '%s' is not supported (hisp, cusparse)", val[O_KERNEL]);
    }
    if (!rc && o->cusparse && o->hisparse)
        rc = cli_usage_error("mspmv", "--kernel cusparse runs CSR parts, not --format hisparse");
    if (!rc && o->mpi && (o->resident || o->host_merge || o->dist))
        rc = cli_usage_error("mspmv",
                             "--resident, --host-merge and --distributed do not go with --mpi");
    if (!rc && o->dist && (o->resident || o->op == HISP_OP_T))
        rc = cli_usage_error("mspmv", "--distributed takes op N and no --resident");
    if (!rc && val[O_ROWCOST]) {
        if (strcasecmp(val[O_ROWCOST], "auto") == 0)
            o->fit = true;
        else if (!(rc = cli_parse_double("--row-cost", val[O_ROWCOST], &o->row_cost)) &&
                 !(o->row_cost >= 0 && o->row_cost <= 1e9))
            rc = cli_value_error("--row-cost: %s is not in 0..1e9 (or auto)", val[O_ROWCOST]);
    }
    if (!rc && o->fit && o->mpi)
        rc = cli_usage_error("mspmv", "--row-cost auto does not go with --mpi (give a number)");
    if (!rc) {
        const char *tv[3] = {val[O_TYPE], val[O_ENTRY], val[O_PREC]};
        cli_type ct;
        rc = cli_parse_type("mspmv", tv, &ct);
        o->type = ct.type;
        o->type_given = ct.given;
    }
    if (!rc && val[O_ALPHA]) rc = cli_parse_double("--alpha", val[O_ALPHA], &o->alpha);
    if (!rc && val[O_BETA]) rc = cli_parse_double("--beta", val[O_BETA], &o->beta);
    if (!rc) rc = cli_check_real("--alpha", o->alpha, o->type);
    if (!rc) rc = cli_check_real("--beta", o->beta, o->type);
    if (!rc && val[O_REPEAT]) rc = cli_parse_int("--repeat", val[O_REPEAT], 1, 100000, &o->repeat);
    if (!rc && val[O_N]) rc = cli_parse_i64("--n", val[O_N], 1, INT32_MAX, &o->gp.n);
    if (!rc && val[O_SCALE]) rc = cli_parse_int("--scale", val[O_SCALE], 0, 30, &o->gp.scale);
    if (!rc && val[O_SEED]) rc = cli_parse_u64("--seed", val[O_SEED], &o->gp.seed);
    if (!rc && o->mpi && o->ypath) rc = cli_usage_error("mspmv", "--y does not go with --mpi");
    if (!rc && !o->gen && (val[O_N] || val[O_SCALE] || val[O_SEED]))
        rc = cli_usage_error("mspmv", "--n, --scale and --seed go with --gen");
    return rc;
}

/* One process's hisp mspmv: its contexts, vectors, plan and timings;
 * mspmv_state_free releases them. */
typedef struct {
    hisp_context ctx, vctx; /* vctx: --resident's, on the first device */
    hisp_vector xv, yv, ytv;
    hisp_mvector xd, yd, ytd; /* --distributed */
    hisp_matrix A;
    hisp_mplan plan;
    hisp_device_ref *refs;
    int nd;
    bool shared;
    void *x, *y, *yt, *y0; /* yt: the timed runs' scratch y */
    double *t;
    hisp_matrix_info mi;
    int64_t m, n; /* op(A) is m x n */
    float af, bf;
    const void *a, *b;             /* alpha and beta in the matrix's precision */
    hisp_mplan_breakdown *bd, *b1; /* the reported breakdown; one timed run's */
    double dev_ms[HISP_MPLAN_MAX_DEVICES];
    hisp_transfer_stats xfer; /* the timed runs, else the result run */
} mspmv_state;

/* The devices, A (f32 or f64), x, y0 (--y) and the host y buffers. */
static int mspmv_load(mspmv_state *st, mspmv_opts *o)
{
    int rc;
    if ((rc = mspmv_devices(st->ctx, o, &st->refs, &st->nd, &st->shared))) return rc;
    if ((rc = mspmv_matrix(st->ctx, o, &st->A))) return rc;
    hisp_status s = hisp_matrix_get_info(st->A, &st->mi);
    if (s) return cli_fail(st->ctx, s, o->path);
    o->type = st->mi.type;
    if (!cli_type_real(o->type))
        return cli_type_unsupported("mspmv", o->type,
                                    "MSREP parts take f32 or f64; hisp spmv runs the others on "
                                    "one device");
    int64_t m = o->op == HISP_OP_N ? st->mi.nrows : st->mi.ncols,
            n = o->op == HISP_OP_N ? st->mi.ncols : st->mi.nrows;
    st->m = m;
    st->n = n;
    size_t es = hisp_type_size(o->type);
    if ((rc = mspmv_x(st->ctx, o, n, &st->x))) return rc;
    if (o->ypath && (rc = mspmv_vector(st->ctx, o, o->ypath, m, "y", &st->y0))) return rc;
    st->y = calloc((size_t)(m > 0 ? m : 1), es);
    st->yt = calloc((size_t)(m > 0 ? m : 1), es);
    if (st->y && st->y0) memcpy(st->y, st->y0, (size_t)m * es);
    if (!st->y || !st->yt) return cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL);
    return CLI_OK;
}

/* The plan (with --row-cost auto: fitted), and the vectors of
 * --distributed and --resident. */
static int mspmv_plan(mspmv_state *st, mspmv_opts *o)
{
    cli_progress("partitioning (%s) over %d device(s)", hisp_partition_name(o->kind), st->nd);
    hisp_status s = hisp_mplan_create_weighted(st->A, st->nd, st->refs, o->kind, mspmv_flags(o),
                                               o->row_cost, &st->plan);
    if (!s && o->fit && st->nd > 1) /* time the split, fit the row cost, split again */
        s = mspmv_refit(st->A, st->nd, st->refs, o, st->x, &st->plan);
    st->af = (float)o->alpha;
    st->bf = (float)o->beta;
    st->a = o->type == HISP_F32 ? (const void *)&st->af : (const void *)&o->alpha;
    st->b = o->type == HISP_F32 ? (const void *)&st->bf : (const void *)&o->beta;
    if (!s && o->dist) { /* x on every device, y split by rows */
        s = hisp_mvector_create(st->plan, HISP_MVEC_REPLICATED, &st->xd);
        if (!s) s = hisp_mvector_create(st->plan, HISP_MVEC_ROWS, &st->yd);
        if (!s) s = hisp_mvector_create(st->plan, HISP_MVEC_ROWS, &st->ytd);
        if (!s) s = hisp_mvector_write(st->xd, st->x);
        if (!s) s = hisp_mvector_write(st->yd, st->y);
        if (!s) s = hisp_mvector_write(st->ytd, st->y);
    }
    if (s) return cli_fail(st->ctx, s, NULL);
    if (o->resident) { /* x and y on the first device */
        s = hisp_context_create(&st->vctx);
        if (!s) s = hisp_context_set_backend(st->vctx, st->refs[0].backend, st->refs[0].device);
        if (!s) s = hisp_vector_create(st->vctx, o->type, st->n, &st->xv);
        if (!s) s = hisp_vector_create(st->vctx, o->type, st->m, &st->yv);
        if (!s) s = hisp_vector_create(st->vctx, o->type, st->m, &st->ytv);
        if (!s) s = hisp_vector_write(st->xv, st->x);
        if (!s) s = hisp_vector_write(st->yv, st->y);
        if (s) return cli_fail(st->vctx ? st->vctx : st->ctx, s, "vectors on the first device");
    }
    return CLI_OK;
}

/* --repeat: the warm-up and timed runs into the scratch y; the breakdown
 * and each device's time become the medians of every phase. */
static hisp_status mspmv_timed_runs(mspmv_state *st, const mspmv_opts *o)
{
    const call_io scratch = {st->x, st->yt, st->xv, st->ytv, st->xd, st->ytd};
    hisp_status s = HISP_SUCCESS;
    hisp_mplan_breakdown *bd = st->bd, *b1 = st->b1;
    int r = o->repeat, np = 6 + st->nd, nd = st->nd;
    double *t = st->t = calloc((size_t)r * (size_t)np, sizeof *t);
    if (!t) s = HISP_ERR_OUT_OF_HOST_MEMORY;
    cli_transfers_reset(st->ctx);
    cli_transfers_reset(st->vctx);
    for (int i = 0; i < o->warmup && !s; i++)
        s = call_once(st->plan, o, st->a, st->b, &scratch);
    for (int i = 0; i < r && !s; i++) {
        s = call_once(st->plan, o, st->a, st->b, &scratch);
        if (!s) s = hisp_mplan_get_breakdown(st->plan, b1);
        if (s) break;
        double v[5] = {b1->total_ms, b1->x_ms, b1->compute_ms, b1->gather_ms, b1->merge_ms};
        for (int q = 0; q < 5; q++)
            t[(size_t)q * r + i] = v[q];
        for (int k = 0; k < nd; k++)
            t[(size_t)(6 + k) * r + i] = b1->dev[k].compute_ms;
    }
    cli_transfers_add(st->ctx, &st->xfer);
    cli_transfers_add(st->vctx, &st->xfer);
    if (s) return s;
    bd->total_ms = mspmv_median(t, r);
    bd->x_ms = mspmv_median(t + r, r);
    bd->compute_ms = mspmv_median(t + 2 * r, r);
    bd->gather_ms = mspmv_median(t + 3 * r, r);
    bd->merge_ms = mspmv_median(t + 4 * r, r);
    for (int k = 0; k < nd; k++)
        st->dev_ms[k] = mspmv_median(t + (size_t)(6 + k) * r, r);
    return HISP_SUCCESS;
}

/* The result run (from y0, read back into y) and its breakdown, then
 * --repeat's timed runs. */
static int mspmv_runs(mspmv_state *st, const mspmv_opts *o)
{
    const call_io res = {st->x, st->y, st->xv, st->yv, st->xd, st->yd};
    hisp_status s = HISP_SUCCESS;
    cli_transfers_reset(st->ctx);
    cli_transfers_reset(st->vctx);
    s = call_once(st->plan, o, st->a, st->b, &res); /* the result run, from y0 */
    if (!s && o->resident) s = hisp_vector_read(st->yv, st->y);
    if (!s && o->dist) s = hisp_mvector_read(st->yd, st->y);
    if (o->repeat <= 0) {
        cli_transfers_add(st->ctx, &st->xfer);
        cli_transfers_add(st->vctx, &st->xfer);
    }
    if (!s) s = hisp_mplan_get_breakdown(st->plan, st->bd);
    for (int k = 0; k < st->nd; k++)
        st->dev_ms[k] = st->bd->dev[k].compute_ms;
    if (!s && o->repeat > 0) s = mspmv_timed_runs(st, o);
    return s ? cli_fail(st->ctx, s, NULL) : CLI_OK;
}

static void mspmv_state_free(mspmv_state *st)
{
    hisp_mvector_destroy(&st->xd);
    hisp_mvector_destroy(&st->yd);
    hisp_mvector_destroy(&st->ytd);
    hisp_mplan_destroy(&st->plan);
    hisp_vector_destroy(&st->xv);
    hisp_vector_destroy(&st->yv);
    hisp_vector_destroy(&st->ytv);
    hisp_context_destroy(&st->vctx);
    hisp_matrix_destroy(&st->A);
    hisp_context_destroy(&st->ctx);
    free(st->refs);
    free(st->x);
    free(st->y);
    free(st->y0);
    free(st->yt);
    free(st->t);
    free(st->bd);
    free(st->b1);
}

int cmd_mspmv(int argc, char **argv)
{
    mspmv_opts o;
    int rc = parse(argc, argv, &o);
    if (rc) return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
    cli_progress_enable(o.json);
#ifdef HISP_CLI_MPI
    if (o.mpi) return mspmv_mpi(&o, argc, argv);
#else
    if (o.mpi) return cli_exec_mpi(argc, argv);
#endif
    mspmv_state st;
    memset(&st, 0, sizeof st);
    double rel = NAN;
    double tol = NAN;
    st.bd = calloc(1, sizeof *st.bd);
    st.b1 = calloc(1, sizeof *st.b1);
    if (!st.bd || !st.b1) {
        mspmv_state_free(&st);
        return cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL);
    }
    if ((rc = cli_context(&st.ctx))) goto out;
    if ((rc = mspmv_load(&st, &o))) goto out;
    tol = mspmv_tolerance(o.type); /* the matrix's type, known once loaded */
    if ((rc = mspmv_plan(&st, &o))) goto out;
    if ((rc = mspmv_runs(&st, &o))) goto out;
    hisp_mvector_destroy(&st.xd);
    hisp_mvector_destroy(&st.yd);
    hisp_mvector_destroy(&st.ytd);
    hisp_mplan_destroy(&st.plan);
    if (o.out && (rc = mspmv_write_y(st.ctx, &o, st.y, st.m))) goto out;
    if (o.check && (rc = mspmv_check(st.ctx, st.A, &o, st.x, st.y0, st.y, st.m, &rel))) goto out;
    if (o.json)
        mspmv_print_json(&o, &st.mi, st.bd, st.shared, st.dev_ms, rel, tol, &st.xfer);
    else
        mspmv_print_table(&o, &st.mi, st.bd, st.shared, st.dev_ms, rel, tol, &st.xfer);
    rc = mspmv_verdict(&o, rel, tol);
out:
    mspmv_state_free(&st);
    return rc;
}
