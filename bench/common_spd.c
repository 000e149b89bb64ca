/* The SPD graph matrix of a square CSR (common_dist.h bs_spd_graph), built
 * for 1-2 billion entries: 64-bit pointers, B's entries scattered into one
 * buffer (each row's own entries and its column's, the transpose, then a
 * slot for the diagonal), each row sorted and merged in place, the rows
 * compacted. A column meets a row at most twice (A_ij and A_ji), and
 * |a| + |b| = |b| + |a| exactly, so the order the threads scatter in does not
 * change B. */
#include "common_dist.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int key_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Per-thread scratch of a row's sort and merge. */
typedef struct {
    uint64_t *key;
    int32_t *col;
    double *val;
    int64_t cap;
} scratch;

static int grow(scratch *s, int64_t need)
{
    if (need <= s->cap) return 0;
    int64_t cap = need > 2 * s->cap ? need : 2 * s->cap;
    uint64_t *k = realloc(s->key, (size_t)cap * sizeof *k);
    if (k) s->key = k;
    int32_t *c = realloc(s->col, (size_t)cap * sizeof *c);
    if (c) s->col = c;
    double *v = realloc(s->val, (size_t)cap * sizeof *v);
    if (v) s->val = v;
    if (!k || !c || !v) return -1;
    s->cap = cap;
    return 0;
}

/* Row i's L scattered entries at c, v (slot L is the diagonal's): sorted,
 * equal columns summed, the diagonal inserted; returns the row's length. */
static int64_t merge_row(int64_t i, int32_t *c, double *v, int64_t L, scratch *s)
{
    for (int64_t k = 0; k < L; k++)
        s->key[k] = (uint64_t)(uint32_t)c[k] << 32 | (uint64_t)k;
    qsort(s->key, (size_t)L, sizeof *s->key, key_cmp);
    int64_t m = 0, dpos = -1;
    double sum = 0;
    for (int64_t k = 0; k < L; k++) {
        int32_t col = (int32_t)(s->key[k] >> 32);
        double val = v[s->key[k] & 0xffffffffu];
        if (dpos < 0 && col > i) { /* the diagonal's place */
            dpos = m;
            s->col[m] = (int32_t)i;
            s->val[m++] = 0;
        }
        if (m > 0 && s->col[m - 1] == col && col != i) {
            s->val[m - 1] += val;
        } else {
            s->col[m] = col;
            s->val[m++] = val;
        }
    }
    if (dpos < 0) {
        dpos = m;
        s->col[m] = (int32_t)i;
        s->val[m++] = 0;
    }
    for (int64_t k = 0; k < m; k++)
        if (k != dpos) sum += s->val[k];
    s->val[dpos] = sum + 1;
    memcpy(c, s->col, (size_t)m * sizeof *c);
    memcpy(v, s->val, (size_t)m * sizeof *v);
    return m;
}

int bs_spd_graph(int64_t n, const int64_t *ap, const int32_t *ac, const double *av, int64_t **bp,
                 int32_t **bc, double **bv, int64_t *nnz)
{
    *bp = NULL;
    *bc = NULL;
    *bv = NULL;
    *nnz = 0;
    int64_t *ptr = calloc((size_t)n + 1, sizeof *ptr), *fill = malloc((size_t)(n ? n : 1) * 8);
    int32_t *col = NULL;
    double *val = NULL;
    if (!ptr || !fill) goto oom;
        /* slots per row: its off-diagonal entries, its column's, the diagonal */
#pragma omp parallel for schedule(dynamic, 4096)
    for (int64_t i = 0; i < n; i++) {
        int64_t own = 1;
        for (int64_t e = ap[i]; e < ap[i + 1]; e++) {
            int64_t j = ac[e];
            if (j == i) continue;
            own++;
#pragma omp atomic
            ptr[j + 1]++;
        }
#pragma omp atomic
        ptr[i + 1] += own;
    }
    for (int64_t i = 0; i < n; i++)
        ptr[i + 1] += ptr[i];
    int64_t slots = ptr[n];
    col = malloc((size_t)(slots ? slots : 1) * sizeof *col);
    val = malloc((size_t)(slots ? slots : 1) * sizeof *val);
    if (!col || !val) goto oom;
    memcpy(fill, ptr, (size_t)n * sizeof *fill);
#pragma omp parallel for schedule(dynamic, 4096)
    for (int64_t i = 0; i < n; i++)
        for (int64_t e = ap[i]; e < ap[i + 1]; e++) {
            int64_t j = ac[e], p, q;
            if (j == i) continue;
            double a = fabs(av[e]);
#pragma omp atomic capture
            p = fill[i]++;
            col[p] = (int32_t)j;
            val[p] = a;
#pragma omp atomic capture
            q = fill[j]++;
            col[q] = (int32_t)i;
            val[q] = a;
        }
    free(fill);
    fill = NULL;
    /* sort and merge each row in place; its length into len (reusing ptr
     * would race with the neighbours' reads: a separate array) */
    int64_t *len = malloc((size_t)(n ? n : 1) * sizeof *len);
    if (!len) goto oom;
    int bad = 0;
#pragma omp parallel reduction(| : bad)
    {
        scratch s = {NULL, NULL, NULL, 0};
#pragma omp for schedule(dynamic, 1024)
        for (int64_t i = 0; i < n; i++) {
            int64_t L = ptr[i + 1] - ptr[i] - 1;
            if (bad || grow(&s, L + 1)) {
                bad = 1;
                continue;
            }
            len[i] = merge_row(i, col + ptr[i], val + ptr[i], L, &s);
        }
        free(s.key);
        free(s.col);
        free(s.val);
    }
    if (bad) {
        free(len);
        goto oom;
    }
    /* compact to the left (a row never moves right) */
    int64_t w = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t from = ptr[i];
        ptr[i] = w;
        if (from != w) {
            memmove(col + w, col + from, (size_t)len[i] * sizeof *col);
            memmove(val + w, val + from, (size_t)len[i] * sizeof *val);
        }
        w += len[i];
    }
    ptr[n] = w;
    free(len);
    if (w < slots && w > 0) { /* a failure to shrink is harmless */
        int32_t *c2 = realloc(col, (size_t)w * sizeof *col);
        if (c2) col = c2;
        double *v2 = realloc(val, (size_t)w * sizeof *val);
        if (v2) val = v2;
    }
    *bp = ptr;
    *bc = col;
    *bv = val;
    *nnz = w;
    return 0;
oom:
    free(ptr);
    free(fill);
    free(col);
    free(val);
    return -1;
}
