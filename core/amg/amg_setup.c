/* The smoothed-aggregation hierarchy (hispi_amg.h): per level the strength
 * graph and aggregates (amg_aggregate.c), the tentative prolongator P0,
 * P = (I - omega D^-1 A) P0 over the pattern of A*P0 (a product of the
 * library), and the coarse operator P^T A P (hisp_matrix_ptap) on the
 * host; where the products run on the device, the same steps there
 * (amg_dev.c) and P^T A P as R (A P) with R = P^T made there. */
#include "hispi_amg.h"
#include "ops/spgemm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void hispi_amg_defaults(hispi_amg_opts *o)
{
    o->theta = 0.01;
    o->smoother = HISPI_AMG_CHEBYSHEV;
    o->sweeps = 3;
    o->max_coarse = 300;
    o->max_levels = 10;
    o->seed = 1;
    o->block = 1;
    o->precision = HISPI_AMG_AUTO;
    o->keep = false;
}

hisp_scalar hispi_amg_scalar(hisp_type t, hispi_amg_num *n, double v)
{
    if (t == HISP_F32)
        n->f = (float)v;
    else
        n->d = v;
    return hisp_scalar_host(n);
}

double hispi_amg_value(hisp_type t, const hispi_amg_num *n)
{
    return t == HISP_F32 ? n->f : n->d;
}

void hispi_amg_mark(hisp_context ctx, int64_t n, const char *step, double *t0)
{
    if (!hispi_debug_on()) return;
    if (HISPI_BE_HAS(ctx, synchronize)) (void)HISPI_BE_SYNC(ctx);
    double t = hispi_now_ms();
    if (*t0 > 0) hispi_debug("amg setup: %lld rows: %s %.2f ms", (long long)n, step, t - *t0);
    *t0 = t;
}

void hispi_amg_options(hisp_context ctx, hispi_amg_opts *o)
{
    hispi_amg_defaults(o);
    o->theta = ctx->opt.amg_theta;
    o->smoother = ctx->opt.amg_smoother;
    o->sweeps = ctx->opt.amg_sweeps;
    o->block = ctx->opt.amg_block;
    o->precision = ctx->opt.amg_precision;
}

static void free_weights(const hispi_amg *h, void *w);

void hispi_amg_free(hispi_amg *h)
{
    for (int l = 0; l < h->nlevels; l++) {
        free_weights(h, h->agg[l]);
        if (l > 0) hisp_matrix_destroy(&h->A[l]);
        hisp_matrix_destroy(&h->P[l]), hisp_matrix_destroy(&h->R[l]);
        hisp_vector_destroy(&h->diag[l]), hisp_vector_destroy(&h->l1[l]);
    }
    for (int l = 0; l < HISPI_AMG_MAX_LEVELS; l++) {
        hisp_matrix_destroy(&h->AP[l]);
        hisp_spgemm_plan_destroy(&h->plan[0][l]), hisp_spgemm_plan_destroy(&h->plan[1][l]);
    }
    free_weights(h, h->pat_ptr), free_weights(h, h->pat_col);
    memset(h, 0, sizeof *h);
}

double hispi_amg_operator_complexity(const hispi_amg *h)
{
    double s = 0;
    for (int l = 0; l < h->nlevels; l++)
        s += (double)h->nnz[l];
    return h->nlevels && h->nnz[0] ? s / (double)h->nnz[0] : 0;
}

/* A's diagonal into d (positive, else the error names the row), the row
 * sums of |A| into l1 (NULL: not wanted) and Gershgorin's bound of
 * rho(D^-1 A) into *rho. */
static hisp_status diagonal(hisp_context ctx, int64_t n, const int64_t *p, const int32_t *c,
                            const void *v, hisp_type t, double *d, double *l1, double *rho)
{
    *rho = 0;
    for (int64_t i = 0; i < n; i++) {
        double di = 0, off = 0;
        for (int64_t k = p[i]; k < p[i + 1]; k++) {
            double a = hispi_load_real(t, v, k);
            if (c[k] == i)
                di += a;
            else
                off += fabs(a);
        }
        if (!(di > 0))
            return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                              "AMG setup: the diagonal of row %lld is %g: smoothed aggregation "
                              "needs a positive diagonal",
                              (long long)i, di);
        d[i] = di;
        if (l1) l1[i] = di + off;
        if (1 + off / di > *rho) *rho = 1 + off / di;
    }
    return HISP_SUCCESS;
}

/* W[a] = the sum of w over aggregate a (w NULL: 1 each); *W owned by the
 * caller. */
static hisp_status weights(hisp_context ctx, int64_t n, const int32_t *agg, int64_t nagg,
                           const uint32_t *w, uint32_t **W)
{
    HISPI_TRY(hispi_calloc(ctx, (size_t)nagg + 1, sizeof **W, (void **)W));
    for (int64_t i = 0; i < n; i++)
        if (agg[i] >= 0) (*W)[agg[i]] += w ? w[i] : 1;
    return HISP_SUCCESS;
}

/* P0's entry of row i (in aggregate a = agg[i] >= 0): sqrt(w_i / W_a),
 * as the device computes it (kernels/amg.cl's p0). */
static double p0(const uint32_t *w, const uint32_t *W, int64_t i, int32_t a)
{
    return sqrt((double)(w ? w[i] : 1) / (double)W[a]);
}

/* P0: row i holds p0 in column agg[i] (none for -1). */
static hisp_status tentative(hisp_context ctx, hisp_type t, int64_t n, const int32_t *agg,
                             int64_t nagg, const uint32_t *w, const uint32_t *W, hisp_matrix *P0)
{
    int64_t *ptr = NULL;
    int32_t *col = NULL;
    void *val = NULL;
    hisp_status s = hispi_alloc(ctx, (size_t)n + 1, sizeof *ptr, (void **)&ptr);
    if (!s) s = hispi_alloc(ctx, (size_t)n + 1, sizeof *col, (void **)&col);
    if (!s) s = hispi_alloc(ctx, (size_t)n + 1, hisp_type_size(t), &val);
    if (!s) {
        int64_t k = 0;
        for (int64_t i = 0; i < n; i++) {
            ptr[i] = k;
            if (agg[i] < 0) continue;
            col[k] = agg[i];
            hispi_store_real(t, val, k++, p0(w, W, i, agg[i]));
        }
        ptr[n] = k;
        s = hisp_matrix_create_csr(ctx, t, n, nagg, ptr, col, val, P0);
    }
    free(ptr), free(col), free(val);
    return s;
}

/* P = (I - omega D^-1 A) P0 over AP0's pattern (which holds P0's: every
 * diagonal of A is there). */
static hisp_status smoothed(hisp_context ctx, hisp_type t, int64_t n, const double *d, double omega,
                            const int32_t *agg, int64_t nagg, const uint32_t *w, const uint32_t *W,
                            hisp_matrix AP0, hisp_matrix *P)
{
    const int64_t *p;
    const int32_t *c;
    const void *v;
    HISPI_TRY(hisp_matrix_host_arrays(AP0, &p, NULL, &c, &v));
    int64_t nnz = p[n];
    void *pv = NULL;
    hisp_status s = hispi_alloc(ctx, (size_t)nnz + 1, hisp_type_size(t), &pv);
    if (!s) {
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = p[i]; k < p[i + 1]; k++) {
                double x = -omega / d[i] * hispi_load_real(t, v, k);
                if (agg[i] >= 0 && c[k] == agg[i]) x += p0(w, W, i, agg[i]);
                hispi_store_real(t, pv, k, x);
            }
        s = hisp_matrix_create_csr(ctx, t, n, nagg, p, c, pv, P);
    }
    free(pv);
    return s;
}

hisp_status hispi_amg_diag_vector(hisp_context ctx, hisp_type t, int64_t n, const double *d,
                                  hisp_vector *v)
{
    void *tw = NULL;
    HISPI_TRY(hispi_alloc(ctx, (size_t)n + 1, hisp_type_size(t), &tw));
    for (int64_t i = 0; i < n; i++)
        hispi_store_real(t, tw, i, d[i]);
    hisp_status s = hisp_vector_create(ctx, t, n, v);
    if (!s) s = hisp_vector_write(*v, tw);
    if (s) hisp_vector_destroy(v);
    free(tw);
    return s;
}

hisp_status hispi_amg_start_vector(hisp_context ctx, hisp_type t, int64_t n, uint64_t seed,
                                   hisp_vector *v)
{
    bool done = false;
    HISPI_TRY(hisp_vector_create(ctx, t, n, v));
    hisp_status s = hispi_amg_dev_start(*v, seed, &done);
    void *h = NULL;
    if (!s && !done) s = hispi_vector_host_out(*v, &h);
    if (!s && !done) hispi_amg_start_fill(ctx, t, n, seed, h);
    if (!s && !done) s = hispi_vector_host_written(*v);
    if (s) hisp_vector_destroy(v);
    return s;
}

/* One level on the host: out's P from A (none where no coarser level can
 * be made) with its columns' weights, A's diagonal, Gershgorin's bound
 * and the Lanczos estimate of D^-1 A's largest eigenvalue; w: A's nodes'
 * weights (NULL: 1 each). */
static hisp_status host_level(hisp_context ctx, hisp_matrix A, const uint32_t *w,
                              const hispi_amg_opts *o, hispi_amg_level *out)
{
    int32_t *agg = out->agg; /* kept aggregates, or NULL */
    int64_t nagg = out->nagg;
    out->agg = NULL;
    hisp_matrix_info mi;
    const int64_t *p;
    const int32_t *c;
    const void *v;
    HISPI_TRY(hisp_matrix_get_info(A, &mi));
    HISPI_TRY(hisp_matrix_host_arrays(A, &p, NULL, &c, &v));
    int64_t n = mi.nrows, *sptr = NULL;
    int32_t *sidx = NULL;
    double *d = NULL;
    uint32_t *W = NULL;
    hisp_matrix P0 = NULL, AP0 = NULL;
    hisp_vector r0 = NULL;
    double *l1 = NULL;
    bool want_l1 = o->smoother == HISPI_AMG_L1_JACOBI;
    double t0 = 0;
    hispi_amg_mark(ctx, n, "", &t0);
    hisp_status s = hispi_alloc(ctx, (size_t)n + 1, sizeof *d, (void **)&d);
    if (!s && want_l1) s = hispi_alloc(ctx, (size_t)n + 1, sizeof *l1, (void **)&l1);
    if (!s) s = diagonal(ctx, n, p, c, v, mi.type, d, l1, &out->rho);
    if (!s) s = hispi_amg_diag_vector(ctx, mi.type, n, d, &out->diag);
    if (!s && want_l1) s = hispi_amg_diag_vector(ctx, mi.type, n, l1, &out->l1);
    free(l1);
    hispi_amg_mark(ctx, n, "diagonal", &t0);
    if (!s) s = hispi_amg_start_vector(ctx, mi.type, n, o->seed, &r0);
    if (!s) s = hispi_amg_lmax(A, out->diag, r0, out->rho, &out->lmax, &out->upper);
    hisp_vector_destroy(&r0);
    hispi_amg_mark(ctx, n, "lanczos", &t0);
    if (!s && agg) {                 /* the kept aggregates */
    } else if (!s && o->block > 1) { /* the nodes' graph, its norms squared: theta squared */
        int64_t *np = NULL;
        int32_t *nc = NULL;
        double *nv = NULL;
        s = hispi_amg_nodes(ctx, n, o->block, p, c, v, mi.type, &np, &nc, &nv);
        if (!s)
            s = hispi_amg_strength(ctx, n / o->block, np, nc, nv, HISP_F64, o->theta * o->theta,
                                   &sptr, &sidx);
        free(np), free(nc), free(nv);
    } else if (!s) {
        s = hispi_amg_strength(ctx, n, p, c, v, mi.type, o->theta, &sptr, &sidx);
    }
    hispi_amg_mark(ctx, n, "strength", &t0);
    if (!s && !agg) {
        s = hispi_alloc(ctx, (size_t)n + 1, sizeof *agg, (void **)&agg);
        if (!s) s = hispi_amg_aggregate(ctx, n / o->block, sptr, sidx, o->seed, agg, NULL, &nagg);
        if (!s && nagg >= n / o->block) nagg = 0; /* no coarser level */
        if (!s && nagg > 0 && o->block > 1) hispi_amg_expand(n, o->block, agg, &nagg);
    }
    hispi_amg_mark(ctx, n, "aggregate", &t0);
    if (!s && nagg > 0) {
        s = weights(ctx, n, agg, nagg, w, &W);
        if (!s) s = tentative(ctx, mi.type, n, agg, nagg, w, W, &P0);
        hispi_amg_mark(ctx, n, "P0", &t0);
        if (!s) s = hisp_matrix_multiply(HISP_OP_N, A, HISP_OP_N, P0, &AP0);
        hispi_amg_mark(ctx, n, "A P0", &t0);
        if (!s)
            s = smoothed(ctx, mi.type, n, d, 4.0 / 3.0 / out->lmax, agg, nagg, w, W, AP0, &out->P);
        hispi_amg_mark(ctx, n, "smooth", &t0);
        if (!s) out->nagg = nagg, out->w = W, W = NULL, out->agg = agg, agg = NULL;
    }
    hisp_matrix_destroy(&P0), hisp_matrix_destroy(&AP0);
    free(sptr), free(sidx), free(agg), free(W), free(d);
    return s;
}

/* A level's weights or aggregates (hispi_amg_level.w, .agg): a device
 * buffer (gone with its context's backend: a hierarchy may outlive both
 * its context and A) or host memory. */
static void free_weights(const hispi_amg *h, void *w)
{
    if (!w) return;
    if (!h->on_device)
        free(w);
    else if (hispi_handle_live(h->ctx, HISPI_H_CONTEXT))
        HISPI_BE_VOID(h->ctx, buf_free, w);
}

/* Level l's kept A P and coarse operator of reuse, moved into h, where
 * they can be computed again from A (Ad) and the new P, R: reuse's A had
 * A's pattern down to level l (*same), so P's pattern is reuse's P's, as
 * are A P's and R (A P)'s. False (*same then false): a level made anew. */
static bool take_kept(hispi_amg *h, int l, hisp_matrix Ad, hispi_amg *reuse, bool *same)
{
    hisp_matrix P = h->P[l], R = h->R[l];
    *same = *same && reuse->AP[l] && reuse->A[l + 1] && reuse->P[l] &&
            P->host.nnz == reuse->P[l]->host.nnz && hispi_spgemm_refill_ok(Ad, P, reuse->AP[l]) &&
            hispi_spgemm_refill_ok(R, reuse->AP[l], reuse->A[l + 1]);
    if (!*same) return false;
    h->AP[l] = reuse->AP[l], reuse->AP[l] = NULL;
    h->A[l + 1] = reuse->A[l + 1], reuse->A[l + 1] = NULL;
    return true;
}

/* R (A P) on the device: again into the kept matrices (take_kept), or by
 * two products, A P kept where o asks. */
static hisp_status galerkin_dev(hispi_amg *h, int l, hisp_matrix Ad, const hispi_amg_opts *o,
                                hispi_amg *reuse, bool *same)
{
    double t0 = 0;
    hisp_context ctx = Ad->ctx;
    hispi_amg_mark(ctx, h->rows[l], "", &t0);
    if (reuse && take_kept(h, l, Ad, reuse, same)) {
        HISPI_TRY(hispi_spgemm_refill(Ad, h->P[l], h->AP[l]));
        hispi_amg_mark(ctx, h->rows[l], "A P again", &t0);
        HISPI_TRY(hispi_spgemm_refill(h->R[l], h->AP[l], h->A[l + 1]));
        hispi_amg_mark(ctx, h->rows[l], "R (A P) again", &t0);
        hispi_amg_kept_levels++;
        return HISP_SUCCESS;
    }
    hisp_matrix AP = NULL;
    hisp_status s = hisp_matrix_multiply(HISP_OP_N, Ad, HISP_OP_N, h->P[l], &AP);
    hispi_amg_mark(ctx, h->rows[l], "A P", &t0);
    if (!s) s = hisp_matrix_multiply(HISP_OP_N, h->R[l], HISP_OP_N, AP, &h->A[l + 1]);
    hispi_amg_mark(ctx, h->rows[l], "R (A P)", &t0);
    if (!s && o->keep) h->AP[l] = AP, AP = NULL;
    hisp_matrix_destroy(&AP);
    hispi_amg_mark(ctx, h->rows[l], "free A P", &t0);
    return s;
}

long hispi_amg_kept_levels;

/* P^T A P on the host: by hisp_matrix_ptap, or in an update (reuse) with
 * o->keep by two plans kept in h (A P, then P^T (A P)), those of reuse
 * executed again where the patterns are theirs (the plans compare them).
 * Plans first made by an update, not the setup: making them cost the
 * setup 5-20 % more on PoCL (48^3 grids), for an object that may never be
 * updated. */
static hisp_status galerkin_host(hispi_amg *h, int l, const hispi_amg_opts *o, hispi_amg *reuse)
{
    hisp_matrix A = h->A[l], P = h->P[l];
    hisp_context ctx = A->ctx;
    double t0 = 0;
    hispi_amg_mark(ctx, h->rows[l], "", &t0);
    if (!o->keep || !reuse) {
        HISPI_TRY(hisp_matrix_ptap(P, A, &h->A[l + 1]));
        hispi_amg_mark(ctx, h->rows[l], "P^T A P", &t0);
        return hisp_matrix_convert(h->A[l + 1], HISP_FORMAT_CSR);
    }
    if (reuse->plan[1][l] && reuse->AP[l] && reuse->A[l + 1]) { /* moved here */
        for (int k = 0; k < 2; k++)
            h->plan[k][l] = reuse->plan[k][l], reuse->plan[k][l] = NULL;
        h->AP[l] = reuse->AP[l], reuse->AP[l] = NULL;
        h->A[l + 1] = reuse->A[l + 1], reuse->A[l + 1] = NULL;
        hisp_status s = hisp_spgemm_plan_execute(h->plan[0][l], A, P, h->AP[l]);
        if (!s) s = hisp_spgemm_plan_execute(h->plan[1][l], P, h->AP[l], h->A[l + 1]);
        hispi_amg_mark(ctx, h->rows[l], "P^T A P again", &t0);
        if (!s) hispi_amg_kept_levels++;
        if (s != HISP_ERR_INVALID_ARGUMENT) return s;
        hispi_clear_error(ctx); /* another pattern: made anew */
        hisp_spgemm_plan_destroy(&h->plan[0][l]), hisp_spgemm_plan_destroy(&h->plan[1][l]);
        hisp_matrix_destroy(&h->AP[l]), hisp_matrix_destroy(&h->A[l + 1]);
    }
    HISPI_TRY(hisp_spgemm_plan_create(HISP_OP_N, A, HISP_OP_N, P, &h->plan[0][l], &h->AP[l]));
    HISPI_TRY(
        hisp_spgemm_plan_create(HISP_OP_T, P, HISP_OP_N, h->AP[l], &h->plan[1][l], &h->A[l + 1]));
    hispi_amg_mark(ctx, h->rows[l], "P^T A P by plans", &t0);
    return HISP_SUCCESS;
}

/* Level l's P, R, diagonal and spectral bounds from A[l] (on the device:
 * its copy there, *Ad) and its nodes' weights *w, and A[l + 1] = P^T A P;
 * *w then the coarse nodes' (the caller frees them: free_weights); *more:
 * a coarser level was made. */
static hisp_status next_level(hispi_amg *h, int l, hisp_matrix Ad, void **w,
                              const hispi_amg_opts *o, hispi_amg *reuse, bool *same, bool *more)
{
    hispi_amg_level lv;
    memset(&lv, 0, sizeof lv);
    *more = false;
    if (reuse) { /* its aggregates, moved here */
        lv.agg = reuse->agg[l], lv.nagg = reuse->rows[l + 1];
        reuse->agg[l] = NULL;
    }
    hisp_status s = h->on_device ? hispi_amg_dev_level(h->A[l], Ad, *w, o, &lv)
                                 : host_level(h->A[0]->ctx, h->A[l], *w, o, &lv);
    free_weights(h, *w);
    *w = lv.w;
    h->diag[l] = lv.diag, h->l1[l] = lv.l1, h->P[l] = lv.P, h->R[l] = lv.R;
    h->rho[l] = lv.rho, h->lmax[l] = lv.lmax, h->upper[l] = lv.upper, h->agg[l] = lv.agg;
    if (s || !lv.P) return s;
    s = h->on_device ? galerkin_dev(h, l, Ad, o, reuse, same) : galerkin_host(h, l, o, reuse);
    *more = !s;
    return s;
}

/* Test hook: hierarchies set up. */
long hispi_amg_setups;

hisp_status hispi_amg_setup(hisp_matrix A, const hispi_amg_opts *o, hispi_amg *reuse, hispi_amg *h)
{
    memset(h, 0, sizeof *h);
    hispi_amg_setups++;
    if (!hispi_mat_ok(A)) return HISP_ERR_INVALID_HANDLE;
    hisp_context ctx = A->ctx;
    hisp_matrix_info mi;
    HISPI_TRY(hisp_matrix_get_info(A, &mi));
    if (mi.nrows != mi.ncols || mi.format != HISP_FORMAT_CSR ||
        (mi.type != HISP_F32 && mi.type != HISP_F64))
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "AMG setup: A must be a square CSR matrix of f32 or f64 entries (it is "
                          "%lld x %lld, %s)",
                          (long long)mi.nrows, (long long)mi.ncols, hisp_type_name(mi.type));
    if (o->block < 1 || mi.nrows % o->block)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "AMG setup: %lld rows do not make nodes of %d (amg_block)",
                          (long long)mi.nrows, o->block);
    int maxl = o->max_levels < HISPI_AMG_MAX_LEVELS ? o->max_levels : HISPI_AMG_MAX_LEVELS;
    h->A[0] = A;
    h->on_device = hispi_amg_dev_usable(ctx);
    h->ctx = ctx, h->backend = ctx->kind, h->device = ctx->device;
    if (reuse && (reuse->on_device != h->on_device || reuse->backend != h->backend ||
                  reuse->device != h->device || !reuse->nlevels || reuse->rows[0] != mi.nrows))
        reuse = NULL;      /* aggregates of another backend or size */
    hisp_matrix A0 = NULL; /* A in the device layout for a device setup (A where it is) */
    void *A0ptr = NULL;    /* its row pointers where they were widened */
    void *w = NULL;        /* the level's nodes' weights (NULL: 1 each) */
    hisp_status s = h->on_device ? hispi_amg_dev_operand(A, &A0, &A0ptr) : HISP_SUCCESS;
    /* the kept products serve where A has the pattern they were made for */
    bool same = false;
    hispi_amg *pat = reuse && o->keep && reuse->pat_ptr ? reuse : NULL; /* its pattern */
    if (!s && pat)
        s = hispi_spgemm_dev_same_pattern(A0, pat->pat_ptr, pat->pat_col, pat->rows[0], pat->nnz[0],
                                          &same);
    if (!same) pat = NULL;
    for (int l = 0; !s; l++) {
        hisp_matrix_info li;
        s = hisp_matrix_get_info(h->A[l], &li);
        if (s) break;
        h->rows[l] = li.nrows, h->nnz[l] = li.nnz;
        h->nlevels = l + 1;
        if (li.nrows <= o->max_coarse || l + 1 >= maxl) break;
        bool more = false;
        /* a level aggregated anew (none kept: taken by a failed setup) ends the reuse */
        if (reuse && (l + 1 >= reuse->nlevels || !reuse->agg[l] || reuse->rows[l] != li.nrows))
            reuse = NULL;
        s = next_level(h, l, l ? h->A[l] : A0, &w, o, reuse, &same, &more);
        if (!more) break;
    }
    free_weights(h, w);
    if (!s && o->keep && h->on_device && h->nlevels > 1) { /* level 0's pattern, kept */
        if (pat)
            h->pat_ptr = pat->pat_ptr, h->pat_col = pat->pat_col,
            pat->pat_ptr = pat->pat_col = NULL;
        else
            s = hispi_spgemm_dev_keep_pattern(A0, &h->pat_ptr, &h->pat_col);
    }
    if (A0 != A) hisp_matrix_destroy(&A0);
    if (A0ptr) HISPI_BE_VOID(ctx, buf_free, A0ptr);
    int64_t last = h->nlevels ? h->rows[h->nlevels - 1] : 0;
    if (!s && last > HISPI_AMG_DENSE_MAX)
        s = hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                       "AMG setup: the coarsest level has %lld rows (at most %d are solved "
                       "directly): no coarser level could be made from it (%s)",
                       (long long)last, HISPI_AMG_DENSE_MAX,
                       h->nlevels >= maxl ? "the level limit"
                                          : "no strong couplings at this strength threshold");
    if (s) {
        if (h->nlevels > 0) hisp_matrix_destroy(&h->A[h->nlevels]); /* made, not counted */
        hispi_amg_free(h);
    }
    return s;
}
