/* `hisp bench` run as a child process: every backend and device of this
 * machine in one table (reference and OpenCL rows checked against the
 * reference within the type's tolerance; CUDA and cuSPARSE listed as
 * skipped, with the reason, where there is no CUDA device), each --op, the
 * SVG bar chart, and bad inputs; and `hisp demo`'s sizes for the device. */
#include "cli_run.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* The rows of a bench --json output: the text of each result object. */
typedef struct {
    int n;
    char *row[32];
} rows;

/* A row starts with its "backend" member, the one right before its
 * "kernel" (its "device" object names the backend too). */
static const char *row_start(const char *from, const char *kernel)
{
    const char *start = NULL;
    for (const char *p = from; (p = strstr(p, "\"backend\": ")) && p < kernel; p++)
        start = p;
    return start;
}

static rows split_rows(const char *json)
{
    rows r = {0};
    const char *p = strstr(json, "\"results\": [");
    ck_assert_msg(p, "no results in\n%s", json);
    const char *k = strstr(p, "\"kernel\": ");
    while (k && r.n < 32) {
        const char *s = row_start(p, k), *next = strstr(k + 1, "\"kernel\": ");
        ck_assert_msg(s, "a row without its backend in\n%s", json);
        const char *e = next ? row_start(k, next) : s + strlen(s);
        r.row[r.n] = strndup(s, (size_t)(e - s));
        ck_assert(r.row[r.n]);
        r.n++;
        p = k;
        k = next;
    }
    return r;
}

static void rows_free(rows *r)
{
    for (int i = 0; i < r->n; i++)
        free(r->row[i]);
    r->n = 0;
}

static bool has(const char *row, const char *key, const char *value)
{
    char pat[160];
    snprintf(pat, sizeof pat, "\"%s\": %s", key, value);
    return strstr(row, pat) != NULL;
}

/* Rows of backend b (kernel k) and how many of them ran ("ok"). */
static int count_rows(const rows *r, const char *b, const char *k, int *ok)
{
    char bq[64], kq[64];
    snprintf(bq, sizeof bq, "\"%s\"", b);
    snprintf(kq, sizeof kq, "\"%s\"", k);
    int n = 0;
    *ok = 0;
    for (int i = 0; i < r->n; i++)
        if (has(r->row[i], "backend", bq) && has(r->row[i], "kernel", kq)) {
            n++;
            if (has(r->row[i], "status", "\"ok\"")) (*ok)++;
        }
    return n;
}

/* Every row that ran is within the tolerance (methods other than CG: their
 * residual is checked, by bench itself); the others say why not. */
static void check_rows(const char *out, const rows *r)
{
    double tol = test_json_double(out, "tolerance"), repeat = test_json_double(out, "repeat");
    bool x_checked = !strstr(out, "\"method\": ") || strstr(out, "\"method\": \"cg\"");
    for (int i = 0; i < r->n; i++) {
        const char *row = r->row[i];
        if (has(row, "status", "\"ok\"")) {
            double e = test_json_double(row, "rel_error"), ms = test_json_double(row, "ms");
            ck_assert_msg(!x_checked || e <= tol, "error %g > %g in\n%s", e, tol, row);
            ck_assert_msg(ms > 0 && test_json_double(row, "gbps") > 0, "%s", row);
            ck_assert_msg(test_json_double(row, "copy_gbps") > 0, "%s", row);
            /* a row past its time budget makes fewer calls, never none */
            double calls = test_json_double(row, "calls");
            ck_assert_msg(calls >= 1 && calls <= repeat, "calls %g of %g in\n%s", calls, repeat,
                          row);
            /* null: a solve not checked, where it diverges on the reference */
            ck_assert_msg(has(row, "ok", "true") || has(row, "ok", "null"), "%s", row);
            ck_assert(has(row, "device", "{"));
        } else {
            ck_assert_msg(has(row, "status", "\"skipped\""), "%s", row);
            ck_assert_msg(!has(row, "reason", "\"\""), "%s", row);
            ck_assert(strstr(row, "\"reason\": \""));
        }
    }
}

/* The devices of backend k this machine has: hisp bench runs on each,
 * whatever HISP_TEST_BACKENDS limits the other tests to. */
static int targets_of(hisp_backend_kind k)
{
    hisp_context ctx = NULL;
    int n = 0;
    ck_assert_int_eq(hisp_context_create(&ctx), HISP_SUCCESS);
    if (hisp_backend_device_count(ctx, k, &n) != HISP_SUCCESS) n = 0;
    hisp_context_destroy(&ctx);
    return n;
}

/* The spmv table on every backend: reference and each OpenCL device ran
 * and agree with the reference; CUDA and cuSPARSE ran or say why not. */
START_TEST(test_bench_all)
{
    uint64_t st = test_seed() ^ 0xbe4c;
    char spec[64];
    snprintf(spec, sizeof spec, "gen:random:%d:%" PRIu64, 500 + (int)(test_rand(&st) % 500),
             test_rand(&st) % 1000000);
    run_result r = run_hisp("bench", spec, "--backends", "all", "--json", "--repeat", "2", NULL);
    CK_RUN(r, 0);
    ck_assert_msg(json_valid(r.out), "%s", r.out);
    ck_assert(strstr(r.out, "\"op\": \"spmv\""));
    rows rs = split_rows(r.out);
    check_rows(r.out, &rs);
    int ok = 0;
    ck_assert_int_eq(count_rows(&rs, "reference", "hisp", &ok), 1);
    ck_assert_int_eq(ok, 1);
    int ncl = targets_of(HISP_BACKEND_OPENCL), ncu = targets_of(HISP_BACKEND_CUDA);
    ck_assert_int_eq(count_rows(&rs, "opencl", "hisp", &ok), ncl ? ncl : 1);
    ck_assert_int_eq(ok, ncl);
    ck_assert_int_eq(count_rows(&rs, "cuda", "hisp", &ok), ncu ? ncu : 1);
    ck_assert_int_eq(ok, ncu);
    ck_assert_int_eq(count_rows(&rs, "cuda", "cusparse", &ok), ncu ? ncu : 1);
    ck_assert_int_eq(ok, ncu);
    if (!ncl) test_skip("bench OpenCL rows: no OpenCL device");
    if (!ncu) {
        /* listed as skipped with the reason, in the table too */
        run_free(&r);
        r = run_hisp("bench", spec, "--backends", "cuda,cusparse", "--repeat", "1", NULL);
        CK_RUN(r, 0);
        ck_assert_msg(strstr(r.out, "cuda ") && strstr(r.out, "cusparse ") &&
                          strstr(r.out, "skipped: "),
                      "%s", r.out);
        ck_assert(!strstr(r.out, "reference:")); /* the oracle runs, unlisted */
        test_skip("bench CUDA and cuSPARSE rows: no CUDA device");
    }
    rows_free(&rs);
    run_free(&r);
}
END_TEST

/* A nonsymmetric, diagonally dominant n x n file (BiCGSTAB converges). */
static void write_nonsymmetric(const char *path, int n, uint64_t *st)
{
    FILE *f = fopen(path, "w");
    ck_assert(f);
    fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n", n, n, 3 * n - 2);
    for (int i = 0; i < n; i++) {
        if (i > 0) fprintf(f, "%d %d %.17g\n", i + 1, i, -1 + 0.5 * test_uniform(st));
        fprintf(f, "%d %d %.17g\n", i + 1, i + 1, 4 + test_uniform(st));
        if (i + 1 < n) fprintf(f, "%d %d %.17g\n", i + 1, i + 2, -0.5 + 0.25 * test_uniform(st));
    }
    fclose(f);
}

/* Each operation, f64 and f32, on the reference and OpenCL. */
START_TEST(test_bench_ops)
{
    uint64_t st = test_seed() ^ 0x0b5;
    char rnd[64], grid[64];
    snprintf(rnd, sizeof rnd, "gen:random:%d:%" PRIu64, 300 + (int)(test_rand(&st) % 300),
             test_rand(&st) % 1000000);
    snprintf(grid, sizeof grid, "gen:poisson2d:%d", 20 + (int)(test_rand(&st) % 20));
    char cplx[64], quat[64], block[64];
    uint64_t seed = test_rand(&st) % 1000000;
    snprintf(cplx, sizeof cplx, "gen:helmholtz:%d:%" PRIu64, 15 + (int)(test_rand(&st) % 10), seed);
    snprintf(quat, sizeof quat, "gen:qsurface:%d:%" PRIu64, 8 + (int)(test_rand(&st) % 6), seed);
    snprintf(block, sizeof block, "gen:fem3x3:%d:%" PRIu64, 4 + (int)(test_rand(&st) % 3), seed);
    const char *nonsym = tmp("nonsym.mtx"), *lsq = tmp("lsq.mtx");
    write_nonsymmetric(nonsym, 200 + (int)(test_rand(&st) % 100), &st);
    int lm = 200 + (int)(test_rand(&st) % 100), ln = 60 + (int)(test_rand(&st) % 40);
    FILE *f = fopen(lsq, "w"); /* least squares: lm x ln, a diagonal and 3 random per row */
    ck_assert(f);
    fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n", lm, ln, 2 * lm);
    for (int i = 0; i < lm; i++) {
        int j = (int)(test_rand(&st) % (uint64_t)ln);
        fprintf(f, "%d %d %.17g\n", i + 1, i % ln + 1, 2 + test_uniform(&st));
        fprintf(f, "%d %d %.17g\n", i + 1, (j + i % ln + 1) % ln + 1, test_uniform(&st));
    }
    fclose(f);
    static const struct {
        const char *op, *type;
        int spec; /* 0 random, 1 grid, 2 nonsymmetric file, 3..5 the compound generators, 6
                     a least-squares file */
        const char *method;
        bool given; /* --method method */
    } cases[] = {{"spmv", "c64", 3, NULL, false},
                 {"spmv", "q32", 4, NULL, false},
                 {"spmv", "b3x3_f64", 5, NULL, false},
                 {"solve", "c64", 3, "bicgstab", false},
                 {"solve", "b3x3_f32", 5, "bicgstab", false},
                 {"spmv", "f32", 0, NULL, false},
                 {"spmvt", "f64", 0, NULL, false},
                 {"spmvt", "f32", 0, NULL, false},
                 {"spmvt", "c64", 3, NULL, false},
                 {"add", "f64", 0, NULL, false},
                 {"add", "f32", 0, NULL, false},
                 {"solve", "f64", 1, "cg", false},
                 {"solve", "f32", 1, "cg", false},
                 {"solve", "f64", 2, "bicgstab", false},
                 {"solve", "c64", 3, "gmres", true},
                 {"solve", "f64", 2, "gmres", true},
                 {"solve", "f64", 1, "bicgstab", true},
                 {"solve", "f64", 6, "lsqr", true},
                 {"solve", "f32", 6, "lsqr", true},
                 {"spmm", "f64", 0, NULL, false},
                 {"spmm", "f32", 1, NULL, false},
                 {"spmm", "c64", 3, NULL, false}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const char *specs[] = {rnd, grid, nonsym, cplx, quat, block, lsq};
        const char *spec = specs[cases[c].spec];
        run_result r =
            run_hisp("bench", spec, "--op", cases[c].op, "--type", cases[c].type, "--backends",
                     "reference,opencl", "--repeat", "2", "--iterations", "20", "--json",
                     cases[c].given ? "--method" : NULL, cases[c].method, NULL);
        CK_RUN(r, 0);
        ck_assert_msg(json_valid(r.out), "%s", r.out);
        char want[64];
        snprintf(want, sizeof want, "\"op\": \"%s\"", cases[c].op);
        ck_assert_msg(strstr(r.out, want), "%s", r.out);
        snprintf(want, sizeof want, "\"type\": \"%s\"", cases[c].type);
        ck_assert_msg(strstr(r.out, want), "%s", r.out);
        if (strcmp(cases[c].op, "spmm") == 0) /* the default block */
            ck_assert_msg(strstr(r.out, "\"columns\": 16"), "%s", r.out);
        if (cases[c].method) {
            snprintf(want, sizeof want, "\"method\": \"%s\"", cases[c].method);
            ck_assert_msg(strstr(r.out, want), "%s: %s", spec, r.out);
            ck_assert(strstr(r.out, "\"iterations\": 20"));
            ck_assert((strcmp(cases[c].method, "gmres") == 0) ==
                      (strstr(r.out, "\"restart\": 30") != NULL));
            /* unchecked only where the method diverges on the reference (its row
             * comes first): 20 iterations of a random indefinite system may */
            if (strstr(r.out, "\"ok\": null"))
                ck_assert_msg(test_json_double(r.out, "relative_residual") >= 1, "case %zu %s", c,
                              r.out);
        }
        rows rs = split_rows(r.out);
        check_rows(r.out, &rs);
        int ok = 0;
        ck_assert_int_eq(count_rows(&rs, "reference", "hisp", &ok), 1);
        ck_assert_int_eq(ok, 1);
        count_rows(&rs, "opencl", "hisp", &ok);
        ck_assert_int_eq(ok, targets_of(HISP_BACKEND_OPENCL));
        ck_assert_int_eq(
            rs.n, 1 + (targets_of(HISP_BACKEND_OPENCL) ? targets_of(HISP_BACKEND_OPENCL) : 1));
        rows_free(&rs);
        run_free(&r);
    }
}
END_TEST

/* bench's vectors: scalar component i is splitmix64(7, i) in [-1, 1)
 * (bench/solve_inputs.py's uniform(7, n)). */
static double bench_x(uint64_t i)
{
    uint64_t z = 7 + (i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1p-52 - 1.0;
}

/* --op spmv-dot: each row's dots (fused and two calls) equal x.(A x)
 * computed here from the file's entries and bench's x, in the entry type;
 * q is checked against the reference by bench (rel_error); the three
 * times are there. */
START_TEST(test_bench_spmv_dot)
{
    uint64_t st = test_seed() ^ 0x5d07;
    int n = 300 + (int)(test_rand(&st) % 300), per = 4;
    const char *F = tmp("sd.mtx");
    FILE *f = fopen(F, "w");
    ck_assert(f);
    fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n", n, n, n * per);
    int *ri = malloc(sizeof *ri * (size_t)(n * per)), *ci = malloc(sizeof *ci * (size_t)(n * per));
    double *v = malloc(sizeof *v * (size_t)(n * per));
    ck_assert(ri && ci && v);
    for (int i = 0, k = 0; i < n; i++)
        for (int e = 0, off = 0; e < per; e++, k++) { /* columns i + increasing offsets */
            ri[k] = i;
            off += e ? 1 + (int)(test_rand(&st) % 7) : 0;
            ci[k] = (i + off) % n;
            v[k] = e ? test_uniform(&st) : 3 + test_uniform(&st);
            fprintf(f, "%d %d %.17g\n", i + 1, ci[k] + 1, v[k]);
        }
    fclose(f);
    static const char *const types[] = {"f64", "f32"};
    for (int t = 0; t < 2; t++) {
        bool single = t == 1;
        /* x.(A x) in long double from the entries bench holds (f32: rounded) */
        long double dot = 0;
        for (int k = 0; k < n * per; k++) {
            double a = single ? (float)v[k] : v[k];
            double xj = single ? (float)bench_x((uint64_t)ci[k]) : bench_x((uint64_t)ci[k]);
            double xi = single ? (float)bench_x((uint64_t)ri[k]) : bench_x((uint64_t)ri[k]);
            dot += (long double)xi * a * xj;
        }
        run_result r = run_hisp("bench", F, "--op", "spmv-dot", "--type", types[t], "--backends",
                                "reference,opencl", "--repeat", "7", "--json", NULL);
        CK_RUN(r, 0);
        ck_assert_msg(json_valid(r.out), "%s", r.out);
        ck_assert(strstr(r.out, "\"op\": \"spmv-dot\""));
        rows rs = split_rows(r.out);
        check_rows(r.out, &rs);
        double tol = single ? 1e-4 : 1e-10;
        int ran = 0;
        for (int i = 0; i < rs.n; i++) {
            const char *row = rs.row[i];
            if (!has(row, "status", "\"ok\"")) continue;
            ran++;
            double d = test_json_double(row, "dot"), du = test_json_double(row, "dot_unfused");
            ck_assert_msg(fabs(d - (double)dot) <= tol * fabs((double)dot),
                          "dot %.17g, want %.17Lg\n%s", d, dot, row);
            ck_assert_msg(fabs(du - (double)dot) <= tol * fabs((double)dot), "%.17g\n%s", du, row);
            ck_assert_msg(test_json_double(row, "dot_error") <= tol, "%s", row);
            ck_assert(test_json_double(row, "spmv_ms") > 0 &&
                      test_json_double(row, "unfused_ms") > 0);
        }
        ck_assert_int_eq(ran, 1 + targets_of(HISP_BACKEND_OPENCL));
        rows_free(&rs);
        run_free(&r);
    }
    /* the table names the three series */
    run_result r =
        run_hisp("bench", F, "--op", "spmv-dot", "--backends", "reference", "--repeat", "3", NULL);
    CK_RUN(r, 0);
    ck_assert_msg(strstr(r.out, "fused ms") && strstr(r.out, "spmv ms") &&
                      strstr(r.out, "+ dot ms") && strstr(r.out, "mean of 3 calls"),
                  "%s", r.out);
    run_free(&r);
    free(ri);
    free(ci);
    free(v);
}
END_TEST

/* --op multiply: C = A A on a random file (f32, f64 and, the file read as
 * complex, c32 and c64): every row that ran is within the tolerance and its
 * C has the entries of A A formed here through the library; cuSPARSE is
 * skipped with its reason where it is listed. */
START_TEST(test_bench_multiply)
{
    uint64_t st = test_seed() ^ 0x5a6e;
    int n = 80 + (int)(test_rand(&st) % 80), per = 3;
    const char *F = tmp("mul.mtx");
    int64_t *ptr = malloc(sizeof *ptr * (size_t)(n + 1));
    int32_t *cols = malloc(sizeof *cols * (size_t)(n * per));
    double *v = malloc(sizeof *v * (size_t)(n * per));
    ck_assert(ptr && cols && v);
    FILE *f = fopen(F, "w");
    ck_assert(f);
    fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n", n, n, n * per);
    ptr[0] = 0;
    for (int i = 0, k = 0; i < n; i++) {
        for (int e = 0, off = 0; e < per; e++, k++) { /* sorted columns i + offsets, mod n */
            off += e ? 1 + (int)(test_rand(&st) % 9) : 0;
            cols[k] = (i + off) % n;
            v[k] = test_uniform(&st) - 0.5;
        }
        for (int a = 1; a < per; a++) /* CSR wants each row sorted (a wrap breaks the order) */
            for (int b = a; b > 0 && cols[ptr[i] + b - 1] > cols[ptr[i] + b]; b--) {
                int32_t tc = cols[ptr[i] + b];
                cols[ptr[i] + b] = cols[ptr[i] + b - 1];
                cols[ptr[i] + b - 1] = tc;
            }
        ptr[i + 1] = ptr[i] + per;
        for (int64_t q = ptr[i]; q < ptr[i + 1]; q++)
            fprintf(f, "%d %d %.17g\n", i + 1, cols[q] + 1, v[q]);
    }
    fclose(f);
    /* A A's entries through the library (the structure is the type's any) */
    hisp_context ctx = NULL;
    hisp_matrix A = NULL, C = NULL;
    hisp_matrix_info mi = {0};
    ck_assert_int_eq(hisp_context_create(&ctx), HISP_SUCCESS);
    ck_assert_int_eq(hisp_matrix_create_csr(ctx, HISP_F64, n, n, ptr, cols, v, &A), HISP_SUCCESS);
    ck_assert_int_eq(hisp_matrix_multiply(HISP_OP_N, A, HISP_OP_N, A, &C), HISP_SUCCESS);
    ck_assert_int_eq(hisp_matrix_get_info(C, &mi), HISP_SUCCESS);
    hisp_matrix_destroy(&C);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
    static const char *const types[] = {"f64", "f32", "c32", "c64"};
    for (int t = 0; t < 4; t++) {
        run_result r = run_hisp("bench", F, "--op", "multiply", "--type", types[t], "--backends",
                                "reference,opencl,cusparse", "--repeat", "3", "--json", NULL);
        CK_RUN(r, 0);
        ck_assert_msg(json_valid(r.out), "%s", r.out);
        ck_assert(strstr(r.out, "\"op\": \"multiply\""));
        rows rs = split_rows(r.out);
        check_rows(r.out, &rs); /* ok rows within the tolerance, the others say why */
        double tol = test_json_double(r.out, "tolerance");
        ck_assert(tol == (t == 0 || t == 3 ? 1e-10 : 1e-4));
        int ran = 0, ok = 0;
        for (int i = 0; i < rs.n; i++) {
            const char *row = rs.row[i];
            if (!has(row, "status", "\"ok\"")) continue;
            ran++;
            ck_assert_msg(test_json_double(row, "rel_error") <= tol, "%s", row);
            ck_assert_msg(test_json_double(row, "c_nnz") == (double)mi.nnz, "want %lld\n%s",
                          (long long)mi.nnz, row);
        }
        /* cuSPARSE's rows by the option spgemm=cusparse: f32 and f64 (no CUDA
         * device here: one row, skipped for that) */
        int ncu = targets_of(HISP_BACKEND_CUDA);
        bool real = t < 2;
        ck_assert_int_eq(ran, 1 + targets_of(HISP_BACKEND_OPENCL) + (real ? ncu : 0));
        ck_assert_int_eq(count_rows(&rs, "cuda", "cusparse", &ok), ncu ? ncu : 1);
        ck_assert_int_eq(ok, real ? ncu : 0);
        ck_assert(!ncu || real || strstr(r.out, "the option spgemm=cusparse takes f32 and f64"));
        rows_free(&rs);
        run_free(&r);
    }
    free(ptr);
    free(cols);
    free(v);
}
END_TEST

/* The numbers of a JSON array of numbers "key": [a, b, ...]; returns the count. */
static int json_numbers(const char *text, const char *key, double *v, int cap)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": [", key);
    const char *p = strstr(text, pat);
    ck_assert_msg(p, "no %s in\n%s", key, text);
    p += strlen(pat);
    int n = 0;
    for (char *end; n < cap; p = end + 1) {
        v[n] = strtod(p, &end);
        if (end == p) break;
        n++;
        while (*end == ' ' || *end == '\n')
            end++;
        if (*end != ',') break;
    }
    return n;
}

/* convert --repeat: the read's sizes are the file's (counted here), each
 * call timed, the medians among them; the written files read back the
 * same; a .hisp file is read through hisp_matrix_load. */
START_TEST(test_convert_repeat)
{
    uint64_t st = test_seed() ^ 0xc0de;
    int m = 200 + (int)(test_rand(&st) % 200), n = 100 + (int)(test_rand(&st) % 200), nnz = 0;
    const char *F = tmp("in.mtx"), *O = tmp("out.mtx"), *H = tmp("out.hisp");
    FILE *f = fopen(F, "w");
    ck_assert(f);
    fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n%d %d %-12d\n", m, n, 0);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++)
            if (test_rand(&st) % 10 == 0) {
                fprintf(f, "%d %d %.17g\n", i + 1, j + 1, test_uniform(&st));
                nnz++;
            }
    fseek(f, 0, SEEK_SET); /* the count, in the header's reserved width */
    fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n%d %d %-12d\n", m, n, nnz);
    fclose(f);
    setenv("HISP_OPTIONS", "threads=1", 1);
    run_result r = run_hisp("convert", F, "-o", O, "--repeat", "3", "--json", NULL);
    unsetenv("HISP_OPTIONS");
    CK_RUN(r, 0);
    ck_assert_msg(json_valid(r.out), "%s", r.out);
    ck_assert_int_eq((int)test_json_double(r.out, "rows"), m);
    ck_assert_int_eq((int)test_json_double(r.out, "cols"), n);
    ck_assert_int_eq((int)test_json_double(r.out, "nnz"), nnz);
    ck_assert_int_eq((int)test_json_double(r.out, "repeat"), 3);
    ck_assert_int_eq((int)test_json_double(r.out, "threads"), 1);
    static const char *const what[] = {"read", "write"};
    for (int w = 0; w < 2; w++) {
        char key[32];
        double t[8];
        snprintf(key, sizeof key, "%s_calls_ms", what[w]);
        ck_assert_int_eq(json_numbers(r.out, key, t, 8), 3);
        for (int a = 0; a < 3; a++) /* sorted: t[1] is the median */
            for (int b = a + 1; b < 3; b++)
                if (t[b] < t[a]) {
                    double x = t[a];
                    t[a] = t[b];
                    t[b] = x;
                }
        snprintf(key, sizeof key, "%s_ms", what[w]);
        ck_assert_msg(t[0] > 0 && test_json_double(r.out, key) == t[1], "%s", r.out);
    }
    run_free(&r);
    /* the written file, as .hisp and back: the same entries */
    r = run_hisp("convert", O, "-o", H, "--repeat", "2", "--json", NULL);
    CK_RUN(r, 0);
    ck_assert_int_eq((int)test_json_double(r.out, "nnz"), nnz);
    ck_assert_int_eq((int)test_json_double(r.out, "repeat"), 2);
    run_free(&r);
    r = run_hisp("convert", H, "-o", tmp("back.mtx"), "--repeat", "1", NULL);
    CK_RUN(r, 0);
    ck_assert_msg(strstr(r.out, "(median of 1 calls each)"), "%s", r.out);
    run_free(&r);
    r = run_hisp("convert", tmp("back.mtx"), "-o", O, "--json", NULL);
    CK_RUN(r, 0);
    ck_assert_int_eq((int)test_json_double(r.out, "nnz"), nnz);
    ck_assert(!strstr(r.out, "\"timing\"")); /* only with --repeat */
    run_free(&r);
    r = run_hisp("convert", "gen:poisson2d:4", "-o", O, "--repeat", "2", NULL);
    CK_RUN(r, 1);
    ck_assert_msg(strstr(r.err, "not a generator"), "%s", r.err);
    run_free(&r);
    r = run_hisp("convert", F, "-o", O, "--repeat", "0", NULL);
    CK_RUN(r, 2);
    run_free(&r);
}
END_TEST

static int count(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

/* --plot writes an SVG bar chart: one bar per row that ran, a label for
 * every row; the table goes to stdout as without it. */
START_TEST(test_bench_plot)
{
    const char *P = tmp("bench.svg");
    run_result r = run_hisp("bench", "gen:poisson2d:30", "--repeat", "2", "--plot", P, NULL);
    CK_RUN(r, 0);
    ck_assert(strstr(r.out, "reference:0"));
    char *svg = slurp(P);
    ck_assert_msg(strncmp(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\"", 39) == 0, "%.200s",
                  svg);
    size_t len = strlen(svg);
    ck_assert(len > 7 && strcmp(svg + len - 7, "</svg>\n") == 0);
    ck_assert_int_eq(count(svg, "<svg"), 1);
    int ran = 1 + targets_of(HISP_BACKEND_OPENCL) + 2 * targets_of(HISP_BACKEND_CUDA);
    ck_assert_int_eq(count(svg, "<rect"), 1 + ran); /* background + bars */
    ck_assert(strstr(svg, ">reference:0 "));
    ck_assert(strstr(svg, "ms per call (wall)"));
    ck_assert_int_eq(count(svg, "<text"), count(svg, "</text>"));
    if (!targets_of(HISP_BACKEND_CUDA)) ck_assert(strstr(svg, ">skipped<"));
    free(svg);
    run_free(&r);
    r = run_hisp("bench", "gen:poisson2d:30", "--repeat", "1", "--backends", "reference", "--plot",
                 P, "--plot-value", "gbps", NULL);
    CK_RUN(r, 0);
    svg = slurp(P);
    ck_assert(strstr(svg, "GB/s"));
    ck_assert_int_eq(count(svg, "<rect"), 2);
    free(svg);
    run_free(&r);
}
END_TEST

START_TEST(test_bench_bad_input)
{
    static const struct {
        const char *args[6];
        int status;
        const char *msg;
    } cases[] = {
        {{"gen:poisson2d:8", "--op", "spmx"}, 2, "unknown operation 'spmx'"},
        {{"gen:poisson2d:8", "--method", "cg"}, 1, "--method is for --op solve"},
        {{"gen:poisson2d:8", "--op", "solve", "--method", "qmr"}, 2, "unknown method 'qmr'"},
        {{"gen:helmholtz:8", "--op", "spmv-dot"}, 2, "type c64 is not supported"},
        {{"gen:poisson2d:8", "--backends", "opencl,vulkan"}, 2, "unknown backend 'vulkan'"},
        {{"gen:poisson2d:8", "--backends", ""}, 2, "--backends"},
        {{"gen:helmholtz:8", "--op", "add"}, 2, "type c64 is not supported"},
        {{"gen:qsurface:6", "--op", "multiply"}, 2, "type q64 is not supported"},
        {{"gen:poisson2d:8", "--op", "multiply", "--format", "sell"}, 1, "runs on CSR"},
        {{"gen:poisson2d:8", "--columns", "4"}, 1, "--columns is for --op spmm"},
        {{"gen:poisson2d:8", "--op", "spmm", "--columns", "0"}, 2, "--columns"},
        {{"gen:qsurface:6", "--op", "spmm"}, 2, "type q64 is not supported"},
        {{"gen:poisson2d:8", "--type", "f16"}, 2, "unknown type 'f16'"},
        {{"gen:poisson2d:8", "--repeat", "0"}, 2, "--repeat"},
        {{"gen:poisson2d:8", "--plot-value", "flops"}, 2, "--plot-value"},
        {{"gen:poisson2d:8", "--frobnicate"}, 1, "unknown option"},
        {{"--json"}, 1, "missing FILE"},
        {{"gen:nosuch:8"}, 2, "unknown generator"},
        {{"/nonexistent/a.mtx"}, 2, "/nonexistent/a.mtx"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const char *const *a = cases[c].args;
        run_result r = run_hisp("bench", a[0], a[1], a[2], a[3], a[4], a[5], NULL);
        CK_RUN(r, cases[c].status);
        ck_assert_msg(strstr(r.err, cases[c].msg), "%s: %s", cases[c].msg, r.err);
        ck_assert_str_eq(r.out, "");
        run_free(&r);
    }
    /* solve needs a square matrix */
    const char *rect = tmp("rect.mtx");
    write_text(rect, "%%MatrixMarket matrix coordinate real general\n2 3 2\n1 1 1.5\n2 3 2\n");
    static const char *const sq[][3] = {
        {"solve", NULL, NULL}, {"solve", "--method", "gmres"}, {"spmv-dot", NULL, NULL}};
    for (int c = 0; c < 3; c++) {
        run_result r = run_hisp("bench", rect, "--op", sq[c][0], sq[c][1], sq[c][2], NULL);
        CK_RUN(r, 2);
        ck_assert_msg(strstr(r.err, "square"), "%s", r.err);
        run_free(&r);
    }
}
END_TEST

/* hisp demo sizes its problems from the device's measured copy bandwidth
 * (at least the old defaults, poisson3d n = 64 and rmat scale 16); given
 * sizes are kept. */
START_TEST(test_demo_sizing)
{
    run_result r = run_hisp("demo", "--json", "--repeat", "2", NULL);
    CK_RUN(r, 0);
    ck_assert_msg(json_valid(r.out), "%s", r.out);
    ck_assert(strstr(r.out, "\"auto\": true"));
    double gbps = test_json_double(r.out, "copy_gbps"),
           bytes = test_json_double(r.out, "target_bytes");
    ck_assert_msg(gbps > 0 && bytes > 0, "%s", r.out);
    /* bytes = what the device copies in 1 ms, or an eighth of memory */
    ck_assert_msg(bytes <= gbps * 1e6 * 1.0001, "%g %g", bytes, gbps);
    const char *m = strstr(r.out, "\"poisson3d n=");
    ck_assert(m);
    int n = atoi(m + strlen("\"poisson3d n="));
    ck_assert_int_ge(n, 64);
    m = strstr(r.out, "\"rmat scale=");
    ck_assert(m);
    int scale = atoi(m + strlen("\"rmat scale="));
    ck_assert_int_ge(scale, 16);
    /* a CPU device keeps to a few seconds: n <= 128, scale <= 20 */
    if (strstr(r.out, "\"type\": \"cpu\"")) {
        ck_assert_int_le(n, 128);
        ck_assert_int_le(scale, 20);
    }
    run_free(&r);
    r = run_hisp("demo", "--json", "--n", "9", "--scale", "7", "--repeat", "1", NULL);
    CK_RUN(r, 0);
    ck_assert(strstr(r.out, "\"auto\": false"));
    ck_assert(strstr(r.out, "\"poisson3d n=9\""));
    ck_assert(strstr(r.out, "\"rmat scale=7\""));
    run_free(&r);
}
END_TEST

/* Out of memory is a status: `hisp bench` on OpenCL (PoCL) under an
 * address-space limit of 704 to 896 MiB, where its 128 MiB copy-bandwidth
 * buffers no longer fit. PoCL allocated a buffer's memory at its first use
 * and aborted the process when that failed (every op, every run); hisp
 * has it allocated by clCreateBuffer, whose failure is an error code. */
START_TEST(test_bench_address_limit)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    test_skip("cli_bench address limit: the sanitizers' shadow memory needs no limit");
    return;
#else
    static const char *const ops[] = {"spmv", "spmvt", "add", "solve"};
    static const rlim_t mib[] = {704, 800, 896};
    for (size_t m = 0; m < sizeof mib / sizeof mib[0]; m++)
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
            pid_t pid = fork();
            ck_assert_int_ge(pid, 0);
            if (pid == 0) {
                struct rlimit rl = {mib[m] << 20, mib[m] << 20};
                int null = open("/dev/null", O_WRONLY);
                /* the limit is about hisp's allocations on PoCL: the address
                 * space glibc reserves per thread (an arena each) and another
                 * vendor's OpenCL driver scale with the machine, not with hisp,
                 * so PoCL alone with two threads, as on the 2-core CI machine */
                setenv("MALLOC_ARENA_MAX", "2", 1);
                setenv("POCL_MAX_PTHREAD_COUNT", "2", 1);
                setenv("OCL_ICD_FILENAMES", "libpocl.so.2", 1);
                if (setrlimit(RLIMIT_AS, &rl) || null < 0) _exit(99);
                dup2(null, 1);
                dup2(null, 2);
                execl(hisp_program(), "hisp", "bench", "gen:poisson2d:60", "--op", ops[o],
                      "--backends", "reference,opencl", "--repeat", "1", (char *)NULL);
                _exit(98);
            }
            int st = 0;
            ck_assert_int_eq(waitpid(pid, &st, 0), pid);
            ck_assert_msg(WIFEXITED(st) && (WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 2),
                          "bench --op %s under %llu MiB: %s %d", ops[o], (unsigned long long)mib[m],
                          WIFEXITED(st) ? "exit" : "signal",
                          WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
        }
#endif
}
END_TEST

Suite *suite_cli_bench(void)
{
    Suite *s = suite_create("cli_bench");
    TCase *tc = test_tcase(s, "bench", 600);
    tcase_add_checked_fixture(tc, cli_setup, cli_teardown);
    tcase_add_test(tc, test_bench_all);
    tcase_add_test(tc, test_bench_ops);
    tcase_add_test(tc, test_bench_spmv_dot);
    tcase_add_test(tc, test_bench_multiply);
    tcase_add_test(tc, test_convert_repeat);
    tcase_add_test(tc, test_bench_plot);
    tcase_add_test(tc, test_bench_bad_input);
    tcase_add_test(tc, test_bench_address_limit);
    tcase_add_test(tc, test_demo_sizing);
    return s;
}
