/* The basics the core and its backends share (part of the backend contract,
 * core/backend/backend.h): visibility and format attributes, HISPI_TRY, and
 * the core services a backend may call -- errors, overflow-checked
 * allocation, host<->device and build counters, the disk cache's files,
 * hashing, the clock, host threads, the test hooks backends read. The
 * definitions live in core/base/. Includes only hisp.h. */
#ifndef HISPI_BACKEND_BASICS_H
#define HISPI_BACKEND_BASICS_H

#include "hisp.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define HISPI_LOCAL __attribute__((visibility("hidden")))
#define HISPI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define HISPI_LOCAL
#define HISPI_PRINTF(a, b)
#endif

#define HISPI_TRY(expr)                                                                            \
    do {                                                                                           \
        hisp_status hispi_s_ = (expr);                                                             \
        if (hispi_s_ != HISP_SUCCESS) return hispi_s_;                                             \
    } while (0)

/* ---- errors: record on the context, return the status ------------------ */

HISPI_LOCAL hisp_status hispi_fail(hisp_context ctx, hisp_status s, const char *fmt, ...)
    HISPI_PRINTF(3, 4);
/* Parse error with a file name and 1-based line. */
HISPI_LOCAL hisp_status hispi_fail_at(hisp_context ctx, const char *file, int64_t line,
                                      const char *fmt, ...) HISPI_PRINTF(4, 5);
/* Backend error with its native code (cudaError_t, cl_int). */
HISPI_LOCAL hisp_status hispi_fail_native(hisp_context ctx, hisp_status s, int64_t code,
                                          const char *fmt, ...) HISPI_PRINTF(4, 5);
/* Attach a kernel build log (copied) to the last error. */
HISPI_LOCAL void hispi_set_build_log(hisp_context ctx, const char *log);
/* A non-error remark (why a backend has no device). */
HISPI_LOCAL void hispi_note(hisp_context ctx, const char *fmt, ...) HISPI_PRINTF(2, 3);
HISPI_LOCAL void hispi_clear_error(hisp_context ctx);

/* Debug trace to stderr while a context has the debug option on. */
HISPI_LOCAL void hispi_debug(const char *fmt, ...) HISPI_PRINTF(1, 2);
HISPI_LOCAL bool hispi_debug_on(void);

/* ---- memory: overflow-checked, failures recorded ------------------------ */

/* *out = malloc(n * size); fails with OUT_OF_HOST_MEMORY on overflow or
 * exhaustion. n == 0 gives a non-NULL 1-byte allocation. */
HISPI_LOCAL hisp_status hispi_alloc(hisp_context ctx, size_t n, size_t size, void **out);
HISPI_LOCAL hisp_status hispi_calloc(hisp_context ctx, size_t n, size_t size, void **out);
HISPI_LOCAL hisp_status hispi_realloc(hisp_context ctx, void **p, size_t n, size_t size);

/* ---- transfer accounting (core/base/context.c) -------------------------- */

enum { HISPI_H2D = 0, HISPI_D2H = 1, HISPI_CONTROL = 2 };
/* Count `bytes` moved between host and device memory by the context's
 * backend: every backend copy of data calls it (buf_write, buf_read and the
 * backends' internal copies); control words (queue counters, flags) count as
 * HISPI_CONTROL. */
HISPI_LOCAL void hispi_xfer(hisp_context ctx, int dir, uint64_t bytes);
/* The backend's buf_write / buf_read of control words (queue counters,
 * flags, a root queue entry), counted as HISPI_CONTROL. */
HISPI_LOCAL hisp_status hispi_ctl_write(hisp_context ctx, void *be, void *buf, size_t off,
                                        const void *src, size_t bytes);
HISPI_LOCAL hisp_status hispi_ctl_read(hisp_context ctx, void *be, const void *buf, size_t off,
                                       void *dst, size_t bytes);
/* A scratch device buffer of one operation (the backend's tmp_alloc, else
 * buf_alloc) and its free. */
HISPI_LOCAL hisp_status hispi_tmp_alloc(hisp_context ctx, size_t bytes, void **buf);
HISPI_LOCAL void hispi_tmp_free(hisp_context ctx, void *buf);

/* ---- kernel build accounting (core/base/context.c) ---------------------- */

/* Right before ctx's backend compiles n programs from source for the device
 * named `device`: the context's build notice (hisp_context_set_build_notify). */
HISPI_LOCAL void hispi_build_begin(hisp_context ctx, const char *device, int n);
/* n programs compiled from source (from_cache false) or loaded from the
 * disk cache, in ms of host time. */
HISPI_LOCAL void hispi_build_count(hisp_context ctx, bool from_cache, int n, double ms);

/* ---- misc ---------------------------------------------------------------- */

/* Host threads for `work` entries: 1 below HISPI_PARALLEL_WORK, else the
 * threads option (0: one per core, at most 16). ctx may be NULL (no option). */
enum { HISPI_PARALLEL_WORK = 200000 };
HISPI_LOCAL int hispi_threads(hisp_context ctx, double work);
/* 64-bit FNV-1a. */
HISPI_LOCAL uint64_t hispi_hash(const void *data, size_t n, uint64_t seed);
/* Monotonic host clock in milliseconds. */
HISPI_LOCAL double hispi_now_ms(void);
/* The disk cache file DIR/PREFIX-KEY.EXT, DIR = ctx's cache_dir option, else
 * $XDG_CACHE_HOME/hisp, else ~/.cache/hisp; 0 when caching is off
 * (cache_dir=off, no home) or the path does not fit. */
HISPI_LOCAL int hispi_cache_file(hisp_context ctx, const char *prefix, uint64_t key,
                                 const char *ext, char *out, size_t size);
/* Reads the payload of the entry at path into *payload (malloc'd): 1 on a
 * hit, 0 when there is no file, -1 when what is there does not validate
 * (a miss the caller rebuilds and overwrites). */
HISPI_LOCAL int hispi_cache_read(const char *path, void **payload, size_t *n);
/* Writes payload as a validated entry, atomically, creating the folders;
 * 0 or an errno value. */
HISPI_LOCAL int hispi_cache_write(const char *path, const void *payload, size_t n);
/* (core/base/threads.c) fn(arg) run on `threads` threads (the caller included; hispi_threads);
 * fn must share its work through an atomic counter. */
HISPI_LOCAL void hispi_parallel(int threads, void *(*fn)(void *), void *arg);

/* Test hooks of HiSparse (set by the tests, never by the environment;
 * defined in core/hisparse/hisparse_sched.c; 0 is the default everywhere).
 * SpMV: cl_atomic: OpenCL on a CPU runs the GPUs' atomic mapping instead of
 * the owner one; cl_parts: the owner mapping's ranges (0: 8 per compute
 * unit; read at upload); cuda_host_controller: CUDA polls the scheduler's
 * rounds from the host (compute-sanitizer racecheck cannot follow
 * device-side launches).
 * Addition: add_group: work-group size 64 or 256 (256 only where the device
 * allows it); add_leaf_max: leaf pairs of more entries go to the work-group
 * kernel (instead of HISPI_ADD_MANY; at least HISPI_ADD_FEW); add_pool_bytes:
 * the device pool's first room for C (forces regrowth); add_census_check: a
 * census in threads is checked against one thread's; walk_threads: threads
 * of the host's tree walks (1..16). */
typedef struct {
    int cl_atomic, cl_parts, cuda_host_controller;
    int add_group, add_census_check, walk_threads;
    uint64_t add_leaf_max, add_pool_bytes;
} hispi_hs_hooks;
HISPI_LOCAL extern hispi_hs_hooks hispi_hs_hook;

/* Test hooks of the CSR SpMV (never set by the library; tests and
 * benchmarks reach paths a small matrix or a CPU device would not take):
 * cl_variant: the OpenCL kernel family (0: the device's; 1 chunk, 2 vector,
 * 3 block); t_mode: op = T (0: the family's; 1: the atomic scatter, the
 * fallback where the transposed copy does not fit; 2: the transposed copy);
 * wide_ptr: 64-bit row pointers (otherwise only from 2^31 entries). Read at
 * upload. */
typedef struct {
    int cl_variant, t_mode, wide_ptr;
} hispi_spmv_hooks;
HISPI_LOCAL extern hispi_spmv_hooks hispi_spmv_hook;

#endif
