/* SELL-C-sigma (core/sell/): the host form's round trip and invariants,
 * SpMV op N and T on every target against the CSR reference
 * hispi_ref_csr_spmv, byte counts, bad input and allocation failures.
 * The format's ops are called directly (hispi_sell_format) until the
 * format registry dispatches hisp_matrix_convert / hisp_spmv to them. */
#include "fixture_spmv.h"
#include "sell/hispi_sell.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern void hispi_alloc_fail_after(long);

static double ld(hisp_type t, const void *a, int64_t i)
{
    return t == HISP_F32 ? ((const float *)a)[i] : ((const double *)a)[i];
}

static void st_(hisp_type t, void *a, int64_t i, double v)
{
    if (t == HISP_F32)
        ((float *)a)[i] = (float)v;
    else
        ((double *)a)[i] = v;
}

/* A private copy of a CSR matrix's host storage (the reference's input). */
static hispi_sparse csr_copy(hisp_context ctx, hisp_matrix A)
{
    ck_assert_int_eq(A->host.format, HISP_FORMAT_CSR);
    hispi_sparse c;
    CK_OK(ctx, hispi_sparse_convert(ctx, &A->host, HISP_FORMAT_CSR, &c));
    return c;
}

static void sell_destroy(hisp_matrix *A)
{
    hisp_matrix_destroy(A);
}

static void to_sell(hisp_context ctx, hisp_matrix A)
{
    CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_SELL));
    ck_assert_ptr_eq(A->fmt, &hispi_sell_format);
    ck_assert_ptr_nonnull(A->fdata);
    ck_assert_int_eq(A->host.format, HISP_FORMAT_SELL);
    ck_assert_ptr_null(A->host.rowptr);
    ck_assert_ptr_null(A->host.colind);
    ck_assert_ptr_null(A->host.val);
}

/* Matrix with the given row lengths (len[i] < 0: ncols), random columns and
 * values, CSR. */
static hisp_matrix from_lengths(hisp_context ctx, hisp_type t, int64_t m, int64_t n,
                                const int64_t *len, uint64_t *st)
{
    int64_t nnz = 0;
    for (int64_t i = 0; i < m; i++)
        nnz += len[i] < 0 || len[i] > n ? n : len[i];
    int32_t *r = malloc((size_t)nnz * 4 + 4), *c = malloc((size_t)nnz * 4 + 4);
    double *v = malloc((size_t)nnz * 8 + 8);
    char *used = calloc((size_t)n + 1, 1);
    ck_assert(r && c && v && used);
    int64_t k = 0;
    for (int64_t i = 0; i < m; i++) {
        int64_t L = len[i] < 0 || len[i] > n ? n : len[i];
        memset(used, 0, (size_t)n + 1);
        for (int64_t q = 0; q < L; q++) {
            int64_t j;
            if (L > n / 2) {
                j = q; /* dense-ish row: the first L columns */
            } else {
                do
                    j = (int64_t)(test_rand(st) % (uint64_t)n);
                while (used[j]);
                used[j] = 1;
            }
            r[k] = (int32_t)i, c[k] = (int32_t)j, v[k] = test_uniform(st), k++;
        }
    }
    void *vt = malloc((size_t)nnz * 8 + 8);
    ck_assert_ptr_nonnull(vt);
    for (int64_t q = 0; q < nnz; q++)
        st_(t, vt, q, v[q]);
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_create_coo(ctx, t, m, n, nnz, r, c, vt, &A));
    CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_CSR));
    free(r), free(c), free(v), free(vt), free(used);
    return A;
}

/* The structural promises of hispi_sell.h. */
static void check_invariants(const hispi_sell *h, const hispi_sparse *csr)
{
    ck_assert_int_eq(h->nrows, csr->nrows);
    ck_assert_int_eq(h->ncols, csr->ncols);
    ck_assert_int_eq(h->nnz, csr->nnz);
    ck_assert_int_eq(h->nslices, (h->nrows + h->C - 1) / h->C);
    ck_assert_int_eq(h->sptr[0], 0);
    ck_assert_int_eq(h->sptr[h->nslices], h->padded);
    char *seen = calloc((size_t)h->nrows + 1, 1);
    ck_assert_ptr_nonnull(seen);
    int64_t total = 0;
    for (int64_t r = 0; r < h->nrows; r++) {
        int32_t i = h->perm[r];
        ck_assert(i >= 0 && i < h->nrows && !seen[i]);
        seen[i] = 1;
        ck_assert_int_eq(h->len[r], csr->rowptr[i + 1] - csr->rowptr[i]);
        total += h->len[r];
        /* sorted longest first within its window */
        if (r % h->sigma) ck_assert_int_le(h->len[r], h->len[r - 1]);
    }
    ck_assert_int_eq(total, h->nnz);
    for (int64_t s = 0; s < h->nslices; s++) {
        int64_t w = (h->sptr[s + 1] - h->sptr[s]);
        ck_assert_int_eq(w % h->C, 0);
        w /= h->C;
        int64_t longest = 0;
        for (int64_t r = s * h->C; r < h->nrows && r < (s + 1) * h->C; r++)
            if (h->len[r] > longest) longest = h->len[r];
        ck_assert_int_eq(w, longest); /* padded to the longest row, no more */
        for (int64_t i = 0; i < h->C; i++) {
            int64_t r = s * h->C + i, L = r < h->nrows ? h->len[r] : 0;
            for (int64_t k = L; k < w; k++) { /* padding: 0, a valid column */
                int64_t e = h->sptr[s] + k * h->C + i;
                ck_assert(ld(h->type, h->val, e) == 0);
                ck_assert(h->col[e] >= 0 && (h->col[e] < h->ncols || h->col[e] == 0));
            }
        }
    }
    free(seen);
}

static void same_sparse(const hispi_sparse *a, const hispi_sparse *b, const char *what)
{
    ck_assert_msg(a->format == b->format && a->nrows == b->nrows && a->ncols == b->ncols &&
                      a->nnz == b->nnz,
                  "%s: shape or format differs", what);
    size_t es = hisp_type_size(a->type);
    if (a->rowptr)
        ck_assert_msg(!memcmp(a->rowptr, b->rowptr, (size_t)(a->nrows + 1) * 8), "%s: rowptr",
                      what);
    if (a->colptr)
        ck_assert_msg(!memcmp(a->colptr, b->colptr, (size_t)(a->ncols + 1) * 8), "%s: colptr",
                      what);
    if (a->rowind)
        ck_assert_msg(!memcmp(a->rowind, b->rowind, (size_t)a->nnz * 4), "%s: rows", what);
    if (a->colind)
        ck_assert_msg(!memcmp(a->colind, b->colind, (size_t)a->nnz * 4), "%s: columns", what);
    ck_assert_msg(!memcmp(a->val, b->val, (size_t)a->nnz * es), "%s: values", what);
}

/* Matrices of every kind the tests use: k-th of count (NULL past the end). */
static hisp_matrix make_case(hisp_context ctx, hisp_type t, int k, uint64_t *st, char *what,
                             size_t wsize)
{
    static const struct {
        int64_t m, n;
        double density;
    } rnd[] = {{0, 0, 0},        {0, 7, 0},        {7, 0, 0},        {1, 1, 1},
               {1, 300, 0.3},    {300, 1, 0.5},    {50, 40, 0},      {33, 33, 0.2},
               {257, 257, 0.05}, {1000, 80, 0.02}, {80, 1000, 0.05}, {3000, 3000, 0.002}};
    int nr = (int)(sizeof rnd / sizeof rnd[0]);
    if (k < nr) {
        snprintf(what, wsize, "random %lldx%lld density %g", (long long)rnd[k].m,
                 (long long)rnd[k].n, rnd[k].density);
        return test_random_matrix(ctx, t, rnd[k].m, rnd[k].n, rnd[k].density, st);
    }
    k -= nr;
    if (k < 3) { /* varied lengths: empty rows, one very long row */
        int64_t m = k == 0 ? 1000 : k == 1 ? 77 : 4099, n = k == 1 ? 5000 : 1200;
        int64_t *len = malloc((size_t)m * 8);
        ck_assert_ptr_nonnull(len);
        for (int64_t i = 0; i < m; i++) {
            uint64_t u = test_rand(st) % 10;
            len[i] = u < 3   ? 0
                     : u < 8 ? (int64_t)(test_rand(st) % 6)
                             : (int64_t)(test_rand(st) % 60);
        }
        len[(m * 2) / 3] = k == 2 ? -1 : n / 2 + 7; /* the long row (k 2: full) */
        snprintf(what, wsize, "varied lengths %lldx%lld", (long long)m, (long long)n);
        hisp_matrix A = from_lengths(ctx, t, m, n, len, st);
        free(len);
        return A;
    }
    k -= 3;
    static const hisp_gen_kind gk[] = {HISP_GEN_POISSON2D, HISP_GEN_POISSON3D, HISP_GEN_BANDED,
                                       HISP_GEN_RMAT,      HISP_GEN_CIRCUIT,   HISP_GEN_BLOCKDIAG};
    static const int64_t gn[] = {37, 11, 1500, 0, 2000, 999};
    if (k < (int)(sizeof gk / sizeof gk[0])) {
        hisp_gen_params p;
        hisp_gen_defaults(gk[k], &p);
        if (gn[k]) p.n = gn[k];
        if (gk[k] == HISP_GEN_RMAT) p.scale = 11;
        p.seed = test_rand(st) | 1;
        hisp_matrix A = NULL;
        CK_OK(ctx, hisp_matrix_generate(ctx, &p, t, &A));
        CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_CSR));
        snprintf(what, wsize, "gen %s", hisp_gen_name(gk[k]));
        return A;
    }
    return NULL;
}

START_TEST(test_sell_roundtrip)
{
    uint64_t st = test_seed() + 11;
    hisp_context ctx = test_default_context();
    static const int Cs[] = {1, 4, 8, 32, 64};
    static const int sigmas[] = {1, 2, 32, 256, 1 << 20, 0};
    for (int ti = 0; ti < 2; ti++) {
        hisp_type t = ti ? HISP_F64 : HISP_F32;
        char what[200];
        hisp_matrix A;
        for (int k = 0; (A = make_case(ctx, t, k, &st, what, sizeof what)); k++) {
            hispi_sparse ref = csr_copy(ctx, A);
            /* other C and sigma through the builder */
            for (int ci = 0; ci < 5; ci++)
                for (int si = 0; si < 6; si++) {
                    hispi_sell h;
                    CK_OK(ctx, hispi_sell_build(ctx, &ref, Cs[ci], sigmas[si], &h));
                    check_invariants(&h, &ref);
                    if (!sigmas[si]) { /* chosen: within 10 % of a whole-matrix sort's padding */
                        hispi_sell g;
                        int whole = ref.nrows > 0 ? (int)ref.nrows : 1;
                        CK_OK(ctx, hispi_sell_build(ctx, &ref, Cs[ci], whole, &g));
                        ck_assert_msg(h.padded - g.padded <= g.padded / 10,
                                      "%s: C %d sigma %d pads %lld, a whole sort %lld", what,
                                      Cs[ci], h.sigma, (long long)h.padded, (long long)g.padded);
                        ck_assert(h.sigma >= 1 &&
                                  h.sigma <= (ref.nrows > Cs[ci] ? ref.nrows : Cs[ci]));
                        if (!strncmp(what, "gen poisson", 11)) ck_assert_int_eq(h.sigma, Cs[ci]);
                        hispi_sell_free(&g);
                    }
                    hispi_sparse back;
                    CK_OK(ctx, hispi_sell_to_csr(ctx, &h, &back));
                    same_sparse(&back, &ref, what);
                    hispi_sparse_free(&back);
                    hispi_sell_free(&h);
                }
            /* from COO and CSC too */
            for (int f = 0; f < 2; f++) {
                hispi_sparse o;
                CK_OK(ctx,
                      hispi_sparse_convert(ctx, &ref, f ? HISP_FORMAT_CSC : HISP_FORMAT_COO, &o));
                hispi_sell h;
                CK_OK(ctx, hispi_sell_build(ctx, &o, 8, 16, &h));
                check_invariants(&h, &ref);
                hispi_sell_free(&h);
                hispi_sparse_free(&o);
            }
            /* the format: CSR -> SELL -> CSR, COO, CSC */
            to_sell(ctx, A);
            hisp_matrix_info info;
            CK_OK(ctx, hisp_matrix_get_info(A, &info));
            ck_assert_int_eq(info.nrows, ref.nrows);
            ck_assert_int_eq(info.ncols, ref.ncols);
            ck_assert_int_eq(info.nnz, ref.nnz);
            check_invariants(A->fdata, &ref);
            for (int f = 0; f < 3; f++) {
                hisp_format fmt = f == 0   ? HISP_FORMAT_CSR
                                  : f == 1 ? HISP_FORMAT_COO
                                           : HISP_FORMAT_CSC;
                hispi_sparse back, want;
                CK_OK(ctx, hispi_sell_format.to_sparse(A, fmt, &back));
                CK_OK(ctx, hispi_sparse_convert(ctx, &ref, fmt, &want));
                same_sparse(&back, &want, what);
                hispi_sparse_free(&back);
                hispi_sparse_free(&want);
            }
            /* and back in SELL from its own entries (a rebuild) */
            hispi_sparse again;
            CK_OK(ctx, hispi_sell_format.to_sparse(A, HISP_FORMAT_COO, &again));
            CK_OK(ctx, hispi_sell_format.build(A, &again));
            hispi_sparse_free(&again);
            check_invariants(A->fdata, &ref);
            hispi_sparse_free(&ref);
            sell_destroy(&A);
        }
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* An explicit zero is an entry, not padding. */
START_TEST(test_sell_explicit_zeros)
{
    hisp_context ctx = test_default_context();
    const int64_t ptr[] = {0, 1, 1, 3, 4};
    const int32_t col[] = {0, 0, 2, 2};
    const double val[] = {0, 0, 1.5, 0};
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_create_csr(ctx, HISP_F64, 4, 3, ptr, col, val, &A));
    hispi_sparse ref = csr_copy(ctx, A);
    to_sell(ctx, A);
    hispi_sparse back;
    CK_OK(ctx, hispi_sell_format.to_sparse(A, HISP_FORMAT_CSR, &back));
    same_sparse(&back, &ref, "explicit zeros");
    hispi_sparse_free(&back);
    hispi_sparse_free(&ref);
    sell_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

/* y = alpha*op(A)*x + beta*y through the format against the CSR reference
 * (fixture_spmv.h), with the kernel mode in the message. */
static void check_spmv(hisp_context ctx, hisp_matrix A, const hispi_sparse *ref, hisp_op op,
                       int beta_mode, uint64_t *st, const char *what)
{
    char how[32];
    snprintf(how, sizeof how, " kernel mode %d", hispi_sell_kernel_mode);
    test_spmv_check(ctx, A, ref, op, beta_mode, st, what, how);
}

static void check_all(hisp_context ctx, hisp_matrix A, const hispi_sparse *ref, uint64_t *st,
                      const char *what)
{
    for (int op = 0; op < 3; op++) /* N, T, H (T for real entries) */
        for (int bm = 0; bm < 3; bm++)
            check_spmv(ctx, A, ref, (hisp_op)op, bm, st, what);
}

/* Kernel modes to run on target i: the backends with run-time kernels run
 * every kernel on every case (the GPUs' on PoCL too), the reference its C
 * loop. */
static int nmodes(int target)
{
    hisp_backend_kind k = test_kind(target);
    return k == HISP_BACKEND_OPENCL || k == HISP_BACKEND_CUDA ? 4 : 1;
}

START_TEST(test_sell_spmv)
{
    uint64_t st = test_seed() + 303 + (uint64_t)_i;
    hisp_context ctx = test_context(_i);
    for (int ti = 0; ti < 2; ti++) {
        hisp_type t = ti ? HISP_F64 : HISP_F32;
        if (t == HISP_F64 && !test_fp64(ctx)) continue;
        char what[200], label[600];
        hisp_matrix A;
        for (int k = 0; (A = make_case(ctx, t, k, &st, what, sizeof what)); k++) {
            hispi_sparse ref = csr_copy(ctx, A);
            to_sell(ctx, A);
            snprintf(label, sizeof label, "%s: %s", test_label(_i), what);
            for (int mode = 0; mode < nmodes(_i); mode++) {
                hispi_sell_kernel_mode = mode;
                hispi_matrix_drop_device(A); /* the mode is read with the device copy */
                check_all(ctx, A, &ref, &st, label);
            }
            hispi_sell_kernel_mode = 0;
            hispi_sparse_free(&ref);
            sell_destroy(&A);
        }
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* The real matrices of the shared folder (real and pattern ones). */
START_TEST(test_sell_mtx_files)
{
    uint64_t st = test_seed() + 404 + (uint64_t)_i;
    const char *dir = test_matrix_dir();
    if (!dir) {
        if (_i == 0) test_skip_no_matrices("SELL spmv on real matrices");
        return;
    }
    char *names[256];
    int nn = test_mtx_names(dir, names);
    hisp_context ctx = test_context(_i);
    for (int k = 0; k < nn; k++) {
        char path[2048], label[2400];
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        hisp_type t = k % 2 && test_fp64(ctx) ? HISP_F64 : HISP_F32;
        hisp_matrix A = NULL;
        hisp_status s = hisp_matrix_read_mtx(ctx, path, t, &A, NULL);
        if (s != HISP_SUCCESS) continue; /* complex files: not SELL's */
        CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_CSR));
        hispi_sparse ref = csr_copy(ctx, A);
        to_sell(ctx, A);
        snprintf(label, sizeof label, "%s: %s", test_label(_i), names[k]);
        for (int op = 0; op < 2; op++)
            check_spmv(ctx, A, &ref, (hisp_op)op, op, &st, label);
        hispi_sparse_free(&ref);
        sell_destroy(&A);
    }
    test_free_names(names, nn);
    hisp_context_destroy(&ctx);
}
END_TEST

/* Repeated products reuse the device copy; a backend switch drops it. */
START_TEST(test_sell_reuse)
{
    uint64_t st = test_seed() + 505 + (uint64_t)_i;
    hisp_context ctx = test_context(_i);
    hisp_matrix A = test_random_matrix(ctx, HISP_F32, 500, 300, 0.02, &st);
    hispi_sparse ref = csr_copy(ctx, A);
    to_sell(ctx, A);
    for (int r = 0; r < 3; r++)
        for (int op = 0; op < 2; op++)
            check_spmv(ctx, A, &ref, (hisp_op)op, 0, &st, test_label(_i));
    CK_OK(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_REFERENCE, 0));
    ck_assert_ptr_null(A->fdev);
    check_all(ctx, A, &ref, &st, "after the switch to the reference");
    hispi_sparse_free(&ref);
    sell_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

START_TEST(test_sell_bytes)
{
    uint64_t st = test_seed() + 606;
    hisp_context ctx = test_default_context();
    char what[200];
    hisp_matrix A;
    for (int k = 0; (A = make_case(ctx, HISP_F64, k, &st, what, sizeof what)); k++) {
        uint64_t b32 = 0, b64 = 0, c32 = 0, c64 = 0;
        CK_OK(ctx, hispi_sell_format.bytes(A, HISP_F32, &b32)); /* A is CSR */
        CK_OK(ctx, hispi_sell_format.bytes(A, HISP_F64, &b64));
        hisp_matrix B = NULL; /* the same entries as an unsorted COO */
        {
            hispi_sparse coo;
            CK_OK(ctx, hispi_sparse_convert(ctx, &A->host, HISP_FORMAT_COO, &coo));
            for (int64_t q = 0; q + 1 < coo.nnz; q += 2) { /* swap pairs */
                int32_t tr = coo.rowind[q], tc = coo.colind[q];
                double tv = ((double *)coo.val)[q];
                coo.rowind[q] = coo.rowind[q + 1], coo.colind[q] = coo.colind[q + 1];
                ((double *)coo.val)[q] = ((double *)coo.val)[q + 1];
                coo.rowind[q + 1] = tr, coo.colind[q + 1] = tc, ((double *)coo.val)[q + 1] = tv;
            }
            coo.sorted = false;
            CK_OK(ctx, hisp_matrix_create_coo(ctx, HISP_F64, coo.nrows, coo.ncols, coo.nnz,
                                              coo.rowind, coo.colind, coo.val, &B));
            hispi_sparse_free(&coo);
            uint64_t bb = 0;
            CK_OK(ctx, hispi_sell_format.bytes(B, HISP_F64, &bb));
            ck_assert_uint_eq(bb, b64);
            CK_OK(ctx, hisp_matrix_convert(B, HISP_FORMAT_CSC));
            CK_OK(ctx, hispi_sell_format.bytes(B, HISP_F32, &bb));
            ck_assert_uint_eq(bb, b32);
            hisp_matrix_destroy(&B);
        }
        uint64_t tree = 0, tree_sell = 0; /* another format's bytes read SELL's entries */
        CK_OK(ctx, hisp_matrix_format_bytes(A, HISP_FORMAT_HISPARSE, HISP_F64, &tree));
        to_sell(ctx, A);
        CK_OK(ctx, hisp_matrix_format_bytes(A, HISP_FORMAT_HISPARSE, HISP_F64, &tree_sell));
        ck_assert_uint_eq(tree_sell, tree);
        const hispi_sell *h = A->fdata;
        uint64_t held =
            (uint64_t)h->padded * (8 + 4) + (uint64_t)(h->nslices + 1) * 8 + (uint64_t)h->nrows * 4;
        ck_assert_msg(b64 == held, "%s: bytes %llu, the build holds %llu", what,
                      (unsigned long long)b64, (unsigned long long)held);
        ck_assert_uint_eq(b32, held - (uint64_t)h->padded * 4);
        CK_OK(ctx, hispi_sell_format.bytes(A, HISP_F64, &c64)); /* A is SELL */
        CK_OK(ctx, hispi_sell_format.bytes(A, HISP_F32, &c32));
        ck_assert_uint_eq(c64, b64);
        ck_assert_uint_eq(c32, b32);
        sell_destroy(&A);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

static void expect_fail(hisp_context ctx, hisp_status got, hisp_status want, const char *needle)
{
    ck_assert_msg(got == want, "status %s, expected %s", hisp_status_string(got),
                  hisp_status_string(want));
    hisp_error_info e = {0};
    if (hisp_context_last_error(ctx, &e)) {
    }
    ck_assert_msg(e.message && strstr(e.message, needle), "message \"%s\" lacks \"%s\"",
                  e.message ? e.message : "", needle);
}

START_TEST(test_sell_errors)
{
    uint64_t st = test_seed() + 707 + (uint64_t)_i;
    hisp_context ctx = test_context(_i);
    ck_assert(hispi_sell_format.format == HISP_FORMAT_SELL);
    ck_assert_str_eq(hispi_sell_format.name, "sell");
    ck_assert(hispi_sell_format.holds(HISP_F32) && hispi_sell_format.holds(HISP_F64));
    ck_assert(!hispi_sell_format.holds(HISP_C64) && !hispi_sell_format.holds(HISP_B3X3_F32));
    ck_assert(hispi_sell_format.candidate(HISP_F32, HISP_OP_N));
    ck_assert(hispi_sell_format.candidate(HISP_F64, HISP_OP_T));
    ck_assert(!hispi_sell_format.candidate(HISP_C32, HISP_OP_N));
    ck_assert_ptr_null(hispi_sell_format.spmv_dot);
    ck_assert_ptr_null(hispi_sell_format.settle);

    /* a compound matrix: refused, unchanged */
    const int64_t zp[] = {0, 1, 3, 3};
    const int32_t zc[] = {2, 0, 1};
    hisp_matrix Z = NULL;
    CK_OK(ctx, hisp_matrix_create_csr(ctx, HISP_C64, 3, 3, zp, zc, NULL, &Z));
    int64_t znnz = Z->host.nnz;
    expect_fail(ctx, hispi_sell_format.build(Z, &Z->host), HISP_ERR_UNSUPPORTED, "f32 and f64");
    ck_assert_int_eq(Z->host.format, HISP_FORMAT_CSR);
    ck_assert_int_eq(Z->host.nnz, znnz);
    ck_assert_ptr_null(Z->fmt);
    ck_assert_ptr_null(Z->fdata);
    uint64_t b = 0;
    expect_fail(ctx, hispi_sell_format.bytes(Z, HISP_C64, &b), HISP_ERR_UNSUPPORTED, "f32 and f64");
    hisp_matrix_destroy(&Z);

    /* builder parameters and sizes */
    hispi_sparse big = {
        .format = HISP_FORMAT_CSR, .type = HISP_F32, .nrows = 3000000000LL, .ncols = 10};
    hispi_sell h;
    expect_fail(ctx, hispi_sell_build(ctx, &big, 32, 256, &h), HISP_ERR_UNSUPPORTED, "32 bits");
    big.nrows = 10, big.ncols = (int64_t)INT32_MAX + 1;
    expect_fail(ctx, hispi_sell_build(ctx, &big, 32, 256, &h), HISP_ERR_UNSUPPORTED, "32 bits");
    hisp_matrix A = test_random_matrix(ctx, HISP_F64, 40, 30, 0.1, &st);
    expect_fail(ctx, hispi_sell_build(ctx, &A->host, 24, 256, &h), HISP_ERR_INVALID_ARGUMENT,
                "power of two");
    expect_fail(ctx, hispi_sell_build(ctx, &A->host, 0, 256, &h), HISP_ERR_INVALID_ARGUMENT,
                "power of two");
    expect_fail(ctx, hispi_sell_build(ctx, &A->host, 32, -1, &h), HISP_ERR_INVALID_ARGUMENT,
                "sigma");

    /* products with wrong operands */
    hisp_vector x = NULL, y = NULL, xf = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, 30, &x));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, 40, &y));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F32, 30, &xf));
    expect_fail(ctx, hispi_sell_format.spmv(ctx, HISP_OP_N, 1, A, x, 0, y),
                HISP_ERR_INVALID_ARGUMENT, "not in SELL");
    to_sell(ctx, A);
    expect_fail(ctx, hispi_sell_format.spmv(ctx, HISP_OP_T, 1, A, x, 0, y),
                HISP_ERR_INVALID_ARGUMENT, "dimension mismatch");
    expect_fail(ctx, hispi_sell_format.spmv(ctx, HISP_OP_N, 1, A, xf, 0, y),
                HISP_ERR_INVALID_ARGUMENT, "entry types differ");
    expect_fail(ctx, hispi_sell_format.spmv(ctx, (hisp_op)7, 1, A, x, 0, y),
                HISP_ERR_INVALID_ARGUMENT, "unknown op");
    hispi_sparse out;
    expect_fail(ctx, hispi_sell_format.to_sparse(A, HISP_FORMAT_HISPARSE, &out),
                HISP_ERR_INVALID_ARGUMENT, "COO, CSR or CSC");
    CK_OK(ctx, hispi_sell_format.spmv(ctx, HISP_OP_N, 1, A, x, 0, y));
    hisp_vector_destroy(&x);
    hisp_vector_destroy(&y);
    hisp_vector_destroy(&xf);
    sell_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

/* Every allocation of the build fails in turn: the matrix stays the CSR it
 * was, and products still work; then the first op = T on the device (the
 * transposed copy) under the same failures. */
START_TEST(test_sell_alloc_fail)
{
    uint64_t st = test_seed() + 808 + (uint64_t)_i;
    hisp_context ctx = test_context(_i);
    hisp_matrix A = test_random_matrix(ctx, HISP_F32, 300, 200, 0.03, &st);
    hispi_sparse ref = csr_copy(ctx, A);
    int fails = 0;
    for (long k = 1;; k++) {
        hispi_alloc_fail_after(k);
        hisp_status s = hisp_matrix_convert(A, HISP_FORMAT_SELL);
        hispi_alloc_fail_after(0);
        if (s == HISP_SUCCESS) break;
        ck_assert_int_eq(s, HISP_ERR_OUT_OF_HOST_MEMORY);
        fails++;
        ck_assert(A->fmt != &hispi_sell_format);
        ck_assert_ptr_null(A->fdata);
        ck_assert_int_eq(A->host.format, HISP_FORMAT_CSR);
        same_sparse(&A->host, &ref, "after a failed build");
        ck_assert(k < 1000);
    }
    ck_assert_int_ge(fails, 5);
    check_invariants(A->fdata, &ref);
    check_spmv(ctx, A, &ref, HISP_OP_N, 0, &st, "after failed builds");
    for (long k = 1;; k++) {
        hisp_vector x = NULL, y = NULL;
        CK_OK(ctx, hisp_vector_create(ctx, HISP_F32, 300, &x));
        CK_OK(ctx, hisp_vector_create(ctx, HISP_F32, 200, &y));
        hispi_alloc_fail_after(k);
        static const float one = 1, zero = 0;
        hisp_status s = hisp_spmv(ctx, HISP_OP_T, &one, A, x, &zero, y);
        hispi_alloc_fail_after(0);
        hisp_vector_destroy(&x);
        hisp_vector_destroy(&y);
        if (s == HISP_SUCCESS) break;
        ck_assert_int_eq(s, HISP_ERR_OUT_OF_HOST_MEMORY);
        ck_assert(k < 1000);
    }
    check_spmv(ctx, A, &ref, HISP_OP_T, 0, &st, "after failed transposed copies");
    hispi_sparse_free(&ref);
    sell_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

Suite *suite_sell(void)
{
    Suite *s = suite_create("sell");
    int n = test_targets(NULL);
    TCase *tc = test_tcase(s, "sell", 600);
    tcase_add_test(tc, test_sell_roundtrip);
    tcase_add_test(tc, test_sell_explicit_zeros);
    tcase_add_test(tc, test_sell_bytes);
    tcase_add_loop_test(tc, test_sell_spmv, 0, n);
    tcase_add_loop_test(tc, test_sell_mtx_files, 0, n);
    tcase_add_loop_test(tc, test_sell_reuse, 0, n);
    tcase_add_loop_test(tc, test_sell_errors, 0, n);
    tcase_add_loop_test(tc, test_sell_alloc_fail, 0, n);
    return s;
}
