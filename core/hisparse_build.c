/* HiSparse construction: entries into tree order (stable counting sorts by
 * the per-level (row digit, col digit), d^2 buckets), a size pass over the
 * skeleton, one pool allocation, a fill pass. The sorts split the entries
 * over threads; the size and fill passes split the root's subtrees. */
#include "hispi_hisparse.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

int hispi_hisparse_depth(int d, int64_t nrows, int64_t ncols)
{
    int64_t n = nrows > ncols ? nrows : ncols;
    int L = 1;
    for (uint64_t span = (uint64_t)d; span < (uint64_t)n; span *= (uint64_t)d)
        L++;
    return L;
}

/* ---- a tiny thread helper ------------------------------------------------ */

typedef void (*job_fn)(void *arg, int t);
typedef struct {
    job_fn fn;
    void *arg;
    int t;
} job;

static void *job_main(void *p)
{
    job *j = p;
    j->fn(j->arg, j->t);
    return NULL;
}

/* Run fn(arg, t) for t = 0..nt-1; falls back to serial if a thread cannot
 * start (the result is the same). */
static void run_threads(int nt, job_fn fn, void *arg)
{
    pthread_t th[16];
    job jobs[16];
    bool started[16] = {0};
    for (int t = 1; t < nt; t++) {
        jobs[t] = (job){fn, arg, t};
        started[t] = pthread_create(&th[t], NULL, job_main, &jobs[t]) == 0;
    }
    fn(arg, 0);
    for (int t = 1; t < nt; t++) {
        if (started[t])
            pthread_join(th[t], NULL);
        else
            fn(arg, t);
    }
}

static int host_threads(int64_t work)
{
    if (work < 200000) return 1;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) n = 1;
    return n > 16 ? 16 : (int)n;
}

/* ---- tree-order sort ----------------------------------------------------- */

/* One stable counting-sort pass by the cells of levels la..lb together: the
 * key is the tree-order rank of the entry's cell at level lb (the root's
 * digits only span the matrix, so the top levels group cheaply). */
typedef struct {
    int64_t nnz, nrows;
    int nt, d, k, L, la, lb;
    uint64_t s0c; /* root cells across the matrix's columns */
    size_t nb;    /* buckets */
    size_t s;
    const int64_t *rowptr; /* CSR input: rows come from the pointers */
    const uint32_t *r, *c;
    const unsigned char *v;
    uint32_t *ro, *co;
    unsigned char *vo;
    int64_t *hist; /* nt x nb */
} sort_pass;

static inline uint32_t bucket(const sort_pass *p, uint32_t r, uint32_t c)
{
    uint32_t m = (uint32_t)p->d - 1, key = 0;
    for (int l = p->la; l <= p->lb; l++) {
        int sh = p->k * (p->L - 1 - l);
        if (l == 0)
            key = (r >> sh) * (uint32_t)p->s0c + (c >> sh);
        else
            key = (key * (uint32_t)p->d + ((r >> sh) & m)) * (uint32_t)p->d + ((c >> sh) & m);
    }
    return key;
}

/* Row of entry e in CSR (the last row starting at or before e). */
static int64_t row_of(const int64_t *rowptr, int64_t nrows, int64_t e)
{
    int64_t lo = 0, hi = nrows; /* rowptr[lo] <= e */
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (rowptr[mid] <= e)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static void chunk(int64_t n, int nt, int t, int64_t *lo, int64_t *hi)
{
    *lo = n / nt * t + (t < n % nt ? t : n % nt);
    *hi = *lo + n / nt + (t < n % nt ? 1 : 0);
}

static void hist_job(void *arg, int t)
{
    sort_pass *p = arg;
    int64_t lo, hi, *h = p->hist + (size_t)t * p->nb;
    chunk(p->nnz, p->nt, t, &lo, &hi);
    if (p->rowptr) {
        int64_t i = row_of(p->rowptr, p->nrows, lo);
        for (int64_t e = lo; e < hi; e++) {
            while (p->rowptr[i + 1] <= e)
                i++;
            h[bucket(p, (uint32_t)i, p->c[e])]++;
        }
    } else {
        for (int64_t e = lo; e < hi; e++)
            h[bucket(p, p->r[e], p->c[e])]++;
    }
}

static void scatter_job(void *arg, int t)
{
    sort_pass *p = arg;
    int64_t lo, hi, *h = p->hist + (size_t)t * p->nb;
    chunk(p->nnz, p->nt, t, &lo, &hi);
    size_t s = p->s;
    int64_t i = p->rowptr ? row_of(p->rowptr, p->nrows, lo) : 0;
    for (int64_t e = lo; e < hi; e++) {
        uint32_t r;
        if (p->rowptr) {
            while (p->rowptr[i + 1] <= e)
                i++;
            r = (uint32_t)i;
        } else {
            r = p->r[e];
        }
        int64_t o = h[bucket(p, r, p->c[e])]++;
        p->ro[o] = r;
        p->co[o] = p->c[e];
        if (s == 4)
            memcpy(p->vo + (size_t)o * 4, p->v + (size_t)e * 4, 4);
        else if (s == 8)
            memcpy(p->vo + (size_t)o * 8, p->v + (size_t)e * 8, 8);
        else
            memcpy(p->vo + (size_t)o * s, p->v + (size_t)e * s, s);
    }
}

static void sort_by_level(sort_pass *p)
{
    size_t nb = p->nb;
    memset(p->hist, 0, nb * (size_t)p->nt * sizeof *p->hist);
    run_threads(p->nt, hist_job, p);
    int64_t sum = 0; /* bucket-major, then thread: a stable scatter */
    for (size_t b = 0; b < nb; b++)
        for (int t = 0; t < p->nt; t++) {
            int64_t c = p->hist[(size_t)t * nb + b];
            p->hist[(size_t)t * nb + b] = sum;
            sum += c;
        }
    run_threads(p->nt, scatter_job, p);
}

/* ---- size and fill passes ----------------------------------------------- */

typedef struct {
    int d, k, L;
    size_t s;  /* value bytes in the built tree */
    size_t vs; /* value bytes of the sorted input (differs when measuring) */
    const uint32_t *r, *c;
    const unsigned char *v;
    unsigned char *base; /* pool (fill only) */
} tree;

/* Node type and bytes for a node of n children / entries. */
static int choose(const tree *b, bool leaf, int64_t n, int64_t lo, uint64_t *bytes)
{
    uint64_t es = leaf ? b->s : 8;
    uint64_t coo = hispi_coo_bytes((uint64_t)n, es), dense = hispi_dense_bytes(b->d, es);
    int x = hispi_coo_x((uint64_t)n);
    int coo_type = (leaf ? HISPI_LEAF_COO1 : HISPI_INNER_COO1) + (x == 1 ? 0 : x == 2 ? 1 : 2);
    if (dense <= coo) {
        /* a dense leaf's empty cells are zero bytes: a leaf holding an
         * explicit entry whose bytes are all zero stays COO (exact round trip) */
        bool ok = true;
        for (int64_t e = lo; leaf && e < lo + n && ok; e++)
            ok = !hispi_bytes_zero(b->v + (size_t)e * b->vs, b->vs);
        if (ok) {
            *bytes = dense;
            return leaf ? HISPI_LEAF_DENSE : HISPI_INNER_DENSE;
        }
    }
    *bytes = coo;
    return coo_type;
}

/* End of the run of entries starting at e that fall into the same cell of
 * side 2^sh. */
static inline int64_t run_end(const tree *b, int64_t e, int64_t hi, int sh)
{
    uint32_t r = b->r[e] >> sh, c = b->c[e] >> sh;
    int64_t f = e + 1;
    while (f < hi && (b->r[f] >> sh) == r && (b->c[f] >> sh) == c)
        f++;
    return f;
}

static uint64_t subtree_bytes(const tree *b, int l, int64_t lo, int64_t hi)
{
    uint64_t bytes;
    if (l == b->L - 1) {
        choose(b, true, hi - lo, lo, &bytes);
        return bytes;
    }
    int sh = b->k * (b->L - 1 - l); /* a child's cell side is d^(L-1-l) */
    int64_t n = 0;
    uint64_t sum = 0;
    for (int64_t e = lo; e < hi;) {
        int64_t f = run_end(b, e, hi, sh);
        sum += subtree_bytes(b, l + 1, e, f);
        n++;
        e = f;
    }
    choose(b, false, n, lo, &bytes);
    return sum + bytes;
}

/* Write the subtree of [lo, hi) at *cursor (preorder); returns its reference. */
static uint64_t fill(const tree *b, int l, int64_t lo, int64_t hi, uint64_t *cursor)
{
    uint64_t off = *cursor, bytes, np = 0, m = (uint64_t)b->d - 1;
    unsigned char *node = b->base + off;
    int64_t n;
    bool leaf = l == b->L - 1;
    int sh = b->k * (b->L - 1 - l);
    if (leaf) {
        n = hi - lo;
    } else {
        n = 0;
        for (int64_t e = lo; e < hi; n++)
            e = run_end(b, e, hi, sh);
    }
    int type = choose(b, leaf, n, lo, &bytes);
    *cursor += bytes;
    bool dense = hispi_node_is_dense(type);
    uint64_t es = leaf ? b->s : 8;
    uint64_t pay = dense ? 0 : hispi_coo_payload((uint64_t)n, es, &np);
    if (!dense) {
        uint32_t n32 = (uint32_t)n;
        memcpy(node, &n32, 4);
    }
    int64_t k = 0;
    for (int64_t e = lo; e < hi; k++) {
        int64_t f = leaf ? e + 1 : run_end(b, e, hi, sh);
        uint64_t rd = (b->r[e] >> sh) & m, cd = (b->c[e] >> sh) & m;
        const unsigned char *src;
        uint64_t ref;
        if (leaf) {
            src = b->v + (size_t)e * b->vs;
        } else {
            ref = fill(b, l + 1, e, f, cursor);
            src = (const unsigned char *)&ref;
        }
        if (dense) {
            memcpy(node + (rd * (uint64_t)b->d + cd) * es, src, es);
        } else {
            node[4 + 2 * k] = (unsigned char)rd;
            node[5 + 2 * k] = (unsigned char)cd;
            memcpy(node + pay + (uint64_t)k * es, src, es);
        }
        e = f;
    }
    for (uint64_t p = (uint64_t)n; !dense && p < np; p++) { /* padding repeats the last pair */
        node[4 + 2 * p] = node[4 + 2 * (n - 1)];
        node[5 + 2 * p] = node[5 + 2 * (n - 1)];
    }
    return off | (uint64_t)type;
}

/* The root's children split over threads. */
typedef struct {
    const tree *b;
    int nt;
    int64_t nchild;
    const int64_t *start; /* nchild + 1 entry bounds */
    uint64_t *bytes;      /* per child subtree */
    uint64_t *offset;     /* per child, fill pass */
    uint64_t *refs;       /* per child, fill pass */
    const int64_t *first; /* per thread: first child (nt + 1) */
    bool filling;
} root_split;

static void root_job(void *arg, int t)
{
    root_split *rs = arg;
    for (int64_t j = rs->first[t]; j < rs->first[t + 1]; j++) {
        if (!rs->filling) {
            rs->bytes[j] = subtree_bytes(rs->b, 1, rs->start[j], rs->start[j + 1]);
        } else {
            uint64_t cur = rs->offset[j];
            rs->refs[j] = fill(rs->b, 1, rs->start[j], rs->start[j + 1], &cur);
        }
    }
}

/* Sorted row-major entries (rows from rowptr or rows[]) into a tree. With
 * measure != NULL only the pool bytes for value size s are computed. */
static hisp_status build(hisp_context ctx, hisp_type t, int64_t nrows, int64_t ncols, int64_t nnz,
                         const int64_t *rowptr, const int32_t *rows, const int32_t *cols,
                         const void *vals, int d, int nt, size_t s, uint64_t *measure,
                         hispi_hisparse *out)
{
    int k = 0;
    while ((1 << k) < d)
        k++;
    int L = hispi_hisparse_depth(d, nrows, ncols);
    size_t vs = hisp_type_size(t);
    if (nt <= 0) nt = host_threads(nnz);
    if (out) {
        memset(out, 0, sizeof *out);
        out->d = d;
        out->log2d = k;
        out->depth = L;
        out->nrows = nrows;
        out->ncols = ncols;
        out->nnz = nnz;
        out->type = t;
        out->scale = 1.0;
    }
    uint32_t *r0 = NULL, *bufr[2] = {0}, *bufc[2] = {0};
    unsigned char *bufv[2] = {0};
    int64_t *hist = NULL, *start = NULL, *first = NULL;
    uint64_t *cbytes = NULL, *coff = NULL, *crefs = NULL;
    hispi_pool *pool = NULL;
    hisp_status st = HISP_SUCCESS;
    if (rowptr && L == 1) { /* explicit rows for the fill (no sort pass reads them) */
        st = hispi_alloc(ctx, (size_t)nnz, sizeof *r0, (void **)&r0);
        if (st) return st;
        for (int64_t i = 0; i < nrows; i++)
            for (int64_t e = rowptr[i]; e < rowptr[i + 1]; e++)
                r0[e] = (uint32_t)i;
    }
    tree b = {d,    k,   L, s, vs, rowptr ? r0 : (const uint32_t *)rows, (const uint32_t *)cols,
              vals, NULL};
    /* levels L-2 .. 0; the leaf level needs no pass: the input is row-major
     * and every pass is stable, so each leaf stays row-major. Levels are
     * grouped into one pass while the buckets stay few (the root's digits
     * span only the matrix; with small d several levels fit). */
    if (L >= 2 && nnz > 0) {
        enum { BUDGET = 1 << 16 };
        uint64_t span = 1, dd = (uint64_t)d * (uint64_t)d;
        for (int l = 0; l < L - 1; l++)
            span *= (uint64_t)d;
        uint64_t s0r = ((uint64_t)nrows + span - 1) / span,
                 s0c = ((uint64_t)ncols + span - 1) / span;
        s0r = s0r ? s0r : 1;
        s0c = s0c ? s0c : 1;
        int ga[64], gb[64], ng = 0;
        uint64_t gn[64], maxnb = 0;
        for (int l = 0; l <= L - 2;) {
            uint64_t range = l == 0 ? s0r * s0c : dd;
            int lb = l;
            while (lb + 1 <= L - 2 && range * dd <= BUDGET)
                range *= dd, lb++;
            ga[ng] = l;
            gb[ng] = lb;
            gn[ng++] = range;
            maxnb = range > maxnb ? range : maxnb;
            l = lb + 1;
        }
        for (int i = 0; i < (ng > 1 ? 2 : 1) && !st; i++) {
            st = hispi_alloc(ctx, (size_t)nnz, sizeof(uint32_t), (void **)&bufr[i]);
            if (!st) st = hispi_alloc(ctx, (size_t)nnz, sizeof(uint32_t), (void **)&bufc[i]);
            if (!st) st = hispi_alloc(ctx, (size_t)nnz, vs, (void **)&bufv[i]);
        }
        if (!st) st = hispi_alloc(ctx, (size_t)nt * (size_t)maxnb, sizeof *hist, (void **)&hist);
        if (st) goto done;
        int cur = 0;
        for (int g = ng - 1; g >= 0; g--, cur ^= 1) { /* finest group first */
            sort_pass p = {nnz,       nrows,
                           nt,        d,
                           k,         L,
                           ga[g],     gb[g],
                           s0c,       (size_t)gn[g],
                           vs,        g == ng - 1 ? rowptr : NULL,
                           b.r,       b.c,
                           b.v,       bufr[cur],
                           bufc[cur], bufv[cur],
                           hist};
            sort_by_level(&p);
            b.r = bufr[cur];
            b.c = bufc[cur];
            b.v = bufv[cur];
        }
        free(r0);
        r0 = NULL;
        free(hist);
        hist = NULL;
    }

    /* root children (L >= 2): entry bounds and the thread split */
    int64_t nchild = 0;
    uint64_t total = HISPI_POOL_HEADER, root_bytes = 0;
    int root_type = 0;
    if (nnz > 0 && L >= 2) {
        int sh = k * (L - 1);
        for (int64_t e = 0; e < nnz; nchild++)
            e = run_end(&b, e, nnz, sh);
        st = hispi_alloc(ctx, (size_t)nchild + 1, sizeof *start, (void **)&start);
        if (!st) st = hispi_calloc(ctx, (size_t)nchild, sizeof *cbytes, (void **)&cbytes);
        if (!st) st = hispi_calloc(ctx, (size_t)nchild, sizeof *coff, (void **)&coff);
        if (!st) st = hispi_calloc(ctx, (size_t)nchild, sizeof *crefs, (void **)&crefs);
        if (!st) st = hispi_alloc(ctx, (size_t)nt + 1, sizeof *first, (void **)&first);
        if (st) goto done;
        int64_t j = 0;
        for (int64_t e = 0; e < nnz; j++) {
            start[j] = e;
            e = run_end(&b, e, nnz, sh);
        }
        start[nchild] = nnz;
        for (int t2 = 0, j2 = 0; t2 <= nt; t2++) { /* balance by entries */
            while (j2 < nchild && start[j2] < nnz / nt * t2)
                j2++;
            first[t2] = t2 == nt ? nchild : j2;
        }
        root_split rs = {&b, nt, nchild, start, cbytes, coff, crefs, first, false};
        run_threads(nt, root_job, &rs);
        root_type = choose(&b, false, nchild, 0, &root_bytes);
        total += root_bytes;
        for (int64_t c = 0; c < nchild; c++) {
            coff[c] = total;
            total += cbytes[c];
        }
        if (!measure) {
            st = hispi_pool_create(ctx, total, &pool);
            if (st) goto done;
            b.base = pool->base;
            rs.filling = true;
            run_threads(nt, root_job, &rs);
            /* the root, written last at offset 16 */
            unsigned char *node = pool->base + HISPI_POOL_HEADER;
            uint64_t np = 0, pay = 0, m = (uint64_t)d - 1;
            bool dense = hispi_node_is_dense(root_type);
            if (!dense) {
                uint32_t n32 = (uint32_t)nchild;
                memcpy(node, &n32, 4);
                pay = hispi_coo_payload((uint64_t)nchild, 8, &np);
            }
            for (int64_t c = 0; c < nchild; c++) {
                uint64_t rd = (b.r[start[c]] >> sh) & m, cd = (b.c[start[c]] >> sh) & m;
                if (dense) {
                    memcpy(node + (rd * (uint64_t)d + cd) * 8, &crefs[c], 8);
                } else {
                    node[4 + 2 * c] = (unsigned char)rd;
                    node[5 + 2 * c] = (unsigned char)cd;
                    memcpy(node + pay + (uint64_t)c * 8, &crefs[c], 8);
                }
            }
            for (uint64_t p = (uint64_t)nchild; !dense && p < np; p++) {
                node[4 + 2 * p] = node[4 + 2 * (nchild - 1)];
                node[5 + 2 * p] = node[5 + 2 * (nchild - 1)];
            }
            out->root = HISPI_POOL_HEADER | (uint64_t)root_type;
        }
    } else if (nnz > 0) { /* L == 1: the root is a leaf */
        total += subtree_bytes(&b, 0, 0, nnz);
        if (!measure) {
            st = hispi_pool_create(ctx, total, &pool);
            if (st) goto done;
            b.base = pool->base;
            uint64_t cur = HISPI_POOL_HEADER;
            out->root = fill(&b, 0, 0, nnz, &cur);
        }
    } else if (!measure) {
        st = hispi_pool_create(ctx, total, &pool);
        if (st) goto done;
    }
    if (measure) *measure = total;
    if (pool) {
        pool->used = pool->live = total;
        out->pool = pool;
        pool = NULL;
    }
done:
    hispi_pool_release(pool);
    free(r0);
    free(hist);
    for (int i = 0; i < 2; i++) {
        free(bufr[i]);
        free(bufc[i]);
        free(bufv[i]);
    }
    free(start);
    free(first);
    free(cbytes);
    free(coff);
    free(crefs);
    return st;
}

hisp_status hispi_hisparse_build_sorted(hisp_context ctx, hisp_type t, int64_t nrows, int64_t ncols,
                                        int64_t nnz, const int32_t *rows, const int32_t *cols,
                                        const void *vals, int d, int nthreads, hispi_hisparse *out)
{
    return build(ctx, t, nrows, ncols, nnz, NULL, rows, cols, vals, d, nthreads, hisp_type_size(t),
                 NULL, out);
}

/* Is a CSR storage sorted without duplicates? */
static bool csr_sorted(const hispi_sparse *a)
{
    for (int64_t i = 0; i < a->nrows; i++)
        for (int64_t e = a->rowptr[i] + 1; e < a->rowptr[i + 1]; e++)
            if (a->colind[e] <= a->colind[e - 1]) return false;
    return true;
}

/* Row-major sorted view of src (borrowed, or converted into *tmp). */
static hisp_status sorted_view(hisp_context ctx, const hispi_sparse *src, hispi_sparse *tmp,
                               const hispi_sparse **view)
{
    memset(tmp, 0, sizeof *tmp);
    if ((src->format == HISP_FORMAT_CSR && csr_sorted(src)) ||
        (src->format == HISP_FORMAT_COO && src->sorted)) {
        *view = src;
        return HISP_SUCCESS;
    }
    HISPI_TRY(hispi_sparse_convert(ctx, src, HISP_FORMAT_CSR, tmp));
    *view = tmp;
    return HISP_SUCCESS;
}

hisp_status hispi_hisparse_build(hisp_context ctx, const hispi_sparse *src, int d,
                                 hispi_hisparse *out)
{
    hispi_sparse tmp;
    const hispi_sparse *v;
    HISPI_TRY(sorted_view(ctx, src, &tmp, &v));
    hisp_status s = build(ctx, v->type, v->nrows, v->ncols, v->nnz,
                          v->format == HISP_FORMAT_CSR ? v->rowptr : NULL, v->rowind, v->colind,
                          v->val, d, 0, hisp_type_size(v->type), NULL, out);
    hispi_sparse_free(&tmp);
    return s;
}

hisp_status hispi_hisparse_measure(hisp_context ctx, const hispi_sparse *src, int d, size_t s,
                                   uint64_t *bytes)
{
    hispi_sparse tmp;
    const hispi_sparse *v;
    HISPI_TRY(sorted_view(ctx, src, &tmp, &v));
    hisp_status st = build(ctx, v->type, v->nrows, v->ncols, v->nnz,
                           v->format == HISP_FORMAT_CSR ? v->rowptr : NULL, v->rowind, v->colind,
                           v->val, d, 0, s, bytes, NULL);
    hispi_sparse_free(&tmp);
    return st;
}
