/* Restarted GMRES(m): not written yet. */
#include "ksp.h"

hisp_status hispi_ks_gmres(ks_run *r)
{
    return hispi_fail(r->sp->ctx, HISP_ERR_UNSUPPORTED, "gmres: not available yet");
}
