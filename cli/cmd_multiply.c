/* hisp multiply: C = op(A)*op(B), the sparse matrix-matrix product, timed
 * whole and as a plan's numeric re-computation. */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char help[] =
    "usage: hisp multiply A [B] -o C [options]   (A, B: FILE.mtx, FILE.hisp or\n"
    "                                             gen:KIND[:N[:SEED]])\n"
    "\n"
    "Computes the sparse product C = op(A)*op(B) and writes C: Matrix Market, or a\n"
    "HiSparse file when C ends in .hisp. Without B, B = A (A*A, and with\n"
    "--transpose-a A^T*A, with --transpose-b A*A^T). Entry types f32, f64, c32,\n"
    "c64. The operands are converted to --format once, before the timed calls;\n"
    "C is CSR, or HiSparse when A is. The product runs on a GPU (OpenCL, CUDA:\n"
    "the operands uploaded each call, a real C kept on the device until it is\n"
    "written: \"transfers\") and on the host elsewhere (the reference backend,\n"
    "and a CPU OpenCL device such as PoCL's, where it is faster than kernels):\n"
    "Gustavson's row-by-row algorithm over the library's threads option. Every\n"
    "backend gives the same bits. It also times a plan's numeric phase, where\n"
    "the product runs: C's values recomputed on C's known structure (what new\n"
    "values of A and B on the same patterns cost; on a GPU only the values\n"
    "move, the structure kept there by the plan).\n"
    "\n"
    "options:\n"
    "  --transpose-a [n|t|h]  op(A) = A^T (alone or t), A^H (h: conjugate\n"
    "                       transpose; A^T for real entries) or A (n, default)\n"
    "  --transpose-b [n|t|h]  the same for B\n"
    "  --format F           csr (default) or hisparse (f32, f64): the operands'\n"
    "                       format\n"
    "  --repeat N           time N products and N numeric re-computations and\n"
    "                       report their medians (default 1)\n"
    "  --ptap               C = P^T*A*P of the inputs P and A (hisp_matrix_ptap;\n"
    "                       no plan, no transposes)\n" CLI_TYPE_HELP CLI_BACKEND_HELP
        CLI_DEVICE_HELP "  -o FILE              write C (required; .hisp: HiSparse, else "
    "Matrix Market)\n" CLI_OUT_ALIASES_HELP
    "  --json               machine-readable output: \"backend\", \"device\" {...},\n"
    "                       \"type\", \"op\" (multiply or ptap), \"op_a\", \"op_b\",\n"
    "                       \"format\", \"rows\",\n"
    "                       \"cols\", \"nnz\" (C's), \"nnz_a\",\n"
    "                       \"nnz_b\", \"wall_ms\" (median over --repeat calls of\n"
    "                       hisp_matrix_multiply, each to completion), \"device_ms\"\n"
    "                       (median of the device's own time, null on the host),\n"
    "                       \"device_bytes_peak\" (the most device memory the\n"
    "                       first product held; null on the host), \"blocks\" (its\n"
    "                       row blocks; 0 on the host), \"numeric_ms\"\n"
    "                       (median of the plan's executions), \"plan_ms\" (the plan's\n"
    "                       creation), \"repeat\", \"transfers\", \"kernels\"\n" CLI_HELP_HELP
    "\n" CLI_TRANSFERS_HELP "Here: the timed products and re-computations.\n"
    "\n" CLI_BUILDS_HELP "\n"
    "exit status: 0 ok, 1 usage, 2 unreadable, malformed or unwritable file, sizes\n"
    "that do not match or an entry type the product does not take, 3 backend not\n"
    "available.\n";

typedef struct {
    const char *in[2], *out; /* A, B (NULL: A) and -o C */
    bool json, ptap;         /* ptap: C = P^T*A*P of in[0] = P, in[1] = A */
    int repeat, device;
    cli_type ct;
    hisp_format format; /* the operands', converted before the timed calls */
    hisp_op op_a, op_b;
    hisp_backend_kind kind;
} mul_opts;

enum {
    M_OUT, /* CLI_OUT_OPTS */
    M_OUT2,
    M_OUT3,
    M_TA,
    M_TB,
    M_FORMAT,
    M_BACKEND,
    M_TYPE, /* CLI_TYPE_OPTS */
    M_ENTRY,
    M_PREC,
    M_REPEAT,
    M_PTAP,
    M_JSON,
    M_DEVICE,
    M_HELP
};

/* The inputs and the options' values of the command line; CLI_OK, an exit
 * code, or CLI_HELP_SHOWN after the help. */
static int mul_args(int argc, char **argv, const char **val, const char **in)
{
    static const cli_opt opts[] = {CLI_OUT_OPTS,
                                   {"--transpose-a", CLI_ARG_OP},
                                   {"--transpose-b", CLI_ARG_OP},
                                   {"--format", true},
                                   {"--backend", true},
                                   CLI_TYPE_OPTS,
                                   {"--repeat", true},
                                   {"--ptap", false},
                                   {"--json", false},
                                   {"--device", true},
                                   CLI_HELP_OPTS,
                                   {0, 0}};
    return cli_parse_inputs("multiply", argc, argv, opts, help, val, in, 2);
}

static int parse_op(const char *opt, const char *v, hisp_op *op)
{
    *op = HISP_OP_N;
    if (!v) return CLI_OK;
    if (!v[0]) {
        *op = HISP_OP_T;
        return CLI_OK;
    }
    return cli_parse_op(opt, v, op);
}

static int mul_parse(int argc, char **argv, mul_opts *o)
{
    const char *val[M_HELP] = {0};
    memset(o, 0, sizeof *o);
    int rc = mul_args(argc, argv, val, o->in);
    if (rc) return rc;
    if (!o->in[0]) return cli_usage_error("multiply", "need an input A (and optionally B)");
    if ((rc = cli_parse_out("multiply", val + M_OUT, &o->out))) return rc;
    if (!o->out) return cli_usage_error("multiply", "missing -o C");
    o->json = val[M_JSON] != NULL;
    o->ptap = val[M_PTAP] != NULL;
    if (o->ptap && (!o->in[1] || val[M_TA] || val[M_TB]))
        return cli_usage_error("multiply", "--ptap takes P and A (C = P^T*A*P), no transposes");
    o->device = -1;
    o->repeat = 1;
    o->kind = HISP_BACKEND_AUTO;
    if ((rc = cli_parse_type("multiply", val + M_TYPE, &o->ct))) return rc;
    if ((rc = parse_op("--transpose-a", val[M_TA], &o->op_a))) return rc;
    if ((rc = parse_op("--transpose-b", val[M_TB], &o->op_b))) return rc;
    o->format = HISP_FORMAT_CSR;
    if (val[M_FORMAT] && (rc = cli_parse_format("multiply", val[M_FORMAT], &o->format, NULL)))
        return rc;
    if (o->format == HISP_FORMAT_SELL)
        return cli_value_error("multiply --format: 'sell' is not supported (csr, hisparse)");
    if (val[M_BACKEND] && (rc = cli_parse_backend("--backend", val[M_BACKEND], &o->kind)))
        return rc;
    if (val[M_REPEAT] && (rc = cli_parse_int("--repeat", val[M_REPEAT], 1, 1000000, &o->repeat)))
        return rc;
    if (val[M_DEVICE] && (rc = cli_parse_int("--device", val[M_DEVICE], 0, 1 << 20, &o->device)))
        return rc;
    return CLI_OK;
}

/* hisp multiply's matrices and results; mul_state_free releases them. */
typedef struct {
    hisp_context ctx;
    hisp_matrix A, B, C, D; /* B NULL: A; D: the plan's C */
    hisp_spgemm_plan plan;
    double *ms, *num_ms; /* each timed product's and re-computation's wall time */
    double *dev_ms;      /* each product's device time (hisp_context_spgemm_stats) */
    double plan_ms, med, num_med, dev_med;
    hisp_spgemm_stats st; /* the first product's */
    hisp_matrix_info ia, ib, ic;
    hisp_transfer_stats xfer;
    hisp_build_stats builds;
    hisp_device_info di;
} mul_state;

static void mul_state_free(mul_state *w)
{
    free(w->ms);
    free(w->num_ms);
    free(w->dev_ms);
    hisp_spgemm_plan_destroy(&w->plan);
    hisp_matrix_destroy(&w->C);
    hisp_matrix_destroy(&w->D);
    hisp_matrix_destroy(&w->A);
    hisp_matrix_destroy(&w->B);
    hisp_context_destroy(&w->ctx);
}

/* Reads A and B (B = A when absent) and checks the type; returns an exit
 * code. */
static int mul_prepare(mul_state *w, const mul_opts *o)
{
    int rc;
    if ((rc = cli_load_matrix(w->ctx, o->in[0], &o->ct, &w->A, NULL))) return rc;
    if (o->in[1] && (rc = cli_load_matrix(w->ctx, o->in[1], &o->ct, &w->B, NULL))) return rc;
    hisp_status s = hisp_matrix_get_info(w->A, &w->ia);
    if (!s) s = hisp_matrix_get_info(w->B ? w->B : w->A, &w->ib);
    if (s) return cli_fail(w->ctx, s, NULL);
    hisp_type t = w->ia.type;
    if (o->format == HISP_FORMAT_HISPARSE && t != HISP_F32 && t != HISP_F64)
        return cli_type_unsupported("multiply", t, "HiSparse operands are f32 or f64");
    if (t != HISP_F32 && t != HISP_F64 && t != HISP_C32 && t != HISP_C64)
        return cli_type_unsupported("multiply", t, "the product takes f32, f64, c32 and c64");
    /* as a caller holds them: converted once, outside the timed calls */
    s = hisp_matrix_convert(w->A, o->format);
    if (!s && w->B) s = hisp_matrix_convert(w->B, o->format);
    return s ? cli_fail(w->ctx, s, NULL) : CLI_OK;
}

/* --repeat products (the last one's C kept: each C is destroyed before
 * the next product, as a caller's loop does, and its memory reused), the
 * plan and --repeat numeric re-computations, each timed to completion;
 * transfers and kernel builds counted over all of them. */
static hisp_status mul_run(mul_state *w, const mul_opts *o)
{
    int n = o->repeat;
    hisp_matrix B = w->B ? w->B : w->A;
    if (!(w->ms = calloc((size_t)n, sizeof *w->ms)) ||
        !(w->num_ms = calloc((size_t)n, sizeof *w->num_ms)) ||
        !(w->dev_ms = calloc((size_t)n, sizeof *w->dev_ms)))
        return HISP_ERR_OUT_OF_HOST_MEMORY;
    cli_progress("multiplying %s and %s", o->in[0], o->in[1] ? o->in[1] : o->in[0]);
    hisp_build_stats b0 = cli_builds(w->ctx);
    cli_transfers_reset(w->ctx);
    hisp_status s = HISP_SUCCESS;
    for (int i = 0; i < n && !s; i++) {
        hisp_matrix T = NULL;
        hisp_matrix_destroy(&w->C);
        double t0 = cli_now_ms();
        s = o->ptap ? hisp_matrix_ptap(w->A, B, &T)
                    : hisp_matrix_multiply(o->op_a, w->A, o->op_b, B, &T);
        if (!s) s = hisp_context_synchronize(w->ctx);
        w->ms[i] = cli_now_ms() - t0;
        hisp_spgemm_stats st = {0};
        if (!s) s = hisp_context_spgemm_stats(w->ctx, &st);
        w->dev_ms[i] = st.device_ms;
        w->C = T;
        w->st = st;
    }
    w->plan_ms = w->num_med = NAN; /* P^T*A*P has no plan */
    double t0 = cli_now_ms();
    if (!s && !o->ptap) s = hisp_spgemm_plan_create(o->op_a, w->A, o->op_b, B, &w->plan, &w->D);
    if (!o->ptap) w->plan_ms = cli_now_ms() - t0;
    for (int i = 0; i < n && !s && !o->ptap; i++) {
        t0 = cli_now_ms();
        s = hisp_spgemm_plan_execute(w->plan, w->A, B, w->D);
        if (!s) s = hisp_context_synchronize(w->ctx);
        w->num_ms[i] = cli_now_ms() - t0;
    }
    cli_transfers_add(w->ctx, &w->xfer);
    hisp_build_stats b1 = cli_builds(w->ctx);
    cli_builds_add(&w->builds, &b0, &b1);
    if (!s) s = hisp_matrix_get_info(w->C, &w->ic);
    if (!s) s = hisp_context_get_device(w->ctx, &w->di);
    if (!s) {
        w->med = cli_median(w->ms, n);
        w->dev_med = w->st.on_device ? cli_median(w->dev_ms, n) : NAN;
        if (!o->ptap) w->num_med = cli_median(w->num_ms, n);
    }
    return s;
}

/* "A", "A^T", "A^H" with the operand's letter. */
static const char *op_text(hisp_op op, bool b)
{
    static const char *const n[2][3] = {{"A", "A^T", "A^H"}, {"B", "B^T", "B^H"}};
    return n[b][op == HISP_OP_N ? 0 : op == HISP_OP_T ? 1 : 2];
}

static void mul_report_json(const mul_opts *o, const mul_state *w)
{
    cli_json j;
    json_init(&j, stdout);
    json_object_begin(&j, NULL);
    json_string(&j, "a", o->in[0]);
    json_string(&j, "b", o->in[1] ? o->in[1] : o->in[0]);
    json_string(&j, "out", o->out);
    json_string(&j, "backend", hisp_backend_name(w->di.backend));
    json_device(&j, "device", &w->di);
    json_string(&j, "op", o->ptap ? "ptap" : "multiply");
    json_string(&j, "op_a", o->ptap ? "P^T" : op_text(o->op_a, false));
    json_string(&j, "op_b", o->ptap ? "A P" : op_text(o->op_b, o->in[1] != NULL));
    json_string(&j, "type", hisp_type_name(w->ic.type));
    json_string(&j, "format", hisp_format_name(w->ic.format));
    json_int(&j, "rows", w->ic.nrows);
    json_int(&j, "cols", w->ic.ncols);
    json_int(&j, "nnz", w->ic.nnz);
    json_int(&j, "nnz_a", w->ia.nnz);
    json_int(&j, "nnz_b", w->ib.nnz);
    json_int(&j, "repeat", o->repeat);
    json_double(&j, "wall_ms", w->med);
    json_double(&j, "device_ms", w->dev_med);
    if (w->st.on_device)
        json_uint(&j, "device_bytes_peak", w->st.device_bytes_peak);
    else
        json_null(&j, "device_bytes_peak");
    json_int(&j, "blocks", w->st.blocks);
    json_double(&j, "numeric_ms", w->num_med);
    json_double(&j, "plan_ms", w->plan_ms);
    json_transfers(&j, &w->xfer, NULL);
    json_builds(&j, &w->builds);
    json_object_end(&j);
    json_finish(&j);
}

static void mul_report_text(const mul_opts *o, const mul_state *w)
{
    const char *a = o->ptap ? "P" : op_text(o->op_a, false);
    const char *b = o->ptap ? "A" : op_text(o->op_b, o->in[1] != NULL);
    printf("wrote %s: %lld x %lld, %lld nonzeros (%s%s with %lld, %s with %lld), %s, on %s "
           "(%s)\n",
           o->out, (long long)w->ic.nrows, (long long)w->ic.ncols, (long long)w->ic.nnz,
           o->ptap ? "P^T*A*P of " : "", a, (long long)w->ia.nnz, b, (long long)w->ib.nnz,
           hisp_type_name(w->ic.type), hisp_backend_name(w->di.backend), w->di.name);
    if (o->ptap)
        printf("time       %.4f ms per product (median of %d)\n", w->med, o->repeat);
    else
        printf("time       %.4f ms per product, %.4f ms per numeric re-computation "
               "(medians of %d; plan %.4f ms)\n",
               w->med, w->num_med, o->repeat, w->plan_ms);
    if (w->st.on_device)
        printf("device     %.4f ms per product (median), %.1f MB of device memory at most, %d "
               "row blocks\n",
               w->dev_med, (double)w->st.device_bytes_peak / 1e6, w->st.blocks);
    cli_print_transfers("transfers", &w->xfer);
    cli_print_builds("kernels", &w->builds);
}

int cmd_multiply(int argc, char **argv)
{
    mul_opts o;
    int rc = mul_parse(argc, argv, &o);
    if (rc) return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
    cli_progress_enable(o.json);
    mul_state w;
    memset(&w, 0, sizeof w);
    if ((rc = cli_context(&w.ctx))) return rc;
    hisp_status s = hisp_context_set_backend(w.ctx, o.kind, o.device);
    if (s) {
        rc = cli_fail(w.ctx, s, NULL);
        goto done;
    }
    if ((rc = mul_prepare(&w, &o))) goto done;
    if ((s = mul_run(&w, &o))) {
        rc = cli_fail(w.ctx, s, NULL);
        goto done;
    }
    if ((rc = cli_write_matrix(w.ctx, w.C, o.out))) goto done;
    if (o.json)
        mul_report_json(&o, &w);
    else
        mul_report_text(&o, &w);
done:
    mul_state_free(&w);
    return rc;
}
