/* Decimal to double for the Matrix Market reader, correctly rounded.
 *
 * Up to 19 significant digits the result comes from the mantissa as an
 * integer: Clinger's path (mantissa below 2^53, |exponent| <= 22: one
 * correctly rounded operation), else the Eisel-Lemire algorithm with the
 * 128-bit powers of five of core/io/mmio_pow5.h, which decides every such
 * input (Mushtak and Lemire, "Fast number parsing without fallback", 2023).
 * Longer mantissas, hex floats, nan and inf return false: the caller falls
 * back to strtod_l. */
#include "hispi_mmio.h"

#include <string.h>

#include "mmio_pow5.h"

static const double pow10_exact[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static inline bool is_digit(char c)
{
    return (unsigned)(unsigned char)c - '0' <= 9;
}

static inline uint64_t load8(const char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* Eight ASCII digits in a little-endian word (SWAR, as in fast_float). */
static inline bool all_digits8(uint64_t v)
{
    return !(((v + 0x4646464646464646ull) | (v - 0x3030303030303030ull)) & 0x8080808080808080ull);
}

static inline uint32_t digits8(uint64_t v)
{
    const uint64_t mask = 0x000000FF000000FFull, mul1 = 0x000F424000000064ull,
                   mul2 = 0x0000271000000001ull;
    v -= 0x3030303030303030ull;
    v = (v * 10) + (v >> 8);
    return (uint32_t)((((v & mask) * mul1) + (((v >> 16) & mask) * mul2)) >> 32);
}

static inline const char *scan_digits(const char *p, const char *e, uint64_t *m)
{
    if (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)
        while (e - p >= 8 && all_digits8(load8(p))) {
            *m = *m * 100000000u + digits8(load8(p));
            p += 8;
        }
    while (p < e && is_digit(*p))
        *m = *m * 10 + (uint64_t)(*p++ - '0');
    return p;
}

/* w * 10^q for w != 0 with at most 19 digits (Eisel-Lemire, binary64; the
 * steps of fast_float's compute_float). */
static double eisel_lemire(uint64_t w, int64_t q, bool neg)
{
    uint64_t bits;
    if (q < HISPI_POW5_MIN) {
        bits = 0;
    } else if (q > HISPI_POW5_MAX) {
        bits = 0x7FFull << 52;
    } else {
        int lz = __builtin_clzll(w);
        w <<= lz;
        const uint64_t *t = hispi_pow5_128[q - HISPI_POW5_MIN];
        unsigned __int128 pr = (unsigned __int128)w * t[0];
        uint64_t hi = (uint64_t)(pr >> 64), lo = (uint64_t)pr;
        if ((hi & 0x1FF) == 0x1FF) { /* the truncation could matter: the next 64 bits */
            uint64_t hi2 = (uint64_t)(((unsigned __int128)w * t[1]) >> 64);
            lo += hi2;
            if (hi2 > lo) hi++;
        }
        int upper = (int)(hi >> 63), shift = upper + 64 - 52 - 3;
        uint64_t mant = hi >> shift;
        int32_t p2 = (int32_t)((((152170 + 65536) * (int32_t)q) >> 16) + 63) + upper - lz + 1023;
        if (p2 <= 0) { /* subnormal */
            if (-p2 + 1 >= 64) {
                bits = 0;
            } else {
                mant >>= -p2 + 1;
                mant += mant & 1;
                mant >>= 1;
                bits = mant | ((uint64_t)(mant < (1ull << 52) ? 0 : 1) << 52);
            }
        } else {
            /* exactly halfway: round to even instead of up */
            if (lo <= 1 && q >= -4 && q <= 23 && (mant & 3) == 1 && (mant << shift) == hi)
                mant &= ~1ull;
            mant += mant & 1;
            mant >>= 1;
            if (mant >= (2ull << 52)) {
                mant = 1ull << 52;
                p2++;
            }
            mant &= ~(1ull << 52);
            bits = p2 >= 0x7FF ? 0x7FFull << 52 : mant | (uint64_t)p2 << 52;
        }
    }
    bits |= (uint64_t)neg << 63;
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

bool hispi_mmio_parse_double(const char *p, const char *e, const char **end, double *out)
{
    bool neg = false;
    if (p < e && (*p == '+' || *p == '-')) neg = *p++ == '-';
    const char *d0 = p;
    uint64_t m = 0;
    p = scan_digits(p, e, &m);
    int64_t ndig = p - d0, scale = 0;
    if (p < e && *p == '.') {
        const char *f0 = ++p;
        p = scan_digits(p, e, &m);
        scale = -(int64_t)(p - f0);
        ndig += p - f0;
    }
    if (ndig == 0) return false;
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        bool eneg = false;
        if (p < e && (*p == '+' || *p == '-')) eneg = *p++ == '-';
        if (p == e || !is_digit(*p)) return false;
        int64_t x = 0;
        for (; p < e && is_digit(*p); p++)
            if (x < 100000) x = x * 10 + (*p - '0');
        scale += eneg ? -x : x;
    }
    *end = p;
    if (ndig > 19) { /* leading zeros do not count; more than 19 others: strtod */
        int64_t lead = 0;
        for (const char *s = d0; s < p && (*s == '0' || *s == '.'); s++)
            lead += *s == '0';
        if (ndig - lead > 19) return false;
    }
    if (m == 0) {
        *out = neg ? -0.0 : 0.0;
        return true;
    }
    if (m <= (1ull << 53) && scale >= -22 && scale <= 22) {
        double v = scale < 0 ? (double)m / pow10_exact[-scale] : (double)m * pow10_exact[scale];
        *out = neg ? -v : v;
        return true;
    }
    *out = eisel_lemire(m, scale, neg);
    return true;
}

int hispi_mmio_parse_int64(const char *p, const char *e, const char **end, int64_t *out)
{
    bool neg = false;
    if (p < e && (*p == '+' || *p == '-')) neg = *p++ == '-';
    const char *d0 = p;
    uint64_t m = 0;
    bool over = false;
    for (; p < e && is_digit(*p); p++) {
        unsigned d = (unsigned)(*p - '0');
        if (m > (UINT64_MAX - d) / 10) over = true;
        m = m * 10 + d;
    }
    if (p == d0) return 1;
    *end = p;
    if (over || m > (uint64_t)INT64_MAX + neg) return 2;
    *out = neg ? (int64_t)(0 - m) : (int64_t)m;
    return 0;
}
