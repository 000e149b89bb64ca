/* Vector algebra: the plain C loops, every backend's oracle and the
 * reference backend's implementation (core/vector/vector_ref_t.h per scalar type). */
#include "hispi.h"

#include <math.h>
#include <string.h>

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define VREF_LOOP static inline __attribute__((always_inline))

#define T float
#define F(name) CAT(name, _f)
#include "vector_ref_t.h"
#undef T
#undef F

#define T double
#define F(name) CAT(name, _d)
#include "vector_ref_t.h"
#undef T
#undef F

static int vcomp(hisp_type t)
{
    return hisp_type_components(t);
}

static bool dbl(hisp_type t)
{
    return hispi_type_scalar_size(t) == 8;
}

/* fn (of one scalar type) with vc (1, 2 or 4) as a constant */
#define BY_VC_OF(fn, vc, ...)                                                                      \
    ((vc) == 1 ? fn(1, __VA_ARGS__) : (vc) == 2 ? fn(2, __VA_ARGS__) : fn(4, __VA_ARGS__))
/* fn_d or fn_f (t's scalar) with t's components as a constant */
#define BY_VC(t, fn, ...)                                                                          \
    (dbl(t) ? BY_VC_OF(fn##_d, vcomp(t), __VA_ARGS__) : BY_VC_OF(fn##_f, vcomp(t), __VA_ARGS__))

void hispi_vref_scalar(hisp_type t, const void *num, const void *den, int negate, void *out)
{
    BY_VC(t, scalar, num, den, negate, out);
}

void hispi_vref_fill(hisp_type t, int64_t n, const void *a, void *y)
{
    BY_VC(t, fill, n, a, y);
}

void hispi_vref_scale(hisp_type t, int64_t n, const void *a, void *y)
{
    BY_VC(t, scale, n, a, y);
}

void hispi_vref_axpbypcz(hisp_type t, int64_t n, const void *a, const void *x, const void *b,
                         const void *y, const void *c, void *z)
{
    BY_VC(t, axpbypcz, n, a, x, b, y, c, z);
}

void hispi_vref_mul(hisp_type t, int64_t n, const void *x, const void *y, void *z)
{
    BY_VC(t, muldiv, n, x, y, z, false);
}

void hispi_vref_div(hisp_type t, int64_t n, const void *x, const void *y, void *z)
{
    BY_VC(t, muldiv, n, x, y, z, true);
}

void hispi_vref_dot(hisp_type t, int64_t n, const void *x, const void *y, void *r)
{
    BY_VC(t, dot, n, x, y, r);
}

void hispi_vref_nrm2(hisp_type t, int64_t n, const void *x, void *r)
{
    BY_VC(t, nrm2, n, x, r);
}

void hispi_vref_axpby_dot(hisp_type t, int64_t n, const void *a, const void *x, const void *b,
                          void *y, const void *w, void *r)
{
    BY_VC(t, axpby_dot, n, a, x, b, y, w, r);
}

void hispi_vref_dot2(hisp_type t, int64_t n, const void *x, const void *y, const void *w, void *r0,
                     void *r1)
{
    BY_VC(t, dot2, n, x, y, w, r0, r1);
}

void hispi_vref_div_dot(hisp_type t, int64_t n, const void *x, const void *y, void *z, void *r)
{
    BY_VC(t, div_dot, n, x, y, z, r);
}

void hispi_vref_axpby_dot2_acc(hisp_type t, int64_t n, const void *p, const void *P, const void *q,
                               const void *S, void *X, const void *a, const void *x, const void *b,
                               void *y, const void *w, void *r0, void *r1)
{
    BY_VC(t, axpby_dot2_acc, n, p, P, q, S, X, a, x, b, y, w, r0, r1);
}

void hispi_vref_axpby_div_dot2(hisp_type t, int64_t n, const void *a, const void *x, const void *b,
                               void *y, const void *d, void *z, void *r0, void *r1)
{
    BY_VC(t, axpby_div_dot2, n, a, x, b, y, d, z, r0, r1);
}

bool hispi_vref_is_zero(hisp_type t, const void *a)
{
    int vc = vcomp(t);
    for (int c = 0; c < vc; c++)
        if (dbl(t) ? ((const double *)a)[c] != 0 : ((const float *)a)[c] != 0) return false;
    return true;
}

void hispi_vref_mdot(hisp_type t, int64_t n, int q, const void *const *Q, int nr,
                     const void *const *R, double *acc, void *r)
{
    BY_VC(t, mdot, n, q, Q, nr, R, acc, r);
}

void hispi_vref_bupdate(hisp_type t, int64_t n, int q, const void *const *Q, void *y0, void *y1,
                        const void *coef)
{
    BY_VC(t, bupdate, n, q, Q, y0, y1, coef);
}
