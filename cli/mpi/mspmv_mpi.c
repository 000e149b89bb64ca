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

/* Everything one rank holds over an --mpi run (rank 0 alone: A, parts, y,
 * yseg, the gathered stats). mpi_run_free releases it. */
typedef struct {
    mspmv_opts *o;
    int rank, size;
    bool columns; /* the parts are columns (pcsc, colblock) */
    hisp_context ctx;
    hisp_matrix A, L;
    hisp_mplan plan;
    hisp_device_ref *refs;
    hisp_part *parts;
    part_msg head, me;
    int64_t *lptr;
    int32_t *lidx;
    void *lval, *x, *y, *yl, *yseg;
    double *t; /* 5 rows of reps + 1 run times (mspmv_mpi_runs) */
    rank_stats *all;
    hisp_matrix_info mi;
    int nd;
    bool shared;
    double t_read, t_part, t_scatter;
    size_t es;
    int64_t m, n, lrows;
    bool seg; /* each rank's result is a row segment (else a partial vector) */
    int reps;
    int *counts, *displs; /* of the segments in yseg */
    hisp_mplan_breakdown *bd;
    double local_compute, local_total;
} mpi_run;

/* Rank 0: reads A, checks its type, partitions it into one part per rank
 * and converts it in place to the arrays the parts index into. */
static int mpi_read_partition(mpi_run *r)
{
    mspmv_opts *o = r->o;
    double t0 = MPI_Wtime();
    int rc = mspmv_matrix(r->ctx, o, &r->A);
    if (rc) return rc;
    hisp_status s = hisp_matrix_get_info(r->A, &r->mi);
    if (!s && !cli_type_real(r->mi.type))
        rc = cli_type_unsupported("mspmv", r->mi.type, "MSREP parts take f32 or f64");
    if (!s && !rc) {
        r->parts = calloc((size_t)r->size, sizeof *r->parts);
        if (!r->parts) s = HISP_ERR_OUT_OF_HOST_MEMORY;
    }
    double t1 = MPI_Wtime();
    r->t_read = (t1 - t0) * 1e3;
    if (!s) s = hisp_matrix_partition(r->A, o->kind, r->size, r->parts);
    /* the arrays the parts index into (A converted in place) */
    if (!s) s = hisp_matrix_convert(r->A, r->columns ? HISP_FORMAT_CSC : HISP_FORMAT_CSR);
    r->t_part = (MPI_Wtime() - t1) * 1e3;
    if (s && !rc) rc = cli_fail(r->ctx, s, o->path);
    return rc;
}

/* The header goes to every rank with rank 0's status rc; returns that
 * status (every rank stops on nonzero), and sets the type and sizes. */
static int mpi_share_header(mpi_run *r, int rc)
{
    part_msg head = {
        .rc = rc, .type = r->mi.type, .nrows = r->mi.nrows, .ncols = r->mi.ncols, .nnz = r->mi.nnz};
    MPI_Bcast(&head, sizeof head, MPI_BYTE, 0, MPI_COMM_WORLD);
    r->head = head;
    if (head.rc) return (int)head.rc;
    r->o->type = (hisp_type)head.type;
    r->mi.type = r->o->type;
    r->mi.nrows = head.nrows;
    r->mi.ncols = head.ncols;
    r->mi.nnz = head.nnz;
    r->es = hisp_type_size(r->o->type);
    return 0;
}

/* Rank 0: sends every other rank its part (header, local pointers, index
 * and value slices) and keeps its own, whose slices it reads in place. */
static void mpi_send_parts(mpi_run *r)
{
    const int64_t *ptr = NULL;
    const int32_t *rows = NULL, *cols = NULL;
    const void *vals = NULL;
    size_t es = r->es;
    hisp_status s = hisp_matrix_host_arrays(r->A, &ptr, &rows, &cols, &vals);
    if (s) MPI_Abort(MPI_COMM_WORLD, cli_fail(r->ctx, s, NULL));
    const int32_t *idx = r->columns ? rows : cols;
    for (int k = r->size - 1; k >= 0; k--) { /* rank 0's own part last */
        part_msg p = r->head;
        p.start = r->parts[k].start;
        p.end = r->parts[k].end;
        p.shared_first = r->parts[k].shared_first;
        p.k0 = r->parts[k].nnz_begin;
        p.k1 = r->parts[k].nnz_end;
        int64_t *l = local_ptr(ptr, &p);
        if (!l) MPI_Abort(MPI_COMM_WORLD, cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL));
        if (k == 0) {
            r->me = p;
            r->lptr = l;
            break;
        }
        MPI_Send(&p, sizeof p, MPI_BYTE, k, 6, MPI_COMM_WORLD);
        send_bytes(l, ((size_t)(p.end - p.start) + 1) * sizeof *l, k);
        send_bytes(idx + p.k0, (size_t)(p.k1 - p.k0) * sizeof *idx, k);
        send_bytes((const char *)vals + (size_t)p.k0 * es, (size_t)(p.k1 - p.k0) * es, k);
        free(l);
    }
    r->lidx = (int32_t *)idx + r->me.k0; /* rank 0 reads its slice in place */
    r->lval = (char *)vals + (size_t)r->me.k0 * es;
}

/* The other ranks: receive their part from rank 0. */
static void mpi_recv_part(mpi_run *r)
{
    part_msg *me = &r->me;
    MPI_Recv(me, sizeof *me, MPI_BYTE, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int64_t rows = me->end - me->start, nnz = me->k1 - me->k0;
    r->lptr = malloc(((size_t)rows + 1) * sizeof *r->lptr);
    r->lidx = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *r->lidx);
    r->lval = malloc((size_t)(nnz > 0 ? nnz : 1) * r->es);
    if (!r->lptr || !r->lidx || !r->lval)
        MPI_Abort(MPI_COMM_WORLD, cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL));
    recv_bytes(r->lptr, ((size_t)rows + 1) * sizeof *r->lptr, 0);
    recv_bytes(r->lidx, (size_t)nnz * sizeof *r->lidx, 0);
    recv_bytes(r->lval, (size_t)nnz * r->es, 0);
}

/* Every rank: its local matrix and a plan over its devices. rc: this
 * rank's status so far; returns the status all ranks agree on. */
static int mpi_local_plan(mpi_run *r, int rc)
{
    mspmv_opts *o = r->o;
    r->lrows = r->me.end - r->me.start;
    hisp_status s = r->columns ? hisp_matrix_create_csc(r->ctx, o->type, r->mi.nrows, r->lrows,
                                                        r->lptr, r->lidx, r->lval, &r->L)
                               : hisp_matrix_create_csr(r->ctx, o->type, r->lrows, r->mi.ncols,
                                                        r->lptr, r->lidx, r->lval, &r->L);
    if (r->rank != 0) {
        free(r->lidx);
        free(r->lval);
    }
    r->lidx = NULL;
    r->lval = NULL;
    if (s) rc = cli_fail(r->ctx, s, NULL);
    if (!rc) rc = mspmv_devices(r->ctx, o, &r->refs, &r->nd, &r->shared);
    if (!rc) {
        /* --row-cost and --align shape the split over this rank's devices */
        s = hisp_mplan_create_weighted(r->L, r->nd, r->refs, o->kind, mspmv_flags(o), o->row_cost,
                                       &r->plan);
        if (s) rc = cli_fail(r->ctx, s, NULL);
    }
    return agree(rc);
}

/* Every rank: x (read on rank 0), the result buffers, the merge layout
 * and the timing table; returns the status all ranks agree on. */
static int mpi_prepare_vectors(mpi_run *r)
{
    mspmv_opts *o = r->o;
    size_t es = r->es;
    int rc = 0, size = r->size;
    r->m = o->op == HISP_OP_N ? r->mi.nrows : r->mi.ncols;
    r->n = o->op == HISP_OP_N ? r->mi.ncols : r->mi.nrows;
    if (r->rank == 0)
        rc = mspmv_x(r->ctx, o, r->n, &r->x);
    else if (!(r->x = malloc((size_t)(r->n > 0 ? r->n : 1) * es)))
        rc = cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL);
    if ((rc = agree(rc))) return rc;
    /* device op: N on the part's rows gives a row segment, T a partial vector */
    r->seg = (o->op == HISP_OP_T) == r->columns;
    int64_t m = r->m, ylen = r->seg ? r->lrows : m;
    r->yl = calloc((size_t)(ylen > 0 ? ylen : 1), es);
    if (r->rank == 0) {
        r->y = calloc((size_t)(m > 0 ? m : 1), es);
        r->yseg = calloc((size_t)(m + size > 0 ? m + size : 1), es); /* segments, shared rows */
    }
    r->counts = calloc((size_t)size, sizeof *r->counts);
    r->displs = calloc((size_t)size, sizeof *r->displs);
    r->all = calloc((size_t)size, sizeof *r->all);
    r->reps = o->repeat > 0 ? o->warmup + o->repeat : 0;
    r->t = calloc((size_t)(r->reps + 1) * 5, sizeof *r->t);
    if (!r->yl || !r->counts || !r->displs || !r->all || !r->t ||
        (r->rank == 0 && (!r->y || !r->yseg)))
        rc = cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL);
    if (r->seg && m > INT_MAX) rc = cli_value_error("--mpi: the row merge takes up to 2^31-1 rows");
    return agree(rc);
}

/* The merge of one run into y on rank 0: the row segments gathered and
 * added (shared rows summed; y0 = zeros, so beta*y0 = 0), or the partial
 * vectors reduced. */
static void mpi_merge(mpi_run *r, int mycount, MPI_Datatype dt)
{
    size_t es = r->es;
    int64_t m = r->m;
    if (r->seg) {
        MPI_Gatherv(r->yl, mycount, dt, r->yseg, r->counts, r->displs, dt, 0, MPI_COMM_WORLD);
        if (r->rank != 0) return;
        memset(r->y, 0, (size_t)m * es);
        for (int k = 0; k < r->size; k++)
            for (int64_t i = 0; i < r->counts[k]; i++) {
                int64_t row = r->parts[k].start + i;
                if (r->o->type == HISP_F32)
                    ((float *)r->y)[row] += ((float *)r->yseg)[r->displs[k] + i];
                else
                    ((double *)r->y)[row] += ((double *)r->yseg)[r->displs[k] + i];
            }
        return;
    }
    for (int64_t off = 0; off < m; off += INT_MAX / 2) {
        int c = (int)(m - off < INT_MAX / 2 ? m - off : INT_MAX / 2);
        MPI_Reduce((char *)r->yl + (size_t)off * es,
                   r->rank == 0 ? (char *)r->y + (size_t)off * es : NULL, c, dt, MPI_SUM, 0,
                   MPI_COMM_WORLD);
    }
}

/* The runs: the last one is the result; the timed ones (after the warmup)
 * come first. Row q of r->t (stride reps + 1) gets per-run times: q = 0
 * total, 1 x broadcast, 2 local SpMV and 3 its compute (slowest rank), 4
 * merge. Returns the status all ranks agree on. */
static int mpi_spmv_runs(mpi_run *r)
{
    mspmv_opts *o = r->o;
    int rc = 0, size = r->size, reps = r->reps;
    int mycount = (int)(r->seg ? r->lrows : 0);
    MPI_Gather(&mycount, 1, MPI_INT, r->counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (int k = 1; k < size; k++)
        r->displs[k] = r->displs[k - 1] + r->counts[k - 1];
    float af = (float)o->alpha, zf = 0;
    double zd = 0;
    const void *a = o->type == HISP_F32 ? (const void *)&af : (const void *)&o->alpha;
    const void *zero = o->type == HISP_F32 ? (const void *)&zf : (const void *)&zd;
    MPI_Datatype dt = o->type == HISP_F32 ? MPI_FLOAT : MPI_DOUBLE;
    r->bd = calloc(1, sizeof *r->bd);
    if (!r->bd) MPI_Abort(MPI_COMM_WORLD, cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL));
    for (int it = 0; it <= reps && !rc; it++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double r0 = MPI_Wtime();
        bcast_bytes(r->x, (size_t)r->n * r->es);
        double r1 = MPI_Wtime();
        const char *xin = (const char *)r->x + (r->seg ? 0 : (size_t)r->me.start * r->es);
        hisp_status s = hisp_mspmv(r->plan, o->op, a, xin, zero, r->yl);
        if (!s) s = hisp_mplan_get_breakdown(r->plan, r->bd);
        if (s) rc = cli_fail(r->ctx, s, NULL);
        if ((rc = agree(rc))) break;
        double r2 = MPI_Wtime();
        mpi_merge(r, mycount, dt);
        double r3 = MPI_Wtime();
        double loc[2] = {r->bd->total_ms, r->bd->compute_ms}, mx[2] = {0, 0};
        MPI_Reduce(loc, mx, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (it >= o->warmup || it == reps) {
            int k = it == reps ? reps : it - o->warmup;
            int stride = reps + 1;
            r->t[0 * stride + k] = (r3 - r0) * 1e3;
            r->t[1 * stride + k] = (r1 - r0) * 1e3;
            r->t[2 * stride + k] = mx[0];
            r->t[3 * stride + k] = mx[1];
            r->t[4 * stride + k] = (r3 - r2) * 1e3;
        }
        r->local_compute = r->bd->compute_ms;
        r->local_total = r->bd->total_ms;
    }
    return rc;
}

/* Every rank's part and times to rank 0 (r->all). */
static void mpi_gather_stats(mpi_run *r)
{
    const hisp_mplan_breakdown *bd = r->bd;
    rank_stats my = {(double)(r->me.k1 - r->me.k0),
                     (double)r->me.start,
                     (double)r->me.end,
                     (double)r->me.shared_first,
                     r->local_compute,
                     r->local_total,
                     (double)r->nd,
                     bd->partition_ms + bd->distribution_ms + bd->convert_ms};
    MPI_Gather(&my, sizeof my / sizeof(double), MPI_DOUBLE, r->all, sizeof my / sizeof(double),
               MPI_DOUBLE, 0, MPI_COMM_WORLD);
}

/* The --json report; med: the five per-SpMV medians, local_dist: the
 * slowest rank's local plan setup. */
static void mpi_report_json(const mpi_run *r, const double med[5], double local_dist, double rel,
                            double tol)
{
    const mspmv_opts *o = r->o;
    cli_json j;
    json_init(&j, stdout);
    json_object_begin(&j, NULL);
    mspmv_json_head(&j, o);
    json_string(&j, "backend", hisp_backend_name(o->backend));
    json_bool(&j, "mpi", true);
    json_int(&j, "ranks", r->size);
    json_int(&j, "devices", r->nd);
    json_string(&j, "type", hisp_type_name(o->type));
    json_bool(&j, "transpose", o->op == HISP_OP_T);
    json_int(&j, "rows", r->mi.nrows);
    json_int(&j, "cols", r->mi.ncols);
    json_int(&j, "nnz", r->mi.nnz);
    json_object_begin(&j, "one_time_ms");
    json_double(&j, "read", r->t_read);
    json_double(&j, "partition", r->t_part);
    json_double(&j, "scatter", r->t_scatter);
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
    for (int k = 0; k < r->size; k++) {
        const rank_stats *a = &r->all[k];
        json_object_begin(&j, NULL);
        json_int(&j, "rank", k);
        json_int(&j, "start", (int64_t)a->start);
        json_int(&j, "end", (int64_t)a->end);
        json_bool(&j, "shared_first", a->shared != 0);
        json_int(&j, "nnz", (int64_t)a->nnz);
        json_int(&j, "devices", (int64_t)a->devices);
        json_double(&j, "compute_ms", a->compute);
        json_object_end(&j);
    }
    json_array_end(&j);
    if (o->check) {
        json_check(&j, rel, tol);
    }
    hisp_transfer_stats xfer = {0};
    cli_transfers_add(r->ctx, &xfer);
    json_transfers(&j, &xfer, MSPMV_XFER_COVERS);
    json_object_end(&j);
    json_finish(&j);
}

/* The text report (mpi_report_json's arguments). */
static void mpi_report_text(const mpi_run *r, const double med[5], double local_dist, double rel,
                            double tol)
{
    const mspmv_opts *o = r->o;
    const hisp_matrix_info *mi = &r->mi;
    mspmv_print_matrix(o, mi);
    printf("operation   y = %g*%s*x, %s over %d MPI rank(s) x %d device(s) (%s)\n", o->alpha,
           o->op == HISP_OP_T ? "A^T" : "A", hisp_partition_name(o->kind), r->size, r->nd,
           hisp_backend_name(o->backend));
    printf("one-time    read %.3f ms, partition %.3f ms, scatter %.3f ms, local plans "
           "%.3f ms\n",
           r->t_read, r->t_part, r->t_scatter, local_dist);
    printf("per SpMV    total %.3f ms%s: x broadcast %.3f, local SpMV %.3f (compute "
           "%.3f), merge %.3f\n",
           med[0], o->repeat > 0 ? " (medians)" : "", med[1], med[2], med[3], med[4]);
    printf("%-5s %-27s %12s %7s %10s\n", "rank", "rows (cols for pcsc)", "nnz", "share",
           "compute_ms");
    for (int k = 0; k < r->size; k++) {
        const rank_stats *a = &r->all[k];
        char rows[64];
        snprintf(rows, sizeof rows, "[%lld, %lld)%s", (long long)a->start, (long long)a->end,
                 a->shared != 0 ? " shared" : "");
        printf("%-5d %-27s %12lld %6.1f%% %10.4f\n", k, rows, (long long)a->nnz,
               mi->nnz ? 100.0 * a->nnz / (double)mi->nnz : 0.0, a->compute);
    }
    mspmv_print_check(o, rel, tol);
    if (o->out) printf("wrote       %s\n", o->out);
}

/* Rank 0: the medians, -o, --check and the report; returns the exit code. */
static int mpi_report(mpi_run *r)
{
    mspmv_opts *o = r->o;
    int rc = 0, reps = r->reps;
    int stride = reps + 1, nr = o->repeat > 0 ? o->repeat : 1;
    double *base = o->repeat > 0 ? r->t : r->t + reps; /* the timed runs, else the result run */
    double med[5];
    for (int q = 0; q < 5; q++)
        med[q] = mspmv_median(base + (size_t)q * stride, nr);
    double local_dist = 0;
    for (int k = 0; k < r->size; k++)
        if (r->all[k].distribution > local_dist) local_dist = r->all[k].distribution;
    double rel = NAN, tol = mspmv_tolerance(o->type);
    if (o->out) rc = mspmv_write_y(r->ctx, o, r->y, r->m);
    if (!rc && o->check) rc = mspmv_check(r->ctx, r->A, o, r->x, NULL, r->y, r->m, &rel);
    if (!rc && o->json)
        mpi_report_json(r, med, local_dist, rel, tol);
    else if (!rc)
        mpi_report_text(r, med, local_dist, rel, tol);
    if (!rc) rc = mspmv_verdict(o, rel, tol);
    return rc;
}

static void mpi_run_free(mpi_run *r)
{
    hisp_mplan_destroy(&r->plan);
    hisp_matrix_destroy(&r->L);
    hisp_matrix_destroy(&r->A);
    hisp_context_destroy(&r->ctx);
    free(r->refs);
    free(r->parts);
    free(r->lptr);
    free(r->x);
    free(r->y);
    free(r->yl);
    free(r->yseg);
    free(r->t);
    free(r->all);
    free(r->counts);
    free(r->displs);
    free(r->bd);
}

int mspmv_mpi(mspmv_opts *o, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    MPI_Init(NULL, NULL);
    mpi_run r = {.o = o, .rank = 0, .size = 1};
    MPI_Comm_rank(MPI_COMM_WORLD, &r.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &r.size);
    if (r.rank != 0) cli_progress_enable(true); /* quiet */
    r.columns = o->kind == HISP_PART_PCSC || o->kind == HISP_PART_COLBLOCK;
    int rc = cli_context(&r.ctx);

    /* ---- rank 0: read, partition, send ---- */
    if (r.rank == 0 && !rc) rc = mpi_read_partition(&r);
    int head_rc = mpi_share_header(&r, rc);
    if (head_rc) {
        rc = head_rc;
        goto out;
    }
    double t2 = MPI_Wtime();
    if (r.rank == 0)
        mpi_send_parts(&r);
    else
        mpi_recv_part(&r);
    r.t_scatter = (MPI_Wtime() - t2) * 1e3;

    /* ---- every rank: its local matrix, a plan over its devices, x ---- */
    if ((rc = mpi_local_plan(&r, rc))) goto out;
    if ((rc = mpi_prepare_vectors(&r))) goto out;
    if ((rc = mpi_spmv_runs(&r))) goto out;
    mpi_gather_stats(&r);
    if (r.rank == 0) rc = mpi_report(&r);
out:
    mpi_run_free(&r);
    MPI_Finalize();
    return rc;
}
