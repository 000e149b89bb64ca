/* Several right-hand sides in lock step (hisp_solver_solve_columns): the
 * k columns iterate together, each product an SpMM over the columns still
 * running, each column with its own scalars and stop (block_run.c). Not
 * installed.
 *
 * The vectors a method keeps per column sit in blocks of k columns ordered
 * by position: positions 0 .. m-1 hold the running columns (col[p] says
 * which), so an SpMM over a block's first m columns serves them all. When a
 * column stops, the last running one moves into its place (the blocks made
 * with keep: those whose contents carry to the next iteration). x and b are
 * the caller's, by column. A column's scalars are slots of the space's bank:
 * slot s of column c is s*k + c; slots [0, nfix) the method's, then the
 * ring of ||r||^2 and, with aux, of a method value per iteration (CG's
 * p^H A p: <= 0 or NaN is a breakdown). The per-column updates are the
 * one-context space's calls (space_local.c) on views of the blocks. */
#ifndef HISPI_SOLVER_BLOCK_H
#define HISPI_SOLVER_BLOCK_H

#include "ksp.h"

enum { BLK_MAX = 8 };

typedef struct blk blk;

/* A method: its fixed slots per column; whether it keeps the aux ring;
 * start (every running column: r = b - A x is in block `res`, ||r0||^2 in
 * slot BLK_RR0) and one iteration it of the running columns. */
typedef struct {
    int nfix;
    bool aux;
    hisp_status (*start)(blk *b);
    hisp_status (*step)(blk *b, int64_t it);
} blk_method;

/* the fixed slots every method has first: ||b||^2, ||r0||^2 (then the
 * method's own from BLK_FIRST) */
enum { BLK_BB = 0, BLK_RR0, BLK_FIRST };

struct blk {
    hisp_solver s;
    hisp_context ctx;
    hisp_matrix A;
    ks_space *sp;
    const blk_method *meth;
    hisp_type t;
    int64_t n, k, m; /* rows, columns, columns running */
    int ring;        /* the check ring: K + 1 iterations */
    int nblk;
    hisp_vector whole[BLK_MAX]; /* the blocks */
    hisp_vector *at[BLK_MAX];   /* their views by position */
    hisp_vector pre[BLK_MAX];   /* their first m columns (for the SpMM) */
    bool keep[BLK_MAX];
    int res;                  /* the block of the residuals (kept) */
    hisp_vector X0;           /* the caller's X as it was */
    hisp_vector *X0c;         /* by column */
    hispi_columns cb, cx;     /* B's and X's columns (views) */
    int64_t *col;             /* position -> column */
    unsigned char *state;     /* by column */
    int64_t *its;             /* iterations that made the column's x */
    double *tol, *bnorm, *rn; /* by column: the tolerance, ||b||, the last ||r|| */
    double *v;                /* read buffer */
    int mb[6];                /* the method's blocks */
    int mstate;               /* the method's (CG: the slot of rho) */
    double t_lock;            /* hispi_now_ms when the lock step ended */
    unsigned char one[32], zero[32];
};

/* A block of k columns (keep: carried across iterations, moved when a
 * column stops); *id its index. */
HISPI_LOCAL hisp_status hispi_blk_new(blk *b, bool keep, int *id);
/* block id's column at position p, as a vector of the space */
static inline ks_vec *hispi_blk_at(const blk *b, int id, int64_t p)
{
    return hispi_ks_wrap_local(b->at[id][p]);
}
/* the caller's x of the column at position p */
static inline ks_vec *hispi_blk_x(const blk *b, int64_t p)
{
    return hispi_ks_wrap_local(b->cx.views[b->col[p]]);
}
/* slot s of the column at position p */
static inline int hispi_blk_slot(const blk *b, int s, int64_t p)
{
    return s * (int)b->k + (int)b->col[p];
}
/* the ring slot of iteration it's ||r||^2, of its aux value */
static inline int hispi_blk_rr(const blk *b, int64_t it, int64_t p)
{
    return hispi_blk_slot(b, b->meth->nfix + (int)((it - 1) % b->ring), p);
}
static inline int hispi_blk_aux(const blk *b, int64_t it, int64_t p)
{
    return hispi_blk_slot(b, b->meth->nfix + b->ring + (int)((it - 1) % b->ring), p);
}
/* out's first m columns = A times in's (one SpMM) */
HISPI_LOCAL hisp_status hispi_blk_product(blk *b, int in, int out);

HISPI_LOCAL extern const blk_method hispi_blk_cg, hispi_blk_bicgstab;

#endif
