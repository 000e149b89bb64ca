/* hisp edit: copy-on-write insertions and removals on a HiSparse tree. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static const char help[] =
    "usage: hisp edit IN|gen:KIND[:N[:SEED]] [--insert FILE.mtx] [--remove FILE.mtx]\n"
    "                 -o OUT [options]\n"
    "\n"
    "Applies one batch of changes to the matrix in IN (.mtx or .hisp) as a\n"
    "HiSparse tree: every entry of the --insert file is set (inserted, or\n"
    "overwritten when present), then every coordinate of the --remove file is\n"
    "removed (its values are ignored; absent entries are skipped). Only the\n"
    "paths from the root to the touched leaves are copied; every other node is\n"
    "shared with the original. Writes OUT (.hisp or .mtx by its name) and reports\n"
    "the counts and how many nodes were copied and how many shared. The work is\n"
    "on the host.\n"
    "\n"
    "options:\n"
    "  --insert FILE.mtx    entries to insert or overwrite (same shape or smaller)\n"
    "  --remove FILE.mtx    entries to remove\n"
    "  --node-size d        node size when IN is a .mtx file (default 128)\n" CLI_TYPE_HELP
    "  -o FILE              the output file (required; .hisp: HiSparse, else\n"
    "                       Matrix Market)\n" CLI_OUT_ALIASES_HELP
    "  --json               machine-readable: \"in\", \"out\", \"inserted\",\n"
    "                       \"overwritten\", \"removed\", \"ignored\", \"nodes_copied\",\n"
    "                       \"nodes_shared\", \"nodes\", \"bytes_added\", \"bytes\",\n"
    "                       \"rows\", \"cols\", \"nnz\",\n" CLI_HOST_JSON_HELP CLI_HELP_HELP "\n"
    "exit status: 0 ok, 1 usage, 2 unreadable or malformed file, entry outside\n"
    "the matrix.\n";

/* Appends the entries of a .mtx file to the batch. */
static int add_changes(hisp_context ctx, const char *path, hisp_type t, bool rm, int64_t *n,
                       int32_t **r, int32_t **c, unsigned char **v, uint8_t **f)
{
    hisp_matrix M = NULL;
    hisp_matrix_info mi;
    const int32_t *rows, *cols;
    const void *vals;
    cli_progress("reading %s", path);
    hisp_status s = hisp_matrix_read_mtx(ctx, path, t, &M, NULL);
    if (!s) s = hisp_matrix_convert(M, HISP_FORMAT_COO);
    if (!s) s = hisp_matrix_get_info(M, &mi);
    if (!s) s = hisp_matrix_host_arrays(M, NULL, &rows, &cols, &vals);
    if (s) {
        hisp_matrix_destroy(&M);
        return cli_fail(ctx, s, path);
    }
    size_t es = hisp_type_size(t), tot = (size_t)(*n + mi.nnz) + 1;
    int32_t *nr = realloc(*r, tot * 4), *nc = nr ? realloc(*c, tot * 4) : NULL;
    if (nr) *r = nr;
    if (nc) *c = nc;
    unsigned char *nv = nc ? realloc(*v, tot * es) : NULL;
    if (nv) *v = nv;
    uint8_t *nf = nv ? realloc(*f, tot) : NULL;
    if (nf) *f = nf;
    if (!nf) {
        hisp_matrix_destroy(&M);
        return cli_fail(ctx, HISP_ERR_OUT_OF_HOST_MEMORY, NULL);
    }
    memcpy(*r + *n, rows, (size_t)mi.nnz * 4);
    memcpy(*c + *n, cols, (size_t)mi.nnz * 4);
    memcpy(*v + (size_t)*n * es, vals, (size_t)mi.nnz * es);
    memset(*f + *n, rm ? 1 : 0, (size_t)mi.nnz);
    *n += mi.nnz;
    hisp_matrix_destroy(&M);
    return CLI_OK;
}

int cmd_edit(int argc, char **argv)
{
    enum { O_OUT, O_INSERT = 3, O_REMOVE, O_NODE, O_TYPE, O_JSON = 9, O_HELP };
    static const cli_opt opts[] = {
        CLI_OUT_OPTS,  {"--insert", true}, {"--remove", true}, {"--node-size", true},
        CLI_TYPE_OPTS, {"--json", false},  CLI_HELP_OPTS,      {0, 0}};
    const char *val[O_HELP] = {0}, *in = NULL, *out = NULL;
    int prc = cli_parse_command("edit", argc, argv, opts, help, val, &in);
    if (prc) return prc == CLI_HELP_SHOWN ? CLI_OK : prc;
    bool json = val[O_JSON] != NULL;
    if ((prc = cli_parse_out("edit", val + O_OUT, &out))) return prc;
    if (!in) return cli_usage_error("edit", "missing IN");
    if (!out) return cli_usage_error("edit", "missing -o OUT");
    int rc = CLI_OK, d = 0;
    cli_type ct;
    if ((rc = cli_parse_type("edit", val + O_TYPE, &ct))) return rc;
    hisp_type type = ct.type;
    if (val[O_NODE] && (rc = cli_parse_int("--node-size", val[O_NODE], 4, 256, &d))) return rc;
    cli_progress_enable(json);
    hisp_context ctx = NULL;
    if ((rc = cli_context(&ctx))) return rc;
    hisp_matrix A = NULL, B = NULL;
    int64_t n = 0;
    int32_t *r = NULL, *c = NULL;
    unsigned char *v = NULL;
    uint8_t *f = NULL;
    hisp_matrix_info mi = {0};
    hisp_edit_stats es = {0};
    hisp_hisparse_profile p = {0};
    if ((rc = cli_load_matrix(ctx, in, &ct, &A, NULL))) goto done;
    hisp_status s = hisp_matrix_get_info(A, &mi);
    if (!s && d) s = hisp_matrix_set_node_size(A, d);
    if (!s) s = hisp_matrix_convert(A, HISP_FORMAT_HISPARSE);
    if (s) {
        rc = cli_fail(ctx, s, in);
        goto done;
    }
    type = mi.type;
    if (val[O_INSERT] && (rc = add_changes(ctx, val[O_INSERT], type, false, &n, &r, &c, &v, &f)))
        goto done;
    if (val[O_REMOVE] && (rc = add_changes(ctx, val[O_REMOVE], type, true, &n, &r, &c, &v, &f)))
        goto done;
    cli_progress("editing");
    s = hisp_matrix_edit(A, n, r, c, v, f, &B, &es);
    if (!s) s = hisp_matrix_hisparse_profile(B, &p);
    if (!s) s = hisp_matrix_get_info(B, &mi);
    if (s) {
        rc = cli_fail(ctx, s, NULL);
        goto done;
    }
    if ((rc = cli_write_matrix(ctx, B, out))) goto done;
    int64_t nodes = 0;
    for (int t = 1; t < 9; t++)
        nodes += p.nodes[t];
    int64_t shared = nodes - es.nodes_copied;
    if (json) {
        cli_json j;
        json_init(&j, stdout);
        json_object_begin(&j, NULL);
        json_string(&j, "in", in);
        json_string(&j, "out", out);
        json_context_device(&j, ctx);
        json_string(&j, "type", hisp_type_name(mi.type));
        json_int(&j, "rows", mi.nrows);
        json_int(&j, "cols", mi.ncols);
        json_int(&j, "nnz", mi.nnz);
        json_int(&j, "inserted", es.inserted);
        json_int(&j, "overwritten", es.overwritten);
        json_int(&j, "removed", es.removed);
        json_int(&j, "ignored", es.ignored);
        json_int(&j, "nodes", nodes);
        json_int(&j, "nodes_copied", es.nodes_copied);
        json_int(&j, "nodes_shared", shared);
        json_uint(&j, "bytes_added", es.bytes_added);
        json_uint(&j, "bytes", p.bytes);
        json_transfers_of(&j, ctx);
        json_object_end(&j);
        json_finish(&j);
    } else {
        printf("changes    %lld inserted, %lld overwritten, %lld removed, %lld absent\n",
               (long long)es.inserted, (long long)es.overwritten, (long long)es.removed,
               (long long)es.ignored);
        printf("nodes      %lld copied (%llu bytes), %lld shared with the original, %lld in all\n",
               (long long)es.nodes_copied, (unsigned long long)es.bytes_added, (long long)shared,
               (long long)nodes);
        printf("wrote      %s: %lld x %lld, %lld nonzeros, %llu HiSparse bytes\n", out,
               (long long)mi.nrows, (long long)mi.ncols, (long long)mi.nnz,
               (unsigned long long)p.bytes);
    }
done:
    free(r);
    free(c);
    free(v);
    free(f);
    hisp_matrix_destroy(&A);
    hisp_matrix_destroy(&B);
    hisp_context_destroy(&ctx);
    return rc;
}
