/* HiSparse families resident on the device (core/hisparse/hisparse_resid.c): chains
 * of additions, edits, duplicates and scales whose results stay on the
 * device, checked against the reference backend with the host copy brought
 * up to date after each kind of operation or only at the end (operands
 * destroyed first); injected device allocation failures during additions;
 * the transfers of a chain of additions and SpMVs once the operands are
 * resident; a backend switch with device-only results; the device work
 * around a repeated addition (no allocation once its scratch exists); edits
 * of device-only results (paths fetched node by node, never a range). */
#include "testutil.h"
#include "backend/backend.h"
#include "hispi.h"
#include "hisparse/hispi_hisparse.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int64_t n, nnz;
    int32_t *r, *c;
    double *v;
} coo;

/* n x n, density p, with a block of rows left empty (or full) so the sum
 * shares subtrees of both operands. */
static coo random_coo(int64_t n, double p, int64_t skip_lo, int64_t skip_hi, uint64_t *st)
{
    coo a = {n, 0, NULL, NULL, NULL};
    int64_t cap = (int64_t)(p * (double)n * (double)n * 1.5) + 64;
    a.r = malloc((size_t)cap * sizeof *a.r);
    a.c = malloc((size_t)cap * sizeof *a.c);
    a.v = malloc((size_t)cap * sizeof *a.v);
    ck_assert(a.r && a.c && a.v);
    for (int64_t i = 0; i < n; i++) {
        if (i >= skip_lo && i < skip_hi) continue;
        for (int64_t j = 0; j < n && a.nnz < cap; j++)
            if ((test_uniform(st) + 1) / 2 < p) {
                a.r[a.nnz] = (int32_t)i, a.c[a.nnz] = (int32_t)j;
                a.v[a.nnz++] = test_uniform(st);
            }
    }
    return a;
}

static void coo_free(coo *a)
{
    free(a->r);
    free(a->c);
    free(a->v);
}

static hisp_matrix make(hisp_context ctx, const coo *a, int d)
{
    hisp_matrix M = NULL;
    CK_OK(ctx, hisp_matrix_create_coo(ctx, HISP_F64, a->n, a->n, a->nnz, a->r, a->c, a->v, &M));
    CK_OK(ctx, hisp_matrix_set_node_size(M, d));
    CK_OK(ctx, hisp_matrix_convert(M, HISP_FORMAT_HISPARSE));
    return M;
}

/* A test's operands: a and b as HiSparse matrices (node size 8) on the
 * target's context (A, B) and on a reference-backend context (Ar, Br),
 * the results' oracle. */
typedef struct {
    coo a, b;
    hisp_context ctx, ref;
    hisp_matrix A, B, Ar, Br;
} operands;

static operands operands_make(int target, coo a, coo b)
{
    operands o = {a, b, test_context(target), NULL, NULL, NULL, NULL, NULL};
    CK_OK(o.ctx, hisp_context_create(&o.ref));
    o.A = make(o.ctx, &a, 8), o.B = make(o.ctx, &b, 8);
    o.Ar = make(o.ref, &a, 8), o.Br = make(o.ref, &b, 8);
    return o;
}

/* The operands' matrices, arrays and contexts (the test's own results
 * destroyed first). */
static void operands_free(operands *o)
{
    TEST_DESTROY_MATRICES(&o->A, &o->B, &o->Ar, &o->Br);
    coo_free(&o->a);
    coo_free(&o->b);
    hisp_context_destroy(&o->ctx);
    hisp_context_destroy(&o->ref);
}

/* Only the device holds M's tree (its root in a device-only range). */
static bool device_only(hisp_matrix M)
{
    const hispi_hisparse *h = M->hs;
    return h && h->root && hispi_pool_region_of(h->pool, HISPI_REF_OFF(h->root));
}

enum { A_, B_, C_, D_, E_, F_, G_, H_, NM };
static const char *names[NM] = {"A",
                                "B",
                                "C = A + B",
                                "D = C + B",
                                "E = D^T + C^T",
                                "F = D edited",
                                "G = dup(E) scaled",
                                "H = C + D^T"};

/* The chain on one context: m[A_], m[B_] given. check: the host copy read
 * after each kind of operation (else only at the end). */
static void chain(hisp_context ctx, hisp_matrix *m, int n, uint64_t seed, hisp_context ref,
                  hisp_matrix *r, bool check, bool dev)
{
    CK_OK(ctx, hisp_matrix_add(HISP_OP_N, m[A_], HISP_OP_N, m[B_], &m[C_]));
    if (dev) ck_assert_msg(device_only(m[C_]), "C's tree should stay on the device");
    if (check && r) test_same_matrix(ctx, m[C_], ref, r[C_], names[C_]);
    CK_OK(ctx, hisp_matrix_add(HISP_OP_N, m[C_], HISP_OP_N, m[B_], &m[D_]));
    if (dev) ck_assert(device_only(m[D_]));
    if (check && r) test_same_matrix(ctx, m[D_], ref, r[D_], names[D_]);
    CK_OK(ctx, hisp_matrix_add(HISP_OP_T, m[D_], HISP_OP_T, m[C_], &m[E_]));
    if (dev) ck_assert(device_only(m[E_]));
    if (check && r) test_same_matrix(ctx, m[E_], ref, r[E_], names[E_]);
    /* an edit (its paths cross D's device-only nodes: the family's host copy
     * brought up to date) */
    int32_t er[24], ec[24];
    double ev[24];
    uint8_t rm[24];
    uint64_t st = seed;
    for (int k = 0; k < 24; k++) {
        er[k] = (int32_t)(test_rand(&st) % (uint64_t)n);
        ec[k] = (int32_t)(test_rand(&st) % (uint64_t)n);
        ev[k] = test_uniform(&st);
        rm[k] = k % 5 == 0;
    }
    hisp_edit_stats es;
    CK_OK(ctx, hisp_matrix_edit(m[D_], 24, er, ec, ev, rm, &m[F_], &es));
    if (check && r) test_same_matrix(ctx, m[F_], ref, r[F_], names[F_]);
    /* a duplicate, scaled: E's tree shared, still on the device */
    CK_OK(ctx, hisp_matrix_duplicate(m[E_], HISP_FORMAT_HISPARSE, &m[G_]));
    double s = -0.625;
    CK_OK(ctx, hisp_matrix_scale(m[G_], &s));
    if (check && r) test_same_matrix(ctx, m[G_], ref, r[G_], names[G_]);
    /* mixed orientations: D^T copied transposed on the device */
    CK_OK(ctx, hisp_matrix_add(HISP_OP_N, m[C_], HISP_OP_T, m[D_], &m[H_]));
    if (dev) ck_assert(device_only(m[H_]));
    if (check && r) test_same_matrix(ctx, m[H_], ref, r[H_], names[H_]);
}

START_TEST(test_resid_chain)
{
    const int n = 180, d = 8;
    for (int check = 0; check < 2; check++) {
        uint64_t st = test_seed() + 7301 + (uint64_t)check;
        coo a = random_coo(n, 0.04, 40, 70, &st), b = random_coo(n, 0.03, 100, 150, &st);
        hisp_context ctx = test_context(_i), ref = NULL;
        CK_OK(ctx, hisp_context_create(&ref));
        hisp_matrix m[NM] = {0}, r[NM] = {0};
        r[A_] = make(ref, &a, d), r[B_] = make(ref, &b, d);
        m[A_] = make(ctx, &a, d), m[B_] = make(ctx, &b, d);
        uint64_t seed = st;
        chain(ref, r, n, seed, NULL, NULL, false, false);
        chain(ctx, m, n, seed, ref, r, check, test_on_device(_i));
        /* the operands go first: the results' shared nodes stay (pins) */
        hisp_matrix_destroy(&m[A_]);
        hisp_matrix_destroy(&m[B_]);
        if (!check) hisp_matrix_destroy(&m[C_]);
        char what[80];
        for (int k = D_; k < NM; k++) {
            snprintf(what, sizeof what, "%s (%s)", names[k], check ? "checked each" : "at the end");
            test_same_matrix(ctx, m[k], ref, r[k], what);
        }
        for (int k = 0; k < NM; k++) {
            hisp_matrix_destroy(&m[k]);
            hisp_matrix_destroy(&r[k]);
        }
        coo_free(&a);
        coo_free(&b);
        hisp_context_destroy(&ctx);
        hisp_context_destroy(&ref);
    }
}
END_TEST

/* Results destroyed in every order before the host reads them: freed whole
 * (the family's pool gets its bytes back), the rest still right. */
START_TEST(test_resid_destroy_orders)
{
    const int n = 150;
    uint64_t st = test_seed() + 7311;
    coo a = random_coo(n, 0.05, 20, 60, &st), b = random_coo(n, 0.04, 80, 120, &st);
    operands o = operands_make(_i, a, b);
    hisp_context ctx = o.ctx, ref = o.ref;
    hisp_matrix Rr = NULL;
    CK_OK(ref, hisp_matrix_add(HISP_OP_N, o.Ar, HISP_OP_N, o.Br, &Rr));
    uint64_t used0 = o.A->hs->pool->used;
    for (int order = 0; order < 3; order++) {
        hisp_matrix C = NULL, D = NULL, C2 = NULL;
        CK_OK(ctx, hisp_matrix_add(HISP_OP_N, o.A, HISP_OP_N, o.B, &C));
        CK_OK(ctx, hisp_matrix_add(HISP_OP_N, C, HISP_OP_N, o.B, &D));
        CK_OK(ctx, hisp_matrix_duplicate(C, HISP_FORMAT_HISPARSE, &C2));
        if (order == 0) { /* oldest first */
            hisp_matrix_destroy(&C);
            hisp_matrix_destroy(&C2);
            hisp_matrix_destroy(&D);
        } else if (order == 1) { /* newest first */
            hisp_matrix_destroy(&D);
            hisp_matrix_destroy(&C);
            test_same_matrix(ctx, C2, ref, Rr, "a duplicate of C after C and D went");
            hisp_matrix_destroy(&C2);
        } else { /* C's duplicate read on the host while D lives */
            test_same_matrix(ctx, C2, ref, Rr, "a duplicate of C");
            hisp_matrix_destroy(&C2);
            hisp_matrix_destroy(&C);
            hisp_matrix_destroy(&D);
        }
        hispi_pool_trim(o.A->hs->pool);
        ck_assert_msg(o.A->hs->pool->used == used0, "order %d: the pool holds %llu bytes, was %llu",
                      order, (unsigned long long)o.A->hs->pool->used, (unsigned long long)used0);
        ck_assert_uint_eq(o.A->hs->pool->nreg, 0);
    }
    test_same_matrix(ctx, o.A, ref, o.Ar, "A after its sums went");
    TEST_DESTROY_MATRICES(&Rr);
    operands_free(&o);
}
END_TEST

/* Every device allocation of the family's pool fails in turn during an
 * addition whose pool must grow on the device (a small first room), also
 * with a device-only operand: an out-of-device-memory status, the operands
 * valid and usable after. */
START_TEST(test_resid_device_oom)
{
    if (!test_on_device(_i)) return; /* device residency: nothing to test on the reference */
    const int n = 160;
    uint64_t st = test_seed() + 7321;
    coo a = random_coo(n, 0.05, 30, 50, &st), b = random_coo(n, 0.05, 90, 130, &st);
    operands o = operands_make(_i, a, b);
    hisp_context ctx = o.ctx, ref = o.ref;
    hisp_matrix Cr = NULL, Dr = NULL, C = NULL;
    CK_OK(ref, hisp_matrix_add(HISP_OP_N, o.Ar, HISP_OP_N, o.Br, &Cr));
    CK_OK(ref, hisp_matrix_add(HISP_OP_N, Cr, HISP_OP_N, o.Br, &Dr));
    hispi_hs_hook.add_pool_bytes = 256;
    int failed = 0;
    for (int step = 0; step < 2; step++) { /* C = A + B, then D = C + B (C device-only) */
        bool ok = false;
        for (long k = 1; k < 20 && !ok; k++) {
            hisp_matrix R = NULL;
            hispi_pool_dev_fail_after(k);
            hisp_status s = step ? hisp_matrix_add(HISP_OP_N, C, HISP_OP_N, o.B, &R)
                                 : hisp_matrix_add(HISP_OP_N, o.A, HISP_OP_N, o.B, &R);
            hispi_pool_dev_fail_after(0);
            if (s == HISP_SUCCESS) {
                ok = true;
                test_same_matrix(ctx, R, ref, step ? Dr : Cr,
                                 step ? "D after failures" : "C after failures");
                if (step)
                    hisp_matrix_destroy(&R);
                else
                    C = R;
                break;
            }
            ck_assert_msg(s == HISP_ERR_OUT_OF_DEVICE_MEMORY, "step %d, failure %ld: %s", step, k,
                          hisp_status_string(s));
            ck_assert_ptr_null(R);
            failed++;
        }
        ck_assert_msg(ok, "step %d: no addition succeeded", step);
    }
    hispi_hs_hook.add_pool_bytes = 0;
    ck_assert_int_ge(failed, 2); /* the first upload and a growth at least */
    test_same_matrix(ctx, o.A, ref, o.Ar, "A after the failures");
    test_same_matrix(ctx, o.B, ref, o.Br, "B after the failures");
    test_same_matrix(ctx, C, ref, Cr, "C after the failures");
    TEST_DESTROY_MATRICES(&C, &Cr, &Dr);
    operands_free(&o);
}
END_TEST

/* Once A and B are resident, a chain of additions and SpMVs moves no pool
 * bytes: only control words. The SpMVs of the device-only results are
 * right. */
START_TEST(test_resid_transfers)
{
    if (!test_on_device(_i)) return; /* device residency: nothing to test on the reference */
    const int n = 200;
    uint64_t st = test_seed() + 7331;
    coo a = random_coo(n, 0.04, 10, 60, &st), b = random_coo(n, 0.04, 120, 170, &st);
    operands o = operands_make(_i, a, b);
    hisp_context ctx = o.ctx, ref = o.ref;
    double *xh = malloc((size_t)n * sizeof *xh), *yh = malloc((size_t)n * sizeof *yh),
           *yr = malloc((size_t)n * sizeof *yr);
    ck_assert(xh && yh && yr);
    for (int i = 0; i < n; i++)
        xh[i] = test_uniform(&st);
    hisp_vector x = NULL, y[4] = {0}, xr = NULL, yv = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, n, &x));
    CK_OK(ctx, hisp_vector_write(x, xh));
    for (int k = 0; k < 4; k++)
        CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, n, &y[k]));
    double one = 1, zero = 0;
    /* residency: the first SpMVs put A's and B's pools (and x) on the device */
    hisp_status s = hisp_spmv(ctx, HISP_OP_N, &one, o.A, x, &zero, y[0]);
    if (s == HISP_ERR_UNSUPPORTED) {
        test_skip("hisparse_resid transfers on %s: no HiSparse SpMV", test_label(_i));
    } else {
        CK_OK(ctx, s);
        CK_OK(ctx, hisp_spmv(ctx, HISP_OP_N, &one, o.B, x, &zero, y[0]));
        CK_OK(ctx, hisp_context_synchronize(ctx));
        CK_OK(ctx, hisp_context_reset_transfers(ctx));
        hisp_matrix C = NULL, D = NULL, E = NULL;
        CK_OK(ctx, hisp_matrix_add(HISP_OP_N, o.A, HISP_OP_N, o.B, &C));
        CK_OK(ctx, hisp_spmv(ctx, HISP_OP_N, &one, C, x, &zero, y[1]));
        CK_OK(ctx, hisp_matrix_add(HISP_OP_N, C, HISP_OP_N, o.B, &D));
        CK_OK(ctx, hisp_spmv(ctx, HISP_OP_T, &one, D, x, &zero, y[2]));
        CK_OK(ctx, hisp_matrix_add(HISP_OP_T, D, HISP_OP_T, o.A, &E));
        CK_OK(ctx, hisp_spmv(ctx, HISP_OP_N, &one, E, x, &zero, y[3]));
        hisp_matrix_destroy(&E); /* freed whole on the host: nothing moves */
        CK_OK(ctx, hisp_context_synchronize(ctx));
        hisp_transfer_stats ts;
        CK_OK(ctx, hisp_context_transfers(ctx, &ts));
        /* up: only each new SpMV state's queue offsets (8 bytes a queue) */
        ck_assert_msg(ts.h2d_bytes <= 3 * 8 * HISP_SCHED_MAX_QUEUES && ts.d2h_bytes == 0,
                      "a resident chain moved %llu bytes up and %llu down (control %llu)",
                      (unsigned long long)ts.h2d_bytes, (unsigned long long)ts.d2h_bytes,
                      (unsigned long long)ts.control_bytes);
        ck_assert(device_only(C) && device_only(D));
        /* the SpMVs against the reference's */
        hisp_matrix Cr = NULL, Dr = NULL;
        CK_OK(ref, hisp_matrix_add(HISP_OP_N, o.Ar, HISP_OP_N, o.Br, &Cr));
        CK_OK(ref, hisp_matrix_add(HISP_OP_N, Cr, HISP_OP_N, o.Br, &Dr));
        CK_OK(ref, hisp_vector_create(ref, HISP_F64, n, &xr));
        CK_OK(ref, hisp_vector_create(ref, HISP_F64, n, &yv));
        CK_OK(ref, hisp_vector_write(xr, xh));
        hisp_matrix M[2] = {Cr, Dr};
        for (int k = 0; k < 2; k++) {
            CK_OK(ref, hisp_spmv(ref, k ? HISP_OP_T : HISP_OP_N, &one, M[k], xr, &zero, yv));
            CK_OK(ref, hisp_vector_read(yv, yr));
            CK_OK(ctx, hisp_vector_read(y[k + 1], yh));
            ck_assert_msg(test_rel_error(HISP_F64, yh, yr, n) < 1e-12, "SpMV of %s",
                          k ? "D^T" : "C");
        }
        hisp_matrix_destroy(&Cr);
        hisp_matrix_destroy(&Dr);
        hisp_matrix_destroy(&C);
        hisp_matrix_destroy(&D);
    }
    hisp_vector_destroy(&x);
    hisp_vector_destroy(&xr);
    hisp_vector_destroy(&yv);
    for (int k = 0; k < 4; k++)
        hisp_vector_destroy(&y[k]);
    free(xh);
    free(yh);
    free(yr);
    operands_free(&o);
}
END_TEST

/* The backend calls of a context, counted: its ops swapped for a copy
 * whose buffer and kernel slots count and pass on. */
static struct {
    const hisp_backend_ops *real;
    hisp_backend_ops ops;
    long allocs, frees, reads, writes, zeros, kernels;
    uint64_t zero_bytes;
} cnt;

static hisp_status cnt_alloc(hisp_context ctx, void *be, size_t bytes, void **buf)
{
    cnt.allocs++;
    return cnt.real->buf_alloc(ctx, be, bytes, buf);
}
static void cnt_free(void *be, void *buf)
{
    cnt.frees++;
    cnt.real->buf_free(be, buf);
}
static hisp_status cnt_write(hisp_context ctx, void *be, void *buf, size_t off, const void *src,
                             size_t bytes)
{
    cnt.writes++;
    return cnt.real->buf_write(ctx, be, buf, off, src, bytes);
}
static hisp_status cnt_read(hisp_context ctx, void *be, const void *buf, size_t off, void *dst,
                            size_t bytes)
{
    cnt.reads++;
    return cnt.real->buf_read(ctx, be, buf, off, dst, bytes);
}
static hisp_status cnt_zero(hisp_context ctx, void *be, void *buf, size_t off, size_t bytes)
{
    cnt.zeros++;
    cnt.zero_bytes += bytes;
    return cnt.real->buf_zero(ctx, be, buf, off, bytes);
}
static hisp_status cnt_kern(hisp_context ctx, void *be, int prog, const char *opts,
                            const char *name, void **k)
{
    cnt.kernels++;
    return cnt.real->kern_get(ctx, be, prog, opts, name, k);
}

static void count_on(hisp_context ctx)
{
    cnt.real = ctx->ops;
    cnt.ops = *ctx->ops;
    cnt.ops.buf_alloc = cnt_alloc;
    cnt.ops.buf_free = cnt_free;
    cnt.ops.buf_write = cnt_write;
    cnt.ops.buf_read = cnt_read;
    cnt.ops.buf_zero = cnt_zero;
    cnt.ops.kern_get = cnt_kern;
    ctx->ops = &cnt.ops;
}

static void count_reset(void)
{
    cnt.allocs = cnt.frees = cnt.reads = cnt.writes = cnt.zeros = cnt.kernels = 0;
    cnt.zero_bytes = 0;
}

/* The count in C's root as the device wrote it (read after a download)
 * against the one the addition kept for the SpMV. */
static void root_count_kept(hisp_context ctx, hisp_matrix C)
{
    hispi_hisparse *h = C->hs;
    if (!h->root || hispi_node_is_dense(HISPI_REF_TYPE(h->root))) return;
    int64_t kept = h->census.root_n;
    CK_OK(ctx, hispi_pool_host(ctx, h->pool));
    ck_assert_int_eq(kept, (int64_t)hispi_rd32(h->pool->base + HISPI_REF_OFF(h->root)));
}

/* A second identical addition (same and mixed orientations) allocates,
 * frees and looks up nothing on the device, reads one control block per
 * level, and zeroes at most the bytes the first one's result left; a chain
 * of kept results moves the family's device pool only now and then. */
START_TEST(test_resid_repeat_scratch)
{
    if (!test_on_device(_i)) return; /* device residency: nothing to test on the reference */
    const int n = 300;
    uint64_t st = test_seed() + 7341;
    coo a = random_coo(n, 0.05, 40, 90, &st), b = random_coo(n, 0.05, 150, 220, &st);
    operands o = operands_make(_i, a, b);
    hisp_context ctx = o.ctx, ref = o.ref;
    count_on(ctx);
    for (int mixed = 0; mixed < 2; mixed++) {
        hisp_op ob = mixed ? HISP_OP_T : HISP_OP_N;
        hisp_matrix R = NULL;
        CK_OK(ref, hisp_matrix_add(HISP_OP_N, o.Ar, ob, o.Br, &R));
        for (int k = 0; k < 3; k++) {
            count_reset();
            hisp_matrix C = NULL;
            CK_OK(ctx, hisp_matrix_add(HISP_OP_N, o.A, ob, o.B, &C));
            hisp_add_stats as;
            CK_OK(ctx, hisp_context_add_stats(ctx, &as));
            if (k > 0) {
                ck_assert_msg(cnt.allocs == 0 && cnt.frees == 0 && cnt.kernels == 0,
                              "mixed %d, call %d: %ld allocations, %ld frees, %ld kernel lookups",
                              mixed, k, cnt.allocs, cnt.frees, cnt.kernels);
                /* a control read per level of each pass (the root's count
                 * comes with the first) */
                ck_assert_int_le(cnt.reads, (long)o.A->hs->depth * (mixed ? 2 : 1));
                ck_assert_uint_le(cnt.zero_bytes, as.bytes_new + (mixed ? as.bytes_reserved : 0));
            }
            ck_assert(device_only(C));
            if (k == 2) root_count_kept(ctx, C);
            test_same_matrix(ctx, C, ref, R, mixed ? "A + B^T, repeated" : "A + B, repeated");
            hisp_matrix_destroy(&C);
        }
        hisp_matrix_destroy(&R);
    }
    /* a chain of kept results: C_k+1 = C_k + B */
    hisp_matrix C[8] = {0}, Cr[8] = {0};
    CK_OK(ref, hisp_matrix_add(HISP_OP_N, o.Ar, HISP_OP_N, o.Br, &Cr[0]));
    CK_OK(ctx, hisp_matrix_add(HISP_OP_N, o.A, HISP_OP_N, o.B, &C[0]));
    count_reset();
    for (int k = 1; k < 8; k++) {
        CK_OK(ref, hisp_matrix_add(HISP_OP_N, Cr[k - 1], HISP_OP_N, o.Br, &Cr[k]));
        CK_OK(ctx, hisp_matrix_add(HISP_OP_N, C[k - 1], HISP_OP_N, o.B, &C[k]));
    }
    ck_assert_msg(cnt.allocs <= 3, "a chain of 7 additions: %ld device allocations", cnt.allocs);
    root_count_kept(ctx, C[7]);
    test_same_matrix(ctx, C[7], ref, Cr[7], "the chain's last sum");
    for (int k = 0; k < 8; k++) {
        hisp_matrix_destroy(&C[k]);
        hisp_matrix_destroy(&Cr[k]);
    }
    ctx->ops = cnt.real;
    operands_free(&o);
}
END_TEST

/* A switch to the reference backend brings device-only results to the
 * host; they read right there. */
START_TEST(test_resid_backend_switch)
{
    if (!test_on_device(_i)) return; /* device residency: nothing to test on the reference */
    const int n = 140;
    uint64_t st = test_seed() + 7341;
    coo a = random_coo(n, 0.05, 0, 30, &st), b = random_coo(n, 0.05, 70, 100, &st);
    operands o = operands_make(_i, a, b);
    hisp_context ctx = o.ctx, ref = o.ref;
    hisp_matrix C = NULL, D = NULL, Cr = NULL, Dr = NULL;
    CK_OK(ctx, hisp_matrix_add(HISP_OP_N, o.A, HISP_OP_N, o.B, &C));
    CK_OK(ctx, hisp_matrix_add(HISP_OP_T, C, HISP_OP_T, o.B, &D));
    CK_OK(ref, hisp_matrix_add(HISP_OP_N, o.Ar, HISP_OP_N, o.Br, &Cr));
    CK_OK(ref, hisp_matrix_add(HISP_OP_T, Cr, HISP_OP_T, o.Br, &Dr));
    ck_assert(device_only(D));
    CK_OK(ctx, hisp_context_set_backend(ctx, HISP_BACKEND_REFERENCE, 0));
    ck_assert(!device_only(C) && !device_only(D));
    ck_assert_ptr_null(C->hs->pool->dev);
    test_same_matrix(ctx, C, ref, Cr, "C after the switch");
    test_same_matrix(ctx, D, ref, Dr, "D after the switch");
    TEST_DESTROY_MATRICES(&C, &D, &Cr, &Dr);
    operands_free(&o);
}
END_TEST

/* ---- edits of device-only trees ------------------------------------------ */

typedef struct {
    int n;
    int32_t r[64], c[64];
    double v[64];
    uint8_t rm[64];
} changes;

/* n changes at several places: inserts at random cells, overwrites of a's
 * entries, removals of b's entries and of random (mostly absent) cells. */
static changes some_changes(int n, const coo *a, const coo *b, int64_t dim, uint64_t *st)
{
    changes c = {.n = n};
    for (int k = 0; k < n; k++) {
        int kind = k % 4;
        const coo *src = kind == 1 ? a : b;
        int64_t e = (int64_t)(test_rand(st) % (uint64_t)src->nnz);
        bool rnd = kind == 0 || kind == 3;
        c.r[k] = rnd ? (int32_t)(test_rand(st) % (uint64_t)dim) : src->r[e];
        c.c[k] = rnd ? (int32_t)(test_rand(st) % (uint64_t)dim) : src->c[e];
        c.v[k] = test_uniform(st);
        c.rm[k] = kind >= 2;
    }
    return c;
}

static hisp_matrix edited(hisp_context ctx, hisp_matrix M, const changes *c, hisp_edit_stats *es)
{
    hisp_matrix R = NULL;
    CK_OK(ctx, hisp_matrix_edit(M, c->n, c->r, c->c, c->v, c->rm, &R, es));
    return R;
}

/* y = op(M) x on ctx against op(R) x on ref, x random. */
static void spmv_same(hisp_context ctx, hisp_matrix M, hisp_context ref, hisp_matrix R, hisp_op op,
                      int64_t n, uint64_t *st, const char *what)
{
    double *xh = malloc((size_t)n * sizeof *xh), *y = malloc((size_t)n * sizeof *y),
           *yr = malloc((size_t)n * sizeof *yr);
    ck_assert(xh && y && yr);
    for (int64_t i = 0; i < n; i++)
        xh[i] = test_uniform(st);
    hisp_vector x = NULL, yv = NULL, xr = NULL, yrv = NULL;
    double one = 1, zero = 0;
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, n, &x));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, n, &yv));
    CK_OK(ref, hisp_vector_create(ref, HISP_F64, n, &xr));
    CK_OK(ref, hisp_vector_create(ref, HISP_F64, n, &yrv));
    CK_OK(ctx, hisp_vector_write(x, xh));
    CK_OK(ref, hisp_vector_write(xr, xh));
    CK_OK(ctx, hisp_spmv(ctx, op, &one, M, x, &zero, yv));
    CK_OK(ref, hisp_spmv(ref, op, &one, R, xr, &zero, yrv));
    CK_OK(ctx, hisp_vector_read(yv, y));
    CK_OK(ref, hisp_vector_read(yrv, yr));
    ck_assert_msg(test_rel_error(HISP_F64, y, yr, n) < 1e-12, "SpMV of %s%s", what,
                  op == HISP_OP_T ? " (transposed)" : "");
    hisp_vector_destroy(&x);
    hisp_vector_destroy(&yv);
    hisp_vector_destroy(&xr);
    hisp_vector_destroy(&yrv);
    free(xh);
    free(y);
    free(yr);
}

static hisp_transfer_stats moved(hisp_context ctx)
{
    hisp_transfer_stats ts;
    CK_OK(ctx, hisp_context_synchronize(ctx));
    CK_OK(ctx, hisp_context_transfers(ctx, &ts));
    return ts;
}

/* D = edit(C) with C = A + B device-only: only the nodes on the touched
 * paths come down (never C's range), the new ones go up, D stays in the
 * device's ranges; its duplicate, transpose and scale move nothing; D's
 * SpMV and CSR, C after, and an addition of an edited tree are right. */
START_TEST(test_resid_edit)
{
    const int n = 256, d = 8, nc = 12;
    uint64_t st = test_seed() + 7351;
    coo a = random_coo(n, 0.05, 30, 60, &st), b = random_coo(n, 0.05, 150, 200, &st);
    operands o = operands_make(_i, a, b);
    hisp_context ctx = o.ctx, ref = o.ref;
    const bool dev = test_on_device(_i);
    hisp_matrix C = NULL, Cr = NULL;
    CK_OK(ctx, hisp_matrix_add(HISP_OP_N, o.A, HISP_OP_N, o.B, &C));
    CK_OK(ref, hisp_matrix_add(HISP_OP_N, o.Ar, HISP_OP_N, o.Br, &Cr));
    if (dev) ck_assert(device_only(C));
    changes ch = some_changes(nc, &a, &b, n, &st), ch2 = some_changes(nc, &b, &a, n, &st);
    hisp_edit_stats es, esr;
    CK_OK(ctx, hisp_context_reset_transfers(ctx));
    hisp_matrix D = edited(ctx, C, &ch, &es), Dr = edited(ref, Cr, &ch, &esr);
    hisp_transfer_stats ts = moved(ctx);
    ck_assert_int_eq(es.inserted, esr.inserted);
    ck_assert_int_eq(es.overwritten, esr.overwritten);
    ck_assert_int_eq(es.removed, esr.removed);
    ck_assert_int_gt(es.inserted + es.overwritten, 0);
    ck_assert_int_gt(es.removed, 0);
    if (dev) {
        const hispi_hisparse *h = C->hs;
        const struct hispi_region *r = hispi_pool_region_of(h->pool, HISPI_REF_OFF(h->root));
        uint64_t range = r->end - r->off;
        uint64_t node = hispi_coo_bytes((uint64_t)d * d, 8) > hispi_dense_bytes(d, 8)
                            ? hispi_coo_bytes((uint64_t)d * d, 8)
                            : hispi_dense_bytes(d, 8);
        uint64_t bound = (uint64_t)h->depth * (uint64_t)nc * node;
        ck_assert_msg(ts.d2h_bytes > 0 && ts.d2h_bytes <= bound && ts.d2h_bytes < range / 2,
                      "the edit read %llu bytes (paths at most %llu, C's range %llu)",
                      (unsigned long long)ts.d2h_bytes, (unsigned long long)bound,
                      (unsigned long long)range);
        ck_assert_uint_le(ts.d2h_calls, 2 * (uint64_t)h->depth * (uint64_t)nc);
        ck_assert_msg(ts.h2d_bytes == es.bytes_added, "up %llu bytes, the edit wrote %llu",
                      (unsigned long long)ts.h2d_bytes, (unsigned long long)es.bytes_added);
        ck_assert(device_only(C) && device_only(D));
        /* the same places again: the fetched nodes are host-valid */
        CK_OK(ctx, hisp_context_reset_transfers(ctx));
        hisp_matrix D2 = edited(ctx, C, &ch, NULL);
        ts = moved(ctx);
        ck_assert_uint_eq(ts.d2h_bytes, 0);
        hisp_matrix_destroy(&D2);
    }
    /* a duplicate of D, transposed and scaled: O(1), nothing moves */
    hisp_matrix G = NULL, Gr = NULL;
    double sc = -1.375;
    CK_OK(ctx, hisp_context_reset_transfers(ctx));
    CK_OK(ctx, hisp_matrix_duplicate(D, HISP_FORMAT_HISPARSE, &G));
    CK_OK(ctx, hisp_matrix_transpose(G));
    CK_OK(ctx, hisp_matrix_scale(G, &sc));
    ts = moved(ctx);
    ck_assert(ts.h2d_bytes == 0 && ts.d2h_bytes == 0 && ts.control_bytes == 0);
    if (dev) ck_assert(device_only(G));
    CK_OK(ref, hisp_matrix_duplicate(Dr, HISP_FORMAT_HISPARSE, &Gr));
    CK_OK(ref, hisp_matrix_transpose(Gr));
    CK_OK(ref, hisp_matrix_scale(Gr, &sc));
    /* a chain: E = edit(D) + B */
    hisp_matrix F = edited(ctx, D, &ch2, NULL), Fr = edited(ref, Dr, &ch2, NULL), E = NULL,
                Er = NULL;
    CK_OK(ctx, hisp_matrix_add(HISP_OP_N, F, HISP_OP_N, o.B, &E));
    CK_OK(ref, hisp_matrix_add(HISP_OP_N, Fr, HISP_OP_N, o.Br, &Er));
    if (dev) ck_assert(device_only(F) && device_only(E) && device_only(D) && device_only(C));
    spmv_same(ctx, D, ref, Dr, HISP_OP_N, n, &st, "D = edit(C)");
    spmv_same(ctx, D, ref, Dr, HISP_OP_T, n, &st, "D = edit(C)");
    spmv_same(ctx, G, ref, Gr, HISP_OP_N, n, &st, "G = -1.375 dup(D)^T");
    spmv_same(ctx, C, ref, Cr, HISP_OP_N, n, &st, "C after D");
    spmv_same(ctx, F, ref, Fr, HISP_OP_T, n, &st, "F = edit(D)");
    spmv_same(ctx, E, ref, Er, HISP_OP_N, n, &st, "E = edit(D) + B");
    if (dev) ck_assert(device_only(D) && device_only(E)); /* SpMVs read nothing back */
    /* the host reads them: the ranges brought up to date */
    test_same_matrix(ctx, D, ref, Dr, "D = edit(C)");
    test_same_matrix(ctx, C, ref, Cr, "C after D");
    test_same_matrix(ctx, G, ref, Gr, "G = -1.375 dup(D)^T");
    test_same_matrix(ctx, E, ref, Er, "E = edit(D) + B");
    test_same_matrix(ctx, F, ref, Fr, "F = edit(D)");
    ck_assert_uint_eq(C->hs->pool->nreg, 0);
    ck_assert_uint_eq(C->hs->pool->nhv, 0);
    TEST_DESTROY_MATRICES(&C, &D, &E, &F, &G, &Cr, &Dr, &Er, &Fr, &Gr);
    operands_free(&o);
}
END_TEST

/* C = A + B and D = edit(C) destroyed in every order before the host reads
 * them: nothing downloaded, the pool back to its size; with A and B gone
 * first, C and D still right. */
/* Destroys *M: no byte comes down (nothing brought up to date). */
static void destroy_unread(hisp_context ctx, hisp_matrix *M)
{
    CK_OK(ctx, hisp_context_synchronize(ctx));
    CK_OK(ctx, hisp_context_reset_transfers(ctx));
    hisp_matrix_destroy(M);
    hisp_transfer_stats ts = moved(ctx);
    ck_assert_msg(ts.d2h_bytes == 0 && ts.control_bytes == 0,
                  "a destroy read %llu bytes (%llu control)", (unsigned long long)ts.d2h_bytes,
                  (unsigned long long)ts.control_bytes);
}

START_TEST(test_resid_edit_destroy)
{
    const int n = 200, d = 8;
    uint64_t st = test_seed() + 7361;
    coo a = random_coo(n, 0.05, 20, 50, &st), b = random_coo(n, 0.05, 120, 160, &st);
    operands o = operands_make(_i, a, b);
    hisp_context ctx = o.ctx, ref = o.ref;
    const bool dev = test_on_device(_i);
    hisp_matrix Cr = NULL;
    CK_OK(ref, hisp_matrix_add(HISP_OP_N, o.Ar, HISP_OP_N, o.Br, &Cr));
    changes ch = some_changes(16, &a, &b, n, &st);
    hisp_matrix Dr = edited(ref, Cr, &ch, NULL);
    uint64_t used0 = o.A->hs->pool->used;
    for (int order = 0; order < 3; order++) {
        hisp_matrix C = NULL, D = NULL, A2 = order == 2 ? make(ctx, &a, d) : o.A,
                    B2 = order == 2 ? make(ctx, &b, d) : o.B;
        CK_OK(ctx, hisp_matrix_add(HISP_OP_N, A2, HISP_OP_N, B2, &C));
        D = edited(ctx, C, &ch, NULL);
        if (dev) ck_assert(device_only(D));
        spmv_same(ctx, D, ref, Dr, HISP_OP_N, n, &st, "D before the destroys");
        if (order == 0) { /* C first */
            destroy_unread(ctx, &C);
            spmv_same(ctx, D, ref, Dr, HISP_OP_T, n, &st, "D after C went");
            destroy_unread(ctx, &D);
        } else if (order == 1) { /* D first */
            destroy_unread(ctx, &D);
            spmv_same(ctx, C, ref, Cr, HISP_OP_N, n, &st, "C after D went");
            destroy_unread(ctx, &C);
        } else { /* the operands first, then C; the host reads D last */
            destroy_unread(ctx, &A2);
            destroy_unread(ctx, &B2);
            spmv_same(ctx, C, ref, Cr, HISP_OP_N, n, &st, "C after A and B went");
            destroy_unread(ctx, &C);
            spmv_same(ctx, D, ref, Dr, HISP_OP_N, n, &st, "D after A, B and C went");
        }
        if (order == 2) {
            test_same_matrix(ctx, D, ref, Dr, "D after A, B and C went");
            hisp_matrix_destroy(&D);
            continue;
        }
        hispi_pool_trim(o.A->hs->pool);
        ck_assert_msg(o.A->hs->pool->used == used0, "order %d: the pool holds %llu bytes, was %llu",
                      order, (unsigned long long)o.A->hs->pool->used, (unsigned long long)used0);
        ck_assert_uint_eq(o.A->hs->pool->nreg, 0);
        ck_assert_uint_eq(o.A->hs->pool->nhv, 0);
    }
    test_same_matrix(ctx, o.A, ref, o.Ar, "A after its sums and edits went");
    TEST_DESTROY_MATRICES(&Cr, &Dr);
    operands_free(&o);
}
END_TEST

/* Every device allocation failing while edits of a device-only C upload
 * their nodes (the device copy must grow): an out-of-device-memory status,
 * no D, the pool as before, C right; the edit then succeeds. */
START_TEST(test_resid_edit_oom)
{
    if (!test_on_device(_i)) return; /* device residency: nothing to test on the reference */
    const int n = 256;
    uint64_t st = test_seed() + 7371;
    coo a = random_coo(n, 0.04, 0, 40, &st), b = random_coo(n, 0.04, 100, 140, &st);
    operands o = operands_make(_i, a, b);
    hisp_context ctx = o.ctx, ref = o.ref;
    hisp_matrix C = NULL, Cr = NULL;
    CK_OK(ctx, hisp_matrix_add(HISP_OP_N, o.A, HISP_OP_N, o.B, &C));
    CK_OK(ref, hisp_matrix_add(HISP_OP_N, o.Ar, HISP_OP_N, o.Br, &Cr));
    changes ch = some_changes(64, &a, &b, n, &st);
    for (int k = 0; k < 64; k++) /* inserts and overwrites only: more new nodes */
        ch.rm[k] = 0;
    hisp_matrix Dr = edited(ref, Cr, &ch, NULL), kept[64] = {0};
    hispi_pool *p = C->hs->pool;
    bool failed = false;
    for (int i = 0; i < 64 && !failed; i++) {
        uint64_t used = p->used;
        size_t nreg = p->nreg;
        hisp_matrix D = NULL;
        hispi_pool_dev_fail_after(-1);
        hisp_status s = hisp_matrix_edit(C, ch.n, ch.r, ch.c, ch.v, ch.rm, &D, NULL);
        hispi_pool_dev_fail_after(0);
        if (s == HISP_SUCCESS) {
            kept[i] = D; /* its nodes stay: the device copy fills up */
            continue;
        }
        ck_assert_msg(s == HISP_ERR_OUT_OF_DEVICE_MEMORY, "edit %d: %s", i, hisp_status_string(s));
        ck_assert_ptr_null(D);
        ck_assert_uint_eq(p->used, used);
        ck_assert_uint_eq(p->nreg, nreg);
        failed = true;
    }
    ck_assert_msg(failed, "no edit had to grow the device copy");
    spmv_same(ctx, C, ref, Cr, HISP_OP_N, n, &st, "C after a failed edit");
    hisp_matrix D = edited(ctx, C, &ch, NULL);
    spmv_same(ctx, D, ref, Dr, HISP_OP_N, n, &st, "D after a failed edit");
    spmv_same(ctx, kept[0], ref, Dr, HISP_OP_T, n, &st, "an earlier D");
    test_same_matrix(ctx, D, ref, Dr, "D after a failed edit");
    test_same_matrix(ctx, C, ref, Cr, "C after a failed edit");
    for (int i = 0; i < 64; i++)
        hisp_matrix_destroy(&kept[i]);
    TEST_DESTROY_MATRICES(&C, &D, &Cr, &Dr);
    operands_free(&o);
}
END_TEST

Suite *suite_hisparse_resid(void)
{
    Suite *s = suite_create("hisparse_resid");
    int n = test_targets(NULL);
    TCase *tc = test_tcase(s, "resident", 600);
    tcase_add_loop_test(tc, test_resid_chain, 0, n);
    tcase_add_loop_test(tc, test_resid_destroy_orders, 0, n);
    tcase_add_loop_test(tc, test_resid_device_oom, 0, n);
    tcase_add_loop_test(tc, test_resid_transfers, 0, n);
    tcase_add_loop_test(tc, test_resid_backend_switch, 0, n);
    tcase_add_loop_test(tc, test_resid_repeat_scratch, 0, n);
    tcase_add_loop_test(tc, test_resid_edit, 0, n);
    tcase_add_loop_test(tc, test_resid_edit_destroy, 0, n);
    tcase_add_loop_test(tc, test_resid_edit_oom, 0, n);
    return s;
}
