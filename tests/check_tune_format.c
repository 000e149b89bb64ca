/* The format choice (hisp_matrix_choose_format, spmv --format auto, hisp
 * tune's formats table): the table always holds CSR and the choice is never
 * slower than it there; every format of the table computes the reference's
 * product on every target; the plan cache answers a second choice without
 * timing, keys device, type, op and structure apart, and a damaged entry
 * only costs a new choice. */
#include "hispi.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *cache_dir = "";

static void use_temp_cache(hisp_context ctx)
{
    cache_dir = test_temp_cache(ctx, "fmt");
}

static int progress_calls;
static void count_progress(void *user, const hisp_format_progress_info *p)
{
    (void)user;
    ck_assert(p->stage && p->done >= 0 && p->elapsed_ms >= 0);
    progress_calls++;
}

/* Scalars per vector entry and the vector type of A's type. */
static void vec_shape(hisp_type t, hisp_type *vt, int *per, int *comps)
{
    ck_assert_int_eq(hisp_compound_vector_type(t, vt, per), 0);
    *comps = hisp_type_components(*vt);
}

/* y = op(A) x with result r of the table (fresh random x), compared with
 * the reference backend's product of the same CSR arrays. */
static void check_result(hisp_context ctx, hisp_matrix A, hisp_op op, const hisp_format_result *r,
                         uint64_t *seed, const char *what)
{
    hisp_matrix_info mi;
    CK_OK(ctx, hisp_matrix_get_info(A, &mi));
    hisp_type vt;
    int per, comps;
    vec_shape(mi.type, &vt, &per, &comps);
    int64_t nx = (op == HISP_OP_N ? mi.ncols : mi.nrows) * per;
    int64_t ny = (op == HISP_OP_N ? mi.nrows : mi.ncols) * per;
    size_t ss = hisp_type_size(vt) / (size_t)comps;
    void *xh = malloc((size_t)(nx * comps + 1) * ss), *yh = malloc((size_t)(ny * comps + 1) * ss);
    void *yr = malloc((size_t)(ny * comps + 1) * ss);
    ck_assert(xh && yh && yr);
    for (int64_t j = 0; j < nx * comps; j++) {
        double d = test_uniform(seed);
        if (ss == 4)
            ((float *)xh)[j] = (float)d;
        else
            ((double *)xh)[j] = d;
    }
    double one = 1, zero = 0;
    float onef = 1, zerof = 0;
    const void *a = ss == 4 ? (const void *)&onef : (const void *)&one;
    const void *b = ss == 4 ? (const void *)&zerof : (const void *)&zero;
    hisp_vector x = NULL, y = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, vt, nx, &x));
    CK_OK(ctx, hisp_vector_create(ctx, vt, ny, &y));
    CK_OK(ctx, hisp_vector_write(x, xh));
    if (r->kind == HISP_CHOICE_FORMAT) {
        hisp_matrix H = NULL;
        CK_OK(ctx, hisp_matrix_duplicate(A, r->format, &H));
        CK_OK(ctx, hisp_spmv(ctx, op, a, H, x, b, y));
        CK_OK(ctx, hisp_spmv(ctx, op, a, H, x, b, y)); /* a replay where the backend has one */
        hisp_matrix_destroy(&H);
    } else if (r->kind == HISP_CHOICE_VARIANT) {
        ck_assert_int_eq(op, HISP_OP_N);
        CK_OK(ctx, hisp_spmv_variant(ctx, &r->variant, a, A, x, b, y));
    } else {
        CK_OK(ctx, hisp_spmv(ctx, op, a, A, x, b, y));
    }
    CK_OK(ctx, hisp_vector_read(y, yh));
    /* the reference: the same arrays on the reference backend */
    hisp_context rc = test_default_context();
    const int64_t *ptr;
    const int32_t *cols;
    const void *vals;
    CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_CSR));
    CK_OK(ctx, hisp_matrix_host_arrays(A, &ptr, NULL, &cols, &vals));
    hisp_matrix R = NULL;
    hisp_vector rx = NULL, ry = NULL;
    CK_OK(rc, hisp_matrix_create_csr(rc, mi.type, mi.nrows, mi.ncols, ptr, cols, vals, &R));
    CK_OK(rc, hisp_vector_create(rc, vt, nx, &rx));
    CK_OK(rc, hisp_vector_create(rc, vt, ny, &ry));
    CK_OK(rc, hisp_vector_write(rx, xh));
    CK_OK(rc, hisp_spmv(rc, op, a, R, rx, b, ry));
    CK_OK(rc, hisp_vector_read(ry, yr));
    double err = test_rel_error(ss == 4 ? HISP_F32 : HISP_F64, yh, yr, ny * comps);
    char name[160];
    CK_OK(ctx, hisp_format_result_name(r, name, sizeof name));
    ck_assert_msg(err <= (ss == 4 ? 1e-5 : 1e-12), "%s: %s: error %g (seed %llu)", what, name, err,
                  (unsigned long long)test_seed());
    hisp_vector_destroy(&rx);
    hisp_vector_destroy(&ry);
    hisp_matrix_destroy(&R);
    hisp_context_destroy(&rc);
    hisp_vector_destroy(&x);
    hisp_vector_destroy(&y);
    free(xh);
    free(yh);
    free(yr);
}

/* The table holds CSR, is sorted, and the choice is its fastest with
 * choice.ms <= CSR's; every entry computes the right product. */
static void check_choice(hisp_context ctx, hisp_matrix A, hisp_op op, uint64_t *seed,
                         const char *what)
{
    hisp_format_result table[16];
    int count = 0;
    hisp_format_choice c;
    hisp_format_options o = {0, 1, count_progress, NULL, NULL, 0};
    progress_calls = 0;
    CK_OK(ctx, hisp_matrix_choose_format(ctx, A, op, &o, table, 16, &count, &c));
    ck_assert_int_eq(c.from_cache, 0);
    ck_assert_int_eq(count, c.tried);
    ck_assert_int_ge(count, 1);
    ck_assert_int_gt(progress_calls, 0);
    int csr = -1;
    for (int i = 0; i < count; i++) {
        if (table[i].kind == HISP_CHOICE_CSR) csr = i;
        if (i) ck_assert(!(table[i].ms < table[i - 1].ms));
    }
    ck_assert_msg(csr >= 0, "%s: no CSR row", what);
    hisp_matrix_info mi;
    CK_OK(ctx, hisp_matrix_get_info(A, &mi));
    if (mi.type == HISP_F32 || mi.type == HISP_F64) { /* every format that offers itself */
        bool sell = false, tree = false;
        for (int i = 0; i < count; i++) {
            sell |= table[i].kind == HISP_CHOICE_FORMAT && table[i].format == HISP_FORMAT_SELL;
            tree |= table[i].kind == HISP_CHOICE_FORMAT && table[i].format == HISP_FORMAT_HISPARSE;
        }
        ck_assert_msg(sell && tree, "%s: SELL %d, HiSparse %d in the table", what, sell, tree);
    }
    ck_assert(isfinite(table[csr].ms));
    ck_assert(table[csr].ms == c.csr_ms);
    ck_assert_msg(c.best.ms <= table[csr].ms, "%s: chosen %g ms > CSR %g ms", what, c.best.ms,
                  table[csr].ms);
    /* the choice is the table's fastest, or CSR when nothing beats it by 3 % */
    ck_assert(c.best.ms == table[0].ms ||
              (c.best.kind == HISP_CHOICE_CSR && !(table[0].ms < 0.97 * c.csr_ms)));
    for (int i = 0; i < count; i++)
        if (isfinite(table[i].ms)) check_result(ctx, A, op, &table[i], seed, what);
    check_result(ctx, A, op, &c.best, seed, what);
}

START_TEST(test_choice)
{
    uint64_t seed = test_seed() + 2401 + (uint64_t)_i;
    hisp_context ctx = test_context(_i);
    char what[400];
    static const hisp_type types[2] = {HISP_F32, HISP_F64};
    for (int k = 0; k < 2; k++) {
        hisp_matrix A = test_random_matrix(ctx, types[k], 300, 240, 0.03, &seed);
        for (int op = 0; op < 2; op++) {
            snprintf(what, sizeof what, "%s %s op %c", test_label(_i), hisp_type_name(types[k]),
                     op ? 'T' : 'N');
            check_choice(ctx, A, (hisp_op)op, &seed, what);
        }
        hisp_matrix_destroy(&A);
    }
    /* a compound type: CSR (the default variant) against the search's leaders */
    hisp_matrix C = NULL;
    CK_OK(ctx,
          hisp_matrix_generate_compound(ctx, HISP_CGEN_HELMHOLTZ, 10, seed % 1000, HISP_C64, &C));
    snprintf(what, sizeof what, "%s c64", test_label(_i));
    check_choice(ctx, C, HISP_OP_N, &seed, what);
    hisp_matrix_destroy(&C);
    hisp_context_destroy(&ctx);
}
END_TEST

/* One full row among short ones: an ELL or SELL layout of the compound
 * search would take n^2 entries (over 10^11 here); the choice leaves such
 * layouts out and still times the rest. */
START_TEST(test_long_row)
{
    uint64_t seed = test_seed() + 2402 + (uint64_t)_i;
    hisp_context ctx = test_context(_i);
    const int64_t n = 300000;
    int64_t *ptr = malloc((size_t)(n + 1) * sizeof *ptr);
    int32_t *col = malloc((size_t)(2 * n) * sizeof *col);
    double *val = malloc((size_t)(2 * n) * sizeof *val);
    ck_assert(ptr && col && val);
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        ptr[i] = k;
        if (i == n / 2) {
            for (int64_t j = 0; j < n; j++, k++) {
                col[k] = (int32_t)j;
                val[k] = 1.0 / (double)(j + 1);
            }
        } else {
            col[k] = (int32_t)i;
            val[k++] = 2.0;
        }
    }
    ptr[n] = k;
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_create_csr(ctx, HISP_F64, n, n, ptr, col, val, &A));
    check_choice(ctx, A, HISP_OP_N, &seed, "one full row");
    hisp_matrix_destroy(&A);
    free(ptr);
    free(col);
    free(val);
    hisp_context_destroy(&ctx);
}
END_TEST

static hisp_format_choice choose(hisp_context ctx, hisp_matrix A, hisp_op op)
{
    hisp_format_choice c;
    hisp_format_options o = {0, 0, count_progress, NULL, NULL, 0};
    CK_OK(ctx, hisp_matrix_choose_format(ctx, A, op, &o, NULL, 0, NULL, &c));
    return c;
}

/* A hit answers without timing; the key tells device, type, op and
 * structure apart. */
START_TEST(test_cache)
{
    const test_target *tt;
    int n = test_targets(&tt);
    uint64_t seed = test_seed() + 2501 + (uint64_t)_i;
    hisp_context ctx = test_context(_i);
    use_temp_cache(ctx);
    hisp_matrix A = test_random_matrix(ctx, HISP_F64, 200, 200, 0.05, &seed);
    hisp_format_choice c1 = choose(ctx, A, HISP_OP_N);
    ck_assert_int_eq(c1.from_cache, 0);
    ck_assert_int_gt(c1.tried, 0);
    progress_calls = 0;
    hisp_format_choice c2 = choose(ctx, A, HISP_OP_N);
    ck_assert_int_eq(c2.from_cache, 1);
    ck_assert_int_eq(progress_calls, 0); /* nothing timed */
    ck_assert_int_eq(c2.tried, 0);
    ck_assert_str_eq(c2.key, c1.key);
    ck_assert_int_eq(c2.best.kind, c1.best.kind);
    ck_assert(fabs(c2.best.ms - c1.best.ms) <= 1e-8 * c1.best.ms); /* %.9g in the entry */
    ck_assert(fabs(c2.csr_ms - c1.csr_ms) <= 1e-8 * c1.csr_ms);
    if (c1.best.kind == HISP_CHOICE_VARIANT)
        ck_assert(!memcmp(&c2.best.variant, &c1.best.variant, sizeof c1.best.variant));
    /* the op */
    hisp_format_choice t1 = choose(ctx, A, HISP_OP_T);
    ck_assert_int_eq(t1.from_cache, 0);
    ck_assert_str_ne(t1.key, c1.key);
    ck_assert_int_eq(choose(ctx, A, HISP_OP_T).from_cache, 1);
    /* the type: the same entries in f32 */
    hisp_matrix F = NULL;
    const int64_t *ptr;
    const int32_t *cols;
    const void *vals;
    CK_OK(ctx, hisp_matrix_host_arrays(A, &ptr, NULL, &cols, &vals));
    float *fv = malloc((size_t)ptr[200] * sizeof *fv + 1);
    for (int64_t k = 0; k < ptr[200]; k++)
        fv[k] = (float)((const double *)vals)[k];
    CK_OK(ctx, hisp_matrix_create_csr(ctx, HISP_F32, 200, 200, ptr, cols, fv, &F));
    free(fv);
    hisp_format_choice f1 = choose(ctx, F, HISP_OP_N);
    ck_assert_int_eq(f1.from_cache, 0);
    ck_assert_str_ne(f1.key, c1.key);
    hisp_matrix_destroy(&F);
    /* the structure: the same row lengths with the columns moved (the
     * compound plans' signature is the same) is another matrix here */
    hisp_matrix B = NULL;
    CK_OK(ctx, hisp_matrix_host_arrays(A, &ptr, NULL, &cols, &vals));
    int32_t *bc = malloc((size_t)ptr[200] * sizeof *bc + 1);
    for (int64_t k = 0; k < ptr[200]; k++)
        bc[k] = (cols[k] + 1) % 200;
    CK_OK(ctx, hisp_matrix_create_csr(ctx, HISP_F64, 200, 200, ptr, bc, vals, &B));
    free(bc);
    char kb[512];
    CK_OK(ctx, hisp_tune_plan_key(ctx, B, kb, sizeof kb));
    ck_assert_msg(strncmp(c1.key, kb, strlen(kb)) == 0, "same signature expected: %s / %s", c1.key,
                  kb);
    hisp_format_choice b1 = choose(ctx, B, HISP_OP_N);
    ck_assert_int_eq(b1.from_cache, 0);
    ck_assert_str_ne(b1.key, c1.key);
    hisp_matrix_destroy(&B);
    /* the device: every other target keys apart and times anew */
    for (int j = 0; j < n; j++) {
        if (j == _i) continue;
        hisp_context other = test_context(j);
        hisp_matrix O = NULL;
        CK_OK(ctx, hisp_matrix_host_arrays(A, &ptr, NULL, &cols, &vals));
        CK_OK(other, hisp_matrix_create_csr(other, HISP_F64, 200, 200, ptr, cols, vals, &O));
        hisp_format_choice o1 = choose(other, O, HISP_OP_N);
        ck_assert_msg(o1.from_cache == 0, "%s after %s: a hit", tt[j].label, tt[_i].label);
        ck_assert_str_ne(o1.key, c1.key);
        hisp_matrix_destroy(&O);
        hisp_context_destroy(&other);
        break; /* one other target is enough */
    }
    /* the key, kept with A, goes with a conversion and comes back the same */
    CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_COO));
    CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_CSR));
    hisp_format_choice c4 = choose(ctx, A, HISP_OP_N);
    ck_assert_int_eq(c4.from_cache, 1);
    ck_assert_str_eq(c4.key, c1.key);
    /* no cache: timed again, nothing read */
    hisp_format_choice c3;
    hisp_format_options nc = {0, 1, NULL, NULL, NULL, 0};
    CK_OK(ctx, hisp_matrix_choose_format(ctx, A, HISP_OP_N, &nc, NULL, 0, NULL, &c3));
    ck_assert_int_eq(c3.from_cache, 0);
    hisp_matrix_destroy(&A);
    test_drop_temp_cache();
    hisp_context_destroy(&ctx);
}
END_TEST

static void write_bytes(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, n, f), n);
    fclose(f);
}

static unsigned char *read_bytes(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    static unsigned char buf[4096];
    *n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return buf;
}

/* A damaged entry (flipped, truncated, extended, a folder, valid but for
 * another key or with bad text) is a miss: timed again and replaced. */
START_TEST(test_damaged)
{
    uint64_t seed = test_seed() + 2601;
    hisp_context ctx = test_context(0); /* the reference: the cache rules are the same */
    use_temp_cache(ctx);
    hisp_matrix A = test_random_matrix(ctx, HISP_F64, 150, 150, 0.05, &seed);
    hisp_format_choice c = choose(ctx, A, HISP_OP_N);
    char path[1024];
    CK_OK(ctx, hisp_format_choice_cache_path(ctx, c.key, path, sizeof path));
    size_t n = 0;
    unsigned char good[4096];
    const unsigned char *got = read_bytes(path, &n);
    memcpy(good, got, n);
    ck_assert_uint_gt(n, HISPI_CACHE_HEADER);
    size_t plen = n - HISPI_CACHE_HEADER;
    char payload[4096];
    memcpy(payload, good + HISPI_CACHE_HEADER, plen);
    payload[plen] = 0;
    ck_assert_msg(strstr(payload, "hisp-format 1\nkey "), "payload: %s", payload);
    for (int d = 0; d < 7; d++) {
        unsigned char bad[4096];
        memcpy(bad, good, n);
        if (d == 0) { /* a flipped byte in the payload */
            bad[n - 3] ^= 0x20;
            write_bytes(path, bad, n);
        } else if (d == 1) { /* truncated */
            write_bytes(path, bad, n - 7);
        } else if (d == 2) { /* extended */
            bad[n] = 'x';
            write_bytes(path, bad, n + 1);
        } else if (d == 3) { /* a folder at the path */
            ck_assert_int_eq(unlink(path), 0);
            ck_assert_int_eq(mkdir(path, 0755), 0);
        } else if (d == 4) { /* valid, but another key */
            char *k = strstr(payload, "key ") + 4;
            char save = *k;
            *k = save == 'x' ? 'y' : 'x';
            ck_assert_int_eq(hispi_cache_write(path, payload, plen), 0);
            *k = save;
        } else if (d == 5) { /* valid, but an unknown kind */
            char p2[4096];
            snprintf(p2, sizeof p2, "%s", payload);
            char *kd = strstr(p2, "kind ");
            ck_assert_ptr_nonnull(kd);
            memcpy(kd + 5, "zzz", 3);
            ck_assert_int_eq(hispi_cache_write(path, p2, strlen(p2)), 0);
        } else { /* valid, but the last line cut */
            ck_assert_int_eq(hispi_cache_write(path, payload, plen - 2), 0);
        }
        hisp_format_choice c2 = choose(ctx, A, HISP_OP_N);
        ck_assert_msg(c2.from_cache == 0, "damage %d read as a hit", d);
        struct stat sb;
        ck_assert_int_eq(stat(path, &sb), 0);
        ck_assert_msg(S_ISREG(sb.st_mode), "damage %d not replaced", d);
        ck_assert_int_eq(choose(ctx, A, HISP_OP_N).from_cache, 1); /* rewritten whole */
    }
    hisp_matrix_destroy(&A);
    test_drop_temp_cache();
    hisp_context_destroy(&ctx);
}
END_TEST

START_TEST(test_errors)
{
    uint64_t seed = test_seed() + 2701;
    hisp_context ctx = test_context(0);
    hisp_matrix A = test_random_matrix(ctx, HISP_F64, 40, 40, 0.1, &seed);
    hisp_format_choice c;
    hisp_format_options nc = {0, 1, NULL, NULL, NULL, 0};
    ck_assert_int_eq(hisp_matrix_choose_format(ctx, A, HISP_OP_N, &nc, NULL, 0, NULL, NULL),
                     HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_matrix_choose_format(ctx, A, (hisp_op)7, &nc, NULL, 0, NULL, &c),
                     HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_matrix_choose_format(ctx, NULL, HISP_OP_N, &nc, NULL, 0, NULL, &c),
                     HISP_ERR_INVALID_HANDLE);
    hisp_matrix H = NULL;
    CK_OK(ctx, hisp_matrix_duplicate(A, HISP_FORMAT_HISPARSE, &H));
    ck_assert_int_eq(hisp_matrix_choose_format(ctx, H, HISP_OP_N, &nc, NULL, 0, NULL, &c),
                     HISP_ERR_UNSUPPORTED);
    hisp_matrix Q = NULL;
    CK_OK(ctx, hisp_matrix_generate_compound(ctx, HISP_CGEN_QSURFACE, 4, 1, HISP_Q32, &Q));
    ck_assert_int_eq(hisp_matrix_choose_format(ctx, Q, HISP_OP_T, &nc, NULL, 0, NULL, &c),
                     HISP_ERR_UNSUPPORTED);
    hisp_error_info e;
    CK_OK(ctx, hisp_context_last_error(ctx, &e));
    ck_assert_msg(strstr(e.message, "q32"), "%s", e.message);
    /* operands untouched: A is still CSR and runs */
    hisp_matrix_info mi;
    CK_OK(ctx, hisp_matrix_get_info(A, &mi));
    ck_assert_int_eq(mi.format, HISP_FORMAT_CSR);
    hisp_format_result r = {.kind = HISP_CHOICE_CSR};
    char name[64];
    CK_OK(ctx, hisp_format_result_name(&r, name, sizeof name));
    ck_assert_str_eq(name, "csr");
    r.kind = HISP_CHOICE_VARIANT;
    r.variant = (hisp_variant){{HISP_OUTER_SELL16, HISP_SOA, HISP_AOS}, {1, 64, 2}};
    CK_OK(ctx, hisp_format_result_name(&r, name, sizeof name));
    ck_assert_str_eq(name, "SELL16-SoA-AoS dynamic:64x2");
    ck_assert_int_eq(hisp_format_result_name(&r, name, 4), HISP_ERR_INVALID_ARGUMENT);
    hisp_matrix_destroy(&Q);
    hisp_matrix_destroy(&H);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

/* spmv --format auto (miss, then hit) and tune's formats table and its
 * progress lines on stderr when it is not a terminal. */
START_TEST(test_cli)
{
    const test_target *tt;
    test_targets(&tt);
    if (!test_hisp_bin()) {
        test_skip("format choice CLI: the hisp program is not built");
        return;
    }
    const char *b = hisp_backend_name(tt[_i].kind);
    int dev = tt[_i].device;
    use_temp_cache(NULL); /* the hisp program only */
    static char out[1 << 16];
    char spec[300];
    snprintf(spec, sizeof spec, "/tmp/hisp-fmt-%ld-%d.mtx", (long)getpid(), _i);
    int rc = test_run_cli(out, sizeof out, "gen poisson2d --n 24 -o %s", spec);
    ck_assert_int_eq(rc, 0);
    rc =
        test_run_cli(out, sizeof out,
                     "spmv %s --format auto --backend %s --device %d --check --json", spec, b, dev);
    ck_assert_msg(rc == 0 && strstr(out, "\"ok\": true"), "spmv auto: %d %s", rc, out);
    ck_assert_msg(strstr(out, "\"from_cache\": false"), "%s", out);
    rc = test_run_cli(out, sizeof out,
                      "spmv %s --format auto --transpose --backend %s --device %d --check "
                      "--repeat 3",
                      spec, b, dev);
    ck_assert_msg(rc == 0 && strstr(out, "auto: ") && strstr(out, "ok"), "spmv auto T: %d %s", rc,
                  out);
    rc =
        test_run_cli(out, sizeof out,
                     "spmv %s --format auto --backend %s --device %d --check --json", spec, b, dev);
    ck_assert_msg(rc == 0 && strstr(out, "\"from_cache\": true"), "spmv auto again: %d %s", rc,
                  out);
    rc = test_run_cli(out, sizeof out,
                      "spmv gen:helmholtz:8 --entry c64 --format auto --backend %s --device %d "
                      "--check",
                      b, dev);
    ck_assert_msg(rc == 0 && strstr(out, "format     auto: ") && strstr(out, "ok"),
                  "spmv --entry auto: %d %s", rc, out);
    /* tune: the formats table holds csr (and hisparse for f64); progress
     * lines on a stderr that is a file */
    char err[300];
    snprintf(err, sizeof err, "%s/tune.err", cache_dir);
    rc = test_run_cli(out, sizeof out,
                      "tune %s --entry f64 --backend %s --device %d --no-cache 2>%s; exit $?", spec,
                      b, dev, err);
    ck_assert_msg(rc == 0 && strstr(out, "formats") && strstr(out, "csr") &&
                      strstr(out, "hisparse") && strstr(out, "best"),
                  "tune: %d %s", rc, out);
    size_t n = 0;
    const char *e = (const char *)read_bytes(err, &n);
    char log[4097];
    memcpy(log, e, n);
    log[n] = 0;
    ck_assert_msg(strstr(log, "hisp: tune: variants") && strstr(log, "hisp: tune: formats") &&
                      strstr(log, "best") && strstr(log, "left") && !strchr(log, '\r'),
                  "progress: %s", log);
    rc = test_run_cli(out, sizeof out, "tune %s --entry f64 --backend %s --device %d --json", spec,
                      b, dev);
    ck_assert_msg(rc == 0 && strstr(out, "\"formats\"") && strstr(out, "\"csr_ms\"") &&
                      strstr(out, "\"from_cache\": true"),
                  "tune json: %s", out);
    rc = test_run_cli(out, sizeof out,
                      "solve %s --method cg --format auto --backend %s --device %d --json", spec, b,
                      dev);
    ck_assert_msg(rc == 0 && strstr(out, "\"format\": \"auto: "), "solve auto: %d %s", rc, out);
    ck_assert_int_eq(test_run_cli(out, sizeof out, "spmv %s --format fastest", spec), 2);
    ck_assert_int_eq(test_run_cli(out, sizeof out, "solve %s --format auto --devices 2", spec), 1);
    unlink(spec);
    test_drop_temp_cache();
}
END_TEST

Suite *suite_tune_format(void)
{
    Suite *s = suite_create("tune_format");
    TCase *tc = tcase_create("host");
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_damaged);
    suite_add_tcase(s, tc);
    int n = test_targets(NULL);
    TCase *dev = test_tcase(s, "targets", 1200);
    tcase_add_loop_test(dev, test_choice, 0, n);
    tcase_add_loop_test(dev, test_long_row, 0, n);
    tcase_add_loop_test(dev, test_cache, 0, n);
    tcase_add_loop_test(dev, test_cli, 0, n);
    return s;
}
