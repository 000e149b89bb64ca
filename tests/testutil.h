/* Shared helpers of the check-based test suite. */
#ifndef HISP_TESTUTIL_H
#define HISP_TESTUTIL_H

#include <check.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hisp.h"

/* Suites: each tests/check_<module>.c defines one; main() runs those linked
 * in (weak references, so a module's file can be added on its own). */
/* clang-format off: one suite per line */
#define HISP_SUITES(X)                                                                             \
    X(sparse)                                                                                      \
    X(mmio)                                                                                        \
    X(gen)                                                                                         \
    X(spmv)                                                                                        \
    X(cli)                                                                                         \
    X(hisparse)                                                                                    \
    X(hisparse_dev)                                                                                \
    X(hisparse_add)                                                                                \
    X(hisparse_resid)                                                                              \
    X(msrep)                                                                                       \
    X(compound)                                                                                    \
    X(compound_op)                                                                                 \
    X(transfer)                                                                                    \
    X(interop)                                                                                     \
    X(vector)                                                                                      \
    X(vector_block)                                                                                \
    X(cli_solve)                                                                                   \
    X(cli_bench)                                                                                   \
    X(solver)                                                                                      \
    X(solver_truth)                                                                                \
    X(solver_mixed)                                                                                \
    X(solver_dist)                                                                                 \
    X(spmv_dot)                                                                                    \
    X(spmm)                                                                                        \
    X(solver_columns)                                                                              \
    X(solver_ls)                                                                                   \
    X(hisparse_mt)                                                                                 \
    X(cache)                                                                                       \
    X(concurrency)                                                                                 \
    X(cli_files)                                                                                   \
    X(cli_types)                                                                                   \
    X(cli_options)                                                                                 \
    X(handles)                                                                                     \
    X(link)                                                                                        \
    X(tune_format)                                                                                 \
    X(mm_ext)                                                                                      \
    X(readme)                                                                                      \
    X(options)                                                                                     \
    X(sell)                                                                                        \
    X(spgemm)                                                                                      \
    X(amg)                                                                                         \
    X(amg_block)                                                                                   \
    X(ilu)
/* clang-format on */
#define HISP_DECL_SUITE(name) Suite *suite_##name(void) __attribute__((weak));
HISP_SUITES(HISP_DECL_SUITE)

/* `check_hisp --first-use MODE N`: one trial of the concurrency suite in a
 * fresh process (MODE threads or mplan); exit status 0 when it passed. */
int test_first_use(const char *mode, int n);

/* Record a test that could not run (missing device, missing data folder).
 * Skipped tests are not added to check's count and are listed before the
 * summary line. */
void test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Every (backend, device) pair that has a device on this machine, reference
 * first. Probed once. Missing ones are reported through test_skip(). */
typedef struct {
    hisp_backend_kind kind;
    int device;
    char label[300]; /* "opencl:0 (Portable Computing Language: cpu-...)" */
} test_target;
int test_targets(const test_target **targets); /* targets may be NULL */
/* A generator kind on an n^3 grid (poisson3d, aniso3d, jump3d): n is its side. */
#define TEST_GEN_3D(k)                                                                             \
    ((k) == HISP_GEN_POISSON3D || (k) == HISP_GEN_ANISO3D || (k) == HISP_GEN_JUMP3D)
/* A context on target i (ck_assert on failure). */
hisp_context test_context(int i);
/* Target i's label, for messages; its backend; whether that is a device's
 * (not the reference backend). */
const char *test_label(int i);
hisp_backend_kind test_kind(int i);
bool test_on_device(int i);
/* The first target of backend k, -1 when there is none. */
int test_first_target(hisp_backend_kind k);
/* A context on the default backend (ck_assert on failure). */
hisp_context test_default_context(void);
/* Whether ctx's device computes in double. */
bool test_fp64(hisp_context ctx);
/* A test case of s with a timeout (seconds); the caller adds its tests. */
TCase *test_tcase(Suite *s, const char *name, double timeout);

/* ck_assert on a status, printing the context's last error. */
#define CK_OK(ctx, expr)                                                                           \
    do {                                                                                           \
        hisp_status s_ = (expr);                                                                   \
        if (s_ != HISP_SUCCESS) {                                                                  \
            hisp_error_info e_ = {0};                                                              \
            if (hisp_context_last_error((ctx), &e_)) {                                             \
            }                                                                                      \
            ck_abort_msg("%s failed: %s: %s", #expr, hisp_status_string(s_),                       \
                         e_.message ? e_.message : "");                                            \
        }                                                                                          \
    } while (0)

/* Destroys the matrices the arguments point to (hisp_matrix *), in order. */
void test_destroy_matrices(hisp_matrix *const *ms, size_t n);
#define TEST_DESTROY_MATRICES(...)                                                                 \
    test_destroy_matrices((hisp_matrix *const[]){__VA_ARGS__},                                     \
                          sizeof((hisp_matrix *const[]){__VA_ARGS__}) / sizeof(hisp_matrix *))

/* Deterministic random numbers for tests (xorshift); the seed is printed on
 * failure through test_seed(). */
uint64_t test_rand(uint64_t *state);
double test_uniform(uint64_t *state); /* [-1, 1) */
/* A fresh seed per run (time-based unless HISP_TEST_SEED is set). */
uint64_t test_seed(void);

/* Random COO matrix with about `density` * nrows * ncols entries, f64 values
 * in [-1,1) (fresh values each call), converted to `type`. */
hisp_matrix test_random_matrix(hisp_context ctx, hisp_type type, int64_t nrows, int64_t ncols,
                               double density, uint64_t *state);
/* n entries of an f32 or f64 array: uniform in [-1, 1), or NaN. */
void test_fill_uniform(hisp_type t, void *a, int64_t n, uint64_t *state);
void test_fill_nan(hisp_type t, void *a, int64_t n);
/* y = alpha*op(A)*x + beta*y0 through hisp_spmv on ctx, for host arrays of
 * A's entry type (f32 or f64, as alpha and beta); y0 is kept. */
void test_spmv_host(hisp_context ctx, hisp_op op, const void *alpha, hisp_matrix A, const void *x,
                    const void *beta, const void *y0, void *y);
/* The dense image of A from its host arrays (COO, CSR or CSC), row-major,
 * stride doubles an entry (its components first: re, im), duplicates
 * summed; its size in *m and *n. */
double *test_dense_image(hisp_matrix A, int stride, int64_t *m, int64_t *n);
/* Relative error ||a - b||_2 / ||b||_2 (absolute when ||b|| = 0); arrays of
 * n real entries of type f32 or f64. */
double test_rel_error(hisp_type t, const void *a, const void *b, int64_t n);
/* Some OpenCL ICD loaders (NVIDIA's libOpenCL.so.1 of CUDA 13, seen on the
 * H100 machine) cut OCL_ICD_FILENAMES short in the process environment at
 * the first OpenCL call, so child processes would see fewer platforms.
 * main() snapshots the variable first; test_env_restore() puts it back
 * before a child is started. */
void test_env_snapshot(void);
void test_env_restore(void);

/* The `hisp` program of this build variant (<variant>/tests/check_hisp ->
 * <variant>/bin/hisp, so sanitize tests run the sanitize program), or NULL
 * when it is not built. */
const char *test_hisp_bin(void);
/* Runs cmd through the shell (the environment as main() found it); its
 * stdout goes to out (cap bytes, NUL-terminated); returns the exit status,
 * -1 when it did not exit normally. */
int test_shell(const char *cmd, char *out, size_t cap);
/* test_shell of pre, then fmt formatted with ap, then post. */
int test_vshell(char *out, size_t cap, const char *pre, const char *post, const char *fmt,
                va_list ap);
/* Runs "hisp ARGS" through the shell (ARGS formatted like printf, stderr
 * dropped); stdout goes to out (cap bytes, NUL-terminated); returns the exit
 * status, -1 when the program did not exit normally. */
int test_run_cli(char *out, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Compound SpMV in double (tests/compound_oracle.c): scalar k of a float
 * (ss = 4) or double array; y = alpha*op(A)*x + beta*y0 from A's real
 * expansion, x, y0 and the result as flat scalars (free the result); the
 * relative 2-norm error of y against it. */
double test_scalar(size_t ss, const void *a, int64_t i);
void test_put_scalar(size_t ss, void *a, int64_t i, double d);
double *test_compound_oracle(hisp_matrix A, hisp_op op, const void *x, const void *y0, double alpha,
                             double beta);
double test_compound_error(size_t ss, const void *y, const double *ref, int64_t n);
/* A fresh cache folder /tmp/hisp-TAG-PID (its path returned) for ctx (may
 * be NULL) and, through HISP_OPTIONS, for the hisp programs the test runs;
 * test_drop_temp_cache removes it and unsets HISP_OPTIONS. */
const char *test_temp_cache(hisp_context ctx, const char *tag);
void test_drop_temp_cache(void);
/* Entries of a folder, hidden ones aside (0 when it does not exist). */
int test_count_files(const char *dir);
/* A test that turns the library's debug option on (its log goes to
 * stderr) captures the log so that the run prints nothing: test_stderr_begin
 * sends stderr to a temporary file, test_stderr_end puts it back and returns
 * what was written (malloc'd, or NULL when nothing was captured). main()
 * calls test_stderr_end after each suite, for a test that failed between. */
void test_stderr_begin(void);
char *test_stderr_end(void);
/* The integer after "key": in a JSON text (ck_assert when missing). */
long long test_json_int(const char *text, const char *key);
/* The number after "key": (ck_assert when missing or not a number; null
 * reads as NaN). */
double test_json_double(const char *text, const char *key);

#ifdef HISP_HAVE_CUDA
/* One NVRTC build of program prog (HISPI_PROG_*) with opts for sm_90 (no
 * device needed): true when it gave a cubin; false when NVRTC is missing,
 * recorded as skipped (what: the tests); a failed build fails the test with
 * its log. */
bool test_nvrtc_build(hisp_context ctx, int prog, const char *opts, const char *what);
#endif

/* The real-matrix folder: $HISP_MATRICES, else ../shared/matrices beside the
 * source tree; NULL if it is not a folder. */
const char *test_matrix_dir(void);
/* Skips a group of tests that needs test_matrix_dir() when it is NULL; the
 * end-of-run summary counts these groups and names the folder it looked for. */
void test_skip_no_matrices(const char *what);
/* The names of the .mtx files of dir, sorted (at most 256, strdup'd: free
 * them with test_free_names); 0 when dir cannot be opened (ck_assert). */
int test_mtx_names(const char *dir, char *names[256]);
void test_free_names(char **names, int n);
/* Whether a Matrix Market file's banner says complex: 1, 0, or -1 when the
 * file cannot be read. */
int test_mtx_is_complex(const char *path);

/* M (a matrix of context cm) holds the entries of R (of context cr): their
 * CSR duplicates have the same pointers and columns and values within 1e-5
 * (f32, c32) or 1e-12 relative (ck_assert otherwise; what names the case). */
void test_same_matrix(hisp_context cm, hisp_matrix M, hisp_context cr, hisp_matrix R,
                      const char *what);
/* The bytes of A saved as a .hisp file (malloc'd; *size set). */
unsigned char *test_saved_bytes(hisp_context ctx, hisp_matrix A, size_t *size);
/* Recompute both checksums of a .hisp image (docs/FORMAT.md: FNV-1a) so
 * that the structural checks are what refuses a crafted file. */
void test_fix_checksums(unsigned char *f, size_t size);

#endif
