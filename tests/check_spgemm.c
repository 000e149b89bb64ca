/* The sparse matrix-matrix product (core/ops/spgemm*.c): hisp_matrix_multiply,
 * the plan and hisp_matrix_ptap against an oracle written here (a dense
 * product in long double of the operands' COO entries, read back through
 * the public API), on every target, for every op combination, square and
 * rectangular shapes, empty rows and columns, zero and 1x1 matrices,
 * complex entries under H, operands in CSR, CSC, COO and HiSparse,
 * generators and real matrices; C's rows sorted without duplicates; the
 * plan's re-computation bit for bit against a fresh product and its refusal
 * of a changed pattern; the same bits on 1 and 3 threads; every allocation
 * of a product failed in turn. On a target with run-time kernels every
 * product must run on the device (hispi_spgemm_device_calls: no silent
 * fallback to the host; a CPU device's kernels run through a test hook, its
 * products otherwise on the host) and give the reference target's bits; the device
 * path's local and global hash tables, rows without products, and every
 * device buffer failed in turn. */
#include "amg/hispi_amg.h"   /* hispi_amg_dev_copy */
#include "backend/backend.h" /* HISPI_PROG_SPGEMM */
#include "ops/spgemm.h"      /* hispi_spgemm_refill */
#include "testutil.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern void hispi_alloc_fail_after(long);
/* the device path's hooks (core/ops/spgemm_dev.c) */
extern long hispi_spgemm_device_calls, hispi_spgemm_dev_fail_after;
/* device buffers asked for; the first block's device bytes (0: no limit) */
extern long hispi_spgemm_dev_buffers, hispi_spgemm_dev_block_bytes, hispi_spgemm_sort_slots;
/* plan executions computed on the device; a CPU device runs the kernels
 * too (core/ops/spgemm_dev.c) */
extern long hispi_spgemm_numeric_device_calls;
extern int hispi_spgemm_cpu_kernels, hispi_spgemm_no_map, hispi_spgemm_map_pairs;
extern size_t hispi_spgemm_pool_c_bytes;
extern long hispi_spgemm_maps, hispi_spgemm_word_maps, hispi_spgemm_refills;

/* Products the current target computes on the device per product: 1 on a
 * backend with run-time kernels (every one but the reference), whose
 * products must not fall back to the host silently. */
static long dev_per_product;

static hisp_context target_context(int i)
{
    const test_target *t;
    test_targets(&t);
    dev_per_product = t[i].kind != HISP_BACKEND_REFERENCE;
    hispi_spgemm_cpu_kernels = 1; /* PoCL's device runs the kernels, as a GPU does */
    return test_context(i);
}

static bool is_cplx(hisp_type t)
{
    return t == HISP_C32 || t == HISP_C64;
}

static bool is_single(hisp_type t)
{
    return t == HISP_F32 || t == HISP_C32;
}

/* op(X)'s entries as long doubles (re, im). */
typedef struct {
    int64_t m, n, nnz;
    int32_t *i, *j;
    long double *re, *im;
} entries;

static void entries_free(entries *e)
{
    free(e->i), free(e->j), free(e->re), free(e->im);
    memset(e, 0, sizeof *e);
}

static long double scalar(hisp_type t, const void *v, int64_t k)
{
    return is_single(t) ? (long double)((const float *)v)[k] : (long double)((const double *)v)[k];
}

static entries read_entries(hisp_context ctx, hisp_matrix X, hisp_op op)
{
    hisp_matrix T = NULL;
    CK_OK(ctx, hisp_matrix_duplicate(X, HISP_FORMAT_COO, &T));
    hisp_matrix_info mi;
    CK_OK(ctx, hisp_matrix_get_info(T, &mi));
    const int32_t *r, *c;
    const void *v;
    CK_OK(ctx, hisp_matrix_host_arrays(T, NULL, &r, &c, &v));
    entries e = {
        op ? mi.ncols : mi.nrows, op ? mi.nrows : mi.ncols, mi.nnz, NULL, NULL, NULL, NULL};
    size_t n = (size_t)mi.nnz + 1;
    e.i = malloc(n * sizeof *e.i), e.j = malloc(n * sizeof *e.j);
    e.re = malloc(n * sizeof *e.re), e.im = malloc(n * sizeof *e.im);
    int nc = hisp_type_components(mi.type);
    for (int64_t k = 0; k < mi.nnz; k++) {
        e.i[k] = op ? c[k] : r[k];
        e.j[k] = op ? r[k] : c[k];
        e.re[k] = scalar(mi.type, v, k * nc);
        e.im[k] = nc == 2 ? scalar(mi.type, v, k * nc + 1) : 0;
        if (op == HISP_OP_H) e.im[k] = -e.im[k];
    }
    hisp_matrix_destroy(&T);
    return e;
}

/* The dense oracle of op(A)*op(B): values, sums of magnitudes (the scale
 * of each entry's rounding) and the structure. */
typedef struct {
    int64_t m, n;
    long double *re, *im, *mag;
    char *has;
} oracle;

static void oracle_free(oracle *o)
{
    free(o->re), free(o->im), free(o->mag), free(o->has);
}

static oracle oracle_of(const entries *a, const entries *b)
{
    ck_assert_int_eq(a->n, b->m);
    oracle o = {a->m, b->n, NULL, NULL, NULL, NULL};
    size_t mn = (size_t)(o.m * o.n) + 1;
    o.re = calloc(mn, sizeof *o.re), o.im = calloc(mn, sizeof *o.im);
    o.mag = calloc(mn, sizeof *o.mag), o.has = calloc(mn, 1);
    /* b's entries by row */
    int64_t *start = calloc((size_t)b->m + 2, sizeof *start),
            *ord = malloc(((size_t)b->nnz + 1) * 8);
    for (int64_t k = 0; k < b->nnz; k++)
        start[b->i[k] + 2]++;
    for (int64_t r = 0; r < b->m; r++)
        start[r + 2] += start[r + 1];
    for (int64_t k = 0; k < b->nnz; k++)
        ord[start[b->i[k] + 1]++] = k;
    for (int64_t ka = 0; ka < a->nnz; ka++) {
        int32_t r = a->j[ka];
        for (int64_t q = start[r]; q < start[r + 1]; q++) {
            int64_t kb = ord[q];
            size_t x = (size_t)(a->i[ka] * o.n + b->j[kb]);
            long double pr = a->re[ka] * b->re[kb] - a->im[ka] * b->im[kb];
            long double pi = a->re[ka] * b->im[kb] + a->im[ka] * b->re[kb];
            o.re[x] += pr, o.im[x] += pi;
            o.mag[x] += fabsl(pr) + fabsl(pi);
            o.has[x] = 1;
        }
    }
    free(start), free(ord);
    return o;
}

/* C is a CSR matrix with the oracle's structure (rows sorted, no
 * duplicates) and values within rounding of the entry type. */
static void check_against(hisp_context ctx, hisp_matrix C, const oracle *o, const char *what)
{
    hisp_matrix_info mi;
    CK_OK(ctx, hisp_matrix_get_info(C, &mi));
    ck_assert_msg(mi.format == HISP_FORMAT_CSR, "%s: C is %s", what, hisp_format_name(mi.format));
    ck_assert_msg(mi.nrows == o->m && mi.ncols == o->n, "%s: C is %lld x %lld, want %lld x %lld",
                  what, (long long)mi.nrows, (long long)mi.ncols, (long long)o->m, (long long)o->n);
    const int64_t *p;
    const int32_t *c;
    const void *v;
    CK_OK(ctx, hisp_matrix_host_arrays(C, &p, NULL, &c, &v));
    int nc = hisp_type_components(mi.type);
    long double tol = is_single(mi.type) ? 1e-5L : 1e-13L;
    int64_t want = 0;
    for (size_t x = 0; x < (size_t)(o->m * o->n); x++)
        want += o->has[x];
    ck_assert_msg(mi.nnz == want, "%s: C has %lld entries, the oracle %lld", what,
                  (long long)mi.nnz, (long long)want);
    ck_assert_int_eq(p[0], 0);
    for (int64_t i = 0; i < o->m; i++)
        for (int64_t k = p[i]; k < p[i + 1]; k++) {
            ck_assert_msg(k == p[i] || c[k] > c[k - 1], "%s: row %lld not sorted or repeats %d",
                          what, (long long)i, c[k]);
            size_t x = (size_t)(i * o->n + c[k]);
            ck_assert_msg(o->has[x], "%s: C(%lld, %d) is not in the product", what, (long long)i,
                          c[k]);
            long double re = scalar(mi.type, v, k * nc);
            long double im = nc == 2 ? scalar(mi.type, v, k * nc + 1) : 0;
            long double err = fabsl(re - o->re[x]) + fabsl(im - o->im[x]);
            ck_assert_msg(err <= tol * (o->mag[x] + 1e-30L),
                          "%s: C(%lld, %d) = %Lg%+Lgi, want %Lg%+Lgi", what, (long long)i, c[k], re,
                          im, o->re[x], o->im[x]);
        }
}

/* C = op_a(A) op_b(B) checked against the oracle. */
static void check_product(hisp_context ctx, hisp_op oa, hisp_matrix A, hisp_op ob, hisp_matrix B,
                          const char *what)
{
    hisp_matrix C = NULL;
    long calls = hispi_spgemm_device_calls;
    CK_OK(ctx, hisp_matrix_multiply(oa, A, ob, B, &C));
    ck_assert_msg(hispi_spgemm_device_calls - calls == dev_per_product,
                  "%s: %ld products on the device, want %ld", what,
                  hispi_spgemm_device_calls - calls, dev_per_product);
    /* C is CSR, or HiSparse as A is */
    hisp_matrix_info ia, ic;
    CK_OK(ctx, hisp_matrix_get_info(A, &ia));
    CK_OK(ctx, hisp_matrix_get_info(C, &ic));
    hisp_format want = ia.format == HISP_FORMAT_HISPARSE ? HISP_FORMAT_HISPARSE : HISP_FORMAT_CSR;
    ck_assert_msg(ic.format == want, "%s: C is %s, A %s", what, hisp_format_name(ic.format),
                  hisp_format_name(ia.format));
    CK_OK(ctx, hisp_matrix_convert(C, HISP_FORMAT_CSR));
    entries ea = read_entries(ctx, A, oa), eb = read_entries(ctx, B, ob);
    oracle o = oracle_of(&ea, &eb);
    check_against(ctx, C, &o, what);
    oracle_free(&o);
    entries_free(&ea);
    entries_free(&eb);
    hisp_matrix_destroy(&C);
}

/* A random m x n matrix of about density*m*n entries (complex parts
 * random too), in format f; rows or columns may be empty. */
static hisp_matrix random_matrix(hisp_context ctx, hisp_type t, int64_t m, int64_t n,
                                 double density, hisp_format f, uint64_t *st)
{
    int64_t cap = (int64_t)(density * (double)(m * n)) + 1, nnz = 0;
    int32_t *r = malloc((size_t)cap * 4), *c = malloc((size_t)cap * 4);
    double *v = malloc((size_t)cap * 16);
    float *vf = malloc((size_t)cap * 8);
    int nc = hisp_type_components(t);
    for (int64_t k = 0; k < cap && m > 0 && n > 0; k++) {
        if (test_uniform(st) > 2 * density * (double)(m * n) / (double)cap - 1) continue;
        r[nnz] = (int32_t)(test_rand(st) % (uint64_t)m);
        c[nnz] = (int32_t)(test_rand(st) % (uint64_t)n);
        for (int q = 0; q < nc; q++) {
            v[nnz * nc + q] = test_uniform(st);
            vf[nnz * nc + q] = (float)v[nnz * nc + q];
        }
        nnz++;
    }
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_create_coo(ctx, t, m, n, nnz, r, c, is_single(t) ? (void *)vf : v, &A));
    if (f != HISP_FORMAT_COO) CK_OK(ctx, hisp_matrix_convert(A, f));
    free(r), free(c), free(v), free(vf);
    return A;
}

static const hisp_type types[] = {HISP_F32, HISP_F64, HISP_C32, HISP_C64};

/* Every op pair and type on rectangular operands in mixed formats, on
 * every target. */
START_TEST(test_ops)
{
    hisp_context ctx = target_context(_i);
    uint64_t st = test_seed() + 33;
    static const hisp_format fa[] = {HISP_FORMAT_CSR, HISP_FORMAT_CSC, HISP_FORMAT_COO};
    for (int ti = 0; ti < 4; ti++) {
        hisp_type t = types[ti];
        int nops = is_cplx(t) ? 3 : 2;
        for (int oa = 0; oa < nops; oa++)
            for (int ob = 0; ob < nops; ob++) {
                int64_t m = 17 + (int64_t)(test_rand(&st) % 20),
                        k = 9 + (int64_t)(test_rand(&st) % 30),
                        n = 1 + (int64_t)(test_rand(&st) % 25);
                hisp_format f1 = fa[(oa + ob + ti) % 3], f2 = fa[(oa + 2 * ob) % 3];
                hisp_matrix A = random_matrix(ctx, t, oa ? k : m, oa ? m : k, 0.12, f1, &st);
                hisp_matrix B = random_matrix(ctx, t, ob ? n : k, ob ? k : n, 0.15, f2, &st);
                char what[160];
                snprintf(what, sizeof what, "target %d, %s, op %d x op %d, %s x %s", _i,
                         hisp_type_name(t), oa, ob, hisp_format_name(f1), hisp_format_name(f2));
                check_product(ctx, (hisp_op)oa, A, (hisp_op)ob, B, what);
                hisp_matrix_destroy(&A);
                hisp_matrix_destroy(&B);
            }
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* A*A^T, A^T*A and A^H*A with one handle; HiSparse operands (their
 * transposed flag and scale honoured); zero, 1x1 and empty-row shapes. */
START_TEST(test_shapes)
{
    hisp_context ctx = target_context(_i);
    uint64_t st = test_seed() + 77;
    for (int ti = 0; ti < 4; ti++) {
        hisp_type t = types[ti];
        hisp_matrix A = random_matrix(ctx, t, 40, 23, 0.08, HISP_FORMAT_CSR, &st);
        check_product(ctx, HISP_OP_N, A, HISP_OP_T, A, "A*A^T");
        check_product(ctx, HISP_OP_T, A, HISP_OP_N, A, "A^T*A");
        if (is_cplx(t)) check_product(ctx, HISP_OP_H, A, HISP_OP_N, A, "A^H*A");
        hisp_matrix_destroy(&A);
        /* zero matrices, 0 x n and 1 x 1 */
        hisp_matrix Z = random_matrix(ctx, t, 12, 7, 0, HISP_FORMAT_CSR, &st);
        hisp_matrix Y = random_matrix(ctx, t, 7, 5, 0.3, HISP_FORMAT_CSR, &st);
        check_product(ctx, HISP_OP_N, Z, HISP_OP_N, Y, "zero * Y");
        check_product(ctx, HISP_OP_T, Y, HISP_OP_T, Z, "Y^T * zero^T");
        hisp_matrix E = random_matrix(ctx, t, 0, 12, 0, HISP_FORMAT_CSR, &st);
        check_product(ctx, HISP_OP_N, E, HISP_OP_N, Z, "0 x 12 times 12 x 7");
        hisp_matrix O = random_matrix(ctx, t, 1, 1, 1, HISP_FORMAT_CSR, &st);
        check_product(ctx, HISP_OP_N, O, HISP_OP_N, O, "1x1");
        check_product(ctx, HISP_OP_T, O, HISP_OP_T, O, "1x1^T");
        hisp_matrix_destroy(&Z), hisp_matrix_destroy(&Y), hisp_matrix_destroy(&E);
        hisp_matrix_destroy(&O);
    }
    /* HiSparse (real): scaled and transposed trees */
    hisp_matrix H = random_matrix(ctx, HISP_F64, 70, 50, 0.06, HISP_FORMAT_HISPARSE, &st);
    hisp_matrix B = random_matrix(ctx, HISP_F64, 70, 30, 0.1, HISP_FORMAT_CSR, &st);
    check_product(ctx, HISP_OP_T, H, HISP_OP_N, B, "HiSparse^T * CSR");
    double two = 2;
    CK_OK(ctx, hisp_matrix_scale(H, &two));
    CK_OK(ctx, hisp_matrix_transpose(H));
    check_product(ctx, HISP_OP_N, H, HISP_OP_N, B, "(2 HiSparse)^T as N * CSR");
    hisp_matrix_destroy(&H), hisp_matrix_destroy(&B);
    hisp_context_destroy(&ctx);
}
END_TEST

/* C = P^T*A*P against the oracle of P^T*(A*P). */
static void check_ptap(hisp_context ctx, hisp_matrix P, hisp_matrix A, const char *what)
{
    hisp_matrix C = NULL;
    long calls = hispi_spgemm_device_calls;
    CK_OK(ctx, hisp_matrix_ptap(P, A, &C));
    ck_assert_int_eq(hispi_spgemm_device_calls - calls, 2 * dev_per_product);
    entries ep = read_entries(ctx, P, HISP_OP_N), ea = read_entries(ctx, A, HISP_OP_N),
            et = read_entries(ctx, P, HISP_OP_T);
    oracle ap = oracle_of(&ea, &ep);
    /* A*P's oracle as entries (its structure), then P^T times it */
    entries eap = {ap.m, ap.n, 0, NULL, NULL, NULL, NULL};
    size_t mn = (size_t)(ap.m * ap.n) + 1;
    eap.i = malloc(mn * 4), eap.j = malloc(mn * 4), eap.re = malloc(mn * sizeof(long double));
    eap.im = malloc(mn * sizeof(long double));
    for (size_t x = 0; x < (size_t)(ap.m * ap.n); x++)
        if (ap.has[x]) {
            eap.i[eap.nnz] = (int32_t)(x / (size_t)ap.n),
            eap.j[eap.nnz] = (int32_t)(x % (size_t)ap.n);
            eap.re[eap.nnz] = ap.re[x], eap.im[eap.nnz] = ap.im[x];
            eap.nnz++;
        }
    oracle o = oracle_of(&et, &eap);
    /* A*P is rounded before the second product: its entries' own magnitudes
     * (not their values, which may cancel) bound what that rounding can
     * move, so the tolerance takes sum |P^T| * mag(A*P) */
    for (int64_t k = 0; k < eap.nnz; k++) {
        size_t x = (size_t)(eap.i[k] * ap.n + eap.j[k]);
        eap.re[k] = ap.mag[x], eap.im[k] = 0;
    }
    for (int64_t k = 0; k < et.nnz; k++)
        et.re[k] = fabsl(et.re[k]) + fabsl(et.im[k]), et.im[k] = 0;
    oracle bound = oracle_of(&et, &eap);
    for (size_t x = 0; x < (size_t)(o.m * o.n); x++)
        o.mag[x] = fmaxl(o.mag[x], bound.re[x]);
    oracle_free(&bound);
    check_against(ctx, C, &o, what);
    oracle_free(&o), oracle_free(&ap);
    entries_free(&ep), entries_free(&ea), entries_free(&et), entries_free(&eap);
    hisp_matrix_destroy(&C);
}

START_TEST(test_ptap)
{
    hisp_context ctx = target_context(_i);
    uint64_t st = test_seed() + 91;
    for (int ti = 0; ti < 4; ti++) {
        hisp_type t = types[ti];
        hisp_matrix A = random_matrix(ctx, t, 60, 60, 0.08, HISP_FORMAT_CSR, &st);
        hisp_matrix P =
            random_matrix(ctx, t, 60, 13, 0.1, ti % 2 ? HISP_FORMAT_CSC : HISP_FORMAT_CSR, &st);
        check_ptap(ctx, P, A, "P^T A P");
        hisp_matrix_destroy(&A), hisp_matrix_destroy(&P);
    }
    /* an aggregation P of a Poisson matrix (each row one aggregate) */
    hisp_gen_params gp;
    hisp_gen_defaults(HISP_GEN_POISSON2D, &gp);
    gp.n = 12;
    hisp_matrix A = NULL, P = NULL;
    CK_OK(ctx, hisp_matrix_generate(ctx, &gp, HISP_F64, &A));
    int32_t r[144], c[144];
    for (int i = 0; i < 144; i++)
        r[i] = i, c[i] = (i / 12 / 3) * 4 + (i % 12) / 3;
    CK_OK(ctx, hisp_matrix_create_coo(ctx, HISP_F64, 144, 16, 144, r, c, NULL, &P));
    check_ptap(ctx, P, A, "aggregation P^T A P");
    hisp_matrix_destroy(&A), hisp_matrix_destroy(&P);
    hisp_context_destroy(&ctx);
}
END_TEST

/* Generators: poisson3d, banded, rmat, circuit squared and A^T*A. */
START_TEST(test_generators)
{
    hisp_context ctx = target_context(_i);
    static const struct {
        hisp_gen_kind k;
        int64_t n;
    } g[] = {{HISP_GEN_POISSON3D, 8},
             {HISP_GEN_BANDED, 500},
             {HISP_GEN_RMAT, 0},
             {HISP_GEN_CIRCUIT, 400}};
    for (int q = 0; q < 4; q++) {
        hisp_gen_params p;
        hisp_gen_defaults(g[q].k, &p);
        if (g[q].n) p.n = g[q].n;
        p.scale = 8;
        p.seed = test_seed();
        hisp_matrix A = NULL;
        CK_OK(ctx, hisp_matrix_generate(ctx, &p, q % 2 ? HISP_F32 : HISP_F64, &A));
        char what[80];
        snprintf(what, sizeof what, "%s A*A", hisp_gen_name(g[q].k));
        check_product(ctx, HISP_OP_N, A, HISP_OP_N, A, what);
        snprintf(what, sizeof what, "%s A^T*A", hisp_gen_name(g[q].k));
        check_product(ctx, HISP_OP_T, A, HISP_OP_N, A, what);
        hisp_matrix_destroy(&A);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* Real matrices of ../shared/matrices: A*A, A*A^T and A^T*A. */
START_TEST(test_real_matrices)
{
    const char *dir = test_matrix_dir();
    if (!dir) {
        test_skip_no_matrices("spgemm on real matrices");
        return;
    }
    hisp_context ctx = target_context(_i);
    /* symmetric real, complex symmetric with empty rows, a directed graph
     * with empty rows and columns, a tall least-squares matrix */
    static const char *const names[] = {"494_bus.mtx", "dwg961a.mtx", "polblogs.mtx", "abb313.mtx"};
    for (int q = 0; q < 4; q++) {
        char path[1200];
        snprintf(path, sizeof path, "%s/%s", dir, names[q]);
        hisp_matrix A = NULL;
        hisp_mtx_info info;
        CK_OK(ctx, hisp_matrix_read_mtx_info(ctx, path, &info));
        CK_OK(ctx, hisp_matrix_read_mtx(ctx, path, info.type, &A, NULL));
        char what[160];
        if (info.nrows == info.ncols) {
            snprintf(what, sizeof what, "%s A*A", names[q]);
            check_product(ctx, HISP_OP_N, A, HISP_OP_N, A, what);
        }
        snprintf(what, sizeof what, "%s A*A^T", names[q]);
        check_product(ctx, HISP_OP_N, A, HISP_OP_T, A, what);
        snprintf(what, sizeof what, "%s A^T*A", names[q]);
        check_product(ctx, HISP_OP_T, A, HISP_OP_N, A, what);
        hisp_matrix_destroy(&A);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* Two matrices with the same pattern as X and new values (scaled by s,
 * shifted by the entry's index): the CSR arrays copied. */
static hisp_matrix revalued(hisp_context ctx, hisp_matrix X, double s)
{
    hisp_matrix_info mi;
    CK_OK(ctx, hisp_matrix_get_info(X, &mi));
    ck_assert_int_eq(mi.format, HISP_FORMAT_CSR);
    const int64_t *p;
    const int32_t *c;
    const void *v;
    CK_OK(ctx, hisp_matrix_host_arrays(X, &p, NULL, &c, &v));
    size_t n = (size_t)(mi.nnz * hisp_type_components(mi.type));
    void *w = malloc(n * 8 + 8);
    for (size_t k = 0; k < n; k++) {
        double x = is_single(mi.type) ? ((const float *)v)[k] : ((const double *)v)[k];
        x = s * x + 0.001 * (double)(k % 7);
        if (is_single(mi.type))
            ((float *)w)[k] = (float)x;
        else
            ((double *)w)[k] = x;
    }
    hisp_matrix Y = NULL;
    CK_OK(ctx, hisp_matrix_create_csr(ctx, mi.type, mi.nrows, mi.ncols, p, c, w, &Y));
    free(w);
    return Y;
}

/* C and D hold the same bits (structure and values). */
static void same_bits(hisp_context ctx, hisp_matrix C, hisp_matrix D, const char *what)
{
    hisp_matrix_info ic, id;
    CK_OK(ctx, hisp_matrix_get_info(C, &ic));
    CK_OK(ctx, hisp_matrix_get_info(D, &id));
    ck_assert_msg(ic.nrows == id.nrows && ic.ncols == id.ncols && ic.nnz == id.nnz &&
                      ic.type == id.type,
                  "%s: shapes differ", what);
    const int64_t *pc, *pd;
    const int32_t *cc, *cd;
    const void *vc, *vd;
    CK_OK(ctx, hisp_matrix_host_arrays(C, &pc, NULL, &cc, &vc));
    CK_OK(ctx, hisp_matrix_host_arrays(D, &pd, NULL, &cd, &vd));
    ck_assert_msg(!memcmp(pc, pd, (size_t)(ic.nrows + 1) * 8), "%s: row pointers differ", what);
    ck_assert_msg(!memcmp(cc, cd, (size_t)ic.nnz * 4), "%s: columns differ", what);
    ck_assert_msg(!memcmp(vc, vd, (size_t)ic.nnz * hisp_type_size(ic.type)), "%s: values differ",
                  what);
}

/* The plan: create equals a fresh product; execute with new values (the
 * same patterns) equals a fresh product of those, bit for bit, for every
 * op pair, and leaves C's handle and structure. On a target with run-time
 * kernels every execution runs on the device (no silent host fallback). */
START_TEST(test_plan)
{
    hisp_context ctx = target_context(_i);
    uint64_t st = test_seed() + 123;
    for (int ti = 0; ti < 4; ti++) {
        hisp_type t = types[ti];
        int nops = is_cplx(t) ? 3 : 2;
        for (int oa = 0; oa < nops; oa++)
            for (int ob = 0; ob < nops; ob++) {
                hisp_matrix A = random_matrix(ctx, t, 30, 26, 0.1, HISP_FORMAT_CSR, &st);
                hisp_matrix B = random_matrix(ctx, t, oa ? 30 : 26, 21, 0.12, HISP_FORMAT_CSR, &st);
                if (ob) { /* op(B) must have op(A)'s columns as rows */
                    hisp_matrix_destroy(&B);
                    B = random_matrix(ctx, t, 21, oa ? 30 : 26, 0.12, HISP_FORMAT_CSR, &st);
                }
                hisp_spgemm_plan plan = NULL;
                hisp_matrix C = NULL, F = NULL;
                /* half the C's in buffers of their own (as a large C's), not the pool's */
                size_t pool_c = hispi_spgemm_pool_c_bytes;
                if ((oa + ti) % 2) hispi_spgemm_pool_c_bytes = 0;
                CK_OK(ctx, hisp_spgemm_plan_create((hisp_op)oa, A, (hisp_op)ob, B, &plan, &C));
                CK_OK(ctx, hisp_matrix_multiply((hisp_op)oa, A, (hisp_op)ob, B, &F));
                same_bits(ctx, C, F, "plan_create vs multiply");
                hisp_matrix_destroy(&F);
                /* a third of the plans by maps of words, a third by the
                 * kernels, a third by maps of pairs */
                int how = (ti + oa + ob) % 3;
                hispi_spgemm_no_map = how == 1, hispi_spgemm_map_pairs = how == 2;
                for (int round = 0; round < 2; round++) {
                    hisp_matrix A2 = revalued(ctx, A, -1.5 - round), B2 = revalued(ctx, B, 0.75);
                    long calls = hispi_spgemm_numeric_device_calls, maps = hispi_spgemm_maps,
                         words = hispi_spgemm_word_maps;
                    CK_OK(ctx, hisp_spgemm_plan_execute(plan, A2, B2, C));
                    ck_assert_int_eq(hispi_spgemm_numeric_device_calls - calls, dev_per_product);
                    /* the first execution makes the map */
                    ck_assert_int_eq(hispi_spgemm_maps - maps,
                                     dev_per_product && !round && how != 1);
                    ck_assert_int_eq(hispi_spgemm_word_maps - words,
                                     dev_per_product && !round && how == 0);
                    CK_OK(ctx, hisp_matrix_multiply((hisp_op)oa, A2, (hisp_op)ob, B2, &F));
                    char what[120];
                    snprintf(what, sizeof what, "target %d %s op %d x op %d: execute round %d", _i,
                             hisp_type_name(t), oa, ob, round);
                    same_bits(ctx, C, F, what);
                    hisp_matrix_destroy(&F);
                    hisp_matrix_destroy(&A2), hisp_matrix_destroy(&B2);
                }
                hispi_spgemm_no_map = hispi_spgemm_map_pairs = 0;
                hispi_spgemm_pool_c_bytes = pool_c;
                hisp_spgemm_plan_destroy(&plan);
                ck_assert_ptr_null(plan);
                hisp_matrix_destroy(&C);
                hisp_matrix_destroy(&A), hisp_matrix_destroy(&B);
            }
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* A changed pattern, a foreign C, an operand as C, another type: refused
 * with HISP_ERR_INVALID_ARGUMENT, C's values untouched. */
START_TEST(test_plan_refusals)
{
    hisp_context ctx = target_context(0);
    uint64_t st = test_seed() + 321;
    hisp_matrix A = random_matrix(ctx, HISP_F64, 20, 20, 0.15, HISP_FORMAT_CSR, &st);
    hisp_matrix B = random_matrix(ctx, HISP_F64, 20, 20, 0.15, HISP_FORMAT_CSR, &st);
    hisp_spgemm_plan plan = NULL;
    hisp_matrix C = NULL, C0 = NULL;
    CK_OK(ctx, hisp_spgemm_plan_create(HISP_OP_T, A, HISP_OP_N, B, &plan, &C));
    CK_OK(ctx, hisp_matrix_duplicate(C, HISP_FORMAT_CSR, &C0));
    hisp_matrix other = random_matrix(ctx, HISP_F64, 20, 20, 0.15, HISP_FORMAT_CSR, &st);
    hisp_status s = hisp_spgemm_plan_execute(plan, other, B, C);
    ck_assert_int_eq(s, HISP_ERR_INVALID_ARGUMENT);
    hisp_error_info e;
    CK_OK(ctx, hisp_context_last_error(ctx, &e));
    ck_assert_msg(strstr(e.message, "A's pattern changed"), "message: %s", e.message);
    ck_assert_int_eq(hisp_spgemm_plan_execute(plan, A, other, C), HISP_ERR_INVALID_ARGUMENT);
    /* same nnz and row pointers, one column moved */
    const int64_t *p;
    const int32_t *c;
    const void *v;
    CK_OK(ctx, hisp_matrix_host_arrays(B, &p, NULL, &c, &v));
    hisp_matrix_info mi;
    CK_OK(ctx, hisp_matrix_get_info(B, &mi));
    int32_t *c2 = malloc((size_t)mi.nnz * 4);
    memcpy(c2, c, (size_t)mi.nnz * 4);
    int64_t r = 0;
    while (p[r + 1] - p[r] != 1)
        r++; /* a row of one entry: its column can move anywhere free */
    c2[p[r]] = (c2[p[r]] + 1) % 20;
    hisp_matrix B2 = NULL;
    CK_OK(ctx, hisp_matrix_create_csr(ctx, HISP_F64, 20, 20, p, c2, v, &B2));
    ck_assert_int_eq(hisp_spgemm_plan_execute(plan, A, B2, C), HISP_ERR_INVALID_ARGUMENT);
    CK_OK(ctx, hisp_context_last_error(ctx, &e));
    ck_assert_msg(strstr(e.message, "indices differ"), "message: %s", e.message);
    /* A as CSC now: refused (the plan read it as CSR) */
    hisp_matrix Acsc = NULL;
    CK_OK(ctx, hisp_matrix_duplicate(A, HISP_FORMAT_CSC, &Acsc));
    ck_assert_int_eq(hisp_spgemm_plan_execute(plan, Acsc, B, C), HISP_ERR_INVALID_ARGUMENT);
    /* C: an operand, another matrix, another format */
    ck_assert_int_eq(hisp_spgemm_plan_execute(plan, A, B, A), HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_spgemm_plan_execute(plan, A, B, other), HISP_ERR_INVALID_ARGUMENT);
    hisp_matrix Ccoo = NULL;
    CK_OK(ctx, hisp_matrix_duplicate(C, HISP_FORMAT_COO, &Ccoo));
    ck_assert_int_eq(hisp_spgemm_plan_execute(plan, A, B, Ccoo), HISP_ERR_INVALID_ARGUMENT);
    same_bits(ctx, C, C0, "C after refusals");
    /* the plan still works, and destroyed it is an invalid handle */
    CK_OK(ctx, hisp_spgemm_plan_execute(plan, A, B, C));
    same_bits(ctx, C, C0, "C after a re-execution with the same values");
    hisp_spgemm_plan stale = plan;
    hisp_spgemm_plan_destroy(&plan);
    ck_assert_int_eq(hisp_spgemm_plan_execute(stale, A, B, C), HISP_ERR_INVALID_HANDLE);
    ck_assert_int_eq(hisp_spgemm_plan_execute(NULL, A, B, C), HISP_ERR_INVALID_HANDLE);
    hisp_spgemm_plan_destroy(&plan); /* NULL: nothing */
    free(c2);
    hisp_matrix_destroy(&B2), hisp_matrix_destroy(&Acsc), hisp_matrix_destroy(&Ccoo);
    hisp_matrix_destroy(&other), hisp_matrix_destroy(&C), hisp_matrix_destroy(&C0);
    hisp_matrix_destroy(&A), hisp_matrix_destroy(&B);
    hisp_context_destroy(&ctx);
}
END_TEST

/* Bad arguments: clear statuses and messages, *C NULL. */
START_TEST(test_errors)
{
    hisp_context ctx = target_context(0), other = test_context(0);
    uint64_t st = test_seed() + 5;
    hisp_matrix A = random_matrix(ctx, HISP_F64, 10, 7, 0.2, HISP_FORMAT_CSR, &st);
    hisp_matrix B = random_matrix(ctx, HISP_F64, 10, 7, 0.2, HISP_FORMAT_CSR, &st);
    hisp_matrix Bf = random_matrix(ctx, HISP_F32, 7, 7, 0.2, HISP_FORMAT_CSR, &st);
    hisp_matrix X = random_matrix(other, HISP_F64, 7, 7, 0.2, HISP_FORMAT_CSR, &st);
    hisp_matrix C = (hisp_matrix)&st;
    ck_assert_int_eq(hisp_matrix_multiply(HISP_OP_N, A, HISP_OP_N, B, &C),
                     HISP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(C);
    hisp_error_info e;
    CK_OK(ctx, hisp_context_last_error(ctx, &e));
    ck_assert_msg(strstr(e.message, "A is 10 x 7, B is 10 x 7"), "message: %s", e.message);
    ck_assert_int_eq(hisp_matrix_multiply(HISP_OP_N, A, HISP_OP_N, Bf, &C),
                     HISP_ERR_INVALID_ARGUMENT);
    CK_OK(ctx, hisp_context_last_error(ctx, &e));
    ck_assert_msg(strstr(e.message, "entry types differ"), "message: %s", e.message);
    ck_assert_int_eq(hisp_matrix_multiply(HISP_OP_N, A, HISP_OP_N, X, &C), HISP_ERR_INVALID_HANDLE);
    ck_assert_int_eq(hisp_matrix_multiply((hisp_op)7, A, HISP_OP_N, B, &C),
                     HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_matrix_multiply(HISP_OP_N, A, HISP_OP_N, B, NULL),
                     HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_matrix_multiply(HISP_OP_N, NULL, HISP_OP_N, B, &C),
                     HISP_ERR_INVALID_HANDLE);
    /* P^T A P: A not square, P's rows not A's */
    ck_assert_int_eq(hisp_matrix_ptap(B, A, &C), HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_matrix_ptap(Bf, Bf, NULL), HISP_ERR_INVALID_ARGUMENT);
    /* quaternions: unsupported */
    int32_t r0 = 0;
    double q[4] = {1, 2, 3, 4};
    hisp_matrix Q = NULL;
    CK_OK(ctx, hisp_matrix_create_coo(ctx, HISP_Q64, 1, 1, 1, &r0, &r0, q, &Q));
    ck_assert_int_eq(hisp_matrix_multiply(HISP_OP_N, Q, HISP_OP_N, Q, &C), HISP_ERR_UNSUPPORTED);
    hisp_spgemm_plan plan = (hisp_spgemm_plan)&st;
    ck_assert_int_eq(hisp_spgemm_plan_create(HISP_OP_N, A, HISP_OP_N, B, &plan, &C),
                     HISP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(plan);
    ck_assert_ptr_null(C);
    hisp_matrix_destroy(&Q), hisp_matrix_destroy(&A), hisp_matrix_destroy(&B);
    hisp_matrix_destroy(&Bf), hisp_matrix_destroy(&X);
    hisp_context_destroy(&ctx);
    hisp_context_destroy(&other);
}
END_TEST

/* The same bits on 1 and 3 threads: products, P^T A P and a plan's
 * execution, on operands large enough to be split over threads. */
static void products_on(hisp_context ctx, hisp_matrix A, hisp_matrix P, hisp_matrix out[4])
{
    CK_OK(ctx, hisp_matrix_multiply(HISP_OP_N, A, HISP_OP_N, A, &out[0]));
    CK_OK(ctx, hisp_matrix_multiply(HISP_OP_T, A, HISP_OP_N, A, &out[1]));
    CK_OK(ctx, hisp_matrix_ptap(P, A, &out[2]));
    hisp_spgemm_plan plan = NULL;
    CK_OK(ctx, hisp_spgemm_plan_create(HISP_OP_N, A, HISP_OP_T, A, &plan, &out[3]));
    CK_OK(ctx, hisp_spgemm_plan_execute(plan, A, A, out[3]));
    hisp_spgemm_plan_destroy(&plan);
}

START_TEST(test_threads)
{
    hisp_context ctx = target_context(0);
    uint64_t st = test_seed() + 999;
    hisp_gen_params gp;
    hisp_gen_defaults(HISP_GEN_RANDOM, &gp);
    gp.n = 6000;
    gp.nnz_per_row = 9;
    gp.seed = test_seed();
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_generate(ctx, &gp, HISP_F64, &A));
    hisp_matrix P = random_matrix(ctx, HISP_F64, 6000, 700, 0.003, HISP_FORMAT_CSR, &st);
    hisp_matrix one[4] = {0}, three[4] = {0};
    CK_OK(ctx, hisp_context_set_option(ctx, "threads", "1"));
    products_on(ctx, A, P, one);
    CK_OK(ctx, hisp_context_set_option(ctx, "threads", "3"));
    products_on(ctx, A, P, three);
    static const char *const what[] = {"A*A", "A^T*A", "P^T A P", "plan A*A^T"};
    for (int k = 0; k < 4; k++) {
        same_bits(ctx, one[k], three[k], what[k]);
        hisp_matrix_destroy(&one[k]), hisp_matrix_destroy(&three[k]);
    }
    hisp_matrix_destroy(&A), hisp_matrix_destroy(&P);
    hisp_context_destroy(&ctx);
}
END_TEST

/* A copy of X's CSR arrays, to see that a failed call left X as it was. */
typedef struct {
    hisp_matrix_info mi;
    int64_t *p;
    int32_t *c;
    char *v;
} saved;

static saved save(hisp_context ctx, hisp_matrix X)
{
    saved s;
    CK_OK(ctx, hisp_matrix_get_info(X, &s.mi));
    const int64_t *p;
    const int32_t *c;
    const void *v;
    CK_OK(ctx, hisp_matrix_host_arrays(X, &p, NULL, &c, &v));
    size_t nv = (size_t)s.mi.nnz * hisp_type_size(s.mi.type);
    s.p = malloc((size_t)(s.mi.nrows + 1) * 8), s.c = malloc((size_t)s.mi.nnz * 4 + 4);
    s.v = malloc(nv + 1);
    memcpy(s.p, p, (size_t)(s.mi.nrows + 1) * 8), memcpy(s.c, c, (size_t)s.mi.nnz * 4);
    memcpy(s.v, v, nv);
    return s;
}

static void unchanged(hisp_context ctx, hisp_matrix X, saved *s, const char *what)
{
    hisp_matrix_info mi;
    CK_OK(ctx, hisp_matrix_get_info(X, &mi));
    const int64_t *p;
    const int32_t *c;
    const void *v;
    CK_OK(ctx, hisp_matrix_host_arrays(X, &p, NULL, &c, &v));
    ck_assert_msg(mi.nnz == s->mi.nnz && mi.format == s->mi.format &&
                      !memcmp(p, s->p, (size_t)(mi.nrows + 1) * 8) &&
                      !memcmp(c, s->c, (size_t)mi.nnz * 4) &&
                      !memcmp(v, s->v, (size_t)mi.nnz * hisp_type_size(mi.type)),
                  "%s: an operand changed", what);
}

static void saved_free(saved *s)
{
    free(s->p), free(s->c), free(s->v);
}

/* Runs call k = 1, 2, ... with the k-th allocation failing until it
 * succeeds: each failure is HISP_ERR_OUT_OF_HOST_MEMORY with no output and
 * the operands unchanged (leaks: the sanitize build). */
#define FAIL_EACH(what, ok_call, out_null)                                                         \
    do {                                                                                           \
        long k_ = 1;                                                                               \
        for (;; k_++) {                                                                            \
            hispi_alloc_fail_after(k_);                                                            \
            hisp_status s_ = (ok_call);                                                            \
            hispi_alloc_fail_after(0);                                                             \
            if (s_ == HISP_SUCCESS) break;                                                         \
            ck_assert_msg(s_ == HISP_ERR_OUT_OF_HOST_MEMORY, "%s: allocation %ld: %s", what, k_,   \
                          hisp_status_string(s_));                                                 \
            ck_assert_msg(out_null, "%s: allocation %ld: output left", what, k_);                  \
            unchanged(ctx, A, &sa, what);                                                          \
            unchanged(ctx, B, &sb, what);                                                          \
            ck_assert_msg(k_ < 200, "%s: never succeeds", what);                                   \
        }                                                                                          \
        ck_assert_msg(k_ > 1, "%s: allocated nothing", what);                                      \
    } while (0)

START_TEST(test_alloc_failures)
{
    hisp_context ctx = target_context(_i);
    uint64_t st = test_seed() + 4242;
    CK_OK(ctx, hisp_context_set_option(ctx, "threads", "3"));
    hisp_matrix A = random_matrix(ctx, HISP_C64, 60, 45, 0.1, HISP_FORMAT_CSR, &st);
    hisp_matrix B = random_matrix(ctx, HISP_C64, 60, 60, 0.1, HISP_FORMAT_CSR, &st);
    saved sa = save(ctx, A), sb = save(ctx, B);
    hisp_matrix C = NULL, F = NULL, G = NULL;
    hisp_spgemm_plan plan = NULL;
    FAIL_EACH("multiply A^H*B", hisp_matrix_multiply(HISP_OP_H, A, HISP_OP_N, B, &C), !C);
    FAIL_EACH("ptap", hisp_matrix_ptap(A, B, &G), !G);
    FAIL_EACH("plan_create", hisp_spgemm_plan_create(HISP_OP_H, A, HISP_OP_N, B, &plan, &F),
              !F && !plan);
    same_bits(ctx, C, F, "plan after failures vs multiply");
    FAIL_EACH("plan_execute", hisp_spgemm_plan_execute(plan, A, B, F), true);
    same_bits(ctx, C, F, "execute after failures vs multiply");
    hisp_spgemm_plan_destroy(&plan);
    saved_free(&sa), saved_free(&sb);
    hisp_matrix_destroy(&C), hisp_matrix_destroy(&F), hisp_matrix_destroy(&G);
    hisp_matrix_destroy(&A), hisp_matrix_destroy(&B);
    hisp_context_destroy(&ctx);
}
END_TEST

/* An m x n CSR matrix of type t from seed: entry (i, j) where rule says 1,
 * none where it says 0, and where it says -1 with probability density (a
 * uniform draw for every position, then one per component of the value). */
typedef int (*pattern_rule)(int64_t i, int64_t j);
static hisp_matrix pattern_matrix(hisp_context ctx, hisp_type t, int64_t m, int64_t n,
                                  double density, pattern_rule rule, uint64_t seed)
{
    int64_t cap = m * n, nnz = 0;
    int32_t *r = malloc((size_t)cap * 4), *c = malloc((size_t)cap * 4);
    double *v = malloc((size_t)cap * 16);
    float *vf = malloc((size_t)cap * 8);
    int nc = hisp_type_components(t);
    uint64_t st = seed;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            bool in = test_uniform(&st) < density * 2 - 1;
            int fixed = rule(i, j);
            if (fixed >= 0) in = fixed;
            if (!in) continue;
            r[nnz] = (int32_t)i, c[nnz] = (int32_t)j;
            for (int q = 0; q < nc; q++) {
                v[nnz * nc + q] = test_uniform(&st);
                vf[nnz * nc + q] = (float)v[nnz * nc + q];
            }
            nnz++;
        }
    hisp_matrix X = NULL;
    CK_OK(ctx, hisp_matrix_create_coo(ctx, t, m, n, nnz, r, c, is_single(t) ? (void *)vf : v, &X));
    CK_OK(ctx, hisp_matrix_convert(X, HISP_FORMAT_CSR));
    free(r), free(c), free(v), free(vf);
    return X;
}

/* A 50 x 40 (A) or 40 x 300 (B) matrix for the device path's cases, from
 * seed: random entries (about 5 % of A, 3 % of B) and, in A: row 3 full
 * (its products, about 2000, exceed the local table: the global one), row 7
 * empty, row 9 only in columns 35..39, row 11 in columns 0..5 (360
 * products: a local table; most rows are short: one work-item's merge); in B: rows 0..29 with 60
 * entries each, rows 35..39 empty (so A's row 9 has no products). */
static int rule_a(int64_t i, int64_t j)
{
    return i == 3 ? 1 : i == 7 ? 0 : i == 9 ? j >= 35 : i == 11 ? j < 6 : -1;
}

static int rule_b(int64_t i, int64_t j)
{
    return i < 30 ? (j * 7 + i * 13) % 5 == 0 : i >= 35 ? 0 : -1;
}

static hisp_matrix device_operand(hisp_context ctx, hisp_type t, bool b, uint64_t seed)
{
    return b ? pattern_matrix(ctx, t, 40, 300, 0.03, rule_b, seed)
             : pattern_matrix(ctx, t, 50, 40, 0.05, rule_a, seed);
}

/* A 400 x 400 matrix whose row 0 is full and whose other rows have about
 * 50 entries each (column 0 among them for every third): in its square,
 * row 0 has about 20000 products, more than the device path's 64-item
 * groups take (a table worked by a large group), the rows through column 0
 * about 2900 (global tables), the others a few hundred (local tables). */
static int rule_hub(int64_t i, int64_t j)
{
    return i == 0 || (j == 0 && i % 3 == 0) ? 1 : -1;
}

static hisp_matrix hub_operand(hisp_context ctx, hisp_type t, uint64_t seed)
{
    return pattern_matrix(ctx, t, 400, 400, 0.125, rule_hub, seed);
}

/* A 400 x 3000 matrix with its row 0's first 1500 columns full and about
 * 4.5 random entries in each row: times hub_operand, C's rows through
 * column 0 have more than 1024 entries (a global table in the fill), the
 * others about 220 (a small or a large local table in the fill). */
static int rule_wide(int64_t i, int64_t j)
{
    return i == 0 ? j < 1500 : -1;
}

static hisp_matrix wide_operand(hisp_context ctx, hisp_type t, uint64_t seed)
{
    return pattern_matrix(ctx, t, 400, 3000, 0.0015, rule_wide, seed);
}

/* A 400 x 300000 matrix, more columns than the device path's bitmaps
 * cover: row 0 has 20000 entries, row 1 2000, the others 5 at random.
 * Times hub_operand, C's rows through column 0 have more than 16384
 * products (a global table worked by a large group), those through column
 * 1 about 2200 entries (a global table), the others about 250 (a local
 * one). */
static hisp_matrix wider_operand(hisp_context ctx, hisp_type t, uint64_t seed)
{
    int64_t nnz = 20000 + 2000 + 398 * 5, k = 0;
    int32_t *r = malloc((size_t)nnz * 4), *c = malloc((size_t)nnz * 4);
    double *v = malloc((size_t)nnz * 16);
    float *vf = malloc((size_t)nnz * 8);
    uint64_t st = seed;
    for (int64_t i = 0; i < 400; i++) {
        int64_t len = i == 0 ? 20000 : i == 1 ? 2000 : 5;
        for (int64_t q = 0; q < len; q++, k++) {
            r[k] = (int32_t)i;
            c[k] = (int32_t)(i < 2 ? q * 3 + i
                                   : (q * 60000 + (int64_t)((test_uniform(&st) + 1) * 29999)));
        }
    }
    int nc = hisp_type_components(t);
    for (int64_t q = 0; q < nnz * nc; q++)
        vf[q] = (float)(v[q] = test_uniform(&st));
    hisp_matrix X = NULL;
    CK_OK(ctx, hisp_matrix_create_coo(ctx, t, 400, 300000, nnz, r, c, is_single(t) ? (void *)vf : v,
                                      &X));
    CK_OK(ctx, hisp_matrix_convert(X, HISP_FORMAT_CSR));
    free(r), free(c), free(v), free(vf);
    return X;
}

/* The device path's tables and edge cases (device_operand) for every type
 * and op pair that keeps the shapes, against the oracle, and bit for bit
 * against the reference target's (host) product: the device sums in the
 * host's order without fused multiply-adds (kernels/spgemm.cl). */
START_TEST(test_device)
{
    const test_target *tg;
    int nt = test_targets(&tg), ref = 0;
    while (ref < nt && tg[ref].kind != HISP_BACKEND_REFERENCE)
        ref++;
    ck_assert_int_lt(ref, nt);
    hisp_context ctx = target_context(_i), rctx = test_context(ref);
    uint64_t seed = test_seed() + 2024;
    for (int ti = 0; ti < 4; ti++) {
        hisp_type t = types[ti];
        hisp_matrix A = device_operand(ctx, t, false, seed + (uint64_t)ti),
                    B = device_operand(ctx, t, true, seed + 10 + (uint64_t)ti);
        hisp_matrix Ar = device_operand(rctx, t, false, seed + (uint64_t)ti),
                    Br = device_operand(rctx, t, true, seed + 10 + (uint64_t)ti);
        char what[120];
        snprintf(what, sizeof what, "target %d %s: A*B (global and local tables)", _i,
                 hisp_type_name(t));
        check_product(ctx, HISP_OP_N, A, HISP_OP_N, B, what);
        hisp_matrix C = NULL, R = NULL;
        hisp_transfer_stats x0, x1, x2;
        CK_OK(ctx, hisp_context_transfers(ctx, &x0));
        CK_OK(ctx, hisp_matrix_multiply(HISP_OP_N, A, HISP_OP_N, B, &C));
        CK_OK(ctx, hisp_context_transfers(ctx, &x1));
        const int64_t *p;
        CK_OK(ctx, hisp_matrix_host_arrays(C, &p, NULL, NULL, NULL));
        CK_OK(ctx, hisp_context_transfers(ctx, &x2));
        /* a real C stays on the device (only the row bounds and counts come
         * back) until a host reader asks; a complex one is downloaded */
        hisp_matrix_info ic;
        CK_OK(ctx, hisp_matrix_get_info(C, &ic));
        uint64_t cbytes = (uint64_t)ic.nnz * (4 + hisp_type_size(t)), rows16 = 16 * 50;
        if (dev_per_product && !is_cplx(t))
            ck_assert_msg(x1.d2h_bytes - x0.d2h_bytes <= rows16 &&
                              x2.d2h_bytes - x1.d2h_bytes >= cbytes,
                          "%s: %llu bytes back in the product, %llu when read", what,
                          (unsigned long long)(x1.d2h_bytes - x0.d2h_bytes),
                          (unsigned long long)(x2.d2h_bytes - x1.d2h_bytes));
        if (dev_per_product && is_cplx(t)) ck_assert_uint_ge(x1.d2h_bytes - x0.d2h_bytes, cbytes);
        /* the stats: on the device, its time, at least C's and A's bytes held */
        hisp_spgemm_stats gs;
        CK_OK(ctx, hisp_context_spgemm_stats(ctx, &gs));
        ck_assert_int_eq(gs.on_device, dev_per_product);
        if (dev_per_product) {
            ck_assert_msg(gs.device_ms > 0 && gs.blocks == 2, "%g ms, %d blocks", gs.device_ms,
                          gs.blocks);
            ck_assert_uint_ge(gs.device_bytes_peak, cbytes + 50 * 8);
        } else {
            ck_assert(gs.device_ms == 0 && gs.device_bytes_peak == 0 && gs.blocks == 0);
        }
        CK_OK(rctx, hisp_matrix_multiply(HISP_OP_N, Ar, HISP_OP_N, Br, &R));
        same_bits(ctx, C, R, what);
        ck_assert_msg(p[8] == p[7] && p[10] == p[9], "%s: rows 7 and 9 are not empty", what);
        ck_assert_msg(p[4] - p[3] > 200, "%s: row 3 has %lld entries", what,
                      (long long)(p[4] - p[3]));
        hisp_matrix_destroy(&C), hisp_matrix_destroy(&R);
        /* B^T * A^T (op H for complex): rows of 300 x 50 */
        hisp_op o = is_cplx(t) ? HISP_OP_H : HISP_OP_T;
        snprintf(what, sizeof what, "target %d %s: B^T*A^T", _i, hisp_type_name(t));
        check_product(ctx, o, B, o, A, what);
        CK_OK(ctx, hisp_matrix_multiply(o, B, o, A, &C));
        CK_OK(rctx, hisp_matrix_multiply(o, Br, o, Ar, &R));
        same_bits(ctx, C, R, what);
        hisp_matrix_destroy(&C), hisp_matrix_destroy(&R);
        /* A*A^T: 50 x 50 with the full row 3 */
        snprintf(what, sizeof what, "target %d %s: A*A^T", _i, hisp_type_name(t));
        check_product(ctx, HISP_OP_N, A, HISP_OP_T, A, what);
        /* (A*A^T)^2 of a product kept on the device: read there in place */
        CK_OK(ctx, hisp_matrix_multiply(HISP_OP_N, A, HISP_OP_T, A, &C));
        CK_OK(rctx, hisp_matrix_multiply(HISP_OP_N, Ar, HISP_OP_T, Ar, &R));
        hisp_matrix D = NULL, RD = NULL;
        CK_OK(ctx, hisp_context_transfers(ctx, &x0));
        CK_OK(ctx, hisp_matrix_multiply(HISP_OP_N, C, HISP_OP_N, C, &D));
        CK_OK(ctx, hisp_context_transfers(ctx, &x1));
        CK_OK(rctx, hisp_matrix_multiply(HISP_OP_N, R, HISP_OP_N, R, &RD));
        CK_OK(ctx, hisp_matrix_get_info(C, &ic));
        if (dev_per_product && !is_cplx(t)) /* no operand moved: only row lists up */
            ck_assert_uint_lt(x1.h2d_bytes - x0.h2d_bytes, (uint64_t)ic.nnz * 4);
        snprintf(what, sizeof what, "target %d %s: (A*A^T)^2", _i, hisp_type_name(t));
        same_bits(ctx, D, RD, what);
        hisp_matrix_destroy(&C), hisp_matrix_destroy(&R);
        hisp_matrix_destroy(&D), hisp_matrix_destroy(&RD);
        /* H*H: a hub row for a large group, global tables (f64 and c32) */
        if (ti == 1 || ti == 2) {
            hisp_matrix H = hub_operand(ctx, t, seed + 99), Hr = hub_operand(rctx, t, seed + 99);
            snprintf(what, sizeof what, "target %d %s: H*H (a hub row)", _i, hisp_type_name(t));
            check_product(ctx, HISP_OP_N, H, HISP_OP_N, H, what);
            CK_OK(ctx, hisp_matrix_multiply(HISP_OP_N, H, HISP_OP_N, H, &C));
            CK_OK(rctx, hisp_matrix_multiply(HISP_OP_N, Hr, HISP_OP_N, Hr, &R));
            same_bits(ctx, C, R, what);
            hisp_matrix_destroy(&C), hisp_matrix_destroy(&R);
            hisp_matrix W = wide_operand(ctx, t, seed + 98), Wr = wide_operand(rctx, t, seed + 98);
            snprintf(what, sizeof what, "target %d %s: H*W (every fill table)", _i,
                     hisp_type_name(t));
            check_product(ctx, HISP_OP_N, H, HISP_OP_N, W, what);
            CK_OK(ctx, hisp_matrix_multiply(HISP_OP_N, H, HISP_OP_N, W, &C));
            CK_OK(rctx, hisp_matrix_multiply(HISP_OP_N, Hr, HISP_OP_N, Wr, &R));
            same_bits(ctx, C, R, what);
            hisp_matrix_destroy(&C), hisp_matrix_destroy(&R);
            hisp_matrix_destroy(&W), hisp_matrix_destroy(&Wr);
            W = wider_operand(ctx, t, seed + 97), Wr = wider_operand(rctx, t, seed + 97);
            snprintf(what, sizeof what, "target %d %s: H*W (global tables)", _i, hisp_type_name(t));
            /* against the reference's host product only: the dense oracle of 400 x 300000 is too
             * large */
            CK_OK(ctx, hisp_matrix_multiply(HISP_OP_N, H, HISP_OP_N, W, &C));
            CK_OK(rctx, hisp_matrix_multiply(HISP_OP_N, Hr, HISP_OP_N, Wr, &R));
            same_bits(ctx, C, R, what);
            hisp_matrix_destroy(&C), hisp_matrix_destroy(&R);
            /* a plan's numeric pass of such rows (no bitmap either), by
             * its map and by the kernels */
            hisp_matrix H2 = revalued(ctx, H, -2.0);
            CK_OK(ctx, hisp_matrix_multiply(HISP_OP_N, H2, HISP_OP_N, W, &R));
            for (int how = 0; how < 3; how++) { /* words, no map, pairs */
                hisp_spgemm_plan pl = NULL;
                hispi_spgemm_no_map = how == 1, hispi_spgemm_map_pairs = how == 2;
                long maps = hispi_spgemm_maps, words = hispi_spgemm_word_maps;
                CK_OK(ctx, hisp_spgemm_plan_create(HISP_OP_N, H, HISP_OP_N, W, &pl, &C));
                CK_OK(ctx, hisp_spgemm_plan_execute(pl, H2, W, C));
                hispi_spgemm_no_map = hispi_spgemm_map_pairs = 0;
                ck_assert_int_eq(hispi_spgemm_maps - maps, dev_per_product && how != 1);
                ck_assert_int_eq(hispi_spgemm_word_maps - words, dev_per_product && how == 0);
                same_bits(ctx, C, R, "H*W plan execute (global tables)");
                hisp_spgemm_plan_destroy(&pl);
                hisp_matrix_destroy(&C);
            }
            hisp_matrix_destroy(&R), hisp_matrix_destroy(&H2);
            hisp_matrix_destroy(&W), hisp_matrix_destroy(&Wr);
            hisp_matrix_destroy(&H), hisp_matrix_destroy(&Hr);
        }
        hisp_matrix_destroy(&A), hisp_matrix_destroy(&B);
        hisp_matrix_destroy(&Ar), hisp_matrix_destroy(&Br);
    }
    hisp_context_destroy(&rctx);
    hisp_context_destroy(&ctx);
}
END_TEST

/* Every device buffer of a plan's execution of A*B (device_operand: row 3
 * is summed by a work-group, the others by one work-item each) failed in
 * turn (its device state is made at the first execution): HISP_ERR_OUT_OF_DEVICE_MEMORY with
 * a message, C's values unchanged; the next execution succeeds with the
 * fresh product's bits, and so does one more (the state kept). */
static void plan_device_failures(hisp_context ctx, hisp_matrix A, hisp_matrix B)
{
    hisp_spgemm_plan plan = NULL;
    hisp_matrix C = NULL, F = NULL;
    CK_OK(ctx, hisp_spgemm_plan_create(HISP_OP_N, A, HISP_OP_N, B, &plan, &C));
    hisp_matrix A2 = revalued(ctx, A, -0.25), B2 = revalued(ctx, B, 1.5);
    CK_OK(ctx, hisp_matrix_multiply(HISP_OP_N, A2, HISP_OP_N, B2, &F));
    saved sc = save(ctx, C);
    long k = 1;
    for (;; k++) {
        long calls = hispi_spgemm_numeric_device_calls;
        hispi_spgemm_dev_fail_after = k;
        hisp_status s = hisp_spgemm_plan_execute(plan, A2, B2, C);
        hispi_spgemm_dev_fail_after = 0;
        if (s == HISP_SUCCESS) {
            ck_assert_int_eq(hispi_spgemm_numeric_device_calls - calls, 1);
            break;
        }
        ck_assert_msg(s == HISP_ERR_OUT_OF_DEVICE_MEMORY, "plan buffer %ld: %s", k,
                      hisp_status_string(s));
        hisp_error_info e;
        CK_OK(ctx, hisp_context_last_error(ctx, &e));
        ck_assert_msg(strstr(e.message, "device buffer"), "message: %s", e.message);
        unchanged(ctx, C, &sc, "plan execute: C after a device failure");
        ck_assert_msg(k < 100, "plan execute never succeeds");
    }
    ck_assert_msg(k > 9, "plan execute: only %ld device buffers", k - 1);
    same_bits(ctx, C, F, "plan execute after device failures vs multiply");
    hispi_spgemm_dev_fail_after = 1; /* the kept state allocates nothing more */
    CK_OK(ctx, hisp_spgemm_plan_execute(plan, A2, B2, C));
    hispi_spgemm_dev_fail_after = 0;
    same_bits(ctx, C, F, "plan execute again vs multiply");
    saved_free(&sc);
    hisp_spgemm_plan_destroy(&plan);
    hisp_matrix_destroy(&C), hisp_matrix_destroy(&F), hisp_matrix_destroy(&A2);
    hisp_matrix_destroy(&B2);
}

/* Every device buffer of a product failed in turn (a device target): an
 * operand's is HISP_ERR_OUT_OF_DEVICE_MEMORY with a message, no C, the
 * operands unchanged; a block's is absorbed by smaller blocks, C the same.
 * Products in blocks of a few hundred device bytes give one block's bits. */
/* Products with A's entries, C = M I made on the device, in the SpMV
 * kernels' every kind of block (their plan made on the device where the
 * backend can): M (n = 30000) has row 0 full (chunks with partial sums),
 * rows 1-50 700 entries (long in f64, not in f32), rows 51-99 1500 (long),
 * the others the diagonal and two more, every 7th empty. y = op(C) x
 * against the host's loops over M's arrays, op N and T. */
START_TEST(test_spmv_on_product)
{
    hisp_context ctx = target_context(_i);
    const int64_t n = 30000;
    int64_t *p = malloc((size_t)(n + 1) * 8), *ip = malloc((size_t)(n + 1) * 8);
    int64_t cap = 2 * n + 50 * 700 + 49 * 1500 + 3 * n;
    int32_t *c = malloc((size_t)cap * 4), *ic = malloc((size_t)n * 4);
    double *v = malloc((size_t)cap * 8), *iv = malloc((size_t)n * 8);
    uint64_t st = test_seed() + 77;
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        p[i] = k;
        int64_t len = i == 0 ? n : i <= 50 ? 700 : i < 100 ? 1500 : i % 7 == 0 ? 0 : 3;
        for (int64_t q = 0; q < len; q++) {
            int64_t j = i < 100 ? q * (n / len) : q == 0 ? i : (i * 31 + q * 7919) % n;
            if (q > 0 && i >= 100 && (j == i || j <= c[k - 1])) continue; /* sorted, once */
            c[k] = (int32_t)j, v[k++] = test_uniform(&st);
        }
        ip[i] = i, ic[i] = (int32_t)i, iv[i] = 1;
    }
    p[n] = k, ip[n] = n;
    double *x = malloc((size_t)n * 8), *y0 = malloc((size_t)n * 8), *want = malloc((size_t)n * 8),
           *got = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++)
        x[i] = test_uniform(&st), y0[i] = test_uniform(&st);
    for (int ti = 0; ti < 2; ti++) {
        hisp_type t = ti ? HISP_F64 : HISP_F32;
        float *vf = malloc((size_t)k * 4), *ivf = malloc((size_t)n * 4),
              *xf = malloc((size_t)n * 4), *yf = malloc((size_t)n * 4), *gf = malloc((size_t)n * 4);
        for (int64_t q = 0; q < k; q++)
            vf[q] = (float)v[q];
        for (int64_t i = 0; i < n; i++)
            ivf[i] = 1, xf[i] = (float)x[i], yf[i] = (float)y0[i];
        hisp_matrix M = NULL, I = NULL, C = NULL;
        CK_OK(ctx, hisp_matrix_create_csr(ctx, t, n, n, p, c, ti ? (void *)v : vf, &M));
        CK_OK(ctx, hisp_matrix_create_csr(ctx, t, n, n, ip, ic, ti ? (void *)iv : ivf, &I));
        CK_OK(ctx, hisp_matrix_multiply(HISP_OP_N, M, HISP_OP_N, I, &C));
        hisp_vector xv = NULL, yv = NULL;
        CK_OK(ctx, hisp_vector_create(ctx, t, n, &xv));
        CK_OK(ctx, hisp_vector_create(ctx, t, n, &yv));
        CK_OK(ctx, hisp_vector_write(xv, ti ? (void *)x : xf));
        for (int op = 0; op < 2; op++) {
            CK_OK(ctx, hisp_vector_write(yv, ti ? (void *)y0 : yf));
            double al = 1.5, be = 0.5;
            float alf = 1.5f, bef = 0.5f;
            CK_OK(ctx, hisp_spmv(ctx, op ? HISP_OP_T : HISP_OP_N, ti ? (void *)&al : &alf, C, xv,
                                 ti ? (void *)&be : &bef, yv));
            CK_OK(ctx, hisp_vector_read(yv, ti ? (void *)got : gf));
            double big = 0, err = 0;
            for (int64_t i = 0; i < n; i++)
                want[i] = 0.5 * y0[i];
            for (int64_t i = 0; i < n; i++)
                for (int64_t q = p[i]; q < p[i + 1]; q++) {
                    if (op)
                        want[c[q]] += 1.5 * v[q] * x[i];
                    else
                        want[i] += 1.5 * v[q] * x[c[q]];
                }
            for (int64_t i = 0; i < n; i++) {
                double g = ti ? got[i] : gf[i];
                err = fmax(err, fabs(g - want[i])), big = fmax(big, fabs(want[i]));
            }
            ck_assert_msg(err <= (ti ? 1e-12 : 1e-4) * big, "%s %s op %c: |y - y_ref| %g of %g",
                          test_label(_i), hisp_type_name(t), op ? 'T' : 'N', err, big);
        }
        hisp_vector_destroy(&xv), hisp_vector_destroy(&yv);
        hisp_matrix_destroy(&M), hisp_matrix_destroy(&I), hisp_matrix_destroy(&C);
        free(vf), free(ivf), free(xf), free(yf), free(gf);
    }
    free(p), free(ip), free(c), free(ic), free(v), free(iv);
    free(x), free(y0), free(want), free(got);
    hisp_context_destroy(&ctx);
}
END_TEST

START_TEST(test_device_failures)
{
    hisp_context ctx = target_context(_i);
    if (!dev_per_product) {
        hisp_context_destroy(&ctx);
        return; /* the reference: no device buffers */
    }
    uint64_t seed = test_seed() + 77;
    hisp_matrix A = device_operand(ctx, HISP_C64, false, seed),
                B = device_operand(ctx, HISP_C64, true, seed + 1);
    saved sa = save(ctx, A), sb = save(ctx, B);
    hisp_matrix R = NULL;
    long before = hispi_spgemm_dev_buffers;
    CK_OK(ctx, hisp_matrix_multiply(HISP_OP_N, A, HISP_OP_N, B, &R));
    long n = hispi_spgemm_dev_buffers - before, failed = 0, redone = 0;
    ck_assert_msg(n > 10, "only %ld device buffers", n);
    /* each buffer of the product failed in turn: an operand's is the call's
     * error; a block's is done again in smaller blocks, with the same C */
    for (long k = 1; k <= n; k++) {
        hisp_matrix C = (hisp_matrix)&k;
        hispi_spgemm_dev_fail_after = k;
        hisp_status s = hisp_matrix_multiply(HISP_OP_N, A, HISP_OP_N, B, &C);
        hispi_spgemm_dev_fail_after = 0;
        if (s == HISP_SUCCESS) {
            same_bits(ctx, C, R, "a block done again");
            hisp_matrix_destroy(&C);
            redone++;
            continue;
        }
        failed++;
        ck_assert_msg(s == HISP_ERR_OUT_OF_DEVICE_MEMORY, "buffer %ld: %s", k,
                      hisp_status_string(s));
        ck_assert_ptr_null(C);
        hisp_error_info e;
        CK_OK(ctx, hisp_context_last_error(ctx, &e));
        ck_assert_msg(strstr(e.message, "device buffer"), "message: %s", e.message);
        unchanged(ctx, A, &sa, "device failure");
        unchanged(ctx, B, &sb, "device failure");
    }
    ck_assert_msg(failed >= 8 && redone >= 2, "%ld failed, %ld done again", failed, redone);
    /* blocks of at most 600 device bytes: many blocks, the same C */
    hispi_spgemm_dev_block_bytes = 600;
    for (int ob = 0; ob < 2; ob++) {
        hisp_matrix C = NULL, F = NULL;
        CK_OK(ctx, hisp_matrix_multiply(HISP_OP_N, A, (hisp_op)ob, ob ? A : B, &C));
        hisp_spgemm_stats cs;
        CK_OK(ctx, hisp_context_spgemm_stats(ctx, &cs));
        ck_assert_int_gt(cs.blocks, 4);
        hispi_spgemm_dev_block_bytes = 0;
        CK_OK(ctx, hisp_matrix_multiply(HISP_OP_N, A, (hisp_op)ob, ob ? A : B, &F));
        hispi_spgemm_dev_block_bytes = 600;
        same_bits(ctx, C, F, "blocks of 600 bytes vs one block");
        hisp_spgemm_stats gs;
        CK_OK(ctx, hisp_context_spgemm_stats(ctx, &gs)); /* F's: one block a phase */
        ck_assert_int_eq(gs.blocks, 2);
        hisp_matrix_destroy(&C), hisp_matrix_destroy(&F);
    }
    hispi_spgemm_dev_block_bytes = 0;
    hisp_matrix_destroy(&R);
    plan_device_failures(ctx, A, B);
    saved_free(&sa), saved_free(&sb);
    hisp_matrix_destroy(&A), hisp_matrix_destroy(&B);
    hisp_context_destroy(&ctx);
}
END_TEST

/* The 40 x 40 matrix with entry (i, (i * k + 3) % 40) = s for each row i
 * (a permutation for k odd and prime to 5). */
static hisp_matrix permutation(hisp_context ctx, int k, double sv)
{
    int64_t p[41];
    int32_t c[40];
    double v[40];
    for (int i = 0; i <= 40; i++)
        p[i] = i;
    for (int i = 0; i < 40; i++)
        c[i] = (i * k + 3) % 40, v[i] = sv;
    hisp_matrix X = NULL;
    CK_OK(ctx, hisp_matrix_create_csr(ctx, HISP_F64, 40, 40, p, c, v, &X));
    return X;
}

/* P^T A P with a P that lives on the device only (a product kept there):
 * P^T is made on the device (no upload of P), the host path's bits, the
 * transpose's long rows by the heap sort too; every device buffer of the
 * call failed in turn is HISP_ERR_OUT_OF_DEVICE_MEMORY with C NULL, and
 * the next call has the same bits. */
START_TEST(test_ptap_device)
{
    hisp_context ctx = target_context(_i);
    if (!dev_per_product) {
        hisp_context_destroy(&ctx);
        return; /* the reference: nothing on a device */
    }
    uint64_t st = test_seed() + 321;
    hisp_matrix A = random_matrix(ctx, HISP_F64, 40, 40, 0.15, HISP_FORMAT_CSR, &st);
    hisp_matrix P = random_matrix(ctx, HISP_F64, 40, 13, 0.3, HISP_FORMAT_CSR, &st);
    hisp_matrix S = permutation(ctx, 7, 1.0), Pd = NULL, Ph = NULL, C = NULL, R = NULL;
    CK_OK(ctx, hisp_matrix_multiply(HISP_OP_N, S, HISP_OP_N, P, &Pd)); /* kept on the device */
    CK_OK(ctx, hisp_matrix_multiply(HISP_OP_N, S, HISP_OP_N, P, &Ph));
    const int64_t *hp;
    CK_OK(ctx, hisp_matrix_host_arrays(Ph, &hp, NULL, NULL, NULL)); /* read on the host */
    CK_OK(ctx, hisp_matrix_ptap(Ph, A, &R));
    for (int heap = 0; heap < 2; heap++) {
        hispi_spgemm_sort_slots = heap ? 4 : 0;
        hisp_transfer_stats x0, x1;
        CK_OK(ctx, hisp_context_transfers(ctx, &x0));
        CK_OK(ctx, hisp_matrix_ptap(Pd, A, &C));
        CK_OK(ctx, hisp_context_transfers(ctx, &x1));
        ck_assert_msg(x1.h2d_bytes - x0.h2d_bytes < 40 * 40 * 12, "%llu bytes uploaded",
                      (unsigned long long)(x1.h2d_bytes - x0.h2d_bytes));
        same_bits(ctx, C, R,
                  heap ? "P^T A P, P on the device (heap sort)" : "P^T A P, P on the device");
        hisp_matrix_destroy(&C);
    }
    hispi_spgemm_sort_slots = 0;
    long failed = 0;
    for (long k = 1;; k++) {
        hispi_spgemm_dev_fail_after = k;
        hisp_status s = hisp_matrix_ptap(Pd, A, &C);
        hispi_spgemm_dev_fail_after = 0;
        if (!s) break;
        ck_assert_int_eq(s, HISP_ERR_OUT_OF_DEVICE_MEMORY);
        ck_assert_ptr_null(C);
        failed++;
    }
    ck_assert_int_gt(failed, 3);
    same_bits(ctx, C, R, "P^T A P after failures");
    hisp_matrix_destroy(&C), hisp_matrix_destroy(&R), hisp_matrix_destroy(&Pd);
    hisp_matrix_destroy(&Ph), hisp_matrix_destroy(&S), hisp_matrix_destroy(&P);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

/* plan_execute(A, B, C) refused with HISP_ERR_INVALID_ARGUMENT, the
 * message naming why, C's values unchanged. */
static void refused_pattern(hisp_context ctx, hisp_spgemm_plan plan, hisp_matrix A, hisp_matrix B,
                            hisp_matrix C, const char *why)
{
    saved sc = save(ctx, C);
    ck_assert_int_eq(hisp_spgemm_plan_execute(plan, A, B, C), HISP_ERR_INVALID_ARGUMENT);
    hisp_error_info e;
    CK_OK(ctx, hisp_context_last_error(ctx, &e));
    ck_assert_msg(strstr(e.message, why), "message: %s", e.message);
    unchanged(ctx, C, &sc, why);
    saved_free(&sc);
}

/* A plan executed with operands that live on the device only (products
 * kept there) reads them in place: their values are not uploaded, C has
 * the fresh product's bits; an operand whose pattern on the device differs
 * from the plan's (same sizes) is HISP_ERR_INVALID_ARGUMENT, C unchanged;
 * so too for X*X, where B is read from A's buffers. */
START_TEST(test_plan_device_operands)
{
    hisp_context ctx = target_context(_i);
    if (!dev_per_product) {
        hisp_context_destroy(&ctx);
        return; /* the reference: nothing on a device */
    }
    uint64_t st = test_seed() + 123;
    hisp_matrix M = random_matrix(ctx, HISP_F64, 40, 30, 0.2, HISP_FORMAT_CSR, &st);
    hisp_matrix E = random_matrix(ctx, HISP_F64, 30, 25, 0.2, HISP_FORMAT_CSR, &st);
    hisp_matrix P1 = permutation(ctx, 7, 1.0), S1 = permutation(ctx, 7, 2.5),
                P2 = permutation(ctx, 11, 1.0);
    hisp_matrix X1 = NULL, X2 = NULL, X3 = NULL, C = NULL, F = NULL;
    CK_OK(ctx, hisp_matrix_multiply(HISP_OP_N, P1, HISP_OP_N, M, &X1)); /* kept on the device */
    CK_OK(ctx, hisp_matrix_multiply(HISP_OP_N, S1, HISP_OP_N, M, &X2)); /* X1's pattern */
    CK_OK(ctx, hisp_matrix_multiply(HISP_OP_N, P2, HISP_OP_N, M, &X3)); /* other rows */
    hisp_spgemm_plan plan = NULL;
    CK_OK(ctx, hisp_spgemm_plan_create(HISP_OP_N, X1, HISP_OP_N, E, &plan, &C));
    for (int round = 0; round < 2; round++) {
        long calls = hispi_spgemm_numeric_device_calls;
        hisp_transfer_stats x0, x1;
        CK_OK(ctx, hisp_context_transfers(ctx, &x0));
        CK_OK(ctx, hisp_spgemm_plan_execute(plan, X2, E, C));
        CK_OK(ctx, hisp_context_transfers(ctx, &x1));
        ck_assert_int_eq(hispi_spgemm_numeric_device_calls - calls, 1);
        hisp_matrix_info ix;
        CK_OK(ctx, hisp_matrix_get_info(X2, &ix));
        if (round) /* the state kept: only E's values go up, not X2's */
            ck_assert_msg(x1.h2d_bytes - x0.h2d_bytes < (uint64_t)ix.nnz * 8, "%llu bytes uploaded",
                          (unsigned long long)(x1.h2d_bytes - x0.h2d_bytes));
        CK_OK(ctx, hisp_matrix_multiply(HISP_OP_N, X2, HISP_OP_N, E, &F));
        same_bits(ctx, C, F, "plan execute with a device operand");
        hisp_matrix_destroy(&F);
        /* X3: the same sizes, another pattern, seen by the device */
        refused_pattern(ctx, plan, X3, E, C, "A's pattern on the device differs");
    }
    hisp_spgemm_plan_destroy(&plan);
    hisp_matrix_destroy(&C);
    /* X*X (B read from A's buffers, its pattern checked once): X2 with X1's
     * pattern, X3 of another as A and B, then as B only */
    hisp_matrix_destroy(&X1), hisp_matrix_destroy(&X2), hisp_matrix_destroy(&X3);
    hisp_matrix Q = random_matrix(ctx, HISP_F64, 40, 40, 0.15, HISP_FORMAT_CSR, &st);
    CK_OK(ctx, hisp_matrix_multiply(HISP_OP_N, P1, HISP_OP_N, Q, &X1));
    CK_OK(ctx, hisp_matrix_multiply(HISP_OP_N, S1, HISP_OP_N, Q, &X2));
    CK_OK(ctx, hisp_matrix_multiply(HISP_OP_N, P2, HISP_OP_N, Q, &X3));
    CK_OK(ctx, hisp_spgemm_plan_create(HISP_OP_N, X1, HISP_OP_N, X1, &plan, &C));
    CK_OK(ctx, hisp_spgemm_plan_execute(plan, X2, X2, C));
    CK_OK(ctx, hisp_matrix_multiply(HISP_OP_N, X2, HISP_OP_N, X2, &F));
    same_bits(ctx, C, F, "plan execute X*X on the device");
    hisp_matrix_destroy(&F);
    for (int both = 1; both >= 0; both--) {
        refused_pattern(ctx, plan, both ? X3 : X2, X3, C, both ? "A's pattern" : "B's pattern");
    }
    hisp_spgemm_plan_destroy(&plan);
    hisp_matrix_destroy(&C), hisp_matrix_destroy(&Q), hisp_matrix_destroy(&X1);
    hisp_matrix_destroy(&X2);
    hisp_matrix_destroy(&X3), hisp_matrix_destroy(&P1), hisp_matrix_destroy(&S1);
    hisp_matrix_destroy(&P2), hisp_matrix_destroy(&M), hisp_matrix_destroy(&E);
    hisp_context_destroy(&ctx);
}
END_TEST

/* X's device copy in hisp's layout (as AMG's levels live there). */
static hisp_matrix on_device(hisp_context ctx, hisp_matrix X)
{
    hisp_matrix D = NULL;
    CK_OK(ctx, hispi_amg_dev_copy(X, &D));
    ck_assert(D != X && hispi_spgemm_refill_ok(D, D, D) == (D->host.nrows == D->host.ncols));
    return D;
}

/* A product computed again into its C (hispi_spgemm_refill, AMG's update):
 * for new values of A and B on their patterns, C (the same handle and
 * buffers) gets the fresh product's bits, through every class of rows
 * (merges, local tables, bitmaps, global tables, a hub row for a large
 * group), with nothing of C read back; an SpMV after it sees the new
 * values (C's SpMV form made again). */
START_TEST(test_refill)
{
    hisp_context ctx = target_context(_i);
    if (!dev_per_product) {
        hisp_context_destroy(&ctx);
        return; /* the reference: nothing on a device */
    }
    uint64_t seed = test_seed() + 555;
    for (int ti = 0; ti < 2; ti++)
        for (int pair = 0; pair < 3; pair++) {
            hisp_type t = ti ? HISP_F64 : HISP_F32;
            hisp_matrix A = pair ? hub_operand(ctx, t, seed) : device_operand(ctx, t, false, seed);
            hisp_matrix B = pair == 0   ? device_operand(ctx, t, true, seed + 1)
                            : pair == 1 ? hub_operand(ctx, t, seed + 2)
                                        : wider_operand(ctx, t, seed + 3);
            hisp_matrix A2 = revalued(ctx, A, -1.25), B2 = revalued(ctx, B, 0.5);
            hisp_matrix Ad = on_device(ctx, A), Bd = on_device(ctx, B), A2d = on_device(ctx, A2),
                        B2d = on_device(ctx, B2), C = NULL, F = NULL;
            char what[100];
            snprintf(what, sizeof what, "%s %s pair %d", test_label(_i), hisp_type_name(t), pair);
            CK_OK(ctx, hisp_matrix_multiply(HISP_OP_N, Ad, HISP_OP_N, Bd, &C));
            ck_assert_msg(hispi_spgemm_refill_ok(A2d, B2d, C), "%s: C not on the device", what);
            ck_assert(!hispi_spgemm_refill_ok(A2, B2d, C)); /* a host operand */
            hisp_matrix_info ic;
            CK_OK(ctx, hisp_matrix_get_info(C, &ic));
            /* an SpMV before (C's SpMV form made) and after the refill */
            hisp_vector x = NULL, y = NULL, z = NULL;
            CK_OK(ctx, hisp_vector_create(ctx, t, ic.ncols, &x));
            CK_OK(ctx, hisp_vector_create(ctx, t, ic.nrows, &y));
            CK_OK(ctx, hisp_vector_create(ctx, t, ic.nrows, &z));
            float onef = 1, zerof = 0;
            double oned = 1, zerod = 0;
            const void *one = ti ? (void *)&oned : &onef, *zero = ti ? (void *)&zerod : &zerof;
            CK_OK(ctx, hisp_vector_fill(x, hisp_scalar_host(one)));
            CK_OK(ctx, hisp_spmv(ctx, HISP_OP_N, one, C, x, zero, y));
            const void *col = C->ext.colind, *val = C->ext.val;
            long refills = hispi_spgemm_refills;
            hisp_transfer_stats x0, x1;
            CK_OK(ctx, hisp_context_transfers(ctx, &x0));
            CK_OK(ctx, hispi_spgemm_refill(A2d, B2d, C));
            CK_OK(ctx, hisp_context_transfers(ctx, &x1));
            ck_assert_int_eq(hispi_spgemm_refills - refills, 1);
            ck_assert_msg(C->ext.colind == col && C->ext.val == val, "%s: C's buffers moved", what);
            ck_assert_msg(x1.d2h_bytes - x0.d2h_bytes < (uint64_t)ic.nnz * 4,
                          "%s: %llu bytes read back", what,
                          (unsigned long long)(x1.d2h_bytes - x0.d2h_bytes));
            CK_OK(ctx, hisp_spmv(ctx, HISP_OP_N, one, C, x, zero, y));
            CK_OK(ctx, hisp_matrix_multiply(HISP_OP_N, A2, HISP_OP_N, B2, &F));
            CK_OK(ctx, hisp_spmv(ctx, HISP_OP_N, one, F, x, zero, z));
            same_bits(ctx, C, F, what);
            size_t es = hisp_type_size(t);
            void *gy = malloc((size_t)ic.nrows * es), *gz = malloc((size_t)ic.nrows * es);
            CK_OK(ctx, hisp_vector_read(y, gy));
            CK_OK(ctx, hisp_vector_read(z, gz));
            ck_assert_msg(!memcmp(gy, gz, (size_t)ic.nrows * es), "%s: SpMV after the refill",
                          what);
            free(gy), free(gz);
            hisp_vector_destroy(&x), hisp_vector_destroy(&y), hisp_vector_destroy(&z);
            hisp_matrix_destroy(&C), hisp_matrix_destroy(&F);
            hisp_matrix_destroy(&Ad), hisp_matrix_destroy(&Bd);
            hisp_matrix_destroy(&A2d), hisp_matrix_destroy(&B2d);
            hisp_matrix_destroy(&A), hisp_matrix_destroy(&B);
            hisp_matrix_destroy(&A2), hisp_matrix_destroy(&B2);
        }
    hisp_context_destroy(&ctx);
}
END_TEST

/* A plan's device state on and off its backend: executions after a switch
 * to the reference backend (the host's numeric phase) and back (the state
 * made anew on the device) give the fresh product's bits; a plan whose
 * context ends first is destroyed without touching it. */
START_TEST(test_plan_backends)
{
    const test_target *tg;
    test_targets(&tg);
    hisp_context ctx = target_context(_i);
    if (!dev_per_product) {
        hisp_context_destroy(&ctx);
        return; /* the reference: nothing on a device */
    }
    uint64_t st = test_seed() + 99;
    hisp_matrix A = random_matrix(ctx, HISP_F64, 40, 35, 0.1, HISP_FORMAT_CSR, &st);
    hisp_matrix B = random_matrix(ctx, HISP_F64, 40, 30, 0.1, HISP_FORMAT_CSR, &st);
    hisp_spgemm_plan plan = NULL;
    hisp_matrix C = NULL;
    CK_OK(ctx, hisp_spgemm_plan_create(HISP_OP_T, A, HISP_OP_N, B, &plan, &C));
    for (int round = 0; round < 4; round++) {
        /* round 1 on the reference backend, rounds 0, 2 and 3 on the device */
        hisp_backend_kind kind = round == 1 ? HISP_BACKEND_REFERENCE : tg[_i].kind;
        CK_OK(ctx, hisp_context_set_backend(ctx, kind, round == 1 ? 0 : tg[_i].device));
        hisp_matrix A2 = revalued(ctx, A, 2.0 + round), B2 = revalued(ctx, B, -0.5);
        long calls = hispi_spgemm_numeric_device_calls;
        hisp_transfer_stats x0, x1;
        CK_OK(ctx, hisp_context_transfers(ctx, &x0));
        CK_OK(ctx, hisp_spgemm_plan_execute(plan, A2, B2, C));
        CK_OK(ctx, hisp_context_transfers(ctx, &x1));
        ck_assert_int_eq(hispi_spgemm_numeric_device_calls - calls, round != 1);
        /* on the device C's values stay there (C read back and compared
         * below: the next execution must replace that host copy) */
        if (round != 1)
            ck_assert_msg(x1.d2h_bytes == x0.d2h_bytes, "round %d: %llu bytes read back", round,
                          (unsigned long long)(x1.d2h_bytes - x0.d2h_bytes));
        hisp_matrix F = NULL;
        CK_OK(ctx, hisp_matrix_multiply(HISP_OP_T, A2, HISP_OP_N, B2, &F));
        same_bits(ctx, C, F, round == 1 ? "execute on the reference" : "execute on the device");
        hisp_matrix_destroy(&F), hisp_matrix_destroy(&A2), hisp_matrix_destroy(&B2);
    }
    hisp_matrix_destroy(&C), hisp_matrix_destroy(&A), hisp_matrix_destroy(&B);
    hisp_context_destroy(&ctx); /* the plan's device state goes with the backend */
    hisp_spgemm_plan_destroy(&plan);
    ck_assert_ptr_null(plan);
}
END_TEST

/* Without the hook a CPU device (PoCL) computes products and plan
 * executions with the host pass, bit for bit as the reference target; a
 * GPU keeps them on the device. */
START_TEST(test_cpu_device)
{
    const test_target *tg;
    test_targets(&tg);
    hisp_context ctx = target_context(_i);
    hispi_spgemm_cpu_kernels = 0;
    hisp_device_info di;
    CK_OK(ctx, hisp_context_get_device(ctx, &di));
    long want = dev_per_product && !di.is_cpu;
    uint64_t st = test_seed() + 7;
    hisp_matrix A = random_matrix(ctx, HISP_C32, 70, 50, 0.1, HISP_FORMAT_CSR, &st);
    hisp_matrix B = random_matrix(ctx, HISP_C32, 70, 60, 0.1, HISP_FORMAT_CSR, &st);
    hisp_matrix C = NULL, D = NULL, R = NULL;
    hisp_spgemm_plan plan = NULL;
    long calls = hispi_spgemm_device_calls, ncalls = hispi_spgemm_numeric_device_calls;
    CK_OK(ctx, hisp_matrix_multiply(HISP_OP_H, A, HISP_OP_N, B, &C));
    CK_OK(ctx, hisp_spgemm_plan_create(HISP_OP_H, A, HISP_OP_N, B, &plan, &D));
    ck_assert_int_eq(hispi_spgemm_device_calls - calls, 2 * want);
    hisp_matrix A2 = revalued(ctx, A, 3.0);
    CK_OK(ctx, hisp_spgemm_plan_execute(plan, A2, B, D));
    ck_assert_int_eq(hispi_spgemm_numeric_device_calls - ncalls, want);
    CK_OK(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_REFERENCE, 0));
    CK_OK(ctx, hisp_matrix_multiply(HISP_OP_H, A2, HISP_OP_N, B, &R));
    same_bits(ctx, D, R, "plan execute vs the reference");
    hisp_matrix_destroy(&R);
    CK_OK(ctx, hisp_matrix_multiply(HISP_OP_H, A, HISP_OP_N, B, &R));
    same_bits(ctx, C, R, "product vs the reference");
    hisp_spgemm_plan_destroy(&plan);
    hisp_matrix_destroy(&R), hisp_matrix_destroy(&C), hisp_matrix_destroy(&D);
    hisp_matrix_destroy(&A2), hisp_matrix_destroy(&A), hisp_matrix_destroy(&B);
    /* a plan whose C a device execution left there, then executed on the
     * host of a CPU device: C comes back first, the bits stay */
    CK_OK(ctx, hisp_context_set_backend(ctx, tg[_i].kind, tg[_i].device));
    A = random_matrix(ctx, HISP_F64, 60, 40, 0.1, HISP_FORMAT_CSR, &st);
    hispi_spgemm_cpu_kernels = 1;
    CK_OK(ctx, hisp_spgemm_plan_create(HISP_OP_T, A, HISP_OP_N, A, &plan, &D));
    A2 = revalued(ctx, A, 2.0);
    CK_OK(ctx, hisp_spgemm_plan_execute(plan, A2, A2, D));
    hispi_spgemm_cpu_kernels = 0;
    hisp_matrix A3 = revalued(ctx, A, -3.0);
    CK_OK(ctx, hisp_spgemm_plan_execute(plan, A3, A3, D));
    CK_OK(ctx, hisp_matrix_multiply(HISP_OP_T, A3, HISP_OP_N, A3, &R));
    same_bits(ctx, D, R, "a device C executed on the host");
    hisp_spgemm_plan_destroy(&plan);
    hisp_matrix_destroy(&R), hisp_matrix_destroy(&D), hisp_matrix_destroy(&A3);
    hisp_matrix_destroy(&A2), hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
    hispi_spgemm_cpu_kernels = 1;
}
END_TEST

/* The option spgemm=cusparse: on a CUDA target cuSPARSE's products, A*B
 * and A*A^T against the oracle, P^T*A*P against hisp's within rounding;
 * elsewhere, and for complex entries, HISP_ERR_UNSUPPORTED with the reason
 * and no C. */
START_TEST(test_vendor)
{
    hisp_context ctx = target_context(_i);
    hisp_device_info di;
    CK_OK(ctx, hisp_context_get_device(ctx, &di));
    bool cuda = di.backend == HISP_BACKEND_CUDA;
    uint64_t st = test_seed() + 31;
    CK_OK(ctx, hisp_context_set_option(ctx, "spgemm", "cusparse"));
    for (int ti = 0; ti < 4; ti++) {
        hisp_type t = types[ti];
        hisp_matrix A = random_matrix(ctx, t, 40, 30, 0.1, HISP_FORMAT_CSR, &st);
        hisp_matrix B = random_matrix(ctx, t, 30, 25, 0.15, HISP_FORMAT_CSR, &st);
        hisp_matrix C = NULL;
        hisp_status s = hisp_matrix_multiply(HISP_OP_N, A, HISP_OP_N, B, &C);
        if (!cuda || is_cplx(t)) {
            ck_assert_int_eq(s, HISP_ERR_UNSUPPORTED);
            ck_assert_ptr_null(C);
            hisp_error_info e;
            CK_OK(ctx, hisp_context_last_error(ctx, &e));
            ck_assert_msg(strstr(e.message, "spgemm=cusparse"), "message: %s", e.message);
        } else {
            CK_OK(ctx, s);
            for (int aat = 0; aat < 2; aat++) {
                hisp_op ob = aat ? HISP_OP_T : HISP_OP_N;
                hisp_matrix X = aat ? A : B;
                if (aat) CK_OK(ctx, hisp_matrix_multiply(HISP_OP_N, A, ob, X, &C));
                entries ea = read_entries(ctx, A, HISP_OP_N), ex = read_entries(ctx, X, ob);
                oracle o = oracle_of(&ea, &ex);
                check_against(ctx, C, &o, aat ? "cuSPARSE A*A^T" : "cuSPARSE A*B");
                oracle_free(&o), entries_free(&ea), entries_free(&ex);
                hisp_matrix_destroy(&C);
            }
            /* P^T A P: two of cuSPARSE's products, hisp's P^T */
            hisp_matrix S = random_matrix(ctx, t, 40, 40, 0.1, HISP_FORMAT_CSR, &st), R = NULL;
            CK_OK(ctx, hisp_matrix_ptap(A, S, &C));
            CK_OK(ctx, hisp_context_set_option(ctx, "spgemm", "hisp"));
            CK_OK(ctx, hisp_matrix_ptap(A, S, &R));
            CK_OK(ctx, hisp_context_set_option(ctx, "spgemm", "cusparse"));
            hisp_matrix_info ic, ir;
            CK_OK(ctx, hisp_matrix_get_info(C, &ic));
            CK_OK(ctx, hisp_matrix_get_info(R, &ir));
            ck_assert_int_eq(ic.nnz, ir.nnz);
            const int64_t *pc, *pr;
            const int32_t *cc, *cr;
            const void *vc, *vr;
            CK_OK(ctx, hisp_matrix_host_arrays(C, &pc, NULL, &cc, &vc));
            CK_OK(ctx, hisp_matrix_host_arrays(R, &pr, NULL, &cr, &vr));
            ck_assert(!memcmp(pc, pr, (size_t)(ic.nrows + 1) * 8));
            ck_assert(!memcmp(cc, cr, (size_t)ic.nnz * 4));
            for (int64_t k = 0; k < ic.nnz; k++) {
                long double x = scalar(t, vc, k), y = scalar(t, vr, k);
                ck_assert_msg(fabsl(x - y) <= (is_single(t) ? 1e-4L : 1e-12L) * (fabsl(y) + 1),
                              "P^T A P entry %lld: %Lg, hisp's %Lg", (long long)k, x, y);
            }
            hisp_matrix_destroy(&S), hisp_matrix_destroy(&R), hisp_matrix_destroy(&C);
        }
        hisp_matrix_destroy(&A), hisp_matrix_destroy(&B);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* The kernels of kernels/spgemm.cl through NVRTC (no device needed): every
 * entry type, the bitmaps' smallest and largest words (the values of
 * spgemm_dev.c's kernel_opts). */
START_TEST(test_nvrtc)
{
#ifdef HISP_HAVE_CUDA
    hisp_context ctx = NULL;
    ck_assert_int_eq(hisp_context_create(&ctx), HISP_SUCCESS);
    CK_OK(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_REFERENCE, 0));
    for (int k = 0; k < 8; k++) {
        char opts[240];
        snprintf(opts, sizeof opts,
                 "-DVALUE_T=%s -DIS_DOUBLE=%d -DATOM64=0 -DNC=%d -DGS=%d -DSUB=8 -DTS=512 "
                 "-DTL=2048 -DMNA=16 -DMPROD=256 -DGBIG=16384 -DNBW=%d -DBLV=%d -DTSORT=1024",
                 k % 2 ? "double" : "float", k % 2, 1 + k / 2 % 2, HISPI_SPGEMM_GS,
                 k / 4 ? 8192 : 128, k / 4 ? 64 : 2048);
        if (!test_nvrtc_build(ctx, HISPI_PROG_SPGEMM, opts, "SpGEMM NVRTC builds")) break;
    }
    hisp_context_destroy(&ctx);
#else
    test_skip("SpGEMM NVRTC builds: the CUDA backend is not compiled in");
#endif
}
END_TEST

Suite *suite_spgemm(void)
{
    Suite *s = suite_create("spgemm");
    const test_target *t;
    int n = test_targets(&t);
    TCase *tc = tcase_create("spgemm");
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, test_ops, 0, n);
    tcase_add_loop_test(tc, test_shapes, 0, n);
    tcase_add_loop_test(tc, test_ptap, 0, n);
    tcase_add_loop_test(tc, test_plan, 0, n);
    tcase_add_loop_test(tc, test_alloc_failures, 0, n);
    tcase_add_loop_test(tc, test_device, 0, n);
    tcase_add_loop_test(tc, test_device_failures, 0, n);
    tcase_add_loop_test(tc, test_spmv_on_product, 0, n);
    tcase_add_loop_test(tc, test_plan_backends, 0, n);
    tcase_add_loop_test(tc, test_plan_device_operands, 0, n);
    tcase_add_loop_test(tc, test_ptap_device, 0, n);
    tcase_add_loop_test(tc, test_refill, 0, n);
    tcase_add_loop_test(tc, test_generators, 0, n);
    tcase_add_loop_test(tc, test_real_matrices, 0, n);
    tcase_add_loop_test(tc, test_cpu_device, 0, n);
    tcase_add_loop_test(tc, test_vendor, 0, n);
    tcase_add_test(tc, test_plan_refusals);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_threads);
    tcase_add_test(tc, test_nvrtc);
    suite_add_tcase(s, tc);
    return s;
}
