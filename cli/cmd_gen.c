/* hisp gen: generate a matrix and write it as Matrix Market. */
#include "cli.h"

#include <string.h>

static const char help[] =
    "usage: hisp gen KIND [options] -o FILE.mtx\n"
    "\n"
    "Generates a matrix, deterministic for given options, and writes it as a\n"
    "general coordinate Matrix Market file (3x3 blocks as a real file of three\n"
    "rows and columns per block; the report gives the file's sizes and the\n"
    "blocks'). The work is on the host.\n"
    "\n"
    "KIND: poisson2d  5-point Laplacian on an n x n grid (n^2 rows)\n"
    "      poisson3d  7-point Laplacian on an n^3 grid (n^3 rows)\n"
    "      banded     n rows, random entries within |i-j| <= bandwidth\n"
    "      random     n x n, uniform random positions, nnz-per-row on average\n"
    "      rmat       2^scale vertices, edge-factor * 2^scale edges (power law)\n"
    "      dense      n x n, every entry\n"
    "      circuit    n x n, diagonal + sparse + a few dense rows and columns\n"
    "      blockdiag  n x n, small dense clusters near the diagonal\n"
    "      aniso3d    7-point Laplacian on an n^3 grid, coupling epsilon in z (SPD)\n"
    "      jump3d     7-point diffusion on an n^3 grid, coefficient 1 or contrast\n"
    "                 per cube of block^3 cells, harmonic means between cells (SPD)\n"
    "      fem3x3     3x3 blocks (b3x3_f64): 27-point block stencil on an n^3 mesh\n"
    "      qsurface   quaternion (q64): Dirac-like operator on an n x 2n torus mesh\n"
    "      helmholtz  complex (c64): 5-point Laplacian - (k^2 + i*eps) on n x n\n"
    "      elastic3d  3x3 blocks (b3x3_f64): 3D linear elasticity, Q1 hexahedra,\n"
    "                 n^3 nodes, the face x = 0 clamped (SPD; no random part)\n"
    "\n"
    "options (defaults depend on KIND):\n"
    "  --n N                grid side (poisson, aniso3d, jump3d, the 3x3, quaternion\n"
    "                       and complex kinds) or rows (others; rmat ignores it)\n"
    "  --seed S             random seed (elastic3d has none: ignored)\n"
    "  --bandwidth B        banded: half-bandwidth\n"
    "  --nnz-per-row R      banded/random/circuit: mean entries per row\n"
    "  --scale S            rmat: log2 of the vertex count\n"
    "  --edge-factor E      rmat: edges per vertex\n"
    "  --block B            blockdiag: cluster size; jump3d: side of the cubes\n"
    "  --dense-share F      circuit: share of the entries in the dense rows/cols\n"
    "  --epsilon E          aniso3d: the z coupling (default 1e-3)\n"
    "  --contrast C         jump3d: the large coefficient (default 1e4)\n"
    "  --type T             entry type written: f32 or f64 for the real kinds\n"
    "                       (default f64), the kind's family for the others\n"
    "                       (fem3x3, elastic3d: b3x3_f32|b3x3_f64, qsurface:\n"
    "                       q32|q64, helmholtz: c32|c64; default the 64-bit\n"
    "                       one); --entry and --precision are aliases\n"
    "  -o FILE              the file to write (required)\n" CLI_OUT_ALIASES_HELP
    "  --json               machine-readable summary: \"kind\", \"file\", \"rows\",\n"
    "                       \"cols\", \"nnz\" (the file's), \"blocks\" (3x3 kinds:\n"
    "                       {\"rows\", \"cols\", \"nnz\"} in blocks), "
    "\"params\",\n" CLI_HOST_JSON_HELP CLI_HELP_HELP "\n" CLI_GEN_SPEC_HELP "\n"
    "exit status: 0 ok, 1 usage, 2 invalid value or write failure.\n";

enum {
    O_OUT, /* CLI_OUT_OPTS: -o, --out, --output */
    O_OUT2,
    O_OUT3,
    O_N,
    O_SEED,
    O_BW,
    O_NPR,
    O_SCALE,
    O_EF,
    O_BLOCK,
    O_SHARE,
    O_EPS,
    O_CONTRAST,
    O_TYPE,
    O_ENTRY,
    O_PREC,
    O_JSON,
    O_HELP,
    O_HELP2
};

int cmd_gen(int argc, char **argv)
{
    static const cli_opt opts[] = {CLI_OUT_OPTS,
                                   {"--n", true},
                                   {"--seed", true},
                                   {"--bandwidth", true},
                                   {"--nnz-per-row", true},
                                   {"--scale", true},
                                   {"--edge-factor", true},
                                   {"--block", true},
                                   {"--dense-share", true},
                                   {"--epsilon", true},
                                   {"--contrast", true},
                                   CLI_TYPE_OPTS,
                                   {"--json", false},
                                   CLI_HELP_OPTS,
                                   {0, 0}};
    /* options are applied after the kind's defaults, so collect them first */
    const char *val[O_HELP] = {0}, *kind_name = NULL;
    int prc = cli_parse_command("gen", argc, argv, opts, help, val, &kind_name);
    if (prc) return prc == CLI_HELP_SHOWN ? CLI_OK : prc;
    const char *out = NULL;
    if ((prc = cli_parse_out("gen", val + O_OUT, &out))) return prc;
    bool json = val[O_JSON] != NULL;
    if (!kind_name) return cli_usage_error("gen", "missing KIND (e.g. poisson3d)");
    if (!out) return cli_usage_error("gen", "missing -o FILE.mtx");
    cli_progress_enable(json);

    hisp_gen_kind kind = HISP_GEN_POISSON2D;
    bool compound = cli_is_compound_gen(kind_name);
    if (!compound && hisp_gen_from_name(kind_name, &kind) != HISP_SUCCESS)
        return cli_value_error("unknown matrix kind '%s' (see hisp gen --help)", kind_name);
    hisp_gen_params p;
    memset(&p, 0, sizeof p);
    if (!compound) hisp_gen_defaults(kind, &p);
    cli_type ct;
    int rc = cli_parse_type("gen", val + O_TYPE, &ct);
    if (rc) return rc;
    char spec[48];
    snprintf(spec, sizeof spec, "gen:%s", kind_name);
    hisp_type type = cli_spec_type(NULL, spec, &ct); /* a generator: no file to read */
    if (compound)
        for (int k = O_BW; k <= O_CONTRAST; k++)
            if (val[k])
                return cli_usage_error("gen", "%s: %s takes --n and --seed only", opts[k].name,
                                       kind_name);
    if (!rc && val[O_N]) rc = cli_parse_i64("--n", val[O_N], 0, INT32_MAX, &p.n);
    if (!rc && val[O_SEED]) rc = cli_parse_u64("--seed", val[O_SEED], &p.seed);
    if (!rc && val[O_BW]) rc = cli_parse_i64("--bandwidth", val[O_BW], 0, INT32_MAX, &p.bandwidth);
    if (!rc && val[O_NPR]) {
        rc = cli_parse_double("--nnz-per-row", val[O_NPR], &p.nnz_per_row);
        if (!rc && p.nnz_per_row < 0) rc = cli_value_error("--nnz-per-row: must not be negative");
    }
    if (!rc && val[O_SCALE]) rc = cli_parse_int("--scale", val[O_SCALE], 0, 31, &p.scale);
    if (!rc && val[O_EF])
        rc = cli_parse_int("--edge-factor", val[O_EF], 0, 1 << 20, &p.edge_factor);
    if (!rc && val[O_BLOCK]) rc = cli_parse_int("--block", val[O_BLOCK], 1, 1 << 20, &p.block);
    if (!rc && val[O_SHARE]) {
        rc = cli_parse_double("--dense-share", val[O_SHARE], &p.dense_share);
        if (!rc && (p.dense_share < 0 || p.dense_share > 1))
            rc = cli_value_error("--dense-share: %g is not in [0, 1]", p.dense_share);
    }
    if (!rc && val[O_EPS]) {
        rc = cli_parse_double("--epsilon", val[O_EPS], &p.epsilon);
        if (!rc && !(p.epsilon > 0)) rc = cli_value_error("--epsilon: %g is not > 0", p.epsilon);
    }
    if (!rc && val[O_CONTRAST]) {
        rc = cli_parse_double("--contrast", val[O_CONTRAST], &p.contrast);
        if (!rc && !(p.contrast >= 1))
            rc = cli_value_error("--contrast: %g is not >= 1", p.contrast);
    }
    if (rc) return rc;

    hisp_context ctx = NULL;
    if ((rc = cli_context(&ctx))) return rc;
    hisp_matrix A = NULL;
    hisp_matrix_info mi = {0};
    double t0 = cli_now_ms();
    rc = cli_generate(ctx, kind_name, p.n, p.seed, compound ? NULL : &p, type, &A);
    double t1 = cli_now_ms();
    if (rc) goto out;
    hisp_status s = hisp_matrix_get_info(A, &mi);
    if (s) {
        rc = cli_fail(ctx, s, NULL);
        goto out;
    }
    int64_t rows = 0, cols = 0, nnz = 0; /* the file's */
    cli_file_sizes(&mi, true, &rows, &cols, &nnz);
    bool blocks = rows != mi.nrows;
    cli_progress("writing %s (%lld entries)", out, (long long)nnz);
    s = hisp_matrix_write_mtx(A, out);
    double t2 = cli_now_ms();
    if (s) {
        rc = cli_fail(ctx, s, out);
        goto out;
    }
    if (json) {
        cli_json j;
        json_init(&j, stdout);
        json_object_begin(&j, NULL);
        json_string(&j, "kind", compound ? kind_name : hisp_gen_name(kind));
        json_string(&j, "file", out);
        json_context_device(&j, ctx);
        json_string(&j, "type", hisp_type_name(type));
        json_int(&j, "rows", rows);
        json_int(&j, "cols", cols);
        json_int(&j, "nnz", nnz);
        if (blocks) {
            json_object_begin(&j, "blocks");
            json_int(&j, "rows", mi.nrows);
            json_int(&j, "cols", mi.ncols);
            json_int(&j, "nnz", mi.nnz);
            json_object_end(&j);
        }
        if (!compound) { /* the compound kinds take n and seed only */
            json_object_begin(&j, "params");
            json_int(&j, "n", p.n);
            json_uint(&j, "seed", p.seed);
            json_int(&j, "bandwidth", p.bandwidth);
            json_double(&j, "nnz_per_row", p.nnz_per_row);
            json_int(&j, "scale", p.scale);
            json_int(&j, "edge_factor", p.edge_factor);
            json_int(&j, "block", p.block);
            json_double(&j, "dense_share", p.dense_share);
            json_object_end(&j);
        }
        json_double(&j, "generate_ms", t1 - t0);
        json_double(&j, "write_ms", t2 - t1);
        json_transfers_of(&j, ctx);
        json_object_end(&j);
        json_finish(&j);
    } else {
        char note[96] = "";
        if (blocks)
            snprintf(note, sizeof note, ", %lld x %lld blocks of 3x3, %lld blocks",
                     (long long)mi.nrows, (long long)mi.ncols, (long long)mi.nnz);
        printf("%s: %s %lld x %lld, %lld entries (%s%s), generated in %.1f ms, written in %.1f "
               "ms\n",
               out, compound ? kind_name : hisp_gen_name(kind), (long long)rows, (long long)cols,
               (long long)nnz, hisp_type_name(type), note, t1 - t0, t2 - t1);
    }
out:
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
    return rc;
}
