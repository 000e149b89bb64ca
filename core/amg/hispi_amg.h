/* Smoothed-aggregation algebraic multigrid inside the core (core/amg/): the
 * hierarchy's setup on the host, the reference that device setups will be
 * checked against. Strength of connection and aggregation by distance-2
 * maximal independent sets (amg_aggregate.c: parallel rounds with hashed
 * priorities, so that a device's rounds give the same aggregates), the
 * tentative and smoothed prolongators and the Galerkin products PᵀAP by
 * hisp_matrix_ptap (amg_setup.c), or the same steps as kernels where the
 * products run on the device (amg_dev.c); the V-cycle from the library's own SpMV
 * and vector calls, on the context's backend (amg_cycle.c). */
#ifndef HISPI_AMG_H
#define HISPI_AMG_H

#include "backend/backend.h"
#include "hispi.h"

#include <stdint.h>

/* ---- aggregation (amg_aggregate.c) ---------------------------------------- */

/* The strength graph of an n x n CSR matrix (rowptr, colind, values of
 * type t: f32 or f64): j != i is a strong neighbour of i when
 * |a_ij| >= theta * sqrt(|a_ii| * |a_jj|) and a_ij != 0, for a_ij or a_ji
 * (the graph is made undirected). Out: sptr (n + 1), sidx (sorted, no
 * diagonal), owned by the caller. */
HISPI_LOCAL hisp_status hispi_amg_strength(hisp_context ctx, int64_t n, const int64_t *rowptr,
                                           const int32_t *colind, const void *val, hisp_type t,
                                           double theta, int64_t **sptr, int32_t **sidx);

/* Aggregates of the undirected graph (sptr, sidx) of n nodes: roots a
 * distance-2 maximal independent set (Luby's rounds: a node joins when its
 * (state, priority, index) is the largest within distance 2, priorities
 * hashed from seed and the index), each root's neighbours join its
 * aggregate, every other node the aggregate of the neighbour (already in
 * one) of the largest priority. agg[i] = the aggregate of i (numbered by
 * their roots' order), -1 for a node without neighbours; roots (n entries,
 * or NULL) the root of each aggregate; *nagg aggregates. */
HISPI_LOCAL hisp_status hispi_amg_aggregate(hisp_context ctx, int64_t n, const int64_t *sptr,
                                            const int32_t *sidx, uint64_t seed, int32_t *agg,
                                            int32_t *roots, int64_t *nagg);

/* The node graph of an n x n CSR matrix whose rows and columns come in
 * nodes of b (rows b I .. b I + b - 1 node I's unknowns): N (n/b x n/b,
 * f64) with N_IJ the sum of a_ij^2 over node I's rows and J's columns, the
 * squared Frobenius norm of block (I, J): strength on N with theta^2 is
 * the blocks' strength by their norms (as pyamg's for BSR). Sorted
 * columns; the arrays owned by the caller. */
HISPI_LOCAL hisp_status hispi_amg_nodes(hisp_context ctx, int64_t n, int b, const int64_t *rowptr,
                                        const int32_t *colind, const void *val, hisp_type t,
                                        int64_t **nptr, int32_t **nidx, double **nval);
/* Node aggregates (agg[0 .. n/b - 1], *nagg of them) into rows' in place:
 * unknown c of node I in aggregate b agg[I] + c (-1 stays -1); *nagg times
 * b. The tentative prolongator then holds a node aggregate's b unknowns in
 * b columns: the near-null space of b constants, one per unknown
 * (elasticity's translations). */
HISPI_LOCAL void hispi_amg_expand(int64_t n, int b, int32_t *agg, int64_t *nagg);

/* ---- the hierarchy (amg_setup.c) ------------------------------------------ */

/* levels at most; rows of the coarsest at most (solved by a dense
 * factorisation and, on a device, its inverse); Lanczos steps of the
 * spectral estimate */
enum {
    HISPI_AMG_MAX_LEVELS = HISP_PRECOND_MAX_LEVELS,
    HISPI_AMG_DENSE_MAX = 4096,
    HISPI_AMG_LANCZOS = 10
};
/* the start vector's stream, apart from the aggregation's priorities */
#define HISPI_AMG_START_SEED 0x6c616e637a6f73ull

/* The smoothers (the options' amg_smoother, in its order). */
enum { HISPI_AMG_CHEBYSHEV, HISPI_AMG_JACOBI, HISPI_AMG_L1_JACOBI };
/* The levels' precision for an f64 system (the options' amg_precision, in
 * its order); auto takes single from hispi_amg_single_rows rows on
 * (100000; a test hook). */
enum { HISPI_AMG_AUTO, HISPI_AMG_SINGLE, HISPI_AMG_FULL };
extern long hispi_amg_single_rows;

typedef struct {
    double theta;       /* strength threshold (0: every coupling; default 0.01) */
    int smoother;       /* HISPI_AMG_* (default Chebyshev) */
    int sweeps;         /* smoothing steps before and after (Chebyshev: its degree; default 3) */
    int64_t max_coarse; /* stop at a level of at most this many rows */
    int max_levels;     /* at most this many levels (<= HISPI_AMG_MAX_LEVELS) */
    uint64_t seed;      /* the aggregation's priorities */
    int block;          /* rows of a node (rows b i .. b i + b - 1: node i's unknowns), 1.. */
    int precision;      /* HISPI_AMG_AUTO, _SINGLE, _FULL (the cycle's; the setup takes A's) */
    bool keep;          /* keep the products' structure for updates (hispi_amg.AP) */
} hispi_amg_opts;

/* Level l: its operator A[l] (A[0] the caller's, borrowed) and, but for the
 * coarsest, P[l] from level l + 1 to l: P = (I - omega D^-1 A) P0 with P0
 * the tentative prolongator and omega = 4/3 / lmax, lmax the Lanczos
 * estimate of D^-1 A's largest eigenvalue (amg_spectrum.c). P0 interpolates
 * the near-null space, the constant of level 0: row i of aggregate a holds
 * sqrt(w_i / W_a), w_i the level-0 rows that node i stands for (1 on level
 * 0), W_a the sum over a (the coarse node's w): columns of unit norm, and
 * P0 times the coarse near-null vector sqrt(W) is the fine one sqrt(w).
 * upper: an upper bound from the same steps, the Chebyshev smoother's
 * interval's end; rho: Gershgorin's bound of D^-1 A (max over rows of
 * sum_j |a_ij| / a_ii), which caps both.
 * A hierarchy set up on the device keeps R[l] = P[l]^T too (the
 * restriction as a product of its own), its operators and prolongators in
 * device buffers. */
typedef struct {
    int nlevels;
    bool on_device;
    hisp_context ctx;    /* A's */
    int backend, device; /* the context's when it was set up (hisp_backend_kind, index) */
    hisp_matrix A[HISPI_AMG_MAX_LEVELS], P[HISPI_AMG_MAX_LEVELS], R[HISPI_AMG_MAX_LEVELS];
    int64_t rows[HISPI_AMG_MAX_LEVELS], nnz[HISPI_AMG_MAX_LEVELS];
    /* but for the coarsest: A's diagonal (a vector of the context), its
     * l1 row sums sum_j |a_ij| (for the l1-Jacobi smoother, else NULL) and
     * rho */
    hisp_vector diag[HISPI_AMG_MAX_LEVELS], l1[HISPI_AMG_MAX_LEVELS];
    double rho[HISPI_AMG_MAX_LEVELS], lmax[HISPI_AMG_MAX_LEVELS], upper[HISPI_AMG_MAX_LEVELS];
    /* but for the coarsest: the aggregates, agg[l][i] row i's column of P0
     * (-1: none; int32, a device buffer where on_device, else host
     * memory), kept for a setup of new values to skip the strength graph
     * and the aggregation (hispi_amg_setup's reuse) */
    void *agg[HISPI_AMG_MAX_LEVELS];
    /* with opts.keep, for a setup of new values on A's pattern (reuse):
     * A[l] P[l] of each level but the coarsest; on the device level 0's
     * pattern too (device buffers: its row pointers and columns), and A P
     * and the coarse operators are computed again into these matrices
     * where A has that pattern (hispi_spgemm_refill: no count, no
     * allocation); on the host, made by the first update, the plans of A P
     * and P^T (A P) (plan[0], plan[1]: executed again by the next updates
     * where the patterns are theirs). */
    hisp_matrix AP[HISPI_AMG_MAX_LEVELS];
    void *pat_ptr, *pat_col;
    hisp_spgemm_plan plan[2][HISPI_AMG_MAX_LEVELS];
} hispi_amg;

/* Test hook: levels whose products were computed again into kept
 * matrices (hispi_amg.AP). */
extern long hispi_amg_kept_levels;

/* One level's result: P (NULL: no coarser level), R (device setups), the
 * diagonal, rho, lmax, P's columns and their weights W (u32 each: a device
 * buffer on a device, else host memory; the next level's w), the
 * aggregates (hispi_amg.agg). In: the aggregates to use (agg, nagg of
 * them: taken over), or NULL to make them. */
typedef struct {
    hisp_matrix P, R;
    hisp_vector diag, l1;
    double rho, lmax, upper;
    int64_t nagg;
    void *w, *agg;
} hispi_amg_level;

HISPI_LOCAL void hispi_amg_defaults(hispi_amg_opts *o);
/* A host scalar of type t (f32, f64) for the library's vector calls: v
 * stored in *n; hispi_amg_value reads one back (a hisp_result_host). */
typedef union {
    double d;
    float f;
} hispi_amg_num;
HISPI_LOCAL hisp_scalar hispi_amg_scalar(hisp_type t, hispi_amg_num *n, double v);
HISPI_LOCAL double hispi_amg_value(hisp_type t, const hispi_amg_num *n);
/* With the debug option: a synchronize, then the time since *t0 (ms of
 * hispi_now_ms; 0: not started) logged as `step` of the level of n rows;
 * *t0 the time now. */
HISPI_LOCAL void hispi_amg_mark(hisp_context ctx, int64_t n, const char *step, double *t0);
/* The defaults with ctx's options (amg_theta, amg_smoother, amg_sweeps,
 * amg_block: 0 there leaves block 0, for hispi_amg_cycle_create to choose). */
HISPI_LOCAL void hispi_amg_options(hisp_context ctx, hispi_amg_opts *o);

/* ---- the spectral estimate (amg_spectrum.c) -------------------------------- */

/* The aggregation's priorities and the start vector: a hash of (seed, i),
 * the priority its top 62 bits (room for a state above it: the host's
 * rounds compare one word), and the start vector's entries from it,
 * uniform in [-1, 1) on 24 bits (exact in f32 and f64: the same on the
 * host and the device, kernels/amg.cl). */
HISPI_LOCAL uint64_t hispi_amg_hash(uint64_t seed, int64_t i);
HISPI_LOCAL uint64_t hispi_amg_prio(uint64_t seed, int64_t i);
HISPI_LOCAL double hispi_amg_start_value(uint64_t seed, int64_t i);
/* h[i] = hispi_amg_start_value(seed, i) for i < n, as type t, on the host's
 * threads (ctx: their option; 8M rows took 175 ms on one core). */
HISPI_LOCAL void hispi_amg_start_fill(hisp_context ctx, hisp_type t, int64_t n, uint64_t seed,
                                      void *h);
/* *lmax: an estimate of D^-1 A's largest eigenvalue (A symmetric, d its
 * positive diagonal), the largest Ritz value of HISPI_AMG_LANCZOS Lanczos
 * steps in the D inner product from r0 (overwritten), by the library's
 * SpMV and vector calls on A's context: a little below it (1-6 % on the
 * Laplacians measured); *upper 1.1 times the Ritz value plus its
 * residual bound, above it; rho (Gershgorin's bound) where either is
 * above rho or the steps give nothing. */
HISPI_LOCAL hisp_status hispi_amg_lmax(hisp_matrix A, hisp_vector d, hisp_vector r0, double rho,
                                       double *lmax, double *upper);
/* The same estimate and bound from the Lanczos matrix of k steps run
 * elsewhere (over an MSREP plan: core/solver/ks_cheb.c): diagonal a,
 * off-diagonal b (k - 1 entries), beta the last step's norm. */
HISPI_LOCAL void hispi_amg_bounds(const double *a, const double *b, int k, double beta, double rho,
                                  double *lmax, double *upper);
/* The Chebyshev preconditioner's interval: [hi / HISPI_CHEB_RATIO, hi].
 * CG on poisson3d 64^3 (PoCL) took 55 / 49 / 43 / 41 / 44 iterations at
 * degree 4 with ratios 5 / 10 / 30 / 100 / 300, and 38 / 32 / 25 / 22 / 24
 * at degree 8. */
#define HISPI_CHEB_RATIO 30.0

/* Chebyshev's iteration on D^-1 A over [lo, hi] (Saad, Iterative Methods,
 * alg. 12.1): x = x + p(D^-1 A) D^-1 (b - A x) in `degree` steps (zero: x
 * is 0 on entry, one product fewer), a polynomial of degree - 1 in D^-1 A;
 * r, d, t: work vectors of A's rows; k0, k1: kernels amg_cheb0 and
 * amg_cheb of kernels/amg.cl (the vector updates fused), or NULL (the
 * library's vector calls). The AMG smoother (amg_cycle.c) and the
 * Chebyshev preconditioner (amg_chebyshev.c). */
typedef struct {
    hisp_context ctx;
    hisp_type type; /* A's entries: f32 or f64 */
    hisp_matrix A;
    hisp_vector diag, r, d, t;
    double lo, hi;
    int degree;
    void *k0, *k1;
} hispi_cheb;
HISPI_LOCAL hisp_status hispi_cheb_steps(const hispi_cheb *ch, hisp_vector b, hisp_vector x,
                                         bool zero);

/* Pieces of a level (amg_setup.c), the Chebyshev preconditioner's too: n
 * doubles as a new vector of type t; a new vector of n start values
 * (hispi_amg_start_value; made on a GPU where hispi_amg_dev_start can). */
HISPI_LOCAL hisp_status hispi_amg_diag_vector(hisp_context ctx, hisp_type t, int64_t n,
                                              const double *d, hisp_vector *v);
HISPI_LOCAL hisp_status hispi_amg_start_vector(hisp_context ctx, hisp_type t, int64_t n,
                                               uint64_t seed, hisp_vector *v);

/* The Chebyshev preconditioner (amg_chebyshev.c): A square, f32 or f64,
 * with a positive diagonal (else HISP_ERR_INVALID_ARGUMENT naming the
 * row); z = p(D^-1 A) D^-1 x, degree - 1 products with A. */
typedef struct hispi_chebpc hispi_chebpc;
HISPI_LOCAL hisp_status hispi_chebpc_create(hisp_matrix A, int degree, hispi_chebpc **p);
HISPI_LOCAL hisp_status hispi_chebpc_apply(hispi_chebpc *p, hisp_vector x, hisp_vector z);
HISPI_LOCAL void hispi_chebpc_destroy(hispi_chebpc **p);

/* ---- the device's levels (amg_dev.c) -------------------------------------- */

/* Does ctx's backend set levels up with kernels (where SpGEMM runs there)? */
HISPI_LOCAL bool hispi_amg_dev_usable(hisp_context ctx);
/* One level of A (S for its products with vectors; Ad the same in hisp's
 * device layout, hispi_amg_dev_copy), w its nodes' weights (a device
 * buffer; NULL: all 1): the host level's results (the same aggregates) and
 * R = P^T. */
HISPI_LOCAL hisp_status hispi_amg_dev_level(hisp_matrix S, hisp_matrix Ad, const void *w,
                                            const hispi_amg_opts *o, hispi_amg_level *out);
/* Kernel `name` of kernels/amg.cl for entries of type t (f32, f64); a
 * launch of one work-item per index i < n. */
/* kernels/amg.cl's build options for entries of type t (f32, f64). */
HISPI_LOCAL void hispi_amg_kopts(char *opts, size_t size, hisp_type t);
HISPI_LOCAL hisp_status hispi_amg_kernel(hisp_context ctx, hisp_type t, const char *name, void **k);
HISPI_LOCAL hisp_status hispi_amg_launch(hisp_context ctx, void *k, const hispi_karg *a, int na,
                                         int64_t n);
/* A vector's device buffer for a kernel (written: its host copy goes
 * stale); NULL and *s set on failure, nothing done where *s is already. */
HISPI_LOCAL void *hispi_amg_vbuf(hisp_vector v, bool written, hisp_status *s);
/* *D: X in hisp's device layout for the setup: a view of X's own device
 * copy where the backend exposes its arrays (*own: a buffer of row
 * pointers to free after *D, or NULL), else hispi_amg_dev_copy's. */
HISPI_LOCAL hisp_status hispi_amg_dev_operand(hisp_matrix X, hisp_matrix *D, void **own);
/* *D: X where X is in hisp's device layout, else a new matrix owning device
 * copies of X's host CSR arrays. */
HISPI_LOCAL hisp_status hispi_amg_dev_copy(hisp_matrix X, hisp_matrix *D);
/* The diagonal of A (square CSR, f32 or f64) on the device into *d (a new
 * vector where *d is NULL): with l1, the l1-Jacobi values instead
 * (kernels/amg.cl amg_diag says which); Gershgorin's bound of rho(D^-1 A)
 * and the first rows whose diagonal is not positive and zero (n: none).
 * Where the device cannot (not a GPU, another format or type, arrays not
 * exposed) nothing is done: *d stays NULL. */
typedef struct {
    double rho;
    int64_t nonpos, zero;
} hispi_diag_info;
HISPI_LOCAL hisp_status hispi_amg_dev_diagonal(hisp_matrix A, bool l1, hisp_vector *d,
                                               hispi_diag_info *info);
/* v (f32, f64) = the start values of seed on the device (*done false:
 * nothing done, as above). */
HISPI_LOCAL hisp_status hispi_amg_dev_start(hisp_vector v, uint64_t seed, bool *done);
/* The hierarchy of A (square CSR, f32 or f64, a positive diagonal):
 * HISP_ERR_INVALID_ARGUMENT with the row for a diagonal that is missing,
 * zero or negative; A is not changed. On failure nothing is kept.
 * reuse (NULL: none): a hierarchy of a matrix of A's size set up with the
 * same options on A's backend; its aggregates are taken over (moved: reuse
 * keeps the rest, still to be freed), so that only the numbers are
 * computed anew (the tentative prolongators, their smoothing, the products,
 * the spectral bounds). */
HISPI_LOCAL hisp_status hispi_amg_setup(hisp_matrix A, const hispi_amg_opts *o, hispi_amg *reuse,
                                        hispi_amg *h);
HISPI_LOCAL void hispi_amg_free(hispi_amg *h);
/* sum of the levels' entries / A's */
HISPI_LOCAL double hispi_amg_operator_complexity(const hispi_amg *h);

/* ---- single-precision levels for an f64 system (amg_single.c) ----------- */

/* *S: A (f64 CSR) with its entries narrowed to f32 and its structure
 * copied, on the device where the setup runs there, else on the host; *ok
 * false (*S NULL) where a nonzero entry is outside [2^-64, 2^64]. */
HISPI_LOCAL hisp_status hispi_amg_narrow(hisp_matrix A, hisp_matrix *S, bool *ok);
/* The cycle's ends: b (f64) into c (f32) scaled by 2^-e, e the largest
 * exponent of b's entries, and x = c's f32 entries scaled by 2^e; by
 * kernels where fused (init), else on the host. */
typedef struct {
    void *k[3]; /* amg_bmax, amg_bnarrow, amg_xwiden */
    void *e;    /* the device's e (2048 + e; 0: b = 0) */
    int shift;  /* the host's e */
} hispi_amg_single;
HISPI_LOCAL hisp_status hispi_amg_single_init(hisp_context ctx, bool fused, hispi_amg_single *g);
HISPI_LOCAL void hispi_amg_single_free(hisp_context ctx, hispi_amg_single *g);
HISPI_LOCAL hisp_status hispi_amg_single_in(hisp_context ctx, hispi_amg_single *g, hisp_vector b,
                                            hisp_vector c);
/* e of the last hispi_amg_single_in, read to the host */
HISPI_LOCAL hisp_status hispi_amg_single_shift(hisp_context ctx, hispi_amg_single *g, int *e);
/* b into c with the scale 2^-e of the last hispi_amg_single_in */
HISPI_LOCAL hisp_status hispi_amg_single_in_same(hisp_context ctx, hispi_amg_single *g,
                                                 hisp_vector b, hisp_vector c);
HISPI_LOCAL hisp_status hispi_amg_single_out(hisp_context ctx, hispi_amg_single *g, hisp_vector c,
                                             hisp_vector x);

/* ---- the V-cycle (amg_cycle.c) --------------------------------------------- */

/* A V-cycle preconditioner of A: its hierarchy (A in CSR, or a CSR copy),
 * each level's vectors and diagonal on the context's backend, the coarsest
 * level's dense LU factors on the host. */
typedef struct hispi_amg_cycle hispi_amg_cycle;
HISPI_LOCAL hisp_status hispi_amg_cycle_create(hisp_matrix A, const hispi_amg_opts *o,
                                               hispi_amg_cycle **c);
/* *c for A's new values (a matrix of old's size, type and backend):
 * old's aggregates kept where its options' theta, block and seed are o's
 * (hispi_amg_setup's reuse), else a new setup. old stays to be destroyed
 * by the caller (without its aggregates where they were taken). */
HISPI_LOCAL hisp_status hispi_amg_cycle_renew(hisp_matrix A, const hispi_amg_opts *o,
                                              hispi_amg_cycle *old, hispi_amg_cycle **c);
/* x = M^-1 b: one V-cycle from x = 0, a Chebyshev smoother of degree 3 in
 * D^-1 A before and after the coarse correction, so that M is symmetric
 * where A is (CG); the coarsest level solved exactly (its b read to the
 * host, its x written back). b and x: vectors of A's type and rows (with
 * single-precision levels for an f64 A: b narrowed to f32 at the start, x
 * widened at the end). */
HISPI_LOCAL hisp_status hispi_amg_cycle_apply(hispi_amg_cycle *c, hisp_vector b, hisp_vector x);
HISPI_LOCAL const hispi_amg *hispi_amg_cycle_hierarchy(const hispi_amg_cycle *c);
/* The levels' entry type (f32 or f64). */
HISPI_LOCAL hisp_type hispi_amg_cycle_type(const hispi_amg_cycle *c);
HISPI_LOCAL void hispi_amg_cycle_destroy(hispi_amg_cycle **c);

#endif
