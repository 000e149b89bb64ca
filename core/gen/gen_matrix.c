/* hisp_matrix_generate: a generated matrix in a new handle (the generators
 * are gen.c's). */
#include "hispi.h"

hisp_status hisp_matrix_generate(hisp_context ctx, const hisp_gen_params *p, hisp_type type,
                                 hisp_matrix *A)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!p || !A) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "NULL params or handle");
    *A = NULL;
    hispi_sparse s;
    HISPI_TRY(hispi_generate(ctx, p, type, &s));
    return hispi_matrix_wrap(ctx, &s, A);
}
