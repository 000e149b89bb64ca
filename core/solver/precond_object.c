/* Preconditioner objects (hisp.h, hisp_preconditioner): AMG's hierarchy and
 * V-cycle, or ILU(0) / IC(0)'s factors, set up once and lent to the solves
 * of a solver (hisp_solver_use_preconditioner), instead of one setup per
 * solve. */
#include "amg/hispi_amg.h"
#include "ilu/hispi_ilu.h"
#include "ksp.h"

#include <stdlib.h>
#include <string.h>

#define HISPI_MAGIC_PRECOND 0x68507263u /* "hPrc" */

struct hisp_preconditioner_s {
    uint32_t magic;
    hisp_context ctx;
    hisp_precond kind;
    hisp_matrix A; /* the caller's, level 0 of the hierarchy */
    int64_t n;
    hisp_type t;
    double setup_ms;
    hispi_amg_cycle *amg; /* AMG */
    hispi_ilu *ilu;       /* ILU0, IC0 */
    hispi_chebpc *cheb;   /* CHEBYSHEV */
    bool broken;          /* the last update failed */
};

static bool precond_ok(hisp_preconditioner P)
{
    return hispi_handle_live(P, HISPI_H_PRECOND) && P->magic == HISPI_MAGIC_PRECOND;
}

/* P's setup of its kind for A, replacing the one it holds on success: the
 * factors or Chebyshev's bound anew; AMG's hierarchy made, or set up again
 * keeping the aggregates and, on a device, the products' structure
 * (hispi_amg_cycle_renew, hispi_amg.AP). */
static hisp_status setup(hisp_preconditioner P, hisp_matrix A)
{
    hisp_context ctx = P->ctx;
    if (P->kind == HISP_PRECOND_ILU0 || P->kind == HISP_PRECOND_IC0) {
        hispi_ilu *f = NULL;
        HISPI_TRY(hispi_ilu_create(A, P->kind == HISP_PRECOND_IC0, &f));
        hispi_ilu_destroy(&P->ilu), P->ilu = f;
    } else if (P->kind == HISP_PRECOND_CHEBYSHEV) {
        hispi_chebpc *c = NULL;
        HISPI_TRY(hispi_chebpc_create(A, ctx->opt.chebyshev_degree, &c));
        hispi_chebpc_destroy(&P->cheb), P->cheb = c;
    } else {
        hispi_amg_opts o;
        hispi_amg_options(ctx, &o);
        o.keep = true; /* its products' structure, for updates */
        hispi_amg_cycle *c = NULL;
        HISPI_TRY(P->amg ? hispi_amg_cycle_renew(A, &o, P->amg, &c)
                         : hispi_amg_cycle_create(A, &o, &c));
        hispi_amg_cycle_destroy(&P->amg), P->amg = c;
    }
    return HISP_SUCCESS;
}

static hisp_status create(hisp_precond kind, hisp_matrix A, hisp_preconditioner *out)
{
    hisp_context ctx = A->ctx;
    double t0 = hispi_now_ms();
    bool ilu = kind == HISP_PRECOND_ILU0 || kind == HISP_PRECOND_IC0;
    if (kind != HISP_PRECOND_AMG && kind != HISP_PRECOND_CHEBYSHEV && !ilu)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                          "hisp_preconditioner_create: %s has nothing to keep across solves "
                          "(hisp_solver_set_preconditioner sets it up with each solve)",
                          hisp_precond_name(kind));
    hisp_matrix_info mi;
    HISPI_TRY(hisp_matrix_get_info(A, &mi));
    hisp_preconditioner P = NULL;
    HISPI_TRY(hispi_calloc(ctx, 1, sizeof *P, (void **)&P));
    hisp_status s = hispi_handle_add(P, HISPI_H_PRECOND, ctx);
    if (s) {
        free(P);
        return hispi_fail(ctx, s, "hisp_preconditioner_create: no room for the handle");
    }
    P->magic = HISPI_MAGIC_PRECOND;
    P->ctx = ctx, P->kind = kind, P->A = A, P->n = mi.nrows, P->t = mi.type;
    s = setup(P, A);
    if (s) {
        hisp_preconditioner_destroy(&P);
        return s;
    }
    P->setup_ms = hispi_now_ms() - t0;
    *out = P;
    return HISP_SUCCESS;
}

hisp_status hisp_preconditioner_create(hisp_precond kind, hisp_matrix A, hisp_preconditioner *P)
{
    if (!hispi_mat_ok(A)) return HISP_ERR_INVALID_HANDLE;
    if (!P)
        return hispi_fail(A->ctx, HISP_ERR_INVALID_ARGUMENT,
                          "hisp_preconditioner_create: P is NULL");
    *P = NULL;
    if ((unsigned)kind >= HISP_PRECOND_COUNT)
        return hispi_fail(A->ctx, HISP_ERR_INVALID_ARGUMENT,
                          "hisp_preconditioner_create: unknown preconditioner %d", (int)kind);
    HISPI_CLAIMED(A->ctx, create(kind, A, P));
}

hisp_status hisp_preconditioner_get_info(hisp_preconditioner P, hisp_preconditioner_info *info)
{
    if (!precond_ok(P)) return HISP_ERR_INVALID_HANDLE;
    if (!info)
        return hispi_fail(P->ctx, HISP_ERR_INVALID_ARGUMENT,
                          "hisp_preconditioner_get_info: info is NULL");
    memset(info, 0, sizeof *info);
    info->kind = P->kind;
    info->setup_ms = P->setup_ms;
    if (P->ilu) {
        const hispi_ilu_info *f = hispi_ilu_report(P->ilu);
        info->type = f->t;
        info->shifted = f->shifted, info->filled = f->filled, info->diag_shift = f->diag_shift;
        info->factor_sweeps = f->factor_sweeps, info->solve_sweeps = f->solve_sweeps;
        return HISP_SUCCESS;
    }
    if (P->cheb) info->type = P->t;
    if (!P->amg) return HISP_SUCCESS; /* Chebyshev, or a failed update */
    const hispi_amg *h = hispi_amg_cycle_hierarchy(P->amg);
    info->levels = h->nlevels;
    info->type = hispi_amg_cycle_type(P->amg);
    for (int l = 0; l < h->nlevels; l++)
        info->rows[l] = h->rows[l], info->nnz[l] = h->nnz[l];
    return HISP_SUCCESS;
}

/* A of P's size and type, else the error (what: the call). */
static hisp_status fits(hisp_preconditioner P, hisp_matrix A, const char *what)
{
    hisp_matrix_info mi;
    HISPI_TRY(hisp_matrix_get_info(A, &mi));
    if (mi.nrows != P->n || mi.ncols != P->n || mi.type != P->t)
        return hispi_fail(P->ctx, HISP_ERR_INVALID_ARGUMENT,
                          "%s: A (%lld x %lld, %s) is not of the preconditioner's size and type "
                          "(%lld rows, %s)",
                          what, (long long)mi.nrows, (long long)mi.ncols, hisp_type_name(mi.type),
                          (long long)P->n, hisp_type_name(P->t));
    return HISP_SUCCESS;
}

static hisp_status update(hisp_preconditioner P, hisp_matrix A)
{
    HISPI_TRY(fits(P, A, "hisp_preconditioner_update"));
    double t0 = hispi_now_ms();
    P->broken = true;
    HISPI_TRY(setup(P, A));
    P->A = A, P->broken = false;
    P->setup_ms = hispi_now_ms() - t0;
    return HISP_SUCCESS;
}

hisp_status hisp_preconditioner_update(hisp_preconditioner P, hisp_matrix A)
{
    if (!precond_ok(P)) return HISP_ERR_INVALID_HANDLE;
    if (!hispi_mat_ok(A) || A->ctx != P->ctx)
        return hispi_fail(P->ctx, HISP_ERR_INVALID_HANDLE,
                          "hisp_preconditioner_update: A is invalid or of another context");
    HISPI_CLAIMED(P->ctx, update(P, A));
}

void hisp_preconditioner_destroy(hisp_preconditioner *P)
{
    if (!P || !hispi_handle_known(*P, HISPI_H_PRECOND)) return;
    hisp_preconditioner p = *P;
    hispi_amg_cycle_destroy(&p->amg); /* also after its context: host memory, orphans */
    hispi_ilu_destroy(&p->ilu);
    hispi_chebpc_destroy(&p->cheb);
    p->magic = 0;
    hispi_handle_free(p);
    *P = NULL;
}

hisp_status hispi_preconditioner_lend(hisp_preconditioner P, hisp_context ctx, hisp_matrix A,
                                      hispi_ks_lent *lent)
{
    lent->amg = NULL, lent->ilu = NULL, lent->cheb = NULL;
    if (!precond_ok(P) || P->ctx != ctx)
        return hispi_fail(ctx, HISP_ERR_INVALID_HANDLE,
                          "solve: the solver's preconditioner object is destroyed or of another "
                          "context");
    if (P->broken)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "solve: the preconditioner's last update failed (update it again)");
    if (!hispi_handle_live(P->A, HISPI_H_MATRIX))
        return hispi_fail(ctx, HISP_ERR_INVALID_HANDLE,
                          "solve: the matrix the preconditioner was set up from is destroyed");
    HISPI_TRY(fits(P, A, "solve"));
    lent->amg = P->amg, lent->ilu = P->ilu, lent->cheb = P->cheb;
    return HISP_SUCCESS;
}
