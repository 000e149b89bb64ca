/* The halo exchange of hisp-mpi solve (cli/mpi/halo.c): a rank's rows
 * multiplied with x spread over the ranks, moving only the entries of x that
 * other ranks' rows reference.
 *
 * As PETSc's MatMPIAIJ, a rank's rows are split into a "diagonal" block Ad
 * (the columns it owns, numbered locally) and an "off-diagonal" block Ao
 * whose columns are the ghosts: the exact sorted set of off-rank columns the
 * rows reference, numbered 0..ghosts-1 (compacted). y = Ad x + Ao g, where g
 * holds the ghosts' values. The lists of what each peer needs are exchanged
 * once (halo_build); per product the owned entries peers need are read from
 * the device (only they, in a few contiguous segments), sent, and the
 * ghosts received and written up while Ad x runs. */
#ifndef HISP_CLI_MPI_HALO_H
#define HISP_CLI_MPI_HALO_H

#include "hisp.h"

#include <mpi.h>
#include <stdint.h>

typedef struct {
    hisp_context ctx;
    hisp_type type;
    MPI_Datatype dt;
    size_t es;
    int size;
    int64_t lrows;        /* rows (and owned columns) of this rank */
    int64_t ghosts;       /* off-rank columns its rows reference */
    int64_t sends;        /* entries it sends per product (to all peers) */
    int peers_in;         /* ranks it receives ghosts from */
    int peers_out;        /* ranks it sends to */
    hisp_matrix Ad, Ao;   /* owned columns (local numbers); ghost columns */
    hisp_vector g;        /* the ghosts' values on the device */
    void *gbuf;           /* host: ghosts as received, in column order */
    int *rcount, *rdispl; /* ghosts per owner rank, where they start in gbuf */
    int *scount, *sdispl; /* entries per peer, where they start in sbuf */
    int32_t *spos;        /* of each entry sent: its place in mirror */
    void *sbuf;           /* host: the entries to send, packed per peer */
    int64_t *seg;         /* nseg (offset, count) pairs of x read per product */
    int nseg;
    int64_t mirror_n; /* entries read per product: the segments' sum */
    void *mirror;     /* host: the segments, one after the other */
    MPI_Request *req;
    /* halo_apply_dot: Ao^T (ghosts x lrows), Ao^T x, the two local dots,
     * and (1, 1) to sum them */
    hisp_matrix Bt;
    hisp_vector w, parts, ones;
} halo;

/* Split this rank's rows (lrows rows, CSR with global columns; own[q] the
 * first row of rank q, own[size] = n) into Ad and Ao on ctx and agree with
 * the peers on what moves. Collective over MPI_COMM_WORLD; a failure on any
 * rank fails every rank (the status of the first failing one). */
hisp_status halo_build(halo *h, hisp_context ctx, hisp_type type, const int64_t *own, int rank,
                       int size, const int64_t *lptr, const int32_t *lidx, const void *lval);
/* y = (this rank's rows) * x, x and y of lrows entries. Collective. */
hisp_status halo_apply(halo *h, hisp_vector x, hisp_vector y);
/* halo_apply, and r = dot(x, y) over this rank's rows: the owned block's
 * product fused with its dot (hisp_spmv_dot), plus g^T (Ao^T x) for the
 * ghosts' part (a pass over Ao's entries, not over the rows), the two summed
 * on the device. Collective. */
hisp_status halo_apply_dot(halo *h, hisp_vector x, hisp_vector y, hisp_result r);
void halo_free(halo *h);

#endif
