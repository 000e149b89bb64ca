/* Files the `hisp` program reads and writes (issue 23): outputs never
 * replace a pipe, device, directory or link; tiny inputs declaring huge sizes
 * and endless devices are refused fast in bounded memory; pipes and FIFOs
 * are read once; CRLF plans, long numbers, decimal options, f32 scalar
 * ranges and --check on agreeing non-finite values. Commands run through
 * /bin/sh (pipes, FIFOs, ulimit -v) in the tests' temporary folder. */
#include "cli_run.h"
#include "hispi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Address-space cap for the children (KiB): a few GiB of allocation fails. */
#define VMEM_KIB "1500000"

typedef struct {
    int status;
    char *out, *err;
    double secs;
} sh_result;

/* Runs `script` with sh in tmpdir; $H is the hisp program. */
static sh_result sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static sh_result sh(const char *fmt, ...)
{
    char script[4096], cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(script, sizeof script, fmt, ap);
    va_end(ap);
    int len = snprintf(cmd, sizeof cmd, "cd '%s' && H='%s' && export H && (%s) >sh.out 2>sh.err",
                       tmpdir, hisp_program(), script);
    ck_assert(len > 0 && (size_t)len < sizeof cmd);
    double t0 = hispi_now_ms();
    int st = system(cmd);
    sh_result r = {WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), slurp(tmp("sh.out")),
                   slurp(tmp("sh.err")), (hispi_now_ms() - t0) / 1e3};
    return r;
}

static void sh_free(sh_result *r)
{
    free(r->out);
    free(r->err);
}

#define CK_SH(r, want)                                                                             \
    ck_assert_msg((r).status == (want),                                                            \
                  "exit status %d, expected %d\nstdout:\n%.2000s\nstderr:\n%.2000s", (r).status,   \
                  (want), (r).out, (r).err)

/* Under ASan the address-space cap cannot apply (its shadow maps terabytes). */
static const char *vlimit(void)
{
#if defined(__SANITIZE_ADDRESS__)
    return "true";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    return "true";
#else
    return "ulimit -v " VMEM_KIB;
#endif
#else
    return "ulimit -v " VMEM_KIB;
#endif
}

static void gen_small(void)
{
    sh_result r = sh("$H gen random --n 40 --seed 7 -o m.mtx && $H convert m.mtx -o m.hisp");
    CK_SH(r, 0);
    sh_free(&r);
}

/* ---- item 4: output targets --------------------------------------------- */

START_TEST(test_out_refuses_links_and_dirs)
{
    gen_small();
    write_text(tmp("target.txt"), "keep\n");
    static const char *const outs[] = {"link.mtx", "link.hisp"};
    for (int i = 0; i < 2; i++) {
        sh_result r = sh("ln -sf target.txt %s && $H convert m.mtx -o %s", outs[i], outs[i]);
        CK_SH(r, 2);
        ck_assert_msg(strstr(r.err, "symbolic link to a regular file"), "%s", r.err);
        sh_free(&r);
        struct stat st;
        ck_assert(lstat(tmp(outs[i]), &st) == 0 && S_ISLNK(st.st_mode));
        char *t = slurp(tmp("target.txt"));
        ck_assert_str_eq(t, "keep\n");
        free(t);
    }
    sh_result r = sh("ln -sf nowhere dang.mtx && $H convert m.mtx -o dang.mtx");
    CK_SH(r, 2);
    ck_assert_msg(strstr(r.err, "dangling symbolic link"), "%s", r.err);
    sh_free(&r);
    r = sh("mkdir d.mtx && $H convert m.mtx -o d.mtx");
    CK_SH(r, 2);
    ck_assert_msg(strstr(r.err, "cannot write d.mtx: it is a directory"), "%s", r.err);
    sh_free(&r);
    /* the plan of tune --save and the solver's --history, by the same rule */
    r = sh("ln -sf target.txt plan.lnk && $H tune gen:fem3x3:3 --entry "
           "b3x3_f64 --backend reference --search fast --no-cache --save plan.lnk");
    CK_SH(r, 2);
    ck_assert_msg(strstr(r.err, "plan.lnk: it is a symbolic link"), "%s", r.err);
    sh_free(&r);
    r = sh("ln -sf target.txt hist.lnk && $H solve gen:poisson2d:8 --method cg --history hist.lnk");
    CK_SH(r, 2);
    ck_assert_msg(strstr(r.err, "hist.lnk: it is a symbolic link"), "%s", r.err);
    sh_free(&r);
    char *t = slurp(tmp("target.txt"));
    ck_assert_str_eq(t, "keep\n");
    free(t);
}
END_TEST

START_TEST(test_out_streams_through_fifo_and_devices)
{
    gen_small();
    /* a FIFO stays a FIFO: the reader gets the file */
    sh_result r = sh("rm -f out.fifo got.mtx && mkfifo out.fifo && { cat out.fifo > got.mtx & } && "
                     "timeout 60 $H convert m.mtx -o out.fifo; s=$?; wait; exit $s");
    CK_SH(r, 0);
    sh_free(&r);
    struct stat st;
    ck_assert(lstat(tmp("out.fifo"), &st) == 0 && S_ISFIFO(st.st_mode));
    char *a = slurp(tmp("got.mtx"));
    ck_assert_msg(strncmp(a, "%%MatrixMarket", 14) == 0, "%.200s", a);
    free(a);
    /* /dev/stdout (a link to a pipe here) and /dev/null */
    r = sh("$H convert m.mtx -o /dev/stdout | head -1 && $H convert m.mtx -o /dev/null && "
           "$H spmv m.mtx --out /dev/null");
    CK_SH(r, 0);
    ck_assert_msg(strncmp(r.out, "%%MatrixMarket", 14) == 0, "%.200s", r.out);
    sh_free(&r);
    /* a regular file: replaced whole, its permission bits kept */
    r = sh("cp m.mtx old.mtx && chmod 640 old.mtx && $H convert m.hisp -o old.mtx");
    CK_SH(r, 0);
    sh_free(&r);
    ck_assert(stat(tmp("old.mtx"), &st) == 0 && (st.st_mode & 0777) == 0640);
    a = slurp(tmp("old.mtx"));
    ck_assert(strstr(a, "%%MatrixMarket"));
    free(a);
}
END_TEST

/* ---- item 5: tiny inputs, huge declarations; endless devices ----------- */

START_TEST(test_tiny_file_huge_sizes)
{
    write_text(tmp("wide.mtx"), "%%MatrixMarket matrix coordinate real general\n"
                                "1 2147483647 1\n1 1 1\n");
    write_text(tmp("tall.mtx"), "%%MatrixMarket matrix coordinate real general\n"
                                "2147483647 1 1\n1 1 1\n");
    static const char *const files[] = {"wide.mtx", "tall.mtx"};
    static const char *const cmds[] = {"convert %s -o o.mtx", "stats %s", "spmv %s",
                                       "convert %s -o o.hisp"};
    for (int f = 0; f < 2; f++)
        for (int c = 0; c < 4; c++) {
            char cmd[128];
            snprintf(cmd, sizeof cmd, cmds[c], files[f]);
            sh_result r = sh("%s; $H %s", vlimit(), cmd);
            CK_SH(r, 2);
            ck_assert_msg(strstr(r.err, "too large for a 64-byte file") ||
                              strstr(r.err, "too large for a 67-byte file"),
                          "%s: %s", cmd, r.err);
            ck_assert_msg(strstr(r.err, "2^20 + 8 x the file size"), "%s", r.err);
            ck_assert_msg(r.secs < 10, "%s took %.1f s", cmd, r.secs);
            sh_free(&r);
        }
    /* the same in a .hisp: sizes patched, the header checksum made right */
    sh_result r = sh("$H gen random --n 4 --seed 3 -o s.mtx && $H convert s.mtx -o s.hisp");
    CK_SH(r, 0);
    sh_free(&r);
    char *img = NULL;
    FILE *fp = fopen(tmp("s.hisp"), "rb");
    ck_assert(fp);
    img = malloc(1 << 16);
    size_t n = fread(img, 1, 1 << 16, fp);
    fclose(fp);
    ck_assert(n > 96);
    uint64_t big = INT32_MAX, h;
    memcpy(img + 32, &big, 8); /* nrows */
    memcpy(img + 40, &big, 8); /* ncols */
    h = hispi_hash(img, 88, 0);
    memcpy(img + 88, &h, 8);
    fp = fopen(tmp("huge.hisp"), "wb");
    ck_assert(fp && fwrite(img, 1, n, fp) == n && fclose(fp) == 0);
    free(img);
    r = sh("%s; $H spmv huge.hisp", vlimit());
    CK_SH(r, 2);
    ck_assert_msg(strstr(r.err, "too large for a") && strstr(r.err, "2^20 + 8 x the file size"),
                  "%s", r.err);
    sh_free(&r);
    /* below the limit is fine: 2^20 columns from a tiny file */
    write_text(tmp("ok.mtx"), "%%MatrixMarket matrix coordinate real general\n"
                              "1 1048576 1\n1 1048576 2.5\n");
    r = sh("%s; $H stats ok.mtx", vlimit());
    CK_SH(r, 0);
    sh_free(&r);
}
END_TEST

START_TEST(test_endless_devices)
{
    gen_small();
    static const char *const cmds[] = {
        "stats /dev/zero",
        "stats /dev/urandom",
        "convert /dev/zero -o o.mtx",
        "spmv m.mtx --x /dev/zero",
        "edit m.hisp --insert /dev/zero -o e.hisp",
        "spmv gen:fem3x3:3 --entry b3x3_f64 --backend reference --plan /dev/zero",
        "solve /dev/zero --method cg"};
    for (size_t c = 0; c < sizeof cmds / sizeof cmds[0]; c++) {
        sh_result r = sh("%s; timeout 60 $H %s", vlimit(), cmds[c]);
        CK_SH(r, 2);
        /* refused for what the bytes are, not after reading until memory ran out */
        ck_assert_msg(!strstr(r.err, "allocate") && !strstr(r.err, "memory"), "%s: %s", cmds[c],
                      r.err);
        ck_assert_msg(r.secs < 10, "%s took %.1f s", cmds[c], r.secs);
        sh_free(&r);
    }
    /* a stream that looks right but never ends stops at the documented 1 GiB */
    sh_result r = sh("(cat m.mtx; head -c 1200000000 /dev/zero) | timeout 120 $H stats "
                     "/dev/stdin");
    CK_SH(r, 2);
    ck_assert_msg(strstr(r.err, "more than 1024 MiB from a pipe or device"), "%s", r.err);
    sh_free(&r);
}
END_TEST

/* ---- item 6: inputs read once -------------------------------------------- */

START_TEST(test_pipes_and_fifos)
{
    gen_small();
    sh_result want = sh("$H stats m.mtx --json");
    CK_SH(want, 0);
    static const char *const cmds[] = {
        "cat m.mtx | $H stats /dev/stdin --json",
        "cat m.hisp | $H stats /dev/stdin --json",
        "mkfifo in.fifo && { cat m.mtx > in.fifo & } && timeout 60 $H stats in.fifo --json",
        "rm -f in.fifo && mkfifo in.fifo && { cat m.hisp > in.fifo & } && timeout 60 $H stats "
        "in.fifo --json",
    };
    for (size_t c = 0; c < sizeof cmds / sizeof cmds[0]; c++) {
        sh_result r = sh("%s", cmds[c]);
        CK_SH(r, 0);
        ck_assert_msg(test_json_double(r.out, "nnz") == test_json_double(want.out, "nnz") &&
                          test_json_double(r.out, "rows") == test_json_double(want.out, "rows"),
                      "%s:\n%s\nvs\n%s", cmds[c], r.out, want.out);
        sh_free(&r);
    }
    sh_free(&want);
    /* solve sniffs the format and the banner's field, then reads: one read */
    sh_result r =
        sh("$H gen poisson2d --n 6 -o p.mtx && cat p.mtx | timeout 60 $H solve --method cg "
           "/dev/stdin && cat p.mtx | $H convert /dev/stdin -o p2.hisp && cat p.mtx | "
           "$H spmv /dev/stdin --check");
    CK_SH(r, 0);
    sh_free(&r);
}
END_TEST

/* ---- item 9: the smaller ones ---------------------------------------------- */

START_TEST(test_small_items)
{
    /* --n 010 is ten, not octal eight */
    sh_result r = sh("$H gen poisson2d --n 010 -o ten.mtx --json");
    CK_SH(r, 0);
    ck_assert_msg(test_json_double(r.out, "rows") == 100, "%s", r.out);
    sh_free(&r);
    /* f32 scalars out of range are refused, not made inf or 0 */
    r = sh("$H gen poisson2d --n 4 -o p.mtx && $H spmv p.mtx --precision f32 --alpha 1e39");
    CK_SH(r, 2);
    ck_assert_msg(strstr(r.err, "--alpha: 1e+39 is out of range for f32"), "%s", r.err);
    sh_free(&r);
    r = sh("$H spmv p.mtx --precision f32 --beta -1e-60");
    CK_SH(r, 2);
    ck_assert_msg(strstr(r.err, "--beta") && strstr(r.err, "rounds to 0"), "%s", r.err);
    sh_free(&r);
    r = sh("$H spmv p.mtx --precision f64 --alpha 1e39 --check");
    CK_SH(r, 0);
    sh_free(&r);
    /* --check: both backends give the same inf and NaN entries */
    write_text(tmp("inf.mtx"), "%%MatrixMarket matrix coordinate real general\n"
                               "3 3 3\n1 1 inf\n2 2 1.5\n3 3 nan\n");
    r = sh("$H spmv inf.mtx --check --backend reference");
    CK_SH(r, 0);
    sh_free(&r);
    /* numbers longer than 127 characters */
    char longnum[400] = "1.";
    for (int i = 0; i < 300; i++)
        strcat(longnum, i == 299 ? "1" : "0");
    char text[600];
    snprintf(text, sizeof text,
             "%%%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 %s\n2 2 %se-0\n", longnum,
             longnum);
    write_text(tmp("long.mtx"), text);
    r = sh("$H stats long.mtx --json");
    CK_SH(r, 0);
    ck_assert_msg(test_json_double(r.out, "nnz") == 2, "%s", r.out);
    sh_free(&r);
    /* a plan with CRLF line ends */
    r = sh(
        "$H tune gen:fem3x3:3 --entry b3x3_f64 --backend reference "
        "--search fast --no-cache --save plan.txt && sed 's/$/\\r/' plan.txt > crlf.txt && grep -c "
        "\"$(printf '\\r')\" crlf.txt && $H spmv gen:fem3x3:3 --entry b3x3_f64 --backend "
        "reference --plan crlf.txt --check");
    CK_SH(r, 0);
    sh_free(&r);
}
END_TEST

/* The library's writers and readers by the same rules, without the CLI. */
START_TEST(test_library_files)
{
    hisp_context ctx = test_default_context();
    int32_t rows[2] = {0, 1}, cols[2] = {1, 0};
    double vals[2] = {2.5, -1.25};
    hisp_matrix A = NULL;
    ck_assert_int_eq(hisp_matrix_create_coo(ctx, HISP_F64, 2, 2, 2, rows, cols, vals, &A),
                     HISP_SUCCESS);
    write_text(tmp("t.txt"), "keep\n");
    ck_assert(symlink("t.txt", tmp("l.hisp")) == 0 && symlink("t.txt", tmp("l.mtx")) == 0);
    hisp_error_info e;
    ck_assert_int_eq(hisp_matrix_save(A, tmp("l.hisp")), HISP_ERR_IO);
    ck_assert(hisp_context_last_error(ctx, &e) == HISP_SUCCESS &&
              strstr(e.message, "symbolic link to a regular file"));
    ck_assert_int_eq(hisp_matrix_write_mtx(A, tmp("l.mtx")), HISP_ERR_IO);
    ck_assert_int_eq(hisp_file_write(ctx, tmp("l.mtx"), "x", 1), HISP_ERR_IO);
    ck_assert_int_eq(hisp_file_write(ctx, tmpdir, "x", 1), HISP_ERR_IO);
    ck_assert(hisp_context_last_error(ctx, &e) == HISP_SUCCESS &&
              strstr(e.message, "it is a directory"));
    char *t = slurp(tmp("t.txt"));
    ck_assert_str_eq(t, "keep\n");
    free(t);
    /* a read-only file stays refused; a writable one is replaced whole */
    write_text(tmp("ro.mtx"), "old\n");
    ck_assert(chmod(tmp("ro.mtx"), 0444) == 0);
    if (geteuid() != 0) /* root may write anything */
        ck_assert_int_eq(hisp_matrix_write_mtx(A, tmp("ro.mtx")), HISP_ERR_IO);
    ck_assert_int_eq(hisp_file_write(ctx, tmp("w.txt"), "new\n", 4), HISP_SUCCESS);
    t = slurp(tmp("w.txt"));
    ck_assert_str_eq(t, "new\n");
    free(t);
    /* buffers too: S bytes may declare 2^20 + 8 S rows (57 bytes here: 2^20 + 456) */
    static const char hdr[] = "%%MatrixMarket matrix coordinate real general\n";
    char buf[160];
    hisp_matrix B = NULL;
    snprintf(buf, sizeof buf, "%s%d 1 0\n", hdr, (1 << 20) + 8 * 64);
    ck_assert_int_eq(hisp_matrix_read_mtx_buffer(ctx, buf, strlen(buf), "b", HISP_F64, &B, NULL),
                     HISP_ERR_INPUT_FORMAT);
    snprintf(buf, sizeof buf, "%s%d 1 0\n", hdr, 1 << 20);
    ck_assert_int_eq(hisp_matrix_read_mtx_buffer(ctx, buf, strlen(buf), "b", HISP_F64, &B, NULL),
                     HISP_SUCCESS);
    hisp_matrix_destroy(&B);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
}
END_TEST

/* gzip and bzip2 (issue 24): .gz / .bz2 outputs by name, compressed inputs
 * from files and pipes by their bytes, and the banner's field of a
 * compressed complex file for the default type. */
START_TEST(test_compressed_files)
{
    gen_small();
    sh_result r =
        sh("$H convert m.mtx -o z.mtx.gz && $H convert z.mtx.gz -o z.mtx.bz2 && "
           "gzip -t z.mtx.gz && bzip2 -t z.mtx.bz2 && "
           "want=$($H stats m.mtx | grep '^nnz') && "
           "[ \"$(bzcat z.mtx.bz2 | gzip -c | $H stats /dev/stdin | grep '^nnz')\" = "
           "\"$want\" ] && [ \"$($H stats z.mtx.bz2 | grep '^nnz')\" = \"$want\" ] && "
           "printf '\\n %%%%%%%%MatrixMarket matrix coordinate complex general\\n2 2 2\\n1 1 2 "
           "0\\n2 2 3 1\\n' | gzip > c.mtx.gz && $H solve c.mtx.gz --method bicgstab");
    CK_SH(r, 0);
    sh_free(&r);
    r = sh("printf 'not gzip' | gzip | head -c 12 > t.gz; $H stats t.gz");
    CK_SH(r, 2);
    ck_assert_msg(strstr(r.err, "gzip"), "%s", r.err);
    sh_free(&r);
}
END_TEST

/* Compressed inputs are bounded by their compressed size: the dimensions a
 * file may declare (2^20 + 8 x the compressed bytes, checked on the first
 * decompressed bytes, before the rest is expanded), the entries (storage for
 * the entry lines present, not the count declared) and the decompressed
 * bytes of all levels together (bzip2 of a gzip file: one limit). */
START_TEST(test_compressed_bounds)
{
    /* 400M rows declared by a 60 MB run of blanks, gzipped to about 60 KB */
    sh_result r = sh("{ printf '%%%%%%%%MatrixMarket matrix coordinate real general\n400000000 1 "
                     "1\n1 1 1\n'; head -c 60000000 /dev/zero | tr '\\0' ' '; } | gzip -1 > "
                     "tall.mtx.gz && bzip2 -c tall.mtx.gz > tall2.mtx.bz2");
    CK_SH(r, 0);
    sh_free(&r);
    static const char *const files[] = {"tall.mtx.gz", "tall2.mtx.bz2"};
    for (int f = 0; f < 2; f++) {
        r = sh("%s; $H stats %s", vlimit(), files[f]);
        CK_SH(r, 2);
        ck_assert_msg(strstr(r.err, ":2: size line: 400000000 x 1 is too large") &&
                          strstr(r.err, "-byte compressed file"),
                      "%s: %s", files[f], r.err);
        ck_assert_msg(r.secs < 5, "%s took %.1f s", files[f], r.secs);
        sh_free(&r);
    }
    /* 60M symmetric entries declared, one present among 250 MB of blanks:
     * storage for what is there (the declared count needs 1.9 GB with room
     * for the mirrored entries, above the cap) */
    r = sh("{ printf '%%%%%%%%MatrixMarket matrix coordinate pattern symmetric\n1000 1000 "
           "60000000\n1 1\n'; head -c 250000000 /dev/zero | tr '\\0' ' '; } | gzip -1 > "
           "few.mtx.gz; %s; $H stats few.mtx.gz",
           vlimit());
    CK_SH(r, 2);
    ck_assert_msg(strstr(r.err, "ends after 1 of the 60000000 entries declared on line 2"), "%s",
                  r.err);
    sh_free(&r);
    /* a valid file of 1 GiB - 512 KiB gzipped (1 MB), then bzip2'd: each
     * level alone is under 1 GiB, together they are over */
    r = sh("{ printf '%%%%%%%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1\n'; "
           "head -c %llu /dev/zero | tr '\\0' ' '; } | gzip -1 | bzip2 > nest.mtx.bz2; %s; $H "
           "stats nest.mtx.bz2",
           (1ull << 30) - (512ull << 10), vlimit());
    CK_SH(r, 2);
    ck_assert_msg(strstr(r.err, "bzip2 data of") && strstr(r.err, "all levels together"), "%s",
                  r.err);
    sh_free(&r);
    /* three levels are read, a fourth is refused */
    r = sh("printf '%%%%%%%%MatrixMarket matrix coordinate real general\n2 2 1\n2 2 5\n' | gzip | "
           "bzip2 | gzip > l3.mtx.gz && $H stats l3.mtx.gz | grep -q '^nnz' && gzip -c l3.mtx.gz > "
           "l4.mtx.gz && $H stats l4.mtx.gz");
    CK_SH(r, 2);
    ck_assert_msg(strstr(r.err, "compressed more than 3 times over"), "%s", r.err);
    sh_free(&r);
}
END_TEST

Suite *suite_cli_files(void)
{
    Suite *s = suite_create("cli_files");
    if (!hisp_program()) {
        test_skip("cli_files tests: the hisp program was not found next to the test binary");
        return s;
    }
    TCase *tc = test_tcase(s, "cli_files", 600);
    tcase_add_checked_fixture(tc, cli_setup, cli_teardown);
    tcase_add_test(tc, test_out_refuses_links_and_dirs);
    tcase_add_test(tc, test_out_streams_through_fifo_and_devices);
    tcase_add_test(tc, test_tiny_file_huge_sizes);
    tcase_add_test(tc, test_endless_devices);
    tcase_add_test(tc, test_pipes_and_fifos);
    tcase_add_test(tc, test_small_items);
    tcase_add_test(tc, test_library_files);
    tcase_add_test(tc, test_compressed_files);
    tcase_add_test(tc, test_compressed_bounds);
    return s;
}
