/* README.md as a user pastes it: its C block is examples/readme_example.c,
 * which compiles against this build's libhisp.so and runs; every line of its
 * CLI tour runs in order with exit status 0; docs/GUIDE.md's C snippets
 * compile against core/hisp.h (tests/readme_check.sh). */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int shell(const char *cmd)
{
    test_env_restore();
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* cmd's exit status; the end of its stdout and stderr in out (cap bytes
 * with the NUL), for the failure message: a passing run prints nothing. */
static int shell_out(const char *cmd, char *out, size_t cap)
{
    char full[16500];
    snprintf(full, sizeof full, "( %s ) 2>&1", cmd);
    test_env_restore();
    FILE *f = popen(full, "r");
    ck_assert_ptr_nonnull(f);
    size_t len = 0, size = 1 << 16, n;
    char *all = malloc(size);
    ck_assert_ptr_nonnull(all);
    while ((n = fread(all + len, 1, size - len, f)) > 0)
        if ((len += n) == size) {
            all = realloc(all, size *= 2);
            ck_assert_ptr_nonnull(all);
        }
    int st = pclose(f);
    size_t keep = len < cap - 1 ? len : cap - 1;
    memcpy(out, all + len - keep, keep);
    out[keep] = 0;
    free(all);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

START_TEST(test_readme_as_pasted)
{
    const char *bin = test_hisp_bin();
    ck_assert_msg(bin != NULL, "the hisp program of this build is missing");
    char cmd[8192];
    static char out[8192];
    snprintf(cmd, sizeof cmd, "'%s/tests/readme_check.sh' '%s/README.md' '%s'", HISP_SOURCE_DIR,
             HISP_SOURCE_DIR, bin);
    ck_assert_msg(shell_out(cmd, out, sizeof out) == 0, "README.md does not run as pasted:\n%s",
                  out);
}
END_TEST

/* examples/readme_example.c built against this variant's library (the
 * sanitizers' runtime too where the library has it) and run: exit 0 means
 * its CG solve converged. */
START_TEST(test_readme_example_runs)
{
    const char *bin = test_hisp_bin();
    ck_assert_msg(bin != NULL, "the hisp program of this build is missing");
    char lib[4096];
    snprintf(lib, sizeof lib, "%s", bin);
    *strrchr(lib, '/') = 0;                                        /* <variant>/bin */
    snprintf(strrchr(lib, '/'), sizeof lib - strlen(lib), "/lib"); /* <variant>/lib */
    char dir[] = "/tmp/hisp_readme_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
#ifdef __SANITIZE_ADDRESS__
    const char *san = "-fsanitize=address,undefined";
#else
    const char *san = "";
#endif
    char cmd[16384];
    snprintf(cmd, sizeof cmd,
             "cc -std=c11 -Wall -Wextra -Werror %s -I'%s/core' '%s/examples/readme_example.c' "
             "-L'%s' -lhisp -Wl,-rpath,'%s' -o '%s/readme_example' && '%s/readme_example'",
             san, HISP_SOURCE_DIR, HISP_SOURCE_DIR, lib, lib, dir, dir);
    static char out[8192];
    int rc = shell_out(cmd, out, sizeof out);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    (void)shell(cmd);
    ck_assert_msg(rc == 0, "examples/readme_example.c: build or run failed (exit %d):\n%s", rc,
                  out);
}
END_TEST

Suite *suite_readme(void)
{
    Suite *s = suite_create("readme");
    TCase *tc = test_tcase(s, "readme", 600);
    tcase_add_test(tc, test_readme_as_pasted);
    tcase_add_test(tc, test_readme_example_runs);
    return s;
}
