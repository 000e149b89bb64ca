/* Plain references of GMRES(m) and LSQR (solver_oracle_ls.h): Saad's restarted GMRES
 * with modified Gram-Schmidt and Givens rotations, and Paige and Saunders'
 * LSQR with normalised Golub-Kahan vectors, in double on the host. */
#include "solver_oracle_ls.h"

#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef double complex cplx;

/* ---- complex vectors ------------------------------------------------------ */

static cplx *cvec(int64_t n)
{
    return calloc((size_t)(n > 0 ? n : 1), sizeof(cplx));
}

static cplx entry(const hispi_ref_csr *A, int64_t k)
{
    return A->cplx ? CMPLX(A->vals[2 * k], A->vals[2 * k + 1]) : A->vals[k];
}

static void matvec(const hispi_ref_csr *A, const cplx *x, cplx *y)
{
    for (int64_t i = 0; i < A->nrows; i++) {
        cplx s = 0;
        for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
            s += entry(A, k) * x[A->colind[k]];
        y[i] = s;
    }
}

static cplx dotc(int64_t n, const cplx *x, const cplx *y)
{
    cplx s = 0;
    for (int64_t i = 0; i < n; i++)
        s += conj(x[i]) * y[i];
    return s;
}

static double nrm(int64_t n, const cplx *x)
{
    return sqrt(creal(dotc(n, x, x)));
}

static void load(const hispi_ref_csr *A, int64_t n, const double *s, cplx *d)
{
    for (int64_t i = 0; i < n; i++)
        d[i] = A->cplx ? CMPLX(s[2 * i], s[2 * i + 1]) : s[i];
}

static void store(const hispi_ref_csr *A, int64_t n, const cplx *s, double *d)
{
    for (int64_t i = 0; i < n; i++) {
        if (A->cplx) {
            d[2 * i] = creal(s[i]);
            d[2 * i + 1] = cimag(s[i]);
        } else {
            d[i] = creal(s[i]);
        }
    }
}

/* ---- GMRES(m) ------------------------------------------------------------------ */

hisp_status hispi_ref_gmres(const hispi_ref_csr *A, const double *b, double *x, int m, int jacobi,
                            double rtol, double atol, int64_t maxit, hispi_ref_result *res)
{
    int64_t n = A->nrows;
    size_t ld = (size_t)m + 1;
    cplx *B = cvec(n), *X = cvec(n), *r = cvec(n), *w = cvec(n), *z = cvec(n), *dinv = cvec(n);
    cplx *V = calloc(ld * (size_t)(n > 0 ? n : 1), sizeof(cplx));
    cplx *H = calloc(ld * (size_t)m, sizeof(cplx)), *g = cvec(m + 1), *sn = cvec(m), *y = cvec(m);
    double *cs = calloc((size_t)m, sizeof(double));
    hisp_status st = HISP_SUCCESS;
    if (!B || !X || !r || !w || !z || !dinv || !V || !H || !g || !sn || !y || !cs) {
        st = HISP_ERR_OUT_OF_HOST_MEMORY;
        goto out;
    }
    load(A, n, b, B);
    load(A, n, x, X);
    for (int64_t i = 0; i < n; i++) {
        dinv[i] = 1;
        if (jacobi)
            for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
                if (A->colind[k] == i) dinv[i] = 1 / entry(A, k);
    }
    memset(res, 0, sizeof *res);
    res->rhs_norm = nrm(n, B);
    double tol = fmax(rtol * res->rhs_norm, atol);
    matvec(A, X, r);
    for (int64_t i = 0; i < n; i++)
        r[i] = B[i] - r[i];
    double beta = nrm(n, r);
    res->residual_norm = beta;
    res->reason = HISP_STOP_CONVERGED;
    if (!isfinite(res->rhs_norm) || !isfinite(beta)) {
        res->reason = HISP_STOP_NAN;
        goto out;
    }
    if (res->rhs_norm == 0) {
        memset(X, 0, sizeof(cplx) * (size_t)n);
        res->residual_norm = 0;
        store(A, n, X, x);
        goto out;
    }
    if (beta <= tol) goto out;
    if (maxit == 0) {
        res->reason = HISP_STOP_MAX_ITERATIONS;
        goto out;
    }
    for (;;) {
        /* one cycle from r */
        for (int64_t i = 0; i < n; i++)
            V[i] = r[i] / beta;
        for (int i = 0; i <= m; i++)
            g[i] = 0;
        g[0] = beta;
        int k = 0, done = 0;
        for (int j = 0; j < m; j++) {
            cplx *vj = V + (size_t)j * (size_t)n, *hj = H + (size_t)j * ld;
            for (int64_t i = 0; i < n; i++)
                z[i] = vj[i] * dinv[i];
            matvec(A, z, w);
            for (int i = 0; i <= j; i++) { /* modified Gram-Schmidt */
                cplx *vi = V + (size_t)i * (size_t)n;
                hj[i] = dotc(n, vi, w);
                for (int64_t l = 0; l < n; l++)
                    w[l] -= vi[l] * hj[i];
            }
            double hn = nrm(n, w), cn2 = hn * hn;
            int finite = isfinite(hn);
            for (int i = 0; i <= j; i++) {
                cn2 += creal(hj[i] * conj(hj[i]));
                finite = finite && isfinite(creal(hj[i])) && isfinite(cimag(hj[i]));
            }
            for (int i = 0; i < j; i++) {
                cplx t = cs[i] * hj[i] + sn[i] * hj[i + 1];
                hj[i + 1] = -conj(sn[i]) * hj[i] + cs[i] * hj[i + 1];
                hj[i] = t;
            }
            double a = cabs(hj[j]), rho = hypot(a, hn);
            if (!finite || rho == 0) {
                res->reason = HISP_STOP_BREAKDOWN;
                done = 1;
                break;
            }
            cplx ph = a > 0 ? hj[j] / a : 1;
            cs[j] = a / rho;
            sn[j] = ph * (hn / rho);
            hj[j] = ph * rho;
            g[j + 1] = -conj(sn[j]) * g[j];
            g[j] = cs[j] * g[j];
            k = j + 1;
            res->iterations++;
            res->residual_norm = cabs(g[j + 1]);
            if (res->residual_norm <= tol) {
                res->reason = HISP_STOP_CONVERGED;
                done = 1;
            } else if (res->iterations >= maxit) {
                res->reason = HISP_STOP_MAX_ITERATIONS;
                done = 1;
            }
            if (done || hn <= 4 * DBL_EPSILON * sqrt(cn2)) break; /* happy breakdown */
            cplx *vn = V + (size_t)(j + 1) * (size_t)n;
            for (int64_t i = 0; i < n; i++)
                vn[i] = w[i] / hn;
        }
        /* x += M^-1 V y, R y = g */
        for (int i = k - 1; i >= 0; i--) {
            cplx s = g[i];
            for (int l = i + 1; l < k; l++)
                s -= H[(size_t)l * ld + i] * y[l];
            y[i] = s / H[(size_t)i * ld + i];
        }
        for (int i = 0; i < k; i++)
            for (int64_t l = 0; l < n; l++)
                X[l] += V[(size_t)i * (size_t)n + l] * y[i] * dinv[l];
        if (done) break;
        matvec(A, X, r);
        for (int64_t i = 0; i < n; i++)
            r[i] = B[i] - r[i];
        beta = nrm(n, r);
        if (!isfinite(beta)) {
            res->reason = HISP_STOP_NAN;
            break;
        }
        if (beta <= tol) {
            res->residual_norm = beta;
            res->reason = HISP_STOP_CONVERGED;
            break;
        }
    }
    store(A, n, X, x);
out:
    free(B), free(X), free(r), free(w), free(z), free(dinv), free(V), free(H), free(g), free(sn);
    free(y), free(cs);
    return st;
}

/* ---- LSQR ------------------------------------------------------------------------ */

/* The augmented operator [A D; damp D] and its transpose. */
typedef struct {
    const hispi_ref_csr *A;
    const double *d;
    double damp;
} aug_op;

static void aug_n(const aug_op *o, const double *v, double *u1, double *u2, double *tmp)
{
    const hispi_ref_csr *A = o->A;
    for (int64_t j = 0; j < A->ncols; j++)
        tmp[j] = o->d[j] * v[j];
    for (int64_t i = 0; i < A->nrows; i++) {
        double s = 0;
        for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
            s += A->vals[k] * tmp[A->colind[k]];
        u1[i] = s;
    }
    for (int64_t j = 0; j < A->ncols; j++)
        u2[j] = o->damp * tmp[j];
}

static void aug_t(const aug_op *o, const double *u1, const double *u2, double *v)
{
    const hispi_ref_csr *A = o->A;
    for (int64_t j = 0; j < A->ncols; j++)
        v[j] = o->damp * u2[j];
    for (int64_t i = 0; i < A->nrows; i++)
        for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
            v[A->colind[k]] += A->vals[k] * u1[i];
    for (int64_t j = 0; j < A->ncols; j++)
        v[j] *= o->d[j];
}

static double rnrm(int64_t n, const double *x)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++)
        s += x[i] * x[i];
    return sqrt(s);
}

hisp_status hispi_ref_lsqr(const hispi_ref_csr *A, const double *b, double *x, double damp,
                           int colscale, double rtol, double atol, int64_t maxit,
                           hispi_ref_result *res)
{
    int64_t m = A->nrows, n = A->ncols;
    size_t sm = (size_t)(m > 0 ? m : 1), sn = (size_t)(n > 0 ? n : 1);
    double *d = malloc(sn * 8), *u1 = malloc(sm * 8), *u2 = malloc(sn * 8), *p1 = malloc(sm * 8);
    double *p2 = malloc(sn * 8), *v = malloc(sn * 8), *w = malloc(sn * 8), *y = calloc(sn, 8);
    double *t = malloc(sn * 8), *zero = calloc(sn, 8);
    hisp_status st = HISP_SUCCESS;
    if (!d || !u1 || !u2 || !p1 || !p2 || !v || !w || !y || !t || !zero) {
        st = HISP_ERR_OUT_OF_HOST_MEMORY;
        goto out;
    }
    for (int64_t j = 0; j < n; j++)
        d[j] = 0;
    for (int64_t k = 0; k < A->rowptr[m]; k++)
        d[A->colind[k]] += A->vals[k] * A->vals[k];
    for (int64_t j = 0; j < n; j++)
        d[j] = colscale && d[j] > 0 ? 1 / sqrt(d[j]) : 1;
    aug_op op = {A, d, damp};
    memset(res, 0, sizeof *res);
    /* ||D A^T b|| */
    aug_op op0 = {A, d, 0};
    aug_t(&op0, b, zero, t);
    res->rhs_norm = rnrm(n, t);
    /* u = (b - A x0, -damp x0) */
    for (int64_t i = 0; i < m; i++) {
        double s = 0;
        for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
            s += A->vals[k] * x[A->colind[k]];
        u1[i] = b[i] - s;
    }
    for (int64_t j = 0; j < n; j++)
        u2[j] = -damp * x[j];
    double beta = hypot(rnrm(m, u1), rnrm(n, u2)), alpha = 0;
    if (beta > 0) {
        for (int64_t i = 0; i < m; i++)
            u1[i] /= beta;
        for (int64_t j = 0; j < n; j++)
            u2[j] /= beta;
        aug_t(&op, u1, u2, v);
        alpha = rnrm(n, v);
    }
    double tol = fmax(rtol * res->rhs_norm, atol);
    res->residual_norm = alpha * beta;
    res->reason = HISP_STOP_CONVERGED;
    if (!isfinite(res->rhs_norm) || !isfinite(res->residual_norm)) {
        res->reason = HISP_STOP_NAN;
        goto out;
    }
    if (res->rhs_norm == 0) {
        memset(x, 0, sizeof(double) * (size_t)n);
        res->residual_norm = 0;
        goto out;
    }
    if (res->residual_norm <= tol) goto out;
    if (maxit == 0) {
        res->reason = HISP_STOP_MAX_ITERATIONS;
        goto out;
    }
    for (int64_t j = 0; j < n; j++) {
        v[j] /= alpha;
        w[j] = v[j];
    }
    double phibar = beta, rhobar = alpha;
    for (;;) {
        /* beta u = Ab v - alpha u;  alpha v = Ab^T u - beta v */
        aug_n(&op, v, p1, p2, t);
        for (int64_t i = 0; i < m; i++)
            u1[i] = p1[i] - alpha * u1[i];
        for (int64_t j = 0; j < n; j++)
            u2[j] = p2[j] - alpha * u2[j];
        beta = hypot(rnrm(m, u1), rnrm(n, u2));
        if (beta > 0) {
            for (int64_t i = 0; i < m; i++)
                u1[i] /= beta;
            for (int64_t j = 0; j < n; j++)
                u2[j] /= beta;
            aug_t(&op, u1, u2, t);
            for (int64_t j = 0; j < n; j++)
                v[j] = t[j] - beta * v[j];
            alpha = rnrm(n, v);
            if (alpha > 0)
                for (int64_t j = 0; j < n; j++)
                    v[j] /= alpha;
        } else {
            alpha = 0;
        }
        double rho = hypot(rhobar, beta);
        if (!isfinite(beta) || !isfinite(alpha) || !(rho > 0)) {
            res->reason = HISP_STOP_BREAKDOWN;
            break;
        }
        double c = rhobar / rho, s = beta / rho, theta = s * alpha, phi = c * phibar;
        rhobar = -c * alpha;
        phibar = s * phibar;
        for (int64_t j = 0; j < n; j++) {
            y[j] += (phi / rho) * w[j];
            w[j] = v[j] - (theta / rho) * w[j];
        }
        res->iterations++;
        res->residual_norm = phibar * alpha * fabs(c);
        if (res->residual_norm <= tol) {
            res->reason = HISP_STOP_CONVERGED;
            break;
        }
        if (res->iterations >= maxit) {
            res->reason = HISP_STOP_MAX_ITERATIONS;
            break;
        }
    }
    for (int64_t j = 0; j < n; j++)
        x[j] += d[j] * y[j];
out:
    free(d), free(u1), free(u2), free(p1), free(p2), free(v), free(w), free(y), free(t), free(zero);
    return st;
}
