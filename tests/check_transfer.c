/* Transfer accounting (hisp_context_transfers) on every target: a sequence
 * of SpMVs on device-resident data moves no data bytes; uploads and reads
 * count what they send; the reference backend counts nothing. And hisp_spmv
 * never changes the caller's matrix (format, nnz, borrowed arrays). */
#include "testutil.h"
#include "hispi.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define N 400
#define STEPS 10

/* OpenCL kernel families of the CSR SpMV (hispi_spmv_hook.cl_variant): 0 the
 * device's, 1 chunk, 2 vector, 3 block. */

static int nfamilies(int target)
{
    return test_kind(target) == HISP_BACKEND_OPENCL ? 4 : 1;
}

static void set_family(int target, int f)
{
    hispi_spmv_hook.cl_variant = test_kind(target) == HISP_BACKEND_OPENCL ? f : 0;
}

static hisp_type real_type(hisp_context ctx)
{
    hisp_device_info d;
    CK_OK(ctx, hisp_context_get_device(ctx, &d));
    return d.fp64 ? HISP_F64 : HISP_F32;
}

static hisp_transfer_stats stats(hisp_context ctx)
{
    hisp_transfer_stats s;
    CK_OK(ctx, hisp_context_transfers(ctx, &s));
    return s;
}

static bool is_reference(hisp_context ctx)
{
    hisp_device_info d;
    CK_OK(ctx, hisp_context_get_device(ctx, &d));
    return d.backend == HISP_BACKEND_REFERENCE;
}

static double get(hisp_type t, const void *a, int64_t i)
{
    return t == HISP_F32 ? ((const float *)a)[i] : ((const double *)a)[i];
}

static void put(hisp_type t, void *a, int64_t i, double v)
{
    if (t == HISP_F32)
        ((float *)a)[i] = (float)v;
    else
        ((double *)a)[i] = v;
}

/* The host's y = A x (A's CSR arrays, in double), then x = A y, ... for
 * 1 + STEPS products starting from x0; *out gets the last product. */
static void host_chain(const int64_t *rp, const int32_t *ci, const void *val, hisp_type t,
                       const double *x0, double *out)
{
    double a[N], b[N], *src = a, *dst = b;
    memcpy(a, x0, sizeof a);
    for (int s = 0; s <= STEPS; s++) {
        for (int64_t i = 0; i < N; i++) {
            double sum = 0;
            for (int64_t k = rp[i]; k < rp[i + 1]; k++)
                sum += get(t, val, k) * src[ci[k]];
            dst[i] = sum;
        }
        double *tmp = src;
        src = dst;
        dst = tmp;
    }
    memcpy(out, src, sizeof a);
}

/* The SpMV chain on the device: y = A x (uploads A and x), then STEPS more
 * products alternating the roles of x and y, all on the device, then one
 * read. Checks the counters at each stage; hisparse: A is a tree (control
 * bytes of its scheduler allowed). */
static void chain(int target, bool hisparse)
{
    hisp_context ctx = test_context(target);
    bool ref = is_reference(ctx);
    hisp_type t = real_type(ctx);
    size_t es = hisp_type_size(t);
    uint64_t st = test_seed();
    hisp_matrix A = test_random_matrix(ctx, t, N, N, 0.02, &st);
    const int64_t *rp = NULL;
    const int32_t *ci = NULL;
    const void *val = NULL;
    CK_OK(ctx, hisp_matrix_host_arrays(A, &rp, NULL, &ci, &val));
    uint64_t csr_bytes = 0;
    CK_OK(ctx, hisp_matrix_format_bytes(A, HISP_FORMAT_CSR, t, &csr_bytes));
    double x0[N], want[N];
    unsigned char xh[N * 8], yh[N * 8];
    for (int i = 0; i < N; i++) {
        x0[i] = test_uniform(&st);
        put(t, xh, i, x0[i]);
    }
    host_chain(rp, ci, val, t, x0, want);
    if (hisparse) CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_HISPARSE));

    hisp_vector x = NULL, y = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, t, N, &x));
    CK_OK(ctx, hisp_vector_create(ctx, t, N, &y));
    CK_OK(ctx, hisp_vector_write(x, xh));
    double one = 1, zero = 0;
    float onef = 1, zerof = 0;
    const void *pa = t == HISP_F32 ? (const void *)&onef : (const void *)&one;
    const void *pb = t == HISP_F32 ? (const void *)&zerof : (const void *)&zero;

    /* the first product uploads A and x, and reads nothing back */
    CK_OK(ctx, hisp_context_reset_transfers(ctx));
    CK_OK(ctx, hisp_spmv(ctx, HISP_OP_N, pa, A, x, pb, y));
    CK_OK(ctx, hisp_context_synchronize(ctx));
    hisp_transfer_stats s = stats(ctx);
    if (ref) {
        ck_assert_msg(s.h2d_bytes == 0 && s.d2h_bytes == 0 && s.control_bytes == 0,
                      "reference moved %llu/%llu/%llu bytes", (unsigned long long)s.h2d_bytes,
                      (unsigned long long)s.d2h_bytes, (unsigned long long)s.control_bytes);
    } else {
        /* A's arrays (CSR: csr_bytes with 32-bit row pointers, plus the
         * kernels' work plan; HiSparse: the pool, smaller than CSR here)
         * and x */
        ck_assert_uint_ge(s.h2d_bytes, (hisparse ? N * es / 2 : csr_bytes) + N * es);
        ck_assert_uint_le(s.h2d_bytes, csr_bytes + 64 * (N + 1) + N * es + 4096);
        ck_assert_uint_eq(s.d2h_bytes, 0);
        if (!hisparse) ck_assert_uint_eq(s.control_bytes, 0);
    }

    /* STEPS more products on device-resident data: no data moves */
    CK_OK(ctx, hisp_context_reset_transfers(ctx));
    hisp_vector in = y, out = x;
    for (int k = 0; k < STEPS; k++) {
        CK_OK(ctx, hisp_spmv(ctx, HISP_OP_N, pa, A, in, pb, out));
        hisp_vector tmp = in;
        in = out;
        out = tmp;
    }
    CK_OK(ctx, hisp_context_synchronize(ctx));
    s = stats(ctx);
    ck_assert_msg(s.h2d_bytes == 0 && s.d2h_bytes == 0,
                  "%s: %d SpMVs on the device moved %llu bytes h2d, %llu d2h",
                  hisparse ? "HiSparse" : "CSR", STEPS, (unsigned long long)s.h2d_bytes,
                  (unsigned long long)s.d2h_bytes);
    ck_assert_uint_eq(s.h2d_calls + s.d2h_calls, 0);
    if (!hisparse || ref) ck_assert_uint_eq(s.control_bytes, 0);

    /* reading the result moves exactly its bytes */
    CK_OK(ctx, hisp_context_reset_transfers(ctx));
    CK_OK(ctx, hisp_vector_read(in, yh));
    s = stats(ctx);
    ck_assert_uint_eq(s.h2d_bytes, 0);
    ck_assert_uint_eq(s.d2h_bytes, ref ? 0 : N * es);
    ck_assert_uint_eq(s.d2h_calls, ref ? 0 : 1);
    /* and again: the host copy is current, nothing moves */
    CK_OK(ctx, hisp_context_reset_transfers(ctx));
    CK_OK(ctx, hisp_vector_read(in, yh));
    s = stats(ctx);
    ck_assert_uint_eq(s.d2h_bytes + s.h2d_bytes + s.control_bytes, 0);

    double got[N];
    for (int i = 0; i < N; i++)
        got[i] = get(t, yh, i);
    double err = test_rel_error(HISP_F64, got, want, N);
    ck_assert_msg(err < (t == HISP_F32 ? 1e-4 : 1e-11), "chain result off by %g", err);

    /* a new x from the host is sent once, exactly */
    CK_OK(ctx, hisp_vector_write(x, xh));
    CK_OK(ctx, hisp_context_reset_transfers(ctx));
    CK_OK(ctx, hisp_spmv(ctx, HISP_OP_N, pa, A, x, pb, y));
    CK_OK(ctx, hisp_context_synchronize(ctx));
    s = stats(ctx);
    ck_assert_uint_eq(s.h2d_bytes, ref ? 0 : N * es);
    ck_assert_uint_eq(s.d2h_bytes, 0);

    hisp_vector_destroy(&x);
    hisp_vector_destroy(&y);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}

START_TEST(csr_chain_moves_nothing)
{
    const test_target *t;
    int n = test_targets(&t);
    for (int i = 0; i < n; i++)
        for (int f = 0; f < nfamilies(i); f++) {
            set_family(i, f);
            chain(i, false);
        }
    hispi_spmv_hook.cl_variant = 0;
}
END_TEST

START_TEST(hisparse_chain_moves_nothing)
{
    const test_target *t;
    int n = test_targets(&t);
    for (int i = 0; i < n; i++)
        chain(i, true);
}
END_TEST

/* A fresh context counts nothing; reset clears every counter. */
START_TEST(counters_reset)
{
    const test_target *t;
    int n = test_targets(&t);
    for (int i = 0; i < n; i++) {
        hisp_context ctx = test_context(i);
        hisp_transfer_stats s = stats(ctx);
        ck_assert_uint_eq(s.h2d_bytes + s.d2h_bytes + s.control_bytes, 0);
        hisp_vector v = NULL;
        CK_OK(ctx, hisp_vector_create(ctx, HISP_F32, 100, &v));
        float h[100] = {0};
        CK_OK(ctx, hisp_vector_read(v, h)); /* host copy current: nothing moves */
        s = stats(ctx);
        ck_assert_uint_eq(s.h2d_bytes + s.d2h_bytes + s.control_bytes, 0);
        CK_OK(ctx, hisp_context_reset_transfers(ctx));
        ck_assert_int_eq(hisp_context_transfers(ctx, NULL), HISP_ERR_INVALID_ARGUMENT);
        ck_assert_int_eq(hisp_context_transfers(NULL, &s), HISP_ERR_INVALID_HANDLE);
        ck_assert_int_eq(hisp_context_reset_transfers(NULL), HISP_ERR_INVALID_HANDLE);
        hisp_vector_destroy(&v);
        hisp_context_destroy(&ctx);
    }
}
END_TEST

/* ---- hisp_spmv leaves the caller's matrix as it is ---------------------- */

typedef struct {
    hisp_matrix_info info;
    const int64_t *ptr;
    const int32_t *rows, *cols;
    const void *vals;
    int64_t *ptr_copy;
    int32_t *rows_copy, *cols_copy;
    unsigned char *vals_copy;
    int64_t nptr;
} snapshot;

static void *dup_bytes(const void *p, size_t bytes)
{
    if (!p) return NULL;
    void *q = malloc(bytes ? bytes : 1);
    ck_assert(q);
    memcpy(q, p, bytes);
    return q;
}

static void take(hisp_matrix A, hisp_context ctx, snapshot *s)
{
    memset(s, 0, sizeof *s);
    CK_OK(ctx, hisp_matrix_get_info(A, &s->info));
    CK_OK(ctx, hisp_matrix_host_arrays(A, &s->ptr, &s->rows, &s->cols, &s->vals));
    int64_t nnz = s->info.nnz;
    s->nptr = (s->info.format == HISP_FORMAT_CSC ? s->info.ncols : s->info.nrows) + 1;
    s->ptr_copy = dup_bytes(s->ptr, (size_t)s->nptr * 8);
    s->rows_copy = dup_bytes(s->rows, (size_t)nnz * 4);
    s->cols_copy = dup_bytes(s->cols, (size_t)nnz * 4);
    s->vals_copy = dup_bytes(s->vals, (size_t)nnz * hisp_type_size(s->info.type));
}

static void same(hisp_matrix A, hisp_context ctx, const snapshot *s, const char *what)
{
    snapshot now;
    CK_OK(ctx, hisp_matrix_get_info(A, &now.info));
    CK_OK(ctx, hisp_matrix_host_arrays(A, &now.ptr, &now.rows, &now.cols, &now.vals));
    ck_assert_msg(now.info.format == s->info.format && now.info.nnz == s->info.nnz &&
                      now.info.type == s->info.type,
                  "%s: hisp_spmv changed the matrix (format %d -> %d, nnz %lld -> %lld)", what,
                  (int)s->info.format, (int)now.info.format, (long long)s->info.nnz,
                  (long long)now.info.nnz);
    ck_assert_msg(now.ptr == s->ptr && now.rows == s->rows && now.cols == s->cols &&
                      now.vals == s->vals,
                  "%s: borrowed arrays moved", what);
    int64_t nnz = s->info.nnz;
    if (s->ptr) ck_assert(!memcmp(s->ptr, s->ptr_copy, (size_t)s->nptr * 8));
    if (s->rows) ck_assert(!memcmp(s->rows, s->rows_copy, (size_t)nnz * 4));
    if (s->cols) ck_assert(!memcmp(s->cols, s->cols_copy, (size_t)nnz * 4));
    if (s->vals)
        ck_assert(!memcmp(s->vals, s->vals_copy, (size_t)nnz * hisp_type_size(s->info.type)));
}

static void drop(snapshot *s)
{
    free(s->ptr_copy);
    free(s->rows_copy);
    free(s->cols_copy);
    free(s->vals_copy);
}

#define KM 57
#define KN 43
#define KNNZ 400

START_TEST(spmv_keeps_matrix)
{
    const test_target *tg;
    int nt = test_targets(&tg);
    uint64_t st = test_seed();
    for (int i = 0; i < nt; i++) {
        hisp_context ctx = test_context(i);
        hisp_type t = real_type(ctx);
        /* unsorted COO with duplicates (every 5th entry repeats an earlier
         * position), the dense product computed here */
        int32_t r[KNNZ], c[KNNZ];
        unsigned char v[KNNZ * 8];
        static double dense[KM][KN];
        memset(dense, 0, sizeof dense);
        for (int k = 0; k < KNNZ; k++) {
            if (k % 5 == 4) {
                int j = (int)(test_rand(&st) % (uint64_t)k);
                r[k] = r[j];
                c[k] = c[j];
            } else {
                r[k] = (int32_t)(test_rand(&st) % KM);
                c[k] = (int32_t)(test_rand(&st) % KN);
            }
            double a = test_uniform(&st);
            put(t, v, k, a);
            dense[r[k]][c[k]] += get(t, v, k);
        }
        double xv[KM > KN ? KM : KN];
        unsigned char xh[8 * KM], yh[8 * KM];
        for (int j = 0; j < KM; j++) {
            xv[j] = test_uniform(&st);
            put(t, xh, j, xv[j]);
        }
        hisp_matrix M[3] = {NULL, NULL, NULL};
        CK_OK(ctx, hisp_matrix_create_coo(ctx, t, KM, KN, KNNZ, r, c, v, &M[0]));
        /* sorted COO without duplicates from the same entries, then CSC */
        CK_OK(ctx, hisp_matrix_duplicate(M[0], HISP_FORMAT_COO, &M[1]));
        CK_OK(ctx, hisp_matrix_duplicate(M[0], HISP_FORMAT_CSC, &M[2]));
        static const char *const names[] = {"unsorted COO with duplicates", "sorted COO", "CSC"};
        for (int m = 0; m < 3; m++)
            for (int op = 0; op < 2; op++) {
                snapshot s;
                take(M[m], ctx, &s);
                int64_t nx = op ? KM : KN, ny = op ? KN : KM;
                hisp_vector x = NULL, y = NULL;
                CK_OK(ctx, hisp_vector_create(ctx, t, nx, &x));
                CK_OK(ctx, hisp_vector_create(ctx, t, ny, &y));
                CK_OK(ctx, hisp_vector_write(x, xh));
                double one = 1, zero = 0;
                float onef = 1, zerof = 0;
                const void *pa = t == HISP_F32 ? (const void *)&onef : (const void *)&one;
                const void *pb = t == HISP_F32 ? (const void *)&zerof : (const void *)&zero;
                for (int rep = 0; rep < 2; rep++) { /* upload, then the device copy */
                    CK_OK(ctx, hisp_spmv(ctx, op ? HISP_OP_T : HISP_OP_N, pa, M[m], x, pb, y));
                    same(M[m], ctx, &s, names[m]);
                    CK_OK(ctx, hisp_vector_read(y, yh));
                    double got[KM], want[KM];
                    for (int64_t a = 0; a < ny; a++) {
                        double sum = 0;
                        for (int64_t b = 0; b < nx; b++)
                            sum += (op ? dense[b][a] : dense[a][b]) * xv[b];
                        want[a] = sum;
                        got[a] = get(t, yh, a);
                    }
                    double err = test_rel_error(HISP_F64, got, want, ny);
                    ck_assert_msg(err < (t == HISP_F32 ? 1e-5 : 1e-12),
                                  "%s, %s, op %s: product off by %g", tg[i].label, names[m],
                                  op ? "T" : "N", err);
                }
                hisp_vector_destroy(&x);
                hisp_vector_destroy(&y);
                drop(&s);
            }
        for (int m = 0; m < 3; m++)
            hisp_matrix_destroy(&M[m]);
        hisp_context_destroy(&ctx);
    }
}
END_TEST

/* The compound path (complex entries: the default variant's layout is built
 * from CSR) and the calls that read a CSR form leave a COO matrix as it is. */
START_TEST(compound_keeps_matrix)
{
    const test_target *tg;
    int nt = test_targets(&tg);
    uint64_t st = test_seed();
    for (int i = 0; i < nt; i++) {
        hisp_context ctx = test_context(i);
        bool f64 = real_type(ctx) == HISP_F64;
        hisp_type t = f64 ? HISP_C64 : HISP_C32, rt = f64 ? HISP_F64 : HISP_F32;
        enum { M = 31, K = 150 };
        int32_t r[K], c[K];
        unsigned char v[K * 16], xh[M * 16], yh[M * 16];
        static double dre[M][M], dim[M][M];
        memset(dre, 0, sizeof dre);
        memset(dim, 0, sizeof dim);
        for (int k = 0; k < K; k++) {
            int j = k % 4 == 3 ? (int)(test_rand(&st) % (uint64_t)k) : -1; /* duplicates */
            r[k] = j >= 0 ? r[j] : (int32_t)(test_rand(&st) % M);
            c[k] = j >= 0 ? c[j] : (int32_t)(test_rand(&st) % M);
            put(rt, v, 2 * k, test_uniform(&st));
            put(rt, v, 2 * k + 1, test_uniform(&st));
            dre[r[k]][c[k]] += get(rt, v, 2 * k);
            dim[r[k]][c[k]] += get(rt, v, 2 * k + 1);
        }
        for (int q = 0; q < 2 * M; q++)
            put(rt, xh, q, test_uniform(&st));
        hisp_matrix A = NULL;
        CK_OK(ctx, hisp_matrix_create_coo(ctx, t, M, M, K, r, c, v, &A));
        snapshot s;
        take(A, ctx, &s);
        uint64_t bytes = 0;
        CK_OK(ctx, hisp_matrix_layout_bytes(A, HISP_OUTER_CSR, &bytes));
        same(A, ctx, &s, "layout bytes");
        char key[512];
        CK_OK(ctx, hisp_tune_plan_key(ctx, A, key, sizeof key));
        same(A, ctx, &s, "plan key");
        hisp_vector x = NULL, y = NULL;
        CK_OK(ctx, hisp_vector_create(ctx, t, M, &x));
        CK_OK(ctx, hisp_vector_create(ctx, t, M, &y));
        CK_OK(ctx, hisp_vector_write(x, xh));
        double one = 1, zero = 0;
        float onef = 1, zerof = 0;
        const void *pa = f64 ? (const void *)&one : (const void *)&onef;
        const void *pb = f64 ? (const void *)&zero : (const void *)&zerof;
        CK_OK(ctx, hisp_spmv(ctx, HISP_OP_N, pa, A, x, pb, y));
        same(A, ctx, &s, "compound SpMV");
        CK_OK(ctx, hisp_vector_read(y, yh));
        double got[2 * M], want[2 * M];
        for (int a = 0; a < M; a++) {
            double re = 0, im = 0;
            for (int b = 0; b < M; b++) {
                double xr = get(rt, xh, 2 * b), xi = get(rt, xh, 2 * b + 1);
                re += dre[a][b] * xr - dim[a][b] * xi;
                im += dre[a][b] * xi + dim[a][b] * xr;
            }
            want[2 * a] = re;
            want[2 * a + 1] = im;
            got[2 * a] = get(rt, yh, 2 * a);
            got[2 * a + 1] = get(rt, yh, 2 * a + 1);
        }
        double err = test_rel_error(HISP_F64, got, want, 2 * M);
        ck_assert_msg(err < (f64 ? 1e-12 : 1e-5), "%s: complex product off by %g", tg[i].label,
                      err);
        drop(&s);
        hisp_vector_destroy(&x);
        hisp_vector_destroy(&y);
        hisp_matrix_destroy(&A);
        hisp_context_destroy(&ctx);
    }
}
END_TEST

Suite *suite_transfer(void)
{
    Suite *s = suite_create("transfer");
    TCase *tc = test_tcase(s, "transfer", 300);
    tcase_add_test(tc, counters_reset);
    tcase_add_test(tc, csr_chain_moves_nothing);
    tcase_add_test(tc, hisparse_chain_moves_nothing);
    tcase_add_test(tc, spmv_keeps_matrix);
    tcase_add_test(tc, compound_keeps_matrix);
    return s;
}
