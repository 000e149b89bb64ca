/* hisp bench's output: the table, the JSON rows and the SVG bar chart. */
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const op_names[] = {"spmv",     "spmvt",    "add",  "solve",
                                       "spmv-dot", "multiply", "spmm", NULL};
static const char *const kind_names[] = {"reference", "opencl", "cuda", "cusparse", NULL};

const char *bench_op_name(bench_op op)
{
    return op >= 0 && op < OP_COUNT ? op_names[op] : NULL;
}

const char *bench_kind_name(int kind)
{
    return kind >= 0 && kind < K_COUNT ? kind_names[kind] : NULL;
}

bool bench_row_ok(const bench_in *in, const bench_row *r)
{
    if (in->check == CHECK_RESIDUAL)
        return r->rel_residual <= 10 * in->ref_residual + (bench_single(in->t) ? 1e-5 : 1e-12);
    return !(r->rel_error > in->tolerance);
}

void bench_print_json(const char *spec, const bench_in *in, const bench_row *rows, int n)
{
    cli_json j;
    json_init(&j, stdout);
    json_object_begin(&j, NULL);
    json_input(&j, spec);
    json_string(&j, "op", bench_op_name(in->op));
    json_string(&j, "format", in->op == OP_ADD ? "hisparse" : hisp_format_name(in->format));
    if (in->op == OP_SOLVE) {
        json_string(&j, "method", hisp_solver_method_name(in->method));
        if (in->method == HISP_SOLVER_GMRES) json_int(&j, "restart", BENCH_RESTART);
        json_int(&j, "iterations", in->iterations);
    }
    if (in->op == OP_SPMM) json_int(&j, "columns", in->columns);
    json_string(&j, "type", hisp_type_name(in->t));
    json_int(&j, "rows", in->m);
    json_int(&j, "cols", in->n);
    json_int(&j, "nnz", in->nnz);
    json_int(&j, "repeat", in->repeat);
    json_int(&j, "warmup", in->warmup);
    json_uint(&j, "bytes", in->bytes);
    json_double(&j, "tolerance", in->tolerance);
    json_array_begin(&j, "results");
    hisp_transfer_stats sum = {0};
    for (int i = 0; i < n; i++) {
        const bench_row *r = &rows[i];
        json_object_begin(&j, NULL);
        json_string(&j, "backend", bench_kind_name(r->kind == K_CUSPARSE ? K_CUDA : r->kind));
        json_string(&j, "kernel", r->kind == K_CUSPARSE ? "cusparse" : "hisp");
        if (r->have_dev)
            json_device(&j, "device", &r->dev);
        else
            json_null(&j, "device");
        json_string(&j, "status", r->status);
        if (strcmp(r->status, "ok") != 0) {
            json_string(&j, "reason", r->reason);
        } else {
            json_double(&j, "ms", r->ms);
            json_int(&j, "calls", r->calls);
            json_double(&j, "device_ms", r->device_ms);
            json_double(&j, "gbps", r->gbps);
            json_double(&j, "copy_gbps", r->copy_gbps);
            json_double(&j, "bandwidth_fraction", r->fraction);
            json_double(&j, "rel_error", r->rel_error);
            if (in->check == CHECK_NONE)
                json_null(&j, "ok");
            else
                json_bool(&j, "ok", bench_row_ok(in, r));
            if (in->op == OP_SOLVE) {
                json_int(&j, "iterations", r->iterations);
                json_double(&j, "relative_residual", r->rel_residual);
            }
            if (in->op == OP_MULTIPLY) json_int(&j, "c_nnz", r->c_nnz);
            if (in->op == OP_SPMV_DOT) {
                json_double(&j, "spmv_ms", r->spmv_ms);
                json_double(&j, "unfused_ms", r->unfused_ms);
                json_exact(&j, "dot", r->dot);
                json_exact(&j, "dot_unfused", r->dot_unfused);
                json_double(&j, "dot_error", r->dot_error);
            }
            /* (multiply's cuSPARSE rows run in the row's own context) */
            json_transfers(&j, &r->xfer,
                           r->kind == K_CUSPARSE && in->op != OP_MULTIPLY ? BENCH_VENDOR_COVERS
                                                                          : NULL);
            sum.h2d_bytes += r->xfer.h2d_bytes;
            sum.d2h_bytes += r->xfer.d2h_bytes;
            sum.control_bytes += r->xfer.control_bytes;
        }
        json_object_end(&j);
    }
    json_array_end(&j);
    json_transfers(&j, &sum, "the sum of the rows' (each over its timed calls)");
    json_object_end(&j);
    json_finish(&j);
}

static void label_of(const bench_row *r, char *buf, size_t size)
{
    if (r->have_dev)
        snprintf(buf, size, "%s:%d %.40s", bench_kind_name(r->kind), r->dev.index, r->dev.name);
    else
        snprintf(buf, size, "%s", bench_kind_name(r->kind));
}

void bench_print_table(const char *spec, const bench_in *in, const bench_row *rows, int n)
{
    printf("hisp bench: %s of %s (%lld x %lld, %lld nonzeros, %s)", bench_op_name(in->op), spec,
           (long long)in->m, (long long)in->n, (long long)in->nnz, hisp_type_name(in->t));
    bool sd = in->op == OP_SPMV_DOT, mul = in->op == OP_MULTIPLY;
    if (in->op == OP_SOLVE)
        printf(", %s, %d iterations", hisp_solver_method_name(in->method), in->iterations);
    if (in->op == OP_SPMM) printf(", %lld columns", (long long)in->columns);
    printf("\n%s of %d calls after %d warm-up (fewer where a row passes 2 s), %llu bytes per "
           "%s\n\n",
           sd ? "mean" : "median", in->repeat, in->warmup, (unsigned long long)in->bytes,
           in->op == OP_SOLVE ? "iteration" : "call");
    if (sd)
        printf("%-46s  %10s  %10s  %10s  %8s  %8s  %6s  %9s\n", "backend:device", "fused ms",
               "spmv ms", "+ dot ms", "GB/s", "copy", "of copy", "error");
    else
        printf("%-46s  %10s  %10s  %8s  %8s  %6s  %9s\n", "backend:device",
               in->op == OP_SOLVE ? "ms/iter" : "ms", mul ? "C nnz" : "device ms", "GB/s", "copy",
               "of copy", "error");
    for (int i = 0; i < n; i++) {
        const bench_row *r = &rows[i];
        char label[64];
        label_of(r, label, sizeof label);
        if (strcmp(r->status, "ok") != 0) {
            printf("%-46s  %s: %s\n", label, r->status, r->reason);
            continue;
        }
        char err[16];
        if (r->oracle)
            snprintf(err, sizeof err, "(oracle)");
        else
            snprintf(err, sizeof err, "%.2e", r->rel_error);
        char dms[40] = "n/a";
        if (sd)
            snprintf(dms, sizeof dms, "%10.4f  %10.4f", r->spmv_ms, r->unfused_ms);
        else if (mul) /* C's size (every row's the reference's: checked) */
            snprintf(dms, sizeof dms, "%lld", (long long)r->c_nnz);
        else if (isfinite(r->device_ms))
            snprintf(dms, sizeof dms, "%.4f", r->device_ms);
        printf("%-46s  %10.4f  %*s  %8.2f  %8.2f  %5.0f%%  %9s%s\n", label, r->ms, sd ? 22 : 10,
               dms, r->gbps, r->copy_gbps, 100 * r->fraction, err,
               r->oracle                 ? ""
               : in->check == CHECK_NONE ? " (not checked)"
               : !bench_row_ok(in, r)    ? " FAILED"
                                         : "");
    }
    if (in->check == CHECK_NONE)
        printf("\nThe method diverged on the reference (relative residual %.3g after %lld "
               "iterations):\nits iterates are decided by rounding, so the errors are not "
               "checked.\n",
               in->ref_residual, (long long)in->iterations);
    if (in->check == CHECK_RESIDUAL)
        printf("\n%s's iterates depend on rounding: each row's relative residual (the\n"
               "reference's: %.3g) is checked to be within 10x the reference's, not x.\n",
               hisp_solver_method_name(in->method), in->ref_residual);
    if (sd)
        printf("\nms: wall per call, calls back to back with a synchronize after them; fused:\n"
               "hisp_spmv_dot (q = A x, x.q), spmv: hisp_spmv alone, + dot: hisp_spmv then\n"
               "hisp_vector_dot; copy:");
    else
        printf("\nms: wall per call with a synchronize after it; %s; copy:",
               mul                 ? "C nnz: the entries of C = A A\n(device_ms in --json)"
               : in->op == OP_SPMM ? "device ms: per call of calls queued\nback to back "
                                     "with one synchronize after them"
                                   : "device ms: the device's own time\n(n/a where not measured)");
    printf(" GB/s of a large hisp_vector_copy on the device;\n"
           "error: relative 2-norm against the reference backend (tolerance %.0e)\n",
           in->tolerance);
}

int bench_plot(const char *path, const char *spec, const bench_in *in, const bench_row *rows, int n,
               bool gbps)
{
    char(*labels)[64] = calloc((size_t)(n > 0 ? n : 1), sizeof *labels);
    const char **lp = calloc((size_t)(n > 0 ? n : 1), sizeof *lp);
    double *v = calloc((size_t)(n > 0 ? n : 1), sizeof *v);
    int rc = CLI_OK;
    if (!labels || !lp || !v) {
        rc = cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL);
    } else {
        for (int i = 0; i < n; i++) {
            label_of(&rows[i], labels[i], sizeof labels[i]);
            lp[i] = labels[i];
            v[i] = strcmp(rows[i].status, "ok") ? NAN : gbps ? rows[i].gbps : rows[i].ms;
        }
        char title[512], sub[256];
        snprintf(title, sizeof title, "hisp bench: %s of %s", bench_op_name(in->op), spec);
        snprintf(sub, sizeof sub, "%s, %lld x %lld, %lld nonzeros; median of %d calls",
                 hisp_type_name(in->t), (long long)in->m, (long long)in->n, (long long)in->nnz,
                 in->repeat);
        rc = cli_plot_bars(path, title, sub,
                           gbps                 ? "GB/s (minimum traffic)"
                           : in->op == OP_SOLVE ? "ms per iteration (wall)"
                                                : "ms per call (wall)",
                           n, lp, v);
    }
    free(labels);
    free(lp);
    free(v);
    return rc;
}
