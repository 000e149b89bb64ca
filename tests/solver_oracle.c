/* Reference CG and BiCGSTAB (solver_oracle.h): the textbook loops in double, every
 * scalar a quaternion of which real and complex entries use the first 1 or
 * 2 components (the Hamilton product restricted to them is the real and
 * the complex product). */
#include "solver_oracle.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    double c[4];
} qn;

static qn q_mul(qn a, qn b) /* Hamilton product a*b */
{
    qn r = {{a.c[0] * b.c[0] - a.c[1] * b.c[1] - a.c[2] * b.c[2] - a.c[3] * b.c[3],
             a.c[0] * b.c[1] + a.c[1] * b.c[0] + a.c[2] * b.c[3] - a.c[3] * b.c[2],
             a.c[0] * b.c[2] - a.c[1] * b.c[3] + a.c[2] * b.c[0] + a.c[3] * b.c[1],
             a.c[0] * b.c[3] + a.c[1] * b.c[2] - a.c[2] * b.c[1] + a.c[3] * b.c[0]}};
    return r;
}

static qn q_conj(qn a)
{
    qn r = {{a.c[0], -a.c[1], -a.c[2], -a.c[3]}};
    return r;
}

static double q_abs2(qn a)
{
    return a.c[0] * a.c[0] + a.c[1] * a.c[1] + a.c[2] * a.c[2] + a.c[3] * a.c[3];
}

static qn q_inv(qn a) /* conj(a) / |a|^2 */
{
    qn r = q_conj(a);
    double s = 1 / q_abs2(a);
    for (int i = 0; i < 4; i++)
        r.c[i] *= s;
    return r;
}

static bool q_zero(qn a)
{
    return q_abs2(a) == 0;
}

/* The problem: N vector entries of nc doubles each. */
typedef struct {
    const hispi_ref_csr *A;
    int nc;    /* components of a vector entry */
    int64_t N; /* vector entries */
    double *dinv;
} prob;

static qn ld(const prob *p, const double *v, int64_t i)
{
    qn r = {{0, 0, 0, 0}};
    memcpy(r.c, v + i * p->nc, (size_t)p->nc * sizeof(double));
    return r;
}

static void st(const prob *p, double *v, int64_t i, qn a)
{
    memcpy(v + i * p->nc, a.c, (size_t)p->nc * sizeof(double));
}

static qn dot(const prob *p, const double *x, const double *y)
{
    qn s = {{0, 0, 0, 0}};
    for (int64_t i = 0; i < p->N; i++) {
        qn t = q_mul(q_conj(ld(p, x, i)), ld(p, y, i));
        for (int c = 0; c < 4; c++)
            s.c[c] += t.c[c];
    }
    return s;
}

static double nrm(const prob *p, const double *x)
{
    return sqrt(dot(p, x, x).c[0]);
}

/* y = x*a + y*b */
static void axpby(const prob *p, qn a, const double *x, qn b, double *y)
{
    for (int64_t i = 0; i < p->N; i++) {
        qn u = q_mul(ld(p, x, i), a), w = q_mul(ld(p, y, i), b);
        for (int c = 0; c < 4; c++)
            u.c[c] += w.c[c];
        st(p, y, i, u);
    }
}

static void matvec(const prob *p, const double *x, double *y)
{
    const hispi_ref_csr *A = p->A;
    bool blk = A->type == HISP_B3X3_F64;
    int ec = blk ? 9 : p->nc;
    for (int64_t i = 0; i < A->n; i++) {
        qn s[3] = {{{0, 0, 0, 0}}};
        for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            const double *a = A->val + k * ec;
            int64_t j = A->colind[k];
            if (blk) {
                for (int r = 0; r < 3; r++)
                    for (int c = 0; c < 3; c++)
                        s[r].c[0] += a[r * 3 + c] * x[3 * j + c];
            } else {
                qn e = {{0, 0, 0, 0}};
                memcpy(e.c, a, (size_t)ec * sizeof(double));
                qn t = q_mul(e, ld(p, x, j));
                for (int c = 0; c < 4; c++)
                    s[0].c[c] += t.c[c];
            }
        }
        for (int r = 0; r < (blk ? 3 : 1); r++)
            st(p, y, blk ? 3 * i + r : i, s[r]);
    }
}

/* z = M^-1 x (a copy without Jacobi) */
static void precond(const prob *p, const double *x, double *z)
{
    if (!p->dinv) {
        memcpy(z, x, (size_t)(p->N * p->nc) * sizeof(double));
        return;
    }
    if (p->A->type == HISP_B3X3_F64) {
        for (int64_t i = 0; i < p->A->n; i++)
            for (int r = 0; r < 3; r++) {
                double s = 0;
                for (int c = 0; c < 3; c++)
                    s += p->dinv[i * 9 + r * 3 + c] * x[3 * i + c];
                z[3 * i + r] = s;
            }
        return;
    }
    for (int64_t i = 0; i < p->N; i++)
        st(p, z, i, q_mul(ld(p, p->dinv, i), ld(p, x, i)));
}

static bool inv3(const double m[9], double r[9])
{
    double c0 = m[4] * m[8] - m[5] * m[7], c1 = m[5] * m[6] - m[3] * m[8],
           c2 = m[3] * m[7] - m[4] * m[6];
    double det = m[0] * c0 + m[1] * c1 + m[2] * c2;
    if (det == 0 || !isfinite(det)) return false;
    r[0] = c0 / det, r[1] = (m[2] * m[7] - m[1] * m[8]) / det;
    r[2] = (m[1] * m[5] - m[2] * m[4]) / det, r[3] = c1 / det;
    r[4] = (m[0] * m[8] - m[2] * m[6]) / det, r[5] = (m[2] * m[3] - m[0] * m[5]) / det;
    r[6] = c2 / det, r[7] = (m[1] * m[6] - m[0] * m[7]) / det;
    r[8] = (m[0] * m[4] - m[1] * m[3]) / det;
    return true;
}

static hisp_status setup(hisp_context ctx, const hispi_ref_csr *A, int jacobi, prob *p)
{
    memset(p, 0, sizeof *p);
    p->A = A;
    bool blk = A->type == HISP_B3X3_F64;
    if (A->type != HISP_F64 && A->type != HISP_C64 && A->type != HISP_Q64 && !blk)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "reference solver: type %s",
                          hisp_type_name(A->type));
    p->nc = blk ? 1 : hisp_type_components(A->type);
    p->N = blk ? 3 * A->n : A->n;
    if (!jacobi) return HISP_SUCCESS;
    int ec = blk ? 9 : p->nc;
    HISPI_TRY(hispi_calloc(ctx, (size_t)(A->n * ec + 1), sizeof(double), (void **)&p->dinv));
    for (int64_t i = 0; i < A->n; i++) {
        double d[9] = {0};
        for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
            if (A->colind[k] == i)
                for (int c = 0; c < ec; c++)
                    d[c] += A->val[k * ec + c];
        bool ok;
        if (blk) {
            ok = inv3(d, p->dinv + i * 9);
        } else {
            qn e = {{0, 0, 0, 0}};
            memcpy(e.c, d, (size_t)ec * sizeof(double));
            ok = !q_zero(e);
            if (ok) st(p, p->dinv, i, q_inv(e));
        }
        if (!ok) {
            free(p->dinv);
            p->dinv = NULL;
            return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                              "reference Jacobi: row %lld has a zero diagonal", (long long)i + 1);
        }
    }
    return HISP_SUCCESS;
}

hisp_status hispi_ref_from_sparse(hisp_context ctx, const hispi_sparse *s, hispi_ref_csr *A)
{
    if (s->format != HISP_FORMAT_CSR || s->nrows != s->ncols)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "reference solver: a square CSR");
    A->type = s->type;
    A->n = s->nrows;
    A->rowptr = s->rowptr;
    A->colind = s->colind;
    A->val = s->val;
    return HISP_SUCCESS;
}

/* r = b - A x; the start shared by both methods: returns true when the
 * solve is decided at iteration 0 (b = 0, NaN, converged, maxit 0). */
static bool start(const prob *p, double rtol, double atol, int64_t maxit, const double *b,
                  double *x, double *r, double *tol, hispi_ref_info *info)
{
    memset(info, 0, sizeof *info);
    info->rhs_norm = nrm(p, b);
    *tol = fmax(rtol * info->rhs_norm, atol);
    matvec(p, x, r);
    axpby(p, (qn){{1, 0, 0, 0}}, b, (qn){{-1, 0, 0, 0}}, r);
    info->residual_norm = nrm(p, r);
    if (!isfinite(info->rhs_norm) || !isfinite(info->residual_norm)) {
        info->reason = HISP_STOP_NAN;
        return true;
    }
    if (info->rhs_norm == 0) {
        memset(x, 0, (size_t)(p->N * p->nc) * sizeof(double));
        info->residual_norm = 0;
        info->reason = HISP_STOP_CONVERGED;
        return true;
    }
    if (info->residual_norm <= *tol) {
        info->reason = HISP_STOP_CONVERGED;
        return true;
    }
    info->reason = HISP_STOP_MAX_ITERATIONS;
    return maxit == 0;
}

/* After iteration k made residual r: true when the solve stops. */
static bool step(hispi_ref_info *info, int64_t k, const prob *p, const double *r, double tol,
                 int64_t maxit)
{
    info->iterations = k;
    info->residual_norm = nrm(p, r);
    if (!isfinite(info->residual_norm))
        info->reason = HISP_STOP_NAN;
    else if (info->residual_norm <= tol)
        info->reason = HISP_STOP_CONVERGED;
    else if (k >= maxit)
        info->reason = HISP_STOP_MAX_ITERATIONS;
    else
        return false;
    return true;
}

static hisp_status work(hisp_context ctx, const prob *p, int nv, double **v)
{
    size_t len = (size_t)(p->N * p->nc + 1);
    for (int i = 0; i < nv; i++)
        if (hispi_calloc(ctx, len, sizeof(double), (void **)&v[i])) {
            for (int j = 0; j < i; j++)
                free(v[j]);
            free(p->dinv);
            return HISP_ERR_OUT_OF_HOST_MEMORY;
        }
    return HISP_SUCCESS;
}

hisp_status hispi_ref_cg(hisp_context ctx, const hispi_ref_csr *A, int jacobi, double rtol,
                         double atol, int64_t maxit, const double *b, double *x,
                         hispi_ref_info *info)
{
    prob p;
    HISPI_TRY(setup(ctx, A, jacobi, &p));
    double *v[4], tol;
    HISPI_TRY(work(ctx, &p, 4, v));
    double *r = v[0], *z = v[1], *d = v[2], *q = v[3];
    const qn one = {{1, 0, 0, 0}};
    if (!start(&p, rtol, atol, maxit, b, x, r, &tol, info)) {
        precond(&p, r, z);
        qn rho = dot(&p, r, z);
        memcpy(d, z, (size_t)(p.N * p.nc) * sizeof(double));
        for (int64_t k = 1;; k++) {
            matvec(&p, d, q);
            qn pq = dot(&p, d, q);
            if (!(pq.c[0] > 0)) {
                info->reason = isnan(pq.c[0]) ? HISP_STOP_NAN : HISP_STOP_INDEFINITE;
                break;
            }
            qn alpha = q_mul(rho, q_inv(pq)), malpha = q_mul(alpha, (qn){{-1, 0, 0, 0}});
            axpby(&p, alpha, d, one, x);
            axpby(&p, malpha, q, one, r);
            if (step(info, k, &p, r, tol, maxit)) break;
            precond(&p, r, z);
            qn rho2 = dot(&p, r, z);
            axpby(&p, one, z, q_mul(rho2, q_inv(rho)), d);
            rho = rho2;
        }
    }
    for (int i = 0; i < 4; i++)
        free(v[i]);
    free(p.dinv);
    return HISP_SUCCESS;
}

hisp_status hispi_ref_bicgstab(hisp_context ctx, const hispi_ref_csr *A, int jacobi, double rtol,
                               double atol, int64_t maxit, const double *b, double *x,
                               hispi_ref_info *info)
{
    if (A->type != HISP_F64 && A->type != HISP_C64)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "reference bicgstab: f64 and c64");
    prob p;
    HISPI_TRY(setup(ctx, A, jacobi, &p));
    double *v[7], tol;
    HISPI_TRY(work(ctx, &p, 7, v));
    double *r = v[0], *r0 = v[1], *d = v[2], *w = v[3], *t = v[4], *ph = v[5], *sh = v[6];
    const qn one = {{1, 0, 0, 0}}, mone = {{-1, 0, 0, 0}};
    if (!start(&p, rtol, atol, maxit, b, x, r, &tol, info)) {
        memcpy(r0, r, (size_t)(p.N * p.nc) * sizeof(double));
        qn rho = one, alpha = one, omega = one;
        for (int64_t k = 1;; k++) {
            qn rho2 = dot(&p, r0, r);
            if (q_zero(rho2) || q_zero(omega)) {
                info->reason = HISP_STOP_BREAKDOWN;
                break;
            }
            qn beta = q_mul(q_mul(rho2, q_inv(rho)), q_mul(alpha, q_inv(omega)));
            /* p = r + (p - w*omega)*beta */
            axpby(&p, q_mul(omega, mone), w, one, d);
            axpby(&p, one, r, beta, d);
            precond(&p, d, ph);
            matvec(&p, ph, w);
            qn rv = dot(&p, r0, w);
            if (q_zero(rv)) {
                info->reason = HISP_STOP_BREAKDOWN;
                break;
            }
            alpha = q_mul(rho2, q_inv(rv));
            axpby(&p, q_mul(alpha, mone), w, one, r); /* r = s */
            precond(&p, r, sh);
            matvec(&p, sh, t);
            qn tt = dot(&p, t, t), ts = dot(&p, t, r);
            omega = q_zero(tt) ? (qn){{0, 0, 0, 0}} : q_mul(ts, q_inv(tt));
            axpby(&p, alpha, ph, one, x);
            axpby(&p, omega, sh, one, x);
            axpby(&p, q_mul(omega, mone), t, one, r);
            rho = rho2;
            if (step(info, k, &p, r, tol, maxit)) break;
        }
    }
    for (int i = 0; i < 7; i++)
        free(v[i]);
    free(p.dinv);
    return HISP_SUCCESS;
}
