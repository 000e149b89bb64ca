/* Generators: structure of every kind, validity, determinism, f32/f64,
 * names, parameter checks, out-of-memory paths. Structure tests use a fresh
 * seed per run (test_seed()), so they check properties, not one sample.
 * hisp_matrix_perturb (core/gen/gen_perturb.c) has its own test case. */
#include "testutil.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern void hispi_alloc_fail_after(long);

/* check records every passing ck_assert (a write in no-fork mode): too slow
 * for per-entry checks of million-entry matrices, so assert on failure only. */
#define CK(c)                                                                                      \
    do {                                                                                           \
        if (!(c)) ck_abort_msg("%s:%d: assertion %s failed", __FILE__, __LINE__, #c);              \
    } while (0)
#define CKM(c, ...)                                                                                \
    do {                                                                                           \
        if (!(c)) ck_abort_msg(__VA_ARGS__);                                                       \
    } while (0)

typedef struct {
    hisp_matrix A;
    hisp_type type;
    int64_t n, nnz;
    const int64_t *ptr;
    const int32_t *col;
    const void *val;
} csr;

static double val(const csr *m, int64_t k)
{
    return m->type == HISP_F32 ? (double)((const float *)m->val)[k] : ((const double *)m->val)[k];
}

static hisp_status try_gen(hisp_context ctx, const hisp_gen_params *p, hisp_type t, csr *m)
{
    memset(m, 0, sizeof *m);
    hisp_status s = hisp_matrix_generate(ctx, p, t, &m->A);
    if (s != HISP_SUCCESS) return s;
    hisp_matrix_info info;
    CK_OK(ctx, hisp_matrix_get_info(m->A, &info));
    CK((info.format) == (HISP_FORMAT_CSR));
    CK((info.type) == (t));
    CK((info.nrows) == (info.ncols));
    m->type = t;
    m->n = info.nrows;
    m->nnz = info.nnz;
    CK_OK(ctx, hisp_matrix_host_arrays(m->A, &m->ptr, NULL, &m->col, &m->val));
    return HISP_SUCCESS;
}

/* Generate and check CSR validity: pointers, strictly increasing columns in
 * range, values in [-1, 1) (laplace: 4|6 on the diagonal, -1 elsewhere), and
 * the arrays accepted by hisp_matrix_create_csr. */
static void gen(hisp_context ctx, const hisp_gen_params *p, hisp_type t, csr *m)
{
    CK_OK(ctx, try_gen(ctx, p, t, m));
    bool laplace = p->kind == HISP_GEN_POISSON2D || p->kind == HISP_GEN_POISSON3D;
    bool diffusion = p->kind == HISP_GEN_ANISO3D || p->kind == HISP_GEN_JUMP3D;
    double diag = p->kind == HISP_GEN_POISSON2D ? 4 : 6;
    CK((m->ptr[0]) == (0));
    CK((m->ptr[m->n]) == (m->nnz));
    for (int64_t i = 0; i < m->n; i++) {
        CK((m->ptr[i]) <= (m->ptr[i + 1]));
        for (int64_t k = m->ptr[i]; k < m->ptr[i + 1]; k++) {
            CKM(m->col[k] >= 0 && m->col[k] < m->n, "%s: column %d out of range",
                hisp_gen_name(p->kind), m->col[k]);
            if (k > m->ptr[i])
                CKM(m->col[k - 1] < m->col[k], "%s: row %lld not sorted/distinct",
                    hisp_gen_name(p->kind), (long long)i);
            double v = val(m, k);
            if (laplace)
                CK(v == (m->col[k] == i ? diag : -1.0));
            else if (diffusion) /* couplings negative, the diagonal positive */
                CKM(m->col[k] == i ? v > 0 : v < 0, "%s: value %g", hisp_gen_name(p->kind), v);
            else
                CKM(v >= -1.0 && v < 1.0, "value %g", v);
        }
    }
    hisp_matrix B = NULL;
    CK_OK(ctx, hisp_matrix_create_csr(ctx, t, m->n, m->n, m->ptr, m->col, m->val, &B));
    hisp_matrix_destroy(&B);
}

static void drop(csr *m)
{
    hisp_matrix_destroy(&m->A);
}

static hisp_context new_ctx(void)
{
    hisp_context ctx = NULL;
    CK((hisp_context_create(&ctx)) == (HISP_SUCCESS));
    return ctx;
}

static bool has_entry(const csr *m, int64_t i, int64_t j)
{
    for (int64_t k = m->ptr[i]; k < m->ptr[i + 1]; k++)
        if (m->col[k] == j) return true;
    return false;
}

static int64_t max_row(const csr *m)
{
    int64_t mx = 0;
    for (int64_t i = 0; i < m->n; i++)
        if (m->ptr[i + 1] - m->ptr[i] > mx) mx = m->ptr[i + 1] - m->ptr[i];
    return mx;
}

START_TEST(test_names)
{
    for (int k = 0; k < HISP_GEN_COUNT; k++) {
        const char *name = hisp_gen_name((hisp_gen_kind)k);
        ck_assert_str_ne(name, "unknown");
        hisp_gen_kind back = HISP_GEN_COUNT;
        CK((hisp_gen_from_name(name, &back)) == (HISP_SUCCESS));
        CK((int)back == k);
        hisp_gen_params p;
        hisp_gen_defaults((hisp_gen_kind)k, &p);
        CK((int)p.kind == k);
        CK((p.seed) == (1));
        CK((p.n) > (0));
    }
    hisp_gen_kind k;
    CK((hisp_gen_from_name("Poisson3D", &k)) == (HISP_SUCCESS));
    CK((k) == (HISP_GEN_POISSON3D));
    CK((hisp_gen_from_name("laplace", &k)) == (HISP_ERR_INVALID_ARGUMENT));
    CK((hisp_gen_from_name("", &k)) == (HISP_ERR_INVALID_ARGUMENT));
    CK((hisp_gen_from_name(NULL, &k)) == (HISP_ERR_INVALID_ARGUMENT));
    CK((hisp_gen_from_name("rmat", NULL)) == (HISP_ERR_INVALID_ARGUMENT));
    ck_assert_str_eq(hisp_gen_name(HISP_GEN_COUNT), "unknown");
    ck_assert_str_eq(hisp_gen_name((hisp_gen_kind)-1), "unknown");
    ck_assert_str_eq(hisp_gen_name(HISP_GEN_RMAT), "rmat");
}
END_TEST

START_TEST(test_poisson)
{
    hisp_context ctx = new_ctx();
    for (int dim = 2; dim <= 3; dim++) {
        int64_t sides[] = {0, 1, 2, 3, 7, 12};
        for (size_t s = 0; s < sizeof sides / sizeof sides[0]; s++) {
            int64_t n = sides[s];
            hisp_gen_params p;
            hisp_gen_defaults(dim == 2 ? HISP_GEN_POISSON2D : HISP_GEN_POISSON3D, &p);
            p.n = n;
            p.seed = test_seed();
            csr m;
            gen(ctx, &p, s % 2 ? HISP_F32 : HISP_F64, &m);
            int64_t rows = dim == 2 ? n * n : n * n * n;
            int64_t nnz = dim == 2 ? 5 * n * n - 4 * n : 7 * n * n * n - 6 * n * n;
            CK((m.n) == (rows));
            CK((m.nnz) == (nnz));
            /* symmetric; each row sums to its number of missing neighbours,
             * which add up to the grid's boundary faces */
            double total = 0;
            for (int64_t i = 0; i < rows; i++) {
                CK(has_entry(&m, i, i));
                double sum = 0;
                for (int64_t k = m.ptr[i]; k < m.ptr[i + 1]; k++) {
                    sum += val(&m, k);
                    CK(has_entry(&m, m.col[k], i));
                    int64_t d = llabs((long long)(m.col[k] - i));
                    CK(d == 0 || d == 1 || d == n || d == n * n);
                }
                CK(sum == 2.0 * dim - (double)(m.ptr[i + 1] - m.ptr[i] - 1));
                total += sum;
            }
            CK(total == (dim == 2 ? 4.0 * n : 6.0 * n * n));
            drop(&m);
        }
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* aniso3d: -1 to the x and y neighbours, -epsilon to the z ones, 4 + 2 eps
 * on the diagonal. jump3d: symmetric; the couplings are harmonic means of
 * coefficients 1 and contrast (both present); an interior row sums to 0
 * exactly (the diagonal sums the couplings in the row's column order). The
 * CLI tests check both against scipy (tests/gen_scipy.py). */
START_TEST(test_diffusion)
{
    hisp_context ctx = new_ctx();
    hisp_gen_params p;
    hisp_gen_defaults(HISP_GEN_ANISO3D, &p);
    p.n = 7;
    p.epsilon = 0.125;
    csr m;
    gen(ctx, &p, HISP_F64, &m);
    CK(m.nnz == 7 * 343 - 6 * 49);
    for (int64_t i = 0; i < m.n; i++)
        for (int64_t k = m.ptr[i]; k < m.ptr[i + 1]; k++) {
            int64_t d = llabs((long long)(m.col[k] - i));
            CK(val(&m, k) == (d == 0 ? 4.25 : d == 49 ? -0.125 : -1.0));
        }
    drop(&m);
    hisp_gen_defaults(HISP_GEN_JUMP3D, &p);
    p.n = 9;
    p.block = 3;
    p.seed = test_seed();
    gen(ctx, &p, HISP_F64, &m);
    double c = p.contrast, hm = 2 * 1.0 * c / (1.0 + c);
    int64_t s = p.n, seen_one = 0, seen_c = 0;
    for (int64_t i = 0; i < m.n; i++) {
        int64_t x = i % s, y = (i / s) % s, z = i / (s * s);
        bool interior = x > 0 && y > 0 && z > 0 && x < s - 1 && y < s - 1 && z < s - 1;
        double off = 0, dg = 0;
        for (int64_t k = m.ptr[i]; k < m.ptr[i + 1]; k++) {
            double v = val(&m, k);
            if (m.col[k] == i) {
                dg = v;
                continue;
            }
            CK(v == -1.0 || v == -c || v == -hm);
            seen_one += v == -1.0, seen_c += v == -c;
            CK(has_entry(&m, m.col[k], i));
            off += v;
        }
        if (interior) CKM(dg == -off, "row %lld: diagonal %g, couplings %g", (long long)i, dg, off);
    }
    CK(seen_one > 0 && seen_c > 0);
    drop(&m);
    hisp_context_destroy(&ctx);
}
END_TEST

START_TEST(test_banded)
{
    hisp_context ctx = new_ctx();
    struct {
        int64_t n, bw;
        double npr;
    } cases[] = {{2000, 8, 16},  {2000, 0, 1}, {2000, 1, 2.5}, {3000, 50, 10},
                 {1000, 3, 100}, {5, 8, 4},    {1, 8, 16},     {0, 8, 16}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        hisp_gen_params p;
        hisp_gen_defaults(HISP_GEN_BANDED, &p);
        p.n = cases[c].n;
        p.bandwidth = cases[c].bw;
        p.nnz_per_row = cases[c].npr;
        p.seed = test_seed() + c;
        csr m;
        gen(ctx, &p, c % 2 ? HISP_F32 : HISP_F64, &m);
        CK((m.n) == (p.n));
        int64_t full = 0, full_nnz = 0;
        for (int64_t i = 0; i < m.n; i++) {
            CK(has_entry(&m, i, i));
            for (int64_t k = m.ptr[i]; k < m.ptr[i + 1]; k++)
                CK((llabs((long long)(m.col[k] - i))) <= (p.bandwidth));
            if (i >= p.bandwidth && i + p.bandwidth < m.n) { /* whole window inside */
                full++;
                full_nnz += m.ptr[i + 1] - m.ptr[i];
            }
        }
        double want = p.nnz_per_row < 2.0 * p.bandwidth + 1 ? p.nnz_per_row : 2.0 * p.bandwidth + 1;
        if (full > 500) {
            double mean = (double)full_nnz / (double)full;
            CKM(fabs(mean - want) < 0.05 * want, "banded mean row %g, want %g", mean, want);
        }
        drop(&m);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

START_TEST(test_random)
{
    hisp_context ctx = new_ctx();
    struct {
        int64_t n;
        double npr;
    } cases[] = {{5000, 8}, {3000, 2.3}, {400, 150}, {50, 40}, {10, 10},
                 {30, 1e9}, {1000, 0},   {0, 0},     {0, 8}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        hisp_gen_params p;
        hisp_gen_defaults(HISP_GEN_RANDOM, &p);
        p.n = cases[c].n;
        p.nnz_per_row = cases[c].npr;
        p.seed = test_seed() + 7 * c;
        csr m;
        gen(ctx, &p, c % 2 ? HISP_F32 : HISP_F64, &m);
        CK((m.n) == (p.n));
        if (p.nnz_per_row == 0) CK((m.nnz) == (0));
        if (p.n * p.nnz_per_row >= 10000 && p.nnz_per_row * 4 <= p.n) {
            /* mean near the target (total has std ~ sqrt(0.75 nnz)); columns
             * spread evenly over ten slices; row lengths vary */
            double mean = (double)m.nnz / (double)m.n;
            CKM(fabs(mean - p.nnz_per_row) < 0.03 * p.nnz_per_row, "random mean row %g, want %g",
                mean, p.nnz_per_row);
            int64_t slice[10] = {0};
            for (int64_t k = 0; k < m.nnz; k++)
                slice[m.col[k] * 10 / m.n]++;
            for (int q = 0; q < 10; q++)
                CKM(fabs((double)slice[q] / (double)m.nnz - 0.1) < 0.015,
                    "slice %d holds %lld of %lld", q, (long long)slice[q], (long long)m.nnz);
            CK((max_row(&m)) > ((int64_t)p.nnz_per_row + 2));
            double vsum = 0;
            for (int64_t k = 0; k < m.nnz; k++)
                vsum += val(&m, k);
            CK(fabs(vsum / (double)m.nnz) < 0.05);
        }
        drop(&m);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

START_TEST(test_rmat)
{
    hisp_context ctx = new_ctx();
    int scales[] = {0, 1, 5, 12};
    for (size_t c = 0; c < sizeof scales / sizeof scales[0]; c++) {
        hisp_gen_params p;
        hisp_gen_defaults(HISP_GEN_RMAT, &p);
        p.scale = scales[c];
        p.edge_factor = 8;
        p.seed = test_seed() + c;
        csr m;
        gen(ctx, &p, c % 2 ? HISP_F32 : HISP_F64, &m);
        int64_t n = (int64_t)1 << p.scale, edges = 8 * n;
        CK((m.n) == (n));
        CK((m.nnz) <= (edges));
        CK((m.nnz) >= (1));
        if (p.scale == 12) {
            /* duplicates merged, yet most edges distinct; power-law rows:
             * the largest far above the mean, vertex 0 the hub (a = .57);
             * in-degrees skewed too */
            CK((m.nnz) > (edges / 2));
            double mean = (double)m.nnz / (double)n;
            CK((max_row(&m)) > (20 * mean));
            CK((m.ptr[1] - m.ptr[0]) == (max_row(&m)));
            int64_t *indeg = calloc((size_t)n + 1, sizeof *indeg), maxin = 0, empty = 0;
            for (int64_t k = 0; k < m.nnz; k++)
                indeg[m.col[k]]++;
            for (int64_t j = 0; j < n; j++) {
                if (indeg[j] > maxin) maxin = indeg[j];
                if (m.ptr[j + 1] == m.ptr[j]) empty++;
            }
            CK((maxin) > (20 * mean));
            CK((empty) > (n / 10)); /* many isolated rows, as in Graph500 */
            /* top-level quadrants near a, b, c, d (merging duplicates thins
             * out the crowded a quadrant a little) */
            double quad[4] = {0};
            for (int64_t i = 0; i < n; i++)
                for (int64_t k = m.ptr[i]; k < m.ptr[i + 1]; k++)
                    quad[2 * (i >= n / 2) + (m.col[k] >= n / 2)] += 1.0 / (double)m.nnz;
            if (getenv("HISP_GEN_PRINT_HASHES"))
                printf("  rmat quadrants %.3f %.3f %.3f %.3f\n", quad[0], quad[1], quad[2],
                       quad[3]);
            CKM(fabs(quad[0] - 0.55) < 0.03 && fabs(quad[1] - 0.19) < 0.03 &&
                    fabs(quad[2] - 0.19) < 0.03 && fabs(quad[3] - 0.06) < 0.02,
                "rmat quadrants %.3f %.3f %.3f %.3f", quad[0], quad[1], quad[2], quad[3]);
            free(indeg);
        }
        drop(&m);
    }
    /* edge_factor 0: an empty graph */
    hisp_gen_params p;
    hisp_gen_defaults(HISP_GEN_RMAT, &p);
    p.scale = 4;
    p.edge_factor = 0;
    csr m;
    gen(ctx, &p, HISP_F64, &m);
    CK((m.n) == (16));
    CK((m.nnz) == (0));
    drop(&m);
    hisp_context_destroy(&ctx);
}
END_TEST

START_TEST(test_dense)
{
    hisp_context ctx = new_ctx();
    int64_t sizes[] = {0, 1, 17, 300};
    for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; c++) {
        hisp_gen_params p;
        hisp_gen_defaults(HISP_GEN_DENSE, &p);
        p.n = sizes[c];
        p.seed = test_seed() + c;
        csr m;
        gen(ctx, &p, c % 2 ? HISP_F32 : HISP_F64, &m);
        CK((m.nnz) == (p.n * p.n));
        for (int64_t i = 0; i < m.n; i++) {
            CK((m.ptr[i]) == (i * p.n));
            for (int64_t j = 0; j < m.n; j++)
                CK((m.col[i * p.n + j]) == (j));
        }
        if (p.n == 300) {
            double sum = 0, sq = 0;
            for (int64_t k = 0; k < m.nnz; k++) {
                sum += val(&m, k);
                sq += val(&m, k) * val(&m, k);
            }
            CK(fabs(sum / (double)m.nnz) < 0.02);
            CK(fabs(sq / (double)m.nnz - 1.0 / 3) < 0.02); /* uniform [-1,1) */
        }
        drop(&m);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* Rows and columns holding more than 20x the mean are the "dense lines". */
static double circuit_share(const csr *m, int64_t *dense_rows, int64_t *dense_cols)
{
    double mean = (double)m->nnz / (double)m->n;
    int64_t *colcnt = calloc((size_t)m->n + 1, sizeof *colcnt);
    for (int64_t k = 0; k < m->nnz; k++)
        colcnt[m->col[k]]++;
    *dense_rows = *dense_cols = 0;
    int64_t in_lines = 0;
    for (int64_t i = 0; i < m->n; i++) {
        bool drow = (double)(m->ptr[i + 1] - m->ptr[i]) > 20 * mean;
        if (drow) ++*dense_rows;
        if ((double)colcnt[i] > 20 * mean) ++*dense_cols;
        for (int64_t k = m->ptr[i]; k < m->ptr[i + 1]; k++)
            if (drow || (double)colcnt[m->col[k]] > 20 * mean) in_lines++;
    }
    free(colcnt);
    return (double)in_lines / (double)m->nnz;
}

START_TEST(test_circuit)
{
    hisp_context ctx = new_ctx();
    struct {
        int64_t n;
        double npr, share;
    } cases[] = {{20000, 5, 0.3}, {50000, 3, 0.5}, {20000, 8, 0.1}, {20000, 5, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        hisp_gen_params p;
        hisp_gen_defaults(HISP_GEN_CIRCUIT, &p);
        p.n = cases[c].n;
        p.nnz_per_row = cases[c].npr;
        p.dense_share = cases[c].share;
        p.seed = test_seed() + 3 * c;
        csr m;
        gen(ctx, &p, c % 2 ? HISP_F32 : HISP_F64, &m);
        for (int64_t i = 0; i < m.n; i++)
            CK(has_entry(&m, i, i));
        int64_t drows, dcols;
        double share = circuit_share(&m, &drows, &dcols);
        if (p.dense_share == 0) {
            CK((drows) == (0));
            CK((dcols) == (0));
            CK((max_row(&m)) < (40));
        } else {
            CK((drows) >= (1));
            CK((drows) == (dcols));
            CKM(fabs(share - p.dense_share) < 0.05, "dense lines hold %.3f, want %g", share,
                p.dense_share);
            /* outside the dense lines: the requested mean, mostly near the
             * diagonal */
            int64_t sparse = 0, near = 0, rows = 0;
            double mean = (double)m.nnz / (double)m.n;
            int64_t *colcnt = calloc((size_t)m.n + 1, sizeof *colcnt);
            for (int64_t k = 0; k < m.nnz; k++)
                colcnt[m.col[k]]++;
            for (int64_t i = 0; i < m.n; i++) {
                if ((double)(m.ptr[i + 1] - m.ptr[i]) > 20 * mean) continue;
                rows++;
                for (int64_t k = m.ptr[i]; k < m.ptr[i + 1]; k++) {
                    if ((double)colcnt[m.col[k]] > 20 * mean) continue;
                    sparse++;
                    if (llabs((long long)(m.col[k] - i)) <= 64) near++;
                }
            }
            free(colcnt);
            double smean = (double)sparse / (double)rows;
            CKM(fabs(smean - p.nnz_per_row) < 0.1 * p.nnz_per_row, "sparse mean %g", smean);
            CK((double)near > 0.7 * (double)sparse);
        }
        drop(&m);
    }
    /* tiny sizes stay valid */
    for (int64_t n = 0; n < 6; n++) {
        hisp_gen_params p;
        hisp_gen_defaults(HISP_GEN_CIRCUIT, &p);
        p.n = n;
        p.nnz_per_row = n + 1;
        p.dense_share = 0.9;
        csr m;
        gen(ctx, &p, HISP_F64, &m);
        drop(&m);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

START_TEST(test_blockdiag)
{
    hisp_context ctx = new_ctx();
    struct {
        int64_t n;
        int block;
    } cases[] = {{4000, 8}, {1003, 8}, {2000, 1}, {999, 37}, {5, 8}, {0, 8}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        hisp_gen_params p;
        hisp_gen_defaults(HISP_GEN_BLOCKDIAG, &p);
        p.n = cases[c].n;
        p.block = cases[c].block;
        p.seed = test_seed() + c;
        csr m;
        gen(ctx, &p, c % 2 ? HISP_F32 : HISP_F64, &m);
        int64_t b = p.block < p.n ? p.block : p.n, with_off = 0, nb = 0;
        for (int64_t i = 0; i < m.n; i++) {
            int64_t br = i / b, lo = br * b, hi = lo + b < m.n ? lo + b : m.n;
            for (int64_t j = lo; j < hi; j++)
                CK(has_entry(&m, i, j)); /* own block */
            int64_t len = m.ptr[i + 1] - m.ptr[i];
            CK(len == hi - lo || len > hi - lo); /* maybe one more block */
            for (int64_t k = m.ptr[i]; k < m.ptr[i + 1]; k++) {
                CK((llabs((long long)(m.col[k] / b - br))) < (3)); /* local */
                if (i > lo) /* same pattern on every row of a block row */
                    CK((m.col[k]) == (m.col[m.ptr[i - 1] + (k - m.ptr[i])]));
            }
            if (i == lo) {
                nb++;
                if (len > hi - lo) with_off++;
            }
        }
        if (nb >= 100) {
            double f = (double)with_off / (double)nb;
            CKM(f > 0.1 && f < 0.4, "off-diagonal blocks in %.2f of block rows", f);
        }
        drop(&m);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* n = 0 with the other defaults: an empty matrix for every kind (rmat: scale
 * 0 is one vertex with all its edges merged into a self loop). */
START_TEST(test_empty)
{
    hisp_context ctx = new_ctx();
    for (int k = 0; k < HISP_GEN_COUNT; k++) {
        hisp_gen_params p;
        hisp_gen_defaults((hisp_gen_kind)k, &p);
        p.n = 0;
        p.scale = 0;
        csr m;
        gen(ctx, &p, HISP_F32, &m);
        CK(m.n == (k == HISP_GEN_RMAT ? 1 : 0));
        CK(m.nnz == (k == HISP_GEN_RMAT ? 1 : 0));
        drop(&m);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* Small instances of every kind with randomness in its pattern or values. */
static void small_params(hisp_gen_kind k, hisp_gen_params *p)
{
    hisp_gen_defaults(k, p);
    p->n = k == HISP_GEN_POISSON3D || k == HISP_GEN_ANISO3D || k == HISP_GEN_JUMP3D ? 9
           : k == HISP_GEN_POISSON2D                                                ? 30
           : k == HISP_GEN_DENSE                                                    ? 40
                                                                                    : 3000;
    p->scale = 10;
}

static uint64_t fnv(const void *data, size_t n, uint64_t h)
{
    const unsigned char *c = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ c[i]) * 1099511628211ull;
    return h;
}

static uint64_t hash_csr(const csr *m)
{
    uint64_t h = 1469598103934665603ull;
    h = fnv(m->ptr, (size_t)(m->n + 1) * sizeof *m->ptr, h);
    h = fnv(m->col, (size_t)m->nnz * sizeof *m->col, h);
    return fnv(m->val, (size_t)m->nnz * hisp_type_size(m->type), h);
}

START_TEST(test_determinism)
{
    hisp_context ctx = new_ctx();
    /* Golden hashes of (pattern, f64 values) for seed 1: the output must be
     * bit-identical on every machine and compiler. A deliberate change of a
     * generator updates these (print them with HISP_GEN_PRINT_HASHES=1). */
    static const uint64_t golden[HISP_GEN_COUNT] = {
        0x32836149aecda506ull, 0xb7e2992680cf57f0ull, 0x21efb309fc4cc68bull, 0xe4ed2277e1e0d6d2ull,
        0xdd3113f989fdd4a3ull, 0xa1399f42a4b3c2bdull, 0x349b485b86fac420ull, 0x9281c8d17a2dcb66ull,
        0xe5f7cf0d331a87bcull, 0x42295283ea1813c1ull};
    bool print = getenv("HISP_GEN_PRINT_HASHES") != NULL;
    for (int k = 0; k < HISP_GEN_COUNT; k++) {
        hisp_gen_params p;
        small_params((hisp_gen_kind)k, &p);
        csr a, b, c, d;
        gen(ctx, &p, HISP_F64, &a);
        gen(ctx, &p, HISP_F64, &b);
        CK((hash_csr(&a)) == (hash_csr(&b)));
        if (print)
            printf("  golden %s: 0x%016llxull\n", hisp_gen_name((hisp_gen_kind)k),
                   (unsigned long long)hash_csr(&a));
        else if (golden[k])
            CKM(hash_csr(&a) == golden[k], "%s: output changed", hisp_gen_name((hisp_gen_kind)k));
        /* f32: the same pattern, values the f64 ones truncated to 24 bits
         * (the diffusion kinds' computed values: rounded to float) */
        gen(ctx, &p, HISP_F32, &c);
        CK((c.nnz) == (a.nnz));
        ck_assert_mem_eq(c.ptr, a.ptr, (size_t)(a.n + 1) * sizeof *a.ptr);
        ck_assert_mem_eq(c.col, a.col, (size_t)a.nnz * sizeof *a.col);
        bool computed = k == HISP_GEN_ANISO3D || k == HISP_GEN_JUMP3D;
        for (int64_t q = 0; q < a.nnz; q++) {
            double x = val(&a, q), y = val(&c, q);
            CK(computed ? y == (double)(float)x : y <= x && x - y < 0x1p-23);
        }
        /* another seed: another matrix (the Laplacians have no randomness) */
        if (k != HISP_GEN_POISSON2D && k != HISP_GEN_POISSON3D && k != HISP_GEN_ANISO3D) {
            p.seed = 2;
            gen(ctx, &p, HISP_F64, &d);
            CK((hash_csr(&a)) != (hash_csr(&d)));
            if (k != HISP_GEN_DENSE && k != HISP_GEN_JUMP3D) /* random values only */
                CK(d.nnz != a.nnz || memcmp(d.col, a.col, (size_t)a.nnz * 4) != 0);
            drop(&d);
        }
        drop(&a);
        drop(&b);
        drop(&c);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* Sizes above the threading threshold: the result must not depend on the
 * number of threads. */
START_TEST(test_threads_do_not_matter)
{
    hisp_context ctx = new_ctx();
    for (int k = 0; k < HISP_GEN_COUNT; k++) {
        hisp_gen_params p;
        hisp_gen_defaults((hisp_gen_kind)k, &p);
        p.seed = test_seed();
        p.n = k == HISP_GEN_POISSON2D                                                    ? 300
              : k == HISP_GEN_POISSON3D || k == HISP_GEN_ANISO3D || k == HISP_GEN_JUMP3D ? 40
              : k == HISP_GEN_DENSE                                                      ? 500
                                                                                         : 60000;
        p.scale = 15;
        p.nnz_per_row = k == HISP_GEN_CIRCUIT ? 5 : 6;
        csr a, b;
        CK_OK(ctx, hisp_context_set_option(ctx, "threads", "1"));
        gen(ctx, &p, HISP_F32, &a);
        CK_OK(ctx, hisp_context_set_option(ctx, "threads", "0"));
        gen(ctx, &p, HISP_F32, &b);
        CK((a.nnz) > (200000));
        CK((a.nnz) == (b.nnz));
        CK((hash_csr(&a)) == (hash_csr(&b)));
        drop(&a);
        drop(&b);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

static void expect_bad(hisp_context ctx, const hisp_gen_params *p, hisp_type t, hisp_status want,
                       const char *words)
{
    hisp_matrix A = NULL;
    hisp_status s = hisp_matrix_generate(ctx, p, t, &A);
    CKM(s == want, "%s: got %s, want %s", hisp_gen_name(p->kind), hisp_status_string(s),
        hisp_status_string(want));
    ck_assert_ptr_null(A);
    hisp_error_info e;
    CK_OK(ctx, hisp_context_last_error(ctx, &e));
    CK((e.status) == (want));
    CKM(strstr(e.message, words) != NULL, "message '%s' lacks '%s'", e.message, words);
}

START_TEST(test_bad_params)
{
    hisp_context ctx = new_ctx();
    hisp_gen_params p;
#define BAD(kind, field, value, status, words)                                                     \
    do {                                                                                           \
        hisp_gen_defaults(kind, &p);                                                               \
        p.field = value;                                                                           \
        expect_bad(ctx, &p, HISP_F64, status, words);                                              \
    } while (0)
    const hisp_status INV = HISP_ERR_INVALID_ARGUMENT, OOM = HISP_ERR_OUT_OF_HOST_MEMORY;
    for (int k = 0; k < HISP_GEN_COUNT; k++)
        if (k != HISP_GEN_RMAT) BAD((hisp_gen_kind)k, n, -1, INV, "n = -1");
    BAD(HISP_GEN_RANDOM, n, (int64_t)1 << 31, INV, "outside");
    BAD(HISP_GEN_POISSON2D, n, 46341, INV, "2^31-1 rows");
    BAD(HISP_GEN_POISSON3D, n, 1291, INV, "2^31-1 rows");
    BAD(HISP_GEN_BANDED, bandwidth, -1, INV, "bandwidth");
    BAD(HISP_GEN_BANDED, nnz_per_row, 0, INV, "nnz_per_row");
    BAD(HISP_GEN_BANDED, nnz_per_row, NAN, INV, "nnz_per_row");
    BAD(HISP_GEN_RANDOM, nnz_per_row, -1, INV, "nnz_per_row");
    BAD(HISP_GEN_RANDOM, nnz_per_row, INFINITY, INV, "nnz_per_row");
    BAD(HISP_GEN_RMAT, scale, 31, INV, "scale");
    BAD(HISP_GEN_RMAT, scale, -1, INV, "scale");
    BAD(HISP_GEN_RMAT, edge_factor, -1, INV, "edge_factor");
    BAD(HISP_GEN_CIRCUIT, dense_share, 1.0, INV, "dense_share");
    BAD(HISP_GEN_CIRCUIT, dense_share, -0.1, INV, "dense_share");
    BAD(HISP_GEN_CIRCUIT, nnz_per_row, 0.5, INV, "nnz_per_row");
    BAD(HISP_GEN_BLOCKDIAG, block, 0, INV, "block");
    BAD(HISP_GEN_ANISO3D, n, 1291, INV, "2^31-1 rows");
    BAD(HISP_GEN_ANISO3D, epsilon, 0, INV, "epsilon");
    BAD(HISP_GEN_ANISO3D, epsilon, NAN, INV, "epsilon");
    BAD(HISP_GEN_JUMP3D, contrast, 0.5, INV, "contrast");
    BAD(HISP_GEN_JUMP3D, contrast, INFINITY, INV, "contrast");
    BAD(HISP_GEN_JUMP3D, block, 0, INV, "block");
    BAD(HISP_GEN_DENSE, kind, (hisp_gen_kind)99, INV, "unknown kind");
    /* absurd sizes are refused before any work, as out of memory */
    BAD(HISP_GEN_DENSE, n, 1000000, OOM, "memory");
    hisp_gen_defaults(HISP_GEN_RANDOM, &p);
    p.n = INT32_MAX;
    p.nnz_per_row = INT32_MAX; /* 4.6e18 entries: more than any machine holds */
    expect_bad(ctx, &p, HISP_F64, OOM, "memory");
    hisp_gen_defaults(HISP_GEN_RMAT, &p);
    p.scale = 30;
    p.edge_factor = 1 << 30;
    expect_bad(ctx, &p, HISP_F64, OOM, "memory");
    /* types: f32/f64 only for now */
    hisp_gen_defaults(HISP_GEN_DENSE, &p);
    p.n = 4;
    expect_bad(ctx, &p, HISP_C64, HISP_ERR_UNSUPPORTED, "c64");
    expect_bad(ctx, &p, HISP_B3X3_F32, HISP_ERR_UNSUPPORTED, "not supported");
    expect_bad(ctx, &p, (hisp_type)99, INV, "type");
    hisp_matrix A = NULL;
    CK((hisp_matrix_generate(ctx, NULL, HISP_F64, &A)) == (INV));
    CK((hisp_matrix_generate(ctx, &p, HISP_F64, NULL)) == (INV));
    CK((hisp_matrix_generate(NULL, &p, HISP_F64, &A)) == (HISP_ERR_INVALID_HANDLE));
    hisp_gen_defaults(HISP_GEN_DENSE, NULL); /* harmless */
#undef BAD
    hisp_context_destroy(&ctx);
}
END_TEST

/* Every allocation failing in turn gives a clean status (the sanitize build
 * checks that nothing leaks). */
START_TEST(test_out_of_memory)
{
    hisp_context ctx = new_ctx();
    for (int k = 0; k < HISP_GEN_COUNT; k++) {
        hisp_gen_params p;
        small_params((hisp_gen_kind)k, &p);
        for (long f = 1; f <= 8; f++) {
            hisp_matrix A = NULL;
            hispi_alloc_fail_after(f);
            hisp_status s = hisp_matrix_generate(ctx, &p, HISP_F64, &A);
            hispi_alloc_fail_after(0);
            if (s == HISP_SUCCESS) {
                ck_assert_ptr_nonnull(A);
                hisp_matrix_destroy(&A);
            } else {
                CK((s) == (HISP_ERR_OUT_OF_HOST_MEMORY));
                ck_assert_ptr_null(A);
            }
        }
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* A million-entry matrix of a few kinds: fast enough for every CI run. */
START_TEST(test_smoke_large)
{
    hisp_context ctx = new_ctx();
    hisp_gen_kind kinds[] = {HISP_GEN_RANDOM, HISP_GEN_RMAT, HISP_GEN_CIRCUIT};
    for (size_t c = 0; c < sizeof kinds / sizeof kinds[0]; c++) {
        hisp_gen_params p;
        hisp_gen_defaults(kinds[c], &p);
        p.n = 200000;
        p.scale = 17;
        p.seed = test_seed();
        csr m;
        gen(ctx, &p, HISP_F32, &m);
        CK((m.nnz) > (900000));
        drop(&m);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* ---- hisp_matrix_perturb --------------------------------------------------- */

typedef struct {
    hisp_matrix M;
    hisp_type type;
    int64_t nrows, ncols, nnz;
    const int64_t *ptr;
    const int32_t *col;
    const void *val;
} pcsr;

static double pval(const pcsr *m, int64_t k)
{
    return m->type == HISP_F32 ? (double)((const float *)m->val)[k] : ((const double *)m->val)[k];
}

/* B = perturb(A); checks that B is a valid sorted CSR matrix of A's sizes
 * and type with nnz(B) <= nnz(A) and borrows its arrays. */
static void perturb(hisp_context ctx, hisp_matrix A, double sigma, uint64_t seed, pcsr *b)
{
    memset(b, 0, sizeof *b);
    hisp_matrix_info ia, ib;
    CK_OK(ctx, hisp_matrix_get_info(A, &ia));
    CK_OK(ctx, hisp_matrix_perturb(A, sigma, seed, &b->M));
    CK_OK(ctx, hisp_matrix_get_info(b->M, &ib));
    CK(ib.format == HISP_FORMAT_CSR);
    CK(ib.type == ia.type && ib.nrows == ia.nrows && ib.ncols == ia.ncols);
    CKM(ib.nnz <= ia.nnz, "nnz(B) %lld > nnz(A) %lld", (long long)ib.nnz, (long long)ia.nnz);
    b->type = ib.type;
    b->nrows = ib.nrows;
    b->ncols = ib.ncols;
    b->nnz = ib.nnz;
    CK_OK(ctx, hisp_matrix_host_arrays(b->M, &b->ptr, NULL, &b->col, &b->val));
    CK(b->ptr[0] == 0 && b->ptr[b->nrows] == b->nnz);
    for (int64_t i = 0; i < b->nrows; i++) {
        CK(b->ptr[i] <= b->ptr[i + 1]);
        for (int64_t k = b->ptr[i]; k < b->ptr[i + 1]; k++) {
            CKM(b->col[k] >= 0 && b->col[k] < b->ncols, "column %d out of range", b->col[k]);
            if (k > b->ptr[i]) CKM(b->col[k - 1] < b->col[k], "row %lld not sorted", (long long)i);
            CK(isfinite(pval(b, k)));
        }
    }
}

static uint64_t hash_pcsr(const pcsr *m)
{
    uint64_t h = 1469598103934665603ull;
    h = fnv(m->ptr, (size_t)(m->nrows + 1) * sizeof *m->ptr, h);
    h = fnv(m->col, (size_t)m->nnz * sizeof *m->col, h);
    return fnv(m->val, (size_t)m->nnz * hisp_type_size(m->type), h);
}

static hisp_matrix poisson2d(hisp_context ctx, int64_t side, hisp_type t)
{
    hisp_gen_params p;
    hisp_gen_defaults(HISP_GEN_POISSON2D, &p);
    p.n = side;
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_generate(ctx, &p, t, &A));
    return A;
}

START_TEST(test_perturb_basic)
{
    hisp_context ctx = new_ctx();
    uint64_t seed = test_seed();
    for (int ti = 0; ti < 2; ti++) {
        hisp_type t = ti ? HISP_F32 : HISP_F64;
        hisp_matrix A = poisson2d(ctx, 100, t); /* 10^4 rows, 49600 entries */
        hisp_matrix_info ia;
        CK_OK(ctx, hisp_matrix_get_info(A, &ia));
        pcsr b, c, d;
        perturb(ctx, A, 10, seed, &b);
        /* a few cells get two entries (about 0.1 entries per cell near the diagonal) */
        CKM(b.nnz > 9 * ia.nnz / 10, "nnz(B) %lld of %lld", (long long)b.nnz, (long long)ia.nnz);
        /* deterministic; another seed moves the entries elsewhere */
        perturb(ctx, A, 10, seed, &c);
        CK(hash_pcsr(&b) == hash_pcsr(&c));
        perturb(ctx, A, 10, seed + 1, &d);
        CK(d.nnz != b.nnz || memcmp(d.col, b.col, (size_t)b.nnz * 4) != 0);
        /* the moved entries are spread: many off the five diagonals */
        int64_t off = 0;
        for (int64_t i = 0; i < b.nrows; i++)
            for (int64_t k = b.ptr[i]; k < b.ptr[i + 1]; k++) {
                int64_t dd = b.col[k] - i;
                if (dd != 0 && dd != 1 && dd != -1 && dd != 100 && dd != -100) off++;
            }
        CK(off > b.nnz / 2);
        hisp_matrix_destroy(&b.M);
        hisp_matrix_destroy(&c.M);
        hisp_matrix_destroy(&d.M);
        hisp_matrix_destroy(&A);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* f32 and f64 give the same pattern, and f32 values are the f64 ones
 * truncated to 24 bits (a cell holding several entries: their sum, rounded
 * to float). */
START_TEST(test_perturb_types)
{
    hisp_context ctx = new_ctx();
    uint64_t seed = test_seed();
    hisp_matrix A64 = poisson2d(ctx, 60, HISP_F64), A32 = poisson2d(ctx, 60, HISP_F32);
    pcsr b, c;
    perturb(ctx, A64, 10, seed, &b);
    perturb(ctx, A32, 10, seed, &c);
    CK(b.nnz == c.nnz);
    ck_assert_mem_eq(b.ptr, c.ptr, (size_t)(b.nrows + 1) * sizeof *b.ptr);
    ck_assert_mem_eq(b.col, c.col, (size_t)b.nnz * sizeof *b.col);
    for (int64_t k = 0; k < b.nnz; k++)
        CKM(fabs(pval(&b, k) - pval(&c, k)) < 1e-6, "value %lld: %g vs %g", (long long)k,
            pval(&b, k), pval(&c, k));
    hisp_matrix_destroy(&b.M);
    hisp_matrix_destroy(&c.M);
    hisp_matrix_destroy(&A64);
    hisp_matrix_destroy(&A32);
    hisp_context_destroy(&ctx);
}
END_TEST

/* The offsets follow a rounded normal of std sigma: A holds one full row (or
 * column) in the middle of a 10^4 x 10^4 matrix, so B's row (column) spread
 * is the offsets' distribution. E|round(10 Z)| = 7.98; P(|round(10 Z)| <= 10)
 * = P(|Z| < 1.05) = 0.706 (10^4 samples: standard errors 0.06 and 0.005). */
START_TEST(test_perturb_offsets)
{
    hisp_context ctx = new_ctx();
    uint64_t seed = test_seed();
    const int64_t n = 10000, mid = 5000;
    int64_t *ptr = calloc((size_t)n + 1, sizeof *ptr);
    int32_t *idx = malloc((size_t)n * sizeof *idx);
    CK(ptr && idx);
    for (int64_t j = 0; j < n; j++)
        idx[j] = (int32_t)j;
    for (int64_t i = mid + 1; i <= n; i++)
        ptr[i] = n;
    for (int by_col = 0; by_col < 2; by_col++) {
        hisp_matrix A = NULL;
        if (by_col)
            CK_OK(ctx, hisp_matrix_create_csc(ctx, HISP_F64, n, n, ptr, idx, NULL, &A));
        else
            CK_OK(ctx, hisp_matrix_create_csr(ctx, HISP_F64, n, n, ptr, idx, NULL, &A));
        pcsr b;
        perturb(ctx, A, 10, seed, &b);
        CK(b.nnz > 9 * n / 10);
        double sum = 0;
        int64_t within = 0;
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = b.ptr[i]; k < b.ptr[i + 1]; k++) {
                int64_t d = by_col ? b.col[k] - mid : i - mid;
                sum += (double)(d < 0 ? -d : d);
                within += d >= -10 && d <= 10;
            }
        double mean = sum / (double)b.nnz, share = (double)within / (double)b.nnz;
        CKM(mean > 7.5 && mean < 8.5, "%s: mean |offset| %g (expected 7.98)",
            by_col ? "columns" : "rows", mean);
        CKM(share > 0.68 && share < 0.73, "%s: share of |offset| <= 10: %g (expected 0.706)",
            by_col ? "columns" : "rows", share);
        hisp_matrix_destroy(&b.M);
        hisp_matrix_destroy(&A);
    }
    free(ptr);
    free(idx);
    hisp_context_destroy(&ctx);
}
END_TEST

/* sigma = 0 keeps the pattern (fresh values); a sigma far above the sizes
 * spreads the entries uniformly (the rejection path), quickly. */
START_TEST(test_perturb_sigma_limits)
{
    hisp_context ctx = new_ctx();
    uint64_t seed = test_seed();
    hisp_gen_params p;
    hisp_gen_defaults(HISP_GEN_RANDOM, &p);
    p.n = 3000;
    p.seed = seed;
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_generate(ctx, &p, HISP_F64, &A));
    const int64_t *ap;
    const int32_t *ac;
    const void *av;
    CK_OK(ctx, hisp_matrix_host_arrays(A, &ap, NULL, &ac, &av));
    pcsr b;
    perturb(ctx, A, 0, seed, &b);
    hisp_matrix_info ia;
    CK_OK(ctx, hisp_matrix_get_info(A, &ia));
    CK(b.nnz == ia.nnz);
    ck_assert_mem_eq(b.ptr, ap, (size_t)(b.nrows + 1) * sizeof *ap);
    ck_assert_mem_eq(b.col, ac, (size_t)b.nnz * sizeof *ac);
    int64_t same = 0;
    for (int64_t k = 0; k < b.nnz; k++) {
        double v = pval(&b, k);
        CK(v >= -1 && v < 1);
        same += v == ((const double *)av)[k];
    }
    CK(same < b.nnz / 100 + 1);
    hisp_matrix_destroy(&b.M);
    hisp_matrix_destroy(&A);

    /* a dense 8 x 8 block with sigma 1000: every cell about as likely */
    int64_t ptr[9];
    int32_t col[64];
    for (int i = 0; i <= 8; i++)
        ptr[i] = 8 * i;
    for (int k = 0; k < 64; k++)
        col[k] = k % 8;
    int64_t hits[8] = {0}, total = 0;
    for (uint64_t r = 0; r < 200; r++) {
        CK_OK(ctx, hisp_matrix_create_csr(ctx, HISP_F32, 8, 8, ptr, col, NULL, &A));
        perturb(ctx, A, 1000, seed + r, &b);
        for (int64_t i = 0; i < 8; i++)
            hits[i] += b.ptr[i + 1] - b.ptr[i];
        total += b.nnz;
        hisp_matrix_destroy(&b.M);
        hisp_matrix_destroy(&A);
    }
    /* 64 entries into 64 cells: about 1 - 1/e of the cells hold one */
    CKM(total > 200 * 64 / 2 && total < 200 * 64 * 3 / 4, "cells used %lld", (long long)total);
    for (int i = 0; i < 8; i++)
        CKM(hits[i] > total / 8 * 8 / 10 && hits[i] < total / 8 * 12 / 10,
            "row %d holds %lld of %lld", i, (long long)hits[i], (long long)total);
    hisp_context_destroy(&ctx);
}
END_TEST

/* B depends on A's entries only: the same matrix as CSR, COO, CSC or
 * HiSparse (transposed flag included) gives the same B, and so does any
 * number of threads. Plus a golden hash: the output is bit-identical on
 * every IEEE machine (print with HISP_GEN_PRINT_HASHES=1). */
START_TEST(test_perturb_formats)
{
    hisp_context ctx = new_ctx();
    uint64_t seed = test_seed();
    hisp_gen_params p;
    hisp_gen_defaults(HISP_GEN_CIRCUIT, &p);
    p.n = 40000;
    p.seed = seed;
    hisp_matrix A = NULL, H = NULL, C = NULL, T = NULL, HT = NULL;
    CK_OK(ctx, hisp_matrix_generate(ctx, &p, HISP_F64, &A));
    pcsr b, c;
    perturb(ctx, A, 10, seed, &b);
    uint64_t h = hash_pcsr(&b);
    CK_OK(ctx, hisp_context_set_option(ctx, "threads", "1"));
    perturb(ctx, A, 10, seed, &c);
    CK_OK(ctx, hisp_context_set_option(ctx, "threads", "0"));
    CK(hash_pcsr(&c) == h);
    hisp_matrix_destroy(&c.M);
    for (int f = 0; f < 3; f++) {
        hisp_format fmt = f == 0   ? HISP_FORMAT_COO
                          : f == 1 ? HISP_FORMAT_CSC
                                   : HISP_FORMAT_HISPARSE;
        CK_OK(ctx, hisp_matrix_duplicate(A, fmt, &C));
        perturb(ctx, C, 10, seed, &c);
        CKM(hash_pcsr(&c) == h, "from %s: another B", hisp_format_name(fmt));
        hisp_matrix_destroy(&c.M);
        hisp_matrix_destroy(&C);
    }
    /* A^T: the CSC arrays read as CSR, and a transposed HiSparse matrix */
    CK_OK(ctx, hisp_matrix_duplicate(A, HISP_FORMAT_CSC, &T));
    CK_OK(ctx, hisp_matrix_transpose(T));
    CK_OK(ctx, hisp_matrix_duplicate(A, HISP_FORMAT_HISPARSE, &H));
    CK_OK(ctx, hisp_matrix_duplicate(H, HISP_FORMAT_HISPARSE, &HT));
    CK_OK(ctx, hisp_matrix_transpose(HT));
    perturb(ctx, T, 10, seed, &c);
    pcsr d;
    perturb(ctx, HT, 10, seed, &d);
    CK(hash_pcsr(&c) == hash_pcsr(&d));
    CK(hash_pcsr(&c) != h);
    hisp_matrix_destroy(&c.M);
    hisp_matrix_destroy(&d.M);
    hisp_matrix_destroy(&b.M);
    hisp_matrix_destroy(&T);
    hisp_matrix_destroy(&H);
    hisp_matrix_destroy(&HT);
    hisp_matrix_destroy(&A);

    /* golden: poisson2d 30^2, sigma 10 and 1000 (both samplers), seed 7 */
    static const uint64_t golden[2] = {0xa6a94a1c29e0db64ull, 0x25e50243471791afull};
    const double sig[2] = {10, 1000};
    bool print = getenv("HISP_GEN_PRINT_HASHES") != NULL;
    A = poisson2d(ctx, 30, HISP_F64);
    for (int g = 0; g < 2; g++) {
        perturb(ctx, A, sig[g], 7, &b);
        if (print)
            printf("  golden perturb sigma %g: 0x%016llxull\n", sig[g],
                   (unsigned long long)hash_pcsr(&b));
        else if (golden[g])
            CKM(hash_pcsr(&b) == golden[g], "perturb sigma %g: output changed", sig[g]);
        hisp_matrix_destroy(&b.M);
    }
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

START_TEST(test_perturb_edges_and_errors)
{
    hisp_context ctx = new_ctx();
    /* empty matrices, one cell, a single row */
    int64_t zp[6] = {0}, one[2] = {0, 1};
    int32_t c0 = 0;
    hisp_matrix A = NULL;
    pcsr b;
    CK_OK(ctx, hisp_matrix_create_csr(ctx, HISP_F64, 0, 0, zp, NULL, NULL, &A));
    perturb(ctx, A, 10, 1, &b);
    CK(b.nnz == 0 && b.nrows == 0);
    hisp_matrix_destroy(&b.M);
    hisp_matrix_destroy(&A);
    CK_OK(ctx, hisp_matrix_create_csr(ctx, HISP_F32, 5, 3, zp, NULL, NULL, &A));
    perturb(ctx, A, 10, 1, &b);
    CK(b.nnz == 0 && b.nrows == 5 && b.ncols == 3);
    hisp_matrix_destroy(&b.M);
    hisp_matrix_destroy(&A);
    CK_OK(ctx, hisp_matrix_create_csr(ctx, HISP_F64, 1, 1, one, &c0, NULL, &A));
    perturb(ctx, A, 10, 1, &b); /* the only cell: redrawn until 0 */
    CK(b.nnz == 1 && b.col[0] == 0);
    hisp_matrix_destroy(&b.M);
    perturb(ctx, A, 1e12, 1, &b);
    CK(b.nnz == 1 && b.col[0] == 0);
    hisp_matrix_destroy(&b.M);

    /* errors */
    hisp_matrix B = NULL;
    const double bad[] = {-1, NAN, INFINITY, -INFINITY};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        CK(hisp_matrix_perturb(A, bad[k], 1, &B) == HISP_ERR_INVALID_ARGUMENT);
        ck_assert_ptr_null(B);
        hisp_error_info e;
        CK_OK(ctx, hisp_context_last_error(ctx, &e));
        CKM(strstr(e.message, "sigma") != NULL, "message '%s'", e.message);
    }
    CK(hisp_matrix_perturb(A, 1, 1, NULL) == HISP_ERR_INVALID_ARGUMENT);
    CK(hisp_matrix_perturb(NULL, 1, 1, &B) == HISP_ERR_INVALID_HANDLE);
    hisp_matrix_destroy(&A);
    float cv[2] = {1, 2};
    CK_OK(ctx, hisp_matrix_create_csr(ctx, HISP_C32, 1, 1, one, &c0, cv, &A));
    CK(hisp_matrix_perturb(A, 1, 1, &B) == HISP_ERR_UNSUPPORTED);
    ck_assert_ptr_null(B);
    hisp_error_info e;
    CK_OK(ctx, hisp_context_last_error(ctx, &e));
    CKM(strstr(e.message, "c32") && strstr(e.message, "not supported"), "message '%s'", e.message);
    hisp_matrix_destroy(&A);

    /* every allocation failing in turn: a clean status, nothing leaked */
    A = poisson2d(ctx, 20, HISP_F64);
    for (long f = 1; f <= 20; f++) {
        B = NULL;
        hispi_alloc_fail_after(f);
        hisp_status s = hisp_matrix_perturb(A, 10, 3, &B);
        hispi_alloc_fail_after(0);
        if (s == HISP_SUCCESS) {
            ck_assert_ptr_nonnull(B);
            hisp_matrix_destroy(&B);
        } else {
            CK(s == HISP_ERR_OUT_OF_HOST_MEMORY);
            ck_assert_ptr_null(B);
        }
    }
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

Suite *suite_gen(void)
{
    Suite *s = suite_create("gen");
    TCase *tc = test_tcase(s, "generators", 120);
    tcase_add_test(tc, test_names);
    tcase_add_test(tc, test_poisson);
    tcase_add_test(tc, test_diffusion);
    tcase_add_test(tc, test_banded);
    tcase_add_test(tc, test_random);
    tcase_add_test(tc, test_rmat);
    tcase_add_test(tc, test_dense);
    tcase_add_test(tc, test_circuit);
    tcase_add_test(tc, test_blockdiag);
    tcase_add_test(tc, test_empty);
    tcase_add_test(tc, test_determinism);
    tcase_add_test(tc, test_threads_do_not_matter);
    tcase_add_test(tc, test_bad_params);
    tcase_add_test(tc, test_out_of_memory);
    tcase_add_test(tc, test_smoke_large);
    TCase *tp = test_tcase(s, "perturb", 120);
    tcase_add_test(tp, test_perturb_basic);
    tcase_add_test(tp, test_perturb_types);
    tcase_add_test(tp, test_perturb_offsets);
    tcase_add_test(tp, test_perturb_sigma_limits);
    tcase_add_test(tp, test_perturb_formats);
    tcase_add_test(tp, test_perturb_edges_and_errors);
    return s;
}
