/* Krylov solvers (hisp.h "Iterative solvers"): the methods are written once,
 * against a vector space (ks_space) that says where vectors and scalars
 * live:
 *   - one context (space_local.c): hisp vectors, scalars as entries of a
 *     device "bank" vector, so that a recurrence's ratios and products are
 *     read by the kernels and the loop never waits for the host between
 *     checks;
 *   - several devices of an MSREP plan, or MPI ranks (core/msrep/msrep_space.c): the
 *     scalars are summed on the host (over devices, then over ranks).
 * A method names scalars by slot number; ks_sc says how an operand is made
 * from slots (a value, a slot, a ratio of two, negated). Not installed. */
#ifndef HISPI_KSP_H
#define HISPI_KSP_H

#include "../hispi.h"

enum { KS_VAL = 0, KS_SLOT, KS_RATIO };

/* A scalar operand: v (KS_VAL; up to 4 components, real part first),
 * slot a (KS_SLOT), or slot a * slot b ^-1 (KS_RATIO). neg: bit 0 negates,
 * bit 1 (KS_SAFE) makes a ratio with a zero denominator 0. */
#define KS_SAFE 2
typedef struct {
    int kind;
    double v[4];
    int a, b;
    int neg;
} ks_sc;

static inline ks_sc ks_val(double re)
{
    ks_sc s = {KS_VAL, {re, 0, 0, 0}, 0, 0, 0};
    return s;
}
static inline ks_sc ks_valv(const double v[4])
{
    ks_sc s = {KS_VAL, {v[0], v[1], v[2], v[3]}, 0, 0, 0};
    return s;
}
static inline ks_sc ks_slot(int a, int neg)
{
    ks_sc s = {KS_SLOT, {0, 0, 0, 0}, a, 0, neg};
    return s;
}
static inline ks_sc ks_ratio(int a, int b, int neg)
{
    ks_sc s = {KS_RATIO, {0, 0, 0, 0}, a, b, neg};
    return s;
}
/* a / b, 0 when b = 0 (exactly converged recurrences stay finite) */
static inline ks_sc ks_safe(int a, int b, int neg)
{
    ks_sc s = {KS_RATIO, {0, 0, 0, 0}, a, b, neg | KS_SAFE};
    return s;
}

typedef struct ks_vec ks_vec; /* a vector of the space (opaque) */
/* An accumulation X += P*p + S*q fused into a later update (BiCGSTAB's x;
 * S may be that update's y). */
typedef struct {
    ks_sc p, q;
    ks_vec *P, *S, *X;
} ks_acc;
typedef struct ks_space ks_space;

/* Every call queues work (the local space) or runs it (the distributed
 * spaces); only read() waits. A vector argument may not be written by the
 * call that reads one of the call's scalars from it (slots are not
 * vectors, so this never arises). */
typedef struct {
    /* a vector of ncols entries (cols != 0: x's space) or nrows (b's) */
    hisp_status (*vnew)(ks_space *sp, int cols, ks_vec **v);
    void (*vfree)(ks_space *sp, ks_vec *v);
    /* y = op(A) x */
    hisp_status (*matvec)(ks_space *sp, hisp_op op, ks_vec *x, ks_vec *y);
    /* z = M^-1 x (a copy without a preconditioner); slot >= 0: slot =
     * dot(x, z), fused where the space can. LSQR's column scaling is the
     * same call on x's space. */
    hisp_status (*precond)(ks_space *sp, ks_vec *x, ks_vec *z, int slot);
    hisp_status (*fill)(ks_space *sp, ks_sc a, ks_vec *y);
    hisp_status (*copy)(ks_space *sp, ks_vec *x, ks_vec *y);
    hisp_status (*scale)(ks_space *sp, ks_vec *y, ks_sc a);
    /* y = x*a + y*b */
    hisp_status (*axpby)(ks_space *sp, ks_sc a, ks_vec *x, ks_sc b, ks_vec *y);
    /* z = x*a + y*b + z*c */
    hisp_status (*axpbypcz)(ks_space *sp, ks_sc a, ks_vec *x, ks_sc b, ks_vec *y, ks_sc c,
                            ks_vec *z);
    /* slot = dot(x, y) */
    hisp_status (*dot)(ks_space *sp, ks_vec *x, ks_vec *y, int slot);
    /* y = x*a + y*b, then slot = dot(y, w) (w NULL: ||y||^2) */
    hisp_status (*axpby_dot)(ks_space *sp, ks_sc a, ks_vec *x, ks_sc b, ks_vec *y, ks_vec *w,
                             int slot);
    /* y1 = x1*a + y1*b, then y2 = x2*c + y2*d (x1 may be y2) */
    hisp_status (*axpby2)(ks_space *sp, ks_sc a, ks_vec *x1, ks_sc b, ks_vec *y1, ks_sc c,
                          ks_vec *x2, ks_sc d, ks_vec *y2);
    /* s0 = dot(x, y), s1 = dot(x, w) */
    hisp_status (*dot2)(ks_space *sp, ks_vec *x, ks_vec *y, ks_vec *w, int s0, int s1);
    /* slot = a*b */
    hisp_status (*smul)(ks_space *sp, ks_sc a, ks_sc b, int slot);
    /* slot = v (a host value) */
    hisp_status (*sset)(ks_space *sp, int slot, const double v[4]);
    /* slots [first, first + n) to out (4 doubles each, unused components
     * 0); waits for the work queued before */
    hisp_status (*read)(ks_space *sp, int first, int n, double *out);
    void (*destroy)(ks_space *sp);
    /* Optional (NULL: matvec, then dot; see ks_matvec_dot): y = A x, slot =
     * dot(x, y), in one pass where the space can. */
    hisp_status (*matvec_dot)(ks_space *sp, ks_vec *x, ks_vec *y, int slot);
    /* Optional (NULL: axpby_dot, then precond; see ks_axpby_precond): y =
     * x*a + y*b, s0 = ||y||^2, z = M^-1 y, s1 = dot(y, z), in one pass where
     * the space can (Jacobi on one context). */
    hisp_status (*axpby_precond)(ks_space *sp, ks_sc a, ks_vec *x, ks_sc b, ks_vec *y, int s0,
                                 ks_vec *z, int s1);
    /* Optional (NULL: axpbypcz, axpby_dot, then dot; see ks_axpby_dot2):
     * acc's X += P*p + S*q, then y = x*a + y*b, s0 = ||y||^2, s1 = dot(w,
     * y), in one pass where the space can. */
    hisp_status (*axpby_dot2)(ks_space *sp, const ks_acc *acc, ks_sc a, ks_vec *x, ks_sc b,
                              ks_vec *y, ks_vec *w, int s0, int s1);
    /* Optional, a basis (GMRES; NULL: the single-vector calls, basis.c):
     * count vectors of b's space in one allocation (vblock_free gives them
     * back); slot + k*q + c = dot(Q[c], R[k]) for k < nr (1 or 2); and
     * hispi_vector_bupdate's update of y0, y1 by the columns with host
     * coefficients. One pass over the basis each where the space can. */
    hisp_status (*vblock)(ks_space *sp, int count, ks_vec **v);
    void (*vblock_free)(ks_space *sp, int count, ks_vec **v);
    hisp_status (*mdot)(ks_space *sp, ks_vec **Q, int q, ks_vec **R, int nr, int slot);
    hisp_status (*bupdate)(ks_space *sp, ks_vec **Q, int q, ks_vec *y0, ks_vec *y1,
                           const double *coef);
    /* Optional (the spaces that run Chebyshev on ks_cheb.c): z = x ./ w,
     * slot >= 0: slot = dot(x, z) (z may be x). */
    hisp_status (*div)(ks_space *sp, ks_vec *x, ks_vec *w, ks_vec *z, int slot);
} ks_ops;

/* The kinds of a solve's time (hisp_solve_info product_ms, vector_ms,
 * reduce_ms): ks_space.ms[kind]. */
enum { KS_MS_PRODUCT = 0, KS_MS_VECTOR, KS_MS_REDUCE, KS_MS_COUNT };

struct ks_space {
    const ks_ops *o;
    hisp_context ctx;     /* failures are recorded here */
    hisp_type t;          /* vector entry type */
    int nslot;            /* slots 0 .. nslot-1 */
    int64_t nrows, ncols; /* lengths of b and x (local for MPI ranks) */
    int has_pc;           /* precond() is more than a copy */
    /* a hierarchy's levels (AMG; 0: none), its rows and entries per level */
    int pc_levels;
    const int64_t *pc_rows, *pc_nnz;
    hisp_type pc_type; /* the levels' entries */
    /* the preconditioner that runs and what its setup changed
     * (hisp_solve_info.precond, precond_shifted, _filled, _diag_shift) */
    hisp_precond pc_kind;
    int64_t pc_shifted, pc_filled;
    double pc_diag_shift;
    int pc_sweeps[2]; /* ILU0, IC0: the factorisation's and each solve's sweeps (0: exact) */
    /* wall time of the space's calls by kind, where the space can tell it
     * (its calls wait for their work); 0 otherwise */
    double ms[KS_MS_COUNT];
    const ks_ops *inner; /* hispi_ks_timed: the ops it wraps */
    bool timed_sync;     /* hispi_ks_timed: each call waits for its work (debug option) */
};

/* Wraps sp's ops so that each call's wall time is added to sp->ms by kind:
 * for a space whose calls run to completion before they return (the
 * one-context space on the reference backend: host loops), or on a device
 * with the debug option, where each call then synchronizes (slower, but
 * the breakdown shows where an iteration's time goes). */
HISPI_LOCAL void hispi_ks_timed(ks_space *sp);

/* y = A x, slot = dot(x, y): the space's matvec_dot, or the two calls. */
static inline hisp_status ks_matvec_dot(ks_space *sp, ks_vec *x, ks_vec *y, int slot)
{
    if (sp->o->matvec_dot) return sp->o->matvec_dot(sp, x, y, slot);
    hisp_status st = sp->o->matvec(sp, HISP_OP_N, x, y);
    return st ? st : sp->o->dot(sp, x, y, slot);
}

/* y = x*a + y*b, s0 = ||y||^2, z = M^-1 y, s1 = dot(y, z): the space's
 * axpby_precond, or the two calls. */
static inline hisp_status ks_axpby_precond(ks_space *sp, ks_sc a, ks_vec *x, ks_sc b, ks_vec *y,
                                           int s0, ks_vec *z, int s1)
{
    if (sp->o->axpby_precond) return sp->o->axpby_precond(sp, a, x, b, y, s0, z, s1);
    hisp_status st = sp->o->axpby_dot(sp, a, x, b, y, NULL, s0);
    return st ? st : sp->o->precond(sp, y, z, s1);
}

/* acc's X += P*p + S*q, then y = x*a + y*b, s0 = ||y||^2, s1 = dot(w, y):
 * the space's axpby_dot2, or the separate calls. */
static inline hisp_status ks_axpby_dot2(ks_space *sp, const ks_acc *acc, ks_sc a, ks_vec *x,
                                        ks_sc b, ks_vec *y, ks_vec *w, int s0, int s1)
{
    if (sp->o->axpby_dot2) return sp->o->axpby_dot2(sp, acc, a, x, b, y, w, s0, s1);
    hisp_status st = sp->o->axpbypcz(sp, acc->p, acc->P, acc->q, acc->S, ks_val(1), acc->X);
    if (!st) st = sp->o->axpby_dot(sp, a, x, b, y, NULL, s0);
    return st ? st : sp->o->dot(sp, w, y, s1);
}

/* Slots every method may use: 0..KS_FIXED-1 are the method's own; the
 * check machinery keeps K + 1 residual norms^2 at KS_FIXED and K + 1 method
 * values after them (ks_run.aux). */
#define KS_FIXED 16
/* The slot the solver's own norms use (the right-hand side's, the true
 * residual's): the last fixed one, which no method uses. */
#define KS_SCRATCH (KS_FIXED - 1)

struct hisp_solver_s {
    uint32_t magic;
    hisp_context ctx;
    hisp_solver_method method;
    double rtol, atol, damp;
    int64_t maxit;
    int restart, check;
    hisp_precond precond;
    hisp_preconditioner pobj; /* hisp_solver_use_preconditioner's, or NULL */
    hisp_solver_monitor monitor;
    void *user;
};

/* One solve: the space, the operands, the stopping state. */
typedef struct ks_run {
    ks_space *sp;
    const struct hisp_solver_s *s;
    ks_vec *b, *x;
    int K;         /* longest check interval */
    int ring;      /* history slots: K + 1, so iterations k and k-1 never share one */
    int Kcur;      /* iterations until the next check */
    int restart;   /* the method must restart its recurrence from x (set by a check) */
    int hist, aux; /* first slot of the K residual norms^2, of the K aux values */
    int use_aux;   /* the method writes aux values (read at each check) */
    /* a stop reason for an iteration's aux value (rprev: the residual norm
     * before it), or -1 */
    int (*aux_bad)(const double v[4], double rprev);
    ks_vec *xsave;       /* x at the last check */
    int64_t it;          /* iterations done (x is x_it) */
    int64_t it_saved;    /* iteration of xsave */
    double tol;          /* max(rtol * bnorm, atol) */
    double bnorm, rnorm; /* ||b|| (set before the method runs) and the residual norm of
                            x_it_saved (or x_it when done), as the recurrence carries it */
    int resumed;         /* the method runs again from x after a restart: hispi_ks_start
                            keeps the iteration count and tells the monitor nothing */
    hisp_stop_reason reason;
    int done;
} ks_run;

static inline int ks_hist(const ks_run *r, int64_t k) /* slot of iteration k >= 1 */
{
    return r->hist + (int)((k - 1) % r->ring);
}
static inline int ks_aux(const ks_run *r, int64_t k)
{
    return r->aux + (int)((k - 1) % r->ring);
}
/* Slots a solve with check interval K needs, and the first slot after the
 * checks' (GMRES keeps a column of H there: restart + 2 more slots). */
#define KS_NSLOT(K) (KS_FIXED + 2 * ((K) + 1))
static inline int ks_extra(const ks_run *r)
{
    return r->aux + r->ring;
}

/* After iteration r->it (its ||r||^2 in ks_hist(r, r->it)): at a check
 * (after Kcur iterations, at the iteration limit, or `force`), read the
 * norms, tell the monitor, and decide; sets r->done and r->reason when the
 * solve stops (x restored to the last check on a failure), or r->restart
 * when the batch must be redone from the restored x. Kcur starts at 1 and
 * grows (doubling, at most K) while the residual's rate predicts that
 * convergence is farther away, so checks near the end come every iteration. */
HISPI_LOCAL hisp_status hispi_ks_check(ks_run *r, int force);
/* For methods that know the residual norm on the host each iteration
 * (GMRES, LSQR): record iteration r->it with norm rnorm (no read, no
 * checkpoint); sets r->done / r->reason. */
HISPI_LOCAL hisp_status hispi_ks_step_host(ks_run *r, double rnorm);
/* The initial residual: rnorm0 = ||r0|| known on the host; decides b = 0,
 * NaN and convergence at iteration 0 (monitor called for 0, unless the
 * run is resumed). r->bnorm is set by the caller (solver.c). */
HISPI_LOCAL hisp_status hispi_ks_start(ks_run *r, double rnorm0);

/* For spaces made above the solvers (core/msrep/msrep_space.c): the slots a
 * solve of s needs, and a solve of s in sp from x (b and x the space's
 * wraps of the caller's vectors; t0 the call's start, hispi_now_ms). */
HISPI_LOCAL int hispi_solver_slots(hisp_solver s);
HISPI_LOCAL hisp_status hispi_solver_run(hisp_solver s, ks_space *sp, ks_vec *b, ks_vec *x,
                                         double t0, hisp_solve_info *info);
/* The preconditioner's part of info: what sp's setup made and changed. */
HISPI_LOCAL void hispi_ks_precond_info(const ks_space *sp, hisp_solve_info *info);

/* The methods: run from x0 = r->x until r->done. */
HISPI_LOCAL hisp_status hispi_ks_cg(ks_run *r);
/* CG's steps (cg.c), for the loops that drive it (hispi_ks_cg, mixed
 * precision's): begin (its vectors; end frees them), init (r = b - A x,
 * z = M^-1 r, p = z, *rn = ||r||), one iteration (r->it + 1), and a new
 * residual: detach (p -= z, before res changes), then replace (res given
 * anew: z, rho and p from it and the old direction; p = 0: p = z). */
typedef struct {
    ks_vec *res, *p, *q, *z; /* z is res without a preconditioner */
    int rho;                 /* the slot of r^H z */
} ks_cg;
HISPI_LOCAL hisp_status hispi_ks_cg_begin(ks_run *r, ks_cg *c);
HISPI_LOCAL void hispi_ks_cg_end(ks_run *r, ks_cg *c);
HISPI_LOCAL hisp_status hispi_ks_cg_init(ks_run *r, ks_cg *c, double *rn);
HISPI_LOCAL hisp_status hispi_ks_cg_step(ks_run *r, ks_cg *c);
HISPI_LOCAL hisp_status hispi_ks_cg_detach(ks_run *r, ks_cg *c);
HISPI_LOCAL hisp_status hispi_ks_cg_replace(ks_run *r, ks_cg *c);
HISPI_LOCAL hisp_status hispi_ks_bicgstab(ks_run *r);
HISPI_LOCAL hisp_status hispi_ks_gmres(ks_run *r);

/* A basis through the space's ops where it has them, else the
 * single-vector calls (basis.c; the *_calls forms: always the latter). */
HISPI_LOCAL hisp_status hispi_ks_vblock(ks_space *sp, int count, ks_vec **v);
HISPI_LOCAL void hispi_ks_vblock_free(ks_space *sp, int count, ks_vec **v);
/* vnew / vfree a vector at a time; on failure nothing stays allocated */
HISPI_LOCAL hisp_status hispi_ks_vblock_calls(ks_space *sp, int count, ks_vec **v);
HISPI_LOCAL void hispi_ks_vblock_free_calls(ks_space *sp, int count, ks_vec **v);
HISPI_LOCAL hisp_status hispi_ks_mdot(ks_space *sp, ks_vec **Q, int q, ks_vec **R, int nr,
                                      int slot);
HISPI_LOCAL hisp_status hispi_ks_mdot_calls(ks_space *sp, ks_vec **Q, int q, ks_vec **R, int nr,
                                            int slot);
HISPI_LOCAL hisp_status hispi_ks_bupdate(ks_space *sp, ks_vec **Q, int q, ks_vec *y0, ks_vec *y1,
                                         const double *coef);
HISPI_LOCAL hisp_status hispi_ks_bupdate_calls(ks_space *sp, ks_vec **Q, int q, ks_vec *y0,
                                               ks_vec *y1, const double *coef);
HISPI_LOCAL hisp_status hispi_ks_lsqr(ks_run *r);

/* The Chebyshev preconditioner written against a space's ops (ks_cheb.c),
 * for the spaces that have no hisp_matrix to hand to amg_chebyshev.c (an
 * MSREP plan's): the same polynomial z = p(D^-1 A) D^-1 x over
 * [hi / HISPI_CHEB_RATIO, hi], hi from the same Lanczos steps; the space
 * needs the div op. */
typedef struct {
    int degree;
    double lo, hi;
    ks_vec *diag;      /* the caller's: A's positive diagonal */
    ks_vec *r, *d, *t; /* the work vectors (the space's) */
} ks_cheb;
/* *hi, the interval's upper end: the Lanczos bound of D^-1 A's largest
 * eigenvalue (diag: A's diagonal; start: the start vector, overwritten;
 * rho: Gershgorin's bound, the cap). Uses slot `slot`, waits for the dots. */
HISPI_LOCAL hisp_status hispi_ks_cheb_bound(ks_space *sp, ks_vec *diag, ks_vec *start, double rho,
                                            int slot, double *hi);
/* c's work vectors and interval [hi / HISPI_CHEB_RATIO, hi]. */
HISPI_LOCAL hisp_status hispi_ks_cheb_setup(ks_space *sp, ks_vec *diag, int degree, double hi,
                                            ks_cheb *c);
HISPI_LOCAL hisp_status hispi_ks_cheb_apply(ks_space *sp, const ks_cheb *c, ks_vec *x, ks_vec *z);
HISPI_LOCAL void hispi_ks_cheb_free(ks_space *sp, ks_cheb *c);

/* The local space: one context, A a matrix or an operator (exactly one
 * non-NULL), nslot slots. The space over an MSREP plan's devices is made
 * in the layer above (core/msrep/msrep_space.c). */
HISPI_LOCAL hisp_status hispi_ks_local(hisp_context ctx, hisp_matrix A, const hisp_operator *op,
                                       hisp_precond pc, hisp_solver_method method, int nslot,
                                       ks_space **sp);
/* A preconditioner object's setup lent to a solve (one of them, or NULL). */
typedef struct {
    struct hispi_amg_cycle *amg; /* core/amg/hispi_amg.h */
    struct hispi_ilu *ilu;       /* core/ilu/hispi_ilu.h */
    struct hispi_chebpc *cheb;   /* core/amg/hispi_amg.h */
} hispi_ks_lent;
/* The local space with a lent setup (NULL: as hispi_ks_local). */
HISPI_LOCAL hisp_status hispi_ks_local_lent(hisp_context ctx, hisp_matrix A, hisp_precond pc,
                                            hisp_solver_method method, int nslot,
                                            const hispi_ks_lent *lent, ks_space **sp);
/* P's setup for a solve of ctx on A (core/solver/precond_object.c):
 * refused when P is gone or of another context, its matrix destroyed, or A
 * not of its size and type. */
HISPI_LOCAL hisp_status hispi_preconditioner_lend(hisp_preconditioner P, hisp_context ctx,
                                                  hisp_matrix A, hispi_ks_lent *lent);
/* Jacobi (core/solver/precond.c): diag(A) as a vector, or l1-Jacobi's
 * (l1, or where a diagonal entry is zero: *l1_used; for quaternions a zero
 * diagonal entry is an error naming its row), *kept: A's own (made on a
 * GPU, kept with A's device copy: not the caller's to destroy); the
 * inverses of the 3x3 diagonal blocks as a block-diagonal b3x3 matrix;
 * 1 / ||A(:, j)|| for LSQR (1 for an empty column); an operator's
 * diagonal, checked the same way. */
HISPI_LOCAL hisp_status hispi_ks_diagonal(hisp_context ctx, hisp_matrix A, bool l1, hisp_vector *d,
                                          bool *l1_used, bool *kept);
HISPI_LOCAL hisp_status hispi_ks_block_jacobi(hisp_context ctx, hisp_matrix A, hisp_matrix *B);
HISPI_LOCAL hisp_status hispi_ks_column_scale(hisp_context ctx, hisp_matrix A, hisp_vector *s);
HISPI_LOCAL hisp_status hispi_ks_operator_diagonal(hisp_context ctx, const hisp_operator *op,
                                                   hisp_vector *d);

/* The context's pool of work vectors (space_local.c): a vector of type t
 * and length n, from the pool where it holds one (pooled vectors of
 * lengths other than n and `other` are destroyed first), else new; and
 * back into the pool (destroyed where it is full). */
HISPI_LOCAL hisp_status hispi_kpool_take(hisp_context ctx, hisp_type t, int64_t n, int64_t other,
                                         hisp_vector *v);
HISPI_LOCAL void hispi_kpool_give(hisp_context ctx, hisp_vector v);
/* solver_precision=mixed (mixed.c): CG on an f64 A iterated in f32 with
 * reliable updates in f64; *ran false (nothing done) where A's entries do
 * not fit f32 or the solve is not one mixed precision takes. */
HISPI_LOCAL hisp_status hispi_solve_mixed(hisp_solver s, hisp_matrix A, hisp_vector b,
                                          hisp_vector x, double t0, hisp_solve_info *info,
                                          bool *ran);

/* Whether a solve of A runs on the host's loops (solver.c;
 * hisp_solve_info.on_host). */
HISPI_LOCAL bool hispi_solve_on_host(hisp_solver s, hisp_matrix A);
/* Several right-hand sides in lock step (block_run.c): whether s, A and X
 * take it (CG or BiCGSTAB with none or Jacobi on a GPU, real or complex
 * entries, X column-major, no monitor, one precision), and the solve of
 * B's k > 1 columns into X, info k entries. */
HISPI_LOCAL bool hispi_solve_block_takes(hisp_solver s, hisp_matrix A, hisp_vector X);
HISPI_LOCAL hisp_status hispi_solve_block(hisp_solver s, hisp_matrix A, hisp_vector B,
                                          hisp_vector X, hisp_solve_info *info);
/* The vectors the caller gave, as vectors of the space (not freed by it). */
HISPI_LOCAL ks_vec *hispi_ks_wrap_local(hisp_vector v);
/* A vector of a local space (of hispi_ks_local's spaces) as the vector it is. */
HISPI_LOCAL hisp_vector hispi_ks_local_vector(ks_vec *v);

#endif
