/* The core's internal declarations (not installed): the object structs and
 * what only the core uses. What backends may use (the basics, errors,
 * allocation, counters, caches) is the backend contract core/backend/backend.h,
 * included here. */
#ifndef HISPI_H
#define HISPI_H

#include "backend/backend.h"
#include "hisp.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Magic words: the first field of every handle, cleared on destroy (a help
 * in memory dumps; the handle registry is what checks handles). */
#define HISPI_MAGIC_CONTEXT 0x68437478u /* "hCtx" */
#define HISPI_MAGIC_MATRIX 0x684d6174u  /* "hMat" */
#define HISPI_MAGIC_VECTOR 0x68566563u  /* "hVec" */

struct hisp_backend_ops;

/* Objects holding device memory are linked into their context, so that a
 * backend switch (or the context's end) can release their device copies
 * with the backend that made them. */
typedef struct hispi_devobj {
    struct hispi_devobj *prev, *next;
    void (*drop_device)(struct hispi_devobj *self);
} hispi_devobj;

/* Vector algebra's device state of a context (core/vector/vector_dev.c): its
 * kernels per entry type, the reduction scratch (per-group partial sums) and
 * a small buffer of scalar and result slots. Linked into the context's
 * objects at first use, so a backend switch or the context's end frees it. */
#define HISPI_VK_COUNT 21
typedef struct {
    hispi_devobj link;
    bool ready;                    /* the fields below belong to the current backend */
    int is_cpu, ls, gmax;          /* stage-1 work-group size, most groups */
    int acc_double;                /* reductions accumulate in double */
    void *kern[6][HISPI_VK_COUNT]; /* by type (f32..q64) and kernel */
    void *part, *slots;            /* partial sums; scalar and result slots */
    void *mpart, *coef;            /* hispi_vector_mdot's partials, bupdate's coefficients */
    size_t coef_bytes;
} hispi_vstate;

/* The HiSparse addition's device scratch of a context
 * (core/hisparse/hisparse_add_cache.c): control words, queues, the scratch pool of a
 * mixed-orientation sum, timing marks and kernels, kept across calls (the
 * buffers grown geometrically), so that a repeated addition allocates and
 * looks up nothing. Linked into the context's objects at first use, so a
 * backend switch or the context's end frees it. */
#define HISPI_ADD_KERNELS 24
typedef struct {
    hispi_devobj link;
    bool ready;          /* the fields below belong to the current backend */
    int max_group, simd; /* the device's (kern_caps) */
    void *ctrl, *queues, *tmp, *mark[2];
    uint64_t qbytes, tbytes;
    uint64_t tclean; /* tmp's bytes from tclean on are zero */
    struct {
        int name;       /* index into the addition's kernel names */
        char opts[320]; /* build options */
        void *k;
        uint64_t used; /* the last call that used it */
    } kern[HISPI_ADD_KERNELS];
    uint64_t calls; /* additions that used the cache */
} hispi_astate;

/* The solvers' work vectors kept between solves (core/solver/space_local.c):
 * a solve takes its vectors from here and puts them back, so the next
 * solve of the same shape allocates nothing. */
#define HISPI_KPOOL 48
typedef struct {
    hispi_devobj link; /* destroyed with the backend */
    hisp_vector v[HISPI_KPOOL];
    int n;
} hispi_kpool;

typedef struct {
    hisp_status status;
    char message[1024];
    char file[512];
    int64_t line;
    int64_t native_code;
    char *build_log; /* malloc'd */
    char note[512];  /* why a backend reported no devices */
} hispi_error;

/* The parsed options (core/base/options.c holds the table). */
typedef struct {
    int threads; /* 0: one per core */
    bool debug;
    char cache_dir[512]; /* "": the default folder; "off" */
    /* AMG (core/amg/): strength threshold, smoother (HISPI_AMG_SMOOTHER_*,
     * the index of amg_smoother's choice), its steps before and after,
     * the rows of a node (0: the matrix's blocks), the levels' precision
     * (HISPI_AMG_AUTO, _SINGLE, _FULL: amg_precision's choice) */
    double amg_theta;
    int amg_smoother, amg_sweeps, amg_block, amg_precision;
    int chebyshev_degree;
    int ilu_factor_sweeps, ilu_solve_sweeps; /* -1: the default of where it runs */
    int spgemm;                              /* the spgemm option's choice: 0 hisp, 1 cusparse */
    int solver_precision; /* the solver_precision option's choice: 0 full, 1 mixed */
} hispi_options;

struct hisp_context_s {
    uint32_t magic;
    hisp_backend_kind kind;
    int device;
    const struct hisp_backend_ops *ops;
    void *be;             /* backend instance */
    hispi_devobj objects; /* list head of matrices and vectors */
    hispi_error err;
    hisp_sched_counts sched; /* of the last HiSparse SpMV */
    /* deferred completion: work a higher layer left whose outcome must be
     * checked before a result is seen or device copies go (the HiSparse
     * scheduler's counts, hisparse_sched.c); run and cleared by hispi_settle */
    hisp_status (*settle)(hisp_context ctx);
    hisp_add_stats add;       /* of the last hisp_matrix_add */
    hisp_spgemm_stats spgemm; /* of the last SpGEMM call (core/ops/spgemm_dev.c) */
    uint64_t spgemm_live;     /* its device bytes held now */
    hisp_transfer_stats xfer; /* host <-> device bytes (hispi_xfer) */
    hisp_build_stats builds;  /* kernel builds and loads (hispi_build_count) */
    void *stream;             /* the caller's stream / queue (hisp_context_set_stream), or NULL */
    hispi_vstate vec;         /* vector algebra's kernels and scratch (core/vector/vector_dev.c) */
    hispi_astate addc;        /* the HiSparse addition's scratch (hisparse/hisparse_add_cache.c) */
    hispi_kpool kpool;        /* the solvers' work vectors (solver/space_local.c) */
    hispi_options opt;        /* hisp_context_set_option (core/base/options.c) */
    struct {
        hisp_build_notify fn;
        void *user;
    } build_notify;              /* hisp_context_set_build_notify */
    struct hispi_parked *parked; /* MSREP workers' device instances (hispi_context_park) */
    /* the thread inside a call that claimed the context (hispi_ctx_claim),
     * and its nesting depth (touched by that thread only) */
    _Atomic(const void *) owner;
    int depth;
    /* > 0 inside a solve that runs on the host's loops (core/solver/solver.c:
     * a small system on a CPU device): vector algebra and CSR products take
     * the host paths on the vectors' host copies */
    int host_ops;
};

/* Host sparse storage. Which arrays are set depends on the format:
 * COO: rowind, colind (sorted row-major unless `sorted` is false);
 * CSR: rowptr (nrows+1), colind; CSC: colptr (ncols+1), rowind. */
typedef struct {
    hisp_format format;
    hisp_type type;
    int64_t nrows, ncols, nnz;
    int64_t *rowptr, *colptr;
    int32_t *rowind, *colind;
    void *val;
    bool sorted; /* COO: row-major sorted without duplicates */
} hispi_sparse;

struct hispi_hisparse;

struct hisp_matrix_s {
    uint32_t magic;
    hispi_devobj link; /* keep second: containerof below */
    hisp_context ctx;
    hispi_sparse host;         /* HiSparse form: format HISPARSE, sizes as shown, no arrays */
    void *dev;                 /* the context backend's copy of the CSR form, or NULL */
    struct hispi_hisparse *hs; /* HiSparse form (core/hisparse/hispi_hisparse.h), or NULL */
    int node_size;             /* d for conversions to HiSparse (0 = default) */
    void *hs_dev;              /* the context backend's SpMV state of the HiSparse tree, or NULL */
    uint64_t hs_dev_gen;       /* the family's device pool generation hs_dev was made for */
    void *cdev;                /* compound SpMV layouts and kernels (compound/compound_spmv.c) */
    void (*cdev_drop)(hisp_matrix A); /* frees cdev (set with it) */
    /* Jacobi's diagonal of the device copy (core/solver/precond.c), freed
     * by diag_drop with the copy */
    void *diag;
    void (*diag_drop)(hisp_matrix A);
    /* the solver's f32 copy of an f64 A (solver_precision=mixed,
     * core/solver/mixed.c), destroyed with the device copy */
    hisp_matrix narrow;
    const struct hispi_format_ops *fmt; /* A's format (core/format/format.h) */
    void *fdata;                        /* host form of a format with its own (SELL), or NULL */
    void *fdev;                         /* the context backend's copy of fdata, or NULL */
    bool wrapped;                       /* ext holds the caller's arrays (core/matrix/interop.c) */
    bool host_absent;                   /* wrapped: host.rowptr/colind/val not read yet */
    hispi_csr_ext ext;
    /* keys of the plan cache, computed once (a pass over the rows and a
     * sampled hash): hisp_tune_plan_key's, then the format choice's for
     * op N and T; dropped with the device copy, as every change of the
     * structure or of the context's device drops it */
    char *keys[3];
};

struct hisp_vector_s {
    uint32_t magic;
    hispi_devobj link;
    hisp_context ctx;
    hisp_type type;
    int64_t n;
    void *host;      /* n entries, allocated when the host first needs them */
    bool host_valid; /* host copy up to date */
    void *dev;       /* the context backend's buffer, or NULL */
    bool dev_valid;  /* device copy up to date */
    bool wrapped;    /* dev is the caller's memory (hisp_vector_wrap_device): never freed */
    bool retained; /* wrapped: hisp holds a reference to dev (buf_retain), given back by buf_free */
    int64_t off;   /* a view (hispi_vector_view): entry 0 is entry `off` of dev */
    int64_t cols;  /* columns (hisp_vector_set_columns; 0: one), n a multiple of them */
    hisp_order order;
    /* a part (hispi_vector_part): dev is entries [base_off, base_off + n)
     * of the buffer base, as a buffer of its own */
    void *base;
    int64_t base_off;
};

/* Keeps ctx's error for hisp_context_last_error(NULL) (a failed creation). */
HISPI_LOCAL void hispi_create_failed(hisp_context ctx);

/* ---- options (core/base/options.c) ------------------------------------------- */
HISPI_LOCAL void hispi_options_init(hisp_context ctx);
HISPI_LOCAL void hispi_options_fini(hisp_context ctx);
/* Applies "name=value,name=value" (HISP_OPTIONS) to ctx; errors name the
 * item. Empty items are skipped. */
HISPI_LOCAL hisp_status hispi_options_parse(hisp_context ctx, const char *list);
/* The library's own contexts (MSREP's workers, its merge) take the options
 * of the caller's. */
HISPI_LOCAL void hispi_options_inherit(hisp_context dst, hisp_context src);

/* Runs and clears ctx->settle if a higher layer set it (the HiSparse
 * scheduler's check of an SpMV still with the backend); called before a
 * result can be seen (vector reads, synchronize) and before device copies
 * go (backend and stream switches, parking). */
HISPI_LOCAL hisp_status hispi_settle(hisp_context ctx);

/* ---- device instances for MSREP's workers (core/base/context.c) ---- */

/* Switch ctx to sub-device `sub` of `nsub` of a device (context.c;
 * HISP_ERR_UNSUPPORTED where the backend or device cannot split). */
HISPI_LOCAL hisp_status hispi_context_set_subdevice(hisp_context ctx, hisp_backend_kind kind,
                                                    int device, int sub, int nsub);
/* A plan's OpenCL worker contexts keep their device instances (queues,
 * programs, sub-devices) on the plan's home context when the plan goes, and
 * the next plan made there takes them back: an OpenCL program built or
 * loaded again for every plan grows PoCL's process-wide LLVM state, which
 * only the release of every cl_context in the process frees. park: ctx's
 * device objects dropped and its instance moved onto home (sub, nsub: as
 * for hispi_context_set_subdevice; -1, 0: the whole device); ctx is left
 * without a backend, to be destroyed. At most HISPI_PARKED_MAX instances
 * wait on a context (the oldest closed first); the context's destroy closes
 * them. unpark: ctx switched to such an instance; false if home has none. */
enum { HISPI_PARKED_MAX = HISP_MPLAN_MAX_DEVICES };
HISPI_LOCAL void hispi_context_park(hisp_context home, hisp_context ctx, int sub, int nsub);
HISPI_LOCAL bool hispi_context_unpark(hisp_context home, hisp_context ctx, hisp_backend_kind kind,
                                      int device, int sub, int nsub);
/* Instances of device backends (not the reference backend) opened in the
 * process so far (the tests' count). */
HISPI_LOCAL long hispi_context_instances_opened(void);

HISPI_LOCAL void hispi_devobj_attach(hisp_context ctx, hispi_devobj *o,
                                     void (*drop)(hispi_devobj *));
HISPI_LOCAL void hispi_devobj_detach(hispi_devobj *o);

/* ---- handle checks ------------------------------------------------------ */

/* The handle registry (core/base/handle.c): every public object is added at
 * creation (before its first failure path that destroys it) and leaves
 * through hispi_handle_free, which its destroy calls instead of free(). The
 * checks never dereference the handle and take no lock. */
typedef enum {
    HISPI_H_CONTEXT = 1,
    HISPI_H_MATRIX,
    HISPI_H_VECTOR,
    HISPI_H_MPLAN,
    HISPI_H_MVECTOR,
    HISPI_H_SOLVER,
    HISPI_H_SPGEMM, /* hisp_spgemm_plan */
    HISPI_H_PRECOND /* hisp_preconditioner */
} hispi_handle_kind;
/* Register obj; destroying owner (NULL: none) orphans it. Fails only when
 * out of host memory. */
HISPI_LOCAL hisp_status hispi_handle_add(const void *obj, hispi_handle_kind kind,
                                         const void *owner);
/* A live object of this kind (not destroyed, its owner not destroyed)? */
HISPI_LOCAL bool hispi_handle_live(const void *obj, hispi_handle_kind kind);
/* Live or orphaned: what its destroy accepts. */
HISPI_LOCAL bool hispi_handle_known(const void *obj, hispi_handle_kind kind);
/* Unregister obj, orphan what it owns, free its memory after a quarantine
 * of later destroys (so its address is not reused while it is recent). */
HISPI_LOCAL void hispi_handle_free(void *obj);

HISPI_LOCAL bool hispi_ctx_ok(hisp_context ctx);
/* A context is used by one thread at a time (hisp.h). The calls that queue
 * work on its device or use its scratch (SpMV, vector algebra, vector
 * reads and writes, solves, additions, synchronize, an MSREP plan's calls
 * on its home context) claim it for their duration; the thread holding it
 * may claim again (calls made inside calls). A claim while another thread
 * holds the context fails with HISP_ERR_INVALID_ARGUMENT, before anything is
 * touched: the message is kept for the refused thread alone
 * (hisp_context_last_error there), the holder's record is left as it is.
 * A live ctx is the caller's to check first. */
HISPI_LOCAL hisp_status hispi_ctx_claim(hisp_context ctx);
HISPI_LOCAL void hispi_ctx_release(hisp_context ctx);
/* return call's status, made while ctx (live) is claimed */
#define HISPI_CLAIMED(ctx, call)                                                                   \
    do {                                                                                           \
        hisp_context hispi_cl_ = (ctx);                                                            \
        HISPI_TRY(hispi_ctx_claim(hispi_cl_));                                                     \
        hisp_status hispi_cs_ = (call);                                                            \
        hispi_ctx_release(hispi_cl_);                                                              \
        return hispi_cs_;                                                                          \
    } while (0)
HISPI_LOCAL bool hispi_mat_ok(hisp_matrix A);
HISPI_LOCAL bool hispi_vec_ok(hisp_vector v);

/* Test hook: make the k-th following allocation fail (0 = off). */
HISPI_LOCAL void hispi_alloc_fail_after(long k);

/* ---- types -------------------------------------------------------------- */

HISPI_LOCAL bool hispi_type_valid(hisp_type t);
/* Size of one scalar component (4 or 8). */
HISPI_LOCAL size_t hispi_type_scalar_size(hisp_type t);
/* Store a real value into entry i of an array of type t (other components 0;
 * a 3x3 block gets v on its diagonal). */
HISPI_LOCAL void hispi_store_real(hisp_type t, void *array, int64_t i, double v);
/* Real part (first component) of entry i. */
HISPI_LOCAL double hispi_load_real(hisp_type t, const void *array, int64_t i);

/* ---- sparse storage (core/matrix/sparse.c) ------------------------------ */

HISPI_LOCAL void hispi_sparse_free(hispi_sparse *s);
/* Multiplies every stored value of s by a (each component of compound entries). */
HISPI_LOCAL void hispi_sparse_scale(hispi_sparse *s, double a);
/* Allocate the arrays of format f for nnz entries (pointers zeroed). */
HISPI_LOCAL hisp_status hispi_sparse_alloc(hisp_context ctx, hispi_sparse *s, hisp_format f,
                                           hisp_type t, int64_t nrows, int64_t ncols, int64_t nnz);
/* Convert src into a new storage of format f (src untouched). COO input is
 * sorted; duplicates are summed in CSR/CSC/sorted COO results. */
/* COO, CSR and CSC: the formats whose entries are A->host's arrays. */
static inline bool hispi_sparse_family(hisp_format f)
{
    return f == HISP_FORMAT_COO || f == HISP_FORMAT_CSR || f == HISP_FORMAT_CSC;
}
HISPI_LOCAL hisp_status hispi_sparse_convert(hisp_context ctx, const hispi_sparse *src,
                                             hisp_format f, hispi_sparse *dst);
/* Check structural validity (pointers monotone, indices in range). */
HISPI_LOCAL hisp_status hispi_sparse_validate(hisp_context ctx, const hispi_sparse *s);
/* Wrap freshly built storage into a matrix handle (takes ownership). */
HISPI_LOCAL hisp_status hispi_matrix_wrap(hisp_context ctx, hispi_sparse *s, hisp_matrix *A);
/* The matrix's CSR form, read only: the host copy itself when it is CSR,
 * else a private conversion into *tmp (free it with hispi_sparse_free; it
 * is zeroed when unused). The matrix is never changed: its format, nnz and
 * the arrays hisp_matrix_host_arrays lent stay as they are. HiSparse: the
 * logical matrix of the tree, always into *tmp. */
/* A's memo i of a plan-cache key (hisp_matrix_s.keys): copied into key when
 * there is one and it fits; kept (a copy; none without memory). */
HISPI_LOCAL bool hispi_matrix_key_get(hisp_matrix A, int i, char *key, size_t size);
HISPI_LOCAL void hispi_matrix_key_keep(hisp_matrix A, int i, const char *key);
HISPI_LOCAL void hispi_matrix_keys_drop(hisp_matrix A); /* the structure may have changed */
HISPI_LOCAL hisp_status hispi_matrix_csr(hisp_matrix A, hispi_sparse *tmp,
                                         const hispi_sparse **csr);
/* Drop the device copy (host data changed or backend switched). */
HISPI_LOCAL void hispi_matrix_drop_device(hisp_matrix A);

/* Releases A's storage before a conversion gives it another: drops the
 * device copies, frees the format's host form (A->fmt->release) and
 * A->host's arrays; A->host keeps its sizes and type. */
HISPI_LOCAL void hispi_matrix_release_storage(hisp_matrix A);

/* ---- memory the caller already has (core/matrix/interop.c) -------------- */

/* A wrapped matrix's host storage, read from the caller's arrays when
 * absent (every host reader of a matrix calls this first); a no-op for
 * other matrices. */
HISPI_LOCAL hisp_status hispi_matrix_need_host(hisp_matrix A);
/* The backend's device form of a wrapped matrix (csr_wrap), or its upload
 * from the host copy where the backend has no csr_wrap. */
HISPI_LOCAL hisp_status hispi_matrix_wrap_upload(hisp_matrix A);
/* The matrix stops using the caller's arrays (their data read to the host
 * first, best effort: on failure the matrix is left without entries). */
HISPI_LOCAL void hispi_matrix_unwrap(hisp_matrix A);
/* Gives back hisp's references to a wrapped matrix's arrays (destroy). */
HISPI_LOCAL void hispi_matrix_ext_release(hisp_matrix A);
/* *A: a CSR matrix (f32 or f64) whose arrays are device buffers of ctx's
 * backend that hisp made and now hands over (rowptr int64, colind int32,
 * zero-based, rows sorted): a wrapped matrix that owns them, its host copy
 * read when a host reader needs it, the buffers freed with the matrix (or
 * when its device copy goes). On failure the buffers are the caller's. */
/* The host CSR matrix A (f32 or f64) hands its storage over to device
 * buffers hisp made with the same structure and values: as
 * hispi_matrix_wrap_owned, A's host arrays and device copies dropped. On
 * failure nothing changes. */
HISPI_LOCAL void hispi_matrix_adopt_owned(hisp_matrix A, void *rowptr, void *colind, void *vals);
/* A's CSR device copy (CSR, CSC or COO: its CSR upload), made if absent
 * (core/csr/csr_format.c). */
HISPI_LOCAL hisp_status hispi_csr_device(hisp_matrix A);
/* *A: a CSR matrix over device buffers of ctx's backend (int64 row
 * pointers, int32 columns, zero-based, rows sorted) that stay their
 * owner's: hisp reads them in place and never frees them. */
HISPI_LOCAL hisp_status hispi_matrix_wrap_view(hisp_context ctx, hisp_type type, int64_t nrows,
                                               int64_t ncols, int64_t nnz, void *rowptr,
                                               void *colind, void *vals, hisp_matrix *A);
HISPI_LOCAL hisp_status hispi_matrix_wrap_owned(hisp_context ctx, hisp_type type, int64_t nrows,
                                                int64_t ncols, int64_t nnz, void *rowptr,
                                                void *colind, void *vals, hisp_matrix *A);
/* As hispi_matrix_wrap_owned over buffers of hispi_tmp_alloc (a CUDA
 * device's stream-ordered pool): freed with no device-wide wait, and made
 * without cudaMalloc's (a product's C, hisp_matrix_ptap's A*P and P^T). */
HISPI_LOCAL hisp_status hispi_matrix_wrap_pooled(hisp_context ctx, hisp_type type, int64_t nrows,
                                                 int64_t ncols, int64_t nnz, void *rowptr,
                                                 void *colind, void *vals, hisp_matrix *A);

/* ---- HiSparse in matrix handles (core/hisparse/hisparse_state.c) -------- */

HISPI_LOCAL void hispi_hisparse_release(hisp_matrix A);
/* A host sparse copy of the matrix as shown (any format; HiSparse state
 * applied), for readers that need arrays. */
HISPI_LOCAL hisp_status hispi_matrix_sparse_copy(hisp_matrix A, hisp_format f, hispi_sparse *out);
/* Fetches the counts of the last HiSparse SpMV from a backend that returns
 * before the work is done (hisparse_counts), with its scheduler check, when
 * they are still pending (the scheduler's ctx->settle hook; lower layers
 * call hispi_settle). */
HISPI_LOCAL hisp_status hispi_sched_settle(hisp_context ctx);
/* HiSparse SpMV on the context's backend through the scheduler
 * (core/hisparse/hisparse_sched.c). */
HISPI_LOCAL hisp_status hispi_hisparse_spmv(hisp_context ctx, hisp_op op, double alpha,
                                            hisp_matrix A, hisp_vector x, double beta,
                                            hisp_vector y);

/* ---- vectors (core/vector/vector.c) ------------------------------------- */

/* The vector's device buffer on the context's backend (allocated on first
 * use); need_data uploads the host copy if the device copy is stale. */
HISPI_LOCAL hisp_status hispi_vector_device(hisp_vector v, bool need_data, void **buf);
/* A kernel wrote the device buffer: the host copy is stale. */
HISPI_LOCAL void hispi_vector_device_written(hisp_vector v);
/* The host copy, brought up to date. */
HISPI_LOCAL hisp_status hispi_vector_host(hisp_vector v, void **host);
/* The host array, allocated if absent, contents as they are (to be
 * overwritten whole). */
HISPI_LOCAL hisp_status hispi_vector_host_out(hisp_vector v, void **host);
/* The host copy was written on the host: the device copy is stale, or, for
 * a wrapped vector, written through to the caller's memory. */
HISPI_LOCAL hisp_status hispi_vector_host_written(hisp_vector v);
/* A view of entries [off, off + n) of a buffer of ctx's backend that
 * another object owns (a distributed vector's owned rows on one device):
 * wrapped (never freed), for the vector algebra only, whose kernels add the
 * offset (hispi_vector_device returns the whole buffer). */
HISPI_LOCAL hisp_status hispi_vector_view(hisp_context ctx, hisp_type type, int64_t n, void *buf,
                                          int64_t off, hisp_vector *v);

/* Entries [off, off + n) of whole's device buffer as a vector of its own
 * (the backend's buf_sub: off * entry size a multiple of 4096), usable by
 * every operation; whole must outlive it. HISP_ERR_UNSUPPORTED where the
 * backend has no buf_sub. */
HISPI_LOCAL hisp_status hispi_vector_part(hisp_vector whole, int64_t off, int64_t n,
                                          hisp_vector *v);

/* The columns of a column-major vector v of k columns, one at a time
 * (core/vector/vector_columns.c): get copies column j into dst (n
 * entries), put copies src into column j; on the device through views of
 * v's buffer, else through v's host array. open refuses a row-major v of
 * k > 1 columns (HISP_ERR_UNSUPPORTED naming `what`); read: v's data is
 * needed (else only put is used). The views are made at open, so the copies
 * allocate nothing. */
typedef struct {
    hisp_vector v;
    int64_t k, n;
    hisp_vector *views; /* k views (device), or NULL */
    void *host;         /* v's host array (host), or NULL */
} hispi_columns;
HISPI_LOCAL hisp_status hispi_columns_open(hisp_vector v, bool read, const char *what,
                                           hispi_columns *c);
HISPI_LOCAL hisp_status hispi_columns_get(hispi_columns *c, int64_t j, hisp_vector dst);
HISPI_LOCAL hisp_status hispi_columns_put(hispi_columns *c, int64_t j, hisp_vector src);
HISPI_LOCAL void hispi_columns_close(hispi_columns *c);

/* hisp_scalar.negate bit of the solvers' ratios: num * den^-1 is 0 where
 * den is exactly 0 (a recurrence that has converged exactly stays put
 * instead of turning into 0/0). */
#define HISPI_SCALAR_SAFE 2
/* r = a*b for device scalars (core/vector/vector_ops.c): the solvers' scalar
 * recurrences without a trip to the host. r must be a vector entry. */
HISPI_LOCAL hisp_status hispi_vector_smul(hisp_scalar a, hisp_scalar b, hisp_result r);

/* y1 = x1*a + y1*b, then y2 = x2*c + y2*d, in one pass (CG's x and p
 * updates); x1 may be y2 (read before it is written), the others differ. */
HISPI_LOCAL hisp_status hispi_vector_axpby2(hisp_scalar a, hisp_vector x1, hisp_scalar b,
                                            hisp_vector y1, hisp_scalar c, hisp_vector x2,
                                            hisp_scalar d, hisp_vector y2);
/* Jacobi-CG's residual update in one pass: y = x*a + y*b, z = d^-1 * y
 * element-wise, r0 = dot(y, y), r1 = dot(y, z); the four vectors differ. */
HISPI_LOCAL hisp_status hispi_vector_axpby_div_dot2(hisp_scalar a, hisp_vector x, hisp_scalar b,
                                                    hisp_vector y, hisp_vector d, hisp_vector z,
                                                    hisp_result r0, hisp_result r1);

/* BiCGSTAB's x and r in one pass: X += P*p + S*q, then y = x*a + y*b,
 * r0 = dot(y, y), r1 = dot(w, y) (r^H r and r0^H r). S may be y (read
 * before y changes); the other vectors differ. */
HISPI_LOCAL hisp_status hispi_vector_axpby_dot2_acc(hisp_scalar p, hisp_vector P, hisp_scalar q,
                                                    hisp_vector S, hisp_vector X, hisp_scalar a,
                                                    hisp_vector x, hisp_scalar b, hisp_vector y,
                                                    hisp_vector w, hisp_result r0, hisp_result r1);
/* Whether the vector algebra runs the device's kernels (else the host
 * loops: the reference backend, or a solve on the host). */
HISPI_LOCAL bool hispi_vec_on_device(hisp_context ctx);
/* A basis's products (core/vector/vector_block.c; GMRES's Gram-Schmidt):
 * out[oi + k*q + c] = dot(Q[c], R[k]) for c < q, k < nr (1 or 2). One pass
 * over Q where its columns are views of one buffer at a fixed stride. */
HISPI_LOCAL hisp_status hispi_vector_mdot(int q, const hisp_vector *Q, int nr, const hisp_vector *R,
                                          hisp_vector out, int64_t oi);
/* y0 = y0*a0 + sum_c Q[c]*a[c]; y1 = y1*b1 + y0*b0 + sum_c Q[c]*b[c] (y0 as
 * it was; y1 NULL: none). coef: 2q+3 entries of 4 doubles (real part first):
 * a[0..q), a0, b[0..q), b0, b1. A zero a0 (b1): y0 (y1) is not read. */
HISPI_LOCAL hisp_status hispi_vector_bupdate(int q, const hisp_vector *Q, hisp_vector y0,
                                             hisp_vector y1, const double *coef);

/* ---- vector algebra: reference loops (core/vector/vector_ref.c) --------
 *
 * Entries of type t (f32, f64, c32, c64, q32, q64), arithmetic as documented
 * in hisp.h (scalars multiply from the right, dot conjugate-linear in its
 * first argument). Scalars point to one entry of t. Reductions accumulate in
 * double for every type and round once at the end; the kernels do the same
 * where the device has doubles. The kernels of kernels/vector.cl use the
 * same formulas in the same order (sums excepted). */

/* Whether the entry a of type t is zero. */
HISPI_LOCAL bool hispi_vref_is_zero(hisp_type t, const void *a);
/* out = num * den^-1 (den NULL: num), negated when negate. */
HISPI_LOCAL void hispi_vref_scalar(hisp_type t, const void *num, const void *den, int negate,
                                   void *out);
HISPI_LOCAL void hispi_vref_fill(hisp_type t, int64_t n, const void *a, void *y);
HISPI_LOCAL void hispi_vref_scale(hisp_type t, int64_t n, const void *a, void *y);
/* z = x*a + y*b + z*c; the y term is dropped when y is NULL, z is not read
 * when c is zero. */
HISPI_LOCAL void hispi_vref_axpbypcz(hisp_type t, int64_t n, const void *a, const void *x,
                                     const void *b, const void *y, const void *c, void *z);
HISPI_LOCAL void hispi_vref_mul(hisp_type t, int64_t n, const void *x, const void *y, void *z);
HISPI_LOCAL void hispi_vref_div(hisp_type t, int64_t n, const void *x, const void *y, void *z);
/* r: one entry of t; nrm2's r: one real of t's component type. */
HISPI_LOCAL void hispi_vref_dot(hisp_type t, int64_t n, const void *x, const void *y, void *r);
HISPI_LOCAL void hispi_vref_nrm2(hisp_type t, int64_t n, const void *x, void *r);
/* y = x*a + y*b (b zero: y not read), r = dot(y, w) (w NULL: w = y). */
HISPI_LOCAL void hispi_vref_axpby_dot(hisp_type t, int64_t n, const void *a, const void *x,
                                      const void *b, void *y, const void *w, void *r);
HISPI_LOCAL void hispi_vref_dot2(hisp_type t, int64_t n, const void *x, const void *y,
                                 const void *w, void *r0, void *r1);
/* z = y^-1 * x, r = dot(x, z). */
HISPI_LOCAL void hispi_vref_div_dot(hisp_type t, int64_t n, const void *x, const void *y, void *z,
                                    void *r);
/* X += P*p + S*q, then y = x*a + y*b, r0 = dot(y, y), r1 = dot(w, y) (S
 * may be y). */
HISPI_LOCAL void hispi_vref_axpby_dot2_acc(hisp_type t, int64_t n, const void *p, const void *P,
                                           const void *q, const void *S, void *X, const void *a,
                                           const void *x, const void *b, void *y, const void *w,
                                           void *r0, void *r1);
/* y = x*a + y*b, z = d^-1 * y, r0 = dot(y, y), r1 = dot(y, z). */
HISPI_LOCAL void hispi_vref_axpby_div_dot2(hisp_type t, int64_t n, const void *a, const void *x,
                                           const void *b, void *y, const void *d, void *z, void *r0,
                                           void *r1);

/* hispi_vector_mdot's and hispi_vector_bupdate's loops: r, q * nr entries
 * (acc: 4 * q * nr doubles of scratch); coef: 2q + 3 entries of t. */
HISPI_LOCAL void hispi_vref_mdot(hisp_type t, int64_t n, int q, const void *const *Q, int nr,
                                 const void *const *R, double *acc, void *r);
HISPI_LOCAL void hispi_vref_bupdate(hisp_type t, int64_t n, int q, const void *const *Q, void *y0,
                                    void *y1, const void *coef);

/* ---- reference operations (core/csr/csr_ref.c) ---------------------- */

/* y = alpha*op(A)*x + beta*y on host CSR; f32 accumulates in float, f64 in
 * double (same as the kernels); beta == 0 does not read y. */
HISPI_LOCAL hisp_status hispi_ref_csr_spmv(hisp_context ctx, const hispi_sparse *A, hisp_op op,
                                           double alpha, const void *x, double beta, void *y);
/* y = A*x on a real host CSR A, then *dot = sum_i x[xoff + i]*y[i] in double
 * in row order (the reference's fused SpMV + dot; the caller rounds). */
HISPI_LOCAL hisp_status hispi_ref_csr_spmv_dot(hisp_context ctx, const hispi_sparse *A,
                                               const void *x, int64_t xoff, void *y, double *dot);
/* Y = alpha*op(A)*X + beta*Y over k columns (X and Y each column-major, or
 * row-major where xrow / yrow), A of f32, f64, c32 or c64 entries (op H
 * conjugates); accumulation as hispi_ref_csr_spmv's (f32 in float); beta ==
 * 0 does not read Y. The oracle of hisp_spmm and the reference backend's. */
HISPI_LOCAL hisp_status hispi_ref_csr_spmm(hisp_context ctx, const hispi_sparse *A, hisp_op op,
                                           double alpha, const void *X, int xrow, double beta,
                                           void *Y, int yrow, int64_t k);

/* ---- SpMV fused with a dot (core/ops/spmv.c) ------------------------- */

/* y = A*x (op N, alpha 1, beta 0), then r = dot(x, y) as hisp_vector_dot
 * (r: a host value or an entry of a vector of x's type). One pass where the
 * backend has csr_spmv_dot and A is a square f32/f64 matrix on its CSR
 * kernel; hisp_spmv + hisp_vector_dot everywhere else (the same results up
 * to rounding). hisp_spmv's argument checks and messages, then the result's;
 * on bad arguments nothing is written. */
HISPI_LOCAL hisp_status hispi_spmv_dot(hisp_context ctx, hisp_matrix A, hisp_vector x,
                                       hisp_vector y, hisp_result r);
/* A is a real or complex CSR matrix whose host arrays hold it (not wrapped, no HiSparse
 * or SELL form): what the host's SpMV loops take (hisp_context_s.host_ops). */
HISPI_LOCAL bool hispi_matrix_host_csr(hisp_matrix A);

/* ---- Matrix Market (core/io/mmio.c) ------------------------------------- */

/* Of a parsed file (the parsers fill it when not NULL): the 1-based line of
 * its size line, and the input's bytes as given (compressed: before
 * decompression), which bound what it may declare (HISPI_FILE_DIM_LIMIT). */
typedef struct {
    int64_t size_line;
    uint64_t bytes;
} hispi_mtx_where;
HISPI_LOCAL hisp_status hispi_mtx_parse(hisp_context ctx, const char *data, size_t size,
                                        const char *name, hisp_type type, hispi_sparse *out,
                                        hisp_mtx_header *header, hispi_mtx_where *where);
/* A file by path: large plain regular files parsed in pieces as they are
 * read; others (pipes, compressed, small) read whole and parsed. */
HISPI_LOCAL hisp_status hispi_mtx_read_file(hisp_context ctx, const char *path, hisp_type type,
                                            hispi_sparse *out, hisp_mtx_header *header,
                                            hispi_mtx_where *where);
/* Write a general coordinate file (real or complex field by type). */
HISPI_LOCAL hisp_status hispi_mtx_write(hisp_context ctx, const hispi_sparse *s, const char *path);
/* Write rows x cols entries as a rows x cols array file (column-major, as
 * Matrix Market arrays are): vals holds them column after column, or row
 * after row where row_order. */
HISPI_LOCAL hisp_status hispi_mtx_write_vector(hisp_context ctx, hisp_type t, int64_t rows,
                                               int64_t cols, bool row_order, const void *vals,
                                               const char *path);
/* Read a whole file into memory (core/io/read_file.c; NUL-terminated; *size
 * excludes the NUL).
 * Regular files are read whole; pipes and devices are read once, up to
 * HISPI_STREAM_LIMIT bytes (beyond: HISP_ERR_INPUT_FORMAT), and only their
 * first 64 KiB when those do not begin with magic (case-insensitive; NULL:
 * no check), so the parser reports the wrong format at once. */
HISPI_LOCAL hisp_status hispi_read_file(hisp_context ctx, const char *path, const char *magic,
                                        char **data, size_t *size);
#define HISPI_STREAM_LIMIT ((size_t)1 << 30)
/* Files declare at most this many rows, and columns, for their size in
 * bytes: per-row and per-column arrays stay proportional to the input. */
#define HISPI_FILE_DIM_LIMIT(bytes) (((int64_t)1 << 20) + 8 * (int64_t)(bytes))

/* ---- generators (core/gen/) --------------------------------------------- */

HISPI_LOCAL hisp_status hispi_generate(hisp_context ctx, const hisp_gen_params *p, hisp_type t,
                                       hispi_sparse *out);

/* The generators' building blocks, shared with core/gen/gen_perturb.c: the
 * counter-based random streams (splitmix64 mixer; stream = (key, index,
 * purpose)), uniform draws, values in [-1, 1) (53 bits, the top 24 for
 * 4-byte scalars). */
typedef struct {
    uint64_t s;
} hispi_rng;
HISPI_LOCAL uint64_t hispi_mix64(uint64_t z);
HISPI_LOCAL hispi_rng hispi_rng_at(uint64_t key, uint64_t index, uint64_t purpose);
HISPI_LOCAL uint64_t hispi_rng_next(hispi_rng *r);
HISPI_LOCAL int64_t hispi_rng_below(hispi_rng *r, int64_t m); /* [0, m), 0 < m < 2^32 */
HISPI_LOCAL double hispi_gen_value(size_t scalar, uint64_t x);

/* ---- misc --------------------------------------------------------------- */

/* The row of entry k of a compressed array ptr[0..n] (CSR row pointers,
 * CSC column pointers): the last r with ptr[r] <= k, so empty rows before
 * it are skipped (ptr[n] > k). */
HISPI_LOCAL int64_t hispi_row_of(const int64_t *ptr, int64_t n, int64_t k);
/* Asks for transparent huge pages on a large fresh buffer: its first touch
 * then faults once per 2 MiB instead of once per 4 KiB (a third of the
 * build time on tens of millions of entries otherwise; the addition's pool
 * growth). A hint: failure is fine. */
HISPI_LOCAL void hispi_huge_pages(void *p, size_t bytes);
/* That folder DIR; 0 when caching is off or the path does not fit. */
HISPI_LOCAL int hispi_cache_dir(hisp_context ctx, char *out, size_t size);
/* Writes n bytes to path through a temporary file and rename, so readers
 * never see half a file; make_dirs creates the parent folders first.
 * Returns 0 or an errno value. */
HISPI_LOCAL int hispi_write_file_atomic(const char *path, const void *data, size_t n,
                                        bool make_dirs);
/* Validated cache entries (core/base/cache_file.c): a header with magic,
 * version, payload length and an FNV-1a checksum, then the payload. */
#define HISPI_CACHE_HEADER 32
#define HISPI_CACHE_MAX ((size_t)1 << 30) /* largest payload */
/* 1 when entry[0..size) is a whole valid entry (*payload_len set), else 0. */
HISPI_LOCAL int hispi_cache_entry_check(const void *entry, size_t size, size_t *payload_len);
/* A new entry holding payload (malloc'd, *size set); NULL without memory. */
HISPI_LOCAL void *hispi_cache_entry_make(const void *payload, size_t n, size_t *size);
/* Reads a whole regular file of at most max bytes (NUL-terminated,
 * malloc'd): 1, or 0 when absent, -1 for anything else (a folder, a device,
 * a FIFO, too large, a read error). */
HISPI_LOCAL int hispi_cache_read_raw(const char *path, size_t max, char **data, size_t *size);

/* ---- output files (core/base/file_out.c) -------------------------------- */

/* An output file opened by the rule of file_out.c: regular or missing files
 * through a temporary file renamed over them; pipes and character devices
 * (also through links) written through; anything else refused. */
typedef struct {
    FILE *f;
    bool through; /* a stream: no temporary file, no rename */
    char tmp[1200];
} hispi_out;
/* 0 or an errno value; *why names a refused target's kind (else NULL). */
HISPI_LOCAL int hispi_out_open(const char *path, hispi_out *o, const char **why);
/* Closes o; when ok and all was written, the file takes path's place, else
 * the temporary file is removed. 0 or an errno value. */
HISPI_LOCAL int hispi_out_close(hispi_out *o, const char *path, bool ok);
/* HISP_ERR_IO "cannot write PATH: WHY (or strerror(e))". */
HISPI_LOCAL hisp_status hispi_out_fail(hisp_context ctx, const char *path, int e, const char *why);
/* Writes n bytes to path by that rule; fails through ctx. */
HISPI_LOCAL hisp_status hispi_save_file(hisp_context ctx, const char *path, const void *data,
                                        size_t n);

#endif
