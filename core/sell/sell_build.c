/* SELL-C-sigma host form: built from CSR (hispi_sell.h has the layout),
 * back to CSR, the transposed copy, byte counts. */
#include "sell/hispi_sell.h"

#include <stdlib.h>
#include <string.h>

void hispi_sell_free(hispi_sell *h)
{
    if (!h) return;
    free(h->sptr);
    free(h->perm);
    free(h->len);
    free(h->col);
    free(h->val);
    memset(h, 0, sizeof *h);
}

static hisp_status check_params(hisp_context ctx, int64_t nrows, int64_t ncols, int C, int sigma)
{
    if (C < 1 || C > 1024 || (C & (C - 1)))
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "SELL slice height C = %d: it must be a power of two from 1 to 1024", C);
    if (sigma < 0)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "SELL sort window sigma = %d: it must be at least 1 (0: chosen)", sigma);
    if (nrows < 0 || ncols < 0 || nrows > INT32_MAX || ncols > INT32_MAX)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                          "SELL indexes rows and columns with 32 bits: a %lld x %lld matrix does "
                          "not fit (at most %d each)",
                          (long long)nrows, (long long)ncols, INT32_MAX);
    return HISP_SUCCESS;
}

typedef struct {
    int64_t len;
    int32_t row;
} rowkey;

/* longest first; equal lengths in row order (a stable order) */
static int cmp_rowkey(const void *a, const void *b)
{
    const rowkey *x = a, *y = b;
    if (x->len != y->len) return x->len > y->len ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

/* The permutation (sorted position -> row) of the lengths rowlen: sorted
 * longest first within windows of sigma rows. keys: scratch of
 * min(nrows, sigma) entries. */
static void sort_rows(int64_t nrows, const int64_t *rowlen, int sigma, rowkey *keys, int32_t *perm)
{
    for (int64_t w = 0; w < nrows; w += sigma) {
        int64_t n = nrows - w < sigma ? nrows - w : sigma;
        for (int64_t i = 0; i < n; i++)
            keys[i] = (rowkey){rowlen[w + i], (int32_t)(w + i)};
        if (sigma > 1) qsort(keys, (size_t)n, sizeof *keys, cmp_rowkey);
        for (int64_t i = 0; i < n; i++)
            perm[w + i] = keys[i].row;
    }
}

static int cmp_len_desc(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x < y) - (x > y);
}

/* The padded entry count with windows of sigma rows (tmp: nrows scratch). */
static int64_t padded_count(int64_t nrows, const int64_t *rowlen, int C, int64_t sigma,
                            int64_t *tmp)
{
    memcpy(tmp, rowlen, (size_t)nrows * sizeof *tmp);
    for (int64_t w = 0; w < nrows; w += sigma) {
        int64_t n = nrows - w < sigma ? nrows - w : sigma;
        if (n > 1) qsort(tmp + w, (size_t)n, sizeof *tmp, cmp_len_desc);
    }
    int64_t total = 0; /* at most (nrows + C) * ncols < 2^63 */
    for (int64_t r0 = 0; r0 < nrows; r0 += C) {
        int64_t width = 0;
        for (int64_t r = r0; r < nrows && r < r0 + C; r++)
            if (tmp[r] > width) width = tmp[r];
        total += width * C;
    }
    return total;
}

/* sigma 0: the smallest window of C * 8^k rows (or the whole matrix) whose
 * padding is within 10 % of a sort over the whole matrix. Padding is what a
 * poor window costs (power-law rows spread over slices); a small window
 * keeps a slice's rows, and so their x reads and y writes, close together.
 * Regular matrices stop at sigma = C. */
static hisp_status choose_sigma(hisp_context ctx, int64_t nrows, const int64_t *rowlen, int C,
                                int *sigma)
{
    if (*sigma) return HISP_SUCCESS;
    *sigma = C;
    if (nrows <= C) return HISP_SUCCESS; /* one slice: the order pads nothing */
    int64_t *tmp = NULL;
    HISPI_TRY(hispi_alloc(ctx, (size_t)nrows, sizeof *tmp, (void **)&tmp));
    int64_t best = padded_count(nrows, rowlen, C, nrows, tmp);
    int64_t w = C;
    while (w < nrows && padded_count(nrows, rowlen, C, w, tmp) - best > best / 10)
        w *= 8;
    *sigma = (int)(w < nrows ? w : nrows); /* nrows <= INT32_MAX */
    free(tmp);
    return HISP_SUCCESS;
}

/* The slice pointers of sorted lengths (nslices + 1 of them), refusing a
 * total beyond int64. */
static hisp_status slice_pointers(hisp_context ctx, int64_t nrows, const int64_t *rowlen,
                                  const int32_t *perm, int C, int64_t *sptr)
{
    int64_t nslices = (nrows + C - 1) / C;
    sptr[0] = 0;
    for (int64_t s = 0; s < nslices; s++) {
        int64_t width = 0;
        for (int64_t r = s * C; r < nrows && r < (s + 1) * C; r++)
            if (rowlen[perm[r]] > width) width = rowlen[perm[r]];
        int64_t add = 0;
        if (__builtin_mul_overflow(width, (int64_t)C, &add) ||
            __builtin_add_overflow(sptr[s], add, &sptr[s + 1]))
            return hispi_fail(ctx, HISP_ERR_OUT_OF_HOST_MEMORY,
                              "SELL: the padded entry count passes 2^63 at slice %lld",
                              (long long)s);
    }
    return HISP_SUCCESS;
}

hisp_status hispi_sell_bytes(hisp_context ctx, int64_t nrows, const int64_t *rowlen, size_t es,
                             int C, int sigma, uint64_t *bytes)
{
    HISPI_TRY(check_params(ctx, nrows, 0, C, sigma));
    HISPI_TRY(choose_sigma(ctx, nrows, rowlen, C, &sigma));
    int64_t nslices = (nrows + C - 1) / C;
    rowkey *keys = NULL;
    int32_t *perm = NULL;
    int64_t *sptr = NULL;
    int64_t nk = nrows < sigma ? nrows : sigma;
    hisp_status s = hispi_alloc(ctx, (size_t)nk, sizeof *keys, (void **)&keys);
    if (!s) s = hispi_alloc(ctx, (size_t)nrows, sizeof *perm, (void **)&perm);
    if (!s) s = hispi_alloc(ctx, (size_t)nslices + 1, sizeof *sptr, (void **)&sptr);
    if (!s) {
        sort_rows(nrows, rowlen, sigma, keys, perm);
        s = slice_pointers(ctx, nrows, rowlen, perm, C, sptr);
    }
    if (!s) {
        /* padded * (es + 4) + pointers + permutation: a count that passes
         * 2^64 is refused */
        uint64_t b = 0, e = 0;
        bool over = __builtin_mul_overflow((uint64_t)sptr[nslices], (uint64_t)es + 4, &b) ||
                    __builtin_add_overflow(b, (uint64_t)(nslices + 1) * 8, &e) ||
                    __builtin_add_overflow(e, (uint64_t)nrows * 4, &b);
        if (over)
            s = hispi_fail(ctx, HISP_ERR_OUT_OF_HOST_MEMORY, "SELL: more than 2^64 bytes");
        else
            *bytes = b;
    }
    free(keys);
    free(perm);
    free(sptr);
    return s;
}

hisp_status hispi_sell_build_csr(hisp_context ctx, hisp_type type, int64_t nrows, int64_t ncols,
                                 const int64_t *ptr, const int32_t *ind, const void *val, int C,
                                 int sigma, hispi_sell *out)
{
    memset(out, 0, sizeof *out);
    if (type != HISP_F32 && type != HISP_F64)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "SELL stores f32 and f64 entries, not %s",
                          hisp_type_name(type));
    HISPI_TRY(check_params(ctx, nrows, ncols, C, sigma));
    hispi_sell h;
    memset(&h, 0, sizeof h);
    h.type = type;
    h.nrows = nrows;
    h.ncols = ncols;
    h.nnz = nrows ? ptr[nrows] : 0;
    h.C = C;
    h.nslices = (nrows + C - 1) / C;
    size_t es = hisp_type_size(type);
    int64_t *rowlen = NULL;
    rowkey *keys = NULL;
    hisp_status s = hispi_alloc(ctx, (size_t)nrows, sizeof *rowlen, (void **)&rowlen);
    if (!s) {
        for (int64_t i = 0; i < nrows; i++)
            rowlen[i] = ptr[i + 1] - ptr[i];
        s = choose_sigma(ctx, nrows, rowlen, C, &sigma);
    }
    h.sigma = sigma;
    int64_t nk = nrows < sigma ? nrows : sigma;
    if (!s) s = hispi_alloc(ctx, (size_t)nk, sizeof *keys, (void **)&keys);
    if (!s) s = hispi_alloc(ctx, (size_t)nrows, sizeof *h.perm, (void **)&h.perm);
    if (!s) s = hispi_alloc(ctx, (size_t)nrows, sizeof *h.len, (void **)&h.len);
    if (!s) s = hispi_alloc(ctx, (size_t)h.nslices + 1, sizeof *h.sptr, (void **)&h.sptr);
    if (!s) {
        sort_rows(nrows, rowlen, sigma, keys, h.perm);
        for (int64_t r = 0; r < nrows; r++)
            h.len[r] = (int32_t)rowlen[h.perm[r]]; /* <= ncols: a row has no duplicates */
        s = slice_pointers(ctx, nrows, rowlen, h.perm, C, h.sptr);
    }
    if (!s) {
        h.padded = h.sptr[h.nslices];
        s = hispi_alloc(ctx, (size_t)h.padded, sizeof *h.col, (void **)&h.col);
    }
    if (!s) s = hispi_alloc(ctx, (size_t)h.padded, es, &h.val);
    free(rowlen);
    free(keys);
    if (s) {
        hispi_sell_free(&h);
        return s;
    }
    for (int64_t sl = 0; sl < h.nslices; sl++) {
        int64_t b = h.sptr[sl], width = (h.sptr[sl + 1] - b) / C;
        for (int i = 0; i < C; i++) {
            int64_t r = sl * C + i;
            int64_t L = r < nrows ? h.len[r] : 0;
            int64_t p = r < nrows ? ptr[h.perm[r]] : 0;
            for (int64_t k = 0; k < L; k++) {
                h.col[b + k * C + i] = ind[p + k];
                memcpy((char *)h.val + (size_t)(b + k * C + i) * es,
                       (const char *)val + (size_t)(p + k) * es, es);
            }
            int32_t pad = L ? ind[p + L - 1] : 0;
            for (int64_t k = L; k < width; k++) {
                h.col[b + k * C + i] = pad;
                memset((char *)h.val + (size_t)(b + k * C + i) * es, 0, es);
            }
        }
    }
    *out = h;
    return HISP_SUCCESS;
}

hisp_status hispi_sell_build(hisp_context ctx, const hispi_sparse *s, int C, int sigma,
                             hispi_sell *out)
{
    memset(out, 0, sizeof *out);
    if (s->type != HISP_F32 && s->type != HISP_F64)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "SELL stores f32 and f64 entries, not %s",
                          hisp_type_name(s->type));
    if (s->format == HISP_FORMAT_CSR)
        return hispi_sell_build_csr(ctx, s->type, s->nrows, s->ncols, s->rowptr, s->colind, s->val,
                                    C, sigma, out);
    if (s->format != HISP_FORMAT_COO && s->format != HISP_FORMAT_CSC)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "SELL is built from COO, CSR or CSC storage (format %d given)",
                          (int)s->format);
    HISPI_TRY(check_params(ctx, s->nrows, s->ncols, C, sigma)); /* before converting */
    hispi_sparse csr;
    HISPI_TRY(hispi_sparse_convert(ctx, s, HISP_FORMAT_CSR, &csr));
    hisp_status st = hispi_sell_build_csr(ctx, csr.type, csr.nrows, csr.ncols, csr.rowptr,
                                          csr.colind, csr.val, C, sigma, out);
    hispi_sparse_free(&csr);
    return st;
}

hisp_status hispi_sell_to_csr(hisp_context ctx, const hispi_sell *h, hispi_sparse *out)
{
    hispi_sparse c;
    HISPI_TRY(hispi_sparse_alloc(ctx, &c, HISP_FORMAT_CSR, h->type, h->nrows, h->ncols, h->nnz));
    size_t es = hisp_type_size(h->type);
    /* row perm[r] has len[r] entries: pointers first, then the entries */
    for (int64_t r = 0; r < h->nrows; r++)
        c.rowptr[h->perm[r] + 1] = h->len[r];
    c.rowptr[0] = 0;
    for (int64_t i = 0; i < h->nrows; i++)
        c.rowptr[i + 1] += c.rowptr[i];
    for (int64_t r = 0; r < h->nrows; r++) {
        int64_t sl = r / h->C, i = r % h->C, b = h->sptr[sl], p = c.rowptr[h->perm[r]];
        for (int64_t k = 0; k < h->len[r]; k++) {
            c.colind[p + k] = h->col[b + k * h->C + i];
            memcpy((char *)c.val + (size_t)(p + k) * es,
                   (const char *)h->val + (size_t)(b + k * h->C + i) * es, es);
        }
    }
    c.sorted = true;
    *out = c;
    return HISP_SUCCESS;
}

hisp_status hispi_sell_build_transposed(hisp_context ctx, const hispi_sell *a, hispi_sell *out)
{
    memset(out, 0, sizeof *out);
    hispi_sparse csr, csc;
    HISPI_TRY(hispi_sell_to_csr(ctx, a, &csr));
    hisp_status s = hispi_sparse_convert(ctx, &csr, HISP_FORMAT_CSC, &csc);
    hispi_sparse_free(&csr);
    HISPI_TRY(s);
    /* A's CSC is A^T's CSR */
    s = hispi_sell_build_csr(ctx, csc.type, csc.ncols, csc.nrows, csc.colptr, csc.rowind, csc.val,
                             a->C, 0, out); /* A^T's rows choose their own window */
    hispi_sparse_free(&csc);
    return s;
}
