/* hisp mspmv --mpi (only in build/bin/hisp-mpi): MSREP over MPI ranks.
 *
 * Level 1 (ranks): rank 0 reads A, cuts it with the chosen kind into one part
 * per rank (hisp_matrix_partition) and sends each rank its part as a local
 * CSR (pcsr, pcoo, rowblock: rows) or CSC (pcsc, colblock: columns) — local
 * pointers, index and value slices, never the whole matrix. Level 2 (devices):
 * each rank runs a plan of the same kind over its own --devices. x is
 * broadcast; the partial results merge with MPI_Gatherv (row segments, the
 * shared boundary rows summed on rank 0) or MPI_Reduce (partial vectors). */
#include "../mspmv.h"
#include "mpi_util.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int64_t rc; /* nonzero: rank 0 failed, every rank stops */
    int64_t type, nrows, ncols, nnz;
    int64_t start, end, shared_first, k0, k1; /* this rank's part */
} part_msg;

/* The local pointers of a part: the global pointers clamped to [k0, k1]. */
static int64_t *local_ptr(const int64_t *ptr, const part_msg *p)
{
    int64_t rows = p->end - p->start;
    int64_t *l = malloc(((size_t)rows + 1) * sizeof *l);
    if (!l) return NULL;
    for (int64_t i = 0; i <= rows; i++) {
        int64_t v = ptr[p->start + i];
        l[i] = (v < p->k0 ? p->k0 : v > p->k1 ? p->k1 : v) - p->k0;
    }
    return l;
}

typedef struct {
    double nnz, start, end, shared, compute, local_total, devices, distribution;
} rank_stats;

int mspmv_mpi(mspmv_opts *o, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    MPI_Init(NULL, NULL);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank != 0) cli_progress_enable(true); /* quiet */
    bool columns = o->kind == HISP_PART_PCSC || o->kind == HISP_PART_COLBLOCK;
    hisp_context ctx = NULL;
    hisp_matrix A = NULL, L = NULL;
    hisp_mplan plan = NULL;
    hisp_device_ref *refs = NULL;
    hisp_part *parts = NULL;
    part_msg me = {0};
    int64_t *lptr = NULL;
    int32_t *lidx = NULL;
    void *lval = NULL, *x = NULL, *y = NULL, *yl = NULL, *yseg = NULL;
    double *t = NULL;
    rank_stats *all = NULL;
    hisp_matrix_info mi = {0};
    int nd = 0, rc = cli_context(&ctx);
    bool shared = false;
    double t_read = 0, t_part = 0, t_scatter = 0;

    /* ---- rank 0: read, partition, send ---- */
    double t0 = MPI_Wtime();
    if (rank == 0 && !rc) rc = mspmv_matrix(ctx, o, &A);
    if (rank == 0 && !rc) {
        hisp_status s = hisp_matrix_get_info(A, &mi);
        if (!s && !cli_type_real(mi.type))
            rc = cli_type_unsupported("mspmv", mi.type, "MSREP parts take f32 or f64");
        if (!s && !rc) {
            parts = calloc((size_t)size, sizeof *parts);
            if (!parts) s = HISP_ERR_OUT_OF_HOST_MEMORY;
        }
        double t1 = MPI_Wtime();
        t_read = (t1 - t0) * 1e3;
        if (!s) s = hisp_matrix_partition(A, o->kind, size, parts);
        /* the arrays the parts index into (A converted in place) */
        if (!s) s = hisp_matrix_convert(A, columns ? HISP_FORMAT_CSC : HISP_FORMAT_CSR);
        t_part = (MPI_Wtime() - t1) * 1e3;
        if (s && !rc) rc = cli_fail(ctx, s, o->path);
    }
    /* the header goes to every rank, with rank 0's status */
    part_msg head = {
        .rc = rc, .type = mi.type, .nrows = mi.nrows, .ncols = mi.ncols, .nnz = mi.nnz};
    MPI_Bcast(&head, sizeof head, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (head.rc) {
        rc = (int)head.rc;
        goto out;
    }
    o->type = (hisp_type)head.type;
    mi.type = o->type;
    mi.nrows = head.nrows;
    mi.ncols = head.ncols;
    mi.nnz = head.nnz;
    size_t es = hisp_type_size(o->type);
    double t2 = MPI_Wtime();
    if (rank == 0) {
        const int64_t *ptr = NULL;
        const int32_t *rows = NULL, *cols = NULL;
        const void *vals = NULL;
        hisp_status s = hisp_matrix_host_arrays(A, &ptr, &rows, &cols, &vals);
        if (s) {
            rc = cli_fail(ctx, s, NULL);
            MPI_Abort(MPI_COMM_WORLD, rc);
        }
        const int32_t *idx = columns ? rows : cols;
        for (int r = size - 1; r >= 0; r--) { /* rank 0's own part last */
            part_msg p = head;
            p.start = parts[r].start;
            p.end = parts[r].end;
            p.shared_first = parts[r].shared_first;
            p.k0 = parts[r].nnz_begin;
            p.k1 = parts[r].nnz_end;
            int64_t *l = local_ptr(ptr, &p);
            if (!l) MPI_Abort(MPI_COMM_WORLD, cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL));
            if (r == 0) {
                me = p;
                lptr = l;
                break;
            }
            MPI_Send(&p, sizeof p, MPI_BYTE, r, 6, MPI_COMM_WORLD);
            send_bytes(l, ((size_t)(p.end - p.start) + 1) * sizeof *l, r);
            send_bytes(idx + p.k0, (size_t)(p.k1 - p.k0) * sizeof *idx, r);
            send_bytes((const char *)vals + (size_t)p.k0 * es, (size_t)(p.k1 - p.k0) * es, r);
            free(l);
        }
        lidx = (int32_t *)idx + me.k0; /* rank 0 reads its slice in place */
        lval = (char *)vals + (size_t)me.k0 * es;
    } else {
        MPI_Recv(&me, sizeof me, MPI_BYTE, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int64_t rows = me.end - me.start, nnz = me.k1 - me.k0;
        lptr = malloc(((size_t)rows + 1) * sizeof *lptr);
        lidx = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *lidx);
        lval = malloc((size_t)(nnz > 0 ? nnz : 1) * es);
        if (!lptr || !lidx || !lval)
            MPI_Abort(MPI_COMM_WORLD, cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL));
        recv_bytes(lptr, ((size_t)rows + 1) * sizeof *lptr, 0);
        recv_bytes(lidx, (size_t)nnz * sizeof *lidx, 0);
        recv_bytes(lval, (size_t)nnz * es, 0);
    }
    t_scatter = (MPI_Wtime() - t2) * 1e3;

    /* ---- every rank: its local matrix and a plan over its devices ---- */
    int64_t lrows = me.end - me.start;
    hisp_status s =
        columns ? hisp_matrix_create_csc(ctx, o->type, mi.nrows, lrows, lptr, lidx, lval, &L)
                : hisp_matrix_create_csr(ctx, o->type, lrows, mi.ncols, lptr, lidx, lval, &L);
    if (rank != 0) {
        free(lidx);
        free(lval);
    }
    lidx = NULL;
    lval = NULL;
    if (s) rc = cli_fail(ctx, s, NULL);
    if (!rc) rc = mspmv_devices(ctx, o, &refs, &nd, &shared);
    if (!rc) {
        /* --row-cost and --align shape the split over this rank's devices */
        s = hisp_mplan_create_weighted(L, nd, refs, o->kind, mspmv_flags(o), o->row_cost, &plan);
        if (s) rc = cli_fail(ctx, s, NULL);
    }
    if ((rc = agree(rc))) goto out;

    /* ---- x to every rank ---- */
    int64_t m = o->op == HISP_OP_N ? mi.nrows : mi.ncols,
            n = o->op == HISP_OP_N ? mi.ncols : mi.nrows;
    if (rank == 0)
        rc = mspmv_x(ctx, o, n, &x);
    else if (!(x = malloc((size_t)(n > 0 ? n : 1) * es)))
        rc = cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL);
    if ((rc = agree(rc))) goto out;
    /* device op: N on the part's rows gives a row segment, T a partial vector */
    bool seg = (o->op == HISP_OP_T) == columns;
    int64_t ylen = seg ? lrows : m;
    yl = calloc((size_t)(ylen > 0 ? ylen : 1), es);
    if (rank == 0) {
        y = calloc((size_t)(m > 0 ? m : 1), es);
        yseg = calloc((size_t)(m + size > 0 ? m + size : 1), es); /* segments, with shared rows */
    }
    int *counts = calloc((size_t)size, sizeof *counts),
        *displs = calloc((size_t)size, sizeof *displs);
    all = calloc((size_t)size, sizeof *all);
    int reps = o->repeat > 0 ? o->warmup + o->repeat : 0;
    t = calloc((size_t)(reps + 1) * 5, sizeof *t);
    if (!yl || !counts || !displs || !all || !t || (rank == 0 && (!y || !yseg)))
        rc = cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL);
    if (seg && m > INT_MAX) rc = cli_value_error("--mpi: the row merge takes up to 2^31-1 rows");
    if ((rc = agree(rc))) {
        free(counts);
        free(displs);
        goto out;
    }
    int mycount = (int)(seg ? lrows : 0);
    MPI_Gather(&mycount, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (int r = 1; r < size; r++)
        displs[r] = displs[r - 1] + counts[r - 1];
    float af = (float)o->alpha, zf = 0;
    double zd = 0;
    const void *a = o->type == HISP_F32 ? (const void *)&af : (const void *)&o->alpha;
    const void *zero = o->type == HISP_F32 ? (const void *)&zf : (const void *)&zd;
    MPI_Datatype dt = o->type == HISP_F32 ? MPI_FLOAT : MPI_DOUBLE;
    hisp_mplan_breakdown *bd = calloc(1, sizeof *bd);
    if (!bd) MPI_Abort(MPI_COMM_WORLD, cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL));
    double local_compute = 0, local_total = 0;

    /* ---- runs: the last one is the result; the timed ones come first ---- */
    for (int it = 0; it <= reps && !rc; it++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double r0 = MPI_Wtime();
        bcast_bytes(x, (size_t)n * es);
        double r1 = MPI_Wtime();
        const char *xin = (const char *)x + (seg ? 0 : (size_t)me.start * es);
        s = hisp_mspmv(plan, o->op, a, xin, zero, yl);
        if (!s) s = hisp_mplan_get_breakdown(plan, bd);
        if (s) rc = cli_fail(ctx, s, NULL);
        if ((rc = agree(rc))) break;
        double r2 = MPI_Wtime();
        if (seg) {
            MPI_Gatherv(yl, mycount, dt, yseg, counts, displs, dt, 0, MPI_COMM_WORLD);
            if (rank == 0) { /* y0 = zeros: beta*y0 = 0, segments added (shared rows summed) */
                memset(y, 0, (size_t)m * es);
                for (int r = 0; r < size; r++)
                    for (int64_t i = 0; i < counts[r]; i++) {
                        int64_t row = parts[r].start + i;
                        if (o->type == HISP_F32)
                            ((float *)y)[row] += ((float *)yseg)[displs[r] + i];
                        else
                            ((double *)y)[row] += ((double *)yseg)[displs[r] + i];
                    }
            }
        } else {
            for (int64_t off = 0; off < m; off += INT_MAX / 2) {
                int c = (int)(m - off < INT_MAX / 2 ? m - off : INT_MAX / 2);
                MPI_Reduce((char *)yl + (size_t)off * es,
                           rank == 0 ? (char *)y + (size_t)off * es : NULL, c, dt, MPI_SUM, 0,
                           MPI_COMM_WORLD);
            }
        }
        double r3 = MPI_Wtime();
        /* per-run times: total, x broadcast, local SpMV (slowest rank), merge */
        double loc[2] = {bd->total_ms, bd->compute_ms}, mx[2] = {0, 0};
        MPI_Reduce(loc, mx, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (it >= o->warmup || it == reps) {
            int k = it == reps ? reps : it - o->warmup;
            int stride = reps + 1;
            t[0 * stride + k] = (r3 - r0) * 1e3;
            t[1 * stride + k] = (r1 - r0) * 1e3;
            t[2 * stride + k] = mx[0];
            t[3 * stride + k] = mx[1];
            t[4 * stride + k] = (r3 - r2) * 1e3;
        }
        local_compute = bd->compute_ms;
        local_total = bd->total_ms;
    }
    free(counts);
    free(displs);
    if (rc) {
        free(bd);
        goto out;
    }
    rank_stats my = {(double)(me.k1 - me.k0),
                     (double)me.start,
                     (double)me.end,
                     (double)me.shared_first,
                     local_compute,
                     local_total,
                     (double)nd,
                     bd->partition_ms + bd->distribution_ms + bd->convert_ms};
    MPI_Gather(&my, sizeof my / sizeof(double), MPI_DOUBLE, all, sizeof my / sizeof(double),
               MPI_DOUBLE, 0, MPI_COMM_WORLD);
    free(bd);
    if (rank == 0) {
        int stride = reps + 1, nr = o->repeat > 0 ? o->repeat : 1;
        double *base = o->repeat > 0 ? t : t + reps; /* the timed runs, else the result run */
        double med[5];
        for (int q = 0; q < 5; q++)
            med[q] = mspmv_median(base + (size_t)q * stride, nr);
        double local_dist = 0;
        for (int r = 0; r < size; r++)
            if (all[r].distribution > local_dist) local_dist = all[r].distribution;
        double rel = NAN, tol = o->type == HISP_F32 ? 1e-4 : 1e-10;
        if (o->out) rc = mspmv_write_y(ctx, o, y, m);
        if (!rc && o->check) rc = mspmv_check(ctx, A, o, x, NULL, y, m, &rel);
        if (!rc && o->json) {
            cli_json j;
            json_init(&j, stdout);
            json_object_begin(&j, NULL);
            if (o->gen)
                json_string(&j, "generator", hisp_gen_name(o->gp.kind));
            else
                json_input(&j, o->path);
            json_string(&j, "partition", hisp_partition_name(o->kind));
            json_string(&j, "backend", hisp_backend_name(o->backend));
            json_bool(&j, "mpi", true);
            json_int(&j, "ranks", size);
            json_int(&j, "devices", nd);
            json_string(&j, "type", hisp_type_name(o->type));
            json_bool(&j, "transpose", o->op == HISP_OP_T);
            json_int(&j, "rows", mi.nrows);
            json_int(&j, "cols", mi.ncols);
            json_int(&j, "nnz", mi.nnz);
            json_object_begin(&j, "one_time_ms");
            json_double(&j, "read", t_read);
            json_double(&j, "partition", t_part);
            json_double(&j, "scatter", t_scatter);
            json_double(&j, "local_plans", local_dist);
            json_object_end(&j);
            json_object_begin(&j, "per_spmv_ms");
            json_int(&j, "repeat", o->repeat);
            json_double(&j, "total", med[0]);
            json_double(&j, "x_bcast", med[1]);
            json_double(&j, "local", med[2]);
            json_double(&j, "compute", med[3]);
            json_double(&j, "merge", med[4]);
            json_object_end(&j);
            json_array_begin(&j, "ranks_detail");
            for (int r = 0; r < size; r++) {
                json_object_begin(&j, NULL);
                json_int(&j, "rank", r);
                json_int(&j, "start", (int64_t)all[r].start);
                json_int(&j, "end", (int64_t)all[r].end);
                json_bool(&j, "shared_first", all[r].shared != 0);
                json_int(&j, "nnz", (int64_t)all[r].nnz);
                json_int(&j, "devices", (int64_t)all[r].devices);
                json_double(&j, "compute_ms", all[r].compute);
                json_object_end(&j);
            }
            json_array_end(&j);
            if (o->check) {
                json_check(&j, rel, tol);
            }
            hisp_transfer_stats xfer = {0};
            cli_transfers_add(ctx, &xfer);
            json_transfers(&j, &xfer, MSPMV_XFER_COVERS);
            json_object_end(&j);
            json_finish(&j);
        } else if (!rc) {
            printf("matrix      %s: %lld x %lld, %lld nonzeros, %s\n",
                   o->gen ? hisp_gen_name(o->gp.kind) : o->path, (long long)mi.nrows,
                   (long long)mi.ncols, (long long)mi.nnz, hisp_type_name(o->type));
            printf("operation   y = %g*%s*x, %s over %d MPI rank(s) x %d device(s) (%s)\n",
                   o->alpha, o->op == HISP_OP_T ? "A^T" : "A", hisp_partition_name(o->kind), size,
                   nd, hisp_backend_name(o->backend));
            printf("one-time    read %.3f ms, partition %.3f ms, scatter %.3f ms, local plans "
                   "%.3f ms\n",
                   t_read, t_part, t_scatter, local_dist);
            printf("per SpMV    total %.3f ms%s: x broadcast %.3f, local SpMV %.3f (compute "
                   "%.3f), merge %.3f\n",
                   med[0], o->repeat > 0 ? " (medians)" : "", med[1], med[2], med[3], med[4]);
            printf("%-5s %-27s %12s %7s %10s\n", "rank", "rows (cols for pcsc)", "nnz", "share",
                   "compute_ms");
            for (int r = 0; r < size; r++) {
                char rows[64];
                snprintf(rows, sizeof rows, "[%lld, %lld)%s", (long long)all[r].start,
                         (long long)all[r].end, all[r].shared != 0 ? " shared" : "");
                printf("%-5d %-27s %12lld %6.1f%% %10.4f\n", r, rows, (long long)all[r].nnz,
                       mi.nnz ? 100.0 * all[r].nnz / (double)mi.nnz : 0.0, all[r].compute);
            }
            if (o->check)
                printf("check       relative error vs reference %.3e (tolerance %.0e): %s\n", rel,
                       tol, rel <= tol ? "ok" : "FAILED");
            if (o->out) printf("wrote       %s\n", o->out);
        }
        if (!rc && o->check && !(rel <= tol)) {
            fprintf(stderr, "hisp: warning: relative error %.3e exceeds the tolerance %.0e\n", rel,
                    tol);
            rc = CLI_CHECK;
        }
    }
out:
    hisp_mplan_destroy(&plan);
    hisp_matrix_destroy(&L);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
    free(refs);
    free(parts);
    free(lptr);
    free(x);
    free(y);
    free(yl);
    free(yseg);
    free(t);
    free(all);
    MPI_Finalize();
    return rc;
}
