/* Contexts: backend selection and device discovery. */
#include "backend/backend.h"
#include "hispi.h"

#include <pthread.h>
#include <stdatomic.h>

#include <stdlib.h>
#include <string.h>
#include <strings.h>

hisp_status hispi_be_missing(hisp_context ctx, const hisp_backend_ops *ops, const char *slot)
{
    return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "the %s backend has no %s", ops->name, slot);
}

bool hispi_ctx_ok(hisp_context ctx)
{
    return hispi_handle_live(ctx, HISPI_H_CONTEXT);
}

const char *hisp_backend_name(hisp_backend_kind k)
{
    switch (k) {
    case HISP_BACKEND_AUTO:
        return "auto";
    case HISP_BACKEND_REFERENCE:
        return "reference";
    case HISP_BACKEND_OPENCL:
        return "opencl";
    case HISP_BACKEND_CUDA:
        return "cuda";
    default:
        return "invalid";
    }
}

hisp_status hisp_backend_from_name(const char *name, hisp_backend_kind *k)
{
    if (!name || !k) return HISP_ERR_INVALID_ARGUMENT;
    for (int i = HISP_BACKEND_AUTO; i < HISP_BACKEND_COUNT; i++)
        if (strcasecmp(name, hisp_backend_name((hisp_backend_kind)i)) == 0) {
            *k = (hisp_backend_kind)i;
            return HISP_SUCCESS;
        }
    if (strcasecmp(name, "ref") == 0 || strcasecmp(name, "cpu") == 0) {
        *k = HISP_BACKEND_REFERENCE;
        return HISP_SUCCESS;
    }
    return HISP_ERR_INVALID_ARGUMENT;
}

int hisp_backend_compiled(hisp_backend_kind kind)
{
    return kind >= 0 && kind < HISP_BACKEND_COUNT && hispi_backends[kind] != NULL;
}

void hispi_devobj_attach(hisp_context ctx, hispi_devobj *o, void (*drop)(hispi_devobj *))
{
    o->drop_device = drop;
    o->next = ctx->objects.next;
    o->prev = &ctx->objects;
    ctx->objects.next->prev = o;
    ctx->objects.next = o;
}

void hispi_devobj_detach(hispi_devobj *o)
{
    if (!o->next) return;
    o->prev->next = o->next;
    o->next->prev = o->prev;
    o->next = o->prev = NULL;
}

hisp_status hispi_settle(hisp_context ctx)
{
    return ctx->settle ? ctx->settle(ctx) : HISP_SUCCESS;
}

static void close_backend(hisp_context ctx)
{
    if (ctx->ops && hispi_settle(ctx) != HISP_SUCCESS)
        hispi_debug("the last HiSparse SpMV failed its scheduler check");
    for (hispi_devobj *o = ctx->objects.next; o != &ctx->objects; o = o->next)
        o->drop_device(o);
    if (ctx->ops && ctx->be) HISPI_BE_VOID_ON(ctx->ops, fini, ctx->be);
    ctx->ops = NULL;
    ctx->be = NULL;
}

/* ---- device instances kept for the next MSREP plan (hispi.h) ---------- */

typedef struct hispi_parked {
    struct hispi_parked *next;
    hisp_backend_kind kind;
    int device, sub, nsub;
    void *be;
} hispi_parked;

/* every context's list: plans' workers park and unpark from their threads */
static pthread_mutex_t park_mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_long opened; /* device backends' instances opened by init / init_sub */

long hispi_context_instances_opened(void)
{
    return atomic_load(&opened);
}

static void parked_close(hispi_parked *p)
{
    HISPI_BE_VOID_ON(hispi_backends[p->kind], fini, p->be);
    free(p);
}

void hispi_context_park(hisp_context home, hisp_context ctx, int sub, int nsub)
{
    /* OpenCL only: the other backends' instances cost a plan little to make */
    if (!hispi_ctx_ok(home) || !ctx->ops || !ctx->be || ctx->stream ||
        ctx->kind != HISP_BACKEND_OPENCL)
        return; /* destroyed with ctx */
    hispi_parked *p = calloc(1, sizeof *p);
    if (!p) return;
    if (hispi_settle(ctx) != HISP_SUCCESS)
        hispi_debug("the last HiSparse SpMV failed its scheduler check");
    for (hispi_devobj *o = ctx->objects.next; o != &ctx->objects; o = o->next)
        o->drop_device(o);
    *p = (hispi_parked){NULL, ctx->kind, ctx->device, sub, nsub, ctx->be};
    ctx->ops = NULL;
    ctx->be = NULL;
    hispi_parked *drop = NULL;
    pthread_mutex_lock(&park_mu);
    p->next = home->parked;
    home->parked = p;
    int n = 0;
    for (hispi_parked *q = home->parked; q; q = q->next)
        if (++n == HISPI_PARKED_MAX && q->next) { /* the oldest beyond the cap */
            drop = q->next;
            q->next = NULL;
        }
    pthread_mutex_unlock(&park_mu);
    while (drop) {
        hispi_parked *q = drop->next;
        parked_close(drop);
        drop = q;
    }
}

bool hispi_context_unpark(hisp_context home, hisp_context ctx, hisp_backend_kind kind, int device,
                          int sub, int nsub)
{
    hispi_parked *p = NULL;
    pthread_mutex_lock(&park_mu);
    for (hispi_parked **pp = &home->parked; *pp; pp = &(*pp)->next)
        if ((*pp)->kind == kind && (*pp)->device == device && (*pp)->sub == sub &&
            (*pp)->nsub == nsub) {
            p = *pp;
            *pp = p->next;
            break;
        }
    pthread_mutex_unlock(&park_mu);
    if (!p) return false;
    close_backend(ctx);
    ctx->ops = hispi_backends[kind];
    ctx->be = p->be;
    ctx->kind = kind;
    ctx->device = device;
    ctx->stream = NULL;
    free(p);
    return true;
}

static void parked_close_all(hisp_context ctx)
{
    pthread_mutex_lock(&park_mu);
    hispi_parked *p = ctx->parked;
    ctx->parked = NULL;
    pthread_mutex_unlock(&park_mu);
    while (p) {
        hispi_parked *q = p->next;
        parked_close(p);
        p = q;
    }
}

static hisp_status open_backend(hisp_context ctx, hisp_backend_kind kind, int device)
{
    const hisp_backend_ops *ops = hispi_backends[kind];
    int n = 0;
    HISPI_TRY(HISPI_BE_ON(ctx, ops, device_count, &n));
    if (n == 0)
        return hispi_fail(ctx, HISP_ERR_NO_DEVICE, "%s backend: %s", ops->name,
                          ctx->err.note[0] ? ctx->err.note : "no device found");
    if (device >= n)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "%s backend: device %d requested, %d available", ops->name, device, n);
    void *be = NULL;
    HISPI_TRY(HISPI_BE_ON(ctx, ops, init, device < 0 ? 0 : device, &be));
    if (kind != HISP_BACKEND_REFERENCE) atomic_fetch_add(&opened, 1);
    close_backend(ctx);
    ctx->ops = ops;
    ctx->be = be;
    ctx->kind = kind;
    ctx->device = device < 0 ? 0 : device;
    ctx->stream = NULL;
    return HISP_SUCCESS;
}

/* MSREP: switch to part `sub` of `nsub` sub-devices of a device (see
 * hisp_backend_ops.init_sub). */
hisp_status hispi_context_set_subdevice(hisp_context ctx, hisp_backend_kind kind, int device,
                                        int sub, int nsub)
{
    if ((int)kind < 0 || kind >= HISP_BACKEND_COUNT || !hispi_backends[kind])
        return hispi_fail(ctx, HISP_ERR_NOT_COMPILED, "backend %d is not compiled in", (int)kind);
    const hisp_backend_ops *ops = hispi_backends[kind];
    if (!HISPI_BE_HAS_ON(ops, init_sub))
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "the %s backend has no sub-devices",
                          ops->name);
    int n = 0;
    HISPI_TRY(HISPI_BE_ON(ctx, ops, device_count, &n));
    if (device < 0 || device >= n)
        return hispi_fail(ctx, n ? HISP_ERR_INVALID_ARGUMENT : HISP_ERR_NO_DEVICE,
                          "%s backend: device %d requested, %d available", ops->name, device, n);
    void *be = NULL;
    HISPI_TRY(HISPI_BE_ON(ctx, ops, init_sub, device, sub, nsub, &be));
    atomic_fetch_add(&opened, 1);
    close_backend(ctx);
    ctx->ops = ops;
    ctx->be = be;
    ctx->kind = kind;
    ctx->device = device;
    ctx->stream = NULL;
    return HISP_SUCCESS;
}

static hisp_status set_stream(hisp_context ctx, void *stream);

hisp_status hisp_context_set_stream(hisp_context ctx, void *stream)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    HISPI_CLAIMED(ctx, set_stream(ctx, stream));
}

static hisp_status set_stream(hisp_context ctx, void *stream)
{
    const hisp_backend_ops *ops = ctx->ops;
    if (!HISPI_BE_HAS(ctx, stream_set)) {
        if (!stream) return HISP_SUCCESS;
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "the %s backend takes no stream", ops->name);
    }
    if (stream == ctx->stream) return HISP_SUCCESS;
    HISPI_TRY(hispi_settle(ctx)); /* the old stream's HiSparse work is checked there */
    void *be = NULL;
    int device = ctx->device;
    HISPI_TRY(HISPI_BE(ctx, stream_set, stream, &be, &device));
    if (be) { /* another device context: every device copy goes as on a switch */
        close_backend(ctx);
        ctx->ops = ops;
        ctx->be = be;
        if (device >= 0) ctx->device = device;
    }
    ctx->stream = stream;
    return HISP_SUCCESS;
}

hisp_status hisp_context_get_stream(hisp_context ctx, void **stream)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!stream) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "stream is NULL");
    *stream = HISPI_BE_HAS(ctx, stream_get) ? ctx->ops->stream_get(ctx->be) : NULL; /* no status */
    return HISP_SUCCESS;
}

hisp_status hisp_context_create(hisp_context *out)
{
    if (!out) return HISP_ERR_INVALID_ARGUMENT;
    *out = NULL;
    hisp_context ctx = calloc(1, sizeof *ctx);
    if (!ctx) return HISP_ERR_OUT_OF_HOST_MEMORY;
    ctx->magic = HISPI_MAGIC_CONTEXT;
    ctx->objects.next = ctx->objects.prev = &ctx->objects;
    hisp_status s = hispi_handle_add(ctx, HISPI_H_CONTEXT, NULL);
    if (s != HISP_SUCCESS) {
        free(ctx);
        return s;
    }
    hispi_options_init(ctx);
    const char *env = getenv("HISP_OPTIONS");
    if (env && (s = hispi_options_parse(ctx, env)) != HISP_SUCCESS) {
        hispi_create_failed(ctx);
        hispi_options_fini(ctx);
        hispi_clear_error(ctx);
        hispi_handle_free(ctx);
        return s;
    }
    s = open_backend(ctx, HISP_BACKEND_REFERENCE, 0);
    if (s != HISP_SUCCESS) {
        hispi_create_failed(ctx);
        hispi_options_fini(ctx);
        hispi_clear_error(ctx);
        hispi_handle_free(ctx);
        return s;
    }
    *out = ctx;
    return HISP_SUCCESS;
}

void hisp_context_destroy(hisp_context *pctx)
{
    if (!pctx || !hispi_ctx_ok(*pctx)) return;
    hisp_context ctx = *pctx;
    close_backend(ctx);
    parked_close_all(ctx);
    /* objects outliving their context are cut loose; the registry orphans
     * them below (refused by every call but their destroy) */
    while (ctx->objects.next != &ctx->objects)
        hispi_devobj_detach(ctx->objects.next);
    hispi_clear_error(ctx);
    hispi_options_fini(ctx);
    ctx->magic = 0;
    hispi_handle_free(ctx);
    *pctx = NULL;
}

static hisp_status set_backend(hisp_context ctx, hisp_backend_kind kind, int device);

hisp_status hisp_context_set_backend(hisp_context ctx, hisp_backend_kind kind, int device)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    HISPI_CLAIMED(ctx, set_backend(ctx, kind, device));
}

static hisp_status set_backend(hisp_context ctx, hisp_backend_kind kind, int device)
{
    if (kind == HISP_BACKEND_AUTO) {
        static const hisp_backend_kind order[] = {HISP_BACKEND_CUDA, HISP_BACKEND_OPENCL,
                                                  HISP_BACKEND_REFERENCE};
        for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
            if (!hispi_backends[order[i]]) continue;
            if (open_backend(ctx, order[i], device) == HISP_SUCCESS) {
                hispi_clear_error(ctx);
                return HISP_SUCCESS;
            }
        }
        return ctx->err.status;
    }
    if ((int)kind < 0 || kind >= HISP_BACKEND_COUNT)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "unknown backend %d", (int)kind);
    if (!hispi_backends[kind])
        return hispi_fail(ctx, HISP_ERR_NOT_COMPILED,
                          "the %s backend is not compiled into "
                          "this build of hisp",
                          hisp_backend_name(kind));
    return open_backend(ctx, kind, device);
}

hisp_status hisp_context_get_device(hisp_context ctx, hisp_device_info *info)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!info) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "info is NULL");
    return HISPI_BE_ON(ctx, ctx->ops, device_info, ctx->device, info);
}

static hisp_status synchronize(hisp_context ctx)
{
    HISPI_TRY(HISPI_BE_SYNC(ctx));
    return hispi_settle(ctx);
}

hisp_status hisp_context_synchronize(hisp_context ctx)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    HISPI_CLAIMED(ctx, synchronize(ctx));
}

void hispi_xfer(hisp_context ctx, int dir, uint64_t bytes)
{
    if (!ctx || !bytes) return;
    if (dir == HISPI_H2D) {
        ctx->xfer.h2d_bytes += bytes;
        ctx->xfer.h2d_calls++;
    } else if (dir == HISPI_D2H) {
        ctx->xfer.d2h_bytes += bytes;
        ctx->xfer.d2h_calls++;
    } else {
        ctx->xfer.control_bytes += bytes;
    }
}

/* What the backend's buf_write / buf_read counted as data since *b moves to
 * control (those slots cannot tell a counter from a vector). */
static void as_control(hisp_context ctx, const hisp_transfer_stats *b)
{
    hisp_transfer_stats *x = &ctx->xfer;
    x->control_bytes += (x->h2d_bytes - b->h2d_bytes) + (x->d2h_bytes - b->d2h_bytes);
    x->h2d_bytes = b->h2d_bytes;
    x->d2h_bytes = b->d2h_bytes;
    x->h2d_calls = b->h2d_calls;
    x->d2h_calls = b->d2h_calls;
}

hisp_status hispi_ctl_write(hisp_context ctx, void *be, void *buf, size_t off, const void *src,
                            size_t bytes)
{
    hisp_transfer_stats b = ctx->xfer;
    hisp_status s = HISPI_BE_ON(ctx, ctx->ops, buf_write, be, buf, off, src, bytes);
    as_control(ctx, &b);
    return s;
}

hisp_status hispi_ctl_read(hisp_context ctx, void *be, const void *buf, size_t off, void *dst,
                           size_t bytes)
{
    hisp_transfer_stats b = ctx->xfer;
    hisp_status s = HISPI_BE_ON(ctx, ctx->ops, buf_read, be, buf, off, dst, bytes);
    as_control(ctx, &b);
    return s;
}

hisp_status hispi_tmp_alloc(hisp_context ctx, size_t bytes, void **buf)
{
    return HISPI_BE_HAS(ctx, tmp_alloc) ? HISPI_BE(ctx, tmp_alloc, bytes, buf)
                                        : HISPI_BE(ctx, buf_alloc, bytes, buf);
}

void hispi_tmp_free(hisp_context ctx, void *buf)
{
    if (HISPI_BE_HAS(ctx, tmp_alloc))
        HISPI_BE_VOID(ctx, tmp_free, buf);
    else
        HISPI_BE_VOID(ctx, buf_free, buf);
}

hisp_status hisp_context_transfers(hisp_context ctx, hisp_transfer_stats *st)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!st) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "stats is NULL");
    *st = ctx->xfer;
    return HISP_SUCCESS;
}

hisp_status hisp_context_reset_transfers(hisp_context ctx)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    memset(&ctx->xfer, 0, sizeof ctx->xfer);
    return HISP_SUCCESS;
}

void hispi_build_begin(hisp_context ctx, const char *device, int n)
{
    if (!ctx || !ctx->build_notify.fn || n <= 0) return;
    char dir[900];
    hisp_build_event e = {ctx->kind, device ? device : "",
                          hispi_cache_dir(ctx, dir, sizeof dir) ? dir : NULL, n};
    ctx->build_notify.fn(ctx->build_notify.user, &e);
}

void hispi_build_count(hisp_context ctx, bool from_cache, int n, double ms)
{
    if (!ctx || n <= 0) return;
    if (ms < 0) ms = 0;
    if (from_cache) {
        ctx->builds.loaded += (uint64_t)n;
        ctx->builds.load_ms += ms;
    } else {
        ctx->builds.built += (uint64_t)n;
        ctx->builds.build_ms += ms;
    }
}

hisp_status hisp_context_builds(hisp_context ctx, hisp_build_stats *st)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!st) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "stats is NULL");
    *st = ctx->builds;
    return HISP_SUCCESS;
}

hisp_status hisp_context_reset_builds(hisp_context ctx)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    memset(&ctx->builds, 0, sizeof ctx->builds);
    return HISP_SUCCESS;
}

hisp_status hisp_context_set_build_notify(hisp_context ctx, hisp_build_notify fn, void *user)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    ctx->build_notify.fn = fn;
    ctx->build_notify.user = fn ? user : NULL;
    return HISP_SUCCESS;
}

hisp_status hisp_backend_device_count(hisp_context ctx, hisp_backend_kind kind, int *count)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!count) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "count is NULL");
    *count = 0;
    if ((int)kind < 0 || kind >= HISP_BACKEND_COUNT)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "unknown backend %d", (int)kind);
    if (!hispi_backends[kind]) {
        hispi_note(ctx, "the %s backend is not compiled into this build", hisp_backend_name(kind));
        return HISP_SUCCESS;
    }
    ctx->err.note[0] = 0;
    return HISPI_BE_ON(ctx, hispi_backends[kind], device_count, count);
}

hisp_status hisp_backend_device_info(hisp_context ctx, hisp_backend_kind kind, int index,
                                     hisp_device_info *info)
{
    int n = 0;
    HISPI_TRY(hisp_backend_device_count(ctx, kind, &n));
    if (!info) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "info is NULL");
    if (index < 0 || index >= n)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "%s: no device %d (%d available)",
                          hisp_backend_name(kind), index, n);
    memset(info, 0, sizeof *info);
    return HISPI_BE_ON(ctx, hispi_backends[kind], device_info, index, info);
}
