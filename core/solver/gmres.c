/* Restarted GMRES(m) (Saad and Schultz) with right preconditioning M:
 * x in x0 + M^-1 K_m(A M^-1, r0) minimising ||b - A x||. One Arnoldi step
 * (one iteration):
 *   z = M^-1 v_j;  w = A z;
 *   for i <= j: h_ij = v_i^H w (a slot), w -= v_i * h_ij (reads the slot)
 *   (modified Gram-Schmidt; ||w||^2 fused with the last update)
 * queues without a wait; then one read brings the column of H to the host,
 * which normalises v_{j+1} = w / ||w|| (1/sqrt is not a slot operation),
 * applies the Givens rotations in double (complex for c32/c64) and so knows
 * |g_{j+1}| = ||b - A x_j|| of the iterate the cycle would form: the
 * residual the stopping rule sees every iteration. At a restart and at the
 * end x += M^-1 (V y) with R y = g; a cycle starts from the true residual
 * b - A x. A (numerically) zero ||w|| is the happy breakdown: the space is
 * invariant, x is formed and the next cycle restarts from the true residual
 * (the estimate is then at rounding level, so the solve normally converges
 * there). A non-finite column or a singular projected matrix is
 * HISP_STOP_BREAKDOWN with the x of the valid columns. Real and complex
 * entries; the reference is tests/solver_oracle_ls.c. */
#include "ksp.h"

#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>

typedef double complex cplx;

enum { RR = 1 };

typedef struct {
    int m;
    cplx *R;    /* (m+1) x m column-major, the rotated H */
    double *cs; /* rotations: [c s; -conj(s) c] */
    cplx *sn, *g, *y;
} gm_host;

static hisp_status host_alloc(hisp_context ctx, int m, gm_host *h)
{
    h->m = m;
    HISPI_TRY(hispi_calloc(ctx, (size_t)(m + 1) * (size_t)m, sizeof(cplx), (void **)&h->R));
    HISPI_TRY(hispi_calloc(ctx, (size_t)m, sizeof(double), (void **)&h->cs));
    HISPI_TRY(hispi_calloc(ctx, (size_t)m, sizeof(cplx), (void **)&h->sn));
    HISPI_TRY(hispi_calloc(ctx, (size_t)m + 1, sizeof(cplx), (void **)&h->g));
    HISPI_TRY(hispi_calloc(ctx, (size_t)m, sizeof(cplx), (void **)&h->y));
    return HISP_SUCCESS;
}

static void host_free(gm_host *h)
{
    free(h->R);
    free(h->cs);
    free(h->sn);
    free(h->g);
    free(h->y);
}

/* The rotation that zeroes b >= 0 below a; false when both are 0. */
static bool givens(cplx a, double b, double *c, cplx *s, cplx *rho)
{
    double aa = cabs(a);
    if (aa == 0) {
        *c = 0;
        *s = 1;
        *rho = b;
        return b > 0;
    }
    double nrm = hypot(aa, b);
    cplx ph = a / aa;
    *c = aa / nrm;
    *s = ph * (b / nrm);
    *rho = ph * nrm;
    return true;
}

/* Column j of H (h[0..j], real h_{j+1,j} = hn): rotate it into R and g;
 * false when the projected matrix is singular. */
static bool add_column(gm_host *h, int j, const cplx *col, double hn)
{
    cplx *Rj = h->R + (size_t)j * (size_t)(h->m + 1);
    for (int i = 0; i <= j; i++)
        Rj[i] = col[i];
    for (int i = 0; i < j; i++) {
        cplx t = h->cs[i] * Rj[i] + h->sn[i] * Rj[i + 1];
        Rj[i + 1] = -conj(h->sn[i]) * Rj[i] + h->cs[i] * Rj[i + 1];
        Rj[i] = t;
    }
    if (!givens(Rj[j], hn, &h->cs[j], &h->sn[j], &Rj[j])) return false;
    h->g[j + 1] = -conj(h->sn[j]) * h->g[j];
    h->g[j] = h->cs[j] * h->g[j];
    return true;
}

/* y = R^-1 g over the first k columns. */
static void solve_r(gm_host *h, int k)
{
    for (int i = k - 1; i >= 0; i--) {
        cplx s = h->g[i];
        for (int l = i + 1; l < k; l++)
            s -= h->R[(size_t)l * (size_t)(h->m + 1) + i] * h->y[l];
        h->y[i] = s / h->R[(size_t)i * (size_t)(h->m + 1) + i];
    }
}

static ks_sc cval(cplx v)
{
    const double d[4] = {creal(v), cimag(v), 0, 0};
    return ks_valv(d);
}

/* res = b - A x, slot RR = ||res||^2 */
static hisp_status residual(ks_run *r, ks_vec *res)
{
    ks_space *sp = r->sp;
    HISPI_TRY(sp->o->matvec(sp, HISP_OP_N, r->x, res));
    return sp->o->axpby_dot(sp, ks_val(1), r->b, ks_val(-1), res, NULL, RR);
}

/* x += M^-1 (V y) over k columns; acc and out are free vectors. */
static hisp_status update_x(ks_run *r, gm_host *h, ks_vec **V, int k, ks_vec *acc, ks_vec *out)
{
    ks_space *sp = r->sp;
    const ks_ops *o = sp->o;
    if (k == 0) return HISP_SUCCESS;
    solve_r(h, k);
    if (!sp->has_pc) { /* straight into x, two columns a call */
        for (int i = 0; i < k; i += 2) {
            if (i + 1 < k)
                HISPI_TRY(o->axpbypcz(sp, cval(h->y[i]), V[i], cval(h->y[i + 1]), V[i + 1],
                                      ks_val(1), r->x));
            else
                HISPI_TRY(o->axpby(sp, cval(h->y[i]), V[i], ks_val(1), r->x));
        }
        return HISP_SUCCESS;
    }
    HISPI_TRY(o->axpby(sp, cval(h->y[0]), V[0], ks_val(0), acc));
    for (int i = 1; i < k; i += 2) {
        if (i + 1 < k)
            HISPI_TRY(
                o->axpbypcz(sp, cval(h->y[i]), V[i], cval(h->y[i + 1]), V[i + 1], ks_val(1), acc));
        else
            HISPI_TRY(o->axpby(sp, cval(h->y[i]), V[i], ks_val(1), acc));
    }
    HISPI_TRY(o->precond(sp, acc, out, -1));
    return o->axpby(sp, ks_val(1), out, ks_val(1), r->x);
}

static void stop(ks_run *r, hisp_stop_reason why)
{
    r->done = 1;
    r->reason = why;
}

/* One cycle from V[0] = r0 with ||r0|| = beta > 0: Arnoldi steps until the
 * restart length, the stopping rule, a happy breakdown or a breakdown;
 * *k: the columns that make x. */
static hisp_status cycle(ks_run *r, gm_host *h, ks_vec **V, ks_vec *z, double beta, cplx *col,
                         double *buf, int *k)
{
    ks_space *sp = r->sp;
    const ks_ops *o = sp->o;
    int m = h->m, hc = ks_extra(r);
    double eps = hispi_type_scalar_size(sp->t) == 8 ? DBL_EPSILON : FLT_EPSILON;
    *k = 0;
    HISPI_TRY(o->scale(sp, V[0], ks_val(1 / beta)));
    for (int i = 0; i <= m; i++)
        h->g[i] = 0;
    h->g[0] = beta;
    for (int j = 0; j < m; j++) {
        ks_vec *w = V[j + 1], *zj = V[j];
        if (sp->has_pc) {
            HISPI_TRY(o->precond(sp, V[j], z, -1));
            zj = z;
        }
        HISPI_TRY(o->matvec(sp, HISP_OP_N, zj, w));
        for (int i = 0; i <= j; i++) {
            HISPI_TRY(o->dot(sp, V[i], w, hc + i));
            if (i < j)
                HISPI_TRY(o->axpby(sp, ks_slot(hc + i, 1), V[i], ks_val(1), w));
            else
                HISPI_TRY(
                    o->axpby_dot(sp, ks_slot(hc + i, 1), V[i], ks_val(1), w, NULL, hc + j + 1));
        }
        HISPI_TRY(o->read(sp, hc, j + 2, buf)); /* the one wait of the step */
        double hn2 = buf[4 * (size_t)(j + 1)], cn2 = hn2;
        bool finite = isfinite(hn2);
        for (int i = 0; i <= j; i++) {
            col[i] = CMPLX(buf[4 * (size_t)i], buf[4 * (size_t)i + 1]);
            finite = finite && isfinite(creal(col[i])) && isfinite(cimag(col[i]));
            cn2 += creal(col[i]) * creal(col[i]) + cimag(col[i]) * cimag(col[i]);
        }
        double hn = sqrt(fmax(hn2, 0));
        if (!finite || !add_column(h, j, col, hn)) {
            stop(r, HISP_STOP_BREAKDOWN);
            return HISP_SUCCESS;
        }
        *k = j + 1;
        r->it++;
        HISPI_TRY(hispi_ks_step_host(r, cabs(h->g[j + 1])));
        if (r->done || hn <= 4 * eps * sqrt(cn2)) return HISP_SUCCESS;
        HISPI_TRY(o->scale(sp, w, ks_val(1 / hn)));
    }
    return HISP_SUCCESS;
}

hisp_status hispi_ks_gmres(ks_run *r)
{
    ks_space *sp = r->sp;
    const ks_ops *o = sp->o;
    if (sp->t == HISP_Q32 || sp->t == HISP_Q64)
        return hispi_fail(sp->ctx, HISP_ERR_UNSUPPORTED,
                          "gmres: real and complex entries only (the Givens rotations of a "
                          "quaternion Hessenberg matrix are not written; quaternion matrices: cg "
                          "for Hermitian ones)");
    int m = r->s->restart;
    if (ks_extra(r) + m + 1 > sp->nslot)
        return hispi_fail(sp->ctx, HISP_ERR_INVALID_ARGUMENT,
                          "gmres: the space has %d scalar slots, restart %d needs %d", sp->nslot, m,
                          ks_extra(r) + m + 1);
    gm_host h = {0};
    ks_vec **V = NULL, *z = NULL;
    cplx *col = NULL;
    double *buf = NULL;
    hisp_status st = host_alloc(sp->ctx, m, &h);
    if (!st) st = hispi_calloc(sp->ctx, (size_t)m + 1, sizeof *V, (void **)&V);
    if (!st) st = hispi_calloc(sp->ctx, (size_t)m + 1, sizeof *col, (void **)&col);
    if (!st) st = hispi_calloc(sp->ctx, 4 * ((size_t)m + 2), sizeof *buf, (void **)&buf);
    for (int i = 0; !st && i <= m; i++)
        st = o->vnew(sp, 0, &V[i]);
    if (!st && sp->has_pc) st = o->vnew(sp, 0, &z);
    double v[4], beta = 0;
    if (!st) st = residual(r, V[0]);
    if (!st) st = o->read(sp, RR, 1, v);
    if (!st) {
        beta = isnan(v[0]) ? NAN : sqrt(fmax(v[0], 0));
        st = hispi_ks_start(r, beta);
    }
    while (!st && !r->done) {
        int k = 0;
        st = cycle(r, &h, V, z, beta, col, buf, &k);
        /* V[k] is free: the Arnoldi vector the cycle did not keep */
        if (!st) st = update_x(r, &h, V, k, z, V[k]);
        if (st || r->done) break;
        st = residual(r, V[0]); /* restart from the true residual */
        if (!st) st = o->read(sp, RR, 1, v);
        if (st) break;
        beta = isnan(v[0]) ? NAN : sqrt(fmax(v[0], 0));
        if (!isfinite(beta)) {
            stop(r, HISP_STOP_NAN);
        } else if (beta <= r->tol) {
            r->rnorm = beta;
            stop(r, HISP_STOP_CONVERGED);
        }
    }
    for (int i = 0; V && i <= m; i++)
        if (V[i]) o->vfree(sp, V[i]);
    if (z) o->vfree(sp, z);
    free(V);
    free(col);
    free(buf);
    host_free(&h);
    return st;
}
