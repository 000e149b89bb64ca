/* MSREP internals (issue 7): partial formats, merging, NUMA placement. Not
 * installed. */
#ifndef HISPI_MSREP_H
#define HISPI_MSREP_H

#include "hispi.h"

/* The arrays a partition reads, in "view" space: the view is A for the row
 * kinds (rowblock, pcsr, pcoo) and A^T for the column kinds (colblock, pcsc),
 * so that every part is a set of consecutive view rows and can be sent to a
 * device as a local CSR (local pointers + slices of idx and val). */
typedef struct {
    hisp_type type;
    bool columns;         /* the view is A^T (column kinds) */
    int64_t nrows, ncols; /* of the view */
    int64_t nnz;
    const int64_t *ptr;    /* nrows + 1 pointers (NULL for pcoo) */
    const int32_t *rowidx; /* pcoo: the view row of each nonzero (sorted) */
    const int32_t *idx;    /* the view column of each nonzero */
    const void *val;
    hispi_sparse tmp;  /* a temporary conversion owned by the source (format 0 arrays NULL) */
    int32_t *tmp_rows; /* pcoo on a CSR matrix: row indices expanded from the pointers */
    bool has_tmp;
} hispi_msrep_src;

/* The arrays of A for `kind`, without a copy when A is held in the format the
 * kind reads (CSR for rowblock/pcsr, CSC for colblock/pcsc, sorted COO for
 * pcoo; pcoo on CSR expands only the row indices); otherwise a temporary
 * copy. */
HISPI_LOCAL hisp_status hispi_msrep_source(hisp_matrix A, hisp_partition_kind kind,
                                           hispi_msrep_src *src);
HISPI_LOCAL void hispi_msrep_source_free(hispi_msrep_src *src);

/* Cut points of nparts parts (the paper's Algorithms 2, 4, 6; block splits
 * for the baselines). row_cost > 0: the nnz-balanced kinds balance
 * nnz + row_cost * rows instead of nnz alone; align: their cuts inside
 * short rows move to the row's nearer end (HISP_MPLAN_ALIGN). */
HISPI_LOCAL hisp_status hispi_msrep_split(hisp_context ctx, const hispi_msrep_src *src,
                                          hisp_partition_kind kind, int nparts, double row_cost,
                                          bool align, hisp_part *parts);
/* Local pointers of a part: end - start + 1 entries, lptr[0] = 0, lptr[i] =
 * nonzeros of the part in its first i rows (pcoo: counted from the row
 * indices; others: global pointers clamped to the part's range). */
HISPI_LOCAL hisp_status hispi_msrep_local_ptr(hisp_context ctx, const hispi_msrep_src *src,
                                              hisp_partition_kind kind, const hisp_part *p,
                                              int64_t **lptr);

/* Merges (y has the output length; rows [r0, r1) are merged, so that the
 * merge can be split over threads). Row merge: part k's buffer ybuf[k] holds
 * rows [start, end) of alpha*op(A)*x; rows no part covers become beta*y,
 * a row a part owns first becomes beta*y + its value (beta == 0: y is not
 * read), a shared first row adds to it. Sum merge: y = beta*y + sum of the
 * full-length partial vectors ybuf[k] (NULL ones skipped). */
HISPI_LOCAL void hispi_msrep_merge_rows(hisp_type t, int nparts, const hisp_part *parts,
                                        void *const *ybuf, double beta, void *y, int64_t r0,
                                        int64_t r1);
HISPI_LOCAL void hispi_msrep_merge_sum(hisp_type t, int nparts, void *const *ybuf, double beta,
                                       void *y, int64_t r0, int64_t r1);

/* The host reference of the whole scheme: partition, multiply every part as
 * its local CSR with the plain C reference, merge. y = alpha*op(A)*x +
 * beta*y. */
HISPI_LOCAL hisp_status hispi_msrep_ref(hisp_matrix A, hisp_partition_kind kind, int nparts,
                                        hisp_op op, double alpha, const void *x, double beta,
                                        void *y);

/* ---- NUMA (core/msrep/msrep_numa.c; hwloc when built with it) ----------- */

/* NUMA nodes of the machine (1 without hwloc). */
HISPI_LOCAL int hispi_numa_nodes(void);
/* The NUMA node a device is attached to (PCI locality), -1 when unknown or
 * when the device spans the machine (a CPU device). */
HISPI_LOCAL int hispi_numa_device_node(hisp_context ctx, hisp_backend_kind kind, int device);
/* Bind the calling thread to the cores of a node (no-op for -1 / one node). */
HISPI_LOCAL void hispi_numa_bind_thread(int node);
/* Bind the pages of [p, p+bytes) to a node (no-op for -1 / one node). */
HISPI_LOCAL void hispi_numa_bind_memory(void *p, size_t bytes, int node);

/* Test hooks (never set by the library): stage_all: every partial vector is
 * staged, as for devices other than the vectors' one (walks that path on a
 * single device); spin_us: the spin budget of the workers' waits, also on
 * CPU devices (0: the library's choice); fail_part: the worker of this id + 1
 * fails its product step of a distributed-vector job, as a failing device
 * would (0: none). */
typedef struct {
    int stage_all;
    long spin_us;
    int fail_part;
} hispi_msrep_hooks;
HISPI_LOCAL extern hispi_msrep_hooks hispi_msrep_hook;

#endif
