/* HiSparse on the host: construction and exact round trips, node types,
 * O(1) transpose / scale, reference SpMV and add, files, copy-on-write edits. */
#include "hisparse/hispi_hisparse.h"
#include "testutil.h"

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A sorted CSR copy of A (its own handle) and its arrays. */
typedef struct {
    hisp_matrix M;
    hisp_matrix_info info;
    const int64_t *ptr;
    const int32_t *cols;
    const void *vals;
} csr_copy;

static csr_copy csr_of(hisp_context ctx, hisp_matrix A)
{
    csr_copy c = {0};
    CK_OK(ctx, hisp_matrix_duplicate(A, HISP_FORMAT_CSR, &c.M));
    CK_OK(ctx, hisp_matrix_get_info(c.M, &c.info));
    CK_OK(ctx, hisp_matrix_host_arrays(c.M, &c.ptr, NULL, &c.cols, &c.vals));
    return c;
}

/* Exact equality (structure and value bytes) of two matrices as shown. */
static void assert_same(hisp_context ctx, hisp_matrix A, hisp_matrix B, const char *what)
{
    csr_copy a = csr_of(ctx, A), b = csr_of(ctx, B);
    ck_assert_msg(a.info.nrows == b.info.nrows && a.info.ncols == b.info.ncols,
                  "%s: sizes %lldx%lld vs %lldx%lld", what, (long long)a.info.nrows,
                  (long long)a.info.ncols, (long long)b.info.nrows, (long long)b.info.ncols);
    ck_assert_msg(a.info.nnz == b.info.nnz, "%s: nnz %lld vs %lld", what, (long long)a.info.nnz,
                  (long long)b.info.nnz);
    ck_assert_msg(memcmp(a.ptr, b.ptr, (size_t)(a.info.nrows + 1) * 8) == 0, "%s: row pointers",
                  what);
    ck_assert_msg(a.info.nnz == 0 || memcmp(a.cols, b.cols, (size_t)a.info.nnz * 4) == 0,
                  "%s: column indices", what);
    ck_assert_msg(a.info.nnz == 0 ||
                      memcmp(a.vals, b.vals, (size_t)a.info.nnz * hisp_type_size(a.info.type)) == 0,
                  "%s: values", what);
    hisp_matrix_destroy(&a.M);
    hisp_matrix_destroy(&b.M);
}

/* H = A in HiSparse with node size d (A untouched). */
static hisp_matrix to_hisparse(hisp_context ctx, hisp_matrix A, int d)
{
    hisp_matrix H = NULL;
    CK_OK(ctx, hisp_matrix_set_node_size(A, d));
    CK_OK(ctx, hisp_matrix_duplicate(A, HISP_FORMAT_HISPARSE, &H));
    hisp_matrix_info info;
    CK_OK(ctx, hisp_matrix_get_info(H, &info));
    ck_assert_int_eq(info.format, HISP_FORMAT_HISPARSE);
    return H;
}

static int64_t seen_types[9];

static void roundtrip(hisp_context ctx, hisp_matrix A, int d, const char *what)
{
    hisp_matrix H = to_hisparse(ctx, A, d);
    char msg[256];
    snprintf(msg, sizeof msg, "%s, d = %d", what, d);
    assert_same(ctx, A, H, msg);
    hisp_hisparse_profile p;
    CK_OK(ctx, hisp_matrix_hisparse_profile(H, &p));
    for (int t = 1; t < 9; t++)
        seen_types[t] += p.nodes[t];
    uint64_t bytes = 0, measured = 0;
    hisp_matrix_info info;
    CK_OK(ctx, hisp_matrix_get_info(H, &info));
    CK_OK(ctx, hisp_matrix_format_bytes(H, HISP_FORMAT_HISPARSE, info.type, &bytes));
    CK_OK(ctx, hisp_matrix_format_bytes(A, HISP_FORMAT_HISPARSE, info.type, &measured));
    ck_assert_msg(bytes == p.bytes && bytes == measured && bytes == p.pool_used,
                  "%s: bytes %llu, profile %llu, size pass %llu, pool %llu", msg,
                  (unsigned long long)bytes, (unsigned long long)p.bytes,
                  (unsigned long long)measured, (unsigned long long)p.pool_used);
    /* in place, both ways */
    hisp_matrix B = NULL;
    CK_OK(ctx, hisp_matrix_duplicate(A, HISP_FORMAT_COO, &B));
    CK_OK(ctx, hisp_matrix_set_node_size(B, d));
    CK_OK(ctx, hisp_matrix_convert(B, HISP_FORMAT_HISPARSE));
    CK_OK(ctx, hisp_matrix_convert(B, HISP_FORMAT_CSC));
    CK_OK(ctx, hisp_matrix_convert(B, HISP_FORMAT_HISPARSE));
    CK_OK(ctx, hisp_matrix_convert(B, HISP_FORMAT_COO));
    assert_same(ctx, A, B, msg);
    hisp_matrix_destroy(&B);
    hisp_matrix_destroy(&H);
}

START_TEST(test_roundtrip_shapes)
{
    uint64_t st = test_seed() + 301;
    hisp_context ctx = test_default_context();
    /* empty, single rows/cols, not powers of d, exactly d, d + 1 */
    int64_t shapes[][2] = {{0, 0},   {0, 7},     {1, 1},      {1, 300},  {300, 1},
                           {4, 4},   {5, 5},     {16, 17},    {37, 53},  {100, 64},
                           {129, 3}, {257, 255}, {1000, 999}, {4097, 70}};
    int ds[] = {4, 8, 16, 128, 256};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int ty = 0; ty < 2; ty++) {
            hisp_type t = ty ? HISP_F64 : HISP_F32;
            double dens = shapes[s][0] * shapes[s][1] > 10000 ? 0.01 : 0.2;
            hisp_matrix A = test_random_matrix(ctx, t, shapes[s][0], shapes[s][1], dens, &st);
            for (size_t k = 0; k < sizeof ds / sizeof ds[0]; k++) {
                char what[128];
                snprintf(what, sizeof what, "%lldx%lld %s", (long long)shapes[s][0],
                         (long long)shapes[s][1], hisp_type_name(t));
                roundtrip(ctx, A, ds[k], what);
            }
            hisp_matrix_destroy(&A);
        }
    hisp_context_destroy(&ctx);
}
END_TEST

/* Structured inputs from the generators, including explicit zeros. */
START_TEST(test_roundtrip_structured)
{
    hisp_context ctx = test_default_context();
    for (int k = 0; k < HISP_GEN_COUNT; k++) {
        hisp_gen_params p;
        hisp_gen_defaults((hisp_gen_kind)k, &p);
        p.seed = test_seed();
        if (k == HISP_GEN_POISSON2D)
            p.n = 70;
        else if (TEST_GEN_3D(k))
            p.n = 17;
        else if (k == HISP_GEN_RMAT)
            p.scale = 11;
        else if (k == HISP_GEN_DENSE)
            p.n = 90;
        else
            p.n = 3000;
        for (int ty = 0; ty < 2; ty++) {
            hisp_matrix A = NULL;
            hisp_type t = ty ? HISP_F64 : HISP_F32;
            CK_OK(ctx, hisp_matrix_generate(ctx, &p, t, &A));
            int ds[] = {4, 16, 128, 256};
            for (size_t j = 0; j < 4; j++)
                roundtrip(ctx, A, ds[j], hisp_gen_name(p.kind));
            hisp_matrix_destroy(&A);
        }
    }
    /* explicit zeros in an otherwise full block: must come back as entries */
    int32_t r[64], c[64];
    double v[64];
    for (int k = 0; k < 64; k++) {
        r[k] = k / 8;
        c[k] = k % 8;
        v[k] = k % 5 == 0 ? 0.0 : k + 0.5;
    }
    v[3] = -0.0;
    hisp_matrix Z = NULL;
    CK_OK(ctx, hisp_matrix_create_coo(ctx, HISP_F64, 8, 8, 64, r, c, v, &Z));
    roundtrip(ctx, Z, 4, "explicit zeros");
    roundtrip(ctx, Z, 8, "explicit zeros");
    hisp_matrix_destroy(&Z);
    /* every node type appeared somewhere */
    for (int t = 1; t < 9; t++)
        ck_assert_msg(seen_types[t] > 0, "node type %d never built", t);
    hisp_context_destroy(&ctx);
}
END_TEST

/* The real matrices in ../shared/matrices. */
START_TEST(test_roundtrip_real)
{
    const char *dir = test_matrix_dir();
    if (!dir) {
        test_skip_no_matrices("hisparse real-matrix round trips");
        return;
    }
    hisp_context ctx = test_default_context();
    DIR *dd = opendir(dir);
    ck_assert_ptr_nonnull(dd);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(dd))) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".mtx") != 0) continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        hisp_matrix A = NULL;
        if (hisp_matrix_read_mtx(ctx, path, n % 2 ? HISP_F32 : HISP_F64, &A, NULL)) /* complex */
            CK_OK(ctx, hisp_matrix_read_mtx(ctx, path, n % 2 ? HISP_C32 : HISP_C64, &A, NULL));
        roundtrip(ctx, A, n % 3 == 0 ? 128 : n % 3 == 1 ? 16 : 256, e->d_name);
        hisp_matrix_destroy(&A);
        n++;
    }
    closedir(dd);
    ck_assert_int_gt(n, 0);
    hisp_context_destroy(&ctx);
}
END_TEST

/* y = alpha*op(H)*x + beta*y on a transposed and scaled HiSparse matrix
 * against the CSR reference on the same (transposed, scaled) matrix. */
static void check_spmv(hisp_context ctx, hisp_matrix H, hisp_matrix R, hisp_type t, uint64_t *st)
{
    hisp_matrix_info info;
    CK_OK(ctx, hisp_matrix_get_info(H, &info));
    size_t es = hisp_type_size(t);
    for (int op = 0; op < 2; op++) {
        int64_t m = op ? info.ncols : info.nrows, n = op ? info.nrows : info.ncols;
        void *x = malloc((size_t)(n + 1) * es), *y0 = malloc((size_t)(m + 1) * es);
        void *y1 = malloc((size_t)(m + 1) * es), *y2 = malloc((size_t)(m + 1) * es);
        for (int64_t i = 0; i < n; i++) {
            if (t == HISP_F32)
                ((float *)x)[i] = (float)test_uniform(st);
            else
                ((double *)x)[i] = test_uniform(st);
        }
        for (int64_t i = 0; i < m; i++) {
            if (t == HISP_F32)
                ((float *)y0)[i] = (float)test_uniform(st);
            else
                ((double *)y0)[i] = test_uniform(st);
        }
        float af = 1.5f, bf = -0.75f;
        double ad = 1.5, bd = -0.75;
        const void *alpha = t == HISP_F32 ? (const void *)&af : (const void *)&ad;
        const void *beta = t == HISP_F32 ? (const void *)&bf : (const void *)&bd;
        test_spmv_host(ctx, (hisp_op)op, alpha, H, x, beta, y0, y1);
        test_spmv_host(ctx, (hisp_op)op, alpha, R, x, beta, y0, y2);
        double err = test_rel_error(t, y1, y2, m);
        ck_assert_msg(err < (t == HISP_F32 ? 1e-5 : 1e-13), "op %d: relative error %g", op, err);
        hisp_matrix_info after;
        CK_OK(ctx, hisp_matrix_get_info(H, &after));
        ck_assert_int_eq(after.format, HISP_FORMAT_HISPARSE); /* not converted behind our back */
        free(x);
        free(y0);
        free(y1);
        free(y2);
    }
}

START_TEST(test_spmv_transpose_scale)
{
    uint64_t st = test_seed() + 77;
    hisp_context ctx = test_default_context();
    int64_t shapes[][2] = {{1, 1}, {37, 530}, {300, 20}, {700, 700}, {0, 5}};
    int ds[] = {4, 128, 256, 8, 16};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int ty = 0; ty < 2; ty++) {
            hisp_type t = ty ? HISP_F64 : HISP_F32;
            hisp_matrix A = test_random_matrix(ctx, t, shapes[s][0], shapes[s][1], 0.05, &st);
            hisp_matrix H = to_hisparse(ctx, A, ds[s]);
            hisp_matrix R = NULL;
            CK_OK(ctx, hisp_matrix_duplicate(A, HISP_FORMAT_CSR, &R));
            check_spmv(ctx, H, R, t, &st); /* plain */
            float hf = 0.5f, mf = -3.0f;
            double hd = 0.5, md = -3.0;
            CK_OK(ctx, hisp_matrix_transpose(H));
            CK_OK(ctx, hisp_matrix_transpose(R));
            check_spmv(ctx, H, R, t, &st); /* transposed */
            CK_OK(ctx, hisp_matrix_scale(H, t == HISP_F32 ? (void *)&hf : (void *)&hd));
            CK_OK(ctx, hisp_matrix_scale(R, t == HISP_F32 ? (void *)&hf : (void *)&hd));
            check_spmv(ctx, H, R, t, &st); /* transposed and scaled */
            CK_OK(ctx, hisp_matrix_transpose(H));
            CK_OK(ctx, hisp_matrix_transpose(R));
            CK_OK(ctx, hisp_matrix_scale(H, t == HISP_F32 ? (void *)&mf : (void *)&md));
            CK_OK(ctx, hisp_matrix_scale(R, t == HISP_F32 ? (void *)&mf : (void *)&md));
            check_spmv(ctx, H, R, t, &st); /* scaled twice */
            /* conversions honour the state: same entries as the reference */
            assert_same(ctx, H, R, "state in conversion");
            hisp_matrix_destroy(&A);
            hisp_matrix_destroy(&H);
            hisp_matrix_destroy(&R);
        }
    hisp_context_destroy(&ctx);
}
END_TEST

/* Dense image (f64) of a small matrix as shown, with a presence mask. */
static double *dense_image(hisp_context ctx, hisp_matrix A, unsigned char **mask)
{
    csr_copy a = csr_of(ctx, A);
    int64_t m = a.info.nrows, n = a.info.ncols;
    double *d = calloc((size_t)(m * n + 1), sizeof *d);
    *mask = calloc((size_t)(m * n + 1), 1);
    for (int64_t i = 0; i < m; i++)
        for (int64_t k = a.ptr[i]; k < a.ptr[i + 1]; k++) {
            double v =
                a.info.type == HISP_F32 ? ((const float *)a.vals)[k] : ((const double *)a.vals)[k];
            d[i * n + a.cols[k]] = v;
            (*mask)[i * n + a.cols[k]] = 1;
        }
    hisp_matrix_destroy(&a.M);
    return d;
}

START_TEST(test_add)
{
    uint64_t st = test_seed() + 901;
    hisp_context ctx = test_default_context();
    int64_t m = 70, n = 45;
    for (int ty = 0; ty < 2; ty++) {
        hisp_type t = ty ? HISP_F64 : HISP_F32;
        hisp_matrix A0 = test_random_matrix(ctx, t, m, n, 0.1, &st);
        hisp_matrix B0 = test_random_matrix(ctx, t, n, m, 0.1, &st);
        unsigned char *ma, *mb;
        double *a = dense_image(ctx, A0, &ma), *b = dense_image(ctx, B0, &mb);
        hisp_matrix HA = to_hisparse(ctx, A0, 4), HB = to_hisparse(ctx, B0, 16);
        float two_f = 2.0f;
        double two_d = 2.0;
        CK_OK(ctx, hisp_matrix_scale(HA, t == HISP_F32 ? (void *)&two_f : (void *)&two_d));
        CK_OK(ctx, hisp_matrix_transpose(HB)); /* shows m x n */
        for (int op = 0; op < 2; op++) {
            hisp_matrix C = NULL;
            /* op 0: 2 A0 + B0^T (m x n); op 1: (2 A0)^T + B0 (n x m), B0 as HB^T */
            CK_OK(ctx, hisp_matrix_add((hisp_op)op, HA, (hisp_op)op, HB, &C));
            hisp_matrix_info info;
            CK_OK(ctx, hisp_matrix_get_info(C, &info));
            ck_assert_int_eq(info.format, HISP_FORMAT_HISPARSE);
            ck_assert_int_eq(info.nrows, op ? n : m);
            unsigned char *mc;
            double *c = dense_image(ctx, C, &mc);
            for (int64_t i = 0; i < info.nrows; i++)
                for (int64_t j = 0; j < info.ncols; j++) {
                    int64_t ia = op ? j * n + i : i * n + j; /* A0[.,.] */
                    int64_t ib = op ? i * m + j : j * m + i; /* B0[.,.] */
                    double want = 2 * a[ia] + b[ib];
                    ck_assert_int_eq(mc[i * info.ncols + j], ma[ia] | mb[ib]);
                    ck_assert_msg(fabs(c[i * info.ncols + j] - want) < 1e-6,
                                  "op %d (%lld, %lld): %g vs %g", op, (long long)i, (long long)j,
                                  c[i * info.ncols + j], want);
                }
            free(c);
            free(mc);
            hisp_matrix_destroy(&C);
        }
        /* mixed formats: CSR + HiSparse */
        hisp_matrix C = NULL;
        CK_OK(ctx, hisp_matrix_add(HISP_OP_N, A0, HISP_OP_T, B0, &C));
        hisp_matrix_destroy(&C);
        ck_assert_int_eq(hisp_matrix_add(HISP_OP_N, A0, HISP_OP_N, B0, &C),
                         HISP_ERR_INVALID_ARGUMENT);
        free(a);
        free(b);
        free(ma);
        free(mb);
        hisp_matrix_destroy(&A0);
        hisp_matrix_destroy(&B0);
        hisp_matrix_destroy(&HA);
        hisp_matrix_destroy(&HB);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* ---- files ---------------------------------------------------------------- */

static unsigned char *file_bytes(hisp_context ctx, hisp_matrix A, size_t *size)
{
    unsigned char *b = test_saved_bytes(ctx, A, size);
    hisp_matrix L = NULL; /* and the file loads back */
    CK_OK(ctx, hisp_matrix_load_buffer(ctx, b, *size, "saved", &L));
    assert_same(ctx, A, L, "save/load");
    hisp_matrix_destroy(&L);
    return b;
}

START_TEST(test_save_load)
{
    uint64_t st = test_seed() + 1201;
    hisp_context ctx = test_default_context();
    int64_t shapes[][2] = {{0, 0}, {1, 1}, {3, 500}, {130, 70}, {600, 600}};
    int ds[] = {4, 8, 128, 16, 256};
    for (size_t s = 0; s < 5; s++)
        for (int ty = 0; ty < 2; ty++) {
            hisp_type t = ty ? HISP_F64 : HISP_F32;
            hisp_matrix A = test_random_matrix(ctx, t, shapes[s][0], shapes[s][1], 0.05, &st);
            hisp_matrix H = to_hisparse(ctx, A, ds[s]);
            float hf = -0.25f;
            double hd = -0.25;
            CK_OK(ctx, hisp_matrix_transpose(H));
            CK_OK(ctx, hisp_matrix_scale(H, t == HISP_F32 ? (void *)&hf : (void *)&hd));
            size_t size;
            free(file_bytes(ctx, H, &size)); /* state kept through the file */
            hisp_hisparse_profile p;
            CK_OK(ctx, hisp_matrix_hisparse_profile(H, &p));
            ck_assert_uint_eq(size, 96 + p.bytes);
            free(file_bytes(ctx, A, &size)); /* a CSR matrix is saved as a tree */
            hisp_matrix_destroy(&A);
            hisp_matrix_destroy(&H);
        }
    /* not a file */
    hisp_matrix L = NULL;
    ck_assert_int_eq(hisp_matrix_load(ctx, "/nonexistent/x.hisp", &L), HISP_ERR_IO);
    hisp_context_destroy(&ctx);
}
END_TEST

START_TEST(test_corrupt_files)
{
    uint64_t st = test_seed() + 1301;
    hisp_context ctx = test_default_context();
    hisp_matrix A = test_random_matrix(ctx, HISP_F64, 23, 19, 0.3, &st);
    hisp_matrix H = to_hisparse(ctx, A, 4);
    size_t size;
    unsigned char *f = file_bytes(ctx, H, &size), *g = malloc(size);
    hisp_matrix L = NULL;
    /* every truncation */
    for (size_t len = 0; len < size; len++) {
        memcpy(g, f, size);
        ck_assert_int_eq(hisp_matrix_load_buffer(ctx, g, len, "cut", &L), HISP_ERR_INPUT_FORMAT);
        ck_assert_ptr_null(L);
    }
    /* one extra byte */
    unsigned char *big = calloc(size + 1, 1);
    memcpy(big, f, size);
    ck_assert_int_eq(hisp_matrix_load_buffer(ctx, big, size + 1, "long", &L),
                     HISP_ERR_INPUT_FORMAT);
    free(big);
    /* random byte changes: the checksums refuse them */
    for (int trial = 0; trial < 300; trial++) {
        memcpy(g, f, size);
        size_t pos = test_rand(&st) % size;
        g[pos] ^= (unsigned char)(1 + test_rand(&st) % 255);
        ck_assert_int_eq(hisp_matrix_load_buffer(ctx, g, size, "flip", &L), HISP_ERR_INPUT_FORMAT);
    }
    /* changes with valid checksums: refused by the structural checks, or a
     * valid matrix that reads back without trouble (values may change) */
    int refused = 0;
    for (int trial = 0; trial < 2000; trial++) {
        memcpy(g, f, size);
        int nflips = 1 + (int)(test_rand(&st) % 3);
        for (int k = 0; k < nflips; k++) {
            size_t pos = 16 + test_rand(&st) % (size - 16);
            if (pos >= 80 && pos < 96) pos -= 64; /* not the checksums themselves */
            g[pos] = (unsigned char)test_rand(&st);
        }
        test_fix_checksums(g, size);
        hisp_status s = hisp_matrix_load_buffer(ctx, g, size, "crafted", &L);
        if (s) {
            ck_assert_int_eq(s, HISP_ERR_INPUT_FORMAT);
            refused++;
            continue;
        }
        hisp_matrix C = NULL;
        CK_OK(ctx, hisp_matrix_duplicate(L, HISP_FORMAT_CSR, &C));
        hisp_matrix_destroy(&C);
        hisp_matrix_destroy(&L);
    }
    ck_assert_int_gt(refused, 100);
    /* a DAG: the root's second child points at its first */
    memcpy(g, f, size);
    uint64_t root;
    memcpy(&root, g + 64, 8);
    unsigned char *node = g + 96 + (root & ~15ull);
    int type = (int)(root & 15);
    ck_assert_int_eq(type, 4); /* inner COO4 for this matrix (d = 4, 23 x 19) */
    uint32_t n;
    memcpy(&n, node, 4);
    ck_assert_uint_ge(n, 3);
    size_t pay = (4 + 2 * ((n + 3) / 4 * 4) + 15) / 16 * 16;
    memcpy(node + pay + 8, node + pay, 8);
    test_fix_checksums(g, size);
    ck_assert_int_eq(hisp_matrix_load_buffer(ctx, g, size, "dag", &L), HISP_ERR_INPUT_FORMAT);
    /* a cycle: the first child is the root itself */
    memcpy(g, f, size);
    memcpy(node + pay, &root, 8);
    test_fix_checksums(g, size);
    ck_assert_int_eq(hisp_matrix_load_buffer(ctx, g, size, "cycle", &L), HISP_ERR_INPUT_FORMAT);
    free(f);
    free(g);
    hisp_matrix_destroy(&A);
    hisp_matrix_destroy(&H);
    hisp_context_destroy(&ctx);
}
END_TEST

/* ---- edits ---------------------------------------------------------------- */

/* A matrix from a dense image and mask (f64 values cast to t). */
static hisp_matrix from_dense(hisp_context ctx, hisp_type t, int64_t m, int64_t n, const double *d,
                              const unsigned char *mask)
{
    int64_t nnz = 0;
    for (int64_t i = 0; i < m * n; i++)
        nnz += mask[i];
    int32_t *r = malloc((size_t)nnz * 4 + 4), *c = malloc((size_t)nnz * 4 + 4);
    void *v = malloc((size_t)nnz * 8 + 8);
    int64_t k = 0;
    for (int64_t i = 0; i < m * n; i++)
        if (mask[i]) {
            r[k] = (int32_t)(i / n);
            c[k] = (int32_t)(i % n);
            if (t == HISP_F32)
                ((float *)v)[k] = (float)d[i];
            else
                ((double *)v)[k] = d[i];
            k++;
        }
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_create_coo(ctx, t, m, n, nnz, r, c, v, &A));
    free(r);
    free(c);
    free(v);
    return A;
}

START_TEST(test_edit_against_rebuild)
{
    uint64_t st = test_seed() + 1501;
    hisp_context ctx = test_default_context();
    int ds[] = {4, 16, 128};
    for (int di = 0; di < 3; di++)
        for (int ty = 0; ty < 2; ty++)
            for (int state = 0; state < 2; state++) {
                hisp_type t = ty ? HISP_F64 : HISP_F32;
                int64_t m = 90, n = 70;
                hisp_matrix A = test_random_matrix(ctx, t, m, n, 0.08, &st);
                hisp_matrix H = to_hisparse(ctx, A, ds[di]);
                if (state) { /* edits act on the matrix as shown */
                    float sf = 4.0f;
                    double sd = 4.0;
                    CK_OK(ctx, hisp_matrix_transpose(H));
                    CK_OK(ctx, hisp_matrix_scale(H, t == HISP_F32 ? (void *)&sf : (void *)&sd));
                    int64_t tmp = m;
                    m = n;
                    n = tmp;
                }
                hisp_matrix H0 = NULL; /* a copy of the original to compare with later */
                CK_OK(ctx, hisp_matrix_duplicate(H, HISP_FORMAT_CSR, &H0));
                unsigned char *mask;
                double *img = dense_image(ctx, H, &mask);
                for (int round = 0; round < 4; round++) {
                    int64_t nc = round == 0 ? 1 : round == 1 ? 37 : round == 2 ? 400 : 3000;
                    int32_t *r = malloc((size_t)nc * 4), *c = malloc((size_t)nc * 4);
                    uint8_t *rm = malloc((size_t)nc);
                    void *v = malloc((size_t)nc * 8);
                    int64_t ins = 0, rem = 0;
                    for (int64_t q = 0; q < nc; q++) {
                        r[q] = (int32_t)(test_rand(&st) % (uint64_t)m);
                        c[q] = (int32_t)(test_rand(&st) % (uint64_t)n);
                        if (q > 0 && test_rand(&st) % 8 == 0) { /* repeat a coordinate */
                            r[q] = r[q - 1];
                            c[q] = c[q - 1];
                        }
                        rm[q] = round == 3 ? test_rand(&st) % 4 != 0 : test_rand(&st) % 3 == 0;
                        double x = (double)(int)(test_uniform(&st) * 64) / 8.0 + 0.125;
                        if (test_rand(&st) % 10 == 0) x = 0.0; /* explicit zeros too */
                        if (t == HISP_F32)
                            ((float *)v)[q] = (float)x;
                        else
                            ((double *)v)[q] = x;
                        int64_t at = (int64_t)r[q] * n + c[q];
                        if (rm[q]) {
                            rem += mask[at];
                            mask[at] = 0;
                        } else {
                            ins += !mask[at];
                            mask[at] = 1;
                            img[at] = x;
                        }
                    }
                    hisp_matrix B = NULL;
                    hisp_edit_stats es;
                    CK_OK(ctx, hisp_matrix_edit(H, nc, r, c, v, rm, &B, &es));
                    ck_assert_int_eq(es.inserted, ins);
                    ck_assert_int_eq(es.removed, rem);
                    ck_assert_int_eq(es.inserted + es.overwritten + es.removed + es.ignored, nc);
                    hisp_matrix R = from_dense(ctx, t, m, n, img, mask);
                    assert_same(ctx, B, R, "edit vs rebuild");
                    hisp_matrix_info bi;
                    CK_OK(ctx, hisp_matrix_get_info(B, &bi));
                    ck_assert_int_eq(bi.format, HISP_FORMAT_HISPARSE);
                    if (round == 0) { /* the original is unchanged */
                        assert_same(ctx, H, H0, "original after edit");
                    }
                    /* the edited matrix replaces the original (which is freed) */
                    hisp_matrix_destroy(&H);
                    H = B;
                    hisp_matrix_destroy(&R);
                    free(r);
                    free(c);
                    free(rm);
                    free(v);
                    hisp_hisparse_profile p;
                    CK_OK(ctx, hisp_matrix_hisparse_profile(H, &p));
                    ck_assert_uint_eq(p.pool_live, p.bytes); /* nothing else is alive */
                }
                /* remove everything */
                unsigned char *m2;
                double *img2 = dense_image(ctx, H, &m2);
                int64_t cnt = 0;
                for (int64_t i = 0; i < m * n; i++)
                    cnt += m2[i];
                int32_t *r = malloc((size_t)cnt * 4 + 4), *c = malloc((size_t)cnt * 4 + 4);
                uint8_t *rm = malloc((size_t)cnt + 1);
                int64_t k = 0;
                for (int64_t i = 0; i < m * n; i++)
                    if (m2[i]) {
                        r[k] = (int32_t)(i / n);
                        c[k] = (int32_t)(i % n);
                        rm[k++] = 1;
                    }
                hisp_matrix E = NULL;
                CK_OK(ctx, hisp_matrix_edit(H, cnt, r, c, NULL, rm, &E, NULL));
                hisp_matrix_info ei;
                CK_OK(ctx, hisp_matrix_get_info(E, &ei));
                ck_assert_int_eq(ei.nnz, 0);
                hisp_matrix_destroy(&H);
                hisp_hisparse_profile p;
                CK_OK(ctx, hisp_matrix_hisparse_profile(E, &p));
                ck_assert_uint_eq(p.pool_live, 16);
                hisp_matrix_destroy(&E);
                free(r);
                free(c);
                free(rm);
                free(img2);
                free(m2);
                free(img);
                free(mask);
                hisp_matrix_destroy(&H0);
                hisp_matrix_destroy(&A);
            }
    hisp_context_destroy(&ctx);
}
END_TEST

START_TEST(test_edit_sharing)
{
    uint64_t st = test_seed() + 1701;
    hisp_context ctx = test_default_context();
    hisp_gen_params gp;
    hisp_gen_defaults(HISP_GEN_POISSON2D, &gp);
    gp.n = 300; /* 90000 rows, 450k nonzeros */
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_generate(ctx, &gp, HISP_F64, &A));
    hisp_matrix H = to_hisparse(ctx, A, 16);
    hisp_hisparse_profile p0, p1;
    CK_OK(ctx, hisp_matrix_hisparse_profile(H, &p0));
    /* O(1) duplicate: no new bytes */
    hisp_matrix D = NULL;
    CK_OK(ctx, hisp_matrix_duplicate(H, HISP_FORMAT_HISPARSE, &D));
    CK_OK(ctx, hisp_matrix_hisparse_profile(D, &p1));
    ck_assert_uint_eq(p1.pool_used, p0.pool_used);
    /* one insertion copies one path */
    int32_t r = 12345, c = 777;
    double v = 3.5;
    hisp_matrix B = NULL;
    hisp_edit_stats es;
    CK_OK(ctx, hisp_matrix_edit(H, 1, &r, &c, &v, NULL, &B, &es));
    ck_assert_int_eq(es.inserted, 1);
    ck_assert_int_eq(es.nodes_copied, p0.depth);
    CK_OK(ctx, hisp_matrix_hisparse_profile(B, &p1));
    ck_assert_uint_le(p1.pool_used - p0.pool_used, es.bytes_added);
    ck_assert_uint_lt(es.bytes_added * 20, p0.bytes); /* far from doubling */
    ck_assert_uint_eq(p1.pool_live, p0.bytes + es.bytes_added);
    /* the original is unchanged; the edit differs in one entry */
    assert_same(ctx, H, A, "original after a shared edit");
    hisp_matrix_info bi;
    CK_OK(ctx, hisp_matrix_get_info(B, &bi));
    hisp_matrix_info ai;
    CK_OK(ctx, hisp_matrix_get_info(A, &ai));
    ck_assert_int_eq(bi.nnz, ai.nnz + 1);
    /* drop the original and its duplicate: the copied path of the original is freed */
    hisp_matrix_destroy(&H);
    CK_OK(ctx, hisp_matrix_hisparse_profile(B, &p1));
    ck_assert_uint_eq(p1.pool_live, p0.bytes + es.bytes_added); /* D still holds the old root */
    hisp_matrix_destroy(&D);
    CK_OK(ctx, hisp_matrix_hisparse_profile(B, &p1));
    ck_assert_uint_eq(p1.pool_live, p1.bytes);
    /* a later edit reuses the freed ranges */
    uint64_t used = p1.pool_used;
    r = 5;
    c = 5000; /* not a neighbour of row 5 */
    hisp_matrix B2 = NULL;
    CK_OK(ctx, hisp_matrix_edit(B, 1, &r, &c, &v, NULL, &B2, &es));
    hisp_matrix_destroy(&B);
    CK_OK(ctx, hisp_matrix_hisparse_profile(B2, &p1));
    ck_assert_uint_le(p1.pool_used, used + es.bytes_added);
    ck_assert_uint_eq(p1.pool_live, p1.bytes);
    /* B2 reads right after all that */
    hisp_matrix R = NULL;
    CK_OK(ctx, hisp_matrix_duplicate(B2, HISP_FORMAT_CSR, &R));
    CK_OK(ctx, hisp_matrix_get_info(R, &bi));
    ck_assert_int_eq(bi.nnz, ai.nnz + 2);
    (void)st;
    hisp_matrix_destroy(&R);
    hisp_matrix_destroy(&B2);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

/* Every allocation of each HiSparse operation fails in turn: a status, never a
 * crash or a leak (the sanitize build checks leaks), inputs intact. */
START_TEST(test_out_of_memory)
{
    extern void hispi_alloc_fail_after(long);
    uint64_t st = test_seed() + 1901;
    hisp_context ctx = test_default_context();
    hisp_matrix A = test_random_matrix(ctx, HISP_F64, 300, 200, 0.05, &st);
    hisp_matrix H = to_hisparse(ctx, A, 8);
    size_t size;
    unsigned char *file = file_bytes(ctx, H, &size);
    int32_t r[3] = {1, 2, 299}, c[3] = {5, 6, 199};
    double v[3] = {1, 2, 3};
    for (int op = 0; op < 6; op++) {
        int ok = 0;
        for (long k = 1; k < 200 && !ok; k++) {
            hisp_matrix B = NULL;
            hispi_alloc_fail_after(k);
            hisp_status s = HISP_SUCCESS;
            switch (op) {
            case 0:
                s = hisp_matrix_duplicate(A, HISP_FORMAT_HISPARSE, &B);
                break;
            case 1:
                s = hisp_matrix_duplicate(H, HISP_FORMAT_CSR, &B);
                break;
            case 2:
                s = hisp_matrix_edit(H, 3, r, c, v, NULL, &B, NULL);
                break;
            case 3:
                s = hisp_matrix_add(HISP_OP_N, H, HISP_OP_N, A, &B);
                break;
            case 4:
                s = hisp_matrix_load_buffer(ctx, file, size, "oom", &B);
                break;
            case 5: {
                s = hisp_matrix_duplicate(A, HISP_FORMAT_COO, &B);
                if (!s) s = hisp_matrix_convert(B, HISP_FORMAT_HISPARSE);
                break;
            }
            }
            hispi_alloc_fail_after(0);
            if (s == HISP_SUCCESS)
                ok = 1;
            else
                ck_assert_msg(s == HISP_ERR_OUT_OF_HOST_MEMORY, "op %d, k %ld: %s", op, k,
                              hisp_status_string(s));
            hisp_matrix_destroy(&B);
        }
        ck_assert_msg(ok, "op %d never succeeded", op);
    }
    assert_same(ctx, A, H, "after the failures");
    hisp_hisparse_profile p;
    CK_OK(ctx, hisp_matrix_hisparse_profile(H, &p));
    ck_assert_uint_eq(p.pool_live, p.bytes); /* failed edits left nothing behind */
    free(file);
    hisp_matrix_destroy(&A);
    hisp_matrix_destroy(&H);
    hisp_context_destroy(&ctx);
}
END_TEST

/* ---- the CLI commands of this issue ---------------------------------------- */

START_TEST(test_cli)
{
    if (!test_hisp_bin()) {
        test_skip("hisparse CLI tests: the hisp program is not built next to the tests");
        return;
    }
    hisp_context ctx = test_default_context();
    char dir[] = "/tmp/hisp_cli_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    static char out[1 << 16];
    ck_assert_int_eq(test_run_cli(out, sizeof out, "gen poisson2d --n 40 -o %s/p.mtx", dir), 0);
    /* stats: the tree's bytes and profile, as the library computes them */
    ck_assert_int_eq(
        test_run_cli(out, sizeof out, "stats %s/p.mtx --precision f32 --node-size 16 --json", dir),
        0);
    char path[4200];
    snprintf(path, sizeof path, "%s/p.mtx", dir);
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_read_mtx(ctx, path, HISP_F32, &A, NULL));
    hisp_matrix H = to_hisparse(ctx, A, 16);
    hisp_hisparse_profile p;
    CK_OK(ctx, hisp_matrix_hisparse_profile(H, &p));
    ck_assert_int_eq(test_json_int(out, "hisparse"), (long long)p.bytes);
    ck_assert_int_eq(test_json_int(out, "node_size"), 16);
    ck_assert_int_eq(test_json_int(out, "depth"), p.depth);
    ck_assert_int_eq(test_json_int(out, "count"), p.inner_sparse);
    /* convert there and back: the same matrix */
    ck_assert_int_eq(
        test_run_cli(out, sizeof out, "convert %s/p.mtx -o %s/p.hisp --node-size 8", dir, dir), 0);
    ck_assert_int_eq(test_run_cli(out, sizeof out, "convert %s/p.hisp -o %s/q.mtx", dir, dir), 0);
    snprintf(path, sizeof path, "%s/q.mtx", dir);
    hisp_matrix Q = NULL;
    CK_OK(ctx, hisp_matrix_read_mtx(ctx, path, HISP_F32, &Q, NULL));
    assert_same(ctx, A, Q, "CLI convert round trip");
    /* edit: one insertion, one removal of an entry, one of an absent entry */
    snprintf(path, sizeof path, "%s/ins.mtx", dir);
    FILE *f = fopen(path, "w");
    fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n1600 1600 1\n1 1600 2.5\n");
    fclose(f);
    snprintf(path, sizeof path, "%s/rem.mtx", dir);
    f = fopen(path, "w");
    fprintf(f, "%%%%MatrixMarket matrix coordinate pattern general\n1600 1600 2\n1 1\n1 900\n");
    fclose(f);
    ck_assert_int_eq(
        test_run_cli(out, sizeof out,
                     "edit %s/p.hisp --insert %s/ins.mtx --remove %s/rem.mtx -o %s/e.hisp "
                     "--json",
                     dir, dir, dir, dir),
        0);
    ck_assert_int_eq(test_json_int(out, "inserted"), 1);
    ck_assert_int_eq(test_json_int(out, "removed"), 1);
    ck_assert_int_eq(test_json_int(out, "ignored"), 1);
    ck_assert_int_gt(test_json_int(out, "nodes_shared"), 0);
    ck_assert_int_gt(test_json_int(out, "nodes_copied"), 0);
    hisp_matrix_info ai;
    CK_OK(ctx, hisp_matrix_get_info(A, &ai));
    ck_assert_int_eq(test_json_int(out, "nnz"), ai.nnz);
    /* spmv on the tree, checked against the reference */
    ck_assert_int_eq(test_run_cli(out, sizeof out,
                                  "spmv %s/e.hisp --format hisparse --backend reference --check "
                                  "--transpose --json",
                                  dir),
                     0);
    ck_assert(strstr(out, "\"format\": \"hisparse\""));
    /* a corrupt file is an input error (exit 2) */
    snprintf(path, sizeof path, "%s/e.hisp", dir);
    f = fopen(path, "r+b");
    fseek(f, 200, SEEK_SET);
    fputc(0x5a, f);
    fclose(f);
    ck_assert_int_eq(test_run_cli(out, sizeof out, "stats %s/e.hisp", dir), 2);
    char rm[4300];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(rm), 0);
    hisp_matrix_destroy(&A);
    hisp_matrix_destroy(&H);
    hisp_matrix_destroy(&Q);
    hisp_context_destroy(&ctx);
}
END_TEST

/* The tree does not depend on the number of build threads (offsets come from
 * the size pass): 1, 2 and 5 threads give the same file, byte for byte. */
/* hispi_pool_trim gives back exactly the freed tail, whatever order the
 * nodes were freed in, and keeps the holes below it reusable: random holes
 * (the linear passes decide) and alternating holes under the tail (passes
 * halve the gap: past 8 the sort decides). */
START_TEST(test_pool_trim)
{
    hisp_context ctx = test_default_context();
    uint64_t st = test_seed() + 4501;
    enum { N = 2600 };
    static uint64_t off[N], ref[N];
    static int freed[N], order[N];
    for (int round = 0; round < 12; round++) {
        bool alternate = round % 2;
        hispi_pool *p = NULL;
        CK_OK(ctx, hispi_pool_create(ctx, 4096, &p));
        uint32_t keys[16];
        double vals[16];
        for (int i = 0; i < N; i++) {
            uint64_t n = 3 + (uint64_t)((test_uniform(&st) + 1) * 6); /* 3..15 entries */
            if (alternate) n = 8;
            for (uint64_t k = 0; k < n; k++)
                keys[k] = (uint32_t)k, vals[k] = 1.0 + (double)k;
            uint64_t bytes = hispi_node_type_bytes(HISPI_LEAF_COO4, 16, 8, n);
            CK_OK(ctx, hispi_pool_alloc(ctx, p, bytes, &off[i]));
            hispi_node_encode(p->base + off[i], HISPI_LEAF_COO4, 16, 8, n, keys,
                              (const unsigned char *)vals);
            ref[i] = off[i] | HISPI_LEAF_COO4;
        }
        uint64_t end = p->used;
        int tail = (int)((test_uniform(&st) + 1) / 2 * 1000), nf = 0;
        for (int i = 0; i < N; i++) {
            freed[i] = i >= N - tail || (alternate ? i >= N - tail - 2048 && (N - tail - i) % 2 == 0
                                                   : test_uniform(&st) > 0.4);
            if (freed[i]) order[nf++] = i;
        }
        for (int i = nf - 1; i > 0; i--) { /* free in random order */
            int j = (int)((test_uniform(&st) + 1) / 2 * (i + 1)) % (i + 1), t = order[i];
            order[i] = order[j], order[j] = t;
        }
        for (int i = 0; i < nf; i++)
            hispi_node_decref(p, ref[order[i]], 8, 16);
        hispi_pool_trim(p);
        int first = N; /* the freed run that ends the pool */
        while (first > 0 && freed[first - 1])
            first--;
        uint64_t want = first < N ? off[first] : end, holes = 0, listed = 0;
        for (int i = 0; i < first; i++)
            holes += (uint64_t)freed[i];
        for (uint64_t c = 0; c < p->nclasses; c++)
            listed += p->free_len[c];
        ck_assert_uint_eq(p->used, want);
        ck_assert_uint_eq(listed, holes);
        hispi_pool_release(p);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

START_TEST(test_threads_deterministic)
{
    uint64_t st = test_seed() + 2101;
    hisp_context ctx = test_default_context();
    hisp_matrix A = test_random_matrix(ctx, HISP_F32, 3000, 2500, 0.04, &st); /* 300k: threaded */
    int ds[] = {4, 128};
    for (int k = 0; k < 2; k++) {
        unsigned char *ref = NULL;
        size_t ref_size = 0;
        const char *nts[] = {"1", "2", "5"};
        for (int t = 0; t < 3; t++) {
            CK_OK(ctx, hisp_context_set_option(ctx, "threads", nts[t]));
            hisp_matrix H = to_hisparse(ctx, A, ds[k]);
            size_t size;
            unsigned char *f = file_bytes(ctx, H, &size); /* also checks the round trip */
            if (!ref) {
                ref = f;
                ref_size = size;
            } else {
                ck_assert_uint_eq(size, ref_size);
                ck_assert_msg(memcmp(f, ref, size) == 0, "d %d: %s threads differ", ds[k], nts[t]);
                free(f);
            }
            hisp_matrix_destroy(&H);
        }
        free(ref);
    }
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

/* Every entry type goes through its byte size: complex, quaternion and 3x3
 * block entries round-trip exactly (values are opaque bytes to the layout),
 * through the tree, a file and an edit. */
START_TEST(test_all_entry_types)
{
    uint64_t st = test_seed() + 2301;
    hisp_context ctx = test_default_context();
    for (int ty = 0; ty < HISP_TYPE_COUNT; ty++) {
        hisp_type t = (hisp_type)ty;
        size_t es = hisp_type_size(t);
        int64_t m = 50, n = 37, nnz = 400;
        int32_t *r = malloc((size_t)nnz * 4), *c = malloc((size_t)nnz * 4);
        unsigned char *v = malloc((size_t)nnz * es);
        for (int64_t k = 0; k < nnz; k++) {
            r[k] =
                (int32_t)(k < 16 ? (uint64_t)k / 4 : test_rand(&st) % (uint64_t)m); /* a full 4x4 */
            c[k] = (int32_t)(k < 16 ? (uint64_t)k % 4 : test_rand(&st) % (uint64_t)n);
            for (size_t b = 0; b < es; b++) /* finite values: small random integers */
                v[(size_t)k * es + b] = 0;
            for (int q = 0; q < hisp_type_components(t); q++) {
                double x = (double)(int)(test_uniform(&st) * 100) + 0.5;
                if (es / (size_t)hisp_type_components(t) == 4) {
                    float f = (float)x;
                    memcpy(v + (size_t)k * es + 4 * (size_t)q, &f, 4);
                } else {
                    memcpy(v + (size_t)k * es + 8 * (size_t)q, &x, 8);
                }
            }
        }
        hisp_matrix A = NULL;
        CK_OK(ctx, hisp_matrix_create_coo(ctx, t, m, n, nnz, r, c, v, &A));
        for (int d = 4; d <= 16; d *= 4) {
            char what[64];
            snprintf(what, sizeof what, "%s", hisp_type_name(t));
            roundtrip(ctx, A, d, what);
            hisp_matrix H = to_hisparse(ctx, A, d);
            size_t size;
            free(file_bytes(ctx, H, &size));
            hisp_matrix B = NULL;
            CK_OK(ctx, hisp_matrix_edit(H, 3, r, c, v + es, NULL, &B, NULL)); /* overwrite 3 */
            hisp_matrix_info bi;
            CK_OK(ctx, hisp_matrix_get_info(B, &bi));
            hisp_matrix_info hi;
            CK_OK(ctx, hisp_matrix_get_info(H, &hi));
            ck_assert_int_eq(bi.nnz, hi.nnz);
            hisp_matrix_destroy(&B);
            hisp_matrix_destroy(&H);
        }
        hisp_matrix_destroy(&A);
        free(r);
        free(c);
        free(v);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

Suite *suite_hisparse(void)
{
    Suite *s = suite_create("hisparse");
    TCase *tc = test_tcase(s, "build", 60);
    tcase_add_test(tc, test_roundtrip_shapes);
    tcase_add_test(tc, test_roundtrip_structured);
    tcase_add_test(tc, test_roundtrip_real);
    tcase_add_test(tc, test_spmv_transpose_scale);
    tcase_add_test(tc, test_add);
    tcase_add_test(tc, test_save_load);
    tcase_add_test(tc, test_corrupt_files);
    tcase_add_test(tc, test_edit_against_rebuild);
    tcase_add_test(tc, test_edit_sharing);
    tcase_add_test(tc, test_out_of_memory);
    tcase_add_test(tc, test_cli);
    tcase_add_test(tc, test_pool_trim);
    tcase_add_test(tc, test_threads_deterministic);
    tcase_add_test(tc, test_all_entry_types);
    return s;
}
