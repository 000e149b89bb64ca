/* The disk caches survive damage: a cache entry that is truncated, flipped,
 * extended, empty, of the old headerless format, or replaced by a folder, a
 * FIFO or a link to /dev/zero is a miss; the next run (a fresh process: a
 * runtime loads a program once per process) rebuilds, gives right results
 * and leaves a valid entry. Covers the entry format (core/base/cache_file.c), the
 * OpenCL program cache (through `hisp demo`, checked against the reference)
 * and the compound plan cache. And the kernel builds are accounted: counted
 * apart from the operation's device time, announced before they start, and
 * reported by the hisp program on its own ("kernels" in --json). */
#include "testutil.h"
#include "hispi.h"
#include "compound/hispi_compound.h"
#ifdef HISP_HAVE_CUDA
#include "cuda/cuda_kern.h"
#endif

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *cache_dir = "";

static void use_temp_cache(hisp_context ctx)
{
    cache_dir = test_temp_cache(ctx, "cache-test");
}

static void write_bytes(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(b, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

/* ---- the entry format ------------------------------------------------------ */

START_TEST(test_entry_damage)
{
    uint64_t st = test_seed() + 2301;
    size_t n = 1 + test_rand(&st) % 700, size = 0, len = 0;
    unsigned char *pay = malloc(n);
    ck_assert_ptr_nonnull(pay);
    for (size_t i = 0; i < n; i++)
        pay[i] = (unsigned char)test_rand(&st);
    unsigned char *e = hispi_cache_entry_make(pay, n, &size);
    ck_assert_ptr_nonnull(e);
    ck_assert_uint_eq(size, n + HISPI_CACHE_HEADER);
    ck_assert_int_eq(hispi_cache_entry_check(e, size, &len), 1);
    ck_assert_uint_eq(len, n);
    ck_assert(!memcmp(e + HISPI_CACHE_HEADER, pay, n));
    /* every truncation, every single-byte change (FNV-1a maps each changed
     * byte to a different hash), appended bytes, the bare payload */
    for (size_t k = 0; k < size; k++)
        ck_assert_int_eq(hispi_cache_entry_check(e, k, NULL), 0);
    for (size_t i = 0; i < size; i++) {
        unsigned char x = (unsigned char)(1 + test_rand(&st) % 255);
        e[i] ^= x;
        ck_assert_msg(!hispi_cache_entry_check(e, size, NULL), "byte %zu ^ %u passed", i, x);
        e[i] ^= x;
    }
    unsigned char *big = malloc(size + 16);
    ck_assert_ptr_nonnull(big);
    memcpy(big, e, size);
    for (int k = 1; k <= 16; k++) {
        big[size + (size_t)k - 1] = (unsigned char)test_rand(&st);
        ck_assert_int_eq(hispi_cache_entry_check(big, size + (size_t)k, NULL), 0);
    }
    ck_assert_int_eq(hispi_cache_entry_check(pay, n, NULL), 0);
    ck_assert_int_eq(hispi_cache_entry_check(e, size, NULL), 1);
    /* an empty payload is a valid entry */
    free(e);
    e = hispi_cache_entry_make(NULL, 0, &size);
    ck_assert_ptr_nonnull(e);
    ck_assert_int_eq(hispi_cache_entry_check(e, size, &len), 1);
    ck_assert_uint_eq(len, 0);
    free(e);
    free(big);
    free(pay);
}
END_TEST

START_TEST(test_entry_files)
{
    hisp_context ctx = test_context(0);
    use_temp_cache(ctx);
    char path[1024];
    ck_assert(hispi_cache_file(ctx, "t", 42, "bin", path, sizeof path));
    ck_assert(strncmp(path, cache_dir, strlen(cache_dir)) == 0); /* the option's folder */
    CK_OK(ctx, hisp_context_set_option(ctx, "cache_dir", "off"));
    char off[1024];
    ck_assert(!hispi_cache_file(ctx, "t", 42, "bin", off, sizeof off)); /* no disk cache */
    CK_OK(ctx, hisp_context_set_option(ctx, "cache_dir", cache_dir));
    void *b = NULL;
    size_t n = 0;
    ck_assert_int_eq(hispi_cache_read(path, &b, &n), 0); /* absent */
    const char msg[] = "payload";
    ck_assert_int_eq(hispi_cache_write(path, msg, sizeof msg), 0);
    ck_assert_int_eq(hispi_cache_read(path, &b, &n), 1);
    ck_assert_uint_eq(n, sizeof msg);
    ck_assert(!memcmp(b, msg, n));
    free(b);
    /* things that are not regular files: misses, and a write replaces them */
    for (int kind = 0; kind < 3; kind++) {
        ck_assert_int_eq(remove(path), 0);
        if (kind == 0) ck_assert_int_eq(mkdir(path, 0755), 0);
        if (kind == 1) ck_assert_int_eq(symlink("/dev/zero", path), 0);
        if (kind == 2) ck_assert_int_eq(mkfifo(path, 0644), 0);
        ck_assert_int_eq(hispi_cache_read(path, &b, &n), -1);
        ck_assert_ptr_null(b);
        ck_assert_int_eq(hispi_cache_write(path, msg, sizeof msg), 0);
        ck_assert_int_eq(hispi_cache_read(path, &b, &n), 1);
        free(b);
    }
    test_drop_temp_cache();
    hisp_context_destroy(&ctx);
}
END_TEST

/* ---- damage applied to files in the cache folder --------------------------- */

enum {
    D_TRUNC1,
    D_TRUNC,
    D_FLIP1,
    D_FLIP8,
    D_APPEND,
    D_ZERO,
    D_OLD,
    D_DIR,
    D_ZEROLINK,
    D_FIFO,
    D_N
};
static const char *const damage_name[D_N] = {"truncated by 1",
                                             "truncated at random",
                                             "1 byte flipped",
                                             "8 bytes flipped",
                                             "garbage appended",
                                             "zero length",
                                             "old format (payload only)",
                                             "an empty folder",
                                             "a link to /dev/zero",
                                             "a FIFO"};

/* Damages the file at path (holding the bytes good[0..n)) in way d. */
static void damage(const char *path, const unsigned char *good, size_t n, int d, uint64_t *st)
{
    ck_assert_int_eq(remove(path), 0);
    unsigned char *b = malloc(n + 64);
    ck_assert_ptr_nonnull(b);
    memcpy(b, good, n);
    size_t m = n;
    switch (d) {
    case D_TRUNC1:
        m = n - 1;
        break;
    case D_TRUNC:
        m = test_rand(st) % n;
        break;
    case D_FLIP1:
    case D_FLIP8:
        for (int k = 0; k < (d == D_FLIP1 ? 1 : 8); k++)
            b[test_rand(st) % n] ^= (unsigned char)(1 + test_rand(st) % 255);
        break;
    case D_APPEND:
        m = n + 1 + test_rand(st) % 63;
        for (size_t i = n; i < m; i++)
            b[i] = (unsigned char)test_rand(st);
        break;
    case D_ZERO:
        m = 0;
        break;
    case D_OLD:
        m = n - HISPI_CACHE_HEADER;
        memmove(b, b + HISPI_CACHE_HEADER, m);
        break;
    default:
        break;
    }
    if (d == D_DIR)
        ck_assert_int_eq(mkdir(path, 0755), 0);
    else if (d == D_ZEROLINK)
        ck_assert_int_eq(symlink("/dev/zero", path), 0);
    else if (d == D_FIFO)
        ck_assert_int_eq(mkfifo(path, 0644), 0);
    else
        write_bytes(path, b, m);
    free(b);
}

/* The files PREFIX-*.EXT in the cache folder (at most max). */
static int cache_files(const char *prefix, char names[][1024], int max)
{
    DIR *d = opendir(cache_dir);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    size_t pl = strlen(prefix);
    for (struct dirent *e; (e = readdir(d)) && n < max;)
        if (!strncmp(e->d_name, prefix, pl) && !strstr(e->d_name, ".tmp"))
            snprintf(names[n++], 1024, "%s/%s", cache_dir, e->d_name);
    closedir(d);
    return n;
}

static int valid_entry(const char *path)
{
    void *b = NULL;
    size_t n = 0;
    int r = hispi_cache_read(path, &b, &n);
    free(b);
    return r == 1 && n > 0;
}

START_TEST(test_opencl_cache_damage)
{
    if (!hisp_backend_compiled(HISP_BACKEND_OPENCL)) {
        test_skip("cache: OpenCL is not compiled into this build");
        return;
    }
    if (test_first_target(HISP_BACKEND_OPENCL) < 0) {
        test_skip("cache: no OpenCL device");
        return;
    }
    if (!test_hisp_bin()) {
        test_skip("cache: the hisp program is not built");
        return;
    }
    uint64_t st = test_seed() + 2302;
    use_temp_cache(NULL); /* the hisp program only */
    /* demo checks y against the reference backend: exit 5 when wrong */
    static const char cmd[] = "demo --backend opencl --n 6 --scale 6 --repeat 1";
    static char out[1 << 14];
    ck_assert_int_eq(test_run_cli(out, sizeof out, "%s", cmd), 0);
    static char names[16][1024];
    int nf = cache_files("cl-", names, 16);
    ck_assert_int_gt(nf, 0);
    unsigned char *good[16];
    size_t size[16];
    for (int f = 0; f < nf; f++) {
        ck_assert_msg(valid_entry(names[f]), "%s is not a valid entry", names[f]);
        char *d = NULL;
        ck_assert_int_eq(hispi_cache_read_raw(names[f], (size_t)1 << 30, &d, &size[f]), 1);
        good[f] = (unsigned char *)d;
    }
    /* every damage to every file, twice for the random ones */
    for (int round = 0; round < 2; round++)
        for (int d = 0; d < D_N; d++) {
            if (round && (d == D_DIR || d == D_ZEROLINK || d == D_FIFO || d == D_ZERO)) continue;
            for (int f = 0; f < nf; f++)
                damage(names[f], good[f], size[f], d, &st);
            int rc = test_run_cli(out, sizeof out, "%s", cmd);
            ck_assert_msg(rc == 0, "hisp %s exits %d with the cache entries %s", cmd, rc,
                          damage_name[d]);
            ck_assert(strstr(out, "opencl") != NULL);
            for (int f = 0; f < nf; f++)
                ck_assert_msg(valid_entry(names[f]), "%s (%s) was not replaced", names[f],
                              damage_name[d]);
        }
    for (int f = 0; f < nf; f++)
        free(good[f]);
    test_drop_temp_cache();
}
END_TEST

START_TEST(test_plan_cache_damage)
{
    uint64_t st = test_seed() + 2303;
    hisp_context ctx = test_context(0);
    use_temp_cache(ctx);
    hisp_matrix A = test_random_matrix(ctx, HISP_F64, 40, 40, 0.1, &st);
    hisp_tune_plan p, q;
    memset(&p, 0, sizeof p);
    CK_OK(ctx, hisp_tune_plan_key(ctx, A, p.key, sizeof p.key));
    CK_OK(ctx, hisp_layout_from_name("ELL-SoA-AoS", &p.best.layout));
    CK_OK(ctx, hisp_schedule_from_name("dynamic:128x2", &p.best.sched));
    p.ms = 0.25 + test_uniform(&st) * 0.1;
    char path[1024];
    CK_OK(ctx, hisp_tune_plan_cache_path(ctx, p.key, path, sizeof path));
    char *slash = strrchr(path, '/');
    *slash = 0;
    ck_assert_int_eq(mkdir(path, 0755), 0);
    *slash = '/';
    CK_OK(ctx, hisp_tune_plan_save(ctx, &p, path));
    char *good = NULL;
    size_t n = 0;
    ck_assert_int_eq(hispi_cache_read_raw(path, 4096, &good, &n), 1);
    int found = 0;
    CK_OK(ctx, hisp_tune_plan_lookup(ctx, A, &q, &found));
    ck_assert_int_eq(found, 1);
    for (int round = 0; round < 4; round++)
        for (int d = 0; d < D_N; d++) {
            if (d == D_OLD) continue; /* plans keep their own text format */
            damage(path, (unsigned char *)good, n, d, &st);
            found = 1;
            CK_OK(ctx, hisp_tune_plan_lookup(ctx, A, &q, &found));
            ck_assert_msg(!found, "a plan file %s was taken", damage_name[d]);
            /* what hisp_tune does on a miss: store the plan again */
            CK_OK(ctx, hispi_tune_plan_store(ctx, &p, path));
            CK_OK(ctx, hisp_tune_plan_lookup(ctx, A, &q, &found));
            ck_assert_int_eq(found, 1);
            ck_assert(!memcmp(&q.best, &p.best, sizeof p.best));
        }
    free(good);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
    test_drop_temp_cache();
}
END_TEST

/* ---- kernel build accounting ---------------------------------------------- */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

typedef struct {
    int calls, programs;
    char dir[1024];
    hisp_backend_kind backend;
} build_notices;

static void on_build(void *user, const hisp_build_event *e)
{
    build_notices *n = user;
    n->calls++;
    n->programs += e->programs;
    n->backend = e->backend;
    snprintf(n->dir, sizeof n->dir, "%s", e->cache_dir ? e->cache_dir : "(off)");
}

static void ck_builds(hisp_context ctx, uint64_t built, uint64_t loaded, const char *what)
{
    hisp_build_stats b;
    CK_OK(ctx, hisp_context_builds(ctx, &b));
    ck_assert_msg(b.built == built && b.loaded == loaded && (b.build_ms > 0) == (built > 0) &&
                      (b.load_ms > 0) == (loaded > 0),
                  "%s: %llu built in %g ms, %llu loaded in %g ms; expected %llu built, %llu "
                  "loaded",
                  what, (unsigned long long)b.built, b.build_ms, (unsigned long long)b.loaded,
                  b.load_ms, (unsigned long long)built, (unsigned long long)loaded);
}

/* A fresh cache folder: the addition's program is built from source, once,
 * announced first, and its time is out of the addition's device time; the
 * same addition again counts nothing; a new context loads the program from
 * the disk cache (counted as a load, not announced). */
START_TEST(test_build_counts)
{
    int t = test_first_target(HISP_BACKEND_OPENCL);
    if (t < 0) {
        test_skip("cache build accounting: no OpenCL device");
        return;
    }
    uint64_t st = test_seed() + 2304;
    hisp_context ctx = test_context(t), c2 = NULL;
    use_temp_cache(ctx);
    build_notices nt = {0}, nt2 = {0};
    CK_OK(ctx, hisp_context_set_build_notify(ctx, on_build, &nt));
    ck_builds(ctx, 0, 0, "a new context");
    hisp_matrix A = test_random_matrix(ctx, HISP_F64, 300, 300, 0.02, &st);
    hisp_matrix B = test_random_matrix(ctx, HISP_F64, 300, 300, 0.02, &st), C = NULL;
    double t0 = now_ms();
    CK_OK(ctx, hisp_matrix_add(HISP_OP_N, A, HISP_OP_N, B, &C));
    double wall = now_ms() - t0;
    hisp_add_stats as;
    hisp_build_stats b;
    CK_OK(ctx, hisp_context_add_stats(ctx, &as));
    CK_OK(ctx, hisp_context_builds(ctx, &b));
    ck_assert_msg(b.built >= 1 && b.build_ms > 0 && b.loaded == 0 && b.load_ms == 0,
                  "first addition: %llu built in %g ms, %llu loaded", (unsigned long long)b.built,
                  b.build_ms, (unsigned long long)b.loaded);
    ck_assert_int_eq(nt.calls, (int)b.built);
    ck_assert_int_eq(nt.programs, (int)b.built);
    ck_assert_int_eq(nt.backend, HISP_BACKEND_OPENCL);
    ck_assert_str_eq(nt.dir, cache_dir);
    /* the build and the traversal's device time are apart within the call */
    ck_assert_msg(as.device_ms > 0 && as.device_ms + b.build_ms <= wall + 1.0,
                  "device %g ms + build %g ms in a call of %g ms", as.device_ms, b.build_ms, wall);
    hisp_matrix_destroy(&C);
    CK_OK(ctx, hisp_context_reset_builds(ctx));
    CK_OK(ctx, hisp_matrix_add(HISP_OP_N, A, HISP_OP_N, B, &C));
    ck_builds(ctx, 0, 0, "the addition again");
    ck_assert_int_eq(nt.calls, (int)b.built);
    hisp_matrix_destroy(&C);

    CK_OK(ctx, hisp_context_create(&c2)); /* HISP_OPTIONS: the same cache folder */
    CK_OK(c2, hisp_context_set_backend(c2, HISP_BACKEND_OPENCL, 0));
    CK_OK(c2, hisp_context_set_build_notify(c2, on_build, &nt2));
    hisp_matrix A2 = test_random_matrix(c2, HISP_F64, 300, 300, 0.02, &st);
    hisp_matrix B2 = test_random_matrix(c2, HISP_F64, 300, 300, 0.02, &st);
    CK_OK(c2, hisp_matrix_add(HISP_OP_N, A2, HISP_OP_N, B2, &C));
    ck_builds(c2, 0, b.built, "a new context on a filled cache");
    ck_assert_int_eq(nt2.calls, 0);
    hisp_matrix_destroy(&C);
    hisp_matrix_destroy(&A2);
    hisp_matrix_destroy(&B2);
    hisp_context_destroy(&c2);

    ck_assert_int_eq(hisp_context_builds(NULL, &b), HISP_ERR_INVALID_HANDLE);
    ck_assert_int_eq(hisp_context_builds(ctx, NULL), HISP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(hisp_context_reset_builds(NULL), HISP_ERR_INVALID_HANDLE);
    ck_assert_int_eq(hisp_context_set_build_notify(NULL, on_build, NULL), HISP_ERR_INVALID_HANDLE);
    hisp_matrix_destroy(&A);
    hisp_matrix_destroy(&B);
    hisp_context_destroy(&ctx);
    test_drop_temp_cache();
}
END_TEST

/* CUDA: the vector algebra of every type, Jacobi-CG and AMG-CG on a fresh
 * cache folder build nothing (the build's cubins are loaded from the
 * library: counted as loads, nothing written to the disk cache), nor does
 * the HiSparse addition at the default node size; a variant the build did
 * not compile (the addition's for nodes of 64) goes through NVRTC. */
START_TEST(test_build_prebuilt)
{
    int t = test_first_target(HISP_BACKEND_CUDA);
    if (t < 0) {
        test_skip("prebuilt kernels: no CUDA device");
        return;
    }
#ifdef HISP_HAVE_CUDA
    if (!hisp_cuda_prebuilt_count) {
        test_skip("prebuilt kernels: this build has none (debug and sanitizer builds)");
        return;
    }
#endif
    uint64_t st = test_seed() + 2305;
    hisp_context ctx = test_context(t);
    use_temp_cache(ctx);
    build_notices nt = {0};
    CK_OK(ctx, hisp_context_set_build_notify(ctx, on_build, &nt));
    const hisp_type types[] = {HISP_F32, HISP_F64, HISP_C32, HISP_C64, HISP_Q32, HISP_Q64};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        hisp_vector x = NULL;
        CK_OK(ctx, hisp_vector_create(ctx, types[i], 1000, &x));
        double one[4] = {1, 0, 0, 0}, got[8] = {0};
        float onef[4] = {1, 0, 0, 0};
        CK_OK(ctx, hisp_vector_fill(x, hisp_scalar_host(hispi_type_scalar_size(types[i]) == 8
                                                            ? (void *)one
                                                            : (void *)onef)));
        CK_OK(ctx, hisp_vector_dot(x, x, hisp_result_host(got)));
        float gf;
        memcpy(&gf, got, sizeof gf);
        double re = hispi_type_scalar_size(types[i]) == 8 ? got[0] : gf;
        ck_assert_msg(re == 1000, "%s: dot %g", hisp_type_name(types[i]), re);
        hisp_vector_destroy(&x);
    }
    hisp_gen_params gp;
    hisp_gen_defaults(HISP_GEN_POISSON2D, &gp);
    gp.n = 40;
    hisp_matrix A = NULL;
    CK_OK(ctx, hisp_matrix_generate(ctx, &gp, HISP_F64, &A));
    hisp_vector vb = NULL, vx = NULL;
    double one = 1, zero = 0;
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, gp.n * gp.n, &vb));
    CK_OK(ctx, hisp_vector_create(ctx, HISP_F64, gp.n * gp.n, &vx));
    CK_OK(ctx, hisp_vector_fill(vb, hisp_scalar_host(&one)));
    CK_OK(ctx, hisp_vector_fill(vx, hisp_scalar_host(&zero)));
    hisp_solver sv = NULL;
    CK_OK(ctx, hisp_solver_create(ctx, HISP_SOLVER_CG, &sv));
    CK_OK(ctx, hisp_solver_set_preconditioner(sv, HISP_PRECOND_JACOBI));
    hisp_solve_info info;
    CK_OK(ctx, hisp_solver_solve(sv, A, vb, vx, &info));
    ck_assert(info.converged);
    /* AMG's setup on the device (its kernels, the scan, the Galerkin
     * products' SpGEMM) and an AMG-CG solve */
    hisp_preconditioner P = NULL;
    CK_OK(ctx, hisp_preconditioner_create(HISP_PRECOND_AMG, A, &P));
    CK_OK(ctx, hisp_solver_use_preconditioner(sv, P));
    CK_OK(ctx, hisp_vector_fill(vx, hisp_scalar_host(&zero)));
    CK_OK(ctx, hisp_solver_solve(sv, A, vb, vx, &info));
    ck_assert(info.converged);
    hisp_preconditioner_destroy(&P);
    hisp_solver_destroy(&sv);
    hisp_vector_destroy(&vb);
    hisp_vector_destroy(&vx);
    hisp_build_stats b;
    CK_OK(ctx, hisp_context_builds(ctx, &b));
    ck_assert_msg(b.built == 0 && b.loaded >= 2 && nt.calls == 0,
                  "vector algebra, Jacobi-CG, AMG-CG: %llu built, %llu loaded, %d notices",
                  (unsigned long long)b.built, (unsigned long long)b.loaded, nt.calls);
    ck_assert_int_eq(test_count_files(cache_dir), 0);

    /* the HiSparse addition: its default node size (128) is in the build,
     * another one builds */
    hisp_matrix B = test_random_matrix(ctx, HISP_F64, 300, 300, 0.02, &st), C = NULL;
    CK_OK(ctx, hisp_matrix_add(HISP_OP_N, B, HISP_OP_N, B, &C));
    CK_OK(ctx, hisp_context_builds(ctx, &b));
    ck_assert_msg(b.built == 0 && nt.calls == 0, "the addition, nodes of 128: %llu built",
                  (unsigned long long)b.built);
    hisp_matrix_destroy(&C);
    CK_OK(ctx, hisp_matrix_set_node_size(B, 64));
    CK_OK(ctx, hisp_matrix_add(HISP_OP_N, B, HISP_OP_N, B, &C));
    CK_OK(ctx, hisp_context_builds(ctx, &b));
    ck_assert_msg(b.built >= 1 && nt.calls >= 1, "the addition, nodes of 64: %llu built",
                  (unsigned long long)b.built);
    hisp_matrix_destroy(&C);
    hisp_matrix_destroy(&B);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
    test_drop_temp_cache();
}
END_TEST

/* The hisp program on a fresh cache folder: the first `hisp add` reports
 * the build as "kernels" (build_ms > 0), the second builds nothing and
 * loads the program; with --repeat the device time is the timed sums'
 * median (within their median wall time, as each sum's device time is
 * within its wall time). */
START_TEST(test_build_cli)
{
    if (test_first_target(HISP_BACKEND_OPENCL) < 0) {
        test_skip("cache build report: no OpenCL device");
        return;
    }
    if (!test_hisp_bin()) {
        test_skip("cache build report: the hisp program is not built");
        return;
    }
    use_temp_cache(NULL);
    char c_path[300];
    snprintf(c_path, sizeof c_path, "%s.mtx", cache_dir); /* beside the folder, not in it */
    static char out[1 << 14];
    static const char add[] = "add gen:poisson2d:12 gen:poisson2d:12 --backend opencl --json -o";
    ck_assert_int_eq(test_run_cli(out, sizeof out, "%s %s", add, c_path), 0);
    ck_assert_int_ge(test_json_int(out, "programs_built"), 1);
    ck_assert_msg(test_json_double(out, "build_ms") > 0, "%s", out);
    ck_assert_int_eq(test_json_int(out, "programs_loaded"), 0);
    double cold = test_json_double(out, "device_ms");
    ck_assert_msg(cold > 0 && cold < test_json_double(out, "build_ms"),
                  "a cold sum's device time is not below its build time:\n%s", out);

    ck_assert_int_eq(test_run_cli(out, sizeof out, "%s %s", add, c_path), 0);
    ck_assert_int_eq(test_json_int(out, "programs_built"), 0);
    ck_assert_msg(test_json_double(out, "build_ms") == 0, "%s", out);
    ck_assert_int_ge(test_json_int(out, "programs_loaded"), 1);

    ck_assert_int_eq(test_run_cli(out, sizeof out, "%s %s --repeat 5", add, c_path), 0);
    double dev = test_json_double(out, "device_ms"), med = test_json_double(out, "median_ms");
    ck_assert_msg(dev > 0 && dev <= med * 1.01 + 0.01,
                  "--repeat: device %g ms, median wall %g ms\n%s", dev, med, out);
    ck_assert_int_eq(test_json_int(out, "programs_built"), 0);
    remove(c_path);
    test_drop_temp_cache();
}
END_TEST

Suite *suite_cache(void)
{
    Suite *s = suite_create("cache");
    TCase *tc = test_tcase(s, "cache", 600);
    tcase_add_test(tc, test_entry_damage);
    tcase_add_test(tc, test_entry_files);
    tcase_add_test(tc, test_opencl_cache_damage);
    tcase_add_test(tc, test_plan_cache_damage);
    tcase_add_test(tc, test_build_counts);
    tcase_add_test(tc, test_build_prebuilt);
    tcase_add_test(tc, test_build_cli);
    return s;
}
