/* Double to decimal for the Matrix Market writer: Grisu2 (Loitsch,
 * "Printing floating-point numbers quickly and accurately with integers",
 * 2010; the steps of nlohmann/json's to_chars). Its digits always read back
 * to the same double (shortest in nearly all cases, never more than 17),
 * so files round-trip as with "%.17g", at a fraction of printf's cost. */
#include "hispi_mmio.h"

#include <math.h>
#include <string.h>

#include "mmio_pow5.h"

typedef struct {
    uint64_t f;
    int e;
} diyfp;

static inline diyfp mul(diyfp x, diyfp y) /* upper 64 bits of the product, rounded */
{
    unsigned __int128 p = (unsigned __int128)x.f * y.f;
    uint64_t h = (uint64_t)(p >> 64), l = (uint64_t)p;
    h += l >> 63;
    return (diyfp){h, x.e + y.e + 64};
}

static inline diyfp normalize(diyfp x)
{
    int s = __builtin_clzll(x.f);
    return (diyfp){x.f << s, x.e - s};
}

static inline int largest_pow10(uint32_t n, uint32_t *p)
{
    static const uint32_t t[10] = {1,      10,      100,      1000,      10000,
                                   100000, 1000000, 10000000, 100000000, 1000000000};
    int k = 9;
    while (k > 0 && n < t[k])
        k--;
    *p = t[k];
    return k + 1;
}

static inline void round_last(char *buf, int len, uint64_t dist, uint64_t delta, uint64_t rest,
                              uint64_t ten_k)
{
    while (rest < dist && delta - rest >= ten_k &&
           (rest + ten_k < dist || dist - rest > rest + ten_k - dist)) {
        buf[len - 1]--;
        rest += ten_k;
    }
}

/* Digits of v > 0 (finite) into buf; *dexp: v ~ digits x 10^dexp. */
static int grisu2(double v, char *buf, int *dexp)
{
    uint64_t bits;
    memcpy(&bits, &v, 8);
    uint64_t F = bits & ((1ull << 52) - 1);
    int E = (int)(bits >> 52);
    diyfp w = E ? (diyfp){F | 1ull << 52, E - 1075} : (diyfp){F, -1074};
    bool closer = F == 0 && E > 1;
    diyfp mp = normalize((diyfp){2 * w.f + 1, w.e - 1});
    diyfp mm = closer ? (diyfp){4 * w.f - 1, w.e - 2} : (diyfp){2 * w.f - 1, w.e - 1};
    mm = (diyfp){mm.f << (mm.e - mp.e), mp.e};
    w = normalize(w);
    /* a cached power c = 10^-k with -60 <= e(w c) <= -32 */
    int f = -61 - mp.e;
    int k = (f * 78913) / (1 << 18) + (f > 0);
    int idx = (-HISPI_POW10_MIN_K + k + (HISPI_POW10_STEP - 1)) / HISPI_POW10_STEP;
    diyfp c = {hispi_pow10_64[idx].f, hispi_pow10_64[idx].e};
    *dexp = -hispi_pow10_64[idx].k;
    diyfp W = mul(w, c), Wm = mul(mm, c), Wp = mul(mp, c);
    Wm.f++;
    Wp.f--;
    uint64_t delta = Wp.f - Wm.f, dist = Wp.f - W.f;
    int sh = -Wp.e;
    uint64_t one = 1ull << sh;
    uint32_t p1 = (uint32_t)(Wp.f >> sh);
    uint64_t p2 = Wp.f & (one - 1);
    uint32_t pow10;
    int n = largest_pow10(p1, &pow10), len = 0;
    while (n > 0) {
        uint32_t d = p1 / pow10;
        p1 %= pow10;
        buf[len++] = (char)('0' + d);
        n--;
        uint64_t rest = ((uint64_t)p1 << sh) + p2;
        if (rest <= delta) {
            *dexp += n;
            round_last(buf, len, dist, delta, rest, (uint64_t)pow10 << sh);
            return len;
        }
        pow10 /= 10;
    }
    int m = 0;
    for (;;) {
        p2 *= 10;
        buf[len++] = (char)('0' + (p2 >> sh));
        p2 &= one - 1;
        m++;
        delta *= 10;
        dist *= 10;
        if (p2 <= delta) break;
    }
    *dexp -= m;
    round_last(buf, len, dist, delta, p2, one);
    return len;
}

char *hispi_mmio_dtoa(char *p, double v)
{
    if (v != v) {
        memcpy(p, "nan", 3);
        return p + 3;
    }
    if (signbit(v)) {
        *p++ = '-';
        v = -v;
    }
    if (v == 0) {
        *p++ = '0';
        return p;
    }
    if (v > 1.7976931348623157e308) {
        memcpy(p, "inf", 3);
        return p + 3;
    }
    char d[24];
    int e, len = grisu2(v, d, &e), pt = len + e; /* v = 0.d * 10^pt */
    if (pt >= len && pt <= 17) {                 /* an integer: digits and zeros */
        memcpy(p, d, (size_t)len);
        memset(p + len, '0', (size_t)(pt - len));
        return p + pt;
    }
    if (pt > 0 && pt <= 17) { /* ddd.ddd */
        memcpy(p, d, (size_t)pt);
        p[pt] = '.';
        memcpy(p + pt + 1, d + pt, (size_t)(len - pt));
        return p + len + 1;
    }
    if (pt <= 0 && pt > -5) { /* 0.000ddd */
        *p++ = '0';
        *p++ = '.';
        memset(p, '0', (size_t)-pt);
        memcpy(p - pt, d, (size_t)len);
        return p - pt + len;
    }
    *p++ = d[0]; /* d.ddde[-]x */
    if (len > 1) {
        *p++ = '.';
        memcpy(p, d + 1, (size_t)(len - 1));
        p += len - 1;
    }
    *p++ = 'e';
    int x = pt - 1;
    if (x < 0) {
        *p++ = '-';
        x = -x;
    }
    if (x >= 100) *p++ = (char)('0' + x / 100);
    if (x >= 10) *p++ = (char)('0' + x / 10 % 10);
    *p++ = (char)('0' + x % 10);
    return p;
}
