/* Handles (hisp.h "Handles"): a destroyed handle, or one whose owner (its
 * context, or an mvector's plan) was destroyed, is refused with
 * HISP_ERR_INVALID_HANDLE without reading freed memory (the sanitize build
 * checks that); double destroy and NULL are harmless; a destroyed address
 * is not handed to a new object while the stale handle is recent. */
#include "testutil.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A small random CSR matrix (n x n, the diagonal plus a few entries). */
static hisp_matrix make_matrix(hisp_context ctx, int n, uint64_t *st)
{
    int64_t *ptr = malloc((size_t)(n + 1) * sizeof *ptr);
    int32_t *col = malloc((size_t)n * 2 * sizeof *col);
    double *val = malloc((size_t)n * 2 * sizeof *val);
    ck_assert(ptr && col && val);
    int64_t k = 0;
    for (int i = 0; i < n; i++) {
        ptr[i] = k;
        int j = (int)((test_uniform(st) + 1) * 0.5 * n) % n;
        if (j < i) col[k] = j, val[k++] = test_uniform(st);
        col[k] = i, val[k++] = 4 + test_uniform(st);
        if (j > i) col[k] = j, val[k++] = test_uniform(st);
    }
    ptr[n] = k;
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_create_csr(ctx, HISP_F64, n, n, ptr, col, val, &A));
    free(ptr), free(col), free(val);
    return A;
}

static hisp_vector make_vector(hisp_context ctx, int n, uint64_t *st)
{
    hisp_vector v = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, n, &v));
    double *h = malloc((size_t)n * sizeof *h);
    ck_assert_ptr_nonnull(h);
    for (int i = 0; i < n; i++)
        h[i] = test_uniform(st);
    CK_OK(ctx, hisp_vector_write(v, h));
    free(h);
    return v;
}

static const hisp_device_ref ref_dev = {HISP_BACKEND_REFERENCE, 0};

/* A copy of every handle kind, destroyed through another copy: each call
 * on the stale copy is refused, and destroying it again does nothing. */
START_TEST(test_use_after_destroy)
{
    enum { N = 40 };
    uint64_t st = 11;
    hisp_context ctx = test_default_context();
    const double one = 1, two = 2;
    int64_t len = 0;
    hisp_matrix_info mi;

    hisp_vector v = make_vector(ctx, N, &st), x = make_vector(ctx, N, &st), sv = v;
    hisp_vector_destroy(&v);
    ck_assert_ptr_null(v);
    ck_assert_int_eq(hisp_vector_size(sv, &len), HISP_ERR_INVALID_HANDLE);
    ck_assert_int_eq(hisp_vector_axpby(hisp_scalar_host(&one), x, hisp_scalar_host(&two), sv),
                     HISP_ERR_INVALID_HANDLE);
    ck_assert_int_eq(hisp_vector_axpby(hisp_scalar_host(&one), sv, hisp_scalar_host(&two), x),
                     HISP_ERR_INVALID_HANDLE);
    hisp_vector_destroy(&sv); /* double destroy: nothing happens */

    hisp_matrix A = make_matrix(ctx, N, &st), sA = A;
    hisp_matrix_destroy(&A);
    ck_assert_int_eq(hisp_matrix_get_info(sA, &mi), HISP_ERR_INVALID_HANDLE);
    ck_assert_int_eq(hisp_spmv(ctx, HISP_OP_N, &one, sA, x, &one, x), HISP_ERR_INVALID_HANDLE);
    hisp_matrix_destroy(&sA);

    hisp_solver s = NULL, ss;
    CK_OK(ctx, hisp_solver_create(ctx, HISP_SOLVER_CG, &s));
    ss = s;
    hisp_solver_destroy(&s);
    ck_assert_int_eq(hisp_solver_set_tolerances(ss, 1e-6, 0), HISP_ERR_INVALID_HANDLE);
    hisp_solver_destroy(&ss);

    A = make_matrix(ctx, N, &st);
    hisp_mplan p = NULL, sp;
    CK_OK(ctx, hisp_mplan_create(A, 1, &ref_dev, HISP_PART_PCSR, HISP_MPLAN_NO_NUMA, &p));
    hisp_mvector mv = NULL, smv;
    CK_OK(ctx, hisp_mvector_create(p, HISP_MVEC_REPLICATED, &mv));
    smv = mv;
    hisp_mvector_destroy(&mv);
    ck_assert_ptr_null(mv);
    ck_assert_int_eq(hisp_mvector_length(smv, &len), HISP_ERR_INVALID_HANDLE);
    hisp_mvector_destroy(&smv);
    sp = p;
    hisp_mplan_destroy(&p);
    ck_assert_ptr_null(p);
    double xh[N] = {0}, yh[N] = {0};
    ck_assert_int_eq(hisp_mspmv(sp, HISP_OP_N, &one, xh, &one, yh), HISP_ERR_INVALID_HANDLE);
    ck_assert_int_eq(hisp_mvector_create(sp, HISP_MVEC_ROWS, &mv), HISP_ERR_INVALID_HANDLE);
    hisp_mplan_destroy(&sp);
    hisp_matrix_destroy(&A);
    hisp_vector_destroy(&x);

    hisp_context sc = ctx;
    hisp_context_destroy(&ctx);
    ck_assert_ptr_null(ctx);
    hisp_error_info e;
    ck_assert_int_eq(hisp_context_synchronize(sc), HISP_ERR_INVALID_HANDLE);
    ck_assert_int_eq(hisp_context_last_error(sc, &e), HISP_ERR_INVALID_HANDLE);
    ck_assert_int_eq(hisp_vector_create(sc, HISP_F64, 4, &v), HISP_ERR_INVALID_HANDLE);
    hisp_context_destroy(&sc);
}
END_TEST

/* A stale handle stays refused while new objects of its kind are made: the
 * allocator does not get its address back while it is recent. */
START_TEST(test_address_reuse)
{
    enum { N = 16, NEW = 32 };
    uint64_t st = 12;
    hisp_context ctx = test_default_context();
    hisp_vector v = make_vector(ctx, N, &st), sv = v;
    hisp_matrix A = make_matrix(ctx, N, &st), sA = A;
    hisp_vector_destroy(&v);
    hisp_matrix_destroy(&A);
    hisp_vector nv[NEW];
    hisp_matrix nA[NEW];
    for (int i = 0; i < NEW; i++) {
        nv[i] = make_vector(ctx, N, &st);
        nA[i] = make_matrix(ctx, N, &st);
        ck_assert_ptr_ne(nv[i], sv);
        ck_assert_ptr_ne(nA[i], sA);
    }
    int64_t len = 0;
    hisp_matrix_info mi;
    ck_assert_int_eq(hisp_vector_size(sv, &len), HISP_ERR_INVALID_HANDLE);
    ck_assert_int_eq(hisp_matrix_get_info(sA, &mi), HISP_ERR_INVALID_HANDLE);
    for (int i = 0; i < NEW; i++) {
        hisp_vector_destroy(&nv[i]);
        hisp_matrix_destroy(&nA[i]);
    }

    /* a context: a new one does not revive the old one's handle */
    hisp_context sc = ctx;
    hisp_context_destroy(&ctx);
    CK_OK(ctx, hisp_context_create(&ctx));
    ck_assert_ptr_ne(ctx, sc);
    ck_assert_int_eq(hisp_context_synchronize(sc), HISP_ERR_INVALID_HANDLE);
    hisp_context_destroy(&ctx);
}
END_TEST

/* Objects whose context is destroyed first (on every target, with device
 * copies made): every call on them is refused, even after a new context
 * is made, and their own destroy then frees them (LeakSanitizer checks). */
START_TEST(test_context_gone)
{
    enum { N = 64 };
    uint64_t st = 13;
    const double one = 1, half = 0.5;
    hisp_context ctx = test_context(_i);
    hisp_matrix A = make_matrix(ctx, N, &st);
    hisp_vector x = make_vector(ctx, N, &st), y = make_vector(ctx, N, &st);
    CK_OK(ctx, hisp_spmv(ctx, HISP_OP_N, &one, A, x, &half, y)); /* device copies */
    hisp_solver s = NULL;
    CK_OK(ctx, hisp_solver_create(ctx, HISP_SOLVER_CG, &s));
    hisp_mplan p = NULL;
    CK_OK(ctx, hisp_mplan_create(A, 1, &ref_dev, HISP_PART_PCSR, HISP_MPLAN_NO_NUMA, &p));
    hisp_mvector mv = NULL;
    CK_OK(ctx, hisp_mvector_create(p, HISP_MVEC_REPLICATED, &mv));

    hisp_context_destroy(&ctx);
    hisp_context other = NULL; /* may take the old context's place in memory */
    ck_assert_int_eq(hisp_context_create(&other), HISP_SUCCESS);

    int64_t len = 0;
    double h[N] = {0};
    hisp_matrix_info mi;
    hisp_solve_info si;
    ck_assert_int_eq(hisp_matrix_get_info(A, &mi), HISP_ERR_INVALID_HANDLE);
    ck_assert_int_eq(hisp_vector_size(x, &len), HISP_ERR_INVALID_HANDLE);
    ck_assert_int_eq(hisp_vector_read(y, h), HISP_ERR_INVALID_HANDLE);
    ck_assert_int_eq(hisp_vector_axpby(hisp_scalar_host(&one), x, hisp_scalar_host(&half), y),
                     HISP_ERR_INVALID_HANDLE);
    ck_assert_int_eq(hisp_spmv(other, HISP_OP_N, &one, A, x, &half, y), HISP_ERR_INVALID_HANDLE);
    ck_assert_int_eq(hisp_solver_set_tolerances(s, 1e-6, 0), HISP_ERR_INVALID_HANDLE);
    ck_assert_int_eq(hisp_solver_solve(s, A, x, y, &si), HISP_ERR_INVALID_HANDLE);
    ck_assert_int_eq(hisp_mspmv(p, HISP_OP_N, &one, h, &one, h), HISP_ERR_INVALID_HANDLE);
    ck_assert_int_eq(hisp_mvector_length(mv, &len), HISP_ERR_INVALID_HANDLE);
    /* another context's vector with them: refused too, the good one untouched */
    hisp_vector z = make_vector(other, N, &st);
    ck_assert_int_eq(hisp_vector_copy(x, z), HISP_ERR_INVALID_HANDLE);

    hisp_mvector_destroy(&mv);
    hisp_mplan_destroy(&p);
    hisp_solver_destroy(&s);
    hisp_vector_destroy(&x);
    hisp_vector_destroy(&y);
    hisp_matrix_destroy(&A);
    ck_assert(!mv && !p && !s && !x && !y && !A);
    hisp_vector_destroy(&z);
    hisp_context_destroy(&other);
}
END_TEST

/* A plan destroyed before its vectors: they are refused, then destroyed. */
START_TEST(test_plan_gone)
{
    enum { N = 30 };
    uint64_t st = 14;
    hisp_context ctx = test_default_context();
    hisp_matrix A = make_matrix(ctx, N, &st);
    hisp_mplan p = NULL;
    CK_OK(ctx, hisp_mplan_create(A, 2, (hisp_device_ref[]){ref_dev, ref_dev}, HISP_PART_PCSR,
                                 HISP_MPLAN_NO_NUMA, &p));
    hisp_mvector a = NULL, b = NULL;
    CK_OK(ctx, hisp_mvector_create(p, HISP_MVEC_REPLICATED, &a));
    CK_OK(ctx, hisp_mvector_create(p, HISP_MVEC_ROWS, &b));
    hisp_mplan_destroy(&p);
    int64_t len = 0;
    ck_assert_int_eq(hisp_mvector_length(a, &len), HISP_ERR_INVALID_HANDLE);
    ck_assert_int_eq(hisp_mvector_allgather(b, a), HISP_ERR_INVALID_HANDLE);
    hisp_mvector_destroy(&a);
    hisp_mvector_destroy(&b);
    ck_assert(!a && !b);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

/* NULL: destroy(NULL) and destroy(&null) do nothing; calls answer as
 * hisp.h says (INVALID_HANDLE; the solver calls INVALID_ARGUMENT). A
 * handle of another kind is foreign. */
START_TEST(test_null_and_foreign)
{
    hisp_context_destroy(NULL);
    hisp_matrix_destroy(NULL);
    hisp_vector_destroy(NULL);
    hisp_mplan_destroy(NULL);
    hisp_mvector_destroy(NULL);
    hisp_solver_destroy(NULL);
    hisp_context c0 = NULL;
    hisp_matrix m0 = NULL;
    hisp_vector v0 = NULL;
    hisp_mplan p0 = NULL;
    hisp_mvector mv0 = NULL;
    hisp_solver s0 = NULL;
    hisp_context_destroy(&c0);
    hisp_matrix_destroy(&m0);
    hisp_vector_destroy(&v0);
    hisp_mplan_destroy(&p0);
    hisp_mvector_destroy(&mv0);
    hisp_solver_destroy(&s0);
    int64_t len;
    hisp_matrix_info mi;
    ck_assert_int_eq(hisp_context_synchronize(NULL), HISP_ERR_INVALID_HANDLE);
    ck_assert_int_eq(hisp_vector_size(NULL, &len), HISP_ERR_INVALID_HANDLE);
    ck_assert_int_eq(hisp_matrix_get_info(NULL, &mi), HISP_ERR_INVALID_HANDLE);
    ck_assert_int_eq(hisp_mvector_length(NULL, &len), HISP_ERR_INVALID_HANDLE);
    ck_assert_int_eq(hisp_mplan_fit_row_cost(NULL, NULL, NULL), HISP_ERR_INVALID_HANDLE);
    ck_assert_int_eq(hisp_solver_set_tolerances(NULL, 1e-6, 0), HISP_ERR_INVALID_HANDLE);
    ck_assert_int_eq(hisp_solver_create(NULL, HISP_SOLVER_CG, &s0), HISP_ERR_INVALID_HANDLE);

    /* foreign: a vector passed as a matrix, a matrix as a context; their
     * destroys refuse them and leave them alive */
    hisp_context ctx = test_default_context();
    uint64_t st = 15;
    hisp_vector v = make_vector(ctx, 8, &st);
    hisp_matrix A = make_matrix(ctx, 8, &st);
    ck_assert_int_eq(hisp_matrix_get_info((hisp_matrix)(void *)v, &mi), HISP_ERR_INVALID_HANDLE);
    ck_assert_int_eq(hisp_context_synchronize((hisp_context)(void *)A), HISP_ERR_INVALID_HANDLE);
    hisp_matrix fake = (hisp_matrix)(void *)v;
    hisp_matrix_destroy(&fake);
    ck_assert_ptr_nonnull(fake);
    CK_OK(ctx, hisp_vector_size(v, &len));
    ck_assert_int_eq(len, 8);
    hisp_vector_destroy(&v);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

/* NULL for each handle argument of every call that takes handles (the others
 * valid): HISP_ERR_INVALID_HANDLE, as for a destroyed handle, and nothing
 * written to the valid operands. */
static hisp_status op_apply(void *user, hisp_op op, hisp_vector x, hisp_vector y)
{
    (void)user;
    (void)op;
    return hisp_vector_copy(x, y);
}

START_TEST(test_null_everywhere)
{
    hisp_context c = test_default_context();
    uint64_t st = 77;
    hisp_matrix A = make_matrix(c, 8, &st), B = NULL, M0 = NULL;
    hisp_vector x = make_vector(c, 8, &st), y = make_vector(c, 8, &st), z = make_vector(c, 8, &st);
    hisp_vector v0 = NULL;
    hisp_device_ref ref = {HISP_BACKEND_REFERENCE, 0};
    hisp_mplan p = NULL, p0 = NULL;
    CK_OK(c, hisp_mplan_create(A, 1, &ref, HISP_PART_PCSR, 0, &p));
    hisp_mvector mr = NULL, mx = NULL, m0 = NULL;
    CK_OK(c, hisp_mvector_create(p, HISP_MVEC_ROWS, &mr));
    CK_OK(c, hisp_mvector_create(p, HISP_MVEC_REPLICATED, &mx));
    hisp_solver s = NULL, s0 = NULL;
    CK_OK(c, hisp_solver_create(c, HISP_SOLVER_CG, &s));
    hisp_context c0 = NULL;
    double one = 1, zero = 0, r = 0, buf[64] = {0}, ms[2];
    int64_t n = 0;
    int k = 0;
    uint64_t bytes = 0;
    hisp_solve_info si;
    hisp_matrix_info mi;
    hisp_device_info di;
    hisp_mplan_breakdown bd;
    hisp_operator op = {8, 8, HISP_F64, op_apply, NULL, NULL, NULL, NULL};
    hisp_scalar a1 = hisp_scalar_host(&one);
    hisp_result rh = hisp_result_host(&r);
    char txt[256];
    const void *cv;
    hisp_part parts[1];
    const char *bad[128];
    int nbad = 0;
#define NH(call)                                                                                   \
    do {                                                                                           \
        hisp_status got_ = (call);                                                                 \
        if (got_ != HISP_ERR_INVALID_HANDLE && nbad < 128) bad[nbad++] = #call;                    \
    } while (0)
    /* contexts */
    NH(hisp_context_set_backend(c0, HISP_BACKEND_REFERENCE, 0));
    NH(hisp_context_get_device(c0, &di));
    NH(hisp_context_set_option(c0, "threads", "1"));
    NH(hisp_context_get_option(c0, "threads", txt, sizeof txt));
    NH(hisp_context_synchronize(c0));
    NH(hisp_backend_device_count(c0, HISP_BACKEND_REFERENCE, &k));
    NH(hisp_backend_device_info(c0, HISP_BACKEND_REFERENCE, 0, &di));
    NH(hisp_context_set_stream(c0, NULL));
    NH(hisp_context_get_stream(c0, (void **)&cv));
    NH(hisp_context_transfers(c0, &(hisp_transfer_stats){0}));
    NH(hisp_context_reset_transfers(c0));
    NH(hisp_context_sched_counts(c0, &(hisp_sched_counts){0}));
    NH(hisp_context_add_stats(c0, &(hisp_add_stats){0}));
    NH(hisp_context_spgemm_stats(c0, &(hisp_spgemm_stats){0}));
    NH(hisp_copy_bandwidth(c0, 64, 1, &r));
    NH(hisp_file_write(c0, "/dev/null", "x", 1));
    /* matrices */
    NH(hisp_matrix_create_csr(c0, HISP_F64, 1, 1, (int64_t[]){0, 0}, NULL, NULL, &B));
    NH(hisp_matrix_get_info(M0, &mi));
    NH(hisp_matrix_convert(M0, HISP_FORMAT_CSR));
    NH(hisp_matrix_duplicate(M0, HISP_FORMAT_CSR, &B));
    NH(hisp_matrix_host_arrays(M0, NULL, NULL, NULL, &cv));
    NH(hisp_matrix_format_bytes(M0, HISP_FORMAT_CSR, HISP_F64, &bytes));
    NH(hisp_matrix_set_node_size(M0, 8));
    NH(hisp_matrix_transpose(M0));
    NH(hisp_matrix_scale(M0, &one));
    NH(hisp_matrix_hisparse_profile(M0, &(hisp_hisparse_profile){0}));
    NH(hisp_matrix_add(HISP_OP_N, M0, HISP_OP_N, A, &B));
    NH(hisp_matrix_add(HISP_OP_N, A, HISP_OP_N, M0, &B));
    NH(hisp_matrix_edit(M0, 0, NULL, NULL, NULL, NULL, &B, NULL));
    NH(hisp_matrix_save(M0, "/dev/null"));
    NH(hisp_matrix_write_mtx(M0, "/dev/null"));
    NH(hisp_matrix_perturb(M0, 1, 1, &B));
    NH(hisp_matrix_device_modified(M0));
    NH(hisp_matrix_partition(M0, HISP_PART_PCSR, 1, parts));
    NH(hisp_matrix_layout_bytes(M0, HISP_OUTER_CSR, &bytes));
    NH(hisp_matrix_expand_real(M0, &B));
    NH(hisp_matrix_load(c0, "/dev/null", &B));
    NH(hisp_matrix_read_mtx(c0, "/dev/null", HISP_F64, &B, NULL));
    NH(hisp_matrix_read_mtx_buffer(c0, "x", 1, NULL, HISP_F64, &B, NULL));
    NH(hisp_matrix_read_mtx_info(c0, "/dev/null", &(hisp_mtx_info){0}));
    NH(hisp_matrix_generate(c0, &(hisp_gen_params){0}, HISP_F64, &B));
    /* vectors */
    NH(hisp_vector_create(c0, HISP_F64, 4, &v0));
    NH(hisp_vector_size(v0, &n));
    NH(hisp_vector_write(v0, buf));
    NH(hisp_vector_read(v0, buf));
    NH(hisp_vector_read_range(v0, 0, 1, buf));
    NH(hisp_vector_write_range(v0, 0, 1, buf));
    NH(hisp_vector_read_mtx(c0, "/dev/null", HISP_F64, &v0));
    NH(hisp_vector_write_mtx(v0, "/dev/null"));
    NH(hisp_vector_wrap_device(c0, HISP_F64, 1, buf, &v0));
    NH(hisp_vector_device_memory(v0, (void **)&cv));
    NH(hisp_vector_device_modified(v0));
    NH(hisp_vector_fill(v0, a1));
    NH(hisp_vector_copy(v0, y));
    NH(hisp_vector_copy(x, v0));
    NH(hisp_vector_scale(v0, a1));
    NH(hisp_vector_axpby(a1, v0, a1, y));
    NH(hisp_vector_axpby(a1, x, a1, v0));
    NH(hisp_vector_axpbypcz(a1, v0, a1, y, a1, z));
    NH(hisp_vector_axpbypcz(a1, x, a1, v0, a1, z));
    NH(hisp_vector_axpbypcz(a1, x, a1, y, a1, v0));
    NH(hisp_vector_mul(v0, y, z));
    NH(hisp_vector_mul(x, v0, z));
    NH(hisp_vector_mul(x, y, v0));
    NH(hisp_vector_div(v0, y, z));
    NH(hisp_vector_div(x, y, v0));
    NH(hisp_vector_dot(v0, y, rh));
    NH(hisp_vector_dot(x, v0, rh));
    NH(hisp_vector_nrm2(v0, rh));
    NH(hisp_vector_axpby_dot(a1, v0, a1, y, z, rh));
    NH(hisp_vector_axpby_dot(a1, x, a1, v0, z, rh));
    /* (axpby_dot's w may be NULL: r = dot(y, y)) */
    NH(hisp_vector_dot2(v0, y, z, rh, rh));
    NH(hisp_vector_dot2(x, y, v0, rh, rh));
    NH(hisp_vector_div_dot(x, v0, z, rh));
    NH(hisp_vector_div_dot(x, y, v0, rh));
    /* products */
    NH(hisp_spmv(c0, HISP_OP_N, &one, A, x, &zero, y));
    NH(hisp_spmv(c, HISP_OP_N, &one, M0, x, &zero, y));
    NH(hisp_spmv(c, HISP_OP_N, &one, A, v0, &zero, y));
    NH(hisp_spmv(c, HISP_OP_N, &one, A, x, &zero, v0));
    NH(hisp_spmv_dot(c0, A, x, y, rh));
    NH(hisp_spmv_dot(c, M0, x, y, rh));
    NH(hisp_spmv_dot(c, A, v0, y, rh));
    NH(hisp_spmv_dot(c, A, x, v0, rh));
    NH(hisp_spmv_timed(c0, HISP_OP_N, &one, A, x, &zero, y, 0, 1, ms));
    NH(hisp_spmv_timed(c, HISP_OP_N, &one, M0, x, &zero, y, 0, 1, ms));
    NH(hisp_spmv_timed(c, HISP_OP_N, &one, A, v0, &zero, y, 0, 1, ms));
    NH(hisp_spmv_timed(c, HISP_OP_N, &one, A, x, &zero, v0, 0, 1, ms));
    hisp_variant var = {{HISP_OUTER_CSR, HISP_AOS, HISP_AOS}, {0, 0, 0}};
    NH(hisp_spmv_variant(c0, &var, &one, A, x, &zero, y));
    NH(hisp_spmv_variant(c, &var, &one, M0, x, &zero, y));
    NH(hisp_spmv_variant(c, &var, &one, A, v0, &zero, y));
    NH(hisp_spmv_variant(c, &var, &one, A, x, &zero, v0));
    /* tuning and the format choice */
    NH(hisp_tune_plan_key(c0, A, txt, sizeof txt));
    NH(hisp_tune_plan_key(c, M0, txt, sizeof txt));
    NH(hisp_tune_plan_lookup(c, M0, &(hisp_tune_plan){0}, &k));
    NH(hisp_tune(c, M0, HISP_TUNE_FAST, 0, NULL, NULL, NULL, 0, &k, &(hisp_tune_plan){0}));
    NH(hisp_tune_plan_load(c0, "/dev/null", &(hisp_tune_plan){0}));
    NH(hisp_matrix_choose_format(c0, A, HISP_OP_N, NULL, NULL, 0, NULL, &(hisp_format_choice){0}));
    NH(hisp_matrix_choose_format(c, M0, HISP_OP_N, NULL, NULL, 0, NULL, &(hisp_format_choice){0}));
    /* MSREP */
    NH(hisp_mplan_create(M0, 1, &ref, HISP_PART_PCSR, 0, &p0));
    NH(hisp_mplan_fit_row_cost(p0, ms, &r));
    NH(hisp_mspmv(p0, HISP_OP_N, &one, buf, &zero, buf + 16));
    NH(hisp_mspmv_vec(p0, HISP_OP_N, &one, x, &zero, y));
    NH(hisp_mspmv_vec(p, HISP_OP_N, &one, v0, &zero, y));
    NH(hisp_mspmv_vec(p, HISP_OP_N, &one, x, &zero, v0));
    NH(hisp_mvector_create(p0, HISP_MVEC_ROWS, &m0));
    NH(hisp_mvector_length(m0, &n));
    NH(hisp_mvector_write(m0, buf));
    NH(hisp_mvector_read(m0, buf));
    NH(hisp_mvector_allgather(m0, mx));
    NH(hisp_mvector_allgather(mr, m0));
    NH(hisp_mspmv_dist(p0, &one, mx, &zero, mr));
    NH(hisp_mspmv_dist(p, &one, m0, &zero, mr));
    NH(hisp_mspmv_dist(p, &one, mx, &zero, m0));
    NH(hisp_mplan_get_breakdown(p0, &bd));
    /* solvers */
    NH(hisp_solver_create(c0, HISP_SOLVER_CG, &s0));
    NH(hisp_solver_set_tolerances(s0, 1e-6, 0));
    NH(hisp_solver_set_max_iterations(s0, 5));
    NH(hisp_solver_set_restart(s0, 5));
    NH(hisp_solver_set_preconditioner(s0, HISP_PRECOND_NONE));
    NH(hisp_solver_set_damping(s0, 0));
    NH(hisp_solver_set_check_interval(s0, 1));
    NH(hisp_solver_set_monitor(s0, NULL, NULL));
    NH(hisp_solver_solve(s0, A, x, y, &si));
    NH(hisp_solver_solve(s, M0, x, y, &si));
    NH(hisp_solver_solve(s, A, v0, y, &si));
    NH(hisp_solver_solve(s, A, x, v0, &si));
    NH(hisp_solver_solve_operator(s0, &op, x, y, &si));
    NH(hisp_solver_solve_operator(s, &op, v0, y, &si));
    NH(hisp_solver_solve_operator(s, &op, x, v0, &si));
    NH(hisp_solver_solve_dist(s0, p, mr, mr, &si));
    NH(hisp_solver_solve_dist(s, p0, mr, mr, &si));
    NH(hisp_solver_solve_dist(s, p, m0, mr, &si));
    NH(hisp_solver_solve_dist(s, p, mr, m0, &si));
#undef NH
    char list[4096] = "";
    for (int i = 0; i < nbad; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "\n  %s", bad[i]);
    ck_assert_msg(nbad == 0,
                  "%d calls given a NULL handle did not return HISP_ERR_INVALID_HANDLE:%s", nbad,
                  list);
    /* the valid operands were not touched */
    ck_assert_ptr_null(B);
    ck_assert_ptr_null(v0);
    ck_assert_ptr_null(m0);
    ck_assert_ptr_null(p0);
    ck_assert_ptr_null(s0);
    hisp_solver_destroy(&s);
    hisp_mvector_destroy(&mr);
    hisp_mvector_destroy(&mx);
    hisp_mplan_destroy(&p);
    hisp_vector_destroy(&x);
    hisp_vector_destroy(&y);
    hisp_vector_destroy(&z);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&c);
}
END_TEST

/* Threads, each on a context of its own, make and destroy vectors while
 * they check long-lived ones: the checks run without a lock while the
 * registry changes, and must never miss a live handle. */
enum { TH = 4, KEEP = 50, ROUNDS = 3000 };

static void *churn(void *arg)
{
    int *bad = arg;
    hisp_context ctx = NULL;
    if (hisp_context_create(&ctx)) {
        *bad = -1;
        return NULL;
    }
    hisp_vector keep[KEEP], tmp[8];
    for (int i = 0; i < KEEP; i++)
        if (hisp_vector_create(ctx, HISP_F64, i + 1, &keep[i])) *bad = -1;
    for (int r = 0; r < ROUNDS && !*bad; r++) {
        int m = 1 + r % 8; /* bursts, so the table grows across threads */
        for (int j = 0; j < m; j++)
            if (hisp_vector_create(ctx, HISP_F64, 3, &tmp[j])) *bad = -1;
        for (int i = 0; i < KEEP; i++) {
            int64_t n = 0;
            if (hisp_vector_size(keep[i], &n) || n != i + 1) (*bad)++;
        }
        /* (stale handles are not checked here: other threads' destroys
         * may push them out of the quarantine) */
        for (int j = 0; j < m; j++)
            hisp_vector_destroy(&tmp[j]);
    }
    for (int i = 0; i < KEEP; i++)
        hisp_vector_destroy(&keep[i]);
    hisp_context_destroy(&ctx);
    return NULL;
}

START_TEST(test_concurrent)
{
    pthread_t th[TH];
    int bad[TH] = {0};
    for (int t = 0; t < TH; t++)
        ck_assert_int_eq(pthread_create(&th[t], NULL, churn, &bad[t]), 0);
    for (int t = 0; t < TH; t++) {
        pthread_join(th[t], NULL);
        ck_assert_msg(bad[t] == 0, "thread %d: %d wrong answers", t, bad[t]);
    }
}
END_TEST

Suite *suite_handles(void)
{
    Suite *s = suite_create("handles");
    TCase *tc = test_tcase(s, "handles", 60);
    const test_target *t = NULL;
    int nt = test_targets(&t);
    tcase_add_test(tc, test_use_after_destroy);
    tcase_add_test(tc, test_address_reuse);
    tcase_add_loop_test(tc, test_context_gone, 0, nt);
    tcase_add_test(tc, test_plan_gone);
    tcase_add_test(tc, test_null_and_foreign);
    tcase_add_test(tc, test_null_everywhere);
    tcase_add_test(tc, test_concurrent);
    return s;
}
