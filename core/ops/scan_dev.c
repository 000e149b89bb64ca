/* Prefix sums on the device (scan_dev.h, kernels/scan.cl). */
#include "scan_dev.h"
#include "hispi.h"

#include <stdio.h>
#include <string.h>

enum { GS = 256, SPER = 16 }; /* the work-group; counts per work-item (scan.cl) */

static const char *const names[3] = {"scan_part", "scan_top", "scan_out"};

void hispi_scan_kopts(char *opts, size_t size, bool cnt32)
{
    snprintf(opts, size, "-DVALUE_T=float -DIS_DOUBLE=0 -DATOM64=0 -DGS=%d -DCNT_T=%s", GS,
             cnt32 ? "u32" : "i64");
}

hisp_status hispi_scan_get(hisp_context ctx, bool cnt32, hispi_scan *s)
{
    memset(s, 0, sizeof *s);
    char opts[128];
    hispi_scan_kopts(opts, sizeof opts, cnt32);
    for (int i = 0; i < 3; i++) {
        hisp_status st = HISPI_BE(ctx, kern_get, HISPI_PROG_SCAN, opts, names[i], &s->k[i]);
        if (st) {
            hispi_scan_free(ctx, s);
            return st;
        }
    }
    return HISP_SUCCESS;
}

void hispi_scan_free(hisp_context ctx, hispi_scan *s)
{
    for (int i = 0; i < 3; i++)
        if (s->k[i]) HISPI_BE_VOID(ctx, kern_free, s->k[i]);
    memset(s, 0, sizeof *s);
}

hisp_status hispi_scan_run(hisp_context ctx, const hispi_scan *s, int64_t m, void *cnt, void *ptr,
                           int64_t *total)
{
    int64_t np = (m + (int64_t)GS * SPER - 1) / ((int64_t)GS * SPER);
    void *part = NULL;
    HISPI_TRY(hispi_tmp_alloc(ctx, (size_t)(np + 1) * 8, &part)); /* no cudaFree's wait */
    hispi_karg mm = {HISPI_KARG_I64, NULL, m, 0}, npa = {HISPI_KARG_I64, NULL, np, 0};
    hispi_karg c = {HISPI_KARG_BUF, cnt, 0, 0}, pa = {HISPI_KARG_BUF, part, 0, 0};
    hispi_karg po = {HISPI_KARG_BUF, ptr, 0, 0};
    hispi_karg a1[] = {mm, c, pa}, a2[] = {npa, pa}, a3[] = {mm, c, pa, po};
    hisp_status st = HISP_SUCCESS;
    if (np > 0) st = HISPI_BE(ctx, kern_launch, s->k[0], a1, 3, (size_t)np, GS);
    if (!st && np > 0) st = HISPI_BE(ctx, kern_launch, s->k[1], a2, 2, 1, GS);
    if (!st && np > 0) st = HISPI_BE(ctx, kern_launch, s->k[2], a3, 4, (size_t)np, GS);
    if (!st && np == 0) st = HISPI_BE(ctx, buf_zero, ptr, 0, 8);
    if (!st && total) st = HISPI_BE(ctx, buf_read, ptr, (size_t)m * 8, total, 8);
    hispi_tmp_free(ctx, part);
    return st;
}
