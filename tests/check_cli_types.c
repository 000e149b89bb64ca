/* The CLI's entry types and generator specs: complex, quaternion and 3x3-block
 * files through stats, convert and spmv (--x, --y, --out, --op n|t|h and
 * --transpose against products computed here), gen:KIND[:N[:SEED]] in every
 * command that takes a matrix, hisp gen of the compound kinds, the --type
 * aliases, clear refusals for type/command pairs without kernels, and the
 * shared JSON fields (auto backend, "device" object, "type"). */
#include "cli_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- files written through the library ------------------------------------ */

typedef struct {
    hisp_type t;
    int64_t m, n, nnz;
    int comps;
    int32_t *r, *c;
    double *v; /* nnz * comps, the values as written (f64 components) */
} coo;

static void coo_free(coo *a)
{
    free(a->r);
    free(a->c);
    free(a->v);
}

/* m x n of type t (c64, q64; f64 for 3x3 blocks: dense 3x3 blocks of a 3m x
 * 3n real matrix), about 3 entries per row, fresh values, written to path. */
static coo write_matrix(hisp_context ctx, hisp_type t, int64_t m, int64_t n, uint64_t *seed,
                        const char *path)
{
    coo a = {.t = t, .m = m, .n = n, .comps = hisp_type_components(t)};
    bool blocks = t == HISP_B3X3_F64;
    int64_t cap = 3 * m + 1;
    a.r = malloc((size_t)cap * 4 * 9);
    a.c = malloc((size_t)cap * 4 * 9);
    a.v = malloc((size_t)cap * 9 * 8);
    ck_assert(a.r && a.c && a.v);
    for (int64_t i = 0; i < m; i++)
        for (int k = 0; k < 3; k++) {
            if (i % 4 == 1 && k) continue; /* a few short rows */
            int32_t j = (int32_t)(test_rand(seed) % (uint64_t)n);
            bool dup = false;
            for (int64_t q = 0; q < a.nnz; q++)
                dup |= a.r[q] == i && a.c[q] == j;
            if (dup) continue;
            a.r[a.nnz] = (int32_t)i;
            a.c[a.nnz] = j;
            for (int q = 0; q < a.comps; q++)
                a.v[a.nnz * a.comps + q] = test_uniform(seed);
            a.nnz++;
        }
    hisp_matrix A = NULL;
    if (!blocks) {
        CK_OK(ctx, hisp_matrix_create_coo(ctx, t, m, n, a.nnz, a.r, a.c, a.v, &A));
    } else { /* the real 3m x 3n matrix of the blocks */
        int32_t *rr = malloc((size_t)a.nnz * 9 * 4), *cc = malloc((size_t)a.nnz * 9 * 4);
        for (int64_t q = 0; q < a.nnz; q++)
            for (int e = 0; e < 9; e++) {
                rr[q * 9 + e] = a.r[q] * 3 + e / 3;
                cc[q * 9 + e] = a.c[q] * 3 + e % 3;
            }
        CK_OK(ctx, hisp_matrix_create_coo(ctx, HISP_F64, 3 * m, 3 * n, a.nnz * 9, rr, cc, a.v, &A));
        free(rr);
        free(cc);
    }
    CK_OK(ctx, hisp_matrix_write_mtx(A, path));
    hisp_matrix_destroy(&A);
    return a;
}

/* The vector type's scalars per entry and the entries of a vector of n
 * matrix columns. */
static int vcomps(hisp_type t)
{
    return t == HISP_B3X3_F64 ? 3 : hisp_type_components(t);
}

static double *write_vector(hisp_context ctx, hisp_type t, int64_t n, uint64_t *seed,
                            const char *path)
{
    int vc = vcomps(t);
    hisp_type vt = t == HISP_B3X3_F64 ? HISP_F64 : t;
    int64_t len = t == HISP_B3X3_F64 ? 3 * n : n;
    double *x = malloc((size_t)(n * vc + 1) * 8);
    for (int64_t i = 0; i < n * vc; i++)
        x[i] = test_uniform(seed);
    hisp_vector v = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, vt, len, &v));
    CK_OK(ctx, hisp_vector_write(v, x));
    CK_OK(ctx, hisp_vector_write_mtx(v, path));
    hisp_vector_destroy(&v);
    return x;
}

static double *read_vector(hisp_context ctx, hisp_type t, int64_t n, const char *path)
{
    hisp_type vt = t == HISP_B3X3_F64 ? HISP_F64 : t;
    int64_t len = t == HISP_B3X3_F64 ? 3 * n : n, got = 0;
    hisp_vector v = NULL;
    CK_OK(ctx, hisp_vector_read_mtx(ctx, path, vt, &v));
    CK_OK(ctx, hisp_vector_size(v, &got));
    ck_assert_int_eq(got, len);
    double *y = malloc((size_t)(n * vcomps(t) + 1) * 8);
    CK_OK(ctx, hisp_vector_read(v, y));
    hisp_vector_destroy(&v);
    return y;
}

/* acc += a * b: complex, quaternion (Hamilton), 3x3 block (row-major) times
 * a 3-vector; conj conjugates a (complex, quaternion) or transposes the
 * block. */
static void muladd(hisp_type t, const double *a0, bool conj, bool trblock, const double *b,
                   double *acc)
{
    double a[9];
    int comps = hisp_type_components(t);
    memcpy(a, a0, (size_t)comps * 8);
    if (t == HISP_B3X3_F64) {
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                a[3 * i + j] = trblock ? a0[3 * j + i] : a0[3 * i + j];
        for (int i = 0; i < 3; i++)
            acc[i] += a[3 * i] * b[0] + a[3 * i + 1] * b[1] + a[3 * i + 2] * b[2];
        return;
    }
    if (conj)
        for (int q = 1; q < comps; q++)
            a[q] = -a[q];
    if (t == HISP_C64) {
        acc[0] += a[0] * b[0] - a[1] * b[1];
        acc[1] += a[0] * b[1] + a[1] * b[0];
    } else {
        acc[0] += a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
        acc[1] += a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
        acc[2] += a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
        acc[3] += a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
    }
}

/* y = alpha*op(A)*x + beta*y0 (op 'n', 't', 'h') in double. */
static double *product(const coo *a, char op, double alpha, const double *x, double beta,
                       const double *y0)
{
    int vc = vcomps(a->t);
    int64_t rows = op == 'n' ? a->m : a->n;
    double *acc = calloc((size_t)(rows * vc + 1), 8), *y = malloc((size_t)(rows * vc + 1) * 8);
    for (int64_t k = 0; k < a->nnz; k++) {
        int64_t i = op == 'n' ? a->r[k] : a->c[k], j = op == 'n' ? a->c[k] : a->r[k];
        muladd(a->t, a->v + k * a->comps, op == 'h', op != 'n', x + j * vc, acc + i * vc);
    }
    for (int64_t i = 0; i < rows * vc; i++)
        y[i] = alpha * acc[i] + (y0 ? beta * y0[i] : 0);
    free(acc);
    return y;
}

static double rel_err(const double *y, const double *ref, int64_t n)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        num += (y[i] - ref[i]) * (y[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static void ck_has(const run_result *r, const char *what)
{
    ck_assert_msg(strstr(r->out, what) || strstr(r->err, what),
                  "'%s' not in the output:\n%.2000s\nstderr:\n%.2000s", what, r->out, r->err);
}

/* ---- stats and convert ---------------------------------------------------- */

START_TEST(test_stats_convert_every_type)
{
    hisp_context ctx = test_default_context();
    uint64_t seed = test_seed() + 2401;
    static const hisp_type ts[] = {HISP_C64, HISP_Q64};
    for (int ti = 0; ti < 2; ti++) {
        hisp_type t = ts[ti];
        coo a = write_matrix(ctx, t, 17, 13, &seed, tmp("A.mtx"));
        run_result r = run_hisp("stats", tmp("A.mtx"), "--json", NULL);
        CK_RUN(r, 0);
        ck_assert(json_valid(r.out));
        char want[64];
        snprintf(want, sizeof want, "\"type\": \"%s\"", hisp_type_name(t));
        ck_has(&r, want);
        ck_assert_int_eq((int64_t)test_json_double(r.out, "nnz"), a.nnz);
        run_free(&r);
        /* --type converts on reading (c32 / q32) */
        r = run_hisp("stats", tmp("A.mtx"), "--type", t == HISP_C64 ? "c32" : "q32", "--json",
                     NULL);
        CK_RUN(r, 0);
        ck_has(&r, t == HISP_C64 ? "\"type\": \"c32\"" : "\"type\": \"q32\"");
        run_free(&r);
        /* .mtx -> .hisp -> .mtx keeps every value */
        r = run_hisp("convert", tmp("A.mtx"), "-o", tmp("A.hisp"), NULL);
        CK_RUN(r, 0);
        run_free(&r);
        r = run_hisp("stats", tmp("A.hisp"), "--json", NULL);
        CK_RUN(r, 0);
        ck_has(&r, want);
        run_free(&r);
        r = run_hisp("convert", tmp("A.hisp"), "-o", tmp("B.mtx"), "--json", NULL);
        CK_RUN(r, 0);
        ck_has(&r, want);
        run_free(&r);
        /* a .hisp file keeps its type: another --type is refused */
        r = run_hisp("convert", tmp("A.hisp"), "-o", tmp("C.mtx"), "--type", "f64", NULL);
        CK_RUN(r, 2);
        ck_has(&r, hisp_type_name(t));
        run_free(&r);
        hisp_matrix B = NULL;
        CK_OK(ctx, hisp_matrix_read_mtx(ctx, tmp("B.mtx"), t, &B, NULL));
        CK_OK(ctx, hisp_matrix_convert(B, HISP_FORMAT_COO));
        hisp_matrix_info bi;
        CK_OK(ctx, hisp_matrix_get_info(B, &bi));
        ck_assert_int_eq(bi.nnz, a.nnz);
        const int32_t *br, *bc;
        const void *bv;
        CK_OK(ctx, hisp_matrix_host_arrays(B, NULL, &br, &bc, &bv));
        for (int64_t k = 0; k < a.nnz; k++) {
            int64_t q = 0;
            while (q < bi.nnz && !(br[q] == a.r[k] && bc[q] == a.c[k]))
                q++;
            ck_assert_int_lt(q, bi.nnz);
            ck_assert_mem_eq((const double *)bv + q * a.comps, a.v + k * a.comps,
                             (size_t)a.comps * 8);
        }
        hisp_matrix_destroy(&B);
        coo_free(&a);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* ---- spmv ------------------------------------------------------------------ */

/* Every target: c64, q64, b3x3_f64 with --x, --y, --alpha, --beta, --out and
 * op n, t, h (and --transpose) against the product computed here. */
START_TEST(test_spmv_every_type_and_op)
{
    const test_target *tt;
    test_targets(&tt);
    const char *be = hisp_backend_name(tt[_i].kind);
    char dev[16];
    snprintf(dev, sizeof dev, "%d", tt[_i].device);
    hisp_context ctx = test_default_context();
    uint64_t seed = test_seed() + 2500 + (uint64_t)_i;
    static const hisp_type ts[] = {HISP_C64, HISP_Q64, HISP_B3X3_F64};
    static const char *const ops[] = {"n", "t", "h", "transpose"};
    for (int ti = 0; ti < 3; ti++) {
        hisp_type t = ts[ti];
        const char *tname = t == HISP_B3X3_F64 ? "b3x3_f64" : NULL; /* else from the file */
        int64_t m = 19, n = 14;
        coo a = write_matrix(ctx, t, m, n, &seed, tmp("A.mtx"));
        for (int oi = 0; oi < 4; oi++) {
            char op = oi == 3 ? 't' : ops[oi][0];
            int64_t xn = op == 'n' ? n : m, yn = op == 'n' ? m : n;
            double *x = write_vector(ctx, t, xn, &seed, tmp("x.mtx"));
            double *y0 = write_vector(ctx, t, yn, &seed, tmp("y0.mtx"));
            const char *args[24];
            int k = 0;
            args[k++] = "spmv";
            args[k++] = tmp("A.mtx");
            args[k++] = "--backend";
            args[k++] = be;
            args[k++] = "--device";
            args[k++] = dev;
            args[k++] = "--x";
            args[k++] = tmp("x.mtx");
            args[k++] = "--y";
            args[k++] = tmp("y0.mtx");
            args[k++] = "--alpha";
            args[k++] = "0.75";
            args[k++] = "--beta";
            args[k++] = "-0.5";
            args[k++] = "--out";
            args[k++] = tmp("y.mtx");
            args[k++] = "--check";
            args[k++] = "--json";
            if (oi == 3) {
                args[k++] = "--transpose";
            } else {
                args[k++] = "--op";
                args[k++] = ops[oi];
            }
            if (tname) {
                args[k++] = "--type";
                args[k++] = tname;
            }
            args[k] = NULL;
            run_result r = run_hisp(args[0], args[1], args[2], args[3], args[4], args[5], args[6],
                                    args[7], args[8], args[9], args[10], args[11], args[12],
                                    args[13], args[14], args[15], args[16], args[17], args[18],
                                    args[19], args[20], args[21], NULL);
            CK_RUN(r, 0);
            ck_assert(json_valid(r.out));
            ck_has(&r, "\"ok\": true");
            char want[64];
            snprintf(want, sizeof want, "\"op\": \"%c\"", op == 'n' ? 'N' : op == 't' ? 'T' : 'H');
            ck_has(&r, want);
            snprintf(want, sizeof want, "\"type\": \"%s\"", hisp_type_name(t));
            ck_has(&r, want);
            run_free(&r);
            double *y = read_vector(ctx, t, yn, tmp("y.mtx"));
            double *ref = product(&a, op, 0.75, x, -0.5, y0);
            double err = rel_err(y, ref, yn * vcomps(t));
            ck_assert_msg(err < 1e-12, "%s %s op %s: error %.3e", tt[_i].label, hisp_type_name(t),
                          ops[oi], err);
            free(y);
            free(ref);
            free(x);
            free(y0);
        }
        /* x of the length op = n needs, given to op = t, is refused with the sizes */
        if (m != n) {
            double *x = write_vector(ctx, t, n, &seed, tmp("x.mtx"));
            run_result r =
                run_hisp("spmv", tmp("A.mtx"), "--backend", be, "--device", dev, "--x",
                         tmp("x.mtx"), "--op", "t", tname ? "--type" : NULL, tname, NULL);
            CK_RUN(r, 2);
            ck_has(&r, "op(A) needs");
            run_free(&r);
            free(x);
        }
        coo_free(&a);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

/* ---- generators ------------------------------------------------------------- */

START_TEST(test_gen_compound_and_specs)
{
    /* hisp gen writes the compound kinds, in their family's types */
    static const char *const kinds[4][3] = {{"qsurface", "quaternion", "q64"},
                                            {"helmholtz", "complex", "c64"},
                                            {"fem3x3", "real", "b3x3_f64"},
                                            {"elastic3d", "real", "b3x3_f64"}};
    for (int k = 0; k < 4; k++) {
        run_result r = run_hisp("gen", kinds[k][0], "--n", "3", "-o", tmp("g.mtx"), "--json", NULL);
        CK_RUN(r, 0);
        ck_assert(json_valid(r.out));
        char want[64];
        snprintf(want, sizeof want, "\"type\": \"%s\"", kinds[k][2]);
        ck_has(&r, want);
        run_free(&r);
        char *text = slurp(tmp("g.mtx"));
        ck_assert_msg(strstr(text, kinds[k][1]) != NULL, "%s: banner %.80s", kinds[k][0], text);
        free(text);
    }
    run_result r = run_hisp("gen", "helmholtz", "--type", "c32", "-o", tmp("g.mtx"), NULL);
    CK_RUN(r, 0);
    run_free(&r);
    r = run_hisp("gen", "qsurface", NULL); /* no -o */
    CK_RUN(r, 1);
    run_free(&r);
    /* elastic3d: n^3 nodes, 27-point blocks, b3x3_f32 too; n = 1 refused */
    r = run_hisp("gen", "elastic3d", "--n", "4", "--type", "b3x3_f32", "-o", tmp("e.mtx"), "--json",
                 NULL);
    CK_RUN(r, 0);
    ck_has(&r, "\"type\": \"b3x3_f32\"");
    ck_assert_int_eq((long long)test_json_double(r.out, "rows"), 3 * 64);
    ck_assert_int_eq((long long)test_json_double(r.out, "nnz"), 9 * 10 * 10 * 10);
    run_free(&r);
    r = run_hisp("gen", "elastic3d", "--n", "1", "-o", tmp("e.mtx"), NULL);
    CK_RUN(r, 2);
    ck_assert_msg(strstr(r.err, "elastic3d: n = 1, needs n >= 2"), "%s", r.err);
    run_free(&r);
    r = run_hisp("gen", "elastic3d", "--type", "q64", "-o", tmp("e.mtx"), NULL);
    CK_RUN(r, 2);
    run_free(&r);
    r = run_hisp("spmv", "gen:elastic3d:3", "--op", "t", "--check", "--backend", "reference", NULL);
    CK_RUN(r, 0);
    run_free(&r);
    /* gen:KIND with and without N and SEED reads like a file; one seed, one matrix */
    r = run_hisp("stats", "gen:random:50:7", "--json", NULL);
    CK_RUN(r, 0);
    double nnz7 = test_json_double(r.out, "nnz");
    ck_has(&r, "\"generator\": \"gen:random:50:7\"");
    run_free(&r);
    r = run_hisp("gen", "random", "--n", "50", "--seed", "7", "-o", tmp("r.mtx"), NULL);
    CK_RUN(r, 0);
    run_free(&r);
    r = run_hisp("stats", tmp("r.mtx"), "--json", NULL);
    CK_RUN(r, 0);
    ck_assert(test_json_double(r.out, "nnz") == nnz7);
    run_free(&r);
    r = run_hisp("stats", "gen:poisson2d", "--json", NULL);
    CK_RUN(r, 0);
    ck_assert(test_json_double(r.out, "rows") > 0);
    run_free(&r);
    static const char *const bad[] = {"gen:", "gen:nosuch:4", "gen:poisson2d:0", "gen:poisson2d:x",
                                      "gen:poisson2d:4:-1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = run_hisp("stats", bad[i], NULL);
        CK_RUN(r, 2);
        run_free(&r);
    }
}
END_TEST

/* gen:KIND[:N[:SEED]] wherever a matrix is read. */
START_TEST(test_gen_spec_in_every_command)
{
    const char *o = tmp("o.mtx");
    run_result r = run_hisp("stats", "gen:helmholtz:4", NULL);
    CK_RUN(r, 0);
    ck_has(&r, "c64");
    run_free(&r);
    r = run_hisp("convert", "gen:qsurface:3:5", "-o", o, NULL);
    CK_RUN(r, 0);
    run_free(&r);
    r = run_hisp("spmv", "gen:fem3x3:3", "--op", "h", "--check", "--backend", "reference", NULL);
    CK_RUN(r, 0);
    run_free(&r);
    r = run_hisp("gen", "poisson2d", "--n", "3", "-o", tmp("p.mtx"), NULL);
    CK_RUN(r, 0);
    run_free(&r);
    r = run_hisp("edit", "gen:poisson2d:5", "--remove", tmp("p.mtx"), "-o", tmp("e.mtx"), NULL);
    CK_RUN(r, 0);
    run_free(&r);
    r = run_hisp("add", "gen:helmholtz:4", "gen:helmholtz:4:2", "-o", tmp("s.mtx"), "--backend",
                 "reference", NULL);
    CK_RUN(r, 0);
    run_free(&r);
    r = run_hisp("mspmv", "gen:poisson2d:6", "--devices", "2", "--check", "--backend", "reference",
                 NULL);
    CK_RUN(r, 0);
    run_free(&r);
    r = run_hisp("solve", "gen:poisson2d:6", "--method", "cg", "--backend", "reference", NULL);
    CK_RUN(r, 0);
    run_free(&r);
    setenv("HISP_OPTIONS", "cache_dir=off", 1);
    r = run_hisp("tune", "gen:helmholtz:4", "--backend", "reference", "--json", NULL);
    CK_RUN(r, 0);
    ck_has(&r, "\"type\": \"c64\""); /* from the generator: no --type needed */
    run_free(&r);
    unsetenv("HISP_OPTIONS");
}
END_TEST

/* ---- aliases and refusals ------------------------------------------------------ */

START_TEST(test_type_aliases)
{
    static const char *const opts[] = {"--type", "--entry", "--precision"};
    for (int i = 0; i < 3; i++) {
        run_result r = run_hisp("stats", "gen:poisson2d:4", opts[i], "f32", "--json", NULL);
        CK_RUN(r, 0);
        ck_has(&r, "\"type\": \"f32\"");
        run_free(&r);
        r = run_hisp("spmv", "gen:helmholtz:4", opts[i], "c32", "--backend", "reference", "--json",
                     NULL);
        CK_RUN(r, 0);
        ck_has(&r, "\"type\": \"c32\"");
        run_free(&r);
    }
    /* the old spellings of --precision */
    run_result r = run_hisp("stats", "gen:poisson2d:4", "--precision", "single", "--json", NULL);
    CK_RUN(r, 0);
    ck_has(&r, "\"type\": \"f32\"");
    run_free(&r);
    r = run_hisp("stats", "gen:poisson2d:4", "--type", "f32", "--precision", "f32", NULL);
    CK_RUN(r, 1);
    run_free(&r);
    r = run_hisp("stats", "gen:poisson2d:4", "--type", "f16", NULL);
    CK_RUN(r, 2);
    ck_has(&r, "f16");
    run_free(&r);
    /* mspmv --gen KIND is gen:KIND */
    r = run_hisp("mspmv", "--gen", "poisson2d", "--n", "5", "--devices", "2", "--backend",
                 "reference", "--json", NULL);
    CK_RUN(r, 0);
    ck_assert_int_eq((int64_t)test_json_double(r.out, "rows"), 25);
    run_free(&r);
    /* mspmv takes --op too (h is t for its real entries) */
    r = run_hisp("mspmv", "gen:banded:40", "--op", "h", "--devices", "2", "--check", "--backend",
                 "reference", "--json", NULL);
    CK_RUN(r, 0);
    ck_has(&r, "\"transpose\": true");
    ck_has(&r, "\"ok\": true");
    run_free(&r);
    /* --transpose is --op t; --op with --transpose is one too many */
    r = run_hisp("spmv", "gen:helmholtz:4", "--transpose", "--op", "t", NULL);
    CK_RUN(r, 1);
    run_free(&r);
    r = run_hisp("spmv", "gen:helmholtz:4", "--op", "x", NULL);
    CK_RUN(r, 2);
    run_free(&r);
}
END_TEST

START_TEST(test_unsupported_pairs)
{
    hisp_context ctx = test_default_context();
    uint64_t seed = test_seed() + 2600;
    coo a = write_matrix(ctx, HISP_C64, 9, 9, &seed, tmp("c.mtx"));
    coo_free(&a);
    hisp_context_destroy(&ctx);
    struct {
        const char *args[8];
        const char *says;
    } cases[] = {
        {{"mspmv", tmp("c.mtx"), "--backend", "reference"},
         "mspmv: c64 matrices are not supported"},
        {{"demo", "--type", "q64"}, "demo: q64 matrices are not supported"},
        {{"spmv", tmp("c.mtx"), "--format", "hisparse", "--backend", "reference"},
         "c64 matrices are not supported"},
        {{"gen", "poisson2d", "--type", "c64", "-o", tmp("x.mtx")}, "not c64"},
        {{"gen", "qsurface", "--type", "c64", "-o", tmp("x.mtx")}, "not c64"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *const *v = cases[i].args;
        run_result r = run_hisp(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
        CK_RUN(r, 2);
        ck_has(&r, cases[i].says);
        run_free(&r);
    }
}
END_TEST

/* ---- one behaviour: default backend, JSON shape ------------------------------- */

START_TEST(test_shared_json_fields)
{
    /* the backend auto picks (what spmv reports without --backend) is what
     * every device command picks */
    run_result r = run_hisp("spmv", "gen:poisson2d:5", "--json", NULL);
    CK_RUN(r, 0);
    const char *p = strstr(r.out, "\"backend\": \"");
    ck_assert(p);
    char want[64];
    snprintf(want, sizeof want, "%.*s", (int)(strchr(p + 12, '"') - p + 1), p);
    run_free(&r);
    static const char *const cmds[][6] = {
        {"spmv", "gen:helmholtz:4", "--json"},
        {"add", "gen:poisson2d:5", "gen:poisson2d:5", "-o", NULL, "--json"},
        {"solve", "gen:poisson2d:5", "--method", "cg", "--json"},
    };
    for (int i = 0; i < 3; i++) {
        const char *v[6];
        memcpy(v, cmds[i], sizeof v);
        if (i == 1) v[4] = tmp("s.mtx");
        r = run_hisp(v[0], v[1], v[2], v[3], v[4], v[5], NULL);
        CK_RUN(r, 0);
        ck_assert(json_valid(r.out));
        ck_has(&r, want);
        ck_has(&r, "\"device\": {");
        ck_has(&r, "\"type\": \"");
        ck_assert_msg(!strstr(r.out, "\"precision\""), "%s: %s", v[0], r.out);
        run_free(&r);
    }
}
END_TEST

Suite *suite_cli_types(void)
{
    Suite *s = suite_create("cli_types");
    TCase *tc = test_tcase(s, "host", 600);
    tcase_add_checked_fixture(tc, cli_setup, cli_teardown);
    tcase_add_test(tc, test_stats_convert_every_type);
    tcase_add_test(tc, test_gen_compound_and_specs);
    tcase_add_test(tc, test_gen_spec_in_every_command);
    tcase_add_test(tc, test_type_aliases);
    tcase_add_test(tc, test_unsupported_pairs);
    tcase_add_test(tc, test_shared_json_fields);
    int n = test_targets(NULL);
    TCase *dev = test_tcase(s, "targets", 600);
    tcase_add_checked_fixture(dev, cli_setup, cli_teardown);
    tcase_add_loop_test(dev, test_spmv_every_type_and_op, 0, n);
    return s;
}
