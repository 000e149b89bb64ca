/* Matrix Market writer: general coordinate files (and n x k arrays for
 * vectors of k columns), values in digits that read back exactly: Grisu2's (at most 17,
 * core/io/mmio_dtoa.c) for 8-byte scalars, "%.9g" for 4-byte ones. Blocks of entries are formatted
 * in parallel (hispi_threads) into buffers written in order; the target follows the rule of
 * file_out.c, and a path ending in .gz or .bz2 is compressed (core/io/mmio_compress.c). Errors at
 * any step: HISP_ERR_IO. */
#include "compound/hispi_compound.h"
#include "hispi_mmio.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BLOCK = 1 << 15, LINE_MAX_BYTES = 2 * 11 + 4 * 26 + 2 };

typedef struct {
    const hispi_sparse *s; /* NULL: a vector (vals, n) */
    hisp_type t;
    const void *vals;
    int64_t rows, cols; /* a vector: its shape (the file's, column-major) */
    bool row_order;     /* vals row after row (else column after column) */
    int64_t n;          /* entries */
    int64_t first;      /* first block of the round */
    int nb;             /* blocks in the round */
    char **buf;
    size_t *len;
    atomic_int next;
    locale_t loc;
} wjob;

/* Decimal digits of v (v < 2^32) at p; returns the end. */
static inline char *put_u32(char *p, uint32_t v)
{
    char tmp[10];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

static inline char *put_value(char *p, hisp_type t, const void *val, int64_t k)
{
    int comps = t == HISP_C32 || t == HISP_C64 ? 2 : t == HISP_Q32 || t == HISP_Q64 ? 4 : 1;
    bool f32 = t == HISP_F32 || t == HISP_C32 || t == HISP_Q32;
    for (int q = 0; q < comps; q++) {
        if (q) *p++ = ' ';
        if (f32)
            p += snprintf(p, 26, "%.9g", (double)((const float *)val)[comps * k + q]);
        else
            p = hispi_mmio_dtoa(p, ((const double *)val)[comps * k + q]);
    }
    *p++ = '\n';
    return p;
}

static void format_block(const wjob *j, int64_t b, char *out, size_t *len)
{
    int64_t k0 = b * BLOCK, k1 = k0 + BLOCK < j->n ? k0 + BLOCK : j->n;
    char *p = out;
    const hispi_sparse *s = j->s;
    if (!s && !j->row_order) {
        for (int64_t k = k0; k < k1; k++)
            p = put_value(p, j->t, j->vals, k);
    } else if (!s) { /* the file's k-th entry, (k % rows, k / rows), is at i * cols + j */
        for (int64_t k = k0; k < k1; k++)
            p = put_value(p, j->t, j->vals, k % j->rows * j->cols + k / j->rows);
    } else if (s->format == HISP_FORMAT_COO) {
        for (int64_t k = k0; k < k1; k++) {
            p = put_u32(p, (uint32_t)s->rowind[k] + 1);
            *p++ = ' ';
            p = put_u32(p, (uint32_t)s->colind[k] + 1);
            *p++ = ' ';
            p = put_value(p, s->type, s->val, k);
        }
    } else {
        bool csr = s->format == HISP_FORMAT_CSR;
        const int64_t *ptr = csr ? s->rowptr : s->colptr;
        const int32_t *in = csr ? s->colind : s->rowind;
        int64_t o = hispi_row_of(ptr, csr ? s->nrows : s->ncols, k0);
        for (int64_t k = k0; k < k1; k++) {
            while (ptr[o + 1] <= k)
                o++;
            p = put_u32(p, (uint32_t)(csr ? o : in[k]) + 1);
            *p++ = ' ';
            p = put_u32(p, (uint32_t)(csr ? in[k] : o) + 1);
            *p++ = ' ';
            p = put_value(p, s->type, s->val, k);
        }
    }
    *len = (size_t)(p - out);
}

static void *write_worker(void *arg)
{
    wjob *j = arg;
    locale_t old = j->loc ? uselocale(j->loc) : (locale_t)0; /* the decimal point */
    for (;;) {
        int b = atomic_fetch_add(&j->next, 1);
        if (b >= j->nb) break;
        format_block(j, j->first + b, j->buf[b], &j->len[b]);
    }
    if (j->loc) uselocale(old);
    return NULL;
}

/* Header text, then the entries in parallel rounds of blocks. */
static hisp_status write_all(hisp_context ctx, const char *path, const char *head, wjob *j)
{
    hispi_sink *sk;
    HISPI_TRY(hispi_sink_open(ctx, path, &sk));
    hisp_status st = hispi_sink_write(sk, head, strlen(head));
    int64_t blocks = (j->n + BLOCK - 1) / BLOCK;
    int threads = hispi_threads(ctx, (double)j->n * 4);
    int per_round = threads * 2 < blocks ? threads * 2 : (int)(blocks ? blocks : 1);
    char **buf = calloc((size_t)per_round, sizeof *buf);
    size_t *len = calloc((size_t)per_round, sizeof *len);
    bool mem = buf && len;
    for (int b = 0; mem && b < per_round; b++)
        mem = (buf[b] = malloc((size_t)BLOCK * LINE_MAX_BYTES)) != NULL;
    if (!mem && !st) st = hispi_fail(ctx, HISP_ERR_OUT_OF_HOST_MEMORY, "writing %s", path);
    j->buf = buf;
    j->len = len;
    j->loc = hispi_c_locale();
    for (int64_t first = 0; !st && first < blocks; first += per_round) {
        j->first = first;
        j->nb = (int)(blocks - first < per_round ? blocks - first : per_round);
        atomic_store(&j->next, 0);
        hispi_parallel(j->nb > 1 ? threads : 1, write_worker, j);
        for (int b = 0; !st && b < j->nb; b++)
            st = hispi_sink_write(sk, buf[b], len[b]);
    }
    for (int b = 0; buf && b < per_round; b++)
        free(buf[b]);
    free(buf);
    free(len);
    hisp_status cs = hispi_sink_close(sk, !st);
    if (st == HISP_ERR_IO) return hispi_fail(ctx, HISP_ERR_IO, "cannot write %s", path);
    return st ? st : cs;
}

static hisp_status writable_type(hisp_context ctx, hisp_type t)
{
    if (hispi_type_valid(t) && t != HISP_B3X3_F32 && t != HISP_B3X3_F64) return HISP_SUCCESS;
    return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                      "Matrix Market vector files hold f32, f64, c32, c64, q32 or q64 entries, "
                      "not %s",
                      hisp_type_name(t));
}

static const char *field_of(hisp_type t)
{
    return t == HISP_C32 || t == HISP_C64   ? "complex"
           : t == HISP_Q32 || t == HISP_Q64 ? "quaternion"
                                            : "real";
}

static hisp_status write_sparse(hisp_context ctx, const hispi_sparse *s, const char *path,
                                const char *note)
{
    char head[256];
    snprintf(head, sizeof head,
             "%%%%MatrixMarket matrix coordinate %s general\n%% written by hisp %s%s\n%lld %lld "
             "%lld\n",
             field_of(s->type), hisp_version_string(), note, (long long)s->nrows,
             (long long)s->ncols, (long long)s->nnz);
    wjob j = {.s = s, .t = s->type, .n = s->nnz};
    return write_all(ctx, path, head, &j);
}

/* A 3x3 block matrix as a real file of 3m x 3n with all 9 scalars of every
 * block (zeros inside a block included, so the blocks read back alike), in
 * the order of the block rows. */
static hisp_status write_blocks(hisp_context ctx, const hispi_sparse *s, const char *path)
{
    hispi_sparse c, r;
    HISPI_TRY(hispi_sparse_convert(ctx, s, HISP_FORMAT_CSR, &c));
    bool f32 = s->type == HISP_B3X3_F32;
    hisp_status st = hispi_sparse_alloc(ctx, &r, HISP_FORMAT_COO, f32 ? HISP_F32 : HISP_F64,
                                        c.nrows * 3, c.ncols * 3, c.nnz * 9);
    if (st) {
        hispi_sparse_free(&c);
        return st;
    }
    int64_t e = 0;
    for (int64_t i = 0; i < c.nrows; i++)
        for (int q = 0; q < 3; q++)
            for (int64_t k = c.rowptr[i]; k < c.rowptr[i + 1]; k++)
                for (int w = 0; w < 3; w++, e++) {
                    r.rowind[e] = (int32_t)(i * 3 + q);
                    r.colind[e] = c.colind[k] * 3 + w;
                    if (f32)
                        ((float *)r.val)[e] = ((float *)c.val)[k * 9 + q * 3 + w];
                    else
                        ((double *)r.val)[e] = ((double *)c.val)[k * 9 + q * 3 + w];
                }
    char note[48];
    snprintf(note, sizeof note, " (%s)", hisp_type_name(s->type));
    st = write_sparse(ctx, &r, path, note);
    hispi_sparse_free(&r);
    hispi_sparse_free(&c);
    return st;
}

hisp_status hispi_mtx_write(hisp_context ctx, const hispi_sparse *s, const char *path)
{
    if (s->type == HISP_B3X3_F32 || s->type == HISP_B3X3_F64) return write_blocks(ctx, s, path);
    HISPI_TRY(writable_type(ctx, s->type));
    return write_sparse(ctx, s, path, "");
}

hisp_status hispi_mtx_write_vector(hisp_context ctx, hisp_type t, int64_t rows, int64_t cols,
                                   bool row_order, const void *vals, const char *path)
{
    HISPI_TRY(writable_type(ctx, t));
    char head[256];
    snprintf(head, sizeof head,
             "%%%%MatrixMarket matrix array %s general\n%% written by hisp %s\n%lld %lld\n",
             field_of(t), hisp_version_string(), (long long)rows, (long long)cols);
    wjob j = {.t = t,
              .vals = vals,
              .rows = rows,
              .cols = cols,
              .row_order = row_order && cols > 1,
              .n = rows * cols};
    return write_all(ctx, path, head, &j);
}

hisp_status hisp_matrix_write_mtx(hisp_matrix A, const char *path)
{
    if (!hispi_mat_ok(A)) return HISP_ERR_INVALID_HANDLE;
    if (!path) return hispi_fail(A->ctx, HISP_ERR_INVALID_ARGUMENT, "path is NULL");
    HISPI_TRY(hispi_matrix_need_host(A));
    if (hispi_sparse_family(A->host.format)) return hispi_mtx_write(A->ctx, &A->host, path);
    hispi_sparse tmp; /* a format with its own form: the matrix as shown */
    HISPI_TRY(hispi_matrix_sparse_copy(A, HISP_FORMAT_COO, &tmp));
    hisp_status s = hispi_mtx_write(A->ctx, &tmp, path);
    hispi_sparse_free(&tmp);
    return s;
}
