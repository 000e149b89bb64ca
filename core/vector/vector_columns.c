/* The columns of a column-major vector one at a time (hispi.h
 * hispi_columns): copies between column j and a vector of its own, on the
 * device by the vector algebra over views of the buffer, or on the host's
 * array where the vector algebra runs on the host. For the operations that
 * run column by column: SpMM without a kernel, the solves of several
 * right-hand sides. */
#include "hispi.h"

#include <stdlib.h>

void hispi_columns_close(hispi_columns *c)
{
    for (int64_t j = 0; c->views && j < c->k; j++)
        hisp_vector_destroy(&c->views[j]);
    free(c->views);
    c->views = NULL;
}

hisp_status hispi_columns_open(hisp_vector v, bool read, const char *what, hispi_columns *c)
{
    hisp_context ctx = v->ctx;
    *c = (hispi_columns){v, v->cols ? v->cols : 1, 0, NULL, NULL};
    c->n = v->n / c->k;
    if (c->k > 1 && v->order == HISP_ORDER_ROW)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                          "%s takes column-major vectors here (a row-major one of %lld columns "
                          "given)",
                          what, (long long)c->k);
    if (!hispi_vec_on_device(ctx)) return read ? hispi_vector_host(v, &c->host) : HISP_SUCCESS;
    void *buf = NULL;
    HISPI_TRY(hispi_vector_device(v, true, &buf));
    HISPI_TRY(hispi_calloc(ctx, (size_t)c->k, sizeof *c->views, (void **)&c->views));
    hisp_status s = HISP_SUCCESS;
    for (int64_t j = 0; !s && j < c->k; j++)
        s = hispi_vector_view(ctx, v->type, c->n, buf, v->off + j * c->n, &c->views[j]);
    if (s) hispi_columns_close(c);
    return s;
}

hisp_status hispi_columns_get(hispi_columns *c, int64_t j, hisp_vector dst)
{
    if (c->views) return hisp_vector_copy(c->views[j], dst);
    size_t es = hisp_type_size(c->v->type);
    if (!c->host) HISPI_TRY(hispi_vector_host(c->v, &c->host));
    return hisp_vector_write(dst, (const char *)c->host + (size_t)(j * c->n) * es);
}

hisp_status hispi_columns_put(hispi_columns *c, int64_t j, hisp_vector src)
{
    if (c->views) {
        HISPI_TRY(hisp_vector_copy(src, c->views[j]));
        hispi_vector_device_written(c->v);
        return HISP_SUCCESS;
    }
    size_t es = hisp_type_size(c->v->type);
    if (!c->host) HISPI_TRY(hispi_vector_host(c->v, &c->host));
    HISPI_TRY(hisp_vector_read(src, (char *)c->host + (size_t)(j * c->n) * es));
    return hispi_vector_host_written(c->v);
}
