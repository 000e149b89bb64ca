/* Generators (stub: being written). */
#include "hispi.h"

hisp_status hispi_generate(hisp_context ctx, const hisp_gen_params *p, hisp_type t,
                           hispi_sparse *out)
{
    (void)p; (void)t; (void)out;
    return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "not yet");
}
void hisp_gen_defaults(hisp_gen_kind kind, hisp_gen_params *p) { (void)kind; (void)p; }
const char *hisp_gen_name(hisp_gen_kind kind) { (void)kind; return "?"; }
hisp_status hisp_gen_from_name(const char *name, hisp_gen_kind *kind)
{
    (void)name; (void)kind;
    return HISP_ERR_UNSUPPORTED;
}
