/* hisp bench: one operation on every backend and device found (and cuSPARSE
 * through the MSREP vendor kernel), one table: wall and device ms per call,
 * GB/s, fraction of the device's measured copy bandwidth, error against the
 * reference backend. */
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char help[] =
    "usage: hisp bench FILE.mtx|FILE.hisp|gen:KIND[:N[:SEED]] [options]\n"
    "\n"
    "Runs one operation on every backend and device this machine has (CUDA\n"
    "devices, each OpenCL device, the reference) and on cuSPARSE where a CUDA\n"
    "device is present, and prints one table: ms per call, GB/s, the fraction\n"
    "of the device's measured copy bandwidth and the error against the\n"
    "reference backend. Backends and devices that are absent are listed as\n"
    "skipped, with the reason.\n"
    "\n"
    "options:\n"
    "  --op OP              the operation: spmv (y = A x, default), spmvt\n"
    "                       (y = A^T x), add (C = A + B, B = A perturbed:\n"
    "                       hisp_matrix_perturb with sigma 10; HiSparse addition),\n"
    "                       solve (--method; --iterations iterations on every\n"
    "                       backend), spmv-dot (q = A x with x.q in one call, as\n"
    "                       the solvers run it, against hisp_spmv and\n"
    "                       hisp_vector_dot as two calls; A square, f32 and f64),\n"
    "                       multiply (C = A A through hisp_matrix_multiply, a new\n"
    "                       CSR C per call, its allocation timed; A square, CSR,\n"
    "                       f32, f64, c32, c64), spmm (Y = A X over --columns\n"
    "                       column-major columns; f32, f64, c32, c64)\n"
    "  --columns K          spmm: the columns of X and Y (default 16)\n"
    "  --method M           solve: auto (default: CG when A is real and symmetric\n"
    "                       with a positive diagonal, and for quaternions, else\n"
    "                       BiCGSTAB), cg, bicgstab, gmres (GMRES(30)) or lsqr\n"
    "                       (least squares, any shape; no cusparse row)\n"
    "  --repeat N           timed calls after warm-up (default 20; add, multiply 5;\n"
    "                       solve 3; spmv-dot 200); a row stops repeating once\n"
    "                       its calls pass 2 s (at least one call; the\n"
    "                       reference runs no warm-up)\n"
    "  --iterations K       solve: iterations per solve (default 100)\n"
    "  --format F           spmv, spmvt, solve, spmv-dot: hisp's rows run on A in\n"
    "                       format F: csr (default), hisparse or sell (f32, f64);\n"
    "                       cuSPARSE rows stay CSR; GB/s counts the CSR arrays\n"
    "                       either way\n"
    "  --plot OUT.svg       bar chart of the rows (no Python needed)\n"
    "  --plot-value ms|gbps the chart's value (default ms)\n" CLI_TYPE_HELP
    "                       (add, spmv-dot: f32 and f64 only; multiply: f32,\n"
    "                       f64, c32, c64)\n"
    "  --backends LIST      the rows: all (default; auto is the same) or a\n"
    "                       comma-separated list of reference, opencl, cuda,\n"
    "                       cusparse (--backend is an alias; cusparse: cuSPARSE's\n"
    "                       CSR SpMV on each CUDA device through a one-device\n"
    "                       MSREP plan with HISP_MPLAN_CUSPARSE: spmv with x and y\n"
    "                       on the plan's device (hisp_mspmv_dist); spmvt with x\n"
    "                       and y copied device to device each call\n"
    "                       (hisp_mspmv_vec; its device ms is the kernel's); solve\n"
    "                       as hisp's Krylov loop with cuSPARSE's products\n"
    "                       (hisp_solver_solve_dist); add: skipped, the library\n"
    "                       calls no vendor addition; multiply: cuSPARSE's\n"
    "                       SpGEMM by the option spgemm=cusparse (f32, f64); its wall\n"
    "                       ms include the plan's hand-off to its device thread,\n"
    "                       its device ms are cuSPARSE's kernel alone)\n"
    "  --device I           only device I of each backend (its index in hisp info;\n"
    "                       default: every device)\n"
    "  --json               machine-readable output: \"type\", one object per row\n"
    "                       under \"results\" with its \"backend\", \"device\" and\n"
    "                       \"transfers\" (its context's, over its timed calls), and\n"
    "                       \"transfers\", their sum; spmv-dot rows add \"spmv_ms\",\n"
    "                       \"unfused_ms\" (hisp_spmv then hisp_vector_dot), \"dot\"\n"
    "                       (x.q of the fused call), \"dot_unfused\" and \"dot_error\"\n"
    "                       (against the reference's dot); multiply rows add\n"
    "                       \"c_nnz\" (C's entries)\n" CLI_HELP_HELP "\n"
    "ms: wall time per call through the public API with a synchronize after each\n"
    "call, median (solve: per iteration; spmv-dot: the mean of --repeat calls\n"
    "back to back with one synchronize after them, the dots left on the device,\n"
    "as a solver's loop runs them). device_ms: the device's own time where\n"
    "the backend measures it (spmv/spmvt: hisp_spmv_timed's events; cuSPARSE: the\n"
    "plan's kernel time; add: the traversal's device time; multiply: the\n"
    "product's where it runs on the device, hisp_context_spgemm_stats). GB/s: the\n"
    "operation's minimum traffic per median wall time: spmv/spmvt/spmv-dot the CSR\n"
    "arrays + x + y; add the HiSparse trees of A, B and C; multiply A's CSR arrays\n"
    "read twice + C's CSR arrays written (C: the reference's A A); solve per\n"
    "iteration the\n"
    "CSR arrays + 8 vectors (CG: x, r, p, q read and written), twice the CSR\n"
    "arrays + 12 vectors (BiCGSTAB), the CSR arrays + m + 7 vectors (GMRES(m):\n"
    "the product, one pass over the basis for the dots and one for the update)\n"
    "or twice the CSR arrays + 5 row-length and 8 column-length\n"
    "vectors (LSQR). The vectors' scalar components are splitmix64(7, i) mapped\n"
    "to [-1, 1) (bench/solve_inputs.py's uniform(7, n)). copy: a vector copy\n"
    "y = x of a large vector through hisp_vector_copy, timed the same way (bytes\n"
    "read + written). error:\n"
    "||r - r_ref|| / ||r_ref|| in the 2-norm over y, the entries of C, or x\n"
    "(spmv-dot: over q, or the dot's relative error where that is larger;\n"
    "multiply: over C's values once C's structure (row pointers and columns)\n"
    "is found equal to the reference's: a C of another structure fails its row,\n"
    "exit status 5).\n"
    "Solve: CG's x is checked; the other methods' iterates depend on rounding, so\n"
    "their relative residual is checked to be within 10x the reference's;\n"
    "nothing is checked where the method diverges on the reference (relative\n"
    "residual >= 1).\n"
    "\n"
    "exit status: 0 ok, 1 usage, 2 invalid input, 3 a row failed on its device,\n"
    "5 an error above the tolerance (1e-4 f32, 1e-10 f64; solve 1e-2 / 1e-6).\n";

/* What the operations take: the addition is real (HiSparse trees); SpMV
 * with op N or T takes every type. */
static int check_type(bench_op op, hisp_format f, hisp_type t)
{
    if (f != HISP_FORMAT_CSR && op != OP_ADD && !cli_type_real(t))
        return cli_value_error("bench --format %s: type %s is not supported (f32 and f64; "
                               "--format csr takes every type)",
                               hisp_format_name(f), hisp_type_name(t));
    /* the product takes f32, f64, c32 and c64 (hisp_matrix_multiply) */
    if (op == OP_MULTIPLY && t != HISP_F32 && t != HISP_F64 && t != HISP_C32 && t != HISP_C64)
        return cli_value_error("bench --op multiply: type %s is not supported (it takes f32, "
                               "f64, c32 and c64)",
                               hisp_type_name(t));
    if (op == OP_SPMM && t != HISP_F32 && t != HISP_F64 && t != HISP_C32 && t != HISP_C64)
        return cli_value_error("bench --op spmm: type %s is not supported (it takes f32, f64, "
                               "c32 and c64)",
                               hisp_type_name(t));
    if ((op == OP_ADD || op == OP_SPMV_DOT) && !cli_type_real(t))
        return cli_value_error("bench --op %s: type %s is not supported (it takes f32 and f64; "
                               "spmv, spmvt and solve take every type)",
                               bench_op_name(op), hisp_type_name(t));
    return CLI_OK;
}

/* ---- rows --------------------------------------------------------------- */

static void row_reason(bench_row *row, hisp_context ctx, hisp_status s)
{
    hisp_error_info e = {0};
    const char *msg = NULL;
    if (ctx && hisp_context_last_error(ctx, &e) == HISP_SUCCESS && e.status == s && e.message &&
        e.message[0])
        msg = e.message;
    snprintf(row->reason, sizeof row->reason, "%s", msg ? msg : hisp_status_string(s));
}

/* Copy bandwidth per (backend, device), measured once. */
typedef struct {
    hisp_backend_kind b;
    int dev;
    double gbps;
} bw_entry;

/* Why a cuSPARSE row cannot run in's operation (NULL: it can). */
static const char *vendor_skip(const bench_in *in)
{
    if (in->op == OP_ADD)
        return "the library calls no vendor addition (bench/bench_add_cuda times csrgeam2)";
    if (in->op == OP_SPMV_DOT) return "cuSPARSE has no SpMV with a fused dot";
    if (in->op == OP_SPMM)
        return "the library's cuSPARSE plans run SpMV (bench/bench_spmm_cuda times cuSPARSE's "
               "SpMM)";
    if (in->op == OP_MULTIPLY)
        return in->t == HISP_F32 || in->t == HISP_F64
                   ? NULL
                   : "the option spgemm=cusparse takes f32 and f64";
    if (in->op == OP_SOLVE && in->method == HISP_SOLVER_LSQR)
        return "the distributed solve (hisp_solver_solve_dist) has no LSQR";
    if (in->per > 1 || in->vt != in->t || (in->t != HISP_F32 && in->t != HISP_F64))
        return "hisp's cuSPARSE plans take f32 and f64 (bench/bench_compound_cuda times cuSPARSE "
               "on compound entries)";
    return NULL;
}

static int run_row(bench_in *in, bench_row *row, bench_result *ref, bw_entry *bw, int *nbw)
{
    hisp_backend_kind b = row->kind == K_CUSPARSE ? HISP_BACKEND_CUDA
                          : row->kind == K_CUDA   ? HISP_BACKEND_CUDA
                          : row->kind == K_OPENCL ? HISP_BACKEND_OPENCL
                                                  : HISP_BACKEND_REFERENCE;
    hisp_context ctx = NULL;
    int rc = cli_context(&ctx);
    if (rc) return rc;
    bench_result res = {0};
    hisp_status s = hisp_context_set_backend(ctx, b, row->dev.index);
    cli_progress("%s on %s %d (%s)", bench_op_name(in->op), bench_kind_name(row->kind),
                 row->dev.index, row->dev.name);
    const char *no_vendor = vendor_skip(in);
    if (row->kind == K_CUSPARSE && no_vendor) {
        row->status = "skipped";
        snprintf(row->reason, sizeof row->reason, "%s", no_vendor);
        hisp_context_destroy(&ctx);
        return CLI_OK;
    }
    row->copy_gbps = NAN;
    for (int i = 0; !s && i < *nbw; i++)
        if (bw[i].b == b && bw[i].dev == row->dev.index) row->copy_gbps = bw[i].gbps;
    if (!s && isnan(row->copy_gbps)) {
        if (cli_copy_bandwidth(ctx, &row->copy_gbps) == CLI_OK && *nbw < 64)
            bw[(*nbw)++] = (bw_entry){b, row->dev.index, row->copy_gbps};
    }
    if (!s) s = bench_run_op(ctx, in, row->kind == K_CUSPARSE, row, &res);
    if (s) {
        row->status = "failed";
        row_reason(row, ctx, s);
        hisp_context_destroy(&ctx);
        bench_result_free(&res);
        return cli_exit_code(s);
    }
    row->status = "ok";
    row->fraction = row->gbps / row->copy_gbps;
    if (!ref->v) { /* the first row is the reference's: the oracle */
        *ref = res;
        row->oracle = true;
        row->rel_error = 0;
        /* a diverging method's iterates are chaotic: rounding decides them */
        in->check = in->op != OP_SOLVE             ? CHECK_RESULT
                    : !(row->rel_residual < 1)     ? CHECK_NONE
                    : in->method == HISP_SOLVER_CG ? CHECK_RESULT
                                                   : CHECK_RESIDUAL;
        in->ref_residual = row->rel_residual;
        in->ref_dot = row->dot;
        row->dot_error = 0;
    } else if (in->op == OP_MULTIPLY) {
        /* an error over values means nothing once the structures differ */
        if (!bench_same_matrix(&res, ref, in->m, &row->rel_error)) {
            row->status = "failed";
            snprintf(row->reason, sizeof row->reason,
                     "C's structure differs from the reference's (%lld entries, the reference's "
                     "%lld)",
                     (long long)res.n, (long long)ref->n);
            bench_result_free(&res);
            hisp_context_destroy(&ctx);
            return CLI_CHECK;
        }
    } else {
        row->rel_error = bench_rel_error(&res, ref, in->m);
        if (in->op == OP_SPMV_DOT) {
            double d = fabs(in->ref_dot);
            row->dot_error = fabs(row->dot - in->ref_dot) / (d > 0 ? d : 1);
            if (!(row->dot_error <= row->rel_error)) row->rel_error = row->dot_error;
        }
    }
    if (ref->v != res.v) bench_result_free(&res);
    hisp_context_destroy(&ctx);
    return CLI_OK;
}

/* The rows: the reference first (the oracle), then each OpenCL device, each
 * CUDA device and cuSPARSE on each; absent ones as skipped rows. */
static int list_rows(const bool want[K_COUNT], int only_dev, bench_row *rows, int cap)
{
    hisp_context ctx = NULL;
    int rc = cli_context(&ctx), n = 0;
    if (rc) return -rc;
    static const int order[] = {K_REFERENCE, K_OPENCL, K_CUDA};
    for (size_t o = 0; o < sizeof order / sizeof *order; o++) {
        int k = order[o];
        hisp_backend_kind b = k == K_REFERENCE ? HISP_BACKEND_REFERENCE
                              : k == K_OPENCL  ? HISP_BACKEND_OPENCL
                                               : HISP_BACKEND_CUDA;
        bool vendor = k == K_CUDA && want[K_CUSPARSE];
        if (!want[k] && !vendor) continue;
        int count = 0;
        char why[300] = "";
        if (!hisp_backend_compiled(b)) {
            snprintf(why, sizeof why, "not compiled into this build");
        } else {
            hisp_status s = hisp_backend_device_count(ctx, b, &count);
            if (s || count == 0) {
                hisp_error_info e = {0};
                const char *m =
                    hisp_context_last_error(ctx, &e) == HISP_SUCCESS && e.message && e.message[0]
                        ? e.message
                    : s ? hisp_status_string(s)
                        : "no device found";
                snprintf(why, sizeof why, "%s", m);
                count = 0;
            }
        }
        for (int pass = 0; pass < 2; pass++) {
            int kk = pass ? K_CUSPARSE : k;
            if (pass && !vendor) break;
            if (!want[kk]) continue;
            if (!count && n < cap) {
                rows[n] = (bench_row){.kind = kk, .status = "skipped", .rel_error = NAN};
                rows[n].dev.index = -1;
                snprintf(rows[n++].reason, sizeof rows->reason, "%s", why);
            }
            if (count && only_dev >= count && k != K_REFERENCE && n < cap) {
                rows[n] = (bench_row){.kind = kk, .status = "skipped", .rel_error = NAN};
                rows[n].dev.index = -1;
                snprintf(rows[n++].reason, sizeof rows->reason, "--device %d: %d device%s here",
                         only_dev, count, count == 1 ? "" : "s");
            }
            for (int d = 0; d < count && n < cap; d++) {
                /* the reference (the oracle) runs whatever --device says */
                if (only_dev >= 0 && d != only_dev && k != K_REFERENCE) continue;
                rows[n] =
                    (bench_row){.kind = kk, .rel_error = NAN, .have_dev = true, .status = "failed"};
                snprintf(rows[n].reason, sizeof rows->reason, "not run");
                if (hisp_backend_device_info(ctx, b, d, &rows[n].dev) != HISP_SUCCESS) {
                    rows[n].dev.backend = b;
                    rows[n].dev.index = d;
                }
                n++;
            }
        }
    }
    hisp_context_destroy(&ctx);
    return n;
}

static int parse_backends(const char *s, const char *opt, bool want[K_COUNT])
{
    memset(want, 0, K_COUNT * sizeof *want);
    if (strcasecmp(s, "all") == 0 || strcasecmp(s, "auto") == 0) {
        for (int k = 0; k < K_COUNT; k++)
            want[k] = true;
        return CLI_OK;
    }
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL;
    int n = 0;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), n++) {
        int k = 0;
        while (k < K_COUNT && strcasecmp(tok, bench_kind_name(k)) != 0)
            k++;
        if (k == K_COUNT)
            return cli_value_error("%s: unknown backend '%s' (all, or a list of "
                                   "reference, opencl, cuda, cusparse)",
                                   opt, tok);
        want[k] = true;
    }
    if (!n) return cli_value_error("%s: empty list", opt);
    return CLI_OK;
}

/* ---- input -------------------------------------------------------------- */

/* Symmetric with a positive diagonal (sorted CSR): CG's input. */
static bool spd_like(const bench_in *in)
{
    if (in->m != in->n) return false;
    for (int64_t i = 0; i < in->m; i++) {
        bool diag = false;
        for (int64_t k = in->ptr[i]; k < in->ptr[i + 1]; k++) {
            int32_t j = in->cols[k];
            double v = in->vals ? bench_load(in->t, in->vals, k) : 1;
            if (j == i) {
                if (!(v > 0)) return false;
                diag = true;
                continue;
            }
            int64_t lo = in->ptr[j], hi = in->ptr[j + 1];
            while (lo < hi) { /* (j, i) in row j */
                int64_t mid = lo + (hi - lo) / 2;
                if (in->cols[mid] < i)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo == in->ptr[j + 1] || in->cols[lo] != i ||
                (in->vals ? bench_load(in->t, in->vals, lo) : 1) != v)
                return false;
        }
        if (!diag) return false;
    }
    return true;
}

/* n entries of type t whose scalar component i is splitmix64(7, i) mapped to
 * [-1, 1): bench/solve_inputs.py's uniform(7, n), so that a peer in numpy
 * (bench/solve_scipy.py) solves the same system. */
static void *random_vector(hisp_type t, int64_t n)
{
    void *p = malloc((size_t)(n > 0 ? n : 1) * hisp_type_size(t));
    for (int64_t i = 0; p && i < n * hisp_type_components(t); i++) {
        uint64_t z = 7 + ((uint64_t)i + 1) * 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        double v = (double)(z >> 11) * 0x1p-52 - 1.0;
        if (bench_single(t))
            ((float *)p)[i] = (float)v;
        else
            ((double *)p)[i] = v;
    }
    return p;
}

/* ---- the command -------------------------------------------------------- */

/* hisp bench's command line (the run's settings go into a bench_in). */
typedef struct {
    const char *spec, *plot; /* the input; --plot FILE or NULL */
    bool json, plot_gbps;
    bool want[K_COUNT]; /* --backends */
    int only_dev;       /* --device, -1: every device */
    cli_type ct;
} bench_opts;

enum {
    B_TYPE,
    B_ENTRY,
    B_PREC,
    B_OP,
    B_BACKENDS,
    B_BACKEND,
    B_DEVICE,
    B_REPEAT,
    B_ITER,
    B_PLOT,
    B_PLOTV,
    B_FORMAT,
    B_METHOD,
    B_JSON,
    B_COLUMNS,
    B_HELP,
    B_HELP2
};

/* --method (solve only): auto leaves in->method HISP_SOLVER_COUNT. */
static int parse_method(const char *v, bench_in *in)
{
    if (in->op != OP_SOLVE)
        return cli_usage_error("bench", "--method is for --op solve, not --op %s",
                               bench_op_name(in->op));
    if (strcasecmp(v, "auto") == 0) return CLI_OK;
    if (hisp_solver_method_from_name(v, &in->method) != HISP_SUCCESS)
        return cli_value_error("--method: unknown method '%s' (auto, cg, bicgstab, gmres, lsqr)",
                               v);
    return CLI_OK;
}

/* Parses the command line into o and in's settings (op, format, repeat,
 * warmup, iterations); returns CLI_OK, an exit code, or CLI_HELP_SHOWN. */
static int bench_parse(int argc, char **argv, bench_opts *o, bench_in *in)
{
    static const cli_opt opts[] = {
        CLI_TYPE_OPTS,          {"--op", true},     {"--backends", true},
        {"--backend", true},    {"--device", true}, {"--repeat", true},
        {"--iterations", true}, {"--plot", true},   {"--plot-value", true},
        {"--format", true},     {"--method", true}, {"--json", false},
        {"--columns", true},    CLI_HELP_OPTS,      {0, 0}};
    const char *val[B_HELP] = {0};
    memset(o, 0, sizeof *o);
    int rc = cli_parse_command("bench", argc, argv, opts, help, val, &o->spec);
    if (rc) return rc;
    if (!o->spec) return cli_usage_error("bench", "missing FILE or gen:KIND[:N[:SEED]]");
    o->json = val[B_JSON] != NULL;
    cli_progress_enable(o->json);
    o->only_dev = -1;
    o->plot = val[B_PLOT];
    if (val[B_BACKENDS] && val[B_BACKEND])
        rc = cli_usage_error("bench", "give --backends or --backend (its alias), not both");
    const char *bl = val[B_BACKENDS] ? val[B_BACKENDS] : val[B_BACKEND];
    if (!rc)
        rc = parse_backends(bl ? bl : "all", val[B_BACKENDS] ? "--backends" : "--backend", o->want);
    if (!rc && val[B_DEVICE])
        rc = cli_parse_int("--device", val[B_DEVICE], 0, 1 << 20, &o->only_dev);
    if (!rc && val[B_OP]) {
        int k = 0;
        while (k < OP_COUNT && strcasecmp(val[B_OP], bench_op_name((bench_op)k)) != 0)
            k++;
        if (k == OP_COUNT)
            rc = cli_value_error("--op: unknown operation '%s' (spmv, spmvt, add, solve, "
                                 "spmv-dot, multiply, spmm)",
                                 val[B_OP]);
        in->op = (bench_op)k;
    }
    if (!rc && val[B_METHOD]) rc = parse_method(val[B_METHOD], in);
    if (!rc && val[B_COLUMNS] && in->op != OP_SPMM)
        rc = cli_usage_error("bench", "--columns is for --op spmm, not --op %s",
                             bench_op_name(in->op));
    if (!rc && val[B_COLUMNS]) {
        int k = 0;
        rc = cli_parse_int("--columns", val[B_COLUMNS], 1, 4096, &k);
        in->columns = k;
    }
    if (!rc && val[B_FORMAT]) rc = cli_parse_format("bench", val[B_FORMAT], &in->format, NULL);
    if (!rc && in->op == OP_ADD && val[B_FORMAT] && in->format != HISP_FORMAT_HISPARSE)
        rc = cli_usage_error("bench", "--op add runs HiSparse trees, not --format %s",
                             hisp_format_name(in->format));
    /* C is a new CSR matrix whatever A's format: A stays CSR (no private copy timed) */
    if (!rc && in->op == OP_MULTIPLY && in->format != HISP_FORMAT_CSR)
        rc = cli_usage_error("bench", "--op multiply runs on CSR, not --format %s",
                             hisp_format_name(in->format));
    in->repeat = in->op == OP_ADD || in->op == OP_MULTIPLY ? 5
                 : in->op == OP_SOLVE                      ? 3
                 : in->op == OP_SPMV_DOT                   ? 200
                                                           : 20;
    if (in->op == OP_ADD || in->op == OP_SOLVE || in->op == OP_MULTIPLY) in->warmup = 1;
    if (!rc && val[B_REPEAT]) rc = cli_parse_int("--repeat", val[B_REPEAT], 1, 100000, &in->repeat);
    if (!rc && val[B_ITER])
        rc = cli_parse_int("--iterations", val[B_ITER], 1, 1000000, &in->iterations);
    if (!rc && val[B_PLOTV]) {
        if (strcasecmp(val[B_PLOTV], "gbps") == 0)
            o->plot_gbps = true;
        else if (strcasecmp(val[B_PLOTV], "ms") != 0)
            rc = cli_value_error("--plot-value: '%s' is not ms or gbps", val[B_PLOTV]);
    }
    if (!rc) rc = cli_parse_type("bench", val, &o->ct);
    return rc;
}

/* Reads A on the host as CSR into in (arrays, sizes, types, tolerance);
 * *csr gets its CSR bytes. */
static int bench_read_input(hisp_context hctx, const bench_opts *o, bench_in *in, hisp_matrix *A,
                            uint64_t *csr)
{
    hisp_matrix_info mi = {0};
    hisp_status s = HISP_SUCCESS;
    int rc = cli_load_matrix(hctx, o->spec, &o->ct, A, NULL);
    if (!rc) {
        const int32_t *r = NULL;
        s = hisp_matrix_convert(*A, HISP_FORMAT_CSR);
        if (!s) s = hisp_matrix_get_info(*A, &mi);
        if (!s) s = hisp_matrix_host_arrays(*A, &in->ptr, &r, &in->cols, &in->vals);
        if (s) rc = cli_fail(hctx, s, o->spec);
    }
    if (!rc) rc = check_type(in->op, in->format, mi.type);
    if (!rc && (s = hisp_compound_vector_type(mi.type, &in->vt, &in->per)))
        rc = cli_fail(hctx, s, o->spec);
    if (rc) return rc;
    in->t = mi.type;
    in->m = mi.nrows;
    in->n = mi.ncols;
    in->nnz = mi.nnz;
    in->tolerance = bench_single(in->t) ? 1e-4 : 1e-10;
    if ((s = hisp_matrix_format_bytes(*A, HISP_FORMAT_CSR, in->t, csr)))
        return cli_fail(hctx, s, o->spec);
    return CLI_OK;
}

/* --op add: B, A perturbed (CSR arrays into in), and the bytes of the
 * trees of A, B and their sum. */
static int bench_add_inputs(hisp_context hctx, const char *spec, bench_in *in, hisp_matrix A,
                            hisp_matrix *B)
{
    cli_progress("perturbing A into B");
    const int32_t *r = NULL;
    hisp_matrix C = NULL;
    uint64_t ba = 0, bb = 0, bc = 0;
    hisp_status s = hisp_matrix_perturb(A, 10, 2, B);
    if (!s) s = hisp_matrix_convert(*B, HISP_FORMAT_CSR);
    if (!s) s = hisp_matrix_host_arrays(*B, &in->bptr, &r, &in->bcols, &in->bvals);
    /* the trees' sizes: A, B and the reference's C */
    if (!s) s = hisp_matrix_format_bytes(A, HISP_FORMAT_HISPARSE, in->t, &ba);
    if (!s) s = hisp_matrix_format_bytes(*B, HISP_FORMAT_HISPARSE, in->t, &bb);
    if (!s) s = hisp_matrix_add(HISP_OP_N, A, HISP_OP_N, *B, &C);
    if (!s) s = hisp_matrix_format_bytes(C, HISP_FORMAT_HISPARSE, in->t, &bc);
    hisp_matrix_destroy(&C);
    if (s) return cli_fail(hctx, s, spec);
    in->bytes = ba + bb + bc;
    return CLI_OK;
}

/* --op multiply's byte model: A's CSR arrays read twice (as the left and
 * the right factor) + C's written, C = A A computed once here on the host
 * context (every backend's product makes the same structure). */
static int bench_multiply_bytes(hisp_context hctx, const char *spec, bench_in *in, hisp_matrix A,
                                uint64_t csr)
{
    cli_progress("computing C = A A for the byte model");
    hisp_matrix C = NULL;
    uint64_t bc = 0;
    hisp_status s = hisp_matrix_multiply(HISP_OP_N, A, HISP_OP_N, A, &C);
    if (!s) s = hisp_matrix_format_bytes(C, HISP_FORMAT_CSR, in->t, &bc);
    hisp_matrix_destroy(&C);
    if (s) return cli_fail(hctx, s, spec);
    in->bytes = 2 * csr + bc;
    return CLI_OK;
}

/* The solve's minimum traffic per iteration (the help's model); es: vector
 * bytes per row of A. */
static uint64_t solve_bytes(const bench_in *in, uint64_t csr, uint64_t es)
{
    uint64_t m = (uint64_t)in->m, n = (uint64_t)in->n;
    switch (in->method) {
    case HISP_SOLVER_CG:
        return csr + 8 * es * n;
    case HISP_SOLVER_GMRES: /* step j: 2 (product) + j + 2 (dots) + j + 4 (update), j < m */
        return csr + es * n * (BENCH_RESTART + 7);
    case HISP_SOLVER_LSQR:
        return 2 * csr + es * (5 * m + 8 * n);
    default:
        return 2 * csr + 12 * es * n;
    }
}

/* The operation's inputs (x, B, the solve's method) and its byte model;
 * csr: A's CSR bytes. */
static int bench_op_inputs(hisp_context hctx, const char *spec, bench_in *in, hisp_matrix A,
                           hisp_matrix *B, uint64_t csr)
{
    uint64_t es = hisp_type_size(in->vt) * (uint64_t)in->per; /* vector bytes per row */
    if ((in->op == OP_SPMV_DOT || in->op == OP_MULTIPLY ||
         (in->op == OP_SOLVE && in->method != HISP_SOLVER_LSQR)) &&
        in->m != in->n)
        return cli_value_error("%s: %s needs a square matrix, not %lld x %lld", spec,
                               bench_op_name(in->op), (long long)in->m, (long long)in->n);
    if (in->op == OP_SPMV || in->op == OP_SPMVT || in->op == OP_SPMV_DOT) {
        in->x = random_vector(in->vt, (in->op == OP_SPMVT ? in->m : in->n) * in->per);
        in->bytes = csr + es * (uint64_t)(in->m + in->n);
    } else if (in->op == OP_SPMM) { /* A once, X and Y once each */
        in->x = random_vector(in->vt, in->n * in->per * in->columns);
        in->bytes = csr + es * (uint64_t)(in->m + in->n) * (uint64_t)in->columns;
    } else if (in->op == OP_ADD) {
        int rc = bench_add_inputs(hctx, spec, in, A, B);
        if (rc) return rc;
    } else if (in->op == OP_MULTIPLY) {
        int rc = bench_multiply_bytes(hctx, spec, in, A, csr);
        if (rc) return rc;
    } else {
        /* quaternions: the library's one method for them is CG */
        if (in->method == HISP_SOLVER_COUNT)
            in->method = in->t == HISP_Q32 || in->t == HISP_Q64 ||
                                 ((in->t == HISP_F32 || in->t == HISP_F64) && spd_like(in))
                             ? HISP_SOLVER_CG
                             : HISP_SOLVER_BICGSTAB;
        in->x = random_vector(in->vt, in->m * in->per);
        in->bytes = solve_bytes(in, csr, es);
        in->tolerance = bench_single(in->t) ? 1e-2 : 1e-6;
    }
    if (in->op != OP_ADD && in->op != OP_MULTIPLY && !in->x)
        return cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL);
    return CLI_OK;
}

/* Runs every row (the reference's first, the oracle); *worst gets the
 * first failing row's exit code, *bad whether a checked row is off. A
 * failed oracle ends the run with its exit code. */
static int bench_rows(bench_in *in, const bench_opts *o, bench_row *rows, int cap, int *nrows,
                      bench_result *ref, int *worst, bool *bad)
{
    bool want_rows[K_COUNT];
    memcpy(want_rows, o->want, sizeof want_rows);
    want_rows[K_REFERENCE] = true; /* the oracle always runs */
    *nrows = list_rows(want_rows, o->only_dev, rows, cap);
    if (*nrows < 0) return -*nrows;
    bw_entry bw[64];
    int nbw = 0;
    for (int i = 0; i < *nrows; i++) {
        if (strcmp(rows[i].status, "skipped") == 0) continue;
        int r = run_row(in, &rows[i], ref, bw, &nbw);
        if (i == 0 && !ref->v) { /* no oracle: nothing to compare with */
            fprintf(stderr, "hisp: bench: the reference run failed: %s\n", rows[0].reason);
            return r ? r : CLI_BACKEND;
        }
        if (r && !*worst) *worst = r;
        if (strcmp(rows[i].status, "ok") == 0 && in->check != CHECK_NONE &&
            !bench_row_ok(in, &rows[i]))
            *bad = true;
    }
    return CLI_OK;
}

int cmd_bench(int argc, char **argv)
{
    bench_opts o;
    bench_in in = {.op = OP_SPMV,
                   .warmup = 3,
                   .iterations = 100,
                   .columns = 16,
                   .format = HISP_FORMAT_CSR,
                   .method = HISP_SOLVER_COUNT};
    int rc = bench_parse(argc, argv, &o, &in);
    if (rc) return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
    hisp_context hctx = NULL; /* the input, on the host */
    hisp_matrix A = NULL, B = NULL;
    bench_row rows[40];
    bench_result ref = {0};
    int nrows = 0, worst = CLI_OK;
    bool bad = false;
    uint64_t csr = 0;
    if ((rc = cli_context(&hctx))) return rc;
    if ((rc = bench_read_input(hctx, &o, &in, &A, &csr))) goto out;
    if ((rc = bench_op_inputs(hctx, o.spec, &in, A, &B, csr))) goto out;
    rc = bench_rows(&in, &o, rows, (int)(sizeof rows / sizeof *rows), &nrows, &ref, &worst, &bad);
    if (rc) goto out;
    /* the reference row was run as the oracle only */
    int first = o.want[K_REFERENCE] ? 0 : 1;
    bench_row *shown = rows + first;
    int nshown = nrows - first;
    if (o.json)
        bench_print_json(o.spec, &in, shown, nshown);
    else
        bench_print_table(o.spec, &in, shown, nshown);
    if (o.plot) rc = bench_plot(o.plot, o.spec, &in, shown, nshown, o.plot_gbps);
    if (!rc && worst) rc = worst;
    if (!rc && bad) {
        fprintf(stderr, "hisp: warning: an error against the reference exceeds the tolerance\n");
        rc = CLI_CHECK;
    }
out:
    bench_result_free(&ref);
    free(in.x);
    hisp_matrix_destroy(&B);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&hctx);
    return rc;
}
