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

/* ---- tree-order sort ----------------------------------------------------- */

/* Entries travel as records: row (u32), column (u32), value (vs bytes), so
 * that a scatter writes one stream per bucket. */
static inline void copy_rec(unsigned char *dst, const unsigned char *src, size_t rs)
{
    if (rs == 12)
        memcpy(dst, src, 12);
    else if (rs == 16)
        memcpy(dst, src, 16);
    else
        memcpy(dst, src, rs);
}

/* One stable counting-sort pass by the cells of levels la..lb together: the
 * key is the tree-order rank of the entry's cell at level lb (the root's
 * digits only span the matrix, so the top levels group cheaply). la > lb:
 * one bucket (a plain packing copy). The first pass reads the caller's
 * arrays (rows from rowptr or rows[]); later passes read records. */
typedef struct sort_pass_s {
    int64_t nnz, nrows;
    int nt, d, k, L, la, lb;
    uint64_t s0c; /* root cells across the matrix's columns */
    size_t nb;    /* buckets */
    size_t vs, rs;
    const int64_t *rowptr;
    const uint32_t *r, *c;
    const unsigned char *v;
    const unsigned char *in; /* records, when r and c are NULL */
    unsigned char *out;
    int64_t *hist;  /* nt x nb */
    bool have_hist; /* hist already counted (by the previous pass's scatter) */
    /* the next pass's keys, counted while scattering: hnext is nt x nt x
     * next->nb, [scatter thread][next pass's thread owning the output] */
    const struct sort_pass_s *next;
    int64_t *hnext;
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

static void chunk(int64_t n, int nt, int t, int64_t *lo, int64_t *hi)
{
    *lo = n / nt * t + (t < n % nt ? t : n % nt);
    *hi = *lo + n / nt + (t < n % nt ? 1 : 0);
}

/* Walks entries lo..hi of the pass input giving (e, r, c). */
#define FOR_ENTRIES(p, lo, hi, BODY)                                                               \
    do {                                                                                           \
        if ((p)->in) {                                                                             \
            for (int64_t e = (lo); e < (hi); e++) {                                                \
                const unsigned char *rec_ = (p)->in + (size_t)e * (p)->rs;                         \
                uint32_t r = hispi_rd32(rec_), c = hispi_rd32(rec_ + 4);                           \
                BODY                                                                               \
            }                                                                                      \
        } else if ((p)->rowptr) {                                                                  \
            int64_t i_ = hispi_row_of((p)->rowptr, (p)->nrows, (lo));                              \
            for (int64_t e = (lo); e < (hi); e++) {                                                \
                while ((p)->rowptr[i_ + 1] <= e)                                                   \
                    i_++;                                                                          \
                uint32_t r = (uint32_t)i_, c = (p)->c[e];                                          \
                BODY                                                                               \
            }                                                                                      \
        } else {                                                                                   \
            for (int64_t e = (lo); e < (hi); e++) {                                                \
                uint32_t r = (p)->r[e], c = (p)->c[e];                                             \
                BODY                                                                               \
            }                                                                                      \
        }                                                                                          \
    } while (0)

static void hist_job(void *arg, int t)
{
    sort_pass *p = arg;
    int64_t lo, hi, *h = p->hist + (size_t)t * p->nb;
    chunk(p->nnz, p->nt, t, &lo, &hi);
    FOR_ENTRIES(p, lo, hi, { h[bucket(p, r, c)]++; });
}

static void scatter_job(void *arg, int t)
{
    sort_pass *p = arg;
    int64_t lo, hi, *h = p->hist + (size_t)t * p->nb;
    chunk(p->nnz, p->nt, t, &lo, &hi);
    size_t rs = p->rs, vs = p->vs;
    int64_t bnd[17], x; /* first output index of each next-pass thread */
    for (int u = 0; u < p->nt; u++)
        chunk(p->nnz, p->nt, u, &bnd[u], &x);
    bnd[p->nt] = p->nnz;
    int64_t *hn = p->hnext ? p->hnext + (size_t)t * (size_t)p->nt * p->next->nb : NULL;
    FOR_ENTRIES(p, lo, hi, {
        int64_t oi = h[bucket(p, r, c)]++;
        unsigned char *o = p->out + (size_t)oi * rs;
        if (hn) {
            int u = 0;
            while (oi >= bnd[u + 1])
                u++;
            hn[(size_t)u * p->next->nb + bucket(p->next, r, c)]++;
        }
        if (p->in) {
            copy_rec(o, p->in + (size_t)e * rs, rs);
        } else {
            memcpy(o, &r, 4);
            memcpy(o + 4, &c, 4);
            if (vs == 4)
                memcpy(o + 8, p->v + (size_t)e * 4, 4);
            else if (vs == 8)
                memcpy(o + 8, p->v + (size_t)e * 8, 8);
            else
                memcpy(o + 8, p->v + (size_t)e * vs, vs);
        }
    });
}

static void sort_by_level(sort_pass *p)
{
    size_t nb = p->nb;
    if (!p->have_hist) {
        memset(p->hist, 0, nb * (size_t)p->nt * sizeof *p->hist);
        run_threads(p->nt, hist_job, p);
    }
    if (p->hnext) memset(p->hnext, 0, (size_t)p->nt * (size_t)p->nt * p->next->nb * 8);
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
    size_t s;                 /* value bytes in the built tree */
    size_t vs;                /* value bytes of the sorted input (differs when measuring) */
    const unsigned char *rec; /* records in tree order */
    size_t rs;
    unsigned char *base; /* pool (fill only) */
} tree;

static inline uint32_t rec_r(const tree *b, int64_t e)
{
    return hispi_rd32(b->rec + (size_t)e * b->rs);
}
static inline uint32_t rec_c(const tree *b, int64_t e)
{
    return hispi_rd32(b->rec + (size_t)e * b->rs + 4);
}
static inline const unsigned char *rec_v(const tree *b, int64_t e)
{
    return b->rec + (size_t)e * b->rs + 8;
}

/* Node type and bytes for a node of n children / entries. */
static int choose(const tree *b, bool leaf, int64_t n, int64_t lo, uint64_t *bytes)
{
    uint64_t es = leaf ? b->s : 8;
    bool dense = hispi_node_dense_fits(b->d, es, (uint64_t)n);
    /* a dense leaf's empty cells are zero bytes: a leaf holding an explicit
     * entry whose bytes are all zero stays COO (exact round trip) */
    for (int64_t e = lo; leaf && dense && e < lo + n; e++)
        dense = !hispi_bytes_zero(rec_v(b, e), b->vs);
    int type = hispi_node_type(leaf, dense, (uint64_t)n);
    *bytes = hispi_node_type_bytes(type, b->d, es, (uint64_t)n);
    return type;
}

/* End of the run of entries starting at e that fall into the same cell of
 * side 2^sh. */
static inline int64_t run_end(const tree *b, int64_t e, int64_t hi, int sh)
{
    uint32_t r = rec_r(b, e) >> sh, c = rec_c(b, e) >> sh;
    int64_t f = e + 1;
    while (f < hi && (rec_r(b, f) >> sh) == r && (rec_c(b, f) >> sh) == c)
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

/* Per-thread room for the children of one node per level (keys, refs). */
typedef struct {
    uint32_t *keys;
    uint64_t *refs;
} scratch;

/* Write the subtree of [lo, hi) at *cursor in postorder (children first, so
 * a node's child count is known when it is written without a second scan);
 * returns its reference. */
static uint64_t fill(const tree *b, int l, int64_t lo, int64_t hi, uint64_t *cursor,
                     const scratch *sc)
{
    uint64_t np = 0, m = (uint64_t)b->d - 1, dd = (uint64_t)b->d * (uint64_t)b->d;
    bool leaf = l == b->L - 1;
    int sh = b->k * (b->L - 1 - l);
    uint32_t *keys = NULL;
    uint64_t *refs = NULL;
    int64_t n = 0;
    if (leaf) {
        n = hi - lo;
    } else {
        keys = sc->keys + (size_t)l * dd;
        refs = sc->refs + (size_t)l * dd;
        for (int64_t e = lo; e < hi; n++) {
            int64_t f = run_end(b, e, hi, sh);
            keys[n] =
                (uint32_t)(((rec_r(b, e) >> sh) & m) * (uint64_t)b->d + ((rec_c(b, e) >> sh) & m));
            refs[n] = fill(b, l + 1, e, f, cursor, sc);
            e = f;
        }
    }
    uint64_t bytes, off = *cursor;
    int type = choose(b, leaf, n, lo, &bytes);
    *cursor += bytes;
    unsigned char *node = b->base + off;
    bool dense = hispi_node_is_dense(type);
    uint64_t es = leaf ? b->s : 8;
    uint64_t pay = dense ? 0 : hispi_coo_payload((uint64_t)n, es, &np);
    if (!dense) {
        uint32_t n32 = (uint32_t)n;
        memcpy(node, &n32, 4);
    }
    for (int64_t k = 0; k < n; k++) {
        uint64_t rd, cd;
        const unsigned char *src;
        if (leaf) {
            rd = rec_r(b, lo + k) & m;
            cd = rec_c(b, lo + k) & m;
            src = rec_v(b, lo + k);
        } else {
            rd = keys[k] / (uint32_t)b->d;
            cd = keys[k] % (uint32_t)b->d;
            src = (const unsigned char *)&refs[k];
        }
        unsigned char *dst;
        if (dense) {
            dst = node + (rd * (uint64_t)b->d + cd) * es;
        } else {
            node[4 + 2 * k] = (unsigned char)rd;
            node[5 + 2 * k] = (unsigned char)cd;
            dst = node + pay + (uint64_t)k * es;
        }
        if (es == 4)
            memcpy(dst, src, 4);
        else if (es == 8)
            memcpy(dst, src, 8);
        else
            memcpy(dst, src, es);
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
    scratch *sc;          /* per thread, fill pass */
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
            rs->refs[j] = fill(rs->b, 1, rs->start[j], rs->start[j + 1], &cur, &rs->sc[t]);
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
    if (nt <= 0) nt = hispi_threads(ctx, (double)nnz);
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
    unsigned char *buf[2] = {0};
    int64_t *hist = NULL, *hnext = NULL, *start = NULL, *first = NULL;
    scratch *sc = NULL;
    uint64_t *cbytes = NULL, *coff = NULL, *crefs = NULL;
    hispi_pool *pool = NULL;
    hisp_status st = HISP_SUCCESS;
    size_t rs = 8 + vs;
    tree b = {d, k, L, s, vs, NULL, rs, NULL};
    /* levels L-2 .. 0; the leaf level needs no pass: the input is row-major
     * and every pass is stable, so each leaf stays row-major. Levels are
     * grouped into one pass while the buckets stay few (the root's digits
     * span only the matrix; with small d several levels fit). L = 1: one
     * packing pass with a single bucket. */
    if (nnz > 0) {
        enum { BUDGET = 1 << 18 };
        uint64_t span = 1, dd = (uint64_t)d * (uint64_t)d;
        for (int l = 0; l < L - 1; l++)
            span *= (uint64_t)d;
        uint64_t s0r = ((uint64_t)nrows + span - 1) / span,
                 s0c = ((uint64_t)ncols + span - 1) / span;
        s0r = s0r ? s0r : 1;
        s0c = s0c ? s0c : 1;
        int ga[64], gb[64], ng = 0;
        uint64_t gn[64], maxnb = 1;
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
        if (ng == 0) { /* L = 1 */
            ga[0] = 1;
            gb[0] = 0;
            gn[ng++] = 1;
        }
        for (int i = 0; i < (ng > 1 ? 2 : 1) && !st; i++) {
            st = hispi_alloc(ctx, (size_t)nnz, rs, (void **)&buf[i]);
            if (!st) hispi_huge_pages(buf[i], (size_t)nnz * rs);
        }
        if (!st) st = hispi_alloc(ctx, (size_t)nt * (size_t)maxnb, sizeof *hist, (void **)&hist);
        /* count each pass's keys while the previous one scatters (saves a read) */
        bool fuse = ng > 1 && (uint64_t)nt * (uint64_t)nt * maxnb * 8 <= (32u << 20);
        if (!st && fuse)
            st = hispi_alloc(ctx, (size_t)nt * (size_t)nt * (size_t)maxnb, sizeof *hnext,
                             (void **)&hnext);
        if (st) goto done;
        int cur = 0;
        bool have = false;
        for (int g = ng - 1; g >= 0; g--, cur ^= 1) { /* finest group first */
            bool first_pass = g == ng - 1;
            sort_pass p = {.nnz = nnz,
                           .nrows = nrows,
                           .nt = nt,
                           .d = d,
                           .k = k,
                           .L = L,
                           .la = ga[g],
                           .lb = gb[g],
                           .s0c = s0c,
                           .nb = (size_t)gn[g],
                           .vs = vs,
                           .rs = rs,
                           .rowptr = first_pass ? rowptr : NULL,
                           .r = first_pass ? (const uint32_t *)rows : NULL,
                           .c = first_pass ? (const uint32_t *)cols : NULL,
                           .v = first_pass ? (const unsigned char *)vals : NULL,
                           .in = first_pass ? NULL : b.rec,
                           .out = buf[cur],
                           .hist = hist,
                           .have_hist = have};
            sort_pass pn;
            if (fuse && g > 0) {
                pn = p;
                pn.la = ga[g - 1];
                pn.lb = gb[g - 1];
                pn.nb = (size_t)gn[g - 1];
                p.next = &pn;
                p.hnext = hnext;
            }
            sort_by_level(&p);
            b.rec = buf[cur];
            have = p.hnext != NULL;
            if (have) /* hist[t'][b] = sum over scatter threads t */
                for (int u = 0; u < nt; u++)
                    for (size_t q = 0; q < pn.nb; q++) {
                        int64_t sum = 0;
                        for (int t2 = 0; t2 < nt; t2++)
                            sum += hnext[((size_t)t2 * (size_t)nt + (size_t)u) * pn.nb + q];
                        hist[(size_t)u * pn.nb + q] = sum;
                    }
        }
        free(hist);
        free(hnext);
        hist = hnext = NULL;
    }

    /* root children (L >= 2): entry bounds and the thread split */
    int64_t nchild = 0;
    uint64_t total = HISPI_POOL_HEADER, root_bytes = 0;
    int root_type = 0;
    if (nnz > 0 && L >= 2) {
        int sh = k * (L - 1);
        /* at most d^2 root children (fewer when the matrix spans few root cells) */
        size_t maxc = (size_t)d * (size_t)d;
        st = hispi_alloc(ctx, maxc + 1, sizeof *start, (void **)&start);
        for (int64_t e = 0; !st && e < nnz; nchild++) {
            start[nchild] = e;
            e = run_end(&b, e, nnz, sh);
        }
        if (!st) st = hispi_calloc(ctx, (size_t)nchild, sizeof *cbytes, (void **)&cbytes);
        if (!st) st = hispi_calloc(ctx, (size_t)nchild, sizeof *coff, (void **)&coff);
        if (!st) st = hispi_calloc(ctx, (size_t)nchild, sizeof *crefs, (void **)&crefs);
        if (!st) st = hispi_alloc(ctx, (size_t)nt + 1, sizeof *first, (void **)&first);
        if (!st && !measure) st = hispi_calloc(ctx, (size_t)nt, sizeof *sc, (void **)&sc);
        size_t per = (size_t)L * maxc; /* children of one node per level */
        for (int t2 = 0; !st && !measure && t2 < nt; t2++) {
            st = hispi_alloc(ctx, per, sizeof *sc[t2].keys, (void **)&sc[t2].keys);
            if (!st) st = hispi_alloc(ctx, per, sizeof *sc[t2].refs, (void **)&sc[t2].refs);
        }
        if (st) goto done;
        start[nchild] = nnz;
        for (int t2 = 0, j2 = 0; t2 <= nt; t2++) { /* balance by entries */
            while (j2 < nchild && start[j2] < nnz / nt * t2)
                j2++;
            first[t2] = t2 == nt ? nchild : j2;
        }
        root_split rs = {.b = &b,
                         .nt = nt,
                         .nchild = nchild,
                         .start = start,
                         .bytes = cbytes,
                         .offset = coff,
                         .refs = crefs,
                         .first = first,
                         .sc = sc,
                         .filling = false};
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
            hispi_huge_pages(pool->base, (size_t)total);
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
                uint64_t rd = (rec_r(&b, start[c]) >> sh) & m, cd = (rec_c(&b, start[c]) >> sh) & m;
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
            hispi_huge_pages(pool->base, (size_t)total);
            b.base = pool->base;
            uint64_t cur = HISPI_POOL_HEADER;
            out->root = fill(&b, 0, 0, nnz, &cur, NULL); /* a leaf: no scratch */
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
    free(hist);
    free(hnext);
    for (int t2 = 0; sc && t2 < nt; t2++) {
        free(sc[t2].keys);
        free(sc[t2].refs);
    }
    free(sc);
    free(buf[0]);
    free(buf[1]);
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
