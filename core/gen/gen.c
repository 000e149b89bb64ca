/* Matrix generators.
 *
 * Kinds (square matrices; "random" values are uniform in [-1, 1)):
 *   poisson2d/3d  5-/7-point Laplacian on an n^2 / n^3 grid, natural
 *                 ordering, 4|6 on the diagonal and -1 off it.
 *   banded        row i: the diagonal plus nnz_per_row-1 distinct random
 *                 columns of the window |i-j| <= bandwidth (a fractional
 *                 nnz_per_row rounds up or down at random, clipped to the
 *                 window).
 *   random        Erdos-Renyi-like: row length Binomial(4*nnz_per_row, 1/4)
 *                 (mean nnz_per_row), distinct uniform columns.
 *   rmat          Graph500 R-MAT, a=.57 b=.19 c=.19 d=.05 (15-bit
 *                 resolution per level), edge_factor*2^scale edges;
 *                 repeated edges merged (nnz <= edges), self loops kept,
 *                 vertex labels not permuted (vertex 0 is the hub).
 *   dense         every entry.
 *   circuit       power/ground nets: floor(log2 n)/2 dense rows and the
 *                 columns of the same indices (more when one line would
 *                 exceed half the width; the indices are random), holding
 *                 dense_share of the entries; every other entry follows
 *                 row i: diagonal + Binomial(4*(nnz_per_row-1), 1/4)
 *                 entries, 3/4 of them within +-64 of the diagonal, the rest
 *                 anywhere. A row meets each dense column with probability
 *                 line_len/n, a dense row adds line_len random columns,
 *                 line_len = n*nnz_per_row*share/(1-share)/(2*lines).
 *   blockdiag     dense block x block clusters on the diagonal (the last
 *                 one cut at n); a quarter of the block rows get one more
 *                 dense block 1 or 2 blocks left or right.
 *
 * Determinism: every random draw comes from a counter-based stream keyed by
 * (seed, kind, row or edge index, purpose), built on the splitmix64 mixer, and
 * decisions use integer arithmetic or the exact IEEE operations (+ - * /) only,
 * no libm. So the same params and type give bit-identical output on any
 * machine, compiler and number of threads: rows (rmat: edges) are generated
 * independently, in parallel with pthreads for large sizes.
 *
 * Row-wise kinds run two passes over the rows: pass 1 generates each row's
 * sorted, distinct columns into a scratch buffer and records the length,
 * pass 2 regenerates them into the final arrays (after the prefix sum) and
 * draws the values from a separate per-row stream, so f32 and f64 share the
 * pattern. rmat samples its edge list in parallel, buckets it by row with a
 * counting sort, sorts and merges each row, and gives each distinct entry a
 * value hashed from (seed, row, column) (not the sum over repeated edges).
 *
 * Values: 53 random bits for 8-byte scalars, the top 24 of them for 4-byte
 * scalars (exact in float, so f32 values are the f64 ones truncated).
 *
 * HISP_GEN_THREADS in the environment caps the number of threads (tests use
 * it to show the output does not depend on it).
 */
#include "hispi.h"

#include <math.h> /* isfinite only: no libm calls (determinism) */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* ---- random numbers ----------------------------------------------------- */

static inline uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

typedef hispi_rng rng;

/* Stream purposes, so that a row's columns and values never share draws. */
enum { S_COLS = 1, S_VALS, S_LINES, S_BLOCK, S_EDGE, S_ENTRY };

static inline rng rng_at(uint64_t key, uint64_t index, uint64_t purpose)
{
    rng r = {mix64(key ^ mix64(index * 0x9e3779b97f4a7c15ull + purpose))};
    return r;
}

static inline uint64_t next(rng *r)
{
    return mix64(r->s += 0x9e3779b97f4a7c15ull);
}

/* High 64 bits of a 64x64 product (the same on every platform). */
static inline uint64_t mulhi64(uint64_t a, uint64_t b)
{
#ifdef __SIZEOF_INT128__
    return (uint64_t)(((unsigned __int128)a * b) >> 64);
#else
    uint64_t al = (uint32_t)a, ah = a >> 32, bl = (uint32_t)b, bh = b >> 32;
    uint64_t p0 = al * bl, p1 = al * bh, p2 = ah * bl, p3 = ah * bh;
    uint64_t mid = (p0 >> 32) + (uint32_t)p1 + (uint32_t)p2;
    return p3 + (p1 >> 32) + (p2 >> 32) + (mid >> 32);
#endif
}

/* Uniform in [0, m), 0 < m < 2^32 (multiply-shift; bias below 2^-32). */
static inline int64_t below(rng *r, int64_t m)
{
    return (int64_t)mulhi64(next(r), (uint64_t)m);
}

/* Probability p as a threshold on 53-bit draws. */
static inline uint64_t prob_threshold(double p)
{
    if (!(p > 0)) return 0;
    if (p >= 1) return (uint64_t)1 << 53;
    return (uint64_t)(p * 9007199254740992.0);
}

static inline bool chance(rng *r, uint64_t thr)
{
    return (next(r) >> 11) < thr;
}

/* Portable popcount (no libgcc call without -mpopcnt). */
static inline int64_t popcount64(uint64_t x)
{
    x = x - ((x >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return (int64_t)((x * 0x0101010101010101ull) >> 56);
}

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

/* Uniform value in [-1, 1) for an entry of type t. */
static inline double uval(size_t scalar, uint64_t x)
{
    if (scalar == 4) return (double)((int64_t)(x >> 40) - ((int64_t)1 << 23)) * 0x1p-23;
    return (double)((int64_t)(x >> 11) - ((int64_t)1 << 52)) * 0x1p-52;
}

static inline void put(hisp_type t, void *val, int64_t k, double v)
{
    if (t == HISP_F64)
        ((double *)val)[k] = v;
    else if (t == HISP_F32)
        ((float *)val)[k] = (float)v;
    else
        hispi_store_real(t, val, k, v);
}

/* Exported for core/gen_perturb.c (hispi.h); the generators here keep the
 * inline versions. */
uint64_t hispi_mix64(uint64_t z)
{
    return mix64(z);
}

hispi_rng hispi_rng_at(uint64_t key, uint64_t index, uint64_t purpose)
{
    return rng_at(key, index, purpose);
}

uint64_t hispi_rng_next(hispi_rng *r)
{
    return next(r);
}

int64_t hispi_rng_below(hispi_rng *r, int64_t m)
{
    return below(r, m);
}

double hispi_gen_value(size_t scalar, uint64_t x)
{
    return uval(scalar, x);
}

/* ---- sorted samples ----------------------------------------------------- */

static void sift_down(int32_t *a, int64_t root, int64_t n)
{
    int32_t v = a[root];
    for (int64_t c; (c = 2 * root + 1) < n; root = c) {
        if (c + 1 < n && a[c + 1] > a[c]) c++;
        if (a[c] <= v) break;
        a[root] = a[c];
    }
    a[root] = v;
}

static void insertion_sort(int32_t *a, int64_t n)
{
    for (int64_t i = 1; i < n; i++) {
        int32_t v = a[i];
        int64_t j = i;
        for (; j > 0 && a[j - 1] > v; j--)
            a[j] = a[j - 1];
        a[j] = v;
    }
}

/* Introsort: quicksort (median of three put in place, Hoare partition,
 * recursion on the smaller side), heapsort when too deep, insertion sort
 * for short runs. O(n log n) on any input, including the sorted runs with
 * a few strays that the samplers produce; no comparator calls. */
static void intro_sort(int32_t *a, int64_t n, int depth)
{
    while (n > 24) {
        if (depth-- <= 0) {
            for (int64_t r = n / 2 - 1; r >= 0; r--)
                sift_down(a, r, n);
            for (int64_t e = n - 1; e > 0; e--) {
                int32_t t = a[0];
                a[0] = a[e];
                a[e] = t;
                sift_down(a, 0, e);
            }
            return;
        }
        int64_t m = n / 2;
        int32_t t;
#define SWAP_IF(x, y)                                                                              \
    if (a[y] < a[x]) {                                                                             \
        t = a[x];                                                                                  \
        a[x] = a[y];                                                                               \
        a[y] = t;                                                                                  \
    }
        SWAP_IF(0, m);
        SWAP_IF(m, n - 1);
        SWAP_IF(0, m);
#undef SWAP_IF
        int32_t pivot = a[m];
        int64_t i = 0, j = n - 1; /* a[0] <= pivot <= a[n-1] act as sentinels */
        for (;;) {
            do {
                i++;
            } while (a[i] < pivot);
            do {
                j--;
            } while (a[j] > pivot);
            if (i >= j) break;
            t = a[i];
            a[i] = a[j];
            a[j] = t;
        }
        /* [0, j] <= pivot <= [j+1, n) */
        if (j + 1 < n - j - 1) {
            intro_sort(a, j + 1, depth);
            a += j + 1;
            n -= j + 1;
        } else {
            intro_sort(a + j + 1, n - j - 1, depth);
            n = j + 1;
        }
    }
    insertion_sort(a, n);
}

/* LSD radix sort of non-negative keys, 11 bits a pass, skipping passes
 * whose digit is the same for every key; tmp holds n entries. */
static void radix_sort(int32_t *a, int64_t n, int32_t *tmp)
{
    int64_t count[2048];
    int32_t *src = a, *dst = tmp;
    for (int shift = 0; shift < 31; shift += 11) {
        memset(count, 0, sizeof count);
        for (int64_t k = 0; k < n; k++)
            count[((uint32_t)src[k] >> shift) & 2047]++;
        if (count[((uint32_t)src[0] >> shift) & 2047] == n) continue;
        int64_t sum = 0;
        for (int d = 0; d < 2048; d++) {
            int64_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (int64_t k = 0; k < n; k++)
            dst[count[((uint32_t)src[k] >> shift) & 2047]++] = src[k];
        int32_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != a) memcpy(a, src, (size_t)n * sizeof *a);
}

/* Sort; tmp (n entries, may be NULL) enables the radix sort for long runs. */
static void sort_i32(int32_t *a, int64_t n, int32_t *tmp)
{
    if (tmp && n > 1024) {
        radix_sort(a, n, tmp);
        return;
    }
    int depth = 0;
    for (int64_t m = n; m > 1; m >>= 1)
        depth += 2;
    intro_sort(a, n, depth);
}

/* Sort and drop repeats; returns the new length. */
static int64_t sort_unique(int32_t *a, int64_t n, int32_t *tmp)
{
    sort_i32(a, n, tmp);
    int64_t m = 0;
    for (int64_t k = 0; k < n; k++)
        if (m == 0 || a[m - 1] != a[k]) a[m++] = a[k];
    return m;
}

/* k distinct values of [0, m), sorted, uniform over k-subsets, into out.
 * Dense requests walk the range (selection sampling, O(m)); sparse ones draw,
 * sort, drop repeats and draw again for the missing ones. */
static void sample_sorted(rng *r, int64_t m, int64_t k, int32_t *out, int32_t *tmp)
{
    if (k <= 0) return;
    if (k * 4 >= m) {
        int64_t got = 0;
        for (int64_t t = 0; t < m && got < k; t++)
            if (below(r, m - t) < k - got) out[got++] = (int32_t)t;
        return;
    }
    int64_t got = 0;
    while (got < k) {
        for (int64_t q = got; q < k; q++)
            out[q] = (int32_t)below(r, m);
        got = sort_unique(out, k, tmp);
    }
}

/* ---- generator state ---------------------------------------------------- */

typedef struct gen gen;
/* Writes row i's sorted distinct columns into buf (at most g->bound of
 * them, possibly with repeats before the final unique step) and returns how
 * many. */
typedef int64_t (*row_fn)(const gen *g, int64_t i, int32_t *buf, int32_t *tmp);

struct gen {
    hisp_type type;
    size_t scalar;
    uint64_t key;
    int64_t n;     /* rows = columns */
    int64_t side;  /* poisson grid side */
    int64_t bw;    /* banded */
    double npr;    /* banded, random, circuit */
    uint64_t frac; /* banded: threshold for the extra entry */
    int64_t block; /* blockdiag */
    /* circuit */
    int64_t nlines, line_len, near;
    int32_t *lines;    /* sorted indices of the dense rows and columns */
    uint64_t line_thr; /* chance that a row meets a dense column */
    uint64_t near_thr; /* chance that a sparse entry is near the diagonal */
    double diag;       /* Laplacian diagonal; 0 = random values */
    int64_t bound;     /* scratch entries one row may need */
    row_fn row;
};

static int64_t row_poisson2d(const gen *g, int64_t i, int32_t *c, int32_t *tmp)
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

static int64_t row_poisson3d(const gen *g, int64_t i, int32_t *c, int32_t *tmp)
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
static int64_t row_banded(const gen *g, int64_t i, int32_t *c, int32_t *tmp)
{
    rng r = rng_at(g->key, (uint64_t)i, S_COLS);
    int64_t lo = i - g->bw < 0 ? 0 : i - g->bw;
    int64_t hi = i + g->bw > g->n - 1 ? g->n - 1 : i + g->bw;
    int64_t w = hi - lo + 1;
    int64_t k = (int64_t)g->npr + (chance(&r, g->frac) ? 1 : 0);
    if (k > w) k = w;
    if (k < 1) k = 1;
    sample_sorted(&r, w - 1, k - 1, c, tmp); /* offsets among the w-1 off-diagonal ones */
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

static int64_t row_random(const gen *g, int64_t i, int32_t *c, int32_t *tmp)
{
    rng r = rng_at(g->key, (uint64_t)i, S_COLS);
    int64_t k = random_len(&r, g->npr);
    if (k > g->n) k = g->n;
    sample_sorted(&r, g->n, k, c, tmp);
    return k;
}

static int64_t row_dense(const gen *g, int64_t i, int32_t *c, int32_t *tmp)
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
static int64_t row_circuit(const gen *g, int64_t i, int32_t *c, int32_t *tmp)
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
        sample_sorted(&r, n, g->line_len, c + k, tmp);
        k += g->line_len;
    }
    return sort_unique(c, k, tmp);
}

/* Blocks of `block` rows: each block row holds its dense diagonal block and,
 * with probability 1/4, one more dense block 1 or 2 blocks away. */
static int64_t row_blockdiag(const gen *g, int64_t i, int32_t *c, int32_t *tmp)
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

/* ---- threads ------------------------------------------------------------ */

static int thread_count(double work)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int t = cpus < 1 ? 1 : cpus > 16 ? 16 : (int)cpus;
    const char *env = getenv("HISP_GEN_THREADS");
    if (env && atoi(env) >= 1 && atoi(env) < t) t = atoi(env);
    if (work < 2e5) t = 1;
    return t;
}

/* Run fn(arg) on `threads` threads (the caller included); a thread that
 * cannot be started leaves its share to the others (the work is shared
 * through an atomic counter), so the result does not change. */
static void run_parallel(int threads, void *(*fn)(void *), void *arg)
{
    pthread_t tid[16];
    int started = 0;
    for (int t = 1; t < threads; t++)
        if (pthread_create(&tid[started], NULL, fn, arg) == 0) started++;
    fn(arg);
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
}

int hispi_gen_threads(double work)
{
    return thread_count(work);
}

void hispi_gen_parallel(int threads, void *(*fn)(void *), void *arg)
{
    run_parallel(threads, fn, arg);
}

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
            if (g->diag != 0) {
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

static hisp_status gen_rows(hisp_context ctx, const gen *g, double est_nnz, hispi_sparse *out)
{
    int64_t n = g->n;
    int64_t *rowptr = NULL;
    HISPI_TRY(hispi_calloc(ctx, (size_t)n + 1, sizeof *rowptr, (void **)&rowptr));
    row_job j = {.g = g, .pass = 1, .rowptr = rowptr};
    /* chunks of about 16k entries: balance, yet few atomic operations */
    double per_row = n > 0 ? est_nnz / (double)n : 1;
    j.chunk = per_row >= 16384 ? 1 : (int64_t)(16384 / (per_row > 1 ? per_row : 1));
    int threads = thread_count(est_nnz);
    atomic_init(&j.next, 0);
    atomic_init(&j.failed, 0);
    run_parallel(threads, row_worker, &j);
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
    run_parallel(threads, row_worker, &j);
    if (atomic_load(&j.failed)) {
        hispi_sparse_free(out);
        return hispi_fail(ctx, HISP_ERR_OUT_OF_HOST_MEMORY,
                          "generator: no memory for a row buffer");
    }
    return HISP_SUCCESS;
}

/* ---- rmat --------------------------------------------------------------- */

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
                j->len[i] = sort_unique(c, j->len[i], tmp);
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

static hisp_status gen_rmat(hisp_context ctx, const gen *g, int scale, int64_t edges,
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
    int threads = thread_count((double)edges);
    edge_job ej = {
        .key = g->key, .scale = scale, .edges = edges, .chunk = 65536, .src = src, .dst = dst};
    atomic_init(&ej.next, 0);
    run_parallel(threads, edge_worker, &ej);

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
    run_parallel(threads, rmat_row_worker, &rj);
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
    run_parallel(threads, rmat_row_worker, &rj);
    return HISP_SUCCESS;
fail:
    free(src);
    free(dst);
    free(col);
    free(rowptr);
    free(len);
    return s;
}

/* ---- parameters --------------------------------------------------------- */

static const char *const kind_names[HISP_GEN_COUNT] = {
    "poisson2d", "poisson3d", "banded", "random", "rmat", "dense", "circuit", "blockdiag"};

const char *hisp_gen_name(hisp_gen_kind kind)
{
    if ((int)kind < 0 || kind >= HISP_GEN_COUNT) return "unknown";
    return kind_names[kind];
}

hisp_status hisp_gen_from_name(const char *name, hisp_gen_kind *kind)
{
    if (!name || !kind) return HISP_ERR_INVALID_ARGUMENT;
    for (int k = 0; k < HISP_GEN_COUNT; k++)
        if (strcasecmp(name, kind_names[k]) == 0) {
            *kind = (hisp_gen_kind)k;
            return HISP_SUCCESS;
        }
    return HISP_ERR_INVALID_ARGUMENT;
}

void hisp_gen_defaults(hisp_gen_kind kind, hisp_gen_params *p)
{
    if (!p) return;
    memset(p, 0, sizeof *p);
    p->kind = kind;
    p->seed = 1;
    p->n = 100000;
    p->bandwidth = 8;
    p->nnz_per_row = 8;
    p->scale = 16;
    p->edge_factor = 8;
    p->block = 8;
    p->dense_share = 0.3;
    switch (kind) {
    case HISP_GEN_POISSON2D:
        p->n = 1000;
        break;
    case HISP_GEN_POISSON3D:
        p->n = 64;
        break;
    case HISP_GEN_BANDED:
        p->nnz_per_row = 16;
        break;
    case HISP_GEN_RMAT:
        p->n = (int64_t)1 << 16;
        break;
    case HISP_GEN_DENSE:
        p->n = 1000;
        break;
    case HISP_GEN_CIRCUIT:
        p->nnz_per_row = 5;
        break;
    default:
        break;
    }
}

/* Refuse sizes this machine cannot hold before spending time on them. */
static hisp_status check_memory(hisp_context ctx, const char *kind, double nnz, double bytes)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    double phys = pages > 0 && page > 0 ? (double)pages * (double)page : 0;
    if (nnz > 9.2e18 || (phys > 0 && bytes > phys))
        return hispi_fail(ctx, HISP_ERR_OUT_OF_HOST_MEMORY,
                          "%s generator: about %.3g entries (%.3g GiB) exceed this machine's "
                          "memory (%.3g GiB)",
                          kind, nnz, bytes / 1073741824.0, phys / 1073741824.0);
    return HISP_SUCCESS;
}

#define BAD(...) hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, __VA_ARGS__)

hisp_status hispi_generate(hisp_context ctx, const hisp_gen_params *p, hisp_type t,
                           hispi_sparse *out)
{
    if (!p || !out) return BAD("generator: NULL params or output");
    memset(out, 0, sizeof *out);
    if ((int)p->kind < 0 || p->kind >= HISP_GEN_COUNT)
        return BAD("generator: unknown kind %d", (int)p->kind);
    const char *name = kind_names[p->kind];
    if (!hispi_type_valid(t)) return BAD("%s generator: invalid entry type %d", name, (int)t);
    if (t != HISP_F32 && t != HISP_F64)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                          "%s generator: entry type %s not supported yet (f32, f64)", name,
                          hisp_type_name(t));
    gen g = {.type = t, .scalar = hispi_type_scalar_size(t), .n = p->n};
    g.key = mix64(p->seed ^ mix64(0x68697370u + (uint64_t)p->kind));
    int64_t n = p->n;
    double npr = p->nnz_per_row;
    if (p->kind != HISP_GEN_RMAT && (n < 0 || n > INT32_MAX))
        return BAD("%s generator: n = %lld is outside 0..2^31-1", name, (long long)n);
    double est = 0; /* expected entries */
    switch (p->kind) {
    case HISP_GEN_POISSON2D:
        if (n > 46340)
            return BAD("%s generator: n = %lld gives more than 2^31-1 rows", name, (long long)n);
        g.side = n;
        g.n = n * n;
        g.row = row_poisson2d;
        g.diag = 4;
        g.bound = 5;
        est = 5.0 * (double)g.n;
        break;
    case HISP_GEN_POISSON3D:
        if (n > 1290)
            return BAD("%s generator: n = %lld gives more than 2^31-1 rows", name, (long long)n);
        g.side = n;
        g.n = n * n * n;
        g.row = row_poisson3d;
        g.diag = 6;
        g.bound = 7;
        est = 7.0 * (double)g.n;
        break;
    case HISP_GEN_BANDED:
        if (p->bandwidth < 0)
            return BAD("%s generator: bandwidth %lld < 0", name, (long long)p->bandwidth);
        if (!(npr >= 1) || !isfinite(npr))
            return BAD("%s generator: nnz_per_row %g must be finite and >= 1", name, npr);
        g.bw = n > 0 && p->bandwidth > n - 1 ? n - 1 : p->bandwidth;
        g.npr = npr > 2.0 * (double)g.bw + 1 ? 2.0 * (double)g.bw + 1 : npr;
        g.frac = prob_threshold(g.npr - (double)(int64_t)g.npr);
        g.row = row_banded;
        g.bound = (int64_t)g.npr + 2;
        est = g.npr * (double)n;
        break;
    case HISP_GEN_RANDOM:
        if (!(npr >= 0) || !isfinite(npr))
            return BAD("%s generator: nnz_per_row %g must be finite and >= 0", name, npr);
        g.npr = npr > (double)n ? (double)n : npr; /* rows hold at most n */
        g.row = row_random;
        g.bound = (int64_t)(4 * g.npr) + 2;
        if (g.bound > n) g.bound = n;
        est = g.npr * (double)n;
        break;
    case HISP_GEN_DENSE:
        g.row = row_dense;
        g.bound = n;
        est = (double)n * (double)n;
        break;
    case HISP_GEN_CIRCUIT: {
        double share = p->dense_share;
        if (!(npr >= 1) || !isfinite(npr))
            return BAD("%s generator: nnz_per_row %g must be finite and >= 1", name, npr);
        if (!(share >= 0 && share <= 0.95))
            return BAD("%s generator: dense_share %g must be in [0, 0.95]", name, share);
        if (npr > (double)n && n > 0) npr = (double)n; /* rows hold at most n */
        g.npr = npr;
        g.row = row_circuit;
        g.near = n - 1 < 64 ? n - 1 : 64;
        g.near_thr = prob_threshold(0.75);
        /* D entries in dense lines next to S = n*npr sparse ones make the
         * share D/(S+D); split over floor(log2 n)/2 rows and as many columns
         * (more when a line would exceed half the matrix width) */
        double dense = (double)n * npr * share / (1 - share);
        int64_t lines = 0;
        if (share > 0 && n > 0) {
            int lg = 0;
            while (((int64_t)1 << (lg + 1)) <= n)
                lg++;
            lines = lg / 2 > 1 ? lg / 2 : 1;
            int64_t need = (int64_t)(dense / (double)n) + 1;
            if (lines < need) lines = need;
            if (lines > n) lines = n;
        }
        g.nlines = lines;
        if (lines > 0) {
            double len = dense / (2.0 * (double)lines);
            g.line_len = len > (double)n ? n : (int64_t)len;
            g.line_thr = prob_threshold((double)g.line_len / (double)n);
        }
        g.bound = 2 + (int64_t)(4 * npr) + lines + g.line_len;
        est = (double)n * npr + 2.0 * (double)lines * (double)g.line_len;
        break;
    }
    case HISP_GEN_BLOCKDIAG:
        if (p->block < 1) return BAD("%s generator: block %d must be >= 1", name, p->block);
        g.block = n > 0 && p->block > n ? n : p->block;
        g.row = row_blockdiag;
        g.bound = 2 * g.block;
        est = 1.25 * (double)n * (double)g.block;
        break;
    case HISP_GEN_RMAT: {
        if (p->scale < 0 || p->scale > 30)
            return BAD("%s generator: scale %d must be in 0..30", name, p->scale);
        if (p->edge_factor < 0)
            return BAD("%s generator: edge_factor %d must be >= 0", name, p->edge_factor);
        int64_t edges = (int64_t)p->edge_factor << p->scale;
        double e = (double)edges;
        HISPI_TRY(check_memory(ctx, name, e, e * 12 + 16.0 * (double)((int64_t)1 << p->scale)));
        return gen_rmat(ctx, &g, p->scale, edges, out);
    }
    default:
        return BAD("generator: unknown kind %d", (int)p->kind);
    }
    HISPI_TRY(
        check_memory(ctx, name, est, est * (4.0 + (double)hisp_type_size(t)) + 8.0 * (double)g.n));
    if (p->kind == HISP_GEN_CIRCUIT && g.nlines > 0) {
        HISPI_TRY(hispi_alloc(ctx, (size_t)g.nlines, sizeof *g.lines, (void **)&g.lines));
        rng r = rng_at(g.key, 0, S_LINES);
        sample_sorted(&r, n, g.nlines, g.lines, NULL);
    }
    hisp_status s = gen_rows(ctx, &g, est, out);
    free(g.lines);
    return s;
}
