/* Joint layout + schedule autotuning of compound SpMV, and the plan cache.
 *
 * Schedules: n_t from w*2^i and w*3*2^i (w = the device's warp or
 * work-group multiple) up to the work-group limit, n_b from 2^i and 3*2^i,
 * with n_t*n_b within the threads one compute unit holds (2048 on GPUs; on
 * CPUs n_t <= 256 and n_b <= 4, where more only adds loop overhead).
 *   full: every layout (16) x {static, dynamic} x every (n_t, n_b).
 *   fast: (1) CSR-AoS-AoS static, tune the product T = n_t*n_b with n_t =
 *         min(T, 4w), n_b = T/n_t; (2) every factorisation of the two best
 *         T, static and dynamic; (3) every layout with the best static and
 *         the best dynamic schedule of (2); (4) the two best layouts of (3)
 *         with every factorisation of the two best T again; (5) the product
 *         tuned again for the best layout so far (with its schedule type)
 *         and its two best T factorised. Stage (5) came from simulating
 *         variants of this search on a GPU's full-search tables:
 *         ELLPACK's best products are several times CSR's.
 * Each candidate: 2 untimed runs, then the median of 5 timed runs; at the
 * end the 5 fastest are timed again (median of 15) and decide. */
#include "backend/backend.h"
#include "hispi.h"
#include "hispi_compound.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TUNE_WARMUP 2
#define TUNE_REPEAT 5
#define TUNE_CONFIRM 5         /* leaders timed again at the end */
#define TUNE_REPEAT_CONFIRM 15 /* with this many runs */

/* ---- key ---------------------------------------------------------------- */

static int ilog2x2(double v) /* floor(2*log2(v)), v >= 1 */
{
    int r = 0;
    while (v >= 1.41421356237) {
        v /= 1.41421356237;
        r++;
    }
    return r;
}

/* The longest row and the empty rows, over the host's threads (a first
 * solve's setup reads every row pointer here: 4.1M rows on one core took a
 * few ms of it). */
enum { SHAPE_CHUNK = 1 << 16 };
typedef struct {
    const int64_t *p;
    int64_t n;
    atomic_llong next, maxlen, empty;
} shape_job;

static void *shape_worker(void *arg)
{
    shape_job *j = arg;
    int64_t mx = 0, em = 0;
    for (;;) {
        int64_t i0 = atomic_fetch_add(&j->next, SHAPE_CHUNK);
        if (i0 >= j->n) break;
        int64_t i1 = i0 + SHAPE_CHUNK < j->n ? i0 + SHAPE_CHUNK : j->n;
        for (int64_t i = i0; i < i1; i++) {
            int64_t l = j->p[i + 1] - j->p[i];
            mx = l > mx ? l : mx;
            em += l == 0;
        }
    }
    long long cur = atomic_load(&j->maxlen);
    while (mx > cur && !atomic_compare_exchange_weak(&j->maxlen, &cur, mx)) {
    }
    atomic_fetch_add(&j->empty, em);
    return NULL;
}

hisp_status hisp_tune_plan_key(hisp_context ctx, hisp_matrix A, char *key, size_t size)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!hispi_mat_ok(A) || A->ctx != ctx)
        return hispi_fail(ctx, HISP_ERR_INVALID_HANDLE, "invalid matrix handle");
    if (!key || !size) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "NULL key buffer");
    if (!hispi_sparse_family(A->host.format))
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "plans are for COO/CSR/CSC matrices");
    if (hispi_matrix_key_get(A, 0, key, size)) return HISP_SUCCESS;
    HISPI_TRY(hispi_matrix_need_host(A));
    hisp_device_info d;
    HISPI_TRY(hisp_context_get_device(ctx, &d));
    hispi_sparse tmp; /* a COO or CSC matrix stays as it is */
    const hispi_sparse *s = NULL;
    HISPI_TRY(hispi_matrix_csr(A, &tmp, &s));
    shape_job j = {.p = s->rowptr, .n = s->nrows};
    atomic_init(&j.next, 0);
    atomic_init(&j.maxlen, 0);
    atomic_init(&j.empty, 0);
    hispi_parallel(hispi_threads(ctx, (double)s->nrows), shape_worker, &j);
    int64_t maxlen = atomic_load(&j.maxlen), empty = atomic_load(&j.empty);
    double mean = s->nrows ? (double)s->nnz / (double)s->nrows : 0;
    /* the signature: size and row-length shape in half-octaves */
    int n = snprintf(key, size, "%s|%s|%s|%s|r%d.m%d.x%d.e%d", hisp_backend_name(d.backend), d.name,
                     d.driver, hisp_type_name(s->type), ilog2x2((double)s->nrows + 1),
                     ilog2x2(mean + 1), ilog2x2((double)maxlen / (mean > 0 ? mean : 1) + 1),
                     (int)(s->nrows ? 10 * empty / s->nrows : 0));
    hispi_sparse_free(&tmp);
    if (n < 0 || (size_t)n >= size)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "key buffer too small");
    for (char *p = key; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    hispi_matrix_key_keep(A, 0, key);
    return HISP_SUCCESS;
}

/* ---- plan files ------------------------------------------------------------ */

hisp_status hisp_tune_plan_cache_path(hisp_context ctx, const char *key, char *path, size_t size)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!key || !path) return HISP_ERR_INVALID_ARGUMENT;
    uint64_t h = hispi_hash(key, strlen(key), 0x706c616eull);
    return hispi_cache_file(ctx, "plan", h, "txt", path, size) ? HISP_SUCCESS
                                                               : HISP_ERR_UNSUPPORTED;
}

static int format_plan(const hisp_tune_plan *p, char *buf, size_t size)
{
    char lay[64], sch[64];
    if (hisp_layout_name(&p->best.layout, lay, sizeof lay) ||
        hisp_schedule_name(&p->best.sched, sch, sizeof sch))
        return -1;
    int n = snprintf(buf, size, "hisp-plan 1\nkey %s\nlayout %s\nschedule %s\nms %.9g\n", p->key,
                     lay, sch, p->ms);
    if (n < 0 || (size_t)n >= size) return -1;
    uint64_t h = hispi_hash(buf, (size_t)n, 0x636865636bull);
    int m = snprintf(buf + n, size - (size_t)n, "check %016llx\n", (unsigned long long)h);
    return m < 0 || (size_t)(n + m) >= size ? -1 : n + m;
}

static hisp_status plan_save(hisp_context ctx, const hisp_tune_plan *p, const char *path,
                             bool make_dirs)
{
    char buf[1024];
    int n = format_plan(p, buf, sizeof buf);
    if (n < 0) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "invalid plan");
    if (!make_dirs) return hispi_save_file(ctx, path, buf, (size_t)n);
    int e = hispi_write_file_atomic(path, buf, (size_t)n, make_dirs);
    if (e) return hispi_fail_native(ctx, HISP_ERR_IO, e, "cannot write %s: %s", path, strerror(e));
    return HISP_SUCCESS;
}

hisp_status hispi_tune_plan_store(hisp_context ctx, const hisp_tune_plan *p, const char *path)
{
    return plan_save(ctx, p, path, true);
}

hisp_status hisp_tune_plan_save(hisp_context ctx, const hisp_tune_plan *p, const char *path)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!p || !path) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "NULL plan or path");
    return plan_save(ctx, p, path, false);
}

/* Next line of text at *p (without '\n'); false at the end. */
static bool line_of(const char **p, const char *end, const char **ls, size_t *len)
{
    if (*p >= end) return false;
    const char *nl = memchr(*p, '\n', (size_t)(end - *p));
    *ls = *p;
    *len = nl ? (size_t)(nl - *p) : (size_t)(end - *p);
    *p = nl ? nl + 1 : end;
    return true;
}

hisp_status hispi_tune_plan_parse(hisp_context ctx, const char *data, size_t size, const char *path,
                                  hisp_tune_plan *p)
{
    hisp_tune_plan r;
    memset(&r, 0, sizeof r);
    static const char *const fields[5] = {"hisp-plan", "key", "layout", "schedule", "ms"};
    const char *cur = data, *end = data + size, *ls;
    size_t len;
    hisp_status s = HISP_SUCCESS;
    int line = 0;
    for (line = 1; line <= 6 && !s; line++) {
        if (!line_of(&cur, end, &ls, &len)) {
            s = hispi_fail_at(ctx, path, line, "plan file ends early (6 lines expected)");
            break;
        }
        const char *want = line <= 5 ? fields[line - 1] : "check";
        size_t wl = strlen(want);
        if (len < wl + 2 || strncmp(ls, want, wl) != 0 || ls[wl] != ' ') {
            s = hispi_fail_at(ctx, path, line, "expected '%s ...'", want);
            break;
        }
        char val[520];
        size_t vl = len - wl - 1;
        if (vl >= sizeof val) {
            s = hispi_fail_at(ctx, path, line, "line too long");
            break;
        }
        memcpy(val, ls + wl + 1, vl);
        val[vl] = 0;
        if (line == 1 && strcmp(val, "1") != 0)
            s = hispi_fail_at(ctx, path, line, "unknown plan version '%s'", val);
        else if (line == 2)
            snprintf(r.key, sizeof r.key, "%.511s", val);
        else if (line == 3 && hisp_layout_from_name(val, &r.best.layout))
            s = hispi_fail_at(ctx, path, line, "unknown layout '%s'", val);
        else if (line == 4 && hisp_schedule_from_name(val, &r.best.sched))
            s = hispi_fail_at(ctx, path, line, "bad schedule '%s'", val);
        else if (line == 5) {
            char *e = NULL;
            r.ms = strtod(val, &e);
            if (e == val || *e) s = hispi_fail_at(ctx, path, line, "bad time '%s'", val);
        } else if (line == 6) {
            char buf[1024];
            int n = format_plan(&r, buf, sizeof buf);
            /* the checksum covers the five lines exactly as written */
            size_t body = (size_t)(ls - data);
            uint64_t h = hispi_hash(data, body, 0x636865636bull);
            char hex[20];
            snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
            if (n < 0 || strcmp(val, hex) != 0)
                s = hispi_fail_at(ctx, path, line, "checksum mismatch: the plan file is corrupt");
            else if (cur[-1] != '\n') /* as written: a cut file is a damaged one */
                s = hispi_fail_at(ctx, path, line, "plan file ends early (no final newline)");
        }
    }
    if (!s && cur != end) /* the file ends with the checksum line */
        s = hispi_fail_at(ctx, path, 7, "unexpected text after the checksum");
    if (s) return s;
    *p = r;
    return HISP_SUCCESS;
}

hisp_status hisp_tune_plan_load(hisp_context ctx, const char *path, hisp_tune_plan *p)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!p || !path) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "NULL plan or path");
    char *data = NULL;
    size_t size = 0;
    HISPI_TRY(hispi_read_file(ctx, path, "hisp-plan", &data, &size));
    size_t w = 0; /* CRLF line ends (an editor's or a transfer's) read as LF, checksum too */
    for (size_t i = 0; i < size; i++)
        if (!(data[i] == '\r' && i + 1 < size && data[i + 1] == '\n')) data[w++] = data[i];
    hisp_status s = hispi_tune_plan_parse(ctx, data, w, path, p);
    free(data);
    return s;
}

hisp_status hisp_tune_plan_lookup(hisp_context ctx, hisp_matrix A, hisp_tune_plan *p, int *found)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!p || !found) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "NULL plan or found");
    *found = 0;
    char key[512], path[1024];
    HISPI_TRY(hisp_tune_plan_key(ctx, A, key, sizeof key));
    if (hisp_tune_plan_cache_path(ctx, key, path, sizeof path)) return HISP_SUCCESS;
    /* a regular file of plan size only: a folder, a FIFO or /dev/zero at
     * the path is a miss, as is a damaged file; hisp_tune replaces it */
    char *data = NULL;
    size_t size = 0;
    if (hispi_cache_read_raw(path, 4096, &data, &size) <= 0) return HISP_SUCCESS;
    hisp_tune_plan r;
    hisp_status s = hispi_tune_plan_parse(ctx, data, size, path, &r);
    free(data);
    if (s == HISP_ERR_OUT_OF_HOST_MEMORY) return s;
    if (s) { /* corrupt: a miss */
        hispi_clear_error(ctx);
        return HISP_SUCCESS;
    }
    if (strcmp(r.key, key) != 0) return HISP_SUCCESS; /* a hash collision */
    r.from_cache = 1;
    *p = r;
    *found = 1;
    return HISP_SUCCESS;
}

/* ---- the search --------------------------------------------------------------- */

typedef struct {
    hisp_context ctx;
    hisp_matrix A;
    hisp_vector x, y;
    hisp_tune_result *all;
    int n, cap;
    int total; /* estimate for progress */
    hisp_tune_progress progress;
    void *user;
    uint64_t xy_bytes;
    signed char padded[HISP_OUTER_COUNT]; /* too_padded's answer per outer layout; -1 unknown */
} tuner;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A layout padded to more than TUNE_PAD_MAX times the CSR layout's bytes
 * (ELL or SELL of a matrix with a few very long rows) is not built: it
 * cannot win, and it may not fit in memory at all. */
#define TUNE_PAD_MAX 4

static bool too_padded(tuner *t, hisp_outer_layout o)
{
    if (t->padded[o] >= 0) return t->padded[o];
    uint64_t b = 0, csr = 0;
    t->padded[o] = 0;
    if (o == HISP_OUTER_CSR) return false;
    if (hisp_matrix_layout_bytes(t->A, o, &b) ||
        hisp_matrix_layout_bytes(t->A, HISP_OUTER_CSR, &csr))
        hispi_clear_error(t->ctx);
    else
        t->padded[o] = b / TUNE_PAD_MAX > csr;
    return t->padded[o];
}

/* Time one variant; a variant the device refuses (too many threads, build
 * failure) or too padded to win is skipped with ms = INFINITY. */
static hisp_status try_variant(tuner *t, const hisp_variant *v, double *out)
{
    for (int i = 0; i < t->n; i++)
        if (!memcmp(&t->all[i].v, v, sizeof *v)) {
            *out = t->all[i].ms;
            return HISP_SUCCESS;
        }
    double ms[TUNE_REPEAT];
    double one = 1, zero = 0;
    float onef = 1, zerof = 0;
    bool f32 = hispi_type_scalar_size(t->A->host.type) == 4;
    hisp_status s =
        too_padded(t, v->layout.outer)
            ? HISP_ERR_UNSUPPORTED
            : hispi_compound_spmv(t->ctx, v, f32 ? (double)onef : one, t->A, t->x,
                                  f32 ? (double)zerof : zero, t->y, TUNE_WARMUP, TUNE_REPEAT, ms);
    double med = INFINITY;
    if (s == HISP_ERR_OUT_OF_HOST_MEMORY || s == HISP_ERR_INVALID_HANDLE) return s;
    if (s == HISP_SUCCESS) {
        qsort(ms, TUNE_REPEAT, sizeof *ms, cmp_double);
        med = ms[TUNE_REPEAT / 2];
    } else {
        hispi_clear_error(t->ctx);
    }
    if (t->n == t->cap) {
        int nc = t->cap ? 2 * t->cap : 256;
        HISPI_TRY(hispi_realloc(t->ctx, (void **)&t->all, (size_t)nc, sizeof *t->all));
        t->cap = nc;
    }
    hisp_tune_result *r = &t->all[t->n++];
    r->v = *v;
    r->ms = med;
    r->bytes = 0;
    if (hisp_matrix_layout_bytes(t->A, v->layout.outer, &r->bytes)) hispi_clear_error(t->ctx);
    r->gbps = isfinite(med) && med > 0 ? (double)(r->bytes + t->xy_bytes) / (med * 1e6) : 0;
    if (t->progress) t->progress(t->user, t->n, t->total > t->n ? t->total : t->n, r);
    *out = med;
    return HISP_SUCCESS;
}

static int cmp_result(const void *a, const void *b)
{
    return cmp_double(&((const hisp_tune_result *)a)->ms, &((const hisp_tune_result *)b)->ms);
}

/* n_t and n_b candidates of this device. */
static int nt_set(const hispi_kcaps *c, int *nt)
{
    int n = 0, cap = c->simd >= 32 ? c->max_group : (c->max_group < 256 ? c->max_group : 256);
    for (int m = 1; m <= cap / c->simd && n < 32; m++) {
        int p = m;
        while (p % 2 == 0)
            p /= 2;
        if (p == 1 || p == 3) nt[n++] = c->simd * m;
    }
    return n;
}

static int nb_set(const hispi_kcaps *c, int *nb)
{
    int n = 0, cap = c->simd >= 32 ? 64 : 4;
    for (int m = 1; m <= cap && n < 32; m++) {
        int p = m;
        while (p % 2 == 0)
            p /= 2;
        if (p == 1 || p == 3) nb[n++] = m;
    }
    return n;
}

static int per_cu_limit(const hispi_kcaps *c)
{
    return c->simd >= 32 ? 2048 : 1024;
}

/* ---- the stages of a search ---------------------------------------------- */

typedef struct {
    tuner *t;
    hisp_variant *cand; /* this stage's candidates */
    int n, cap;
    const int *nt, nnt, *nb, nnb, lim, simd;
    hisp_variant *best;
    double *best_ms;
} stage;

static void add_cand(stage *g, hisp_variant v)
{
    if (g->n < g->cap) g->cand[g->n++] = v;
}

static bool lookup(const tuner *t, const hisp_variant *v, double *ms)
{
    for (int i = 0; i < t->n; i++)
        if (!memcmp(&t->all[i].v, v, sizeof *v)) {
            *ms = t->all[i].ms;
            return true;
        }
    return false;
}

/* Build the stage's candidates ahead (on several host threads where the
 * backend can), then time them in order. */
static hisp_status run_stage(stage *g, hisp_context ctx, hisp_matrix A)
{
    HISPI_TRY(hispi_compound_prebuild(ctx, A, g->cand, g->n));
    for (int i = 0; i < g->n; i++) {
        double ms;
        HISPI_TRY(try_variant(g->t, &g->cand[i], &ms));
        if (ms < *g->best_ms) *g->best_ms = ms, *g->best = g->cand[i];
    }
    return HISP_SUCCESS;
}

/* Tune the product T = nt*nb for layout lay (one schedule type) with nt =
 * min(T, 4w) where that factorises; T2: the two best products (0: none). */
static hisp_status tune_products(stage *g, hisp_context ctx, hisp_matrix A, hisp_layout lay,
                                 int dynamic, int T2[2])
{
    int prods[64], np = 0;
    for (int a = 0; a < g->nnt; a++)
        for (int b = 0; b < g->nnb; b++) {
            int T = g->nt[a] * g->nb[b], dup = 0;
            if (T > g->lim) continue;
            for (int q = 0; q < np; q++)
                dup |= prods[q] == T;
            if (!dup && np < 64) prods[np++] = T;
        }
    g->n = 0;
    for (int q = 0; q < np; q++) {
        int T = prods[q], ntv = T < 4 * g->simd ? T : 4 * g->simd;
        while (ntv > g->simd && T % ntv) /* a factorisation that exists */
            ntv -= g->simd;
        if (T % ntv == 0) add_cand(g, (hisp_variant){lay, {dynamic, ntv, T / ntv}});
    }
    HISPI_TRY(run_stage(g, ctx, A));
    T2[0] = T2[1] = 0;
    for (int r = 0; r < 2; r++) {
        double bm = INFINITY, m;
        for (int i = 0; i < g->n; i++) {
            int T = g->cand[i].sched.nt * g->cand[i].sched.nb;
            if (T != T2[0] && lookup(g->t, &g->cand[i], &m) && m < bm) bm = m, T2[r] = T;
        }
    }
    return HISP_SUCCESS;
}

/* Every factorisation of the products T2 for layout lay, static and
 * dynamic. */
static hisp_status factorisations(stage *g, hisp_context ctx, hisp_matrix A, hisp_layout lay,
                                  const int T2[2])
{
    g->n = 0;
    for (int a = 0; a < g->nnt; a++)
        for (int b = 0; b < g->nnb; b++)
            for (int dy = 0; dy < 2; dy++)
                if (g->nt[a] * g->nb[b] == T2[0] || g->nt[a] * g->nb[b] == T2[1])
                    add_cand(g, (hisp_variant){lay, {dy, g->nt[a], g->nb[b]}});
    return run_stage(g, ctx, A);
}

hisp_status hisp_tune(hisp_context ctx, hisp_matrix A, hisp_tune_search search, int use_cache,
                      hisp_tune_progress progress, void *user, hisp_tune_result *results, int cap,
                      int *count, hisp_tune_plan *plan)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!plan || (results && cap < 0) || (search != HISP_TUNE_FULL && search != HISP_TUNE_FAST))
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "bad search, results or plan");
    if (count) *count = 0;
    memset(plan, 0, sizeof *plan);
    HISPI_TRY(hisp_tune_plan_key(ctx, A, plan->key, sizeof plan->key));
    if (use_cache) {
        int found = 0;
        HISPI_TRY(hisp_tune_plan_lookup(ctx, A, plan, &found));
        if (found) return HISP_SUCCESS;
    }
    double t0 = hispi_now_ms();
    hisp_type vt;
    int per = 1;
    HISPI_TRY(hisp_compound_vector_type(A->host.type, &vt, &per));
    tuner t = {ctx, A, NULL, NULL, NULL, 0, 0, 0, progress, user, 0, {0}};
    size_t es = hisp_type_size(vt);
    int64_t nx = A->host.ncols * per, ny = A->host.nrows * per;
    t.xy_bytes = (uint64_t)(nx + ny) * es;
    memset(t.padded, -1, sizeof t.padded);
    void *xh = NULL;
    hisp_status s = hisp_vector_create(ctx, vt, nx, &t.x);
    if (!s) s = hisp_vector_create(ctx, vt, ny, &t.y);
    if (!s) s = hispi_alloc(ctx, (size_t)nx, es, &xh);
    if (!s) {
        int comps = hisp_type_components(vt);
        for (int64_t j = 0; j < nx * comps; j++) {
            double v = 1.0 / (double)(j % 97 + 1);
            if (hispi_type_scalar_size(vt) == 4)
                ((float *)xh)[j] = (float)v;
            else
                ((double *)xh)[j] = v;
        }
        s = hisp_vector_write(t.x, xh);
    }
    free(xh);
    hispi_kcaps c = {1024, 32, 1, 0, "", 0, 49152};
    if (!s && HISPI_BE_HAS(ctx, kern_caps)) s = HISPI_BE(ctx, kern_caps, &c);
    int nt[32], nb[32];
    int nnt = nt_set(&c, nt), nnb = nb_set(&c, nb), lim = per_cu_limit(&c);
    if (!HISPI_BE_HAS(ctx, kern_caps)) nnt = nnb = 1, nt[0] = nb[0] = 1; /* host emulation */
    hisp_variant best = {{HISP_OUTER_CSR, HISP_AOS, HISP_AOS}, {0, nt[0], nb[0]}};
    double best_ms = INFINITY;
    stage g = {&t, NULL, 0, 0, nt, nnt, nb, nnb, lim, c.simd, &best, &best_ms};
    g.cap = 16 * 2 * nnt * nnb + 64;
    if (!s) s = hispi_alloc(ctx, (size_t)g.cap, sizeof *g.cand, (void **)&g.cand);
    const hisp_layout csr = {HISP_OUTER_CSR, HISP_AOS, HISP_AOS};
    if (!s && search == HISP_TUNE_FULL) {
        for (int o = 0; o < HISP_OUTER_COUNT; o++)
            for (int in = 0; in < 2; in++)
                for (int vs = 0; vs < 2; vs++)
                    for (int dy = 0; dy < 2; dy++)
                        for (int a = 0; a < nnt; a++)
                            for (int b = 0; b < nnb; b++)
                                if (nt[a] * nb[b] <= lim)
                                    add_cand(
                                        &g, (hisp_variant){{(hisp_outer_layout)o,
                                                            (hisp_sublayout)in, (hisp_sublayout)vs},
                                                           {dy, nt[a], nb[b]}});
        t.total = g.n;
        s = run_stage(&g, ctx, A);
    } else if (!s) {
        t.total = 16 + 2 * 2 * nnt + 32 + 2 * 2 * 2 * nnt + 16 + 2 * 2 * nnt;
        /* (1) the product T = nt*nb, (2) its two best factorised */
        int T2[2];
        s = tune_products(&g, ctx, A, csr, 0, T2);
        if (!s) s = factorisations(&g, ctx, A, csr, T2);
        hisp_schedule bs[2] = {best.sched, best.sched};
        double bsm[2] = {INFINITY, INFINITY};
        for (int i = 0; i < t.n; i++) { /* the best static and dynamic of (2) */
            const hisp_tune_result *r = &t.all[i];
            if (!memcmp(&r->v.layout, &csr, sizeof csr) && r->ms < bsm[r->v.sched.dynamic])
                bsm[r->v.sched.dynamic] = r->ms, bs[r->v.sched.dynamic] = r->v.sched;
        }
        /* (3) every layout with them */
        g.n = 0;
        for (int o = 0; o < HISP_OUTER_COUNT; o++)
            for (int in = 0; in < 2; in++)
                for (int vs = 0; vs < 2; vs++)
                    for (int dy = 0; dy < 2; dy++)
                        if (isfinite(bsm[dy]))
                            add_cand(&g, (hisp_variant){{(hisp_outer_layout)o, (hisp_sublayout)in,
                                                         (hisp_sublayout)vs},
                                                        bs[dy]});
        if (!s) s = run_stage(&g, ctx, A);
        double lms[HISP_OUTER_COUNT][2][2];
        for (int q = 0; q < HISP_OUTER_COUNT * 4; q++)
            (&lms[0][0][0])[q] = INFINITY;
        for (int i = 0; i < g.n; i++) {
            const hisp_layout *l = &g.cand[i].layout;
            double m = INFINITY, *lm = &lms[l->outer][l->inner][l->vec == HISP_SOA];
            if (!s && lookup(&t, &g.cand[i], &m) && m < *lm) *lm = m;
        }
        /* (4) the two best layouts of (3) with every factorisation of the
         * two best products */
        for (int r = 0; r < 2 && !s; r++) {
            int bo = -1, bi = 0, bv = 0;
            for (int o = 0; o < HISP_OUTER_COUNT; o++)
                for (int in = 0; in < 2; in++)
                    for (int vs = 0; vs < 2; vs++)
                        if (isfinite(lms[o][in][vs]) &&
                            (bo < 0 || lms[o][in][vs] < lms[bo][bi][bv]))
                            bo = o, bi = in, bv = vs;
            if (bo < 0) break;
            lms[bo][bi][bv] = INFINITY; /* taken */
            s = factorisations(
                &g, ctx, A,
                (hisp_layout){(hisp_outer_layout)bo, (hisp_sublayout)bi, (hisp_sublayout)bv}, T2);
        }
        /* (5) the product tuned again for the best layout so far, with its
         * schedule type (ELLPACK wants more threads per compute unit than
         * CSR), and its two best products factorised */
        if (!s) s = tune_products(&g, ctx, A, best.layout, best.sched.dynamic, T2);
        if (!s) s = factorisations(&g, ctx, A, best.layout, T2);
    }
    free(g.cand);
    /* confirmation: the leaders timed again with more runs (one noisy
     * median must not decide) */
    if (!s && t.n > 1) {
        qsort(t.all, (size_t)t.n, sizeof *t.all, cmp_result);
        int top = t.n < TUNE_CONFIRM ? t.n : TUNE_CONFIRM;
        best_ms = INFINITY;
        for (int i = 0; i < top && !s; i++) {
            if (!isfinite(t.all[i].ms)) break;
            double rms[TUNE_REPEAT_CONFIRM];
            s = hispi_compound_spmv(ctx, &t.all[i].v, 1.0, A, t.x, 0.0, t.y, TUNE_WARMUP,
                                    TUNE_REPEAT_CONFIRM, rms);
            if (s) break;
            qsort(rms, TUNE_REPEAT_CONFIRM, sizeof *rms, cmp_double);
            t.all[i].ms = rms[TUNE_REPEAT_CONFIRM / 2];
            t.all[i].gbps =
                t.all[i].ms > 0 ? (double)(t.all[i].bytes + t.xy_bytes) / (t.all[i].ms * 1e6) : 0;
            if (t.all[i].ms < best_ms) best_ms = t.all[i].ms, best = t.all[i].v;
        }
    }
    if (!s && !isfinite(best_ms))
        s = hispi_fail(ctx, HISP_ERR_BACKEND, "no variant ran on this device");
    if (!s) {
        qsort(t.all, (size_t)t.n, sizeof *t.all, cmp_result);
        best = t.all[0].v; /* the fastest after the confirmation */
        best_ms = t.all[0].ms;
        if (results) memcpy(results, t.all, (size_t)(t.n < cap ? t.n : cap) * sizeof *results);
        if (count) *count = t.n;
        plan->best = best;
        plan->ms = best_ms;
        plan->tried = t.n;
        plan->from_cache = 0;
        plan->tune_ms = hispi_now_ms() - t0;
        char path[1024];
        if (use_cache &&
            hisp_tune_plan_cache_path(ctx, plan->key, path, sizeof path) == HISP_SUCCESS &&
            hispi_tune_plan_store(ctx, plan, path))
            hispi_clear_error(ctx); /* a cache: best effort */
    }
    free(t.all);
    hisp_vector_destroy(&t.x);
    hisp_vector_destroy(&t.y);
    return s;
}
