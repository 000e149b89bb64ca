/* Vector algebra (hisp.h "vector algebra"): argument checks, then either the
 * plain C loops of core/vector/vector_ref.c on the host copies (backends without
 * run-time kernels: the reference), or the kernels of kernels/vector.cl
 * through the backend's run-time kernel slots (OpenCL, CUDA). Device scalars
 * are read by the kernels; reductions are two-stage (per-group partials into
 * the context's scratch, then one group sums them in a fixed order into the
 * result entry, or into a slot read back when the result goes to the host).
 * A view (hispi_vector_view: a slice of another buffer, e.g. a distributed
 * vector's owned rows) passes its offset to the kernels, one per vector
 * operand (a call's vectors may be views at different offsets).
 *
 * This file: the checks, the host path and the API; vector_dev.c the device
 * path. */
#include "vector_ops.h"

#include <stdio.h>
#include <string.h>

/* ---- scalar and result constructors --------------------------------------- */

hisp_scalar hisp_scalar_host(const void *value)
{
    hisp_scalar s = {0};
    s.host = value;
    return s;
}

hisp_scalar hisp_scalar_entry(hisp_vector v, int64_t i)
{
    hisp_scalar s = {0};
    s.num = v;
    s.inum = i;
    return s;
}

hisp_scalar hisp_scalar_ratio(hisp_vector num, int64_t i, hisp_vector den, int64_t j, int negate)
{
    hisp_scalar s = {0};
    s.num = num;
    s.inum = i;
    s.den = den;
    s.iden = j;
    s.negate = negate != 0;
    return s;
}

hisp_result hisp_result_host(void *value)
{
    hisp_result r = {0};
    r.host = value;
    return r;
}

hisp_result hisp_result_entry(hisp_vector v, int64_t i)
{
    hisp_result r = {0};
    r.vec = v;
    r.index = i;
    return r;
}

static bool supported_type(hisp_type t)
{
    return t == HISP_F32 || t == HISP_F64 || t == HISP_C32 || t == HISP_C64 || t == HISP_Q32 ||
           t == HISP_Q64;
}

static hisp_type real_type(hisp_type t)
{
    return hispi_type_scalar_size(t) == 8 ? HISP_F64 : HISP_F32;
}

/* v[i] entry `i` of a scalar or result (named "KIND NAME's PART" in the
 * messages, made only for them: a call's checks format nothing): its
 * vector must be of the call's context, of type t, and i within it. */
static hisp_status check_entry(const vcall *c, const char *kind, const char *name, const char *part,
                               hisp_vector v, int64_t i, hisp_type t)
{
    if (!v)
        return hispi_fail(c->ctx, HISP_ERR_INVALID_ARGUMENT, "%s: %s %s's %s is NULL", c->op, kind,
                          name, part);
    if (!hispi_vec_ok(v))
        return hispi_fail(c->ctx, HISP_ERR_INVALID_HANDLE, "%s: %s %s's %s is not a live vector",
                          c->op, kind, name, part);
    if (v->ctx != c->ctx)
        return hispi_fail(c->ctx, HISP_ERR_INVALID_ARGUMENT,
                          "%s: %s %s's %s belongs to another context than %s", c->op, kind, name,
                          part, c->vn[0]);
    if (v->type != t)
        return hispi_fail(c->ctx, HISP_ERR_INVALID_ARGUMENT, "%s: %s %s's %s is %s, %s needs %s",
                          c->op, kind, name, part, hisp_type_name(v->type), c->op,
                          hisp_type_name(t));
    if (i < 0 || i >= v->n)
        return hispi_fail(c->ctx, HISP_ERR_INVALID_ARGUMENT,
                          "%s: %s %s's %s index %lld is outside its %lld entries", c->op, kind,
                          name, part, (long long)i, (long long)v->n);
    if (v->off)
        return hispi_fail(c->ctx, HISP_ERR_INVALID_ARGUMENT, "%s: %s %s's %s is a view", c->op,
                          kind, name, part);
    return HISP_SUCCESS;
}

static hisp_status check(vcall *c)
{
    c->ctx = NULL;
    for (int i = 0; i < c->nv && !c->ctx; i++)
        if (hispi_vec_ok(c->v[i])) c->ctx = c->v[i]->ctx;
    for (int i = 0; i < c->nv; i++) {
        if (!c->v[i])
            return c->ctx ? hispi_fail(c->ctx, HISP_ERR_INVALID_HANDLE, "%s: vector %s is NULL",
                                       c->op, c->vn[i])
                          : HISP_ERR_INVALID_HANDLE;
        if (!hispi_vec_ok(c->v[i]))
            return c->ctx ? hispi_fail(c->ctx, HISP_ERR_INVALID_HANDLE,
                                       "%s: %s is not a live vector", c->op, c->vn[i])
                          : HISP_ERR_INVALID_HANDLE;
    }
    hisp_vector v0 = c->v[0];
    c->t = v0->type;
    c->n = v0->n;
    for (int i = 1; i < c->nv; i++) {
        hisp_vector v = c->v[i];
        if (v->ctx != c->ctx)
            return hispi_fail(c->ctx, HISP_ERR_INVALID_ARGUMENT,
                              "%s: %s and %s belong to different contexts", c->op, c->vn[0],
                              c->vn[i]);
        if (v->type != c->t)
            return hispi_fail(c->ctx, HISP_ERR_INVALID_ARGUMENT, "%s: %s is %s, %s is %s", c->op,
                              c->vn[0], hisp_type_name(c->t), c->vn[i], hisp_type_name(v->type));
        if (v->n != c->n)
            return hispi_fail(c->ctx, HISP_ERR_INVALID_ARGUMENT,
                              "%s: %s has %lld entries, %s has %lld", c->op, c->vn[0],
                              (long long)c->n, c->vn[i], (long long)v->n);
    }
    if (!supported_type(c->t))
        return hispi_fail(c->ctx, HISP_ERR_UNSUPPORTED,
                          "%s: no vector algebra on %s vectors (the vectors of block matrices "
                          "are f32/f64 vectors of 3 entries per block: "
                          "hisp_compound_vector_type)",
                          c->op, hisp_type_name(c->t));
    for (int i = 0; i < c->ns; i++) {
        const hisp_scalar *s = c->s[i];
        if (s->host) {
            if (s->num || s->den)
                return hispi_fail(c->ctx, HISP_ERR_INVALID_ARGUMENT,
                                  "%s: scalar %s has both a host value and a vector", c->op,
                                  c->sn[i]);
            continue;
        }
        if (!s->num)
            return hispi_fail(c->ctx, HISP_ERR_INVALID_ARGUMENT,
                              "%s: scalar %s is empty (NULL host value, no vector)", c->op,
                              c->sn[i]);
        HISPI_TRY(check_entry(c, "scalar", c->sn[i], "vector", s->num, s->inum, c->t));
        if (s->den)
            HISPI_TRY(
                check_entry(c, "scalar", c->sn[i], "denominator vector", s->den, s->iden, c->t));
    }
    hisp_type rt = c->real_result ? real_type(c->t) : c->t;
    for (int i = 0; i < c->nr; i++) {
        const hisp_result *r = c->r[i];
        if (r->host) {
            if (r->vec)
                return hispi_fail(c->ctx, HISP_ERR_INVALID_ARGUMENT,
                                  "%s: result %s has both a host pointer and a vector", c->op,
                                  c->rn[i]);
            continue;
        }
        if (!r->vec)
            return hispi_fail(c->ctx, HISP_ERR_INVALID_ARGUMENT,
                              "%s: result %s has no destination (NULL host pointer, no vector)",
                              c->op, c->rn[i]);
        HISPI_TRY(check_entry(c, "result", c->rn[i], "vector", r->vec, r->index, rt));
    }
    return HISP_SUCCESS;
}

static bool host_zero(hisp_type t, const hisp_scalar *s)
{
    /* a device scalar is known only when the kernel runs; a type the call
     * refuses is not read */
    if (!s->host || !supported_type(t)) return false;
    int vc = hisp_type_components(t);
    for (int i = 0; i < vc; i++) {
        double v = hispi_type_scalar_size(t) == 8 ? ((const double *)s->host)[i]
                                                  : ((const float *)s->host)[i];
        if (v != 0) return false;
    }
    return true;
}

/* ---- host path: the reference loops on the host copies ------------------------ */

static hisp_status host_scalar(const vcall *c, const hisp_scalar *s, unsigned char out[32])
{
    if (s->host) {
        hispi_vref_scalar(c->t, s->host, NULL, s->negate, out);
        return HISP_SUCCESS;
    }
    size_t es = hisp_type_size(c->t);
    void *nh = NULL, *dh = NULL;
    HISPI_TRY(hispi_vector_host(s->num, &nh));
    if (s->den) HISPI_TRY(hispi_vector_host(s->den, &dh));
    hispi_vref_scalar(c->t, (char *)nh + (size_t)s->inum * es,
                      dh ? (char *)dh + (size_t)s->iden * es : NULL, s->negate, out);
    return HISP_SUCCESS;
}

static hisp_status run_host(const vcall *c)
{
    void *p[6] = {0};
    for (int i = 0; i < c->nv; i++) {
        if (c->read >> i & 1)
            HISPI_TRY(hispi_vector_host(c->v[i], &p[i]));
        else /* written whole: its old contents do not matter */
            HISPI_TRY(hispi_vector_host_out(c->v[i], &p[i]));
    }
    unsigned char sv[4][32], rv[2][32];
    for (int i = 0; i < c->ns; i++)
        HISPI_TRY(host_scalar(c, c->s[i], sv[i]));
    /* results into vectors: their host copies first (one entry is written) */
    void *rh[2] = {0};
    for (int i = 0; i < c->nr; i++)
        if (c->r[i]->vec) HISPI_TRY(hispi_vector_host(c->r[i]->vec, &rh[i]));
    hisp_type t = c->t;
    int64_t n = c->n;
    switch (c->k) {
    case K_FILL:
        hispi_vref_fill(t, n, sv[0], p[0]);
        break;
    case K_COPY:
        if (n && p[1] != p[0]) memcpy(p[1], p[0], (size_t)n * hisp_type_size(t));
        break;
    case K_SCALE:
        hispi_vref_scale(t, n, sv[0], p[0]);
        break;
    case K_AXPBY:
        hispi_vref_axpbypcz(t, n, sv[0], p[0], NULL, NULL, sv[1], p[1]);
        break;
    case K_AXPBYPCZ:
        hispi_vref_axpbypcz(t, n, sv[0], p[0], sv[1], p[1], sv[2], p[2]);
        break;
    case K_MUL:
        hispi_vref_mul(t, n, p[0], p[1], p[2]);
        break;
    case K_DIV:
        hispi_vref_div(t, n, p[0], p[1], p[2]);
        break;
    case K_DOT:
        hispi_vref_dot(t, n, p[0], p[1], rv[0]);
        break;
    case K_NRM2:
        hispi_vref_nrm2(t, n, p[0], rv[0]);
        break;
    case K_AXPBY_DOT:
        hispi_vref_axpby_dot(t, n, sv[0], p[0], sv[1], p[1], c->hasw ? p[2] : NULL, rv[0]);
        break;
    case K_DOT2:
        hispi_vref_dot2(t, n, p[0], p[1], p[2], rv[0], rv[1]);
        break;
    case K_AXPBY2: /* y1 (x) before y2 (p), as the kernel: x1 is read before it changes */
        hispi_vref_axpbypcz(t, n, sv[0], p[0], NULL, NULL, sv[1], p[1]);
        hispi_vref_axpbypcz(t, n, sv[2], p[2], NULL, NULL, sv[3], p[3]);
        break;
    case K_SMUL:
        hispi_vref_mul(t, 1, sv[0], sv[1], (char *)p[0] + (size_t)c->oi * hisp_type_size(t));
        break;
    case K_AXPBY_DIV_DOT2:
        hispi_vref_axpby_div_dot2(t, n, sv[0], p[0], sv[1], p[1], p[2], p[3], rv[0], rv[1]);
        break;
    case K_AXPBY_DOT2_ACC:
        hispi_vref_axpby_dot2_acc(t, n, sv[2], p[3], sv[3], p[4], p[5], sv[0], p[0], sv[1], p[1],
                                  p[2], rv[0], rv[1]);
        break;
    default: /* K_DIV_DOT */
        hispi_vref_div_dot(t, n, p[0], p[1], p[2], rv[0]);
        break;
    }
    for (int i = 0; i < c->nv; i++)
        if (c->out >> i & 1) HISPI_TRY(hispi_vector_host_written(c->v[i]));
    size_t rs = c->real_result ? hispi_type_scalar_size(t) : hisp_type_size(t);
    for (int i = 0; i < c->nr; i++) {
        const hisp_result *r = c->r[i];
        if (r->host) {
            memcpy(r->host, rv[i], rs);
        } else {
            memcpy((char *)rh[i] + (size_t)r->index * rs, rv[i], rs);
            HISPI_TRY(hispi_vector_host_written(r->vec));
        }
    }
    return HISP_SUCCESS;
}

/* The device's kernels, unless the backend has none or a solve runs on the
 * host (hisp_context_s.host_ops). */
bool hispi_vec_on_device(hisp_context ctx)
{
    return hispi_vec_has_kernels(ctx) && !ctx->host_ops;
}

static hisp_status run(vcall *c)
{
    HISPI_TRY(check(c));
    HISPI_CLAIMED(c->ctx, hispi_vec_on_device(c->ctx) ? hispi_vec_run_dev(c) : run_host(c));
}

/* ---- the API ----------------------------------------------------------------------- */

hisp_status hisp_vector_fill(hisp_vector y, hisp_scalar a)
{
    vcall c = {.op = "hisp_vector_fill",
               .k = K_FILL,
               .nv = 1,
               .v = {y},
               .vn = {"y"},
               .out = 1,
               .ns = 1,
               .s = {&a},
               .sn = {"a"}};
    return run(&c);
}

hisp_status hisp_vector_copy(hisp_vector x, hisp_vector y)
{
    vcall c = {.op = "hisp_vector_copy",
               .k = K_COPY,
               .nv = 2,
               .v = {x, y},
               .vn = {"x", "y"},
               .out = 2,
               .read = 1};
    return run(&c);
}

hisp_status hisp_vector_scale(hisp_vector y, hisp_scalar a)
{
    vcall c = {.op = "hisp_vector_scale",
               .k = K_SCALE,
               .nv = 1,
               .v = {y},
               .vn = {"y"},
               .out = 1,
               .read = 1,
               .ns = 1,
               .s = {&a},
               .sn = {"a"}};
    return run(&c);
}

hisp_status hisp_vector_axpby(hisp_scalar a, hisp_vector x, hisp_scalar b, hisp_vector y)
{
    vcall c = {.op = "hisp_vector_axpby",
               .k = K_AXPBY,
               .nv = 2,
               .v = {x, y},
               .vn = {"x", "y"},
               .out = 2,
               .read = 1,
               .ns = 2,
               .s = {&a, &b},
               .sn = {"a", "b"}};
    if (hispi_vec_ok(y) && !host_zero(y->type, &b)) c.read |= 2;
    return run(&c);
}

hisp_status hisp_vector_axpbypcz(hisp_scalar a, hisp_vector x, hisp_scalar b, hisp_vector y,
                                 hisp_scalar cc, hisp_vector z)
{
    vcall c = {.op = "hisp_vector_axpbypcz",
               .k = K_AXPBYPCZ,
               .nv = 3,
               .v = {x, y, z},
               .vn = {"x", "y", "z"},
               .out = 4,
               .read = 3,
               .ns = 3,
               .s = {&a, &b, &cc},
               .sn = {"a", "b", "c"}};
    if (hispi_vec_ok(z) && !host_zero(z->type, &cc)) c.read |= 4;
    return run(&c);
}

hisp_status hisp_vector_mul(hisp_vector x, hisp_vector y, hisp_vector z)
{
    vcall c = {.op = "hisp_vector_mul",
               .k = K_MUL,
               .nv = 3,
               .v = {x, y, z},
               .vn = {"x", "y", "z"},
               .out = 4,
               .read = 3};
    return run(&c);
}

hisp_status hisp_vector_div(hisp_vector x, hisp_vector y, hisp_vector z)
{
    vcall c = {.op = "hisp_vector_div",
               .k = K_DIV,
               .nv = 3,
               .v = {x, y, z},
               .vn = {"x", "y", "z"},
               .out = 4,
               .read = 3};
    return run(&c);
}

hisp_status hisp_vector_dot(hisp_vector x, hisp_vector y, hisp_result r)
{
    vcall c = {.op = "hisp_vector_dot",
               .k = K_DOT,
               .nv = 2,
               .v = {x, y},
               .vn = {"x", "y"},
               .read = 3,
               .nr = 1,
               .r = {&r},
               .rn = {"r"}};
    return run(&c);
}

hisp_status hisp_vector_nrm2(hisp_vector x, hisp_result r)
{
    vcall c = {.op = "hisp_vector_nrm2",
               .k = K_NRM2,
               .nv = 1,
               .v = {x},
               .vn = {"x"},
               .read = 1,
               .nr = 1,
               .r = {&r},
               .rn = {"r"},
               .real_result = 1};
    return run(&c);
}

hisp_status hisp_vector_axpby_dot(hisp_scalar a, hisp_vector x, hisp_scalar b, hisp_vector y,
                                  hisp_vector w, hisp_result r)
{
    /* w NULL or y: r = dot(y, y) from the values just computed */
    bool hasw = w && w != y;
    vcall c = {.op = "hisp_vector_axpby_dot",
               .k = K_AXPBY_DOT,
               .nv = 3,
               .v = {x, y, hasw ? w : y},
               .vn = {"x", "y", "w"},
               .out = 2,
               .read = hasw ? 5 : 1,
               .ns = 2,
               .s = {&a, &b},
               .sn = {"a", "b"},
               .nr = 1,
               .r = {&r},
               .rn = {"r"},
               .hasw = hasw};
    if (hispi_vec_ok(y) && !host_zero(y->type, &b)) c.read |= 2;
    return run(&c);
}

hisp_status hisp_vector_dot2(hisp_vector x, hisp_vector y, hisp_vector w, hisp_result r0,
                             hisp_result r1)
{
    vcall c = {.op = "hisp_vector_dot2",
               .k = K_DOT2,
               .nv = 3,
               .v = {x, y, w},
               .vn = {"x", "y", "w"},
               .read = 7,
               .nr = 2,
               .r = {&r0, &r1},
               .rn = {"r0", "r1"}};
    return run(&c);
}

hisp_status hisp_vector_div_dot(hisp_vector x, hisp_vector y, hisp_vector z, hisp_result r)
{
    vcall c = {.op = "hisp_vector_div_dot",
               .k = K_DIV_DOT,
               .nv = 3,
               .v = {x, y, z},
               .vn = {"x", "y", "z"},
               .out = 4,
               .read = 3,
               .nr = 1,
               .r = {&r},
               .rn = {"r"}};
    return run(&c);
}

hisp_status hispi_vector_smul(hisp_scalar a, hisp_scalar b, hisp_result r)
{
    vcall c = {.op = "hispi_vector_smul",
               .k = K_SMUL,
               .nv = 1,
               .v = {r.vec},
               .vn = {"r"},
               .out = 1,
               .read = 1,
               .ns = 2,
               .s = {&a, &b},
               .sn = {"a", "b"},
               .oi = r.index};
    HISPI_TRY(check(&c));
    if (r.index < 0 || r.index >= c.n)
        return hispi_fail(c.ctx, HISP_ERR_INVALID_ARGUMENT, "%s: index %lld outside %lld entries",
                          c.op, (long long)r.index, (long long)c.n);
    c.n = 1;
    return hispi_vec_on_device(c.ctx) ? hispi_vec_run_dev(&c) : run_host(&c);
}

hisp_status hispi_vector_axpby2(hisp_scalar a, hisp_vector x1, hisp_scalar b, hisp_vector y1,
                                hisp_scalar c2, hisp_vector x2, hisp_scalar d, hisp_vector y2)
{
    vcall c = {.op = "hispi_vector_axpby2",
               .k = K_AXPBY2,
               .nv = 4,
               .v = {x1, y1, x2, y2},
               .vn = {"x1", "y1", "x2", "y2"},
               .out = 2 | 8,
               .read = 15,
               .ns = 4,
               .s = {&a, &b, &c2, &d},
               .sn = {"a", "b", "c", "d"}};
    HISPI_TRY(check(&c));
    if (x1 == y1 || x2 == y2 || y1 == y2 || x2 == y1)
        return hispi_fail(c.ctx, HISP_ERR_INVALID_ARGUMENT,
                          "%s: only x1 and y2 may be the same vector", c.op);
    return hispi_vec_on_device(c.ctx) ? hispi_vec_run_dev(&c) : run_host(&c);
}

hisp_status hispi_vector_axpby_div_dot2(hisp_scalar a, hisp_vector x, hisp_scalar b, hisp_vector y,
                                        hisp_vector d, hisp_vector z, hisp_result r0,
                                        hisp_result r1)
{
    vcall c = {.op = "hispi_vector_axpby_div_dot2",
               .k = K_AXPBY_DIV_DOT2,
               .nv = 4,
               .v = {x, y, d, z},
               .vn = {"x", "y", "d", "z"},
               .out = 2 | 8,
               .read = 7,
               .ns = 2,
               .s = {&a, &b},
               .sn = {"a", "b"},
               .nr = 2,
               .r = {&r0, &r1},
               .rn = {"r0", "r1"}};
    HISPI_TRY(check(&c));
    if (x == y || x == z || y == d || y == z || d == z)
        return hispi_fail(c.ctx, HISP_ERR_INVALID_ARGUMENT, "%s: x, y, d and z must differ", c.op);
    return run(&c);
}

hisp_status hispi_vector_axpby_dot2_acc(hisp_scalar p, hisp_vector P, hisp_scalar q, hisp_vector S,
                                        hisp_vector X, hisp_scalar a, hisp_vector x, hisp_scalar b,
                                        hisp_vector y, hisp_vector w, hisp_result r0,
                                        hisp_result r1)
{
    vcall c = {.op = "hispi_vector_axpby_dot2_acc",
               .k = K_AXPBY_DOT2_ACC,
               .nv = 6,
               .v = {x, y, w, P, S, X},
               .vn = {"x", "y", "w", "P", "S", "X"},
               .out = 2 | 32,
               .read = 63,
               .ns = 4,
               .s = {&a, &b, &p, &q},
               .sn = {"a", "b", "p", "q"},
               .nr = 2,
               .r = {&r0, &r1},
               .rn = {"r0", "r1"}};
    HISPI_TRY(check(&c));
    for (int i = 0; i < 6; i++) /* S (4) may be y (1) */
        for (int j = i + 1; j < 6; j++)
            if (c.v[i] == c.v[j] && !(i == 1 && j == 4))
                return hispi_fail(c.ctx, HISP_ERR_INVALID_ARGUMENT, "%s: %s and %s must differ",
                                  c.op, c.vn[i], c.vn[j]);
    return run(&c);
}
