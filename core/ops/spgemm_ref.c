/* The host phases of SpGEMM (spgemm.h): Gustavson's row-by-row product in
 * one pass (each thread appends the rows it computes, a marker per column
 * and a dense accumulator, columns sorted; then the rows are copied into
 * C's arrays) and the numeric re-computation over a known structure, in
 * blocks of rows shared by the context's threads. */
#include "spgemm.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

enum { PH_ROWS, PH_COPY, PH_NUMERIC };
enum { BLOCK = 64 }; /* rows a thread takes at a time */

static int cmp_i32(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

/* cols[0..n) sorted: short rows by insertion; rows dense in their column
 * range [lo, hi] by a scan of the marker (mark[j] == i: column j is in the
 * row), which gives them in order; others by qsort. */
static void sort_row(int32_t *cols, int64_t n, const int32_t *mark, int32_t i, int32_t lo,
                     int32_t hi)
{
    if (n <= 32) {
        for (int64_t p = 1; p < n; p++) {
            int32_t c = cols[p];
            int64_t q = p;
            for (; q > 0 && cols[q - 1] > c; q--)
                cols[q] = cols[q - 1];
            cols[q] = c;
        }
    } else if ((int64_t)hi - lo + 1 <= 16 * n) {
        int64_t p = 0;
        for (int32_t j = lo; j <= hi; j++)
            if (mark[j] == i) cols[p++] = j;
    } else {
        qsort(cols, (size_t)n, sizeof *cols, cmp_i32);
    }
}

#define T float
#define NC 1
#define F(name) name##_f32
#include "spgemm_row_t.h"
#undef T
#undef NC
#undef F
#define T double
#define NC 1
#define F(name) name##_f64
#include "spgemm_row_t.h"
#undef T
#undef NC
#undef F
#define T float
#define NC 2
#define F(name) name##_c32
#include "spgemm_row_t.h"
#undef T
#undef NC
#undef F
#define T double
#define NC 2
#define F(name) name##_c64
#include "spgemm_row_t.h"
#undef T
#undef NC
#undef F

typedef int64_t (*fill_fn)(const hispi_spgemm_args *, int32_t, int32_t *, void *, int32_t *,
                           void *);
typedef void (*numeric_fn)(const hispi_spgemm_args *, int32_t, void *, const int32_t *, int64_t,
                           void *);

static bool row_fns(hisp_type t, fill_fn *f, numeric_fn *nf)
{
    switch (t) {
    case HISP_F32:
        *f = fill_row_f32, *nf = numeric_row_f32;
        return true;
    case HISP_F64:
        *f = fill_row_f64, *nf = numeric_row_f64;
        return true;
    case HISP_C32:
        *f = fill_row_c32, *nf = numeric_row_c32;
        return true;
    case HISP_C64:
        *f = fill_row_c64, *nf = numeric_row_c64;
        return true;
    default:
        return false;
    }
}

/* A thread's rows of C as it computes them: columns and values appended
 * block after block (grown by realloc, which on Linux remaps large blocks
 * rather than copying them). */
typedef struct {
    int32_t *cols;
    char *vals;
    int64_t cap, used;
} rows_buf;

/* One phase over C's rows; the threads take blocks of rows from next and a
 * scratch slot each from slot. */
typedef struct {
    const hispi_spgemm_args *g;
    hispi_spgemm_out *out;
    int phase;
    fill_fn fill;
    numeric_fn numeric;
    size_t n, esz;    /* op(B)'s columns; bytes of an entry */
    int32_t *mark;    /* threads x n, or NULL (numeric, copy) */
    char *acc;        /* threads x n entries, or NULL (copy) */
    rows_buf *buf;    /* PH_ROWS, PH_COPY: one per thread */
    int *blk_t;       /* the thread that computed each block of rows */
    int64_t *blk_off; /* where the block starts in that thread's buf */
    _Atomic int64_t next;
    _Atomic int slot;
    _Atomic int failed;   /* PH_ROWS: a buffer could not grow */
    _Atomic int64_t want; /* the entries it needed */
} job;

/* b holds room for k more entries: capacity doubled or made sufficient.
 * No context: a worker thread must not write its error record. */
static bool reserve(rows_buf *b, int64_t k, size_t esz)
{
    if (b->used + k <= b->cap) return true;
    int64_t cap = b->cap * 2 > b->used + k ? b->cap * 2 : b->used + k;
    if (hispi_realloc(NULL, (void **)&b->cols, (size_t)cap, sizeof *b->cols)) return false;
    if (hispi_realloc(NULL, (void **)&b->vals, (size_t)cap, esz)) return false;
    b->cap = cap;
    return true;
}

/* At most this many entries in row i of C: its products, and op(B)'s columns. */
static int64_t row_bound(const hispi_spgemm_args *g, int32_t i)
{
    const hispi_spgemm_operand *a = &g->a, *b = &g->b;
    int64_t k = 0;
    for (int64_t ka = a->rowptr[i]; ka < a->rowptr[i + 1]; ka++) {
        int32_t r = a->colind[ka];
        k += b->rowptr[r + 1] - b->rowptr[r];
    }
    return k < b->ncols ? k : b->ncols;
}

static void rows_block(job *w, int t, int32_t *mark, void *acc, int64_t r0, int64_t r1)
{
    rows_buf *b = &w->buf[t];
    int64_t *ptr = w->out->rowptr;
    w->blk_t[r0 / BLOCK] = t;
    w->blk_off[r0 / BLOCK] = b->used;
    for (int64_t r = r0; r < r1; r++) {
        int32_t i = (int32_t)r;
        int64_t k = row_bound(w->g, i);
        if (!reserve(b, k, w->esz)) {
            atomic_store(&w->want, b->used + k);
            atomic_store(&w->failed, 1);
            return;
        }
        int64_t n = w->fill(w->g, i, mark, acc, b->cols + b->used, b->vals + b->used * w->esz);
        ptr[r + 1] = n;
        b->used += n;
    }
}

static void copy_block(job *w, int64_t r0, int64_t r1)
{
    const rows_buf *b = &w->buf[w->blk_t[r0 / BLOCK]];
    int64_t off = w->blk_off[r0 / BLOCK], *ptr = w->out->rowptr, k = ptr[r1] - ptr[r0];
    memcpy(w->out->colind + ptr[r0], b->cols + off, (size_t)k * sizeof *b->cols);
    memcpy((char *)w->out->val + (size_t)ptr[r0] * w->esz, b->vals + (size_t)off * w->esz,
           (size_t)k * w->esz);
}

static void *worker(void *arg)
{
    job *w = arg;
    int t = atomic_fetch_add(&w->slot, 1);
    int32_t *mark = w->mark ? w->mark + (size_t)t * w->n : NULL;
    void *acc = w->acc ? w->acc + (size_t)t * w->n * w->esz : NULL;
    if (mark) memset(mark, 0xff, w->n * sizeof *mark); /* -1: no row yet */
    int64_t m = w->g->a.nrows;
    int64_t *ptr = w->out->rowptr;
    while (!atomic_load(&w->failed)) {
        int64_t r0 = atomic_fetch_add(&w->next, BLOCK);
        if (r0 >= m) break;
        int64_t r1 = r0 + BLOCK < m ? r0 + BLOCK : m;
        if (w->phase == PH_ROWS)
            rows_block(w, t, mark, acc, r0, r1);
        else if (w->phase == PH_COPY)
            copy_block(w, r0, r1);
        else
            for (int64_t r = r0; r < r1; r++)
                w->numeric(w->g, (int32_t)r, acc, w->out->colind + ptr[r], ptr[r + 1] - ptr[r],
                           (char *)w->out->val + (size_t)ptr[r] * w->esz);
    }
    return NULL;
}

/* The multiply-adds of the product (what sizes the thread count). */
static double products(const hispi_spgemm_args *g)
{
    double f = 0;
    for (int64_t k = 0; k < g->a.nnz; k++) {
        int32_t r = g->a.colind[k];
        f += (double)(g->b.rowptr[r + 1] - g->b.rowptr[r]);
    }
    return f;
}

static void job_free(job *w, int threads)
{
    free(w->mark);
    free(w->acc);
    if (w->buf)
        for (int t = 0; t < threads; t++)
            free(w->buf[t].cols), free(w->buf[t].vals);
    free(w->buf);
    free(w->blk_t);
    free(w->blk_off);
}

/* Runs a phase on `threads` threads with w's scratch (allocated by the
 * calling thread). */
static void run(job *w, int phase, int threads)
{
    w->phase = phase;
    atomic_init(&w->next, 0);
    atomic_init(&w->slot, 0);
    atomic_init(&w->failed, 0);
    atomic_init(&w->want, 0);
    hispi_parallel(threads, worker, w);
}

/* The job of g (its threads: *threads) with the scratch the rows phase
 * (rows) or the numeric phase needs; allocated in the calling thread. */
static hisp_status job_init(hisp_context ctx, const hispi_spgemm_args *g, hispi_spgemm_out *out,
                            bool rows, job *w, int *threads)
{
    memset(w, 0, sizeof *w);
    w->g = g, w->out = out, w->n = (size_t)g->b.ncols, w->esz = hisp_type_size(g->type);
    *threads = 1;
    if (!row_fns(g->type, &w->fill, &w->numeric))
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "SpGEMM of %s entries",
                          hisp_type_name(g->type));
    int64_t m = g->a.nrows, blocks = (m + BLOCK - 1) / BLOCK;
    int t = hispi_threads(ctx, products(g));
    if (t > blocks) t = blocks > 0 ? (int)blocks : 1;
    *threads = t;
    size_t tn = (size_t)t * w->n;
    hisp_status s = hispi_alloc(ctx, tn, w->esz, (void **)&w->acc);
    if (!s && rows) s = hispi_alloc(ctx, tn, sizeof *w->mark, (void **)&w->mark);
    if (!s && rows) s = hispi_calloc(ctx, (size_t)t, sizeof *w->buf, (void **)&w->buf);
    if (!s && rows) s = hispi_alloc(ctx, (size_t)blocks, sizeof *w->blk_t, (void **)&w->blk_t);
    if (!s && rows) s = hispi_alloc(ctx, (size_t)blocks, sizeof *w->blk_off, (void **)&w->blk_off);
    if (s) job_free(w, t);
    return s;
}

/* C's arrays (nnz entries) cannot be had; `part`: a thread's rows so far. */
static hisp_status too_large(hisp_context ctx, const hispi_spgemm_args *g, int64_t nnz, bool part)
{
    double bytes = (double)nnz * (double)(sizeof(int32_t) + hisp_type_size(g->type));
    return hispi_fail(ctx, HISP_ERR_OUT_OF_HOST_MEMORY,
                      "SpGEMM: C (%lld x %lld) needs %s%.0f bytes of host memory (%s%lld "
                      "entries)",
                      (long long)g->a.nrows, (long long)g->b.ncols, part ? "more than " : "",
                      bytes + 8.0 * (double)(g->a.nrows + 1),
                      part ? "one thread's rows reached " : "", (long long)nnz);
}

hisp_status hispi_spgemm_host(hisp_context ctx, const hispi_spgemm_args *g, hispi_spgemm_out *out)
{
    int64_t m = g->a.nrows;
    memset(out, 0, sizeof *out);
    job w;
    int threads;
    HISPI_TRY(job_init(ctx, g, out, true, &w, &threads));
    hisp_status s = hispi_calloc(ctx, (size_t)m + 1, sizeof *out->rowptr, (void **)&out->rowptr);
    if (!s) {
        run(&w, PH_ROWS, threads);
        if (atomic_load(&w.failed)) s = too_large(ctx, g, atomic_load(&w.want), true);
    }
    if (!s) s = hispi_spgemm_prefix(ctx, out->rowptr, m);
    int64_t nnz = s ? 0 : out->rowptr[m];
    if (!s && threads == 1 && nnz > 0) { /* the one thread's rows are C's: kept, trimmed */
        out->colind = w.buf[0].cols, out->val = w.buf[0].vals;
        w.buf[0].cols = NULL, w.buf[0].vals = NULL;
        void *c = realloc(out->colind, (size_t)nnz * sizeof *out->colind);
        void *v = realloc(out->val, (size_t)nnz * w.esz);
        if (c) out->colind = c; /* a failed trim keeps the larger block */
        if (v) out->val = v;
    } else if (!s) {
        s = hispi_alloc(ctx, (size_t)nnz, sizeof *out->colind, (void **)&out->colind);
        if (!s) s = hispi_alloc(ctx, (size_t)nnz, w.esz, &out->val);
        if (s) s = too_large(ctx, g, nnz, false);
        if (!s) run(&w, PH_COPY, threads);
    }
    job_free(&w, threads);
    if (s) {
        free(out->rowptr), free(out->colind), free(out->val);
        memset(out, 0, sizeof *out);
    }
    return s;
}

hisp_status hispi_spgemm_numeric(hisp_context ctx, const hispi_spgemm_args *g,
                                 hispi_spgemm_out *out)
{
    job w;
    int threads;
    HISPI_TRY(job_init(ctx, g, out, false, &w, &threads));
    run(&w, PH_NUMERIC, threads);
    job_free(&w, threads);
    return HISP_SUCCESS;
}
