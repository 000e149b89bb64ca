/* HiSparse SpMV through the dynamic scheduler on every target (reference:
 * the scheduler's host simulation; OpenCL: the host-polled controller;
 * CUDA: the device controller), against the recursive reference
 * hispi_hisparse_ref_spmv, on random, structured and real matrices, every
 * queue, both ops, the matrix's transposed flag, scale, alpha/beta (beta = 0
 * with NaN in y), node sizes 4..256, empty and one-entry matrices, f32 and
 * f64. A matrix's first SpMV is scheduled: its counts must be the same for
 * every handle and equal to the host simulation's; later SpMVs replay the
 * leaf queues on the device backends (one round) and must give the same
 * result. */
#include "testutil.h"
#include "hisparse/hisparse_sched.h"
#include "hisparse/hispi_hisparse.h"

#include <stdarg.h>
#include <sys/wait.h>
#include <unistd.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double ld(hisp_type t, const void *a, int64_t i)
{
    return t == HISP_F32 ? (double)((const float *)a)[i] : ((const double *)a)[i];
}

static void st(hisp_type t, void *a, int64_t i, double v)
{
    if (t == HISP_F32)
        ((float *)a)[i] = (float)v;
    else
        ((double *)a)[i] = v;
}

/* Magnitudes |alpha| |op(A)| |x| per output, and entries per output. */
typedef struct {
    hisp_type t;
    bool tr;
    double a;
    const void *x;
    double *mag;
    int64_t *cnt;
} mag_ctx;

static void mag_fn(void *user, int64_t r, int64_t c, const unsigned char *v)
{
    mag_ctx *m = user;
    double a;
    if (m->t == HISP_F32) {
        float f;
        memcpy(&f, v, 4);
        a = f;
    } else {
        memcpy(&a, v, 8);
    }
    int64_t to = m->tr ? c : r, from = m->tr ? r : c;
    m->mag[to] += fabs(m->a * a * ld(m->t, m->x, from));
    m->cnt[to]++;
}

/* Queues that had work, per target (the coverage test reads it). */
static unsigned queues_seen[16];

/* Whether the target lacks HiSparse SpMV (recorded as skipped once). */
static int unsupported(hisp_context ctx, hisp_status s, int target)
{
    if (s != HISP_ERR_UNSUPPORTED) return 0;
    hisp_error_info e = {0};
    if (hisp_context_last_error(ctx, &e)) {
    }
    static int said[16];
    if (!said[target]++)
        test_skip("hisparse_dev on %s: %s", test_label(target), e.message ? e.message : "");
    return 1;
}

/* y = alpha*op(H)*x + beta*y on the target with H = A in HiSparse form
 * (node size d, the transposed flag `tflag`, scale `scale`), against the
 * recursive reference: the first (scheduled) call of H and of a duplicate
 * of H, with identical scheduler counts equal to the host simulation's,
 * then two replays of H. Returns 0 when the target has no HiSparse SpMV. */
static int check_hs(hisp_context ctx, int target, hisp_matrix A, int d, hisp_op op, int tflag,
                    double scale, int beta_zero, uint64_t *rs, const char *what)
{
    hisp_matrix H = NULL;
    CK_OK(ctx, hisp_matrix_set_node_size(A, d));
    CK_OK(ctx, hisp_matrix_duplicate(A, HISP_FORMAT_HISPARSE, &H));
    hisp_matrix_info info;
    CK_OK(ctx, hisp_matrix_get_info(H, &info));
    hisp_type t = info.type;
    if (tflag) CK_OK(ctx, hisp_matrix_transpose(H));
    float sf = (float)scale;
    CK_OK(ctx, hisp_matrix_scale(H, t == HISP_F32 ? (const void *)&sf : (const void *)&scale));
    CK_OK(ctx, hisp_matrix_get_info(H, &info));
    size_t es = hisp_type_size(t);
    int64_t m = op == HISP_OP_N ? info.nrows : info.ncols;
    int64_t n = op == HISP_OP_N ? info.ncols : info.nrows;
    void *xh = malloc((size_t)n * es + 8), *y0 = malloc((size_t)m * es + 8);
    void *yref = malloc((size_t)m * es + 8), *ydev = malloc((size_t)m * es + 8);
    void *ysim = malloc((size_t)m * es + 8);
    double *mag = calloc((size_t)m + 1, sizeof *mag);
    int64_t *cnt = calloc((size_t)m + 1, sizeof *cnt);
    ck_assert(xh && y0 && yref && ydev && ysim && mag && cnt);
    for (int64_t i = 0; i < n; i++)
        st(t, xh, i, test_uniform(rs));
    for (int64_t i = 0; i < m; i++)
        st(t, y0, i, beta_zero ? NAN : test_uniform(rs));
    double alpha = 0.5 + test_uniform(rs), beta = beta_zero ? 0 : 0.5 + test_uniform(rs);
    float af = (float)alpha, bf = (float)beta;
    if (t == HISP_F32) {
        alpha = af;
        beta = bf;
    }
    const void *ap = t == HISP_F32 ? (const void *)&af : (const void *)&alpha;
    const void *bp = t == HISP_F32 ? (const void *)&bf : (const void *)&beta;

    hisp_vector x = NULL, y = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, t, n, &x));
    CK_OK(ctx, hisp_vector_create(ctx, t, m, &y));
    CK_OK(ctx, hisp_vector_write(x, xh));
    /* the first call of H, then of a duplicate (its own first call: the
     * same scheduled counts) */
    hisp_sched_counts c[2];
    hisp_matrix H2 = NULL;
    CK_OK(ctx, hisp_matrix_duplicate(H, HISP_FORMAT_HISPARSE, &H2));
    for (int run = 0; run < 2; run++) {
        CK_OK(ctx, hisp_vector_write(y, y0));
        hisp_status s = hisp_spmv(ctx, op, ap, run ? H2 : H, x, bp, y);
        if (unsupported(ctx, s, target)) {
            hisp_vector_destroy(&x);
            hisp_vector_destroy(&y);
            hisp_matrix_destroy(&H);
            hisp_matrix_destroy(&H2);
            free(xh), free(y0), free(yref), free(ydev), free(ysim), free(mag), free(cnt);
            return 0;
        }
        CK_OK(ctx, s);
        CK_OK(ctx, hisp_context_sched_counts(ctx, &c[run]));
        if (!run) CK_OK(ctx, hisp_vector_read(y, ydev));
    }
    hisp_matrix_destroy(&H2);
    ck_assert_msg(memcmp(&c[0], &c[1], sizeof c[0]) == 0, "%s: counts differ between runs", what);
    /* later calls of H: CUDA and OpenCL replay the leaf queues of its
     * scheduled run (one round; CUDA sorts them first), the reference
     * backend runs the scheduler again. The same result either way. */
    void *yrep = malloc((size_t)m * es + 8);
    ck_assert_ptr_nonnull(yrep);
    hisp_sched_counts rc;
    /* twice: the first replay prepares (CUDA: sorts, builds its plan), the
     * second reuses that; both results are checked */
    void *yrep1 = malloc((size_t)m * es + 8);
    ck_assert_ptr_nonnull(yrep1);
    for (int again = 0; again < 2; again++) {
        CK_OK(ctx, hisp_vector_write(y, y0));
        CK_OK(ctx, hisp_spmv(ctx, op, ap, H, x, bp, y));
        CK_OK(ctx, hisp_context_sched_counts(ctx, &rc));
        CK_OK(ctx, hisp_vector_read(y, again ? yrep : yrep1));
    }
    if (test_kind(target) == HISP_BACKEND_REFERENCE) {
        ck_assert_msg(memcmp(&rc, &c[0], sizeof rc) == 0, "%s: counts changed on %s", what,
                      test_label(target));
    } else if (c[0].total_nodes) {
        ck_assert_int_eq(rc.rounds, 1);
        ck_assert_int_le(rc.total_nodes, c[0].total_nodes);
        ck_assert_int_gt(rc.total_nodes, 0);
    }

    /* the oracles: recursive reference, host simulation (counts) */
    const hispi_hisparse *h = H->hs;
    memcpy(yref, y0, (size_t)m * es);
    ck_assert_int_eq(hispi_hisparse_ref_spmv(ctx, h, op, alpha, xh, beta, yref), HISP_SUCCESS);
    hispi_sched_policy pol;
    hispi_sched_spmv_policy(h->d, t, &pol);
    uint64_t cap[HISP_SCHED_MAX_QUEUES];
    int rq = 0;
    hispi_sched_spmv_caps(h, &pol, cap, &rq);
    bool tr = h->transposed != (op == HISP_OP_T);
    hispi_sched_args sa = {&pol,     t,  h->root,          rq,   h->d, h->log2d,
                           h->depth, tr, alpha * h->scale, beta, n,    m};
    memcpy(ysim, y0, (size_t)m * es);
    hisp_sched_counts hc;
    CK_OK(ctx, hispi_sched_spmv_host(ctx, h->pool->base, &sa, cap, xh, ysim, &hc));
    ck_assert_msg(memcmp(&hc, &c[0], sizeof hc) == 0,
                  "%s: counts differ from the host simulation's (rounds %lld vs %lld, nodes "
                  "%lld vs %lld, launches %lld vs %lld)",
                  what, (long long)c[0].rounds, (long long)hc.rounds, (long long)c[0].total_nodes,
                  (long long)hc.total_nodes, (long long)c[0].total_launches,
                  (long long)hc.total_launches);
    int64_t nodes = 0;
    for (int q = 0; q < pol.nqueues; q++) {
        ck_assert_int_eq(hc.nodes[q], (int64_t)cap[q]); /* each node exactly once */
        nodes += hc.nodes[q];
        if (hc.nodes[q]) queues_seen[target] |= 1u << q;
    }
    ck_assert_int_eq(nodes, hc.total_nodes);
    ck_assert_int_eq(hc.queues, HISPI_SQ_SPMV);

    mag_ctx mc = {t, tr, alpha * h->scale, xh, mag, cnt};
    hispi_hisparse_foreach(h, mag_fn, &mc);
    int64_t longest = 1;
    for (int64_t i = 0; i < m; i++)
        if (cnt[i] > longest) longest = cnt[i];
    double num = 0, den = 0, nums = 0, numr = 0, numr1 = 0;
    for (int64_t i = 0; i < m; i++) {
        double dv = ld(t, ydev, i), r = ld(t, yref, i), sv = ld(t, ysim, i);
        double pv = ld(t, yrep, i), pv1 = ld(t, yrep1, i);
        ck_assert_msg(!isnan(dv) && !isnan(r) && !isnan(pv) && !isnan(pv1),
                      "%s: NaN in y[%lld] (%s)", what, (long long)i,
                      beta_zero ? "y was NaN and beta = 0: y was read" : "");
        double g = mag[i] + (beta_zero ? 0 : fabs(beta * ld(t, y0, i)));
        num += (dv - r) * (dv - r);
        numr += (pv - r) * (pv - r);
        numr1 += (pv1 - r) * (pv1 - r);
        nums += (sv - r) * (sv - r);
        den += g * g;
    }
    double err = den > 0 ? sqrt(num / den) : sqrt(num);
    double errs = den > 0 ? sqrt(nums / den) : sqrt(nums);
    double tol = t == HISP_F32 ? 1e-5 * (longest > 64 ? sqrt((double)longest / 64) : 1) : 1e-12;
    ck_assert_msg(err <= tol && errs <= tol,
                  "%s: %s %lldx%lld nnz %lld d %d op %c tflag %d scale %g beta %s: relative "
                  "error %.3g (simulation %.3g) > %.3g (seed %llu)",
                  what, hisp_type_name(t), (long long)info.nrows, (long long)info.ncols,
                  (long long)info.nnz, d, op == HISP_OP_N ? 'N' : 'T', tflag, scale,
                  beta_zero ? "0 (y NaN)" : "random", err, errs, tol,
                  (unsigned long long)test_seed());
    double errr = den > 0 ? sqrt(numr / den) : sqrt(numr);
    double errr1 = den > 0 ? sqrt(numr1 / den) : sqrt(numr1);
    ck_assert_msg(errr <= tol && errr1 <= tol,
                  "%s: replay: relative error %.3g (first replay %.3g) > %.3g (seed %llu)", what,
                  errr, errr1, tol, (unsigned long long)test_seed());
    free(yrep);
    free(yrep1);
    hisp_vector_destroy(&x);
    hisp_vector_destroy(&y);
    hisp_matrix_destroy(&H);
    free(xh), free(y0), free(yref), free(ydev), free(ysim), free(mag), free(cnt);
    return 1;
}

/* Loop index of the mapping-aware tests: _i = NMAP * target + mapping.
 * OpenCL on CPUs runs the owner mapping (leaf sub-queues per output range,
 * no atomics) by default; mapping 1 forces the GPUs' atomic kernels with
 * the policy's threads per node (the test hook hispi_hs_hook.cl_atomic).
 * Sets *i to the target; false when the pair does not apply (mapping 1 on
 * a non-OpenCL target). */
#define NMAP 2
static bool set_mapping(int *i)
{
    int mapping = *i % NMAP;
    *i /= NMAP;
    hispi_hs_hook.cl_atomic = 0;
    if (!mapping) return true;
    if (test_kind(*i) != HISP_BACKEND_OPENCL) return false;
    hispi_hs_hook.cl_atomic = 1;
    return true;
}

/* Random matrices: both types, node sizes 4..256, both ops, the flag,
 * scale, beta. */
START_TEST(test_hs_random)
{
    if (!set_mapping(&_i)) return;
    uint64_t rs = test_seed() + 4001 + (uint64_t)_i;
    hisp_context ctx = test_context(_i);
    static const int ds[] = {4, 16, 128, 256};
    for (int ti = 0; ti < 2; ti++) {
        hisp_type t = ti ? HISP_F64 : HISP_F32;
        if (t == HISP_F64 && !test_fp64(ctx)) continue;
        for (int di = 0; di < 4; di++) {
            int64_t nr = 50 + (int64_t)(test_rand(&rs) % 700),
                    nc = 50 + (int64_t)(test_rand(&rs) % 700);
            hisp_matrix A = test_random_matrix(ctx, t, nr, nc, 0.02, &rs);
            for (int v = 0; v < 8; v++) {
                char what[400];
                snprintf(what, sizeof what, "%s: random", test_label(_i));
                if (!check_hs(ctx, _i, A, ds[di], v & 1 ? HISP_OP_T : HISP_OP_N, (v >> 1) & 1,
                              v & 4 ? -1.75 : 1.0, (v + di) & 1, &rs, what)) {
                    hisp_matrix_destroy(&A);
                    hisp_context_destroy(&ctx);
                    return;
                }
            }
            hisp_matrix_destroy(&A);
        }
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* The generators: Laplacians, banded, R-MAT, dense, circuit, block
 * diagonal, with small and default node sizes. */
START_TEST(test_hs_structured)
{
    uint64_t rs = test_seed() + 4002 + (uint64_t)_i;
    hisp_context ctx = test_context(_i);
    for (int k = 0; k < HISP_GEN_COUNT; k++) {
        hisp_gen_params p;
        hisp_gen_defaults((hisp_gen_kind)k, &p);
        p.seed = test_seed();
        p.n = k == HISP_GEN_POISSON2D ? 40 : TEST_GEN_3D(k) ? 12 : k == HISP_GEN_DENSE ? 90 : 3000;
        p.scale = 11;
        hisp_type t = k & 1 ? HISP_F32 : HISP_F64;
        if (t == HISP_F64 && !test_fp64(ctx)) t = HISP_F32;
        hisp_matrix A = NULL;
        CK_OK(ctx, hisp_matrix_generate(ctx, &p, t, &A));
        static const int ds[] = {4, 8, 128};
        for (int v = 0; v < 6; v++) {
            char what[400];
            snprintf(what, sizeof what, "%s: %s", test_label(_i), hisp_gen_name((hisp_gen_kind)k));
            if (!check_hs(ctx, _i, A, ds[v % 3], v & 1 ? HISP_OP_T : HISP_OP_N, v >= 3,
                          v == 4 ? 0.5 : 1.0, v == 2, &rs, what)) {
                hisp_matrix_destroy(&A);
                hisp_context_destroy(&ctx);
                return;
            }
        }
        hisp_matrix_destroy(&A);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* The real matrices of test_matrix_dir(): f64 (f32 where the device has no
 * fp64), op N and T, d = 128 and 16. */
START_TEST(test_hs_mtx_files)
{
    uint64_t rs = test_seed() + 4003 + (uint64_t)_i;
    const char *dir = test_matrix_dir();
    if (!dir) {
        if (_i == 0) test_skip_no_matrices("hisparse_dev on real matrices");
        return;
    }
    char *names[256];
    int nn = test_mtx_names(dir, names);
    hisp_context ctx = test_context(_i);
    hisp_type t = test_fp64(ctx) ? HISP_F64 : HISP_F32;
    /* $HISP_TEST_QUICK (runs under compute-sanitizer): the first few files */
    int upto = getenv("HISP_TEST_QUICK") && nn > 4 ? 4 : nn;
    for (int k = 0; k < upto; k++) {
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        if (test_mtx_is_complex(path) == 1) continue;
        hisp_matrix A = NULL;
        CK_OK(ctx, hisp_matrix_read_mtx(ctx, path, t, &A, NULL));
        CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_CSR));
        char what[400];
        snprintf(what, sizeof what, "%s: %s", test_label(_i), names[k]);
        int ok = 1;
        for (int v = 0; v < 4 && ok; v++)
            ok = check_hs(ctx, _i, A, v < 2 ? 128 : 16, v & 1 ? HISP_OP_T : HISP_OP_N, v == 3,
                          v == 2 ? 3.0 : 1.0, v == 1, &rs, what);
        hisp_matrix_destroy(&A);
        if (!ok) break;
    }
    test_free_names(names, nn);
    hisp_context_destroy(&ctx);
}
END_TEST

/* Empty matrices (0 x 0, m x n without entries) and single entries. */
START_TEST(test_hs_tiny)
{
    uint64_t rs = test_seed() + 4004 + (uint64_t)_i;
    hisp_context ctx = test_context(_i);
    static const int64_t sizes[][3] = {
        {0, 0, 0}, {5, 7, 0}, {1, 1, 1}, {1000, 3, 1}, {3, 70000, 1}};
    for (int ti = 0; ti < 2; ti++) {
        hisp_type t = ti ? HISP_F64 : HISP_F32;
        if (t == HISP_F64 && !test_fp64(ctx)) continue;
        for (int k = 0; k < 5; k++) {
            int64_t nr = sizes[k][0], nc = sizes[k][1];
            int32_t r = (int32_t)(nr ? test_rand(&rs) % (uint64_t)nr : 0);
            int32_t c = (int32_t)(nc ? test_rand(&rs) % (uint64_t)nc : 0);
            double v = test_uniform(&rs);
            float vf = (float)v;
            hisp_matrix A = NULL;
            CK_OK(ctx,
                  hisp_matrix_create_coo(ctx, t, nr, nc, sizes[k][2], &r, &c,
                                         t == HISP_F32 ? (const void *)&vf : (const void *)&v, &A));
            CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_CSR));
            for (int vv = 0; vv < 8; vv++) {
                char what[400];
                snprintf(what, sizeof what, "%s: tiny %lldx%lld", test_label(_i), (long long)nr,
                         (long long)nc);
                if (!check_hs(ctx, _i, A, vv & 4 ? 256 : 4, vv & 1 ? HISP_OP_T : HISP_OP_N,
                              (vv >> 1) & 1, 2.0, vv & 1, &rs, what)) {
                    hisp_matrix_destroy(&A);
                    hisp_context_destroy(&ctx);
                    return;
                }
            }
            hisp_matrix_destroy(&A);
        }
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* Matrices built to fill every queue: single entries far apart (inner-1,
 * leaf-1), pairs and small clusters (few), a block of more than 32 sparse
 * entries (leaf-many), a root with more than 32 sparse children
 * (inner-many), dense blocks (leaf-dense, inner-dense). The union must
 * cover all eight queues. */
START_TEST(test_hs_queues)
{
    if (!set_mapping(&_i)) return;
    uint64_t rs = test_seed() + 4005 + (uint64_t)_i;
    hisp_context ctx = test_context(_i);
    queues_seen[_i] = 0;
    hisp_type t = HISP_F32;
    struct {
        int64_t n;
        double density;
        int d;
    } cases[] = {{4096, 0.000002, 16}, /* lone entries: inner-1, leaf-1 */
                 {256, 0.001, 16},     /* ~65 children of the root: inner-many */
                 {16, 0.3, 16},        /* ~66 distinct entries in one leaf: leaf-many */
                 {40, 1.0, 4},         /* dense: leaf-dense and inner-dense */
                 {300, 0.01, 8}};      /* few */
    for (int k = 0; k < 5; k++) {
        hisp_matrix A = test_random_matrix(ctx, t, cases[k].n, cases[k].n, cases[k].density, &rs);
        for (int op = 0; op < 2; op++) {
            char what[400];
            snprintf(what, sizeof what, "%s: queue case %d", test_label(_i), k);
            if (!check_hs(ctx, _i, A, cases[k].d, (hisp_op)op, 0, 1.0, 0, &rs, what)) {
                hisp_matrix_destroy(&A);
                hisp_context_destroy(&ctx);
                return;
            }
        }
        hisp_matrix_destroy(&A);
    }
    for (int q = 0; q < HISPI_SQ_SPMV; q++)
        ck_assert_msg(queues_seen[_i] & (1u << q), "%s: queue %s never had work", test_label(_i),
                      hisp_sched_queue_name(q));
    hisp_context_destroy(&ctx);
}
END_TEST

/* The device copy of the tree follows the context: a backend switch drops
 * it, the next SpMV uploads it again, results stay right. */
START_TEST(test_hs_backend_switch)
{
    uint64_t rs = test_seed() + 4006 + (uint64_t)_i;
    const test_target *tg;
    test_targets(&tg);
    hisp_context ctx = test_default_context();
    hisp_matrix A = test_random_matrix(ctx, HISP_F32, 500, 400, 0.02, &rs);
    CK_OK(ctx, hisp_matrix_set_node_size(A, 16));
    CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_HISPARSE)); /* one handle throughout */
    float x[400], y[500], yref[500], a = 1.25f, b = 0;
    for (int j = 0; j < 400; j++)
        x[j] = (float)test_uniform(&rs);
    ck_assert_int_eq(hispi_hisparse_ref_spmv(ctx, A->hs, HISP_OP_N, a, x, 0, yref), 0);
    hisp_vector xv = NULL, yv = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F32, 400, &xv));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F32, 500, &yv));
    CK_OK(ctx, hisp_vector_write(xv, x));
    for (int k = 0; k < 4; k++) {
        hisp_backend_kind kind = k & 1 ? HISP_BACKEND_REFERENCE : tg[_i].kind;
        CK_OK(ctx, hisp_context_set_backend(ctx, kind, k & 1 ? 0 : tg[_i].device));
        hisp_status s = hisp_spmv(ctx, HISP_OP_N, &a, A, xv, &b, yv);
        if (unsupported(ctx, s, _i)) break;
        CK_OK(ctx, s);
        CK_OK(ctx, hisp_vector_read(yv, y));
        double err = test_rel_error(HISP_F32, y, yref, 500);
        ck_assert_msg(err < 1e-5, "%s: after switch %d: relative error %g", test_label(_i), k, err);
    }
    hisp_vector_destroy(&xv);
    hisp_vector_destroy(&yv);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

/* hisp spmv --format hisparse on the target: checked, timed, and its JSON
 * carries the scheduler's counts, equal to the library's for the same
 * matrix. */
START_TEST(test_hs_cli)
{
    if (!test_hisp_bin()) {
        if (_i == 0)
            test_skip("hisparse_dev CLI test: the hisp program is not built next to the tests");
        return;
    }
    const test_target *tg;
    test_targets(&tg);
    char dir[] = "/tmp/hisp_hsdev_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    static char out[1 << 16];
    ck_assert_int_eq(test_run_cli(out, sizeof out, "gen circuit --n 3000 -o %s/c.mtx", dir), 0);
    char path[4200];
    snprintf(path, sizeof path, "%s/c.mtx", dir);
    hisp_context ctx = test_context(_i);
    hisp_matrix A = NULL, H = NULL;
    CK_OK(ctx, hisp_matrix_read_mtx(ctx, path, HISP_F64, &A, NULL));
    CK_OK(ctx, hisp_matrix_duplicate(A, HISP_FORMAT_HISPARSE, &H));
    hispi_sched_policy pol;
    hispi_sched_spmv_policy(H->hs->d, HISP_F64, &pol);
    uint64_t cap[HISP_SCHED_MAX_QUEUES];
    int rq = 0;
    hispi_sched_spmv_caps(H->hs, &pol, cap, &rq);
    int64_t n = H->hs->nrows;
    double *x = calloc((size_t)n, sizeof *x), *y = calloc((size_t)n, sizeof *y);
    ck_assert(x && y);
    hispi_sched_args sa = {&pol,         HISP_F64, H->hs->root, rq,  H->hs->d, H->hs->log2d,
                           H->hs->depth, true,     1.0,         0.0, n,        n};
    hisp_sched_counts hc;
    CK_OK(ctx, hispi_sched_spmv_host(ctx, H->hs->pool->base, &sa, cap, x, y, &hc));
    for (int t = 0; t < 2; t++) {
        const char *prec = t == 0 || test_fp64(ctx) ? (t ? "f64" : "f32") : NULL;
        if (!prec) continue;
        int rc = test_run_cli(out, sizeof out,
                              "spmv %s --format hisparse --backend %s --device %d --precision %s "
                              "--transpose --check --repeat 2 --json",
                              path, hisp_backend_name(tg[_i].kind), tg[_i].device, prec);
        ck_assert_msg(rc == 0, "%s: hisp spmv exit %d:\n%s", test_label(_i), rc, out);
        ck_assert(strstr(out, "\"scheduler\""));
        ck_assert_int_eq(test_json_int(out, "rounds"), hc.rounds);
        ck_assert_int_eq(test_json_int(out, "launches"), hc.total_launches);
        ck_assert(strstr(out, "\"ok\": true"));
    }
    free(x);
    free(y);
    hisp_matrix_destroy(&A);
    hisp_matrix_destroy(&H);
    hisp_context_destroy(&ctx);
    char rm[4300];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(rm), 0);
}
END_TEST

/* OpenCL's owner mapping with 1, 3 and 64 output ranges
 * (hispi_hs_hook.cl_parts, read at upload): random and structured
 * matrices, both types, d = 4 and 256, both ops, the flag, scale, beta;
 * then one handle alternating op N and T (scheduled once per orientation,
 * then replays from each orientation's own entry array) with beta != 0. */
START_TEST(test_hs_owner_parts)
{
    if (test_kind(_i) != HISP_BACKEND_OPENCL) return;
    hispi_hs_hook.cl_atomic = 0;
    uint64_t rs = test_seed() + 4007 + (uint64_t)_i;
    hisp_context ctx = test_context(_i);
    static const int parts[] = {1, 3, 64};
    for (int pi = 0; pi < 3; pi++) {
        hispi_hs_hook.cl_parts = parts[pi];
        for (int ti = 0; ti < 2; ti++) {
            hisp_type t = ti ? HISP_F64 : HISP_F32;
            if (t == HISP_F64 && !test_fp64(ctx)) continue;
            hisp_matrix A = test_random_matrix(ctx, t, 300 + 97 * pi, 200 + 61 * ti, 0.03, &rs);
            hisp_gen_params gp;
            hisp_gen_defaults(HISP_GEN_CIRCUIT, &gp);
            gp.seed = test_seed();
            gp.n = 2000;
            hisp_matrix C = NULL;
            CK_OK(ctx, hisp_matrix_generate(ctx, &gp, t, &C));
            for (int v = 0; v < 8; v++) {
                char what[400];
                snprintf(what, sizeof what, "%s: owner ranges %d", test_label(_i), parts[pi]);
                if (!check_hs(ctx, _i, v & 4 ? C : A, v & 2 ? 256 : 4,
                              v & 1 ? HISP_OP_T : HISP_OP_N, (v >> 1) & 1, v & 1 ? 1.0 : -2.5,
                              v == 5, &rs, what)) {
                    hisp_matrix_destroy(&A);
                    hisp_matrix_destroy(&C);
                    hispi_hs_hook.cl_parts = 0;
                    hisp_context_destroy(&ctx);
                    return;
                }
            }
            /* one handle, both ops in turn */
            CK_OK(ctx, hisp_matrix_set_node_size(A, 16));
            hisp_matrix H = NULL;
            CK_OK(ctx, hisp_matrix_duplicate(A, HISP_FORMAT_HISPARSE, &H));
            hisp_matrix_info info;
            CK_OK(ctx, hisp_matrix_get_info(H, &info));
            size_t es = hisp_type_size(t);
            int64_t mx = info.nrows > info.ncols ? info.nrows : info.ncols;
            void *xh = malloc((size_t)mx * es), *y0 = malloc((size_t)mx * es);
            void *yr = malloc((size_t)mx * es), *yd = malloc((size_t)mx * es);
            ck_assert(xh && y0 && yr && yd);
            for (int64_t i = 0; i < mx; i++) {
                st(t, xh, i, test_uniform(&rs));
                st(t, y0, i, test_uniform(&rs));
            }
            double alpha = 1.25, beta = -0.5;
            float af = 1.25f, bf = -0.5f;
            const void *ap = t == HISP_F32 ? (const void *)&af : (const void *)&alpha;
            const void *bp = t == HISP_F32 ? (const void *)&bf : (const void *)&beta;
            for (int k = 0; k < 6; k++) {
                hisp_op op = k & 1 ? HISP_OP_T : HISP_OP_N;
                int64_t m = op == HISP_OP_N ? info.nrows : info.ncols;
                test_spmv_host(ctx, op, ap, H, xh, bp, y0, yd);
                memcpy(yr, y0, (size_t)m * es);
                ck_assert_int_eq(hispi_hisparse_ref_spmv(ctx, H->hs, op, alpha, xh, beta, yr), 0);
                double err = test_rel_error(t, yd, yr, m);
                ck_assert_msg(err < (t == HISP_F32 ? 1e-5 : 1e-12),
                              "%s: ranges %d, %s, alternating ops, call %d: relative error %g",
                              test_label(_i), parts[pi], hisp_type_name(t), k, err);
            }
            free(xh), free(y0), free(yr), free(yd);
            hisp_matrix_destroy(&H);
            hisp_matrix_destroy(&A);
            hisp_matrix_destroy(&C);
        }
    }
    hispi_hs_hook.cl_parts = 0;
    hisp_context_destroy(&ctx);
}
END_TEST

/* Infinities in x through the scheduled SpMV and the replay: rows of
 * random length (odd and even leaf counts, long runs, so CUDA's replay
 * plans are padded and its two-entry lanes run for A x), positive entries,
 * +inf in a few entries of x. y is +inf exactly where the reference's is
 * and finite and close elsewhere: a kernel that multiplied a padding or
 * empty slot (0 * inf) would leave a NaN. */
START_TEST(test_hs_replay_inf)
{
    uint64_t rs = test_seed() + 4006 + (uint64_t)_i;
    hisp_context ctx = test_context(_i);
    const int64_t n = 2500;
    int32_t *ri = malloc(12 * (size_t)n * sizeof *ri), *ci = malloc(12 * (size_t)n * sizeof *ci);
    double *vd = malloc(12 * (size_t)n * sizeof *vd);
    float *vf = malloc(12 * (size_t)n * sizeof *vf);
    double *xh = malloc((size_t)n * sizeof *xh), *yr = malloc((size_t)n * sizeof *yr);
    double *yd = malloc((size_t)n * sizeof *yd);
    ck_assert(ri && ci && vd && vf && xh && yr && yd);
    int64_t nnz = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = i, len = 1 + (int64_t)(test_rand(&rs) % 11); j < n && j < i + len; j++) {
            ri[nnz] = (int32_t)i;
            ci[nnz] = (int32_t)j;
            vd[nnz] = 1.5 + test_uniform(&rs); /* in [0.5, 2.5): no inf - inf */
            vf[nnz] = (float)vd[nnz];
            nnz++;
        }
    for (int ti = 0; ti < 2; ti++) {
        hisp_type t = ti ? HISP_F64 : HISP_F32;
        if (t == HISP_F64 && !test_fp64(ctx)) continue;
        size_t es = hisp_type_size(t);
        hisp_matrix A = NULL, H = NULL;
        CK_OK(ctx, hisp_matrix_create_coo(ctx, t, n, n, nnz, ri, ci,
                                          t == HISP_F32 ? (const void *)vf : (const void *)vd, &A));
        CK_OK(ctx, hisp_matrix_set_node_size(A, 16));
        CK_OK(ctx, hisp_matrix_duplicate(A, HISP_FORMAT_HISPARSE, &H));
        for (int op = 0; op < 2; op++) {
            void *xv = malloc((size_t)n * es), *yv = malloc((size_t)n * es);
            ck_assert(xv && yv);
            for (int64_t i = 0; i < n; i++)
                xh[i] = 1.5 + test_uniform(&rs);
            for (int k = 0; k < 3; k++)
                xh[test_rand(&rs) % (uint64_t)n] = INFINITY;
            for (int64_t i = 0; i < n; i++)
                st(t, xv, i, xh[i]);
            double one = 1, zero = 0;
            float onef = 1, zerof = 0;
            const void *ap = t == HISP_F32 ? (const void *)&onef : (const void *)&one;
            const void *bp = t == HISP_F32 ? (const void *)&zerof : (const void *)&zero;
            memset(yv, 0, (size_t)n * es); /* finite: the reference computes beta * y */
            ck_assert_int_eq(hispi_hisparse_ref_spmv(ctx, H->hs, (hisp_op)op, 1.0, xv, 0.0, yv),
                             HISP_SUCCESS);
            for (int64_t i = 0; i < n; i++)
                yr[i] = ld(t, yv, i);
            hisp_vector x = NULL, y = NULL;
            CK_OK(ctx, hisp_vector_create(ctx, t, n, &x));
            CK_OK(ctx, hisp_vector_create(ctx, t, n, &y));
            CK_OK(ctx, hisp_vector_write(x, xv));
            for (int run = 0; run < 4; run++) { /* scheduled, then three replays */
                hisp_status s = hisp_spmv(ctx, (hisp_op)op, ap, H, x, bp, y);
                if (unsupported(ctx, s, _i)) break;
                CK_OK(ctx, s);
                CK_OK(ctx, hisp_vector_read(y, yv));
                int64_t infs = 0;
                for (int64_t i = 0; i < n; i++) {
                    double dv = ld(t, yv, i);
                    yd[i] = dv;
                    infs += isinf(yr[i]) != 0;
                    ck_assert_msg(!isinf(dv) == !isinf(yr[i]) && !isnan(dv),
                                  "%s: %s op %c run %d: y[%lld] = %g, reference %g", test_label(_i),
                                  hisp_type_name(t), op ? 'T' : 'N', run, (long long)i, dv, yr[i]);
                    if (!isinf(dv))
                        ck_assert_msg(fabs(dv - yr[i]) <=
                                          (t == HISP_F32 ? 1e-5 : 1e-12) * (fabs(yr[i]) + 1),
                                      "%s: y[%lld] = %.17g, reference %.17g", test_label(_i),
                                      (long long)i, dv, yr[i]);
                }
                ck_assert_int_gt(infs, 0);
            }
            hisp_vector_destroy(&x);
            hisp_vector_destroy(&y);
            free(xv), free(yv);
        }
        hisp_matrix_destroy(&H);
        hisp_matrix_destroy(&A);
    }
    free(ri), free(ci), free(vd), free(vf), free(xh), free(yr), free(yd);
    hisp_context_destroy(&ctx);
}
END_TEST

/* y = op(H) x (alpha 1.5, beta 0) on the target against the reference;
 * the host-to-device data bytes the call moved in *moved. */
static void resident_spmv(hisp_context ctx, hisp_matrix H, hisp_op op, hisp_vector x,
                          const double *xh, hisp_vector y, uint64_t *moved, const char *what)
{
    hisp_matrix_info info;
    CK_OK(ctx, hisp_matrix_get_info(H, &info));
    int64_t m = op == HISP_OP_N ? info.nrows : info.ncols;
    double a = 1.5, b = 0;
    hisp_transfer_stats t0, t1;
    CK_OK(ctx, hisp_context_transfers(ctx, &t0));
    CK_OK(ctx, hisp_spmv(ctx, op, &a, H, x, &b, y));
    CK_OK(ctx, hisp_context_transfers(ctx, &t1));
    *moved = t1.h2d_bytes - t0.h2d_bytes;
    double *yd = malloc((size_t)m * sizeof *yd), *yr = calloc((size_t)m, sizeof *yr);
    ck_assert(yd && yr);
    CK_OK(ctx, hisp_vector_read(y, yd));
    ck_assert_int_eq(hispi_hisparse_ref_spmv(ctx, H->hs, op, 1.5, xh, 0.0, yr), HISP_SUCCESS);
    double err = test_rel_error(HISP_F64, yd, yr, m);
    ck_assert_msg(err < 1e-12, "%s: relative error %g", what, err);
    free(yd), free(yr);
}

/* A family's pool lives on the device once: the first SpMV uploads it, a
 * duplicate's, a transposed or scaled duplicate's first SpMV and every
 * replay move no pool bytes (only the matrix's few queue set-up bytes); an
 * edit's new nodes go up alone (not the pool again), also after the device
 * copy had to grow; an injected device allocation failure is an error the
 * caller sees, with the matrix still valid and usable afterwards. */
START_TEST(test_hs_resident_pool)
{
    uint64_t rs = test_seed() + 4009 + (uint64_t)_i;
    hisp_context ctx = test_context(_i);
    if (!test_fp64(ctx)) {
        hisp_context_destroy(&ctx);
        return;
    }
    const bool device = test_kind(_i) != HISP_BACKEND_REFERENCE;
    const int64_t n = 1500;
    hisp_matrix A = test_random_matrix(ctx, HISP_F64, n, n, 0.02, &rs), H = NULL;
    CK_OK(ctx, hisp_matrix_set_node_size(A, 16));
    CK_OK(ctx, hisp_matrix_duplicate(A, HISP_FORMAT_HISPARSE, &H));
    double *xh = malloc((size_t)n * sizeof *xh);
    ck_assert_ptr_nonnull(xh);
    for (int64_t i = 0; i < n; i++)
        xh[i] = test_uniform(&rs);
    hisp_vector x = NULL, y = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, n, &x));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, n, &y));
    CK_OK(ctx, hisp_vector_write(x, xh));
    /* a failed device allocation of the pool: an error, H untouched */
    hispi_pool_dev_fail_after(1);
    double a = 1, b = 0;
    hisp_status s = hisp_spmv(ctx, HISP_OP_N, &a, H, x, &b, y);
    hispi_pool_dev_fail_after(0);
    if (s == HISP_ERR_UNSUPPORTED) {
        test_skip("hisparse_dev resident pool on %s: no HiSparse SpMV", test_label(_i));
    } else {
        ck_assert_int_eq(s, HISP_ERR_OUT_OF_DEVICE_MEMORY);
        ck_assert_ptr_null(H->hs->pool->dev);
        uint64_t pool = H->hs->pool->used, moved = 0;
        char what[400];
        snprintf(what, sizeof what, "%s: resident pool", test_label(_i));
        resident_spmv(ctx, H, HISP_OP_N, x, xh, y, &moved, what);
        if (device) ck_assert_uint_ge(moved, pool); /* the first upload: the pool */
        for (int k = 0; k < 3; k++) {               /* scheduled T, then replays */
            resident_spmv(ctx, H, k & 1 ? HISP_OP_N : HISP_OP_T, x, xh, y, &moved, what);
            if (k) ck_assert_uint_eq(moved, 0);
        }
        /* duplicates, transposed, scaled: the same device pool */
        hisp_matrix D = NULL;
        CK_OK(ctx, hisp_matrix_duplicate(H, HISP_FORMAT_HISPARSE, &D));
        CK_OK(ctx, hisp_matrix_transpose(D));
        double scd = -0.75;
        CK_OK(ctx, hisp_matrix_scale(D, &scd));
        for (int k = 0; k < 3; k++) {
            resident_spmv(ctx, D, k & 1 ? HISP_OP_T : HISP_OP_N, x, xh, y, &moved, what);
            ck_assert_msg(moved < pool / 4, "%s: a duplicate's SpMV moved %llu bytes (pool %llu)",
                          what, (unsigned long long)moved, (unsigned long long)pool);
        }
        ck_assert_int_eq(H->hs->pool->dev_users, 2);
        /* an edit: only its new nodes go up, also when the device copy
         * grows (its first allocation failing: the exact size is tried) */
        int32_t er[40], ec[40];
        double ev[40];
        for (int k = 0; k < 40; k++) {
            er[k] = (int32_t)(test_rand(&rs) % (uint64_t)n);
            ec[k] = (int32_t)(test_rand(&rs) % (uint64_t)n);
            ev[k] = test_uniform(&rs);
        }
        hisp_matrix E = NULL;
        hisp_edit_stats es;
        CK_OK(ctx, hisp_matrix_edit(D, 40, er, ec, ev, NULL, &E, &es));
        ck_assert_uint_gt(H->hs->pool->used, pool);
        hispi_pool_dev_fail_after(1);
        resident_spmv(ctx, E, HISP_OP_N, x, xh, y, &moved, what);
        hispi_pool_dev_fail_after(0);
        ck_assert_msg(moved < pool / 2, "%s: an edit's SpMV moved %llu bytes (pool %llu, new %llu)",
                      what, (unsigned long long)moved, (unsigned long long)pool,
                      (unsigned long long)es.bytes_added);
        /* the earlier members rebuild over the moved pool, moving nothing */
        resident_spmv(ctx, H, HISP_OP_N, x, xh, y, &moved, what);
        ck_assert_msg(moved < pool / 4, "%s: after the move, H's SpMV moved %llu bytes", what,
                      (unsigned long long)moved);
        resident_spmv(ctx, D, HISP_OP_T, x, xh, y, &moved, what);
        hisp_matrix_destroy(&E);
        hisp_matrix_destroy(&D);
        ck_assert_int_eq(H->hs->pool->dev_users, 1);
    }
    hisp_vector_destroy(&x);
    hisp_vector_destroy(&y);
    hisp_matrix_destroy(&H);
    hisp_matrix_destroy(&A);
    free(xh);
    hisp_context_destroy(&ctx);
}
END_TEST

/* CUDA's host-polled controller (hispi_hs_hook.cuda_host_controller): the
 * same rounds and counts as the device controller's, and the path
 * compute-sanitizer racecheck can check (the tcase hisparse_dev_host runs
 * only this test, so the device controller's module is never loaded). */
START_TEST(test_hs_host_controller)
{
    if (test_kind(_i) != HISP_BACKEND_CUDA) return;
    hispi_hs_hook.cuda_host_controller = 1;
    uint64_t rs = test_seed() + 4008 + (uint64_t)_i;
    hisp_context ctx = test_context(_i);
    for (int ti = 0; ti < 2; ti++) {
        hisp_type t = ti ? HISP_F64 : HISP_F32;
        hisp_matrix A = test_random_matrix(ctx, t, 400, 300, 0.03, &rs);
        hisp_gen_params gp;
        hisp_gen_defaults(HISP_GEN_CIRCUIT, &gp);
        gp.seed = test_seed();
        gp.n = 3000;
        hisp_matrix C = NULL;
        CK_OK(ctx, hisp_matrix_generate(ctx, &gp, t, &C));
        for (int v = 0; v < 8; v++) {
            char what[400];
            snprintf(what, sizeof what, "%s: host-polled controller", test_label(_i));
            ck_assert(check_hs(ctx, _i, v & 4 ? C : A, v & 2 ? 128 : 16,
                               v & 1 ? HISP_OP_T : HISP_OP_N, (v >> 1) & 1, 1.5, v == 3, &rs,
                               what));
        }
        hisp_matrix_destroy(&A);
        hisp_matrix_destroy(&C);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

static void reset_hooks(void)
{
    memset(&hispi_hs_hook, 0, sizeof hispi_hs_hook);
}

/* The policy: every queue named, launch rule progress, thresholds. */
START_TEST(test_hs_policy)
{
    hispi_sched_policy p;
    for (int d = 4; d <= 256; d *= 2) {
        hispi_sched_spmv_policy(d, HISP_F64, &p);
        ck_assert_int_eq(p.nqueues, HISPI_SQ_SPMV);
        for (int q = 0; q < p.nqueues; q++) {
            ck_assert_str_eq(p.q[q].name, hisp_sched_queue_name(q));
            ck_assert(p.q[q].tpn >= 1 && p.q[q].tpn <= p.q[q].group);
            ck_assert_int_eq(p.q[q].tpn & (p.q[q].tpn - 1), 0);
            ck_assert(p.q[q].threshold >= 1);
        }
        uint64_t pending[HISP_SCHED_MAX_QUEUES] = {0};
        bool launch[HISP_SCHED_MAX_QUEUES];
        ck_assert_int_eq(hispi_sched_pick(&p, pending, launch), 0);
        pending[HISPI_SQ_LEAF_1] = 1; /* below its threshold, but alone: launched */
        ck_assert_int_eq(hispi_sched_pick(&p, pending, launch), 1);
        ck_assert(launch[HISPI_SQ_LEAF_1]);
        pending[HISPI_SQ_INNER_FEW] = 1; /* inner work first, the leaf waits */
        ck_assert_int_eq(hispi_sched_pick(&p, pending, launch), 1);
        ck_assert(launch[HISPI_SQ_INNER_FEW] && !launch[HISPI_SQ_LEAF_1]);
    }
    ck_assert_ptr_null(hisp_sched_queue_name(-1));
    ck_assert_ptr_null(hisp_sched_queue_name(HISPI_SQ_SPMV));
    ck_assert_int_eq(hispi_sched_spmv_queue(HISPI_LEAF_COO1, 1), HISPI_SQ_LEAF_1);
    ck_assert_int_eq(hispi_sched_spmv_queue(HISPI_LEAF_COO4, 32), HISPI_SQ_LEAF_FEW);
    ck_assert_int_eq(hispi_sched_spmv_queue(HISPI_LEAF_COO4, 33), HISPI_SQ_LEAF_MANY);
    ck_assert_int_eq(hispi_sched_spmv_queue(HISPI_INNER_COO2, 2), HISPI_SQ_INNER_FEW);
    ck_assert_int_eq(hispi_sched_spmv_queue(HISPI_INNER_DENSE, 0), HISPI_SQ_INNER_DENSE);
    ck_assert_int_eq(hispi_sched_spmv_queue(HISPI_LEAF_DENSE, 0), HISPI_SQ_LEAF_DENSE);
}
END_TEST

Suite *suite_hisparse_dev(void)
{
    Suite *s = suite_create("hisparse_dev");
    int n = test_targets(NULL);
    TCase *tc = test_tcase(s, "hisparse_dev", 900);
    tcase_add_checked_fixture(tc, reset_hooks, reset_hooks);
    tcase_add_test(tc, test_hs_policy);
    tcase_add_loop_test(tc, test_hs_queues, 0, NMAP * n);
    tcase_add_loop_test(tc, test_hs_tiny, 0, n);
    tcase_add_loop_test(tc, test_hs_random, 0, NMAP * n);
    tcase_add_loop_test(tc, test_hs_structured, 0, n);
    tcase_add_loop_test(tc, test_hs_mtx_files, 0, n);
    tcase_add_loop_test(tc, test_hs_backend_switch, 0, n);
    tcase_add_loop_test(tc, test_hs_cli, 0, n);
    tcase_add_loop_test(tc, test_hs_owner_parts, 0, n);
    tcase_add_loop_test(tc, test_hs_replay_inf, 0, n);
    tcase_add_loop_test(tc, test_hs_resident_pool, 0, n);
    TCase *th = test_tcase(s, "hisparse_dev_host", 900);
    tcase_add_checked_fixture(th, reset_hooks, reset_hooks);
    tcase_add_loop_test(th, test_hs_host_controller, 0, n);
    return s;
}
