/* The backend contract: the one seam between the core and a device. The ops
 * table every backend fills (reference, OpenCL, CUDA), the views it receives
 * (CSR, wrapped CSR, HiSparse and the scheduler's arguments: sched_view.h),
 * the run-time programs, the dispatch macros of the core's calls, and the
 * core services a backend may call (basics.h). It lives with the core
 * (core/backend/, as core/format/ holds the format seam) and includes
 * nothing of the core's internals: only hisp.h.
 *
 * A backend instance ("be") is created by init() for one device and owned by
 * a context. Buffers are opaque handles (a cl_mem, a device pointer, a host
 * pointer). Every slot reports failures through hispi_fail() on the context
 * it is given, and returns a hisp_status. A NULL slot means "not provided":
 * the core turns it into HISP_ERR_UNSUPPORTED.
 */
#ifndef HISP_BACKEND_H
#define HISP_BACKEND_H

#include "backend/basics.h"
#include "backend/csr_plan.h"
#include "backend/sched_view.h"
#include "hisp.h"

/* A CSR matrix in device buffers of a backend in hisp's layout: int64 row
 * pointers, int32 columns, zero-based, rows sorted. */
typedef struct {
    int64_t nrows, ncols, nnz;
    const void *rowptr, *colind, *val;
} hispi_dcsr;

/* kern_lane's lanes */
enum { HISPI_LANES = 5 };

/* Bytes a tmp_alloc pool keeps between operations (256 MiB). */
#define HISPI_TMP_KEEP ((size_t)256 << 20)

/* The caller's device arrays of a wrapped CSR matrix (hisp_matrix_wrap_csr_device):
 * buffers of the context's backend, read in place, never freed by hisp. */
typedef struct {
    void *rowptr, *colind, *val;
    int ptr64, idx64; /* 64-bit row pointers / column indices */
    int base;         /* 0 or 1 */
    bool retained;    /* hisp holds a reference to each array (buf_retain) */
    bool pooled;      /* retained arrays of hispi_tmp_alloc (hispi_matrix_wrap_pooled) */
    bool made;        /* hisp made the arrays (a product's, a setup's): valid as they are */
} hispi_csr_ext;

/* A CSR matrix as the backends receive it (host arrays, read only). */
typedef struct {
    hisp_type type;
    int64_t nrows, ncols, nnz;
    const int64_t *rowptr; /* nrows + 1 */
    const int32_t *colind; /* nnz */
    const void *val;       /* nnz entries */
} hispi_csr_view;

/* MSREP options of csr_upload_opts. vendor: the vendor library's kernel
 * (cuSPARSE) instead of hisp's. gptr: A->rowptr holds a part's slice of the
 * global pointers (nrows + 1 entries) and the backend derives the local ones
 * on the device, clamp(rowptr[i], ptr_base, ptr_base + nnz) - ptr_base (the
 * MSREP paper's p*-opt: no local copy on the host). */
typedef struct {
    int vendor, gptr;
    int64_t ptr_base;
} hispi_csr_opts;

/* hisp_backend_ops.csr_caps */
#define HISPI_CSR_VENDOR 1u      /* csr_upload takes vendor */
#define HISPI_CSR_GPTR 2u        /* gptr with hisp's kernel */
#define HISPI_CSR_VENDOR_GPTR 4u /* gptr with the vendor kernel */
#define HISPI_CSR_WRAP_DEVICE 8u /* csr_wrap plans without host row pointers */

/* Run-time kernels: programs, capabilities, arguments.
 *
 * The programs of kern_get, one line each: X(ID, FILE, CUDA) gives
 * HISPI_PROG_<ID> for kernels/<FILE>.cl, compiled after the prelude
 * kernels/common.cl by OpenCL, and by NVRTC too where CUDA is 1. The build
 * embeds every .cl file of kernels/ and makes hispi_programs from these lines, so a
 * new program is its file and one line here. */
#define HISPI_PROGRAMS(X)                                                                          \
    X(COMPOUND, compound_spmv, 1)                                                                  \
    X(HSADD, hisparse_add, 1)                                                                      \
    X(VECTOR, vector, 1)                                                                           \
    X(SELL, sell_spmv, 1)                                                                          \
    X(SPGEMM, spgemm, 1)                                                                           \
    X(SCAN, scan, 1)                                                                               \
    X(AMG, amg, 1)                                                                                 \
    X(ILU, ilu, 1)
#define HISPI_PROG_ENUM_(id, file, cuda) HISPI_PROG_##id,
enum { HISPI_PROGRAMS(HISPI_PROG_ENUM_) HISPI_PROG_COUNT };
typedef struct {
    const char *file;     /* "compound_spmv.cl" */
    const char *src;      /* its text, without the prelude (OpenCL adds it) */
    const char *cuda_src; /* NULL, or the prelude, #line 1 and the text (NVRTC) */
} hispi_program;
/* Indexed by HISPI_PROG_*; exists where a backend with run-time kernels is
 * built in (build/gen/kernels.c). */
extern const hispi_program hispi_programs[HISPI_PROG_COUNT];
/* kernels/common.cl, the prelude of every program */
extern const char hispi_kern_src_common[];
typedef struct {
    int max_group;      /* largest work-group / thread block */
    int simd;           /* warp width / preferred work-group multiple */
    int compute_units;  /* SMs / compute units */
    int launch_bounds;  /* 1: pass NT/NB defines (CUDA __launch_bounds__) */
    char compiler[160]; /* compiler identity (plan and kernel cache keys) */
    int is_cpu;         /* a CPU device (PoCL): work-items should stream contiguous chunks */
    int64_t local_mem;  /* bytes of local (shared) memory a work-group may declare */
} hispi_kcaps;
enum { HISPI_KARG_BUF = 0, HISPI_KARG_I32, HISPI_KARG_I64, HISPI_KARG_F32, HISPI_KARG_F64 };
typedef struct {
    int kind;        /* HISPI_KARG_* */
    const void *buf; /* a buffer handle of this backend */
    int64_t i;
    double d;
} hispi_karg;
/* A kernel's buffer and int64 arguments. */
static inline hispi_karg hispi_kbuf(const void *b)
{
    return (hispi_karg){HISPI_KARG_BUF, b, 0, 0};
}
static inline hispi_karg hispi_ki64(int64_t v)
{
    return (hispi_karg){HISPI_KARG_I64, NULL, v, 0};
}

typedef struct hisp_backend_ops {
    const char *name; /* "reference", "opencl", "cuda" */
    hisp_backend_kind kind;

    /* Devices this backend sees. Must not fail when there are none: set
     * *count = 0 and describe why with hispi_note() (e.g. "no CUDA device:
     * CUDA driver missing"). Required. */
    hisp_status (*device_count)(hisp_context ctx, int *count);
    /* Required. */
    hisp_status (*device_info)(hisp_context ctx, int index, hisp_device_info *info);
    /* Open device `index`; *be gets the instance. Required. */
    hisp_status (*init)(hisp_context ctx, int index, void **be);
    /* Release everything of the instance (buffers are freed by their owners
     * before). Required. */
    void (*fini)(void *be);
    /* Wait for all queued work. Required. */
    hisp_status (*synchronize)(hisp_context ctx, void *be);

    /* Buffers. alloc of 0 bytes must return a valid (freeable) handle.
     * write/read are synchronous with respect to the host memory. */
    hisp_status (*buf_alloc)(hisp_context ctx, void *be, size_t bytes, void **buf);
    void (*buf_free)(void *be, void *buf);
    hisp_status (*buf_write)(hisp_context ctx, void *be, void *buf, size_t offset, const void *src,
                             size_t bytes);
    hisp_status (*buf_read)(hisp_context ctx, void *be, const void *buf, size_t offset, void *dst,
                            size_t bytes);
    hisp_status (*buf_copy)(hisp_context ctx, void *be, void *dst, const void *src, size_t bytes);
    /* Buffers used only in the instance's queue, so that their allocation
     * and freeing may be ordered in it: an operation's scratch, a product's
     * C (CUDA: a pool of the instance's, no device-wide synchronization; it
     * keeps HISPI_TMP_KEEP bytes between operations, the rest goes back to
     * the driver at the next synchronization). NULL: buf_alloc / buf_free
     * serve (hispi_tmp_alloc, hispi_tmp_free). */
    hisp_status (*tmp_alloc)(hisp_context ctx, void *be, size_t bytes, void **buf);
    void (*tmp_free)(void *be, void *buf);

    /* Timing: mark a point in the device's stream; elapsed() waits for both
     * marks and returns the milliseconds between them. */
    hisp_status (*mark_create)(hisp_context ctx, void *be, void **mark);
    hisp_status (*mark_record)(hisp_context ctx, void *be, void *mark);
    hisp_status (*mark_elapsed)(hisp_context ctx, void *be, void *start, void *stop, double *ms);
    void (*mark_destroy)(void *be, void *mark);

    /* CSR SpMV. upload() builds the backend's device representation from a
     * host CSR (it may analyse the matrix, choose index widths, ...);
     * csr_spmv computes y = alpha*op(A)*x + beta*y on device buffers, with
     * alpha/beta given as doubles (converted to the entry type). With beta
     * == 0, y must not be read. */
    hisp_status (*csr_upload)(hisp_context ctx, void *be, const hispi_csr_view *A, void **dev);
    /* MSREP: csr_upload with options; optional, takes the options csr_caps
     * (HISPI_CSR_*) names. The device copy is used by csr_spmv/csr_free. */
    hisp_status (*csr_upload_opts)(hisp_context ctx, void *be, const hispi_csr_view *A,
                                   const hispi_csr_opts *opts, void **dev);
    unsigned csr_caps;
    void (*csr_free)(void *be, void *dev);
    hisp_status (*csr_spmv)(hisp_context ctx, void *be, void *dev, hisp_op op, double alpha,
                            const void *x, double beta, void *y);
    /* Optional (NULL: the core runs csr_spmv, then the vector dot; the CG
     * solver's q = A p, p.q). For an f32/f64 matrix of csr_upload or
     * csr_wrap with xoff + nrows <= ncols (square with xoff 0, or an MSREP
     * part's rows from row xoff): y = A*x as csr_spmv with op N, alpha 1,
     * beta 0 (y not read), and r = sum_i x[xoff + i]*y[i] over the values
     * written to y, summed in double
     * in an order fixed by the matrix (no float atomics: the same bits on
     * every call) and rounded once to the entry type. res_host NULL: r goes
     * to entry res_index of res (a buffer of entries of that type), queued
     * like the SpMV, no wait; else r is written to res_host (one entry) once
     * it is known, and res is not used. Scratch the backend needs is its
     * own (kept with the matrix). */
    hisp_status (*csr_spmv_dot)(hisp_context ctx, void *be, void *dev, const void *x, int64_t xoff,
                                void *y, void *res, int64_t res_index, void *res_host);
    /* Optional (NULL: hisp_spmm refuses on this backend): Y = alpha*op(A)*X +
     * beta*Y over k >= 2 columns for a matrix of csr_upload or csr_wrap
     * (f32/f64; the reference backend any type csr_upload takes, op H
     * conjugating complex entries). X holds ncols(op) x k entries and Y
     * nrows(op) x k, each packed column-major, or row-major where xrow /
     * yrow; X and Y distinct buffers; beta == 0: Y is not read. Queued. */
    hisp_status (*csr_spmm)(hisp_context ctx, void *be, void *dev, hisp_op op, double alpha,
                            const void *x, int xrow, double beta, void *y, int yrow, int64_t k);

    /* HiSparse (docs/FORMAT.md; the scheduler policy in
     * core/backend/sched_view.h). All three NULL: HiSparse SpMV is unsupported
     * on the backend (the reference backend provides them).
     * hisparse_upload makes a matrix's SpMV state over its family's pool,
     * which core keeps on the backend (A->pool_dev, a buf_alloc buffer with
     * the bytes exactly as laid out on the host: references are 64-bit
     * offsets from the pool start, valid as they are; shared by the family's
     * matrices, never freed by the backend), and sizes the queues: queue q
     * never holds more than A->cap[q] entries in one SpMV (each node is
     * queued once). *dev gets the state. */
    hisp_status (*hisparse_upload)(hisp_context ctx, void *be, const hispi_hs_view *A, void **dev);
    void (*hisparse_free)(void *be, void *dev);
    /* y = beta*y (beta == 0: y is not read, it becomes 0), then the
     * scheduler walks the tree from a->root in rounds: each round launches
     * the node kernel of every queue the policy's launch rule picks
     * (hispi_sched_pick), on the entries queued before the round; inner
     * nodes queue their children, leaves add a->alpha * a_ij * x_j into y
     * atomically (with the coordinates swapped when a->transposed). No
     * kernel waits on work queued by its own launch. *counts gets the work
     * done, equal to hispi_sched_spmv_host's -- unless the backend has
     * hisparse_counts: then the call may return with the work queued and
     * *counts untouched. */
    hisp_status (*hisparse_spmv)(hisp_context ctx, void *be, void *dev, const hispi_sched_args *a,
                                 const void *x, void *y, hisp_sched_counts *counts);
    /* Optional. Waits for the last hisparse_spmv, gives its counts and
     * reports a scheduler failure (a queue that did not process every node)
     * of that call. Core calls it before anyone can see the result (vector
     * reads, synchronize, the counts) or the device copy goes away. */
    hisp_status (*hisparse_counts)(hisp_context ctx, void *be, hisp_sched_counts *counts);

    /* MSREP (issue 7): the PCI address "dddd:bb:dd.f" of device `index`, for
     * NUMA placement (hwloc). May be NULL; HISP_ERR_UNSUPPORTED when the
     * device has none (a CPU device). Must not need an open instance. */
    hisp_status (*device_pci)(hisp_context ctx, int index, char *busid, size_t size);
    /* MSREP: open part `sub` of device `index` split into `nsub` parts of
     * about equal compute units (OpenCL sub-devices), like init. May be
     * NULL; HISP_ERR_UNSUPPORTED when the device cannot be split so. */
    hisp_status (*init_sub)(hisp_context ctx, int index, int sub, int nsub, void **be);
    /* MSREP device-side merge. Optional (both NULL: plans merge on the host).
     * A backend offering them lets a buffer of one of its instances be used
     * by any other instance of the same device. buf_peer_copy copies `bytes`
     * from src + src_off (a buffer of instance src_be) to dst + dst_off (of
     * dst_be), the two on any devices of this backend, queued in the queue of
     * q (src_be or dst_be) after its earlier work; the other instance's
     * buffer must stay idle until q is synchronized. */
    hisp_status (*buf_peer_copy)(hisp_context ctx, void *q, void *dst_be, void *dst, size_t dst_off,
                                 void *src_be, const void *src, size_t src_off, size_t bytes);
    /* y[yoff + i] = a*x[xoff + i] + b*y[yoff + i] for i < n, entries of type t
     * (f32 or f64), queued: x NULL drops the a*x term; b == 0: y is not read. */
    hisp_status (*buf_axpby)(hisp_context ctx, void *be, hisp_type t, int64_t n, double a,
                             const void *x, int64_t xoff, double b, void *y, int64_t yoff);

    /* Run-time kernels (compound-entry SpMV variants, core/compound/compound_spmv.c).
     * All NULL: the core runs the variants' host emulation instead (the
     * reference backend). kern_get builds (or finds in its caches: memory
     * and disk, keyed by device, source, options and compiler version)
     * kernel `name` of program `prog` compiled with `opts` (-D defines, the
     * same on every backend); the handle is released with kern_free.
     * kern_launch runs it on groups x group_size work-items, asynchronously
     * in the instance's queue; buf_zero fills bytes [off, off + bytes) of a
     * buffer with zeros in the same queue. */
    hisp_status (*kern_caps)(hisp_context ctx, void *be, hispi_kcaps *caps);
    hisp_status (*kern_get)(hisp_context ctx, void *be, int prog, const char *opts,
                            const char *name, void **k);
    /* Optional (NULL: nothing to gain): build the programs of these n option
     * strings into the caches on several host threads, so that kern_get
     * finds them. Best effort: a build that fails is left for kern_get to
     * report; only running out of memory is an error here. */
    hisp_status (*kern_prebuild)(hisp_context ctx, void *be, int prog, const char *const *opts,
                                 int n);
    /* Optional (NULL: yes): whether kern_get can build any options, not
     * only those compiled with the library (CUDA: NVRTC opens). An
     * operation with a host path (SpGEMM) asks before it starts. */
    hisp_status (*kern_any)(hisp_context ctx, void *be);
    void (*kern_free)(void *be, void *k);
    /* Optional: kernels in lanes. lane in 1..HISPI_LANES: the launches
     * until the next call go to a queue of that lane's, which starts after
     * the work queued so far; 0 joins: the instance's queue waits for every
     * lane used since, and launches go to it again. For independent
     * kernels that each leave the device mostly idle. NULL: one queue. */
    hisp_status (*kern_lane)(hisp_context ctx, void *be, int lane);
    hisp_status (*kern_launch)(hisp_context ctx, void *be, void *k, const hispi_karg *args,
                               int nargs, size_t groups, size_t group_size);
    hisp_status (*buf_zero)(hisp_context ctx, void *be, void *buf, size_t off, size_t bytes);

    /* Memory the caller already has (core/matrix/interop.c). All optional.
     * buf_check: the caller's buffer `mem` can serve as a buffer of this
     * instance and holds at least `bytes` (as far as the backend can tell);
     * `what` names it in the error. NULL slot: wrapping is unsupported. */
    hisp_status (*buf_check)(hisp_context ctx, void *be, void *mem, size_t bytes, const char *what);
    /* Takes a reference to the caller's buffer `mem` for as long as hisp uses
     * it (OpenCL: clRetainMemObject), given back by buf_free. NULL: the
     * backend's buffers are not counted (the caller keeps them alive). */
    hisp_status (*buf_retain)(hisp_context ctx, void *be, void *mem);
    /* Optional: *sub, a buffer of bytes [off, off + bytes) of buf (off a
     * multiple of 4096), valid while buf is; *owned: it is to be given back
     * by buf_free (OpenCL: a sub-buffer; CUDA: an address inside buf, not).
     * NULL: the backend has none (a Krylov basis is then separate vectors). */
    hisp_status (*buf_sub)(hisp_context ctx, void *be, void *buf, size_t off, size_t bytes,
                           void **sub, bool *owned);
    /* Work in the caller's stream / queue from now on (NULL: the instance's
     * own). Either in place (*new_be = NULL; the buffers stay valid; the old
     * stream's work is waited for) or, where the stream brings another device
     * context (OpenCL), as a new instance in *new_be on the stream's device
     * (*device its index in device_count's list): the core then closes the old
     * one as on a backend switch. NULL slot: only NULL is accepted. */
    hisp_status (*stream_set)(hisp_context ctx, void *be, void *stream, void **new_be, int *device);
    /* The stream / queue the instance works in. */
    void *(*stream_get)(void *be);
    /* A CSR matrix over the caller's arrays (ext), read in place by
     * csr_spmv; A holds the row pointers on the host, converted to 64-bit
     * and base 0, for the analysis (A->colind and A->val are NULL), or,
     * where csr_caps has HISPI_CSR_WRAP_DEVICE and hisp made the arrays
     * (ext->made: nothing to check), NULL: the backend plans from ext's
     * device row pointers. csr_free releases the device form and never the
     * caller's arrays. NULL: the core reads the arrays to the host and uses
     * csr_upload. */
    hisp_status (*csr_wrap)(hisp_context ctx, void *be, const hispi_csr_view *A,
                            const hispi_csr_ext *ext, void **dev);
    /* Optional: the arrays of a device copy of csr_upload or csr_wrap, for
     * run-time kernels that read them in place (retained false: they stay
     * the copy's); HISP_ERR_UNSUPPORTED where the copy has no such arrays
     * (an MSREP part run by the vendor library). NULL: not exposed. */
    hisp_status (*csr_arrays)(hisp_context ctx, void *be, void *dev, hispi_csr_ext *ext);
    /* Optional: C = A*B by the vendor's library (the spgemm option), the
     * operands and C in hisp's device layout; C's buffers made here, freed
     * by buf_free. NULL: the backend has none (the option is refused). */
    hisp_status (*vendor_spgemm)(hisp_context ctx, void *be, hisp_type t, const hispi_dcsr *A,
                                 const hispi_dcsr *B, hispi_dcsr *C);
} hisp_backend_ops;

/* ---- dispatch: every call of the core into a backend goes through these --
 *
 * HISPI_BE(ctx, slot, args...) calls slot(ctx, ctx->be, args...) of ctx's
 * backend and evaluates to its hisp_status; a NULL slot gives
 * HISP_ERR_UNSUPPORTED "the NAME backend has no SLOT" (hispi_be_missing).
 * HISPI_BE_SYNC(ctx) is the synchronize slot (no arguments after be).
 * HISPI_BE_ON(ctx, ops, slot, args...) calls slot(ctx, args...) of an
 * explicit table, the instance (if the slot takes one) among args: the slots
 * without an instance (device_count, init, ...), or an instance other than
 * ctx's own (an MSREP plan's merge context, whose errors go to the home
 * context). HISPI_BE_VOID(ctx, slot, args...) / HISPI_BE_VOID_ON(ops, slot,
 * args...) are the release slots (void, the instance first, no context):
 * slot(ctx->be, args...), nothing when the slot is NULL. HISPI_BE_HAS(ctx,
 * slot) / HISPI_BE_HAS_ON(ops, slot) test an optional slot where the core
 * has another path (host loops, a host merge). ctx and ops are evaluated
 * more than once: pass plain expressions. */
HISPI_LOCAL hisp_status hispi_be_missing(hisp_context ctx, const hisp_backend_ops *ops,
                                         const char *slot);
#define HISPI_BE_ON(ctx, ops, slot, ...)                                                           \
    ((ops)->slot ? (ops)->slot((ctx), __VA_ARGS__) : hispi_be_missing((ctx), (ops), #slot))
#define HISPI_BE(ctx, slot, ...) HISPI_BE_ON((ctx), (ctx)->ops, slot, (ctx)->be, __VA_ARGS__)
#define HISPI_BE_SYNC(ctx) HISPI_BE_ON((ctx), (ctx)->ops, synchronize, (ctx)->be)
#define HISPI_BE_VOID_ON(ops, slot, ...) ((ops)->slot ? (ops)->slot(__VA_ARGS__) : (void)0)
#define HISPI_BE_VOID(ctx, slot, ...) HISPI_BE_VOID_ON((ctx)->ops, slot, (ctx)->be, __VA_ARGS__)
#define HISPI_BE_HAS_ON(ops, slot) ((ops)->slot != NULL)
#define HISPI_BE_HAS(ctx, slot) HISPI_BE_HAS_ON((ctx)->ops, slot)

/* The compile-time table, indexed by hisp_backend_kind; entries of backends
 * not compiled in are NULL. */
extern const hisp_backend_ops *const hispi_backends[HISP_BACKEND_COUNT];

extern const hisp_backend_ops hisp_reference_ops;
#ifdef HISP_HAVE_OPENCL
extern const hisp_backend_ops hisp_cl_ops;
#endif
#ifdef HISP_HAVE_CUDA
extern const hisp_backend_ops hisp_cuda_ops;
#endif

#endif
