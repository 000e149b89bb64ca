/* Test driver: runs every linked suite without forking (OpenCL runtimes do
 * not survive fork), lists skipped tests, ends with check's summary line. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>

extern int test_skips_print(void);

int main(void)
{
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
