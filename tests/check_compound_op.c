/* op = T and op = H (conjugate transpose) of hisp_spmv for compound entries
 * (complex, quaternion, 3x3 blocks): the plain C reference and every target
 * against an oracle computed here in double from the real expansion, and
 * real entries, where H is T.
 *
 * The oracle: the real expansion of conj(A) (complex and quaternion
 * components negated but the first; a block is its own conjugate) is the
 * transpose of the expansion of A^H ... so A^H x = E(A)^T x and
 * A^T x = E(conj(A))^T x, both a scatter over the expansion's rows. */
#include "testutil.h"
#include "compound/hispi_compound.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const hisp_type ctypes[] = {HISP_C32, HISP_C64,      HISP_Q32,
                                   HISP_Q64, HISP_B3X3_F32, HISP_B3X3_F64};
#define NCTYPES 6

/* m x n, about 3 entries per row, some rows empty, fresh values. */
static hisp_matrix make_matrix(hisp_context ctx, hisp_type t, int64_t m, int64_t n, uint64_t *seed)
{
    int64_t cap = 4 * m + 1, nnz = 0;
    int comps = hisp_type_components(t);
    size_t ss = hisp_type_size(t) / (size_t)comps;
    int32_t *r = malloc((size_t)cap * 4), *c = malloc((size_t)cap * 4);
    void *v = malloc((size_t)cap * hisp_type_size(t));
    ck_assert(r && c && v);
    for (int64_t i = 0; i < m; i++) {
        int64_t len = i % 5 == 3 ? 0 : (int64_t)(test_rand(seed) % 5);
        for (int64_t k = 0; k < len; k++, nnz++) {
            r[nnz] = (int32_t)i;
            c[nnz] = (int32_t)(test_rand(seed) % (uint64_t)n);
            for (int q = 0; q < comps; q++)
                test_put_scalar(ss, v, nnz * comps + q, test_uniform(seed));
        }
    }
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_create_coo(ctx, t, m, n, nnz, r, c, v, &A));
    CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_CSR));
    free(r);
    free(c);
    free(v);
    return A;
}

typedef struct {
    int64_t sx, sy; /* scalars of x (rows of A) and y (cols of A) */
    hisp_type vt;
    size_t ss;
    int64_t nx, ny; /* vector entries */
    void *x, *y0, *y;
    double alpha, beta;
} operands;

static void make_operands(hisp_matrix A, int beta_zero, uint64_t *seed, operands *o)
{
    hisp_matrix_info mi;
    ck_assert_int_eq(hisp_matrix_get_info(A, &mi), 0);
    int per = 1;
    ck_assert_int_eq(hisp_compound_vector_type(mi.type, &o->vt, &per), 0);
    int comps = hisp_type_components(o->vt);
    o->ss = hisp_type_size(o->vt) / (size_t)comps;
    o->nx = mi.nrows * per; /* op(A) is ncols x nrows */
    o->ny = mi.ncols * per;
    o->sx = o->nx * comps;
    o->sy = o->ny * comps;
    o->x = malloc((size_t)o->sx * o->ss + 8);
    o->y0 = malloc((size_t)o->sy * o->ss + 8);
    o->y = malloc((size_t)o->sy * o->ss + 8);
    for (int64_t i = 0; i < o->sx; i++)
        test_put_scalar(o->ss, o->x, i, test_uniform(seed));
    for (int64_t i = 0; i < o->sy; i++)
        test_put_scalar(o->ss, o->y0, i, beta_zero ? NAN : test_uniform(seed));
    o->alpha = 0.5 + (test_uniform(seed) + 1) / 2;
    o->beta = beta_zero ? 0 : test_uniform(seed);
    if (o->ss == 4) o->alpha = (float)o->alpha, o->beta = (float)o->beta;
}

static void free_operands(operands *o)
{
    free(o->x);
    free(o->y0);
    free(o->y);
}

static double tolerance(size_t ss)
{
    return ss == 4 ? 2e-5 : 1e-12;
}

/* hispi_compound_ref_spmv_op (the plain C reference of the reference
 * backend's CSR slot) against the oracle; and op(A) built explicitly
 * (hispi_compound_op_csr) times x with the op = N reference. */
START_TEST(test_reference_op)
{
    uint64_t seed = test_seed() + 1201;
    hisp_context ctx = test_default_context();
    for (int ti = 0; ti < NCTYPES; ti++)
        for (int op = HISP_OP_T; op <= HISP_OP_H; op++) {
            hisp_type t = ctypes[ti];
            hisp_matrix A = make_matrix(ctx, t, 31, 23, &seed);
            operands o;
            make_operands(A, op == HISP_OP_H, &seed, &o);
            memcpy(o.y, o.y0, (size_t)o.sy * o.ss);
            const hispi_sparse *s = &A->host;
            CK_OK(ctx, hispi_compound_ref_spmv_op(ctx, s, (hisp_op)op, o.alpha, o.x, o.beta, o.y));
            double *ref = test_compound_oracle(A, (hisp_op)op, o.x, o.y0, o.alpha, o.beta);
            double err = test_compound_error(o.ss, o.y, ref, o.sy);
            ck_assert_msg(err < tolerance(o.ss), "reference %s op %s: error %.3e",
                          hisp_type_name(t), op == HISP_OP_T ? "T" : "H", err);
            hispi_sparse At;
            CK_OK(ctx, hispi_compound_op_csr(ctx, s, (hisp_op)op, &At));
            ck_assert_int_eq(At.nrows, s->ncols);
            ck_assert_int_eq(At.ncols, s->nrows);
            memcpy(o.y, o.y0, (size_t)o.sy * o.ss);
            CK_OK(ctx, hispi_compound_ref_spmv(ctx, &At, o.alpha, o.x, o.beta, o.y));
            err = test_compound_error(o.ss, o.y, ref, o.sy);
            ck_assert_msg(err < tolerance(o.ss), "explicit op(A) %s op %s: error %.3e",
                          hisp_type_name(t), op == HISP_OP_T ? "T" : "H", err);
            hispi_sparse_free(&At);
            free(ref);
            free_operands(&o);
            hisp_matrix_destroy(&A);
        }
    hisp_context_destroy(&ctx);
}
END_TEST

/* hisp_spmv and hisp_spmv_timed with op T and H on every target, twice on
 * the same matrix (the second reuses the kept op(A)), then after A changed
 * format and back (op(A) rebuilt). */
START_TEST(test_targets_op)
{
    hisp_context ctx = test_context(_i);
    hisp_device_info info;
    CK_OK(ctx, hisp_context_get_device(ctx, &info));
    uint64_t seed = test_seed() + 1300 + (uint64_t)_i;
    for (int ti = 0; ti < NCTYPES; ti++) {
        hisp_type t = ctypes[ti];
        if (hisp_type_size(t) / (size_t)hisp_type_components(t) == 8 && !info.fp64) {
            test_skip("compound op T/H %s on %s: no fp64", hisp_type_name(t), test_label(_i));
            continue;
        }
        hisp_matrix A = make_matrix(ctx, t, 53, 41, &seed);
        for (int round = 0; round < 3; round++)
            for (int op = HISP_OP_T; op <= HISP_OP_H; op++) {
                if (round == 2 && op == HISP_OP_T) { /* the kept op(A) must go */
                    CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_COO));
                    CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_CSR));
                }
                operands o;
                make_operands(A, (round + op) % 2, &seed, &o);
                hisp_vector x = NULL, y = NULL;
                CK_OK(ctx, hisp_vector_create(ctx, o.vt, o.nx, &x));
                CK_OK(ctx, hisp_vector_create(ctx, o.vt, o.ny, &y));
                CK_OK(ctx, hisp_vector_write(x, o.x));
                CK_OK(ctx, hisp_vector_write(y, o.y0));
                float af = (float)o.alpha, bf = (float)o.beta;
                const void *pa = o.ss == 4 ? (const void *)&af : (const void *)&o.alpha;
                const void *pb = o.ss == 4 ? (const void *)&bf : (const void *)&o.beta;
                if (round == 1) {
                    double ms[2];
                    CK_OK(ctx, hisp_spmv_timed(ctx, (hisp_op)op, pa, A, x, pb, y, 1, 2, ms));
                } else {
                    CK_OK(ctx, hisp_spmv(ctx, (hisp_op)op, pa, A, x, pb, y));
                }
                CK_OK(ctx, hisp_vector_read(y, o.y));
                double *ref = test_compound_oracle(A, (hisp_op)op, o.x, o.y0, o.alpha, o.beta);
                double err = test_compound_error(o.ss, o.y, ref, o.sy);
                ck_assert_msg(err < tolerance(o.ss), "%s %s op %s round %d: error %.3e",
                              test_label(_i), hisp_type_name(t), op == HISP_OP_T ? "T" : "H", round,
                              err);
                /* x of the wrong length (ncols of A, as op = N takes) is refused */
                if (round == 0 && o.nx != o.ny) {
                    hisp_vector bad = NULL;
                    CK_OK(ctx, hisp_vector_create(ctx, o.vt, o.ny, &bad));
                    ck_assert_int_eq(hisp_spmv(ctx, (hisp_op)op, pa, A, bad, pb, y),
                                     HISP_ERR_INVALID_ARGUMENT);
                    hisp_vector_destroy(&bad);
                }
                free(ref);
                free_operands(&o);
                hisp_vector_destroy(&x);
                hisp_vector_destroy(&y);
            }
        hisp_matrix_destroy(&A);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* Real entries: op = H is op = T, on every target. */
START_TEST(test_real_h)
{
    hisp_context ctx = test_context(_i);
    uint64_t seed = test_seed() + 1400 + (uint64_t)_i;
    hisp_matrix A = make_matrix(ctx, HISP_F64, 37, 29, &seed);
    double xh[37], yt[29], yh[29], one = 1, zero = 0;
    for (int i = 0; i < 37; i++)
        xh[i] = test_uniform(&seed);
    hisp_vector x = NULL, y = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, 37, &x));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, 29, &y));
    CK_OK(ctx, hisp_vector_write(x, xh));
    CK_OK(ctx, hisp_spmv(ctx, HISP_OP_T, &one, A, x, &zero, y));
    CK_OK(ctx, hisp_vector_read(y, yt));
    CK_OK(ctx, hisp_spmv(ctx, HISP_OP_H, &one, A, x, &zero, y));
    CK_OK(ctx, hisp_vector_read(y, yh));
    double *ref = test_compound_oracle(A, HISP_OP_H, xh, yh, 1, 0);
    ck_assert(test_compound_error(8, yh, ref, 29) < 1e-13);
    ck_assert_mem_eq(yt, yh, sizeof yt);
    free(ref);
    hisp_vector_destroy(&x);
    hisp_vector_destroy(&y);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

Suite *suite_compound_op(void)
{
    Suite *s = suite_create("compound_op");
    TCase *tc = tcase_create("host");
    tcase_add_test(tc, test_reference_op);
    suite_add_tcase(s, tc);
    int n = test_targets(NULL);
    TCase *dev = test_tcase(s, "targets", 600);
    tcase_add_loop_test(dev, test_targets_op, 0, n);
    tcase_add_loop_test(dev, test_real_h, 0, n);
    return s;
}
