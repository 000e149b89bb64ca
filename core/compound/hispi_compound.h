/* Compound entries (complex, quaternion, 3x3 blocks): internal declarations
 * of core/compound/compound_*.c. The public side is the "Compound entries" block of
 * hisp.h; docs/COMPOUND.md describes layouts, the quaternion convention and
 * the plan cache. */
#ifndef HISPI_COMPOUND_H
#define HISPI_COMPOUND_H

#include "hispi.h"

/* Entry kinds as the kernels see them (define KIND). */
enum { HISPI_KIND_REAL = 0, HISPI_KIND_COMPLEX = 1, HISPI_KIND_QUAT = 2, HISPI_KIND_BLOCK3 = 3 };

typedef struct {
    int kind;  /* HISPI_KIND_* */
    int ec;    /* scalar components of one matrix entry: 1, 2, 4, 9 */
    int vc;    /* scalar components of one vector entry: 1, 2, 4, 3 */
    size_t ss; /* bytes of one scalar: 4 or 8 */
} hispi_ctype;

/* Kind and component counts of an entry type (false when invalid). */
HISPI_LOCAL bool hispi_ctype_of(hisp_type t, hispi_ctype *c);

/* One matrix in one layout on the host (what a device gets, byte for byte).
 * outer CSR: ptr = row pointer (nrows+1), entries in row order;
 * ELL: entry t of row i at t*ld + i (ld = nrows rounded up to 32), len[i];
 * SELL-S: slice s = rows [s*S, s*S+S), its entries from ptr[s] with entry t
 * of lane l at ptr[s] + t*S + l, len[i]. Padding has col 0 and value 0.
 * Entry values: inner AoS val[idx*ec + c]; SoA val[c*stored + idx]. */
typedef struct {
    hisp_type type;
    hispi_ctype ct;
    hisp_layout layout;
    int64_t nrows, ncols, nnz;
    int64_t stored; /* entry slots incl. padding */
    int64_t ld;     /* ELL: padded row count */
    int64_t nptr;   /* entries of ptr (CSR: nrows+1, SELL: slices+1, ELL: 0) */
    int64_t *ptr;
    int32_t *len; /* ELL/SELL row lengths, NULL for CSR */
    int32_t *col; /* stored */
    void *val;    /* stored * ec scalars */
    int wide;     /* ptr needs 64 bits on the device */
} hispi_clayout;

HISPI_LOCAL hisp_status hispi_clayout_build(hisp_context ctx, const hispi_sparse *csr,
                                            const hisp_layout *l, hispi_clayout *out);
HISPI_LOCAL void hispi_clayout_free(hispi_clayout *L);
/* Device bytes of the layout (pointers 4 or 8 bytes, indices 4, values). */
HISPI_LOCAL uint64_t hispi_clayout_bytes(const hispi_clayout *L);
/* Device bytes without building: exact, from the row lengths. */
HISPI_LOCAL hisp_status hispi_clayout_size(hisp_context ctx, const hispi_sparse *csr,
                                           const hisp_layout *l, uint64_t *bytes);
/* y = alpha*A*x + beta*y reading the layout's arrays as the kernels do; x
 * and y in the vector layout `vec_soa` (SoA: component c of entry j at
 * c*n + j). The host emulation of the kernels (reference backend). */
HISPI_LOCAL void hispi_clayout_spmv_host(const hispi_clayout *L, int vec_soa, double alpha,
                                         const void *x, double beta, void *y);

/* Plain serial CSR reference for every entry type (op = N), AoS vectors:
 * y_i = alpha * sum_j A_ij x_j + beta*y_i, products as in docs/COMPOUND.md,
 * accumulated in the scalar type. */
HISPI_LOCAL hisp_status hispi_compound_ref_spmv(hisp_context ctx, const hispi_sparse *A,
                                                double alpha, const void *x, double beta, void *y);

/* The same for op = N, T or H (hisp_op): op = T and H scatter over A's rows
 * (y has ncols(A) entries), entries as hispi_compound_op_csr makes them. */
HISPI_LOCAL hisp_status hispi_compound_ref_spmv_op(hisp_context ctx, const hispi_sparse *A,
                                                   hisp_op op, double alpha, const void *x,
                                                   double beta, void *y);
/* out = op(A) as a new CSR (op T or H; A CSR): A^T with complex and
 * quaternion entries conjugated for H, 3x3 blocks transposed for both. */
HISPI_LOCAL hisp_status hispi_compound_op_csr(hisp_context ctx, const hispi_sparse *csr, hisp_op op,
                                              hispi_sparse *out);
/* op(A) for op T or H as a matrix of A's context, built on first use and
 * kept with A's compound data (dropped with it): the product op(A)*x then
 * runs any variant on it. *M is A's, not the caller's to destroy. */
HISPI_LOCAL hisp_status hispi_compound_op_matrix(hisp_matrix A, hisp_op op, hisp_matrix *M);

/* Matrix Market: the quaternion field and blocking by 3 (core/io/mmio.c calls
 * these). */
HISPI_LOCAL hisp_status hispi_block3_from_real(hisp_context ctx, const char *name,
                                               const hispi_sparse *real, hisp_type t,
                                               hispi_sparse *out);

/* Compound SpMV on the context's backend (core/compound/compound_spmv.c). */
/* Build the kernels of these n variants of A ahead, on several host threads
 * where the backend can (CUDA's NVRTC); a no-op elsewhere. Best effort: a
 * variant that fails to build fails again when it runs, with its log. */
HISPI_LOCAL hisp_status hispi_compound_prebuild(hisp_context ctx, hisp_matrix A,
                                                const hisp_variant *v, int n);
HISPI_LOCAL hisp_status hispi_compound_spmv(hisp_context ctx, const hisp_variant *v, double alpha,
                                            hisp_matrix A, hisp_vector x, double beta,
                                            hisp_vector y, int warmup, int repeat, double *ms);
/* Parses a plan file's text (data[0..size), path names it in errors):
 * HISP_ERR_INPUT_FORMAT with the line unless it is whole and its checksum
 * holds (core/compound/compound_tune.c; fuzzed by fuzz/fuzz_plan.c). */
HISPI_LOCAL hisp_status hispi_tune_plan_parse(hisp_context ctx, const char *data, size_t size,
                                              const char *path, hisp_tune_plan *p);
/* The tuner's store into the plan cache: the cache's rule (whatever is not a
 * regular file at the entry's path is removed and replaced), not the rule of
 * files the caller names (hisp_tune_plan_save). */
HISPI_LOCAL hisp_status hispi_tune_plan_store(hisp_context ctx, const hisp_tune_plan *p,
                                              const char *path);
/* The format choice of (A, op) in the plan cache (core/compound/format_choose.c),
 * without timing anything: false on a miss, a damaged entry or a HiSparse A. */
HISPI_LOCAL bool hispi_format_choice_cached(hisp_context ctx, hisp_matrix A, hisp_op op,
                                            hisp_format_choice *c);
/* Release a matrix's compound device data (layouts, kernels, scratch). */
HISPI_LOCAL void hispi_compound_drop(hisp_matrix A);

#endif
