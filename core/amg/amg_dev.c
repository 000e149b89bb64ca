/* One level of the smoothed-aggregation hierarchy on the device
 * (hispi_amg.h): the host's steps of amg_aggregate.c and amg_setup.c as
 * kernels (kernels/amg.cl) over the level's CSR arrays in device buffers,
 * row pointers by device scans (kernels/scan.cl), A P0 and R = P^T by the
 * library's SpGEMM and transpose on the device. Only scalars cross to the host: Gershgorin's bound
 * and the diagonal's check (a value per work-group), the strength graph's
 * and P0's sizes, one count per aggregation round. The aggregates are the
 * host's; in f64 the prolongators' bits too. */
#include "backend/backend.h"
#include "hispi_amg.h"
#include "ops/scan_dev.h"
#include "ops/spgemm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Test hook: the k-th device buffer of a device setup fails as
 * HISP_ERR_OUT_OF_DEVICE_MEMORY (0: none); device levels made. */
long hispi_amg_dev_fail_after;
long hispi_amg_dev_levels;
/* Test hooks: P by the library's product, never in one pass (0: in one
 * pass where the rows allow); levels whose P was made in one pass, levels
 * with a row too wide for it. */
int hispi_amg_product_p;
long hispi_amg_one_pass_p, hispi_amg_wide_p;
/* the work-group */
enum { GS = 256 };

enum {
    K_DIAG,
    K_SCOUNT,
    K_SFILL,
    K_MIS_INIT,
    K_SPREAD,
    K_MIS_UPDATE,
    K_FLAG_IN,
    K_JOIN1,
    K_JOIN2,
    K_P0_COUNT,
    K_P0_FILL,
    K_SMOOTH,
    K_START,
    K_SQUARE,
    K_COLLAPSE,
    K_EXPAND,
    K_AP_COUNT,
    K_AP_FILL,
    NK
};
static const char *const knames[NK] = {
    "amg_diag",    "amg_scount", "amg_sfill",    "amg_mis_init", "amg_spread",   "amg_mis_update",
    "amg_flag_in", "amg_join1",  "amg_join2",    "amg_p0_count", "amg_p0_fill",  "amg_smooth",
    "amg_start",   "amg_square", "amg_collapse", "amg_expand",   "amg_ap_count", "amg_ap_fill"};

/* The level's scratch buffers, freed together. */
enum {
    B_CNT,
    B_SPTR,
    B_SIDX,
    B_ST,
    B_NST,
    B_B1,
    B_B2,
    B_LEFT,
    B_PRIO,
    B_RNUM,
    B_SIZE,
    B_P0PTR,
    B_P0COL,
    B_P0VAL,
    B_NSQ,   /* nodes of several rows: A's values squared */
    B_NDIAG, /* the node graph's diagonal */
    B_AGG,   /* the rows' aggregates */
    B_ACT,   /* the aggregation's nodes of a round */
    NB
};

typedef struct {
    hisp_context ctx;
    hisp_type t;
    size_t es;
    void *k[NK];
    hispi_scan scan;
    void *b[NB];
} dev_level;

/* Where SpGEMM runs on the device: GPUs, not CPU devices. Measured on PoCL
 * (2 vCPUs), poisson3d 48^3 / 64^3: the kernels' setup 435 / 1070 ms, the
 * host's 250-300 / 720 ms. */
bool hispi_amg_dev_usable(hisp_context ctx)
{
    return hispi_spgemm_dev_usable(ctx) && HISPI_BE_HAS(ctx, buf_read) &&
           HISPI_BE_HAS(ctx, buf_write);
}

/* A device buffer (the test hook's failures included). */
static hisp_status dbuf(hisp_context ctx, size_t bytes, void **buf)
{
    if (hispi_amg_dev_fail_after > 0 && --hispi_amg_dev_fail_after == 0)
        return hispi_fail(ctx, HISP_ERR_OUT_OF_DEVICE_MEMORY,
                          "AMG setup: a device buffer of %zu bytes could not be had (test hook)",
                          bytes);
    return HISPI_BE(ctx, buf_alloc, bytes ? bytes : 1, buf);
}

static hisp_status dalloc(dev_level *L, int which, size_t bytes)
{
    return dbuf(L->ctx, bytes, &L->b[which]);
}

static hisp_status dzero(dev_level *L, int which, size_t bytes)
{
    HISPI_TRY(dalloc(L, which, bytes));
    return bytes ? HISPI_BE(L->ctx, buf_zero, L->b[which], 0, bytes) : HISP_SUCCESS;
}

static void drop(dev_level *L, int which)
{
    if (L->b[which]) HISPI_BE_VOID(L->ctx, buf_free, L->b[which]);
    L->b[which] = NULL;
}

static void level_free(dev_level *L)
{
    for (int i = 0; i < NB; i++)
        drop(L, i);
    for (int i = 0; i < NK; i++)
        if (L->k[i]) HISPI_BE_VOID(L->ctx, kern_free, L->k[i]);
    hispi_scan_free(L->ctx, &L->scan);
}

void hispi_amg_kopts(char *opts, size_t size, hisp_type t)
{
    bool dbl = t == HISP_F64;
    snprintf(opts, size, "-DVALUE_T=%s -DIS_DOUBLE=%d -DATOM64=0 -DGS=%d", dbl ? "double" : "float",
             (int)dbl, GS);
}

hisp_status hispi_amg_kernel(hisp_context ctx, hisp_type t, const char *name, void **k)
{
    char opts[128];
    hispi_amg_kopts(opts, sizeof opts, t);
    return HISPI_BE(ctx, kern_get, HISPI_PROG_AMG, opts, name, k);
}

hisp_status hispi_amg_launch(hisp_context ctx, void *k, const hispi_karg *a, int na, int64_t n)
{
    if (n <= 0) return HISP_SUCCESS;
    return HISPI_BE(ctx, kern_launch, k, a, na, (size_t)((n + GS - 1) / GS), GS);
}

static hisp_status level_kernels(dev_level *L)
{
    for (int i = 0; i < NK; i++)
        HISPI_TRY(hispi_amg_kernel(L->ctx, L->t, knames[i], &L->k[i]));
    return hispi_scan_get(L->ctx, true, &L->scan);
}

static hispi_karg kr(const dev_level *L, double v)
{
    return (hispi_karg){L->t == HISP_F64 ? HISPI_KARG_F64 : HISPI_KARG_F32, NULL, 0, v};
}

/* kernel k over n work-items (one per row) */
static hisp_status launch(dev_level *L, int k, const hispi_karg *a, int na, int64_t n)
{
    return hispi_amg_launch(L->ctx, L->k[k], a, na, n);
}

/* The device arrays of a level's operator. */
typedef struct {
    int64_t n, nnz;
    void *ptr, *col, *val;
} dcsr;

static dcsr view(hisp_matrix M)
{
    return (dcsr){M->host.nrows, M->host.nnz, M->ext.rowptr, M->ext.colind, M->ext.val};
}

/* Kernel amg_diag (k) over A's rows: d, l1 (want_l1; may be d) and *info
 * from the work-groups' values. */
static hisp_status diag_run(hisp_context ctx, hisp_type t, void *k, const dcsr *A, void *d,
                            void *l1, bool want_l1, hispi_diag_info *info)
{
    int64_t ng = (A->n + GS - 1) / GS;
    size_t es = hisp_type_size(t);
    void *gmax = NULL, *gbad = NULL, *gm = NULL;
    int64_t *gb = NULL;
    hisp_status s = dbuf(ctx, (size_t)ng * es, &gmax);
    if (!s) s = dbuf(ctx, (size_t)ng * 16, &gbad);
    hispi_karg a[] = {hispi_ki64(A->n),
                      hispi_kbuf(A->ptr),
                      hispi_kbuf(A->col),
                      hispi_kbuf(A->val),
                      hispi_kbuf(d),
                      hispi_kbuf(l1 ? l1 : d),
                      {HISPI_KARG_I32, NULL, want_l1, 0},
                      hispi_kbuf(gmax),
                      hispi_kbuf(gbad)};
    if (!s) s = hispi_amg_launch(ctx, k, a, 9, A->n);
    if (!s) s = hispi_alloc(ctx, (size_t)ng + 1, es, &gm);
    if (!s) s = hispi_alloc(ctx, 2 * (size_t)ng + 1, 8, (void **)&gb);
    if (!s) s = HISPI_BE(ctx, buf_read, gmax, 0, gm, (size_t)ng * es);
    if (!s) s = HISPI_BE(ctx, buf_read, gbad, 0, gb, (size_t)ng * 16);
    *info = (hispi_diag_info){0, A->n, A->n};
    for (int64_t g = 0; !s && g < ng; g++) {
        double r = hispi_load_real(t, gm, g);
        if (r > info->rho) info->rho = r;
        if (gb[2 * g] < info->nonpos) info->nonpos = gb[2 * g];
        if (gb[2 * g + 1] < info->zero) info->zero = gb[2 * g + 1];
    }
    free(gm), free(gb);
    if (gmax) HISPI_BE_VOID(ctx, buf_free, gmax);
    if (gbad) HISPI_BE_VOID(ctx, buf_free, gbad);
    return s;
}

/* d (a vector of A's rows) and rho; a diagonal that is not positive is the
 * error, naming its row. */
static hisp_status diagonal(dev_level *L, const dcsr *A, void *d, void *l1, double *rho)
{
    hisp_context ctx = L->ctx;
    hispi_diag_info in;
    HISPI_TRY(diag_run(ctx, L->t, L->k[K_DIAG], A, d, l1, l1 != NULL, &in));
    *rho = in.rho;
    if (in.nonpos == A->n) return HISP_SUCCESS;
    double v = 0;
    HISPI_TRY(HISPI_BE(ctx, buf_read, d, (size_t)in.nonpos * L->es, &v, L->es));
    return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                      "AMG setup: the diagonal of row %lld is %g: smoothed aggregation "
                      "needs a positive diagonal",
                      (long long)in.nonpos, hispi_load_real(L->t, &v, 0));
}

/* The strength graph into B_SPTR, B_SIDX. */
static hisp_status strength(dev_level *L, const dcsr *A, void *d, double theta)
{
    int64_t n = A->n, ns = 0;
    double t2 = theta * theta;
    HISPI_TRY(dzero(L, B_CNT, (size_t)n * 4));
    hispi_karg a[] = {hispi_ki64(n), hispi_kbuf(A->ptr), hispi_kbuf(A->col),     hispi_kbuf(A->val),
                      hispi_kbuf(d), kr(L, t2),          hispi_kbuf(L->b[B_CNT])};
    HISPI_TRY(launch(L, K_SCOUNT, a, 7, n));
    HISPI_TRY(dalloc(L, B_SPTR, ((size_t)n + 1) * 8));
    HISPI_TRY(hispi_scan_run(L->ctx, &L->scan, n, L->b[B_CNT], L->b[B_SPTR], &ns));
    HISPI_TRY(dalloc(L, B_SIDX, (size_t)ns * 4));
    HISPI_TRY(HISPI_BE(L->ctx, buf_zero, L->b[B_CNT], 0, (size_t)n * 4));
    hispi_karg f[] = {hispi_ki64(n),
                      hispi_kbuf(A->ptr),
                      hispi_kbuf(A->col),
                      hispi_kbuf(A->val),
                      hispi_kbuf(d),
                      kr(L, t2),
                      hispi_kbuf(L->b[B_SPTR]),
                      hispi_kbuf(L->b[B_CNT]),
                      hispi_kbuf(L->b[B_SIDX])};
    return launch(L, K_SFILL, f, 9, n);
}

/* Nodes of o->block rows: the strength graph of the nodes (B_SPTR, B_SIDX)
 * from N = E^T (A.^2) E (hispi_amg_nodes, by the library's products on the
 * device) with theta squared. */
static hisp_status node_strength(dev_level *L, const dcsr *A, const hispi_amg_opts *o)
{
    hisp_context ctx = L->ctx;
    int64_t n = A->n, nn = n / o->block;
    size_t es = L->es, eb[6] = {((size_t)n + 1) * 8,  (size_t)n * 4, (size_t)n * es,
                                ((size_t)nn + 1) * 8, (size_t)n * 4, (size_t)n * es};
    void *e[6] = {NULL}; /* E's and E^T's pointers, columns and values */
    hisp_matrix A2 = NULL, E = NULL, ET = NULL, AE = NULL, N = NULL, Nd = NULL;
    hisp_status s = dalloc(L, B_NSQ, (size_t)A->nnz * es);
    hispi_karg q[] = {hispi_ki64(A->nnz), hispi_kbuf(A->val), hispi_kbuf(L->b[B_NSQ])};
    if (!s) s = launch(L, K_SQUARE, q, 3, A->nnz);
    for (int i = 0; !s && i < 6; i++)
        s = dbuf(ctx, eb[i], &e[i]);
    hispi_karg c[] = {hispi_ki64(n),    {HISPI_KARG_I32, NULL, o->block, 0},
                      hispi_kbuf(e[0]), hispi_kbuf(e[1]),
                      hispi_kbuf(e[2]), hispi_kbuf(e[3]),
                      hispi_kbuf(e[4]), hispi_kbuf(e[5])};
    if (!s) s = launch(L, K_COLLAPSE, c, 8, n + 1);
    if (!s) s = hispi_matrix_wrap_owned(ctx, L->t, n, nn, n, e[0], e[1], e[2], &E);
    if (!s) e[0] = e[1] = e[2] = NULL;
    if (!s) s = hispi_matrix_wrap_owned(ctx, L->t, nn, n, n, e[3], e[4], e[5], &ET);
    if (!s) e[3] = e[4] = e[5] = NULL;
    if (!s) s = hispi_matrix_wrap_view(ctx, L->t, n, n, A->nnz, A->ptr, A->col, L->b[B_NSQ], &A2);
    if (!s) s = hisp_matrix_multiply(HISP_OP_N, A2, HISP_OP_N, E, &AE);
    if (!s) s = hisp_matrix_multiply(HISP_OP_N, ET, HISP_OP_N, AE, &N);
    if (!s) s = hispi_amg_dev_copy(N, &Nd);
    double rho = 0;
    dcsr nv = Nd ? view(Nd) : (dcsr){0};
    if (!s) s = dalloc(L, B_NDIAG, (size_t)nn * es);
    if (!s) s = diagonal(L, &nv, L->b[B_NDIAG], NULL, &rho);
    if (!s) s = strength(L, &nv, L->b[B_NDIAG], o->theta * o->theta);
    for (int i = 0; i < 6; i++)
        if (e[i]) HISPI_BE_VOID(ctx, buf_free, e[i]);
    if (Nd != N) hisp_matrix_destroy(&Nd);
    hisp_matrix_destroy(&N), hisp_matrix_destroy(&AE), hisp_matrix_destroy(&A2);
    hisp_matrix_destroy(&E), hisp_matrix_destroy(&ET);
    drop(L, B_NSQ), drop(L, B_NDIAG);
    return s;
}

/* Node aggregates (B_B2) into rows' (B_B2 then, n of them; *nagg times b);
 * B_CNT made n long for the tentative prolongator. */
static hisp_status expand(dev_level *L, int64_t n, int b, int64_t *nagg)
{
    HISPI_TRY(dalloc(L, B_AGG, (size_t)n * 4));
    hispi_karg a[] = {hispi_ki64(n),
                      {HISPI_KARG_I32, NULL, b, 0},
                      hispi_kbuf(L->b[B_B2]),
                      hispi_kbuf(L->b[B_AGG])};
    HISPI_TRY(launch(L, K_EXPAND, a, 4, n));
    drop(L, B_B2), drop(L, B_CNT);
    L->b[B_B2] = L->b[B_AGG], L->b[B_AGG] = NULL;
    *nagg *= b;
    return dalloc(L, B_CNT, (size_t)n * 4);
}

/* The MIS(2) rounds (final states in B_ST), then the aggregates: agg in
 * B_B2, *nagg of them (the roots' numbers in B_RNUM). */
extern long hispi_amg_aggregations;

static hisp_status aggregate(dev_level *L, int64_t n, uint64_t seed, int64_t *nagg)
{
    hispi_amg_aggregations++;
    hisp_context ctx = L->ctx;
    void **b = L->b;
    int64_t sd = (int64_t)seed;
    HISPI_TRY(dalloc(L, B_ST, (size_t)n));
    HISPI_TRY(dalloc(L, B_NST, (size_t)n));
    HISPI_TRY(dalloc(L, B_B1, (size_t)n * 4));
    HISPI_TRY(dalloc(L, B_B2, (size_t)n * 4));
    HISPI_TRY(dalloc(L, B_LEFT, 4));
    HISPI_TRY(dalloc(L, B_PRIO, (size_t)n * 8));
    HISPI_TRY(dalloc(L, B_ACT, (size_t)n * 4));
    hispi_karg in[] = {hispi_ki64(n),       hispi_kbuf(b[B_SPTR]), hispi_ki64(sd),
                       hispi_kbuf(b[B_ST]), hispi_kbuf(b[B_PRIO]), hispi_kbuf(b[B_ACT])};
    HISPI_TRY(launch(L, K_MIS_INIT, in, 6, n));
    int rounds = 0;
    for (uint32_t left = 1; left > 0; rounds++) {
        hispi_karg rd = {HISPI_KARG_I32, NULL, rounds, 0};
        hispi_karg s1[] = {hispi_ki64(n),         hispi_kbuf(b[B_SPTR]),
                           hispi_kbuf(b[B_SIDX]), hispi_kbuf(b[B_ST]),
                           hispi_kbuf(b[B_PRIO]), {HISPI_KARG_I32, NULL, 1, 0},
                           hispi_kbuf(b[B_B1]),   hispi_kbuf(b[B_B1]),
                           hispi_kbuf(b[B_ACT]),  rd};
        HISPI_TRY(launch(L, K_SPREAD, s1, 10, n));
        hispi_karg s2[] = {hispi_ki64(n),         hispi_kbuf(b[B_SPTR]),
                           hispi_kbuf(b[B_SIDX]), hispi_kbuf(b[B_ST]),
                           hispi_kbuf(b[B_PRIO]), {HISPI_KARG_I32, NULL, 0, 0},
                           hispi_kbuf(b[B_B1]),   hispi_kbuf(b[B_B2]),
                           hispi_kbuf(b[B_ACT]),  rd};
        HISPI_TRY(launch(L, K_SPREAD, s2, 10, n));
        HISPI_TRY(HISPI_BE(ctx, buf_zero, b[B_LEFT], 0, 4));
        hispi_karg u[] = {hispi_ki64(n),         hispi_kbuf(b[B_SPTR]), hispi_kbuf(b[B_SIDX]),
                          hispi_kbuf(b[B_ST]),   hispi_kbuf(b[B_B2]),   hispi_kbuf(b[B_NST]),
                          hispi_kbuf(b[B_LEFT]), hispi_kbuf(b[B_ACT]),  rd};
        HISPI_TRY(launch(L, K_MIS_UPDATE, u, 9, n));
        HISPI_TRY(HISPI_BE(ctx, buf_read, b[B_LEFT], 0, &left, 4));
        void *tmp = b[B_ST];
        b[B_ST] = b[B_NST], b[B_NST] = tmp;
    }
    hispi_debug("amg setup: %lld rows: %d rounds of the independent set", (long long)n, rounds);
    drop(L, B_NST), drop(L, B_ACT);
    /* roots numbered in order by a scan of their flags */
    hispi_karg fl[] = {hispi_ki64(n), hispi_kbuf(b[B_ST]), hispi_kbuf(b[B_CNT])};
    HISPI_TRY(launch(L, K_FLAG_IN, fl, 3, n));
    HISPI_TRY(dalloc(L, B_RNUM, ((size_t)n + 1) * 8));
    HISPI_TRY(hispi_scan_run(ctx, &L->scan, n, b[B_CNT], b[B_RNUM], nagg));
    if (*nagg == 0 || *nagg >= n) return HISP_SUCCESS; /* no coarser level */
    hispi_karg j1[] = {hispi_ki64(n),       hispi_kbuf(b[B_SPTR]), hispi_kbuf(b[B_SIDX]),
                       hispi_kbuf(b[B_ST]), hispi_kbuf(b[B_RNUM]), hispi_kbuf(b[B_B1])};
    HISPI_TRY(launch(L, K_JOIN1, j1, 6, n));
    HISPI_TRY(HISPI_BE(ctx, buf_zero, b[B_LEFT], 0, 4));
    hispi_karg j2[] = {hispi_ki64(n),         hispi_kbuf(b[B_SPTR]), hispi_kbuf(b[B_SIDX]),
                       hispi_kbuf(b[B_PRIO]), hispi_kbuf(b[B_B1]),   hispi_kbuf(b[B_B2]),
                       hispi_kbuf(b[B_LEFT])};
    HISPI_TRY(launch(L, K_JOIN2, j2, 7, n));
    uint32_t left = 0;
    HISPI_TRY(HISPI_BE(ctx, buf_read, b[B_LEFT], 0, &left, 4));
    if (left)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                          "AMG setup on the device: %u nodes left in no aggregate (the "
                          "independent set is not maximal)",
                          left);
    return HISP_SUCCESS;
}

/* A level's nodes' weights as kernel arguments (w NULL: 1 each). */
static hispi_karg kw(const dev_level *L, const void *w)
{
    return hispi_kbuf(w ? w : L->b[B_B2]);
}
static hispi_karg khas(const void *w)
{
    return (hispi_karg){HISPI_KARG_I32, NULL, w != NULL, 0};
}

/* P0 (n x nagg) from the aggregates in B_B2 and the nodes' weights w, as a
 * matrix that owns its buffers; the aggregates' weights stay in B_SIZE. */
static hisp_status tentative(dev_level *L, int64_t n, int64_t nagg, const void *w, hisp_matrix *P0)
{
    void **b = L->b;
    int64_t nnz = 0;
    HISPI_TRY(dzero(L, B_SIZE, (size_t)nagg * 4));
    hispi_karg c[] = {hispi_ki64(n), hispi_kbuf(b[B_B2]),   kw(L, w),
                      khas(w),       hispi_kbuf(b[B_SIZE]), hispi_kbuf(b[B_CNT])};
    HISPI_TRY(launch(L, K_P0_COUNT, c, 6, n));
    HISPI_TRY(dalloc(L, B_P0PTR, ((size_t)n + 1) * 8));
    HISPI_TRY(hispi_scan_run(L->ctx, &L->scan, n, b[B_CNT], b[B_P0PTR], &nnz));
    HISPI_TRY(dalloc(L, B_P0COL, (size_t)nnz * 4));
    HISPI_TRY(dalloc(L, B_P0VAL, (size_t)nnz * L->es));
    hispi_karg f[] = {hispi_ki64(n),
                      hispi_kbuf(b[B_B2]),
                      kw(L, w),
                      khas(w),
                      hispi_kbuf(b[B_SIZE]),
                      hispi_kbuf(b[B_P0PTR]),
                      hispi_kbuf(b[B_P0COL]),
                      hispi_kbuf(b[B_P0VAL])};
    HISPI_TRY(launch(L, K_P0_FILL, f, 8, n));
    HISPI_TRY(hispi_matrix_wrap_owned(L->ctx, L->t, n, nagg, nnz, b[B_P0PTR], b[B_P0COL],
                                      b[B_P0VAL], P0));
    b[B_P0PTR] = b[B_P0COL] = b[B_P0VAL] = NULL; /* P0's now */
    return HISP_SUCCESS;
}

/* P = (I - omega D^-1 A) P0 in one pass over A (amg_ap_count, _fill: P0
 * one entry per row) where no row of A meets more than the kernels' APC
 * aggregates (*made), else nothing (the library's product then); the
 * aggregates' weights into B_SIZE. Against A P0 by the product and
 * amg_smooth: poisson3d 256^3's second level 18.3 -> 3.8 ms, its finest
 * 9.4 -> 4.8 ms (H200). */
static hisp_status fused_prolongator(dev_level *L, const dcsr *a, int64_t nagg, const void *w,
                                     const void *d, double omega, hisp_matrix *P, bool *made)
{
    void **b = L->b;
    int64_t n = a->n, nnz = 0;
    uint32_t bad = 0;
    *made = false;
    if (hispi_amg_product_p) return HISP_SUCCESS;
    HISPI_TRY(dzero(L, B_SIZE, (size_t)nagg * 4));
    hispi_karg c[] = {hispi_ki64(n), hispi_kbuf(b[B_B2]),   kw(L, w),
                      khas(w),       hispi_kbuf(b[B_SIZE]), hispi_kbuf(b[B_CNT])};
    HISPI_TRY(launch(L, K_P0_COUNT, c, 6, n));
    drop(L, B_LEFT);
    HISPI_TRY(dzero(L, B_LEFT, 4));
    hispi_karg ac[] = {hispi_ki64(n),       hispi_kbuf(a->ptr),   hispi_kbuf(a->col),
                       hispi_kbuf(b[B_B2]), hispi_kbuf(b[B_CNT]), hispi_kbuf(b[B_LEFT])};
    HISPI_TRY(launch(L, K_AP_COUNT, ac, 6, n));
    HISPI_TRY(HISPI_BE(L->ctx, buf_read, b[B_LEFT], 0, &bad, 4));
    if (bad) { /* the product's way: the weights made again there */
        hispi_amg_wide_p++;
        drop(L, B_SIZE);
        return HISP_SUCCESS;
    }
    HISPI_TRY(dalloc(L, B_P0PTR, ((size_t)n + 1) * 8));
    HISPI_TRY(hispi_scan_run(L->ctx, &L->scan, n, b[B_CNT], b[B_P0PTR], &nnz));
    HISPI_TRY(dalloc(L, B_P0COL, (size_t)nnz * 4));
    HISPI_TRY(dalloc(L, B_P0VAL, (size_t)nnz * L->es));
    hispi_karg f[] = {hispi_ki64(n),
                      hispi_kbuf(a->ptr),
                      hispi_kbuf(a->col),
                      hispi_kbuf(a->val),
                      hispi_kbuf(b[B_B2]),
                      kw(L, w),
                      khas(w),
                      hispi_kbuf(b[B_SIZE]),
                      hispi_kbuf(d),
                      kr(L, omega),
                      hispi_kbuf(b[B_P0PTR]),
                      hispi_kbuf(b[B_P0COL]),
                      hispi_kbuf(b[B_P0VAL])};
    HISPI_TRY(launch(L, K_AP_FILL, f, 13, n));
    HISPI_TRY(
        hispi_matrix_wrap_owned(L->ctx, L->t, n, nagg, nnz, b[B_P0PTR], b[B_P0COL], b[B_P0VAL], P));
    b[B_P0PTR] = b[B_P0COL] = b[B_P0VAL] = NULL; /* P's now */
    *made = true;
    hispi_amg_one_pass_p++;
    return HISP_SUCCESS;
}

/* P by the library's product A P0 and amg_smooth over it. */
static hisp_status product_prolongator(dev_level *L, hisp_matrix A, int64_t nagg, const void *w,
                                       const void *d, double omega, hisp_matrix *P)
{
    hisp_matrix P0 = NULL, AP0 = NULL, Pd = NULL;
    HISPI_TRY(tentative(L, A->host.nrows, nagg, w, &P0));
    hisp_status s = hisp_matrix_multiply(HISP_OP_N, A, HISP_OP_N, P0, &AP0);
    hisp_matrix_destroy(&P0);
    if (!s) s = hispi_amg_dev_copy(AP0, &Pd); /* where the product left it on the device */
    if (Pd != AP0) hisp_matrix_destroy(&AP0);
    if (!s) {
        dcsr p = view(Pd);
        hispi_karg m[] = {hispi_ki64(p.n),         hispi_kbuf(p.ptr), hispi_kbuf(p.col),
                          hispi_kbuf(p.val),       hispi_kbuf(d),     kr(L, omega),
                          hispi_kbuf(L->b[B_B2]),  kw(L, w),          khas(w),
                          hispi_kbuf(L->b[B_SIZE])};
        s = launch(L, K_SMOOTH, m, 10, p.n);
    }
    if (s) {
        hisp_matrix_destroy(&Pd);
        return s;
    }
    *P = Pd;
    return HISP_SUCCESS;
}

/* D^-1 A's largest eigenvalue (hispi_amg_lmax), S's products with vectors,
 * from the start vector made on the device. */
/* v = the start values of seed (hispi_amg_start_value) by kernel amg_start (k). */
static hisp_status start(hisp_vector v, uint64_t seed, void *k)
{
    hisp_status s = HISP_SUCCESS;
    void *b = hispi_amg_vbuf(v, true, &s);
    hispi_karg a[] = {hispi_ki64(v->n), hispi_ki64((int64_t)(seed ^ HISPI_AMG_START_SEED)),
                      hispi_kbuf(b)};
    return s ? s : hispi_amg_launch(v->ctx, k, a, 3, v->n);
}

static hisp_status spectrum(dev_level *L, hisp_matrix S, const hispi_amg_opts *o,
                            hispi_amg_level *out)
{
    hisp_vector r0 = NULL;
    hisp_status s = hisp_vector_create(L->ctx, L->t, S->host.nrows, &r0);
    if (!s) s = start(r0, o->seed, L->k[K_START]);
    if (!s) s = hispi_amg_lmax(S, out->diag, r0, out->rho, &out->lmax, &out->upper);
    hisp_vector_destroy(&r0);
    return s;
}

static hisp_status level(dev_level *L, hisp_matrix S, hisp_matrix A, const void *w,
                         const hispi_amg_opts *o, hispi_amg_level *out)
{
    hisp_context ctx = L->ctx;
    dcsr a = view(A);
    void *d = NULL;
    hisp_matrix P = NULL;
    bool kept = L->b[B_B2] != NULL; /* the aggregates */
    int64_t nagg = kept ? out->nagg : 0;
    double t0 = 0;
    hispi_amg_mark(ctx, a.n, "", &t0);
    HISPI_TRY(level_kernels(L));
    hispi_amg_mark(ctx, a.n, "kernels", &t0);
    HISPI_TRY(hisp_vector_create(ctx, L->t, a.n, &out->diag));
    HISPI_TRY(hispi_vector_device(out->diag, false, &d));
    void *l1 = NULL;
    if (o->smoother == HISPI_AMG_L1_JACOBI) {
        HISPI_TRY(hisp_vector_create(ctx, L->t, a.n, &out->l1));
        HISPI_TRY(hispi_vector_device(out->l1, false, &l1));
    }
    HISPI_TRY(diagonal(L, &a, d, l1, &out->rho));
    hispi_vector_device_written(out->diag);
    if (l1) hispi_vector_device_written(out->l1);
    hispi_amg_mark(ctx, a.n, "diagonal", &t0);
    HISPI_TRY(spectrum(L, S, o, out));
    hispi_amg_mark(ctx, a.n, "lanczos", &t0);
    int b = o->block;
    if (kept) {
        HISPI_TRY(dalloc(L, B_CNT, (size_t)a.n * 4));
    } else {
        HISPI_TRY(b > 1 ? node_strength(L, &a, o) : strength(L, &a, d, o->theta));
        hispi_amg_mark(ctx, a.n, "strength", &t0);
        HISPI_TRY(aggregate(L, a.n / b, o->seed, &nagg));
        if (nagg == 0 || nagg >= a.n / b) return HISP_SUCCESS; /* no coarser level */
        if (b > 1) HISPI_TRY(expand(L, a.n, b, &nagg));
        hispi_amg_mark(ctx, a.n, "aggregate", &t0);
    }
    drop(L, B_SIDX), drop(L, B_SPTR), drop(L, B_ST), drop(L, B_B1), drop(L, B_RNUM);
    drop(L, B_PRIO);
    double omega = 4.0 / 3.0 / out->lmax;
    bool made = false;
    hisp_status s = fused_prolongator(L, &a, nagg, w, d, omega, &P, &made);
    if (!s && !made) s = product_prolongator(L, A, nagg, w, d, omega, &P);
    out->agg = L->b[B_B2], L->b[B_B2] = NULL; /* kept: hispi_amg.agg */
    hispi_amg_mark(ctx, a.n, made ? "P in one pass" : "P by the product", &t0);
    if (!s) s = hispi_spgemm_dev_transpose(P, false, &out->R);
    hispi_amg_mark(ctx, a.n, "R = P^T", &t0);
    if (s) {
        hisp_matrix_destroy(&P);
        return s;
    }
    out->P = P, out->nagg = nagg;
    out->w = L->b[B_SIZE], L->b[B_SIZE] = NULL; /* the next level's weights */
    hispi_amg_dev_levels++;
    return HISP_SUCCESS;
}

hisp_status hispi_amg_dev_level(hisp_matrix S, hisp_matrix A, const void *w,
                                const hispi_amg_opts *o, hispi_amg_level *out)
{
    hisp_type t = A->host.type;
    dev_level L = {.ctx = A->ctx, .t = t, .es = hisp_type_size(t)};
    L.b[B_B2] = out->agg; /* kept aggregates (freed with the level's buffers on failure) */
    int64_t nagg = out->nagg;
    memset(out, 0, sizeof *out);
    out->nagg = nagg;
    hisp_status s = level(&L, S, A, w, o, out);
    level_free(&L);
    if (s) {
        hisp_vector_destroy(&out->diag), hisp_vector_destroy(&out->l1);
        hisp_matrix_destroy(&out->P), hisp_matrix_destroy(&out->R);
        if (out->agg) HISPI_BE_VOID(L.ctx, buf_free, out->agg);
        memset(out, 0, sizeof *out);
    }
    return s;
}

/* *D: X where X is in hisp's device layout (hispi_spgemm_dev_resident),
 * else a new matrix owning device copies of X's host CSR arrays. */
hisp_status hispi_amg_dev_copy(hisp_matrix X, hisp_matrix *D)
{
    *D = X;
    if (hispi_spgemm_dev_resident(X, HISP_OP_N)) return HISP_SUCCESS;
    *D = NULL;
    hisp_context ctx = X->ctx;
    const int64_t *p;
    const int32_t *c;
    const void *v;
    HISPI_TRY(hisp_matrix_host_arrays(X, &p, NULL, &c, &v));
    int64_t n = X->host.nrows, nnz = X->host.nnz;
    size_t es = hisp_type_size(X->host.type);
    size_t sz[3] = {((size_t)n + 1) * 8, (size_t)nnz * 4, (size_t)nnz * es};
    const void *src[3] = {p, c, v};
    void *buf[3] = {NULL, NULL, NULL};
    hisp_status s = HISP_SUCCESS;
    for (int k = 0; !s && k < 3; k++) {
        s = dbuf(ctx, sz[k], &buf[k]);
        if (!s && sz[k]) s = HISPI_BE(ctx, buf_write, buf[k], 0, src[k], sz[k]);
    }
    if (!s)
        s = hispi_matrix_wrap_owned(ctx, X->host.type, n, X->host.ncols, nnz, buf[0], buf[1],
                                    buf[2], D);
    if (s)
        for (int k = 0; k < 3; k++)
            if (buf[k]) HISPI_BE_VOID(ctx, buf_free, buf[k]);
    return s;
}

/* A view of X's own device copy (CSR, its arrays exposed by the backend:
 * csr_arrays), its row pointers widened on the device where they are 32-bit
 * (*own: that buffer); false where the backend or the copy cannot. */
static bool device_view(hisp_matrix X, hisp_matrix *D, void **own, hisp_status *s)
{
    hisp_context ctx = X->ctx;
    hispi_csr_ext e;
    *s = HISP_SUCCESS;
    if (!HISPI_BE_HAS(ctx, csr_arrays) || X->host.format != HISP_FORMAT_CSR) return false;
    if (X->wrapped) { /* arrays hisp made (a product's, a narrowed copy's) serve as they are */
        hispi_csr_ext x = X->ext;
        if (!x.made || !x.ptr64 || x.idx64 || x.base) return false;
        *s = hispi_matrix_wrap_view(ctx, X->host.type, X->host.nrows, X->host.ncols, X->host.nnz,
                                    x.rowptr, x.colind, x.val, D);
        return true;
    }
    if ((*s = hispi_csr_device(X)) == HISP_ERR_UNSUPPORTED) { /* no such device copy: upload */
        hispi_clear_error(ctx);
        *s = HISP_SUCCESS;
        return false;
    }
    if (*s) return true;
    if (HISPI_BE(ctx, csr_arrays, X->dev, &e)) { /* not exposed: the upload instead */
        hispi_clear_error(ctx);
        return false;
    }
    if (e.idx64 || e.base) return false;
    int64_t n = X->host.nrows;
    void *ptr = e.rowptr, *k = NULL;
    if (!e.ptr64) {
        *s = dbuf(ctx, ((size_t)n + 1) * 8, own);
        if (!*s) *s = hispi_amg_kernel(ctx, X->host.type, "amg_ptr64", &k);
        hispi_karg a[] = {hispi_ki64(n + 1), hispi_kbuf(e.rowptr), hispi_kbuf(*own)};
        if (!*s) *s = hispi_amg_launch(ctx, k, a, 3, n + 1);
        if (k) HISPI_BE_VOID(ctx, kern_free, k);
        ptr = *own;
    }
    if (!*s)
        *s = hispi_matrix_wrap_view(ctx, X->host.type, n, X->host.ncols, X->host.nnz, ptr, e.colind,
                                    e.val, D);
    if (*s && *own) HISPI_BE_VOID(ctx, buf_free, *own), *own = NULL;
    return true;
}

hisp_status hispi_amg_dev_operand(hisp_matrix X, hisp_matrix *D, void **own)
{
    *own = NULL;
    hisp_status s;
    if (device_view(X, D, own, &s)) return s;
    return hispi_amg_dev_copy(X, D);
}

hisp_status hispi_amg_dev_diagonal(hisp_matrix A, bool l1, hisp_vector *d, hispi_diag_info *info)
{
    hisp_context ctx = A->ctx;
    hisp_type t = A->host.type;
    hisp_matrix D = NULL;
    void *own = NULL, *k = NULL;
    hisp_status s = HISP_SUCCESS;
    if (!hispi_amg_dev_usable(ctx) || (t != HISP_F32 && t != HISP_F64) ||
        A->host.nrows != A->host.ncols || !device_view(A, &D, &own, &s))
        return HISP_SUCCESS;
    bool made = !s && !*d;
    if (made) s = hisp_vector_create(ctx, t, A->host.nrows, d);
    void *db = s ? NULL : hispi_amg_vbuf(*d, true, &s);
    if (!s) s = hispi_amg_kernel(ctx, t, "amg_diag", &k);
    dcsr a = s ? (dcsr){0} : view(D);
    if (!s) s = diag_run(ctx, t, k, &a, db, db, l1, info);
    if (k) HISPI_BE_VOID(ctx, kern_free, k);
    hisp_matrix_destroy(&D);
    if (own) HISPI_BE_VOID(ctx, buf_free, own);
    if (s && made) hisp_vector_destroy(d);
    return s;
}

hisp_status hispi_amg_dev_start(hisp_vector v, uint64_t seed, bool *done)
{
    *done = false;
    if (!hispi_amg_dev_usable(v->ctx) || (v->type != HISP_F32 && v->type != HISP_F64))
        return HISP_SUCCESS;
    void *k = NULL;
    HISPI_TRY(hispi_amg_kernel(v->ctx, v->type, "amg_start", &k));
    hisp_status s = start(v, seed, k);
    HISPI_BE_VOID(v->ctx, kern_free, k);
    *done = !s;
    return s;
}
