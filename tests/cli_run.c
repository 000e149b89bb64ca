/* Running the `hisp` program in tests: a child process per call on files of
 * a temporary folder, output captured, and a small JSON checker (the cli
 * and cli_solve suites). */
#include "cli_run.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* ---- running the program ---------------------------------------------- */

/* The program of the same build variant (test_hisp_bin), else the release
 * build's. */
const char *hisp_program(void)
{
    const char *p = test_hisp_bin();
    if (p) return p;
    return access(HISP_SOURCE_DIR "/build/bin/hisp", X_OK) == 0 ? HISP_SOURCE_DIR "/build/bin/hisp"
                                                                : NULL;
}

char tmpdir[PATH_MAX];

char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    ck_assert(buf);
    size_t got;
    while ((got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len < 2) {
            cap *= 2;
            buf = realloc(buf, cap);
            ck_assert(buf);
        }
    }
    buf[len] = 0;
    fclose(f);
    return buf;
}

void run_free(run_result *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

/* Runs hisp with the given arguments (NULL-terminated); stdout and stderr
 * are captured. Killed after 300 s. */
run_result run_hisp(const char *arg, ...)
{
    const char *args[64];
    int argc = 0;
    va_list ap;
    va_start(ap, arg);
    for (const char *a = arg; a && argc < 63; a = va_arg(ap, const char *))
        args[argc++] = a;
    va_end(ap);
    args[argc] = NULL;
    return run_hisp_argv(args);
}

run_result run_hisp_argv(const char *const *args)
{
    const char *argv[64];
    int argc = 0;
    argv[argc++] = hisp_program();
    for (int i = 0; args[i] && argc < 63; i++)
        argv[argc++] = args[i];
    argv[argc] = NULL;
    return run_program(argv);
}

run_result run_program(const char *const *argv)
{
    const char *arg = argv[1];
    ck_assert_msg(tmpdir[0], "run_hisp outside cli_setup / cli_teardown");
    char outp[PATH_MAX + 16], errp[PATH_MAX + 16];
    snprintf(outp, sizeof outp, "%s/stdout", tmpdir);
    snprintf(errp, sizeof errp, "%s/stderr", tmpdir);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, outp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    /* the child gets none of this process's other descriptors (device files
     * of the GPU drivers included) */
    posix_spawn_file_actions_addclosefrom_np(&fa, 3);
    test_env_restore();
    fflush(stdout);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    ck_assert_msg(rc == 0, "cannot start %s: %s", argv[0], strerror(rc));
    int st = 0;
    for (int waited = 0;; waited++) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) break;
        ck_assert_msg(w == 0 || errno == EINTR, "waitpid: %s", strerror(errno));
        if (waited > 30000) { /* 300 s at 10 ms */
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            ck_abort_msg("%s %s ... did not finish within 300 s", argv[0], arg);
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    run_result r;
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    r.out = slurp(outp);
    r.err = slurp(errp);
    return r;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void cli_setup(void)
{
    snprintf(tmpdir, sizeof tmpdir, "%s/hisp_cli_XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    ck_assert_msg(mkdtemp(tmpdir) != NULL, "mkdtemp: %s", strerror(errno));
}

void cli_teardown(void)
{
    if (tmpdir[0]) nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    tmpdir[0] = 0;
}

/* A path inside the test's temporary folder (static buffers, 8 in rotation). */
const char *tmp(const char *name)
{
    static char bufs[8][PATH_MAX + 64];
    static int next;
    char *b = bufs[next++ % 8];
    snprintf(b, sizeof bufs[0], "%s/%s", tmpdir, name);
    return b;
}

void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    ck_assert(f);
    fputs(text, f);
    fclose(f);
}

/* ---- a small JSON checker --------------------------------------------- */

typedef struct {
    const char *p;
    int depth;
} jparse;

static void jws(jparse *j)
{
    while (*j->p == ' ' || *j->p == '\n' || *j->p == '\t' || *j->p == '\r')
        j->p++;
}

static bool jvalue(jparse *j);

static bool jstring(jparse *j)
{
    if (*j->p != '"') return false;
    for (j->p++; *j->p != '"'; j->p++) {
        if (!*j->p || (unsigned char)*j->p < 0x20) return false;
        if (*j->p == '\\') {
            j->p++;
            if (*j->p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!isxdigit((unsigned char)j->p[i])) return false;
                j->p += 4;
            } else if (!strchr("\"\\/bfnrt", *j->p) || !*j->p) {
                return false;
            }
        }
    }
    j->p++;
    return true;
}

static bool jcontainer(jparse *j, char close, bool object)
{
    if (++j->depth > 64) return false;
    j->p++;
    jws(j);
    if (*j->p == close) {
        j->p++;
        j->depth--;
        return true;
    }
    for (;;) {
        jws(j);
        if (object) {
            if (!jstring(j)) return false;
            jws(j);
            if (*j->p++ != ':') return false;
        }
        if (!jvalue(j)) return false;
        jws(j);
        if (*j->p == ',') {
            j->p++;
            continue;
        }
        if (*j->p++ != close) return false;
        j->depth--;
        return true;
    }
}

static bool jvalue(jparse *j)
{
    jws(j);
    const char *p = j->p;
    if (*p == '{') return jcontainer(j, '}', true);
    if (*p == '[') return jcontainer(j, ']', false);
    if (*p == '"') return jstring(j);
    static const char *const words[] = {"true", "false", "null"};
    for (int i = 0; i < 3; i++)
        if (strncmp(p, words[i], strlen(words[i])) == 0) {
            j->p += strlen(words[i]);
            return true;
        }
    /* number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
    if (*p == '-') p++;
    if (*p == '0')
        p++;
    else if (isdigit((unsigned char)*p))
        while (isdigit((unsigned char)*p))
            p++;
    else
        return false;
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p)) return false;
        while (isdigit((unsigned char)*p))
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!isdigit((unsigned char)*p)) return false;
        while (isdigit((unsigned char)*p))
            p++;
    }
    j->p = p;
    return true;
}

bool json_valid(const char *text)
{
    jparse j = {text, 0};
    if (!jvalue(&j)) return false;
    jws(&j);
    return *j.p == 0;
}
