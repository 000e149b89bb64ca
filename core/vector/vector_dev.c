/* Vector algebra on the device: the kernels of kernels/vector.cl through
 * the backend's run-time kernel slots (OpenCL, CUDA), built once per context
 * and type and kept in the context's vector state with its scratch; device
 * scalars read by the kernels; reductions in two stages (vector_ops.c says
 * more). */
#include "vector_ops.h"

#include <stdio.h>
#include <string.h>

static const char *const kname[K_COUNT] = {
    "vec_fill",           "vec_copy",      "vec_scale",    "vec_axpby",
    "vec_axpbypcz",       "vec_mul",       "vec_div",      "vec_dot",
    "vec_nrm2",           "vec_axpby_dot", "vec_dot2",     "vec_div_dot",
    "vec_scalar",         "vec_reduce",    "vec_smul",     "vec_axpby2",
    "vec_axpby_div_dot2", "vec_mdot",      "vec_reduce_n", "vec_bupdate",
    "vec_axpby_dot2_acc"};
_Static_assert(K_COUNT <= HISPI_VK_COUNT, "hispi_vstate.kern is too small");

/* The byte offset of the result slots in the slots buffer (scalar slots
 * 0..2 below it, entries of at most 32 bytes). */
#define RESULT_SLOT_BYTES 256
#define SLOTS_BYTES 512

bool hispi_vec_has_kernels(hisp_context ctx)
{
    return HISPI_BE_HAS(ctx, kern_caps) && HISPI_BE_HAS(ctx, kern_get) &&
           HISPI_BE_HAS(ctx, kern_free) && HISPI_BE_HAS(ctx, kern_launch);
}

static void vstate_drop(hispi_devobj *o)
{
    hispi_vstate *st = (hispi_vstate *)((char *)o - offsetof(hispi_vstate, link));
    hisp_context ctx = (hisp_context)((char *)st - offsetof(struct hisp_context_s, vec));
    if (!st->ready) return;
    for (int t = 0; t < 6; t++)
        for (int k = 0; k < HISPI_VK_COUNT; k++)
            if (st->kern[t][k]) {
                HISPI_BE_VOID(ctx, kern_free, st->kern[t][k]);
                st->kern[t][k] = NULL;
            }
    void **bufs[4] = {&st->part, &st->slots, &st->mpart, &st->coef};
    for (int i = 0; i < 4; i++)
        if (*bufs[i]) {
            HISPI_BE_VOID(ctx, buf_free, *bufs[i]);
            *bufs[i] = NULL;
        }
    st->coef_bytes = 0;
    st->ready = false;
}

/* The context's vector state on its current backend: work sizes from the
 * device, scratch buffers (the partials sized for the most groups any call
 * launches, so they are allocated once per backend). */
static hisp_status vstate(hisp_context ctx, hispi_vstate **out)
{
    hispi_vstate *st = &ctx->vec;
    if (!st->link.next) hispi_devobj_attach(ctx, &st->link, vstate_drop);
    if (!st->ready) {
        hispi_kcaps caps;
        HISPI_TRY(HISPI_BE(ctx, kern_caps, &caps));
        hisp_device_info info;
        memset(&info, 0, sizeof info);
        HISPI_TRY(HISPI_BE_ON(ctx, ctx->ops, device_info, ctx->device, &info));
        int cu = caps.compute_units > 0 ? caps.compute_units : 1;
        st->is_cpu = caps.is_cpu;
        st->ls = 1;
        if (!caps.is_cpu) /* 256-thread groups, 8 per SM: every SM full */
            for (st->ls = 256; st->ls > caps.max_group && st->ls > 1; st->ls >>= 1) {
            }
        /* CPUs: a few chunks per core, so a core that starts late is not the tail */
        st->gmax = cu * (caps.is_cpu ? 4 : 8);
        st->acc_double = info.fp64;
        size_t pbytes = (size_t)st->gmax * 2 * 4 * (st->acc_double ? 8 : 4);
        hisp_status s = HISPI_BE(ctx, buf_alloc, pbytes, &st->part);
        if (!s) s = HISPI_BE(ctx, buf_alloc, SLOTS_BYTES, &st->slots);
        if (s) {
            if (st->part) HISPI_BE_VOID(ctx, buf_free, st->part);
            st->part = NULL;
            return s;
        }
        st->ready = true;
    }
    *out = st;
    return HISP_SUCCESS;
}

/* Columns per group of vec_mdot (the kernels' MT), whose products a
 * work-item holds in registers: GPUs 4 reals (the groups of one range of
 * rows run together, so the right-hand vectors come from L2 for every tile
 * but the first; 16 held 128 registers: a quarter of the occupancy, 0.47x
 * the speed on an H200), CPUs 16 (a core reads them from memory per tile). */
static int mdot_tile(const hispi_vstate *st, hisp_type t)
{
    return (st->is_cpu ? 16 : 4) / hisp_type_components(t);
}

void hispi_vector_kopts(char *opts, size_t size, hisp_type t, bool is_cpu, int ls, bool acc_double)
{
    int vc = hisp_type_components(t), dbl = hispi_type_scalar_size(t) == 8;
    const hispi_vstate st = {.is_cpu = is_cpu};
    snprintf(opts, size,
             "-DVALUE_T=%s -DIS_DOUBLE=%d -DATOM64=0 -DKIND=%d -DVC=%d -DACC_DOUBLE=%d "
             "-DCHUNK=%d -DLS=%d -DMT=%d",
             dbl ? "double" : "float", dbl,
             vc == 1   ? 0
             : vc == 2 ? 1
                       : 2,
             vc, (int)acc_double, (int)is_cpu, ls, mdot_tile(&st, t));
}

static hisp_status kernel(hisp_context ctx, hispi_vstate *st, hisp_type t, int k, void **out)
{
    if (!st->kern[t][k]) {
        char opts[256];
        hispi_vector_kopts(opts, sizeof opts, t, st->is_cpu, st->ls, st->acc_double);
        HISPI_TRY(HISPI_BE(ctx, kern_get, HISPI_PROG_VECTOR, opts, kname[k], &st->kern[t][k]));
    }
    *out = st->kern[t][k];
    return HISP_SUCCESS;
}

static size_t groups_for(const hispi_vstate *st, int64_t n)
{
    if (n <= 0) return 0;
    /* CPUs: chunks of at least 8192 entries (a launch per tiny chunk costs more) */
    int64_t g = st->is_cpu ? (n + 8191) / 8192 : (n + st->ls - 1) / st->ls;
    return (size_t)(g < st->gmax ? g : st->gmax);
}

/* A scalar as the kernels take it. */
typedef struct {
    unsigned char h[32]; /* host value: one entry of the call's type */
    void *num, *den;
    int64_t i, j;
    int mode; /* 1 numerator from num[i], 2 times den[j]^-1, 4 negated */
} dscalar;

static int push_scalar(hispi_karg *a, int k, hisp_type t, const dscalar *s, void *dummy)
{
    int vc = hisp_type_components(t);
    bool dbl = hispi_type_scalar_size(t) == 8;
    for (int c = 0; c < vc; c++) {
        double v = dbl ? ((const double *)s->h)[c] : ((const float *)s->h)[c];
        a[k++] = (hispi_karg){dbl ? HISPI_KARG_F64 : HISPI_KARG_F32, NULL, 0, v};
    }
    a[k++] = (hispi_karg){HISPI_KARG_BUF, s->num ? s->num : dummy, 0, 0};
    a[k++] = (hispi_karg){HISPI_KARG_I64, NULL, s->i, 0};
    a[k++] = (hispi_karg){HISPI_KARG_BUF, s->den ? s->den : dummy, 0, 0};
    a[k++] = (hispi_karg){HISPI_KARG_I64, NULL, s->j, 0};
    a[k++] = (hispi_karg){HISPI_KARG_I32, NULL, s->mode, 0};
    return k;
}

static bool written_by(const vcall *c, hisp_vector v)
{
    if (c->k == K_SMUL) return false; /* one work-item reads its scalars, then writes */
    for (int i = 0; i < c->nv; i++)
        if ((c->out >> i & 1) && c->v[i] == v) return true;
    return false;
}

/* Scalar i of the call for the kernels. One read from a vector the call
 * writes is evaluated into scalar slot i first (the kernel's work-items
 * would otherwise race with the write). */
static hisp_status dev_scalar(const vcall *c, hispi_vstate *st, int i, dscalar *d)
{
    hisp_context ctx = c->ctx;
    const hisp_scalar *s = c->s[i];
    memset(d, 0, sizeof *d);
    if (s->host) {
        hispi_vref_scalar(c->t, s->host, NULL, s->negate, d->h);
        return HISP_SUCCESS;
    }
    HISPI_TRY(hispi_vector_device(s->num, true, &d->num));
    d->i = s->inum;
    d->mode = 1 | (s->negate & 1 ? 4 : 0) | (s->negate & HISPI_SCALAR_SAFE ? 8 : 0);
    if (s->den) {
        HISPI_TRY(hispi_vector_device(s->den, true, &d->den));
        d->j = s->iden;
        d->mode |= 2;
    }
    if (!written_by(c, s->num) && !(s->den && written_by(c, s->den))) return HISP_SUCCESS;
    void *k = NULL;
    HISPI_TRY(kernel(ctx, st, c->t, K_SCALAR, &k));
    hispi_karg a[16];
    int na = push_scalar(a, 0, c->t, d, st->slots);
    a[na++] = (hispi_karg){HISPI_KARG_BUF, st->slots, 0, 0};
    a[na++] = (hispi_karg){HISPI_KARG_I64, NULL, i, 0};
    HISPI_TRY(HISPI_BE(ctx, kern_launch, k, a, na, 1, 1));
    memset(d, 0, sizeof *d);
    d->num = st->slots;
    d->i = i;
    d->mode = 1;
    return HISP_SUCCESS;
}

hisp_status hispi_vec_run_dev(const vcall *c)
{
    hisp_context ctx = c->ctx;
    hispi_vstate *st = NULL;
    HISPI_TRY(vstate(ctx, &st));
    void *k1 = NULL, *k2 = NULL;
    HISPI_TRY(kernel(ctx, st, c->t, c->k, &k1));
    if (c->nr) HISPI_TRY(kernel(ctx, st, c->t, K_REDUCE, &k2));
    /* operands read first (uploaded where only the host copy is current),
     * then those only written */
    void *buf[6] = {0};
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < c->nv; i++)
            if ((int)(c->read >> i & 1) == (pass == 0))
                HISPI_TRY(hispi_vector_device(c->v[i], pass == 0, &buf[i]));
    void *rbuf[2] = {st->slots, st->slots};
    int64_t ridx[2] = {0, 0};
    int ncomp = c->real_result ? 1 : hisp_type_components(c->t);
    size_t rs = (size_t)ncomp * hispi_type_scalar_size(c->t);
    for (int i = 0; i < c->nr; i++) {
        if (c->r[i]->vec) {
            HISPI_TRY(hispi_vector_device(c->r[i]->vec, true, &rbuf[i]));
            ridx[i] = c->r[i]->index;
        } else {
            ridx[i] = (int64_t)(RESULT_SLOT_BYTES / rs) + i;
        }
    }
    dscalar ds[4];
    for (int i = 0; i < c->ns; i++)
        HISPI_TRY(dev_scalar(c, st, i, &ds[i]));

    hispi_karg a[64];
    int na = 0;
    a[na++] = (hispi_karg){HISPI_KARG_I64, NULL, c->n, 0};
    /* the views' offsets: o0..o3, and one for each vector past the fourth */
    for (int i = 0; c->k != K_SMUL && i < (c->nv > 4 ? c->nv : 4); i++)
        a[na++] = (hispi_karg){HISPI_KARG_I64, NULL, i < c->nv ? c->v[i]->off : 0, 0};
    for (int i = 0; i < c->nv; i++)
        a[na++] = (hispi_karg){HISPI_KARG_BUF, buf[i], 0, 0};
    if (c->k == K_AXPBY_DOT) a[na++] = (hispi_karg){HISPI_KARG_I32, NULL, c->hasw, 0};
    if (c->k == K_SMUL) a[na++] = (hispi_karg){HISPI_KARG_I64, NULL, c->oi, 0};
    for (int i = 0; i < c->ns; i++)
        na = push_scalar(a, na, c->t, &ds[i], st->slots);
    if (c->nr) a[na++] = (hispi_karg){HISPI_KARG_BUF, st->part, 0, 0};
    size_t groups = groups_for(st, c->n);
    if (groups) HISPI_TRY(HISPI_BE(ctx, kern_launch, k1, a, na, groups, (size_t)st->ls));
    for (int i = 0; i < c->nv; i++)
        if (c->out >> i & 1) hispi_vector_device_written(c->v[i]);
    if (!c->nr) return HISP_SUCCESS;

    hispi_karg r[9] = {
        {HISPI_KARG_I64, NULL, (int64_t)groups, 0}, {HISPI_KARG_BUF, st->part, 0, 0},
        {HISPI_KARG_I32, NULL, c->nr, 0},           {HISPI_KARG_I32, NULL, ncomp, 0},
        {HISPI_KARG_I32, NULL, c->real_result, 0},  {HISPI_KARG_BUF, rbuf[0], 0, 0},
        {HISPI_KARG_I64, NULL, ridx[0], 0},         {HISPI_KARG_BUF, rbuf[c->nr - 1], 0, 0},
        {HISPI_KARG_I64, NULL, ridx[c->nr - 1], 0},
    };
    HISPI_TRY(HISPI_BE(ctx, kern_launch, k2, r, 9, 1, (size_t)st->ls));
    for (int i = 0; i < c->nr; i++) {
        if (c->r[i]->vec)
            hispi_vector_device_written(c->r[i]->vec);
        else
            HISPI_TRY(HISPI_BE(ctx, buf_read, st->slots, (size_t)ridx[i] * rs, c->r[i]->host, rs));
    }
    return HISP_SUCCESS;
}

/* ---- a basis in one buffer (vector_block.c) ---------------------------------- */

/* An operand of a basis kernel: a part of the basis's buffer as that
 * buffer and its offset (a kernel then sees no buffer twice, as a buffer
 * and as a sub-buffer), else its own buffer. */
static hisp_status operand(const vblock *b, hisp_vector v, bool need, void **buf, int64_t *off)
{
    if (v->base && v->base == b->buf) {
        *buf = b->buf;
        *off = v->base_off;
        return HISP_SUCCESS;
    }
    *off = v->off;
    return hispi_vector_device(v, need, buf);
}

hisp_status hispi_vec_mdot_dev(const vblock *b, int nr, const hisp_vector *R, hisp_vector out,
                               int64_t oi)
{
    hisp_context ctx = b->ctx;
    hispi_vstate *st = NULL;
    HISPI_TRY(vstate(ctx, &st));
    void *k1 = NULL, *k2 = NULL, *rb[2] = {0}, *ob = NULL;
    HISPI_TRY(kernel(ctx, st, b->t, K_MDOT, &k1));
    HISPI_TRY(kernel(ctx, st, b->t, K_REDUCE_N, &k2));
    if (!st->mpart) {
        size_t bytes = (size_t)st->gmax * 16 * 2 * (st->acc_double ? 8 : 4); /* MT * VC <= 16 */
        HISPI_TRY(HISPI_BE(ctx, buf_alloc, bytes, &st->mpart));
    }
    int64_t ro[2] = {0, 0};
    for (int k = 0; k < nr; k++)
        HISPI_TRY(operand(b, R[k], true, &rb[k], &ro[k]));
    HISPI_TRY(hispi_vector_device(out, true, &ob));
    /* every tile gets the same row groups; at least one (n = 0: zeros) */
    int64_t ntiles = (b->q + mdot_tile(st, b->t) - 1) / mdot_tile(st, b->t);
    int64_t nrg = (int64_t)groups_for(st, b->n) / ntiles;
    if (nrg < 1) nrg = 1;
    hispi_karg a[12] = {
        {HISPI_KARG_I64, NULL, b->n, 0},       {HISPI_KARG_BUF, b->buf, 0, 0},
        {HISPI_KARG_I64, NULL, b->off, 0},     {HISPI_KARG_I64, NULL, b->stride, 0},
        {HISPI_KARG_I32, NULL, b->q, 0},       {HISPI_KARG_BUF, rb[0], 0, 0},
        {HISPI_KARG_I64, NULL, ro[0], 0},      {HISPI_KARG_BUF, rb[nr - 1], 0, 0},
        {HISPI_KARG_I64, NULL, ro[nr - 1], 0}, {HISPI_KARG_I32, NULL, nr, 0},
        {HISPI_KARG_BUF, st->mpart, 0, 0},
    };
    HISPI_TRY(HISPI_BE(ctx, kern_launch, k1, a, 11, (size_t)(ntiles * nrg), (size_t)st->ls));
    hispi_karg r[6] = {
        {HISPI_KARG_I64, NULL, nrg, 0},  {HISPI_KARG_BUF, st->mpart, 0, 0},
        {HISPI_KARG_I32, NULL, b->q, 0}, {HISPI_KARG_I32, NULL, nr, 0},
        {HISPI_KARG_BUF, ob, 0, 0},      {HISPI_KARG_I64, NULL, out->off + oi, 0},
    };
    HISPI_TRY(HISPI_BE(ctx, kern_launch, k2, r, 6, (size_t)b->q * (size_t)nr, (size_t)st->ls));
    hispi_vector_device_written(out);
    return HISP_SUCCESS;
}

hisp_status hispi_vec_bupdate_dev(const vblock *b, hisp_vector y0, hisp_vector y1, const void *coef)
{
    hisp_context ctx = b->ctx;
    hispi_vstate *st = NULL;
    HISPI_TRY(vstate(ctx, &st));
    void *k = NULL, *yb[2] = {0};
    HISPI_TRY(kernel(ctx, st, b->t, K_BUPDATE, &k));
    size_t es = hisp_type_size(b->t), bytes = (2 * (size_t)b->q + 3) * es;
    if (st->coef_bytes < bytes) { /* grown to the longest basis seen */
        if (st->coef) HISPI_BE_VOID(ctx, buf_free, st->coef);
        st->coef = NULL;
        st->coef_bytes = 0;
        HISPI_TRY(HISPI_BE(ctx, buf_alloc, bytes, &st->coef));
        st->coef_bytes = bytes;
    }
    HISPI_TRY(HISPI_BE(ctx, buf_write, st->coef, 0, coef, bytes));
    /* y0 read where a0 or b0 is not zero, y1 where b1 is not */
    const char *c = coef;
    bool z0 = hispi_vref_is_zero(b->t, c + (size_t)b->q * es),
         zb0 = hispi_vref_is_zero(b->t, c + (2 * (size_t)b->q + 1) * es),
         zb1 = hispi_vref_is_zero(b->t, c + (2 * (size_t)b->q + 2) * es);
    int64_t yo[2] = {0, 0};
    HISPI_TRY(operand(b, y0, !z0 || (y1 && !zb0), &yb[0], &yo[0]));
    if (y1) HISPI_TRY(operand(b, y1, !zb1, &yb[1], &yo[1]));
    hispi_karg a[12] = {
        {HISPI_KARG_I64, NULL, b->n, 0},
        {HISPI_KARG_BUF, b->buf, 0, 0},
        {HISPI_KARG_I64, NULL, b->off, 0},
        {HISPI_KARG_I64, NULL, b->stride, 0},
        {HISPI_KARG_I32, NULL, b->q, 0},
        {HISPI_KARG_BUF, yb[0], 0, 0},
        {HISPI_KARG_I64, NULL, yo[0], 0},
        {HISPI_KARG_BUF, y1 ? yb[1] : yb[0], 0, 0},
        {HISPI_KARG_I64, NULL, y1 ? yo[1] : yo[0], 0},
        {HISPI_KARG_I32, NULL, y1 != NULL, 0},
        {HISPI_KARG_BUF, st->coef, 0, 0},
    };
    size_t groups = groups_for(st, b->n);
    if (groups) HISPI_TRY(HISPI_BE(ctx, kern_launch, k, a, 11, groups, (size_t)st->ls));
    hispi_vector_device_written(y0);
    if (y1) hispi_vector_device_written(y1);
    return HISP_SUCCESS;
}
