#include "fixture_plan.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

test_plan_fx test_plan_fx_make(int target)
{
    test_plan_fx f;
    const test_target *tg;
    test_targets(&tg);
    f.t = &tg[target];
    for (int d = 0; d < 8; d++)
        f.refs[d] = (hisp_device_ref){f.t->kind, f.t->device};
    f.ctx = test_default_context();
    CK_OK(f.ctx, hisp_backend_device_info(f.ctx, f.t->kind, f.t->device, &f.info));
    return f;
}

test_real_arg test_real_of(hisp_type t, double v)
{
    test_real_arg a;
    if (t == HISP_F32)
        a.v.f = (float)v;
    else
        a.v.d = v;
    return a;
}

const char *test_mpi_bin(void)
{
    static char path[4200];
    static int found = -1; /* probed once */
    if (found < 0) {
        const char *bin = test_hisp_bin();
        snprintf(path, sizeof path, "%s-mpi", bin ? bin : "");
        found = bin && access(path, X_OK) == 0 && system("command -v mpirun >/dev/null 2>&1") == 0;
    }
    return found ? path : NULL;
}

int test_mpirun(char *out, size_t cap, int np, const char *fmt, ...)
{
    char pre[512];
    snprintf(pre, sizeof pre,
             "ASAN_OPTIONS=\"${ASAN_OPTIONS:-}:detect_leaks=0\" "
             "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
             "OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1 "
             "timeout 300 mpirun --oversubscribe -np %d ",
             np);
    va_list ap;
    va_start(ap, fmt);
    int rc = test_vshell(out, cap, pre, " 2>&1", fmt, ap);
    va_end(ap);
    return rc;
}
