/* Prefix sums on the device (kernels/scan.cl): the row pointers of a CSR
 * array from its per-row counts, for the device paths that build sparse
 * structures (SpGEMM's product, AMG's setup). */
#ifndef HISPI_SCAN_DEV_H
#define HISPI_SCAN_DEV_H

#include "backend/backend.h"

#include <stdbool.h>

typedef struct {
    void *k[3];
} hispi_scan;

/* kernels/scan.cl's build options for counts of 32 bits (u32) or 64 (i64). */
HISPI_LOCAL void hispi_scan_kopts(char *opts, size_t size, bool cnt32);
/* The scan's kernels for counts of 32 bits (u32) or 64 (i64). */
HISPI_LOCAL hisp_status hispi_scan_get(hisp_context ctx, bool cnt32, hispi_scan *s);
HISPI_LOCAL void hispi_scan_free(hisp_context ctx, hispi_scan *s);
/* ptr[0] = 0, ptr[i + 1] = cnt[0] + ... + cnt[i] for i < m (ptr: m + 1
 * int64 in a device buffer), queued; *total (NULL: not read) ptr[m], read
 * back. */
HISPI_LOCAL hisp_status hispi_scan_run(hisp_context ctx, const hispi_scan *s, int64_t m, void *cnt,
                                       void *ptr, int64_t *total);

#endif
