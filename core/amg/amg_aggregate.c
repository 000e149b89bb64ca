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
        /* each row's repeats dropped by a marker (cnt, free now), its
         * distinct columns sorted, compacting in place (qsort on the 12
         * entries of a row with repeats had cost poisson3d 32^3's strength
         * 4 of 6 ms) */
        for (int64_t i = 0; i < n; i++)
            cnt[i] = -1;
        int64_t out = 0;
        for (int64_t i = 0; i < n; i++) {
            int64_t a = ptr[i], b = ptr[i + 1], o = out;
            ptr[i] = out;
            for (int64_t k = a; k < b; k++)
                if (cnt[idx[k]] != i) cnt[idx[k]] = i, idx[out++] = idx[k];
            if (out - o > 32)
                qsort(idx + o, (size_t)(out - o), sizeof *idx, cmp_i32);
            else
                for (int64_t k = o + 1; k < out; k++)
                    for (int64_t q = k; q > o && idx[q - 1] > idx[q]; q--) {
                        int32_t tq = idx[q];
                        idx[q] = idx[q - 1], idx[q - 1] = tq;
                    }
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

/* A node's (state, priority) in one word: the state above the priority's
 * 62 bits (hispi_amg_prio), so that one load and one comparison rank two
 * nodes (the index breaks ties). Two arrays compared field by field had
 * made the rounds a third of poisson3d 32^3's host setup. */
static uint64_t key_of(int st, uint64_t pr)
{
    return (uint64_t)st << 62 | pr;
}

static int state_of(uint64_t key)
{
    return (int)(key >> 62);
}

static uint64_t prio_of(uint64_t key)
{
    return key & (((uint64_t)1 << 62) - 1);
}

/* The node above every other of from({i} and i's neighbours) by (key,
 * index); from NULL: the nodes themselves. */
static int32_t best_of(int64_t i, const int64_t *sptr, const int32_t *sidx, const uint64_t *key,
                       const int32_t *from)
{
    int32_t b = from ? from[i] : (int32_t)i;
    uint64_t kb = key[b];
    for (int64_t k = sptr[i]; k < sptr[i + 1]; k++) {
        int32_t c = from ? from[sidx[k]] : sidx[k];
        uint64_t kc = key[c];
        /* without branches: their outcome is a coin toss in the first rounds */
        uint64_t up = (uint64_t)0 - (uint64_t)((kc > kb) | ((kc == kb) & (c > b)));
        kb = (kc & up) | (kb & ~up);
        b = (int32_t)(((uint64_t)(uint32_t)c & up) | ((uint64_t)(uint32_t)b & ~up));
    }
    return b;
}

/* Test hook: aggregations run (here and on a device). */
long hispi_amg_aggregations;

hisp_status hispi_amg_aggregate(hisp_context ctx, int64_t n, const int64_t *sptr,
                                const int32_t *sidx, uint64_t seed, int32_t *agg, int32_t *roots,
                                int64_t *nagg)
{
    hispi_amg_aggregations++;
    *nagg = 0;
    uint64_t *key = NULL;
    uint32_t *stamp = NULL;
    int32_t *b1 = NULL, *und = NULL, *near = NULL, *dec = NULL;
    hisp_status s = hispi_alloc(ctx, (size_t)n + 1, sizeof *key, (void **)&key);
    if (!s) s = hispi_calloc(ctx, (size_t)n + 1, sizeof *stamp, (void **)&stamp);
    if (!s) s = hispi_alloc(ctx, (size_t)n + 1, sizeof *b1, (void **)&b1);
    if (!s) s = hispi_alloc(ctx, (size_t)n + 1, sizeof *und, (void **)&und);
    if (!s) s = hispi_alloc(ctx, (size_t)n + 1, sizeof *near, (void **)&near);
    if (!s) s = hispi_alloc(ctx, (size_t)n + 1, sizeof *dec, (void **)&dec);
    int64_t left = 0;
    for (int64_t i = 0; !s && i < n; i++) {
        bool alone = sptr[i + 1] == sptr[i];
        /* a node without neighbours: in no aggregate */
        key[i] = key_of(alone ? OUT : UNDECIDED, hispi_amg_prio(seed, i));
        if (!alone) und[left++] = (int32_t)i;
    }
    /* Luby's rounds: the largest (state, priority, index) within distance
     * 2 of each undecided node, from the last round's states. Only the
     * undecided nodes and their neighbours are visited (a device visits
     * all, to the same decisions): sweeps over every node had cost four
     * times as much on poisson3d 32^3. */
    for (uint32_t round = 1; !s && left > 0; round++) {
        int64_t nn = 0;
        for (int64_t u = 0; u < left; u++) {
            int32_t i = und[u];
            if (stamp[i] != round) stamp[i] = round, near[nn++] = i;
            for (int64_t k = sptr[i]; k < sptr[i + 1]; k++)
                if (stamp[sidx[k]] != round) stamp[sidx[k]] = round, near[nn++] = sidx[k];
        }
        for (int64_t q = 0; q < nn; q++)
            b1[near[q]] = best_of(near[q], sptr, sidx, key, NULL);
        for (int64_t u = 0; u < left; u++) {
            int32_t i = und[u], b2 = best_of(i, sptr, sidx, key, b1);
            dec[u] = b2 == i ? IN : state_of(key[b2]) == IN ? OUT : UNDECIDED;
        }
        int64_t still = 0;
        for (int64_t u = 0; u < left; u++) {
            int32_t i = und[u];
            key[i] = key_of(dec[u], prio_of(key[i]));
            if (dec[u] == UNDECIDED) und[still++] = i;
        }
        left = still;
    }
    if (!s) {
        /* roots numbered in order; their neighbours join them (in a MIS(2)
         * no node has two roots as neighbours) */
        int64_t na = 0;
        for (int64_t i = 0; i < n; i++) {
            agg[i] = state_of(key[i]) == IN ? (int32_t)na++ : -1;
            if (roots && state_of(key[i]) == IN) roots[na - 1] = (int32_t)i;
        }
        for (int64_t i = 0; i < n; i++) {
            b1[i] = agg[i];
            if (agg[i] >= 0) continue;
            for (int64_t k = sptr[i]; k < sptr[i + 1]; k++)
                if (state_of(key[sidx[k]]) == IN) b1[i] = agg[sidx[k]];
        }
        /* the others (at distance 2 from a root) join their neighbour's of
         * the largest priority */
        for (int64_t i = 0; i < n; i++) {
            agg[i] = b1[i];
            if (b1[i] >= 0) continue;
            int32_t best = -1;
            for (int64_t k = sptr[i]; k < sptr[i + 1]; k++) {
                int32_t j = sidx[k];
                if (b1[j] >= 0 && (best < 0 || prio_of(key[j]) > prio_of(key[best]) ||
                                   (prio_of(key[j]) == prio_of(key[best]) && j > best)))
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
    free(key), free(stamp), free(b1), free(und), free(near), free(dec);
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
