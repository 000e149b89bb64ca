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

int cmd_add(int argc, char **argv)
{
    enum {
        O_OUT, /* CLI_OUT_OPTS */
        O_OUT2,
        O_OUT3,
        O_TRANS,
        O_ALPHA,
        O_BETA,
        O_BACKEND,
        O_NODE,
        O_TYPE, /* CLI_TYPE_OPTS */
        O_ENTRY,
        O_PREC,
        O_REPEAT,
        O_JSON,
        O_DEVICE,
        O_HELP
    };
    static const cli_opt opts[] = {CLI_OUT_OPTS,       CLI_TRANSPOSE_OPT,   {"--alpha", true},
                                   {"--beta", true},   {"--backend", true}, {"--node-size", true},
                                   CLI_TYPE_OPTS,      {"--repeat", true},  {"--json", false},
                                   {"--device", true}, CLI_HELP_OPTS,       {0, 0}};
    const char *val[O_HELP] = {0}, *in[2] = {0};
    cli_args a;
    cli_args_init(&a, "add", argc, argv);
    for (;;) {
        const char *v;
        int k = cli_args_next(&a, opts, &v);
        if (k == CLI_ARG_END) break;
        if (k == CLI_ARG_ERROR) return CLI_USAGE;
        if (k == CLI_ARG_POSITIONAL) {
            if (in[1]) return cli_usage_error("add", "unexpected argument '%s'", v);
            in[in[0] ? 1 : 0] = v;
        } else if (k >= O_HELP) {
            fputs(help, stdout);
            return CLI_OK;
        } else {
            val[k] = v ? v : "";
        }
    }
    if (!in[0] || !in[1]) return cli_usage_error("add", "need two input files A and B");
    const char *out = NULL;
    int rc = cli_parse_out("add", val + O_OUT, &out);
    if (rc) return rc;
    if (!out) return cli_usage_error("add", "missing -o C");
    bool json = val[O_JSON] != NULL;
    double alpha = 1, beta = 1;
    int d = 0, repeat = 0, device = -1;
    cli_type ct;
    hisp_op op = HISP_OP_N;
    hisp_backend_kind kind = HISP_BACKEND_AUTO;
    if ((rc = cli_parse_type("add", val + O_TYPE, &ct))) return rc;
    if ((rc = cli_parse_transpose("add", val[O_TRANS], NULL, &op))) return rc;
    if (val[O_ALPHA] && (rc = cli_parse_double("--alpha", val[O_ALPHA], &alpha))) return rc;
    if (val[O_BETA] && (rc = cli_parse_double("--beta", val[O_BETA], &beta))) return rc;
    if (val[O_BACKEND] && (rc = cli_parse_backend("--backend", val[O_BACKEND], &kind))) return rc;
    if (val[O_NODE] && (rc = cli_parse_int("--node-size", val[O_NODE], 4, 256, &d))) return rc;
    if (val[O_REPEAT] && (rc = cli_parse_int("--repeat", val[O_REPEAT], 1, 1000000, &repeat)))
        return rc;
    if (val[O_DEVICE] && (rc = cli_parse_int("--device", val[O_DEVICE], 0, 1 << 20, &device)))
        return rc;
    cli_progress_enable(json);
    hisp_context ctx = NULL;
    if ((rc = cli_context(&ctx))) return rc;
    hisp_status bs = hisp_context_set_backend(ctx, kind, device);
    if (bs) {
        rc = cli_fail(ctx, bs, NULL);
        hisp_context_destroy(&ctx);
        return rc;
    }
    hisp_matrix A = NULL, B = NULL, As = NULL, Bs = NULL, C = NULL;
    bool ownA = false, ownB = false;
    double *ms = NULL, *dev_ms = NULL;
    hisp_matrix_info ia = {0}, ib = {0}, ic = {0};
    if ((rc = cli_load_matrix(ctx, in[0], &ct, &A, NULL))) goto done;
    if ((rc = cli_load_matrix(ctx, in[1], &ct, &B, NULL))) goto done;
    hisp_status s = hisp_matrix_get_info(A, &ia);
    if (!s) s = hisp_matrix_get_info(B, &ib);
    if (!s && ((rc = cli_check_real("--alpha", alpha, ia.type)) ||
               (rc = cli_check_real("--beta", beta, ib.type))))
        goto done;
    if (!s && op == HISP_OP_H) {
        if (!cli_type_real(ia.type)) {
            rc = cli_type_unsupported("add --transpose h", ia.type, "the addition takes op n or t");
            goto done;
        }
        op = HISP_OP_T; /* A^H = A^T for real entries */
    }
    if (!s && d && ia.format != HISP_FORMAT_HISPARSE) s = hisp_matrix_set_node_size(A, d);
    if (!s) s = scaled(A, alpha, &As, &ownA);
    if (!s) s = scaled(B, beta, &Bs, &ownB);
    cli_progress("adding %s and %s", in[0], in[1]);
    int n = repeat > 0 ? repeat : 0;
    hisp_transfer_stats xfer = {0}; /* the timed sums, else the one sum */
    hisp_build_stats builds = {0}, b0 = cli_builds(ctx), b1;
    cli_transfers_reset(ctx);
    if (!s) s = hisp_matrix_add(op, As, op, Bs, &C);
    if (!n) cli_transfers_add(ctx, &xfer);
    b1 = cli_builds(ctx);
    cli_builds_add(&builds, &b0, &b1);
    hisp_add_stats st = {0}, sti = {0};
    if (!s) s = hisp_context_add_stats(ctx, &st);
    if (!s && n &&
        (!(ms = malloc((size_t)n * sizeof *ms)) || !(dev_ms = malloc((size_t)n * sizeof *dev_ms))))
        s = HISP_ERR_OUT_OF_HOST_MEMORY;
    cli_transfers_reset(ctx);
    for (int i = 0; i < n && !s; i++) {
        hisp_matrix T = NULL;
        b0 = cli_builds(ctx);
        double t0 = cli_now_ms();
        s = hisp_matrix_add(op, As, op, Bs, &T);
        ms[i] = cli_now_ms() - t0;
        b1 = cli_builds(ctx);
        ms[i] -= cli_builds_ms(&b0, &b1); /* a kernel built on the way is not the sum */
        cli_builds_add(&builds, &b0, &b1);
        if (!s) s = hisp_context_add_stats(ctx, &sti);
        dev_ms[i] = sti.device_ms;
        hisp_matrix_destroy(&T);
    }
    if (n) cli_transfers_add(ctx, &xfer);
    if (!s) s = hisp_matrix_get_info(C, &ic);
    hisp_backend_kind used = kind;
    hisp_device_info di = {0};
    if (!s) s = hisp_context_get_device(ctx, &di);
    if (!s) used = di.backend;
    if (s) {
        rc = cli_fail(ctx, s, NULL);
        goto done;
    }
    if ((rc = cli_write_matrix(ctx, C, out))) goto done;
    double med = 0, dev = st.device_ms; /* --repeat: the timed sums' medians */
    if (n) {
        med = median(ms, n);
        dev = median(dev_ms, n);
    }
    if (json) {
        cli_json j;
        json_init(&j, stdout);
        json_object_begin(&j, NULL);
        json_string(&j, "a", in[0]);
        json_string(&j, "b", in[1]);
        json_string(&j, "out", out);
        json_string(&j, "backend", hisp_backend_name(used));
        json_device(&j, "device", &di);
        json_bool(&j, "transpose", op != HISP_OP_N);
        json_double(&j, "alpha", alpha);
        json_double(&j, "beta", beta);
        json_string(&j, "type", hisp_type_name(ic.type));
        json_int(&j, "rows", ic.nrows);
        json_int(&j, "cols", ic.ncols);
        json_int(&j, "nnz_a", ia.nnz);
        json_int(&j, "nnz_b", ib.nnz);
        json_int(&j, "nnz", ic.nnz);
        json_int(&j, "nodes_new", st.nodes_new);
        json_int(&j, "bytes_new", (long long)st.bytes_new);
        json_int(&j, "bytes_reserved", (long long)st.bytes_reserved);
        json_int(&j, "subtrees_shared", st.subtrees_shared);
        json_int(&j, "subtrees_copied", st.subtrees_copied);
        json_int(&j, "pool_retries", st.pool_retries);
        json_int(&j, "zero_retries", st.zero_retries);
        json_int(&j, "rounds", st.rounds);
        json_int(&j, "launches", st.launches);
        json_double(&j, "device_ms", dev);
        if (n) {
            json_int(&j, "repeat", n);
            json_double(&j, "median_ms", med);
        }
        json_transfers(&j, &xfer, NULL);
        json_builds(&j, &builds);
        json_object_end(&j);
        json_finish(&j);
    } else {
        int64_t fr = 0, fc = 0, fn = 0; /* the file's */
        cli_file_sizes(&ic, !cli_is_hisp_name(out), &fr, &fc, &fn);
        if (fr != ic.nrows)
            printf("wrote %s: %lld x %lld, %lld entries (%lld x %lld blocks of 3x3, %lld blocks: "
                   "A %lld, B %lld), %s, on %s (%s)\n",
                   out, (long long)fr, (long long)fc, (long long)fn, (long long)ic.nrows,
                   (long long)ic.ncols, (long long)ic.nnz, (long long)ia.nnz, (long long)ib.nnz,
                   hisp_type_name(ic.type), hisp_backend_name(used), di.name);
        else
            printf("wrote %s: %lld x %lld, %lld nonzeros (A %lld, B %lld), %s, on %s (%s)\n", out,
                   (long long)ic.nrows, (long long)ic.ncols, (long long)ic.nnz, (long long)ia.nnz,
                   (long long)ib.nnz, hisp_type_name(ic.type), hisp_backend_name(used), di.name);
        if (st.rounds)
            printf("device     %.4f ms%s, %d rounds, %d launches, %lld new nodes (%llu bytes), "
                   "%lld subtrees shared, %lld copied, %d pool regrowths, %d zero-sum redos\n",
                   dev, n ? " (median)" : "", st.rounds, st.launches, (long long)st.nodes_new,
                   (unsigned long long)st.bytes_new, (long long)st.subtrees_shared,
                   (long long)st.subtrees_copied, st.pool_retries, st.zero_retries);
        if (n) printf("time       median %.4f ms over %d sums\n", med, n);
        cli_print_transfers("transfers", &xfer);
        cli_print_builds("kernels", &builds);
    }
done:
    free(ms);
    free(dev_ms);
    hisp_matrix_destroy(&C);
    if (ownA) hisp_matrix_destroy(&As);
    if (ownB) hisp_matrix_destroy(&Bs);
    hisp_matrix_destroy(&A);
    hisp_matrix_destroy(&B);
    hisp_context_destroy(&ctx);
    return rc;
}
