/* The Chebyshev preconditioner over a space's ops (ksp.h ks_cheb): the
 * polynomial of amg_chebyshev.c (hispi_cheb_steps from z = 0, Saad's
 * alg. 12.1) and its interval from the same Lanczos steps in the D inner
 * product as amg_spectrum.c, each step a call of the space, so that it runs
 * wherever the space runs: over an MSREP plan, every device on its own
 * rows, the products' halos and the dots' sums as the solvers' own. */
#include "amg/hispi_amg.h"
#include "ksp.h"

#include <math.h>

/* One dot's value: the space's slot, waited for. */
static hisp_status value(ks_space *sp, int slot, double *v)
{
    double out[4];
    HISPI_TRY(sp->o->read(sp, slot, 1, out));
    *v = out[0];
    return HISP_SUCCESS;
}

/* amg_spectrum.c's lanczos() in the space's calls: W = D^-1 R, U = A W,
 * alpha_j = W^T U / s_j^2, R_{j+1} = U / s_j - alpha_j R_j / s_j - beta_j
 * R_{j-1} / s_{j-1}, beta_{j+1}^2 = R_{j+1}^T D^-1 R_{j+1}. */
static hisp_status lanczos(ks_space *sp, ks_vec *diag, ks_vec *R, ks_vec *v[3], int slot, double *a,
                           double *b, int *steps, double *last)
{
    const ks_ops *o = sp->o;
    ks_vec *W = v[0], *U = v[1], *Rp = v[2];
    int k = 0;
    double r = 0, beta = 0, sp_ = 1;
    *steps = 0, *last = 0;
    HISPI_TRY(o->div(sp, R, diag, W, slot));
    HISPI_TRY(value(sp, slot, &r));
    double sj = sqrt(r);
    for (int j = 0; j < HISPI_AMG_LANCZOS && sj > 0 && isfinite(sj); j++) {
        HISPI_TRY(o->matvec(sp, HISP_OP_N, W, U));
        HISPI_TRY(o->dot(sp, U, W, slot));
        HISPI_TRY(value(sp, slot, &r));
        a[k] = r / (sj * sj);
        HISPI_TRY(o->axpbypcz(sp, ks_val(-a[k] / sj), R, ks_val(j ? -beta / sp_ : 0), j ? Rp : R,
                              ks_val(1 / sj), U));
        HISPI_TRY(o->div(sp, U, diag, W, slot));
        HISPI_TRY(value(sp, slot, &r));
        k++;
        beta = sqrt(fmax(r, 0));
        *steps = k, *last = beta;
        if (!(beta > 1e-12 * fabs(a[k - 1])) || k == HISPI_AMG_LANCZOS)
            break; /* invariant subspace, or done */
        b[k - 1] = beta;
        ks_vec *tmp = Rp;
        Rp = R, R = U, U = tmp;
        sp_ = sj, sj = beta;
    }
    return HISP_SUCCESS;
}

void hispi_ks_cheb_free(ks_space *sp, ks_cheb *c)
{
    ks_vec **v[3] = {&c->r, &c->d, &c->t};
    for (int i = 0; i < 3; i++)
        if (*v[i]) sp->o->vfree(sp, *v[i]), *v[i] = NULL;
}

hisp_status hispi_ks_cheb_bound(ks_space *sp, ks_vec *diag, ks_vec *start, double rho, int slot,
                                double *hi)
{
    if (!sp->o->div)
        return hispi_fail(sp->ctx, HISP_ERR_UNSUPPORTED, "Chebyshev: not provided on this space");
    ks_vec *v[3] = {NULL, NULL, NULL};
    hisp_status s = HISP_SUCCESS;
    for (int i = 0; !s && i < 3; i++)
        s = sp->o->vnew(sp, 0, &v[i]);
    double a[HISPI_AMG_LANCZOS], b[HISPI_AMG_LANCZOS], beta = 0, lmax = 0;
    int k = 0;
    if (!s) s = lanczos(sp, diag, start, v, slot, a, b, &k, &beta);
    for (int i = 0; i < 3; i++)
        if (v[i]) sp->o->vfree(sp, v[i]);
    if (!s) hispi_amg_bounds(a, b, k, beta, rho, &lmax, hi);
    return s;
}

hisp_status hispi_ks_cheb_setup(ks_space *sp, ks_vec *diag, int degree, double hi, ks_cheb *c)
{
    *c = (ks_cheb){.degree = degree, .diag = diag, .hi = hi, .lo = hi / HISPI_CHEB_RATIO};
    hisp_status s = sp->o->vnew(sp, 0, &c->r);
    if (!s) s = sp->o->vnew(sp, 0, &c->d);
    if (!s) s = sp->o->vnew(sp, 0, &c->t);
    if (s) hispi_ks_cheb_free(sp, c);
    return s;
}

/* hispi_cheb_steps' vector-call path with x = 0 on entry: r = D^-1 x,
 * d = r / theta, z = d, then degree - 1 times t = D^-1 A d, r -= t,
 * d = 2 rho_k / delta r + rho_k rho_{k-1} d, z += d. */
hisp_status hispi_ks_cheb_apply(ks_space *sp, const ks_cheb *c, ks_vec *x, ks_vec *z)
{
    const ks_ops *o = sp->o;
    double th = (c->hi + c->lo) / 2, de = (c->hi - c->lo) / 2;
    double sg = th / de, rk = 1 / sg;
    HISPI_TRY(o->div(sp, x, c->diag, c->r, -1));
    HISPI_TRY(o->axpby(sp, ks_val(1 / th), c->r, ks_val(0), c->d));
    HISPI_TRY(o->copy(sp, c->d, z));
    for (int k = 0; k + 1 < c->degree; k++) {
        double rn = 1 / (2 * sg - rk);
        HISPI_TRY(o->matvec(sp, HISP_OP_N, c->d, c->t));
        HISPI_TRY(o->div(sp, c->t, c->diag, c->t, -1));
        HISPI_TRY(o->axpby(sp, ks_val(-1), c->t, ks_val(1), c->r));
        HISPI_TRY(o->axpby(sp, ks_val(2 * rn / de), c->r, ks_val(rn * rk), c->d));
        HISPI_TRY(o->axpby(sp, ks_val(1), c->d, ks_val(1), z));
        rk = rn;
    }
    return HISP_SUCCESS;
}
