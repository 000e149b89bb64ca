/* The SpGEMM plan (hisp_spgemm_plan_*): C's structure and the operands'
 * patterns kept from the first product, so that new values of A and B on
 * the same patterns recompute only C's values (over C's known columns: no
 * marker, no hash, no sort, no transpose: a transposed operand is read
 * through the permutation its counting sort left).
 *
 * Where the context's backend has run-time kernels the re-computation runs
 * on its device (spgemm_dev.c): the plan's device state (the patterns and
 * C's structure in device buffers) is made at the first execution on that
 * backend and kept until the plan is destroyed or the backend goes (a
 * devobj of the context: a backend switch or the context's end frees it);
 * each execution uploads only the operands' values; a real C then stays
 * on the device (its own buffers, values copied there from the plan's at
 * each execution; read back when a host reader needs it), a complex C's
 * values are downloaded.
 * Elsewhere the host's numeric phase (spgemm_ref.c). Both give the fresh
 * product's bits. */
#include "spgemm.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define MAGIC_SPGEMM 0x68536d6du /* "hSmm" */

/* An operand's pattern as the plan saw it: the source's row pointers
 * (sptr) and op(X)'s CSR pattern (optr, oidx; perm into the source where
 * op(X) is the source's transpose, else NULL and optr is sptr). */
typedef struct {
    bool cols_major;
    int64_t rows, cols, nnz; /* the source's */
    int64_t *sptr, *optr, *perm;
    int32_t *oidx;
} plan_operand;

struct hisp_spgemm_plan_s {
    uint32_t magic;
    hispi_devobj link; /* in ctx's objects while the plan lives */
    hisp_context ctx;
    hisp_op op_a, op_b;
    hisp_type type;
    plan_operand a, b;
    int64_t m, n, nnz; /* C's sizes */
    int64_t *rowptr;   /* C's structure */
    int32_t *colind;
    hispi_spgemm_dplan *dev; /* the device state on ctx's backend, or NULL */
    /* C as a GPU's execution left it on the device: the handle and its
     * buffer of values (hispi_spgemm_dev_numeric), or NULL */
    hisp_matrix out;
    const void *out_val;
};

static void operand_free(plan_operand *o)
{
    if (o->optr != o->sptr) free(o->optr);
    free(o->sptr);
    free(o->perm);
    free(o->oidx);
    memset(o, 0, sizeof *o);
}

static hisp_status dup_array(hisp_context ctx, const void *src, size_t n, size_t size, void **out)
{
    HISPI_TRY(hispi_alloc(ctx, n, size, out));
    if (n) memcpy(*out, src, n * size);
    return HISP_SUCCESS;
}

/* Keeps s's pattern in o: the transpose s made is taken over, the rest
 * copied. */
static hisp_status operand_keep(hisp_context ctx, hispi_spgemm_src *s, plan_operand *o)
{
    o->cols_major = s->cols_major;
    o->rows = s->rows, o->cols = s->cols, o->nnz = s->nnz;
    HISPI_TRY(dup_array(ctx, s->ptr, (size_t)s->rows + 1, sizeof *o->sptr, (void **)&o->sptr));
    if (s->v.perm) {
        o->optr = s->tptr, o->oidx = s->tidx, o->perm = s->perm;
        s->tptr = s->perm = NULL, s->tidx = NULL;
        return HISP_SUCCESS;
    }
    o->optr = o->sptr;
    return dup_array(ctx, s->idx, (size_t)s->nnz, sizeof *o->oidx, (void **)&o->oidx);
}

/* Is s's pattern the one o kept? If so, *v is op(X) over o's pattern and
 * s's values. */
static hisp_status operand_check(hisp_context ctx, const char *name, const plan_operand *o,
                                 const hispi_spgemm_src *s, hisp_type t, hisp_op op,
                                 hispi_spgemm_operand *v)
{
    static const char what[] = "hisp_spgemm_plan_execute";
    if (s->cols_major != o->cols_major)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "%s: %s was %s when the plan was made and is %s now", what, name,
                          o->cols_major ? "CSC" : "not CSC", s->cols_major ? "CSC" : "not CSC");
    if (s->rows != o->rows || s->cols != o->cols || s->nnz != o->nnz)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "%s: %s's pattern changed: %lld x %lld with %lld entries, the plan's "
                          "%lld x %lld with %lld",
                          what, name, (long long)s->rows, (long long)s->cols, (long long)s->nnz,
                          (long long)o->rows, (long long)o->cols, (long long)o->nnz);
    if (memcmp(s->ptr, o->sptr, ((size_t)o->rows + 1) * sizeof *o->sptr))
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "%s: %s's pattern changed: its %s pointers differ from the plan's", what,
                          name, o->cols_major ? "column" : "row");
    bool same = true;
    if (!o->perm) {
        same = !o->nnz || !memcmp(s->idx, o->oidx, (size_t)o->nnz * sizeof *o->oidx);
    } else { /* entry k of op(X) is entry perm[k] of the source, in row oidx[k] there */
        for (int64_t r = 0; r < o->cols && same; r++)
            for (int64_t k = o->optr[r]; k < o->optr[r + 1]; k++)
                if (s->idx[o->perm[k]] != r) {
                    same = false;
                    break;
                }
    }
    if (!same)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "%s: %s's pattern changed: its %s indices differ from the plan's", what,
                          name, o->cols_major ? "row" : "column");
    bool tr = o->perm != NULL;
    v->nrows = tr ? o->cols : o->rows;
    v->ncols = tr ? o->rows : o->cols;
    v->nnz = o->nnz;
    v->rowptr = o->optr;
    v->colind = o->oidx;
    v->val = s->val;
    v->perm = o->perm;
    v->conj = op == HISP_OP_H && (t == HISP_C32 || t == HISP_C64);
    return HISP_SUCCESS;
}

/* op(X) read in place on the device (X in hisp's layout there only, op N,
 * the plan's operand not a transpose): *v over the plan's pattern, with
 * X's device arrays; the device compares X's pattern with the plan's copy
 * (hispi_spgemm_dev_numeric). False: the host reads X. */
static bool device_view(const plan_operand *o, hisp_matrix X, hisp_op op, hispi_spgemm_operand *v)
{
    if (!hispi_spgemm_dev_resident(X, op) || o->perm || o->cols_major) return false;
    memset(v, 0, sizeof *v);
    v->nrows = o->rows, v->ncols = o->cols, v->nnz = o->nnz;
    v->rowptr = o->optr, v->colind = o->oidx;
    v->dev[0] = X->ext.rowptr, v->dev[1] = X->ext.colind, v->dev[2] = X->ext.val;
    return true;
}

/* X's sizes against the plan's operand (a device operand's pattern is
 * compared on the device). */
static hisp_status same_sizes(hisp_context ctx, const char *name, const plan_operand *o,
                              hisp_matrix X)
{
    const hispi_sparse *h = &X->host;
    if (h->nrows == o->rows && h->ncols == o->cols && h->nnz == o->nnz) return HISP_SUCCESS;
    return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                      "hisp_spgemm_plan_execute: %s's pattern changed: %lld x %lld with %lld "
                      "entries, the plan's %lld x %lld with %lld",
                      name, (long long)h->nrows, (long long)h->ncols, (long long)h->nnz,
                      (long long)o->rows, (long long)o->cols, (long long)o->nnz);
}

/* op(X)'s view for an execution: on the device in place (device_view), or
 * from X's source on the host, checked against the plan's pattern. */
static hisp_status exec_view(hisp_spgemm_plan p, const char *name, const plan_operand *o,
                             hisp_matrix X, hisp_op op, bool dev, hispi_spgemm_src *s,
                             hispi_spgemm_operand *v)
{
    memset(s, 0, sizeof *s);
    if (dev && device_view(o, X, op, v)) return same_sizes(p->ctx, name, o, X);
    HISPI_TRY(hispi_spgemm_source(X, s));
    return operand_check(p->ctx, name, o, s, p->type, op, v);
}

static void plan_free(hisp_spgemm_plan p)
{
    operand_free(&p->a);
    operand_free(&p->b);
    free(p->rowptr);
    free(p->colind);
    p->rowptr = NULL, p->colind = NULL;
}

/* The backend goes (a switch, the context's end): the device state with it. */
static void plan_drop(hispi_devobj *o)
{
    hisp_spgemm_plan p = (hisp_spgemm_plan)((char *)o - offsetof(struct hisp_spgemm_plan_s, link));
    hispi_spgemm_dev_plan_free(p->ctx, &p->dev);
}

void hisp_spgemm_plan_destroy(hisp_spgemm_plan *plan)
{
    if (!plan || !hispi_handle_known(*plan, HISPI_H_SPGEMM)) return;
    hisp_spgemm_plan p = *plan;
    if (p->link.next) { /* the context lives (its end detaches and frees the state) */
        hispi_spgemm_dev_plan_free(p->ctx, &p->dev);
        hispi_devobj_detach(&p->link);
    }
    plan_free(*plan);
    (*plan)->magic = 0;
    hispi_handle_free(*plan);
    *plan = NULL;
}

/* The product (as hisp_matrix_multiply), then the plan keeps the
 * operands' patterns and C's structure; *C is made last. */
static hisp_status plan_build(hisp_spgemm_plan p, hispi_spgemm_src *sa, hispi_spgemm_src *sb,
                              hisp_matrix *C)
{
    hisp_context ctx = p->ctx;
    hispi_spgemm_args g = {p->type, sa->v, sb->v};
    hispi_sparse out;
    HISPI_TRY(hispi_spgemm_product(ctx, &g, &out));
    p->m = out.nrows, p->n = out.ncols, p->nnz = out.nnz;
    hisp_status s = operand_keep(ctx, sa, &p->a);
    if (!s) s = operand_keep(ctx, sb, &p->b);
    if (!s)
        s = dup_array(ctx, out.rowptr, (size_t)p->m + 1, sizeof *p->rowptr, (void **)&p->rowptr);
    if (!s) s = dup_array(ctx, out.colind, (size_t)p->nnz, sizeof *p->colind, (void **)&p->colind);
    if (s) {
        hispi_sparse_free(&out);
        return s;
    }
    return hispi_matrix_wrap(ctx, &out, C); /* frees out on failure */
}

static hisp_status plan_create(hisp_op op_a, hisp_matrix A, hisp_op op_b, hisp_matrix B,
                               hisp_spgemm_plan *plan, hisp_matrix *C)
{
    hisp_context ctx = A->ctx;
    static const char what[] = "hisp_spgemm_plan_create";
    if (!plan || !C)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "%s: plan or C is NULL", what);
    *plan = NULL;
    *C = NULL;
    HISPI_TRY(hispi_spgemm_check(ctx, what, op_a, A, op_b, B));
    hisp_spgemm_plan p = NULL;
    HISPI_TRY(hispi_calloc(ctx, 1, sizeof *p, (void **)&p));
    hisp_status s = hispi_handle_add(p, HISPI_H_SPGEMM, ctx);
    if (s) {
        free(p);
        return hispi_fail(ctx, s, "%s: no room for the handle", what);
    }
    p->magic = MAGIC_SPGEMM;
    p->ctx = ctx;
    hispi_devobj_attach(ctx, &p->link, plan_drop);
    p->op_a = op_a, p->op_b = op_b;
    p->type = A->host.type;
    hispi_spgemm_src sa, sb;
    s = hispi_spgemm_open(A, op_a, &sa);
    if (!s) {
        s = hispi_spgemm_open(B, op_b, &sb);
        if (!s) s = plan_build(p, &sa, &sb, C);
        hispi_spgemm_close(&sb);
        hispi_spgemm_close(&sa);
    }
    if (s) {
        hisp_spgemm_plan_destroy(&p);
        return s;
    }
    *plan = p;
    return HISP_SUCCESS;
}

hisp_status hisp_spgemm_plan_create(hisp_op op_a, hisp_matrix A, hisp_op op_b, hisp_matrix B,
                                    hisp_spgemm_plan *plan, hisp_matrix *C)
{
    if (!hispi_mat_ok(A)) return HISP_ERR_INVALID_HANDLE;
    HISPI_CLAIMED(A->ctx, plan_create(op_a, A, op_b, B, plan, C));
}

/* C is the plan's output that its last execution left on the device. */
static bool plan_output_on_device(hisp_spgemm_plan p, hisp_matrix C)
{
    return C == p->out && C->wrapped && C->ext.val == p->out_val;
}

/* C: the plan's output matrix as the plan made it (a host CSR of its
 * type, sizes and structure, or that matrix left on the device by the
 * plan), not an operand. */
static hisp_status check_output(hisp_spgemm_plan p, hisp_matrix A, hisp_matrix B, hisp_matrix C)
{
    hisp_context ctx = p->ctx;
    static const char what[] = "hisp_spgemm_plan_execute";
    if (!hispi_mat_ok(C) || C->ctx != ctx)
        return hispi_fail(ctx, HISP_ERR_INVALID_HANDLE, "%s: C is invalid or of another context",
                          what);
    if (C == A || C == B)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "%s: C must not be an operand", what);
    /* the plan's C on the device as its last execution left it: its
     * structure is the plan's (no pattern check, no read back) */
    bool ours = plan_output_on_device(p, C);
    if (ours && p->dev) return HISP_SUCCESS;
    HISPI_TRY(hispi_matrix_need_host(C));
    const hispi_sparse *h = &C->host;
    if ((C->wrapped && !ours) || h->format != HISP_FORMAT_CSR || h->type != p->type ||
        h->nrows != p->m || h->ncols != p->n || h->nnz != p->nnz ||
        memcmp(h->rowptr, p->rowptr, ((size_t)p->m + 1) * sizeof *p->rowptr) ||
        (p->nnz && memcmp(h->colind, p->colind, (size_t)p->nnz * sizeof *p->colind)))
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "%s: C is not the plan's output (a %s CSR matrix of %lld x %lld with "
                          "the plan's %lld entries)",
                          what, hisp_type_name(p->type), (long long)p->m, (long long)p->n,
                          (long long)p->nnz);
    return HISP_SUCCESS;
}

static hisp_status plan_execute(hisp_spgemm_plan p, hisp_matrix A, hisp_matrix B, hisp_matrix C)
{
    hisp_context ctx = p->ctx;
    static const char what[] = "hisp_spgemm_plan_execute";
    if (!hispi_mat_ok(A) || A->ctx != ctx)
        return hispi_fail(ctx, HISP_ERR_INVALID_HANDLE, "%s: A is invalid or of another context",
                          what);
    HISPI_TRY(hispi_spgemm_check(ctx, what, p->op_a, A, p->op_b, B));
    if (A->host.type != p->type)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "%s: A is %s, the plan's type is %s",
                          what, hisp_type_name(A->host.type), hisp_type_name(p->type));
    HISPI_TRY(check_output(p, A, B, C));
    hispi_spgemm_stats_reset(ctx);
    bool dev = hispi_spgemm_dev_usable(ctx);
    hispi_spgemm_src sa, sb;
    hispi_spgemm_args g = {p->type, {0}, {0}};
    hisp_status s = exec_view(p, "A", &p->a, A, p->op_a, dev, &sa, &g.a);
    memset(&sb, 0, sizeof sb);
    if (!s) s = exec_view(p, "B", &p->b, B, p->op_b, dev, &sb, &g.b);
    if (!s && dev) {
        hispi_spgemm_out c = {p->rowptr, p->colind, NULL};
        if (!p->dev) s = hispi_spgemm_dev_plan(ctx, &g, &c, &p->dev);
        const void *kept = plan_output_on_device(p, C) ? p->out_val : NULL;
        if (!s) s = hispi_spgemm_dev_numeric(ctx, p->dev, &g, C, &kept);
        if (!s) p->out = kept ? C : NULL, p->out_val = kept;
        /* a failed pass leaves no state behind: the next execution makes
         * it anew (an operand's changed pattern leaves it as it was) */
        if (s && s != HISP_ERR_INVALID_ARGUMENT) hispi_spgemm_dev_plan_free(ctx, &p->dev);
    } else if (!s) {
        /* a C a device execution left there: back to the host first */
        s = hispi_matrix_need_host(C);
        if (!s) hispi_matrix_unwrap(C);
        hispi_spgemm_out o = {C->host.rowptr, C->host.colind, C->host.val};
        if (!s) s = hispi_spgemm_numeric(ctx, &g, &o);
    }
    if (!s && !plan_output_on_device(p, C)) hispi_matrix_drop_device(C); /* host values changed */
    hispi_spgemm_close(&sa);
    hispi_spgemm_close(&sb);
    return s;
}

hisp_status hisp_spgemm_plan_execute(hisp_spgemm_plan plan, hisp_matrix A, hisp_matrix B,
                                     hisp_matrix C)
{
    if (!hispi_handle_live(plan, HISPI_H_SPGEMM)) return HISP_ERR_INVALID_HANDLE;
    HISPI_CLAIMED(plan->ctx, plan_execute(plan, A, B, C));
}
