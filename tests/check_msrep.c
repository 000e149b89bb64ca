/* MSREP (issue 7): partition invariants of pCSR / pCSC / pCOO and the block
 * baselines, the host reference of partition + merge, multi-device plans on
 * every target (several contexts per device where the machine has one), the
 * hisp mspmv command and its MPI form with 2 and 3 ranks. Every result is
 * compared with the plain C reference of the whole matrix on fresh random
 * inputs. */
#include "fixture_plan.h"
#include "msrep/hispi_msrep.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const hisp_partition_kind all_kinds[] = {HISP_PART_PCSR, HISP_PART_PCSC, HISP_PART_PCOO,
                                                HISP_PART_ROWBLOCK, HISP_PART_COLBLOCK};
#define NKINDS 5

/* A matrix from COO triplets with random values (f64 values stored in t). */
static hisp_matrix from_coo(hisp_context ctx, hisp_type t, int64_t m, int64_t n, int64_t nnz,
                            const int32_t *r, const int32_t *c, uint64_t *st)
{
    void *v = malloc((size_t)(nnz > 0 ? nnz : 1) * hisp_type_size(t));
    ck_assert_ptr_nonnull(v);
    test_fill_uniform(t, v, nnz, st);
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_create_coo(ctx, t, m, n, nnz, r, c, v, &A));
    free(v);
    return A;
}

/* Structured cases: 0 one huge row among short ones, 1 one huge column, 2
 * empty matrix, 3 fewer rows than parts, 4 empty rows in blocks (empty parts
 * for the block splits), 5 a single entry. */
#define NSHAPES 6
static hisp_matrix shaped(hisp_context ctx, hisp_type t, int shape, uint64_t *st)
{
    int32_t r[4000], c[4000];
    int64_t nnz = 0, m = 0, n = 0;
    switch (shape) {
    case 0: /* row 7 holds 1500 of ~1600 entries */
        m = 40, n = 1600;
        for (int j = 0; j < 1500; j++)
            r[nnz] = 7, c[nnz++] = j;
        for (int i = 0; i < 40; i++)
            for (int k = 0; k < 3; k++)
                if (i != 7) r[nnz] = i, c[nnz++] = (int32_t)(test_rand(st) % 1600);
        break;
    case 1:
        m = 1600, n = 40;
        for (int j = 0; j < 1500; j++)
            r[nnz] = j, c[nnz++] = 9;
        for (int i = 0; i < 40; i++)
            r[nnz] = (int32_t)(test_rand(st) % 1600), c[nnz++] = i;
        break;
    case 2:
        m = 30, n = 20;
        break;
    case 3:
        m = 3, n = 50;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 10; j++)
                r[nnz] = i, c[nnz++] = (int32_t)(test_rand(st) % 50);
        break;
    case 4: /* rows 0..99, entries only in rows 90..99 */
        m = 100, n = 100;
        for (int i = 90; i < 100; i++)
            for (int j = 0; j < 20; j++)
                r[nnz] = i, c[nnz++] = (int32_t)(test_rand(st) % 100);
        break;
    default:
        m = 5, n = 5;
        r[0] = 2, c[0] = 3, nnz = 1;
        break;
    }
    return from_coo(ctx, t, m, n, nnz, r, c, st);
}

/* The row (column) of nonzero k in the kind's order. */
static int64_t row_at(const hispi_msrep_src *src, hisp_partition_kind kind, int64_t k)
{
    if (kind == HISP_PART_PCOO) return src->rowidx[k];
    int64_t r = 0;
    while (src->ptr[r + 1] <= k)
        r++;
    return r;
}

/* Structural invariants of the split p (made with row cost w), plus the
 * local pointers of each part. */
static void check_split(hisp_context ctx, hisp_matrix A, hisp_partition_kind kind, int np,
                        const hisp_part *p, double w, const char *what)
{
    hispi_msrep_src src;
    CK_OK(ctx, hispi_msrep_source(A, kind, &src));
    int64_t nnz = src.nnz, n = src.nrows;
    bool block = kind == HISP_PART_ROWBLOCK || kind == HISP_PART_COLBLOCK;
    int64_t prev_last = -1; /* last row of the previous non-empty part */
    for (int k = 0; k < np; k++) {
        ck_assert_msg(p[k].nnz_begin == (k ? p[k - 1].nnz_end : 0), "%s: part %d begins at %lld",
                      what, k, (long long)p[k].nnz_begin);
        ck_assert(p[k].nnz_end >= p[k].nnz_begin);
        ck_assert(p[k].start >= 0 && p[k].start <= p[k].end && p[k].end <= n);
        int64_t size = p[k].nnz_end - p[k].nnz_begin;
        if (w < 0) { /* aligned cuts: checked against the plain ones by the caller */
            if (size == 0) ck_assert_int_eq(p[k].start, p[k].end);
        } else if (!block && w > 0) { /* the first cut reaching each share of nnz + w rows */
            double target = ((double)nnz + w * (double)n) * k / np;
            int64_t c = p[k].nnz_begin;
            if (c < nnz)
                ck_assert_msg((double)c + w * (double)row_at(&src, kind, c) >= target,
                              "%s: cut %d at %lld below its share", what, k, (long long)c);
            if (c > 0)
                ck_assert_msg((double)(c - 1) + w * (double)row_at(&src, kind, c - 1) < target,
                              "%s: cut %d at %lld not the first", what, k, (long long)c);
            if (size == 0) ck_assert_int_eq(p[k].start, p[k].end);
        } else if (!block) { /* nnz-balanced: sizes differ by at most one */
            ck_assert_msg(size >= nnz / np && size <= nnz / np + 1, "%s: part %d has %lld", what, k,
                          (long long)size);
            if (size == 0) ck_assert_int_eq(p[k].start, p[k].end);
        } else {
            ck_assert_int_eq(p[k].start, (int64_t)((__int128)n * k / np));
            ck_assert_int_eq(p[k].shared_first, 0);
        }
        if (p[k].start < p[k].end) {
            if (p[k].shared_first)
                ck_assert_msg(p[k].start == prev_last, "%s: part %d shares row %lld, prev %lld",
                              what, k, (long long)p[k].start, (long long)prev_last);
            else
                ck_assert_msg(p[k].start > prev_last, "%s: part %d overlaps", what, k);
            int64_t *l = NULL;
            CK_OK(ctx, hispi_msrep_local_ptr(ctx, &src, kind, &p[k], &l));
            int64_t rows = p[k].end - p[k].start;
            ck_assert_int_eq(l[0], 0);
            ck_assert_int_eq(l[rows], size);
            for (int64_t i = 0; i < rows; i++)
                ck_assert(l[i] <= l[i + 1]);
            if (!block && size > 0) { /* the first and last rows hold entries of the part */
                ck_assert(l[1] > 0);
                ck_assert(l[rows - 1] < size);
            }
            free(l);
            prev_last = p[k].end - 1;
        }
    }
    ck_assert_int_eq(p[np - 1].nnz_end, nnz);
    hispi_msrep_source_free(&src);
}

static void check_parts(hisp_context ctx, hisp_matrix A, hisp_partition_kind kind, int np,
                        const char *what)
{
    hisp_part *p = calloc((size_t)np, sizeof *p);
    ck_assert_ptr_nonnull(p);
    CK_OK(ctx, hisp_matrix_partition(A, kind, np, p));
    check_split(ctx, A, kind, np, p, 0, what);
    if (kind == HISP_PART_PCOO) { /* pCOO cuts exactly where pCSR does */
        hisp_part *q = calloc((size_t)np, sizeof *q);
        ck_assert_ptr_nonnull(q);
        CK_OK(ctx, hisp_matrix_partition(A, HISP_PART_PCSR, np, q));
        for (int k = 0; k < np; k++)
            ck_assert_msg(memcmp(&p[k], &q[k], sizeof *q) == 0, "%s: pcoo and pcsr differ at %d",
                          what, k);
        free(q);
    }
    free(p);
}

START_TEST(test_partition_invariants)
{
    uint64_t st = test_seed() ^ 0x51;
    hisp_context ctx = test_default_context();
    for (int shape = 0; shape < NSHAPES + 2; shape++) {
        hisp_matrix A =
            shape < NSHAPES
                ? shaped(ctx, HISP_F64, shape, &st)
                : test_random_matrix(ctx, HISP_F64, 50 + (int64_t)(test_rand(&st) % 200),
                                     30 + (int64_t)(test_rand(&st) % 200), 0.05, &st);
        for (int f = 0; f < 3; f++) { /* held as COO, CSR, CSC: copy-free and temporary paths */
            if (f) CK_OK(ctx, hisp_matrix_convert(A, f == 1 ? HISP_FORMAT_CSR : HISP_FORMAT_CSC));
            for (int k = 0; k < NKINDS; k++)
                for (int np = 1; np <= 9; np++) {
                    char what[96];
                    snprintf(what, sizeof what, "shape %d format %d %s np %d", shape, f,
                             hisp_partition_name(all_kinds[k]), np);
                    check_parts(ctx, A, all_kinds[k], np, what);
                }
        }
        hisp_matrix_destroy(&A);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* Parts balancing nnz + w * rows (hisp_mplan_create_weighted): the
 * invariants hold, each cut is the first to reach its share; the fit of a
 * row cost recovers the one behind synthetic times, and keeps the plan's
 * own where the parts' rows-to-nnz ratios are equal. */
START_TEST(test_partition_weighted)
{
    uint64_t st = test_seed() ^ 0x57;
    hisp_context ctx = test_default_context();
    hisp_device_ref refs[9];
    for (int d = 0; d < 9; d++)
        refs[d] = (hisp_device_ref){HISP_BACKEND_REFERENCE, 0};
    static const hisp_partition_kind kinds[3] = {HISP_PART_PCSR, HISP_PART_PCSC, HISP_PART_PCOO};
    static const double ws[3] = {0.25, 1.0, 7.5};
    for (int shape = 0; shape < NSHAPES + 2; shape++) {
        hisp_matrix A = NULL;
        if (shape < NSHAPES) {
            A = shaped(ctx, HISP_F64, shape, &st);
        } else if (shape == NSHAPES) {
            A = test_random_matrix(ctx, HISP_F64, 300, 200, 0.03, &st);
        } else { /* power law: rows of very different lengths */
            hisp_gen_params g;
            hisp_gen_defaults(HISP_GEN_RMAT, &g);
            g.scale = 10;
            g.seed = st;
            CK_OK(ctx, hisp_matrix_generate(ctx, &g, HISP_F64, &A));
        }
        for (int k = 0; k < 3; k++)
            for (int wi = 0; wi < 3; wi++)
                for (int np = 1; np <= 9; np++) {
                    hisp_mplan plan = NULL;
                    CK_OK(ctx, hisp_mplan_create_weighted(A, np, refs, kinds[k], HISP_MPLAN_NO_NUMA,
                                                          ws[wi], &plan));
                    hisp_mplan_breakdown *bd = calloc(1, sizeof *bd);
                    ck_assert_ptr_nonnull(bd);
                    CK_OK(ctx, hisp_mplan_get_breakdown(plan, bd));
                    hisp_part p[9];
                    for (int d = 0; d < np; d++)
                        p[d] = bd->dev[d].part;
                    char what[96];
                    snprintf(what, sizeof what, "shape %d %s w %g np %d", shape,
                             hisp_partition_name(kinds[k]), ws[wi], np);
                    check_split(ctx, A, kinds[k], np, p, ws[wi], what);
                    /* HISP_MPLAN_ALIGN: a cut moves only out of a short row, to its nearer end */
                    hisp_mplan ap = NULL;
                    CK_OK(ctx, hisp_mplan_create_weighted(A, np, refs, kinds[k],
                                                          HISP_MPLAN_NO_NUMA | HISP_MPLAN_ALIGN,
                                                          ws[wi], &ap));
                    CK_OK(ctx, hisp_mplan_get_breakdown(ap, bd));
                    hisp_part q[9];
                    for (int d = 0; d < np; d++)
                        q[d] = bd->dev[d].part;
                    check_split(ctx, A, kinds[k], np, q, -1, what);
                    hispi_msrep_src src;
                    CK_OK(ctx, hispi_msrep_source(A, kinds[k], &src));
                    for (int d = 1; d < np; d++) {
                        int64_t c = p[d].nnz_begin, a = q[d].nnz_begin;
                        if (c == a || c >= src.nnz) {
                            ck_assert_int_eq(c, a);
                            continue;
                        }
                        int64_t r = row_at(&src, kinds[k], c), rs = c, re = c;
                        while (rs > 0 && row_at(&src, kinds[k], rs - 1) == r)
                            rs--;
                        while (re < src.nnz && row_at(&src, kinds[k], re) == r)
                            re++;
                        ck_assert_msg(rs < c && re - rs <= src.nnz / (64 * np),
                                      "%s: cut %d moved from %lld, row [%lld, %lld)", what, d,
                                      (long long)c, (long long)rs, (long long)re);
                        ck_assert_int_eq(a, c - rs <= re - c ? rs : re);
                        ck_assert_int_eq(q[d].shared_first, 0);
                    }
                    hispi_msrep_source_free(&src);
                    hisp_mplan_destroy(&ap);
                    /* synthetic times of 2 per nonzero and 5 per row: w = 2.5 */
                    double ms[9], fit = -1, nz0 = 0, r0 = 0;
                    int distinct = 0; /* nonempty parts of another rows-to-nnz ratio */
                    for (int d = 0; d < np; d++) {
                        double nz = (double)(p[d].nnz_end - p[d].nnz_begin);
                        double r = (double)(p[d].end - p[d].start);
                        ms[d] = 2 * nz + 5 * r;
                        if (nz > 0 && nz0 == 0) nz0 = nz, r0 = r;
                        distinct += nz > 0 && r * nz0 != nz * r0;
                    }
                    CK_OK(ctx, hisp_mplan_fit_row_cost(plan, ms, &fit));
                    if (distinct)
                        ck_assert_msg(fabs(fit - 2.5) < 1e-6, "%s: fit %g", what, fit);
                    else
                        ck_assert_msg(fit == ws[wi], "%s: fit %g, plan's %g", what, fit, ws[wi]);
                    free(bd);
                    hisp_mplan_destroy(&plan);
                }
        hisp_matrix_destroy(&A);
    }
    /* bad row costs */
    hisp_matrix A = test_random_matrix(ctx, HISP_F64, 30, 30, 0.1, &st);
    hisp_mplan plan = NULL;
    ck_assert_int_eq(hisp_mplan_create_weighted(A, 1, refs, HISP_PART_PCSR, 0, -1, &plan),
                     HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_mplan_create_weighted(A, 1, refs, HISP_PART_PCSR, 0, NAN, &plan),
                     HISP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(plan);
    CK_OK(ctx, hisp_mplan_create_weighted(A, 1, refs, HISP_PART_PCSR, 0, 3, &plan));
    ck_assert_int_eq(hisp_mplan_fit_row_cost(plan, NULL, NULL), HISP_ERR_INVALID_ARGUMENT);
    double fit = 0;
    CK_OK(ctx, hisp_mplan_fit_row_cost(plan, NULL, &fit)); /* one part: nothing to fit */
    ck_assert(fit == 3);
    hisp_mplan_destroy(&plan);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

START_TEST(test_partition_example)
{
    /* the paper's kind of example: 4 x 4, nnz 8, rows of 3, 1, 3, 1 */
    int32_t r[] = {0, 0, 0, 1, 2, 2, 2, 3}, c[] = {0, 1, 3, 1, 0, 2, 3, 3};
    uint64_t st = 5;
    hisp_context ctx = test_default_context();
    hisp_matrix A = from_coo(ctx, HISP_F64, 4, 4, 8, r, c, &st);
    hisp_part p[3];
    CK_OK(ctx, hisp_matrix_partition(A, HISP_PART_PCSR, 3, p));
    /* nnz cuts at 0, 2, 5, 8: rows [0,1) [0,3) shared, [2,4) shared */
    ck_assert_int_eq(p[0].nnz_end, 2);
    ck_assert_int_eq(p[0].start, 0);
    ck_assert_int_eq(p[0].end, 1);
    ck_assert_int_eq(p[1].start, 0);
    ck_assert_int_eq(p[1].end, 3);
    ck_assert_int_eq(p[1].shared_first, 1);
    ck_assert_int_eq(p[2].start, 2);
    ck_assert_int_eq(p[2].end, 4);
    ck_assert_int_eq(p[2].shared_first, 1);
    CK_OK(ctx, hisp_matrix_partition(A, HISP_PART_PCSC, 2, p));
    /* columns hold 2, 2, 1, 3: cut at 4 -> cols [0,2) and [2,4) */
    ck_assert_int_eq(p[0].end, 2);
    ck_assert_int_eq(p[1].start, 2);
    ck_assert_int_eq(p[1].shared_first, 0);
    CK_OK(ctx, hisp_matrix_partition(A, HISP_PART_ROWBLOCK, 3, p));
    ck_assert_int_eq(p[1].start, 1);
    ck_assert_int_eq(p[1].end, 2);
    ck_assert_int_eq(p[1].nnz_begin, 3);
    ck_assert_int_eq(p[1].nnz_end, 4);
    hisp_partition_kind k;
    ck_assert_int_eq(hisp_partition_from_name("PCSC", &k), HISP_SUCCESS);
    ck_assert_int_eq(k, HISP_PART_PCSC);
    ck_assert_int_ne(hisp_partition_from_name("pcsx", &k), HISP_SUCCESS);
    ck_assert_str_eq(hisp_partition_name(HISP_PART_COLBLOCK), "colblock");
    ck_assert_int_eq(hisp_matrix_partition(A, HISP_PART_PCSR, 0, p), HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_matrix_partition(A, (hisp_partition_kind)99, 2, p),
                     HISP_ERR_INVALID_ARGUMENT);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

/* The whole-matrix reference y = alpha*op(A)*x + beta*y0. */
static void reference(hisp_context ctx, hisp_matrix A, hisp_op op, double alpha, const void *x,
                      double beta, const void *y0, void *y)
{
    hispi_sparse s;
    CK_OK(ctx, hispi_matrix_sparse_copy(A, HISP_FORMAT_CSR, &s));
    int64_t m = op == HISP_OP_N ? s.nrows : s.ncols;
    memcpy(y, y0, (size_t)m * hisp_type_size(s.type));
    CK_OK(ctx, hispi_ref_csr_spmv(ctx, &s, op, alpha, x, beta, y));
    hispi_sparse_free(&s);
}

typedef struct {
    hisp_type t;
    int64_t m, n;
    void *x, *y0, *yref, *y;
    double alpha, beta;
    double *bound; /* |alpha| |op(A)| |x| + |beta| |y0| per entry of y */
    double gamma;  /* rounding bound of one such sum in the entry type, both ways */
} io;

static double at(hisp_type t, const void *a, int64_t i)
{
    return t == HISP_F32 ? (double)((const float *)a)[i] : ((const double *)a)[i];
}

/* The componentwise bound of floating-point SpMV: two results of the same
 * sums in different orders differ by at most 2 gamma_k (|alpha| |A| |x| +
 * |beta| |y0|), gamma_k = k u / (1 - k u), k the longest row of op(A) + 12
 * (alpha, beta, and the partial results of up to 9 parts summed in a merge;
 * a norm-wise tolerance failed on a 1500-entry column in f32). */
static void io_bound(hisp_context ctx, hisp_matrix A, hisp_op op, io *v)
{
    hispi_sparse s;
    CK_OK(ctx, hispi_matrix_sparse_copy(A, HISP_FORMAT_CSR, &s));
    v->bound = calloc((size_t)v->m + 1, sizeof *v->bound);
    int64_t *len = calloc((size_t)v->m + 1, sizeof *len), kmax = 0;
    ck_assert(v->bound && len);
    for (int64_t i = 0; i < s.nrows; i++)
        for (int64_t p = s.rowptr[i]; p < s.rowptr[i + 1]; p++) {
            int64_t j = s.colind[p], yi = op == HISP_OP_N ? i : j, xi = op == HISP_OP_N ? j : i;
            v->bound[yi] += fabs(v->alpha * at(s.type, s.val, p) * at(v->t, v->x, xi));
            len[yi]++;
        }
    for (int64_t i = 0; i < v->m; i++) {
        if (v->beta != 0) v->bound[i] += fabs(v->beta * at(v->t, v->y0, i));
        if (len[i] > kmax) kmax = len[i];
    }
    double u = v->t == HISP_F32 ? 0x1p-24 : 0x1p-53, k = (double)(kmax + 12);
    v->gamma = 2 * k * u / (1 - k * u);
    free(len);
    hispi_sparse_free(&s);
}

static void io_make(hisp_context ctx, hisp_matrix A, hisp_op op, bool beta_zero, uint64_t *st,
                    io *v)
{
    hisp_matrix_info mi;
    CK_OK(ctx, hisp_matrix_get_info(A, &mi));
    v->t = mi.type;
    v->m = op == HISP_OP_N ? mi.nrows : mi.ncols;
    v->n = op == HISP_OP_N ? mi.ncols : mi.nrows;
    size_t es = hisp_type_size(v->t);
    v->x = malloc((size_t)v->n * es + 8);
    v->y0 = malloc((size_t)v->m * es + 8);
    v->yref = malloc((size_t)v->m * es + 8);
    v->y = malloc((size_t)v->m * es + 8);
    ck_assert(v->x && v->y0 && v->yref && v->y);
    test_fill_uniform(v->t, v->x, v->n, st);
    if (beta_zero)
        test_fill_nan(v->t, v->y0, v->m);
    else
        test_fill_uniform(v->t, v->y0, v->m, st);
    v->alpha = 0.5 + test_uniform(st);
    v->beta = beta_zero ? 0 : 0.5 + test_uniform(st);
    reference(ctx, A, op, v->alpha, v->x, v->beta, v->y0, v->yref);
    memcpy(v->y, v->y0, (size_t)v->m * es);
    io_bound(ctx, A, op, v);
}

static void io_free(io *v)
{
    free(v->x);
    free(v->y0);
    free(v->yref);
    free(v->y);
    free(v->bound);
}

static void io_check(const io *v, const char *what)
{
    for (int64_t i = 0; i < v->m; i++) {
        double d = fabs(at(v->t, v->y, i) - at(v->t, v->yref, i));
        double tol = v->gamma * v->bound[i] + 1e-300;
        ck_assert_msg(d <= tol, "%s: y[%lld] = %.9g, reference %.9g (|diff| %.3e > bound %.3e)",
                      what, (long long)i, at(v->t, v->y, i), at(v->t, v->yref, i), d, tol);
    }
}

START_TEST(test_host_reference)
{
    uint64_t st = test_seed() ^ 0x52;
    hisp_context ctx = test_default_context();
    for (int shape = 0; shape < NSHAPES + 2; shape++)
        for (int ti = 0; ti < 2; ti++) {
            hisp_type t = ti ? HISP_F32 : HISP_F64;
            hisp_matrix A =
                shape < NSHAPES
                    ? shaped(ctx, t, shape, &st)
                    : test_random_matrix(ctx, t, 20 + (int64_t)(test_rand(&st) % 300),
                                         20 + (int64_t)(test_rand(&st) % 300), 0.03, &st);
            for (int k = 0; k < NKINDS; k++)
                for (int np = 1; np <= 8; np++)
                    for (int op = 0; op < 2; op++)
                        for (int bz = 0; bz < 2; bz++) {
                            io v;
                            io_make(ctx, A, (hisp_op)op, bz, &st, &v);
                            CK_OK(ctx, hispi_msrep_ref(A, all_kinds[k], np, (hisp_op)op, v.alpha,
                                                       v.x, v.beta, v.y));
                            char what[128];
                            snprintf(what, sizeof what, "shape %d %s %s np %d op %d beta %g", shape,
                                     hisp_type_name(t), hisp_partition_name(all_kinds[k]), np, op,
                                     v.beta);
                            io_check(&v, what);
                            io_free(&v);
                        }
            hisp_matrix_destroy(&A);
        }
    hisp_context_destroy(&ctx);
}
END_TEST

/* Plans on one target with 1..4 devices (several contexts share a device
 * where there is one), every kind, op N and T, beta = 0 with NaN in y and
 * beta != 0, three calls on the resident parts with fresh x. */
START_TEST(test_plan_targets)
{
    test_plan_fx f = test_plan_fx_make(_i);
    hisp_context ctx = f.ctx;
    uint64_t st = test_seed() ^ (0x53 + (uint64_t)_i);
    bool quick = getenv("HISP_TEST_QUICK") != NULL;
    for (int shape = 0; shape < NSHAPES + 1; shape++)
        for (int ti = 0; ti < (f.info.fp64 ? 2 : 1); ti++) {
            if (quick && shape % 2) continue;
            hisp_type t = ti ? HISP_F64 : HISP_F32;
            hisp_matrix A = shape < NSHAPES ? shaped(ctx, t, shape, &st)
                                            : test_random_matrix(ctx, t, 500, 400, 0.02, &st);
            if (shape % 2) CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_CSR));
            hisp_part whole; /* nonzeros after duplicates are summed */
            CK_OK(ctx, hisp_matrix_partition(A, HISP_PART_PCSR, 1, &whole));
            for (int k = 0; k < NKINDS; k++)
                for (int nd = 1; nd <= 4; nd++) {
                    if (quick && nd == 3) continue;
                    hisp_mplan plan = NULL; /* even counts: parts weighted by rows too */
                    double w = nd % 2 ? 0 : 0.5 + (double)(test_rand(&st) % 8);
                    unsigned fl = nd >= 3 ? HISP_MPLAN_ALIGN : 0; /* and aligned cuts */
                    CK_OK(ctx,
                          hisp_mplan_create_weighted(A, nd, f.refs, all_kinds[k], fl, w, &plan));
                    hisp_mplan_breakdown *bd = calloc(1, sizeof *bd);
                    ck_assert_ptr_nonnull(bd);
                    CK_OK(ctx, hisp_mplan_get_breakdown(plan, bd));
                    ck_assert_int_eq(bd->ndevices, nd);
                    ck_assert_int_eq(bd->numa_nodes, 1); /* one-node machines */
                    int64_t sum = 0;
                    for (int d = 0; d < nd; d++)
                        sum += bd->dev[d].nnz;
                    ck_assert_int_eq(sum, whole.nnz_end);
                    for (int call = 0; call < 3; call++) {
                        hisp_op op = (hisp_op)(call % 2);
                        io v;
                        io_make(ctx, A, op, call == 0, &st, &v);
                        test_real_arg ap = test_real_of(t, v.alpha), bp = test_real_of(t, v.beta);
                        CK_OK(ctx, hisp_mspmv(plan, op, &ap, v.x, &bp, v.y));
                        char what[400];
                        snprintf(what, sizeof what, "%s shape %d %s %s nd %d w %g call %d",
                                 f.t->label, shape, hisp_type_name(t),
                                 hisp_partition_name(all_kinds[k]), nd, w, call);
                        io_check(&v, what);
                        io_free(&v);
                    }
                    CK_OK(ctx, hisp_mplan_get_breakdown(plan, bd));
                    ck_assert(bd->total_ms >= 0 && bd->compute_ms >= 0);
                    free(bd);
                    hisp_mplan_destroy(&plan);
                    ck_assert_ptr_null(plan);
                }
            hisp_matrix_destroy(&A);
        }
    hisp_context_destroy(&ctx);
}
END_TEST

/* Sub-devices (HISP_MPLAN_SUBDEVICES): a device listed twice or three
 * times is split where it can be (OpenCL: PoCL splits a CPU into up to one
 * sub-device per core), else shared; the results stay exact either way. */
START_TEST(test_plan_subdevices)
{
    test_plan_fx f = test_plan_fx_make(_i);
    hisp_context ctx = f.ctx;
    uint64_t st = test_seed() ^ (0x58 + (uint64_t)_i);
    hisp_type t = f.info.fp64 ? HISP_F64 : HISP_F32;
    hisp_matrix A = test_random_matrix(ctx, t, 600, 500, 0.02, &st);
    for (int nd = 2; nd <= 3; nd++)
        for (int k = 0; k < NKINDS; k += 2) {
            hisp_mplan plan = NULL;
            CK_OK(ctx,
                  hisp_mplan_create(A, nd, f.refs, all_kinds[k], HISP_MPLAN_SUBDEVICES, &plan));
            hisp_mplan_breakdown *bd = calloc(1, sizeof *bd);
            ck_assert_ptr_nonnull(bd);
            CK_OK(ctx, hisp_mplan_get_breakdown(plan, bd));
            bool split = bd->dev[0].nsub == nd;
            for (int d = 0; d < nd; d++) { /* all split (sub d of nd) or none */
                ck_assert_int_eq(bd->dev[d].nsub, split ? nd : 0);
                ck_assert_int_eq(bd->dev[d].sub, split ? d : -1);
            }
            if (f.t->kind == HISP_BACKEND_OPENCL && f.info.is_cpu && f.info.compute_units >= nd &&
                strstr(f.info.platform, "Portable"))
                ck_assert_msg(split, "PoCL with %d compute units did not split into %d",
                              f.info.compute_units, nd);
            if (f.t->kind != HISP_BACKEND_OPENCL) ck_assert(!split);
            free(bd);
            for (int op = 0; op < 2; op++) {
                io v;
                io_make(ctx, A, (hisp_op)op, op == 1, &st, &v);
                test_real_arg ap = test_real_of(t, v.alpha), bp = test_real_of(t, v.beta);
                CK_OK(ctx, hisp_mspmv(plan, (hisp_op)op, &ap, v.x, &bp, v.y));
                io_check(&v, f.t->label);
                io_free(&v);
            }
            hisp_mplan_destroy(&plan);
        }
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

/* Distributed vectors: x replicated, y split by row ownership, on every row
 * kind and 1..5 parts (more parts than rows in the shapes with few rows, a
 * huge row split over several parts), beta = 0 (y NaN) and beta != 0, two
 * calls in a row (the second from the first's y, left on the devices).
 * Every target: device peer copies where the backend has them (CUDA, the
 * reference backend), the host in between elsewhere (OpenCL). The column
 * kinds refuse. */
START_TEST(test_plan_dist)
{
    test_plan_fx f = test_plan_fx_make(_i);
    hisp_context ctx = f.ctx;
    uint64_t st = test_seed() ^ (0x64 + (uint64_t)_i);
    bool quick = getenv("HISP_TEST_QUICK") != NULL;
    static const hisp_partition_kind rows[3] = {HISP_PART_ROWBLOCK, HISP_PART_PCSR, HISP_PART_PCOO};
    for (int shape = 0; shape < NSHAPES + 1; shape++)
        for (int ti = 0; ti < (f.info.fp64 ? 2 : 1); ti++) {
            if (quick && shape % 2) continue;
            hisp_type t = ti ? HISP_F64 : HISP_F32;
            size_t es = hisp_type_size(t);
            hisp_matrix A = shape < NSHAPES ? shaped(ctx, t, shape, &st)
                                            : test_random_matrix(ctx, t, 400, 300, 0.02, &st);
            for (int k = 0; k < 3; k++)
                for (int nd = 1; nd <= 5; nd++) {
                    hisp_mplan plan = NULL;
                    CK_OK(ctx, hisp_mplan_create(A, nd, f.refs, rows[k], 0, &plan));
                    hisp_mvector xv = NULL, yv = NULL;
                    CK_OK(ctx, hisp_mvector_create(plan, HISP_MVEC_REPLICATED, &xv));
                    CK_OK(ctx, hisp_mvector_create(plan, HISP_MVEC_ROWS, &yv));
                    for (int bz = 0; bz < 2; bz++) {
                        io v;
                        io_make(ctx, A, HISP_OP_N, bz == 0, &st, &v);
                        int64_t len = 0;
                        CK_OK(ctx, hisp_mvector_length(yv, &len));
                        ck_assert_int_eq(len, v.m);
                        CK_OK(ctx, hisp_mvector_write(xv, v.x));
                        CK_OK(ctx, hisp_mvector_write(yv, v.y0));
                        test_real_arg ap = test_real_of(t, v.alpha), bp = test_real_of(t, v.beta);
                        CK_OK(ctx, hisp_mspmv_dist(plan, &ap, xv, &bp, yv));
                        CK_OK(ctx, hisp_mvector_read(yv, v.y));
                        char what[600];
                        snprintf(what, sizeof what, "%.200s dist shape %d %s %s nd %d beta %s",
                                 f.t->label, shape, hisp_type_name(t), hisp_partition_name(rows[k]),
                                 nd, bz ? "random" : "0");
                        io_check(&v, what);
                        /* again from the result left on the devices */
                        memcpy(v.y0, v.y, (size_t)v.m * es);
                        reference(ctx, A, HISP_OP_N, v.alpha, v.x, v.beta, v.y0, v.yref);
                        free(v.bound);
                        io_bound(ctx, A, HISP_OP_N, &v);
                        CK_OK(ctx, hisp_mspmv_dist(plan, &ap, xv, &bp, yv));
                        CK_OK(ctx, hisp_mvector_read(yv, v.y));
                        strncat(what, ", second call", sizeof what - strlen(what) - 1);
                        io_check(&v, what);
                        if (v.m == v.n) { /* square: y gathered into a replicated vector */
                            hisp_mvector z = NULL;
                            CK_OK(ctx, hisp_mvector_create(plan, HISP_MVEC_REPLICATED, &z));
                            CK_OK(ctx, hisp_mvector_allgather(yv, z));
                            void *zh = malloc((size_t)v.m * es + 8);
                            ck_assert_ptr_nonnull(zh);
                            CK_OK(ctx, hisp_mvector_read(z, zh));
                            ck_assert_msg(!memcmp(zh, v.y, (size_t)v.m * es), "%s: allgather",
                                          what);
                            /* every device's copy: z as the next x (the solver's step) */
                            memcpy(v.x, zh, (size_t)v.m * es);
                            memcpy(v.y0, v.y, (size_t)v.m * es);
                            reference(ctx, A, HISP_OP_N, v.alpha, v.x, v.beta, v.y0, v.yref);
                            free(v.bound);
                            io_bound(ctx, A, HISP_OP_N, &v);
                            CK_OK(ctx, hisp_mspmv_dist(plan, &ap, z, &bp, yv));
                            CK_OK(ctx, hisp_mvector_read(yv, v.y));
                            strncat(what, ", x gathered", sizeof what - strlen(what) - 1);
                            io_check(&v, what);
                            free(zh);
                            hisp_mvector_destroy(&z);
                        } else {
                            ck_assert_int_eq(hisp_mvector_allgather(yv, xv),
                                             HISP_ERR_INVALID_ARGUMENT);
                        }
                        io_free(&v);
                    }
                    /* the wrong layouts */
                    float one = 1;
                    double oned = 1;
                    const void *op1 = t == HISP_F32 ? (const void *)&one : (const void *)&oned;
                    ck_assert_int_eq(hisp_mspmv_dist(plan, op1, yv, op1, xv),
                                     HISP_ERR_INVALID_ARGUMENT);
                    hisp_mvector_destroy(&xv);
                    ck_assert_ptr_null(xv);
                    /* a plan destroyed first: the vector handle only destroys */
                    hisp_mplan_destroy(&plan);
                    ck_assert_int_eq(hisp_mvector_write(yv, NULL), HISP_ERR_INVALID_HANDLE);
                    hisp_mvector_destroy(&yv);
                }
            { /* column kinds refuse */
                hisp_mplan plan = NULL;
                hisp_mvector v = NULL;
                CK_OK(ctx, hisp_mplan_create(A, 1, f.refs, HISP_PART_PCSC, 0, &plan));
                ck_assert_int_eq(hisp_mvector_create(plan, HISP_MVEC_ROWS, &v),
                                 HISP_ERR_UNSUPPORTED);
                hisp_mplan_destroy(&plan);
            }
            hisp_matrix_destroy(&A);
        }
    hisp_context_destroy(&ctx);
}
END_TEST

/* A new distributed vector reads as zeros, as a new hisp_vector does, also
 * where its memory held an earlier vector's entries. */
START_TEST(test_plan_vectors_zero)
{
    test_plan_fx f = test_plan_fx_make(_i);
    hisp_context ctx = f.ctx;
    uint64_t st = test_seed() ^ (0x2e0 + (uint64_t)_i);
    hisp_matrix A = test_random_matrix(ctx, HISP_F64, 300, 300, 0.02, &st);
    hisp_mplan plan = NULL;
    CK_OK(ctx, hisp_mplan_create(A, 3, f.refs, HISP_PART_PCSR, HISP_MPLAN_SUBDEVICES, &plan));
    double *h = malloc(300 * sizeof *h), *fill = malloc(300 * sizeof *fill);
    ck_assert(h && fill);
    for (int k = 0; k < 300; k++)
        fill[k] = 1.0 + test_uniform(&st);
    for (int round = 0; round < 4; round++)
        for (int lay = 0; lay < 2; lay++) {
            hisp_mvector v = NULL;
            CK_OK(ctx, hisp_mvector_create(plan, lay ? HISP_MVEC_ROWS : HISP_MVEC_REPLICATED, &v));
            memset(h, 0xff, 300 * sizeof *h);
            CK_OK(ctx, hisp_mvector_read(v, h));
            for (int k = 0; k < 300; k++)
                ck_assert_msg(h[k] == 0 && !signbit(h[k]), "%s round %d %s: entry %d is %g",
                              f.t->label, round, lay ? "rows" : "replicated", k, h[k]);
            CK_OK(ctx, hisp_mvector_write(v, fill)); /* the next vector may get this memory */
            hisp_mvector_destroy(&v);
        }
    free(h);
    free(fill);
    hisp_mplan_destroy(&plan);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

/* hisp_mspmv_vec: x and y are vectors of a context on the target. Where the
 * backend merges on the device (the reference backend here, CUDA on a GPU
 * machine) the device path runs: peer copies, the merge kernels; staged
 * copies of every partial vector too (hispi_msrep_hook.stage_all, as when the
 * devices differ from the vectors' device). OpenCL and HISP_MPLAN_HOST_MERGE
 * go through the host. An iteration chain (y of one call is x of the next)
 * checks that the result stays usable on the device. */
START_TEST(test_plan_vectors)
{
    test_plan_fx f = test_plan_fx_make(_i);
    hisp_context ctx = f.ctx, vc = test_context(_i);
    uint64_t st = test_seed() ^ (0x58 + (uint64_t)_i);
    bool quick = getenv("HISP_TEST_QUICK") != NULL;
    bool dev_expected = f.t->kind == HISP_BACKEND_REFERENCE || f.t->kind == HISP_BACKEND_CUDA;
    for (int shape = 0; shape < NSHAPES + 1; shape++)
        for (int ti = 0; ti < (f.info.fp64 ? 2 : 1); ti++) {
            if (quick && shape % 2) continue;
            hisp_type t = ti ? HISP_F64 : HISP_F32;
            hisp_matrix A = shape < NSHAPES ? shaped(ctx, t, shape, &st)
                                            : test_random_matrix(ctx, t, 400, 400, 0.02, &st);
            for (int k = 0; k < NKINDS; k++)
                for (int nd = 1; nd <= 4; nd++) {
                    if (quick && nd == 3) continue;
                    for (int mode = 0; mode < 3; mode++) { /* device, staged, host merge */
                        hisp_mplan plan = NULL;
                        CK_OK(ctx, hisp_mplan_create(A, nd, f.refs, all_kinds[k],
                                                     mode == 2 ? HISP_MPLAN_HOST_MERGE : 0, &plan));
                        hispi_msrep_hook.stage_all = mode == 1;
                        hisp_mplan_breakdown *bd = calloc(1, sizeof *bd);
                        ck_assert_ptr_nonnull(bd);
                        for (int call = 0; call < 4; call++) {
                            hisp_op op = (hisp_op)(call % 2);
                            io v;
                            io_make(ctx, A, op, call < 2, &st, &v);
                            hisp_vector xv = NULL, yv = NULL;
                            CK_OK(vc, hisp_vector_create(vc, t, v.n, &xv));
                            CK_OK(vc, hisp_vector_create(vc, t, v.m, &yv));
                            CK_OK(vc, hisp_vector_write(xv, v.x));
                            CK_OK(vc, hisp_vector_write(yv, v.y0));
                            test_real_arg ap = test_real_of(t, v.alpha),
                                          bp = test_real_of(t, v.beta);
                            CK_OK(ctx, hisp_mspmv_vec(plan, op, &ap, xv, &bp, yv));
                            CK_OK(ctx, hisp_mplan_get_breakdown(plan, bd));
                            ck_assert_int_eq(bd->device_merge, mode < 2 && dev_expected);
                            CK_OK(vc, hisp_vector_read(yv, v.y));
                            char what[400];
                            snprintf(what, sizeof what, "%s shape %d %s %s nd %d mode %d call %d",
                                     f.t->label, shape, hisp_type_name(t),
                                     hisp_partition_name(all_kinds[k]), nd, mode, call);
                            io_check(&v, what);
                            io_free(&v);
                            hisp_vector_destroy(&xv);
                            hisp_vector_destroy(&yv);
                        }
                        free(bd);
                        hispi_msrep_hook.stage_all = 0;
                        hisp_mplan_destroy(&plan);
                    }
                }
            hisp_matrix_destroy(&A);
        }
    /* an iteration chain on a square matrix: y_{k+1} = A*y_k + 0.5*z, the
     * vectors never read back until the end, against the reference chain */
    hisp_matrix A = test_random_matrix(ctx, HISP_F64, 300, 300, 0.02, &st);
    if (f.info.fp64)
        for (int k = 0; k < NKINDS; k++) {
            hisp_mplan plan = NULL;
            CK_OK(ctx, hisp_mplan_create(A, 3, f.refs, all_kinds[k], 0, &plan));
            double *x = malloc(300 * sizeof *x), *z = malloc(300 * sizeof *z),
                   *r = malloc(300 * sizeof *r), *got = malloc(300 * sizeof *got);
            ck_assert(x && z && r && got);
            test_fill_uniform(HISP_F64, x, 300, &st);
            test_fill_uniform(HISP_F64, z, 300, &st);
            hisp_vector v[2] = {NULL, NULL};
            CK_OK(vc, hisp_vector_create(vc, HISP_F64, 300, &v[0]));
            CK_OK(vc, hisp_vector_create(vc, HISP_F64, 300, &v[1]));
            CK_OK(vc, hisp_vector_write(v[0], x));
            memcpy(r, x, 300 * sizeof *r);
            double one = 1, half = 0.5;
            for (int it = 0; it < 5; it++) {
                hisp_op op = (hisp_op)(it % 2);
                CK_OK(vc, hisp_vector_write(v[(it + 1) % 2], z));
                CK_OK(ctx, hisp_mspmv_vec(plan, op, &one, v[it % 2], &half, v[(it + 1) % 2]));
                double *nr = malloc(300 * sizeof *nr);
                ck_assert_ptr_nonnull(nr);
                reference(ctx, A, op, 1.0, r, 0.5, z, nr);
                memcpy(r, nr, 300 * sizeof *r);
                free(nr);
            }
            CK_OK(vc, hisp_vector_read(v[1], got));
            double err = test_rel_error(HISP_F64, got, r, 300);
            ck_assert_msg(err <= 1e-12, "%s chain %s: relative error %.3e", f.t->label,
                          hisp_partition_name(all_kinds[k]), err);
            hisp_vector_destroy(&v[0]);
            hisp_vector_destroy(&v[1]);
            free(x);
            free(z);
            free(r);
            free(got);
            hisp_mplan_destroy(&plan);
        }
    hisp_matrix_destroy(&A);
    /* misuse */
    {
        hisp_matrix B = test_random_matrix(ctx, HISP_F64, 50, 40, 0.1, &st);
        hisp_mplan plan = NULL;
        CK_OK(ctx, hisp_mplan_create(B, 1, f.refs, HISP_PART_PCSR, 0, &plan));
        hisp_vector xs = NULL, ys = NULL, xf = NULL;
        CK_OK(vc, hisp_vector_create(vc, HISP_F64, 40, &xs));
        CK_OK(vc, hisp_vector_create(vc, HISP_F64, 50, &ys));
        CK_OK(vc, hisp_vector_create(vc, HISP_F32, 40, &xf));
        double one = 1, zero = 0;
        ck_assert_int_eq(hisp_mspmv_vec(plan, HISP_OP_T, &one, xs, &zero, ys),
                         HISP_ERR_INVALID_ARGUMENT);
        ck_assert_int_eq(hisp_mspmv_vec(plan, HISP_OP_N, &one, xf, &zero, ys),
                         HISP_ERR_INVALID_ARGUMENT);
        ck_assert_int_eq(hisp_mspmv_vec(plan, HISP_OP_N, &one, NULL, &zero, ys),
                         HISP_ERR_INVALID_HANDLE);
        ck_assert_int_eq(hisp_mspmv_vec(plan, HISP_OP_N, &one, ys, &zero, ys),
                         HISP_ERR_INVALID_ARGUMENT);
        ck_assert_int_eq(hisp_mspmv_vec(NULL, HISP_OP_N, &one, xs, &zero, ys),
                         HISP_ERR_INVALID_HANDLE);
        hisp_vector_destroy(&xs);
        hisp_vector_destroy(&ys);
        hisp_vector_destroy(&xf);
        hisp_mplan_destroy(&plan);
        hisp_matrix_destroy(&B);
    }
    hisp_context_destroy(&vc);
    hisp_context_destroy(&ctx);
}
END_TEST

/* p*-opt (HISP_MPLAN_DEVICE_PTR): the devices receive the global pointer
 * slices and make their local pointers (OpenCL with a kernel, the reference
 * backend in its copy, CUDA with cuSPARSE on a GPU machine); elsewhere (CUDA
 * with hisp's kernel, pcoo) the host path runs. Both paths against the reference and
 * against each other (bitwise on the reference backend; op T scatters with
 * atomics elsewhere, whose order varies); on CUDA
 * the same with cuSPARSE parts; the cuSPARSE flag is refused off CUDA. */
START_TEST(test_plan_device_ptr)
{
    test_plan_fx f = test_plan_fx_make(_i);
    hisp_context ctx = f.ctx;
    uint64_t st = test_seed() ^ (0x59 + (uint64_t)_i);
    bool cuda = f.t->kind == HISP_BACKEND_CUDA;
    for (int shape = 0; shape < NSHAPES + 1; shape++)
        for (int fs = 0; fs < (cuda ? 2 : 1); fs++) { /* fs 1: cuSPARSE parts */
            unsigned extra = fs ? HISP_MPLAN_CUSPARSE : 0u;
            bool on_device = !cuda || fs == 1; /* reference, OpenCL; CUDA with cuSPARSE */
            hisp_type t = f.info.fp64 ? HISP_F64 : HISP_F32;
            hisp_matrix A = shape < NSHAPES ? shaped(ctx, t, shape, &st)
                                            : test_random_matrix(ctx, t, 300, 350, 0.03, &st);
            for (int k = 0; k < NKINDS; k++)
                for (int nd = 1; nd <= 4; nd++) {
                    hisp_mplan pd = NULL, ph = NULL;
                    CK_OK(ctx, hisp_mplan_create(A, nd, f.refs, all_kinds[k],
                                                 extra | HISP_MPLAN_DEVICE_PTR, &pd));
                    CK_OK(ctx, hisp_mplan_create(A, nd, f.refs, all_kinds[k], extra, &ph));
                    hisp_mplan_breakdown *bd = calloc(1, sizeof *bd);
                    ck_assert_ptr_nonnull(bd);
                    CK_OK(ctx, hisp_mplan_get_breakdown(pd, bd));
                    for (int d = 0; d < nd; d++)
                        ck_assert_int_eq(bd->dev[d].device_ptr,
                                         on_device && all_kinds[k] != HISP_PART_PCOO);
                    CK_OK(ctx, hisp_mplan_get_breakdown(ph, bd));
                    for (int d = 0; d < nd; d++)
                        ck_assert_int_eq(bd->dev[d].device_ptr, 0);
                    free(bd);
                    for (int op = 0; op < 2; op++) {
                        io v;
                        io_make(ctx, A, (hisp_op)op, op == 0, &st, &v);
                        size_t bytes = (size_t)v.m * hisp_type_size(t);
                        void *yh = malloc(bytes + 8);
                        ck_assert_ptr_nonnull(yh);
                        memcpy(yh, v.y0, bytes);
                        test_real_arg ap = test_real_of(t, v.alpha), bp = test_real_of(t, v.beta);
                        CK_OK(ctx, hisp_mspmv(pd, (hisp_op)op, &ap, v.x, &bp, v.y));
                        CK_OK(ctx, hisp_mspmv(ph, (hisp_op)op, &ap, v.x, &bp, yh));
                        char what[400];
                        snprintf(what, sizeof what, "%s p*-opt shape %d %s nd %d op %d", f.t->label,
                                 shape, hisp_partition_name(all_kinds[k]), nd, op);
                        io_check(&v, what);
                        if (f.t->kind == HISP_BACKEND_REFERENCE) /* deterministic */
                            ck_assert_msg(memcmp(yh, v.y, bytes) == 0,
                                          "%s: host and device pointers differ", what);
                        else
                            ck_assert_msg(test_rel_error(t, yh, v.yref, v.m) <=
                                              (t == HISP_F32 ? 1e-5 : 1e-13),
                                          "%s: host pointers", what);
                        free(yh);
                        io_free(&v);
                    }
                    hisp_mplan_destroy(&pd);
                    hisp_mplan_destroy(&ph);
                }
            if (shape == 0 && !cuda) {
                hisp_mplan p = NULL;
                ck_assert_int_eq(
                    hisp_mplan_create(A, 1, f.refs, HISP_PART_PCSR, HISP_MPLAN_CUSPARSE, &p),
                    HISP_ERR_UNSUPPORTED);
                ck_assert_ptr_null(p);
            }
            if (shape == 0) {
                hisp_mplan p = NULL;
                ck_assert_int_eq(hisp_mplan_create(A, 1, f.refs, HISP_PART_PCSR,
                                                   HISP_MPLAN_CUSPARSE | HISP_MPLAN_HISPARSE, &p),
                                 HISP_ERR_INVALID_ARGUMENT);
            }
            hisp_matrix_destroy(&A);
        }
    hisp_context_destroy(&ctx);
}
END_TEST

/* One distributed SpMV of an f64 plan (row kind) against the reference;
 * gather: the all-gather of the result (square A) equals it too. */
static void dist_once(hisp_context ctx, hisp_mplan plan, hisp_matrix A, uint64_t *st, bool gather,
                      const char *what)
{
    hisp_mvector xv = NULL, yv = NULL, zv = NULL;
    CK_OK(ctx, hisp_mvector_create(plan, HISP_MVEC_REPLICATED, &xv));
    CK_OK(ctx, hisp_mvector_create(plan, HISP_MVEC_ROWS, &yv));
    io v;
    io_make(ctx, A, HISP_OP_N, false, st, &v);
    CK_OK(ctx, hisp_mvector_write(xv, v.x));
    CK_OK(ctx, hisp_mvector_write(yv, v.y0));
    CK_OK(ctx, hisp_mspmv_dist(plan, &v.alpha, xv, &v.beta, yv));
    CK_OK(ctx, hisp_mvector_read(yv, v.y));
    io_check(&v, what);
    if (gather) {
        double *z = malloc((size_t)v.m * sizeof *z);
        ck_assert_ptr_nonnull(z);
        CK_OK(ctx, hisp_mvector_create(plan, HISP_MVEC_REPLICATED, &zv));
        CK_OK(ctx, hisp_mvector_allgather(yv, zv));
        CK_OK(ctx, hisp_mvector_read(zv, z));
        ck_assert_msg(!memcmp(z, v.y, (size_t)v.m * sizeof *z), "%s: allgather", what);
        free(z);
        hisp_mvector_destroy(&zv);
    }
    io_free(&v);
    hisp_mvector_destroy(&yv);
    hisp_mvector_destroy(&xv);
}

/* One plan over every target at once (heterogeneous devices: the reference
 * backend beside OpenCL / CUDA). */
START_TEST(test_plan_mixed)
{
    const test_target *tg;
    int nt = test_targets(&tg);
    uint64_t st = test_seed() ^ 0x54;
    hisp_context ctx = test_default_context();
    hisp_matrix A = test_random_matrix(ctx, HISP_F64, 700, 700, 0.01, &st); /* square: all-gather */
    CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_CSR));
    hisp_device_ref refs[8];
    int nd = 0;
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < nt && nd < 8; i++) {
            hisp_device_info info;
            CK_OK(ctx, hisp_backend_device_info(ctx, tg[i].kind, tg[i].device, &info));
            if (info.fp64) refs[nd++] = (hisp_device_ref){tg[i].kind, tg[i].device};
        }
    for (int k = 0; k < NKINDS; k++) {
        hisp_mplan plan = NULL;
        CK_OK(ctx, hisp_mplan_create(A, nd, refs, all_kinds[k], HISP_MPLAN_NO_NUMA, &plan));
        for (int op = 0; op < 2; op++) {
            io v;
            io_make(ctx, A, (hisp_op)op, op == 0, &st, &v);
            CK_OK(ctx, hisp_mspmv(plan, (hisp_op)op, &v.alpha, v.x, &v.beta, v.y));
            io_check(&v, hisp_partition_name(all_kinds[k]));
            io_free(&v);
        }
        /* distributed vectors across backends: the boundary rows and the
         * all-gather go through the host */
        if (all_kinds[k] != HISP_PART_PCSC && all_kinds[k] != HISP_PART_COLBLOCK)
            dist_once(ctx, plan, A, &st, true, "mixed dist");
        hisp_mplan_destroy(&plan);
    }
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

START_TEST(test_plan_errors)
{
    uint64_t st = test_seed() ^ 0x55;
    hisp_context ctx = test_default_context();
    hisp_matrix A = test_random_matrix(ctx, HISP_F64, 30, 30, 0.1, &st);
    hisp_device_ref ref = {HISP_BACKEND_REFERENCE, 0}, bad = {HISP_BACKEND_REFERENCE, 5};
    hisp_mplan plan = NULL;
    ck_assert_int_eq(hisp_mplan_create(A, 0, &ref, HISP_PART_PCSR, 0, &plan),
                     HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(
        hisp_mplan_create(A, HISP_MPLAN_MAX_DEVICES + 1, &ref, HISP_PART_PCSR, 0, &plan),
        HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_mplan_create(A, 1, &ref, (hisp_partition_kind)-1, 0, &plan),
                     HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_mplan_create(A, 1, &ref, HISP_PART_PCSR, 0, NULL),
                     HISP_ERR_INVALID_ARGUMENT);
    /* a device that does not exist: the worker's failure comes home */
    hisp_device_ref two[2] = {ref, bad};
    ck_assert_int_eq(hisp_mplan_create(A, 2, two, HISP_PART_PCSR, 0, &plan),
                     HISP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(plan);
    hisp_error_info e;
    CK_OK(ctx, hisp_context_last_error(ctx, &e));
    ck_assert_msg(strstr(e.message, "device 1") != NULL, "message: %s", e.message);
    for (int k = 0; k < HISP_BACKEND_COUNT; k++) {
        int n = 0;
        if (!hisp_backend_compiled((hisp_backend_kind)k)) {
            hisp_device_ref nc = {(hisp_backend_kind)k, 0};
            ck_assert_int_eq(hisp_mplan_create(A, 1, &nc, HISP_PART_PCSR, 0, &plan),
                             HISP_ERR_NOT_COMPILED);
        } else if (hisp_backend_device_count(ctx, (hisp_backend_kind)k, &n) == HISP_SUCCESS &&
                   n == 0) {
            hisp_device_ref nd = {(hisp_backend_kind)k, 0};
            ck_assert_int_eq(hisp_mplan_create(A, 1, &nd, HISP_PART_PCSR, 0, &plan),
                             HISP_ERR_NO_DEVICE);
        }
    }
    /* entry types without SpMV */
    int32_t ci[2] = {0, 1};
    hisp_matrix C = NULL;
    CK_OK(ctx, hisp_matrix_create_coo(ctx, HISP_C64, 2, 2, 2, ci, ci, NULL, &C));
    ck_assert_int_eq(hisp_mplan_create(C, 1, &ref, HISP_PART_PCSR, 0, &plan), HISP_ERR_UNSUPPORTED);
    hisp_matrix_destroy(&C);
    CK_OK(ctx, hisp_mplan_create(A, 1, &ref, HISP_PART_PCSR, 0, &plan));
    double one = 1, x[30] = {0}, y[30];
    ck_assert_int_eq(hisp_mspmv(plan, (hisp_op)7, &one, x, &one, y), HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_mspmv(plan, HISP_OP_N, NULL, x, &one, y), HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_mspmv(plan, HISP_OP_N, &one, NULL, &one, y), HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_mspmv(NULL, HISP_OP_N, &one, x, &one, y), HISP_ERR_INVALID_HANDLE);
    ck_assert_int_eq(hisp_mplan_get_breakdown(NULL, NULL), HISP_ERR_INVALID_HANDLE);
    hisp_mplan_destroy(&plan);
    hisp_mplan_destroy(&plan); /* NULL: nothing */
    ck_assert_int_ge(hisp_numa_nodes(), 1);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

/* HiSparse parts (HISP_MPLAN_HISPARSE) on every target: each device walks
 * its part's tree with the scheduler. */
START_TEST(test_plan_hisparse_parts)
{
    test_plan_fx f = test_plan_fx_make(_i);
    hisp_context ctx = f.ctx;
    uint64_t st = test_seed() ^ (0x57 + (uint64_t)_i);
    hisp_type t = f.info.fp64 ? HISP_F64 : HISP_F32;
    for (int shape = -1; shape < NSHAPES; shape += 2) {
        hisp_matrix A = shape < 0 ? test_random_matrix(ctx, t, 400, 300, 0.02, &st)
                                  : shaped(ctx, t, shape, &st);
        for (int k = 0; k < NKINDS; k++) {
            hisp_mplan plan = NULL;
            CK_OK(ctx, hisp_mplan_create(A, 3, f.refs, all_kinds[k], HISP_MPLAN_HISPARSE, &plan));
            for (int op = 0; op < 2; op++) {
                io v;
                io_make(ctx, A, (hisp_op)op, op == 0, &st, &v);
                test_real_arg ap = test_real_of(t, v.alpha), bp = test_real_of(t, v.beta);
                CK_OK(ctx, hisp_mspmv(plan, (hisp_op)op, &ap, v.x, &bp, v.y));
                char what[400];
                snprintf(what, sizeof what, "hisparse parts %s shape %d %s op %d", f.t->label,
                         shape, hisp_partition_name(all_kinds[k]), op);
                io_check(&v, what);
                io_free(&v);
            }
            hisp_mplan_destroy(&plan);
        }
        hisp_matrix_destroy(&A);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

extern void hispi_alloc_fail_after(long);

/* Host allocation failures anywhere in creation and calls (one device, so
 * that the hook's countdown is not shared between threads) give
 * HISP_ERR_OUT_OF_HOST_MEMORY, never a crash or a leak (sanitize build). */
START_TEST(test_plan_alloc_failures)
{
    uint64_t st = test_seed() ^ 0x59;
    hisp_context ctx = test_default_context();
    hisp_matrix A = test_random_matrix(ctx, HISP_F64, 80, 60, 0.1, &st); /* COO: conversions */
    hisp_device_ref ref = {HISP_BACKEND_REFERENCE, 0};
    io v;
    io_make(ctx, A, HISP_OP_T, false, &st, &v);
    for (int k = 0; k < NKINDS; k++) {
        int ok_runs = 0;
        for (long f = 1; f <= 80; f++) {
            hisp_mplan plan = NULL;
            hispi_alloc_fail_after(f);
            hisp_status s = hisp_mplan_create(A, 1, &ref, all_kinds[k], 0, &plan);
            if (s) ck_assert_ptr_null(plan);
            if (!s) s = hisp_mspmv(plan, HISP_OP_T, &v.alpha, v.x, &v.beta, v.y);
            hispi_alloc_fail_after(0);
            ck_assert_msg(s == HISP_SUCCESS || s == HISP_ERR_OUT_OF_HOST_MEMORY,
                          "%s, failure at allocation %ld: %s", hisp_partition_name(all_kinds[k]), f,
                          hisp_status_string(s));
            if (s == HISP_SUCCESS) ok_runs++;
            if (plan) { /* the plan survives a failed call: the next one is exact */
                memcpy(v.y, v.y0, (size_t)v.m * sizeof(double));
                CK_OK(ctx, hisp_mspmv(plan, HISP_OP_T, &v.alpha, v.x, &v.beta, v.y));
                io_check(&v, "after an allocation failure");
            }
            hisp_mplan_destroy(&plan);
        }
        ck_assert_int_gt(ok_runs, 0); /* past the last allocation everything works */
    }
    io_free(&v);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

/* The spinning waits (hispi_msrep_hook.spin_us forces them on CPU devices too):
 * calls of every kind of job give the reference results, and destroying a
 * plan whose workers spin ends them. */
START_TEST(test_plan_spin)
{
    uint64_t st = test_seed() ^ 0x5b;
    hisp_context ctx = test_default_context();
    hisp_matrix A = test_random_matrix(ctx, HISP_F64, 300, 300, 0.03, &st);
    hisp_device_ref refs[3] = {
        {HISP_BACKEND_REFERENCE, 0}, {HISP_BACKEND_REFERENCE, 0}, {HISP_BACKEND_REFERENCE, 0}};
    hispi_msrep_hook.spin_us = 300;
    for (int k = 0; k < 3; k++) {
        hisp_mplan plan = NULL;
        CK_OK(ctx, hisp_mplan_create(A, 3, refs, all_kinds[k], HISP_MPLAN_NO_NUMA, &plan));
        for (int call = 0; call < 4; call++) {
            io v;
            io_make(ctx, A, HISP_OP_N, call == 0, &st, &v);
            CK_OK(ctx, hisp_mspmv(plan, HISP_OP_N, &v.alpha, v.x, &v.beta, v.y));
            io_check(&v, "spinning waits");
            io_free(&v);
        }
        if (all_kinds[k] != HISP_PART_PCSC && all_kinds[k] != HISP_PART_COLBLOCK)
            dist_once(ctx, plan, A, &st, false, "spinning waits, dist");
        hisp_mplan_destroy(&plan);
    }
    hispi_msrep_hook.spin_us = 0;
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

/* A plan from a HiSparse matrix (the tree is read through a temporary CSR). */
START_TEST(test_plan_hisparse_source)
{
    uint64_t st = test_seed() ^ 0x56;
    hisp_context ctx = test_default_context();
    hisp_matrix A = test_random_matrix(ctx, HISP_F64, 300, 200, 0.03, &st);
    CK_OK(ctx, hisp_matrix_set_node_size(A, 16));
    CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_HISPARSE));
    hisp_device_ref refs[3] = {
        {HISP_BACKEND_REFERENCE, 0}, {HISP_BACKEND_REFERENCE, 0}, {HISP_BACKEND_REFERENCE, 0}};
    for (int k = 0; k < NKINDS; k++) {
        hisp_mplan plan = NULL;
        CK_OK(ctx, hisp_mplan_create(A, 3, refs, all_kinds[k], 0, &plan));
        io v;
        io_make(ctx, A, HISP_OP_N, false, &st, &v);
        CK_OK(ctx, hisp_mspmv(plan, HISP_OP_N, &v.alpha, v.x, &v.beta, v.y));
        io_check(&v, hisp_partition_name(all_kinds[k]));
        io_free(&v);
        hisp_mplan_destroy(&plan);
    }
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

/* ---- the command ---------------------------------------------------------- */

static char tmpdir[256];

static const char *tmp_file(const char *name)
{
    static char path[512];
    if (!tmpdir[0]) {
        snprintf(tmpdir, sizeof tmpdir, "/tmp/hisp_msrep_XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    }
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    return path;
}

START_TEST(test_cli)
{
    static char out[1 << 16];
    char mtx[512];
    snprintf(mtx, sizeof mtx, "%s", tmp_file("a.mtx"));
    ck_assert_int_eq(test_run_cli(out, sizeof out, "gen rmat --scale 9 -o '%s'", mtx), 0);
    const char *kinds[] = {"pcsr", "pcsc", "pcoo", "rowblock", "colblock"};
    for (int k = 0; k < 5; k++)
        for (int tr = 0; tr < 2; tr++) {
            int rc = test_run_cli(out, sizeof out,
                                  "mspmv '%s' --devices %d --partition %s %s --alpha 0.5 --check "
                                  "--repeat 2 --json %s",
                                  mtx, 3 - tr, kinds[k], tr ? "--transpose" : "",
                                  tr ? "--subdevices" : "");
            ck_assert_msg(rc == 0, "%s: exit %d\n%s", kinds[k], rc, out);
            ck_assert_int_eq(test_json_int(out, "devices"), 3 - tr);
            ck_assert_int_eq(test_json_int(out, "nnz") > 0, 1);
            ck_assert_msg(strstr(out, "\"ok\": true") != NULL, "%s", out);
        }
    /* generator input and the table */
    int rc = test_run_cli(out, sizeof out,
                          "mspmv --gen poisson3d --n 12 --devices 2 --backend reference --check");
    ck_assert_msg(rc == 0 && strstr(out, "balance") && strstr(out, "distribution"), "%d\n%s", rc,
                  out);
    /* weighted and aligned splits, a fitted row cost; bad row costs */
    const char *wopts[] = {"--row-cost 2.5", "--row-cost auto --align", "--align"};
    for (int i = 0; i < 3; i++) {
        rc = test_run_cli(out, sizeof out,
                          "mspmv '%s' --devices 3 --backend reference %s --check --repeat 2 --json",
                          mtx, wopts[i]);
        ck_assert_msg(rc == 0 && strstr(out, "\"ok\": true") && strstr(out, "\"row_cost\""),
                      "%s: exit %d\n%s", wopts[i], rc, out);
        ck_assert_int_eq(strstr(out, "\"align\": true") != NULL, i > 0);
    }
    ck_assert_msg(strstr(out, "\"row_cost\": 0,") || strstr(out, "\"row_cost\": 0\n"), "%s", out);
    rc = test_run_cli(out, sizeof out, "mspmv '%s' --devices 3 --backend reference --row-cost 2.5",
                      mtx);
    ck_assert_msg(rc == 0 && strstr(out, "nnz + 2.500*rows balanced"), "%d\n%s", rc, out);
    /* distributed vectors from the command line; op T refused */
    rc = test_run_cli(out, sizeof out,
                      "mspmv '%s' --devices 3 --backend reference --distributed --alpha 0.5 "
                      "--check --repeat 2 --json",
                      mtx);
    ck_assert_msg(rc == 0 && strstr(out, "\"ok\": true") &&
                      strstr(out, "\"vectors\": \"distributed\""),
                  "--distributed: exit %d\n%s", rc, out);
    rc = test_run_cli(out, sizeof out, "mspmv '%s' --distributed --transpose", mtx);
    ck_assert_msg(rc == 1, "--distributed --transpose: exit %d\n%s", rc, out);
    rc = test_run_cli(out, sizeof out, "mspmv '%s' --row-cost -1", mtx);
    ck_assert_msg(rc == 2, "--row-cost -1: exit %d\n%s", rc, out); /* an input error */
    /* --out gives the same y as hisp spmv */
    char y1[512], y2[512];
    snprintf(y1, sizeof y1, "%s", tmp_file("y1.mtx"));
    snprintf(y2, sizeof y2, "%s", tmp_file("y2.mtx"));
    ck_assert_int_eq(test_run_cli(out, sizeof out,
                                  "mspmv '%s' --devices 4 --partition pcoo --out '%s' "
                                  "--backend reference",
                                  mtx, y1),
                     0);
    ck_assert_int_eq(
        test_run_cli(out, sizeof out, "spmv '%s' --backend reference --out '%s'", mtx, y2), 0);
    hisp_context ctx = test_default_context();
    hisp_vector a = NULL, b = NULL;
    CK_OK(ctx, hisp_vector_read_mtx(ctx, y1, HISP_F64, &a));
    CK_OK(ctx, hisp_vector_read_mtx(ctx, y2, HISP_F64, &b));
    int64_t n = 0;
    CK_OK(ctx, hisp_vector_size(a, &n));
    double *va = malloc((size_t)n * 8), *vb = malloc((size_t)n * 8);
    CK_OK(ctx, hisp_vector_read(a, va));
    CK_OK(ctx, hisp_vector_read(b, vb));
    ck_assert(test_rel_error(HISP_F64, va, vb, n) < 1e-13);
    free(va);
    free(vb);
    hisp_vector_destroy(&a);
    hisp_vector_destroy(&b);
    hisp_context_destroy(&ctx);
    /* an initial y with beta (the check starts from the same y0) */
    char y0[512];
    snprintf(y0, sizeof y0, "%s", tmp_file("y0.mtx"));
    {
        hisp_context c2 = test_default_context();
        hisp_vector yv = NULL;
        CK_OK(c2, hisp_vector_create(c2, HISP_F64, n, &yv));
        double *w = malloc((size_t)n * sizeof *w);
        uint64_t st = test_seed() ^ 0x5a;
        test_fill_uniform(HISP_F64, w, n, &st);
        CK_OK(c2, hisp_vector_write(yv, w));
        CK_OK(c2, hisp_vector_write_mtx(yv, y0));
        free(w);
        hisp_vector_destroy(&yv);
        hisp_context_destroy(&c2);
    }
    rc = test_run_cli(out, sizeof out,
                      "mspmv '%s' --y '%s' --beta -0.75 --alpha 2 --devices 3 --partition pcsc "
                      "--check --json",
                      mtx, y0);
    ck_assert_msg(rc == 0 && strstr(out, "\"ok\": true"), "%d\n%s", rc, out);
    ck_assert_int_eq(test_run_cli(out, sizeof out, "mspmv '%s' --y '%s' --transpose", mtx, y1), 0);
    ck_assert_int_eq(test_run_cli(out, sizeof out, "mspmv '%s' --y /nonexistent.mtx", mtx), 2);
    ck_assert_int_eq(test_run_cli(out, sizeof out, "mspmv '%s' --y '%s' --mpi", mtx, y0), 1);
    /* --resident (device merge on the reference backend, host merge on the
     * default backend), --device-ptr, --host-merge, --kernel */
    const char *res_opts[] = {"--backend reference --resident --device-ptr",
                              "--resident --host-merge --beta 0.5",
                              "--backend reference --resident --transpose --beta -1", "--resident"};
    for (int k = 0; k < 4; k++) {
        rc = test_run_cli(out, sizeof out,
                          "mspmv '%s' --devices 3 --partition %s %s --y '%s' --check --repeat 2 "
                          "--json",
                          mtx, kinds[k], res_opts[k], y0);
        ck_assert_msg(rc == 0 && strstr(out, "\"ok\": true") && strstr(out, "\"resident\": true"),
                      "%s: %d\n%s", res_opts[k], rc, out);
        if (k == 0) ck_assert_msg(strstr(out, "\"device_merge\": true"), "%s", out);
        if (k == 0) ck_assert_msg(strstr(out, "\"device_ptr\": true"), "%s", out);
        if (k == 1) ck_assert_msg(strstr(out, "\"device_merge\": false"), "%s", out);
    }
    ck_assert_int_eq(test_run_cli(out, sizeof out, "mspmv '%s' --kernel magic", mtx), 2);
    ck_assert_int_eq(
        test_run_cli(out, sizeof out, "mspmv '%s' --kernel cusparse --format hisparse", mtx), 1);
    ck_assert_int_eq(
        test_run_cli(out, sizeof out, "mspmv '%s' --kernel cusparse --backend reference", mtx), 2);
    /* usage and value errors */
    ck_assert_int_eq(test_run_cli(out, sizeof out, "mspmv"), 1);
    ck_assert_int_eq(test_run_cli(out, sizeof out, "mspmv '%s' --bogus", mtx), 1);
    ck_assert_int_eq(test_run_cli(out, sizeof out, "mspmv '%s' --partition diagonal", mtx), 2);
    ck_assert_int_eq(test_run_cli(out, sizeof out, "mspmv '%s' --devices 0", mtx), 2);
    ck_assert_int_eq(test_run_cli(out, sizeof out, "mspmv '%s' --format ellpack", mtx), 2);
    rc = test_run_cli(out, sizeof out,
                      "mspmv '%s' --format hisparse --devices 2 --partition pcsc --check --json",
                      mtx);
    ck_assert_msg(rc == 0 && strstr(out, "\"ok\": true"), "%d\n%s", rc, out);
    ck_assert_int_eq(test_run_cli(out, sizeof out, "mspmv /nonexistent.mtx"), 2);
    ck_assert_int_eq(test_run_cli(out, sizeof out, "mspmv --help"), 0);
    ck_assert(strstr(out, "--partition") != NULL);
}
END_TEST

/* A machine with two NUMA nodes, simulated by hwloc (HWLOC_SYNTHETIC in a
 * child process): hisp sees both; CPU devices span the machine, so the
 * parts are not grouped, and the results stay exact. */
START_TEST(test_numa_synthetic)
{
    static char out[1 << 16];
    int rc = test_run_cli(out, sizeof out,
                          "mspmv --gen poisson3d --n 14 --devices 3 --partition pcsc --check "
                          "--json");
    ck_assert_msg(rc == 0, "%s", out);
    ck_assert_int_eq(test_json_int(out, "machine_numa_nodes"), hisp_numa_nodes());
    /* the reference backend: PoCL reads the same (synthetic) topology and
     * refuses to run without memory sizes in it */
    setenv("HWLOC_SYNTHETIC", "pack:2 [numa] core:1 pu:1", 1);
    rc = test_run_cli(out, sizeof out,
                      "mspmv --gen poisson3d --n 14 --devices 3 --partition pcsr --check --json "
                      "--backend reference");
    unsetenv("HWLOC_SYNTHETIC");
    ck_assert_msg(rc == 0 && strstr(out, "\"ok\": true"), "%d\n%s", rc, out);
    ck_assert_int_eq(test_json_int(out, "numa_nodes"), 1);
#ifdef HISP_HAVE_HWLOC
    void *h = dlopen("libhwloc.so.15", RTLD_NOW | RTLD_LOCAL);
    if (h) { /* hwloc present: the synthetic machine has two nodes */
        ck_assert_int_eq(test_json_int(out, "machine_numa_nodes"), 2);
        dlclose(h);
    }
#endif
}
END_TEST

/* MPI: mpirun with 2 and 3 ranks on one machine (PoCL or the reference
 * backend), every rank splitting its part over 2 devices. */
START_TEST(test_mpi)
{
    const char *bin = test_hisp_bin();
    static char out[1 << 16];
    char mtx[512];
    snprintf(mtx, sizeof mtx, "%s", tmp_file("m.mtx"));
    ck_assert_int_eq(test_run_cli(out, sizeof out, "gen circuit --n 3000 -o '%s'", mtx), 0);
    const char *kinds[] = {"pcsr", "pcsc", "pcoo", "rowblock"};
    for (int np = 2; np <= 3; np++)
        for (int k = 0; k < 4; k++) {
            int rc =
                test_mpirun(out, sizeof out, np,
                            "'%s' mspmv '%s' --mpi --devices 2 --partition %s %s --check --json",
                            bin, mtx, kinds[k], k == 1 && np == 3 ? "--transpose" : "");
            ck_assert_msg(rc == 0, "%d ranks %s: status %d\n%.3000s", np, kinds[k], rc, out);
            ck_assert_int_eq(test_json_int(out, "ranks"), np);
            ck_assert_msg(strstr(out, "\"ok\": true") != NULL, "%.3000s", out);
        }
}
END_TEST

static void cleanup(void)
{
    if (tmpdir[0]) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        if (system(cmd)) {
        }
        tmpdir[0] = 0;
    }
}

Suite *suite_msrep(void)
{
    Suite *s = suite_create("msrep");
    TCase *tc = test_tcase(s, "partition", 600);
    tcase_add_test(tc, test_partition_invariants);
    tcase_add_test(tc, test_partition_weighted);
    tcase_add_test(tc, test_partition_example);
    tcase_add_test(tc, test_host_reference);
    tc = test_tcase(s, "plan", 1200);
    int nt = test_targets(NULL);
    tcase_add_loop_test(tc, test_plan_targets, 0, nt);
    tcase_add_loop_test(tc, test_plan_subdevices, 0, nt);
    tcase_add_loop_test(tc, test_plan_vectors, 0, nt);
    tcase_add_loop_test(tc, test_plan_dist, 0, nt);
    tcase_add_loop_test(tc, test_plan_vectors_zero, 0, nt);
    tcase_add_loop_test(tc, test_plan_device_ptr, 0, nt);
    tcase_add_test(tc, test_plan_mixed);
    tcase_add_test(tc, test_plan_errors);
    tcase_add_test(tc, test_plan_alloc_failures);
    tcase_add_test(tc, test_plan_hisparse_source);
    tcase_add_test(tc, test_plan_spin);
    tcase_add_loop_test(tc, test_plan_hisparse_parts, 0, nt);
    tc = test_tcase(s, "cli", 1200);
    if (test_hisp_bin()) {
        tcase_add_test(tc, test_cli);
        tcase_add_test(tc, test_numa_synthetic);
    } else {
        test_skip("msrep cli: build/bin/hisp not built");
    }
    if (test_mpi_bin())
        tcase_add_test(tc, test_mpi);
    else
        test_skip("msrep mpi: hisp-mpi or mpirun missing (build with mpi=yes; apt-get install "
                  "libopenmpi-dev openmpi-bin)");
    tcase_add_unchecked_fixture(tc, NULL, cleanup);
    return s;
}
