/* Strength of connection and aggregation of smoothed-aggregation AMG
 * (hispi_amg.h), on the host: the reference for device setups. The
 * aggregation runs Luby's rounds for a distance-2 maximal independent set
 * as a device would, every round reading the previous round's states only,
 * so that a parallel implementation gives the same aggregates bit for bit
 * (Bell, Dalton and Olson's MIS(2) aggregation, as in CUSP). */
#include "hispi_amg.h"

#include <stdlib.h>
#include <string.h>

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

hisp_status hispi_amg_strength(hisp_context ctx, int64_t n, const int64_t *rowptr,
                               const int32_t *colind, const void *val, hisp_type t, double theta,
                               int64_t **sptr, int32_t **sidx)
{
    *sptr = NULL, *sidx = NULL;
    double *d = NULL;
    int64_t *cnt = NULL, *ptr = NULL;
    int32_t *idx = NULL;
    HISPI_TRY(hispi_calloc(ctx, (size_t)n + 1, sizeof *d, (void **)&d));
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = rowptr[i]; k < rowptr[i + 1]; k++)
            if (colind[k] == i) d[i] += hispi_load_real(t, val, k);
    /* a strong (i, j) and its mirror (j, i) go into both rows; repeats
     * are dropped after each row is sorted */
    hisp_status s = hispi_calloc(ctx, (size_t)n + 1, sizeof *cnt, (void **)&cnt);
    double t2 = theta * theta;
#define STRONG(i, j, v)                                                                            \
    ((j) != (i) && (v) != 0 &&                                                                     \
     (v) * (v) >= t2 * (d[i] < 0 ? -d[i] : d[i]) * (d[j] < 0 ? -d[j] : d[j]))
    for (int64_t i = 0; !s && i < n; i++)
        for (int64_t k = rowptr[i]; k < rowptr[i + 1]; k++) {
            int32_t j = colind[k];
            double v = hispi_load_real(t, val, k);
            if (STRONG(i, j, v)) cnt[i + 1]++, cnt[j + 1]++;
        }
    if (!s) s = hispi_alloc(ctx, (size_t)n + 1, sizeof *ptr, (void **)&ptr);
    if (!s) {
        for (int64_t i = 0; i < n; i++)
            cnt[i + 1] += cnt[i];
        s = hispi_alloc(ctx, (size_t)cnt[n] + 1, sizeof *idx, (void **)&idx);
    }
    if (!s) {
        memcpy(ptr, cnt, ((size_t)n + 1) * sizeof *ptr);
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = rowptr[i]; k < rowptr[i + 1]; k++) {
                int32_t j = colind[k];
                double v = hispi_load_real(t, val, k);
                if (STRONG(i, j, v)) idx[cnt[i]++] = j, idx[cnt[j]++] = (int32_t)i;
            }
        /* sort and unique each row, compacting in place */
        int64_t out = 0;
        for (int64_t i = 0; i < n; i++) {
            int64_t a = ptr[i], b = ptr[i + 1];
            qsort(idx + a, (size_t)(b - a), sizeof *idx, cmp_i32);
            ptr[i] = out;
            for (int64_t k = a; k < b; k++)
                if (k == a || idx[k] != idx[k - 1]) idx[out++] = idx[k];
        }
        ptr[n] = out;
    }
#undef STRONG
    free(d), free(cnt);
    if (s) {
        free(ptr), free(idx);
        return s;
    }
    *sptr = ptr, *sidx = idx;
    return HISP_SUCCESS;
}

enum { OUT = 0, UNDECIDED = 1, IN = 2 };

/* Node a's (state, priority, index) above node b's? */
static bool above(const uint8_t *st, const uint64_t *pr, int32_t a, int32_t b)
{
    if (st[a] != st[b]) return st[a] > st[b];
    if (pr[a] != pr[b]) return pr[a] > pr[b];
    return a > b;
}

/* best[i] = the node above every other of {i} and i's neighbours' from[]. */
static void spread(int64_t n, const int64_t *sptr, const int32_t *sidx, const uint8_t *st,
                   const uint64_t *pr, const int32_t *from, int32_t *best)
{
    for (int64_t i = 0; i < n; i++) {
        int32_t b = from[i];
        for (int64_t k = sptr[i]; k < sptr[i + 1]; k++)
            if (above(st, pr, from[sidx[k]], b)) b = from[sidx[k]];
        best[i] = b;
    }
}

/* Test hook: aggregations run (here and on a device). */
long hispi_amg_aggregations;

hisp_status hispi_amg_aggregate(hisp_context ctx, int64_t n, const int64_t *sptr,
                                const int32_t *sidx, uint64_t seed, int32_t *agg, int32_t *roots,
                                int64_t *nagg)
{
    hispi_amg_aggregations++;
    *nagg = 0;
    uint8_t *st = NULL, *nst = NULL;
    uint64_t *pr = NULL;
    int32_t *self = NULL, *b1 = NULL, *b2 = NULL;
    hisp_status s = hispi_alloc(ctx, (size_t)n + 1, 1, (void **)&st);
    if (!s) s = hispi_alloc(ctx, (size_t)n + 1, 1, (void **)&nst);
    if (!s) s = hispi_alloc(ctx, (size_t)n + 1, sizeof *pr, (void **)&pr);
    if (!s) s = hispi_alloc(ctx, (size_t)n + 1, sizeof *self, (void **)&self);
    if (!s) s = hispi_alloc(ctx, (size_t)n + 1, sizeof *b1, (void **)&b1);
    if (!s) s = hispi_alloc(ctx, (size_t)n + 1, sizeof *b2, (void **)&b2);
    int64_t left = 0;
    for (int64_t i = 0; !s && i < n; i++) {
        bool alone = sptr[i + 1] == sptr[i];
        st[i] = alone ? OUT : UNDECIDED; /* a node without neighbours: in no aggregate */
        left += !alone;
        pr[i] = hispi_amg_hash(seed, i);
        self[i] = (int32_t)i;
    }
    /* Luby's rounds: the largest (state, priority, index) within distance 2 */
    while (!s && left > 0) {
        spread(n, sptr, sidx, st, pr, self, b1);
        spread(n, sptr, sidx, st, pr, b1, b2);
        memcpy(nst, st, (size_t)n);
        for (int64_t i = 0; i < n; i++) {
            if (st[i] != UNDECIDED) continue;
            if (b2[i] == i)
                nst[i] = IN, left--;
            else if (st[b2[i]] == IN)
                nst[i] = OUT, left--;
        }
        uint8_t *tmp = st;
        st = nst, nst = tmp;
    }
    if (!s) {
        /* roots numbered in order; their neighbours join them (in a MIS(2)
         * no node has two roots as neighbours) */
        int64_t na = 0;
        for (int64_t i = 0; i < n; i++) {
            agg[i] = st[i] == IN ? (int32_t)na++ : -1;
            if (roots && st[i] == IN) roots[na - 1] = (int32_t)i;
        }
        for (int64_t i = 0; i < n; i++) {
            b1[i] = agg[i];
            if (agg[i] >= 0) continue;
            for (int64_t k = sptr[i]; k < sptr[i + 1]; k++)
                if (st[sidx[k]] == IN) b1[i] = agg[sidx[k]];
        }
        /* the others (at distance 2 from a root) join their neighbour's of
         * the largest priority */
        for (int64_t i = 0; i < n; i++) {
            agg[i] = b1[i];
            if (b1[i] >= 0) continue;
            int32_t best = -1;
            for (int64_t k = sptr[i]; k < sptr[i + 1]; k++) {
                int32_t j = sidx[k];
                if (b1[j] >= 0 && (best < 0 || pr[j] > pr[best] || (pr[j] == pr[best] && j > best)))
                    best = j;
            }
            if (best >= 0) agg[i] = b1[best];
        }
        /* maximality leaves no node with neighbours out; should one be,
         * it is an aggregate of its own rather than dropped */
        for (int64_t i = 0; i < n; i++)
            if (agg[i] < 0 && sptr[i + 1] > sptr[i]) {
                if (roots) roots[na] = (int32_t)i;
                agg[i] = (int32_t)na++;
            }
        *nagg = na;
    }
    free(st), free(nst), free(pr), free(self), free(b1), free(b2);
    return s;
}

hisp_status hispi_amg_nodes(hisp_context ctx, int64_t n, int b, const int64_t *rowptr,
                            const int32_t *colind, const void *val, hisp_type t, int64_t **nptr,
                            int32_t **nidx, double **nval)
{
    int64_t nn = n / b, *mark = NULL, *ptr = NULL;
    int32_t *idx = NULL;
    double *v = NULL;
    *nptr = NULL, *nidx = NULL, *nval = NULL;
    hisp_status s = hispi_alloc(ctx, (size_t)nn + 1, sizeof *mark, (void **)&mark);
    if (!s) s = hispi_alloc(ctx, (size_t)nn + 1, sizeof *ptr, (void **)&ptr);
    if (!s) s = hispi_alloc(ctx, (size_t)rowptr[n] + 1, sizeof *idx, (void **)&idx);
    if (!s) s = hispi_alloc(ctx, (size_t)rowptr[n] + 1, sizeof *v, (void **)&v);
    if (s) {
        free(mark), free(ptr), free(idx), free(v);
        return s;
    }
    for (int64_t J = 0; J < nn; J++)
        mark[J] = -1;
    int64_t out = 0;
    for (int64_t I = 0; I < nn; I++) { /* mark[J]: where node J sits in row I */
        ptr[I] = out;
        for (int64_t i = I * b; i < (I + 1) * b; i++)
            for (int64_t k = rowptr[i]; k < rowptr[i + 1]; k++) {
                int32_t J = colind[k] / b;
                double a = hispi_load_real(t, val, k);
                if (mark[J] < ptr[I]) mark[J] = out, idx[out] = J, v[out++] = 0;
                v[mark[J]] += a * a;
            }
        for (int64_t k = ptr[I] + 1; k < out; k++) /* columns in order (short rows) */
            for (int64_t q = k; q > ptr[I] && idx[q - 1] > idx[q]; q--) {
                int32_t ti = idx[q];
                double tv = v[q];
                idx[q] = idx[q - 1], v[q] = v[q - 1];
                idx[q - 1] = ti, v[q - 1] = tv;
            }
    }
    ptr[nn] = out;
    free(mark);
    *nptr = ptr, *nidx = idx, *nval = v;
    return HISP_SUCCESS;
}

void hispi_amg_expand(int64_t n, int b, int32_t *agg, int64_t *nagg)
{
    for (int64_t i = n - 1; i >= 0; i--) { /* descending: agg[i / b] is read before it is written */
        int32_t a = agg[i / b];
        agg[i] = a < 0 ? -1 : a * b + (int32_t)(i % b);
    }
    *nagg *= b;
}
