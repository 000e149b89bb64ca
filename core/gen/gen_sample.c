/* The generators' random streams exported to the rest of core (hispi.h),
 * and sorted samples: sorting a row's columns and dropping repeats, k
 * distinct sorted draws from [0, m). */
#include "gen_internal.h"

#include <stdlib.h>
#include <string.h>

/* Exported for core/gen/gen_perturb.c (hispi.h); the generators here keep the
 * inline versions. */
uint64_t hispi_mix64(uint64_t z)
{
    return mix64(z);
}

hispi_rng hispi_rng_at(uint64_t key, uint64_t index, uint64_t purpose)
{
    return rng_at(key, index, purpose);
}

uint64_t hispi_rng_next(hispi_rng *r)
{
    return next(r);
}

int64_t hispi_rng_below(hispi_rng *r, int64_t m)
{
    return below(r, m);
}

double hispi_gen_value(size_t scalar, uint64_t x)
{
    return uval(scalar, x);
}

/* ---- sorted samples ----------------------------------------------------- */

static void sift_down(int32_t *a, int64_t root, int64_t n)
{
    int32_t v = a[root];
    for (int64_t c; (c = 2 * root + 1) < n; root = c) {
        if (c + 1 < n && a[c + 1] > a[c]) c++;
        if (a[c] <= v) break;
        a[root] = a[c];
    }
    a[root] = v;
}

static void insertion_sort(int32_t *a, int64_t n)
{
    for (int64_t i = 1; i < n; i++) {
        int32_t v = a[i];
        int64_t j = i;
        for (; j > 0 && a[j - 1] > v; j--)
            a[j] = a[j - 1];
        a[j] = v;
    }
}

/* Introsort: quicksort (median of three put in place, Hoare partition,
 * recursion on the smaller side), heapsort when too deep, insertion sort
 * for short runs. O(n log n) on any input, including the sorted runs with
 * a few strays that the samplers produce; no comparator calls. */
static void intro_sort(int32_t *a, int64_t n, int depth)
{
    while (n > 24) {
        if (depth-- <= 0) {
            for (int64_t r = n / 2 - 1; r >= 0; r--)
                sift_down(a, r, n);
            for (int64_t e = n - 1; e > 0; e--) {
                int32_t t = a[0];
                a[0] = a[e];
                a[e] = t;
                sift_down(a, 0, e);
            }
            return;
        }
        int64_t m = n / 2;
        int32_t t;
#define SWAP_IF(x, y)                                                                              \
    if (a[y] < a[x]) {                                                                             \
        t = a[x];                                                                                  \
        a[x] = a[y];                                                                               \
        a[y] = t;                                                                                  \
    }
        SWAP_IF(0, m);
        SWAP_IF(m, n - 1);
        SWAP_IF(0, m);
#undef SWAP_IF
        int32_t pivot = a[m];
        int64_t i = 0, j = n - 1; /* a[0] <= pivot <= a[n-1] act as sentinels */
        for (;;) {
            do {
                i++;
            } while (a[i] < pivot);
            do {
                j--;
            } while (a[j] > pivot);
            if (i >= j) break;
            t = a[i];
            a[i] = a[j];
            a[j] = t;
        }
        /* [0, j] <= pivot <= [j+1, n) */
        if (j + 1 < n - j - 1) {
            intro_sort(a, j + 1, depth);
            a += j + 1;
            n -= j + 1;
        } else {
            intro_sort(a + j + 1, n - j - 1, depth);
            n = j + 1;
        }
    }
    insertion_sort(a, n);
}

/* LSD radix sort of non-negative keys, 11 bits a pass, skipping passes
 * whose digit is the same for every key; tmp holds n entries. */
static void radix_sort(int32_t *a, int64_t n, int32_t *tmp)
{
    int64_t count[2048];
    int32_t *src = a, *dst = tmp;
    for (int shift = 0; shift < 31; shift += 11) {
        memset(count, 0, sizeof count);
        for (int64_t k = 0; k < n; k++)
            count[((uint32_t)src[k] >> shift) & 2047]++;
        if (count[((uint32_t)src[0] >> shift) & 2047] == n) continue;
        int64_t sum = 0;
        for (int d = 0; d < 2048; d++) {
            int64_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (int64_t k = 0; k < n; k++)
            dst[count[((uint32_t)src[k] >> shift) & 2047]++] = src[k];
        int32_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != a) memcpy(a, src, (size_t)n * sizeof *a);
}

/* Sort; tmp (n entries, may be NULL) enables the radix sort for long runs. */
static void sort_i32(int32_t *a, int64_t n, int32_t *tmp)
{
    if (tmp && n > 1024) {
        radix_sort(a, n, tmp);
        return;
    }
    int depth = 0;
    for (int64_t m = n; m > 1; m >>= 1)
        depth += 2;
    intro_sort(a, n, depth);
}

/* Sort and drop repeats; returns the new length. */
int64_t hispi_gen_sort_unique(int32_t *a, int64_t n, int32_t *tmp)
{
    sort_i32(a, n, tmp);
    int64_t m = 0;
    for (int64_t k = 0; k < n; k++)
        if (m == 0 || a[m - 1] != a[k]) a[m++] = a[k];
    return m;
}

/* k distinct values of [0, m), sorted, uniform over k-subsets, into out.
 * Dense requests walk the range (selection sampling, O(m)); sparse ones draw,
 * sort, drop repeats and draw again for the missing ones. */
void hispi_gen_sample_sorted(rng *r, int64_t m, int64_t k, int32_t *out, int32_t *tmp)
{
    if (k <= 0) return;
    if (k * 4 >= m) {
        int64_t got = 0;
        for (int64_t t = 0; t < m && got < k; t++)
            if (below(r, m - t) < k - got) out[got++] = (int32_t)t;
        return;
    }
    int64_t got = 0;
    while (got < k) {
        for (int64_t q = got; q < k; q++)
            out[q] = (int32_t)below(r, m);
        got = hispi_gen_sort_unique(out, k, tmp);
    }
}
