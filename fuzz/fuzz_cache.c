/* libFuzzer target for the kernel-cache entry validator
 * (hispi_cache_entry_check, the gate before a cached binary reaches the
 * OpenCL or CUDA runtime). Each input is checked as an entry: when valid it
 * must be exactly what hispi_cache_entry_make writes for its payload. It is
 * checked again with its length and checksum fixed up (so mutations reach
 * the magic and version checks), and wrapped as a payload: that entry must
 * validate and give the input back, and lose validity when truncated or
 * when any one byte changes. */
#include "hispi.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* valid: it must round-trip through hispi_cache_entry_make */
static void check_entry(const uint8_t *e, size_t size)
{
    size_t len = 0;
    if (!hispi_cache_entry_check(e, size, &len)) return;
    if (len != size - HISPI_CACHE_HEADER) abort();
    size_t n2 = 0;
    uint8_t *again = hispi_cache_entry_make(e + HISPI_CACHE_HEADER, len, &n2);
    if (!again) return;
    if (n2 != size || memcmp(again, e, size)) abort();
    free(again);
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf) return 0;
    memcpy(buf, data, size);
    check_entry(buf, size);
    if (size >= HISPI_CACHE_HEADER) { /* length and checksum made right */
        put64(buf + 16, size - HISPI_CACHE_HEADER);
        put64(buf + 24, hispi_hash(buf + HISPI_CACHE_HEADER, size - HISPI_CACHE_HEADER,
                                   hispi_hash(buf, 24, 0x6361636865ull)));
        int ok = hispi_cache_entry_check(buf, size, NULL);
        int want = !memcmp(buf, "hispcach\1\0\0\0\0\0\0\0", 16);
        if (ok != want) abort();
        check_entry(buf, size);
    }
    /* the input as a payload */
    size_t n = 0, len = 0;
    uint8_t *e = hispi_cache_entry_make(data, size, &n);
    if (e) {
        if (!hispi_cache_entry_check(e, n, &len) || len != size ||
            memcmp(e + HISPI_CACHE_HEADER, data, size))
            abort();
        if (hispi_cache_entry_check(e, n - 1, NULL)) abort();
        size_t at = size ? (size_t)hispi_hash(data, size, 7) % n : 0;
        e[at] ^= (uint8_t)(1 + (size ? data[0] % 255 : 0));
        if (hispi_cache_entry_check(e, n, NULL)) abort();
        free(e);
    }
    free(buf);
    return 0;
}
