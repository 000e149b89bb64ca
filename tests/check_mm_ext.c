/* mm_ext: the Matrix Market reader against the files of the peers' test
 * suites in ../shared/mm_ext (not copied here), with each peer's verdict in
 * SOURCES.txt (fast_matrix_market / scipy / scipy's legacy reader):
 *   - every file all three read is read as fast_matrix_market reads it:
 *     shape, entries after mirroring (coordinate files) and checksums of
 *     the values from tests/mm_ext_expected.h (tests/mm_ext_expected.py);
 *   - every file all three refuse is refused with a line number;
 *   - files the peers disagree on are read or refused cleanly.
 * Two files every peer reads are refused on purpose: entry lines with more
 * values than the field has (LAGraph's mangled5 and mangled6, "2 2 1 1" in
 * a pattern and a real file), whose meaning is not clear. */
#include "testutil.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mm_ext_expected.h"

static const char *const refused_on_purpose[] = {
    "GraphBLAS__LAGraph/data/mangled5.mtx",
    "GraphBLAS__LAGraph/data/mangled6.mtx",
};

static char *slurp_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(b);
    ck_assert_int_eq(fread(b, 1, (size_t)n, f), (size_t)n);
    b[n] = 0;
    fclose(f);
    return b;
}

/* Checksums of the read matrix as mm_ext_expected.py computes them. */
static void checksums(hisp_matrix A, double s[5])
{
    hisp_matrix_info info;
    ck_assert_int_eq(hisp_matrix_get_info(A, &info), HISP_SUCCESS);
    const int64_t *ptr;
    const int32_t *rows, *cols;
    const void *vals;
    ck_assert_int_eq(info.format, HISP_FORMAT_COO);
    ck_assert_int_eq(hisp_matrix_host_arrays(A, &ptr, &rows, &cols, &vals), HISP_SUCCESS);
    int comps = hisp_type_components(info.type);
    memset(s, 0, 5 * sizeof *s);
    for (int64_t k = 0; k < info.nnz; k++) {
        double w = (double)((31 * (int64_t)(rows[k] + 1) + 17 * (int64_t)(cols[k] + 1)) % 101 + 1);
        double re = ((const double *)vals)[k * comps];
        double im = comps > 1 ? ((const double *)vals)[k * comps + 1] : 0.0;
        s[0] += re;
        s[1] += im;
        s[2] += re * w;
        s[3] += im * w;
        s[4] += (fabs(re) + fabs(im)) * w;
    }
}

static bool close_to(double got, double want, double scale)
{
    if (isnan(want)) return isnan(got);
    if (isinf(want)) return got == want;
    return fabs(got - want) <= 1e-12 * (scale > 1 ? scale : 1);
}

START_TEST(test_peer_corpus)
{
    char root[1024], path[2048];
    snprintf(root, sizeof root, "%s/../shared/mm_ext", HISP_SOURCE_DIR);
    snprintf(path, sizeof path, "%s/SOURCES.txt", root);
    char *list = slurp_text(path);
    if (!list) {
        test_skip("mm_ext: ../shared/mm_ext/SOURCES.txt is not there");
        return;
    }
    hisp_context ctx = test_default_context();
    int agree_ok = 0, agree_refused = 0, on_purpose = 0, split_read = 0, split_refused = 0;
    int files = 0;
    for (char *line = list, *next; line && *line; line = next) {
        next = strchr(line, '\n'); /* only '\n': one banner column holds CRs */
        if (next) *next++ = 0;
        if (line[0] == '#' || !line[0]) continue;
        char *f[10];
        int nf = 0;
        for (char *p = line; nf < 10;) {
            f[nf++] = p;
            char *bar = strstr(p, " | ");
            if (!bar) break;
            *bar = 0;
            p = bar + 3;
        }
        ck_assert_msg(nf >= 6, "SOURCES.txt line '%s'", line);
        const char *file = f[0], *peers = f[5];
        files++;
        bool all_ok = strcmp(peers, "ok/ok/ok") == 0;
        bool all_refuse = strncmp(peers, "error/error/", 12) == 0 &&
                          (strcmp(peers + 12, "error") == 0 || strcmp(peers + 12, "hang") == 0);
        bool purpose = false;
        for (size_t i = 0; i < sizeof refused_on_purpose / sizeof *refused_on_purpose; i++)
            purpose |= strcmp(file, refused_on_purpose[i]) == 0;
        snprintf(path, sizeof path, "%s/%s", root, file);
        char *text = slurp_text(path);
        ck_assert_msg(text != NULL, "%s is listed but missing", path);
        hisp_type t = strstr(f[4], "complex") || strstr(f[4], "COMPLEX") ? HISP_C64 : HISP_F64;
        hisp_matrix A = NULL;
        hisp_mtx_header h;
        hisp_status s = hisp_matrix_read_mtx(ctx, path, t, &A, &h);
        hisp_error_info e;
        ck_assert_int_eq(hisp_context_last_error(ctx, &e), HISP_SUCCESS);
        if (s == HISP_SUCCESS) {
            ck_assert_msg(!all_refuse, "%s: every peer refuses it, hisp reads it", file);
            ck_assert_msg(!purpose, "%s: read, though listed as refused on purpose", file);
            if (all_ok) {
                size_t x = 0, nx = sizeof mm_ext_expected / sizeof *mm_ext_expected;
                while (x < nx && strcmp(mm_ext_expected[x].path, file) != 0)
                    x++;
                ck_assert_msg(x < nx, "%s: not in tests/mm_ext_expected.h (regenerate it)", file);
                hisp_matrix_info info;
                ck_assert_int_eq(hisp_matrix_get_info(A, &info), HISP_SUCCESS);
                ck_assert_msg(
                    info.nrows == mm_ext_expected[x].rows && info.ncols == mm_ext_expected[x].cols,
                    "%s: %lld x %lld, the peers read %lld x %lld", file, (long long)info.nrows,
                    (long long)info.ncols, (long long)mm_ext_expected[x].rows,
                    (long long)mm_ext_expected[x].cols);
                /* fast_matrix_market pads symmetric arrays with zeros: entry
                 * counts of array files differ, their sums do not */
                if (!h.is_array)
                    ck_assert_msg(info.nnz == mm_ext_expected[x].nnz,
                                  "%s: %lld entries, the peers read %lld", file,
                                  (long long)info.nnz, (long long)mm_ext_expected[x].nnz);
                double c[5];
                checksums(A, c);
                const double want[4] = {mm_ext_expected[x].s0_re, mm_ext_expected[x].s0_im,
                                        mm_ext_expected[x].s1_re, mm_ext_expected[x].s1_im};
                for (int q = 0; q < 4; q++)
                    ck_assert_msg(close_to(c[q], want[q], mm_ext_expected[x].scale),
                                  "%s: checksum %d is %.17g, the peers' %.17g", file, q, c[q],
                                  want[q]);
                agree_ok++;
            } else {
                split_read++; /* the peers disagree: either answer is fine */
            }
        } else {
            ck_assert_msg(s == HISP_ERR_INPUT_FORMAT, "%s: status %s (%s)", file,
                          hisp_status_string(s), e.message);
            ck_assert_ptr_null(A);
            ck_assert_msg(e.line >= 1, "%s: refused without a line number (%s)", file, e.message);
            ck_assert_msg(!all_ok || purpose,
                          "%s: every peer reads it, hisp refuses: line %lld: %s", file,
                          (long long)e.line, e.message);
            if (all_refuse)
                agree_refused++;
            else if (purpose)
                on_purpose++;
            else
                split_refused++; /* the peers disagree: either answer is fine */
        }
        hisp_matrix_destroy(&A);
        free(text);
    }
    free(list);
    hisp_context_destroy(&ctx);
    /* every file: read as all peers read it, refused as all peers do (with
     * a line number), read by all peers and refused on purpose, or one the
     * peers split on */
    ck_assert_int_eq(agree_ok + agree_refused + on_purpose + split_read + split_refused, files);
    ck_assert_int_eq(on_purpose, (int)(sizeof refused_on_purpose / sizeof *refused_on_purpose));
}
END_TEST

Suite *suite_mm_ext(void)
{
    Suite *s = suite_create("mm_ext");
    TCase *tc = test_tcase(s, "mm_ext", 120);
    tcase_add_test(tc, test_peer_corpus);
    return s;
}
