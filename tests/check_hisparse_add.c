/* The HiSparse addition on every backend (issue 5) against the host
 * reference: random and structured pairs, B moved from A by normal offsets,
 * disjoint and identical patterns, empty operands, dense nodes on one side,
 * every transpose combination with scales, d = 4 / 16 / 128, the
 * pool-too-small path, shared subtrees, exact zero sums. Every result is
 * also saved and loaded (load validates every node reference). */
#include "testutil.h"
#include "hispi.h" /* the test hooks (also without CUDA) */
#ifdef HISP_HAVE_CUDA
#include "backend/backend.h" /* HISPI_PROG_* */
#endif

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    int64_t m, n, nnz;
    int32_t *r, *c;
    double *v;
} coo;

static void coo_free(coo *a)
{
    free(a->r);
    free(a->c);
    free(a->v);
    memset(a, 0, sizeof *a);
}

static void coo_push(coo *a, int64_t cap, int32_t r, int32_t c, double v)
{
    ck_assert_int_lt(a->nnz, cap);
    a->r[a->nnz] = r;
    a->c[a->nnz] = c;
    a->v[a->nnz] = v;
    a->nnz++;
}

static void coo_init(coo *a, int64_t m, int64_t n, int64_t cap)
{
    a->m = m, a->n = n, a->nnz = 0;
    a->r = malloc((size_t)(cap + 1) * sizeof *a->r);
    a->c = malloc((size_t)(cap + 1) * sizeof *a->c);
    a->v = malloc((size_t)(cap + 1) * sizeof *a->v);
    ck_assert(a->r && a->c && a->v);
}

/* Random entries with density p (no duplicates: one draw per cell). */
static coo random_coo(int64_t m, int64_t n, double p, uint64_t *st)
{
    coo a;
    int64_t cap = (int64_t)(p * (double)m * (double)n * 1.5) + 64;
    coo_init(&a, m, n, cap);
    if (p <= 0) return a;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++)
            if ((test_uniform(st) + 1) / 2 < p && a.nnz < cap)
                coo_push(&a, cap, (int32_t)i, (int32_t)j, test_uniform(st));
    return a;
}

/* Every entry of a moved by rounded normal offsets (sigma), fresh values;
 * duplicates are summed by the conversions. */
static coo moved_coo(const coo *a, double sigma, uint64_t *st)
{
    coo b;
    coo_init(&b, a->m, a->n, a->nnz);
    for (int64_t k = 0; k < a->nnz; k++) {
        int64_t r, c;
        do {
            double u1 = (test_uniform(st) + 1) / 2 + 1e-12, u2 = (test_uniform(st) + 1) / 2;
            double z0 = sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
            double z1 = sqrt(-2 * log(u1)) * sin(6.283185307179586 * u2);
            r = a->r[k] + (int64_t)lround(sigma * z0);
            c = a->c[k] + (int64_t)lround(sigma * z1);
        } while (r < 0 || r >= a->m || c < 0 || c >= a->n);
        coo_push(&b, a->nnz, (int32_t)r, (int32_t)c, test_uniform(st));
    }
    return b;
}

static hisp_matrix make(hisp_context ctx, hisp_type t, const coo *a, int d)
{
    int nc = hisp_type_components(t);
    void *v = malloc((size_t)(a->nnz + 1) * 8 * (size_t)nc);
    for (int64_t k = 0; k < a->nnz; k++)
        for (int c = 0; c < nc; c++) { /* complex: a second, different component */
            double x = c ? 0.5 - a->v[k] * a->v[k] : a->v[k];
            if (t == HISP_F32 || t == HISP_C32)
                ((float *)v)[k * nc + c] = (float)x;
            else
                ((double *)v)[k * nc + c] = x;
        }
    hisp_matrix M = NULL;
    CK_OK(ctx, hisp_matrix_create_coo(ctx, t, a->m, a->n, a->nnz, a->r, a->c, v, &M));
    free(v);
    if (d) {
        CK_OK(ctx, hisp_matrix_set_node_size(M, d));
        CK_OK(ctx, hisp_matrix_convert(M, HISP_FORMAT_HISPARSE));
    }
    return M;
}

/* C (any context) equals R: same sizes, same pattern, values close. */
static void same(hisp_context ctx, hisp_matrix C, hisp_matrix R, const char *what)
{
    test_same_matrix(ctx, C, ctx, R, what);
}

/* C's tree is well formed: it saves and loads (load checks every node). */
static void well_formed(hisp_context ctx, hisp_matrix C)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/hisp-add-%d.hisp", (int)getpid());
    CK_OK(ctx, hisp_matrix_save(C, path));
    hisp_matrix L = NULL;
    CK_OK(ctx, hisp_matrix_load(ctx, path, &L));
    same(ctx, L, C, "reloaded");
    hisp_matrix_destroy(&L);
    remove(path);
}

/* C (in ctx) equals R (in the reference context ref) and is well formed. */
static void same_as_ref(hisp_context ctx, hisp_matrix C, hisp_context ref, hisp_matrix R,
                        const char *what)
{
    hisp_matrix rc = NULL, Rc = NULL; /* R moved into ctx through its COO arrays */
    const int32_t *rr, *cc;
    const void *vv;
    hisp_matrix_info ri;
    CK_OK(ref, hisp_matrix_duplicate(R, HISP_FORMAT_COO, &rc));
    CK_OK(ref, hisp_matrix_get_info(rc, &ri));
    CK_OK(ref, hisp_matrix_host_arrays(rc, NULL, &rr, &cc, &vv));
    CK_OK(ctx, hisp_matrix_create_coo(ctx, ri.type, ri.nrows, ri.ncols, ri.nnz, rr, cc, vv, &Rc));
    same(ctx, C, Rc, what);
    well_formed(ctx, C);
    hisp_matrix_destroy(&Rc);
    hisp_matrix_destroy(&rc);
}

/* op_a(A) + op_b(B) on target ctx against the reference context, for
 * operands given as COO with node sizes, state (transposed flags, scales).
 * Returns the stats of the device run. */
typedef struct {
    int d, db;     /* node sizes of A and B (0: B in CSR) */
    int ta, tb;    /* hisp_matrix_transpose applied to A / B */
    double sa, sb; /* scales (1: none) */
    int opa, opb;  /* ops */
} setup;

static hisp_add_stats run_case(hisp_context ctx, hisp_context ref, hisp_type t, const coo *a,
                               const coo *b, setup su, const char *what)
{
    hisp_matrix A[2], B[2], C[2];
    hisp_context cs[2] = {ctx, ref};
    for (int i = 0; i < 2; i++) {
        A[i] = make(cs[i], t, a, su.d);
        B[i] = make(cs[i], t, b, su.db);
        if (su.ta) CK_OK(cs[i], hisp_matrix_transpose(A[i]));
        if (su.tb) CK_OK(cs[i], hisp_matrix_transpose(B[i]));
        float f[2] = {(float)su.sa, (float)su.sb};
        double g[2] = {su.sa, su.sb};
        if (su.sa != 1)
            CK_OK(cs[i], hisp_matrix_scale(A[i], t == HISP_F32 || t == HISP_C32 ? (void *)&f[0]
                                                                                : (void *)&g[0]));
        if (su.sb != 1)
            CK_OK(cs[i], hisp_matrix_scale(B[i], t == HISP_F32 || t == HISP_C32 ? (void *)&f[1]
                                                                                : (void *)&g[1]));
        CK_OK(cs[i], hisp_matrix_add((hisp_op)su.opa, A[i], (hisp_op)su.opb, B[i], &C[i]));
    }
    hisp_add_stats st;
    CK_OK(ctx, hisp_context_add_stats(ctx, &st));
    hisp_matrix_info info;
    CK_OK(ctx, hisp_matrix_get_info(C[0], &info));
    ck_assert_int_eq(info.format, HISP_FORMAT_HISPARSE);
    ck_assert_int_eq(st.nnz, info.nnz);
    /* the result outlives its operands (shared nodes hold references) */
    for (int i = 0; i < 2; i++) {
        hisp_matrix_destroy(&A[i]);
        hisp_matrix_destroy(&B[i]);
    }
    same_as_ref(ctx, C[0], ref, C[1], what);
    hisp_matrix_destroy(&C[0]);
    hisp_matrix_destroy(&C[1]);
    return st;
}

START_TEST(test_add_random)
{
    uint64_t st = test_seed() + 5101;
    hisp_context ctx = test_context(_i), ref = test_default_context();
    static const int ds[3] = {4, 16, 128};
    for (int ty = 0; ty < 2; ty++) {
        hisp_type t = ty ? HISP_F64 : HISP_F32;
        for (int di = 0; di < 3; di++) {
            int d = ds[di];
            int64_t m = d == 4 ? 37 : d == 16 ? 300 : 700, n = d == 4 ? 53 : d == 16 ? 260 : 900;
            coo a = random_coo(m, n, d == 128 ? 0.01 : 0.06, &st);
            coo b = moved_coo(&a, 10, &st);
            char what[80];
            snprintf(what, sizeof what, "%s d=%d moved", hisp_type_name(t), d);
            hisp_add_stats s = run_case(ctx, ref, t, &a, &b, (setup){d, d, 0, 0, 1, 1, 0, 0}, what);
            if (test_on_device(_i)) ck_assert_int_gt(s.nodes_new, 0);
            /* a random second operand (other density) */
            coo c = random_coo(m, n, 0.2, &st);
            snprintf(what, sizeof what, "%s d=%d random", hisp_type_name(t), d);
            run_case(ctx, ref, t, &a, &c, (setup){d, d, 0, 0, 1, 1, 0, 0}, what);
            coo_free(&a);
            coo_free(&b);
            coo_free(&c);
        }
    }
    hisp_context_destroy(&ctx);
    hisp_context_destroy(&ref);
}
END_TEST

/* Complex entries (two scalars per entry) and the largest node size. */
START_TEST(test_add_complex_d256)
{
    uint64_t st = test_seed() + 5106;
    hisp_context ctx = test_context(_i), ref = test_default_context();
    coo a = random_coo(700, 600, 0.01, &st), b = moved_coo(&a, 10, &st);
    coo q = random_coo(600, 600, 0.01, &st), r = moved_coo(&q, 10, &st); /* square: mixed ops */
    hisp_type ts[2] = {HISP_C32, HISP_C64};
    for (int i = 0; i < 2; i++) {
        run_case(ctx, ref, ts[i], &a, &b, (setup){16, 16, 0, 0, 1.5, -2, 0, 0}, "complex d 16");
        run_case(ctx, ref, ts[i], &a, &b, (setup){16, 16, 0, 1, 1, 1, 1, 0}, "complex, flags");
        run_case(ctx, ref, ts[i], &q, &r, (setup){16, 16, 0, 0, 1, 1, 0, 1}, "complex A + B^T");
    }
    run_case(ctx, ref, HISP_F64, &a, &b, (setup){256, 256, 0, 0, 1, 1, 0, 0}, "d 256");
    run_case(ctx, ref, HISP_F32, &q, &r, (setup){256, 256, 0, 0, 1, 0.5, 1, 0}, "d 256 A^T + B");
    coo_free(&a);
    coo_free(&b);
    coo_free(&q);
    coo_free(&r);
    hisp_context_destroy(&ctx);
    hisp_context_destroy(&ref);
}
END_TEST

/* Every transpose combination, with transposed flags, scales and ops. */
START_TEST(test_add_transposes)
{
    uint64_t st = test_seed() + 5102;
    hisp_context ctx = test_context(_i), ref = test_default_context();
    int64_t m = 150, n = 110;
    for (int ty = 0; ty < 2; ty++) {
        hisp_type t = ty ? HISP_F64 : HISP_F32;
        coo a = random_coo(m, n, 0.05, &st);
        coo bn = moved_coo(&a, 6, &st);       /* m x n */
        coo bt = random_coo(n, m, 0.05, &st); /* n x m */
        for (int opa = 0; opa < 2; opa++)
            for (int opb = 0; opb < 2; opb++)
                for (int flags = 0; flags < 4; flags++) {
                    int ta = flags & 1, tb = flags >> 1;
                    /* op(A) shows m x n when opa == ta */
                    bool a_mn = opa == ta;
                    /* B's stored shape so that op_b(B) matches op_a(A) */
                    bool b_mn = (opb == tb) == a_mn;
                    const coo *b = b_mn ? &bn : &bt;
                    char what[96];
                    snprintf(what, sizeof what, "%s op %d%d flags %d%d", hisp_type_name(t), opa,
                             opb, ta, tb);
                    run_case(
                        ctx, ref, t, &a, b,
                        (setup){16, 16, ta, tb, flags == 3 ? 1 : 2.5, opb ? -0.5 : 1, opa, opb},
                        what);
                }
        /* a different node size and a CSR operand: converted first */
        run_case(ctx, ref, t, &a, &bn, (setup){16, 8, 0, 0, 1, 1, 0, 0}, "d 16 + d 8");
        run_case(ctx, ref, t, &a, &bn, (setup){16, 0, 0, 0, 1, 1, 0, 0}, "d 16 + COO");
        coo_free(&a);
        coo_free(&bn);
        coo_free(&bt);
    }
    hisp_context_destroy(&ctx);
    hisp_context_destroy(&ref);
}
END_TEST

/* Structured pairs: disjoint and identical patterns, empty operands, a
 * dense block (dense nodes) on one side or both, exact zero sums. */
START_TEST(test_add_structured)
{
    uint64_t st = test_seed() + 5103;
    hisp_context ctx = test_context(_i), ref = test_default_context();
    for (int ty = 0; ty < 2; ty++) {
        hisp_type t = ty ? HISP_F64 : HISP_F32;
        int64_t m = 96, n = 96;
        coo upper, lower, dense, none, a, dlow;
        coo_init(&dlow, m, n, m * n);
        coo_init(&upper, m, n, m * n);
        coo_init(&lower, m, n, m * n);
        coo_init(&dense, m, n, m * n);
        coo_init(&none, m, n, 0);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double u = (test_uniform(&st) + 1) / 2;
                if (j > i && u < 0.1) coo_push(&upper, m * n, (int32_t)i, (int32_t)j, u + 0.1);
                if (j < i && u < 0.1) coo_push(&lower, m * n, (int32_t)i, (int32_t)j, -u - 0.1);
                if (i >= 64 && i < 80 && j < 16) /* a dense leaf where upper has none */
                    coo_push(&dlow, m * n, (int32_t)i, (int32_t)j, test_uniform(&st) - 2);
                if (i >= 16 && i < 48 && j >= 32 && j < 64) /* two full 16x16 leaves */
                    coo_push(&dense, m * n, (int32_t)i, (int32_t)j, test_uniform(&st) + 2);
            }
        a = random_coo(m, n, 0.08, &st);
        setup s16 = {16, 16, 0, 0, 1, 1, 0, 0};
        run_case(ctx, ref, t, &upper, &lower, s16, "disjoint");
        hisp_add_stats s = run_case(ctx, ref, t, &a, &a, s16, "identical pattern");
        ck_assert_int_eq(s.subtrees_shared, 0); /* every node is a pair */
        setup neg = s16;
        neg.sb = -1; /* A + (-A): exact zeros stay entries */
        s = run_case(ctx, ref, t, &a, &a, neg, "A - A");
        ck_assert_int_eq(s.nnz, a.nnz);
        run_case(ctx, ref, t, &a, &none, s16, "B empty");
        run_case(ctx, ref, t, &none, &a, s16, "A empty");
        run_case(ctx, ref, t, &none, &none, s16, "both empty");
        run_case(ctx, ref, t, &dense, &a, s16, "dense + sparse");
        run_case(ctx, ref, t, &a, &dense, s16, "sparse + dense");
        s = run_case(ctx, ref, t, &dense, &dense, s16, "dense + dense");
        ck_assert_int_eq(s.zero_retries, 0);
        neg.opa = neg.opb = 1;
        /* exact zero sums in leaves written dense: stored as -0.0 (an entry, not
         * an empty cell), no round redone; equal to the reference's +0.0 */
        s = run_case(ctx, ref, t, &dense, &dense, neg, "dense^T - dense^T (zeros: -0.0)");
        ck_assert_int_eq(s.zero_retries, 0);
        ck_assert_int_eq(s.nnz, dense.nnz);
        setup mix = s16;
        mix.opb = 1;
        run_case(ctx, ref, t, &dense, &a, mix, "dense + sparse^T");
        run_case(ctx, ref, t, &a, &dense, mix, "sparse + dense^T");
        /* one side only in a region: A's subtrees there are shared */
        s = run_case(ctx, ref, t, &upper, &dense, s16, "upper + block");
        if (test_on_device(_i)) ck_assert_int_gt(s.subtrees_shared, 0);
        s = run_case(ctx, ref, t, &upper, &dlow, s16, "upper + dense leaf alone (copied)");
        if (test_on_device(_i)) ck_assert_int_gt(s.subtrees_copied, 0);
        neg.opa = neg.opb = 0;
        run_case(ctx, ref, t, &upper, &dlow, neg, "upper - dense leaf alone (copied, scaled)");
        coo_free(&dlow);
        coo_free(&upper);
        coo_free(&lower);
        coo_free(&dense);
        coo_free(&none);
        coo_free(&a);
    }
    hisp_context_destroy(&ctx);
    hisp_context_destroy(&ref);
}
END_TEST

/* A dense leaf that breaks the construction's rule (a file may hold one:
 * three cells set) added to a sparse leaf. A device writes a sum with a
 * dense operand as a dense leaf at once; here it finds the union too small
 * for one and redoes the round with the check first, so the result leaf is
 * COO, as the reference's rebuild makes it. */
START_TEST(test_add_dense_rule)
{
    uint64_t st = test_seed() + 7211;
    hisp_context ctx = test_context(_i), ref = test_default_context();
    for (int ty = 0; ty < 2; ty++) {
        hisp_type t = ty ? HISP_F64 : HISP_F32;
        size_t es = hisp_type_size(t);
        coo block, b = random_coo(32, 32, 0.1, &st);
        coo_init(&block, 32, 32, 256);
        for (int k = 0; k < 256; k++) /* distinct values, found in the file below */
            coo_push(&block, 256, k / 16, 16 + k % 16, 1000 + k);
        hisp_matrix A0 = make(ctx, t, &block, 16);
        size_t size;
        unsigned char *f = test_saved_bytes(ctx, A0, &size);
        hisp_matrix_destroy(&A0);
        uint64_t nnz;
        memcpy(&nnz, f + 48, 8);
        ck_assert_uint_eq(nnz, 256);
        for (int k = 0; k < 256; k++) {
            if (k == 5 || k == 100 || k == 200) continue; /* the cells kept */
            float vf = (float)(1000 + k);
            double vd = 1000 + k;
            const void *pat = es == 4 ? (const void *)&vf : (const void *)&vd;
            int found = 0;
            for (size_t o = 96; o + es <= size; o += es)
                if (!memcmp(f + o, pat, es)) {
                    memset(f + o, 0, es);
                    found++;
                }
            ck_assert_int_eq(found, 1);
            nnz--;
        }
        memcpy(f + 48, &nnz, 8);
        test_fix_checksums(f, size);
        hisp_matrix A[2], B[2], C[2];
        hisp_context cs[2] = {ctx, ref};
        for (int i = 0; i < 2; i++) {
            CK_OK(cs[i], hisp_matrix_load_buffer(cs[i], f, size, "rule", &A[i]));
            B[i] = make(cs[i], t, &b, 16);
            CK_OK(cs[i], hisp_matrix_add(HISP_OP_N, A[i], HISP_OP_N, B[i], &C[i]));
        }
        hisp_add_stats s;
        CK_OK(ctx, hisp_context_add_stats(ctx, &s));
        if (test_on_device(_i)) ck_assert_int_gt(s.zero_retries, 0);
        same_as_ref(ctx, C[0], ref, C[1], "rule-breaking dense leaf + sparse");
        for (int i = 0; i < 2; i++) {
            hisp_matrix_destroy(&A[i]);
            hisp_matrix_destroy(&B[i]);
            hisp_matrix_destroy(&C[i]);
        }
        free(f);
        coo_free(&block);
        coo_free(&b);
    }
    hisp_context_destroy(&ctx);
    hisp_context_destroy(&ref);
}
END_TEST

/* Two COO leaves whose union fills a leaf (checkerboard halves of 16 x 16
 * blocks, more than HISPI_ADD_FEW entries together): the result leaves are
 * dense, as the reference's rebuild makes them, unless a sum is exactly
 * zero (a dense leaf cannot hold it): then they stay COO. */
START_TEST(test_add_leaf_union)
{
    uint64_t st = test_seed() + 5107;
    hisp_context ctx = test_context(_i), ref = test_default_context();
    hisp_context cs[2] = {ctx, ref};
    for (int ty = 0; ty < 2; ty++) {
        hisp_type t = ty ? HISP_F64 : HISP_F32;
        int64_t m = 80, n = 64;
        for (int cancel = 0; cancel < 2; cancel++) {
            coo a, b;
            coo_init(&a, m, n, m * n);
            coo_init(&b, m, n, m * n);
            for (int64_t i = 0; i < 48; i++)
                for (int64_t j = 0; j < 32; j++) {
                    double v = test_uniform(&st) + 2; /* never 0, exact in f32 */
                    v = (float)v;
                    if ((i + j) % 2 == 0) {
                        coo_push(&a, m * n, (int32_t)i, (int32_t)j, v);
                        if (cancel && i == 3 * j % 48) /* B holds -a here: a zero sum */
                            coo_push(&b, m * n, (int32_t)i, (int32_t)j, -v);
                    } else {
                        coo_push(&b, m * n, (int32_t)i, (int32_t)j, -v / 3);
                    }
                }
            hisp_matrix A[2], B[2], C[2];
            hisp_hisparse_profile pf[2];
            for (int i = 0; i < 2; i++) {
                A[i] = make(cs[i], t, &a, 16);
                B[i] = make(cs[i], t, &b, 16);
                CK_OK(cs[i], hisp_matrix_add(HISP_OP_N, A[i], HISP_OP_N, B[i], &C[i]));
                CK_OK(cs[i], hisp_matrix_hisparse_profile(C[i], &pf[i]));
                hisp_matrix_destroy(&A[i]);
                hisp_matrix_destroy(&B[i]);
            }
            same_as_ref(ctx, C[0], ref, C[1], cancel ? "checkerboard, zero sums" : "checkerboard");
            ck_assert_int_eq(pf[1].leaf_dense, cancel ? 0 : 6);
            ck_assert_int_eq(pf[0].leaf_dense, pf[1].leaf_dense);
            ck_assert_int_eq(pf[0].leaf_sparse, pf[1].leaf_sparse);
            for (int i = 0; i < 2; i++)
                hisp_matrix_destroy(&C[i]);
            coo_free(&a);
            coo_free(&b);
        }
    }
    hisp_context_destroy(&ctx);
    hisp_context_destroy(&ref);
}
END_TEST

/* Leaf pairs over the leaf kernel's limit go to the work-group kernel (a
 * limit of 100 entries here, hispi_hs_hook.add_leaf_max): same results, the root
 * pair of a one-leaf matrix included. */
START_TEST(test_add_leaf_max)
{
    uint64_t st = test_seed() + 5108;
    hisp_context ctx = test_context(_i), ref = test_default_context();
    hispi_hs_hook.add_leaf_max = 100; /* reset by the case's teardown, also on failure */
    for (int ty = 0; ty < 2; ty++) {
        hisp_type t = ty ? HISP_F64 : HISP_F32;
        static const int ds[2] = {16, 128};
        for (int di = 0; di < 2; di++) {
            int d = ds[di];
            int64_t m = d == 16 ? 200 : 120, n = d == 16 ? 150 : 100; /* d 128: one leaf */
            coo a = random_coo(m, n, d == 16 ? 0.3 : 0.1, &st), b = moved_coo(&a, 4, &st);
            char what[80];
            snprintf(what, sizeof what, "%s d=%d, leaf pairs over 100 entries", hisp_type_name(t),
                     d);
            run_case(ctx, ref, t, &a, &b, (setup){d, d, 0, 0, 1, 1, 0, 0}, what);
            snprintf(what, sizeof what, "%s d=%d, over 100, A^T + B^T", hisp_type_name(t), d);
            run_case(ctx, ref, t, &a, &b, (setup){d, d, 1, 1, 1, -2, 0, 0}, what);
            coo_free(&a);
            coo_free(&b);
        }
    }
    hisp_context_destroy(&ctx);
    hisp_context_destroy(&ref);
}
END_TEST

/* The addition's test hooks back to their defaults (a checked teardown:
 * also after a failed case). */
static void add_hooks_reset(void)
{
    hispi_hs_hook.add_group = hispi_hs_hook.add_census_check = hispi_hs_hook.walk_threads = 0;
    hispi_hs_hook.add_leaf_max = hispi_hs_hook.add_pool_bytes = 0;
}

/* A pool far too small: rounds are redone after growing, same result. */
START_TEST(test_add_pool_small)
{
    uint64_t st = test_seed() + 5104;
    hisp_context ctx = test_context(_i), ref = test_default_context();
    coo a = random_coo(400, 400, 0.03, &st), b = moved_coo(&a, 10, &st);
    hispi_hs_hook.add_pool_bytes = 64;
    hisp_add_stats s =
        run_case(ctx, ref, HISP_F64, &a, &b, (setup){16, 16, 0, 0, 1, 1, 0, 0}, "small pool");
    setup tr = {16, 16, 0, 0, 1, 1, 1, 1};
    run_case(ctx, ref, HISP_F64, &a, &b, tr, "small pool, transposed");
    tr.opb = 0;
    run_case(ctx, ref, HISP_F32, &a, &b, tr, "small pool, mixed");
    hispi_hs_hook.add_pool_bytes = 0;
    /* the other work-group size (256 on GPUs, 64 on CPUs) */
    hispi_hs_hook.add_group = test_on_device(_i) ? 256 : 64;
    run_case(ctx, ref, HISP_F64, &a, &b, (setup){16, 16, 0, 0, 1, 1, 0, 0}, "group 256");
    run_case(ctx, ref, HISP_F32, &a, &b, (setup){128, 128, 0, 0, 1, 1, 0, 1}, "group 256, mixed");
    hispi_hs_hook.add_group = 64;
    run_case(ctx, ref, HISP_F64, &a, &b, (setup){16, 16, 0, 0, 1, 1, 1, 1}, "group 64");
    hispi_hs_hook.add_group = 0;
    if (test_on_device(_i)) ck_assert_int_gt(s.pool_retries, 0);
    coo_free(&a);
    coo_free(&b);
    hisp_context_destroy(&ctx);
    hisp_context_destroy(&ref);
}
END_TEST

/* B an edit of A (one family) with entries in regions A leaves empty:
 * C = A + B shares B's new subtrees (B is of A's family, same scale),
 * and outlives A and B. */
START_TEST(test_add_shared_family)
{
    uint64_t st = test_seed() + 5105;
    hisp_context cs[2] = {test_context(_i), test_default_context()};
    coo a = random_coo(1000, 1000, 0.01, &st);
    a.m = a.n = 2000; /* entries only in the top-left quarter */
    hisp_matrix C[2];
    hisp_add_stats s = {0};
    for (int i = 0; i < 2; i++) {
        hisp_matrix A = make(cs[i], HISP_F64, &a, 16), B = NULL;
        int32_t r[3] = {1500, 1999, 1200}, c[3] = {1600, 1999, 1900};
        double v[3] = {1.5, -2, 3};
        CK_OK(cs[i], hisp_matrix_edit(A, 3, r, c, v, NULL, &B, NULL));
        CK_OK(cs[i], hisp_matrix_add(HISP_OP_N, A, HISP_OP_N, B, &C[i]));
        if (!i) CK_OK(cs[i], hisp_context_add_stats(cs[i], &s));
        hisp_matrix_destroy(&A);
        hisp_matrix_destroy(&B);
    }
    if (test_on_device(_i)) ck_assert_int_ge(s.subtrees_shared, 1);
    same_as_ref(cs[0], C[0], cs[1], C[1], "A + edit(A)");
    for (int i = 0; i < 2; i++) {
        hisp_matrix_destroy(&C[i]);
        hisp_context_destroy(&cs[i]);
    }
    coo_free(&a);
}
END_TEST

/* The host's walks in threads (hispi_hs_hook.walk_threads = 3; by default
 * only trees of over 2e5 entries or nodes get them): the census must agree
 * with one thread's (hispi_hs_hook.add_census_check), and the shared subtrees found (A's
 * leaves that B lacks) must be as many as one thread finds; C outlives A
 * and B (run_case destroys them before reading C), so each shared node
 * got its reference. */
START_TEST(test_add_walk_threads)
{
    uint64_t st = test_seed() + 5107;
    hispi_hs_hook.add_census_check = 1;
    hisp_context ctx = test_context(_i), ref = test_default_context();
    static const int ds[2] = {4, 16};
    for (int di = 0; di < 2; di++) {
        coo a = random_coo(700, 900, 0.02, &st);
        coo b = moved_coo(&a, 10, &st);
        int64_t shared[2];
        for (int k = 0; k < 2; k++) {
            hispi_hs_hook.walk_threads = k ? 1 : 3;
            char what[64];
            snprintf(what, sizeof what, "d=%d, walks in %d threads", ds[di], k ? 1 : 3);
            setup su = {ds[di], ds[di], 0, 0, 1, 1, 0, 0};
            shared[k] = run_case(ctx, ref, HISP_F64, &a, &b, su, what).subtrees_shared;
        }
        if (test_on_device(_i)) {
            ck_assert_int_gt(shared[0], ds[di] == 4 ? 100 : 0);
            ck_assert_int_eq(shared[0], shared[1]);
        }
        coo_free(&a);
        coo_free(&b);
    }
    hispi_hs_hook.walk_threads = hispi_hs_hook.add_census_check = 0;
    hisp_context_destroy(&ctx);
    hisp_context_destroy(&ref);
}
END_TEST

/* A + B in one family on a target, with its sum R from the reference
 * backend: A random (m x n, density p), B = A moved by sigma, node size d. */
typedef struct {
    hisp_context ctx, ref;
    coo a, b;
    hisp_matrix A, B, Ar, Br, R;
} family;

static family family_open(int target, uint64_t *st, int64_t m, int64_t n, double p, double sigma,
                          int d)
{
    family f;
    f.ctx = test_context(target);
    f.ref = test_default_context();
    f.a = random_coo(m, n, p, st);
    f.b = moved_coo(&f.a, sigma, st);
    f.A = make(f.ctx, HISP_F64, &f.a, d);
    f.B = make(f.ctx, HISP_F64, &f.b, d);
    f.Ar = make(f.ref, HISP_F64, &f.a, d);
    f.Br = make(f.ref, HISP_F64, &f.b, d);
    f.R = NULL;
    CK_OK(f.ref, hisp_matrix_add(HISP_OP_N, f.Ar, HISP_OP_N, f.Br, &f.R));
    return f;
}

static void family_close(family *f)
{
    hisp_matrix *ms[5] = {&f->A, &f->B, &f->Ar, &f->Br, &f->R};
    for (int i = 0; i < 5; i++)
        hisp_matrix_destroy(ms[i]);
    coo_free(&f->a);
    coo_free(&f->b);
    hisp_context_destroy(&f->ctx);
    hisp_context_destroy(&f->ref);
}

/* Every host allocation of an addition fails in turn (the host walks in 3
 * threads): a host-memory status, never a crash or a leak (the sanitize
 * build checks leaks), and A's pool keeps its size (C's bytes go back when
 * their shared references cannot be counted); then the sum is right. */
START_TEST(test_add_out_of_memory)
{
    extern void hispi_alloc_fail_after(long);
    uint64_t st = test_seed() + 5111;
    hispi_hs_hook.walk_threads = 3;
    family f = family_open(_i, &st, 200, 240, 0.05, 6, 8);
    hisp_context ctx = f.ctx;
    hisp_hisparse_profile p0, p;
    CK_OK(ctx, hisp_matrix_hisparse_profile(f.A, &p0));
    int ok = 0;
    long k = 1;
    for (; k < 1000 && !ok; k++) {
        hisp_matrix C = NULL;
        hispi_alloc_fail_after(k);
        hisp_status s = hisp_matrix_add(HISP_OP_N, f.A, HISP_OP_N, f.B, &C);
        hispi_alloc_fail_after(0);
        if (s == HISP_SUCCESS) {
            ok = 1;
            same_as_ref(ctx, C, f.ref, f.R, "A + B after failed attempts");
            hisp_matrix_destroy(&C);
            break;
        }
        ck_assert_msg(s == HISP_ERR_OUT_OF_HOST_MEMORY, "target %d, allocation %ld failed: %s", _i,
                      k, hisp_status_string(s));
        ck_assert_ptr_null(C);
        CK_OK(ctx, hisp_matrix_hisparse_profile(f.A, &p));
        ck_assert_msg(p.pool_used == p0.pool_used, "allocation %ld failed: pool %llu, was %llu", k,
                      (unsigned long long)p.pool_used, (unsigned long long)p0.pool_used);
    }
    ck_assert_msg(ok, "target %d: no addition succeeded", _i);
    ck_assert_int_gt(k, 1); /* at least one allocation failed first */
    hispi_hs_hook.walk_threads = 0;
    family_close(&f);
}
END_TEST

/* Repeated additions into one family: destroying C frees its nodes (in any
 * order), and the next addition trims them off the pool's end first, so
 * the family's pool does not grow from one A + B to the next. */
START_TEST(test_add_repeated)
{
    uint64_t st = test_seed() + 5109;
    family f = family_open(_i, &st, 300, 300, 0.05, 8, 16);
    uint64_t used[3] = {0};
    for (int k = 0; k < 3; k++) {
        hisp_matrix C = NULL;
        hisp_hisparse_profile pf;
        CK_OK(f.ctx, hisp_matrix_add(HISP_OP_N, f.A, HISP_OP_N, f.B, &C));
        CK_OK(f.ctx, hisp_matrix_hisparse_profile(C, &pf));
        used[k] = pf.pool_used;
        same_as_ref(f.ctx, C, f.ref, f.R, "A + B, repeated");
        hisp_matrix_destroy(&C);
    }
    if (test_on_device(_i)) { /* the reference builds C in a family of its own */
        ck_assert_uint_eq(used[1], used[0]);
        ck_assert_uint_eq(used[2], used[0]);
    }
    family_close(&f);
}
END_TEST

/* The kernels compile for CUDA through NVRTC (no device needed): every
 * value type, node size and work-group size the tests run. */
START_TEST(test_add_nvrtc)
{
#ifdef HISP_HAVE_CUDA
    hisp_context ctx = test_default_context();
    static const int d[5] = {4, 16, 128, 256, 128}, lg[5] = {2, 4, 7, 8, 7};
    static const int gs[5] = {64, 256, 256, 256, 1024}, lp[5] = {2, 2, 4, 1, 1};
    for (int dbl = 0; dbl < 2; dbl++)
        for (int k = 0; k < 5; k++) {
            char opts[200];
            snprintf(opts, sizeof opts,
                     "-DVALUE_T=%s -DIS_DOUBLE=%d -DATOM64=1 -DNCOMP=%d -DD=%d -DLOG2D=%d -DGS=%d "
                     "-DLP=%d",
                     dbl ? "double" : "float", dbl, k >= 2 ? 2 : 1, d[k], lg[k], gs[k], lp[k]);
            if (!test_nvrtc_build(ctx, HISPI_PROG_HSADD, opts, "addition NVRTC builds")) {
                hisp_context_destroy(&ctx);
                return;
            }
        }
    hisp_context_destroy(&ctx);
#else
    test_skip("addition NVRTC builds: the CUDA backend is not compiled in");
#endif
}
END_TEST

Suite *suite_hisparse_add(void)
{
    Suite *s = suite_create("hisparse_add");
    int n = test_targets(NULL);
    TCase *tc = test_tcase(s, "targets", 600);
    tcase_add_checked_fixture(tc, NULL, add_hooks_reset);
    tcase_add_loop_test(tc, test_add_random, 0, n);
    tcase_add_loop_test(tc, test_add_transposes, 0, n);
    tcase_add_loop_test(tc, test_add_complex_d256, 0, n);
    tcase_add_loop_test(tc, test_add_structured, 0, n);
    tcase_add_loop_test(tc, test_add_leaf_union, 0, n);
    tcase_add_loop_test(tc, test_add_dense_rule, 0, n);
    tcase_add_loop_test(tc, test_add_pool_small, 0, n);
    tcase_add_loop_test(tc, test_add_shared_family, 0, n);
    tcase_add_loop_test(tc, test_add_walk_threads, 0, n);
    tcase_add_loop_test(tc, test_add_out_of_memory, 0, n);
    tcase_add_loop_test(tc, test_add_repeated, 0, n);
    TCase *lm = test_tcase(s, "leaf-max", 600);
    tcase_add_checked_fixture(lm, NULL, add_hooks_reset);
    tcase_add_loop_test(lm, test_add_leaf_max, 0, n);
    TCase *rtc = test_tcase(s, "nvrtc", 600);
    tcase_add_test(rtc, test_add_nvrtc);
    return s;
}
