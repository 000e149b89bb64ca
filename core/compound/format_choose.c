/* hisp_matrix_choose_format: the fastest of hisp's CSR kernel, HiSparse and
 * the compound variants for one matrix on one device, and its plan cache
 * entry.
 *
 * The compound search (hisp_tune) ranks variants by device time; its
 * leaders are then timed beside CSR and HiSparse the way a caller sees them:
 * one call through the public API plus a synchronize per sample, in rounds
 * over all candidates (so a load change on the machine hits them alike),
 * the median of FMT_ROUNDS samples each. CSR is always in the table and
 * another format must beat it by FMT_MARGIN, so a choice is never slower
 * than the default in its own table.
 *
 * Cache entry (a validated entry of core/base/cache_file.c, text payload):
 *   hisp-format 1 / key K / kind csr|hisparse|variant /
 *   variant LAYOUT SCHEDULE | variant - / ms T / first T / csr T
 * Anything that does not validate or parse whole, or names another key, is
 * a miss: the next choice times again and replaces it. */
#include "format/format.h"
#include "hispi_compound.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FMT_ROUNDS 15                   /* timed samples per candidate */
#define FMT_WARMUP 2                    /* untimed calls after the first */
#define FMT_LEADERS 3                   /* variants of the search timed in the table */
#define FMT_CANDS (1 + FMT_LEADERS + 8) /* CSR, variants, other formats */
#define FMT_VCAP 4096                   /* variants kept from the search */
#define FMT_MARGIN 0.97                 /* another format must beat CSR by 3 % */

/* ---- names, key, cache ------------------------------------------------------ */

hisp_status hisp_format_result_name(const hisp_format_result *r, char *buf, size_t size)
{
    if (!r || !buf || !size) return HISP_ERR_INVALID_ARGUMENT;
    if (r->kind == HISP_CHOICE_CSR || r->kind == HISP_CHOICE_FORMAT) {
        int n = snprintf(buf, size, "%s",
                         r->kind == HISP_CHOICE_CSR ? "csr" : hisp_format_name(r->format));
        return (size_t)n < size ? HISP_SUCCESS : HISP_ERR_INVALID_ARGUMENT;
    }
    if (r->kind != HISP_CHOICE_VARIANT) return HISP_ERR_INVALID_ARGUMENT;
    char lay[64], sch[64];
    HISPI_TRY(hisp_layout_name(&r->variant.layout, lay, sizeof lay));
    HISPI_TRY(hisp_schedule_name(&r->variant.sched, sch, sizeof sch));
    int n = snprintf(buf, size, "%s %s", lay, sch);
    return n > 0 && (size_t)n < size ? HISP_SUCCESS : HISP_ERR_INVALID_ARGUMENT;
}

hisp_status hisp_format_choice_cache_path(hisp_context ctx, const char *key, char *path,
                                          size_t size)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!key || !path) return HISP_ERR_INVALID_ARGUMENT;
    uint64_t h = hispi_hash(key, strlen(key), 0x666f726d6174ull);
    return hispi_cache_file(ctx, "format", h, "bin", path, size) ? HISP_SUCCESS
                                                                 : HISP_ERR_UNSUPPORTED;
}

/* A hash of n integers of es bytes (4 or 8), or of FMT_SAMPLE evenly
 * spaced ones (first and last included) of a longer array, an element at a
 * time: a solve computes it in its first setup on a matrix, so it must cost
 * well under a millisecond (a byte-wise FNV-1a over many samples was most
 * of that setup). A key shared by two structures only lends one the
 * other's format choice: speed, not results. */
#define FMT_SAMPLE ((size_t)1 << 14)
static uint64_t mix(uint64_t h, uint64_t w)
{
    h = (h ^ w) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

static uint64_t hash_sampled(const void *a, size_t n, size_t es, uint64_t h)
{
    size_t m = n <= FMT_SAMPLE ? n : FMT_SAMPLE;
    for (size_t i = 0; i < m; i++) {
        size_t j = m == n ? i : (size_t)((uint64_t)i * (n - 1) / (FMT_SAMPLE - 1));
        h = mix(h, es == 8 ? ((const uint64_t *)a)[j] : ((const uint32_t *)a)[j]);
    }
    return mix(h, n);
}

/* The compound plans' key (device, driver, type, shape signature) with the
 * operation and the structure: a format's speed depends on where the
 * entries are, not only on how many there are per row. */
static hisp_status choice_key(hisp_context ctx, hisp_matrix A, hisp_op op, char *key, size_t size)
{
    int memo = op == HISP_OP_T ? 2 : 1;
    if (hispi_matrix_key_get(A, memo, key, size)) return HISP_SUCCESS;
    char base[512];
    HISPI_TRY(hisp_tune_plan_key(ctx, A, base, sizeof base));
    hispi_sparse tmp;
    const hispi_sparse *s = NULL;
    HISPI_TRY(hispi_matrix_csr(A, &tmp, &s));
    uint64_t h = hash_sampled(s->rowptr, (size_t)s->nrows + 1, sizeof *s->rowptr, 0x737472ull);
    h = hash_sampled(s->colind, (size_t)s->nnz, sizeof *s->colind, h);
    int n = snprintf(key, size, "%s|op=%s|%lldx%lld:%lld:%016llx", base,
                     op == HISP_OP_T ? "T" : "N", (long long)s->nrows, (long long)s->ncols,
                     (long long)s->nnz, (unsigned long long)h);
    hispi_sparse_free(&tmp);
    if (n < 0 || (size_t)n >= size)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "format key does not fit");
    hispi_matrix_key_keep(A, memo, key);
    return HISP_SUCCESS;
}

/* "csr", "variant" or the format's name */
static const char *kind_name(const hisp_format_result *r)
{
    return r->kind == HISP_CHOICE_CSR       ? "csr"
           : r->kind == HISP_CHOICE_VARIANT ? "variant"
                                            : hisp_format_name(r->format);
}

static void cache_store(hisp_context ctx, const hisp_format_choice *c)
{
    char path[1024], buf[1400], var[160] = "-";
    if (hisp_format_choice_cache_path(ctx, c->key, path, sizeof path)) return;
    if (c->best.kind == HISP_CHOICE_VARIANT && hisp_format_result_name(&c->best, var, sizeof var))
        return;
    int n = snprintf(buf, sizeof buf,
                     "hisp-format 1\nkey %s\nkind %s\nvariant %s\nms %.9g\nfirst %.9g\ncsr %.9g\n",
                     c->key, kind_name(&c->best), var, c->best.ms, c->best.first_ms, c->csr_ms);
    if (n > 0 && (size_t)n < sizeof buf) (void)hispi_cache_write(path, buf, (size_t)n);
}

static bool parse_time(const char *line, const char *name, double *v)
{
    size_t l = strlen(name);
    if (strncmp(line, name, l) != 0 || line[l] != ' ') return false;
    char *e = NULL;
    *v = strtod(line + l + 1, &e);
    return e != line + l + 1 && *e == 0 && *v >= 0;
}

/* The cache entry of key, when there is a whole one. */
static bool cache_load(hisp_context ctx, const char *key, hisp_format_choice *c)
{
    char path[1024];
    if (hisp_format_choice_cache_path(ctx, key, path, sizeof path)) return false;
    void *data = NULL;
    size_t n = 0;
    if (hispi_cache_read(path, &data, &n) <= 0) return false;
    char buf[1400], *line[8], *save = NULL;
    int nl = 0;
    bool ok = n < sizeof buf;
    if (ok) {
        memcpy(buf, data, n);
        buf[n] = 0;
        ok = n > 0 && buf[n - 1] == '\n';
    }
    free(data);
    for (char *l = ok ? strtok_r(buf, "\n", &save) : NULL; l && nl < 8;
         l = strtok_r(NULL, "\n", &save))
        line[nl++] = l;
    if (!ok || nl != 7 || strcmp(line[0], "hisp-format 1") != 0 ||
        strncmp(line[1], "key ", 4) != 0 || strcmp(line[1] + 4, key) != 0 ||
        strncmp(line[2], "kind ", 5) != 0 || strncmp(line[3], "variant ", 8) != 0)
        return false;
    hisp_format_result r;
    memset(&r, 0, sizeof r);
    const char *kind = line[2] + 5;
    if (strcmp(kind, "csr") == 0)
        r.kind = HISP_CHOICE_CSR;
    else if (strcmp(kind, "variant") == 0)
        r.kind = HISP_CHOICE_VARIANT;
    else if (hisp_format_from_name(kind, &r.format) == HISP_SUCCESS &&
             !hispi_sparse_family(r.format))
        r.kind = HISP_CHOICE_FORMAT;
    else
        return false;
    char *var = line[3] + 8, *sp = strchr(var, ' ');
    if (r.kind == HISP_CHOICE_VARIANT) {
        if (!sp) return false;
        *sp = 0;
        if (hisp_layout_from_name(var, &r.variant.layout) ||
            hisp_schedule_from_name(sp + 1, &r.variant.sched))
            return false;
    } else if (strcmp(var, "-") != 0) {
        return false;
    }
    double csr = 0;
    if (!parse_time(line[4], "ms", &r.ms) || !parse_time(line[5], "first", &r.first_ms) ||
        !parse_time(line[6], "csr", &csr))
        return false;
    c->best = r;
    c->csr_ms = csr;
    return true;
}

bool hispi_format_choice_cached(hisp_context ctx, hisp_matrix A, hisp_op op, hisp_format_choice *c)
{
    memset(c, 0, sizeof *c);
    /* the caller's device arrays not read yet: nothing was chosen for
     * them (hisp_matrix_choose_format reads them first), and a lookup must
     * not copy them to the host */
    if (!hispi_mat_ok(A) || !hispi_sparse_family(A->host.format) || A->host_absent) return false;
    if (choice_key(ctx, A, op, c->key, sizeof c->key)) {
        hispi_clear_error(ctx);
        return false;
    }
    c->op = op;
    c->from_cache = cache_load(ctx, c->key, c);
    return c->from_cache;
}

/* ---- timing ------------------------------------------------------------------------ */

typedef struct {
    hisp_format_result r;
    hisp_matrix M; /* what it runs on: A, or A's copy in another format (owned) */
    double ms[FMT_ROUNDS];
    bool out; /* failed or wrong: never chosen */
    bool own; /* M is a copy made for the table */
} cand;

typedef struct {
    const hisp_format_options *opt;
    double t0, stage_t0;
    hisp_format_result vbest; /* the search's fastest variant so far */
    int ncand;
} chooser;

static void report(chooser *c, const char *stage, int done, int total,
                   const hisp_format_result *best, double extra_ms)
{
    if (!c->opt->progress) return;
    double now = hispi_now_ms();
    hisp_format_progress_info p = {stage, done,        total,   best ? best->ms : INFINITY,
                                   best,  now - c->t0, extra_ms};
    if (done > 0 && total > done) p.left_ms += (now - c->stage_t0) / done * (total - done);
    c->opt->progress(c->opt->user, &p);
}

static void on_variant(void *user, int done, int total, const hisp_tune_result *r)
{
    chooser *c = user;
    if (r && r->ms < c->vbest.ms) {
        c->vbest.kind = HISP_CHOICE_VARIANT;
        c->vbest.variant = r->v;
        c->vbest.ms = r->ms;
    }
    /* the table after the search: a few calls per candidate of about the
     * best variant's time, plus the first calls (guessed at 10 ms) */
    double table =
        isfinite(c->vbest.ms) ? c->ncand * ((FMT_ROUNDS + FMT_WARMUP) * 2 * c->vbest.ms + 10.0) : 0;
    report(c, "variants", done, total, isfinite(c->vbest.ms) ? &c->vbest : NULL, table);
}

static hisp_status run_one(hisp_context ctx, hisp_op op, const cand *k, const void *a,
                           const void *b, hisp_vector x, hisp_vector y, double *ms)
{
    double t = hispi_now_ms();
    hisp_status s = k->r.kind == HISP_CHOICE_VARIANT
                        ? hisp_spmv_variant(ctx, &k->r.variant, a, k->M, x, b, y)
                        : hisp_spmv(ctx, op, a, k->M, x, b, y);
    if (!s) s = hisp_context_synchronize(ctx);
    if (ms) *ms = hispi_now_ms() - t;
    return s;
}

/* A candidate's failure takes it out of the race; running out of host
 * memory or a bad handle ends the choice. */
static hisp_status drop_on_fail(hisp_context ctx, cand *k, hisp_status s)
{
    if (!s) return HISP_SUCCESS;
    if (s == HISP_ERR_OUT_OF_HOST_MEMORY || s == HISP_ERR_INVALID_HANDLE ||
        k->r.kind == HISP_CHOICE_CSR)
        return s; /* CSR is the reference of the table: its failure is the caller's */
    hispi_debug("format choice: candidate %d failed: %s", (int)k->r.kind, hisp_status_string(s));
    hispi_clear_error(ctx);
    k->out = true;
    k->r.ms = INFINITY;
    return HISP_SUCCESS;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_result(const void *a, const void *b)
{
    return cmp_double(&((const hisp_format_result *)a)->ms, &((const hisp_format_result *)b)->ms);
}

static double rel_error(size_t ss, const void *a, const void *b, int64_t n)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        double u = ss == 4 ? ((const float *)a)[i] : ((const double *)a)[i];
        double v = ss == 4 ? ((const float *)b)[i] : ((const double *)b)[i];
        if (u != v) num += (u - v) * (u - v); /* equal infinities agree */
        if (isfinite(v)) den += v * v;
    }
    if (isnan(num)) return INFINITY;
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* The variants of the search worth timing beside the others. */
static int leaders(const hisp_tune_result *res, int n, const hisp_tune_plan *plan, cand *k)
{
    int m = 0;
    if (!n) { /* from the compound plan cache: its winner only */
        k[m].r.kind = HISP_CHOICE_VARIANT;
        k[m++].r.variant = plan->best;
        return m;
    }
    for (int i = 0; i < n && m < FMT_LEADERS; i++)
        if (isfinite(res[i].ms)) {
            k[m].r.kind = HISP_CHOICE_VARIANT;
            k[m++].r.variant = res[i].v;
        }
    return m;
}

/* The table: first calls (checked against CSR's y), warm-up, rounds. */
static hisp_status time_table(hisp_context ctx, chooser *c, hisp_op op, cand *k, int nk,
                              hisp_vector x, hisp_vector y, int64_t ny_scalars, size_t ss)
{
    double one = 1, zero = 0;
    float onef = 1, zerof = 0;
    const void *a = ss == 4 ? (const void *)&onef : (const void *)&one;
    const void *b = ss == 4 ? (const void *)&zerof : (const void *)&zero;
    void *yc = NULL, *yk = NULL;
    hisp_status s = hispi_alloc(ctx, (size_t)ny_scalars, ss, &yc);
    if (!s) s = hispi_alloc(ctx, (size_t)ny_scalars, ss, &yk);
    double tol = ss == 4 ? 1e-4 : 1e-10;
    c->stage_t0 = hispi_now_ms();
    for (int i = 0; i < nk && !s; i++) {
        s = run_one(ctx, op, &k[i], a, b, x, y, &k[i].r.first_ms);
        if (!s) s = hisp_vector_read(y, i ? yk : yc);
        for (int w = 0; w < FMT_WARMUP && !s; w++)
            s = run_one(ctx, op, &k[i], a, b, x, y, NULL);
        if (!s && i) {
            k[i].r.rel_error = rel_error(ss, yk, yc, ny_scalars);
            if (!(k[i].r.rel_error <= tol)) {
                hispi_debug("format choice: candidate %d is off by %g", (int)k[i].r.kind,
                            k[i].r.rel_error);
                k[i].out = true;
            }
        }
        s = drop_on_fail(ctx, &k[i], s);
    }
    free(yc);
    free(yk);
    report(c, "formats", 1, FMT_ROUNDS + 1, NULL, 0);
    for (int r = 0; r < FMT_ROUNDS && !s; r++) {
        const hisp_format_result *best = NULL;
        for (int i = 0; i < nk && !s; i++) {
            if (k[i].out) continue;
            s = drop_on_fail(ctx, &k[i], run_one(ctx, op, &k[i], a, b, x, y, &k[i].ms[r]));
            if (k[i].out) continue;
            double tmp[FMT_ROUNDS];
            memcpy(tmp, k[i].ms, (size_t)(r + 1) * sizeof *tmp);
            qsort(tmp, (size_t)r + 1, sizeof *tmp, cmp_double);
            k[i].r.ms = tmp[r / 2];
            if (!best || k[i].r.ms < best->ms) best = &k[i].r;
        }
        report(c, "formats", r + 2, FMT_ROUNDS + 1, best, 0);
    }
    for (int i = 0; i < nk; i++)
        if (k[i].out) k[i].r.ms = INFINITY;
    return s;
}

/* ---- the choice ---------------------------------------------------------------------- */

hisp_status hisp_matrix_choose_format(hisp_context ctx, hisp_matrix A, hisp_op op,
                                      const hisp_format_options *opt, hisp_format_result *table,
                                      int cap, int *count, hisp_format_choice *choice)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!hispi_mat_ok(A) || A->ctx != ctx)
        return hispi_fail(ctx, HISP_ERR_INVALID_HANDLE, "invalid matrix handle");
    if (!choice || (table && cap < 0) || (op != HISP_OP_N && op != HISP_OP_T))
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "bad op, table or choice");
    static const hisp_format_options defaults = {0, 0, NULL, NULL, NULL, 0};
    if (!opt) opt = &defaults;
    if (count) *count = 0;
    memset(choice, 0, sizeof *choice);
    choice->op = op;
    HISPI_TRY(hispi_matrix_need_host(A));
    if (!hispi_sparse_family(A->host.format))
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                          "choose a format from a COO, CSR or CSC matrix (this one is %s)",
                          hisp_format_name(A->host.format));
    hisp_type t = A->host.type;
    bool real = t == HISP_F32 || t == HISP_F64;
    if (!real && op != HISP_OP_N)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "op = T is not provided for %s entries",
                          hisp_type_name(t));
    HISPI_TRY(choice_key(ctx, A, op, choice->key, sizeof choice->key));
    if (!opt->no_cache && cache_load(ctx, choice->key, choice)) {
        choice->from_cache = 1;
        return HISP_SUCCESS;
    }
    int nformats = 0; /* the other formats offered for A's type and op */
    for (int f = 0; f < hispi_format_count(); f++) {
        const hispi_format_ops *o = hispi_format_get((hisp_format)f);
        nformats += o->candidate && o->candidate(t, op);
    }
    chooser c = {opt, hispi_now_ms(), 0, {.ms = INFINITY}, 1 + FMT_LEADERS + nformats};
    c.stage_t0 = c.t0;
    cand k[FMT_CANDS];
    memset(k, 0, sizeof k);
    int nk = 0;
    k[nk].r.kind = HISP_CHOICE_CSR;
    k[nk++].M = A;
    hisp_status s = HISP_SUCCESS;
    /* the compound search ranks the variants first (op = N only) */
    hisp_tune_result *vres = NULL;
    int vcount = 0;
    if (op == HISP_OP_N) {
        hisp_tune_plan plan;
        s = hispi_alloc(ctx, FMT_VCAP, sizeof *vres, (void **)&vres);
        if (!s)
            s = hisp_tune(ctx, A, opt->full_search ? HISP_TUNE_FULL : HISP_TUNE_FAST,
                          !opt->no_cache, on_variant, &c, vres, FMT_VCAP, &vcount, &plan);
        if (s && s != HISP_ERR_OUT_OF_HOST_MEMORY && s != HISP_ERR_INVALID_HANDLE) {
            /* no variant ran here: CSR and HiSparse still race */
            hispi_debug("format choice: no variants: %s", hisp_status_string(s));
            hispi_clear_error(ctx);
            s = HISP_SUCCESS;
            vcount = -1;
        }
        if (!s && vcount >= 0) {
            choice->variants_tried = vcount;
            nk += leaders(vres, vcount < FMT_VCAP ? vcount : FMT_VCAP, &plan, &k[nk]);
            if (opt->variants && opt->variants_cap > 0)
                memcpy(opt->variants, vres,
                       (size_t)(vcount < opt->variants_cap ? vcount : opt->variants_cap) *
                           sizeof *vres);
        }
        free(vres);
        if (s) return s;
    }
    for (int i = 1; i < nk; i++)
        k[i].M = A;
    /* every other format that offers itself: a copy of A, built on the host */
    for (int f = 0; f < hispi_format_count() && nk < FMT_CANDS; f++) {
        const hispi_format_ops *o = hispi_format_get((hisp_format)f);
        if (!o->candidate || !o->candidate(t, op)) continue;
        double t0 = hispi_now_ms();
        hisp_status fs = hisp_matrix_duplicate(A, o->format, &k[nk].M);
        if (fs == HISP_ERR_INVALID_HANDLE || fs == HISP_ERR_OUT_OF_HOST_MEMORY) {
            s = fs;
            break;
        }
        if (fs) {
            hispi_clear_error(ctx);
            continue;
        }
        k[nk].r.kind = HISP_CHOICE_FORMAT;
        k[nk].r.format = o->format;
        k[nk].r.build_ms = hispi_now_ms() - t0;
        k[nk].own = true;
        nk++;
    }
    for (int i = 0; i < nk && !s; i++) {
        hisp_status bs = k[i].r.kind == HISP_CHOICE_FORMAT
                             ? hisp_matrix_format_bytes(k[i].M, k[i].r.format, t, &k[i].r.bytes)
                             : hisp_matrix_layout_bytes(A,
                                                        k[i].r.kind == HISP_CHOICE_VARIANT
                                                            ? k[i].r.variant.layout.outer
                                                            : HISP_OUTER_CSR,
                                                        &k[i].r.bytes);
        if (bs) hispi_clear_error(ctx);
    }
    /* x = 1/(j % 97 + 1) in every component, as the search's */
    hisp_type vt = t;
    int per = 1;
    hisp_vector x = NULL, y = NULL;
    void *xh = NULL;
    if (!s) s = hisp_compound_vector_type(t, &vt, &per);
    int comps = hisp_type_components(vt);
    size_t ss = hispi_type_scalar_size(vt);
    int64_t nx = (op == HISP_OP_N ? A->host.ncols : A->host.nrows) * per;
    int64_t ny = (op == HISP_OP_N ? A->host.nrows : A->host.ncols) * per;
    if (!s) s = hisp_vector_create(ctx, vt, nx, &x);
    if (!s) s = hisp_vector_create(ctx, vt, ny, &y);
    if (!s) s = hispi_alloc(ctx, (size_t)(nx * comps), ss, &xh);
    for (int64_t j = 0; !s && j < nx * comps; j++) {
        double v = 1.0 / (double)(j % 97 + 1);
        if (ss == 4)
            ((float *)xh)[j] = (float)v;
        else
            ((double *)xh)[j] = v;
    }
    if (!s) s = hisp_vector_write(x, xh);
    free(xh);
    if (!s) s = time_table(ctx, &c, op, k, nk, x, y, ny * comps, ss);
    hisp_vector_destroy(&x);
    hisp_vector_destroy(&y);
    for (int i = 0; i < nk; i++)
        if (k[i].own) hisp_matrix_destroy(&k[i].M);
    /* the search built up to 8 layouts of A (host and device): give the
     * memory back; a variant that won builds its own again at its first call */
    hispi_compound_drop(A);
    if (s) return s;
    /* the fastest other candidate displaces CSR (k[0]) only when it is
     * clearly faster: a near tie is noise, and CSR needs no second copy */
    int best = 0, alt = -1;
    for (int i = 1; i < nk; i++)
        if (!k[i].out && (alt < 0 || k[i].r.ms < k[alt].r.ms)) alt = i;
    if (alt > 0 && k[alt].r.ms < FMT_MARGIN * k[0].r.ms) best = alt;
    choice->best = k[best].r;
    choice->csr_ms = k[0].r.ms;
    choice->tried = nk;
    choice->tune_ms = hispi_now_ms() - c.t0;
    hisp_format_result all[FMT_CANDS];
    for (int i = 0; i < nk; i++)
        all[i] = k[i].r;
    qsort(all, (size_t)nk, sizeof *all, cmp_result);
    if (table) memcpy(table, all, (size_t)(nk < cap ? nk : cap) * sizeof *table);
    if (count) *count = nk;
    if (!opt->no_cache) cache_store(ctx, choice);
    return HISP_SUCCESS;
}
