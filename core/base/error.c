/* Status strings and the per-context last-error record. */
#include "hispi.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *hisp_status_string(hisp_status s)
{
    switch (s) {
    case HISP_SUCCESS:
        return "success";
    case HISP_ERR_INVALID_ARGUMENT:
        return "invalid argument";
    case HISP_ERR_INVALID_HANDLE:
        return "invalid handle";
    case HISP_ERR_INPUT_FORMAT:
        return "input format error";
    case HISP_ERR_IO:
        return "I/O error";
    case HISP_ERR_OUT_OF_HOST_MEMORY:
        return "out of host memory";
    case HISP_ERR_OUT_OF_DEVICE_MEMORY:
        return "out of device memory";
    case HISP_ERR_UNSUPPORTED:
        return "unsupported";
    case HISP_ERR_NO_DEVICE:
        return "no device";
    case HISP_ERR_BACKEND:
        return "backend error";
    case HISP_ERR_KERNEL_BUILD:
        return "kernel build failed";
    case HISP_ERR_NOT_COMPILED:
        return "backend not compiled in";
    }
    return "unknown status";
}

/* This thread's last refused claim of a context held by another thread:
 * its message, kept here so that the holder's error record is not written
 * from two threads (cleared by this thread's next claim of that context). */
static _Thread_local struct {
    hisp_context ctx;
    char message[256];
} refused;

void hispi_clear_error(hisp_context ctx)
{
    if (!ctx) return;
    free(ctx->err.build_log);
    char note[sizeof ctx->err.note];
    memcpy(note, ctx->err.note, sizeof note);
    memset(&ctx->err, 0, sizeof ctx->err);
    memcpy(ctx->err.note, note, sizeof note);
}

static hisp_status record(hisp_context ctx, hisp_status s, const char *file, int64_t line,
                          int64_t native, const char *fmt, va_list ap)
{
    if (!hispi_ctx_ok(ctx)) return s;
    if (refused.ctx == ctx) refused.ctx = NULL; /* this thread's newer failure */
    hispi_clear_error(ctx);
    ctx->err.status = s;
    ctx->err.line = line;
    ctx->err.native_code = native;
    if (file) snprintf(ctx->err.file, sizeof ctx->err.file, "%s", file);
    vsnprintf(ctx->err.message, sizeof ctx->err.message, fmt, ap);
    hispi_debug("error %d (%s): %s%s%s", (int)s, hisp_status_string(s), file ? file : "",
                file ? ": " : "", ctx->err.message);
    return s;
}

hisp_status hispi_fail(hisp_context ctx, hisp_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record(ctx, s, NULL, 0, 0, fmt, ap);
    va_end(ap);
    return s;
}

hisp_status hispi_fail_at(hisp_context ctx, const char *file, int64_t line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record(ctx, HISP_ERR_INPUT_FORMAT, file, line, 0, fmt, ap);
    va_end(ap);
    return HISP_ERR_INPUT_FORMAT;
}

hisp_status hispi_fail_native(hisp_context ctx, hisp_status s, int64_t code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record(ctx, s, NULL, 0, code, fmt, ap);
    va_end(ap);
    return s;
}

void hispi_set_build_log(hisp_context ctx, const char *log)
{
    if (!ctx || !log) return;
    free(ctx->err.build_log);
    ctx->err.build_log = strdup(log); /* NULL on exhaustion: the log is optional */
}

void hispi_note(hisp_context ctx, const char *fmt, ...)
{
    if (!ctx) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->err.note, sizeof ctx->err.note, fmt, ap);
    va_end(ap);
}

/* Why this thread's last hisp_context_create failed (HISP_OPTIONS). */
static _Thread_local struct {
    hisp_status status;
    char message[1024];
} create_err;

void hispi_create_failed(hisp_context ctx)
{
    create_err.status = ctx->err.status;
    snprintf(create_err.message, sizeof create_err.message, "%s", ctx->err.message);
}

static _Thread_local char thread_token; /* its address names the thread */

hisp_status hispi_ctx_claim(hisp_context ctx)
{
    const void *me = &thread_token, *none = NULL;
    if (atomic_load_explicit(&ctx->owner, memory_order_relaxed) == me) {
        ctx->depth++;
        return HISP_SUCCESS;
    }
    if (!atomic_compare_exchange_strong_explicit(&ctx->owner, &none, me, memory_order_acquire,
                                                 memory_order_relaxed)) {
        refused.ctx = ctx;
        snprintf(refused.message, sizeof refused.message,
                 "the context is in use by another thread: a context is used by one thread at "
                 "a time (a context per thread, or the caller's lock around its calls)");
        return HISP_ERR_INVALID_ARGUMENT;
    }
    ctx->depth = 1;
    if (refused.ctx == ctx) refused.ctx = NULL;
    return HISP_SUCCESS;
}

void hispi_ctx_release(hisp_context ctx)
{
    if (--ctx->depth == 0) atomic_store_explicit(&ctx->owner, NULL, memory_order_release);
}

hisp_status hisp_context_last_error(hisp_context ctx, hisp_error_info *info)
{
    if (!info) return HISP_ERR_INVALID_ARGUMENT;
    if (!ctx) {
        *info = (hisp_error_info){.status = create_err.status, .message = create_err.message};
        return HISP_SUCCESS;
    }
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (refused.ctx == ctx) {
        *info = (hisp_error_info){.status = HISP_ERR_INVALID_ARGUMENT, .message = refused.message};
        return HISP_SUCCESS;
    }
    info->status = ctx->err.status;
    info->message = ctx->err.message[0] ? ctx->err.message : ctx->err.note;
    info->file = ctx->err.file[0] ? ctx->err.file : NULL;
    info->line = ctx->err.line;
    info->native_code = ctx->err.native_code;
    info->build_log = ctx->err.build_log;
    return HISP_SUCCESS;
}

void hispi_debug(const char *fmt, ...)
{
    if (!hispi_debug_on()) return;
    va_list ap;
    va_start(ap, fmt);
    fputs("hisp: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}
