/* Vector algebra (core/vector/vector_dev.c), one source for OpenCL C (after
 * common.cl) and CUDA (NVRTC). Built once per entry type with defines:
 *   IS_DOUBLE 0|1    scalar components float | double
 *   KIND 0|1|2       real, complex, quaternion (w x y z, Hamilton product)
 *   VC               components of an entry (1, 2, 4)
 *   ACC_DOUBLE 0|1   reductions accumulate in double (wherever the device has it)
 *   CHUNK 0|1        1: work-item g streams the g-th contiguous chunk (CPUs, local
 *                    size 1: PoCL runs a plain loop); 0: grid-stride loops (GPUs)
 *   LS               work-group size of the reductions (power of two; 1 with CHUNK)
 *   MT               columns per group of vec_mdot (vector_dev.c's mdot_tile)
 * Element formulas and their order are core/vector/vector_ref_t.h's. A scalar comes
 * as (host value, numerator buffer + index, denominator buffer + index, mode:
 * 1 numerator from the buffer, 2 times denominator^-1, 4 negated), so a
 * Krylov loop's ratios are read here and never travel to the host.
 * Reductions: each group writes its partial sums (ncomp per result) to
 * part[(group * nres + r) * ncomp + c]; vec_reduce sums them in a fixed order
 * (deterministic for a given device and length). */

/* cs_t, i64, GLOBAL, LOCAL_DECL, LID and BARRIER come from the prelude
 * (common.cl) */
#if defined(__CUDACC__)
#define KERNEL extern "C" __global__ void __launch_bounds__(LS)
#define FN static __device__ __forceinline__
#define LOCALP
#define GROUP ((i64)blockIdx.x)
#define NGROUPS ((i64)gridDim.x)
#else
#if ACC_DOUBLE && !IS_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#if IS_DOUBLE
typedef double2 cs2_t;
typedef double4 cs4_t;
#else
typedef float2 cs2_t;
typedef float4 cs4_t;
#endif
#define KERNEL __kernel void
#define FN static inline
#define LOCALP __local
#define GROUP ((i64)get_group_id(0))
#define NGROUPS ((i64)get_num_groups(0))
#endif

#if ACC_DOUBLE
typedef double acc_t;
#else
typedef cs_t acc_t;
#endif

typedef struct {
    cs_t c0, c1, c2, c3;
} ent;
typedef struct {
    acc_t c0, c1, c2, c3;
} aent;

/* ---- loads and stores of whole entries (64/128-bit where natural) ------- */

FN ent mk(cs_t a, cs_t b, cs_t c, cs_t d)
{
    ent e;
    e.c0 = a, e.c1 = b, e.c2 = c, e.c3 = d;
    return e;
}

FN ent ld(GLOBAL const cs_t *p, i64 i)
{
#if VC == 1
    return mk(p[i], 0, 0, 0);
#elif defined(__CUDACC__)
#if VC == 2 && IS_DOUBLE
    const double2 u = reinterpret_cast<const double2 *>(p)[i];
    return mk(u.x, u.y, 0, 0);
#elif VC == 2
    const float2 u = reinterpret_cast<const float2 *>(p)[i];
    return mk(u.x, u.y, 0, 0);
#elif IS_DOUBLE
    const double2 u = reinterpret_cast<const double2 *>(p)[2 * i];
    const double2 v = reinterpret_cast<const double2 *>(p)[2 * i + 1];
    return mk(u.x, u.y, v.x, v.y);
#else
    const float4 u = reinterpret_cast<const float4 *>(p)[i];
    return mk(u.x, u.y, u.z, u.w);
#endif
#elif VC == 2
    const cs2_t u = vload2((size_t)i, p);
    return mk(u.x, u.y, 0, 0);
#else
    const cs4_t u = vload4((size_t)i, p);
    return mk(u.x, u.y, u.z, u.w);
#endif
}

FN void st(GLOBAL cs_t *p, i64 i, ent e)
{
#if VC == 1
    p[i] = e.c0;
#elif defined(__CUDACC__)
#if VC == 2 && IS_DOUBLE
    double2 u;
    u.x = e.c0, u.y = e.c1;
    reinterpret_cast<double2 *>(p)[i] = u;
#elif VC == 2
    float2 u;
    u.x = e.c0, u.y = e.c1;
    reinterpret_cast<float2 *>(p)[i] = u;
#elif IS_DOUBLE
    double2 u, v;
    u.x = e.c0, u.y = e.c1, v.x = e.c2, v.y = e.c3;
    reinterpret_cast<double2 *>(p)[2 * i] = u;
    reinterpret_cast<double2 *>(p)[2 * i + 1] = v;
#else
    float4 u;
    u.x = e.c0, u.y = e.c1, u.z = e.c2, u.w = e.c3;
    reinterpret_cast<float4 *>(p)[i] = u;
#endif
#elif VC == 2
    cs2_t u;
    u.x = e.c0, u.y = e.c1;
    vstore2(u, (size_t)i, p);
#else
    cs4_t u;
    u.x = e.c0, u.y = e.c1, u.z = e.c2, u.w = e.c3;
    vstore4(u, (size_t)i, p);
#endif
}

/* ---- entry arithmetic ---------------------------------------------------- */

/* r = a*b: the complex / Hamilton product (core/vector/vector_ref_t.h's order) */
#define MUL_BODY(r, a, b)                                                                          \
    do {                                                                                           \
        if (KIND == 0) {                                                                           \
            r.c0 = a.c0 * b.c0;                                                                    \
        } else if (KIND == 1) {                                                                    \
            r.c0 = a.c0 * b.c0 - a.c1 * b.c1;                                                      \
            r.c1 = a.c0 * b.c1 + a.c1 * b.c0;                                                      \
        } else {                                                                                   \
            r.c0 = a.c0 * b.c0 - a.c1 * b.c1 - a.c2 * b.c2 - a.c3 * b.c3;                          \
            r.c1 = a.c0 * b.c1 + a.c1 * b.c0 + a.c2 * b.c3 - a.c3 * b.c2;                          \
            r.c2 = a.c0 * b.c2 - a.c1 * b.c3 + a.c2 * b.c0 + a.c3 * b.c1;                          \
            r.c3 = a.c0 * b.c3 + a.c1 * b.c2 - a.c2 * b.c1 + a.c3 * b.c0;                          \
        }                                                                                          \
    } while (0)

FN ent emul(ent a, ent b)
{
    ent r = mk(0, 0, 0, 0);
    MUL_BODY(r, a, b);
    return r;
}

FN ent eadd(ent a, ent b)
{
    return mk(a.c0 + b.c0, a.c1 + b.c1, a.c2 + b.c2, a.c3 + b.c3);
}

#if KIND != 0
FN ent econj(ent a)
{
    return mk(a.c0, -a.c1, -a.c2, -a.c3);
}
#endif

FN int ezero(ent a)
{
#if VC == 1
    return a.c0 == 0;
#elif VC == 2
    return a.c0 == 0 && a.c1 == 0;
#else
    return a.c0 == 0 && a.c1 == 0 && a.c2 == 0 && a.c3 == 0;
#endif
}

/* b^-1 * a (right = 0) or a * b^-1 (right = 1): a / b for real entries,
 * else conj(b)*a / |b|^2 or a*conj(b) / |b|^2 */
FN ent edivide(ent a, ent b, int right)
{
#if KIND == 0
    (void)right;
    return mk(a.c0 / b.c0, 0, 0, 0);
#else
    const ent p = right ? emul(a, econj(b)) : emul(econj(b), a);
    cs_t nb = b.c0 * b.c0;
    nb += b.c1 * b.c1;
#if KIND == 2
    nb += b.c2 * b.c2;
    nb += b.c3 * b.c3;
#endif
    return mk(p.c0 / nb, p.c1 / nb, p.c2 / nb, p.c3 / nb);
#endif
}

FN aent azero(void)
{
    aent r;
    r.c0 = r.c1 = r.c2 = r.c3 = 0;
    return r;
}

/* s + conj(x)*y in the accumulator type */
FN aent adot(aent s, ent xe, ent ye)
{
    aent a, b, r = azero();
    a.c0 = (acc_t)xe.c0, a.c1 = -(acc_t)xe.c1, a.c2 = -(acc_t)xe.c2, a.c3 = -(acc_t)xe.c3;
    b.c0 = (acc_t)ye.c0, b.c1 = (acc_t)ye.c1, b.c2 = (acc_t)ye.c2, b.c3 = (acc_t)ye.c3;
    MUL_BODY(r, a, b);
    s.c0 += r.c0, s.c1 += r.c1, s.c2 += r.c2, s.c3 += r.c3;
    return s;
}

#if CHUNK
FN aent aadd(aent a, aent b)
{
    a.c0 += b.c0, a.c1 += b.c1, a.c2 += b.c2, a.c3 += b.c3;
    return a;
}
#endif

FN acc_t acomp(aent s, int c)
{
    return c == 0 ? s.c0 : c == 1 ? s.c1 : c == 2 ? s.c2 : s.c3;
}

/* ---- scalars --------------------------------------------------------------- */

#if VC == 1
#define SHOST(s) const cs_t s##h0
#define SMK(s) mk(s##h0, 0, 0, 0)
#elif VC == 2
#define SHOST(s) const cs_t s##h0, const cs_t s##h1
#define SMK(s) mk(s##h0, s##h1, 0, 0)
#else
#define SHOST(s) const cs_t s##h0, const cs_t s##h1, const cs_t s##h2, const cs_t s##h3
#define SMK(s) mk(s##h0, s##h1, s##h2, s##h3)
#endif
#define SARGS(s)                                                                                   \
    SHOST(s), GLOBAL const cs_t *s##n, const i64 s##i, GLOBAL const cs_t *s##d, const i64 s##j,    \
        const int s##m
#define SVAL(s) sval(SMK(s), s##n, s##i, s##d, s##j, s##m)

FN ent sval(ent h, GLOBAL const cs_t *num, i64 i, GLOBAL const cs_t *den, i64 j, int m)
{
    ent v = (m & 1) ? ld(num, i) : h;
    if (m & 2) {
        const ent dv = ld(den, j);
        v = ((m & 8) && ezero(dv)) ? mk(0, 0, 0, 0) : edivide(v, dv, 1);
    }
    if (m & 4) v = mk(-v.c0, -v.c1, -v.c2, -v.c3);
    return v;
}

/* ---- work distribution ----------------------------------------------------- */

/* This work-item's entries: [first, end) with step (a contiguous chunk of
 * a multiple of 16 entries per work-item with CHUNK, else grid-stride). */
#if CHUNK
/* [b, e): chunk g of ng over n entries */
#define CHUNK_RANGE(n, g, ng, b, e)                                                                \
    const i64 b##per_ = (((n) + (ng)-1) / (ng) + 15) & ~(i64)15;                                   \
    const i64 b = (g) * b##per_, e = b + b##per_ < (n) ? b + b##per_ : (n)
#define FOR_ENTRIES(i, n)                                                                          \
    CHUNK_RANGE(n, GROUP, NGROUPS, b_, e_);                                                        \
    for (i64 i = b_; i < e_; i++)
/* s += BODY over the chunk, with four interleaved accumulators (a plain
 * loop's sum is one chain of dependent adds: latency-bound on a CPU core) */
#define REDUCE_LOOP(n, BODY, s)                                                                    \
    do {                                                                                           \
        aent s1_ = azero(), s2_ = azero(), s3_ = azero();                                          \
        CHUNK_RANGE(n, GROUP, NGROUPS, b_, e_);                                                    \
        i64 i_ = b_;                                                                               \
        for (; i_ + 3 < e_; i_ += 4) {                                                             \
            BODY(i_, s);                                                                           \
            BODY(i_ + 1, s1_);                                                                     \
            BODY(i_ + 2, s2_);                                                                     \
            BODY(i_ + 3, s3_);                                                                     \
        }                                                                                          \
        for (; i_ < e_; i_++)                                                                      \
            BODY(i_, s);                                                                           \
        s = aadd(aadd(s, s1_), aadd(s2_, s3_));                                                    \
    } while (0)
#else
#define FOR_ENTRIES(i, n) for (i64 i = GROUP * LS + LID; i < (n); i += NGROUPS * LS)
#define REDUCE_LOOP(n, BODY, s)                                                                    \
    do {                                                                                           \
        for (i64 i_ = GROUP * LS + LID; i_ < (n); i_ += NGROUPS * LS)                              \
            BODY(i_, s);                                                                           \
    } while (0)
#endif

/* The group's sum of v's first ncomp components into part[off + c]. */
#if LS == 1
#define GROUP_SUM(v, ncomp, part, off)                                                             \
    for (int c_ = 0; c_ < (ncomp); c_++)                                                           \
    (part)[(off) + c_] = acomp((v), c_)
#define RED_DECL()
#else
FN void group_sum(LOCALP acc_t *red, aent v, int ncomp, GLOBAL acc_t *part, i64 off)
{
    for (int c = 0; c < ncomp; c++) {
        red[LID] = acomp(v, c);
        BARRIER();
        for (int s = LS / 2; s > 0; s >>= 1) {
            if (LID < s) red[LID] += red[LID + s];
            BARRIER();
        }
        if (LID == 0) part[off + c] = red[0];
        BARRIER();
    }
}
#define GROUP_SUM(v, ncomp, part, off) group_sum(red, (v), (ncomp), (part), (off))
#define RED_DECL() LOCAL_DECL(acc_t, red[LS])
#endif

/* ---- element-wise ---------------------------------------------------------- */

/* Views (hispi_vector_view): vector operand i starts o<i> entries into
 * its buffer (a slice of a distributed vector: its owned rows; each operand
 * its own offset). Scalar, partial and result buffers are never views. */
#define OFFS const i64 o0, const i64 o1, const i64 o2, const i64 o3
#define VIEW1(a) a += o0 * VC
#define VIEW2(a, b) VIEW1(a), b += o1 * VC
#define VIEW3(a, b, c) VIEW2(a, b), c += o2 * VC
#define VIEW4(a, b, c, d) VIEW3(a, b, c), d += o3 * VC

#if ONE(vec_fill)
KERNEL vec_fill(const i64 n, OFFS, GLOBAL cs_t *y, SARGS(a))
{
    VIEW1(y);
    const ent va = SVAL(a);
    FOR_ENTRIES(i, n) st(y, i, va);
}
#endif

#if ONE(vec_copy)
KERNEL vec_copy(const i64 n, OFFS, GLOBAL const cs_t *x, GLOBAL cs_t *y)
{
    VIEW2(x, y);
    FOR_ENTRIES(i, n) st(y, i, ld(x, i));
}
#endif

#if ONE(vec_scale)
KERNEL vec_scale(const i64 n, OFFS, GLOBAL cs_t *y, SARGS(a))
{
    VIEW1(y);
    const ent va = SVAL(a);
    FOR_ENTRIES(i, n) st(y, i, emul(ld(y, i), va));
}
#endif

/* y = x*a + y*b (b zero: y not read) */
#if ONE(vec_axpby)
KERNEL vec_axpby(const i64 n, OFFS, GLOBAL const cs_t *x, GLOBAL cs_t *y, SARGS(a),
                 SARGS(b))
{
    VIEW2(x, y);
    const ent va = SVAL(a), vb = SVAL(b);
    if (ezero(vb)) {
        FOR_ENTRIES(i, n) st(y, i, emul(ld(x, i), va));
    } else {
        FOR_ENTRIES(i, n) st(y, i, eadd(emul(ld(x, i), va), emul(ld(y, i), vb)));
    }
}
#endif

/* z = x*a + y*b + z*c (c zero: z not read) */
#if ONE(vec_axpbypcz)
KERNEL vec_axpbypcz(const i64 n, OFFS, GLOBAL const cs_t *x, GLOBAL const cs_t *y,
                    GLOBAL cs_t *z, SARGS(a), SARGS(b), SARGS(c))
{
    VIEW3(x, y, z);
    const ent va = SVAL(a), vb = SVAL(b), vc = SVAL(c);
    if (ezero(vc)) {
        FOR_ENTRIES(i, n) st(z, i, eadd(emul(ld(x, i), va), emul(ld(y, i), vb)));
    } else {
        FOR_ENTRIES(i, n)
        st(z, i, eadd(eadd(emul(ld(x, i), va), emul(ld(y, i), vb)), emul(ld(z, i), vc)));
    }
}
#endif

/* y1 = x1*a + y1*b and y2 = x2*c + y2*d in one pass (x1 may be y2: every
 * entry is loaded before either is stored) */
#if ONE(vec_axpby2)
KERNEL vec_axpby2(const i64 n, OFFS, GLOBAL const cs_t *x1, GLOBAL cs_t *y1,
                  GLOBAL const cs_t *x2, GLOBAL cs_t *y2, SARGS(a), SARGS(b), SARGS(c), SARGS(d))
{
    VIEW4(x1, y1, x2, y2);
    const ent va = SVAL(a), vb = SVAL(b), vc = SVAL(c), vd = SVAL(d);
    FOR_ENTRIES(i, n)
    {
        const ent e1 = ld(x1, i), f1 = ld(y1, i), e2 = ld(x2, i), f2 = ld(y2, i);
        st(y1, i, eadd(emul(e1, va), emul(f1, vb)));
        st(y2, i, eadd(emul(e2, vc), emul(f2, vd)));
    }
}
#endif

#if ONE(vec_mul)
KERNEL vec_mul(const i64 n, OFFS, GLOBAL const cs_t *x, GLOBAL const cs_t *y,
               GLOBAL cs_t *z)
{
    VIEW3(x, y, z);
    FOR_ENTRIES(i, n) st(z, i, emul(ld(x, i), ld(y, i)));
}
#endif

/* z = y^-1 * x */
#if ONE(vec_div)
KERNEL vec_div(const i64 n, OFFS, GLOBAL const cs_t *x, GLOBAL const cs_t *y,
               GLOBAL cs_t *z)
{
    VIEW3(x, y, z);
    FOR_ENTRIES(i, n) st(z, i, edivide(ld(x, i), ld(y, i), 0));
}
#endif

/* out[oi] = the scalar (a copy for kernels that write the scalar's vector) */
#if ONE(vec_scalar)
KERNEL vec_scalar(SARGS(a), GLOBAL cs_t *out, const i64 oi)
{
    if (GROUP == 0 && LID == 0) st(out, oi, SVAL(a));
}
#endif

/* y[oi] = a*b: the scalar recurrences of the solvers, kept on the device */
#if ONE(vec_smul)
KERNEL vec_smul(const i64 n, GLOBAL cs_t *y, const i64 oi, SARGS(a), SARGS(b))
{
    if (n > 0 && GROUP == 0 && LID == 0) {
        const ent va = SVAL(a), vb = SVAL(b);
        st(y, oi, emul(va, vb));
    }
}
#endif

/* ---- reductions: stage 1 --------------------------------------------------- */

#if ONE(vec_dot)
KERNEL vec_dot(const i64 n, OFFS, GLOBAL const cs_t *x, GLOBAL const cs_t *y,
               GLOBAL acc_t *part)
{
    RED_DECL();
    VIEW2(x, y);
    aent s = azero();
#define DOT_BODY(i, acc) acc = adot(acc, ld(x, i), ld(y, i))
    REDUCE_LOOP(n, DOT_BODY, s);
    GROUP_SUM(s, VC, part, GROUP * VC);
}
#endif

#define NRM2_BODY(i, acc)                                                                          \
    do {                                                                                           \
        const ent e_ = ld(x, i);                                                                   \
        acc.c0 += (acc_t)e_.c0 * (acc_t)e_.c0;                                                     \
        if (VC > 1) acc.c0 += (acc_t)e_.c1 * (acc_t)e_.c1;                                         \
        if (VC > 2) acc.c0 += (acc_t)e_.c2 * (acc_t)e_.c2;                                         \
        if (VC > 2) acc.c0 += (acc_t)e_.c3 * (acc_t)e_.c3;                                         \
    } while (0)

#if ONE(vec_nrm2)
KERNEL vec_nrm2(const i64 n, OFFS, GLOBAL const cs_t *x, GLOBAL acc_t *part)
{
    RED_DECL();
    VIEW1(x);
    aent s = azero();
    REDUCE_LOOP(n, NRM2_BODY, s);
    GROUP_SUM(s, 1, part, GROUP);
}
#endif

/* y = x*a + y*b (b zero: y not read), then s += conj(y_i) * w_i (w_i read
 * after y_i is stored: w may be y; hasw = 0: w = y) */
#if ONE(vec_axpby_dot)
KERNEL vec_axpby_dot(const i64 n, OFFS, GLOBAL const cs_t *x, GLOBAL cs_t *y,
                     GLOBAL const cs_t *w, const int hasw, SARGS(a), SARGS(b), GLOBAL acc_t *part)
{
    RED_DECL();
    VIEW3(x, y, w);
    const ent va = SVAL(a), vb = SVAL(b);
    const int yread = !ezero(vb);
    aent s = azero();
/* the four (y read, w given) cases as loops of their own: no per-entry
 * branch, so CPU compilers see plain loops */
#define AXPBY_DOT_BODY(i, acc, YREAD, HASW)                                                        \
    do {                                                                                           \
        ent e_ = emul(ld(x, i), va);                                                               \
        if (YREAD) e_ = eadd(e_, emul(ld(y, i), vb));                                              \
        st(y, i, e_);                                                                              \
        acc = adot(acc, e_, (HASW) ? ld(w, i) : e_);                                               \
    } while (0)
#define AD_B11(i, acc) AXPBY_DOT_BODY(i, acc, 1, 1)
#define AD_B10(i, acc) AXPBY_DOT_BODY(i, acc, 1, 0)
#define AD_B01(i, acc) AXPBY_DOT_BODY(i, acc, 0, 1)
#define AD_B00(i, acc) AXPBY_DOT_BODY(i, acc, 0, 0)
    if (yread && hasw)
        REDUCE_LOOP(n, AD_B11, s);
    else if (yread)
        REDUCE_LOOP(n, AD_B10, s);
    else if (hasw)
        REDUCE_LOOP(n, AD_B01, s);
    else
        REDUCE_LOOP(n, AD_B00, s);
    GROUP_SUM(s, VC, part, GROUP * VC);
}
#endif

#if ONE(vec_dot2)
KERNEL vec_dot2(const i64 n, OFFS, GLOBAL const cs_t *x, GLOBAL const cs_t *y,
                GLOBAL const cs_t *w, GLOBAL acc_t *part)
{
    RED_DECL();
    VIEW3(x, y, w);
    aent s0 = azero(), s1 = azero();
    FOR_ENTRIES(i, n)
    {
        const ent xe = ld(x, i);
        s0 = adot(s0, xe, ld(y, i));
        s1 = adot(s1, xe, ld(w, i));
    }
    GROUP_SUM(s0, VC, part, GROUP * 2 * VC);
    GROUP_SUM(s1, VC, part, GROUP * 2 * VC + VC);
}
#endif

/* z = y^-1 * x, s += conj(x_i) * z_i */
#if ONE(vec_div_dot)
KERNEL vec_div_dot(const i64 n, OFFS, GLOBAL const cs_t *x, GLOBAL const cs_t *y,
                   GLOBAL cs_t *z, GLOBAL acc_t *part)
{
    RED_DECL();
    VIEW3(x, y, z);
    aent s = azero();
#define DIV_DOT_BODY(i, acc)                                                                       \
    do {                                                                                           \
        const ent xe_ = ld(x, i), q_ = edivide(xe_, ld(y, i), 0);                                  \
        st(z, i, q_);                                                                              \
        acc = adot(acc, xe_, q_);                                                                  \
    } while (0)
    REDUCE_LOOP(n, DIV_DOT_BODY, s);
    GROUP_SUM(s, VC, part, GROUP * VC);
}
#endif

/* Jacobi-CG's residual update: y = x*a + y*b, z = d^-1 * y, s0 += conj(y_i)
 * y_i, s1 += conj(y_i) z_i in one pass */
#if ONE(vec_axpby_div_dot2)
KERNEL vec_axpby_div_dot2(const i64 n, OFFS, GLOBAL const cs_t *x, GLOBAL cs_t *y,
                          GLOBAL const cs_t *d, GLOBAL cs_t *z, SARGS(a), SARGS(b),
                          GLOBAL acc_t *part)
{
    RED_DECL();
    VIEW4(x, y, d, z);
    const ent va = SVAL(a), vb = SVAL(b);
    aent s0 = azero(), s1 = azero();
    FOR_ENTRIES(i, n)
    {
        const ent e = eadd(emul(ld(x, i), va), emul(ld(y, i), vb)), q = edivide(e, ld(d, i), 0);
        st(y, i, e);
        st(z, i, q);
        s0 = adot(s0, e, e);
        s1 = adot(s1, e, q);
    }
    GROUP_SUM(s0, VC, part, GROUP * 2 * VC);
    GROUP_SUM(s1, VC, part, GROUP * 2 * VC + VC);
}
#endif

/* BiCGSTAB's x and r in one pass: X += P*p + S*q, then y = x*a + y*b,
 * s0 += conj(y_i) y_i, s1 += conj(w_i) y_i (r^H r and r0^H r); S may be y:
 * every entry is loaded before y's is stored */
#if ONE(vec_axpby_dot2_acc)
KERNEL vec_axpby_dot2_acc(const i64 n, OFFS, const i64 o4, const i64 o5, GLOBAL const cs_t *x,
                          GLOBAL cs_t *y, GLOBAL const cs_t *w, GLOBAL const cs_t *P,
                          GLOBAL const cs_t *S, GLOBAL cs_t *X, SARGS(a), SARGS(b), SARGS(p),
                          SARGS(q), GLOBAL acc_t *part)
{
    RED_DECL();
    VIEW4(x, y, w, P), S += o4 * VC, X += o5 * VC;
    const ent va = SVAL(a), vb = SVAL(b), vp = SVAL(p), vq = SVAL(q);
    aent s0 = azero(), s1 = azero();
    FOR_ENTRIES(i, n)
    {
        const ent fs = ld(S, i);
        st(X, i, eadd(ld(X, i), eadd(emul(ld(P, i), vp), emul(fs, vq))));
        const ent e = eadd(emul(ld(x, i), va), emul(ld(y, i), vb));
        st(y, i, e);
        s0 = adot(s0, e, e);
        s1 = adot(s1, ld(w, i), e);
    }
    GROUP_SUM(s0, VC, part, GROUP * 2 * VC);
    GROUP_SUM(s1, VC, part, GROUP * 2 * VC + VC);
}
#endif

/* ---- a basis in one buffer (GMRES): column c is Q + (qo + c*qs) entries ---- */

/* A vec_mdot accumulator: the VC components only (an aent's unused ones
 * would stay live: x + 0.0 is not x in IEEE arithmetic). */
typedef struct {
    acc_t v[VC];
} macc;

FN macc mzero(void)
{
    macc m;
    for (int c = 0; c < VC; c++)
        m.v[c] = 0;
    return m;
}

/* m + conj(x)*y */
FN macc madot(macc m, ent x, ent y)
{
    const aent p = adot(azero(), x, y);
    m.v[0] += p.c0;
#if VC > 1
    m.v[1] += p.c1;
#endif
#if VC > 2
    m.v[2] += p.c2;
    m.v[3] += p.c3;
#endif
    return m;
}

FN aent mwide(macc m)
{
    aent a = azero();
    a.c0 = m.v[0];
#if VC > 1
    a.c1 = m.v[1];
#endif
#if VC > 2
    a.c2 = m.v[2];
    a.c3 = m.v[3];
#endif
    return a;
}

/* The group's rows on GPUs: rg of nrg row groups (vec_mdot's groups are
 * tiles x row groups), grid-stride as FOR_ENTRIES. */
#define FOR_ROWS(i, n, rg, nrg) for (i64 i = (rg) * LS + LID; i < (n); i += (nrg) * LS)

/* s[t][k] = conj(Q_c) . R_k over the group's rows, c = tile * MT + t < q,
 * k < nr (1 or 2), into part[((rg * ntiles + tile) * MT + t) * 2 + k) * VC
 * + comp]; vec_reduce_n sums them over the row groups. R may be columns of
 * Q (read only). GPUs: each work-item holds the tile's products of its
 * rows in registers. CPUs: the chunk in blocks of MB rows, column after
 * column (R's block stays in the core's cache; plain loops the compiler
 * vectorises), four accumulators a column against the adds' latency. */
#define MB 1024
#if ONE(vec_mdot)
KERNEL vec_mdot(const i64 n, GLOBAL const cs_t *Q, const i64 qo, const i64 qs, const int q,
                GLOBAL const cs_t *r0, const i64 o0, GLOBAL const cs_t *r1, const i64 o1,
                const int nr, GLOBAL acc_t *part)
{
    RED_DECL();
    const int ntiles = (q + MT - 1) / MT;
    const i64 tile = GROUP % ntiles, rg = GROUP / ntiles, nrg = NGROUPS / ntiles;
    const int c0 = (int)tile * MT;
    r0 += o0 * VC;
    r1 += o1 * VC;
    macc s[MT][2];
    for (int t = 0; t < MT; t++)
        s[t][0] = mzero(), s[t][1] = mzero();
#if CHUNK
    CHUNK_RANGE(n, rg, nrg, rb, re);
    for (i64 b = rb; b < re; b += MB) {
        const i64 e = b + MB < re ? b + MB : re;
        for (int t = 0; t < MT && c0 + t < q; t++) {
            GLOBAL const cs_t *qc = Q + (qo + (i64)(c0 + t) * qs) * VC;
            for (int k = 0; k < nr; k++) {
                GLOBAL const cs_t *rk = k ? r1 : r0;
                aent a0 = azero(), a1 = azero(), a2 = azero(), a3 = azero();
                i64 i = b;
                for (; i + 3 < e; i += 4) {
                    a0 = adot(a0, ld(qc, i), ld(rk, i));
                    a1 = adot(a1, ld(qc, i + 1), ld(rk, i + 1));
                    a2 = adot(a2, ld(qc, i + 2), ld(rk, i + 2));
                    a3 = adot(a3, ld(qc, i + 3), ld(rk, i + 3));
                }
                for (; i < e; i++)
                    a0 = adot(a0, ld(qc, i), ld(rk, i));
                const aent a = aadd(aadd(a0, a1), aadd(a2, a3));
                s[t][k].v[0] += a.c0;
#if VC > 1
                s[t][k].v[1] += a.c1;
#endif
#if VC > 2
                s[t][k].v[2] += a.c2;
                s[t][k].v[3] += a.c3;
#endif
            }
        }
    }
#else
    GLOBAL const cs_t *qb = Q + (qo + (i64)c0 * qs) * VC;
    const i64 qsv = qs * VC;
    if (c0 + MT <= q && nr == 2) { /* a whole tile: every load issued before the products */
        FOR_ROWS(i, n, rg, nrg)
        {
            ent e[MT];
#pragma unroll
            for (int t = 0; t < MT; t++)
                e[t] = ld(qb + t * qsv, i);
            const ent x0 = ld(r0, i), x1 = ld(r1, i);
#pragma unroll
            for (int t = 0; t < MT; t++) {
                s[t][0] = madot(s[t][0], e[t], x0);
                s[t][1] = madot(s[t][1], e[t], x1);
            }
        }
    } else {
        FOR_ROWS(i, n, rg, nrg)
        {
            const ent x0 = ld(r0, i), x1 = nr > 1 ? ld(r1, i) : mk(0, 0, 0, 0);
#pragma unroll
            for (int t = 0; t < MT; t++)
                if (c0 + t < q) {
                    const ent e = ld(qb + t * qsv, i);
                    s[t][0] = madot(s[t][0], e, x0);
                    if (nr > 1) s[t][1] = madot(s[t][1], e, x1);
                }
        }
    }
#endif
    for (int t = 0; t < MT; t++)
        for (int k = 0; k < 2; k++)
            if (k < nr) GROUP_SUM(mwide(s[t][k]), VC, part, ((GROUP * MT + t) * 2 + k) * VC);
}
#endif

/* Result k * q + c (c < q, k < nr) of vec_mdot: the sum over its nrg row
 * groups, to out[oi + k * q + c]; one group per result. */
#if ONE(vec_reduce_n)
KERNEL vec_reduce_n(const i64 nrg, GLOBAL const acc_t *part, const int q, const int nr,
                    GLOBAL cs_t *out, const i64 oi)
{
#if LS > 1
    LOCAL_DECL(acc_t, red[LS]);
#endif
    const int ntiles = (q + MT - 1) / MT;
    const int res = (int)GROUP, k = res / q, c = res % q;
    if (res >= q * nr) return;
    for (int comp = 0; comp < VC; comp++) {
        acc_t v = 0;
        for (i64 g = LID; g < nrg; g += LS)
            v += part[(((g * ntiles + c / MT) * MT + c % MT) * 2 + k) * VC + comp];
#if LS > 1
        red[LID] = v;
        BARRIER();
        for (int h = LS / 2; h > 0; h >>= 1) {
            if (LID < h) red[LID] += red[LID + h];
            BARRIER();
        }
        v = red[0];
        BARRIER();
#endif
        if (LID == 0) out[(oi + res) * VC + comp] = (cs_t)v;
    }
}
#endif

/* y0 = y0*a0 + sum_c Q_c*a[c]; y1 = y1*b1 + y0*b0 + sum_c Q_c*b[c] (y0 as it
 * was), coefficient entries a = coef[0..q) a0 = coef[q], b = coef[q+1..2q]
 * b0 = coef[2q+1] b1 = coef[2q+2]; a zero a0 (b1): y0 (y1) not read; has1 0:
 * no y1. The columns and y0, y1 are disjoint. Each entry's sums in the same
 * order on GPUs (an entry a work-item) and CPUs (blocks of MB entries,
 * column after column: y0 and y1's block stays in the core's cache). */
#if ONE(vec_bupdate)
KERNEL vec_bupdate(const i64 n, GLOBAL const cs_t *Q, const i64 qo, const i64 qs, const int q,
                   GLOBAL cs_t *y0, const i64 o0, GLOBAL cs_t *y1, const i64 o1, const int has1,
                   GLOBAL const cs_t *coef)
{
    y0 += o0 * VC;
    y1 += o1 * VC;
    const ent a0 = ld(coef, q), b0 = ld(coef, 2 * (i64)q + 1), b1 = ld(coef, 2 * (i64)q + 2);
    const int r0 = !ezero(a0), r1 = has1 && !ezero(b1);
#if CHUNK
    CHUNK_RANGE(n, GROUP, NGROUPS, rb, re);
    for (i64 b = rb; b < re; b += MB) {
        const i64 e = b + MB < re ? b + MB : re;
        for (i64 i = b; i < e; i++) {
            const ent e0 = ld(y0, i);
            if (has1) st(y1, i, r1 ? eadd(emul(ld(y1, i), b1), emul(e0, b0)) : emul(e0, b0));
            st(y0, i, r0 ? emul(e0, a0) : mk(0, 0, 0, 0));
        }
        for (int c = 0; c < q; c++) {
            GLOBAL const cs_t *qc = Q + (qo + (i64)c * qs) * VC;
            const ent ca = ld(coef, c), cb = ld(coef, q + 1 + c);
            for (i64 i = b; i < e; i++)
                st(y0, i, eadd(ld(y0, i), emul(ld(qc, i), ca)));
            if (has1)
                for (i64 i = b; i < e; i++)
                    st(y1, i, eadd(ld(y1, i), emul(ld(qc, i), cb)));
        }
    }
#else
    FOR_ENTRIES(i, n)
    {
        const ent e0 = ld(y0, i);
        ent s0 = r0 ? emul(e0, a0) : mk(0, 0, 0, 0), s1 = mk(0, 0, 0, 0);
        if (has1) s1 = r1 ? eadd(emul(ld(y1, i), b1), emul(e0, b0)) : emul(e0, b0);
        for (int c = 0; c < q; c++) {
            const ent e = ld(Q + (qo + (i64)c * qs) * VC, i);
            s0 = eadd(s0, emul(e, ld(coef, c)));
            if (has1) s1 = eadd(s1, emul(e, ld(coef, q + 1 + c)));
        }
        st(y0, i, s0);
        if (has1) st(y1, i, s1);
    }
#endif
}
#endif

/* ---- reductions: stage 2 (one group) --------------------------------------- */

/* Result r (< nres) of ncomp components: the sum over the ngroups partials,
 * square-rooted when root, to out_r[oi_r * ncomp + c]. */
#if ONE(vec_reduce)
KERNEL vec_reduce(const i64 ngroups, GLOBAL const acc_t *part, const int nres, const int ncomp,
                  const int root, GLOBAL cs_t *out0, const i64 oi0, GLOBAL cs_t *out1,
                  const i64 oi1)
{
#if LS > 1
    LOCAL_DECL(acc_t, red[LS]);
#endif
    for (int r = 0; r < nres; r++)
        for (int c = 0; c < ncomp; c++) {
            acc_t s = 0;
            for (i64 g = LID; g < ngroups; g += LS)
                s += part[(g * nres + r) * ncomp + c];
#if LS > 1
            red[LID] = s;
            BARRIER();
            for (int h = LS / 2; h > 0; h >>= 1) {
                if (LID < h) red[LID] += red[LID + h];
                BARRIER();
            }
            s = red[0];
            BARRIER();
#endif
            if (LID == 0) {
                const cs_t v = (cs_t)(root ? sqrt(s) : s);
                if (r == 0)
                    out0[oi0 * ncomp + c] = v;
                else
                    out1[oi1 * ncomp + c] = v;
            }
        }
}
#endif
