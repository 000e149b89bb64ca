/* hisp mspmv's report of one run: the table, or the --json object. */
#include "mspmv.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* ---- pieces shared with hisp-mpi's report (cli/mpi/mspmv_mpi.c) ---------- */

double mspmv_tolerance(hisp_type t)
{
    return t == HISP_F32 ? 1e-4 : 1e-10;
}

void mspmv_print_matrix(const mspmv_opts *o, const hisp_matrix_info *mi)
{
    printf("matrix      %s: %lld x %lld, %lld nonzeros, %s\n",
           o->gen ? hisp_gen_name(o->gp.kind) : o->path, (long long)mi->nrows, (long long)mi->ncols,
           (long long)mi->nnz, hisp_type_name(o->type));
}

void mspmv_print_check(const mspmv_opts *o, double rel, double tol)
{
    if (o->check)
        printf("check       relative error vs reference %.3e (tolerance %.0e): %s\n", rel, tol,
               rel <= tol ? "ok" : "FAILED");
}

void mspmv_json_head(cli_json *j, const mspmv_opts *o)
{
    if (o->gen)
        json_string(j, "generator", hisp_gen_name(o->gp.kind));
    else
        json_input(j, o->path);
    json_string(j, "partition", hisp_partition_name(o->kind));
}

int mspmv_verdict(const mspmv_opts *o, double rel, double tol)
{
    if (!o->check || rel <= tol) return CLI_OK;
    fprintf(stderr, "hisp: warning: relative error %.3e exceeds the tolerance %.0e\n", rel, tol);
    return CLI_CHECK;
}

void mspmv_print_table(const mspmv_opts *o, const hisp_matrix_info *mi,
                       const hisp_mplan_breakdown *bd, bool shared, const double *dev_ms,
                       double rel, double tol, const hisp_transfer_stats *xfer)
{
    mspmv_print_matrix(o, mi);
    printf("operation   y = %g*%s*x + %g*y, %s over %d device(s) (%s%s), %s parts, NUMA nodes "
           "%d\n",
           o->alpha, o->op == HISP_OP_T ? "A^T" : "A", o->beta, hisp_partition_name(o->kind),
           bd->ndevices, hisp_backend_name(o->backend), shared ? ", several parts per device" : "",
           o->hisparse ? "hisparse" : "csr", bd->numa_nodes);
    printf("one-time    convert %.3f ms, partition %.3f ms, distribution %.3f ms\n", bd->convert_ms,
           bd->partition_ms, bd->distribution_ms);
    if (o->row_cost > 0 || o->fit || o->align)
        printf("split       nnz + %.3f*rows balanced%s%s\n", o->row_cost,
               o->fit ? " (fitted to the kernel times)" : "",
               o->align ? ", cuts in short rows moved to row ends" : "");
    printf("options     kernel %s, local pointers made on the %s, x and y on the %s, merge on the "
           "%s\n",
           o->cusparse ? "cusparse" : "hisp",
           bd->ndevices > 0 && bd->dev[0].device_ptr ? "device" : "host",
           o->dist       ? "devices (x replicated, y split by rows)"
           : o->resident ? "first device"
                         : "host",
           bd->device_merge ? "device" : "host");
    printf("per SpMV    total %.3f ms%s: x %.3f, compute %.3f (slowest device), gather %.3f, "
           "merge %.3f\n",
           bd->total_ms, o->repeat > 0 ? " (medians)" : "", bd->x_ms, bd->compute_ms, bd->gather_ms,
           bd->merge_ms);
    printf("%-4s %-12s %5s %-27s %12s %7s %12s %10s %10s\n", "dev", "device", "numa",
           "rows (cols for pcsc)", "nnz", "share", "bytes", "upload_ms", "compute_ms");
    double nnz_max = 0, nnz_sum = 0, t_max = 0, t_sum = 0;
    for (int k = 0; k < bd->ndevices; k++) {
        const hisp_part *p = &bd->dev[k].part;
        char dev[32], rows[64];
        if (bd->dev[k].nsub > 1)
            snprintf(dev, sizeof dev, "%s:%d.%d/%d", hisp_backend_name(bd->dev[k].backend),
                     bd->dev[k].device, bd->dev[k].sub, bd->dev[k].nsub);
        else
            snprintf(dev, sizeof dev, "%s:%d", hisp_backend_name(bd->dev[k].backend),
                     bd->dev[k].device);
        snprintf(rows, sizeof rows, "[%lld, %lld)%s", (long long)p->start, (long long)p->end,
                 p->shared_first ? " shared" : "");
        double nnz = (double)bd->dev[k].nnz;
        printf("%-4d %-12s %5d %-27s %12lld %6.1f%% %12llu %10.3f %10.4f\n", k, dev,
               bd->dev[k].numa_node, rows, (long long)bd->dev[k].nnz,
               mi->nnz ? 100.0 * nnz / (double)mi->nnz : 0.0, (unsigned long long)bd->dev[k].bytes,
               bd->dev[k].upload_ms, dev_ms[k]);
        nnz_sum += nnz;
        t_sum += dev_ms[k];
        if (nnz > nnz_max) nnz_max = nnz;
        if (dev_ms[k] > t_max) t_max = dev_ms[k];
    }
    double nd = bd->ndevices;
    printf("balance     nnz max/mean %.3f, compute max/mean %.3f\n",
           nnz_sum > 0 ? nnz_max / (nnz_sum / nd) : 1.0, t_sum > 0 ? t_max / (t_sum / nd) : 1.0);
    mspmv_print_check(o, rel, tol);
    if (o->resident) cli_print_transfers("transfers ", xfer); /* the vectors' device */
    if (o->out) printf("wrote       %s\n", o->out);
}

void mspmv_print_json(const mspmv_opts *o, const hisp_matrix_info *mi,
                      const hisp_mplan_breakdown *bd, bool shared, const double *dev_ms, double rel,
                      double tol, const hisp_transfer_stats *xfer)
{
    cli_json j;
    json_init(&j, stdout);
    json_object_begin(&j, NULL);
    mspmv_json_head(&j, o);
    json_string(&j, "format", o->hisparse ? "hisparse" : "csr");
    json_double(&j, "row_cost", o->row_cost);
    json_bool(&j, "row_cost_fitted", o->fit);
    json_bool(&j, "align", o->align);
    json_string(&j, "vectors", o->dist ? "distributed" : o->resident ? "first device" : "host");
    json_string(&j, "backend", hisp_backend_name(o->backend));
    json_int(&j, "devices", bd->ndevices);
    json_bool(&j, "shared_devices", shared);
    json_int(&j, "numa_nodes", bd->numa_nodes);
    json_int(&j, "machine_numa_nodes", hisp_numa_nodes());
    json_bool(&j, "mpi", false);
    json_string(&j, "type", hisp_type_name(o->type));
    json_bool(&j, "transpose", o->op == HISP_OP_T);
    json_int(&j, "rows", mi->nrows);
    json_int(&j, "cols", mi->ncols);
    json_int(&j, "nnz", mi->nnz);
    json_double(&j, "alpha", o->alpha);
    json_double(&j, "beta", o->beta);
    json_object_begin(&j, "one_time_ms");
    json_double(&j, "convert", bd->convert_ms);
    json_double(&j, "partition", bd->partition_ms);
    json_double(&j, "distribution", bd->distribution_ms);
    json_object_end(&j);
    json_object_begin(&j, "per_spmv_ms");
    json_int(&j, "repeat", o->repeat);
    json_double(&j, "total", bd->total_ms);
    json_double(&j, "x", bd->x_ms);
    json_double(&j, "compute", bd->compute_ms);
    json_double(&j, "gather", bd->gather_ms);
    json_double(&j, "merge", bd->merge_ms);
    json_object_end(&j);
    json_string(&j, "kernel", o->cusparse ? "cusparse" : "hisp");
    json_bool(&j, "resident", o->resident);
    json_bool(&j, "device_merge", bd->device_merge != 0);
    json_array_begin(&j, "parts");
    for (int k = 0; k < bd->ndevices; k++) {
        json_object_begin(&j, NULL);
        json_object_begin(&j, "device");
        json_string(&j, "backend", hisp_backend_name(bd->dev[k].backend));
        json_int(&j, "index", bd->dev[k].device);
        json_string(&j, "name", bd->dev[k].name);
        json_int(&j, "subdevice", bd->dev[k].sub);
        json_int(&j, "subdevices", bd->dev[k].nsub);
        json_object_end(&j);
        json_int(&j, "numa_node", bd->dev[k].numa_node);
        json_int(&j, "start", bd->dev[k].part.start);
        json_int(&j, "end", bd->dev[k].part.end);
        json_bool(&j, "shared_first", bd->dev[k].part.shared_first);
        json_int(&j, "nnz", bd->dev[k].nnz);
        json_uint(&j, "bytes", bd->dev[k].bytes);
        json_double(&j, "upload_ms", bd->dev[k].upload_ms);
        json_double(&j, "compute_ms", dev_ms[k]);
        json_bool(&j, "device_ptr", bd->dev[k].device_ptr != 0);
        json_object_end(&j);
    }
    json_array_end(&j);
    if (o->check) {
        json_check(&j, rel, tol);
    }
    if (o->out) json_string(&j, "out", o->out);
    json_transfers(&j, xfer, MSPMV_XFER_COVERS);
    json_object_end(&j);
    json_finish(&j);
}
