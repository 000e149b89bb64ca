/* One vocabulary across the `hisp` program: every subcommand takes the
 * common options where they apply (--help in one layout, --json with the
 * shared fields, --backend, --device, --type, -o and its aliases --out and
 * --output, --transpose [n|t|h]) and refuses an unknown option by name; and
 * the reports that used to mislead (gen's 3x3 blocks, spmv's time, tune of
 * a .hisp file, bench --op spmvt of complex entries). */
#include "cli_run.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void ck_has(const run_result *r, const char *what)
{
    ck_assert_msg(strstr(r->out, what) || strstr(r->err, what),
                  "'%s' not in the output:\n%.2000s\nstderr:\n%.2000s", what, r->out, r->err);
}

/* One subcommand: its smallest run and the common options it takes. */
typedef struct {
    const char *cmd;
    const char *args[8]; /* after the command, NULL-terminated */
    const char *out;     /* the file name -o gets, NULL: writes none */
    bool backend, device, type, transpose;
} cmd_case;

/* Runs cmd's case with the common options it takes (JSON on, the reference
 * backend, device 0, f32), extra (NULL-terminated) appended; out_opt: the
 * spelling of the output option ("-o", "--out", "--output", "--output="). */
static run_result run_case(const cmd_case *c, const char *out_opt, const char *const *extra)
{
    const char *argv[40];
    char outeq[4200];
    int n = 0;
    argv[n++] = c->cmd;
    for (int i = 0; c->args[i]; i++)
        argv[n++] = c->args[i];
    argv[n++] = "--json";
    if (c->backend) argv[n++] = "--backend", argv[n++] = "reference";
    if (c->device) argv[n++] = "--device", argv[n++] = "0";
    if (c->type) argv[n++] = "--type", argv[n++] = "f32";
    if (c->out && strcmp(out_opt, "--output=") == 0) {
        snprintf(outeq, sizeof outeq, "--output=%s", tmp(c->out));
        argv[n++] = outeq;
    } else if (c->out) {
        argv[n++] = out_opt;
        argv[n++] = tmp(c->out);
    }
    for (int i = 0; extra && extra[i]; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    return run_hisp_argv(argv);
}

/* edit's --remove file, tmp("p.mtx"): a 4 x 4 Laplacian inside the 16 x 16
 * ones the cases run on */
static char remove_file[PATH_MAX + 64];

static const cmd_case case_list[] = {
    {"info", {NULL}, NULL, true, false, false, false},
    {"gen", {"poisson2d", "--n", "4"}, "g.mtx", false, false, true, false},
    {"stats", {"gen:poisson2d:4"}, NULL, false, false, true, false},
    {"convert", {"gen:poisson2d:4"}, "c.hisp", false, false, true, false},
    {"spmv", {"gen:poisson2d:4"}, "y.mtx", true, true, true, true},
    {"add", {"gen:poisson2d:4", "gen:poisson2d:4:3"}, "s.mtx", true, true, true, true},
    {"edit", {"gen:poisson2d:4", "--remove", remove_file}, "e.mtx", false, false, true, false},
    {"mspmv", {"gen:poisson2d:4", "--devices", "2"}, "m.mtx", true, true, true, true},
    {"tune", {"gen:poisson2d:4"}, NULL, true, true, true, true},
    /* f32 (the common --type) reaches 1e-6 here, not the default 1e-8 */
    {"solve",
     {"gen:poisson2d:4", "--method", "cg", "--rtol", "1e-5"},
     "x.mtx",
     true,
     true,
     true,
     false},
    {"bench", {"gen:poisson2d:4", "--repeat", "1"}, NULL, true, true, true, false},
    {"demo", {"--n", "4", "--scale", "0", "--repeat", "1"}, NULL, true, true, true, false},
};

static int cases(const cmd_case **list)
{
    snprintf(remove_file, sizeof remove_file, "%s", tmp("p.mtx"));
    *list = case_list;
    return (int)(sizeof case_list / sizeof *case_list);
}

/* ---- help ---------------------------------------------------------------- */

START_TEST(test_help_layout)
{
    const cmd_case *c;
    int n = cases(&c);
    for (int i = 0; i < n; i++) {
        run_result r = run_hisp(c[i].cmd, "--help", NULL);
        CK_RUN(r, 0);
        char want[64];
        snprintf(want, sizeof want, "usage: hisp %s ", c[i].cmd);
        ck_assert_msg(strncmp(r.out, want, strlen(want)) == 0, "%s --help starts:\n%.200s",
                      c[i].cmd, r.out);
        static const char *const always[] = {"\noptions", "\n  --json ", "\n  --help, -h "};
        for (int k = 0; k < 3; k++)
            ck_assert_msg(strstr(r.out, always[k]), "hisp %s --help lacks '%s'", c[i].cmd,
                          always[k] + 1);
        if (c[i].out) {
            ck_assert_msg(strstr(r.out, "\n  -o FILE  "), "%s: no -o FILE", c[i].cmd);
            ck_assert_msg(strstr(r.out, "(--out and --output are aliases)"), "%s", c[i].cmd);
        }
        if (c[i].backend) /* bench's rows: --backends LIST, --backend its alias */
            ck_assert_msg(strstr(r.out, "\n  --backend B  ") || strstr(r.out, "(--backend is an"),
                          "%s", c[i].cmd);
        if (c[i].device) ck_assert_msg(strstr(r.out, "\n  --device I  "), "%s", c[i].cmd);
        if (c[i].type) ck_assert_msg(strstr(r.out, "\n  --type "), "%s", c[i].cmd);
        if (c[i].transpose) ck_assert_msg(strstr(r.out, "\n  --transpose "), "%s", c[i].cmd);
        /* one layout: 80 columns, the common options after the command's own */
        for (const char *p = r.out; *p;) {
            size_t len = strcspn(p, "\n");
            ck_assert_msg(len <= 80, "hisp %s --help: a line of %zu columns: %.*s", c[i].cmd, len,
                          (int)len, p);
            p += len + (p[len] == '\n');
        }
        if (c[i].out && c[i].backend)
            ck_assert_msg(strstr(r.out, "\n  --backend B") < strstr(r.out, "\n  -o FILE"),
                          "%s: -o before --backend", c[i].cmd);
        ck_assert_msg(strstr(r.out, "\n  --json") < strstr(r.out, "\n  --help, -h"), "%s",
                      c[i].cmd);
        run_free(&r);
        r = run_hisp(c[i].cmd, "-h", NULL);
        CK_RUN(r, 0);
        ck_assert(strncmp(r.out, want, strlen(want)) == 0);
        run_free(&r);
    }
    /* the program's own help names the shared vocabulary */
    run_result r = run_hisp("--help", NULL);
    CK_RUN(r, 0);
    static const char *const names[] = {"-o FILE",    "--out and",   "--transpose [n|t|h]",
                                        "--device I", "--devices N", "--backend B"};
    for (size_t k = 0; k < sizeof names / sizeof *names; k++)
        ck_assert_msg(strstr(r.out, names[k]), "hisp --help lacks '%s'", names[k]);
    run_free(&r);
}
END_TEST

/* ---- the common options, each accepted; an unknown one refused ----------- */

START_TEST(test_common_options)
{
    setenv("HISP_OPTIONS", "cache_dir=off", 1); /* tune: no plan cache */
    run_result r = run_hisp("gen", "poisson2d", "--n", "2", "-o", tmp("p.mtx"), NULL);
    CK_RUN(r, 0);
    run_free(&r);
    const cmd_case *c;
    int n = cases(&c);
    for (int i = 0; i < n; i++) {
        /* an unknown option: a usage error that names it and the help */
        const char *bad[] = {"--no-such-option", NULL};
        r = run_case(&c[i], "-o", bad);
        CK_RUN(r, 1);
        char want[128];
        snprintf(want, sizeof want, "hisp %s: unknown option '--no-such-option'", c[i].cmd);
        ck_assert_msg(strstr(r.err, want), "%s", r.err);
        snprintf(want, sizeof want, "Try 'hisp %s --help'", c[i].cmd);
        ck_assert_msg(strstr(r.err, want), "%s", r.err);
        run_free(&r);

        /* every common option it takes, at once, and the shared JSON fields */
        r = run_case(&c[i], "-o", NULL);
        CK_RUN(r, 0);
        ck_assert_msg(json_valid(r.out), "hisp %s --json:\n%s", c[i].cmd, r.out);
        if (strcmp(c[i].cmd, "info") == 0) {
            ck_has(&r, "\"name\": \"reference\"");
            ck_assert_msg(!strstr(r.out, "\"name\": \"opencl\""), "%s", r.out);
        } else {
            static const char *const shared[] = {"\"backend\": \"", "\"device\": {",
                                                 "\"transfers\": {"};
            for (int k = 0; k < 3; k++)
                ck_assert_msg(strstr(r.out, shared[k]), "hisp %s --json lacks %s:\n%s", c[i].cmd,
                              shared[k], r.out);
            ck_has(&r, c[i].type ? "\"type\": \"f32\"" : "\"type\": \"");
            if (c[i].backend) ck_has(&r, "\"backend\": \"reference\"");
        }
        if (c[i].out) {
            ck_assert_msg(access(tmp(c[i].out), F_OK) == 0, "hisp %s -o wrote nothing", c[i].cmd);
            /* the aliases of -o, spelled every way */
            static const char *const spell[] = {"--out", "--output", "--output="};
            for (int k = 0; k < 3; k++) {
                unlink(tmp(c[i].out));
                run_free(&r);
                r = run_case(&c[i], spell[k], NULL);
                CK_RUN(r, 0);
                ck_assert_msg(access(tmp(c[i].out), F_OK) == 0, "hisp %s %s wrote nothing",
                              c[i].cmd, spell[k]);
            }
            run_free(&r);
            /* two of them: one too many */
            const char *twice[] = {"--out", tmp("other.mtx"), NULL};
            r = run_case(&c[i], "-o", twice);
            CK_RUN(r, 1);
            ck_has(&r, "give the output file once");
        }
        run_free(&r);
        if (c[i].transpose) {
            /* --transpose alone (before another option), with a value, or with = */
            static const char *const forms[][3] = {{"--transpose", "--json", NULL},
                                                   {"--transpose", "t", NULL},
                                                   {"--transpose=n", NULL}};
            for (int k = 0; k < 3; k++) {
                r = run_case(&c[i], "-o", forms[k]);
                CK_RUN(r, 0);
                run_free(&r);
            }
        }
    }
    unsetenv("HISP_OPTIONS");
}
END_TEST

/* --transpose h and the old --op of spmv and mspmv; bench's --op is the
 * operation; --backend and --device where a command had only the plural. */
START_TEST(test_transpose_and_aliases)
{
    run_result r = run_hisp("spmv", "gen:helmholtz:4", "--transpose", "h", "--check", "--backend",
                            "reference", "--json", NULL);
    CK_RUN(r, 0);
    ck_has(&r, "\"op\": \"H\"");
    run_free(&r);
    r = run_hisp("spmv", "gen:helmholtz:4", "--op", "t", "--backend", "reference", "--json", NULL);
    CK_RUN(r, 0);
    ck_has(&r, "\"op\": \"T\"");
    run_free(&r);
    r = run_hisp("spmv", "gen:helmholtz:4", "--op", "t", "--transpose", NULL);
    CK_RUN(r, 1);
    ck_has(&r, "--op (its alias)");
    run_free(&r);
    r = run_hisp("mspmv", "gen:poisson2d:4", "--op", "h", "--backend", "reference", NULL);
    CK_RUN(r, 0);
    run_free(&r);
    r = run_hisp("spmv", "gen:poisson2d:4", "--transpose=x", NULL);
    CK_RUN(r, 2);
    ck_has(&r, "unknown op 'x'");
    run_free(&r);
    /* add's real entries: h is t; complex ones are refused with the reason */
    r = run_hisp("add", "gen:poisson2d:4", "gen:poisson2d:4:2", "--transpose", "h", "-o",
                 tmp("s.mtx"), "--backend", "reference", NULL);
    CK_RUN(r, 0);
    run_free(&r);
    r = run_hisp("add", "gen:helmholtz:4", "gen:helmholtz:4:2", "--transpose", "h", "-o",
                 tmp("s.mtx"), "--backend", "reference", NULL);
    CK_RUN(r, 2);
    ck_has(&r, "op n or t");
    run_free(&r);
    /* bench: --backend is --backends; both is one too many */
    r = run_hisp("bench", "gen:poisson2d:4", "--backend", "reference", "--repeat", "1", "--json",
                 NULL);
    CK_RUN(r, 0);
    ck_has(&r, "\"backend\": \"reference\"");
    ck_assert_msg(!strstr(r.out, "\"backend\": \"opencl\""), "%s", r.out);
    run_free(&r);
    r = run_hisp("bench", "gen:poisson2d:4", "--backend", "reference", "--backends", "reference",
                 NULL);
    CK_RUN(r, 1);
    run_free(&r);
    /* solve and mspmv: --device I with --devices N puts the N parts on device I */
    r = run_hisp("solve", "gen:poisson2d:6", "--method", "cg", "--backend", "reference", "--device",
                 "0", "--devices", "2", "--json", NULL);
    CK_RUN(r, 0);
    run_free(&r);
    r = run_hisp("mspmv", "gen:poisson2d:6", "--backend", "reference", "--device", "0", "--devices",
                 "3", "--check", "--json", NULL);
    CK_RUN(r, 0);
    ck_assert_int_eq((int)test_json_double(r.out, "devices"), 3);
    ck_has(&r, "\"shared_devices\": true");
    run_free(&r);
    r = run_hisp("mspmv", "gen:poisson2d:6", "--backend", "reference", "--device", "7", NULL);
    CK_RUN(r, 2);
    ck_has(&r, "--device 7");
    run_free(&r);
}
END_TEST

/* ---- reports that say what happened ------------------------------------- */

/* The first data line of a Matrix Market file: its rows, cols, entries. */
static void mtx_sizes(const char *path, long long s[3])
{
    char *text = slurp(path);
    const char *p = text;
    while (*p == '%')
        p = strchr(p, '\n') + 1;
    ck_assert_int_eq(sscanf(p, "%lld %lld %lld", &s[0], &s[1], &s[2]), 3);
    free(text);
}

START_TEST(test_reports_match)
{
    /* gen and convert of 3x3 blocks report the file they write */
    run_result r = run_hisp("gen", "fem3x3", "--n", "4", "-o", tmp("f.mtx"), "--json", NULL);
    CK_RUN(r, 0);
    long long s[3];
    mtx_sizes(tmp("f.mtx"), s);
    ck_assert_int_eq((long long)test_json_double(r.out, "rows"), s[0]);
    ck_assert_int_eq((long long)test_json_double(r.out, "cols"), s[1]);
    ck_assert_int_eq((long long)test_json_double(r.out, "nnz"), s[2]);
    ck_has(&r, "\"blocks\": {");
    run_free(&r);
    r = run_hisp("gen", "fem3x3", "--n", "4", "-o", tmp("f.mtx"), NULL);
    CK_RUN(r, 0);
    char want[128];
    snprintf(want, sizeof want, "%lld x %lld, %lld entries", s[0], s[1], s[2]);
    ck_has(&r, want);
    run_free(&r);
    r = run_hisp("convert", "gen:fem3x3:4", "-o", tmp("f2.mtx"), NULL);
    CK_RUN(r, 0);
    ck_has(&r, want);
    run_free(&r);

    /* spmv reports the time of its one call without --repeat */
    r = run_hisp("spmv", "gen:poisson2d:8", "--backend", "reference", NULL);
    CK_RUN(r, 0);
    ck_has(&r, "\ntime       ");
    run_free(&r);
    r = run_hisp("spmv", "gen:helmholtz:4", "--backend", "reference", "--json", NULL);
    CK_RUN(r, 0);
    ck_assert(test_json_double(r.out, "call_ms") >= 0);
    run_free(&r);

    /* tune takes a .hisp file as every other command does */
    r = run_hisp("convert", "gen:poisson2d:6", "-o", tmp("a.hisp"), NULL);
    CK_RUN(r, 0);
    run_free(&r);
    setenv("HISP_OPTIONS", "cache_dir=off", 1);
    r = run_hisp("tune", tmp("a.hisp"), "--backend", "reference", "--json", NULL);
    CK_RUN(r, 0);
    ck_has(&r, "\"best\": {");
    run_free(&r);
    unsetenv("HISP_OPTIONS");

    /* bench --op spmvt takes complex entries (spmv --transpose does) */
    r = run_hisp("bench", "gen:helmholtz:5", "--op", "spmvt", "--backends", "reference", "--repeat",
                 "1", "--json", NULL);
    CK_RUN(r, 0);
    ck_has(&r, "\"type\": \"c64\"");
    ck_has(&r, "\"status\": \"ok\"");
    run_free(&r);

    /* lsqr on complex entries: the real reason */
    r = run_hisp("solve", "gen:helmholtz:4", "--method", "lsqr", "--backend", "reference", NULL);
    CK_RUN(r, 2);
    ck_has(&r, "real least squares");
    run_free(&r);
}
END_TEST

Suite *suite_cli_options(void)
{
    Suite *s = suite_create("cli_options");
    TCase *tc = test_tcase(s, "cli_options", 900);
    tcase_add_checked_fixture(tc, cli_setup, cli_teardown);
    tcase_add_test(tc, test_help_layout);
    tcase_add_test(tc, test_common_options);
    tcase_add_test(tc, test_transpose_and_aliases);
    tcase_add_test(tc, test_reports_match);
    return s;
}
