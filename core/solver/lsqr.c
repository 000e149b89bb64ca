/* LSQR: not written yet. */
#include "ksp.h"

hisp_status hispi_ks_lsqr(ks_run *r)
{
    return hispi_fail(r->sp->ctx, HISP_ERR_UNSUPPORTED, "lsqr: not available yet");
}
