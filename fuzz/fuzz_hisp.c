/* libFuzzer target for the .hisp loader: any byte string must load as a
 * valid matrix or be refused with HISP_ERR_INPUT_FORMAT; never a crash, a
 * hang or a leak. The checksums (and the pool size, when it can be) are
 * fixed up first, so mutations reach the structural validation instead of
 * dying at the checksum (layout: docs/FORMAT.md). */
#include "hisp.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static hisp_context ctx;

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static void put64(uint8_t *p, uint64_t v)
{
    memcpy(p, &v, 8); /* the format is little-endian, as is every target here */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ctx && hisp_context_create(&ctx) != HISP_SUCCESS) abort();
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf) return 0;
    memcpy(buf, data, size);
    if (size >= 96) {
        size_t pool = size - 96;
        if (pool % 16 == 0) put64(buf + 72, pool);
        put64(buf + 80, fnv1a(buf + 96, pool));
        put64(buf + 88, fnv1a(buf, 88));
    }
    hisp_matrix A = NULL;
    hisp_status s = hisp_matrix_load_buffer(ctx, buf, size, "fuzz", &A);
    if (s == HISP_SUCCESS) {
        hisp_matrix_info info;
        if (hisp_matrix_get_info(A, &info) != HISP_SUCCESS) abort();
        /* a loaded tree must convert back (every reader walks it) */
        if (info.nrows <= (1 << 20) && info.ncols <= (1 << 20) && info.nnz <= (1 << 20)) {
            hisp_matrix C = NULL;
            if (hisp_matrix_duplicate(A, HISP_FORMAT_CSR, &C) != HISP_SUCCESS) abort();
            hisp_matrix_info ci;
            if (hisp_matrix_get_info(C, &ci) != HISP_SUCCESS || ci.nnz != info.nnz) abort();
            hisp_matrix_destroy(&C);
        }
    } else if (s != HISP_ERR_INPUT_FORMAT || A) {
        abort();
    }
    hisp_matrix_destroy(&A);
    free(buf);
    return 0;
}
