/* Interface between the CUDA backend's HiSparse host side
 * (backends/cuda/cuda_hisparse.c) and its kernels (kernels_cuda/hisparse.cu).
 * Only plain C types cross. */
#ifndef HISP_CUDA_HISPARSE_H
#define HISP_CUDA_HISPARSE_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HISP_CUDA_HS_QUEUES 16 /* = HISP_SCHED_MAX_QUEUES */

/* One SpMV: the tree on the device, the queues, the policy (copied from
 * core/hisparse/hisparse_sched.h), the operands. Passed by value to every kernel. */
typedef struct {
    int f64;                  /* entry type: 0 float, 1 double */
    int nq, log2d, depth, tr; /* queues, node size, tree depth, transposed */
    const unsigned char *pool;
    void *entries;   /* hispi_sched_entry slots of every queue */
    uint32_t *tails; /* fill counter per queue */
    void *ctl;       /* hisp_cuda_hs_ctl (device controller state and counts) */
    uint64_t base[HISP_CUDA_HS_QUEUES];
    int fn[HISP_CUDA_HS_QUEUES], tpn[HISP_CUDA_HS_QUEUES], group[HISP_CUDA_HS_QUEUES];
    uint32_t threshold[HISP_CUDA_HS_QUEUES];
    double alpha;
    const void *x;
    void *y;
    uint64_t root;
    int root_queue;
    int vred; /* f32 replay on sm_90: a lane's adds into neighbouring outputs
               * as one vector add, and four entries per lane wherever the
               * leaves allow (hisp_cuda_hs_rplan_build) */
} hisp_cuda_hs;

/* The device controller's state: entries taken per queue, and the counts. */
typedef struct {
    unsigned long long head[HISP_CUDA_HS_QUEUES];
    unsigned long long nodes[HISP_CUDA_HS_QUEUES];
    unsigned long long launches[HISP_CUDA_HS_QUEUES];
    unsigned long long rounds;
} hisp_cuda_hs_ctl;

/* y = beta*y over n entries (beta == 0: y = 0 without reading it); the
 * queues emptied, the root alone in its queue, the controller state zeroed. */
cudaError_t hisp_cuda_hs_begin(const hisp_cuda_hs *P, int64_t n, double beta, cudaStream_t stream);
/* Shared-memory carveout hints for the node kernels of the host-launched
 * module and, when cdp, of the device controller's module (not touched
 * otherwise: loading it keeps compute-sanitizer racecheck out). */
cudaError_t hisp_cuda_hs_prepare(int cdp);
/* The device controller: a one-thread grid per round that reads the fill
 * levels, launches the node kernels of the picked queues into
 * cudaStreamFireAndForget and itself into cudaStreamTailLaunch (the next
 * round starts when all of this round's work has finished); the stream's
 * work is complete when the last round found every queue empty. */
cudaError_t hisp_cuda_hs_controller(const hisp_cuda_hs *P, cudaStream_t stream);
/* One node kernel over entries [first, first + count) of queue q (the
 * host-polled controller). */
cudaError_t hisp_cuda_hs_node(const hisp_cuda_hs *P, int q, uint64_t first, uint64_t count,
                              cudaStream_t stream);
/* Sort n queue entries (hispi_sched_entry) in place by output then input
 * offset (row, col; col, row when tr), so that neighbouring blocks of a
 * leaf kernel update neighbouring parts of y. Scratch is allocated and
 * freed here (about 48 bytes per entry); n < 2^31. */
cudaError_t hisp_cuda_hs_sort_entries(void *entries, uint64_t n, int tr, cudaStream_t stream);

/* The replay's plan of one COO leaf queue, built once its entries are in
 * their replay order (kernels_cuda/hisparse_plan.cu; its kernels
 * hs_leaf_replay* in kernels_cuda/hisparse_replay.cu): per leaf the
 * addresses of its coordinates and values less its first entry's index
 * (ulonglong2) and its row and column offsets (uint2); the entry offsets of
 * the leaves (nleaves + 1); the leaf of each warp's first entry. The
 * kernel takes `width` consecutive entries per lane; its plan counts each
 * leaf's entries rounded up to a multiple of width, so a lane's entries
 * share a leaf (the node's padding slots stand for the missing ones,
 * flagged in the low bits of the coordinates' address, and add nothing). */
typedef struct {
    void *addr, *at;
    void *perm; /* A^T x: uint16 per plan entry, each leaf's entries by column (or NULL) */
    uint32_t *off, *wl;
    uint32_t nleaves, total, warps, slices; /* slices: 32-entry slices per warp */
    unsigned width;                         /* entries per lane: 1, 2 or 4 */
    int vec;     /* f32 vector adds of a lane's neighbouring outputs (hs_leaf_replayw VEC) */
    double runs; /* entries whose output index is their predecessor's (in plan order) / all */
} hisp_cuda_hs_rplan;

/* The plan of queue q's n entries (n < 2^31, under 2^32 entries:
 * cudaErrorInvalidValue otherwise, and the replay keeps the flattened
 * kernel). Entries per lane by run length where every leaf allows it (4:
 * at least three entries, a COO4 node; 2: two): two where runs >= 0.4 for
 * f64, 0.25 for f32, four from 0.5 (or with vector adds). For A^T x of a
 * plan of width > 1 each leaf's entries are ordered by column where that
 * turns short runs into long ones. 8 slices of 32 entries per warp, 16 for
 * four entries per lane in leaf order. Waits for the stream. */
cudaError_t hisp_cuda_hs_rplan_build(const hisp_cuda_hs *P, int q, uint64_t n,
                                     hisp_cuda_hs_rplan *R, cudaStream_t stream);
void hisp_cuda_hs_rplan_free(hisp_cuda_hs_rplan *R);
/* The queue's leaves through the plan: y += alpha op(A) x over them
 * (equal keys combined by neighbours). */
cudaError_t hisp_cuda_hs_rplan_run(const hisp_cuda_hs *P, const hisp_cuda_hs_rplan *R,
                                   cudaStream_t stream);

/* The band replay's plan (hs_leaf_band in kernels_cuda/hisparse_replay.cu):
 * the leaves of every COO leaf queue together, sorted by output offset,
 * with their entry offsets and a record each (node, input offset; the
 * output offset is the band's), and units of at most
 * 256 * slices entries of one band of d output indices (first entry,
 * first leaf, band offset; ustart and uleaf end with a sentinel), the
 * leaf of each warp's first entry for blocks of 8 and of 4 warps, and the
 * kernel's variant (hisp_cuda_hs_bplan_tune). */
typedef struct {
    void *rec; /* per leaf: uint2 (node offset / 16, input offset) */
    uint32_t *off, *ustart, *uleaf, *uband;
    uint32_t *uwl; /* per unit, 12 leaves: each warp's first entry's, 8 then 4 warps */
    uint32_t nleaves, total, units;
    uint32_t warps; /* per block: 8 or 4 */
    int atomic;     /* accumulators by shared-memory atomics (1) or a set per warp (0) */
} hisp_cuda_hs_bplan;

/* The plan of queues[0..nq) (cap[i] nodes each; together under 2^31
 * leaves and 2^32 entries, cudaErrorInvalidValue otherwise). Waits for the
 * stream; scratch is freed here. The variant: 8 warps, atomics for f32. */
cudaError_t hisp_cuda_hs_bplan_build(const hisp_cuda_hs *P, const int *queues, int nq,
                                     const uint64_t *cap, hisp_cuda_hs_bplan *B,
                                     cudaStream_t stream);
void hisp_cuda_hs_bplan_free(hisp_cuda_hs_bplan *B);
/* Chooses the kernel's variant by timing each candidate (8 or 4 warps;
 * shared-memory atomics or a set of accumulators per warp) on P's x into
 * a scratch y of ny entries: interleaved passes, each candidate's fastest
 * run, the fastest wins. Waits for the stream. */
cudaError_t hisp_cuda_hs_bplan_tune(const hisp_cuda_hs *P, hisp_cuda_hs_bplan *B, uint64_t ny,
                                    cudaStream_t stream);
/* Those leaves through the plan: y += alpha op(A) x over them, with the
 * plan's variant. */
cudaError_t hisp_cuda_hs_bplan_run(const hisp_cuda_hs *P, const hisp_cuda_hs_bplan *B,
                                   cudaStream_t stream);

#ifndef __CUDACC__
#include "backend/backend.h"

/* The backend instance's device and stream (defined in cuda.c). */
HISPI_LOCAL void hisp_cuda_be_stream(void *be, int *device, cudaStream_t *stream);
/* The stream run-time kernels go to: the instance's, or kern_lane's lane. */
HISPI_LOCAL void hisp_cuda_be_kern_stream(void *be, int *device, cudaStream_t *stream);
/* The instance's slot for HiSparse state (the pending counts); freed by
 * hisp_cuda_hs_fini when the instance ends. */
HISPI_LOCAL void **hisp_cuda_be_hs(void *be);
HISPI_LOCAL void hisp_cuda_hs_fini(void *hs);

/* The ops of backends/cuda/cuda_hisparse.c. */
HISPI_LOCAL hisp_status hisp_cuda_hs_upload(hisp_context ctx, void *be, const hispi_hs_view *A,
                                            void **dev);
HISPI_LOCAL void hisp_cuda_hs_free(void *be, void *dev);
HISPI_LOCAL hisp_status hisp_cuda_hs_spmv(hisp_context ctx, void *be, void *dev,
                                          const hispi_sched_args *a, const void *x, void *y,
                                          hisp_sched_counts *counts);
HISPI_LOCAL hisp_status hisp_cuda_hs_counts(hisp_context ctx, void *be, hisp_sched_counts *counts);
#endif

#ifdef __cplusplus
}
#endif
#endif
