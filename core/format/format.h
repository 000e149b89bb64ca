/* The format seam: one table of operations per storage format.
 *
 * A format is a way to store a matrix's entries (hisp_format): COO, CSR and
 * CSC keep them in A->host's arrays (the sparse family, core/csr/);
 * HiSparse (core/hisparse/) and SELL-C-sigma (core/sell/) keep their own
 * host form behind the matrix handle. Each fills one hispi_format_ops and
 * is registered by one line in core/format/format.c. The matrix layer calls
 * a format only through A->fmt (set by every conversion); SpMV, the fused
 * SpMV + dot, conversions, byte counts and the format choice dispatch
 * through the table, never on the enum.
 *
 * Compound entry types (complex, quaternion, 3x3 blocks) are not formats:
 * their device *layouts* (CSR/ELL/SELL x AoS/SoA, core/compound/) are the
 * sparse family's SpMV for those types. */
#ifndef HISPI_FORMAT_H
#define HISPI_FORMAT_H

#include "hispi.h"

typedef struct hispi_format_ops {
    hisp_format format;
    const char *name; /* hisp_format_name: "coo", "csr", "hisparse", "sell", ... */
    /* Entry types the format stores (NULL: every type). */
    bool (*holds)(hisp_type t);
    /* A becomes this format, built from s (A's entries as a host COO, CSR or
     * CSC; read only; it may be A->host itself): the format releases A's
     * old storage with hispi_matrix_release_storage only once the new form
     * exists, so on failure A is unchanged. */
    hisp_status (*build)(hisp_matrix A, const hispi_sparse *s);
    /* A copy of A's entries (A in this format) as a host COO, CSR or CSC
     * (f) in *out, sorted by row then column (COO, CSR) or column (CSC). */
    hisp_status (*to_sparse)(hisp_matrix A, hisp_format f, hispi_sparse *out);
    /* Optional: *B, a new handle in this format with A's entries (A in this
     * format), sharing what it can. NULL: to_sparse, then build. */
    hisp_status (*duplicate)(hisp_matrix A, hisp_matrix *B);
    /* Frees A's host form of this format (not A->host's arrays: the matrix
     * layer frees those). */
    void (*release)(hisp_matrix A);
    /* Frees A's device form on A's context's backend; the host form stays. */
    void (*drop_device)(hisp_matrix A);
    /* Optional: the backend closes (a switch or the context's end), after
     * drop_device: what the format keeps per backend beyond A goes too. */
    void (*backend_closes)(hisp_matrix A);
    /* Optional: A = A^T and A = a*A in place, A in this format. NULL: A's
     * entries go through a CSR copy and the format is built again. */
    hisp_status (*transpose)(hisp_matrix A);
    hisp_status (*scale)(hisp_matrix A, double a);
    /* Bytes A's entries take in this format with entry type t, A in any
     * format (what a conversion would hold; the device copy's size). */
    hisp_status (*bytes)(hisp_matrix A, hisp_type t, uint64_t *bytes);
    /* y = alpha*op(A)*x + beta*y with A in this format: the arguments are
     * checked (types, sizes, contexts; op is N or T for real entries, H too
     * for complex); beta == 0: y is not read. Uploads what it needs. */
    hisp_status (*spmv)(hisp_context ctx, hisp_op op, double alpha, hisp_matrix A, hisp_vector x,
                        double beta, hisp_vector y);
    /* Optional: y = A*x and r = x.y in one pass (the solvers' q = A p,
     * p.q), arguments checked as hisp_spmv_dot's. NULL: spmv, then the dot. */
    hisp_status (*spmv_dot)(hisp_context ctx, hisp_matrix A, hisp_vector x, hisp_vector y,
                            hisp_result r);
    /* Optional: Y = alpha*op(A)*X + beta*Y over k >= 2 columns (hisp_spmm;
     * the arguments checked there, op N or T for real entries). NULL: SpMM
     * is not offered for this format. */
    hisp_status (*spmm)(hisp_context ctx, hisp_op op, double alpha, hisp_matrix A, hisp_vector X,
                        double beta, hisp_vector Y);
    /* Optional: waits for SpMV work whose failure is reported late (the
     * HiSparse scheduler's counts); hisp_spmv_timed calls it after its loop. */
    hisp_status (*settle)(hisp_context ctx);
    /* Optional: whether the format choice times a copy of A in this format
     * for entry type t and op (NULL: never a candidate). */
    bool (*candidate)(hisp_type t, hisp_op op);
} hispi_format_ops;

/* The registered format f, or NULL for a value no format has. */
HISPI_LOCAL const hispi_format_ops *hispi_format_get(hisp_format f);
/* A's format (the table its last conversion set, or its host form's). */
HISPI_LOCAL const hispi_format_ops *hispi_format_of(hisp_matrix A);
/* The formats in enum order (for loops: the format choice, stats). */
HISPI_LOCAL int hispi_format_count(void);

#endif
