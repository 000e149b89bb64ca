/* The host phases of SpGEMM (spgemm.h): Gustavson's row-by-row product,
 * symbolic (row counts with a marker per column), fill (columns and values
 * with a dense accumulator, columns sorted by insertion or a bitmap) and
 * numeric (values over a known structure), in blocks of rows shared by the
 * context's threads. */
#include "spgemm.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

enum { PH_COUNT, PH_FILL, PH_NUMERIC };
enum { BLOCK = 64 }; /* rows a thread takes at a time */

/* A row's columns in order by a bitmap of op(B)'s columns with a summary
 * bit per 64-bit word of it (all zero between rows): n/8 + n/512 bytes a
 * thread (CA-HepPh: 11 KiB, in the L1 cache). Sorting a row costs its
 * entries plus a scan of the summary words of its column range; glibc's
 * qsort had taken a third of CA-HepPh's A*A. */
typedef struct {
    uint64_t *bits, *sum;
} colset;

static size_t colset_words(size_t n)
{
    return (n + 63) / 64;
}

/* cols[0..n) (distinct, all in [lo, hi]) sorted through the empty set s,
 * left empty. */
static void colset_sort(colset *s, int32_t *cols, int64_t n, int32_t lo, int32_t hi)
{
    for (int64_t p = 0; p < n; p++) {
        int32_t j = cols[p];
        s->bits[j >> 6] |= (uint64_t)1 << (j & 63);
        s->sum[j >> 12] |= (uint64_t)1 << ((j >> 6) & 63);
    }
    int64_t p = 0;
    for (int32_t q = lo >> 12; q <= hi >> 12; q++) {
        uint64_t sw = s->sum[q];
        s->sum[q] = 0;
        while (sw) {
            int32_t wi = (q << 6) + __builtin_ctzll(sw);
            sw &= sw - 1;
            uint64_t bw = s->bits[wi];
            s->bits[wi] = 0;
            while (bw) {
                cols[p++] = (wi << 6) + __builtin_ctzll(bw);
                bw &= bw - 1;
            }
        }
    }
}

/* cols[0..n) sorted: short rows by insertion, others through the set (a
 * scan of the marker over a dense row's range had cost 16 reads an entry
 * where the set's words cost a quarter of one: circuit's A*A). */
static void sort_row(int32_t *cols, int64_t n, colset *set, int32_t lo, int32_t hi)
{
    if (n > 32) {
        colset_sort(set, cols, n, lo, hi);
        return;
    }
    for (int64_t p = 1; p < n; p++) {
        int32_t c = cols[p];
        int64_t q = p;
        for (; q > 0 && cols[q - 1] > c; q--)
            cols[q] = cols[q - 1];
        cols[q] = c;
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

typedef void (*fill_fn)(const hispi_spgemm_args *, int32_t, int32_t *, colset *, void *, int32_t *,
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

/* The multiply-adds of the product as far as they size the thread count
 * (a pass over all of A had cost poisson3d 100^3's A*A 7 %). */
static double products(const hispi_spgemm_args *g)
{
    double f = 0;
    for (int64_t k = 0; k < g->a.nnz && f < HISPI_PARALLEL_WORK; k++) {
        int32_t r = g->a.colind[k];
        f += (double)(g->b.rowptr[r + 1] - g->b.rowptr[r]);
    }
    return f;
}

/* The threads' scratch of the phases: a marker of op(B)'s columns (count,
 * fill), a dense accumulator (fill, numeric) and the sets that sort
 * (fill), one of each a thread; made once for the count and the fill of a
 * product (fresh pages cost poisson3d 100^3's A*A 8 % a phase). */
typedef struct {
    int threads;
    fill_fn fill; /* the entry type's row loops */
    numeric_fn numeric;
    size_t n, esz;        /* op(B)'s columns; bytes of an entry */
    int32_t *mark;        /* threads x n, or NULL (numeric) */
    uint64_t *bits, *sum; /* the threads' sets for sorting (fill), or NULL */
    size_t nb, ns;        /* words of a set's bits, of its summary */
    char *acc;            /* threads x n entries, or NULL */
} scratch;

static void scratch_free(scratch *sc)
{
    free(sc->mark), free(sc->bits), free(sc->sum), free(sc->acc);
    memset(sc, 0, sizeof *sc);
}

/* The scratch for the fill (and the count before it), or for the numeric
 * phase (numeric); allocated here, in the calling thread. An entry type
 * without row loops is refused. */
static hisp_status scratch_make(hisp_context ctx, const hispi_spgemm_args *g, bool numeric,
                                scratch *sc)
{
    memset(sc, 0, sizeof *sc);
    if (!row_fns(g->type, &sc->fill, &sc->numeric))
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "SpGEMM of %s entries",
                          hisp_type_name(g->type));
    sc->n = (size_t)g->b.ncols;
    sc->esz = hisp_type_size(g->type);
    int64_t blocks = (g->a.nrows + BLOCK - 1) / BLOCK;
    sc->threads = hispi_threads(ctx, products(g));
    if (sc->threads > blocks) sc->threads = blocks > 0 ? (int)blocks : 1;
    size_t tn = (size_t)sc->threads * sc->n;
    sc->nb = colset_words(sc->n), sc->ns = colset_words(sc->nb);
    hisp_status s = hispi_alloc(ctx, tn, sc->esz, (void **)&sc->acc);
    if (!s && !numeric) s = hispi_alloc(ctx, tn, sizeof *sc->mark, (void **)&sc->mark);
    if (!s && !numeric)
        s = hispi_calloc(ctx, (size_t)sc->threads * sc->nb, sizeof *sc->bits, (void **)&sc->bits);
    if (!s && !numeric)
        s = hispi_calloc(ctx, (size_t)sc->threads * sc->ns, sizeof *sc->sum, (void **)&sc->sum);
    if (s) scratch_free(sc);
    return s;
}

/* One phase over C's rows; the threads take blocks of rows from next and a
 * scratch slot each from slot. */
typedef struct {
    const hispi_spgemm_args *g;
    hispi_spgemm_out *out;
    int phase;
    const scratch *sc;
    _Atomic int64_t next;
    _Atomic int slot;
} job;

static int64_t count_row(const hispi_spgemm_args *g, int32_t i, int32_t *mark)
{
    const hispi_spgemm_operand *a = &g->a, *b = &g->b;
    int64_t n = 0;
    for (int64_t ka = a->rowptr[i]; ka < a->rowptr[i + 1]; ka++) {
        int32_t r = a->colind[ka];
        for (int64_t kb = b->rowptr[r]; kb < b->rowptr[r + 1]; kb++) {
            int32_t j = b->colind[kb];
            if (mark[j] != i) {
                mark[j] = i;
                n++;
            }
        }
    }
    return n;
}

static void *worker(void *arg)
{
    job *w = arg;
    const scratch *sc = w->sc;
    int t = atomic_fetch_add(&w->slot, 1);
    int32_t *mark = w->phase != PH_NUMERIC ? sc->mark + (size_t)t * sc->n : NULL;
    void *acc = sc->acc + (size_t)t * sc->n * sc->esz;
    if (mark) memset(mark, 0xff, sc->n * sizeof *mark); /* -1: no row yet */
    colset set = {sc->bits ? sc->bits + (size_t)t * sc->nb : NULL,
                  sc->sum ? sc->sum + (size_t)t * sc->ns : NULL};
    int64_t m = w->g->a.nrows;
    int64_t *ptr = w->out->rowptr;
    size_t esz = sc->esz;
    for (;;) {
        int64_t r0 = atomic_fetch_add(&w->next, BLOCK);
        if (r0 >= m) break;
        int64_t r1 = r0 + BLOCK < m ? r0 + BLOCK : m;
        for (int64_t r = r0; r < r1; r++) {
            int32_t i = (int32_t)r;
            if (w->phase == PH_COUNT)
                ptr[r + 1] = count_row(w->g, i, mark);
            else if (w->phase == PH_FILL)
                sc->fill(w->g, i, mark, &set, acc, w->out->colind + ptr[r],
                         (char *)w->out->val + (size_t)ptr[r] * esz);
            else
                sc->numeric(w->g, i, acc, w->out->colind + ptr[r], ptr[r + 1] - ptr[r],
                            (char *)w->out->val + (size_t)ptr[r] * esz);
        }
    }
    return NULL;
}

/* Runs a phase on the scratch's threads. */
static void run_phase(const hispi_spgemm_args *g, hispi_spgemm_out *out, int phase,
                      const scratch *sc)
{
    job w = {.g = g, .out = out, .phase = phase, .sc = sc};
    atomic_init(&w.next, 0);
    atomic_init(&w.slot, 0);
    hispi_parallel(sc->threads, worker, &w);
}

hisp_status hispi_spgemm_host(hisp_context ctx, const hispi_spgemm_args *g, hispi_spgemm_out *out)
{
    scratch sc;
    HISPI_TRY(scratch_make(ctx, g, false, &sc));
    out->rowptr[0] = 0;
    run_phase(g, out, PH_COUNT, &sc);
    hisp_status s = hispi_spgemm_prefix(ctx, out->rowptr, g->a.nrows);
    if (!s) s = hispi_spgemm_alloc_out(ctx, g, out);
    if (!s) run_phase(g, out, PH_FILL, &sc);
    scratch_free(&sc);
    return s;
}

hisp_status hispi_spgemm_numeric(hisp_context ctx, const hispi_spgemm_args *g,
                                 hispi_spgemm_out *out)
{
    scratch sc;
    HISPI_TRY(scratch_make(ctx, g, true, &sc));
    run_phase(g, out, PH_NUMERIC, &sc);
    scratch_free(&sc);
    return HISP_SUCCESS;
}
