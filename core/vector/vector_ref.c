/* Vector algebra: the plain C loops, every backend's oracle and the
 * reference backend's implementation (core/vector/vector_ref_t.h per scalar type). */
#include "hispi.h"

#include <math.h>
#include <string.h>

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

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

void hispi_vref_scalar(hisp_type t, const void *num, const void *den, int negate, void *out)
{
    if (dbl(t))
        scalar_d(vcomp(t), num, den, negate, out);
    else
        scalar_f(vcomp(t), num, den, negate, out);
}

void hispi_vref_fill(hisp_type t, int64_t n, const void *a, void *y)
{
    if (dbl(t))
        fill_d(vcomp(t), n, a, y);
    else
        fill_f(vcomp(t), n, a, y);
}

void hispi_vref_scale(hisp_type t, int64_t n, const void *a, void *y)
{
    if (dbl(t))
        scale_d(vcomp(t), n, a, y);
    else
        scale_f(vcomp(t), n, a, y);
}

void hispi_vref_axpbypcz(hisp_type t, int64_t n, const void *a, const void *x, const void *b,
                         const void *y, const void *c, void *z)
{
    if (dbl(t))
        axpbypcz_d(vcomp(t), n, a, x, b, y, c, z);
    else
        axpbypcz_f(vcomp(t), n, a, x, b, y, c, z);
}

void hispi_vref_mul(hisp_type t, int64_t n, const void *x, const void *y, void *z)
{
    if (dbl(t))
        muldiv_d(vcomp(t), n, x, y, z, false);
    else
        muldiv_f(vcomp(t), n, x, y, z, false);
}

void hispi_vref_div(hisp_type t, int64_t n, const void *x, const void *y, void *z)
{
    if (dbl(t))
        muldiv_d(vcomp(t), n, x, y, z, true);
    else
        muldiv_f(vcomp(t), n, x, y, z, true);
}

void hispi_vref_dot(hisp_type t, int64_t n, const void *x, const void *y, void *r)
{
    if (dbl(t))
        dot_d(vcomp(t), n, x, y, r);
    else
        dot_f(vcomp(t), n, x, y, r);
}

void hispi_vref_nrm2(hisp_type t, int64_t n, const void *x, void *r)
{
    if (dbl(t))
        nrm2_d(vcomp(t), n, x, r);
    else
        nrm2_f(vcomp(t), n, x, r);
}

void hispi_vref_axpby_dot(hisp_type t, int64_t n, const void *a, const void *x, const void *b,
                          void *y, const void *w, void *r)
{
    if (dbl(t))
        axpby_dot_d(vcomp(t), n, a, x, b, y, w, r);
    else
        axpby_dot_f(vcomp(t), n, a, x, b, y, w, r);
}

void hispi_vref_dot2(hisp_type t, int64_t n, const void *x, const void *y, const void *w, void *r0,
                     void *r1)
{
    if (dbl(t))
        dot2_d(vcomp(t), n, x, y, w, r0, r1);
    else
        dot2_f(vcomp(t), n, x, y, w, r0, r1);
}

void hispi_vref_div_dot(hisp_type t, int64_t n, const void *x, const void *y, void *z, void *r)
{
    if (dbl(t))
        div_dot_d(vcomp(t), n, x, y, z, r);
    else
        div_dot_f(vcomp(t), n, x, y, z, r);
}
