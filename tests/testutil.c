#include "testutil.h"
#ifdef HISP_HAVE_CUDA
#include "cuda/cuda_kern.h"
#endif

#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_SKIPS 64
static char skips[MAX_SKIPS][256];
static int nskips;

void test_skip(const char *fmt, ...)
{
    if (nskips >= MAX_SKIPS) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(skips[nskips++], sizeof skips[0], fmt, ap);
    va_end(ap);
}

static test_target targets[16];
static int ntargets = -1;

int test_targets(const test_target **out)
{
    if (ntargets < 0) {
        ntargets = 0;
        hisp_context ctx = NULL;
        if (hisp_context_create(&ctx) != HISP_SUCCESS) {
            fprintf(stderr, "cannot create a context\n");
            exit(2);
        }
        /* HISP_TEST_BACKENDS=cuda,opencl limits the targets (e.g. for
         * compute-sanitizer runs); the reference stays as the oracle. */
        const char *only = getenv("HISP_TEST_BACKENDS");
        for (int k = 0; k < HISP_BACKEND_COUNT; k++) {
            if (only && k != HISP_BACKEND_REFERENCE &&
                !strstr(only, hisp_backend_name((hisp_backend_kind)k))) {
                test_skip("%s backend: not in HISP_TEST_BACKENDS=%s",
                          hisp_backend_name((hisp_backend_kind)k), only);
                continue;
            }
            if (!hisp_backend_compiled((hisp_backend_kind)k)) {
                test_skip("%s backend: not compiled into this build",
                          hisp_backend_name((hisp_backend_kind)k));
                continue;
            }
            int n = 0;
            hisp_status s = hisp_backend_device_count(ctx, (hisp_backend_kind)k, &n);
            if (s != HISP_SUCCESS || n == 0) {
                hisp_error_info e = {0};
                if (hisp_context_last_error(ctx, &e)) {
                }
                test_skip("%s backend tests: %s", hisp_backend_name((hisp_backend_kind)k),
                          e.message && e.message[0] ? e.message : "no device");
                continue;
            }
            for (int d = 0; d < n && ntargets < 16; d++) {
                hisp_device_info info;
                test_target *t = &targets[ntargets++];
                t->kind = (hisp_backend_kind)k;
                t->device = d;
                if (hisp_backend_device_info(ctx, t->kind, d, &info) == HISP_SUCCESS)
                    snprintf(t->label, sizeof t->label, "%s:%d (%.120s: %.120s)",
                             hisp_backend_name(t->kind), d, info.platform, info.name);
                else
                    snprintf(t->label, sizeof t->label, "%s:%d", hisp_backend_name(t->kind), d);
            }
        }
        hisp_context_destroy(&ctx);
    }
    if (out) *out = targets;
    return ntargets;
}

hisp_context test_context(int i)
{
    const test_target *t;
    int n = test_targets(&t);
    ck_assert_int_lt(i, n);
    hisp_context ctx = NULL;
    ck_assert_int_eq(hisp_context_create(&ctx), HISP_SUCCESS);
    CK_OK(ctx, hisp_context_set_backend(ctx, t[i].kind, t[i].device));
    return ctx;
}

const char *test_label(int i)
{
    const test_target *t;
    test_targets(&t);
    return t[i].label;
}

hisp_backend_kind test_kind(int i)
{
    const test_target *t;
    test_targets(&t);
    return t[i].kind;
}

bool test_on_device(int i)
{
    return test_kind(i) != HISP_BACKEND_REFERENCE;
}

int test_first_target(hisp_backend_kind k)
{
    const test_target *t;
    int n = test_targets(&t);
    for (int i = 0; i < n; i++)
        if (t[i].kind == k) return i;
    return -1;
}

hisp_context test_default_context(void)
{
    hisp_context ctx = NULL;
    ck_assert_int_eq(hisp_context_create(&ctx), HISP_SUCCESS);
    return ctx;
}

bool test_fp64(hisp_context ctx)
{
    hisp_device_info info;
    CK_OK(ctx, hisp_context_get_device(ctx, &info));
    return info.fp64;
}

TCase *test_tcase(Suite *s, const char *name, double timeout)
{
    TCase *tc = tcase_create(name);
    tcase_set_timeout(tc, timeout);
    suite_add_tcase(s, tc);
    return tc;
}

void test_destroy_matrices(hisp_matrix *const *ms, size_t n)
{
    for (size_t i = 0; i < n; i++)
        hisp_matrix_destroy(ms[i]);
}

void test_spmv_host(hisp_context ctx, hisp_op op, const void *alpha, hisp_matrix A, const void *x,
                    const void *beta, const void *y0, void *y)
{
    hisp_matrix_info mi;
    CK_OK(ctx, hisp_matrix_get_info(A, &mi));
    int64_t m = op == HISP_OP_N ? mi.nrows : mi.ncols, n = op == HISP_OP_N ? mi.ncols : mi.nrows;
    hisp_vector xv = NULL, yv = NULL;
    CK_OK(ctx, hisp_vector_create(ctx, mi.type, n, &xv));
    CK_OK(ctx, hisp_vector_create(ctx, mi.type, m, &yv));
    CK_OK(ctx, hisp_vector_write(xv, x));
    CK_OK(ctx, hisp_vector_write(yv, y0));
    CK_OK(ctx, hisp_spmv(ctx, op, alpha, A, xv, beta, yv));
    CK_OK(ctx, hisp_vector_read(yv, y));
    hisp_vector_destroy(&xv);
    hisp_vector_destroy(&yv);
}

uint64_t test_rand(uint64_t *s)
{
    uint64_t x = *s ? *s : 0x9E3779B97F4A7C15ull;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

double test_uniform(uint64_t *s)
{
    return (double)(test_rand(s) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

uint64_t test_seed(void)
{
    static uint64_t seed;
    if (!seed) {
        const char *e = getenv("HISP_TEST_SEED");
        seed = e ? strtoull(e, NULL, 0) : (uint64_t)time(NULL) * 2654435761u;
        if (!seed) seed = 1;
        printf("test seed: %llu (set HISP_TEST_SEED to repeat)\n", (unsigned long long)seed);
    }
    return seed;
}

hisp_matrix test_random_matrix(hisp_context ctx, hisp_type type, int64_t nrows, int64_t ncols,
                               double density, uint64_t *state)
{
    int64_t nnz = (int64_t)(density * (double)nrows * (double)ncols);
    if (nrows == 0 || ncols == 0) nnz = 0;
    int32_t *r = malloc((size_t)(nnz + 1) * sizeof *r);
    int32_t *c = malloc((size_t)(nnz + 1) * sizeof *c);
    size_t es = hisp_type_size(type);
    unsigned char *v = malloc((size_t)(nnz + 1) * es);
    ck_assert(r && c && v);
    for (int64_t k = 0; k < nnz; k++) {
        r[k] = (int32_t)(test_rand(state) % (uint64_t)nrows);
        c[k] = (int32_t)(test_rand(state) % (uint64_t)ncols);
        double x = test_uniform(state);
        if (type == HISP_F32)
            ((float *)v)[k] = (float)x;
        else if (type == HISP_F64)
            ((double *)v)[k] = x;
        else
            ck_abort_msg("test_random_matrix: type %s", hisp_type_name(type));
    }
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_create_coo(ctx, type, nrows, ncols, nnz, r, c, v, &A));
    CK_OK(ctx, hisp_matrix_convert(A, HISP_FORMAT_CSR));
    free(r);
    free(c);
    free(v);
    return A;
}

void test_fill_uniform(hisp_type t, void *a, int64_t n, uint64_t *state)
{
    for (int64_t i = 0; i < n; i++) {
        double v = test_uniform(state);
        if (t == HISP_F32)
            ((float *)a)[i] = (float)v;
        else
            ((double *)a)[i] = v;
    }
}

void test_fill_nan(hisp_type t, void *a, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        if (t == HISP_F32)
            ((float *)a)[i] = NAN;
        else
            ((double *)a)[i] = NAN;
    }
}

double *test_dense_image(hisp_matrix A, int stride, int64_t *m, int64_t *n)
{
    hisp_matrix_info info;
    ck_assert_int_eq(hisp_matrix_get_info(A, &info), HISP_SUCCESS);
    *m = info.nrows;
    *n = info.ncols;
    double *d = calloc((size_t)(info.nrows * info.ncols * stride + stride), sizeof *d);
    ck_assert_ptr_nonnull(d);
    const int64_t *ptr;
    const int32_t *rows, *cols;
    const void *vals;
    ck_assert_int_eq(hisp_matrix_host_arrays(A, &ptr, &rows, &cols, &vals), HISP_SUCCESS);
    int comps = hisp_type_components(info.type);
    ck_assert_int_le(comps, stride);
    bool single = info.type == HISP_F32 || info.type == HISP_C32;
    for (int64_t k = 0; k < info.nnz; k++) {
        int64_t i = -1, j = -1;
        if (info.format == HISP_FORMAT_COO) {
            i = rows[k];
            j = cols[k];
        } else if (info.format == HISP_FORMAT_CSR) {
            j = cols[k];
            for (i = 0; ptr[i + 1] <= k; i++) {
            }
        } else {
            i = rows[k];
            for (j = 0; ptr[j + 1] <= k; j++) {
            }
        }
        for (int c = 0; c < comps; c++)
            d[(i * info.ncols + j) * stride + c] +=
                single ? (double)((const float *)vals)[k * comps + c]
                       : ((const double *)vals)[k * comps + c];
    }
    return d;
}

double test_rel_error(hisp_type t, const void *a, const void *b, int64_t n)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        double x = t == HISP_F32 ? ((const float *)a)[i] : ((const double *)a)[i];
        double y = t == HISP_F32 ? ((const float *)b)[i] : ((const double *)b)[i];
        if (isnan(x) != isnan(y)) return INFINITY;
        num += (x - y) * (x - y);
        den += y * y;
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

#ifdef HISP_HAVE_CUDA
bool test_nvrtc_build(hisp_context ctx, int prog, const char *opts, const char *what)
{
    size_t bytes = 0;
    hisp_status s = hisp_cuda_rtc_cubin(ctx, prog, opts, 9, 0, NULL, &bytes);
    if (s == HISP_ERR_UNSUPPORTED) { /* no libnvrtc here */
        hisp_error_info e;
        CK_OK(ctx, hisp_context_last_error(ctx, &e));
        test_skip("%s: %s", what, e.message);
        return false;
    }
    if (s) {
        hisp_error_info e = {0};
        if (hisp_context_last_error(ctx, &e)) e.message = "";
        ck_abort_msg("NVRTC %s: %s\n%.3000s", opts, e.message, e.build_log ? e.build_log : "");
    }
    ck_assert_uint_gt(bytes, 0);
    return true;
}
#endif

static char matrix_dir_tried[1024]; /* the folder looked for, for the summary */
static int matrix_skips;            /* groups skipped because it is missing */

const char *test_matrix_dir(void)
{
    static char dir[1024];
    static int done;
    if (!done) {
        done = 1;
        const char *e = getenv("HISP_MATRICES");
        snprintf(dir, sizeof dir, "%s", e ? e : HISP_SOURCE_DIR "/../shared/matrices");
        snprintf(matrix_dir_tried, sizeof matrix_dir_tried, "%s", dir);
        struct stat st;
        if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) dir[0] = 0;
    }
    return dir[0] ? dir : NULL;
}

void test_skip_no_matrices(const char *what)
{
    matrix_skips++;
    test_skip("%s: no real-matrix folder at %s (set HISP_MATRICES)", what, matrix_dir_tried);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int test_mtx_names(const char *dir, char *names[256])
{
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot open %s", dir);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) && n < 256;) {
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".mtx") == 0) names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], cmp_names);
    return n;
}

void test_free_names(char **names, int n)
{
    for (int k = 0; k < n; k++)
        free(names[k]);
}

int test_mtx_is_complex(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[256] = "";
    char *ok = fgets(line, sizeof line, f);
    fclose(f);
    if (!ok) return -1;
    for (char *p = line; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return strstr(line, "complex") != NULL;
}

int test_skips_print(void)
{
    for (int i = 0; i < nskips; i++)
        printf("skipped: %s\n", skips[i]);
    if (nskips) printf("Skipped: %d group(s) of tests could not run on this machine\n", nskips);
    if (matrix_skips)
        printf("real matrices: not found at %s (set HISP_MATRICES); %d group(s) of tests skipped\n",
               matrix_dir_tried, matrix_skips);
    return nskips;
}

static char *saved_icd_filenames;

void test_env_snapshot(void)
{
    const char *v = getenv("OCL_ICD_FILENAMES");
    if (v) saved_icd_filenames = strdup(v);
}

void test_env_restore(void)
{
    if (saved_icd_filenames) setenv("OCL_ICD_FILENAMES", saved_icd_filenames, 1);
}

/* LeakSanitizer (sanitize=1 builds): PoCL 3.1 and its LLVM 15 keep compiler
 * state alive through their own threads and globals; at a quick exit
 * LeakSanitizer sometimes reports it (stacks inside libpocl/libLLVM only,
 * seen in the parent process of short suite runs). hisp's own allocations
 * never pass through those libraries, so this hides nothing of ours. */
/* default visibility: the sanitizer runtime looks the hook up at run time,
 * and the build compiles with -fvisibility=hidden */
__attribute__((visibility("default"))) const char *__lsan_default_suppressions(void);
__attribute__((visibility("default"))) const char *__lsan_default_suppressions(void)
{
    return "leak:libpocl.so\nleak:libLLVM-15.so\n";
}

const char *test_hisp_bin(void)
{
    static char path[4096];
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return NULL;
    self[n] = 0;
    for (int k = 0; k < 2; k++) { /* <variant>/tests/check_hisp -> <variant> */
        char *slash = strrchr(self, '/');
        if (slash) *slash = 0;
    }
    snprintf(path, sizeof path, "%.4000s/bin/hisp", self);
    return access(path, X_OK) == 0 ? path : NULL;
}

int test_shell(const char *cmd, char *out, size_t cap)
{
    test_env_restore();
    FILE *f = popen(cmd, "r");
    ck_assert_ptr_nonnull(f);
    size_t len = fread(out, 1, cap - 1, f);
    out[len] = 0;
    int st = pclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int test_vshell(char *out, size_t cap, const char *pre, const char *post, const char *fmt,
                va_list ap)
{
    char cmd[8192];
    int k = snprintf(cmd, sizeof cmd, "%s", pre);
    ck_assert(k >= 0 && (size_t)k < sizeof cmd);
    vsnprintf(cmd + k, sizeof cmd - (size_t)k, fmt, ap);
    strncat(cmd, post, sizeof cmd - strlen(cmd) - 1);
    return test_shell(cmd, out, cap);
}

int test_run_cli(char *out, size_t cap, const char *fmt, ...)
{
    char pre[4200];
    snprintf(pre, sizeof pre, "'%s' ", test_hisp_bin());
    va_list ap;
    va_start(ap, fmt);
    int rc = test_vshell(out, cap, pre, " 2>/dev/null", fmt, ap);
    va_end(ap);
    return rc;
}

static int saved_stderr = -1, captured = -1;

void test_stderr_begin(void)
{
    if (saved_stderr >= 0) return;
    char path[] = "/tmp/hisp-test-stderr-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    unlink(path);
    fflush(stderr);
    saved_stderr = dup(2);
    ck_assert_int_ge(saved_stderr, 0);
    ck_assert_int_ge(dup2(fd, 2), 0);
    captured = fd;
}

char *test_stderr_end(void)
{
    if (saved_stderr < 0) return NULL;
    fflush(stderr);
    dup2(saved_stderr, 2);
    close(saved_stderr);
    saved_stderr = -1;
    off_t n = lseek(captured, 0, SEEK_END);
    char *text = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (text && (lseek(captured, 0, SEEK_SET) != 0 || read(captured, text, (size_t)n) != n)) {
        free(text);
        text = NULL;
    }
    if (text) text[n] = 0;
    close(captured);
    captured = -1;
    return text;
}

long long test_json_int(const char *text, const char *key)
{
    char pat[128];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = strstr(text, pat);
    ck_assert_msg(p != NULL, "no \"%s\" in\n%s", key, text);
    return strtoll(p + strlen(pat), NULL, 10);
}

double test_json_double(const char *text, const char *key)
{
    char pat[128];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = strstr(text, pat);
    ck_assert_msg(p != NULL, "no \"%s\" in\n%s", key, text);
    p += strlen(pat);
    if (strncmp(p, "null", 4) == 0) return NAN;
    char *end;
    double v = strtod(p, &end);
    ck_assert_msg(end != p, "\"%s\" is not a number in\n%s", key, text);
    return v;
}

unsigned char *test_saved_bytes(hisp_context ctx, hisp_matrix A, size_t *size)
{
    char path[] = "/tmp/hisp_test_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    CK_OK(ctx, hisp_matrix_save(A, path));
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    *size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(*size);
    ck_assert_ptr_nonnull(b);
    ck_assert_uint_eq(fread(b, 1, *size, f), *size);
    fclose(f);
    unlink(path);
    return b;
}

static uint64_t fnv(const unsigned char *p, size_t n)
{
    uint64_t h = 14695981039346656037ull; /* FNV-1a 64 offset basis */
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

void test_fix_checksums(unsigned char *f, size_t size)
{
    uint64_t h = fnv(f + 96, size - 96);
    memcpy(f + 80, &h, 8);
    h = fnv(f, 88);
    memcpy(f + 88, &h, 8);
}

void test_same_matrix(hisp_context cm, hisp_matrix M, hisp_context cr, hisp_matrix R,
                      const char *what)
{
    hisp_matrix c = NULL, r = NULL;
    CK_OK(cm, hisp_matrix_duplicate(M, HISP_FORMAT_CSR, &c));
    CK_OK(cr, hisp_matrix_duplicate(R, HISP_FORMAT_CSR, &r));
    hisp_matrix_info ic, ir;
    CK_OK(cm, hisp_matrix_get_info(c, &ic));
    CK_OK(cr, hisp_matrix_get_info(r, &ir));
    ck_assert_msg(ic.nrows == ir.nrows && ic.ncols == ir.ncols && ic.nnz == ir.nnz,
                  "%s: %lld x %lld (%lld) vs %lld x %lld (%lld)", what, (long long)ic.nrows,
                  (long long)ic.ncols, (long long)ic.nnz, (long long)ir.nrows, (long long)ir.ncols,
                  (long long)ir.nnz);
    const int64_t *pc, *pr;
    const int32_t *jc, *jr;
    const void *vc, *vr;
    CK_OK(cm, hisp_matrix_host_arrays(c, &pc, NULL, &jc, &vc));
    CK_OK(cr, hisp_matrix_host_arrays(r, &pr, NULL, &jr, &vr));
    int f32 = ic.type == HISP_F32 || ic.type == HISP_C32;
    int nc = hisp_type_components(ic.type);
    for (int64_t i = 0; i <= ic.nrows; i++)
        ck_assert_msg(pc[i] == pr[i], "%s: row pointer %lld", what, (long long)i);
    for (int64_t k = 0; k < ic.nnz; k++)
        ck_assert_msg(jc[k] == jr[k], "%s: column of entry %lld", what, (long long)k);
    for (int64_t k = 0; k < ic.nnz * nc; k++) {
        double x = f32 ? ((const float *)vc)[k] : ((const double *)vc)[k];
        double y = f32 ? ((const float *)vr)[k] : ((const double *)vr)[k];
        ck_assert_msg(fabs(x - y) <= (f32 ? 1e-5 : 1e-12) * (1 + fabs(y)), "%s: %g vs %g", what, x,
                      y);
    }
    hisp_matrix_destroy(&c);
    hisp_matrix_destroy(&r);
}

static char temp_cache[256];

const char *test_temp_cache(hisp_context ctx, const char *tag)
{
    snprintf(temp_cache, sizeof temp_cache, "/tmp/hisp-%s-%ld", tag, (long)getpid());
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", temp_cache);
    ck_assert_int_eq(system(cmd), 0);
    char opt[300];
    snprintf(opt, sizeof opt, "cache_dir=%s", temp_cache);
    setenv("HISP_OPTIONS", opt, 1);
    if (ctx) CK_OK(ctx, hisp_context_set_option(ctx, "cache_dir", temp_cache));
    return temp_cache;
}

int test_count_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

void test_drop_temp_cache(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", temp_cache);
    ck_assert_int_eq(system(cmd), 0);
    unsetenv("HISP_OPTIONS");
}
