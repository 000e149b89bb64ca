/* A HiSparse family read from several threads while one thread edits it
 * (issue 23): readers (profile, save, one SpMV thread: SpMVs of a context
 * are the caller's to serialise) must see the source tree unchanged while
 * the editor's copy-on-write edits grow and move the family's pool. Run
 * under ThreadSanitizer too (tsan build). */
#include "testutil.h"

#include "hisparse/hispi_hisparse.h"

#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { N = 600, EDITS = 120, BATCH = 48, KEEP = 4 };

typedef struct {
    hisp_context ctx;
    hisp_matrix A;              /* the family's source: never changed */
    hisp_hisparse_profile prof; /* A's profile before the threads */
    unsigned char *image;       /* A saved before the threads */
    size_t image_size;
    hisp_vector x, y;
    double *y0;         /* A x before the threads */
    atomic_int editing; /* the editor still runs */
    atomic_int bad, reads, spmvs;
    char why[160];
    uint64_t seed;
} shared;

static void note(shared *s, const char *what)
{
    if (atomic_fetch_add(&s->bad, 1) == 0) snprintf(s->why, sizeof s->why, "%s", what);
}

static unsigned char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(n > 0 ? (size_t)n : 1);
    *size = b ? fread(b, 1, (size_t)n, f) : 0;
    fclose(f);
    return b;
}

static bool same_tree(const hisp_hisparse_profile *a, const hisp_hisparse_profile *b)
{
    return a->bytes == b->bytes && !memcmp(a->nodes, b->nodes, sizeof a->nodes) &&
           !memcmp(a->entries, b->entries, sizeof a->entries) && a->depth == b->depth;
}

/* profile and save, alternately, until the editor is done */
static void *reader(void *arg)
{
    shared *s = arg;
    char path[64];
    snprintf(path, sizeof path, "/tmp/hisp_mt_%d_XXXXXX", (int)getpid());
    int fd = mkstemp(path);
    if (fd < 0) {
        note(s, "mkstemp");
        return NULL;
    }
    close(fd);
    for (int k = 0; atomic_load(&s->editing) || k < 2; k++) {
        hisp_hisparse_profile p;
        if (hisp_matrix_hisparse_profile(s->A, &p) || !same_tree(&p, &s->prof))
            note(s, "profile of the source changed or failed");
        size_t n = 0;
        unsigned char *img = NULL;
        if (hisp_matrix_save(s->A, path) || !(img = slurp(path, &n)) || n != s->image_size ||
            memcmp(img, s->image, n))
            note(s, "saved image of the source changed or failed");
        free(img);
        atomic_fetch_add(&s->reads, 1);
    }
    unlink(path);
    return NULL;
}

static void *multiplier(void *arg)
{
    shared *s = arg;
    const double one = 1, zero = 0;
    double y[N];
    for (int k = 0; atomic_load(&s->editing) || k < 2; k++) {
        if (hisp_spmv(s->ctx, HISP_OP_N, &one, s->A, s->x, &zero, s->y) ||
            hisp_vector_read(s->y, y) || test_rel_error(HISP_F64, y, s->y0, N) > 1e-12)
            note(s, "SpMV of the source changed or failed");
        atomic_fetch_add(&s->spmvs, 1);
    }
    return NULL;
}

/* chained edits (new entries: the pool grows), older results destroyed */
static void *editor(void *arg)
{
    shared *s = arg;
    uint64_t st = s->seed;
    hisp_matrix keep[KEEP] = {0}, cur = s->A;
    int32_t r[BATCH], c[BATCH];
    double v[BATCH];
    int64_t nnz = 0;
    hisp_matrix_info info;
    if (hisp_matrix_get_info(s->A, &info)) note(s, "info");
    nnz = info.nnz;
    for (int e = 0; e < EDITS && !atomic_load(&s->bad); e++) {
        for (int q = 0; q < BATCH; q++) {
            r[q] = (int32_t)(test_rand(&st) % N);
            c[q] = (int32_t)(test_rand(&st) % N);
            v[q] = test_uniform(&st);
        }
        hisp_matrix B = NULL;
        hisp_edit_stats es;
        if (hisp_matrix_edit(cur, BATCH, r, c, v, NULL, &B, &es)) {
            note(s, "edit failed");
            break;
        }
        nnz += es.inserted;
        if (hisp_matrix_get_info(B, &info) || info.nnz != nnz) note(s, "edit's count is wrong");
        hisp_matrix_destroy(&keep[e % KEEP]);
        keep[e % KEEP] = cur = B;
    }
    for (int k = 0; k < KEEP; k++)
        hisp_matrix_destroy(&keep[k]);
    atomic_store(&s->editing, 0);
    return NULL;
}

START_TEST(test_mt_read_while_edit)
{
    shared s = {0};
    s.seed = test_seed() + 2301;
    uint64_t st = s.seed;
    s.ctx = test_context(_i);
    s.A = test_random_matrix(s.ctx, HISP_F64, N, N, 0.01, &st);
    CK_OK(s.ctx, hisp_matrix_set_node_size(s.A, 8)); /* a deep tree: long walks */
    CK_OK(s.ctx, hisp_matrix_convert(s.A, HISP_FORMAT_HISPARSE));
    CK_OK(s.ctx, hisp_matrix_hisparse_profile(s.A, &s.prof));
    char path[64];
    snprintf(path, sizeof path, "/tmp/hisp_mt0_%d_XXXXXX", (int)getpid());
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    CK_OK(s.ctx, hisp_matrix_save(s.A, path));
    s.image = slurp(path, &s.image_size);
    unlink(path);
    ck_assert_ptr_nonnull(s.image);
    CK_OK(s.ctx, hisp_vector_create(s.ctx, HISP_F64, N, &s.x));
    CK_OK(s.ctx, hisp_vector_create(s.ctx, HISP_F64, N, &s.y));
    double *xv = malloc(N * sizeof *xv), *y0 = malloc(N * sizeof *y0);
    for (int i = 0; i < N; i++)
        xv[i] = test_uniform(&st);
    CK_OK(s.ctx, hisp_vector_write(s.x, xv));
    /* the oracle: the reference product of A's CSR copy */
    hisp_matrix C = NULL;
    CK_OK(s.ctx, hisp_matrix_duplicate(s.A, HISP_FORMAT_CSR, &C));
    const int64_t *ptr;
    const int32_t *col;
    const void *val;
    CK_OK(s.ctx, hisp_matrix_host_arrays(C, &ptr, NULL, &col, &val));
    for (int i = 0; i < N; i++) {
        y0[i] = 0;
        for (int64_t k = ptr[i]; k < ptr[i + 1]; k++)
            y0[i] += ((const double *)val)[k] * xv[col[k]];
    }
    hisp_matrix_destroy(&C);
    s.y0 = y0;
    atomic_store(&s.editing, 1);
    enum { READERS = 3 };
    pthread_t t[READERS + 2];
    for (int k = 0; k < READERS; k++)
        ck_assert_int_eq(pthread_create(&t[k], NULL, reader, &s), 0);
    ck_assert_int_eq(pthread_create(&t[READERS], NULL, multiplier, &s), 0);
    ck_assert_int_eq(pthread_create(&t[READERS + 1], NULL, editor, &s), 0);
    for (int k = 0; k < READERS + 2; k++)
        pthread_join(t[k], NULL);
    ck_assert_msg(!atomic_load(&s.bad), "%d failures, first: %s (seed %llu)", atomic_load(&s.bad),
                  s.why, (unsigned long long)s.seed);
    ck_assert_int_gt(atomic_load(&s.reads), 0);
    ck_assert_int_gt(atomic_load(&s.spmvs), 0);
    /* the family after the threads: all but the source gone */
    hisp_hisparse_profile p;
    CK_OK(s.ctx, hisp_matrix_hisparse_profile(s.A, &p));
    ck_assert(same_tree(&p, &s.prof));
    ck_assert_int_eq(s.A->hs->pool->handles, 1);
    free(xv);
    free(y0);
    free(s.image);
    hisp_vector_destroy(&s.x);
    hisp_vector_destroy(&s.y);
    hisp_matrix_destroy(&s.A);
    hisp_context_destroy(&s.ctx);
}
END_TEST

Suite *suite_hisparse_mt(void)
{
    Suite *s = suite_create("hisparse_mt");
    int n = test_targets(NULL);
    TCase *tc = test_tcase(s, "family", 600);
    tcase_add_loop_test(tc, test_mt_read_while_edit, 0, n);
    return s;
}
