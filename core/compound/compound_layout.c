/* Compound entries: outer layouts (CSR, ELLPACK-R, Sliced ELLPACK) and inner
 * layouts (AoS, SoA) built from host CSR, and their device sizes. */
#include "hispi_compound.h"

#include <stdlib.h>
#include <string.h>

#define ELL_ALIGN 32 /* ELL rows padded to a multiple: aligned column loads */

static int slice_of(hisp_outer_layout o)
{
    return o == HISP_OUTER_SELL16 ? 16 : 32;
}

void hispi_clayout_free(hispi_clayout *L)
{
    free(L->ptr);
    free(L->len);
    free(L->col);
    free(L->val);
    L->ptr = NULL;
    L->len = NULL;
    L->col = NULL;
    L->val = NULL;
}

/* Stored slots (incl. padding) and pointer count of a layout. */
static hisp_status shape(hisp_context ctx, const hispi_sparse *A, hisp_outer_layout o,
                         int64_t *stored, int64_t *ld, int64_t *nptr)
{
    int64_t m = A->nrows;
    *ld = 0;
    *nptr = 0;
    if (o == HISP_OUTER_CSR) {
        *stored = A->nnz;
        *nptr = m + 1;
        return HISP_SUCCESS;
    }
    if (o == HISP_OUTER_ELL) {
        int64_t w = 0;
        for (int64_t i = 0; i < m; i++)
            if (A->rowptr[i + 1] - A->rowptr[i] > w) w = A->rowptr[i + 1] - A->rowptr[i];
        *ld = (m + ELL_ALIGN - 1) / ELL_ALIGN * ELL_ALIGN;
        if (w && *ld > INT64_MAX / w)
            return hispi_fail(ctx, HISP_ERR_OUT_OF_HOST_MEMORY, "ELLPACK size overflows");
        *stored = *ld * w;
        return HISP_SUCCESS;
    }
    int S = slice_of(o);
    int64_t ns = (m + S - 1) / S, total = 0;
    for (int64_t s = 0; s < ns; s++) {
        int64_t w = 0;
        for (int64_t i = s * S; i < m && i < (s + 1) * S; i++)
            if (A->rowptr[i + 1] - A->rowptr[i] > w) w = A->rowptr[i + 1] - A->rowptr[i];
        total += w * S;
    }
    *stored = total;
    *nptr = ns + 1;
    return HISP_SUCCESS;
}

static uint64_t bytes_of(const hispi_ctype *c, hisp_outer_layout o, int64_t m, int64_t stored,
                         int64_t nptr)
{
    uint64_t pw = stored > INT32_MAX ? 8 : 4;
    uint64_t b = (uint64_t)stored * (4 + (uint64_t)c->ec * c->ss) + (uint64_t)nptr * pw;
    if (o != HISP_OUTER_CSR) b += (uint64_t)m * 4; /* row lengths */
    return b;
}

uint64_t hispi_clayout_bytes(const hispi_clayout *L)
{
    return bytes_of(&L->ct, L->layout.outer, L->nrows, L->stored, L->nptr);
}

hisp_status hispi_clayout_size(hisp_context ctx, const hispi_sparse *A, const hisp_layout *l,
                               uint64_t *bytes)
{
    hispi_ctype c;
    hispi_ctype_of(A->type, &c);
    int64_t stored, ld, nptr;
    HISPI_TRY(shape(ctx, A, l->outer, &stored, &ld, &nptr));
    *bytes = bytes_of(&c, l->outer, A->nrows, stored, nptr);
    return HISP_SUCCESS;
}

hisp_status hispi_clayout_build(hisp_context ctx, const hispi_sparse *A, const hisp_layout *l,
                                hispi_clayout *L)
{
    memset(L, 0, sizeof *L);
    if (A->format != HISP_FORMAT_CSR)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "layouts are built from CSR");
    if ((int)l->outer < 0 || l->outer >= HISP_OUTER_COUNT ||
        (l->inner != HISP_AOS && l->inner != HISP_SOA) ||
        (l->vec != HISP_AOS && l->vec != HISP_SOA))
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "invalid layout %d/%d/%d", (int)l->outer,
                          (int)l->inner, (int)l->vec);
    hispi_ctype_of(A->type, &L->ct);
    L->type = A->type;
    L->layout = *l;
    L->nrows = A->nrows;
    L->ncols = A->ncols;
    L->nnz = A->nnz;
    HISPI_TRY(shape(ctx, A, l->outer, &L->stored, &L->ld, &L->nptr));
    L->wide = L->stored > INT32_MAX;
    int64_t m = A->nrows, st = L->stored;
    int ec = L->ct.ec;
    size_t ss = L->ct.ss, es = ss * (size_t)ec;
    hisp_status s = hispi_calloc(ctx, (size_t)st, sizeof(int32_t), (void **)&L->col);
    if (!s) s = hispi_calloc(ctx, (size_t)st, es, &L->val);
    if (!s && L->nptr) s = hispi_alloc(ctx, (size_t)L->nptr, sizeof(int64_t), (void **)&L->ptr);
    if (!s && l->outer != HISP_OUTER_CSR)
        s = hispi_alloc(ctx, (size_t)m, sizeof(int32_t), (void **)&L->len);
    if (s) {
        hispi_clayout_free(L);
        return s;
    }
    int S = slice_of(l->outer);
    if (l->outer == HISP_OUTER_CSR) {
        memcpy(L->ptr, A->rowptr, (size_t)(m + 1) * sizeof(int64_t));
    } else if (l->outer != HISP_OUTER_ELL) {
        int64_t ns = L->nptr - 1, off = 0;
        for (int64_t sl = 0; sl < ns; sl++) {
            int64_t w = 0;
            for (int64_t i = sl * S; i < m && i < (sl + 1) * S; i++)
                if (A->rowptr[i + 1] - A->rowptr[i] > w) w = A->rowptr[i + 1] - A->rowptr[i];
            L->ptr[sl] = off;
            off += w * S;
        }
        L->ptr[ns] = off;
    }
    const char *src = A->val;
    char *dst = L->val;
    for (int64_t i = 0; i < m; i++) {
        int64_t k0 = A->rowptr[i], n = A->rowptr[i + 1] - k0, base, step;
        if (l->outer == HISP_OUTER_CSR)
            base = k0, step = 1;
        else if (l->outer == HISP_OUTER_ELL)
            base = i, step = L->ld;
        else
            base = L->ptr[i / S] + i % S, step = S;
        if (L->len) L->len[i] = (int32_t)n;
        for (int64_t t = 0; t < n; t++) {
            int64_t idx = base + t * step, k = k0 + t;
            L->col[idx] = A->colind[k];
            if (l->inner == HISP_AOS)
                memcpy(dst + (size_t)idx * es, src + (size_t)k * es, es);
            else
                for (int q = 0; q < ec; q++)
                    memcpy(dst + ((size_t)q * (size_t)st + (size_t)idx) * ss,
                           src + ((size_t)k * (size_t)ec + (size_t)q) * ss, ss);
        }
    }
    return HISP_SUCCESS;
}
