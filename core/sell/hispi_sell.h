/* SELL-C-sigma (HISP_FORMAT_SELL): the host form, its builders, the plain-C
 * SpMV and the device path (core/sell/).
 *
 * Rows are sorted by length, longest first, within windows of sigma
 * consecutive rows (a stable sort: equal lengths keep their order); slices of
 * C consecutive sorted rows are padded to the slice's longest row and stored
 * column-major within the slice: entry k of the slice's row i is at
 * sptr[s] + k*C + i, so the C work-items of a warp read consecutive
 * addresses. The last slice is padded to C rows too. Padding entries have
 * value 0 and a valid column (the row's last column, 0 for an empty row or
 * a row past nrows), so kernels need no branch; the price is that a
 * non-finite x[j] turns 0*x[j] into NaN in a padded row that reads column j
 * (a row whose last column is j, or an empty row for j = 0), where CSR would
 * give +-Inf or 0. Within a row the entries keep CSR's order (columns
 * ascending), so op N sums in CSR's order.
 *
 * The sort only reorders rows inside a window: sigma = C pads no more than
 * the slices need and keeps a slice's rows, so x's reads and y's writes,
 * close together; a larger sigma groups rows of equal length over more
 * slices and so pads less on irregular (power-law) matrices, where padding
 * is what costs. sigma = 0 (HISPI_SELL_SIGMA, the format's) chooses per
 * matrix: the smallest window of C * 8^k rows (or the whole matrix) whose
 * padding is within 10 % of a sort over the whole matrix, so regular
 * matrices keep sigma = C and power-law ones get the window they need
 * (measured on PoCL: a fixed 8C pads power-law graphs several times over;
 * a whole-matrix sort slows matrices whose row order is local).
 *
 * Memory: padded entries x (entry size + 4) + (slices + 1) x 8 +
 * nrows x 4 (the permutation): hispi_sell_bytes, what the device copy
 * takes. The host form keeps each row's length as well (nrows x 4), so that
 * to_sparse gives back exactly the entries (an explicit zero is not
 * padding). op = T on a device multiplies with A^T's own SELL, built on the
 * host at the first op = T (from A's CSR and CSC, both transient), uploaded
 * and kept on the device with A's until the device copy is dropped: the
 * device then holds about twice A's SELL bytes. The reference backend runs
 * op = T as a scatter over A's SELL and builds no copy. */
#ifndef HISPI_SELL_H
#define HISPI_SELL_H

#include "format/format.h"

/* Default slice height: a warp of NVIDIA GPUs. */
#define HISPI_SELL_C 32
/* Default sort window: 0, chosen per matrix (above). */
#define HISPI_SELL_SIGMA 0

typedef struct hispi_sell {
    hisp_type type;            /* f32 or f64 */
    int64_t nrows, ncols, nnz; /* nrows, ncols <= INT32_MAX */
    int32_t C;                 /* slice height, a power of two */
    int32_t sigma;             /* sort window (rows), as chosen */
    int64_t nslices;           /* ceil(nrows / C) */
    int64_t padded;            /* stored entries, padding included: sptr[nslices] */
    int64_t *sptr;             /* nslices + 1 slice starts (entries) */
    int32_t *perm;             /* nrows: sorted position -> original row */
    int32_t *len;              /* nrows: length of sorted row r (host only) */
    int32_t *col;              /* padded column indices */
    void *val;                 /* padded entries of type */
} hispi_sell;

extern const hispi_format_ops hispi_sell_format;

/* SELL-C-sigma of the CSR arrays (nrows + 1 pointers, columns sorted within
 * a row, no duplicates) into *out (zeroed first; freed on failure). C >= 1
 * a power of two (at most 1024), sigma >= 1 or 0 (chosen). Sizes the format cannot index
 * (rows or columns beyond INT32_MAX, padded entries beyond INT64_MAX or
 * the host's memory) are refused with a message, never wrapped. */
HISPI_LOCAL hisp_status hispi_sell_build_csr(hisp_context ctx, hisp_type type, int64_t nrows,
                                             int64_t ncols, const int64_t *ptr, const int32_t *ind,
                                             const void *val, int C, int sigma, hispi_sell *out);
/* The same from a host COO (sorted or not), CSR or CSC (converted to CSR
 * first where it is not CSR). */
HISPI_LOCAL hisp_status hispi_sell_build(hisp_context ctx, const hispi_sparse *s, int C, int sigma,
                                         hispi_sell *out);
/* The SELL of A^T from A's SELL (through A's CSR and CSC). */
HISPI_LOCAL hisp_status hispi_sell_build_transposed(hisp_context ctx, const hispi_sell *a,
                                                    hispi_sell *out);
HISPI_LOCAL void hispi_sell_free(hispi_sell *h);
/* The entries of h as a host CSR (sorted, h's explicit zeros kept). */
HISPI_LOCAL hisp_status hispi_sell_to_csr(hisp_context ctx, const hispi_sell *h, hispi_sparse *out);
/* The bytes of a SELL with these row lengths (nrows of them, in row order),
 * entry size es, C and sigma: as hispi_sell_build would make it (the device
 * copy's size, the lengths array not counted). */
HISPI_LOCAL hisp_status hispi_sell_bytes(hisp_context ctx, int64_t nrows, const int64_t *rowlen,
                                         size_t es, int C, int sigma, uint64_t *bytes);

/* y = alpha*op(A)*x + beta*y over the host form, op N or T (H is T for real
 * entries); beta == 0: y is not read. Sums in the entry type as
 * hispi_ref_csr_spmv: op N in CSR's order, op T scattered in sorted-row
 * order. x and y are arrays of h->type. */
HISPI_LOCAL hisp_status hispi_sell_ref_spmv(hisp_context ctx, const hispi_sell *h, hisp_op op,
                                            double alpha, const void *x, double beta, void *y);

/* The device path (sell_dev.c): y = alpha*op(A)*x + beta*y for A in SELL,
 * on A's context's backend (its run-time kernels), the device copy made at
 * first use; where the backend has no run-time kernels, the reference over
 * the vectors' host copies. Arguments checked by the caller. */
HISPI_LOCAL hisp_status hispi_sell_spmv(hisp_context ctx, hisp_op op, double alpha, hisp_matrix A,
                                        hisp_vector x, double beta, hisp_vector y);
/* Frees A's device copy (A->fdev) on A's context's backend. */
HISPI_LOCAL void hispi_sell_drop_device(hisp_matrix A);
/* Test hook, read when a device copy is made: the kernel of
 * kernels/sell_spmv.cl (0: the device's, sell_spmv_slices on CPUs,
 * sell_spmv_lanes on GPUs for matrices of few rows, else sell_spmv with
 * sell_spmv_wide; 1: sell_spmv with sell_spmv_wide; 2: sell_spmv_slices;
 * 3: sell_spmv_lanes). */
HISPI_LOCAL extern int hispi_sell_kernel_mode;

#endif
