/* The device copy of a HiSparse family's pool (core/hisparse/hispi_hisparse.h): one
 * buffer per family on its context's backend, shared by the SpMV state of
 * every member and by the device addition (duplicates, transposes, scales
 * and edits share the pool, so a shared tree is uploaded once). It stays
 * while the family lives on that backend. Host writes (builds, edits) lower
 * the valid watermark (hispi_pool_dirty); bringing the device copy up to
 * date writes only the bytes past it, skipping the device-only ranges of
 * additions (core/hisparse/hisparse_resid.c), whose bytes only the device holds. A
 * buffer too small moves to a larger one by a device-to-device copy
 * (dev_gen tells the members' backend state to rebuild). */
#include "backend/backend.h"
#include "hispi.h"
#include "hispi_hisparse.h"

static long dev_countdown; /* test hook: fail the k-th device allocation */
static bool dev_fail_on;   /* and every one after it */

void hispi_pool_dev_fail_after(long k)
{
    dev_countdown = k < 0 ? -k : k;
    dev_fail_on = k < 0;
}

hisp_status hispi_dev_alloc(hisp_context ctx, uint64_t bytes, void **buf)
{
    *buf = NULL;
    if (dev_countdown > 0 && --dev_countdown == 0) {
        dev_countdown = dev_fail_on; /* 1: the next one fails too */
        return hispi_fail(ctx, HISP_ERR_OUT_OF_DEVICE_MEMORY,
                          "HiSparse pool: %llu bytes of device memory (injected failure)",
                          (unsigned long long)bytes);
    }
    if (bytes > SIZE_MAX)
        return hispi_fail(ctx, HISP_ERR_OUT_OF_DEVICE_MEMORY, "HiSparse pool: %llu bytes",
                          (unsigned long long)bytes);
    return HISPI_BE(ctx, buf_alloc, (size_t)bytes, buf);
}

hisp_status hispi_dev_alloc_room(hisp_context ctx, uint64_t need, uint64_t room, void **buf,
                                 uint64_t *cap)
{
    hisp_status s = hispi_dev_alloc(ctx, room, buf);
    if (s == HISP_ERR_OUT_OF_DEVICE_MEMORY && room > need) {
        hispi_clear_error(ctx);
        room = need;
        s = hispi_dev_alloc(ctx, room, buf);
    }
    HISPI_TRY(s);
    *cap = room;
    return HISP_SUCCESS;
}

/* The device bytes a move keeps: the valid ones and the device-only ranges
 * (they may lie past the watermark). */
static uint64_t dev_keep(const hispi_pool *p)
{
    uint64_t k = p->dev_valid;
    if (p->nreg && p->reg[p->nreg - 1].end > k) k = p->reg[p->nreg - 1].end;
    return k < p->dev_cap ? k : p->dev_cap;
}

hisp_status hispi_pool_device(hisp_context ctx, hispi_pool *p, void **buf)
{
    const hisp_backend_ops *o = ctx->ops;
    if (!HISPI_BE_HAS(ctx, buf_alloc) || !HISPI_BE_HAS(ctx, buf_write) ||
        !HISPI_BE_HAS(ctx, buf_free))
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "the %s backend has no buffers", o->name);
    /* 16 bytes past the last node: CUDA's single-entry leaves load whole
     * 16-byte nodes */
    uint64_t need = hispi_round_up(p->used, 16) + 16;
    if (p->dev && need > p->dev_cap) {
        /* grow with room for later additions; the valid bytes move on the
         * device, never through the host */
        uint64_t cap = 0;
        void *nb = NULL;
        HISPI_TRY(hispi_dev_alloc_room(ctx, need, need + need / 2, &nb, &cap));
        hisp_status s = HISP_SUCCESS;
        uint64_t keep = dev_keep(p);
        if (keep && HISPI_BE_HAS(ctx, buf_copy))
            s = HISPI_BE(ctx, buf_copy, nb, p->dev, (size_t)keep);
        else if (p->nreg)
            s = hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "HiSparse pool: no device copy to move");
        else
            p->dev_valid = 0; /* no device copy: written again below */
        if (s) {
            HISPI_BE_VOID(ctx, buf_free, nb);
            return s;
        }
        HISPI_BE_VOID(ctx, buf_free, p->dev);
        p->dev = nb;
        p->dev_cap = p->dev_clean = cap; /* past keep: whatever the buffer held */
        p->dev_gen++;
    }
    if (!p->dev) {
        HISPI_TRY(hispi_dev_alloc(ctx, need, &p->dev));
        p->dev_cap = p->dev_clean = need;
        p->dev_valid = 0;
        p->dev_gen++;
        p->dev_ctx = ctx;
    }
    /* the stale bytes go up, around the device-only ranges */
    while (p->dev_valid < p->used) {
        const struct hispi_region *r = NULL;
        for (size_t i = 0; i < p->nreg && !r; i++)
            if (p->reg[i].end > p->dev_valid) r = &p->reg[i];
        uint64_t to = !r ? p->used : r->off > p->dev_valid ? r->off : p->dev_valid;
        if (to > p->dev_valid)
            HISPI_TRY(HISPI_BE(ctx, buf_write, p->dev, (size_t)p->dev_valid, p->base + p->dev_valid,
                               (size_t)(to - p->dev_valid)));
        if (to > p->dev_clean) p->dev_clean = to;
        p->dev_valid = r ? r->end : p->used;
    }
    *buf = p->dev;
    return HISP_SUCCESS;
}

/* The buffer stays while the family lives on the backend (the next SpMV
 * or addition finds it resident); the pool's end or the backend's frees
 * it. */
void hispi_pool_dev_release(hisp_context ctx, hispi_pool *p)
{
    (void)ctx;
    if (p->dev_users > 0) p->dev_users--;
}

hisp_status hispi_pool_dev_reserve(hisp_context ctx, hispi_pool *p, uint64_t need, uint64_t keep)
{
    if (need <= p->dev_cap) return HISP_SUCCESS;
    uint64_t cap = 0;
    void *nb = NULL;
    HISPI_TRY(hispi_dev_alloc_room(ctx, hispi_round_up(need, 16),
                                   hispi_round_up(need + need / 2, 16), &nb, &cap));
    hisp_status s;
    uint64_t k = dev_keep(p);
    if (keep > k) k = keep;
    s = HISPI_BE(ctx, buf_zero, nb, (size_t)k, (size_t)(cap - k));
    if (!s && k) s = HISPI_BE(ctx, buf_copy, nb, p->dev, (size_t)k);
    if (s) {
        HISPI_BE_VOID(ctx, buf_free, nb);
        return s;
    }
    HISPI_BE_VOID(ctx, buf_free, p->dev);
    p->dev = nb;
    p->dev_cap = cap;
    p->dev_clean = k;
    p->dev_gen++;
    return HISP_SUCCESS;
}

void hispi_pool_dev_drop(hisp_context ctx, hispi_pool *p)
{
    if (!p->dev) return;
    if (hispi_pool_host(ctx, p))
        hispi_debug("HiSparse pool: device-only nodes lost with the backend");
    p->nreg = p->nhv = 0;
    HISPI_BE_VOID(ctx, buf_free, p->dev);
    p->dev = NULL;
    p->dev_ctx = NULL;
    p->dev_cap = p->dev_valid = p->dev_clean = 0;
}
