/* hisp add: C = alpha*op(A) + beta*op(B) with HiSparse output. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static const char help[] =
    "usage: hisp add A B -o C [options]      (A, B: FILE.mtx, FILE.hisp or\n"
    "                                         gen:KIND[:N[:SEED]])\n"
    "\n"
    "Computes C = alpha*op(A) + beta*op(B) and writes C: a HiSparse file when C\n"
    "ends in .hisp, Matrix Market otherwise. A and B are .mtx or .hisp files (a\n"
    ".hisp keeps its transposed flag and scale, which the sum honours).\n"
    "On opencl or cuda the sum runs on the device (a top-down traversal of both\n"
    "trees by the dynamic scheduler; C shares the subtrees that only A, or only\n"
    "a B of A's family, holds); on reference it runs on the host.\n"
    "\n"
    "options:\n"
    "  --transpose [n|t]    op(X) = X^T for both operands (default op(X) = X; h is t\n"
    "                       for real entries)\n"
    "  --alpha a            default 1\n"
    "  --beta b             default 1\n"
    "  --node-size d        node size of C when neither input is HiSparse (128)\n"
    "  --repeat N           time N sums (after one untimed) and report the medians\n"
    "                       of their wall and device times\n" CLI_TYPE_HELP CLI_BACKEND_HELP
        CLI_DEVICE_HELP "  -o FILE              write C (required; .hisp: "
    "HiSparse, else Matrix Market)\n" CLI_OUT_ALIASES_HELP
    "  --json               machine-readable output (with the addition's stats):\n"
    "                       \"backend\", \"device\" {\"backend\", \"index\", \"name\",\n"
    "                       \"platform\", \"type\"}, \"type\", ..., \"device_ms\",\n"
    "                       \"median_ms\" (--repeat), \"transfers\", \"kernels\"\n" CLI_HELP_HELP
    "\n"
    "device_ms: the device's time of the traversal (allocations, uploads and kernel\n"
    "builds excluded): the one sum's, or with --repeat the median of the timed\n"
    "sums'. A first sum on a fresh machine also holds the time PoCL takes to\n"
    "specialise each kernel at its first launch (cached in PoCL's own folder).\n"
    "\n" CLI_TRANSFERS_HELP "With --repeat: the N timed sums (not the untimed first one).\n"
    "\n" CLI_BUILDS_HELP "\n"
    "exit status: 0 ok, 1 usage, 2 unreadable, malformed or unwritable file or\n"
    "sizes that do not match, 3 backend not available for this operation.\n";

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v. */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* X scaled by s as a new handle (O(1) for HiSparse), or X itself when s = 1. */
static hisp_status scaled(hisp_matrix X, double s, hisp_matrix *out, bool *owned)
{
    *out = X;
    *owned = false;
    if (s == 1) return HISP_SUCCESS;
    hisp_matrix_info mi;
    hisp_status st = hisp_matrix_get_info(X, &mi);
    if (!st) st = hisp_matrix_duplicate(X, mi.format, out);
    if (st) return st;
    *owned = true;
    float sf = (float)s;
    bool single = hisp_type_size(mi.type) / (size_t)hisp_type_components(mi.type) == 4;
    return hisp_matrix_scale(*out, single ? (const void *)&sf : (const void *)&s);
}

/* hisp add's command line. */
typedef struct {
    const char *in[2], *out; /* A, B and -o C */
    bool json;
    double alpha, beta;
    int node_size, repeat, device; /* node_size 0: the default; repeat 0: one sum */
    cli_type ct;
    hisp_op op;
    hisp_backend_kind kind;
} add_opts;

enum {
    A_OUT, /* CLI_OUT_OPTS */
    A_OUT2,
    A_OUT3,
    A_TRANS,
    A_ALPHA,
    A_BETA,
    A_BACKEND,
    A_NODE,
    A_TYPE, /* CLI_TYPE_OPTS */
    A_ENTRY,
    A_PREC,
    A_REPEAT,
    A_JSON,
    A_DEVICE,
    A_HELP
};

/* The two inputs and the options' values (val) of the command line;
 * returns CLI_OK, an exit code, or CLI_HELP_SHOWN after the help. */
static int add_args(int argc, char **argv, const char **val, const char **in)
{
    static const cli_opt opts[] = {CLI_OUT_OPTS,       CLI_TRANSPOSE_OPT,   {"--alpha", true},
                                   {"--beta", true},   {"--backend", true}, {"--node-size", true},
                                   CLI_TYPE_OPTS,      {"--repeat", true},  {"--json", false},
                                   {"--device", true}, CLI_HELP_OPTS,       {0, 0}};
    return cli_parse_inputs("add", argc, argv, opts, help, val, in, 2);
}

/* Parses the command line into o; returns CLI_OK, an exit code, or
 * CLI_HELP_SHOWN. */
static int add_parse(int argc, char **argv, add_opts *o)
{
    const char *val[A_HELP] = {0};
    memset(o, 0, sizeof *o);
    int rc = add_args(argc, argv, val, o->in);
    if (rc) return rc;
    if (!o->in[0] || !o->in[1]) return cli_usage_error("add", "need two input files A and B");
    if ((rc = cli_parse_out("add", val + A_OUT, &o->out))) return rc;
    if (!o->out) return cli_usage_error("add", "missing -o C");
    o->json = val[A_JSON] != NULL;
    o->alpha = o->beta = 1;
    o->device = -1;
    o->op = HISP_OP_N;
    o->kind = HISP_BACKEND_AUTO;
    if ((rc = cli_parse_type("add", val + A_TYPE, &o->ct))) return rc;
    if ((rc = cli_parse_transpose("add", val[A_TRANS], NULL, &o->op))) return rc;
    if (val[A_ALPHA] && (rc = cli_parse_double("--alpha", val[A_ALPHA], &o->alpha))) return rc;
    if (val[A_BETA] && (rc = cli_parse_double("--beta", val[A_BETA], &o->beta))) return rc;
    if (val[A_BACKEND] && (rc = cli_parse_backend("--backend", val[A_BACKEND], &o->kind)))
        return rc;
    if (val[A_NODE] && (rc = cli_parse_int("--node-size", val[A_NODE], 4, 256, &o->node_size)))
        return rc;
    if (val[A_REPEAT] && (rc = cli_parse_int("--repeat", val[A_REPEAT], 1, 1000000, &o->repeat)))
        return rc;
    if (val[A_DEVICE] && (rc = cli_parse_int("--device", val[A_DEVICE], 0, 1 << 20, &o->device)))
        return rc;
    return CLI_OK;
}

/* hisp add's matrices and results; add_state_free releases them. */
typedef struct {
    hisp_context ctx;
    hisp_matrix A, B, As, Bs, C; /* As, Bs: alpha*A and beta*B (owned when scaled copies) */
    bool ownA, ownB;
    double *ms, *dev_ms; /* --repeat: each timed sum's wall and device time */
    hisp_matrix_info ia, ib, ic;
    hisp_transfer_stats xfer; /* the timed sums, else the one sum */
    hisp_build_stats builds;
    hisp_add_stats st; /* of the result's sum */
    hisp_backend_kind used;
    hisp_device_info di;
    double med, dev; /* --repeat: the timed sums' medians; else dev is the sum's */
} add_state;

/* Reads A and B and scales them (As, Bs); *s gets a library failure (the
 * sums then skip), the return value the other exit codes. */
/* A and B in HiSparse form with A's node size, once: the library would
 * build (and upload) a tree of a CSR operand at every sum. A's node size is
 * the one it was converted with, or, for a .hisp file, its profile's. */
static hisp_status as_trees(add_state *w, const add_opts *o)
{
    int d = o->node_size ? o->node_size : HISP_HISPARSE_DEFAULT_NODE_SIZE;
    hisp_status s = HISP_SUCCESS;
    if (w->ia.format != HISP_FORMAT_HISPARSE) s = hisp_matrix_convert(w->A, HISP_FORMAT_HISPARSE);
    if (s || w->ib.format == HISP_FORMAT_HISPARSE) return s;
    if (w->ia.format == HISP_FORMAT_HISPARSE) {
        hisp_hisparse_profile p;
        s = hisp_matrix_hisparse_profile(w->A, &p);
        d = p.node_size;
    }
    if (!s) s = hisp_matrix_set_node_size(w->B, d);
    if (!s) s = hisp_matrix_convert(w->B, HISP_FORMAT_HISPARSE);
    return s;
}

static int add_prepare(add_state *w, add_opts *o, hisp_status *s)
{
    int rc;
    if ((rc = cli_load_matrix(w->ctx, o->in[0], &o->ct, &w->A, NULL))) return rc;
    if ((rc = cli_load_matrix(w->ctx, o->in[1], &o->ct, &w->B, NULL))) return rc;
    *s = hisp_matrix_get_info(w->A, &w->ia);
    if (!*s) *s = hisp_matrix_get_info(w->B, &w->ib);
    if (!*s && ((rc = cli_check_real("--alpha", o->alpha, w->ia.type)) ||
                (rc = cli_check_real("--beta", o->beta, w->ib.type))))
        return rc;
    if (!*s && o->op == HISP_OP_H) {
        if (!cli_type_real(w->ia.type))
            return cli_type_unsupported("add --transpose h", w->ia.type,
                                        "the addition takes op n or t");
        o->op = HISP_OP_T; /* A^H = A^T for real entries */
    }
    if (!*s && o->node_size && w->ia.format != HISP_FORMAT_HISPARSE)
        *s = hisp_matrix_set_node_size(w->A, o->node_size);
    if (!*s) *s = as_trees(w, o);
    if (!*s) *s = scaled(w->A, o->alpha, &w->As, &w->ownA);
    if (!*s) *s = scaled(w->B, o->beta, &w->Bs, &w->ownB);
    return CLI_OK;
}

/* The sum C (its transfers and kernel builds counted unless --repeat), then
 * --repeat's timed sums (wall time without kernel builds, device time), C's
 * info and the device; s: add_prepare's status. Returns the status. */
static hisp_status add_sums(add_state *w, const add_opts *o, hisp_status s)
{
    cli_progress("adding %s and %s", o->in[0], o->in[1]);
    int n = o->repeat > 0 ? o->repeat : 0;
    hisp_build_stats b0 = cli_builds(w->ctx), b1;
    cli_transfers_reset(w->ctx);
    if (!s) s = hisp_matrix_add(o->op, w->As, o->op, w->Bs, &w->C);
    if (!n) cli_transfers_add(w->ctx, &w->xfer);
    b1 = cli_builds(w->ctx);
    cli_builds_add(&w->builds, &b0, &b1);
    hisp_add_stats sti = {0};
    if (!s) s = hisp_context_add_stats(w->ctx, &w->st);
    if (!s && n &&
        (!(w->ms = malloc((size_t)n * sizeof *w->ms)) ||
         !(w->dev_ms = malloc((size_t)n * sizeof *w->dev_ms))))
        s = HISP_ERR_OUT_OF_HOST_MEMORY;
    cli_transfers_reset(w->ctx);
    for (int i = 0; i < n && !s; i++) {
        hisp_matrix T = NULL;
        b0 = cli_builds(w->ctx);
        double t0 = cli_now_ms();
        s = hisp_matrix_add(o->op, w->As, o->op, w->Bs, &T);
        w->ms[i] = cli_now_ms() - t0;
        b1 = cli_builds(w->ctx);
        w->ms[i] -= cli_builds_ms(&b0, &b1); /* a kernel built on the way is not the sum */
        cli_builds_add(&w->builds, &b0, &b1);
        if (!s) s = hisp_context_add_stats(w->ctx, &sti);
        w->dev_ms[i] = sti.device_ms;
        hisp_matrix_destroy(&T);
    }
    if (n) cli_transfers_add(w->ctx, &w->xfer);
    if (!s) s = hisp_matrix_get_info(w->C, &w->ic);
    w->used = o->kind;
    if (!s) s = hisp_context_get_device(w->ctx, &w->di);
    if (!s) w->used = w->di.backend;
    return s;
}

static void add_report_json(const add_opts *o, const add_state *w)
{
    const hisp_add_stats *st = &w->st;
    cli_json j;
    json_init(&j, stdout);
    json_object_begin(&j, NULL);
    json_string(&j, "a", o->in[0]);
    json_string(&j, "b", o->in[1]);
    json_string(&j, "out", o->out);
    json_string(&j, "backend", hisp_backend_name(w->used));
    json_device(&j, "device", &w->di);
    json_bool(&j, "transpose", o->op != HISP_OP_N);
    json_double(&j, "alpha", o->alpha);
    json_double(&j, "beta", o->beta);
    json_string(&j, "type", hisp_type_name(w->ic.type));
    json_int(&j, "rows", w->ic.nrows);
    json_int(&j, "cols", w->ic.ncols);
    json_int(&j, "nnz_a", w->ia.nnz);
    json_int(&j, "nnz_b", w->ib.nnz);
    json_int(&j, "nnz", w->ic.nnz);
    json_int(&j, "nodes_new", st->nodes_new);
    json_int(&j, "bytes_new", (long long)st->bytes_new);
    json_int(&j, "bytes_reserved", (long long)st->bytes_reserved);
    json_int(&j, "subtrees_shared", st->subtrees_shared);
    json_int(&j, "subtrees_copied", st->subtrees_copied);
    json_int(&j, "pool_retries", st->pool_retries);
    json_int(&j, "zero_retries", st->zero_retries);
    json_int(&j, "rounds", st->rounds);
    json_int(&j, "launches", st->launches);
    json_double(&j, "device_ms", w->dev);
    if (o->repeat > 0) {
        json_int(&j, "repeat", o->repeat);
        json_double(&j, "median_ms", w->med);
    }
    json_transfers(&j, &w->xfer, NULL);
    json_builds(&j, &w->builds);
    json_object_end(&j);
    json_finish(&j);
}

static void add_report_text(const add_opts *o, const add_state *w)
{
    const hisp_add_stats *st = &w->st;
    const hisp_matrix_info *ia = &w->ia, *ib = &w->ib, *ic = &w->ic;
    int n = o->repeat > 0 ? o->repeat : 0;
    int64_t fr = 0, fc = 0, fn = 0; /* the file's */
    cli_file_sizes(ic, !cli_is_hisp_name(o->out), &fr, &fc, &fn);
    if (fr != ic->nrows)
        printf("wrote %s: %lld x %lld, %lld entries (%lld x %lld blocks of 3x3, %lld blocks: "
               "A %lld, B %lld), %s, on %s (%s)\n",
               o->out, (long long)fr, (long long)fc, (long long)fn, (long long)ic->nrows,
               (long long)ic->ncols, (long long)ic->nnz, (long long)ia->nnz, (long long)ib->nnz,
               hisp_type_name(ic->type), hisp_backend_name(w->used), w->di.name);
    else
        printf("wrote %s: %lld x %lld, %lld nonzeros (A %lld, B %lld), %s, on %s (%s)\n", o->out,
               (long long)ic->nrows, (long long)ic->ncols, (long long)ic->nnz, (long long)ia->nnz,
               (long long)ib->nnz, hisp_type_name(ic->type), hisp_backend_name(w->used),
               w->di.name);
    if (st->rounds)
        printf("device     %.4f ms%s, %d rounds, %d launches, %lld new nodes (%llu bytes), "
               "%lld subtrees shared, %lld copied, %d pool regrowths, %d zero-sum redos\n",
               w->dev, n ? " (median)" : "", st->rounds, st->launches, (long long)st->nodes_new,
               (unsigned long long)st->bytes_new, (long long)st->subtrees_shared,
               (long long)st->subtrees_copied, st->pool_retries, st->zero_retries);
    if (n) printf("time       median %.4f ms over %d sums\n", w->med, n);
    cli_print_transfers("transfers", &w->xfer);
    cli_print_builds("kernels", &w->builds);
}

static void add_state_free(add_state *w)
{
    free(w->ms);
    free(w->dev_ms);
    hisp_matrix_destroy(&w->C);
    if (w->ownA) hisp_matrix_destroy(&w->As);
    if (w->ownB) hisp_matrix_destroy(&w->Bs);
    hisp_matrix_destroy(&w->A);
    hisp_matrix_destroy(&w->B);
    hisp_context_destroy(&w->ctx);
}

int cmd_add(int argc, char **argv)
{
    add_opts o;
    int rc = add_parse(argc, argv, &o);
    if (rc) return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
    cli_progress_enable(o.json);
    add_state w;
    memset(&w, 0, sizeof w);
    if ((rc = cli_context(&w.ctx))) return rc;
    hisp_status s = hisp_context_set_backend(w.ctx, o.kind, o.device);
    if (s) {
        rc = cli_fail(w.ctx, s, NULL);
        hisp_context_destroy(&w.ctx);
        return rc;
    }
    if ((rc = add_prepare(&w, &o, &s))) goto done;
    if ((s = add_sums(&w, &o, s))) {
        rc = cli_fail(w.ctx, s, NULL);
        goto done;
    }
    if ((rc = cli_write_matrix(w.ctx, w.C, o.out))) goto done;
    w.dev = w.st.device_ms;
    if (o.repeat > 0) {
        w.med = median(w.ms, o.repeat);
        w.dev = median(w.dev_ms, o.repeat);
    }
    if (o.json)
        add_report_json(&o, &w);
    else
        add_report_text(&o, &w);
done:
    add_state_free(&w);
    return rc;
}
