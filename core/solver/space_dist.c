/* The solvers' space over an MSREP plan's devices: not written yet. */
#include "ksp.h"

hisp_status hispi_ks_dist(hisp_context ctx, hisp_mplan plan, hisp_precond pc, int nslot,
                          ks_space **sp)
{
    (void)plan, (void)pc, (void)nslot;
    *sp = NULL;
    return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "solve over an MSREP plan: not available yet");
}

ks_vec *hispi_ks_wrap_dist(hisp_mvector v)
{
    return (ks_vec *)v;
}
