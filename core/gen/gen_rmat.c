/* The rmat generator (Graph500 R-MAT; gen.c describes it): edges sampled in
 * threads, bucketed by row, each row sorted and merged, values hashed from
 * (seed, row, column). */
#include "gen_internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t key;
    int scale;
    int64_t edges, chunk;
    int32_t *src, *dst;
    atomic_llong next;
} edge_job;

/* Graph500 quadrant probabilities a=.57 b=.19 c=.19 d=.05, in 1/32768:
 * cumulative thresholds on 15-bit draws. */
#define RMAT_A 18678u
#define RMAT_AB (RMAT_A + 6226u)
#define RMAT_ABC (RMAT_AB + 6226u)
#define LANES 0x0001000100010001ull

/* Four levels at once (SWAR): one 15-bit draw in each 16-bit lane of w; bit
 * 3-l of the result says whether lane l is >= t (lane 0 first). */
static inline uint32_t ge4(uint64_t w, uint32_t t)
{
    uint64_t x = ((w + (0x8000u - t) * LANES) & 0x8000800080008000ull) >> 15;
    /* gather the bits at 0, 16, 32, 48 into 51, 50, 49, 48 (no carries) */
    return (uint32_t)((x * ((1ull << 51) + (1ull << 34) + (1ull << 17) + 1)) >> 48) & 15;
}

static void *edge_worker(void *arg)
{
    edge_job *j = arg;
    for (;;) {
        int64_t lo = atomic_fetch_add(&j->next, j->chunk);
        if (lo >= j->edges) break;
        int64_t hi = lo + j->chunk < j->edges ? lo + j->chunk : j->edges;
        for (int64_t e = lo; e < hi; e++) {
            rng r = rng_at(j->key, (uint64_t)e, S_EDGE);
            uint32_t u = 0, v = 0;
            for (int l = 0; l < j->scale; l += 4) {
                uint64_t w = next(&r) & 0x7fff7fff7fff7fffull;
                uint32_t a = ge4(w, RMAT_A), ab = ge4(w, RMAT_AB), abc = ge4(w, RMAT_ABC);
                /* quadrant a: (0,0), b: (0,1), c: (1,0), d: (1,1) */
                uint32_t ub = ab, vb = a ^ ab ^ abc;
                int take = j->scale - l < 4 ? j->scale - l : 4;
                u = (u << take) | (ub >> (4 - take));
                v = (v << take) | (vb >> (4 - take));
            }
            j->src[e] = (int32_t)u;
            j->dst[e] = (int32_t)v;
        }
    }
    return NULL;
}

/* Per-row finishing of the bucketed edge list: sort and merge each row's
 * columns (length into len[i]), then, after compaction, the values. */
typedef struct {
    const gen *g;
    int pass;
    int64_t n, chunk;
    const int64_t *start; /* row i's columns at col[start[i] ..] */
    int64_t *len, maxlen;
    int32_t *col;
    void *val;
    atomic_llong next;
} rmat_job;

static void *rmat_row_worker(void *arg)
{
    rmat_job *j = arg;
    const gen *g = j->g;
    /* radix scratch for long rows; without it the rows are sorted in place */
    int32_t *tmp = j->pass == 1 ? malloc((size_t)j->maxlen * sizeof *tmp + 4) : NULL;
    for (;;) {
        int64_t lo = atomic_fetch_add(&j->next, j->chunk);
        if (lo >= j->n) break;
        int64_t hi = lo + j->chunk < j->n ? lo + j->chunk : j->n;
        for (int64_t i = lo; i < hi; i++) {
            int32_t *c = j->col + j->start[i];
            if (j->pass == 1) {
                j->len[i] = hispi_gen_sort_unique(c, j->len[i], tmp);
                continue;
            }
            for (int64_t q = 0; q < j->start[i + 1] - j->start[i]; q++) {
                uint64_t h = mix64(g->key ^ mix64(((uint64_t)i << 32 | (uint32_t)c[q]) + S_ENTRY));
                put(g->type, j->val, j->start[i] + q, uval(g->scalar, h));
            }
        }
    }
    free(tmp);
    return NULL;
}

hisp_status hispi_gen_rmat(hisp_context ctx, const gen *g, int scale, int64_t edges,
                           hispi_sparse *out)
{
    int64_t n = (int64_t)1 << scale;
    int32_t *src = NULL, *dst = NULL, *col = NULL;
    int64_t *rowptr = NULL, *len = NULL;
    hisp_status s = hispi_alloc(ctx, (size_t)edges, sizeof *src, (void **)&src);
    if (!s) s = hispi_alloc(ctx, (size_t)edges, sizeof *dst, (void **)&dst);
    if (!s) s = hispi_alloc(ctx, (size_t)edges, sizeof *col, (void **)&col);
    if (!s) s = hispi_calloc(ctx, (size_t)n + 1, sizeof *rowptr, (void **)&rowptr);
    if (!s) s = hispi_calloc(ctx, (size_t)n, sizeof *len, (void **)&len);
    if (s) goto fail;
    int threads = hispi_threads(ctx, (double)edges);
    edge_job ej = {
        .key = g->key, .scale = scale, .edges = edges, .chunk = 65536, .src = src, .dst = dst};
    atomic_init(&ej.next, 0);
    hispi_parallel(threads, edge_worker, &ej);

    /* bucket by row (counting sort), then sort and merge within rows */
    for (int64_t e = 0; e < edges; e++)
        len[src[e]]++;
    for (int64_t i = 0; i < n; i++)
        rowptr[i + 1] = rowptr[i] + len[i];
    for (int64_t e = 0; e < edges; e++)
        col[rowptr[src[e]]++] = dst[e];
    free(src);
    free(dst);
    src = dst = NULL;
    for (int64_t i = 0; i < n; i++)
        rowptr[i] -= len[i]; /* back to starts */
    rmat_job rj = {.g = g, .pass = 1, .n = n, .start = rowptr, .len = len, .col = col};
    rj.chunk = 4096;
    for (int64_t i = 0; i < n; i++)
        if (len[i] > rj.maxlen) rj.maxlen = len[i];
    atomic_init(&rj.next, 0);
    hispi_parallel(threads, rmat_row_worker, &rj);
    /* compact the merged rows to the left */
    int64_t w = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t from = rowptr[i];
        rowptr[i] = w;
        memmove(col + w, col + from, (size_t)len[i] * sizeof *col);
        w += len[i];
    }
    rowptr[n] = w;
    free(len);
    len = NULL;
    if (w < edges) { /* failure to shrink is harmless */
        void *q = realloc(col, (size_t)(w ? w : 1) * sizeof *col);
        if (q) col = q;
    }
    memset(out, 0, sizeof *out);
    out->format = HISP_FORMAT_CSR;
    out->type = g->type;
    out->nrows = out->ncols = n;
    out->nnz = w;
    out->sorted = true;
    out->rowptr = rowptr;
    out->colind = col;
    rowptr = NULL;
    col = NULL;
    s = hispi_alloc(ctx, (size_t)w, hisp_type_size(g->type), &out->val);
    if (s) {
        hispi_sparse_free(out);
        return s;
    }
    rj.pass = 2;
    rj.start = out->rowptr;
    rj.col = out->colind;
    rj.val = out->val;
    atomic_store(&rj.next, 0);
    hispi_parallel(threads, rmat_row_worker, &rj);
    return HISP_SUCCESS;
fail:
    free(src);
    free(dst);
    free(col);
    free(rowptr);
    free(len);
    return s;
}
