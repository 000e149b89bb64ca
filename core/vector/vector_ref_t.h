/* Vector algebra reference loops for one scalar type, included by
 * core/vector/vector_ref.c with T (float | double) and F(name) (name suffixed).
 * vc = components per entry: 1 real, 2 complex, 4 quaternion (w x y z).
 * Element formulas and their order are those of kernels/vector.cl. The
 * loops are inlined where vector_ref.c calls them with a constant vc, so
 * that a real vector's loop has no per-component loops left (they had been
 * a memcpy call per entry). */

static inline void F(ld)(int vc, const T *p, int64_t i, T e[4])
{
    for (int c = 0; c < 4; c++)
        e[c] = c < vc ? p[i * vc + c] : 0;
}

static inline void F(st)(int vc, T *p, int64_t i, const T e[4])
{
    for (int c = 0; c < vc; c++)
        p[i * vc + c] = e[c];
}

/* r = a*b (complex / Hamilton product) */
static inline void F(mul)(int vc, const T a[4], const T b[4], T r[4])
{
    if (vc == 1) {
        r[0] = a[0] * b[0];
    } else if (vc == 2) {
        r[0] = a[0] * b[0] - a[1] * b[1];
        r[1] = a[0] * b[1] + a[1] * b[0];
    } else {
        r[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
        r[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
        r[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
        r[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
    }
}

static inline void F(conj)(int vc, const T a[4], T r[4])
{
    r[0] = a[0];
    for (int c = 1; c < 4; c++)
        r[c] = c < vc ? -a[c] : 0;
}

static inline T F(norm)(int vc, const T a[4])
{
    T s = a[0] * a[0];
    for (int c = 1; c < vc; c++)
        s += a[c] * a[c];
    return s;
}

/* r = b^-1 * a (left: div) or a * b^-1 (right: ratio scalars); a / b for
 * real entries; otherwise conj(b)*a / |b|^2 or a*conj(b) / |b|^2. */
static inline void F(divide)(int vc, const T a[4], const T b[4], int right, T r[4])
{
    if (vc == 1) {
        r[0] = a[0] / b[0];
        return;
    }
    T cb[4], p[4];
    F(conj)(vc, b, cb);
    if (right)
        F(mul)(vc, a, cb, p);
    else
        F(mul)(vc, cb, a, p);
    T nb = F(norm)(vc, b);
    for (int c = 0; c < vc; c++)
        r[c] = p[c] / nb;
}

static inline bool F(zero)(int vc, const T a[4])
{
    for (int c = 0; c < vc; c++)
        if (a[c] != 0) return false;
    return true;
}

/* s += conj(x) * y in double */
static inline void F(dotacc)(int vc, const T x[4], const T y[4], double s[4])
{
    double a[4], b[4], r[4];
    for (int c = 0; c < 4; c++) {
        a[c] = c ? -(double)x[c] : (double)x[c];
        b[c] = (double)y[c];
    }
    if (vc == 1) {
        r[0] = a[0] * b[0];
    } else if (vc == 2) {
        r[0] = a[0] * b[0] - a[1] * b[1];
        r[1] = a[0] * b[1] + a[1] * b[0];
    } else {
        r[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
        r[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
        r[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
        r[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
    }
    for (int c = 0; c < vc; c++)
        s[c] += r[c];
}

static inline void F(round)(int vc, const double s[4], void *r)
{
    for (int c = 0; c < vc; c++)
        ((T *)r)[c] = (T)s[c];
}

VREF_LOOP void F(scalar)(int vc, const void *num, const void *den, int negate, void *out)
{
    T a[4], b[4], r[4];
    F(ld)(vc, num, 0, a);
    if (den) {
        F(ld)(vc, den, 0, b);
        bool bz = true;
        for (int c = 0; c < vc; c++)
            bz = bz && b[c] == 0;
        if ((negate & HISPI_SCALAR_SAFE) && bz)
            memset(r, 0, sizeof r);
        else
            F(divide)(vc, a, b, 1, r);
    } else {
        memcpy(r, a, sizeof r);
    }
    if (negate & 1)
        for (int c = 0; c < vc; c++)
            r[c] = -r[c];
    F(st)(vc, out, 0, r);
}

VREF_LOOP void F(fill)(int vc, int64_t n, const void *av, void *y)
{
    T a[4];
    F(ld)(vc, av, 0, a);
    for (int64_t i = 0; i < n; i++)
        F(st)(vc, y, i, a);
}

VREF_LOOP void F(scale)(int vc, int64_t n, const void *av, void *y)
{
    T a[4], e[4], r[4];
    F(ld)(vc, av, 0, a);
    for (int64_t i = 0; i < n; i++) {
        F(ld)(vc, y, i, e);
        F(mul)(vc, e, a, r);
        F(st)(vc, y, i, r);
    }
}

/* one entry of x*a + y*b + z*c (terms as in hispi_vref_axpbypcz) */
static inline void F(combo)(int vc, const T a[4], const void *x, const T b[4], const void *y,
                            const T c[4], bool zread, const void *z, int64_t i, T r[4])
{
    T e[4], p[4];
    F(ld)(vc, x, i, e);
    F(mul)(vc, e, a, r);
    if (y) {
        F(ld)(vc, y, i, e);
        F(mul)(vc, e, b, p);
        for (int k = 0; k < vc; k++)
            r[k] = r[k] + p[k];
    }
    if (zread) {
        F(ld)(vc, z, i, e);
        F(mul)(vc, e, c, p);
        for (int k = 0; k < vc; k++)
            r[k] = r[k] + p[k];
    }
}

VREF_LOOP void F(axpbypcz)(int vc, int64_t n, const void *av, const void *x, const void *bv,
                           const void *y, const void *cv, void *z)
{
    T a[4], b[4] = {0}, c[4], r[4];
    F(ld)(vc, av, 0, a);
    if (y) F(ld)(vc, bv, 0, b);
    F(ld)(vc, cv, 0, c);
    bool zread = !F(zero)(vc, c);
    for (int64_t i = 0; i < n; i++) {
        F(combo)(vc, a, x, b, y, c, zread, z, i, r);
        F(st)(vc, z, i, r);
    }
}

VREF_LOOP void F(muldiv)(int vc, int64_t n, const void *x, const void *y, void *z, bool div)
{
    T a[4], b[4], r[4];
    for (int64_t i = 0; i < n; i++) {
        F(ld)(vc, x, i, a);
        F(ld)(vc, y, i, b);
        if (div)
            F(divide)(vc, a, b, 0, r);
        else
            F(mul)(vc, a, b, r);
        F(st)(vc, z, i, r);
    }
}

VREF_LOOP void F(dot)(int vc, int64_t n, const void *x, const void *y, void *r)
{
    double s[4] = {0};
    T a[4], b[4];
    for (int64_t i = 0; i < n; i++) {
        F(ld)(vc, x, i, a);
        F(ld)(vc, y, i, b);
        F(dotacc)(vc, a, b, s);
    }
    F(round)(vc, s, r);
}

VREF_LOOP void F(nrm2)(int vc, int64_t n, const void *x, void *r)
{
    double s = 0;
    for (int64_t i = 0; i < (int64_t)n * vc; i++) {
        double v = ((const T *)x)[i];
        s += v * v;
    }
    *(T *)r = (T)sqrt(s);
}

VREF_LOOP void F(axpby_dot)(int vc, int64_t n, const void *av, const void *x, const void *bv,
                            void *y, const void *w, void *r)
{
    T a[4], b[4], e[4], v[4];
    double s[4] = {0};
    F(ld)(vc, av, 0, a);
    F(ld)(vc, bv, 0, b);
    bool yread = !F(zero)(vc, b);
    for (int64_t i = 0; i < n; i++) {
        F(combo)(vc, a, x, NULL, NULL, b, yread, y, i, e);
        F(st)(vc, y, i, e);
        if (w) {
            F(ld)(vc, w, i, v);
            F(dotacc)(vc, e, v, s);
        } else {
            F(dotacc)(vc, e, e, s);
        }
    }
    F(round)(vc, s, r);
}

VREF_LOOP void F(dot2)(int vc, int64_t n, const void *x, const void *y, const void *w, void *r0,
                       void *r1)
{
    double s0[4] = {0}, s1[4] = {0};
    T a[4], b[4], c[4];
    for (int64_t i = 0; i < n; i++) {
        F(ld)(vc, x, i, a);
        F(ld)(vc, y, i, b);
        F(ld)(vc, w, i, c);
        F(dotacc)(vc, a, b, s0);
        F(dotacc)(vc, a, c, s1);
    }
    F(round)(vc, s0, r0);
    F(round)(vc, s1, r1);
}

VREF_LOOP void F(axpby_div_dot2)(int vc, int64_t n, const void *av, const void *x, const void *bv,
                                 void *y, const void *d, void *z, void *r0, void *r1)
{
    T a[4], b[4], e[4], v[4], q[4];
    double s0[4] = {0}, s1[4] = {0};
    F(ld)(vc, av, 0, a);
    F(ld)(vc, bv, 0, b);
    for (int64_t i = 0; i < n; i++) {
        F(combo)(vc, a, x, NULL, NULL, b, true, y, i, e);
        F(st)(vc, y, i, e);
        F(ld)(vc, d, i, v);
        F(divide)(vc, e, v, 0, q);
        F(st)(vc, z, i, q);
        F(dotacc)(vc, e, e, s0);
        F(dotacc)(vc, e, q, s1);
    }
    F(round)(vc, s0, r0);
    F(round)(vc, s1, r1);
}

VREF_LOOP void F(axpby_dot2_acc)(int vc, int64_t n, const void *pv, const void *P, const void *qv,
                                 const void *S, void *X, const void *av, const void *x,
                                 const void *bv, void *y, const void *w, void *r0, void *r1)
{
    T p[4], q[4], a[4], b[4], one[4] = {1, 0, 0, 0}, e[4], v[4];
    double s0[4] = {0}, s1[4] = {0};
    F(ld)(vc, pv, 0, p);
    F(ld)(vc, qv, 0, q);
    F(ld)(vc, av, 0, a);
    F(ld)(vc, bv, 0, b);
    for (int64_t i = 0; i < n; i++) {
        F(combo)(vc, p, P, q, S, one, true, X, i, e); /* S before y's store */
        F(st)(vc, X, i, e);
        F(combo)(vc, a, x, NULL, NULL, b, true, y, i, e);
        F(st)(vc, y, i, e);
        F(ld)(vc, w, i, v);
        F(dotacc)(vc, e, e, s0);
        F(dotacc)(vc, v, e, s1);
    }
    F(round)(vc, s0, r0);
    F(round)(vc, s1, r1);
}

VREF_LOOP void F(div_dot)(int vc, int64_t n, const void *x, const void *y, void *z, void *r)
{
    double s[4] = {0};
    T a[4], b[4], q[4];
    for (int64_t i = 0; i < n; i++) {
        F(ld)(vc, x, i, a);
        F(ld)(vc, y, i, b);
        F(divide)(vc, a, b, 0, q);
        F(st)(vc, z, i, q);
        F(dotacc)(vc, a, q, s);
    }
    F(round)(vc, s, r);
}

/* r[k*q + c] = dot(Q[c], R[k]) for k < nr, a dot at a time with four
 * interleaved sums (a single sum is one chain of dependent adds); acc:
 * 4 * q * nr doubles of scratch */
VREF_LOOP void F(mdot)(int vc, int64_t n, int q, const void *const *Q, int nr, const void *const *R,
                       double *acc, void *r)
{
    for (int c = 0; c < q; c++)
        for (int k = 0; k < nr; k++) {
            double s0[4] = {0}, s1[4] = {0}, s2[4] = {0}, s3[4] = {0};
            T x[4], y[4];
            int64_t i = 0;
#define MDOT_TERM(s, j)                                                                            \
    F(ld)(vc, Q[c], j, x);                                                                         \
    F(ld)(vc, R[k], j, y);                                                                         \
    F(dotacc)(vc, x, y, s)
            for (; i + 3 < n; i += 4) {
                MDOT_TERM(s0, i);
                MDOT_TERM(s1, i + 1);
                MDOT_TERM(s2, i + 2);
                MDOT_TERM(s3, i + 3);
            }
            for (; i < n; i++) {
                MDOT_TERM(s0, i);
            }
#undef MDOT_TERM
            for (int m = 0; m < 4; m++)
                acc[4 * (k * q + c) + m] = (s0[m] + s1[m]) + (s2[m] + s3[m]);
        }
    for (int j = 0; j < q * nr; j++)
        F(round)(vc, acc + 4 * j, (T *)r + (size_t)j * (size_t)vc);
}

/* hispi_vector_bupdate's update: each entry's terms in kernels/vector.cl's
 * order, column after column (independent entries: loops the compiler
 * vectorises); coef: 2q + 3 entries */
VREF_LOOP void F(bupdate)(int vc, int64_t n, int q, const void *const *Q, void *y0, void *y1,
                          const void *coef)
{
    T a0[4], b0[4], b1[4], e0[4], e1[4], x[4], p[4], s0[4], s1[4] = {0}, a[4], b[4];
    F(ld)(vc, coef, q, a0);
    F(ld)(vc, coef, 2 * (int64_t)q + 1, b0);
    F(ld)(vc, coef, 2 * (int64_t)q + 2, b1);
    bool r0 = !F(zero)(vc, a0), r1 = y1 && !F(zero)(vc, b1);
    for (int64_t i = 0; i < n; i++) {
        F(ld)(vc, y0, i, e0);
        if (y1) {
            F(mul)(vc, e0, b0, s1);
            if (r1) {
                F(ld)(vc, y1, i, e1);
                F(mul)(vc, e1, b1, p);
                for (int k = 0; k < vc; k++)
                    s1[k] = p[k] + s1[k];
            }
            F(st)(vc, y1, i, s1);
        }
        if (r0)
            F(mul)(vc, e0, a0, s0);
        else
            memset(s0, 0, sizeof s0);
        F(st)(vc, y0, i, s0);
    }
    for (int c = 0; c < q; c++) {
        F(ld)(vc, coef, c, a);
        F(ld)(vc, coef, q + 1 + c, b);
        for (int64_t i = 0; i < n; i++) {
            F(ld)(vc, Q[c], i, x);
            F(ld)(vc, y0, i, s0);
            F(mul)(vc, x, a, p);
            for (int k = 0; k < vc; k++)
                s0[k] += p[k];
            F(st)(vc, y0, i, s0);
            if (y1) {
                F(ld)(vc, y1, i, s1);
                F(mul)(vc, x, b, p);
                for (int k = 0; k < vc; k++)
                    s1[k] += p[k];
                F(st)(vc, y1, i, s1);
            }
        }
    }
}
