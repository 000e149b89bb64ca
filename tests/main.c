/* Test driver: runs the linked suites one after the other without forking
 * (OpenCL runtimes do not survive fork), one check runner per suite so that
 * each suite says when it starts and how it ended (checks, seconds, passes
 * and failures, each failure as a check result line), lists skipped tests,
 * and ends with check's summary line over every suite (CI reads the last
 * line). CK_RUN_SUITE and CK_RUN_CASE select as with check's own runner. */
#include "testutil.h"

#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern int test_skips_print(void);

/* A crash in a driver or a runtime (no fork: it takes the whole run) says
 * where it was: the frames as module(+offset), for addr2line on the same
 * binary. Not under ASan, which reports crashes itself. */
#ifndef __SANITIZE_ADDRESS__
static void on_crash(int sig)
{
    void *frames[48];
    int n = backtrace(frames, 48);
    static const char msg[] = "\ncheck_hisp: fatal signal; backtrace:\n";
    if (write(2, msg, sizeof msg - 1) < 0) _exit(128 + sig);
    backtrace_symbols_fd(frames, n, 2);
    _exit(128 + sig);
}
#endif

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct {
    const char *name;
    Suite *(*make)(void);
} suite_entry;

typedef struct {
    int checks, failures, errors;
} tally;

/* check's own summary figure (check_str.c: percent_passed) */
static int percent_passed(const tally *t)
{
    if (t->failures == 0 && t->errors == 0) return 100;
    if (t->checks == 0) return 0;
    return (int)((float)(t->checks - (t->failures + t->errors)) / (float)t->checks * 100);
}

/* Runs one suite and prints its end line and its failures (check's
 * "file:line:F|E:case: message" form); adds its counts into *sum. */
static void run_suite(Suite *su, const char *name, int k, int n, tally *sum)
{
    printf("[%2d/%d] %s: started\n", k, n, name);
    fflush(stdout);
    SRunner *sr = srunner_create(su);
    srunner_set_fork_status(sr, CK_NOFORK);
    double t0 = now_s();
    srunner_run_all(sr, CK_SILENT);
    double secs = now_s() - t0;
    free(test_stderr_end()); /* a test that failed while capturing its debug log */
    tally t = {srunner_ntests_run(sr), 0, 0};
    int nbad = srunner_ntests_failed(sr);
    TestResult **bad = nbad ? srunner_failures(sr) : NULL;
    for (int i = 0; bad && i < nbad; i++)
        if (tr_rtype(bad[i]) == CK_ERROR)
            t.errors++;
        else
            t.failures++;
    if (!nbad)
        printf("[%2d/%d] %s: %d check%s passed in %.1f s\n", k, n, name, t.checks,
               t.checks == 1 ? "" : "s", secs);
    else
        printf("[%2d/%d] %s: %d check%s in %.1f s: %d passed, %d failed, %d error%s\n", k, n, name,
               t.checks, t.checks == 1 ? "" : "s", secs, t.checks - nbad, t.failures, t.errors,
               t.errors == 1 ? "" : "s");
    for (int i = 0; bad && i < nbad; i++)
        printf("%s:%d:%s:%s: %s%s\n", tr_lfile(bad[i]) ? tr_lfile(bad[i]) : "?", tr_lno(bad[i]),
               tr_rtype(bad[i]) == CK_ERROR ? "E" : "F", tr_tcname(bad[i]),
               tr_rtype(bad[i]) == CK_ERROR ? "(after this point) " : "",
               tr_msg(bad[i]) ? tr_msg(bad[i]) : "");
    fflush(stdout);
    free(bad);
    srunner_free(sr);
    sum->checks += t.checks;
    sum->failures += t.failures;
    sum->errors += t.errors;
}

int main(int argc, char **argv)
{
    /* a fresh process for one first-use trial (check_concurrency.c) */
    if (argc == 4 && !strcmp(argv[1], "--first-use")) return test_first_use(argv[2], atoi(argv[3]));
#ifndef __SANITIZE_ADDRESS__
    signal(SIGSEGV, on_crash);
    signal(SIGBUS, on_crash);
    signal(SIGFPE, on_crash);
#endif
    test_env_snapshot(); /* before anything touches OpenCL */
    /* solves on a CPU device on its kernels, not the host's loops that small
     * systems take there (check_solver.c's test_host_path takes them) */
    extern int64_t hispi_solve_host_rows;
    hispi_solve_host_rows = 0;
    /* several right-hand sides in lock step on CPU devices too (the library
     * takes it on GPUs only, where it is faster) */
    extern int hispi_solve_block_cpu;
    hispi_solve_block_cpu = 1;
    (void)test_seed();
#define HISP_SUITE_ENTRY(name) {#name, suite_##name},
    static const suite_entry all[] = {HISP_SUITES(HISP_SUITE_ENTRY)};
    enum { NALL = sizeof all / sizeof all[0] };
    const char *only = getenv("CK_RUN_SUITE"), *only_case = getenv("CK_RUN_CASE");
    if (only && !*only) only = NULL;
    if (only_case && !*only_case) only_case = NULL;
    /* the suites to run: linked, named by CK_RUN_SUITE, holding CK_RUN_CASE */
    Suite *made[NALL] = {0};
    int n = 0, linked = 0;
    for (int i = 0; i < NALL; i++) {
        if (!all[i].make) continue;
        linked++;
        if (only && strcmp(only, all[i].name) != 0) continue;
        made[i] = all[i].make();
        if (only_case && !suite_tcase(made[i], only_case)) {
            srunner_free(srunner_create(made[i])); /* frees the suite */
            made[i] = NULL;
            continue;
        }
        n++;
    }
    if (!linked) {
        fprintf(stderr, "no test suites linked\n");
        return 2;
    }
    if (!n) {
        fprintf(stderr, "check_hisp: no suite%s%s%s%s%s\n", only ? " named " : "", only ? only : "",
                only_case ? " with a test case named " : "", only_case ? only_case : "",
                only || only_case ? "" : " selected");
        return 2;
    }
    tally sum = {0};
    double t0 = now_s();
    for (int i = 0, k = 0; i < NALL; i++)
        if (made[i]) run_suite(made[i], all[i].name, ++k, n, &sum);
    test_skips_print();
    printf("%d suite%s in %.0f s\n", n, n == 1 ? "" : "s", now_s() - t0);
    printf("%d%%: Checks: %d, Failures: %d, Errors: %d\n", percent_passed(&sum), sum.checks,
           sum.failures, sum.errors);
    fflush(stdout);
    return sum.failures || sum.errors ? 1 : 0;
}
