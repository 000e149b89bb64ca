/* The context's options (core/base/options.c): set and get each one, refusals of
 * unknown names and bad values (the old value stays), the HISP_OPTIONS
 * parser (called directly: setenv races with the other threads of a test
 * run), one context creation from HISP_OPTIONS in a hisp process, and that
 * each option acts (threads, cache folder, "off", the debug log). */
#include "testutil.h"
#include "cli_run.h"
#include "hispi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Does the environment's HISP_OPTIONS name option `name`? */
static bool env_sets(const char *name)
{
    const char *e = getenv("HISP_OPTIONS");
    size_t n = strlen(name);
    for (const char *p = e; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (strncmp(p, name, n) == 0 && p[n] == '=') return true;
    return false;
}

/* A context with every option at its default, also when the caller's
 * HISP_OPTIONS sets some (a test run on a configured machine). */
static hisp_context new_ctx(void)
{
    hisp_context ctx = test_default_context();
    for (int i = 0; i < hisp_option_count(); i++) {
        hisp_option_info o;
        CK_OK(ctx, hisp_option_describe(i, &o));
        if (env_sets(o.name)) CK_OK(ctx, hisp_context_set_option(ctx, o.name, o.default_value));
    }
    return ctx;
}

static void ck_value(hisp_context ctx, const char *name, const char *want)
{
    char v[600];
    CK_OK(ctx, hisp_context_get_option(ctx, name, v, sizeof v));
    ck_assert_msg(strcmp(v, want) == 0, "option %s: \"%s\", expected \"%s\"", name, v, want);
}

/* A refused call: HISP_ERR_INVALID_ARGUMENT and a message naming `needle`. */
static void ck_refused(hisp_context ctx, hisp_status s, const char *needle)
{
    ck_assert_int_eq(s, HISP_ERR_INVALID_ARGUMENT);
    hisp_error_info e;
    CK_OK(ctx, hisp_context_last_error(ctx, &e));
    ck_assert_msg(e.message && strstr(e.message, needle), "message \"%s\" lacks \"%s\"",
                  e.message ? e.message : "(null)", needle);
}

START_TEST(test_table)
{
    hisp_context ctx = new_ctx();
    int n = hisp_option_count();
    ck_assert_int_ge(n, 3);
    for (int i = 0; i < n; i++) {
        hisp_option_info o;
        CK_OK(ctx, hisp_option_describe(i, &o));
        ck_assert(o.name && o.name[0] && o.meaning && o.meaning[0] && o.default_value);
        ck_assert_str_ne(hisp_option_type_name(o.type), "invalid");
        ck_value(ctx, o.name, o.default_value); /* a new context holds the defaults */
    }
    hisp_option_info o;
    ck_assert_int_eq(hisp_option_describe(n, &o), HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_option_describe(-1, &o), HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_option_describe(0, NULL), HISP_ERR_INVALID_ARGUMENT);
    hisp_context_destroy(&ctx);
}
END_TEST

START_TEST(test_set_get)
{
    hisp_context ctx = new_ctx();
    uint64_t st = test_seed();
    char v[16];
    snprintf(v, sizeof v, "%d", 1 + (int)(test_rand(&st) % 16));
    CK_OK(ctx, hisp_context_set_option(ctx, "threads", v));
    ck_value(ctx, "threads", v);
    CK_OK(ctx, hisp_context_set_option(ctx, "threads", "0"));
    ck_value(ctx, "threads", "0");
    static const char *const on[] = {"1", "true", "ON", "yes"}, *const off[] = {"0", "false", "Off",
                                                                                "no"};
    for (int i = 0; i < 4; i++) {
        CK_OK(ctx, hisp_context_set_option(ctx, "debug", on[i]));
        ck_value(ctx, "debug", "1");
        CK_OK(ctx, hisp_context_set_option(ctx, "debug", off[i]));
        ck_value(ctx, "debug", "0");
    }
    CK_OK(ctx, hisp_context_set_option(ctx, "cache_dir", "/tmp/somewhere"));
    ck_value(ctx, "cache_dir", "/tmp/somewhere");
    CK_OK(ctx, hisp_context_set_option(ctx, "cache_dir", "off"));
    ck_value(ctx, "cache_dir", "off");
    CK_OK(ctx, hisp_context_set_option(ctx, "cache_dir", ""));
    ck_value(ctx, "cache_dir", "");
    /* a buffer too small is refused, not truncated */
    CK_OK(ctx, hisp_context_set_option(ctx, "cache_dir", "/tmp/a-longer-folder"));
    char small[4];
    ck_refused(ctx, hisp_context_get_option(ctx, "cache_dir", small, sizeof small), "cache_dir");
    /* a real, a word of a list, an integer of a range */
    CK_OK(ctx, hisp_context_set_option(ctx, "amg_theta", "0.25"));
    ck_value(ctx, "amg_theta", "0.25");
    CK_OK(ctx, hisp_context_set_option(ctx, "amg_theta", "0"));
    ck_value(ctx, "amg_theta", "0");
    static const char *const sm[] = {"jacobi", "l1-jacobi", "chebyshev"};
    for (int i = 0; i < 3; i++) {
        CK_OK(ctx, hisp_context_set_option(ctx, "amg_smoother", sm[i]));
        ck_value(ctx, "amg_smoother", sm[i]);
    }
    CK_OK(ctx, hisp_context_set_option(ctx, "amg_sweeps", "10"));
    ck_value(ctx, "amg_sweeps", "10");
    hisp_context_destroy(&ctx);
}
END_TEST

START_TEST(test_refusals)
{
    hisp_context ctx = new_ctx();
    CK_OK(ctx, hisp_context_set_option(ctx, "threads", "2"));
    ck_refused(ctx, hisp_context_set_option(ctx, "thread", "2"), "unknown option \"thread\"");
    ck_refused(ctx, hisp_context_set_option(ctx, "", "2"), "unknown option");
    char v[8];
    ck_refused(ctx, hisp_context_get_option(ctx, "nope", v, sizeof v), "unknown option \"nope\"");
    static const char *const bad_int[] = {"", "abc", "3x", " 3", "1.5", "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad_int / sizeof *bad_int; i++)
        ck_refused(ctx, hisp_context_set_option(ctx, "threads", bad_int[i]), "not an integer");
    ck_refused(ctx, hisp_context_set_option(ctx, "threads", "-1"), "out of range");
    ck_refused(ctx, hisp_context_set_option(ctx, "threads", "17"), "out of range");
    ck_value(ctx, "threads", "2"); /* unchanged by the refusals */
    ck_refused(ctx, hisp_context_set_option(ctx, "debug", "maybe"), "not a boolean");
    ck_refused(ctx, hisp_context_set_option(ctx, "debug", ""), "not a boolean");
    ck_value(ctx, "debug", "0");
    char longdir[700];
    memset(longdir, 'a', sizeof longdir - 1);
    longdir[sizeof longdir - 1] = 0;
    ck_refused(ctx, hisp_context_set_option(ctx, "cache_dir", longdir), "longer than");
    ck_value(ctx, "cache_dir", "");
    ck_refused(ctx, hisp_context_set_option(ctx, "amg_theta", "x"), "not a real number");
    ck_refused(ctx, hisp_context_set_option(ctx, "amg_theta", "nan"), "not a real number");
    ck_refused(ctx, hisp_context_set_option(ctx, "amg_theta", "1.5"), "out of range");
    ck_refused(ctx, hisp_context_set_option(ctx, "amg_theta", "-0.1"), "out of range");
    ck_value(ctx, "amg_theta", "0.01");
    ck_refused(ctx, hisp_context_set_option(ctx, "amg_smoother", "gauss-seidel"),
               "chebyshev|jacobi|l1-jacobi");
    ck_value(ctx, "amg_smoother", "chebyshev");
    ck_refused(ctx, hisp_context_set_option(ctx, "amg_sweeps", "0"), "out of range");
    ck_value(ctx, "amg_sweeps", "3");
    ck_assert_int_eq(hisp_context_set_option(ctx, NULL, "1"), HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_context_set_option(ctx, "threads", NULL), HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_context_set_option(NULL, "threads", "1"), HISP_ERR_INVALID_HANDLE);
    hisp_context_destroy(&ctx);
}
END_TEST

START_TEST(test_parse)
{
    hisp_context ctx = new_ctx();
    CK_OK(ctx, hispi_options_parse(ctx, "threads=3,debug=yes,cache_dir=/tmp/p q"));
    ck_value(ctx, "threads", "3");
    ck_value(ctx, "debug", "1");
    ck_value(ctx, "cache_dir", "/tmp/p q");
    CK_OK(ctx, hispi_options_parse(ctx, ",threads=5,,debug=0,")); /* empty items skipped */
    ck_value(ctx, "threads", "5");
    ck_value(ctx, "debug", "0");
    CK_OK(ctx, hispi_options_parse(ctx, ""));
    CK_OK(ctx, hispi_options_parse(ctx, "cache_dir=")); /* the default folder */
    ck_value(ctx, "cache_dir", "");
    ck_refused(ctx, hispi_options_parse(ctx, "threads=2,colour=red"),
               "HISP_OPTIONS: unknown option \"colour\"");
    ck_refused(ctx, hispi_options_parse(ctx, "threads"),
               "HISP_OPTIONS: \"threads\" is not name=value");
    ck_refused(ctx, hispi_options_parse(ctx, "threads=2;debug=1"), "HISP_OPTIONS: option threads");
    ck_refused(ctx, hispi_options_parse(ctx, "debug=2"), "HISP_OPTIONS: option debug");
    ck_refused(ctx, hispi_options_parse(ctx, "=1"), "unknown option");
    hisp_context_destroy(&ctx);
}
END_TEST

/* The threads option is what the host's parallel parts use. */
START_TEST(test_threads_act)
{
    hisp_context ctx = new_ctx();
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int all = cpus < 1 ? 1 : cpus > 16 ? 16 : (int)cpus;
    ck_assert_int_eq(hispi_threads(ctx, 1e7), all);
    ck_assert_int_eq(hispi_threads(ctx, 10), 1); /* small work: one thread */
    for (int t = 1; t <= 16; t += 5) {
        char v[8];
        snprintf(v, sizeof v, "%d", t);
        CK_OK(ctx, hisp_context_set_option(ctx, "threads", v));
        ck_assert_int_eq(hispi_threads(ctx, 1e7), t);
    }
    /* and a threaded build gives the same matrix on 1 and 3 threads */
    uint64_t st = test_seed() + 77;
    hisp_matrix A = test_random_matrix(ctx, HISP_F64, 2000, 2000, 0.06, &st); /* 240k entries */
    hisp_matrix H[2] = {NULL, NULL};
    static const char *const nt[2] = {"1", "3"};
    for (int k = 0; k < 2; k++) {
        CK_OK(ctx, hisp_context_set_option(ctx, "threads", nt[k]));
        CK_OK(ctx, hisp_matrix_set_node_size(A, 32));
        CK_OK(ctx, hisp_matrix_duplicate(A, HISP_FORMAT_HISPARSE, &H[k]));
    }
    size_t n[2];
    void *b[2];
    for (int k = 0; k < 2; k++) {
        char path[300];
        snprintf(path, sizeof path, "/tmp/hisp-options-%ld-%d.hisp", (long)getpid(), k);
        CK_OK(ctx, hisp_matrix_save(H[k], path));
        b[k] = slurp(path);
        FILE *f = fopen(path, "rb");
        fseek(f, 0, SEEK_END);
        n[k] = (size_t)ftell(f);
        fclose(f);
        remove(path);
    }
    ck_assert_uint_eq(n[0], n[1]);
    ck_assert(memcmp(b[0], b[1], n[0]) == 0);
    for (int k = 0; k < 2; k++) {
        free(b[k]);
        hisp_matrix_destroy(&H[k]);
    }
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

/* The cache folder is where tuning plans go; "off" writes nothing. */
START_TEST(test_cache_dir_acts)
{
    hisp_context ctx = new_ctx();
    char dir[256], cmd[300];
    snprintf(dir, sizeof dir, "/tmp/hisp-options-cache-%ld", (long)getpid());
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
    CK_OK(ctx, hisp_context_set_option(ctx, "cache_dir", dir));
    hisp_matrix A = NULL;
    CK_OK(ctx,
          hisp_matrix_generate_compound(ctx, HISP_CGEN_QSURFACE, 10, test_seed(), HISP_Q32, &A));
    hisp_tune_plan p;
    int count = 0;
    CK_OK(ctx, hisp_context_set_option(ctx, "cache_dir", "off"));
    CK_OK(ctx, hisp_tune(ctx, A, HISP_TUNE_FAST, 1, NULL, NULL, NULL, 0, &count, &p));
    ck_assert_int_eq(test_count_files(dir), 0); /* off: nothing written */
    char path[1024];
    ck_assert_int_eq(hisp_tune_plan_cache_path(ctx, p.key, path, sizeof path),
                     HISP_ERR_UNSUPPORTED);
    CK_OK(ctx, hisp_context_set_option(ctx, "cache_dir", dir));
    CK_OK(ctx, hisp_tune(ctx, A, HISP_TUNE_FAST, 1, NULL, NULL, NULL, 0, &count, &p));
    ck_assert_int_eq(test_count_files(dir), 1);
    CK_OK(ctx, hisp_tune_plan_cache_path(ctx, p.key, path, sizeof path));
    ck_assert(strncmp(path, dir, strlen(dir)) == 0);
    ck_assert(access(path, R_OK) == 0);
    int found = 0;
    CK_OK(ctx, hisp_tune_plan_lookup(ctx, A, &p, &found));
    ck_assert_int_eq(found, 1);
    hisp_matrix_destroy(&A);
    ck_assert_int_eq(system(cmd), 0);
    hisp_context_destroy(&ctx);
}
END_TEST

/* HISP_OPTIONS in a hisp process: applied at context creation; a bad one
 * fails the creation with a message; debug=1 turns the log on. */
START_TEST(test_env_cli)
{
    if (!hisp_program()) {
        test_skip("options: the hisp program is not built");
        return;
    }
    setenv("HISP_OPTIONS", "threads=3,debug=1,cache_dir=/tmp/hisp-opt-x", 1);
    run_result r = run_hisp("info", "--options", "--json", NULL);
    unsetenv("HISP_OPTIONS");
    CK_RUN(r, 0);
    ck_assert_msg(json_valid(r.out), "not JSON:\n%s\nstderr:\n%s", r.out, r.err);
    ck_assert(strstr(r.out, "\"name\": \"threads\""));
    ck_assert(strstr(r.out, "\"value\": \"3\""));
    ck_assert(strstr(r.out, "\"value\": \"/tmp/hisp-opt-x\""));
    ck_assert(strstr(r.out, "\"value\": \"1\""));
    run_free(&r);
    r = run_hisp("info", "--options", NULL);
    CK_RUN(r, 0);
    ck_assert(strstr(r.out, "threads") && strstr(r.out, "cache_dir") && strstr(r.out, "debug"));
    run_free(&r);

    setenv("HISP_OPTIONS", "threads=2,colour=red", 1);
    r = run_hisp("info", NULL);
    unsetenv("HISP_OPTIONS");
    ck_assert_int_ne(r.status, 0);
    ck_assert_msg(strstr(r.err, "HISP_OPTIONS: unknown option \"colour\""), "stderr: %s", r.err);
    run_free(&r);
    setenv("HISP_OPTIONS", "threads=many", 1);
    r = run_hisp("info", NULL);
    unsetenv("HISP_OPTIONS");
    ck_assert_int_ne(r.status, 0);
    ck_assert_msg(strstr(r.err, "not an integer"), "stderr: %s", r.err);
    run_free(&r);

    /* the debug log: the library logs an error with debug=1, not without */
    char bad[300];
    snprintf(bad, sizeof bad, "/tmp/hisp-options-%ld.mtx", (long)getpid());
    FILE *f = fopen(bad, "w");
    ck_assert_ptr_nonnull(f);
    fputs("%%MatrixMarket matrix coordinate real general\n3 3 1\n9 9 1.0\n", f);
    fclose(f);
    r = run_hisp("stats", bad, NULL);
    ck_assert_int_ne(r.status, 0);
    ck_assert_msg(!strstr(r.err, "hisp: error"), "stderr: %s", r.err);
    run_free(&r);
    setenv("HISP_OPTIONS", "debug=1", 1);
    r = run_hisp("stats", bad, NULL);
    unsetenv("HISP_OPTIONS");
    ck_assert_int_ne(r.status, 0);
    ck_assert_msg(strstr(r.err, "hisp: error"), "stderr: %s", r.err);
    run_free(&r);
    remove(bad);
}
END_TEST

Suite *suite_options(void)
{
    Suite *s = suite_create("options");
    TCase *tc = test_tcase(s, "options", 300);
    tcase_add_checked_fixture(tc, cli_setup, cli_teardown); /* run_hisp's folder */
    tcase_add_test(tc, test_table);
    tcase_add_test(tc, test_set_get);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_parse);
    tcase_add_test(tc, test_threads_act);
    tcase_add_test(tc, test_cache_dir_acts);
    tcase_add_test(tc, test_env_cli);
    return s;
}
