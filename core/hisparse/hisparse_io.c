/* HiSparse files (.hisp): a 96-byte header (sizes, state, checksums) and the
 * compacted pool of the tree (docs/FORMAT.md). Loading trusts nothing: every
 * reference is checked (type, bounds, level, coordinates), and a bitmap of
 * the pool's 16-byte blocks makes each byte part of at most one node, so
 * validation is O(file size) whatever a crafted file points at. */
#include "hispi_hisparse.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define FILE_MAGIC "HISPARSE"
#define FILE_VERSION 1u
#define FILE_HEADER 96u

/* ---- save ------------------------------------------------------------------ */

typedef struct {
    const hispi_hisparse *h;
    unsigned char *out; /* new pool */
    uint64_t cursor;
    size_t s;
} compact;

/* Copy the subtree in preorder into the new pool; returns its new reference. */
static uint64_t copy_node(compact *c, uint64_t ref)
{
    const hispi_hisparse *h = c->h;
    int t = HISPI_REF_TYPE(ref), d = h->d;
    uint64_t bytes = hispi_node_bytes(h->pool, ref, c->s, d), off = c->cursor;
    memcpy(c->out + off, h->pool->base + HISPI_REF_OFF(ref), bytes);
    c->cursor += bytes;
    if (!hispi_node_is_leaf(t)) {
        uint64_t n, first = 0, np;
        if (t == HISPI_INNER_DENSE) {
            n = (uint64_t)d * (uint64_t)d;
        } else {
            n = hispi_rd32(c->out + off);
            first = hispi_coo_payload(n, 8, &np);
        }
        for (uint64_t k = 0; k < n; k++) {
            unsigned char *slot = c->out + off + first + 8 * k;
            uint64_t child = hispi_rd64(slot);
            if (!child) continue;
            child = copy_node(c, child);
            memcpy(slot, &child, 8);
        }
    }
    return off | (uint64_t)t;
}

static void put32(unsigned char *p, uint32_t v)
{
    memcpy(p, &v, 4);
}
static void put64(unsigned char *p, uint64_t v)
{
    memcpy(p, &v, 8);
}

/* The file image of a tree (header + compacted pool). */
static hisp_status serialise(hisp_context ctx, const hispi_hisparse *h, unsigned char **data,
                             size_t *size)
{
    hisp_hisparse_profile p;
    HISPI_TRY(hispi_hisparse_profile(ctx, h, &p));
    uint64_t total = FILE_HEADER + p.bytes;
    unsigned char *buf = NULL;
    HISPI_TRY(hispi_calloc(ctx, (size_t)total, 1, (void **)&buf));
    unsigned char *pool = buf + FILE_HEADER;
    memcpy(pool, h->pool->base, HISPI_POOL_HEADER);
    compact c = {h, pool, HISPI_POOL_HEADER, hisp_type_size(h->type)};
    uint64_t root = h->root ? copy_node(&c, h->root) : 0;
    memcpy(buf, FILE_MAGIC, 8);
    put32(buf + 8, FILE_VERSION);
    put32(buf + 12, FILE_HEADER);
    put32(buf + 16, (uint32_t)h->type);
    put32(buf + 20, (uint32_t)h->d);
    put32(buf + 24, (uint32_t)h->depth);
    put32(buf + 28, h->transposed ? 1u : 0u);
    put64(buf + 32, (uint64_t)h->nrows);
    put64(buf + 40, (uint64_t)h->ncols);
    put64(buf + 48, (uint64_t)h->nnz);
    memcpy(buf + 56, &h->scale, 8);
    put64(buf + 64, root);
    put64(buf + 72, p.bytes);
    put64(buf + 80, hispi_hash(pool, (size_t)p.bytes, 0));
    put64(buf + 88, hispi_hash(buf, 88, 0));
    *data = buf;
    *size = (size_t)total;
    return HISP_SUCCESS;
}

hisp_status hisp_matrix_save(hisp_matrix A, const char *path)
{
    if (!hispi_mat_ok(A)) return HISP_ERR_INVALID_HANDLE;
    HISPI_TRY(hispi_matrix_need_host(A));
    hisp_context ctx = A->ctx;
    if (!path) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "path is NULL");
    hispi_hisparse tmp, *h = A->hs;
    if (!h) { /* not HiSparse yet: a temporary tree with the node size */
        HISPI_TRY(hispi_hisparse_build(
            ctx, &A->host, A->node_size ? A->node_size : HISP_HISPARSE_DEFAULT_NODE_SIZE, &tmp));
        h = &tmp;
    }
    unsigned char *data = NULL;
    size_t size = 0;
    hispi_family_lock_host(h); /* the pool's bytes are copied: no edit may move them */
    hisp_status s = serialise(ctx, h, &data, &size);
    hispi_family_unlock(h->pool);
    if (h == &tmp) hispi_hisparse_free(&tmp);
    HISPI_TRY(s);
    s = hispi_save_file(ctx, path, data, size);
    free(data);
    return s;
}

/* ---- load ------------------------------------------------------------------ */

typedef struct {
    hisp_context ctx;
    const char *name;
    const unsigned char *pool;
    uint64_t size; /* pool bytes */
    uint8_t *used; /* bitmap of 16-byte blocks */
    int d, k, L;
    size_t s;
    int64_t nrows, ncols, nnz; /* nnz: counted */
} check;

#define BAD(c, ...) hispi_fail_at((c)->ctx, (c)->name, 0, __VA_ARGS__)

static hisp_status check_node(check *c, uint64_t ref, int l, int64_t r0, int64_t c0)
{
    uint64_t off = HISPI_REF_OFF(ref), fo = off + FILE_HEADER;
    int t = HISPI_REF_TYPE(ref);
    if (t == HISPI_NODE_INVALID || t >= HISPI_NODE_TYPES)
        return BAD(c, "node type %d at pool offset %llu is invalid", t, (unsigned long long)off);
    bool leaf = hispi_node_is_leaf(t), dense = hispi_node_is_dense(t);
    if (leaf != (l == c->L - 1))
        return BAD(c, "%s node at byte %llu on level %d of %d", leaf ? "leaf" : "inner",
                   (unsigned long long)fo, l, c->L);
    if (off < HISPI_POOL_HEADER || off + 4 > c->size)
        return BAD(c, "node reference %#llx points outside the pool", (unsigned long long)ref);
    uint64_t es = leaf ? c->s : 8, n = 0, dd = (uint64_t)c->d * (uint64_t)c->d;
    if (!dense) {
        n = hispi_rd32(c->pool + off);
        int x = hispi_node_x(t);
        bool ok = x == 4 ? (n >= 3 && n <= dd) : n == (uint64_t)x;
        if (!ok)
            return BAD(c, "COO%d node at byte %llu holds %llu entries", x, (unsigned long long)fo,
                       (unsigned long long)n);
    }
    uint64_t bytes = dense ? hispi_dense_bytes(c->d, es) : hispi_coo_bytes(n, es);
    if (bytes > c->size - off)
        return BAD(c, "node at byte %llu (%llu bytes) runs past the end of the pool",
                   (unsigned long long)fo, (unsigned long long)bytes);
    for (uint64_t b = off / 16; b < (off + bytes) / 16; b++) {
        if (c->used[b / 8] & (1u << (b % 8)))
            return BAD(c, "node at byte %llu overlaps another node (or is referenced twice)",
                       (unsigned long long)fo);
        c->used[b / 8] |= (uint8_t)(1u << (b % 8));
    }
    const unsigned char *node = c->pool + off;
    int sh = c->k * (c->L - 1 - l);
    uint64_t np = 0, pay = dense ? 0 : hispi_coo_payload(n, es, &np);
    uint64_t count = dense ? dd : n, children = 0;
    int prev = -1;
    for (uint64_t k = 0; k < count; k++) {
        uint64_t rd, cd;
        const unsigned char *p;
        if (dense) {
            rd = k / (uint64_t)c->d;
            cd = k % (uint64_t)c->d;
            p = node + k * es;
            if (leaf ? hispi_bytes_zero(p, es) : hispi_rd64(p) == 0) continue;
        } else {
            rd = node[4 + 2 * k];
            cd = node[5 + 2 * k];
            if (rd >= (uint64_t)c->d || cd >= (uint64_t)c->d)
                return BAD(c, "local coordinate (%llu, %llu) >= d at byte %llu",
                           (unsigned long long)rd, (unsigned long long)cd, (unsigned long long)fo);
            int key = (int)(rd * (uint64_t)c->d + cd);
            if (key <= prev)
                return BAD(c, "COO node at byte %llu: entries not sorted row-major or repeated",
                           (unsigned long long)fo);
            prev = key;
            p = node + pay + k * es;
        }
        int64_t r = r0 + ((int64_t)rd << sh), col = c0 + ((int64_t)cd << sh);
        if (r >= c->nrows || col >= c->ncols)
            return BAD(c, "node at byte %llu: cell (%lld, %lld) outside the %lld x %lld matrix",
                       (unsigned long long)fo, (long long)r, (long long)col, (long long)c->nrows,
                       (long long)c->ncols);
        children++;
        if (leaf) {
            c->nnz++;
        } else {
            uint64_t child = hispi_rd64(p);
            if (!child)
                return BAD(c, "COO node at byte %llu: empty child reference",
                           (unsigned long long)fo);
            HISPI_TRY(check_node(c, child, l + 1, r, col));
        }
    }
    if (children == 0) return BAD(c, "dense node at byte %llu is empty", (unsigned long long)fo);
    return HISP_SUCCESS;
}

hisp_status hispi_hisparse_parse(hisp_context ctx, const unsigned char *data, size_t size,
                                 const char *name, hispi_hisparse *out)
{
    memset(out, 0, sizeof *out);
    check c = {.ctx = ctx, .name = name};
    if (size < FILE_HEADER) return BAD(&c, "truncated: %zu bytes, the header has 96", size);
    if (memcmp(data, FILE_MAGIC, 8) != 0) return BAD(&c, "not a HiSparse file (bad magic)");
    uint32_t version = hispi_rd32(data + 8);
    if (version != FILE_VERSION)
        return BAD(&c, "file version %u, this library reads version %u", version, FILE_VERSION);
    if (hispi_rd32(data + 12) != FILE_HEADER) return BAD(&c, "header size is not 96");
    if (hispi_rd64(data + 88) != hispi_hash(data, 88, 0))
        return BAD(&c, "header checksum mismatch");
    uint32_t type = hispi_rd32(data + 16), d = hispi_rd32(data + 20), L = hispi_rd32(data + 24);
    uint32_t flags = hispi_rd32(data + 28);
    int64_t nrows = (int64_t)hispi_rd64(data + 32), ncols = (int64_t)hispi_rd64(data + 40);
    int64_t nnz = (int64_t)hispi_rd64(data + 48);
    double scale;
    memcpy(&scale, data + 56, 8);
    uint64_t root = hispi_rd64(data + 64), pbytes = hispi_rd64(data + 72);
    if (type >= HISP_TYPE_COUNT) return BAD(&c, "entry type %u is invalid", type);
    if (d < 4 || d > 256 || (d & (d - 1))) return BAD(&c, "node size %u is invalid", d);
    if (nrows < 0 || ncols < 0 || nrows > INT32_MAX || ncols > INT32_MAX || nnz < 0)
        return BAD(&c, "invalid sizes %lld x %lld, %lld entries", (long long)nrows,
                   (long long)ncols, (long long)nnz);
    if (nrows > HISPI_FILE_DIM_LIMIT(size) || ncols > HISPI_FILE_DIM_LIMIT(size))
        return BAD(&c,
                   "%lld x %lld is too large for a %zu-byte file (at most 2^20 + 8 x the file "
                   "size = %lld rows and columns)",
                   (long long)nrows, (long long)ncols, size, (long long)HISPI_FILE_DIM_LIMIT(size));
    if ((int)L != hispi_hisparse_depth((int)d, nrows, ncols))
        return BAD(&c, "depth %u does not fit node size %u and %lld x %lld", L, d, (long long)nrows,
                   (long long)ncols);
    if (flags > 1) return BAD(&c, "unknown flags %#x", flags);
    if (!isfinite(scale)) return BAD(&c, "scale factor is not finite");
    if (pbytes != size - FILE_HEADER)
        return BAD(&c, "truncated or padded: the pool has %llu bytes, the file holds %zu",
                   (unsigned long long)pbytes, size - FILE_HEADER);
    if (pbytes < HISPI_POOL_HEADER || pbytes % 16)
        return BAD(&c, "pool size %llu is invalid", (unsigned long long)pbytes);
    const unsigned char *pool = data + FILE_HEADER;
    if (hispi_rd64(data + 80) != hispi_hash(pool, (size_t)pbytes, 0))
        return BAD(&c, "pool checksum mismatch");
    if (hispi_rd32(pool) != HISPI_POOL_MAGIC || hispi_rd32(pool + 4) != HISPI_POOL_VERSION ||
        hispi_rd64(pool + 8) != 0)
        return BAD(&c, "bad pool header");
    if ((root == 0) != (nnz == 0)) return BAD(&c, "root and entry count disagree");
    c.pool = pool;
    c.size = pbytes;
    c.d = (int)d;
    while ((1 << c.k) < c.d)
        c.k++;
    c.L = (int)L;
    c.s = hisp_type_size((hisp_type)type);
    c.nrows = nrows;
    c.ncols = ncols;
    HISPI_TRY(hispi_calloc(ctx, (size_t)(pbytes / 16 / 8 + 1), 1, (void **)&c.used));
    hisp_status s = root ? check_node(&c, root, 0, 0, 0) : HISP_SUCCESS;
    for (uint64_t b = 1; !s && b < pbytes / 16; b++) /* block 0 is the pool header */
        if (!(c.used[b / 8] & (1u << (b % 8))))
            s = BAD(&c, "pool bytes at %llu belong to no node", (unsigned long long)(16 * b));
    free(c.used);
    HISPI_TRY(s);
    if (c.nnz != nnz)
        return BAD(&c, "the tree holds %lld entries, the header says %lld", (long long)c.nnz,
                   (long long)nnz);
    hispi_pool *p = NULL;
    HISPI_TRY(hispi_pool_create(ctx, pbytes, &p));
    memcpy(p->base, pool, (size_t)pbytes);
    p->used = p->live = pbytes;
    out->pool = p;
    out->root = root;
    out->d = (int)d;
    out->log2d = c.k;
    out->depth = (int)L;
    out->nrows = nrows;
    out->ncols = ncols;
    out->nnz = nnz;
    out->type = (hisp_type)type;
    out->transposed = flags & 1;
    out->scale = scale;
    return HISP_SUCCESS;
}

hisp_status hisp_matrix_load_buffer(hisp_context ctx, const void *data, size_t size,
                                    const char *name, hisp_matrix *A)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!A || (!data && size))
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "NULL data or output handle");
    *A = NULL;
    hispi_hisparse h;
    HISPI_TRY(hispi_hisparse_parse(ctx, data, size, name ? name : "<buffer>", &h));
    return hispi_hisparse_wrap(ctx, &h, A);
}

hisp_status hisp_matrix_load(hisp_context ctx, const char *path, hisp_matrix *A)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!path || !A) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "NULL path or handle");
    *A = NULL;
    char *data = NULL;
    size_t size = 0;
    HISPI_TRY(hispi_read_file(ctx, path, FILE_MAGIC, &data, &size));
    hisp_status s = hisp_matrix_load_buffer(ctx, data, size, path, A);
    free(data);
    return s;
}
