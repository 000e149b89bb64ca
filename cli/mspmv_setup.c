/* hisp mspmv's setup, shared by the one-process command (cmd_mspmv.c) and
 * its MPI form (cli/mpi/mspmv_mpi.c): the device list, the inputs, the
 * reference check and the output file. */
#include "mspmv.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

double mspmv_median(double *v, int n)
{
    if (n <= 0) return NAN;
    for (int i = 1; i < n; i++) { /* insertion sort: n is small */
        double t = v[i];
        int j = i - 1;
        while (j >= 0 && v[j] > t) {
            v[j + 1] = v[j];
            j--;
        }
        v[j + 1] = t;
    }
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

unsigned mspmv_flags(const mspmv_opts *o)
{
    return (o->no_numa ? HISP_MPLAN_NO_NUMA : 0u) | (o->hisparse ? HISP_MPLAN_HISPARSE : 0u) |
           (o->subdevices ? HISP_MPLAN_SUBDEVICES : 0u) | (o->cusparse ? HISP_MPLAN_CUSPARSE : 0u) |
           (o->device_ptr ? HISP_MPLAN_DEVICE_PTR : 0u) |
           (o->host_merge ? HISP_MPLAN_HOST_MERGE : 0u) | (o->align ? HISP_MPLAN_ALIGN : 0u);
}

int mspmv_devices(hisp_context ctx, mspmv_opts *o, hisp_device_ref **refs, int *n, bool *shared)
{
    int count = 0;
    hisp_status s = HISP_SUCCESS;
    if (o->backend == HISP_BACKEND_AUTO) {
        static const hisp_backend_kind order[] = {HISP_BACKEND_CUDA, HISP_BACKEND_OPENCL,
                                                  HISP_BACKEND_REFERENCE};
        for (int i = 0; i < 3; i++) {
            if (!hisp_backend_compiled(order[i])) continue;
            if (hisp_backend_device_count(ctx, order[i], &count) == HISP_SUCCESS && count > 0) {
                o->backend = order[i];
                break;
            }
        }
    } else if (!hisp_backend_compiled(o->backend)) {
        fprintf(stderr, "hisp: the %s backend is not compiled into this build\n",
                hisp_backend_name(o->backend));
        return CLI_BACKEND;
    } else {
        s = hisp_backend_device_count(ctx, o->backend, &count);
    }
    if (s) return cli_fail(ctx, s, NULL);
    if (count == 0) {
        hisp_error_info e = {0};
        if (hisp_context_last_error(ctx, &e)) e.message = NULL;
        fprintf(stderr, "hisp: %s backend: %s\n", hisp_backend_name(o->backend),
                e.message && e.message[0] ? e.message : "no device");
        return CLI_BACKEND;
    }
    if (o->device >= count)
        return cli_value_error("--device %d: the %s backend has %d device%s (0..%d)", o->device,
                               hisp_backend_name(o->backend), count, count == 1 ? "" : "s",
                               count - 1);
    int nd = o->devices > 0 ? o->devices : o->device >= 0 ? 1 : count;
    if (nd > HISP_MPLAN_MAX_DEVICES)
        return cli_value_error("--devices: at most %d", HISP_MPLAN_MAX_DEVICES);
    *refs = calloc((size_t)nd, sizeof **refs);
    if (!*refs) return cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL);
    for (int k = 0; k < nd; k++) {
        (*refs)[k].backend = o->backend;
        (*refs)[k].device = o->device >= 0 ? o->device : k % count;
    }
    *n = nd;
    *shared = o->device >= 0 ? nd > 1 : nd > count;
    return CLI_OK;
}

int mspmv_matrix(hisp_context ctx, const mspmv_opts *o, hisp_matrix *A)
{
    cli_type ct = {o->type, o->type_given};
    if (!o->gen) return cli_load_matrix(ctx, o->path, &ct, A, NULL);
    return cli_generate(ctx, hisp_gen_name(o->gp.kind), 0, 0, &o->gp, o->type, A);
}

int mspmv_vector(hisp_context ctx, const mspmv_opts *o, const char *path, int64_t n,
                 const char *what, void **x)
{
    if (!path) {
        *x = cli_default_x(o->type, n);
        return *x ? CLI_OK : cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL);
    }
    hisp_vector v = NULL;
    int64_t len = 0;
    int64_t k = 1;
    hisp_order order;
    hisp_status s = hisp_vector_read_mtx(ctx, path, o->type, &v);
    if (!s) s = hisp_vector_size(v, &len);
    if (!s) s = hisp_vector_columns(v, &k, &order);
    if (!s && k != 1) {
        hisp_vector_destroy(&v);
        return cli_value_error("%s: %s has %lld columns, one is needed", path, what, (long long)k);
    }
    if (!s && len != n) {
        hisp_vector_destroy(&v);
        return cli_value_error("%s: %s has %lld entries, op(A) needs %lld", path, what,
                               (long long)len, (long long)n);
    }
    if (!s) {
        *x = malloc((size_t)(n > 0 ? n : 1) * hisp_type_size(o->type));
        if (!*x) s = HISP_ERR_OUT_OF_HOST_MEMORY;
    }
    if (!s) s = hisp_vector_read(v, *x);
    hisp_vector_destroy(&v);
    return s ? cli_fail(ctx, s, path) : CLI_OK;
}

int mspmv_x(hisp_context ctx, const mspmv_opts *o, int64_t n, void **x)
{
    return mspmv_vector(ctx, o, o->xpath, n, "x", x);
}

static double ld(hisp_type t, const void *p, int64_t i)
{
    return t == HISP_F32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

int mspmv_check(hisp_context ctx, hisp_matrix A, const mspmv_opts *o, const void *x, const void *y0,
                const void *y, int64_t m, double *rel)
{
    hisp_matrix_info mi;
    hisp_vector xv = NULL, yv = NULL;
    size_t es = hisp_type_size(o->type);
    void *yref = calloc((size_t)(m > 0 ? m : 1), es);
    if (!yref) return cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL);
    if (y0) memcpy(yref, y0, (size_t)m * es);
    float af = (float)o->alpha, bf = (float)o->beta;
    const void *a = o->type == HISP_F32 ? (const void *)&af : (const void *)&o->alpha;
    const void *b = o->type == HISP_F32 ? (const void *)&bf : (const void *)&o->beta;
    hisp_status s = hisp_matrix_get_info(A, &mi);
    int64_t n = o->op == HISP_OP_N ? mi.ncols : mi.nrows;
    if (!s) s = hisp_context_set_backend(ctx, HISP_BACKEND_REFERENCE, 0);
    if (!s) s = hisp_vector_create(ctx, o->type, n, &xv);
    if (!s) s = hisp_vector_create(ctx, o->type, m, &yv);
    if (!s) s = hisp_vector_write(xv, x);
    if (!s) s = hisp_vector_write(yv, yref); /* y0, or zeros */
    if (!s) s = hisp_spmv(ctx, o->op, a, A, xv, b, yv);
    if (!s) s = hisp_vector_read(yv, yref);
    hisp_vector_destroy(&xv);
    hisp_vector_destroy(&yv);
    if (s) {
        free(yref);
        return cli_fail(ctx, s, NULL);
    }
    cli_error e = {0};
    for (int64_t i = 0; i < m; i++) {
        cli_error_add(ld(o->type, y, i), ld(o->type, yref, i), &e);
    }
    *rel = cli_error_relative(&e);
    free(yref);
    return CLI_OK;
}

int mspmv_write_y(hisp_context ctx, const mspmv_opts *o, const void *y, int64_t m)
{
    hisp_vector yv = NULL;
    cli_progress("writing %s", o->out);
    hisp_status s = hisp_vector_create(ctx, o->type, m, &yv);
    if (!s) s = hisp_vector_write(yv, y);
    if (!s) s = hisp_vector_write_mtx(yv, o->out);
    hisp_vector_destroy(&yv);
    return s ? cli_fail(ctx, s, o->out) : CLI_OK;
}
