/* Host sparse storage: allocation, validation and COO/CSR/CSC conversions.
 * Every conversion goes through a stable counting sort, O(nnz + n), so that
 * tens of millions of entries convert in well under a second per pass. */
#include "hispi.h"

#include <stdlib.h>
#include <string.h>

void hispi_sparse_free(hispi_sparse *s)
{
    free(s->rowptr);
    free(s->colptr);
    free(s->rowind);
    free(s->colind);
    free(s->val);
    s->rowptr = s->colptr = NULL;
    s->rowind = s->colind = NULL;
    s->val = NULL;
}

hisp_status hispi_sparse_alloc(hisp_context ctx, hispi_sparse *s, hisp_format f, hisp_type t,
                               int64_t nrows, int64_t ncols, int64_t nnz)
{
    memset(s, 0, sizeof *s);
    if (!hispi_type_valid(t))
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "invalid entry type %d", (int)t);
    if (nrows < 0 || ncols < 0 || nnz < 0 || nrows > INT32_MAX || ncols > INT32_MAX)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "invalid size %lld x %lld with %lld entries (dimensions must be "
                          "0..2^31-1)",
                          (long long)nrows, (long long)ncols, (long long)nnz);
    s->format = f;
    s->type = t;
    s->nrows = nrows;
    s->ncols = ncols;
    s->nnz = nnz;
    s->sorted = true;
    size_t n = (size_t)nnz;
    hisp_status st = hispi_alloc(ctx, n, hisp_type_size(t), &s->val);
    if (st == HISP_SUCCESS && f != HISP_FORMAT_CSR)
        st = hispi_alloc(ctx, n, sizeof(int32_t), (void **)&s->rowind);
    if (st == HISP_SUCCESS && f != HISP_FORMAT_CSC)
        st = hispi_alloc(ctx, n, sizeof(int32_t), (void **)&s->colind);
    if (st == HISP_SUCCESS && f == HISP_FORMAT_CSR)
        st = hispi_calloc(ctx, (size_t)nrows + 1, sizeof(int64_t), (void **)&s->rowptr);
    if (st == HISP_SUCCESS && f == HISP_FORMAT_CSC)
        st = hispi_calloc(ctx, (size_t)ncols + 1, sizeof(int64_t), (void **)&s->colptr);
    if (st != HISP_SUCCESS) hispi_sparse_free(s);
    return st;
}

static hisp_status check_ptr(hisp_context ctx, const int64_t *ptr, int64_t n, int64_t nnz,
                             const char *what)
{
    if (ptr[0] != 0)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "%s[0] is %lld, must be 0", what,
                          (long long)ptr[0]);
    for (int64_t i = 0; i < n; i++)
        if (ptr[i + 1] < ptr[i])
            return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "%s decreases at %lld", what,
                              (long long)i);
    if (ptr[n] != nnz)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "%s[%lld] = %lld, expected nnz %lld",
                          what, (long long)n, (long long)ptr[n], (long long)nnz);
    return HISP_SUCCESS;
}

static hisp_status check_idx(hisp_context ctx, const int32_t *idx, int64_t nnz, int64_t bound,
                             const char *what)
{
    for (int64_t k = 0; k < nnz; k++)
        if (idx[k] < 0 || idx[k] >= bound)
            return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                              "%s index %d at entry %lld is outside 0..%lld", what, idx[k],
                              (long long)k, (long long)bound - 1);
    return HISP_SUCCESS;
}

hisp_status hispi_sparse_validate(hisp_context ctx, const hispi_sparse *s)
{
    if (s->rowptr) HISPI_TRY(check_ptr(ctx, s->rowptr, s->nrows, s->nnz, "row pointer"));
    if (s->colptr) HISPI_TRY(check_ptr(ctx, s->colptr, s->ncols, s->nnz, "column pointer"));
    if (s->rowind) HISPI_TRY(check_idx(ctx, s->rowind, s->nnz, s->nrows, "row"));
    if (s->colind) HISPI_TRY(check_idx(ctx, s->colind, s->nnz, s->ncols, "column"));
    return HISP_SUCCESS;
}

/* ---- entry moves and sums, typed for speed ------------------------------ */

static inline void copy_entry(size_t es, void *dst, int64_t i, const void *src, int64_t j)
{
    if (es == 4)
        ((uint32_t *)dst)[i] = ((const uint32_t *)src)[j];
    else if (es == 8)
        ((uint64_t *)dst)[i] = ((const uint64_t *)src)[j];
    else
        memcpy((char *)dst + (size_t)i * es, (const char *)src + (size_t)j * es, es);
}

/* dst[i] += src[j], component-wise (right for every entry type). */
static inline void add_entry(hisp_type t, void *dst, int64_t i, const void *src, int64_t j)
{
    int comps = hisp_type_components(t);
    if (hispi_type_scalar_size(t) == 4) {
        float *d = (float *)dst + i * comps;
        const float *s = (const float *)src + j * comps;
        for (int c = 0; c < comps; c++)
            d[c] += s[c];
    } else {
        double *d = (double *)dst + i * comps;
        const double *s = (const double *)src + j * comps;
        for (int c = 0; c < comps; c++)
            d[c] += s[c];
    }
}

/* Stable counting sort of the permutation `perm` (length nnz) by key[perm],
 * keys in 0..nkeys-1; writes the bucket pointer (nkeys+1) when ptr != NULL. */
static hisp_status counting_sort(hisp_context ctx, const int32_t *key, int64_t nkeys, int64_t nnz,
                                 const int64_t *perm_in, int64_t *perm_out, int64_t *ptr)
{
    int64_t *count = ptr;
    if (!count)
        HISPI_TRY(hispi_calloc(ctx, (size_t)nkeys + 1, sizeof *count, (void **)&count));
    else
        memset(count, 0, ((size_t)nkeys + 1) * sizeof *count);
    for (int64_t k = 0; k < nnz; k++)
        count[key[perm_in ? perm_in[k] : k] + 1]++;
    for (int64_t i = 0; i < nkeys; i++)
        count[i + 1] += count[i];
    /* scatter using a running cursor: count[i] becomes the end of bucket i,
     * then shift back so that ptr holds starts */
    for (int64_t k = 0; k < nnz; k++) {
        int64_t p = perm_in ? perm_in[k] : k;
        perm_out[count[key[p]]++] = p;
    }
    if (ptr) {
        memmove(ptr + 1, ptr, (size_t)nkeys * sizeof *ptr);
        ptr[0] = 0;
    } else {
        free(count);
    }
    return HISP_SUCCESS;
}

/* Build compressed storage (major = rows for CSR, cols for CSC) from
 * unsorted (major, minor, val) triples; duplicates summed. */
static hisp_status compress(hisp_context ctx, hisp_type t, int64_t nmajor, int64_t nminor,
                            int64_t nnz, const int32_t *major, const int32_t *minor,
                            const void *val, int64_t **ptr_out, int32_t **idx_out, void **val_out,
                            int64_t *nnz_out)
{
    size_t es = hisp_type_size(t);
    int64_t *perm1 = NULL, *perm2 = NULL, *ptr = NULL;
    int32_t *idx = NULL;
    void *v = NULL;
    hisp_status s = hispi_alloc(ctx, (size_t)nnz, sizeof *perm1, (void **)&perm1);
    if (!s) s = hispi_alloc(ctx, (size_t)nnz, sizeof *perm2, (void **)&perm2);
    if (!s) s = hispi_calloc(ctx, (size_t)nmajor + 1, sizeof *ptr, (void **)&ptr);
    /* two stable passes: by minor, then by major → sorted major-first */
    if (!s) s = counting_sort(ctx, minor, nminor, nnz, NULL, perm1, NULL);
    if (!s) s = counting_sort(ctx, major, nmajor, nnz, perm1, perm2, ptr);
    free(perm1);
    perm1 = NULL;
    if (!s) s = hispi_alloc(ctx, (size_t)nnz, sizeof *idx, (void **)&idx);
    if (!s) s = hispi_alloc(ctx, (size_t)nnz, es, &v);
    if (s) goto fail;
    /* merge duplicates while copying */
    int64_t out = 0;
    for (int64_t i = 0; i < nmajor; i++) {
        int64_t start = out;
        for (int64_t k = ptr[i]; k < ptr[i + 1]; k++) {
            int64_t p = perm2[k];
            if (out > start && idx[out - 1] == minor[p]) {
                add_entry(t, v, out - 1, val, p);
            } else {
                idx[out] = minor[p];
                copy_entry(es, v, out, val, p);
                out++;
            }
        }
        ptr[i] = start;
    }
    ptr[nmajor] = out;
    free(perm2);
    if (out < nnz) { /* shrink; failure to shrink is harmless */
        void *q = realloc(idx, (size_t)(out ? out : 1) * sizeof *idx);
        if (q) idx = q;
        q = realloc(v, (size_t)(out ? out : 1) * es);
        if (q) v = q;
    }
    *ptr_out = ptr;
    *idx_out = idx;
    *val_out = v;
    *nnz_out = out;
    return HISP_SUCCESS;
fail:
    free(perm1);
    free(perm2);
    free(ptr);
    free(idx);
    free(v);
    return s;
}

/* Expand compressed pointers into explicit major indices. */
static hisp_status expand(hisp_context ctx, const int64_t *ptr, int64_t nmajor, int64_t nnz,
                          int32_t **out)
{
    HISPI_TRY(hispi_alloc(ctx, (size_t)nnz, sizeof **out, (void **)out));
    for (int64_t i = 0; i < nmajor; i++)
        for (int64_t k = ptr[i]; k < ptr[i + 1]; k++)
            (*out)[k] = (int32_t)i;
    return HISP_SUCCESS;
}

hisp_status hispi_sparse_convert(hisp_context ctx, const hispi_sparse *src, hisp_format f,
                                 hispi_sparse *dst)
{
    memset(dst, 0, sizeof *dst);
    dst->format = f;
    dst->type = src->type;
    dst->nrows = src->nrows;
    dst->ncols = src->ncols;
    dst->sorted = true;
    size_t es = hisp_type_size(src->type);

    /* Obtain explicit (row, col) arrays for the source, borrowed or built. */
    int32_t *rows = src->rowind, *cols = src->colind, *tmp = NULL;
    if (src->format == HISP_FORMAT_CSR) {
        HISPI_TRY(expand(ctx, src->rowptr, src->nrows, src->nnz, &tmp));
        rows = tmp;
    } else if (src->format == HISP_FORMAT_CSC) {
        HISPI_TRY(expand(ctx, src->colptr, src->ncols, src->nnz, &tmp));
        cols = tmp;
    }

    hisp_status s = HISP_SUCCESS;
    bool already = (src->format == f && (f != HISP_FORMAT_COO || src->sorted));
    if (already || (f == HISP_FORMAT_COO && src->format == HISP_FORMAT_CSR)) {
        /* a plain copy: same order */
        int64_t n = src->nnz;
        dst->nnz = n;
        s = hispi_alloc(ctx, (size_t)n, es, &dst->val);
        if (!s) memcpy(dst->val, src->val, (size_t)n * es);
        if (!s && f != HISP_FORMAT_CSR) {
            s = hispi_alloc(ctx, (size_t)n, sizeof(int32_t), (void **)&dst->rowind);
            if (!s) memcpy(dst->rowind, rows, (size_t)n * sizeof(int32_t));
        }
        if (!s && f != HISP_FORMAT_CSC) {
            s = hispi_alloc(ctx, (size_t)n, sizeof(int32_t), (void **)&dst->colind);
            if (!s) memcpy(dst->colind, cols, (size_t)n * sizeof(int32_t));
        }
        if (!s && f == HISP_FORMAT_CSR) {
            s = hispi_alloc(ctx, (size_t)src->nrows + 1, sizeof(int64_t), (void **)&dst->rowptr);
            if (!s) memcpy(dst->rowptr, src->rowptr, ((size_t)src->nrows + 1) * sizeof(int64_t));
        }
        if (!s && f == HISP_FORMAT_CSC) {
            s = hispi_alloc(ctx, (size_t)src->ncols + 1, sizeof(int64_t), (void **)&dst->colptr);
            if (!s) memcpy(dst->colptr, src->colptr, ((size_t)src->ncols + 1) * sizeof(int64_t));
        }
    } else if (f == HISP_FORMAT_CSC) {
        s = compress(ctx, src->type, src->ncols, src->nrows, src->nnz, cols, rows, src->val,
                     &dst->colptr, &dst->rowind, &dst->val, &dst->nnz);
    } else {
        s = compress(ctx, src->type, src->nrows, src->ncols, src->nnz, rows, cols, src->val,
                     &dst->rowptr, &dst->colind, &dst->val, &dst->nnz);
        if (!s && f == HISP_FORMAT_COO) { /* sorted COO = CSR expanded */
            s = expand(ctx, dst->rowptr, dst->nrows, dst->nnz, &dst->rowind);
            free(dst->rowptr);
            dst->rowptr = NULL;
        }
    }
    free(tmp);
    if (s) hispi_sparse_free(dst);
    return s;
}

void hispi_sparse_scale(hispi_sparse *s, double a)
{
    int64_t n = s->nnz * hisp_type_components(s->type);
    if (hispi_type_scalar_size(s->type) == 4)
        for (int64_t k = 0; k < n; k++)
            ((float *)s->val)[k] *= (float)a;
    else
        for (int64_t k = 0; k < n; k++)
            ((double *)s->val)[k] *= a;
}
