/* hisp stats: sizes, row-length statistics and storage bytes of a file. */
#include "cli.h"

#include <string.h>

#include <math.h>

static const char help[] =
    "usage: hisp stats FILE.mtx|FILE.hisp|gen:KIND[:N[:SEED]] [options]\n"
    "\n"
    "Reads a Matrix Market file (symmetric, skew-symmetric and hermitian files\n"
    "are expanded) and prints rows, cols, nnz after expansion, field and\n"
    "symmetry from the header, row-length min/mean/max/stddev, the number of\n"
    "empty rows, and the bytes the matrix takes in each storage format that\n"
    "holds its entry type (coo, csr, csc, hisparse; sell for f32/f64, padding\n"
    "included), with bytes per nonzero, and the\n"
    "HiSparse profile (as Figure 4 of the HiSparse paper, Derler et al., ICS'17):\n"
    "sparse and dense inner nodes with their mean children, sparse and dense\n"
    "leaves with their mean nonzeros, depth. A .hisp file is described as stored\n"
    "(its own entry type and node size unless --node-size asks for another).\n"
    "Every entry type works.\n"
    "The work is on the host.\n"
    "\n"
    "options:\n"
    "  --node-size d        HiSparse node size, a power of two in 4..256 (128)\n" CLI_TYPE_HELP
    "  --json               machine-readable: \"file\", \"rows\", \"cols\", \"nnz\",\n"
    "                       \"field\", \"symmetry\", \"row_length\": {\"min\", \"mean\",\n"
    "                       \"max\", \"stddev\"}, \"empty_rows\", \"bytes\" and\n"
    "                       \"bytes_per_nnz\": one key per format (\"coo\", \"csr\",\n"
    "                       \"csc\", \"hisparse\", \"sell\"; null where the format\n"
    "                       does not hold the type),\n"
    "                       \"hisparse\": {\"node_size\", \"depth\",\n"
    "                       \"inner_sparse\", \"inner_dense\", \"leaf_sparse\",\n"
    "                       \"leaf_dense\" (each {\"count\", \"mean\"}: children of\n"
    "                       inner nodes, nonzeros of leaves), "
    "\"nodes_by_type\"},\n" CLI_HOST_JSON_HELP CLI_HELP_HELP "\n" CLI_GEN_SPEC_HELP "\n"
    "exit status: 0 ok, 1 usage, 2 unreadable or malformed file.\n";

enum { NF = 16 };

/* hisp stats' matrix and what it measures; stats_free releases it. */
typedef struct {
    const char *path;
    int node_size; /* --node-size, 0: the default */
    hisp_context ctx;
    hisp_matrix A;     /* converted to CSR */
    hisp_matrix H;     /* the HiSparse tree described by the profile */
    hisp_mtx_header h; /* the file's banner (made up for .hisp files, generators) */
    hisp_matrix_info mi;
    hisp_type type;
    const int64_t *ptr; /* A's row pointers */
    uint64_t bytes[NF]; /* by format; have[f]: the format holds this type */
    bool have[NF];
    int nf;    /* formats hisp has */
    bool tree; /* a HiSparse tree of these entries exists (and prof describes it) */
    hisp_hisparse_profile prof;
    int64_t rmin, rmax, empty; /* row lengths */
    double mean, sd;
} stats_state;

/* Reads A (a .hisp file: and its tree, shared, unless --node-size asks for
 * another) and fills in the banner the input lacks. */
static int stats_load(stats_state *st, const cli_type *ct)
{
    int rc;
    const char *path = st->path;
    hisp_mtx_header *h = &st->h;
    bool hispf = !cli_is_gen_spec(path) && cli_is_hisp_file(path);
    if (!hispf) {
        if ((rc = cli_load_matrix(st->ctx, path, ct, &st->A, h))) return rc;
        if (cli_is_gen_spec(path)) {
            snprintf(h->field, sizeof h->field, "generated");
            snprintf(h->symmetry, sizeof h->symmetry, "general");
        }
        return CLI_OK;
    }
    if ((rc = cli_load_matrix(st->ctx, path, ct, &st->A, NULL))) return rc;
    snprintf(h->field, sizeof h->field, "hisparse");
    snprintf(h->symmetry, sizeof h->symmetry, "general");
    hisp_status s = hisp_matrix_get_info(st->A, &st->mi);
    if (!s) h->nnz_stored = st->mi.nnz;
    st->type = st->mi.type;
    if (!s && !st->node_size) s = hisp_matrix_duplicate(st->A, HISP_FORMAT_HISPARSE, &st->H);
    return s ? cli_fail(st->ctx, s, path) : CLI_OK;
}

/* A as CSR, its HiSparse tree and profile (none for entries no tree
 * holds), and the bytes of every format that holds the type. */
static int stats_measure(stats_state *st)
{
    hisp_status s = hisp_matrix_convert(st->A, HISP_FORMAT_CSR);
    if (!s) s = hisp_matrix_get_info(st->A, &st->mi);
    if (!s) st->type = st->mi.type;
    if (!s && cli_is_gen_spec(st->path)) st->h.nnz_stored = st->mi.nnz;
    st->tree = true;
    if (!s && st->node_size) s = hisp_matrix_set_node_size(st->A, st->node_size);
    if (!s && !st->H) {
        cli_progress("building the HiSparse tree");
        s = hisp_matrix_duplicate(st->A, HISP_FORMAT_HISPARSE, &st->H);
        if (s && !cli_type_real(st->type)) { /* no tree of these entries: no profile */
            st->tree = false;
            s = HISP_SUCCESS;
        }
    }
    if (!s && st->tree) s = hisp_matrix_hisparse_profile(st->H, &st->prof);
    const int32_t *rows = NULL, *cols = NULL;
    const void *vals = NULL;
    if (!s) s = hisp_matrix_host_arrays(st->A, &st->ptr, &rows, &cols, &vals);
    for (int f = 0; f < st->nf && !s; f++) { /* HiSparse: the tree's own, with its node size */
        hisp_matrix M = f == HISP_FORMAT_HISPARSE ? (st->tree ? st->H : NULL) : st->A;
        if (!M) continue;
        s = hisp_matrix_format_bytes(M, (hisp_format)f, st->type, &st->bytes[f]);
        st->have[f] = !s;
        if (s == HISP_ERR_UNSUPPORTED) s = HISP_SUCCESS; /* not a type this format holds */
    }
    return s ? cli_fail(st->ctx, s, st->path) : CLI_OK;
}

/* Row lengths: min, mean, max, standard deviation, empty rows. */
static void stats_row_lengths(stats_state *st)
{
    double m2 = 0;
    for (int64_t i = 0; i < st->mi.nrows; i++) {
        int64_t len = st->ptr[i + 1] - st->ptr[i];
        if (i == 0 || len < st->rmin) st->rmin = len;
        if (i == 0 || len > st->rmax) st->rmax = len;
        if (len == 0) st->empty++;
        double d = (double)len - st->mean; /* Welford: stable for long inputs */
        st->mean += d / (double)(i + 1);
        m2 += d * ((double)len - st->mean);
    }
    st->sd = st->mi.nrows > 0 ? sqrt(m2 / (double)st->mi.nrows) : 0;
}

/* The "hisparse" member: the tree's profile. */
static void json_profile(cli_json *j, const hisp_hisparse_profile *prof)
{
    json_object_begin(j, "hisparse");
    json_int(j, "node_size", prof->node_size);
    json_int(j, "depth", prof->depth);
    static const char *const kn[4] = {"inner_sparse", "inner_dense", "leaf_sparse", "leaf_dense"};
    const int64_t kc[4] = {prof->inner_sparse, prof->inner_dense, prof->leaf_sparse,
                           prof->leaf_dense};
    const double km[4] = {prof->inner_sparse_mean, prof->inner_dense_mean, prof->leaf_sparse_mean,
                          prof->leaf_dense_mean};
    for (int q = 0; q < 4; q++) {
        json_object_begin(j, kn[q]);
        json_int(j, "count", kc[q]);
        json_double(j, "mean", km[q]);
        json_object_end(j);
    }
    static const char *const tn[9] = {"",           "inner_dense", "inner_coo1",
                                      "inner_coo2", "inner_coo4",  "leaf_dense",
                                      "leaf_coo1",  "leaf_coo2",   "leaf_coo4"};
    json_object_begin(j, "nodes_by_type");
    for (int q = 1; q < 9; q++)
        json_int(j, tn[q], prof->nodes[q]);
    json_object_end(j);
    json_object_end(j);
}

static void stats_report_json(const stats_state *st)
{
    const hisp_mtx_header *h = &st->h;
    double nnzd = st->mi.nnz > 0 ? (double)st->mi.nnz : NAN;
    cli_json j;
    json_init(&j, stdout);
    json_object_begin(&j, NULL);
    json_input(&j, st->path);
    json_context_device(&j, st->ctx);
    json_string(&j, "type", hisp_type_name(st->type));
    json_int(&j, "rows", st->mi.nrows);
    json_int(&j, "cols", st->mi.ncols);
    json_int(&j, "nnz", st->mi.nnz);
    json_int(&j, "nnz_stored", h->nnz_stored);
    json_string(&j, "field", h->field);
    json_string(&j, "symmetry", h->symmetry);
    json_string(&j, "layout", h->is_array ? "array" : "coordinate");
    json_object_begin(&j, "row_length");
    json_int(&j, "min", st->rmin);
    json_double(&j, "mean", st->mean);
    json_int(&j, "max", st->rmax);
    json_double(&j, "stddev", st->sd);
    json_object_end(&j);
    json_int(&j, "empty_rows", st->empty);
    json_object_begin(&j, "bytes");
    for (int f = 0; f < st->nf; f++)
        if (st->have[f])
            json_uint(&j, hisp_format_name((hisp_format)f), st->bytes[f]);
        else
            json_null(&j, hisp_format_name((hisp_format)f));
    json_object_end(&j);
    json_object_begin(&j, "bytes_per_nnz");
    for (int f = 0; f < st->nf; f++)
        json_double(&j, hisp_format_name((hisp_format)f),
                    st->have[f] ? (double)st->bytes[f] / nnzd : NAN);
    json_object_end(&j);
    if (!st->tree)
        json_null(&j, "hisparse");
    else
        json_profile(&j, &st->prof);
    json_transfers_of(&j, st->ctx);
    json_object_end(&j);
    json_finish(&j);
}

static void stats_report_text(const stats_state *st)
{
    const hisp_mtx_header *h = &st->h;
    const hisp_matrix_info *mi = &st->mi;
    const hisp_hisparse_profile *prof = &st->prof;
    double nnzd = mi->nnz > 0 ? (double)mi->nnz : NAN;
    printf("%-11s %s\n", cli_is_gen_spec(st->path) ? "generator" : "file", st->path);
    printf("size        %lld x %lld\n", (long long)mi->nrows, (long long)mi->ncols);
    printf("nnz         %lld (%lld stored in the file)\n", (long long)mi->nnz,
           (long long)h->nnz_stored);
    printf("header      %s %s %s\n", h->is_array ? "array" : "coordinate", h->field, h->symmetry);
    printf("row length  min %lld, mean %.2f, max %lld, stddev %.2f\n", (long long)st->rmin,
           st->mean, (long long)st->rmax, st->sd);
    printf("empty rows  %lld\n", (long long)st->empty);
    printf("bytes (%s)\n", hisp_type_name(st->type));
    for (int f = 0; f < st->nf; f++)
        if (st->have[f])
            printf("  %-8s  %llu (%.2f per nonzero)\n", hisp_format_name((hisp_format)f),
                   (unsigned long long)st->bytes[f], mi->nnz ? (double)st->bytes[f] / nnzd : 0.0);
    if (!st->tree) {
        printf("hisparse    - (HiSparse trees hold f32 or f64 entries)\n");
        return;
    }
    printf("hisparse    node size %d, depth %d\n", prof->node_size, prof->depth);
    printf("  inner     %lld sparse (mean %.2f children), %lld dense (mean %.2f)\n",
           (long long)prof->inner_sparse, prof->inner_sparse_mean, (long long)prof->inner_dense,
           prof->inner_dense_mean);
    printf("  leaves    %lld sparse (mean %.2f nonzeros), %lld dense (mean %.2f)\n",
           (long long)prof->leaf_sparse, prof->leaf_sparse_mean, (long long)prof->leaf_dense,
           prof->leaf_dense_mean);
    printf("  by type   inner dense/coo1/coo2/coo4 %lld/%lld/%lld/%lld, leaf "
           "%lld/%lld/%lld/%lld\n",
           (long long)prof->nodes[1], (long long)prof->nodes[2], (long long)prof->nodes[3],
           (long long)prof->nodes[4], (long long)prof->nodes[5], (long long)prof->nodes[6],
           (long long)prof->nodes[7], (long long)prof->nodes[8]);
}

int cmd_stats(int argc, char **argv)
{
    static const cli_opt opts[] = {
        CLI_TYPE_OPTS, {"--json", false}, CLI_HELP_OPTS, {"--node-size", true}, {0, 0}};
    cli_type ct;
    const char *val[7] = {0}, *path = NULL;
    int rc = cli_parse_command("stats", argc, argv, opts, help, val, &path);
    if (rc) return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
    const char *node = val[6];
    bool json = val[3] != NULL;
    stats_state st;
    memset(&st, 0, sizeof st);
    if (!path) return cli_usage_error("stats", "missing FILE.mtx");
    if ((rc = cli_parse_type("stats", val, &ct))) return rc;
    if (node && (rc = cli_parse_int("--node-size", node, 4, 256, &st.node_size))) return rc;
    st.path = path;
    st.type = ct.type;
    cli_progress_enable(json);
    if ((rc = cli_context(&st.ctx))) return rc;
    while (st.nf < NF && strcmp(hisp_format_name((hisp_format)st.nf), "invalid") != 0)
        st.nf++;
    if (!(rc = stats_load(&st, &ct)) && !(rc = stats_measure(&st))) {
        stats_row_lengths(&st);
        if (json)
            stats_report_json(&st);
        else
            stats_report_text(&st);
    }
    hisp_matrix_destroy(&st.H);
    hisp_matrix_destroy(&st.A);
    hisp_context_destroy(&st.ctx);
    return rc;
}
