/* ILU(0) and IC(0) preconditioned Krylov solves on one GPU as a user waits
 * for them: hisp's (public API, CUDA backend, GPU 0) against the loops an
 * expert writes with cuSPARSE's csric02 / csrilu02, SpSV and cuBLAS, in
 * the same process.
 *
 * Matrices (f64), per side n of --sides:
 *   poisson3d-n  hisp_matrix_generate (seed 42): 7-point Laplacian, SPD;
 *   convdiff-n   3D upwind convection-diffusion on n^3 built here: 7-point
 *                stencil, diagonal 6 + beta, the x-minus neighbour
 *                -1 - beta, the others -1, beta = 2 (x the fastest index):
 *                nonsymmetric, an M-matrix.
 * Every solve: b = A * ones (on the host), x0 = 0, rtol 1e-8 (stop at
 * ||b - A x|| <= 1e-8 ||b||), at most --max-iters iterations.
 *
 * Rows:
 *   poisson3d  IC(0)-CG: hisp and cuSPARSE; Jacobi-CG: hisp.
 *   convdiff   ILU(0)-BiCGSTAB: hisp and cuSPARSE; ILU(0)-GMRES(30),
 *              Jacobi-BiCGSTAB and Jacobi-GMRES(30): hisp.
 *
 * hisp: the factors are kept in a hisp_preconditioner; setup ms = wall of
 * hisp_preconditioner_create (a synchronize before and after), median of
 * --repeat after a first, cold one; solves through
 * hisp_solver_use_preconditioner. Jacobi is set up inside each solve
 * (hisp_solver_set_preconditioner): its setup ms is hisp_solve_info's, part
 * of the solve ms. No public call applies a preconditioner alone, so hisp's
 * rows have no apply time.
 *
 * cuSPARSE, as NVIDIA's samples (CUDALibrarySamples cuSPARSE/cg and
 * bicgstab, the CUDA sample conjugateGradientPrecond) write it: 32-bit CSR
 * on the device, cuBLAS on the same stream with host scalars (each dot and
 * norm waits for the device), cusparseSpMV (default algorithm).
 *   IC(0)   csric02 (buffer query, analysis, zero-pivot check, factor,
 *           zero-pivot check) of a device copy of A's lower triangle
 *           (extracted on the host beforehand, like A's upload: untimed);
 *           M^-1 r = L^-T L^-1 r by two cusparseSpSV_solve: L (fill mode
 *           lower, non-unit) and L^T either as opA = T on L or as an explicit
 *           upper CSR matrix (csr2cscEx2 of L, inside the setup).
 *   ILU(0)  csrilu02 of a device copy of A's values; L (unit diagonal) and
 *           U (non-unit), both descriptors on the factor's arrays.
 * The factorisation's policy (USE_LEVEL or NO_LEVEL) and, for IC(0), the
 * L^T variant are chosen per matrix by measurement: the variant of the
 * faster application, then the policy of the faster setup (each candidate
 * set up three times, the best two timed, 20 applications); the choice is
 * printed. setup ms = the value copy, the factorisation with its buffer
 * query and analysis, the zero-pivot checks, the L^T conversion where
 * chosen and the SpSV buffer queries and analyses of both triangles
 * (buffers allocated inside), wall with a stream synchronize, median of
 * --repeat. CG: the preconditioned CG of the samples (the previous r.z kept
 * on the host instead of copies of r and z). BiCGSTAB: right-preconditioned
 * (van der Vorst), the cuSPARSE bicgstab sample's loop: s is checked at the
 * half step, r after the full one. M^-1 apply ms: median of 20 applications
 * (both SpSV solves, a synchronize after each).
 *
 * Both: solve ms = wall from a synchronize to the synchronize after the
 * solve, median of --repeat solves after one warm-up solve; ms/it = solve
 * ms / iterations; total ms = setup + solve (Jacobi: the solve ms, its setup
 * inside); the true relative residual ||b - A x|| / ||b|| is recomputed on
 * the host from x read back after the last solve.
 *
 * Output: per step a log line, then a Markdown table and per matrix the
 * line "hisp vs cuSPARSE: setup, per iteration, total" (hisp / cuSPARSE:
 * below 1, hisp is faster). Exit: 0; 1 a bad option; 2 when a solve did
 * not converge, failed (a zero pivot, a hisp error) or its true residual
 * exceeds 1.01e-8 (hisp, whose convergence is decided on the residual
 * recomputed from x) or 1e-7 (cuSPARSE, whose loop sees only the
 * recurrence's residual); 3 no CUDA device. */
#include "common_solve.h"
#include "cuda_bench.h"

#include <cublas_v2.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RTOL 1e-8
#define HISP_RES_MAX 1.01e-8
#define PEER_RES_MAX 1e-7
#define CONV_BETA 2.0
#define RESTART 30
#define APPLY_REPEAT 20
#define MAX_REPEAT 64
#define MAX_SIDES 8

typedef struct {
    int64_t sides[MAX_SIDES];
    int nsides, repeat;
    int64_t max_iters;
} options;

/* ---- matrices --------------------------------------------------------------- */

typedef struct {
    char name[32];
    int spd;
    int64_t n, nnz;
    const int64_t *rp; /* host CSR: hisp's arrays (poisson3d) or own (convdiff) */
    const int32_t *ci;
    const double *v;
    int64_t *own_rp;
    int32_t *own_ci;
    double *own_v;
    double *b; /* A * ones */
    hisp_matrix A;
} problem;

/* The upwind convection-diffusion matrix on side^3 (see the header). */
static void convdiff(int64_t side, int64_t **rp, int32_t **ci, double **v, int64_t *nnz)
{
    int64_t n = side * side * side, at = 0;
    int64_t *p = bs_alloc((size_t)(n + 1) * sizeof *p);
    int32_t *c = bs_alloc((size_t)n * 7 * sizeof *c);
    double *w = bs_doubles(n * 7);
    p[0] = 0;
    for (int64_t z = 0; z < side; z++)
        for (int64_t y = 0; y < side; y++)
            for (int64_t x = 0; x < side; x++) {
                int64_t i = x + side * (y + side * z);
                /* columns ascending: z-, y-, x-, diagonal, x+, y+, z+ */
                const int64_t off[7] = {-side * side, -side, -1, 0, 1, side, side * side};
                const int in[7] = {z > 0,        y > 0,        x > 0,       1,
                                   x + 1 < side, y + 1 < side, z + 1 < side};
                const double val[7] = {-1, -1, -1 - CONV_BETA, 6 + CONV_BETA, -1, -1, -1};
                for (int k = 0; k < 7; k++)
                    if (in[k]) {
                        c[at] = (int32_t)(i + off[k]);
                        w[at++] = val[k];
                    }
                p[i + 1] = at;
            }
    *rp = p, *ci = c, *v = w, *nnz = at;
}

static void problem_make(hisp_context ctx, int64_t side, int spd, problem *pr)
{
    memset(pr, 0, sizeof *pr);
    pr->spd = spd;
    snprintf(pr->name, sizeof pr->name, "%s-%lld", spd ? "poisson3d" : "convdiff", (long long)side);
    pr->n = side * side * side;
    double t0 = bench_now_ms();
    if (spd) {
        hisp_gen_params gp;
        hisp_gen_defaults(HISP_GEN_POISSON3D, &gp);
        gp.n = side;
        gp.seed = 42;
        cb_hk(ctx, hisp_matrix_generate(ctx, &gp, HISP_F64, &pr->A), "generate poisson3d");
        const void *v;
        cb_hk(ctx, hisp_matrix_host_arrays(pr->A, &pr->rp, NULL, &pr->ci, &v), "host arrays");
        pr->v = v;
        pr->nnz = pr->rp[pr->n];
    } else {
        convdiff(side, &pr->own_rp, &pr->own_ci, &pr->own_v, &pr->nnz);
        pr->rp = pr->own_rp, pr->ci = pr->own_ci, pr->v = pr->own_v;
        cb_hk(ctx,
              hisp_matrix_create_csr(ctx, HISP_F64, pr->n, pr->n, pr->rp, pr->ci, pr->v, &pr->A),
              "create convdiff");
    }
    if (pr->nnz > INT32_MAX) {
        fprintf(stderr,
                "%s: nnz %lld needs 64-bit indices (cuSPARSE's csric02 / csrilu02 take "
                "32-bit)\n",
                pr->name, (long long)pr->nnz);
        exit(3);
    }
    pr->b = bs_doubles(pr->n);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < pr->n; i++) {
        double s = 0;
        for (int64_t k = pr->rp[i]; k < pr->rp[i + 1]; k++)
            s += pr->v[k];
        pr->b[i] = s;
    }
    printf("%s: %lld rows, nnz %lld (made in %.0f ms)\n", pr->name, (long long)pr->n,
           (long long)pr->nnz, bench_now_ms() - t0);
    fflush(stdout);
}

static void problem_free(problem *pr)
{
    hisp_matrix_destroy(&pr->A);
    free(pr->own_rp);
    free(pr->own_ci);
    free(pr->own_v);
    free(pr->b);
}

/* ||b - A x|| / ||b|| in double on the host (NaN anywhere gives NaN). */
static double true_relres(const problem *pr, const double *x)
{
    double rr = 0, bb = 0;
#pragma omp parallel for schedule(static) reduction(+ : rr, bb)
    for (int64_t i = 0; i < pr->n; i++) {
        double s = pr->b[i];
        for (int64_t k = pr->rp[i]; k < pr->rp[i + 1]; k++)
            s -= pr->v[k] * x[pr->ci[k]];
        rr += s * s;
        bb += pr->b[i] * pr->b[i];
    }
    return bb > 0 ? sqrt(rr / bb) : sqrt(rr);
}

/* ---- results ------------------------------------------------------------------ */

typedef struct {
    char matrix[32], method[32], impl[16], status[48];
    int64_t rows, nnz, iters;
    double setup_ms, solve_ms, ms_it, total_ms, relres, apply_ms;
    int ok; /* converged, residual within its bound */
} row;

typedef struct {
    row v[8 * MAX_SIDES];
    int n;
} rows;

static row *row_new(rows *R, const problem *pr, const char *method, const char *impl)
{
    if (R->n >= (int)(sizeof R->v / sizeof *R->v)) {
        fprintf(stderr, "too many rows\n");
        exit(3);
    }
    row *r = &R->v[R->n++];
    memset(r, 0, sizeof *r);
    snprintf(r->matrix, sizeof r->matrix, "%s", pr->name);
    snprintf(r->method, sizeof r->method, "%s", method);
    snprintf(r->impl, sizeof r->impl, "%s", impl);
    r->rows = pr->n;
    r->nnz = pr->nnz;
    r->iters = -1;
    r->setup_ms = r->solve_ms = r->ms_it = r->total_ms = r->relres = r->apply_ms = NAN;
    snprintf(r->status, sizeof r->status, "not run");
    return r;
}

static const row *row_find(const rows *R, const char *matrix, const char *method, const char *impl)
{
    for (int i = 0; i < R->n; i++)
        if (!strcmp(R->v[i].matrix, matrix) && !strcmp(R->v[i].method, method) &&
            !strcmp(R->v[i].impl, impl))
            return &R->v[i];
    return NULL;
}

/* ---- hisp ---------------------------------------------------------------------- */

typedef struct {
    hisp_context ctx;
    cb_cusp C;
    cublasHandle_t bl;
    const options *o;
    int failed;
} bench;

/* A failed hisp call: the row says why, the run fails. */
static void hisp_row_fail(bench *B, row *r, hisp_status s, const char *what)
{
    hisp_error_info e = {0};
    if (hisp_context_last_error(B->ctx, &e) != HISP_SUCCESS) e.message = NULL;
    snprintf(r->status, sizeof r->status, "%s", bs_status_word(s));
    printf("  %s %s on %s: %s: %s: %s\n", r->impl, r->method, r->matrix, what,
           hisp_status_string(s), e.message ? e.message : "");
    B->failed = 1;
}

#define HT(call)                                                                                   \
    do {                                                                                           \
        hisp_status s_ = (call);                                                                   \
        if (s_ != HISP_SUCCESS) {                                                                  \
            hisp_row_fail(B, r, s_, #call);                                                        \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

static double since(double t0)
{
    return bench_now_ms() - t0;
}

/* method with preconditioner pk on pr: ILU0 / IC0 kept in a
 * hisp_preconditioner, Jacobi set up by each solve. */
static void hisp_row(bench *B, rows *R, const problem *pr, hisp_solver_method m, hisp_precond pk,
                     const char *label)
{
    hisp_context ctx = B->ctx;
    int rep = B->o->repeat, object = pk == HISP_PRECOND_ILU0 || pk == HISP_PRECOND_IC0;
    row *r = row_new(R, pr, label, "hisp");
    static const double zero = 0;
    double setup[MAX_REPEAT], wall[MAX_REPEAT], first_setup = NAN, first_solve = NAN, t0;
    double *xh = bs_doubles(pr->n);
    hisp_vector b = NULL, x = NULL;
    hisp_solver s = NULL;
    hisp_preconditioner P = NULL;
    hisp_solve_info info;
    memset(&info, 0, sizeof info);
    HT(hisp_vector_create(ctx, HISP_F64, pr->n, &b));
    HT(hisp_vector_create(ctx, HISP_F64, pr->n, &x));
    HT(hisp_vector_write(b, pr->b));
    HT(hisp_solver_create(ctx, m, &s));
    HT(hisp_solver_set_tolerances(s, RTOL, 0));
    HT(hisp_solver_set_max_iterations(s, B->o->max_iters));
    if (m == HISP_SOLVER_GMRES) HT(hisp_solver_set_restart(s, RESTART));
    if (object) {
        for (int k = -1; k < rep; k++) { /* k = -1: the first, cold setup */
            hisp_preconditioner_destroy(&P);
            HT(hisp_context_synchronize(ctx));
            t0 = bench_now_ms();
            HT(hisp_preconditioner_create(pk, pr->A, &P));
            HT(hisp_context_synchronize(ctx));
            if (k < 0)
                first_setup = since(t0);
            else
                setup[k] = since(t0);
        }
        r->setup_ms = bench_median(setup, rep);
        HT(hisp_solver_use_preconditioner(s, P));
    } else {
        HT(hisp_solver_set_preconditioner(s, pk));
    }
    for (int k = -1; k < rep; k++) { /* k = -1: the warm-up solve */
        HT(hisp_vector_fill(x, hisp_scalar_host(&zero)));
        HT(hisp_context_synchronize(ctx));
        t0 = bench_now_ms();
        HT(hisp_solver_solve(s, pr->A, b, x, &info));
        HT(hisp_context_synchronize(ctx));
        if (k < 0)
            first_solve = since(t0);
        else
            wall[k] = since(t0);
    }
    HT(hisp_vector_read(x, xh));
    r->solve_ms = bench_median(wall, rep);
    r->iters = info.iterations;
    r->ms_it = info.iterations > 0 ? r->solve_ms / (double)info.iterations : NAN;
    if (!object) r->setup_ms = info.setup_ms;
    r->total_ms = object ? r->setup_ms + r->solve_ms : r->solve_ms;
    r->relres = true_relres(pr, xh);
    r->ok = info.converged && r->relres <= HISP_RES_MAX;
    snprintf(r->status, sizeof r->status, "%s", hisp_stop_reason_name(info.reason));
    char first[48] = "inside the solve";
    if (object) snprintf(first, sizeof first, "first, cold: %.1f ms", first_setup);
    printf("  hisp %s: %lld iterations (%s), setup %.2f ms (%s), solve %.2f ms (first %.1f), "
           "%.4f ms/it, true rel. residual %.2e (hisp's %.2e), precond %s, shifted %lld, filled "
           "%lld, diagonal shift %g\n",
           label, (long long)r->iters, r->status, r->setup_ms, first, r->solve_ms, first_solve,
           r->ms_it, r->relres, info.relative_residual, hisp_precond_name(info.precond),
           (long long)info.precond_shifted, (long long)info.precond_filled,
           info.precond_diag_shift);
    if (!r->ok) {
        printf("  FAIL: hisp %s on %s: %s, true rel. residual %.3e (at most %.3g)\n", label,
               pr->name, r->status, r->relres, HISP_RES_MAX);
        B->failed = 1;
    }
done:
    fflush(stdout);
    hisp_solver_destroy(&s);
    hisp_preconditioner_destroy(&P);
    hisp_vector_destroy(&b);
    hisp_vector_destroy(&x);
    free(xh);
}

/* ---- the expert's side: cuSPARSE + cuBLAS ------------------------------------------- */

static void *dalloc(size_t bytes)
{
    void *p = NULL;
    CK(cudaMalloc(&p, bytes ? bytes : 8));
    return p;
}

typedef struct {
    double *p;
    cusparseDnVecDescr_t d;
} dvec;

/* The system on the device: A (32-bit CSR), what the factorisation starts
 * from (IC(0): A's lower triangle; ILU(0): A itself), the SpMV, vectors. */
typedef struct {
    cb_cusp *C;
    cublasHandle_t bl;
    int n, nnz, fnnz, ic;
    int *rp, *ci, *frp, *fci;
    double *val, *fval;
    cusparseSpMatDescr_t A;
    void *mvbuf;
    dvec b, x, r, z, p, q, rh, sh, t, tmp;
} ex_sys;

static void dvec_make(dvec *v, int n)
{
    v->p = dalloc((size_t)n * 8);
    CKS(cusparseCreateDnVec(&v->d, n, v->p, CUDA_R_64F));
}

static void dvec_free(dvec *v)
{
    CKS(cusparseDestroyDnVec(v->d));
    CK(cudaFree(v->p));
}

static int *upload_ptr(const int64_t *rp, int64_t n)
{
    int32_t *h = bs_alloc((size_t)(n + 1) * sizeof *h);
    for (int64_t i = 0; i <= n; i++)
        h[i] = (int32_t)rp[i];
    int *d = dalloc((size_t)(n + 1) * 4);
    CK(cudaMemcpy(d, h, (size_t)(n + 1) * 4, cudaMemcpyHostToDevice));
    free(h);
    return d;
}

static void *upload(const void *h, size_t bytes)
{
    void *d = dalloc(bytes);
    CK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
    return d;
}

static void ex_make(ex_sys *S, bench *B, const problem *pr)
{
    memset(S, 0, sizeof *S);
    S->C = &B->C;
    S->bl = B->bl;
    S->n = (int)pr->n;
    S->nnz = (int)pr->nnz;
    S->ic = pr->spd;
    S->rp = upload_ptr(pr->rp, pr->n);
    S->ci = upload(pr->ci, (size_t)pr->nnz * 4);
    S->val = upload(pr->v, (size_t)pr->nnz * 8);
    if (S->ic) { /* the lower triangle, columns still ascending */
        int64_t *lp = bs_alloc((size_t)(pr->n + 1) * sizeof *lp), at = 0;
        int32_t *lc = bs_alloc((size_t)pr->nnz * sizeof *lc);
        double *lv = bs_doubles(pr->nnz);
        lp[0] = 0;
        for (int64_t i = 0; i < pr->n; i++) {
            for (int64_t k = pr->rp[i]; k < pr->rp[i + 1]; k++)
                if (pr->ci[k] <= i) {
                    lc[at] = pr->ci[k];
                    lv[at++] = pr->v[k];
                }
            lp[i + 1] = at;
        }
        S->fnnz = (int)at;
        S->frp = upload_ptr(lp, pr->n);
        S->fci = upload(lc, (size_t)at * 4);
        S->fval = upload(lv, (size_t)at * 8);
        free(lp);
        free(lc);
        free(lv);
    } else {
        S->fnnz = S->nnz, S->frp = S->rp, S->fci = S->ci, S->fval = S->val;
    }
    CKS(cusparseCreateCsr(&S->A, S->n, S->n, S->nnz, S->rp, S->ci, S->val, CUSPARSE_INDEX_32I,
                          CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    dvec *vs[] = {&S->b, &S->x, &S->r, &S->z, &S->p, &S->q, &S->rh, &S->sh, &S->t, &S->tmp};
    for (size_t k = 0; k < sizeof vs / sizeof *vs; k++)
        dvec_make(vs[k], S->n);
    CK(cudaMemcpy(S->b.p, pr->b, (size_t)S->n * 8, cudaMemcpyHostToDevice));
    const double one = 1, zero = 0;
    size_t bs = 0;
    CKS(cusparseSpMV_bufferSize(S->C->h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, S->A, S->p.d,
                                &zero, S->q.d, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, &bs));
    S->mvbuf = dalloc(bs);
}

static void ex_free(ex_sys *S)
{
    CKS(cusparseDestroySpMat(S->A));
    dvec *vs[] = {&S->b, &S->x, &S->r, &S->z, &S->p, &S->q, &S->rh, &S->sh, &S->t, &S->tmp};
    for (size_t k = 0; k < sizeof vs / sizeof *vs; k++)
        dvec_free(vs[k]);
    CK(cudaFree(S->mvbuf));
    if (S->ic) {
        CK(cudaFree(S->frp));
        CK(cudaFree(S->fci));
        CK(cudaFree(S->fval));
    }
    CK(cudaFree(S->rp));
    CK(cudaFree(S->ci));
    CK(cudaFree(S->val));
}

static void ex_spmv(const ex_sys *S, const dvec *x, dvec *y)
{
    const double one = 1, zero = 0;
    CKS(cusparseSpMV(S->C->h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, S->A, x->d, &zero, y->d,
                     CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, S->mvbuf));
}

/* One factorisation and its two triangular solves. */
typedef struct {
    cusparseSolvePolicy_t policy;
    int upper;  /* IC(0): L^T as an explicit upper CSR matrix, else opA = T on L */
    double *fv; /* the factor's values (the factorisation works in place) */
    int *tp, *ti;
    double *tv; /* upper: L^T */
    cusparseSpMatDescr_t L, U;
    cusparseOperation_t opU;
    cusparseSpSVDescr_t sL, sU;
    void *bL, *bU;
} ex_pc;

static const char *variant_name(int ic, int upper)
{
    return !ic ? "L unit, U" : upper ? "L, L^T explicit (csr2csc)" : "L, L^T by opA = T";
}

static const char *policy_name(cusparseSolvePolicy_t p)
{
    return p == CUSPARSE_SOLVE_POLICY_USE_LEVEL ? "USE_LEVEL" : "NO_LEVEL";
}

static void set_triangle(cusparseSpMatDescr_t M, cusparseFillMode_t fill, cusparseDiagType_t diag)
{
    CKS(cusparseSpMatSetAttribute(M, CUSPARSE_SPMAT_FILL_MODE, &fill, sizeof fill));
    CKS(cusparseSpMatSetAttribute(M, CUSPARSE_SPMAT_DIAG_TYPE, &diag, sizeof diag));
}

static void spsv_make(const ex_sys *S, cusparseOperation_t op, cusparseSpMatDescr_t M,
                      cusparseSpSVDescr_t *d, void **buf)
{
    const double one = 1;
    size_t bs = 0;
    CKS(cusparseSpSV_createDescr(d));
    CKS(cusparseSpSV_bufferSize(S->C->h, op, &one, M, S->r.d, S->tmp.d, CUDA_R_64F,
                                CUSPARSE_SPSV_ALG_DEFAULT, *d, &bs));
    *buf = dalloc(bs);
    CKS(cusparseSpSV_analysis(S->C->h, op, &one, M, S->r.d, S->tmp.d, CUDA_R_64F,
                              CUSPARSE_SPSV_ALG_DEFAULT, *d, *buf));
}

/* cusparseXcsric02_zeroPivot (ic) or csrilu02's (ilu): 0, or -1 after a
 * message when it found a zero pivot (a blocking call: host pointer mode). */
static int pivot_check(cusparseHandle_t h, csric02Info_t ic, csrilu02Info_t ilu, const char *what)
{
    int pos = -1;
    cusparseStatus_t st =
        ic ? cusparseXcsric02_zeroPivot(h, ic, &pos) : cusparseXcsrilu02_zeroPivot(h, ilu, &pos);
    if (st == CUSPARSE_STATUS_ZERO_PIVOT) {
        printf("  cuSPARSE %s: zero pivot in row %d\n", what, pos);
        return -1;
    }
    CKS(st);
    return 0;
}

/* The setup the rows time (see the header); 0, or -1 on a zero pivot (M
 * is then freed). */
static int ex_pc_setup(ex_pc *M, const ex_sys *S, cusparseSolvePolicy_t policy, int upper)
{
    cusparseHandle_t h = S->C->h;
    memset(M, 0, sizeof *M);
    M->policy = policy;
    M->upper = S->ic && upper;
    M->fv = dalloc((size_t)S->fnnz * 8);
    CK(cudaMemcpyAsync(M->fv, S->fval, (size_t)S->fnnz * 8, cudaMemcpyDeviceToDevice,
                       S->C->stream));
    cusparseMatDescr_t md;
    CKS(cusparseCreateMatDescr(&md));
    CKS(cusparseSetMatIndexBase(md, CUSPARSE_INDEX_BASE_ZERO));
    CKS(cusparseSetMatType(md, CUSPARSE_MATRIX_TYPE_GENERAL));
    int bs = 0, bad = 0;
    void *buf;
    if (S->ic) {
        csric02Info_t info;
        CKS(cusparseCreateCsric02Info(&info));
        CKS(cusparseDcsric02_bufferSize(h, S->n, S->fnnz, md, M->fv, S->frp, S->fci, info, &bs));
        buf = dalloc((size_t)bs);
        CKS(cusparseDcsric02_analysis(h, S->n, S->fnnz, md, M->fv, S->frp, S->fci, info, policy,
                                      buf));
        bad = pivot_check(h, info, NULL, "csric02 analysis");
        if (!bad) {
            CKS(cusparseDcsric02(h, S->n, S->fnnz, md, M->fv, S->frp, S->fci, info, policy, buf));
            bad = pivot_check(h, info, NULL, "csric02");
        }
        CKS(cusparseDestroyCsric02Info(info));
    } else {
        csrilu02Info_t info;
        CKS(cusparseCreateCsrilu02Info(&info));
        CKS(cusparseDcsrilu02_bufferSize(h, S->n, S->fnnz, md, M->fv, S->frp, S->fci, info, &bs));
        buf = dalloc((size_t)bs);
        CKS(cusparseDcsrilu02_analysis(h, S->n, S->fnnz, md, M->fv, S->frp, S->fci, info, policy,
                                       buf));
        bad = pivot_check(h, NULL, info, "csrilu02 analysis");
        if (!bad) {
            CKS(cusparseDcsrilu02(h, S->n, S->fnnz, md, M->fv, S->frp, S->fci, info, policy, buf));
            bad = pivot_check(h, NULL, info, "csrilu02");
        }
        CKS(cusparseDestroyCsrilu02Info(info));
    }
    CKS(cusparseDestroyMatDescr(md));
    CK(cudaFree(buf));
    if (bad) {
        CK(cudaFree(M->fv));
        return -1;
    }
    CKS(cusparseCreateCsr(&M->L, S->n, S->n, S->fnnz, S->frp, S->fci, M->fv, CUSPARSE_INDEX_32I,
                          CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    set_triangle(M->L, CUSPARSE_FILL_MODE_LOWER,
                 S->ic ? CUSPARSE_DIAG_TYPE_NON_UNIT : CUSPARSE_DIAG_TYPE_UNIT);
    M->opU = CUSPARSE_OPERATION_NON_TRANSPOSE;
    if (!S->ic) { /* U on the same arrays: SpSV reads only the fill mode's triangle */
        CKS(cusparseCreateCsr(&M->U, S->n, S->n, S->fnnz, S->frp, S->fci, M->fv, CUSPARSE_INDEX_32I,
                              CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
        set_triangle(M->U, CUSPARSE_FILL_MODE_UPPER, CUSPARSE_DIAG_TYPE_NON_UNIT);
    } else if (M->upper) { /* L^T in CSR = L in CSC */
        M->tp = dalloc((size_t)(S->n + 1) * 4);
        M->ti = dalloc((size_t)S->fnnz * 4);
        M->tv = dalloc((size_t)S->fnnz * 8);
        size_t cb = 0;
        CKS(cusparseCsr2cscEx2_bufferSize(h, S->n, S->n, S->fnnz, M->fv, S->frp, S->fci, M->tv,
                                          M->tp, M->ti, CUDA_R_64F, CUSPARSE_ACTION_NUMERIC,
                                          CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1, &cb));
        void *cbuf = dalloc(cb);
        CKS(cusparseCsr2cscEx2(h, S->n, S->n, S->fnnz, M->fv, S->frp, S->fci, M->tv, M->tp, M->ti,
                               CUDA_R_64F, CUSPARSE_ACTION_NUMERIC, CUSPARSE_INDEX_BASE_ZERO,
                               CUSPARSE_CSR2CSC_ALG1, cbuf));
        CK(cudaFree(cbuf));
        CKS(cusparseCreateCsr(&M->U, S->n, S->n, S->fnnz, M->tp, M->ti, M->tv, CUSPARSE_INDEX_32I,
                              CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
        set_triangle(M->U, CUSPARSE_FILL_MODE_UPPER, CUSPARSE_DIAG_TYPE_NON_UNIT);
    } else {
        M->opU = CUSPARSE_OPERATION_TRANSPOSE;
    }
    spsv_make(S, CUSPARSE_OPERATION_NON_TRANSPOSE, M->L, &M->sL, &M->bL);
    spsv_make(S, M->opU, M->U ? M->U : M->L, &M->sU, &M->bU);
    return 0;
}

static void ex_pc_free(ex_pc *M)
{
    CKS(cusparseSpSV_destroyDescr(M->sL));
    CKS(cusparseSpSV_destroyDescr(M->sU));
    CKS(cusparseDestroySpMat(M->L));
    if (M->U) CKS(cusparseDestroySpMat(M->U));
    void *fr[] = {M->fv, M->tp, M->ti, M->tv, M->bL, M->bU};
    for (size_t k = 0; k < sizeof fr / sizeof *fr; k++)
        if (fr[k]) CK(cudaFree(fr[k]));
}

/* out = M^-1 in = U^-1 (L^-1 in), through S->tmp. SpSV writes every entry
 * of its output, so nothing is cleared first (the samples' memsets are
 * not needed). */
static void ex_apply(ex_sys *S, const ex_pc *M, const dvec *in, dvec *out)
{
    const double one = 1;
    CKS(cusparseSpSV_solve(S->C->h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, M->L, in->d, S->tmp.d,
                           CUDA_R_64F, CUSPARSE_SPSV_ALG_DEFAULT, M->sL));
    CKS(cusparseSpSV_solve(S->C->h, M->opU, &one, M->U ? M->U : M->L, S->tmp.d, out->d, CUDA_R_64F,
                           CUSPARSE_SPSV_ALG_DEFAULT, M->sU));
}

/* Wall ms of a setup, with a synchronize before and after; NaN on a zero
 * pivot. */
static double ex_pc_timed(ex_pc *M, const ex_sys *S, cusparseSolvePolicy_t policy, int upper)
{
    CK(cudaStreamSynchronize(S->C->stream));
    double t0 = bench_now_ms();
    if (ex_pc_setup(M, S, policy, upper)) return NAN;
    CK(cudaStreamSynchronize(S->C->stream));
    return since(t0);
}

/* Median wall ms of APPLY_REPEAT applications to b, each synchronized. */
static double ex_apply_ms(ex_sys *S, const ex_pc *M)
{
    double ms[APPLY_REPEAT];
    ex_apply(S, M, &S->b, &S->z); /* warm-up */
    for (int k = 0; k < APPLY_REPEAT; k++) {
        CK(cudaStreamSynchronize(S->C->stream));
        double t0 = bench_now_ms();
        ex_apply(S, M, &S->b, &S->z);
        CK(cudaStreamSynchronize(S->C->stream));
        ms[k] = since(t0);
    }
    return bench_median(ms, APPLY_REPEAT);
}

typedef struct {
    int converged, breakdown;
    int64_t iters;
    double relres; /* the recurrence's ||r|| / ||b|| */
} ex_out;

/* Preconditioned CG from x0 = 0 (the samples' loop). */
static void ex_pcg(ex_sys *S, const ex_pc *M, int64_t maxit, ex_out *o)
{
    cublasHandle_t bl = S->bl;
    int n = S->n;
    const double one = 1;
    CK(cudaMemsetAsync(S->x.p, 0, (size_t)n * 8, S->C->stream));
    CK(cudaMemcpyAsync(S->r.p, S->b.p, (size_t)n * 8, cudaMemcpyDeviceToDevice, S->C->stream));
    double nb = 0, res, rz = 0, rz_old = 1, pq = 0;
    CKB(cublasDnrm2(bl, n, S->b.p, 1, &nb));
    const double thr = RTOL * nb;
    memset(o, 0, sizeof *o);
    res = nb;
    while (res > thr && o->iters < maxit) {
        ex_apply(S, M, &S->r, &S->z);
        CKB(cublasDdot(bl, n, S->r.p, 1, S->z.p, 1, &rz));
        if (o->iters == 0) {
            CKB(cublasDcopy(bl, n, S->z.p, 1, S->p.p, 1));
        } else {
            double beta = rz / rz_old;
            CKB(cublasDscal(bl, n, &beta, S->p.p, 1));
            CKB(cublasDaxpy(bl, n, &one, S->z.p, 1, S->p.p, 1));
        }
        ex_spmv(S, &S->p, &S->q);
        CKB(cublasDdot(bl, n, S->p.p, 1, S->q.p, 1, &pq));
        if (!(pq > 0) || !isfinite(rz)) { /* indefinite, or NaN */
            o->breakdown = 1;
            break;
        }
        double alpha = rz / pq, na = -alpha;
        CKB(cublasDaxpy(bl, n, &alpha, S->p.p, 1, S->x.p, 1));
        CKB(cublasDaxpy(bl, n, &na, S->q.p, 1, S->r.p, 1));
        CKB(cublasDnrm2(bl, n, S->r.p, 1, &res));
        rz_old = rz;
        o->iters++;
    }
    CK(cudaStreamSynchronize(S->C->stream));
    o->converged = !o->breakdown && res <= thr;
    o->relres = nb > 0 ? res / nb : res;
}

/* Right-preconditioned BiCGSTAB from x0 = 0 (the cuSPARSE bicgstab
 * sample's loop; r holds s after the half step). z = M^-1 p, q = A z,
 * sh = M^-1 s, t = A sh. */
static void ex_bicgstab(ex_sys *S, const ex_pc *M, int64_t maxit, ex_out *o)
{
    cublasHandle_t bl = S->bl;
    int n = S->n;
    const double one = 1;
    cudaStream_t st = S->C->stream;
    CK(cudaMemsetAsync(S->x.p, 0, (size_t)n * 8, st));
    CK(cudaMemcpyAsync(S->r.p, S->b.p, (size_t)n * 8, cudaMemcpyDeviceToDevice, st));
    CK(cudaMemcpyAsync(S->rh.p, S->b.p, (size_t)n * 8, cudaMemcpyDeviceToDevice, st));
    double nb = 0, res, rho = 0, rho_old = 1, alpha = 1, omega = 1, rv = 0, ts = 0, tt = 0;
    CKB(cublasDnrm2(bl, n, S->b.p, 1, &nb));
    const double thr = RTOL * nb;
    memset(o, 0, sizeof *o);
    res = nb;
    while (res > thr && o->iters < maxit) {
        o->iters++;
        CKB(cublasDdot(bl, n, S->rh.p, 1, S->r.p, 1, &rho));
        if (rho == 0 || !isfinite(rho)) {
            o->breakdown = 1;
            break;
        }
        if (o->iters == 1) {
            CKB(cublasDcopy(bl, n, S->r.p, 1, S->p.p, 1));
        } else { /* p = r + beta (p - omega v) */
            double beta = (rho / rho_old) * (alpha / omega), nom = -omega;
            CKB(cublasDaxpy(bl, n, &nom, S->q.p, 1, S->p.p, 1));
            CKB(cublasDscal(bl, n, &beta, S->p.p, 1));
            CKB(cublasDaxpy(bl, n, &one, S->r.p, 1, S->p.p, 1));
        }
        ex_apply(S, M, &S->p, &S->z);
        ex_spmv(S, &S->z, &S->q);
        CKB(cublasDdot(bl, n, S->rh.p, 1, S->q.p, 1, &rv));
        alpha = rho / rv;
        if (!isfinite(alpha)) {
            o->breakdown = 1;
            break;
        }
        double na = -alpha;
        CKB(cublasDaxpy(bl, n, &alpha, S->z.p, 1, S->x.p, 1));
        CKB(cublasDaxpy(bl, n, &na, S->q.p, 1, S->r.p, 1)); /* s */
        CKB(cublasDnrm2(bl, n, S->r.p, 1, &res));
        if (res <= thr) break;
        ex_apply(S, M, &S->r, &S->sh);
        ex_spmv(S, &S->sh, &S->t);
        CKB(cublasDdot(bl, n, S->t.p, 1, S->r.p, 1, &ts));
        CKB(cublasDdot(bl, n, S->t.p, 1, S->t.p, 1, &tt));
        omega = ts / tt;
        if (omega == 0 || !isfinite(omega)) {
            o->breakdown = 1;
            break;
        }
        double nom = -omega;
        CKB(cublasDaxpy(bl, n, &omega, S->sh.p, 1, S->x.p, 1));
        CKB(cublasDaxpy(bl, n, &nom, S->t.p, 1, S->r.p, 1));
        CKB(cublasDnrm2(bl, n, S->r.p, 1, &res));
        rho_old = rho;
    }
    CK(cudaStreamSynchronize(st));
    o->converged = !o->breakdown && res <= thr;
    o->relres = nb > 0 ? res / nb : res;
}

/* The cuSPARSE row of pr: IC(0)-CG or ILU(0)-BiCGSTAB. */
static void peer_row(bench *B, rows *R, const problem *pr, const char *label)
{
    const options *o = B->o;
    int rep = o->repeat;
    row *r = row_new(R, pr, label, "cuSPARSE");
    ex_sys S;
    ex_make(&S, B, pr);
    double *xh = bs_doubles(pr->n);
    /* the candidates: factorisation policy x (IC(0)) the L^T variant */
    static const cusparseSolvePolicy_t pols[2] = {CUSPARSE_SOLVE_POLICY_USE_LEVEL,
                                                  CUSPARSE_SOLVE_POLICY_NO_LEVEL};
    double cs[2][2], ca[2][2]; /* [policy][upper]: setup, apply ms */
    int nv = S.ic ? 2 : 1, bp = 0, bu = 0;
    ex_pc M;
    for (int p = 0; p < 2; p++)
        for (int u = 0; u < nv; u++) {
            double t[3];
            for (int k = 0; k < 3; k++) {
                if (k) ex_pc_free(&M);
                t[k] = ex_pc_timed(&M, &S, pols[p], u);
                if (isnan(t[k])) {
                    snprintf(r->status, sizeof r->status, "zero pivot");
                    printf("  FAIL: cuSPARSE %s on %s: zero pivot\n", label, pr->name);
                    B->failed = 1;
                    goto done;
                }
            }
            cs[p][u] = t[1] < t[2] ? t[1] : t[2];
            ca[p][u] = ex_apply_ms(&S, &M);
            ex_pc_free(&M);
            printf("  cuSPARSE %s candidate: factorisation %s, %s: setup %.2f ms (first %.2f), "
                   "M^-1 apply %.4f ms\n",
                   label, policy_name(pols[p]), variant_name(S.ic, u), cs[p][u], t[0], ca[p][u]);
        }
    if (nv == 2 && fmin(ca[0][1], ca[1][1]) < fmin(ca[0][0], ca[1][0])) bu = 1;
    if (cs[1][bu] < cs[0][bu]) bp = 1;
    double setup[MAX_REPEAT], wall[MAX_REPEAT];
    for (int k = 0; k < rep; k++) {
        if (k) ex_pc_free(&M);
        setup[k] = ex_pc_timed(&M, &S, pols[bp], bu); /* the same factors: no zero pivot */
    }
    r->setup_ms = bench_median(setup, rep);
    r->apply_ms = ex_apply_ms(&S, &M);
    ex_out eo;
    for (int k = -1; k < rep; k++) { /* k = -1: the warm-up solve */
        CK(cudaStreamSynchronize(S.C->stream));
        double t0 = bench_now_ms();
        if (S.ic)
            ex_pcg(&S, &M, o->max_iters, &eo);
        else
            ex_bicgstab(&S, &M, o->max_iters, &eo);
        if (k >= 0) wall[k] = since(t0);
    }
    CK(cudaMemcpy(xh, S.x.p, (size_t)S.n * 8, cudaMemcpyDeviceToHost));
    ex_pc_free(&M);
    r->iters = eo.iters;
    r->solve_ms = bench_median(wall, rep);
    r->ms_it = eo.iters > 0 ? r->solve_ms / (double)eo.iters : NAN;
    r->total_ms = r->setup_ms + r->solve_ms;
    r->relres = true_relres(pr, xh);
    r->ok = eo.converged && r->relres <= PEER_RES_MAX;
    snprintf(r->status, sizeof r->status, "%s",
             eo.converged   ? "converged"
             : eo.breakdown ? "breakdown"
                            : "max_iterations");
    printf("  cuSPARSE %s (factorisation %s, %s): %lld iterations (%s), setup %.2f ms, solve "
           "%.2f ms, %.4f ms/it, M^-1 apply %.4f ms, true rel. residual %.2e (recurrence "
           "%.2e)\n",
           label, policy_name(pols[bp]), variant_name(S.ic, bu), (long long)r->iters, r->status,
           r->setup_ms, r->solve_ms, r->ms_it, r->apply_ms, r->relres, eo.relres);
    if (!r->ok) {
        printf("  FAIL: cuSPARSE %s on %s: %s, true rel. residual %.3e (at most %.3g)\n", label,
               pr->name, r->status, r->relres, PEER_RES_MAX);
        B->failed = 1;
    }
done:
    fflush(stdout);
    ex_free(&S);
    free(xh);
}

/* ---- output ---------------------------------------------------------------------- */

static void table(const rows *R)
{
    char a[8][32];
    printf("\n| matrix | rows | nnz | method | impl | setup ms | iterations | solve ms | ms/it | "
           "total ms | true rel. residual | M^-1 apply ms |\n");
    printf("|---|--:|--:|---|---|--:|--:|--:|--:|--:|--:|--:|\n");
    for (int i = 0; i < R->n; i++) {
        const row *r = &R->v[i];
        char it[48];
        if (r->iters < 0)
            snprintf(it, sizeof it, "%s", r->status);
        else if (r->ok)
            snprintf(it, sizeof it, "%lld", (long long)r->iters);
        else
            snprintf(it, sizeof it, "%lld %s", (long long)r->iters, r->status);
        printf("| %s | %lld | %lld | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r->matrix,
               (long long)r->rows, (long long)r->nnz, r->method, r->impl,
               bs_fx(r->setup_ms, a[0], "%.2f"), it, bs_fx(r->solve_ms, a[1], "%.2f"),
               bs_fx(r->ms_it, a[2], "%.4f"), bs_fx(r->total_ms, a[3], "%.2f"),
               bs_fx(r->relres, a[4], "%.2e"), bs_fx(r->apply_ms, a[5], "%.4f"));
    }
    printf("\nhisp vs cuSPARSE = hisp / cuSPARSE (below 1: hisp is faster); per iteration: the "
           "ms/it\n\n");
    for (int i = 0; i < R->n; i++) {
        const row *c = &R->v[i];
        if (strcmp(c->impl, "cuSPARSE")) continue;
        const row *h = row_find(R, c->matrix, c->method, "hisp");
        if (!h) continue;
        printf("%s, %s: hisp vs cuSPARSE: setup %s, per iteration %s, total %s (iterations %lld "
               "and %lld)\n",
               c->matrix, c->method, bs_fx(h->setup_ms / c->setup_ms, a[0], "%.2f"),
               bs_fx(h->ms_it / c->ms_it, a[1], "%.2f"),
               bs_fx(h->total_ms / c->total_ms, a[2], "%.2f"), (long long)h->iters,
               (long long)c->iters);
    }
}

/* ---- main -------------------------------------------------------------------------- */

static const char prog[] = "bench_ilu_cuda";
static const char help[] =
    "usage: bench_ilu_cuda [--sides 100,160] [--repeat 3] [--max-iters 10000]\n"
    "IC(0)-CG on poisson3d and ILU(0)-BiCGSTAB on an upwind convection-diffusion\n"
    "matrix (n^3 rows per side n), f64, rtol 1e-8: hisp (CUDA backend, GPU 0;\n"
    "also ILU(0)-GMRES(30), Jacobi-CG, Jacobi-BiCGSTAB, Jacobi-GMRES(30)) against\n"
    "cuSPARSE csric02 / csrilu02 + SpSV + cuBLAS loops, in one process.\n"
    "  --sides LIST     grid sides, comma-separated, 2..600 (default 100,160)\n"
    "  --repeat K       timed setups and solves, median after a warm-up, 1..64\n"
    "                   (default 3)\n"
    "  --max-iters N    iteration limit of every solve (default 10000)\n"
    "  --help           this text\n"
    "The head of bench/bench_ilu_cuda.c describes the timing. Exit: 0; 2 a solve\n"
    "did not converge or its true residual is above 1.01e-8 (hisp) / 1e-7\n"
    "(cuSPARSE); 3 no CUDA device.\n";

enum { O_SIDES, O_REPEAT, O_MAX_ITERS };
static const opts_def opts[] = {
    {"--sides", true}, {"--repeat", true}, {"--max-iters", true}, OPTS_HELP_DEFS, {0, 0}};

static int parse(int argc, char **argv, options *o)
{
    const char *val[sizeof opts / sizeof *opts] = {0};
    int rc = opts_parse(prog, argc, argv, opts, help, val, NULL);
    if (!rc) rc = opts_int(prog, "--repeat", val[O_REPEAT], 1, MAX_REPEAT, &o->repeat);
    if (!rc) rc = opts_i64(prog, "--max-iters", val[O_MAX_ITERS], 1, INT32_MAX, &o->max_iters);
    if (!rc && val[O_SIDES]) {
        o->nsides = 0;
        for (const char *s = val[O_SIDES]; !rc && s;) {
            char tok[32];
            size_t len = strcspn(s, ",");
            if (o->nsides == MAX_SIDES)
                rc = opts_value_error(prog, "--sides: at most %d sides", MAX_SIDES);
            else if (len >= sizeof tok)
                rc = opts_value_error(prog, "--sides: '%.*s' is not a side", (int)len, s);
            if (rc) break;
            memcpy(tok, s, len);
            tok[len] = 0;
            rc = opts_i64(prog, "--sides", tok, 2, 600, &o->sides[o->nsides++]);
            s = s[len] ? s + len + 1 : NULL;
        }
    }
    return rc;
}

int main(int argc, char **argv)
{
    options o = {.sides = {100, 160}, .nsides = 2, .repeat = 3, .max_iters = 10000};
    int rc = parse(argc, argv, &o);
    if (rc) return rc == OPTS_HELP_SHOWN ? 0 : 1;
    bench B;
    memset(&B, 0, sizeof B);
    B.o = &o;
    hisp_device_info info;
    if (cb_cuda_context(&B.ctx, &info)) return 3;
    int ver = cb_cusp_open(&B.C);
    CKB(cublasCreate(&B.bl));
    CKB(cublasSetStream(B.bl, B.C.stream));
    int bver = 0;
    CKB(cublasGetVersion(B.bl, &bver));
    printf("%.100s, cuSPARSE %d.%d.%d, cuBLAS %d; f64, rtol %g, x0 = 0, b = A * ones, repeat "
           "%d\n",
           info.name, ver / 1000, (ver % 1000) / 100, ver % 100, bver, RTOL, o.repeat);
    fflush(stdout);
    static rows R;
    for (int i = 0; i < o.nsides; i++)
        for (int spd = 1; spd >= 0; spd--) {
            problem pr;
            problem_make(B.ctx, o.sides[i], spd, &pr);
            if (spd) {
                hisp_row(&B, &R, &pr, HISP_SOLVER_CG, HISP_PRECOND_IC0, "IC(0)-CG");
                peer_row(&B, &R, &pr, "IC(0)-CG");
                hisp_row(&B, &R, &pr, HISP_SOLVER_CG, HISP_PRECOND_JACOBI, "Jacobi-CG");
            } else {
                hisp_row(&B, &R, &pr, HISP_SOLVER_BICGSTAB, HISP_PRECOND_ILU0, "ILU(0)-BiCGSTAB");
                peer_row(&B, &R, &pr, "ILU(0)-BiCGSTAB");
                hisp_row(&B, &R, &pr, HISP_SOLVER_GMRES, HISP_PRECOND_ILU0, "ILU(0)-GMRES(30)");
                hisp_row(&B, &R, &pr, HISP_SOLVER_BICGSTAB, HISP_PRECOND_JACOBI, "Jacobi-BiCGSTAB");
                hisp_row(&B, &R, &pr, HISP_SOLVER_GMRES, HISP_PRECOND_JACOBI, "Jacobi-GMRES(30)");
            }
            problem_free(&pr);
        }
    table(&R);
    CKB(cublasDestroy(B.bl));
    cb_cusp_close(&B.C);
    hisp_context_destroy(&B.ctx);
    if (B.failed) printf("\nFAIL: a solve did not converge, failed or missed its residual\n");
    return B.failed ? 2 : 0;
}
