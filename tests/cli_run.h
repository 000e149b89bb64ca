/* Running the `hisp` program in tests (cli_run.c). */
#ifndef HISP_TEST_CLI_RUN_H
#define HISP_TEST_CLI_RUN_H

#include "testutil.h"

#include <limits.h>
#include <stdbool.h>

typedef struct {
    int status; /* exit code, or 128 + signal */
    char *out, *err;
} run_result;

/* The program of the same build variant (test_hisp_bin), else the release
 * build's; NULL when neither is built. */
const char *hisp_program(void);
/* Runs hisp with the given arguments (NULL-terminated); stdout and stderr
 * are captured. Killed after 300 s. */
run_result run_hisp(const char *arg, ...);
/* The same with the arguments in a NULL-terminated array (at most 62). */
run_result run_hisp_argv(const char *const *args);
/* Any program (argv[0], found on PATH when it has no '/'), as run_hisp. */
run_result run_program(const char *const *argv);
void run_free(run_result *r);

#define CK_RUN(r, want)                                                                            \
    ck_assert_msg((r).status == (want),                                                            \
                  "exit status %d, expected %d\nstdout:\n%.3000s\nstderr:\n%.3000s", (r).status,   \
                  (want), (r).out, (r).err) /* check caps a message's length */

/* The tests' temporary folder: cli_setup makes it, cli_teardown removes it
 * (a checked fixture). */
extern char tmpdir[PATH_MAX];
void cli_setup(void);
void cli_teardown(void);
/* A path inside it (static buffers, 8 in rotation). */
const char *tmp(const char *name);
void write_text(const char *path, const char *text);
/* A whole file, NUL-terminated (malloc'd). */
char *slurp(const char *path);

/* Is text one valid JSON value? */
bool json_valid(const char *text);
/* The numbers of a JSON text: test_json_double (testutil.h). */

#endif
