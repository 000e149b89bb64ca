/* The work plan of the balanced-block CSR SpMV kernels (CUDA and the OpenCL
 * "block" family): hardware-neutral, so it lives here and both backends
 * upload the same plan. */
#include "hispi.h"

#include <stdlib.h>

void hispi_csr_plan_free(hispi_csr_plan *p)
{
    free(p->blocks);
    free(p->splits);
    p->blocks = NULL;
    p->splits = NULL;
}

/* Two passes over the row pointers: count, then fill. */
hisp_status hispi_csr_plan_build(hisp_context ctx, const int64_t *rowptr, int64_t nrows,
                                 int64_t cap, int64_t rowcap, int64_t split, hispi_csr_plan *p)
{
    hispi_csr_block *blocks = NULL;
    hispi_csr_split *splits = NULL;
    int64_t b = 0, s = 0, slots = 0;
    for (int pass = 0; pass < 2; pass++) {
        b = s = slots = 0;
        int64_t i = 0;
        while (i < nrows) {
            int64_t rs = rowptr[i], len = rowptr[i + 1] - rs;
            if (len > cap / 4) { /* a block (or several chunks) of its own */
                int64_t chunks = (len + split - 1) / split;
                for (int64_t c = 0; c < chunks; c++, b++) {
                    if (!pass) continue;
                    int64_t k0 = rs + c * split;
                    int64_t k1 = k0 + split < rs + len ? k0 + split : rs + len;
                    blocks[b] = (hispi_csr_block){
                        k0, k1, (int32_t)i, (int32_t)i + 1, chunks > 1 ? (int32_t)(slots + c) : -1,
                        0};
                }
                if (chunks > 1) {
                    if (pass)
                        splits[s] =
                            (hispi_csr_split){(int32_t)i, (int32_t)slots, (int32_t)chunks, 0};
                    s++;
                    slots += chunks;
                }
                i++;
                continue;
            }
            int64_t j = i, nnz = 0; /* consecutive short rows up to cap entries */
            while (j < nrows && j - i < rowcap) {
                int64_t l = rowptr[j + 1] - rowptr[j];
                if (l > cap / 4 || nnz + l > cap) break;
                nnz += l;
                j++;
            }
            if (pass)
                blocks[b] = (hispi_csr_block){rowptr[i],  rowptr[j],        (int32_t)i,
                                              (int32_t)j, HISPI_CSR_STREAM, 0};
            b++;
            i = j;
        }
        if (!pass) {
            if (b > INT32_MAX || slots > INT32_MAX)
                return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                                  "SpMV: the matrix needs %lld thread blocks, too many",
                                  (long long)b);
            HISPI_TRY(hispi_alloc(ctx, (size_t)b, sizeof *blocks, (void **)&blocks));
            hisp_status st = hispi_alloc(ctx, (size_t)s, sizeof *splits, (void **)&splits);
            if (st) {
                free(blocks);
                return st;
            }
        }
    }
    p->blocks = blocks;
    p->nblocks = b;
    p->splits = splits;
    p->nsplits = s;
    p->nslots = slots;
    return HISP_SUCCESS;
}
