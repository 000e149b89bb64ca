/* The row-wise generator kinds (poisson2d/3d, banded, random, dense,
 * circuit, blockdiag; gen.c describes each): one function per kind writes a
 * row's sorted distinct columns, and two passes over the rows in threads
 * make the CSR matrix (pass 1 the lengths, pass 2 columns and values). */
#include "gen_internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Binomial(m, 1/4): popcount of the AND of two random words. Used for row
 * lengths: mean m/4, variance 3m/16, close to the Poisson lengths of an
 * Erdos-Renyi matrix without any libm call. */
static int64_t binom_quarter(rng *r, int64_t m)
{
    int64_t k = 0;
    for (; m > 0; m -= 64) {
        uint64_t a = next(r), b = next(r), w = a & b;
        if (m < 64) w &= ((uint64_t)1 << m) - 1;
        k += popcount64(w);
    }
    return k;
}

/* A row length with mean exactly lam: Binomial(m, 1/4) with m = 4*lam
 * rounded up or down at random. */
static int64_t random_len(rng *r, double lam)
{
    double m4 = 4 * lam;
    int64_t m = (int64_t)m4;
    if (chance(r, prob_threshold(m4 - (double)m))) m++;
    return binom_quarter(r, m);
}

int64_t hispi_gen_row_poisson2d(const gen *g, int64_t i, int32_t *c, int32_t *tmp)
{
    (void)tmp;
    int64_t s = g->side, x = i % s, y = i / s, k = 0;
    if (y > 0) c[k++] = (int32_t)(i - s);
    if (x > 0) c[k++] = (int32_t)(i - 1);
    c[k++] = (int32_t)i;
    if (x < s - 1) c[k++] = (int32_t)(i + 1);
    if (y < s - 1) c[k++] = (int32_t)(i + s);
    return k;
}

int64_t hispi_gen_row_poisson3d(const gen *g, int64_t i, int32_t *c, int32_t *tmp)
{
    (void)tmp;
    int64_t s = g->side, x = i % s, y = (i / s) % s, z = i / (s * s), k = 0;
    if (z > 0) c[k++] = (int32_t)(i - s * s);
    if (y > 0) c[k++] = (int32_t)(i - s);
    if (x > 0) c[k++] = (int32_t)(i - 1);
    c[k++] = (int32_t)i;
    if (x < s - 1) c[k++] = (int32_t)(i + 1);
    if (y < s - 1) c[k++] = (int32_t)(i + s);
    if (z < s - 1) c[k++] = (int32_t)(i + s * s);
    return k;
}

/* The diagonal plus k-1 distinct random off-diagonal positions of the band
 * window; k is npr rounded up or down at random, clipped to the window. */
int64_t hispi_gen_row_banded(const gen *g, int64_t i, int32_t *c, int32_t *tmp)
{
    rng r = rng_at(g->key, (uint64_t)i, S_COLS);
    int64_t lo = i - g->bw < 0 ? 0 : i - g->bw;
    int64_t hi = i + g->bw > g->n - 1 ? g->n - 1 : i + g->bw;
    int64_t w = hi - lo + 1;
    int64_t k = (int64_t)g->npr + (chance(&r, g->frac) ? 1 : 0);
    if (k > w) k = w;
    if (k < 1) k = 1;
    hispi_gen_sample_sorted(&r, w - 1, k - 1, c, tmp); /* offsets among the w-1 off-diagonal ones */
    int64_t d = k - 1;
    for (int64_t q = 0; q < k - 1; q++) {
        int64_t col = lo + c[q];
        if (col >= i) {
            if (d == k - 1) d = q;
            col++;
        }
        c[q] = (int32_t)col;
    }
    memmove(c + d + 1, c + d, (size_t)(k - 1 - d) * sizeof *c);
    c[d] = (int32_t)i;
    return k;
}

int64_t hispi_gen_row_random(const gen *g, int64_t i, int32_t *c, int32_t *tmp)
{
    rng r = rng_at(g->key, (uint64_t)i, S_COLS);
    int64_t k = random_len(&r, g->npr);
    if (k > g->n) k = g->n;
    hispi_gen_sample_sorted(&r, g->n, k, c, tmp);
    return k;
}

int64_t hispi_gen_row_dense(const gen *g, int64_t i, int32_t *c, int32_t *tmp)
{
    (void)i;
    (void)tmp;
    for (int64_t j = 0; j < g->n; j++)
        c[j] = (int32_t)j;
    return g->n;
}

/* Circuit-like: the diagonal; npr-1 sparse entries on average, 3/4 of them
 * within +-near of the diagonal, the others anywhere; an entry in each dense
 * column with probability line_len/n; and, for a dense row, line_len more
 * random columns. */
int64_t hispi_gen_row_circuit(const gen *g, int64_t i, int32_t *c, int32_t *tmp)
{
    rng r = rng_at(g->key, (uint64_t)i, S_COLS);
    int64_t n = g->n, k = 0;
    c[k++] = (int32_t)i;
    int64_t m = random_len(&r, g->npr - 1);
    for (int64_t q = 0; q < m; q++) {
        int64_t j;
        if (chance(&r, g->near_thr)) {
            j = i - g->near + below(&r, 2 * g->near + 1);
            if (j < 0 || j >= n) continue;
        } else {
            j = below(&r, n);
        }
        c[k++] = (int32_t)j;
    }
    bool dense_row = false;
    for (int64_t l = 0; l < g->nlines; l++) {
        if (chance(&r, g->line_thr)) c[k++] = g->lines[l];
        if (g->lines[l] == i) dense_row = true;
    }
    if (dense_row) {
        hispi_gen_sample_sorted(&r, n, g->line_len, c + k, tmp);
        k += g->line_len;
    }
    return hispi_gen_sort_unique(c, k, tmp);
}

/* Blocks of `block` rows: each block row holds its dense diagonal block and,
 * with probability 1/4, one more dense block 1 or 2 blocks away. */
int64_t hispi_gen_row_blockdiag(const gen *g, int64_t i, int32_t *c, int32_t *tmp)
{
    (void)tmp;
    int64_t b = g->block, br = i / b, nb = (g->n + b - 1) / b;
    rng r = rng_at(g->key, (uint64_t)br, S_BLOCK);
    int64_t off = -1;
    if (chance(&r, (uint64_t)1 << 51)) {
        int64_t d = below(&r, 4);
        int64_t bc = br + (d < 2 ? d - 2 : d - 1);
        if (bc >= 0 && bc < nb) off = bc;
    }
    int64_t k = 0;
    for (int64_t pass = 0; pass < 3; pass++) {
        int64_t bc = pass == 1 ? br : off;
        if (bc < 0 || (pass == 0 && bc > br) || (pass == 2 && bc < br)) continue;
        int64_t hi = (bc + 1) * b < g->n ? (bc + 1) * b : g->n;
        for (int64_t j = bc * b; j < hi; j++)
            c[k++] = (int32_t)j;
    }
    return k;
}

/* ---- both passes over the rows ------------------------------------------ */

typedef struct {
    const gen *g;
    int pass;
    int64_t chunk;
    int64_t *rowptr;
    int32_t *colind;
    void *val;
    atomic_llong next;
    atomic_int failed;
} row_job;

static void *row_worker(void *arg)
{
    row_job *j = arg;
    const gen *g = j->g;
    int32_t *buf = malloc((size_t)g->bound * 2 * sizeof *buf + 4);
    if (!buf) {
        atomic_store(&j->failed, 1);
        return NULL;
    }
    for (;;) {
        int64_t lo = atomic_fetch_add(&j->next, j->chunk);
        if (lo >= g->n || atomic_load(&j->failed)) break;
        int64_t hi = lo + j->chunk < g->n ? lo + j->chunk : g->n;
        for (int64_t i = lo; i < hi; i++) {
            int64_t len = g->row(g, i, buf, buf + g->bound);
            if (j->pass == 1) {
                j->rowptr[i + 1] = len;
                continue;
            }
            int64_t start = j->rowptr[i];
            memcpy(j->colind + start, buf, (size_t)len * sizeof *buf);
            if (g->value) {
                for (int64_t q = 0; q < len; q++)
                    put(g->type, j->val, start + q, g->value(g, i, buf[q]));
            } else if (g->diag != 0) {
                for (int64_t q = 0; q < len; q++)
                    put(g->type, j->val, start + q, buf[q] == i ? g->diag : -1.0);
            } else {
                rng r = rng_at(g->key, (uint64_t)i, S_VALS);
                for (int64_t q = 0; q < len; q++)
                    put(g->type, j->val, start + q, uval(g->scalar, next(&r)));
            }
        }
    }
    free(buf);
    return NULL;
}

hisp_status hispi_gen_rows(hisp_context ctx, const gen *g, double est_nnz, hispi_sparse *out)
{
    int64_t n = g->n;
    int64_t *rowptr = NULL;
    HISPI_TRY(hispi_calloc(ctx, (size_t)n + 1, sizeof *rowptr, (void **)&rowptr));
    row_job j = {.g = g, .pass = 1, .rowptr = rowptr};
    /* chunks of about 16k entries: balance, yet few atomic operations */
    double per_row = n > 0 ? est_nnz / (double)n : 1;
    j.chunk = per_row >= 16384 ? 1 : (int64_t)(16384 / (per_row > 1 ? per_row : 1));
    int threads = hispi_threads(ctx, est_nnz);
    atomic_init(&j.next, 0);
    atomic_init(&j.failed, 0);
    hispi_parallel(threads, row_worker, &j);
    if (atomic_load(&j.failed)) {
        free(rowptr);
        return hispi_fail(ctx, HISP_ERR_OUT_OF_HOST_MEMORY,
                          "generator: no memory for a row buffer");
    }
    for (int64_t i = 0; i < n; i++)
        rowptr[i + 1] += rowptr[i];
    int64_t nnz = rowptr[n];
    memset(out, 0, sizeof *out);
    out->format = HISP_FORMAT_CSR;
    out->type = g->type;
    out->nrows = out->ncols = n;
    out->nnz = nnz;
    out->sorted = true;
    out->rowptr = rowptr;
    hisp_status s = hispi_alloc(ctx, (size_t)nnz, sizeof(int32_t), (void **)&out->colind);
    if (!s) s = hispi_alloc(ctx, (size_t)nnz, hisp_type_size(g->type), &out->val);
    if (s) {
        hispi_sparse_free(out);
        return s;
    }
    j.pass = 2;
    j.colind = out->colind;
    j.val = out->val;
    atomic_store(&j.next, 0);
    hispi_parallel(threads, row_worker, &j);
    if (atomic_load(&j.failed)) {
        hispi_sparse_free(out);
        return hispi_fail(ctx, HISP_ERR_OUT_OF_HOST_MEMORY,
                          "generator: no memory for a row buffer");
    }
    return HISP_SUCCESS;
}
