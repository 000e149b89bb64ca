/* MSREP partial formats (Chen et al.): nnz-balanced pCSR / pCSC / pCOO cut
 * points, local pointers, the row-block and column-block baselines, the two
 * merges and the host reference of the whole scheme. No nonzero is copied:
 * a part is a range of the source arrays plus its local pointers. */
#include "hispi_msrep.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const part_names[HISP_PART_COUNT] = {"rowblock", "colblock", "pcsr", "pcsc",
                                                        "pcoo"};

const char *hisp_partition_name(hisp_partition_kind k)
{
    return (int)k >= 0 && k < HISP_PART_COUNT ? part_names[k] : "invalid";
}

hisp_status hisp_partition_from_name(const char *name, hisp_partition_kind *k)
{
    if (!name || !k) return HISP_ERR_INVALID_ARGUMENT;
    for (int i = 0; i < HISP_PART_COUNT; i++)
        if (strcasecmp(name, part_names[i]) == 0) {
            *k = (hisp_partition_kind)i;
            return HISP_SUCCESS;
        }
    return HISP_ERR_INVALID_ARGUMENT;
}

static bool column_kind(hisp_partition_kind k)
{
    return k == HISP_PART_COLBLOCK || k == HISP_PART_PCSC;
}

/* ---- sources ------------------------------------------------------------ */

void hispi_msrep_source_free(hispi_msrep_src *src)
{
    if (src->has_tmp) hispi_sparse_free(&src->tmp);
    free(src->tmp_rows);
    memset(src, 0, sizeof *src);
}

static hisp_status temp_copy(hisp_matrix A, hisp_format f, hispi_msrep_src *src)
{
    hisp_context ctx = A->ctx;
    if (!hispi_sparse_family(A->host.format) &&
        f != HISP_FORMAT_CSR) { /* its own form converts to CSR, then on */
        hispi_sparse csr;
        HISPI_TRY(hispi_matrix_sparse_copy(A, HISP_FORMAT_CSR, &csr));
        hisp_status s = hispi_sparse_convert(ctx, &csr, f, &src->tmp);
        hispi_sparse_free(&csr);
        HISPI_TRY(s);
    } else {
        HISPI_TRY(hispi_matrix_sparse_copy(A, f, &src->tmp));
    }
    src->has_tmp = true;
    return HISP_SUCCESS;
}

hisp_status hispi_msrep_source(hisp_matrix A, hisp_partition_kind kind, hispi_msrep_src *src)
{
    memset(src, 0, sizeof *src);
    hisp_context ctx = A->ctx;
    const hispi_sparse *h = &A->host;
    src->type = h->type;
    src->columns = column_kind(kind);
    src->nrows = src->columns ? h->ncols : h->nrows;
    src->ncols = src->columns ? h->nrows : h->ncols;
    src->nnz = h->nnz;
    const hispi_sparse *s = h;
    hisp_status st = HISP_SUCCESS;
    if (kind == HISP_PART_PCOO) {
        bool coo = h->format == HISP_FORMAT_COO && h->sorted;
        bool csr = h->format == HISP_FORMAT_CSR;
        if (!coo && !csr) {
            st = temp_copy(A, HISP_FORMAT_COO, src);
            s = &src->tmp;
            coo = true;
        }
        if (!st && coo) {
            src->rowidx = s->rowind;
        } else if (!st) { /* CSR: only the row indices are expanded */
            st = hispi_alloc(ctx, (size_t)s->nnz, sizeof(int32_t), (void **)&src->tmp_rows);
            for (int64_t i = 0; !st && i < s->nrows; i++)
                for (int64_t k = s->rowptr[i]; k < s->rowptr[i + 1]; k++)
                    src->tmp_rows[k] = (int32_t)i;
            src->rowidx = src->tmp_rows;
        }
        if (!st) {
            src->idx = s->colind;
            src->val = s->val;
        }
    } else {
        hisp_format f = src->columns ? HISP_FORMAT_CSC : HISP_FORMAT_CSR;
        if (h->format != f) {
            st = temp_copy(A, f, src);
            s = &src->tmp;
        }
        if (!st) {
            src->ptr = src->columns ? s->colptr : s->rowptr;
            src->idx = src->columns ? s->rowind : s->colind;
            src->val = s->val;
        }
    }
    if (!st) src->nnz = s->nnz; /* duplicates of an unsorted COO were summed */
    if (st) hispi_msrep_source_free(src);
    return st;
}

/* ---- cut points --------------------------------------------------------- */

/* The row (column) of nonzero k of an nnz-balanced kind. */
static int64_t row_at(const hispi_msrep_src *src, hisp_partition_kind kind, int64_t k)
{
    return kind == HISP_PART_PCOO ? src->rowidx[k] : hispi_row_of(src->ptr, src->nrows, k);
}

/* The first cut k of part p of np under the cost k + w * row(k) (nondecreasing
 * in k; nnz + w * n at k = nnz): the smallest k whose cost reaches the
 * p-th share, by bisection. */
static int64_t weighted_cut(const hispi_msrep_src *src, hisp_partition_kind kind, double w, int p,
                            int np)
{
    int64_t nnz = src->nnz;
    if (p <= 0) return 0;
    if (p >= np) return nnz;
    double target = ((double)nnz + w * (double)src->nrows) * p / np;
    int64_t lo = 0, hi = nnz; /* cost(lo - 1) < target <= cost(hi), cost(nnz) the total */
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if ((double)mid + w * (double)row_at(src, kind, mid) >= target)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Nonzeros [*rs, *re) of row r (pcoo: by bisection over the sorted row
 * indices). */
static void row_range(const hispi_msrep_src *src, hisp_partition_kind kind, int64_t r, int64_t *rs,
                      int64_t *re)
{
    if (kind != HISP_PART_PCOO) {
        *rs = src->ptr[r];
        *re = src->ptr[r + 1];
        return;
    }
    for (int end = 0; end < 2; end++) { /* the first k with rowidx[k] >= r (end: > r) */
        int64_t lo = 0, hi = src->nnz;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (src->rowidx[mid] < r + end)
                lo = mid + 1;
            else
                hi = mid;
        }
        *(end ? re : rs) = lo;
    }
}

/* Cut p of np of an nnz-balanced kind: at nnz * p / np, or where
 * nnz + row_cost * rows reaches its share; align moves a cut inside a short
 * row (at most nnz / (64 np) entries) to that row's nearer end, so that no
 * part shares it, and leaves long rows split. */
static int64_t cut_at(const hispi_msrep_src *src, hisp_partition_kind kind, int p, int np,
                      double row_cost, bool align)
{
    int64_t nnz = src->nnz;
    int64_t k =
        row_cost > 0 ? weighted_cut(src, kind, row_cost, p, np) : (int64_t)((__int128)nnz * p / np);
    if (!align || k <= 0 || k >= nnz) return k;
    int64_t rs, re;
    row_range(src, kind, row_at(src, kind, k), &rs, &re);
    if (rs < k && re - rs <= nnz / (64 * (int64_t)np)) k = k - rs <= re - k ? rs : re;
    return k;
}

hisp_status hispi_msrep_split(hisp_context ctx, const hispi_msrep_src *src,
                              hisp_partition_kind kind, int np, double row_cost, bool align,
                              hisp_part *parts)
{
    if (np < 1) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "need at least one part");
    int64_t n = src->nrows, nnz = src->nnz;
    for (int p = 0; p < np; p++) {
        hisp_part *q = &parts[p];
        memset(q, 0, sizeof *q);
        if (kind == HISP_PART_ROWBLOCK || kind == HISP_PART_COLBLOCK) {
            /* equal row counts: a part owns its rows even when they are empty */
            q->start = (int64_t)((__int128)n * p / np);
            q->end = (int64_t)((__int128)n * (p + 1) / np);
            q->nnz_begin = src->ptr[q->start];
            q->nnz_end = src->ptr[q->end];
            continue;
        }
        int64_t k0 = cut_at(src, kind, p, np, row_cost, align),
                k1 = cut_at(src, kind, p + 1, np, row_cost, align);
        q->nnz_begin = k0;
        q->nnz_end = k1;
        if (k0 == k1) { /* empty part: no rows */
            int64_t r = kind == HISP_PART_PCOO ? (k0 < nnz ? src->rowidx[k0] : n)
                                               : (k0 < nnz ? hispi_row_of(src->ptr, n, k0) : n);
            q->start = q->end = r;
            continue;
        }
        if (kind == HISP_PART_PCOO) { /* rows straight from the row indices */
            q->start = src->rowidx[k0];
            q->end = (int64_t)src->rowidx[k1 - 1] + 1;
            q->shared_first = k0 > 0 && src->rowidx[k0 - 1] == src->rowidx[k0];
        } else { /* pCSR / pCSC: binary search over the pointers */
            q->start = hispi_row_of(src->ptr, n, k0);
            q->end = hispi_row_of(src->ptr, n, k1 - 1) + 1;
            q->shared_first = src->ptr[q->start] < k0;
        }
    }
    return HISP_SUCCESS;
}

hisp_status hispi_msrep_local_ptr(hisp_context ctx, const hispi_msrep_src *src,
                                  hisp_partition_kind kind, const hisp_part *p, int64_t **out)
{
    int64_t rows = p->end - p->start, k0 = p->nnz_begin, k1 = p->nnz_end;
    int64_t *l = NULL;
    HISPI_TRY(hispi_alloc(ctx, (size_t)rows + 1, sizeof *l, (void **)&l));
    if (kind == HISP_PART_PCOO) { /* count the rows, then prefix sums */
        memset(l, 0, ((size_t)rows + 1) * sizeof *l);
        for (int64_t k = k0; k < k1; k++)
            l[src->rowidx[k] - p->start + 1]++;
        for (int64_t i = 0; i < rows; i++)
            l[i + 1] += l[i];
    } else { /* the global pointers clamped to [k0, k1] */
        for (int64_t i = 0; i <= rows; i++) {
            int64_t v = src->ptr[p->start + i];
            l[i] = (v < k0 ? k0 : v > k1 ? k1 : v) - k0;
        }
    }
    *out = l;
    return HISP_SUCCESS;
}

hisp_status hisp_matrix_partition(hisp_matrix A, hisp_partition_kind kind, int nparts,
                                  hisp_part *parts)
{
    if (!hispi_mat_ok(A)) return HISP_ERR_INVALID_HANDLE;
    HISPI_TRY(hispi_matrix_need_host(A));
    if ((int)kind < 0 || kind >= HISP_PART_COUNT)
        return hispi_fail(A->ctx, HISP_ERR_INVALID_ARGUMENT, "unknown partition kind %d",
                          (int)kind);
    if (nparts < 1 || nparts > 4096 || !parts)
        return hispi_fail(A->ctx, HISP_ERR_INVALID_ARGUMENT, "need 1..4096 parts and an array");
    hispi_msrep_src src;
    HISPI_TRY(hispi_msrep_source(A, kind, &src));
    hisp_status s = hispi_msrep_split(A->ctx, &src, kind, nparts, 0.0, false, parts);
    hispi_msrep_source_free(&src);
    return s;
}

/* ---- merges ------------------------------------------------------------- */

#define MERGE_ROWS(T)                                                                              \
    static void merge_rows_##T(int np, const hisp_part *parts, void *const *ybuf, T beta, T *y,    \
                               int64_t r0, int64_t r1)                                             \
    {                                                                                              \
        int64_t cur = r0; /* rows below cur are done */                                            \
        for (int p = 0; p < np; p++) {                                                             \
            const hisp_part *q = &parts[p];                                                        \
            const T *b = ybuf[p];                                                                  \
            if (q->start >= q->end || !b) continue;                                                \
            int64_t s = q->start > r0 ? q->start : r0, e = q->end < r1 ? q->end : r1;              \
            if (s >= e) continue;                                                                  \
            for (int64_t i = cur; i < s; i++) /* rows no part holds */                             \
                y[i] = beta == 0 ? (T)0 : beta * y[i];                                             \
            int64_t i = s;                                                                         \
            if (i == q->start && q->shared_first) { /* the row began in an earlier part */         \
                y[i] += b[0];                                                                      \
                i++;                                                                               \
            }                                                                                      \
            if (beta == 0)                                                                         \
                memcpy(y + i, b + (i - q->start), (size_t)(e - i) * sizeof(T));                    \
            else                                                                                   \
                for (; i < e; i++)                                                                 \
                    y[i] = beta * y[i] + b[i - q->start];                                          \
            if (e > cur) cur = e;                                                                  \
        }                                                                                          \
        for (int64_t i = cur; i < r1; i++)                                                         \
            y[i] = beta == 0 ? (T)0 : beta * y[i];                                                 \
    }                                                                                              \
    static void merge_sum_##T(int np, void *const *ybuf, T beta, T *y, int64_t r0, int64_t r1)     \
    {                                                                                              \
        int first = 1;                                                                             \
        for (int p = 0; p < np; p++) {                                                             \
            const T *b = ybuf[p];                                                                  \
            if (!b) continue;                                                                      \
            if (first && beta == 0)                                                                \
                memcpy(y + r0, b + r0, (size_t)(r1 - r0) * sizeof(T));                             \
            else if (first)                                                                        \
                for (int64_t i = r0; i < r1; i++)                                                  \
                    y[i] = beta * y[i] + b[i];                                                     \
            else                                                                                   \
                for (int64_t i = r0; i < r1; i++)                                                  \
                    y[i] += b[i];                                                                  \
            first = 0;                                                                             \
        }                                                                                          \
        if (first)                                                                                 \
            for (int64_t i = r0; i < r1; i++)                                                      \
                y[i] = beta == 0 ? (T)0 : beta * y[i];                                             \
    }
MERGE_ROWS(float)
MERGE_ROWS(double)

void hispi_msrep_merge_rows(hisp_type t, int np, const hisp_part *parts, void *const *ybuf,
                            double beta, void *y, int64_t r0, int64_t r1)
{
    if (t == HISP_F32)
        merge_rows_float(np, parts, ybuf, (float)beta, y, r0, r1);
    else
        merge_rows_double(np, parts, ybuf, beta, y, r0, r1);
}

void hispi_msrep_merge_sum(hisp_type t, int np, void *const *ybuf, double beta, void *y, int64_t r0,
                           int64_t r1)
{
    if (t == HISP_F32)
        merge_sum_float(np, ybuf, (float)beta, y, r0, r1);
    else
        merge_sum_double(np, ybuf, beta, y, r0, r1);
}

/* ---- host reference ----------------------------------------------------- */

hisp_status hispi_msrep_ref(hisp_matrix A, hisp_partition_kind kind, int np, hisp_op op,
                            double alpha, const void *x, double beta, void *y)
{
    hisp_context ctx = A->ctx;
    if (A->host.type != HISP_F32 && A->host.type != HISP_F64)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "MSREP SpMV needs f32 or f64");
    hispi_msrep_src src;
    HISPI_TRY(hispi_msrep_source(A, kind, &src));
    size_t es = hisp_type_size(src.type);
    /* device op: N on the view's rows gives row segments, T gives partial
     * vectors of the whole output */
    hisp_op dop = (op == HISP_OP_T) != src.columns ? HISP_OP_T : HISP_OP_N;
    int64_t m = dop == HISP_OP_N ? src.nrows : src.ncols;
    hisp_part *parts = NULL;
    void **ybuf = NULL;
    hisp_status s = hispi_calloc(ctx, (size_t)np, sizeof *parts, (void **)&parts);
    if (!s) s = hispi_calloc(ctx, (size_t)np, sizeof *ybuf, (void **)&ybuf);
    if (!s) s = hispi_msrep_split(ctx, &src, kind, np, 0.0, false, parts);
    for (int p = 0; p < np && !s; p++) {
        const hisp_part *q = &parts[p];
        if (q->start >= q->end) continue;
        int64_t *lptr = NULL;
        s = hispi_msrep_local_ptr(ctx, &src, kind, q, &lptr);
        if (s) break;
        int64_t rows = q->end - q->start, len = dop == HISP_OP_N ? rows : m;
        s = hispi_alloc(ctx, (size_t)len, es, &ybuf[p]);
        if (!s) {
            /* the part as a local CSR over the source arrays (no copy) */
            hispi_sparse v = {.format = HISP_FORMAT_CSR,
                              .type = src.type,
                              .nrows = rows,
                              .ncols = src.ncols,
                              .nnz = q->nnz_end - q->nnz_begin,
                              .rowptr = lptr,
                              .colind = (int32_t *)src.idx + q->nnz_begin,
                              .val = (char *)src.val + (size_t)q->nnz_begin * es};
            const void *xp = dop == HISP_OP_N ? x : (const char *)x + (size_t)q->start * es;
            s = hispi_ref_csr_spmv(ctx, &v, dop, alpha, xp, 0.0, ybuf[p]);
        }
        free(lptr);
    }
    if (!s) {
        if (dop == HISP_OP_N)
            hispi_msrep_merge_rows(src.type, np, parts, ybuf, beta, y, 0, m);
        else
            hispi_msrep_merge_sum(src.type, np, ybuf, beta, y, 0, m);
    }
    for (int p = 0; ybuf && p < np; p++)
        free(ybuf[p]);
    free(ybuf);
    free(parts);
    hispi_msrep_source_free(&src);
    return s;
}
