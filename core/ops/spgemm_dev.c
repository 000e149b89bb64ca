/* SpGEMM on the device (spgemm.h): the product of two operand views through
 * the backend's run-time kernels (kernels/spgemm.cl, OpenCL and NVRTC), for
 * backends that have them; the reference backend keeps the host phases
 * (spgemm_ref.c), which stay the oracle.
 *
 * One call: op(A) and op(B)'s CSR arrays are uploaded (a transposed
 * operand's values gathered through its permutation and conjugated for op
 * H on the host first; an operand that lives on the device in hisp's
 * layout is read in place), then, in one pass over all rows (one_pass):
 *   1. sg_class: each row's products and bound (at most B's columns) and
 *      its class (kernels/spgemm.cl: a work-item's merge, a local table,
 *      a long row, a long row for a large group); the class sizes come back
 *      (20 bytes), sg_scatter lists each class's rows. Long rows take a
 *      bitmap of C's row in local memory where B's columns allow
 *      (bitmap_words), else global tables laid out from their bounds;
 *   2. sg_count_m/_l, _b or _g: the distinct columns of each row; C's row
 *      pointers by a device scan (scan_dev.c), C's size back (8 bytes);
 *   3. sg_fclass/sg_fscatter list the hashed rows again by their counts
 *      (a small or a large local table, or long), then sg_fill_m/_s/_l,
 *      _b or _g write C's sorted columns and values (global tables now
 *      sized by the counts: sg_gather). The values are summed in the host
 *      phases' order without fused multiply-adds, so C has the host path's
 *      bits (the kernel's header).
 * A real C stays on the device (a wrapped matrix that owns the buffers),
 * else it is downloaded. Where the device cannot give the pass's lists,
 * tables or C, the rows go in blocks (blocks_run: bounds and counts on the
 * host, each block's lists uploaded; a block whose buffers cannot be had
 * is done again in blocks of half its bytes, down to one row), so that C
 * and the tables need not fit on the device at once. Every device buffer
 * is freed on every path.
 *
 * A plan's numeric pass (the end of this file) keeps its buffers instead:
 * the operands' patterns, C's structure, the row lists, room for the values
 * (hispi_spgemm_dev_plan); each execution writes the values (or, for an
 * operand on the device, compares its pattern there: sg_differ, and reads
 * its values in place), then sums C's values by the plan's map where it
 * has one (plan_map: every entry of C with its products listed, one
 * work-item each, sg_num_map), else runs sg_fill_m (the product's merge of
 * short rows, C's columns written again as they are) and sg_num_b (a
 * bitmap of C's row) or sg_num_group (a binary search in it); a real C
 * keeps its values on the device, written in place by the next execution
 * (hispi_spgemm_dev_numeric). Scratch buffers come from the backend's
 * tmp_alloc, C's from buf_alloc (the caller keeps C) unless C is the
 * caller's scratch (hisp_matrix_ptap's A*P). */
#include "backend/backend.h"
#include "scan_dev.h"
#include "spgemm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Test hooks: products computed on the device; the k-th device buffer of a
 * product fails as HISP_ERR_OUT_OF_DEVICE_MEMORY (0: none). */
long hispi_spgemm_device_calls;
long hispi_spgemm_dev_fail_after;
/* Test hook: the transpose's rows sorted in local memory up to this many
 * entries (0: TSORT), a heap sort beyond. */
long hispi_spgemm_sort_slots;
/* Test hook: a CPU device (PoCL) runs the kernels too (0: the host pass). */
int hispi_spgemm_cpu_kernels;

/* Work-group size, work-items per entry of A's row in the insertion, local
 * table slots (kernels/spgemm.cl): a row of at most TL / 2 products counts
 * its columns in local memory (8 KiB of keys); a row of at most TS / 2
 * (TL / 2) entries of C is filled there (keys, positions, sort pairs and
 * values: 8 KiB (32 KiB) in f64). */
enum { GS = HISPI_SPGEMM_GS, SUB = 8, TS = 512, TL = 2048 };
/* A row of A with at most MNA entries and at most MPROD products is merged
 * by one work-item (sg_count_m, sg_fill_m): no table, no sort, no barrier;
 * its state (4 words per entry) in registers. */
enum { MNA = 16, MPROD = 256 };
/* A row of more than GBIG products has its global table worked by a group
 * of up to HGS work-items (one 64-item group would take the whole call's
 * time on the hubs of a power-law graph). */
enum { GBIG = 16384, HGS = 1024 };
/* Where B has at most 32 * NBW_MAX columns (and the device the local
 * memory), the rows too long for a local table take a bitmap of C's row in
 * local memory (sg_count_b, sg_fill_b) instead of a global table: 5 bytes
 * per 32 columns (NBW words, at least NBW_MIN). */
enum { NBW_MIN = 128, NBW_MAX = 8192 };
/* A bitmap kernel's rows of at most BLV entries (the kernel's option) sum
 * their values in local memory: as many as the local memory left beside
 * the bitmap takes, within BLV_LOCAL bytes in all (CUDA's static shared
 * memory), at most BLV_MAX. */
enum { BLV_LOCAL = 48 * 1024, BLV_MAX = 2048 };
/* The bitmap kernels' local bytes but the values': bits and positions (5
 * bytes per word), the scan's runs (a word per work-item), the stage of
 * A's entries (kernels/spgemm.cl's STG entries of 32 bytes) and 64 bytes
 * of the kernels' own. */
static int64_t bitmap_bytes(int64_t words, int gs)
{
    return 5 * words + 4 * (int64_t)gs + 32 * (int64_t)(gs < 64 ? gs : 64) + 64;
}

/* The transpose's rows of at most TSORT entries are sorted in local memory
 * (sg_tsort: 20 KiB for c64), longer ones by a heap sort. */
enum { TSORT = 1024 };
/* the largest global table of one row (slots; 12 bytes each) */
#define MAX_SLOTS ((int64_t)1 << 31)

bool hispi_spgemm_dev_usable(hisp_context ctx)
{
    hispi_kcaps caps;
    if (!HISPI_BE_HAS(ctx, kern_caps) || !HISPI_BE_HAS(ctx, kern_get) ||
        !HISPI_BE_HAS(ctx, kern_free) || !HISPI_BE_HAS(ctx, kern_launch) ||
        !HISPI_BE_HAS(ctx, buf_zero) || HISPI_BE(ctx, kern_caps, &caps) ||
        (HISPI_BE_HAS(ctx, kern_any) && HISPI_BE_ON(ctx, ctx->ops, kern_any, ctx->be)))
        return false;
    /* A CPU device's memory is the host's, and the host pass is 1.6-16x
     * faster there than the kernels under PoCL (docs/BENCHMARKS.md). */
    return !caps.is_cpu || hispi_spgemm_cpu_kernels;
}

/* The kernel's tsize: a power of two, at least 32 and twice the bound. */
static int64_t table_slots(int64_t bound)
{
    int64_t t = 32;
    while (t < 2 * bound)
        t <<= 1;
    return t;
}

enum {
    K_BOUND,
    K_COUNT_L,
    K_COUNT_G,
    K_FILL_L,
    K_FILL_G,
    K_CLASS,
    K_SCATTER,
    K_COUNT_M,
    K_FILL_M,
    K_COUNT_H,
    K_FILL_H,
    K_GATHER,
    K_FILL_S,
    K_FCLASS,
    K_FSCATTER,
    K_SIZES,
    K_COUNT_B, /* the bitmaps' kernels last (bits_kernels) */
    K_FILL_B,
    K_COUNT_BH,
    K_FILL_BH,
    NK
};
static const char *const knames[NK] = {
    "sg_bound",    "sg_count_l", "sg_count_g", "sg_fill_l", "sg_fill_g",  "sg_class",  "sg_scatter",
    "sg_count_m",  "sg_fill_m",  "sg_count_g", "sg_fill_g", "sg_gather",  "sg_fill_s", "sg_fclass",
    "sg_fscatter", "sg_sizes",   "sg_count_b", "sg_fill_b", "sg_count_b", "sg_fill_b"};

/* The device buffers of one product, freed together. */
enum {
    B_APTR,
    B_ACOL,
    B_AVAL,
    B_BPTR,
    B_BCOL,
    B_BVAL,
    B_BOUND,
    B_CNT,
    B_LROWS,
    B_GROWS,
    B_GOFF,
    B_GKEYS,
    B_GPOS,
    B_GSB,
    B_CPTR,
    B_CCOL,
    B_CVAL,
    B_NCLS,
    B_MROWS,
    B_GBOUND,
    B_HROWS,
    B_HBOUND,
    B_HOFF,
    B_CLS,
    B_SROWS,
    NB
};

typedef struct {
    hisp_context ctx;
    void *b[NB];
    void *k[NK];
    hispi_scan scan;   /* C's row pointers */
    hisp_matrix known; /* a refill's C (its structure given), or NULL */
    int hgs;           /* the work-group of K_COUNT_H, K_FILL_H (0: no such kernels) */
    bool borrowed[NB]; /* an operand's buffer read in place, or B's that is A's */
    bool own[NB];      /* buf_alloc's, not the pool's (C's when C is large) */
    size_t size[NB];   /* bytes of each buffer of the job's own */
} dev_job;

/* Frees the job's buffer i (not a borrowed one), counted off the call's
 * device bytes. */
static void buf_drop(dev_job *j, int i)
{
    if (!j->b[i]) return;
    if (!j->borrowed[i]) hispi_spgemm_dev_free(j->ctx, j->size[i], !j->own[i], j->b[i]);
    j->b[i] = NULL;
}

static void job_free(dev_job *j)
{
    for (int i = 0; i < NB; i++)
        buf_drop(j, i);
    for (int i = 0; i < NK; i++)
        if (j->k[i]) HISPI_BE_VOID(j->ctx, kern_free, j->k[i]);
    hispi_scan_free(j->ctx, &j->scan);
}

/* Test hook: device buffers the products have asked for. */
long hispi_spgemm_dev_buffers;

hisp_status hispi_spgemm_dev_buffer(hisp_context ctx, size_t bytes, bool tmp, void **buf)
{
    hispi_spgemm_dev_buffers++;
    if (hispi_spgemm_dev_fail_after > 0 && --hispi_spgemm_dev_fail_after == 0)
        return hispi_fail(ctx, HISP_ERR_OUT_OF_DEVICE_MEMORY,
                          "SpGEMM: device buffer of %zu bytes (injected failure)", bytes);
    HISPI_TRY(tmp ? hispi_tmp_alloc(ctx, bytes, buf) : HISPI_BE(ctx, buf_alloc, bytes, buf));
    hisp_spgemm_stats *st = &ctx->spgemm;
    ctx->spgemm_live += bytes; /* what the call holds, its peak */
    if (ctx->spgemm_live > st->device_bytes_peak) st->device_bytes_peak = ctx->spgemm_live;
    return HISP_SUCCESS;
}

void hispi_spgemm_dev_free(hisp_context ctx, size_t bytes, bool tmp, void *buf)
{
    if (!buf) return;
    if (tmp)
        hispi_tmp_free(ctx, buf);
    else
        HISPI_BE_VOID(ctx, buf_free, buf);
    ctx->spgemm_live -= bytes;
}

/* The device's time of a stretch of work (stats: device_ms), by two marks
 * in its stream; nothing where the backend has none or they fail. */
typedef struct {
    void *m0, *m1;
} span;

static void span_start(hisp_context ctx, span *t)
{
    t->m0 = t->m1 = NULL;
    if (!HISPI_BE_HAS(ctx, mark_create) || HISPI_BE(ctx, mark_create, &t->m0) ||
        HISPI_BE(ctx, mark_create, &t->m1) || HISPI_BE(ctx, mark_record, t->m0))
        hispi_clear_error(ctx); /* the product goes on untimed */
}

static void span_end(hisp_context ctx, span *t)
{
    double ms = 0;
    if (t->m0 && t->m1 && !HISPI_BE(ctx, mark_record, t->m1) &&
        !HISPI_BE(ctx, mark_elapsed, t->m0, t->m1, &ms))
        ctx->spgemm.device_ms += ms;
    else
        hispi_clear_error(ctx);
    if (t->m0) HISPI_BE_VOID(ctx, mark_destroy, t->m0);
    if (t->m1) HISPI_BE_VOID(ctx, mark_destroy, t->m1);
}

/* Test hook: the most bytes of C's columns and values taken from the pool. */
size_t hispi_spgemm_pool_c_bytes = HISPI_TMP_KEEP;

/* Every buffer from the pool (tmp_alloc), C's too where C fits in what the
 * pool keeps: C's three cudaMalloc's had cost luxembourg's A*A 0.29-0.32 ms
 * against 0.18 (H200). A larger C gets buffers of its own: through the pool
 * its memory would go back to the driver at the next synchronization, in
 * the next product (rmat 18's A*A: 134 -> 160 ms). */
static hisp_status dalloc_as(dev_job *j, int which, size_t bytes, bool own)
{
    buf_drop(j, which);
    j->size[which] = bytes;
    j->own[which] = own;
    return hispi_spgemm_dev_buffer(j->ctx, bytes, !own, &j->b[which]);
}

static hisp_status dalloc(dev_job *j, int which, size_t bytes)
{
    return dalloc_as(j, which, bytes, false);
}

/* C's columns and values whole (nnz entries of es bytes). */
static hisp_status c_alloc(dev_job *j, int64_t nnz, size_t es)
{
    bool own = (size_t)nnz * (4 + es) > hispi_spgemm_pool_c_bytes;
    HISPI_TRY(dalloc_as(j, B_CCOL, (size_t)nnz * 4, own));
    return dalloc_as(j, B_CVAL, (size_t)nnz * es, own);
}

/* C's row pointers (the pool's) into a buffer of C's own, where C's other
 * arrays are. */
static hisp_status own_pointers(dev_job *j, int64_t m)
{
    size_t bytes = ((size_t)m + 1) * 8;
    void *p = NULL;
    HISPI_TRY(hispi_spgemm_dev_buffer(j->ctx, bytes, false, &p));
    hisp_status s = HISPI_BE(j->ctx, buf_copy, p, j->b[B_CPTR], bytes);
    if (s) {
        hispi_spgemm_dev_free(j->ctx, bytes, false, p);
        return s;
    }
    buf_drop(j, B_CPTR);
    j->b[B_CPTR] = p, j->size[B_CPTR] = bytes, j->own[B_CPTR] = true;
    return HISP_SUCCESS;
}

static hisp_status upload(dev_job *j, int which, const void *src, size_t bytes)
{
    HISPI_TRY(dalloc(j, which, bytes));
    if (!bytes) return HISP_SUCCESS;
    return HISPI_BE(j->ctx, buf_write, j->b[which], 0, src, bytes);
}

/* op(X)'s values in its CSR order: the source's own array where op(X) is
 * the source and no conjugate is taken, else *tmp (gathered, conjugated). */
static hisp_status operand_values(hisp_context ctx, hisp_type t, const hispi_spgemm_operand *o,
                                  const void **val, void **tmp)
{
    *tmp = NULL;
    *val = o->val;
    if (!o->perm && !o->conj) return HISP_SUCCESS;
    size_t es = hisp_type_size(t);
    HISPI_TRY(hispi_alloc(ctx, (size_t)o->nnz, es, tmp));
    char *d = *tmp;
    const char *s = o->val;
    for (int64_t k = 0; k < o->nnz; k++)
        memcpy(d + (size_t)k * es, s + (size_t)(o->perm ? o->perm[k] : k) * es, es);
    if (o->conj) { /* complex: negate every imaginary part */
        if (t == HISP_C32)
            for (int64_t k = 0; k < o->nnz; k++)
                ((float *)d)[2 * k + 1] = -((float *)d)[2 * k + 1];
        else
            for (int64_t k = 0; k < o->nnz; k++)
                ((double *)d)[2 * k + 1] = -((double *)d)[2 * k + 1];
    }
    *val = d;
    return HISP_SUCCESS;
}

/* Uploads one operand into buffers first, first + 1, first + 2 (an operand
 * on the device already: its buffers, borrowed). */
static hisp_status upload_operand(dev_job *j, hisp_type t, const hispi_spgemm_operand *o, int first)
{
    if (o->dev[0]) {
        for (int i = 0; i < 3; i++)
            j->b[first + i] = (void *)o->dev[i], j->borrowed[first + i] = true;
        return HISP_SUCCESS;
    }
    const void *val;
    void *tmp;
    HISPI_TRY(operand_values(j->ctx, t, o, &val, &tmp));
    hisp_status s = upload(j, first, o->rowptr, ((size_t)o->nrows + 1) * sizeof *o->rowptr);
    if (!s) s = upload(j, first + 1, o->colind, (size_t)o->nnz * sizeof *o->colind);
    if (!s) s = upload(j, first + 2, val, (size_t)o->nnz * hisp_type_size(t));
    free(tmp);
    return s;
}

/* The large rows' work-group: HGS or the device's largest power of two
 * below it; 0 (no class 4: every long row in 64-item groups) where that is
 * not at least 4 * GS. */
static int big_group(const hispi_kcaps *caps)
{
    int g = HGS;
    while (g > caps->max_group)
        g >>= 1;
    return g >= 4 * GS ? g : 0;
}

/* The program's build options for type t and work-groups of gs (one
 * program for the product and the plan's numeric pass; the large rows'
 * kernels come from one built with their group), after checking the
 * device's work-group size. */
static void format_opts(const hispi_kcaps *caps, hisp_type t, int gs, int nbw, long tsort,
                        char *opts, size_t size)
{
    bool dbl = t == HISP_F64 || t == HISP_C64;
    int nc = hisp_type_components(t);
    int64_t lm = caps->local_mem < BLV_LOCAL ? caps->local_mem : BLV_LOCAL;
    int64_t blv = (lm - bitmap_bytes(nbw, gs)) / (int64_t)hisp_type_size(t);
    blv = blv < 1 ? 1 : blv > BLV_MAX ? BLV_MAX : blv;
    snprintf(opts, size,
             "-DVALUE_T=%s -DIS_DOUBLE=%d -DATOM64=0 -DNC=%d -DGS=%d -DSUB=%d -DTS=%d -DTL=%d "
             "-DMNA=%d -DMPROD=%d -DGBIG=%lld -DNBW=%d -DBLV=%d -DTSORT=%ld",
             dbl ? "double" : "float", (int)dbl, nc, gs, SUB, TS, TL, MNA, MPROD,
             big_group(caps) ? (long long)GBIG : (long long)INT64_MAX, nbw, (int)blv, tsort);
}

int hispi_spgemm_kopts(const hispi_kcaps *caps, hisp_type t, char opts[2][240])
{
    format_opts(caps, t, GS, NBW_MIN, TSORT, opts[0], 240);
    if (!big_group(caps)) return 1;
    format_opts(caps, t, big_group(caps), NBW_MIN, TSORT, opts[1], 240);
    return 2;
}

static hisp_status kernel_opts(hisp_context ctx, hisp_type t, int gs, int nbw, long tsort,
                               char *opts, size_t size)
{
    hispi_kcaps caps;
    HISPI_TRY(HISPI_BE(ctx, kern_caps, &caps));
    if (caps.max_group < GS)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                          "SpGEMM on the device needs work-groups of %d (the device: %d)", GS,
                          caps.max_group);
    format_opts(&caps, t, gs, nbw, tsort, opts, size);
    return HISP_SUCCESS;
}

hisp_status hispi_spgemm_kernel(hisp_context ctx, hisp_type t, const char *name, void **k)
{
    char opts[240];
    /* the test hook's sort size in a program of the transpose's own */
    long ts = hispi_spgemm_sort_slots > 0 ? hispi_spgemm_sort_slots : TSORT;
    HISPI_TRY(kernel_opts(ctx, t, GS, NBW_MIN, ts, opts, sizeof opts));
    return HISPI_BE(ctx, kern_get, HISPI_PROG_SPGEMM, opts, name, k);
}

static hisp_status kernels(dev_job *j, hisp_type t)
{
    hispi_kcaps caps;
    HISPI_TRY(HISPI_BE(j->ctx, kern_caps, &caps));
    j->hgs = big_group(&caps);
    char opts[240], hopts[240];
    HISPI_TRY(kernel_opts(j->ctx, t, GS, NBW_MIN, TSORT, opts, sizeof opts));
    if (j->hgs) HISPI_TRY(kernel_opts(j->ctx, t, j->hgs, NBW_MIN, TSORT, hopts, sizeof hopts));
    for (int i = 0; i < K_COUNT_B; i++) { /* the bitmaps' kernels when a product needs them */
        bool big = i == K_COUNT_H || i == K_FILL_H;
        if (big && !j->hgs) continue;
        HISPI_TRY(
            HISPI_BE(j->ctx, kern_get, HISPI_PROG_SPGEMM, big ? hopts : opts, knames[i], &j->k[i]));
    }
    return HISP_SUCCESS;
}

static hispi_karg kbuf(const dev_job *j, int which)
{
    return (hispi_karg){HISPI_KARG_BUF, j->b[which], 0, 0};
}

/* The row lists of a block of rows [r0, r1) by their sizes (the bounds
 * for the count, C's counts for the fill): srows (small local tables;
 * only in the fill), lrows (large ones), grows and goff (global tables at
 * goff from the block's start, gslots slots in all). */
typedef struct {
    int32_t *srows, *lrows, *grows;
    int64_t *goff;
    int64_t ns, nl, ng, gslots;
} row_lists;

static void lists_free(row_lists *L)
{
    free(L->srows), free(L->lrows), free(L->grows), free(L->goff);
    memset(L, 0, sizeof *L);
}

/* Row i's global table slots (0: a local table or no products); a row too
 * large for the device path's tables is HISP_ERR_OUT_OF_DEVICE_MEMORY. */
static hisp_status row_slots(hisp_context ctx, int64_t bound, int64_t i, int64_t *slots)
{
    *slots = 0;
    if (bound <= TL / 2) return HISP_SUCCESS;
    if (bound > MAX_SLOTS / 2)
        return hispi_fail(ctx, HISP_ERR_OUT_OF_DEVICE_MEMORY,
                          "SpGEMM: row %lld of C may have %lld entries, more than the "
                          "device path's tables hold",
                          (long long)i, (long long)bound);
    *slots = table_slots(bound);
    return HISP_SUCCESS;
}

static hisp_status launch(dev_job *j, int k, const hispi_karg *a, int n, int64_t groups)
{
    if (groups <= 0) return HISP_SUCCESS;
    return HISPI_BE(j->ctx, kern_launch, j->k[k], a, n, (size_t)groups, (size_t)GS);
}

/* Kernel k over n listed rows: a work-group of gs work-items a row, or
 * (gs 0) one work-item a row. */
static hisp_status launch_rows(dev_job *j, int k, const hispi_karg *a, int na, int64_t n, int gs)
{
    if (n <= 0) return HISP_SUCCESS;
    if (!gs) return launch(j, k, a, na, (n + GS - 1) / GS);
    return HISPI_BE(j->ctx, kern_launch, j->k[k], a, na, (size_t)n, (size_t)gs);
}

/* The hash kernels' counts (k: sg_count_l/_g) of the n rows listed in
 * buffer rows, in groups of gs; their tables sized by the buffer bnd, in
 * local memory (off < 0) or in B_GKEYS at the offsets in buffer off. */
static hisp_status count_rows(dev_job *j, int k, int rows, int off, int bnd, int64_t n, int gs)
{
    if (off < 0) {
        hispi_karg a[] = {kbuf(j, rows),   kbuf(j, B_APTR), kbuf(j, B_ACOL), kbuf(j, B_BPTR),
                          kbuf(j, B_BCOL), kbuf(j, bnd),    kbuf(j, B_CNT)};
        return launch_rows(j, k, a, 7, n, gs);
    }
    hispi_karg a[] = {kbuf(j, rows),   kbuf(j, off),    kbuf(j, B_APTR),
                      kbuf(j, B_ACOL), kbuf(j, B_BPTR), kbuf(j, B_BCOL),
                      kbuf(j, bnd),    kbuf(j, B_CNT),  kbuf(j, B_GKEYS)};
    return launch_rows(j, k, a, 9, n, gs);
}

/* The hash kernels' columns and values (k: sg_fill_l/_g), as count_rows. */
static hisp_status fill_rows(dev_job *j, int k, int rows, int off, int bnd, int64_t n, int gs)
{
    if (off < 0) {
        hispi_karg a[] = {kbuf(j, rows),   kbuf(j, B_APTR), kbuf(j, B_ACOL), kbuf(j, B_AVAL),
                          kbuf(j, B_BPTR), kbuf(j, B_BCOL), kbuf(j, B_BVAL), kbuf(j, bnd),
                          kbuf(j, B_CPTR), kbuf(j, B_CCOL), kbuf(j, B_CVAL)};
        return launch_rows(j, k, a, 11, n, gs);
    }
    hispi_karg a[] = {kbuf(j, rows),    kbuf(j, off),    kbuf(j, B_APTR), kbuf(j, B_ACOL),
                      kbuf(j, B_AVAL),  kbuf(j, B_BPTR), kbuf(j, B_BCOL), kbuf(j, B_BVAL),
                      kbuf(j, bnd),     kbuf(j, B_CPTR), kbuf(j, B_CCOL), kbuf(j, B_CVAL),
                      kbuf(j, B_GKEYS), kbuf(j, B_GPOS), kbuf(j, B_GSB)};
    return launch_rows(j, k, a, 15, n, gs);
}

/* The bitmaps' words for B's ncols columns: a power of two, at least
 * NBW_MIN; 0 (global tables) where more than NBW_MAX or the device's local
 * memory (bits, positions and the large group's scan) would need. */
static int bitmap_words(hispi_kcaps *caps, int hgs, int64_t ncols)
{
    int64_t w = NBW_MIN;
    while (32 * w < ncols)
        w <<= 1;
    return w <= NBW_MAX && bitmap_bytes(w, hgs > GS ? hgs : GS) <= caps->local_mem ? (int)w : 0;
}

/* The bitmaps' kernels built for nbw words (their program's options say
 * the size), on the first product that needs them. */
static hisp_status bits_kernels(dev_job *j, hisp_type t, int nbw)
{
    char opts[240];
    for (int i = K_COUNT_B; i < NK; i++) {
        bool big = i == K_COUNT_BH || i == K_FILL_BH;
        if (big && !j->hgs) continue;
        HISPI_TRY(kernel_opts(j->ctx, t, big ? j->hgs : GS, nbw, TSORT, opts, sizeof opts));
        HISPI_TRY(HISPI_BE(j->ctx, kern_get, HISPI_PROG_SPGEMM, opts, knames[i], &j->k[i]));
    }
    return HISP_SUCCESS;
}

/* The bitmap kernels (k: sg_count_b, fill: sg_fill_b) over the n rows
 * listed in buffer rows, in groups of gs; ncols B's columns. */
/* The arguments of the merge and bitmap kernels over the rows listed in
 * buffer rows, after the kernel's first (a count or B's columns): the
 * counts' 7 (op(A)'s and op(B)'s patterns, the counts) or the fill's 11
 * (their values too, C). */
static int row_args(dev_job *j, bool fill, hispi_karg first, int rows, hispi_karg a[11])
{
    if (!fill) {
        const int w[] = {B_APTR, B_ACOL, B_BPTR, B_BCOL, B_CNT};
        a[0] = first, a[1] = kbuf(j, rows);
        for (int i = 0; i < 5; i++)
            a[2 + i] = kbuf(j, w[i]);
        return 7;
    }
    const int w[] = {B_APTR, B_ACOL, B_AVAL, B_BPTR, B_BCOL, B_BVAL, B_CPTR, B_CCOL, B_CVAL};
    a[0] = first, a[1] = kbuf(j, rows);
    for (int i = 0; i < 9; i++)
        a[2 + i] = kbuf(j, w[i]);
    return 11;
}

static hisp_status bits_rows(dev_job *j, int k, bool fill, int rows, int64_t n, int gs,
                             int64_t ncols)
{
    hispi_karg a[11];
    int na = row_args(j, fill, (hispi_karg){HISPI_KARG_I64, NULL, ncols, 0}, rows, a);
    return launch_rows(j, k, a, na, n, gs);
}

/* Test hook: the device bytes a block of rows may take at first (0: no
 * limit, one block while the device has the memory). */
long hispi_spgemm_dev_block_bytes;

/* A product's work in blocks of rows: each phase (count, fill) takes the
 * rows in blocks whose device bytes (rows' lists, global tables and, for
 * the fill, C's part) stay within budget; a block whose buffers the device
 * cannot give is done again in blocks of half its bytes, down to one row. */
typedef struct {
    dev_job *j;
    const hispi_spgemm_args *g;
    const int64_t *bound; /* host, m */
    hispi_spgemm_out *o;  /* rowptr: counts, then C's pointers */
    int64_t budget;
    bool fill;
    bool keep; /* C's columns and values whole on the device (B_CCOL, B_CVAL) */
} blocks;

/* Row i's size in the phase: its bound (count) or its count (fill). */
static int64_t row_size(const blocks *B, int64_t i)
{
    return B->fill ? B->o->rowptr[i + 1] - B->o->rowptr[i] : B->bound[i];
}

/* Device bytes row i takes in a block of the phase. */
static int64_t row_bytes(const blocks *B, int64_t i)
{
    int64_t z = row_size(B, i), t = z <= TL / 2 ? 0 : table_slots(z);
    int64_t b = z ? (t ? 12 : 4) : 0; /* its list entries */
    if (!B->fill) return b + 4 * t;
    if (B->keep) return b + 12 * t; /* C is allocated whole */
    size_t es = hisp_type_size(B->g->type);
    return b + 12 * t + z * (int64_t)(4 + es);
}

/* The lists of rows [r0, r1) in B's phase (srows only in the fill). */
static hisp_status make_lists(const blocks *B, int64_t r0, int64_t r1, row_lists *L)
{
    hisp_context ctx = B->j->ctx;
    bool small = B->fill;
    memset(L, 0, sizeof *L);
    for (int64_t i = r0; i < r1; i++) {
        int64_t t, z = row_size(B, i);
        HISPI_TRY(row_slots(ctx, z, i, &t));
        if (z && !t) small &&z <= TS / 2 ? L->ns++ : L->nl++;
        if (t) L->ng++, L->gslots += t;
    }
    hisp_status s = hispi_alloc(ctx, (size_t)L->ns, sizeof *L->srows, (void **)&L->srows);
    if (!s) s = hispi_alloc(ctx, (size_t)L->nl, sizeof *L->lrows, (void **)&L->lrows);
    if (!s) s = hispi_alloc(ctx, (size_t)L->ng, sizeof *L->grows, (void **)&L->grows);
    if (!s) s = hispi_alloc(ctx, (size_t)L->ng, sizeof *L->goff, (void **)&L->goff);
    if (s) {
        lists_free(L);
        return s;
    }
    int64_t ns = 0, nl = 0, ng = 0, off = 0;
    for (int64_t i = r0; i < r1; i++) {
        int64_t z = row_size(B, i);
        if (!z) continue;
        if (small && z <= TS / 2) {
            L->srows[ns++] = (int32_t)i;
        } else if (z <= TL / 2) {
            L->lrows[nl++] = (int32_t)i;
        } else {
            L->grows[ng] = (int32_t)i;
            L->goff[ng++] = off;
            off += table_slots(z);
        }
    }
    return HISP_SUCCESS;
}

/* A block's own buffers: its lists and tables, and its part of C unless C
 * is kept whole. */
static void block_free(dev_job *j, bool keep)
{
    for (int i = B_LROWS; i < NB; i++)
        if (i != B_CPTR && (!keep || (i != B_CCOL && i != B_CVAL))) buf_drop(j, i);
}

/* Phase 2 on rows [r0, r1): their counts into the device's cnt. */
static hisp_status count_block(blocks *B, int64_t r0, int64_t r1)
{
    dev_job *j = B->j;
    row_lists L;
    HISPI_TRY(make_lists(B, r0, r1, &L));
    hisp_status s = upload(j, B_LROWS, L.lrows, (size_t)L.nl * 4);
    if (!s) s = upload(j, B_GROWS, L.grows, (size_t)L.ng * 4);
    if (!s) s = upload(j, B_GOFF, L.goff, (size_t)L.ng * 8);
    if (!s) s = dalloc(j, B_GKEYS, (size_t)L.gslots * 4);
    if (!s) s = count_rows(j, K_COUNT_L, B_LROWS, -1, B_BOUND, L.nl, GS);
    if (!s) s = count_rows(j, K_COUNT_G, B_GROWS, B_GOFF, B_BOUND, L.ng, GS);
    lists_free(&L);
    return s;
}

/* Phase 3 on rows [r0, r1): their columns and values of C, downloaded into
 * o at their place. The block's pointers on the device are made relative
 * to its first entry, so that C's part on the device is the block's alone. */
static hisp_status fill_block(blocks *B, int64_t r0, int64_t r1)
{
    dev_job *j = B->j;
    hisp_context ctx = j->ctx;
    int64_t *p = B->o->rowptr, base = p[r0], nnz = p[r1] - base;
    size_t es = hisp_type_size(B->g->type);
    row_lists L;
    HISPI_TRY(make_lists(B, r0, r1, &L));
    hisp_status s = HISP_SUCCESS;
    if (B->keep) base = 0; /* C whole on the device: the pointers as they are */
    if (base) {            /* the block's pointers from 0 (the first block's are already) */
        int64_t *rel = NULL;
        s = hispi_alloc(ctx, (size_t)(r1 - r0) + 1, sizeof *rel, (void **)&rel);
        for (int64_t i = r0; !s && i <= r1; i++)
            rel[i - r0] = p[i] - base;
        if (!s)
            s = HISPI_BE(ctx, buf_write, j->b[B_CPTR], (size_t)r0 * 8, rel,
                         ((size_t)(r1 - r0) + 1) * 8);
        free(rel);
    }
    if (!s) s = upload(j, B_SROWS, L.srows, (size_t)L.ns * 4);
    if (!s) s = upload(j, B_LROWS, L.lrows, (size_t)L.nl * 4);
    if (!s) s = upload(j, B_GROWS, L.grows, (size_t)L.ng * 4);
    if (!s) s = upload(j, B_GOFF, L.goff, (size_t)L.ng * 8);
    if (!s) s = dalloc(j, B_GKEYS, (size_t)L.gslots * 4);
    if (!s) s = dalloc(j, B_GPOS, (size_t)L.gslots * 4);
    if (!s) s = dalloc(j, B_GSB, (size_t)L.gslots / 2 * 8);
    if (!s && !B->keep) s = dalloc(j, B_CCOL, (size_t)nnz * 4);
    if (!s && !B->keep) s = dalloc(j, B_CVAL, (size_t)nnz * es);
    if (!s) s = fill_rows(j, K_FILL_S, B_SROWS, -1, B_CNT, L.ns, GS);
    if (!s) s = fill_rows(j, K_FILL_L, B_LROWS, -1, B_CNT, L.nl, GS);
    if (!s) s = fill_rows(j, K_FILL_G, B_GROWS, B_GOFF, B_CNT, L.ng, GS);
    lists_free(&L);
    if (B->keep) return s;
    if (!s && nnz)
        s = HISPI_BE(ctx, buf_read, j->b[B_CCOL], 0, B->o->colind + base, (size_t)nnz * 4);
    if (!s && nnz)
        s = HISPI_BE(ctx, buf_read, j->b[B_CVAL], 0, (char *)B->o->val + (size_t)base * es,
                     (size_t)nnz * es);
    return s;
}

/* One phase over all rows in blocks within the budget (halved where a
 * block's buffers cannot be had; a single row that cannot is the error). */
static hisp_status run_blocks(blocks *B)
{
    int64_t m = B->g->a.nrows;
    for (int64_t r0 = 0; r0 < m;) {
        int64_t r1 = r0, need = 0;
        while (r1 < m && (r1 == r0 || need + row_bytes(B, r1) <= B->budget))
            need += row_bytes(B, r1++);
        hisp_status s = B->fill ? fill_block(B, r0, r1) : count_block(B, r0, r1);
        block_free(B->j, B->keep);
        if (s == HISP_ERR_OUT_OF_DEVICE_MEMORY && r1 - r0 > 1) {
            B->budget = need / 2; /* the same rows again, in smaller blocks */
            continue;
        }
        if (s) return s;
        B->j->ctx->spgemm.blocks++;
        r0 = r1;
    }
    hispi_clear_error(B->j->ctx); /* a block done again is not the call's error */
    return HISP_SUCCESS;
}

/* A C of type t can stay on the device: what a wrapped CSR holds. */
static bool wrappable(hisp_type t)
{
    return t == HISP_F32 || t == HISP_F64;
}

static bool same_operand(const hispi_spgemm_operand *a, const hispi_spgemm_operand *b)
{
    return a->nrows == b->nrows && a->ncols == b->ncols && a->nnz == b->nnz &&
           a->rowptr == b->rowptr && a->colind == b->colind && a->val == b->val &&
           a->perm == b->perm && a->conj == b->conj && a->dev[0] == b->dev[0] &&
           a->dev[1] == b->dev[1] && a->dev[2] == b->dev[2];
}

/* C's columns and values whole on the device for a kept C; false (the
 * error cleared) when the device cannot hold them: C goes to the host. */
/* Both operands on the device (A*A: one upload). */
static hisp_status upload_operands(dev_job *j, const hispi_spgemm_args *g)
{
    HISPI_TRY(upload_operand(j, g->type, &g->a, B_APTR));
    if (!same_operand(&g->a, &g->b)) return upload_operand(j, g->type, &g->b, B_BPTR);
    for (int i = 0; i < 3; i++)
        j->b[B_BPTR + i] = j->b[B_APTR + i], j->borrowed[B_BPTR + i] = true;
    return HISP_SUCCESS;
}

static bool keep_whole(dev_job *j, const hispi_spgemm_args *g, int64_t nnz)
{
    size_t es = hisp_type_size(g->type);
    if (!c_alloc(j, nnz, es)) return true;
    block_free(j, false);
    hispi_clear_error(j->ctx);
    return false;
}

/* ---- the product in one pass ---------------------------------------------
 *
 * All rows at once, the work of each row chosen and listed on the device
 * (kernels/spgemm.cl's classes): three small reads (the class sizes, the
 * long rows' bounds, C's size) instead of the blocks' per-row transfers
 * and host loops. */

/* The table offsets of n long rows (listed in rows with their bounds in
 * bnd, on the device) into off, uploaded, from *gslots on (advanced past
 * their tables); a row too long for a table is the error. */
static hisp_status table_offsets(dev_job *j, int rows, int bnd, int off, int64_t n, int64_t *gslots)
{
    hisp_context ctx = j->ctx;
    int64_t *gb = NULL, *goff = NULL;
    int32_t *gr = NULL;
    hisp_status s = hispi_alloc(ctx, (size_t)n, sizeof *gb, (void **)&gb);
    if (!s) s = hispi_alloc(ctx, (size_t)n, sizeof *goff, (void **)&goff);
    if (!s) s = hispi_alloc(ctx, (size_t)n, sizeof *gr, (void **)&gr);
    if (!s && n) s = HISPI_BE(ctx, buf_read, j->b[bnd], 0, gb, (size_t)n * 8);
    if (!s && n) s = HISPI_BE(ctx, buf_read, j->b[rows], 0, gr, (size_t)n * 4);
    for (int64_t k = 0; !s && k < n; k++) {
        int64_t t;
        /* the limit; then a table even for a bound within TL / 2 (a class 4
         * row of few columns) */
        s = row_slots(ctx, gb[k], gr[k], &t);
        goff[k] = *gslots;
        *gslots += table_slots(gb[k]);
    }
    if (!s) s = upload(j, off, goff, (size_t)n * 8);
    free(gb), free(goff), free(gr);
    return s;
}

/* dst[k] = C's count of row rows[k], for the n rows listed (on the device). */
static hisp_status gather(dev_job *j, int rows, int dst, int64_t n)
{
    hispi_karg a[] = {{HISPI_KARG_I64, NULL, n, 0}, kbuf(j, rows), kbuf(j, B_CNT), kbuf(j, dst)};
    return launch(j, K_GATHER, a, 4, (n + GS - 1) / GS);
}

/* The rows' arrays of one pass, which blocks would need as well (bounds,
 * class sizes, counts, C's pointers): a failure of one is the call's. */
static hisp_status pass_rows(dev_job *j, int64_t m)
{
    hisp_context ctx = j->ctx;
    HISPI_TRY(dalloc(j, B_BOUND, (size_t)m * 8));
    HISPI_TRY(dalloc(j, B_CLS, (size_t)m * 4));
    HISPI_TRY(dalloc(j, B_NCLS, 32));
    HISPI_TRY(dalloc(j, B_CNT, (size_t)m * 8));
    HISPI_TRY(HISPI_BE(ctx, buf_zero, j->b[B_NCLS], 0, 32));
    if (!j->known) {
        HISPI_TRY(dalloc(j, B_CPTR, ((size_t)m + 1) * 8));
        return HISPI_BE(ctx, buf_zero, j->b[B_CNT], 0, (size_t)m * 8);
    }
    /* a refill: C's pointers are the known C's, the counts from them */
    j->b[B_CPTR] = j->known->ext.rowptr, j->borrowed[B_CPTR] = true;
    hispi_karg a[] = {{HISPI_KARG_I64, NULL, m, 0}, kbuf(j, B_CPTR), kbuf(j, B_CNT)};
    return launch(j, K_SIZES, a, 3, (m + GS - 1) / GS);
}

/* C's pointers on the device from the counts (C's size read with the
 * fill's lists). */
static hisp_status pass_scan(dev_job *j, int64_t m)
{
    if (!j->scan.k[0]) HISPI_TRY(hispi_scan_get(j->ctx, false, &j->scan));
    return hispi_scan_run(j->ctx, &j->scan, m, j->b[B_CNT], j->b[B_CPTR], NULL);
}

/* The hashed rows' lists for the fill, by their counts now (sg_fclass,
 * sg_fscatter): small local tables (B_SROWS), large ones (B_LROWS), global
 * tables (B_GROWS, their counts in B_GBOUND); nf[1..3] their sizes and
 * *nnz C's entries, in one read (one wait for the device less). */
static hisp_status fill_lists(dev_job *j, int64_t m, uint32_t nf[4], int64_t *nnz)
{
    hisp_context ctx = j->ctx;
    hispi_karg mm = {HISPI_KARG_I64, NULL, m, 0};
    hispi_karg fa[] = {mm, kbuf(j, B_CLS), kbuf(j, B_CNT), kbuf(j, B_NCLS), kbuf(j, B_CPTR)};
    HISPI_TRY(HISPI_BE(ctx, buf_zero, j->b[B_NCLS], 0, 32)); /* sg_scatter's fill */
    HISPI_TRY(launch(j, K_FCLASS, fa, 5, (m + GS - 1) / GS));
    uint32_t r[6]; /* the classes' sizes, then C's size (int64) */
    HISPI_TRY(HISPI_BE(ctx, buf_read, j->b[B_NCLS], 0, r, sizeof r));
    memcpy(nf, r, 4 * sizeof *nf);
    memcpy(nnz, r + 4, sizeof *nnz);
    HISPI_TRY(HISPI_BE(ctx, buf_zero, j->b[B_NCLS], 0, 32));
    HISPI_TRY(dalloc(j, B_SROWS, (size_t)nf[1] * 4));
    HISPI_TRY(dalloc(j, B_LROWS, (size_t)nf[2] * 4));
    HISPI_TRY(dalloc(j, B_GROWS, (size_t)nf[3] * 4));
    HISPI_TRY(dalloc(j, B_GBOUND, (size_t)nf[3] * 8));
    hispi_karg sa[] = {mm,
                       kbuf(j, B_CLS),
                       kbuf(j, B_CNT),
                       kbuf(j, B_NCLS),
                       kbuf(j, B_SROWS),
                       kbuf(j, B_LROWS),
                       kbuf(j, B_GROWS),
                       kbuf(j, B_GBOUND)};
    return launch(j, K_FSCATTER, sa, 8, (m + GS - 1) / GS);
}

/* The product of all rows at once, C left on the device in B_CPTR, B_CCOL
 * and B_CVAL (*nnz_c entries). *whole: a failure is the call's (the operands' and the rows'
 * arrays), else the rows can be taken again in blocks (lists, tables, C). */
/* The classes' kernels of a phase go in lanes of their own (kern_lane)
 * where more than one class has rows: every row is computed alone, and a
 * product of few rows per class fills the device only with all of them at
 * once (ca-CondMat's fill: 0.41, 0.33 and 0.31 ms for its local-table,
 * merge and bitmap rows one after the other on an H200). */
static bool lanes(int64_t a, int64_t b, int64_t c, int64_t d)
{
    return (a > 0) + (b > 0) + (c > 0) + (d > 0) > 1;
}

/* Lane l next (0: the join), where par and the backend has lanes. */
static hisp_status lane(dev_job *j, bool par, int l)
{
    if (!par || !HISPI_BE_HAS(j->ctx, kern_lane)) return HISP_SUCCESS;
    return HISPI_BE(j->ctx, kern_lane, l);
}

/* One phase's kernels, the count or the fill (fill), over the rows of each
 * class (nr: merged, small local tables (the fill's), local tables, long,
 * hubs), each class in a lane of its own; bits: the long rows by bitmaps. */
static hisp_status phase(dev_job *j, const hispi_spgemm_args *g, bool fill, bool bits,
                         const int64_t nr[5])
{
    hisp_status (*rows)(dev_job *, int, int, int, int, int64_t, int) =
        fill ? fill_rows : count_rows;
    int by = fill ? B_CNT : B_BOUND; /* the tables' sizes */
    int64_t nb = g->b.ncols;
    hispi_karg ma[11];
    int na = row_args(j, fill, (hispi_karg){HISPI_KARG_I64, NULL, nr[0], 0}, B_MROWS, ma);
    bool par = lanes(nr[0], nr[1] + nr[2], nr[3], nr[4]);
    hisp_status s = lane(j, par, 1);
    if (!s) s = launch_rows(j, fill ? K_FILL_M : K_COUNT_M, ma, na, nr[0], 0);
    if (!s && fill) s = lane(j, par, 2);
    if (!s && fill) s = fill_rows(j, K_FILL_S, B_SROWS, -1, B_CNT, nr[1], GS);
    if (!s) s = lane(j, par, 3);
    if (!s) s = rows(j, fill ? K_FILL_L : K_COUNT_L, B_LROWS, -1, by, nr[2], GS);
    if (!s) s = lane(j, par, 4);
    if (!s)
        s = bits ? bits_rows(j, fill ? K_FILL_B : K_COUNT_B, fill, B_GROWS, nr[3], GS, nb)
                 : rows(j, fill ? K_FILL_G : K_COUNT_G, B_GROWS, B_GOFF, by, nr[3], GS);
    if (!s) s = lane(j, par, 5);
    if (!s)
        s = bits ? bits_rows(j, fill ? K_FILL_BH : K_COUNT_BH, fill, B_HROWS, nr[4], j->hgs, nb)
                 : rows(j, fill ? K_FILL_H : K_COUNT_H, B_HROWS, B_HOFF, by, nr[4], j->hgs);
    hisp_status joined = lane(j, par, 0);
    return s ? s : joined;
}

static hisp_status one_pass(dev_job *j, const hispi_spgemm_args *g, int64_t *nnz_c, bool *whole)
{
    hisp_context ctx = j->ctx;
    int64_t m = g->a.nrows, nnz = 0, gslots = 0;
    size_t es = hisp_type_size(g->type);
    *whole = true;
    HISPI_TRY(pass_rows(j, m));
    hispi_karg mm = {HISPI_KARG_I64, NULL, m, 0}, nn = {HISPI_KARG_I64, NULL, g->b.ncols, 0};
    hispi_karg ca[] = {mm,
                       nn,
                       kbuf(j, B_APTR),
                       kbuf(j, B_ACOL),
                       kbuf(j, B_BPTR),
                       kbuf(j, B_BOUND),
                       kbuf(j, B_CLS),
                       kbuf(j, B_NCLS)};
    HISPI_TRY(launch(j, K_CLASS, ca, 8, (m + GS - 1) / GS));
    uint32_t n[5];
    HISPI_TRY(HISPI_BE(ctx, buf_read, j->b[B_NCLS], 0, n, sizeof n));
    HISPI_TRY(HISPI_BE(ctx, buf_zero, j->b[B_NCLS], 0, 32));
    *whole = false; /* from here the rows can go in blocks */
    HISPI_TRY(dalloc(j, B_MROWS, (size_t)n[1] * 4));
    HISPI_TRY(dalloc(j, B_LROWS, (size_t)n[2] * 4));
    HISPI_TRY(dalloc(j, B_GROWS, (size_t)n[3] * 4));
    HISPI_TRY(dalloc(j, B_GBOUND, (size_t)n[3] * 8));
    HISPI_TRY(dalloc(j, B_HROWS, (size_t)n[4] * 4));
    HISPI_TRY(dalloc(j, B_HBOUND, (size_t)n[4] * 8));
    hispi_karg sa[] = {mm,
                       kbuf(j, B_CLS),
                       kbuf(j, B_BOUND),
                       kbuf(j, B_NCLS),
                       kbuf(j, B_MROWS),
                       kbuf(j, B_LROWS),
                       kbuf(j, B_GROWS),
                       kbuf(j, B_GBOUND),
                       kbuf(j, B_HROWS),
                       kbuf(j, B_HBOUND)};
    HISPI_TRY(launch(j, K_SCATTER, sa, 10, (m + GS - 1) / GS));
    hispi_kcaps caps;
    HISPI_TRY(HISPI_BE(ctx, kern_caps, &caps));
    int nbw = n[3] + n[4] ? bitmap_words(&caps, j->hgs, g->b.ncols) : 0;
    bool bits = nbw > 0; /* bitmaps instead of global tables */
    if (bits) HISPI_TRY(bits_kernels(j, g->type, nbw));
    if (!bits && !j->known) {
        HISPI_TRY(table_offsets(j, B_GROWS, B_GBOUND, B_GOFF, n[3], &gslots));
        HISPI_TRY(table_offsets(j, B_HROWS, B_HBOUND, B_HOFF, n[4], &gslots));
        HISPI_TRY(dalloc(j, B_GKEYS, (size_t)gslots * 4));
    }
    /* the counts (a refill has them from C's pointers) */
    const int64_t nc[5] = {n[1], 0, n[2], n[3], n[4]};
    if (!j->known) HISPI_TRY(phase(j, g, false, bits, nc));
    if (!j->known) HISPI_TRY(pass_scan(j, m));
    /* C's columns and values: the hashed rows listed again by their counts
     * (bcsstk33's rows have about 4600 products and 294 entries: a local
     * table now), the long rows' tables sized by them (rmat 18's 2.3x
     * smaller than by the products) */
    uint32_t nf[4];
    buf_drop(j, B_GKEYS), buf_drop(j, B_GOFF), buf_drop(j, B_HOFF);
    HISPI_TRY(fill_lists(j, m, nf, &nnz));
    *nnz_c = nnz;
    gslots = 0;
    if (!bits) {
        HISPI_TRY(gather(j, B_HROWS, B_HBOUND, n[4]));
        HISPI_TRY(table_offsets(j, B_GROWS, B_GBOUND, B_GOFF, nf[3], &gslots));
        HISPI_TRY(table_offsets(j, B_HROWS, B_HBOUND, B_HOFF, n[4], &gslots));
    }
    if (j->known) { /* C's own columns and values, written again */
        j->b[B_CCOL] = j->known->ext.colind, j->b[B_CVAL] = j->known->ext.val;
        j->borrowed[B_CCOL] = j->borrowed[B_CVAL] = true;
    } else {
        HISPI_TRY(c_alloc(j, nnz, es));
    }
    if (!bits) {
        HISPI_TRY(dalloc(j, B_GKEYS, (size_t)gslots * 4));
        HISPI_TRY(dalloc(j, B_GPOS, (size_t)gslots * 4));
        HISPI_TRY(dalloc(j, B_GSB, (size_t)gslots / 2 * 8));
    }
    const int64_t nfr[5] = {n[1], nf[1], nf[2], nf[3], n[4]};
    HISPI_TRY(phase(j, g, true, bits, nfr));
    ctx->spgemm.blocks += 2; /* one block a phase */
    return HISP_SUCCESS;
}

/* The one pass's C downloaded into o (its pointers allocated by the
 * caller). */
static hisp_status pass_download(dev_job *j, const hispi_spgemm_args *g, hispi_spgemm_out *o)
{
    hisp_context ctx = j->ctx;
    int64_t m = g->a.nrows;
    HISPI_TRY(HISPI_BE(ctx, buf_read, j->b[B_CPTR], 0, o->rowptr, ((size_t)m + 1) * 8));
    HISPI_TRY(hispi_spgemm_alloc_out(ctx, g, o));
    int64_t nnz = o->rowptr[m];
    if (!nnz) return HISP_SUCCESS;
    HISPI_TRY(HISPI_BE(ctx, buf_read, j->b[B_CCOL], 0, o->colind, (size_t)nnz * 4));
    return HISPI_BE(ctx, buf_read, j->b[B_CVAL], 0, o->val, (size_t)nnz * hisp_type_size(g->type));
}

/* Frees every buffer but the operands' (a one pass given up for blocks). */
static void scratch_free(dev_job *j)
{
    for (int i = B_BOUND; i < NB; i++)
        buf_drop(j, i);
}

/* The product in blocks of rows (run_blocks), the operands uploaded: C
 * kept whole on the device where keep_ok and it fits (*keep), else into o. */
static hisp_status blocks_run(dev_job *j, const hispi_spgemm_args *g, hispi_spgemm_out *o,
                              bool keep_ok, bool *keep)
{
    hisp_context ctx = j->ctx;
    int64_t m = g->a.nrows;
    int64_t *bound = NULL;
    blocks B = {j,
                g,
                NULL,
                o,
                hispi_spgemm_dev_block_bytes > 0 ? hispi_spgemm_dev_block_bytes : INT64_MAX,
                false,
                false};
    *keep = false;
    /* 1. the bounds, on the host too */
    hisp_status s = hispi_alloc(ctx, (size_t)m, sizeof *bound, (void **)&bound);
    if (!s) s = dalloc(j, B_BOUND, (size_t)m * 8);
    hispi_karg a[] = {{HISPI_KARG_I64, NULL, m, 0},
                      {HISPI_KARG_I64, NULL, g->b.ncols, 0},
                      kbuf(j, B_APTR),
                      kbuf(j, B_ACOL),
                      kbuf(j, B_BPTR),
                      kbuf(j, B_BOUND)};
    if (!s) s = launch(j, K_BOUND, a, 6, (m + GS - 1) / GS);
    if (!s && m) s = HISPI_BE(ctx, buf_read, j->b[B_BOUND], 0, bound, (size_t)m * 8);
    for (int64_t i = 0; !s && i < m; i++) { /* every row within the tables */
        int64_t t;
        s = row_slots(ctx, bound[i], i, &t);
    }
    B.bound = bound;
    /* 2. the counts by blocks, then C's pointers */
    if (!s) s = dalloc(j, B_CNT, (size_t)m * 8);
    if (!s && m) s = HISPI_BE(ctx, buf_zero, j->b[B_CNT], 0, (size_t)m * 8);
    if (!s) s = run_blocks(&B);
    if (!s && m) s = HISPI_BE(ctx, buf_read, j->b[B_CNT], 0, o->rowptr + 1, (size_t)m * 8);
    if (!s) s = hispi_spgemm_prefix(ctx, o->rowptr, m);
    /* 3. C's columns and values by blocks, kept on the device or downloaded */
    if (!s) B.keep = keep_ok && keep_whole(j, g, o->rowptr[m]);
    if (!s && !B.keep) s = hispi_spgemm_alloc_out(ctx, g, o);
    if (!s) s = upload(j, B_CPTR, o->rowptr, ((size_t)m + 1) * 8);
    B.fill = true;
    if (!s) s = run_blocks(&B);
    free(bound);
    *keep = B.keep;
    return s;
}

/* The product: into *M as a matrix whose arrays stay on the device where M
 * is given and the device holds C whole, else into the host CSR *C (*M
 * NULL). All rows in one pass; where the device cannot give that pass's
 * lists, tables or C, in blocks of rows. */
static hisp_status dev_run(hisp_context ctx, const hispi_spgemm_args *g, hispi_sparse *C,
                           hisp_matrix *M)
{
    memset(C, 0, sizeof *C);
    if (M) *M = NULL;
    int64_t m = g->a.nrows;
    if (m > INT32_MAX)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "SpGEMM on the device: %lld rows",
                          (long long)m);
    dev_job j = {.ctx = ctx};
    hispi_spgemm_out o = {0};
    bool keep = false;
    hisp_status s = hispi_calloc(ctx, (size_t)m + 1, sizeof *o.rowptr, (void **)&o.rowptr);
    if (!s) s = kernels(&j, g->type);
    span t;
    span_start(ctx, &t);
    ctx->spgemm.on_device = 1;
    if (!s) s = upload_operands(&j, g);
    bool whole = true, in_blocks = hispi_spgemm_dev_block_bytes > 0 || !m;
    if (!s && !in_blocks) {
        s = one_pass(&j, g, &o.rowptr[m], &whole);
        if (s == HISP_ERR_OUT_OF_DEVICE_MEMORY && !whole) { /* the rows again, in blocks */
            scratch_free(&j);
            hispi_clear_error(ctx);
            in_blocks = true;
            s = HISP_SUCCESS;
        } else {
            keep = M != NULL;
            if (!s && !keep) s = pass_download(&j, g, &o);
        }
    }
    if (!s && in_blocks) s = blocks_run(&j, g, &o, M != NULL, &keep);
    bool own = keep && j.own[B_CCOL]; /* a large C: no array of the pool's */
    if (!s && own) s = own_pointers(&j, m);
    span_end(ctx, &t);
    if (!s && keep) {
        s = (own ? hispi_matrix_wrap_owned : hispi_matrix_wrap_pooled)(
            ctx, g->type, m, g->b.ncols, o.rowptr[m], j.b[B_CPTR], j.b[B_CCOL], j.b[B_CVAL], M);
        if (!s) j.b[B_CPTR] = j.b[B_CCOL] = j.b[B_CVAL] = NULL; /* the matrix's now */
        free(o.rowptr);
        o.rowptr = NULL;
    }
    job_free(&j);
    if (s) {
        free(o.rowptr), free(o.colind), free(o.val);
        return s;
    }
    hispi_spgemm_device_calls++;
    if (!keep) hispi_spgemm_take(g, &o, C);
    return HISP_SUCCESS;
}

/* ---- a product again into its C (hispi_spgemm_dev_refill) ----------------- */

hisp_status hispi_spgemm_dev_keep_pattern(hisp_matrix X, void **ptr, void **col)
{
    hisp_context ctx = X->ctx;
    size_t pb = ((size_t)X->host.nrows + 1) * 8, cb = (size_t)X->host.nnz * 4;
    *ptr = *col = NULL;
    hisp_status s = HISPI_BE(ctx, buf_alloc, pb, ptr);
    if (!s) s = HISPI_BE(ctx, buf_alloc, cb, col);
    if (!s) s = HISPI_BE(ctx, buf_copy, *ptr, X->ext.rowptr, pb);
    if (!s && cb) s = HISPI_BE(ctx, buf_copy, *col, X->ext.colind, cb);
    if (s) {
        if (*ptr) HISPI_BE_VOID(ctx, buf_free, *ptr);
        if (*col) HISPI_BE_VOID(ctx, buf_free, *col);
        *ptr = *col = NULL;
    }
    return s;
}

hisp_status hispi_spgemm_dev_same_pattern(hisp_matrix X, const void *ptr, const void *col,
                                          int64_t rows, int64_t nnz, bool *same)
{
    hisp_context ctx = X->ctx;
    *same = false;
    if (X->host.nrows != rows || X->host.nnz != nnz) return HISP_SUCCESS;
    void *k = NULL, *flag = NULL;
    uint32_t f = 1;
    int64_t n[2] = {2 * (X->host.nrows + 1), X->host.nnz};
    const void *x[2] = {X->ext.rowptr, X->ext.colind}, *y[2] = {ptr, col};
    hisp_status s = hispi_spgemm_kernel(ctx, X->host.type, "sg_differ", &k);
    if (!s) s = hispi_tmp_alloc(ctx, 8, &flag);
    if (!s) s = HISPI_BE(ctx, buf_zero, flag, 0, 8);
    for (int i = 0; i < 2 && !s; i++) {
        hispi_karg a[] = {{HISPI_KARG_I64, NULL, n[i], 0},
                          {HISPI_KARG_BUF, x[i], 0, 0},
                          {HISPI_KARG_BUF, y[i], 0, 0},
                          {HISPI_KARG_BUF, flag, 0, 0},
                          {HISPI_KARG_I64, NULL, 0, 0}};
        if (n[i])
            s = HISPI_BE(ctx, kern_launch, k, a, 5, (size_t)((n[i] + GS - 1) / GS), (size_t)GS);
    }
    if (!s) s = HISPI_BE(ctx, buf_read, flag, 0, &f, 4);
    if (flag) hispi_tmp_free(ctx, flag);
    if (k) HISPI_BE_VOID(ctx, kern_free, k);
    *same = !s && !f;
    return s;
}

/* Test hook: products computed again into their C (hispi_spgemm_dev_refill). */
long hispi_spgemm_refills;

hisp_status hispi_spgemm_dev_refill(hisp_context ctx, const hispi_spgemm_args *g, hisp_matrix C)
{
    if (g->a.nrows > INT32_MAX)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "SpGEMM on the device: %lld rows",
                          (long long)g->a.nrows);
    dev_job j = {.ctx = ctx, .known = C};
    int64_t nnz = 0;
    bool whole = true;
    hisp_status s = kernels(&j, g->type);
    span t;
    span_start(ctx, &t);
    ctx->spgemm.on_device = 1;
    if (!s) s = upload_operands(&j, g);
    if (!s) s = one_pass(&j, g, &nnz, &whole);
    span_end(ctx, &t);
    job_free(&j);
    if (!s) s = hisp_matrix_device_modified(C); /* C's SpMV form made again at its next use */
    if (!s) hispi_spgemm_refills++;
    return s;
}

hisp_status hispi_spgemm_dev_product(hisp_context ctx, const hispi_spgemm_args *g, hispi_sparse *C)
{
    return dev_run(ctx, g, C, NULL);
}

hisp_status hispi_spgemm_dev_vendor(hisp_context ctx, const hispi_spgemm_args *g, hisp_matrix *C)
{
    *C = NULL;
    dev_job j = {.ctx = ctx};
    span t;
    span_start(ctx, &t);
    ctx->spgemm.on_device = 1;
    hisp_status s = upload_operands(&j, g);
    const hispi_spgemm_operand *a = &g->a, *b = &g->b;
    hispi_dcsr da = {a->nrows, a->ncols, a->nnz, j.b[B_APTR], j.b[B_ACOL], j.b[B_AVAL]},
               db = {b->nrows, b->ncols, b->nnz, j.b[B_BPTR], j.b[B_BCOL], j.b[B_BVAL]}, c = {0};
    if (!s) s = HISPI_BE(ctx, vendor_spgemm, g->type, &da, &db, &c);
    span_end(ctx, &t);
    if (!s) {
        s = hispi_matrix_wrap_owned(ctx, g->type, c.nrows, c.ncols, c.nnz, (void *)c.rowptr,
                                    (void *)c.colind, (void *)c.val, C);
        if (s) {
            const void *cb[3] = {c.rowptr, c.colind, c.val};
            for (int i = 0; i < 3; i++)
                HISPI_BE_VOID(ctx, buf_free, (void *)cb[i]);
        }
    }
    job_free(&j);
    return s;
}

hisp_status hispi_spgemm_dev_matrix(hisp_context ctx, const hispi_spgemm_args *g, hisp_matrix *C)
{
    hispi_sparse h;
    bool real = wrappable(g->type);
    HISPI_TRY(dev_run(ctx, g, &h, real ? C : NULL));
    if (real && *C) return HISP_SUCCESS;
    return hispi_matrix_wrap(ctx, &h, C); /* frees h on failure */
}

/* ---- the plan's numeric re-computation ------------------------------------ */

/* Test hook: plan executions whose values were computed on the device. */
long hispi_spgemm_numeric_device_calls;

enum {
    P_APTR,
    P_ACOL,
    P_AVAL,
    P_BPTR,
    P_BCOL,
    P_BVAL,
    P_CPTR,
    P_CCOL,
    P_CVAL,
    P_ROWS1,
    P_ROWSG,
    P_FLAG,
    P_MAP_PTR, /* the map (kernels/spgemm.cl): where each entry of C's products end */
    P_MAP_PAIRS,
    P_MAP_ROW, /* each entry's row (words) */
    P_MAP_BST, /* where the row of B that each entry of A multiplies starts (words) */
    NP
};
enum {
    PK_ROW,
    PK_GROUP,
    PK_DIFFER,
    PK_MAP_M,
    PK_MAP_G,
    PK_MAP_ENDS,
    PK_NUM_MAP,
    PK_NUM_PK,
    PK_BITS,
    NPK
};
static const char *const pknames[NPK] = {"sg_fill_m",  "sg_num_group", "sg_differ",
                                         "sg_map_m",   "sg_map_group", "sg_map_ends",
                                         "sg_num_map", "sg_num_pk",    "sg_num_b"};

struct hispi_spgemm_dplan {
    void *b[NP];
    void *k[NPK];
    int64_t m, nnz_a, nnz_b, nnz_c;
    int64_t n1, ng;     /* rows in P_ROWS1 (one work-item each) and P_ROWSG (a group each) */
    int64_t ncols;      /* B's columns */
    int64_t nprod;      /* C's products */
    int64_t amax, bmax; /* the longest row of A with products, of B */
    int nbw;            /* P_ROWSG's rows by bitmaps of nbw words (sg_num_b), 0: sg_num_group */
    bool map;           /* the values from the map */
    int bb;             /* the map's products as words, bb bits for B's place (sg_num_pk), or
                           0: pairs (sg_num_map) */
    bool same;          /* B's pattern is A's */
};

void hispi_spgemm_dev_plan_free(hisp_context ctx, hispi_spgemm_dplan **pd)
{
    hispi_spgemm_dplan *d = *pd;
    if (!d) return;
    for (int i = 0; i < NP; i++)
        if (d->b[i]) HISPI_BE_VOID(ctx, buf_free, d->b[i]);
    for (int i = 0; i < NPK; i++)
        if (d->k[i]) HISPI_BE_VOID(ctx, kern_free, d->k[i]);
    free(d);
    *pd = NULL;
}

static hisp_status plan_upload(hisp_context ctx, hispi_spgemm_dplan *d, int which, const void *src,
                               size_t bytes)
{
    HISPI_TRY(hispi_spgemm_dev_buffer(ctx, bytes, false, &d->b[which]));
    if (!bytes) return HISP_SUCCESS;
    return HISPI_BE(ctx, buf_write, d->b[which], 0, src, bytes);
}

/* The rows of C with products, split as the product's classes: the short
 * rows (at most MNA entries of A, MPROD products: a work-item's merge)
 * *r1 (n1 of them), the others *rg (ng: a work-group each), allocated here;
 * *amax the longest of those rows of A. */
static hisp_status plan_lists(hisp_context ctx, const hispi_spgemm_args *g, int32_t **r1,
                              int64_t *n1, int32_t **rg, int64_t *ng, int64_t *nprod, int64_t *amax)
{
    const hispi_spgemm_operand *a = &g->a, *b = &g->b;
    int64_t m = a->nrows;
    *r1 = *rg = NULL;
    *n1 = *ng = *nprod = *amax = 0;
    int64_t *prod = NULL;
    HISPI_TRY(hispi_alloc(ctx, (size_t)m, sizeof *prod, (void **)&prod));
    for (int64_t i = 0; i < m; i++) {
        int64_t f = 0;
        for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++)
            f += b->rowptr[a->colind[k] + 1] - b->rowptr[a->colind[k]];
        /* -1: a merge row */
        prod[i] = f && f <= MPROD && a->rowptr[i + 1] - a->rowptr[i] <= MNA ? -1 : f;
        if (f && a->rowptr[i + 1] - a->rowptr[i] > *amax) *amax = a->rowptr[i + 1] - a->rowptr[i];
        *nprod += f;
        *n1 += prod[i] < 0;
        *ng += prod[i] > 0;
    }
    hisp_status s = hispi_alloc(ctx, (size_t)*n1, sizeof **r1, (void **)r1);
    if (!s) s = hispi_alloc(ctx, (size_t)*ng, sizeof **rg, (void **)rg);
    if (!s) {
        int64_t p1 = 0, pg = 0;
        for (int64_t i = 0; i < m; i++)
            if (prod[i] > 0)
                (*rg)[pg++] = (int32_t)i;
            else if (prod[i] < 0)
                (*r1)[p1++] = (int32_t)i;
    }
    free(prod);
    if (s) {
        free(*r1), free(*rg);
        *r1 = *rg = NULL;
    }
    return s;
}

/* The map's traversal in mode 0 (counts into cnt) or 1 (products placed
 * by the cursors cur). */
static hisp_status map_pass(hisp_context ctx, hispi_spgemm_dplan *d, int64_t mode, void *cnt,
                            void *cur)
{
#define PB(i) ((hispi_karg){HISPI_KARG_BUF, d->b[i], 0, 0})
    /* the counts (mode 0) or the cursors (1) in both slots cnt and mp, and
     * in those a mode does not use */
    void *cm = mode ? cur : cnt;
    const hispi_karg md = {HISPI_KARG_I64, NULL, mode, 0}, bb = {HISPI_KARG_I64, NULL, d->bb, 0},
                     CM = {HISPI_KARG_BUF, cm, 0, 0}, PR = mode ? PB(P_MAP_PAIRS) : CM,
                     ER = mode && d->bb ? PB(P_MAP_ROW) : CM;
    if (d->n1) {
        hispi_karg a[] = {md,          bb,         {HISPI_KARG_I64, NULL, d->n1, 0},
                          PB(P_ROWS1), PB(P_APTR), PB(P_ACOL),
                          PB(P_BPTR),  PB(P_BCOL), PB(P_CPTR),
                          CM,          CM,         PR,
                          ER};
        HISPI_TRY(HISPI_BE(ctx, kern_launch, d->k[PK_MAP_M], a, 13, (size_t)((d->n1 + GS - 1) / GS),
                           (size_t)GS));
    }
    if (d->ng) {
        hispi_karg a[] = {md,         bb,         PB(P_ROWSG), PB(P_APTR), PB(P_ACOL),
                          PB(P_BPTR), PB(P_BCOL), PB(P_CPTR),  PB(P_CCOL), CM,
                          CM,         PR,         ER};
        HISPI_TRY(HISPI_BE(ctx, kern_launch, d->k[PK_MAP_G], a, 13, (size_t)d->ng, (size_t)GS));
    }
#undef PB
    return HISP_SUCCESS;
}

/* Bits for the places 0..n-1 (at least 1). */
static int place_bits(int64_t n)
{
    int b = 1;
    while (b < 62 && ((int64_t)1 << b) < n)
        b++;
    return b;
}

/* Test hooks: plans sum their values by the product's kernels, never by a
 * map (0: by a map where it fits); maps list pairs where words would fit;
 * the maps made, those of words. */
int hispi_spgemm_no_map, hispi_spgemm_map_pairs;
long hispi_spgemm_maps, hispi_spgemm_word_maps;

/* The plan's map (kernels/spgemm.cl): 4 bytes per product and 8 per entry
 * of C where the places in A's and B's rows fit a word and the products
 * count in 32 bits, else 8 bytes per product and per entry (pairs); kept
 * where that is at most a quarter of the device's memory and the entries
 * of A and B count in 32 bits; where the device cannot give its buffers,
 * the plan sums by the product's kernels instead. */
static hisp_status plan_map(hisp_context ctx, hispi_spgemm_dplan *d, const hispi_spgemm_args *g)
{
    hisp_device_info info;
    if (hispi_spgemm_no_map || !d->nnz_c || d->nnz_a > UINT32_MAX || d->nnz_b > UINT32_MAX)
        return HISP_SUCCESS;
    HISPI_TRY(HISPI_BE_ON(ctx, ctx->ops, device_info, ctx->device, &info));
    int ab = place_bits(d->amax), bb = place_bits(d->bmax);
    d->bb = ab + bb <= 32 && (uint64_t)d->nprod <= UINT32_MAX && !hispi_spgemm_map_pairs ? bb : 0;
    uint64_t per = d->bb ? 4 : 8, extra = d->bb ? 4 * (uint64_t)d->nnz_a : 0;
    if (per * (uint64_t)d->nprod + 8 * (uint64_t)(d->nnz_c + 1) + extra > info.global_mem / 4)
        return HISP_SUCCESS;
    uint32_t *bst = NULL; /* (words) B's row start for each entry of A */
    if (d->bb) {
        HISPI_TRY(hispi_alloc(ctx, (size_t)d->nnz_a, sizeof *bst, (void **)&bst));
        for (int64_t k = 0; k < d->nnz_a; k++)
            bst[k] = (uint32_t)g->b.rowptr[g->a.colind[k]];
    }
    void *cnt = NULL, *cur = NULL;
    hispi_scan sc = {{NULL}};
    size_t cb = (size_t)d->nnz_c * 4, eb = ((size_t)d->nnz_c + 1) * 8;
    hisp_status s = hispi_spgemm_dev_buffer(ctx, cb, true, &cnt);
    if (!s) s = HISPI_BE(ctx, buf_zero, cnt, 0, cb);
    if (!s) s = map_pass(ctx, d, 0, cnt, NULL);
    if (!s) s = hispi_spgemm_dev_buffer(ctx, eb, !!d->bb, &cur);
    if (!s) s = hispi_scan_get(ctx, true, &sc);
    if (!s) s = hispi_scan_run(ctx, &sc, d->nnz_c, cnt, cur, NULL);
    hispi_scan_free(ctx, &sc);
    hispi_spgemm_dev_free(ctx, cb, true, cnt);
    if (!s) s = hispi_spgemm_dev_buffer(ctx, (size_t)d->nprod * per, false, &d->b[P_MAP_PAIRS]);
    if (!s && d->bb) s = hispi_spgemm_dev_buffer(ctx, cb, false, &d->b[P_MAP_ROW]);
    if (!s && d->bb) s = plan_upload(ctx, d, P_MAP_BST, bst, (size_t)d->nnz_a * 4);
    free(bst);
    if (!s) s = map_pass(ctx, d, 1, NULL, cur);
    if (!s && d->bb) {
        s = hispi_spgemm_dev_buffer(ctx, cb, false, &d->b[P_MAP_PTR]);
        hispi_karg a[] = {{HISPI_KARG_I64, NULL, d->nnz_c, 0},
                          {HISPI_KARG_BUF, cur, 0, 0},
                          {HISPI_KARG_BUF, d->b[P_MAP_PTR], 0, 0}};
        if (!s)
            s = HISPI_BE(ctx, kern_launch, d->k[PK_MAP_ENDS], a, 3,
                         (size_t)((d->nnz_c + GS - 1) / GS), (size_t)GS);
    }
    if (d->bb)
        hispi_spgemm_dev_free(ctx, eb, true, cur);
    else
        d->b[P_MAP_PTR] = cur; /* the pairs' ends are the cursors */
    d->map = !s;
    hispi_spgemm_maps += d->map;
    hispi_spgemm_word_maps += d->map && d->bb;
    if (s) {
        for (int i = P_MAP_PTR; i <= P_MAP_BST; i++) {
            if (d->b[i]) HISPI_BE_VOID(ctx, buf_free, d->b[i]);
            d->b[i] = NULL;
        }
    }
    if (s != HISP_ERR_OUT_OF_DEVICE_MEMORY) return s;
    hispi_clear_error(ctx);
    return HISP_SUCCESS;
}

hisp_status hispi_spgemm_dev_plan(hisp_context ctx, const hispi_spgemm_args *g,
                                  const hispi_spgemm_out *c, hispi_spgemm_dplan **pd)
{
    *pd = NULL;
    const hispi_spgemm_operand *a = &g->a, *b = &g->b;
    int64_t m = a->nrows;
    if (m > INT32_MAX)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "SpGEMM on the device: %lld rows",
                          (long long)m);
    size_t es = hisp_type_size(g->type);
    hispi_spgemm_dplan *d = NULL;
    HISPI_TRY(hispi_calloc(ctx, 1, sizeof *d, (void **)&d));
    d->m = m, d->nnz_a = a->nnz, d->nnz_b = b->nnz, d->nnz_c = c->rowptr[m];
    int32_t *r1 = NULL, *rg = NULL;
    char opts[240];
    hispi_kcaps caps;
    hisp_status s = HISPI_BE(ctx, kern_caps, &caps);
    d->ncols = b->ncols;
    d->nbw = s ? 0 : bitmap_words(&caps, GS, b->ncols);
    if (!s) s = kernel_opts(ctx, g->type, GS, NBW_MIN, TSORT, opts, sizeof opts);
    for (int i = 0; i < PK_BITS && !s; i++)
        s = HISPI_BE(ctx, kern_get, HISPI_PROG_SPGEMM, opts, pknames[i], &d->k[i]);
    if (!s && d->nbw) s = kernel_opts(ctx, g->type, GS, d->nbw, TSORT, opts, sizeof opts);
    if (!s && d->nbw)
        s = HISPI_BE(ctx, kern_get, HISPI_PROG_SPGEMM, opts, pknames[PK_BITS], &d->k[PK_BITS]);
    if (!s) s = plan_lists(ctx, g, &r1, &d->n1, &rg, &d->ng, &d->nprod, &d->amax);
    for (int64_t r = 0; r < b->nrows; r++)
        if (b->rowptr[r + 1] - b->rowptr[r] > d->bmax) d->bmax = b->rowptr[r + 1] - b->rowptr[r];
    d->same = a->nrows == b->nrows && a->nnz == b->nnz &&
              (a->rowptr == b->rowptr || !memcmp(a->rowptr, b->rowptr, ((size_t)m + 1) * 8)) &&
              (a->colind == b->colind || !memcmp(a->colind, b->colind, (size_t)a->nnz * 4));
    if (!s) s = plan_upload(ctx, d, P_APTR, a->rowptr, ((size_t)m + 1) * 8);
    if (!s) s = plan_upload(ctx, d, P_ACOL, a->colind, (size_t)a->nnz * 4);
    if (!s) s = hispi_spgemm_dev_buffer(ctx, (size_t)a->nnz * es, false, &d->b[P_AVAL]);
    if (!s) s = plan_upload(ctx, d, P_BPTR, b->rowptr, ((size_t)b->nrows + 1) * 8);
    if (!s) s = plan_upload(ctx, d, P_BCOL, b->colind, (size_t)b->nnz * 4);
    if (!s) s = hispi_spgemm_dev_buffer(ctx, (size_t)b->nnz * es, false, &d->b[P_BVAL]);
    if (!s) s = plan_upload(ctx, d, P_CPTR, c->rowptr, ((size_t)m + 1) * 8);
    if (!s) s = plan_upload(ctx, d, P_CCOL, c->colind, (size_t)d->nnz_c * 4);
    if (!s) s = hispi_spgemm_dev_buffer(ctx, (size_t)d->nnz_c * es, false, &d->b[P_CVAL]);
    if (!s) s = plan_upload(ctx, d, P_ROWS1, r1, (size_t)d->n1 * 4);
    if (!s) s = plan_upload(ctx, d, P_ROWSG, rg, (size_t)d->ng * 4);
    if (!s) s = hispi_spgemm_dev_buffer(ctx, 8, false, &d->b[P_FLAG]);
    free(r1), free(rg);
    if (!s) s = plan_map(ctx, d, g);
    if (s) {
        hispi_spgemm_dev_plan_free(ctx, &d);
        return s;
    }
    *pd = d;
    return HISP_SUCCESS;
}

/* Writes op(X)'s values (gathered, conjugated) into the buffer buf. */
static hisp_status write_values(hisp_context ctx, hisp_type t, const hispi_spgemm_operand *o,
                                void *buf)
{
    if (!o->nnz) return HISP_SUCCESS;
    const void *val;
    void *tmp;
    HISPI_TRY(operand_values(ctx, t, o, &val, &tmp));
    hisp_status s = HISPI_BE(ctx, buf_write, buf, 0, val, (size_t)o->nnz * hisp_type_size(t));
    free(tmp);
    return s;
}

/* Flags word w of P_FLAG where the n 32-bit words at x and y differ. */
static hisp_status differ(hisp_context ctx, hispi_spgemm_dplan *d, const void *x, const void *y,
                          int64_t n, int w)
{
    if (!n) return HISP_SUCCESS;
    hispi_karg a[] = {{HISPI_KARG_I64, NULL, n, 0},
                      {HISPI_KARG_BUF, x, 0, 0},
                      {HISPI_KARG_BUF, y, 0, 0},
                      {HISPI_KARG_BUF, d->b[P_FLAG], 0, 0},
                      {HISPI_KARG_I64, NULL, w, 0}};
    return HISPI_BE(ctx, kern_launch, d->k[PK_DIFFER], a, 5, (size_t)((n + GS - 1) / GS),
                    (size_t)GS);
}

/* The values of the operands: op(X)'s written into the plan's buffer own,
 * or, for an operand read in place on the device, its own buffer (*val)
 * after the device has compared its pattern with the plan's copy (word w
 * of P_FLAG). */
static hisp_status operand_in(hisp_context ctx, hispi_spgemm_dplan *d, hisp_type t,
                              const hispi_spgemm_operand *o, int ptr, int own, int w,
                              const void **val)
{
    *val = d->b[own];
    if (!o->dev[0]) return write_values(ctx, t, o, d->b[own]);
    HISPI_TRY(differ(ctx, d, o->dev[0], d->b[ptr], 2 * (o->nrows + 1), w));
    HISPI_TRY(differ(ctx, d, o->dev[1], d->b[ptr + 1], o->nnz, w));
    *val = o->dev[2];
    return HISP_SUCCESS;
}

/* Whether the device flagged an operand's pattern (differ). */
static hisp_status flagged(hisp_context ctx, hispi_spgemm_dplan *d)
{
    uint32_t f[2];
    HISPI_TRY(HISPI_BE(ctx, buf_read, d->b[P_FLAG], 0, f, 8));
    if (f[0] || f[1])
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "hisp_spgemm_plan_execute: %s's pattern on the device differs from "
                          "the plan's",
                          f[0] ? "A" : "B");
    return HISP_SUCCESS;
}

/* The numeric pass's uploads (or the device's pattern checks) and kernels.
 * The map's kernels leave C alone where the checks flagged a pattern, so
 * the flag is read after them: one wait. B read in place from A's buffers,
 * when the plan's B has A's pattern, is checked once. */
static hisp_status numeric_pass(hisp_context ctx, hispi_spgemm_dplan *d, const hispi_spgemm_args *g,
                                void *cval)
{
    const void *av, *bv;
    bool dev = g->a.dev[0] || g->b.dev[0];
    if (dev || d->map) HISPI_TRY(HISPI_BE(ctx, buf_zero, d->b[P_FLAG], 0, 8));
    HISPI_TRY(operand_in(ctx, d, g->type, &g->a, P_APTR, P_AVAL, 0, &av));
    if (d->same && g->a.dev[0] && g->b.dev[0] == g->a.dev[0] && g->b.dev[1] == g->a.dev[1])
        bv = g->b.dev[2];
    else
        HISPI_TRY(operand_in(ctx, d, g->type, &g->b, P_BPTR, P_BVAL, 1, &bv));
#define PB(i) ((hispi_karg){HISPI_KARG_BUF, d->b[i], 0, 0})
    const hispi_karg AV = {HISPI_KARG_BUF, av, 0, 0}, BV = {HISPI_KARG_BUF, bv, 0, 0},
                     CV = {HISPI_KARG_BUF, cval, 0, 0}, N = {HISPI_KARG_I64, NULL, d->nnz_c, 0};
    if (d->map && d->bb) {
        hispi_karg a[] = {N,
                          PB(P_FLAG),
                          PB(P_MAP_PTR),
                          PB(P_MAP_ROW),
                          PB(P_MAP_PAIRS),
                          {HISPI_KARG_I64, NULL, d->bb, 0},
                          PB(P_APTR),
                          PB(P_MAP_BST),
                          AV,
                          BV,
                          CV};
        HISPI_TRY(HISPI_BE(ctx, kern_launch, d->k[PK_NUM_PK], a, 11,
                           (size_t)((d->nnz_c + GS - 1) / GS), (size_t)GS));
    } else if (d->map) {
        hispi_karg a[] = {N, PB(P_FLAG), PB(P_MAP_PTR), PB(P_MAP_PAIRS), AV, BV, CV};
        HISPI_TRY(HISPI_BE(ctx, kern_launch, d->k[PK_NUM_MAP], a, 7,
                           (size_t)((d->nnz_c + GS - 1) / GS), (size_t)GS));
    }
    if (dev) HISPI_TRY(flagged(ctx, d));
    if (d->map) return HISP_SUCCESS;
    if (d->n1) {
        hispi_karg a[] = {{HISPI_KARG_I64, NULL, d->n1, 0},
                          PB(P_ROWS1),
                          PB(P_APTR),
                          PB(P_ACOL),
                          AV,
                          PB(P_BPTR),
                          PB(P_BCOL),
                          BV,
                          PB(P_CPTR),
                          PB(P_CCOL),
                          CV};
        HISPI_TRY(HISPI_BE(ctx, kern_launch, d->k[PK_ROW], a, 11, (size_t)((d->n1 + GS - 1) / GS),
                           (size_t)GS));
    }
    if (d->ng) { /* sg_num_b's arguments: B's columns, then sg_num_group's */
        hispi_karg a[] = {{HISPI_KARG_I64, NULL, d->ncols, 0},
                          PB(P_ROWSG),
                          PB(P_APTR),
                          PB(P_ACOL),
                          AV,
                          PB(P_BPTR),
                          PB(P_BCOL),
                          BV,
                          PB(P_CPTR),
                          PB(P_CCOL),
                          CV};
        bool bits = d->nbw > 0;
        HISPI_TRY(HISPI_BE(ctx, kern_launch, d->k[bits ? PK_BITS : PK_GROUP], bits ? a : a + 1,
                           bits ? 11 : 10, (size_t)d->ng, (size_t)GS));
    }
#undef PB
    return HISP_SUCCESS;
}

/* C on the device with d's structure and values: three buffers of its own
 * (device copies of the plan's), C's host arrays dropped; *kept its values. */
static hisp_status adopt(hisp_context ctx, hispi_spgemm_dplan *d, size_t es, hisp_matrix C,
                         const void **kept)
{
    size_t bytes[3] = {((size_t)d->m + 1) * 8, (size_t)d->nnz_c * 4, (size_t)d->nnz_c * es};
    const int from[3] = {P_CPTR, P_CCOL, P_CVAL};
    void *b[3] = {NULL, NULL, NULL};
    hisp_status s = HISP_SUCCESS;
    for (int i = 0; i < 3 && !s; i++) {
        s = hispi_spgemm_dev_buffer(ctx, bytes[i], false, &b[i]);
        if (!s && bytes[i]) s = HISPI_BE(ctx, buf_copy, b[i], d->b[from[i]], bytes[i]);
    }
    if (s) {
        for (int i = 0; i < 3; i++)
            if (b[i]) HISPI_BE_VOID(ctx, buf_free, b[i]);
        return s;
    }
    hispi_matrix_adopt_owned(C, b[0], b[1], b[2]);
    *kept = b[2];
    return HISP_SUCCESS;
}

hisp_status hispi_spgemm_dev_numeric(hisp_context ctx, hispi_spgemm_dplan *d,
                                     const hispi_spgemm_args *g, hisp_matrix C, const void **kept)
{
    size_t es = hisp_type_size(g->type);
    span t;
    span_start(ctx, &t);
    ctx->spgemm.on_device = 1;
    /* C's values on the device (kept) are written in place, its host copy
     * stale then */
    hisp_status s = numeric_pass(ctx, d, g, *kept ? (void *)*kept : d->b[P_CVAL]);
    span_end(ctx, &t);
    if (s) return s;
    bool real = wrappable(g->type);
    if (*kept) {
        HISPI_TRY(hisp_matrix_device_modified(C));
    } else if (real && HISPI_BE_HAS(ctx, buf_copy)) {
        HISPI_TRY(adopt(ctx, d, es, C, kept));
    } else if (d->nnz_c) {
        HISPI_TRY(HISPI_BE(ctx, buf_read, d->b[P_CVAL], 0, C->host.val, (size_t)d->nnz_c * es));
    }
    hispi_spgemm_numeric_device_calls++;
    return HISP_SUCCESS;
}
