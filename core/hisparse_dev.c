/* The device copy of a HiSparse family's pool (core/hispi_hisparse.h): one
 * buffer per family on its context's backend, shared by the SpMV state of
 * every member (duplicates, transposes, scales and edits share the pool, so
 * a shared tree is uploaded once). The host pool stays the master copy:
 * builds, edits and additions write it, and hispi_pool_dirty lowers the
 * valid watermark where host bytes change below it. Bringing the device copy
 * up to date writes only the bytes past the watermark (additions and edits
 * append); a buffer too small moves to a larger one by a device-to-device
 * copy (dev_gen tells the members' backend state to rebuild). */
#include "../backends/backend.h"
#include "hispi_hisparse.h"

static long dev_countdown; /* test hook: fail the k-th device allocation */

void hispi_pool_dev_fail_after(long k)
{
    dev_countdown = k;
}

static hisp_status dev_alloc(hisp_context ctx, uint64_t bytes, void **buf)
{
    *buf = NULL;
    if (dev_countdown > 0 && --dev_countdown == 0)
        return hispi_fail(ctx, HISP_ERR_OUT_OF_DEVICE_MEMORY,
                          "HiSparse pool: %llu bytes of device memory (injected failure)",
                          (unsigned long long)bytes);
    if (bytes > SIZE_MAX)
        return hispi_fail(ctx, HISP_ERR_OUT_OF_DEVICE_MEMORY, "HiSparse pool: %llu bytes",
                          (unsigned long long)bytes);
    return ctx->ops->buf_alloc(ctx, ctx->be, (size_t)bytes, buf);
}

hisp_status hispi_pool_device(hisp_context ctx, hispi_pool *p, void **buf)
{
    const hisp_backend_ops *o = ctx->ops;
    if (!o->buf_alloc || !o->buf_write || !o->buf_free)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "the %s backend has no buffers", o->name);
    /* 16 bytes past the last node: CUDA's single-entry leaves load whole
     * 16-byte nodes */
    uint64_t need = hispi_round_up(p->used, 16) + 16;
    if (p->dev && need > p->dev_cap) {
        /* grow with room for later additions; the valid bytes move on the
         * device, never through the host */
        uint64_t cap = need + need / 2;
        void *nb = NULL;
        hisp_status s = dev_alloc(ctx, cap, &nb);
        if (s == HISP_ERR_OUT_OF_DEVICE_MEMORY && cap > need) {
            hispi_clear_error(ctx);
            cap = need;
            s = dev_alloc(ctx, cap, &nb);
        }
        HISPI_TRY(s);
        if (p->dev_valid && o->buf_copy)
            s = o->buf_copy(ctx, ctx->be, nb, p->dev, (size_t)p->dev_valid);
        else
            p->dev_valid = 0; /* no device copy: written again below */
        if (s) {
            o->buf_free(ctx->be, nb);
            return s;
        }
        o->buf_free(ctx->be, p->dev);
        p->dev = nb;
        p->dev_cap = cap;
        p->dev_gen++;
    }
    if (!p->dev) {
        HISPI_TRY(dev_alloc(ctx, need, &p->dev));
        p->dev_cap = need;
        p->dev_valid = 0;
        p->dev_gen++;
    }
    if (p->dev_valid < p->used) {
        HISPI_TRY(o->buf_write(ctx, ctx->be, p->dev, (size_t)p->dev_valid, p->base + p->dev_valid,
                               (size_t)(p->used - p->dev_valid)));
        p->dev_valid = p->used;
    }
    *buf = p->dev;
    return HISP_SUCCESS;
}

void hispi_pool_dev_release(hisp_context ctx, hispi_pool *p)
{
    if (--p->dev_users > 0 || !p->dev) return;
    p->dev_users = 0;
    ctx->ops->buf_free(ctx->be, p->dev);
    p->dev = NULL;
    p->dev_cap = p->dev_valid = 0;
}
