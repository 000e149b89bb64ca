/* Matrix Market reader and writer (stub: being written). */
#include "hispi.h"

hisp_status hispi_mtx_parse(hisp_context ctx, const char *data, size_t size, const char *name,
                            hisp_type type, hispi_sparse *out, hisp_mtx_header *header)
{
    (void)data; (void)size; (void)name; (void)type; (void)out; (void)header;
    return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "not yet");
}
hisp_status hispi_read_file(hisp_context ctx, const char *path, char **data, size_t *size)
{
    (void)path; (void)data; (void)size;
    return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "not yet");
}
hisp_status hispi_mtx_write(hisp_context ctx, const hispi_sparse *s, const char *path)
{
    (void)s; (void)path;
    return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "not yet");
}
hisp_status hispi_mtx_write_vector(hisp_context ctx, hisp_type t, int64_t n, const void *vals,
                                   const char *path)
{
    (void)t; (void)n; (void)vals; (void)path;
    return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "not yet");
}
hisp_status hisp_matrix_write_mtx(hisp_matrix A, const char *path)
{
    (void)A; (void)path;
    return HISP_ERR_UNSUPPORTED;
}
