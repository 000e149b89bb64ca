/* Test driver: runs every linked suite without forking (OpenCL runtimes do
 * not survive fork), lists skipped tests, ends with check's summary line. */
#include "testutil.h"

#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    (void)test_seed();
    SRunner *sr = NULL;
#define HISP_ADD_SUITE(name)                                                                       \
    if (suite_##name) {                                                                            \
        if (!sr)                                                                                   \
            sr = srunner_create(suite_##name());                                                   \
        else                                                                                       \
            srunner_add_suite(sr, suite_##name());                                                 \
    }
    HISP_SUITES(HISP_ADD_SUITE)
    if (!sr) {
        fprintf(stderr, "no test suites linked\n");
        return 2;
    }
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_SILENT);
    test_skips_print();
    srunner_print(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
