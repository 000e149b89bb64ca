/* Restarted GMRES(m) (Saad and Schultz) with right preconditioning M:
 * x in x0 + M^-1 K_m(A M^-1, r0) minimising ||b - A x||. The basis is
 * orthogonalised by classical Gram-Schmidt with delayed
 * re-orthogonalisation (DCGS2: Swirydowicz, Langou, Ananthan, Yang and
 * Thomas 2020; Bielich et al. 2022), as stable as modified Gram-Schmidt
 * with two passes over the basis per Arnoldi step instead of 2(j+1) kernel
 * pairs. Step j, with v_0..v_{j-1} orthonormal and u_j the vector of the
 * step before after one projection (neither re-orthogonalised nor
 * normalised):
 *   w = A M^-1 u_j;
 *   one pass: c = V^H u_j, |u_j|^2, V^H w, u_j^H w (hispi_ks_mdot), one wait;
 *   on the host: rho = sqrt(|u_j|^2 - |c|^2) (u_j's norm once re-orthogonalised);
 *     column j-1 of H gains c and rho, is rotated (Givens, in double) and so
 *     gives |g_j| = ||b - A x_j||: the residual the stopping rule sees;
 *     from the Arnoldi relation A M^-1 V = V H, the projections of
 *     A M^-1 v_j follow without another pass;
 *   one pass: v_j = (u_j - V c) / rho and u_{j+1} = A M^-1 v_j minus its
 *     projections on v_0..v_j, from u_j, w and V (hispi_ks_bupdate).
 * A step's product is issued before the previous column's residual is
 * known, so a converged cycle has done one product it does not use. At a
 * restart and at the end x += M^-1 (V y) with R y = g; a cycle starts from
 * the true residual b - A x. A (numerically) zero rho is the happy
 * breakdown: the space is invariant, x is formed and the next cycle
 * restarts from the true residual. A non-finite value or a singular
 * projected matrix is HISP_STOP_BREAKDOWN with the x of the valid columns.
 * Real and complex entries; the reference is tests/solver_oracle_ls.c
 * (modified Gram-Schmidt). */
#include "ksp.h"

#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>

typedef double complex cplx;

enum { RR = 1 };

typedef struct {
    int m;
    cplx *H;    /* (m+1) x m column-major, the Hessenberg matrix as built */
    cplx *R;    /* the same, rotated */
    double *cs; /* rotations: [c s; -conj(s) c] */
    cplx *sn, *g, *y;
    cplx *c, *d;  /* a step's V^H u_j and V^H w */
    double *coef; /* the update's coefficients, 4 doubles per entry */
    double *buf;  /* the slots read, 4 doubles each */
} gm_host;

static hisp_status host_alloc(hisp_context ctx, int m, gm_host *h)
{
    h->m = m;
    size_t hn = (size_t)(m + 1) * (size_t)m;
    HISPI_TRY(hispi_calloc(ctx, hn, sizeof(cplx), (void **)&h->H));
    HISPI_TRY(hispi_calloc(ctx, hn, sizeof(cplx), (void **)&h->R));
    HISPI_TRY(hispi_calloc(ctx, (size_t)m + 1, sizeof(cplx), (void **)&h->c));
    HISPI_TRY(hispi_calloc(ctx, (size_t)m + 1, sizeof(cplx), (void **)&h->d));
    HISPI_TRY(hispi_calloc(ctx, 4 * (2 * (size_t)m + 3), sizeof(double), (void **)&h->coef));
    HISPI_TRY(hispi_calloc(ctx, 8 * ((size_t)m + 1), sizeof(double), (void **)&h->buf));
    HISPI_TRY(hispi_calloc(ctx, (size_t)m, sizeof(double), (void **)&h->cs));
    HISPI_TRY(hispi_calloc(ctx, (size_t)m, sizeof(cplx), (void **)&h->sn));
    HISPI_TRY(hispi_calloc(ctx, (size_t)m + 1, sizeof(cplx), (void **)&h->g));
    HISPI_TRY(hispi_calloc(ctx, (size_t)m, sizeof(cplx), (void **)&h->y));
    return HISP_SUCCESS;
}

static void host_free(gm_host *h)
{
    free(h->H);
    free(h->c);
    free(h->d);
    free(h->coef);
    free(h->buf);
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

/* coefficient i of the update: v, 4 doubles */
static void put(gm_host *h, int i, cplx v)
{
    double *c = h->coef + 4 * (size_t)i;
    c[0] = creal(v), c[1] = cimag(v), c[2] = c[3] = 0;
}

/* res = b - A x, slot RR = ||res||^2 */
static hisp_status residual(ks_run *r, ks_vec *res)
{
    ks_space *sp = r->sp;
    HISPI_TRY(sp->o->matvec(sp, HISP_OP_N, r->x, res));
    return sp->o->axpby_dot(sp, ks_val(1), r->b, ks_val(-1), res, NULL, RR);
}

/* x += M^-1 (V y) over k columns: one update of x (of acc, then the
 * preconditioner, with one); acc and out are free vectors. */
static hisp_status update_x(ks_run *r, gm_host *h, ks_vec **V, int k, ks_vec *acc, ks_vec *out)
{
    ks_space *sp = r->sp;
    if (k == 0) return HISP_SUCCESS;
    solve_r(h, k);
    for (int i = 0; i < 2 * k + 3; i++)
        put(h, i, i < k ? h->y[i] : 0);
    put(h, k, sp->has_pc ? 0 : 1); /* x's own coefficient; acc is not read */
    HISPI_TRY(hispi_ks_bupdate(sp, V, k, sp->has_pc ? acc : r->x, NULL, h->coef));
    if (!sp->has_pc) return HISP_SUCCESS;
    HISPI_TRY(sp->o->precond(sp, acc, out, -1));
    return sp->o->axpby(sp, ks_val(1), out, ks_val(1), r->x);
}

static void stop(ks_run *r, hisp_stop_reason why)
{
    r->done = 1;
    r->reason = why;
}

static cplx slot_value(const double *buf, int s)
{
    return CMPLX(buf[4 * (size_t)s], buf[4 * (size_t)s + 1]);
}

/* The update of step j (rho > 0): v_j = (u_j - V c) / rho into V[j], and
 * u_{j+1} = t - V h - v_j h_j into V[j+1], t = A M^-1 v_j = (w - V e - v_j
 * eta) / rho by the Arnoldi relation (e = H[0:j,0:j] c, eta = rho c_{j-1}),
 * h = V^H t = (d - e) / rho, h_j = v_j^H t = ((u_j^H w - c^H d) / rho - eta)
 * / rho; in u_j, w and V: u_{j+1} = w / rho - kappa u_j - V (d / rho -
 * kappa c), kappa = (eta / rho + h_j) / rho. Column j of H gets h, h_j. */
static hisp_status dcgs2_update(ks_space *sp, gm_host *h, ks_vec **V, int j, double rho, cplx uw)
{
    int ld = h->m + 1;
    cplx *col = h->H + (size_t)j * (size_t)ld, eta = j > 0 ? rho * h->c[j - 1] : 0, cd = 0;
    for (int i = 0; i < j; i++) {
        cplx e = 0;
        for (int l = i > 0 ? i - 1 : 0; l < j; l++) /* H is upper Hessenberg */
            e += h->H[(size_t)l * (size_t)ld + i] * h->c[l];
        col[i] = (h->d[i] - e) / rho;
        cd += conj(h->c[i]) * h->d[i];
    }
    col[j] = ((uw - cd) / rho - eta) / rho;
    cplx kappa = (eta / rho + col[j]) / rho;
    for (int i = 0; i < j; i++) {
        put(h, i, -h->c[i] / rho);
        put(h, j + 1 + i, kappa * h->c[i] - h->d[i] / rho);
    }
    put(h, j, 1 / rho);
    put(h, 2 * j + 1, -kappa);
    put(h, 2 * j + 2, 1 / rho);
    return hispi_ks_bupdate(sp, V, j, V[j], V[j + 1], h->coef);
}

/* One cycle from V[0] = r0 (any nonzero multiple): Arnoldi steps until the
 * restart length, the stopping rule, a happy breakdown or a breakdown;
 * *k: the columns that make x. */
static hisp_status cycle(ks_run *r, gm_host *h, ks_vec **V, ks_vec *z, int *k)
{
    ks_space *sp = r->sp;
    const ks_ops *o = sp->o;
    int m = h->m, hc = ks_extra(r), ld = m + 1;
    double eps = hispi_type_scalar_size(sp->t) == 8 ? DBL_EPSILON : FLT_EPSILON;
    double *buf = h->buf;
    *k = 0;
    for (size_t i = 0; i < (size_t)ld * (size_t)m; i++)
        h->H[i] = 0;
    for (int i = 0; i <= m; i++)
        h->g[i] = 0;
    for (int j = 0; j <= m; j++) {
        int nr = j < m ? 2 : 1; /* the last step only completes column m-1 */
        ks_vec *R[2] = {V[j], j < m ? V[j + 1] : NULL};
        if (j < m) {
            ks_vec *zj = V[j];
            if (sp->has_pc) {
                HISPI_TRY(o->precond(sp, V[j], z, -1));
                zj = z;
            }
            HISPI_TRY(o->matvec(sp, HISP_OP_N, zj, V[j + 1]));
        }
        HISPI_TRY(hispi_ks_mdot(sp, V, j + 1, R, nr, hc));
        HISPI_TRY(o->read(sp, hc, nr * (j + 1), buf)); /* the one wait of the step */
        bool finite = true;
        double c2 = 0, alpha = buf[4 * (size_t)j];
        for (int i = 0; i < nr * (j + 1); i++)
            finite = finite && isfinite(buf[4 * (size_t)i]) && isfinite(buf[4 * (size_t)i + 1]);
        for (int i = 0; i < j; i++) {
            h->c[i] = slot_value(buf, i);
            h->d[i] = nr > 1 ? slot_value(buf, j + 1 + i) : 0;
            c2 += creal(h->c[i] * conj(h->c[i]));
        }
        double rho = sqrt(fmax(alpha - c2, 0));
        if (!finite) {
            stop(r, HISP_STOP_BREAKDOWN);
            return HISP_SUCCESS;
        }
        if (j == 0) {
            if (rho == 0) return HISP_SUCCESS; /* r0 = 0 */
            h->g[0] = rho;
        } else { /* column j-1 complete: rotate it, its residual */
            cplx *col = h->H + (size_t)(j - 1) * (size_t)ld;
            double cn2 = rho * rho;
            for (int i = 0; i < j; i++) {
                col[i] += h->c[i];
                cn2 += creal(col[i] * conj(col[i]));
            }
            col[j] = rho;
            if (!add_column(h, j - 1, col, rho)) {
                stop(r, HISP_STOP_BREAKDOWN);
                return HISP_SUCCESS;
            }
            *k = j;
            r->it++;
            HISPI_TRY(hispi_ks_step_host(r, cabs(h->g[j])));
            if (r->done || rho <= 4 * eps * sqrt(cn2)) return HISP_SUCCESS;
        }
        if (j == m) return HISP_SUCCESS;
        HISPI_TRY(dcgs2_update(sp, h, V, j, rho, slot_value(buf, j + 1 + j)));
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
    if (ks_extra(r) + 2 * (m + 1) > sp->nslot)
        return hispi_fail(sp->ctx, HISP_ERR_INVALID_ARGUMENT,
                          "gmres: the space has %d scalar slots, restart %d needs %d", sp->nslot, m,
                          ks_extra(r) + 2 * (m + 1));
    gm_host h = {0};
    ks_vec **V = NULL, *z = NULL;
    hisp_status st = host_alloc(sp->ctx, m, &h);
    if (!st) st = hispi_calloc(sp->ctx, (size_t)m + 1, sizeof *V, (void **)&V);
    if (!st) st = hispi_ks_vblock(sp, m + 1, V);
    bool have_v = !st;
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
        st = cycle(r, &h, V, z, &k);
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
    if (have_v) hispi_ks_vblock_free(sp, m + 1, V);
    if (z) o->vfree(sp, z);
    free(V);
    host_free(&h);
    return st;
}
