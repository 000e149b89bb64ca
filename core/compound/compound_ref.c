/* Compound entries: entry arithmetic, the plain C reference SpMV, names,
 * the real expansion.
 *
 * Products (entry on the left, y_i = sum_j A_ij x_j):
 *   complex     (a0 + a1 i)(b0 + b1 i) = (a0b0 - a1b1) + (a0b1 + a1b0) i
 *   quaternion  Hamilton, a = w + x i + y j + z k, i^2 = j^2 = k^2 = ijk = -1:
 *               w = a0b0 - a1b1 - a2b2 - a3b3
 *               x = a0b1 + a1b0 + a2b3 - a3b2
 *               y = a0b2 - a1b3 + a2b0 + a3b1
 *               z = a0b3 + a1b2 - a2b1 + a3b0
 *   3x3 block   row-major a, y_r = sum_c a[3r+c] b_c
 * The kernels (kernels/compound_spmv.cl) use the same formulas in the
 * same order. */
#include "hispi_compound.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

bool hispi_ctype_of(hisp_type t, hispi_ctype *c)
{
    if (!hispi_type_valid(t)) return false;
    c->ss = hispi_type_scalar_size(t);
    switch (t) {
    case HISP_F32:
    case HISP_F64:
        c->kind = HISPI_KIND_REAL, c->ec = 1, c->vc = 1;
        break;
    case HISP_C32:
    case HISP_C64:
        c->kind = HISPI_KIND_COMPLEX, c->ec = 2, c->vc = 2;
        break;
    case HISP_Q32:
    case HISP_Q64:
        c->kind = HISPI_KIND_QUAT, c->ec = 4, c->vc = 4;
        break;
    default:
        c->kind = HISPI_KIND_BLOCK3, c->ec = 9, c->vc = 3;
        break;
    }
    return true;
}

hisp_status hisp_compound_vector_type(hisp_type t, hisp_type *vt, int *per)
{
    if (!hispi_type_valid(t) || !vt || !per) return HISP_ERR_INVALID_ARGUMENT;
    *per = 1;
    *vt = t;
    if (t == HISP_B3X3_F32) *vt = HISP_F32, *per = 3;
    if (t == HISP_B3X3_F64) *vt = HISP_F64, *per = 3;
    return HISP_SUCCESS;
}

/* acc[0..vc) += a * b for one entry; T the scalar type. */
#define MULADD(T)                                                                                  \
    static inline void muladd_##T(int kind, const T *a, const T *b, T *acc)                        \
    {                                                                                              \
        switch (kind) {                                                                            \
        case HISPI_KIND_REAL:                                                                      \
            acc[0] += a[0] * b[0];                                                                 \
            break;                                                                                 \
        case HISPI_KIND_COMPLEX:                                                                   \
            acc[0] += a[0] * b[0] - a[1] * b[1];                                                   \
            acc[1] += a[0] * b[1] + a[1] * b[0];                                                   \
            break;                                                                                 \
        case HISPI_KIND_QUAT:                                                                      \
            acc[0] += a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];                       \
            acc[1] += a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];                       \
            acc[2] += a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];                       \
            acc[3] += a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];                       \
            break;                                                                                 \
        default:                                                                                   \
            for (int r = 0; r < 3; r++)                                                            \
                acc[r] += a[3 * r] * b[0] + a[3 * r + 1] * b[1] + a[3 * r + 2] * b[2];             \
            break;                                                                                 \
        }                                                                                          \
    }
MULADD(float)
MULADD(double)

#define REF(T)                                                                                     \
    static void ref_##T(const hispi_sparse *A, const hispi_ctype *c, T alpha, const T *x, T beta,  \
                        T *y)                                                                      \
    {                                                                                              \
        const T *v = (const T *)A->val;                                                            \
        for (int64_t i = 0; i < A->nrows; i++) {                                                   \
            T acc[4] = {0, 0, 0, 0};                                                               \
            for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)                              \
                muladd_##T(c->kind, v + k * c->ec, x + (int64_t)A->colind[k] * c->vc, acc);        \
            for (int q = 0; q < c->vc; q++) {                                                      \
                T *yi = y + i * c->vc + q;                                                         \
                *yi = beta == 0 ? alpha * acc[q] : alpha * acc[q] + beta * *yi;                    \
            }                                                                                      \
        }                                                                                          \
    }
REF(float)
REF(double)

hisp_status hispi_compound_ref_spmv(hisp_context ctx, const hispi_sparse *A, double alpha,
                                    const void *x, double beta, void *y)
{
    hispi_ctype c;
    if (A->format != HISP_FORMAT_CSR || !hispi_ctype_of(A->type, &c))
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "compound reference SpMV needs CSR");
    if (c.ss == 4)
        ref_float(A, &c, (float)alpha, x, (float)beta, y);
    else
        ref_double(A, &c, alpha, x, beta, y);
    return HISP_SUCCESS;
}

/* ---- op = T and op = H ------------------------------------------------------
 * (A^T)_ji = A_ij and (A^H)_ji = conj(A_ij): complex and quaternion entries
 * are kept (T) or conjugated (H); a 3x3 block is transposed either way (its
 * entries are real). */

#define ENTRY_OP(T)                                                                                \
    static inline void entry_op_##T(int kind, hisp_op op, T *a)                                    \
    {                                                                                              \
        T q;                                                                                       \
        switch (kind) {                                                                            \
        case HISPI_KIND_COMPLEX:                                                                   \
            if (op == HISP_OP_H) a[1] = -a[1];                                                     \
            break;                                                                                 \
        case HISPI_KIND_QUAT:                                                                      \
            if (op == HISP_OP_H) a[1] = -a[1], a[2] = -a[2], a[3] = -a[3];                         \
            break;                                                                                 \
        case HISPI_KIND_BLOCK3:                                                                    \
            q = a[1], a[1] = a[3], a[3] = q;                                                       \
            q = a[2], a[2] = a[6], a[6] = q;                                                       \
            q = a[5], a[5] = a[7], a[7] = q;                                                       \
            break;                                                                                 \
        default:                                                                                   \
            break;                                                                                 \
        }                                                                                          \
    }
ENTRY_OP(float)
ENTRY_OP(double)

/* y_j = alpha * sum_i op(A_ij) x_i + beta*y_j: a scatter over A's rows into
 * acc (ncols * vc scalars, zeroed), no transposed copy. */
#define REF_OP(T)                                                                                  \
    static void refop_##T(const hispi_sparse *A, const hispi_ctype *c, hisp_op op, T alpha,        \
                          const T *x, T beta, T *y, T *acc)                                        \
    {                                                                                              \
        const T *v = (const T *)A->val;                                                            \
        for (int64_t i = 0; i < A->nrows; i++)                                                     \
            for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {                            \
                T a[9];                                                                            \
                memcpy(a, v + k * c->ec, (size_t)c->ec * sizeof(T));                               \
                entry_op_##T(c->kind, op, a);                                                      \
                muladd_##T(c->kind, a, x + i * c->vc, acc + (int64_t)A->colind[k] * c->vc);        \
            }                                                                                      \
        for (int64_t j = 0; j < A->ncols * c->vc; j++)                                             \
            y[j] = beta == 0 ? alpha * acc[j] : alpha * acc[j] + beta * y[j];                      \
    }
REF_OP(float)
REF_OP(double)

hisp_status hispi_compound_ref_spmv_op(hisp_context ctx, const hispi_sparse *A, hisp_op op,
                                       double alpha, const void *x, double beta, void *y)
{
    hispi_ctype c;
    if (A->format != HISP_FORMAT_CSR || !hispi_ctype_of(A->type, &c))
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "compound reference SpMV needs CSR");
    if (op == HISP_OP_N) return hispi_compound_ref_spmv(ctx, A, alpha, x, beta, y);
    void *acc = NULL;
    HISPI_TRY(hispi_calloc(ctx, (size_t)(A->ncols * c.vc) + 1, c.ss, &acc));
    if (c.ss == 4)
        refop_float(A, &c, op, (float)alpha, x, (float)beta, y, acc);
    else
        refop_double(A, &c, op, alpha, x, beta, y, acc);
    free(acc);
    return HISP_SUCCESS;
}

hisp_status hispi_compound_op_csr(hisp_context ctx, const hispi_sparse *csr, hisp_op op,
                                  hispi_sparse *out)
{
    hispi_ctype c;
    memset(out, 0, sizeof *out);
    if (csr->format != HISP_FORMAT_CSR || !hispi_ctype_of(csr->type, &c))
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "op(A) needs a CSR matrix");
    hispi_sparse t;
    HISPI_TRY(hispi_sparse_convert(ctx, csr, HISP_FORMAT_CSC, &t));
    /* the CSC arrays of A are the CSR arrays of A^T */
    *out = t;
    out->format = HISP_FORMAT_CSR;
    out->nrows = t.ncols;
    out->ncols = t.nrows;
    out->rowptr = t.colptr;
    out->colind = t.rowind;
    out->colptr = NULL;
    out->rowind = NULL;
    out->sorted = true;
    for (int64_t k = 0; k < out->nnz; k++) {
        if (c.ss == 4)
            entry_op_float(c.kind, op, (float *)out->val + k * c.ec);
        else
            entry_op_double(c.kind, op, (double *)out->val + k * c.ec);
    }
    return HISP_SUCCESS;
}

/* ---- the host emulation of the layouts ---------------------------------- */

#define LAYOUT_HOST(T)                                                                             \
    static void lay_##T(const hispi_clayout *L, int vs, T alpha, const T *x, T beta, T *y)         \
    {                                                                                              \
        const hispi_ctype *c = &L->ct;                                                             \
        const T *v = (const T *)L->val;                                                            \
        int soa = L->layout.inner == HISP_SOA;                                                     \
        int S = L->layout.outer == HISP_OUTER_SELL16 ? 16 : 32;                                    \
        for (int64_t i = 0; i < L->nrows; i++) {                                                   \
            T acc[4] = {0, 0, 0, 0}, a[9], b[4];                                                   \
            int64_t n = 0, base = 0, step = 1;                                                     \
            switch (L->layout.outer) {                                                             \
            case HISP_OUTER_CSR:                                                                   \
                base = L->ptr[i], n = L->ptr[i + 1] - base;                                        \
                break;                                                                             \
            case HISP_OUTER_ELL:                                                                   \
                base = i, n = L->len[i], step = L->ld;                                             \
                break;                                                                             \
            default:                                                                               \
                base = L->ptr[i / S] + i % S, n = L->len[i], step = S;                             \
                break;                                                                             \
            }                                                                                      \
            for (int64_t t = 0; t < n; t++) {                                                      \
                int64_t idx = base + t * step;                                                     \
                for (int q = 0; q < c->ec; q++)                                                    \
                    a[q] = soa ? v[q * L->stored + idx] : v[idx * c->ec + q];                      \
                int64_t j = L->col[idx];                                                           \
                for (int q = 0; q < c->vc; q++)                                                    \
                    b[q] = vs ? x[q * L->ncols + j] : x[j * c->vc + q];                            \
                muladd_##T(c->kind, a, b, acc);                                                    \
            }                                                                                      \
            for (int q = 0; q < c->vc; q++) {                                                      \
                T *yi = vs ? y + q * L->nrows + i : y + i * c->vc + q;                             \
                *yi = beta == 0 ? alpha * acc[q] : alpha * acc[q] + beta * *yi;                    \
            }                                                                                      \
        }                                                                                          \
    }
LAYOUT_HOST(float)
LAYOUT_HOST(double)

void hispi_clayout_spmv_host(const hispi_clayout *L, int vec_soa, double alpha, const void *x,
                             double beta, void *y)
{
    if (L->ct.ss == 4)
        lay_float(L, vec_soa, (float)alpha, x, (float)beta, y);
    else
        lay_double(L, vec_soa, alpha, x, beta, y);
}

/* ---- names -------------------------------------------------------------- */

static const char *const outer_names[HISP_OUTER_COUNT] = {"CSR", "ELL", "SELL16", "SELL32"};

hisp_status hisp_layout_name(const hisp_layout *l, char *buf, size_t size)
{
    if (!l || !buf || (int)l->outer < 0 || l->outer >= HISP_OUTER_COUNT)
        return HISP_ERR_INVALID_ARGUMENT;
    int n = snprintf(buf, size, "%s-%s-%s", outer_names[l->outer],
                     l->inner == HISP_SOA ? "SoA" : "AoS", l->vec == HISP_SOA ? "SoA" : "AoS");
    return n > 0 && (size_t)n < size ? HISP_SUCCESS : HISP_ERR_INVALID_ARGUMENT;
}

static int sub_from(const char *s, size_t n)
{
    if (n == 3 && strncasecmp(s, "aos", 3) == 0) return HISP_AOS;
    if (n == 3 && strncasecmp(s, "soa", 3) == 0) return HISP_SOA;
    return -1;
}

hisp_status hisp_layout_from_name(const char *s, hisp_layout *l)
{
    if (!s || !l) return HISP_ERR_INVALID_ARGUMENT;
    const char *d1 = strchr(s, '-');
    size_t n = d1 ? (size_t)(d1 - s) : strlen(s);
    int o = -1;
    for (int k = 0; k < HISP_OUTER_COUNT; k++)
        if (strlen(outer_names[k]) == n && strncasecmp(s, outer_names[k], n) == 0) o = k;
    if (o < 0 && n == 4 && strncasecmp(s, "SELL", 4) == 0) o = HISP_OUTER_SELL32;
    if (o < 0) return HISP_ERR_INVALID_ARGUMENT;
    hisp_layout r = {(hisp_outer_layout)o, HISP_AOS, HISP_AOS};
    if (d1) {
        const char *d2 = strchr(d1 + 1, '-');
        if (!d2) return HISP_ERR_INVALID_ARGUMENT;
        int in = sub_from(d1 + 1, (size_t)(d2 - d1 - 1)), ve = sub_from(d2 + 1, strlen(d2 + 1));
        if (in < 0 || ve < 0) return HISP_ERR_INVALID_ARGUMENT;
        r.inner = (hisp_sublayout)in;
        r.vec = (hisp_sublayout)ve;
    }
    *l = r;
    return HISP_SUCCESS;
}

hisp_status hisp_schedule_name(const hisp_schedule *s, char *buf, size_t size)
{
    if (!s || !buf) return HISP_ERR_INVALID_ARGUMENT;
    const char *kind = s->dynamic ? "dynamic" : "static";
    int n = s->nt || s->nb ? snprintf(buf, size, "%s:%dx%d", kind, s->nt, s->nb)
                           : snprintf(buf, size, "%s", kind); /* the device's default sizes */
    return n > 0 && (size_t)n < size ? HISP_SUCCESS : HISP_ERR_INVALID_ARGUMENT;
}

hisp_status hisp_schedule_from_name(const char *s, hisp_schedule *out)
{
    if (!s || !out) return HISP_ERR_INVALID_ARGUMENT;
    hisp_schedule r = {0, 0, 0};
    const char *colon = strchr(s, ':');
    size_t n = colon ? (size_t)(colon - s) : strlen(s);
    if (n == 6 && strncasecmp(s, "static", 6) == 0)
        r.dynamic = 0;
    else if (n == 7 && strncasecmp(s, "dynamic", 7) == 0)
        r.dynamic = 1;
    else
        return HISP_ERR_INVALID_ARGUMENT;
    if (colon) {
        char *e1 = NULL, *e2 = NULL;
        long nt = strtol(colon + 1, &e1, 10);
        if (e1 == colon + 1 || (*e1 != 'x' && *e1 != 'X')) return HISP_ERR_INVALID_ARGUMENT;
        long nb = strtol(e1 + 1, &e2, 10);
        if (e2 == e1 + 1 || *e2 || nt < 1 || nt > 4096 || nb < 1 || nb > 4096)
            return HISP_ERR_INVALID_ARGUMENT;
        r.nt = (int)nt;
        r.nb = (int)nb;
    }
    *out = r;
    return HISP_SUCCESS;
}

/* ---- the real expansion --------------------------------------------------- */

/* hisp_matrix_expand_real's rows, block rows in chunks on the host's
 * threads: block row i's scalars start at rowptr[i] bm^2, its row r at
 * r bm (rowptr[i + 1] - rowptr[i]) past that. */
typedef struct {
    const hispi_sparse *s;
    hispi_sparse *e;
    hispi_ctype c;
    int bm;
    hisp_type rt;
    atomic_llong next;
} expand_job;

enum { EXPAND_CHUNK = 4096 };

static void *expand_worker(void *arg)
{
    expand_job *j = arg;
    const hispi_sparse *s = j->s;
    hispi_sparse e = *j->e;
    hispi_ctype c = j->c;
    int bm = j->bm;
    hisp_type rt = j->rt;
    for (;;) {
        int64_t i0 = atomic_fetch_add(&j->next, EXPAND_CHUNK);
        if (i0 >= s->nrows) break;
        int64_t i1 = i0 + EXPAND_CHUNK < s->nrows ? i0 + EXPAND_CHUNK : s->nrows;
        for (int64_t i = i0; i < i1; i++)
            for (int r = 0; r < bm; r++) {
                int64_t out = s->rowptr[i] * bm * bm + r * bm * (s->rowptr[i + 1] - s->rowptr[i]);
                e.rowptr[i * bm + r] = out;
                for (int64_t k = s->rowptr[i]; k < s->rowptr[i + 1]; k++) {
                    double a[9];
                    for (int q = 0; q < c.ec; q++)
                        a[q] = c.ss == 4 ? (double)((const float *)s->val)[k * c.ec + q]
                                         : ((const double *)s->val)[k * c.ec + q];
                    for (int q = 0; q < bm; q++) {
                        double v;
                        if (c.kind == HISPI_KIND_REAL || c.kind == HISPI_KIND_BLOCK3) {
                            v = a[r * bm + q];
                        } else if (c.kind == HISPI_KIND_COMPLEX) {
                            static const int sg[2][2] = {{1, -1}, {1, 1}},
                                             ix[2][2] = {{0, 1}, {1, 0}};
                            v = sg[r][q] * a[ix[r][q]];
                        } else { /* left multiplication by a */
                            static const int ix[4][4] = {
                                {0, 1, 2, 3}, {1, 0, 3, 2}, {2, 3, 0, 1}, {3, 2, 1, 0}};
                            static const int sg[4][4] = {
                                {1, -1, -1, -1}, {1, 1, -1, 1}, {1, 1, 1, -1}, {1, -1, 1, 1}};
                            v = sg[r][q] * a[ix[r][q]];
                        }
                        e.colind[out] = (int32_t)(s->colind[k] * bm + q);
                        if (rt == HISP_F32)
                            ((float *)e.val)[out] = (float)v;
                        else
                            ((double *)e.val)[out] = v;
                        out++;
                    }
                }
            }
    }
    return NULL;
}

hisp_status hisp_matrix_expand_real(hisp_matrix A, hisp_matrix *B)
{
    if (!hispi_mat_ok(A)) return HISP_ERR_INVALID_HANDLE;
    HISPI_TRY(hispi_matrix_need_host(A));
    hisp_context ctx = A->ctx;
    if (!B) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "output handle is NULL");
    *B = NULL;
    if (!hispi_sparse_family(A->host.format))
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "expand: convert %s to CSR",
                          hisp_format_name(A->host.format));
    hispi_ctype c = {0, 1, 1, 4};
    hispi_ctype_of(A->host.type, &c);
    hispi_sparse tmp; /* a COO or CSC matrix stays as it is */
    const hispi_sparse *s = NULL;
    HISPI_TRY(hispi_matrix_csr(A, &tmp, &s));
    int bm = c.kind == HISPI_KIND_BLOCK3 ? 3 : c.vc; /* block size of the expansion */
    hisp_type rt = c.ss == 4 ? HISP_F32 : HISP_F64;
    int64_t nnz = s->nnz * bm * bm;
    hispi_sparse e;
    hisp_status st =
        s->nrows * bm > INT32_MAX || s->ncols * bm > INT32_MAX
            ? hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "expansion exceeds 2^31-1 rows")
            : hispi_sparse_alloc(ctx, &e, HISP_FORMAT_CSR, rt, s->nrows * bm, s->ncols * bm, nnz);
    if (st) {
        hispi_sparse_free(&tmp);
        return st;
    }
    expand_job j = {.s = s, .e = &e, .c = c, .bm = bm, .rt = rt};
    atomic_init(&j.next, 0);
    hispi_parallel(hispi_threads(ctx, (double)nnz), expand_worker, &j);
    e.rowptr[e.nrows] = nnz;
    hispi_sparse_free(&tmp);
    return hispi_matrix_wrap(ctx, &e, B);
}
