/* hisp convert: between Matrix Market and HiSparse files. */
#include "cli.h"

#include <stdlib.h>

static const char help[] =
    "usage: hisp convert IN -o OUT [options]\n"
    "\n"
    "Converts between Matrix Market (.mtx) and HiSparse (.hisp) files. The input\n"
    "kind is recognised by its first bytes, the output kind by the name: OUT\n"
    "ending in .hisp is a HiSparse file (docs/FORMAT.md), anything\n"
    "else Matrix Market (general coordinate; complex, quaternion and 3x3-block\n"
    "entries in their own fields, docs/COMPOUND.md). A .hisp input keeps its entry\n"
    "type, node size and state (transposed flag, scale) when written as .hisp\n"
    "again; written as .mtx it is the matrix as shown (state applied). IN may be\n"
    "a generator, gen:KIND[:N[:SEED]] (hisp gen --help). The work is on the host.\n"
    "\n"
    "options:\n"
    "  --node-size d        node size for a new tree, a power of two in 4..256 "
    "(128)\n"
    "  --format F           hold the matrix in format F (csr, hisparse, sell) before\n"
    "                       it is written (.hisp: hisparse): a round trip through F,\n"
    "                       whose bytes --json reports\n" CLI_TYPE_HELP
    "  --repeat N           time reading and writing: after the conversion's own\n"
    "                       read, N reads of IN (a file) through the library\n"
    "                       (hisp_matrix_read_mtx in the type read, or\n"
    "                       hisp_matrix_load), then N writes of OUT\n"
    "                       (hisp_matrix_write_mtx or hisp_matrix_save); wall ms\n"
    "                       per call, median; the host threads are the threads\n"
    "                       option (HISP_OPTIONS=threads=N)\n"
    "  -o FILE              the output file (required)\n" CLI_OUT_ALIASES_HELP
    "  --json               machine-readable summary: \"in\", \"out\", \"rows\",\n"
    "                       \"cols\", \"nnz\", \"format\" (of the output), \"bytes\"\n"
    "                       (HiSparse pool bytes when the output is .hisp; with\n"
    "                       --format, that format's bytes), \"held\" "
    "(--format),\n"
    "                       \"timing\" (--repeat: \"repeat\", \"threads\" (the option; 0:\n"
    "                       one per core), \"read_ms\",\n"
    "                       \"write_ms\" the medians, \"read_calls_ms\",\n"
    "                       \"write_calls_ms\" each call's),\n" CLI_HOST_JSON_HELP CLI_HELP_HELP
    "\n"
    "exit status: 0 ok, 1 usage, 2 unreadable, malformed or unwritable file.\n";

/* --repeat: wall ms of n reads of the file `in` through the library as
 * type t (each result freed untimed), then of n writes of A to out. */
static int timed_io(hisp_context ctx, const char *in, hisp_type t, hisp_matrix A, const char *out,
                    int n, double *read_ms, double *write_ms)
{
    bool hisp = cli_is_hisp_file(in);
    for (int i = 0; i < n; i++) {
        hisp_matrix B = NULL;
        cli_progress("reading %s (%d of %d)", in, i + 1, n);
        double t0 = cli_now_ms();
        hisp_status s =
            hisp ? hisp_matrix_load(ctx, in, &B) : hisp_matrix_read_mtx(ctx, in, t, &B, NULL);
        read_ms[i] = cli_now_ms() - t0;
        hisp_matrix_destroy(&B);
        if (s) return cli_fail(ctx, s, in);
    }
    for (int i = 0; i < n; i++) {
        double t0 = cli_now_ms();
        int rc = cli_write_matrix(ctx, A, out);
        write_ms[i] = cli_now_ms() - t0;
        if (rc) return rc;
    }
    return CLI_OK;
}

static void json_timing(cli_json *j, hisp_context ctx, int n, double *read_ms, double *write_ms)
{
    char threads[32] = "";
    if (hisp_context_get_option(ctx, "threads", threads, sizeof threads)) threads[0] = 0;
    json_object_begin(j, "timing");
    json_int(j, "repeat", n);
    json_int(j, "threads", atoi(threads));
    json_array_begin(j, "read_calls_ms");
    for (int i = 0; i < n; i++)
        json_double(j, NULL, read_ms[i]);
    json_array_end(j);
    json_array_begin(j, "write_calls_ms");
    for (int i = 0; i < n; i++)
        json_double(j, NULL, write_ms[i]);
    json_array_end(j);
    json_double(j, "read_ms", cli_median(read_ms, n)); /* sorts: after the calls' list */
    json_double(j, "write_ms", cli_median(write_ms, n));
    json_object_end(j);
}

int cmd_convert(int argc, char **argv)
{
    static const cli_opt opts[] = {
        CLI_TYPE_OPTS,      CLI_OUT_OPTS,       {"--node-size", true}, {"--json", false},
        {"--format", true}, {"--repeat", true}, CLI_HELP_OPTS,         {0, 0}};
    const char *val[10] = {0}, *in = NULL, *out = NULL;
    int prc = cli_parse_command("convert", argc, argv, opts, help, val, &in);
    if (prc) return prc == CLI_HELP_SHOWN ? CLI_OK : prc;
    const char *node = val[6];
    bool json = val[7] != NULL;
    int rc = cli_parse_out("convert", val + 3, &out);
    if (rc) return rc;
    if (!in) return cli_usage_error("convert", "missing IN");
    if (!out) return cli_usage_error("convert", "missing -o OUT");
    int d = 0;
    cli_type ct;
    if ((rc = cli_parse_type("convert", val, &ct))) return rc;
    if (node && (rc = cli_parse_int("--node-size", node, 4, 256, &d))) return rc;
    int repeat = 0;
    if (val[9] && (rc = cli_parse_int("--repeat", val[9], 1, 1000, &repeat))) return rc;
    if (repeat && cli_is_gen_spec(in))
        return cli_usage_error("convert", "--repeat times reading a file, not a generator");
    hisp_format held = HISP_FORMAT_CSR;
    if (val[8] && (rc = cli_parse_format("convert", val[8], &held, NULL))) return rc;
    if (val[8] && cli_is_hisp_name(out) && held != HISP_FORMAT_HISPARSE)
        return cli_usage_error("convert", "a .hisp file holds a HiSparse tree, not --format %s",
                               val[8]);
    cli_progress_enable(json);
    hisp_context ctx = NULL;
    if ((rc = cli_context(&ctx))) return rc;
    hisp_matrix A = NULL;
    hisp_matrix_info mi = {0};
    uint64_t bytes = 0;
    double *read_ms = calloc((size_t)repeat + 1, sizeof *read_ms);
    double *write_ms = calloc((size_t)repeat + 1, sizeof *write_ms);
    if (!read_ms || !write_ms) {
        rc = cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL);
        goto done;
    }
    if ((rc = cli_load_matrix(ctx, in, &ct, &A, NULL))) goto done;
    hisp_status s = hisp_matrix_get_info(A, &mi);

    if (!s && d) s = hisp_matrix_set_node_size(A, d);
    if (!s && d && mi.format == HISP_FORMAT_HISPARSE) { /* a new node size: rebuild */
        s = hisp_matrix_convert(A, HISP_FORMAT_CSR);
        if (!s) s = hisp_matrix_convert(A, HISP_FORMAT_HISPARSE);
    }
    if (!s && val[8]) { /* the round trip through the format asked for */
        cli_progress("building the %s form", hisp_format_name(held));
        s = hisp_matrix_convert(A, held);
        if (!s) s = hisp_matrix_format_bytes(A, held, mi.type, &bytes);
    } else if (!s && cli_is_hisp_name(out)) {
        s = hisp_matrix_format_bytes(A, HISP_FORMAT_HISPARSE, mi.type, &bytes);
    }
    if (s) {
        rc = cli_fail(ctx, s, in);
        goto done;
    }
    if (repeat)
        rc = timed_io(ctx, in, mi.type, A, out, repeat, read_ms, write_ms);
    else
        rc = cli_write_matrix(ctx, A, out);
    if (rc) goto done;
    bool hisp = cli_is_hisp_name(out);
    int64_t rows = 0, cols = 0, nnz = 0; /* the file's */
    cli_file_sizes(&mi, !hisp, &rows, &cols, &nnz);
    char note[96] = "";
    if (rows != mi.nrows)
        snprintf(note, sizeof note, ", %lld x %lld blocks of 3x3, %lld blocks", (long long)mi.nrows,
                 (long long)mi.ncols, (long long)mi.nnz);
    if (json) {
        cli_json j;
        json_init(&j, stdout);
        json_object_begin(&j, NULL);
        json_string(&j, "in", in);
        json_string(&j, "out", out);
        json_string(&j, "format", hisp ? "hisparse" : "mtx");
        json_context_device(&j, ctx);
        json_string(&j, "type", hisp_type_name(mi.type));
        json_int(&j, "rows", rows);
        json_int(&j, "cols", cols);
        json_int(&j, "nnz", nnz);
        if (rows != mi.nrows) {
            json_object_begin(&j, "blocks");
            json_int(&j, "rows", mi.nrows);
            json_int(&j, "cols", mi.ncols);
            json_int(&j, "nnz", mi.nnz);
            json_object_end(&j);
        }
        if (hisp || val[8]) json_uint(&j, "bytes", bytes);
        if (val[8]) json_string(&j, "held", hisp_format_name(held));
        if (repeat) json_timing(&j, ctx, repeat, read_ms, write_ms);
        json_transfers_of(&j, ctx);
        json_object_end(&j);
        json_finish(&j);
    } else {
        printf("wrote %s: %lld x %lld, %lld entries, %s%s%s", out, (long long)rows, (long long)cols,
               (long long)nnz, hisp_type_name(mi.type), note,
               hisp ? ", HiSparse" : ", Matrix Market");
        if (hisp) printf(" (%llu pool bytes)", (unsigned long long)bytes);
        printf("\n");
        if (repeat)
            printf("read %.3f ms, write %.3f ms (median of %d calls each)\n",
                   cli_median(read_ms, repeat), cli_median(write_ms, repeat), repeat);
    }
done:
    free(read_ms);
    free(write_ms);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
    return rc;
}
