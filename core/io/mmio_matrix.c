/* The Matrix Market front ends of matrix handles: a file or a buffer parsed
 * into a new handle (the parser is mmio.c). */
#include "hispi.h"

hisp_status hisp_matrix_read_mtx_buffer(hisp_context ctx, const char *data, size_t size,
                                        const char *name, hisp_type type, hisp_matrix *A,
                                        hisp_mtx_header *header)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!A || (!data && size))
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "NULL data or output handle");
    *A = NULL;
    hispi_sparse s;
    HISPI_TRY(hispi_mtx_parse(ctx, data, size, name ? name : "<buffer>", type, &s, header, NULL));
    return hispi_matrix_wrap(ctx, &s, A);
}

hisp_status hisp_matrix_read_mtx(hisp_context ctx, const char *path, hisp_type type, hisp_matrix *A,
                                 hisp_mtx_header *header)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!path || !A) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "NULL path or handle");
    *A = NULL;
    hispi_sparse s;
    HISPI_TRY(hispi_mtx_read_file(ctx, path, type, &s, header, NULL));
    return hispi_matrix_wrap(ctx, &s, A);
}
