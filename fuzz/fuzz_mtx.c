/* libFuzzer target for the Matrix Market reader: any byte string must give
 * either a valid matrix or HISP_ERR_INPUT_FORMAT with a line number inside
 * the input; never a crash, a hang, a leak or another status. */
#include "hisp.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static hisp_context ctx;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ctx && hisp_context_create(&ctx) != HISP_SUCCESS) abort();
    int64_t lines = 1;
    for (size_t i = 0; i < size; i++)
        lines += data[i] == '\n';
    /* gzip or bzip2 data: line numbers count the decompressed text, and
     * errors of the compressed stream have none (0) */
    bool packed = (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) ||
                  (size >= 4 && data[0] == 'B' && data[1] == 'Z' && data[2] == 'h');
    const hisp_type types[] = {HISP_F64, HISP_C64};
    for (int t = 0; t < 2; t++) {
        hisp_matrix A = NULL;
        hisp_mtx_header h;
        hisp_status s =
            hisp_matrix_read_mtx_buffer(ctx, (const char *)data, size, "fuzz", types[t], &A, &h);
        if (s == HISP_SUCCESS) {
            hisp_matrix_info info;
            if (hisp_matrix_get_info(A, &info) != HISP_SUCCESS) abort();
            if (info.nnz < h.nnz_stored || info.nnz > 2 * h.nnz_stored) abort();
            /* the parsed entries must form a valid matrix: convert it. CSR/CSC
             * take O(rows + cols) pointers, so huge (valid, empty) dimensions
             * such as "1 2147483647 0" are only parsed, not converted. */
            if (info.nrows <= (1 << 20) && info.ncols <= (1 << 20)) {
                if (hisp_matrix_convert(A, HISP_FORMAT_CSR) != HISP_SUCCESS) abort();
                if (hisp_matrix_convert(A, HISP_FORMAT_CSC) != HISP_SUCCESS) abort();
            }
        } else {
            hisp_error_info e;
            if (s != HISP_ERR_INPUT_FORMAT || A) abort();
            if (hisp_context_last_error(ctx, &e) != HISP_SUCCESS) abort();
            if (!e.message[0] || e.line < (packed ? 0 : 1) || (!packed && e.line > lines + 1))
                abort();
        }
        hisp_matrix_destroy(&A);
    }
    return 0;
}
