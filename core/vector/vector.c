/* Dense vectors: a host copy plus a lazily made device copy; a wrapped
 * vector's device copy is the caller's memory and its host copy is
 * allocated when the host first needs it. */
#include "backend/backend.h"
#include "hispi.h"

#include <stdlib.h>
#include <string.h>

bool hispi_vec_ok(hisp_vector v)
{
    return hispi_handle_live(v, HISPI_H_VECTOR);
}

/* Bring the host copy up to date (device → host). */
/* The host array, allocated on first need (wrapped vectors). */
static hisp_status host_array(hisp_vector v)
{
    if (v->host) return HISP_SUCCESS;
    return hispi_alloc(v->ctx, (size_t)v->n, hisp_type_size(v->type), &v->host);
}

static hisp_status sync_host(hisp_vector v)
{
    if (v->host_valid) return HISP_SUCCESS;
    hisp_context ctx = v->ctx;
    if (!v->dev) return hispi_fail(ctx, HISP_ERR_OUT_OF_HOST_MEMORY, "the vector's data was lost");
    HISPI_TRY(host_array(v));
    HISPI_TRY(hispi_settle(ctx)); /* a failed HiSparse SpMV shows here */
    size_t es = hisp_type_size(v->type);
    HISPI_TRY(HISPI_BE(ctx, buf_read, v->dev, (size_t)v->off * es, v->host, (size_t)v->n * es));
    v->host_valid = true;
    return HISP_SUCCESS;
}

static void drop_device(hisp_vector v)
{
    if (!v->dev) return;
    /* keep the data: pull it to the host before the buffer goes (a wrapped
     * vector becomes an ordinary one: the caller's memory is let go) */
    if (!v->host_valid && sync_host(v) != HISP_SUCCESS)
        v->host_valid = v->host != NULL; /* lost: best effort */
    if (!v->wrapped || v->retained) HISPI_BE_VOID(v->ctx, buf_free, v->dev);
    v->dev = NULL;
    v->dev_valid = false;
    v->wrapped = false;
    v->retained = false;
    v->off = 0;
}

static hisp_status add_handle(hisp_context ctx, hisp_vector v)
{
    hisp_status s = hispi_handle_add(v, HISPI_H_VECTOR, ctx);
    return s ? hispi_fail(ctx, s, "no room for a vector handle") : s;
}

static void drop_cb(hispi_devobj *o)
{
    drop_device((hisp_vector)((char *)o - offsetof(struct hisp_vector_s, link)));
}

hisp_status hisp_vector_create(hisp_context ctx, hisp_type type, int64_t n, hisp_vector *out)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!out) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "output handle is NULL");
    *out = NULL;
    if (!hispi_type_valid(type) || n < 0)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "invalid vector type or size %lld",
                          (long long)n);
    hisp_vector v = NULL;
    HISPI_TRY(hispi_calloc(ctx, 1, sizeof *v, (void **)&v));
    hisp_status s = hispi_calloc(ctx, (size_t)n, hisp_type_size(type), &v->host);
    if (!s) s = add_handle(ctx, v);
    if (s) {
        free(v->host);
        free(v);
        return s;
    }
    v->magic = HISPI_MAGIC_VECTOR;
    v->ctx = ctx;
    v->type = type;
    v->n = n;
    v->host_valid = true;
    hispi_devobj_attach(ctx, &v->link, drop_cb);
    *out = v;
    return HISP_SUCCESS;
}

void hisp_vector_destroy(hisp_vector *pv)
{
    if (!pv || !hispi_handle_known(*pv, HISPI_H_VECTOR)) return;
    hisp_vector v = *pv;
    if (v->link.next) {
        if (v->dev && (!v->wrapped || v->retained)) HISPI_BE_VOID(v->ctx, buf_free, v->dev);
        hispi_devobj_detach(&v->link);
    }
    free(v->host);
    v->magic = 0;
    hispi_handle_free(v);
    *pv = NULL;
}

hisp_status hisp_vector_size(hisp_vector v, int64_t *n)
{
    if (!hispi_vec_ok(v)) return HISP_ERR_INVALID_HANDLE;
    if (!n) return hispi_fail(v->ctx, HISP_ERR_INVALID_ARGUMENT, "n is NULL");
    *n = v->n;
    return HISP_SUCCESS;
}

static hisp_status vector_write(hisp_vector v, const void *host)
{
    if (!host && v->n) return hispi_fail(v->ctx, HISP_ERR_INVALID_ARGUMENT, "host is NULL");
    size_t bytes = (size_t)v->n * hisp_type_size(v->type);
    if (v->wrapped) { /* through to the caller's memory; a host copy stays stale */
        hisp_context ctx = v->ctx;
        HISPI_TRY(HISPI_BE(ctx, buf_write, v->dev, (size_t)v->off * hisp_type_size(v->type), host,
                           bytes));
        v->host_valid = false;
        v->dev_valid = true;
        return HISP_SUCCESS;
    }
    if (v->n) memcpy(v->host, host, bytes);
    v->host_valid = true;
    v->dev_valid = false;
    return HISP_SUCCESS;
}

static hisp_status vector_read(hisp_vector v, void *host)
{
    if (!host && v->n) return hispi_fail(v->ctx, HISP_ERR_INVALID_ARGUMENT, "host is NULL");
    HISPI_TRY(sync_host(v));
    if (v->n) memcpy(host, v->host, (size_t)v->n * hisp_type_size(v->type));
    return HISP_SUCCESS;
}

/* the calls that may use the queue claim the vector's context (hispi.h) */
hisp_status hisp_vector_write(hisp_vector v, const void *host)
{
    if (!hispi_vec_ok(v)) return HISP_ERR_INVALID_HANDLE;
    HISPI_CLAIMED(v->ctx, vector_write(v, host));
}

hisp_status hisp_vector_read(hisp_vector v, void *host)
{
    if (!hispi_vec_ok(v)) return HISP_ERR_INVALID_HANDLE;
    HISPI_CLAIMED(v->ctx, vector_read(v, host));
}

/* count entries from offset: within the vector, and host given when count > 0 */
static hisp_status check_range(hisp_vector v, int64_t offset, int64_t count, const void *host)
{
    if (!hispi_vec_ok(v)) return HISP_ERR_INVALID_HANDLE;
    if (offset < 0 || count < 0 || offset > v->n || count > v->n - offset)
        return hispi_fail(v->ctx, HISP_ERR_INVALID_ARGUMENT,
                          "range of %lld entries from %lld is outside the vector's %lld",
                          (long long)count, (long long)offset, (long long)v->n);
    if (!host && count) return hispi_fail(v->ctx, HISP_ERR_INVALID_ARGUMENT, "host is NULL");
    return HISP_SUCCESS;
}

static hisp_status read_range(hisp_vector v, int64_t offset, int64_t count, void *host)
{
    HISPI_TRY(check_range(v, offset, count, host));
    if (!count) return HISP_SUCCESS;
    size_t es = hisp_type_size(v->type);
    if (v->host_valid) {
        memcpy(host, (const char *)v->host + (size_t)offset * es, (size_t)count * es);
        return HISP_SUCCESS;
    }
    /* only the range comes over; the host copy stays stale */
    hisp_context ctx = v->ctx;
    if (!v->dev) return hispi_fail(ctx, HISP_ERR_OUT_OF_HOST_MEMORY, "the vector's data was lost");
    HISPI_TRY(hispi_settle(ctx)); /* a failed HiSparse SpMV shows here */
    return HISPI_BE(ctx, buf_read, v->dev, (size_t)(v->off + offset) * es, host,
                    (size_t)count * es);
}

static hisp_status write_range(hisp_vector v, int64_t offset, int64_t count, const void *host)
{
    HISPI_TRY(check_range(v, offset, count, host));
    if (!count) return HISP_SUCCESS;
    size_t es = hisp_type_size(v->type);
    if (v->dev && v->dev_valid) { /* the range goes over; a valid host copy follows */
        hisp_context ctx = v->ctx;
        HISPI_TRY(HISPI_BE(ctx, buf_write, v->dev, (size_t)(v->off + offset) * es, host,
                           (size_t)count * es));
    }
    if (v->host_valid) memcpy((char *)v->host + (size_t)offset * es, host, (size_t)count * es);
    return HISP_SUCCESS;
}

hisp_status hisp_vector_read_range(hisp_vector v, int64_t offset, int64_t count, void *host)
{
    if (!hispi_vec_ok(v)) return HISP_ERR_INVALID_HANDLE;
    HISPI_CLAIMED(v->ctx, read_range(v, offset, count, host));
}

hisp_status hisp_vector_write_range(hisp_vector v, int64_t offset, int64_t count, const void *host)
{
    if (!hispi_vec_ok(v)) return HISP_ERR_INVALID_HANDLE;
    HISPI_CLAIMED(v->ctx, write_range(v, offset, count, host));
}

hisp_status hispi_vector_host(hisp_vector v, void **host)
{
    HISPI_TRY(sync_host(v));
    *host = v->host;
    return HISP_SUCCESS;
}

hisp_status hispi_vector_host_out(hisp_vector v, void **host)
{
    HISPI_TRY(host_array(v));
    *host = v->host;
    return HISP_SUCCESS;
}

hisp_status hispi_vector_host_written(hisp_vector v)
{
    v->host_valid = true;
    v->dev_valid = false;
    if (!v->wrapped) return HISP_SUCCESS;
    hisp_context ctx = v->ctx; /* through to the caller's memory */
    size_t es = hisp_type_size(v->type);
    HISPI_TRY(HISPI_BE(ctx, buf_write, v->dev, (size_t)v->off * es, v->host, (size_t)v->n * es));
    v->dev_valid = true;
    return HISP_SUCCESS;
}

hisp_status hisp_vector_write_mtx(hisp_vector v, const char *path)
{
    if (!hispi_vec_ok(v)) return HISP_ERR_INVALID_HANDLE;
    if (!path) return hispi_fail(v->ctx, HISP_ERR_INVALID_ARGUMENT, "path is NULL");
    HISPI_TRY(sync_host(v));
    int64_t k = v->cols ? v->cols : 1; /* an n x k array, column-major whatever v's order */
    return hispi_mtx_write_vector(v->ctx, v->type, v->n / k, k, v->order == HISP_ORDER_ROW, v->host,
                                  path);
}

hisp_status hispi_vector_device(hisp_vector v, bool need_data, void **buf)
{
    hisp_context ctx = v->ctx;
    size_t bytes = (size_t)v->n * hisp_type_size(v->type);
    if (!v->dev) {
        HISPI_TRY(HISPI_BE(ctx, buf_alloc, bytes, &v->dev));
        v->dev_valid = false;
    }
    if (need_data && !v->dev_valid) {
        HISPI_TRY(HISPI_BE(ctx, buf_write, v->dev, 0, v->host, bytes));
        v->dev_valid = true;
    }
    *buf = v->dev;
    return HISP_SUCCESS;
}

void hispi_vector_device_written(hisp_vector v)
{
    v->dev_valid = true;
    v->host_valid = false;
}

hisp_status hisp_vector_wrap_device(hisp_context ctx, hisp_type type, int64_t n, void *mem,
                                    hisp_vector *out)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!out) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "output handle is NULL");
    *out = NULL;
    if (!hispi_type_valid(type) || n < 0 || !mem)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "invalid vector type, size %lld or NULL memory", (long long)n);
    if (!HISPI_BE_HAS(ctx, buf_check))
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "the %s backend cannot wrap memory",
                          ctx->ops->name);
    HISPI_TRY(HISPI_BE(ctx, buf_check, mem, (size_t)n * hisp_type_size(type), "vector memory"));
    /* the kernels load whole entries (up to 16 bytes at once); a cl_mem is a
     * handle, aligned by the runtime */
    size_t align = hisp_type_size(type) < 16 ? hisp_type_size(type) : 16;
    if (ctx->kind != HISP_BACKEND_OPENCL && (uintptr_t)mem % align)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "vector memory %p is not aligned to %zu bytes (%s entries)", mem, align,
                          hisp_type_name(type));
    /* the caller's memory, offset 0, with a reference of hisp's own where
     * the backend counts them (the caller may release theirs) */
    HISPI_TRY(hispi_vector_view(ctx, type, n, mem, 0, out));
    if (HISPI_BE_HAS(ctx, buf_retain)) {
        hisp_status s = HISPI_BE(ctx, buf_retain, mem);
        if (s) {
            hisp_vector_destroy(out);
            return s;
        }
        (*out)->retained = true;
    }
    return HISP_SUCCESS;
}

hisp_status hisp_vector_device_memory(hisp_vector v, void **mem)
{
    if (!hispi_vec_ok(v)) return HISP_ERR_INVALID_HANDLE;
    if (!mem) return hispi_fail(v->ctx, HISP_ERR_INVALID_ARGUMENT, "mem is NULL");
    *mem = NULL;
    return hispi_vector_device(v, true, mem);
}

hisp_status hisp_vector_device_modified(hisp_vector v)
{
    if (!hispi_vec_ok(v)) return HISP_ERR_INVALID_HANDLE;
    if (!v->dev)
        return hispi_fail(v->ctx, HISP_ERR_INVALID_ARGUMENT,
                          "the vector has no device memory (hisp_vector_device_memory first)");
    hispi_vector_device_written(v);
    return HISP_SUCCESS;
}

hisp_status hisp_vector_read_mtx(hisp_context ctx, const char *path, hisp_type type,
                                 hisp_vector *out)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!out) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "output handle is NULL");
    *out = NULL;
    if (!path) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "NULL path or handle");
    hispi_sparse M;
    hisp_mtx_header h;
    hispi_mtx_where w = {0};
    HISPI_TRY(hispi_mtx_read_file(ctx, path, type, &M, &h, &w));
    int64_t n = M.nrows, k = M.ncols; /* each below 2^31: n * k fits */
    hisp_status s = HISP_SUCCESS;
    if (k < 1) {
        s = hispi_fail_at(ctx, path, w.size_line,
                          "a vector file needs at least one column, this one is %lld x 0",
                          (long long)n);
    } else if (!h.is_array && n * k > HISPI_FILE_DIM_LIMIT(w.bytes)) {
        /* arrays hold their n*k entries; a coordinate file's few make as many */
        s = hispi_fail_at(ctx, path, w.size_line,
                          "%lld x %lld: a vector of %lld entries is too large for a %llu-byte "
                          "coordinate file (at most 2^20 + 8 x the file size = %lld)",
                          (long long)n, (long long)k, (long long)(n * k),
                          (unsigned long long)w.bytes, (long long)HISPI_FILE_DIM_LIMIT(w.bytes));
    } else {
        s = k == 1 ? hisp_vector_create(ctx, type, n, out)
                   : hisp_vector_create_columns(ctx, type, n, k, HISP_ORDER_COL, out);
    }
    if (!s) { /* scatter the entries, (i, j) to j*n + i (array files are dense; coordinate
                 files may be sparse, and of repeated entries the last one counts) */
        size_t es = hisp_type_size(type);
        for (int64_t e = 0; e < M.nnz; e++)
            memcpy((char *)(*out)->host + (size_t)(M.colind[e] * n + M.rowind[e]) * es,
                   (const char *)M.val + (size_t)e * es, es);
    }
    hispi_sparse_free(&M);
    return s;
}

hisp_status hispi_vector_view(hisp_context ctx, hisp_type type, int64_t n, void *buf, int64_t off,
                              hisp_vector *out)
{
    *out = NULL;
    hisp_vector v = NULL;
    HISPI_TRY(hispi_calloc(ctx, 1, sizeof *v, (void **)&v));
    if (add_handle(ctx, v)) {
        free(v);
        return HISP_ERR_OUT_OF_HOST_MEMORY;
    }
    v->magic = HISPI_MAGIC_VECTOR;
    v->ctx = ctx;
    v->type = type;
    v->n = n;
    v->dev = buf;
    v->dev_valid = true;
    v->wrapped = true;
    v->off = off;
    hispi_devobj_attach(ctx, &v->link, drop_cb);
    *out = v;
    return HISP_SUCCESS;
}

hisp_status hispi_vector_part(hisp_vector whole, int64_t off, int64_t n, hisp_vector *v)
{
    hisp_context ctx = whole->ctx;
    *v = NULL;
    if (!HISPI_BE_HAS(ctx, buf_sub))
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "the %s backend cannot split a buffer",
                          ctx->ops->name);
    size_t es = hisp_type_size(whole->type);
    void *buf = NULL, *sub = NULL;
    bool owned = false;
    HISPI_TRY(hispi_vector_device(whole, false, &buf));
    HISPI_TRY(
        HISPI_BE(ctx, buf_sub, buf, (size_t)(whole->off + off) * es, (size_t)n * es, &sub, &owned));
    hisp_status st = hispi_vector_view(ctx, whole->type, n, sub, 0, v);
    if (st) {
        if (owned) HISPI_BE_VOID(ctx, buf_free, sub);
        return st;
    }
    (*v)->retained = owned; /* given back by buf_free with the vector */
    (*v)->base = buf;
    (*v)->base_off = whole->off + off;
    return HISP_SUCCESS;
}

/* ---- columns (hisp.h "many vectors at once") ------------------------------ */

hisp_status hisp_vector_set_columns(hisp_vector v, int64_t k, hisp_order order)
{
    if (!hispi_vec_ok(v)) return HISP_ERR_INVALID_HANDLE;
    if (order != HISP_ORDER_COL && order != HISP_ORDER_ROW)
        return hispi_fail(v->ctx, HISP_ERR_INVALID_ARGUMENT, "unknown order %d", (int)order);
    if (k < 1 || v->n % k)
        return hispi_fail(v->ctx, HISP_ERR_INVALID_ARGUMENT,
                          "%lld columns: the vector's %lld entries must be a positive multiple "
                          "of them",
                          (long long)k, (long long)v->n);
    v->cols = k;
    v->order = order;
    return HISP_SUCCESS;
}

hisp_status hisp_vector_create_columns(hisp_context ctx, hisp_type type, int64_t n, int64_t k,
                                       hisp_order order, hisp_vector *out)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!out) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "output handle is NULL");
    *out = NULL;
    if (k < 1 || n < 0 || (n > 0 && k > INT64_MAX / n))
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "%lld columns of %lld entries",
                          (long long)k, (long long)n);
    if (order != HISP_ORDER_COL && order != HISP_ORDER_ROW)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "unknown order %d", (int)order);
    hisp_vector v = NULL;
    HISPI_TRY(hisp_vector_create(ctx, type, n * k, &v));
    v->cols = k;
    v->order = order;
    *out = v;
    return HISP_SUCCESS;
}

hisp_status hisp_vector_columns(hisp_vector v, int64_t *k, hisp_order *order)
{
    if (!hispi_vec_ok(v)) return HISP_ERR_INVALID_HANDLE;
    if (!k || !order) return hispi_fail(v->ctx, HISP_ERR_INVALID_ARGUMENT, "k or order is NULL");
    *k = v->cols ? v->cols : 1;
    *order = v->cols ? v->order : HISP_ORDER_COL;
    return HISP_SUCCESS;
}
