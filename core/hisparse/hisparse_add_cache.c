/* The HiSparse addition's scratch of a context (ctx->addc): what every
 * device addition needs besides its operands' pool, kept across calls. On
 * CUDA a cudaMalloc of the queues costs up to milliseconds and cudaFree
 * synchronises, and a kernel lookup reads the device's properties and
 * hashes the program's source: a repeated addition now does none of this
 * (core/hisparse/hisparse_add.c). Freed with the backend (a devobj, as
 * core/vector/vector_dev.c's state). */
#include "backend/backend.h"
#include "hispi.h"
#include "hispi_hisparse.h"

#include <stdlib.h>

#define CTRL_BYTES 256 /* the addition's 32 control words */

static void cache_drop(hispi_devobj *o)
{
    hispi_astate *c = (hispi_astate *)((char *)o - offsetof(hispi_astate, link));
    hisp_context ctx = (hisp_context)((char *)c - offsetof(struct hisp_context_s, addc));
    for (int i = 0; i < HISPI_ADD_KERNELS; i++) {
        if (c->kern[i].k) HISPI_BE_VOID(ctx, kern_free, c->kern[i].k);
        c->kern[i].k = NULL;
    }
    void *bufs[3] = {c->ctrl, c->queues, c->tmp};
    for (int i = 0; i < 3; i++)
        if (bufs[i]) HISPI_BE_VOID(ctx, buf_free, bufs[i]);
    for (int i = 0; i < 2; i++)
        if (c->mark[i]) HISPI_BE_VOID(ctx, mark_destroy, c->mark[i]);
    c->ctrl = c->queues = c->tmp = c->mark[0] = c->mark[1] = NULL;
    c->qbytes = c->tbytes = c->tclean = 0;
    c->ready = false;
}

hisp_status hispi_add_cache(hisp_context ctx, hispi_astate **out)
{
    hispi_astate *c = &ctx->addc;
    if (!c->link.next) hispi_devobj_attach(ctx, &c->link, cache_drop);
    if (!c->ready) {
        hispi_kcaps kc = {0};
        hisp_status s = HISPI_BE(ctx, kern_caps, &kc);
        if (!s) s = hispi_dev_alloc(ctx, CTRL_BYTES, &c->ctrl);
        for (int i = 0; i < 2 && !s; i++)
            s = HISPI_BE(ctx, mark_create, &c->mark[i]);
        if (s) {
            cache_drop(&c->link);
            return s;
        }
        c->max_group = kc.max_group;
        c->simd = kc.simd;
        c->ready = true;
    }
    c->calls++;
    *out = c;
    return HISP_SUCCESS;
}

hisp_status hispi_add_cache_kernel(hisp_context ctx, hispi_astate *c, int name, const char *kname,
                                   const char *opts, void **k)
{
    /* a free slot, else the least recently used (never one of this call's
     * kernels: a call takes 6 of the 24) */
    int slot = 0;
    for (int i = 0; i < HISPI_ADD_KERNELS; i++) {
        if (c->kern[i].k && c->kern[i].name == name && !strcmp(c->kern[i].opts, opts)) {
            c->kern[i].used = c->calls;
            *k = c->kern[i].k;
            return HISP_SUCCESS;
        }
        if (c->kern[slot].k && (!c->kern[i].k || c->kern[i].used < c->kern[slot].used)) slot = i;
    }
    if (strlen(opts) >= sizeof c->kern[0].opts) /* never with the addition's options */
        return hispi_fail(ctx, HISP_ERR_BACKEND, "addition: kernel options too long");
    void *nk = NULL;
    HISPI_TRY(HISPI_BE(ctx, kern_get, HISPI_PROG_HSADD, opts, kname, &nk));
    if (c->kern[slot].k) HISPI_BE_VOID(ctx, kern_free, c->kern[slot].k);
    c->kern[slot].name = name;
    strcpy(c->kern[slot].opts, opts);
    c->kern[slot].k = nk;
    c->kern[slot].used = c->calls;
    *k = nk;
    return HISP_SUCCESS;
}

/* A buffer of at least `bytes` in *buf (*cap bytes): kept when large
 * enough, else replaced by one of 2x the old or 5/4 of the need (the exact
 * need when that fails); the old one goes first (no peak of both). On
 * failure *buf is NULL and *cap 0. */
static hisp_status grow(hisp_context ctx, void **buf, uint64_t *cap, uint64_t bytes)
{
    if (*buf && bytes <= *cap) return HISP_SUCCESS;
    uint64_t want = bytes + bytes / 4;
    if (want < 2 * *cap) want = 2 * *cap;
    want = hispi_round_up(want, 256);
    if (*buf) HISPI_BE_VOID(ctx, buf_free, *buf);
    *buf = NULL;
    *cap = 0;
    return hispi_dev_alloc_room(ctx, bytes, want, buf, cap);
}

hisp_status hispi_add_cache_queues(hisp_context ctx, hispi_astate *c, uint64_t bytes)
{
    return grow(ctx, &c->queues, &c->qbytes, bytes);
}

hisp_status hispi_add_cache_tmp(hisp_context ctx, hispi_astate *c, uint64_t bytes)
{
    if (!c->tmp || bytes > c->tbytes) {
        HISPI_TRY(grow(ctx, &c->tmp, &c->tbytes, bytes));
        c->tclean = c->tbytes; /* a new buffer holds anything */
    }
    if (c->tclean) { /* only the bytes the last use wrote */
        HISPI_TRY(HISPI_BE(ctx, buf_zero, c->tmp, 0, (size_t)c->tclean));
        c->tclean = 0;
    }
    return HISP_SUCCESS;
}
