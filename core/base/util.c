/* Allocation with overflow checks, entry types, hashing, clocks. */
#include "hispi.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <time.h>

static long alloc_countdown; /* test hook: fail the k-th allocation */

void hispi_alloc_fail_after(long k)
{
    alloc_countdown = k;
}

static bool injected_failure(void)
{
    if (alloc_countdown <= 0) return false;
    return --alloc_countdown == 0;
}

static hisp_status oom(hisp_context ctx, size_t n, size_t size)
{
    return hispi_fail(ctx, HISP_ERR_OUT_OF_HOST_MEMORY,
                      "cannot allocate %zu x %zu bytes of host memory", n, size);
}

hisp_status hispi_alloc(hisp_context ctx, size_t n, size_t size, void **out)
{
    *out = NULL;
    if (size && n > SIZE_MAX / size) return oom(ctx, n, size);
    size_t bytes = n * size;
    void *p = injected_failure() ? NULL : malloc(bytes ? bytes : 1);
    if (!p) return oom(ctx, n, size);
    *out = p;
    return HISP_SUCCESS;
}

hisp_status hispi_calloc(hisp_context ctx, size_t n, size_t size, void **out)
{
    *out = NULL;
    if (size && n > SIZE_MAX / size) return oom(ctx, n, size);
    void *p = injected_failure() ? NULL : calloc(n ? n : 1, size ? size : 1);
    if (!p) return oom(ctx, n, size);
    *out = p;
    return HISP_SUCCESS;
}

hisp_status hispi_realloc(hisp_context ctx, void **p, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) return oom(ctx, n, size);
    size_t bytes = n * size;
    void *q = injected_failure() ? NULL : realloc(*p, bytes ? bytes : 1);
    if (!q) return oom(ctx, n, size); /* *p stays valid */
    *p = q;
    return HISP_SUCCESS;
}

static const struct {
    const char *name;
    size_t scalar;
    int comps;
} type_table[HISP_TYPE_COUNT] = {
    [HISP_F32] = {"f32", 4, 1},           [HISP_F64] = {"f64", 8, 1},
    [HISP_C32] = {"c32", 4, 2},           [HISP_C64] = {"c64", 8, 2},
    [HISP_Q32] = {"q32", 4, 4},           [HISP_Q64] = {"q64", 8, 4},
    [HISP_B3X3_F32] = {"b3x3_f32", 4, 9}, [HISP_B3X3_F64] = {"b3x3_f64", 8, 9},
};

bool hispi_type_valid(hisp_type t)
{
    return (int)t >= 0 && t < HISP_TYPE_COUNT;
}

size_t hispi_type_scalar_size(hisp_type t)
{
    return hispi_type_valid(t) ? type_table[t].scalar : 0;
}

size_t hisp_type_size(hisp_type t)
{
    return hispi_type_valid(t) ? type_table[t].scalar * (size_t)type_table[t].comps : 0;
}

int hisp_type_components(hisp_type t)
{
    return hispi_type_valid(t) ? type_table[t].comps : 0;
}

const char *hisp_type_name(hisp_type t)
{
    return hispi_type_valid(t) ? type_table[t].name : "invalid";
}

hisp_status hisp_type_from_name(const char *name, hisp_type *t)
{
    if (!name || !t) return HISP_ERR_INVALID_ARGUMENT;
    for (int i = 0; i < HISP_TYPE_COUNT; i++)
        if (strcasecmp(name, type_table[i].name) == 0) {
            *t = (hisp_type)i;
            return HISP_SUCCESS;
        }
    if (strcasecmp(name, "float") == 0)
        *t = HISP_F32;
    else if (strcasecmp(name, "double") == 0)
        *t = HISP_F64;
    else
        return HISP_ERR_INVALID_ARGUMENT;
    return HISP_SUCCESS;
}

void hispi_store_real(hisp_type t, void *array, int64_t i, double v)
{
    int comps = hisp_type_components(t);
    size_t es = hispi_type_scalar_size(t);
    char *e = (char *)array + (size_t)i * es * (size_t)comps;
    memset(e, 0, es * (size_t)comps);
    /* a 3x3 block holds v on its diagonal; other types in component 0 */
    int step = comps == 9 ? 4 : comps;
    for (int c = 0; c < comps; c += step) {
        if (es == 4)
            ((float *)e)[c] = (float)v;
        else
            ((double *)e)[c] = v;
    }
}

double hispi_load_real(hisp_type t, const void *array, int64_t i)
{
    size_t es = hispi_type_scalar_size(t);
    const char *e = (const char *)array + (size_t)i * hisp_type_size(t);
    return es == 4 ? (double)*(const float *)e : *(const double *)e;
}

int64_t hispi_row_of(const int64_t *ptr, int64_t n, int64_t k)
{
    int64_t lo = 0, hi = n; /* ptr[lo] <= k < ptr[hi] */
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (ptr[mid] <= k)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

uint64_t hispi_hash(const void *data, size_t n, uint64_t seed)
{
    const unsigned char *p = data;
    uint64_t h = 14695981039346656037ull ^ seed; /* FNV-1a 64 offset basis */
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

void hispi_huge_pages(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)2 << 20;
    if (bytes < 2 * huge) return;
    uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1), e = ((uintptr_t)p + bytes) & ~(huge - 1);
    if (e > a) (void)madvise((void *)a, e - a, MADV_HUGEPAGE);
#else
    (void)p;
    (void)bytes;
#endif
}

double hispi_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

const char *hisp_version_string(void)
{
#define HISPI_STR2(x) #x
#define HISPI_STR(x) HISPI_STR2(x)
    return HISPI_STR(HISP_VERSION_MAJOR) "." HISPI_STR(HISP_VERSION_MINOR) "." HISPI_STR(
        HISP_VERSION_PATCH);
}
