/* hisp solve --mpi (only in build/bin/hisp-mpi): a Krylov solve over MPI
 * ranks through hisp_solver_solve_operator.
 *
 * Rank 0 reads A (square, f32 or f64) and cuts its rows into one block per
 * rank: pcsr (nnz-balanced, hisp_matrix_partition's cuts moved to whole
 * rows: a row a cut splits belongs to the earlier rank) or rowblock (equal
 * row counts). Each rank receives its rows as a CSR matrix with global
 * column indices and keeps them on its own context and device (by default
 * its rank within the node modulo the node's devices, GPUs first). The
 * operator: apply multiplies the rank's rows with x through the halo
 * exchange (halo.h: only the off-rank entries the rows reference move);
 * apply_dot (CUDA) the same with CG's local p^H q (halo_apply_dot);
 * diagonal gives the local rows' diagonal; allreduce is
 * MPI_Allreduce(MPI_SUM), so every dot product is global and every rank
 * takes the same steps. b = ones, x0 = 0. The reported relative residual is
 * the true one, ||b - A x|| / ||b||, recomputed after the solve. Exit
 * status: 0 converged, 4 not converged, 2 bad input (1 usage, 3 backend). */
#include "../cli.h"
#include "halo.h"
#include "mpi_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { SOLVE_NOT_CONVERGED = 4 };

static const char *const help =
    "usage: mpirun -np R hisp solve A.mtx|A.hisp|gen:KIND:N[:SEED] --mpi [options]\n"
    "\n"
    "Solve A x = b over R MPI ranks (build/bin/hisp-mpi): rank 0 reads (or\n"
    "generates, as hisp solve) A and sends every rank a block of its rows; the\n"
    "ranks solve together, each on its own device, exchanging only the entries\n"
    "of x that other ranks' rows reference and summing dot products with\n"
    "MPI_Allreduce.\n"
    "\n"
    "options:\n"
    "  --method M         cg (default), bicgstab or gmres\n"
    "  --precond P        none (default) or jacobi\n"
    "  --rtol R           relative tolerance (default 1e-8)\n"
    "  --atol A           absolute tolerance (default 0)\n"
    "  --maxit N          iteration limit (default 10000)\n"
    "  --restart M        GMRES restart length (default 30)\n"
    "  --rhs ones         the right-hand side (all ones; the only one)\n"
    "  --type T           f64 (default: the input's) or f32 (--entry and --precision\n"
    "                     are aliases)\n"
    "  --partition K      pcsr (nnz-balanced whole rows, default) or rowblock\n"
    "  --backend B        each rank's backend (default auto: CUDA, else OpenCL, else\n"
    "                     reference)\n"
    "  --device D         every rank's device index (default: the rank's number\n"
    "                     within its node modulo the node's devices, GPUs first)\n"
    "  --json             one JSON object on stdout (rank 0)\n"
    "\n"
    "exit status: 0 converged, 4 not converged, 1 usage, 2 bad input, 3 backend.\n";

typedef struct {
    const char *path;
    hisp_solver_method method;
    hisp_precond pc;
    double rtol, atol;
    int64_t maxit;
    int restart, device;
    hisp_type type;
    bool type_given; /* --type: else the input's */
    hisp_partition_kind kind;
    hisp_backend_kind backend;
    bool json;
} solve_opts;

static int parse(int argc, char **argv, solve_opts *o)
{
    static const cli_opt opts[] = {
        {"--mpi", false},      {"--method", true},  {"--precond", true},
        {"--rtol", true},      {"--atol", true},    {"--maxit", true},
        {"--restart", true},   {"--rhs", true},     {"--precision", true},
        {"--partition", true}, {"--backend", true}, {"--device", true},
        {"--json", false},     {"--type", true},    {"--entry", true},
        {"--help", false},     {"-h", false},       {0, 0}};
    enum {
        O_MPI,
        O_METHOD,
        O_PC,
        O_RTOL,
        O_ATOL,
        O_MAXIT,
        O_RESTART,
        O_RHS,
        O_PREC,
        O_PART,
        O_BACKEND,
        O_DEVICE,
        O_JSON,
        O_TYPE,
        O_ENTRY
    };
    const char *val[20] = {0};
    memset(o, 0, sizeof *o);
    o->rtol = 1e-8;
    o->maxit = 10000;
    o->restart = 30;
    o->type = HISP_F64;
    o->kind = HISP_PART_PCSR;
    o->backend = HISP_BACKEND_AUTO;
    int rc = cli_parse_command("solve", argc, argv, opts, help, val, &o->path);
    if (rc) return rc;
    if (!o->path) return cli_usage_error("solve", "missing A.mtx (or gen:KIND:N)");
    if (val[O_METHOD] && hisp_solver_method_from_name(val[O_METHOD], &o->method))
        return cli_value_error("--method: unknown method '%s' (cg, bicgstab, gmres)",
                               val[O_METHOD]);
    if (o->method == HISP_SOLVER_LSQR)
        return cli_value_error("--method lsqr: not over MPI ranks (its A^T products need the "
                               "columns)");
    if (val[O_PC] && hisp_precond_from_name(val[O_PC], &o->pc))
        return cli_value_error("--precond: unknown preconditioner '%s' (none, jacobi)", val[O_PC]);
    if (val[O_PC] && o->pc == HISP_PRECOND_AMG)
        return cli_value_error("--precond amg: not over MPI ranks yet (none, jacobi)");
    if (val[O_RTOL] && (rc = cli_parse_double("--rtol", val[O_RTOL], &o->rtol))) return rc;
    if (val[O_ATOL] && (rc = cli_parse_double("--atol", val[O_ATOL], &o->atol))) return rc;
    if (val[O_MAXIT] && (rc = cli_parse_i64("--maxit", val[O_MAXIT], 0, INT64_MAX, &o->maxit)))
        return rc;
    if (val[O_RESTART] && (rc = cli_parse_int("--restart", val[O_RESTART], 1, 1000, &o->restart)))
        return rc;
    if (val[O_RHS] && strcmp(val[O_RHS], "ones") != 0)
        return cli_value_error("--rhs: '%s' (only ones over MPI ranks)", val[O_RHS]);
    const char *tv[3] = {val[O_TYPE], val[O_ENTRY], val[O_PREC]}; /* CLI_TYPE_OPTS */
    cli_type ct;
    if ((rc = cli_parse_type("solve", tv, &ct))) return rc;
    o->type = ct.type;
    o->type_given = ct.given;
    if (val[O_PART] && (hisp_partition_from_name(val[O_PART], &o->kind) ||
                        (o->kind != HISP_PART_PCSR && o->kind != HISP_PART_ROWBLOCK)))
        return cli_value_error("--partition: '%s' (pcsr or rowblock: each rank owns rows)",
                               val[O_PART]);
    if (val[O_BACKEND] && (rc = cli_parse_backend("--backend", val[O_BACKEND], &o->backend)))
        return rc;
    o->device = -1; /* one per node-local rank */
    if (val[O_DEVICE] && (rc = cli_parse_int("--device", val[O_DEVICE], 0, 1 << 20, &o->device)))
        return rc;
    o->json = val[O_JSON] != NULL;
    return CLI_OK;
}

/* ---- the operator ----------------------------------------------------------- */

typedef struct {
    halo h;     /* this rank's rows and what moves between the ranks */
    void *diag; /* this rank's rows' diagonal */
    int64_t lrows, n;
    hisp_type type;
    int64_t reduces, values; /* allreduce calls of the solve, values they summed */
} rank_op;

static hisp_status op_apply(void *user, hisp_op op, hisp_vector x, hisp_vector y)
{
    rank_op *r = user;
    if (op != HISP_OP_N) return HISP_ERR_UNSUPPORTED;
    return halo_apply(&r->h, x, y);
}

static hisp_status op_apply_dot(void *user, hisp_vector x, hisp_vector y, hisp_result res)
{
    rank_op *r = user;
    return halo_apply_dot(&r->h, x, y, res);
}

static hisp_status op_diagonal(void *user, hisp_vector d)
{
    rank_op *r = user;
    return hisp_vector_write(d, r->diag);
}

static hisp_status op_allreduce(void *user, double *v, int n)
{
    rank_op *r = user;
    r->reduces++;
    r->values += n;
    return MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS
               ? HISP_SUCCESS
               : HISP_ERR_BACKEND;
}

static double ld(hisp_type t, const void *a, int64_t i)
{
    return t == HISP_F32 ? ((const float *)a)[i] : ((const double *)a)[i];
}

/* ---- the device of each rank ------------------------------------------------- */

/* --backend auto: CUDA, then OpenCL, where they have devices, else the
 * reference (as hisp_context_set_backend's auto). */
static hisp_backend_kind resolve_auto(hisp_context ctx)
{
    hisp_backend_kind k[2] = {HISP_BACKEND_CUDA, HISP_BACKEND_OPENCL};
    for (int i = 0; i < 2; i++) {
        int count = 0;
        if (hisp_backend_compiled(k[i]) && !hisp_backend_device_count(ctx, k[i], &count) &&
            count > 0)
            return k[i];
    }
    return HISP_BACKEND_REFERENCE;
}

/* --device, else the rank's number within its node modulo the node's
 * devices: its GPUs where it has any (an OpenCL platform may list the CPU
 * too), else all. With no device at all, 0 (set_backend then says why). */
static int rank_device(hisp_context ctx, hisp_backend_kind kind, int device, int node_rank)
{
    int count = 0, gpus = 0;
    if (device >= 0 || hisp_backend_device_count(ctx, kind, &count) || count == 0)
        return device >= 0 ? device : 0;
    hisp_device_info di;
    for (int i = 0; i < count; i++)
        gpus += !hisp_backend_device_info(ctx, kind, i, &di) && di.is_gpu;
    if (!gpus) return node_rank % count;
    for (int i = 0, g = 0; i < count; i++)
        if (!hisp_backend_device_info(ctx, kind, i, &di) && di.is_gpu && g++ == node_rank % gpus)
            return i;
    return 0;
}

/* What each rank reports to rank 0. */
typedef struct {
    char host[64], device[256];
    int64_t node_rank, device_index, rows, nnz, ghosts, sends, read_entries, peers_in, peers_out;
} rank_report;

/* ---- rank 0: the rows of every rank ------------------------------------------ */

typedef struct {
    int64_t rc;
    int64_t type, n, nnz;
} head_msg;

/* First row of each rank (own[size] = n): pcsr's cuts moved to whole rows
 * (a shared row stays with the earlier part), or equal blocks. */
static int row_cuts(hisp_context ctx, hisp_matrix A, const solve_opts *o, int size, int64_t n,
                    int64_t *own)
{
    own[0] = 0;
    own[size] = n;
    if (o->kind == HISP_PART_ROWBLOCK) {
        for (int r = 1; r < size; r++)
            own[r] = (int64_t)((__int128)n * r / size);
        return CLI_OK;
    }
    hisp_part *parts = calloc((size_t)size, sizeof *parts);
    if (!parts) return cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL);
    hisp_status s = hisp_matrix_partition(A, HISP_PART_PCSR, size, parts);
    for (int r = 1; !s && r < size; r++) {
        int64_t c = parts[r].start + (parts[r].shared_first ? 1 : 0);
        own[r] = c < own[r - 1] ? own[r - 1] : c > n ? n : c;
    }
    free(parts);
    return s ? cli_fail(ctx, s, o->path) : CLI_OK;
}

/* Everything one rank holds over a solve (rank 0 alone: A until it is cut,
 * reports). solve_run_free releases it. */
typedef struct {
    const solve_opts *o;
    int rank, size, node_rank;
    hisp_context ctx;
    hisp_matrix A;
    hisp_solver solver;
    hisp_vector b, x, ax;
    rank_op r;    /* the operator's state (its user pointer) */
    int64_t *own; /* first row of each rank, own[size] = n */
    int64_t *lptr;
    int32_t *lidx;
    void *lval, *bh, *axh;
    rank_report me, *reports;
    head_msg head;
    hisp_solve_info info;
    hisp_backend_kind backend; /* --backend, auto resolved */
    int device;
    int64_t s0; /* this rank's first row */
    double prepare_ms, ms, rel, per;
} solve_run;

/* Every rank: its context on its backend and device, and what rank 0
 * reports of it (host, device). Returns the status all ranks agree on. */
static int solve_open_device(solve_run *w)
{
    hisp_status s = HISP_SUCCESS;
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, w->rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &w->node_rank);
    MPI_Comm_free(&node);
    int rc = w->own && (w->rank != 0 || w->reports)
                 ? cli_context(&w->ctx)
                 : cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL);
    w->backend = w->o->backend;
    if (!rc && w->backend == HISP_BACKEND_AUTO) w->backend = resolve_auto(w->ctx);
    w->device = rc ? 0 : rank_device(w->ctx, w->backend, w->o->device, w->node_rank);
    if (!rc && w->backend != HISP_BACKEND_REFERENCE &&
        (s = hisp_context_set_backend(w->ctx, w->backend, w->device)))
        rc = cli_fail(w->ctx, s, NULL);
    if ((rc = agree(rc))) return rc;
    hisp_device_info di = {0};
    int len = 0;
    char host[MPI_MAX_PROCESSOR_NAME] = "";
    MPI_Get_processor_name(host, &len);
    snprintf(w->me.host, sizeof w->me.host, "%.63s", host);
    if (!hisp_context_get_device(w->ctx, &di))
        snprintf(w->me.device, sizeof w->me.device, "%.255s", di.name);
    w->me.node_rank = w->node_rank;
    w->me.device_index = w->backend == HISP_BACKEND_REFERENCE ? -1 : w->device;
    return CLI_OK;
}

/* Rank 0: reads A, checks it (square, real, rows for every rank), makes it
 * CSR and cuts its rows (w->own); the header gets its type and sizes. */
static int solve_read_cut(solve_run *w)
{
    const solve_opts *o = w->o;
    hisp_status s = HISP_SUCCESS;
    hisp_matrix_info mi = {0};
    cli_type ct = {o->type, o->type_given};
    int rc = cli_load_matrix(w->ctx, o->path, &ct, &w->A, NULL);
    if (!rc && (s = hisp_matrix_get_info(w->A, &mi))) rc = cli_fail(w->ctx, s, o->path);
    if (!rc && mi.nrows != mi.ncols)
        rc = cli_value_error("%s: %s needs a square matrix (this one is %lld x %lld)", o->path,
                             hisp_solver_method_name(o->method), (long long)mi.nrows,
                             (long long)mi.ncols);
    if (!rc && !cli_type_real(mi.type))
        rc = cli_type_unsupported("solve --mpi", mi.type,
                                  "solves over MPI ranks take f32 or f64; without --mpi "
                                  "hisp solve takes every type");
    if (!rc && (mi.nrows > INT32_MAX || mi.nrows < w->size))
        rc = cli_value_error("%s: %lld rows for %d ranks (need 1 to 2^31-1 rows per rank, at "
                             "least one each)",
                             o->path, (long long)mi.nrows, w->size);
    if (!rc && (s = hisp_matrix_convert(w->A, HISP_FORMAT_CSR))) rc = cli_fail(w->ctx, s, o->path);
    if (!rc) rc = row_cuts(w->ctx, w->A, o, w->size, mi.nrows, w->own);
    w->head.type = mi.type;
    w->head.n = mi.nrows;
    w->head.nnz = mi.nnz;
    return rc;
}

/* Rank 0: sends every other rank its rows (pointers from 0, global column
 * indices, values), copies its own and frees A. */
static void solve_send_blocks(solve_run *w, size_t es)
{
    const int64_t *ptr = NULL, *own = w->own;
    const int32_t *rows = NULL, *cols = NULL;
    const void *vals = NULL;
    hisp_status s = hisp_matrix_host_arrays(w->A, &ptr, &rows, &cols, &vals);
    if (s) MPI_Abort(MPI_COMM_WORLD, cli_fail(w->ctx, s, NULL));
    for (int q = w->size - 1; q >= 0; q--) { /* rank 0's own block last */
        int64_t a = own[q], e = own[q + 1], k0 = ptr[a], k1 = ptr[e];
        int64_t *l = malloc(((size_t)(e - a) + 1) * sizeof *l);
        if (!l) MPI_Abort(MPI_COMM_WORLD, cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL));
        for (int64_t i = a; i <= e; i++)
            l[i - a] = ptr[i] - k0;
        if (q == 0) {
            int64_t lnnz = k1 - k0;
            w->lptr = l;
            w->lidx = malloc((size_t)(lnnz > 0 ? lnnz : 1) * sizeof *w->lidx);
            w->lval = malloc((size_t)(lnnz > 0 ? lnnz : 1) * es);
            if (!w->lidx || !w->lval)
                MPI_Abort(MPI_COMM_WORLD, cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL));
            memcpy(w->lidx, cols + k0, (size_t)lnnz * sizeof *w->lidx);
            memcpy(w->lval, (const char *)vals + (size_t)k0 * es, (size_t)lnnz * es);
            break;
        }
        int64_t cnt = k1 - k0;
        MPI_Send(&cnt, 1, MPI_INT64_T, q, 6, MPI_COMM_WORLD);
        send_bytes(l, ((size_t)(e - a) + 1) * sizeof *l, q);
        send_bytes(cols + k0, (size_t)cnt * sizeof *cols, q);
        send_bytes((const char *)vals + (size_t)k0 * es, (size_t)cnt * es, q);
        free(l);
    }
    hisp_matrix_destroy(&w->A); /* rank 0 keeps only its rows too */
}

/* The other ranks: receive their rows from rank 0. */
static void solve_recv_block(solve_run *w, size_t es)
{
    int64_t lnnz = 0, lrows = w->r.lrows;
    MPI_Recv(&lnnz, 1, MPI_INT64_T, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    w->lptr = malloc(((size_t)lrows + 1) * sizeof *w->lptr);
    w->lidx = malloc((size_t)(lnnz > 0 ? lnnz : 1) * sizeof *w->lidx);
    w->lval = malloc((size_t)(lnnz > 0 ? lnnz : 1) * es);
    if (!w->lptr || !w->lidx || !w->lval)
        MPI_Abort(MPI_COMM_WORLD, cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL));
    recv_bytes(w->lptr, ((size_t)lrows + 1) * sizeof *w->lptr, 0);
    recv_bytes(w->lidx, (size_t)lnnz * sizeof *w->lidx, 0);
    recv_bytes(w->lval, (size_t)lnnz * es, 0);
}

/* Every rank: the diagonal of its rows and b = ones; with Jacobi, a row
 * without a diagonal entry on any rank stops all (rank 0 says which).
 * Returns the status all ranks agree on. */
static int solve_diagonal(solve_run *w, size_t es)
{
    rank_op *r = &w->r;
    int rc = 0;
    r->diag = calloc((size_t)(r->lrows > 0 ? r->lrows : 1), es);
    w->bh = malloc((size_t)(r->lrows > 0 ? r->lrows : 1) * es);
    w->axh = malloc((size_t)(r->lrows > 0 ? r->lrows : 1) * es);
    if (!r->diag || !w->bh || !w->axh) rc = cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL);
    if ((rc = agree(rc))) return rc;
    int64_t zero_row = -1;
    for (int64_t i = 0; i < r->lrows; i++) {
        double d = 0;
        for (int64_t k = w->lptr[i]; k < w->lptr[i + 1]; k++)
            if (w->lidx[k] == w->s0 + i) d += ld(r->type, w->lval, k);
        if (r->type == HISP_F32) {
            ((float *)r->diag)[i] = (float)d;
            ((float *)w->bh)[i] = 1;
        } else {
            ((double *)r->diag)[i] = d;
            ((double *)w->bh)[i] = 1;
        }
        if (d == 0 && zero_row < 0) zero_row = w->s0 + i;
    }
    /* a zero diagonal fails Jacobi on one rank only: refuse it on all first */
    int64_t zr = zero_row < 0 ? INT64_MAX : zero_row;
    MPI_Allreduce(MPI_IN_PLACE, &zr, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
    if (w->o->pc == HISP_PRECOND_JACOBI && zr != INT64_MAX)
        return w->rank == 0 ? cli_value_error("%s: Jacobi: row %lld has no nonzero diagonal entry "
                                              "(use --precond none)",
                                              w->o->path, (long long)zr + 1)
                            : CLI_INPUT;
    return CLI_OK;
}

/* Every rank: the halo over its rows (which then hold them), the vectors
 * and the solver. A halo failure fails every rank alike; the rest returns
 * the status all ranks agree on. */
static int solve_setup(solve_run *w)
{
    const solve_opts *o = w->o;
    rank_op *r = &w->r;
    hisp_status s =
        halo_build(&r->h, w->ctx, r->type, w->own, w->rank, w->size, w->lptr, w->lidx, w->lval);
    int rc = s ? cli_fail(w->ctx, s, o->path) : CLI_OK;
    if (rc) return rc; /* every rank failed */
    w->me.rows = r->lrows;
    w->me.nnz = w->lptr[r->lrows];
    w->me.ghosts = r->h.ghosts;
    w->me.sends = r->h.sends;
    w->me.read_entries = r->h.mirror_n;
    w->me.peers_in = r->h.peers_in;
    w->me.peers_out = r->h.peers_out;
    free(w->lidx); /* the halo holds the rows now */
    free(w->lval);
    w->lidx = NULL;
    w->lval = NULL;
    s = hisp_vector_create(w->ctx, r->type, r->lrows, &w->b);
    if (!s) s = hisp_vector_create(w->ctx, r->type, r->lrows, &w->x); /* x0 = 0 */
    if (!s) s = hisp_vector_create(w->ctx, r->type, r->lrows, &w->ax);
    if (!s) s = hisp_vector_write(w->b, w->bh);
    if (!s) s = hisp_solver_create(w->ctx, o->method, &w->solver);
    if (!s) s = hisp_solver_set_tolerances(w->solver, o->rtol, o->atol);
    if (!s) s = hisp_solver_set_max_iterations(w->solver, o->maxit);
    if (!s) s = hisp_solver_set_restart(w->solver, o->restart);
    if (!s) s = hisp_solver_set_preconditioner(w->solver, o->pc);
    if (s) rc = cli_fail(w->ctx, s, o->path);
    return agree(rc);
}

/* Every rank: one product (prepare_ms), the solve, then the true relative
 * residual ||b - A x|| / ||b|| (rel), the slowest rank's solve time (ms)
 * and its time per iteration (per). Returns the status all ranks agree on. */
static int solve_run_solver(solve_run *w)
{
    const char *path = w->o->path;
    rank_op *r = &w->r;
    int rc;
    /* CG's q = A p with p^H q through apply_dot where hisp_spmv_dot is one
     * pass (CUDA). Elsewhere it is SpMV + dot plus the ghosts' small
     * products (on PoCL no gain, more time per iteration with several
     * ranks), or the reference backend's fused loop, an oracle slower than
     * its two loops: apply, then the solver's dot. */
    hisp_operator op = {.nrows = r->lrows,
                        .ncols = r->lrows,
                        .type = r->type,
                        .apply = op_apply,
                        .diagonal = op_diagonal,
                        .allreduce = op_allreduce,
                        .user = r,
                        .apply_dot = w->backend == HISP_BACKEND_CUDA ? op_apply_dot : NULL};
    /* one product first, as `hisp solve` does: the upload of the rank's blocks
     * and the kernels' build are reported apart (prepare_ms), not spread over
     * the iterations */
    MPI_Barrier(MPI_COMM_WORLD);
    double t_prep = MPI_Wtime();
    hisp_status s = op_apply(r, HISP_OP_N, w->b, w->ax);
    if (!s) s = hisp_context_synchronize(w->ctx);
    if ((rc = agree(s ? cli_fail(w->ctx, s, path) : CLI_OK))) return rc;
    w->prepare_ms = (MPI_Wtime() - t_prep) * 1e3;
    MPI_Allreduce(MPI_IN_PLACE, &w->prepare_ms, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    s = hisp_solver_solve_operator(w->solver, &op, w->b, w->x, &w->info);
    if ((rc = agree(s ? cli_fail(w->ctx, s, path) : CLI_OK))) return rc;
    /* the true residual, ||b - A x|| / ||b|| */
    s = op_apply(r, HISP_OP_N, w->x, w->ax);
    if (!s) s = hisp_vector_read(w->ax, w->axh);
    if ((rc = agree(s ? cli_fail(w->ctx, s, path) : CLI_OK))) return rc;
    double sums[2] = {0, 0}; /* ||b - Ax||^2, ||b||^2 */
    for (int64_t i = 0; i < r->lrows; i++) {
        double bi = ld(r->type, w->bh, i), ri = bi - ld(r->type, w->axh, i);
        sums[0] += ri * ri;
        sums[1] += bi * bi;
    }
    MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    w->ms = w->info.ms;
    MPI_Allreduce(MPI_IN_PLACE, &w->ms, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    w->rel = sums[1] > 0 ? sqrt(sums[0] / sums[1]) : 0;
    w->per = w->ms / (double)(w->info.iterations > 0 ? w->info.iterations : 1);
    return CLI_OK;
}

/* Rank 0's --json report. */
static void solve_report_json(const solve_run *w)
{
    const solve_opts *o = w->o;
    const hisp_solve_info *info = &w->info;
    int64_t ghosts_sum = 0, ghosts_max = 0, sends_sum = 0, read_max = 0;
    for (int q = 0; q < w->size; q++) {
        const rank_report *p = &w->reports[q];
        ghosts_sum += p->ghosts;
        ghosts_max = p->ghosts > ghosts_max ? p->ghosts : ghosts_max;
        sends_sum += p->sends;
        read_max = p->read_entries > read_max ? p->read_entries : read_max;
    }
    cli_json j;
    json_init(&j, stdout);
    json_object_begin(&j, NULL);
    json_string(&j, "file", o->path);
    json_string(&j, "method", hisp_solver_method_name(o->method));
    json_string(&j, "precond", hisp_precond_name(o->pc));
    json_string(&j, "type", hisp_type_name(w->r.type));
    json_string(&j, "backend", hisp_backend_name(w->backend));
    json_bool(&j, "mpi", true);
    json_int(&j, "ranks", w->size);
    json_string(&j, "partition", hisp_partition_name(o->kind));
    json_int(&j, "rows", w->r.n);
    json_int(&j, "nnz", w->head.nnz);
    json_int(&j, "iterations", info->iterations);
    json_bool(&j, "converged", info->converged != 0);
    json_string(&j, "reason", hisp_stop_reason_name(info->reason));
    json_double(&j, "relative_residual", w->rel);
    json_double(&j, "method_relative_residual",
                info->rhs_norm > 0 ? info->method_residual_norm / info->rhs_norm : 0);
    json_double(&j, "solver_relative_residual", info->relative_residual);
    json_int(&j, "restarts", info->restarts);
    json_double(&j, "rtol", o->rtol);
    json_double(&j, "atol", o->atol);
    json_double(&j, "prepare_ms", w->prepare_ms);
    json_double(&j, "ms", w->ms);
    json_double(&j, "ms_per_iteration", w->per);
    /* the solve's MPI_Allreduce calls (the same on every rank) and the
     * values they carried: several reductions travel together */
    json_int(&j, "allreduce_calls", w->r.reduces);
    json_int(&j, "allreduce_values", w->r.values);
    /* the halo: entries of x received per product (sum, largest rank),
     * sent, and read from a device for sending (largest rank) */
    json_int(&j, "ghost_entries_sum", ghosts_sum);
    json_int(&j, "ghost_entries_max", ghosts_max);
    json_int(&j, "halo_sent_entries_sum", sends_sum);
    json_int(&j, "halo_read_entries_max", read_max);
    json_array_begin(&j, "rank_info");
    for (int q = 0; q < w->size; q++) {
        const rank_report *p = &w->reports[q];
        json_object_begin(&j, NULL);
        json_int(&j, "rank", q);
        json_string(&j, "host", p->host);
        json_int(&j, "node_rank", p->node_rank);
        json_object_begin(&j, "device");
        json_int(&j, "index", p->device_index);
        json_string(&j, "name", p->device);
        json_object_end(&j);
        json_int(&j, "rows", p->rows);
        json_int(&j, "nnz", p->nnz);
        json_int(&j, "ghost_entries", p->ghosts);
        json_int(&j, "sent_entries", p->sends);
        json_int(&j, "read_entries", p->read_entries);
        json_int(&j, "peers_in", p->peers_in);
        json_int(&j, "peers_out", p->peers_out);
        json_object_end(&j);
    }
    json_array_end(&j);
    json_object_end(&j);
    json_finish(&j);
}

/* Rank 0's text report. */
static void solve_report_text(const solve_run *w)
{
    const solve_opts *o = w->o;
    printf("matrix      %s: %lld x %lld, %lld nonzeros, %s\n", o->path, (long long)w->r.n,
           (long long)w->r.n, (long long)w->head.nnz, hisp_type_name(w->r.type));
    printf("solver      %s, preconditioner %s, rtol %g, atol %g, over %d MPI rank(s) (%s, "
           "%s)\n",
           hisp_solver_method_name(o->method), hisp_precond_name(o->pc), o->rtol, o->atol, w->size,
           hisp_partition_name(o->kind), hisp_backend_name(w->backend));
    for (int q = 0; q < w->size; q++) {
        const rank_report *p = &w->reports[q];
        printf("rank %-6d %s, device %lld (%s), %lld rows, %lld nonzeros, %lld ghosts from %lld "
               "rank(s), %lld entries sent to %lld\n",
               q, p->host, (long long)p->device_index, p->device, (long long)p->rows,
               (long long)p->nnz, (long long)p->ghosts, (long long)p->peers_in, (long long)p->sends,
               (long long)p->peers_out);
    }
    printf("result      %s after %lld iterations, true relative residual %.3e\n",
           hisp_stop_reason_name(w->info.reason), (long long)w->info.iterations, w->rel);
    printf("time        %.3f ms (%.4f ms per iteration, slowest rank; before: upload and "
           "kernels %.3f ms)\n",
           w->ms, w->per, w->prepare_ms);
}

static void solve_run_free(solve_run *w)
{
    hisp_solver_destroy(&w->solver);
    hisp_vector_destroy(&w->b);
    hisp_vector_destroy(&w->x);
    hisp_vector_destroy(&w->ax);
    halo_free(&w->r.h);
    hisp_matrix_destroy(&w->A);
    hisp_context_destroy(&w->ctx);
    free(w->own);
    free(w->lptr);
    free(w->lidx);
    free(w->lval);
    free(w->bh);
    free(w->axh);
    free(w->r.diag);
    free(w->reports);
}

int solve_mpi(int argc, char **argv)
{
    solve_opts o;
    int rc = parse(argc, argv, &o);
    if (rc) return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
    MPI_Init(NULL, NULL);
    solve_run w = {.o = &o, .rank = 0, .size = 1};
    MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &w.size);
    cli_progress_enable(o.json || w.rank != 0);
    w.own = calloc((size_t)w.size + 1, sizeof *w.own);
    if (w.rank == 0) w.reports = calloc((size_t)w.size, sizeof *w.reports);
    if ((rc = solve_open_device(&w))) goto out;

    /* ---- rank 0: read A, cut its rows, send every rank its block ---- */
    if (w.rank == 0) rc = solve_read_cut(&w);
    w.head.rc = rc;
    MPI_Bcast(&w.head, sizeof w.head, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (w.head.rc) {
        rc = (int)w.head.rc;
        goto out;
    }
    MPI_Bcast(w.own, w.size + 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    w.r.type = (hisp_type)w.head.type;
    w.r.n = w.head.n;
    size_t es = hisp_type_size(w.r.type);
    w.s0 = w.own[w.rank];
    w.r.lrows = w.own[w.rank + 1] - w.s0;
    if (w.rank == 0)
        solve_send_blocks(&w, es);
    else
        solve_recv_block(&w, es);

    /* ---- every rank: its rows, the operator, the solve ---- */
    if ((rc = solve_diagonal(&w, es))) goto out;
    if ((rc = solve_setup(&w))) goto out;
    if ((rc = solve_run_solver(&w))) goto out;
    MPI_Gather(&w.me, sizeof w.me, MPI_BYTE, w.reports, sizeof w.me, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (w.rank == 0 && o.json)
        solve_report_json(&w);
    else if (w.rank == 0)
        solve_report_text(&w);
    rc = w.info.converged ? CLI_OK : SOLVE_NOT_CONVERGED;
out:
    solve_run_free(&w);
    MPI_Finalize();
    return rc;
}
