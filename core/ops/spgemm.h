/* The sparse matrix-matrix product inside the core (core/ops/spgemm*.c):
 * the operands' CSR views (spgemm_operand.c), the host phases
 * (spgemm_ref.c) and the product of two views (spgemm.c), shared by the
 * public calls and the plan (spgemm_plan.c). */
#ifndef HISPI_OPS_SPGEMM_H
#define HISPI_OPS_SPGEMM_H

#include "backend/backend.h"
#include "backend/spgemm_view.h"
#include "hispi.h"

/* ---- operands (spgemm_operand.c) -------------------------------------------
 *
 * An operand's source: X's entries as a CSR array triple, read in place
 * where X holds one (CSR: its rows; CSC: its columns, the CSR of X^T) and
 * otherwise a private CSR conversion (COO, HiSparse, SELL; freed by
 * close). op(X) is the source itself when the orientations agree, else its
 * transpose by a counting sort (O(nnz + dimension)) with the permutation
 * back into the source (hispi_spgemm_operand.perm). */
typedef struct {
    hispi_sparse tmp;   /* the private conversion, or zeroed */
    int64_t rows, cols; /* the source's (X's, or X^T's when cols_major) */
    int64_t nnz;
    const int64_t *ptr; /* rows + 1 */
    const int32_t *idx; /* nnz */
    const void *val;
    bool cols_major;      /* the source is X's CSC arrays */
    int64_t *tptr, *perm; /* the transpose (owned), or NULL */
    int32_t *tidx;
    hispi_spgemm_operand v; /* op(X) in CSR */
} hispi_spgemm_src;

/* X's source and op(X)'s view (transposing when needed); X's host copy is
 * made where it lives on a device only. On failure nothing is kept. */
HISPI_LOCAL hisp_status hispi_spgemm_open(hisp_matrix X, hisp_op op, hispi_spgemm_src *s);
/* As hispi_spgemm_open, but a matrix whose CSR arrays are on the device
 * only (a wrapped matrix of hisp's layout: int64 pointers, int32 columns,
 * zero-based; e.g. a product kept there) under op N is read in place there:
 * s->v carries its buffers (v.dev), no host arrays. For the device path. */
HISPI_LOCAL hisp_status hispi_spgemm_open_dev(hisp_matrix X, hisp_op op, hispi_spgemm_src *s);
/* op(X) is such a matrix, read in place by the device path. */
HISPI_LOCAL bool hispi_spgemm_dev_resident(hisp_matrix X, hisp_op op);
/* X's CSR arrays are in hisp's layout on the device (a wrapped matrix,
 * whether or not a host copy is held too); v: X (op N) over them. */
HISPI_LOCAL bool hispi_spgemm_dev_csr(hisp_matrix X);
HISPI_LOCAL void hispi_spgemm_dev_view(hisp_matrix X, hispi_spgemm_operand *v);
/* The source only (s->v not set, nothing transposed). */
HISPI_LOCAL hisp_status hispi_spgemm_source(hisp_matrix X, hispi_spgemm_src *s);
/* op(X)'s view of an open source, transposing when needed (a transpose
 * made for an earlier op is freed first). */
HISPI_LOCAL hisp_status hispi_spgemm_orient(hisp_context ctx, hispi_spgemm_src *s, hisp_type t,
                                            hisp_op op);
/* Frees what open made (the conversion, the transpose). */
HISPI_LOCAL void hispi_spgemm_close(hispi_spgemm_src *s);

/* ---- the host phases (spgemm_ref.c) ---------------------------------------
 *
 * Gustavson's row-by-row product over blocks of rows on the context's
 * threads (hispi_threads over the multiply-adds; hispi_parallel): each row
 * is computed by one thread in a fixed order, so the bits do not depend on
 * the thread count. Each thread's scratch is O(n) (n = op(B)'s columns): a
 * marker of int32 and a dense accumulator of entries, allocated by the
 * calling thread before the threads start. Sums are in the entry type
 * (float for f32 and c32, as the SpMV's reference). */

/* C's rows counted into out->rowptr (their prefix sum: int64; a total
 * beyond INT64_MAX is HISP_ERR_OUT_OF_HOST_MEMORY, never wrapped), C's
 * arrays allocated (hispi_spgemm_alloc_out), then its columns (sorted
 * within each row, no duplicates) and values into out->colind and
 * out->val. Entries whose products cancel stay, with the value 0. */
HISPI_LOCAL hisp_status hispi_spgemm_host(hisp_context ctx, const hispi_spgemm_args *g,
                                          hispi_spgemm_out *out);
/* C's values only, its structure given (out->rowptr and colind, as the fill
 * made them): the same bits as the fill. */
HISPI_LOCAL hisp_status hispi_spgemm_numeric(hisp_context ctx, const hispi_spgemm_args *g,
                                             hispi_spgemm_out *out);

/* ---- the device path (spgemm_dev.c) ---------------------------------------- */

/* The context's backend has the run-time kernels the device path needs
 * and its device is not a CPU (there the host phases are faster; the test
 * hook hispi_spgemm_cpu_kernels runs the kernels on a CPU device too). */
HISPI_LOCAL bool hispi_spgemm_dev_usable(hisp_context ctx);
/* As hispi_spgemm_product, through kernels/spgemm.cl on the context's
 * device: C (a host CSR, zeroed on failure) with the host phases' structure
 * and bits. A device buffer that cannot be had is
 * HISP_ERR_OUT_OF_DEVICE_MEMORY; nothing is kept on the device. */
HISPI_LOCAL hisp_status hispi_spgemm_dev_product(hisp_context ctx, const hispi_spgemm_args *g,
                                                 hispi_sparse *C);

/* As hispi_spgemm_dev_product, into a new matrix *C of ctx: for f32 and
 * f64 a wrapped CSR whose arrays stay on the device (its host copy read when
 * a host reader needs it, hispi_matrix_need_host) where the device holds C
 * whole (its arrays from the backend's pool: hispi_matrix_wrap_pooled),
 * else a host CSR. */
HISPI_LOCAL hisp_status hispi_spgemm_dev_matrix(hisp_context ctx, const hispi_spgemm_args *g,
                                                hisp_matrix *C);
/* As hispi_spgemm_dev_matrix (a real C) by the backend's vendor_spgemm:
 * the spgemm=cusparse option. */
HISPI_LOCAL hisp_status hispi_spgemm_dev_vendor(hisp_context ctx, const hispi_spgemm_args *g,
                                                hisp_matrix *C);

/* A plan's device state (spgemm_dev.c): what does not change between its
 * executions, kept in device buffers of the context's backend: op(A)'s and
 * op(B)'s row pointers and columns (after any transpose), C's row pointers
 * and columns, buffers for the operands' values and C's values, the row
 * lists of the numeric kernels and the kernels themselves. */
typedef struct hispi_spgemm_dplan hispi_spgemm_dplan;

/* *d: the device state of g's patterns (g's values are not read) and C's
 * structure c->rowptr, c->colind (m = g->a.nrows rows). A device buffer that
 * cannot be had is HISP_ERR_OUT_OF_DEVICE_MEMORY; on failure *d is NULL and
 * nothing is kept. */
HISPI_LOCAL hisp_status hispi_spgemm_dev_plan(hisp_context ctx, const hispi_spgemm_args *g,
                                              const hispi_spgemm_out *c, hispi_spgemm_dplan **d);
/* C's values from g's values (the patterns d was made of, checked by the
 * caller): op(A)'s and op(B)'s values uploaded (a transposed operand's
 * gathered through its permutation and conjugated for op H on the host, as
 * the product does), one numeric pass on the device. The same bits as the
 * host's numeric phase and the fresh product. C is the plan's output: when
 * *kept is C's device buffer of values (C already on the device), the
 * values are copied there on the device; else a real C gets device buffers
 * of its own with d's structure and the values (its host arrays dropped)
 * and *kept their values' buffer; else (complex) the values are downloaded
 * into C's host arrays. C changes only after every kernel has been queued
 * without error. */
HISPI_LOCAL hisp_status hispi_spgemm_dev_numeric(hisp_context ctx, hispi_spgemm_dplan *d,
                                                 const hispi_spgemm_args *g, hisp_matrix C,
                                                 const void **kept);
/* A product again into its C (a kept structure: AMG's update): C = A*B for
 * g's operands (read in place on the device) over C's row pointers, its
 * columns and values written again, the fill phase alone (no count, no
 * scan, no allocation of C). g's patterns must be those C was made from
 * (the caller's guarantee: a pattern with more entries in a row would
 * overrun its table). C's SpMV form is dropped (hisp_matrix_device_modified). */
HISPI_LOCAL hisp_status hispi_spgemm_dev_refill(hisp_context ctx, const hispi_spgemm_args *g,
                                                hisp_matrix C);
/* Frees *d's buffers and kernels with ctx's backend (the one that made
 * them), then *d; NULLs *d. NULL: nothing. */
HISPI_LOCAL void hispi_spgemm_dev_plan_free(hisp_context ctx, hispi_spgemm_dplan **d);

/* ---- the device kernels' shared parts (spgemm_dev.c) ------------------------ */

/* Work-items of the SpGEMM program's work-groups. */
#define HISPI_SPGEMM_GS 64
/* The build options of the programs a product of type t on a device with
 * caps builds first (its usual groups and, where the device has them, its
 * large rows' groups): the count, 1 or 2 (tools/kernels_prebuild.c). */
HISPI_LOCAL int hispi_spgemm_kopts(const hispi_kcaps *caps, hisp_type t, char opts[2][240]);
/* Kernel `name` of the SpGEMM program (kernels/spgemm.cl) for type t. */
HISPI_LOCAL hisp_status hispi_spgemm_kernel(hisp_context ctx, hisp_type t, const char *name,
                                            void **k);
/* A device buffer of a product into *buf (scratch where tmp), counted in
 * the call's stats and subject to the test hook's failures; freed by
 * hispi_spgemm_dev_free with the same bytes and tmp. */
HISPI_LOCAL hisp_status hispi_spgemm_dev_buffer(hisp_context ctx, size_t bytes, bool tmp,
                                                void **buf);
HISPI_LOCAL void hispi_spgemm_dev_free(hisp_context ctx, size_t bytes, bool tmp, void *buf);

/* *R = X^T (transpose_dev.c) for a real X that lives on the device in
 * hisp's layout (hispi_spgemm_dev_resident), as a matrix owning its device
 * buffers, each row sorted; X's values only moved, so R has X's bits.
 * scratch: as hispi_spgemm_dev_matrix's. */
HISPI_LOCAL hisp_status hispi_spgemm_dev_transpose(hisp_matrix X, bool scratch, hisp_matrix *R);

/* ---- the product (spgemm.c) ------------------------------------------------ */

/* Zeroes the context's SpGEMM stats (hisp_context_spgemm_stats) at a
 * call's start. */
HISPI_LOCAL void hispi_spgemm_stats_reset(hisp_context ctx);
/* Row counts p[1..m] into row pointers, p[0] = 0 (int64; a total beyond
 * INT64_MAX is HISP_ERR_OUT_OF_HOST_MEMORY, never wrapped). */
HISPI_LOCAL hisp_status hispi_spgemm_prefix(hisp_context ctx, int64_t *p, int64_t m);
/* C's columns and values (o->rowptr[m] entries) allocated into o; out of
 * memory names the bytes C needs. */
HISPI_LOCAL hisp_status hispi_spgemm_alloc_out(hisp_context ctx, const hispi_spgemm_args *g,
                                               hispi_spgemm_out *o);
/* C (m x n, g's type) takes o's arrays (nnz = o->rowptr[m]). */
HISPI_LOCAL void hispi_spgemm_take(const hispi_spgemm_args *g, hispi_spgemm_out *o,
                                   hispi_sparse *C);

/* C (a host CSR of g's type, m x n, zeroed on failure) = op(A)*op(B):
 * on the context's device where its backend has run-time kernels
 * (spgemm_dev.c), else the host phases: symbolic, C's arrays allocated
 * once, fill. Both give the same structure and bits. */
HISPI_LOCAL hisp_status hispi_spgemm_product(hisp_context ctx, const hispi_spgemm_args *g,
                                             hispi_sparse *C);
/* A copy of the pattern of X (in hisp's layout on the device:
 * hispi_spgemm_dev_resident) in two new device buffers of X's backend, its
 * row pointers *ptr and columns *col (buf_free them); and whether X's
 * pattern now is such a copy of rows rows and nnz entries (*same; other
 * sizes differ without a look), compared on the device with one read
 * back. */
HISPI_LOCAL hisp_status hispi_spgemm_dev_keep_pattern(hisp_matrix X, void **ptr, void **col);
HISPI_LOCAL hisp_status hispi_spgemm_dev_same_pattern(hisp_matrix X, const void *ptr,
                                                      const void *col, int64_t rows, int64_t nnz,
                                                      bool *same);
/* C = A*B again into C where hispi_spgemm_refill_ok (the device's products
 * run on ctx's backend; A, B and C real, of one type and context, in hisp's
 * layout on the device, their sizes a product's): hispi_spgemm_dev_refill,
 * under its condition on the patterns. */
HISPI_LOCAL bool hispi_spgemm_refill_ok(hisp_matrix A, hisp_matrix B, hisp_matrix C);
HISPI_LOCAL hisp_status hispi_spgemm_refill(hisp_matrix A, hisp_matrix B, hisp_matrix C);
/* The checks shared by the calls: types the product takes (f32, f64, c32,
 * c64), equal types, op(A)'s columns = op(B)'s rows; `what` names the call
 * in the messages. */
HISPI_LOCAL hisp_status hispi_spgemm_check(hisp_context ctx, const char *what, hisp_op op_a,
                                           hisp_matrix A, hisp_op op_b, hisp_matrix B);

#endif
