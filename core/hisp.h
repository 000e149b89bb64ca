/* hisp — portable sparse linear algebra on GPUs and CPUs.
 *
 * One public header. Every call returns a hisp_status; the detail of the last
 * failure on a context (reason, file line, native backend code, build log) is
 * available through hisp_context_last_error(). The library never prints.
 *
 * Contents, in the order of the data (the "====" sections below):
 *   status, entry types, names, version
 *   context: backends, devices, errors, options
 *   matrices: creation, information, conversion
 *   formats: HiSparse
 *   formats: compound entries (complex, quaternion, 3x3 blocks)
 *   files: the output rule, .hisp files, Matrix Market
 *   generators
 *   vectors
 *   memory the caller already has: streams, wrapped vectors and matrices
 *   vector algebra
 *   SpMV
 *   addition: C = op(A) + op(B)
 *   sparse matrix-matrix product: C = op(A) * op(B), plans, P^T*A*P
 *   iterative solvers
 *   several devices (MSREP): partitions, plans, distributed vectors and solves
 *   introspection and benchmark helpers: counters, timing, tuning, format choice
 *
 * Objects are opaque handles. Create functions return the handle through their
 * last argument; hisp_X_destroy(&h) frees the object and sets h to NULL.
 *
 * Handles are checked before they are read. A call given a handle that was
 * destroyed, that is not a handle of that kind, or whose owner was destroyed
 * (a context owns the matrices, vectors, solvers and MSREP plans made on it;
 * a plan owns its mvectors) returns HISP_ERR_INVALID_HANDLE without touching
 * it; a NULL handle gives HISP_ERR_INVALID_HANDLE too. Objects whose owner is gone keep their
 * memory until their own destroy, which frees them; destroy ignores a NULL, destroyed or foreign
 * handle (h is left as it is). The memory of destroyed objects is held back from reuse for the next
 * 64 destroys; after that a stale handle is still refused unless the allocator has given its
 * address to a new object of the same kind (the stale handle then refers to that object). A handle
 * must not be destroyed while another thread uses it.
 *
 * Threads: any number of threads may create and use contexts at once; one
 * context, and the objects made on it, are used by one thread at a time
 * (HiSparse families add their own readers/writer rule, below). A call that
 * works on a context's device or scratch (SpMV, vector algebra, vector
 * reads and writes, solves, additions, synchronize, backend and stream
 * switches, an MSREP plan's calls) made while another thread is inside such
 * a call on the same context returns HISP_ERR_INVALID_ARGUMENT before it
 * touches anything; hisp_context_last_error on the refused thread says why
 * (the other thread's record is left alone).
 *
 * Indices: row and column indices are 32-bit (dimensions up to 2^31-1); nnz
 * counts and row/column pointers are 64-bit, so a matrix may hold more than
 * 2^31 entries.
 */
#ifndef HISP_H
#define HISP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define HISP_API __attribute__((visibility("default")))
#define HISP_NODISCARD __attribute__((warn_unused_result))
#else
#define HISP_API
#define HISP_NODISCARD
#endif

#define HISP_VERSION_MAJOR 0
#define HISP_VERSION_MINOR 1
#define HISP_VERSION_PATCH 0

/* ==== status, entry types, names, version ==================================================== */

typedef enum {
    HISP_SUCCESS = 0,
    HISP_ERR_INVALID_ARGUMENT = -1,   /* NULL pointer, bad enum, size mismatch */
    HISP_ERR_INVALID_HANDLE = -2,     /* NULL, destroyed, foreign or orphaned handle */
    HISP_ERR_INPUT_FORMAT = -3,       /* malformed file or data (see last error line) */
    HISP_ERR_IO = -4,                 /* a file could not be opened, read or written */
    HISP_ERR_OUT_OF_HOST_MEMORY = -5, /* malloc failed or size overflow */
    HISP_ERR_OUT_OF_DEVICE_MEMORY = -6,
    HISP_ERR_UNSUPPORTED = -7,   /* operation/type/format not provided by this backend */
    HISP_ERR_NO_DEVICE = -8,     /* backend compiled in but no usable device */
    HISP_ERR_BACKEND = -9,       /* a CUDA/OpenCL call failed (native code in last error) */
    HISP_ERR_KERNEL_BUILD = -10, /* run-time kernel compilation failed (build log) */
    HISP_ERR_NOT_COMPILED = -11  /* backend not compiled into this library */
} hisp_status;

/* Entry types. CSR/HiSparse operations take f32 and f64 (the sparse product
 * c32 and c64 too); the compound types
 * (complex, quaternion, 3x3 blocks) have SpMV through the variants of the
 * section "formats: compound entries" below. */
typedef enum {
    HISP_F32 = 0,
    HISP_F64,
    HISP_C32,
    HISP_C64,
    HISP_Q32, /* quaternion, 4 components */
    HISP_Q64,
    HISP_B3X3_F32, /* 3x3 dense block, row-major */
    HISP_B3X3_F64,
    HISP_TYPE_COUNT
} hisp_type;

/* HISP_FORMAT_HISPARSE: the hierarchical format of the HiSparse paper
 * (docs/FORMAT.md): built, edited and added on the host; SpMV on every
 * backend through the dynamic scheduler. */
typedef enum {
    HISP_FORMAT_COO = 0,
    HISP_FORMAT_CSR,
    HISP_FORMAT_CSC,
    HISP_FORMAT_HISPARSE,
    HISP_FORMAT_SELL /* SELL-C-sigma: slices of C rows padded to their longest (docs/GUIDE.md) */
} hisp_format;

/* op(A) = A, A^T, or A^H (conjugate transpose; the same as A^T for real
 * entries). hisp_spmv and hisp_spmv_timed take all three for every entry
 * type; hisp_matrix_multiply takes all three; the other operations
 * (hisp_matrix_add, hisp_mspmv) take N and T. */
typedef enum { HISP_OP_N = 0, HISP_OP_T = 1, HISP_OP_H = 2 } hisp_op;

typedef enum {
    HISP_BACKEND_AUTO = -1, /* CUDA if a GPU answers, else OpenCL (GPU first), else reference */
    HISP_BACKEND_REFERENCE = 0,
    HISP_BACKEND_OPENCL = 1,
    HISP_BACKEND_CUDA = 2,
    HISP_BACKEND_COUNT = 3
} hisp_backend_kind;

typedef struct hisp_context_s *hisp_context;
typedef struct hisp_matrix_s *hisp_matrix;
typedef struct hisp_vector_s *hisp_vector;

/* A constant string naming a status ("success", "invalid argument", ...). */
HISP_API const char *hisp_status_string(hisp_status s);
/* "MAJOR.MINOR.PATCH" of the library linked (HISP_VERSION_* are the header's). */
HISP_API const char *hisp_version_string(void);

/* Bytes of one entry; number of scalar components (1 real, 2 complex, 4
 * quaternion, 9 block); size of one scalar component (4 or 8). */
HISP_API size_t hisp_type_size(hisp_type t);
HISP_API int hisp_type_components(hisp_type t);
/* Names as the hisp program spells them ("f64", "c32", "b3x3_f64"; "csr",
 * "hisparse", "sell"; "reference", "opencl", "cuda", "auto"); from_name parses them
 * (HISP_ERR_INVALID_ARGUMENT for an unknown name). */
HISP_API const char *hisp_type_name(hisp_type t);
HISP_API hisp_status hisp_type_from_name(const char *name, hisp_type *t);
HISP_API const char *hisp_format_name(hisp_format f);
HISP_API hisp_status hisp_format_from_name(const char *name, hisp_format *f);
HISP_API const char *hisp_backend_name(hisp_backend_kind k);
HISP_API hisp_status hisp_backend_from_name(const char *name, hisp_backend_kind *k);

/* ==== context: backends, devices, errors, options ============================================ */

typedef struct {
    hisp_status status;    /* status of the failing call */
    const char *message;   /* human-readable reason; "" when none */
    const char *file;      /* file being read, or NULL */
    int64_t line;          /* 1-based line in that file, 0 when not a parse error */
    int64_t native_code;   /* cudaError_t / cl_int / errno, 0 when none */
    const char *build_log; /* kernel build log, or NULL */
} hisp_error_info;

typedef struct {
    hisp_backend_kind backend;
    int index;          /* index within the backend's flat device list */
    char name[256];     /* device name */
    char platform[256]; /* OpenCL platform or "CUDA <version>" */
    char vendor[128];
    int is_gpu, is_cpu;
    int compute_units;
    int fp64;            /* double precision supported */
    uint64_t global_mem; /* bytes */
    char driver[128];
} hisp_device_info;

/* A new context starts on the reference backend (plain C on the host). */
HISP_API HISP_NODISCARD hisp_status hisp_context_create(hisp_context *ctx);
/* Objects made on the context and not destroyed yet lose their device
 * copies and are orphaned (see the top of this header): destroy them too. */
HISP_API void hisp_context_destroy(hisp_context *ctx);
/* Select a backend and device. device = -1 picks the first (for OpenCL: GPUs
 * first). HISP_BACKEND_AUTO tries CUDA, OpenCL, then the reference. Objects
 * created earlier stay valid; their device copies move to the new backend on
 * next use. The new backend works in a stream / queue of its own
 * (hisp_context_set_stream). */
HISP_API HISP_NODISCARD hisp_status hisp_context_set_backend(hisp_context ctx,
                                                             hisp_backend_kind kind, int device);
/* The backend and device the context works on. */
HISP_API HISP_NODISCARD hisp_status hisp_context_get_device(hisp_context ctx,
                                                            hisp_device_info *info);
/* The last failure recorded on the context by a call on it or its objects:
 * status, reason, file line, native code, build log. The strings belong to
 * the context and are overwritten by its next failure. ctx = NULL: why this
 * thread's last hisp_context_create failed (HISP_OPTIONS). */
HISP_API HISP_NODISCARD hisp_status hisp_context_last_error(hisp_context ctx,
                                                            hisp_error_info *info);

/* ---- options -----------------------------------------------------------------------------------
 *
 * Settings a user may change, by name, on a context (as PETSc's options
 * database or GraphBLAS's GxB_set). `hisp info --options` lists them with
 * their type, default and meaning:
 *   threads    int 0..16  host threads for builds, conversions and generators
 *                         (0, the default: one per core, at most 16)
 *   cache_dir  string     folder of the disk cache of built kernels and tuning
 *                         plans ("": $XDG_CACHE_HOME/hisp, else ~/.cache/hisp;
 *                         "off": no disk cache)
 *   debug      bool       log what the library decides, and each error, to
 *                         stderr (0/1, false/true, off/on, no/yes; default 0)
 *   amg_theta  real 0..1  AMG's strength threshold (default 0.01)
 *   amg_smoother string   AMG's smoother: chebyshev (default), jacobi or
 *                         l1-jacobi
 *   amg_sweeps int 1..10  the smoother's steps before and after the coarse
 *                         correction (Chebyshev: its degree; default 3)
 *   amg_block  int 0..8   AMG's nodes: rows aggregated in blocks of this many
 *                         (3 for 3D elasticity; 0, the default: 3 for a b3x3
 *                         matrix, else 1)
 *   amg_precision string  AMG's levels and V-cycle for an f64 system: auto
 *                         (default: f32 on a GPU for a system of at least
 *                         100000 rows whose entries f32 holds, solved by
 *                         cg or bicgstab or set up as a hisp_preconditioner;
 *                         else f64: gmres's right preconditioning loses
 *                         iterations to f32's rounding, a CPU gains
 *                         nothing), single (f32) or full (the system's
 *                         type)
 *   chebyshev_degree int 2..32  the Chebyshev preconditioner's steps (its
 *                         products with A per application + 1; default 4)
 *   ilu_factor_sweeps int -1..50  ILU(0) / IC(0): the factorisation's
 *                         fixed-point sweeps (0: exact, row by row on the
 *                         host; -1, the default: 3 where the preconditioner
 *                         runs on a GPU for a system of at least 100000
 *                         rows, else 0)
 *   ilu_solve_sweeps int -1..50  ILU(0) / IC(0): Jacobi sweeps per
 *                         triangular solve (0: exact solves; -1, the
 *                         default: 2 on a GPU from 100000 rows on, else 0)
 *   spgemm     string     the kernels of hisp_matrix_multiply and
 *                         hisp_matrix_ptap: hisp (default) or cusparse (the
 *                         CUDA backend, f32/f64: cuSPARSE's SpGEMM, ALG1,
 *                         else ALG3; a yardstick; plans keep hisp's)
 *   solver_precision string  cg on an f64 matrix: full (default) or mixed:
 *                         the iterations in f32, x and its residual
 *                         updated in f64 (hisp_solver_solve below)
 * hisp_context_create applies HISP_OPTIONS="name=value,name=value" from the
 * environment, for programs that cannot be changed; an unknown name or a bad
 * value there makes the creation fail with HISP_ERR_INVALID_ARGUMENT, and
 * hisp_context_last_error(NULL, &info) then says why. */
typedef enum {
    HISP_OPTION_INT,
    HISP_OPTION_BOOL,
    HISP_OPTION_STRING, /* free text, or one of the words its meaning lists */
    HISP_OPTION_REAL
} hisp_option_type;
typedef struct {
    const char *name;
    hisp_option_type type;
    const char *default_value;
    const char *meaning;
} hisp_option_info;

/* Set option `name` from its text form; an unknown name or a value of the
 * wrong type or out of range is HISP_ERR_INVALID_ARGUMENT (the message says
 * which) and changes nothing. */
HISP_API HISP_NODISCARD hisp_status hisp_context_set_option(hisp_context ctx, const char *name,
                                                            const char *value);
/* The current value of `name` as text (bool: "0" or "1") into value[size]. */
HISP_API HISP_NODISCARD hisp_status hisp_context_get_option(hisp_context ctx, const char *name,
                                                            char *value, size_t size);
/* The options, index 0 .. hisp_option_count() - 1. */
HISP_API int hisp_option_count(void);
HISP_API HISP_NODISCARD hisp_status hisp_option_describe(int index, hisp_option_info *info);
HISP_API const char *hisp_option_type_name(hisp_option_type type);

/* Wait for all queued device work of the context. */
HISP_API HISP_NODISCARD hisp_status hisp_context_synchronize(hisp_context ctx);

/* Is a backend compiled into this library? (Says nothing about devices.) */
HISP_API int hisp_backend_compiled(hisp_backend_kind kind);
/* Devices of a backend. A compiled backend without devices gives *count = 0
 * and HISP_SUCCESS; the reason is in the context's last error message. */
HISP_API HISP_NODISCARD hisp_status hisp_backend_device_count(hisp_context ctx,
                                                              hisp_backend_kind kind, int *count);
/* Device `index` (0..count-1) of a backend, without switching to it. */
HISP_API HISP_NODISCARD hisp_status hisp_backend_device_info(hisp_context ctx,
                                                             hisp_backend_kind kind, int index,
                                                             hisp_device_info *info);

/* ==== matrices: creation, information, conversion ============================================ */

typedef struct {
    hisp_type type;
    hisp_format format;
    int64_t nrows, ncols, nnz;
} hisp_matrix_info;

/* Create from user arrays (copied). COO entries may come in any order and
 * may repeat (duplicates are summed when converting to CSR/CSC). CSR/CSC
 * pointers must be monotone with ptr[0] = 0; indices 0-based and in range.
 * vals holds nnz entries of hisp_type_size(type) bytes; vals = NULL means all
 * ones (pattern). */
HISP_API HISP_NODISCARD hisp_status hisp_matrix_create_coo(hisp_context ctx, hisp_type type,
                                                           int64_t nrows, int64_t ncols,
                                                           int64_t nnz, const int32_t *rows,
                                                           const int32_t *cols, const void *vals,
                                                           hisp_matrix *A);
HISP_API HISP_NODISCARD hisp_status hisp_matrix_create_csr(hisp_context ctx, hisp_type type,
                                                           int64_t nrows, int64_t ncols,
                                                           const int64_t *rowptr,
                                                           const int32_t *colind, const void *vals,
                                                           hisp_matrix *A);
HISP_API HISP_NODISCARD hisp_status hisp_matrix_create_csc(hisp_context ctx, hisp_type type,
                                                           int64_t nrows, int64_t ncols,
                                                           const int64_t *colptr,
                                                           const int32_t *rowind, const void *vals,
                                                           hisp_matrix *A);
/* Frees the matrix (host and device copies) and sets *A to NULL. */
HISP_API void hisp_matrix_destroy(hisp_matrix *A);
/* Entry type, current format, sizes and stored entries. */
HISP_API HISP_NODISCARD hisp_status hisp_matrix_get_info(hisp_matrix A, hisp_matrix_info *info);
/* Convert in place to another host format (sorted; COO sorted row-major). */
HISP_API HISP_NODISCARD hisp_status hisp_matrix_convert(hisp_matrix A, hisp_format format);
/* A new matrix holding the same entries in another format (or the same).
 * HiSparse to HiSparse is O(1): B shares A's tree (and its state). */
HISP_API HISP_NODISCARD hisp_status hisp_matrix_duplicate(hisp_matrix A, hisp_format format,
                                                          hisp_matrix *B);
/* Borrow the host arrays of the current format (valid until the matrix is
 * converted or destroyed; operations such as hisp_spmv never convert it). Pointers not used by the
 * format are set NULL: COO: rows, cols; CSR: ptr = rowptr, cols; CSC: ptr = colptr, rows. */
HISP_API HISP_NODISCARD hisp_status hisp_matrix_host_arrays(hisp_matrix A, const int64_t **ptr,
                                                            const int32_t **rows,
                                                            const int32_t **cols,
                                                            const void **vals);
/* Bytes the matrix takes in a format with the given entry type (indices as
 * stored by hisp: 32-bit indices, 64-bit pointers when nnz >= 2^31).
 * HISPARSE: pool header + nodes of the tree for that type (the reachable
 * tree when A is HiSparse of that type, else a size pass with A's node
 * size). */
HISP_API HISP_NODISCARD hisp_status hisp_matrix_format_bytes(hisp_matrix A, hisp_format format,
                                                             hisp_type type, uint64_t *bytes);

/* A := A^T. O(1) for HiSparse (a flag in the handle, honoured by every
 * reader) and for CSR <-> CSC (the same arrays read the other way: a CSR
 * matrix becomes CSC and vice versa) and COO (row and column arrays swap);
 * the info then reports the transposed sizes and format. */
HISP_API HISP_NODISCARD hisp_status hisp_matrix_transpose(hisp_matrix A);
/* A := alpha * A, alpha a scalar of the real component type (float for
 * f32/c32/..., double for f64/...). O(1) for HiSparse (a factor in the
 * handle, kept in double); O(nnz) on the values of the other formats. */
HISP_API HISP_NODISCARD hisp_status hisp_matrix_scale(hisp_matrix A, const void *alpha);

/* ==== formats: HiSparse =========================================================================
 *
 * hisp_matrix_convert(A, HISP_FORMAT_HISPARSE) builds the tree with the
 * matrix's node size (hisp_matrix_set_node_size, default 128) and frees the
 * COO/CSR/CSC arrays; converting back gives sorted arrays. A HiSparse matrix
 * has no host arrays (hisp_matrix_host_arrays gives NULLs). hisp_spmv on a
 * HiSparse matrix (f32, f64) walks the tree with the dynamic scheduler on
 * the context's backend: the reference backend simulates it on the host,
 * OpenCL polls it from the host, CUDA runs it from a device-side controller
 * (hisp_context_sched_counts reports the work). The tree is copied to the
 * device at the first SpMV and kept with the matrix. The first SpMV of a
 * matrix on a device backend runs the scheduler and keeps its leaf queues;
 * later SpMVs of that matrix replay them in one round without the inner
 * levels (as cuSPARSE's analysis step, but implicit: no setting; CUDA sorts
 * the heavy leaves by output offset and builds its leaf plans at the first
 * replay of each orientation). The reference backend schedules every call.
 * A build and the
 * matrices duplicated or edited from it form a family sharing one memory
 * pool (an add, a load or a conversion starts a new one). Threads: each
 * family has a reader/writer lock. Any number of threads may read a family's
 * matrices (profile, save, format_bytes, write_mtx, conversions and
 * duplicates to other formats) while one thread edits, duplicates or
 * destroys matrices of it: the calls that change the pool (edit,
 * duplicate, destroy, SpMV (it makes the family's device copy current), an
 * add writing C into A's family) wait for the readers and vice versa, and a
 * matrix's tree never changes once made, so a reader sees it whole. This
 * covers the family, not the context the family lives in: calls that use
 * the context's backend (SpMV, add) or create and destroy its objects
 * from several threads must still be serialised by the caller as for every
 * object of a context, and one handle must not be changed (transpose,
 * scale, convert, destroy) while another thread uses it. The build
 * runs on all cores (pthreads); the context's threads option sets their
 * number. */

#define HISP_HISPARSE_DEFAULT_NODE_SIZE 128

/* Node size d used by later conversions to HiSparse and by
 * hisp_matrix_format_bytes(HISPARSE): a power of two in 4..256. Does not
 * rebuild a matrix already in HiSparse form (convert to CSR and back). */
HISP_API HISP_NODISCARD hisp_status hisp_matrix_set_node_size(hisp_matrix A, int d);

/* The paper's Figure 4 profile of a HiSparse matrix's reachable tree. */
typedef struct {
    int node_size, depth;
    int transposed;
    double scale;
    int64_t nodes[9];   /* nodes by type (index: 1 inner dense, 2..4 inner COO1/2/4,
                           5 leaf dense, 6..8 leaf COO1/2/4; 0 unused) */
    int64_t entries[9]; /* children (inner) or nonzeros (leaves) of those nodes */
    int64_t inner_sparse, inner_dense, leaf_sparse, leaf_dense; /* node counts */
    double inner_sparse_mean, inner_dense_mean;                 /* mean children per node */
    double leaf_sparse_mean, leaf_dense_mean;                   /* mean nonzeros per leaf */
    uint64_t bytes;     /* 16-byte pool header + reachable nodes = hisp_matrix_format_bytes */
    uint64_t pool_used; /* bytes of the family's pool in use (all its matrices) */
    uint64_t pool_live; /* of which still referenced by some matrix */
} hisp_hisparse_profile;

HISP_API HISP_NODISCARD hisp_status hisp_matrix_hisparse_profile(hisp_matrix A,
                                                                 hisp_hisparse_profile *p);

/* Copy-on-write edit of a HiSparse matrix: B = A with n changes applied in
 * order (a later change to the same entry wins). Change k sets entry
 * (rows[k], cols[k]) of the matrix as A shows it (transpose and scale
 * applied; the stored value is vals[k] / scale, and scale 0 is refused) to
 * vals[k] (inserting it when absent), or removes it when remove && remove[k]
 * (absent entries are ignored). vals may be NULL when every change is a
 * removal. A stays valid and unchanged; A and B share every node the changes
 * do not touch; only the paths from the root to touched leaves are copied
 * (O(depth * d^2) per touched leaf). B inherits A's transpose and scale.
 * When only the device holds A's tree (a device addition's result, or an
 * edit of one), only the nodes on those paths are read from the device and
 * B's new nodes go up at once: B stays device-resident, and no host copy of
 * the family's pool is brought up to date. */
typedef struct {
    int64_t inserted, overwritten, removed, ignored; /* ignored: removals of absent entries */
    int64_t nodes_copied;                            /* new nodes written for B */
    int64_t subtrees_shared; /* child references of copied nodes that point into A's tree */
    uint64_t bytes_added;    /* bytes of the new nodes */
} hisp_edit_stats;

HISP_API HISP_NODISCARD hisp_status hisp_matrix_edit(hisp_matrix A, int64_t n, const int32_t *rows,
                                                     const int32_t *cols, const void *vals,
                                                     const uint8_t *remove, hisp_matrix *B,
                                                     hisp_edit_stats *stats);

/* ==== formats: compound entries (complex, quaternion, 3x3 blocks) ===============================
 *
 * Entry types c32/c64 (complex), q32/q64 (quaternions, w x y z) and
 * b3x3_f32/b3x3_f64 (dense 3x3 blocks, row-major). y_i = sum_j A_ij * x_j
 * with the entry on the LEFT: complex and quaternion products are the
 * complex / Hamilton product a*x (quaternions do not commute), a block
 * multiplies a 3-vector. Vectors of c/q matrices have the matrix's type;
 * vectors of block matrices are real (f32/f64) with 3 scalars per block
 * row/column (hisp_compound_vector_type). hisp_spmv on these types runs the
 * default variant (CSR, AoS, AoS, static); op = T and op = H (A^T, and the
 * conjugate transpose A^H: complex and quaternion entries conjugated, 3x3
 * blocks transposed for both) run it on an explicit op(A) that A builds at
 * the first such call and keeps (its upload counts as the transposed copy of
 * the transfers block). alpha and beta are real scalars of the component
 * type. docs/COMPOUND.md has the
 * file extension (field "quaternion"), the layouts and the plan cache.
 *
 * A variant = layout (outer CSR | ELLPACK-R | SELL-16 | SELL-32, inner =
 * entry components AoS | SoA, vector components AoS | SoA) x schedule
 * (static: work-groups stride over chunks of rows; dynamic: an atomic chunk
 * counter; nt threads per work-group, nb work-groups per compute unit).
 * Each variant is a kernel generated from one source with defines, built
 * at run time (OpenCL build options, CUDA NVRTC) and cached. */

typedef enum {
    HISP_OUTER_CSR = 0,
    HISP_OUTER_ELL,    /* ELLPACK-R: padded, column-major, with row lengths */
    HISP_OUTER_SELL16, /* sliced ELLPACK, slices of 16 rows */
    HISP_OUTER_SELL32,
    HISP_OUTER_COUNT
} hisp_outer_layout;

typedef enum { HISP_AOS = 0, HISP_SOA = 1 } hisp_sublayout;

typedef struct {
    hisp_outer_layout outer;
    hisp_sublayout inner; /* matrix entry components */
    hisp_sublayout vec;   /* x and y components on the device */
} hisp_layout;

typedef struct {
    int dynamic; /* 0 static, 1 dynamic */
    int nt;      /* threads per work-group (0: the device's default) */
    int nb;      /* work-groups per compute unit (0: default) */
} hisp_schedule;

typedef struct {
    hisp_layout layout;
    hisp_schedule sched;
} hisp_variant;

/* Vector entry type and length multiplier for a matrix type: c/q/real ->
 * (t, 1); b3x3_f32 -> (f32, 3), b3x3_f64 -> (f64, 3). */
HISP_API HISP_NODISCARD hisp_status hisp_compound_vector_type(hisp_type t, hisp_type *vt,
                                                              int *per_entry);
/* "CSR-AoS-AoS", "ELL-SoA-AoS", "SELL16-...", "SELL32-..." (case-insensitive
 * parse; "CSR" alone means CSR-AoS-AoS). */
HISP_API HISP_NODISCARD hisp_status hisp_layout_name(const hisp_layout *l, char *buf, size_t size);
HISP_API HISP_NODISCARD hisp_status hisp_layout_from_name(const char *s, hisp_layout *l);
/* "static:256x4", "dynamic:128x8", "static" (defaults). */
HISP_API HISP_NODISCARD hisp_status hisp_schedule_name(const hisp_schedule *s, char *buf,
                                                       size_t size);
HISP_API HISP_NODISCARD hisp_status hisp_schedule_from_name(const char *s, hisp_schedule *out);
/* Device bytes of A (any entry type) in a layout: pointers (32-bit when the
 * stored entries fit), row lengths, column indices, values with padding. */
HISP_API HISP_NODISCARD hisp_status hisp_matrix_layout_bytes(hisp_matrix A, hisp_outer_layout o,
                                                             uint64_t *bytes);
/* B = the real expansion of A: complex a -> [[re,-im],[im,re]], quaternion
 * a -> its 4x4 left-multiplication matrix, 3x3 block -> its 9 scalars (f32
 * or f64; zeros inside blocks kept as entries). B*x_real = A*x with x's
 * components in AoS order. */
HISP_API HISP_NODISCARD hisp_status hisp_matrix_expand_real(hisp_matrix A, hisp_matrix *B);

/* ==== files: the output rule, .hisp files, Matrix Market ===================================== */

/* Files hisp writes (hisp_matrix_save, hisp_matrix_write_mtx,
 * hisp_vector_write_mtx, hisp_tune_plan_save, hisp_file_write): a missing
 * path or a regular file is replaced whole through a temporary file and a
 * rename (keeping the file's permission bits); a pipe or character device,
 * named directly or through symbolic links (/dev/stdout, /dev/null, a FIFO),
 * is written through as a stream; anything else is refused with HISP_ERR_IO
 * naming what it is (directory, block device, socket, dangling link, link to
 * a regular file) and left untouched.
 * Files read (.mtx, .hisp, plans) may declare at most 2^20 + 8 x (file size
 * in bytes) rows, and columns; pipes and devices are read up to 1 GiB.
 * hisp_file_write writes n bytes to path by that rule. */
HISP_API HISP_NODISCARD hisp_status hisp_file_write(hisp_context ctx, const char *path,
                                                    const void *data, size_t n);

/* HiSparse files (.hisp): a versioned header with sizes, state and checksums,
 * then the compacted pool of the reachable tree (docs/FORMAT.md). A matrix
 * not in HiSparse form is saved through a temporary tree with its node size
 * (A itself is not converted). load refuses a corrupt or truncated file with
 * HISP_ERR_INPUT_FORMAT (validation is linear in the file size whatever it
 * holds); the loaded matrix starts a family of its own. */
HISP_API HISP_NODISCARD hisp_status hisp_matrix_save(hisp_matrix A, const char *path);
HISP_API HISP_NODISCARD hisp_status hisp_matrix_load(hisp_context ctx, const char *path,
                                                     hisp_matrix *A);
/* Same from memory (name is used in error messages). */
HISP_API HISP_NODISCARD hisp_status hisp_matrix_load_buffer(hisp_context ctx, const void *data,
                                                            size_t size, const char *name,
                                                            hisp_matrix *A);

/* Matrix Market. Symmetric, skew-symmetric and Hermitian files are expanded
 * (entries on either side of the diagonal mirrored). A real/integer/pattern
 * file reads into f32/f64 (or complex with zero imaginary part); a complex
 * file needs c32/c64. gzip and bzip2 data (by its magic bytes) is
 * decompressed first, in files and buffers alike. */
typedef struct {
    char field[16];     /* real, double, integer, complex, pattern, quaternion */
    char symmetry[16];  /* general, symmetric, skew-symmetric, hermitian */
    int is_array;       /* array (dense) rather than coordinate */
    int64_t nnz_stored; /* entry lines in the file */
} hisp_mtx_header;

HISP_API HISP_NODISCARD hisp_status hisp_matrix_read_mtx(hisp_context ctx, const char *path,
                                                         hisp_type type, hisp_matrix *A,
                                                         hisp_mtx_header *header);
/* Same from memory (size bytes, need not be NUL-terminated); name is used
 * in error messages. */
HISP_API HISP_NODISCARD hisp_status hisp_matrix_read_mtx_buffer(hisp_context ctx, const char *data,
                                                                size_t size, const char *name,
                                                                hisp_type type, hisp_matrix *A,
                                                                hisp_mtx_header *header);
/* A Matrix Market file's banner and size line without its entries (what
 * scipy.io.mminfo tells): the sizes, the header, and the entry type
 * hisp_matrix_read_mtx reads it as unless told otherwise (complex: c64,
 * quaternion: q64, else f64). Reads the first MiB of the file at most
 * (decompressed where it is gzip or bzip2); the banner and size line must
 * lie within it. A pipe's first MiB is consumed. Bad headers fail as
 * hisp_matrix_read_mtx's do, with the line. */
typedef struct {
    int64_t nrows, ncols;
    hisp_mtx_header header; /* nnz_stored: the size line's entry count (array: the entries) */
    hisp_type type;
} hisp_mtx_info;
HISP_API HISP_NODISCARD hisp_status hisp_matrix_read_mtx_info(hisp_context ctx, const char *path,
                                                              hisp_mtx_info *info);
HISP_API HISP_NODISCARD hisp_status hisp_matrix_read_mtx_info_buffer(hisp_context ctx,
                                                                     const char *data, size_t size,
                                                                     const char *name,
                                                                     hisp_mtx_info *info);
/* Writes a general coordinate file (real or complex field); a path ending
 * in .gz or .bz2 is compressed. Values read back exactly. */
HISP_API HISP_NODISCARD hisp_status hisp_matrix_write_mtx(hisp_matrix A, const char *path);

/* ==== generators ============================================================================= */

typedef enum {
    HISP_GEN_POISSON2D = 0, /* 5-point Laplacian on n x n grid: n^2 rows */
    HISP_GEN_POISSON3D,     /* 7-point Laplacian on n^3 grid */
    HISP_GEN_BANDED,        /* n rows, random entries within |i-j| <= bandwidth */
    HISP_GEN_RANDOM,        /* n x n, uniform random, nnz_per_row on average */
    HISP_GEN_RMAT,          /* 2^scale vertices, edge_factor*2^scale edges */
    HISP_GEN_DENSE,         /* n x n, every entry */
    HISP_GEN_CIRCUIT,       /* n x n, diagonal + sparse + a few dense rows/cols */
    HISP_GEN_BLOCKDIAG,     /* n x n, small dense clusters near the diagonal */
    HISP_GEN_ANISO3D,       /* 7-point Laplacian on n^3, coupling epsilon in z (SPD) */
    HISP_GEN_JUMP3D,        /* 7-point diffusion on n^3, coefficient 1 or contrast per block */
    HISP_GEN_COUNT
} hisp_gen_kind;

typedef struct {
    hisp_gen_kind kind;
    int64_t n;          /* grid side (poisson, aniso3d, jump3d: n^2 or n^3 rows), rows = cols
                           (others); rmat: ignored. Defaults: 1000 poisson2d and dense, 64
                           poisson3d, aniso3d and jump3d, 100000 others */
    uint64_t seed;      /* same params + type give bit-identical output anywhere (default 1) */
    int64_t bandwidth;  /* banded: half-bandwidth, entries within |i-j| <= bandwidth (8) */
    double nnz_per_row; /* mean entries per row (clipped to n), diagonal included: banded
                           (16, clipped to the band width 2*bandwidth+1), random (8),
                           circuit (5, the part outside the dense rows/cols) */
    int scale;          /* rmat: 2^scale vertices, 0..30 (default 16) */
    int edge_factor;    /* rmat: edges per vertex (default 8); repeated edges are merged */
    int block;          /* blockdiag: cluster size; jump3d: side of the coefficient's cubes
                           (default 8) */
    double dense_share; /* circuit: share of entries in the dense rows/cols, 0..0.95 (0.3) */
    double epsilon;     /* aniso3d: the z coupling, > 0 (default 1e-3) */
    double contrast;    /* jump3d: the large coefficient, >= 1 (default 1e4) */
} hisp_gen_params;

/* Fill defaults for a kind (n, seed and kind-specific values). */
HISP_API void hisp_gen_defaults(hisp_gen_kind kind, hisp_gen_params *p);
HISP_API const char *hisp_gen_name(hisp_gen_kind kind);
HISP_API HISP_NODISCARD hisp_status hisp_gen_from_name(const char *name, hisp_gen_kind *kind);
/* A CSR matrix (values random in [-1,1) except the Laplacians, sorted, no
 * duplicates), deterministic for a given (params, type), f32 or f64. Sizes
 * this machine cannot hold are refused (OUT_OF_HOST_MEMORY) before any work.
 * Details of each kind: core/gen/gen.c. */
HISP_API HISP_NODISCARD hisp_status hisp_matrix_generate(hisp_context ctx, const hisp_gen_params *p,
                                                         hisp_type type, hisp_matrix *A);
/* B = A with every entry moved by independent normal offsets of standard
 * deviation sigma in row and column (rounded, redrawn until inside the
 * matrix; when sigma exceeds 4x the dimension, where a redraw almost never
 * lands inside, a cell inside is drawn uniformly and accepted with the
 * normal density of its offset) and a fresh random value in [-1,1); entries
 * that land on the same cell are merged (values summed). The HiSparse paper's second operand of
 * an addition (sigma = 10). Deterministic for (A, sigma, seed); B is CSR,
 * sorted, of A's type (f32 or f64). */
HISP_API HISP_NODISCARD hisp_status hisp_matrix_perturb(hisp_matrix A, double sigma, uint64_t seed,
                                                        hisp_matrix *B);

/* Generators of compound-entry test matrices (deterministic from seed). */
typedef enum {
    HISP_CGEN_FEM3X3 = 0, /* 27-point block stencil on an n^3 mesh (b3x3) */
    HISP_CGEN_QSURFACE,   /* quaternionic Dirac-like operator on an n x 2n torus mesh (q) */
    HISP_CGEN_HELMHOLTZ,  /* 2D 5-point Laplacian - (k^2 + i*eps) on n x n (c) */
    HISP_CGEN_ELASTIC3D,  /* 3D linear elasticity, Q1 hexahedra, one face clamped (b3x3; SPD) */
    HISP_CGEN_COUNT
} hisp_cgen_kind;
HISP_API const char *hisp_cgen_name(hisp_cgen_kind k);
HISP_API HISP_NODISCARD hisp_status hisp_cgen_from_name(const char *name, hisp_cgen_kind *k);
/* type must match the kind's family in precision f32/f64 (fem3x3 and
 * elastic3d: b3x3_*, qsurface: q*, helmholtz: c*). n >= 1 (elastic3d:
 * n >= 2) and at most 2^31 - 1 rows of entries, else
 * HISP_ERR_INVALID_ARGUMENT. elastic3d has no random part: seed is
 * ignored. docs/COMPOUND.md defines each kind. */
HISP_API HISP_NODISCARD hisp_status hisp_matrix_generate_compound(hisp_context ctx,
                                                                  hisp_cgen_kind kind, int64_t n,
                                                                  uint64_t seed, hisp_type type,
                                                                  hisp_matrix *A);

/* ==== vectors ================================================================================ */

/* A vector of n >= 0 entries of `type` (the vector type of a matrix:
 * hisp_compound_vector_type), zero-filled. Its device copy is made at first
 * use on a device backend and kept there between calls; the host copy is
 * brought up to date only when the host reads it. */
HISP_API HISP_NODISCARD hisp_status hisp_vector_create(hisp_context ctx, hisp_type type, int64_t n,
                                                       hisp_vector *v);
/* Frees the vector (host and device copies) and sets *v to NULL. */
HISP_API void hisp_vector_destroy(hisp_vector *v);
/* Number of entries. */
HISP_API HISP_NODISCARD hisp_status hisp_vector_size(hisp_vector v, int64_t *n);
/* Copy n entries in from / out to host memory (synchronous). */
HISP_API HISP_NODISCARD hisp_status hisp_vector_write(hisp_vector v, const void *host);
HISP_API HISP_NODISCARD hisp_status hisp_vector_read(hisp_vector v, void *host);
/* Copy count entries from entry `offset` on, in from / out to host memory
 * (synchronous; count * hisp_type_size bytes at host). Only the range moves:
 * on a device-resident vector, read_range copies count entries down and
 * leaves the host copy stale; write_range copies them up and keeps every
 * valid copy valid. offset >= 0, count >= 0, offset + count <= n, else
 * HISP_ERR_INVALID_ARGUMENT and nothing moves. Counted by
 * hisp_context_transfers (d2h / h2d, one copy each) where data moves. */
HISP_API HISP_NODISCARD hisp_status hisp_vector_read_range(hisp_vector v, int64_t offset,
                                                           int64_t count, void *host);
HISP_API HISP_NODISCARD hisp_status hisp_vector_write_range(hisp_vector v, int64_t offset,
                                                            int64_t count, const void *host);
/* A Matrix Market file of n rows and k >= 1 columns: an array, or a
 * coordinate file (missing entries 0; of an entry repeated, the last one
 * read counts). k = 1 gives a plain vector of n entries, k > 1 a vector of
 * n*k entries with k columns in HISP_ORDER_COL (hisp_vector_columns). */
HISP_API HISP_NODISCARD hisp_status hisp_vector_read_mtx(hisp_context ctx, const char *path,
                                                         hisp_type type, hisp_vector *v);
/* Writes v as an n x k array file of its k columns (hisp_vector_columns;
 * n x 1 for a plain vector), in the file's column-major order whatever
 * v's order. */
HISP_API HISP_NODISCARD hisp_status hisp_vector_write_mtx(hisp_vector v, const char *path);

/* ==== memory the caller already has: streams, wrapped vectors and matrices ======================
 *
 * Zero-copy interop with device memory and streams the caller owns. The
 * calls take `void *`; what it means depends on the context's backend:
 *   CUDA       a device pointer of the context's device (cudaMalloc,
 *              cudaMallocAsync or managed memory); a stream is a
 *              cudaStream_t.
 *   OpenCL     a cl_mem cast to void *, a buffer of the cl_context hisp
 *              works in (the context of the queue set with
 *              hisp_context_set_stream, or hisp's own, which
 *              clGetMemObjectInfo(CL_MEM_CONTEXT) of an exported buffer
 *              gives); a stream is a cl_command_queue.
 *   reference  a host pointer; no streams.
 * hisp never frees the caller's memory (OpenCL: it holds a reference of its
 * own, from clRetainMemObject, to every cl_mem it wraps, from the wrap until
 * the object is destroyed or stops using it, so the caller may release theirs
 * right after wrapping). Sizes are checked where the
 * backend can tell them (OpenCL: CL_MEM_SIZE and CL_MEM_CONTEXT; CUDA: that
 * the pointer is device or managed memory of the context's device). */

/* The stream / queue every kernel and copy of the context goes to (in
 * order). NULL goes back to hisp's own. CUDA: the device copies of the
 * context's objects stay; hisp waits for its old stream first. OpenCL: the
 * queue must be in order; hisp then works in the queue's cl_context and
 * cl_device (which must be an OpenCL device hisp lists, or a sub-device of
 * one), so every object's device copy on the old queue is dropped first as
 * by hisp_context_set_backend (wrapped memory: see below). A queue without
 * CL_QUEUE_PROFILING_ENABLE works; hisp_spmv_timed then times on the host
 * (a clFinish at each mark). hisp retains the queue while it uses it. The
 * reference backend accepts NULL only (HISP_ERR_UNSUPPORTED otherwise).
 * get_stream gives the stream / queue in use: the caller's, else hisp's own
 * (so that the caller can order work after hisp's); NULL on the reference
 * backend. */
HISP_API HISP_NODISCARD hisp_status hisp_context_set_stream(hisp_context ctx, void *stream);
HISP_API HISP_NODISCARD hisp_status hisp_context_get_stream(hisp_context ctx, void **stream);

/* A vector of n entries of `type` whose device copy IS the caller's memory
 * mem (at least n * hisp_type_size(type) bytes, a device pointer aligned to
 * min(16, hisp_type_size(type)) bytes as cudaMalloc's are), not copied:
 * hisp's kernels read and write it in place. A host copy is allocated only when the host
 * needs the data (hisp_vector_read, the reference backend's host
 * operations). hisp_vector_write writes through to mem. Work hisp queues on
 * mem is ordered in the context's stream / queue: the caller reads mem in
 * that stream or after hisp_context_synchronize, and tells hisp of its own
 * writes with hisp_vector_device_modified. On a backend switch (and an
 * OpenCL set_stream) the data is read to the host and the vector becomes an
 * ordinary hisp vector: mem is no longer used. */
HISP_API HISP_NODISCARD hisp_status hisp_vector_wrap_device(hisp_context ctx, hisp_type type,
                                                            int64_t n, void *mem, hisp_vector *v);
/* The vector's device buffer (allocated and uploaded on first use; the
 * wrapped memory for a wrapped vector), valid until the vector is destroyed
 * or the context's backend (OpenCL: queue) changes. Not to be freed. */
HISP_API HISP_NODISCARD hisp_status hisp_vector_device_memory(hisp_vector v, void **mem);
/* The caller wrote the device buffer: hisp's host copy is stale. */
HISP_API HISP_NODISCARD hisp_status hisp_vector_device_modified(hisp_vector v);

/* Index arrays of CSR matrices from elsewhere: 32- or 64-bit signed
 * integers (scipy's indptr/indices are int32 unless large), base 0 (C,
 * scipy) or 1 (Fortran, MKL), as cuSPARSE's generic API allows. */
typedef enum { HISP_INDEX_32 = 0, HISP_INDEX_64 = 1 } hisp_index_type;

/* A CSR matrix from host arrays of any index shape, copied into hisp's
 * storage (64-bit pointers, 32-bit indices, base 0): rowptr nrows + 1
 * pointers of ptr_type with rowptr[0] = base and rowptr[nrows] = nnz + base,
 * colind nnz indices of idx_type in [base, ncols + base), vals nnz entries
 * (NULL: all ones). Checked as hisp_matrix_create_csr. */
HISP_API HISP_NODISCARD hisp_status hisp_matrix_import_csr(
    hisp_context ctx, hisp_type type, int64_t nrows, int64_t ncols, int64_t nnz, const void *rowptr,
    const void *colind, const void *vals, hisp_index_type ptr_type, hisp_index_type idx_type,
    int base, hisp_matrix *A);
/* A CSR matrix (f32 or f64) over the caller's device arrays, as above but
 * NOT copied: hisp's CSR kernels read rowptr, colind and vals in place, in
 * every index shape and base (CUDA: template parameters; OpenCL: build
 * defines). The first hisp_spmv reads the nrows + 1 row pointers to the host
 * once (counted by hisp_context_transfers) to plan the work and checks them
 * (monotone, rowptr[0] = base, rowptr[nrows] = nnz + base; HISP_ERR_INPUT_
 * FORMAT otherwise); column indices are not checked (out of range is
 * undefined, as in cuSPARSE). The device keeps only the plan. op = T
 * scatters with atomics (no transposed copy). The host storage is absent
 * until the host needs it (conversion, hisp_matrix_host_arrays, save, Matrix
 * Market output, partitions, the compound and HiSparse paths, and SpMV on
 * the reference backend): then the arrays are read once into hisp's storage.
 * The caller may change the values (and indices, keeping the row pointers)
 * between calls: the kernels see them; call hisp_matrix_device_modified so
 * that a host copy made earlier is dropped (and, when the row pointers
 * changed, the plan is made again). A call that changes the matrix
 * (convert, transpose, scale) and a backend switch (or an OpenCL
 * set_stream) read the arrays to the host and make it an ordinary hisp
 * matrix: the caller's arrays are no longer used. */
HISP_API HISP_NODISCARD hisp_status hisp_matrix_wrap_csr_device(
    hisp_context ctx, hisp_type type, int64_t nrows, int64_t ncols, int64_t nnz, void *rowptr,
    void *colind, void *vals, hisp_index_type ptr_type, hisp_index_type idx_type, int base,
    hisp_matrix *A);
/* The caller changed a wrapped matrix's arrays (a no-op for other
 * matrices). */
HISP_API HISP_NODISCARD hisp_status hisp_matrix_device_modified(hisp_matrix A);

/* ==== vector algebra ============================================================================
 *
 * Operations on vectors of one context, on its backend (the reference backend
 * runs the plain C loops that are every backend's oracle). Every entry type:
 * f32, f64, c32, c64, q32, q64; the vectors of b3x3 matrices are f32/f64
 * vectors of 3 scalars per block (hisp_compound_vector_type). All operands of
 * a call have one type and, where entries pair up, one length; a mismatch is
 * HISP_ERR_INVALID_ARGUMENT naming both. Length 0 is allowed (dot = 0).
 *
 * The calls are queued on the device and return; a result that goes to the
 * host (hisp_result_host) waits for it. Results kept on the device
 * (hisp_result_entry) and scalars read from the device (hisp_scalar_entry,
 * hisp_scalar_ratio) let a loop run without waiting on the host.
 *
 * Arithmetic of the compound types: complex and quaternion products as in
 * SpMV; a scalar multiplies a vector from the RIGHT (x*a: for quaternions the
 * vectors form a right module over which A, acting from the left, is linear;
 * for real and complex entries the order does not matter). dot(x, y) =
 * sum_i conj(x_i) * y_i: conjugate-linear in its FIRST argument (as cuBLAS's
 * dotc and numpy's vdot), so dot(x, x) = ||x||^2 is real. nrm2 is real (of
 * the component type), sqrt of the plain sum of squares (no scaling: f64
 * entries beyond about 1e154 overflow it). y^-1 * x is computed as
 * conj(y)*x / |y|^2 for complex and quaternion entries. Reductions sum in
 * double for every type (where the device has doubles) and round once; the
 * summation order depends on the device and the length only, so a result
 * is reproducible there. NaN and Inf propagate as in the plain loops. A
 * coefficient "= 0" (b in axpby, c in axpbypcz) is a value test made when
 * the operation runs, device scalars included. A NULL vector handle is
 * HISP_ERR_INVALID_ARGUMENT; vectors of type b3x3_* are
 * HISP_ERR_UNSUPPORTED. A failed call leaves every operand unchanged. */

/* A scalar operand: a value in host memory (one entry of the operation's
 * type), or an entry of a vector of that type on the device (read by the
 * kernels when they run, so it may be the result of an earlier call), or a
 * ratio num[i] * den[j]^-1 of two such entries, optionally negated (a
 * Krylov step's -rho/(p.q) without a trip to the host). Make them with the
 * functions below; the struct's fields are not part of the API. */
typedef struct {
    const void *host;
    hisp_vector num, den;
    int64_t inum, iden;
    int negate;
} hisp_scalar;
/* Where a reduction's result goes: host memory (the call waits), or an
 * entry of a vector of the result's type (the call does not wait; the
 * vector's other entries are kept). */
typedef struct {
    void *host;
    hisp_vector vec;
    int64_t index;
} hisp_result;

HISP_API hisp_scalar hisp_scalar_host(const void *value);
HISP_API hisp_scalar hisp_scalar_entry(hisp_vector v, int64_t i);
HISP_API hisp_scalar hisp_scalar_ratio(hisp_vector num, int64_t i, hisp_vector den, int64_t j,
                                       int negate);
HISP_API hisp_result hisp_result_host(void *value);
HISP_API hisp_result hisp_result_entry(hisp_vector v, int64_t i);

/* y_i = a */
HISP_API HISP_NODISCARD hisp_status hisp_vector_fill(hisp_vector y, hisp_scalar a);
/* y = x */
HISP_API HISP_NODISCARD hisp_status hisp_vector_copy(hisp_vector x, hisp_vector y);
/* y = y*a */
HISP_API HISP_NODISCARD hisp_status hisp_vector_scale(hisp_vector y, hisp_scalar a);
/* y = x*a + y*b (b = 0: y is not read) */
HISP_API HISP_NODISCARD hisp_status hisp_vector_axpby(hisp_scalar a, hisp_vector x, hisp_scalar b,
                                                      hisp_vector y);
/* z = x*a + y*b + z*c (c = 0: z is not read) */
HISP_API HISP_NODISCARD hisp_status hisp_vector_axpbypcz(hisp_scalar a, hisp_vector x,
                                                         hisp_scalar b, hisp_vector y,
                                                         hisp_scalar c, hisp_vector z);
/* Element-wise: z_i = x_i * y_i, and z_i = y_i^-1 * x_i (the division of
 * diagonal scaling D^-1 x with D = diag(y); x_i / y_i for real and complex
 * entries). z may be x or y. */
HISP_API HISP_NODISCARD hisp_status hisp_vector_mul(hisp_vector x, hisp_vector y, hisp_vector z);
HISP_API HISP_NODISCARD hisp_status hisp_vector_div(hisp_vector x, hisp_vector y, hisp_vector z);
/* r = dot(x, y) (the vectors' type); r = ||x||_2 (the real component type:
 * f32 for f32/c32/q32, f64 for the others). */
HISP_API HISP_NODISCARD hisp_status hisp_vector_dot(hisp_vector x, hisp_vector y, hisp_result r);
HISP_API HISP_NODISCARD hisp_status hisp_vector_nrm2(hisp_vector x, hisp_result r);
/* Fused forms, one pass over memory each:
 * axpby_dot:  y = x*a + y*b, then r = dot(y, w) with the new y (w NULL or y:
 *             r = ||y||^2; w may be x)
 * dot2:       r0 = dot(x, y), r1 = dot(x, w)
 * div_dot:    z = y^-1 * x element-wise (Jacobi: z = D^-1 r), then r = dot(x, z)
 *             with x as it was before the call (z may be x) */
HISP_API HISP_NODISCARD hisp_status hisp_vector_axpby_dot(hisp_scalar a, hisp_vector x,
                                                          hisp_scalar b, hisp_vector y,
                                                          hisp_vector w, hisp_result r);
HISP_API HISP_NODISCARD hisp_status hisp_vector_dot2(hisp_vector x, hisp_vector y, hisp_vector w,
                                                     hisp_result r0, hisp_result r1);
HISP_API HISP_NODISCARD hisp_status hisp_vector_div_dot(hisp_vector x, hisp_vector y, hisp_vector z,
                                                        hisp_result r);

/* ==== SpMV =================================================================================== */

/* y = alpha * op(A) * x + beta * y on the context's backend. alpha and beta
 * point to one scalar of the matrix's real component type (float for f32,
 * double for f64). With beta = 0, y is not read (NaN in y does not spread).
 * A is left as it is: a COO or CSC matrix is sent to the device as a CSR
 * made for the upload (duplicates summed), its format, nnz and borrowed
 * arrays do not change. */
HISP_API HISP_NODISCARD hisp_status hisp_spmv(hisp_context ctx, hisp_op op, const void *alpha,
                                              hisp_matrix A, hisp_vector x, const void *beta,
                                              hisp_vector y);
/* y = A x (op N, alpha 1, beta 0), then r = dot(x, y) (hisp_vector_dot's
 * result: host memory, or an entry of a vector of x's type, not waited
 * for): one pass over A, x and y where the backend fuses them (CUDA, a
 * square f32/f64 CSR matrix), hisp_spmv then hisp_vector_dot elsewhere (the
 * same results up to rounding). A square. A solver's CG product, and the
 * local part of an MPI operator's apply_dot. */
HISP_API HISP_NODISCARD hisp_status hisp_spmv_dot(hisp_context ctx, hisp_matrix A, hisp_vector x,
                                                  hisp_vector y, hisp_result r);

/* y = alpha*A*x + beta*y with one variant on the context's backend (the
 * reference backend emulates the layout's reads on the host). */
HISP_API HISP_NODISCARD hisp_status hisp_spmv_variant(hisp_context ctx, const hisp_variant *v,
                                                      const void *alpha, hisp_matrix A,
                                                      hisp_vector x, const void *beta,
                                                      hisp_vector y);

/* ==== many vectors at once: columns and SpMM ==================================================
 *
 * A vector of n*k entries may hold k columns of n entries each: the columns
 * one after another (HISP_ORDER_COL, entry (i, j) at j*n + i, as Fortran,
 * Matrix Market arrays and cuSPARSE's CUSPARSE_ORDER_COL) or the rows one
 * after another (HISP_ORDER_ROW, entry (i, j) at i*k + j, as C and numpy's
 * default). Every vector is one column until told otherwise; the vector
 * algebra treats it as its n*k entries, whatever its shape. */
typedef enum { HISP_ORDER_COL = 0, HISP_ORDER_ROW = 1 } hisp_order;
/* A zero-filled vector of k >= 1 columns of n >= 0 entries. */
HISP_API HISP_NODISCARD hisp_status hisp_vector_create_columns(hisp_context ctx, hisp_type type,
                                                               int64_t n, int64_t k,
                                                               hisp_order order, hisp_vector *v);
/* Gives v (of any origin: created, read, wrapped around the caller's device
 * memory) k columns in that order: its size must be a multiple of k. */
HISP_API HISP_NODISCARD hisp_status hisp_vector_set_columns(hisp_vector v, int64_t k,
                                                            hisp_order order);
/* v's columns and order (1 and HISP_ORDER_COL for a plain vector). */
HISP_API HISP_NODISCARD hisp_status hisp_vector_columns(hisp_vector v, int64_t *k,
                                                        hisp_order *order);

/* Y = alpha * op(A) * X + beta * Y for X and Y of k columns each (the same
 * k; each in either order): every column of X multiplied by A, A read once.
 * alpha, beta, the types and op as hisp_spmv's; with beta = 0, Y is not read.
 * k = 1 is hisp_spmv. Real entries in a CSR family format (COO, CSR, CSC,
 * wrapped CSR) run one SpMM kernel on every backend (complex ones on the
 * reference backend); SELL, HiSparse (op T without forming A^T) and complex
 * entries on a device run column by column through hisp_spmv, with X and Y
 * column-major (row-major: HISP_ERR_UNSUPPORTED). Compound types other than
 * complex are HISP_ERR_UNSUPPORTED. */
HISP_API HISP_NODISCARD hisp_status hisp_spmm(hisp_context ctx, hisp_op op, const void *alpha,
                                              hisp_matrix A, hisp_vector X, const void *beta,
                                              hisp_vector Y);

/* ==== addition: C = op(A) + op(B) ============================================================ */

/* C = op_a(A) + op_b(B) (transposed flags and scale factors of HiSparse
 * operands honoured), a new matrix in HiSparse form with A's node size.
 * Entries present in either operand are kept (an exact zero sum stays an
 * entry; where a device backend writes it into a dense leaf it is stored as
 * -0.0, since a dense cell whose bits are all zero is empty: equal to 0 in
 * every operation). A and B may be in any format; their types must match.
 * An operand not in HiSparse form (or of another node size than A's) is
 * made into a tree, and uploaded, at every call: convert it once
 * (hisp_matrix_convert) to add it repeatedly without moving its bytes. */
HISP_API HISP_NODISCARD hisp_status hisp_matrix_add(hisp_op op_a, hisp_matrix A, hisp_op op_b,
                                                    hisp_matrix B, hisp_matrix *C);

/* What the last hisp_matrix_add on the context did (all zero before the
 * first). On a device backend the add runs on the device (dual top-down
 * traversal, output nodes written into the device copy of A's family pool)
 * and C joins A's family: C's subtrees present in one operand only are
 * shared, not copied, when their scale and orientation allow it. C stays on
 * the device; its host copy is made when the host reads it (conversion,
 * save, profile, edit, a backend switch; docs/ARCHITECTURE.md). */
typedef struct {
    int64_t nnz;             /* entries of C */
    int64_t nodes_new;       /* nodes written for C */
    int64_t subtrees_shared; /* child references of new nodes that point into A's or B's tree */
    int64_t subtrees_copied; /* one-operand subtrees copied (scaled or from another family) */
    uint64_t bytes_new;      /* bytes of the new nodes */
    uint64_t bytes_reserved; /* device bytes of room for the output (0 on the host) */
    int pool_retries;        /* rounds redone after the device pool turned out too small */
    int rounds, launches;    /* scheduler rounds and kernel launches (0 on the host) */
    double device_ms; /* device time of the traversal, allocations and residency excluded (0 on the
                         host) */
    /* upload_ms: the operands' families made resident on the device (0 once
     * they are); download_ms: the host pool's reservation of C's offsets
     * (C's bytes are not downloaded) */
    double upload_ms, download_ms;
    int zero_retries; /* rounds redone because a leaf written dense had a union too small for
                         a dense leaf (a node from a file that breaks the construction's rule:
                         the check then runs before writing) */
} hisp_add_stats;
HISP_API HISP_NODISCARD hisp_status hisp_context_add_stats(hisp_context ctx, hisp_add_stats *st);

/* ==== sparse matrix-matrix product: C = op(A) * op(B), plans, P^T*A*P =====================
 *
 * What hisp does now: on a GPU (CUDA, OpenCL) the product runs on the
 * device (kernels/spgemm.cl: row bounds, a hash table per row in local or
 * global memory, a sort of each row), with the operands' host copies
 * uploaded in each call (once for A*A); a real (f32, f64) C of hisp_matrix_multiply stays
 * on the device where it fits whole (read back when a host reader needs it,
 * as a matrix wrapped with hisp_matrix_wrap_csr_device; SpMV reads it in
 * place), otherwise C is downloaded; on the reference backend and on
 * a CPU OpenCL device (PoCL) it runs on the host (plain C, Gustavson's
 * row-by-row algorithm, blocks of rows on the context's threads option),
 * which is faster there than kernels. Every backend gives the same bits.
 * An operand that lives on the device only is read there in place by a
 * GPU under op N when it has hisp's layout (a product kept there; a
 * wrapped CSR with int64 pointers, int32 columns, zero-based), and read
 * back first otherwise (the transfer is counted). CSR and CSC operands are read in place; COO,
 * HiSparse (its transposed flag and scale honoured) and SELL through a private CSR copy made for
 * the call. C is a new CSR matrix of A's context, converted to HiSparse when A is HiSparse; a host
 * C is uploaded where an operation on the device uses it, like any CSR matrix.
 *
 * op = N, T or H (H: the conjugate transpose for c32/c64; T for real
 * entries). A transpose is never formed as a user-visible matrix: a CSR
 * operand under T (a CSC one under N) is turned into the CSR of op(X) by a
 * counting sort, O(nnz + dimension), once per call (once per plan, which
 * then reads new values through the sort's permutation); a CSC operand under
 * T is its own CSR of X^T and is read in place.
 *
 * Entry types f32, f64, c32, c64; A and B of the same type; sums are
 * formed in the entry type. C's columns are sorted within each row,
 * without duplicates; an entry whose products cancel stays an entry with
 * the value 0 (as hisp_matrix_add keeps exact zero sums). Each row is
 * computed by one thread in a fixed order: the bits do not depend on the
 * thread count. Memory: C's arrays are allocated once, after a symbolic
 * pass has counted each row (64-bit counts: a C of more than 2^63 - 1
 * entries is refused, never wrapped); on the host each thread's scratch is
 * O(number of columns of C): a marker, a bitmap and a dense accumulator.
 * On a device the rows go in blocks, smaller ones where the device cannot
 * give a block's hash tables or part of C, so neither must fit at once;
 * C must fit in host memory. Out of memory is HISP_ERR_OUT_OF_HOST_MEMORY
 * (or _DEVICE_MEMORY for an operand, or a single row's table) with the
 * bytes in the last error; a failed call leaves A and B as they were and
 * allocates nothing. */

/* C = op_a(A) * op_b(B), a new matrix of A's context (CSR; HiSparse when A
 * is HiSparse). op(A)'s columns must equal op(B)'s rows
 * (HISP_ERR_INVALID_ARGUMENT naming both shapes); another entry type is
 * HISP_ERR_UNSUPPORTED. A and B may be the same matrix (A*A, A^T*A,
 * A*A^H). */
HISP_API HISP_NODISCARD hisp_status hisp_matrix_multiply(hisp_op op_a, hisp_matrix A, hisp_op op_b,
                                                         hisp_matrix B, hisp_matrix *C);

/* A plan for repeated products on the same patterns (time stepping, the
 * numeric re-setup of a multigrid hierarchy): create computes C as
 * hisp_matrix_multiply does (always CSR: the plan's C is CSR whatever A's
 * format) and keeps C's structure, the operands' patterns
 * and, for transposed operands, the counting sort's permutation. execute
 * takes A and B with new values on the same patterns and recomputes only
 * C's values, in place (no counting, sorting, transposing or allocation of
 * C): the same bits as a fresh product. On a GPU a real C then stays on
 * the device, as hisp_matrix_multiply's does, until a host reader needs
 * it. A or B whose pattern differs from
 * the plan's (sizes, nnz, row or column pointers, indices; or a CSC operand
 * that was not CSC) is HISP_ERR_INVALID_ARGUMENT and nothing is written; so
 * is a C that is not the plan's output (a CSR matrix of its type with its
 * structure, not an operand). The plan holds the patterns of A, B and C:
 * 4 bytes per entry (12 for a transposed operand) and 8 per row of each.
 * It belongs to A's context (destroying the context orphans it). */
typedef struct hisp_spgemm_plan_s *hisp_spgemm_plan;
HISP_API HISP_NODISCARD hisp_status hisp_spgemm_plan_create(hisp_op op_a, hisp_matrix A,
                                                            hisp_op op_b, hisp_matrix B,
                                                            hisp_spgemm_plan *plan, hisp_matrix *C);
HISP_API HISP_NODISCARD hisp_status hisp_spgemm_plan_execute(hisp_spgemm_plan plan, hisp_matrix A,
                                                             hisp_matrix B, hisp_matrix C);
HISP_API void hisp_spgemm_plan_destroy(hisp_spgemm_plan *plan);

/* What the context's last hisp_matrix_multiply, hisp_matrix_ptap or
 * hisp_spgemm_plan_execute did (zeroed at each call's start):
 * on_device 1 where its products ran through the device kernels (0: on
 * the host); device_ms the device's time from its first upload to its
 * last kernel (CUDA and OpenCL events: uploads, kernels and the row
 * bounds' and counts' downloads; a download of C and the host's own work
 * are not in it); device_bytes_peak the most device memory its own
 * buffers held at once (operands' copies, row lists, hash tables, C);
 * blocks the row blocks its count and fill phases took (2 when all rows
 * went at once). A plan execution reports its pass's device_ms and what it
 * allocated (its first one on a device makes the plan's device state). */
typedef struct {
    int on_device;
    double device_ms;
    uint64_t device_bytes_peak;
    int blocks;
} hisp_spgemm_stats;
HISP_API HISP_NODISCARD hisp_status hisp_context_spgemm_stats(hisp_context ctx,
                                                              hisp_spgemm_stats *st);

/* The Galerkin product C = P^T * A * P (A n x n, P n x m; C m x m, CSR;
 * HiSparse when A is) in one call: A*P into a private CSR, then P^T*(A*P)
 * with P read as the CSC of P^T (a counting sort of P's rows, as op T
 * above): P^T is never a matrix of its own. For complex entries P^T, not P^H (for P^H*A*P:
 * hisp_matrix_multiply(HISP_OP_H, P, HISP_OP_N, AP, &C)). */
HISP_API HISP_NODISCARD hisp_status hisp_matrix_ptap(hisp_matrix P, hisp_matrix A, hisp_matrix *C);

/* ==== iterative solvers =========================================================================
 *
 * Krylov methods that run where the matrix and vectors are (the context's
 * backend): every vector operation is one of the vector-algebra kernels
 * above and every product one hisp_spmv, so nothing but a few scalars
 * crosses to the host per iteration.
 *
 *   CG        A symmetric / Hermitian positive definite (f32, f64, c32, c64,
 *             q32, q64 with A quaternion-Hermitian: A_ji = conj(A_ij));
 *   BICGSTAB  square A (real and complex entries);
 *   GMRES     restarted GMRES(m), square A (real and complex entries);
 *             right preconditioning, classical Gram-Schmidt with delayed
 *             re-orthogonalisation (DCGS2: two passes over the basis and one
 *             wait per iteration; as accurate as modified Gram-Schmidt),
 *             Givens rotations; a step's product runs before the previous
 *             iteration's residual is known, so a solve does one product
 *             more than its iterations;
 *   LSQR      min ||A x - b||^2 + damp^2 ||x||^2 for rectangular A (Paige and
 *             Saunders; f32, f64 and the formats with op = T: CSR, HiSparse
 *             without forming A^T).
 * Preconditioners: none, or Jacobi: diag(A)^-1 (LSQR: the column scaling
 * D = diag(1/||A(:, j)||), x = x0 + D y; the problem solved stays
 * min ||A x - b||^2 + damp^2 ||x||^2, x0 and damping included). For b3x3 matrices Jacobi is
 * block-Jacobi with the inverses of the 3x3 diagonal blocks. A singular diagonal block is
 * HISP_ERR_INVALID_ARGUMENT naming the row; a zero diagonal entry: see hisp_precond. Further
 * preconditioners (l1-Jacobi, ILU(0), IC(0), AMG): hisp_precond below.
 *
 * Convergence: ||b - A x|| <= max(rtol * ||b||, atol) for the returned x,
 * the residual computed from x at the end (LSQR: ||A^T (b - A x) - damp^2 x||
 * <= max(rtol * ||A^T b||, atol), the normal-equation residual; with Jacobi
 * both norms are of D times the vector). The norms are sums of squares
 * accumulated in double, rescaled where they would underflow or overflow.
 * The loop watches the residual its recurrence carries; when that meets the
 * tolerance and the true residual does not (rounding: typical in f32, or a
 * recurrence that drifted), the method restarts from the true residual
 * (residual replacement) and goes on; a restart that does not at least halve
 * the best true residual seen stops with HISP_STOP_STAGNATION: the entry
 * type cannot get closer (f32 reaches a relative residual of about
 * cond(A) * 6e-8 at best; use f64 for tighter tolerances). A breakdown of
 * the recurrence (BiCGSTAB's rho or r0^H v, GMRES's singular Hessenberg
 * matrix, LSQR's non-finite norms) restarts from the true residual too, and
 * is reported only after three restarts in a row without progress. A NaN or
 * Inf in x or its residual is never convergence. GMRES ends a cycle early where the Krylov space is
 * invariant (happy breakdown) and restarts from the true residual; LSQR with alpha or beta 0 has
 * reached the least-squares solution (estimate 0: converged). CG and BiCGSTAB keep their scalars
 * and residual norms on the device and read the norms at checks, in one copy: the loop does not
 * wait for the host in between. The first check comes after one iteration; the distance to the next
 * doubles up to the check interval (default 8) but never goes past the iteration the residual's
 * rate of decrease predicts for convergence. A solve stops at the first check whose latest iterate
 * meets the tolerance: usually within a few iterations of the first iterate that does. Where a
 * batch went below the tolerance and ended above it (a residual that is not monotone, as
 * BiCGSTAB's), the checks come every iteration from there. The monitor sees every iteration.
 * Interval 1 checks (and waits) every iteration. GMRES and LSQR need their scalars on the host
 * every iteration (Givens rotations, LSQR's recurrences) and check every iteration.
 *
 * Mixed precision (the context's option solver_precision=mixed): cg on an
 * f64 matrix (any format) iterates in f32 with reliable updates. x and
 * the residual b - A x stay in f64 with A's own entries; the iterations run
 * on A32 (A's entries rounded to f32, made at the first such solve and
 * kept with A until A changes or is destroyed) and f32 vectors (the
 * residual scaled by a power of 2); whenever the f32 residual has fallen
 * tenfold, or claims the tolerance, x and its residual are updated in f64
 * and the iteration goes on from them with its search direction kept. An
 * f32 iteration streams about 0.7x the bytes of an f64 one, but f32's
 * rounding slows the Krylov space (1.35-1.52x the f64 iterations on
 * poisson3d). The tolerance holds for the f64 residual (1e-10 and below
 * where f64 reaches it). info: iterations counts the f32 iterations,
 * refinements the f64 updates, iteration_type is f32, the monitor sees
 * each f32 iteration's residual in f64's units, residual_norm is computed
 * in f64 from x. Where the f32 iterations stop gaining (stagnation, a
 * breakdown: an A whose f32 rounding they cannot overcome) the solve goes
 * on in f64 from their x with the iterations left (iteration_type then
 * f64, refinements kept; the monitor's count starts again at 0). bicgstab,
 * gmres, lsqr, an entry outside [2^-64, 2^64], a preconditioner object
 * (made for the f64 matrix) and other entry types solve in their own
 * precision (iteration_type says which).
 *
 * Failures found at a check (breakdown, an indefinite matrix in CG, NaN or
 * Inf) return x as it was at the previous check (a copy kept on the device),
 * with the iterations of that x. hisp_solver_solve returns HISP_SUCCESS
 * whenever the solve ran, converged or not: the reason is in the info.
 * Errors (bad arguments, out of memory, a device failure) are statuses; x
 * then holds the initial guess or the last checked iterate. */

typedef struct hisp_solver_s *hisp_solver;

typedef enum {
    HISP_SOLVER_CG = 0,
    HISP_SOLVER_BICGSTAB,
    HISP_SOLVER_GMRES,
    HISP_SOLVER_LSQR,
    HISP_SOLVER_COUNT
} hisp_solver_method;

/* NONE; JACOBI diag(A)^-1 (3x3 blocks: their inverses; LSQR: column
 * scaling; where a diagonal entry is zero, L1_JACOBI instead, said in
 * hisp_solve_info.precond; over an MSREP plan and for quaternions that is
 * an error naming the row); AMG one V-cycle of smoothed aggregation
 * (CSR-convertible f32/f64 matrices; not LSQR nor matrix-free operators;
 * core/amg/); L1_JACOBI D^-1 with d_i = sum_j |a_ij| times the sign (phase)
 * of a_ii (positive where a_ii = 0; 1 for an empty row): real and complex
 * entries; ILU0 the incomplete LU factorisation on A's pattern, IC0 the
 * incomplete Cholesky factorisation A ~ L D L^H of a Hermitian positive
 * definite A (its lower triangle read), both applied as U^-1 L^-1
 * (CSR-convertible f32, f64, c32, c64; not LSQR nor operators;
 * core/ilu/): on a GPU, for a system of at least 100000 rows, factorised
 * on the device by fixed-point sweeps (f32/f64 CSR whose rows are sorted
 * with their diagonal; else on the host) and applied by Jacobi sweeps of
 * the triangles, elsewhere exact (options ilu_factor_sweeps,
 * ilu_solve_sweeps). ILU(0) fills a missing diagonal entry (counted in
 * precond_filled) and replaces a pivot |u_ii| <= 1e-8 r_i (r_i the row's
 * largest |a_ij|) by 1e-3 r_i with the pivot's sign (precond_shifted);
 * IC(0) where a pivot is not positive factorises A + s diag(r) instead, s =
 * 1e-3, 1e-2, .. 1e3 (precond_diag_shift), else refuses A. CHEBYSHEV the
 * polynomial p(D^-1 A) D^-1 that Chebyshev's iteration of the option
 * chebyshev_degree steps from 0 makes over [hi / 30, hi], hi a Lanczos
 * bound of D^-1 A's largest eigenvalue (A symmetric positive definite with
 * a positive diagonal, f32 or f64, any format; degree - 1 products with A
 * per application; not LSQR nor operators). */
typedef enum {
    HISP_PRECOND_NONE = 0,
    HISP_PRECOND_JACOBI,
    HISP_PRECOND_AMG,
    HISP_PRECOND_L1_JACOBI,
    HISP_PRECOND_ILU0,
    HISP_PRECOND_IC0,
    HISP_PRECOND_CHEBYSHEV,
    HISP_PRECOND_COUNT
} hisp_precond;

typedef enum {
    HISP_STOP_CONVERGED = 0,  /* the tolerance was met (b = 0: x = 0 at once) */
    HISP_STOP_MAX_ITERATIONS, /* the iteration limit came first */
    HISP_STOP_BREAKDOWN,      /* a recurrence divided by zero (BiCGSTAB rho or r0^H v,
                                 GMRES a singular or non-finite Hessenberg column,
                                 LSQR non-finite norms) or a residual became NaN or Inf,
                                 three times in a row after restarts from the true residual */
    HISP_STOP_INDEFINITE,     /* CG found p^H A p <= 0: A is not positive definite */
    HISP_STOP_NAN,            /* NaN or Inf in b, x0, A x0 or the returned x's residual */
    HISP_STOP_MONITOR,        /* the monitor asked to stop */
    HISP_STOP_STAGNATION,     /* the recurrence met the tolerance, the true residual did
                                 not, and a restart from it did not halve it: the tolerance
                                 is below what the entry type reaches on this matrix */
    HISP_STOP_COUNT
} hisp_stop_reason;

/* the most levels a preconditioner's hierarchy has (hisp_solve_info) */
#define HISP_PRECOND_MAX_LEVELS 25

typedef struct {
    hisp_stop_reason reason;
    int converged;            /* reason == HISP_STOP_CONVERGED */
    int64_t iterations;       /* iterations that made the returned x */
    double residual_norm;     /* ||b - A x|| of the returned x, computed from x at the
                                 end (LSQR: ||A^T (b - A x) - damp^2 x||) */
    double rhs_norm;          /* ||b|| (LSQR: ||A^T b||) */
    double relative_residual; /* residual_norm / rhs_norm (0 when b = 0) */
    double ms;                /* wall time of the solve (setup included) */
    double setup_ms;          /* of which: preconditioner and work vectors */
    /* Of ms, the wall time of the solve's operations by kind (the rest:
     * allocations, the preconditioner's setup, the checks' decisions and
     * host bookkeeping; nothing is counted twice, so their sum is <= ms;
     * setup_ms holds the first copy of x0, which vector_ms counts too):
     *   product_ms  the products A x (hisp_solver_solve_dist: the halo
     *               exchange, the parts' SpMVs and the merge; a fused
     *               product + dot counts here);
     *   vector_ms   element-wise updates (axpby, copies, fills, Jacobi's
     *               division), including the wait for such updates still
     *               running on a device when the next operation needs them;
     *   reduce_ms   dot products and norms: the partial sums on the devices
     *               (a fused update + dot counts here), reading them back and
     *               the sum on the host.
     * Filled by hisp_solver_solve_dist, whose every operation waits for its
     * devices, and by the one-context solves on the reference backend (host
     * loops). On the other backends one-context operations are queued
     * without waiting, so a host clock cannot split them: the three are 0
     * there. */
    double product_ms, vector_ms, reduce_ms;
    /* the residual norm the method's recurrence carried at the end (what
     * its loop saw; residual_norm is the truth) */
    double method_residual_norm;
    /* restarts of the recurrence from the true residual (after a false
     * convergence or a breakdown) */
    int64_t restarts;
    /* The preconditioner's levels (AMG: its hierarchy, the finest first;
     * 0 for the others): each level's rows and entries. */
    int precond_levels;
    int64_t precond_rows[HISP_PRECOND_MAX_LEVELS], precond_nnz[HISP_PRECOND_MAX_LEVELS];
    /* the levels' entry type (AMG: f32 where amg_precision gave an f64
     * system single-precision levels) */
    hisp_type precond_type;
    /* the preconditioner that ran (Jacobi on a zero diagonal: L1_JACOBI)
     * and what its setup changed: ILU(0) pivots replaced, diagonal entries
     * added to the pattern, IC(0)'s diagonal shift s */
    hisp_precond precond;
    int64_t precond_shifted, precond_filled;
    double precond_diag_shift;
    /* ILU0, IC0: the factorisation's fixed-point sweeps and the Jacobi
     * sweeps of each triangular solve (0: exact; options ilu_factor_sweeps,
     * ilu_solve_sweeps) */
    int precond_factor_sweeps, precond_solve_sweeps;
    /* 1 where the solve ran on the host's loops, not the device's kernels: a
     * real or complex CSR system of fewer than 20000 rows on a CPU device
     * (PoCL), with no preconditioner, Jacobi, ILU(0) or IC(0), where the host
     * is faster (the kernels' launches cost more than such an iteration);
     * the results are the reference backend's */
    int on_host;
    /* The entry type the iterations ran in: the vectors' (f32 where
     * solver_precision=mixed ran CG on an f64 system), and the f64 updates
     * of x and its residual there (0 for a solve in one precision). */
    hisp_type iteration_type;
    int64_t refinements;
    /* 1 where hisp_solver_solve_columns solved the column in lock step with
     * others (CG, BiCGSTAB on a GPU: one SpMM per product for every column
     * still running); ms and setup_ms are then the shared solve's */
    int lock_step;
} hisp_solve_info;

/* Called at each check for every iteration since the last: iteration k
 * (0: the initial residual) and its residual norms. Return nonzero to stop
 * (HISP_STOP_MONITOR). */
typedef int (*hisp_solver_monitor)(void *user, int64_t iteration, double residual_norm,
                                   double relative_residual);

HISP_API const char *hisp_solver_method_name(hisp_solver_method m);
HISP_API HISP_NODISCARD hisp_status hisp_solver_method_from_name(const char *name,
                                                                 hisp_solver_method *m);
HISP_API const char *hisp_precond_name(hisp_precond p);
HISP_API HISP_NODISCARD hisp_status hisp_precond_from_name(const char *name, hisp_precond *p);
HISP_API const char *hisp_stop_reason_name(hisp_stop_reason r);

/* A solver of one context with the defaults: rtol 1e-8, atol 0, 10000
 * iterations, restart 30, no preconditioner, damping 0, check interval 8
 * (the longest). */
HISP_API HISP_NODISCARD hisp_status hisp_solver_create(hisp_context ctx, hisp_solver_method method,
                                                       hisp_solver *s);
HISP_API void hisp_solver_destroy(hisp_solver *s);
/* rtol, atol >= 0 and finite, not both 0. */
HISP_API HISP_NODISCARD hisp_status hisp_solver_set_tolerances(hisp_solver s, double rtol,
                                                               double atol);
/* maxit >= 0 (0: only the initial residual is computed). */
HISP_API HISP_NODISCARD hisp_status hisp_solver_set_max_iterations(hisp_solver s, int64_t maxit);
/* GMRES: the Krylov space's size between restarts, 1..1000. */
HISP_API HISP_NODISCARD hisp_status hisp_solver_set_restart(hisp_solver s, int m);
HISP_API HISP_NODISCARD hisp_status hisp_solver_set_preconditioner(hisp_solver s, hisp_precond p);
/* LSQR: damp >= 0. */
HISP_API HISP_NODISCARD hisp_status hisp_solver_set_damping(hisp_solver s, double damp);
/* 1..1024: the most iterations between two reads of the residual norms. */
HISP_API HISP_NODISCARD hisp_status hisp_solver_set_check_interval(hisp_solver s, int k);
HISP_API HISP_NODISCARD hisp_status hisp_solver_set_monitor(hisp_solver s, hisp_solver_monitor f,
                                                            void *user);

/* A preconditioner set up once for a matrix and kept across solves: AMG's
 * hierarchy (HISP_PRECOND_AMG; its options are the context's amg_* at
 * creation), whose setup can cost several solves' iterations, ILU(0) /
 * IC(0)'s factors (HISP_PRECOND_ILU0, _IC0; an update factorises anew) or
 * Chebyshev's diagonal and bound (HISP_PRECOND_CHEBYSHEV, f32/f64). A:
 * square, of f32, f64 or 3x3-block entries for AMG, f32, f64, c32 or c64
 * for the factorisations (another format than CSR: set up from a CSR
 * copy); it must outlive P (a solve refuses P once A is
 * destroyed). Solves on A (or on another matrix of its size and type:
 * P is then a preconditioner of A's) use it through
 * hisp_solver_use_preconditioner. */
typedef struct hisp_preconditioner_s *hisp_preconditioner;
typedef struct {
    hisp_precond kind;
    double setup_ms; /* wall time of the creation */
    int levels;      /* AMG: the hierarchy, the finest first */
    int64_t rows[HISP_PRECOND_MAX_LEVELS], nnz[HISP_PRECOND_MAX_LEVELS];
    hisp_type type; /* the levels' entries (hisp_solve_info.precond_type) */
    /* ILU0, IC0: pivots replaced, diagonal entries filled, IC(0)'s shift
     * (hisp_solve_info.precond_shifted, _filled, _diag_shift) */
    int64_t shifted, filled;
    double diag_shift;
    /* ILU0, IC0: hisp_solve_info.precond_factor_sweeps, _solve_sweeps */
    int factor_sweeps, solve_sweeps;
} hisp_preconditioner_info;
HISP_API HISP_NODISCARD hisp_status hisp_preconditioner_create(hisp_precond kind, hisp_matrix A,
                                                               hisp_preconditioner *P);
HISP_API HISP_NODISCARD hisp_status hisp_preconditioner_get_info(hisp_preconditioner P,
                                                                 hisp_preconditioner_info *info);
/* New values (time stepping, a nonlinear iteration): P is set up again
 * for A, a matrix of P's size and type (P's matrix with new values, or
 * another; P then belongs to A), with the context's options of now. AMG
 * keeps its aggregates (no strength graph, no aggregation: the couplings
 * of P's matrix chose them) and computes the rest anew: prolongators,
 * Galerkin products, spectral bounds, the coarsest level's inverse. The
 * Galerkin products keep their structure: where A has the pattern of the
 * setup's matrix they recompute only values into the kept matrices (on a
 * GPU without counting or allocating; on the host by SpGEMM plans that the
 * first update makes), which P holds for it: each level's A*P, on a GPU
 * level 0's pattern (4 bytes an entry), on the host the plans' patterns;
 * a matrix of another pattern gets whole products. Where
 * amg_theta or amg_block changed since, it aggregates anew. After a
 * failure, solves refuse P until an update succeeds (which then
 * aggregates anew); info's setup_ms becomes the update's time. */
HISP_API HISP_NODISCARD hisp_status hisp_preconditioner_update(hisp_preconditioner P,
                                                               hisp_matrix A);
HISP_API void hisp_preconditioner_destroy(hisp_preconditioner *P);
/* The solver's solves use P (NULL: back to hisp_solver_set_preconditioner's
 * kind; setting a kind drops P). P must be of the solver's context; the
 * solver does not own it. cg, bicgstab and gmres with hisp_solver_solve. */
HISP_API HISP_NODISCARD hisp_status hisp_solver_use_preconditioner(hisp_solver s,
                                                                   hisp_preconditioner P);

/* Solve A x = b (LSQR: least squares) on the solver's context. x holds the
 * initial guess and receives the solution. A: CSR, COO, CSC or HiSparse of
 * any entry type the method takes; compound types run the variant of their
 * cached tuned plan (hisp tune) where there is one. Vectors: b of nrows(A)
 * entries, x of ncols(A), of the vector type of A (hisp_compound_vector_
 * type), all of the solver's context. info may be NULL. */
HISP_API HISP_NODISCARD hisp_status hisp_solver_solve(hisp_solver s, hisp_matrix A, hisp_vector b,
                                                      hisp_vector x, hisp_solve_info *info);

/* Solve A X = B for every column of B (hisp_vector_columns: k columns,
 * column-major; X the same shape, holding the initial guesses and receiving
 * the solutions). Each column has its own iterations, stop and info (info:
 * k entries, or NULL); a preconditioner with a setup (AMG, ILU(0), IC(0),
 * Chebyshev) is set up once for all columns (its time in
 * info[0].setup_ms). CG and BiCGSTAB with none or Jacobi on a GPU (no
 * monitor, one precision) run the columns in lock step: one SpMM per product
 * serves every column still running, each column with its own scalars,
 * leaving the product when it stops (info.lock_step); its true residual is
 * checked at the end, and a column whose truth misses the tolerance, or
 * that breaks down, is finished by hisp_solver_solve alone. Otherwise the
 * columns run one after another through hisp_solver_solve (the cost of k
 * solves). k = 1 is hisp_solver_solve. A row-major B or X of several
 * columns is HISP_ERR_UNSUPPORTED. */
HISP_API HISP_NODISCARD hisp_status hisp_solver_solve_columns(hisp_solver s, hisp_matrix A,
                                                              hisp_vector B, hisp_vector X,
                                                              hisp_solve_info *info);

/* A linear operator the caller applies: y = op(A) x on vectors of the
 * solver's context (op = T only for LSQR). For a matrix split over MPI
 * ranks, each rank holds the rows it owns (nrows_local entries of b and of
 * every vector of the square system) and `allreduce` sums n doubles over the
 * ranks in place (MPI_Allreduce with MPI_SUM): every dot product and norm is
 * reduced through it, so every rank takes the same steps. NULL allreduce:
 * one process. diagonal (Jacobi; may be NULL otherwise) writes the local
 * rows' diagonal entries into d. The solver calls allreduce once for
 * several reductions where a method issues them back to back (n up to 4
 * values per reduction: the components of complex and quaternion entries).
 *
 * apply_dot (optional, NULL: apply, then a dot; added after user, so an
 * initializer that ends at user leaves it NULL): y = A x (op N) and r =
 * dot(x, y) over the local entries (this rank's part; the solver sums it
 * through allreduce), r an entry of a solver's vector (hisp_result_entry):
 * write it with a hisp call that does not wait (hisp_spmv_dot,
 * hisp_vector_dot). CG's q = A p with p^H q: one pass where the local
 * product fuses them. */
typedef struct {
    int64_t nrows, ncols; /* local lengths of y and x of op = N */
    hisp_type type;       /* vector entry type */
    hisp_status (*apply)(void *user, hisp_op op, hisp_vector x, hisp_vector y);
    hisp_status (*diagonal)(void *user, hisp_vector d);
    hisp_status (*allreduce)(void *user, double *values, int n);
    void *user;
    hisp_status (*apply_dot)(void *user, hisp_vector x, hisp_vector y, hisp_result r);
} hisp_operator;
HISP_API HISP_NODISCARD hisp_status hisp_solver_solve_operator(hisp_solver s,
                                                               const hisp_operator *A,
                                                               hisp_vector b, hisp_vector x,
                                                               hisp_solve_info *info);

/* ==== several devices (MSREP): partitions, plans, distributed vectors and solves ================
 *
 * The nonzeros of A are split into parts of equal nonzero counts (Chen et
 * al., MSREP): pCSR cuts the row-major order at nnz/np boundaries and finds
 * each part's first and last row by binary search over the row pointers;
 * pCSC does the same over the column pointers of the column-major order;
 * pCOO cuts the row-major COO order and reads the rows from the row indices.
 * A row (column) cut by a boundary is shared by the parts on both sides (its
 * later parts have shared_first set). The row-block and column-block splits
 * (equal row / column counts) are the baselines. A plan sends each device
 * only its part (local pointers + the part's slice of the index and value
 * arrays, never the whole matrix) and keeps it resident; hisp_mspmv runs one
 * host thread per device and merges the partial results: row segments
 * (disjoint rows copied, shared rows summed, beta applied once) or partial
 * vectors summed (pCSC, column block, and op = T of row partitions). */

typedef enum {
    HISP_PART_ROWBLOCK = 0, /* equal row counts (baseline) */
    HISP_PART_COLBLOCK,     /* equal column counts (baseline of pCSC) */
    HISP_PART_PCSR,         /* nnz-balanced over the CSR order */
    HISP_PART_PCSC,         /* nnz-balanced over the CSC order */
    HISP_PART_PCOO,         /* nnz-balanced over the sorted COO order */
    HISP_PART_COUNT
} hisp_partition_kind;

/* One part. The nonzeros [nnz_begin, nnz_end) of the partition's order
 * (row-major for rowblock/pcsr/pcoo, column-major for colblock/pcsc); rows
 * (columns for colblock/pcsc) [start, end) hold them (start = end for an
 * empty part, except the block splits, which own their rows even when
 * empty); shared_first: row `start` also holds nonzeros of an earlier part. */
typedef struct {
    int64_t nnz_begin, nnz_end;
    int64_t start, end;
    int shared_first;
} hisp_part;

HISP_API const char *hisp_partition_name(hisp_partition_kind k);
HISP_API HISP_NODISCARD hisp_status hisp_partition_from_name(const char *name,
                                                             hisp_partition_kind *k);
/* Split A into nparts (1..4096) parts (parts[nparts]). A's CSR (CSC, sorted
 * COO) form is read where A is held in it; otherwise a temporary copy is made
 * (A is not converted). */
HISP_API HISP_NODISCARD hisp_status hisp_matrix_partition(hisp_matrix A, hisp_partition_kind kind,
                                                          int nparts, hisp_part *parts);

typedef struct hisp_mplan_s *hisp_mplan;

/* A device of a plan. The same (backend, device) may appear several times:
 * each entry opens a context of its own (several queues on one device). */
typedef struct {
    hisp_backend_kind backend;
    int device;
} hisp_device_ref;

/* Flags of hisp_mplan_create. */
#define HISP_MPLAN_NO_NUMA 1u /* no NUMA grouping or memory/thread binding */
/* Each device runs its part as a HiSparse tree (built from the part at
 * creation, default node size) through the dynamic scheduler instead of the
 * CSR kernel. */
#define HISP_MPLAN_HISPARSE 2u
/* A device listed k > 1 times is split into k sub-devices of about equal
 * compute units (OpenCL clCreateSubDevices; PoCL CPUs) instead of k
 * contexts sharing it; where it cannot be split, the plan falls back to
 * shared contexts (the breakdown's `sub` says which). */
#define HISP_MPLAN_SUBDEVICES 4u
/* hisp_mspmv_vec merges on the host even where the devices could merge
 * themselves (the baseline of the device-side merge). */
#define HISP_MPLAN_HOST_MERGE 8u
/* Each device runs cuSPARSE's CSR SpMV instead of hisp's kernel (CUDA
 * devices only: HISP_ERR_UNSUPPORTED elsewhere; parts up to 2^31-1
 * nonzeros). */
#define HISP_MPLAN_CUSPARSE 16u
/* The MSREP paper's p*-opt: each device receives its slice of the global row
 * (column) pointers and computes its local pointers itself, instead of the
 * host building a local copy. Honoured where the backend can (OpenCL, CUDA
 * with HISP_MPLAN_CUSPARSE, the reference backend; not pcoo, whose local
 * pointers come from the row indices); elsewhere the host computes them. The
 * breakdown's dev[].device_ptr says which. */
#define HISP_MPLAN_DEVICE_PTR 32u
/* Cuts of pcsr, pcsc and pcoo that fall inside a short row (at most
 * nnz / (64 * ndevices) entries) move to the nearer end of that row: no
 * part shares it, so no call merges it (at most half such a row of
 * imbalance); long rows are still split. */
#define HISP_MPLAN_ALIGN 64u

/* Partition A over ndevices (1..HISP_MPLAN_MAX_DEVICES) devices, one part each, and upload the
 * parts (one host thread per device; the parts stay on the devices until the
 * plan is destroyed). A is only read during the call (it may be destroyed
 * afterwards). With hwloc, devices are grouped by NUMA node (two levels:
 * nodes, then the devices of each node), and each worker thread and its
 * host buffers are bound to its device's node; on a one-node machine this
 * is the plain one-level split. Failures are recorded on A's context, which
 * owns the plan (destroyed first, it leaves a plan that only
 * hisp_mplan_destroy accepts). Only f32 and f64 matrices. On OpenCL, a
 * destroyed plan's per-device instances (queue, compiled programs,
 * sub-device) wait on A's context and serve the next plan made there (at
 * most HISP_MPLAN_MAX_DEVICES of them; hisp_context_destroy closes them):
 * PoCL keeps memory of every program build until no cl_context of the
 * process is left, so plans made one after another reuse instead of
 * rebuilding. */
HISP_API HISP_NODISCARD hisp_status hisp_mplan_create(hisp_matrix A, int ndevices,
                                                      const hisp_device_ref *devices,
                                                      hisp_partition_kind kind, unsigned flags,
                                                      hisp_mplan *plan);
/* The same with parts that balance nnz + row_cost * rows (columns for
 * pcsc) instead of nnz alone (pcsr, pcsc, pcoo; the block splits ignore
 * it): a kernel's time per part grows with its rows too (a pointer and an
 * entry of y each, short rows leave lanes idle), so on a power-law matrix
 * nnz-equal parts take unequal times. row_cost 0 is hisp_mplan_create. */
HISP_API HISP_NODISCARD hisp_status hisp_mplan_create_weighted(hisp_matrix A, int ndevices,
                                                               const hisp_device_ref *devices,
                                                               hisp_partition_kind kind,
                                                               unsigned flags, double row_cost,
                                                               hisp_mplan *plan);
/* The row cost that fits the plan's measured kernel times: least squares of
 * ms[k] = a * nnz_k + b * rows_k over its nonempty parts, *row_cost = b / a
 * (0 where b <= 0). ms: one time per device (NULL: the last call's
 * breakdown, dev[k].compute_ms). Where the parts' rows-to-nnz ratios are
 * (nearly) equal the times cannot tell rows from nonzeros: *row_cost is the
 * plan's own. A plan made with the result balances the times better. */
HISP_API HISP_NODISCARD hisp_status hisp_mplan_fit_row_cost(hisp_mplan plan, const double *ms,
                                                            double *row_cost);
HISP_API void hisp_mplan_destroy(hisp_mplan *plan);
/* y = alpha*op(A)*x + beta*y over the plan's devices; x and y are host
 * arrays of the plan's type (beta = 0: y is not read). */
HISP_API HISP_NODISCARD hisp_status hisp_mspmv(hisp_mplan plan, hisp_op op, const void *alpha,
                                               const void *x, const void *beta, void *y);
/* The same with x and y vectors of one context (the result stays on that
 * context's device: the iterative-solver case). Where the plan's devices and
 * the vectors' context are all on one backend with a device-side merge
 * (CUDA), x is copied device to device to every device, the partial results
 * come back device to device (peer copies) and are merged by kernels on the
 * vectors' device: nothing passes through the host. Otherwise (OpenCL,
 * mixed backends, HISP_MPLAN_HISPARSE, HISP_MPLAN_HOST_MERGE) x is read to
 * the host and hisp_mspmv's host merge runs. Returns after y is complete.
 * The breakdown's device_merge says which ran. */
HISP_API HISP_NODISCARD hisp_status hisp_mspmv_vec(hisp_mplan plan, hisp_op op, const void *alpha,
                                                   hisp_vector x, const void *beta, hisp_vector y);

/* Distributed vectors: vectors that live on a plan's devices between calls,
 * so that an iterative solver's SpMV moves nothing but the rows two parts
 * share. REPLICATED: all ncols(A) entries on every device (x). ROWS: the
 * nrows(A) entries split over the devices by row ownership (each device the
 * rows of its part; a row shared by two parts belongs to the earlier one;
 * rows no part holds to the next part, or the last). Row partitions only
 * (rowblock, pcsr, pcoo) with the CSR kernel (else HISP_ERR_UNSUPPORTED), on
 * any backend: the few entries that cross devices move device to device
 * where the plan's devices share a backend with peer copies (CUDA), through
 * host memory otherwise (OpenCL, mixed plans). Destroy the vectors before their plan (a plan
 * destroyed first frees their device memory and leaves handles that only
 * hisp_mvector_destroy accepts). */
typedef struct hisp_mvector_s *hisp_mvector;
typedef enum { HISP_MVEC_REPLICATED = 0, HISP_MVEC_ROWS = 1 } hisp_mvec_layout;

/* A new distributed vector of the layout, zero-filled on every device. */
HISP_API HISP_NODISCARD hisp_status hisp_mvector_create(hisp_mplan plan, hisp_mvec_layout layout,
                                                        hisp_mvector *v);
HISP_API void hisp_mvector_destroy(hisp_mvector *v);
HISP_API HISP_NODISCARD hisp_status hisp_mvector_length(hisp_mvector v, int64_t *n);
/* Host array of the vector's length and the plan's type, to / from the
 * devices (every device for REPLICATED; each its owned rows for ROWS). */
HISP_API HISP_NODISCARD hisp_status hisp_mvector_write(hisp_mvector v, const void *src);
HISP_API HISP_NODISCARD hisp_status hisp_mvector_read(hisp_mvector v, void *dst);
/* dst (REPLICATED) := src (ROWS) on every device: each device pulls the rows
 * the others own (the next iteration's x in a solver; square A). */
HISP_API HISP_NODISCARD hisp_status hisp_mvector_allgather(hisp_mvector src, hisp_mvector dst);
/* y = alpha*A*x + beta*y with x REPLICATED and y ROWS (beta = 0: y is not
 * read): every device multiplies its part into its own rows, and a row two
 * parts share is added on its owner after one peer copy of one entry. The
 * breakdown's total_ms is the call's wall time. */
HISP_API HISP_NODISCARD hisp_status hisp_mspmv_dist(hisp_mplan plan, const void *alpha,
                                                    hisp_mvector x, const void *beta,
                                                    hisp_mvector y);

#define HISP_MPLAN_MAX_DEVICES 64
/* Where the time went. One-time: partition (cut points and local pointers),
 * convert (temporary CSC/COO/CSR copy when A was held in another format),
 * distribution (contexts opened and parts uploaded, wall time over all
 * devices). Per SpMV (the last hisp_mspmv): x_ms (x sent to the devices),
 * compute (device time, by device events), gather (partial results read
 * back), merge (host), total (wall time of the call). */
typedef struct {
    hisp_partition_kind partition;
    int ndevices;
    int numa_nodes; /* NUMA nodes the devices were grouped into (1 on one-node machines) */
    double partition_ms, convert_ms, distribution_ms;
    double x_ms, compute_ms, gather_ms, merge_ms, total_ms; /* last SpMV (max over devices) */
    /* last SpMV merged on the vectors' device (hisp_mspmv_vec): gather_ms is
     * then the peer copies of the partial results, merge_ms the merge
     * kernels on the result's device; hisp_mspmv_dist: always 1, merge_ms
     * the owners' adds of shared boundary rows */
    int device_merge;
    struct {
        hisp_backend_kind backend;
        int device;
        int numa_node;     /* -1: unknown / spans the machine */
        int sub, nsub;     /* sub-device sub of nsub (HISP_MPLAN_SUBDEVICES), -1 and 0 when whole */
        hisp_part part;    /* its part */
        int64_t nnz;       /* nonzeros of the part */
        uint64_t bytes;    /* bytes sent at distribution (local pointers, indices, values) */
        double upload_ms;  /* its share of the distribution */
        double x_ms;       /* last SpMV: x sent */
        double compute_ms; /* last SpMV: device time of its kernel */
        double gather_ms;  /* last SpMV: result read back */
        int device_ptr;    /* its local pointers were computed on the device (p*-opt) */
        int vendor;        /* it runs cuSPARSE (HISP_MPLAN_CUSPARSE) */
        char name[128];    /* device name */
    } dev[HISP_MPLAN_MAX_DEVICES];
} hisp_mplan_breakdown;

HISP_API HISP_NODISCARD hisp_status hisp_mplan_get_breakdown(hisp_mplan plan,
                                                             hisp_mplan_breakdown *b);
/* NUMA nodes of this machine as hwloc reports them (1 when hisp was built
 * without hwloc). */
HISP_API int hisp_numa_nodes(void);

/* Solve with a square f32/f64 matrix spread over an MSREP plan's devices
 * (row partition, CSR kernel): b and x distributed vectors of layout ROWS of
 * the plan; every vector of the method lives on the devices the same way,
 * the product runs as hisp_mspmv_dist, and dot products are summed over the
 * devices on the host. The solver's context holds no data here. CG,
 * BiCGSTAB, GMRES; Jacobi from the plan's rows, or Chebyshev (its Lanczos
 * bound computed over the devices at the plan's first Chebyshev solve and
 * kept with the plan). The plan keeps the solve's
 * work vectors for its next solve (no allocation or zeroing then); they go
 * with the plan, or when a new distributed vector of it needs their memory. */
HISP_API HISP_NODISCARD hisp_status hisp_solver_solve_dist(hisp_solver s, hisp_mplan plan,
                                                           hisp_mvector b, hisp_mvector x,
                                                           hisp_solve_info *info);

/* ==== introspection and benchmark helpers: counters, timing, tuning, format choice =========== */

/* ---- transfers ---------------------------------------------------------------------------------
 *
 * Bytes the context's backend moved between host and device memory since the
 * context was made (or the counters were reset), each copy counted once, on
 * the context that made it:
 *  - h2d: data sent to the device: matrix uploads (CSR: the arrays as
 *    hisp_matrix_format_bytes(A, CSR) gives them -- 32-bit row pointers below
 *    2^31 nonzeros -- plus the kernels' work plan, a few bytes per group of
 *    rows; HiSparse: the pool plus the scheduler's partition tables; compound
 *    layouts), vectors written on the host and then used on the device, the
 *    transposed copy a backend builds at the first op = T;
 *  - d2h: data read back: hisp_vector_read of a device result (exactly
 *    n * type size), host copies refreshed for the host (save, conversion),
 *    results read by the host (e.g. the addition's new nodes, reductions);
 *  - control: the few bytes of queue counters, flags and root queue entries
 *    a scheduler or a kernel exchanges per round (both ways).
 * A sequence of SpMVs on device-resident matrices and vectors moves no h2d
 * or d2h bytes. Not counted: kernel arguments, device-to-device copies (MSREP
 * peer copies included). The reference backend moves nothing. MSREP plans
 * open a context per device: their uploads and copies count there, out of
 * the caller's reach; the caller's context counts only what it moved itself
 * (e.g. its vectors for hisp_mspmv_vec). */
typedef struct {
    uint64_t h2d_bytes, d2h_bytes; /* data */
    uint64_t h2d_calls, d2h_calls; /* copies of data */
    uint64_t control_bytes;        /* counters and flags, both ways */
} hisp_transfer_stats;
HISP_API HISP_NODISCARD hisp_status hisp_context_transfers(hisp_context ctx,
                                                           hisp_transfer_stats *st);
HISP_API HISP_NODISCARD hisp_status hisp_context_reset_transfers(hisp_context ctx);

/* ---- kernel builds -----------------------------------------------------------------------------
 *
 * Run-time kernels (OpenCL programs; CUDA modules compiled by NVRTC) are
 * built at their first use on a device, kept in memory for the process and
 * in the disk cache (the cache_dir option), so a later process loads them
 * instead. On a fresh machine the builds take noticeable time (more for
 * programs of many kernels; docs/BENCHMARKS.md, First use), spent inside the
 * call that first needs the kernel. The context counts, since it was made (or the
 * counters were reset), the programs its backend built or loaded and the
 * host time that took, so a caller that times a call can tell the build
 * from the operation:
 *  - built, build_ms: programs compiled from source (OpenCL: clBuildProgram
 *    and fetching the binary for the disk cache, for which PoCL compiles
 *    each kernel; CUDA: NVRTC, hisp's parallel pre-builds of the compound
 *    variants included, counted as their wall time);
 *  - loaded, load_ms: programs loaded from the disk cache or, on CUDA,
 *    from the cubins compiled into the library when it was built.
 * A program found in memory (built earlier in the process) counts nothing.
 * The wall time of a call includes its builds; the device times hisp
 * reports (hisp_spmv_timed's, hisp_add_stats' device_ms) do not, as kernels
 * are built before the first event of the timed work. Not counted: what a
 * runtime does inside a launch (PoCL compiles a kernel for its work-group
 * size at the first launch and keeps that in its own cache, ~/.cache/pocl),
 * which shows in a first call's device time. MSREP plans open a context per
 * device: their builds count there, as their transfers do. */
typedef struct {
    uint64_t built, loaded;   /* programs compiled from source / loaded from the disk cache */
    double build_ms, load_ms; /* host time of those */
} hisp_build_stats;
HISP_API HISP_NODISCARD hisp_status hisp_context_builds(hisp_context ctx, hisp_build_stats *st);
HISP_API HISP_NODISCARD hisp_status hisp_context_reset_builds(hisp_context ctx);
/* What a build notice gets: the backend and device that are about to
 * compile `programs` programs from source, and the folder of the disk cache
 * they go to (NULL when the cache is off: cache_dir=off or no home). */
typedef struct {
    hisp_backend_kind backend;
    const char *device; /* the device's name */
    const char *cache_dir;
    int programs;
} hisp_build_event;
typedef void (*hisp_build_notify)(void *user, const hisp_build_event *e);
/* fn (NULL: none) is called, in the thread that builds, right before ctx's
 * backend compiles programs from source (never for one found in memory or
 * in the disk cache): a program can say why a first use takes a while. */
HISP_API HISP_NODISCARD hisp_status hisp_context_set_build_notify(hisp_context ctx,
                                                                  hisp_build_notify fn, void *user);

/* ---- scheduler counts ----------------------------------------------------------------------- */

/* The work of the dynamic scheduler (HiSparse operations on a backend with a
 * scheduler: every backend but where noted). Queues are node type x entry
 * count bins (hisp_sched_queue_name names them); a round launches one node
 * kernel per queue with work. The same matrix and operation give the same
 * scheduled counts on every run and every backend. */
#define HISP_SCHED_MAX_QUEUES 16
typedef struct {
    int queues;                              /* queues of the operation */
    int64_t nodes[HISP_SCHED_MAX_QUEUES];    /* nodes processed per queue */
    int64_t launches[HISP_SCHED_MAX_QUEUES]; /* node-kernel launches per queue */
    int64_t rounds;                          /* controller rounds */
    int64_t total_nodes, total_launches;     /* sums of the above */
} hisp_sched_counts;

/* The counts of the last HiSparse SpMV run on the context (all zero before
 * the first): what that call did. A matrix's first SpMV on a device backend
 * is scheduled (the counts described above); a later one replays the leaf
 * queues (one round: the leaf queues' nodes, one launch each, no inner
 * nodes). The reference backend always reports the scheduled counts. */
HISP_API HISP_NODISCARD hisp_status hisp_context_sched_counts(hisp_context ctx,
                                                              hisp_sched_counts *counts);
/* Name of SpMV queue q ("inner-1", "inner-few", ..., "leaf-dense"), NULL
 * when q is out of range. */
HISP_API const char *hisp_sched_queue_name(int q);

/* ---- timed runs ----------------------------------------------------------------------------- */

/* Times `repeat` runs of hisp_spmv after `warmup` untimed runs, with device
 * events (host clock on the reference backend); ms[i] gets run i's time.
 * Data transfers happen during warm-up and are not timed. */
HISP_API HISP_NODISCARD hisp_status hisp_spmv_timed(hisp_context ctx, hisp_op op, const void *alpha,
                                                    hisp_matrix A, hisp_vector x, const void *beta,
                                                    hisp_vector y, int warmup, int repeat,
                                                    double *ms);

/* Same, timed: `warmup` untimed runs, then ms[i] = device time of run i.
 * Vector layout conversions happen before and after, untimed. */
HISP_API HISP_NODISCARD hisp_status hisp_spmv_variant_timed(hisp_context ctx, const hisp_variant *v,
                                                            const void *alpha, hisp_matrix A,
                                                            hisp_vector x, const void *beta,
                                                            hisp_vector y, int warmup, int repeat,
                                                            double *ms);

/* Measured device-to-device copy bandwidth (bytes read + written per second)
 * for `bytes`-sized buffers, median of `repeat` copies. */
HISP_API HISP_NODISCARD hisp_status hisp_copy_bandwidth(hisp_context ctx, size_t bytes, int repeat,
                                                        double *bytes_per_s);

/* ---- autotuning of compound variants -------------------------------------------------------- */

/* Autotuning. A plan is the winning variant for (device, driver, entry type,
 * matrix signature); tuning saves it in the plan cache (the cache_dir
 * option, else $XDG_CACHE_HOME/hisp, else ~/.cache/hisp; "off" disables), so the
 * next tune of a similar matrix on that device finds it and tunes nothing. */
typedef enum { HISP_TUNE_FULL = 0, HISP_TUNE_FAST = 1 } hisp_tune_search;

typedef struct {
    hisp_variant v;
    double ms;      /* median device time */
    double gbps;    /* layout bytes + x + y per median time */
    uint64_t bytes; /* layout bytes on the device */
} hisp_tune_result;

typedef struct {
    hisp_variant best;
    double ms;      /* of the best when tuned */
    char key[512];  /* device|driver|type|signature */
    int from_cache; /* 1: loaded from the cache, nothing tuned */
    int tried;      /* variants timed */
    double tune_ms; /* wall time of the search */
} hisp_tune_plan;

/* Progress: called after each timed variant (done of about total). */
typedef void (*hisp_tune_progress)(void *user, int done, int total, const hisp_tune_result *r);

/* The plan key of A on the context's device. */
HISP_API HISP_NODISCARD hisp_status hisp_tune_plan_key(hisp_context ctx, hisp_matrix A, char *key,
                                                       size_t size);
/* Tune A on the context's backend. use_cache: look the key up first (a hit
 * returns at once, from_cache = 1) and store the winner. results (cap
 * entries, may be NULL) get every timed variant sorted fastest first;
 * *count their number. */
HISP_API HISP_NODISCARD hisp_status hisp_tune(hisp_context ctx, hisp_matrix A,
                                              hisp_tune_search search, int use_cache,
                                              hisp_tune_progress progress, void *user,
                                              hisp_tune_result *results, int cap, int *count,
                                              hisp_tune_plan *plan);
/* Look A's key up in the plan cache: *found = 0 on a miss (a corrupt cache
 * file is a miss, not an error). */
HISP_API HISP_NODISCARD hisp_status hisp_tune_plan_lookup(hisp_context ctx, hisp_matrix A,
                                                          hisp_tune_plan *plan, int *found);
/* Explicit plan files (text, checksummed). load refuses a malformed or
 * corrupt file with HISP_ERR_INPUT_FORMAT and the line. */
HISP_API HISP_NODISCARD hisp_status hisp_tune_plan_save(hisp_context ctx,
                                                        const hisp_tune_plan *plan,
                                                        const char *path);
HISP_API HISP_NODISCARD hisp_status hisp_tune_plan_load(hisp_context ctx, const char *path,
                                                        hisp_tune_plan *plan);
/* The plan cache file of a key under ctx's cache_dir option (for tools and
 * tests); HISP_ERR_UNSUPPORTED when the disk cache is off. */
HISP_API HISP_NODISCARD hisp_status hisp_tune_plan_cache_path(hisp_context ctx, const char *key,
                                                              char *path, size_t size);

/* ---- the fastest format, chosen by measurement (hisp spmv --format auto) -----------------------
 *
 * hisp_matrix_choose_format times y = op(A)*x on the context's device with
 * every candidate A's type has, side by side and timed alike (one call
 * through the public API and hisp_context_synchronize per sample, rounds
 * over the candidates interleaved, the median per candidate):
 *  - HISP_CHOICE_CSR: hisp_spmv on A (the default kernel; always in the
 *    table; another format is chosen only when it is at least 3 % faster,
 *    so the choice is never slower than CSR in the table);
 *  - HISP_CHOICE_FORMAT: hisp_spmv on a copy of A in another format that
 *    offers itself for A's type and op (HiSparse and SELL for f32 and f64;
 *    build_ms is the copy's host time; HiSparse's first call schedules,
 *    later calls replay the leaves);
 *  - HISP_CHOICE_VARIANT: compound layouts x schedules (every type, op = N):
 *    hisp_tune's search (device time, its own plan cache) finds the leaders,
 *    which are then timed here beside the others.
 * Every candidate's y is compared with the CSR kernel's; one that differs
 * by more than 1e-4 (f32 components) or 1e-10 (f64) is never chosen. The
 * winner is kept in the plan cache under (backend, device, driver, type,
 * op, A's structure: sizes and a hash of its pointers and indices, at
 * most 2^20 evenly spaced entries of each); with
 * use_cache a later call on the same matrix and device finds it and times
 * nothing (from_cache = 1). A damaged cache entry is a miss. */
typedef enum {
    HISP_CHOICE_CSR = 0, /* hisp_spmv on the CSR form */
    HISP_CHOICE_FORMAT,  /* hisp_spmv on a copy of A in `format` */
    HISP_CHOICE_VARIANT  /* hisp_spmv_variant(variant) */
} hisp_choice_kind;

typedef struct {
    hisp_choice_kind kind;
    hisp_format format;   /* HISP_CHOICE_FORMAT */
    hisp_variant variant; /* HISP_CHOICE_VARIANT */
    double ms;            /* median wall time per call (INFINITY: failed or wrong) */
    double first_ms;      /* the first call: uploads, HiSparse scheduling, kernel builds */
    double build_ms;      /* host preparation before it (the HiSparse tree), else 0 */
    double rel_error;     /* ||y - y_csr|| / ||y_csr|| */
    uint64_t bytes;       /* the format's matrix bytes */
} hisp_format_result;

typedef struct {
    hisp_format_result best;
    double csr_ms;      /* the CSR kernel's time in the same table */
    hisp_op op;         /* the operation chosen for */
    char key[640];      /* backend|device|driver|type|signature|op|structure */
    int from_cache;     /* 1: read from the plan cache, nothing timed */
    int tried;          /* candidates timed side by side */
    int variants_tried; /* variants hisp_tune's search timed (0 from its cache) */
    double tune_ms;     /* wall time of the whole choice */
} hisp_format_choice;

/* Progress, after each variant of the search and each round of the table. */
typedef struct {
    const char *stage;              /* "variants" or "formats" */
    int done, total;                /* steps of this stage (total an estimate) */
    double best_ms;                 /* fastest of this stage so far (INFINITY: none) */
    const hisp_format_result *best; /* which (NULL: none yet) */
    double elapsed_ms, left_ms;     /* since the start; estimate of the rest */
} hisp_format_progress_info;
typedef void (*hisp_format_progress)(void *user, const hisp_format_progress_info *p);

typedef struct {
    int full_search; /* compound variants: 1 the full search, 0 the fast one */
    int no_cache;    /* neither read nor write the plan caches */
    hisp_format_progress progress;
    void *user;
    hisp_tune_result *variants; /* optional: the search's variants, fastest first */
    int variants_cap;
} hisp_format_options;

/* Choose the format of y = op(A)*x for the context's device (A: COO, CSR or
 * CSC; opt NULL: fast search, cache on). table (cap entries, may be NULL)
 * gets every candidate, fastest first; *count (may be NULL) their number. */
HISP_API HISP_NODISCARD hisp_status hisp_matrix_choose_format(
    hisp_context ctx, hisp_matrix A, hisp_op op, const hisp_format_options *opt,
    hisp_format_result *table, int cap, int *count, hisp_format_choice *choice);
/* "csr", "hisparse", or the variant "CSR-AoS-SoA dynamic:64x2". */
HISP_API HISP_NODISCARD hisp_status hisp_format_result_name(const hisp_format_result *r, char *buf,
                                                            size_t size);
/* The plan cache file of a choice's key under ctx's cache_dir option (for
 * tools and tests); HISP_ERR_UNSUPPORTED when the disk cache is off. */
HISP_API HISP_NODISCARD hisp_status hisp_format_choice_cache_path(hisp_context ctx, const char *key,
                                                                  char *path, size_t size);

#ifdef __cplusplus
}
#endif
#endif /* HISP_H */
